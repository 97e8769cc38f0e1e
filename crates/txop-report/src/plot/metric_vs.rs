//! The picture of a `--metric-vs` chart ([`crate::metric_vs`]): a panel per headline
//! figure, each with its own y axis; x = the varied key; a line per setting through the
//! medians, and over several seeds a bar from the smallest to the largest.

use super::LOG_SPAN_RATIO;
use super::{colour, Axis, Figure, Legend, LegendEntry, LineFigure, Mark, Panel, Scale, Series};
use crate::metric_vs::{VsChart, METRICS};

/// The chart as a figure.
pub(super) fn figure(chart: &VsChart) -> Figure {
    let xs: Vec<f64> = chart
        .panels
        .iter()
        .flatten()
        .flat_map(|l| l.points.iter().map(|p| p.x))
        .collect();
    let (lo, hi) = span(&xs);
    // Values over more than a decade and all positive (1, 4, 16, 64 stations) spread
    // evenly on a log axis; a linear one would crowd the small ones.
    let scale = if lo > 0.0 && hi / lo >= LOG_SPAN_RATIO / 3.0 {
        Scale::Log
    } else {
        Scale::Linear
    };
    let mut x = padded(&chart.key, lo, hi, scale);
    if scale == Scale::Log {
        let mut marks = xs.clone();
        marks.sort_by(f64::total_cmp);
        marks.dedup();
        x.marks = marks;
    }
    let panels = METRICS
        .iter()
        .zip(&chart.panels)
        .map(|(m, lines)| {
            let values: Vec<f64> = lines
                .iter()
                .flat_map(|l| l.points.iter().flat_map(|p| [p.min, p.max]))
                .collect();
            let (lo, hi) = span(&values);
            // Throughput and delay from zero, so that a line's height reads as a size;
            // Jain's index (between 1/n and 1) up to 1, from 0.9 or lower.
            let (lo, hi) = if m.unit.is_empty() {
                (lo.min(0.9), 1.0)
            } else {
                (lo.min(0.0), hi)
            };
            let label = if m.unit.is_empty() {
                m.name.to_string()
            } else {
                format!("{} ({})", m.name, m.unit)
            };
            let mut series = Vec::new();
            for (i, line) in lines.iter().enumerate() {
                series.push(Series {
                    colour: colour(i),
                    points: line.points.iter().map(|p| (p.x, p.median)).collect(),
                    mark: Mark::Dots,
                });
                if line.points.iter().any(|p| p.runs > 1) {
                    series.push(Series {
                        colour: colour(i),
                        points: line
                            .points
                            .iter()
                            .flat_map(|p| [(p.x, p.min), (p.x, p.max)])
                            .collect(),
                        mark: Mark::Whiskers,
                    });
                }
            }
            Panel {
                title: Some(m.name.to_string()),
                series,
                y: Some(padded(&label, lo, hi, Scale::Linear)),
            }
        })
        .collect();
    let lines = chart.panels.first().map_or(&[][..], Vec::as_slice);
    // The legend says "… n more" where its column ends.
    let entries: Vec<LegendEntry> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| LegendEntry {
            name: l.label.clone(),
            note: String::new(),
            colour: colour(i),
            mark: Mark::Line,
        })
        .collect();
    let header = if chart.seeds.len() > 1 {
        format!("median, bar: range of {} seeds", chart.seeds.len())
    } else {
        "one run per point".to_string()
    };
    Figure::Lines(LineFigure {
        stem: "metric-vs",
        heading: chart.heading(),
        x,
        y: padded("", 0.0, 1.0, Scale::Linear),
        panels,
        legend: Legend { header, entries },
    })
}

/// The smallest and largest of `values` (0 and 1 when there are none).
fn span(values: &[f64]) -> (f64, f64) {
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if lo.is_finite() && hi.is_finite() {
        (lo, hi)
    } else {
        (0.0, 1.0)
    }
}

/// An axis over `lo..hi` with a margin, so that points at the ends are not cut by the
/// frame (on a log axis, a factor; a single value gets a span around it).
fn padded(label: &str, lo: f64, hi: f64, scale: Scale) -> Axis {
    let (min, max) = match scale {
        Scale::Log => (lo / 1.25, hi * 1.25),
        Scale::Linear => {
            let d = if hi > lo {
                (hi - lo) * 0.06
            } else {
                lo.abs().max(1.0) * 0.1
            };
            (if lo == 0.0 { 0.0 } else { lo - d }, hi + d)
        }
    };
    Axis {
        label: label.to_string(),
        min,
        max,
        scale,
        marks: Vec::new(),
        names: &[],
    }
}
