//! The channel's error model: how likely an MPDU is to be lost on a link.
//!
//! A link either loses nothing ([`ErrorModel::None`]), loses each MPDU with a fixed
//! probability ([`ErrorModel::FixedLoss`]), or derives a packet error rate (PER) from the
//! receiver's signal-to-noise ratio and the modulation and coding of the transmission
//! ([`ErrorModel::Snr`]).
//!
//! # The SNR model
//!
//! Each [`TxVector`] has an SNR threshold ([`snr_threshold_db`]): the SNR at which a
//! 1000-byte frame has 10 % PER. Around it the PER of a 1000-byte reference frame follows
//! a logistic "waterfall"
//!
//! ```text
//! PER_ref(snr) = 1 / (1 + exp(k · (snr − snr50)))
//! k      = ln(81) / 2  per dB   (PER falls from 90 % to 10 % over 2 dB)
//! snr50  = threshold − ln(9) / k = threshold − 1 dB
//! ```
//!
//! which, since `exp(k) = 9`, is simply `PER_ref = 1 / (1 + 9^(snr − threshold + 1))`:
//! 90 % at `threshold − 2`, 50 % at `threshold − 1`, 10 % at `threshold`, ≈ 1.2 % at
//! `threshold + 1`. Real coded-OFDM waterfalls in AWGN are about this steep (a couple of
//! dB from "mostly lost" to "mostly received").
//!
//! A frame of `L` bytes is treated as `L / 1000` independent 1000-byte chunks of bits, all
//! of which must survive:
//!
//! ```text
//! PER(L) = 1 − (1 − PER_ref)^(L / 1000)
//! ```
//!
//! so longer frames fail more often at the same SNR, as they do on a real channel. The
//! result is evaluated in log space (`−expm1(L/1000 · ln(1 − PER_ref))`, with
//! `ln(1 − PER_ref)` computed as a softplus) so that tiny PERs at high SNR keep their
//! precision and no input overflows.
//!
//! # Thresholds
//!
//! OFDM, HT and VHT thresholds are derived from the receiver minimum input sensitivity
//! tables of IEEE 802.11-2016 (17.3.10.2 for OFDM, 19.3.19.2 for HT, 21.3.17.2 for VHT).
//! Those sensitivities assume a 10 dB receiver noise figure and a 5 dB implementation
//! margin, so the SNR an (otherwise ideal) receiver needs is
//!
//! ```text
//! threshold_snr = sensitivity − (−174 dBm/Hz + 10·log10(B) + NF 10 dB) − 5 dB
//!               = sensitivity + 101 − 10 − 5        (B = 20 MHz; 10·log10(20e6) ≈ 73)
//!               = sensitivity + 86 dB
//! ```
//!
//! Each doubling of the bandwidth raises the required sensitivity by 3 dB and the thermal
//! noise over the signal bandwidth by the same 3 dB, so the SNR threshold does not depend
//! on the channel width. It does not depend on the guard interval either: the GI changes
//! the symbol duration, not the per-subcarrier SNR, and the standard's tables do not
//! distinguish the two.
//!
//! | rate              | sensitivity (20 MHz) | threshold |
//! |-------------------|----------------------|-----------|
//! | OFDM 6 Mbit/s     | −82 dBm              | 4 dB      |
//! | OFDM 9            | −81                  | 5         |
//! | OFDM 12           | −79                  | 7         |
//! | OFDM 18           | −77                  | 9         |
//! | OFDM 24           | −74                  | 12        |
//! | OFDM 36           | −70                  | 16        |
//! | OFDM 48           | −66                  | 20        |
//! | OFDM 54           | −65                  | 21        |
//! | HT/VHT MCS 0      | −82                  | 4         |
//! | MCS 1             | −79                  | 7         |
//! | MCS 2             | −77                  | 9         |
//! | MCS 3             | −74                  | 12        |
//! | MCS 4             | −70                  | 16        |
//! | MCS 5             | −66                  | 20        |
//! | MCS 6             | −65                  | 21        |
//! | MCS 7             | −64                  | 22        |
//! | VHT MCS 8         | −59                  | 27        |
//! | VHT MCS 9         | −57                  | 29        |
//! | HE-MCS 10         | −54                  | 32        |
//! | HE-MCS 11         | −52                  | 34        |
//! | DSSS 1 Mbit/s     | (approximation)      | −1        |
//! | DSSS 2 Mbit/s     | (approximation)      | 2         |
//! | CCK 5.5 Mbit/s    | (approximation)      | 5         |
//! | CCK 11 Mbit/s     | (approximation)      | 8         |
//!
//! Two spatial streams (HT MCS 8–15, VHT `nss = 2`) use the per-stream MCS threshold plus
//! 3 dB; see [`snr_threshold_db`] for why and for the DSSS/CCK values.
//!
//! HE (IEEE 802.11ax-2021 clause 27) is built the same way VHT MCS 8 and 9 were added to
//! the HT table: the HE receiver minimum input sensitivity table (clause 27) gives the
//! VHT values for HE-MCS 0–9 and −54 / −52 dBm (20 MHz, 10 % PER at 4096 octets, the
//! same noise figure and margin) for the 1024-QAM HE-MCS 10 and 11, so they take the
//! same `+ 86 dB` and the same per-stream rule. HE's longer symbols change the rate,
//! not the SNR a subcarrier needs, and its sensitivities also rise 3 dB per doubling of
//! the width, so the threshold is again independent of width and GI.
//!
//! Simplification: the HT and VHT tables specify 10 % PER for a 4096-octet PSDU, the
//! OFDM table for 1000 octets. All are applied here to the 1000-byte reference frame,
//! which makes HT/VHT slightly pessimistic (under the length scaling above, 10 % PER at
//! 4096 bytes corresponds to ≈ 2.5 % at 1000 bytes, i.e. ≈ 0.7 dB).

use super::{ChannelWidth, GuardInterval, HeGuardInterval, TxVector};

/// Length (bytes) of the reference frame whose PER the waterfall curve describes.
///
/// 1000 octets is the PSDU length the OFDM receiver-sensitivity test of IEEE 802.11-2016
/// 17.3.10.2 uses; other lengths scale from it (see the module documentation).
pub const REFERENCE_FRAME_BYTES: u32 = 1000;

/// SNR span (dB) over which the reference-frame PER falls from 90 % to 10 %.
pub const WATERFALL_WIDTH_DB: f64 = 2.0;

/// PER of the reference frame at the threshold SNR (the sensitivity tables' 10 % point).
pub const THRESHOLD_PER: f64 = 0.1;

/// Frame length (bytes) used by [`best_rate_for_snr`] to judge whether a rate is usable:
/// a full-size Ethernet payload.
pub const RATE_SELECTION_FRAME_BYTES: u32 = 1500;

/// Converts a 20 MHz minimum input sensitivity (dBm) into the SNR threshold (dB):
/// `+101` (minus the thermal noise over 20 MHz), `−10` (noise figure), `−5`
/// (implementation margin).
const SENSITIVITY_TO_SNR_DB: f64 = 101.0 - 10.0 - 5.0;

/// Extra SNR (dB) needed per doubling of the number of spatial streams.
const PER_STREAM_DOUBLING_DB: f64 = 3.0;

/// IEEE 802.11-2016 17.3.10.2: OFDM minimum sensitivity (dBm) at 20 MHz, by rate.
const OFDM_SENSITIVITY_DBM: [(u32, f64); 8] = [
    (6, -82.0),
    (9, -81.0),
    (12, -79.0),
    (18, -77.0),
    (24, -74.0),
    (36, -70.0),
    (48, -66.0),
    (54, -65.0),
];

/// IEEE 802.11-2016 19.3.19.2 (MCS 0–7) and 21.3.17.2 (MCS 8–9), IEEE 802.11ax-2021
/// clause 27 (HE-MCS 10–11): HT/VHT/HE minimum sensitivity (dBm) at 20 MHz, by
/// per-stream MCS index.
const MCS_SENSITIVITY_DBM: [f64; 12] = [
    -82.0, -79.0, -77.0, -74.0, -70.0, -66.0, -65.0, -64.0, -59.0, -57.0, -54.0, -52.0,
];
/// The highest HT/VHT per-stream MCS index of [`MCS_SENSITIVITY_DBM`].
const VHT_MAX_MCS_INDEX: u8 = 9;

/// DSSS/CCK thresholds (dB) at 10 % PER for 1000 bytes, by rate in kbit/s (approximations;
/// see [`snr_threshold_db`]).
const DSSS_THRESHOLD_DB: [(u32, f64); 4] = [(1000, -1.0), (2000, 2.0), (5500, 5.0), (11000, 8.0)];

/// How frames on a link fail.
///
/// Applied per MPDU: each MPDU of an A-MPDU is lost independently with the probability
/// [`ErrorModel::per`] gives for its own length.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ErrorModel {
    /// Every frame is received.
    None,
    /// Each MPDU is lost independently with this probability (0..=1), whatever its length
    /// and rate: a simple knob for experiments that want a known loss rate.
    FixedLoss {
        /// The loss probability of every MPDU, 0 to 1.
        probability: f64,
    },
    /// PER from the receiver's SNR (dB) with the waterfall curves of this module: depends
    /// on the rate and the MPDU length.
    Snr {
        /// The receiver's signal-to-noise ratio in dB.
        snr_db: f64,
    },
}

impl ErrorModel {
    /// Probability in `[0, 1]` that an MPDU of `mpdu_bytes` bytes sent with `tx` is lost.
    ///
    /// - [`ErrorModel::None`]: exactly `0.0`.
    /// - [`ErrorModel::FixedLoss`]: `probability` clamped to `[0, 1]`, for any length.
    /// - [`ErrorModel::Snr`]: `1 − (1 − PER_ref(snr))^(mpdu_bytes / 1000)` (module docs);
    ///   non-increasing in SNR, non-decreasing in length, and non-decreasing in MCS (for a
    ///   fixed number of spatial streams) or legacy rate. A zero-length frame carries no
    ///   bits and so is never lost.
    ///
    /// Never panics. Invalid parameters (rejected by [`ErrorModel::validate`]) still give
    /// a probability: a NaN loss probability or NaN SNR gives `1.0` (everything is lost,
    /// so a misconfiguration is conspicuous rather than silently lossless); an SNR of
    /// `+∞` gives `0.0` and `−∞` gives `1.0` for a non-empty frame.
    #[inline]
    pub fn per(&self, tx: &TxVector, mpdu_bytes: u32) -> f64 {
        match *self {
            ErrorModel::None => 0.0,
            ErrorModel::FixedLoss { probability } => {
                if probability.is_nan() {
                    1.0
                } else {
                    probability.clamp(0.0, 1.0)
                }
            }
            ErrorModel::Snr { snr_db } => snr_per(tx, snr_db, mpdu_bytes),
        }
    }

    /// Checks the parameters: a `FixedLoss` probability must be finite and within
    /// `[0, 1]`; an `Snr` value must be finite. Returns a message naming the problem.
    pub fn validate(&self) -> Result<(), String> {
        match *self {
            ErrorModel::None => Ok(()),
            ErrorModel::FixedLoss { probability } => {
                if probability.is_finite() && (0.0..=1.0).contains(&probability) {
                    Ok(())
                } else {
                    Err(format!(
                        "fixed loss probability must be a finite number in [0, 1], got {probability}"
                    ))
                }
            }
            ErrorModel::Snr { snr_db } => {
                if snr_db.is_finite() {
                    Ok(())
                } else {
                    Err(format!("SNR must be a finite number of dB, got {snr_db}"))
                }
            }
        }
    }
}

/// SNR (dB) at which a 1000-byte frame sent with `tx` has 10 % PER.
///
/// - OFDM (IEEE 802.11-2016 17.3.10.2), HT (19.3.19.2), VHT (21.3.17.2) and HE
///   (802.11ax-2021 clause 27): the 20 MHz
///   minimum input sensitivity plus 86 dB (`+101` thermal noise over 20 MHz, `−10` noise
///   figure, `−5` implementation margin; derivation and table in the module docs). The
///   result is independent of channel width (sensitivity and noise both rise 3 dB per
///   doubling) and of guard interval.
/// - Spatial streams: two streams add 3 dB to the per-stream MCS threshold. This is an
///   approximation: the SNR given for a link is the total received SNR, and with two
///   streams the transmit power is split between them, so each stream sees about half of
///   it; MIMO diversity gain and inter-stream interference are ignored. (More streams
///   than the enum documents add 3 dB per doubling, `3·log2(nss)`.)
/// - DSSS/CCK (clauses 15 and 16): 1 Mbit/s DBPSK ≈ −1 dB, 2 Mbit/s DQPSK ≈ 2 dB,
///   5.5 Mbit/s CCK ≈ 5 dB, 11 Mbit/s CCK ≈ 8 dB. These are approximations in the style
///   of ns-3's DSSS error-rate model: the AWGN bit error rate of (D)BPSK/(D)QPSK/CCK at
///   the chip-rate SNR, improved by the processing gain of spreading (10.4 dB for the
///   11-chip Barker code at 1 Mbit/s, less as the rate grows). The standard's only
///   sensitivity figures for these PHYs (8 % FER at 1024 octets, e.g. −76 dBm at
///   11 Mbit/s) are loose minimums, not a per-rate curve, so they are not used here.
///
/// Values outside the documented ranges never panic: an OFDM rate takes the threshold of
/// the next standard rate up (54's if above), a DSSS rate that of the next rate up (11's
/// if above), an HT/VHT MCS index above 9 (HE above 11) is clamped to 9 (11), and
/// `nss = 0` counts as one stream.
pub fn snr_threshold_db(tx: &TxVector) -> f64 {
    match *tx {
        TxVector::Dsss { rate_kbps, .. } => {
            DSSS_THRESHOLD_DB
                .iter()
                .find(|&&(rate, _)| rate_kbps <= rate)
                .unwrap_or(&DSSS_THRESHOLD_DB[DSSS_THRESHOLD_DB.len() - 1])
                .1
        }
        TxVector::Ofdm { rate_mbps } => {
            OFDM_SENSITIVITY_DBM
                .iter()
                .find(|&&(rate, _)| rate_mbps <= rate)
                .unwrap_or(&OFDM_SENSITIVITY_DBM[OFDM_SENSITIVITY_DBM.len() - 1])
                .1
                + SENSITIVITY_TO_SNR_DB
        }
        TxVector::Ht { mcs, .. } => {
            let (index, nss) = ht_mcs_split(mcs);
            mcs_threshold_db(index, nss)
        }
        TxVector::Vht { mcs, nss, .. } => mcs_threshold_db(mcs.min(VHT_MAX_MCS_INDEX), nss),
        TxVector::He { mcs, nss, .. } => mcs_threshold_db(mcs, nss),
    }
}

/// The highest-rate TxVector among `candidates` whose 1500-byte PER at `snr_db` is at
/// most 10 %, or the lowest-rate candidate if none qualifies.
///
/// This is an ideal fixed-rate choice, used when a station is configured with an SNR but
/// no MCS: it is what a rate-control algorithm that knew the channel would settle on.
/// "Rate" is the nominal PHY data rate computed from the TxVector itself (DSSS/OFDM rate;
/// HT/VHT from data subcarriers, bits per subcarrier, coding rate, streams and symbol
/// duration, IEEE 802.11-2016 19.5 and 21.5). Among candidates with equal rate the one
/// with the lower PER wins, then the earlier one in `candidates`.
///
/// `candidates` should not be empty; if it is, the result is OFDM 6 Mbit/s, the mandatory
/// rate of every OFDM PHY (17.3.5.1), rather than a panic.
pub fn best_rate_for_snr(candidates: &[TxVector], snr_db: f64) -> TxVector {
    let model = ErrorModel::Snr { snr_db };
    let scored = candidates.iter().map(|tx| {
        (
            *tx,
            nominal_rate_kbps(tx),
            model.per(tx, RATE_SELECTION_FRAME_BYTES),
        )
    });

    // Highest rate among those that qualify; ties broken by lower PER, then first.
    let mut best: Option<(TxVector, f64, f64)> = None;
    for (tx, rate, per) in scored.clone().filter(|&(_, _, per)| per <= THRESHOLD_PER) {
        let better = match best {
            None => true,
            Some((_, best_rate, best_per)) => {
                rate > best_rate || (rate == best_rate && per < best_per)
            }
        };
        if better {
            best = Some((tx, rate, per));
        }
    }
    if let Some((tx, _, _)) = best {
        return tx;
    }

    // None qualifies: the lowest rate; ties broken by lower PER, then first.
    let mut lowest: Option<(TxVector, f64, f64)> = None;
    for (tx, rate, per) in scored {
        let better = match lowest {
            None => true,
            Some((_, low_rate, low_per)) => rate < low_rate || (rate == low_rate && per < low_per),
        };
        if better {
            lowest = Some((tx, rate, per));
        }
    }
    lowest.map_or(TxVector::Ofdm { rate_mbps: 6 }, |(tx, _, _)| tx)
}

/// Slope `k` (per dB) of the logistic waterfall: `ln(81) / 2`, so the PER falls from
/// 90 % to 10 % over [`WATERFALL_WIDTH_DB`].
fn waterfall_slope() -> f64 {
    81.0_f64.ln() / WATERFALL_WIDTH_DB
}

/// PER of an `mpdu_bytes`-byte frame sent with `tx` at `snr_db`; see the module docs.
fn snr_per(tx: &TxVector, snr_db: f64, mpdu_bytes: u32) -> f64 {
    if snr_db.is_nan() {
        return 1.0;
    }
    if mpdu_bytes == 0 {
        return 0.0;
    }
    let k = waterfall_slope();
    // snr50 = threshold − ln(9)/k, the SNR of 50 % reference PER.
    let snr50 = snr_threshold_db(tx) - 9.0_f64.ln() / k;
    // 1 − PER_ref = 1 / (1 + exp(−k·(snr − snr50))), so
    // −ln(1 − PER_ref) = softplus(−k·(snr − snr50)) ≥ 0.
    let neg_ln_success_ref = softplus(-k * (snr_db - snr50));
    let chunks = f64::from(mpdu_bytes) / f64::from(REFERENCE_FRAME_BYTES);
    // PER = 1 − (1 − PER_ref)^chunks = −expm1(chunks · ln(1 − PER_ref)).
    let per = -(-chunks * neg_ln_success_ref).exp_m1();
    if per.is_nan() {
        1.0
    } else {
        per.clamp(0.0, 1.0)
    }
}

/// The natural log of the probability that `bytes` bytes (a piece of a frame, so not
/// necessarily whole) sent with `tx` get through at `snr_db`: the same waterfall as the
/// PER of a whole frame ([`ErrorModel::per`]), so that the pieces of a frame received
/// under changing interference combine by adding their logs (ns-3's
/// `InterferenceHelper` multiplies the success rates of a frame's chunks the same way).
pub fn ln_success(tx: &TxVector, snr_db: f64, bytes: f64) -> f64 {
    if snr_db.is_nan() {
        return f64::NEG_INFINITY;
    }
    if bytes <= 0.0 {
        return 0.0;
    }
    let k = waterfall_slope();
    let snr50 = snr_threshold_db(tx) - 9.0_f64.ln() / k;
    -(bytes / f64::from(REFERENCE_FRAME_BYTES)) * softplus(-k * (snr_db - snr50))
}

/// `ln(1 + e^y)`, without overflow for large `y` or loss of precision for very negative `y`.
fn softplus(y: f64) -> f64 {
    if y > 0.0 {
        y + (-y).exp().ln_1p()
    } else {
        y.exp().ln_1p()
    }
}

/// Splits an HT MCS index into (per-stream MCS 0–7, number of spatial streams):
/// MCS 8·(n−1) … 8·n−1 use n streams (IEEE 802.11-2016 19.5). Indices beyond the four
/// streams of HT count as four streams.
fn ht_mcs_split(mcs: u8) -> (u8, u8) {
    (mcs % 8, (mcs / 8 + 1).min(4))
}

/// Threshold for per-stream MCS `index` (clamped to 0–11) with `nss` streams.
fn mcs_threshold_db(index: u8, nss: u8) -> f64 {
    let index = usize::from(index).min(MCS_SENSITIVITY_DBM.len() - 1);
    let nss = f64::from(nss.max(1));
    MCS_SENSITIVITY_DBM[index] + SENSITIVITY_TO_SNR_DB + PER_STREAM_DOUBLING_DB * nss.log2()
}

/// Nominal PHY data rate (kbit/s) of `tx`, used only to rank candidates.
///
/// HT/VHT: `N_SD · N_BPSCS · R · N_SS / T_SYM` with N_SD = 52/108/234 data subcarriers at
/// 20/40/80 MHz and T_SYM = 4.0 µs (long GI) or 3.6 µs (short GI) (IEEE 802.11-2016 19.5,
/// 21.5). HE: N_SD = 234/468/980/1960 at 20/40/80/160 MHz and T_SYM = 12.8 µs + GI
/// (802.11ax-2021 27.5). Kept local so this module does not depend on the rate tables.
fn nominal_rate_kbps(tx: &TxVector) -> f64 {
    // Bits per subcarrier and coding rate (numerator, denominator) of MCS 0–11.
    const BPSCS: [u32; 12] = [1, 2, 2, 4, 4, 6, 6, 6, 8, 8, 10, 10];
    const CODING: [(u32, u32); 12] = [
        (1, 2),
        (1, 2),
        (3, 4),
        (1, 2),
        (3, 4),
        (2, 3),
        (3, 4),
        (5, 6),
        (3, 4),
        (5, 6),
        (3, 4),
        (5, 6),
    ];
    let rate = |index: u8, nss: u8, n_sd: f64, t_sym_us: f64| -> f64 {
        let i = usize::from(index).min(BPSCS.len() - 1);
        let (num, den) = CODING[i];
        let bits_per_symbol =
            n_sd * f64::from(BPSCS[i]) * f64::from(num) / f64::from(den) * f64::from(nss.max(1));
        bits_per_symbol / t_sym_us * 1000.0
    };
    let mcs_rate = |index: u8, nss: u8, width: ChannelWidth, gi: GuardInterval| -> f64 {
        let n_sd = match width {
            ChannelWidth::Mhz20 => 52.0,
            ChannelWidth::Mhz40 => 108.0,
            ChannelWidth::Mhz80 => 234.0,
            ChannelWidth::Mhz160 => 468.0,
        };
        let t_sym_us = match gi {
            GuardInterval::Long => 4.0,
            GuardInterval::Short => 3.6,
        };
        rate(index.min(VHT_MAX_MCS_INDEX), nss, n_sd, t_sym_us)
    };
    match *tx {
        TxVector::Dsss { rate_kbps, .. } => f64::from(rate_kbps),
        TxVector::Ofdm { rate_mbps } => f64::from(rate_mbps) * 1000.0,
        TxVector::Ht { mcs, width, gi } => {
            let (index, nss) = ht_mcs_split(mcs);
            mcs_rate(index, nss, width, gi)
        }
        TxVector::Vht {
            mcs,
            nss,
            width,
            gi,
        } => mcs_rate(mcs, nss, width, gi),
        TxVector::He {
            mcs,
            nss,
            width,
            gi,
            ..
        } => {
            let n_sd = match width {
                ChannelWidth::Mhz20 => 234.0,
                ChannelWidth::Mhz40 => 468.0,
                ChannelWidth::Mhz80 => 980.0,
                ChannelWidth::Mhz160 => 1960.0,
            };
            let t_sym_us = match gi {
                HeGuardInterval::Us0_8 => 13.6,
                HeGuardInterval::Us1_6 => 14.4,
                HeGuardInterval::Us3_2 => 16.0,
            };
            rate(mcs, nss, n_sd, t_sym_us)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::phy::DsssPreamble;

    fn ht(mcs: u8) -> TxVector {
        TxVector::Ht {
            mcs,
            width: ChannelWidth::Mhz20,
            gi: GuardInterval::Long,
        }
    }

    fn vht(mcs: u8, nss: u8) -> TxVector {
        TxVector::Vht {
            mcs,
            nss,
            width: ChannelWidth::Mhz80,
            gi: GuardInterval::Short,
        }
    }

    fn ofdm(rate_mbps: u32) -> TxVector {
        TxVector::Ofdm { rate_mbps }
    }

    fn dsss(rate_kbps: u32) -> TxVector {
        TxVector::Dsss {
            rate_kbps,
            preamble: DsssPreamble::Long,
        }
    }

    #[test]
    fn pieces_of_a_frame_combine_to_the_whole_frame() {
        let tx = TxVector::Ofdm { rate_mbps: 24 };
        for snr in [5.0, 12.0, 15.0, 18.0, 25.0] {
            let whole = ErrorModel::Snr { snr_db: snr }.per(&tx, 1500);
            let pieces = ln_success(&tx, snr, 400.0) + ln_success(&tx, snr, 1100.0);
            assert!((1.0 - pieces.exp() - whole).abs() < 1e-12, "{snr}: {whole}");
        }
        assert_eq!(ln_success(&tx, 10.0, 0.0), 0.0);
        assert_eq!(ln_success(&tx, f64::NAN, 10.0), f64::NEG_INFINITY);
    }

    fn snr_per_of(tx: &TxVector, snr_db: f64, bytes: u32) -> f64 {
        ErrorModel::Snr { snr_db }.per(tx, bytes)
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    /// Every TxVector family, grouped so that within a group the rate increases.
    fn rate_ladders() -> Vec<Vec<TxVector>> {
        vec![
            [1000, 2000, 5500, 11000].map(dsss).to_vec(),
            [6, 9, 12, 18, 24, 36, 48, 54].map(ofdm).to_vec(),
            (0..8).map(ht).collect(),
            (8..16).map(ht).collect(),
            (0..10).map(|m| vht(m, 1)).collect(),
            (0..10).map(|m| vht(m, 2)).collect(),
            (0..12).map(|m| he(m, 1)).collect(),
            (0..12).map(|m| he(m, 4)).collect(),
        ]
    }

    fn he(mcs: u8, nss: u8) -> TxVector {
        TxVector::He {
            mcs,
            nss,
            width: ChannelWidth::Mhz80,
            gi: HeGuardInterval::Us0_8,
            ltf: crate::phy::HeLtf::X2,
            format: crate::phy::HeFormat::Su,
            pe: crate::phy::NominalPacketPadding::Us0,
        }
    }

    /// HE follows the VHT rule: the VHT thresholds for HE-MCS 0–9 (the standard's
    /// sensitivities are the same), −54 / −52 dBm + 86 dB for 1024-QAM, +3 dB per
    /// doubling of the streams; none depends on width or GI.
    #[test]
    fn he_thresholds() {
        for mcs in 0..10 {
            assert_eq!(
                snr_threshold_db(&he(mcs, 1)),
                snr_threshold_db(&vht(mcs, 1))
            );
            assert_eq!(
                snr_threshold_db(&he(mcs, 2)),
                snr_threshold_db(&vht(mcs, 2))
            );
        }
        assert_eq!(snr_threshold_db(&he(10, 1)), 32.0); // −54 + 86
        assert_eq!(snr_threshold_db(&he(11, 1)), 34.0); // −52 + 86
        assert_eq!(snr_threshold_db(&he(11, 4)), 40.0); // + 3·log2(4)
        for width in [ChannelWidth::Mhz20, ChannelWidth::Mhz160] {
            for gi in [HeGuardInterval::Us1_6, HeGuardInterval::Us3_2] {
                let TxVector::He {
                    ltf, format, pe, ..
                } = he(11, 1)
                else {
                    unreachable!()
                };
                let tx = TxVector::He {
                    mcs: 11,
                    nss: 1,
                    width,
                    gi,
                    ltf,
                    format,
                    pe,
                };
                assert_eq!(snr_threshold_db(&tx), 34.0);
            }
        }
        // An invalid VHT MCS still takes VHT MCS 9's threshold, not 1024-QAM's.
        assert_eq!(snr_threshold_db(&vht(11, 1)), 29.0);
        // At 40 dB an HE80 1SS link picks HE-MCS 11; at 30 dB HE-MCS 9 (29 ≤ 30 < 32).
        let ladder: Vec<TxVector> = (0..12).map(|m| he(m, 1)).collect();
        assert_eq!(best_rate_for_snr(&ladder, 40.0), he(11, 1));
        assert_eq!(best_rate_for_snr(&ladder, 30.0), he(9, 1));
        // HE80 HE-MCS 11 1SS: 980 × 10 × 5/6 bits / 13.6 µs = 600.49 Mbit/s.
        let r = nominal_rate_kbps(&he(11, 1));
        assert!((r - 600_490.2).abs() < 0.1, "{r}");
    }

    #[test]
    fn thresholds_match_hand_computed_values() {
        assert_eq!(snr_threshold_db(&ofdm(54)), 21.0); // −65 + 101 − 10 − 5
        assert_eq!(snr_threshold_db(&ofdm(6)), 4.0); // −82 + 86
        assert_eq!(snr_threshold_db(&ofdm(24)), 12.0); // −74 + 86
        assert_eq!(snr_threshold_db(&ht(0)), 4.0); // −82 + 86
        assert_eq!(snr_threshold_db(&ht(7)), 22.0); // −64 + 86
        assert_eq!(snr_threshold_db(&ht(8)), 7.0); // MCS0 + 3 dB (two streams)
        assert_eq!(snr_threshold_db(&ht(15)), 25.0); // MCS7 + 3 dB
        assert_eq!(snr_threshold_db(&vht(8, 1)), 27.0); // −59 + 86
        assert_eq!(snr_threshold_db(&vht(9, 1)), 29.0); // −57 + 86
        assert_eq!(snr_threshold_db(&vht(9, 2)), 32.0); // + 3 dB
        assert_eq!(snr_threshold_db(&dsss(1000)), -1.0);
        assert_eq!(snr_threshold_db(&dsss(2000)), 2.0);
        assert_eq!(snr_threshold_db(&dsss(5500)), 5.0);
        assert_eq!(snr_threshold_db(&dsss(11000)), 8.0);
    }

    #[test]
    fn threshold_independent_of_width_and_gi() {
        for mcs in 0..16 {
            let base = snr_threshold_db(&ht(mcs));
            for width in [
                ChannelWidth::Mhz20,
                ChannelWidth::Mhz40,
                ChannelWidth::Mhz80,
            ] {
                for gi in [GuardInterval::Long, GuardInterval::Short] {
                    assert_eq!(snr_threshold_db(&TxVector::Ht { mcs, width, gi }), base);
                }
            }
        }
        // HT and VHT agree on MCS 0–7.
        for mcs in 0..8 {
            assert_eq!(snr_threshold_db(&vht(mcs, 1)), snr_threshold_db(&ht(mcs)));
            assert_eq!(
                snr_threshold_db(&vht(mcs, 2)),
                snr_threshold_db(&ht(mcs + 8))
            );
        }
    }

    #[test]
    fn per_is_ten_percent_at_threshold() {
        for ladder in rate_ladders() {
            for tx in ladder {
                let t = snr_threshold_db(&tx);
                let p = snr_per_of(&tx, t, 1000);
                assert!(close(p, 0.1), "{tx:?}: {p}");
                assert!(snr_per_of(&tx, t + 1.0, 1000) < 0.1);
                assert!(snr_per_of(&tx, t - 1.0, 1000) > 0.1);
                // 50 % one dB below, 90 % two dB below.
                assert!(close(snr_per_of(&tx, t - 1.0, 1000), 0.5));
                assert!(close(snr_per_of(&tx, t - 2.0, 1000), 0.9));
            }
        }
    }

    #[test]
    fn per_scales_with_length() {
        let tx = ht(4);
        let t = snr_threshold_db(&tx);
        assert!(close(snr_per_of(&tx, t, 2000), 1.0 - 0.9 * 0.9));
        assert!(close(snr_per_of(&tx, t, 500), 1.0 - 0.9_f64.sqrt()));
        assert_eq!(snr_per_of(&tx, t, 0), 0.0);
        assert_eq!(snr_per_of(&tx, f64::NEG_INFINITY, 0), 0.0);
    }

    #[test]
    fn per_is_monotonic() {
        let lengths = [1, 14, 100, 500, 1000, 1500, 4000, 11454, 65535, u32::MAX];
        let snrs: Vec<f64> = (-200..=450).map(|i| f64::from(i) * 0.2).collect();
        for ladder in rate_ladders() {
            for tx in &ladder {
                for &len in &lengths {
                    // Non-increasing in SNR.
                    let mut prev = 1.0;
                    for &snr in &snrs {
                        let p = snr_per_of(tx, snr, len);
                        assert!((0.0..=1.0).contains(&p));
                        assert!(p <= prev, "{tx:?} len {len} snr {snr}: {p} > {prev}");
                        prev = p;
                    }
                }
                for &snr in &snrs {
                    // Non-decreasing in length.
                    let mut prev = 0.0;
                    for &len in &lengths {
                        let p = snr_per_of(tx, snr, len);
                        assert!(p >= prev, "{tx:?} snr {snr} len {len}: {p} < {prev}");
                        prev = p;
                    }
                }
            }
            // Non-decreasing in rate at fixed SNR, strictly at mid-curve SNR.
            for &snr in &snrs {
                let pers: Vec<f64> = ladder.iter().map(|tx| snr_per_of(tx, snr, 1500)).collect();
                assert!(pers.windows(2).all(|w| w[0] <= w[1]), "{ladder:?} at {snr}");
            }
            for pair in ladder.windows(2) {
                let snr = snr_threshold_db(&pair[1]);
                assert!(snr_per_of(&pair[0], snr, 1000) < snr_per_of(&pair[1], snr, 1000));
            }
        }
    }

    #[test]
    fn per_handles_extreme_inputs() {
        let tx = ht(7);
        assert_eq!(snr_per_of(&tx, f64::INFINITY, 1500), 0.0);
        assert_eq!(snr_per_of(&tx, f64::NEG_INFINITY, 1500), 1.0);
        assert_eq!(snr_per_of(&tx, f64::NAN, 1500), 1.0);
        assert_eq!(snr_per_of(&tx, 1e308, u32::MAX), 0.0);
        assert_eq!(snr_per_of(&tx, -1e308, 1), 1.0);
        // High SNR keeps precision instead of rounding to zero.
        let p = snr_per_of(&tx, 32.0, 1500);
        assert!(p > 0.0 && p < 1e-9, "{p}");
        // Out-of-range TxVectors don't panic.
        for tx in [
            ofdm(0),
            ofdm(1000),
            dsss(0),
            dsss(u32::MAX),
            ht(255),
            vht(255, 0),
            vht(0, 255),
        ] {
            let p = snr_per_of(&tx, 10.0, 1500);
            assert!((0.0..=1.0).contains(&p));
            assert!(snr_threshold_db(&tx).is_finite());
        }
    }

    #[test]
    fn none_and_fixed_loss() {
        assert_eq!(ErrorModel::None.per(&ht(7), 1500), 0.0);
        assert_eq!(ErrorModel::None.per(&ht(7), u32::MAX), 0.0);
        let fixed = ErrorModel::FixedLoss { probability: 0.3 };
        for len in [0, 1, 1000, 1500, 65535, u32::MAX] {
            assert_eq!(fixed.per(&ht(7), len), 0.3);
            assert_eq!(fixed.per(&dsss(1000), len), 0.3);
        }
        assert_eq!(
            ErrorModel::FixedLoss { probability: 1.5 }.per(&ht(0), 10),
            1.0
        );
        assert_eq!(
            ErrorModel::FixedLoss { probability: -0.5 }.per(&ht(0), 10),
            0.0
        );
        assert_eq!(
            ErrorModel::FixedLoss {
                probability: f64::NAN
            }
            .per(&ht(0), 10),
            1.0
        );
    }

    #[test]
    fn validate_checks_ranges() {
        assert!(ErrorModel::None.validate().is_ok());
        assert!(ErrorModel::FixedLoss { probability: 0.0 }
            .validate()
            .is_ok());
        assert!(ErrorModel::FixedLoss { probability: 1.0 }
            .validate()
            .is_ok());
        assert!(ErrorModel::FixedLoss { probability: 0.25 }
            .validate()
            .is_ok());
        assert!(ErrorModel::FixedLoss { probability: 1.5 }
            .validate()
            .is_err());
        assert!(ErrorModel::FixedLoss { probability: -0.1 }
            .validate()
            .is_err());
        assert!(ErrorModel::FixedLoss {
            probability: f64::NAN
        }
        .validate()
        .is_err());
        assert!(ErrorModel::FixedLoss {
            probability: f64::INFINITY
        }
        .validate()
        .is_err());
        assert!(ErrorModel::Snr { snr_db: -5.0 }.validate().is_ok());
        assert!(ErrorModel::Snr { snr_db: f64::NAN }.validate().is_err());
        assert!(ErrorModel::Snr {
            snr_db: f64::INFINITY
        }
        .validate()
        .is_err());
    }

    #[test]
    fn best_rate_picks_highest_usable() {
        let ht20: Vec<TxVector> = (0..8).map(ht).collect();
        assert_eq!(best_rate_for_snr(&ht20, 40.0), ht(7));
        assert_eq!(best_rate_for_snr(&ht20, 5.0), ht(0));
        assert_eq!(best_rate_for_snr(&ht20, -10.0), ht(0));
        assert_eq!(best_rate_for_snr(&ht20, f64::NAN), ht(0));
        // Order of candidates does not matter.
        let mut shuffled = ht20.clone();
        shuffled.reverse();
        shuffled.swap(1, 5);
        assert_eq!(best_rate_for_snr(&shuffled, 40.0), ht(7));
        assert_eq!(best_rate_for_snr(&shuffled, -10.0), ht(0));
        // Just above MCS4's threshold is not enough for 1500 bytes; a bit more is.
        assert_eq!(best_rate_for_snr(&ht20, 16.0), ht(3));
        assert_eq!(best_rate_for_snr(&ht20, 16.5), ht(4));
        // Mixed formats: lowest rate is DSSS 1 Mbit/s when nothing qualifies.
        let mixed = [ofdm(54), dsss(11000), ht(0), dsss(1000), ofdm(6)];
        assert_eq!(best_rate_for_snr(&mixed, -10.0), dsss(1000));
        assert_eq!(best_rate_for_snr(&mixed, 40.0), ofdm(54));
        // Two streams win when the SNR supports them.
        let mimo: Vec<TxVector> = (0..16).map(ht).collect();
        assert_eq!(best_rate_for_snr(&mimo, 40.0), ht(15));
        assert_eq!(best_rate_for_snr(&[], 40.0), ofdm(6));
    }

    #[test]
    fn nominal_rates_match_the_standard() {
        assert_eq!(nominal_rate_kbps(&ht(7)), 65_000.0);
        assert_eq!(nominal_rate_kbps(&ht(0)), 6_500.0);
        assert_eq!(nominal_rate_kbps(&ht(15)), 130_000.0);
        let r = nominal_rate_kbps(&vht(9, 2));
        assert!((r - 866_666.67).abs() < 0.1, "{r}");
    }
}
