//! ath9k's in-driver airtime DRR of 4.11–4.20 (reference §5.5), before mac80211 had an
//! airtime scheduler: `ath_txq_schedule`, `__ath_tx_queue_tid`, `ath_tx_count_airtime`
//! and `ath_rx_count_airtime` in `drivers/net/wireless/ath/ath9k/{xmit,recv}.c` of that
//! era, read in the linux-wireless archive.
//!
//! Per AC a *new* and an *old* list; the deficit is per station per AC, but, as in the
//! driver, the list entries are the station's TIDs (TXQs), so "station lists" of §5.5
//! are lists of the stations' TXQs. A TXQ at the head whose station has `deficit <= 0`
//! gets `+ATH_AIRTIME_QUANTUM` (300 µs, [U]) and moves to the tail of the old list; an
//! empty TXQ at the head leaves the lists (or moves from new to old if old is not
//! empty); otherwise the head is served and **stays at the head**, so a station keeps
//! sending until its deficit is used up. A TXQ that becomes backlogged joins the *new*
//! list if its station's deficit is positive, else the old list (ath9k's default
//! `AIRTIME_USE_NEW_QUEUES`, assumed on; [U]). TX and RX airtime are charged, and a
//! charge that leaves the deficit `<= 0` re-lists the TXQ on the old list even if
//! empty, so an idle station's debt is paid back by later passes. ath9k had no rounds:
//! `schedule_start` is a no-op and `next_txq` returns `None` only when the lists are
//! empty (or, as an extension, when no listed TXQ is AQL-eligible); the driver stops on
//! its own (ath9k: when the hardware queue holds two aggregates, §8.1). There was no
//! `may_transmit`: every TXQ may. With `airtime_flags = 0` the deficit logic is off and
//! a served TXQ moves to the old tail (round robin).

use super::{Book, Generation};
use crate::mac::edca::Ac;
use crate::mac80211::txq::{LinkId, TxqKey};
use crate::Nanos;
use std::collections::VecDeque;

/// `ATH_AIRTIME_QUANTUM` of ath9k's in-driver scheduler, in µs (reference §5.5;
/// value \[U\], the definition was not seen).
pub const ATH_AIRTIME_QUANTUM_US: i64 = 300;

/// One AC's lists (`acq_new`, `acq_old`).
#[derive(Clone, Debug, Default)]
struct Ath9kAc {
    /// `acq_new`: TXQs that became backlogged with a positive deficit.
    new_list: VecDeque<TxqKey>,
    /// `acq_old`.
    old_list: VecDeque<TxqKey>,
}

impl Ath9kAc {
    /// Take `txq` off the list it is on.
    fn remove(&mut self, txq: TxqKey) {
        if let Some(i) = self.old_list.iter().position(|&k| k == txq) {
            self.old_list.remove(i);
        } else if let Some(i) = self.new_list.iter().position(|&k| k == txq) {
            self.new_list.remove(i);
        }
    }
}

/// ath9k's scheduler state: the new and old lists of each AC.
#[derive(Clone, Debug, Default)]
pub(super) struct Ath9kDrr {
    acs: [Ath9kAc; 4],
}

impl Ath9kDrr {
    /// `__ath_tx_queue_tid`: list on the new list if the station's deficit is positive
    /// (`AIRTIME_USE_NEW_QUEUES` assumed on), else on the old list; tail insertion.
    // perf: out of line, as the listing paths of the other generations are.
    #[inline(never)]
    fn queue(&mut self, book: &mut Book, txq: TxqKey, ac: Ac) {
        if book.txqs[&txq].listed {
            return;
        }
        let positive = txq
            .sta
            .is_none_or(|s| book.stas[s.index()][ac.index()].deficit > 0);
        let a = &mut self.acs[ac.index()];
        if positive {
            a.new_list.push_back(txq);
        } else {
            a.old_list.push_back(txq);
        }
        book.state_mut(txq).listed = true;
    }

    /// Move a listed TXQ to the tail of the old list.
    fn move_to_old(&mut self, book: &mut Book, txq: TxqKey, ac: Ac) {
        let a = &mut self.acs[ac.index()];
        a.remove(txq);
        a.old_list.push_back(txq);
        book.state_mut(txq).listed = true;
    }
}

impl Generation for Ath9kDrr {
    #[inline]
    fn schedule_txq(&mut self, book: &mut Book, _now: Nanos, txq: TxqKey, ac: Ac, _listed: bool) {
        self.queue(book, txq, ac);
    }

    /// ath9k had no rounds.
    fn schedule_start(&mut self, _book: &Book, _ac: Ac, _ac_over_limit: &dyn Fn(usize) -> bool) {}

    /// The selection part of `ath_txq_schedule`.
    fn next_txq(
        &mut self,
        book: &mut Book,
        ac: Ac,
        aql_eligible: &mut dyn FnMut(TxqKey) -> bool,
        _aql_pending_us: &dyn Fn(LinkId) -> u32,
    ) -> Option<TxqKey> {
        let active = book.charges_airtime();
        let a = ac.index();
        // Consecutive AQL rotations without meeting an eligible TXQ (AQL extension).
        let mut ineligible_streak = 0usize;
        loop {
            let acs = &self.acs[a];
            let (in_new, t) = match (acs.new_list.front(), acs.old_list.front()) {
                (Some(&t), _) => (true, t),
                (None, Some(&t)) => (false, t),
                (None, None) => return None,
            };
            let mut eligible = true;
            if let Some(sta) = t.sta {
                eligible = aql_eligible(t);
                if eligible {
                    ineligible_streak = 0;
                }
                let air = &mut book.stas[sta.index()][a];
                if active && air.deficit <= 0 {
                    air.deficit += ATH_AIRTIME_QUANTUM_US;
                    self.move_to_old(book, t, ac);
                    continue;
                }
            }
            if !book.txqs[&t].has_data {
                let acs = &mut self.acs[a];
                if in_new {
                    acs.new_list.pop_front();
                } else {
                    acs.old_list.pop_front();
                }
                if in_new && !acs.old_list.is_empty() {
                    acs.old_list.push_back(t);
                } else {
                    book.state_mut(t).listed = false;
                }
                continue;
            }
            if !eligible {
                ineligible_streak += 1;
                let listed = self.acs[a].new_list.len() + self.acs[a].old_list.len();
                if ineligible_streak > listed {
                    return None;
                }
                self.move_to_old(book, t, ac);
                continue;
            }
            return Some(t);
        }
    }

    /// After `ath_tx_sched_aggr`: without airtime accounting the served TID moves to the
    /// old tail (round robin); a TID with data that is not listed is queued.
    fn return_txq(
        &mut self,
        book: &mut Book,
        _now: Nanos,
        txq: TxqKey,
        ac: Ac,
        has_data: bool,
        _aql_pending_us: &dyn Fn(LinkId) -> u32,
    ) {
        if !book.txqs[&txq].listed {
            if has_data {
                self.queue(book, txq, ac);
            }
        } else if !book.charges_airtime() {
            self.move_to_old(book, txq, ac);
        }
    }

    fn unschedule_txq(&mut self, book: &mut Book, _now: Nanos, txq: TxqKey, ac: Ac) {
        self.acs[ac.index()].remove(txq);
        book.state_mut(txq).listed = false;
    }

    /// There was no such API: always allowed.
    fn may_transmit(
        &mut self,
        _book: &mut Book,
        _txq: TxqKey,
        _ac: Ac,
        _aql_eligible: &mut dyn FnMut(TxqKey) -> bool,
        _aql_pending_us: &dyn Fn(LinkId) -> u32,
        _ac_over_limit: &dyn Fn(usize) -> bool,
    ) -> bool {
        true
    }

    /// `ath_tx_count_airtime` / `ath_rx_count_airtime`: `deficit −= charged`; if that
    /// leaves it `<= 0`, list the TXQ on the old list even if empty. Vif airtime is not
    /// charged.
    fn charge(&mut self, book: &mut Book, _now: Nanos, txq: TxqKey, ac: Ac, charged_us: u32) {
        let Some(sta) = txq.sta else { return };
        if !book.charges_airtime() {
            return;
        }
        let air = &mut book.stas[sta.index()][ac.index()];
        air.deficit -= charged_us as i64;
        if air.deficit <= 0 {
            self.queue(book, txq, ac);
        }
    }

    fn active_txq_count(&self, ac: Ac) -> usize {
        let a = &self.acs[ac.index()];
        a.new_list.len() + a.old_list.len()
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{no_pending, run, AC};
    use super::super::{Scheduler, SchedulerKind, SchedulerParams};
    use crate::mac80211::txq::{LinkId, Tid, TxqKey};
    use crate::Nanos;

    #[test]
    fn ath9k_new_list_quantum_and_stay_at_head() {
        let mut s = Scheduler::new(SchedulerParams::mainline(SchedulerKind::Ath9kDrr), 3);
        let (a, b, c) = (
            TxqKey::station(LinkId(0), Tid(0)),
            TxqKey::station(LinkId(1), Tid(0)),
            TxqKey::station(LinkId(2), Tid(0)),
        );
        let t0 = Nanos::ZERO;
        s.schedule_txq(t0, a, AC);
        s.schedule_txq(t0, b, AC);
        assert_eq!(s.deficit_us(LinkId(0), AC), 300);
        // The head stays at the head while its deficit is positive.
        for _ in 0..2 {
            assert_eq!(s.next_txq(t0, AC, &mut |_| true, &no_pending), Some(a));
            s.return_txq(t0, a, AC, true, &no_pending);
            s.register_airtime(t0, a, AC, 100, 0);
        }
        s.register_airtime(t0, a, AC, 300, 0); // a: −200
                                               // a gets +300 and goes to the old list; b (new list) is next.
        assert_eq!(s.next_txq(t0, AC, &mut |_| true, &no_pending), Some(b));
        assert_eq!(s.deficit_us(LinkId(0), AC), 100);
        s.register_airtime(t0, b, AC, 500, 300); // TX and RX charged: b: −500
                                                 // A newly backlogged station with a positive deficit joins the new list and goes
                                                 // before the old list.
        s.schedule_txq(t0, c, AC);
        assert_eq!(s.next_txq(t0, AC, &mut |_| true, &no_pending), Some(c));
        s.return_txq(t0, c, AC, false, &no_pending);
        // c, empty at the head of the new list, moves to the old tail (the old list is
        // not empty); then a (deficit 100) is served from the old list.
        assert_eq!(s.next_txq(t0, AC, &mut |_| true, &no_pending), Some(a));
        assert!(s.is_scheduled(c));
        s.return_txq(t0, a, AC, false, &no_pending);
        // a empty at the old head: dropped; b (−200 → 100) rotates; c empty: dropped.
        assert_eq!(s.next_txq(t0, AC, &mut |_| true, &no_pending), Some(b));
        assert!(!s.is_scheduled(a));
        assert!(!s.is_scheduled(c));
        assert_eq!(s.deficit_us(LinkId(1), AC), 100);
    }

    #[test]
    fn ath9k_charge_relists_an_empty_indebted_txq() {
        let mut s = Scheduler::new(SchedulerParams::mainline(SchedulerKind::Ath9kDrr), 2);
        let (a, b) = (
            TxqKey::station(LinkId(0), Tid(0)),
            TxqKey::station(LinkId(1), Tid(0)),
        );
        let t0 = Nanos::ZERO;
        s.schedule_txq(t0, a, AC);
        s.schedule_txq(t0, b, AC);
        assert_eq!(s.next_txq(t0, AC, &mut |_| true, &no_pending), Some(a));
        s.return_txq(t0, a, AC, false, &no_pending);
        // a empties and is dropped when it reaches the head again.
        assert_eq!(s.next_txq(t0, AC, &mut |_| true, &no_pending), Some(b));
        assert!(!s.is_scheduled(a));
        // A late completion puts a in debt: it is re-listed (old list) although empty...
        s.register_airtime(t0, a, AC, 1000, 0);
        assert!(s.is_scheduled(a));
        // ...and is topped up as it reaches the head, until it leaves with deficit > 0.
        for _ in 0..10 {
            assert_eq!(s.next_txq(t0, AC, &mut |_| true, &no_pending), Some(b));
            s.return_txq(t0, b, AC, true, &no_pending);
            s.register_airtime(t0, b, AC, 300, 0);
        }
        assert!(!s.is_scheduled(a));
        assert!(s.deficit_us(LinkId(0), AC) > 0);
    }

    #[test]
    fn ath9k_without_airtime_flags_is_round_robin() {
        let mut p = SchedulerParams::mainline(SchedulerKind::Ath9kDrr);
        p.airtime_flags = 0;
        let r = run(p, &[200, 2000], &[], Nanos::from_secs(5));
        assert!(
            r.services[0].abs_diff(r.services[1]) <= 2,
            "{:?}",
            r.services
        );
    }
}
