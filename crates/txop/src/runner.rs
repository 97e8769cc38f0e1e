//! Loading a scenario (built-in or file), applying overrides and running it: shared by
//! `txop run`, `txop compare` and `txop reproduce`.

use crate::builtin;
use crate::scenario::{self, Scenario};
use std::path::Path;
use txop_core::Nanos;
use txop_sim::{Results, SimConfig, Simulation};

/// A scenario loaded, overridden and resolved, ready to simulate.
pub struct Prepared {
    /// Where it came from (built-in name or file path), for error messages.
    pub source: String,
    /// Its name: the file's `name`, or the file stem.
    pub name: String,
    pub scenario: Scenario,
    pub cfg: SimConfig,
}

/// The text of a built-in scenario or scenario file, with its source name.
pub fn load(spec: &str) -> Result<(String, String), String> {
    if let Some(text) = builtin::get(spec) {
        return Ok((spec.to_string(), text.to_string()));
    }
    let path = Path::new(spec);
    if path.exists() {
        return std::fs::read_to_string(path)
            .map(|t| (spec.to_string(), t))
            .map_err(|e| format!("{spec}: cannot read: {e}"));
    }
    let hint = builtin::nearest(spec)
        .map(|n| format!(" (did you mean `{n}`?)"))
        .unwrap_or_default();
    Err(format!(
        "{spec}: no such scenario file or built-in scenario{hint}; `txop list` shows the built-ins"
    ))
}

/// `KEY=VALUE` strings as pairs.
pub fn parse_sets(sets: &[String]) -> Result<Vec<(String, String)>, String> {
    sets.iter()
        .map(|s| match s.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => {
                Ok((k.trim().to_string(), v.trim().to_string()))
            }
            _ => Err(format!("--set {s}: expected KEY=VALUE")),
        })
        .collect()
}

/// Load `spec`, apply `sets`, resolve; `seed` overrides the scenario's.
pub fn prepare(
    spec: &str,
    sets: &[(String, String)],
    seed: Option<u64>,
) -> Result<Prepared, String> {
    let (source, text) = load(spec)?;
    let scenario: Scenario = scenario::parse(&text, sets).map_err(|e| format!("{source}: {e}"))?;
    let mut cfg = scenario.resolve().map_err(|e| format!("{source}: {e}"))?;
    if let Some(s) = seed {
        cfg.seed = s;
    }
    let name = if scenario.name.is_empty() {
        Path::new(spec)
            .file_stem()
            .map_or(spec.to_string(), |s| s.to_string_lossy().into_owned())
    } else {
        scenario.name.clone()
    };
    Ok(Prepared {
        source,
        name,
        scenario,
        cfg,
    })
}

/// Run a simulation to its end in steps of 1 %, calling `advance` with the simulated
/// nanoseconds of each step (stepping does not change the results: `run_until` only
/// bounds how far the event loop goes).
pub fn simulate(p: &Prepared, advance: &(dyn Fn(u64) + Sync)) -> Result<Results, String> {
    let end = p.cfg.duration;
    let mut sim = Simulation::new(p.cfg.clone()).map_err(|e| format!("{}: {e}", p.source))?;
    let step = Nanos::from_ns((end.as_ns() / 100).max(1));
    let mut t = Nanos::ZERO;
    while t < end {
        let next = (t + step).min(end);
        sim.run_until(next);
        if let Some(stuck) = sim.stuck() {
            // A bug in the model, not in the scenario: reported as an internal error.
            panic!("{}: {stuck}", p.source);
        }
        advance((next - t).as_ns());
        t = next;
    }
    Ok(sim.results())
}
