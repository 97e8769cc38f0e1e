//! The virtual-time driver: the event loop that runs the cell, the traffic models, the
//! wired link to and from the servers and the host buses in time order, hands each
//! packet to the network and to its destination, and collects results.
//!
//! Each flow runs as a `Source` (`crate::traffic`), which acts through the narrow
//! context the loop hands it; the TCP connections under TCP flows and page loads are in
//! `tcp/conn.rs` and `tcp/handshake.rs`. This file dispatches to them: `Event`s as
//! they come due, packets as they arrive (`arrive`) or are dropped (`lost`).
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
use crate::traffic::{Arrival, ConnId, Flow, FlowCtx, Host, Marking, Message, Source, SourceEvent};
use crate::transit::RemoteEnd;
use std::collections::VecDeque;
use std::rc::Rc;
use txop_core::budget::{CellStamps, Passes, Stages};
use txop_core::cell::{Cell, CellConfig, Output};
use txop_core::driver::bus::{BusConfig, HostBus};
use txop_core::network::{
    Agenda, AgendaEvent, Call, Due, EventQueue, NetOutput, Network, NetworkConfig, Timer,
    WiredConfig,
};
use txop_core::world::Crossing;
use txop_core::{DropReason, Nanos, NodeId, Packet};
use txop_results::results::{bus_results, host_bus_rows, jain_index};
use txop_results::{BudgetArrival, Conservation, Direction, FlowStats, Results};

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
    /// Each host's TCP receive window, given to the connections it receives on
    /// ([`TcpHosts`]); empty by default (each flow keeps its own configuration's).
    pub tcp_hosts: TcpHosts,
}

/// The TCP receive settings of the hosts (their kernels' `tcp_rmem`, window scaling
/// and auto-tuning, their applications' read rate): a connection takes its
/// receiving host's, when that host has them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TcpHosts {
    pub server: Option<HostWindow>,
    pub ap: Option<HostWindow>,
    /// Entry `i` is station `i + 1`'s; a missing entry is `None`.
    pub stations: Vec<Option<HostWindow>>,
}

/// A host's receive window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostWindow {
    /// A fixed window of `window_bytes` ([`crate::tcp::ReceiveWindow::Fixed`]).
    Fixed { window_bytes: u64 },
    /// Linux's ([`crate::tcp::ReceiveWindow::Linux`]).
    Linux(crate::tcp::LinuxReceive),
}

impl HostWindow {
    /// `cfg` with this receive window.
    pub fn apply(self, cfg: crate::tcp::TcpConfig) -> crate::tcp::TcpConfig {
        match self {
            HostWindow::Fixed { window_bytes } => crate::tcp::TcpConfig {
                receive: crate::tcp::ReceiveWindow::Fixed,
                rwnd_bytes: window_bytes,
                ..cfg
            },
            HostWindow::Linux(l) => crate::tcp::TcpConfig {
                receive: crate::tcp::ReceiveWindow::Linux(l),
                ..cfg
            },
        }
    }
}

impl TcpHosts {
    /// Every host with `r`, for `stations` stations.
    pub fn all(r: HostWindow, stations: u16) -> TcpHosts {
        TcpHosts {
            server: Some(r),
            ap: Some(r),
            stations: vec![Some(r); stations as usize],
        }
    }

    /// The receive window of host `h`, if it has its own.
    pub fn receive_of(&self, h: Host) -> Option<HostWindow> {
        match h {
            Host::Server => self.server,
            Host::Ap => self.ap,
            Host::Station(n) => self
                .stations
                .get((n as usize).wrapping_sub(1))
                .copied()
                .flatten(),
        }
    }
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
            tcp_hosts: TcpHosts::default(),
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
    /// A traffic source's own packet (data, an echo request or reply, a web request).
    App(Message),
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
    /// `dropped_packets`) include this packet: what a source counts
    /// ([`Message::counted`]) and TCP segments that carry data (retransmissions
    /// included). TCP's handshake (SYN, SYN-ACK, its last ACK) and pure ACKs are not
    /// counted, sent or lost.
    fn counted(&self) -> bool {
        match self {
            Payload::App(message) => message.counted(),
            Payload::Tcp { seg, .. } => seg.len > 0,
            Payload::Syn { .. }
            | Payload::SynAck { .. }
            | Payload::HandshakeAck { .. }
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
    /// Its way through the cells it crossed so far (its delay budget).
    pub(crate) cell: Option<Passes>,
}

impl InFlight {
    /// The delay budget of this packet, reaching its host at `at` (`None` if no cell
    /// delivered it, or a stamp is out of order).
    pub(crate) fn stages(&self, at: Nanos) -> Option<Stages> {
        self.cell?.stages(self.sent_at, at)
    }

    /// A cell delivered it at `at`, as `packet` with `stamps`.
    fn crossed(&mut self, packet: &Packet, stamps: &CellStamps, at: Nanos) {
        match &mut self.cell {
            Some(passes) => passes.add(packet.enqueued_at, stamps, at),
            None => self.cell = Some(Passes::first(packet.enqueued_at, stamps, at)),
        }
    }
}

/// Things that happen outside the cell: the traffic's, and the network's timers that
/// the [`Agenda`] queues (packets reaching the end of a wired link are not queued: the
/// agenda keeps their order). Indices are `u32` so that queue entries are small.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Event {
    /// One of flow `flow`'s source's own events ([`FlowCtx::schedule`]).
    Source { flow: u32, event: SourceEvent },
    /// A TCP connection's timer (RTO, pacing, delayed ACK).
    TcpTimer { conn: u32 },
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

/// A packet being written ([`FlowCtx::write`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct WriteInProgress {
    /// The network refused a packet in this write (the written one, or one it pushed
    /// out, whoever's).
    pub(crate) refused: bool,
}

/// A source waiting for its node to get a packet out ([`FlowCtx::wait_for_room`]).
#[derive(Clone, Copy, Debug)]
struct Waiting {
    flow: u32,
    node: NodeId,
}

/// A running simulation.
pub struct Simulation {
    /// The cell, the wired link and the host buses.
    net: Network,
    /// The order of what is due ([`Agenda`]): the cell's deadline, `events`, the
    /// packets on the wires.
    agenda: Agenda,
    /// Each flow's source (`Rc`: the loop holds a source while it calls it, and the
    /// source may be called again before that call returns).
    sources: Vec<Rc<dyn Source>>,
    pub(crate) flow_stats: Vec<FlowStats>,
    pub(crate) events: EventQueue<Event>,
    /// Each packet in flight by its token, and the tokens free for reuse.
    pub(crate) slab: Vec<Option<InFlight>>,
    pub(crate) free: Vec<u32>,
    /// Every TCP connection opened so far (index = the connection's id).
    pub(crate) conns: Vec<TcpConn>,
    /// The sources waiting for room at their node, longest first, and while a
    /// packet is being written, whether the network refused a packet in the write.
    waiting: Vec<Waiting>,
    pub(crate) writing: Option<WriteInProgress>,
    /// Each flow's far end when it is in another BSS (index = flow; empty when no flow
    /// crosses), whether packets cross between this simulation and others at all, and
    /// the crossing packets not yet taken (`crate::transit`).
    pub(crate) remote: Vec<Option<RemoteEnd>>,
    pub(crate) crossing: bool,
    pub(crate) transits: VecDeque<Crossing<Option<Passes>>>,
    /// Events and cell deadlines handled since simulated time last advanced, and the
    /// bound on them (the watchdog; see [`Simulation::run_until`]).
    same_instant_steps: u64,
    stuck: Option<Stuck>,
    /// Each host's TCP receive settings ([`SimConfig::tcp_hosts`]).
    pub(crate) tcp_hosts: TcpHosts,
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
        let sources: Vec<Rc<dyn Source>> = cfg.flows.into_iter().map(Flow::into_source).collect();
        for (i, f) in sources.iter().enumerate() {
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
            let Some(f) = sources.get(end.flow) else {
                return Err(format!("flow {}: no such flow to cross BSSs", end.flow));
            };
            if f.src() != Host::Server && f.dst() != Host::Server {
                return Err(format!(
                    "flow {}: a flow to another BSS has the server as its end there",
                    end.flow
                ));
            }
            remote.resize(sources.len(), None);
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
        let mut sim = Simulation {
            net,
            agenda: Agenda::new(),
            flow_stats: sources.iter().map(|s| s.new_stats()).collect(),
            conns: Vec::new(),
            sources,
            events: EventQueue::default(),
            slab: Vec::new(),
            free: Vec::new(),
            waiting: Vec::new(),
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
            tcp_hosts: cfg.tcp_hosts,
        };
        for flow in 0..sim.sources.len() {
            sim.with_source(flow, Nanos::ZERO, |s, ctx| s.start(ctx));
        }
        Ok(sim)
    }

    /// Call flow `flow`'s source with its context at `at`.
    fn with_source(
        &mut self,
        flow: usize,
        at: Nanos,
        call: impl FnOnce(&dyn Source, &mut FlowCtx<'_>),
    ) {
        let source = Rc::clone(&self.sources[flow]);
        call(&*source, &mut FlowCtx::new(self, flow, at));
    }

    /// Call the source of TCP connection `conn`'s flow with its context at `at`.
    pub(crate) fn with_conn_source(
        &mut self,
        conn: usize,
        at: Nanos,
        call: impl FnOnce(&dyn Source, &mut FlowCtx<'_>, ConnId),
    ) {
        let flow = self.conns[conn].flow;
        self.with_source(flow, at, |s, ctx| call(s, ctx, ConnId(conn as u32)));
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
            Event::Source { flow, event } => {
                self.with_source(flow as usize, at, |s, ctx| s.due(ctx, event))
            }
            Event::TcpTimer { conn } => self.tcp_timer(at, conn),
            Event::SynTimer { conn, n } => self.syn_timer(at, conn as usize, n),
            Event::SynAckTimer { conn, n } => self.syn_ack_timer(at, conn as usize, n),
            // The agenda hands the network's timers over as `Due::Network`.
            Event::Network(_) => {}
        }
    }

    /// The next packet's id.
    pub(crate) fn take_id(&mut self) -> u64 {
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
        marking.apply(&mut p);
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
                Output::Delivered { at, packet, stamps } => {
                    self.wake_waiting(at, packet.src);
                    let inflight = self
                        .slab
                        .get_mut(packet.token as usize)
                        .and_then(Option::as_mut);
                    let to = inflight.map(|f| {
                        f.crossed(&packet, &stamps, at);
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
            self.arrive_tcp(at, &packet);
            return;
        }
        let Some(f) = self.release(packet.token) else {
            return;
        };
        match f.payload {
            Payload::App(message) => {
                if message.counted() {
                    let direction = match message {
                        Message::PingReply { .. } => Direction::Back,
                        _ => Direction::Forward,
                    };
                    let stages = f.stages(at);
                    if let Some(stats) = self.flow_stats.get_mut(f.flow as usize) {
                        stats.budget(BudgetArrival {
                            direction,
                            sent_at: f.sent_at,
                            at,
                            stages: stages.as_ref(),
                            percentiles: true,
                        });
                    }
                }
                let arrival = Arrival {
                    message,
                    from: f.from,
                    to: f.to,
                    sent_at: f.sent_at,
                    packet: &packet,
                };
                self.with_source(f.flow as usize, at, |s, ctx| s.arrived(ctx, arrival));
            }
            // Handled in place by `arrive_tcp`.
            Payload::Tcp { .. } => {}
            Payload::Syn { conn } => self.send_syn_ack(at, conn as usize),
            Payload::SynAck { conn } => self.syn_ack_arrived(at, conn as usize),
            Payload::HandshakeAck { conn } => self.handshake_ack_arrived(at, conn as usize),
            // Another BSS's packets leave by `arrives_away` before they get here.
            Payload::Transit { .. } => {}
        }
    }

    /// A packet was dropped on the way.
    pub(crate) fn lost(&mut self, at: Nanos, packet: Packet, reason: DropReason) {
        self.dropped += 1;
        let refusal = self.refusal();
        if !refusal {
            self.wake_waiting(at, packet.src);
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
        self.with_source(flow, at, |s, ctx| s.lost(ctx, refusal));
    }

    /// A packet is being lost: whether that is a refusal (a packet is being written,
    /// [`FlowCtx::write`]), which the write then notes.
    fn refusal(&mut self) -> bool {
        let refusal = self.writing.is_some();
        if let Some(write) = self.writing.as_mut() {
            write.refused = true;
        }
        refusal
    }

    /// Flow `flow`'s source waits for node `node` to get a packet out.
    pub(crate) fn wait_for_room(&mut self, flow: u32, node: NodeId) {
        self.waiting.push(Waiting { flow, node });
    }

    /// Node `node` got a packet out: the first of its sources waiting for room (in the
    /// order they began to wait) is told so. One packet out makes room for one:
    /// waking every waiting source would have each write into a queue that has room
    /// for one of them.
    // perf: once per packet out of the cell; mostly no source waits.
    #[inline(always)]
    fn wake_waiting(&mut self, at: Nanos, node: NodeId) {
        if !self.waiting.is_empty() {
            self.wake_first_waiting(at, node);
        }
    }

    /// [`Simulation::wake_waiting`] when some source waits.
    #[inline(never)]
    fn wake_first_waiting(&mut self, at: Nanos, node: NodeId) {
        let Some(i) = self.waiting.iter().position(|w| w.node == node) else {
            return;
        };
        let flow = self.waiting.remove(i).flow as usize;
        self.with_source(flow, at, |s, ctx| s.room(ctx));
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
        // Jain's index over the stations that had traffic to send or receive: an idle
        // station's nil share is not unfairness (an apartment block with one loaded
        // station of four read 0.25).
        let active = |station: u16| {
            cell.stats()
                .get(usize::from(station))
                .is_some_and(|s| s.up.offered_packets + s.down.offered_packets > 0)
        };
        let shares: Vec<f64> = stations
            .iter()
            .filter(|s| active(s.station))
            .map(|s| s.airtime_share)
            .collect();
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
            groups: Vec::new(),
            flows: self
                .sources
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
                        r.rename();
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
            kernel_code: txop_results::results::kernel_code(cell),
        }
    }
}
