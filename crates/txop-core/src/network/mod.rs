//! The modelled network: the cell and what surrounds it, composed once for both
//! drivers (the simulator's event loop and the emulator's real-time engine).
//!
//! ```text
//!  Host::Server ── wired link (Link::Down) ──▶ ┐                  ┌─▶ host bus ─▶ Host::Station(n)
//!  Host::Server ◀── wired link (Link::Up) ─── AP ═══ cell (air) ═══ station n
//!  Host::Ap ──────────────────────────────────┘                  └─ (no bus: straight to the host)
//! ```
//!
//! [`Network`] holds the [`Cell`], the wired link to the server in each direction
//! ([`wired`]) and each station's host bus if it has one (`crate::driver::bus`), and
//! routes packets between them. It is sans-I/O like its parts: the driver hands it
//! packets and time, and polls it for what comes out and when it next needs time.
//!
//! **The calling contract.** Time never goes backwards across calls.
//! - [`Network::handle_packet`]: a host hands a packet to the network.
//! - [`Network::handle_timeout`]: one of its [`Timer`]s is due (the cell's deadline, a
//!   wired link's oldest packet arriving, a host bus's deadline).
//! - [`Network::poll_cell_output`]: what the cell reports. For a packet the cell
//!   delivered, the driver says which host it is for ([`Network::forward`]): the
//!   cell knows nodes, not hosts (behind the AP are the server and the AP's own
//!   host), and the driver knows each packet's destination.
//! - [`Network::poll_output`]: after each of the calls above, until `None`: packets
//!   that reached a host, packets dropped on a wire or a bus, and packets put on a
//!   wire ([`NetOutput::OnWire`]).
//! - [`Network::poll_timeout`]: when each timer is next due.
//!
//! **Order.** Which of two things due at the same instant runs first decides results,
//! so both drivers take it from one place, [`agenda::Agenda`]: the cell's deadline
//! first, then the driver's events and the network's own (wire arrivals, bus
//! deadlines) in the order they were scheduled. The cell's outputs are taken only when
//! the driver asks ([`Network::poll_cell_output`]), while [`Network::poll_output`]
//! takes those of the buses and the wires as they come: a host bus's outputs are
//! acted on (and its deadline rescheduled) before the call that fed it returns, as a
//! host's driver hands packets on at once.

pub mod agenda;
pub mod event_queue;
pub mod host;
pub mod wired;

pub use agenda::{Agenda, Due};
pub use event_queue::EventQueue;
pub use host::Host;
pub use wired::{WiredConfig, WiredLink};

use crate::cell::{Cell, CellConfig, Output};
use crate::driver::bus::{BusConfig, BusOutput, HostBus};
use crate::{DropReason, Nanos, Packet};

/// What the network is made of.
#[derive(Clone, Debug)]
pub struct NetworkConfig {
    /// The cell: the AP and its stations.
    pub cell: CellConfig,
    /// The wired link between the AP and the server (each direction alike).
    pub wired: WiredConfig,
    /// The host bus of each station between its host and its WLAN chip: entry `i` is
    /// station `i + 1`'s; `None`, or no entry, is no bus (the host hands packets to
    /// the cell at once).
    pub host_bus: Vec<Option<BusConfig>>,
}

/// A direction of the wired link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Link {
    /// Server → AP.
    Down,
    /// AP → server.
    Up,
}

impl Link {
    /// Both directions, in the order [`Link::index`] numbers them.
    pub const BOTH: [Link; 2] = [Link::Down, Link::Up];

    /// 0 for [`Link::Down`], 1 for [`Link::Up`].
    pub fn index(self) -> usize {
        match self {
            Link::Down => 0,
            Link::Up => 1,
        }
    }
}

/// The network's timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Timer {
    /// The cell's next deadline (`Cell::poll_timeout`).
    Cell,
    /// The oldest packet on a wired link reaches its far end.
    Wire(Link),
    /// The host bus of station `station` (1-based) has a deadline.
    HostBus { station: u16 },
}

/// Where the network (outside the cell) dropped a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DropPlace {
    /// A wired link's queue was full (tail drop).
    Wire(Link),
    /// Station `station`'s host bus: its host backlog, host → device queue or the
    /// chip's receive buffers were full.
    HostBus { station: u16 },
}

/// What the network reports (besides the cell's own outputs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetOutput {
    /// `packet` reached host `to` at `at`: it left the network.
    Arrived { at: Nanos, to: Host, packet: Packet },
    /// `packet` was dropped at `at` by `place`.
    Dropped {
        at: Nanos,
        packet: Packet,
        reason: DropReason,
        place: DropPlace,
    },
    /// A packet was put on `link`. It arrives after the packets already on it, at
    /// [`Network::poll_timeout`]`(Timer::Wire(link))` once it is the oldest; a driver
    /// that orders simultaneous events gives it its place now ([`Agenda::poll`]).
    OnWire { link: Link },
    /// `timer`'s deadline may have changed ([`Network::poll_timeout`]): a driver that
    /// queues the network's timers among its events queues it again now
    /// ([`Agenda::poll`]). Reported for a host bus once it has handed out everything
    /// it had.
    Reschedule { timer: Timer },
}

/// The outputs of one call into the network, not all taken yet.
#[derive(Clone, Copy, Debug)]
enum Frame {
    /// Nothing left.
    Done,
    /// One output (of a wire, or of routing).
    Output(NetOutput),
    /// The outputs of the host bus of index `bus` (station − 1), then its
    /// [`NetOutput::Reschedule`].
    Bus(usize),
}

/// The cell, the wired link and the host buses (see the module documentation).
pub struct Network {
    cell: Cell,
    /// Indexed by [`Link::index`].
    wires: [WiredLink; 2],
    /// Each station's host bus (index = station − 1); shorter than the station list
    /// when the last stations have none.
    buses: Vec<Option<HostBus>>,
    /// Bytes each host bus handed to its station's host (index = station − 1).
    bus_to_host_bytes: Vec<u64>,
    /// The outputs of each call whose outputs are not all taken yet, the latest call
    /// on top: [`Network::poll_output`] hands out the top one's, then `None` once
    /// (see the calling contract). Calls nest at most as deep as the driver's own
    /// handling of outputs does.
    frames: Vec<Frame>,
}

impl Network {
    /// A network at time 0: every queue empty, the cell seeded with `seed`. Errors
    /// name the problem (more host buses than stations, an invalid bus, an invalid
    /// cell).
    pub fn new(cfg: NetworkConfig, seed: u64) -> Result<Network, String> {
        let stations = cfg.cell.stations.len();
        if cfg.host_bus.len() > stations {
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
        let cell = Cell::new(cfg.cell, seed)?;
        let w = cfg.wired;
        let wire = || WiredLink::new(w.rate_bps, w.delay, w.limit_packets);
        Ok(Network {
            cell,
            wires: [wire(), wire()],
            bus_to_host_bytes: vec![0; buses.len()],
            buses,
            frames: Vec::new(),
        })
    }

    /// The cell.
    pub fn cell(&self) -> &Cell {
        &self.cell
    }

    /// One direction of the wired link.
    pub fn wire(&self, link: Link) -> &WiredLink {
        &self.wires[link.index()]
    }

    /// Station `station`'s host bus, if it has one.
    pub fn host_bus(&self, station: u16) -> Option<&HostBus> {
        self.buses.get(station.checked_sub(1)? as usize)?.as_ref()
    }

    /// The stations with a host bus (1-based), in order, with their bus.
    pub fn host_buses(&self) -> impl Iterator<Item = (u16, &HostBus)> + '_ {
        self.buses
            .iter()
            .enumerate()
            .filter_map(|(i, b)| Some((i as u16 + 1, b.as_ref()?)))
    }

    /// Bytes (IP packets) station `station`'s host bus handed to its host; 0 without
    /// a bus.
    pub fn bus_to_host_bytes(&self, station: u16) -> u64 {
        let i = station.checked_sub(1).map_or(usize::MAX, usize::from);
        self.bus_to_host_bytes.get(i).copied().unwrap_or(0)
    }

    /// The index of `host`'s host bus, if it is a station with one.
    fn bus_index(&self, host: Host) -> Option<usize> {
        let Host::Station(n) = host else {
            return None;
        };
        let i = (n as usize).checked_sub(1)?;
        self.buses.get(i)?.as_ref().map(|_| i)
    }

    /// Host `from` hands `packet` to the network at `now`: the server's goes onto the
    /// wired link to the AP, a station's with a host bus onto its bus, the AP's and
    /// the other stations' into the cell.
    pub fn handle_packet(&mut self, now: Nanos, from: Host, packet: Packet) {
        match from {
            Host::Server => self.send_on_wire(now, Link::Down, packet),
            Host::Station(_) => match self.bus_index(from) {
                Some(i) => {
                    if let Some(b) = &mut self.buses[i] {
                        b.handle_host_packet(now, packet);
                    }
                    self.frames.push(Frame::Bus(i));
                }
                None => self.enter_cell(now, packet),
            },
            Host::Ap => self.enter_cell(now, packet),
        }
    }

    /// The cell delivered `packet` at `at` (a [`Output::Delivered`] of
    /// [`Network::poll_cell_output`]) and it is for host `to`: the server's goes onto
    /// the wired link, a station's with a host bus into its chip (the host reads it
    /// over the bus), the others arrive at once.
    pub fn forward(&mut self, at: Nanos, packet: Packet, to: Host) {
        if to == Host::Server {
            self.send_on_wire(at, Link::Up, packet);
        } else if let Some(i) = self.bus_index(to) {
            if let Some(b) = &mut self.buses[i] {
                b.handle_device_packet(at, packet);
            }
            self.frames.push(Frame::Bus(i));
        } else {
            let arrived = NetOutput::Arrived { at, to, packet };
            self.frames.push(Frame::Output(arrived));
        }
    }

    /// A call whose packet enters the cell: nothing comes out of the network itself.
    fn enter_cell(&mut self, now: Nanos, packet: Packet) {
        self.cell.handle_packet(now, packet);
        self.frames.push(Frame::Done);
    }

    fn send_on_wire(&mut self, now: Nanos, link: Link, packet: Packet) {
        let out = match self.wires[link.index()].send(now, packet) {
            Ok(_) => NetOutput::OnWire { link },
            Err(packet) => NetOutput::Dropped {
                at: now,
                packet,
                reason: DropReason::QueueFull,
                place: DropPlace::Wire(link),
            },
        };
        self.frames.push(Frame::Output(out));
    }

    /// `timer` is due at `now` ([`Network::poll_timeout`]).
    pub fn handle_timeout(&mut self, now: Nanos, timer: Timer) {
        let frame = match timer {
            Timer::Cell => {
                self.cell.handle_timeout(now);
                Frame::Done
            }
            Timer::Wire(link) => match (link, self.wires[link.index()].arrive()) {
                (Link::Down, Some(packet)) => {
                    self.cell.handle_packet(now, packet);
                    Frame::Done
                }
                (Link::Up, Some(packet)) => Frame::Output(NetOutput::Arrived {
                    at: now,
                    to: Host::Server,
                    packet,
                }),
                (_, None) => Frame::Done,
            },
            Timer::HostBus { station } => match self.bus_index(Host::Station(station)) {
                Some(i) => {
                    if let Some(b) = &mut self.buses[i] {
                        b.handle_timeout(now);
                    }
                    Frame::Bus(i)
                }
                None => Frame::Done,
            },
        };
        self.frames.push(frame);
    }

    /// When `timer` is next due (`None`: nothing scheduled).
    #[inline]
    pub fn poll_timeout(&self, timer: Timer) -> Option<Nanos> {
        match timer {
            Timer::Cell => self.cell.poll_timeout(),
            Timer::Wire(link) => self.wires[link.index()].next_arrival(),
            Timer::HostBus { station } => {
                let i = self.bus_index(Host::Station(station))?;
                self.buses[i].as_ref()?.poll_timeout()
            }
        }
    }

    /// The cell's next output. A delivered packet goes on with
    /// [`Network::forward`].
    #[inline]
    pub fn poll_cell_output(&mut self) -> Option<Output> {
        self.cell.poll_output()
    }

    /// The next output of the latest call into the network whose outputs are not all
    /// taken, and `None` once they are. Each call ([`Network::handle_packet`],
    /// [`Network::forward`], [`Network::handle_timeout`]) must be followed by polls
    /// until `None`: a poll inside the handling of an output (a host answering what
    /// arrived) takes the outputs of the calls made there, and the outer loop then goes
    /// on with the rest of its own. A host bus's packets for the chip enter the cell as
    /// they are taken; once the bus has handed out everything, it reports
    /// [`NetOutput::Reschedule`].
    pub fn poll_output(&mut self) -> Option<NetOutput> {
        loop {
            let frame = self.frames.last_mut()?;
            match *frame {
                Frame::Done => {
                    self.frames.pop();
                    return None;
                }
                Frame::Output(o) => {
                    *frame = Frame::Done;
                    return Some(o);
                }
                Frame::Bus(i) => match self.buses[i].as_mut().and_then(HostBus::poll_output) {
                    Some(BusOutput::ToDevice { at, packet }) => self.cell.handle_packet(at, packet),
                    Some(BusOutput::ToHost { at, packet }) => {
                        self.bus_to_host_bytes[i] += packet.len_bytes as u64;
                        let to = Host::Station(i as u16 + 1);
                        return Some(NetOutput::Arrived { at, to, packet });
                    }
                    Some(BusOutput::Dropped { at, packet, reason }) => {
                        let place = DropPlace::HostBus {
                            station: i as u16 + 1,
                        };
                        return Some(NetOutput::Dropped {
                            at,
                            packet,
                            reason,
                            place,
                        });
                    }
                    None => {
                        *frame = Frame::Done;
                        let station = i as u16 + 1;
                        let timer = Timer::HostBus { station };
                        return Some(NetOutput::Reschedule { timer });
                    }
                },
            }
        }
    }
}
