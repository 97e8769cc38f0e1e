//! Several BSSs composed: N networks on their channels, the air between them, the
//! junction between their wired sides, and one order for everything.
//!
//! ```text
//!   BSS 1: Network (cell ═ air ═ stations, wired link, host buses) ─┐
//!   BSS 2: Network ─────────────────────────────────────────────────┼─ junction
//!   …        ╲ the air: each PPDU to every other cell on its channel┘  (Host::Server of each)
//! ```
//!
//! Each BSS is one [`Network`] and what drives it: its driver's own events (traffic,
//! TCP timers in the simulator; none in the emulator) and the network's timers, in the
//! [`Agenda`](crate::network::Agenda)'s order. A [`BssDriver`] is that pair; the
//! [`World`] holds one per BSS and owns what lies between them:
//!
//! - **The air.** With more than one BSS, every cell shares its air
//!   ([`Network::share_air`]): each PPDU a cell puts on the air
//!   ([`Network::poll_air`]) is handed at once to every other cell on its 20 MHz
//!   channel ([`Network::handle_air`]), which senses it, suffers it and honours its
//!   Duration. BSSs on different channels do not hear each other (adjacent-channel
//!   interference is not modelled).
//! - **The junction.** The BSSs' wired links meet at one junction, where each BSS's
//!   server (`Host::Server`) stands. A packet between a host of one BSS and a host of
//!   another crosses its home BSS's wired side up to the junction, then the far BSS's
//!   down to the far host (or the reverse), queueing at each hop as the BSS's own
//!   packets do. Which packets cross is the driver's to say (it knows each packet's
//!   destination: the simulator's slab, the emulator's addresses); it hands them out
//!   as [`Crossing`]s ([`BssDriver::poll_crossing`]) and the world routes each one by
//!   the BSS and host it names.
//! - **The order.** One rule decides what runs first among things due at the same
//!   instant, across every BSS: *the earliest instant first; at one instant, the
//!   BSS listed first; within a BSS, its [`Agenda`](crate::network::Agenda)'s rule*
//!   (the cell's deadline, then events and timers in the order they were scheduled).
//!   After each step, what it put on the air or across the junction is handed on
//!   ([`World::settle`]) before anything else runs, as a PPDU starts on every cell's
//!   air at the instant it starts on its own. The order depends on the scenario and
//!   the seed only: runs are deterministic.
//!
//! The world is sans-I/O like the network: the simulator runs it with virtual time
//! ([`World::run_until`]), a real-time driver asks it when it is next due
//! ([`World::next_due`]) and steps it then ([`World::step`]).

#[cfg(test)]
mod tests;

use crate::network::{Host, Network};
use crate::{DropReason, Nanos, Packet};

/// A BSS of a [`World`], by its place in the world's list (0-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BssId(pub u16);

impl BssId {
    /// The BSS's place in the world's list, as an index.
    pub fn index(self) -> usize {
        usize::from(self.0)
    }
}

/// A packet crossing the junction from one BSS into another, with what the drivers
/// carry beside it (`C`: nothing in the simulator, whose packets stay home; the real
/// bytes in the emulator).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Crossing<C = ()> {
    /// When it crosses.
    pub at: Nanos,
    /// Which way.
    pub leg: Leg,
    /// The packet, as the BSS it leaves knows it.
    pub packet: Packet,
    /// What the driver carries beside the packet.
    pub cargo: C,
}

/// Which way a [`Crossing`] goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Leg {
    /// From its home BSS (the one it leaves) into BSS `bss`: it enters there at host
    /// `from` (a host of that BSS, or the junction as `Host::Server`) bound for host
    /// `to` ([`BssDriver::enter`]).
    Out {
        /// The BSS it enters.
        bss: BssId,
        /// Where it enters that BSS.
        from: Host,
        /// Where it is bound in that BSS.
        to: Host,
    },
    /// Back to its home BSS `home`, which sent it out: it reached the end of its leg
    /// in the BSS it leaves, or was dropped there for `dropped`'s reason
    /// ([`BssDriver::come_back`]).
    Back {
        /// The BSS that sent it out.
        home: BssId,
        /// Why it was dropped on the far leg, if it was.
        dropped: Option<DropReason>,
    },
}

/// Where a packet entering a BSS from the junction goes in it ([`BssDriver::enter`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route {
    /// Where it enters: a host of the BSS, or the junction as `Host::Server`.
    pub from: Host,
    /// Where it is bound.
    pub to: Host,
}

/// A packet handed across the junction, with its driver's cargo.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Carried<C> {
    /// The packet, as the BSS it left knows it.
    pub packet: Packet,
    /// What the driver carries beside it.
    pub cargo: C,
}

/// One BSS of a [`World`]: its [`Network`] and what drives it (its own events and the
/// network's timers, in its agenda's order), and its end of the junction.
pub trait BssDriver {
    /// What the driver does its I/O through, handed to every call that may make a
    /// packet leave the network (the emulator's writes to real hosts; `()` for the
    /// simulator). Shared by every BSS of a world.
    type Io<'io>: ?Sized;
    /// What a crossing packet carries beside its [`Packet`] ([`Crossing::cargo`]).
    type Cargo;
    /// Its network, for the world to couple its air to the others'.
    fn network_mut(&mut self) -> &mut Network;
    /// When it next needs [`BssDriver::step`] (its agenda's next instant); `None` when
    /// nothing is due before its end, or it has stopped.
    fn next_at(&mut self) -> Option<Nanos>;
    /// Take and handle what is due at `now` (the instant [`BssDriver::next_at`] just
    /// gave), by its agenda's rule. `false` if it stopped (its watchdog found it
    /// stuck): the world stops too.
    fn step(&mut self, now: Nanos, io: &mut Self::Io<'_>) -> bool;
    /// The next packet leaving this BSS across the junction, in the order they left.
    fn poll_crossing(&mut self) -> Option<Crossing<Self::Cargo>>;
    /// A packet of BSS `home` enters this BSS at `at` ([`Leg::Out`]): at `route.from`
    /// (a host, or the junction), bound for `route.to`, carried like this BSS's own
    /// packets. Its clock moves to `at` if it is behind.
    fn enter(
        &mut self,
        home: BssId,
        at: Nanos,
        route: Route,
        c: Carried<Self::Cargo>,
        io: &mut Self::Io<'_>,
    );
    /// One of this BSS's packets comes back from another at `at` ([`Leg::Back`]): it
    /// reached the far host, or the junction on its way here, or was dropped.
    fn come_back(
        &mut self,
        at: Nanos,
        c: Carried<Self::Cargo>,
        dropped: Option<DropReason>,
        io: &mut Self::Io<'_>,
    );
    /// The world ran to `until`: move the clock there (at most its end).
    fn finish_at(&mut self, until: Nanos);
}

/// Several BSSs, the air between them and the junction (see the module
/// documentation).
#[derive(Debug)]
pub struct World<D> {
    /// Each BSS's driver, in order (the order is the tie rule's).
    bsss: Vec<D>,
    /// Each BSS's 20 MHz channel (index = BSS).
    channels: Vec<u16>,
}

/// What runs next in a [`World`] ([`World::next_due`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorldDue {
    /// When.
    pub at: Nanos,
    /// The BSS whose step it is.
    pub bss: BssId,
}

impl<D: BssDriver> World<D> {
    /// A world of `bsss` (each BSS's driver and its 20 MHz channel), in order: the
    /// order is the tie rule's. With more than one BSS every cell shares its air.
    /// Errors: no BSS, or more than `u16::MAX`.
    pub fn new(bsss: Vec<(D, u16)>) -> Result<World<D>, String> {
        if bsss.is_empty() {
            return Err("a world needs at least one BSS".into());
        }
        if bsss.len() > usize::from(u16::MAX) {
            return Err(format!("{} BSSs: at most {}", bsss.len(), u16::MAX));
        }
        let shared = bsss.len() > 1;
        let (mut drivers, channels): (Vec<D>, Vec<u16>) = bsss.into_iter().unzip();
        if shared {
            for d in &mut drivers {
                d.network_mut().share_air();
            }
        }
        Ok(World {
            bsss: drivers,
            channels,
        })
    }

    /// The BSSs' drivers, in order.
    pub fn bsss(&self) -> &[D] {
        &self.bsss
    }

    /// The BSSs' drivers, in order, to change (e.g. to capture their air).
    pub fn bsss_mut(&mut self) -> &mut [D] {
        &mut self.bsss
    }

    /// Each BSS's channel, in order.
    pub fn channels(&self) -> &[u16] {
        &self.channels
    }

    /// The BSSs' drivers, by value, in order.
    pub fn into_bsss(self) -> Vec<D> {
        self.bsss
    }

    /// What runs next, by the world's rule: the BSS whose next instant is earliest,
    /// the first listed at a tie; `None` when nothing is due at or before `until`.
    pub fn next_due(&mut self, until: Nanos) -> Option<WorldDue> {
        let mut next: Option<WorldDue> = None;
        for (b, d) in self.bsss.iter_mut().enumerate() {
            if let Some(at) = d.next_at().filter(|&t| t <= until) {
                if next.is_none_or(|n| at < n.at) {
                    next = Some(WorldDue {
                        at,
                        bss: BssId(b as u16),
                    });
                }
            }
        }
        next
    }

    /// Run `due` ([`World::next_due`]'s answer), then hand on what it put on the air
    /// or across the junction. `false` if the BSS stopped (stuck).
    pub fn step(&mut self, due: WorldDue, io: &mut D::Io<'_>) -> bool {
        let Some(d) = self.bsss.get_mut(due.bss.index()) else {
            return true;
        };
        if !d.step(due.at, io) {
            return false;
        }
        self.settle(io);
        true
    }

    /// Run every BSS until `until` (each at most to its end), then move each clock
    /// there. Stops early if a BSS stops (stuck).
    pub fn run_until(&mut self, until: Nanos, io: &mut D::Io<'_>) {
        while let Some(due) = self.next_due(until) {
            if !self.step(due, io) {
                break;
            }
        }
        for d in &mut self.bsss {
            d.finish_at(until);
        }
    }

    /// Hand on what the last step put on the air or across the junction, until
    /// nothing more moves: each PPDU to every other cell on its channel, each crossing
    /// packet to the BSS it names, which may answer at once. BSSs are visited in
    /// order, each drained (air, then junction) before the next.
    pub fn settle(&mut self, io: &mut D::Io<'_>) {
        loop {
            let mut moved = false;
            for b in 0..self.bsss.len() {
                while let Some(ppdu) = self.bsss[b].network_mut().poll_air() {
                    moved = true;
                    let channel = self.channels[b];
                    for (other, d) in self.bsss.iter_mut().enumerate() {
                        if other != b && self.channels[other] == channel {
                            d.network_mut().handle_air(ppdu);
                        }
                    }
                }
                while let Some(c) = self.bsss[b].poll_crossing() {
                    moved = true;
                    self.route(BssId(b as u16), c, io);
                }
            }
            if !moved {
                return;
            }
        }
    }

    /// The junction: `c`, leaving BSS `from`, goes to the BSS its leg names. A leg
    /// naming no BSS of the world is dropped (the drivers check their far ends when
    /// they are built).
    fn route(&mut self, from: BssId, c: Crossing<D::Cargo>, io: &mut D::Io<'_>) {
        let carried = Carried {
            packet: c.packet,
            cargo: c.cargo,
        };
        match c.leg {
            Leg::Out {
                bss,
                from: host,
                to,
            } => {
                if let Some(d) = self.bsss.get_mut(bss.index()) {
                    let route = Route { from: host, to };
                    d.enter(from, c.at, route, carried, io);
                }
            }
            Leg::Back { home, dropped } => {
                if let Some(d) = self.bsss.get_mut(home.index()) {
                    d.come_back(c.at, carried, dropped, io);
                }
            }
        }
    }
}
