//! Packet classification on the Wi-Fi transmit path: DSCP → 802.1d user priority (UP)
//! → access category (reference §4.2).
//!
//! Linux sets `skb->priority` (the UP, 0–7, which is also the TID of a data frame) in
//! `cfg80211_classify8021d` (`net/wireless/util.c`) and maps it to an AC with
//! `ieee802_1d_to_ac[]` (`net/mac80211/wme.c`). Only the DSCP path of
//! `cfg80211_classify8021d` is modelled here: the `skb->priority` 256–263 override,
//! VLAN PCP, MPLS TC, 802.21 and the optional QoS Map all take precedence over it in the
//! kernel and are left to whoever sets [`Packet::tid`](crate::packet::Packet::tid)
//! directly.

use crate::mac::edca::Ac;

/// Which DSCP → UP rule `cfg80211_classify8021d` applies (reference §4.2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DscpMapping {
    /// Older kernels: UP = DSCP >> 3 (the class-selector bits). EF (46) → UP 5 → VI.
    #[default]
    Legacy,
    /// Recent kernels (2023–2024 era; exact version unverified, reference §4.2):
    /// DSCP >> 3 with the RFC 8325 §4 override table (AF1x/CS2 → 0, AF2x → 3,
    /// CS3/AF3x → 4, VA/EF → 6, CS6 → 7). EF (46) → UP 6 → VO.
    Rfc8325,
}

/// One row of [`RFC8325_OVERRIDES`]: a DSCP and the user priority it maps to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DscpOverride {
    /// The DiffServ codepoint (6 bits).
    pub dscp: u8,
    /// Its 802.1d user priority.
    pub up: u8,
}

/// A DSCP and its user priority (for the table below).
const fn to_up(dscp: u8, up: u8) -> DscpOverride {
    DscpOverride { dscp, up }
}

/// The RFC 8325 §4 overrides of recent `cfg80211_classify8021d` (reference §4.2 table).
/// Every DSCP not listed keeps UP = DSCP >> 3.
pub const RFC8325_OVERRIDES: [DscpOverride; 14] = [
    to_up(10, 0), // AF11: high-throughput data
    to_up(12, 0), // AF12
    to_up(14, 0), // AF13
    to_up(16, 0), // CS2: OAM
    to_up(18, 3), // AF21: low-latency data
    to_up(20, 3), // AF22
    to_up(22, 3), // AF23
    to_up(24, 4), // CS3: broadcast video
    to_up(26, 4), // AF31: multimedia streaming
    to_up(28, 4), // AF32
    to_up(30, 4), // AF33
    to_up(44, 6), // VA: voice admit
    to_up(46, 6), // EF: telephony
    to_up(48, 7), // CS6: network control
];

/// `cfg80211_classify8021d`'s DSCP rule: the user priority (0–7) for a 6-bit DSCP
/// (reference §4.2). `dscp` is the DiffServ codepoint itself (as in
/// [`Packet::dscp`](crate::packet::Packet::dscp)), not the TOS byte; bits above the
/// six DSCP bits are ignored. The kernel works on `tos & 0xfc`, so `UP = tos >> 5` there
/// equals `dscp >> 3` here.
pub fn dscp_to_up(dscp: u8, mapping: DscpMapping) -> u8 {
    let dscp = dscp & 0x3f;
    let up = dscp >> 3;
    match mapping {
        DscpMapping::Legacy => up,
        DscpMapping::Rfc8325 => match dscp {
            10 | 12 | 14 | 16 => 0,
            18 | 20 | 22 => 3,
            24 | 26 | 28 | 30 => 4,
            44 | 46 => 6,
            48 => 7,
            _ => up,
        },
    }
}

/// `ieee802_1d_to_ac[UP]` (`net/mac80211/wme.c`, reference §4.2): UP 0/3 → BE, 1/2 → BK,
/// 4/5 → VI, 6/7 → VO. Only the low three bits of `up` are used. Same as
/// [`Ac::from_up`].
pub fn up_to_ac(up: u8) -> Ac {
    Ac::from_up(up)
}

/// `ieee80211_ac_from_tid(tid)` = `ieee802_1d_to_ac[tid & 7]` (reference §4.1): the AC of
/// a data TXQ for TID 0–15.
pub fn ac_from_tid(tid: u8) -> Ac {
    Ac::from_up(tid & 7)
}

/// DSCP straight to AC: [`up_to_ac`]`(`[`dscp_to_up`]`(dscp, mapping))`.
pub fn dscp_to_ac(dscp: u8, mapping: DscpMapping) -> Ac {
    up_to_ac(dscp_to_up(dscp, mapping))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CS0: u8 = 0;
    const CS1: u8 = 8;
    const CS6: u8 = 48;
    const EF: u8 = 46;

    #[test]
    fn legacy_is_top_three_bits_for_every_dscp() {
        for dscp in 0..64u8 {
            assert_eq!(dscp_to_up(dscp, DscpMapping::Legacy), dscp / 8, "{dscp}");
        }
    }

    #[test]
    fn rfc8325_override_table_and_nothing_else() {
        // The reference §4.2 table, row by row.
        let table: &[(&[u8], u8)] = &[
            (&[10, 12, 14], 0), // AF11/AF12/AF13
            (&[16], 0),         // CS2
            (&[18, 20, 22], 3), // AF21/22/23
            (&[24], 4),         // CS3
            (&[26, 28, 30], 4), // AF31/32/33
            (&[44], 6),         // VA
            (&[46], 6),         // EF
            (&[48], 7),         // CS6
        ];
        let mut overridden = [false; 64];
        for (dscps, up) in table {
            for &d in *dscps {
                assert_eq!(dscp_to_up(d, DscpMapping::Rfc8325), *up, "DSCP {d}");
                overridden[d as usize] = true;
            }
        }
        // Everything else is plain DSCP >> 3.
        for d in 0..64u8 {
            if !overridden[d as usize] {
                assert_eq!(dscp_to_up(d, DscpMapping::Rfc8325), d >> 3, "DSCP {d}");
            }
        }
        // The published constant lists the same rows.
        for DscpOverride { dscp: d, up } in RFC8325_OVERRIDES {
            assert!(overridden[d as usize]);
            assert_eq!(dscp_to_up(d, DscpMapping::Rfc8325), up);
        }
        assert_eq!(overridden.iter().filter(|&&o| o).count(), 14);
    }

    #[test]
    fn ef_is_video_in_legacy_and_voice_in_rfc8325() {
        assert_eq!(dscp_to_up(EF, DscpMapping::Legacy), 5);
        assert_eq!(dscp_to_ac(EF, DscpMapping::Legacy), Ac::Vi);
        assert_eq!(dscp_to_up(EF, DscpMapping::Rfc8325), 6);
        assert_eq!(dscp_to_ac(EF, DscpMapping::Rfc8325), Ac::Vo);
    }

    #[test]
    fn cs1_cs0_cs6_in_both_mappings() {
        for m in [DscpMapping::Legacy, DscpMapping::Rfc8325] {
            assert_eq!(dscp_to_up(CS1, m), 1);
            assert_eq!(dscp_to_ac(CS1, m), Ac::Bk);
            assert_eq!(dscp_to_up(CS0, m), 0);
            assert_eq!(dscp_to_ac(CS0, m), Ac::Be);
            assert_eq!(dscp_to_ac(CS6, m), Ac::Vo);
        }
        assert_eq!(dscp_to_up(CS6, DscpMapping::Legacy), 6);
        assert_eq!(dscp_to_up(CS6, DscpMapping::Rfc8325), 7);
    }

    #[test]
    fn up_and_tid_to_ac_tables() {
        use Ac::*;
        let acs: Vec<Ac> = (0..8).map(up_to_ac).collect();
        assert_eq!(acs, vec![Be, Bk, Bk, Be, Vi, Vi, Vo, Vo]);
        // TIDs 8–15 map like TID & 7.
        for tid in 0..16u8 {
            assert_eq!(ac_from_tid(tid), acs[(tid & 7) as usize]);
        }
    }

    #[test]
    fn tos_bits_above_dscp_are_ignored() {
        assert_eq!(dscp_to_up(EF | 0xc0, DscpMapping::Rfc8325), 6);
    }
}
