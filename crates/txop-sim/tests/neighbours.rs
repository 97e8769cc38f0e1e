//! Cells with space: per-node carrier sense, SINR reception and capture, against
//! independent references.

#[path = "support/bianchi.rs"]
mod bianchi;
#[path = "support/space_cells.rs"]
mod space_cells;

use bianchi::{Access, CollisionTime, Dcf, Model, PhyParams};
use space_cells::{hidden_pair, matrix, saturated_uplink, shared_space, uplink};

use txop_core::cell::{CellConfig, StationConfig};
use txop_core::phy::channel::ErrorModel;
use txop_core::phy::space::SpaceConfig;
use txop_core::phy::{Band, Standard, TxVector};
use txop_core::{Nanos, NodeId};
use txop_sim::traffic::saturated::Saturated;
use txop_sim::traffic::Flow;
use txop_sim::{SimConfig, Simulation};

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

/// Two BSSs of one AP and one station each, 802.11a 54 Mbit/s, DCF, a saturated
/// downlink in each: each BSS's downlink throughput. `positions`: AP 1, station 1,
/// AP 2, station 2.
fn two_bss(positions: [(f64, f64); 4], secs: u64) -> Vec<f64> {
    two_bss_results(positions, [36, 36], secs, 9)
        .iter()
        .map(|r| r.total_throughput_bps / 1e6)
        .collect()
}

/// [`two_bss`]'s results, the BSSs on `channels`, the run seeded `seed`.
fn two_bss_results(
    positions: [(f64, f64); 4],
    channels: [u16; 2],
    secs: u64,
    seed: u64,
) -> Vec<txop_results::Results> {
    use txop_core::phy::mobility::Position;
    use txop_sim::{bss_seed, BssConfig, Neighbourhood};
    let positions: Vec<Position> = positions
        .iter()
        .map(|&(x, y)| Position::new(x, y))
        .collect();
    let cfgs = (0..2)
        .map(|b| {
            let stations = vec![StationConfig::new(
                TxVector::Ofdm { rate_mbps: 54 },
                ErrorModel::None,
            )];
            let mut cell = CellConfig::legacy_dcf(Standard::A, Band::Ghz5, stations);
            cell.space = Some(shared_space(&positions, 2 * b));
            let flows = vec![Flow::Saturated(Saturated {
                src: NodeId::AP,
                dst: NodeId(1),
                len_bytes: 1500,
                tid: 0,
                depth: 4,
            })];
            BssConfig {
                sim: SimConfig::new(cell, flows, Nanos::from_secs(secs), bss_seed(seed, b)),
                channel: channels[b],
            }
        })
        .collect();
    Neighbourhood::new(cfgs).unwrap().try_run().unwrap()
}

/// BSSs on different channels do not hear each other; the same seed gives the same
/// bytes, another seed other bytes.
#[test]
fn neighbourhoods_keep_to_their_channels_and_are_deterministic() {
    let near = [(0.0, 0.0), (9.0, 1.0), (20.0, 0.0), (11.0, -1.0)];
    let apart: Vec<f64> = two_bss_results(near, [36, 40], 5, 9)
        .iter()
        .map(|r| r.total_throughput_bps / 1e6)
        .collect();
    let alone = two_bss(
        [(0.0, 0.0), (9.0, 1.0), (10_000.0, 0.0), (10_009.0, -1.0)],
        5,
    );
    assert_eq!(apart, alone, "another channel is as good as far away");
    let json = |seed| serde_json::to_string(&two_bss_results(near, [36, 36], 2, seed)).unwrap();
    assert_eq!(json(3), json(3));
    assert_ne!(json(3), json(4));
}

/// In range of each other (APs 20 m apart: −72 dBm), with each station about as far
/// from the other AP as from its own (so that no frame survives an overlap), two
/// saturated BSSs share the air like two stations of one BSS; out of range (10 km)
/// each has the air to itself. With each station behind its own AP instead, the two
/// APs' overlapping frames both get through (24.5 dB apart at each station): together
/// they carry more than one channel's worth.
#[test]
fn neighbouring_bsss_share_the_air_only_in_range() {
    let alone = two_bss(
        [(0.0, 0.0), (9.0, 1.0), (10_000.0, 0.0), (10_009.0, -1.0)],
        10,
    );
    let near = two_bss([(0.0, 0.0), (9.0, 1.0), (20.0, 0.0), (11.0, -1.0)], 10);
    let behind = two_bss([(0.0, 0.0), (-5.0, 0.0), (20.0, 0.0), (25.0, 0.0)], 10);
    println!("alone {alone:?}, in range {near:?}, stations behind their APs {behind:?}");
    // Two contenders, Bianchi–Tinnirello DCF basic access (the same model the one-cell
    // test checks): 30.83 Mbit/s in all; one alone gets 54 Mbit/s's saturation rate.
    let one = Model::new(PhyParams::ofdm_5ghz(54.0), 1500, 1)
        .with_retry_limit(Some(7))
        .with_dcf(Dcf::Original)
        .with_collision(CollisionTime::Eifs)
        .throughput_mbps();
    let two = Model::new(PhyParams::ofdm_5ghz(54.0), 1500, 2)
        .with_retry_limit(Some(7))
        .with_dcf(Dcf::Corrected)
        .with_collision(CollisionTime::Eifs)
        .throughput_mbps();
    for &t in &alone {
        assert!((t / one - 1.0).abs() < 0.015, "alone {t} vs {one}");
    }
    let sum: f64 = near.iter().sum();
    assert!((sum / two - 1.0).abs() < 0.015, "together {sum} vs {two}");
    for &t in &near {
        assert!(
            (t / (two / 2.0) - 1.0).abs() < 0.05,
            "each {t} vs {}",
            two / 2.0
        );
    }
    let behind_sum: f64 = behind.iter().sum();
    assert!(
        behind_sum > one * 1.05,
        "capture at the stations: {behind_sum} vs {one}"
    );
}

/// Two saturated hidden stations against ns-3 3.37 on the same topology
/// (`bench/ns3/hidden.cc`, docs/ns3-neighbours.md: 802.11a 54 Mbit/s, 1500-byte
/// MSDUs, DCF, retry limit 7, seeds 1–3, 10 s): within 10 % in throughput and in
/// collision probability, basic access and RTS/CTS. And what RTS/CTS wins back.
#[test]
fn hidden_stations_match_ns3() {
    // ns-3: (total Mbit/s, collision probability), means of seeds 1–3.
    let ns3_basic = ((22.41 + 22.50 + 22.53) / 3.0, (0.345 + 0.342 + 0.342) / 3.0);
    let ns3_rts = ((23.64 + 23.67 + 23.64) / 3.0, (0.201 + 0.193 + 0.205) / 3.0);
    let mut failures = Vec::new();
    for (rts, (ns3_mbps, ns3_p)) in [(false, ns3_basic), (true, ns3_rts)] {
        let run = hidden_pair(54, rts, true);
        let (mbps, p) = (run.mbps, run.collision_probability());
        println!(
            "rts={rts}: txop {mbps:.2} Mbit/s p {p:.3}; ns-3 {ns3_mbps:.2} Mbit/s p {ns3_p:.3}"
        );
        if (mbps / ns3_mbps - 1.0).abs() > 0.10 || (p / ns3_p - 1.0).abs() > 0.10 {
            failures.push(format!(
                "rts={rts}: {mbps:.2}/{p:.3} vs {ns3_mbps:.2}/{ns3_p:.3}"
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// What hiding costs and what RTS/CTS wins back, at 54 and at 6 Mbit/s: RTS/CTS makes
/// the hidden pair's collisions short (an RTS instead of a data frame), so it always
/// recovers some of the loss, but at 54 Mbit/s its own overhead (RTS + CTS at 24
/// Mbit/s on a 248 µs frame) eats most of what it wins, as in ns-3; at 6 Mbit/s, where
/// a lost data frame costs 2 ms, it recovers most of it.
#[test]
fn rts_cts_recovers_what_hiding_costs() {
    for (rate, most) in [(54, false), (6, true)] {
        let in_range = hidden_pair(rate, false, false).mbps;
        let basic = hidden_pair(rate, false, true).mbps;
        let rts = hidden_pair(rate, true, true).mbps;
        let recovered = (rts - basic) / (in_range - basic);
        println!(
            "{rate} Mbit/s: in range {in_range:.2}, hidden {basic:.2}, hidden with RTS/CTS {rts:.2}: recovers {:.0} % of the loss",
            recovered * 100.0
        );
        assert!(
            basic < in_range * 0.9,
            "hiding must cost: {basic} vs {in_range}"
        );
        assert!(
            rts > basic,
            "RTS/CTS must win something back: {rts} vs {basic}"
        );
        assert_eq!(
            recovered > 0.5,
            most,
            "{rate} Mbit/s: recovered {recovered:.2}"
        );
    }
}

/// BSS A (linux-6.16, one station pinging the server) next to BSS B (one station, four
/// TCP downloads and a ping) in range of it, B idle, modern (linux-6.16) or bloated
/// (linux-4.8-bloated): the median ping RTT (ms) of A and B.
fn a_beside_b(b_stack: Option<&str>, secs: u64) -> (f64, Option<f64>) {
    use txop_core::phy::mobility::Position;
    use txop_core::phy::{ChannelWidth, GuardInterval};
    use txop_sim::traffic::flent::FlentTest;
    use txop_sim::{bss_seed, BssConfig, Neighbourhood};
    let positions = vec![
        Position::new(0.0, 0.0),
        Position::new(3.0, 1.0),
        Position::new(15.0, 0.0),
        Position::new(12.0, -1.0),
    ];
    let tx = TxVector::Ht {
        mcs: 7,
        width: ChannelWidth::Mhz20,
        gi: GuardInterval::Long,
    };
    let bss = |b: usize, stack: &str, test: &str| {
        let mut cell = CellConfig::new(
            Standard::N,
            Band::Ghz5,
            vec![StationConfig::new(tx, ErrorModel::None)],
        );
        cell.stack = txop_core::stack::preset(stack).expect("preset");
        cell.space = Some(shared_space(&positions, 2 * b));
        let mut t = FlentTest::new(test);
        t.delay = Nanos::from_secs(1);
        t.length = Nanos::from_secs(secs - 2);
        let flows = t.flows(1).expect("flent flows");
        BssConfig {
            sim: SimConfig::new(cell, flows, Nanos::from_secs(secs), bss_seed(11, b)),
            channel: 36,
        }
    };
    let mut cfgs = vec![bss(0, "linux-6.16", "ping")];
    if let Some(stack) = b_stack {
        cfgs.push(bss(1, stack, "tcp_ndown"));
    }
    let results = Neighbourhood::new(cfgs).unwrap().try_run().unwrap();
    let ping = |r: &txop_results::Results| {
        r.flows
            .iter()
            .find(|f| f.kind == "ping")
            .and_then(|f| f.rtt_ms.as_ref())
            .map(|l| l.p50)
            .expect("a ping")
    };
    (ping(&results[0]), results.get(1).map(ping))
}

/// A busy neighbour raises a BSS's latency through the airtime it takes, whatever its
/// own queues: A's ping beside a bloated B is no worse than beside a modern one (each
/// fills the air with its aggregates), while B's bloat stays in B's own latency.
#[test]
fn a_bloated_neighbour_costs_airtime_not_queues() {
    let (alone, _) = a_beside_b(None, 20);
    let (beside_modern, modern) = a_beside_b(Some("linux-6.16"), 20);
    let (beside_bloated, bloated) = a_beside_b(Some("linux-4.8-bloated"), 20);
    println!(
        "A's median ping: alone {alone:.2} ms, beside a modern B {beside_modern:.2} ms, beside a bloated B {beside_bloated:.2} ms; B's own: modern {:.2} ms, bloated {:.2} ms",
        modern.unwrap(),
        bloated.unwrap()
    );
    let (modern, bloated) = (modern.unwrap(), bloated.unwrap());
    assert!(
        beside_modern > alone + 3.0 && beside_bloated > alone + 3.0,
        "airtime costs latency"
    );
    assert!(
        beside_bloated < beside_modern * 1.5,
        "B's queues do not reach A"
    );
    assert!(
        bloated > 5.0 * modern,
        "B's own bloat: {bloated} vs {modern}"
    );
}
