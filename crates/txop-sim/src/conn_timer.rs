//! A TCP connection's timer as the event loop schedules it, without a queue entry per
//! re-arm.
//!
//! A connection asks for its timer at the earliest of its retransmission, pacing and
//! delayed-ACK deadlines, and that changes on almost every ACK. The loop's rule is: every
//! change of the deadline to `t` at `now` schedules an entry at `max(t, now)`, and an
//! entry fires the timer when it pops if the deadline is then exactly its time (other
//! entries are stale and do nothing). Scheduling every change left hundreds of stale
//! entries per connection in the event queue (one per ACK within a retransmission
//! timeout), a third of all pops.
//!
//! This keeps the same firing times *and* the same places among simultaneous events,
//! with at most a few entries per connection in the queue:
//! - Every change still takes the sequence number its entry would have had
//!   ([`EventQueue::reserve_seq`]), and the first number taken for each entry time is
//!   remembered (`first_seq`). While the deadline is `t`, the only entry that can fire
//!   is the earliest one at `t`: the one with `first_seq[t]` (a later one at `t` can only
//!   matter once that one has popped, i.e. once time has reached `t`; see below).
//! - The queue holds, per connection, an entry no later than that one (`armed`): the
//!   deadline's own entry, pushed with its remembered number
//!   ([`EventQueue::push_with_seq`]), or an earlier one. When a stale entry pops, the
//!   current deadline's entry is pushed if it is not queued yet.
//!
//! So the timer fires at exactly the entry (time and sequence) where the per-change
//! scheme fired it. The one case this cannot reproduce: the deadline changing to the
//! current instant after the first entry for that instant already popped stale, when
//! another entry for it was scheduled in between (only the first number per time is
//! kept). The TCP model never sets a deadline at or before the current instant (its
//! retransmission, delayed-ACK and pacing deadlines are all in the future when set), so
//! it does not arise; a debug assertion watches for it.

use crate::events::EventQueue;
use std::collections::HashMap;
use txop_core::Nanos;

/// The first sequence number taken for each entry time, by time in ns.
type FirstSeq = HashMap<u64, u64, foldhash::fast::FixedState>;

/// One connection's timer (see the module documentation).
#[derive(Debug, Default)]
pub(crate) struct ConnTimer {
    /// The deadline asked for last; the timer fires at an entry for exactly this time.
    deadline: Option<Nanos>,
    /// Key (time, sequence) of this connection's earliest entry in the queue, when
    /// known (`None`: none queued, or not known after it popped).
    armed: Option<(Nanos, u64)>,
    first_seq: FirstSeq,
    /// Size of `first_seq` at which its past times are dropped.
    prune_at: usize,
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
        let seq = queue.reserve_seq();
        let first = *self.first_seq.entry(t.max(now).as_ns()).or_insert(seq);
        self.deadline = Some(t);
        if self.first_seq.len() >= self.prune_at {
            self.first_seq.retain(|&at, _| at >= now.as_ns());
            self.prune_at = (2 * self.first_seq.len()).max(64);
        }
        if t >= now {
            self.arm_at(t, first, queue, event);
        }
    }

    /// One of this timer's entries popped (time `at`, sequence `seq`): true if the
    /// timer fires (the deadline is `at`; it is cleared), else the entry was stale and
    /// the current deadline's entry is queued if it is not yet.
    pub fn on_entry<E>(
        &mut self,
        at: Nanos,
        seq: u64,
        queue: &mut EventQueue<E>,
        event: E,
    ) -> bool {
        if self.armed == Some((at, seq)) {
            self.armed = None;
        }
        if self.deadline == Some(at) {
            self.deadline = None;
            return true;
        }
        self.arm(queue, event);
        false
    }

    /// Make sure the queue holds an entry no later than the one that can fire the
    /// current deadline (if any can: none can once every entry for it has popped).
    fn arm<E>(&mut self, queue: &mut EventQueue<E>, event: E) {
        let Some(t) = self.deadline else {
            return;
        };
        let Some(&seq) = self.first_seq.get(&t.as_ns()) else {
            return;
        };
        self.arm_at(t, seq, queue, event);
    }

    /// [`ConnTimer::arm`] for the deadline `t` whose first entry has number `seq`.
    fn arm_at<E>(&mut self, t: Nanos, seq: u64, queue: &mut EventQueue<E>, event: E) {
        let key = (t, seq);
        if queue.last_popped().is_some_and(|p| key <= p) {
            // That entry popped already (stale then): see the module docs.
            debug_assert!(false, "TCP timer re-armed at an instant already passed");
            return;
        }
        if self.armed.is_none_or(|a| key < a) {
            queue.push_with_seq(t, seq, event);
            self.armed = Some(key);
        }
    }
}
