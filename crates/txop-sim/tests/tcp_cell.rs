//! TCP through the cell: the flent-style downloads of the seeds.

use txop_core::cell::{CellConfig, StationConfig};
use txop_core::phy::channel::ErrorModel;
use txop_core::phy::{Band, ChannelWidth, GuardInterval, Standard, TxVector};
use txop_core::stack::preset;
use txop_core::Nanos;
use txop_sim::traffic::ping::Ping;
use txop_sim::traffic::tcp::TcpFlow;
use txop_sim::traffic::{Flow, Host};
use txop_sim::{Results, SimConfig, Simulation};

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

/// flent tcp_ndown: `streams` TCP downloads server → station from 5 s to 35 s, and
/// the station pinging the server every 200 ms throughout.
fn tcp_ndown(stack: &str, mcs: u8, streams: u32, secs: u64) -> Results {
    let mut cell = CellConfig::new(Standard::N, Band::Ghz5, vec![ht20(mcs)]);
    cell.stack = preset(stack).unwrap();
    let mut flows = Vec::new();
    for i in 0..streams {
        let mut t = TcpFlow::bulk(Host::Server, Host::Station(1), 0x1000 + i * 7919);
        t.start = Nanos::from_secs(5);
        t.stop = Some(Nanos::from_secs(5 + secs));
        flows.push(Flow::Tcp(t));
    }
    flows.push(Flow::Ping(Ping::new(Host::Station(1), Host::Server, 0xabc)));
    Simulation::new(SimConfig::new(cell, flows, Nanos::from_secs(secs + 10), 1))
        .unwrap()
        .run()
}

/// Seed 002 / issue 4: over a 6 Mbit/s station, 4 TCP downloads drive the ping to
/// hundreds of ms or more with the bloated stack and keep it within tens of ms from
/// linux-4.9 on, at the same throughput.
#[test]
fn tcp_ndown_latency_per_era() {
    let mut res = Vec::new();
    for st in ["linux-4.8-bloated", "linux-4.9", "linux-6.16"] {
        let r = tcp_ndown(st, 0, 4, 30);
        let tput: f64 = r.flows[..4].iter().map(|f| f.throughput_bps).sum::<f64>();
        // Throughput over the loaded 30 s only.
        let tput = tput * r.duration_s / 30.0;
        let ping = &r.flows[4];
        // Ping samples while the downloads run (6 s to 35 s).
        let mut loaded: Vec<f64> = ping
            .rtt_samples
            .iter()
            .filter(|(t, _)| (6.0..35.0).contains(t))
            .map(|&(_, v)| v)
            .collect();
        loaded.sort_by(f64::total_cmp);
        let p50 = loaded[loaded.len() / 2];
        let retrans: u64 = r.flows[..4].iter().filter_map(|f| f.retransmits).sum();
        println!(
            "{st:18} 4×TCP {:.2} Mbit/s, ping under load p50 {p50:.1} ms, retransmits {retrans}",
            tput / 1e6
        );
        res.push((tput, p50));
    }
    assert!(res[0].1 > 200.0, "bloated ping {:.1} ms", res[0].1);
    for (tput, p50) in &res[1..] {
        assert!(*p50 < 60.0, "ping {p50:.1} ms");
        assert!(*tput > 0.9 * res[0].0, "throughput {tput} vs {}", res[0].0);
    }
}
