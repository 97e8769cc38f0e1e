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
//! - [`Network::handle_cell_timeout`]: the cell's deadline
//!   ([`Network::poll_cell_timeout`]) is due.
//! - [`Network::handle_timeout`]: one of the other [`Timer`]s is due (a wired link's
//!   oldest packet arriving, a host bus's deadline).
//! - [`Network::poll_cell_output`]: what the cell reports. For a packet the cell
//!   delivered, the driver says which host it is for ([`Network::forward`]): the
//!   cell knows nodes, not hosts (behind the AP are the server and the AP's own
//!   host), and the driver knows each packet's destination.
//! - Each of `handle_packet`, `handle_timeout` and `forward` returns what it produced,
//!   a [`Call`], which the driver acts on before it goes on: nothing, one
//!   [`NetOutput`] (a packet reached a host, or was dropped on a wire), a packet put
//!   on a wire ([`Call::OnWire`]: [`Agenda::on_wire`] gives it its place), or a host
//!   bus that was fed ([`Call::HostBus`]: its outputs come from
//!   [`Network::poll_host_bus`], or [`Agenda::poll_host_bus`], until `None`).
//! - [`Network::poll_timeout`]: when each of those timers is next due.
//!
//! **Order.** Which of two things due at the same instant runs first decides results,
//! so both drivers take it from one place, [`agenda::Agenda`]: the cell's deadline
//! first, then the driver's events and the network's own (wire arrivals, bus
//! deadlines) in the order they were scheduled. The cell's outputs are taken only when
//! the driver asks ([`Network::poll_cell_output`]), while a call's own outputs are
//! taken at once: a host answers a packet that reached it (and a host bus's deadline
//! is queued again) before the call that brought it returns, as a host's driver
//! hands packets on at once. A call made while handling an output has its own
//! [`Call`], acted on before the outer one goes on.

pub mod agenda;
pub mod event_queue;
pub mod host;
pub mod wired;

#[cfg(test)]
pub(crate) mod tests;

pub use agenda::{Agenda, AgendaEvent, Due};
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
    /// 0 for [`Link::Down`], 1 for [`Link::Up`].
    pub fn index(self) -> usize {
        match self {
            Link::Down => 0,
            Link::Up => 1,
        }
    }
}

/// The network's timers besides the cell's own deadline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Timer {
    /// The oldest packet on a wired link reaches its far end.
    Wire(Link),
    /// The host bus of station `station` (1-based) has a deadline.
    HostBus {
        /// The station whose bus it is.
        station: u16,
    },
}

/// Where the network (outside the cell) dropped a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DropPlace {
    /// A wired link's queue was full (tail drop).
    Wire(Link),
    /// Station `station`'s host bus: its host backlog, host → device queue or the
    /// chip's receive buffers were full.
    HostBus {
        /// The station whose bus it is.
        station: u16,
    },
}

/// What comes out of the network at its edges (besides the cell's own outputs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetOutput {
    /// `packet` reached host `to` at `at`: it left the network.
    Arrived {
        /// When it arrived.
        at: Nanos,
        /// The host it reached.
        to: Host,
        /// The packet.
        packet: Packet,
    },
    /// `packet` was dropped at `at` by `place`.
    Dropped {
        /// When it was dropped.
        at: Nanos,
        /// The packet.
        packet: Packet,
        /// Why (a full queue).
        reason: DropReason,
        /// Where.
        place: DropPlace,
    },
}

/// What one call into the network ([`Network::handle_packet`], [`Network::forward`],
/// [`Network::handle_timeout`]) produced, for the driver to act on before it goes on.
// perf: the common results (nothing, one output) come back as the call's value, which
// the drivers match where the call is made; only a host bus's outputs are polled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use = "what a call into the network produced is acted on before the driver goes on"]
pub enum Call {
    /// Nothing came out: the packet entered the cell, or nothing was due.
    Done,
    /// One output.
    Output(NetOutput),
    /// A packet was put on `link`. It arrives after the packets already on it, at
    /// [`Network::poll_timeout`]`(Timer::Wire(link))` once it is the oldest; a driver
    /// that orders simultaneous events gives it its place now ([`Agenda::on_wire`]).
    OnWire {
        /// The direction of the wired link.
        link: Link,
    },
    /// Station `station`'s host bus was fed: its outputs come from
    /// [`Network::poll_host_bus`] until `None`, and then its deadline
    /// ([`Timer::HostBus`]) may have changed: a driver that queues the network's
    /// timers among its events queues it again ([`Agenda::poll_host_bus`] does both).
    HostBus {
        /// The station whose bus was fed.
        station: u16,
    },
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
        })
    }

    /// The cell.
    pub fn cell(&self) -> &Cell {
        &self.cell
    }

    /// The cell shares its air with other cells ([`Cell::share_air`]).
    pub fn share_air(&mut self) {
        self.cell.share_air();
    }

    /// The next PPDU the cell put on an air it shares with other cells
    /// ([`Cell::poll_air`]).
    pub fn poll_air(&mut self) -> Option<crate::cell::AirPpdu> {
        self.cell.poll_air()
    }

    /// Record every PPDU the cell puts on the air ([`Cell::capture_air`]).
    pub fn capture_air(&mut self) {
        self.cell.capture_air();
    }

    /// The cell's next recorded PPDU ([`Cell::poll_capture`]): drain it before
    /// [`Network::poll_cell_output`].
    pub fn poll_capture(&mut self) -> Option<crate::capture::CapturedPpdu> {
        self.cell.poll_capture()
    }

    /// A PPDU of another cell sharing the air starts now ([`Cell::handle_air`]).
    pub fn handle_air(&mut self, ppdu: crate::cell::AirPpdu) {
        self.cell.handle_air(ppdu);
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

    /// Station `station`'s host bus (1-based), if it has one.
    // perf: the bus itself, found once, rather than an index to look up again.
    fn bus_mut(&mut self, station: u16) -> Option<&mut HostBus> {
        let i = usize::from(station).checked_sub(1)?;
        self.buses.get_mut(i)?.as_mut()
    }

    /// Host `from` hands `packet` to the network at `now`: the server's goes onto the
    /// wired link to the AP, a station's with a host bus onto its bus, the AP's and
    /// the other stations' into the cell.
    #[inline]
    pub fn handle_packet(&mut self, now: Nanos, from: Host, packet: Packet) -> Call {
        match from {
            Host::Server => self.send_on_wire(now, Link::Down, packet),
            Host::Station(station) => match self.bus_mut(station) {
                Some(bus) => {
                    bus.handle_host_packet(now, packet);
                    Call::HostBus { station }
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
    #[inline]
    pub fn forward(&mut self, at: Nanos, packet: Packet, to: Host) -> Call {
        let station = match to {
            Host::Server => return self.send_on_wire(at, Link::Up, packet),
            Host::Station(station) => station,
            Host::Ap => return Call::Output(NetOutput::Arrived { at, to, packet }),
        };
        match self.bus_mut(station) {
            Some(bus) => {
                bus.handle_device_packet(at, packet);
                Call::HostBus { station }
            }
            None => Call::Output(NetOutput::Arrived { at, to, packet }),
        }
    }

    /// A packet enters the cell: nothing comes out of the network itself.
    #[inline]
    fn enter_cell(&mut self, now: Nanos, packet: Packet) -> Call {
        self.cell.handle_packet(now, packet);
        Call::Done
    }

    /// `packet` goes onto `link` at `now`, or is dropped if the link's queue is full.
    // perf: inlined into the drivers' loops with the rest of the call.
    #[inline(always)]
    fn send_on_wire(&mut self, now: Nanos, link: Link, packet: Packet) -> Call {
        match self.wires[link.index()].send(now, packet) {
            Ok(_) => Call::OnWire { link },
            Err(packet) => Call::Output(NetOutput::Dropped {
                at: now,
                packet,
                reason: DropReason::QueueFull,
                place: DropPlace::Wire(link),
            }),
        }
    }

    /// `timer` is due at `now` ([`Network::poll_timeout`]).
    #[inline]
    pub fn handle_timeout(&mut self, now: Nanos, timer: Timer) -> Call {
        match timer {
            Timer::Wire(link) => match (link, self.wires[link.index()].arrive()) {
                (Link::Down, Some(packet)) => self.enter_cell(now, packet),
                (Link::Up, Some(packet)) => Call::Output(NetOutput::Arrived {
                    at: now,
                    to: Host::Server,
                    packet,
                }),
                (_, None) => Call::Done,
            },
            Timer::HostBus { station } => match self.bus_mut(station) {
                Some(bus) => {
                    bus.handle_timeout(now);
                    Call::HostBus { station }
                }
                None => Call::Done,
            },
        }
    }

    /// The cell's deadline ([`Network::poll_cell_timeout`]) is due at `now`. What the
    /// cell does then comes out of [`Network::poll_cell_output`]; the network itself
    /// has nothing to report.
    #[inline]
    pub fn handle_cell_timeout(&mut self, now: Nanos) {
        self.cell.handle_timeout(now);
    }

    /// When the cell next needs [`Network::handle_cell_timeout`] (`None`: nothing
    /// scheduled).
    #[inline]
    pub fn poll_cell_timeout(&self) -> Option<Nanos> {
        self.cell.poll_timeout()
    }

    /// When `timer` is next due (`None`: nothing scheduled).
    #[inline]
    pub fn poll_timeout(&self, timer: Timer) -> Option<Nanos> {
        match timer {
            Timer::Wire(link) => self.wires[link.index()].next_arrival(),
            Timer::HostBus { station } => self.host_bus(station)?.poll_timeout(),
        }
    }

    /// The cell's next output. A delivered packet goes on with
    /// [`Network::forward`].
    #[inline]
    pub fn poll_cell_output(&mut self) -> Option<Output> {
        self.cell.poll_output()
    }

    /// The next output of station `station`'s host bus after a [`Call::HostBus`], or
    /// `None` once it has handed out everything. Its packets for the chip enter the
    /// cell as they are taken.
    pub fn poll_host_bus(&mut self, station: u16) -> Option<NetOutput> {
        let i = usize::from(station).checked_sub(1)?;
        let Network {
            buses,
            cell,
            bus_to_host_bytes,
            ..
        } = self;
        // perf: the bus is looked up once for all it hands out.
        let bus = buses.get_mut(i)?.as_mut()?;
        loop {
            match bus.poll_output()? {
                BusOutput::ToDevice { at, packet } => cell.handle_packet(at, packet),
                BusOutput::ToHost { at, packet } => {
                    bus_to_host_bytes[i] += packet.len_bytes as u64;
                    let to = Host::Station(station);
                    return Some(NetOutput::Arrived { at, to, packet });
                }
                BusOutput::Dropped { at, packet, reason } => {
                    let place = DropPlace::HostBus { station };
                    return Some(NetOutput::Dropped {
                        at,
                        packet,
                        reason,
                        place,
                    });
                }
            }
        }
    }
}
