//! The physical layer: rates and PPDU durations, timing constants, the channel's error
//! model, and a channel that changes (path loss, mobility, fading, SNR traces).
//!
//! Values follow `docs/reference/mac80211-tx-path.md` §11 and IEEE 802.11-2016 clauses 16
//! (DSSS), 17 (OFDM), 18 (ERP), 19 (HT) and 21 (VHT), and IEEE 802.11ax-2021 clause 27
//! (HE, in `he.rs`).

pub mod channel;
pub mod fading;
pub mod he;
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
    /// 802.11ax HE (2.4 or 5 GHz; IEEE 802.11ax-2021 clause 27). Its BSS also carries
    /// HT and VHT (5 GHz) and legacy OFDM rates.
    Ax,
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
            Standard::Ax => "ax",
        }
    }

    /// Whether a BSS of this standard can operate in `band` (b/g: 2.4 GHz; a/ac: 5 GHz;
    /// n and ax: both).
    pub fn operates_in(self, band: Band) -> bool {
        match self {
            Standard::B | Standard::G => band == Band::Ghz2_4,
            Standard::A | Standard::Ac => band == Band::Ghz5,
            Standard::N | Standard::Ax => true,
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

/// Channel bandwidth of HT/VHT/HE transmissions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ChannelWidth {
    /// 20 MHz (HT20, VHT20): 52 data subcarriers.
    #[serde(rename = "20")]
    Mhz20,
    /// 40 MHz (HT40, VHT40): 108 data subcarriers.
    #[serde(rename = "40")]
    Mhz40,
    /// 80 MHz (VHT80: 234 data subcarriers; HE80: RU-996, 980).
    #[serde(rename = "80")]
    Mhz80,
    /// 160 MHz (HE160 only in txop: RU-2×996, 1960 data subcarriers).
    #[serde(rename = "160")]
    Mhz160,
}

impl ChannelWidth {
    /// The width in MHz: 20, 40, 80 or 160.
    pub fn mhz(self) -> u32 {
        match self {
            ChannelWidth::Mhz20 => 20,
            ChannelWidth::Mhz40 => 40,
            ChannelWidth::Mhz80 => 80,
            ChannelWidth::Mhz160 => 160,
        }
    }
}

/// Guard interval of HE data symbols (and of the HE-LTF symbols): 0.8, 1.6 or 3.2 µs
/// (IEEE 802.11ax-2021 27.3.8, Table 27-12). A data symbol lasts 12.8 µs plus the GI.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum HeGuardInterval {
    /// 0.8 µs: 13.6 µs symbols.
    #[serde(rename = "0.8")]
    Us0_8,
    /// 1.6 µs: 14.4 µs symbols.
    #[serde(rename = "1.6")]
    Us1_6,
    /// 3.2 µs: 16 µs symbols.
    #[serde(rename = "3.2")]
    Us3_2,
}

/// Size of the HE-LTF symbols: 1x (3.2 µs), 2x (6.4 µs) or 4x (12.8 µs), each plus the
/// guard interval (IEEE 802.11ax-2021 27.3.11.10). The standard pairs them with the GI
/// in the HE-SIG-A "GI+LTF Size" field (Table 27-20): 1x/0.8, 2x/0.8, 2x/1.6, 4x/3.2
/// (4x/0.8 only with DCM and STBC, which txop does not model).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum HeLtf {
    /// 1x HE-LTF: 3.2 µs + GI.
    #[serde(rename = "1x")]
    X1,
    /// 2x HE-LTF: 6.4 µs + GI.
    #[serde(rename = "2x")]
    X2,
    /// 4x HE-LTF: 12.8 µs + GI.
    #[serde(rename = "4x")]
    X4,
}

/// The HE PPDU format of a single-user transmission (IEEE 802.11ax-2021 27.3.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum HeFormat {
    /// HE SU PPDU: HE-SIG-A of 2 symbols (8 µs).
    #[serde(rename = "su")]
    Su,
    /// HE extended-range SU PPDU: HE-SIG-A of 4 symbols (16 µs, repeated); 20 MHz,
    /// one stream, HE-MCS 0–2 (27.3.4, 27.3.11.7).
    #[serde(rename = "er-su")]
    ErSu,
}

/// The receiver's nominal packet padding, from its HE capabilities (IEEE 802.11ax-2021
/// 9.4.2.248.3, 27.3.13): the packet extension (PE) field the transmitter appends so
/// that the receiver has time to finish decoding. The PE actually sent depends on how
/// full the last symbol is (the pre-FEC padding factor, [`he`] module).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum NominalPacketPadding {
    /// 0 µs: no packet extension.
    #[serde(rename = "0")]
    Us0,
    /// 8 µs nominal: a PE of 0, 0, 4 or 8 µs.
    #[serde(rename = "8")]
    Us8,
    /// 16 µs nominal: a PE of 4, 8, 12 or 16 µs.
    #[serde(rename = "16")]
    Us16,
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
    /// HE SU or ER SU PPDU (IEEE 802.11ax-2021 clause 27), HE-MCS 0–11 with 1–4
    /// streams at 20/40/80/160 MHz over the whole channel (RU-242/484/996/2×996).
    He {
        /// The HE-MCS index, 0–11: modulation and coding, the same for every stream.
        mcs: u8,
        /// Spatial streams, 1–4.
        nss: u8,
        /// 20, 40, 80 or 160 MHz.
        width: ChannelWidth,
        /// The guard interval of the data and HE-LTF symbols.
        gi: HeGuardInterval,
        /// The HE-LTF size (paired with `gi` as the standard allows).
        ltf: HeLtf,
        /// SU or extended-range SU.
        format: HeFormat,
        /// The receiver's nominal packet padding.
        pe: NominalPacketPadding,
    },
}
