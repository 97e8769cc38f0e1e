//! `txop compare`, `--quiet`, `txop list`: the commands of issue 5 beyond `run`.

mod support;
use support::*;

/// Two stacks side by side: one table with a column each, a results directory with
/// every run (each the same as a plain `txop run` with that stack) and a flent file
/// per run that flent overlays.
#[test]
fn compare_two_stacks() {
    let dir = scratch("compare");
    let out = dir.join("cmp");
    let common = ["--set", "traffic.length_s=10"];
    let mut args = vec![
        "compare",
        "tcp-ndown-6mbit",
        "--stack",
        "linux-4.8-bloated",
        "--stack",
        "linux-6.16",
        "-o",
        out.to_str().unwrap(),
    ];
    args.extend(common);
    let o = txop(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let table = stdout(&o);
    let header = table.lines().nth(1).unwrap();
    assert!(header.contains("linux-4.8-bloated") && header.contains("linux-6.16"));
    // The ping's p50 column by column: the bloated stack is many times worse.
    let ping = table
        .lines()
        .find(|l| l.contains("Ping (ms) ICMP") && l.contains("p50"))
        .expect("a ping row");
    let cells: Vec<f64> = ping
        .split_whitespace()
        .rev()
        .take(2)
        .map(|c| c.parse().unwrap())
        .collect();
    let (bloated, modern) = (cells[1], cells[0]);
    assert!(bloated > 5.0 * modern, "{ping}");
    assert_eq!(
        std::fs::read_to_string(out.join("summary.txt")).unwrap(),
        table
    );
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[1]["label"], "linux-6.16");
    assert_eq!(runs[1]["settings"]["stack"], "linux-6.16");
    assert_eq!(runs[1]["resolved"]["stack"], "linux-6.16");
    // Each run is exactly the plain run with that stack.
    let single = txop(&[
        "run",
        "tcp-ndown-6mbit",
        "--set",
        "stack=linux-6.16",
        "--set",
        "traffic.length_s=10",
        "--json",
    ]);
    let single: serde_json::Value = serde_json::from_slice(&single.stdout).unwrap();
    for key in ["flows", "stations", "total_throughput_bps", "conservation"] {
        assert_eq!(runs[1][key], single[key], "{key}");
    }
    let a = out.join("tcp_ndown-tcp-ndown-6mbit-linux-4.8-bloated.flent.gz");
    let b = out.join("tcp_ndown-tcp-ndown-6mbit-linux-6.16.flent.gz");
    assert!(a.exists() && b.exists());
    // The overlays, as PNG and SVG, naming both runs.
    for plot in ["latency-cdf", "latency-time", "throughput", "stations"] {
        let png = std::fs::read(out.join(format!("{plot}.png"))).unwrap();
        assert!(png.starts_with(b"\x89PNG"), "{plot}.png");
        let svg = std::fs::read_to_string(out.join(format!("{plot}.svg"))).unwrap();
        assert!(
            svg.contains("linux-4.8-bloated") && svg.contains("linux-6.16"),
            "{plot}"
        );
    }
    // Each file says which run it is: flent's legends show TITLE, its GUI groups by
    // TEST_PARAMETERS.
    let meta = |file: &std::path::Path| -> serde_json::Value {
        let gz = std::fs::read(file).unwrap();
        let mut text = String::new();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&gz[..]), &mut text)
            .unwrap();
        serde_json::from_str::<serde_json::Value>(&text).unwrap()["metadata"].clone()
    };
    for (file, stack) in [(&a, "linux-4.8-bloated"), (&b, "linux-6.16")] {
        let m = meta(file);
        assert_eq!(m["TITLE"], format!("tcp-ndown-6mbit — {stack}"));
        assert_eq!(m["TEST_PARAMETERS"]["stack"], stack);
        assert_eq!(m["TEST_PARAMETERS"]["cc"], "cubic");
        assert_eq!(m["TEST_PARAMETERS"]["column"], stack);
    }
    let png = dir.join("overlay.png");
    let o = std::process::Command::new("flent")
        .arg("-i")
        .arg(&a)
        .arg("-i")
        .arg(&b)
        .args(["-p", "ping_cdf", "-o"])
        .arg(&png)
        .output()
        .expect("flent is installed by scripts/setup.sh");
    let size = std::fs::metadata(&png).map(|m| m.len()).unwrap_or(0);
    assert!(
        size > 10_000,
        "flent overlay: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `--vary` takes any key; the table has a column per value.
#[test]
fn compare_varies_any_key() {
    let o = txop(&[
        "compare",
        "default",
        "--vary",
        "stations.list[0].count=1,5",
        "--set",
        "duration_s=1",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = stdout(&o);
    assert!(t.contains("stations.list[0].count=1") && t.contains("stations.list[0].count=5"));
    let sta6 = t.lines().find(|l| l.starts_with("sta6 Mbit/s")).unwrap();
    // Two stations have no sixth one: its cell is a dash.
    assert!(sta6.contains('—'), "{sta6}");
}

#[test]
fn compare_errors_are_one_line() {
    assert_user_error(
        &["compare", "default", "--stack", "linux-6.16"],
        &["at least two"],
    );
    assert_user_error(
        &[
            "compare",
            "default",
            "--stack",
            "linux-6.16",
            "--stack",
            "linux-9",
        ],
        &["stack", "linux-9", "in setting `linux-9`"],
    );
    assert_user_error(
        &["compare", "default", "--vary", "stations.count"],
        &["--vary", "KEY=V1"],
    );
    assert_user_error(
        &["compare", "default", "--vary", "stations.cuont=1,2"],
        &["stations.cuont", "count"],
    );
}

/// `--quiet` prints nothing and still writes the results directory.
#[test]
fn quiet_prints_nothing() {
    let dir = scratch("quiet");
    let out = dir.join("r");
    let o = txop(&[
        "run",
        "default",
        "--set",
        "duration_s=1",
        "--quiet",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stdout.is_empty() && o.stderr.is_empty());
    assert!(out.join("summary.txt").exists());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn list_names_scenarios_tests_and_stacks() {
    let o = txop(&["list"]);
    assert!(o.status.success());
    let t = stdout(&o);
    for needle in [
        "Scenarios",
        "tcp-ndown-6mbit",
        "flent tests",
        "rtt_fair_up",
        "Stacks",
        "linux-4.8-bloated",
    ] {
        assert!(t.contains(needle), "{needle} missing from:\n{t}");
    }
}

/// A 30-station comparison (issue 27: 245 lines, a row per station and flow) shows its
/// station groups' spreads and its groups of flows: 14 lines, each run's group p50
/// throughput the median of that run's stations in its results.json.
#[test]
fn compare_of_many_stations_shows_groups() {
    let dir = scratch("compare-many");
    let out = dir.join("cmp");
    let o = txop(&[
        "compare",
        "e3-rtt-fair-up-n",
        "--set",
        "stations.count=30",
        "--set",
        "traffic.length_s=1",
        "--stack",
        "linux-4.8-bloated",
        "--stack",
        "linux-6.16",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let table = stdout(&o);
    assert!(table.lines().count() <= 20, "{table}");
    assert!(!table.contains("sta1 "), "{table}");
    let row = table
        .lines()
        .find(|l| l.starts_with("group stations: Mbit/s p50"))
        .unwrap_or_else(|| panic!("{table}"));
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    for run in json["runs"].as_array().unwrap() {
        let mut t: Vec<f64> = run["stations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["throughput_bps"].as_f64().unwrap())
            .collect();
        t.sort_by(f64::total_cmp);
        // Nearest rank: the 15th of 30.
        let p50 = format!("{:.2} [", t[14] / 1e6);
        assert!(row.contains(&p50), "{p50} not in {row}");
    }
    assert!(
        table.contains("Ping (ms) ICMP (stations → server): flows"),
        "{table}"
    );
}

/// `--metric-vs KEY` (issue 27 item 2): the headline figures against a varied key, a
/// line per stack, each point the median of the seeds with their range. Every number is
/// checked against the runs' own figures in the same results.json, worked out here
/// again (the median of three is the middle one), and the chart's PNG is drawn at its
/// natural size.
#[test]
fn metric_vs_charts_the_runs_median_and_range_over_seeds() {
    let dir = scratch("metric-vs");
    let out = dir.join("vs");
    let o = txop(&[
        "compare",
        "tcp-ndown-6mbit",
        "--stack",
        "linux-4.8-bloated",
        "--stack",
        "linux-6.16",
        "--vary",
        "traffic.streams=1,4",
        "--vary",
        "seed=1,2,3",
        "--set",
        "traffic.length_s=3",
        "--set",
        "traffic.delay_s=1",
        "--metric-vs",
        "traffic.streams",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let table = stdout(&o);
    assert!(
        table.contains("tcp-ndown-6mbit: vs traffic.streams, median and range over 3 seeds"),
        "{table}"
    );
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    assert_valid(&v, "compare --metric-vs");
    let chart = &v["metric_vs"];
    assert_eq!(chart["key"], "traffic.streams");
    assert_eq!(chart["seeds"], serde_json::json!(["1", "2", "3"]));
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 12);
    let tput = &chart["metrics"][0];
    assert_eq!(tput["metric"], "total throughput");
    let lines = tput["lines"].as_array().unwrap();
    let labels: Vec<&str> = lines.iter().map(|l| l["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["linux-4.8-bloated", "linux-6.16"]);
    let p50 = &chart["metrics"][1];
    assert_eq!(p50["metric"], "delay p50");
    for (stack, line) in ["linux-4.8-bloated", "linux-6.16"].iter().zip(lines) {
        for (streams, point) in ["1", "4"].iter().zip(line["points"].as_array().unwrap()) {
            let of = |f: &dyn Fn(&serde_json::Value) -> f64| -> Vec<f64> {
                let mut xs: Vec<f64> = runs
                    .iter()
                    .filter(|r| {
                        r["settings"]["stack"] == *stack
                            && r["settings"]["traffic.streams"] == *streams
                    })
                    .map(f)
                    .collect();
                xs.sort_by(f64::total_cmp);
                xs
            };
            let mbps = of(&|r| r["total_throughput_bps"].as_f64().unwrap() / 1e6);
            assert_eq!(mbps.len(), 3);
            assert_eq!(
                point["x"].as_f64().unwrap(),
                streams.parse::<f64>().unwrap()
            );
            assert_eq!(point["runs"], 3);
            assert_eq!(point["median"].as_f64().unwrap(), mbps[1]);
            assert_eq!(point["min"].as_f64().unwrap(), mbps[0]);
            assert_eq!(point["max"].as_f64().unwrap(), mbps[2]);
            // The delay: the scenario's one measurement flow is its ping, whose RTT p50
            // the runs report.
            let ping = of(&|r| {
                let flows = r["flows"].as_array().unwrap();
                let pings: Vec<&serde_json::Value> =
                    flows.iter().filter(|f| f["kind"] == "ping").collect();
                assert_eq!(pings.len(), 1);
                pings[0]["rtt_ms"]["p50"].as_f64().unwrap()
            });
            let lp = p50["lines"]
                .as_array()
                .unwrap()
                .iter()
                .find(|l| l["label"] == *stack)
                .unwrap()["points"]
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p["x"].as_f64() == streams.parse::<f64>().ok())
                .unwrap()
                .clone();
            assert_eq!(lp["median"].as_f64().unwrap(), ping[1]);
            assert_eq!(
                (lp["min"].as_f64().unwrap(), lp["max"].as_f64().unwrap()),
                (ping[0], ping[2])
            );
        }
    }
    // The bloated stack's ping is many times the modern one's at 4 streams.
    let at4 = |line: usize| p50["lines"][line]["points"][1]["median"].as_f64().unwrap();
    assert!(at4(0) > 5.0 * at4(1), "{} vs {}", at4(0), at4(1));
    let png = std::fs::read(out.join("metric-vs-traffic.streams.png")).unwrap();
    assert_eq!(&png[1..4], b"PNG");
    let (w, h) = (
        u32::from_be_bytes(png[16..20].try_into().unwrap()),
        u32::from_be_bytes(png[20..24].try_into().unwrap()),
    );
    assert_eq!((w, h), (1100, 886), "two rows of two panels");
    assert!(out.join("metric-vs-traffic.streams.svg").exists());
    std::fs::remove_dir_all(&dir).ok();
}

/// `--metric-vs` refuses, in one line, a key it cannot put on an x axis.
#[test]
fn metric_vs_errors_are_one_line() {
    let base = [
        "compare",
        "default",
        "--stack",
        "linux-4.9",
        "--stack",
        "linux-6.16",
        "--vary",
        "seed=1,2",
        "--set",
        "duration_s=0.1",
        "--metric-vs",
    ];
    fn with<'a>(base: &[&'a str], key: &'a str) -> Vec<&'a str> {
        let mut a = base.to_vec();
        a.push(key);
        a
    }
    let with = |key: &'static str| with(&base, key);
    assert_user_error(&with("seed"), &["--metric-vs seed:", "range"]);
    assert_user_error(
        &with("stations.count"),
        &["--metric-vs stations.count:", "does not vary"],
    );
    assert_user_error(&with("stack"), &["--metric-vs stack:", "not a number"]);
}

/// The table's first line says what the runs share, and the span of what a column
/// varies: it named the first run's seed and length for every run before.
#[test]
fn the_heading_says_which_seeds_and_lengths_the_columns_ran() {
    let o = txop(&[
        "compare",
        "anomaly",
        "--vary",
        "seed=1,3",
        "--vary",
        "duration_s=0.2,0.4",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let first = stdout(&o).lines().next().unwrap().to_string();
    assert_eq!(
        first,
        "anomaly: 4 settings compared, 0.2–0.4 s simulated, seeds 1, 3"
    );
    let o = txop(&[
        "compare",
        "anomaly",
        "--stack",
        "linux-4.9",
        "--stack",
        "linux-6.16",
        "--set",
        "duration_s=0.2",
        "--seed",
        "7",
    ]);
    let first = stdout(&o).lines().next().unwrap().to_string();
    assert_eq!(
        first,
        "anomaly: 2 settings compared, 0.2 s simulated each, seed 7"
    );
}
