//! The world's order across BSSs and its junction, on a small driver harness: one
//! network per BSS driven as the network's calling contract asks.

use super::*;
use crate::cell::{CellConfig, Output, StationConfig};
use crate::network::tests::Ev;
use crate::network::{
    Agenda, Call, Due, EventQueue, Link, NetOutput, NetworkConfig, Timer, WiredConfig,
};
use crate::phy::channel::ErrorModel;
use crate::phy::{Band, Standard, TxVector};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

/// What the harnesses saw, in order, across every BSS.
#[derive(Clone, Debug, PartialEq)]
enum Seen {
    Marker {
        bss: BssId,
        marker: u32,
    },
    /// The cell delivered a packet.
    Delivered {
        bss: BssId,
        at: Nanos,
    },
    /// A packet reached the end of a wired link.
    Wire {
        bss: BssId,
        at: Nanos,
        link: Link,
    },
    Arrived {
        bss: BssId,
        at: Nanos,
        to: Host,
    },
    /// A packet came back home across the junction.
    Back {
        bss: BssId,
        at: Nanos,
        dropped: Option<DropReason>,
    },
}

/// The harness's record of a packet's destination host, in its token.
fn token_of(to: Host) -> u64 {
    match to {
        Host::Server => 0,
        Host::Ap => 1,
        Host::Station(n) => 1 + u64::from(n),
    }
}

fn host_of(token: u64) -> Host {
    match token {
        0 => Host::Server,
        1 => Host::Ap,
        n => Host::Station(n as u16 - 1),
    }
}

/// One BSS: a network with one 802.11a station at 54 Mbit/s and the default wired
/// link (1 Gbit/s, 1 ms), driven in its agenda's order. A packet that reaches its
/// server goes on across the junction to `far`, if set; a packet that entered from
/// another BSS goes back home when it reaches its host.
struct Harness {
    id: BssId,
    net: Network,
    agenda: Agenda,
    events: EventQueue<Ev>,
    far: Option<(BssId, Host)>,
    /// The home BSS of each packet that entered from another, by packet id.
    guests: Vec<(u64, BssId)>,
    crossings: VecDeque<Crossing>,
    seen: Rc<RefCell<Vec<Seen>>>,
}

impl Harness {
    fn new(id: u16, seen: &Rc<RefCell<Vec<Seen>>>) -> Harness {
        let sta = StationConfig::new(TxVector::Ofdm { rate_mbps: 54 }, ErrorModel::None);
        let cfg = NetworkConfig {
            cell: CellConfig::new(Standard::A, Band::Ghz5, vec![sta]),
            wired: WiredConfig::default(),
            host_bus: Vec::new(),
        };
        Harness {
            id: BssId(id),
            net: Network::new(cfg, 1).unwrap(),
            agenda: Agenda::new(),
            events: EventQueue::default(),
            far: None,
            guests: Vec::new(),
            crossings: VecDeque::new(),
            seen: Rc::clone(seen),
        }
    }

    fn send(&mut self, now: Nanos, from: Host, to: Host, id: u64) {
        let mut p = Packet::new(id, from.node(), to.node(), 1000);
        p.token = token_of(to);
        let call = self.net.handle_packet(now, from, p);
        self.pump(call);
    }

    fn pump(&mut self, call: Call) {
        match call {
            Call::Done | Call::HostBus { .. } => {}
            Call::Output(o) => self.output(o),
            Call::OnWire { link } => self.agenda.on_wire(link, &mut self.events),
        }
    }

    fn output(&mut self, o: NetOutput) {
        let NetOutput::Arrived { at, to, packet } = o else {
            panic!("nothing is dropped in this harness: {o:?}");
        };
        let bss = self.id;
        if let Some(i) = self.guests.iter().position(|g| g.0 == packet.id) {
            let (_, home) = self.guests.remove(i);
            self.seen.borrow_mut().push(Seen::Arrived { bss, at, to });
            let leg = Leg::Back {
                home,
                dropped: None,
            };
            return self.cross(at, leg, packet);
        }
        if let (Host::Server, Some((bss, far))) = (to, self.far) {
            let leg = Leg::Out {
                bss,
                from: Host::Server,
                to: far,
            };
            return self.cross(at, leg, packet);
        }
        self.seen.borrow_mut().push(Seen::Arrived { bss, at, to });
    }
}

impl Harness {
    fn cross(&mut self, at: Nanos, leg: Leg, packet: Packet) {
        let cargo = ();
        let c = Crossing {
            at,
            leg,
            packet,
            cargo,
        };
        self.crossings.push_back(c);
    }
}

impl BssDriver for Harness {
    type Io<'io> = ();
    type Cargo = ();

    fn network_mut(&mut self) -> &mut Network {
        &mut self.net
    }

    fn next_at(&mut self) -> Option<Nanos> {
        self.agenda.next_at(&self.net, &self.events)
    }

    fn step(&mut self, now: Nanos, _io: &mut ()) -> bool {
        let bss = self.id;
        match self.agenda.take(now, &mut self.events) {
            Some(Due::Cell) => self.net.handle_cell_timeout(now),
            Some(Due::Network(timer)) => {
                if let Timer::Wire(link) = timer {
                    let wire = Seen::Wire { bss, at: now, link };
                    self.seen.borrow_mut().push(wire);
                }
                let call = self.net.handle_timeout(now, timer);
                self.pump(call);
            }
            Some(Due::Event(Ev::Marker(marker))) => {
                self.seen.borrow_mut().push(Seen::Marker { bss, marker });
            }
            Some(Due::Event(Ev::Net(_)) | Due::Superseded) | None => {}
        }
        while let Some(o) = self.net.poll_cell_output() {
            if let Output::Delivered { at, packet, .. } = o {
                self.seen.borrow_mut().push(Seen::Delivered { bss, at });
                let call = self.net.forward(at, packet, host_of(packet.token));
                self.pump(call);
            }
        }
        true
    }

    fn poll_crossing(&mut self) -> Option<Crossing> {
        self.crossings.pop_front()
    }

    fn enter(&mut self, home: BssId, at: Nanos, route: Route, c: Carried<()>, _io: &mut ()) {
        let mut packet = c.packet;
        self.guests.push((packet.id, home));
        packet.src = route.from.node();
        packet.dst = route.to.node();
        packet.token = token_of(route.to);
        let call = self.net.handle_packet(at, route.from, packet);
        self.pump(call);
    }

    fn come_back(&mut self, at: Nanos, _c: Carried<()>, dropped: Option<DropReason>, _io: &mut ()) {
        let bss = self.id;
        self.seen.borrow_mut().push(Seen::Back { bss, at, dropped });
    }

    fn finish_at(&mut self, _until: Nanos) {}
}

/// At one instant the BSS listed first runs everything it has due before the next
/// BSS runs, whatever order the events were scheduled in.
#[test]
fn ties_go_to_the_bss_listed_first() {
    let seen = Rc::new(RefCell::new(Vec::new()));
    let (mut a, mut b) = (Harness::new(0, &seen), Harness::new(1, &seen));
    let t = Nanos::from_us(5);
    b.events.push(t, Ev::Marker(1));
    a.events.push(t, Ev::Marker(2));
    a.events.push(t, Ev::Marker(3));
    b.events.push(Nanos::from_us(4), Ev::Marker(4));
    let mut world = World::new(vec![(a, 1), (b, 1)]).unwrap();
    world.run_until(Nanos::from_ms(1), &mut ());
    let markers = |bss: u16, marker: u32| Seen::Marker {
        bss: BssId(bss),
        marker,
    };
    assert_eq!(
        *seen.borrow(),
        vec![markers(1, 4), markers(0, 2), markers(0, 3), markers(1, 1)]
    );
}

/// A packet from a station of BSS 0 to a station of BSS 1 crosses BSS 0's air and
/// wired link up to the junction, BSS 1's wired link down and BSS 1's air, each wired
/// hop taking its delay plus its serialisation (1 ms + (1000 + 38 B of Ethernet
/// framing) × 8 at 1 Gbit/s = 8.304 µs),
/// and its arrival goes back to BSS 0 at the instant it arrives.
#[test]
fn a_packet_crosses_the_junction_between_two_bsss() {
    let seen = Rc::new(RefCell::new(Vec::new()));
    let (mut a, b) = (Harness::new(0, &seen), Harness::new(1, &seen));
    a.far = Some((BssId(1), Host::Station(1)));
    a.send(Nanos::ZERO, Host::Station(1), Host::Server, 7);
    // Different channels: the air does not couple them, only the junction does.
    let mut world = World::new(vec![(a, 36), (b, 40)]).unwrap();
    world.run_until(Nanos::from_ms(10), &mut ());
    let seen = seen.borrow();
    let hop = Nanos::from_ns(1_008_304);
    let [Seen::Delivered {
        bss: BssId(0),
        at: up_air,
    }, Seen::Wire {
        bss: BssId(0),
        at: junction,
        link: Link::Up,
    }, Seen::Wire {
        bss: BssId(1),
        at: down_wire,
        link: Link::Down,
    }, Seen::Delivered {
        bss: BssId(1),
        at: down_air,
    }, Seen::Arrived { bss: BssId(1), .. }, Seen::Back {
        bss: BssId(0),
        at: back,
        dropped: None,
    }] = seen[..]
    else {
        panic!("not the path through the junction: {seen:?}");
    };
    assert_eq!(junction, up_air + hop);
    assert_eq!(down_wire, junction + hop);
    assert!(
        down_air > down_wire,
        "it crossed BSS 1's air after its wire"
    );
    assert_eq!(back, down_air, "its arrival goes home at once");
}
