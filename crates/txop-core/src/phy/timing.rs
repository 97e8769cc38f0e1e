//! Interframe spaces and slot timing per PHY and band (802.11-2016 Tables 15-5, 16-5,
//! 17-21, 18-5, 19-25, 21-28; reference §11.2).

use super::rates::{lowest_basic_rate, ACK_BYTES};
use super::{Band, Standard, TxVector};
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
    /// The BSS standard (selects the basic rate set for EIFS).
    pub standard: Standard,
    pub band: Band,
}

impl PhyTiming {
    /// The timing of `standard` in `band`. 2.4 GHz OFDM-family BSSs use the short
    /// (9 µs) slot: the model has no 802.11b stations in ERP BSSs.
    pub fn new(standard: Standard, band: Band) -> PhyTiming {
        let (slot_us, sifs_us, cca_us, rx_start_us) = match (standard, band) {
            // DSSS: slot 20, SIFS 10, aCCATime ≤ 15 µs, aRxPHYStartDelay 192 µs (long
            // preamble; 96 with short, the longer one bounds the timeout).
            (Standard::B, _) => (20, 10, 15, 192),
            // OFDM family at 2.4 GHz (ERP, short slot): SIFS 10 µs plus the 6 µs signal
            // extension carried by every OFDM PPDU (see rates.rs).
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
        }
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

    /// The duration of an ACK at the lowest basic rate: the part of EIFS beyond
    /// SIFS + DIFS (EIFS = aSIFSTime + DIFS + ACKTxTime, 10.3.2.3.7). With EDCA,
    /// EIFS\[AC\] = EIFS − DIFS + AIFS\[AC\], so this plus SIFS is what an errored
    /// reception adds to every AC's AIFS.
    pub fn eifs_extra(&self) -> Nanos {
        let ack: TxVector = lowest_basic_rate(self.standard);
        self.sifs + ack.ppdu_duration(ACK_BYTES, self.band)
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
    fn dsss_interframe_spaces() {
        let t = PhyTiming::new(Standard::B, Band::Ghz2_4);
        assert_eq!(t.difs(), Nanos::from_us(50));
        // EIFS = 10 + 50 + ACK at 1 Mbit/s long preamble (192 + 112) = 364 µs.
        assert_eq!(t.eifs(), Nanos::from_us(364));
    }
}
