//! The virtual-time airtime scheduler of 5.14–5.19 (reference §5.3), reproduced from the
//! code of that era (patch "mac80211: Switch to a virtual time-based airtime scheduler"
//! v7, and its removal in the 6.0 series, which shows the 5.19 state): an ordered set per
//! AC keyed by virtual time (a `BTreeMap` standing in for the rbtree), the kernel's
//! fixed-point reciprocals, catch-up, reactivation and `AIRTIME_MAX_BEHIND` rules. The
//! details, and where they differ from the reference's summary, are on
//! [`SchedulerKind::VirtualTime`](super::SchedulerKind::VirtualTime).

use super::{Book, Generation, TxqTable, AIRTIME_ACTIVE_DURATION};
use crate::mac::edca::Ac;
use crate::mac80211::txq::{LinkId, TxqKey};
use crate::Nanos;
use std::collections::BTreeMap;
use std::ops::Bound::{Excluded, Unbounded};

/// `AIRTIME_MAX_BEHIND` (5.14–5.19, reference §5.3): how far (in virtual µs) a station may
/// fall behind the global virtual time before it is caught up on (re)insertion.
pub const AIRTIME_MAX_BEHIND_US: u64 = 20_000;

/// 5.14 per-station reciprocal divisor `IEEE80211_RECIPROCAL_DIVISOR_32` = 2^19.
const RECIPROCAL_DIVISOR_32: u32 = 1 << RECIPROCAL_SHIFT_32;
const RECIPROCAL_SHIFT_32: u32 = 19;
/// 5.14 weight-sum reciprocal divisor `IEEE80211_RECIPROCAL_DIVISOR_64` = 2^32.
const RECIPROCAL_DIVISOR_64: u64 = 1 << RECIPROCAL_SHIFT_64;
const RECIPROCAL_SHIFT_64: u32 = 32;
/// Airtime is scaled by 2^8 so that the unit weight is 256 (5.14 `airtime <<= 8`).
const WEIGHT_SHIFT: u32 = 8;

/// 5.14 `weight_reciprocal` = 2^19 / weight (`airtime_weight_set`; 0 for weight 0).
fn weight_reciprocal(weight: u16) -> u32 {
    RECIPROCAL_DIVISOR_32
        .checked_div(weight as u32)
        .unwrap_or(0)
}

/// Position of a TXQ in the virtual-time tree: by `v_t`, then by tie-break. Tie-breaks
/// decrease with each fresh insertion so that a new TXQ sorts before TXQs with an
/// equal `v_t`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct VtKey {
    /// The virtual time of the TXQ's station (or the vif), virtual µs.
    v_t: u64,
    /// Order among equal `v_t`s (smaller first).
    tiebreak: i64,
}

/// The 5.14 part of `struct airtime_info`: one station's (or the vif's) virtual time
/// and activity on one AC.
#[derive(Clone, Debug, Default)]
struct VtAir {
    /// Virtual time (µs scaled by 256/weight).
    v_t: u64,
    /// `last_scheduled`.
    last_scheduled: Option<Nanos>,
    /// On the AC's `active_list`.
    on_active_list: bool,
}

impl VtAir {
    /// `airtime_is_active`: scheduled within the last 100 ms.
    fn active(&self, now: Nanos) -> bool {
        self.last_scheduled
            .is_some_and(|t| t + AIRTIME_ACTIVE_DURATION >= now)
    }
}

/// One AC's tree, walk position, global virtual time and weight sum.
#[derive(Clone, Debug, Default)]
struct VtAc {
    /// The rbtree of scheduled TXQs.
    tree: BTreeMap<VtKey, TxqKey>,
    /// `schedule_pos`.
    pos: Option<VtKey>,
    /// Global virtual time.
    v_t: u64,
    /// Sum of active weights.
    weight_sum: u64,
    /// Its 2^32 reciprocal.
    weight_sum_reciprocal: u64,
    /// `last_weight_update`.
    last_weight_update: Option<Nanos>,
    /// Next (decreasing) tie-break for fresh tree insertions.
    next_tiebreak: i64,
}

impl VtAc {
    /// `airtime_weight_sum_set`.
    fn set_weight_sum(&mut self, weight_sum: u64) {
        if self.weight_sum == weight_sum {
            return;
        }
        self.weight_sum = weight_sum;
        self.weight_sum_reciprocal = RECIPROCAL_DIVISOR_64.checked_div(weight_sum).unwrap_or(0);
    }

    /// A fresh tie-break, before every one given so far.
    fn fresh_key(&mut self, v_t: u64) -> VtKey {
        let key = VtKey {
            v_t,
            tiebreak: self.next_tiebreak,
        };
        self.next_tiebreak -= 1;
        key
    }
}

/// The virtual-time scheduler's state: per AC, per station and vif, and each scheduled
/// TXQ's place in its AC's tree (the shared `listed` flag mirrors "in the tree").
#[derive(Clone, Debug, Default)]
pub(super) struct VirtualTime {
    acs: [VtAc; 4],
    /// Per station, per AC (stations beyond the end: never scheduled, `v_t` 0).
    stas: Vec<[VtAir; 4]>,
    /// The vif's, per AC.
    vif: [VtAir; 4],
    /// Per TXQ: its key in the tree, if scheduled.
    keys: TxqTable<Option<VtKey>>,
}

impl VirtualTime {
    /// The virtual time of a station (`Some(sta)`) or of the vif (`None`) on `ac`.
    pub(super) fn virtual_time_us(&self, sta: Option<LinkId>, ac: Ac) -> u64 {
        match sta {
            Some(s) => self.stas.get(s.index()).map_or(0, |x| x[ac.index()].v_t),
            None => self.vif[ac.index()].v_t,
        }
    }

    /// The global virtual time of `ac`.
    pub(super) fn global_virtual_time_us(&self, ac: Ac) -> u64 {
        self.acs[ac.index()].v_t
    }

    /// The weight sum of active stations on `ac`, as last recomputed.
    pub(super) fn weight_sum(&self, ac: Ac) -> u64 {
        self.acs[ac.index()].weight_sum
    }

    fn air_mut(&mut self, sta: Option<LinkId>, ac: Ac) -> &mut VtAir {
        match sta {
            Some(s) => {
                if self.stas.len() <= s.index() {
                    self.stas.resize_with(s.index() + 1, Default::default);
                }
                &mut self.stas[s.index()][ac.index()]
            }
            None => &mut self.vif[ac.index()],
        }
    }

    /// The key of `txq` in its AC's tree, if it is in it.
    fn key(&self, txq: TxqKey) -> Option<VtKey> {
        self.keys.get(&txq).copied().flatten()
    }

    fn set_key(&mut self, book: &mut Book, txq: TxqKey, key: Option<VtKey>) {
        *self.keys.get_or_insert_with(txq, || None) = key;
        book.state_mut(txq).listed = key.is_some();
    }

    /// `__ieee80211_insert_txq`: before every TXQ with an equal `v_t`.
    fn insert_fresh(&mut self, book: &mut Book, txq: TxqKey, ac: Ac, v: u64) {
        let a = &mut self.acs[ac.index()];
        let key = a.fresh_key(v);
        a.tree.insert(key, txq);
        self.set_key(book, txq, Some(key));
    }

    /// `ieee80211_update_airtime_weight`, with the kernel's condition as written.
    fn update_weight(&mut self, book: &Book, ac: Ac, now: Nanos, force: bool) {
        let a = ac.index();
        if !force {
            match self.acs[a].last_weight_update {
                None => return,
                Some(t) if t + AIRTIME_ACTIVE_DURATION < now => return,
                Some(_) => {}
            }
        }
        let mut sum = 0u64;
        let weights = book.stas.iter().map(|s| s[a].weight);
        for (air, weight) in self
            .stas
            .iter_mut()
            .map(|s| &mut s[a])
            .zip(weights)
            .chain(std::iter::once((&mut self.vif[a], book.vif[a].weight)))
        {
            if air.on_active_list {
                if air.active(now) {
                    sum += weight as u64;
                } else {
                    air.on_active_list = false;
                }
            }
        }
        let acs = &mut self.acs[a];
        acs.set_weight_sum(sum);
        acs.last_weight_update = Some(now);
    }

    /// `__ieee80211_unschedule_txq(txq, purge = false)`.
    fn unschedule(&mut self, book: &mut Book, now: Nanos, txq: TxqKey, ac: Ac) {
        let Some(key) = self.key(txq) else {
            return;
        };
        let acs = &mut self.acs[ac.index()];
        if acs.pos == Some(key) {
            acs.pos = acs.tree.range(..key).next_back().map(|(k, _)| *k);
        }
        acs.tree.remove(&key);
        self.set_key(book, txq, None);
        let air = self.air_mut(txq.sta, ac);
        air.last_scheduled = Some(now);
        air.on_active_list = true;
    }

    /// `ieee80211_resort_txq`: move the TXQ only if it is out of order with its neighbours.
    fn resort(&mut self, book: &mut Book, txq: TxqKey, ac: Ac) {
        let Some(key) = self.key(txq) else {
            return;
        };
        let v = self.air_mut(txq.sta, ac).v_t;
        let acs = &mut self.acs[ac.index()];
        let prev = acs.tree.range(..key).next_back().map(|(k, _)| *k);
        let next = acs
            .tree
            .range((Excluded(key), Unbounded))
            .next()
            .map(|(k, _)| *k);
        let in_place = prev.is_none_or(|p| p.v_t <= v) && next.is_none_or(|n| n.v_t > v);
        acs.tree.remove(&key);
        let new_key = if in_place {
            // Same position, new v_t: pick a tie-break that keeps it after `prev`.
            let tb = match prev {
                Some(p) if p.v_t == v => p.tiebreak + 1,
                _ => key.tiebreak,
            };
            let new_key = VtKey {
                v_t: v,
                tiebreak: tb,
            };
            if acs.pos == Some(key) {
                acs.pos = Some(new_key);
            }
            new_key
        } else {
            if acs.pos == Some(key) {
                acs.pos = prev;
            }
            acs.fresh_key(v)
        };
        acs.tree.insert(new_key, txq);
        self.set_key(book, txq, Some(new_key));
    }
}

impl Generation for VirtualTime {
    /// `ieee80211_schedule_txq` of 5.14.
    // perf: out of line, as the listing paths of the other generations are.
    #[inline(never)]
    fn schedule_txq(&mut self, book: &mut Book, now: Nanos, txq: TxqKey, ac: Ac, listed: bool) {
        let global = self.acs[ac.index()].v_t;
        let air = self.air_mut(txq.sta, ac);
        let was_active = air.active(now);
        air.last_scheduled = Some(now);
        air.on_active_list = true;
        if listed {
            return;
        }
        if (!was_active && air.v_t < global) || air.v_t < global.wrapping_sub(AIRTIME_MAX_BEHIND_US)
        {
            air.v_t = global;
        }
        let v = air.v_t;
        self.update_weight(book, ac, now, !was_active);
        self.insert_fresh(book, txq, ac, v);
    }

    /// Restart the walk from the smallest `v_t`.
    fn schedule_start(&mut self, _book: &Book, ac: Ac, _ac_over_limit: &dyn Fn(usize) -> bool) {
        self.acs[ac.index()].pos = None;
    }

    /// `ieee80211_next_txq` of 5.14.
    fn next_txq(
        &mut self,
        _book: &mut Book,
        ac: Ac,
        aql_eligible: &mut dyn FnMut(TxqKey) -> bool,
        _aql_pending_us: &dyn Fn(LinkId) -> u32,
    ) -> Option<TxqKey> {
        let a = ac.index();
        let mut node = self.acs[a].pos;
        let mut first = false;
        loop {
            let tree = &self.acs[a].tree;
            let cur = match node {
                None => {
                    first = true;
                    tree.iter().next()
                }
                Some(k) => tree.range((Excluded(k), Unbounded)).next(),
            };
            let (key, t) = cur.map(|(k, t)| (*k, *t))?;
            let v = self.virtual_time_us(t.sta, ac);
            if v > self.acs[a].v_t {
                if !first {
                    return None;
                }
                // airtime_catchup_v_t: never let the system idle.
                self.acs[a].v_t = v;
            }
            if !aql_eligible(t) {
                first = false;
                node = Some(key);
                continue;
            }
            self.acs[a].pos = Some(key);
            return Some(t);
        }
    }

    /// Remove the TXQ from the tree if it is empty (marking the station active).
    fn return_txq(
        &mut self,
        book: &mut Book,
        now: Nanos,
        txq: TxqKey,
        ac: Ac,
        has_data: bool,
        _aql_pending_us: &dyn Fn(LinkId) -> u32,
    ) {
        if !has_data {
            self.unschedule(book, now, txq, ac);
        }
    }

    fn unschedule_txq(&mut self, book: &mut Book, now: Nanos, txq: TxqKey, ac: Ac) {
        self.unschedule(book, now, txq, ac);
    }

    /// `ieee80211_txq_may_transmit` of 5.14.
    fn may_transmit(
        &mut self,
        _book: &mut Book,
        txq: TxqKey,
        ac: Ac,
        aql_eligible: &mut dyn FnMut(TxqKey) -> bool,
        _aql_pending_us: &dyn Fn(LinkId) -> u32,
        _ac_over_limit: &dyn Fn(usize) -> bool,
    ) -> bool {
        if !aql_eligible(txq) || self.key(txq).is_none() {
            return false;
        }
        if let Some((_, &first)) = self.acs[ac.index()].tree.first_key_value() {
            let fv = self.virtual_time_us(first.sta, ac);
            let acs = &mut self.acs[ac.index()];
            if acs.v_t < fv {
                acs.v_t = fv;
            }
        }
        self.virtual_time_us(txq.sta, ac) <= self.acs[ac.index()].v_t
    }

    /// `ieee80211_register_airtime` of 5.14: advance the station's (or the vif's) and the
    /// global virtual time with the kernel's reciprocals, then re-sort this TXQ.
    fn charge(&mut self, book: &mut Book, _now: Nanos, txq: TxqKey, ac: Ac, charged_us: u32) {
        let airtime = charged_us << WEIGHT_SHIFT;
        let weight = book.air(txq.sta, ac).weight;
        let reciprocal = weight_reciprocal(weight);
        let acs = &self.acs[ac.index()];
        let (ws, ws_recip) = if acs.weight_sum != 0 {
            (acs.weight_sum, acs.weight_sum_reciprocal)
        } else {
            (weight as u64, reciprocal as u64)
        };
        let global_inc = (airtime as u64 + (ws >> 1)).wrapping_mul(ws_recip) >> RECIPROCAL_SHIFT_64;
        let sta_inc = airtime
            .wrapping_add((weight >> 1) as u32)
            .wrapping_mul(reciprocal)
            >> RECIPROCAL_SHIFT_32;
        self.air_mut(txq.sta, ac).v_t += sta_inc as u64;
        self.acs[ac.index()].v_t += global_inc;
        self.resort(book, txq, ac);
    }

    /// The new weight applies at once: if the station has a TXQ in the tree on `ac`, the
    /// weight sum is recomputed at the latest time seen (`sta_apply_airtime_params`).
    fn weight_changed(&mut self, book: &mut Book, sta: LinkId, ac: Ac) {
        let scheduled = book.txqs.station(sta).any(|s| s.ac == ac && s.listed);
        if scheduled {
            self.update_weight(book, ac, book.last_now, true);
        }
    }

    fn active_txq_count(&self, ac: Ac) -> usize {
        self.acs[ac.index()].tree.len()
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{no_pending, AC};
    use super::super::{Scheduler, SchedulerKind, SchedulerParams, AIRTIME_MAX_BEHIND_US};
    use crate::mac80211::txq::{LinkId, Tid, TxqKey};
    use crate::Nanos;

    #[test]
    fn virtual_time_charging_uses_kernel_reciprocals() {
        let mut s = Scheduler::new(SchedulerParams::mainline(SchedulerKind::VirtualTime), 2);
        let (a, b) = (
            TxqKey::station(LinkId(0), Tid(0)),
            TxqKey::station(LinkId(1), Tid(0)),
        );
        let t0 = Nanos::from_secs(1);
        s.schedule_txq(t0, a, AC);
        s.schedule_txq(t0, b, AC);
        assert_eq!(s.weight_sum(AC), 512);
        s.register_airtime(t0, a, AC, 1000, 0);
        // (1000·256 + 128) · 2048 >> 19 = 1000; global: (256000 + 256) · ⌊2^32/512⌋ >> 32.
        assert_eq!(s.virtual_time_us(Some(LinkId(0)), AC), 1000);
        assert_eq!(s.global_virtual_time_us(AC), 500);
        // RX counts too with the default flags; weight 512 halves the advance.
        s.set_weight(LinkId(1), 512);
        s.register_airtime(t0, b, AC, 600, 400);
        assert_eq!(s.virtual_time_us(Some(LinkId(1)), AC), 500);
        // The 32-bit per-station product wraps above ≈ 8 ms per report, as in 5.14–5.19.
        let before = s.virtual_time_us(Some(LinkId(0)), AC);
        s.register_airtime(t0, a, AC, 9000, 0);
        let exact = 9000u64;
        let got = s.virtual_time_us(Some(LinkId(0)), AC) - before;
        assert_eq!(
            got,
            (((9000u32 << 8) + 128).wrapping_mul(2048) >> 19) as u64
        );
        assert!(got < exact);
    }

    #[test]
    fn virtual_time_reactivation_after_long_idle_resets_to_global() {
        let (a, b) = (
            TxqKey::station(LinkId(0), Tid(0)),
            TxqKey::station(LinkId(1), Tid(0)),
        );
        let mk = || {
            let mut s = Scheduler::new(SchedulerParams::mainline(SchedulerKind::VirtualTime), 2);
            let t0 = Nanos::from_secs(1);
            s.schedule_txq(t0, a, AC);
            s.schedule_txq(t0, b, AC);
            // Get global v_t well past AIRTIME_MAX_BEHIND, both stations busy.
            let mut now = t0;
            for _ in 0..100 {
                for t in [a, b] {
                    now += Nanos::from_us(500);
                    s.register_airtime(now, t, AC, 500, 0);
                    s.schedule_txq(now, t, AC);
                }
            }
            // a goes idle.
            s.return_txq(now, a, AC, false, &no_pending);
            assert!(!s.is_scheduled(a));
            (s, now)
        };

        // Short idle (10 ms, b sending meanwhile): a keeps its own (lower) v_t.
        let (mut s, mut now) = mk();
        let va = s.virtual_time_us(Some(LinkId(0)), AC);
        for _ in 0..10 {
            now += Nanos::from_ms(1);
            s.register_airtime(now, b, AC, 1000, 0);
            s.schedule_txq(now, b, AC);
        }
        assert!(va < s.global_virtual_time_us(AC));
        s.schedule_txq(now, a, AC);
        assert_eq!(s.virtual_time_us(Some(LinkId(0)), AC), va);

        // Long idle (150 ms, b sending a little so a stays within 20 ms): reset to global.
        let (mut s, mut now) = mk();
        let va = s.virtual_time_us(Some(LinkId(0)), AC);
        for _ in 0..15 {
            now += Nanos::from_ms(10);
            s.register_airtime(now, b, AC, 500, 0);
            s.schedule_txq(now, b, AC);
        }
        let g = s.global_virtual_time_us(AC);
        assert!(va < g && g - va < AIRTIME_MAX_BEHIND_US);
        s.schedule_txq(now, a, AC);
        assert_eq!(s.virtual_time_us(Some(LinkId(0)), AC), g);
    }

    #[test]
    fn virtual_time_max_behind_catches_up_active_station() {
        let (a, b) = (
            TxqKey::station(LinkId(0), Tid(0)),
            TxqKey::station(LinkId(1), Tid(0)),
        );
        let mut s = Scheduler::new(SchedulerParams::mainline(SchedulerKind::VirtualTime), 2);
        let mut now = Nanos::from_secs(1);
        s.schedule_txq(now, a, AC);
        s.schedule_txq(now, b, AC);
        s.return_txq(now, a, AC, false, &no_pending);
        // b alone burns 60 ms of airtime within 30 ms of wall time (a stays "active").
        for _ in 0..30 {
            now += Nanos::from_ms(1);
            s.register_airtime(now, b, AC, 2000, 0);
        }
        let g = s.global_virtual_time_us(AC);
        assert!(g > AIRTIME_MAX_BEHIND_US + s.virtual_time_us(Some(LinkId(0)), AC));
        s.schedule_txq(now, a, AC);
        assert_eq!(s.virtual_time_us(Some(LinkId(0)), AC), g);
    }

    #[test]
    fn virtual_time_catches_up_when_none_eligible() {
        let mut s = Scheduler::new(SchedulerParams::mainline(SchedulerKind::VirtualTime), 2);
        let (a, b) = (
            TxqKey::station(LinkId(0), Tid(0)),
            TxqKey::station(LinkId(1), Tid(0)),
        );
        let t0 = Nanos::from_secs(1);
        s.schedule_txq(t0, a, AC);
        s.schedule_txq(t0, b, AC);
        // b empties but stays active (weight sum 512): a's charges advance global by half.
        s.return_txq(t0, b, AC, false, &no_pending);
        s.register_airtime(t0, a, AC, 1000, 0);
        assert_eq!(s.virtual_time_us(Some(LinkId(0)), AC), 1000);
        assert_eq!(s.global_virtual_time_us(AC), 500);
        // The first (only) node is ahead: global v_t jumps to it and it is served.
        s.schedule_start(t0, AC, &|_| false);
        assert_eq!(s.next_txq(t0, AC, &mut |_| true, &no_pending), Some(a));
        assert_eq!(s.global_virtual_time_us(AC), 1000);
    }

    #[test]
    fn virtual_time_round_ends_at_ineligible_second_node() {
        let mut s = Scheduler::new(SchedulerParams::mainline(SchedulerKind::VirtualTime), 2);
        let (a, b) = (
            TxqKey::station(LinkId(0), Tid(0)),
            TxqKey::station(LinkId(1), Tid(0)),
        );
        let t0 = Nanos::from_secs(1);
        s.schedule_txq(t0, a, AC);
        s.schedule_txq(t0, b, AC);
        s.register_airtime(t0, b, AC, 4000, 0); // b: 4000, global: 2000
        s.schedule_start(t0, AC, &|_| false);
        assert_eq!(s.next_txq(t0, AC, &mut |_| true, &no_pending), Some(a));
        // b is ahead of global and not first: the walk ends.
        assert_eq!(s.next_txq(t0, AC, &mut |_| true, &no_pending), None);
        // may_transmit agrees.
        assert!(s.may_transmit(t0, a, AC, &mut |_| true, &no_pending, &|_| false));
        assert!(!s.may_transmit(t0, b, AC, &mut |_| true, &no_pending, &|_| false));
    }
}
