//! Behavioural tests of the cell, driven by hand through its sans-I/O interface.
//!
//! Every expected number is derived here or in `support/ppdu.rs` from IEEE 802.11
//! (TXTIME equations, A-MPDU framing, EDCA), never from txop's own `rates.rs` or
//! `timing.rs`. The tests drive [`Cell`] directly through a small driver
//! (`support/cell_driver.rs`) so that they can see every output, airtime records
//! included. What needs the simulator (throughput over long runs, its `Results`, whole
//! runs' determinism) is tested in txop-sim's `simulation_behaviour.rs`, from the same
//! support files.
//!
//! The bugs these tests found (a double count in `packets_inside`, a TXOP overrun by
//! the first aggregate, packets lost after a retry-limit drop) are fixed; the tests
//! stay as regression tests.

mod support;

use std::collections::BTreeMap;
use support::cases::{busy_cell, ht20_mcs7_prediction, vht80_mcs9_2ss_sgi_prediction, Prediction};
use support::cell_driver::{
    down, ht20, ofdm, on, sta, up, us, vht80_mcs9_2ss_sgi, Driver, Flow, BOTH_MEDIA, MSDU,
};
use support::ppdu::{self, SIFS_US, SLOT_US};
use txop_core::cell::{AirtimeRecord, Cell, CellConfig, ExchangeOutcome, Output};
use txop_core::mac::edca::{Ac, EdcaParams};
use txop_core::phy::channel::ErrorModel;
use txop_core::phy::{Band, Standard, TxVector};
use txop_core::DropReason;
use txop_core::{Nanos, NodeId, Packet};

// ---------------------------------------------------------------------------------------
// 1. Aggregation sanity
// ---------------------------------------------------------------------------------------

/// Check one saturated link, directly driven for 2 s, against the prediction: the
/// exact shape of every exchange (subframes, airtime, contention gap). (txop-sim's
/// `simulation_behaviour.rs` checks the same link's throughput over 20 s.)
///
/// On both media: with equal-power space the node's own view of the medium must give
/// the same shapes and gaps as one collision domain.
fn check_exchanges(name: &str, standard: Standard, tx: TxVector, uplink: bool, p: &Prediction) {
    for medium in BOTH_MEDIA {
        check_exchanges_on(
            &format!("{name} ({medium:?})"),
            medium,
            standard,
            tx,
            uplink,
            p,
        );
    }
}

fn check_exchanges_on(
    name: &str,
    medium: support::cell_driver::Medium,
    standard: Standard,
    tx: TxVector,
    uplink: bool,
    p: &Prediction,
) {
    let flow = if uplink {
        up(1, 0, 128)
    } else {
        down(1, 0, 128)
    };
    let mut cfg = on(
        medium,
        CellConfig::new(standard, Band::Ghz5, vec![sta(tx, ErrorModel::None)]),
    );
    assert!(cfg.aggregation);
    cfg.airtime_records = true;
    let mut d = Driver::new(cfg, 3, &[flow]);
    d.run_until(Nanos::from_secs(2));
    let recs = d.airtime();
    assert!(recs.len() > 50);
    let aifs = us(SIFS_US + 3 * SLOT_US);
    let mut backoff_slots = 0u64;
    for (i, r) in recs.iter().enumerate() {
        assert_eq!(r.station, NodeId(1));
        assert_eq!(r.uplink, uplink);
        assert_eq!(r.ac, Ac::Be);
        assert_eq!(r.outcome, ExchangeOutcome::Acked);
        assert_eq!(
            r.mpdus as u64, p.subframes,
            "{name}: subframes of exchange {i}"
        );
        assert_eq!(r.acked_mpdus, r.mpdus);
        assert_eq!(
            r.airtime,
            us(p.exchange_us),
            "{name}: airtime of exchange {i}"
        );
        if i > 0 {
            let prev = recs[i - 1];
            let gap = r.start - (prev.start + prev.airtime);
            assert!(gap >= aifs, "{name}: gap {gap} shorter than AIFS");
            let slots = (gap - aifs).as_ns() / us(SLOT_US).as_ns();
            assert_eq!(
                gap - aifs,
                us(SLOT_US) * slots,
                "{name}: backoff not slot aligned"
            );
            assert!(slots <= 15, "{name}: backoff {slots} slots > CWmin");
            backoff_slots += slots;
        }
    }
    let mean = backoff_slots as f64 / (recs.len() - 1) as f64;
    println!(
        "{name}: mean backoff over {} exchanges: {mean:.2} slots",
        recs.len() - 1
    );
    assert!((mean - 7.5).abs() < 1.0, "{name}: mean backoff {mean}");
}

#[test]
fn aggregation_ht20_mcs7_uplink_matches_ppdu_arithmetic() {
    let p = ht20_mcs7_prediction();
    check_exchanges("HT20 MCS7 uplink", Standard::N, ht20(7), true, &p);
}

#[test]
fn aggregation_ht20_mcs7_downlink_matches_ppdu_arithmetic() {
    // The AP's BE (hostapd data2: AIFSN 3, CWmin 15) contends like a station's BE.
    let p = ht20_mcs7_prediction();
    check_exchanges("HT20 MCS7 downlink", Standard::N, ht20(7), false, &p);
}

/// The 64-subframe limit binds (see [`vht80_mcs9_2ss_sgi_prediction`]).
#[test]
fn aggregation_vht80_mcs9_2ss_sgi_uplink_is_window_limited() {
    let p = vht80_mcs9_2ss_sgi_prediction();
    check_exchanges(
        "VHT80 MCS9 2SS SGI uplink",
        Standard::Ac,
        vht80_mcs9_2ss_sgi(),
        true,
        &p,
    );
}

// ---------------------------------------------------------------------------------------
// 2. Conservation of packets
// ---------------------------------------------------------------------------------------

/// Four stations, uplink and downlink, each flow offered far above its share (one
/// 1500-byte packet every 150 µs = 80 Mbit/s per flow), 30 % MPDU loss, small queues
/// and a retry limit of 4 (so 0.3⁴ ≈ 0.8 % of MPDUs hit it). No aggregation: see
/// `packet_conservation_with_ampdu_retry_drops` for the A-MPDU case.
fn overloaded_lossy(aggregation: bool) -> Driver {
    let stations = (0..4)
        .map(|i| {
            sta(
                ht20(if i % 2 == 0 { 7 } else { 4 }),
                ErrorModel::FixedLoss { probability: 0.3 },
            )
        })
        .collect();
    let mut cfg = CellConfig::new(Standard::N, Band::Ghz5, stations);
    cfg.aggregation = aggregation;
    cfg.stack.driver_queue_packets = 8;
    cfg.retry_limit = 4;
    let mut d = Driver::new(cfg, 11, &[]);
    let period = 150u64;
    for k in 0..(300_000 / period) {
        for s in 1..=4u16 {
            // Stagger the flows within the period.
            let t = us(k * period + s as u64 * 7);
            d.schedule(t, NodeId(s), NodeId::AP, 0, MSDU);
            d.schedule(t + us(3), NodeId::AP, NodeId(s), 0, MSDU);
        }
    }
    d.run_until(Nanos::from_ms(300));
    d.drain();
    d
}

fn check_packet_conservation(aggregation: bool) {
    let d = overloaded_lossy(aggregation);
    let offered = d.offered.len();
    let delivered = d.delivered().len();
    let full = d.dropped(DropReason::QueueFull);
    let retry = d.dropped(DropReason::RetryLimit);
    let (missing, extra) = d.accounting_errors();
    println!(
        "aggregation {aggregation}: offered {offered}, delivered {delivered}, queue-full \
         {full}, retry-limit {retry}, inside {}, never came out {}",
        d.cell.packets_inside(),
        missing.len()
    );
    assert!(full > 0, "no queue-full drops: the test would be vacuous");
    assert!(retry > 0, "no retry-limit drops: the test would be vacuous");
    assert_eq!(d.dropped(DropReason::NoRoute), 0);
    assert_eq!(d.cell.poll_timeout(), None);
    assert_eq!(d.cell.packets_inside(), 0, "the cell went idle");
    assert!(
        missing.is_empty(),
        "{} packets never came out, e.g. {:?}",
        missing.len(),
        &missing[..missing.len().min(10)]
    );
    assert!(extra.is_empty(), "came out twice or unknown: {extra:?}");
    assert_eq!(offered, delivered + full + retry);
    let bad = d.order_violations();
    assert!(bad.is_empty(), "out of order: {bad:?}");
    // The per-link counters agree with the outputs.
    let s = d.cell.stats();
    let sum = |f: &dyn Fn(&txop_core::cell::LinkStats) -> u64| -> u64 {
        s.iter().skip(1).map(|x| f(&x.up) + f(&x.down)).sum()
    };
    assert_eq!(sum(&|l| l.offered_packets) as usize, offered);
    assert_eq!(sum(&|l| l.delivered_packets) as usize, delivered);
    assert_eq!(sum(&|l| l.dropped_queue_full) as usize, full);
    assert_eq!(sum(&|l| l.dropped_retry_limit) as usize, retry);
}

#[test]
fn packet_conservation_with_both_drop_kinds() {
    check_packet_conservation(false);
}

#[test]
fn packet_conservation_with_both_drop_kinds_under_ampdu() {
    check_packet_conservation(true);
}

/// Regression test for a defect of the reorder window handling before e099d4e: when an
/// A-MPDU subframe hit the retry limit, the recipient's window was moved to the
/// originator's next sequence number, past later subframes of the same A-MPDU that had
/// also failed but were requeued only afterwards; their retransmissions were then
/// discarded as duplicates and the packets vanished (about a quarter of them here).
#[test]
fn ampdu_retry_limit_drops_lose_nothing_else() {
    let cfg = {
        let mut c = CellConfig::new(
            Standard::N,
            Band::Ghz5,
            vec![sta(ht20(7), ErrorModel::FixedLoss { probability: 0.5 })],
        );
        c.retry_limit = 2;
        c
    };
    let mut d = Driver::new(cfg, 1, &[]);
    for _ in 0..200 {
        d.schedule(Nanos::ZERO, NodeId(1), NodeId::AP, 0, MSDU);
    }
    d.run_until(Nanos::ZERO);
    d.drain();
    let (missing, extra) = d.accounting_errors();
    let retry = d.dropped(DropReason::RetryLimit);
    println!(
        "delivered {}, retry-limit {retry}, never came out {}",
        d.delivered().len(),
        missing.len()
    );
    assert!(retry > 20);
    assert!(missing.is_empty(), "never came out: {missing:?}");
    assert!(extra.is_empty(), "came out twice or unknown: {extra:?}");
    assert!(d.order_violations().is_empty());
}

/// A handful of packets on several (src, dst, tid) under A-MPDU with 30 % MPDU loss and
/// a retry limit high enough that nothing is given up: every packet comes out exactly
/// once, in offer order per (src, dst, tid), although BlockAcks had holes and the
/// reorder buffer had to hold frames back.
#[test]
fn cell_delivers_every_packet_once_in_order_under_ampdu_losses() {
    let stations = (0..3)
        .map(|_| sta(ht20(7), ErrorModel::FixedLoss { probability: 0.3 }))
        .collect();
    let mut cfg = CellConfig::new(Standard::N, Band::Ghz5, stations);
    cfg.retry_limit = 40;
    cfg.airtime_records = true;
    let mut d = Driver::new(cfg, 5, &[]);
    for burst in 0..3u64 {
        let t = Nanos::from_ms(burst * 20);
        for s in 1..=3u16 {
            for _ in 0..25 {
                d.schedule(t, NodeId(s), NodeId::AP, 0, MSDU);
                d.schedule(t, NodeId(s), NodeId::AP, 5, 600);
                d.schedule(t, NodeId::AP, NodeId(s), 0, MSDU);
            }
        }
    }
    d.run_until(Nanos::from_ms(60));
    d.drain();
    let offered = d.offered.len();
    assert_eq!(offered, 3 * 3 * 3 * 25);
    assert_eq!(d.cell.poll_timeout(), None);
    assert_eq!(d.cell.packets_inside(), 0);
    let (missing, extra) = d.accounting_errors();
    assert!(missing.is_empty(), "never came out: {missing:?}");
    assert!(extra.is_empty(), "came out twice or unknown: {extra:?}");
    assert_eq!(d.delivered().len(), offered, "nothing should be dropped");
    let bad = d.order_violations();
    assert!(bad.is_empty(), "out of order: {bad:?}");

    // Not vacuous: A-MPDUs were acknowledged with holes, and the reorder buffer both held
    // frames back (fewer released than acknowledged) and released them later (more).
    let (mut holes, mut held, mut released) = (0, 0, 0);
    let mut batch = 0u16;
    for o in &d.log {
        match o {
            Output::Delivered { .. } => batch += 1,
            Output::Airtime(r) => {
                if r.outcome == ExchangeOutcome::Acked && r.mpdus > 1 {
                    holes += (r.acked_mpdus < r.mpdus) as u32;
                    held += (batch < r.acked_mpdus) as u32;
                    released += (batch > r.acked_mpdus) as u32;
                }
                batch = 0;
            }
            _ => {}
        }
    }
    println!("A-MPDUs with holes {holes}, exchanges holding frames {held}, releasing {released}");
    assert!(holes > 0 && held > 0 && released > 0);
}

#[test]
fn packets_inside_is_exact_during_the_response() {
    for medium in BOTH_MEDIA {
        packets_inside_is_exact_on(medium);
    }
}

fn packets_inside_is_exact_on(medium: support::cell_driver::Medium) {
    let cfg = on(
        medium,
        CellConfig::new(
            Standard::N,
            Band::Ghz5,
            vec![sta(ht20(7), ErrorModel::None)],
        ),
    );
    let mut failures = Vec::new();

    // The cell alone, one packet: check after every deadline.
    let mut cell = Cell::new(cfg, 1).expect("valid config");
    cell.handle_packet(Nanos::ZERO, Packet::new(1, NodeId(1), NodeId::AP, MSDU));
    let mut out = 0u64;
    let mut checks = 0;
    while let Some(t) = cell.poll_timeout() {
        cell.handle_timeout(t);
        while let Some(o) = cell.poll_output() {
            if matches!(o, Output::Delivered { .. } | Output::Dropped { .. }) {
                out += 1;
            }
        }
        checks += 1;
        if out + cell.packets_inside() != 1 {
            failures.push(format!(
                "{medium:?} cell at {t}: offered 1, out {out}, inside {}",
                cell.packets_inside()
            ));
        }
    }
    assert_eq!(out, 1);
    assert!(checks >= 3);
    assert!(failures.is_empty(), "{failures:#?}");
}

/// With space an ACK can be lost at its sender while the data got through: the AP and a
/// station hidden from its addressee start together, the addressee decodes the AP's
/// frame, and its ACK arrives at the AP under the hidden station's longer frame. The
/// AP keeps the MPDU for a retry that the receiver discards as a duplicate; the packet
/// has left the model when it was delivered, so its copy is not inside. (The property
/// tests found the count one too high while such a copy waited.)
#[test]
fn a_delivered_packet_whose_ack_was_lost_is_not_inside() {
    use txop_core::phy::space::{Placement, SpaceConfig};
    let mut cfg = CellConfig::new(
        Standard::N,
        Band::Ghz5,
        vec![
            sta(ht20(4), ErrorModel::None),
            sta(ht20(0), ErrorModel::None),
        ],
    );
    cfg.stack = txop_core::stack::simple();
    cfg.qos = false;
    cfg.aggregation = false;
    cfg.airtime_records = true;
    // Both stations 50 dB from the AP, 123 dB from each other: hidden.
    let loss = vec![
        vec![0.0, 50.0, 50.0],
        vec![50.0, 0.0, 123.0],
        vec![50.0, 123.0, 0.0],
    ];
    cfg.space = Some(SpaceConfig::new(Placement::PathLossDb(loss), 20.0));
    let mut cell = Cell::new(cfg, 0).expect("valid config");
    let mut offered = 0u64;
    for (src, dst, len, n) in [
        (NodeId::AP, NodeId(1), 40, 1),
        (NodeId(1), NodeId::AP, 40, 1),
        (NodeId(2), NodeId::AP, 43, 17),
        (NodeId::AP, NodeId(1), 40, 18),
    ] {
        for _ in 0..n {
            offered += 1;
            cell.handle_packet(Nanos::ZERO, Packet::new(offered, src, dst, len));
        }
    }
    let (mut gone, mut lost_acks) = (0u64, 0);
    let mut delivered_at: BTreeMap<u64, Nanos> = BTreeMap::new();
    let mut failures = Vec::new();
    while let Some(t) = cell.poll_timeout() {
        cell.handle_timeout(t);
        while let Some(o) = cell.poll_output() {
            match o {
                Output::Delivered { at, packet, .. } => {
                    gone += 1;
                    delivered_at.insert(packet.id, at);
                }
                Output::Dropped { .. } => gone += 1,
                // The AP's exchange failed after its addressee had delivered the frame.
                Output::Airtime(r)
                    if !r.uplink
                        && r.outcome != ExchangeOutcome::Acked
                        && delivered_at
                            .values()
                            .any(|&at| at > r.start && at <= r.start + r.airtime + us(100)) =>
                {
                    lost_acks += 1
                }
                Output::Airtime(_) => {}
            }
        }
        if offered != gone + cell.packets_inside() {
            failures.push(format!(
                "at {t}: offered {offered}, out {gone}, inside {}",
                cell.packets_inside()
            ));
        }
    }
    assert_eq!(gone, offered);
    assert!(
        lost_acks > 0,
        "no ACK was lost after a delivery: the case was not made"
    );
    assert!(failures.is_empty(), "{failures:#?}");
}

// ---------------------------------------------------------------------------------------
// 3. Conservation of airtime
// ---------------------------------------------------------------------------------------

/// An SNR at which MCS 7 loses most 1500-byte frames and MCS 0 almost none.
const LOSSY_SNR_DB: f64 = 20.0;

#[test]
fn airtime_is_conserved_including_collisions() {
    for medium in BOTH_MEDIA {
        airtime_is_conserved_on(medium);
    }
}

fn airtime_is_conserved_on(medium: support::cell_driver::Medium) {
    let (mut cfg, flows) = busy_cell(true);
    if medium == support::cell_driver::Medium::EqualPowerSpace {
        // Space decides losses by SINR and refuses a fixed loss probability: the lossy
        // stations' links get an SNR at which their rates lose frames instead.
        for st in &mut cfg.stations {
            if matches!(st.error, ErrorModel::FixedLoss { .. }) {
                st.error = ErrorModel::Snr {
                    snr_db: LOSSY_SNR_DB,
                };
            }
        }
    }
    let mut d = Driver::new(on(medium, cfg), 21, &flows);
    d.run_until(Nanos::from_ms(1500));
    d.drain();
    let recs = d.airtime();
    let busy = d.cell.busy_ns();
    let total: u64 = recs.iter().map(|r| r.airtime.as_ns()).sum();
    let collided = recs
        .iter()
        .filter(|r| r.outcome == ExchangeOutcome::Collision)
        .count();
    let stats_collisions: u64 = d
        .cell
        .stats()
        .iter()
        .map(|s| s.up.collisions + s.down.collisions)
        .sum();
    println!(
        "{medium:?}: {} records, {collided} in collisions, busy {:.3} ms",
        recs.len(),
        busy as f64 / 1e6
    );
    assert!(
        collided > 0,
        "no collisions: the sharing path was not exercised"
    );
    assert_eq!(stats_collisions as usize, collided);
    assert!(recs.iter().any(|r| r.outcome == ExchangeOutcome::Failed));
    assert_eq!(total, busy, "records vs busy time");
    // Per station and direction, the counters equal the records.
    let mut per: BTreeMap<(u16, bool), u64> = BTreeMap::new();
    for r in &recs {
        *per.entry((r.station.0, r.uplink)).or_default() += r.airtime.as_ns();
    }
    let stats = d.cell.stats();
    for (i, s) in stats.iter().enumerate().skip(1) {
        let i = i as u16;
        assert_eq!(s.up.airtime_ns, per.get(&(i, true)).copied().unwrap_or(0));
        assert_eq!(
            s.down.airtime_ns,
            per.get(&(i, false)).copied().unwrap_or(0)
        );
    }
    assert_eq!(stats[0].airtime_ns(), 0, "index 0 is unused");
    let sum: u64 = stats.iter().map(|s| s.airtime_ns()).sum();
    assert_eq!(sum, busy, "station counters vs busy time");

    // How a collision's time is split among its transmitters (`air/charge.rs`) is the
    // same on both media: `a_collision_is_charged_alike_on_both_media`.
}

/// A collision is charged by one rule on both media (`air/charge.rs`): each transmitter
/// the time its own PPDU held the air, time shared with others split equally. A fast
/// and a slow station (HT20 MCS 7 and MCS 0, no aggregation) saturate their uplinks, as
/// in the anomaly of DCF: their collisions pair a short frame with a long one. One
/// collision domain used to split each collision's busy period equally, charging the
/// fast station half of the slow one's frame: 16.7 % of the airtime against 12.6 % with
/// space, in `txop run anomaly`.
#[test]
fn a_collision_is_charged_alike_on_both_media() {
    let mut airtime = Vec::new();
    for medium in BOTH_MEDIA {
        let stations = vec![
            sta(ht20(7), ErrorModel::None),
            sta(ht20(0), ErrorModel::None),
        ];
        let mut cfg = CellConfig::new(Standard::N, Band::Ghz5, stations);
        cfg.aggregation = false;
        let mut d = Driver::new(on(medium, cfg), 5, &[up(1, 0, 64), up(2, 0, 64)]);
        d.run_until(Nanos::from_ms(3000));
        let stats = d.cell.stats();
        let collisions: u64 = stats.iter().map(|s| s.up.collisions).sum();
        assert!(collisions > 100, "{medium:?}: {collisions} collisions");
        let total: u64 = stats.iter().map(|s| s.airtime_ns()).sum();
        let fast = stats[1].up.airtime_ns as f64 / total as f64;
        airtime.push(fast);
    }
    let (shared, space) = (airtime[0], airtime[1]);
    assert!(
        (shared - space).abs() < 0.005,
        "fast station's airtime share: {shared:.4} in one collision domain, {space:.4} with space"
    );
}

// ---------------------------------------------------------------------------------------
// 4. Per-component random streams
// ---------------------------------------------------------------------------------------

/// Station 1's whole transmission history (backoff draws through the start times, and
/// channel-error draws through the outcomes) when only it has traffic, with n stations
/// in the cell. The others stay idle, so the channel is the same: what could differ is
/// only which random numbers station 1 sees. (With every station saturated, station 1's
/// first access time also depends on the others' draws through freezing and collisions,
/// so its own draw is not cleanly observable; with idle neighbours it is.)
///
/// This would fail with one shared generator: stations are built in order and draw
/// their initial counters, so station 4's initial draws would come before station 1's
/// second draw (after its first success) and shift everything after it.
fn station1_history(n: usize, seed: u64) -> Vec<(Nanos, Nanos, ExchangeOutcome, u16)> {
    let stations = vec![sta(ht20(7), ErrorModel::FixedLoss { probability: 0.3 }); n];
    let mut cfg = CellConfig::new(Standard::N, Band::Ghz5, stations);
    cfg.aggregation = false;
    cfg.airtime_records = true;
    // A huge window makes coincidences between different draws negligible.
    cfg.edca_sta[Ac::Be.index()] = EdcaParams {
        aifsn: 3,
        cw_min: 1023,
        cw_max: 1023,
        txop_limit_us: 0,
    };
    let mut d = Driver::new(cfg, seed, &[]);
    for _ in 0..12 {
        d.schedule(Nanos::ZERO, NodeId(1), NodeId::AP, 0, MSDU);
    }
    d.run_until(Nanos::ZERO);
    d.drain();
    let recs = d.airtime();
    assert!(recs.iter().all(|r| r.station == NodeId(1) && r.uplink));
    recs.iter()
        .map(|r| (r.start, r.airtime, r.outcome, r.acked_mpdus))
        .collect()
}

#[test]
fn adding_a_station_does_not_change_another_stations_draws() {
    let h3 = station1_history(3, 99);
    let h4 = station1_history(4, 99);
    assert!(h3.len() >= 12, "12 packets, some retried");
    assert!(h3.iter().any(|h| h.2 == ExchangeOutcome::Failed));
    // The first access is AIFS + draw·slot with draw ≤ 1023.
    let aifs = us(SIFS_US + 3 * SLOT_US);
    let first = h3[0].0 - aifs;
    assert_eq!(first.as_ns() % us(SLOT_US).as_ns(), 0);
    assert!(first <= us(SLOT_US) * 1023);
    println!(
        "station 1: first backoff {} slots, {} exchanges",
        first.as_ns() / us(SLOT_US).as_ns(),
        h3.len()
    );
    assert_eq!(h3, h4, "station 1's draws changed when station 4 was added");
    // The observable does depend on the draws: another seed changes it.
    assert_ne!(h3, station1_history(3, 100));
}

// ---------------------------------------------------------------------------------------
// 5. TXOP
// ---------------------------------------------------------------------------------------

/// The AP's VO (AIFSN 1, CW 3/7, TXOP 1504 µs) in an 802.11a QoS cell at 54 Mbit/s.
/// One exchange: 20 + 4·ceil(12 326/216) = 252 µs + SIFS 16 + ACK at 24 Mbit/s 28 µs =
/// 296 µs. Exchange k of a TXOP starts at 312·k µs and ends 296 µs later; a 5th would
/// end at 1248 + 296 = 1544 µs > 1504 µs, so a saturated TXOP carries exactly 4
/// exchanges and lasts 4·296 + 3·16 = 1232 µs.
#[test]
fn vo_txop_bursts_within_the_limit() {
    let exch = ppdu::ofdm_us(54, 1538) + SIFS_US + ppdu::ofdm_us(24, ppdu::ACK_BYTES);
    assert_eq!(exch, 296);
    let limit = 1504u64;
    let per_txop = (0u64..)
        .take_while(|k| k * (exch + SIFS_US) + exch <= limit)
        .count() as u64;
    assert_eq!(per_txop, 4);

    for medium in BOTH_MEDIA {
        vo_txop_bursts_on(medium, exch, limit, per_txop);
    }
}

fn vo_txop_bursts_on(medium: support::cell_driver::Medium, exch: u64, limit: u64, per_txop: u64) {
    let stations = vec![sta(ofdm(54), ErrorModel::None); 2];
    let mut cfg = on(medium, CellConfig::new(Standard::A, Band::Ghz5, stations));
    assert_eq!(cfg.edca_ap[Ac::Vo.index()].txop_limit_us, 1504);
    cfg.airtime_records = true;
    let mut d = Driver::new(cfg, 8, &[down(1, 6, 8), down(2, 6, 8)]);
    d.run_until(Nanos::from_ms(200));
    let recs = d.airtime();
    assert!(recs.iter().all(|r| r.ac == Ac::Vo
        && !r.uplink
        && r.mpdus == 1
        && r.outcome == ExchangeOutcome::Acked
        && (r.airtime == us(exch) || r.airtime == us(exch + SIFS_US))));
    // Group into channel accesses: within a TXOP the next exchange follows after SIFS,
    // and its record (charged from the end of the previous one) starts exactly where
    // the previous record ends; a new access needs AIFS ≥ 25 µs of idle medium.
    let mut groups: Vec<Vec<AirtimeRecord>> = Vec::new();
    for r in recs {
        match groups.last_mut() {
            Some(g)
                if {
                    let p = g.last().unwrap();
                    r.start == p.start + p.airtime && r.airtime == us(exch + SIFS_US)
                } =>
            {
                g.push(r)
            }
            _ => {
                if let Some(g) = groups.last() {
                    let p = g.last().unwrap();
                    assert!(r.start >= p.start + p.airtime + us(SIFS_US + SLOT_US));
                }
                groups.push(vec![r])
            }
        }
    }
    let ppdus: usize = groups.iter().map(|g| g.len()).sum();
    println!(
        "{ppdus} PPDUs in {} accesses: {:.3} per access",
        groups.len(),
        ppdus as f64 / groups.len() as f64
    );
    assert!(groups.len() > 100);
    let longest = groups
        .iter()
        .map(|g| g.last().unwrap().start + g.last().unwrap().airtime - g[0].start)
        .max()
        .unwrap();
    assert!(longest <= us(limit), "a TXOP lasted {longest}");
    // Saturated: every complete TXOP holds exactly 4 exchanges (1232 µs).
    for g in &groups[..groups.len() - 1] {
        assert_eq!(g.len() as u64, per_txop);
        let dur = g.last().unwrap().start + g.last().unwrap().airtime - g[0].start;
        assert_eq!(dur, us(per_txop * exch + (per_txop - 1) * SIFS_US));
    }
    // Both links were served, within TXOPs too.
    assert!(groups
        .iter()
        .any(|g| g.iter().any(|r| r.station == NodeId(1))
            && g.iter().any(|r| r.station == NodeId(2))));
}

/// The TXOP limit bounds the whole exchange, BlockAck included (802.11-2016 10.22.2.8:
/// a frame exchange may start only if it completes within the TXOP limit). A station's
/// VI (TXOP 3008 µs) with A-MPDU, HT20 MCS7 LGI, 1000-byte MSDUs: MPDU 1038 B, subframe
/// 1042 B (1044 padded).
/// - 22 subframes: 21·1044 + 1042 = 22 966 B, ceil((16 + 183 728 + 6)/260) = 707
///   symbols, PPDU 36 + 2828 = 2864 µs, exchange + SIFS + BlockAck = 2912 µs ≤ 3008.
/// - 23 subframes: 24 010 B, 739 symbols, PPDU 2992 µs ≤ 3008, but the exchange is
///   2992 + 16 + 32 = 3040 µs > 3008.
///
/// So every VI access must carry at most 22 subframes (exactly 22 when saturated).
#[test]
fn vi_txop_limit_includes_the_blockack() {
    let mpdu = 1000 + ppdu::QOS_MPDU_OVERHEAD;
    let ba = ppdu::ofdm_us(24, ppdu::BLOCK_ACK_BYTES);
    let limit = 3008;
    let (n, _) = ppdu::max_subframes(mpdu, 64, 65_535, limit - SIFS_US - ba, |b| {
        ppdu::ht_us(260, 1, false, b)
    });
    let exch = ppdu::ht_us(260, 1, false, ppdu::ampdu_bytes(n, mpdu)) + SIFS_US + ba;
    assert_eq!((n, exch), (22, 2912));

    for medium in BOTH_MEDIA {
        vi_txop_limit_on(medium, n, exch, limit);
    }
}

fn vi_txop_limit_on(medium: support::cell_driver::Medium, n: u64, exch: u64, limit: u64) {
    let mut cfg = on(
        medium,
        CellConfig::new(
            Standard::N,
            Band::Ghz5,
            vec![sta(ht20(7), ErrorModel::None)],
        ),
    );
    assert_eq!(cfg.edca_sta[Ac::Vi.index()].txop_limit_us, limit as u32);
    cfg.airtime_records = true;
    let flow = Flow {
        len: 1000,
        ..up(1, 5, 128)
    };
    let mut d = Driver::new(cfg, 4, &[flow]);
    d.run_until(Nanos::from_ms(200));
    let recs = d.airtime();
    assert!(recs.len() > 20);
    let over: Vec<_> = recs
        .iter()
        .filter(|r| r.airtime > us(limit))
        .map(|r| (r.mpdus, r.airtime))
        .collect();
    println!(
        "{} exchanges; first: {} subframes, {}; over the limit: {}",
        recs.len(),
        recs[0].mpdus,
        recs[0].airtime,
        over.len()
    );
    assert!(
        over.is_empty(),
        "exchanges longer than the TXOP limit: {:?}",
        &over[..over.len().min(5)]
    );
    for r in &recs {
        assert_eq!(r.ac, Ac::Vi);
        assert_eq!(r.mpdus as u64, n);
        assert_eq!(r.airtime, us(exch));
    }
}

// ---------------------------------------------------------------------------------------
// 6. Configuration errors
// ---------------------------------------------------------------------------------------

#[test]
fn invalid_configurations_are_rejected_naming_the_field() {
    let ok = sta(ofdm(54), ErrorModel::None);
    let err = |cfg: CellConfig| Cell::new(cfg, 1).expect_err("config should be rejected");

    // HT on an 802.11a cell (second station, to check the 1-based index).
    let e = err(CellConfig::new(
        Standard::A,
        Band::Ghz5,
        vec![ok.clone(), sta(ht20(7), ErrorModel::None)],
    ));
    assert!(e.starts_with("stations[2]:"), "{e}");
    assert!(e.contains("802.11a"), "{e}");
    let e = err(CellConfig::new(
        Standard::A,
        Band::Ghz5,
        vec![sta(ht20(0), ErrorModel::None)],
    ));
    assert!(e.starts_with("stations[1]:"), "{e}");

    // VHT in the 2.4 GHz band: an 802.11ac BSS there is rejected by band…
    let e = err(CellConfig::new(
        Standard::Ac,
        Band::Ghz2_4,
        vec![sta(vht80_mcs9_2ss_sgi(), ErrorModel::None)],
    ));
    assert!(e.starts_with("phy.band:"), "{e}");
    assert!(e.contains("2.4"), "{e}");
    // …and a VHT station in a 2.4 GHz 802.11n BSS by station.
    let e = err(CellConfig::new(
        Standard::N,
        Band::Ghz2_4,
        vec![sta(vht80_mcs9_2ss_sgi(), ErrorModel::None)],
    ));
    assert!(e.starts_with("stations[1]:"), "{e}");

    // A loss probability above one.
    let e = err(CellConfig::new(
        Standard::A,
        Band::Ghz5,
        vec![
            ok.clone(),
            ok.clone(),
            sta(ofdm(54), ErrorModel::FixedLoss { probability: 1.5 }),
        ],
    ));
    assert!(e.starts_with("stations[3]:"), "{e}");
    assert!(e.contains("1.5"), "{e}");

    // No stations.
    let e = err(CellConfig::new(Standard::A, Band::Ghz5, vec![]));
    assert!(e.starts_with("stations:"), "{e}");

    // An invalid rate, and an invalid EDCA table.
    let e = err(CellConfig::new(
        Standard::A,
        Band::Ghz5,
        vec![sta(ofdm(53), ErrorModel::None)],
    ));
    assert!(e.starts_with("stations[1]:"), "{e}");
    let mut cfg = CellConfig::new(Standard::A, Band::Ghz5, vec![ok.clone()]);
    cfg.edca_sta[Ac::Vi.index()].cw_min = 10;
    let e = err(cfg);
    assert!(e.starts_with("edca_sta.vi:"), "{e}");

    // And a valid one is accepted.
    assert!(Cell::new(CellConfig::new(Standard::A, Band::Ghz5, vec![ok]), 1).is_ok());
}

// ---------------------------------------------------------------------------------------
// A receiver that leaves in the middle of an A-MPDU
// ---------------------------------------------------------------------------------------

/// A station that scans with the legacy rule (no null-data frame per excursion) leaves
/// the channel whenever its scanner says, also in the middle of the AP's A-MPDU to it:
/// its TCP-like uplink trickle wakes the AP (PM=0 on its data), the saturated downlink
/// then fills the air, and the next excursion cuts an aggregate. The driver keeps the
/// subframes that had arrived (ath9k flushes the completed receive descriptors up to
/// mac80211 when it retunes, `ath_stoprecv`), so packets are delivered at the end of a
/// data PPDU whose exchange failed — a first part of it — and the AP's retries of them
/// are duplicates, delivered once. The station's own exchanges end before its radio
/// leaves (mac80211 flushes the driver first), so none of them fails. On both media: one collision
/// domain lays the exchange out when it starts and revises it when the radio leaves;
/// space records the departure at the receiver. (Before this rule one collision domain
/// delivered the whole aggregate to a radio that had left, and space delivered none of
/// it; the two then parted on `e1-scan-bulk`, 31.7–34.3 against 16.8–28.4 Mbit/s.)
#[test]
fn a_receiver_that_leaves_mid_ampdu_keeps_what_had_arrived() {
    for medium in BOTH_MEDIA {
        a_receiver_that_leaves_mid_ampdu_on(medium);
    }
}

fn a_receiver_that_leaves_mid_ampdu_on(medium: support::cell_driver::Medium) {
    use txop_core::cell::StationScan;
    use txop_core::mac80211::scan::{ScanBands, ScanConfig, ScanPolicy};
    use txop_core::StationId;
    let mut cfg = CellConfig::new(
        Standard::N,
        Band::Ghz5,
        vec![sta(ht20(7), ErrorModel::None)],
    );
    cfg.airtime_records = true;
    cfg.station_scans.push(StationScan {
        station: StationId(1),
        scan: ScanConfig::periodic(
            ScanPolicy::Legacy,
            ScanBands::Both,
            Nanos::from_ms(100),
            Nanos::from_secs(1),
        ),
    });
    let cfg = on(medium, cfg);
    let mut d = Driver::new(cfg, 7, &[down(1, 0, 256)]);
    // The station's trickle: one uplink packet every 2 ms.
    for k in 0..2000u64 {
        d.schedule(us(2000 * k + 1000), NodeId(1), NodeId::AP, 0, 100);
    }
    d.run_until(Nanos::from_secs(4));

    // Deliveries to the station, by instant.
    let mut delivered_at: BTreeMap<Nanos, u64> = BTreeMap::new();
    let mut seen = std::collections::HashSet::new();
    for o in &d.log {
        if let Output::Delivered { at, packet, .. } = o {
            if packet.dst == NodeId(1) {
                assert!(
                    seen.insert(packet.id),
                    "{medium:?}: packet {} delivered twice",
                    packet.id
                );
                *delivered_at.entry(*at).or_default() += 1;
            }
        }
    }
    let mut cut = 0;
    for r in d.airtime() {
        // Its own exchanges are never cut: the radio leaves when the one on the air
        // ends (mac80211 flushes the driver before it tunes away).
        assert!(
            !(r.uplink && r.outcome == ExchangeOutcome::Failed),
            "{medium:?}: the scanning station's own exchange at {} failed",
            r.start
        );
        if r.uplink || r.outcome != ExchangeOutcome::Failed {
            continue;
        }
        // A failed downlink exchange: with an error-free link only an absent receiver
        // fails one. Whatever was delivered at its data's end is what had arrived.
        let end = r.start + r.airtime;
        if let Some(&k) = delivered_at.get(&end) {
            // A departure after the last subframe (in its trailing padding, before the
            // BlockAck) keeps them all; never more than the aggregate held.
            assert!(
                k <= u64::from(r.mpdus),
                "{medium:?}: {k} packets delivered at the end of a {}-subframe exchange",
                r.mpdus
            );
            cut += u32::from(k < u64::from(r.mpdus));
        }
    }
    assert!(
        cut >= 3,
        "{medium:?}: only {cut} aggregates were cut by a departure and delivered in part"
    );
}

// ---------------------------------------------------------------------------------------
// What the ath9k driver charges the airtime scheduler
// ---------------------------------------------------------------------------------------

/// ath9k charges the airtime scheduler with each try's data PPDU alone
/// (`ath_tx_count_airtime`), not the exchange's protection, SIFS and ACK. Two saturated
/// downlinks without aggregation, one at MCS 7 (a 228 µs frame, about as long again in
/// SIFS, ACK and contention) and one at MCS 0 (1.9 ms, a small overhead), share the
/// air under the deficit scheduler so that their *data* airtime is equal: each frame's
/// TXTIME (802.11-2016 19.4.3, computed here) summed over the exchanges the airtime
/// records list comes out even within 3 %, while the busy time charged to them parts by
/// the overhead's share (the MCS 7 station's busy time is over 10 % above its data
/// airtime, the MCS 0 one's under 5 %), under ath9k's own deficit scheduler (4.11). The
/// firmware driver (5.5's preset) is still charged the busy time: there the busy times
/// come out even. (5.5's scheduler over the ath9k driver is not a test of the charge:
/// its AQL limit holds the MCS 0 station to two or three frames in flight, and it then
/// gets about 13 % less data airtime than the other.)
#[test]
fn the_ath9k_scheduler_is_charged_the_data_ppdus_alone() {
    use txop_core::stack::DriverKind;
    for (stack, ath9k) in [("linux-4.11-ath9k", true), ("linux-5.5", false)] {
        let mut cfg = CellConfig::new(
            Standard::N,
            Band::Ghz5,
            vec![
                sta(ht20(7), ErrorModel::None),
                sta(ht20(0), ErrorModel::None),
            ],
        );
        cfg.stack = txop_core::stack::preset(stack).expect("a preset");
        assert_eq!(cfg.stack.driver == DriverKind::Ath9k, ath9k);
        cfg.aggregation = false;
        cfg.airtime_records = true;
        let mut d = Driver::new(cfg, 3, &[down(1, 0, 64), down(2, 0, 64)]);
        d.run_until(Nanos::from_secs(4));
        // HT20 long GI: N_DBPS 260 at MCS 7, 26 at MCS 0.
        let data_us = [
            ppdu::ht_us(260, 1, false, ppdu::mpdu_bytes(u64::from(MSDU))),
            ppdu::ht_us(26, 1, false, ppdu::mpdu_bytes(u64::from(MSDU))),
        ];
        let (mut data, mut busy) = ([0u64; 2], [0u64; 2]);
        for r in d.airtime() {
            if r.uplink {
                continue;
            }
            let k = usize::from(r.station.0) - 1;
            data[k] += data_us[k] * u64::from(r.mpdus);
            busy[k] += r.airtime.as_ns() / 1000;
        }
        if !ath9k {
            let even = busy[0] as f64 / busy[1] as f64;
            assert!(
                (even - 1.0).abs() < 0.03,
                "{stack} firmware: busy MCS 7 {} µs, MCS 0 {} µs",
                busy[0],
                busy[1]
            );
            continue;
        }
        let even = data[0] as f64 / data[1] as f64;
        assert!(
            (even - 1.0).abs() < 0.03,
            "{stack}: data airtime MCS 7 {} µs, MCS 0 {} µs (busy {} and {} µs)",
            data[0],
            data[1],
            busy[0],
            busy[1]
        );
        let overhead = |k: usize| busy[k] as f64 / data[k] as f64 - 1.0;
        assert!(
            overhead(0) > 0.10 && overhead(1) < 0.05,
            "{stack}: busy over data {:.3} (MCS 7), {:.3} (MCS 0)",
            overhead(0),
            overhead(1)
        );
    }
}
