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
//! A station may have a host bus ([`SimConfig::host_bus`], `txop_core::driver::bus`)
//! between its host and its WLAN chip: then what the station's host sends crosses the
//! bus before it enters the cell, and what the cell delivers to the station crosses it
//! before it reaches the host. Without one the host hands packets to the cell at once.

use crate::events::EventQueue;
use crate::flowstats::FlowStats;
use crate::net::wired::WiredLink;
use crate::results::{BusResult, Conservation, Results, StationResult};
use crate::tcp::{Segment, TcpConn};
use crate::traffic::saturated::{SaturatedWriter, WriteInProgress};
use crate::traffic::web::WebState;
use crate::traffic::{Flow, Host};
use txop_core::cell::{Cell, CellConfig, Output};
use txop_core::driver::bus::{BusConfig, BusOutput, HostBus};
use txop_core::{DropReason, Nanos, Packet};

/// The wired link between the AP and the servers (each direction alike).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WiredConfig {
    pub rate_bps: u64,
    /// One-way propagation delay.
    pub delay: Nanos,
    pub limit_packets: usize,
}

impl Default for WiredConfig {
    /// Gigabit Ethernet to a server on the LAN: 1 Gbit/s, 1 ms one way, 1000 packets.
    fn default() -> Self {
        WiredConfig {
            rate_bps: 1_000_000_000,
            delay: Nanos::from_ms(1),
            limit_packets: 1000,
        }
    }
}

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
            | Payload::WebRequest { .. } => false,
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

/// Things that happen outside the cell (besides packets reaching the end of a wired
/// link, which the links hold in order: see [`Simulation::run_until`]). Indices are
/// `u32` so that queue entries are small.
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
    /// A station's host bus has a deadline (index into `buses`).
    BusTimer { bus: u32 },
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
    cell: Cell,
    pub(crate) flows: Vec<Flow>,
    pub(crate) flow_stats: Vec<FlowStats>,
    pub(crate) events: EventQueue<Event>,
    /// Each packet in flight by its token, and the tokens free for reuse.
    pub(crate) slab: Vec<Option<InFlight>>,
    pub(crate) free: Vec<u32>,
    down: WiredLink,
    up: WiredLink,
    /// Each ping flow's next request number (index = flow).
    pub(crate) ping_seq: Vec<u64>,
    /// Every TCP connection opened so far (index = the connection's id).
    pub(crate) conns: Vec<TcpConn>,
    /// The connection of each TCP flow, once open.
    pub(crate) flow_conn: Vec<Option<usize>>,
    /// Each web flow's page load (index = flow).
    pub(crate) web: Vec<WebState>,
    /// Each station's host bus (index = station − 1), and its scheduled deadline
    /// (other `BusTimer` events are stale).
    buses: Vec<Option<HostBus>>,
    bus_deadline: Vec<Option<Nanos>>,
    /// Bytes each host bus handed to its station's host (index = station − 1).
    bus_to_host_bytes: Vec<u64>,
    /// Each saturated flow's writer (`None` for other flows), the flows whose writers
    /// are stalled (see [`crate::traffic::saturated`]), and while a saturated flow's
    /// packet is being written, whether the network refused a packet in the write.
    pub(crate) writers: Vec<Option<SaturatedWriter>>,
    pub(crate) stalled: Vec<u32>,
    pub(crate) writing: Option<WriteInProgress>,
    /// Events and cell deadlines handled since simulated time last advanced, and the
    /// bound on them (the watchdog; see [`Simulation::run_until`]).
    same_instant_steps: u64,
    stuck: Option<Stuck>,
    next_id: u64,
    now: Nanos,
    end: Nanos,
    offered: u64,
    delivered: u64,
    dropped: u64,
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
        if cfg.host_bus.len() > stations as usize {
            return Err(format!(
                "host_bus: {} entries for {stations} stations",
                cfg.host_bus.len()
            ));
        }
        let buses = cfg
            .host_bus
            .iter()
            .enumerate()
            .map(|(i, b)| {
                b.map(HostBus::new)
                    .transpose()
                    .map_err(|e| format!("station {}: {e}", i + 1))
            })
            .collect::<Result<Vec<_>, String>>()?;
        let cell = Cell::new(cfg.cell, cfg.seed)?;
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
        let w = cfg.wired;
        Ok(Simulation {
            cell,
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
            down: WiredLink::new(w.rate_bps, w.delay, w.limit_packets),
            up: WiredLink::new(w.rate_bps, w.delay, w.limit_packets),
            bus_deadline: vec![None; buses.len()],
            bus_to_host_bytes: vec![0; buses.len()],
            buses,
            writers,
            stalled: Vec::new(),
            writing: None,
            same_instant_steps: 0,
            stuck: None,
            next_id: 0,
            now: Nanos::ZERO,
            end: cfg.duration,
            offered: 0,
            delivered: 0,
            dropped: 0,
            seed: cfg.seed,
        })
    }

    pub fn cell(&self) -> &Cell {
        &self.cell
    }

    /// Each flow's counters, in flow order.
    pub fn flow_stats(&self) -> &[FlowStats] {
        &self.flow_stats
    }

    /// Station `station`'s host bus, if it has one.
    pub fn host_bus(&self, station: u16) -> Option<&HostBus> {
        self.buses.get(station.checked_sub(1)? as usize)?.as_ref()
    }

    /// Run until `until` (or the configured end, whichever is earlier).
    ///
    /// Three sources, in time order: the cell's deadline, the event queue, and the
    /// packets reaching the end of the two wired links. A packet on a wire is an event
    /// in all but storage: it took its sequence number from the queue when it was sent,
    /// and the loop takes whichever of the queue's and the wires' oldest has the
    /// smaller (time, sequence), exactly as if it were in the queue.
    ///
    /// Most turns only run the cell's deadline, and most of those add nothing to the
    /// queue or the wires: the earliest of those two is looked up again only after an
    /// event or a wire arrival (pops) or when [`EventQueue::pushes`] moved (every
    /// push, and every packet put on a wire, takes a number from the queue).
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
        // The queue's push count when `tw` (the wires' oldest packet) and `tx` (the
        // earliest of the queue and the wires) were looked up (`None`: not since the
        // last event or wire arrival).
        let mut looked_at: Option<u64> = None;
        let (mut tw, mut tx) = (None, None);
        loop {
            let pushes = self.events.pushes();
            if looked_at != Some(pushes) {
                tw = self.wire_next();
                tx = earliest(self.events.peek_time(), tw.map(|(t, _)| t));
                looked_at = Some(pushes);
            }
            let tc = self.cell.poll_timeout();
            let Some(next) = earliest(tc, tx) else {
                break;
            };
            if next > until {
                break;
            }
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
                    return;
                }
            }
            self.now = next;
            // At one instant the cell's own deadline runs before external events (as
            // `Cell::handle_packet` would run it anyway).
            if tc == Some(next) {
                self.cell.handle_timeout(next);
            } else {
                looked_at = None;
                if let Some((_, wire_seq)) = tw.filter(|&(t, seq)| {
                    t == next && self.events.peek_seq_at(next).is_none_or(|e| seq < e)
                }) {
                    self.wire_arrival(next, wire_seq);
                } else if let Some((at, ev)) = self.events.pop() {
                    self.handle_event(at, ev);
                }
            }
            self.drain_outputs();
        }
        self.now = until;
    }

    /// Arrival time and sequence number of the earlier of the two wires' oldest
    /// packets.
    fn wire_next(&self) -> Option<(Nanos, u64)> {
        match (self.down.next_arrival(), self.up.next_arrival()) {
            (Some(d), Some(u)) => Some(d.min(u)),
            (d, u) => d.or(u),
        }
    }

    /// The oldest packet of a wired link (the one whose sequence number is `seq`)
    /// reaches its end: the AP (into the cell) or the server.
    fn wire_arrival(&mut self, at: Nanos, seq: u64) {
        if self.down.next_arrival().is_some_and(|(_, s)| s == seq) {
            if let Some(p) = self.down.arrive() {
                self.cell.handle_packet(at, p);
            }
        } else if let Some(p) = self.up.arrive() {
            self.arrive(at, p);
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

    fn release(&mut self, token: u64) -> Option<InFlight> {
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
            Event::BusTimer { bus } => {
                let bus = bus as usize;
                if self.bus_deadline[bus] != Some(at) {
                    return; // superseded
                }
                self.bus_deadline[bus] = None;
                if let Some(b) = &mut self.buses[bus] {
                    b.handle_timeout(at);
                }
                self.pump_bus(bus);
            }
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
        match from {
            Host::Server => {
                let events = &mut self.events;
                if let Err(p) = self.down.send_packet(now, p, || events.reserve_seq()) {
                    self.lost(now, p, DropReason::QueueFull);
                }
            }
            Host::Station(n) => match self.bus_index(n) {
                Some(i) => {
                    if let Some(b) = &mut self.buses[i] {
                        b.handle_host_packet(now, p);
                    }
                    self.pump_bus(i);
                }
                None => self.cell.handle_packet(now, p),
            },
            Host::Ap => self.cell.handle_packet(now, p),
        }
    }

    /// The index of station `n`'s host bus, if it has one.
    fn bus_index(&self, n: u16) -> Option<usize> {
        let i = (n as usize).checked_sub(1)?;
        self.buses.get(i)?.as_ref().map(|_| i)
    }

    /// Act on what host bus `i` produced, then schedule its next deadline.
    fn pump_bus(&mut self, i: usize) {
        while let Some(o) = self.buses[i].as_mut().and_then(|b| b.poll_output()) {
            match o {
                BusOutput::ToDevice { at, packet } => self.cell.handle_packet(at, packet),
                BusOutput::ToHost { at, packet } => {
                    self.bus_to_host_bytes[i] += packet.len_bytes as u64;
                    self.arrive(at, packet)
                }
                BusOutput::Dropped { at, packet, reason } => self.lost(at, packet, reason),
            }
        }
        let next = self.buses[i].as_ref().and_then(|b| b.poll_timeout());
        if let Some(t) = next {
            if self.bus_deadline[i] != Some(t) {
                self.bus_deadline[i] = Some(t);
                self.events.push(t, Event::BusTimer { bus: i as u32 });
            }
        }
    }

    pub(crate) fn drain_outputs(&mut self) {
        while let Some(o) = self.cell.poll_output() {
            match o {
                Output::Delivered { at, packet } => {
                    self.wake_stalled(at, packet.src);
                    let inflight = self
                        .slab
                        .get(packet.token as usize)
                        .and_then(Option::as_ref);
                    let to = inflight.map(|f| {
                        self.flow_stats[f.flow as usize].air_delivered(at, &packet);
                        f.to
                    });
                    if to == Some(Host::Server) {
                        let events = &mut self.events;
                        if let Err(packet) =
                            self.up.send_packet(at, packet, || events.reserve_seq())
                        {
                            self.lost(at, packet, DropReason::QueueFull);
                        }
                    } else if let Some(i) = to.and_then(|h| match h {
                        Host::Station(n) => self.bus_index(n),
                        _ => None,
                    }) {
                        // Into the station's chip; the host reads it over its bus.
                        if let Some(b) = &mut self.buses[i] {
                            b.handle_device_packet(at, packet);
                        }
                        self.pump_bus(i);
                    } else {
                        self.arrive(at, packet);
                    }
                }
                Output::Dropped {
                    at, packet, reason, ..
                } => self.lost(at, packet, reason),
                Output::Airtime(_) => {}
            }
        }
    }

    /// A packet reached its destination host.
    fn arrive(&mut self, at: Nanos, packet: Packet) {
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
        }
    }

    /// A packet was dropped on the way.
    fn lost(&mut self, at: Nanos, packet: Packet, reason: DropReason) {
        self.dropped += 1;
        let refusal = self.refusal();
        if !refusal {
            self.wake_stalled(at, packet.src);
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
        let busy = self.cell.busy_ns();
        let (mut stations, mut total_bytes) = crate::results::station_results(&self.cell, secs);
        self.host_bus_rows(&mut stations, &mut total_bytes, secs);
        let shares: Vec<f64> = stations.iter().map(|s| s.airtime_share).collect();
        let (beacon_airtime_ns, beacon_airtime_share) = crate::results::beacon_airtime(&self.cell);
        let inside_wired = self.slab.iter().flatten().count() as u64;
        Results {
            seed: self.seed,
            duration_s: secs,
            series_step_s: crate::flowstats::series_step(secs).as_secs_f64(),
            total_throughput_bps: crate::results::bits_per_s(total_bytes, secs),
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
                .map(|(i, (f, st))| st.result(i, (f.kind(), f.label()), f.src(), f.dst(), secs))
                .collect(),
            conservation: Conservation {
                offered_packets: self.offered,
                delivered_packets: self.delivered,
                dropped_packets: self.dropped,
                inside_packets: inside_wired,
            },
            host_buses: self.bus_results(secs),
        }
    }
}

impl Simulation {
    /// The rows of stations with a host bus count what their host got: downlink is
    /// what crossed the bus to the host (not what reached the chip over the air), and
    /// the bus's drops (host backlog, host → device queue, chip receive buffers: full
    /// queues all) are in `dropped_queue_full`. `total_bytes` follows.
    fn host_bus_rows(&self, stations: &mut [StationResult], total_bytes: &mut u64, secs: f64) {
        for (i, bus) in self.buses.iter().enumerate() {
            let (Some(bus), Some(row)) = (bus, stations.get_mut(i)) else {
                continue;
            };
            let air = &self.cell.stats()[i + 1];
            let (up, down) = (air.up.delivered_bytes, self.bus_to_host_bytes[i]);
            *total_bytes = *total_bytes - air.down.delivered_bytes + down;
            row.downlink_bps = crate::results::bits_per_s(down, secs);
            row.throughput_bps = crate::results::bits_per_s(up + down, secs);
            let s = bus.stats();
            row.dropped_queue_full +=
                s.dropped_host_backlog + s.dropped_host_tx_queue + s.dropped_device_rx;
        }
    }

    /// The host buses' counters over the run so far, busy times counted up to now
    /// ([`HostBus::stats_until`]: a transfer that would outlast the run counts only
    /// its part inside it).
    fn bus_results(&self, secs: f64) -> Vec<BusResult> {
        let frac = |ns: u64| {
            if secs > 0.0 {
                ns as f64 / 1e9 / secs
            } else {
                0.0
            }
        };
        self.buses
            .iter()
            .enumerate()
            .filter_map(|(i, b)| {
                let s = b.as_ref()?.stats_until(self.now);
                Some(BusResult {
                    station: i as u16 + 1,
                    packets_to_device: s.packets_to_device,
                    packets_to_host: s.packets_to_host,
                    transfers_to_device: s.transfers_to_device,
                    transfers_to_host: s.transfers_to_host,
                    bytes_to_device: s.bytes_to_device,
                    bytes_to_host: s.bytes_to_host,
                    interrupts: s.interrupts,
                    polls: s.polls,
                    polls_with_work: s.polls_with_work,
                    context_switches: s.context_switches,
                    cpu_busy_fraction: frac(s.cpu_busy_ns()),
                    cpu_driver_fraction: frac(s.cpu_driver_ns),
                    bus_busy_fraction: frac(s.bus_busy_ns),
                    dropped_host_backlog: s.dropped_host_backlog,
                    dropped_host_tx_queue: s.dropped_host_tx_queue,
                    dropped_device_rx: s.dropped_device_rx,
                })
            })
            .collect()
    }
}

/// The earlier of two optional times.
fn earliest(a: Option<Nanos>, b: Option<Nanos>) -> Option<Nanos> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Jain's fairness index (Σx)² / (n·Σx²): 1 when all equal, 1/n when one takes all.
pub fn jain_index(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let sum: f64 = xs.iter().sum();
    let sq: f64 = xs.iter().map(|x| x * x).sum();
    if sq == 0.0 {
        1.0
    } else {
        sum * sum / (n * sq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_index_bounds() {
        assert!((jain_index(&[1.0, 1.0, 1.0]) - 1.0).abs() < 1e-12);
        assert!((jain_index(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
    }
}
