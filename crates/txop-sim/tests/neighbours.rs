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

fn uplink(cell: CellConfig, secs: u64, seed: u64) -> Outcome {
    let n = cell.stations.len();
    let flows = (1..=n as u16)
        .map(|i| {
            Flow::Saturated(Saturated {
                src: NodeId(i),
                dst: NodeId::AP,
                len_bytes: 1500,
                tid: 0,
                depth: 4,
            })
        })
        .collect();
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
