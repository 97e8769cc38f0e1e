//! `txop`: run WiFi latency-under-load scenarios.

use clap::{Parser, Subcommand};
use serde::Serialize;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use txop::plot::{render_plots, PlotRun};
use txop::runner::{load, parse_sets, prepare, simulate, Prepared};
use txop::scenario::{self, Scenario};
use txop::{builtin, compare, report};
use txop_sim::Results;

mod emu;

/// A lab for WiFi latency under load: a faithful 802.11 cell with the Linux transmit
/// path, simulated deterministically.
#[derive(Parser)]
#[command(name = "txop", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario (a built-in name or a TOML file) and print its summary.
    #[command(after_help = "Examples:\n  \
        txop run default\n  \
        txop run anomaly --set stations.list[1].mcs=3\n  \
        txop run bianchi-11a --set stations.count=50 --json\n  \
        txop run tcp-ndown-6mbit --set stack=linux-4.8-bloated -o results/bloated\n  \
        txop run my-cell.toml --seed 7")]
    Run {
        /// Built-in scenario name (see `txop list`) or path to a scenario file.
        scenario: String,
        /// Override any scenario key, e.g. `--set stations.count=20` (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Random seed (same scenario + seed = identical results).
        #[arg(long)]
        seed: Option<u64>,
        #[command(flatten)]
        out: Output,
    },
    /// Run one scenario under several settings and compare them side by side.
    #[command(after_help = "Examples:\n  \
        txop compare tcp-ndown-6mbit --stack linux-4.8-bloated --stack linux-6.16\n  \
        txop compare anomaly --stack linux-4.9 --stack linux-5.5 -o results/atf\n  \
        txop compare default --vary stations.count=2,8,32\n  \
        txop compare tcp-ndown-6mbit --stack linux-4.9 --stack linux-6.16 --vary traffic.streams=1,12")]
    Compare {
        /// Built-in scenario name (see `txop list`) or path to a scenario file.
        scenario: String,
        /// A stack preset to compare (repeatable; `txop stacks` lists them).
        #[arg(long = "stack", value_name = "NAME")]
        stacks: Vec<String>,
        /// Vary any scenario key over values, e.g. `--vary stations.count=1,4,16`
        /// (repeatable; several options multiply).
        #[arg(long = "vary", value_name = "KEY=V1,V2,…")]
        vary: Vec<String>,
        /// Override a scenario key in every run (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Random seed for every run.
        #[arg(long)]
        seed: Option<u64>,
        #[command(flatten)]
        out: Output,
    },
    /// Reproduce the seed experiments (E1–E5 of EXPERIMENTS.md) and report the seed's
    /// numbers next to txop's.
    #[command(after_help = "Examples:\n  \
        txop reproduce all -o reproduction\n  \
        txop reproduce E2 E4")]
    Reproduce {
        /// Experiments to run: E2, E3, E4 … or `all`.
        #[arg(default_value = "all")]
        experiments: Vec<String>,
        /// Write report.md and its plots into this directory. Refused if it exists.
        #[arg(short = 'o', long = "output", value_name = "DIR")]
        output: Option<std::path::PathBuf>,
        /// Replace an existing directory.
        #[arg(long)]
        force: bool,
        /// Print nothing on stdout.
        #[arg(short, long)]
        quiet: bool,
    },
    /// List the built-in scenarios, flent tests and stack presets.
    List,
    /// Print a scenario fully resolved: every key with its default filled in.
    Show {
        /// Built-in scenario name or path to a scenario file.
        scenario: String,
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
    /// List the transmit-stack presets (kernel eras) and what each contains.
    Stacks {
        /// Show only this preset.
        name: Option<String>,
    },
    /// Run real programs (ping, iperf3, flent…) through the modelled cell in real
    /// time, in network namespaces (Linux, root).
    Emu(emu::EmuArgs),
}

/// The `--json` object: the run's results plus what produced them.
#[derive(Serialize)]
struct JsonReport<'a> {
    txop_version: &'a str,
    scenario: &'a str,
    /// The scenario as resolved (defaults filled in), in results.json.
    #[serde(skip_serializing_if = "Option::is_none")]
    resolved: Option<&'a Scenario>,
    #[serde(flatten)]
    results: &'a Results,
}

/// An error for the user: one line, exit code 2.
struct UserError(String);

impl From<String> for UserError {
    fn from(e: String) -> Self {
        UserError(e)
    }
}

/// Refuse an existing results directory before any work is done.
fn refuse_existing(dir: &Path, force: bool) -> Result<(), UserError> {
    if dir.exists() && !force {
        return Err(UserError(format!(
            "{}: output directory exists (use --force to replace it)",
            dir.display()
        )));
    }
    Ok(())
}

/// Write the results directory: everything into a sibling temporary directory first,
/// then one rename, so that a failure leaves nothing that looks complete.
fn write_results(dir: &Path, force: bool, files: &[(String, Vec<u8>)]) -> Result<(), UserError> {
    refuse_existing(dir, force)?;
    let shown = dir.display();
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "results".into());
    let parent = dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let tmp = parent.join(format!(".{name}.partial-{}", std::process::id()));
    let fail = |what: &str, e: std::io::Error| {
        let _ = std::fs::remove_dir_all(&tmp);
        UserError(format!("{shown}: cannot {what}: {e}"))
    };
    std::fs::create_dir_all(&tmp).map_err(|e| fail("create the directory", e))?;
    for (file, bytes) in files {
        std::fs::write(tmp.join(file), bytes).map_err(|e| fail(&format!("write {file}"), e))?;
    }
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| fail("replace the old directory", e))?;
    }
    std::fs::rename(&tmp, dir).map_err(|e| fail("move the results into place", e))
}

fn gzip(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    use flate2::{write::GzEncoder, Compression};
    let mut e = GzEncoder::new(Vec::new(), Compression::default());
    e.write_all(bytes)?;
    e.finish()
}

/// Progress of one or more simulations, shown on stderr as a bar with an ETA when
/// stderr is a terminal and the work has taken more than a second; never on stdout.
/// With no known total (`None`), a spinner with the simulated time done.
struct Progress {
    bar: Option<indicatif::ProgressBar>,
    started: std::time::Instant,
    /// Simulated nanoseconds done over all runs (runs may go in parallel).
    done_ns: std::sync::atomic::AtomicU64,
}

impl Progress {
    fn new(total_ns: Option<u64>, quiet: bool) -> Progress {
        use std::io::IsTerminal;
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let bar = indicatif::ProgressBar::with_draw_target(
                total_ns,
                indicatif::ProgressDrawTarget::hidden(),
            );
            let template = if total_ns.is_some() {
                "{bar:40} {percent:>3}% simulated, {elapsed} elapsed, ETA {eta}"
            } else {
                "{spinner} {msg} simulated, {elapsed} elapsed"
            };
            if let Ok(style) = indicatif::ProgressStyle::with_template(template) {
                bar.set_style(style);
            }
            bar
        });
        Progress {
            bar,
            started: std::time::Instant::now(),
            done_ns: std::sync::atomic::AtomicU64::new(0),
        }
    }

    fn advance(&self, ns: u64) {
        let done = self
            .done_ns
            .fetch_add(ns, std::sync::atomic::Ordering::Relaxed)
            + ns;
        if let Some(bar) = &self.bar {
            if bar.is_hidden() && self.started.elapsed().as_secs_f64() > 1.0 {
                bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            }
            bar.set_position(done);
            if bar.length().is_none() {
                bar.set_message(format!("{:.0} s", done as f64 / 1e9));
            }
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// The results-directory files of one run: `summary` as summary.txt, results.json
/// (with the resolved scenario) and, for a flent test, its data file.
fn run_files(
    p: &Prepared,
    results: &Results,
    summary: &str,
) -> Result<Vec<(String, Vec<u8>)>, UserError> {
    let report = JsonReport {
        txop_version: env!("CARGO_PKG_VERSION"),
        scenario: &p.name,
        resolved: Some(&p.scenario),
        results,
    };
    let json_bytes = serde_json::to_vec_pretty(&report)
        .map_err(|e| UserError(format!("cannot encode results: {e}")))?;
    let mut files = vec![
        ("summary.txt".to_string(), summary.as_bytes().to_vec()),
        ("results.json".to_string(), json_bytes),
    ];
    if let Some((file, bytes)) = flent_file(p, results)? {
        files.push((file, bytes));
    }
    let run = PlotRun {
        label: &p.name,
        results,
    };
    files.extend(render_plots(&p.name, &[run]).map_err(|e| UserError(format!("plots: {e}")))?);
    Ok(files)
}

/// For a flent test, its data file's name and gzipped bytes.
fn flent_file(p: &Prepared, results: &Results) -> Result<Option<(String, Vec<u8>)>, UserError> {
    let Some(test) = &p.scenario.traffic.test else {
        return Ok(None);
    };
    let data = txop_sim::flentfile::flent_data(results, test, &p.name, p.scenario.traffic.length_s);
    let bytes = serde_json::to_vec(&data)
        .and_then(|b| gzip(&b).map_err(serde_json::Error::io))
        .map_err(|e| UserError(format!("cannot encode the flent file: {e}")))?;
    Ok(Some((format!("{test}-{}.flent.gz", p.name), bytes)))
}

fn print_stdout(text: &str) -> Result<(), UserError> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|_| stdout.flush())
        .map_err(|e| UserError(format!("stdout: {e}")))
}

fn to_json<T: Serialize>(v: &T) -> Result<String, UserError> {
    serde_json::to_string_pretty(v)
        .map(|s| s + "\n")
        .map_err(|e| UserError(format!("cannot encode results: {e}")))
}

/// What `txop run` and `txop compare` print and write.
#[derive(clap::Args)]
struct Output {
    /// Print the results as JSON on stdout instead of the table.
    #[arg(long)]
    json: bool,
    /// Write a results directory: summary.txt, results.json, plots and, for a flent
    /// test, flent data files (docs/results.md). Refused if it exists.
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    dir: Option<std::path::PathBuf>,
    /// Replace an existing results directory.
    #[arg(long)]
    force: bool,
    /// Print nothing on stdout (errors still go to stderr); with -o the results are
    /// still written.
    #[arg(short, long)]
    quiet: bool,
}

fn run(spec: &str, sets: &[String], seed: Option<u64>, out: Output) -> Result<(), UserError> {
    let p = prepare(spec, &parse_sets(sets).map_err(UserError)?, seed).map_err(UserError)?;
    if let Some(dir) = out.dir.as_deref() {
        refuse_existing(dir, out.force)?;
    }
    let progress = Progress::new(Some(p.cfg.duration.as_ns()), out.quiet);
    let results = simulate(&p, &|ns| progress.advance(ns)).map_err(UserError)?;
    progress.finish();
    let summary = report::summary(&p.name, &results);
    if let Some(dir) = out.dir.as_deref() {
        write_results(dir, out.force, &run_files(&p, &results, &summary)?)?;
    }
    if out.quiet {
        return Ok(());
    }
    if out.json {
        print_stdout(&to_json(&JsonReport {
            txop_version: env!("CARGO_PKG_VERSION"),
            scenario: &p.name,
            resolved: None,
            results: &results,
        })?)
    } else {
        print_stdout(&summary)
    }
}

/// results.json of a comparison: every run with its label and settings.
#[derive(Serialize)]
struct CompareReport<'a> {
    txop_version: &'a str,
    scenario: &'a str,
    runs: Vec<CompareRun<'a>>,
}

#[derive(Serialize)]
struct CompareRun<'a> {
    label: &'a str,
    /// The `--stack` / `--vary` settings that make this run.
    settings: std::collections::BTreeMap<&'a str, &'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    resolved: Option<&'a Scenario>,
    #[serde(flatten)]
    results: &'a Results,
}

struct CompareArgs<'a> {
    spec: &'a str,
    stacks: &'a [String],
    vary: &'a [String],
    sets: &'a [String],
    seed: Option<u64>,
}

fn compare(a: CompareArgs, out: Output) -> Result<(), UserError> {
    let variants = compare::variants(a.stacks, a.vary).map_err(UserError)?;
    let common = parse_sets(a.sets).map_err(UserError)?;
    let mut prepared = Vec::with_capacity(variants.len());
    for v in &variants {
        let mut sets = common.clone();
        sets.extend(v.sets.iter().cloned());
        let p = prepare(a.spec, &sets, a.seed)
            .map_err(|e| UserError(format!("{e} (in setting `{}`)", v.label)))?;
        prepared.push(p);
    }
    if let Some(dir) = out.dir.as_deref() {
        refuse_existing(dir, out.force)?;
    }
    let total: u64 = prepared.iter().map(|p| p.cfg.duration.as_ns()).sum();
    let progress = Progress::new(Some(total), out.quiet);
    // The runs are independent: run them on the machine's cores, each in its own
    // deterministic simulation.
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(prepared.len());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let slots: Vec<std::sync::Mutex<Option<Result<Results, UserError>>>> = prepared
        .iter()
        .map(|_| std::sync::Mutex::new(None))
        .collect();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(p) = prepared.get(i) else { break };
                let r = simulate(p, &|ns| progress.advance(ns)).map_err(UserError);
                if let Ok(mut slot) = slots[i].lock() {
                    *slot = Some(r);
                }
            });
        }
    });
    progress.finish();
    let mut results = Vec::with_capacity(prepared.len());
    for slot in slots {
        let r = slot
            .into_inner()
            .ok()
            .flatten()
            .unwrap_or_else(|| Err(UserError("a run did not finish".into())))?;
        results.push(r);
    }
    let name = &prepared[0].name;
    let labelled: Vec<(&str, &Results)> = variants
        .iter()
        .map(|v| v.label.as_str())
        .zip(results.iter())
        .collect();
    let table = compare::table(name, &labelled);
    let report = |resolved: bool| CompareReport {
        txop_version: env!("CARGO_PKG_VERSION"),
        scenario: name,
        runs: variants
            .iter()
            .zip(&prepared)
            .zip(&results)
            .map(|((v, p), r)| CompareRun {
                label: &v.label,
                settings: v
                    .sets
                    .iter()
                    .map(|(k, x)| (k.as_str(), x.as_str()))
                    .collect(),
                resolved: resolved.then_some(&p.scenario),
                results: r,
            })
            .collect(),
    };
    if let Some(dir) = out.dir.as_deref() {
        let json_bytes = serde_json::to_vec_pretty(&report(true))
            .map_err(|e| UserError(format!("cannot encode results: {e}")))?;
        let mut files = vec![
            ("summary.txt".to_string(), table.clone().into_bytes()),
            ("results.json".to_string(), json_bytes),
        ];
        let runs: Vec<PlotRun> = labelled
            .iter()
            .map(|&(label, results)| PlotRun { label, results })
            .collect();
        files.extend(render_plots(name, &runs).map_err(|e| UserError(format!("plots: {e}")))?);
        for ((v, p), r) in variants.iter().zip(&prepared).zip(&results) {
            if let Some((file, bytes)) = flent_file(p, r)? {
                let file = file.replace(
                    ".flent.gz",
                    &format!("-{}.flent.gz", compare::slug(&v.label)),
                );
                files.push((file, bytes));
            }
        }
        write_results(dir, out.force, &files)?;
    }
    if out.quiet {
        return Ok(());
    }
    if out.json {
        print_stdout(&to_json(&report(false))?)
    } else {
        print_stdout(&table)
    }
}

fn show(spec: &str, sets: &[String]) -> Result<(), UserError> {
    let (source, text) = load(spec).map_err(UserError)?;
    let sets = parse_sets(sets).map_err(UserError)?;
    let scenario =
        scenario::parse(&text, &sets).map_err(|e| UserError(format!("{source}: {e}")))?;
    // Resolving checks every value; what is printed is the scenario itself.
    scenario
        .resolve()
        .map_err(|e| UserError(format!("{source}: {e}")))?;
    let toml = toml::to_string_pretty(&scenario)
        .map_err(|e| UserError(format!("cannot encode the scenario: {e}")))?;
    print!("{toml}");
    Ok(())
}

fn stacks(only: Option<&str>) -> Result<(), UserError> {
    use txop_core::stack;
    if let Some(n) = only {
        if stack::preset(n).is_none() {
            return Err(UserError(format!(
                "{n}: no such stack; `txop stacks` lists them"
            )));
        }
    }
    let mut out = String::new();
    for (name, summary) in stack::PRESETS {
        if only.is_some_and(|n| n != *name) {
            continue;
        }
        let Some(cfg) = stack::preset(name) else {
            continue;
        };
        out.push_str(&format!("{name}\n  {summary}\n"));
        for (k, v) in stack::describe(&cfg) {
            out.push_str(&format!("    {k:<14} {v}\n"));
        }
    }
    print!("{out}");
    Ok(())
}

fn reproduce(
    ids: &[String],
    dir: Option<&Path>,
    force: bool,
    quiet: bool,
) -> Result<(), UserError> {
    use txop::reproduce;
    let ids: Vec<String> = if ids.iter().any(|i| i.eq_ignore_ascii_case("all")) {
        reproduce::EXPERIMENTS
            .iter()
            .map(|(i, _)| i.to_string())
            .collect()
    } else {
        ids.to_vec()
    };
    if let Some(dir) = dir {
        refuse_existing(dir, force)?;
    }
    // The total simulated time is not known before the runs: a spinner counts it.
    let progress = Progress::new(None, quiet);
    let mut reports = Vec::new();
    for id in &ids {
        reports.push(reproduce::run(id, &|ns| progress.advance(ns)).map_err(UserError)?);
    }
    progress.finish();
    let md = reproduce::markdown(&reports);
    if let Some(dir) = dir {
        write_results(dir, force, &reproduce::files(&md, &reports)?)?;
    }
    if quiet {
        return Ok(());
    }
    print_stdout(&md)
}

fn list() -> Result<(), UserError> {
    let mut out = String::from("Scenarios (txop run NAME):\n");
    for (name, text) in builtin::SCENARIOS {
        out.push_str(&format!("  {name:<16} {}\n", builtin::description(text)));
    }
    out.push_str("\nflent tests ([traffic] test = NAME):\n");
    for (name, what) in txop_sim::traffic::flent::TESTS {
        out.push_str(&format!("  {name:<16} {what}\n"));
    }
    out.push_str("\nStacks (stack = NAME; txop stacks NAME for details):\n");
    for (name, what) in txop_core::stack::PRESETS {
        out.push_str(&format!("  {name:<18} {what}\n"));
    }
    print_stdout(&out)
}

fn dispatch(cli: Cli) -> Result<(), UserError> {
    match cli.command {
        Command::Run {
            scenario,
            set,
            seed,
            out,
        } => run(&scenario, &set, seed, out),
        Command::Compare {
            scenario,
            stacks,
            vary,
            set,
            seed,
            out,
        } => compare(
            CompareArgs {
                spec: &scenario,
                stacks: &stacks,
                vary: &vary,
                sets: &set,
                seed,
            },
            out,
        ),
        Command::Reproduce {
            experiments,
            output,
            force,
            quiet,
        } => reproduce(&experiments, output.as_deref(), force, quiet),
        Command::List => list(),
        Command::Stacks { name } => stacks(name.as_deref()),
        Command::Show { scenario, set } => show(&scenario, &set),
        Command::Emu(args) => emu::main(args),
    }
}

/// Exit codes: 0 success, 2 a usage or input error (one line on stderr), 1 an
/// internal error (a bug: one line, no backtrace unless RUST_BACKTRACE is set).
fn main() -> ExitCode {
    let cli = Cli::parse();
    if std::env::var_os("RUST_BACKTRACE").is_none() {
        std::panic::set_hook(Box::new(|info| {
            let msg = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| info.payload().downcast_ref::<String>().cloned())
                .unwrap_or_default();
            let at = info
                .location()
                .map(|l| format!(" at {}:{}", l.file(), l.line()))
                .unwrap_or_default();
            eprintln!("txop: internal error: {msg}{at} (please report it)");
        }));
    }
    match std::panic::catch_unwind(|| dispatch(cli)) {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(UserError(msg))) => {
            eprintln!("txop: error: {msg}");
            ExitCode::from(2)
        }
        Err(_) => ExitCode::from(1),
    }
}
