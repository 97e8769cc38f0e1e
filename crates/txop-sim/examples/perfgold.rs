//! Local-only helper (not committed): run a bench configuration for S simulated seconds
//! and print its Results as JSON. Usage: perfgold GROUP N SECS [REPEAT]
use txop_core::cell::{CellConfig, StationConfig};
use txop_core::phy::channel::ErrorModel;
use txop_core::phy::{Band, ChannelWidth, GuardInterval, Standard, TxVector};
use txop_core::{Nanos, NodeId};
use txop_sim::traffic::saturated::Saturated;
use txop_sim::traffic::Flow;
use txop_sim::{SimConfig, Simulation};

fn stations(tx: TxVector, n: usize) -> Vec<StationConfig> {
    vec![StationConfig::new(tx, ErrorModel::None); n]
}
fn ht() -> TxVector {
    TxVector::Ht {
        mcs: 7,
        width: ChannelWidth::Mhz20,
        gi: GuardInterval::Long,
    }
}
fn sat(cell: CellConfig, depth: u32, secs: u64) -> SimConfig {
    let n = cell.stations.len() as u16;
    let flows = (1..=n)
        .map(|i| {
            Flow::Saturated(Saturated {
                src: NodeId(i),
                dst: NodeId::AP,
                len_bytes: 1500,
                tid: 0,
                depth,
            })
        })
        .collect();
    SimConfig::new(cell, flows, Nanos::from_secs(secs), 1)
}
fn per_station(test: &str, n: usize, secs: u64) -> SimConfig {
    use txop_sim::traffic::flent::FlentTest;
    let mut cell = CellConfig::new(Standard::N, Band::Ghz5, stations(ht(), n));
    cell.stack = txop_core::stack::preset("linux-6.16").expect("preset");
    let mut flows = Vec::new();
    for s in 1..=n as u16 {
        let mut t = FlentTest::new(test);
        t.delay = Nanos::ZERO;
        t.length = Nanos::from_secs(secs);
        t.station = s;
        flows.extend(t.flows(n as u16).expect("flent flows"));
    }
    SimConfig::new(cell, flows, Nanos::from_secs(secs), 1)
}
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let n: usize = a[2].parse().unwrap();
    let secs: u64 = a[3].parse().unwrap();
    let reps: usize = a.get(4).map(|s| s.parse().unwrap()).unwrap_or(1);
    let cfg = match a[1].as_str() {
        "dcf" => sat(
            CellConfig::legacy_dcf(
                Standard::A,
                Band::Ghz5,
                stations(TxVector::Ofdm { rate_mbps: 54 }, n),
            ),
            4,
            secs,
        ),
        "ht" => sat(
            CellConfig::new(Standard::N, Band::Ghz5, stations(ht(), n)),
            128,
            secs,
        ),
        "rrul" => per_station("rrul", n, secs),
        "tcp" => per_station("tcp_1down", n, secs),
        g => panic!("group {g}"),
    };
    let t0 = std::time::Instant::now();
    let mut last = None;
    for _ in 0..reps {
        last = Some(Simulation::new(cfg.clone()).unwrap().run());
    }
    eprintln!(
        "{:.6} wall-s per run",
        t0.elapsed().as_secs_f64() / reps as f64
    );
    println!("{}", serde_json::to_string_pretty(&last.unwrap()).unwrap());
}
