//! The delay budget (issue 27, item 1; docs/results.md, "The delay budget"): every
//! packet's one-way delay split by stage. Its stages must add up to the delay for every
//! packet of every built-in scenario, and each stage must hold what its name says,
//! checked against figures worked out apart from the model: the standard's PPDU
//! duration, the wire's propagation and serialisation, DCF's immediate access.

mod support;
use serde_json::Value;
use support::*;

const STAGES: [&str; 9] = [
    "to_cell",
    "qdisc",
    "txq",
    "driver",
    "access",
    "retries",
    "air",
    "reorder",
    "from_cell",
];

fn run_json(args: &[&str]) -> Value {
    let o = txop(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    serde_json::from_str(&stdout(&o)).expect("valid JSON")
}

/// Every flow of a result, one BSS or several.
fn flows(v: &Value) -> Vec<&Value> {
    let mut out = Vec::new();
    fn walk<'a>(v: &'a Value, out: &mut Vec<&'a Value>) {
        match v {
            Value::Object(m) => {
                if m.contains_key("delay_budget") {
                    out.push(v);
                    return;
                }
                m.values().for_each(|x| walk(x, out));
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    walk(v, &mut out);
    out
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

/// A stage of a direction's budget by name.
fn stage<'a>(dir: &'a Value, name: &str) -> &'a Value {
    dir["stages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["stage"] == name)
        .unwrap_or_else(|| panic!("no stage {name}"))
}

#[test]
fn every_builtin_splits_every_packet_exactly() {
    let names = builtin_names();
    assert!(names.len() >= 20, "{names:?}");
    let mut split = 0;
    for name in &names {
        let v = run_json(&["run", name, "--json"]);
        for f in flows(&v) {
            let who = format!("{name}: {}", f["name"]);
            for dir in ["forward", "back"] {
                let b = &f["delay_budget"][dir];
                if b.is_null() {
                    continue;
                }
                let stages = b["stages"].as_array().unwrap();
                let names: Vec<&str> = stages
                    .iter()
                    .map(|s| s["stage"].as_str().unwrap())
                    .collect();
                assert_eq!(names, STAGES, "{who}");
                assert_eq!(
                    u(&b["unsplit_packets"]),
                    0,
                    "{who} {dir}: a packet not split"
                );
                let sum: u64 = stages.iter().map(|s| u(&s["sum_ns"])).sum();
                assert_eq!(sum, u(&b["delay_sum_ns"]), "{who} {dir}: stages ≠ delay");
                split += u(&b["packets"]);
            }
            // The forward packets are the ones `latency_ms` measured, each from its
            // application sending to its application receiving: the same mean.
            if let (Some(mean), Some(fw)) = (
                f["latency_ms"]["mean"].as_f64(),
                f["delay_budget"]["forward"].as_object(),
            ) {
                let n = u(&fw["packets"]) as f64;
                let budget_mean = u(&fw["delay_sum_ns"]) as f64 / n / 1e6;
                assert!(
                    (budget_mean - mean).abs() <= 1e-9 * mean.max(1.0),
                    "{who}: budget mean {budget_mean} ms, latency mean {mean} ms"
                );
            } else {
                assert!(
                    f["latency_ms"].is_null(),
                    "{who}: a latency but no forward budget"
                );
            }
        }
    }
    assert!(split > 1_000_000, "only {split} packets split");
}

/// One station, 1 Mbit/s of 1500-byte UDP from the AP, 802.11a at 54 Mbit/s without
/// aggregation, QoS or protection: every packet alone on an idle medium. Its one
/// flow's forward budget.
fn light_11a_cbr() -> Value {
    let v = run_json(&[
        "run",
        "bianchi-11a",
        "--json",
        "--set",
        "stations.count=1",
        "--set",
        "mac.aggregation=false",
        "--set",
        "duration_s=3",
        "--set",
        "traffic.kind=cbr",
        "--set",
        "traffic.rate_mbps=1",
        "--set",
        "traffic.direction=downlink",
    ]);
    flows(&v)[0]["delay_budget"]["forward"].clone()
}

#[test]
fn the_air_stage_is_the_ppdu_duration_of_the_standard() {
    let b = &light_11a_cbr();
    assert!(u(&b["packets"]) > 200, "{b}");
    // IEEE 802.11-2016 §17.4.3: TXTIME = T_PREAMBLE 16 + T_SIGNAL 4 + T_SYM 4 ×
    // ⌈(16 + 8 × LENGTH + 6) / N_DBPS⌉ µs, N_DBPS = 216 at 54 Mbit/s; the MPDU is a
    // 24-byte data header (no QoS), 8 of LLC/SNAP, the 1500-byte packet and the FCS.
    let psdu_bytes = 24 + 8 + 1500 + 4;
    let symbols = (16 + 8 * psdu_bytes + 6_u64).div_ceil(216);
    let txtime_ms = (16 + 4 + 4 * symbols) as f64 / 1000.0;
    assert_eq!(txtime_ms, 0.248);
    let air = stage(b, "air");
    for q in ["mean_ms", "p50_ms", "p99_ms"] {
        assert_eq!(air[q].as_f64().unwrap(), txtime_ms, "air {q}: {air}");
    }
    // Alone and unloaded: nothing queues, nothing is retried or held for order.
    for s in ["qdisc", "txq", "driver", "retries", "reorder"] {
        assert_eq!(stage(b, s)["p99_ms"].as_f64().unwrap(), 0.0, "{s}: {b}");
    }
}

#[test]
fn an_idle_medium_is_taken_at_once() {
    // IEEE 802.11-2016 §10.3.4.2: a frame that finds the medium idle for DIFS or
    // longer, with no backoff pending, goes out at once; at 1 Mbit/s of 1500-byte
    // packets (one every 12 ms, each 0.248 ms on the air) almost every packet does.
    let b = &light_11a_cbr();
    let access = stage(b, "access");
    assert_eq!(access["p50_ms"].as_f64().unwrap(), 0.0, "{access}");
    // DIFS = SIFS 16 + 2 × slot 9 = 34 µs: the mean stays far below one.
    assert!(access["mean_ms"].as_f64().unwrap() < 0.034, "{access}");
}

#[test]
fn a_wired_hop_is_its_serialisation_and_propagation() {
    // A ping from the station to the server once a second: the request's last stage
    // and the reply's first are the wired link's 1 ms plus the 84-byte packet's
    // serialisation at 1000 Mbit/s as an Ethernet frame (IEEE 802.3: 8 bytes of
    // preamble and SFD, 14 of header, 4 of FCS, 12 of interframe gap: 122 bytes,
    // 976 ns) on an idle wire.
    let v = run_json(&[
        "run",
        "bianchi-11a",
        "--json",
        "--set",
        "stations.count=1",
        "--set",
        "duration_s=5",
        "--set",
        "flows=[{kind=\"ping\",from=\"sta1\",to=\"server\",interval_ms=1000}]",
    ]);
    let f = flows(&v)[0];
    let wire_ms = 1.0 + (84.0 + 38.0) * 8.0 / 1000e6 * 1e3;
    let forward = &f["delay_budget"]["forward"];
    let back = &f["delay_budget"]["back"];
    assert!(
        u(&forward["packets"]) >= 4 && u(&back["packets"]) >= 4,
        "{f}"
    );
    let mean = |dir: &Value, s: &str| stage(dir, s)["mean_ms"].as_f64().unwrap();
    assert!(
        (mean(forward, "from_cell") - wire_ms).abs() < 1e-9,
        "{forward}"
    );
    assert!((mean(back, "to_cell") - wire_ms).abs() < 1e-9, "{back}");
    // The station has no host bus: nothing before its cell, nothing after.
    assert_eq!(mean(forward, "to_cell"), 0.0);
    assert_eq!(mean(back, "from_cell"), 0.0);
}

#[test]
fn a_packet_between_bsss_adds_both_cells() {
    // neighbours-call: an echo between flats crosses both BSSs' airs and both wired
    // links (5 ms each) through the junction. The wires count in `from_cell` (after
    // the first cell), both airs in `air`: each at least the air of one cell.
    let v = run_json(&["run", "neighbours-call", "--json", "--set", "duration_s=5"]);
    let echo = flows(&v)
        .into_iter()
        .find(|f| f["name"].as_str().unwrap().contains("b.sta1"))
        .expect("the echo between flats");
    for dir in ["forward", "back"] {
        let b = &echo["delay_budget"][dir];
        assert!(u(&b["packets"]) > 200, "{dir}: {b}");
        let mean = |s: &str| stage(b, s)["mean_ms"].as_f64().unwrap();
        let wires_ms = 2.0 * (5.0 + (172.0 + 38.0) * 8.0 / 1000e6 * 1e3);
        assert!(mean("from_cell") >= wires_ms - 1e-9, "{dir}: {b}");
        assert!(mean("from_cell") < wires_ms + 0.01, "{dir}: {b}");
    }
    // Against the same echo to the server, which crosses one air: two airs.
    let one = run_json(&[
        "run",
        "neighbours-call",
        "--json",
        "--set",
        "duration_s=5",
        "--set",
        "bss[0].flows=[{kind=\"udp_ping\",from=\"sta1\",to=\"server\"}]",
    ]);
    let near = flows(&one)
        .into_iter()
        .find(|f| f["kind"] == "udp_ping")
        .expect("the echo to the server");
    let air = |f: &Value| {
        stage(&f["delay_budget"]["forward"], "air")["mean_ms"]
            .as_f64()
            .unwrap()
    };
    let ratio = air(echo) / air(near);
    assert!(
        (1.9..2.1).contains(&ratio),
        "air across two BSSs / one: {ratio}"
    );
}
