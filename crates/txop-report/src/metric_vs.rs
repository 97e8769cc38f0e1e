//! `txop compare --metric-vs KEY`: the comparison's headline figures against one varied
//! key (issue 27, "views that scale"): x = the key's values, one line per setting of the
//! other varied keys (the stacks, say), and over a varied `seed` the median of the seeds
//! with their range.
//!
//! The figures are each run's own (`results.json` holds them): the total throughput, the
//! delay of the measurement flows (the median of their p50s, and the highest of their
//! p99s) and Jain's index over the airtime. Nothing is simulated or estimated here: the
//! chart only regroups the runs, so its every number can be found again in the
//! comparison's table.

use crate::compare::Variant;
use serde::Serialize;
use std::fmt::Write;
use txop_results::results::{FlowResult, Results};

/// The key whose values are the seeds of a run: varied, it gives each point its spread
/// instead of a line of its own.
pub const SEED_KEY: &str = "seed";

/// A headline figure of one run.
#[derive(Clone, Copy)]
pub struct Metric {
    /// What the figure is, as titles say it (`delay p99`).
    pub name: &'static str,
    /// Its unit (`ms`), or empty for a pure number.
    pub unit: &'static str,
    /// Digits after the point in tables.
    pub decimals: usize,
    /// The figure of one run's results; `None` when the run has no such figure (no flow
    /// with a delay).
    pub of: fn(&Results) -> Option<f64>,
}

/// The figures a `--metric-vs` chart shows, one panel each.
pub const METRICS: [Metric; 4] = [
    Metric {
        name: "total throughput",
        unit: "Mbit/s",
        decimals: 2,
        of: |r| Some(r.total_throughput_bps / 1e6),
    },
    Metric {
        name: "delay p50",
        unit: "ms",
        decimals: 1,
        of: |r| median(&delays(r, |f| f.p50)),
    },
    Metric {
        name: "delay p99",
        unit: "ms",
        decimals: 1,
        of: |r| delays(r, |f| f.p99).into_iter().reduce(f64::max),
    },
    Metric {
        name: "Jain's index (airtime)",
        unit: "",
        decimals: 3,
        of: |r| Some(r.airtime_jain_index),
    },
];

/// The delays a run is judged by: those of its measurement flows (pings, probes: what
/// flent's latency plots show), or of every flow with a delay when it has none.
fn delays(r: &Results, pick: fn(&txop_results::results::LatencySummary) -> f64) -> Vec<f64> {
    let of = |keep: fn(&FlowResult) -> bool| -> Vec<f64> {
        r.flows
            .iter()
            .filter(|f| keep(f))
            .filter_map(|f| f.delay_ms().map(|l| pick(&l)))
            .filter(|v| v.is_finite())
            .collect()
    };
    let measured = of(FlowResult::is_measurement);
    if measured.is_empty() {
        of(|_| true)
    } else {
        measured
    }
}

/// The median of `values` (the mean of the middle two of an even count); `None` when
/// there are none.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2]),
        _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

/// A run's figures, in [`METRICS`]' order.
pub type Headline = [Option<f64>; METRICS.len()];

/// The figures of one run's results, in [`METRICS`]' order: what `compare` charts, and
/// what each point of a sweep keeps for its chart.
pub fn headline(r: &Results) -> Headline {
    METRICS.map(|m| (m.of)(r).filter(|v| v.is_finite()))
}

/// One run as the chart sees it: its settings, its BSS (with `[[bss]]`: a run per
/// BSS) and its figures.
pub struct VsRun<'a> {
    pub settings: &'a [(String, String)],
    pub bss: Option<&'a str>,
    pub figures: Headline,
}

/// A point of a line: the runs at one value of the key, their median and range.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct VsPoint {
    /// The key's value.
    pub x: f64,
    /// The median over the runs (over the seeds), and the smallest and largest.
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// How many runs gave the figure.
    pub runs: usize,
}

/// One line: the runs that share every setting but the key and the seed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct VsLine {
    /// Those settings, as the comparison labels them (`linux-6.16, traffic.streams=4`),
    /// with the BSS after a `/`; `all runs` when nothing else varies.
    pub label: String,
    /// One point per value of the key, in increasing order.
    pub points: Vec<VsPoint>,
}

/// Everything a `--metric-vs` chart shows: a panel per [`METRICS`] entry.
#[derive(Clone, Debug, PartialEq)]
pub struct VsChart {
    /// The scenario's name.
    pub scenario: String,
    /// The varied key on the x axis.
    pub key: String,
    /// The seeds the ranges span (empty when `seed` is not varied).
    pub seeds: Vec<String>,
    /// Per metric (in [`METRICS`]' order), its lines.
    pub panels: Vec<Vec<VsLine>>,
}

/// In results.json: the key, the seeds, and each metric by name with its unit and
/// lines.
impl Serialize for VsChart {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Panel<'a> {
            metric: &'static str,
            unit: &'static str,
            lines: &'a [VsLine],
        }
        #[derive(Serialize)]
        struct Chart<'a> {
            key: &'a str,
            seeds: &'a [String],
            metrics: Vec<Panel<'a>>,
        }
        Chart {
            key: &self.key,
            seeds: &self.seeds,
            metrics: METRICS
                .iter()
                .zip(&self.panels)
                .map(|(m, lines)| Panel {
                    metric: m.name,
                    unit: m.unit,
                    lines,
                })
                .collect(),
        }
        .serialize(s)
    }
}

/// Checks that `key` can be the x axis of a comparison of `variants`: a key they vary
/// (not `seed`, which gives the ranges), with values that are numbers.
pub fn check_key(key: &str, variants: &[Variant]) -> Result<(), String> {
    let values: Vec<&str> = variants
        .iter()
        .filter_map(|v| {
            v.sets
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, x)| x.as_str())
        })
        .collect();
    check_values(key, &values)
}

/// Checks that `key`, with the `values` it takes (none: not varied), can be a chart's x
/// axis: not `seed`, which gives the ranges, and numbers.
pub fn check_values(key: &str, values: &[&str]) -> Result<(), String> {
    if key == SEED_KEY {
        return Err(format!(
            "--metric-vs {SEED_KEY}: the seeds give each point its range; put another varied key on the x axis"
        ));
    }
    if values.is_empty() {
        return Err(format!(
            "--metric-vs {key}: the comparison does not vary `{key}` (give it with --vary {key}=V1,V2,…)"
        ));
    }
    if let Some(bad) = values.iter().find(|x| number(x).is_none()) {
        return Err(format!(
            "--metric-vs {key}: `{bad}` is not a number; the x axis needs numbers (compare other values in the table)"
        ));
    }
    Ok(())
}

fn number(x: &str) -> Option<f64> {
    x.trim().parse::<f64>().ok().filter(|v| v.is_finite())
}

/// The label of a run's line: its settings but `key` and `seed`, as
/// [`crate::compare::variants`] writes them, and its BSS.
fn line_label(run: &VsRun<'_>, key: &str) -> String {
    let mut parts: Vec<String> = run
        .settings
        .iter()
        .filter(|(k, _)| k != key && k != SEED_KEY)
        .map(|(k, v)| {
            if k == "stack" {
                v.clone()
            } else {
                format!("{k}={v}")
            }
        })
        .collect();
    if parts.is_empty() {
        parts.push("all runs".into());
    }
    let mut label = parts.join(", ");
    if let Some(b) = run.bss {
        let _ = write!(label, " / {b}");
    }
    label
}

/// The chart of `runs` against `key` (which [`check_key`] accepted). Lines are in the
/// order their first run comes; a point whose runs give no figure is left out.
pub fn chart(scenario: &str, key: &str, runs: &[VsRun<'_>]) -> VsChart {
    let mut labels: Vec<String> = Vec::new();
    let mut seeds: Vec<String> = Vec::new();
    // (line, x, figures) of every run that has the key.
    let mut placed: Vec<(usize, f64, &Headline)> = Vec::new();
    for run in runs {
        let Some(x) = run
            .settings
            .iter()
            .find(|(k, _)| k == key)
            .and_then(|(_, v)| number(v))
        else {
            continue;
        };
        if let Some((_, s)) = run.settings.iter().find(|(k, _)| k == SEED_KEY) {
            if !seeds.contains(s) {
                seeds.push(s.clone());
            }
        }
        let label = line_label(run, key);
        let line = match labels.iter().position(|l| *l == label) {
            Some(i) => i,
            None => {
                labels.push(label);
                labels.len() - 1
            }
        };
        placed.push((line, x, &run.figures));
    }
    let panels = (0..METRICS.len())
        .map(|m| {
            labels
                .iter()
                .enumerate()
                .map(|(i, label)| {
                    let mut xs: Vec<f64> =
                        placed.iter().filter(|p| p.0 == i).map(|p| p.1).collect();
                    xs.sort_by(f64::total_cmp);
                    xs.dedup();
                    let points = xs
                        .into_iter()
                        .filter_map(|x| {
                            let values: Vec<f64> = placed
                                .iter()
                                .filter(|p| p.0 == i && p.1 == x)
                                .filter_map(|p| p.2[m])
                                .collect();
                            Some(VsPoint {
                                x,
                                median: median(&values)?,
                                min: values.iter().copied().fold(f64::INFINITY, f64::min),
                                max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                                runs: values.len(),
                            })
                        })
                        .collect();
                    VsLine {
                        label: label.clone(),
                        points,
                    }
                })
                .collect()
        })
        .collect();
    VsChart {
        scenario: scenario.to_string(),
        key: key.to_string(),
        seeds,
        panels,
    }
}

impl VsChart {
    /// The heading of the chart and its table.
    pub fn heading(&self) -> String {
        if self.seeds.len() > 1 {
            format!(
                "{}: vs {}, median and range over {} seeds",
                self.scenario,
                self.key,
                self.seeds.len()
            )
        } else {
            format!("{}: vs {}", self.scenario, self.key)
        }
    }

    /// The chart as text, a block per metric: a row per line, a column per value of the
    /// key, each cell the median and, over several seeds, `[min–max]`.
    pub fn table(&self) -> String {
        let mut out = format!("{}\n", self.heading());
        let mut xs: Vec<f64> = self
            .panels
            .iter()
            .flatten()
            .flat_map(|l| l.points.iter().map(|p| p.x))
            .collect();
        xs.sort_by(f64::total_cmp);
        xs.dedup();
        for (m, lines) in METRICS.iter().zip(&self.panels) {
            let unit = if m.unit.is_empty() {
                String::new()
            } else {
                format!(" ({})", m.unit)
            };
            let mut rows: Vec<Vec<String>> =
                vec![std::iter::once(format!("{}{unit} vs {}", m.name, self.key))
                    .chain(xs.iter().map(|x| format_number(*x)))
                    .collect()];
            for line in lines {
                let mut row = vec![line.label.clone()];
                for x in &xs {
                    row.push(match line.points.iter().find(|p| p.x == *x) {
                        None => "—".into(),
                        Some(p) if p.runs > 1 => format!(
                            "{:.d$} [{:.d$}–{:.d$}]",
                            p.median,
                            p.min,
                            p.max,
                            d = m.decimals
                        ),
                        Some(p) => format!("{:.d$}", p.median, d = m.decimals),
                    });
                }
                rows.push(row);
            }
            out.push('\n');
            let widths: Vec<usize> = (0..rows[0].len())
                .map(|j| rows.iter().map(|r| r[j].chars().count()).max().unwrap_or(0))
                .collect();
            for row in &rows {
                let mut line = String::new();
                for (j, cell) in row.iter().enumerate() {
                    let pad = widths[j] - cell.chars().count();
                    if j == 0 {
                        line.push_str(cell);
                        line.push_str(&" ".repeat(pad));
                    } else {
                        line.push_str("  ");
                        line.push_str(&" ".repeat(pad));
                        line.push_str(cell);
                    }
                }
                out.push_str(line.trim_end());
                out.push('\n');
            }
        }
        out
    }

    /// The file names of the chart, without extension: `metric-vs-<key>`.
    pub fn stem(&self) -> String {
        format!("metric-vs-{}", crate::compare::slug(&self.key))
    }

    /// The chart alone as files (what `txop sweep --metric-vs` writes): its table as
    /// `metric-vs-<key>.txt` and its picture as `.png` and `.svg`.
    pub fn files(&self) -> Result<Vec<(String, Vec<u8>)>, String> {
        let mut files = vec![(format!("{}.txt", self.stem()), self.table().into_bytes())];
        files.extend(crate::plot::render_metric_vs(self).map_err(|e| format!("plots: {e}"))?);
        Ok(files)
    }
}

/// A value of the key as a table heads its column: as given, without trailing zeros.
pub fn format_number(x: f64) -> String {
    let s = format!("{x:.6}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sets(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// A short real run, whose figures the tests then set by hand.
    fn one_run() -> &'static Results {
        static R: std::sync::OnceLock<Results> = std::sync::OnceLock::new();
        R.get_or_init(|| {
            let text = crate::builtin::get("default").expect("built-in scenario");
            let cfg = crate::scenario::parse(text, &sets(&[("duration_s", "0.2")]))
                .and_then(|s| s.resolve())
                .expect("valid scenario");
            txop_sim::Simulation::new(cfg).expect("valid config").run()
        })
    }

    #[test]
    fn the_median_of_an_even_count_is_the_mean_of_the_middle_two() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0]), Some(3.0));
        assert_eq!(median(&[5.0, 1.0, 3.0]), Some(3.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 10.0]), Some(3.5));
    }

    #[test]
    fn the_key_must_be_varied_numeric_and_not_the_seed() {
        let variants = crate::compare::variants(
            &["linux-4.9".into(), "linux-6.16".into()],
            &["stations.count=1,4".into(), "seed=1,2".into()],
        )
        .expect("variants");
        assert!(check_key("stations.count", &variants).is_ok());
        let e = check_key("seed", &variants).unwrap_err();
        assert!(e.starts_with("--metric-vs seed:"), "{e}");
        let e = check_key("traffic.streams", &variants).unwrap_err();
        assert!(e.contains("does not vary `traffic.streams`"), "{e}");
        let e = check_key("stack", &variants).unwrap_err();
        assert!(e.contains("`linux-4.9` is not a number"), "{e}");
    }

    #[test]
    fn lines_are_the_other_settings_and_the_seeds_give_the_range() {
        // Two stacks × two station counts × three seeds, the throughput made up so that
        // each point's median and range can be worked by hand.
        let mut runs_data = Vec::new();
        for (s, stack) in ["a", "b"].iter().enumerate() {
            for count in ["1", "4"] {
                for (k, seed) in ["1", "2", "3"].iter().enumerate() {
                    let mut r = one_run().clone();
                    r.flows.clear();
                    let base = if count == "1" { 10.0 } else { 40.0 };
                    r.total_throughput_bps = (base + s as f64 * 100.0 + [0.0, 2.0, 1.0][k]) * 1e6;
                    runs_data.push((
                        sets(&[("stack", stack), ("stations.count", count), ("seed", seed)]),
                        r,
                    ));
                }
            }
        }
        let runs: Vec<VsRun<'_>> = runs_data
            .iter()
            .map(|(s, r)| VsRun {
                settings: s,
                bss: None,
                figures: headline(r),
            })
            .collect();
        let c = chart("t", "stations.count", &runs);
        assert_eq!(c.seeds, ["1", "2", "3"]);
        let tput = &c.panels[0];
        assert_eq!(tput.len(), 2);
        assert_eq!(tput[0].label, "a");
        assert_eq!(tput[1].label, "b");
        assert_eq!(
            tput[1].points,
            vec![
                VsPoint {
                    x: 1.0,
                    median: 111.0,
                    min: 110.0,
                    max: 112.0,
                    runs: 3
                },
                VsPoint {
                    x: 4.0,
                    median: 141.0,
                    min: 140.0,
                    max: 142.0,
                    runs: 3
                },
            ]
        );
        let table = c.table();
        assert!(table.contains("111.00 [110.00–112.00]"), "{table}");
        // No flow has a delay: that panel has lines without points, shown as dashes.
        assert!(c.panels[1].iter().all(|l| l.points.is_empty()));
    }
}
