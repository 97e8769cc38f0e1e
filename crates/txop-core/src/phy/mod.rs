//! The physical layer: rates and PPDU durations, timing constants, the channel's error
//! model, and a channel that changes (path loss, mobility, fading, SNR traces).
//!
//! Values follow `docs/reference/mac80211-tx-path.md` §11 and IEEE 802.11-2016 clauses 16
//! (DSSS), 17 (OFDM), 18 (ERP), 19 (HT) and 21 (VHT).

pub mod channel;
pub mod fading;
pub mod link_channel;
pub mod mobility;
pub mod path_loss;
pub mod rates;
pub mod snr_trace;
pub mod space;
pub mod timing;

use serde::{Deserialize, Serialize};

/// Frequency band of the BSS.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Band {
    /// 2.4 GHz: OFDM frames carry a 6 µs signal extension, SIFS is 10 µs.
    #[serde(rename = "2.4")]
    Ghz2_4,
    /// 5 GHz: SIFS 16 µs, slot 9 µs.
    #[serde(rename = "5")]
    Ghz5,
}

/// The PHY standard of the BSS: which frame formats and timings are in use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Standard {
    /// 802.11b DSSS/CCK (2.4 GHz only).
    B,
    /// 802.11a OFDM (5 GHz only).
    A,
    /// 802.11g ERP-OFDM (2.4 GHz only).
    G,
    /// 802.11n HT (2.4 or 5 GHz).
    N,
    /// 802.11ac VHT (5 GHz only).
    Ac,
}

impl Standard {
    /// The amendment's letters: "b", "a", "g", "n", "ac".
    pub fn name(self) -> &'static str {
        match self {
            Standard::A => "a",
            Standard::B => "b",
            Standard::G => "g",
            Standard::N => "n",
            Standard::Ac => "ac",
        }
    }

    /// Whether a BSS of this standard can operate in `band` (b/g: 2.4 GHz; a/ac: 5 GHz;
    /// n: both).
    pub fn operates_in(self, band: Band) -> bool {
        match self {
            Standard::B | Standard::G => band == Band::Ghz2_4,
            Standard::A | Standard::Ac => band == Band::Ghz5,
            Standard::N => true,
        }
    }
}

impl Band {
    /// "2.4" or "5".
    pub fn name(self) -> &'static str {
        match self {
            Band::Ghz2_4 => "2.4",
            Band::Ghz5 => "5",
        }
    }
}

/// Guard interval of HT/VHT data symbols: 0.8 µs (long) or 0.4 µs (short).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GuardInterval {
    /// 0.8 µs: 4 µs data symbols.
    Long,
    /// 0.4 µs: 3.6 µs data symbols, about 11 % more rate (§11.2).
    Short,
}

/// DSSS PLCP preamble: 192 µs (long) or 96 µs (short; not allowed at 1 Mbit/s).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DsssPreamble {
    /// 144 µs preamble + 48 µs PLCP header, the PLCP header at 1 Mbit/s.
    Long,
    /// 72 µs preamble + 24 µs PLCP header, the PLCP header at 2 Mbit/s.
    Short,
}

/// Channel bandwidth of HT/VHT transmissions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ChannelWidth {
    /// 20 MHz (HT20, VHT20): 52 data subcarriers.
    #[serde(rename = "20")]
    Mhz20,
    /// 40 MHz (HT40, VHT40): 108 data subcarriers.
    #[serde(rename = "40")]
    Mhz40,
    /// 80 MHz (VHT80 only): 234 data subcarriers.
    #[serde(rename = "80")]
    Mhz80,
}

impl ChannelWidth {
    /// The width in MHz: 20, 40 or 80.
    pub fn mhz(self) -> u32 {
        match self {
            ChannelWidth::Mhz20 => 20,
            ChannelWidth::Mhz40 => 40,
            ChannelWidth::Mhz80 => 80,
        }
    }
}

/// Everything needed to compute how long a PPDU lasts and how likely it is to fail:
/// the format and rate of one transmission.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxVector {
    /// 802.11b: 1, 2 (DSSS) or 5.5, 11 (CCK) Mbit/s, given in kbit/s.
    Dsss {
        /// The data rate in kbit/s: 1000, 2000, 5500 or 11000.
        rate_kbps: u32,
        /// The PLCP preamble (short not at 1 Mbit/s).
        preamble: DsssPreamble,
    },
    /// Legacy OFDM (802.11a/g): 6, 9, 12, 18, 24, 36, 48 or 54 Mbit/s.
    Ofdm {
        /// The data rate in Mbit/s.
        rate_mbps: u32,
    },
    /// HT mixed format, MCS 0–15 (MCS 8–15 are two spatial streams).
    Ht {
        /// The HT MCS index: modulation and coding (`mcs % 8`) and streams
        /// (`mcs / 8 + 1`), §11.3.
        mcs: u8,
        /// 20 or 40 MHz.
        width: ChannelWidth,
        /// The data symbols' guard interval.
        gi: GuardInterval,
    },
    /// VHT, MCS 0–9 with 1 or 2 spatial streams.
    Vht {
        /// The VHT MCS index: modulation and coding, the same for every stream (§11.3).
        mcs: u8,
        /// Spatial streams, 1 or 2.
        nss: u8,
        /// 20, 40 or 80 MHz.
        width: ChannelWidth,
        /// The data symbols' guard interval.
        gi: GuardInterval,
    },
}
