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
//!   each packet out wakes one stalled writer of its node, the one stalled longest
//!   (`FlowCtx::wait_for_room`).
//!
//! Every packet of the depth is always in one of three places:
//! `inside + owed + pending = depth` (pending: writes scheduled, not yet made).

use super::{node_host, Arrival, FlowCtx, Host, Message, Source, SourceEvent};
use std::cell::Cell;
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
    /// Mark packet `p` of this flow: its TID, and a well-spread flow hash from its
    /// token (fq classifies on the hash's top bits).
    fn mark(&self, p: &mut Packet) {
        p.tid = self.tid;
        p.flow = (txop_core::rng::mix64(p.token) >> 32) as u32;
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

/// A saturated flow as it runs: its configuration and its writer.
pub(crate) struct SaturatedSource {
    cfg: Saturated,
    writer: Cell<SaturatedWriter>,
}

impl SaturatedSource {
    /// The flow before the run: its `depth` first writes are scheduled at the start.
    pub(crate) fn new(cfg: Saturated) -> SaturatedSource {
        SaturatedSource {
            writer: Cell::new(SaturatedWriter::new(cfg.depth)),
            cfg,
        }
    }

    /// Act on the writer (no borrow of it outlives this call).
    fn writer<R>(&self, act: impl FnOnce(&mut SaturatedWriter) -> R) -> R {
        let mut w = self.writer.get();
        let r = act(&mut w);
        self.writer.set(w);
        r
    }

    /// Write the next packet at once: the writer schedules it.
    fn write_now(&self, ctx: &mut FlowCtx<'_>) {
        ctx.schedule(ctx.now(), SourceEvent::Offer);
    }

    /// One of its packets left the network other than by a refusal (delivered, or
    /// lost later on): it writes the next one now.
    fn left(&self, ctx: &mut FlowCtx<'_>) {
        self.writer(SaturatedWriter::left);
        self.write_now(ctx);
    }
}

impl Source for SaturatedSource {
    fn src(&self) -> Host {
        node_host(self.cfg.src)
    }

    fn dst(&self) -> Host {
        node_host(self.cfg.dst)
    }

    fn kind(&self) -> &'static str {
        "saturated"
    }

    fn start(&self, ctx: &mut FlowCtx<'_>) {
        for _ in 0..self.cfg.depth {
            ctx.schedule(Nanos::ZERO, SourceEvent::Offer);
        }
    }

    /// A scheduled write: its next packet, unless a write was refused at this instant
    /// already (then the packet is owed). Whatever the network refuses meanwhile is
    /// owed; if it refused nothing, the flow writes one more owed packet at once.
    fn due(&self, ctx: &mut FlowCtx<'_>, event: SourceEvent) {
        debug_assert!(matches!(event, SourceEvent::Offer));
        let at = ctx.now();
        let (from, to) = (self.src(), self.dst());
        let (write, stalled) = self.writer(|w| (w.may_write(at), w.stalled()));
        if !write {
            // Refused at this instant already: owed.
            if stalled {
                ctx.wait_for_room(self.cfg.src);
            }
            return;
        }
        ctx.stats().offered += 1;
        let mut p = ctx.packet(from, to, self.cfg.len_bytes, Message::Data);
        self.cfg.mark(&mut p);
        self.writer(SaturatedWriter::wrote);
        let refused = ctx.write(from, p);
        if self.writer(|w| w.write_on(at, refused)) {
            self.write_now(ctx);
        }
    }

    fn arrived(&self, ctx: &mut FlowCtx<'_>, arrival: Arrival<'_>) {
        let at = ctx.now();
        ctx.stats()
            .delivered(at, arrival.sent_at, arrival.packet.len_bytes);
        self.left(ctx);
    }

    /// A packet refused while a packet was being written is owed; otherwise it left.
    fn lost(&self, ctx: &mut FlowCtx<'_>, refused: bool) {
        if !refused {
            self.left(ctx);
            return;
        }
        if self.writer(|w| {
            w.refused();
            w.stalled()
        }) {
            ctx.wait_for_room(self.cfg.src);
        }
    }

    /// Its node got a packet out: a stalled writer writes one owed packet.
    fn room(&self, ctx: &mut FlowCtx<'_>) {
        if self.writer(SaturatedWriter::wake) {
            self.write_now(ctx);
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
