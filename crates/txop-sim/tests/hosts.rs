//! Hosts, the wired link and ping: what crosses the network end to end.

use txop_core::cell::{CellConfig, StationConfig};
use txop_core::phy::channel::ErrorModel;
use txop_core::phy::space::{Placement, SpaceConfig};
use txop_core::phy::{Band, ChannelWidth, GuardInterval, Standard, TxVector};
use txop_core::stack::preset;
use txop_core::{Nanos, NodeId};
use txop_sim::traffic::cbr::Cbr;
use txop_sim::traffic::ping::Ping;
use txop_sim::traffic::{Flow, Host};
use txop_sim::{SimConfig, Simulation, WiredConfig};

fn ht20(mcs: u8) -> StationConfig {
    StationConfig::new(
        TxVector::Ht {
            mcs,
            width: ChannelWidth::Mhz20,
            gi: GuardInterval::Long,
        },
        ErrorModel::None,
    )
}

/// HT-mixed PPDU duration, 1 spatial stream, long GI (802.11-2016 19.4.3), µs.
fn ht_ppdu_us(psdu_bytes: u64, ndbps: u64) -> u64 {
    36 + 4 * (16 + 8 * psdu_bytes + 6).div_ceil(ndbps)
}

/// An idle ping from the server to a station at HT20 MCS0, 200 ms apart, derived
/// from 802.11 rules:
/// - the request reaches an idle AP whose post-backoff finished long ago: it is sent at
///   once (HT PPDU of a 126-byte A-MPDU: 84-byte echo + 38 MPDU overhead + delimiter);
/// - the station delivers it at the PPDU's end and queues the reply at once, in the
///   SIFS before its own BlockAck: its medium is idle then (nothing on the air, and a
///   frame addressed to it sets no NAV, 802.11-2016 10.3.2.4), so the reply invokes no
///   backoff (10.22.2.2 a; ns-3's `NeedBackoffUponAccess` alike) and, its post-backoff
///   long finished, goes AIFS (43 µs) after the BlockAck (SIFS + 32 B at 6 Mbit/s, the
///   control rate of MCS0);
/// - plus the wired link twice each way (2 ms + serialisation).
///
/// So every RTT is the same sum, to the nanosecond, with no backoff slot in it, on
/// both media: one collision domain, and a space where the two hear each other at
/// −40 dBm. (Until issue 26 one collision domain drew a backoff for the reply, 0–15
/// slots, where the per-node medium did not.)
#[test]
fn idle_ping_rtt_is_the_sum_of_its_parts() {
    for space in [false, true] {
        idle_ping_rtt_on(space);
    }
}

fn idle_ping_rtt_on(space: bool) {
    let wired = WiredConfig {
        rate_bps: 1_000_000_000,
        delay: Nanos::from_ms(2),
        limit_packets: 100,
    };
    let mut cell = CellConfig::new(Standard::N, Band::Ghz5, vec![ht20(0)]);
    cell.stack = preset("linux-6.16").unwrap();
    if space {
        let loss_db = vec![vec![0.0, 60.0], vec![60.0, 0.0]];
        cell.space = Some(SpaceConfig::new(Placement::PathLossDb(loss_db), 20.0));
    }
    let flows = vec![Flow::Ping(Ping::new(Host::Server, Host::Station(1), 7))];
    let r = Simulation::new(SimConfig {
        cell,
        flows,
        duration: Nanos::from_secs(10),
        seed: 1,
        wired,
        host_bus: Vec::new(),
        remote_ends: Vec::new(),
        tcp_hosts: Default::default(),
    })
    .unwrap()
    .run();
    let ppdu_us = ht_ppdu_us(4 + 84 + 38, 26);
    assert_eq!(ppdu_us, 196);
    // BlockAck, 32 bytes at 6 Mbit/s: 20 + 4 × ceil((16 + 256 + 6) / 24) = 68 µs.
    let ba_us = 20 + 4 * (16u64 + 256 + 6).div_ceil(24);
    assert_eq!(ba_us, 68);
    let wired_ns = 2_000_000 + (84 + 38) * 8; // 1 ns per bit at 1 Gbit/s
    let base_ns = 2 * wired_ns + (ppdu_us + 16 + ba_us + 43 + ppdu_us) * 1000;
    let samples = &r.flows[0].rtt_samples;
    assert_eq!(samples.len(), 50, "every ping answered");
    for &(_, rtt_ms) in samples {
        let rtt_ns = (rtt_ms * 1e6).round() as u64;
        assert_eq!(
            rtt_ns, base_ns,
            "space {space}: RTT {rtt_ms} ms, base {base_ns} ns"
        );
    }
    println!("space {space}: idle RTT = {:.3} ms", base_ns as f64 / 1e6);
}

/// Ping beside a UDP flood to the same station: the bloated stack queues the pings
/// behind the flood, the modern one does not. Conservation holds across the wire.
#[test]
fn ping_under_load_per_era() {
    let mut rtts = Vec::new();
    for st in ["linux-4.8-bloated", "linux-6.16"] {
        let mut cell = CellConfig::new(Standard::N, Band::Ghz5, vec![ht20(0)]);
        cell.stack = preset(st).unwrap();
        let flood = Cbr {
            src: NodeId::AP,
            dst: NodeId(1),
            len_bytes: 1500,
            tid: 0,
            dscp: 0,
            rate_bps: 10_000_000,
            start: Nanos::ZERO,
            flow_hash: 0xdead_beef,
            probe: false,
        };
        let flows = vec![
            Flow::Cbr(flood),
            Flow::Ping(Ping::new(Host::Server, Host::Station(1), 7)),
        ];
        let r = Simulation::new(SimConfig::new(cell, flows, Nanos::from_secs(20), 1))
            .unwrap()
            .run();
        let rtt = r.flows[1].rtt_ms.expect("replies");
        println!(
            "{st}: ping RTT p50 {:.1} ms, p99 {:.1} ms",
            rtt.p50, rtt.p99
        );
        let c = r.conservation;
        assert_eq!(
            c.offered_packets,
            c.delivered_packets + c.dropped_packets + c.inside_packets,
            "{c:?}"
        );
        rtts.push(rtt.p50);
    }
    assert!(rtts[0] > 500.0, "bloated: {}", rtts[0]);
    assert!(rtts[1] < 30.0, "6.16: {}", rtts[1]);
}

#[test]
fn flows_must_cross_the_cell() {
    let cell = CellConfig::new(Standard::N, Band::Ghz5, vec![ht20(7)]);
    let bad = vec![Flow::Ping(Ping::new(Host::Server, Host::Ap, 1))];
    assert!(Simulation::new(SimConfig::new(cell.clone(), bad, Nanos::from_secs(1), 1)).is_err());
    let bad = vec![Flow::Ping(Ping::new(Host::Server, Host::Station(2), 1))];
    assert!(Simulation::new(SimConfig::new(cell, bad, Nanos::from_secs(1), 1)).is_err());
}

/// The irtt-like UDP echo: one-way delays add up to the RTT; on a link that loses half
/// the MPDUs with a single transmission attempt, an echo survives with probability
/// (1 − ½)² for request and reply, so 75 % are lost.
#[test]
fn udp_echo_one_way_delays_and_loss() {
    let mut cell = CellConfig::new(Standard::N, Band::Ghz5, vec![ht20(7)]);
    cell.stack = preset("linux-6.16").unwrap();
    let flows = vec![Flow::Ping(Ping::irtt(Host::Station(1), Host::Server, 3))];
    let r = Simulation::new(SimConfig::new(
        cell.clone(),
        flows.clone(),
        Nanos::from_secs(10),
        1,
    ))
    .unwrap()
    .run();
    let f = &r.flows[0];
    assert_eq!(f.kind, "udp_ping");
    assert_eq!(f.delivered_packets, 500, "20 ms apart for 10 s");
    for (&(_, rtt), &(_, fwd, back)) in f.rtt_samples.iter().zip(&f.owd_samples) {
        assert!((fwd + back - rtt).abs() < 1e-9);
        // Each way: 1 ms of wire plus the air; uplink contends, downlink mostly not.
        assert!(
            fwd > 1.0 && back > 1.0 && fwd < 2.0 && back < 2.0,
            "{fwd} {back}"
        );
    }
    assert_eq!(f.echo_loss, Some(0.0));
    assert!(f.ipdv_ms.unwrap() < 0.2);

    cell.stations[0].error = ErrorModel::FixedLoss { probability: 0.5 };
    cell.retry_limit = 1;
    let r = Simulation::new(SimConfig::new(cell, flows, Nanos::from_secs(20), 1))
        .unwrap()
        .run();
    let loss = r.flows[0].echo_loss.unwrap();
    println!("echo loss {loss:.3} (expected 0.75)");
    assert!((loss - 0.75).abs() < 0.05, "{loss}");
}
