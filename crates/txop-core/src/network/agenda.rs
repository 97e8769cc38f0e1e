//! The order of things at one instant: the one rule both drivers follow.
//!
//! A driver has its own events (the simulator's traffic, TCP timers; the emulator has
//! none) in an [`EventQueue`], and the [`Network`] has its timers. Results depend on
//! which of two things due at the same nanosecond runs first, so the rule is kept here
//! and nowhere else:
//!
//! 1. The cell's deadline runs before anything else due at the same instant (as
//!    `Cell::handle_packet` would run it anyway before taking a packet).
//! 2. Then the driver's events and the network's other timers in the order they were
//!    scheduled: each takes a sequence number from the event queue when it is
//!    scheduled, and ties at one instant go by it. A host bus's deadline is queued as
//!    an event ([`Timer::HostBus`], through `E: From<Timer>`) once the bus has handed
//!    out what a call fed it ([`Agenda::poll_host_bus`]); a queued deadline that was
//!    moved since is skipped when it comes ([`Due::Superseded`]). A packet put on a
//!    wired link takes its number when it is sent ([`super::Call::OnWire`],
//!    [`Agenda::on_wire`]) and keeps it here, beside the link, instead of as a queue
//!    entry: it arrives exactly where an event pushed at its sending would have
//!    popped.
//!
//! With several BSSs, the world (`crate::world`) extends the rule across them: the
//! earliest instant first, at a tie the BSS listed first, each BSS by this rule.
//!
//! The driver's turn:
//!
//! ```text
//! while let Some(t) = agenda.next_at(&net, &events) {      // (stop at the end)
//!     match agenda.take(t, &mut events) {
//!         Due::Cell => net.handle_cell_timeout(t),
//!         Due::Network(timer) => act(net.handle_timeout(t, timer)),
//!         Due::Event(e) => handle(e),           // may call net: act(net.handle_packet(…))
//!         Due::Superseded => {}
//!     }
//!     drain the cell's outputs (Network::poll_cell_output; a delivered packet is
//!     forwarded: act(net.forward(…)))
//! }
//! act(call): match call {
//!     Call::Done => {}
//!     Call::Output(o) => act on o (a packet arrived at a host, or was dropped),
//!     Call::OnWire { link } => agenda.on_wire(link, &mut events),
//!     Call::HostBus { station } =>
//!         while let Some(o) = agenda.poll_host_bus(&mut net, &mut events, station) {
//!             act on o
//!         }
//! }
//! ```

use super::{EventQueue, Link, NetOutput, Network, Timer};
use crate::Nanos;
use std::collections::VecDeque;

/// What runs next ([`Agenda::take`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Due<E> {
    /// The cell's deadline: the driver calls `Network::handle_cell_timeout`.
    Cell,
    /// One of the network's other timers: the driver calls `Network::handle_timeout`.
    Network(Timer),
    /// One of the driver's own events.
    Event(E),
    /// A host bus deadline queued earlier and moved since: nothing to do.
    Superseded,
}

/// A driver's event type: its own events, and the network's timers it queues for the
/// agenda.
pub trait AgendaEvent: From<Timer> {
    /// The network timer this event is, if it is one.
    fn timer(&self) -> Option<Timer>;
}

impl AgendaEvent for Timer {
    fn timer(&self) -> Option<Timer> {
        Some(*self)
    }
}

/// The oldest packet on a wired link.
// perf: its sequence number is not kept here; it is read only when an event is due
// at the same instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct WireArrival {
    at: Nanos,
    link: Link,
}

/// The ordering rule's bookkeeping (see the module documentation).
#[derive(Debug, Default)]
pub struct Agenda {
    /// Sequence numbers of the packets on each wired link (by [`Link::index`]),
    /// oldest first: one per packet the link holds.
    wire_seq: [VecDeque<u64>; 2],
    /// Each host bus's deadline as queued (index = station − 1); an entry at another
    /// time is superseded.
    bus_deadline: Vec<Option<Nanos>>,
    /// The queue's push count when `wire` and `external` were looked up (`None`: not
    /// since something was taken).
    // perf: most turns only run the cell's deadline and add nothing to the queue or
    // the wires; the earliest of those two is looked up again only when they changed.
    looked_at: Option<u64>,
    /// The earlier of the two links' oldest packets, by (time, sequence).
    wire: Option<WireArrival>,
    /// The earliest of the queue's events and `wire`.
    external: Option<Nanos>,
    /// The cell's deadline as [`Agenda::next_at`] last saw it.
    cell: Option<Nanos>,
}

impl Agenda {
    /// An agenda for a network with nothing scheduled yet.
    pub fn new() -> Agenda {
        Agenda::default()
    }

    /// When the next thing is due: the cell's deadline, a queued event or a wire
    /// arrival, whichever is earliest.
    #[inline]
    pub fn next_at<E>(&mut self, net: &Network, events: &EventQueue<E>) -> Option<Nanos> {
        let pushes = events.pushes();
        if self.looked_at != Some(pushes) {
            self.wire = self.wire_next(net);
            self.external = earliest(events.peek_time(), self.wire.map(|w| w.at));
            self.looked_at = Some(pushes);
        }
        self.cell = net.poll_cell_timeout();
        earliest(self.cell, self.external)
    }

    /// Take what is due at `now`, the time [`Agenda::next_at`] just gave (nothing
    /// may be scheduled or sent, and no call made into the network, between the two).
    #[inline]
    pub fn take<E: AgendaEvent>(
        &mut self,
        now: Nanos,
        events: &mut EventQueue<E>,
    ) -> Option<Due<E>> {
        if self.cell == Some(now) {
            return Some(Due::Cell);
        }
        self.looked_at = None;
        let wire_first = self.wire.filter(|w| {
            w.at == now
                && events
                    .peek_seq_at(now)
                    .is_none_or(|e| self.oldest_seq(w.link).is_some_and(|seq| seq < e))
        });
        if let Some(w) = wire_first {
            self.wire_seq[w.link.index()].pop_front();
            return Some(Due::Network(Timer::Wire(w.link)));
        }
        let (at, event) = events.pop()?;
        match event.timer() {
            Some(timer @ Timer::HostBus { station }) => {
                let queued = self.bus_deadline.get_mut(station as usize - 1);
                match queued {
                    Some(q) if *q == Some(at) => {
                        *q = None;
                        Some(Due::Network(timer))
                    }
                    _ => Some(Due::Superseded),
                }
            }
            Some(timer) => Some(Due::Network(timer)),
            None => Some(Due::Event(event)),
        }
    }

    /// A packet was put on `link` ([`super::Call::OnWire`]): it takes its place among
    /// the events now.
    #[inline]
    pub fn on_wire<E>(&mut self, link: Link, events: &mut EventQueue<E>) {
        self.wire_seq[link.index()].push_back(events.reserve_seq());
    }

    /// The next output of station `station`'s host bus after a
    /// [`super::Call::HostBus`] ([`Network::poll_host_bus`]); once it has handed out
    /// everything, its deadline is queued again if it changed, and `None`.
    pub fn poll_host_bus<E: From<Timer>>(
        &mut self,
        net: &mut Network,
        events: &mut EventQueue<E>,
        station: u16,
    ) -> Option<NetOutput> {
        let out = net.poll_host_bus(station);
        if out.is_none() {
            self.reschedule_host_bus(net, events, station);
        }
        out
    }

    /// Queue station `station`'s host-bus deadline unless it is queued there already.
    fn reschedule_host_bus<E: From<Timer>>(
        &mut self,
        net: &Network,
        events: &mut EventQueue<E>,
        station: u16,
    ) {
        let timer = Timer::HostBus { station };
        let Some(t) = net.poll_timeout(timer) else {
            return;
        };
        let i = station as usize - 1;
        if self.bus_deadline.len() <= i {
            self.bus_deadline.resize(i + 1, None);
        }
        if self.bus_deadline[i] != Some(t) {
            self.bus_deadline[i] = Some(t);
            events.push(t, E::from(timer));
        }
    }

    /// The earlier of the two links' oldest packets, by (time, sequence).
    fn wire_next(&self, net: &Network) -> Option<WireArrival> {
        let down = net.poll_timeout(Timer::Wire(Link::Down));
        let up = net.poll_timeout(Timer::Wire(Link::Up));
        // perf: the sequence numbers are compared only when both arrive at once.
        let (at, link) = match (down, up) {
            (Some(d), Some(u)) if u == d => {
                let first = if self.oldest_seq(Link::Up) < self.oldest_seq(Link::Down) {
                    Link::Up
                } else {
                    Link::Down
                };
                (d, first)
            }
            (Some(d), Some(u)) if u < d => (u, Link::Up),
            (Some(d), _) => (d, Link::Down),
            (None, Some(u)) => (u, Link::Up),
            (None, None) => return None,
        };
        debug_assert_eq!(
            self.wire_seq[link.index()].len(),
            net.wire(link).len(),
            "every packet on a wire has its place (Agenda::on_wire)"
        );
        Some(WireArrival { at, link })
    }

    /// The sequence number of the oldest packet on `link`.
    fn oldest_seq(&self, link: Link) -> Option<u64> {
        self.wire_seq[link.index()].front().copied()
    }
}

/// The earlier of two optional times.
fn earliest(a: Option<Nanos>, b: Option<Nanos>) -> Option<Nanos> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}
