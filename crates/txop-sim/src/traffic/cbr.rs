//! Constant-bit-rate UDP: open-loop packets at fixed intervals, whatever happens to
//! them (like `iperf -u -b RATE` or a UDP flood). Unlike a saturated source it does not
//! slow down when queues are full: excess is dropped by the queues, so each flow's
//! share of a shared FIFO follows its offered rate.

use super::{node_host, Arrival, FlowCtx, Host, Marking, Message, Source, SourceEvent};
use txop_core::{Nanos, NodeId};

/// One constant-rate flow.
#[derive(Clone, Debug)]
pub struct Cbr {
    pub src: NodeId,
    pub dst: NodeId,
    pub len_bytes: u32,
    pub tid: u8,
    pub dscp: u8,
    /// Offered rate of IP packets (bits per second).
    pub rate_bps: u64,
    pub start: Nanos,
    /// Flow hash (what fq classifies on).
    pub flow_hash: u32,
    /// A sparse latency probe (`traffic.probe_interval_ms`) rather than a load: the
    /// same packets, reported as kind `probe` so that a reader does not take it for
    /// bulk traffic.
    pub probe: bool,
}

impl Cbr {
    /// Time between packets.
    pub fn interval(&self) -> Nanos {
        let ns = (self.len_bytes as u128 * 8 * 1_000_000_000) / self.rate_bps.max(1) as u128;
        Nanos(ns.max(1) as u64)
    }

    /// How its packets are marked.
    fn marking(&self) -> Marking {
        Marking {
            tid: self.tid,
            dscp: self.dscp,
            flow_hash: self.flow_hash,
        }
    }
}

impl Source for Cbr {
    fn src(&self) -> Host {
        node_host(self.src)
    }

    fn dst(&self) -> Host {
        node_host(self.dst)
    }

    fn kind(&self) -> &'static str {
        if self.probe {
            "probe"
        } else {
            "cbr"
        }
    }

    fn start(&self, ctx: &mut FlowCtx<'_>) {
        ctx.schedule(self.start, SourceEvent::Offer);
    }

    /// The next packet goes, and the one after it is scheduled.
    fn due(&self, ctx: &mut FlowCtx<'_>, event: SourceEvent) {
        debug_assert!(matches!(event, SourceEvent::Offer));
        let (from, to) = (self.src(), self.dst());
        ctx.stats().offered += 1;
        ctx.schedule(ctx.now() + self.interval(), SourceEvent::Offer);
        let mut p = ctx.packet(from, to, self.len_bytes, Message::Data);
        self.marking().apply(&mut p);
        ctx.send(from, p);
    }

    fn arrived(&self, ctx: &mut FlowCtx<'_>, arrival: Arrival<'_>) {
        let at = ctx.now();
        ctx.stats()
            .delivered(at, arrival.sent_at, arrival.packet.len_bytes);
    }
}
