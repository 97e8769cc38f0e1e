//! Pictures of a run's results, as PNG and SVG: latency over time, the latency CDF,
//! throughput over time and per-station throughput and airtime share; for `txop compare`
//! the same pictures with one colour per run, so that the runs overlay.
//!
//! The pictures follow flent's (its `ping`, `ping_cdf` and `totals` plots): the latency
//! probes are the ping flows, whose every reply (or every `sample_stride`-th, in long
//! runs) is in `FlowResult::rtt_samples`, and the throughput series are flent's 0.2 s
//! samples (`FlowResult::throughput_series_bps`; per `Results::series_step_s`, a
//! coarser step in runs longer than 409.6 s).
//! Flows without echo replies have only percentiles (`latency_ms`), which the CDF shows
//! as dots. Text is drawn with an embedded subset
//! of DejaVu Sans (`assets/DejaVuSans-subset.ttf`, licence in `assets/LICENSE-DejaVu.txt`)
//! so that a machine without system fonts draws the same PNG; the SVG names the family
//! `sans-serif` and leaves the glyphs to the viewer. Same results ⇒ byte-identical files.

use plotters::chart::MeshStyle;
use plotters::coord::combinators::WithKeyPoints;
use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters_backend::{BackendColor, BackendCoord, DrawingErrorKind};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use txop_results::results::{FlowResult, LatencySummary, Results};

mod budget;
mod metric_vs;

/// The `--metric-vs` chart's files (`metric-vs-<key>.png` and `.svg`), in memory.
pub fn render_metric_vs(
    chart: &crate::metric_vs::VsChart,
) -> Result<Vec<(String, Vec<u8>)>, String> {
    register_font()?;
    let figure = metric_vs::figure(chart);
    let stem = chart.stem();
    Ok(vec![
        (format!("{stem}.png"), png_bytes(&figure)?),
        (format!("{stem}.svg"), svg_string(&figure)?.into_bytes()),
    ])
}

/// One run to draw, named as the legend should name it (a scenario name, or for `txop
/// compare` the setting that differs, e.g. `stack=linux-4.8-bloated`).
#[derive(Clone, Copy)]
pub struct PlotRun<'a> {
    pub label: &'a str,
    pub results: &'a Results,
}

/// Draws every plot for `runs` and writes each as `NAME.png` and `NAME.svg` into `dir`
/// (which must exist); returns the paths written. One run: that run's flows in one colour
/// each. Several runs: overlays, one colour per run, the legend naming each run's label.
/// A plot for which the results hold no data is not written.
pub fn write_plots(dir: &Path, title: &str, runs: &[PlotRun<'_>]) -> Result<Vec<PathBuf>, String> {
    let mut written = Vec::new();
    for (name, bytes) in render_plots(title, runs)? {
        let path = dir.join(&name);
        std::fs::write(&path, bytes).map_err(|e| format!("{}: {e}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

/// The files [`write_plots`] writes, in memory: `(file name, bytes)`, for a caller that
/// writes its results directory all at once.
pub fn render_plots(title: &str, runs: &[PlotRun<'_>]) -> Result<Vec<(String, Vec<u8>)>, String> {
    register_font()?;
    let mut files = Vec::new();
    for figure in figures(title, runs) {
        let stem = figure.stem();
        files.push((format!("{stem}.png"), png_bytes(&figure)?));
        files.push((format!("{stem}.svg"), svg_string(&figure)?.into_bytes()));
    }
    Ok(files)
}

/// The plot file names (without extension), in the order they are drawn.
pub const PLOT_NAMES: [&str; 4] = ["latency-time", "latency-cdf", "throughput", "stations"];

/// The TCP plots' file names (without extension), drawn, between `rate` and `stations`,
/// for runs with TCP flows (`tcp-bbr` with BBR flows).
pub const TCP_PLOT_NAMES: [&str; 4] = ["tcp-cwnd", "tcp-srtt", "tcp-rate", "tcp-bbr"];

/// The "where the time goes" plot's file name (without extension), drawn last, for
/// runs with a delay budget.
pub const BUDGET_PLOT_NAME: &str = "delay-budget";

// ---------------------------------------------------------------------------------------
// What to draw: figures as data, independent of the backend.
// ---------------------------------------------------------------------------------------

/// The shortest time axis drawn, s (flent's 0.2 s sampling step).
const MIN_TIME_AXIS_S: f64 = 0.2;

/// A latency axis whose largest value is this many times its smallest is drawn on a log
/// scale, so that a 2 ms and a 2 s distribution are both readable.
const LOG_SPAN_RATIO: f64 = 30.0;

/// A flow carrying less than this share of the busiest flow's throughput is a probe
/// (the sparse flows beside bulk ones): it is left out of the throughput plot, where it
/// would lie on the axis.
const PROBE_THROUGHPUT_SHARE: f64 = 0.01;

/// Empirical CDFs are drawn through at most this many points (evenly spaced ranks), to
/// keep the SVG small; the curve is indistinguishable at the sizes drawn.
const CDF_MAX_POINTS: usize = 1000;

/// Time series longer than this are thinned to each stretch's minimum and maximum (the
/// envelope a line this long would draw anyway), so that a run of days gives an SVG of
/// kilobytes, not of gigabytes.
const SERIES_MAX_POINTS: usize = 4000;

/// matplotlib's `tab10` palette, indexed by flow (one run) or by run (a comparison), so
/// that a flow keeps its colour from one plot to the next.
const PALETTE: [RGBColor; 10] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x7f, 0x7f, 0x7f),
    RGBColor(0xbc, 0xbd, 0x22),
    RGBColor(0x17, 0xbe, 0xcf),
];

fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

enum Figure {
    Lines(LineFigure),
    Bars(BarFigure),
    Budget(budget::BudgetFigure),
}

impl Figure {
    fn stem(&self) -> &'static str {
        match self {
            Figure::Lines(f) => f.stem,
            Figure::Bars(f) => f.stem,
            Figure::Budget(_) => BUDGET_PLOT_NAME,
        }
    }
}

/// Line plots: one chart, or for a comparison one panel per flow (small multiples),
/// sharing axes and a legend.
struct LineFigure {
    stem: &'static str,
    heading: String,
    x: Axis,
    y: Axis,
    panels: Vec<Panel>,
    legend: Legend,
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Scale {
    Linear,
    Log,
}

struct Axis {
    label: String,
    min: f64,
    max: f64,
    scale: Scale,
    /// On a log axis, the values to label instead of 1-2-5 of every decade (a varied
    /// key's own values); empty for the usual ticks.
    marks: Vec<f64>,
    /// Names for the integer ticks 0, 1, … (a categorical axis: BBR's modes); empty for
    /// a numeric axis.
    names: &'static [&'static str],
}

struct Panel {
    title: Option<String>,
    series: Vec<Series>,
    /// The panel's own y axis, where its panels show different quantities (`None`:
    /// the figure's).
    y: Option<Axis>,
}

struct Series {
    colour: RGBColor,
    points: Vec<(f64, f64)>,
    mark: Mark,
}

/// How a series is drawn.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Mark {
    /// A line through every point.
    Line,
    /// A thin line, for totals and references.
    Thin,
    /// Only a few summary points (p50, p90, p99, max): dots joined by a thin line.
    Dots,
    /// A bar's colour (legend only).
    Block,
    /// Vertical ranges: the points in pairs, (x, low) then (x, high), each drawn as a
    /// thin bar with caps.
    Whiskers,
}

struct Legend {
    header: String,
    entries: Vec<LegendEntry>,
}

struct LegendEntry {
    name: String,
    /// A second, smaller line: what the series is (RTT or one-way, sample count…).
    note: String,
    colour: RGBColor,
    mark: Mark,
}

/// Grouped bars: one group per station, one bar per run, in stacked panels.
struct BarFigure {
    stem: &'static str,
    heading: String,
    /// Station names under each group.
    groups: Vec<String>,
    /// Under the name, the link rate; `None` when every station has the same one (then
    /// it goes into the axis label).
    group_notes: Option<Vec<String>>,
    x_label: String,
    runs: Vec<(String, RGBColor)>,
    panels: Vec<BarPanel>,
}

struct BarPanel {
    title: String,
    y_label: String,
    /// `values[run][group]`; `None` where that run has no such station.
    values: Vec<Vec<Option<f64>>>,
    unit: &'static str,
    /// A dashed horizontal line at this value (the equal airtime share), explained in
    /// the title.
    reference: Option<f64>,
}

fn figures(title: &str, runs: &[PlotRun<'_>]) -> Vec<Figure> {
    let mut out = Vec::new();
    if many_stations(runs) {
        // A line per flow or station, a panel per flow, a bar per station stop being
        // readable: groups and percentile bands instead (report::SCREEN_STATIONS).
        out.extend(grouped::latency_time_figure(title, runs).map(Figure::Lines));
        out.extend(grouped::latency_cdf_figure(title, runs).map(Figure::Lines));
        out.extend(grouped::throughput_figure(title, runs).map(Figure::Lines));
        out.extend(grouped::rate_figure(title, runs).map(Figure::Lines));
        out.extend(grouped::stations_figure(title, runs).map(Figure::Bars));
        out.extend(budget::figure(title, runs, true).map(Figure::Budget));
        return out;
    }
    out.extend(latency_time_figure(title, runs).map(Figure::Lines));
    out.extend(latency_cdf_figure(title, runs).map(Figure::Lines));
    out.extend(throughput_figure(title, runs).map(Figure::Lines));
    out.extend(rate_figure(title, runs).map(Figure::Lines));
    out.extend(tcp::figures(title, runs).into_iter().map(Figure::Lines));
    out.extend(stations_figure(title, runs).map(Figure::Bars));
    out.extend(budget::figure(title, runs, false).map(Figure::Budget));
    out
}

/// Whether the plots show groups and bands: some run has more stations than the
/// summary lists one by one, and its station groups.
fn many_stations(runs: &[PlotRun<'_>]) -> bool {
    runs.iter().any(|r| {
        r.results.stations.len() > crate::report::SCREEN_STATIONS && !r.results.groups.is_empty()
    })
}

/// The plots of many stations: flows by group ([`crate::report::flow_groups`]),
/// stations by group (`Results::groups`), spreads as percentile bands.
mod grouped {
    use super::*;
    use crate::report::{flow_groups, FlowGroup};
    use txop_results::Spread;

    /// Panels (or series) at most: groups beyond are left out and counted in the
    /// heading.
    const MAX_GROUPS: usize = 12;

    /// The percentiles a band draws: p10 and p90 thin, p50 full.
    const BAND: [(f64, Mark); 3] = [(0.1, Mark::Thin), (0.5, Mark::Line), (0.9, Mark::Thin)];

    /// Value of nearest rank ⌈q·n⌉ of `sorted` (ascending, not empty).
    fn rank(sorted: &[f64], q: f64) -> f64 {
        sorted[((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1]
    }

    /// A band over time: per step of `step_s`, the [`BAND`] percentiles of the values
    /// that fall in it (`(time s, value)` pairs, from any member); steps without a
    /// value are left out.
    fn band(points: &[(f64, f64)], step_s: f64, colour: RGBColor) -> Vec<Series> {
        let mut bins: std::collections::BTreeMap<u64, Vec<f64>> = Default::default();
        for &(t, v) in points {
            bins.entry((t / step_s).floor().max(0.0) as u64)
                .or_default()
                .push(v);
        }
        for v in bins.values_mut() {
            v.sort_by(f64::total_cmp);
        }
        BAND.iter()
            .map(|&(q, mark)| Series {
                colour,
                points: envelope(
                    &bins
                        .iter()
                        .map(|(&k, v)| ((k + 1) as f64 * step_s, rank(v, q)))
                        .collect::<Vec<_>>(),
                    SERIES_MAX_POINTS,
                ),
                mark,
            })
            .collect()
    }

    /// `n` groups of which `shown` are drawn: "" or ", first 12 of 40 groups".
    fn shown_of(shown: usize, n: usize) -> String {
        if n > shown {
            format!(", first {shown} of {n} groups")
        } else {
            String::new()
        }
    }

    /// The flow groups of the first run that has them, by name, with each run's
    /// members: `(name, per run: its flows of that group)`.
    fn flow_group_table<'a>(
        runs: &[PlotRun<'a>],
        keep: impl Fn(&FlowResult) -> bool,
    ) -> Vec<(String, Vec<Vec<&'a FlowResult>>)> {
        let mut out: Vec<(String, Vec<Vec<&'a FlowResult>>)> = Vec::new();
        for (j, run) in runs.iter().enumerate() {
            for FlowGroup { name, flows } in flow_groups(run.results) {
                let flows: Vec<&FlowResult> = flows.into_iter().filter(|f| keep(f)).collect();
                if flows.is_empty() {
                    continue;
                }
                let at = match out.iter().position(|(n, _)| *n == name) {
                    Some(at) => at,
                    None => {
                        out.push((name, vec![Vec::new(); runs.len()]));
                        out.len() - 1
                    }
                };
                out[at].1[j] = flows;
            }
        }
        out
    }

    /// A panel per flow group (at most [`MAX_GROUPS`]), titled with its name and size,
    /// holding `series_of(run, its flows in that run)` for every run.
    fn group_panels<'a>(
        table: &[(String, Vec<Vec<&'a FlowResult>>)],
        series_of: impl Fn(usize, &[&'a FlowResult]) -> Vec<Series>,
    ) -> Vec<Panel> {
        table
            .iter()
            .take(MAX_GROUPS)
            .map(|(name, per_run)| {
                let n = per_run.iter().map(Vec::len).max().unwrap_or(0);
                Panel {
                    y: None,
                    title: Some(format!("{name}: {n} flows")),
                    series: per_run
                        .iter()
                        .enumerate()
                        .flat_map(|(j, flows)| series_of(j, flows))
                        .collect(),
                }
            })
            .collect()
    }

    fn band_legend(name: String, note: String, colour: RGBColor) -> LegendEntry {
        LegendEntry {
            name,
            note,
            colour,
            mark: Mark::Line,
        }
    }

    /// Echo RTTs over time by flow group: per step, the median and the p10–p90 band of
    /// every reply of the group's flows. One panel per group, a colour per run.
    pub(super) fn latency_time_figure(title: &str, runs: &[PlotRun<'_>]) -> Option<LineFigure> {
        let table = flow_group_table(runs, |f| !f.rtt_samples.is_empty());
        let panels = group_panels(&table, |j, flows| {
            let points: Vec<(f64, f64)> = flows
                .iter()
                .flat_map(|f| f.rtt_samples.iter().copied())
                .collect();
            if points.is_empty() {
                return Vec::new();
            }
            band(&points, runs[j].results.series_step_s, colour(j))
        });
        if panels.is_empty() {
            return None;
        }
        let mut legend = runs_legend(runs);
        legend.header = "median; thin: p10, p90".into();
        Some(LineFigure {
            stem: "latency-time",
            heading: format!(
                "{title}: RTT over time by flow group{}",
                shown_of(panels.len(), table.len())
            ),
            x: time_axis(runs),
            y: latency_axis("round-trip time (ms), replies per step", &panels),
            panels,
            legend,
        })
    }

    /// The CDF across each flow group's flows of their median delay (an echo flow's
    /// RTT, any other's one-way delay), thick, and of their p99, thin: one panel per
    /// group, a colour per run.
    pub(super) fn latency_cdf_figure(title: &str, runs: &[PlotRun<'_>]) -> Option<LineFigure> {
        let table = flow_group_table(runs, |f| f.delay_ms().is_some());
        let cdf = |xs: Vec<f64>| -> Vec<(f64, f64)> {
            let mut xs = xs;
            xs.sort_by(f64::total_cmp);
            let n = xs.len() as f64;
            let mut points = vec![(xs[0], 0.0)];
            points.extend(xs.iter().enumerate().map(|(i, &x)| (x, (i + 1) as f64 / n)));
            points
        };
        let panels = group_panels(&table, |j, flows| {
            let delays: Vec<_> = flows.iter().filter_map(|f| f.delay_ms()).collect();
            if delays.is_empty() {
                return Vec::new();
            }
            let p50 = |d: &LatencySummary| d.p50;
            let p99 = |d: &LatencySummary| d.p99;
            vec![
                Series {
                    colour: colour(j),
                    points: cdf(delays.iter().map(p50).collect()),
                    mark: Mark::Line,
                },
                Series {
                    colour: colour(j),
                    points: cdf(delays.iter().map(p99).collect()),
                    mark: Mark::Thin,
                },
            ]
        });
        if panels.is_empty() {
            return None;
        }
        let mut legend = runs_legend(runs);
        legend.header = "p50 per flow; thin: p99".into();
        let x = latency_axis(
            "delay per flow (ms): RTT for pings, one way for other flows",
            &transpose(&panels),
        );
        Some(LineFigure {
            stem: "latency-cdf",
            heading: format!(
                "{title}: latency across flows, by flow group{}",
                shown_of(panels.len(), table.len())
            ),
            x,
            y: Axis {
                marks: Vec::new(),
                label: "fraction of flows ≤ delay".into(),
                min: 0.0,
                max: 1.04,
                scale: Scale::Linear,
                names: &[],
            },
            panels,
            legend,
        })
    }

    /// Throughput over time by flow group: per step, the median and p10–p90 band
    /// across the group's bulk flows; one run: a colour per group; several: each
    /// run's total (as for few stations).
    pub(super) fn throughput_figure(title: &str, runs: &[PlotRun<'_>]) -> Option<LineFigure> {
        let [run] = runs else {
            return super::throughput_figure(title, runs);
        };
        let r = run.results;
        let bulk = bulk_flows(r);
        let table = flow_group_table(runs, |f| bulk.iter().any(|&i| std::ptr::eq(&r.flows[i], f)));
        let mut series = Vec::new();
        let mut entries = Vec::new();
        for (g, (name, per_run)) in table.iter().take(MAX_GROUPS).enumerate() {
            let flows = &per_run[0];
            let points: Vec<(f64, f64)> = flows
                .iter()
                .flat_map(|f| {
                    f.throughput_series_bps
                        .iter()
                        .enumerate()
                        .map(|(k, &bps)| ((k as f64 + 0.5) * r.series_step_s, bps / 1e6))
                })
                .collect();
            series.extend(band(&points, r.series_step_s, colour(g)));
            let mean: f64 =
                flows.iter().map(|f| f.throughput_bps).sum::<f64>() / flows.len() as f64;
            entries.push(band_legend(
                name.clone(),
                format!("{} flows, mean {} each", flows.len(), format_rate(mean)),
                colour(g),
            ));
        }
        time_series_figure(
            "throughput",
            format!(
                "{title}: throughput per flow over time, by flow group{}",
                shown_of(entries.len(), table.len())
            ),
            format!(
                "throughput per flow (Mbit/s per {} s): median, thin p10 and p90",
                r.series_step_s
            ),
            runs,
            series,
            Legend {
                header: run.label.to_string(),
                entries,
            },
        )
    }

    /// The PHY rate over time by station group and direction: per step, the median and
    /// p10–p90 band across the group's stations that sent data in it.
    pub(super) fn rate_figure(title: &str, runs: &[PlotRun<'_>]) -> Option<LineFigure> {
        let mut series = Vec::new();
        let mut entries = Vec::new();
        let mut total = 0;
        for (j, run) in runs.iter().enumerate() {
            let r = run.results;
            for g in &r.groups {
                for (dir, down) in [("down", true), ("up", false)] {
                    let mut points = Vec::new();
                    let mut kind = None;
                    for st in r
                        .stations
                        .iter()
                        .filter(|s| g.stations.contains(&s.station))
                    {
                        let Some(rc) = st.rate_control.as_ref() else {
                            continue;
                        };
                        kind.get_or_insert(rc.kind.clone());
                        let link = if down { &rc.downlink } else { &rc.uplink };
                        points.extend(
                            link.rate_series_bps
                                .iter()
                                .enumerate()
                                .filter(|&(_, &bps)| bps > 0.0)
                                .map(|(k, &bps)| ((k as f64 + 0.5) * r.series_step_s, bps / 1e6)),
                        );
                    }
                    let Some(kind) = kind.filter(|_| !points.is_empty()) else {
                        continue;
                    };
                    total += 1;
                    if entries.len() >= MAX_GROUPS {
                        continue;
                    }
                    let c = colour(entries.len());
                    series.extend(band(&points, r.series_step_s, c));
                    let run_name = run_prefix(runs, j);
                    entries.push(band_legend(
                        format!("{run_name}{} {dir}", g.name),
                        format!("{kind}, {} stations", g.stations.len()),
                        c,
                    ));
                }
            }
        }
        let header = rate_legend_header(runs);
        time_series_figure(
            "rate",
            format!(
                "{title}: PHY rate over time, by station group{}",
                shown_of(entries.len(), total)
            ),
            "PHY rate (Mbit/s) across stations: median, thin p10 and p90".into(),
            runs,
            series,
            Legend { header, entries },
        )
    }

    /// Throughput and airtime across each station group's stations: its min, p10,
    /// p50, p90 and max as five bars (one per run), the group under them.
    pub(super) fn stations_figure(title: &str, runs: &[PlotRun<'_>]) -> Option<BarFigure> {
        let mut names: Vec<String> = Vec::new();
        for g in runs.iter().flat_map(|r| &r.results.groups) {
            if !names.contains(&g.name) {
                names.push(g.name.clone());
            }
        }
        let total = names.len();
        names.truncate(MAX_GROUPS);
        if names.is_empty() {
            return None;
        }
        const QS: [&str; 5] = ["min", "p10", "p50", "p90", "max"];
        let five = |x: &Spread| [x.min, x.p10, x.p50, x.p90, x.max];
        let column = |value: &dyn Fn(&txop_results::GroupResult) -> [f64; 5],
                      scale: f64|
         -> Vec<Vec<Option<f64>>> {
            runs.iter()
                .map(|r| {
                    names
                        .iter()
                        .flat_map(|n| {
                            let g = r.results.groups.iter().find(|g| g.name == *n);
                            (0..QS.len()).map(move |q| g.map(|g| value(g)[q] * scale))
                        })
                        .collect()
                })
                .collect()
        };
        let size_of_group = |n: &String| {
            runs.iter()
                .flat_map(|r| &r.results.groups)
                .find(|g| g.name == *n)
                .map_or(0, |g| g.stations.len())
        };
        Some(BarFigure {
            stem: "stations",
            heading: format!(
                "{title}: throughput and airtime across stations, by group{}",
                shown_of(names.len(), total)
            ),
            groups: names
                .iter()
                .flat_map(|_| QS.iter().map(|q| q.to_string()))
                .collect(),
            group_notes: Some(
                names
                    .iter()
                    .flat_map(|n| {
                        let note = format!("{n} ({})", size_of_group(n));
                        QS.iter().map(move |&q| {
                            if q == "p50" {
                                note.clone()
                            } else {
                                String::new()
                            }
                        })
                    })
                    .collect(),
            ),
            x_label: "across the group's stations: min, p10, p50, p90, max (stations in the group)"
                .into(),
            runs: runs
                .iter()
                .enumerate()
                .map(|(j, r)| (r.label.to_string(), colour(j)))
                .collect(),
            panels: vec![
                BarPanel {
                    title: "throughput per station (both directions)".into(),
                    y_label: "throughput (Mbit/s)".into(),
                    values: column(&|g| five(&g.throughput_bps), 1e-6),
                    unit: "",
                    reference: None,
                },
                BarPanel {
                    title: "airtime share per station".into(),
                    y_label: "airtime share (%)".into(),
                    values: column(&|g| five(&g.airtime_share), 100.0),
                    unit: " %",
                    reference: None,
                },
            ],
        })
    }
}

/// Names for a run's flows, by position: flent's series name when it has one, else
/// its name (`probe (AP → sta1)`); a name shared by several flows gets the flow number.
fn flow_names(results: &Results) -> Vec<String> {
    let base: Vec<String> = results
        .flows
        .iter()
        .map(|f| {
            if f.label.is_empty() {
                f.name.clone()
            } else {
                f.label.clone()
            }
        })
        .collect();
    base.iter()
        .zip(&results.flows)
        .map(|(name, f)| {
            if base.iter().filter(|n| *n == name).count() > 1 {
                format!("{name} #{}", f.flow)
            } else {
                name.clone()
            }
        })
        .collect()
}

/// Flows with every echo reply recorded (ping, udp_ping): the latency probes.
fn echo_flows(results: &Results) -> Vec<usize> {
    (0..results.flows.len())
        .filter(|&i| !results.flows[i].rtt_samples.is_empty())
        .collect()
}

/// Flows with any latency to show: echo samples, or a one-way summary.
fn latency_flows(results: &Results) -> Vec<usize> {
    (0..results.flows.len())
        .filter(|&i| {
            let f = &results.flows[i];
            !f.rtt_samples.is_empty() || f.latency_ms.is_some()
        })
        .collect()
}

/// Flows whose throughput is worth a line: not echo probes, not sparse probes, and with
/// a series that is not all zero.
fn bulk_flows(results: &Results) -> Vec<usize> {
    let busiest = results
        .flows
        .iter()
        .map(|f| f.throughput_bps)
        .fold(0.0, f64::max);
    (0..results.flows.len())
        .filter(|&i| {
            let f = &results.flows[i];
            !f.is_measurement()
                && f.rtt_samples.is_empty()
                && f.throughput_bps >= PROBE_THROUGHPUT_SHARE * busiest
                && f.throughput_series_bps.iter().any(|&b| b > 0.0)
        })
        .collect()
}

/// A flow's latency distribution, ready to draw.
struct FlowCdf {
    /// (latency ms, fraction ≤ it)
    points: Vec<(f64, f64)>,
    mark: Mark,
    /// What it is, for the legend.
    note: String,
}

/// A flow's latency as CDF points: the exact CDF of its echo RTTs, or for a flow with
/// only a summary, its p50/p90/p99/max. With what it is, for the legend.
fn latency_cdf(f: &FlowResult) -> Option<FlowCdf> {
    if !f.rtt_samples.is_empty() {
        let mut ms: Vec<f64> = f.rtt_samples.iter().map(|&(_, rtt)| rtt).collect();
        ms.sort_by(f64::total_cmp);
        let n = ms.len();
        let ranks: Vec<usize> = if n <= CDF_MAX_POINTS {
            (0..n).collect()
        } else {
            (0..CDF_MAX_POINTS)
                .map(|k| k * (n - 1) / (CDF_MAX_POINTS - 1))
                .collect()
        };
        let mut points = vec![(ms[0], 0.0)];
        points.extend(ranks.iter().map(|&r| (ms[r], (r + 1) as f64 / n as f64)));
        return Some(FlowCdf {
            points,
            mark: Mark::Line,
            note: format!("RTT, {}", replies(f)),
        });
    }
    let s = f.latency_ms?;
    let points = vec![(s.p50, 0.5), (s.p90, 0.9), (s.p99, 0.99), (s.max, 1.0)];
    let note = format!(
        "one-way p50/p90/p99/max · {}",
        format_rate(f.throughput_bps)
    );
    Some(FlowCdf {
        points,
        mark: Mark::Dots,
        note,
    })
}

/// How many echo replies a flow's samples are: "N replies", or "N of M replies" when
/// the run kept every `sample_stride`-th.
fn replies(f: &FlowResult) -> String {
    let n = f.rtt_samples.len();
    if f.sample_stride > 1 {
        format!("{n} of {} replies", f.delivered_packets)
    } else {
        format!("{n} replies")
    }
}

fn format_rate(bps: f64) -> String {
    if bps >= 1e6 {
        format!("{:.1} Mbit/s", bps / 1e6)
    } else {
        format!("{:.0} kbit/s", bps / 1e3)
    }
}

/// At most `max_points` of a time series: all of it when short enough, else, for each of
/// `max_points / 2` equal stretches of consecutive points, its lowest and its highest
/// point in time order, so that spikes survive.
fn envelope(points: &[(f64, f64)], max_points: usize) -> Vec<(f64, f64)> {
    if points.len() <= max_points {
        return points.to_vec();
    }
    let stretches = (max_points / 2).max(1);
    let mut out = Vec::with_capacity(2 * stretches);
    for k in 0..stretches {
        let part = &points[k * points.len() / stretches..(k + 1) * points.len() / stretches];
        let lowest = part.iter().min_by(|a, b| a.1.total_cmp(&b.1));
        let highest = part.iter().max_by(|a, b| a.1.total_cmp(&b.1));
        if let (Some(&lo), Some(&hi)) = (lowest, highest) {
            if lo.0 <= hi.0 {
                out.extend([lo, hi]);
            } else {
                out.extend([hi, lo]);
            }
        }
    }
    out
}

/// Matches the flows to draw across runs by position: panel k holds each run's k-th
/// flow of `pick`, titled with the first run's name for it (not its throughput, which
/// differs run by run: a title would speak for the first run alone).
fn panels_by_flow(
    runs: &[PlotRun<'_>],
    pick: fn(&Results) -> Vec<usize>,
    series: impl Fn(&FlowResult) -> Option<(Vec<(f64, f64)>, Mark)>,
) -> Vec<Panel> {
    let picked: Vec<Vec<usize>> = runs.iter().map(|r| pick(r.results)).collect();
    let count = picked.iter().map(Vec::len).max().unwrap_or(0);
    (0..count)
        .map(|k| {
            let mut title = None;
            let mut list = Vec::new();
            for (j, run) in runs.iter().enumerate() {
                let Some(&i) = picked[j].get(k) else { continue };
                title.get_or_insert_with(|| flow_names(run.results)[i].clone());
                if let Some((points, mark)) = series(&run.results.flows[i]) {
                    list.push(Series {
                        colour: colour(j),
                        points,
                        mark,
                    });
                }
            }
            Panel {
                y: None,
                title,
                series: list,
            }
        })
        .filter(|p| !p.series.is_empty())
        .collect()
}

fn runs_legend(runs: &[PlotRun<'_>]) -> Legend {
    Legend {
        header: "run".into(),
        entries: runs
            .iter()
            .enumerate()
            .map(|(j, r)| LegendEntry {
                name: r.label.to_string(),
                note: String::new(),
                colour: colour(j),
                mark: Mark::Line,
            })
            .collect(),
    }
}

/// Latency over time: every echo reply's RTT at the time it arrived (flent's `ping`
/// plot). Flows without echo samples have only summaries and are not drawn here.
fn latency_time_figure(title: &str, runs: &[PlotRun<'_>]) -> Option<LineFigure> {
    let rtt_points = |f: &FlowResult| envelope(&f.rtt_samples, SERIES_MAX_POINTS);
    let (panels, legend) = if let [run] = runs {
        let names = flow_names(run.results);
        let flows = echo_flows(run.results);
        let series: Vec<Series> = flows
            .iter()
            .map(|&i| Series {
                colour: colour(i),
                points: rtt_points(&run.results.flows[i]),
                mark: Mark::Line,
            })
            .collect();
        let entries = flows
            .iter()
            .map(|&i| LegendEntry {
                name: names[i].clone(),
                note: format!("RTT, {}", replies(&run.results.flows[i])),
                colour: colour(i),
                mark: Mark::Line,
            })
            .collect();
        let panel = Panel {
            y: None,
            title: None,
            series,
        };
        (
            vec![panel],
            Legend {
                header: run.label.to_string(),
                entries,
            },
        )
    } else {
        let panels = panels_by_flow(runs, echo_flows, |f| Some((rtt_points(f), Mark::Line)));
        (panels, runs_legend(runs))
    };
    if panels.iter().all(|p| p.series.is_empty()) {
        return None;
    }
    Some(LineFigure {
        stem: "latency-time",
        heading: format!("{title}: latency over time"),
        x: time_axis(runs),
        y: latency_axis("round-trip time (ms)", &panels),
        panels,
        legend,
    })
}

/// Latency CDF (flent's `ping_cdf`): the fraction of replies at or under each RTT; for
/// flows with only a one-way summary, its percentiles as dots.
fn latency_cdf_figure(title: &str, runs: &[PlotRun<'_>]) -> Option<LineFigure> {
    let (panels, legend) = if let [run] = runs {
        let names = flow_names(run.results);
        let mut series = Vec::new();
        let mut entries = Vec::new();
        for i in latency_flows(run.results) {
            let Some(FlowCdf { points, mark, note }) = latency_cdf(&run.results.flows[i]) else {
                continue;
            };
            series.push(Series {
                colour: colour(i),
                points,
                mark,
            });
            entries.push(LegendEntry {
                name: names[i].clone(),
                note,
                colour: colour(i),
                mark,
            });
        }
        let panel = Panel {
            y: None,
            title: None,
            series,
        };
        (
            vec![panel],
            Legend {
                header: run.label.to_string(),
                entries,
            },
        )
    } else {
        // The echo probes when there are any (the headline: what a ping sees under
        // load); else every flow with a latency summary.
        let pick: fn(&Results) -> Vec<usize> =
            if runs.iter().any(|r| !echo_flows(r.results).is_empty()) {
                echo_flows
            } else {
                latency_flows
            };
        let panels = panels_by_flow(runs, pick, |f| latency_cdf(f).map(|c| (c.points, c.mark)));
        (panels, runs_legend(runs))
    };
    if panels.iter().all(|p| p.series.is_empty()) {
        return None;
    }
    let marks: Vec<Mark> = panels
        .iter()
        .flat_map(|p| &p.series)
        .map(|s| s.mark)
        .collect();
    let x_label = if marks.iter().all(|&m| m == Mark::Dots) {
        "one-way latency (ms): p50, p90, p99 and max"
    } else if marks.contains(&Mark::Dots) {
        "latency (ms): round trip for pings, one way for other flows"
    } else {
        "round-trip time (ms)"
    };
    let x = latency_axis(x_label, &transpose(&panels));
    Some(LineFigure {
        stem: "latency-cdf",
        heading: format!("{title}: latency CDF"),
        x,
        y: Axis {
            marks: Vec::new(),
            label: "fraction of packets ≤ latency".into(),
            min: 0.0,
            // Room above 1 so that the curves' tops and the max dots are not cut.
            max: 1.04,
            scale: Scale::Linear,
            names: &[],
        },
        panels,
        legend,
    })
}

/// The same panels with x and y swapped, to reuse `latency_axis` for an x axis.
fn transpose(panels: &[Panel]) -> Vec<Panel> {
    panels
        .iter()
        .map(|p| Panel {
            y: None,
            title: None,
            series: p
                .series
                .iter()
                .map(|s| Series {
                    colour: s.colour,
                    points: s.points.iter().map(|&(x, y)| (y, x)).collect(),
                    mark: s.mark,
                })
                .collect(),
        })
        .collect()
}

/// An axis spanning the y values of every series: from 0 on a linear scale, or a log
/// scale when the values span more than `LOG_SPAN_RATIO`.
fn latency_axis(label: &str, panels: &[Panel]) -> Axis {
    let ys = || {
        panels
            .iter()
            .flat_map(|p| &p.series)
            .flat_map(|s| s.points.iter().map(|&(_, y)| y))
            .filter(|y| y.is_finite() && *y > 0.0)
    };
    let lo = ys().fold(f64::INFINITY, f64::min);
    let hi = ys().fold(0.0, f64::max);
    if hi > 0.0 && hi / lo >= LOG_SPAN_RATIO {
        Axis {
            marks: Vec::new(),
            label: label.into(),
            min: lo / 1.25,
            max: hi * 1.25,
            scale: Scale::Log,
            names: &[],
        }
    } else {
        Axis {
            marks: Vec::new(),
            label: label.into(),
            min: 0.0,
            max: if hi > 0.0 { hi * 1.05 } else { 1.0 },
            scale: Scale::Linear,
            names: &[],
        }
    }
}

/// Throughput over time: each bulk flow's samples (per 0.2 s, or the run's coarser
/// `series_step_s`) and, with several flows, their total (flent's `tcp_download` and
/// `totals`). For a comparison, each run's total.
fn throughput_figure(title: &str, runs: &[PlotRun<'_>]) -> Option<LineFigure> {
    let mbps_points = |series: &[f64], step_s: f64| -> Vec<(f64, f64)> {
        let points: Vec<(f64, f64)> = series
            .iter()
            .enumerate()
            .map(|(k, &bps)| ((k + 1) as f64 * step_s, bps / 1e6))
            .collect();
        envelope(&points, SERIES_MAX_POINTS)
    };
    let total = |r: &Results| -> Vec<f64> {
        let flows = bulk_flows(r);
        let len = flows
            .iter()
            .map(|&i| r.flows[i].throughput_series_bps.len())
            .max()
            .unwrap_or(0);
        (0..len)
            .map(|k| {
                flows
                    .iter()
                    .filter_map(|&i| r.flows[i].throughput_series_bps.get(k))
                    .sum()
            })
            .collect()
    };
    let (series, legend) = if let [run] = runs {
        let r = run.results;
        let names = flow_names(r);
        let flows = bulk_flows(r);
        let mut series = Vec::new();
        let mut entries = Vec::new();
        for &i in &flows {
            series.push(Series {
                colour: colour(i),
                points: mbps_points(&r.flows[i].throughput_series_bps, r.series_step_s),
                mark: Mark::Line,
            });
            entries.push(LegendEntry {
                name: names[i].clone(),
                note: format!("mean {}", format_rate(r.flows[i].throughput_bps)),
                colour: colour(i),
                mark: Mark::Line,
            });
        }
        if flows.len() > 1 {
            series.push(Series {
                colour: BLACK,
                points: mbps_points(&total(r), r.series_step_s),
                mark: Mark::Thin,
            });
            let mean: f64 = flows.iter().map(|&i| r.flows[i].throughput_bps).sum();
            entries.push(LegendEntry {
                name: "total".into(),
                note: format!("mean {}", format_rate(mean)),
                colour: BLACK,
                mark: Mark::Thin,
            });
        }
        let header = run.label.to_string();
        (series, Legend { header, entries })
    } else {
        let series = runs
            .iter()
            .enumerate()
            .map(|(j, r)| Series {
                colour: colour(j),
                points: mbps_points(&total(r.results), r.results.series_step_s),
                mark: Mark::Line,
            })
            .collect();
        (series, runs_legend(runs))
    };
    let heading = if runs.len() > 1 {
        format!("{title}: total throughput over time")
    } else {
        format!("{title}: throughput over time")
    };
    let step_s = runs
        .first()
        .map_or(MIN_TIME_AXIS_S, |r| r.results.series_step_s);
    let per = if runs.iter().all(|r| r.results.series_step_s == step_s) {
        format!("per {step_s} s")
    } else {
        "per each run's step".to_string()
    };
    time_series_figure(
        "throughput",
        heading,
        format!("throughput (Mbit/s, {per})"),
        runs,
        series,
        legend,
    )
}

/// One panel of series over the runs' time, from 0 to the longest run, the y axis from
/// 0 to a little above the highest point; `None` when no point is above 0.
/// `"LABEL: "` before run `j`'s legend entries when several runs share a plot;
/// nothing for one.
fn run_prefix(runs: &[PlotRun<'_>], j: usize) -> String {
    if runs.len() > 1 {
        format!("{}: ", runs[j].label)
    } else {
        String::new()
    }
}

/// The rate legend's header: the run's label, or "runs" when several share it.
fn rate_legend_header(runs: &[PlotRun<'_>]) -> String {
    if let [run] = runs {
        run.label.to_string()
    } else {
        "runs".to_string()
    }
}

fn time_series_figure(
    stem: &'static str,
    heading: String,
    y_label: String,
    runs: &[PlotRun<'_>],
    series: Vec<Series>,
    legend: Legend,
) -> Option<LineFigure> {
    let hi = highest_y(&series);
    if hi <= 0.0 {
        return None;
    }
    Some(LineFigure {
        stem,
        heading,
        x: time_axis(runs),
        y: Axis {
            marks: Vec::new(),
            label: y_label,
            min: 0.0,
            max: hi * 1.08,
            scale: Scale::Linear,
            names: &[],
        },
        panels: vec![Panel {
            y: None,
            title: None,
            series,
        }],
        legend,
    })
}

/// The time axis of `runs`' plots: from 0 to the longest run.
fn time_axis(runs: &[PlotRun<'_>]) -> Axis {
    Axis {
        marks: Vec::new(),
        label: "time (s)".into(),
        min: 0.0,
        max: longest_duration_s(runs).max(MIN_TIME_AXIS_S),
        scale: Scale::Linear,
        names: &[],
    }
}

/// The highest y of any point of `series` (0 for none).
fn highest_y(series: &[Series]) -> f64 {
    series
        .iter()
        .flat_map(|s| s.points.iter().map(|&(_, y)| y))
        .fold(0.0, f64::max)
}

/// The longest run's simulated duration, s.
fn longest_duration_s(runs: &[PlotRun<'_>]) -> f64 {
    runs.iter()
        .map(|r| r.results.duration_s)
        .fold(0.0, f64::max)
}

/// The PHY rate rate control chose over time: per station and direction that sent
/// data, the airtime-weighted mean rate of each series step (steps without data are
/// left out). Absent when every station has a fixed rate.
fn rate_figure(title: &str, runs: &[PlotRun<'_>]) -> Option<LineFigure> {
    let mut series = Vec::new();
    let mut entries = Vec::new();
    for (j, run) in runs.iter().enumerate() {
        let r = run.results;
        for st in &r.stations {
            let Some(rc) = st.rate_control.as_ref() else {
                continue;
            };
            for (dir, link) in [("down", &rc.downlink), ("up", &rc.uplink)] {
                let points: Vec<(f64, f64)> = link
                    .rate_series_bps
                    .iter()
                    .enumerate()
                    .filter(|&(_, &bps)| bps > 0.0)
                    .map(|(k, &bps)| ((k + 1) as f64 * r.series_step_s, bps / 1e6))
                    .collect();
                if points.is_empty() {
                    continue;
                }
                let c = colour(series.len());
                series.push(Series {
                    colour: c,
                    points: envelope(&points, SERIES_MAX_POINTS),
                    mark: Mark::Line,
                });
                let run_name = run_prefix(runs, j);
                entries.push(LegendEntry {
                    name: format!("{run_name}station {} {dir}", st.station),
                    note: format!("{}, {} probes", rc.kind, link.probes),
                    colour: c,
                    mark: Mark::Line,
                });
            }
        }
    }
    let header = rate_legend_header(runs);
    time_series_figure(
        "rate",
        format!("{title}: PHY rate over time"),
        "PHY rate (Mbit/s, airtime-weighted mean per step)".into(),
        runs,
        series,
        Legend { header, entries },
    )
}

/// TCP senders over time, from their per-step series (`cwnd_series_bytes`,
/// `srtt_series_ms`, `delivery_rate_series_bps`, `pacing_rate_series_bps`,
/// `bbr_mode_series`): one figure each, a line per TCP flow (per run and flow in a
/// comparison, the run's label first), each point at the end of its step.
mod tcp {
    use super::*;

    /// Lines beyond this many are left out (results.json holds every flow's series): the
    /// palette's colours, so that no two lines share one.
    const MAX_LINES: usize = PALETTE.len();

    /// The TCP flows of the runs that have a series for `has`: (run, flow) pairs, at
    /// most [`MAX_LINES`], and how many were left out.
    fn picked(
        runs: &[PlotRun<'_>],
        has: impl Fn(&FlowResult) -> bool + Copy,
    ) -> (Vec<(usize, usize)>, usize) {
        let all: Vec<(usize, usize)> = runs
            .iter()
            .enumerate()
            .flat_map(|(j, r)| {
                (0..r.results.flows.len())
                    .filter(move |&i| has(&r.results.flows[i]))
                    .map(move |i| (j, i))
            })
            .collect();
        let left_out = all.len().saturating_sub(MAX_LINES);
        (all.into_iter().take(MAX_LINES).collect(), left_out)
    }

    /// Points at the end of each step of `values` that has a value.
    fn points(values: &[Option<f64>], step_s: f64) -> Vec<(f64, f64)> {
        let points: Vec<(f64, f64)> = values
            .iter()
            .enumerate()
            .filter_map(|(k, v)| v.map(|v| ((k + 1) as f64 * step_s, v)))
            .collect();
        envelope(&points, SERIES_MAX_POINTS)
    }

    /// The legend's entry for flow `i` of run `j`: its name, and its retransmissions and
    /// timeouts.
    fn entry(runs: &[PlotRun<'_>], (j, i): (usize, usize), colour: RGBColor) -> LegendEntry {
        let f = &runs[j].results.flows[i];
        LegendEntry {
            name: format!("{}{}", run_prefix(runs, j), flow_names(runs[j].results)[i]),
            note: format!(
                "{} retransmits, {} timeouts",
                f.retransmits.unwrap_or(0),
                f.timeouts.unwrap_or(0)
            ),
            colour,
            mark: Mark::Line,
        }
    }

    /// The legend's header: the run's label (or "runs"), and how many flows are not
    /// drawn.
    fn header(runs: &[PlotRun<'_>], left_out: usize) -> String {
        let h = rate_legend_header(runs);
        if left_out > 0 {
            format!("{h} ({left_out} more flows in results.json)")
        } else {
            h
        }
    }

    /// One line per picked flow of `value`'s series.
    fn line_figure(
        title: &str,
        runs: &[PlotRun<'_>],
        (stem, what, y_label): (&'static str, &str, &str),
        value: fn(&FlowResult) -> Vec<Option<f64>>,
    ) -> Option<LineFigure> {
        let (flows, left_out) = picked(runs, |f| value(f).iter().any(Option::is_some));
        let mut series = Vec::new();
        let mut entries = Vec::new();
        for (n, &(j, i)) in flows.iter().enumerate() {
            let r = runs[j].results;
            series.push(Series {
                colour: colour(n),
                points: points(&value(&r.flows[i]), r.series_step_s),
                mark: Mark::Line,
            });
            entries.push(entry(runs, (j, i), colour(n)));
        }
        let legend = Legend {
            header: header(runs, left_out),
            entries,
        };
        time_series_figure(
            stem,
            format!("{title}: TCP {what} over time"),
            y_label.into(),
            runs,
            series,
            legend,
        )
    }

    pub(super) fn figures(title: &str, runs: &[PlotRun<'_>]) -> Vec<LineFigure> {
        let cwnd = line_figure(
            title,
            runs,
            (
                "tcp-cwnd",
                "congestion window",
                "cwnd (kB, at the end of each step)",
            ),
            // The steps before the first ACK carry the first ACK's cwnd in
            // results.json; the plot starts where the sender does (its first RTT
            // sample, with that ACK).
            |f| {
                let started = |k: usize| f.srtt_series_ms.get(k).is_none_or(Option::is_some);
                (f.cwnd_series_bytes.iter().enumerate())
                    .map(|(k, &b)| started(k).then_some(b as f64 / 1e3))
                    .collect()
            },
        );
        let srtt = line_figure(
            title,
            runs,
            (
                "tcp-srtt",
                "smoothed RTT",
                "srtt (ms, at the end of each step)",
            ),
            |f| f.srtt_series_ms.clone(),
        );
        cwnd.into_iter()
            .chain(srtt)
            .chain(rate_figure(title, runs))
            .chain(bbr_figure(title, runs))
            .collect()
    }

    fn mbps(values: &[Option<u64>]) -> Vec<Option<f64>> {
        values.iter().map(|v| v.map(|b| b as f64 / 1e6)).collect()
    }

    /// Delivery rate (a line) and pacing rate (a thin line of the same colour) per flow.
    fn rate_figure(title: &str, runs: &[PlotRun<'_>]) -> Option<LineFigure> {
        let (flows, left_out) = picked(runs, |f| !f.delivery_rate_series_bps.is_empty());
        let mut series = Vec::new();
        let mut entries = Vec::new();
        for (n, &(j, i)) in flows.iter().enumerate() {
            let r = runs[j].results;
            let f = &r.flows[i];
            series.push(Series {
                colour: colour(n),
                points: points(&mbps(&f.delivery_rate_series_bps), r.series_step_s),
                mark: Mark::Line,
            });
            if !f.pacing_rate_series_bps.is_empty() {
                series.push(Series {
                    colour: colour(n),
                    points: points(&mbps(&f.pacing_rate_series_bps), r.series_step_s),
                    mark: Mark::Thin,
                });
            }
            entries.push(entry(runs, (j, i), colour(n)));
        }
        let legend = Legend {
            header: header(runs, left_out),
            entries,
        };
        if highest_y(&series) <= 0.0 {
            return None;
        }
        // A pacing rate set from the first RTT sample can be many times the rate the
        // path delivers: a log axis keeps both readable.
        let panels = vec![Panel {
            y: None,
            title: None,
            series,
        }];
        Some(LineFigure {
            stem: "tcp-rate",
            heading: format!("{title}: TCP delivery rate (thick) and pacing rate (thin)"),
            x: time_axis(runs),
            y: latency_axis("rate (Mbit/s, at the end of each step)", &panels),
            panels,
            legend,
        })
    }

    /// BBR's mode per flow: within each step the modes it passed through, in order,
    /// spread evenly over the step, so that a line traces the state machine.
    fn bbr_figure(title: &str, runs: &[PlotRun<'_>]) -> Option<LineFigure> {
        use txop_results::flowstats::BbrMode;
        const MODES: [&str; 4] = [
            BbrMode::Startup.name(),
            BbrMode::Drain.name(),
            BbrMode::ProbeBw.name(),
            BbrMode::ProbeRtt.name(),
        ];
        let (flows, left_out) = picked(runs, |f| f.bbr_mode_series.iter().any(|m| !m.is_empty()));
        if flows.is_empty() {
            return None;
        }
        let mut series = Vec::new();
        let mut entries = Vec::new();
        for (n, &(j, i)) in flows.iter().enumerate() {
            let r = runs[j].results;
            let step_s = r.series_step_s;
            // Flows one above another by a fraction of a mode, so that lines in the same
            // mode stay apart.
            let offset = (n as f64 - (flows.len() - 1) as f64 / 2.0) * 0.3 / flows.len() as f64;
            let mut trace = Vec::new();
            for (k, modes) in r.flows[i].bbr_mode_series.iter().enumerate() {
                for (m, mode) in modes.iter().enumerate() {
                    let y = MODES.iter().position(|x| x == mode).unwrap_or(0) as f64;
                    let x = (k as f64 + (m as f64 + 0.5) / modes.len() as f64) * step_s;
                    trace.push((x, y + offset));
                }
            }
            series.push(Series {
                colour: colour(n),
                points: envelope(&trace, SERIES_MAX_POINTS),
                mark: Mark::Line,
            });
            entries.push(entry(runs, (j, i), colour(n)));
        }
        Some(LineFigure {
            stem: "tcp-bbr",
            heading: format!("{title}: BBR's mode over time"),
            x: time_axis(runs),
            y: Axis {
                marks: Vec::new(),
                // The mode names are the tick labels.
                label: String::new(),
                min: -0.5,
                max: 3.5,
                scale: Scale::Linear,
                names: &MODES,
            },
            panels: vec![Panel {
                y: None,
                title: None,
                series,
            }],
            legend: Legend {
                header: header(runs, left_out),
                entries,
            },
        })
    }
}

/// Per-station throughput and airtime share, one bar per run in each station's group.
fn stations_figure(title: &str, runs: &[PlotRun<'_>]) -> Option<BarFigure> {
    let mut stations: Vec<u16> = runs
        .iter()
        .flat_map(|r| r.results.stations.iter().map(|s| s.station))
        .collect();
    stations.sort_unstable();
    stations.dedup();
    if stations.is_empty() {
        return None;
    }
    // A station's rate as each run reports it: one name if the runs agree, else each
    // run's in the runs' order (a comparison of rate controls or stacks).
    let rate_of = |n: u16| {
        let mut rates: Vec<&str> = Vec::new();
        for s in runs.iter().flat_map(|r| &r.results.stations) {
            if s.station == n && !rates.contains(&s.rate.as_str()) {
                rates.push(&s.rate);
            }
        }
        rates.join(" / ")
    };
    let rates: Vec<String> = stations.iter().map(|&n| rate_of(n)).collect();
    let same_rate = rates.iter().all(|r| *r == rates[0]);
    let x_label = if same_rate {
        format!("station (all {})", rates[0])
    } else {
        "station (link rate)".into()
    };
    let column =
        |value: fn(&txop_results::results::StationResult) -> f64| -> Vec<Vec<Option<f64>>> {
            runs.iter()
                .map(|r| {
                    stations
                        .iter()
                        .map(|&n| {
                            r.results
                                .stations
                                .iter()
                                .find(|s| s.station == n)
                                .map(value)
                        })
                        .collect()
                })
                .collect()
        };
    let counts: Vec<usize> = runs.iter().map(|r| r.results.stations.len()).collect();
    let equal_share =
        (counts.iter().all(|&c| c == counts[0]) && counts[0] > 1).then(|| 100.0 / counts[0] as f64);
    let airtime_title = match equal_share {
        Some(share) => {
            format!("airtime share of the busy medium (dashed: equal share, {share:.0} %)")
        }
        None => "airtime share of the busy medium".into(),
    };
    Some(BarFigure {
        stem: "stations",
        heading: format!("{title}: per-station throughput and airtime"),
        groups: stations.iter().map(|n| format!("sta{n}")).collect(),
        group_notes: (!same_rate).then_some(rates),
        x_label,
        runs: runs
            .iter()
            .enumerate()
            .map(|(j, r)| (r.label.to_string(), colour(j)))
            .collect(),
        panels: vec![
            BarPanel {
                title: "throughput (both directions)".into(),
                y_label: "throughput (Mbit/s)".into(),
                values: column(|s| s.throughput_bps / 1e6),
                unit: "",
                reference: None,
            },
            BarPanel {
                title: airtime_title,
                y_label: "airtime share (%)".into(),
                values: column(|s| s.airtime_share * 100.0),
                unit: " %",
                reference: equal_share,
            },
        ],
    })
}

// ---------------------------------------------------------------------------------------
// Drawing, generic over the backend (PNG through a pixel buffer, SVG as text).
// ---------------------------------------------------------------------------------------

/// The family the text styles name; registered with the embedded font for the bitmap
/// backend, and the generic family an SVG viewer maps to its own sans-serif font.
const FONT: &str = "sans-serif";
static FONT_TTF: &[u8] = include_bytes!("../assets/DejaVuSans-subset.ttf");

fn register_font() -> Result<(), String> {
    static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            plotters::style::register_font(FONT, FontStyle::Normal, FONT_TTF)
                .map_err(|_| "the embedded plot font is not a valid TrueType font".to_string())
        })
        .clone()
}

const WIDTH_PX: u32 = 1100;
const HEADING_PX: u32 = 46;
const PANEL_HEIGHT_PX: u32 = 420;
const SINGLE_HEIGHT_PX: u32 = 620;
const LEGEND_MIN_PX: u32 = 150;
const LEGEND_MAX_PX: u32 = 340;
const HEADING_SIZE: f64 = 24.0;
const CAPTION_SIZE: f64 = 17.0;
const AXIS_DESC_SIZE: f64 = 16.0;
const TICK_SIZE: f64 = 14.0;
const LEGEND_SIZE: f64 = 15.0;
const NOTE_SIZE: f64 = 12.5;
/// A bar chart is at least this many stations wide, so that one station's bars are
/// not a wall.
const MIN_BAR_SLOTS: usize = 4;
const GREY: RGBColor = RGBColor(0x55, 0x55, 0x55);

impl LineFigure {
    /// Panels in two columns when there are several.
    fn grid(&self) -> (usize, usize) {
        let n = self.panels.len().max(1);
        let cols = if n == 1 { 1 } else { 2 };
        (n.div_ceil(cols), cols)
    }
}

fn size_of(figure: &Figure) -> (u32, u32) {
    match figure {
        Figure::Lines(f) => {
            let (rows, _) = f.grid();
            let height = if rows == 1 {
                SINGLE_HEIGHT_PX
            } else {
                HEADING_PX + rows as u32 * PANEL_HEIGHT_PX
            };
            (WIDTH_PX, height)
        }
        Figure::Bars(f) => (WIDTH_PX, HEADING_PX + f.panels.len() as u32 * 400),
        Figure::Budget(f) => (WIDTH_PX, f.height_px()),
    }
}

fn svg_string(figure: &Figure) -> Result<String, String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size_of(figure)).into_drawing_area();
        draw(&root, figure)?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

fn png_bytes(figure: &Figure) -> Result<Vec<u8>, String> {
    let (w, h) = size_of(figure);
    let mut rgb = vec![0u8; w as usize * h as usize * 3];
    {
        let root =
            PngCanvas::new(BitMapBackend::with_buffer(&mut rgb, (w, h)))?.into_drawing_area();
        draw(&root, figure)?;
        root.present().map_err(|e| e.to_string())?;
    }
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, w, h);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(|e| e.to_string())?;
    writer.write_image_data(&rgb).map_err(|e| e.to_string())?;
    writer.finish().map_err(|e| e.to_string())?;
    Ok(out)
}

/// The bitmap backend with its text drawn here: plotters 0.3.7's `ab_glyph` text puts
/// each glyph's ink box at the pen position, ignoring the side bearings, so that "6.16"
/// reads "6. 1 6". This draws each glyph at its pen position and lets ab_glyph place the
/// ink, inside the same layout box plotters measures (advance widths at `PxScale(size)`,
/// `size / 1.24` high), so layouts match the SVG's. Everything else is the bitmap's.
struct PngCanvas<'a> {
    bitmap: BitMapBackend<'a>,
    font: ab_glyph::FontRef<'static>,
    /// Height of a capital letter over `PxScale` height: digits and capitals are
    /// centred on a label's anchor.
    cap_height_ratio: f32,
}

impl<'a> PngCanvas<'a> {
    fn new(bitmap: BitMapBackend<'a>) -> Result<Self, String> {
        use ab_glyph::Font;
        let font = ab_glyph::FontRef::try_from_slice(FONT_TTF)
            .map_err(|_| "the embedded plot font is not a valid TrueType font".to_string())?;
        let cap = font
            .outline(font.glyph_id('H'))
            .map_or(0.0, |o| (o.bounds.max.y - o.bounds.min.y).abs());
        let cap_height_ratio = cap / font.height_unscaled();
        Ok(PngCanvas {
            bitmap,
            font,
            cap_height_ratio,
        })
    }
}

impl DrawingBackend for PngCanvas<'_> {
    type ErrorType = <BitMapBackend<'static> as DrawingBackend>::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.bitmap.get_size()
    }
    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.bitmap.ensure_prepared()
    }
    fn present(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.bitmap.present()
    }
    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.bitmap.draw_pixel(point, color)
    }
    fn draw_line<S: plotters_backend::BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.bitmap.draw_line(from, to, style)
    }
    fn draw_rect<S: plotters_backend::BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.bitmap.draw_rect(upper_left, bottom_right, style, fill)
    }
    fn draw_path<S: plotters_backend::BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.bitmap.draw_path(path, style)
    }
    fn draw_circle<S: plotters_backend::BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.bitmap.draw_circle(center, radius, style, fill)
    }
    fn fill_polygon<S: plotters_backend::BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.bitmap.fill_polygon(vert, style)
    }
    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.bitmap.blit_bitmap(pos, size, src)
    }

    fn draw_text<TStyle: plotters_backend::BackendTextStyle>(
        &mut self,
        text: &str,
        style: &TStyle,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        use ab_glyph::{Font, ScaleFont};
        let colour = style.color();
        if colour.alpha == 0.0 {
            return Ok(());
        }
        let scale = ab_glyph::PxScale::from(style.size() as f32);
        let font = self.font.as_scaled(scale);
        // The layout box, as plotters' ab_glyph estimate measures it.
        let height = (style.size() / 1.24) as i32;
        let baseline = height as f32 / 2.0 + self.cap_height_ratio * scale.y / 2.0;
        let mut glyphs = Vec::new();
        let mut pen = 0.0f32;
        let mut prev = None;
        for c in text.chars() {
            let id = font.glyph_id(c);
            if let Some(p) = prev {
                pen += font.kern(p, id);
            }
            glyphs.push(id.with_scale_and_position(scale, ab_glyph::point(pen, baseline)));
            pen += font.h_advance(id);
            prev = Some(id);
        }
        let width = pen as i32;
        let dx = match style.anchor().h_pos {
            HPos::Left => 0,
            HPos::Right => -width,
            HPos::Center => -width / 2,
        };
        let dy = match style.anchor().v_pos {
            VPos::Top => 0,
            VPos::Center => -height / 2,
            VPos::Bottom => -height,
        };
        let transform = style.transform();
        let (w, h) = self.get_size();
        let mut ink = Vec::new();
        for glyph in glyphs {
            let Some(outline) = font.outline_glyph(glyph) else {
                continue;
            };
            let bounds = outline.px_bounds();
            outline.draw(|x, y, coverage| {
                if coverage > 0.0 {
                    let gx = bounds.min.x as i32 + x as i32 + dx;
                    let gy = bounds.min.y as i32 + y as i32 + dy;
                    let (tx, ty) = transform.transform(gx, gy);
                    ink.push(((pos.0 + tx, pos.1 + ty), coverage.min(1.0)));
                }
            });
        }
        for ((x, y), coverage) in ink {
            if x >= 0 && y >= 0 && x < w as i32 && y < h as i32 {
                let alpha = colour.alpha * f64::from(coverage);
                self.bitmap.draw_pixel(
                    (x, y),
                    BackendColor {
                        alpha,
                        rgb: colour.rgb,
                    },
                )?;
            }
        }
        Ok(())
    }
}

type Area<DB> = DrawingArea<DB, Shift>;

fn draw<DB: DrawingBackend>(root: &Area<DB>, figure: &Figure) -> Result<(), String> {
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    match figure {
        Figure::Lines(f) => draw_lines(root, f),
        Figure::Bars(f) => draw_bars(root, f),
        Figure::Budget(f) => draw_budget(root, f),
    }
}

/// Splits off the heading and the legend column; returns the plotting area.
fn frame<DB: DrawingBackend>(
    root: &Area<DB>,
    heading: &str,
    legend: &Legend,
) -> Result<Area<DB>, String> {
    let (head, body) = root.split_vertically(HEADING_PX);
    head.draw_text(
        heading,
        &TextStyle::from((FONT, HEADING_SIZE).into_font())
            .pos(Pos::new(HPos::Center, VPos::Center)),
        (WIDTH_PX as i32 / 2, HEADING_PX as i32 / 2 + 2),
    )
    .map_err(|e| e.to_string())?;
    let legend_px = legend_width(legend);
    let (plots, side) = body.split_horizontally(WIDTH_PX - legend_px);
    draw_legend(&side, legend)?;
    Ok(plots)
}

fn text_width(text: &str, size: f64) -> u32 {
    (FONT, size)
        .into_font()
        .box_size(text)
        .map_or(0, |(w, _)| w)
}

fn legend_width(legend: &Legend) -> u32 {
    let widest = legend
        .entries
        .iter()
        .map(|e| text_width(&e.name, LEGEND_SIZE).max(text_width(&e.note, NOTE_SIZE)))
        .chain([text_width(&legend.header, LEGEND_SIZE)])
        .max()
        .unwrap_or(0);
    (widest + 60).clamp(LEGEND_MIN_PX, LEGEND_MAX_PX)
}

/// Shortens `text` to fit `max_px` with an ellipsis in the middle, keeping a third of
/// what is left from its start and two thirds from its end: labels that differ, such
/// as a comparison's `linux-6.16, stack_options.aql_limit_low_us=5000`, differ at the
/// end, which a cut at the end would lose.
fn fit(text: &str, size: f64, max_px: u32) -> String {
    if text_width(text, size) <= max_px {
        return text.to_string();
    }
    let chars: Vec<char> = text.chars().collect();
    let mut n = chars.len();
    while n > 1 {
        n -= 1;
        let head = n / 3;
        let tail = n - head;
        let s: String = chars[..head]
            .iter()
            .chain(['…'].iter())
            .chain(chars[chars.len() - tail..].iter())
            .collect();
        if text_width(&s, size) <= max_px {
            return s;
        }
    }
    "…".into()
}

fn draw_legend<DB: DrawingBackend>(area: &Area<DB>, legend: &Legend) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let (w, h) = area.dim_in_pixel();
    let text_px = w.saturating_sub(58);
    let name_style = TextStyle::from((FONT, LEGEND_SIZE).into_font());
    let note_style = TextStyle::from((FONT, NOTE_SIZE).into_font()).color(&GREY);
    let mut y = 22;
    area.draw_text(
        &fit(&legend.header, LEGEND_SIZE, w - 20),
        &name_style.color(&GREY),
        (10, y),
    )
    .map_err(e)?;
    y += 28;
    for (k, entry) in legend.entries.iter().enumerate() {
        let needed = if entry.note.is_empty() { 24 } else { 40 };
        if y + needed > h as i32 - 10 {
            let more = format!("… {} more", legend.entries.len() - k);
            area.draw_text(&more, &note_style, (10, y)).map_err(e)?;
            break;
        }
        let mid = y + 8;
        match entry.mark {
            Mark::Block => area
                .draw(&Rectangle::new(
                    [(14, mid - 7), (34, mid + 7)],
                    entry.colour.filled(),
                ))
                .map_err(e)?,
            Mark::Line | Mark::Thin | Mark::Dots | Mark::Whiskers => {
                let stroke = if entry.mark == Mark::Line { 3 } else { 1 };
                area.draw(&PathElement::new(
                    vec![(10, mid), (40, mid)],
                    entry.colour.stroke_width(stroke),
                ))
                .map_err(e)?;
            }
        }
        if entry.mark == Mark::Dots {
            area.draw(&Circle::new((25, mid), 4, entry.colour.filled()))
                .map_err(e)?;
        }
        area.draw_text(
            &fit(&entry.name, LEGEND_SIZE, text_px),
            &name_style,
            (48, y),
        )
        .map_err(e)?;
        y += 20;
        if !entry.note.is_empty() {
            area.draw_text(&fit(&entry.note, NOTE_SIZE, text_px), &note_style, (48, y))
                .map_err(e)?;
            y += 18;
        }
        y += 6;
    }
    Ok(())
}

fn draw_lines<DB: DrawingBackend>(root: &Area<DB>, f: &LineFigure) -> Result<(), String> {
    let plots = frame(root, &f.heading, &f.legend)?;
    let cells = plots.split_evenly(f.grid());
    for (panel, cell) in f.panels.iter().zip(&cells) {
        let mut builder = ChartBuilder::on(cell);
        builder
            .margin(12)
            .margin_top(if panel.title.is_some() { 4 } else { 12 })
            .x_label_area_size(52)
            .y_label_area_size(78);
        if let Some(t) = &panel.title {
            builder.caption(t, (FONT, CAPTION_SIZE));
        }
        let (x, y) = (&f.x, panel.y.as_ref().unwrap_or(&f.y));
        let lin = |a: &Axis| -> RangedCoordf64 { (a.min..a.max).into() };
        let log = |a: &Axis| -> WithKeyPoints<LogCoord<f64>> {
            let (bold, light) = if a.marks.is_empty() {
                log_ticks(a.min, a.max)
            } else {
                (a.marks.clone(), Vec::new())
            };
            (a.min..a.max)
                .log_scale()
                .with_key_points(bold)
                .with_light_points(light)
        };
        match (x.scale, y.scale) {
            (Scale::Linear, Scale::Linear) => draw_panel(
                builder
                    .build_cartesian_2d(lin(x), lin(y))
                    .map_err(|e| e.to_string())?,
                f,
                y,
                panel,
            )?,
            (Scale::Log, Scale::Linear) => draw_panel(
                builder
                    .build_cartesian_2d(log(x), lin(y))
                    .map_err(|e| e.to_string())?,
                f,
                y,
                panel,
            )?,
            (Scale::Linear, Scale::Log) => draw_panel(
                builder
                    .build_cartesian_2d(lin(x), log(y))
                    .map_err(|e| e.to_string())?,
                f,
                y,
                panel,
            )?,
            (Scale::Log, Scale::Log) => draw_panel(
                builder
                    .build_cartesian_2d(log(x), log(y))
                    .map_err(|e| e.to_string())?,
                f,
                y,
                panel,
            )?,
        }
    }
    Ok(())
}

/// Log-axis ticks between `lo` and `hi`: labelled grid lines at 1, 2 and 5 times each
/// power of ten, light ones at the other integers.
fn log_ticks(lo: f64, hi: f64) -> (Vec<f64>, Vec<f64>) {
    let (mut bold, mut light) = (Vec::new(), Vec::new());
    let mut decade = 10f64.powf(lo.log10().floor());
    while decade <= hi {
        for m in 1..10 {
            // Rounded so that 3 × 0.1 prints as 0.3.
            let v = (f64::from(m) * decade * 1e9).round() / 1e9;
            if v >= lo && v <= hi {
                if matches!(m, 1 | 2 | 5) {
                    bold.push(v);
                } else {
                    light.push(v);
                }
            }
        }
        decade *= 10.0;
    }
    (bold, light)
}

/// Tick labels: plain numbers without trailing zeros; on a log axis only the 1-2-5
/// values are labelled (the others stay as unlabelled grid lines).
fn tick_label(v: f64, scale: Scale, marked: bool) -> String {
    if scale == Scale::Log && !marked {
        let mantissa = v / 10f64.powf(v.log10().floor());
        if ![1.0, 2.0, 5.0].iter().any(|m| (mantissa - m).abs() < 1e-6) {
            return String::new();
        }
    }
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.into()
    }
}

/// A tick label of `axis`: its name for an integer tick of a categorical axis (none
/// between them), else [`tick_label`].
fn axis_tick_label(v: f64, axis: &Axis) -> String {
    if axis.names.is_empty() {
        return tick_label(v, axis.scale, !axis.marks.is_empty());
    }
    let i = v.round();
    if (v - i).abs() > 1e-9 || i < 0.0 {
        return String::new();
    }
    axis.names
        .get(i as usize)
        .map_or_else(String::new, |n| n.to_string())
}

fn draw_panel<DB, X, Y>(
    mut chart: ChartContext<'_, DB, Cartesian2d<X, Y>>,
    f: &LineFigure,
    y: &Axis,
    panel: &Panel,
) -> Result<(), String>
where
    DB: DrawingBackend,
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let (xs, ys) = (f.x.scale, y.scale);
    house_style(
        chart
            .configure_mesh()
            .x_desc(f.x.label.as_str())
            .y_desc(y.label.as_str())
            .x_labels(12)
            .y_labels(10)
            .max_light_lines(1)
            .x_label_formatter(&|v| axis_tick_label(*v, &f.x))
            .y_label_formatter(&|v| axis_tick_label(*v, y)),
    )
    .draw()
    .map_err(e)?;
    let visible =
        |&(x, y): &(f64, f64)| (xs == Scale::Linear || x > 0.0) && (ys == Scale::Linear || y > 0.0);
    for s in &panel.series {
        if s.mark == Mark::Whiskers {
            for pair in s.points.chunks_exact(2) {
                let ((x, lo), (_, hi)) = (pair[0], pair[1]);
                if !(visible(&(x, lo)) && visible(&(x, hi))) {
                    continue;
                }
                // Caps of the same width wherever the bar stands, on either scale.
                let (left, right) = match xs {
                    Scale::Log => (x / 1.02, x * 1.02),
                    Scale::Linear => {
                        let cap = (f.x.max - f.x.min) * 0.006;
                        (x - cap, x + cap)
                    }
                };
                let bars = [
                    vec![(x, lo), (x, hi)],
                    vec![(left, lo), (right, lo)],
                    vec![(left, hi), (right, hi)],
                ];
                for bar in bars {
                    chart
                        .draw_series(LineSeries::new(bar, s.colour.stroke_width(1)))
                        .map_err(e)?;
                }
            }
            continue;
        }
        let points: Vec<(f64, f64)> = s.points.iter().copied().filter(visible).collect();
        let width = if s.mark == Mark::Line { 2 } else { 1 };
        chart
            .draw_series(LineSeries::new(
                points.iter().copied(),
                s.colour.stroke_width(width),
            ))
            .map_err(e)?;
        if s.mark == Mark::Dots {
            chart
                .draw_series(points.iter().map(|&p| Circle::new(p, 4, s.colour.filled())))
                .map_err(e)?;
        }
    }
    Ok(())
}

fn draw_bars<DB: DrawingBackend>(root: &Area<DB>, f: &BarFigure) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let legend = Legend {
        header: if f.runs.len() > 1 {
            "run".into()
        } else {
            String::new()
        },
        entries: f
            .runs
            .iter()
            .map(|(name, c)| LegendEntry {
                name: name.clone(),
                note: String::new(),
                colour: *c,
                mark: Mark::Block,
            })
            .collect(),
    };
    let plots = frame(root, &f.heading, &legend)?;
    let cells = plots.split_evenly((f.panels.len(), 1));
    let groups = f.groups.len();
    let runs = f.runs.len();
    // Bars fill 80 % of each station's slot, split among the runs.
    let bar_w = 0.8 / runs as f64;
    let label_values = groups * runs <= 32;
    for (panel, cell) in f.panels.iter().zip(&cells) {
        let hi = panel
            .values
            .iter()
            .flatten()
            .flatten()
            .copied()
            .chain(panel.reference)
            .fold(0.0, f64::max);
        let y_max = if hi > 0.0 { hi * 1.18 } else { 1.0 };
        // Fewer than MIN_BAR_SLOTS stations are centred rather than stretched.
        let pad = MIN_BAR_SLOTS.saturating_sub(groups) as f64 / 2.0;
        let mut chart = ChartBuilder::on(cell)
            .margin(12)
            .margin_top(4)
            .caption(&panel.title, (FONT, CAPTION_SIZE))
            .x_label_area_size(if f.group_notes.is_some() { 62 } else { 48 })
            .y_label_area_size(78)
            .build_cartesian_2d(-pad..groups as f64 + pad, 0.0..y_max)
            .map_err(e)?;
        house_style(
            chart
                .configure_mesh()
                .disable_x_mesh()
                .x_labels(0)
                .x_desc(f.x_label.as_str())
                .y_desc(panel.y_label.as_str())
                .y_labels(8)
                .max_light_lines(1)
                .y_label_formatter(&|v| tick_label(*v, Scale::Linear, false)),
        )
        .draw()
        .map_err(e)?;
        for (j, (_, c)) in f.runs.iter().enumerate() {
            for (g, v) in panel.values[j].iter().enumerate() {
                let Some(v) = *v else { continue };
                let x0 = g as f64 + 0.1 + j as f64 * bar_w;
                let x1 = x0 + bar_w * 0.92;
                chart
                    .draw_series([Rectangle::new([(x0, 0.0), (x1, v)], c.filled())])
                    .map_err(e)?;
                if label_values {
                    let text = format!("{}{}", value_label(v), panel.unit);
                    let style = TextStyle::from((FONT, NOTE_SIZE).into_font())
                        .pos(Pos::new(HPos::Center, VPos::Bottom));
                    chart
                        .draw_series([EmptyElement::at(((x0 + x1) / 2.0, v))
                            + Text::new(text, (0, -3), style)])
                        .map_err(e)?;
                }
            }
        }
        if let Some(share) = panel.reference {
            chart
                .draw_series(DashedLineSeries::new(
                    [(-pad, share), (groups as f64 + pad, share)],
                    8,
                    5,
                    BLACK.stroke_width(1),
                ))
                .map_err(e)?;
        }
        // Station names (and rates) under each group, in the figure's pixels.
        let name_style =
            TextStyle::from((FONT, TICK_SIZE).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
        let note_style = TextStyle::from((FONT, NOTE_SIZE).into_font())
            .color(&GREY)
            .pos(Pos::new(HPos::Center, VPos::Top));
        let slot_px = chart.backend_coord(&(1.0, 0.0)).0 - chart.backend_coord(&(0.0, 0.0)).0;
        for (g, name) in f.groups.iter().enumerate() {
            let (px, py) = chart.backend_coord(&(g as f64 + 0.5, 0.0));
            root.draw_text(name, &name_style, (px, py + 6)).map_err(e)?;
            if let Some(notes) = &f.group_notes {
                let note = fit(&notes[g], NOTE_SIZE, slot_px.max(8) as u32 - 4);
                root.draw_text(&note, &note_style, (px, py + 24))
                    .map_err(e)?;
            }
        }
    }
    Ok(())
}

/// The left column of the budget plot, for its bars' labels, px.
const BUDGET_LABEL_PX: u32 = 260;

/// Stacked horizontal bars ([`budget::BudgetFigure`]): a flow's name on a row of its
/// own, its bars below it labelled on the left, each bar's length and largest stages
/// written after it; one colour per stage, named in the legend.
fn draw_budget<DB: DrawingBackend>(
    root: &Area<DB>,
    f: &budget::BudgetFigure,
) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let legend = Legend {
        header: "stage, mean per packet".into(),
        entries: f
            .stages
            .iter()
            .enumerate()
            .map(|(k, stage)| LegendEntry {
                name: stage.to_string(),
                note: budget::BudgetFigure::note(stage).into(),
                colour: f.colour(k),
                mark: Mark::Block,
            })
            .collect(),
    };
    let plots = frame(root, &f.heading, &legend)?;
    let longest = f
        .rows
        .iter()
        .filter_map(|r| match r {
            budget::BudgetRow::Bar(b) => Some(b.total_ms()),
            budget::BudgetRow::Title(_) => None,
        })
        .fold(0.0, f64::max);
    // Room after the longest bar for its note.
    let x_max = if longest > 0.0 { longest * 1.6 } else { 1.0 };
    let rows = f.rows.len() as f64;
    let mut chart = ChartBuilder::on(&plots)
        .margin(12)
        .margin_top(4)
        .x_label_area_size(56)
        .y_label_area_size(BUDGET_LABEL_PX)
        .build_cartesian_2d(0.0..x_max, 0.0..rows)
        .map_err(e)?;
    house_style(
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .x_labels(8)
            .max_light_lines(1)
            .x_desc(f.x_label.as_str())
            .x_label_formatter(&|v| tick_label(*v, Scale::Linear, false)),
    )
    .draw()
    .map_err(e)?;
    let left_px = chart.backend_coord(&(0.0, 0.0)).0;
    let title_style =
        TextStyle::from((FONT, LEGEND_SIZE).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    let label_style =
        TextStyle::from((FONT, TICK_SIZE).into_font()).pos(Pos::new(HPos::Right, VPos::Center));
    let note_style = TextStyle::from((FONT, NOTE_SIZE).into_font())
        .color(&GREY)
        .pos(Pos::new(HPos::Left, VPos::Center));
    let plot_right_px = chart.backend_coord(&(x_max, 0.0)).0;
    for (r, row) in f.rows.iter().enumerate() {
        let top = rows - r as f64;
        let (_, mid_px) = chart.backend_coord(&(0.0, top - 0.5));
        match row {
            budget::BudgetRow::Title(name) => {
                let x = left_px - BUDGET_LABEL_PX as i32 + 8;
                let room = (plot_right_px - x).max(40) as u32;
                root.draw_text(&fit(name, LEGEND_SIZE, room), &title_style, (x, mid_px))
                    .map_err(e)?;
            }
            budget::BudgetRow::Bar(bar) => {
                let mut x = 0.0;
                for (k, &ms) in bar.means_ms.iter().enumerate() {
                    if ms <= 0.0 {
                        continue;
                    }
                    chart
                        .draw_series([Rectangle::new(
                            [(x, top - 0.85), (x + ms, top - 0.15)],
                            f.colour(k).filled(),
                        )])
                        .map_err(e)?;
                    x += ms;
                }
                let label = fit(&bar.label, TICK_SIZE, BUDGET_LABEL_PX - 30);
                root.draw_text(&label, &label_style, (left_px - 8, mid_px))
                    .map_err(e)?;
                let end_px = chart.backend_coord(&(x, 0.0)).0;
                root.draw_text(&f.bar_note(bar), &note_style, (end_px + 6, mid_px))
                    .map_err(e)?;
            }
        }
    }
    Ok(())
}

/// Every chart's mesh in one style: the tick and axis fonts, light grey grid lines.
fn house_style<'m, 'a, 'b, X, Y, DB>(
    mesh: &'m mut MeshStyle<'a, 'b, X, Y, DB>,
) -> &'m mut MeshStyle<'a, 'b, X, Y, DB>
where
    X: Ranged + ValueFormatter<<X as Ranged>::ValueType>,
    Y: Ranged + ValueFormatter<<Y as Ranged>::ValueType>,
    DB: DrawingBackend,
{
    mesh.label_style((FONT, TICK_SIZE))
        .axis_desc_style((FONT, AXIS_DESC_SIZE))
        .bold_line_style(RGBColor(0xd0, 0xd0, 0xd0))
        .light_line_style(RGBColor(0xee, 0xee, 0xee))
}

fn value_label(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run through the report's runner, with its station groups.
    fn grouped_run(name: &str, sets: &[(&str, &str)]) -> Results {
        let sets: Vec<(String, String)> = sets
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let p = crate::runner::prepare(name, &sets, None).unwrap();
        crate::runner::simulate(&p, &|_| {}).unwrap()
    }

    /// A PNG's width and height, from its IHDR chunk.
    fn png_size(png: &[u8]) -> (u32, u32) {
        assert_eq!(&png[1..4], b"PNG");
        let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        (be(&png[16..20]), be(&png[20..24]))
    }

    /// At 30, 100 and 1000 stations, alone and compared (issue 27: a 30-station
    /// compare's CDF was 1100 × 12646 px of 60 panels, rate.png had 180 lines), every
    /// plot keeps its natural size (at most two rows of panels), at most 12 panels and
    /// 12 legend entries, and draws groups: no panel or legend entry names a station.
    #[test]
    fn plots_of_many_stations_stay_readable() {
        let rtt_fair = |n: &'static str, stack: &'static str| {
            grouped_run(
                "e3-rtt-fair-up-n",
                &[
                    ("stations.count", n),
                    ("traffic.length_s", "1"),
                    ("stack", stack),
                ],
            )
        };
        let cases: Vec<Vec<(&str, Results)>> = vec![
            vec![("30", rtt_fair("30", "linux-6.16"))],
            vec![
                ("4.8", rtt_fair("30", "linux-4.8-bloated")),
                ("6.16", rtt_fair("30", "linux-6.16")),
            ],
            vec![(
                "100 minstrel",
                grouped_run(
                    "atf-30-stations-minstrel",
                    &[("stations.list[0].count", "99"), ("duration_s", "0.6")],
                ),
            )],
            vec![(
                "1000",
                grouped_run(
                    "default",
                    &[("stations.list[0].count", "999"), ("duration_s", "0.2")],
                ),
            )],
        ];
        for case in &cases {
            let runs: Vec<PlotRun<'_>> = case
                .iter()
                .map(|(label, results)| PlotRun { label, results })
                .collect();
            let what = format!("{:?}", case.iter().map(|c| c.0).collect::<Vec<_>>());
            let figs = figures("many", &runs);
            let stems: Vec<&str> = figs.iter().map(Figure::stem).collect();
            assert!(stems.contains(&"stations"), "{what}: {stems:?}");
            assert!(stems.contains(&"latency-cdf"), "{what}: {stems:?}");
            for f in &figs {
                let (names, panels): (Vec<String>, usize) = match f {
                    Figure::Lines(l) => (
                        l.legend
                            .entries
                            .iter()
                            .map(|e| e.name.clone())
                            .chain(l.panels.iter().filter_map(|p| p.title.clone()))
                            .collect(),
                        l.panels.len(),
                    ),
                    Figure::Bars(b) => (b.groups.clone(), b.panels.len()),
                    Figure::Budget(b) => (
                        b.rows
                            .iter()
                            .map(|r| match r {
                                budget::BudgetRow::Title(t) => t.clone(),
                                budget::BudgetRow::Bar(bar) => bar.label.clone(),
                            })
                            .collect(),
                        1,
                    ),
                };
                assert!(panels <= 12, "{what} {}: {panels} panels", f.stem());
                let entries = match f {
                    Figure::Lines(l) => l.legend.entries.len(),
                    Figure::Bars(b) => b.groups.len() / 5,
                    Figure::Budget(b) => b.stages.len(),
                };
                assert!(entries <= 12, "{what} {}: {entries} entries", f.stem());
                for n in &names {
                    assert!(
                        !n.split([' ', '(']).any(|w| w.starts_with("sta")
                            && w[3..].chars().next().is_some_and(|c| c.is_ascii_digit())),
                        "{what} {}: names a station: {n}",
                        f.stem()
                    );
                }
            }
            for (stem, png) in render_plots("many", &runs).unwrap() {
                if !stem.ends_with(".png") {
                    continue;
                }
                let (w, h) = png_size(&png);
                assert!(w <= WIDTH_PX && h <= 900, "{what} {stem}: {w} × {h} px");
            }
        }
        // rate.png where a rate control runs: one band per group and direction.
        let Figure::Lines(rate) = figures(
            "m",
            &[PlotRun {
                label: "m",
                results: &cases[2][0].1,
            }],
        )
        .into_iter()
        .find(|f| f.stem() == "rate")
        .expect("rate.png at 100 minstrel stations") else {
            panic!("rate is lines")
        };
        assert_eq!(rate.panels[0].series.len(), 3 * rate.legend.entries.len());
    }

    /// Labels that differ only at the end stay apart when shortened.
    #[test]
    fn a_shortened_label_keeps_its_end() {
        register_font().unwrap();
        let labels = [
            "linux-6.16, stack_options.aql_limit_low_us=1000, stack_options.aql_limit_high_us=2000",
            "linux-6.16, stack_options.aql_limit_low_us=1000, stack_options.aql_limit_high_us=8000",
        ];
        let max_px = text_width(labels[0], LEGEND_SIZE) / 2;
        let fitted: Vec<String> = labels.iter().map(|l| fit(l, LEGEND_SIZE, max_px)).collect();
        for (f, l) in fitted.iter().zip(labels) {
            assert!(text_width(f, LEGEND_SIZE) <= max_px, "{f}");
            assert!(f.contains('…') && f.starts_with("linux"), "{f}");
            assert!(f.ends_with(&l[l.len() - 4..]), "{f}");
        }
        assert_ne!(fitted[0], fitted[1]);
        assert_eq!(fit("short", LEGEND_SIZE, 1000), "short");
    }

    /// A station whose runs report different rates (a comparison of rate controls) is
    /// labelled with each run's, not the first run's alone.
    #[test]
    fn a_station_label_names_every_runs_rate() {
        let mut a = modern().clone();
        let mut b = modern().clone();
        a.stations[0].rate = "minstrel_ht-5.10".into();
        b.stations[0].rate = "minstrel_ht-6".into();
        let runs = [
            PlotRun {
                label: "5.10",
                results: &a,
            },
            PlotRun {
                label: "6",
                results: &b,
            },
        ];
        let fig = stations_figure("t", &runs).expect("a stations figure");
        let text = format!("{} {:?}", fig.x_label, fig.group_notes);
        assert!(text.contains("minstrel_ht-5.10 / minstrel_ht-6"), "{text}");
        // Runs that agree name their rate once.
        let same = [
            PlotRun {
                label: "x",
                results: &a,
            },
            PlotRun {
                label: "y",
                results: &a,
            },
        ];
        let fig = stations_figure("t", &same).expect("a stations figure");
        assert_eq!(fig.x_label, "station (all minstrel_ht-5.10)");
    }

    /// A latency panel of several runs is titled with the flow's name, not with the
    /// first run's throughput (the anomaly's flows have one-way latency only: their
    /// panels were titled `… (x Mbit/s)`).
    #[test]
    fn panel_titles_speak_for_every_run() {
        let two = [
            PlotRun {
                label: "a",
                results: anomaly(),
            },
            PlotRun {
                label: "b",
                results: anomaly(),
            },
        ];
        let fig = latency_cdf_figure("t", &two).expect("a CDF");
        let titles: Vec<String> = fig.panels.iter().filter_map(|p| p.title.clone()).collect();
        let names = flow_names(anomaly());
        assert!(!titles.is_empty());
        for t in &titles {
            assert!(names.contains(t), "{t} is not a flow's name: {names:?}");
        }
    }
    use crate::{builtin, scenario};
    use std::sync::OnceLock;
    use txop_sim::Simulation;

    /// Runs a built-in scenario with overrides: a short deterministic simulation.
    fn simulate(name: &str, sets: &[(&str, &str)]) -> Results {
        let text = builtin::get(name).expect("built-in scenario");
        let sets: Vec<(String, String)> = sets
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let cfg = scenario::parse(text, &sets)
            .and_then(|s| s.resolve())
            .expect("valid scenario");
        Simulation::new(cfg).expect("valid config").run()
    }

    /// flent's tcp_ndown over a slow station, 1 s of pings, 3 s of 4 TCP downloads and
    /// 1 s of pings again: ping RTT samples, TCP throughput series, one station.
    fn tcp_ndown(stack: &str) -> Results {
        simulate(
            "tcp-ndown-6mbit",
            &[
                ("stack", stack),
                ("traffic.length_s", "3"),
                ("traffic.delay_s", "1"),
            ],
        )
    }

    fn bloated() -> &'static Results {
        static R: OnceLock<Results> = OnceLock::new();
        R.get_or_init(|| tcp_ndown("linux-4.8-bloated"))
    }

    fn modern() -> &'static Results {
        static R: OnceLock<Results> = OnceLock::new();
        R.get_or_init(|| tcp_ndown("linux-6.16"))
    }

    /// Two saturated uplink stations (the anomaly): one-way latency summaries only, no
    /// echo samples.
    fn anomaly() -> &'static Results {
        static R: OnceLock<Results> = OnceLock::new();
        R.get_or_init(|| simulate("anomaly", &[("duration_s", "1")]))
    }

    /// A fresh directory per test, left behind for a look at the pictures.
    fn out_dir(test: &str) -> PathBuf {
        let dir = std::env::temp_dir().join("txop-plot-tests").join(test);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create test output directory");
        dir
    }

    fn names(paths: &[PathBuf]) -> Vec<String> {
        paths
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect()
    }

    /// Decodes a PNG: (width, height, RGB pixels).
    fn decode_png(path: &Path) -> (u32, u32, Vec<u8>) {
        let bytes = std::fs::read(path).expect("read PNG");
        let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        let mut reader = decoder.read_info().expect("PNG header");
        let mut buf = vec![0; reader.output_buffer_size().expect("buffer size")];
        let info = reader.next_frame(&mut buf).expect("PNG image data");
        assert_eq!(info.color_type, png::ColorType::Rgb);
        buf.truncate(info.buffer_size());
        (info.width, info.height, buf)
    }

    /// Pixels of exactly colour `c` in the plot area: left of where any legend can
    /// start, so that a legend's sample line does not count.
    fn plotted_pixels(rgb: &[u8], width: u32, c: RGBColor) -> usize {
        let plot_px = (WIDTH_PX - LEGEND_MAX_PX) as usize;
        rgb.chunks_exact(3)
            .enumerate()
            .filter(|(k, p)| k % (width as usize) < plot_px && p[..] == [c.0, c.1, c.2])
            .count()
    }

    /// The colours a figure draws its data in, black (the total) aside.
    fn series_colours(figure: &Figure) -> Vec<RGBColor> {
        let mut colours: Vec<RGBColor> = match figure {
            Figure::Lines(f) => f
                .panels
                .iter()
                .flat_map(|p| &p.series)
                .map(|s| s.colour)
                .collect(),
            Figure::Bars(f) => f.runs.iter().map(|r| r.1).collect(),
            // The stages that are long enough somewhere to be seen (a tenth of the
            // longest bar).
            Figure::Budget(f) => {
                let bars: Vec<&budget::BudgetBar> = f
                    .rows
                    .iter()
                    .filter_map(|r| match r {
                        budget::BudgetRow::Bar(b) => Some(b),
                        budget::BudgetRow::Title(_) => None,
                    })
                    .collect();
                let longest = bars.iter().map(|b| b.total_ms()).fold(0.0, f64::max);
                (0..f.stages.len())
                    .filter(|&k| bars.iter().any(|b| b.means_ms[k] >= longest / 10.0))
                    .map(|k| f.colour(k))
                    .collect()
            }
        };
        colours.retain(|&c| c != BLACK);
        colours.dedup();
        colours
    }

    fn svg_hex(c: RGBColor) -> String {
        format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
    }

    /// A run whose stations choose their rates draws the rate over time, one line per
    /// station and direction that sent data, falling as the station walks away; a
    /// fixed-rate run draws none.
    #[test]
    fn rate_control_runs_draw_the_rate_over_time() {
        let walk = simulate("rate-walk-away", &[("duration_s", "20")]);
        let runs = [PlotRun {
            label: "minstrel_ht",
            results: &walk,
        }];
        let rate = figures("rate-walk-away", &runs)
            .into_iter()
            .find_map(|f| match f {
                Figure::Lines(l) if l.stem == "rate" => Some(l),
                _ => None,
            })
            .expect("a rate figure");
        assert_eq!(rate.panels[0].series.len(), 2, "down and up");
        let down = &rate.panels[0].series[0].points;
        let (first, last) = (down[5].1, down[down.len() - 1].1);
        assert!(
            last < 0.8 * first,
            "the rate should fall: {first} → {last} Mbit/s"
        );
        let svg = svg_string(&Figure::Lines(rate)).expect("svg");
        assert!(svg.contains("PHY rate"), "rate.svg lacks its axis label");
        let fixed = [PlotRun {
            label: "linux-6.16",
            results: modern(),
        }];
        assert!(!figures("tcp-ndown-6mbit", &fixed)
            .iter()
            .any(|f| matches!(f, Figure::Lines(l) if l.stem == "rate")));
    }

    #[test]
    fn one_run_writes_every_plot_as_png_and_svg() {
        let dir = out_dir("one_run");
        let runs = [PlotRun {
            label: "linux-6.16",
            results: modern(),
        }];
        let written = write_plots(&dir, "tcp-ndown-6mbit", &runs).expect("plots");
        let mut expected = Vec::new();
        // CUBIC: no BBR modes to draw.
        let tcp = &TCP_PLOT_NAMES[..3];
        let stems = PLOT_NAMES[..3]
            .iter()
            .chain(tcp)
            .chain(&PLOT_NAMES[3..])
            .chain([&BUDGET_PLOT_NAME]);
        for stem in stems {
            expected.push(format!("{stem}.png"));
            expected.push(format!("{stem}.svg"));
        }
        assert_eq!(names(&written), expected);
        for path in &written {
            assert!(path.is_file(), "{} missing", path.display());
        }
        let figures = figures("tcp-ndown-6mbit", &runs);
        for figure in &figures {
            let stem = figure.stem();
            let (w, h, rgb) = decode_png(&dir.join(format!("{stem}.png")));
            assert_eq!((w, h), size_of(figure), "{stem}.png dimensions");
            // Drawn, not blank: the series' colours cover the plot area (left of any
            // legend), each one visibly.
            let colours = series_colours(figure);
            let inked: usize = colours.iter().map(|&c| plotted_pixels(&rgb, w, c)).sum();
            assert!(inked > 500, "{stem}.png: {inked} pixels of data");
            // Markers of nearby flows may cover most of one another (and thin lines are
            // anti-aliased), so a handful of exact-colour pixels shows a series drawn.
            for c in colours {
                assert!(
                    plotted_pixels(&rgb, w, c) > 5,
                    "{stem}.png has almost no {c:?}"
                );
            }
            // Text drawn with the embedded font: dark grey/black pixels from glyphs.
            let dark = rgb
                .chunks_exact(3)
                .filter(|p| p.iter().all(|&c| c < 60))
                .count();
            assert!(
                dark > 1000,
                "{stem}.png has little text ({dark} dark pixels)"
            );
        }
        let svg = |stem: &str| std::fs::read_to_string(dir.join(format!("{stem}.svg"))).unwrap();
        let time = svg("latency-time");
        for needle in [
            "tcp-ndown-6mbit: latency over time",
            "time (s)",
            "round-trip time (ms)",
            "linux-6.16",
            "Ping (ms) ICMP",
        ] {
            assert!(time.contains(needle), "latency-time.svg lacks {needle:?}");
        }
        let cdf = svg("latency-cdf");
        for needle in [
            "latency CDF",
            "fraction of packets ≤ latency",
            "(ms)",
            "linux-6.16",
        ] {
            assert!(cdf.contains(needle), "latency-cdf.svg lacks {needle:?}");
        }
        let tput = svg("throughput");
        for needle in [
            "throughput over time",
            "throughput (Mbit/s, per 0.2 s)",
            "TCP download::1",
            "TCP download::4",
            "total",
        ] {
            assert!(tput.contains(needle), "throughput.svg lacks {needle:?}");
        }
        let bars = svg("stations");
        for needle in [
            "per-station throughput and airtime",
            "throughput (Mbit/s)",
            "airtime share (%)",
            "sta1",
            "HT20 MCS0",
            "linux-6.16",
        ] {
            assert!(bars.contains(needle), "stations.svg lacks {needle:?}");
        }
        // The only station holds all the busy airtime: its bar is labelled 100 %.
        assert!(bars.contains("100 %"), "the lone station's airtime share");
        for (stem, needle) in [
            ("tcp-cwnd", "TCP congestion window over time"),
            ("tcp-srtt", "srtt (ms, at the end of each step)"),
            ("tcp-rate", "pacing rate (thin)"),
        ] {
            let text = svg(stem);
            for needle in [needle, "TCP download::1", "TCP download::4", "timeouts"] {
                assert!(text.contains(needle), "{stem}.svg lacks {needle:?}");
            }
        }
    }

    /// A BBR download's modes as a trace over the mode axis: STARTUP, then DRAIN, then
    /// PROBE_BW (BBR v1's first pass, `tcp_bbr.c`), the axis ticks named after them.
    #[test]
    fn bbr_modes_are_drawn_in_the_order_bbr_enters_them() {
        let r = simulate(
            "tcp-ndown-6mbit",
            &[
                ("traffic.test", "tcp_1down"),
                ("traffic.cc", "bbr"),
                ("traffic.length_s", "3"),
                ("traffic.delay_s", "1"),
            ],
        );
        let runs = [PlotRun {
            label: "bbr",
            results: &r,
        }];
        let figures = figures("bbr", &runs);
        let stems: Vec<&str> = figures.iter().map(Figure::stem).collect();
        assert!(
            TCP_PLOT_NAMES.iter().all(|s| stems.contains(s)),
            "{stems:?}"
        );
        let Some(Figure::Lines(bbr)) = figures.iter().find(|f| f.stem() == "tcp-bbr") else {
            panic!("a tcp-bbr figure")
        };
        let modes: Vec<i64> = bbr.panels[0].series[0]
            .points
            .iter()
            .map(|&(_, y)| y.round() as i64)
            .collect();
        let mut distinct = modes.clone();
        distinct.dedup();
        assert_eq!(distinct[..3], [0, 1, 2], "{distinct:?}");
        let names: Vec<String> = (0..4).map(|v| axis_tick_label(v as f64, &bbr.y)).collect();
        assert_eq!(names, ["STARTUP", "DRAIN", "PROBE_BW", "PROBE_RTT"]);
        assert_eq!(axis_tick_label(0.5, &bbr.y), "");
        let svg = svg_string(figures.iter().find(|f| f.stem() == "tcp-bbr").unwrap()).unwrap();
        assert!(svg.contains("PROBE_BW") && svg.contains("mode over time"));
    }

    #[test]
    fn compare_overlays_every_run_in_its_own_colour() {
        let dir = out_dir("compare");
        let runs = [
            PlotRun {
                label: "stack=linux-4.8-bloated",
                results: bloated(),
            },
            PlotRun {
                label: "stack=linux-6.16",
                results: modern(),
            },
        ];
        let written = write_plots(&dir, "tcp-ndown-6mbit", &runs).expect("plots");
        assert_eq!(
            written.len(),
            2 * (PLOT_NAMES.len() + 3 + 1),
            "CUBIC: no tcp-bbr; the delay budget"
        );
        for stem in PLOT_NAMES.iter().chain(&TCP_PLOT_NAMES[..3]) {
            let svg = std::fs::read_to_string(dir.join(format!("{stem}.svg"))).unwrap();
            for run in &runs {
                assert!(svg.contains(run.label), "{stem}.svg lacks {:?}", run.label);
            }
            for c in [PALETTE[0], PALETTE[1]] {
                assert!(
                    svg.contains(&svg_hex(c)),
                    "{stem}.svg lacks run colour {c:?}"
                );
            }
            let (w, _, rgb) = decode_png(&dir.join(format!("{stem}.png")));
            for c in [PALETTE[0], PALETTE[1]] {
                assert!(
                    plotted_pixels(&rgb, w, c) > 100,
                    "{stem}.png has almost no {c:?}"
                );
            }
        }
        // The headline: a FIFO under four TCP streams queues far longer than fq_codel
        // (seed 002: ~2.5 s against < 20 ms), so the ping CDF spans decades and is drawn
        // on a log axis.
        let figures = figures("tcp-ndown-6mbit", &runs);
        let Figure::Lines(cdf) = &figures[1] else {
            panic!("second figure is the CDF")
        };
        assert_eq!(cdf.stem, "latency-cdf");
        assert_eq!(
            cdf.x.scale,
            Scale::Log,
            "x axis {}..{}",
            cdf.x.min,
            cdf.x.max
        );
        assert_eq!(cdf.panels.len(), 1, "one ping flow, one panel");
        assert_eq!(cdf.panels[0].series.len(), 2, "one curve per run");
    }

    /// The default cell (three fast stations, one slow, UDP overload plus sparse
    /// probes) under two stacks: no echo samples, several stations with unlike rates.
    #[test]
    fn compare_of_the_default_cell_draws_every_flow_and_station() {
        let dir = out_dir("compare_default");
        let one_s = [("duration_s", "1")];
        let modern = simulate("default", &one_s);
        let bloated = simulate(
            "default",
            &[("duration_s", "1"), ("stack", "linux-4.8-bloated")],
        );
        let runs = [
            PlotRun {
                label: "linux-4.8-bloated",
                results: &bloated,
            },
            PlotRun {
                label: "linux-6.16",
                results: &modern,
            },
        ];
        let written = names(&write_plots(&dir, "default", &runs).expect("plots"));
        // No echo flows: no latency-over-time plot, but a CDF from the summaries.
        assert_eq!(
            written,
            [
                "latency-cdf.png",
                "latency-cdf.svg",
                "throughput.png",
                "throughput.svg",
                "stations.png",
                "stations.svg",
                "delay-budget.png",
                "delay-budget.svg"
            ]
        );
        let figures = figures("default", &runs);
        let Figure::Lines(cdf) = &figures[0] else {
            panic!("the CDF comes first")
        };
        // 4 bulk flows and 4 probes, each with both runs' percentiles.
        assert_eq!(cdf.panels.len(), 8);
        assert!(cdf.panels.iter().all(|p| p.series.len() == 2));
        let cdf = std::fs::read_to_string(dir.join("latency-cdf.svg")).unwrap();
        // The load and the probe beside it are told apart by their names (both were
        // "cbr AP→sta4", numbered #3 and #7).
        for needle in [
            "constant-rate UDP (AP → sta4)",
            "probe (AP → sta4)",
            "one-way latency (ms)",
        ] {
            assert!(cdf.contains(needle), "latency-cdf.svg lacks {needle:?}");
        }
        let stations = std::fs::read_to_string(dir.join("stations.svg")).unwrap();
        for needle in [
            "sta1",
            "sta4",
            "HT20 MCS7 LGI",
            "HT20 MCS0 LGI",
            "equal share, 25 %",
        ] {
            assert!(stations.contains(needle), "stations.svg lacks {needle:?}");
        }

        // One run: every flow in the one chart, named in the legend.
        let dir = out_dir("one_default");
        let one = [PlotRun {
            label: "linux-6.16",
            results: &modern,
        }];
        write_plots(&dir, "default", &one).expect("plots");
        let cdf = std::fs::read_to_string(dir.join("latency-cdf.svg")).unwrap();
        for name in flow_names(&modern) {
            assert!(cdf.contains(&name), "latency-cdf.svg lacks {name:?}");
        }
    }

    #[test]
    fn results_without_latency_skip_the_latency_plots() {
        // Saturated flows: one-way summaries but no echo samples ⇒ no latency-time plot.
        let dir = out_dir("no_echo");
        let runs = [PlotRun {
            label: "anomaly",
            results: anomaly(),
        }];
        let written = names(&write_plots(&dir, "anomaly", &runs).expect("plots"));
        assert!(
            !written.iter().any(|n| n.starts_with("latency-time")),
            "{written:?}"
        );
        assert!(
            written.contains(&"latency-cdf.svg".to_string()),
            "{written:?}"
        );
        let cdf = std::fs::read_to_string(dir.join("latency-cdf.svg")).unwrap();
        assert!(cdf.contains("one-way p50/p90/p99/max"));

        // Nothing with a latency at all ⇒ neither latency plot; the others remain.
        let mut stripped = anomaly().clone();
        for f in &mut stripped.flows {
            f.latency_ms = None;
            f.rtt_samples.clear();
        }
        let dir = out_dir("no_latency");
        let runs = [PlotRun {
            label: "anomaly",
            results: &stripped,
        }];
        let written = names(&write_plots(&dir, "anomaly", &runs).expect("plots"));
        assert_eq!(
            written,
            [
                "throughput.png",
                "throughput.svg",
                "stations.png",
                "stations.svg",
                "delay-budget.png",
                "delay-budget.svg"
            ]
        );
        let on_disk = std::fs::read_dir(&dir).unwrap().count();
        assert_eq!(on_disk, 6, "no empty plot written");
    }

    #[test]
    fn same_results_give_identical_bytes() {
        let runs = [
            PlotRun {
                label: "bloated",
                results: bloated(),
            },
            PlotRun {
                label: "modern",
                results: modern(),
            },
        ];
        let a = render_plots("t", &runs).expect("plots");
        let b = render_plots("t", &runs).expect("plots");
        assert_eq!(a, b);
        // And from a second, independent simulation with the same seed.
        let again = tcp_ndown("linux-4.8-bloated");
        let c = render_plots(
            "t",
            &[
                PlotRun {
                    label: "bloated",
                    results: &again,
                },
                runs[1],
            ],
        )
        .expect("plots");
        assert_eq!(a, c);
    }

    /// Where ink lands for text drawn on the PNG canvas: (rows, columns) spanned.
    fn ink_of(text: &str, pos: Pos) -> ((usize, usize), (usize, usize)) {
        register_font().unwrap();
        let (w, h) = (240usize, 100usize);
        let mut rgb = vec![0u8; w * h * 3];
        {
            let canvas = PngCanvas::new(BitMapBackend::with_buffer(&mut rgb, (w as u32, h as u32)));
            let root = canvas.unwrap().into_drawing_area();
            root.fill(&WHITE).unwrap();
            let style = TextStyle::from((FONT, 20.0).into_font()).pos(pos);
            root.draw_text(text, &style, (120, 50)).unwrap();
            root.present().unwrap();
        }
        let dark = |x: usize, y: usize| rgb[(y * w + x) * 3] < 128;
        let rows: Vec<usize> = (0..h).filter(|&y| (0..w).any(|x| dark(x, y))).collect();
        let cols: Vec<usize> = (0..w).filter(|&x| (0..h).any(|y| dark(x, y))).collect();
        (
            (rows[0], *rows.last().unwrap()),
            (cols[0], *cols.last().unwrap()),
        )
    }

    #[test]
    fn png_text_sits_on_its_anchor() {
        // Digits centred on the anchor both ways (as tick labels are placed).
        let ((top, bottom), (left, right)) = ink_of("0.8", Pos::new(HPos::Center, VPos::Center));
        assert!(
            (top + bottom).abs_diff(100) <= 2,
            "rows {top}..{bottom} around 50"
        );
        assert!(
            (left + right).abs_diff(240) <= 3,
            "columns {left}..{right} around 120"
        );
        // Left-anchored text starts at the anchor; top-anchored hangs below it.
        let ((top, _), (left, _)) = ink_of("H", Pos::new(HPos::Left, VPos::Top));
        assert!(
            left.abs_diff(120) <= 2 && (50..=54).contains(&top),
            "{left}, {top}"
        );
        // Side bearings kept: the narrow "." has room on both sides, so "1.1" is about
        // as wide as the font's advances say, not squeezed to the ink.
        let (_, (l, r)) = ink_of("1.1", Pos::new(HPos::Left, VPos::Top));
        let (_, (l1, r1)) = ink_of("1", Pos::new(HPos::Left, VPos::Top));
        let advances = text_width("1.", 20.0) as usize;
        assert!(
            (r - l).abs_diff(advances + (r1 - l1)) <= 2,
            "1.1 spans {}",
            r - l
        );
    }

    #[test]
    fn cdf_of_samples_is_the_empirical_distribution() {
        let mut f = anomaly().flows[0].clone();
        f.rtt_samples = vec![(0.1, 4.0), (0.2, 1.0), (0.3, 3.0), (0.4, 2.0)];
        let FlowCdf { points, mark, note } = latency_cdf(&f).expect("samples");
        assert_eq!(mark, Mark::Line);
        assert_eq!(
            points,
            [(1.0, 0.0), (1.0, 0.25), (2.0, 0.5), (3.0, 0.75), (4.0, 1.0)]
        );
        assert_eq!(note, "RTT, 4 replies");

        // Many samples: thinned to CDF_MAX_POINTS ranks, still from the minimum to the
        // maximum at fraction 1, never decreasing.
        f.rtt_samples = (0..10_000)
            .map(|k| (k as f64, (k % 997) as f64 + 1.0))
            .collect();
        let points = latency_cdf(&f).unwrap().points;
        assert_eq!(points.len(), CDF_MAX_POINTS + 1);
        assert_eq!(points[0], (1.0, 0.0));
        assert_eq!(*points.last().unwrap(), (997.0, 1.0));
        assert!(points
            .windows(2)
            .all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1));
    }

    #[test]
    fn long_series_keep_their_envelope() {
        // A sawtooth of 100 000 points with one spike: thinned to 4000 points that keep
        // the extremes and the spike, in time order.
        let mut points: Vec<(f64, f64)> = (0..100_000)
            .map(|k| (k as f64 * 0.01, (k % 50) as f64))
            .collect();
        points[77_777].1 = 1000.0;
        let thin = envelope(&points, SERIES_MAX_POINTS);
        assert_eq!(thin.len(), SERIES_MAX_POINTS);
        assert!(thin.windows(2).all(|w| w[0].0 <= w[1].0), "time order");
        assert!(thin.contains(&points[77_777]), "the spike survives");
        let lo = thin.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
        assert_eq!(lo, 0.0);
        let short = &points[..10];
        assert_eq!(envelope(short, SERIES_MAX_POINTS), short);
    }

    #[test]
    fn latency_axis_turns_logarithmic_across_decades() {
        let panel = |ys: &[f64]| Panel {
            y: None,
            title: None,
            series: vec![Series {
                colour: BLACK,
                points: ys.iter().map(|&y| (0.0, y)).collect(),
                mark: Mark::Line,
            }],
        };
        let narrow = latency_axis("ms", &[panel(&[10.0, 40.0])]);
        assert_eq!(narrow.scale, Scale::Linear);
        assert_eq!((narrow.min, narrow.max), (0.0, 42.0));
        let wide = latency_axis("ms", &[panel(&[2.0, 2500.0])]);
        assert_eq!(wide.scale, Scale::Log);
        assert!(wide.min < 2.0 && wide.max > 2500.0);
        assert_eq!(tick_label(0.5, Scale::Linear, false), "0.5");
        assert_eq!(tick_label(250.0, Scale::Linear, false), "250");
        assert_eq!(tick_label(200.0, Scale::Log, false), "200");
        assert_eq!(tick_label(300.0, Scale::Log, false), "");
        let (bold, light) = log_ticks(1.6, 3125.0);
        assert_eq!(
            bold,
            [2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0]
        );
        assert_eq!(
            light.len(),
            6 + 6 + 6 + 1,
            "3, 4, 6, 7, 8, 9 per decade; then 3000"
        );
        assert_eq!(light[0], 3.0);
    }

    /// The delay-budget figure of `runs`.
    fn budget_figure(title: &str, runs: &[PlotRun<'_>]) -> budget::BudgetFigure {
        match figures(title, runs)
            .into_iter()
            .find(|f| f.stem() == BUDGET_PLOT_NAME)
        {
            Some(Figure::Budget(fig)) => fig,
            _ => panic!("{title}: a delay-budget figure"),
        }
    }

    /// The bars of a budget figure, in order.
    fn budget_bars(f: &budget::BudgetFigure) -> Vec<&budget::BudgetBar> {
        f.rows
            .iter()
            .filter_map(|r| match r {
                budget::BudgetRow::Bar(b) => Some(b),
                budget::BudgetRow::Title(_) => None,
            })
            .collect()
    }

    /// "Where the time goes" of one run: a bar per flow and direction whose segments
    /// are results.json's stage means, and add up to the flows' mean one-way delay as
    /// `latency_ms` measures it apart from the budget; the file is written, at the
    /// figure's size, with the stages named.
    #[test]
    fn delay_budget_bars_are_the_results_stage_means() {
        let default = simulate("default", &[("duration_s", "1")]);
        for (name, r) in [("tcp-ndown-6mbit", modern()), ("default", &default)] {
            let runs = [PlotRun {
                label: "linux-6.16",
                results: r,
            }];
            let fig = budget_figure(name, &runs);
            // The stages as results.json names and orders them.
            let named: Vec<&str> = r
                .flows
                .iter()
                .find_map(|f| f.delay_budget.forward.as_ref())
                .expect("a budget")
                .stages
                .iter()
                .map(|s| s.stage)
                .collect();
            assert_eq!(fig.stages, named);
            assert_eq!(fig.stages.len(), 9);
            let bars = budget_bars(&fig);
            let expected: usize = r
                .flows
                .iter()
                .map(|f| {
                    [&f.delay_budget.forward, &f.delay_budget.back]
                        .into_iter()
                        .flatten()
                        .filter(|b| b.packets > 0)
                        .count()
                })
                .sum();
            assert_eq!(bars.len(), expected, "{name}: a bar per flow and direction");
            let mut checked = 0;
            for f in &r.flows {
                let Some(fwd) = f.delay_budget.forward.as_ref().filter(|b| b.packets > 0) else {
                    continue;
                };
                // The flow's forward bar: under its name's row.
                let at = fig
                    .rows
                    .iter()
                    .position(|row| matches!(row, budget::BudgetRow::Title(t) if *t == f.name))
                    .unwrap_or_else(|| panic!("{name}: no row for {}", f.name));
                let budget::BudgetRow::Bar(bar) = &fig.rows[at + 1] else {
                    panic!("{name}: {} has no bar", f.name)
                };
                for (k, s) in fwd.stages.iter().enumerate() {
                    assert_eq!(bar.means_ms[k], s.mean_ms, "{name} {} {}", f.name, s.stage);
                }
                if !f.is_echo() {
                    let mean = f.latency_ms.expect("a delivered flow's latency").mean;
                    assert!(
                        (bar.total_ms() - mean).abs() < 1e-6 * mean.max(1.0),
                        "{name} {}: stages {} ms, latency mean {mean} ms",
                        f.name,
                        bar.total_ms()
                    );
                    checked += 1;
                }
            }
            assert!(checked >= 4, "{name}: {checked} data flows checked");
            for bar in &bars {
                assert!(
                    (bar.total_ms() - bar.delay_ms).abs() < 1e-6 * bar.delay_ms.max(1.0),
                    "{name} {}: {} against {}",
                    bar.label,
                    bar.total_ms(),
                    bar.delay_ms
                );
            }
            let fig = Figure::Budget(fig);
            let files = render_plots(name, &runs).unwrap();
            let (_, png) = files
                .iter()
                .find(|(n, _)| n == "delay-budget.png")
                .expect("delay-budget.png");
            let (w, h) = png_size(png);
            assert_eq!((w, h), size_of(&fig));
            assert!(
                (budget::MIN_HEIGHT_PX..=budget::MAX_HEIGHT_PX).contains(&h),
                "{h} px"
            );
            assert!(png.len() > 10_000, "{name}: a {} byte PNG", png.len());
            let (_, svg) = files
                .iter()
                .find(|(n, _)| n == "delay-budget.svg")
                .expect("delay-budget.svg");
            let svg = String::from_utf8_lossy(svg);
            for needle in [
                "where the time goes",
                "mean time per packet (ms)",
                "add up to its mean one-way delay",
                "driver",
                "from_cell",
            ] {
                assert!(
                    svg.contains(needle),
                    "{name}: delay-budget.svg lacks {needle:?}"
                );
            }
        }
    }

    /// With 30 stations a bar per flow group and setting, the mean over its flows'
    /// packets: the packet-weighted mean of the flows' mean delays.
    #[test]
    fn delay_budget_of_many_stations_is_by_flow_group() {
        let short = [("duration_s", "2")];
        let a = grouped_run("atf-30-stations", &short);
        let b = grouped_run(
            "atf-30-stations",
            &[
                ("duration_s", "2"),
                ("stack_options.aql_limit_low_us", "1000"),
            ],
        );
        let runs = [
            PlotRun {
                label: "aql 5000",
                results: &a,
            },
            PlotRun {
                label: "aql 1000",
                results: &b,
            },
        ];
        let fig = budget_figure("atf", &runs);
        assert!(fig.heading.contains("by flow group"), "{}", fig.heading);
        let titles: Vec<&str> = fig
            .rows
            .iter()
            .filter_map(|r| match r {
                budget::BudgetRow::Title(t) => Some(t.as_str()),
                budget::BudgetRow::Bar(_) => None,
            })
            .collect();
        assert_eq!(
            titles,
            [
                "constant-rate UDP (AP → list[0]): 29 flows",
                "constant-rate UDP (AP → list[1]): 1 flows"
            ]
        );
        let bars = budget_bars(&fig);
        assert_eq!(bars.len(), 4, "2 groups × 2 settings");
        for (k, (run, stations)) in [(&a, 1..=29u16), (&b, 1..=29), (&a, 30..=30), (&b, 30..=30)]
            .into_iter()
            .enumerate()
        {
            let bar = bars[k];
            let flows: Vec<&FlowResult> = run
                .flows
                .iter()
                .filter(|f| {
                    stations.contains(&f.dst.trim_start_matches("sta").parse::<u16>().unwrap())
                })
                .collect();
            let packets: u64 = flows
                .iter()
                .map(|f| f.delay_budget.forward.as_ref().unwrap().packets)
                .sum();
            let weighted: f64 = flows
                .iter()
                .map(|f| {
                    f.latency_ms.unwrap().mean
                        * f.delay_budget.forward.as_ref().unwrap().packets as f64
                })
                .sum::<f64>()
                / packets as f64;
            assert!(
                (bar.total_ms() - weighted).abs() < 1e-6 * weighted,
                "{}: {} against {weighted}",
                bar.label,
                bar.total_ms()
            );
        }
        // The order of the bars: each group, then each setting.
        assert!(bars[0].label.starts_with("aql 5000") && bars[1].label.starts_with("aql 1000"));
    }

    /// A comparison of rrul (12 flows, 2 directions, 2 settings: 48 bars) keeps the
    /// figure at its natural size: the pings first, the rest left out and counted.
    #[test]
    fn delay_budget_caps_its_rows_and_shows_the_pings_first() {
        let rrul = |stack: &str| {
            simulate(
                "tcp-ndown-6mbit",
                &[
                    ("traffic.test", "rrul"),
                    ("traffic.length_s", "2"),
                    ("traffic.delay_s", "1"),
                    ("stack", stack),
                ],
            )
        };
        let (old, new) = (rrul("linux-4.8-bloated"), rrul("linux-6.16"));
        let runs = [
            PlotRun {
                label: "linux-4.8-bloated",
                results: &old,
            },
            PlotRun {
                label: "linux-6.16",
                results: &new,
            },
        ];
        let fig = budget_figure("rrul", &runs);
        assert_eq!(old.flows.len(), 12);
        let titles = fig
            .rows
            .iter()
            .filter(|r| matches!(r, budget::BudgetRow::Title(_)))
            .count();
        assert!(titles < 12, "{titles} flows drawn");
        assert!(
            fig.heading.contains(&format!(
                "(first {titles} of 12 flows; all in results.json)"
            )),
            "{}",
            fig.heading
        );
        assert!(fig.height_px() <= budget::MAX_HEIGHT_PX);
        let echoes = old.flows.iter().filter(|f| f.is_echo()).count();
        let first: Vec<&String> = fig
            .rows
            .iter()
            .filter_map(|r| match r {
                budget::BudgetRow::Title(t) => Some(t),
                budget::BudgetRow::Bar(_) => None,
            })
            .take(echoes)
            .collect();
        for t in first {
            assert!(
                old.flows.iter().any(|f| f.is_echo() && *t == f.name),
                "{t} is not a ping"
            );
        }
        let bars = budget_bars(&fig);
        assert_eq!(bars[0].label, "linux-4.8-bloated: request");
        assert_eq!(bars[1].label, "linux-4.8-bloated: reply");
        assert_eq!(bars[2].label, "linux-6.16: request");
    }
}
