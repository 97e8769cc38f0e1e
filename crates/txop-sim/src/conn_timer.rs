//! A TCP connection's timer as the event loop schedules it, without a queue entry per
//! re-arm.
//!
//! A connection asks for its timer at the earliest of its retransmission, pacing and
//! delayed-ACK deadlines, and that changes on almost every ACK. Pushing an entry for
//! every change would leave hundreds of stale entries per connection in the event queue
//! (one per ACK within a retransmission timeout), a third of all pops.
//!
//! Instead the queue holds, per connection, one entry no later than the deadline
//! (`armed`): a change to a later deadline pushes nothing, a change to an earlier one
//! pushes an entry at it. An entry fires the timer when it pops at exactly the deadline;
//! otherwise it was stale, and the current deadline's entry is pushed if none is queued
//! no later than it. So the timer fires at exactly its deadline, and among events due at
//! the same instant it goes where its entry was pushed (the event queue orders ties by
//! push). Stale entries are bounded: at most one per change to an earlier deadline, and
//! each is popped by its time.

use txop_core::network::EventQueue;
use txop_core::Nanos;

/// One connection's timer (see the module documentation).
#[derive(Debug, Default)]
pub(crate) struct ConnTimer {
    /// The deadline asked for last; the timer fires at an entry for exactly this time.
    deadline: Option<Nanos>,
    /// Time of this connection's earliest entry in the queue, when known (`None`: none
    /// queued, or not known after it popped).
    armed: Option<Nanos>,
}

impl ConnTimer {
    /// The deadline asked for last.
    pub fn deadline(&self) -> Option<Nanos> {
        self.deadline
    }

    /// The connection asks for its timer at `t` at `now` (only when `t` differs from
    /// [`ConnTimer::deadline`]). `event` is what the queue entry carries.
    pub fn set<E>(&mut self, now: Nanos, t: Nanos, queue: &mut EventQueue<E>, event: E) {
        debug_assert_ne!(self.deadline, Some(t));
        debug_assert!(t > now, "TCP timer set at or before the current instant");
        self.deadline = Some(t);
        self.arm(queue, event);
    }

    /// One of this timer's entries popped at `at`: true if the timer fires (the deadline
    /// is `at`; it is cleared), else the entry was stale and the current deadline's entry
    /// is queued if it is not yet.
    pub fn on_entry<E>(&mut self, at: Nanos, queue: &mut EventQueue<E>, event: E) -> bool {
        if self.armed == Some(at) {
            self.armed = None;
        }
        if self.deadline == Some(at) {
            self.deadline = None;
            return true;
        }
        self.arm(queue, event);
        false
    }

    /// Make sure the queue holds an entry no later than the current deadline (if any).
    fn arm<E>(&mut self, queue: &mut EventQueue<E>, event: E) {
        let Some(t) = self.deadline else {
            return;
        };
        if self.armed.is_none_or(|a| t < a) {
            queue.push(t, event);
            self.armed = Some(t);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pop every entry due by `until`, feeding the timer; the times it fired at.
    fn run(timer: &mut ConnTimer, q: &mut EventQueue<u8>, until: u64) -> Vec<u64> {
        let mut fired = Vec::new();
        while q.peek_time().is_some_and(|t| t.as_ns() <= until) {
            let (at, ev) = q.pop().expect("peeked");
            if ev == 1 && timer.on_entry(at, q, 1) {
                fired.push(at.as_ns());
            }
        }
        fired
    }

    #[test]
    fn fires_once_at_the_last_deadline_asked_for() {
        let mut q = EventQueue::default();
        let mut t = ConnTimer::default();
        // Later deadlines push nothing; an earlier one does.
        t.set(Nanos(0), Nanos(100), &mut q, 1);
        t.set(Nanos(10), Nanos(200), &mut q, 1);
        t.set(Nanos(20), Nanos(150), &mut q, 1);
        assert_eq!(q.len(), 1);
        t.set(Nanos(30), Nanos(50), &mut q, 1);
        assert_eq!(q.len(), 2);
        t.set(Nanos(40), Nanos(120), &mut q, 1);
        // The entry at 50 is stale and re-arms at 120 (none queued no later than it).
        assert_eq!(run(&mut t, &mut q, 1000), vec![120]);
        assert_eq!(t.deadline(), None);
        // No entry left behind that could fire again.
        assert!(q.is_empty());
    }

    #[test]
    fn a_deadline_asked_again_after_firing_fires_again() {
        let mut q = EventQueue::default();
        let mut t = ConnTimer::default();
        t.set(Nanos(0), Nanos(100), &mut q, 1);
        assert_eq!(run(&mut t, &mut q, 100), vec![100]);
        t.set(Nanos(100), Nanos(300), &mut q, 1);
        t.set(Nanos(110), Nanos(250), &mut q, 1);
        assert_eq!(run(&mut t, &mut q, 1000), vec![250]);
    }

    #[test]
    fn stale_entries_stay_bounded() {
        // A deadline that moves later on every "ACK" (the common case) keeps one entry.
        let mut q = EventQueue::default();
        let mut t = ConnTimer::default();
        for i in 0..1000u64 {
            t.set(Nanos(i * 10), Nanos(i * 10 + 500), &mut q, 1);
            run(&mut t, &mut q, i * 10);
            assert!(q.len() <= 2, "queue grew to {} at step {i}", q.len());
        }
    }
}
