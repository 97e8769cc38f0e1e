//! ERP protection: how an 802.11g/n BSS in 2.4 GHz keeps its 802.11b stations from
//! transmitting over the OFDM PPDUs they cannot hear (802.11-2016 10.26.2).
//!
//! A non-ERP (DSSS/HR-DSSS) station detects neither ERP-OFDM nor HT preambles, so it
//! would start transmitting in the middle of one. When such a station is associated the
//! AP sets Use_Protection in its ERP element, and every ERP-OFDM and HT PPDU is then
//! preceded by a frame the 802.11b station decodes — a CTS to the sender itself, or an
//! RTS/CTS exchange — sent at a DSSS rate of the basic rate set, whose Duration field
//! sets its NAV over the rest of the exchange. DSSS PPDUs need no protection.
//!
//! HT protection (the HT Operation element's non-HT mixed mode, set when a non-HT
//! station is associated) adds nothing here: txop sends every HT PPDU in the HT-mixed
//! format, whose legacy preamble and L-SIG let a non-HT OFDM station defer for the
//! whole PPDU, and the standard asks for protection frames only in front of
//! HT-greenfield PPDUs and RIFS bursts, neither of which txop models. Linux agrees:
//! mac80211 protects only on the ERP element's Use_Protection (`use_cts_prot`) and
//! ath9k does not act on the HT protection mode. So an 802.11a/g station among HT ones
//! costs only its own airtime. (ns-3 also sends CTS-to-self in front of HT PPDUs in
//! non-HT mixed mode.)

use crate::phy::{DsssPreamble, TxVector};
use serde::{Deserialize, Serialize};

/// What protects ERP-OFDM and HT PPDUs while an 802.11b station is associated with a
/// 2.4 GHz 802.11g/n BSS (ignored in every other BSS).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Protection {
    /// A CTS addressed to the sender itself, then SIFS, then the PPDU: what mac80211
    /// asks for (`IEEE80211_TX_RC_USE_CTS_PROTECT` when the BSS has `use_cts_prot`) and
    /// ath9k sends (`ATH9K_TXDESC_CTSENA`).
    #[default]
    CtsToSelf,
    /// RTS, SIFS, CTS, SIFS before every protected PPDU, both at the protection rate.
    RtsCts,
    /// No protection frames: what the standard forbids, to measure what protection
    /// costs. (The long slot and the DSSS basic rates stay: they follow from the
    /// 802.11b station's PHY, not from protection.)
    Off,
}

/// The rate of protection frames (CTS-to-self, RTS, CTS): 1 Mbit/s DSSS with the long
/// preamble, the lowest basic rate, which every station decodes. For HT PPDUs this is
/// what ath9k sends: mac80211 leaves `rts_cts_rate_idx` at 0 for MCS rates, the band's
/// first rate. For an ERP-OFDM PPDU mac80211 would pick the fastest basic rate not
/// above the data rate (11 Mbit/s with hostapd's default basic rates 1, 2, 5.5, 11);
/// txop uses 1 Mbit/s for it too (a simplification: at most 201 µs more per frame).
pub const PROTECTION_RATE: TxVector = TxVector::Dsss {
    rate_kbps: 1000,
    preamble: DsssPreamble::Long,
};

/// Whether a PPDU sent at `txv` needs protection from 802.11b stations: every OFDM-based
/// format (ERP-OFDM, HT, VHT), not DSSS/HR-DSSS.
pub fn needs_protection(txv: &TxVector) -> bool {
    !txv.is_dsss()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::phy::{ChannelWidth, GuardInterval};

    #[test]
    fn only_ofdm_based_ppdus_need_protection() {
        let dsss = TxVector::Dsss {
            rate_kbps: 11_000,
            preamble: DsssPreamble::Short,
        };
        assert!(!needs_protection(&dsss));
        assert!(!needs_protection(&PROTECTION_RATE));
        assert!(needs_protection(&TxVector::Ofdm { rate_mbps: 6 }));
        assert!(needs_protection(&TxVector::Ht {
            mcs: 0,
            width: ChannelWidth::Mhz20,
            gi: GuardInterval::Long,
        }));
        assert_eq!(PROTECTION_RATE.validate(), Ok(()));
    }
}
