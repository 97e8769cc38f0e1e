//! The retry chain rate control hands the hardware with every PPDU, and the
//! transmit status the hardware reports back (`struct ieee80211_tx_rate` in
//! `info->control.rates[]` and `info->status.rates[]`, `include/net/mac80211.h`).
//!
//! A chain is up to [`MAX_RATE_STAGES`] stages, each a rate and a number of tries. The
//! hardware sends the PPDU at the first stage's rate until it is acknowledged or the
//! stage's tries are used up, then goes on to the next stage (rate-control.md §5). The
//! status says how many tries the PPDU took in all; from it the tries of each stage
//! follow ([`RateChain::tries_per_stage`]), as the kernel rewrites `count` per stage and
//! marks the first unused stage with `idx = -1`.

use crate::phy::TxVector;

/// Most stages in a chain: mac80211's `IEEE80211_TX_MAX_RATES` is 4, and no modelled
/// driver registers more (`hw->max_rates`).
pub const MAX_RATE_STAGES: usize = 4;

/// A rate in the numbering of the rate control that chose it (minstrel_ht:
/// `group << 4 | index`, `MI_RATE()`); 0 for rate controls with one rate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RateIdx(pub u16);

/// One stage of a retry chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateStage {
    /// The PHY rate and format of every try of this stage.
    pub txv: TxVector,
    /// The same rate in the rate control's own numbering, reported back in the status.
    pub rate: RateIdx,
    /// Transmission attempts at this rate before the next stage (at least 1).
    pub tries: u8,
    /// Tries of this stage are protected by RTS/CTS
    /// (`IEEE80211_TX_RC_USE_RTS_CTS`; minstrel_ht sets it on every stage after the
    /// first, rate-control.md §5).
    pub rts: bool,
}

/// The rates and tries the hardware works through for one PPDU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateChain {
    stages: [RateStage; MAX_RATE_STAGES],
    len: u8,
    /// The first stage is a probe of a rate rate control wants to measure
    /// (`IEEE80211_TX_CTL_RATE_CTRL_PROBE`): one try at the sample rate, ahead of the
    /// normal chain.
    pub probe: bool,
}

impl RateChain {
    /// A chain of one stage: `tries` attempts at `txv`, no RTS/CTS, no probe.
    pub fn single(txv: TxVector, rate: RateIdx, tries: u8) -> RateChain {
        let stage = RateStage {
            txv,
            rate,
            tries: tries.max(1),
            rts: false,
        };
        RateChain {
            stages: [stage; MAX_RATE_STAGES],
            len: 1,
            probe: false,
        }
    }

    /// A chain of the given stages in order (at most [`MAX_RATE_STAGES`]; later ones are
    /// ignored, as the hardware ignores slots it does not have; a stage of 0 tries
    /// counts as 1). `None` if `stages` is empty.
    pub fn from_stages(stages: &[RateStage], probe: bool) -> Option<RateChain> {
        let first = *stages.first()?;
        let mut chain = RateChain {
            stages: [first; MAX_RATE_STAGES],
            len: 0,
            probe,
        };
        for s in stages.iter().take(MAX_RATE_STAGES) {
            chain.stages[chain.len as usize] = RateStage {
                tries: s.tries.max(1),
                ..*s
            };
            chain.len += 1;
        }
        Some(chain)
    }

    /// The stages in order.
    pub fn stages(&self) -> &[RateStage] {
        &self.stages[..self.len as usize]
    }

    /// The first stage (every chain has one).
    pub fn first(&self) -> &RateStage {
        &self.stages[0]
    }

    /// Tries of all stages together: after this many unanswered tries the hardware
    /// reports the PPDU failed.
    pub fn total_tries(&self) -> u32 {
        self.stages().iter().map(|s| u32::from(s.tries)).sum()
    }

    /// The stage the `try_number`-th try (counted from 0) goes out at, or `None` once
    /// the chain is used up.
    pub fn stage_of_try(&self, try_number: u32) -> Option<&RateStage> {
        self.stage_index_of_try(try_number).map(|i| &self.stages[i])
    }

    /// The position in the chain of the stage the `try_number`-th try (counted from 0)
    /// goes out at, or `None` once the chain is used up.
    pub fn stage_index_of_try(&self, try_number: u32) -> Option<usize> {
        let mut left = try_number;
        for (i, s) in self.stages().iter().enumerate() {
            if left < u32::from(s.tries) {
                return Some(i);
            }
            left -= u32::from(s.tries);
        }
        None
    }

    /// How many of `tries_used` tries each stage took (the status's `count` per stage;
    /// 0 for stages never reached). `tries_used` beyond [`RateChain::total_tries`]
    /// counts as the whole chain.
    pub fn tries_per_stage(&self, tries_used: u32) -> [u8; MAX_RATE_STAGES] {
        let mut out = [0u8; MAX_RATE_STAGES];
        let mut left = tries_used;
        for (o, s) in out.iter_mut().zip(self.stages()) {
            let t = left.min(u32::from(s.tries));
            *o = t as u8;
            left -= t;
        }
        out
    }
}

/// The outcome of one PPDU as the hardware reports it to rate control
/// (`ieee80211_tx_status` with `info->status`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TxStatus<'a> {
    /// The chain the PPDU was sent with.
    pub chain: &'a RateChain,
    /// Tries it took in all, at least 1: the last one was acknowledged if `acked`,
    /// otherwise every try failed.
    pub tries_used: u32,
    /// Whether the last try drew an ACK or a BlockAck.
    pub acked: bool,
    /// MPDUs in the PPDU (`ampdu_len`; 1 without aggregation).
    pub ampdu_len: u16,
    /// MPDUs acknowledged (`ampdu_ack_len`: the BlockAck's bits; 1 or 0 without
    /// aggregation).
    pub ampdu_ack_len: u16,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::phy::{ChannelWidth, GuardInterval};

    fn ht(mcs: u8, tries: u8, rts: bool) -> RateStage {
        RateStage {
            txv: TxVector::Ht {
                mcs,
                width: ChannelWidth::Mhz20,
                gi: GuardInterval::Long,
            },
            rate: RateIdx(u16::from(mcs)),
            tries,
            rts,
        }
    }

    #[test]
    fn tries_walk_the_stages_in_order() {
        let chain =
            RateChain::from_stages(&[ht(7, 2, false), ht(5, 3, true), ht(0, 1, true)], false)
                .unwrap();
        assert_eq!(chain.total_tries(), 6);
        let mcs: Vec<Option<RateIdx>> = (0..7)
            .map(|k| chain.stage_of_try(k).map(|s| s.rate))
            .collect();
        let r = |m| Some(RateIdx(m));
        assert_eq!(mcs, [r(7), r(7), r(5), r(5), r(5), r(0), None]);
        assert_eq!(chain.tries_per_stage(1), [1, 0, 0, 0]);
        assert_eq!(chain.tries_per_stage(4), [2, 2, 0, 0]);
        assert_eq!(chain.tries_per_stage(6), [2, 3, 1, 0]);
        assert_eq!(chain.tries_per_stage(60), [2, 3, 1, 0]);
    }

    #[test]
    fn extra_stages_and_zero_tries_are_bounded() {
        let five = [ht(7, 0, false); 5];
        let chain = RateChain::from_stages(&five, true).unwrap();
        assert_eq!(chain.stages().len(), MAX_RATE_STAGES);
        assert_eq!(chain.total_tries(), 4);
        assert!(chain.probe);
        assert!(RateChain::from_stages(&[], false).is_none());
        assert_eq!(
            RateChain::single(ht(3, 1, false).txv, RateIdx(3), 0).total_tries(),
            1
        );
    }
}
