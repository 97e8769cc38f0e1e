//! The virtual-time driver: the event loop that runs the cell, the traffic models, the
//! wired link to and from the servers and the host buses in time order, hands each
//! packet to the network and to its destination, and collects results.
//!
//! The traffic models act through [`Simulation`]'s state from their own files: one-way
//! flows in `traffic/saturated.rs` and `traffic/cbr.rs`, echo in `traffic/ping.rs`,
//! TCP flows in `traffic/tcp.rs`, page loads in `traffic/web.rs`, and the TCP
//! connections under them in `tcp/conn.rs` and `tcp/handshake.rs`. This file
//! dispatches to them: `Event`s as they come due, packets as they arrive
//! (`arrive`) or are dropped (`lost`).
//!
//! Every packet in flight has an entry in a slab (its `token`): which flow it belongs
//! to, where it is going, and what it carries (data, a ping request or reply). The cell
//! sees only the packet's metadata.
//!
//! The cell, the wired link and the stations' host buses are one
//! [`txop_core::network::Network`], the same the emulator drives; a station may have a
//! host bus ([`SimConfig::host_bus`], `txop_core::driver::bus`) between its host and its
//! WLAN chip. Which of two things due at the same instant runs first is the network's
//! [`Agenda`]'s rule, shared with the emulator.

use crate::tcp::{Segment, TcpConn};
use crate::traffic::saturated::{SaturatedWriter, WriteInProgress};
use crate::traffic::web::WebState;
use crate::traffic::{Flow, Host};
use crate::transit::{RemoteEnd, Transit};
use std::collections::VecDeque;
use txop_core::cell::{Cell, CellConfig, Output};
use txop_core::driver::bus::{BusConfig, HostBus};
use txop_core::network::{
    Agenda, AgendaEvent, Call, Due, EventQueue, NetOutput, Network, NetworkConfig, Timer,
    WiredConfig,
};
use txop_core::{DropReason, Nanos, Packet};
use txop_results::results::{bus_results, host_bus_rows, jain_index};
use txop_results::{Conservation, FlowStats, Results};

/// A simulation run: the cell, its traffic, and how long to run.
#[derive(Clone, Debug)]
pub struct SimConfig {
    pub cell: CellConfig,
    pub flows: Vec<Flow>,
    pub duration: Nanos,
    pub seed: u64,
    pub wired: WiredConfig,
    /// The host bus of each station between its host and its WLAN chip: entry `i` is
    /// station `i + 1`'s; `None`, or no entry, is no bus (the host hands packets to
    /// the cell at once). Empty by default.
    pub host_bus: Vec<Option<BusConfig>>,
    /// The flows whose far end is in another BSS of a [`crate::Neighbourhood`]
    /// (`crate::transit`): there the flow's end is [`Host::Server`]. Empty by default.
    pub remote_ends: Vec<RemoteEnd>,
}

impl SimConfig {
    /// A run with the default wired link and no host buses.
    pub fn new(cell: CellConfig, flows: Vec<Flow>, duration: Nanos, seed: u64) -> SimConfig {
        SimConfig {
            cell,
            flows,
            duration,
            seed,
            wired: WiredConfig::default(),
            host_bus: Vec::new(),
            remote_ends: Vec::new(),
        }
    }

    /// The same run with `bus` between station `station`'s host and its chip.
    /// Stations are numbered from 1; station 0 (the AP) has no host bus and panics.
    pub fn with_host_bus(mut self, station: u16, bus: BusConfig) -> SimConfig {
        let i = station
            .checked_sub(1)
            .expect("host buses are for stations, numbered from 1") as usize;
        if self.host_bus.len() <= i {
            self.host_bus.resize(i + 1, None);
        }
        self.host_bus[i] = Some(bus);
        self
    }
}

/// What a packet carries.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Payload {
    /// Data of a one-way flow.
    Data,
    /// Echo request number `seq` of a ping flow.
    PingRequest {
        seq: u64,
    },
    /// The reply to echo request `seq`, which its sender sent at `request_sent`.
    PingReply {
        seq: u64,
        request_sent: Nanos,
    },
    /// A TCP segment of connection `conn`: data towards the receiver, or an ACK.
    Tcp {
        conn: u32,
        seg: Segment,
    },
    /// The connection handshake: the client's SYN, the server's SYN-ACK, and the
    /// client's ACK (sent only when the server is the one that sends data; otherwise
    /// the client's first data or request carries it).
    Syn {
        conn: u32,
    },
    SynAck {
        conn: u32,
    },
    HandshakeAck {
        conn: u32,
    },
    /// A web client asks for `object` on connection `conn`.
    WebRequest {
        conn: u32,
        object: u32,
    },
    /// Another BSS's packet crossing this one (`crate::transit`): its home BSS, its
    /// token and its flow hash there.
    Transit {
        home: u32,
        token: u64,
        flow_hash: u32,
    },
}

impl Payload {
    /// Whether the flow's packet counts (`offered_packets`, `delivered_packets`,
    /// `dropped_packets`) include this packet: a one-way flow's data, echo requests and
    /// their replies, and TCP segments that carry data (retransmissions included).
    /// TCP's handshake (SYN, SYN-ACK, its last ACK), pure ACKs and web requests are
    /// not counted, sent or lost.
    fn counted(&self) -> bool {
        match self {
            Payload::Data | Payload::PingRequest { .. } | Payload::PingReply { .. } => true,
            Payload::Tcp { seg, .. } => seg.len > 0,
            Payload::Syn { .. }
            | Payload::SynAck { .. }
            | Payload::HandshakeAck { .. }
            | Payload::WebRequest { .. }
            | Payload::Transit { .. } => false,
        }
    }
}

/// A packet in flight, beyond what the cell sees.
#[derive(Clone, Copy, Debug)]
pub(crate) struct InFlight {
    pub(crate) flow: u32,
    pub(crate) to: Host,
    pub(crate) from: Host,
    /// When the application sent it.
    pub(crate) sent_at: Nanos,
    pub(crate) payload: Payload,
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

/// Things that happen outside the cell: the traffic's, and the network's timers that
/// the [`Agenda`] queues (packets reaching the end of a wired link are not queued: the
/// agenda keeps their order). Indices are `u32` so that queue entries are small.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Event {
    /// The next packet (or request) of a flow.
    Offer { flow: u32 },
    /// A TCP connection's timer (RTO, pacing, delayed ACK).
    TcpTimer { conn: u32 },
    /// A web request not answered after 1 s is sent again.
    WebRetry { conn: u32, object: u32 },
    /// A TCP flow stops writing new data.
    TcpStop { flow: u32 },
    /// The client's SYN number `n` (1-based) went unanswered for its timeout.
    SynTimer { conn: u32, n: u32 },
    /// The server's SYN-ACK number `n` went unacknowledged for its timeout.
    SynAckTimer { conn: u32, n: u32 },
    /// One of the network's timers (a host bus's deadline).
    Network(Timer),
}

impl From<Timer> for Event {
    fn from(timer: Timer) -> Event {
        Event::Network(timer)
    }
}

impl AgendaEvent for Event {
    fn timer(&self) -> Option<Timer> {
        match self {
            Event::Network(timer) => Some(*timer),
            _ => None,
        }
    }
}

/// Steps (events and cell deadlines) at one instant after which the run is declared
/// stuck: far above what any valid scenario does at one instant (its first instant
/// writes every saturated flow's depth, at most a few hundred thousand packets), far
/// below what a loop that never advances time reaches in a few seconds.
pub const WATCHDOG_STEPS: u64 = 50_000_000;

/// Simulated time stopped advancing: the watchdog's finding (a bug in the model).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stuck {
    /// The instant the simulation could not leave.
    pub at: Nanos,
    pub steps: u64,
    pub seed: u64,
}

impl std::fmt::Display for Stuck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "simulated time has not advanced in {} million events at t = {:.9} s",
            self.steps / 1_000_000,
            self.at.as_secs_f64(),
        )
    }
}

impl std::error::Error for Stuck {}

/// A running simulation.
pub struct Simulation {
    /// The cell, the wired link and the host buses.
    net: Network,
    /// The order of what is due ([`Agenda`]): the cell's deadline, `events`, the
    /// packets on the wires.
    agenda: Agenda,
    pub(crate) flows: Vec<Flow>,
    pub(crate) flow_stats: Vec<FlowStats>,
    pub(crate) events: EventQueue<Event>,
    /// Each packet in flight by its token, and the tokens free for reuse.
    pub(crate) slab: Vec<Option<InFlight>>,
    pub(crate) free: Vec<u32>,
    /// Each ping flow's next request number (index = flow).
    pub(crate) ping_seq: Vec<u64>,
    /// Every TCP connection opened so far (index = the connection's id).
    pub(crate) conns: Vec<TcpConn>,
    /// The connection of each TCP flow, once open.
    pub(crate) flow_conn: Vec<Option<usize>>,
    /// Each web flow's page load (index = flow).
    pub(crate) web: Vec<WebState>,
    /// Each saturated flow's writer (`None` for other flows), the flows whose writers
    /// are stalled (see [`crate::traffic::saturated`]), and while a saturated flow's
    /// packet is being written, whether the network refused a packet in the write.
    pub(crate) writers: Vec<Option<SaturatedWriter>>,
    pub(crate) stalled: Vec<u32>,
    pub(crate) writing: Option<WriteInProgress>,
    /// Each flow's far end when it is in another BSS (index = flow; empty when no flow
    /// crosses), whether packets cross between this simulation and others at all, and
    /// the crossing packets not yet taken (`crate::transit`).
    pub(crate) remote: Vec<Option<RemoteEnd>>,
    pub(crate) crossing: bool,
    pub(crate) transits: VecDeque<Transit>,
    /// Events and cell deadlines handled since simulated time last advanced, and the
    /// bound on them (the watchdog; see [`Simulation::run_until`]).
    same_instant_steps: u64,
    stuck: Option<Stuck>,
    next_id: u64,
    now: Nanos,
    end: Nanos,
    /// The radiotap capture of the air, when asked for ([`Simulation::capture`]).
    pub(crate) capture: Option<Box<crate::capture::SimCapture>>,
    offered: u64,
    pub(crate) delivered: u64,
    pub(crate) dropped: u64,
    seed: u64,
}

impl Simulation {
    pub fn new(cfg: SimConfig) -> Result<Simulation, String> {
        let stations = cfg.cell.stations.len() as u16;
        for (i, f) in cfg.flows.iter().enumerate() {
            for h in [f.src(), f.dst()] {
                if let Host::Station(n) = h {
                    if n == 0 || n > stations {
                        return Err(format!("flow {i}: no station {n} in this cell"));
                    }
                }
            }
            if matches!(f.src(), Host::Station(_)) == matches!(f.dst(), Host::Station(_)) {
                return Err(format!(
                    "flow {i}: one end must be a station and the other the AP or the server"
                ));
            }
        }
        let mut remote: Vec<Option<RemoteEnd>> = Vec::new();
        for end in &cfg.remote_ends {
            let Some(f) = cfg.flows.get(end.flow) else {
                return Err(format!("flow {}: no such flow to cross BSSs", end.flow));
            };
            if f.src() != Host::Server && f.dst() != Host::Server {
                return Err(format!(
                    "flow {}: a flow to another BSS has the server as its end there",
                    end.flow
                ));
            }
            remote.resize(cfg.flows.len(), None);
            remote[end.flow] = Some(end.clone());
        }
        let net = Network::new(
            NetworkConfig {
                cell: cfg.cell,
                wired: cfg.wired,
                host_bus: cfg.host_bus,
            },
            cfg.seed,
        )?;
        let mut events = EventQueue::default();
        for (i, f) in cfg.flows.iter().enumerate() {
            match f {
                Flow::Saturated(s) => {
                    for _ in 0..s.depth {
                        events.push(Nanos::ZERO, Event::Offer { flow: i as u32 });
                    }
                }
                Flow::Cbr(c) => events.push(c.start, Event::Offer { flow: i as u32 }),
                Flow::Ping(p) => events.push(p.start, Event::Offer { flow: i as u32 }),
                Flow::Web(w) => events.push(w.start, Event::Offer { flow: i as u32 }),
                Flow::Tcp(t) => {
                    events.push(t.start, Event::Offer { flow: i as u32 });
                    if let Some(stop) = t.stop {
                        events.push(stop, Event::TcpStop { flow: i as u32 });
                    }
                }
            }
        }
        let writers = cfg
            .flows
            .iter()
            .map(|f| match f {
                Flow::Saturated(s) => Some(SaturatedWriter::new(s.depth)),
                _ => None,
            })
            .collect();
        Ok(Simulation {
            net,
            agenda: Agenda::new(),
            flow_stats: cfg
                .flows
                .iter()
                .map(|f| match f {
                    Flow::Tcp(_) | Flow::Web(_) => FlowStats::tcp(),
                    _ => FlowStats::default(),
                })
                .collect(),
            ping_seq: vec![0; cfg.flows.len()],
            conns: Vec::new(),
            flow_conn: cfg.flows.iter().map(|_| None).collect(),
            web: cfg.flows.iter().map(|_| WebState::default()).collect(),
            flows: cfg.flows,
            events,
            slab: Vec::new(),
            free: Vec::new(),
            writers,
            stalled: Vec::new(),
            writing: None,
            crossing: !remote.is_empty(),
            remote,
            transits: VecDeque::new(),
            same_instant_steps: 0,
            stuck: None,
            next_id: 0,
            now: Nanos::ZERO,
            end: cfg.duration,
            capture: None,
            offered: 0,
            delivered: 0,
            dropped: 0,
            seed: cfg.seed,
        })
    }

    pub fn cell(&self) -> &Cell {
        self.net.cell()
    }

    /// Each flow's counters, in flow order.
    pub fn flow_stats(&self) -> &[FlowStats] {
        &self.flow_stats
    }

    /// Station `station`'s host bus, if it has one.
    pub fn host_bus(&self, station: u16) -> Option<&HostBus> {
        self.net.host_bus(station)
    }

    /// Run until `until` (or the configured end, whichever is earlier).
    ///
    /// Each turn takes what the [`Agenda`] says is due next (the cell's deadline, an
    /// event, a packet reaching the end of a wire), handles it, then acts on what the
    /// cell reported.
    ///
    /// A watchdog counts the steps (events and cell deadlines) taken without simulated
    /// time advancing; at [`WATCHDOG_STEPS`] the run stops where it is and
    /// [`Simulation::stuck`] says so: a model that never advances time is a bug, and
    /// the caller reports it instead of spinning for ever.
    pub fn run_until(&mut self, until: Nanos) {
        if self.stuck.is_some() {
            return;
        }
        let until = until.min(self.end);
        while let Some(next) = self.agenda.next_at(&self.net, &self.events) {
            if next > until || !self.step(next) {
                break;
            }
        }
        if self.stuck.is_none() {
            self.now = until;
        }
    }

    /// When the next step is due (the agenda's next instant), if before the end and the
    /// run is not stuck.
    pub(crate) fn next_at(&mut self) -> Option<Nanos> {
        if self.stuck.is_some() {
            return None;
        }
        self.agenda
            .next_at(&self.net, &self.events)
            .filter(|&t| t <= self.end)
    }

    /// Take and handle what is due at `next` (the agenda's next instant), then act on
    /// what the cell reported. `false` if the watchdog stopped the run here.
    pub(crate) fn step(&mut self, next: Nanos) -> bool {
        if next > self.now {
            self.same_instant_steps = 0;
        } else {
            self.same_instant_steps += 1;
            if self.same_instant_steps >= WATCHDOG_STEPS {
                self.stuck = Some(Stuck {
                    at: next,
                    steps: self.same_instant_steps,
                    seed: self.seed,
                });
                return false;
            }
        }
        self.now = next;
        match self.agenda.take(next, &mut self.events) {
            Some(Due::Cell) => self.net.handle_cell_timeout(next),
            Some(Due::Network(timer)) => {
                let call = self.net.handle_timeout(next, timer);
                self.pump_network(call);
            }
            Some(Due::Event(ev)) => self.handle_event(next, ev),
            Some(Due::Superseded) | None => {}
        }
        self.drain_outputs();
        true
    }

    /// The model this simulation drives: its cell and what surrounds it.
    pub(crate) fn network_mut(&mut self) -> &mut Network {
        &mut self.net
    }

    /// The instant the run ends.
    pub(crate) fn end(&self) -> Nanos {
        self.end
    }

    /// Move the clock to `t` (the end of a run driven from outside).
    pub(crate) fn finish_at(&mut self, t: Nanos) {
        if self.stuck.is_none() {
            self.now = t.min(self.end);
        }
    }

    /// A slab entry for `f`: the token its packet carries.
    pub(crate) fn alloc(&mut self, f: InFlight) -> u64 {
        match self.free.pop() {
            Some(i) => {
                self.slab[i as usize] = Some(f);
                i as u64
            }
            None => {
                self.slab.push(Some(f));
                (self.slab.len() - 1) as u64
            }
        }
    }

    pub(crate) fn release(&mut self, token: u64) -> Option<InFlight> {
        let f = self.slab.get_mut(token as usize)?.take()?;
        self.free.push(token as u32);
        Some(f)
    }

    fn handle_event(&mut self, at: Nanos, ev: Event) {
        match ev {
            Event::Offer { flow } => self.offer(at, flow as usize),
            Event::TcpTimer { conn } => self.tcp_timer(at, conn),
            Event::SynTimer { conn, n } => self.syn_timer(at, conn as usize, n),
            Event::SynAckTimer { conn, n } => self.syn_ack_timer(at, conn as usize, n),
            // The agenda hands the network's timers over as `Due::Network`.
            Event::Network(_) => {}
            Event::TcpStop { flow } => self.tcp_flow_stop(flow as usize),
            Event::WebRetry { conn, object } => self.web_retry(at, conn as usize, object),
        }
    }

    /// A flow's application sends its next packet (or, for TCP, opens the connection).
    fn offer(&mut self, at: Nanos, flow: usize) {
        match &self.flows[flow] {
            Flow::Saturated(_) => self.saturated_send(at, flow),
            Flow::Cbr(_) => self.cbr_send(at, flow),
            Flow::Ping(_) => self.ping_send(at, flow),
            Flow::Tcp(_) => self.tcp_flow_start(at, flow),
            Flow::Web(_) => self.web_start(at, flow),
        }
    }

    /// A data packet of one-way flow `flow` (saturated, CBR) from `from` to `to`, sent
    /// by its application at `at`.
    pub(crate) fn data_packet(
        &mut self,
        at: Nanos,
        flow: usize,
        from: Host,
        to: Host,
    ) -> Option<Packet> {
        let token = self.alloc(InFlight {
            flow: flow as u32,
            to,
            from,
            sent_at: at,
            payload: Payload::Data,
        });
        let id = self.take_id();
        self.flows[flow].packet(id, token)
    }

    fn take_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// A packet of `len` IP bytes from `from` to `to`, marked with `marking`, whose
    /// slab entry is `token`.
    pub(crate) fn make_packet(
        &mut self,
        from: Host,
        to: Host,
        len: u32,
        marking: Marking,
        token: u64,
    ) -> Packet {
        let id = self.take_id();
        let mut p = Packet::new(id, from.node(), to.node(), len);
        p.tid = marking.tid;
        p.dscp = marking.dscp;
        p.flow = marking.flow_hash;
        p.token = token;
        p
    }

    /// A host hands a packet to the network.
    pub(crate) fn send(&mut self, now: Nanos, from: Host, p: Packet) {
        self.offered += 1;
        let p = if self.remote.is_empty() {
            p
        } else {
            match self.sends_away(now, from, p) {
                Some(p) => p,
                None => return,
            }
        };
        self.net_send(now, from, p);
    }

    /// `from` hands `p`, already counted as offered, to the network.
    #[inline(always)]
    pub(crate) fn net_send(&mut self, now: Nanos, from: Host, p: Packet) {
        let call = self.net.handle_packet(now, from, p);
        self.pump_network(call);
    }

    /// Move the clock to `at`, when a packet from another simulation arrives
    /// (`crate::transit`) at an instant this one has not stepped to.
    pub(crate) fn advance_to(&mut self, at: Nanos) {
        if at > self.now {
            self.now = at;
            self.same_instant_steps = 0;
        }
    }

    /// Act on what a call into the network produced (packets that reached a host or
    /// were dropped on a wire or a bus), as it comes: a host answers a packet before
    /// the next one is taken.
    // perf: inlined where the call is made, so that the call's result is matched
    // where it is built.
    #[inline(always)]
    fn pump_network(&mut self, call: Call) {
        match call {
            Call::Done => {}
            Call::Output(o) => self.network_output(o),
            Call::OnWire { link } => self.agenda.on_wire(link, &mut self.events),
            Call::HostBus { station } => {
                while let Some(o) =
                    self.agenda
                        .poll_host_bus(&mut self.net, &mut self.events, station)
                {
                    self.network_output(o);
                }
            }
        }
    }

    /// A packet reached its host, or was dropped on a wire or a bus.
    #[inline(always)]
    fn network_output(&mut self, o: NetOutput) {
        match o {
            NetOutput::Arrived { at, packet, .. } => self.arrive(at, packet),
            NetOutput::Dropped {
                at, packet, reason, ..
            } => self.lost(at, packet, reason),
        }
    }

    /// Act on what the cell reported: a delivered packet goes on to its host (across
    /// the wire to the server, across its bus to a station's host).
    pub(crate) fn drain_outputs(&mut self) {
        // The capture first: the packets its records name are still in the slab.
        if self.capture.is_some() {
            self.drain_capture();
        }
        while let Some(o) = self.net.poll_cell_output() {
            match o {
                Output::Delivered { at, packet } => {
                    self.wake_stalled(at, packet.src);
                    let inflight = self
                        .slab
                        .get(packet.token as usize)
                        .and_then(Option::as_ref);
                    let to = inflight.map(|f| {
                        // Another BSS's packet (`crate::transit`) has no flow here.
                        if let Some(stats) = self.flow_stats.get_mut(f.flow as usize) {
                            stats.air_delivered(at, &packet);
                        }
                        f.to
                    });
                    match to {
                        Some(to) => {
                            let call = self.net.forward(at, packet, to);
                            self.pump_network(call);
                        }
                        None => self.arrive(at, packet),
                    }
                }
                Output::Dropped {
                    at, packet, reason, ..
                } => self.lost(at, packet, reason),
                Output::Airtime(_) => {}
            }
        }
    }

    /// A packet reached its host: its destination, or where it crosses into another
    /// simulation (`crate::transit`).
    fn arrive(&mut self, at: Nanos, packet: Packet) {
        if self.crossing && self.arrives_away(at, packet) {
            return;
        }
        self.arrive_here(at, packet);
    }

    /// A packet reached its destination host.
    pub(crate) fn arrive_here(&mut self, at: Nanos, packet: Packet) {
        self.delivered += 1;
        if let Some(Some(InFlight {
            payload: Payload::Tcp { .. },
            ..
        })) = self.slab.get(packet.token as usize)
        {
            self.arrive_tcp(at, packet.token as usize, packet.ecn);
            return;
        }
        let Some(f) = self.release(packet.token) else {
            return;
        };
        let flow = f.flow as usize;
        match f.payload {
            Payload::Data => {
                self.flow_stats[flow].delivered(at, f.sent_at, packet.len_bytes);
                self.saturated_left(at, flow);
            }
            Payload::PingRequest { seq } => self.ping_echo(at, f, seq, packet),
            // Handled in place by `arrive_tcp`.
            Payload::Tcp { .. } => {}
            Payload::Syn { conn } => self.send_syn_ack(at, conn as usize),
            Payload::SynAck { conn } => self.syn_ack_arrived(at, conn as usize),
            Payload::HandshakeAck { conn } => self.handshake_ack_arrived(at, conn as usize),
            Payload::WebRequest { conn, object } => {
                self.web_request_arrived(at, conn as usize, object)
            }
            Payload::PingReply { seq, request_sent } => {
                self.ping_reply_arrived(at, f, seq, request_sent)
            }
            // Another BSS's packets leave by `arrives_away` before they get here.
            Payload::Transit { .. } => {}
        }
    }

    /// A packet was dropped on the way.
    pub(crate) fn lost(&mut self, at: Nanos, packet: Packet, reason: DropReason) {
        self.dropped += 1;
        let refusal = self.refusal();
        if !refusal {
            self.wake_stalled(at, packet.src);
        }
        if self.crossing && self.lost_away(at, packet, reason) {
            return;
        }
        let Some(f) = self.release(packet.token) else {
            return;
        };
        let flow = f.flow as usize;
        if f.payload.counted() {
            self.flow_stats[flow].dropped(reason);
        }
        if refusal {
            // Refused while a saturated flow's packet was being written: owed.
            self.saturated_refused(flow);
        } else {
            self.saturated_left(at, flow);
        }
    }

    /// Run to the end and summarise.
    ///
    /// # Panics
    /// If the watchdog finds the run stuck ([`Simulation::try_run`] returns it instead).
    pub fn run(self) -> Results {
        self.try_run().unwrap_or_else(|stuck| panic!("{stuck}"))
    }

    /// Run to the end and summarise, or say where the run got stuck.
    pub fn try_run(mut self) -> Result<Results, Stuck> {
        self.run_until(self.end);
        match self.stuck.take() {
            Some(stuck) => Err(stuck),
            None => Ok(self.results()),
        }
    }

    /// Where the watchdog stopped the run, if it did ([`Simulation::run_until`]).
    pub fn stuck(&self) -> Option<&Stuck> {
        self.stuck.as_ref()
    }

    /// Summarise what happened so far.
    pub fn results(&self) -> Results {
        let secs = self.now.as_secs_f64();
        let cell = self.net.cell();
        let busy = cell.busy_ns();
        let (mut stations, mut total_bytes) = txop_results::results::station_results(cell, secs);
        host_bus_rows(&self.net, &mut stations, &mut total_bytes, secs);
        let shares: Vec<f64> = stations.iter().map(|s| s.airtime_share).collect();
        let (beacon_airtime_ns, beacon_airtime_share) = txop_results::results::beacon_airtime(cell);
        let inside_wired = self.slab.iter().flatten().count() as u64;
        Results {
            seed: self.seed,
            duration_s: secs,
            series_step_s: txop_results::flowstats::series_step(secs).as_secs_f64(),
            total_throughput_bps: txop_results::results::bits_per_s(total_bytes, secs),
            busy_fraction: if secs > 0.0 {
                busy as f64 / self.now.as_ns() as f64
            } else {
                0.0
            },
            airtime_jain_index: jain_index(&shares),
            beacon_airtime_ns,
            beacon_airtime_share,
            stations,
            flows: self
                .flows
                .iter()
                .zip(&self.flow_stats)
                .enumerate()
                .map(|(i, (f, st))| {
                    let mut r = st.result(i, (f.kind(), f.label()), f.src(), f.dst(), secs);
                    if let Some(Some(far)) = self.remote.get(i) {
                        let end = if f.src() == Host::Server {
                            &mut r.src
                        } else {
                            &mut r.dst
                        };
                        end.clone_from(&far.name);
                    }
                    r
                })
                .collect(),
            conservation: Conservation {
                offered_packets: self.offered,
                delivered_packets: self.delivered,
                dropped_packets: self.dropped,
                inside_packets: inside_wired,
            },
            host_buses: bus_results(&self.net, self.now, secs),
        }
    }
}
