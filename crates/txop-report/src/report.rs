//! The human summary of a run.

use crate::scenario::Scenario;
use serde::Serialize;
use std::fmt::Write;
use txop_results::results::{flow_name, CodeResult};
use txop_results::{FlowResult, Results, Spread};

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

/// Beyond this many stations the summary shows the station groups (`groups`) instead
/// of a row per station, so that it fits a screen; results.json keeps every station.
pub const SCREEN_STATIONS: usize = 20;

/// Beyond this many flows the summary shows them grouped by kind, label and the groups
/// of their ends ([`flow_groups`]).
pub const SCREEN_FLOWS: usize = 40;

/// Groups shown in the grouped views; the rest are counted on one line.
const SCREEN_GROUPS: usize = 12;

/// The summary table printed after a run (also `summary.txt`).
pub fn summary(title: &str, r: &Results) -> String {
    let mut s = String::new();
    let grouped = r.stations.len() > SCREEN_STATIONS && !r.groups.is_empty();
    let groups = if grouped {
        format!(" in {} groups", r.groups.len())
    } else {
        String::new()
    };
    let _ = writeln!(
        s,
        "{title}: {} stations{groups}, {:.1} s simulated, seed {}",
        r.stations.len(),
        r.duration_s,
        r.seed
    );
    // Which kernel code ran in place of txop's, once per tree (issue 28).
    let mut codes: Vec<&CodeResult> = Vec::new();
    for c in r.kernel_code.iter().chain(
        r.stations
            .iter()
            .filter_map(|st| st.rate_control.as_ref()?.code.as_ref()),
    ) {
        if !codes.contains(&c) {
            codes.push(c);
        }
    }
    for c in codes {
        let _ = writeln!(
            s,
            "kernel code: {} from {} (Linux {}, fnv64 {})",
            c.unit, c.path, c.version, c.fnv64
        );
    }
    let w = if grouped {
        group_table(&mut s, r);
        RATE_COLUMN_CHARS
    } else {
        station_table(&mut s, r)
    };
    let _ = writeln!(
        s,
        "{:>7}  {:<w$} {:>10}   medium busy {:.1}%, Jain's index over airtime {:.3}",
        "total",
        "",
        mbps(r.total_throughput_bps),
        r.busy_fraction * 100.0,
        r.airtime_jain_index
    );
    if r.flows.len() > SCREEN_FLOWS {
        grouped_flow_table(&mut s, r);
    } else {
        flow_table(&mut s, r);
    }
    tcp_table(&mut s, r);
    budget_table(&mut s, r);
    let web: Vec<&FlowResult> = r
        .flows
        .iter()
        .filter(|f| !f.page_load_times_s.is_empty())
        .collect();
    // Page loads list every load: a few flows' worth, the rest in results.json.
    let shown = if r.flows.len() > SCREEN_FLOWS {
        3
    } else {
        web.len()
    };
    for f in web.iter().take(shown) {
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
    if web.len() > shown {
        let _ = writeln!(
            s,
            "\nweb page loads of {} more flows in results.json",
            web.len() - shown
        );
    }
    s
}

/// The station table's rate column, at least (characters).
const RATE_COLUMN_CHARS: usize = 20;

/// A row per station. The rate column is as wide as its longest label, at least
/// [`RATE_COLUMN_CHARS`] (an HE rate or a rate per direction is longer); returns its
/// width, for the total row below.
fn station_table(s: &mut String, r: &Results) -> usize {
    let w = r
        .stations
        .iter()
        .map(|st| st.rate.chars().count())
        .max()
        .unwrap_or(0)
        .max(RATE_COLUMN_CHARS);
    let _ = writeln!(
        s,
        "{:>7}  {:<w$} {:>10} {:>10} {:>10} {:>8} {:>10} {:>9} {:>8}",
        "station", "rate", "Mbit/s", "up", "down", "airtime", "collisions", "retries", "drops"
    );
    for st in &r.stations {
        let _ = writeln!(
            s,
            "{:>7}  {:<w$} {:>10} {:>10} {:>10} {:>7.1}% {:>10} {:>9} {:>8}",
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
    w
}

/// Three rows per station group: the spread across its stations (min, p10, median,
/// p90, max) of throughput, airtime share and latency (docs/results.md, "Station
/// groups").
fn group_table(s: &mut String, r: &Results) {
    let _ = writeln!(
        s,
        "{:<16} {:>8}  {:<10}{:>8}{:>8}{:>8}{:>8}{:>8}",
        "group", "stations", "", "min", "p10", "p50", "p90", "max"
    );
    let row = |s: &mut String, name: &str, n: &str, what: &str, v: [String; 5]| {
        let line = format!(
            "{name:<16} {n:>8}  {what:<10}{:>8}{:>8}{:>8}{:>8}{:>8}",
            v[0], v[1], v[2], v[3], v[4]
        );
        let _ = writeln!(s, "{}", line.trim_end());
    };
    let five = |x: &Spread, f: &dyn Fn(f64) -> String| [x.min, x.p10, x.p50, x.p90, x.max].map(f);
    for g in r.groups.iter().take(SCREEN_GROUPS) {
        let n = g.stations.len().to_string();
        row(s, &g.name, &n, "Mbit/s", five(&g.throughput_bps, &mbps));
        let pct = |v: f64| format!("{:.1}%", v * 100.0);
        row(s, "", "", "airtime", five(&g.airtime_share, &pct));
        if let Some(l) = &g.latency_ms {
            let what = format!("delay({})", g.latency_stations);
            let ms = |v: f64| format!("{v:.1}");
            row(s, "", "", &what, five(l, &ms));
        }
    }
    if r.groups.len() > SCREEN_GROUPS {
        let _ = writeln!(
            s,
            "… {} more groups in results.json",
            r.groups.len() - SCREEN_GROUPS
        );
    }
}

/// A row per flow.
fn flow_table(s: &mut String, r: &Results) {
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
}

/// The TCP senders (TCP and web flows): retransmitted segments, retransmission
/// timeouts (RTOs) and the median and p99 of the RTT samples the sender took
/// (`tcp_rtt_ms`), what `ss -ti` shows of a connection. A row per flow; beyond
/// [`SCREEN_FLOWS`] flows, one line of totals (every flow's in results.json).
fn tcp_table(s: &mut String, r: &Results) {
    let tcp: Vec<&FlowResult> = r.flows.iter().filter(|f| f.retransmits.is_some()).collect();
    if tcp.is_empty() {
        return;
    }
    let sum =
        |get: fn(&FlowResult) -> Option<u64>| -> u64 { tcp.iter().filter_map(|f| get(f)).sum() };
    if r.flows.len() > SCREEN_FLOWS {
        let _ = writeln!(
            s,
            "\nTCP: {} flows, {} segments retransmitted, {} timeouts (RTO); per flow in results.json",
            tcp.len(),
            sum(|f| f.retransmits),
            sum(|f| f.timeouts)
        );
        return;
    }
    let header = format!(
        "{:>5}  {:<9} {:>4} → {:<4} {:>11} {:>9} {:>9} {:>9}",
        "flow", "TCP", "src", "dst", "retransmits", "timeouts", "rtt p50", "rtt p99"
    );
    let _ = writeln!(s, "\n{header}");
    for f in &tcp {
        let rtt = f.tcp_rtt_ms;
        let line = format!(
            "{:>5}  {:<9} {:>4} → {:<4} {:>11} {:>9} {:>9} {:>9}",
            f.flow,
            f.kind,
            f.src,
            f.dst,
            f.retransmits.unwrap_or(0),
            f.timeouts.unwrap_or(0),
            ms(rtt.map(|l| l.p50)),
            ms(rtt.map(|l| l.p99)),
        );
        let _ = writeln!(s, "{}", line.trim_end());
    }
}

/// The summary's and `compare`'s columns of the delay budget: the wired hop and the
/// host bus before and after the cell are one, `wire/bus`.
const BUDGET_COLUMNS: [(&str, &[&str]); 8] = [
    ("wire/bus", &["to_cell", "from_cell"]),
    ("qdisc", &["qdisc"]),
    ("txq", &["txq"]),
    ("driver", &["driver"]),
    ("access", &["access"]),
    ("retries", &["retries"]),
    ("air", &["air"]),
    ("reorder", &["reorder"]),
];

/// A flow's mean time per packet in each of `BUDGET_COLUMNS` (ms), which add up to
/// its mean delay (percentiles would not); an echo flow's request and reply added,
/// which is its round trip. `None` for a flow that delivered nothing.
pub fn budget_means_ms(f: &FlowResult) -> Option<[(&'static str, f64); 8]> {
    budget_means_ms_of(&[f])
}

/// [`budget_means_ms`] over every packet of `flows` (a group of them): each stage's
/// time summed over the flows' packets, over their number, each way (for one flow,
/// exactly its own means). `None` if none of them delivered anything.
pub fn budget_means_ms_of(flows: &[&FlowResult]) -> Option<[(&'static str, f64); 8]> {
    // Each way: the packets, and each stage's time over them (ns), of the flows that
    // went that way; the reply only for echo flows, as their delay columns show.
    let way = |back: bool| -> Option<(u64, Vec<(&'static str, u64)>)> {
        let mut packets = 0;
        let mut sums: Vec<(&'static str, u64)> = Vec::new();
        for f in flows {
            let b = if back {
                f.delay_budget.back.as_ref().filter(|_| f.rtt_ms.is_some())
            } else {
                f.delay_budget.forward.as_ref()
            };
            let Some(b) = b.filter(|b| b.packets > 0) else {
                continue;
            };
            packets += b.packets;
            for st in &b.stages {
                match sums.iter_mut().find(|(name, _)| *name == st.stage) {
                    Some((_, sum)) => *sum += st.sum_ns,
                    None => sums.push((st.stage, st.sum_ns)),
                }
            }
        }
        (packets > 0).then_some((packets, sums))
    };
    let forward = way(false)?;
    let back = way(true);
    // As `DirectionBudget`'s `mean_ms` is worked out, so that one flow's are its own.
    let mean = |stage: &str| -> f64 {
        [Some(&forward), back.as_ref()]
            .into_iter()
            .flatten()
            .flat_map(|(packets, sums)| {
                sums.iter()
                    .filter(|(name, _)| *name == stage)
                    .map(|(_, sum)| *sum as f64 / *packets as f64 / 1e6)
            })
            .sum()
    };
    Some(BUDGET_COLUMNS.map(|(name, stages)| (name, stages.iter().map(|st| mean(st)).sum())))
}

/// Where each flow's delay goes (docs/results.md, "The delay budget"): its
/// [`budget_means_ms`], a row per flow that delivered something; beyond
/// [`SCREEN_FLOWS`] flows a row per group of flows ([`flow_groups`],
/// [`budget_means_ms_of`]: the mean over the group's packets; every flow's in
/// results.json).
fn budget_table(s: &mut String, r: &Results) {
    let grouped = r.flows.len() > SCREEN_FLOWS;
    let groups = if grouped { flow_groups(r) } else { Vec::new() };
    let rows: Vec<(String, [(&str, f64); 8])> = if grouped {
        groups
            .iter()
            .take(SCREEN_GROUPS * 2)
            .filter_map(|g| {
                let what = format!("{:>5}  {}", g.flows.len(), g.name);
                Some((what, budget_means_ms_of(&g.flows)?))
            })
            .collect()
    } else {
        r.flows
            .iter()
            .filter_map(|f| Some((format!("{:>5}  {:<9}", f.flow, f.kind), budget_means_ms(f)?)))
            .collect()
    };
    if rows.is_empty() {
        return;
    }
    let mut header = String::new();
    for (name, _) in BUDGET_COLUMNS {
        let _ = write!(header, "{name:>8} ");
    }
    if grouped {
        let _ = writeln!(
            s,
            "\nwhere the delay goes, by group of flows (ms per packet: the mean over its packets):"
        );
        let _ = writeln!(s, "{header} flows  what");
    } else {
        let _ = writeln!(
            s,
            "\nwhere the delay goes, ms per packet (the mean; an echo's request and reply added):"
        );
        let _ = writeln!(s, "{:>5}  {:<9} {}", "flow", "kind", header.trim_end());
    }
    for (what, means) in rows {
        let mut cols = String::new();
        for (_, m) in means {
            let _ = write!(cols, "{m:>8.2} ");
        }
        if grouped {
            let _ = writeln!(s, "{cols}{what}");
        } else {
            let _ = writeln!(s, "{what} {}", cols.trim_end());
        }
    }
    if grouped && groups.len() > SCREEN_GROUPS * 2 {
        let _ = writeln!(
            s,
            "… {} more groups of flows in results.json",
            groups.len() - SCREEN_GROUPS * 2
        );
    }
}

/// Flows of one kind and label between the same groups of ends.
pub struct FlowGroup<'a> {
    /// The flows' label (or kind in words) and their ends, a station given by its
    /// group: `probe (AP → list[0])`.
    pub name: String,
    pub flows: Vec<&'a FlowResult>,
}

/// `r`'s flows grouped by kind, label and the groups of their ends (a station's end is
/// its group's name; the server, the AP and another BSS's stations stay as they are),
/// in order of first appearance.
pub fn flow_groups(r: &Results) -> Vec<FlowGroup<'_>> {
    let group_of = |end: &str| -> String {
        txop_results::results::station_of(end)
            .and_then(|n| r.groups.iter().find(|g| g.stations.contains(&n)))
            .map_or_else(|| end.to_string(), |g| g.name.clone())
    };
    let mut out: Vec<(String, FlowGroup<'_>)> = Vec::new();
    for f in &r.flows {
        let (src, dst) = (group_of(&f.src), group_of(&f.dst));
        let label = [&f.src, &f.dst]
            .into_iter()
            .find(|end| end.starts_with("sta"))
            .map_or_else(|| f.label.clone(), |sta| label_without(&f.label, sta));
        let name = flow_name(&f.kind, &label, &src, &dst);
        let key = format!("{}\u{0}{name}", f.kind);
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some((_, g)) => g.flows.push(f),
            None => out.push((
                key,
                FlowGroup {
                    name,
                    flows: vec![f],
                },
            )),
        }
    }
    out.into_iter().map(|(_, g)| g).collect()
}

/// A flent label without the station it names (rtt_fair's `TCP upload BE15 sta15` →
/// `TCP upload BE`), so that every station's flow of one series is one group.
fn label_without(label: &str, sta: &str) -> String {
    let number = sta.trim_start_matches("sta");
    if !label.split(' ').any(|t| t == sta) {
        return label.to_string();
    }
    label
        .split(' ')
        .filter(|t| *t != sta)
        .map(|t| {
            t.strip_suffix(number)
                .filter(|r| !r.is_empty())
                .unwrap_or(t)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A row per group of flows ([`flow_groups`]): how many, their total throughput, and
/// the spread across them of their median delay (RTT for echo flows).
fn grouped_flow_table(s: &mut String, r: &Results) {
    let groups = flow_groups(r);
    let _ = writeln!(
        s,
        "\n{} flows in {} groups; delay = each flow's p50 (RTT for pings), ms",
        r.flows.len(),
        groups.len()
    );
    let _ = writeln!(
        s,
        "{:>5} {:>9} {:>8} {:>8} {:>8}  what",
        "flows", "Mbit/s", "delay10", "delay50", "delay90"
    );
    for g in groups.iter().take(SCREEN_GROUPS * 2) {
        let measurement = g.flows.iter().all(|f| f.is_measurement());
        let rate = if measurement {
            "-".to_string()
        } else {
            mbps(g.flows.iter().map(|f| f.throughput_bps).sum())
        };
        let delays: Vec<f64> = g
            .flows
            .iter()
            .filter_map(|f| f.delay_ms().map(|d| d.p50))
            .collect();
        let spread = Spread::of(&delays);
        let ms = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v:.1}"));
        let _ = writeln!(
            s,
            "{:>5} {:>9} {:>8} {:>8} {:>8}  {}",
            g.flows.len(),
            rate,
            ms(spread.map(|x| x.p10)),
            ms(spread.map(|x| x.p50)),
            ms(spread.map(|x| x.p90)),
            g.name
        );
    }
    if groups.len() > SCREEN_GROUPS * 2 {
        let _ = writeln!(
            s,
            "… {} more groups of flows in results.json",
            groups.len() - SCREEN_GROUPS * 2
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::runner::{prepare, simulate};

    /// Lines `text` takes on a terminal of `width` columns (a longer line wraps).
    fn screen_lines(text: &str, width: usize) -> usize {
        text.lines()
            .map(|l| l.chars().count().div_ceil(width).max(1))
            .sum()
    }

    /// Beyond a screenful of flows the summary splits each group of flows' delay: the
    /// stages' means over the group's packets add up to the group's mean delay,
    /// measured apart from the stages (each flow's `delay_sum_ns` over its packets; a
    /// ping's request and reply), and a group of one flow is that flow's own split.
    #[test]
    fn a_group_of_flows_splits_its_mean_delay() {
        let sets = [
            ("stations.count".to_string(), "100".to_string()),
            ("traffic.length_s".to_string(), "0.3".to_string()),
        ];
        let p = prepare("e3-rtt-fair-up-n", &sets, None).unwrap();
        let r = simulate(&p, &|_| {}).unwrap();
        assert!(r.flows.len() > super::SCREEN_FLOWS);
        let groups = super::flow_groups(&r);
        assert_eq!(groups.len(), 2);
        for g in &groups {
            let means = super::budget_means_ms_of(&g.flows).expect("delivered");
            let way = |back: bool| -> Option<f64> {
                let b: Vec<&txop_results::results::DirectionBudget> = g
                    .flows
                    .iter()
                    .filter_map(|f| {
                        if back {
                            f.delay_budget.back.as_ref().filter(|_| f.rtt_ms.is_some())
                        } else {
                            f.delay_budget.forward.as_ref()
                        }
                    })
                    .filter(|b| b.packets > 0)
                    .collect();
                let packets: u64 = b.iter().map(|b| b.packets).sum();
                let delay: u64 = b.iter().map(|b| b.delay_sum_ns).sum();
                (packets > 0).then(|| delay as f64 / packets as f64 / 1e6)
            };
            let mean_delay = way(false).unwrap() + way(true).unwrap_or(0.0);
            let split: f64 = means.iter().map(|(_, m)| m).sum();
            assert!(
                (split - mean_delay).abs() <= 1e-6 * mean_delay.max(1.0),
                "{}: stages {split} ms, delay {mean_delay} ms",
                g.name
            );
            // One flow: the means results.json gives its stages, request and reply.
            let one = g.flows[0];
            let own = super::budget_means_ms(one).expect("delivered");
            for (column, stages) in super::BUDGET_COLUMNS {
                let expected: f64 = [
                    one.delay_budget.forward.as_ref(),
                    one.delay_budget
                        .back
                        .as_ref()
                        .filter(|_| one.rtt_ms.is_some()),
                ]
                .into_iter()
                .flatten()
                .flat_map(|b| b.stages.iter().filter(|st| stages.contains(&st.stage)))
                .map(|st| st.mean_ms)
                .sum();
                let got = own.iter().find(|(c, _)| *c == column).unwrap().1;
                assert!(
                    (got - expected).abs() <= 1e-12,
                    "{column}: {got} vs {expected}"
                );
            }
        }
        let text = super::summary("e3-rtt-fair-up-n", &r);
        assert!(
            text.contains("where the delay goes, by group of flows"),
            "{text}"
        );
        assert!(
            text.contains("  100  Ping (ms) ICMP (stations → server)"),
            "{text}"
        );
    }

    /// At 30, 100 and 1000 stations (issue 27: a 30-station compare printed 245 lines)
    /// the summary fits 60 lines of an 80-column terminal: the stations by group, the
    /// flows by group when there are more than 40. results.json keeps every station, and
    /// the groups hold every station once. A run of few stations keeps its row per
    /// station.
    #[test]
    fn the_summary_fits_a_screen_at_any_station_count() {
        type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, usize);
        let cases: [Case<'_>; 5] = [
            ("default", vec![("stations.list[0].count", "29")], 30),
            ("default", vec![("stations.list[0].count", "99")], 100),
            ("default", vec![("stations.list[0].count", "999")], 1000),
            // 2 flows a station: 200 flows, grouped.
            (
                "e3-rtt-fair-up-n",
                vec![("stations.count", "100"), ("traffic.length_s", "0.3")],
                100,
            ),
            ("e2-100-stations", vec![("traffic.length_s", "0.3")], 100),
        ];
        for (name, sets, n) in cases {
            let mut sets: Vec<(String, String)> = sets
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            if name == "default" {
                sets.push(("duration_s".into(), "0.2".into()));
            }
            let p = prepare(name, &sets, None).unwrap();
            let r = simulate(&p, &|_| {}).unwrap();
            assert_eq!(r.stations.len(), n, "{name}");
            let mut members: Vec<u16> = r.groups.iter().flat_map(|g| g.stations.clone()).collect();
            members.sort_unstable();
            assert_eq!(members, (1..=n as u16).collect::<Vec<_>>(), "{name}");
            let text = super::summary(name, &r);
            let lines = screen_lines(&text, 80);
            assert!(lines <= 60, "{name} at {n} stations: {lines} lines\n{text}");
            assert!(text.contains(&format!("{n} stations in ")), "{text}");
            if name == "e3-rtt-fair-up-n" {
                // rtt_fair names each station's series (`TCP upload BE15 sta15`): one
                // group per series all the same, not one per station.
                let groups: Vec<(String, usize)> = super::flow_groups(&r)
                    .iter()
                    .map(|g| (g.name.clone(), g.flows.len()))
                    .collect();
                assert_eq!(
                    groups,
                    [
                        ("TCP upload BE (stations → server)".to_string(), 100),
                        ("Ping (ms) ICMP (stations → server)".to_string(), 100)
                    ]
                );
            }
        }
        // Few stations: a row each, as before.
        let p = prepare("default", &[("duration_s".into(), "0.2".into())], None).unwrap();
        let r = simulate(&p, &|_| {}).unwrap();
        let text = super::summary("default", &r);
        assert!(
            text.lines()
                .nth(1)
                .unwrap()
                .trim_start()
                .starts_with("station"),
            "{text}"
        );
    }

    /// Every station row and the total row put Mbit/s in the header's column, also
    /// when a rate label is longer than the column's 20 characters (an HE rate:
    /// `HE20 MCS7 1SS GI0.8 2xLTF`, 25).
    #[test]
    fn long_rate_labels_keep_the_columns_aligned() {
        let sets = [
            ("duration_s".to_string(), "0.2".to_string()),
            ("phy.standard".to_string(), "ax".to_string()),
        ];
        let p = prepare("default", &sets, None).unwrap();
        let r = simulate(&p, &|_| {}).unwrap();
        let longest = r.stations.iter().map(|s| s.rate.chars().count()).max();
        assert!(longest > Some(20), "{longest:?}");
        let text = super::summary("default", &r);
        let lines: Vec<&str> = text.lines().collect();
        let header = lines.iter().position(|l| l.contains("Mbit/s")).unwrap();
        let end_of = |l: &str, what: &str| l.find(what).map(|i| i + what.len());
        let column_end = end_of(lines[header], "Mbit/s").unwrap();
        let rows = &lines[header + 1..header + 1 + r.stations.len() + 1];
        for row in rows {
            // The Mbit/s figure is the first number after the rate label, right-aligned
            // to the header's column.
            let figure_end = row[..column_end].trim_end().len();
            assert_eq!(figure_end, column_end, "{row:?}\n{text}");
            assert!(
                row[..column_end].ends_with(|c: char| c.is_ascii_digit()),
                "{row:?}"
            );
        }
        assert!(rows.last().unwrap().trim_start().starts_with("total"));
    }

    /// A group's spread is across its own stations: `default`'s three MCS 7 stations
    /// (`list[0]`) and its MCS 0 one (`list[1]`), each figure one station's value from
    /// `stations`, the latency the largest median delay of the station's flows.
    #[test]
    fn groups_spread_their_own_stations() {
        let p = prepare("default", &[("duration_s".into(), "1".into())], None).unwrap();
        let r = simulate(&p, &|_| {}).unwrap();
        let names: Vec<&str> = r.groups.iter().map(|g| g.name.as_str()).collect();
        assert_eq!(names, ["list[0]", "list[1]"]);
        assert_eq!(r.groups[0].stations, [1, 2, 3]);
        assert_eq!(r.groups[1].stations, [4]);
        let mut fast: Vec<f64> = r.stations[..3].iter().map(|s| s.throughput_bps).collect();
        fast.sort_by(f64::total_cmp);
        let t = r.groups[0].throughput_bps;
        assert_eq!((t.min, t.p50, t.max), (fast[0], fast[1], fast[2]));
        let slow = &r.groups[1];
        assert_eq!(slow.airtime_share.p50, r.stations[3].airtime_share);
        // sta4's flows: the load (one-way ~250 ms) and the probe (~50 ms).
        let worst = r
            .flows
            .iter()
            .filter(|f| f.dst == "sta4")
            .map(|f| f.latency_ms.unwrap().p50)
            .fold(0.0, f64::max);
        assert_eq!(slow.latency_ms.unwrap().p50, worst);
        assert_eq!(slow.latency_stations, 1);
    }

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
