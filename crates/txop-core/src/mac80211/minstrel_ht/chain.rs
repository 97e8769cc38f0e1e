//! The retry chain: tries per stage and the rate table (`minstrel_calc_retransmit`,
//! `minstrel_ht_set_rate`, `minstrel_ht_update_rates`; rate-control.md §5).

use super::groups::{self, rate_group};
use super::stats::frac;
use super::MinstrelHt;
use crate::mac80211::rate_chain::{RateChain, RateIdx, RateStage, MAX_RATE_STAGES};
use crate::mac80211::rate_control::MinstrelEra;

/// Smallest contention window the estimate starts from (`mp->cw_min`).
const CW_MIN: u32 = 15;
/// Largest contention window (`mp->cw_max`).
const CW_MAX: u32 = 1023;
/// Slot time of the estimate, µs (`t_slot = 9; /* FIXME */`).
const SLOT_US: u32 = 9;
/// Longest time the hardware should spend in one stage, µs (`mp->segment_size`).
const SEGMENT_US: u64 = 6000;
/// Below this probability a stage gets 2 tries whatever the estimate says (20 %).
const PROB_FEW_TRIES: u32 = frac(20, 100);
/// Below this probability the estimate is not made (10 %).
const PROB_NO_ESTIMATE: u32 = frac(1, 10);

/// Mean contention of one try at window `cw`, µs: `slot · cw / 2`; and the next window,
/// doubled plus one, capped at [`CW_MAX`].
fn contention_us(cw: u32) -> (u64, u32) {
    (u64::from((SLOT_US * cw) >> 1), ((cw << 1) | 1).min(CW_MAX))
}

impl MinstrelHt {
    /// `minstrel_calc_retransmit`: how many tries of `rate` fit in a 6000 µs segment,
    /// without and with RTS/CTS. Two tries always; each further try costs its
    /// contention (window doubling from 15), the per-A-MPDU overhead and the A-MPDU's
    /// airtime (`duration · avg_ampdu_len`); at most `max_retry`. Below 10 %
    /// probability: 1 and 1, not cached.
    fn calc_retransmit(&mut self, rate: u16) {
        let max_retry = self.max_retry;
        let ampdu_len = u64::from(self.avg_ampdu_len_mpdus());
        let data_us = u64::from(self.duration_ns(rate)) * ampdu_len / 1000;
        let group = rate_group(rate);
        let (overhead, overhead_rts) = match self.era {
            MinstrelEra::Linux6 if groups::is_legacy_group(group) => {
                (self.overhead_legacy_us, self.overhead_legacy_rtscts_us)
            }
            MinstrelEra::Linux5_10 if group == groups::CCK_GROUP => (0, 0),
            MinstrelEra::Linux5_10 if group == groups::OFDM_GROUP => {
                (self.overhead_legacy_us, self.overhead_legacy_rtscts_us)
            }
            _ => (self.overhead_us, self.overhead_rtscts_us),
        };
        let (overhead, overhead_rts) = (u64::from(overhead), u64::from(overhead_rts));

        let mrs = self.stats_mut(rate);
        if u32::from(mrs.prob_avg) < PROB_NO_ESTIMATE {
            mrs.retry_count = 1;
            mrs.retry_count_rtscts = 1;
            return;
        }
        mrs.retry_count = 2;
        mrs.retry_count_rtscts = 2;
        mrs.retry_updated = true;

        // Contention of the first two tries.
        let (c1, cw) = contention_us(CW_MIN);
        let (c2, mut cw) = contention_us(cw);
        let mut tx_time = c1 + c2 + 2 * (overhead + data_us);
        let mut tx_time_rts = c1 + c2 + 2 * (overhead_rts + data_us);
        loop {
            let (ctime, next) = contention_us(cw);
            cw = next;
            tx_time += ctime + overhead + data_us;
            tx_time_rts += ctime + overhead_rts + data_us;
            if tx_time_rts < SEGMENT_US {
                mrs.retry_count_rtscts += 1;
            }
            if tx_time >= SEGMENT_US {
                break;
            }
            mrs.retry_count += 1;
            if mrs.retry_count >= max_retry {
                break;
            }
        }
    }

    /// `minstrel_ht_set_rate`: stage `offset` of the table at `rate`. Tries from
    /// [`MinstrelHt::calc_retransmit`] (the RTS/CTS count on stages after the first,
    /// which use RTS/CTS), 2 below 20 % probability; never more than `max_retry`.
    fn table_stage(&mut self, offset: usize, rate: u16) -> RateStage {
        if !self.stats(rate).retry_updated {
            self.calc_retransmit(rate);
        }
        let mrs = self.stats(rate);
        let (count, count_rts) = if u32::from(mrs.prob_avg) < PROB_FEW_TRIES || mrs.retry_count == 0
        {
            (2, 2)
        } else {
            (mrs.retry_count, mrs.retry_count_rtscts)
        };
        let rts = offset > 0;
        let tries = if rts { count_rts } else { count };
        RateStage {
            txv: self.txv(rate),
            rate: RateIdx(rate),
            tries: tries.clamp(1, self.max_retry.max(1)),
            rts,
        }
    }

    /// `minstrel_ht_update_rates`: rebuilds the rate table. 6.x: `max_tp_rate[0]`,
    /// then `max_tp_rate[1..]` up to one slot short of the hardware's, then
    /// `max_prob_rate` (4 slots: `[tp0, tp1, tp2, prob]`; 2: `[tp0, prob]`). ≤ 5.10:
    /// `max_tp_rate[0]`, `max_tp_rate[1]` with 3 slots or more, `max_prob_rate` with 2
    /// or more (`[tp0, tp1, prob]` on 4-slot hardware).
    pub(super) fn update_rates(&mut self) {
        let max_rates = usize::from(self.max_rates);
        let mut picks = [0u16; MAX_RATE_STAGES];
        let mut n = 0;
        picks[n] = self.max_tp_rate[0];
        n += 1;
        match self.era {
            MinstrelEra::Linux6 => {
                while n + 1 < max_rates {
                    picks[n] = self.max_tp_rate[n];
                    n += 1;
                }
                if n < max_rates {
                    picks[n] = self.max_prob_rate;
                    n += 1;
                }
            }
            MinstrelEra::Linux5_10 => {
                if max_rates >= 3 {
                    picks[n] = self.max_tp_rate[1];
                    n += 1;
                }
                if max_rates >= 2 {
                    picks[n] = self.max_prob_rate;
                    n += 1;
                }
            }
        }
        let mut stages = [*self.table.first(); MAX_RATE_STAGES];
        for (offset, &rate) in picks[..n].iter().enumerate() {
            stages[offset] = self.table_stage(offset, rate);
        }
        if let Some(chain) = RateChain::from_stages(&stages[..n], false) {
            self.table = chain;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::groups::mi_rate;
    use super::super::PeerCaps;
    use super::*;
    use crate::mac80211::rate_control::HwRateCaps;
    use crate::phy::{Band, ChannelWidth, Standard};

    fn station(era: MinstrelEra, hw: HwRateCaps) -> MinstrelHt {
        let caps = PeerCaps {
            standard: Standard::N,
            band: Band::Ghz5,
            width: ChannelWidth::Mhz40,
            sgi: true,
            max_nss: 2,
            short_preamble: false,
        };
        MinstrelHt::new(era, &caps, hw, 3)
    }

    /// The kernel's estimate written out independently: tries that fit in 6000 µs.
    fn expected_tries(data_us: u64, overhead: u64, overhead_rts: u64, max_retry: u8) -> (u8, u8) {
        let contention = |cw: u64| 9 * cw / 2;
        let windows = [
            15u64, 31, 63, 127, 255, 511, 1023, 1023, 1023, 1023, 1023, 1023,
        ];
        let mut tx = contention(15) + contention(31) + 2 * (overhead + data_us);
        let mut tx_rts = contention(15) + contention(31) + 2 * (overhead_rts + data_us);
        let (mut n, mut n_rts) = (2u8, 2u8);
        for &cw in &windows[2..] {
            tx += contention(cw) + overhead + data_us;
            tx_rts += contention(cw) + overhead_rts + data_us;
            if tx_rts < 6000 {
                n_rts += 1;
            }
            if tx >= 6000 {
                break;
            }
            n += 1;
            if n >= max_retry {
                break;
            }
        }
        (n, n_rts)
    }

    #[test]
    fn tries_per_stage_fill_the_segment_and_later_stages_use_rts() {
        for era in [MinstrelEra::Linux6, MinstrelEra::Linux5_10] {
            let mut mi = station(era, HwRateCaps::ATH9K);
            mi.avg_ampdu_len = frac(16, 1) as i32;
            // HT40 SGI 2SS (group 13): MCS 15, 14 at 95 %; HT40 SGI 1SS MCS 7 at 100 %.
            let fast = [mi_rate(13, 7), mi_rate(13, 6), mi_rate(13, 5)];
            for &r in &fast {
                mi.stats_mut(r).prob_avg = 3900;
            }
            let robust = mi_rate(12, 7);
            mi.stats_mut(robust).prob_avg = 4096;
            mi.max_tp_rate = [fast[0], fast[1], fast[2], robust];
            mi.max_prob_rate = robust;
            mi.update_rates();
            let chain = *mi.rate_table();
            let picks: Vec<u16> = chain.stages().iter().map(|s| s.rate.0).collect();
            match era {
                MinstrelEra::Linux6 => assert_eq!(picks, [fast[0], fast[1], fast[2], robust]),
                MinstrelEra::Linux5_10 => assert_eq!(picks, [fast[0], fast[1], robust]),
            }
            for (k, stage) in chain.stages().iter().enumerate() {
                assert_eq!(stage.rts, k > 0, "{era:?} stage {k}");
                let data_us = u64::from(mi.duration_ns(stage.rate.0)) * 16 / 1000;
                let (n, n_rts) = expected_tries(data_us, 108, 228, 10);
                let want = if k > 0 { n_rts } else { n };
                assert_eq!(stage.tries, want, "{era:?} stage {k}");
                assert!(stage.tries >= 2 && stage.tries <= 10);
            }
        }
    }

    #[test]
    fn low_probability_stages_get_two_tries_and_caps_hold() {
        let mut mi = station(MinstrelEra::Linux6, HwRateCaps::ATH9K);
        let r = mi_rate(13, 7);
        for (prob, want) in [(0u16, 2u8), (300, 2), (700, 2)] {
            mi.stats_mut(r).prob_avg = prob;
            mi.stats_mut(r).retry_updated = false;
            mi.max_tp_rate = [r; 4];
            mi.max_prob_rate = r;
            mi.update_rates();
            assert!(mi.rate_table().stages().iter().all(|s| s.tries == want));
        }
        // A fast rate at 100 % with a short estimate hits the per-stage cap.
        let tiny = HwRateCaps {
            max_rates: 2,
            max_rate_tries: 3,
        };
        let mut mi = station(MinstrelEra::Linux6, tiny);
        mi.stats_mut(r).prob_avg = 4096;
        mi.max_tp_rate = [r; 4];
        mi.max_prob_rate = r;
        mi.update_rates();
        let chain = mi.rate_table();
        assert_eq!(chain.stages().len(), 2);
        assert!(chain.stages().iter().all(|s| s.tries <= 3));
        assert_eq!(chain.first().tries, 3);
        // No max_rate_tries registered: mac80211's 7.
        let none = HwRateCaps {
            max_rates: 4,
            max_rate_tries: 0,
        };
        assert_eq!(station(MinstrelEra::Linux6, none).max_retry, 7);
    }

    #[test]
    fn one_and_two_slot_hardware_tables() {
        let one = HwRateCaps {
            max_rates: 1,
            max_rate_tries: 10,
        };
        let two = HwRateCaps {
            max_rates: 2,
            max_rate_tries: 10,
        };
        for era in [MinstrelEra::Linux6, MinstrelEra::Linux5_10] {
            assert_eq!(station(era, one).rate_table().stages().len(), 1);
            let mut mi = station(era, two);
            let (a, b) = (mi_rate(13, 7), mi_rate(12, 3));
            mi.max_tp_rate = [a, a, a, a];
            mi.max_prob_rate = b;
            mi.update_rates();
            let picks: Vec<u16> = mi.rate_table().stages().iter().map(|s| s.rate.0).collect();
            assert_eq!(picks, [a, b]);
        }
    }
}
