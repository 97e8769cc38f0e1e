//! mac80211's active-list scheduler, the kernel's code from 5.0 on: a list of TXQs per
//! AC served from the head, with schedule rounds (reference §5.2, §5.4). Three
//! [`SchedulerKind`]s run it:
//!
//! - **Drr** (5.0–5.13, §5.2): `deficit < 0` → `+= weight << quantum_shift` and rotate;
//!   AQL-ineligible → rotate; a full rotation without an AQL-eligible station TXQ → `None`;
//!   a TXQ already served in this round → `None`; vif TXQs are never deficit-limited.
//!   (Re)inserted station TXQs go to the head when `airtime_flags != 0`, others to the tail.
//! - **DrrAql** (6.0+, §5.4): the same with the effective deficit
//!   `deficit − aql_tx_pending`, the 100 ms activity window (charging only active
//!   stations, keeping recently active indebted TXQs listed) and the per-AC
//!   `schedule_start` check (round 0 blocks the whole round).
//! - **RoundRobin** (4.9–4.10, or any era with `airtime_flags = 0`): the same list with
//!   tail insertion and no deficits (§5.2 "otherwise → tail (plain round robin)"). Rounds
//!   and the AQL rotation rule still apply.
//!
//! The three share all but a few rules, so one type runs them and tests the kind where
//! they differ.

use super::{
    Book, Generation, MayTransmitAnswers, MayTransmitAqlCheck, SchedulerKind, TxqTable,
    AIRTIME_ACTIVE_DURATION,
};
use crate::mac::edca::Ac;
use crate::mac80211::txq::{LinkId, TxqKey};
use crate::Nanos;
use std::collections::VecDeque;

/// One AC's active list and round.
#[derive(Clone, Debug, Default)]
struct ListAc {
    /// `active_txqs[ac]`.
    list: VecDeque<TxqKey>,
    /// `schedule_round[ac]`.
    round: u16,
}

impl ListAc {
    /// Take `txq` off the list (it is on it at most once).
    // perf: the TXQ taken off is usually the head (the one the firmware was just
    // allowed to serve), so that is checked first.
    #[inline]
    fn remove(&mut self, txq: TxqKey) {
        if self.list.front() == Some(&txq) {
            self.list.pop_front();
        } else if let Some(i) = self.list.iter().position(|&k| k == txq) {
            self.list.remove(i);
        }
    }

    /// Move the head to the tail.
    fn rotate(&mut self, head: TxqKey) {
        self.list.pop_front();
        self.list.push_back(head);
    }
}

/// The active-list scheduler's state: the lists and rounds per AC, the round in which
/// each TXQ was last served and (DrrAql) when each station was last active.
#[derive(Clone, Debug, Default)]
pub(super) struct ActiveList {
    acs: [ListAc; 4],
    /// Per TXQ: the round in which `next_txq` last returned it (`txqi->schedule_round`;
    /// 0 before the first).
    served_round: TxqTable<u16>,
    /// DrrAql (6.0 `last_active`), per station and AC: when a TXQ of the station was
    /// last inserted with data (stations beyond the end: never).
    last_active: Vec<[Option<Nanos>; 4]>,
}

impl ActiveList {
    /// The current `schedule_round[ac]`.
    pub(super) fn schedule_round(&self, ac: Ac) -> u16 {
        self.acs[ac.index()].round
    }

    /// `active_txqs[ac]` from its head.
    pub(super) fn active_list(&self, ac: Ac) -> impl Iterator<Item = &TxqKey> {
        self.acs[ac.index()].list.iter()
    }

    /// 6.0 `ieee80211_sta_keep_active`: `jiffies − last_active ≤ HZ/10`.
    fn active(&self, sta: LinkId, ac: Ac, now: Nanos) -> bool {
        self.last_active
            .get(sta.index())
            .and_then(|s| s[ac.index()])
            .is_some_and(|t| now.saturating_sub(t) <= AIRTIME_ACTIVE_DURATION)
    }

    fn set_last_active(&mut self, sta: LinkId, ac: Ac, now: Nanos) {
        if self.last_active.len() <= sta.index() {
            self.last_active.resize(sta.index() + 1, [None; 4]);
        }
        self.last_active[sta.index()][ac.index()] = Some(now);
    }

    /// List a TXQ that has frames and is not listed ([`Generation::schedule_txq`]).
    #[inline(never)]
    fn list(&mut self, book: &mut Book, now: Nanos, txq: TxqKey, ac: Ac) {
        self.schedule(book, now, txq, ac, true, &|_| 0);
    }

    /// `__ieee80211_schedule_txq(txq, force)` for a TXQ that is not listed. A TXQ
    /// without frames (`has_queue` false) stays off the list unless 6.0's
    /// `ieee80211_txq_keep_active` holds (DrrAql: a station TXQ with a negative
    /// effective deficit, `deficit − aql_pending_us(sta)`, whose station was active in
    /// the last 100 ms); one with frames goes to the head under airtime DRR (§5.2
    /// head/tail rule) and, under DrrAql, stamps its station active.
    // perf: inlined into schedule_txq and return_txq (a TXQ the firmware was allowed
    // to serve comes back through here after every PPDU).
    #[inline(always)]
    fn schedule(
        &mut self,
        book: &mut Book,
        now: Nanos,
        txq: TxqKey,
        ac: Ac,
        has_queue: bool,
        aql_pending_us: &dyn Fn(LinkId) -> u32,
    ) {
        debug_assert!(!book.txqs[&txq].listed, "{txq:?} listed twice");
        let kind = book.params.kind;
        let keep = !has_queue
            && kind == SchedulerKind::DrrAql
            && txq.sta.is_some_and(|sta| {
                let air = &book.stas[sta.index()][ac.index()];
                air.deficit - (aql_pending_us(sta) as i64) < 0 && self.active(sta, ac, now)
            });
        if !has_queue && !keep {
            return;
        }
        let head = kind != SchedulerKind::RoundRobin
            && txq.sta.is_some()
            && book.params.airtime_flags != 0
            && has_queue;
        let list = &mut self.acs[ac.index()].list;
        if head {
            list.push_front(txq);
        } else {
            list.push_back(txq);
        }
        book.state_mut(txq).listed = true;
        if kind == SchedulerKind::DrrAql && has_queue {
            if let Some(sta) = txq.sta {
                self.set_last_active(sta, ac, now);
            }
        }
    }

    /// Top up a station at the head by its quantum if its deficit is negative (DrrAql:
    /// its effective deficit, net of `aql_pending_us`); whether it was. RoundRobin has
    /// no deficits: never.
    fn top_up(
        book: &mut Book,
        sta: LinkId,
        ac: Ac,
        aql_pending_us: &dyn Fn(LinkId) -> u32,
    ) -> bool {
        let kind = book.params.kind;
        if kind == SchedulerKind::RoundRobin {
            return false;
        }
        let pending = if kind == SchedulerKind::DrrAql {
            aql_pending_us(sta) as i64
        } else {
            0
        };
        let q = book.quantum(sta, ac);
        let air = &mut book.stas[sta.index()][ac.index()];
        if air.deficit - pending < 0 {
            air.deficit += q;
            return true;
        }
        false
    }

    /// `may_transmit`'s per-AC AQL check (DrrAql): whether it lets the TXQ through
    /// without the deficit walk, given whether the AC is over its limit.
    fn aql_check_allows(book: &Book, ac_over_limit: bool) -> bool {
        match book.params.may_transmit_aql_check {
            MayTransmitAqlCheck::AsWritten => ac_over_limit,
            MayTransmitAqlCheck::Flipped => !ac_over_limit,
        }
    }

    /// `may_transmit` allows `txq`: it leaves the list.
    fn allow(&mut self, book: &mut Book, txq: TxqKey, ac: Ac) -> bool {
        if book.txqs[&txq].listed {
            self.acs[ac.index()].remove(txq);
            book.state_mut(txq).listed = false;
        }
        true
    }

    /// How many times in a row [`Generation::may_transmit`] would refuse `txq`, when
    /// each refusal only tops its deficit up: a DRR kind, `txq` a station TXQ alone on
    /// its AC's list, the per-AC AQL check not letting it through at once (DrrAql,
    /// [`MayTransmitAqlCheck`]). That takes `ceil(−deficit / quantum)` refusals. `None`
    /// in every other case.
    pub(super) fn refusals_to_come(
        &self,
        book: &Book,
        txq: TxqKey,
        ac: Ac,
        ac_over_limit: &dyn Fn(usize) -> bool,
    ) -> Option<u32> {
        let kind = book.params.kind;
        if !matches!(kind, SchedulerKind::Drr | SchedulerKind::DrrAql) {
            return None;
        }
        let sta = txq.sta?;
        let a = &self.acs[ac.index()];
        if a.list.len() != 1 || a.list.front() != Some(&txq) || !book.txqs.get(&txq)?.listed {
            return None;
        }
        if kind == SchedulerKind::DrrAql && Self::aql_check_allows(book, ac_over_limit(1)) {
            return None;
        }
        let deficit = book.stas.get(sta.index())?[ac.index()].deficit;
        let q = book.quantum(sta, ac);
        if deficit >= 0 {
            return Some(0);
        }
        if q <= 0 {
            return None;
        }
        u32::try_from((-deficit + q - 1) / q).ok()
    }
}

impl Generation for ActiveList {
    #[inline]
    fn schedule_txq(&mut self, book: &mut Book, now: Nanos, txq: TxqKey, ac: Ac, listed: bool) {
        if !listed {
            self.list(book, now, txq, ac);
        }
    }

    fn schedule_start(&mut self, book: &Book, ac: Ac, ac_over_limit: &dyn Fn(usize) -> bool) {
        let a = &mut self.acs[ac.index()];
        if book.params.kind == SchedulerKind::DrrAql {
            if ac_over_limit(a.list.len()) {
                a.round = 0;
            } else {
                a.round = a.round.wrapping_add(1);
                if a.round == 0 {
                    a.round = 1;
                }
            }
        } else {
            a.round = a.round.wrapping_add(1);
        }
    }

    fn next_txq(
        &mut self,
        book: &mut Book,
        ac: Ac,
        aql_eligible: &mut dyn FnMut(TxqKey) -> bool,
        aql_pending_us: &dyn Fn(LinkId) -> u32,
    ) -> Option<TxqKey> {
        let a = ac.index();
        let round = self.acs[a].round;
        if book.params.kind == SchedulerKind::DrrAql && round == 0 {
            return None;
        }
        let mut head: Option<TxqKey> = None;
        let mut found_eligible = false;
        loop {
            let t = *self.acs[a].list.front()?;
            if head == Some(t) {
                if !found_eligible {
                    return None;
                }
                found_eligible = false;
            }
            if head.is_none() {
                head = Some(t);
            }
            if let Some(sta) = t.sta {
                let eligible = aql_eligible(t);
                if eligible {
                    found_eligible = true;
                }
                let topped_up = Self::top_up(book, sta, ac, aql_pending_us);
                if !eligible || topped_up {
                    self.acs[a].rotate(t);
                    continue;
                }
            }
            let served = self.served_round.get_or_insert_with(t, || 0);
            if *served == round {
                return None;
            }
            *served = round;
            book.state_mut(t).listed = false;
            self.acs[a].list.pop_front();
            return Some(t);
        }
    }

    // perf: this, `answer_asks_at_once` and `charge` are `#[inline]`: mod.rs dispatches
    // to them per PPDU (the default generation's path).
    #[inline]
    fn return_txq(
        &mut self,
        book: &mut Book,
        now: Nanos,
        txq: TxqKey,
        ac: Ac,
        has_data: bool,
        aql_pending_us: &dyn Fn(LinkId) -> u32,
    ) {
        if !book.txqs[&txq].listed {
            self.schedule(book, now, txq, ac, has_data, aql_pending_us);
        }
    }

    fn unschedule_txq(&mut self, book: &mut Book, _now: Nanos, txq: TxqKey, ac: Ac) {
        self.acs[ac.index()].remove(txq);
        book.state_mut(txq).listed = false;
    }

    fn may_transmit(
        &mut self,
        book: &mut Book,
        txq: TxqKey,
        ac: Ac,
        _aql_eligible: &mut dyn FnMut(TxqKey) -> bool,
        aql_pending_us: &dyn Fn(LinkId) -> u32,
        ac_over_limit: &dyn Fn(usize) -> bool,
    ) -> bool {
        let kind = book.params.kind;
        let a = ac.index();
        let Some(sta) = txq.sta else {
            return self.allow(book, txq, ac);
        };
        if !book.txqs[&txq].listed {
            return self.allow(book, txq, ac);
        }
        if kind == SchedulerKind::DrrAql
            && Self::aql_check_allows(book, ac_over_limit(self.acs[a].list.len()))
        {
            return self.allow(book, txq, ac);
        }
        // One pass at most: the kernel's `list_empty(&txqi->schedule_order)` test above
        // guarantees the TXQ is on the list, and here `listed` stands for that. A TXQ
        // marked listed but not on its AC's list would make the walk rotate for ever,
        // so a pass that does not reach it treats it as unlisted (allowed, flag
        // cleared), as the kernel would.
        debug_assert!(
            self.acs[a].list.contains(&txq),
            "{txq:?} marked listed but not on {ac:?}'s list"
        );
        let mut steps = self.acs[a].list.len();
        while let Some(&front) = self.acs[a].list.front() {
            if front == txq {
                break;
            }
            if steps == 0 {
                return self.allow(book, txq, ac);
            }
            steps -= 1;
            if let Some(s) = front.sta {
                Self::top_up(book, s, ac, aql_pending_us);
            }
            self.acs[a].rotate(front);
        }
        if kind == SchedulerKind::RoundRobin || book.stas[sta.index()][a].deficit >= 0 {
            return self.allow(book, txq, ac);
        }
        let q = book.quantum(sta, ac);
        book.stas[sta.index()][a].deficit += q;
        self.acs[a].rotate(txq);
        false
    }

    /// A station TXQ alone on a DRR list is refused `ceil(−deficit / quantum)` times,
    /// each refusal topping its deficit up by its quantum, then allowed
    /// ([`ActiveList::refusals_to_come`]).
    #[inline]
    fn answer_asks_at_once(
        &mut self,
        book: &mut Book,
        now: Nanos,
        txq: TxqKey,
        ac: Ac,
        max_asks: u32,
        ac_over_limit: &dyn Fn(usize) -> bool,
    ) -> Option<MayTransmitAnswers> {
        let to_come = self.refusals_to_come(book, txq, ac, ac_over_limit)?;
        book.last_now = book.last_now.max(now);
        let refusals = to_come.min(max_asks);
        if refusals > 0 {
            let sta = txq.sta.expect("a station TXQ");
            let q = book.quantum(sta, ac);
            book.stas[sta.index()][ac.index()].deficit += q * refusals as i64;
        }
        if refusals == max_asks {
            return Some(MayTransmitAnswers {
                refusals,
                allowed: false,
            });
        }
        // None to come: the next ask allows it, taking it off the list.
        self.allow(book, txq, ac);
        Some(MayTransmitAnswers {
            refusals,
            allowed: true,
        })
    }

    #[inline]
    fn charge(&mut self, book: &mut Book, now: Nanos, txq: TxqKey, ac: Ac, charged_us: u32) {
        let Some(sta) = txq.sta else { return };
        let kind = book.params.kind;
        let charge = match kind {
            SchedulerKind::Drr => true,
            SchedulerKind::DrrAql => self.active(sta, ac, now),
            _ => false,
        };
        if charge {
            book.stas[sta.index()][ac.index()].deficit -= charged_us as i64;
        }
    }

    fn active_txq_count(&self, ac: Ac) -> usize {
        self.acs[ac.index()].list.len()
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{no_pending, refusals_to_come, run, AC};
    use super::super::{
        ac_aql_limit_us, MayTransmitAqlCheck, Scheduler, SchedulerKind, SchedulerParams,
    };
    use crate::mac80211::txq::{LinkId, Tid, TxqKey};
    use crate::Nanos;

    #[test]
    fn round_robin_gives_equal_service_counts() {
        let r = run(
            SchedulerParams::mainline(SchedulerKind::RoundRobin),
            &[200, 2000],
            &[],
            Nanos::from_secs(20),
        );
        let shares = r.shares();
        println!(
            "round_robin 200/2000 µs: services {:?}, airtime shares {:.4?}, Jain {:.4}",
            r.services,
            shares,
            r.jain()
        );
        assert!(r.services[0].abs_diff(r.services[1]) <= 1);
        assert!((shares[1] - 2000.0 / 2200.0).abs() < 0.005, "{shares:?}");
    }

    #[test]
    fn openwrt_quantum_still_fair() {
        for kind in [SchedulerKind::Drr, SchedulerKind::DrrAql] {
            let r = run(
                SchedulerParams::openwrt(kind),
                &[200, 450, 900, 1400, 2000],
                &[],
                Nanos::from_secs(20),
            );
            println!(
                "{:12} (quantum << 3) 5 stations: shares {:.4?}, Jain {:.5}",
                kind.name(),
                r.shares(),
                r.jain()
            );
            assert!(r.jain() >= 0.98);
        }
    }

    #[test]
    fn drr_serves_newly_active_station_first() {
        let mut s = Scheduler::new(SchedulerParams::mainline(SchedulerKind::Drr), 3);
        let (a, b, c) = (
            TxqKey::station(LinkId(0), Tid(0)),
            TxqKey::station(LinkId(1), Tid(0)),
            TxqKey::station(LinkId(2), Tid(0)),
        );
        let t0 = Nanos::ZERO;
        s.schedule_txq(t0, a, AC);
        s.schedule_txq(t0, b, AC);
        // Serve a few rounds so both have been charged.
        for _ in 0..6 {
            s.schedule_start(t0, AC, &|_| false);
            while let Some(t) = s.next_txq(t0, AC, &mut |_| true, &no_pending) {
                s.return_txq(t0, t, AC, true, &no_pending);
                s.register_airtime(t0, t, AC, 300, 0);
            }
        }
        s.schedule_txq(t0, c, AC);
        s.schedule_start(t0, AC, &|_| false);
        assert_eq!(s.next_txq(t0, AC, &mut |_| true, &no_pending), Some(c));

        // Without airtime accounting the newcomer waits at the tail.
        let mut rr = Scheduler::new(SchedulerParams::mainline(SchedulerKind::RoundRobin), 3);
        rr.schedule_txq(t0, a, AC);
        rr.schedule_txq(t0, b, AC);
        rr.schedule_txq(t0, c, AC);
        rr.schedule_start(t0, AC, &|_| false);
        assert_eq!(rr.next_txq(t0, AC, &mut |_| true, &no_pending), Some(a));
        // airtime_flags = 0 turns Drr into tail insertion too.
        let mut p = SchedulerParams::mainline(SchedulerKind::Drr);
        p.airtime_flags = 0;
        let mut d0 = Scheduler::new(p, 3);
        d0.schedule_txq(t0, a, AC);
        d0.schedule_txq(t0, c, AC);
        d0.schedule_start(t0, AC, &|_| false);
        assert_eq!(d0.next_txq(t0, AC, &mut |_| true, &no_pending), Some(a));
    }

    #[test]
    fn drr_round_ends_at_txq_already_served() {
        let mut s = Scheduler::new(SchedulerParams::mainline(SchedulerKind::Drr), 2);
        let a = TxqKey::station(LinkId(0), Tid(0));
        let t0 = Nanos::ZERO;
        s.schedule_txq(t0, a, AC);
        s.schedule_start(t0, AC, &|_| false);
        assert_eq!(s.next_txq(t0, AC, &mut |_| true, &no_pending), Some(a));
        s.return_txq(t0, a, AC, true, &no_pending);
        // Deficit still >= 0 but already served this round.
        assert_eq!(s.next_txq(t0, AC, &mut |_| true, &no_pending), None);
        s.schedule_start(t0, AC, &|_| false);
        assert_eq!(s.next_txq(t0, AC, &mut |_| true, &no_pending), Some(a));
    }

    #[test]
    fn drr_negative_deficit_gets_one_quantum_and_rotates() {
        for (params, q) in [
            (SchedulerParams::mainline(SchedulerKind::Drr), 256),
            (SchedulerParams::openwrt(SchedulerKind::Drr), 2048),
        ] {
            let mut s = Scheduler::new(params, 2);
            let (a, b) = (
                TxqKey::station(LinkId(0), Tid(0)),
                TxqKey::station(LinkId(1), Tid(0)),
            );
            let t0 = Nanos::ZERO;
            s.schedule_txq(t0, a, AC);
            s.schedule_txq(t0, b, AC); // head insertion: b, a
            s.register_airtime(t0, b, AC, 1000, 0);
            assert_eq!(s.deficit_us(LinkId(1), AC), 256 - 1000);
            s.schedule_start(t0, AC, &|_| false);
            assert_eq!(s.next_txq(t0, AC, &mut |_| true, &no_pending), Some(a));
            assert_eq!(s.deficit_us(LinkId(1), AC), 256 - 1000 + q);
        }
    }

    #[test]
    fn drr_vif_txq_is_never_deficit_limited() {
        let mut s = Scheduler::new(SchedulerParams::mainline(SchedulerKind::Drr), 1);
        let v = TxqKey::vif();
        let t0 = Nanos::ZERO;
        s.schedule_txq(t0, v, AC);
        s.register_airtime(t0, v, AC, 50_000, 0); // ignored: no station
        for _ in 0..5 {
            s.schedule_start(t0, AC, &|_| false);
            assert_eq!(s.next_txq(t0, AC, &mut |_| false, &no_pending), Some(v));
            s.return_txq(t0, v, AC, true, &no_pending);
        }
    }

    #[test]
    fn drr_aql_over_limit_round_returns_none() {
        let mut s = Scheduler::new(SchedulerParams::mainline(SchedulerKind::DrrAql), 2);
        let (a, b) = (
            TxqKey::station(LinkId(0), Tid(0)),
            TxqKey::station(LinkId(1), Tid(0)),
        );
        let t0 = Nanos::ZERO;
        s.schedule_txq(t0, a, AC);
        s.schedule_txq(t0, b, AC);
        assert_eq!(s.active_txq_count(AC), 2);
        // 2 TXQs: limit = 5000/2 + 12000 = 14500 µs; 15000 µs pending → over.
        let pending_ac = 15_000u32;
        let over = |n: usize| pending_ac >= ac_aql_limit_us(n, 5000, 12000);
        s.schedule_start(t0, AC, &over);
        assert_eq!(s.schedule_round(AC), 0);
        assert_eq!(s.next_txq(t0, AC, &mut |_| true, &no_pending), None);
        assert_eq!(s.next_txq(t0, AC, &mut |_| true, &no_pending), None);
        s.schedule_start(t0, AC, &|_| false);
        assert_ne!(s.schedule_round(AC), 0);
        assert!(s.next_txq(t0, AC, &mut |_| true, &no_pending).is_some());
        // Drr (5.x) has no per-AC check: the closure is ignored.
        let mut d = Scheduler::new(SchedulerParams::mainline(SchedulerKind::Drr), 1);
        d.schedule_txq(t0, a, AC);
        d.schedule_start(t0, AC, &|_| true);
        assert_eq!(d.next_txq(t0, AC, &mut |_| true, &no_pending), Some(a));
    }

    /// `may_transmit`'s per-AC AQL check as written lets a TXQ in debt through while the
    /// AC is over its limit and applies the deficit under it; flipped, the other way
    /// round. `refusals_to_come` agrees with `may_transmit` either way.
    #[test]
    fn may_transmit_aql_check_as_written_and_flipped() {
        let a = TxqKey::station(LinkId(0), Tid(0));
        let t0 = Nanos::ZERO;
        for check in [MayTransmitAqlCheck::AsWritten, MayTransmitAqlCheck::Flipped] {
            for over in [false, true] {
                let params = SchedulerParams {
                    may_transmit_aql_check: check,
                    ..SchedulerParams::mainline(SchedulerKind::DrrAql)
                };
                let mut s = Scheduler::new(params, 1);
                s.schedule_txq(t0, a, AC);
                s.register_airtime(t0, a, AC, 600, 0);
                let debt = s.deficit_us(LinkId(0), AC);
                assert!(debt < 0, "in debt: {debt}");
                let over_limit = |_: usize| over;
                let expect_allow = match check {
                    MayTransmitAqlCheck::AsWritten => over,
                    MayTransmitAqlCheck::Flipped => !over,
                };
                let refusals = refusals_to_come(&s, a, AC, &over_limit);
                let allowed = s.may_transmit(t0, a, AC, &mut |_| true, &no_pending, &over_limit);
                assert_eq!(allowed, expect_allow, "{check:?}, over {over}");
                if allowed {
                    // Let through without the deficit walk: off the list, deficit unchanged.
                    assert!(!s.is_scheduled(a));
                    assert_eq!(s.deficit_us(LinkId(0), AC), debt);
                    assert_eq!(refusals, None, "the shortcut does not apply");
                } else {
                    // Refused by the deficit: topped up by its quantum, still listed.
                    assert!(s.is_scheduled(a));
                    assert_eq!(s.deficit_us(LinkId(0), AC), debt + 256);
                    let expect = (-debt as u32).div_ceil(256);
                    assert_eq!(refusals, Some(expect), "ceil(debt / quantum) refusals");
                }
            }
        }
    }

    #[test]
    fn drr_aql_round_number_skips_zero() {
        let mut s = Scheduler::new(SchedulerParams::mainline(SchedulerKind::DrrAql), 1);
        for _ in 0..70_000 {
            s.schedule_start(Nanos::ZERO, AC, &|_| false);
            assert_ne!(s.schedule_round(AC), 0);
        }
    }

    #[test]
    fn drr_aql_effective_deficit_counts_pending_airtime() {
        let mut s = Scheduler::new(SchedulerParams::mainline(SchedulerKind::DrrAql), 2);
        let (a, b) = (
            TxqKey::station(LinkId(0), Tid(0)),
            TxqKey::station(LinkId(1), Tid(0)),
        );
        let t0 = Nanos::ZERO;
        s.schedule_txq(t0, a, AC);
        s.schedule_txq(t0, b, AC); // list: b, a
        s.schedule_start(t0, AC, &|_| false);
        // b has deficit 256 but 1000 µs pending in the hardware: effective −744.
        let pend = |x: LinkId| if x == LinkId(1) { 1000 } else { 0 };
        assert_eq!(s.next_txq(t0, AC, &mut |_| true, &pend), Some(a));
        assert_eq!(s.deficit_us(LinkId(1), AC), 256 + 256);
        // The same state under 5.x Drr ignores the pending airtime.
        let mut d = Scheduler::new(SchedulerParams::mainline(SchedulerKind::Drr), 2);
        d.schedule_txq(t0, a, AC);
        d.schedule_txq(t0, b, AC);
        d.schedule_start(t0, AC, &|_| false);
        assert_eq!(d.next_txq(t0, AC, &mut |_| true, &pend), Some(b));
    }

    /// 6.0's activity rules: an indebted station that empties within 100 ms of its last
    /// activity stays listed (its debt is still charged and paid off by later passes); a
    /// station inactive for more than 100 ms leaves the list and is no longer charged.
    #[test]
    fn drr_aql_debt_cannot_be_escaped_by_short_idle() {
        let (a, b) = (
            TxqKey::station(LinkId(0), Tid(0)),
            TxqKey::station(LinkId(1), Tid(0)),
        );
        let setup = || {
            let mut s = Scheduler::new(SchedulerParams::mainline(SchedulerKind::DrrAql), 2);
            let t0 = Nanos::ZERO;
            s.schedule_txq(t0, b, AC);
            s.schedule_txq(t0, a, AC); // list: a, b; a last_active = 0
            s.schedule_start(t0, AC, &|_| false);
            assert_eq!(s.next_txq(t0, AC, &mut |_| true, &no_pending), Some(a));
            s.return_txq(t0, a, AC, true, &no_pending); // back at head, last_active = 0
            s
        };
        let a_pending = |x: LinkId| if x == LinkId(0) { 3000 } else { 0 };

        // Short idle: a is popped at 50 ms, its last frames go to the hardware (3000 µs
        // pending → effective deficit < 0) and it is returned empty: it stays listed.
        let mut s = setup();
        let t = Nanos::from_ms(50);
        s.schedule_start(t, AC, &|_| false);
        assert_eq!(s.next_txq(t, AC, &mut |_| true, &no_pending), Some(a));
        s.return_txq(t, a, AC, false, &a_pending);
        assert!(s.is_scheduled(a));
        // Its airtime is charged on completion (active within 100 ms of t = 0).
        s.register_airtime(Nanos::from_ms(60), a, AC, 3000, 0);
        assert_eq!(s.deficit_us(LinkId(0), AC), 256 - 3000);
        // New data 20 ms later: a is already listed, so no head insertion; its debt
        // makes it yield to b.
        let t2 = Nanos::from_ms(80);
        s.schedule_txq(t2, a, AC);
        s.schedule_start(t2, AC, &|_| false);
        assert_eq!(s.next_txq(t2, AC, &mut |_| true, &no_pending), Some(b));

        // Long idle: the same at 150 ms (last activity at 0): a leaves the list and the
        // late airtime report is not charged.
        let mut s = setup();
        let t = Nanos::from_ms(150);
        s.schedule_start(t, AC, &|_| false);
        assert_eq!(s.next_txq(t, AC, &mut |_| true, &no_pending), Some(a));
        s.return_txq(t, a, AC, false, &a_pending);
        assert!(!s.is_scheduled(a));
        s.register_airtime(Nanos::from_ms(160), a, AC, 3000, 0);
        assert_eq!(s.deficit_us(LinkId(0), AC), 256);
        // Back with data: head insertion, served first.
        let t2 = Nanos::from_ms(180);
        s.schedule_txq(t2, a, AC);
        s.schedule_start(t2, AC, &|_| false);
        assert_eq!(s.next_txq(t2, AC, &mut |_| true, &no_pending), Some(a));
    }

    #[test]
    fn drr_aql_empty_txq_with_positive_deficit_leaves_the_list() {
        let mut s = Scheduler::new(SchedulerParams::mainline(SchedulerKind::DrrAql), 1);
        let a = TxqKey::station(LinkId(0), Tid(0));
        let t0 = Nanos::ZERO;
        s.schedule_txq(t0, a, AC);
        s.schedule_start(t0, AC, &|_| false);
        assert_eq!(s.next_txq(t0, AC, &mut |_| true, &no_pending), Some(a));
        s.return_txq(t0, a, AC, false, &no_pending);
        assert!(!s.is_scheduled(a));
    }

    #[test]
    fn drr_may_transmit_walks_and_tops_up() {
        let mut s = Scheduler::new(SchedulerParams::mainline(SchedulerKind::Drr), 2);
        let (a, b) = (
            TxqKey::station(LinkId(0), Tid(0)),
            TxqKey::station(LinkId(1), Tid(0)),
        );
        let t0 = Nanos::ZERO;
        s.schedule_txq(t0, a, AC);
        s.schedule_txq(t0, b, AC); // b, a
        s.register_airtime(t0, b, AC, 1000, 0); // b: −744
        s.register_airtime(t0, a, AC, 600, 0); // a: −344
                                               // a: b is topped up and rotated; a is negative → refused, topped up, rotated.
        assert!(!s.may_transmit(t0, a, AC, &mut |_| true, &no_pending, &|_| false));
        assert_eq!(s.deficit_us(LinkId(1), AC), -744 + 256);
        assert_eq!(s.deficit_us(LinkId(0), AC), -344 + 256);
        assert!(!s.may_transmit(t0, a, AC, &mut |_| true, &no_pending, &|_| false));
        assert_eq!(s.deficit_us(LinkId(0), AC), -344 + 512);
        assert!(s.may_transmit(t0, a, AC, &mut |_| true, &no_pending, &|_| false));
        assert!(!s.is_scheduled(a));
    }
}
