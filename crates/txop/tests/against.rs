//! `txop compare --against FILE`: a real flent file held against txop's run. The files
//! are written here, small and synthetic, with values whose medians and 90th
//! percentiles are worked out by hand.

mod support;
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use support::*;

/// Write `data` as a gzip'd flent file `name` in `dir`.
fn write_flent(dir: &Path, name: &str, data: &Value) -> PathBuf {
    let path = dir.join(name);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&serde_json::to_vec(data).unwrap()).unwrap();
    std::fs::write(&path, gz.finish().unwrap()).unwrap();
    path
}

/// A tcp_download run of 4 s between 1 s of pings alone on each side, 0.2 s steps
/// (x = 0 … 6 s). In the loaded period (1–5 s) the download's values are 4, 1, 3, 2,
/// 10 (median 3, p90 4 + 0.6 × 6 = 7.6) and the ping's 5 and 7 (median 6, p90 6.8);
/// outside it, values that would move both if they were counted.
fn tcp_download() -> Value {
    let n = 31;
    let x: Vec<f64> = (0..n)
        .map(|i| (i as f64 * 0.2 * 10.0).round() / 10.0)
        .collect();
    let at = |t: f64| x.iter().position(|&v| (v - t).abs() < 1e-9).unwrap();
    let mut tcp = vec![Value::Null; n];
    for (t, v) in [
        (1.0, 4.0),
        (1.2, 1.0),
        (1.4, 3.0),
        (1.6, 2.0),
        (1.8, 10.0),
        (0.2, 999.0),
    ] {
        tcp[at(t)] = json!(v);
    }
    let mut ping = vec![Value::Null; n];
    for (t, v) in [(1.0, 5.0), (3.0, 7.0), (5.8, 1000.0), (0.4, 0.001)] {
        ping[at(t)] = json!(v);
    }
    json!({
        "version": 3,
        "x_values": x,
        "results": {"TCP download": tcp, "Ping (ms) ICMP": ping},
        "metadata": {
            "NAME": "tcp_download", "TITLE": "synthetic", "LENGTH": 4, "TOTAL_LENGTH": 6,
            "STEP_SIZE": 0.2, "HOSTS": ["10.0.0.1"], "LOCAL_HOST": "laptop",
            "EGRESS_INFO": {"iface": "wlan0", "driver": "ath9k"},
            "SYSCTLS": {"net.ipv4.tcp_congestion_control": "cubic", "net.ipv4.tcp_ecn": 2},
        },
    })
}

/// A gzip'd flent file's JSON.
fn read_flent(path: &Path) -> Value {
    let gz = flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap());
    serde_json::from_reader(gz).unwrap()
}

/// numpy's default percentile (linear between closest ranks), written again here.
fn percentile(mut v: Vec<f64>, q: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    let h = (v.len() - 1) as f64 * q;
    let (lo, hi) = (h.floor() as usize, (h.ceil() as usize).min(v.len() - 1));
    v[lo] + (h - h.floor()) * (v[hi] - v[lo])
}

/// The cells of the table row that starts with `series` (after the name and units).
fn row(table: &str, series: &str) -> Vec<String> {
    let line = table
        .lines()
        .find(|l| l.starts_with(series) && l[series.len()..].starts_with("  "))
        .unwrap_or_else(|| panic!("no row {series} in\n{table}"));
    line[series.len()..]
        .split_whitespace()
        .skip(1)
        .map(str::to_string)
        .collect()
}

#[test]
fn a_real_download_against_txops_run() {
    let dir = scratch("against");
    let file = write_flent(&dir, "tcp_download.flent.gz", &tcp_download());
    let out = dir.join("out");
    let o = txop(&[
        "compare",
        "--against",
        file.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let table = stdout(&o);
    assert!(
        table.contains("txop: tcp-ndown-6mbit as tcp_1down, cubic, ECN off"),
        "{table}"
    );
    assert!(
        table.contains("flent ran on the station (EGRESS_INFO: interface wlan0"),
        "{table}"
    );
    // The real columns, by hand: the loaded period's values only.
    let tcp = row(&table, "TCP download");
    assert_eq!(
        (tcp[0].as_str(), tcp[3].as_str()),
        ("3.00", "7.60"),
        "{table}"
    );
    let ping = row(&table, "Ping (ms) ICMP");
    assert_eq!(
        (ping[0].as_str(), ping[3].as_str()),
        ("6.00", "6.80"),
        "{table}"
    );
    // The txop columns: the same statistics of txop's own flent file (its loaded
    // period is the same 1–5 s: the mapping gave it the file's LENGTH and DELAY).
    let flent = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".flent.gz"))
        .expect("txop's flent file");
    let txop_data = read_flent(&flent);
    assert_eq!(txop_data["metadata"]["LENGTH"], 4.0);
    assert_eq!(txop_data["metadata"]["TOTAL_LENGTH"], 6.0);
    let loaded = |name: &str| -> Vec<f64> {
        let x = txop_data["x_values"].as_array().unwrap();
        let v = txop_data["results"][name].as_array().unwrap();
        x.iter()
            .zip(v)
            .filter(|(x, _)| (1.0..=5.0).contains(&x.as_f64().unwrap()))
            .filter_map(|(_, v)| v.as_f64())
            .collect()
    };
    for (series, cells, real) in [
        ("TCP download", &tcp, (3.0, 7.6)),
        ("Ping (ms) ICMP", &ping, (6.0, 6.8)),
    ] {
        let v = loaded(series);
        assert!(v.len() > 10, "{series}: {v:?}");
        let (p50, p90) = (percentile(v.clone(), 0.5), percentile(v, 0.9));
        assert_eq!(cells[1], format!("{p50:.2}"), "{series}");
        assert_eq!(cells[2], format!("{:.2}×", p50 / real.0), "{series}");
        assert_eq!(cells[4], format!("{p90:.2}"), "{series}");
        assert_eq!(cells[5], format!("{:.2}×", p90 / real.1), "{series}");
    }
    // The results directory: the table, the rows as JSON, the plots with both runs.
    assert_eq!(
        std::fs::read_to_string(out.join("summary.txt")).unwrap(),
        table
    );
    let v: Value =
        serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(v["mapping"]["test"], "tcp_1down");
    assert_eq!(v["rows"][0]["series"], "TCP download");
    assert_eq!(v["rows"][0]["real"]["p90"], 7.6000000000000005);
    assert_eq!(v["resolved"]["traffic"]["test"], "tcp_1down");
    // Every plot draws both runs: the real one in the first colour, txop's in the
    // second (each a line and its legend entry).
    for plot in ["throughput.svg", "latency-cdf.svg", "latency-time.svg"] {
        let svg = std::fs::read_to_string(out.join(plot)).unwrap();
        for colour in ["#1F77B4", "#FF7F0E"] {
            let n = svg.matches(&format!("stroke=\"{colour}\"")).count();
            assert!(n >= 2, "{plot}: {colour} drawn {n} times");
        }
    }
    // A flent file holds no delay budget: where the time goes is txop's alone, not
    // txop's stages under the real run's name.
    let budget = std::fs::read_to_string(out.join("delay-budget.svg")).unwrap();
    assert!(budget.contains("txop: data"), "txop's bars");
    assert!(!budget.contains("real: "), "bars for the real run");
}

#[test]
fn flent_on_the_wired_side_swaps_the_direction() {
    let dir = scratch("against-server");
    let mut data = tcp_download();
    data["metadata"]["EGRESS_INFO"] = json!({"iface": "eno1", "driver": "e1000e"});
    let file = write_flent(&dir, "f.flent.gz", &data);
    let o = txop(&["compare", "--against", file.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["mapping"]["test"], "tcp_1up");
    assert_eq!(v["rows"][0]["series"], "TCP upload");
    assert_eq!(v["rows"][0]["real_series"], "TCP download");
    assert_eq!(v["rows"][0]["real"]["p50"], 3.0);
    // The user's word wins; without EGRESS_INFO it is needed.
    data["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("EGRESS_INFO");
    let file = write_flent(&dir, "g.flent", &data);
    let g = file.to_str().unwrap();
    assert_user_error(
        &["compare", "--against", g],
        &[
            g,
            "cannot map: the file does not say where flent ran",
            "--flent-on",
        ],
    );
    let o = txop(&["compare", "--against", g, "--flent-on", "server", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["mapping"]["test"], "tcp_1up");
}

#[test]
fn files_that_cannot_be_mapped_are_refused_in_one_line() {
    let dir = scratch("against-refused");
    let garbage = dir.join("garbage.flent.gz");
    std::fs::write(&garbage, b"\x1f\x8bnot gzip").unwrap();
    let g = garbage.to_str().unwrap();
    assert_user_error(
        &["compare", "--against", g],
        &[g, "not a flent data file (gzip"],
    );
    let missing = dir.join("missing.flent.gz");
    assert_user_error(
        &["compare", "--against", missing.to_str().unwrap()],
        &["missing.flent.gz"],
    );
    let mut data = tcp_download();
    data["metadata"]["NAME"] = json!("tcp_4up_squarewave");
    let f = write_flent(&dir, "square.flent.gz", &data);
    assert_user_error(
        &["compare", "--against", f.to_str().unwrap()],
        &["square.flent.gz: cannot map: flent test `tcp_4up_squarewave` has no counterpart"],
    );
    let mut data = tcp_download();
    data["results"]["TCP download"] = json!([1.0]);
    let f = write_flent(&dir, "short.flent.gz", &data);
    assert_user_error(
        &["compare", "--against", f.to_str().unwrap()],
        &["short.flent.gz: results: series `TCP download` has 1 values for 31 x_values"],
    );
    // rtt_fair over two stations in a one-station cell: the key to set is named.
    let mut data = tcp_download();
    data["metadata"]["NAME"] = json!("rtt_fair_up");
    data["metadata"]["HOSTS"] = json!(["a", "b"]);
    let n = 31;
    data["results"] = json!({
        "TCP upload BE1 a": vec![1.0; n], "TCP upload BE2 b": vec![1.0; n],
        "Ping (ms) ICMP1 a": vec![1.0; n], "Ping (ms) ICMP2 b": vec![1.0; n],
    });
    let f = write_flent(&dir, "fair.flent.gz", &data);
    assert_user_error(
        &[
            "compare",
            "--against",
            f.to_str().unwrap(),
            "--flent-on",
            "server",
        ],
        &[
            "fair.flent.gz: rtt_fair_up runs its flows on 2 hosts (one station each) and \
             tcp-ndown-6mbit has 1 station",
            "--set stations.count=2",
        ],
    );
    // With two stations it runs.
    let o = txop(&[
        "compare",
        "--against",
        f.to_str().unwrap(),
        "--flent-on",
        "server",
        "--set",
        "stations.count=2",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["mapping"]["test"], "rtt_fair_down");
    assert_eq!(v["rows"][1]["series"], "TCP download BE2 sta2");
    assert_eq!(v["rows"][4]["series"], "TCP download sum");
    // Two settings are a comparison of settings, not against a file.
    assert_user_error(
        &[
            "compare",
            "--against",
            f.to_str().unwrap(),
            "--stack",
            "linux-4.9",
            "--stack",
            "linux-6.16",
        ],
        &["--against runs one setting"],
    );
}

/// rtt_fair_up with its four flows on one host (netserver on one station, flent behind
/// the AP): four downloads to that station and four pings from it, as explicit flows,
/// labelled as flent names them; txop's flent file holds them under those names.
#[test]
fn rtt_fair_with_one_host_four_times_runs_four_flows() {
    let dir = scratch("against-fair");
    let n = 31;
    let x: Vec<f64> = (0..n).map(|i| (i as f64 * 2.0).round() / 10.0).collect();
    let mut results = serde_json::Map::new();
    for k in 1..=4 {
        results.insert(
            format!("TCP upload BE{k} pi"),
            json!(vec![10.0 * k as f64; n]),
        );
        results.insert(format!("Ping (ms) ICMP{k} pi"), json!(vec![2.0; n]));
    }
    results.insert("TCP upload sum".into(), json!(vec![100.0; n]));
    let data = json!({
        "x_values": x, "results": results,
        "metadata": {"NAME": "rtt_fair_up", "LENGTH": 4, "TOTAL_LENGTH": 6, "STEP_SIZE": 0.2,
                     "HOSTS": ["pi", "pi", "pi", "pi"], "EGRESS_INFO": {"iface": "eth0"}},
    });
    let f = write_flent(&dir, "fair4.flent.gz", &data);
    let out = dir.join("out");
    let o = txop(&[
        "compare",
        "--against",
        f.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let table = stdout(&o);
    // Each real flow's constant value is its median and p90; their sum is 100.
    let cells = row(&table, "TCP download BE3 sta1 (real: TCP upload BE3 pi)");
    assert_eq!(
        (cells[0].as_str(), cells[3].as_str()),
        ("30.00", "30.00"),
        "{table}"
    );
    let sum = row(&table, "TCP download sum");
    assert_eq!(
        (sum[0].as_str(), sum[3].as_str()),
        ("100.00", "100.00"),
        "{table}"
    );
    let v: Value =
        serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    let flows = v["results"]["flows"].as_array().unwrap();
    assert_eq!(flows.len(), 8);
    assert_eq!(flows[2]["label"], "TCP download BE3 sta1");
    assert_eq!(flows[2]["src"], "server");
    assert_eq!(flows[7]["label"], "Ping (ms) ICMP4 sta1");
    let t = read_flent(&out.join("rtt_fair_down-tcp-ndown-6mbit.flent.gz"));
    assert_eq!(t["metadata"]["NAME"], "rtt_fair_down");
    assert_eq!(t["metadata"]["LENGTH"], 4.0);
    assert!(t["results"]["TCP download BE4 sta1"].is_array());
}
