//! HE (802.11ax) single-user PPDUs: data rates, preambles, TXTIME and packet extension,
//! behind the [`TxVector::He`](super::TxVector::He) variant of `rates.rs`.
//!
//! IEEE 802.11ax-2021 clause 27, for an SU or ER SU PPDU over the whole channel (one RU
//! of 242, 484, 996 or 2×996 tones at 20, 40, 80, 160 MHz):
//!
//! * **Preamble** (27.3.4, 27.3.11): L-STF 8 + L-LTF 8 + L-SIG 4 + RL-SIG 4 µs, HE-SIG-A
//!   of 2 symbols (8 µs; 4 symbols, 16 µs, in an ER SU PPDU), HE-STF 4 µs, then N_HE-LTF
//!   HE-LTF symbols of 3.2 (1x), 6.4 (2x) or 12.8 µs (4x) plus the guard interval, with
//!   N_HE-LTF = 1, 2, 4, 4 for 1–4 streams (27.3.11.10).
//! * **Data**: symbols of 12.8 µs plus a GI of 0.8, 1.6 or 3.2 µs (Table 27-12).
//!   N_DBPS = ⌊N_SD × N_BPSCS × N_SS × R⌋ with N_SD = 234, 468, 980, 1960 data tones of
//!   the RU (27.5, the HE-MCS tables). N_SYM = ⌈(16 + 8·LENGTH + 6)/N_DBPS⌉: SERVICE,
//!   the PSDU and 6 tail bits of one encoder, as ns-3 3.37 counts them for HE
//!   (`HePhy` reuses the BCC form with N_ES = 1). An LDPC-coded PPDU has no tail bits
//!   and may add an LDPC extra symbol segment (27.3.12.5.2); neither is modelled.
//! * **Packet extension** (27.3.13): with a nominal padding of 8 or 16 µs the PE is
//!   `max(0, nominal − 4·(4 − a))` µs (Table 27-46), `a` the pre-FEC padding factor:
//!   4 if the last symbol is full, else ⌈N_excess / N_DBPS,short⌉ capped at 4, with
//!   N_excess the bits in the last symbol and N_DBPS,short the bits of its first quarter
//!   (N_SD,short = 60, 120, 240, 492; 27.3.12.3).
//! * **TXTIME** (27.4.3): the preamble + N_SYM symbols + PE, + 6 µs signal extension at
//!   2.4 GHz. It is not rounded to 4 µs: an HE PPDU ends where its last field ends (the
//!   L-SIG LENGTH rounds up, the air does not).
//!
//! What txop picks: PE nominal 0 µs unless the scenario asks (ns-3 3.37 sends no PE on
//! SU PPDUs, and a receiver that needs none advertises 0 µs); the HE-LTF the scenario
//! names, by default 2x (the size every HE device supports at every GI but 3.2 µs).
//!
//! ns-3 3.37 counts every HE-LTF as 8 µs whatever the GI (`HePhy::GetTrainingDuration`,
//! "TODO extract from TxVector"): that is the 2x HE-LTF with a 1.6 µs GI. Its durations
//! equal txop's for that pairing, and exceed those of a 2x HE-LTF at 0.8 µs by 0.8 µs per
//! HE-LTF (tests below).

use super::rates::{LEGACY_PREAMBLE_US, SERVICE_BITS, SIGNAL_EXTENSION_US, TAIL_BITS};
use super::{Band, ChannelWidth, HeFormat, HeGuardInterval, HeLtf, NominalPacketPadding};

/// N_BPSCS, coded bits per subcarrier per stream, of HE-MCS 0–11 (BPSK, QPSK, QPSK,
/// 16-QAM, 16-QAM, 64-QAM ×3, 256-QAM ×2, 1024-QAM ×2).
const BPSCS: [u64; 12] = [1, 2, 2, 4, 4, 6, 6, 6, 8, 8, 10, 10];
/// Coding rate R (numerator, denominator) of HE-MCS 0–11.
const CODING_RATE: [(u64, u64); 12] = [
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
/// Largest HE-MCS index.
pub const HE_MAX_MCS: u8 = 11;
/// Largest number of spatial streams txop models for HE.
pub const HE_MAX_NSS: u8 = 4;
/// L-STF 8 + L-LTF 8 + L-SIG 4 µs, in ns.
const LEGACY_PREAMBLE_NS: u64 = LEGACY_PREAMBLE_US * 1000;
/// RL-SIG, one 4 µs symbol (27.3.11.5).
const RL_SIG_NS: u64 = 4_000;
/// HE-STF of a non-trigger-based PPDU: 4 µs (27.3.11.9).
const HE_STF_NS: u64 = 4_000;
/// The data symbol without its GI: 12.8 µs (Table 27-12).
const SYMBOL_NO_GI_NS: u64 = 12_800;
/// aSignalExtension at 2.4 GHz, 6 µs (27.4.3, as for ERP and HT).
const SIGNAL_EXTENSION_NS: u64 = SIGNAL_EXTENSION_US * 1000;

/// The largest A-MPDU an HE station may announce: `2^(20 + 3) − 1` bytes, the VHT
/// exponent 7 extended by the HE capabilities' Maximum A-MPDU Length Exponent
/// Extension (up to 3; IEEE 802.11ax-2021 9.4.2.248.2).
pub const HE_MAX_AMPDU_BYTES: u32 = (1 << 23) - 1;
/// The block-ack window of an HE block-ack agreement: 256 MPDUs
/// (`IEEE80211_MAX_AMPDU_BUF_HE`; reference §11.3).
pub const HE_BA_WINDOW: u16 = 256;
/// A compressed BlockAck with the 256-bit bitmap: the 24 bytes of the 64-MPDU one
/// (FC, Duration, RA, TA, BA Control, Starting Sequence Control, FCS) and a 32-byte
/// bitmap instead of 8 (IEEE 802.11ax-2021 9.3.1.8.2: the Fragment Number subfield of
/// the Starting Sequence Control gives the bitmap's length).
pub const BLOCK_ACK_256_BYTES: u32 = 56;

/// Data subcarriers of the RU that fills the channel: RU-242 (20 MHz) 234, RU-484 468,
/// RU-996 980, RU-2×996 (160 MHz) 1960 (27.5).
pub fn n_sd(width: ChannelWidth) -> u64 {
    match width {
        ChannelWidth::Mhz20 => 234,
        ChannelWidth::Mhz40 => 468,
        ChannelWidth::Mhz80 => 980,
        ChannelWidth::Mhz160 => 1960,
    }
}

/// N_SD,short of the RU, the data tones of the first quarter of the last symbol used for
/// the pre-FEC padding factor: 60, 120, 240, 492 (27.3.12.3, Table 27-33).
fn n_sd_short(width: ChannelWidth) -> u64 {
    match width {
        ChannelWidth::Mhz20 => 60,
        ChannelWidth::Mhz40 => 120,
        ChannelWidth::Mhz80 => 240,
        ChannelWidth::Mhz160 => 492,
    }
}

/// Coded bits per symbol of `mcs` (clamped to 0–11) over `tones` with `nss` streams,
/// times the coding rate, as (numerator, denominator).
fn bits_per_symbol(mcs: u8, nss: u8, tones: u64) -> (u64, u64) {
    let i = usize::from(mcs.min(HE_MAX_MCS));
    let (num, den) = CODING_RATE[i];
    (tones * BPSCS[i] * u64::from(nss) * num, den)
}

/// N_DBPS = ⌊N_SD × N_BPSCS × N_SS × R⌋ (27.5). 0 for `nss = 0`.
pub fn ndbps(mcs: u8, nss: u8, width: ChannelWidth) -> u64 {
    let (num, den) = bits_per_symbol(mcs, nss, n_sd(width));
    num / den
}

/// N_DBPS,short = N_SD,short × N_BPSCS × N_SS × R (27.3.12.3).
fn ndbps_short(mcs: u8, nss: u8, width: ChannelWidth) -> u64 {
    let (num, den) = bits_per_symbol(mcs, nss, n_sd_short(width));
    num / den
}

/// The guard interval in ns.
pub fn gi_ns(gi: HeGuardInterval) -> u64 {
    match gi {
        HeGuardInterval::Us0_8 => 800,
        HeGuardInterval::Us1_6 => 1_600,
        HeGuardInterval::Us3_2 => 3_200,
    }
}

/// A data symbol: 12.8 µs + GI (13.6, 14.4, 16 µs).
pub fn symbol_ns(gi: HeGuardInterval) -> u64 {
    SYMBOL_NO_GI_NS + gi_ns(gi)
}

/// One HE-LTF symbol: 3.2, 6.4 or 12.8 µs plus the GI (27.3.11.10).
fn ltf_symbol_ns(ltf: HeLtf, gi: HeGuardInterval) -> u64 {
    let base = match ltf {
        HeLtf::X1 => 3_200,
        HeLtf::X2 => 6_400,
        HeLtf::X4 => 12_800,
    };
    base + gi_ns(gi)
}

/// N_HE-LTF for `nss` space-time streams without STBC: 1, 2, 4, 4, 6, 6, 8, 8
/// (27.3.11.10, Table 27-15).
fn ltf_count(nss: u8) -> u64 {
    match nss {
        0 | 1 => 1,
        2 => 2,
        3 | 4 => 4,
        5 | 6 => 6,
        _ => 8,
    }
}

/// The preamble of an HE SU or ER SU PPDU up to the first data symbol, in ns: legacy
/// preamble, RL-SIG, HE-SIG-A (8 or 16 µs), HE-STF and the HE-LTFs.
pub fn preamble_ns(format: HeFormat, ltf: HeLtf, gi: HeGuardInterval, nss: u8) -> u64 {
    let sig_a = match format {
        HeFormat::Su => 8_000,
        HeFormat::ErSu => 16_000,
    };
    LEGACY_PREAMBLE_NS + RL_SIG_NS + sig_a + HE_STF_NS + ltf_count(nss) * ltf_symbol_ns(ltf, gi)
}

/// The nominal packet padding in µs.
fn nominal_pe_us(pe: NominalPacketPadding) -> u64 {
    match pe {
        NominalPacketPadding::Us0 => 0,
        NominalPacketPadding::Us8 => 8,
        NominalPacketPadding::Us16 => 16,
    }
}

/// The HE TXTIME of one vector with every length-independent term worked out once
/// ([`super::rates::PpduTimer`] and [`super::TxVector::ppdu_duration`] both use it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct HeTimer {
    /// Preamble (+ signal extension at 2.4 GHz), ns.
    pub(crate) fixed_ns: u64,
    /// One data symbol, ns.
    pub(crate) symbol_ns: u64,
    /// N_DBPS, at least 1.
    pub(crate) ndbps: u64,
    /// N_DBPS,short, at least 1.
    pub(crate) ndbps_short: u64,
    /// The nominal packet padding, µs (0 skips the PE computation).
    pub(crate) nominal_pe_us: u64,
}

/// The pieces of an HE vector that [`HeTimer::new`] needs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HeParams {
    pub(crate) mcs: u8,
    pub(crate) nss: u8,
    pub(crate) width: ChannelWidth,
    pub(crate) gi: HeGuardInterval,
    pub(crate) ltf: HeLtf,
    pub(crate) format: HeFormat,
    pub(crate) pe: NominalPacketPadding,
}

impl HeTimer {
    /// The TXTIME terms of `p` in `band`.
    pub(crate) fn new(p: HeParams, band: Band) -> HeTimer {
        let extension = match band {
            Band::Ghz2_4 => SIGNAL_EXTENSION_NS,
            Band::Ghz5 => 0,
        };
        HeTimer {
            fixed_ns: preamble_ns(p.format, p.ltf, p.gi, p.nss) + extension,
            symbol_ns: symbol_ns(p.gi),
            ndbps: ndbps(p.mcs, p.nss, p.width).max(1),
            ndbps_short: ndbps_short(p.mcs, p.nss, p.width).max(1),
            nominal_pe_us: nominal_pe_us(p.pe),
        }
    }

    /// TXTIME in ns of a PPDU carrying `psdu_bytes` (module docs).
    #[inline]
    pub(crate) fn duration_ns(&self, psdu_bytes: u32) -> u64 {
        let bits = SERVICE_BITS + 8 * u64::from(psdu_bytes) + TAIL_BITS;
        let n_sym = bits.div_ceil(self.ndbps);
        self.fixed_ns + n_sym * self.symbol_ns + self.pe_ns(bits)
    }

    /// The packet extension in ns for a data field of `bits` bits (Table 27-46).
    fn pe_ns(&self, bits: u64) -> u64 {
        if self.nominal_pe_us == 0 {
            return 0;
        }
        let excess = bits % self.ndbps;
        let a = if excess == 0 {
            4
        } else {
            excess.div_ceil(self.ndbps_short).min(4)
        };
        self.nominal_pe_us.saturating_sub(4 * (4 - a)) * 1000
    }
}

/// Checks an HE vector (IEEE 802.11ax-2021 27.3.4, 27.5, Table 27-20): HE-MCS 0–11,
/// 1–4 streams, a GI/HE-LTF pair the HE-SIG-A can signal without DCM and STBC (1x/0.8,
/// 2x/0.8, 2x/1.6, 4x/3.2 µs), and for ER SU 20 MHz, one stream, HE-MCS 0–2.
pub(crate) fn validate(p: HeParams) -> Result<(), String> {
    if p.mcs > HE_MAX_MCS {
        return Err(format!("HE-MCS {} is out of range 0-11", p.mcs));
    }
    if !(1..=HE_MAX_NSS).contains(&p.nss) {
        return Err(format!(
            "HE with {} spatial streams is not supported (1-4)",
            p.nss
        ));
    }
    let paired = matches!(
        (p.ltf, p.gi),
        (HeLtf::X1, HeGuardInterval::Us0_8)
            | (HeLtf::X2, HeGuardInterval::Us0_8 | HeGuardInterval::Us1_6)
            | (HeLtf::X4, HeGuardInterval::Us3_2)
    );
    if !paired {
        return Err(format!(
            "HE-LTF {} with a {} µs guard interval is not a pair HE-SIG-A signals \
             (1x/0.8, 2x/0.8, 2x/1.6, 4x/3.2; 4x/0.8 needs DCM and STBC)",
            ltf_name(p.ltf),
            gi_name(p.gi)
        ));
    }
    if p.format == HeFormat::ErSu && (p.width != ChannelWidth::Mhz20 || p.nss != 1 || p.mcs > 2) {
        return Err("an HE ER SU PPDU is 20 MHz, one stream, HE-MCS 0-2".to_string());
    }
    Ok(())
}

/// PHY data rate in bit/s: N_SD × N_BPSCS × N_SS × R / (12.8 µs + GI), rounded down to
/// a whole bit/s; N_DBPS is not rounded first, as the standard's rate tables do not
/// round it (HE80 HE-MCS 11 1SS GI 0.8: 8166.7 bits / 13.6 µs = 600.5 Mbit/s).
pub(crate) fn data_rate_bps(mcs: u8, nss: u8, width: ChannelWidth, gi: HeGuardInterval) -> u64 {
    let (num, den) = bits_per_symbol(mcs, nss, n_sd(width));
    num * 1_000_000_000 / (den * symbol_ns(gi))
}

/// "0.8", "1.6" or "3.2".
pub fn gi_name(gi: HeGuardInterval) -> &'static str {
    match gi {
        HeGuardInterval::Us0_8 => "0.8",
        HeGuardInterval::Us1_6 => "1.6",
        HeGuardInterval::Us3_2 => "3.2",
    }
}

/// "1x", "2x" or "4x".
pub fn ltf_name(ltf: HeLtf) -> &'static str {
    match ltf {
        HeLtf::X1 => "1x",
        HeLtf::X2 => "2x",
        HeLtf::X4 => "4x",
    }
}

/// "HE80 MCS11 2SS GI0.8 2xLTF", with " ER" for an ER SU PPDU and " PE16" for a
/// nominal packet padding other than 0.
pub(crate) fn label(p: HeParams) -> String {
    let er = match p.format {
        HeFormat::Su => "",
        HeFormat::ErSu => " ER",
    };
    let pe = match p.pe {
        NominalPacketPadding::Us0 => "",
        NominalPacketPadding::Us8 => " PE8",
        NominalPacketPadding::Us16 => " PE16",
    };
    format!(
        "HE{} MCS{} {}SS GI{} {}LTF{er}{pe}",
        p.width.mhz(),
        p.mcs,
        p.nss,
        gi_name(p.gi),
        ltf_name(p.ltf)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::phy::rates::{control_response_rate, PpduTimer, ACK_BYTES};
    use crate::phy::{Standard, TxVector};
    use crate::Nanos;
    use ChannelWidth::{Mhz160, Mhz20, Mhz40, Mhz80};
    use HeGuardInterval::{Us0_8, Us1_6, Us3_2};

    const WIDTHS: [ChannelWidth; 4] = [Mhz20, Mhz40, Mhz80, Mhz160];
    const GIS: [HeGuardInterval; 3] = [Us0_8, Us1_6, Us3_2];

    #[allow(clippy::too_many_arguments)]
    fn he_full(
        mcs: u8,
        nss: u8,
        width: ChannelWidth,
        gi: HeGuardInterval,
        ltf: HeLtf,
        format: HeFormat,
        pe: NominalPacketPadding,
    ) -> TxVector {
        TxVector::He {
            mcs,
            nss,
            width,
            gi,
            ltf,
            format,
            pe,
        }
    }

    fn he(mcs: u8, nss: u8, width: ChannelWidth, gi: HeGuardInterval, ltf: HeLtf) -> TxVector {
        he_full(
            mcs,
            nss,
            width,
            gi,
            ltf,
            HeFormat::Su,
            NominalPacketPadding::Us0,
        )
    }

    fn ns(tx: TxVector, psdu_bytes: u32) -> u64 {
        tx.ppdu_duration(psdu_bytes, Band::Ghz5).as_ns()
    }

    /// The HE-LTF sizes the standard pairs with `gi` (Table 27-20, without DCM/STBC).
    fn ltfs_for(gi: HeGuardInterval) -> &'static [HeLtf] {
        match gi {
            Us0_8 => &[HeLtf::X1, HeLtf::X2],
            Us1_6 => &[HeLtf::X2],
            Us3_2 => &[HeLtf::X4],
        }
    }

    /// Every HE vector `validate` accepts.
    fn all_valid() -> Vec<TxVector> {
        let pes = [
            NominalPacketPadding::Us0,
            NominalPacketPadding::Us8,
            NominalPacketPadding::Us16,
        ];
        let mut v = Vec::new();
        for mcs in 0..=HE_MAX_MCS {
            for nss in 1..=HE_MAX_NSS {
                for width in WIDTHS {
                    for gi in GIS {
                        for &ltf in ltfs_for(gi) {
                            for pe in pes {
                                v.push(he_full(mcs, nss, width, gi, ltf, HeFormat::Su, pe));
                                if width == Mhz20 && nss == 1 && mcs <= 2 {
                                    v.push(he_full(mcs, nss, width, gi, ltf, HeFormat::ErSu, pe));
                                }
                            }
                        }
                    }
                }
            }
        }
        v
    }

    /// The vectors of issue 30, as ns-3 3.37's `tx-duration-test.cc` and its
    /// `CalculateTxDuration` give them: HE SU, 1536 B, HE-MCS 11, 1 stream. Derivation:
    /// N_DBPS = ⌊234 × 10 × 5/6⌋ = 1950 at 20 MHz, 3900 at 40 MHz; N_SYM =
    /// ⌈(16 + 12288 + 6)/N_DBPS⌉ = 7 and 4; preamble 20 + 4 + 8 + 4 + one HE-LTF.
    #[test]
    fn the_issues_ns3_vectors() {
        // GI 1.6 with its 2x HE-LTF (8 µs, what ns-3 counts): 36 + 8 + 7 × 14.4 =
        // 144.8 µs, equal to ns-3.
        assert_eq!(ns(he(11, 1, Mhz20, Us1_6, HeLtf::X2), 1536), 144_800);
        // GI 0.8: ns-3 says 139.2 = 36 + 8 + 7 × 13.6 with its 8 µs HE-LTF. The
        // standard's 2x HE-LTF at 0.8 µs is 7.2 µs, so 138.4 µs; with ns-3's 8 µs
        // HE-LTF it is ns-3's 139.2.
        let gi08 = he(11, 1, Mhz20, Us0_8, HeLtf::X2);
        assert_eq!(ns(gi08, 1536), 138_400);
        assert_eq!(ns(gi08, 1536) + 800, 139_200);
        // 40 MHz GI 0.8: 36 + 7.2 + 4 × 13.6 = 97.6 µs; ns-3 98.4 = 97.6 + 0.8.
        let w40 = he(11, 1, Mhz40, Us0_8, HeLtf::X2);
        assert_eq!(ns(w40, 1536), 97_600);
        assert_eq!(ns(w40, 1536) + 800, 98_400);
        // The 1x HE-LTF (4 µs) with GI 0.8: 36 + 4 + 95.2 = 135.2 µs.
        assert_eq!(ns(he(11, 1, Mhz20, Us0_8, HeLtf::X1), 1536), 135_200);
    }

    /// Every duration ns-3 3.37 gives for HE SU (HE-MCS 0–11, 1–4 streams, 20–160 MHz,
    /// every GI, ten sizes up to 65 535 B) and ER SU equals txop's once each HE-LTF is
    /// counted as ns-3 counts it, 8 µs (`HePhy::GetTrainingDuration`): txop + N_HE-LTF ×
    /// (8 µs − txop's HE-LTF symbol) = ns-3, to the nanosecond; and exactly equal
    /// where txop's HE-LTF is 8 µs (2x with GI 1.6).
    #[test]
    fn every_ns3_duration_equals_txop_with_ns3s_he_ltf() {
        let text = include_str!("../../tests/data/ns3-he-su-durations.txt");
        let sizes: Vec<u32> = text
            .lines()
            .find_map(|l| l.strip_prefix("# sizes "))
            .expect("a sizes line")
            .split_whitespace()
            .map(|s| s.parse().expect("a size"))
            .collect();
        let mut compared = 0;
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let f: Vec<&str> = line.split_whitespace().collect();
            let num = |i: usize| f[i].parse::<u64>().expect("a number");
            let format = match f[0] {
                "su" => HeFormat::Su,
                _ => HeFormat::ErSu,
            };
            let (mcs, nss) = (num(1) as u8, num(2) as u8);
            let width = match num(3) {
                20 => Mhz20,
                40 => Mhz40,
                80 => Mhz80,
                _ => Mhz160,
            };
            let gi = match num(4) {
                800 => Us0_8,
                1600 => Us1_6,
                _ => Us3_2,
            };
            for &ltf in ltfs_for(gi) {
                let tx = he_full(mcs, nss, width, gi, ltf, format, NominalPacketPadding::Us0);
                assert_eq!(tx.validate(), Ok(()), "{tx:?}");
                let correction = ltf_count(nss) as i64 * (8_000 - ltf_symbol_ns(ltf, gi) as i64);
                for (i, &size) in sizes.iter().enumerate() {
                    let ns3 = num(5 + i) as i64;
                    assert_eq!(ns(tx, size) as i64 + correction, ns3, "{tx:?} {size} B");
                    if ltf_symbol_ns(ltf, gi) == 8_000 {
                        assert_eq!(ns(tx, size) as i64, ns3, "{tx:?} {size} B");
                    }
                    compared += 1;
                }
            }
        }
        // 576 SU vectors × (2 + 1 + 1) / 3 HE-LTFs per GI, 9 ER SU, ten sizes each.
        assert_eq!(compared, (4 * 4 * 12 * 4 + 3 * 4) * 10);
    }

    /// HE data rates against the HE-MCS tables of IEEE 802.11ax-2021 27.5 (Mbit/s to
    /// 0.1, as the tables print them, typed from the standard; the code derives them
    /// from N_SD, N_BPSCS, R and the symbol time).
    #[test]
    fn data_rates_match_the_standards_tables() {
        // (HE-MCS, streams, width, [GI 0.8, 1.6, 3.2] in 0.1 Mbit/s).
        let table: [(u8, u8, ChannelWidth, [u64; 3]); 16] = [
            (0, 1, Mhz20, [86, 81, 73]),
            (7, 1, Mhz20, [860, 813, 731]),
            (9, 1, Mhz20, [1147, 1083, 975]),
            (11, 1, Mhz20, [1434, 1354, 1219]),
            (0, 1, Mhz40, [172, 163, 146]),
            (11, 1, Mhz40, [2868, 2708, 2438]),
            (0, 1, Mhz80, [360, 340, 306]),
            (7, 1, Mhz80, [3603, 3403, 3063]),
            (11, 1, Mhz80, [6005, 5671, 5104]),
            (0, 1, Mhz160, [721, 681, 613]),
            (11, 1, Mhz160, [12010, 11343, 10208]),
            (11, 2, Mhz80, [12010, 11343, 10208]),
            (11, 2, Mhz160, [24020, 22685, 20417]),
            (11, 4, Mhz160, [48039, 45370, 40833]),
            (10, 1, Mhz20, [1290, 1219, 1097]),
            (8, 1, Mhz20, [1032, 975, 878]),
        ];
        for (mcs, nss, width, rates) in table {
            for (gi, want) in GIS.into_iter().zip(rates) {
                let tx = he(mcs, nss, width, gi, ltfs_for(gi)[0]);
                let got = (tx.data_rate_bps() + 50_000) / 100_000;
                assert_eq!(got, want, "{tx:?}");
            }
        }
        // N_DBPS as the tables list it, rounded down where R × N_CBPS is not whole.
        assert_eq!(he(11, 1, Mhz20, Us0_8, HeLtf::X2).ndbps(), 1950);
        assert_eq!(he(11, 1, Mhz80, Us0_8, HeLtf::X2).ndbps(), 8166);
        assert_eq!(he(9, 1, Mhz80, Us0_8, HeLtf::X2).ndbps(), 6533);
        assert_eq!(he(11, 2, Mhz160, Us0_8, HeLtf::X2).ndbps(), 32666);
        assert_eq!(he(0, 1, Mhz20, Us0_8, HeLtf::X2).ndbps(), 117);
    }

    /// The preamble fields, summed by hand: 20 + RL-SIG 4 + HE-SIG-A 8 (ER 16) + HE-STF
    /// 4 + N_HE-LTF × HE-LTF.
    #[test]
    fn preambles() {
        assert_eq!(
            preamble_ns(HeFormat::Su, HeLtf::X2, Us0_8, 1),
            36_000 + 7_200
        );
        assert_eq!(
            preamble_ns(HeFormat::ErSu, HeLtf::X2, Us0_8, 1),
            44_000 + 7_200
        );
        assert_eq!(
            preamble_ns(HeFormat::Su, HeLtf::X1, Us0_8, 2),
            36_000 + 2 * 4_000
        );
        assert_eq!(
            preamble_ns(HeFormat::Su, HeLtf::X4, Us3_2, 3),
            36_000 + 4 * 16_000
        );
        assert_eq!(
            preamble_ns(HeFormat::Su, HeLtf::X2, Us1_6, 4),
            36_000 + 4 * 8_000
        );
        // 2.4 GHz adds the 6 µs signal extension.
        let tx = he(7, 1, Mhz20, Us0_8, HeLtf::X2);
        assert_eq!(
            tx.ppdu_duration(1500, Band::Ghz2_4),
            tx.ppdu_duration(1500, Band::Ghz5) + Nanos::from_us(6)
        );
    }

    /// Packet extension from the pre-FEC padding factor (Table 27-46), worked by hand at
    /// HE20 HE-MCS 0 1SS: N_DBPS 117, N_DBPS,short = 60 × 1/2 = 30; data bits 22 + 8·L.
    #[test]
    fn packet_extension_follows_the_padding_factor() {
        let with = |pe| he_full(0, 1, Mhz20, Us0_8, HeLtf::X2, HeFormat::Su, pe);
        let base = |len| ns(with(NominalPacketPadding::Us0), len);
        let pe_us = |pe, len| (ns(with(pe), len) - base(len)) / 1000;
        // 14 B: 134 bits, 17 in the last symbol, a = 1: PE 4 (16 nominal), 0 (8).
        assert_eq!(pe_us(NominalPacketPadding::Us16, 14), 4);
        assert_eq!(pe_us(NominalPacketPadding::Us8, 14), 0);
        // 4 B: 54 bits, a = ⌈54/30⌉ = 2: 8 and 0.
        assert_eq!(pe_us(NominalPacketPadding::Us16, 4), 8);
        assert_eq!(pe_us(NominalPacketPadding::Us8, 4), 0);
        // 5 B: 62 bits, a = 3: 12 and 4.
        assert_eq!(pe_us(NominalPacketPadding::Us16, 5), 12);
        assert_eq!(pe_us(NominalPacketPadding::Us8, 5), 4);
        // 85 B: 702 bits = 6 full symbols, a = 4: 16 and 8.
        assert_eq!(pe_us(NominalPacketPadding::Us16, 85), 16);
        assert_eq!(pe_us(NominalPacketPadding::Us8, 85), 8);
        // 8 B: 86 bits, a = ⌈86/30⌉ = 3.
        assert_eq!(pe_us(NominalPacketPadding::Us16, 8), 12);
    }

    #[test]
    fn validation() {
        for tx in all_valid() {
            assert_eq!(tx.validate(), Ok(()), "{tx:?}");
            assert!(tx.data_rate_bps() > 0 && tx.ndbps() > 0, "{tx:?}");
        }
        let err = |tx: TxVector| tx.validate().expect_err("invalid");
        assert!(err(he(12, 1, Mhz20, Us0_8, HeLtf::X2)).contains("HE-MCS 12"));
        assert!(err(he(0, 5, Mhz20, Us0_8, HeLtf::X2)).contains("5 spatial streams"));
        assert!(err(he(0, 0, Mhz20, Us0_8, HeLtf::X2)).contains("0 spatial streams"));
        assert!(err(he(0, 1, Mhz20, Us0_8, HeLtf::X4)).contains("HE-LTF 4x"));
        assert!(err(he(0, 1, Mhz20, Us1_6, HeLtf::X1)).contains("1.6 µs"));
        assert!(err(he(0, 1, Mhz20, Us3_2, HeLtf::X2)).contains("3.2 µs"));
        let er = |mcs, nss, width| {
            he_full(
                mcs,
                nss,
                width,
                Us0_8,
                HeLtf::X2,
                HeFormat::ErSu,
                NominalPacketPadding::Us0,
            )
        };
        assert!(err(er(3, 1, Mhz20)).contains("ER SU"));
        assert!(err(er(0, 2, Mhz20)).contains("ER SU"));
        assert!(err(er(0, 1, Mhz40)).contains("ER SU"));
        // Out-of-range vectors never panic.
        for tx in [
            he(200, 0, Mhz160, Us3_2, HeLtf::X1),
            he(12, 200, Mhz20, Us0_8, HeLtf::X4),
        ] {
            let _ = tx.ppdu_duration(u32::MAX, Band::Ghz2_4);
            let _ = PpduTimer::new(&tx, Band::Ghz5).duration(u32::MAX);
            let _ = tx.data_rate_bps();
            let _ = tx.modulation_label();
        }
    }

    /// The precomputed timer gives `ppdu_duration` for every HE vector and length, and
    /// durations never shrink as the PSDU grows (the PE may fall by at most what the
    /// next symbol adds: 16 − 4 < 13.6 µs).
    #[test]
    fn ppdu_timer_equals_ppdu_duration_and_is_monotonic() {
        let lengths: Vec<u32> = (0..2000).chain([65_535, 8_388_607, u32::MAX]).collect();
        for tx in all_valid() {
            for band in [Band::Ghz2_4, Band::Ghz5] {
                let timer = PpduTimer::new(&tx, band);
                let mut prev = Nanos::ZERO;
                for &len in &lengths {
                    let d = tx.ppdu_duration(len, band);
                    assert_eq!(timer.duration(len), d, "{tx:?} {band:?} {len} B");
                    assert!(d >= prev, "{tx:?} {band:?} {len} B");
                    prev = d;
                }
            }
        }
    }

    /// Responses to HE frames go at the OFDM basic rate at or below the non-HT reference
    /// rate of the HE-MCS (10.6.6.5): HE-MCS 0 → 6, 1 → 12, 2 (QPSK 3/4, 18) → 12,
    /// 4 (36) → 24, 10 and 11 (1024-QAM, 54) → 24 Mbit/s.
    #[test]
    fn control_responses() {
        let ofdm = |rate_mbps| TxVector::Ofdm { rate_mbps };
        for (mcs, want) in [
            (0, 6),
            (1, 12),
            (2, 12),
            (3, 24),
            (4, 24),
            (10, 24),
            (11, 24),
        ] {
            let tx = he(mcs, 2, Mhz80, Us0_8, HeLtf::X2);
            assert_eq!(
                control_response_rate(&tx, Standard::Ax),
                ofdm(want),
                "{mcs}"
            );
        }
        // A 24 Mbit/s ACK: 20 + 4 × ⌈134/96⌉ = 28 µs after every fast HE frame.
        let r = control_response_rate(&he(11, 1, Mhz20, Us0_8, HeLtf::X2), Standard::Ax);
        assert_eq!(r.ppdu_duration(ACK_BYTES, Band::Ghz5), Nanos::from_us(28));
        for tx in all_valid() {
            assert_eq!(control_response_rate(&tx, Standard::Ax).validate(), Ok(()));
        }
    }

    #[test]
    fn labels() {
        assert_eq!(
            he(11, 2, Mhz80, Us0_8, HeLtf::X2).modulation_label(),
            "HE80 MCS11 2SS GI0.8 2xLTF"
        );
        let er = he_full(
            1,
            1,
            Mhz20,
            Us3_2,
            HeLtf::X4,
            HeFormat::ErSu,
            NominalPacketPadding::Us16,
        );
        assert_eq!(er.modulation_label(), "HE20 MCS1 1SS GI3.2 4xLTF ER PE16");
    }

    /// The HE aggregate limits: 2^23 − 1 bytes, a 256-MPDU window whose compressed
    /// BlockAck is 24 + 32 bytes, and a 5.484 ms PPDU (aPPDUMaxTime, reference §11.2)
    /// holds far more than a 64-subframe aggregate at HE160 4SS.
    #[test]
    fn aggregate_limits() {
        assert_eq!(HE_MAX_AMPDU_BYTES, 8_388_607);
        assert_eq!(BLOCK_ACK_256_BYTES, crate::phy::rates::BLOCK_ACK_BYTES + 24);
        assert_eq!(HE_BA_WINDOW, 256);
        // At 24 Mbit/s: 20 + 4 × ⌈(16 + 448 + 6)/96⌉ = 40 µs (32 µs for 64 MPDUs).
        let r24 = TxVector::Ofdm { rate_mbps: 24 };
        assert_eq!(
            r24.ppdu_duration(BLOCK_ACK_256_BYTES, Band::Ghz5),
            Nanos::from_us(40)
        );
        // 256 × 1538 B at HE160 HE-MCS 11 4SS fits in 5.484 ms; at HE20 MCS 0 it does not.
        let fast = he(11, 4, Mhz160, Us0_8, HeLtf::X2);
        let slow = he(0, 1, Mhz20, Us0_8, HeLtf::X2);
        let ppdu_max = Nanos::from_us(5_484);
        assert!(fast.ppdu_duration(256 * 1538, Band::Ghz5) < ppdu_max);
        assert!(slow.ppdu_duration(256 * 1538, Band::Ghz5) > ppdu_max);
    }
}
