//! A deterministic event queue: earliest time first, ties in insertion order.
//!
//! The tie-break key is a sequence number assigned at insertion, never a hash or an
//! address, so the same inputs always pop in the same order.
//!
//! It is a radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, "Faster algorithms for the
//! shortest path problem", 1990) over the event time: the simulator never schedules
//! before the time it last popped, so an entry can wait in the bucket of the highest
//! bit where its time differs from that last time, and only the lowest non-empty bucket
//! is ever looked into. An entry moves down a few buckets in its life instead of being
//! sifted through a binary heap on every pop; stale timers that the loop ignores when
//! they come (TCP re-arms its retransmission timer on every ACK) cost almost nothing.
//! Entries of equal time pop in insertion order. An entry scheduled in the past (never
//! done by the simulator, allowed for generality) goes to a small binary heap that is
//! served first, so the order is exactly that of a binary heap on (time, sequence).

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};
use txop_core::Nanos;

struct Entry<E> {
    at: u64,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.at == other.at && self.seq == other.seq
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    /// Reversed so that `BinaryHeap` (a max-heap) pops the earliest, then first-inserted.
    fn cmp(&self, other: &Self) -> Ordering {
        other.at.cmp(&self.at).then(other.seq.cmp(&self.seq))
    }
}

/// Bucket of an entry at `at` (> `last`): the highest bit where the two differ.
fn bucket(at: u64, last: u64) -> usize {
    (63 - (at ^ last).leading_zeros()) as usize
}

/// Events of type `E` ordered by time, then by insertion.
pub struct EventQueue<E> {
    /// The time of the last event popped: every entry in the buckets is later (so
    /// looking at the earliest time, [`EventQueue::peek_time`], moves nothing).
    last: u64,
    /// Entries at `last`, in insertion order (sequence ascending).
    due: VecDeque<(u64, E)>,
    /// Bucket `b`: entries later than `last` whose time first differs from it at bit
    /// `b`. Any entry of a lower bucket is earlier than every entry of a higher one.
    buckets: [Vec<Entry<E>>; 64],
    /// Earliest time in each bucket (meaningful while it is not empty).
    bucket_min: [u64; 64],
    /// Bit `b` set iff bucket `b` is not empty.
    nonempty: u64,
    /// Entries scheduled before `last` (earlier than everything else).
    past: BinaryHeap<Entry<E>>,
    len: usize,
    next_seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            last: 0,
            due: VecDeque::new(),
            buckets: std::array::from_fn(|_| Vec::new()),
            bucket_min: [u64::MAX; 64],
            nonempty: 0,
            past: BinaryHeap::new(),
            len: 0,
            next_seq: 0,
        }
    }
}

impl<E> EventQueue<E> {
    pub fn push(&mut self, at: Nanos, event: E) {
        let seq = self.reserve_seq();
        self.insert(at.as_ns(), seq, event);
    }

    /// Take the sequence number the next push would get, without pushing: a caller that
    /// defers an entry (see [`EventQueue::push_with_seq`]) keeps the place it would have
    /// had.
    pub fn reserve_seq(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }

    /// Push an entry with a sequence number taken earlier from
    /// [`EventQueue::reserve_seq`]: it pops exactly where a push made when the number was
    /// taken would have (ties at `at` by sequence). Each number must be used at most
    /// once.
    pub fn push_with_seq(&mut self, at: Nanos, seq: u64, event: E) {
        debug_assert!(seq < self.next_seq, "sequence number not reserved");
        self.insert(at.as_ns(), seq, event);
    }

    fn insert(&mut self, at: u64, seq: u64, event: E) {
        self.len += 1;
        match at.cmp(&self.last) {
            // Among the entries already due, by sequence (a fresh number goes last).
            Ordering::Equal => {
                if self.due.back().is_none_or(|(s, _)| *s < seq) {
                    self.due.push_back((seq, event));
                } else {
                    let i = self.due.partition_point(|(s, _)| *s < seq);
                    self.due.insert(i, (seq, event));
                }
            }
            Ordering::Greater => self.file_in_bucket(Entry { at, seq, event }),
            Ordering::Less => self.past.push(Entry { at, seq, event }),
        }
    }

    /// File an entry later than `last`.
    fn file_in_bucket(&mut self, e: Entry<E>) {
        let b = bucket(e.at, self.last);
        let m = &mut self.bucket_min[b];
        if self.nonempty & (1 << b) == 0 || e.at < *m {
            *m = e.at;
        }
        self.buckets[b].push(e);
        self.nonempty |= 1 << b;
    }

    /// Make `due` hold the earliest entries of the buckets if it is empty: the lowest
    /// non-empty bucket holds them; its earliest time becomes `last` and its entries go
    /// to `due` or to lower buckets around it.
    fn settle(&mut self) {
        if !self.due.is_empty() || self.nonempty == 0 {
            return;
        }
        let b = self.nonempty.trailing_zeros() as usize;
        let mut entries = std::mem::take(&mut self.buckets[b]);
        self.nonempty &= !(1 << b);
        let last = self.bucket_min[b];
        self.last = last;
        for e in entries.drain(..) {
            if e.at == last {
                self.due.push_back((e.seq, e.event));
            } else {
                self.file_in_bucket(e);
            }
        }
        // Put the (empty) vector back to keep its capacity.
        self.buckets[b] = entries;
        if self.due.len() > 1 {
            self.due
                .make_contiguous()
                .sort_unstable_by_key(|(seq, _)| *seq);
        }
    }

    /// Sequence number of the earliest event, which must be at `now`, the time the
    /// caller is about to handle (so nothing earlier is pushed after this call); `None`
    /// if the earliest event is not at `now`.
    pub fn peek_seq_at(&mut self, now: Nanos) -> Option<u64> {
        if let Some(e) = self.past.peek() {
            return (e.at == now.as_ns()).then_some(e.seq);
        }
        if self.due.is_empty() && self.peek_time() != Some(now) {
            return None;
        }
        self.settle();
        self.due
            .front()
            .map(|(seq, _)| *seq)
            .filter(|_| self.last == now.as_ns())
    }

    /// Time of the earliest event.
    pub fn peek_time(&self) -> Option<Nanos> {
        if let Some(e) = self.past.peek() {
            Some(Nanos(e.at))
        } else if !self.due.is_empty() {
            Some(Nanos(self.last))
        } else if self.nonempty != 0 {
            Some(Nanos(
                self.bucket_min[self.nonempty.trailing_zeros() as usize],
            ))
        } else {
            None
        }
    }

    pub fn pop(&mut self) -> Option<(Nanos, E)> {
        self.pop_with_seq().map(|(at, _, e)| (at, e))
    }

    /// The earliest event with its sequence number.
    pub fn pop_with_seq(&mut self) -> Option<(Nanos, u64, E)> {
        let (at, seq, event) = if let Some(e) = self.past.pop() {
            (Nanos(e.at), e.seq, e.event)
        } else {
            self.settle();
            let (seq, event) = self.due.pop_front()?;
            (Nanos(self.last), seq, event)
        };
        self.len -= 1;
        Some((at, seq, event))
    }

    /// Sequence numbers taken plus entries queued: it grows with every number taken
    /// and every entry pushed (a pop lowers it). Between pops, while it stays the
    /// same, so does [`EventQueue::peek_time`], and no one took a number for an entry
    /// kept elsewhere (a packet on a wired link). The event loop uses it to skip
    /// looking again at sources that did not change.
    pub fn pushes(&self) -> u64 {
        self.next_seq + self.len as u64
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use txop_core::rng::{RngStream, StreamKind};

    #[test]
    fn pops_by_time_then_insertion_order() {
        let mut q = EventQueue::default();
        q.push(Nanos(5), "b");
        q.push(Nanos(1), "a");
        q.push(Nanos(5), "c");
        q.push(Nanos(5), "d");
        q.push(Nanos(3), "x");
        let order: Vec<&str> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!["a", "x", "b", "c", "d"]);
    }

    /// Against a plain binary heap on (time, sequence), with pushes interleaved with
    /// pops: at the current time, in the near and far future, and (rarely) in the past.
    #[test]
    fn same_order_as_a_binary_heap() {
        let mut rng = RngStream::new(7, StreamKind::Misc, 0);
        let mut q = EventQueue::default();
        let mut reference = BinaryHeap::new();
        let mut seq = 0u64;
        let mut now = 0u64;
        let mut deferred = Vec::new();
        for step in 0..200_000u64 {
            if rng.bernoulli(0.52) {
                let r = rng.next_u64();
                let at = match r % 16 {
                    0..=3 => now,
                    4..=9 => now + (r >> 8) % 2_000,
                    10..=14 => now + (r >> 8) % 1_000_000_000,
                    _ => now.saturating_sub((r >> 8) % 5_000),
                };
                if r.is_multiple_of(7) {
                    // A number reserved now, the entry pushed later (not before the
                    // pops reach its time: then at `now` or later).
                    deferred.push((at.max(now), q.reserve_seq(), step));
                } else {
                    q.push(Nanos(at), step);
                    reference.push(Entry {
                        at,
                        seq,
                        event: step,
                    });
                }
                seq += 1;
            } else if !deferred.is_empty() && rng.bernoulli(0.3) {
                let (at, s, ev) = deferred.swap_remove(0);
                let at = at.max(now);
                q.push_with_seq(Nanos(at), s, ev);
                reference.push(Entry {
                    at,
                    seq: s,
                    event: ev,
                });
            } else {
                let top = reference.peek().map(|e| (Nanos(e.at), e.seq));
                if let Some((t, s)) = top {
                    assert_eq!(q.peek_seq_at(t), Some(s));
                    assert_eq!(q.peek_seq_at(Nanos(t.as_ns() + 1)), None);
                }
                let expect = reference.pop().map(|e| (Nanos(e.at), e.event));
                assert_eq!(q.peek_time(), expect.map(|(t, _)| t));
                assert_eq!(q.pop(), expect);
                if let Some((t, _)) = expect {
                    now = now.max(t.as_ns());
                }
            }
            assert_eq!(q.len(), reference.len());
        }
    }

    /// The push count grows with every number taken and every push, and looking
    /// does not move it.
    #[test]
    fn pushes_grow_with_every_push() {
        let mut q = EventQueue::default();
        let g0 = q.pushes();
        assert_eq!(q.peek_time(), None);
        assert_eq!(q.pushes(), g0, "looking changes nothing");
        q.push(Nanos(5), 'a');
        let g1 = q.pushes();
        assert!(g1 > g0);
        let s = q.reserve_seq();
        let g2 = q.pushes();
        assert!(g2 > g1);
        q.push_with_seq(Nanos(3), s, 'b');
        let g3 = q.pushes();
        assert!(g3 > g2);
        assert_eq!(q.peek_seq_at(Nanos(3)), Some(s));
        assert_eq!(q.pushes(), g3, "peeking changes nothing");
        assert_eq!(q.pop(), Some((Nanos(3), 'b')));
    }
}
