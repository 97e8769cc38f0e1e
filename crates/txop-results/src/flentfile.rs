//! flent's data file (format version 4), from a run of one of flent's tests: the JSON
//! that `flent -i FILE` loads (`reference/flent-format.md`). Gzip it to `*.flent.gz`.
//!
//! - `x_values`: 0, 0.2 … over the whole run (delay + length + delay), on the run's
//!   series step (`Results::series_step_s`: 0.2 s, or a power-of-two multiple of it
//!   in runs longer than 409.6 s), which is also `STEP_SIZE`;
//! - `results`: per series one value per step (`null` where there is none): TCP flows
//!   in Mbit/s over the step, pings the RTT of the reply that arrived in the step;
//! - `raw_values`: every ping reply the results kept `{t, val, seq}` (all of them, or
//!   every `sample_stride`-th, `seq` counting every reply), every TCP step `{t, val}`;
//! - `metadata`: the keys flent requires (NAME, TITLE, HOST, LOCAL_HOST, LENGTH,
//!   STEP_SIZE) and the recommended ones (TIME, T0, TOTAL_LENGTH, HOSTS, …); TITLE
//!   (what flent's legends show for a file) and TEST_PARAMETERS (flent's
//!   `--test-parameter` pairs, which its GUI groups by) name what the run was.
//!
//! Time stamps count from a fixed T0 (2026-01-01T00:00:00Z), so that the same scenario
//! and seed give the same file byte for byte.

use crate::results::{FlowResult, Results};
use serde_json::{json, Map, Value};

/// The fixed start of every run: 2026-01-01T00:00:00Z.
pub const T0_UNIX: f64 = 1_767_225_600.0;
const T0_ISO: &str = "2026-01-01T00:00:00.000000Z";

/// The flent data of `results`, a run of flent test `test` (`length_s` of loaders),
/// titled `title`, with `parameters` as its TEST_PARAMETERS.
pub fn flent_data(
    results: &Results,
    test: &str,
    title: &str,
    length_s: f64,
    parameters: &std::collections::BTreeMap<String, String>,
) -> Value {
    let step = results.series_step_s;
    let n = (results.duration_s / step).round() as usize + 1;
    let x_values: Vec<f64> = (0..n).map(|i| round3(i as f64 * step)).collect();
    let mut series = Map::new();
    let mut raw = Map::new();
    let mut meta = Map::new();
    for f in results.flows.iter().filter(|f| !f.label.is_empty()) {
        if f.label == "VoIP" {
            voip(f, (n, step), &mut series, &mut raw, &mut meta);
            continue;
        }
        let (values, raws, units) = if f.kind == "tcp" {
            tcp_series(f, n, step)
        } else {
            ping_series(f, n, step)
        };
        series.insert(f.label.clone(), Value::Array(values));
        raw.insert(f.label.clone(), Value::Array(raws));
        meta.insert(f.label.clone(), json!({ "UNITS": units }));
    }
    json!({
        "version": 4,
        "x_values": x_values,
        "results": series,
        "raw_values": raw,
        "metadata": {
            "NAME": test,
            "TITLE": title,
            "HOST": "server",
            "HOSTS": ["server"],
            "LOCAL_HOST": "txop",
            "LENGTH": length_s,
            "TOTAL_LENGTH": results.duration_s,
            "STEP_SIZE": step,
            "TIME": T0_ISO,
            "T0": T0_ISO,
            "IP_VERSION": 4,
            "SERIES_META": meta,
            "NOTE": format!("simulated by txop, seed {}", results.seed),
            "TEST_PARAMETERS": parameters,
        },
    })
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// TCP: Mbit/s per step (`step` s) from the throughput series.
fn tcp_series(f: &FlowResult, n: usize, step: f64) -> (Vec<Value>, Vec<Value>, &'static str) {
    let mut values = Vec::with_capacity(n);
    let mut raws = Vec::new();
    for i in 0..n {
        match f.throughput_series_bps.get(i) {
            Some(&bps) => {
                let mbps = bps / 1e6;
                values.push(json!(mbps));
                raws.push(json!({ "t": T0_UNIX + (i + 1) as f64 * step, "val": mbps }));
            }
            None => values.push(Value::Null),
        }
    }
    (values, raws, "Mbits/s")
}

/// Pings: the RTT of the (kept) reply that arrived in each step of `step` s (the last
/// one if several).
fn ping_series(f: &FlowResult, n: usize, step: f64) -> (Vec<Value>, Vec<Value>, &'static str) {
    let mut values = vec![Value::Null; n];
    let mut raws = Vec::with_capacity(f.rtt_samples.len());
    for (k, &(t, rtt)) in f.rtt_samples.iter().enumerate() {
        let i = (t / step) as usize;
        if i < n {
            values[i] = json!(rtt);
        }
        let seq = k as u64 * f.sample_stride.max(1);
        raws.push(json!({ "t": T0_UNIX + t, "val": rtt, "seq": seq }));
    }
    (values, raws, "ms")
}

/// flent's voip test: one-way delay, its variation and the loss per step (`n` steps
/// of `step` s). The jitter is between consecutive kept replies.
fn voip(
    f: &FlowResult,
    (n, step): (usize, f64),
    series: &mut Map<String, Value>,
    raw: &mut Map<String, Value>,
    meta: &mut Map<String, Value>,
) {
    let mut delay = vec![Value::Null; n];
    let mut jitter = vec![Value::Null; n];
    let mut raws = Vec::new();
    let mut last: Option<f64> = None;
    let base = f
        .owd_samples
        .iter()
        .map(|s| s.1)
        .fold(f64::INFINITY, f64::min);
    let mut induced = vec![Value::Null; n];
    for &(t, fwd, _) in &f.owd_samples {
        let i = (t / step) as usize;
        if i < n {
            delay[i] = json!(fwd);
            induced[i] = json!(fwd - base);
            if let Some(prev) = last {
                jitter[i] = json!((fwd - prev).abs());
            }
        }
        last = Some(fwd);
        raws.push(json!({ "t": T0_UNIX + t, "val": fwd }));
    }
    let loss = f.echo_loss.unwrap_or(0.0) * 100.0;
    for (name, values, units) in [
        ("VoIP::delay", delay, "ms"),
        ("VoIP::jitter", jitter, "ms"),
        ("VoIP::induced_delay", induced, "ms"),
        ("VoIP::loss", vec![json!(loss); n], "%"),
    ] {
        series.insert(name.into(), Value::Array(values));
        meta.insert(name.into(), json!({ "UNITS": units }));
    }
    raw.insert("VoIP::delay".into(), Value::Array(raws));
}
