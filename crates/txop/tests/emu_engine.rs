//! The emulator's forwarding engine against the simulator, without root: real packet
//! bytes through the engine on a virtual clock take exactly the simulator's round
//! trips, because both drive the same modelled network (`txop_core::network`: the
//! cell, the wired link, the stations' host buses) under the same ordering rule.
//!
//! (The engine's own tests are in `txop-emu`; they are here because `txop-emu` does not
//! depend on the simulator.)

use std::collections::{BTreeMap, HashMap};
use txop_core::network::{NetworkConfig, WiredConfig};
use txop_core::Nanos;
use txop_emu::addr::Endpoint;
use txop_emu::engine::{Engine, DEFAULT_SLAB_PACKETS};
use txop_sim::traffic::ping::Ping;
use txop_sim::traffic::{Flow, Host};
use txop_sim::{SimConfig, Simulation};

#[path = "../../txop-emu/tests/support/mod.rs"]
mod emu_support;
use emu_support::*;

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
    let network = NetworkConfig {
        cell: cell("linux-6.16", 1),
        wired,
        host_bus: Vec::new(),
    };
    let mut e = Engine::new(network, seed, 1024).unwrap();
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

/// Each echo's round trip (ms) per station, in the order the replies came back.
type RttsPerStation = BTreeMap<u16, Vec<f64>>;

/// Replay a scenario's ICMP pings from the server through the engine on a virtual
/// clock: each request is written at its modelled time as real bytes, and each
/// station's "kernel" answers the moment the request is written to it.
fn replay_server_pings(cfg: &SimConfig, e: &mut Engine) -> RttsPerStation {
    // Requests to send: (time, order) → (station, sequence number).
    let mut due: BTreeMap<(Nanos, u64), (Endpoint, Endpoint, Vec<u8>)> = BTreeMap::new();
    let mut order = 0u64;
    for flow in &cfg.flows {
        let Flow::Ping(p) = flow else {
            panic!("a scenario of pings only");
        };
        let (Host::Server, Host::Station(n)) = (p.from, p.to) else {
            panic!("pings from the server to a station");
        };
        assert!(
            !p.udp && p.len_bytes == 84,
            "ICMP echoes of ping's default size"
        );
        let (mut t, mut seq) = (p.start, 0u16);
        loop {
            let req = icmp_echo(Endpoint::Server, Endpoint::Station(n), true, seq);
            due.insert((t, order), (Endpoint::Server, Endpoint::Station(n), req));
            order += 1;
            // The simulator's next request, as its ping flow schedules it.
            t += p.interval;
            seq += 1;
            if p.stop.is_some_and(|s| t >= s) {
                break;
            }
        }
    }
    let mut sent: HashMap<(Endpoint, u16), Nanos> = HashMap::new();
    let mut rtts = RttsPerStation::new();
    let mut port = FakePort::default();
    loop {
        let next_in = due.first_key_value().map(|(&(t, _), _)| t);
        let (t, inject) = match (e.next_deadline(), next_in) {
            (Some(d), Some(i)) if d < i => (d, false),
            (_, Some(i)) => (i, true),
            (Some(d), None) => (d, false),
            (None, None) => break,
        };
        if t > cfg.duration {
            break;
        }
        port.now.set(t);
        if inject {
            let (_, (from, to, bytes)) = due.pop_first().unwrap();
            if from == Endpoint::Server {
                sent.insert((to, echo_fields(&bytes).1), t);
            }
            let b = buf(&bytes, e);
            e.packet_in(t, from, b, bytes.len(), &mut port);
        } else {
            e.advance(t, &mut port);
        }
        for (at, to, bytes) in port.writes.drain(..) {
            let (kind, seq) = echo_fields(&bytes);
            match (to, kind) {
                (Endpoint::Station(n), 8) => {
                    let rep = icmp_echo(to, Endpoint::Server, false, seq);
                    due.insert((at, order), (Endpoint::Station(n), Endpoint::Server, rep));
                    order += 1;
                }
                (Endpoint::Server, 0) => {
                    let from = txop_emu::parse::PacketInfo::parse(&bytes).unwrap().src;
                    let Some(Endpoint::Station(n)) = Endpoint::of(from, e.stations()) else {
                        panic!("a reply from a station");
                    };
                    let t_req = sent[&(Endpoint::Station(n), seq)];
                    rtts.entry(n).or_default().push((at - t_req).as_ms_f64());
                }
                other => panic!("unexpected write {other:?}"),
            }
        }
    }
    rtts
}

/// `txop emu e5-sdio-ping` carries station 1's SDIO host bus: the engine, fed the
/// scenario's pings as real bytes on a virtual clock, takes exactly the simulator's
/// round trip for every echo, through the polled bus (3 to 13 ms) to station 1 and
/// without one (1.7 ms) to station 2. An engine without the bus would answer station
/// 1's pings in about 1.7 ms.
#[test]
fn e5_sdio_ping_through_the_engine_takes_the_simulators_round_trips() {
    let p = txop::runner::prepare("e5-sdio-ping", &[], None).unwrap();
    let cfg = p.cfg;
    let sim = Simulation::new(cfg.clone()).unwrap().run();
    let emu = txop::emulated::single(cfg.clone());
    assert!(
        emu.network.host_bus.first().is_some_and(|b| b.is_some()),
        "station 1 has its bus in the emulator's network"
    );
    let mut e = Engine::new(emu.network, emu.seed, DEFAULT_SLAB_PACKETS).unwrap();
    let rtts = replay_server_pings(&cfg, &mut e);
    for (i, flow) in sim.flows.iter().enumerate() {
        let Flow::Ping(ping) = &cfg.flows[i] else {
            unreachable!("checked by the replay");
        };
        let Host::Station(n) = ping.to else {
            unreachable!("checked by the replay");
        };
        let model: Vec<f64> = flow.rtt_samples.iter().map(|s| s.1).collect();
        let engine = &rtts[&n];
        assert_eq!(flow.sample_stride, 1, "every reply kept");
        assert_eq!(engine.len(), model.len(), "station {n}: replies");
        assert!(model.len() >= 99, "station {n}: {} replies", model.len());
        for (k, (a, b)) in engine.iter().zip(&model).enumerate() {
            assert!(
                (a - b).abs() < 1e-6,
                "station {n}, echo {k}: engine {a} ms, simulator {b} ms"
            );
        }
    }
    // Independent of the simulator: through the polled bus every echo waits for a
    // poll of the card, at most one idle period (two 5 ms jiffies) apart.
    let (bussed, plain) = (&rtts[&1], &rtts[&2]);
    let max = |v: &[f64]| v.iter().copied().fold(f64::MIN, f64::max);
    let min = |v: &[f64]| v.iter().copied().fold(f64::MAX, f64::min);
    assert!(max(plain) < 2.0, "without a bus: {} ms", max(plain));
    assert!(min(bussed) > max(plain), "the bus adds time to every echo");
    assert!(
        max(bussed) - min(bussed) > 5.0,
        "the polls' phases spread it"
    );
    let bus = e.network().host_bus(1).unwrap().stats();
    assert_eq!(bus.packets_to_host, bussed.len() as u64);
    assert_eq!(bus.packets_to_device, bussed.len() as u64);
}
