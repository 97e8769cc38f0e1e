//! The physical layer: rates and PPDU durations, timing constants, and the channel's
//! error model.
//!
//! Values follow `docs/reference/mac80211-tx-path.md` §11 and IEEE 802.11-2016 clauses 16
//! (DSSS), 17 (OFDM), 18 (ERP), 19 (HT) and 21 (VHT).

pub mod channel;
pub mod rates;
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
    Long,
    Short,
}

/// DSSS PLCP preamble: 192 µs (long) or 96 µs (short; not allowed at 1 Mbit/s).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DsssPreamble {
    Long,
    Short,
}

/// Channel bandwidth of HT/VHT transmissions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ChannelWidth {
    #[serde(rename = "20")]
    Mhz20,
    #[serde(rename = "40")]
    Mhz40,
    #[serde(rename = "80")]
    Mhz80,
}

impl ChannelWidth {
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
        rate_kbps: u32,
        preamble: DsssPreamble,
    },
    /// Legacy OFDM (802.11a/g): 6, 9, 12, 18, 24, 36, 48 or 54 Mbit/s.
    Ofdm { rate_mbps: u32 },
    /// HT mixed format, MCS 0–15 (MCS 8–15 are two spatial streams).
    Ht {
        mcs: u8,
        width: ChannelWidth,
        gi: GuardInterval,
    },
    /// VHT, MCS 0–9 with 1 or 2 spatial streams.
    Vht {
        mcs: u8,
        nss: u8,
        width: ChannelWidth,
        gi: GuardInterval,
    },
}
