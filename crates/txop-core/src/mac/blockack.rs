//! Block-ack bookkeeping: the originator's per-TID transmit state (sequence numbers,
//! frames awaiting retransmission, the window) and the recipient's reorder buffer
//! (802.11-2016 10.24; mac80211 `agg-tx.c` / `agg-rx.c`).
//!
//! Sequence numbers are kept as monotonic `u64`s: the model never needs the 12-bit wrap.

use crate::budget::{CellStamps, TryStamps};
use crate::packet::Packet;
use crate::Nanos;
use std::collections::VecDeque;

/// An MPDU: a packet with its sequence number and retry state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Mpdu {
    /// The MSDU it carries.
    pub(crate) packet: Packet,
    /// Its sequence number on its (link, TID), monotonic (no 12-bit wrap).
    pub(crate) seq: u64,
    /// Transmission attempts so far.
    pub(crate) attempts: u8,
    /// When the MAC first took it from the queue.
    pub(crate) dequeued_at: Nanos,
    /// Its delay budget's stamps of medium access and first try.
    pub(crate) tries: TryStamps,
}

/// Originator state of one (link, TID): the frames the driver (or firmware) holds,
/// those to retry, and the block-ack window.
#[derive(Clone, Debug, Default)]
pub(crate) struct TxTid {
    /// Packets held by the driver/firmware for this TID, oldest first (not yet MPDUs).
    pub(crate) fifo: VecDeque<Packet>,
    /// MPDUs sent but not acknowledged, in sequence order; they go out again first.
    pub(crate) retry: VecDeque<Mpdu>,
    /// The sequence number the next new MPDU gets.
    pub(crate) next_seq: u64,
    /// Oldest sequence number not yet acknowledged or given up.
    win_start: u64,
    /// Completion flags of `win_start..next_seq`.
    done: VecDeque<bool>,
}

impl TxTid {
    /// Packets held here (new and awaiting retransmission).
    pub(crate) fn len(&self) -> usize {
        self.fifo.len() + self.retry.len()
    }

    /// Nothing is held here: no new packet and nothing to retransmit.
    pub(crate) fn is_empty(&self) -> bool {
        self.fifo.is_empty() && self.retry.is_empty()
    }

    /// May a new MPDU be sent without leaving the window of `window` frames?
    pub(crate) fn window_open(&self, window: u16) -> bool {
        self.next_seq < self.win_start + window as u64
    }

    /// Give `packet` the next sequence number.
    fn assign(&mut self, packet: Packet, now: Nanos) -> Mpdu {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.done.push_back(false);
        Mpdu {
            packet,
            seq,
            attempts: 0,
            dequeued_at: now,
            tries: TryStamps::UNTRIED,
        }
    }

    /// Take the next held packet (if any) as an MPDU with a fresh sequence number and
    /// append it to `out` (a builder's MPDUs: no `Option` to copy the MPDU through).
    #[inline]
    pub(crate) fn push_new(&mut self, now: Nanos, out: &mut Vec<Mpdu>) {
        if let Some(packet) = self.fifo.pop_front() {
            let mpdu = self.assign(packet, now);
            out.push(mpdu);
        }
    }

    /// Put a failed MPDU back for retransmission, keeping sequence order.
    pub(crate) fn requeue(&mut self, mpdu: Mpdu) {
        // Failed MPDUs of a PPDU come back in sequence order, after any older ones
        // still waiting: appending is where the search below would insert them.
        if self.retry.back().is_none_or(|m| m.seq < mpdu.seq) {
            self.retry.push_back(mpdu);
            return;
        }
        let pos = self.retry.partition_point(|m| m.seq < mpdu.seq);
        self.retry.insert(pos, mpdu);
    }

    /// `seq` was acknowledged or given up: it no longer holds the window back.
    pub(crate) fn complete(&mut self, seq: u64) {
        if seq < self.win_start {
            return;
        }
        let idx = (seq - self.win_start) as usize;
        if let Some(d) = self.done.get_mut(idx) {
            *d = true;
        }
        while self.done.front() == Some(&true) {
            self.done.pop_front();
            self.win_start += 1;
        }
    }
}

/// An MSDU its receiver decoded, with its delay budget's stamps so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Received {
    pub(crate) packet: Packet,
    pub(crate) stamps: CellStamps,
}

/// A sequence number's state in the reorder buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    Missing,
    Held(Received),
    /// The originator gave this sequence number up (retry limit): skip it.
    GivenUp,
}

/// Recipient reorder buffer of one (link, TID): releases MSDUs in sequence order.
///
/// In 802.11 the originator moves the recipient's window with a BlockAckReq after
/// giving up on a frame; here the originator tells the recipient directly which
/// sequence number will never arrive ([`RxReorder::give_up`]), so the recipient skips
/// exactly that hole (the BlockAckReq's airtime is not modelled).
#[derive(Clone, Debug, Default)]
pub(crate) struct RxReorder {
    /// Next sequence number to release.
    head: u64,
    /// `buf[i]` is the state of sequence number `head + i`.
    buf: VecDeque<Slot>,
}

impl RxReorder {
    /// Number of packets held waiting for a gap to fill.
    pub(crate) fn held(&self) -> usize {
        self.buf
            .iter()
            .filter(|s| matches!(s, Slot::Held(_)))
            .count()
    }

    fn set(&mut self, seq: u64, slot: Slot) {
        if seq < self.head {
            return; // already released or skipped
        }
        let idx = (seq - self.head) as usize;
        if self.buf.len() <= idx {
            self.buf.resize(idx + 1, Slot::Missing);
        }
        if matches!(self.buf[idx], Slot::Missing) {
            self.buf[idx] = slot;
        }
    }

    /// Whether `seq` already arrived: released, or held for reordering.
    pub(crate) fn has_received(&self, seq: u64) -> bool {
        seq < self.head
            || self
                .buf
                .get((seq - self.head) as usize)
                .is_some_and(|s| matches!(s, Slot::Held(_)))
    }

    /// An MPDU arrived: release it and whatever it unblocks, in order, to `out`.
    #[inline]
    pub(crate) fn receive(&mut self, seq: u64, packet: Received, out: &mut impl FnMut(Received)) {
        if seq == self.head && self.buf.is_empty() {
            // In order with nothing waiting (the usual case): straight through.
            out(packet);
            self.head += 1;
            return;
        }
        self.set(seq, Slot::Held(packet));
        self.release_run(out);
    }

    /// The originator dropped `seq`: release what waited behind it.
    pub(crate) fn give_up(&mut self, seq: u64, out: &mut impl FnMut(Received)) {
        self.set(seq, Slot::GivenUp);
        self.release_run(out);
    }

    fn release_run(&mut self, out: &mut impl FnMut(Received)) {
        while let Some(&front) = self.buf.front() {
            match front {
                Slot::Missing => break,
                Slot::Held(p) => out(p),
                Slot::GivenUp => {}
            }
            self.buf.pop_front();
            self.head += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::NodeId;

    fn pkt(id: u64) -> Received {
        Received {
            packet: Packet::new(id, NodeId(1), NodeId(0), 100),
            stamps: CellStamps::default(),
        }
    }

    #[test]
    fn reorder_releases_in_sequence() {
        let mut r = RxReorder::default();
        let mut got = Vec::new();
        r.receive(0, pkt(0), &mut |p| got.push(p.packet.id));
        r.receive(2, pkt(2), &mut |p| got.push(p.packet.id));
        r.receive(3, pkt(3), &mut |p| got.push(p.packet.id));
        assert_eq!(got, vec![0]);
        assert_eq!(r.held(), 2);
        r.receive(1, pkt(1), &mut |p| got.push(p.packet.id));
        assert_eq!(got, vec![0, 1, 2, 3]);
        assert_eq!(r.held(), 0);
    }

    #[test]
    fn give_up_skips_exactly_the_dropped_frame() {
        let mut r = RxReorder::default();
        let mut got = Vec::new();
        r.receive(1, pkt(1), &mut |p| got.push(p.packet.id));
        r.receive(3, pkt(3), &mut |p| got.push(p.packet.id));
        assert!(got.is_empty());
        // Seq 2 is dropped while seq 0 is still being retried: nothing moves yet.
        r.give_up(2, &mut |p| got.push(p.packet.id));
        assert!(got.is_empty());
        r.receive(0, pkt(0), &mut |p| got.push(p.packet.id));
        assert_eq!(got, vec![0, 1, 3]);
        assert_eq!(r.held(), 0);
        r.give_up(4, &mut |p| got.push(p.packet.id));
        r.receive(5, pkt(5), &mut |p| got.push(p.packet.id));
        assert_eq!(got, vec![0, 1, 3, 5]);
    }

    #[test]
    fn window_limits_new_frames_until_the_oldest_completes() {
        let mut t = TxTid::default();
        for i in 0..70 {
            t.fifo.push_back(pkt(i).packet);
        }
        let mut sent = Vec::new();
        for i in 0..64 {
            assert!(t.window_open(64));
            t.push_new(Nanos::ZERO, &mut sent);
            assert_eq!(sent.len(), i + 1);
        }
        // Seq 0 outstanding (in the air, say): seq 64 would leave the window.
        assert!(!t.window_open(64));
        // Acknowledging later frames does not move the window…
        for m in &sent[1..10] {
            t.complete(m.seq);
        }
        assert_eq!(t.win_start, 0);
        assert!(!t.window_open(64));
        // …acknowledging (or giving up) the oldest does, past everything completed.
        t.complete(0);
        assert_eq!(t.win_start, 10);
        assert!(t.window_open(64));
    }
}
