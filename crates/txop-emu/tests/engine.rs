//! The forwarding engine without root: real packet bytes through the model on a
//! virtual clock, checked against the packets' own headers and the model's counters.
//! (Its comparisons with the simulator are in the `txop` crate's `tests/emu_engine.rs`:
//! this crate does not depend on the simulator.)

use etherparse::PacketBuilder;
use txop_core::cell::CellConfig;
use txop_core::driver::bus::BusConfig;
use txop_core::network::NetworkConfig;
use txop_core::world::{BssId, World};
use txop_core::Nanos;
use txop_emu::addr::{Endpoint, Site};
use txop_emu::engine::{Engine, Port};
use txop_emu::parse::PacketInfo;
use txop_emu::slab::BUF_BYTES;

#[path = "support/mod.rs"]
mod support;
use support::*;

#[test]
fn non_ip_malformed_and_foreign_packets_are_counted_and_dropped() {
    let mut e = Engine::new(network(cell("linux-6.16", 2)), 1, 64).unwrap();
    let mut port = FakePort::default();
    let good = icmp_echo(Endpoint::Station(1), Endpoint::Server, true, 1);
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (vec![0x00, 0x01, 0x02], "not_ip"),
        (vec![0x08, 0x06, 0x00, 0x01], "not_ip"),
        (good[..30].to_vec(), "malformed"),
        (
            icmp_echo(Endpoint::Station(1), Endpoint::Station(3), true, 1),
            "unroutable",
        ),
        (
            {
                let b = PacketBuilder::ipv4([198, 18, 1, 1], [198, 51, 100, 1], 64).udp(1, 2);
                let mut v = Vec::new();
                b.write(&mut v, b"x").unwrap();
                v
            },
            "unroutable",
        ),
        (
            icmp_echo(Endpoint::Station(1), Endpoint::Station(1), true, 1),
            "unroutable",
        ),
    ];
    for (bytes, _) in &cases {
        let b = buf(bytes, &mut e);
        e.packet_in(Nanos::ZERO, Endpoint::Station(1), b, bytes.len(), &mut port);
    }
    let oversized = e.buffer();
    e.packet_in(
        Nanos::ZERO,
        Endpoint::Station(1),
        oversized,
        BUF_BYTES,
        &mut port,
    );
    let c = e.counters;
    assert_eq!((c.not_ip, c.malformed, c.unroutable), (2, 2, 3), "{c:?}");
    assert_eq!(c.offered_packets, 0);
    run_until(&mut e, &mut port, Nanos::from_secs(1));
    assert!(port.writes.is_empty());
    // A station's packet to another station goes through the AP and arrives.
    let s2s = icmp_echo(Endpoint::Station(1), Endpoint::Station(2), true, 9);
    let b = buf(&s2s, &mut e);
    let t = port.now.get();
    e.packet_in(t, Endpoint::Station(1), b, s2s.len(), &mut port);
    run_until(&mut e, &mut port, Nanos::from_secs(2));
    assert_eq!(port.writes.len(), 1);
    assert_eq!(port.writes[0].1, Endpoint::Station(2));
    let s = e.cell().stats();
    assert_eq!(
        (s[1].up.delivered_packets, s[2].down.delivered_packets),
        (1, 1)
    );
}

#[test]
fn writes_to_a_device_that_is_down_are_counted_as_drops() {
    let mut e = Engine::new(network(cell("linux-6.16", 1)), 1, 64).unwrap();
    let mut port = FakePort {
        down: Some(Endpoint::Station(1)),
        ..FakePort::default()
    };
    for seq in 0..3 {
        let p = icmp_echo(Endpoint::Server, Endpoint::Station(1), true, seq);
        let b = buf(&p, &mut e);
        e.packet_in(Nanos::ZERO, Endpoint::Server, b, p.len(), &mut port);
    }
    run_until(&mut e, &mut port, Nanos::from_secs(1));
    assert_eq!(e.counters.write_errors, 3);
    assert_eq!(e.counters.written_packets, 0);
    assert_eq!(e.packets_inside(), 0, "the bytes were freed");
}

/// ECT(0) UDP at twice what a 6.5 Mbit/s station carries, through fq_codel with ECN:
/// the model marks instead of dropping, the marks are in the written headers (with a
/// valid IPv4 checksum), and every packet is accounted for.
#[test]
fn codel_marks_reach_the_real_headers_and_packets_are_conserved() {
    let mut e = Engine::new(network(cell("linux-6.16", 1)), 3, 4096).unwrap();
    let mut port = FakePort::default();
    let gap = Nanos::from_us(1_000); // 1500 B per ms = 12 Mbit/s
    let mut t = Nanos::ZERO;
    let n = 4000;
    for i in 0..n {
        let b = PacketBuilder::ipv4([198, 18, 0, 1], [198, 18, 1, 1], 64).udp(5000, 6000);
        let mut v = Vec::new();
        b.write(&mut v, &[i as u8; 1472]).unwrap();
        v[1] = 0b10; // ECT(0)
        let mut h = etherparse::Ipv4Header::from_slice(&v).unwrap().0;
        h.header_checksum = h.calc_header_checksum();
        v[..20].copy_from_slice(&h.to_bytes());
        run_until(&mut e, &mut port, t);
        port.now.set(t);
        let bb = buf(&v, &mut e);
        e.packet_in(t, Endpoint::Server, bb, v.len(), &mut port);
        t += gap;
    }
    run_until(&mut e, &mut port, t + Nanos::from_secs(30));
    let mut ce = 0;
    for (_, to, bytes) in &port.writes {
        assert_eq!(*to, Endpoint::Station(1));
        let (h, _) = etherparse::Ipv4Header::from_slice(bytes).unwrap();
        assert_eq!(
            h.header_checksum,
            h.calc_header_checksum(),
            "checksum fixed"
        );
        if PacketInfo::parse(bytes).unwrap().ecn == txop_core::packet::Ecn::Ce {
            ce += 1;
        }
    }
    let c = e.counters;
    assert!(ce > 0, "CoDel marked some packets");
    assert_eq!(ce, c.ce_marks);
    assert_eq!(e.marks[1], [0, ce], "downlink marks of station 1");
    assert_eq!(c.offered_packets, n);
    assert_eq!(
        c.offered_packets,
        c.written_packets
            + c.cell_drops
            + c.wire_drops
            + c.write_errors
            + e.packets_inside() as u64,
        "{c:?}"
    );
    // About 6 Mbit/s got through: half of what was offered.
    let secs = port.writes.last().unwrap().0.as_secs_f64();
    let mbps = c.written_bytes as f64 * 8.0 / secs / 1e6;
    assert!((4.5..6.5).contains(&mbps), "{mbps} Mbit/s");
}

#[test]
fn the_slab_bounds_the_packets_inside() {
    // A bloated stack queues 1000 packets per AC; a 32-packet slab refuses the rest.
    let mut e = Engine::new(network(cell("linux-4.8-bloated", 1)), 1, 32).unwrap();
    let mut port = FakePort::default();
    for i in 0..100u16 {
        let p = icmp_echo(Endpoint::Server, Endpoint::Station(1), true, i);
        let b = buf(&p, &mut e);
        e.packet_in(Nanos::ZERO, Endpoint::Server, b, p.len(), &mut port);
    }
    assert_eq!(e.packets_inside(), 32);
    assert_eq!(e.counters.slab_full, 68);
    run_until(&mut e, &mut port, Nanos::from_secs(5));
    assert_eq!(port.writes.len(), 32);
}

/// The network of `cell` with `bus` between station 1's host and its chip.
fn network_with_bus(cell: CellConfig, bus: BusConfig) -> NetworkConfig {
    NetworkConfig {
        host_bus: vec![Some(bus)],
        ..network(cell)
    }
}

/// When station 1's "kernel" gets the server's echo request, and when the server gets
/// the reply it sends back at once.
fn echo_times(e: &mut Engine) -> (Nanos, Nanos) {
    let mut port = FakePort::default();
    let req = icmp_echo(Endpoint::Server, Endpoint::Station(1), true, 1);
    let b = buf(&req, e);
    e.packet_in(Nanos::ZERO, Endpoint::Server, b, req.len(), &mut port);
    run_to_write(e, &mut port);
    let (t_req, to, _) = port.writes[0].clone();
    assert_eq!(to, Endpoint::Station(1));
    port.writes.clear();
    let rep = icmp_echo(Endpoint::Station(1), Endpoint::Server, false, 1);
    let b = buf(&rep, e);
    e.packet_in(t_req, Endpoint::Station(1), b, rep.len(), &mut port);
    run_to_write(e, &mut port);
    let (t_rep, to, _) = port.writes[0].clone();
    assert_eq!(to, Endpoint::Server);
    run_until(e, &mut port, t_rep + Nanos::from_secs(1));
    (t_req, t_rep)
}

/// A station with a host bus gets its packets across the bus, both ways: the bus
/// counts them, the echo waits for the polling thread on the way in and for the bus
/// on the way out, and the results report the bus.
#[test]
fn a_stations_host_bus_carries_its_packets_both_ways() {
    let bus = BusConfig::sdio_generic();
    let mut plain = Engine::new(network(cell("linux-6.16", 1)), 1, 64).unwrap();
    let mut bussed = Engine::new(network_with_bus(cell("linux-6.16", 1), bus), 1, 64).unwrap();
    let (req_plain, rep_plain) = echo_times(&mut plain);
    let (req_bus, rep_bus) = echo_times(&mut bussed);
    let s = *bussed
        .network()
        .host_bus(1)
        .expect("station 1 has a bus")
        .stats();
    assert_eq!((s.packets_to_host, s.packets_to_device), (1, 1), "{s:?}");
    // In: the chip holds the request until a poll (every 5 ms jiffy at most two
    // jiffies apart) reads it, which takes at least the read's data phase.
    let (read, _) = bus.data_phase(84 + bus.frame_overhead_bytes, true);
    let delay_in = req_bus - req_plain;
    assert!(
        delay_in >= read && delay_in <= Nanos::from_ms(10) + Nanos::from_ms(5),
        "{delay_in:?}"
    );
    // Out: the host's own work and a write before the reply reaches the chip.
    assert!(
        rep_bus - req_bus > rep_plain - req_plain,
        "{:?} vs {:?} without the bus",
        rep_bus - req_bus,
        rep_plain - req_plain
    );
    let lone = |e: &Engine| txop_emu::addr::Plan::lone(e.stations());
    let r = txop_emu::results::results(&bussed, rep_bus + Nanos::from_secs(1), 1, &lone(&bussed));
    assert_eq!(r.host_buses.len(), 1);
    assert_eq!(r.host_buses[0].station, 1);
    assert_eq!(r.host_buses[0].packets_to_host, 1);
    let c = r.conservation;
    assert_eq!((c.offered_packets, c.delivered_packets), (2, 2), "{c:?}");
    assert_eq!((c.dropped_packets, c.inside_packets), (0, 0), "{c:?}");
    assert!(plain.network().host_bus(1).is_none());
    let r = txop_emu::results::results(&plain, rep_plain + Nanos::from_secs(1), 1, &lone(&plain));
    assert!(r.host_buses.is_empty());
}

/// A burst the air delivers faster than the polled bus reads overflows the chip's
/// receive buffers: the bus drops, the engine counts those drops as the bus's, and
/// every packet is accounted for.
#[test]
fn host_bus_drops_are_counted_and_packets_conserved() {
    let bus = BusConfig::sdio_generic();
    let mut fast = cell("linux-6.16", 1);
    fast.stations[0] = ht20(7);
    let mut e = Engine::new(network_with_bus(fast, bus), 1, 4096).unwrap();
    let mut port = FakePort::default();
    let n = 200u64;
    for i in 0..n {
        let b = PacketBuilder::ipv4([198, 18, 0, 1], [198, 18, 1, 1], 64).udp(5000, 6000);
        let mut v = Vec::new();
        b.write(&mut v, &[i as u8; 1472]).unwrap();
        let bb = buf(&v, &mut e);
        e.packet_in(Nanos::ZERO, Endpoint::Server, bb, v.len(), &mut port);
    }
    run_until(&mut e, &mut port, Nanos::from_secs(10));
    let c = e.counters;
    let s = *e.network().host_bus(1).unwrap().stats();
    assert!(c.bus_drops > 0, "{c:?}");
    assert_eq!(c.bus_drops, s.dropped_device_rx, "{s:?}");
    assert_eq!(c.written_packets, s.packets_to_host, "{s:?}");
    assert_eq!(
        c.offered_packets,
        c.written_packets + c.cell_drops + c.wire_drops + c.bus_drops + c.write_errors,
        "{c:?}"
    );
    assert_eq!((c.offered_packets, e.packets_inside()), (n, 0), "{c:?}");
}

/// A port on a virtual clock that records every write with its site (several BSSs).
#[derive(Default)]
struct SitePort {
    now: std::cell::Cell<Nanos>,
    writes: Vec<(Nanos, Site)>,
}

impl Port for SitePort {
    fn now(&self) -> Nanos {
        self.now.get()
    }
    fn write(&mut self, to: Endpoint, bytes: &[u8]) -> std::io::Result<()> {
        self.write_at(Site::new(BssId(0), to), bytes)
    }
    fn write_at(&mut self, to: Site, _bytes: &[u8]) -> std::io::Result<()> {
        self.writes.push((self.now.get(), to));
        Ok(())
    }
}

/// An ICMP echo request between two sites' addresses.
fn echo_between(from: Site, to: Site) -> Vec<u8> {
    let b =
        PacketBuilder::ipv4(from.ipv4().octets(), to.ipv4().octets(), 64).icmpv4_echo_request(7, 1);
    let mut v = Vec::new();
    b.write(&mut v, &[0u8; 56]).unwrap();
    v
}

/// BSS `k` of two (2 stations each): its network seeded `seed`.
fn bss_engine(k: u16, seed: u64) -> Engine {
    Engine::in_world(
        network(cell("linux-6.16", 2)),
        seed,
        64,
        BssId(k),
        vec![2, 2],
    )
    .unwrap()
}

/// When a packet read at `from` at time 0 is written in `world`, and where.
fn first_write(mut world: World<Engine>, from: Site, to: Site) -> (Nanos, Site) {
    let mut port = SitePort::default();
    let bytes = echo_between(from, to);
    let engine = &mut world.bsss_mut()[from.bss.index()];
    let b = buf(&bytes, engine);
    engine.packet_in(Nanos::ZERO, from.endpoint, b, bytes.len(), &mut port);
    world.settle(&mut port);
    while let Some(due) = world.next_due(Nanos::from_secs(1)) {
        port.now.set(due.at);
        world.step(due, &mut port);
    }
    assert_eq!(port.writes.len(), 1, "{:?}", port.writes);
    port.writes[0]
}

/// The emulator's junction: a packet for another BSS crosses its own BSS up to the
/// server's end of the wired link and the other BSS down from there, taking exactly
/// the time of the two one-BSS legs (each measured in its BSS alone, with the same
/// seed: the cells are idle, so a leg's time does not depend on when it starts). A
/// server stands at the junction: from it, a packet enters the other BSS at once.
#[test]
fn a_packet_to_another_bss_takes_its_legs_in_both_bsss() {
    let site = |k: u16, e: Endpoint| Site::new(BssId(k), e);
    let two = || World::new(vec![(bss_engine(0, 1), 36), (bss_engine(1, 2), 36)]).unwrap();
    let (sta1, server) = (Endpoint::Station(1), Endpoint::Server);
    // The one-BSS legs, each within its own BSS: up from station 1 in BSS 0, down to
    // station 1 in BSS 1, up from station 1 in BSS 1.
    let up0 = first_write(two(), site(0, sta1), site(0, server)).0;
    let down1 = first_write(two(), site(1, server), site(1, sta1)).0;
    let up1 = first_write(two(), site(1, sta1), site(1, server));
    assert!(
        up0 > Nanos::from_ms(1) && down1 > Nanos::from_ms(1),
        "each crosses a wire"
    );
    let (at, to) = first_write(two(), site(0, sta1), site(1, sta1));
    assert_eq!((at, to), (up0 + down1, site(1, sta1)), "station to station");
    let (at, to) = first_write(two(), site(0, server), site(1, sta1));
    assert_eq!((at, to), (down1, site(1, sta1)), "from the junction");
    let (at, to) = first_write(two(), site(1, sta1), site(0, server));
    assert_eq!((at, to), (up1.0, site(0, server)), "to the junction");
}
