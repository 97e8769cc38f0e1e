//! Interframe spaces and slot timing per PHY and band (802.11-2016 Tables 15-5, 16-5,
//! 17-21, 18-5, 19-25, 21-28; reference §11.2).

use super::rates::{lowest_basic_rate, ACK_BYTES};
use super::{Band, DsssPreamble, Standard, TxVector};
use crate::Nanos;

/// The MAC-visible timing constants of a PHY.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PhyTiming {
    /// aSlotTime.
    pub slot: Nanos,
    /// aSIFSTime.
    pub sifs: Nanos,
    /// aCCATime: how long after a transmission starts the other stations see the medium
    /// busy. A station whose backoff ends within this window after another station's
    /// transmission started transmits too (the two collide). Slot boundaries of stations
    /// that share an idle reference are aligned, so this only matters when their
    /// references differ (EIFS versus ACK timeout after a collision).
    pub cca_detect: Nanos,
    /// aRxPHYStartDelay: part of the ACK/CTS timeout.
    pub rx_phy_start_delay: Nanos,
    /// The BSS standard.
    pub standard: Standard,
    /// The band: at 2.4 GHz OFDM frames end with a 6 µs signal extension (§11.2).
    pub band: Band,
    /// The lowest rate of the BSS basic rate set: beacons go at it, and EIFS counts an
    /// ACK at it.
    pub lowest_basic: TxVector,
}

/// aRxPHYStartDelay of the DSSS/HR-DSSS PHY with the long preamble (802.11-2016 Tables
/// 15-5, 16-5): what a sender waits for beyond SIFS + slot for the response to a DSSS frame.
const DSSS_RX_PHY_START_DELAY_US: u64 = 192;

impl PhyTiming {
    /// The timing of `standard` in `band` with only ERP/HT/VHT stations in a 2.4 GHz
    /// OFDM-family BSS: the short (9 µs) slot. [`PhyTiming::for_bss`] with
    /// `non_erp_present = false`.
    pub fn new(standard: Standard, band: Band) -> PhyTiming {
        PhyTiming::for_bss(standard, band, false)
    }

    /// The timing of a BSS of `standard` in `band`; `non_erp_present`: an 802.11b
    /// (DSSS/HR-DSSS) station is associated with a 2.4 GHz 802.11g/n BSS
    /// ([`PhyTiming::non_erp_applies`] decides whether the flag matters).
    ///
    /// Such a BSS uses the long slot, 20 µs: ERP's aSlotTime is 9 µs only while every
    /// station of the BSS has the Short Slot Time capability (802.11-2016 clause 18,
    /// 9.4.1.4), which an 802.11b station lacks (hostapd counts
    /// `num_sta_no_short_slot_time` and turns the short slot off). DIFS is then
    /// 10 + 2 × 20 = 50 µs. Its basic rate set is DSSS (every
    /// station must decode the basic rates; hostapd's 802.11g default is 1, 2, 5.5 and
    /// 11 Mbit/s), so beacons and the ACK inside EIFS go at 1 Mbit/s with the long
    /// preamble: EIFS = 10 + 304 + 50 = 364 µs.
    pub fn for_bss(standard: Standard, band: Band, non_erp_present: bool) -> PhyTiming {
        let non_erp = non_erp_present && PhyTiming::non_erp_applies(standard, band);
        // (slot, SIFS, aCCATime, aRxPHYStartDelay) in µs.
        let (slot_us, sifs_us, cca_us, rx_start_us) = match (standard, band) {
            // DSSS: slot 20, SIFS 10, aCCATime ≤ 15 µs, aRxPHYStartDelay 192 µs (long
            // preamble; 96 with short, the longer one bounds the timeout).
            (Standard::B, _) => (20, 10, 15, 192),
            // OFDM family at 2.4 GHz (ERP, short slot): SIFS 10 µs plus the 6 µs signal
            // extension carried by every OFDM PPDU (see rates.rs). The long slot with
            // an 802.11b station in the BSS.
            (_, Band::Ghz2_4) if non_erp => (20, 10, 4, 25),
            (_, Band::Ghz2_4) => (9, 10, 4, 25),
            // 5 GHz OFDM: slot 9, SIFS 16, aCCATime < 4 µs, aRxPHYStartDelay 25 µs.
            (_, Band::Ghz5) => (9, 16, 4, 25),
        };
        PhyTiming {
            slot: Nanos::from_us(slot_us),
            sifs: Nanos::from_us(sifs_us),
            cca_detect: Nanos::from_us(cca_us),
            rx_phy_start_delay: Nanos::from_us(rx_start_us),
            standard,
            band,
            lowest_basic: if non_erp {
                TxVector::Dsss {
                    rate_kbps: 1000,
                    preamble: DsssPreamble::Long,
                }
            } else {
                lowest_basic_rate(standard)
            },
        }
    }

    /// Whether a BSS of `standard` in `band` changes its rules for an 802.11b station:
    /// an ERP (802.11g) or HT (802.11n) BSS in 2.4 GHz. (An 802.11b BSS is all DSSS
    /// already; 5 GHz has no DSSS.)
    pub fn non_erp_applies(standard: Standard, band: Band) -> bool {
        band == Band::Ghz2_4 && matches!(standard, Standard::G | Standard::N)
    }

    /// AIFS\[AC\] = aSIFSTime + AIFSN × aSlotTime (DIFS is AIFSN = 2).
    pub fn aifs(&self, aifsn: u8) -> Nanos {
        self.sifs + self.slot * aifsn as u64
    }

    /// DIFS = aSIFSTime + 2 × aSlotTime.
    pub fn difs(&self) -> Nanos {
        self.aifs(2)
    }

    /// How long after a response-eliciting frame ends its sender waits for the ACK, CTS
    /// or BlockAck: aSIFSTime + aSlotTime + aRxPHYStartDelay (10.3.2.9).
    pub fn response_timeout(&self) -> Nanos {
        self.sifs + self.slot + self.rx_phy_start_delay
    }

    /// [`PhyTiming::response_timeout`] for a frame sent at `eliciting`: a DSSS frame is
    /// answered at a DSSS rate, whose PHY starts receiving 192 µs into the response
    /// (aRxPHYStartDelay of the long preamble), whatever the BSS's own PHY. Equal to
    /// `response_timeout` for every other frame, and for every frame of an 802.11b BSS.
    pub fn response_timeout_for(&self, eliciting: &TxVector) -> Nanos {
        if eliciting.is_dsss() {
            self.sifs + self.slot + Nanos::from_us(DSSS_RX_PHY_START_DELAY_US)
        } else {
            self.response_timeout()
        }
    }

    /// The duration of an ACK at the lowest basic rate: the part of EIFS beyond
    /// SIFS + DIFS (EIFS = aSIFSTime + DIFS + ACKTxTime, 10.3.2.3.7). With EDCA,
    /// EIFS\[AC\] = EIFS − DIFS + AIFS\[AC\], so this plus SIFS is what an errored
    /// reception adds to every AC's AIFS.
    pub fn eifs_extra(&self) -> Nanos {
        self.sifs + self.lowest_basic.ppdu_duration(ACK_BYTES, self.band)
    }

    /// EIFS for legacy DCF.
    pub fn eifs(&self) -> Nanos {
        self.eifs_extra() + self.difs()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ofdm_5ghz_interframe_spaces() {
        let t = PhyTiming::new(Standard::A, Band::Ghz5);
        assert_eq!(t.difs(), Nanos::from_us(34));
        // AIFS per reference §11.2: BE (AIFSN 3) 43 µs, BK (7) 79 µs, AP VO (1) 25 µs.
        assert_eq!(t.aifs(3), Nanos::from_us(43));
        assert_eq!(t.aifs(7), Nanos::from_us(79));
        assert_eq!(t.aifs(1), Nanos::from_us(25));
        // EIFS = 16 + 34 + ACK at 6 Mbit/s (20 + 6 × 4 = 44) = 94 µs.
        assert_eq!(t.eifs(), Nanos::from_us(94));
    }

    #[test]
    fn erp_with_an_802_11b_station_uses_the_long_slot_and_dsss_basic_rates() {
        for std in [Standard::G, Standard::N] {
            let short = PhyTiming::new(std, Band::Ghz2_4);
            assert_eq!(short.slot, Nanos::from_us(9));
            assert_eq!(short.difs(), Nanos::from_us(28));
            // EIFS = 10 + 28 + ACK at 6 Mbit/s with the signal extension (44 + 6).
            assert_eq!(short.eifs(), Nanos::from_us(88));
            let long = PhyTiming::for_bss(std, Band::Ghz2_4, true);
            assert_eq!(long.slot, Nanos::from_us(20));
            assert_eq!(long.sifs, Nanos::from_us(10));
            assert_eq!(long.difs(), Nanos::from_us(50));
            // BE AIFSN 3: 10 + 3 × 20.
            assert_eq!(long.aifs(3), Nanos::from_us(70));
            // EIFS = 10 + 50 + ACK at 1 Mbit/s long preamble (192 + 112) = 364 µs.
            assert_eq!(long.eifs(), Nanos::from_us(364));
            // Response timeouts: SIFS + slot + 25 µs (OFDM) or 192 µs (DSSS).
            let ofdm = TxVector::Ofdm { rate_mbps: 54 };
            let dsss = TxVector::Dsss {
                rate_kbps: 1000,
                preamble: DsssPreamble::Long,
            };
            assert_eq!(long.response_timeout_for(&ofdm), Nanos::from_us(55));
            assert_eq!(long.response_timeout_for(&dsss), Nanos::from_us(222));
            assert_eq!(short.response_timeout_for(&ofdm), short.response_timeout());
        }
        // Elsewhere the flag changes nothing: 802.11b is DSSS already, 5 GHz has none.
        for (std, band) in [
            (Standard::B, Band::Ghz2_4),
            (Standard::N, Band::Ghz5),
            (Standard::A, Band::Ghz5),
            (Standard::Ac, Band::Ghz5),
        ] {
            assert_eq!(
                PhyTiming::for_bss(std, band, true),
                PhyTiming::new(std, band)
            );
        }
        let b = PhyTiming::new(Standard::B, Band::Ghz2_4);
        let dsss = TxVector::Dsss {
            rate_kbps: 11000,
            preamble: DsssPreamble::Short,
        };
        assert_eq!(b.response_timeout_for(&dsss), b.response_timeout());
    }

    #[test]
    fn dsss_interframe_spaces() {
        let t = PhyTiming::new(Standard::B, Band::Ghz2_4);
        assert_eq!(t.difs(), Nanos::from_us(50));
        // EIFS = 10 + 50 + ACK at 1 Mbit/s long preamble (192 + 112) = 364 µs.
        assert_eq!(t.eifs(), Nanos::from_us(364));
    }
}
