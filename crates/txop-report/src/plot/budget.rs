//! "Where the time goes" (`delay-budget.png`, docs/results.md, "The delay budget"): a
//! stacked bar per flow and direction (in a comparison, per setting too), each segment
//! one stage's mean time per packet, so that a bar is as long as the mean one-way delay
//! of the packets it splits. With many stations or flows, a bar per flow group
//! ([`crate::report::flow_groups`]) instead, the mean over its flows' packets. The
//! flows that measure (pings, probes) come first.

use super::{colour, value_label, PlotRun, RGBColor};
use crate::report::{flow_groups, SCREEN_FLOWS};
use txop_results::results::{DirectionBudget, FlowResult, StageBudget};

/// The figure's height at most, px: rows beyond it are left out (whole flows or
/// groups, counted in the heading; every flow's budget is in results.json), so that
/// the bars stay readable at the picture's natural size.
pub(super) const MAX_HEIGHT_PX: u32 = 900;
/// One row (a bar, or a flow's name above its bars), px.
pub(super) const ROW_PX: u32 = 19;
/// Everything but the rows: the heading, the x axis and its label, the margins, px.
pub(super) const CHROME_PX: u32 = 46 + 56 + 24;
/// The legend's nine stages with their notes need this much height, px.
pub(super) const MIN_HEIGHT_PX: u32 = 520;

/// What each stage holds, under its name in the legend (docs/results.md's table).
const STAGE_NOTES: [(&str, &str); 9] = [
    ("to_cell", "sender's wired hop or host bus"),
    ("qdisc", "the qdisc above mac80211"),
    ("txq", "mac80211 TXQ: fq/CoDel, AQL"),
    ("driver", "driver or firmware queue"),
    ("access", "backoff, others' airtime, NAV"),
    ("retries", "earlier tries of it"),
    ("air", "the exchange that delivered it"),
    ("reorder", "receiver's reorder buffer"),
    ("from_cell", "receiver's host bus or wired hop"),
];

/// The stacked bars, ready to draw.
pub(super) struct BudgetFigure {
    pub(super) heading: String,
    /// The stages in the packet's order, as results.json names them; a bar's
    /// `means_ms` follow it.
    pub(super) stages: Vec<&'static str>,
    pub(super) rows: Vec<BudgetRow>,
    /// The x axis' label.
    pub(super) x_label: String,
}

pub(super) enum BudgetRow {
    /// A flow's (or flow group's) name, above its bars.
    Title(String),
    Bar(BudgetBar),
}

/// One direction of one flow (or flow group) in one run.
pub(super) struct BudgetBar {
    /// The setting (in a comparison) and the direction: `linux-6.16: reply`.
    pub(super) label: String,
    /// The mean time per packet in each of the figure's stages, ms; 0 for a stage the
    /// results do not have.
    pub(super) means_ms: Vec<f64>,
    /// The packets' mean delay, measured apart from the stages (`delay_sum_ns` over
    /// `packets`), ms: what the segments add up to.
    pub(super) delay_ms: f64,
}

impl BudgetBar {
    /// The bar's length: its segments added up, ms.
    pub(super) fn total_ms(&self) -> f64 {
        self.means_ms.iter().sum()
    }
}

impl BudgetFigure {
    pub(super) fn height_px(&self) -> u32 {
        (CHROME_PX + self.rows.len() as u32 * ROW_PX).max(MIN_HEIGHT_PX)
    }

    /// The legend's note for a stage.
    pub(super) fn note(stage: &str) -> &'static str {
        STAGE_NOTES
            .iter()
            .find(|(s, _)| *s == stage)
            .map_or("", |(_, n)| n)
    }

    /// A stage's colour: its place in the packet's order.
    pub(super) fn colour(&self, stage: usize) -> RGBColor {
        colour(stage)
    }

    /// What is written after a bar: the mean delay it splits (measured apart from
    /// the stages, which add up to it) and its two largest stages, `212 ms: driver
    /// 186, txq 52.0`, so that a short bar beside a long one still reads.
    pub(super) fn bar_note(&self, bar: &BudgetBar) -> String {
        let mut largest: Vec<(&str, f64)> = self
            .stages
            .iter()
            .copied()
            .zip(bar.means_ms.iter().copied())
            .filter(|(_, ms)| *ms > 0.0)
            .collect();
        largest.sort_by(|a, b| b.1.total_cmp(&a.1));
        let parts: Vec<String> = largest
            .iter()
            .take(2)
            .map(|(s, ms)| format!("{s} {}", value_label(*ms)))
            .collect();
        format!("{} ms: {}", value_label(bar.delay_ms), parts.join(", "))
    }
}

/// A flow's directions with packets, each named as a reader knows it: an echo's
/// `request` and `reply`, TCP's `data` and `ACKs`, any other flow's `data`.
fn directions(f: &FlowResult) -> Vec<(&'static str, &DirectionBudget)> {
    let tcp = f.retransmits.is_some();
    let (fwd, back) = if f.is_echo() {
        ("request", "reply")
    } else if tcp {
        ("data", "ACKs")
    } else {
        ("data", "back")
    };
    [(fwd, &f.delay_budget.forward), (back, &f.delay_budget.back)]
        .into_iter()
        .filter_map(|(name, b)| Some((name, b.as_ref().filter(|b| b.packets > 0)?)))
        .collect()
}

/// The bars of one flow group (or one flow) in a run: a bar per direction, the
/// stages' means over every packet of its flows (`sum_ns` over `packets`; for one
/// flow, results.json's `mean_ms` itself).
fn bars_of(
    stages: &[&'static str],
    flows: &[&FlowResult],
    run_label: Option<&str>,
) -> Vec<BudgetBar> {
    let mut names: Vec<&'static str> = Vec::new();
    for f in flows {
        for (name, _) in directions(f) {
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    names
        .into_iter()
        .map(|name| {
            let parts: Vec<&DirectionBudget> = flows
                .iter()
                .flat_map(|f| directions(f))
                .filter(|(n, _)| *n == name)
                .map(|(_, b)| b)
                .collect();
            let packets: u64 = parts.iter().map(|b| b.packets).sum();
            let delay_sum_ns: u64 = parts.iter().map(|b| b.delay_sum_ns).sum();
            let means_ms = stages
                .iter()
                .map(|stage| {
                    let of = |b: &DirectionBudget| -> Option<StageBudget> {
                        b.stages.iter().find(|s| s.stage == *stage).cloned()
                    };
                    match parts.as_slice() {
                        [one] => of(one).map_or(0.0, |s| s.mean_ms),
                        _ => {
                            let sum_ns: u64 =
                                parts.iter().filter_map(|b| of(b)).map(|s| s.sum_ns).sum();
                            sum_ns as f64 / packets as f64 / 1e6
                        }
                    }
                })
                .collect();
            BudgetBar {
                label: match run_label {
                    Some(run) => format!("{run}: {name}"),
                    None => name.to_string(),
                },
                means_ms,
                delay_ms: delay_sum_ns as f64 / packets as f64 / 1e6,
            }
        })
        .collect()
}

/// The figure for `runs`; `None` when no flow has a budget. `grouped` (many stations,
/// as the other plots decide) or more than [`SCREEN_FLOWS`] flows in a run draws a
/// bar per flow group rather than per flow.
pub(super) fn figure(title: &str, runs: &[PlotRun<'_>], grouped: bool) -> Option<BudgetFigure> {
    let mut stages: Vec<&'static str> = Vec::new();
    for run in runs {
        for f in &run.results.flows {
            for b in [&f.delay_budget.forward, &f.delay_budget.back]
                .into_iter()
                .flatten()
            {
                for s in &b.stages {
                    if !stages.contains(&s.stage) {
                        stages.push(s.stage);
                    }
                }
            }
        }
    }
    let grouped = grouped || runs.iter().any(|r| r.results.flows.len() > SCREEN_FLOWS);
    // Sections: (title, per run: its flows in the section).
    let mut sections: Vec<(String, Vec<Vec<&FlowResult>>)> = Vec::new();
    for (j, run) in runs.iter().enumerate() {
        let members: Vec<(String, Vec<&FlowResult>)> = if grouped {
            flow_groups(run.results)
                .into_iter()
                .map(|g| (format!("{}: {} flows", g.name, g.flows.len()), g.flows))
                .collect()
        } else {
            // The flow's name, and its number where two share one.
            let flows = &run.results.flows;
            flows
                .iter()
                .map(|f| {
                    let twins = flows.iter().filter(|g| g.name == f.name).count();
                    let name = if twins > 1 {
                        format!("{} #{}", f.name, f.flow)
                    } else {
                        f.name.clone()
                    };
                    (name, vec![f])
                })
                .collect()
        };
        for (name, flows) in members {
            if flows.iter().all(|f| directions(f).is_empty()) {
                continue;
            }
            let at = match sections.iter().position(|(n, _)| *n == name) {
                Some(at) => at,
                None => {
                    sections.push((name, vec![Vec::new(); runs.len()]));
                    sections.len() - 1
                }
            };
            sections[at].1[j] = flows;
        }
    }
    if sections.is_empty() {
        return None;
    }
    // The flows that measure delay (pings, probes) first, in their order: when rows are
    // left out, the loads' go.
    sections.sort_by_key(|(_, per_run)| !per_run.iter().flatten().any(|f| f.is_measurement()));
    let several = runs.len() > 1;
    let mut rows = Vec::new();
    let mut shown = 0;
    for (name, per_run) in &sections {
        let mut section = vec![BudgetRow::Title(name.clone())];
        for (j, flows) in per_run.iter().enumerate() {
            let label = several.then_some(runs[j].label);
            section.extend(
                bars_of(&stages, flows, label)
                    .into_iter()
                    .map(BudgetRow::Bar),
            );
        }
        let rows_px = (rows.len() + section.len()) as u32 * ROW_PX;
        if shown > 0 && CHROME_PX + rows_px > MAX_HEIGHT_PX {
            break;
        }
        rows.extend(section);
        shown += 1;
    }
    let what = if grouped { "flow groups" } else { "flows" };
    let left_out = if shown < sections.len() {
        format!(
            " (first {shown} of {} {what}; all in results.json)",
            sections.len()
        )
    } else {
        String::new()
    };
    let by = if grouped { ", by flow group" } else { "" };
    Some(BudgetFigure {
        heading: format!("{title}: where the time goes{by}{left_out}"),
        stages,
        rows,
        x_label: "mean time per packet (ms); a bar's stages add up to its mean one-way delay"
            .into(),
    })
}
