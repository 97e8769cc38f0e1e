//! `txop._txop`: the native module of the Python package `txop` (python/txop/).
//!
//! A thin layer over txop-report's [`txop_report::run`]: the very functions `txop run`
//! and `txop compare` call, so that Python gets the same bytes as the command line.
//! Errors the command line prints as `txop: error: MESSAGE` raise `TxopError` (a
//! `ValueError`) with MESSAGE; internal errors raise `TxopInternalError` with the line
//! the command line prints. The GIL is released while a simulation runs, so that
//! Python threads (a progress bar, a Dask worker's heartbeat) go on meanwhile.

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::path::Path;
use txop_report::results_dir::{self, Protected};
use txop_report::run::{CompareOutcome, Failure, Outcome, Plan};

create_exception!(
    _txop,
    TxopError,
    PyValueError,
    "A bad input: an unknown scenario, key or value. The message is the line `txop` \
     prints after `txop: error: `."
);
create_exception!(
    _txop,
    TxopInternalError,
    PyRuntimeError,
    "A bug in txop (e.g. the simulator's watchdog): the line `txop` prints."
);

fn user_error(e: String) -> PyErr {
    TxopError::new_err(e)
}

fn failure(f: Failure) -> PyErr {
    match f {
        Failure::User(e) => TxopError::new_err(e),
        other => TxopInternalError::new_err(other.to_string()),
    }
}

/// `simulate`, with a panic reported as an internal error naming the run (a panic
/// must not unwind into Python).
fn simulate(plan: Plan) -> Result<Outcome, Failure> {
    let label = plan.label();
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| plan.simulate(&|_| {})))
        .unwrap_or_else(|payload| {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic".into());
            Err(Failure::Internal(txop_report::runner::internal_error_line(
                Some(&label),
                &msg,
            )))
        })
}

/// Write `files` as the results directory `dir` (as `txop run -o DIR [--force]`).
fn write_dir(dir: &str, force: bool, files: &[(String, Vec<u8>)]) -> PyResult<()> {
    let path = Path::new(dir);
    results_dir::write(path, force, &Protected::of_process(), files)
        .map_err(|why| user_error(format!("{}: {why}", path.display())))
}

fn files_to_py<'py>(
    py: Python<'py>,
    files: Vec<(String, Vec<u8>)>,
) -> Vec<(String, Bound<'py, PyBytes>)> {
    files
        .into_iter()
        .map(|(name, bytes)| (name, PyBytes::new(py, &bytes)))
        .collect()
}

/// The scenario `spec` with `sets` applied, checked as `txop run` checks it:
/// `(name, seed, resolved TOML, cost, has BSSs)`. The TOML is what `txop show`
/// prints; the cost (nodes × simulated seconds) orders a sweep longest-first.
#[pyfunction]
#[pyo3(signature = (spec, sets, seed=None))]
fn resolve(
    spec: &str,
    sets: Vec<(String, String)>,
    seed: Option<u64>,
) -> PyResult<(String, u64, String, f64, bool)> {
    let plan = txop_report::run::plan(spec, &sets, seed).map_err(user_error)?;
    let text = toml::to_string(plan.scenario())
        .map_err(|e| user_error(format!("cannot encode the scenario: {e}")))?;
    Ok((
        plan.name().to_string(),
        plan.seed(),
        text,
        plan.cost(),
        matches!(plan, Plan::Bsss(_)),
    ))
}

/// One finished run, as `txop run` has it before printing.
#[pyclass(frozen, module = "txop._txop")]
struct Run {
    outcome: Outcome,
}

#[pymethods]
impl Run {
    /// The summary `txop run` prints.
    fn summary(&self) -> String {
        self.outcome.summary()
    }

    /// What `txop run --json` prints.
    fn json(&self) -> PyResult<String> {
        self.outcome.json().map_err(user_error)
    }

    /// The results directory's files as `(name, bytes)`.
    fn files<'py>(&self, py: Python<'py>) -> PyResult<Vec<(String, Bound<'py, PyBytes>)>> {
        let files = py.detach(|| self.outcome.files()).map_err(user_error)?;
        Ok(files_to_py(py, files))
    }

    /// The headline figures of each cell (one, or one per BSS), in the order of
    /// `METRICS` (throughput Mbit/s, delay p50 ms, delay p99 ms, Jain's index): what
    /// a sweep keeps for its `--metric-vs` chart. `None` where a run has no figure.
    fn headline(&self) -> Vec<Vec<Option<f64>>> {
        self.outcome
            .headline()
            .into_iter()
            .map(|h| h.to_vec())
            .collect()
    }

    /// Write the results directory `txop run -o DIR` writes.
    #[pyo3(signature = (dir, force=false))]
    fn write(&self, py: Python<'_>, dir: &str, force: bool) -> PyResult<()> {
        let files = py.detach(|| self.outcome.files()).map_err(user_error)?;
        write_dir(dir, force, &files)
    }
}

/// Run `spec` with `sets` (`--set` pairs) and `seed`, as `txop run` does, without the
/// GIL.
#[pyfunction]
#[pyo3(signature = (spec, sets, seed=None))]
fn run(
    py: Python<'_>,
    spec: &str,
    sets: Vec<(String, String)>,
    seed: Option<u64>,
) -> PyResult<Run> {
    let plan = txop_report::run::plan(spec, &sets, seed).map_err(user_error)?;
    let outcome = py.detach(|| simulate(plan)).map_err(failure)?;
    Ok(Run { outcome })
}

/// A finished comparison, as `txop compare` has it before printing.
#[pyclass(frozen, module = "txop._txop")]
struct Compare {
    outcome: CompareOutcome,
}

#[pymethods]
impl Compare {
    /// The table `txop compare` prints.
    fn summary(&self) -> String {
        self.outcome.summary()
    }

    /// What `txop compare --json` prints.
    fn json(&self) -> PyResult<String> {
        self.outcome.json().map_err(user_error)
    }

    /// Write the results directory `txop compare -o DIR` writes.
    #[pyo3(signature = (dir, force=false))]
    fn write(&self, py: Python<'_>, dir: &str, force: bool) -> PyResult<()> {
        let files = py.detach(|| self.outcome.files()).map_err(user_error)?;
        write_dir(dir, force, &files)
    }
}

/// `txop compare SPEC --stack … --vary … --set … --seed … [--metric-vs KEY]` on
/// `workers` threads, without the GIL.
#[pyfunction]
#[pyo3(signature = (spec, stacks, vary, sets, seed=None, workers=1, metric_vs=None))]
#[allow(clippy::too_many_arguments)]
fn compare(
    py: Python<'_>,
    spec: &str,
    stacks: Vec<String>,
    vary: Vec<String>,
    sets: Vec<String>,
    seed: Option<u64>,
    workers: usize,
    metric_vs: Option<&str>,
) -> PyResult<Compare> {
    let mut plan =
        txop_report::run::plan_compare(spec, &stacks, &vary, &sets, seed).map_err(user_error)?;
    if let Some(key) = metric_vs {
        plan = plan.with_metric_vs(key).map_err(user_error)?;
    }
    let outcome = py
        .detach(|| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                plan.simulate(workers, &|_| {})
            }))
            .unwrap_or(Err(Failure::Panicked))
        })
        .map_err(failure)?;
    Ok(Compare { outcome })
}

/// A `--metric-vs` chart of a sweep's runs.
#[pyclass(frozen, module = "txop._txop")]
struct MetricVs {
    chart: txop_report::metric_vs::VsChart,
}

#[pymethods]
impl MetricVs {
    /// The chart's table.
    fn table(&self) -> String {
        self.chart.table()
    }

    /// The chart as JSON (the `metric_vs` object of a comparison's results).
    fn json(&self) -> PyResult<String> {
        txop_report::run::to_json(&self.chart).map_err(user_error)
    }

    /// The chart's files as `(name, bytes)`: its table, PNG and SVG.
    fn files<'py>(&self, py: Python<'py>) -> PyResult<Vec<(String, Bound<'py, PyBytes>)>> {
        let files = py.detach(|| self.chart.files()).map_err(user_error)?;
        Ok(files_to_py(py, files))
    }
}

/// A run as Python hands it to [`metric_vs`]: its `--set` pairs, its BSS name (or
/// `None`) and its headline figures as `Run.headline` gives them.
type FiguredRun = (Vec<(String, String)>, Option<String>, Vec<Option<f64>>);

/// The `--metric-vs KEY` chart of `runs` of `scenario`.
#[pyfunction]
fn metric_vs(scenario: &str, key: &str, runs: Vec<FiguredRun>) -> PyResult<MetricVs> {
    use txop_report::metric_vs::{self as vs, Headline, METRICS};
    let values: Vec<&str> = runs
        .iter()
        .filter_map(|(sets, _, _)| sets.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str()))
        .collect();
    vs::check_values(key, &values).map_err(user_error)?;
    let mut vs_runs = Vec::with_capacity(runs.len());
    for (sets, bss, figures) in &runs {
        let figures: Headline = figures.as_slice().try_into().map_err(|_| {
            user_error(format!(
                "metric_vs: a run has {} figures; expected {}",
                figures.len(),
                METRICS.len()
            ))
        })?;
        vs_runs.push(vs::VsRun {
            settings: sets,
            bss: bss.as_deref(),
            figures,
        });
    }
    Ok(MetricVs {
        chart: vs::chart(scenario, key, &vs_runs),
    })
}

/// A run held against a real flent file, as `txop compare --against` has it before
/// printing.
#[pyclass(frozen, module = "txop._txop")]
struct Against {
    outcome: txop_report::against::AgainstOutcome,
}

#[pymethods]
impl Against {
    /// The table `txop compare --against` prints.
    fn summary(&self) -> String {
        self.outcome.summary()
    }

    /// What `txop compare --against FILE --json` prints.
    fn json(&self) -> PyResult<String> {
        self.outcome.json().map_err(user_error)
    }

    /// Write the results directory `txop compare --against FILE -o DIR` writes.
    #[pyo3(signature = (dir, force=false))]
    fn write(&self, py: Python<'_>, dir: &str, force: bool) -> PyResult<()> {
        let files = py.detach(|| self.outcome.files()).map_err(user_error)?;
        write_dir(dir, force, &files)
    }
}

/// `txop compare [SPEC] --against FILE [--flent-on SIDE] --set … --seed …`, without
/// the GIL.
#[pyfunction]
#[pyo3(signature = (file, spec, sets, seed=None, flent_on=None))]
fn against(
    py: Python<'_>,
    file: &str,
    spec: Option<&str>,
    sets: Vec<String>,
    seed: Option<u64>,
    flent_on: Option<&str>,
) -> PyResult<Against> {
    use txop_report::against::{plan_against, FlentSide};
    let side = match flent_on {
        None => None,
        Some(s) => Some(FlentSide::from_name(s).ok_or_else(|| {
            user_error(format!(
                "flent_on: expected \"station\" or \"server\", not {s:?}"
            ))
        })?),
    };
    let plan = plan_against(Path::new(file), spec, &sets, seed, side).map_err(user_error)?;
    let outcome = py
        .detach(|| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| plan.simulate(&|_| {})))
                .unwrap_or(Err(Failure::Panicked))
        })
        .map_err(failure)?;
    Ok(Against { outcome })
}

/// Write `files` (`(name, bytes)`, as `Run.files()` gives them) as the results
/// directory `dir`, whole or not at all (as `txop run -o DIR [--force]` writes).
#[pyfunction]
#[pyo3(signature = (dir, files, force=false))]
fn write_files(dir: &str, files: Vec<(String, Bound<'_, PyBytes>)>, force: bool) -> PyResult<()> {
    let files: Vec<(String, Vec<u8>)> = files
        .into_iter()
        .map(|(name, bytes)| (name, bytes.as_bytes().to_vec()))
        .collect();
    write_dir(dir, force, &files)
}

/// Whether `dir` is a results directory txop wrote and may replace (`True`) or
/// nothing yet (`False`); `TxopError` naming it if it may not become one (a user's
/// directory, or one a user has added a file to): what `txop run -o DIR --force`
/// checks before it writes.
#[pyfunction]
fn results_dir_exists(dir: &str) -> PyResult<bool> {
    let path = Path::new(dir);
    match results_dir::check_output(path, true, &Protected::of_process()) {
        Ok(results_dir::Existing::Absent) => Ok(false),
        Ok(results_dir::Existing::Ours) => Ok(true),
        Err(why) => Err(user_error(format!("{}: {why}", path.display()))),
    }
}

/// The built-in scenarios: `(name, description)`.
#[pyfunction]
fn scenarios() -> Vec<(String, String)> {
    txop_scenario::builtin::SCENARIOS
        .iter()
        .map(|(name, text)| (name.to_string(), txop_scenario::builtin::description(text)))
        .collect()
}

/// flent's tests: `(name, what it is)`.
#[pyfunction]
fn flent_tests() -> Vec<(String, String)> {
    txop_sim::traffic::flent::TESTS
        .iter()
        .map(|(n, w)| (n.to_string(), w.to_string()))
        .collect()
}

/// A stack preset: name, one-line summary, and its knobs as `(knob, value)`.
type StackRow = (String, String, Vec<(String, String)>);

/// The stack presets, as `txop stacks` lists them.
#[pyfunction]
fn stacks() -> Vec<StackRow> {
    use txop_core::stack;
    stack::PRESETS
        .iter()
        .filter_map(|(name, summary)| {
            let cfg = stack::preset(name)?;
            let knobs = stack::describe(&cfg)
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            Some((name.to_string(), summary.to_string(), knobs))
        })
        .collect()
}

#[pymodule]
fn _txop(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("TxopError", m.py().get_type::<TxopError>())?;
    m.add("TxopInternalError", m.py().get_type::<TxopInternalError>())?;
    m.add_function(wrap_pyfunction!(resolve, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(compare, m)?)?;
    m.add_function(wrap_pyfunction!(against, m)?)?;
    m.add_function(wrap_pyfunction!(metric_vs, m)?)?;
    m.add("AGAINST_DEFAULT_BASE", txop_report::against::DEFAULT_BASE)?;
    m.add_function(wrap_pyfunction!(write_files, m)?)?;
    m.add_function(wrap_pyfunction!(results_dir_exists, m)?)?;
    m.add_function(wrap_pyfunction!(scenarios, m)?)?;
    m.add_function(wrap_pyfunction!(flent_tests, m)?)?;
    m.add_function(wrap_pyfunction!(stacks, m)?)?;
    m.add_class::<Run>()?;
    m.add_class::<Compare>()?;
    m.add_class::<Against>()?;
    m.add_class::<MetricVs>()?;
    Ok(())
}
