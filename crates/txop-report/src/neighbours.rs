//! `txop run` of a scenario with several BSSs (`[[bss]]`): every BSS simulated at once,
//! each on its channel ([`txop_sim::Neighbourhood`]), and reported BSS by BSS.
//!
//! What it writes mirrors `txop compare`, with a BSS where a comparison has a run: the
//! summary is a table with a column per BSS, then each BSS's stations; results.json
//! holds every BSS's results under its name; the plots have a line per BSS; a flent
//! test gives a data file per BSS.

use crate::run::{Column, Failure};
use crate::runner::{internal_error_line, load, scenario_dir};
use crate::scenario::{self, ResolvedBss, Scenario};
use crate::{compare, report};
use serde::Serialize;
use txop_core::Nanos;
use txop_results::Results;
use txop_sim::Neighbourhood;

/// A scenario with several BSSs, loaded and resolved.
pub struct PreparedBsss {
    /// Its name: the file's `name`, or the file stem.
    pub name: String,
    /// Which setting of a comparison this is; empty for a run of its own.
    pub setting: String,
    /// The run's seed (BSS 0's; the others' follow from it).
    pub seed: u64,
    /// The scenario as given, with the overrides applied (what `txop show` prints).
    pub scenario: Scenario,
    /// Every BSS, in order.
    pub bsss: Vec<ResolvedBss>,
}

impl PreparedBsss {
    /// This run in messages, as [`crate::runner::Prepared::label`] words it.
    pub fn label(&self) -> String {
        crate::runner::setting_label(&self.name, &self.setting, self.seed)
    }

    /// When the last BSS's run ends.
    pub fn end(&self) -> Nanos {
        self.bsss
            .iter()
            .map(|b| b.cfg.duration)
            .max()
            .unwrap_or(Nanos::ZERO)
    }
}

/// `spec` with `sets` applied, resolved BSS by BSS, if it lists BSSs (`None` if not:
/// then it is a single-BSS scenario for the usual path). `seed` overrides the
/// scenario's.
pub fn prepare(
    spec: &str,
    sets: &[(String, String)],
    seed: Option<u64>,
) -> Result<Option<PreparedBsss>, String> {
    let (source, text) = load(spec)?;
    let mut scenario: Scenario =
        scenario::parse(&text, sets).map_err(|e| e.in_source(&source).to_string())?;
    if !scenario.has_bsss() {
        return Ok(None);
    }
    refuse_unused_sets(&scenario, sets).map_err(|e| format!("{source}: {e}"))?;
    scenario.base_dir = scenario_dir(spec);
    if let Some(s) = seed {
        scenario.seed = s;
    }
    let bsss = scenario
        .resolve_bsss()
        .map_err(|e| e.in_source(&source).to_string())?;
    let name = if scenario.name.is_empty() {
        std::path::Path::new(spec)
            .file_stem()
            .map_or(spec.to_string(), |s| s.to_string_lossy().into_owned())
    } else {
        scenario.name.clone()
    };
    Ok(Some(PreparedBsss {
        name,
        setting: String::new(),
        seed: scenario.seed,
        scenario,
        bsss,
    }))
}

/// Refuse a `--set` of a top-level key that every `[[bss]]` entry gives itself: it
/// would change nothing (each entry's own value wins), silently.
fn refuse_unused_sets(scenario: &Scenario, sets: &[(String, String)]) -> Result<(), String> {
    for (key, _) in sets {
        if scenario.every_bss_gives(key) {
            return Err(format!(
                "{key}: every [[bss]] entry gives its own, so this setting changes nothing; \
                 set it per BSS (bss[0].{key} … bss[{}].{key})",
                scenario.bss.len() - 1
            ));
        }
    }
    Ok(())
}

/// results.json of a run with several BSSs: each BSS's results under its name.
#[derive(Serialize)]
pub(crate) struct NeighbourhoodReport<'a> {
    txop_version: &'a str,
    scenario: &'a str,
    seed: u64,
    bss: Vec<BssReport<'a>>,
}

#[derive(Serialize)]
pub(crate) struct BssReport<'a> {
    name: &'a str,
    channel: u16,
    /// The BSS as resolved (its own keys over the scenario's), in results.json.
    #[serde(skip_serializing_if = "Option::is_none")]
    resolved: Option<&'a Scenario>,
    #[serde(flatten)]
    results: &'a Results,
}

/// Run every BSS of `p` to its end, in steps of 1 % (stepping changes nothing),
/// calling `advance` with the simulated nanoseconds of each step.
pub fn simulate(p: &PreparedBsss, advance: &(dyn Fn(u64) + Sync)) -> Result<Vec<Results>, Failure> {
    simulate_captured(p, advance, None).map(|(results, _)| results)
}

/// [`simulate`], capturing each BSS's air within `capture`'s bounds if given (one
/// configuration per BSS, in order): the results, and each BSS's capture.
pub fn simulate_captured(
    p: &PreparedBsss,
    advance: &(dyn Fn(u64) + Sync),
    capture: Option<Vec<txop_capture::CaptureConfig>>,
) -> Result<(Vec<Results>, Vec<crate::runner::CapturedAir>), Failure> {
    let bsss = p.bsss.iter().map(ResolvedBss::bss_config).collect();
    let mut hood = Neighbourhood::new(bsss).map_err(Failure::User)?;
    let capture_error = |e: std::io::Error| {
        Failure::Internal(internal_error_line(
            Some(&p.label()),
            &format!("capture: {e}"),
        ))
    };
    for (sim, cfg) in hood
        .bsss_mut()
        .iter_mut()
        .zip(capture.into_iter().flatten())
    {
        sim.capture(cfg).map_err(capture_error)?;
    }
    let end = p.end();
    let step = Nanos::from_ns((end.as_ns() / 100).max(1));
    let mut t = Nanos::ZERO;
    while t < end {
        let next = (t + step).min(end);
        hood.run_until(next);
        if let Some(stuck) = hood.bsss().iter().find_map(|s| s.stuck()) {
            return Err(Failure::Internal(internal_error_line(
                Some(&p.label()),
                &stuck.to_string(),
            )));
        }
        advance((next - t).as_ns());
        t = next;
    }
    let mut air = Vec::new();
    for sim in hood.bsss_mut() {
        if let Some(captured) = sim.finish_capture() {
            air.push(captured.map_err(capture_error)?);
        }
    }
    let results = hood
        .bsss()
        .iter()
        .zip(&p.bsss)
        .map(|(s, b)| crate::runner::with_groups(s.results(), &b.scenario))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Failure::Internal(internal_error_line(Some(&p.label()), &e)))?;
    Ok((results, air))
}

/// The summary: the table with a column per BSS, then each BSS's stations.
pub fn summary(p: &PreparedBsss, results: &[Results]) -> String {
    let labelled: Vec<(&str, &Results)> = p
        .bsss
        .iter()
        .map(|b| b.name.as_str())
        .zip(results.iter())
        .collect();
    let mut text = compare::table_of(&p.name, "BSSs side by side", &labelled);
    for (b, r) in p.bsss.iter().zip(results) {
        text.push('\n');
        text.push_str(&report::summary(
            &format!("{} / bss {} (channel {})", p.name, b.name, b.channel),
            r,
        ));
    }
    text
}

/// results.json (`resolved`: with each BSS's resolved scenario) or the `--json`
/// object of a run with several BSSs.
pub(crate) fn report<'a>(
    p: &'a PreparedBsss,
    results: &'a [Results],
    resolved: bool,
) -> NeighbourhoodReport<'a> {
    NeighbourhoodReport {
        txop_version: env!("CARGO_PKG_VERSION"),
        scenario: &p.name,
        seed: p.seed,
        bss: bss_reports(p, results, resolved),
    }
}

/// Each BSS's results under its name (`resolved`: with its resolved scenario), in
/// the scenario's order.
pub(crate) fn bss_reports<'a>(
    p: &'a PreparedBsss,
    results: &'a [Results],
    resolved: bool,
) -> Vec<BssReport<'a>> {
    p.bsss
        .iter()
        .zip(results)
        .map(|(b, r)| BssReport {
            name: &b.name,
            channel: b.channel,
            resolved: resolved.then_some(&b.scenario),
            results: r,
        })
        .collect()
}

/// The table's columns: one per BSS.
pub(crate) fn columns<'a>(p: &'a PreparedBsss, results: &'a [Results]) -> Vec<Column<'a>> {
    p.bsss
        .iter()
        .zip(results)
        .map(|(b, results)| Column {
            label: &b.name,
            scenario: &b.scenario,
            results,
            settings: &[],
        })
        .collect()
}
