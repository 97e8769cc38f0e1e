//! The throughput metric, the statistics update and the choice of rates
//! (`minstrel_ht_get_tp_avg`, `minstrel_ht_update_stats`,
//! `minstrel_ht_sort_best_tp_rates`, `minstrel_ht_set_best_prob_rate`,
//! `minstrel_ht_assign_best_tp_rates`, `minstrel_ht_prob_rate_reduce_streams`,
//! `minstrel_downgrade_rate`; rate-control.md §3–§4).

use super::groups::{self, mi_rate, rate_group, GROUP_RATES, N_GROUPS};
use super::stats::{ewma, frac, trunc, EWMA_LEVEL};
use super::{MinstrelHt, MAX_THR_RATES};
use crate::mac80211::rate_control::MinstrelEra;
use crate::time::Nanos;

/// Probability below which a rate's throughput counts as 0 (10 %).
const PROB_MIN_TP: u32 = frac(10, 100);
/// Probability the throughput metric is capped at (90 %), "to account for collision
/// related packet error rate fluctuation".
const PROB_TP_CAP: u32 = frac(90, 100);
/// A rate above this probability (75 %) may be `max_prob_rate` by its throughput.
const PROB_ROBUST: u32 = frac(75, 100);
/// Sudden death: more attempts than this in the interval…
const SUDDEN_DEATH_ATTEMPTS: u32 = 30;

impl MinstrelHt {
    /// `minstrel_ht_get_tp_avg`: the throughput of `rate` at probability `prob`, in
    /// average MPDUs per 100 ms: `min(prob, 90 %) · 10⁸ / (overhead / ampdu_len +
    /// duration)` (ns), 0 below 10 %. 6.x charges legacy rates `overhead_legacy` per frame; ≤ 5.10
    /// charges CCK rates nothing (their duration includes the ACK). Each era keeps its
    /// kernel's integer arithmetic.
    pub(super) fn tp_avg(&self, rate: u16, prob: u32) -> u32 {
        if prob < PROB_MIN_TP {
            return 0;
        }
        let group = rate_group(rate);
        let duration = u64::from(self.duration_ns(rate));
        match self.era {
            MinstrelEra::Linux6 => {
                let (overhead, ampdu) = if groups::is_legacy_group(group) {
                    (self.overhead_legacy_us, 1)
                } else {
                    (self.overhead_us, self.avg_ampdu_len_mpdus())
                };
                let nsecs = u64::from(1000 * overhead / ampdu) + duration;
                let p = u64::from(prob.min(PROB_TP_CAP));
                trunc((100 * (p * 1_000_000 / nsecs)) as u32)
            }
            MinstrelEra::Linux5_10 => {
                let overhead_ns = if group == groups::CCK_GROUP {
                    0
                } else if group == groups::OFDM_GROUP {
                    // No OFDM group in ≤ 5.10; txop's stands in with 6.x's accounting.
                    1000 * self.overhead_legacy_us
                } else {
                    1000 * self.overhead_us / self.avg_ampdu_len_mpdus()
                };
                let nsecs = u64::from(overhead_ns) + duration;
                let p = u64::from(prob.min(PROB_TP_CAP));
                trunc((100_000 * (p * 1000 / nsecs)) as u32)
            }
        }
    }

    fn tp_of(&self, rate: u16) -> u32 {
        self.tp_avg(rate, self.prob(rate))
    }

    /// `minstrel_ht_update_stats`: closes the interval of every supported rate (noise
    /// filter or EWMA), updates the average A-MPDU length, and chooses
    /// `max_tp_rate[0..3]`, each group's best rates and `max_prob_rate`; in 6.x also
    /// refills the sample lists and allows a probe at once.
    pub(super) fn update_stats(&mut self, now: Nanos) {
        if self.ampdu_packets > 0 {
            let cur = frac(self.ampdu_len_sum, self.ampdu_packets) as i32;
            self.avg_ampdu_len = ewma(self.avg_ampdu_len, cur, EWMA_LEVEL);
            self.ampdu_len_sum = 0;
            self.ampdu_packets = 0;
        }
        match self.era {
            MinstrelEra::Linux6 => self.update_stats_6(),
            MinstrelEra::Linux5_10 => self.update_stats_5_10(),
        }
        self.last_stats_update = now;
        if self.era == MinstrelEra::Linux6 {
            self.refill_sample_rates();
            self.sample.sample_time = now;
        }
    }

    /// Where the best-throughput lists start (the kernel's initial indices): the legacy
    /// list at CCK (or OFDM) rate 0; the main list at VHT, HT, CCK or OFDM rate 0 in
    /// that order of preference.
    pub(super) fn initial_indices(&self) -> (u16, u16) {
        let sup = |g: usize| self.supported[g] != 0;
        let legacy = if sup(groups::CCK_GROUP) {
            groups::CCK_GROUP
        } else if sup(groups::OFDM_GROUP) {
            groups::OFDM_GROUP
        } else {
            0
        };
        let main = if sup(groups::VHT_GROUP_0) {
            groups::VHT_GROUP_0
        } else if self.ht_supported {
            groups::HT_GROUP_0
        } else if sup(groups::CCK_GROUP) {
            groups::CCK_GROUP
        } else {
            groups::OFDM_GROUP
        };
        (mi_rate(legacy, 0), mi_rate(main, 0))
    }

    /// 6.x: rates are visited fastest first so an untried rate can take the best
    /// probability of the faster rates of its group already evaluated.
    fn update_stats_6(&mut self) {
        let (legacy_init, main_init) = self.initial_indices();
        let mut legacy_tp = [legacy_init; MAX_THR_RATES];
        let mut mcs_tp = [main_init; MAX_THR_RATES];
        let mut max_prob = main_init;

        for group in 0..N_GROUPS {
            let supported = self.supported[group];
            if supported == 0 {
                continue;
            }
            let to_legacy = group == groups::CCK_GROUP && self.ht_supported;
            let mut group_tp = [mi_rate(group, 0); MAX_THR_RATES];
            let mut last_prob = 0u16;
            for i in (0..GROUP_RATES).rev() {
                if supported & (1 << i) == 0 {
                    continue;
                }
                let index = mi_rate(group, i);
                let mrs = &mut self.groups[group].rates[i];
                mrs.retry_updated = false;
                mrs.close_interval_filter();
                if mrs.att_hist > 0 {
                    last_prob = last_prob.max(mrs.prob_avg);
                } else {
                    mrs.prob_avg = mrs.prob_avg.max(last_prob);
                }
                if self.tp_of(index) == 0 {
                    continue;
                }
                if to_legacy {
                    self.sort_best_tp_rates(index, &mut legacy_tp);
                } else {
                    self.sort_best_tp_rates(index, &mut mcs_tp);
                }
                self.sort_best_tp_rates(index, &mut group_tp);
            }
            self.groups[group].max_group_tp_rate = group_tp;
        }
        self.assign_best_tp_rates(&mut mcs_tp, &legacy_tp);
        self.max_tp_rate = mcs_tp;

        for group in 0..N_GROUPS {
            let supported = self.supported[group];
            if supported == 0 {
                continue;
            }
            self.groups[group].max_group_prob_rate = mi_rate(group, 0);
            for i in 0..GROUP_RATES {
                if supported & (1 << i) != 0 {
                    self.set_best_prob_rate(&mut max_prob, mi_rate(group, i));
                }
            }
        }
        self.max_prob_rate = max_prob;
        self.prob_rate_reduce_streams();
    }

    /// ≤ 5.10: rates are visited slowest first, each one's statistics closed and at
    /// once weighed for `max_prob_rate` against the previous choice (which the kernel
    /// does not reset between updates), with `max_tp_rate[0]` still the previous one.
    fn update_stats_5_10(&mut self) {
        let (legacy_init, main_init) = self.initial_indices();
        let mut legacy_tp = [legacy_init; MAX_THR_RATES];
        let mut mcs_tp = [main_init; MAX_THR_RATES];
        self.lookaround.sample_slow = 0;
        let mut groups_supported = 0u32;

        for group in 0..N_GROUPS {
            let supported = self.supported[group];
            if supported == 0 {
                continue;
            }
            groups_supported += 1;
            let to_legacy = group == groups::CCK_GROUP && self.ht_supported;
            let mut group_tp = [mi_rate(group, 0); MAX_THR_RATES];
            for i in 0..GROUP_RATES {
                if supported & (1 << i) == 0 {
                    continue;
                }
                let index = mi_rate(group, i);
                let mrs = &mut self.groups[group].rates[i];
                mrs.retry_updated = false;
                mrs.close_interval_ewma();
                if self.tp_of(index) == 0 {
                    continue;
                }
                if to_legacy {
                    self.sort_best_tp_rates(index, &mut legacy_tp);
                } else {
                    self.sort_best_tp_rates(index, &mut mcs_tp);
                }
                self.sort_best_tp_rates(index, &mut group_tp);
                let mut max_prob = self.max_prob_rate;
                self.set_best_prob_rate(&mut max_prob, index);
                self.max_prob_rate = max_prob;
            }
            self.groups[group].max_group_tp_rate = group_tp;
        }
        self.assign_best_tp_rates(&mut mcs_tp, &legacy_tp);
        self.max_tp_rate = mcs_tp;
        self.prob_rate_reduce_streams();
        // "try to sample all available rates during each interval"
        self.lookaround.sample_count = groups_supported * 8;
    }

    /// `minstrel_ht_sort_best_tp_rates`: inserts `index` into the descending list
    /// `tp_list` by throughput, ties broken by probability (an equal one does not
    /// displace the rate already there).
    pub(super) fn sort_best_tp_rates(&self, index: u16, tp_list: &mut [u16; MAX_THR_RATES]) {
        let cur_prob = self.prob(index);
        let cur_tp = self.tp_avg(index, cur_prob);
        let mut j = MAX_THR_RATES;
        while j > 0 {
            let other = tp_list[j - 1];
            let tmp_prob = self.prob(other);
            let tmp_tp = self.tp_avg(other, tmp_prob);
            if cur_tp < tmp_tp || (cur_tp == tmp_tp && cur_prob <= tmp_prob) {
                break;
            }
            j -= 1;
        }
        if j < MAX_THR_RATES {
            tp_list.copy_within(j..MAX_THR_RATES - 1, j + 1);
            tp_list[j] = index;
        }
    }

    /// `minstrel_ht_set_best_prob_rate`: weighs `index` for the station's most robust
    /// rate `dest` and its group's `max_group_prob_rate`. Above 75 % the higher
    /// throughput wins, below the higher probability. Legacy rates only count when
    /// `max_tp_rate[0]` is legacy too; 6.x also skips rates faster than
    /// `max_tp_rate[0]` with a lower probability.
    pub(super) fn set_best_prob_rate(&mut self, dest: &mut u16, index: u16) {
        let cur_group = rate_group(index);
        let cur_prob = self.prob(index);
        let tmp_prob = self.prob(*dest);
        let tmp_tp = self.tp_avg(*dest, tmp_prob);
        let max_tp = self.max_tp_rate[0];

        if groups::is_legacy_group(cur_group) && !groups::is_legacy_group(rate_group(max_tp)) {
            return;
        }
        if self.era == MinstrelEra::Linux6
            && self.duration_ns(max_tp) > self.duration_ns(index)
            && cur_prob < self.prob(max_tp)
        {
            return;
        }
        let max_gpr = self.groups[cur_group].max_group_prob_rate;
        let max_gpr_prob = self.prob(max_gpr);
        if cur_prob > PROB_ROBUST {
            let cur_tp = self.tp_avg(index, cur_prob);
            if cur_tp > tmp_tp {
                *dest = index;
            }
            if cur_tp > self.tp_avg(max_gpr, max_gpr_prob) {
                self.groups[cur_group].max_group_prob_rate = index;
            }
        } else {
            if cur_prob > tmp_prob {
                *dest = index;
            }
            if cur_prob > max_gpr_prob {
                self.groups[cur_group].max_group_prob_rate = index;
            }
        }
    }

    /// `minstrel_ht_assign_best_tp_rates`: the legacy (CCK) rates join the list only
    /// if the best of them beats the best MCS rate (they cannot be aggregated).
    fn assign_best_tp_rates(
        &self,
        mcs_tp: &mut [u16; MAX_THR_RATES],
        legacy_tp: &[u16; MAX_THR_RATES],
    ) {
        if self.tp_of(legacy_tp[0]) > self.tp_of(mcs_tp[0]) {
            for &rate in legacy_tp {
                self.sort_best_tp_rates(rate, mcs_tp);
            }
        }
    }

    /// `minstrel_ht_prob_rate_reduce_streams`: for an HT/VHT peer, `max_prob_rate`
    /// becomes the best-throughput group-robust rate of a group with fewer streams than
    /// `max_tp_rate[0]`'s, if there is one.
    fn prob_rate_reduce_streams(&mut self) {
        if !self.ht_supported {
            return;
        }
        let max_streams = groups::group_kind(rate_group(self.max_tp_rate[0])).streams();
        let mut best_tp = 0;
        for group in 0..N_GROUPS {
            if self.supported[group] == 0 || group == groups::CCK_GROUP {
                continue;
            }
            let rate = self.groups[group].max_group_prob_rate;
            let tp = self.tp_of(rate);
            if best_tp < tp && groups::group_kind(group).streams() < max_streams {
                self.max_prob_rate = rate;
                best_tp = tp;
            }
        }
    }

    /// Sudden death of spatial multiplexing (in `minstrel_ht_tx_status`): if
    /// `max_tp_rate[0]` or `[1]` has more than 30 attempts and under 25 % success in
    /// the current interval, it is replaced by the best rate of the next lower group
    /// with no more streams. Returns true when the table must be rebuilt (the kernel
    /// rebuilds it even when no lower group exists).
    pub(super) fn sudden_death(&mut self) -> bool {
        let mut update = false;
        for slot in 0..2 {
            let rate = self.max_tp_rate[slot];
            let mrs = self.stats(rate);
            if mrs.attempts > SUDDEN_DEATH_ATTEMPTS && mrs.success < mrs.attempts / 4 {
                self.max_tp_rate[slot] = self.downgrade_rate(rate, slot == 0);
                update = true;
            }
        }
        update
    }

    /// `minstrel_downgrade_rate`: the best (`primary`) or second best rate of the
    /// nearest lower-numbered supported group with no more streams than `rate`'s;
    /// `rate` itself if there is none.
    fn downgrade_rate(&self, rate: u16, primary: bool) -> u16 {
        let orig = rate_group(rate);
        let orig_streams = groups::group_kind(orig).streams();
        for group in (0..orig).rev() {
            if self.supported[group] == 0 || groups::group_kind(group).streams() > orig_streams {
                continue;
            }
            let best = &self.groups[group].max_group_tp_rate;
            return if primary { best[0] } else { best[1] };
        }
        rate
    }
}

#[cfg(test)]
mod tests {
    use super::super::groups::rate_index;
    use super::super::{MinstrelHt, PeerCaps};
    use super::*;
    use crate::mac80211::rate_control::HwRateCaps;
    use crate::phy::{Band, ChannelWidth, Standard};

    fn ht20_2ss(era: MinstrelEra) -> MinstrelHt {
        let caps = PeerCaps {
            standard: Standard::N,
            band: Band::Ghz5,
            width: ChannelWidth::Mhz20,
            sgi: false,
            max_nss: 2,
            short_preamble: false,
        };
        MinstrelHt::new(era, &caps, HwRateCaps::ATH9K, 1)
    }

    /// tp as the kernel defines it, in f64: packets per 100 ms.
    /// `prob` is fixed point (4096 = 100 %); 10 % is 409 in it.
    fn tp_f64(prob: u32, overhead_ns: f64, duration_ns: f64) -> f64 {
        if prob < 4096 / 10 {
            return 0.0;
        }
        (f64::from(prob) / 4096.0).min(0.9) * 1e8 / (overhead_ns + duration_ns)
    }

    #[test]
    fn throughput_metric_follows_its_formula() {
        for era in [MinstrelEra::Linux6, MinstrelEra::Linux5_10] {
            let mi = ht20_2ss(era);
            // overhead 108 µs (0-byte frame 48 µs + ACK 60 µs at 6 Mbit/s in 5 GHz).
            assert_eq!(mi.overhead_us, 108);
            assert_eq!(mi.avg_ampdu_len_mpdus(), 1);
            let rate = mi_rate(1, 4); // HT20 MCS 12
            let d = f64::from(mi.duration_ns(rate));
            for p in [0.05, 0.1, 0.5, 0.9, 1.0] {
                let prob = (p * 4096.0) as u32;
                let want = tp_f64(prob, 108_000.0, d);
                let got = f64::from(mi.tp_avg(rate, prob));
                // 6.x truncates once at the end; ≤ 5.10 truncates `prob · 1000 / ns` to
                // an integer first, a step of 10⁵ / 4096 in the result.
                let tol = match era {
                    MinstrelEra::Linux6 => 1.0,
                    MinstrelEra::Linux5_10 => 1.0 + 1e5 / 4096.0,
                };
                assert!((got - want).abs() <= tol, "{era:?} p={p}: {got} vs {want}");
            }
        }
    }

    #[test]
    fn sort_keeps_the_four_best_by_tp_then_prob() {
        let mut mi = ht20_2ss(MinstrelEra::Linux6);
        mi.avg_ampdu_len = frac(16, 1) as i32;
        // Give MCS 0–7 of group 0 probabilities; tp = prob × rate.
        let probs = [1.0, 1.0, 1.0, 0.9, 0.9, 0.5, 0.2, 0.05];
        for (i, p) in probs.iter().enumerate() {
            mi.groups[0].rates[i].prob_avg = (p * 4096.0) as u16;
        }
        let mut list = [mi_rate(0, 0); 4];
        for i in 0..8 {
            mi.sort_best_tp_rates(mi_rate(0, i), &mut list);
        }
        // Rates (Mbit/s) × min(p, .9): MCS4 39·.9, MCS3 26·.9, MCS5 52·.5, MCS2 19.5·.9.
        let idx: Vec<usize> = list.iter().map(|&r| rate_index(r)).collect();
        assert_eq!(idx, [4, 5, 3, 2]);
    }

    #[test]
    fn sudden_death_downgrades_to_a_group_with_fewer_streams() {
        let mut mi = ht20_2ss(MinstrelEra::Linux6);
        mi.groups[0].max_group_tp_rate = [mi_rate(0, 6), mi_rate(0, 5), 0, 0];
        mi.max_tp_rate = [mi_rate(1, 4), mi_rate(1, 3), mi_rate(0, 6), mi_rate(0, 0)];
        mi.groups[1].rates[4].attempts = 32;
        mi.groups[1].rates[4].success = 7; // < 8 = 32/4
        mi.groups[1].rates[3].attempts = 32;
        mi.groups[1].rates[3].success = 8; // not below a quarter
        assert!(mi.sudden_death());
        assert_eq!(mi.max_tp_rate[0], mi_rate(0, 6));
        assert_eq!(mi.max_tp_rate[1], mi_rate(1, 3));
        // 30 attempts are not enough.
        mi.groups[0].rates[6].attempts = 30;
        assert!(!mi.sudden_death());
    }

    /// Sets rate `i` of `group` as measured with probability `p` (history present, so
    /// an update keeps it).
    fn measured(mi: &mut MinstrelHt, group: usize, i: usize, p: f64) {
        let r = &mut mi.groups[group].rates[i];
        r.prob_avg = (p * 4096.0) as u16;
        r.prob_avg_1 = r.prob_avg;
        r.att_hist = 100;
    }

    #[test]
    fn max_prob_prefers_robust_throughput_then_fewer_streams() {
        for era in [MinstrelEra::Linux6, MinstrelEra::Linux5_10] {
            let mut mi = ht20_2ss(era);
            mi.avg_ampdu_len = frac(16, 1) as i32;
            // 1SS: MCS 0–4 clean, MCS 5 at 80 %, above that bad.
            for i in 0..8 {
                let p = [1.0, 1.0, 1.0, 1.0, 1.0, 0.8, 0.05, 0.0][i];
                measured(&mut mi, 0, i, p);
            }
            // 2SS: MCS 8–11 clean, MCS 12 at 90 % (the best), above that bad.
            for i in 0..8 {
                let p = [1.0, 1.0, 1.0, 1.0, 0.9, 0.3, 0.0, 0.0][i];
                measured(&mut mi, 1, i, p);
            }
            for k in 0..3 {
                mi.update_stats(Nanos::from_ms(100 * k));
            }
            assert_eq!(mi.max_tp_rate[0], mi_rate(1, 4), "{era:?}");
            // Among > 75 % the highest throughput would be 2SS MCS 12; with fewer
            // streams preferred it is the 1SS group's robust best: MCS 5 (80 %, 52 ·
            // 0.8 = 41.6) over MCS 4 (39 · 0.9 = 35.1).
            assert_eq!(mi.max_prob_rate, mi_rate(0, 5), "{era:?}");
            assert_eq!(mi.groups[1].max_group_prob_rate, mi_rate(1, 4), "{era:?}");

            // Nothing above 75 %: the highest probability wins.
            let mut mi = ht20_2ss(era);
            for i in 0..8 {
                measured(&mut mi, 0, i, [0.5, 0.6, 0.7, 0.3, 0.2, 0.1, 0.0, 0.0][i]);
                measured(&mut mi, 1, i, 0.0);
            }
            for k in 0..3 {
                mi.update_stats(Nanos::from_ms(100 * k));
            }
            assert_eq!(mi.max_prob_rate, mi_rate(0, 2), "{era:?}");
        }
    }

    #[test]
    fn untried_rates_inherit_the_best_faster_probability_in_6x_only() {
        for era in [MinstrelEra::Linux6, MinstrelEra::Linux5_10] {
            let mut mi = ht20_2ss(era);
            measured(&mut mi, 0, 6, 0.7);
            measured(&mut mi, 0, 4, 0.5);
            mi.update_stats(Nanos::from_ms(60));
            let p = |mi: &MinstrelHt, i: usize| mi.groups[0].rates[i].prob_avg;
            match era {
                MinstrelEra::Linux6 => {
                    assert_eq!(p(&mi, 7), 0, "nothing faster than MCS 7 was tried");
                    assert_eq!(p(&mi, 5), p(&mi, 6));
                    // MCS 4 was tried: it keeps its own.
                    assert_eq!(p(&mi, 4), (0.5f64 * 4096.0) as u16);
                    assert_eq!(p(&mi, 0), p(&mi, 6));
                }
                MinstrelEra::Linux5_10 => {
                    assert_eq!(p(&mi, 5), 0);
                    assert_eq!(p(&mi, 0), 0);
                }
            }
        }
    }

    #[test]
    fn cck_rates_lead_only_when_they_beat_every_mcs() {
        let caps = PeerCaps {
            standard: Standard::N,
            band: Band::Ghz2_4,
            width: ChannelWidth::Mhz20,
            sgi: false,
            max_nss: 1,
            short_preamble: false,
        };
        let mut mi = MinstrelHt::new(MinstrelEra::Linux6, &caps, HwRateCaps::ATH9K, 1);
        for i in 0..4 {
            measured(&mut mi, groups::CCK_GROUP, i, 1.0);
        }
        // MCS 0 at 90 % (6.5 Mbit/s, aggregated) beats 11 Mbit/s CCK? No aggregation
        // yet (A-MPDU length 1): 6.5 Mbit/s with its overhead loses to 11 Mbit/s.
        measured(&mut mi, 0, 0, 0.9);
        mi.update_stats(Nanos::from_ms(60));
        assert_eq!(mi.max_tp_rate[0], mi_rate(groups::CCK_GROUP, 3));
        // MCS 3 clean: every MCS rate above CCK, no CCK rate in the list.
        for i in 1..4 {
            measured(&mut mi, 0, i, 1.0);
        }
        mi.update_stats(Nanos::from_ms(120));
        assert_eq!(mi.max_tp_rate[0], mi_rate(0, 3));
        assert!(mi
            .max_tp_rate
            .iter()
            .all(|&r| rate_group(r) != groups::CCK_GROUP));
    }
}
