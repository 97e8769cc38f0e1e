//! A TCP sender as a researcher reads it (issue 27, item 4): its series over time
//! (`srtt_series_ms`, `bbr_mode_series` …) against what the path and BBR's state machine
//! say they must be, and the summary's TCP table against results.json.

mod support;
use support::*;

/// `txop run SCENARIO --set …` into a results directory: the directory and its
/// results.json, checked against the schema.
fn run_to_dir(
    name: &str,
    scenario: &str,
    sets: &[&str],
) -> (std::path::PathBuf, serde_json::Value) {
    let out = scratch(name).join("out");
    let mut args = vec!["run", scenario];
    for set in sets {
        args.extend(["--set", set]);
    }
    args.extend(["-o", out.to_str().unwrap(), "-q"]);
    let o = txop(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    assert_valid(&v, "results.json");
    (out, v)
}

/// The summary's TCP rows say what results.json says: each TCP flow's retransmitted
/// segments and timeouts (RTOs), and its sender's RTT median (`tcp_rtt_ms`), from one
/// run's results directory. A ping flow has no row.
#[test]
fn the_summary_counts_retransmits_and_timeouts_as_results_json() {
    let (out, v) = run_to_dir("tcp-summary", "tcp-ndown-6mbit", &["traffic.length_s=10"]);
    let summary = std::fs::read_to_string(out.join("summary.txt")).unwrap();
    let header = summary
        .lines()
        .position(|l| l.contains("retransmits") && l.contains("timeouts"))
        .unwrap_or_else(|| panic!("no TCP table:\n{summary}"));
    let rows: Vec<Vec<&str>> = summary
        .lines()
        .skip(header + 1)
        .take_while(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().collect())
        .collect();
    let tcp: Vec<&serde_json::Value> = v["flows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["retransmits"].is_u64())
        .collect();
    assert_eq!(rows.len(), tcp.len(), "{summary}");
    assert_eq!(tcp.len(), 4);
    let mut timeouts = 0;
    for (row, f) in rows.iter().zip(&tcp) {
        // flow, kind, src, →, dst, retransmits, timeouts, rtt p50, rtt p99
        assert_eq!(row[0], f["flow"].to_string(), "{row:?}");
        assert_eq!(row[5], f["retransmits"].to_string(), "{row:?}");
        assert_eq!(row[6], f["timeouts"].to_string(), "{row:?}");
        let p50 = f["tcp_rtt_ms"]["p50"].as_f64().unwrap();
        assert_eq!(row[7], format!("{p50:.1}ms"), "{row:?}");
        assert!(
            f["retransmits"].as_u64() > Some(0),
            "a FIFO-less 6 Mbit/s path drops"
        );
        timeouts += f["timeouts"].as_u64().unwrap();
    }
    assert!(
        timeouts > 0,
        "the table's timeouts are not all zero: {summary}"
    );
}

/// One segment over an idle link: the sender's srtt is its one RTT sample (RFC 6298
/// §2.2: SRTT ← R), and that is the path's round trip, worked out here from the
/// 802.11n TXTIME (802.11-2016 §19.4.3): 2 × 10 ms of wire, the 1500-byte segment and the 52-byte
/// ACK at HT20 MCS7 (260 data bits per 4 µs symbol after a 36 µs HT-mixed preamble;
/// MPDUs of 1538 and 90 bytes: 228 and 48 µs) and the segment's 12 µs on the 1 Gbit/s
/// wire; at most, each way one AIFS (43 µs) and a whole first backoff (15 slots of
/// 9 µs), and the segment's block ack (SIFS + 32 µs), more.
#[test]
fn srtt_on_an_idle_link_is_the_path_round_trip() {
    let dir = scratch("tcp-idle");
    let file = dir.join("idle.toml");
    std::fs::write(
        &file,
        r#"name = "idle"
seed = 1
stack = "linux-6.16"
duration_s = 2
[phy]
standard = "n"
band = "5"
[stations]
count = 1
mcs = 7
[wired]
delay_ms = 10
[[flows]]
kind = "tcp"
from = "server"
to = "sta1"
bytes = 1448
"#,
    )
    .unwrap();
    let o = txop(&["run", file.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_valid(&v, "idle");
    let f = &v["flows"][0];
    let srtt: Vec<Option<f64>> = f["srtt_series_ms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64())
        .collect();
    let last = srtt.last().copied().flatten().expect("an srtt");
    let symbols = |mpdu_bytes: f64| ((16.0 + 8.0 * mpdu_bytes + 6.0) / 260.0_f64).ceil();
    let data_us = 36.0 + 4.0 * symbols(26.0 + 8.0 + 1500.0 + 4.0);
    let ack_us = 36.0 + 4.0 * symbols(26.0 + 8.0 + 52.0 + 4.0);
    assert_eq!((data_us, ack_us), (228.0, 48.0));
    let lowest_ms = 20.0 + (data_us + ack_us + 12.0) / 1e3;
    let highest_ms = lowest_ms + (2.0 * (43.0 + 15.0 * 9.0) + 16.0 + 32.0) / 1e3;
    assert!(
        (lowest_ms..=highest_ms).contains(&last),
        "srtt {last} ms outside [{lowest_ms}, {highest_ms}]"
    );
    assert_eq!(f["tcp_rtt_ms"]["min"].as_f64(), Some(last), "one sample");
    assert_eq!(
        srtt.iter().flatten().count(),
        1,
        "one ACK, one step: {srtt:?}"
    );
    // CUBIC without pacing: no pacing rate; no BBR.
    assert_eq!(f["pacing_rate_series_bps"], serde_json::json!([]));
    assert_eq!(f["bbr_mode_series"], serde_json::json!([]));
}

/// A BBR download: its modes come in the order of BBR v1's state machine
/// (`tcp_bbr.c`): STARTUP until the pipe is full, then DRAIN, then PROBE_BW, which it
/// leaves only for PROBE_RTT; it paces from its first ACK on (BBR always paces), and
/// every series is as long as `cwnd_series_bytes`.
#[test]
fn a_bbr_sender_goes_from_startup_through_drain_to_probe_bw() {
    let sets = [
        "traffic.test=tcp_1down",
        "traffic.cc=bbr",
        "traffic.length_s=15",
    ];
    let (out, v) = run_to_dir("tcp-bbr", "tcp-ndown-6mbit", &sets);
    let f = v["flows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "tcp")
        .unwrap();
    let steps: Vec<Vec<&str>> = f["bbr_mode_series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            s.as_array()
                .unwrap()
                .iter()
                .map(|m| m.as_str().unwrap())
                .collect()
        })
        .collect();
    let first = |mode: &str| steps.iter().position(|s| s.contains(&mode));
    let last = |mode: &str| steps.iter().rposition(|s| s.contains(&mode));
    let (startup, drain, probe_bw) = (first("STARTUP"), first("DRAIN"), first("PROBE_BW"));
    assert!(
        startup.is_some() && startup <= drain && drain <= probe_bw,
        "{steps:?}"
    );
    assert!(
        last("STARTUP") <= drain && last("DRAIN") <= probe_bw,
        "{steps:?}"
    );
    assert!(steps[..startup.unwrap()].iter().all(Vec::is_empty));
    for s in &steps[probe_bw.unwrap() + 1..] {
        assert!(
            s.iter().all(|m| ["PROBE_BW", "PROBE_RTT"].contains(m)),
            "{s:?}"
        );
    }
    let n = f["cwnd_series_bytes"].as_array().unwrap().len();
    for key in [
        "srtt_series_ms",
        "pacing_rate_series_bps",
        "delivery_rate_series_bps",
        "bbr_mode_series",
    ] {
        assert_eq!(f[key].as_array().unwrap().len(), n, "{key}");
    }
    let pacing = f["pacing_rate_series_bps"].as_array().unwrap();
    assert!(pacing[startup.unwrap()..]
        .iter()
        .all(|p| p.as_u64() > Some(0)));
    assert!(out.join("tcp-bbr.png").is_file() && out.join("tcp-cwnd.svg").is_file());
    // The ping of tcp_1down is no TCP flow: no series.
    let ping = v["flows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "ping");
    assert_eq!(ping.unwrap()["bbr_mode_series"], serde_json::json!([]));
}
