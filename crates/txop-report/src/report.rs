//! The human summary of a run.

use crate::scenario::Scenario;
use serde::Serialize;
use std::fmt::Write;
use txop_results::Results;

/// The `--json` object: the run's results plus what produced them; with `resolved`,
/// results.json.
#[derive(Serialize)]
pub struct JsonReport<'a> {
    pub txop_version: &'a str,
    pub scenario: &'a str,
    /// The scenario as resolved (defaults filled in), in results.json.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved: Option<&'a Scenario>,
    #[serde(flatten)]
    pub results: &'a Results,
}

fn mbps(bps: f64) -> String {
    format!("{:.2}", bps / 1e6)
}

/// A latency in ms for the table, or "-" when there is none (no packet delivered).
fn ms(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.1}ms"))
}

/// The summary table printed after a run (also `summary.txt`).
pub fn summary(title: &str, r: &Results) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{title}: {} stations, {:.1} s simulated, seed {}",
        r.stations.len(),
        r.duration_s,
        r.seed
    );
    let _ = writeln!(
        s,
        "{:>7}  {:<20} {:>10} {:>10} {:>10} {:>8} {:>10} {:>9} {:>8}",
        "station", "rate", "Mbit/s", "up", "down", "airtime", "collisions", "retries", "drops"
    );
    for st in &r.stations {
        let _ = writeln!(
            s,
            "{:>7}  {:<20} {:>10} {:>10} {:>10} {:>7.1}% {:>10} {:>9} {:>8}",
            st.station,
            st.rate,
            mbps(st.throughput_bps),
            mbps(st.uplink_bps),
            mbps(st.downlink_bps),
            st.airtime_share * 100.0,
            st.collisions,
            st.mpdu_retries,
            st.dropped_queue_full + st.dropped_retry_limit + st.dropped_aqm
        );
    }
    let _ = writeln!(
        s,
        "{:>7}  {:<20} {:>10}   medium busy {:.1}%, Jain's index over airtime {:.3}",
        "total",
        "",
        mbps(r.total_throughput_bps),
        r.busy_fraction * 100.0,
        r.airtime_jain_index
    );
    if r.flows
        .iter()
        .any(|f| f.latency_ms.is_some() || f.rtt_ms.is_some())
    {
        // flent's series names, where the traffic has them (the flent tests).
        let series = if r.flows.iter().any(|f| !f.label.is_empty()) {
            "series"
        } else {
            ""
        };
        let header = format!(
            "{:>5}  {:<9} {:>4} → {:<4} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9}  {}",
            "flow",
            "kind",
            "src",
            "dst",
            "Mbit/s",
            "lat p50",
            "lat p99",
            "drv p50",
            "drops",
            "aqm",
            series
        );
        let _ = writeln!(s, "\n{}", header.trim_end());
        for f in &r.flows {
            // Echo flows report round-trip times, the others one-way delays; the bytes
            // of echo flows and probes are no load, so their Mbit/s is "-". A flow that delivered
            // nothing has no latency: "-", not a number (docs/results.md, "Flow kinds").
            let lat = f.delay_ms();
            let rate = if f.is_measurement() {
                "-".to_string()
            } else {
                mbps(f.throughput_bps)
            };
            let line = format!(
                "{:>5}  {:<9} {:>4} → {:<4} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9}  {}",
                f.flow,
                f.kind,
                f.src,
                f.dst,
                rate,
                ms(lat.map(|l| l.p50)),
                ms(lat.map(|l| l.p99)),
                ms(f.driver_latency_ms.map(|l| l.p50)),
                f.dropped_packets,
                f.dropped_aqm,
                f.label
            );
            let _ = writeln!(s, "{}", line.trim_end());
        }
    }
    for f in r.flows.iter().filter(|f| !f.page_load_times_s.is_empty()) {
        let times: Vec<String> = f
            .page_load_times_s
            .iter()
            .map(|t| format!("{t:.2} s"))
            .collect();
        // A long run keeps every `sample_stride`-th load (docs/results.md).
        let which = if f.sample_stride > 1 {
            format!(" (one in {} kept)", f.sample_stride)
        } else {
            String::new()
        };
        let _ = writeln!(
            s,
            "\nweb page loads by {}{which}: {}",
            f.src,
            times.join(", ")
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use crate::runner::{prepare, simulate};

    /// A page loaded ~2600 times keeps one load in 2 (docs/results.md, "Long runs"):
    /// the summary lists those and says so.
    #[test]
    fn thinned_page_loads_say_so() {
        let sets = [
            (
                "traffic.web",
                "{objects_bytes=[1000],repeat_after_s=0.01,start_s=0,connections=1}",
            ),
            ("traffic.rate_mbps", "1"),
            ("duration_s", "40"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()));
        let p = prepare("default", &sets, None).unwrap();
        let r = simulate(&p, &|_| {}).unwrap();
        let web = r.flows.iter().find(|f| f.kind == "web").unwrap();
        assert_eq!(web.sample_stride, 2);
        let text = super::summary("t", &r);
        let line = text
            .lines()
            .find(|l| l.starts_with("web page loads"))
            .unwrap();
        let times = line
            .strip_prefix("web page loads by sta1 (one in 2 kept): ")
            .unwrap();
        assert_eq!(times.split(", ").count(), web.page_load_times_s.len());
    }
}
