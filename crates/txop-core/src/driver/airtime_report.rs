//! The airtime a driver reports to the scheduler (`ieee80211_sta_register_airtime`,
//! reference §5.1): what the airtime-fairness deficits are charged with.
//!
//! ath9k (`drivers/net/wireless/ath/ath9k`, 4.11 onwards) reports, per transmit
//! status, the data PPDU's own duration at each rate it was tried at
//! (`ath_tx_count_airtime`: `PktDuration` × tries, `PktDuration` being
//! `ath_pkt_duration` for HT rates and `ath9k_hw_computetxtime` for legacy ones, of the
//! whole aggregate's length), and, per received data MPDU, that MPDU's duration as if
//! it were sent alone (`ath_rx_count_airtime`, called for every subframe of an
//! A-MPDU, each with a whole preamble). Neither counts protection frames, SIFS gaps or
//! the response. Other drivers are charged the exchange's busy time, as before.

use crate::phy::{Band, DsssPreamble, GuardInterval, TxVector};

/// `OFDM_PLCP_BITS`: SERVICE (16) and tail (6) bits.
const OFDM_PLCP_BITS: u64 = 22;
/// `L_STF + L_LTF + L_SIG + HT_SIG + HT_STF`, µs (xmit.c); `HT_LTF(n)` adds 4 per stream.
const HT_PREAMBLE_US: u64 = 8 + 8 + 4 + 8 + 4;
/// `OFDM_SIFS_TIME + OFDM_PREAMBLE_TIME`, µs: `ath9k_hw_computetxtime` counts the SIFS
/// in a legacy OFDM frame's time.
const OFDM_SIFS_PREAMBLE_US: u64 = 16 + 20;
/// `CCK_SIFS_TIME`, µs, and `CCK_PREAMBLE_BITS + CCK_PLCP_BITS` (halved for the short
/// preamble), µs at 1 Mbit/s.
const CCK_SIFS_US: u64 = 10;
const CCK_PHY_US: u64 = 144 + 48;

/// ath9k's duration of a frame of `len_bytes` at `txv`, µs: `ath_pkt_duration` for HT
/// (SERVICE and tail bits, symbols of 4 µs or, with the short GI, 3.6 µs rounded up
/// once over the whole data field, then the HT-mixed preamble with 4 µs per stream),
/// `ath9k_hw_computetxtime` for OFDM and DSSS/CCK (each with its SIFS, the CCK
/// payload's microseconds rounded down as the driver's integer division does). ath9k
/// has no VHT or HE; a VHT or HE vector gets its TXTIME (rounded down to a µs).
pub(crate) fn ath9k_frame_us(txv: &TxVector, len_bytes: u32) -> u64 {
    let bits = 8 * u64::from(len_bytes);
    match *txv {
        TxVector::Ht { gi, .. } => {
            let streams = u64::from(txv.nss());
            let symbols = (bits + OFDM_PLCP_BITS).div_ceil(u64::from(txv.ndbps()).max(1));
            let data_us = match gi {
                GuardInterval::Long => 4 * symbols,
                // `SYMBOL_TIME_HALFGI`: (n·18 + 4) / 5, i.e. 3.6 µs × n rounded up.
                GuardInterval::Short => (symbols * 18).div_ceil(5),
            };
            data_us + HT_PREAMBLE_US + 4 * streams
        }
        TxVector::Ofdm { .. } => {
            let symbols = (bits + OFDM_PLCP_BITS).div_ceil(u64::from(txv.ndbps()).max(1));
            OFDM_SIFS_PREAMBLE_US + 4 * symbols
        }
        TxVector::Dsss {
            rate_kbps,
            preamble,
        } => {
            let phy_us = match preamble {
                DsssPreamble::Long => CCK_PHY_US,
                DsssPreamble::Short => CCK_PHY_US / 2,
            };
            CCK_SIFS_US + phy_us + bits * 1000 / u64::from(rate_kbps).max(1)
        }
        TxVector::Vht { .. } | TxVector::He { .. } => {
            txv.ppdu_duration(len_bytes, Band::Ghz5).as_ns() / 1000
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::phy::ChannelWidth;

    fn ht(mcs: u8, width: ChannelWidth, gi: GuardInterval) -> TxVector {
        TxVector::Ht { mcs, width, gi }
    }

    /// Worked by hand from xmit.c's `ath_pkt_duration` and its `bits_per_symbol` table
    /// (MCS 7, 20 MHz: 260 bits per symbol; MCS 15: 2 × 260; MCS 0, 40 MHz: 54).
    #[test]
    fn ht_durations_follow_ath_pkt_duration() {
        let long = GuardInterval::Long;
        // 1538 B at MCS 7: 8·1538 + 22 = 12 326 bits, 48 symbols, 192 µs + 36 µs.
        assert_eq!(ath9k_frame_us(&ht(7, ChannelWidth::Mhz20, long), 1538), 228);
        // Short GI: (48·18 + 4) / 5 = 173 µs + 36 µs.
        let short = GuardInterval::Short;
        assert_eq!(
            ath9k_frame_us(&ht(7, ChannelWidth::Mhz20, short), 1538),
            209
        );
        // Two streams: 520 bits per symbol, 24 symbols, 96 µs + 32 + 8 µs.
        assert_eq!(
            ath9k_frame_us(&ht(15, ChannelWidth::Mhz20, long), 1538),
            136
        );
        // MCS 0 at 40 MHz, 100 B: 822 bits, 16 symbols (54 each), 64 + 36 µs.
        assert_eq!(ath9k_frame_us(&ht(0, ChannelWidth::Mhz40, long), 100), 100);
    }

    /// `ath9k_hw_computetxtime`: OFDM with its SIFS, CCK with its SIFS and the payload's
    /// microseconds rounded down.
    #[test]
    fn legacy_durations_follow_computetxtime() {
        // 54 Mbit/s, 1538 B: 216 bits per symbol, 12 326 bits, 58 symbols; 16 + 20 + 232.
        assert_eq!(ath9k_frame_us(&TxVector::Ofdm { rate_mbps: 54 }, 1538), 268);
        // 11 Mbit/s long preamble, 1538 B: 10 + 192 + 12 304 000 / 11 000 = 1118 (1118.5).
        let cck = TxVector::Dsss {
            rate_kbps: 11_000,
            preamble: DsssPreamble::Long,
        };
        assert_eq!(ath9k_frame_us(&cck, 1538), 1320);
        let short = TxVector::Dsss {
            rate_kbps: 11_000,
            preamble: DsssPreamble::Short,
        };
        assert_eq!(ath9k_frame_us(&short, 1538), 1224);
    }
}
