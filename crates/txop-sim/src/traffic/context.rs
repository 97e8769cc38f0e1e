//! What a traffic source may do: the narrow context the event loop hands it
//! ([`FlowCtx`]), and through it its TCP connections ([`TcpCtx`]).
//!
//! The context wraps the simulation privately (this module's private fields are out of
//! the models' sight): a source reads the time, schedules its own events, sends packets
//! from a host, counts into its own flow's statistics and drives its own TCP
//! connections, and nothing else. What it sends goes through the network at once,
//! so the loop may call the source back before a send returns ([`super::Source`]).

use super::{ConnId, Host, Message, SourceEvent};
use crate::sim::{Event, InFlight, Payload, Simulation, WriteInProgress};
use crate::tcp::ConnSpec;
use txop_core::{Nanos, NodeId, Packet};
use txop_results::FlowStats;

/// A source's view of the simulation while the loop calls it: one flow, one instant.
pub(crate) struct FlowCtx<'a> {
    sim: &'a mut Simulation,
    flow: u32,
    at: Nanos,
}

impl<'a> FlowCtx<'a> {
    /// Flow `flow`'s context at `at` (the event loop builds one per call).
    pub(crate) fn new(sim: &'a mut Simulation, flow: usize, at: Nanos) -> FlowCtx<'a> {
        FlowCtx {
            sim,
            flow: flow as u32,
            at,
        }
    }

    /// The current instant.
    pub(crate) fn now(&self) -> Nanos {
        self.at
    }

    /// Have `event` handed back to this source ([`super::Source::due`]) at `at`.
    /// Events due at the same instant come in the order they were scheduled.
    pub(crate) fn schedule(&mut self, at: Nanos, event: SourceEvent) {
        let flow = self.flow;
        self.sim.events.push(at, Event::Source { flow, event });
    }

    /// This flow's statistics.
    pub(crate) fn stats(&mut self) -> &mut FlowStats {
        &mut self.sim.flow_stats[self.flow as usize]
    }

    /// A new packet of this flow from `from` to `to`, `len_bytes` long, carrying
    /// `message`, sent now: unmarked (TID 0, DSCP 0, flow hash 0) until the source
    /// marks it. Its token names it to the loop (and, made well-spread, may serve as a
    /// flow hash).
    pub(crate) fn packet(
        &mut self,
        from: Host,
        to: Host,
        len_bytes: u32,
        message: Message,
    ) -> Packet {
        let token = self.sim.alloc(InFlight {
            flow: self.flow,
            to,
            from,
            sent_at: self.at,
            cell: None,
            payload: Payload::App(message),
        });
        let mut p = Packet::new(self.sim.take_id(), from.node(), to.node(), len_bytes);
        p.token = token;
        p
    }

    /// Host `from` hands `p` (made by [`FlowCtx::packet`]) to the network.
    pub(crate) fn send(&mut self, from: Host, p: Packet) {
        self.sim.send(self.at, from, p);
    }

    /// Host `from` writes `p` as a writer with a send buffer does
    /// ([`super::saturated`]): it hands it to the network and waits for what the cell
    /// then reports. Whether the network refused a packet meanwhile (this one, or
    /// one the write pushed out, whoever's); each refused packet's source is told so
    /// ([`super::Source::lost`] with `refused`).
    pub(crate) fn write(&mut self, from: Host, p: Packet) -> bool {
        self.sim.writing = Some(WriteInProgress { refused: false });
        self.sim.send(self.at, from, p);
        self.sim.drain_outputs();
        self.sim.writing.take().is_some_and(|w| w.refused)
    }

    /// Wait until node `node` gets a packet out (delivered or lost): then this source's
    /// [`super::Source::room`] is called. Each packet out wakes one waiting source of
    /// its node, the one waiting longest.
    pub(crate) fn wait_for_room(&mut self, node: NodeId) {
        self.sim.wait_for_room(self.flow, node);
    }

    /// This flow's TCP connections.
    pub(crate) fn tcp(&mut self) -> TcpCtx<'_> {
        TcpCtx {
            sim: self.sim,
            flow: self.flow,
            at: self.at,
        }
    }
}

/// A flow's TCP connections (`crate::tcp`): what a TCP flow or a page load does with
/// them.
pub(crate) struct TcpCtx<'a> {
    sim: &'a mut Simulation,
    flow: u32,
    at: Nanos,
}

impl TcpCtx<'_> {
    /// Open a connection of this flow; nothing is sent until [`TcpCtx::connect`].
    pub(crate) fn open(&mut self, spec: ConnSpec) -> ConnId {
        let conn = self.sim.open_conn(self.at, self.flow as usize, spec);
        ConnId(conn as u32)
    }

    /// The client sends the connection's first SYN.
    pub(crate) fn connect(&mut self, conn: ConnId) {
        let conn = self.own(conn);
        self.sim.send_syn(self.at, conn);
    }

    /// The sender writes no new data (what it wrote is still delivered).
    pub(crate) fn stop_writing(&mut self, conn: ConnId) {
        let conn = self.own(conn);
        self.sim.conns[conn].snd.stop_writing();
    }

    /// The sender's application writes `bytes` more, and the connection sends what it
    /// may now.
    pub(crate) fn write(&mut self, conn: ConnId, bytes: u64) {
        let conn = self.own(conn);
        self.sim.conns[conn].snd.add_bytes(self.at, bytes);
        self.sim.pump_tcp(self.at, conn);
    }

    /// Bytes of the stream the receiver has in order.
    pub(crate) fn received_bytes(&self, conn: ConnId) -> u64 {
        self.sim.conns[self.own(conn)].rcv.bytes_received()
    }

    /// `conn` as an index, checked to be this flow's.
    fn own(&self, conn: ConnId) -> usize {
        let i = conn.index();
        debug_assert_eq!(
            self.sim.conns[i].flow, self.flow as usize,
            "another flow's connection"
        );
        i
    }
}
