//! Legacy stations in HT cells: an 802.11b (DSSS) station in a 2.4 GHz 802.11n cell
//! turns on ERP protection (a CTS-to-self at 1 Mbit/s in front of every OFDM/HT PPDU),
//! the long slot and DSSS basic rates; an 802.11a/g (OFDM) station changes nothing but
//! its own airtime; legacy stations never aggregate.
//!
//! Every expected duration is worked out here from the TXTIME equations of IEEE
//! 802.11-2016 (clause 15/16 DSSS, 17/18 OFDM/ERP-OFDM, 19 HT mixed format), never from
//! txop's `rates.rs` or `timing.rs`:
//!
//! * DSSS, long preamble: 192 µs + 8 × bytes / (rate in Mbit/s) µs.
//! * ERP-OFDM at 2.4 GHz: 20 µs + 4 µs × ceil((16 + 8 × bytes + 6) / N_DBPS) + 6 µs
//!   signal extension, N_DBPS = 4 × rate in Mbit/s.
//! * HT20 mixed format, one stream, long GI: 36 µs + 4 µs × ceil((16 + 8 × bytes + 6) /
//!   N_DBPS) (+ 6 µs in 2.4 GHz); MCS 7 has N_DBPS 260.
//! * ACK 14 bytes, RTS 20, CTS 14; a QoS data MPDU is the MSDU + 26 (header) + 8
//!   (LLC/SNAP) + 4 (FCS) bytes. SIFS 10 µs in 2.4 GHz, 16 in 5 GHz; aSlotTime 20 µs
//!   (long, 802.11b present) or 9 µs (short).

#[path = "support/bianchi.rs"]
mod bianchi;

use txop_core::capture::CapturedFrame;
use txop_core::cell::{AirtimeRecord, Cell, CellConfig, Output, StationConfig};
use txop_core::mac::edca::EdcaParams;
use txop_core::mac::protection::Protection;
use txop_core::mac80211::powersave::BEACON_BYTES;
use txop_core::phy::channel::ErrorModel;
use txop_core::phy::space::{Placement, SpaceConfig};
use txop_core::phy::{Band, ChannelWidth, DsssPreamble, GuardInterval, Standard, TxVector};
use txop_core::{Nanos, NodeId, Packet};
use txop_sim::traffic::saturated::Saturated;
use txop_sim::traffic::Flow;
use txop_sim::{SimConfig, Simulation};

const MSDU_BYTES: u64 = 1500;
/// QoS data MPDU of a 1500-byte MSDU: 1500 + 26 + 8 + 4.
const MPDU_BYTES: u64 = 1538;

fn ht20_mcs7() -> TxVector {
    TxVector::Ht {
        mcs: 7,
        width: ChannelWidth::Mhz20,
        gi: GuardInterval::Long,
    }
}

fn dsss(rate_kbps: u32) -> TxVector {
    TxVector::Dsss {
        rate_kbps,
        preamble: DsssPreamble::Long,
    }
}

fn ofdm(rate_mbps: u32) -> TxVector {
    TxVector::Ofdm { rate_mbps }
}

fn sta(tx: TxVector) -> StationConfig {
    StationConfig::new(tx, ErrorModel::None)
}

/// DSSS long preamble at `rate_kbps`: 192 µs + 8 × bytes × 1000 / rate_kbps µs.
fn dsss_us(bytes: u64, rate_kbps: u64) -> u64 {
    192 + (8 * bytes * 1000).div_ceil(rate_kbps)
}

/// Data symbols of an OFDM/HT PSDU: ceil((SERVICE 16 + 8 × bytes + tail 6) / N_DBPS).
fn symbols(bytes: u64, ndbps: u64) -> u64 {
    (16 + 8 * bytes + 6).div_ceil(ndbps)
}

/// ERP-OFDM at 2.4 GHz: 20 µs preamble + 4 µs symbols + 6 µs signal extension.
fn erp_us(bytes: u64, rate_mbps: u64) -> u64 {
    20 + 4 * symbols(bytes, 4 * rate_mbps) + 6
}

/// HT20 MCS 7, long GI, one stream: L-STF/L-LTF/L-SIG 20 + HT-SIG 8 + HT-STF 4 +
/// one HT-LTF 4 = 36 µs, then 4 µs symbols of 260 bits, + `extension_us`.
fn ht_mcs7_us(bytes: u64, extension_us: u64) -> u64 {
    36 + 4 * symbols(bytes, 260) + extension_us
}

/// A QoS cell at `band` with `stations`, no aggregation unless asked, airtime records.
fn cell_config(band: Band, stations: Vec<StationConfig>, protection: Protection) -> CellConfig {
    let mut c = CellConfig::new(Standard::N, band, stations);
    c.aggregation = false;
    c.airtime_records = true;
    c.protection = protection;
    c
}

/// Run `cell` with one 1500-byte downlink packet to each station in `to`, offered 50 ms
/// apart so that each exchange finds the medium idle, until the cell is idle, calling
/// `collect` after every call into it.
fn offer_lone_packets(cell: &mut Cell, to: &[u16], mut collect: impl FnMut(&mut Cell)) {
    let gap = Nanos::from_ms(50);
    for (i, &s) in to.iter().enumerate() {
        let at = gap * i as u64;
        while let Some(t) = cell.poll_timeout().filter(|&t| t <= at) {
            cell.handle_timeout(t);
            collect(cell);
        }
        cell.handle_packet(at, Packet::new(i as u64, NodeId::AP, NodeId(s), 1500));
        collect(cell);
    }
    while let Some(t) = cell.poll_timeout() {
        cell.handle_timeout(t);
        collect(cell);
    }
}

/// Run `cfg` with one lone downlink packet to each station in `to`
/// ([`offer_lone_packets`]): the airtime records.
fn lone_exchanges(cfg: CellConfig, to: &[u16]) -> Vec<AirtimeRecord> {
    let mut cell = Cell::new(cfg, 7).expect("valid config");
    let mut records = Vec::new();
    offer_lone_packets(&mut cell, to, |cell| {
        while let Some(o) = cell.poll_output() {
            if let Output::Airtime(r) = o {
                records.push(r);
            }
        }
    });
    assert_eq!(
        records.len(),
        to.len(),
        "one exchange per packet: {records:?}"
    );
    records
}

fn airtime_us(r: &AirtimeRecord) -> u64 {
    assert_eq!(r.airtime.as_ns() % 1000, 0);
    r.airtime.as_ns() / 1000
}

/// [`lone_exchanges`] with the air captured: each PPDU's frame, sender, rate, start
/// and end, in the order they ended.
fn lone_ppdus(
    mut cfg: CellConfig,
    to: &[u16],
) -> Vec<(CapturedFrame, NodeId, TxVector, Nanos, Nanos)> {
    cfg.airtime_records = false;
    let mut cell = Cell::new(cfg, 7).expect("valid config");
    cell.capture_air();
    let mut ppdus = Vec::new();
    offer_lone_packets(&mut cell, to, |cell| {
        while cell.poll_output().is_some() {}
        while let Some(p) = cell.poll_capture() {
            ppdus.push((p.frame, p.transmitter, p.txv, p.start, p.end));
        }
    });
    ppdus
}

/// Both media protect alike (issue 26): the same PPDUs, at the same rates and times,
/// in one collision domain and in an equal-power space. Protection frames go at 1
/// Mbit/s DSSS, long preamble, which the 802.11b station decodes (10.26.2).
#[test]
fn both_media_protect_alike() {
    let stations = || vec![sta(ht20_mcs7()), sta(ofdm(54)), sta(dsss(1000))];
    let loss_db: Vec<Vec<f64>> = (0..4)
        .map(|i| (0..4).map(|j| if i == j { 0.0 } else { 60.0 }).collect())
        .collect();
    for mode in [Protection::CtsToSelf, Protection::RtsCts] {
        let shared = cell_config(Band::Ghz2_4, stations(), mode);
        let mut spatial = shared.clone();
        spatial.space = Some(SpaceConfig::new(
            Placement::PathLossDb(loss_db.clone()),
            20.0,
        ));
        let a = lone_ppdus(shared, &[1, 2, 3]);
        let b = lone_ppdus(spatial, &[1, 2, 3]);
        assert_eq!(a, b, "{mode:?}");
        let protection_frames: Vec<_> = a
            .iter()
            .filter(|p| {
                matches!(
                    p.0,
                    CapturedFrame::Rts | CapturedFrame::Cts | CapturedFrame::CtsToSelf
                )
            })
            .collect();
        // The HT and the 802.11g frames are protected, the DSSS one is not.
        let per_exchange = if mode == Protection::RtsCts { 2 } else { 1 };
        assert_eq!(protection_frames.len(), 2 * per_exchange, "{mode:?}: {a:?}");
        assert!(
            protection_frames.iter().all(|p| p.2 == dsss(1000)),
            "{mode:?}: {protection_frames:?}"
        );
    }
}

/// One MPDU to an HT station, one to an 802.11g station and one to an 802.11b station
/// in a 2.4 GHz 802.11n cell, under each protection setting.
#[test]
fn exchange_durations_with_erp_protection() {
    let stations = || vec![sta(ht20_mcs7()), sta(ofdm(54)), sta(dsss(1000))];
    // The responses: an ACK at 24 Mbit/s (the highest mandatory OFDM rate ≤ the
    // eliciting frame's 54 Mbit/s or MCS 7's non-HT reference rate of 54) and, to the
    // DSSS frame, at 1 Mbit/s.
    let ack_ofdm = erp_us(14, 24);
    assert_eq!(ack_ofdm, 34);
    let ack_dsss = dsss_us(14, 1000);
    assert_eq!(ack_dsss, 304);
    let ht = ht_mcs7_us(MPDU_BYTES, 6);
    assert_eq!(ht, 234); // 36 + 4 × 48 + 6
    let g = erp_us(MPDU_BYTES, 54);
    assert_eq!(g, 258); // 20 + 4 × 58 + 6
    let b = dsss_us(MPDU_BYTES, 1000);
    assert_eq!(b, 12_496);
    // Protection frames at 1 Mbit/s, long preamble.
    let cts = dsss_us(14, 1000);
    let rts = dsss_us(20, 1000);
    assert_eq!((cts, rts), (304, 352));
    let sifs = 10;

    let expect = |protect_us: u64| {
        [
            protect_us + ht + sifs + ack_ofdm,
            protect_us + g + sifs + ack_ofdm,
            // DSSS frames are never protected.
            b + sifs + ack_dsss,
        ]
    };
    for (mode, protect_us) in [
        // CTS-to-self, SIFS, data, SIFS, ACK: 304 + 10 + 234 + 10 + 34 = 592 µs.
        (Protection::CtsToSelf, cts + sifs),
        // RTS, SIFS, CTS, SIFS, data, SIFS, ACK.
        (Protection::RtsCts, rts + sifs + cts + sifs),
        (Protection::Off, 0),
    ] {
        let records = lone_exchanges(cell_config(Band::Ghz2_4, stations(), mode), &[1, 2, 3]);
        let got: Vec<u64> = records.iter().map(airtime_us).collect();
        assert_eq!(got, expect(protect_us), "{mode:?}");
    }
    assert_eq!(expect(cts + sifs)[0], 592);
}

/// Without an 802.11b station nothing is protected: an HT-only 2.4 GHz cell, and
/// 802.11a stations among HT ones in 5 GHz (HT-mixed format PPDUs protect themselves).
#[test]
fn no_protection_without_an_802_11b_station() {
    let ack_24_2g4 = erp_us(14, 24);
    let records = lone_exchanges(
        cell_config(
            Band::Ghz2_4,
            vec![sta(ht20_mcs7()), sta(ofdm(54))],
            Protection::CtsToSelf,
        ),
        &[1, 2],
    );
    let got: Vec<u64> = records.iter().map(airtime_us).collect();
    assert_eq!(
        got,
        [
            ht_mcs7_us(MPDU_BYTES, 6) + 10 + ack_24_2g4,
            erp_us(MPDU_BYTES, 54) + 10 + ack_24_2g4
        ]
    );
    // 5 GHz: no signal extension, SIFS 16. HT: 36 + 4 × 48 = 228; 11a 54 Mbit/s:
    // 20 + 4 × 58 = 252; ACK at 24 Mbit/s: 20 + 4 × 2 = 28.
    let records = lone_exchanges(
        cell_config(
            Band::Ghz5,
            vec![sta(ht20_mcs7()), sta(ofdm(54))],
            Protection::CtsToSelf,
        ),
        &[1, 2],
    );
    let got: Vec<u64> = records.iter().map(airtime_us).collect();
    assert_eq!(got, [228 + 16 + 28, 252 + 16 + 28]);
}

/// Gaps between the back-to-back exchanges of a lone saturated sender are AIFS plus a
/// whole number of slots: AIFS[BE] = SIFS + 3 × slot at the AP, backoff 0–15 slots.
fn backoff_slots(cfg: CellConfig, slot_us: u64) -> Vec<u64> {
    let mut cell = Cell::new(cfg, 11).expect("valid config");
    // Four packets queued to station 1, one more each time one is delivered.
    let mut records: Vec<AirtimeRecord> = Vec::new();
    let mut id = 0;
    let mut offer = |cell: &mut Cell, at: Nanos| {
        cell.handle_packet(at, Packet::new(id, NodeId::AP, NodeId(1), 1500));
        id += 1;
    };
    for _ in 0..4 {
        offer(&mut cell, Nanos::ZERO);
    }
    let until = Nanos::from_ms(200);
    while let Some(t) = cell.poll_timeout().filter(|&t| t <= until) {
        cell.handle_timeout(t);
        let mut delivered = 0;
        while let Some(o) = cell.poll_output() {
            match o {
                Output::Airtime(r) => records.push(r),
                Output::Delivered { .. } => delivered += 1,
                Output::Dropped { .. } => panic!("no drops on an error-free link"),
            }
        }
        for _ in 0..delivered {
            offer(&mut cell, t);
        }
    }
    assert!(records.len() > 100, "{} exchanges", records.len());
    let aifs_us = 10 + 3 * slot_us;
    records
        .windows(2)
        .map(|w| {
            let end = w[0].start + w[0].airtime;
            let gap_us = (w[1].start - end).as_ns() / 1000;
            assert!(gap_us >= aifs_us, "gap {gap_us} µs < AIFS {aifs_us}");
            assert_eq!((gap_us - aifs_us) % slot_us, 0, "gap {gap_us} µs");
            (gap_us - aifs_us) / slot_us
        })
        .collect()
}

#[test]
fn long_slot_while_an_802_11b_station_is_present() {
    for protection in [Protection::CtsToSelf, Protection::Off] {
        let cfg = cell_config(
            Band::Ghz2_4,
            vec![sta(ht20_mcs7()), sta(dsss(11_000))],
            protection,
        );
        let slots = backoff_slots(cfg, 20);
        // The counter is drawn from 0–15 (CWmin 15) and every value shows up.
        assert!(slots.iter().all(|&k| k <= 15), "{slots:?}");
        for k in 0..=15 {
            assert!(slots.contains(&k), "backoff {k} never drawn in {slots:?}");
        }
    }
    // The same cell without the 802.11b station keeps the short slot.
    let cfg = cell_config(
        Band::Ghz2_4,
        vec![sta(ht20_mcs7()), sta(ofdm(6))],
        Protection::CtsToSelf,
    );
    let slots = backoff_slots(cfg, 9);
    assert!(slots.iter().all(|&k| k <= 15), "{slots:?}");
    assert!(slots.contains(&15) && slots.contains(&1));
}

/// Beacons go at the lowest basic rate: 1 Mbit/s DSSS when an 802.11b station is in the
/// cell, 6 Mbit/s ERP-OFDM otherwise.
#[test]
fn beacons_at_1_mbit_with_an_802_11b_station() {
    let beacon_airtime = |stations: Vec<StationConfig>| {
        let mut cfg = cell_config(Band::Ghz2_4, stations, Protection::CtsToSelf);
        cfg.beacons = true;
        let mut cell = Cell::new(cfg, 1).expect("valid");
        // 9 beacons (TBTTs at 102.4 ms, …, 921.6 ms) and no data.
        let until = Nanos::from_ms(1000);
        while let Some(t) = cell.poll_timeout().filter(|&t| t <= until) {
            cell.handle_timeout(t);
            while cell.poll_output().is_some() {}
        }
        cell.beacon_airtime_ns() / 1000
    };
    let bytes = u64::from(BEACON_BYTES);
    assert_eq!(
        beacon_airtime(vec![sta(ht20_mcs7()), sta(dsss(2000))]),
        9 * dsss_us(bytes, 1000)
    );
    assert_eq!(
        beacon_airtime(vec![sta(ht20_mcs7()), sta(ofdm(54))]),
        9 * erp_us(bytes, 6)
    );
}

/// A-MPDUs only on HT links: saturated downlink to an HT, an 802.11g and an 802.11b
/// station with aggregation on.
#[test]
fn legacy_stations_never_aggregate() {
    let mut cfg = cell_config(
        Band::Ghz2_4,
        vec![sta(ht20_mcs7()), sta(ofdm(54)), sta(dsss(11_000))],
        Protection::CtsToSelf,
    );
    cfg.aggregation = true;
    let mut cell = Cell::new(cfg, 5).expect("valid");
    let mut id = 0u64;
    for s in 1..=3u16 {
        for _ in 0..100 {
            cell.handle_packet(Nanos::ZERO, Packet::new(id, NodeId::AP, NodeId(s), 1500));
            id += 1;
        }
    }
    let mut max_mpdus = [0u16; 4];
    let mut delivered = [0u32; 4];
    while let Some(t) = cell.poll_timeout() {
        cell.handle_timeout(t);
        while let Some(o) = cell.poll_output() {
            match o {
                Output::Airtime(r) => {
                    let s = r.station.0 as usize;
                    max_mpdus[s] = max_mpdus[s].max(r.mpdus);
                }
                Output::Delivered { packet, .. } => delivered[packet.dst.0 as usize] += 1,
                Output::Dropped { .. } => {}
            }
        }
    }
    assert_eq!(delivered[1..], [100, 100, 100]);
    assert!(max_mpdus[1] > 1, "the HT station aggregates: {max_mpdus:?}");
    assert_eq!(max_mpdus[2..], [1, 1], "legacy stations never aggregate");
}

/// Bianchi's saturation model for n 802.11g (54 Mbit/s) stations uploading in a 2.4 GHz
/// 802.11n cell that also holds an idle 802.11b station: every exchange pays the
/// CTS-to-self and the slot is 20 µs. EDCA with AIFSN 2, CWmin 15 (Bianchi's original
/// model, as in bianchi_validation.rs).
///
/// With one station there is no contention and the model is exact. With more, the
/// simulation must lie between the model's two collision-time conventions (EIFS and
/// DIFS after a collision), ±1.5 %. It sits well above the EIFS one here, unlike in
/// bianchi_validation.rs: after a collision the bystanders wait EIFS, whose ACK at
/// 1 Mbit/s is 314 µs beyond SIFS, while the colliders wait only their ACK timeout
/// (SIFS + slot + 25 µs = 55 µs), so the colliders count 13 slots alone before anyone
/// else may transmit, and collide less often than the model assumes.
#[test]
fn bianchi_with_cts_to_self_and_the_long_slot() {
    use bianchi::{Model, PhyKind, PhyParams, Timing};
    let phy = PhyParams {
        kind: PhyKind::Ofdm5Ghz, // unused: the timing below is given by hand
        slot_us: 20.0,
        sifs_us: 10.0,
        difs_us: 50.0,
        cw_min: 15,
        cw_max: 1023,
        data_rate_half_mbps: 108,
        control_rate_half_mbps: 48,
        lowest_basic_rate_half_mbps: 2,
    };
    let cts = dsss_us(14, 1000) as f64; // 304
    let data = erp_us(MPDU_BYTES, 54) as f64; // 258
    let ack = erp_us(14, 24) as f64; // 34
    let eifs = 10.0 + dsss_us(14, 1000) as f64 + 50.0; // 364
                                                       // Success: CTS-to-self, SIFS, DATA, SIFS, ACK, DIFS. Collision: the CTS-to-self
                                                       // draws no response, so the colliders send their data too; then EIFS or DIFS.
    let ts = cts + 10.0 + data + 10.0 + ack + 50.0;
    let tc = |after: f64| cts + 10.0 + data + after;
    let mut failures = Vec::new();
    for n in [1u32, 3, 10, 20] {
        let mut stations = vec![sta(ofdm(54)); n as usize];
        stations.push(sta(dsss(1000)));
        let mut cell = CellConfig::new(Standard::N, Band::Ghz2_4, stations);
        cell.edca_sta = [EdcaParams {
            aifsn: 2,
            cw_min: 15,
            cw_max: 1023,
            txop_limit_us: 0,
        }; 4];
        let flows = (1..=n as u16)
            .map(|i| {
                Flow::Saturated(Saturated {
                    src: NodeId(i),
                    dst: NodeId::AP,
                    len_bytes: MSDU_BYTES as u32,
                    tid: 0,
                    depth: 4,
                })
            })
            .collect();
        let r = Simulation::new(SimConfig {
            cell,
            flows,
            duration: Nanos::from_secs(20),
            seed: 100 + n as u64,
            wired: Default::default(),
            host_bus: Vec::new(),
            remote_ends: Vec::new(),
            tcp_hosts: Default::default(),
        })
        .expect("valid")
        .run();
        let sim = r.total_throughput_bps / 1e6;
        let m = Model::new(phy, MSDU_BYTES as u32, n).with_header(26);
        let (tau, _) = m.tau_p();
        let with_eifs = m.throughput_mbps_given(
            tau,
            Timing {
                ts_us: ts,
                tc_us: tc(eifs),
            },
        );
        let with_difs = m.throughput_mbps_given(
            tau,
            Timing {
                ts_us: ts,
                tc_us: tc(50.0),
            },
        );
        println!(
            "n {n:2}: sim {sim:7.3} Mbit/s, model {with_eifs:7.3} (EIFS) {with_difs:7.3} (DIFS)"
        );
        let in_band = sim >= with_eifs * 0.985 && sim <= with_difs * 1.015;
        let exact = n > 1 || (sim / with_eifs - 1.0).abs() < 0.005;
        if !in_band || !exact {
            failures.push(format!(
                "n={n}: sim {sim:.3} outside [{:.3}, {:.3}]",
                with_eifs * 0.985,
                with_difs * 1.015
            ));
        }
    }
    // One station: no contention, T_s exact: 1500 B every 666 µs + 7.5 slots.
    assert!((ts - 666.0).abs() < 1e-9);
    assert!(failures.is_empty(), "{failures:?}");
}
