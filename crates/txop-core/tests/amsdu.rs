//! A-MSDU (reference mac80211-tx-path.md §16) through a whole cell: the airtime an
//! aggregated exchange takes against the 802.11 arithmetic, every MSDU accounted for
//! once, AQL charged per A-MSDU, and determinism. (The length rules alone are unit
//! tests of `mac80211/amsdu.rs`; the capture's decoding is txop's `tests/capture.rs`.)

mod support;

use support::cell_driver::{down, ht20, on, sta, up, Driver, Flow, BOTH_MEDIA, MSDU};
use support::ppdu::{self, SIFS_US};
use txop_core::aqm::codel::CodelParams;
use txop_core::cell::{CellConfig, ExchangeOutcome, Output};
use txop_core::mac80211::amsdu::AmsduConfig;
use txop_core::mac80211::fq::{Fq, FqParams, OverloadPolicy};
use txop_core::mac80211::txq::TxqId;
use txop_core::phy::channel::ErrorModel;
use txop_core::phy::{Band, Standard};
use txop_core::stack::{self, StackConfig};
use txop_core::{Nanos, NodeId, Packet};

/// A TXQ stack (linux-4.9: fq + CoDel, ath9k with two aggregates in hardware) with
/// A-MSDU on or off.
fn stack_with(amsdu: bool) -> StackConfig {
    let mut s = stack::preset("linux-4.9").expect("a preset");
    s.amsdu = AmsduConfig {
        enabled: amsdu,
        ..AmsduConfig::OFF
    };
    s
}

fn ht20_cell(stack: StackConfig, error: ErrorModel, stations: usize) -> CellConfig {
    let mut cfg = CellConfig::new(
        Standard::N,
        Band::Ghz5,
        (0..stations).map(|_| sta(ht20(7), error)).collect(),
    );
    cfg.stack = stack;
    cfg.airtime_records = true;
    cfg
}

/// fq's side of a join (`ieee80211_amsdu_aggregate` on `fq->lock`): the flow's tail
/// grows, its flow's and tin's byte backlogs with it, its packet count and fq's memory
/// (the head's truesize, `frag_list` not counted) do not; an empty flow refuses.
#[test]
fn a_join_grows_the_tail_but_not_the_count_or_memory() {
    let mut fq = Fq::new(
        FqParams {
            flows: 4096,
            quantum_bytes: 300,
            limit_packets: 8192,
            memory_limit_bytes: 4 << 20,
        },
        OverloadPolicy::HalfFromFattest,
    );
    let tin = fq.add_tin();
    let p = |id| Packet::new(id, NodeId::AP, NodeId(1), 1500);
    let mut drops = Vec::new();
    assert!(!fq.join_tail(tin, &p(0), |_| Some(9999)), "no tail yet");
    fq.enqueue(Nanos::ZERO, tin, p(0), &mut drops);
    let memory = fq.memory_usage();
    assert!(fq.join_tail(tin, &p(1), |tail| {
        assert_eq!(tail.id, 0);
        Some(3038)
    }));
    assert!(!fq.join_tail(tin, &p(2), |_| None));
    assert_eq!(fq.tin_backlog(tin).packets, 1);
    assert_eq!(fq.tin_backlog(tin).bytes, 3038);
    assert_eq!(fq.memory_usage(), memory);
    let out = fq.dequeue(
        Nanos::ZERO,
        TxqId::from_index(0),
        &CodelParams::mac80211(),
        &mut drops,
    );
    assert_eq!(out.map(|o| (o.id, o.len_bytes)), Some((0, 3038)));
    assert_eq!((fq.backlog_packets(), fq.memory_usage()), (0, 0));
    assert!(drops.is_empty());
}

/// One saturated HT20 MCS7 download under the 4 ms aggregate limit, with fixed rate
/// control (mac80211's starting A-MSDU cap, 4095 bytes: two 1500-byte MSDUs per
/// A-MSDU).
///
/// Without A-MSDU: 20 MPDUs of 1538 bytes, 19·1544 + 1542 = 30 878 bytes, 3840 µs
/// (`ht20_mcs7_prediction`). With: an MPDU is 26 + 1522 + 2 + 1522 + 4 = 3076 bytes, its
/// subframe 3080 (no padding); ten fit, 30 800 bytes: ceil((16 + 8·30 800 + 6)/260) = 948
/// symbols, 36 + 3792 = 3828 µs; eleven (33 880 bytes, 4208 µs) do not. Both carry 20
/// MSDUs; each A-MSDU saves one delimiter, MAC header and FCS and their padding (36
/// bytes) and adds two subframe headers (28): 8 bytes per pair, 78 per PPDU, 12 µs of
/// the exchange's data + SIFS + BlockAck (32 µs). Airtime per delivered byte falls by
/// exactly 3876 / 3888.
#[test]
fn airtime_per_byte_falls_by_the_overhead_saved() {
    let run = |amsdu: bool| {
        let mut d = Driver::new(
            ht20_cell(stack_with(amsdu), ErrorModel::None, 1),
            3,
            &[down(1, 0, 256)],
        );
        d.run_until(Nanos::from_secs(2));
        d
    };
    let ba = ppdu::ofdm_us(24, ppdu::BLOCK_ACK_BYTES);
    let exchange_us = |psdu: u64| ppdu::ht_us(260, 1, false, psdu) + SIFS_US + ba;
    let plain_mpdu = ppdu::mpdu_bytes(u64::from(MSDU));
    let amsdu_mpdu = 26 + (14 + 8 + 1500 + 2) + (14 + 8 + 1500) + 4;
    assert_eq!(amsdu_mpdu, 3076);
    let cases = [
        (false, 20, exchange_us(ppdu::ampdu_bytes(20, plain_mpdu)), 1),
        (true, 10, exchange_us(ppdu::ampdu_bytes(10, amsdu_mpdu)), 2),
    ];
    assert_eq!((cases[0].2, cases[1].2), (3888, 3876));
    let mut per_byte = Vec::new();
    for (amsdu, mpdus, airtime_us, msdus_per_mpdu) in cases {
        let d = run(amsdu);
        let recs = d.airtime();
        // Past the start, when the first aggregates were built from the first packets.
        let steady: Vec<_> = recs.iter().skip(10).collect();
        assert!(steady.len() > 400, "{} exchanges", steady.len());
        for r in &steady {
            assert_eq!(r.outcome, ExchangeOutcome::Acked);
            assert_eq!((r.mpdus, r.acked_mpdus), (mpdus, mpdus), "A-MSDU {amsdu}");
            assert_eq!(r.airtime, Nanos::from_us(airtime_us), "A-MSDU {amsdu}");
        }
        let from = steady[0].start;
        let bytes: u64 = d
            .log
            .iter()
            .filter_map(|o| match o {
                Output::Delivered { at, packet, .. } if *at > from => Some(packet.len_bytes as u64),
                _ => None,
            })
            .sum();
        let airtime_ns: u64 = steady.iter().map(|r| r.airtime.as_ns()).sum();
        // Every exchange after `from` delivered its 20 MSDUs at its data PPDU's end.
        let exchanges = steady.len() as u64;
        assert_eq!(
            bytes,
            exchanges * mpdus as u64 * msdus_per_mpdu * u64::from(MSDU)
        );
        per_byte.push(airtime_ns as f64 / bytes as f64);
    }
    let ratio = per_byte[1] / per_byte[0];
    println!("airtime per byte: {per_byte:?}, ratio {ratio:.6}");
    assert!((ratio - 3876.0 / 3888.0).abs() < 1e-12, "ratio {ratio}");
}

/// Packets conserved with A-MSDU on both directions, losses and retries, TCP-ACK
/// sized frames beside full ones, in one collision domain and in space: every offered MSDU comes out exactly once (delivered
/// or dropped), in order per flow, and nothing stays inside after a drain.
#[test]
fn every_msdu_comes_out_once_in_order() {
    let flows: Vec<Flow> = (1..=3u16)
        .flat_map(|s| {
            let mut acks = up(s, 0, 40);
            acks.len = 52;
            [down(s, 0, 120), acks, down(s, 5, 20)]
        })
        .collect();
    // Space takes no fixed loss (its losses follow from the SINR: collisions here).
    let lossy = ErrorModel::FixedLoss { probability: 0.3 };
    for (seed, medium, error) in [
        (1, BOTH_MEDIA[0], lossy),
        (2, BOTH_MEDIA[0], lossy),
        (3, BOTH_MEDIA[1], ErrorModel::None),
    ] {
        let cfg = ht20_cell(stack_with(true), error, 3);
        let mut d = Driver::new(on(medium, cfg), seed, &flows);
        d.run_until(Nanos::from_secs(3));
        d.drain();
        let (missing, extra) = d.accounting_errors();
        assert!(missing.is_empty(), "never reported: {missing:?}");
        assert!(extra.is_empty(), "reported twice or unknown: {extra:?}");
        assert!(
            d.order_violations().is_empty(),
            "{:?}",
            d.order_violations()
        );
        assert_eq!(d.cell.packets_inside(), 0);
        let dropped = d.dropped(txop_core::DropReason::RetryLimit);
        println!(
            "seed {seed}, {medium:?}: {} offered, {dropped} dropped at the retry limit",
            d.offered.len()
        );
        if error == lossy {
            assert!(dropped > 0, "the losses reach the retry limit sometimes");
        }
    }
}

/// The same seed gives the same outputs, byte for byte, with A-MSDU on.
#[test]
fn deterministic() {
    let run = || {
        let mut d = Driver::new(
            ht20_cell(
                stack_with(true),
                ErrorModel::FixedLoss { probability: 0.1 },
                2,
            ),
            7,
            &[down(1, 0, 64), up(2, 0, 64)],
        );
        d.run_until(Nanos::from_secs(1));
        format!("{:?}", d.log)
    };
    assert_eq!(run(), run());
}

/// AQL (linux-6.16: the firmware driver under AQL) charges an A-MSDU once, for its
/// whole length, when it leaves its TXQ, and takes the same charge back when it
/// completes: the first MSDU of each A-MSDU carries the carrier's charge, which is
/// the estimate of a frame of the A-MSDU's length (about two MSDUs'), the others
/// none.
#[test]
fn aql_charges_the_aggregated_frame() {
    use txop_core::mac80211::aql::{expected_tx_airtime_us, stored_tx_time_est_us, AqlEstimator};
    let mut s = stack::preset("linux-6.16").expect("a preset");
    s.amsdu = AmsduConfig {
        enabled: true,
        ..AmsduConfig::OFF
    };
    let mut d = Driver::new(ht20_cell(s, ErrorModel::None, 1), 5, &[down(1, 0, 200)]);
    d.run_until(Nanos::from_secs(1));
    d.drain();
    let delivered = d.delivered();
    let est = |len| {
        stored_tx_time_est_us(expected_tx_airtime_us(
            len,
            Some(&ht20(7)),
            true,
            AqlEstimator::AggShift,
        ))
    };
    let one = est(MSDU);
    let pair = est(amsdu_carrier(2));
    // About twice one MSDU's (each is stored rounded down to 4 µs).
    assert!(pair > one && pair.abs_diff(2 * one) <= 8, "{one} {pair}");
    let charged: Vec<u32> = delivered.iter().map(|p| u32::from(p.aql_us)).collect();
    let pairs = charged.iter().filter(|&&c| c == pair).count();
    let zeros = charged.iter().filter(|&&c| c == 0).count();
    println!(
        "{} delivered: {pairs} A-MSDU charges of {pair} µs, {zeros} uncharged, lone {one} µs",
        delivered.len()
    );
    assert!(
        pairs * 2 > delivered.len() * 9 / 10,
        "most MSDUs travel in pairs"
    );
    assert!(charged.iter().all(|&c| c == pair || c == one || c == 0));
    assert_eq!(zeros, pairs, "one uncharged follower per A-MSDU of two");
    assert_eq!(d.cell.packets_inside(), 0);
}

/// The carrier length of an A-MSDU of `n` MSDUs of [`MSDU`] bytes: the A-MSDU less
/// LLC/SNAP (so that the model's 38 bytes of overhead make the MPDU).
fn amsdu_carrier(n: u32) -> u32 {
    let sub = 14 + 8 + MSDU;
    let padded = sub.div_ceil(4) * 4;
    (n - 1) * padded + sub - 8
}

/// On VHT and HE links the BlockAck window (64 MPDUs) bounds a saturated download's
/// aggregates; A-MSDU makes each of those MPDUs carry two MSDUs (the 4095-byte cap of
/// a rate control that never sets one), so an exchange carries up to twice the MSDUs
/// in the same 64 MPDUs (linux-6.16's firmware driver under AQL).
#[test]
fn a_msdu_doubles_what_the_blockack_window_carries_on_vht_and_he() {
    use txop_core::phy::{
        ChannelWidth, HeFormat, HeGuardInterval, HeLtf, NominalPacketPadding, TxVector,
    };
    let he80 = TxVector::He {
        mcs: 11,
        nss: 2,
        width: ChannelWidth::Mhz80,
        gi: HeGuardInterval::Us0_8,
        ltf: HeLtf::X2,
        format: HeFormat::Su,
        pe: NominalPacketPadding::Us16,
    };
    for (standard, txv) in [
        (Standard::Ac, support::cell_driver::vht80_mcs9_2ss_sgi()),
        (Standard::Ax, he80),
    ] {
        let per_exchange = |amsdu: bool| {
            // The firmware driver builds each aggregate when the MAC wins access (ath9k's
            // second aggregate, built ahead, would find the window closed). Frames join
            // only while they wait in the TXQ, i.e. beyond what AQL lets into the
            // firmware (12 ms per station, some 600 frames here): hence 2000 in flight.
            let mut s = stack::preset("linux-6.16").expect("a preset");
            s.amsdu.enabled = amsdu;
            let mut cfg = CellConfig::new(standard, Band::Ghz5, vec![sta(txv, ErrorModel::None)]);
            cfg.stack = s;
            cfg.airtime_records = true;
            let mut d = Driver::new(cfg, 11, &[down(1, 0, 2000)]);
            d.run_until(Nanos::from_ms(600));
            let recs = d.airtime();
            let steady = &recs[10..];
            assert!(steady.len() > 100, "{txv:?}: {} exchanges", steady.len());
            assert!(
                steady.iter().all(|r| r.mpdus == 64 && r.acked_mpdus == 64),
                "{txv:?} {amsdu}"
            );
            let (from, to) = (steady[0].start, steady[steady.len() - 1].start);
            let delivered = d
                .log
                .iter()
                .filter(|o| matches!(o, Output::Delivered { at, .. } if *at > from && *at <= to))
                .count();
            delivered as f64 / (steady.len() - 1) as f64
        };
        let (plain, amsdu) = (per_exchange(false), per_exchange(true));
        println!("{txv:?}: {plain} MSDUs per exchange, {amsdu} with A-MSDU");
        // At most two per MPDU (the cap); a few MPDUs go alone, when the firmware took
        // a flow's last frame before its partner arrived.
        assert_eq!(plain, 64.0, "{txv:?}");
        assert!(amsdu <= 128.0 && amsdu > 0.97 * 128.0, "{txv:?}: {amsdu}");
    }
}

/// Rate control's cap (`minstrel_ht_get_max_amsdu_len`, reference §16.4) decides
/// whether 1500-byte frames pair up: on an HT link minstrel_ht at 40 dB settles on
/// fast, reliable rates (cap 4095: two per A-MSDU, the join tested at 3048 bytes); at
/// 9 dB its most robust rate is slower than MCS 4 (cap 1600, or 500 below MCS 1), and
/// no two 1500-byte frames fit. Uplink saturation, linux-4.9's TXQs, A-MSDU on; MSDUs
/// delivered per MPDU acknowledged over the last second.
#[test]
fn minstrels_cap_decides_whether_frames_pair() {
    use txop_core::mac80211::rate_control::{MinstrelEra, RateControlKind};
    let msdus_per_mpdu = |snr_db: f64| {
        let mut station = sta(ht20(7), ErrorModel::Snr { snr_db });
        station.rate_control = RateControlKind::MinstrelHt(Some(MinstrelEra::Linux6));
        let mut cfg = CellConfig::new(Standard::N, Band::Ghz5, vec![station]);
        cfg.stack = stack_with(true);
        cfg.airtime_records = true;
        let mut d = Driver::new(cfg, 4, &[up(1, 0, 400)]);
        d.run_until(Nanos::from_secs(3));
        let from = Nanos::from_secs(2);
        let acked: u64 = d
            .airtime()
            .iter()
            .filter(|r| r.start >= from)
            .map(|r| u64::from(r.acked_mpdus))
            .sum();
        let delivered = d
            .log
            .iter()
            .filter(|o| matches!(o, Output::Delivered { at, .. } if *at >= from))
            .count() as f64;
        delivered / acked as f64
    };
    let (good, poor) = (msdus_per_mpdu(40.0), msdus_per_mpdu(9.0));
    println!("MSDUs per MPDU: {good:.3} at 40 dB, {poor:.3} at 9 dB");
    // (Releases from the reorder buffer at the window's start count frames acked
    // before it: the ratio can exceed 2 by a hair.)
    assert!(good > 1.9 && good < 2.05, "40 dB: {good}");
    assert!((poor - 1.0).abs() < 0.01, "9 dB: {poor}");
}
