//! The durations of every exchange on a link ([`LinkAirtime`]), and the one rule that
//! decides how an exchange protects its data PPDU ([`LinkAirtime::protection_for`]).
//!
//! A part of the MAC that knows no cell and no medium: the engine (`air/`) and the
//! frame sequence (`mac/sequence.rs`) read it.

use crate::mac::protection::{Protection, PROTECTION_RATE};
use crate::phy::rates::{
    control_response_rate, PpduTimer, ACK_BYTES, BLOCK_ACK_BYTES, CTS_BYTES, RTS_BYTES,
};
use crate::phy::timing::PhyTiming;
use crate::phy::TxVector;
use crate::Nanos;

/// The durations of every exchange on a link: a link's rate and the band are fixed for
/// the whole run, so the data PPDU's TXTIME equation ([`PpduTimer`]) and the control
/// frames at the link's control-response rate (10.6.6.5) are the same at every
/// exchange. Each value equals [`TxVector::ppdu_duration`] of its frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LinkAirtime {
    /// Data PPDUs at the link's rate.
    pub(crate) data: PpduTimer,
    /// ACK and BlockAck at the control-response rate of the link's rate.
    pub(crate) ack: Nanos,
    pub(crate) block_ack: Nanos,
    /// RTS and CTS of an RTS/CTS exchange: at the control-response rate, or at the
    /// protection rate on a link protected from 802.11b stations (10.26.2).
    pub(crate) rts: Nanos,
    pub(crate) cts: Nanos,
    /// CTS-to-self + SIFS in front of every data PPDU of a link protected by
    /// CTS-to-self; zero on every other link.
    pub(crate) cts_to_self: Nanos,
    /// Every data PPDU goes after RTS/CTS (a link protected by RTS/CTS).
    pub(crate) always_rts: bool,
    /// The rate of RTS, CTS and CTS-to-self on this link: the control-response rate, or
    /// the protection rate on a link protected from 802.11b stations.
    pub(crate) rts_cts_txv: TxVector,
    /// The control-response rate of the link's rate (10.6.6.5): the ACK's and
    /// BlockAck's.
    pub(crate) ctl_txv: TxVector,
}

impl LinkAirtime {
    /// The durations of a link at `txv` with `timing`'s band, SIFS and standard.
    /// `protection` is how the link's PPDUs are protected: [`Protection::Off`] unless an
    /// 802.11b station is in the cell and `txv` needs protection.
    pub(crate) fn new(txv: &TxVector, timing: &PhyTiming, protection: Protection) -> LinkAirtime {
        let band = timing.band;
        let ctl = control_response_rate(txv, timing.standard);
        // RTS and CTS go at a rate the 802.11b stations decode when they protect.
        let rts_cts = match protection {
            Protection::Off => ctl,
            Protection::CtsToSelf | Protection::RtsCts => PROTECTION_RATE,
        };
        LinkAirtime {
            data: PpduTimer::new(txv, band),
            ack: ctl.ppdu_duration(ACK_BYTES, band),
            block_ack: ctl.ppdu_duration(BLOCK_ACK_BYTES, band),
            rts: rts_cts.ppdu_duration(RTS_BYTES, band),
            cts: rts_cts.ppdu_duration(CTS_BYTES, band),
            cts_to_self: match protection {
                Protection::CtsToSelf => {
                    PROTECTION_RATE.ppdu_duration(CTS_BYTES, band) + timing.sifs
                }
                Protection::RtsCts | Protection::Off => Nanos::ZERO,
            },
            always_rts: protection == Protection::RtsCts,
            rts_cts_txv: rts_cts,
            ctl_txv: ctl,
        }
    }

    /// How an exchange of a `psdu_bytes` PPDU on this link protects its data PPDU, the
    /// one rule for every exchange on both media: RTS/CTS when the PSDU is over the RTS
    /// threshold (`rts_threshold_bytes`, 802.11-2016 10.3.2.6), when the link is
    /// protected from 802.11b stations by RTS/CTS (10.26.2), or when the retry chain's
    /// stage the PPDU goes out at asks for it (`stage_asks_rts`: minstrel_ht's RTS on
    /// retries, rate-control.md §5); else the link's CTS-to-self if it has one; else
    /// nothing.
    #[inline]
    pub(crate) fn protection_for(
        &self,
        psdu_bytes: u32,
        stage_asks_rts: bool,
        rts_threshold_bytes: Option<u32>,
    ) -> Protection {
        let over_threshold = rts_threshold_bytes.is_some_and(|th| psdu_bytes > th);
        if over_threshold || stage_asks_rts {
            Protection::RtsCts
        } else {
            self.standing_protection()
        }
    }

    /// The protection every data PPDU on this link gets whatever its size and stage:
    /// the link's ERP protection from 802.11b stations (10.26.2), or none.
    pub(crate) fn standing_protection(&self) -> Protection {
        if self.always_rts {
            Protection::RtsCts
        } else if self.cts_to_self > Nanos::ZERO {
            Protection::CtsToSelf
        } else {
            Protection::Off
        }
    }

    /// The air time an exchange spends protecting its data PPDU before it starts: RTS,
    /// SIFS, CTS, SIFS; the CTS-to-self and SIFS; or nothing.
    pub(crate) fn protection(&self, protection: Protection, sifs: Nanos) -> Nanos {
        match protection {
            Protection::RtsCts => self.rts + sifs + self.cts + sifs,
            Protection::CtsToSelf => self.cts_to_self,
            Protection::Off => Nanos::ZERO,
        }
    }

    /// The response to a data PPDU: a BlockAck to an A-MPDU, an ACK otherwise.
    pub(crate) fn response(&self, aggregated: bool) -> Nanos {
        if aggregated {
            self.block_ack
        } else {
            self.ack
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::phy::{Band, Standard};

    /// The one protection rule: RTS/CTS over the threshold, on a stage that asks for it
    /// or on a link protected by RTS/CTS; else the link's standing protection.
    #[test]
    fn protection_follows_threshold_stage_and_link() {
        let txv = TxVector::Ofdm { rate_mbps: 54 };
        let timing = PhyTiming::new(Standard::G, Band::Ghz2_4);
        let rts = Protection::RtsCts;
        for (link, standing) in [
            (Protection::Off, Protection::Off),
            (Protection::CtsToSelf, Protection::CtsToSelf),
            (Protection::RtsCts, rts),
        ] {
            let air = LinkAirtime::new(&txv, &timing, link);
            assert_eq!(air.protection_for(1_500, false, None), standing);
            assert_eq!(air.protection_for(1_500, false, Some(1_500)), standing);
            assert_eq!(air.protection_for(1_501, false, Some(1_500)), rts);
            assert_eq!(air.protection_for(100, true, None), rts);
        }
    }

    #[test]
    fn link_airtime_equals_direct_durations() {
        let vectors = crate::phy::rates::sample_vectors();
        let standards = [
            Standard::A,
            Standard::B,
            Standard::G,
            Standard::N,
            Standard::Ac,
        ];
        for txv in vectors {
            for standard in standards {
                for band in [Band::Ghz2_4, Band::Ghz5] {
                    let timing = PhyTiming::new(standard, band);
                    let air = LinkAirtime::new(&txv, &timing, Protection::Off);
                    let ctl = control_response_rate(&txv, standard);
                    assert_eq!(air.ctl_txv, ctl);
                    assert_eq!(air.ack, ctl.ppdu_duration(ACK_BYTES, band));
                    assert_eq!(air.response(false), ctl.ppdu_duration(ACK_BYTES, band));
                    assert_eq!(air.response(true), ctl.ppdu_duration(BLOCK_ACK_BYTES, band));
                    assert_eq!(air.rts, ctl.ppdu_duration(RTS_BYTES, band));
                    assert_eq!(air.cts, ctl.ppdu_duration(CTS_BYTES, band));
                    assert_eq!(air.standing_protection(), Protection::Off);
                    assert_eq!(air.protection(Protection::Off, timing.sifs), Nanos::ZERO);
                    assert!(!air.always_rts);
                    for len in [0, 14, 1_500, 1_538, 65_535] {
                        assert_eq!(air.data.duration(len), txv.ppdu_duration(len, band));
                    }
                    // Protected links: the same data and responses, protection frames
                    // at 1 Mbit/s (long preamble, no signal extension: 192 µs + 8 µs
                    // per byte).
                    for mode in [Protection::CtsToSelf, Protection::RtsCts] {
                        let p = LinkAirtime::new(&txv, &timing, mode);
                        assert_eq!(
                            (p.data, p.ack, p.block_ack),
                            (air.data, air.ack, air.block_ack)
                        );
                        assert_eq!(p.rts, Nanos::from_us(192 + 8 * 20));
                        assert_eq!(p.cts, Nanos::from_us(192 + 8 * 14));
                        let expected = match mode {
                            Protection::CtsToSelf => Nanos::from_us(304) + timing.sifs,
                            _ => Nanos::from_us(352 + 304) + timing.sifs * 2,
                        };
                        assert_eq!(p.standing_protection(), mode);
                        assert_eq!(p.protection(mode, timing.sifs), expected);
                    }
                }
            }
        }
    }
}
