//! The forwarding engine without root: real packet bytes through the model on a
//! virtual clock, checked against the simulator and the packets' own headers.

use etherparse::PacketBuilder;
use std::cell::Cell as StdCell;
use txop_core::cell::{CellConfig, StationConfig};
use txop_core::phy::channel::ErrorModel;
use txop_core::phy::{Band, ChannelWidth, GuardInterval, Standard, TxVector};
use txop_core::{stack, Nanos};
use txop_emu::addr::Endpoint;
use txop_emu::engine::{Engine, Port};
use txop_emu::parse::PacketInfo;
use txop_emu::slab::BUF_BYTES;
use txop_sim::traffic::ping::Ping;
use txop_sim::traffic::{Flow, Host};
use txop_sim::{SimConfig, Simulation, WiredConfig};

/// A port on a virtual clock that records every write.
#[derive(Default)]
struct FakePort {
    now: StdCell<Nanos>,
    writes: Vec<(Nanos, Endpoint, Vec<u8>)>,
    /// Writes to this endpoint fail with EIO (a TUN device that is not up).
    down: Option<Endpoint>,
}

impl Port for FakePort {
    fn now(&self) -> Nanos {
        self.now.get()
    }
    fn write(&mut self, to: Endpoint, bytes: &[u8]) -> std::io::Result<()> {
        if self.down == Some(to) {
            return Err(std::io::Error::from_raw_os_error(libc_eio()));
        }
        self.writes.push((self.now.get(), to, bytes.to_vec()));
        Ok(())
    }
}

fn libc_eio() -> i32 {
    5
}

fn ht20(mcs: u8) -> StationConfig {
    StationConfig::new(
        TxVector::Ht {
            mcs,
            width: ChannelWidth::Mhz20,
            gi: GuardInterval::Long,
        },
        ErrorModel::None,
    )
}

fn cell(stack_name: &str, stations: usize) -> CellConfig {
    let mut c = CellConfig::new(
        Standard::N,
        Band::Ghz5,
        (0..stations).map(|_| ht20(0)).collect(),
    );
    c.stack = stack::preset(stack_name).unwrap();
    c
}

fn buf(bytes: &[u8], e: &mut Engine) -> Box<[u8; BUF_BYTES]> {
    let mut b = e.buffer();
    b[..bytes.len()].copy_from_slice(bytes);
    b
}

fn icmp_echo(from: Endpoint, to: Endpoint, request: bool, seq: u16) -> Vec<u8> {
    let b = PacketBuilder::ipv4(from.ipv4().octets(), to.ipv4().octets(), 64);
    let b = if request {
        b.icmpv4_echo_request(7, seq)
    } else {
        b.icmpv4_echo_reply(7, seq)
    };
    let mut v = Vec::new();
    b.write(&mut v, &[0u8; 56]).unwrap();
    v
}

/// Run the engine on the virtual clock until nothing is left to do or `until`.
fn run_until(e: &mut Engine, port: &mut FakePort, until: Nanos) {
    while let Some(t) = e.next_deadline() {
        if t > until {
            break;
        }
        port.now.set(t);
        e.advance(t, port);
    }
    port.now.set(until.max(port.now.get()));
}

/// Run the engine on the virtual clock up to the instant of its next write.
fn run_to_write(e: &mut Engine, port: &mut FakePort) {
    let before = port.writes.len();
    while let Some(t) = e.next_deadline() {
        port.now.set(t);
        e.advance(t, port);
        if port.writes.len() > before {
            return;
        }
    }
}

#[test]
fn a_ping_through_the_engine_takes_exactly_the_simulators_round_trip() {
    let seed = 7;
    let wired = WiredConfig::default();
    // The simulator: one echo from the server to station 1, answered at once.
    let mut ping = Ping::new(Host::Server, Host::Station(1), 1);
    ping.stop = Some(Nanos::from_ms(1));
    let sim = SimConfig {
        wired,
        ..SimConfig::new(
            cell("linux-6.16", 1),
            vec![Flow::Ping(ping)],
            Nanos::from_secs(1),
            seed,
        )
    };
    let r = Simulation::new(sim).unwrap().run();
    let sim_rtt_ms = r.flows[0].rtt_samples[0].1;

    // The engine: the same request as real bytes; station 1's "kernel" replies the
    // moment the request is written to it.
    let mut e = Engine::new(cell("linux-6.16", 1), seed, wired, 1024).unwrap();
    let mut port = FakePort::default();
    let req = icmp_echo(Endpoint::Server, Endpoint::Station(1), true, 1);
    assert_eq!(req.len(), 84, "ping's default size, as the simulator's");
    let b = buf(&req, &mut e);
    e.packet_in(Nanos::ZERO, Endpoint::Server, b, req.len(), &mut port);
    run_to_write(&mut e, &mut port);
    let (t_req, to, bytes) = port.writes[0].clone();
    assert_eq!(to, Endpoint::Station(1));
    assert_eq!(bytes, req, "delivered unchanged");
    port.writes.clear();
    port.now.set(t_req);
    let rep = icmp_echo(Endpoint::Station(1), Endpoint::Server, false, 1);
    let b = buf(&rep, &mut e);
    e.packet_in(t_req, Endpoint::Station(1), b, rep.len(), &mut port);
    run_to_write(&mut e, &mut port);
    let (t_rep, to, bytes) = port.writes[0].clone();
    assert_eq!((to, bytes), (Endpoint::Server, rep));
    let emu_rtt_ms = t_rep.as_ms_f64();
    assert!(
        (emu_rtt_ms - sim_rtt_ms).abs() < 1e-6,
        "engine {emu_rtt_ms} ms, simulator {sim_rtt_ms} ms"
    );
    // Independent check of the wired part: 2 × (1 ms + (84 + 38) B at 1 Gbit/s).
    let wire_ms = 2.0 * (1.0 + (84.0 + 38.0) * 8.0 / 1e9 * 1e3);
    assert!(emu_rtt_ms > wire_ms, "{emu_rtt_ms} ms");
    run_until(&mut e, &mut port, Nanos::from_secs(1));
    assert_eq!(e.packets_inside(), 0);
    assert_eq!(e.counters.written_packets, 2);
    assert_eq!(
        e.lateness.summary().p99_us,
        0.001,
        "virtual clock: no lateness"
    );
}

#[test]
fn non_ip_malformed_and_foreign_packets_are_counted_and_dropped() {
    let mut e = Engine::new(cell("linux-6.16", 2), 1, WiredConfig::default(), 64).unwrap();
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
    let mut e = Engine::new(cell("linux-6.16", 1), 1, WiredConfig::default(), 64).unwrap();
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
    let mut e = Engine::new(cell("linux-6.16", 1), 3, WiredConfig::default(), 4096).unwrap();
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
    let mut e = Engine::new(cell("linux-4.8-bloated", 1), 1, WiredConfig::default(), 32).unwrap();
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
