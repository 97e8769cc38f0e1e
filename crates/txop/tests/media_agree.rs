//! The two media agree (issue 26): a cell whose nodes all hear one another at one power
//! gives the same results whether it runs as one collision domain (no `[space]`) or
//! with every node's own view of the medium (an equal-power `[space]`). For each
//! workload — saturated UDP, TCP downloads, TCP uploads and rrul, with and without
//! aggregation — five seeds run on each medium, and each figure's mean on one medium
//! must lie within the run-to-run spread (the range over the five seeds) of the
//! other's. A rule that one medium follows and the other does not shows up here: the
//! backoff of a frame queued in the SIFS before the node's own response made one
//! collision domain count 674 collisions where space counted 462 (issue 26).

mod support;

use support::guard::run_guarded;
use support::{owned, resolved};
use txop_results::{LatencySummary, Results};

/// Three HT20 MCS7 stations, all in range of one another and of the AP.
const CELL: &str = r#"
name = "media"
stack = "linux-6.16"

[phy]
standard = "n"
band = "5"
width_mhz = 20

[stations]
count = 3
mcs = 7
"#;

/// An equal-power space over the AP and its three stations: 60 dB between every pair
/// (−40 dBm at 20 dBm, 54 dB over the noise: no MCS loses a frame to noise).
const EQUAL_SPACE: &str = "[[0,60,60,60],[60,0,60,60],[60,60,0,60],[60,60,60,0]]";

/// One station in power save (E3's, seed 002): a ping every 200 ms from the server,
/// and a TCP download from 5 s to 15 s; beacons every 100 TU, DTIM 2.
const POWER_SAVE: &str = r#"
name = "media-power-save"
duration_s = 20
stack = "linux-4.9"

[phy]
standard = "ac"
band = "5"
width_mhz = 20

[mac]
beacon_interval_tu = 100
dtim_period = 2

[stations]
count = 1
mcs = 8
power_save = { dynamic_timeout_ms = 100, ps_poll = false, wake_every_beacons = 1 }

[[flows]]
kind = "ping"
from = "server"
to = "sta1"
interval_ms = 200

[[flows]]
kind = "tcp"
from = "server"
to = "sta1"
start_s = 5
stop_s = 15
"#;

/// The workloads: `--set` pairs on top of [`CELL`].
const WORKLOADS: [(&str, &[(&str, &str)]); 4] = [
    (
        "saturated UDP, both ways",
        &[
            ("traffic.kind", "saturated"),
            ("traffic.direction", "both"),
            ("traffic.probe_interval_ms", "50"),
            ("duration_s", "6"),
        ],
    ),
    (
        "TCP downloads",
        &[("traffic.test", "rtt_fair_down"), ("traffic.length_s", "8")],
    ),
    (
        "TCP uploads",
        &[("traffic.test", "rtt_fair_up"), ("traffic.length_s", "8")],
    ),
    (
        "rrul",
        &[("traffic.test", "rrul"), ("traffic.length_s", "8")],
    ),
];

const SEEDS: [u64; 5] = [1, 2, 3, 4, 5];

/// The figures compared, from one run.
#[derive(Clone, Copy, Debug)]
struct Figures {
    /// Collisions per PPDU, every station both ways.
    collision_probability: f64,
    throughput_mbps: f64,
    /// Mean over the latency-measuring flows (pings' RTT if any, else every flow's
    /// one-way latency) of their median and 90th percentile, ms.
    latency_p50_ms: f64,
    latency_p90_ms: f64,
}

const FIGURE_NAMES: [&str; 4] = [
    "collision probability",
    "throughput Mbit/s",
    "latency p50 ms",
    "latency p90 ms",
];

impl Figures {
    fn of(r: &Results) -> Figures {
        let (collisions, ppdus) = r
            .stations
            .iter()
            .fold((0, 0), |(c, p), s| (c + s.collisions, p + s.ppdus));
        let pings: Vec<&LatencySummary> =
            r.flows.iter().filter_map(|f| f.rtt_ms.as_ref()).collect();
        let latencies = if pings.is_empty() {
            r.flows
                .iter()
                .filter_map(|f| f.latency_ms.as_ref())
                .collect()
        } else {
            pings
        };
        assert!(!latencies.is_empty(), "no flow measured latency");
        let mean = |x: &dyn Fn(&LatencySummary) -> f64| {
            latencies.iter().map(|p| x(p)).sum::<f64>() / latencies.len() as f64
        };
        Figures {
            collision_probability: collisions as f64 / ppdus.max(1) as f64,
            throughput_mbps: r.total_throughput_bps / 1e6,
            latency_p50_ms: mean(&|p| p.p50),
            latency_p90_ms: mean(&|p| p.p90),
        }
    }

    fn values(&self) -> [f64; 4] {
        [
            self.collision_probability,
            self.throughput_mbps,
            self.latency_p50_ms,
            self.latency_p90_ms,
        ]
    }
}

fn run(
    workload: &str,
    sets: &[(&str, &str)],
    aggregation: bool,
    space: bool,
    seed: u64,
) -> Figures {
    let mut sets = owned(sets);
    sets.push(("mac.aggregation".into(), aggregation.to_string()));
    if space {
        sets.push(("space.path_loss_db".into(), EQUAL_SPACE.into()));
    }
    let case = format!("{workload}, aggregation {aggregation}, space {space}, seed {seed}");
    Figures::of(&results(&case, CELL, &sets, seed))
}

/// `text` with `sets` run with `seed` under the guard (conservation, airtime, queue
/// limits), naming `case` if anything fails.
fn results(case: &str, text: &str, sets: &[(String, String)], seed: u64) -> Results {
    run_guarded(case, resolved(case, text, sets, seed))
}

/// Mean and range (max − min) of each figure over the seeds.
fn mean_and_range<const N: usize>(runs: &[[f64; N]]) -> [(f64, f64); N] {
    std::array::from_fn(|k| {
        let v: Vec<f64> = runs.iter().map(|f| f[k]).collect();
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        let max = v.iter().cloned().fold(f64::MIN, f64::max);
        let min = v.iter().cloned().fold(f64::MAX, f64::min);
        (mean, max - min)
    })
}

/// Each figure's mean on one medium against the other's, within the larger of their
/// seed ranges: the failures, one line each.
fn compare<const N: usize>(
    what: &str,
    names: [&str; N],
    shared: &[[f64; N]],
    spatial: &[[f64; N]],
) -> Vec<String> {
    let (a, b) = (mean_and_range(shared), mean_and_range(spatial));
    let mut failures = Vec::new();
    for k in 0..N {
        let ((ma, ra), (mb, rb)) = (a[k], b[k]);
        // The larger of the two media's seed spreads; a figure the seeds barely move
        // (a saturated link's throughput) may still differ by 1 % of itself.
        let allowed = ra.max(rb).max(0.01 * ma.abs().max(mb.abs()));
        let line = format!(
            "{what}: {}: one domain {ma:.4} (range {ra:.4}), space {mb:.4} (range {rb:.4})",
            names[k]
        );
        println!("{line}");
        if (ma - mb).abs() > allowed {
            failures.push(line);
        }
    }
    failures
}

fn agree(workload: &str, sets: &[(&str, &str)], aggregation: bool) -> Vec<String> {
    let on = |space: bool| -> Vec<[f64; 4]> {
        SEEDS
            .iter()
            .map(|&s| run(workload, sets, aggregation, space, s).values())
            .collect()
    };
    let what = format!("{workload}, aggregation {aggregation}");
    compare(&what, FIGURE_NAMES, &on(false), &on(true))
}

fn check(index: usize, aggregation: bool) {
    let (workload, sets) = WORKLOADS[index];
    let failures = agree(workload, sets, aggregation);
    assert!(
        failures.is_empty(),
        "the media disagree:\n{}",
        failures.join("\n")
    );
}

#[test]
fn saturated_udp_agrees_on_both_media() {
    check(0, true);
    check(0, false);
}

#[test]
fn tcp_downloads_agree_on_both_media() {
    check(1, true);
    check(1, false);
}

#[test]
fn tcp_uploads_agree_on_both_media() {
    check(2, true);
    check(2, false);
}

#[test]
fn rrul_agrees_on_both_media() {
    check(3, true);
    check(3, false);
}

/// Power save (beacons, dozing, the AP's buffering) on both media: the ping's RTT
/// (quantised by the beacon interval while the station dozes), the beacons it heard,
/// how often and how long it dozed, and the download's throughput. (Until issue 26
/// space refused beacons and power save.)
#[test]
fn power_save_agrees_on_both_media() {
    let names = [
        "ping p50 ms",
        "ping max ms",
        "beacons heard",
        "dozes",
        "doze s",
        "throughput Mbit/s",
    ];
    assert_one_station_cell_agrees("power save", names, POWER_SAVE, |case, r| {
        let ps = r.stations[0]
            .power_save
            .as_ref()
            .unwrap_or_else(|| panic!("{case}: no power-save statistics"));
        let rtt = r.flows[0].rtt_ms.as_ref().expect("the ping's RTT");
        [
            rtt.p50,
            rtt.max,
            ps.beacons_heard as f64,
            ps.dozes as f64,
            ps.doze_ns as f64 / 1e9,
            r.total_throughput_bps / 1e6,
        ]
    });
}

/// Background scanning on both media (`e1-scan-bulk`: a TCP download to a station that
/// scans both bands every 3 s with the legacy rule, which tells the AP nothing per
/// excursion): the download's throughput and the scan's time off the channel,
/// excursions and channels. The legacy rule lets the AP's aggregates meet a radio that
/// leaves in their middle, so this holds only if both media keep what had arrived and
/// let a station's own exchange end before it tunes away (reference §11.4). (Until
/// issue 26 space refused scanning; one domain delivered the whole aggregate to a radio
/// that had left, 31.7–34.3 Mbit/s over these seeds against 16.8–28.4 in space.)
#[test]
fn scanning_agrees_on_both_media() {
    let names = [
        "throughput Mbit/s",
        "off channel s",
        "excursions",
        "channels scanned",
    ];
    let text = txop::builtin::get("e1-scan-bulk").expect("built-in");
    assert_one_station_cell_agrees("scanning", names, text, |case, r| {
        let scan = r.stations[0]
            .scan
            .unwrap_or_else(|| panic!("{case}: no scan statistics"));
        [
            r.total_throughput_bps / 1e6,
            scan.off_channel_ns as f64 / 1e9,
            scan.excursions as f64,
            scan.channels_scanned as f64,
        ]
    });
}

/// `text`, a cell of one station, run with every seed in one collision domain and in
/// an equal-power space, each run reduced to its figures by `figures` (given the case's
/// name and the results); fails listing every figure whose means part by more than the
/// seeds' spread.
fn assert_one_station_cell_agrees<const N: usize>(
    what: &str,
    names: [&str; N],
    text: &str,
    figures: impl Fn(&str, &Results) -> [f64; N],
) {
    let on = |space: bool| -> Vec<[f64; N]> {
        let sets = if space {
            owned(&[("space.path_loss_db", "[[0,60],[60,0]]")])
        } else {
            Vec::new()
        };
        SEEDS
            .iter()
            .map(|&seed| {
                let case = format!("{what}, space {space}, seed {seed}");
                figures(&case, &results(&case, text, &sets, seed))
            })
            .collect()
    };
    let failures = compare(what, names, &on(false), &on(true));
    assert!(
        failures.is_empty(),
        "the media disagree:\n{}",
        failures.join("\n")
    );
}
