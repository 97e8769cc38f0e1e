//! Cells with space: per-node carrier sense, SINR reception and capture, against
//! independent references.

#[path = "support/bianchi.rs"]
mod bianchi;

use bianchi::{Access, CollisionTime, Dcf, Model, PhyParams};

use txop_core::cell::{CellConfig, StationConfig};
use txop_core::phy::channel::ErrorModel;
use txop_core::phy::space::{Placement, SpaceConfig};
use txop_core::phy::{Band, Standard, TxVector};
use txop_core::{Nanos, NodeId};
use txop_sim::traffic::saturated::Saturated;
use txop_sim::traffic::Flow;
use txop_sim::{SimConfig, Simulation};

struct Outcome {
    mbps: Vec<f64>,
    /// Per station: collided PPDUs over PPDUs sent (used by the hidden-station checks).
    #[allow(dead_code)]
    collision_prob: Vec<f64>,
}

/// One saturated 1500-byte uplink per station.
fn saturated_uplink(n: usize) -> Vec<Flow> {
    (1..=n as u16)
        .map(|i| {
            Flow::Saturated(Saturated {
                src: NodeId(i),
                dst: NodeId::AP,
                len_bytes: 1500,
                tid: 0,
                depth: 4,
            })
        })
        .collect()
}

fn uplink(cell: CellConfig, secs: u64, seed: u64) -> Outcome {
    let n = cell.stations.len();
    let flows = saturated_uplink(n);
    let sim = Simulation::new(SimConfig::new(cell, flows, Nanos::from_secs(secs), seed)).unwrap();
    let mut sim = sim;
    sim.run_until(Nanos::from_secs(secs));
    let stats = sim.cell().stats();
    let secs_f = secs as f64;
    Outcome {
        mbps: (1..=n)
            .map(|i| stats[i].up.delivered_bytes as f64 * 8.0 / secs_f / 1e6)
            .collect(),
        collision_prob: (1..=n)
            .map(|i| stats[i].up.collisions as f64 / stats[i].up.ppdus.max(1) as f64)
            .collect(),
    }
}

fn matrix(n: usize, loss: impl Fn(usize, usize) -> f64) -> Placement {
    Placement::PathLossDb(
        (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| if i == j { 0.0 } else { loss(i, j) })
                    .collect()
            })
            .collect(),
    )
}

/// Every node in every other's range at one power: the per-node engine must give what
/// Bianchi's model (Bianchi–Tinnirello for DCF) gives for one collision domain, within
/// the tolerance the single-domain engine is held to.
#[test]
fn one_domain_in_space_matches_bianchi() {
    let mut failures = Vec::new();
    for rts in [false, true] {
        for n in [2u32, 5, 10, 20] {
            let stations =
                vec![
                    StationConfig::new(TxVector::Ofdm { rate_mbps: 54 }, ErrorModel::None);
                    n as usize
                ];
            let mut cell = CellConfig::legacy_dcf(Standard::A, Band::Ghz5, stations);
            if rts {
                cell.rts_threshold_bytes = Some(0);
            }
            cell.space = Some(SpaceConfig::new(matrix(n as usize + 1, |_, _| 80.0), 20.0));
            let sim: f64 = uplink(cell, 30, 100 + n as u64).mbps.iter().sum();
            let m = Model::new(PhyParams::ofdm_5ghz(54.0), 1500, n)
                .with_retry_limit(Some(7))
                .with_dcf(Dcf::Corrected)
                .with_access(if rts { Access::RtsCts } else { Access::Basic });
            let eifs = m.with_collision(CollisionTime::Eifs).throughput_mbps();
            let difs = m.with_collision(CollisionTime::Difs).throughput_mbps();
            let err = sim / eifs - 1.0;
            println!(
                "rts={rts} n={n:2}: sim {sim:.3} model EIFS {eifs:.3} DIFS {difs:.3} ({:+.2} %)",
                err * 100.0
            );
            if err.abs() > 0.015 {
                failures.push(format!("rts={rts} n={n}: {sim:.3} vs {eifs:.3}"));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Station 1 strong, station 2 weak at the AP (11.5 dB apart), both in each other's
/// range, 802.11a 24 Mbit/s, saturated uplink. When both start in one slot the AP locks
/// on the stronger preamble and decodes it at an SINR of 11.5 dB; the weaker is never
/// received. So of the strong station's PPDUs that overlapped the other's, a share
/// 1 − PER(11.5 dB, its MPDU) is acknowledged: the error model gives that share on its
/// own.
#[test]
fn capture_follows_the_sinr_of_the_stronger_frame() {
    let tx = TxVector::Ofdm { rate_mbps: 24 };
    let stations = vec![StationConfig::new(tx, ErrorModel::None); 2];
    let mut cell = CellConfig::legacy_dcf(Standard::A, Band::Ghz5, stations);
    // 20 dBm: the AP gets −60 dBm from station 1 and −71.5 dBm from station 2 (SNR 34
    // and 22.5 dB: noise is negligible beside the interference).
    cell.space = Some(SpaceConfig::new(
        matrix(3, |i, j| match (i.min(j), i.max(j)) {
            (0, 2) => 91.5,
            _ => 80.0,
        }),
        20.0,
    ));
    let sim = Simulation::new(SimConfig::new(
        cell,
        saturated_uplink(2),
        Nanos::from_secs(30),
        5,
    ))
    .unwrap();
    let mut sim = sim;
    sim.run_until(Nanos::from_secs(30));
    let s = sim.cell().stats();
    let (strong, weak) = (&s[1].up, &s[2].up);
    let overlapped = strong.collisions + strong.captures;
    let captured = strong.captures as f64 / overlapped as f64;
    let noise_mw = 10f64.powf(-93.99 / 10.0);
    let sinr_db = 10.0 * (1e-6 / (10f64.powf(-7.15) + noise_mw)).log10();
    let mpdu_bytes = 1500 + 24 + 8 + 4; // the packet, MAC header, LLC/SNAP, FCS
    let predicted = 1.0 - ErrorModel::Snr { snr_db: sinr_db }.per(&tx, mpdu_bytes);
    println!(
        "strong: {overlapped} overlapped, {} captured ({captured:.3}); predicted {predicted:.3} at {sinr_db:.2} dB; weak: {} collisions, {} captures",
        strong.captures, weak.collisions, weak.captures
    );
    assert!(
        overlapped > 1_000,
        "too few overlaps to judge: {overlapped}"
    );
    // Binomial standard error at ~3000 overlaps is under 1 %.
    assert!(
        (captured - predicted).abs() < 0.03,
        "captured {captured:.3} vs {predicted:.3}"
    );
    assert_eq!(
        weak.captures, 0,
        "the weaker frame is never decoded under the stronger"
    );
    assert!(
        weak.collisions >= overlapped,
        "every overlap costs the weak station its frame"
    );
}
