//! Loading a scenario (built-in or file), applying overrides and running it: shared by
//! `txop run`, `txop compare` and `txop reproduce` (and, for the network it models,
//! `txop emu`: `txop::emulated`).

use crate::builtin;
use crate::scenario::{self, Scenario};
use std::path::Path;
use txop_core::Nanos;
use txop_results::Results;
use txop_sim::{SimConfig, Simulation};

/// A scenario loaded, overridden and resolved, ready to simulate.
pub struct Prepared {
    /// Where it came from (built-in name or file path), for error messages.
    pub source: String,
    /// Its name: the file's `name`, or the file stem.
    pub name: String,
    /// Which setting of a comparison this is (`linux-6.16, stations.count=4`); empty
    /// for a single run. Only for messages.
    pub setting: String,
    pub scenario: Scenario,
    pub cfg: SimConfig,
}

/// The largest scenario file read: 1 MiB. Scenario files are a few kB of TOML; the
/// cap keeps `txop run /dev/zero`-like mistakes from reading until memory runs out.
pub const MAX_SCENARIO_FILE_BYTES: u64 = 1 << 20;

/// The text of a built-in scenario or scenario file, with its source name.
///
/// A bare built-in name (`default`) means the built-in even when a file of that name
/// is in the current directory ([`shadowed_file`] says so); a path (`./default`)
/// always means the file. Only regular files are read (a FIFO would block, a device
/// never end), at most [`MAX_SCENARIO_FILE_BYTES`].
pub fn load(spec: &str) -> Result<(String, String), String> {
    if let Some(text) = builtin::get(spec) {
        return Ok((spec.to_string(), text.to_string()));
    }
    let path = Path::new(spec);
    if path.exists() {
        return read_scenario_file(path).map(|t| (spec.to_string(), t));
    }
    let hint = builtin::nearest(spec)
        .map(|n| format!(" (did you mean `{n}`?)"))
        .unwrap_or_default();
    Err(format!(
        "{spec}: no such scenario file or built-in scenario{hint}; `txop list` shows the built-ins"
    ))
}

/// The directory a scenario's relative paths (`snr_trace`) are read from: a scenario
/// file's own directory; `None` for a built-in scenario (the current directory).
pub fn scenario_dir(spec: &str) -> Option<std::path::PathBuf> {
    if builtin::get(spec).is_some() {
        return None;
    }
    Path::new(spec).parent().map(Path::to_path_buf)
}

/// The text of the scenario file at `path`: a regular file (after links) of at most
/// [`MAX_SCENARIO_FILE_BYTES`], in UTF-8. Errors name the file.
pub fn read_scenario_file(path: &Path) -> Result<String, String> {
    use std::io::Read;
    let shown = path.display();
    let not_regular = || format!("{shown}: not a regular file; a scenario is a TOML file");
    let too_big = || {
        format!(
            "{shown}: larger than {} KiB; a scenario is a TOML file of a few kB",
            MAX_SCENARIO_FILE_BYTES >> 10
        )
    };
    // Checked before opening: opening a FIFO for reading blocks until a writer comes.
    let meta = std::fs::metadata(path).map_err(|e| format!("{shown}: cannot read: {e}"))?;
    if !meta.is_file() {
        return Err(not_regular());
    }
    if meta.len() > MAX_SCENARIO_FILE_BYTES {
        return Err(too_big());
    }
    let file = std::fs::File::open(path).map_err(|e| format!("{shown}: cannot read: {e}"))?;
    // The file may have changed since: read one byte past the cap at most.
    let mut bytes = Vec::new();
    file.take(MAX_SCENARIO_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{shown}: cannot read: {e}"))?;
    if bytes.len() as u64 > MAX_SCENARIO_FILE_BYTES {
        return Err(too_big());
    }
    String::from_utf8(bytes).map_err(|_| format!("{shown}: not UTF-8 text"))
}

/// When `spec` is a built-in name and a file or directory of the same name is in the
/// current directory: one line saying which is used and how to get the other.
pub fn shadowed_file(spec: &str) -> Option<String> {
    (builtin::get(spec).is_some() && Path::new(spec).exists()).then(|| {
        format!(
            "`{spec}` is the built-in scenario; the file `{spec}` here is not read (give it as ./{spec} to run it)"
        )
    })
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
    prepare_edited(spec, sets, seed, &|_| {})
}

/// [`prepare`], with `edit` applied to the scenario after the overrides and before it
/// is resolved (and so checked): for a change no `--set` can express, such as one key
/// of every `[[stations.list]]` entry (`txop reproduce --rate-control`).
pub fn prepare_edited(
    spec: &str,
    sets: &[(String, String)],
    seed: Option<u64>,
    edit: &dyn Fn(&mut Scenario),
) -> Result<Prepared, String> {
    let (source, text) = load(spec)?;
    let mut scenario: Scenario =
        scenario::parse(&text, sets).map_err(|e| e.in_source(&source).to_string())?;
    edit(&mut scenario);
    scenario.base_dir = scenario_dir(spec);
    let mut cfg = scenario
        .resolve()
        .map_err(|e| e.in_source(&source).to_string())?;
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
        setting: String::new(),
        scenario,
        cfg,
    })
}

/// Why running a prepared scenario failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SimError {
    /// The scenario cannot be simulated as given: the user's to fix (exit 2).
    User(String),
    /// The simulator failed on a scenario it accepted: a bug (exit 1).
    Internal(InternalError),
}

impl From<String> for SimError {
    /// A plain message is the user's (input) error.
    fn from(e: String) -> Self {
        SimError::User(e)
    }
}

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SimError::User(e) => f.write_str(e),
            SimError::Internal(e) => e.fmt(f),
        }
    }
}

/// A bug met while running a scenario: which run (`context`, e.g. `default seed 1`,
/// see [`run_label`]) and what went wrong, e.g. the event loop's watchdog ("simulated
/// time has not advanced in 10 million events at t=0.4 s").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InternalError {
    pub context: String,
    pub message: String,
}

impl std::fmt::Display for InternalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.context, one_line(&self.message))
    }
}

impl Prepared {
    /// An internal error of this run (its scenario name and seed) saying `message`;
    /// for the simulator's failures: `sim.run_until(t).map_err(|e| p.internal_error(e))?`.
    pub fn internal_error(&self, message: impl Into<String>) -> SimError {
        SimError::Internal(InternalError {
            context: self.label(),
            message: message.into(),
        })
    }

    /// This run in messages: `<scenario> seed <n>`, or `<scenario> (<setting>) seed
    /// <n>` in a comparison.
    pub fn label(&self) -> String {
        setting_label(&self.name, &self.setting, self.cfg.seed)
    }
}

/// A run in messages: `<scenario> seed <n>`, or `<scenario> (<setting>) seed <n>` for
/// a comparison's setting.
pub fn setting_label(scenario: &str, setting: &str, seed: u64) -> String {
    if setting.is_empty() {
        run_label(scenario, seed)
    } else {
        run_label(&format!("{scenario} ({setting})"), seed)
    }
}

/// How a run is named in an internal error: `<scenario> seed <n>`.
pub fn run_label(scenario: &str, seed: u64) -> String {
    format!("{scenario} seed {seed}")
}

/// `text` on one line: every run of whitespace that holds a line break becomes one
/// space (a panic message from `assert_eq!` spans three lines).
pub fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .enumerate()
    {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(line);
    }
    out
}

/// The line `txop` prints for an internal error: `txop: internal error: <context>:
/// <message>` (`<context>` as [`run_label`] gives it, when known), always one line.
pub fn internal_error_line(context: Option<&str>, message: &str) -> String {
    match context {
        Some(c) => format!(
            "txop: internal error: {}: {}",
            one_line(c),
            one_line(message)
        ),
        None => format!("txop: internal error: {}", one_line(message)),
    }
}

thread_local! {
    /// What this thread is running, for the panic hook's line (see [`enter_context`]).
    static CONTEXT: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// While the returned guard lives, this thread's work is `label` (e.g. `default seed
/// 1`): an internal error (a panic) on this thread names it. Guards nest; dropping one
/// restores the label before it.
pub fn enter_context(label: String) -> ContextGuard {
    let previous = CONTEXT.with(|c| c.replace(Some(label)));
    ContextGuard { previous }
}

/// What this thread is running, if a [`ContextGuard`] says.
pub fn current_context() -> Option<String> {
    CONTEXT.with(|c| c.borrow().clone())
}

/// Restores the previous context when dropped (see [`enter_context`]).
#[must_use = "the context lasts while the guard lives"]
pub struct ContextGuard {
    previous: Option<String>,
}

impl Drop for ContextGuard {
    fn drop(&mut self) {
        let previous = self.previous.take();
        CONTEXT.with(|c| *c.borrow_mut() = previous);
    }
}

/// Run a simulation to its end in steps of 1 %, calling `advance` with the simulated
/// nanoseconds of each step (stepping does not change the results: `run_until` only
/// bounds how far the event loop goes). While it runs, the thread's context (for an
/// internal error's line) is this run's scenario and seed.
pub fn simulate(p: &Prepared, advance: &(dyn Fn(u64) + Sync)) -> Result<Results, SimError> {
    simulate_observed(p, advance, &mut |_| {})
}

/// [`simulate`], handing the finished simulation to `observe` before its results are
/// taken: what a test checks besides the results (the model's invariants, such as
/// `Cell::queue_occupancy`).
pub fn simulate_observed(
    p: &Prepared,
    advance: &(dyn Fn(u64) + Sync),
    observe: &mut dyn FnMut(&Simulation),
) -> Result<Results, SimError> {
    run_to_end(p, advance, None, observe).map(|(results, _)| results)
}

/// A capture's pcapng file and what it holds.
pub type CapturedAir = (Vec<u8>, txop_capture::CaptureStats);

/// [`simulate`], capturing the air within `capture`'s bounds if given: the results,
/// and the capture's pcapng file with what it holds.
pub fn simulate_captured(
    p: &Prepared,
    advance: &(dyn Fn(u64) + Sync),
    capture: Option<txop_capture::CaptureConfig>,
) -> Result<(Results, Option<CapturedAir>), SimError> {
    run_to_end(p, advance, capture, &mut |_| {})
}

/// [`simulate_captured`], handing the finished simulation to `observe`.
fn run_to_end(
    p: &Prepared,
    advance: &(dyn Fn(u64) + Sync),
    capture: Option<txop_capture::CaptureConfig>,
    observe: &mut dyn FnMut(&Simulation),
) -> Result<(Results, Option<CapturedAir>), SimError> {
    let _context = enter_context(p.label());
    let end = p.cfg.duration;
    let mut sim =
        Simulation::new(p.cfg.clone()).map_err(|e| SimError::User(format!("{}: {e}", p.source)))?;
    if let Some(c) = capture {
        sim.capture(c)
            .map_err(|e| p.internal_error(format!("capture: {e}")))?;
    }
    let step = Nanos::from_ns((end.as_ns() / 100).max(1));
    let mut t = Nanos::ZERO;
    while t < end {
        let next = (t + step).min(end);
        sim.run_until(next);
        if let Some(stuck) = sim.stuck() {
            // A bug in the model, not in the scenario: reported as an internal error.
            return Err(p.internal_error(stuck.to_string()));
        }
        advance((next - t).as_ns());
        t = next;
    }
    let air = sim
        .finish_capture()
        .transpose()
        .map_err(|e| p.internal_error(format!("capture: {e}")))?;
    observe(&sim);
    let results = with_groups(sim.results(), &p.scenario).map_err(|e| p.internal_error(e))?;
    Ok((results, air))
}

/// `results` with their station groups ([`txop_results::results::group_results`]) as
/// `scenario` makes them (its `[[stations.list]]` entries and `group` keys).
pub fn with_groups(mut results: Results, scenario: &Scenario) -> Result<Results, String> {
    let groups: Vec<(String, Vec<u16>)> = scenario
        .station_groups()
        .map_err(|e| format!("station groups: {e}"))?
        .into_iter()
        .map(|g| (g.name, g.stations))
        .collect();
    results.groups =
        txop_results::results::group_results(&results.stations, &results.flows, &groups);
    Ok(results)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_error_line_is_one_line_naming_scenario_and_seed() {
        let p = prepare("default", &[], Some(7)).unwrap();
        let SimError::Internal(e) = p
            .internal_error("simulated time has not advanced in 10 million events\n  at t=0.400 s")
        else {
            panic!("not internal")
        };
        assert_eq!(
            internal_error_line(Some(&e.context), &e.message),
            "txop: internal error: default seed 7: simulated time has not advanced in 10 \
             million events at t=0.400 s"
        );
        assert_eq!(
            e.to_string(),
            "default seed 7: simulated time has not advanced in 10 million events at t=0.400 s"
        );
        assert_eq!(
            internal_error_line(
                None,
                "assertion `left == right` failed\n  left: 1\n right: 2"
            ),
            "txop: internal error: assertion `left == right` failed left: 1 right: 2"
        );
    }

    #[test]
    fn contexts_nest_and_are_per_thread() {
        assert_eq!(current_context(), None);
        {
            let _a = enter_context(run_label("a", 1));
            {
                let _b = enter_context(run_label("b", 2));
                assert_eq!(current_context().as_deref(), Some("b seed 2"));
                let other = std::thread::spawn(current_context).join().unwrap();
                assert_eq!(other, None);
            }
            assert_eq!(current_context().as_deref(), Some("a seed 1"));
        }
        assert_eq!(current_context(), None);
    }

    #[test]
    fn scenario_files_must_be_regular_and_small() {
        let e = load("/dev/zero").unwrap_err();
        assert_eq!(
            e,
            "/dev/zero: not a regular file; a scenario is a TOML file"
        );
        let dir = std::env::temp_dir().join(format!("txop-runner-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let big = dir.join("big.toml");
        let line = "# padding\n".repeat(1 << 17);
        std::fs::write(&big, &line).unwrap();
        let e = read_scenario_file(&big).unwrap_err();
        assert!(e.contains("big.toml: larger than 1024 KiB"), "{e}");
        let e = read_scenario_file(&dir).unwrap_err();
        assert!(e.contains("not a regular file"), "{e}");
        let ok = dir.join("ok.toml");
        std::fs::write(&ok, "[stations]\ncount = 2\n").unwrap();
        assert_eq!(read_scenario_file(&ok).unwrap(), "[stations]\ncount = 2\n");
        std::fs::remove_dir_all(&dir).ok();
    }
}
