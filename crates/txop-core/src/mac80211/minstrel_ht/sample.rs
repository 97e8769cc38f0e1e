//! Probing in 6.x (≥ 5.11): at most one probe per 20 ms, drawn from three lists of
//! up to five rates refilled at every statistics update (`minstrel_ht_get_sample_rate`,
//! `minstrel_ht_refill_sample_rates`, `minstrel_ht_next_inc_rate`,
//! `minstrel_ht_next_jump_rate`, `minstrel_ht_move_sample_rates`; rate-control.md §6).
//!
//! * INC: per group, the lowest rate faster than `max_tp_rate[0]`.
//! * JUMP: a random rate (walking the sample table) faster than the fastest of
//!   `max_tp_rate[0]`, `[1]` and `max_prob_rate`.
//! * SLOW: met on the JUMP walk, rates between the fastest and the slowest of those
//!   three whose probability is at most 95 %.
//!
//! Lists are visited INC, JUMP, INC, JUMP, INC, SLOW (INC only on hardware with one
//! rate slot). As in the kernel, rate 0 (HT20 1SS MCS 0 LGI) marks an empty list entry.

use super::groups::{mi_rate, GROUP_RATES, N_GROUPS};
use super::stats::frac;
use super::{MinstrelHt, SAMPLE_INTERVAL};
use crate::rng::RngStream;
use crate::time::Nanos;

/// Rates per sample list (`MINSTREL_SAMPLE_RATES`).
const SAMPLE_RATES: usize = 5;
/// `MINSTREL_SAMPLE_TYPE_INC`.
const INC: usize = 0;
/// `MINSTREL_SAMPLE_TYPE_JUMP`.
const JUMP: usize = 1;
/// `MINSTREL_SAMPLE_TYPE_SLOW`.
const SLOW: usize = 2;
/// The order the lists are drawn from (`minstrel_sample_seq`).
const SAMPLE_SEQ: [usize; 6] = [INC, JUMP, INC, JUMP, INC, SLOW];
/// Slow rates above this probability (95 %) are not worth probing.
const PROB_SLOW_SKIP: u32 = frac(95, 100);

/// The three sample lists and where their walks stand (`mi->sample[]`,
/// `mi->sample_seq`, `mi->sample_time`).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct SampleLists {
    /// `sample_rates` of INC, JUMP and SLOW; 0 is an empty entry.
    rates: [[u16; SAMPLE_RATES]; 3],
    /// The group each list's walk last looked at (`sample_group`).
    group: [usize; 3],
    /// Position in [`SAMPLE_SEQ`].
    seq: usize,
    /// No probe before this time.
    pub(super) sample_time: Nanos,
}

/// A random permutation of the rate indices 0..10, one column of the sample table
/// (the kernel's `init_sample_table` scatters with random offsets; a Fisher–Yates
/// shuffle gives the same kind of table).
pub(super) fn random_permutation(rng: &mut RngStream) -> [u8; GROUP_RATES] {
    let mut col: [u8; GROUP_RATES] = std::array::from_fn(|i| i as u8);
    for i in (1..GROUP_RATES).rev() {
        let j = rng.uniform_inclusive(i as u32) as usize;
        col.swap(i, j);
    }
    col
}

impl MinstrelHt {
    /// The sample rate for a PPDU built at `now`, if one is due: none before
    /// `sample_time`; otherwise the next 20 ms are blocked and the next list in the
    /// sequence gives up its first rate (`minstrel_ht_get_rate`).
    pub(super) fn next_probe_6(&mut self, now: Nanos) -> Option<u16> {
        if now < self.sample.sample_time {
            return None;
        }
        self.sample.sample_time = now + SAMPLE_INTERVAL;
        let list = if self.max_rates > 1 {
            let seq = self.sample.seq;
            self.sample.seq = (seq + 1) % SAMPLE_SEQ.len();
            SAMPLE_SEQ[seq]
        } else {
            INC
        };
        let slot = self.sample.rates[list].iter_mut().find(|r| **r != 0)?;
        let rate = std::mem::take(slot);
        (!self.cck_preamble_mismatch(rate)).then_some(rate)
    }

    /// `minstrel_ht_refill_sample_rates`: keeps the listed rates that still qualify
    /// and tops the INC and JUMP lists up (the JUMP walk also feeds SLOW).
    pub(super) fn refill_sample_rates(&mut self) {
        let prob_dur = self.duration_ns(self.max_prob_rate);
        let tp_dur = self.duration_ns(self.max_tp_rate[0]);
        let tp2_dur = self.duration_ns(self.max_tp_rate[1]);
        let fast = tp_dur.min(tp2_dur).min(prob_dur);
        let slow = tp_dur.max(tp2_dur).max(prob_dur);

        let mut i = self.move_sample_rates(INC, fast, slow);
        while i < SAMPLE_RATES {
            let rate = self.next_inc_rate(tp_dur);
            self.sample.rates[INC][i] = rate;
            if rate == 0 {
                break;
            }
            i += 1;
        }

        let mut i = self.move_sample_rates(JUMP, fast, slow);
        let mut slow_ofs = self.move_sample_rates(SLOW, fast, slow);
        while i < SAMPLE_RATES {
            let rate = self.next_jump_rate(fast, slow, &mut slow_ofs);
            self.sample.rates[JUMP][i] = rate;
            if rate == 0 {
                break;
            }
            i += 1;
        }
    }

    /// `minstrel_ht_move_sample_rates`: drops listed rates that no longer qualify
    /// (INC/JUMP: faster than `fast`; SLOW: between `fast` and `slow`) and moves the
    /// rest to the front; returns where the free entries start. Mirrors the kernel
    /// exactly, including that an entry already in place is not counted, so the next
    /// moved entry overwrites it.
    fn move_sample_rates(&mut self, list: usize, fast: u32, slow: u32) -> usize {
        let mut j = 0;
        for i in 0..SAMPLE_RATES {
            let cur = self.sample.rates[list][i];
            if cur == 0 {
                continue;
            }
            let d = self.duration_ns(cur);
            let valid = if list == SLOW {
                d > fast && d < slow
            } else {
                d < fast
            };
            if !valid {
                self.sample.rates[list][i] = 0;
                continue;
            }
            if i == j {
                continue;
            }
            self.sample.rates[list][j] = cur;
            j += 1;
            self.sample.rates[list][i] = 0;
        }
        j
    }

    /// `minstrel_ht_find_sample_rate`: `rate` is already in `list` (which is packed to
    /// the front).
    fn find_sample_rate(&self, list: usize, rate: u16) -> bool {
        for &cur in &self.sample.rates[list] {
            if cur == rate {
                return true;
            }
            if cur == 0 {
                break;
            }
        }
        false
    }

    /// `minstrel_ht_group_min_rate_offset`: the lowest supported index of `group`
    /// whose airtime is below `max_duration`.
    fn group_min_rate_offset(&self, group: usize, max_duration: u32) -> Option<usize> {
        let supported = self.supported[group];
        (0..GROUP_RATES)
            .find(|&i| supported & (1 << i) != 0 && self.airtime.of(group, i) < max_duration)
    }

    /// `minstrel_ht_next_inc_rate`: walking the groups round from the last one, the
    /// first group's lowest rate faster than `fast_rate_dur` that INC does not list
    /// yet; 0 if none.
    fn next_inc_rate(&mut self, fast_rate_dur: u32) -> u16 {
        let mut group = self.sample.group[INC];
        let mut found = 0;
        for _ in 0..N_GROUPS {
            group = (group + 1) % N_GROUPS;
            let Some(offset) = self.group_min_rate_offset(group, fast_rate_dur) else {
                continue;
            };
            let rate = mi_rate(group, offset);
            if !self.find_sample_rate(INC, rate) {
                found = rate;
                break;
            }
        }
        self.sample.group[INC] = group;
        found
    }

    /// `minstrel_ht_next_group_sample_rate`: the group's next entry of the sample
    /// table at or above `offset` that the peer supports (advancing the group's
    /// position in the table, row by row, column by column).
    fn next_group_sample_rate(&mut self, group: usize, offset: usize) -> Option<u16> {
        let supported = self.supported[group];
        for _ in 0..GROUP_RATES {
            let mg = &mut self.groups[group];
            let idx = usize::from(self.sample_table[usize::from(mg.column)][usize::from(mg.index)]);
            mg.index += 1;
            if usize::from(mg.index) >= GROUP_RATES {
                mg.index = 0;
                mg.column += 1;
                if usize::from(mg.column) >= self.sample_table.len() {
                    mg.column = 0;
                }
            }
            if idx < offset || supported & (1 << idx) == 0 {
                continue;
            }
            return Some(mi_rate(group, idx));
        }
        None
    }

    /// `minstrel_ht_next_jump_rate`: walking the groups round, a random rate of each
    /// (from the sample table) at or above the group's lowest rate faster than the
    /// slow bound. The first one faster than `fast` not yet listed is the JUMP rate;
    /// slower ones go to SLOW while it has room, unless already listed or above 95 %.
    fn next_jump_rate(&mut self, fast: u32, slow: u32, slow_ofs: &mut usize) -> u16 {
        let mut max_duration = if *slow_ofs >= SAMPLE_RATES {
            fast
        } else {
            slow
        };
        let mut group = self.sample.group[JUMP];
        let mut found = 0;
        for _ in 0..N_GROUPS {
            group = (group + 1) % N_GROUPS;
            if self.supported[group] == 0 {
                continue;
            }
            let Some(offset) = self.group_min_rate_offset(group, max_duration) else {
                continue;
            };
            let Some(rate) = self.next_group_sample_rate(group, offset) else {
                continue;
            };
            let d = self.duration_ns(rate);
            let list = if d < fast { JUMP } else { SLOW };
            if self.find_sample_rate(list, rate) {
                continue;
            }
            if list == JUMP {
                found = rate;
                break;
            }
            if *slow_ofs >= SAMPLE_RATES || d >= slow || self.prob(rate) > PROB_SLOW_SKIP {
                continue;
            }
            self.sample.rates[SLOW][*slow_ofs] = rate;
            *slow_ofs += 1;
            if *slow_ofs >= SAMPLE_RATES {
                max_duration = fast;
            }
        }
        self.sample.group[JUMP] = group;
        found
    }
}

#[cfg(test)]
mod tests {
    use super::super::groups::{mi_rate, rate_group, rate_index};
    use super::super::PeerCaps;
    use super::*;
    use crate::mac80211::rate_control::{HwRateCaps, MinstrelEra};
    use crate::phy::{Band, ChannelWidth, Standard};
    use crate::rng::StreamKind;

    fn ac80() -> MinstrelHt {
        let caps = PeerCaps {
            standard: Standard::Ac,
            band: Band::Ghz5,
            width: ChannelWidth::Mhz80,
            sgi: true,
            max_nss: 2,
            short_preamble: false,
        };
        MinstrelHt::new(MinstrelEra::Linux6, &caps, HwRateCaps::ATH9K, 11)
    }

    #[test]
    fn sample_table_columns_are_permutations() {
        let mut rng = RngStream::new(5, StreamKind::Misc, 0);
        for _ in 0..50 {
            let mut col = random_permutation(&mut rng).to_vec();
            col.sort_unstable();
            assert_eq!(col, (0..10).collect::<Vec<u8>>());
        }
    }

    #[test]
    fn lists_hold_the_rates_their_kind_asks_for() {
        let mut mi = ac80();
        // A settled station: max_tp at VHT80 2SS LGI MCS 4, max_prob at MCS 2 1SS.
        let g2 = super::super::groups::vht_group(2, false, ChannelWidth::Mhz80);
        let g1 = super::super::groups::vht_group(1, false, ChannelWidth::Mhz80);
        mi.max_tp_rate = [
            mi_rate(g2, 4),
            mi_rate(g2, 3),
            mi_rate(g1, 4),
            mi_rate(g1, 3),
        ];
        mi.max_prob_rate = mi_rate(g1, 2);
        mi.sample = SampleLists::default();
        mi.refill_sample_rates();
        let tp_dur = mi.duration_ns(mi.max_tp_rate[0]);
        let fast = tp_dur
            .min(mi.duration_ns(mi.max_tp_rate[1]))
            .min(mi.duration_ns(mi.max_prob_rate));
        let slow = tp_dur
            .max(mi.duration_ns(mi.max_tp_rate[1]))
            .max(mi.duration_ns(mi.max_prob_rate));
        let inc: Vec<u16> = mi.sample.rates[INC]
            .iter()
            .copied()
            .filter(|&r| r != 0)
            .collect();
        assert_eq!(inc.len(), SAMPLE_RATES);
        for &r in &inc {
            assert!(mi.duration_ns(r) < tp_dur);
            // the lowest such rate of its group
            let g = rate_group(r);
            for i in 0..rate_index(r) {
                if mi.supported[g] & (1 << i) != 0 {
                    assert!(mi.airtime.of(g, i) >= tp_dur);
                }
            }
        }
        for &r in mi.sample.rates[JUMP].iter().filter(|&&r| r != 0) {
            assert!(mi.duration_ns(r) < fast);
        }
        for &r in mi.sample.rates[SLOW].iter().filter(|&&r| r != 0) {
            let d = mi.duration_ns(r);
            assert!(d >= fast && d < slow, "{r}");
        }
        assert!(mi.sample.rates[JUMP][0] != 0);
    }

    #[test]
    fn probes_follow_the_sequence_and_the_interval() {
        let mut mi = ac80();
        let t0 = Nanos::from_ms(1);
        mi.sample.sample_time = t0;
        assert_eq!(mi.next_probe_6(Nanos::from_us(999)), None);
        let first_inc = mi.sample.rates[INC][0];
        let first_jump = mi.sample.rates[JUMP][0];
        assert_eq!(mi.next_probe_6(t0), Some(first_inc));
        assert_eq!(mi.next_probe_6(t0 + Nanos::from_ms(19)), None);
        assert_eq!(mi.next_probe_6(t0 + Nanos::from_ms(20)), Some(first_jump));
        // One-slot hardware draws from INC only.
        mi.max_rates = 1;
        let next_inc = mi.sample.rates[INC].iter().copied().find(|&r| r != 0);
        assert_eq!(mi.next_probe_6(t0 + Nanos::from_ms(40)), next_inc);
    }
}
