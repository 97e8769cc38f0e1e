//! What results.json promises beyond its shape (docs/results.md): bounded series in
//! long runs, fractions that are fractions, counts that add up, shares that sum to 1,
//! exact extremes. Each case runs the CLI and checks its output against the schema and
//! against an invariant.

mod support;
use std::io::Read;
use support::*;

/// `txop run ARGS --json`, checked against the schema.
fn run_json(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.push("--json");
    let o = txop(&all);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_valid(&v, &format!("{args:?}"));
    v
}

/// Host buses so slow that their transfers outlast the run (a 1 Hz clock: 40 s per
/// 128-byte block), or so busy that the CPU works to the last instant (400 kHz, 8-bit,
/// polled PIO, both directions): each busy fraction is at most 1 (the schema says so).
/// Before, a transfer was charged whole when it started: 4.0 and 1.0003.
#[test]
fn host_bus_fractions_stay_within_the_run() {
    for (bus, direction) in [
        (
            r#"stations.bus={preset="sdio-vendor",clock_hz=1}"#,
            "downlink",
        ),
        (
            r#"stations.bus={preset="sdio-generic",clock_hz=400000,width_bits=8}"#,
            "both",
        ),
    ] {
        let dir = format!("traffic.direction={direction}");
        let v = run_json(&["default", "--set", bus, "--set", &dir]);
        let buses = v["host_buses"].as_array().unwrap();
        assert_eq!(buses.len(), 4);
        for b in buses {
            for k in [
                "bus_busy_fraction",
                "cpu_busy_fraction",
                "cpu_driver_fraction",
            ] {
                let x = b[k].as_f64().unwrap();
                assert!((0.0..=1.0).contains(&x), "{bus}: {k} {x}");
            }
        }
    }
}

/// A station whose host bus drops most of what its chip receives (a 100 kHz bus
/// under 30 Mbit/s of UDP): its row counts what reached its host, as its flows do:
/// downlink = its flows' throughput, drops = its flows' drops (nothing is lost on the
/// wire here). Before, the row counted what reached the chip (5 Mbit/s against the
/// flows' 0.36) and none of the bus's drops.
#[test]
fn a_station_row_counts_what_crossed_its_host_bus() {
    let bus = r#"stations.list[0].bus={preset="sdio-vendor",clock_hz=100000}"#;
    let v = run_json(&["default", "--set", bus]);
    let stations = v["stations"].as_array().unwrap();
    let flows = v["flows"].as_array().unwrap();
    let bus_drops = &v["host_buses"][0];
    let device_rx = bus_drops["dropped_device_rx"].as_u64().unwrap();
    assert!(device_rx > 1000, "the bus drops most: {device_rx}");
    for (i, sta) in stations.iter().enumerate() {
        let name = format!("sta{}", i + 1);
        let mine: Vec<_> = flows.iter().filter(|f| f["dst"] == name.as_str()).collect();
        let tput: f64 = mine
            .iter()
            .map(|f| f["throughput_bps"].as_f64().unwrap())
            .sum();
        let down = sta["downlink_bps"].as_f64().unwrap();
        assert!(
            (down - tput).abs() <= 1e-9 * tput,
            "{name}: {down} vs {tput}"
        );
        let dropped: u64 = mine
            .iter()
            .map(|f| f["dropped_packets"].as_u64().unwrap())
            .sum();
        let row = ["dropped_queue_full", "dropped_retry_limit", "dropped_aqm"]
            .iter()
            .map(|k| sta[k].as_u64().unwrap())
            .sum::<u64>();
        assert_eq!(row, dropped, "{name}");
    }
    let total: f64 = stations
        .iter()
        .map(|s| s["throughput_bps"].as_f64().unwrap())
        .sum();
    let reported = v["total_throughput_bps"].as_f64().unwrap();
    assert!((total - reported).abs() <= 1e-9 * reported);
}

/// flent's rtt_fair_up with 40 stations on the bloated stack, where many TCP
/// connections lose their SYNs or never open: every flow's delivered + dropped is at
/// most what it offered, and every TCP flow has a retransmission count. Before, such
/// a flow counted its SYN drops against 0 offered, with retransmits null.
#[test]
fn flow_counts_never_exceed_what_was_offered() {
    let v = run_json(&[
        "e2-100-stations",
        "--set",
        "stations.count=40",
        "--set",
        "traffic.length_s=10",
    ]);
    for f in v["flows"].as_array().unwrap() {
        let n = |k: &str| f[k].as_u64().unwrap();
        assert!(
            n("delivered_packets") + n("dropped_packets") <= n("offered_packets"),
            "{f}"
        );
        assert_eq!(f["kind"] == "tcp", f["retransmits"].is_u64(), "{f}");
    }
}

/// The stations' airtime shares and the beacons' share sum to 1, with beacons (a
/// scanning station; power save; `mac.beacons`) and without. Before, e1-scan-ping's
/// station shares summed to 0.313 and nothing said where the rest went.
#[test]
fn airtime_shares_sum_to_one() {
    for (args, beacons) in [
        (&["e1-scan-ping", "--set", "duration_s=20"][..], true),
        (&["e3-power-save"][..], true),
        (
            &[
                "default",
                "--set",
                "mac.beacons=true",
                "--set",
                "duration_s=2",
            ][..],
            true,
        ),
        (&["default", "--set", "duration_s=2"][..], false),
    ] {
        let v = run_json(args);
        let stations: f64 = v["stations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["airtime_share"].as_f64().unwrap())
            .sum();
        let beacon = v["beacon_airtime_share"].as_f64().unwrap();
        assert!(
            (stations + beacon - 1.0).abs() < 1e-9,
            "{args:?}: {stations} + {beacon}"
        );
        assert_eq!(beacon > 0.0, beacons, "{args:?}");
        assert_eq!(v["beacon_airtime_ns"].as_u64().unwrap() > 0, beacons);
    }
}

/// A flent test longer than 409.6 s: its series come per 0.4 s, and results.json (the
/// schema caps every list), the flent data file (its grid and STEP_SIZE) and the
/// throughput plot's axis all say so; flent plots the file.
#[test]
fn a_long_run_reports_its_coarser_step_everywhere() {
    let dir = scratch("long-run");
    let out = dir.join("out");
    let o = txop(&[
        "run",
        "tcp-ndown-6mbit",
        "--set",
        "traffic.test=tcp_1down",
        "--set",
        "traffic.length_s=420",
        "-o",
        out.to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    assert_valid(&v, "results.json of a 430 s run");
    assert_eq!(v["duration_s"], 430.0);
    assert_eq!(v["series_step_s"], 0.4);
    let tcp = v["flows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "tcp")
        .unwrap();
    assert_eq!(tcp["throughput_series_bps"].as_array().unwrap().len(), 1075);
    // The series carries every byte: its mean is the flow's throughput.
    let series: Vec<f64> = tcp["throughput_series_bps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    let mean = series.iter().sum::<f64>() * 0.4 / 430.0;
    let tput = tcp["throughput_bps"].as_f64().unwrap();
    assert!((mean - tput).abs() < 1e-6 * tput, "{mean} vs {tput}");

    let gz = std::fs::read(out.join("tcp_1down-tcp-ndown-6mbit.flent.gz")).unwrap();
    let mut text = String::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_string(&mut text)
        .unwrap();
    let flent: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(flent["metadata"]["STEP_SIZE"], 0.4);
    let x = flent["x_values"].as_array().unwrap();
    assert_eq!(x.len(), 1076);
    assert_eq!(x[1], 0.4);
    assert_eq!(
        flent["results"]["TCP download"].as_array().unwrap().len(),
        1076
    );
    let svg = std::fs::read_to_string(out.join("throughput.svg")).unwrap();
    assert!(
        svg.contains("per 0.4 s"),
        "the throughput axis names its step"
    );
    flent_renders(
        &out.join("tcp_1down-tcp-ndown-6mbit.flent.gz"),
        "totals",
        &dir.join("totals.png"),
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Jain's index is over the stations that had traffic: in `apartment-block` with rrul
/// (from station 1 only) one station of four per BSS is loaded, so each BSS's index is 1
/// (it read 0.25, the value of one station taking all, counting three idle ones); in
/// `anomaly` both stations are loaded and the index is Jain's formula over both
/// (unequal) shares.
#[test]
fn jain_counts_only_the_stations_with_traffic() {
    let jain = |xs: &[f64]| {
        let sum: f64 = xs.iter().sum();
        let sq: f64 = xs.iter().map(|x| x * x).sum();
        sum * sum / (xs.len() as f64 * sq)
    };
    let v = run_json(&[
        "apartment-block",
        "--set",
        "traffic.test=rrul",
        "--set",
        "traffic.length_s=2",
    ]);
    for b in v["bss"].as_array().unwrap() {
        let busy: Vec<&serde_json::Value> = b["stations"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["ppdus"].as_u64() > Some(0))
            .collect();
        assert_eq!(busy.len(), 1, "{}", b["name"]);
        assert_eq!(b["airtime_jain_index"], 1.0, "{}", b["name"]);
    }
    let v = run_json(&["anomaly", "--set", "duration_s=2"]);
    let shares: Vec<f64> = v["stations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["airtime_share"].as_f64().unwrap())
        .collect();
    assert_eq!(shares.len(), 2);
    assert!(shares.iter().all(|&s| s > 0.0));
    let got = v["airtime_jain_index"].as_f64().unwrap();
    assert!(
        (got - jain(&shares)).abs() < 1e-12,
        "{got} vs {}",
        jain(&shares)
    );
    assert!(got < 0.99, "the anomaly's shares are unequal: {shares:?}");
}

/// Every flow says what it is and where it runs: `default`'s sparse probes
/// (`traffic.probe_interval_ms`, one per station after the four loads) are kind `probe`,
/// not `cbr` like the loads beside them, at the rate the scenario gives them (100 bytes
/// every 100 ms: 8 kbit/s); rrul's pings are `ping` and `udp_ping`; every name is the
/// label (or the kind in words) followed by `(src → dst)`. The summary shows the
/// measurement flows' delay (an echo flow's RTT) and `-` for their throughput.
#[test]
fn flows_are_named_by_kind_and_ends() {
    let v = run_json(&["default", "--set", "duration_s=2"]);
    let flows = v["flows"].as_array().unwrap();
    let kinds: Vec<&str> = flows.iter().map(|f| f["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["cbr", "cbr", "cbr", "cbr", "probe", "probe", "probe", "probe"]
    );
    for (i, f) in flows.iter().enumerate() {
        let sta = format!("sta{}", i % 4 + 1);
        let what = if i < 4 { "constant-rate UDP" } else { "probe" };
        assert_eq!(f["name"], format!("{what} (AP → {sta})"), "flow {i}");
        if i >= 4 {
            let bps = f["throughput_bps"].as_f64().unwrap();
            assert!((bps - 8_000.0).abs() < 800.0, "probe {i}: {bps} bit/s");
        }
    }
    let args = [
        "tcp-ndown-6mbit",
        "--set",
        "traffic.test=rrul",
        "--set",
        "traffic.length_s=2",
    ];
    let v = run_json(&args);
    let o = txop(&[&["run"][..], &args[..]].concat());
    let summary = String::from_utf8(o.stdout).unwrap();
    for f in v["flows"].as_array().unwrap() {
        let (kind, label) = (f["kind"].as_str().unwrap(), f["label"].as_str().unwrap());
        let ends = format!(
            "({} → {})",
            f["src"].as_str().unwrap(),
            f["dst"].as_str().unwrap()
        );
        assert_eq!(f["name"], format!("{label} {ends}"));
        let echo = label.starts_with("Ping");
        assert_eq!(
            echo,
            kind == "ping" || kind == "udp_ping",
            "{label}: {kind}"
        );
        if echo {
            // The row of this echo flow: `-` for Mbit/s, its RTT p50 as the latency.
            let id = f["flow"].as_u64().unwrap();
            let row = summary
                .lines()
                .find(|l| {
                    l.ends_with(label) && l.split_whitespace().next() == Some(&id.to_string())
                })
                .unwrap_or_else(|| panic!("no row for {label}:\n{summary}"));
            let cols: Vec<&str> = row.split_whitespace().collect();
            let p50 = f["rtt_ms"]["p50"].as_f64().unwrap();
            assert_eq!(cols[5], "-", "{row}");
            assert_eq!(cols[6], format!("{p50:.1}ms"), "{row}");
        }
    }
}

/// A TCP flow reports its sender's RTT samples (issue 27: TCP flows had no RTT): each
/// is from the timestamp the ACK echoes, that of the earliest segment it acknowledges,
/// so it spans that segment's whole one-way trip, the receiver's delayed ACK and the
/// ACK's way back. Its median is then at least the data's one-way median, and none is
/// below the two wired crossings (1 ms each way). A ping, a UDP flow, has none.
#[test]
fn tcp_flows_report_the_senders_rtt() {
    let v = run_json(&["tcp-ndown-6mbit", "--set", "traffic.length_s=10"]);
    let flows = v["flows"].as_array().expect("flows");
    let mut tcp = 0;
    for f in flows {
        let rtt = &f["tcp_rtt_ms"];
        if f["kind"] != "tcp" {
            assert!(rtt.is_null(), "{}: {rtt}", f["name"]);
            continue;
        }
        tcp += 1;
        let (p50, min) = (rtt["p50"].as_f64().unwrap(), rtt["min"].as_f64().unwrap());
        let one_way = f["latency_ms"]["p50"].as_f64().unwrap();
        assert!(
            p50 >= one_way,
            "{}: RTT p50 {p50} ms, one way {one_way} ms",
            f["name"]
        );
        assert!(min >= 2.0, "{}: RTT min {min} ms", f["name"]);
        assert!(rtt["p99"].as_f64().unwrap() >= p50 && rtt["max"].as_f64().unwrap() >= min);
    }
    assert_eq!(tcp, 4);
}
