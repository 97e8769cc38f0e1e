//! Traffic between BSSs: a flow with one end in another BSS of a
//! [`Neighbourhood`](crate::Neighbourhood), carried across both BSSs' wired sides.
//!
//! The BSSs' wired links meet at one junction, where each BSS's server stands: a packet
//! from a station of BSS A to a station of BSS B crosses A's air, A's wired link up to
//! the junction, B's wired link down and B's air, queueing (and perhaps dropped) at each
//! hop as the BSS's own packets are.
//!
//! A flow belongs to its home BSS (the one whose scenario lists it): its application,
//! its TCP connection and its counters live in the home BSS's [`Simulation`], where the
//! far end appears as the server ([`RemoteEnd`] says who it really is). A packet
//! leaves the home simulation where it would have reached or left the server, as a
//! [`Crossing`]; the world's junction ([`txop_core::world`]) hands it to the far BSS's
//! simulation, which carries it
//! like its own packet (a slab entry of kind `Payload::Transit`) between the junction and
//! the far host, and hands it back: arrived at the far host, arrived at the junction on
//! its way home, or dropped on the way. The home simulation then goes on as if the
//! packet had crossed a longer wire: the far host's arrival is the application's, a
//! packet from the far host continues down the home BSS's wired link.
//!
//! Each BSS's conservation counts what entered and left its own network: a far
//! BSS counts a transit packet as offered when it enters and delivered (or dropped)
//! when it leaves; the home BSS counts its packets in flight in the far BSS as inside.

use crate::sim::{InFlight, Payload, Simulation};
use txop_core::budget::Passes;
use txop_core::network::Host;
use txop_core::world::{BssId, Carried, Crossing, Leg};
use txop_core::{DropReason, Nanos, Packet};

/// A flow end in another BSS of the neighbourhood: the flow's host there, which its
/// home simulation sees as the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoteEnd {
    /// The flow, as an index into its home simulation's flows; its end that is not a
    /// station of the home BSS must be [`Host::Server`].
    pub flow: usize,
    /// The other BSS, as an index into the neighbourhood.
    pub bss: usize,
    /// The host there: a station (an AP's own host sends only over its air).
    pub host: Host,
    /// Its name in the home BSS's results (`flat2.sta1`), where the server's would be.
    pub name: String,
}

/// How a far simulation's flow hash is told from its own flows' (fq classifies on it):
/// mixed with the home BSS's number.
fn far_flow_hash(hash: u32, home: usize) -> u32 {
    txop_core::rng::mix64(u64::from(hash) ^ ((home as u64 + 1) << 32)) as u32
}

impl Simulation {
    /// The far end of the flow of the packet whose slab entry is `token`, if that flow
    /// crosses into another BSS.
    fn remote_end_of(&self, token: u64) -> Option<(BssId, Host)> {
        let f = self.slab.get(token as usize)?.as_ref()?;
        let far = self.remote.get(f.flow as usize)?.as_ref()?;
        Some((BssId(far.bss as u16), far.host))
    }

    /// Whether `from`'s packet `p`, being sent, leaves for another BSS instead: a
    /// packet its home simulation sends from the far host. Counted as offered by the
    /// caller.
    pub(crate) fn sends_away(&mut self, now: Nanos, from: Host, p: Packet) -> Option<Packet> {
        if from != Host::Server {
            return Some(p);
        }
        let Some((bss, host)) = self.remote_end_of(p.token) else {
            return Some(p);
        };
        self.transits.push_back(Crossing {
            at: now,
            leg: Leg::Out {
                bss,
                from: host,
                to: Host::Server,
            },
            cargo: self.passes_of(p.token),
            packet: p,
        });
        None
    }

    /// Whether `packet`, arrived at its host here, goes on elsewhere instead: a far
    /// BSS's packet goes back home; a packet of a crossing flow that reached the
    /// junction goes on into the far BSS.
    pub(crate) fn arrives_away(&mut self, at: Nanos, packet: Packet) -> bool {
        let Some(Some(entry)) = self.slab.get(packet.token as usize) else {
            return false;
        };
        if let Payload::Transit { .. } = entry.payload {
            self.delivered += 1;
            self.back_home(at, packet, None);
            return true;
        }
        if entry.to != Host::Server {
            return false;
        }
        let Some((bss, host)) = self.remote_end_of(packet.token) else {
            return false;
        };
        self.transits.push_back(Crossing {
            at,
            leg: Leg::Out {
                bss,
                from: Host::Server,
                to: host,
            },
            packet,
            cargo: self.passes_of(packet.token),
        });
        true
    }

    /// Whether lost `packet` was a far BSS's: then it goes back home, dropped (counted
    /// dropped here by the caller).
    pub(crate) fn lost_away(&mut self, at: Nanos, packet: Packet, reason: DropReason) -> bool {
        let is_far = matches!(
            self.slab.get(packet.token as usize),
            Some(Some(InFlight {
                payload: Payload::Transit { .. },
                ..
            }))
        );
        if is_far {
            self.back_home(at, packet, Some(reason));
        }
        is_far
    }

    /// A far BSS's packet leaves this simulation for its home: its slab entry is
    /// released and the home's token, flow hash and nodes come back.
    fn back_home(&mut self, at: Nanos, mut packet: Packet, dropped: Option<DropReason>) {
        let Some(InFlight {
            payload:
                Payload::Transit {
                    home,
                    token,
                    flow_hash,
                },
            cell,
            ..
        }) = self.release(packet.token)
        else {
            return;
        };
        packet.token = token;
        packet.flow = flow_hash;
        packet.aql_us = 0;
        self.transits.push_back(Crossing {
            at,
            leg: Leg::Back {
                home: BssId(home as u16),
                dropped,
            },
            packet,
            cargo: cell,
        });
    }

    /// The cells the packet of slab entry `token` crossed so far.
    fn passes_of(&self, token: u64) -> Option<Passes> {
        self.slab.get(token as usize)?.as_ref()?.cell
    }

    /// A packet of home BSS `home` enters here at `from` (a host, or the junction),
    /// bound for `to`, at `at`: carried like this simulation's own.
    pub(crate) fn enter_from(
        &mut self,
        home: BssId,
        at: Nanos,
        from: Host,
        to: Host,
        c: Carried<Option<Passes>>,
    ) {
        self.advance_to(at);
        let mut p = c.packet;
        let entry = InFlight {
            flow: u32::MAX,
            to,
            from,
            sent_at: at,
            cell: c.cargo,
            payload: Payload::Transit {
                home: u32::from(home.0),
                token: p.token,
                flow_hash: p.flow,
            },
        };
        p.token = self.alloc(entry);
        p.flow = far_flow_hash(p.flow, home.index());
        p.src = from.node();
        p.dst = to.node();
        p.aql_us = 0;
        self.send(at, from, p);
        self.drain_outputs();
    }

    /// One of this simulation's packets comes back from a far BSS at `at`: it reached
    /// the far host, or the junction on its way here, or was dropped.
    pub(crate) fn come_back(
        &mut self,
        at: Nanos,
        c: Carried<Option<Passes>>,
        dropped: Option<DropReason>,
    ) {
        self.advance_to(at);
        let mut p = c.packet;
        if let Some(reason) = dropped {
            self.lost(at, p, reason);
        } else if let Some(entry) = self.slab.get_mut(p.token as usize).and_then(Option::as_mut) {
            if c.cargo.is_some() {
                entry.cell = c.cargo;
            }
            p.src = entry.from.node();
            p.dst = entry.to.node();
            if entry.to == Host::Server {
                // It reached the far host.
                self.arrive_here(at, p);
            } else {
                // From the far host: on down this BSS's wired link.
                self.net_send(at, Host::Server, p);
            }
        }
        self.drain_outputs();
    }
}
