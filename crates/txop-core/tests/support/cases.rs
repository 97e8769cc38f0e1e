//! What both the cell's tests (txop-core) and the simulator's tests of the same
//! behaviour (txop-sim) start from: the PPDU arithmetic's prediction for one saturated
//! link, and a busy cell. txop-sim includes this file by path.

#![allow(dead_code)]

use super::cell_driver::{down, ht20, sta, up, Flow, MSDU};
use super::ppdu::{self, Binding, SIFS_US};
use txop_core::cell::CellConfig;
use txop_core::phy::channel::ErrorModel;
use txop_core::phy::{Band, Standard};

/// What the PPDU arithmetic predicts for one saturated link with no competitor.
pub(crate) struct Prediction {
    pub(crate) subframes: u64,
    pub(crate) ppdu_us: u64,
    /// Data PPDU + SIFS + BlockAck: the airtime of one exchange.
    pub(crate) exchange_us: u64,
    pub(crate) contention_us: f64,
    pub(crate) bps: f64,
}

pub(crate) fn predict(
    subframes_limit: u64,
    bytes_limit: u64,
    duration_limit_us: u64,
    ppdu_us: impl Fn(u64) -> u64,
    expect_binding: Binding,
) -> Prediction {
    let mpdu = ppdu::mpdu_bytes(MSDU as u64);
    assert_eq!(mpdu, 1538);
    let (n, binding) = ppdu::max_subframes(
        mpdu,
        subframes_limit,
        bytes_limit,
        duration_limit_us,
        &ppdu_us,
    );
    assert_eq!(binding, expect_binding, "which aggregation limit binds");
    let psdu = ppdu::ampdu_bytes(n, mpdu);
    assert!(psdu <= bytes_limit);
    let data = ppdu_us(psdu);
    assert!(data <= duration_limit_us);
    // BlockAck at 24 Mbit/s: the highest basic rate (6/12/24) not above the non-HT
    // reference rate of MCS 7 / MCS 9 (54 Mbit/s). 20 + 4·ceil(278/96) = 32 µs.
    let ba = ppdu::ofdm_us(24, ppdu::BLOCK_ACK_BYTES);
    assert_eq!(ba, 32);
    let exchange = data + SIFS_US + ba;
    // BE of both the AP and a station: AIFSN 3, CWmin 15. AIFS = 16 + 3·9 = 43 µs, mean
    // backoff 7.5 slots.
    let contention = ppdu::lone_contention_us(3, 15);
    assert_eq!(contention, 43.0 + 67.5);
    let bits = n as f64 * MSDU as f64 * 8.0;
    Prediction {
        subframes: n,
        ppdu_us: data,
        exchange_us: exchange,
        contention_us: contention,
        bps: bits / ((contention + exchange as f64) * 1e-6),
    }
}

/// HT20 MCS7 LGI 1 SS: N_DBPS 260. A 1538-byte MPDU makes a 1542-byte subframe (1544
/// padded). Twenty subframes are 19·1544 + 1542 = 30 878 bytes: ceil((16 + 8·30 878 +
/// 6)/260) = 951 symbols, 36 + 3804 = 3840 µs. Twenty-one would be 32 422 bytes, 998
/// symbols, 4028 µs > 4 ms: the 4 ms duration limit binds (not 64 subframes, not 65 535 B).
/// Cycle 110.5 + 3840 + 16 + 32 = 3998.5 µs for 240 000 bits: 60.02 Mbit/s.
pub(crate) fn ht20_mcs7_prediction() -> Prediction {
    let p = predict(
        64,
        65_535,
        4_000,
        |b| ppdu::ht_us(260, 1, false, b),
        Binding::Duration,
    );
    assert_eq!((p.subframes, p.ppdu_us), (20, 3840));
    p
}

/// VHT80 MCS9 2 SS SGI (866.7 Mbit/s): N_DBPS 2·1560 = 3120, N_ES 2 (one BCC encoder
/// per 600 Mbit/s of SGI rate). 64 subframes are 63·1544 + 1542 = 98 814 bytes:
/// N_SYM = ceil((16 + 790 512 + 12)/3120) = 254, data 4·ceil(3.6·254/4) = 916 µs, PPDU
/// 44 + 916 = 960 µs. That is far inside 4 ms (about 270 subframes would fit) and
/// 98 814 B is far below 1 048 575 B, so the 64-subframe limit (the block-ack window)
/// binds. Cycle 110.5 + 960 + 16 + 32 = 1118.5 µs for 768 000 bits: 686.6 Mbit/s.
pub(crate) fn vht80_mcs9_2ss_sgi_prediction() -> Prediction {
    let p = predict(
        64,
        1_048_575,
        4_000,
        |b| ppdu::vht_us(3120, 2, 2, true, b),
        Binding::Subframes,
    );
    assert_eq!((p.subframes, p.ppdu_us), (64, 960));
    // How far the duration limit alone would go (for the comment above).
    let (n_dur, _) = ppdu::max_subframes(1538, 10_000, u64::MAX, 4_000, |b| {
        ppdu::vht_us(3120, 2, 2, true, b)
    });
    assert!(n_dur > 250, "duration alone would allow {n_dur} subframes");
    p
}

/// Twelve stations at mixed rates and losses, saturated both ways: the busy cell the
/// airtime tests share (with or without airtime records).
pub(crate) fn busy_cell(records: bool) -> (CellConfig, Vec<Flow>) {
    // Twelve stations at mixed rates, saturated uplink with A-MPDU, two downlink flows,
    // and VO downlink (TXOP bursts, no aggregation): plenty of collisions.
    let stations = (0..12)
        .map(|i| {
            let err = if i % 3 == 0 {
                ErrorModel::FixedLoss { probability: 0.1 }
            } else {
                ErrorModel::None
            };
            sta(ht20([7, 5, 2, 0][i % 4]), err)
        })
        .collect();
    let mut cfg = CellConfig::new(Standard::N, Band::Ghz5, stations);
    cfg.airtime_records = records;
    let mut flows: Vec<Flow> = (1..=12).map(|s| up(s, 0, 70)).collect();
    flows.push(down(1, 0, 70));
    flows.push(down(6, 0, 70));
    flows.push(down(1, 6, 4));
    (cfg, flows)
}
