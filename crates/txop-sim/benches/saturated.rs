//! Speed benchmark: wall-clock time per simulated second of a saturated cell.
//!
//! Every iteration builds a fresh [`Simulation`] and runs it for a fixed simulated time:
//! one second for the saturated MAC groups, so the time criterion reports per iteration
//! **is** wall-seconds per simulated second; [`TCP_SECS`] for the TCP groups, whose
//! per-iteration time `scripts/bench.sh` divides by it. A TCP run's first second is not
//! typical of a test (its handshake and slow start, the construction and the end-of-run
//! summary weigh on it: at 16 stations 2.66 ms against 2.22 ms per second over ten
//! seconds, one run), and flent's tests last 70 s.
//!
//! Groups:
//! - `dcf_11a_54M_1500B`: legacy DCF 802.11a at 54 Mbit/s, no errors, every station one
//!   saturated 1500-byte uplink flow to the AP (4 packets kept inside the cell), the
//!   setup of ns-3's `wifi-bianchi` example. n = 5, 10, 20, 50. `bench/ns3/dcf.cc` is
//!   its ns-3 counterpart; the target is ≥ 100× faster.
//! - `ht20_mcs7_ampdu_1500B`: an 802.11n cell at HT20 MCS 7 (long GI), EDCA with the
//!   default A-MPDU aggregation, 1500-byte uplink flows kept 128 packets deep so
//!   aggregates are always full. n = 5, 50. Aggregation changes the event rate (fewer,
//!   longer exchanges, more MPDUs per exchange).
//!
//! - `rrul_ht20_mcs7_linux616`: every one of n HT20 MCS7 stations runs flent's rrul
//!   (4 TCP up + 4 down, marked BE/BK/CS5/EF, plus ICMP and UDP pings) against the
//!   wired server, through the linux-6.16 stack, from t = 0 ([`TCP_SECS`] simulated
//!   seconds, TCP's start included). n = 1, 4, 16. The target is 100× faster than ns-3
//!   with one TCP flow per station (`bench/ns3/tcp.cc`).
//!
//! - `tcp_1down_ht20_mcs7_linux616`: one TCP CUBIC download per station from the wired
//!   server (and each station pinging it), linux-6.16, from t = 0: the like-for-like
//!   counterpart of `bench/ns3/tcp.cc`. n = 1, 4, 16.
//! - `bss4_tcp_1down_ht20_mcs7_linux616`: four BSSs on one channel with space (APs at
//!   the corners of a 20 m square, n stations each on a 5 m ring), each station with
//!   the same download and ping as `tcp_1down`, the BSSs coupled by the air
//!   ([`Neighbourhood`]): the counterpart of `bench/ns3/bss4.cc` (whose header gives
//!   the topology; ns-3's side has no pings), without capture as ns-3 3.37 by default.
//!   n = 4, 16 per BSS.
//!
//! The seed is fixed, so every iteration does the same work.
//!
//! Run with `cargo bench -p txop-sim --bench saturated`, or `scripts/bench.sh` for a
//! table.
//!
//! One-shot mode (`saturated --one GROUP N [--warmup-s W --seconds S]`), for
//! `scripts/bench-ns3.sh`, which interleaves single txop and ns-3 runs pair by pair
//! (issue 31): no criterion; builds the simulation of point N of GROUP, runs it once,
//! and prints `txop group=… n=… sim_s=… warmup_s=… wall_s=… throughput_mbps=…`.
//! `wall_s` is timed as `bench/ns3/`'s programs time theirs: without `--warmup-s`
//! (start-up), building the simulation, running it and dropping it (a criterion
//! iteration, plus the drop); with `--warmup-s W` (steady state, TCP groups only), the
//! traffic runs W + S simulated seconds and only the last S are timed, from
//! `run_until(W)`'s return to `run_until(W + S)`'s, with the goodput of those S
//! seconds.
//! Before timing a configuration, each group prints what one run of it simulates
//! (`txop-throughput group=… n=… throughput_mbps=…`; TCP goodput for the TCP groups).

use criterion::{criterion_group, BenchmarkId, Criterion};
use std::hint::black_box;
use std::time::Duration;
use txop_core::cell::{CellConfig, StationConfig};
use txop_core::phy::channel::ErrorModel;
use txop_core::phy::{Band, ChannelWidth, GuardInterval, Standard, TxVector};
use txop_core::{Nanos, NodeId};
use txop_results::Results;
use txop_sim::traffic::saturated::Saturated;
use txop_sim::traffic::Flow;
use txop_sim::{bss_seed, BssConfig, Neighbourhood, SimConfig, Simulation};

const PAYLOAD_BYTES: u32 = 1500;
const SEED: u64 = 1;
/// Simulated seconds per iteration of the TCP groups (`scripts/bench.sh` knows it too).
const TCP_SECS: u64 = 10;

/// `n` stations, each with one saturated uplink flow `depth` packets deep; 1 s long.
fn config(cell: CellConfig, depth: u32) -> SimConfig {
    let n = cell.stations.len() as u16;
    let flows = (1..=n)
        .map(|i| {
            Flow::Saturated(Saturated {
                src: NodeId(i),
                dst: NodeId::AP,
                len_bytes: PAYLOAD_BYTES,
                tid: 0,
                depth,
            })
        })
        .collect();
    SimConfig {
        cell,
        flows,
        duration: Nanos::from_secs(1),
        seed: SEED,
        wired: Default::default(),
        host_bus: Vec::new(),
        remote_ends: Vec::new(),
        tcp_hosts: Default::default(),
    }
}

fn stations(tx: TxVector, n: usize) -> Vec<StationConfig> {
    vec![StationConfig::new(tx, ErrorModel::None); n]
}

fn dcf_11a(n: usize) -> SimConfig {
    let tx = TxVector::Ofdm { rate_mbps: 54 };
    config(
        CellConfig::legacy_dcf(Standard::A, Band::Ghz5, stations(tx, n)),
        4,
    )
}

fn ht20_mcs7(n: usize) -> SimConfig {
    let tx = TxVector::Ht {
        mcs: 7,
        width: ChannelWidth::Mhz20,
        gi: GuardInterval::Long,
    };
    config(
        CellConfig::new(Standard::N, Band::Ghz5, stations(tx, n)),
        128,
    )
}

/// Run one configuration for its full duration; returns the delivered packet count.
fn run(cfg: SimConfig) -> u64 {
    let r = Simulation::new(cfg).expect("valid config").run();
    r.conservation.delivered_packets
}

/// What a run simulated, in Mbit/s of payload: the TCP flows' goodput if there are TCP
/// flows (pings left out), all delivered payload otherwise. `scripts/bench-ns3.sh` sets
/// it beside ns-3's, to show both simulate comparable traffic.
fn simulated_mbps(r: &Results) -> f64 {
    let tcp = r.flows.iter().filter(|f| f.kind == "tcp");
    let bps = if r.flows.iter().any(|f| f.kind == "tcp") {
        tcp.map(|f| f.throughput_bps).sum()
    } else {
        r.total_throughput_bps
    };
    bps / 1e6
}

fn group(c: &mut Criterion, name: &str, ns: &[usize], make: fn(usize) -> SimConfig) {
    let mut g = c.benchmark_group(name);
    g.sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    for &n in ns {
        let cfg = make(n);
        // Guard against benchmarking an idle cell (a setup mistake would look "fast"),
        // and print what the run simulates.
        let r = Simulation::new(cfg.clone()).expect("valid config").run();
        assert!(
            r.conservation.delivered_packets > 0,
            "{name} n={n}: nothing delivered"
        );
        let mbps = simulated_mbps(&r);
        println!("txop-throughput group={name} n={n} throughput_mbps={mbps:.3}");
        g.bench_with_input(BenchmarkId::from_parameter(n), &cfg, |b, cfg| {
            b.iter(|| run(black_box(cfg.clone())))
        });
    }
    g.finish();
}

/// Every station runs flent test `test` from t = 0, for [`TCP_SECS`] simulated seconds,
/// through the linux-6.16 stack.
fn per_station(test: &str, n: usize) -> SimConfig {
    per_station_for(test, n, TCP_SECS)
}

/// [`per_station`] lasting `secs` simulated seconds.
fn per_station_for(test: &str, n: usize, secs: u64) -> SimConfig {
    use txop_sim::traffic::flent::FlentTest;
    let tx = TxVector::Ht {
        mcs: 7,
        width: ChannelWidth::Mhz20,
        gi: GuardInterval::Long,
    };
    let mut cell = CellConfig::new(Standard::N, Band::Ghz5, stations(tx, n));
    cell.stack = txop_core::stack::preset("linux-6.16").expect("preset");
    let mut flows = Vec::new();
    for s in 1..=n as u16 {
        let mut t = FlentTest::new(test);
        t.delay = Nanos::ZERO;
        t.length = Nanos::from_secs(secs);
        t.station = s;
        flows.extend(t.flows(n as u16).expect("flent flows"));
    }
    SimConfig::new(cell, flows, Nanos::from_secs(secs), SEED)
}

fn rrul(n: usize) -> SimConfig {
    per_station("rrul", n)
}

/// One TCP download per station (flent tcp_1down on every station).
fn tcp_1down(n: usize) -> SimConfig {
    per_station("tcp_1down", n)
}

/// Four BSSs of `n` stations each, `bench/ns3/bss4.cc`'s topology, every station
/// running tcp_1down for [`TCP_SECS`] through the linux-6.16 stack.
fn bss4(n: usize) -> Vec<BssConfig> {
    use txop_core::phy::mobility::Position;
    use txop_core::phy::path_loss::snr_at_distance;
    use txop_core::phy::space::{Capture, Placement, SpaceConfig};
    const RADIUS_M: f64 = 5.0;
    let aps = [(0.0, 0.0), (20.0, 0.0), (0.0, 20.0), (20.0, 20.0)];
    let mut positions = Vec::new();
    for &(x, y) in &aps {
        positions.push(Position::new(x, y));
        for k in 0..n {
            let a = 2.0 * std::f64::consts::PI * k as f64 / n as f64;
            positions.push(Position::new(
                x + RADIUS_M * a.cos(),
                y + RADIUS_M * a.sin(),
            ));
        }
    }
    let snr_db = snr_at_distance(20.0, 3.5, Band::Ghz5, ChannelWidth::Mhz20, RADIUS_M);
    (0..aps.len())
        .map(|b| {
            let mut cfg = per_station("tcp_1down", n);
            for s in &mut cfg.cell.stations {
                s.error = ErrorModel::Snr { snr_db };
            }
            let mut space = SpaceConfig::new(
                Placement::Positions {
                    positions: positions.clone(),
                    exponent: 3.5,
                },
                20.0,
            );
            space.first_node = b * (n + 1);
            // ns-3 3.37 installs no frame capture model by default.
            space.capture = Capture::Off;
            cfg.cell.space = Some(space);
            cfg.seed = bss_seed(SEED, b);
            BssConfig {
                sim: cfg,
                channel: 36,
            }
        })
        .collect()
}

fn neighbourhood(c: &mut Criterion) {
    let name = "bss4_tcp_1down_ht20_mcs7_linux616";
    let mut g = c.benchmark_group(name);
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(10));
    for n in [4, 16] {
        let cfgs = bss4(n);
        let run = |cfgs: Vec<BssConfig>| {
            Neighbourhood::new(cfgs)
                .expect("valid config")
                .try_run()
                .expect("not stuck")
        };
        let rs = run(cfgs.clone());
        let mbps: f64 = rs.iter().map(simulated_mbps).sum();
        assert!(mbps > 0.0, "{name} n={n}: nothing delivered");
        println!("txop-throughput group={name} n={n} throughput_mbps={mbps:.3}");
        g.bench_with_input(BenchmarkId::from_parameter(n), &cfgs, |b, cfgs| {
            b.iter(|| run(black_box(cfgs.clone())))
        });
    }
    g.finish();
}

fn saturated(c: &mut Criterion) {
    group(c, "dcf_11a_54M_1500B", &[5, 10, 20, 50], dcf_11a);
    group(c, "ht20_mcs7_ampdu_1500B", &[5, 50], ht20_mcs7);
    group(c, "rrul_ht20_mcs7_linux616", &[1, 4, 16], rrul);
    group(c, "tcp_1down_ht20_mcs7_linux616", &[1, 4, 16], tcp_1down);
}

criterion_group!(benches, saturated, neighbourhood);

/// TCP goodput in bit/s of `r` times its simulated seconds: the bytes delivered so far.
fn tcp_bits(r: &Results, secs: f64) -> f64 {
    r.flows
        .iter()
        .filter(|f| f.kind == "tcp")
        .map(|f| f.throughput_bps)
        .sum::<f64>()
        * secs
}

/// One timed run of point `n` of `group` (the module doc's one-shot mode); the printed
/// line, or why the arguments are wrong.
fn one_shot(group: &str, n: usize, warmup_s: u64, secs: Option<u64>) -> Result<String, String> {
    use std::time::Instant;
    let line = |sim_s: f64, wall_s: f64, mbps: f64| {
        format!(
            "txop group={group} n={n} sim_s={sim_s} warmup_s={warmup_s} wall_s={wall_s:.6} \
             throughput_mbps={mbps:.3}"
        )
    };
    if warmup_s > 0 {
        let test = match group {
            "tcp_1down_ht20_mcs7_linux616" => "tcp_1down",
            "rrul_ht20_mcs7_linux616" => "rrul",
            _ => return Err(format!("--warmup-s: {group} is not a TCP group")),
        };
        let secs = secs.unwrap_or(TCP_SECS);
        let cfg = per_station_for(test, n, warmup_s + secs);
        let mut sim = Simulation::new(cfg)?;
        sim.run_until(Nanos::from_secs(warmup_s));
        let before = tcp_bits(&sim.results(), warmup_s as f64);
        let t0 = Instant::now();
        sim.run_until(Nanos::from_secs(warmup_s + secs));
        let wall_s = t0.elapsed().as_secs_f64();
        if let Some(stuck) = sim.stuck() {
            return Err(format!("{group} n={n}: {stuck}"));
        }
        let after = tcp_bits(&sim.results(), (warmup_s + secs) as f64);
        return Ok(line(
            secs as f64,
            wall_s,
            (after - before) / secs as f64 / 1e6,
        ));
    }
    if secs.is_some() {
        return Err("--seconds goes with --warmup-s".into());
    }
    if group == "bss4_tcp_1down_ht20_mcs7_linux616" {
        let t0 = Instant::now();
        let rs = Neighbourhood::new(bss4(n))?
            .try_run()
            .map_err(|stuck| stuck.to_string())?;
        let wall_s = t0.elapsed().as_secs_f64();
        let mbps: f64 = rs.iter().map(simulated_mbps).sum();
        return Ok(line(TCP_SECS as f64, wall_s, mbps));
    }
    let (make, sim_s): (fn(usize) -> SimConfig, u64) = match group {
        "dcf_11a_54M_1500B" => (dcf_11a, 1),
        "ht20_mcs7_ampdu_1500B" => (ht20_mcs7, 1),
        "rrul_ht20_mcs7_linux616" => (rrul, TCP_SECS),
        "tcp_1down_ht20_mcs7_linux616" => (tcp_1down, TCP_SECS),
        _ => return Err(format!("unknown group {group}")),
    };
    let t0 = Instant::now();
    let r = Simulation::new(make(n))?
        .try_run()
        .map_err(|stuck| stuck.to_string())?;
    let wall_s = t0.elapsed().as_secs_f64();
    Ok(line(sim_s as f64, wall_s, simulated_mbps(&r)))
}

/// `--one GROUP N [--warmup-s W] [--seconds S]`, parsed.
fn one_shot_args(args: &[String]) -> Result<String, String> {
    let usage = "usage: saturated --one GROUP N [--warmup-s W --seconds S]";
    let (group, n) = match args {
        [g, n, ..] => (g, n),
        _ => return Err(usage.into()),
    };
    let n: usize = n
        .parse()
        .ok()
        .filter(|&n| n > 0)
        .ok_or(format!("N must be a positive whole number, not {n}"))?;
    let (mut warmup_s, mut secs) = (0, None);
    let mut rest = args[2..].iter();
    while let Some(flag) = rest.next() {
        let value: u64 = rest
            .next()
            .and_then(|v| v.parse().ok())
            .filter(|&v| v > 0)
            .ok_or(format!("{flag} needs a positive whole number of seconds"))?;
        match flag.as_str() {
            "--warmup-s" => warmup_s = value,
            "--seconds" => secs = Some(value),
            _ => return Err(format!("unknown argument {flag}; {usage}")),
        }
    }
    one_shot(group, n, warmup_s, secs)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--one") {
        match one_shot_args(&args[1..]) {
            Ok(line) => println!("{line}"),
            Err(e) => {
                eprintln!("saturated --one: {e}");
                std::process::exit(2);
            }
        }
        return;
    }
    // What criterion_main! expands to.
    benches();
    Criterion::default().configure_from_args().final_summary();
}
