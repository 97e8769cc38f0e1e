//! Look-around sampling of ≤ 5.10 (`minstrel_get_sample_rate`,
//! `minstrel_set_next_sample_idx` and the `sample_wait`/`sample_tries`/`sample_count`
//! bookkeeping of `minstrel_ht_tx_status`; rate-control.md §1).
//!
//! After each sample the station waits `16 + 2 · avg_ampdu_len` PPDUs, then draws the
//! next entry of the sample table, walking the groups round. The draw is dropped (and
//! the next PPDU draws again) for the current `max_tp_rate[0]` or `max_prob_rate`,
//! for rates above 95 % or more than 3 times slower than `max_prob_rate`, for
//! already-sampled rates slower than the faster of `max_tp_rate[0..1]`, and — unless
//! they went untried for 20 intervals, and then at most 3 per interval — for rates
//! slower than the slower of the two. At most `8 · groups` samples per interval.
//! The share of PPDUs this samples is about `1 / (17 + 2 · avg_ampdu_len)` (2 % with
//! A-MPDUs of 16, 5 % without aggregation), less when draws are dropped.

use super::groups::{self, mi_rate, rate_group, GROUP_RATES, N_GROUPS};
use super::stats::frac;
use super::MinstrelHt;

/// Rates above this probability (95 %) are not sampled.
const PROB_SKIP: u32 = frac(95, 100);
/// A slow rate is sampled only after this many intervals without attempts.
const SLOW_AFTER_SKIPPED: u8 = 20;

/// The look-around counters (`mi->sample_wait`, `sample_tries`, `sample_count`,
/// `sample_slow`, `sample_group`).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Lookaround {
    /// PPDUs to send before the next draw.
    sample_wait: u32,
    /// Draws left to turn into a sample.
    sample_tries: u32,
    /// Samples left in this interval.
    pub(super) sample_count: u32,
    /// Slow rates sampled in this interval.
    pub(super) sample_slow: u32,
    /// The group the next draw comes from.
    sample_group: usize,
}

impl Lookaround {
    /// The state `minstrel_ht_update_caps` leaves: with multi-rate retry (4 slots or
    /// more, `has_mrr`) sample at once, otherwise after 8 PPDUs; 4 draws.
    pub(super) fn new(max_rates: u8) -> Lookaround {
        let mrr = max_rates >= 4;
        Lookaround {
            sample_wait: if mrr { 0 } else { 8 },
            sample_tries: 4,
            sample_count: if mrr { 16 } else { 8 },
            sample_slow: 0,
            sample_group: 0,
        }
    }
}

impl MinstrelHt {
    /// On every tx status: when the last sample is done and none is pending, arm the
    /// next one after `16 + 2 · avg_ampdu_len` PPDUs.
    pub(super) fn lookaround_on_status(&mut self) {
        let avg = self.avg_ampdu_len_mpdus();
        let la = &mut self.lookaround;
        if la.sample_wait == 0 && la.sample_tries == 0 && la.sample_count > 0 {
            la.sample_wait = 16 + 2 * avg;
            la.sample_tries = 1;
            la.sample_count -= 1;
        }
    }

    /// The sample rate for the next PPDU, if one is due and its draw passes
    /// (`minstrel_get_sample_rate`, then `minstrel_ht_get_rate`'s CCK preamble check).
    pub(super) fn next_probe_lookaround(&mut self) -> Option<u16> {
        let la = &mut self.lookaround;
        if la.sample_wait > 0 {
            la.sample_wait -= 1;
            return None;
        }
        if la.sample_tries == 0 {
            return None;
        }
        let group = la.sample_group;
        let mg = &self.groups[group];
        let idx = usize::from(self.sample_table[usize::from(mg.column)][usize::from(mg.index)]);
        self.set_next_sample_idx();
        if self.supported[group] & (1 << idx) == 0 {
            return None;
        }
        let rate = mi_rate(group, idx);
        let mrs = *self.stats(rate);

        let (tp0, tp1) = (self.max_tp_rate[0], self.max_tp_rate[1]);
        // tp_rate1 is the faster of the two, tp_rate2 the slower.
        let (tp_rate1, tp_rate2) = if self.duration_ns(tp0) > self.duration_ns(tp1) {
            (tp1, tp0)
        } else {
            (tp0, tp1)
        };
        if rate == tp0 || rate == self.max_prob_rate {
            return None;
        }
        let sample_dur = self.duration_ns(rate);
        if u32::from(mrs.prob_avg) > PROB_SKIP
            || u64::from(self.duration_ns(self.max_prob_rate)) * 3 < u64::from(sample_dur)
        {
            return None;
        }
        if self.max_rates == 1
            && (self.duration_ns(self.groups[group].max_group_tp_rate[0]) < sample_dur
                || mrs.attempts > 0)
        {
            return None;
        }
        if sample_dur >= self.duration_ns(tp_rate1) && mrs.attempts > 0 {
            return None;
        }
        let max_tp_streams = groups::group_kind(rate_group(tp_rate1)).streams();
        let sample_streams = groups::group_kind(group).streams();
        if sample_dur >= self.duration_ns(tp_rate2)
            && (max_tp_streams - 1 < sample_streams
                || sample_dur >= self.duration_ns(self.max_prob_rate))
        {
            if mrs.sample_skipped < SLOW_AFTER_SKIPPED {
                return None;
            }
            let slow = self.lookaround.sample_slow;
            self.lookaround.sample_slow += 1;
            if slow > 2 {
                return None;
            }
        }
        self.lookaround.sample_tries -= 1;
        (!self.cck_preamble_mismatch(rate)).then_some(rate)
    }

    /// `minstrel_set_next_sample_idx`: on to the next supported group, advancing that
    /// group's position in the sample table (the kernel advances the group it moves
    /// to, not the one just drawn from).
    fn set_next_sample_idx(&mut self) {
        if self.supported.iter().all(|&s| s == 0) {
            return;
        }
        loop {
            let la = &mut self.lookaround;
            la.sample_group = (la.sample_group + 1) % N_GROUPS;
            let group = la.sample_group;
            if self.supported[group] == 0 {
                continue;
            }
            let mg = &mut self.groups[group];
            mg.index += 1;
            if usize::from(mg.index) >= GROUP_RATES {
                mg.index = 0;
                mg.column += 1;
                if usize::from(mg.column) >= self.sample_table.len() {
                    mg.column = 0;
                }
            }
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::groups::{ht_group, mi_rate};
    use super::super::PeerCaps;
    use super::*;
    use crate::mac80211::rate_control::{HwRateCaps, MinstrelEra};
    use crate::phy::{Band, ChannelWidth, Standard};

    fn ht20() -> MinstrelHt {
        let caps = PeerCaps {
            standard: Standard::N,
            band: Band::Ghz5,
            width: ChannelWidth::Mhz20,
            sgi: false,
            max_nss: 2,
            short_preamble: false,
        };
        MinstrelHt::new(MinstrelEra::Linux5_10, &caps, HwRateCaps::ATH9K, 9)
    }

    #[test]
    fn a_sample_waits_sixteen_plus_twice_the_ampdu_length() {
        let mut mi = ht20();
        mi.lookaround.sample_tries = 0;
        mi.lookaround.sample_wait = 0;
        mi.lookaround.sample_count = 5;
        mi.avg_ampdu_len = frac(16, 1) as i32;
        mi.lookaround_on_status();
        assert_eq!(mi.lookaround.sample_wait, 48);
        assert_eq!(mi.lookaround.sample_tries, 1);
        assert_eq!(mi.lookaround.sample_count, 4);
        // A pending sample is not re-armed.
        mi.lookaround_on_status();
        assert_eq!(mi.lookaround.sample_count, 4);
        for _ in 0..48 {
            assert_eq!(mi.next_probe_lookaround(), None);
        }
        assert_eq!(mi.lookaround.sample_wait, 0);
    }

    #[test]
    fn draws_skip_the_current_rates_and_well_known_ones() {
        let mut mi = ht20();
        let g0 = ht_group(1, false, ChannelWidth::Mhz20);
        // Every draw would come from group 0: make it the only supported group.
        mi.supported = [0; N_GROUPS];
        mi.supported[g0] = 0x00ff;
        mi.max_tp_rate = [
            mi_rate(g0, 5),
            mi_rate(g0, 4),
            mi_rate(g0, 3),
            mi_rate(g0, 2),
        ];
        mi.max_prob_rate = mi_rate(g0, 4);
        for i in 0..8 {
            mi.groups[g0].rates[i].prob_avg = if i == 7 { 4000 } else { 2000 };
        }
        let mut seen = Vec::new();
        for _ in 0..200 {
            mi.lookaround.sample_wait = 0;
            mi.lookaround.sample_tries = 1;
            if let Some(r) = mi.next_probe_lookaround() {
                seen.push(r);
            }
        }
        assert!(!seen.is_empty());
        for r in &seen {
            assert_ne!(*r, mi.max_tp_rate[0]);
            assert_ne!(*r, mi.max_prob_rate);
            assert_ne!(*r, mi_rate(g0, 7), "97 % rates are not sampled");
        }
        assert!(seen.contains(&mi_rate(g0, 6)));
    }
}
