//! Data rates, PPDU durations (TXTIME) and control-response rates.
//!
//! Every duration is computed in integer microseconds, exactly as the TXTIME equations
//! of IEEE 802.11-2016 give it:
//!
//! * DSSS/HR-DSSS (clauses 15 and 16): PLCP preamble and header, then
//!   `ceil(8 × LENGTH / DATARATE)` µs.
//! * OFDM (17.4.3) and ERP-OFDM (clause 18, plus the 6 µs signal extension at 2.4 GHz).
//! * HT mixed format (19.4.3): the data field is rounded up to a 4 µs boundary when the
//!   short guard interval is used.
//! * VHT SU (21.4.3), same rounding.
//! * HE SU and ER SU (IEEE 802.11ax-2021 27.4.3), in `he.rs`: in nanoseconds, since
//!   HE symbols of 13.6 and 14.4 µs end between microseconds.
//!
//! Rate tables follow `docs/reference/mac80211-tx-path.md` §11.3.

use super::he::{self, HeParams, HeTimer};
use super::{Band, ChannelWidth, DsssPreamble, GuardInterval, Standard, TxVector};
use crate::Nanos;

/// Size of an ACK frame in bytes (FC 2 + Duration 2 + RA 6 + FCS 4; 802.11-2016 9.3.1).
pub const ACK_BYTES: u32 = 14;
/// Size of a CTS frame in bytes (FC 2 + Duration 2 + RA 6 + FCS 4; 802.11-2016 9.3.1).
pub const CTS_BYTES: u32 = 14;
/// Size of an RTS frame in bytes (FC 2 + Duration 2 + RA 6 + TA 6 + FCS 4;
/// 802.11-2016 9.3.1).
pub const RTS_BYTES: u32 = 20;
/// Size of a compressed BlockAck frame in bytes (FC 2 + Duration 2 + RA 6 + TA 6 +
/// BA Control 2 + Starting Sequence Control 2 + 8-byte bitmap + FCS 4; 802.11-2016
/// 9.3.1).
pub const BLOCK_ACK_BYTES: u32 = 32;
/// Size of a compressed BlockAckReq frame in bytes (FC 2 + Duration 2 + RA 6 + TA 6 +
/// BAR Control 2 + Starting Sequence Control 2 + FCS 4; 802.11-2016 9.3.1).
pub const BLOCK_ACK_REQ_BYTES: u32 = 24;

/// SERVICE field bits prepended to every OFDM/HT/VHT/HE PSDU (802.11-2016 clause 17).
pub(super) const SERVICE_BITS: u64 = 16;
/// Tail bits appended per BCC encoder (802.11-2016 clauses 17, 19, 21).
pub(super) const TAIL_BITS: u64 = 6;
/// OFDM symbol duration with the long (0.8 µs) guard interval: T_SYML.
const SYMBOL_US: u64 = 4;
/// L-STF (8) + L-LTF (8) + L-SIG (4) µs: the legacy preamble shared by OFDM, HT-mixed,
/// VHT and HE PPDUs.
pub(super) const LEGACY_PREAMBLE_US: u64 = 20;
/// aSignalExtension of ERP-OFDM and of HT/VHT/HE at 2.4 GHz (802.11-2016 clause 18,
/// 19.4.3; 802.11ax-2021 27.4.3).
pub(super) const SIGNAL_EXTENSION_US: u64 = 6;
/// DSSS long PLCP preamble (144 µs) + PLCP header (48 µs).
const DSSS_LONG_PREAMBLE_US: u64 = 192;
/// DSSS short PLCP preamble (72 µs) + PLCP header (24 µs).
const DSSS_SHORT_PREAMBLE_US: u64 = 96;

/// Valid DSSS/HR-DSSS rates in kbit/s.
const DSSS_RATES_KBPS: [u32; 4] = [1000, 2000, 5500, 11000];
/// Legacy OFDM rates in Mbit/s and their N_DBPS (802.11-2016 clause 17).
const OFDM_RATES: [(u32, u32); 8] = [
    (6, 24),
    (9, 36),
    (12, 48),
    (18, 72),
    (24, 96),
    (36, 144),
    (48, 192),
    (54, 216),
];
/// N_DBPS per spatial stream at 20 MHz (56 tones, 52 data), MCS 0–8 (MCS 8 is VHT only).
const NDBPS_20MHZ: [u32; 9] = [26, 52, 78, 104, 156, 208, 234, 260, 312];
/// N_DBPS per spatial stream at 40 MHz (108 data tones), MCS 0–9 (MCS 8, 9 VHT only).
const NDBPS_40MHZ: [u32; 10] = [54, 108, 162, 216, 324, 432, 486, 540, 648, 720];
/// N_DBPS per spatial stream at 80 MHz (234 data tones), MCS 0–9.
const NDBPS_80MHZ: [u32; 10] = [117, 234, 351, 468, 702, 936, 1053, 1170, 1404, 1560];
/// Non-HT reference rate (Mbit/s) of each per-stream MCS: the legacy OFDM rate with the
/// same modulation and coding rate; 64-QAM 5/6 and 256-QAM map to 54 Mbit/s
/// (802.11-2016 10.6.6.5), and so does 1024-QAM (HE-MCS 10, 11), like every
/// modulation above the 54 Mbit/s one.
const NON_HT_REFERENCE_RATE_MBPS: [u32; 12] = [6, 12, 18, 24, 36, 48, 54, 54, 54, 54, 54, 54];

/// The OFDM basic rate set of every OFDM-family BSS (A, G, N, Ac): 6, 12, 24 Mbit/s,
/// the mandatory OFDM rates.
const OFDM_BASIC_RATES_MBPS: [u32; 3] = [6, 12, 24];
/// The DSSS basic rate set of an 802.11b BSS: 1 and 2 Mbit/s.
const DSSS_BASIC_RATES_KBPS: [u32; 2] = [1000, 2000];
/// Candidates for responding to a DSSS frame in an OFDM-family BSS, whose basic rate
/// set has no DSSS rate (10.6.6.5 then falls back to mandatory rates of the eliciting
/// frame's class): 1 and 2 Mbit/s, the rates every DSSS/HR-DSSS/ERP station supports
/// (a modelling choice; see [`control_response_rate`]).
const DSSS_FALLBACK_RATES_KBPS: [u32; 2] = [1000, 2000];
/// Candidates for responding to an OFDM/HT/VHT frame in an 802.11b BSS (not a valid
/// combination; kept total): the mandatory OFDM rates 6, 12, 24 Mbit/s.
const OFDM_FALLBACK_RATES_MBPS: [u32; 3] = [6, 12, 24];

/// `ceil(a / b)`; a zero divisor (only reachable with an invalid [`TxVector`]) is treated
/// as 1 so the computation never panics.
fn ceil_div(a: u64, b: u64) -> u64 {
    a.div_ceil(b.max(1))
}

/// Duration of `n_sym` HT/VHT data symbols. With the long GI each symbol is T_SYML = 4 µs.
/// With the short GI (T_SYMS = 3.6 µs) the HT-mixed and VHT TXTIME equations
/// (19.4.3, 21.4.3) round the data field up to a whole number of T_SYML:
/// `T_SYML × ceil(T_SYMS × N_SYM / T_SYML)` = `4 × ceil(9 × N_SYM / 10)` µs.
fn ht_data_us(n_sym: u64, gi: GuardInterval) -> u64 {
    match gi {
        GuardInterval::Long => SYMBOL_US * n_sym,
        GuardInterval::Short => SYMBOL_US * ceil_div(9 * n_sym, 10),
    }
}

/// Number of HT-LTFs (N_LTF, 802.11-2016 clause 19) for `nss` streams without STBC or
/// extension LTFs: 1, 2, 4, 4.
fn ht_ltf_count(nss: u8) -> u64 {
    match nss {
        0 | 1 => 1,
        2 => 2,
        _ => 4,
    }
}

/// Number of VHT-LTFs (N_VHTLTF, 802.11-2016 clause 21) for `nss` space-time streams:
/// 1, 2, 4, 4, 6, 6, 8, 8.
fn vht_ltf_count(nss: u8) -> u64 {
    match nss {
        0 | 1 => 1,
        2 => 2,
        3 | 4 => 4,
        5 | 6 => 6,
        _ => 8,
    }
}

impl TxVector {
    /// The HE fields of an HE vector.
    fn he_params(&self) -> Option<HeParams> {
        match *self {
            TxVector::He {
                mcs,
                nss,
                width,
                gi,
                ltf,
                format,
                pe,
            } => Some(HeParams {
                mcs,
                nss,
                width,
                gi,
                ltf,
                format,
                pe,
            }),
            _ => None,
        }
    }

    /// Checks that this is a transmission the PHY can produce: a defined DSSS rate (short
    /// preamble not at 1 Mbit/s; 802.11-2016 clauses 15, 16), a defined OFDM rate
    /// (clause 17), HT MCS 0–15 at 20/40 MHz (19.5), or VHT MCS 0–9 with 1–2 streams at
    /// 20/40/80 MHz, excluding VHT20 MCS 9 for 1 and 2 streams (21.5), or an HE SU/ER
    /// SU vector `he.rs` accepts (802.11ax-2021 27.3.4, 27.5).
    pub fn validate(&self) -> Result<(), String> {
        if let Some(p) = self.he_params() {
            return he::validate(p);
        }
        match *self {
            TxVector::Dsss {
                rate_kbps,
                preamble,
            } => {
                if !DSSS_RATES_KBPS.contains(&rate_kbps) {
                    return Err(format!(
                        "DSSS rate {rate_kbps} kbit/s is not one of 1000, 2000, 5500, 11000"
                    ));
                }
                if rate_kbps == 1000 && preamble == DsssPreamble::Short {
                    return Err("DSSS short preamble is not allowed at 1 Mbit/s".to_string());
                }
                Ok(())
            }
            TxVector::Ofdm { rate_mbps } => {
                if OFDM_RATES.iter().any(|&(r, _)| r == rate_mbps) {
                    Ok(())
                } else {
                    Err(format!(
                        "OFDM rate {rate_mbps} Mbit/s is not one of 6, 9, 12, 18, 24, 36, 48, 54"
                    ))
                }
            }
            TxVector::Ht { mcs, width, .. } => {
                if mcs > 15 {
                    return Err(format!("HT MCS {mcs} is out of range 0-15"));
                }
                if matches!(width, ChannelWidth::Mhz80 | ChannelWidth::Mhz160) {
                    return Err(format!("HT does not support {} MHz channels", width.mhz()));
                }
                Ok(())
            }
            TxVector::Vht {
                mcs, nss, width, ..
            } => {
                if mcs > 9 {
                    return Err(format!("VHT MCS {mcs} is out of range 0-9"));
                }
                if !(1..=2).contains(&nss) {
                    return Err(format!(
                        "VHT with {nss} spatial streams is not supported (1-2)"
                    ));
                }
                if width == ChannelWidth::Mhz160 {
                    return Err("VHT160 is not modelled (20, 40 or 80 MHz)".to_string());
                }
                if width == ChannelWidth::Mhz20 && mcs == 9 {
                    let plural = if nss == 1 { "stream" } else { "streams" };
                    return Err(format!(
                        "VHT MCS 9 is not valid at 20 MHz with {nss} spatial {plural}"
                    ));
                }
                Ok(())
            }
            TxVector::He { .. } => Ok(()),
        }
    }

    /// Whether this is a DSSS/HR-DSSS (802.11b, clauses 15/16) transmission.
    pub fn is_dsss(&self) -> bool {
        matches!(self, TxVector::Dsss { .. })
    }

    /// Number of spatial streams: 1 for DSSS and OFDM; HT MCS `m` uses `m / 8 + 1`
    /// streams (802.11-2016 19.5, equal modulation MCS 0–31); VHT carries it explicitly.
    pub fn nss(&self) -> u8 {
        match *self {
            TxVector::Dsss { .. } | TxVector::Ofdm { .. } => 1,
            TxVector::Ht { mcs, .. } => mcs / 8 + 1,
            TxVector::Vht { nss, .. } | TxVector::He { nss, .. } => nss,
        }
    }

    /// Data bits per OFDM symbol over all spatial streams, N_DBPS (802.11-2016 clause 17,
    /// 19.5 and 21.5 MCS tables). 0 for DSSS, which is not symbol-based, and for an
    /// invalid vector.
    pub fn ndbps(&self) -> u32 {
        match *self {
            TxVector::Dsss { .. } => 0,
            TxVector::Ofdm { rate_mbps } => OFDM_RATES
                .iter()
                .find(|&&(r, _)| r == rate_mbps)
                .map_or(0, |&(_, n)| n),
            TxVector::Ht { mcs, width, .. } => {
                if mcs > 15 {
                    return 0;
                }
                let per_stream = match width {
                    ChannelWidth::Mhz20 => NDBPS_20MHZ[usize::from(mcs % 8)],
                    ChannelWidth::Mhz40 => NDBPS_40MHZ[usize::from(mcs % 8)],
                    ChannelWidth::Mhz80 | ChannelWidth::Mhz160 => 0,
                };
                per_stream * u32::from(self.nss())
            }
            TxVector::Vht {
                mcs, nss, width, ..
            } => {
                let table: &[u32] = match width {
                    ChannelWidth::Mhz20 => &NDBPS_20MHZ,
                    ChannelWidth::Mhz40 => &NDBPS_40MHZ,
                    ChannelWidth::Mhz80 => &NDBPS_80MHZ,
                    ChannelWidth::Mhz160 => &[],
                };
                table.get(usize::from(mcs)).copied().unwrap_or(0) * u32::from(nss)
            }
            TxVector::He {
                mcs, nss, width, ..
            } => {
                if mcs > he::HE_MAX_MCS {
                    return 0;
                }
                he::ndbps(mcs, nss, width) as u32
            }
        }
    }

    /// PHY data rate in bit/s: the DSSS rate; N_DBPS / 4 µs for OFDM (clause 17); for
    /// HT/VHT N_DBPS / 4.0 µs (long GI) or N_DBPS / 3.6 µs (short GI), rounded down to a
    /// whole bit/s (19.5, 21.5); for HE `he.rs`'s N_SD × N_BPSCS × N_SS × R / (12.8 µs +
    /// GI) (802.11ax-2021 27.5). 0 for an invalid vector.
    pub fn data_rate_bps(&self) -> u64 {
        if let TxVector::He {
            mcs,
            nss,
            width,
            gi,
            ..
        } = *self
        {
            if mcs > he::HE_MAX_MCS {
                return 0;
            }
            return he::data_rate_bps(mcs, nss, width, gi);
        }
        let ndbps = u64::from(self.ndbps());
        match *self {
            TxVector::Dsss { rate_kbps, .. } => u64::from(rate_kbps) * 1000,
            TxVector::Ofdm { .. } => ndbps * 250_000,
            TxVector::Ht { gi, .. } | TxVector::Vht { gi, .. } => match gi {
                // N_DBPS / 4e-6 s.
                GuardInterval::Long => ndbps * 250_000,
                // N_DBPS / 3.6e-6 s = N_DBPS × 10^7 / 36.
                GuardInterval::Short => ndbps * 10_000_000 / 36,
            },
            TxVector::He { .. } => 0,
        }
    }

    /// Number of BCC encoders N_ES. HT: 1 up to 300 Mbit/s (clause 19; always the case
    /// with at most 2 streams). VHT: one encoder per 540 Mbit/s of long-GI rate
    /// (equivalently 600 Mbit/s of short-GI rate), which reproduces the N_ES column of
    /// the VHT MCS tables of 802.11-2016 21.5 for every bandwidth up to 80 MHz and 1–2
    /// streams (e.g. VHT80 2SS MCS 7, 585 Mbit/s, has N_ES = 2). N_ES depends only on
    /// MCS/width/NSS, not on the GI.
    fn n_es(&self) -> u64 {
        match *self {
            TxVector::Vht { .. } => {
                // Long-GI rate in bit/s = N_DBPS × 250 000; threshold 540 Mbit/s.
                let rate_lgi_bps = u64::from(self.ndbps()) * 250_000;
                ceil_div(rate_lgi_bps, 540_000_000).max(1)
            }
            TxVector::Ht { .. } => {
                let rate_lgi_bps = u64::from(self.ndbps()) * 250_000;
                if rate_lgi_bps > 300_000_000 {
                    2
                } else {
                    1
                }
            }
            _ => 1,
        }
    }

    /// Number of OFDM data symbols for a PSDU of `psdu_bytes` (BCC, no STBC):
    /// `ceil((16 + 8·LENGTH + 6·N_ES) / N_DBPS)` (17.4.3, 19.4.3, 21.4.3).
    fn n_sym(&self, psdu_bytes: u32) -> u64 {
        let bits = SERVICE_BITS + 8 * u64::from(psdu_bytes) + TAIL_BITS * self.n_es();
        ceil_div(bits, u64::from(self.ndbps()))
    }

    /// Airtime of a PPDU carrying `psdu_bytes` bytes in `band`: the TXTIME of 802.11-2016
    /// clauses 15/16 (DSSS/HR-DSSS), 17.4.3 (OFDM), clause 18 (ERP-OFDM), 19.4.3 (HT mixed
    /// format) and 21.4.3 (VHT SU). Always a whole number of microseconds.
    ///
    /// * DSSS: 192 µs (long) or 96 µs (short) preamble + header, then
    ///   `ceil(8 × len / rate)` µs.
    /// * OFDM: 20 µs + 4 µs × N_SYM.
    /// * HT: 20 + HT-SIG 8 + HT-STF 4 + 4 × N_LTF µs, then the data symbols.
    /// * VHT: 20 + VHT-SIG-A 8 + VHT-STF 4 + 4 × N_VHTLTF + VHT-SIG-B 4 µs, then the data
    ///   symbols.
    ///
    /// OFDM, HT and VHT PPDUs at 2.4 GHz carry the 6 µs signal extension (VHT is not
    /// defined at 2.4 GHz, but is not rejected here). BCC coding, no STBC. For VHT the
    /// standard computes N_SYM from APEP_LENGTH; here `psdu_bytes` stands for it (they
    /// are equal up to the padding that fills the last symbol, which does not change
    /// N_SYM). `psdu_bytes = 0` gives the preamble plus the one symbol that carries
    /// SERVICE and tail bits; the standard's HT/VHT NDP, which has no data field at all,
    /// is 4 µs shorter and is not modelled. The vector should be valid
    /// ([`TxVector::validate`]); an invalid one gives an unspecified duration but never
    /// panics.
    pub fn ppdu_duration(&self, psdu_bytes: u32, band: Band) -> Nanos {
        if let Some(p) = self.he_params() {
            return Nanos::from_ns(HeTimer::new(p, band).duration_ns(psdu_bytes));
        }
        let extension_us = match band {
            Band::Ghz2_4 => SIGNAL_EXTENSION_US,
            Band::Ghz5 => 0,
        };
        let us = match *self {
            TxVector::Dsss {
                rate_kbps,
                preamble,
            } => {
                let preamble_us = match preamble {
                    DsssPreamble::Long => DSSS_LONG_PREAMBLE_US,
                    DsssPreamble::Short => DSSS_SHORT_PREAMBLE_US,
                };
                // 8 × len bits at rate_kbps kbit/s = 8 × len × 1000 / rate_kbps µs.
                preamble_us + ceil_div(8 * 1000 * u64::from(psdu_bytes), u64::from(rate_kbps))
            }
            TxVector::Ofdm { .. } => {
                LEGACY_PREAMBLE_US + SYMBOL_US * self.n_sym(psdu_bytes) + extension_us
            }
            TxVector::Ht { gi, .. } => {
                // L-STF + L-LTF + L-SIG, HT-SIG (2 symbols), HT-STF, HT-LTFs.
                let preamble_us = LEGACY_PREAMBLE_US + 8 + 4 + 4 * ht_ltf_count(self.nss());
                preamble_us + ht_data_us(self.n_sym(psdu_bytes), gi) + extension_us
            }
            TxVector::Vht { nss, gi, .. } => {
                // L-STF + L-LTF + L-SIG, VHT-SIG-A (2 symbols), VHT-STF, VHT-LTFs,
                // VHT-SIG-B.
                let preamble_us = LEGACY_PREAMBLE_US + 8 + 4 + 4 * vht_ltf_count(nss) + 4;
                preamble_us + ht_data_us(self.n_sym(psdu_bytes), gi) + extension_us
            }
            // Returned above.
            TxVector::He { .. } => 0,
        };
        Nanos::from_us(us)
    }

    /// A short human-readable name of the format and rate, e.g. "DSSS 11 Mbit/s long",
    /// "OFDM 54 Mbit/s", "HT20 MCS7 LGI", "VHT80 MCS9 2SS SGI" (naming as in 802.11-2016
    /// 19.5 and 21.5).
    pub fn modulation_label(&self) -> String {
        let gi_label = |gi: GuardInterval| match gi {
            GuardInterval::Long => "LGI",
            GuardInterval::Short => "SGI",
        };
        match *self {
            TxVector::Dsss {
                rate_kbps,
                preamble,
            } => {
                let preamble = match preamble {
                    DsssPreamble::Long => "long",
                    DsssPreamble::Short => "short",
                };
                // f64 Display prints 11000 / 1000 as "11" and 5500 / 1000 as "5.5".
                let rate_mbps = f64::from(rate_kbps) / 1000.0;
                format!("DSSS {rate_mbps} Mbit/s {preamble}")
            }
            TxVector::Ofdm { rate_mbps } => format!("OFDM {rate_mbps} Mbit/s"),
            TxVector::Ht { mcs, width, gi } => {
                format!("HT{} MCS{mcs} {}", width.mhz(), gi_label(gi))
            }
            TxVector::Vht {
                mcs,
                nss,
                width,
                gi,
            } => format!("VHT{} MCS{mcs} {nss}SS {}", width.mhz(), gi_label(gi)),
            TxVector::He { .. } => self.he_params().map(he::label).unwrap_or_default(),
        }
    }
}

/// [`TxVector::ppdu_duration`] for one vector and band, with every term that does not
/// depend on the PSDU length worked out once: for a link whose rate never changes, the
/// MAC computes the TXTIME of every PPDU with one division (two with the short GI)
/// instead of re-deriving N_DBPS, N_ES, the preamble and the signal extension each
/// time.
///
/// All TXTIME equations of [`TxVector::ppdu_duration`] have the form
/// `fixed + unit × ceil((fixed_bits + bits_per_byte × LENGTH) / divisor)` µs:
///
/// * DSSS: preamble + header, unit 1 µs, 8000 "bits" per byte over the rate in kbit/s
///   (`ceil(8 × 1000 × LENGTH / rate_kbps)`).
/// * OFDM, HT, VHT: preamble + signal extension, unit 4 µs (T_SYML), SERVICE + tail bits
///   and 8 bits per byte over N_DBPS: N_SYM. With the short GI the data field is
///   `4 × ceil(9 × N_SYM / 10)` µs instead (see `ht_data_us`).
/// * HE: preamble + signal extension, unit 12.8 µs + GI, the same N_SYM, plus the
///   packet extension when the receiver's nominal padding is not 0 (`he.rs`).
///
/// Zero divisors of invalid vectors are replaced by 1, as `ceil_div` does, so the
/// result equals [`TxVector::ppdu_duration`] for every vector, valid or not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PpduTimer {
    fixed_ns: u64,
    unit_ns: u64,
    fixed_bits: u64,
    bits_per_byte: u64,
    /// At least 1.
    divisor: u64,
    /// HT/VHT short GI: N_SYM × 3.6 µs rounded up to whole 4 µs symbols.
    short_gi: bool,
    /// HE with a nominal packet padding: the whole HE TXTIME, PE included.
    he_pe: Option<HeTimer>,
}

impl PpduTimer {
    /// The TXTIME equation of `tx` in `band`, with the length-independent terms
    /// evaluated as [`TxVector::ppdu_duration`] evaluates them.
    pub fn new(tx: &TxVector, band: Band) -> PpduTimer {
        let extension_us = match band {
            Band::Ghz2_4 => SIGNAL_EXTENSION_US,
            Band::Ghz5 => 0,
        };
        // OFDM-family vectors: preamble (µs) and guard interval; DSSS returns early.
        let (preamble_us, short_gi) = match *tx {
            TxVector::Dsss {
                rate_kbps,
                preamble,
            } => {
                let fixed_us = match preamble {
                    DsssPreamble::Long => DSSS_LONG_PREAMBLE_US,
                    DsssPreamble::Short => DSSS_SHORT_PREAMBLE_US,
                };
                return PpduTimer {
                    fixed_ns: fixed_us * 1000,
                    unit_ns: 1000,
                    fixed_bits: 0,
                    bits_per_byte: 8 * 1000,
                    divisor: u64::from(rate_kbps).max(1),
                    short_gi: false,
                    he_pe: None,
                };
            }
            TxVector::He { .. } => {
                let he = tx.he_params().map(|p| HeTimer::new(p, band));
                return PpduTimer {
                    fixed_ns: he.map_or(0, |h| h.fixed_ns),
                    unit_ns: he.map_or(0, |h| h.symbol_ns),
                    fixed_bits: SERVICE_BITS + TAIL_BITS,
                    bits_per_byte: 8,
                    divisor: he.map_or(1, |h| h.ndbps),
                    short_gi: false,
                    he_pe: he.filter(|h| h.nominal_pe_us != 0),
                };
            }
            TxVector::Ofdm { .. } => (LEGACY_PREAMBLE_US, false),
            TxVector::Ht { gi, .. } => (
                LEGACY_PREAMBLE_US + 8 + 4 + 4 * ht_ltf_count(tx.nss()),
                gi == GuardInterval::Short,
            ),
            TxVector::Vht { nss, gi, .. } => (
                LEGACY_PREAMBLE_US + 8 + 4 + 4 * vht_ltf_count(nss) + 4,
                gi == GuardInterval::Short,
            ),
        };
        PpduTimer {
            fixed_ns: (preamble_us + extension_us) * 1000,
            unit_ns: SYMBOL_US * 1000,
            fixed_bits: SERVICE_BITS + TAIL_BITS * tx.n_es(),
            bits_per_byte: 8,
            divisor: u64::from(tx.ndbps()).max(1),
            short_gi,
            he_pe: None,
        }
    }

    /// Airtime of a PPDU carrying `psdu_bytes` bytes: [`TxVector::ppdu_duration`].
    #[inline]
    pub fn duration(&self, psdu_bytes: u32) -> Nanos {
        if let Some(he) = &self.he_pe {
            return Nanos::from_ns(he.duration_ns(psdu_bytes));
        }
        let units =
            (self.fixed_bits + self.bits_per_byte * u64::from(psdu_bytes)).div_ceil(self.divisor);
        let units = if self.short_gi {
            (9 * units).div_ceil(10)
        } else {
            units
        };
        Nanos::from_ns(self.fixed_ns + self.unit_ns * units)
    }
}

/// The rate of a control response (ACK, CTS, BlockAck) to a frame sent with `eliciting`
/// in a BSS of `standard` (802.11-2016 10.6.6.5): the highest rate of the BSS basic
/// rate set that is ≤ the eliciting frame's primary rate and of the same modulation
/// class.
///
/// * Basic rate sets: {1, 2} Mbit/s DSSS for [`Standard::B`] (with the eliciting
///   frame's preamble; 1 Mbit/s always uses the long one), {6, 12, 24} Mbit/s OFDM for
///   A, G, N, Ac and Ax.
/// * Primary rate: the frame's own rate for DSSS/OFDM; for HT/VHT/HE the non-HT
///   reference rate of the MCS (same modulation and coding: per-stream MCS 0→6, 1→12,
///   2→18, 3→24, 4→36, 5→48, 6–11→54 Mbit/s).
/// * HE: the response to an HE SU PPDU goes in a non-HT PPDU at that rate, as for
///   HT/VHT (802.11ax-2021 10.6.6.5 keeps the non-HT rules for responses that are not
///   HE TB PPDUs; txop models no trigger frames).
/// * If the basic rate set holds no rate of the eliciting frame's class (a DSSS frame in
///   an OFDM-family BSS, or an OFDM/HT/VHT frame in an 802.11b BSS), 10.6.6.5 falls
///   back to mandatory rates of that class. The model then uses {1, 2} Mbit/s DSSS
///   (rates every DSSS/HR-DSSS/ERP station supports; a modelling choice, since HR/DSSS
///   also mandates 5.5 and 11) or {6, 12, 24} Mbit/s OFDM (the mandatory OFDM rates).
///   So the result depends only on the eliciting frame's class.
/// * If no candidate is ≤ the primary rate (only for an invalid vector), the lowest one
///   is used.
pub fn control_response_rate(eliciting: &TxVector, standard: Standard) -> TxVector {
    let bss_is_dsss = standard == Standard::B;
    match *eliciting {
        TxVector::Dsss {
            rate_kbps,
            preamble,
        } => {
            let candidates: &[u32] = if bss_is_dsss {
                &DSSS_BASIC_RATES_KBPS
            } else {
                &DSSS_FALLBACK_RATES_KBPS
            };
            let rate_kbps = highest_at_most(candidates, rate_kbps);
            let preamble = if rate_kbps == 1000 {
                DsssPreamble::Long
            } else {
                preamble
            };
            TxVector::Dsss {
                rate_kbps,
                preamble,
            }
        }
        TxVector::Ofdm { .. }
        | TxVector::Ht { .. }
        | TxVector::Vht { .. }
        | TxVector::He { .. } => {
            let candidates: &[u32] = if bss_is_dsss {
                &OFDM_FALLBACK_RATES_MBPS
            } else {
                &OFDM_BASIC_RATES_MBPS
            };
            TxVector::Ofdm {
                rate_mbps: highest_at_most(candidates, primary_rate_mbps(eliciting)),
            }
        }
    }
}

/// The primary rate (Mbit/s) of an OFDM/HT/VHT/HE frame for the control-response rule:
/// its own rate for OFDM, the non-HT reference rate of its MCS for HT/VHT/HE. 0 for
/// DSSS.
fn primary_rate_mbps(tx: &TxVector) -> u32 {
    match *tx {
        TxVector::Dsss { .. } => 0,
        TxVector::Ofdm { rate_mbps } => rate_mbps,
        TxVector::Ht { mcs, .. } => NON_HT_REFERENCE_RATE_MBPS[usize::from(mcs % 8)],
        TxVector::Vht { mcs, .. } | TxVector::He { mcs, .. } => NON_HT_REFERENCE_RATE_MBPS
            .get(usize::from(mcs))
            .copied()
            .unwrap_or(54),
    }
}

/// The highest of `candidates` that is ≤ `limit`, or the lowest candidate if none is.
/// `candidates` is a non-empty ascending constant list.
fn highest_at_most(candidates: &[u32], limit: u32) -> u32 {
    candidates
        .iter()
        .copied()
        .filter(|&r| r <= limit)
        .max()
        .or_else(|| candidates.first().copied())
        .unwrap_or(limit)
}

/// The lowest rate of the BSS basic rate set (802.11-2016 10.6.6.5 basic rate sets as
/// above): 1 Mbit/s DSSS with the long preamble for [`Standard::B`], 6 Mbit/s OFDM
/// otherwise. EIFS uses the ACK time at this rate (10.3.2.3).
pub fn lowest_basic_rate(standard: Standard) -> TxVector {
    match standard {
        Standard::B => TxVector::Dsss {
            rate_kbps: 1000,
            preamble: DsssPreamble::Long,
        },
        Standard::A | Standard::G | Standard::N | Standard::Ac | Standard::Ax => {
            TxVector::Ofdm { rate_mbps: 6 }
        }
    }
}

/// One vector of each PHY format at low and high rates (DSSS long and short preamble,
/// OFDM, HT 20/40 MHz with both guard intervals, VHT 80 MHz 2 streams, HE160 4 streams
/// with a 16 µs packet extension, HE ER SU), for tests that check a faster computation
/// against the direct one over every format.
#[cfg(test)]
pub(crate) fn sample_vectors() -> Vec<TxVector> {
    vec![
        TxVector::Dsss {
            rate_kbps: 1_000,
            preamble: DsssPreamble::Long,
        },
        TxVector::Dsss {
            rate_kbps: 11_000,
            preamble: DsssPreamble::Short,
        },
        TxVector::Ofdm { rate_mbps: 6 },
        TxVector::Ofdm { rate_mbps: 9 },
        TxVector::Ofdm { rate_mbps: 54 },
        TxVector::Ht {
            mcs: 0,
            width: ChannelWidth::Mhz20,
            gi: GuardInterval::Long,
        },
        TxVector::Ht {
            mcs: 7,
            width: ChannelWidth::Mhz20,
            gi: GuardInterval::Long,
        },
        TxVector::Ht {
            mcs: 15,
            width: ChannelWidth::Mhz40,
            gi: GuardInterval::Short,
        },
        TxVector::Vht {
            mcs: 9,
            nss: 2,
            width: ChannelWidth::Mhz80,
            gi: GuardInterval::Short,
        },
        TxVector::He {
            mcs: 11,
            nss: 4,
            width: ChannelWidth::Mhz160,
            gi: super::HeGuardInterval::Us0_8,
            ltf: super::HeLtf::X2,
            format: super::HeFormat::Su,
            pe: super::NominalPacketPadding::Us16,
        },
        TxVector::He {
            mcs: 0,
            nss: 1,
            width: ChannelWidth::Mhz20,
            gi: super::HeGuardInterval::Us3_2,
            ltf: super::HeLtf::X4,
            format: super::HeFormat::ErSu,
            pe: super::NominalPacketPadding::Us0,
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    const LONG: GuardInterval = GuardInterval::Long;
    const SHORT: GuardInterval = GuardInterval::Short;

    fn ofdm(rate_mbps: u32) -> TxVector {
        TxVector::Ofdm { rate_mbps }
    }
    fn dsss(rate_kbps: u32, preamble: DsssPreamble) -> TxVector {
        TxVector::Dsss {
            rate_kbps,
            preamble,
        }
    }
    fn ht(mcs: u8, width: ChannelWidth, gi: GuardInterval) -> TxVector {
        TxVector::Ht { mcs, width, gi }
    }
    fn vht(mcs: u8, nss: u8, width: ChannelWidth, gi: GuardInterval) -> TxVector {
        TxVector::Vht {
            mcs,
            nss,
            width,
            gi,
        }
    }
    fn us(tx: TxVector, psdu_bytes: u32, band: Band) -> u64 {
        let d = tx.ppdu_duration(psdu_bytes, band);
        assert_eq!(d.as_ns() % 1000, 0, "{tx:?} not whole µs");
        d.as_us()
    }

    /// Every TxVector that `validate` should accept.
    fn all_valid() -> Vec<TxVector> {
        let mut v = Vec::new();
        for r in [1000, 2000, 5500, 11000] {
            v.push(dsss(r, DsssPreamble::Long));
            if r != 1000 {
                v.push(dsss(r, DsssPreamble::Short));
            }
        }
        for r in [6, 9, 12, 18, 24, 36, 48, 54] {
            v.push(ofdm(r));
        }
        for gi in [LONG, SHORT] {
            for mcs in 0..=15 {
                for w in [ChannelWidth::Mhz20, ChannelWidth::Mhz40] {
                    v.push(ht(mcs, w, gi));
                }
            }
            for mcs in 0..=9 {
                for nss in 1..=2 {
                    for w in [
                        ChannelWidth::Mhz20,
                        ChannelWidth::Mhz40,
                        ChannelWidth::Mhz80,
                    ] {
                        if !(w == ChannelWidth::Mhz20 && mcs == 9) {
                            v.push(vht(mcs, nss, w, gi));
                        }
                    }
                }
            }
        }
        v
    }

    #[test]
    fn legacy_ofdm_control_frames() {
        // ACK at 24 Mbit/s: 20 + 4·ceil((16 + 112 + 6)/96) = 20 + 4·2 = 28 µs.
        assert_eq!(us(ofdm(24), ACK_BYTES, Band::Ghz5), 28);
        // Compressed BlockAck at 24 Mbit/s: 20 + 4·ceil((16 + 256 + 6)/96) = 20 + 4·3 = 32.
        assert_eq!(us(ofdm(24), BLOCK_ACK_BYTES, Band::Ghz5), 32);
        // ACK at 6 Mbit/s: 20 + 4·ceil(134/24) = 20 + 4·6 = 44 µs.
        assert_eq!(us(ofdm(6), ACK_BYTES, Band::Ghz5), 44);
        // RTS at 6 Mbit/s: 20 + 4·ceil((16 + 160 + 6)/24) = 20 + 4·8 = 52 µs.
        assert_eq!(us(ofdm(6), RTS_BYTES, Band::Ghz5), 52);
    }

    #[test]
    fn legacy_ofdm_data() {
        // 54 Mbit/s, 1536 B: 20 + 4·ceil((16 + 12288 + 6)/216) = 20 + 4·57 = 248 µs.
        assert_eq!(us(ofdm(54), 1536, Band::Ghz5), 248);
        // Same in ERP-OFDM at 2.4 GHz: 248 + 6 µs signal extension = 254 µs.
        assert_eq!(us(ofdm(54), 1536, Band::Ghz2_4), 254);
    }

    #[test]
    fn dsss_durations() {
        // 1 Mbit/s long, 14 B ACK: 192 + 8·14 = 192 + 112 = 304 µs.
        assert_eq!(
            us(dsss(1000, DsssPreamble::Long), ACK_BYTES, Band::Ghz2_4),
            304
        );
        // 11 Mbit/s long, 1500 B: 192 + ceil(12000/11) = 192 + 1091 = 1283 µs.
        assert_eq!(
            us(dsss(11000, DsssPreamble::Long), 1500, Band::Ghz2_4),
            1283
        );
        // 5.5 Mbit/s short, 100 B: 96 + ceil(800/5.5 = 145.45) = 96 + 146 = 242 µs.
        assert_eq!(us(dsss(5500, DsssPreamble::Short), 100, Band::Ghz2_4), 242);
        // 2 Mbit/s short, 14 B: 96 + 112/2 = 96 + 56 = 152 µs (no extension for DSSS).
        assert_eq!(us(dsss(2000, DsssPreamble::Short), 14, Band::Ghz2_4), 152);
    }

    #[test]
    fn ht_rates() {
        // HT20 MCS7: 260 bits / 4 µs = 65 Mbit/s; 260 / 3.6 µs = 72.222… Mbit/s.
        assert_eq!(ht(7, ChannelWidth::Mhz20, LONG).data_rate_bps(), 65_000_000);
        assert_eq!(
            ht(7, ChannelWidth::Mhz20, SHORT).data_rate_bps(),
            72_222_222
        );
        // HT40 MCS15: 2·540 = 1080 bits / 3.6 µs = 300 Mbit/s.
        assert_eq!(
            ht(15, ChannelWidth::Mhz40, SHORT).data_rate_bps(),
            300_000_000
        );
        // §11.3: HT40 MCS3 LGI: 216 / 4 µs = 54 Mbit/s.
        assert_eq!(ht(3, ChannelWidth::Mhz40, LONG).data_rate_bps(), 54_000_000);
        // HT20 MCS0 SGI: 26 / 3.6 µs = 7.222… Mbit/s.
        assert_eq!(ht(0, ChannelWidth::Mhz20, SHORT).data_rate_bps(), 7_222_222);
        assert_eq!(ht(15, ChannelWidth::Mhz20, LONG).nss(), 2);
        assert_eq!(ht(15, ChannelWidth::Mhz20, LONG).ndbps(), 520);
    }

    #[test]
    fn vht_rates() {
        // VHT80 MCS9 2SS SGI: 2·1560 = 3120 bits / 3.6 µs = 866.666… Mbit/s.
        assert_eq!(
            vht(9, 2, ChannelWidth::Mhz80, SHORT).data_rate_bps(),
            866_666_666
        );
        // §11.3: VHT80 MCS4 LGI: 702 / 4 µs = 175.5 Mbit/s.
        assert_eq!(
            vht(4, 1, ChannelWidth::Mhz80, LONG).data_rate_bps(),
            175_500_000
        );
        // VHT20 MCS8 1SS LGI: 312 / 4 µs = 78 Mbit/s.
        assert_eq!(
            vht(8, 1, ChannelWidth::Mhz20, LONG).data_rate_bps(),
            78_000_000
        );
        // VHT40 MCS9 2SS SGI: 2·720 = 1440 / 3.6 µs = 400 Mbit/s.
        assert_eq!(
            vht(9, 2, ChannelWidth::Mhz40, SHORT).data_rate_bps(),
            400_000_000
        );
    }

    #[test]
    fn legacy_rates_and_ndbps() {
        assert_eq!(ofdm(54).data_rate_bps(), 54_000_000);
        assert_eq!(ofdm(9).ndbps(), 36);
        assert_eq!(dsss(5500, DsssPreamble::Long).data_rate_bps(), 5_500_000);
        assert_eq!(dsss(5500, DsssPreamble::Long).ndbps(), 0);
        assert!(dsss(1000, DsssPreamble::Long).is_dsss());
        assert!(!ofdm(6).is_dsss());
    }

    #[test]
    fn ht_durations() {
        // HT20 MCS7 LGI, 1538 B: N_SYM = ceil((16 + 12304 + 6)/260) = ceil(47.41) = 48;
        // 36 + 4·48 = 36 + 192 = 228 µs.
        assert_eq!(us(ht(7, ChannelWidth::Mhz20, LONG), 1538, Band::Ghz5), 228);
        // Same with SGI: N_SYM = 48, 3.6·48 = 172.8 µs, rounded up to a 4 µs boundary:
        // 4·ceil(172.8/4) = 4·44 = 176; 36 + 176 = 212 µs.
        assert_eq!(us(ht(7, ChannelWidth::Mhz20, SHORT), 1538, Band::Ghz5), 212);
        // At 2.4 GHz: + 6 µs signal extension = 218 µs.
        assert_eq!(
            us(ht(7, ChannelWidth::Mhz20, SHORT), 1538, Band::Ghz2_4),
            218
        );
        // HT 2SS preamble is 40 µs: HT20 MCS8 (NDBPS 52), 0 B: 1 symbol; 40 + 4 = 44 µs.
        assert_eq!(us(ht(8, ChannelWidth::Mhz20, LONG), 0, Band::Ghz5), 44);
        // HT40 MCS15 SGI, 1500 B: N_SYM = ceil((16 + 12000 + 6)/1080) = ceil(11.13) = 12;
        // 3.6·12 = 43.2 → 4·ceil(10.8) = 44 µs; 40 + 44 = 84 µs.
        assert_eq!(us(ht(15, ChannelWidth::Mhz40, SHORT), 1500, Band::Ghz5), 84);
    }

    #[test]
    fn vht_durations() {
        // VHT 2SS preamble: 20 + 8 + 4 + 2·4 + 4 = 44 µs. VHT80 MCS0 2SS (NDBPS 468),
        // 0 B: N_SYM = ceil(22/468) = 1, so 48 µs total, 48 − 4 = 44.
        let two_ss = vht(0, 2, ChannelWidth::Mhz80, LONG);
        assert_eq!(us(two_ss, 0, Band::Ghz5) - 4, 44);
        // 1SS preamble 40 µs: VHT20 MCS0 1SS (NDBPS 26), 0 B: 1 symbol → 44 µs.
        assert_eq!(
            us(vht(0, 1, ChannelWidth::Mhz20, LONG), 0, Band::Ghz5) - 4,
            40
        );
        // VHT80 MCS9 2SS SGI, 1500 B: NDBPS 3120, N_ES 2;
        // N_SYM = ceil((16 + 12000 + 12)/3120) = ceil(3.86) = 4; 3.6·4 = 14.4 → 16 µs;
        // 44 + 16 = 60 µs.
        assert_eq!(
            us(vht(9, 2, ChannelWidth::Mhz80, SHORT), 1500, Band::Ghz5),
            60
        );
    }

    #[test]
    fn vht_encoder_count_follows_the_standard_tables() {
        // VHT80 2SS MCS7 (585 Mbit/s LGI) has N_ES = 2 in the 802.11-2016 21.5
        // VHT80 NSS = 2 MCS table
        // (the VHT80 NSS 2 table), so 12 tail bits. NDBPS 2340, 582 B:
        // N_SYM = ceil((16 + 4656 + 12)/2340) = ceil(4684/2340) = 3 (with N_ES = 1 it
        // would be ceil(4678/2340) = 2); 44 + 4·3 = 56 µs.
        assert_eq!(
            us(vht(7, 2, ChannelWidth::Mhz80, LONG), 582, Band::Ghz5),
            56
        );
        // VHT80 2SS MCS6 (526.5 Mbit/s) keeps N_ES = 1. NDBPS 2106, 524 B:
        // N_SYM = ceil((16 + 4192 + 6)/2106) = ceil(4214/2106) = 3 (4214 > 4212);
        // 44 + 12 = 56 µs. With 523 B: ceil((16 + 4184 + 6)/2106) = ceil(4206/2106) = 2
        // → 52 µs.
        assert_eq!(
            us(vht(6, 2, ChannelWidth::Mhz80, LONG), 524, Band::Ghz5),
            56
        );
        assert_eq!(
            us(vht(6, 2, ChannelWidth::Mhz80, LONG), 523, Band::Ghz5),
            52
        );
    }

    #[test]
    fn labels() {
        assert_eq!(ofdm(54).modulation_label(), "OFDM 54 Mbit/s");
        assert_eq!(
            ht(7, ChannelWidth::Mhz20, LONG).modulation_label(),
            "HT20 MCS7 LGI"
        );
        assert_eq!(
            vht(9, 2, ChannelWidth::Mhz80, SHORT).modulation_label(),
            "VHT80 MCS9 2SS SGI"
        );
        assert_eq!(
            dsss(11000, DsssPreamble::Long).modulation_label(),
            "DSSS 11 Mbit/s long"
        );
        assert_eq!(
            dsss(5500, DsssPreamble::Short).modulation_label(),
            "DSSS 5.5 Mbit/s short"
        );
    }

    #[test]
    fn control_response_rates() {
        // 54 → 24 (highest of {6, 12, 24} ≤ 54); 9 → 6; 18 → 12; 24 → 24.
        assert_eq!(control_response_rate(&ofdm(54), Standard::A), ofdm(24));
        assert_eq!(control_response_rate(&ofdm(9), Standard::G), ofdm(6));
        assert_eq!(control_response_rate(&ofdm(18), Standard::A), ofdm(12));
        assert_eq!(control_response_rate(&ofdm(24), Standard::A), ofdm(24));
        // HT MCS1 (QPSK 1/2, reference 12 Mbit/s) → 12.
        let mcs1 = ht(1, ChannelWidth::Mhz20, LONG);
        assert_eq!(control_response_rate(&mcs1, Standard::N), ofdm(12));
        // HT MCS8 = 2SS MCS0 (BPSK 1/2, reference 6) → 6; MCS2 (reference 18) → 12.
        let mcs8 = ht(8, ChannelWidth::Mhz40, SHORT);
        assert_eq!(control_response_rate(&mcs8, Standard::N), ofdm(6));
        let mcs2 = ht(2, ChannelWidth::Mhz20, LONG);
        assert_eq!(control_response_rate(&mcs2, Standard::N), ofdm(12));
        // VHT MCS9 (reference 54) → 24.
        let v9 = vht(9, 2, ChannelWidth::Mhz80, SHORT);
        assert_eq!(control_response_rate(&v9, Standard::Ac), ofdm(24));
        // 11 Mbit/s DSSS → 2 (preamble kept); 5.5 short → 2 short; 1 → 1 long.
        let d11 = dsss(11000, DsssPreamble::Long);
        let d2 = dsss(2000, DsssPreamble::Long);
        assert_eq!(control_response_rate(&d11, Standard::B), d2);
        let d55s = dsss(5500, DsssPreamble::Short);
        let d2s = dsss(2000, DsssPreamble::Short);
        assert_eq!(control_response_rate(&d55s, Standard::B), d2s);
        let d1 = dsss(1000, DsssPreamble::Long);
        assert_eq!(control_response_rate(&d1, Standard::B), d1);
        // Every response is itself valid.
        for tx in all_valid() {
            for std in [
                Standard::B,
                Standard::A,
                Standard::G,
                Standard::N,
                Standard::Ac,
            ] {
                let r = control_response_rate(&tx, std);
                assert_eq!(r.validate(), Ok(()), "{tx:?} in {std:?}");
            }
        }
    }

    #[test]
    fn lowest_basic_rates() {
        assert_eq!(
            lowest_basic_rate(Standard::B),
            dsss(1000, DsssPreamble::Long)
        );
        for std in [Standard::A, Standard::G, Standard::N, Standard::Ac] {
            assert_eq!(lowest_basic_rate(std), ofdm(6));
        }
    }

    #[test]
    fn validate_accepts_every_valid_vector() {
        for tx in all_valid() {
            assert_eq!(tx.validate(), Ok(()), "{tx:?}");
            assert!(tx.is_dsss() || tx.ndbps() > 0, "{tx:?}");
            assert!(tx.data_rate_bps() > 0, "{tx:?}");
        }
    }

    #[test]
    fn validate_rejects_invalid_vectors() {
        let err = |tx: TxVector| tx.validate().expect_err("should be invalid");
        assert!(err(dsss(3000, DsssPreamble::Long)).contains("DSSS rate"));
        assert!(err(dsss(1000, DsssPreamble::Short)).contains("short preamble"));
        assert!(err(ofdm(10)).contains("OFDM rate"));
        assert!(err(ht(16, ChannelWidth::Mhz20, LONG)).contains("HT MCS 16"));
        assert!(err(ht(7, ChannelWidth::Mhz80, LONG)).contains("80 MHz"));
        assert!(err(vht(10, 1, ChannelWidth::Mhz80, LONG)).contains("VHT MCS 10"));
        assert!(err(vht(0, 0, ChannelWidth::Mhz80, LONG)).contains("spatial streams"));
        assert!(err(vht(0, 3, ChannelWidth::Mhz80, LONG)).contains("spatial streams"));
        assert_eq!(
            err(vht(9, 1, ChannelWidth::Mhz20, LONG)),
            "VHT MCS 9 is not valid at 20 MHz with 1 spatial stream"
        );
        assert_eq!(
            err(vht(9, 2, ChannelWidth::Mhz20, SHORT)),
            "VHT MCS 9 is not valid at 20 MHz with 2 spatial streams"
        );
    }

    #[test]
    fn invalid_vectors_do_not_panic() {
        for tx in [
            dsss(0, DsssPreamble::Long),
            ofdm(0),
            ht(200, ChannelWidth::Mhz80, SHORT),
            vht(200, 0, ChannelWidth::Mhz20, SHORT),
            vht(9, 200, ChannelWidth::Mhz80, SHORT),
        ] {
            let _ = tx.ppdu_duration(u32::MAX, Band::Ghz2_4);
            let _ = tx.data_rate_bps();
            let _ = tx.modulation_label();
            let _ = control_response_rate(&tx, Standard::N);
        }
    }

    #[test]
    fn duration_is_whole_us_and_non_decreasing_in_length() {
        for tx in all_valid() {
            for band in [Band::Ghz2_4, Band::Ghz5] {
                let mut prev = Nanos::ZERO;
                for len in 0..4000 {
                    let d = tx.ppdu_duration(len, band);
                    assert_eq!(d.as_ns() % 1000, 0, "{tx:?} {len} B not whole µs");
                    assert!(
                        d >= prev,
                        "{tx:?} {band:?}: {len} B shorter than {}",
                        len - 1
                    );
                    prev = d;
                }
            }
        }
    }

    #[test]
    fn ppdu_timer_equals_ppdu_duration() {
        let mut vectors = all_valid();
        // Invalid vectors too: the timer must give what ppdu_duration gives.
        vectors.extend([
            dsss(0, DsssPreamble::Long),
            ofdm(7),
            ht(200, ChannelWidth::Mhz80, SHORT),
            ht(16, ChannelWidth::Mhz40, LONG),
            vht(200, 0, ChannelWidth::Mhz20, SHORT),
            vht(9, 200, ChannelWidth::Mhz80, SHORT),
        ]);
        let lengths = (0..5000).chain([65_535, 1_048_575, u32::MAX - 1, u32::MAX]);
        for tx in vectors {
            for band in [Band::Ghz2_4, Band::Ghz5] {
                let timer = PpduTimer::new(&tx, band);
                for len in lengths.clone() {
                    assert_eq!(
                        timer.duration(len),
                        tx.ppdu_duration(len, band),
                        "{tx:?} {band:?} {len} B"
                    );
                }
            }
        }
    }
}
