//! `txop compare`: one scenario run under several settings, summarised side by side.
//!
//! Variants come from `--stack A --stack B …` and `--vary KEY=V1,V2,…` (any scenario
//! key, as `--set` takes it); several of them multiply (every stack with every value).

use crate::report;
use crate::scenario::Scenario;
use std::fmt::Write;
use txop_results::results::{station_of, FlowResult, LatencySummary};
use txop_results::Results;
use txop_results::Spread;

/// One setting of the comparison: a label for tables and legends, and the `--set`
/// overrides that make it.
#[derive(Clone, Debug, PartialEq)]
pub struct Variant {
    pub label: String,
    pub sets: Vec<(String, String)>,
}

/// The most runs one comparison makes: 1000. Every run's results are kept for the
/// table, the plots and results.json (some MB each at 10 s), and 1000 columns are
/// already far past a readable table; larger sweeps are a loop over `txop run`.
pub const MAX_RUNS: usize = 1000;

/// The variants named by `--stack` and `--vary`, in command-line order (the first
/// option varies slowest). At least two are needed for a comparison, at most
/// [`MAX_RUNS`]; a key may be varied once (`--stack` is `stack`).
pub fn variants(stacks: &[String], vary: &[String]) -> Result<Vec<Variant>, String> {
    let mut axes: Vec<(String, Vec<String>)> = Vec::new();
    if !stacks.is_empty() {
        axes.push(("stack".into(), stacks.to_vec()));
    }
    for v in vary {
        let Some((key, values)) = v.split_once('=') else {
            return Err(format!("--vary {v}: expected KEY=V1,V2,…"));
        };
        let values: Vec<String> = values
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        let key = key.trim();
        if key.is_empty() || values.is_empty() {
            return Err(format!("--vary {v}: expected KEY=V1,V2,…"));
        }
        if axes.iter().any(|(k, _)| k == key) {
            let how = if key == "stack" {
                "give every stack once, as --stack NAME or in one --vary stack=A,B"
            } else {
                "give all its values in one --vary KEY=V1,V2,…"
            };
            return Err(format!("--vary {key}: the key is varied twice; {how}"));
        }
        axes.push((key.to_string(), values));
    }
    let runs = axes
        .iter()
        .try_fold(1usize, |n, (_, values)| n.checked_mul(values.len()))
        .filter(|&n| n <= MAX_RUNS);
    if runs.is_none() {
        let sizes: Vec<String> = axes.iter().map(|(_, v)| v.len().to_string()).collect();
        let product = axes.iter().map(|(_, v)| v.len() as f64).product::<f64>();
        return Err(format!(
            "compare: {} = {product} runs; at most {MAX_RUNS} (vary fewer values, or loop over `txop run`)",
            sizes.join(" × ")
        ));
    }
    let mut out = vec![Variant {
        label: String::new(),
        sets: Vec::new(),
    }];
    for (key, values) in &axes {
        let mut next = Vec::with_capacity(out.len() * values.len());
        for base in &out {
            for value in values {
                let mut v = base.clone();
                let part = if key == "stack" {
                    value.clone()
                } else {
                    format!("{key}={value}")
                };
                if !v.label.is_empty() {
                    v.label.push_str(", ");
                }
                v.label.push_str(&part);
                v.sets.push((key.clone(), value.clone()));
                next.push(v);
            }
        }
        out = next;
    }
    if out.len() < 2 {
        return Err(
            "compare needs at least two settings: --stack A --stack B, or --vary KEY=V1,V2".into(),
        );
    }
    let mut seen = std::collections::BTreeSet::new();
    if let Some(dup) = out.iter().find(|v| !seen.insert(v.label.clone())) {
        return Err(format!("`{}` is given twice", dup.label));
    }
    Ok(out)
}

/// A variant's settings as they apply to `scenario` when it has several BSSs
/// (`[[bss]]`): a setting compared holds for the whole run, so a key that a `[[bss]]`
/// entry gives itself (which would win over the top level's, as `--set` leaves it) is
/// set in that entry too, and at the top level only if some entry inherits it from
/// there. `txop compare apartment-block --stack linux-4.9` runs every flat on 4.9;
/// `--vary bss[0].stack=…` varies one BSS. Without `[[bss]]`, or for a key no entry
/// gives, the settings are returned as they are.
pub fn settings_for_bsss(scenario: &Scenario, sets: &[(String, String)]) -> Vec<(String, String)> {
    let mut out = Vec::with_capacity(sets.len());
    for (key, value) in sets {
        if !scenario.every_bss_gives(key) {
            out.push((key.clone(), value.clone()));
        }
        out.extend(
            scenario
                .bss_giving(key)
                .iter()
                .map(|i| (format!("bss[{i}].{key}"), value.clone())),
        );
    }
    out
}

/// A file-name-safe form of a variant label (`linux-6.16`, `stations.count-4`).
pub fn slug(label: &str) -> String {
    let mut s = String::with_capacity(label.len());
    for c in label.chars() {
        match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '.' | '-' | '_' => s.push(c),
            '=' => s.push('-'),
            _ => {
                if !s.ends_with('_') {
                    s.push('_')
                }
            }
        }
    }
    s.trim_matches('_').to_string()
}

/// One row of the side-by-side table: a name and one cell per run.
struct Row {
    name: String,
    cells: Vec<String>,
}

/// A flow's row name: its index and [`FlowResult::name`] (`flow 4 probe (AP → sta1)`).
fn flow_name(f: &FlowResult) -> String {
    format!("flow {} {}", f.flow, f.name)
}

/// The latency a flow reports: round-trip time for echo flows, one-way otherwise.
fn flow_latency(f: &FlowResult) -> Option<(&'static str, LatencySummary)> {
    let which = if f.is_echo() { "RTT" } else { "delay" };
    f.delay_ms().map(|l| (which, l))
}

/// The comparison table: one column per run, one row per metric. Flows are matched
/// by position and name; a flow one run lacks shows `—`.
pub fn table(name: &str, runs: &[(&str, &Results)]) -> String {
    table_of(name, "settings compared", runs)
}

/// [`table`] with its own words for what the columns are (`"BSSs side by side"`).
pub fn table_of(name: &str, columns: &str, runs: &[(&str, &Results)]) -> String {
    let n = runs.len();
    let mut rows: Vec<Row> = Vec::new();
    let mut row = |name: String, f: &dyn Fn(&Results) -> Option<String>| {
        let cells: Vec<String> = runs
            .iter()
            .map(|(_, r)| f(r).unwrap_or_else(|| "—".into()))
            .collect();
        if cells.iter().any(|c| c != "—") {
            rows.push(Row { name, cells });
        }
    };
    row("total Mbit/s".into(), &|r| {
        Some(format!("{:.2}", r.total_throughput_bps / 1e6))
    });
    row("medium busy".into(), &|r| {
        Some(format!("{:.1}%", r.busy_fraction * 100.0))
    });
    row("Jain's index (airtime)".into(), &|r| {
        Some(format!("{:.3}", r.airtime_jain_index))
    });
    let stations = runs
        .iter()
        .map(|(_, r)| r.stations.len())
        .max()
        .unwrap_or(0);
    // Beyond a screenful of stations, their groups' spreads instead of a row each (as
    // the run's summary, `report::SCREEN_STATIONS`).
    let grouped =
        stations > report::SCREEN_STATIONS && runs.iter().all(|(_, r)| !r.groups.is_empty());
    let mut group_names: Vec<String> = Vec::new();
    if grouped {
        for g in runs.iter().flat_map(|(_, r)| &r.groups) {
            if !group_names.contains(&g.name) {
                group_names.push(g.name.clone());
            }
        }
    }
    for name in &group_names {
        let g = |r: &Results| r.groups.iter().find(|g| g.name == *name).cloned();
        let spread = |x: Spread, f: &dyn Fn(f64) -> String| {
            format!("{} [{}–{}]", f(x.p50), f(x.p10), f(x.p90))
        };
        row(format!("group {name}: stations"), &|r| {
            g(r).map(|g| g.stations.len().to_string())
        });
        row(format!("group {name}: Mbit/s p50 [p10–p90]"), &|r| {
            g(r).map(|g| spread(g.throughput_bps, &|v| format!("{:.2}", v / 1e6)))
        });
        row(format!("group {name}: airtime p50 [p10–p90]"), &|r| {
            g(r).map(|g| spread(g.airtime_share, &|v| format!("{:.1}%", v * 100.0)))
        });
        row(format!("group {name}: delay ms p50 [p10–p90]"), &|r| {
            g(r).and_then(|g| g.latency_ms)
                .map(|l| spread(l, &|v| format!("{v:.1}")))
        });
        // Where the delay of the flows to and from the group's stations goes, over all
        // their packets.
        row(format!("group {name}: delay mostly in, ms"), &|r| {
            let g = g(r)?;
            let flows: Vec<&FlowResult> = r
                .flows
                .iter()
                .filter(|f| {
                    [&f.src, &f.dst]
                        .into_iter()
                        .any(|end| station_of(end).is_some_and(|n| g.stations.contains(&n)))
                })
                .collect();
            report::budget_means_ms_of(&flows).map(largest_stages)
        });
    }
    let stations = if grouped { 0 } else { stations };
    for i in 0..stations {
        let st = move |r: &Results| r.stations.get(i).cloned();
        let id = runs
            .iter()
            .find_map(|(_, r)| r.stations.get(i).map(|s| s.station))
            .unwrap_or(i as u16 + 1);
        row(format!("sta{id} Mbit/s"), &|r| {
            st(r).map(|s| format!("{:.2}", s.throughput_bps / 1e6))
        });
        row(format!("sta{id} airtime"), &|r| {
            st(r).map(|s| format!("{:.1}%", s.airtime_share * 100.0))
        });
    }
    let flows = runs.iter().map(|(_, r)| r.flows.len()).max().unwrap_or(0);
    if flows > report::SCREEN_FLOWS {
        let mut names: Vec<String> = Vec::new();
        for (_, r) in runs {
            for g in report::flow_groups(r) {
                if !names.contains(&g.name) {
                    names.push(g.name);
                }
            }
        }
        for name in &names {
            let members = |r: &Results| -> Option<Vec<FlowResult>> {
                report::flow_groups(r)
                    .into_iter()
                    .find(|g| g.name == *name)
                    .map(|g| g.flows.into_iter().cloned().collect())
            };
            row(format!("{name}: flows"), &|r| {
                members(r).map(|f| f.len().to_string())
            });
            row(
                format!("{name}: delay p50 ms, p50 [p10–p90] of flows"),
                &|r| {
                    let delays: Vec<f64> = members(r)?
                        .iter()
                        .filter_map(|f| f.delay_ms().map(|d| d.p50))
                        .collect();
                    Spread::of(&delays).map(|x| format!("{:.1} [{:.1}–{:.1}]", x.p50, x.p10, x.p90))
                },
            );
            row(format!("{name}: delay mostly in, ms"), &|r| {
                let flows = members(r)?;
                report::budget_means_ms_of(&flows.iter().collect::<Vec<_>>()).map(largest_stages)
            });
            row(format!("{name}: Mbit/s total"), &|r| {
                let f = members(r)?;
                (!f.iter().all(|f| f.is_measurement())).then(|| {
                    format!(
                        "{:.2}",
                        f.iter().map(|f| f.throughput_bps).sum::<f64>() / 1e6
                    )
                })
            });
        }
    }
    let flows = if flows > report::SCREEN_FLOWS {
        0
    } else {
        flows
    };
    for i in 0..flows {
        let Some(first) = runs.iter().find_map(|(_, r)| r.flows.get(i)) else {
            continue;
        };
        let fname = flow_name(first);
        let same = |r: &Results| r.flows.get(i).filter(|f| flow_name(f) == fname).cloned();
        let has_latency = flow_latency(first).is_some();
        if has_latency {
            let which = flow_latency(first).map_or("", |(w, _)| w);
            row(format!("{fname} {which} p50 ms"), &|r| {
                same(r).and_then(|f| flow_latency(&f).map(|(_, l)| format!("{:.1}", l.p50)))
            });
            row(format!("{fname} {which} p99 ms"), &|r| {
                same(r).and_then(|f| flow_latency(&f).map(|(_, l)| format!("{:.1}", l.p99)))
            });
            // Where that delay goes: its three largest stages by mean (docs/results.md,
            // "The delay budget").
            row(format!("{fname} delay mostly in, ms"), &|r| {
                report::budget_means_ms(&same(r)?).map(largest_stages)
            });
        }
        if !first.is_measurement() {
            row(format!("{fname} Mbit/s"), &|r| {
                same(r).map(|f| format!("{:.2}", f.throughput_bps / 1e6))
            });
        }
        if first.kind == "web" {
            row(format!("{fname} page load mean s"), &|r| {
                same(r).and_then(|f| {
                    let t = &f.page_load_times_s;
                    (!t.is_empty())
                        .then(|| format!("{:.2}", t.iter().sum::<f64>() / t.len() as f64))
                })
            });
        }
        if first.retransmits.is_some() {
            row(format!("{fname} retransmits"), &|r| {
                same(r).and_then(|f| f.retransmits.map(|x| x.to_string()))
            });
            row(format!("{fname} timeouts"), &|r| {
                same(r).and_then(|f| f.timeouts.map(|x| x.to_string()))
            });
        }
    }
    let name_w = rows
        .iter()
        .map(|r| r.name.chars().count())
        .max()
        .unwrap_or(0);
    let widths: Vec<usize> = (0..n)
        .map(|j| {
            rows.iter()
                .map(|r| r.cells[j].chars().count())
                .chain(std::iter::once(runs[j].0.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut s = String::new();
    // What the runs share, or (when a column varies it) its span.
    let mut seeds: Vec<u64> = runs.iter().map(|(_, r)| r.seed).collect();
    seeds.sort_unstable();
    seeds.dedup();
    let seed = match seeds.as_slice() {
        [] => "seed 0".to_string(),
        [one] => format!("seed {one}"),
        few if few.len() <= 5 => {
            let list: Vec<String> = few.iter().map(u64::to_string).collect();
            format!("seeds {}", list.join(", "))
        }
        [lo, .., hi] => format!("{} seeds from {lo} to {hi}", seeds.len()),
    };
    let durations: Vec<f64> = runs.iter().map(|(_, r)| r.duration_s).collect();
    let (lo, hi) = durations
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &d| {
            (a.min(d), b.max(d))
        });
    let simulated = if durations.is_empty() {
        "0.0 s simulated each".to_string()
    } else if lo == hi {
        format!("{lo:.1} s simulated each")
    } else {
        format!("{lo:.1}–{hi:.1} s simulated")
    };
    let _ = writeln!(s, "{name}: {n} {columns}, {simulated}, {seed}");
    let pad = |text: &str, w: usize| format!("{}{text}", " ".repeat(w - text.chars().count()));
    let _ = write!(s, "{}", " ".repeat(name_w));
    for (j, (label, _)) in runs.iter().enumerate() {
        let _ = write!(s, "  {}", pad(label, widths[j]));
    }
    s.push('\n');
    for r in &rows {
        let _ = write!(
            s,
            "{}{}",
            r.name,
            " ".repeat(name_w - r.name.chars().count())
        );
        for (j, c) in r.cells.iter().enumerate() {
            let _ = write!(s, "  {}", pad(c, widths[j]));
        }
        s.push('\n');
    }
    s
}

/// The three stages that hold most of a delay, by mean: `driver 185.7, txq 52.0, air 4.2`.
fn largest_stages(mut means: [(&'static str, f64); 8]) -> String {
    means.sort_by(|a, b| b.1.total_cmp(&a.1));
    means
        .iter()
        .take(3)
        .map(|(stage, ms)| format!("{stage} {ms:.1}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn stacks_and_values_multiply_in_order() {
        let v = variants(
            &s(&["linux-4.8-bloated", "linux-6.16"]),
            &s(&["stations.count=1,4"]),
        )
        .unwrap();
        let labels: Vec<&str> = v.iter().map(|x| x.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "linux-4.8-bloated, stations.count=1",
                "linux-4.8-bloated, stations.count=4",
                "linux-6.16, stations.count=1",
                "linux-6.16, stations.count=4"
            ]
        );
        assert_eq!(
            v[3].sets,
            [
                ("stack".to_string(), "linux-6.16".to_string()),
                ("stations.count".to_string(), "4".to_string())
            ]
        );
        assert_eq!(slug(&v[1].label), "linux-4.8-bloated_stations.count-4");
    }

    #[test]
    fn a_setting_compared_reaches_the_bsss_that_give_the_key() {
        let table = crate::scenario::parse(
            r#"
stack = "linux-6.16"
[[bss]]
name = "a"
stack = "linux-4.9"
[bss.stations]
list = [{ mcs = 3 }]
[[bss]]
name = "b"
"#,
            &[],
        )
        .unwrap();
        let set = |k: &str, v: &str| (k.to_string(), v.to_string());
        // `stack`: entry 0 gives it, entry 1 inherits the top level's.
        assert_eq!(
            settings_for_bsss(&table, &[set("stack", "linux-5.5")]),
            [set("stack", "linux-5.5"), set("bss[0].stack", "linux-5.5")]
        );
        // `mac.retry_limit`: every entry gives it, so the top level's is unused.
        let every = crate::scenario::parse(
            "[[bss]]\nname = \"a\"\nmac = { retry_limit = 4 }\n\
             [[bss]]\nname = \"b\"\nmac = { retry_limit = 5 }\n",
            &[],
        )
        .unwrap();
        assert_eq!(
            settings_for_bsss(&every, &[set("mac.retry_limit", "7")]),
            [
                set("bss[0].mac.retry_limit", "7"),
                set("bss[1].mac.retry_limit", "7")
            ]
        );
        // A key entries do not inherit (the scenario's name is not a BSS's) stays.
        assert_eq!(
            settings_for_bsss(&every, &[set("name", "x")]),
            [set("name", "x")]
        );
        // A key inside a list entry, given by entry 0 only.
        assert_eq!(
            settings_for_bsss(&table, &[set("stations.list[0].mcs", "7")]),
            [
                set("stations.list[0].mcs", "7"),
                set("bss[0].stations.list[0].mcs", "7")
            ]
        );
        // Keys no entry gives, and keys of one BSS, stay as they are.
        for sets in [
            vec![set("traffic.streams", "2")],
            vec![set("bss[1].stack", "linux-4.9")],
            vec![set("stations.list[1].mcs", "7")],
        ] {
            assert_eq!(settings_for_bsss(&table, &sets), sets);
        }
        // Without [[bss]] nothing is added.
        let one = crate::scenario::parse("stack = \"linux-4.9\"", &[]).unwrap();
        assert_eq!(
            settings_for_bsss(&one, &[set("stack", "linux-5.5")]),
            [set("stack", "linux-5.5")]
        );
    }

    #[test]
    fn fewer_than_two_settings_or_bad_syntax_is_an_error() {
        assert!(variants(&s(&["linux-6.16"]), &[]).is_err());
        assert!(variants(&[], &[]).is_err());
        assert!(variants(&[], &s(&["stations.count"]))
            .unwrap_err()
            .contains("KEY=V1"));
        assert!(variants(&[], &s(&["=1,2"])).is_err());
        assert!(variants(&s(&["a", "a"]), &[])
            .unwrap_err()
            .contains("twice"));
    }

    #[test]
    fn a_key_varied_twice_is_an_error() {
        let e = variants(&[], &s(&["stations.count=1,2", "stations.count=4,8"])).unwrap_err();
        assert_eq!(
            e,
            "--vary stations.count: the key is varied twice; give all its values in one \
             --vary KEY=V1,V2,…"
        );
        let e = variants(&s(&["linux-4.9"]), &s(&["stack=linux-6.16,linux-5.5"])).unwrap_err();
        assert!(
            e.starts_with("--vary stack: the key is varied twice"),
            "{e}"
        );
        // Different keys multiply.
        assert_eq!(
            variants(&[], &s(&["stations.count=1,2", "traffic.tid=0,6"]))
                .unwrap()
                .len(),
            4
        );
    }

    #[test]
    fn at_most_max_runs() {
        let values = |n: usize| (0..n).map(|i| i.to_string()).collect::<Vec<_>>().join(",");
        let ten = values(10);
        let ok = variants(
            &[],
            &[format!("a={ten}"), format!("b={ten}"), format!("c={ten}")],
        )
        .unwrap();
        assert_eq!(ok.len(), MAX_RUNS);
        let e = variants(
            &s(&["linux-4.9", "linux-6.16"]),
            &[format!("a={ten}"), format!("b={ten}"), format!("c={ten}")],
        )
        .unwrap_err();
        assert_eq!(
            e,
            "compare: 2 × 10 × 10 × 10 = 2000 runs; at most 1000 (vary fewer values, or loop \
             over `txop run`)"
        );
        // Nine options of nine values (387 420 489 runs) are refused before any is built.
        let nine = values(9);
        let many: Vec<String> = (0..9).map(|k| format!("k{k}={nine}")).collect();
        let e = variants(&[], &many).unwrap_err();
        assert!(e.contains("= 387420489 runs; at most 1000"), "{e}");
    }
}
