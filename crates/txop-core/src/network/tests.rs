//! The network's routing, its calling contract and the agenda's ordering rule, on a
//! small driver harness.

use super::*;
use crate::cell::StationConfig;
use crate::driver::bus::BusConfig;
use crate::phy::channel::ErrorModel;
use crate::phy::{Band, Standard, TxVector};

/// One 802.11a station at 54 Mbit/s, no beacons, the default wired link (1 Gbit/s,
/// 1 ms); `bus` between station 1's host and its chip.
fn network(bus: Option<BusConfig>) -> Network {
    let sta = StationConfig::new(TxVector::Ofdm { rate_mbps: 54 }, ErrorModel::None);
    let cell = CellConfig::new(Standard::A, Band::Ghz5, vec![sta]);
    let cfg = NetworkConfig {
        cell,
        wired: WiredConfig::default(),
        host_bus: vec![bus],
    };
    Network::new(cfg, 1).unwrap()
}

fn packet(id: u64, from: Host, to: Host) -> Packet {
    let mut p = Packet::new(id, from.node(), to.node(), 1000);
    // The harness's own record of the destination host.
    p.token = match to {
        Host::Server => 0,
        Host::Ap => 1,
        Host::Station(n) => 1 + n as u64,
    };
    p
}

fn host_of(token: u64) -> Host {
    match token {
        0 => Host::Server,
        1 => Host::Ap,
        n => Host::Station(n as u16 - 1),
    }
}

/// What the harness saw, in order.
#[derive(Clone, Debug, PartialEq)]
enum Seen {
    Arrived { at: Nanos, to: Host, id: u64 },
    Dropped { id: u64, place: DropPlace },
    Event(u32),
}

/// The harness's events: numbered markers, and the network's timers (also the world's
/// harness's, `crate::world::tests`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Ev {
    Marker(u32),
    Net(Timer),
}

impl From<Timer> for Ev {
    fn from(t: Timer) -> Ev {
        Ev::Net(t)
    }
}

impl AgendaEvent for Ev {
    fn timer(&self) -> Option<Timer> {
        match self {
            Ev::Net(t) => Some(*t),
            Ev::Marker(_) => None,
        }
    }
}

/// A driver as the contract asks: the agenda's order, every call's outputs polled.
struct Harness {
    net: Network,
    agenda: Agenda,
    events: EventQueue<Ev>,
    seen: Vec<Seen>,
}

impl Harness {
    fn new(net: Network) -> Harness {
        Harness {
            net,
            agenda: Agenda::new(),
            events: EventQueue::default(),
            seen: Vec::new(),
        }
    }

    fn send(&mut self, now: Nanos, from: Host, p: Packet) {
        let call = self.net.handle_packet(now, from, p);
        self.pump(call);
    }

    fn pump(&mut self, call: Call) {
        match call {
            Call::Done => {}
            Call::Output(o) => self.output(o),
            Call::OnWire { link } => self.agenda.on_wire(link, &mut self.events),
            Call::HostBus { station } => {
                while let Some(o) =
                    self.agenda
                        .poll_host_bus(&mut self.net, &mut self.events, station)
                {
                    self.output(o);
                }
            }
        }
    }

    fn output(&mut self, o: NetOutput) {
        match o {
            NetOutput::Arrived { at, to, packet } => self.seen.push(Seen::Arrived {
                at,
                to,
                id: packet.id,
            }),
            NetOutput::Dropped { packet, place, .. } => self.seen.push(Seen::Dropped {
                id: packet.id,
                place,
            }),
        }
    }

    fn run_until(&mut self, until: Nanos) {
        while let Some(t) = self.agenda.next_at(&self.net, &self.events) {
            if t > until {
                break;
            }
            match self.agenda.take(t, &mut self.events) {
                Some(Due::Cell) => self.net.handle_cell_timeout(t),
                Some(Due::Network(timer)) => {
                    let call = self.net.handle_timeout(t, timer);
                    self.pump(call);
                }
                Some(Due::Event(Ev::Marker(m))) => self.seen.push(Seen::Event(m)),
                Some(Due::Event(Ev::Net(_)) | Due::Superseded) | None => {}
            }
            while let Some(o) = self.net.poll_cell_output() {
                if let Output::Delivered { at, packet, .. } = o {
                    let call = self.net.forward(at, packet, host_of(packet.token));
                    self.pump(call);
                }
            }
        }
    }
}

/// The server's packet crosses the wire (1 ms and its serialisation) and the air to
/// the station; the station's answer crosses the air and the wire back.
#[test]
fn packets_cross_the_wire_and_the_air_both_ways() {
    let mut h = Harness::new(network(None));
    h.send(
        Nanos::ZERO,
        Host::Server,
        packet(1, Host::Server, Host::Station(1)),
    );
    h.run_until(Nanos::from_ms(10));
    let Some(&Seen::Arrived { at, to, id }) = h.seen.first() else {
        panic!("{:?}", h.seen);
    };
    let wire = WiredLink::new(1_000_000_000, Nanos::from_ms(1), 1).serialisation(1000);
    assert_eq!((to, id), (Host::Station(1), 1));
    assert!(at > Nanos::from_ms(1) + wire, "{at:?}");
    h.send(
        at,
        Host::Station(1),
        packet(2, Host::Station(1), Host::Server),
    );
    h.run_until(Nanos::from_ms(20));
    let Some(&Seen::Arrived { at: back, to, id }) = h.seen.get(1) else {
        panic!("{:?}", h.seen);
    };
    assert_eq!((to, id), (Host::Server, 2));
    assert!(back > at + Nanos::from_ms(1) + wire, "{back:?}");
    assert!(h.net.wire(Link::Down).is_empty() && h.net.wire(Link::Up).is_empty());
}

/// A full wire drops at its tail, and says which wire.
#[test]
fn a_full_wire_drops_and_names_itself() {
    let mut h = Harness::new(network(None));
    let limit = h.net.wire(Link::Down).limit_packets as u64;
    for id in 0..=limit {
        h.send(
            Nanos::ZERO,
            Host::Server,
            packet(id, Host::Server, Host::Ap),
        );
    }
    let place = DropPlace::Wire(Link::Down);
    assert_eq!(h.seen, vec![Seen::Dropped { id: limit, place }]);
    assert_eq!(h.net.wire(Link::Down).dropped, 1);
}

/// Each call says what it produced: a packet for a host without a bus arrives at once,
/// the server's goes onto the wire, the AP's into the cell, a station's with a bus onto
/// its bus.
#[test]
fn each_call_says_what_it_produced() {
    let mut net = network(Some(BusConfig::sdio_generic()));
    let p = packet(1, Host::Station(1), Host::Ap);
    let arrived = NetOutput::Arrived {
        at: Nanos(5),
        to: Host::Ap,
        packet: p,
    };
    assert_eq!(net.forward(Nanos(5), p, Host::Ap), Call::Output(arrived));
    let p = packet(2, Host::Server, Host::Ap);
    let on_wire = Call::OnWire { link: Link::Down };
    assert_eq!(net.handle_packet(Nanos(5), Host::Server, p), on_wire);
    let p = packet(3, Host::Ap, Host::Station(1));
    assert_eq!(net.handle_packet(Nanos(6), Host::Ap, p), Call::Done);
    let p = packet(4, Host::Station(1), Host::Server);
    let fed = Call::HostBus { station: 1 };
    assert_eq!(net.handle_packet(Nanos(6), Host::Station(1), p), fed);
    let up = Timer::Wire(Link::Up);
    assert_eq!(
        net.handle_timeout(Nanos(7), up),
        Call::Done,
        "nothing on it"
    );
}

/// At one instant the cell's deadline runs before anything else, however early the
/// other thing was scheduled.
#[test]
fn the_cells_deadline_runs_first_at_its_instant() {
    let mut h = Harness::new(network(None));
    h.send(Nanos::ZERO, Host::Ap, packet(1, Host::Ap, Host::Station(1)));
    let t = h.net.poll_cell_timeout().expect("the cell contends");
    assert!(t > Nanos::ZERO);
    h.events.push(t, Ev::Marker(7));
    assert_eq!(h.agenda.next_at(&h.net, &h.events), Some(t));
    assert_eq!(h.agenda.take(t, &mut h.events), Some(Due::Cell));
    h.net.handle_cell_timeout(t);
    assert_eq!(h.agenda.next_at(&h.net, &h.events), Some(t));
    assert_eq!(
        h.agenda.take(t, &mut h.events),
        Some(Due::Event(Ev::Marker(7)))
    );
}

/// A packet on a wire arrives among the events due at the same instant exactly where
/// an event scheduled when it was sent would have: after those scheduled before, before
/// those scheduled after.
#[test]
fn a_wire_arrival_keeps_the_place_of_its_sending() {
    let mut h = Harness::new(network(None));
    let wire = WiredLink::new(1_000_000_000, Nanos::from_ms(1), 1).serialisation(1000);
    let arrival = Nanos::from_ms(1) + wire;
    h.events.push(arrival, Ev::Marker(1));
    h.send(
        Nanos::ZERO,
        Host::Server,
        packet(9, Host::Server, Host::Station(1)),
    );
    assert_eq!(h.net.poll_timeout(Timer::Wire(Link::Down)), Some(arrival));
    h.events.push(arrival, Ev::Marker(2));
    let mut order = Vec::new();
    while let Some(t) = h.agenda.next_at(&h.net, &h.events) {
        if t > arrival {
            break;
        }
        let due = h.agenda.take(t, &mut h.events).unwrap();
        match due {
            Due::Cell => h.net.handle_cell_timeout(t),
            Due::Network(timer) => {
                let call = h.net.handle_timeout(t, timer);
                h.pump(call);
            }
            Due::Event(_) | Due::Superseded => {}
        }
        // (The packet entering the cell gives the cell a deadline at this instant,
        // which runs first: rule 1.)
        if due != Due::Cell {
            order.push(due);
        }
    }
    assert_eq!(
        order,
        vec![
            Due::Event(Ev::Marker(1)),
            Due::Network(Timer::Wire(Link::Down)),
            Due::Event(Ev::Marker(2)),
        ]
    );
}

/// A host bus's deadline is queued when the bus reports it may have changed, fires
/// once at exactly that time, and an entry at any other time is skipped.
#[test]
fn host_bus_deadlines_fire_once_and_moved_ones_are_skipped() {
    let mut h = Harness::new(network(Some(BusConfig::sdio_generic())));
    h.send(
        Nanos::ZERO,
        Host::Station(1),
        packet(1, Host::Station(1), Host::Server),
    );
    let station = 1;
    let t = h
        .net
        .poll_timeout(Timer::HostBus { station })
        .expect("the bus works");
    // An entry for the bus at another time (a deadline that moved since).
    h.events.push(t, Ev::Net(Timer::HostBus { station }));
    assert_eq!(h.events.len(), 2, "the agenda queued the bus's deadline");
    assert_eq!(h.agenda.next_at(&h.net, &h.events), Some(t));
    assert_eq!(
        h.agenda.take(t, &mut h.events),
        Some(Due::Network(Timer::HostBus { station }))
    );
    assert_eq!(
        h.agenda.take(t, &mut h.events),
        Some(Due::Superseded),
        "the same deadline does not fire twice"
    );
    // Carried through: the bus hands the packet to the chip, the air and the wire.
    let call = h.net.handle_timeout(t, Timer::HostBus { station });
    h.pump(call);
    h.run_until(Nanos::from_secs(1));
    let s = h.net.host_bus(1).unwrap().stats();
    assert_eq!(s.packets_to_device, 1);
    assert!(
        matches!(
            h.seen[..],
            [Seen::Arrived {
                to: Host::Server,
                id: 1,
                ..
            }]
        ),
        "{:?}",
        h.seen
    );
}

/// A bus's packets for the host count as bytes to the host; other stations have none.
#[test]
fn bytes_to_the_host_are_counted_per_bus() {
    let mut h = Harness::new(network(Some(BusConfig::sdio_vendor())));
    h.send(Nanos::ZERO, Host::Ap, packet(1, Host::Ap, Host::Station(1)));
    h.run_until(Nanos::from_secs(1));
    assert!(
        matches!(
            h.seen[..],
            [Seen::Arrived {
                to: Host::Station(1),
                id: 1,
                ..
            }]
        ),
        "{:?}",
        h.seen
    );
    assert_eq!(h.net.bus_to_host_bytes(1), 1000);
    assert_eq!(h.net.bus_to_host_bytes(2), 0);
    assert_eq!(h.net.host_buses().map(|(s, _)| s).collect::<Vec<_>>(), [1]);
}
