//! Saturated traffic: a source that always has frames of a given size queued.
//!
//! The source is a writer with `depth` packets of send buffer (like a UDP sender's
//! socket buffer, `sk_wmem`): it keeps up to `depth` of its packets inside the network
//! and writes the next one whenever one of them leaves, delivered or lost. With `depth`
//! above the aggregate size the transmitter never runs dry, which is what Bianchi's
//! saturation model assumes.
//!
//! A writer always has the next packet ready, but it does not answer a refusal within
//! zero time: a packet of a saturated flow that the network refuses while a saturated
//! flow's packet is being written (a tail drop of the written packet, a flow-queue
//! overload drop from the fattest flow, a full power-save buffer dropping its oldest:
//! whichever flow's write caused it) is *owed*, not rewritten at once. Writing it back
//! at the same instant would refuse it, or push another one out, again, for ever, once
//! the sources' depths exceed what the queues hold. A writer writes what it owes when
//! there is room again:
//!
//! - after a write in which the network refused nothing (the queue had room), it
//!   writes one more owed packet at the same instant: it writes until the network
//!   refuses a packet, its own or one the write pushes out; after a refusal, the
//!   writes it had scheduled for that instant are owed without being made;
//! - whenever one of its packets leaves later (delivered, or lost other than by a
//!   refusal), it writes a replacement, and from there goes on as above;
//! - a writer with nothing inside and nothing about to be written (every packet
//!   refused) is *stalled*: it waits until its node gets a packet out (a delivery or
//!   a loss), as a sender blocked on a stopped queue is woken when the queue drains;
//!   each packet out wakes one stalled writer of its node, the one stalled longest.
//!
//! Every packet of the depth is always in one of three places:
//! `inside + owed + pending = depth` (pending: writes scheduled, not yet made).

use super::Host;
use crate::sim::{Event, Simulation};
use txop_core::{Nanos, NodeId, Packet};

/// One saturated flow over the air.
#[derive(Clone, Debug)]
pub struct Saturated {
    pub src: NodeId,
    pub dst: NodeId,
    pub len_bytes: u32,
    pub tid: u8,
    /// Packets kept inside the cell.
    pub depth: u32,
}

impl Saturated {
    /// A packet of this flow with the given id; `token` tells the simulator whose it is.
    pub fn packet(&self, id: u64, token: u64) -> Packet {
        let mut p = Packet::new(id, self.src, self.dst, self.len_bytes);
        p.tid = self.tid;
        // A well-spread flow hash (fq classifies on its top bits).
        p.flow = (txop_core::rng::mix64(token) >> 32) as u32;
        p.token = token;
        p
    }
}

/// Where a saturated source's packets are: the writer's state (see the module doc).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SaturatedWriter {
    /// Written and not yet delivered or lost.
    pub inside: u32,
    /// Refused and not yet written back.
    pub owed: u32,
    /// Writes scheduled (the caller holds an event for each).
    pub pending: u32,
    /// The instant of its last refused write: it writes no more at that instant.
    pub blocked_at: Option<Nanos>,
}

impl SaturatedWriter {
    /// A writer whose `depth` first writes are scheduled.
    pub fn new(depth: u32) -> SaturatedWriter {
        SaturatedWriter {
            inside: 0,
            owed: 0,
            pending: depth,
            blocked_at: None,
        }
    }

    /// A scheduled write is made: one more packet inside.
    pub fn wrote(&mut self) {
        debug_assert!(self.pending > 0, "a write that was not scheduled");
        self.pending = self.pending.saturating_sub(1);
        self.inside += 1;
    }

    /// One of its packets left the network other than by a refusal (delivered, or
    /// lost in the air or to an AQM later on). The writer writes a replacement now:
    /// the caller schedules it.
    pub fn left(&mut self) {
        self.inside = self.inside.saturating_sub(1);
        self.pending += 1;
    }

    /// One of its packets was refused while a packet was being written: owed.
    pub fn refused(&mut self) {
        self.inside = self.inside.saturating_sub(1);
        self.owed += 1;
    }

    /// A scheduled write at `now`: whether to make it. Not after a refused write at the
    /// same instant: then it is owed instead.
    pub fn may_write(&mut self, now: Nanos) -> bool {
        if self.blocked_at != Some(now) {
            return true;
        }
        self.pending = self.pending.saturating_sub(1);
        self.owed += 1;
        false
    }

    /// After a write at `now`: whether to write one more owed packet at once (the
    /// network refused nothing in that write, and it owes some). If so the caller
    /// schedules it.
    pub fn write_on(&mut self, now: Nanos, refused_in_write: bool) -> bool {
        if refused_in_write {
            self.blocked_at = Some(now);
        }
        if refused_in_write || self.owed == 0 {
            return false;
        }
        self.owed -= 1;
        self.pending += 1;
        true
    }

    /// Nothing inside and nothing scheduled, but owing: only a wake brings it back.
    pub fn stalled(&self) -> bool {
        self.inside == 0 && self.pending == 0 && self.owed > 0
    }

    /// Its node got a packet out: a stalled writer writes one owed packet (the caller
    /// schedules it). Whether it did.
    pub fn wake(&mut self) -> bool {
        if !self.stalled() {
            return false;
        }
        self.owed -= 1;
        self.pending += 1;
        true
    }

    /// All packets of the depth: `inside + owed + pending`.
    pub fn depth(&self) -> u32 {
        self.inside + self.owed + self.pending
    }
}

/// A saturated flow's packet being written ([`Simulation::write_saturated`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct WriteInProgress {
    /// The network refused a packet in this write (the written one, or one it pushed
    /// out, whoever's).
    refused: bool,
}

impl Simulation {
    /// Saturated flow `flow` makes a scheduled write: its next packet, unless a write
    /// was refused at this instant already (then the packet is owed).
    pub(crate) fn saturated_send(&mut self, at: Nanos, flow: usize) {
        let (from, to) = (self.flows[flow].src(), self.flows[flow].dst());
        if let Some(w) = self.writers[flow].as_mut() {
            if !w.may_write(at) {
                // Refused at this instant already: owed.
                if w.stalled() {
                    self.stalled.push(flow as u32);
                }
                return;
            }
        }
        self.flow_stats[flow].offered += 1;
        if let Some(p) = self.data_packet(at, flow, from, to) {
            self.write_saturated(at, flow, from, p);
        }
    }

    /// A saturated flow writes its packet `p`: whatever the network refuses meanwhile
    /// is owed ([`crate::traffic::saturated`]); if it refused nothing, the flow writes
    /// one more owed packet at once.
    fn write_saturated(&mut self, at: Nanos, flow: usize, from: Host, p: Packet) {
        if let Some(w) = self.writers[flow].as_mut() {
            w.wrote();
        }
        self.writing = Some(WriteInProgress { refused: false });
        self.send(at, from, p);
        self.drain_outputs();
        let refused = self.writing.take().is_some_and(|w| w.refused);
        if self.writers[flow]
            .as_mut()
            .is_some_and(|w| w.write_on(at, refused))
        {
            self.events.push(at, Event::Offer { flow: flow as u32 });
        }
    }

    /// A packet is being lost: whether that is a refusal (a saturated flow's packet is
    /// being written, [`Simulation::write_saturated`]), which the write then notes.
    pub(crate) fn refusal(&mut self) -> bool {
        let refusal = self.writing.is_some();
        if let Some(write) = self.writing.as_mut() {
            write.refused = true;
        }
        refusal
    }

    /// A packet of flow `flow` was refused while a saturated flow's packet was being
    /// written: if `flow` is saturated, the packet is owed.
    pub(crate) fn saturated_refused(&mut self, flow: usize) {
        let Some(w) = self.writers[flow].as_mut() else {
            return;
        };
        w.refused();
        if w.stalled() {
            self.stalled.push(flow as u32);
        }
    }

    /// A saturated flow's packet left the network (delivered, or lost other than by
    /// a refusal): its writer writes the next one now.
    pub(crate) fn saturated_left(&mut self, at: Nanos, flow: usize) {
        if let Some(w) = self.writers[flow].as_mut() {
            w.left();
            self.events.push(at, Event::Offer { flow: flow as u32 });
        }
    }

    /// Node `node` got a packet out: the first of its saturated flows' stalled writers
    /// (in the order they stalled) writes again. One packet out makes room for one:
    /// waking every stalled writer would have each write into a queue that has room
    /// for one of them.
    pub(crate) fn wake_stalled(&mut self, at: Nanos, node: NodeId) {
        if self.stalled.is_empty() {
            return;
        }
        let Some(i) = self
            .stalled
            .iter()
            .position(|&f| self.flows[f as usize].src().node() == node)
        else {
            return;
        };
        let flow = self.stalled.remove(i) as usize;
        if self.writers[flow].as_mut().is_some_and(|w| w.wake()) {
            self.events.push(at, Event::Offer { flow: flow as u32 });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The writes `w` makes at instant `now` into a queue holding `queue` of `limit`
    /// packets (a full queue head-drops one of the writer's own packets): the scheduled
    /// writes, then whatever each leads to. Returns how many the queue accepted.
    fn write_at_one_instant(
        now: Nanos,
        w: &mut SaturatedWriter,
        queue: &mut u32,
        limit: u32,
    ) -> u32 {
        let depth = w.depth();
        let (mut todo, mut writes, mut accepted) = (w.pending, 0, 0);
        while todo > 0 {
            todo -= 1;
            if !w.may_write(now) {
                continue;
            }
            w.wrote();
            writes += 1;
            let refused = if *queue < limit {
                *queue += 1;
                accepted += 1;
                false
            } else {
                w.refused();
                true
            };
            if w.write_on(now, refused) {
                todo += 1;
            }
            assert_eq!(w.depth(), depth);
            assert!(writes < 10_000, "the writes at one instant never end");
        }
        accepted
    }

    /// A queue that holds `limit` packets, fed by one writer of depth `depth` at one
    /// instant: writes go on until the queue refuses one, and the depth is kept.
    #[test]
    fn a_full_queue_ends_the_writes_at_one_instant() {
        let (depth, limit) = (128u32, 50u32);
        let mut w = SaturatedWriter::new(depth);
        let mut queue = 0u32;
        assert_eq!(
            write_at_one_instant(Nanos::ZERO, &mut w, &mut queue, limit),
            limit
        );
        assert_eq!(w.inside, limit);
        assert_eq!(w.owed, depth - limit);
        assert_eq!(w.pending, 0);
        assert!(!w.stalled());

        // A delivery later frees room: one replacement, then the owed ones until refused.
        queue -= 1;
        w.left();
        assert_eq!(write_at_one_instant(Nanos(1), &mut w, &mut queue, limit), 1);
        assert_eq!(queue, limit);
        assert_eq!(w.depth(), depth);
    }

    /// Every packet refused: the writer stalls, and a wake writes one owed packet.
    #[test]
    fn a_writer_with_nothing_inside_waits_for_a_wake() {
        let mut w = SaturatedWriter::new(2);
        w.wrote();
        w.wrote();
        w.refused();
        w.refused();
        assert!(w.stalled());
        assert!(!w.write_on(Nanos::ZERO, true));
        assert!(w.wake());
        assert_eq!((w.inside, w.owed, w.pending), (0, 1, 1));
        assert!(!w.stalled());
        assert!(!w.wake(), "one wake, one write");
        w.wrote();
        assert!(w.write_on(Nanos::ZERO, false), "accepted: it writes on");
        assert_eq!(w.depth(), 2);
    }
}
