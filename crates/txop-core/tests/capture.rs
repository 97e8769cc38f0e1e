//! The cell's record of the air (`Cell::capture_air`, issue 17) against the cell's own
//! counters and against 802.11's timing: every data PPDU and MPDU is recorded once,
//! Retry bits and given-up MPDUs match the counters, responses follow their data PPDU
//! after SIFS, and turning capture on changes nothing the cell reports. On both media:
//! one builder makes every record (`Air::captured_ppdu`, `air/capture.rs`), whichever medium heard it.

mod support;

use support::cell_driver::{down, ht20, on, sta, up, Driver, Medium, BOTH_MEDIA};
use support::ppdu::SIFS_US;
use txop_core::capture::{CapturedFrame, CapturedPpdu};
use txop_core::cell::CellConfig;
use txop_core::phy::channel::ErrorModel;
use txop_core::phy::{Band, Standard};
use txop_core::{Nanos, NodeId};

/// Two HT20 MCS 7 stations with about 20 % MPDU loss, saturated both ways, for `secs` on
/// `medium`; with capture on, every record drained each millisecond.
fn lossy_run(medium: Medium, capture: bool, secs: u64) -> (Driver, Vec<CapturedPpdu>) {
    // 21.8 dB: about 22 % of 1538-byte MPDUs lost at MCS 7 (`ErrorModel::per`).
    let lossy = || sta(ht20(7), ErrorModel::Snr { snr_db: 21.8 });
    let cfg = on(
        medium,
        CellConfig::new(Standard::N, Band::Ghz5, vec![lossy(), lossy()]),
    );
    let flows = [down(1, 0, 64), up(1, 0, 64), down(2, 5, 64), up(2, 0, 32)];
    let mut d = Driver::new(cfg, 11, &flows);
    if capture {
        d.cell.capture_air();
    }
    let mut records = Vec::new();
    for ms in 1..=secs * 1000 {
        d.run_until(Nanos::from_ms(ms));
        while let Some(r) = d.cell.poll_capture() {
            records.push(r);
        }
    }
    // Run out what is queued, so that every recorded PPDU is settled and counted.
    d.drain();
    while let Some(r) = d.cell.poll_capture() {
        records.push(r);
    }
    (d, records)
}

#[test]
fn capture_changes_nothing_the_cell_reports() {
    for medium in BOTH_MEDIA {
        let (off, none) = lossy_run(medium, false, 1);
        let (with, records) = lossy_run(medium, true, 1);
        assert!(none.is_empty());
        assert!(records.len() > 300, "{medium:?}: {} records", records.len());
        assert_eq!(off.log, with.log, "{medium:?}");
        assert_eq!(with.cell.capture_overflowed(), 0);
    }
}

#[test]
fn every_data_ppdu_and_retry_is_recorded_once() {
    for medium in BOTH_MEDIA {
        data_ppdus_and_retries_are_recorded_once(medium);
    }
}

/// [`every_data_ppdu_and_retry_is_recorded_once`] on `medium`.
fn data_ppdus_and_retries_are_recorded_once(medium: Medium) {
    let (d, records) = lossy_run(medium, true, 2);
    let stats = d.cell.stats();
    let mut given_up_total = 0;
    for station in 1..=2u16 {
        for uplink in [false, true] {
            let s = if uplink {
                &stats[station as usize].up
            } else {
                &stats[station as usize].down
            };
            let sender = if uplink { NodeId(station) } else { NodeId::AP };
            let data: Vec<&CapturedPpdu> = records
                .iter()
                .filter(|r| {
                    r.transmitter == sender && matches!(r.frame, CapturedFrame::Data { .. })
                })
                .filter(|r| r.receiver == Some(if uplink { NodeId::AP } else { NodeId(station) }))
                .collect();
            let mpdus = data.iter().map(|r| r.mpdus.len() as u64).sum::<u64>();
            let retries = data
                .iter()
                .flat_map(|r| &r.mpdus)
                .filter(|m| m.retry)
                .count() as u64;
            let given_up = data
                .iter()
                .flat_map(|r| &r.mpdus)
                .filter(|m| m.given_up)
                .count() as u64;
            let tag = format!("{medium:?}: station {station} uplink {uplink}");
            assert!(s.ppdus > 30, "{tag}: {} PPDUs", s.ppdus);
            assert_eq!(data.len() as u64, s.ppdus, "{tag}: PPDUs");
            assert_eq!(mpdus, s.mpdus, "{tag}: MPDUs");
            assert_eq!(retries, s.mpdu_retries, "{tag}: retries");
            assert!(s.mpdu_retries > 0, "{tag}: no retry to compare");
            given_up_total += given_up;
            assert_eq!(given_up, s.dropped_retry_limit, "{tag}: given up");
        }
    }
    assert!(
        given_up_total > 0,
        "{medium:?}: no MPDU given up to compare"
    );
}

#[test]
fn responses_follow_their_data_after_sifs_and_records_are_in_time_order() {
    let (_, records) = lossy_run(Medium::Shared, true, 1);
    let sifs = Nanos::from_us(SIFS_US);
    let mut block_acks = 0;
    for (i, r) in records.iter().enumerate() {
        assert!(r.start < r.end);
        if i > 0 {
            assert!(records[i - 1].end <= r.end, "record {i} out of order");
        }
        let (ssn, bitmap) = match r.frame {
            CapturedFrame::BlockAck { ssn, bitmap, .. } => (Some(ssn), bitmap),
            CapturedFrame::Ack => (None, 0),
            _ => continue,
        };
        let data = &records[i - 1];
        assert!(matches!(data.frame, CapturedFrame::Data { .. }));
        assert_eq!(Some(data.transmitter), r.receiver);
        assert_eq!(r.start - data.end, sifs, "record {i}");
        if let Some(ssn) = ssn {
            block_acks += 1;
            // The bitmap holds exactly the MPDUs received.
            for m in &data.mpdus {
                let bit = (m.seq.wrapping_sub(ssn) & 0xfff) as u32;
                assert!(bit < 64);
                assert_eq!(bitmap >> bit & 1 == 1, m.received);
            }
        }
    }
    assert!(block_acks > 50);
}
