//! What `txop run` and `txop compare` do, from a scenario and its overrides to the
//! summary, the `--json` text and the results directory's files: one implementation
//! that the command line and the Python package (`crates/txop-py`) both call, so that
//! the two give the same bytes.

use crate::compare::{self, Variant};
use crate::metric_vs;
use crate::neighbours::{self, PreparedBsss};
use crate::plot::{self, render_plots, PlotRun};
use crate::report::{self, JsonReport};
use crate::runner::{self, internal_error_line, parse_sets, Prepared, SimError};
use crate::scenario::Scenario;
use serde::Serialize;
use std::io::Write;
use txop_results::Results;

/// Why a run or comparison failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The user's input or environment: one line (`txop` prints it after `txop:
    /// error: ` and exits 2).
    User(String),
    /// A bug reported as a value (e.g. the simulator's watchdog): the whole line to
    /// print (`txop: internal error: …`, exit 1).
    Internal(String),
    /// A bug that panicked: a panic hook has printed its line (exit 1).
    Panicked,
}

impl From<String> for Failure {
    fn from(e: String) -> Self {
        Failure::User(e)
    }
}

impl From<SimError> for Failure {
    fn from(e: SimError) -> Self {
        match e {
            SimError::User(e) => Failure::User(e),
            SimError::Internal(e) => {
                Failure::Internal(internal_error_line(Some(&e.context), &e.message))
            }
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::User(e) | Failure::Internal(e) => f.write_str(e),
            Failure::Panicked => f.write_str("txop: internal error: a run panicked"),
        }
    }
}

/// A scenario ready to run: one cell, or several BSSs (`[[bss]]`).
pub enum Plan {
    /// One cell.
    Single(Box<Prepared>),
    /// Several BSSs, simulated together.
    Bsss(Box<PreparedBsss>),
}

/// Load `spec` (a built-in name or a file), apply `sets` (`--set` pairs) and resolve
/// it; `seed` overrides the scenario's. Errors are the one line `txop run` prints
/// after `txop: error: `.
pub fn plan(spec: &str, sets: &[(String, String)], seed: Option<u64>) -> Result<Plan, String> {
    if let Some(p) = neighbours::prepare(spec, sets, seed)? {
        return Ok(Plan::Bsss(Box::new(p)));
    }
    Ok(Plan::Single(Box::new(runner::prepare(spec, sets, seed)?)))
}

impl Plan {
    /// The run in messages: `<scenario> seed <n>`.
    pub fn label(&self) -> String {
        match self {
            Plan::Single(p) => p.label(),
            Plan::Bsss(p) => p.label(),
        }
    }

    /// Name this run as a comparison's setting (`linux-6.16, stations.count=4`) in
    /// messages.
    pub fn set_setting(&mut self, setting: &str) {
        match self {
            Plan::Single(p) => p.setting = setting.to_string(),
            Plan::Bsss(p) => p.setting = setting.to_string(),
        }
    }

    /// The scenario's name.
    pub fn name(&self) -> &str {
        match self {
            Plan::Single(p) => &p.name,
            Plan::Bsss(p) => &p.name,
        }
    }

    /// The run's seed.
    pub fn seed(&self) -> u64 {
        match self {
            Plan::Single(p) => p.cfg.seed,
            Plan::Bsss(p) => p.seed,
        }
    }

    /// The simulated time the run covers, ns (the progress bar's total).
    pub fn duration_ns(&self) -> u64 {
        match self {
            Plan::Single(p) => p.cfg.duration.as_ns(),
            Plan::Bsss(p) => p.end().as_ns(),
        }
    }

    /// The scenario with its overrides, every key with its default filled in: what
    /// `txop show` prints (TOML).
    pub fn scenario(&self) -> &Scenario {
        match self {
            Plan::Single(p) => &p.scenario,
            Plan::Bsss(p) => &p.scenario,
        }
    }

    /// A rough cost of the run, to start the longest runs of a sweep first: nodes
    /// (stations and APs) × simulated seconds, summed over the BSSs.
    pub fn cost(&self) -> f64 {
        let cost = |cfg: &txop_sim::SimConfig| {
            (cfg.cell.stations.len() + 1) as f64 * cfg.duration.as_ns() as f64 / 1e9
        };
        match self {
            Plan::Single(p) => cost(&p.cfg),
            Plan::Bsss(p) => p.bsss.iter().map(|b| cost(&b.cfg)).sum(),
        }
    }

    /// Run it to its end, calling `advance` with the simulated nanoseconds of each
    /// step. While it runs, the thread's context (for an internal error's line) is
    /// this run's scenario and seed.
    pub fn simulate(self, advance: &(dyn Fn(u64) + Sync)) -> Result<Outcome, Failure> {
        self.simulate_captured(advance, None)
            .map(|(outcome, _)| outcome)
    }

    /// The captures `pcap` asks of this run (`None` without `--pcap`), or why they do
    /// not fit: one for a single cell, one per BSS (each of its own band and stations)
    /// for several.
    pub fn capture(
        &self,
        pcap: &crate::pcap::PcapOptions,
    ) -> Result<Option<Vec<txop_capture::CaptureConfig>>, String> {
        match self {
            Plan::Single(p) => Ok(pcap
                .config(p.cfg.cell.band, p.cfg.cell.stations.len())?
                .map(|c| vec![c])),
            Plan::Bsss(p) => p
                .bsss
                .iter()
                .map(|b| pcap.config(b.cfg.cell.band, b.cfg.cell.stations.len()))
                .collect::<Result<Option<Vec<_>>, String>>(),
        }
    }

    /// [`Plan::simulate`], capturing the air within `capture`'s bounds if given
    /// ([`Plan::capture`]): the outcome, and each capture's file name in the results
    /// directory with its pcapng file and what it holds (`air.pcapng` for one cell,
    /// `air-<bss>.pcapng` per BSS, each BSS's own PPDUs).
    pub fn simulate_captured(
        self,
        advance: &(dyn Fn(u64) + Sync),
        capture: Option<Vec<txop_capture::CaptureConfig>>,
    ) -> Result<(Outcome, Vec<(String, runner::CapturedAir)>), Failure> {
        let _context = runner::enter_context(self.label());
        match self {
            Plan::Single(p) => {
                let capture = capture.and_then(|c| c.into_iter().next());
                let (results, air) = runner::simulate_captured(&p, advance, capture)?;
                let air = air.map(|a| (crate::pcap::PCAP_FILE.to_string(), a));
                Ok((Outcome::Single { p, results }, air.into_iter().collect()))
            }
            Plan::Bsss(p) => {
                let (results, air) = neighbours::simulate_captured(&p, advance, capture)?;
                let air = p
                    .bsss
                    .iter()
                    .zip(air)
                    .map(|(b, a)| (crate::pcap::bss_file(&b.name), a))
                    .collect();
                Ok((Outcome::Bsss { p, results }, air))
            }
        }
    }
}

/// A finished run.
pub enum Outcome {
    /// One cell's results.
    Single { p: Box<Prepared>, results: Results },
    /// Each BSS's results, in the scenario's order.
    Bsss {
        p: Box<PreparedBsss>,
        results: Vec<Results>,
    },
}

impl Outcome {
    /// Each cell's headline figures ([`metric_vs::headline`]): the run's, or each
    /// BSS's in the scenario's order. A sweep keeps them for its `--metric-vs` chart.
    pub fn headline(&self) -> Vec<metric_vs::Headline> {
        match self {
            Outcome::Single { results, .. } => vec![metric_vs::headline(results)],
            Outcome::Bsss { results, .. } => results.iter().map(metric_vs::headline).collect(),
        }
    }

    /// The summary `txop run` prints (and writes as summary.txt).
    pub fn summary(&self) -> String {
        match self {
            Outcome::Single { p, results } => report::summary(&p.name, results),
            Outcome::Bsss { p, results } => neighbours::summary(p, results),
        }
    }

    /// What `txop run --json` prints.
    pub fn json(&self) -> Result<String, String> {
        match self {
            Outcome::Single { p, results } => to_json(&single_report(p, results, false)),
            Outcome::Bsss { p, results } => to_json(&neighbours::report(p, results, false)),
        }
    }

    /// The files of the results directory `txop run -o DIR` writes: summary.txt,
    /// results.json (with the resolved scenario), the plots and, for a flent test, its
    /// data file (one per BSS).
    pub fn files(&self) -> Result<Vec<(String, Vec<u8>)>, String> {
        let json = self.results_json()?;
        match self {
            Outcome::Single { p, results } => single_files(p, results, &self.summary(), json),
            Outcome::Bsss { p, results } => side_by_side_files(
                &p.name,
                self.summary(),
                json,
                &neighbours::columns(p, results),
            ),
        }
    }

    /// The bytes of results.json as [`Outcome::files`] writes them: the `--json`
    /// object with the resolved scenario (each BSS's, for several BSSs). The scenario
    /// fuzzer validates exactly these against docs/results.schema.json.
    pub fn results_json(&self) -> Result<Vec<u8>, String> {
        match self {
            Outcome::Single { p, results } => {
                serde_json::to_vec_pretty(&single_report(p, results, true))
            }
            Outcome::Bsss { p, results } => {
                serde_json::to_vec_pretty(&neighbours::report(p, results, true))
            }
        }
        .map_err(|e| format!("cannot encode results: {e}"))
    }
}

/// The `--json` object or (with `resolved`) results.json of one cell's run.
fn single_report<'a>(p: &'a Prepared, results: &'a Results, resolved: bool) -> JsonReport<'a> {
    JsonReport {
        txop_version: env!("CARGO_PKG_VERSION"),
        scenario: &p.name,
        resolved: resolved.then_some(&p.scenario),
        results,
    }
}

/// `v` as pretty JSON with a final newline, as `--json` prints it.
pub fn to_json<T: Serialize>(v: &T) -> Result<String, String> {
    serde_json::to_string_pretty(v)
        .map(|s| s + "\n")
        .map_err(|e| format!("cannot encode results: {e}"))
}

fn gzip(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    use flate2::{write::GzEncoder, Compression};
    let mut e = GzEncoder::new(Vec::new(), Compression::default());
    e.write_all(bytes)?;
    e.finish()
}

/// The results-directory files of one run: `summary` as summary.txt, `json_bytes` as
/// results.json and, for a flent test, its data file.
fn single_files(
    p: &Prepared,
    results: &Results,
    summary: &str,
    json_bytes: Vec<u8>,
) -> Result<Vec<(String, Vec<u8>)>, String> {
    let mut files = vec![
        ("summary.txt".to_string(), summary.as_bytes().to_vec()),
        ("results.json".to_string(), json_bytes),
    ];
    if let Some((file, bytes)) = flent_file_of(&p.scenario, &p.name, results, None)? {
        files.push((file, bytes));
    }
    let run = PlotRun {
        label: &p.name,
        results,
    };
    files.extend(render_plots(&p.name, &[run]).map_err(|e| format!("plots: {e}"))?);
    Ok(files)
}

/// A single run's flent data file (a flent test's; `None` for other traffic): its name
/// in the results directory and gzipped bytes, as `txop run -o` writes it.
pub fn flent_file(
    scenario: &Scenario,
    name: &str,
    results: &Results,
) -> Result<Option<(String, Vec<u8>)>, String> {
    flent_file_of(scenario, name, results, None)
}

/// For a flent test of `scenario` (a run named `name`; `column`, a comparison's
/// setting or a BSS, when it is one of several side by side), its data file's name and
/// gzipped bytes. Its TITLE names the column too, so that flent's legends tell the
/// files apart; TEST_PARAMETERS records the stack, the congestion control, the
/// column and, for a comparison, its settings.
fn flent_file_of(
    scenario: &Scenario,
    name: &str,
    results: &Results,
    column: Option<&Column<'_>>,
) -> Result<Option<(String, Vec<u8>)>, String> {
    let Some(test) = &scenario.traffic.test else {
        return Ok(None);
    };
    let mut parameters = std::collections::BTreeMap::new();
    parameters.insert("stack".to_string(), scenario.stack.clone());
    parameters.insert("cc".to_string(), scenario.traffic.cc.clone());
    let title = match column {
        Some(c) => {
            parameters.insert("column".to_string(), c.label.to_string());
            for (k, v) in c.settings {
                parameters.insert(k.clone(), v.clone());
            }
            format!("{name} — {}", c.label)
        }
        None => name.to_string(),
    };
    let data = txop_results::flentfile::flent_data(
        results,
        test,
        &title,
        scenario.traffic.length_s,
        &parameters,
    );
    let bytes = serde_json::to_vec(&data)
        .and_then(|b| gzip(&b).map_err(serde_json::Error::io))
        .map_err(|e| format!("cannot encode the flent file: {e}"))?;
    // The scenario's name is the user's: only file-name-safe characters go into a file name.
    Ok(Some((
        format!("{test}-{}.flent.gz", compare::slug(name)),
        bytes,
    )))
}

/// One column of a table of runs side by side (a comparison's setting, a BSS).
pub(crate) struct Column<'a> {
    pub(crate) label: &'a str,
    pub(crate) scenario: &'a Scenario,
    pub(crate) results: &'a Results,
    /// The `--stack` / `--vary` settings that make it (none for a BSS of one run).
    pub(crate) settings: &'a [(String, String)],
}

/// What a table of runs side by side (`compare`, several BSSs) writes: `table` as
/// summary.txt, `json_bytes` (the report with the resolved scenarios) as results.json,
/// the plots with a line per column, and each column's flent file, named with its label.
fn side_by_side_files(
    name: &str,
    table: String,
    json_bytes: Vec<u8>,
    columns: &[Column<'_>],
) -> Result<Vec<(String, Vec<u8>)>, String> {
    let mut files = vec![
        ("summary.txt".to_string(), table.into_bytes()),
        ("results.json".to_string(), json_bytes),
    ];
    let runs: Vec<PlotRun<'_>> = columns
        .iter()
        .map(|c| PlotRun {
            label: c.label,
            results: c.results,
        })
        .collect();
    files.extend(render_plots(name, &runs).map_err(|e| format!("plots: {e}"))?);
    for c in columns {
        if let Some((file, bytes)) = flent_file_of(c.scenario, name, c.results, Some(c))? {
            let file = file.replace(
                ".flent.gz",
                &format!("-{}.flent.gz", compare::slug(c.label)),
            );
            files.push((file, bytes));
        }
    }
    Ok(files)
}

/// results.json of a comparison: every run with its label and settings.
#[derive(Serialize)]
struct CompareReport<'a> {
    txop_version: &'a str,
    scenario: &'a str,
    runs: Vec<CompareRun<'a>>,
    /// The `--metric-vs` chart, when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    metric_vs: Option<metric_vs::VsChart>,
}

#[derive(Serialize)]
struct CompareRun<'a> {
    label: &'a str,
    /// The `--stack` / `--vary` settings that make this run.
    settings: std::collections::BTreeMap<&'a str, &'a str>,
    #[serde(flatten)]
    run: CompareRunBody<'a>,
}

/// A comparison run's results: one cell's, or with `[[bss]]` each BSS's under its name
/// (as `txop run` gives them).
#[derive(Serialize)]
#[serde(untagged)]
enum CompareRunBody<'a> {
    Cell {
        #[serde(skip_serializing_if = "Option::is_none")]
        resolved: Option<&'a Scenario>,
        #[serde(flatten)]
        results: &'a Results,
    },
    Bsss {
        seed: u64,
        bss: Vec<neighbours::BssReport<'a>>,
    },
}

/// A comparison ready to run: one planned run per variant (each one cell, or every
/// BSS of a scenario with `[[bss]]`).
pub struct ComparePlan {
    variants: Vec<Variant>,
    plans: Vec<Plan>,
    /// The varied key of the `--metric-vs` chart, if one was asked for.
    metric_vs: Option<String>,
}

/// `txop compare`'s runs: `spec` under every variant of `stacks` × `vary` (as the
/// options give them), each with `sets` (`KEY=VALUE` strings) under it; `seed`
/// overrides the scenario's. Every run is prepared (and so checked) here. With
/// `[[bss]]` a setting holds for every BSS ([`compare::settings_for_bsss`]).
pub fn plan_compare(
    spec: &str,
    stacks: &[String],
    vary: &[String],
    sets: &[String],
    seed: Option<u64>,
) -> Result<ComparePlan, String> {
    let variants = compare::variants(stacks, vary)?;
    let common = parse_sets(sets)?;
    // The scenario with the common settings, to see which keys its `[[bss]]` entries
    // give themselves (an error is left for `plan` to report in its words).
    let parsed = crate::scenario::parse(&runner::load(spec)?.1, &common).ok();
    let mut plans = Vec::with_capacity(variants.len());
    for v in &variants {
        let mut sets = common.clone();
        sets.extend(match &parsed {
            Some(parsed) => compare::settings_for_bsss(parsed, &v.sets),
            None => v.sets.clone(),
        });
        let mut p =
            plan(spec, &sets, seed).map_err(|e| format!("{e} (in setting `{}`)", v.label))?;
        p.set_setting(&v.label);
        plans.push(p);
    }
    let bsss = |p: &Plan| matches!(p, Plan::Bsss(_));
    if plans.iter().any(|p| bsss(p) != bsss(&plans[0])) {
        return Err(format!(
            "{spec}: compare: the settings give runs with and without [[bss]]; compare runs of one kind"
        ));
    }
    Ok(ComparePlan {
        variants,
        plans,
        metric_vs: None,
    })
}

impl ComparePlan {
    /// Adds the `--metric-vs KEY` chart: the headline figures against `key`, one of the
    /// keys the comparison varies ([`metric_vs::check_key`]).
    pub fn with_metric_vs(mut self, key: &str) -> Result<ComparePlan, String> {
        metric_vs::check_key(key, &self.variants)?;
        self.metric_vs = Some(key.to_string());
        Ok(self)
    }

    /// The comparison in messages: `<scenario> (compare) seed <n>`.
    pub fn label(&self) -> String {
        format!(
            "{} (compare) seed {}",
            self.plans[0].name(),
            self.plans[0].seed()
        )
    }

    /// The simulated time of all its runs, ns.
    pub fn duration_ns(&self) -> u64 {
        self.plans.iter().map(Plan::duration_ns).sum()
    }

    /// Run every variant, on up to `workers` threads (each run its own deterministic
    /// simulation), calling `advance` with simulated nanoseconds as they pass. The
    /// first failure stops new runs and is returned.
    pub fn simulate(
        self,
        workers: usize,
        advance: &(dyn Fn(u64) + Sync),
    ) -> Result<CompareOutcome, Failure> {
        let workers = workers.max(1).min(self.plans.len());
        let next = std::sync::atomic::AtomicUsize::new(0);
        // Set by a run that fails: the others take no new runs.
        let failed = std::sync::atomic::AtomicBool::new(false);
        let plans: Vec<std::sync::Mutex<Option<Plan>>> = self
            .plans
            .into_iter()
            .map(|p| std::sync::Mutex::new(Some(p)))
            .collect();
        let slots: Vec<std::sync::Mutex<Option<Result<Outcome, Failure>>>> =
            plans.iter().map(|_| std::sync::Mutex::new(None)).collect();
        std::thread::scope(|scope| {
            for _ in 0..workers {
                scope.spawn(|| loop {
                    use std::sync::atomic::Ordering::Relaxed;
                    let i = next.fetch_add(1, Relaxed);
                    if i >= plans.len() || failed.load(Relaxed) {
                        break;
                    }
                    let Some(p) = plans[i].lock().ok().and_then(|mut p| p.take()) else {
                        break;
                    };
                    // A panic in one run (its line printed by the hook) ends the
                    // comparison here rather than in the scope, which would panic again.
                    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        p.simulate(advance)
                    }))
                    .unwrap_or(Err(Failure::Panicked));
                    if r.is_err() {
                        failed.store(true, Relaxed);
                    }
                    if let Ok(mut slot) = slots[i].lock() {
                        *slot = Some(r);
                    }
                });
            }
        });
        let mut outcomes = Vec::with_capacity(slots.len());
        let mut not_run = false;
        for slot in slots {
            match slot.into_inner().ok().flatten() {
                Some(r) => outcomes.push(r?),
                None => not_run = true,
            }
        }
        if not_run {
            return Err(Failure::Internal(internal_error_line(
                None,
                "a comparison's run did not finish",
            )));
        }
        Ok(CompareOutcome {
            variants: self.variants,
            outcomes,
            metric_vs: self.metric_vs,
        })
    }
}

/// A finished comparison.
pub struct CompareOutcome {
    variants: Vec<Variant>,
    /// Each variant's run, in the variants' order.
    outcomes: Vec<Outcome>,
    /// The key of the `--metric-vs` chart, if asked for.
    metric_vs: Option<String>,
}

impl CompareOutcome {
    /// The scenario's name.
    fn name(&self) -> &str {
        match &self.outcomes[0] {
            Outcome::Single { p, .. } => &p.name,
            Outcome::Bsss { p, .. } => &p.name,
        }
    }

    /// The `--metric-vs` chart, if asked for: every run (with `[[bss]]`, every BSS of
    /// every run) placed by its settings.
    pub fn metric_vs(&self) -> Option<metric_vs::VsChart> {
        let key = self.metric_vs.as_deref()?;
        let mut runs: Vec<metric_vs::VsRun<'_>> = Vec::new();
        for (v, o) in self.variants.iter().zip(&self.outcomes) {
            match o {
                Outcome::Single { results, .. } => runs.push(metric_vs::VsRun {
                    settings: &v.sets,
                    bss: None,
                    figures: metric_vs::headline(results),
                }),
                Outcome::Bsss { p, results } => {
                    for (b, results) in p.bsss.iter().zip(results) {
                        runs.push(metric_vs::VsRun {
                            settings: &v.sets,
                            bss: Some(&b.name),
                            figures: metric_vs::headline(results),
                        });
                    }
                }
            }
        }
        Some(metric_vs::chart(self.name(), key, &runs))
    }

    /// The table `txop compare` prints (and writes as summary.txt): a column per
    /// setting; with `[[bss]]`, such a table for each BSS; then the `--metric-vs`
    /// chart's table, if asked for.
    pub fn summary(&self) -> String {
        let mut text = self.side_by_side();
        if let Some(chart) = self.metric_vs() {
            text.push('\n');
            text.push_str(&chart.table());
        }
        text
    }

    /// The side-by-side table of [`CompareOutcome::summary`].
    fn side_by_side(&self) -> String {
        let labels = self.variants.iter().map(|v| v.label.as_str());
        match &self.outcomes[0] {
            Outcome::Single { .. } => {
                let labelled: Vec<(&str, &Results)> = labels
                    .zip(&self.outcomes)
                    .filter_map(|(l, o)| match o {
                        Outcome::Single { results, .. } => Some((l, results)),
                        Outcome::Bsss { .. } => None,
                    })
                    .collect();
                compare::table(self.name(), &labelled)
            }
            Outcome::Bsss { p, .. } => {
                let mut text = String::new();
                for (b, bss) in p.bsss.iter().enumerate() {
                    let labelled: Vec<(&str, &Results)> = labels
                        .clone()
                        .zip(&self.outcomes)
                        .filter_map(|(l, o)| match o {
                            Outcome::Bsss { results, .. } => results.get(b).map(|r| (l, r)),
                            Outcome::Single { .. } => None,
                        })
                        .collect();
                    if b > 0 {
                        text.push('\n');
                    }
                    text.push_str(&compare::table(
                        &format!("{} / bss {} (channel {})", p.name, bss.name, bss.channel),
                        &labelled,
                    ));
                }
                text
            }
        }
    }

    fn report(&self, resolved: bool) -> CompareReport<'_> {
        CompareReport {
            txop_version: env!("CARGO_PKG_VERSION"),
            scenario: self.name(),
            runs: self
                .variants
                .iter()
                .zip(&self.outcomes)
                .map(|(v, o)| CompareRun {
                    label: &v.label,
                    settings: v
                        .sets
                        .iter()
                        .map(|(k, x)| (k.as_str(), x.as_str()))
                        .collect(),
                    run: match o {
                        Outcome::Single { p, results } => CompareRunBody::Cell {
                            resolved: resolved.then_some(&p.scenario),
                            results,
                        },
                        Outcome::Bsss { p, results } => CompareRunBody::Bsss {
                            seed: p.seed,
                            bss: neighbours::bss_reports(p, results, resolved),
                        },
                    },
                })
                .collect(),
            metric_vs: self.metric_vs(),
        }
    }

    /// What `txop compare --json` prints.
    pub fn json(&self) -> Result<String, String> {
        to_json(&self.report(false))
    }

    /// The files of the results directory `txop compare -o DIR` writes: with
    /// `[[bss]]`, a plot line and a flent file per setting and BSS
    /// (`<setting> / <bss>`).
    pub fn files(&self) -> Result<Vec<(String, Vec<u8>)>, String> {
        let mut labels: Vec<String> = Vec::new();
        for (v, o) in self.variants.iter().zip(&self.outcomes) {
            match o {
                Outcome::Single { .. } => labels.push(v.label.clone()),
                Outcome::Bsss { p, .. } => {
                    labels.extend(p.bsss.iter().map(|b| format!("{} / {}", v.label, b.name)))
                }
            }
        }
        let mut columns: Vec<Column<'_>> = Vec::with_capacity(labels.len());
        for (v, o) in self.variants.iter().zip(&self.outcomes) {
            match o {
                Outcome::Single { p, results } => columns.push(Column {
                    label: &labels[columns.len()],
                    scenario: &p.scenario,
                    results,
                    settings: &v.sets,
                }),
                Outcome::Bsss { p, results } => {
                    for (b, results) in p.bsss.iter().zip(results) {
                        columns.push(Column {
                            label: &labels[columns.len()],
                            scenario: &b.scenario,
                            results,
                            settings: &v.sets,
                        });
                    }
                }
            }
        }
        let json_bytes = serde_json::to_vec_pretty(&self.report(true))
            .map_err(|e| format!("cannot encode results: {e}"))?;
        let mut files = side_by_side_files(self.name(), self.summary(), json_bytes, &columns)?;
        if let Some(chart) = self.metric_vs() {
            files.extend(plot::render_metric_vs(&chart).map_err(|e| format!("plots: {e}"))?);
        }
        Ok(files)
    }
}
