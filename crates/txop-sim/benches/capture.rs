//! What the radiotap capture (`txop run --pcap`, issue 17) costs: a 60-second rrul on
//! every one of four HT20 MCS 7 stations (linux-6.16), run without and with the
//! capture (default bounds: 256-byte snap length, and a size bound raised so that
//! nothing is left out), alternately, three times each. Prints the best wall time of
//! each, the slowdown, and the cost per captured frame.
//!
//! `cargo bench -p txop-sim --bench capture` (scripts/bench-pcap.sh).

use std::time::Instant;
use txop_capture::CaptureConfig;
use txop_core::cell::{CellConfig, StationConfig};
use txop_core::phy::channel::ErrorModel;
use txop_core::phy::{Band, ChannelWidth, GuardInterval, Standard, TxVector};
use txop_core::Nanos;
use txop_sim::traffic::flent::FlentTest;
use txop_sim::{SimConfig, Simulation};

const SECS: u64 = 60;
const STATIONS: u16 = 4;
const RUNS: usize = 3;

fn rrul() -> SimConfig {
    let tx = TxVector::Ht {
        mcs: 7,
        width: ChannelWidth::Mhz20,
        gi: GuardInterval::Long,
    };
    let sta = StationConfig::new(tx, ErrorModel::None);
    let mut cell = CellConfig::new(Standard::N, Band::Ghz5, vec![sta; STATIONS as usize]);
    cell.stack = txop_core::stack::preset("linux-6.16").expect("preset");
    let mut flows = Vec::new();
    for s in 1..=STATIONS {
        let mut t = FlentTest::new("rrul");
        t.delay = Nanos::ZERO;
        t.length = Nanos::from_secs(SECS);
        t.station = s;
        flows.extend(t.flows(STATIONS).expect("flent flows"));
    }
    SimConfig::new(cell, flows, Nanos::from_secs(SECS), 1)
}

/// One run: its wall time (s), and with capture the frames and bytes written.
fn run(capture: bool) -> (f64, u64, u64) {
    let t0 = Instant::now();
    let mut sim = Simulation::new(rrul()).expect("valid");
    if capture {
        let mut c = CaptureConfig::new(Band::Ghz5);
        c.max_bytes = 16 << 30;
        sim.capture(c).expect("capture");
    }
    sim.run_until(Nanos::from_secs(SECS));
    let (frames, bytes) = match sim.finish_capture() {
        Some(r) => {
            let (file, stats) = r.expect("capture written");
            assert_eq!(stats.over_size, 0);
            (stats.packets, file.len() as u64)
        }
        None => (0, 0),
    };
    std::hint::black_box(sim.results());
    (t0.elapsed().as_secs_f64(), frames, bytes)
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` would pass nothing.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let (mut off, mut on) = (f64::MAX, f64::MAX);
    let (mut frames, mut bytes) = (0, 0);
    for _ in 0..RUNS {
        off = off.min(run(false).0);
        let (t, f, b) = run(true);
        on = on.min(t);
        (frames, bytes) = (f, b);
    }
    println!("capture: rrul on {STATIONS} HT20 MCS 7 stations, {SECS} s simulated, best of {RUNS}");
    println!("  without capture   {off:8.3} s");
    println!(
        "  with capture      {on:8.3} s   ({frames} frames, {:.1} MB)",
        bytes as f64 / 1e6
    );
    println!("  slowdown          {:8.1} %", (on / off - 1.0) * 100.0);
    println!(
        "  cost per frame    {:8.0} ns",
        (on - off) * 1e9 / frames.max(1) as f64
    );
}
