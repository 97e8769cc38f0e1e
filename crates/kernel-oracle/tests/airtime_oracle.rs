//! Differential test: the kernel's own `net/mac80211/airtime.c` (6.12, built by this crate
//! from the installed Linux source) and txop's AQL estimates
//! (`txop_core::mac80211::aql`, reference §6.5) for every rate txop's PHY has: DSSS/CCK
//! (long and short preamble), OFDM in both bands, HT MCS 0–15, VHT MCS 0–9 with 1–2
//! streams at every width and guard interval, and HE-MCS 0–11 with 1–4 streams at 20,
//! 40, 80 and 160 MHz and every HE guard interval (reported as a driver's `rate_info`,
//! the only form of an HE rate; reference §15.2).
//!
//! For each rate it compares the expected airtime of a packet to a station whose last
//! reported tx rate it is (`ieee80211_calc_expected_tx_airtime`, aggregated and not,
//! against [`expected_tx_airtime_us`] in its current form, [`AqlEstimator::AggShift`]),
//! the received airtime (`ieee80211_calc_rx_airtime`), and the rate table
//! (`ieee80211_get_rate_duration`, against [`rate_duration_1024`]) at every length from
//! 0 to 4000 bytes and at 2000 random lengths up to 2^24; and the 10-bit store of the
//! estimate (`ieee80211_info_set_tx_time_est`) for every value up to 70 000 and 100 000
//! random ones. No `WARN_ON_ONCE` may fire in the kernel code.

use kernel_oracle::airtime::{KernelAirtime, ReportedRate, AIRTIME_SOURCE};
use txop_core::mac80211::aql::{
    expected_tx_airtime_us, legacy_duration_us, rate_duration_1024, stored_tx_time_est_us,
    AqlEstimator,
};
use txop_core::phy::{
    ChannelWidth, DsssPreamble, GuardInterval, HeFormat, HeGuardInterval, HeLtf,
    NominalPacketPadding, TxVector,
};

/// Every rate txop's PHY has, with the band it is used in and the rate as a driver
/// reports it to mac80211 (legacy rates by their index in the band's bitrates).
fn rates() -> Vec<(TxVector, ReportedRate)> {
    let base = ReportedRate {
        band: 0,
        encoding: 0,
        idx: 0,
        nss: 1,
        width_mhz: 20,
        sgi: 0,
        short_preamble: 0,
        he_gi: 0,
    };
    let mut out = Vec::new();
    for (i, kbps) in [1000u32, 2000, 5500, 11000].into_iter().enumerate() {
        for preamble in [DsssPreamble::Long, DsssPreamble::Short] {
            // 1 Mbit/s has only the long preamble.
            if kbps == 1000 && preamble == DsssPreamble::Short {
                continue;
            }
            let txv = TxVector::Dsss {
                rate_kbps: kbps,
                preamble,
            };
            let short_preamble = u32::from(preamble == DsssPreamble::Short);
            out.push((
                txv,
                ReportedRate {
                    idx: i as u32,
                    short_preamble,
                    ..base
                },
            ));
        }
    }
    for (i, mbps) in [6u32, 9, 12, 18, 24, 36, 48, 54].into_iter().enumerate() {
        let txv = TxVector::Ofdm { rate_mbps: mbps };
        // 2.4 GHz: after the 4 CCK rates; 5 GHz: the first 8.
        out.push((
            txv,
            ReportedRate {
                idx: 4 + i as u32,
                ..base
            },
        ));
        out.push((
            txv,
            ReportedRate {
                band: 1,
                idx: i as u32,
                ..base
            },
        ));
    }
    let widths = [
        (ChannelWidth::Mhz20, 20),
        (ChannelWidth::Mhz40, 40),
        (ChannelWidth::Mhz80, 80),
    ];
    for gi in [GuardInterval::Long, GuardInterval::Short] {
        let sgi = u32::from(gi == GuardInterval::Short);
        for &(width, width_mhz) in &widths[..2] {
            for mcs in 0..16u8 {
                out.push((
                    TxVector::Ht { mcs, width, gi },
                    ReportedRate {
                        band: 1,
                        encoding: 1,
                        idx: u32::from(mcs),
                        width_mhz,
                        sgi,
                        ..base
                    },
                ));
            }
        }
        for &(width, width_mhz) in &widths {
            for nss in 1..=2u8 {
                for mcs in 0..10u8 {
                    out.push((
                        TxVector::Vht {
                            mcs,
                            nss,
                            width,
                            gi,
                        },
                        ReportedRate {
                            band: 1,
                            encoding: 2,
                            idx: u32::from(mcs),
                            nss: u32::from(nss),
                            width_mhz,
                            sgi,
                            ..base
                        },
                    ));
                }
            }
        }
    }
    // HE: the estimate does not depend on the HE-LTF, format or packet extension,
    // which the rate_info does not carry; one of each GI's pairings stands for them.
    let he_gis = [
        (HeGuardInterval::Us0_8, HeLtf::X2, 0),
        (HeGuardInterval::Us1_6, HeLtf::X2, 1),
        (HeGuardInterval::Us3_2, HeLtf::X4, 2),
    ];
    for (width, width_mhz) in widths.into_iter().chain([(ChannelWidth::Mhz160, 160)]) {
        for (gi, ltf, he_gi) in he_gis {
            for nss in 1..=4u8 {
                for mcs in 0..12u8 {
                    out.push((
                        TxVector::He {
                            mcs,
                            nss,
                            width,
                            gi,
                            ltf,
                            format: HeFormat::Su,
                            pe: NominalPacketPadding::Us0,
                        },
                        ReportedRate {
                            band: 1,
                            encoding: 3,
                            idx: u32::from(mcs),
                            nss: u32::from(nss),
                            width_mhz,
                            he_gi,
                            ..base
                        },
                    ));
                }
            }
        }
    }
    out
}

/// A splitmix64 stream for the random lengths and values.
fn draws(mut state: u64) -> impl FnMut() -> u64 {
    move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

#[test]
fn txop_airtime_estimates_match_the_kernels_for_every_rate() {
    let kernel = KernelAirtime::new().unwrap_or_else(|e| panic!("{e}"));
    let mut next = draws(28);
    let mut lengths: Vec<u32> = (0..=4000).collect();
    lengths.extend((0..2000).map(|_| (next() % (1 << 24)) as u32));
    let rates = rates();
    let mut compared = 0u64;
    for (txv, rr) in &rates {
        let what = format!("{txv:?} (reported as {rr:?})");
        let table = rate_duration_1024(txv).map(|d| (d.per_1024_bytes, d.overhead_us));
        let ktable = kernel.rate_duration(rr);
        assert_eq!(
            table.unwrap_or((0, 0)),
            ktable,
            "{what}: ieee80211_get_rate_duration (1024-byte duration, overhead)\n({AIRTIME_SOURCE})"
        );
        for &len in &lengths {
            for ampdu in [false, true] {
                let t = expected_tx_airtime_us(len, Some(txv), ampdu, AqlEstimator::AggShift);
                let k = kernel.expected_tx_airtime_us(rr, len as i32, ampdu);
                assert_eq!(
                    t, k,
                    "{what}, {len} bytes, ampdu {ampdu}: ieee80211_calc_expected_tx_airtime\n\
                     ({AIRTIME_SOURCE})"
                );
            }
            // The received airtime of `len` bytes (the expected airtime without
            // aggregation is that of skb->len + 38 bytes).
            let t = match txv {
                TxVector::Dsss { .. } | TxVector::Ofdm { .. } => legacy_duration_us(txv, len),
                _ => len
                    .checked_sub(38)
                    .map(|l| expected_tx_airtime_us(l, Some(txv), false, AqlEstimator::AggShift)),
            };
            if let Some(t) = t {
                let k = kernel.rx_airtime_us(rr, len as i32);
                assert_eq!(
                    t, k,
                    "{what}, {len} bytes: ieee80211_calc_rx_airtime\n({AIRTIME_SOURCE})"
                );
            }
            compared += 3;
        }
    }
    let mut values: Vec<u32> = (0..=70_000).collect();
    values.extend((0..100_000).map(|_| next() as u32));
    for est in values {
        assert_eq!(
            stored_tx_time_est_us(est),
            kernel.stored_tx_time_est_us(est),
            "ieee80211_info_set_tx_time_est({est})\n({AIRTIME_SOURCE})"
        );
        compared += 1;
    }
    assert_eq!(kernel.warnings(), 0, "WARN_ON_ONCE fired in airtime.c");
    assert_eq!(
        rates.len(),
        7 + 16 + 64 + 120 + 4 * 3 * 4 * 12,
        "every rate of txop's PHY"
    );
    eprintln!(
        "airtime oracle: {} rates, {compared} values compared ({AIRTIME_SOURCE})",
        rates.len()
    );
}
