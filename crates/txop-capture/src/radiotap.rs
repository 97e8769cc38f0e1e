//! The radiotap header in front of each captured frame (radiotap.org, "Defined
//! fields"; Linux `include/net/ieee80211_radiotap.h`).
//!
//! Fields, in the order of their presence bits, each aligned to its natural size from
//! the start of the header: TSFT (0), Flags (1), Rate (2, legacy rates only), Channel
//! (3), antenna signal and noise in dBm (5, 6), data retries (17, data frames), MCS (19,
//! HT), A-MPDU status (20), VHT (21), HE (23).
//!
//! **TSFT marks the end of the PPDU** (µs, the run's clock), as Wireshark assumes by
//! default (its `wlan_radio.tsf_at_end` preference): Wireshark then computes each
//! frame's start from its own duration formula, and the inter-frame space before it.
//! Within an A-MPDU the TSFT of subframe *k* is the end of a PPDU carrying subframes 0
//! to *k* alone (so Wireshark finds the A-MPDU's start from the first subframe), and the
//! last subframe's is the PPDU's end.

use txop_core::phy::{
    Band, ChannelWidth, DsssPreamble, GuardInterval, HeFormat, HeGuardInterval, HeLtf, TxVector,
};

/// Flags field: frame includes the FCS.
pub const FLAG_FCS: u8 = 0x10;
/// Flags field: frame failed the FCS check (its receiver lost it).
pub const FLAG_BAD_FCS: u8 = 0x40;
/// Flags field: short preamble (DSSS).
pub const FLAG_SHORT_PREAMBLE: u8 = 0x02;

/// What one frame's radiotap header says.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RadiotapFields {
    /// TSFT, µs.
    pub tsft_us: u64,
    /// The addressee lost the frame (bad FCS).
    pub bad_fcs: bool,
    /// Rate and format.
    pub txv: TxVector,
    /// The band (the channel is 36 at 5 GHz, 6 at 2.4 GHz).
    pub band: Band,
    /// Signal at the addressee, dBm.
    pub signal_dbm: Option<f64>,
    /// Noise at the addressee, dBm.
    pub noise_dbm: Option<f64>,
    /// Data frames: the transmitter's retries of this PPDU before this try.
    pub data_retries: Option<u8>,
    /// Part of A-MPDU number `.0`; `.1`: its last subframe.
    pub ampdu: Option<(u32, bool)>,
}

/// The channel's centre frequency (MHz) txop's captures use: channel 36 at 5 GHz,
/// channel 6 at 2.4 GHz.
pub fn channel_mhz(band: Band) -> u16 {
    match band {
        Band::Ghz5 => 5180,
        Band::Ghz2_4 => 2437,
    }
}

/// Append the radiotap header of `f` to `out` (which must be empty or end at an
/// 8-byte boundary: alignment counts from the header's start).
pub fn write(f: &RadiotapFields, out: &mut Vec<u8>) {
    let base = out.len();
    let mut present: u32 = 1 << 0 | 1 << 1 | 1 << 3;
    let legacy = matches!(f.txv, TxVector::Dsss { .. } | TxVector::Ofdm { .. });
    if legacy {
        present |= 1 << 2;
    }
    if f.signal_dbm.is_some() {
        present |= 1 << 5;
    }
    if f.noise_dbm.is_some() {
        present |= 1 << 6;
    }
    if f.data_retries.is_some() {
        present |= 1 << 17;
    }
    match f.txv {
        TxVector::Ht { .. } => present |= 1 << 19,
        TxVector::Vht { .. } => present |= 1 << 21,
        TxVector::He { .. } => present |= 1 << 23,
        _ => {}
    }
    if f.ampdu.is_some() {
        present |= 1 << 20;
    }
    // Version 0, pad, length (filled in below), present bitmap.
    out.extend_from_slice(&[0, 0, 0, 0]);
    out.extend_from_slice(&present.to_le_bytes());
    let align = |out: &mut Vec<u8>, n: usize| {
        while !(out.len() - base).is_multiple_of(n) {
            out.push(0);
        }
    };
    align(out, 8);
    out.extend_from_slice(&f.tsft_us.to_le_bytes());
    let mut flags = FLAG_FCS;
    if f.bad_fcs {
        flags |= FLAG_BAD_FCS;
    }
    if let TxVector::Dsss {
        preamble: DsssPreamble::Short,
        ..
    } = f.txv
    {
        flags |= FLAG_SHORT_PREAMBLE;
    }
    out.push(flags);
    if legacy {
        out.push(legacy_rate_500kbps(&f.txv));
    }
    align(out, 2);
    out.extend_from_slice(&channel_mhz(f.band).to_le_bytes());
    out.extend_from_slice(&channel_flags(&f.txv, f.band).to_le_bytes());
    if let Some(s) = f.signal_dbm {
        out.push(dbm_byte(s));
    }
    if let Some(n) = f.noise_dbm {
        out.push(dbm_byte(n));
    }
    if let Some(r) = f.data_retries {
        out.push(r);
    }
    if let TxVector::Ht { mcs, width, gi } = f.txv {
        // Known: bandwidth, MCS, GI, format, FEC, STBC, Ness (bit 0): Wireshark needs
        // all of them to compute durations without assuming anything.
        let known = 0x01 | 0x02 | 0x04 | 0x08 | 0x10 | 0x20 | 0x40;
        let mut fl = 0u8;
        if width == ChannelWidth::Mhz40 {
            fl |= 1;
        }
        if gi == GuardInterval::Short {
            fl |= 0x04;
        }
        out.extend_from_slice(&[known, fl, mcs]);
    }
    if let Some((reference, last)) = f.ampdu {
        align(out, 4);
        out.extend_from_slice(&reference.to_le_bytes());
        // Last-subframe flag known (0x0004), and set on the last (0x0008).
        let fl: u16 = 0x0004 | if last { 0x0008 } else { 0 };
        out.extend_from_slice(&fl.to_le_bytes());
        out.extend_from_slice(&[0, 0]);
    }
    if let TxVector::Vht {
        mcs,
        nss,
        width,
        gi,
    } = f.txv
    {
        align(out, 2);
        // Known: STBC, TXOP_PS_NOT_ALLOWED, GI, beamformed, bandwidth.
        let known: u16 = 0x0001 | 0x0002 | 0x0004 | 0x0020 | 0x0040;
        out.extend_from_slice(&known.to_le_bytes());
        out.push(if gi == GuardInterval::Short { 0x04 } else { 0 });
        out.push(match width {
            ChannelWidth::Mhz20 => 0,
            ChannelWidth::Mhz40 => 1,
            ChannelWidth::Mhz80 => 4,
            ChannelWidth::Mhz160 => 11,
        });
        out.extend_from_slice(&[mcs << 4 | nss, 0, 0, 0]);
        // Coding (BCC), group id, partial AID.
        out.extend_from_slice(&[0, 0, 0, 0]);
    }
    if let TxVector::He {
        mcs,
        nss,
        width,
        gi,
        ltf,
        format,
        ..
    } = f.txv
    {
        align(out, 2);
        out.extend_from_slice(&he_field(mcs, nss, width, gi, ltf, format));
    }
    let len = (out.len() - base) as u16;
    out[base + 2..base + 4].copy_from_slice(&len.to_le_bytes());
}

/// The HE field (radiotap.org "HE"; Linux `ieee80211_radiotap.h`
/// `IEEE80211_RADIOTAP_HE_DATA*`): six little-endian u16. data1: the PPDU format (SU 0,
/// ER SU 1) with data MCS, DCM, STBC and bandwidth known; data2: GI and number of
/// HE-LTF symbols known; data3: the MCS (DCM and STBC 0); data5: bandwidth (20/40/80/160
/// = 0–3), GI (0.8/1.6/3.2 = 0–2), HE-LTF size (1x/2x/4x = 1–3) and the number of
/// HE-LTF symbols (1, 2, 4 = 0, 1, 2); data6: NSTS.
fn he_field(
    mcs: u8,
    nss: u8,
    width: ChannelWidth,
    gi: HeGuardInterval,
    ltf: HeLtf,
    format: HeFormat,
) -> [u8; 12] {
    let data1: u16 = match format {
        HeFormat::Su => 0,
        HeFormat::ErSu => 1,
    } | 0x0020
        | 0x0040
        | 0x0200
        | 0x4000;
    let data2: u16 = 0x0002 | 0x0004;
    let data3: u16 = u16::from(mcs & 0x0f) << 8;
    let bw: u16 = match width {
        ChannelWidth::Mhz20 => 0,
        ChannelWidth::Mhz40 => 1,
        ChannelWidth::Mhz80 => 2,
        ChannelWidth::Mhz160 => 3,
    };
    let gi: u16 = match gi {
        HeGuardInterval::Us0_8 => 0,
        HeGuardInterval::Us1_6 => 1,
        HeGuardInterval::Us3_2 => 2,
    };
    let ltf: u16 = match ltf {
        HeLtf::X1 => 1,
        HeLtf::X2 => 2,
        HeLtf::X4 => 3,
    };
    let n_ltf: u16 = match nss {
        0 | 1 => 0,
        2 => 1,
        3 | 4 => 2,
        5 | 6 => 3,
        _ => 4,
    };
    let data5 = bw | gi << 4 | ltf << 6 | n_ltf << 8;
    let data6 = u16::from(nss & 0x0f);
    let mut out = [0u8; 12];
    for (i, d) in [data1, data2, data3, 0, data5, data6]
        .into_iter()
        .enumerate()
    {
        out[2 * i..2 * i + 2].copy_from_slice(&d.to_le_bytes());
    }
    out
}

/// A legacy rate in radiotap's unit, 500 kbit/s.
fn legacy_rate_500kbps(txv: &TxVector) -> u8 {
    match *txv {
        TxVector::Dsss { rate_kbps, .. } => (rate_kbps / 500) as u8,
        TxVector::Ofdm { rate_mbps } => (rate_mbps * 2) as u8,
        TxVector::Ht { .. } | TxVector::Vht { .. } | TxVector::He { .. } => 0,
    }
}

/// Channel flags: the band (5 GHz 0x0100, 2 GHz 0x0080) and the modulation (CCK 0x0020,
/// OFDM 0x0040; HT and VHT are OFDM).
fn channel_flags(txv: &TxVector, band: Band) -> u16 {
    let band_flag = match band {
        Band::Ghz5 => 0x0100,
        Band::Ghz2_4 => 0x0080,
    };
    let modulation = match txv {
        TxVector::Dsss { .. } => 0x0020,
        _ => 0x0040,
    };
    band_flag | modulation
}

/// A power in dBm as radiotap's signed byte (rounded, saturating).
fn dbm_byte(dbm: f64) -> u8 {
    (dbm.round().clamp(-128.0, 127.0) as i8) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(txv: TxVector) -> RadiotapFields {
        RadiotapFields {
            tsft_us: 0x0102_0304_0506_0708,
            bad_fcs: false,
            txv,
            band: Band::Ghz5,
            signal_dbm: Some(-50.4),
            noise_dbm: Some(-95.0),
            data_retries: None,
            ampdu: None,
        }
    }

    #[test]
    fn legacy_header_layout() {
        let mut out = Vec::new();
        write(&fields(TxVector::Ofdm { rate_mbps: 24 }), &mut out);
        // header 8, TSFT 8, flags 1, rate 1, channel 4, signal 1, noise 1 = 24.
        assert_eq!(out.len(), 24);
        assert_eq!(u16::from_le_bytes([out[2], out[3]]), 24);
        let present = u32::from_le_bytes(out[4..8].try_into().unwrap());
        assert_eq!(present, 0b110_1111);
        assert_eq!(&out[8..16], &0x0102_0304_0506_0708u64.to_le_bytes());
        assert_eq!(out[16], FLAG_FCS);
        assert_eq!(out[17], 48);
        assert_eq!(u16::from_le_bytes([out[18], out[19]]), 5180);
        assert_eq!(u16::from_le_bytes([out[20], out[21]]), 0x0140);
        assert_eq!(out[22] as i8, -50);
        assert_eq!(out[23] as i8, -95);
    }

    #[test]
    fn ampdu_status_is_four_byte_aligned_after_mcs() {
        let mut f = fields(TxVector::Ht {
            mcs: 7,
            width: ChannelWidth::Mhz20,
            gi: GuardInterval::Short,
        });
        f.ampdu = Some((9, true));
        f.data_retries = Some(2);
        let mut out = Vec::new();
        write(&f, &mut out);
        // 8 + 8 + flags 1 + pad 1 + channel 4 + signal + noise + retries + MCS 3 = 28,
        // A-MPDU at 28 (aligned) + 8 = 36.
        assert_eq!(out.len(), 36);
        assert_eq!(&out[25..28], &[0x7f, 0x04, 7]);
        assert_eq!(out[24], 2);
        assert_eq!(u32::from_le_bytes(out[28..32].try_into().unwrap()), 9);
        assert_eq!(u16::from_le_bytes([out[32], out[33]]), 0x000c);
    }

    #[test]
    fn he_field_layout() {
        let mut out = Vec::new();
        write(
            &fields(TxVector::He {
                mcs: 11,
                nss: 2,
                width: ChannelWidth::Mhz80,
                gi: HeGuardInterval::Us1_6,
                ltf: HeLtf::X2,
                format: HeFormat::Su,
                pe: txop_core::phy::NominalPacketPadding::Us0,
            }),
            &mut out,
        );
        // 8 + 8 + flags 1 + pad 1 + channel 4 + signal + noise = 24, HE 12 = 36.
        assert_eq!(out.len(), 36);
        let present = u32::from_le_bytes(out[4..8].try_into().unwrap());
        assert_eq!(present, 1 << 23 | 0b110_1011);
        let word = |i: usize| u16::from_le_bytes([out[24 + 2 * i], out[25 + 2 * i]]);
        assert_eq!(word(0), 0x4260); // SU, MCS/DCM/STBC/bandwidth known
        assert_eq!(word(2), 11 << 8);
        // 80 MHz (2), GI 1.6 (1 << 4), 2x HE-LTF (2 << 6), 2 HE-LTFs (1 << 8).
        assert_eq!(word(4), 2 | 1 << 4 | 2 << 6 | 1 << 8);
        assert_eq!(word(5), 2);
    }
}
