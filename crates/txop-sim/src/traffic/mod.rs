//! Traffic models that feed the cell, behind one interface.
//!
//! A flow is configured as a [`Flow`] (one variant per model) and runs as a
//! `Source`: the event loop in `crate::sim` starts it, hands it its own events as
//! they come due and tells it what became of its packets, and the source acts only
//! through the narrow `FlowCtx` it is handed (`context.rs`): it reads the time,
//! schedules its own events, sends packets from a host, counts into its own flow's
//! statistics and, for flows over TCP, drives its connections (`FlowCtx::tcp`). It
//! sees neither the cell nor the network, other flows nor the loop's queues.
//!
//! Each model's configuration and behaviour is one file: one-way flows in
//! `saturated.rs` and `cbr.rs`, echo in `ping.rs`, TCP flows in `tcp.rs`, page loads in
//! `web.rs`; `flent.rs` builds flent's tests from them. The TCP connections under TCP
//! flows and page loads are in `crate::tcp`.

pub mod cbr;
mod context;
pub mod flent;
pub mod ping;
pub mod saturated;
pub mod tcp;
pub mod web;

pub(crate) use context::FlowCtx;

use cbr::Cbr;
use ping::Ping;
use saturated::Saturated;
use std::rc::Rc;
use tcp::TcpFlow;
use txop_core::{Nanos, NodeId, Packet};
use txop_results::FlowStats;
use web::WebPage;

/// Where an application runs (the network's edges: `txop_core::network::Host`).
pub use txop_core::network::Host;

/// A traffic flow the simulator feeds into the cell.
#[derive(Clone, Debug)]
pub enum Flow {
    Saturated(Saturated),
    Cbr(Cbr),
    Ping(Ping),
    Tcp(TcpFlow),
    Web(WebPage),
}

impl Flow {
    /// The flow as the event loop runs it, with its state at the start of a run.
    pub(crate) fn into_source(self) -> Rc<dyn Source> {
        match self {
            Flow::Saturated(f) => Rc::new(saturated::SaturatedSource::new(f)),
            Flow::Cbr(f) => Rc::new(f),
            Flow::Ping(f) => Rc::new(ping::PingSource::new(f)),
            Flow::Tcp(f) => Rc::new(tcp::TcpSource::new(f)),
            Flow::Web(f) => Rc::new(web::WebSource::new(f)),
        }
    }
}

/// What the event loop needs from a traffic model: one per flow, built from its
/// [`Flow`]. The methods take `&self` because a source is re-entered: a packet it sends
/// may be refused, or reach a host, before the send returns, and the loop tells the
/// source at once (what happens at one instant keeps its order); a source keeps its
/// state in cells and holds no borrow of it across a call into its context.
pub(crate) trait Source {
    /// The host that sends (for ping: the one that measures).
    fn src(&self) -> Host;

    /// The host it sends to.
    fn dst(&self) -> Host;

    /// Its kind in results (`saturated`, `cbr`, `probe`, `ping`, `udp_ping`, `tcp`, `web`;
    /// docs/results.md, "Flow kinds").
    fn kind(&self) -> &'static str;

    /// The flent series name of the flow, if it belongs to a flent test.
    fn label(&self) -> &str {
        ""
    }

    /// Its statistics before the run: flows over TCP count TCP's columns too.
    fn new_stats(&self) -> FlowStats {
        FlowStats::default()
    }

    /// The run begins (at time zero): schedule its first events.
    fn start(&self, ctx: &mut FlowCtx<'_>);

    /// One of its events, scheduled with [`FlowCtx::schedule`], came due.
    fn due(&self, ctx: &mut FlowCtx<'_>, event: SourceEvent);

    /// One of its own packets (not a TCP segment or handshake packet: those are TCP's)
    /// reached the host it was sent to.
    fn arrived(&self, ctx: &mut FlowCtx<'_>, arrival: Arrival<'_>);

    /// One of its packets, whatever it carried, was lost on the way. `refused`: while
    /// a packet was being written ([`FlowCtx::write`]), whoever's it was.
    fn lost(&self, _ctx: &mut FlowCtx<'_>, _refused: bool) {}

    /// Its node got a packet out while it waited for room ([`FlowCtx::wait_for_room`]).
    fn room(&self, _ctx: &mut FlowCtx<'_>) {}

    /// The client of its TCP connection `conn` has completed its side of the handshake
    /// on a connection opened with requests ([`crate::tcp::ConnSpec`]`::client_requests`).
    fn connected(&self, _ctx: &mut FlowCtx<'_>, _conn: ConnId) {}

    /// The receiver of its TCP connection `conn` received more of the stream.
    fn received(&self, _ctx: &mut FlowCtx<'_>, _conn: ConnId) {}
}

/// A source's own event, which it schedules and the loop hands back when it is due.
#[derive(Clone, Copy, Debug)]
pub(crate) enum SourceEvent {
    /// The next packet (or request) of the flow; for TCP, its connection opens.
    Offer,
    /// A TCP flow stops writing new data.
    Stop,
    /// A web request for `object` on connection `conn`, not answered after 1 s, is sent
    /// again.
    Retry { conn: ConnId, object: u32 },
}

/// What a source's packet carries (the loop carries it to the far host untouched).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Message {
    /// Data of a one-way flow.
    Data,
    /// Echo request number `seq` of a ping flow.
    PingRequest { seq: u64 },
    /// The reply to echo request `seq`, which its sender sent at `request_sent`.
    PingReply { seq: u64, request_sent: Nanos },
    /// A web client asks for `object` on connection `conn`.
    WebRequest { conn: ConnId, object: u32 },
}

impl Message {
    /// Whether the flow's packet counts (`offered_packets`, `delivered_packets`,
    /// `dropped_packets`) include it: data, echo requests and replies; web requests
    /// are not counted, sent or lost.
    pub(crate) fn counted(&self) -> bool {
        !matches!(self, Message::WebRequest { .. })
    }
}

/// One of a source's packets at the host it was sent to ([`Source::arrived`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Arrival<'a> {
    pub(crate) message: Message,
    pub(crate) from: Host,
    pub(crate) to: Host,
    /// When its application sent it.
    pub(crate) sent_at: Nanos,
    /// The packet as it arrived (size and marking).
    pub(crate) packet: &'a Packet,
}

/// How a host marks a packet for the network: what the cell's queues classify it by.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Marking {
    /// The 802.11 TID (user priority), hence the access category.
    pub(crate) tid: u8,
    /// The IP DSCP (what a qdisc's priority bands read).
    pub(crate) dscp: u8,
    /// The flow hash fq classifies on.
    pub(crate) flow_hash: u32,
}

impl Marking {
    /// How `p` is marked.
    pub(crate) fn of(p: &Packet) -> Marking {
        Marking {
            tid: p.tid,
            dscp: p.dscp,
            flow_hash: p.flow,
        }
    }

    /// Mark `p` so.
    pub(crate) fn apply(self, p: &mut Packet) {
        p.tid = self.tid;
        p.dscp = self.dscp;
        p.flow = self.flow_hash;
    }
}

/// A TCP connection of the simulation, by its index in the order opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ConnId(pub(crate) u32);

impl ConnId {
    pub(crate) fn index(self) -> usize {
        self.0 as usize
    }
}

/// One-way flows name cell nodes: the AP injects directly.
fn node_host(n: NodeId) -> Host {
    if n.is_ap() {
        Host::Ap
    } else {
        Host::Station(n.0)
    }
}
