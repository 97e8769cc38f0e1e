//! Memory does not grow with simulated time: after a long run every flow's time series
//! and sample lists hold at most their caps (`txop_results::flowstats`), counted in
//! entries, not measured in bytes or seconds.

use txop_core::cell::{CellConfig, StationConfig};
use txop_core::phy::channel::ErrorModel;
use txop_core::phy::{Band, ChannelWidth, GuardInterval, Standard, TxVector};
use txop_core::stack::preset;
use txop_core::{Nanos, NodeId};
use txop_results::flowstats::{SAMPLES_MAX, SERIES_MAX_STEPS};
use txop_sim::traffic::cbr::Cbr;
use txop_sim::traffic::ping::Ping;
use txop_sim::traffic::web::WebPage;
use txop_sim::traffic::{Flow, Host};
use txop_sim::{SimConfig, Simulation};

/// 1e5 simulated seconds of one station with a ping every second, a 100-byte UDP
/// packet every 100 ms and a one-object web page loaded every 40 s (its TCP
/// connections sample cwnd on every ACK): each flow outgrows its caps (500,000 steps
/// of 0.2 s, 100,000 replies, ~2,500 page loads).
#[test]
fn a_long_run_keeps_every_series_and_sample_list_under_its_cap() {
    let secs = 100_000u64;
    let sta = StationConfig::new(
        TxVector::Ht {
            mcs: 7,
            width: ChannelWidth::Mhz20,
            gi: GuardInterval::Long,
        },
        ErrorModel::None,
    );
    let mut cell = CellConfig::new(Standard::N, Band::Ghz5, vec![sta]);
    cell.stack = preset("linux-6.16").unwrap();
    let mut ping = Ping::new(Host::Server, Host::Station(1), 1);
    ping.interval = Nanos::from_secs(1);
    let cbr = Cbr {
        src: NodeId::AP,
        dst: NodeId(1),
        len_bytes: 100,
        tid: 0,
        dscp: 0,
        rate_bps: 8_000,
        start: Nanos::ZERO,
        flow_hash: 2,
        probe: false,
    };
    let mut page = WebPage::seed_page(Host::Station(1), 1, 3);
    page.objects_bytes = vec![3000];
    page.repeat_after = Some(Nanos::from_secs(40));
    let flows = vec![Flow::Ping(ping), Flow::Cbr(cbr), Flow::Web(page)];
    let mut sim = Simulation::new(SimConfig::new(cell, flows, Nanos::from_secs(secs), 1)).unwrap();
    sim.run_until(Nanos::from_secs(secs));
    let cap = 6 * (SERIES_MAX_STEPS + 1) + 2 * SAMPLES_MAX;
    for (i, f) in sim.flow_stats().iter().enumerate() {
        assert!(
            f.retained_entries() <= cap,
            "flow {i} holds {} entries after {secs} s (cap {cap})",
            f.retained_entries()
        );
    }
    let r = sim.results();
    assert_eq!(r.series_step_s, 0.2 * 256.0, "1e5 s in at most 2048 steps");
    let [ping, cbr, web] = &r.flows[..] else {
        panic!("three flows")
    };
    for f in [ping, cbr, web] {
        assert_eq!(f.throughput_series_bps.len(), 1954, "ceil(1e5 / 51.2)");
        assert!(f.cwnd_series_bytes.len() <= SERIES_MAX_STEPS);
        assert!(f.srtt_series_ms.len() <= SERIES_MAX_STEPS);
        assert!(f.delivery_rate_series_bps.len() <= SERIES_MAX_STEPS);
        assert!(f.rtt_samples.len() <= SAMPLES_MAX && f.page_load_times_s.len() <= SAMPLES_MAX);
    }
    assert!(ping.delivered_packets >= secs - 1, "every ping answered");
    assert_eq!(ping.sample_stride, 64);
    assert_eq!(
        ping.rtt_samples.len() as u64,
        ping.delivered_packets.div_ceil(64)
    );
    assert!(web.page_load_times_s.len() > SAMPLES_MAX / 2 && web.sample_stride == 2);
    assert!(!web.cwnd_series_bytes.is_empty());
    assert_eq!(web.srtt_series_ms.len(), web.cwnd_series_bytes.len());
}
