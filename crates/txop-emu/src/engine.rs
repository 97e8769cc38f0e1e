//! The forwarding engine: real packets through the modelled network, sans-I/O.
//!
//! A packet read from an endpoint's TUN device enters the modelled network at its
//! arrival time, as the simulator's hosts' packets do: the same
//! [`Network`] (the cell, the wired link with the scenario's rate, delay and limit, and
//! each station's host bus) carries it. From the server it crosses the wired link and
//! enters the cell at the AP; from a station it crosses the station's host bus, if it
//! has one, and enters the cell there. What reaches a host is written to its TUN
//! device. Drops are real: the bytes are freed and never written. The engine never
//! reads a clock: the caller passes the time, and the [`Port`] it writes through tells
//! when the write really happened, which gives the timing error (actual − modelled
//! write time).
//!
//! What runs first among things due at the same instant is the [`Agenda`]'s rule, the
//! simulator's too: the cell's deadline, then the network's other timers in the order
//! they were scheduled.
//!
//! With several BSSs, each BSS is one engine, a [`BssDriver`] of the core's
//! [`World`](txop_core::world::World), which orders them and carries packets between
//! them: a packet for another BSS's endpoint ([`Site`]) crosses this BSS to its server's
//! end of the wired link (the junction, where every BSS's server stands) and is handed,
//! bytes and all, to the other BSS's engine, which carries it from its server's end to
//! its endpoint. A packet from a server to another BSS's station enters that BSS at
//! once (the server stands at the junction).

use crate::addr::{Endpoint, Site};
use crate::flows::FlowTable;
use crate::parse::{self, PacketInfo, ParseError};
use crate::slab::{PacketSlab, BUF_BYTES};
use crate::timing::LatenessHistogram;
use std::collections::VecDeque;
use txop_core::cell::{Cell, Output};
use txop_core::network::{
    Agenda, Call, DropPlace, Due, EventQueue, Host, NetOutput, Network, NetworkConfig, Timer,
};
use txop_core::packet::Ecn;
use txop_core::world::{BssDriver, BssId, Carried, Crossing, Leg, Route};
use txop_core::{DropReason, Nanos, NodeId, Packet};

/// Where the engine writes packets, and the clock that timestamps the writes.
pub trait Port {
    /// Now, on the engine's time axis.
    fn now(&self) -> Nanos;
    /// Write one IP packet into `to`'s network stack.
    fn write(&mut self, to: Endpoint, bytes: &[u8]) -> std::io::Result<()>;
    /// Write one IP packet into the network stack of `to`, an endpoint of any BSS.
    /// By default a port has one BSS's endpoints (BSS 0's); another BSS's are not
    /// found.
    fn write_at(&mut self, to: Site, bytes: &[u8]) -> std::io::Result<()> {
        match to.bss {
            BssId(0) => self.write(to.endpoint, bytes),
            _ => Err(std::io::Error::from(std::io::ErrorKind::NotFound)),
        }
    }
}

/// What the emulator keeps about a packet inside the network, beside its bytes.
#[derive(Clone, Copy, Debug)]
pub struct Meta {
    pub from: Endpoint,
    pub to: Endpoint,
    /// When it was read from the source's TUN device.
    pub read_at: Nanos,
    /// Its entry in the flow table.
    pub flow: u32,
    /// Where it is bound in another BSS, if it is: it leaves this BSS at the junction
    /// (`to` is the server's end of the wired link) and goes on there.
    pub far: Option<Site>,
}

/// What a packet crossing into another BSS carries beside the model's [`Packet`]: its
/// bytes and when it was read.
pub struct Bytes {
    buf: Box<[u8; BUF_BYTES]>,
    len: usize,
    read_at: Nanos,
}

/// Packet counters of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Counters {
    /// Packets read from the TUN devices.
    pub read_packets: u64,
    pub read_bytes: u64,
    /// Packets that entered the emulated network (read, parsed, routed, stored).
    pub offered_packets: u64,
    /// Packets written to their destination's TUN device.
    pub written_packets: u64,
    pub written_bytes: u64,
    /// Not IPv4 or IPv6: counted and dropped.
    pub not_ip: u64,
    /// IP packets with truncated or inconsistent headers: counted and dropped.
    pub malformed: u64,
    /// To an address that is not an endpoint of this cell (multicast, foreign
    /// addresses, absent stations): counted and dropped. Nothing leaves the cell.
    pub unroutable: u64,
    /// Refused because the packet slab was full.
    pub slab_full: u64,
    /// Tail-dropped by the wired link's queue.
    pub wire_drops: u64,
    /// Dropped by the cell (queues, AQM, retry limit).
    pub cell_drops: u64,
    /// Dropped by a station's host bus (its host backlog, host → device queue or
    /// chip receive buffers full).
    pub bus_drops: u64,
    /// Writes that failed (EIO while a TUN device is not up yet, …): dropped.
    pub write_errors: u64,
    /// Packets handed to another BSS at the junction (they left this BSS's network).
    pub junction_out: u64,
    /// Packets another BSS handed over at the junction (they entered this one).
    pub junction_in: u64,
    /// Packets the model marked CE (rewritten in the IP header).
    pub ce_marks: u64,
}

/// The engine: the modelled network, and the packets in flight.
pub struct Engine {
    /// Its BSS, and every BSS's station count (index = BSS): the address plan.
    bss: BssId,
    world_stations: Vec<u16>,
    /// Packets leaving for another BSS, not yet taken ([`BssDriver::poll_crossing`]).
    crossings: VecDeque<Crossing<Bytes>>,
    net: Network,
    /// The order of what is due in `net` ([`Agenda`]).
    agenda: Agenda,
    /// The network's timers the agenda queues (the engine has no events of its own).
    timers: EventQueue<Timer>,
    slab: PacketSlab<Meta>,
    stations: u16,
    next_id: u64,
    pub counters: Counters,
    pub flows: FlowTable,
    /// CE marks per station, [uplink, downlink].
    pub marks: Vec<[u64; 2]>,
    pub lateness: LatenessHistogram,
    /// The same for the first packet written for each modelled instant: the loop's
    /// own precision, without the serial writes of the rest of a burst (an A-MPDU's
    /// MSDUs all leave the model at the end of its PPDU).
    pub lateness_first: LatenessHistogram,
    last_write_at: Option<Nanos>,
    /// The radiotap capture of the air, when asked for ([`Engine::capture`]).
    capture: Option<Box<EngineCapture>>,
}

/// A running capture: the writer (into memory, bounded by its size bound) and the
/// first error it met.
struct EngineCapture {
    writer: txop_capture::AirWriter<Vec<u8>>,
    error: Option<std::io::Error>,
}

/// Packets the slab holds at most by default: more than any stack preset queues
/// (fq_codel's 10240 plus mac80211's 8192 plus driver rings and both wires).
pub const DEFAULT_SLAB_PACKETS: usize = 32_768;

impl Engine {
    /// An engine around `network` (its cell seeded with `seed`) that holds at most
    /// `slab_packets` packets. Errors name the problem (too many stations, an
    /// invalid network).
    pub fn new(network: NetworkConfig, seed: u64, slab_packets: usize) -> Result<Engine, String> {
        let stations = network.cell.stations.len() as u16;
        Engine::in_world(network, seed, slab_packets, BssId(0), vec![stations])
    }

    /// The engine of BSS `bss` of a world whose BSS `k` has `world_stations[k]`
    /// stations (the address plan, [`Site`]).
    pub fn in_world(
        network: NetworkConfig,
        seed: u64,
        slab_packets: usize,
        bss: BssId,
        world_stations: Vec<u16>,
    ) -> Result<Engine, String> {
        let stations = network.cell.stations.len();
        if stations > crate::addr::MAX_STATIONS as usize {
            return Err(format!(
                "stations: the emulator runs at most {} stations (one namespace each), not {stations}",
                crate::addr::MAX_STATIONS
            ));
        }
        Ok(Engine {
            bss,
            world_stations,
            crossings: VecDeque::new(),
            net: Network::new(network, seed)?,
            agenda: Agenda::new(),
            timers: EventQueue::default(),
            slab: PacketSlab::new(slab_packets),
            stations: stations as u16,
            next_id: 0,
            counters: Counters::default(),
            flows: FlowTable::default(),
            marks: vec![[0; 2]; stations + 1],
            lateness: LatenessHistogram::default(),
            lateness_first: LatenessHistogram::default(),
            last_write_at: None,
            capture: None,
        })
    }

    pub fn cell(&self) -> &Cell {
        self.net.cell()
    }

    /// The modelled network (the cell, the wired link, the host buses).
    pub fn network(&self) -> &Network {
        &self.net
    }

    pub fn stations(&self) -> u16 {
        self.stations
    }

    /// Packets inside the network now (queued in the model, in the air, on a wire).
    pub fn packets_inside(&self) -> usize {
        self.slab.len()
    }

    /// A buffer to read the next packet into.
    pub fn buffer(&mut self) -> Box<[u8; BUF_BYTES]> {
        self.slab.buffer()
    }

    /// Give back a buffer nothing was read into.
    pub fn recycle(&mut self, buf: Box<[u8; BUF_BYTES]>) {
        self.slab.recycle(buf);
    }

    /// The next time something happens inside the network.
    pub fn next_deadline(&mut self) -> Option<Nanos> {
        self.agenda.next_at(&self.net, &self.timers)
    }

    /// Its BSS.
    pub fn bss(&self) -> BssId {
        self.bss
    }

    /// Run everything due up to and including `now` (a lone engine; in a world, the
    /// world runs it).
    pub fn advance(&mut self, now: Nanos, port: &mut dyn Port) {
        while let Some(next) = self.agenda.next_at(&self.net, &self.timers) {
            if next > now {
                break;
            }
            self.step_at(next, port);
        }
    }

    /// Take and handle what is due at `next` (the agenda's next instant), then what
    /// the cell reported.
    fn step_at(&mut self, next: Nanos, port: &mut dyn Port) {
        match self.agenda.take(next, &mut self.timers) {
            Some(Due::Cell) => self.net.handle_cell_timeout(next),
            Some(Due::Network(timer)) => {
                let call = self.net.handle_timeout(next, timer);
                self.pump(call, port);
            }
            Some(Due::Event(_) | Due::Superseded) | None => {}
        }
        self.drain(port);
    }

    /// A packet of `len` bytes in `buf` was read from `from`'s TUN device at `now`.
    pub fn packet_in(
        &mut self,
        now: Nanos,
        from: Endpoint,
        buf: Box<[u8; BUF_BYTES]>,
        len: usize,
        port: &mut dyn Port,
    ) {
        self.advance(now, port);
        self.counters.read_packets += 1;
        self.counters.read_bytes += len as u64;
        // A read that filled the whole buffer may have been cut short.
        let parsed = match len < BUF_BYTES {
            true => PacketInfo::parse(&buf[..len]),
            false => Err(ParseError::Malformed),
        };
        let info = match parsed {
            Ok(i) => i,
            Err(ParseError::Malformed) => {
                self.counters.malformed += 1;
                return self.slab.recycle(buf);
            }
            Err(ParseError::NotIp) => {
                self.counters.not_ip += 1;
                return self.slab.recycle(buf);
            }
        };
        let (to, far) = match Site::of(info.dst, &self.world_stations) {
            Some(s) if s.bss == self.bss => (s.endpoint, None),
            // To another BSS from a station: up to the junction, then on there.
            Some(s) if from != Endpoint::Server => (Endpoint::Server, Some(s)),
            // From the server, which stands at the junction, to another BSS's
            // station: into that BSS at once. Server to server is not modelled.
            Some(s) if s.endpoint != Endpoint::Server => {
                self.counters.offered_packets += 1;
                let p = self.packet_of(&info, NodeId::AP, NodeId::AP, len);
                let bytes = Bytes {
                    buf,
                    len,
                    read_at: now,
                };
                return self.cross(now, s, p, bytes);
            }
            _ => (from, None),
        };
        if to == from {
            self.counters.unroutable += 1;
            return self.slab.recycle(buf);
        }
        let flow = self.flows.flow_of(&info, from, to);
        let meta = Meta {
            from,
            to,
            read_at: now,
            flow,
            far,
        };
        let Some(token) = self.slab.insert(buf, len, meta) else {
            self.counters.slab_full += 1;
            self.flows.stats(flow).dropped(DropReason::QueueFull);
            return;
        };
        self.counters.offered_packets += 1;
        self.flows.stats(flow).offered += 1;
        let (src, dst) = match (from, to) {
            (Endpoint::Server, Endpoint::Station(n)) => (NodeId::AP, NodeId(n)),
            // Station to server, or to another station through the AP.
            (Endpoint::Station(n), _) => (NodeId(n), NodeId::AP),
            (Endpoint::Server, Endpoint::Server) => unreachable!("refused above"),
        };
        let mut p = self.packet_of(&info, src, dst, len);
        p.token = token;
        let call = self.net.handle_packet(now, from.host(), p);
        self.pump(call, port);
        self.drain(port);
    }

    /// The model's packet for `len` bytes parsed as `info`, from node `src` to `dst`.
    fn packet_of(&mut self, info: &PacketInfo, src: NodeId, dst: NodeId, len: usize) -> Packet {
        let mut p = Packet::new(self.take_id(), src, dst, len as u32);
        p.flow = info.flow_hash();
        p.dscp = info.dscp;
        p.ecn = info.ecn;
        p
    }

    /// `packet` (its bytes in `bytes`) leaves this BSS at the junction at `at`, for
    /// `to` in another BSS: it left this BSS's network.
    fn cross(&mut self, at: Nanos, to: Site, packet: Packet, bytes: Bytes) {
        self.counters.junction_out += 1;
        let leg = Leg::Out {
            bss: to.bss,
            from: Host::Server,
            to: to.endpoint.host(),
        };
        self.crossings.push_back(Crossing {
            at,
            leg,
            packet,
            cargo: bytes,
        });
    }

    /// A packet of another BSS enters here at the junction at `at`, bound for `to`:
    /// its bytes go into this engine's slab and it is carried from the server's end
    /// of the wired link (or, for this BSS's server, which stands at the junction,
    /// written at once).
    fn enter_at_junction(&mut self, at: Nanos, to: Endpoint, bytes: Bytes, port: &mut dyn Port) {
        let Bytes { buf, len, read_at } = bytes;
        let Ok(info) = PacketInfo::parse(&buf[..len]) else {
            // It was parsed where it was read: nothing changes its headers but a CE mark.
            self.counters.malformed += 1;
            return self.slab.recycle(buf);
        };
        let flow = self.flows.flow_of(&info, Endpoint::Server, to);
        let meta = Meta {
            from: Endpoint::Server,
            to,
            read_at,
            flow,
            far: None,
        };
        let Some(token) = self.slab.insert(buf, len, meta) else {
            self.counters.slab_full += 1;
            self.flows.stats(flow).dropped(DropReason::QueueFull);
            return;
        };
        self.counters.junction_in += 1;
        self.flows.stats(flow).offered += 1;
        let Endpoint::Station(n) = to else {
            return self.write_out(at, token, port);
        };
        let mut p = self.packet_of(&info, NodeId::AP, NodeId(n), len);
        p.token = token;
        let call = self.net.handle_packet(at, Host::Server, p);
        self.pump(call, port);
        self.drain(port);
    }

    fn take_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Act on what a call into the network produced: write what reached a host,
    /// count what was dropped.
    fn pump(&mut self, call: Call, port: &mut dyn Port) {
        match call {
            Call::Done => {}
            Call::Output(o) => self.network_output(o, port),
            Call::OnWire { link } => self.agenda.on_wire(link, &mut self.timers),
            Call::HostBus { station } => {
                while let Some(o) =
                    self.agenda
                        .poll_host_bus(&mut self.net, &mut self.timers, station)
                {
                    self.network_output(o, port);
                }
            }
        }
    }

    /// A packet reached its host (written out), or was dropped on a wire or a bus.
    fn network_output(&mut self, o: NetOutput, port: &mut dyn Port) {
        match o {
            NetOutput::Arrived { at, packet, .. } => self.write_out(at, packet.token, port),
            NetOutput::Dropped { packet, place, .. } => self.lost(packet, Loss::Place(place)),
        }
    }

    /// Capture the air from now on, within `cfg`'s bounds: each data MPDU's body is its
    /// packet's real bytes (with the CE mark the model set, if any).
    pub fn capture(&mut self, cfg: txop_capture::CaptureConfig) -> std::io::Result<()> {
        let writer = txop_capture::AirWriter::new(Vec::new(), cfg, "txop (emulator)")?;
        self.net.capture_air();
        self.capture = Some(Box::new(EngineCapture {
            writer,
            error: None,
        }));
        Ok(())
    }

    /// The capture's pcapng file and what it holds (`None` if none was asked for).
    pub fn finish_capture(
        &mut self,
    ) -> Option<std::io::Result<(Vec<u8>, txop_capture::CaptureStats)>> {
        let mut cap = self.capture.take()?;
        self.drain_capture(&mut cap);
        Some(match cap.error {
            Some(e) => Err(e),
            None => cap.writer.finish(),
        })
    }

    /// Write what the cell recorded since the last call (before the cell's outputs:
    /// the packets a record names are still in the slab).
    fn drain_capture(&mut self, cap: &mut EngineCapture) {
        while let Some(ppdu) = self.net.poll_capture() {
            if cap.error.is_some() || !cap.writer.wants(&ppdu) {
                continue;
            }
            let slab = &self.slab;
            let r = cap.writer.write(&ppdu, &mut |packet, max, out| {
                let Some(slot) = slab.get(packet.token) else {
                    return;
                };
                let bytes = slot.bytes();
                let from = out.len();
                out.extend_from_slice(&bytes[..bytes.len().min(max)]);
                if packet.ecn == Ecn::Ce {
                    parse::set_ce(&mut out[from..]);
                }
            });
            if let Err(e) = r {
                cap.error = Some(e);
            }
        }
    }

    /// Handle what the cell reported.
    fn drain(&mut self, port: &mut dyn Port) {
        if let Some(mut cap) = self.capture.take() {
            self.drain_capture(&mut cap);
            self.capture = Some(cap);
        }
        while let Some(o) = self.net.poll_cell_output() {
            match o {
                Output::Delivered { at, packet, .. } => self.delivered(at, packet, port),
                Output::Dropped { packet, reason, .. } => self.lost(packet, Loss::Cell(reason)),
                Output::Airtime(_) => {}
            }
        }
    }

    /// The cell delivered `packet` at `at`.
    fn delivered(&mut self, at: Nanos, packet: Packet, port: &mut dyn Port) {
        let Some(slot) = self.slab.get_mut(packet.token) else {
            return;
        };
        let meta = slot.meta;
        if packet.ecn == Ecn::Ce && parse::ecn_of_bytes(slot.bytes()) != Some(Ecn::Ce) {
            parse::set_ce(slot.bytes_mut());
            self.counters.ce_marks += 1;
            let uplink = !packet.src.is_ap();
            let station = if uplink { packet.src } else { packet.dst };
            self.marks[station.index()][if uplink { 0 } else { 1 }] += 1;
        }
        self.flows.stats(meta.flow).air_delivered(at, &packet);
        let call = match meta.to {
            Endpoint::Station(m) if packet.dst.is_ap() => {
                // Station to station: the AP sends it on.
                let mut p = packet;
                p.id = self.take_id();
                p.src = NodeId::AP;
                p.dst = NodeId(m);
                p.tid = 0;
                p.aql_us = 0;
                self.net.handle_packet(at, Host::Ap, p)
            }
            to => self.net.forward(at, packet, to.host()),
        };
        self.pump(call, port);
    }

    /// Write a packet to its destination at `at`; it leaves the network.
    fn write_out(&mut self, at: Nanos, token: u64, port: &mut dyn Port) {
        let Some(slot) = self.slab.get(token) else {
            return;
        };
        let len = slot.bytes().len();
        let Meta {
            flow,
            to,
            read_at,
            far,
            ..
        } = slot.meta;
        if let Some(site) = far {
            // At the junction: on into the other BSS, bytes and all.
            if let Some((buf, len, _)) = self.slab.take(token) {
                self.flows.stats(flow).delivered(at, read_at, len as u32);
                let p = Packet::new(self.take_id(), NodeId::AP, NodeId::AP, len as u32);
                let bytes = Bytes { buf, len, read_at };
                self.cross(at, site, p, bytes);
            }
            return;
        }
        let result = port.write_at(Site::new(self.bss, to), slot.bytes());
        let late = port.now().saturating_sub(at);
        self.lateness.record(late);
        if self.last_write_at != Some(at) {
            self.last_write_at = Some(at);
            self.lateness_first.record(late);
        }
        self.slab.remove(token);
        match result {
            Ok(()) => {
                self.counters.written_packets += 1;
                self.counters.written_bytes += len as u64;
                self.flows.stats(flow).delivered(at, read_at, len as u32);
            }
            Err(_) => {
                self.counters.write_errors += 1;
                self.flows.stats(flow).dropped(DropReason::QueueFull);
            }
        }
    }

    /// A packet was dropped: by the cell, a wire's or a host bus's full queue.
    fn lost(&mut self, packet: Packet, loss: Loss) {
        let reason = match loss {
            Loss::Cell(reason) => {
                self.counters.cell_drops += 1;
                reason
            }
            Loss::Place(DropPlace::Wire(_)) => {
                self.counters.wire_drops += 1;
                DropReason::QueueFull
            }
            Loss::Place(DropPlace::HostBus { .. }) => {
                self.counters.bus_drops += 1;
                DropReason::QueueFull
            }
        };
        if let Some(meta) = self.slab.remove(packet.token) {
            self.flows.stats(meta.flow).dropped(reason);
        }
    }
}

/// An engine is one BSS of a world (see the module documentation). Packets are
/// handed over whole at the junction, so none ever comes back ([`Leg::Back`]).
impl BssDriver for Engine {
    type Io<'io> = dyn Port + 'io;
    type Cargo = Bytes;

    fn network_mut(&mut self) -> &mut Network {
        &mut self.net
    }

    fn next_at(&mut self) -> Option<Nanos> {
        self.next_deadline()
    }

    fn step(&mut self, now: Nanos, io: &mut Self::Io<'_>) -> bool {
        self.step_at(now, io);
        true
    }

    fn poll_crossing(&mut self) -> Option<Crossing<Bytes>> {
        self.crossings.pop_front()
    }

    fn enter(
        &mut self,
        _home: BssId,
        at: Nanos,
        route: Route,
        c: Carried<Bytes>,
        io: &mut Self::Io<'_>,
    ) {
        let to = match route.to {
            Host::Station(n) => Endpoint::Station(n),
            Host::Server | Host::Ap => Endpoint::Server,
        };
        self.enter_at_junction(at, to, c.cargo, io);
    }

    fn come_back(
        &mut self,
        _at: Nanos,
        c: Carried<Bytes>,
        _dropped: Option<DropReason>,
        _io: &mut Self::Io<'_>,
    ) {
        // Never sent: a crossing packet belongs to the BSS it entered.
        self.slab.recycle(c.cargo.buf);
    }

    fn finish_at(&mut self, _until: Nanos) {}
}

/// Where a packet was lost, as the counters tell them apart.
#[derive(Clone, Copy, Debug)]
enum Loss {
    /// By the cell, for `reason`.
    Cell(DropReason),
    /// By a wired link or a host bus (a full queue).
    Place(DropPlace),
}
