//! The virtual-time driver: feeds the cell from traffic models, carries packets over the
//! wired link to and from the servers, answers pings, and collects results.
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

use crate::conn_timer::ConnTimer;
use crate::tcp::{Segment, TcpReceiver, TcpSender};
use crate::traffic::saturated::SaturatedWriter;
use crate::traffic::{Flow, Host};
use txop_core::cell::{Cell, CellConfig, Output};
use txop_core::driver::bus::{BusConfig, HostBus};
use txop_core::network::{
    Agenda, AgendaEvent, Call, Due, EventQueue, NetOutput, Network, NetworkConfig, Timer,
    WiredConfig,
};
use txop_core::packet::Ecn;
use txop_core::{DropReason, Nanos, NodeId, Packet};
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
enum Payload {
    /// Data of a one-way flow.
    Data,
    PingRequest {
        seq: u64,
    },
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

/// One TCP connection's two ends.
struct TcpConn {
    flow: usize,
    sender: Host,
    receiver: Host,
    tid: u8,
    dscp: u8,
    hash: u32,
    snd: TcpSender,
    rcv: TcpReceiver,
    /// Its timer: the deadline asked for last and its queue entries.
    timer: ConnTimer,
    /// Web: the object being received and the stream offset where it ends.
    object: Option<(u32, u64)>,
    /// Web: the stream offset already asked for (requested bytes so far).
    requested: u64,
    /// The client has its SYN-ACK / the server has the handshake's last ACK.
    client_open: bool,
    server_open: bool,
    /// SYNs (client) and SYN-ACKs (server) sent so far.
    syns: u32,
    syn_acks: u32,
    /// The sender's retransmissions already added to its flow's count.
    retransmits_counted: u64,
}

/// Linux's handshake timers: the first SYN and SYN-ACK retransmission after 1 s
/// (`TCP_TIMEOUT_INIT`), doubling; `tcp_syn_retries` 6 and `tcp_synack_retries` 5.
const SYN_TIMEOUT: Nanos = Nanos::from_secs(1);
const SYN_RETRIES: u32 = 6;
const SYNACK_RETRIES: u32 = 5;

/// The retransmission timeout after the `n`-th SYN or SYN-ACK (1-based): 1 s doubling.
fn syn_timeout(n: u32) -> Nanos {
    Nanos(SYN_TIMEOUT.as_ns() << (n - 1))
}
/// IP length of a SYN or SYN-ACK (20 + 20 + 20 B of options) and of a bare ACK.
const SYN_BYTES: u32 = 60;
const ACK_BYTES: u32 = 52;

impl TcpConn {
    /// The end that opens the connection: the station (netperf, wget and browsers run
    /// on the station in every seed experiment).
    fn client(&self) -> Host {
        if matches!(self.sender, Host::Station(_)) {
            self.sender
        } else {
            self.receiver
        }
    }

    fn server(&self) -> Host {
        if self.client() == self.sender {
            self.receiver
        } else {
            self.sender
        }
    }

    /// The data sender may send: it has completed its side of the handshake.
    fn sender_open(&self) -> bool {
        if self.sender == self.client() {
            self.client_open
        } else {
            self.server_open
        }
    }
}

/// A web page load in progress.
#[derive(Default)]
struct WebState {
    /// Connection indices in `conns` (opened as the page needs them).
    conns: Vec<usize>,
    /// Next object not yet requested.
    next_object: u32,
    /// Objects received in full.
    done: u32,
    started: Nanos,
}

/// A packet in flight, beyond what the cell sees.
#[derive(Clone, Copy, Debug)]
struct InFlight {
    flow: u32,
    to: Host,
    from: Host,
    /// When the application sent it.
    sent_at: Nanos,
    payload: Payload,
}

/// Things that happen outside the cell: the traffic's, and the network's timers that
/// the [`Agenda`] queues (packets reaching the end of a wired link are not queued: the
/// agenda keeps their order). Indices are `u32` so that queue entries are small.
#[derive(Clone, Copy, Debug)]
enum Event {
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

/// A saturated flow's packet being written ([`Simulation::write_saturated`]).
#[derive(Clone, Copy, Debug)]
struct WriteInProgress {
    /// The network refused a packet in this write (the written one, or one it pushed
    /// out, whoever's).
    refused: bool,
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
    flows: Vec<Flow>,
    flow_stats: Vec<FlowStats>,
    events: EventQueue<Event>,
    slab: Vec<Option<InFlight>>,
    free: Vec<u32>,
    ping_seq: Vec<u64>,
    conns: Vec<TcpConn>,
    /// The connection of each TCP flow, once open.
    flow_conn: Vec<Option<usize>>,
    web: Vec<WebState>,
    /// Each saturated flow's writer (`None` for other flows), the flows whose writers
    /// are stalled (see [`crate::traffic::saturated`]), and while a saturated flow's
    /// packet is being written, whether the network refused a packet in the write.
    writers: Vec<Option<SaturatedWriter>>,
    stalled: Vec<u32>,
    writing: Option<WriteInProgress>,
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
        }
        self.now = until;
    }

    fn alloc(&mut self, f: InFlight) -> u64 {
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
            Event::TcpTimer { conn: id } => {
                let conn = id as usize;
                let c = &mut self.conns[conn];
                let event = Event::TcpTimer { conn: id };
                if !c.timer.on_entry(at, &mut self.events, event) {
                    return; // superseded by a later reschedule
                }
                c.snd.handle_timeout(at);
                c.rcv.handle_timeout(at);
                self.pump_tcp(at, conn);
            }
            Event::SynTimer { conn, n } => {
                let conn = conn as usize;
                let c = &self.conns[conn];
                if !c.client_open && c.syns == n && n <= SYN_RETRIES {
                    self.send_syn(at, conn);
                }
            }
            Event::SynAckTimer { conn, n } => {
                let conn = conn as usize;
                let c = &self.conns[conn];
                if !c.server_open && c.syn_acks == n && n <= SYNACK_RETRIES {
                    self.send_syn_ack(at, conn);
                }
            }
            // The agenda hands the network's timers over as `Due::Network`.
            Event::Network(_) => {}
            Event::TcpStop { flow } => {
                if let Some(c) = self.flow_conn[flow as usize] {
                    self.conns[c].snd.stop_writing();
                }
            }
            Event::WebRetry { conn, object } => {
                let conn = conn as usize;
                // The server never saw the request (it was lost): ask again.
                let c = &self.conns[conn];
                if c.object
                    .is_some_and(|(o, end)| o == object && c.requested < end)
                {
                    self.web_request(at, conn, object);
                }
            }
        }
    }

    /// A flow's application sends its next packet (or, for TCP, opens the connection).
    fn offer(&mut self, at: Nanos, flow: usize) {
        let (from, to) = (self.flows[flow].src(), self.flows[flow].dst());
        if let Flow::Tcp(t) = &self.flows[flow] {
            let (sender, receiver, cfg, bytes) = (t.sender, t.receiver, t.cfg, t.bytes);
            let (tid, dscp, hash) = (t.tid, t.dscp, t.flow_hash);
            let conn = self.open_conn(at, flow, sender, receiver, cfg, bytes, (tid, dscp, hash));
            self.flow_conn[flow] = Some(conn);
            self.send_syn(at, conn);
            return;
        }
        if let Flow::Web(_) = &self.flows[flow] {
            self.web_start(at, flow);
            return;
        }
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
        match &self.flows[flow] {
            Flow::Saturated(_) | Flow::Cbr(_) => {
                if let Flow::Cbr(c) = &self.flows[flow] {
                    self.events
                        .push(at + c.interval(), Event::Offer { flow: flow as u32 });
                }
                let token = self.alloc(InFlight {
                    flow: flow as u32,
                    to,
                    from,
                    sent_at: at,
                    payload: Payload::Data,
                });
                let id = self.take_id();
                if let Some(p) = self.flows[flow].packet(id, token) {
                    if self.writers[flow].is_some() {
                        self.write_saturated(at, flow, from, p);
                    } else {
                        self.send(at, from, p);
                    }
                }
            }
            Flow::Ping(ping) => {
                let next = at + ping.interval;
                if ping.stop.is_none_or(|s| next < s) {
                    self.events.push(next, Event::Offer { flow: flow as u32 });
                }
                let (len, tid, dscp, hash) = (ping.len_bytes, ping.tid, ping.dscp, ping.flow_hash);
                let seq = self.ping_seq[flow];
                self.ping_seq[flow] += 1;
                let token = self.alloc(InFlight {
                    flow: flow as u32,
                    to,
                    from,
                    sent_at: at,
                    payload: Payload::PingRequest { seq },
                });
                let p = self.make_packet(from, to, len, tid, dscp, hash, token);
                self.send(at, from, p);
            }
            Flow::Tcp(_) | Flow::Web(_) => {}
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

    /// The client sends a SYN (again) and arms its retransmission timer.
    fn send_syn(&mut self, at: Nanos, conn: usize) {
        let c = &mut self.conns[conn];
        c.syns += 1;
        let (n, client, server) = (c.syns, c.client(), c.server());
        self.events.push(
            at + syn_timeout(n),
            Event::SynTimer {
                conn: conn as u32,
                n,
            },
        );
        let syn = Payload::Syn { conn: conn as u32 };
        self.conn_packet(at, conn, syn, SYN_BYTES, client, server);
    }

    /// The server answers a SYN (again). When it sends the data it waits for the
    /// handshake's last ACK, retransmitting the SYN-ACK until it comes.
    fn send_syn_ack(&mut self, at: Nanos, conn: usize) {
        let c = &mut self.conns[conn];
        c.syn_acks += 1;
        let (n, client, server) = (c.syn_acks, c.client(), c.server());
        if server == c.sender && !c.server_open {
            self.events.push(
                at + syn_timeout(n),
                Event::SynAckTimer {
                    conn: conn as u32,
                    n,
                },
            );
        }
        let syn_ack = Payload::SynAck { conn: conn as u32 };
        self.conn_packet(at, conn, syn_ack, SYN_BYTES, server, client);
    }

    /// The client's last ACK of the handshake, when the server is the one that sends.
    fn send_handshake_ack(&mut self, at: Nanos, conn: usize) {
        let c = &self.conns[conn];
        let (client, server) = (c.client(), c.server());
        let ack = Payload::HandshakeAck { conn: conn as u32 };
        self.conn_packet(at, conn, ack, ACK_BYTES, client, server);
    }

    /// Open a TCP connection; the client's SYN goes first ([`Simulation::send_syn`]).
    #[allow(clippy::too_many_arguments)]
    fn open_conn(
        &mut self,
        now: Nanos,
        flow: usize,
        sender: Host,
        receiver: Host,
        cfg: crate::tcp::TcpConfig,
        bytes: Option<u64>,
        (tid, dscp, hash): (u8, u8, u32),
    ) -> usize {
        self.conns.push(TcpConn {
            flow,
            sender,
            receiver,
            tid,
            dscp,
            hash,
            snd: TcpSender::new(cfg, now, bytes),
            rcv: TcpReceiver::new(cfg),
            timer: ConnTimer::default(),
            object: None,
            requested: 0,
            client_open: false,
            server_open: false,
            syns: 0,
            syn_acks: 0,
            retransmits_counted: 0,
        });
        self.conns.len() - 1
    }

    /// A page load begins: a connection for the page itself.
    fn web_start(&mut self, at: Nanos, flow: usize) {
        let w = &mut self.web[flow];
        w.next_object = 0;
        w.done = 0;
        w.started = at;
        self.web_open(at, flow);
    }

    /// Open one more connection for a page (the server sends, the client receives);
    /// its handshake goes first.
    fn web_open(&mut self, at: Nanos, flow: usize) {
        let Flow::Web(page) = &self.flows[flow] else {
            return;
        };
        let (client, server, cfg, hash) = (page.client, page.server, page.cfg, page.flow_hash);
        let k = self.web[flow].conns.len() as u32;
        let conn = self.open_conn(at, flow, server, client, cfg, Some(0), (0, 0, hash ^ k));
        self.web[flow].conns.push(conn);
        self.send_syn(at, conn);
    }

    /// Send a packet of connection `conn` that is not a TCP segment.
    fn conn_packet(
        &mut self,
        at: Nanos,
        conn: usize,
        payload: Payload,
        len: u32,
        from: Host,
        to: Host,
    ) {
        let c = &self.conns[conn];
        let (flow, tid, dscp, hash) = (c.flow, c.tid, c.dscp, c.hash);
        let token = self.alloc(InFlight {
            flow: flow as u32,
            to,
            from,
            sent_at: at,
            payload,
        });
        let p = self.make_packet(from, to, len, tid, dscp, hash, token);
        self.send(at, from, p);
    }

    /// Ask for the next object on connection `conn`, if any is left.
    fn web_next(&mut self, at: Nanos, conn: usize) {
        let flow = self.conns[conn].flow;
        let Flow::Web(page) = &self.flows[flow] else {
            return;
        };
        let n = page.objects_bytes.len() as u32;
        let w = &mut self.web[flow];
        // The page itself first; the other objects only once it is complete.
        if w.next_object >= n || (w.next_object > 0 && w.done == 0) {
            self.conns[conn].object = None;
            return;
        }
        let object = w.next_object;
        w.next_object += 1;
        self.web_request(at, conn, object);
    }

    fn web_request(&mut self, at: Nanos, conn: usize, object: u32) {
        let flow = self.conns[conn].flow;
        let Flow::Web(page) = &self.flows[flow] else {
            return;
        };
        let (client, server, req) = (page.client, page.server, page.request_bytes);
        let size = page.objects_bytes[object as usize] as u64;
        let c = &mut self.conns[conn];
        if c.object.map(|(o, _)| o) != Some(object) {
            c.object = Some((object, c.requested + size));
        }
        self.conn_packet(
            at,
            conn,
            Payload::WebRequest {
                conn: conn as u32,
                object,
            },
            req,
            client,
            server,
        );
        self.events.push(
            at + Nanos::from_secs(1),
            Event::WebRetry {
                conn: conn as u32,
                object,
            },
        );
    }

    /// The client received more of connection `conn`'s stream.
    fn web_progress(&mut self, at: Nanos, conn: usize) {
        let c = &self.conns[conn];
        let Some((_, end)) = c.object else {
            return;
        };
        if c.rcv.bytes_received() < end {
            return;
        }
        let flow = c.flow;
        let Flow::Web(page) = &self.flows[flow] else {
            return;
        };
        let (n, max_conns, repeat) = (
            page.objects_bytes.len() as u32,
            page.connections.max(1) as usize,
            page.repeat_after,
        );
        self.conns[conn].object = None;
        let w = &mut self.web[flow];
        w.done += 1;
        if w.done == n {
            let t = (at - w.started).as_secs_f64();
            self.flow_stats[flow].page_loaded(t);
            if let Some(r) = repeat {
                self.events.push(at + r, Event::Offer { flow: flow as u32 });
            }
            return;
        }
        let first_done = w.done == 1;
        self.web_next(at, conn);
        // The page is in: open the browser's other connections for its objects.
        if first_done {
            while self.web[flow].conns.len() < max_conns
                && (self.web[flow].conns.len() as u32) < n - 1
            {
                self.web_open(at, flow);
            }
        }
    }

    /// Send whatever a TCP connection's two ends have to send now, and reschedule its
    /// timer.
    fn pump_tcp(&mut self, now: Nanos, conn: usize) {
        let c = &self.conns[conn];
        let (flow, sender, receiver, tid, dscp, hash) =
            (c.flow, c.sender, c.receiver, c.tid, c.dscp, c.hash);
        // No data before the sender's side of the handshake is complete.
        let open = c.sender_open();
        loop {
            let c = &mut self.conns[conn];
            let data = if open { c.snd.poll_transmit(now) } else { None };
            let (seg, from, to) = if let Some(seg) = data {
                (seg, sender, receiver)
            } else if let Some(ack) = c.rcv.poll_ack(now) {
                (ack, receiver, sender)
            } else {
                break;
            };
            if seg.len > 0 {
                self.flow_stats[flow].offered += 1;
            }
            let token = self.alloc(InFlight {
                flow: flow as u32,
                to,
                from,
                sent_at: now,
                payload: Payload::Tcp {
                    conn: conn as u32,
                    seg,
                },
            });
            let mut p = self.make_packet(from, to, seg.ip_len(), tid, dscp, hash, token);
            if seg.ect {
                p.ecn = Ecn::Ect0;
            }
            self.send(now, from, p);
        }
        let c = &mut self.conns[conn];
        let next = match (c.snd.poll_timeout(), c.rcv.poll_timeout()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if let Some(t) = next {
            if c.timer.deadline() != Some(t) {
                let event = Event::TcpTimer { conn: conn as u32 };
                c.timer.set(now, t, &mut self.events, event);
            }
        }
    }

    fn take_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    #[allow(clippy::too_many_arguments)]
    fn make_packet(
        &mut self,
        from: Host,
        to: Host,
        len: u32,
        tid: u8,
        dscp: u8,
        flow_hash: u32,
        token: u64,
    ) -> Packet {
        let id = self.take_id();
        let mut p = Packet::new(id, from.node(), to.node(), len);
        p.tid = tid;
        p.dscp = dscp;
        p.flow = flow_hash;
        p.token = token;
        p
    }

    /// A host hands a packet to the network.
    fn send(&mut self, now: Nanos, from: Host, p: Packet) {
        self.offered += 1;
        let call = self.net.handle_packet(now, from, p);
        self.pump_network(call);
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
    fn drain_outputs(&mut self) {
        while let Some(o) = self.net.poll_cell_output() {
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
            Payload::PingRequest { seq } => {
                // Echo reply, at once, the same size, back the way it came.
                let token = self.alloc(InFlight {
                    flow: f.flow,
                    to: f.from,
                    from: f.to,
                    sent_at: at,
                    payload: Payload::PingReply {
                        seq,
                        request_sent: f.sent_at,
                    },
                });
                let (tid, dscp, hash) = (packet.tid, packet.dscp, packet.flow);
                let p = self.make_packet(f.to, f.from, packet.len_bytes, tid, dscp, hash, token);
                self.send(at, f.to, p);
            }
            // Handled in place by `arrive_tcp`.
            Payload::Tcp { .. } => {}
            Payload::Syn { conn } => self.send_syn_ack(at, conn as usize),
            Payload::SynAck { conn } => {
                let conn = conn as usize;
                let c = &mut self.conns[conn];
                if c.client_open {
                    // A retransmitted SYN-ACK: the ACK to it was lost; send it again.
                    if c.server() == c.sender && !matches!(self.flows[flow], Flow::Web(_)) {
                        self.send_handshake_ack(at, conn);
                    }
                    return;
                }
                c.client_open = true;
                if matches!(self.flows[flow], Flow::Web(_)) {
                    // The request carries the ACK; the server needs no other.
                    self.conns[conn].server_open = true;
                    self.web_next(at, conn);
                } else if c.client() == c.sender {
                    self.pump_tcp(at, conn);
                } else {
                    self.send_handshake_ack(at, conn);
                }
            }
            Payload::HandshakeAck { conn } => {
                let c = &mut self.conns[conn as usize];
                if !c.server_open {
                    c.server_open = true;
                    self.pump_tcp(at, conn as usize);
                }
            }
            Payload::WebRequest { conn, object } => {
                let conn = conn as usize;
                let Flow::Web(page) = &self.flows[flow] else {
                    return;
                };
                let size = page.objects_bytes[object as usize] as u64;
                let c = &mut self.conns[conn];
                // A repeated request for an object already being sent is ignored.
                if c.object
                    .is_some_and(|(o, end)| o == object && c.requested < end)
                {
                    c.requested += size;
                    c.snd.add_bytes(at, size);
                    self.pump_tcp(at, conn);
                }
            }
            Payload::PingReply { seq, request_sent } => {
                // The reply left the far host when the request arrived there.
                let forward = f.sent_at - request_sent;
                let back = at - f.sent_at;
                self.flow_stats[flow].echo(at, seq, forward, back);
            }
        }
    }

    /// A TCP segment (slab entry `token`, which must hold one) reached its end: the
    /// receiver or the sender takes it where it lies in the slab, instead of the
    /// entry being copied out first (it is mostly the segment, thirteen words). The
    /// entry is freed before anything new is sent, where [`Simulation::release`]
    /// would have freed it as far as tokens handed out later are concerned.
    fn arrive_tcp(&mut self, at: Nanos, token: usize, ecn: Ecn) {
        let Some(Some(f)) = self.slab.get_mut(token) else {
            return;
        };
        let (flow, to, sent_at) = (f.flow as usize, f.to, f.sent_at);
        let Payload::Tcp { conn, seg } = &mut f.payload else {
            return;
        };
        let conn = *conn as usize;
        seg.ce = ecn == Ecn::Ce;
        let seg: &Segment = seg;
        let c = &mut self.conns[conn];
        let new_bytes = if to == c.receiver {
            if seg.len > 0 {
                self.flow_stats[flow].delivered += 1;
            }
            let before = c.rcv.bytes_received();
            c.rcv.on_segment(at, seg);
            c.rcv.bytes_received() - before
        } else {
            c.snd.on_ack(at, seg);
            let (cwnd, retransmits) = (c.snd.cwnd_bytes(), c.snd.retransmits());
            let new = retransmits - c.retransmits_counted;
            c.retransmits_counted = retransmits;
            self.flow_stats[flow].tcp_sample(at, cwnd, new);
            0
        };
        self.slab[token] = None;
        self.free.push(token as u32);
        if new_bytes > 0 {
            self.flow_stats[flow].delivered_bytes_at(at, sent_at, new_bytes);
            self.web_progress(at, conn);
        }
        self.pump_tcp(at, conn);
    }

    /// A packet was dropped on the way.
    fn lost(&mut self, at: Nanos, packet: Packet, reason: DropReason) {
        self.dropped += 1;
        let refusal = self.writing.is_some();
        if let Some(write) = self.writing.as_mut() {
            write.refused = true;
        }
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
        if !refusal {
            self.saturated_left(at, flow);
            return;
        }
        // Refused while a saturated flow's packet was being written: owed.
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
    fn saturated_left(&mut self, at: Nanos, flow: usize) {
        if let Some(w) = self.writers[flow].as_mut() {
            w.left();
            self.events.push(at, Event::Offer { flow: flow as u32 });
        }
    }

    /// Node `node` got a packet out: the first of its saturated flows' stalled writers
    /// (in the order they stalled) writes again. One packet out makes room for one:
    /// waking every stalled writer would have each write into a queue that has room
    /// for one of them.
    fn wake_stalled(&mut self, at: Nanos, node: NodeId) {
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
                .map(|(i, (f, st))| st.result(i, (f.kind(), f.label()), f.src(), f.dst(), secs))
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
