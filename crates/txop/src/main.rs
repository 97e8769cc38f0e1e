//! `txop`: run WiFi latency-under-load scenarios.

use clap::{Parser, Subcommand};
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use txop::builtin;
use txop::results_dir::{self, Protected};
use txop::runner::{enter_context, internal_error_line, load, parse_sets, shadowed_file, SimError};
use txop::scenario;
use txop_core::mac80211::rate_control::RateControlKind;

mod emu;
mod pcap_args;
mod sweep;

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
        #[arg(long, allow_negative_numbers = true, value_parser = parse_seed)]
        seed: Option<u64>,
        #[command(flatten)]
        kernel: KernelSrc,
        #[command(flatten)]
        out: Output,
        #[command(flatten)]
        pcap: pcap_args::PcapArgs,
    },
    /// Run one scenario under several settings and compare them side by side.
    #[command(after_help = "Examples:\n  \
        txop compare tcp-ndown-6mbit --stack linux-4.8-bloated --stack linux-6.16\n  \
        txop compare anomaly --stack linux-4.9 --stack linux-5.5 -o results/atf\n  \
        txop compare default --vary stations.count=2,8,32\n  \
        txop compare default --stack linux-4.9 --stack linux-6.16 --vary stations.count=1,4,16 --vary seed=1,2,3 --metric-vs stations.count -o vs\n  \
        txop compare tcp-ndown-6mbit --stack linux-4.9 --stack linux-6.16 --vary traffic.streams=1,12\n  \
        txop compare --against rrul-2016-05-10.flent.gz --flent-on server --set stations.mcs=7\n  \
        txop compare e3-rtt-fair-up --against rtt_fair_up.flent.gz -o real-vs-txop")]
    Compare {
        /// Built-in scenario name (see `txop list`) or path to a scenario file (with
        /// --against: the cell to run the file's test in, default tcp-ndown-6mbit).
        #[arg(required_unless_present = "against")]
        scenario: Option<String>,
        /// A real flent data file (.flent.gz or .flent) to hold txop against: its test,
        /// length, hosts, congestion control, ECN and DSCP are run in SCENARIO, and the
        /// table shows each series' median and p90, real against txop.
        #[arg(long, value_name = "FILE", conflicts_with = "vary")]
        against: Option<std::path::PathBuf>,
        /// With --against: where flent ran, when the file does not say (`station`: on
        /// the WiFi client, as txop's tests; `server`: behind the AP, netserver on the
        /// clients, so its uploads are txop's downloads).
        #[arg(long = "flent-on", value_name = "SIDE", requires = "against",
              value_parser = ["station", "server"])]
        flent_on: Option<String>,
        /// A stack preset to compare (repeatable; `txop stacks` lists them).
        #[arg(long = "stack", value_name = "NAME")]
        stacks: Vec<String>,
        /// Vary any scenario key over values, e.g. `--vary stations.count=1,4,16`
        /// (repeatable, once per key; several options multiply, to at most 1000 runs).
        #[arg(long = "vary", value_name = "KEY=V1,V2,…")]
        vary: Vec<String>,
        /// Override a scenario key in every run (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Random seed for every run.
        #[arg(long, allow_negative_numbers = true, value_parser = parse_seed)]
        seed: Option<u64>,
        /// Chart the headline figures (throughput, delay p50 and p99, Jain's index)
        /// against KEY, one of the --vary keys with numeric values: a line per setting
        /// of the other keys, and over `--vary seed=…` the median with its range. Adds
        /// a table to the summary and, with -o, metric-vs-KEY.png.
        #[arg(long = "metric-vs", value_name = "KEY", conflicts_with = "against")]
        metric_vs: Option<String>,
        #[command(flatten)]
        kernel: KernelSrc,
        #[command(flatten)]
        out: Output,
    },
    /// Run a scenario over a grid of settings × seeds, on local processes or a Dask
    /// cluster, into a netCDF dataset plus a results directory per point (the Python
    /// package `txop` does it; `txop sweep --help` lists the options).
    #[command(
        disable_help_flag = true,
        after_help = "Examples:\n  \
        txop sweep default --vary stack=linux-4.9,linux-6.16 --seeds 1-5 -o sw\n  \
        txop sweep rrul.toml --vary stations.count=1,4,16 --seeds 1-10 --scheduler tcp://host:8786 -o sw"
    )]
    Sweep {
        /// SCENARIO --vary KEY=V1,V2,… [--set KEY=VALUE]… [--seeds 1-10]
        /// [--kernel-src DIR] [--scheduler ADDRESS] [--workers N] -o DIR
        #[arg(
            trailing_var_arg = true,
            allow_hyphen_values = true,
            value_name = "ARGS"
        )]
        args: Vec<String>,
    },
    /// Reproduce the seed experiments (E1–E5 of docs/experiments.md) and report the seed's
    /// numbers next to txop's.
    #[command(after_help = "Examples:\n  \
        txop reproduce all -o reproduction\n  \
        txop reproduce E2 E4\n  \
        txop reproduce all --rate-control minstrel_ht -o reproduction-minstrel")]
    Reproduce {
        /// Experiments to run: E2, E3, E4 … or `all`.
        #[arg(default_value = "all")]
        experiments: Vec<String>,
        /// Write report.md and its plots into this directory. Refused if it exists.
        #[arg(short = 'o', long = "output", value_name = "DIR")]
        output: Option<std::path::PathBuf>,
        /// Replace an existing results directory that txop wrote and nobody has added to
        /// (never `.`, `..`, `/`, the home directory or a directory of other files).
        #[arg(long)]
        force: bool,
        /// Print nothing on stdout.
        #[arg(short, long)]
        quiet: bool,
        /// The rate control of every station of every run, overriding each scenario's
        /// (fixed, ideal, minstrel_ht, minstrel_ht-5.10, minstrel_ht-6; minstrel_ht
        /// runs the era of each run's stack). The report's header names it.
        #[arg(long = "rate-control", value_name = "KIND", default_value = "fixed",
              value_parser = parse_rate_control)]
        rate_control: RateControlKind,
    },
    /// List the built-in scenarios, flent tests and stack presets.
    List,
    /// Print a scenario fully resolved: every key with its default filled in.
    #[command(after_help = "Examples:\n  \
        txop show default\n  \
        txop show anomaly --set stack=linux-4.9 > my-cell.toml")]
    Show {
        /// Built-in scenario name or path to a scenario file.
        scenario: String,
        /// Override any scenario key before resolving, e.g. `--set stations.count=20`
        /// (repeatable; the keys are those of docs/scenarios.md).
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

/// An error for the user: one line, exit code 2.
struct UserError(String);

impl From<String> for UserError {
    fn from(e: String) -> Self {
        UserError(e)
    }
}

/// Why a command failed.
enum Failure {
    /// The user's input or environment: one line, exit 2.
    User(UserError),
    /// A bug reported as a value (e.g. the simulator's watchdog): the line to print,
    /// exit 1.
    Internal(String),
    /// A bug that panicked: the panic hook has printed its line; exit 1.
    Panicked,
}

impl From<String> for Failure {
    fn from(e: String) -> Self {
        Failure::User(UserError(e))
    }
}

impl From<UserError> for Failure {
    fn from(e: UserError) -> Self {
        Failure::User(e)
    }
}

impl From<SimError> for Failure {
    fn from(e: SimError) -> Self {
        txop::run::Failure::from(e).into()
    }
}

impl From<txop::run::Failure> for Failure {
    fn from(e: txop::run::Failure) -> Self {
        match e {
            txop::run::Failure::User(e) => Failure::User(UserError(e)),
            txop::run::Failure::Internal(line) => Failure::Internal(line),
            txop::run::Failure::Panicked => Failure::Panicked,
        }
    }
}

/// `--seed`: a whole number 0 to 2^64 − 1 (a negative one is read as a value, so that
/// the message says what a seed is rather than calling `-1` an unknown option).
fn parse_seed(s: &str) -> Result<u64, String> {
    s.parse()
        .map_err(|_| format!("expected a whole number from 0 to {}", u64::MAX))
}

/// `--rate-control`: a rate control by its scenario name.
fn parse_rate_control(s: &str) -> Result<RateControlKind, String> {
    RateControlKind::from_name(s).ok_or_else(|| {
        let kinds: Vec<&str> = RateControlKind::NAMES.iter().map(|(n, _)| *n).collect();
        format!("expected one of {}", kinds.join(", "))
    })
}

/// Refuse an output directory before any work is done: one that exists (without
/// `force`), or one `force` may not replace (see [`results_dir::check_output`]).
fn refuse_existing(dir: &Path, force: bool) -> Result<(), UserError> {
    results_dir::check_output(dir, force, &Protected::of_process())
        .map(|_| ())
        .map_err(|why| UserError(format!("{}: {why}", dir.display())))
}

/// Write the results directory: everything (with txop's marker) into a sibling
/// temporary directory first, then renamed into place, an old one replaced only if
/// txop wrote it, so that a failure leaves nothing that looks complete and never
/// loses a user's files (see [`results_dir::write`]).
fn write_results(dir: &Path, force: bool, files: &[(String, Vec<u8>)]) -> Result<(), UserError> {
    results_dir::write(dir, force, &Protected::of_process(), files)
        .map_err(|why| UserError(format!("{}: {why}", dir.display())))
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

fn print_stdout(text: &str) -> Result<(), UserError> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|_| stdout.flush())
        .map_err(|e| UserError(format!("stdout: {e}")))
}

/// `--kernel-src` of `txop run` and `txop compare`.
#[derive(clap::Args)]
struct KernelSrc {
    /// The kernel source tree whose own code runs for stations with
    /// `rate_control = "minstrel_ht-kernel"` (its net/mac80211/rc80211_minstrel_ht.c,
    /// built at run time), instead of Debian's linux-source-6.12: the scenario key
    /// `kernel.src` (docs/scenarios.md, `[kernel]`).
    #[arg(long = "kernel-src", value_name = "DIR")]
    kernel_src: Option<std::path::PathBuf>,
}

impl KernelSrc {
    /// `sets` with `kernel.src` set to the directory given (made absolute, so that a
    /// scenario file elsewhere does not read it relative to itself).
    fn add_to(&self, mut sets: Vec<String>) -> Vec<String> {
        if let Some(dir) = &self.kernel_src {
            sets.push(kernel_src_set(dir));
        }
        sets
    }
}

/// `--kernel-src DIR` as the `--set` it stands for.
pub(crate) fn kernel_src_set(dir: &Path) -> String {
    let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    format!("kernel.src={}", dir.display())
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
    /// Replace an existing results directory that txop wrote and nobody has added to
    /// (never `.`, `..`, `/`, the home directory or a directory of other files).
    #[arg(long)]
    force: bool,
    /// Print nothing on stdout (errors still go to stderr); with -o the results are
    /// still written.
    #[arg(short, long)]
    quiet: bool,
}

fn run(
    spec: &str,
    sets: &[String],
    seed: Option<u64>,
    out: Output,
    pcap: &pcap_args::PcapArgs,
) -> Result<(), Failure> {
    let sets = parse_sets(sets).map_err(UserError)?;
    if pcap.pcap && out.dir.is_none() {
        return Err(UserError(
            "--pcap writes air.pcapng into the results directory: give -o DIR".into(),
        )
        .into());
    }
    let plan = txop::run::plan(spec, &sets, seed).map_err(UserError)?;
    // From here on an internal error names this run.
    let _context = enter_context(plan.label());
    let capture = plan.capture(&pcap.options()).map_err(UserError)?;
    if let Some(dir) = out.dir.as_deref() {
        refuse_existing(dir, out.force)?;
    }
    let progress = Progress::new(Some(plan.duration_ns()), out.quiet);
    let max_bytes = capture
        .as_ref()
        .and_then(|c| c.first())
        .map_or(0, |c| c.max_bytes);
    let (outcome, air) = plan.simulate_captured(&|ns| progress.advance(ns), capture)?;
    progress.finish();
    let several = air.len() > 1;
    for (file, (_, stats)) in &air {
        for line in txop::pcap::stderr_lines(stats, max_bytes, out.quiet) {
            // With several BSSs each line says whose capture it is.
            if several {
                eprintln!("{file}: {line}");
            } else {
                eprintln!("{line}");
            }
        }
    }
    // The captures' bytes move into the results directory once.
    let air = std::cell::RefCell::new(air);
    output(&out, outcome.summary(), &|| outcome.json(), &|| {
        let mut files = outcome.files()?;
        files.extend(
            air.borrow_mut()
                .drain(..)
                .map(|(file, (bytes, _))| (file, bytes)),
        );
        Ok(files)
    })
}

/// What a run or comparison gives: with `-o`, the results directory of `files`; on
/// stdout `summary`, or `json` with `--json`, or nothing with `--quiet`.
fn output(
    out: &Output,
    summary: String,
    json: &dyn Fn() -> Result<String, String>,
    files: &dyn Fn() -> Result<Vec<(String, Vec<u8>)>, String>,
) -> Result<(), Failure> {
    if let Some(dir) = out.dir.as_deref() {
        write_results(dir, out.force, &files().map_err(UserError)?)?;
    }
    if out.quiet {
        return Ok(());
    }
    let text = if out.json {
        json().map_err(UserError)?
    } else {
        summary
    };
    Ok(print_stdout(&text)?)
}

/// `txop compare --against FILE`: the file's test run in `spec` (or the default base),
/// held against the file.
fn against(
    file: &Path,
    a: CompareArgs<'_>,
    flent_on: Option<&str>,
    out: Output,
) -> Result<(), Failure> {
    if a.stacks.len() > 1 {
        return Err(UserError(
            "--against runs one setting: give one --stack (or --set stack=NAME)".into(),
        )
        .into());
    }
    let mut sets: Vec<String> = a.stacks.iter().map(|s| format!("stack={s}")).collect();
    sets.extend(a.sets.iter().cloned());
    let side = flent_on.and_then(txop::against::FlentSide::from_name);
    let spec = (!a.spec.is_empty()).then_some(a.spec);
    let plan = txop::against::plan_against(file, spec, &sets, a.seed, side).map_err(UserError)?;
    let _context = enter_context(plan.label());
    if let Some(dir) = out.dir.as_deref() {
        refuse_existing(dir, out.force)?;
    }
    let progress = Progress::new(Some(plan.duration_ns()), out.quiet);
    let outcome = plan.simulate(&|ns| progress.advance(ns));
    progress.finish();
    let outcome = outcome?;
    output(&out, outcome.summary(), &|| outcome.json(), &|| {
        outcome.files()
    })
}

struct CompareArgs<'a> {
    spec: &'a str,
    stacks: &'a [String],
    vary: &'a [String],
    sets: &'a [String],
    seed: Option<u64>,
    metric_vs: Option<&'a str>,
}

fn compare(a: CompareArgs<'_>, out: Output) -> Result<(), Failure> {
    let mut plan =
        txop::run::plan_compare(a.spec, a.stacks, a.vary, a.sets, a.seed).map_err(UserError)?;
    if let Some(key) = a.metric_vs {
        plan = plan.with_metric_vs(key).map_err(UserError)?;
    }
    // An internal error outside the runs (plots, files) names the comparison.
    let _context = enter_context(plan.label());
    if let Some(dir) = out.dir.as_deref() {
        refuse_existing(dir, out.force)?;
    }
    let progress = Progress::new(Some(plan.duration_ns()), out.quiet);
    // The runs are independent: run them on the machine's cores.
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let outcome = plan.simulate(workers, &|ns| progress.advance(ns));
    progress.finish();
    let outcome = outcome?;
    output(&out, outcome.summary(), &|| outcome.json(), &|| {
        outcome.files()
    })
}

fn show(spec: &str, sets: &[String]) -> Result<(), UserError> {
    let (source, text) = load(spec).map_err(UserError)?;
    let sets = parse_sets(sets).map_err(UserError)?;
    let mut scenario =
        scenario::parse(&text, &sets).map_err(|e| UserError(e.in_source(&source).to_string()))?;
    scenario.base_dir = txop::runner::scenario_dir(spec);
    // Resolving checks every value; what is printed is the scenario itself, and (as
    // comments) each station's resolved channel when the scenario has channel keys.
    let summary = if scenario.has_bsss() {
        let (_, text) = scenario
            .resolve_bsss_with_summary()
            .map_err(|e| UserError(e.in_source(&source).to_string()))?;
        Some(text)
    } else {
        scenario
            .resolve_with_summary()
            .map_err(|e| UserError(e.in_source(&source).to_string()))?
            .1
    };
    let toml = toml::to_string(&scenario)
        .map_err(|e| UserError(format!("cannot encode the scenario: {e}")))?;
    match summary {
        Some(s) => print!("{toml}\n{s}"),
        None => print!("{toml}"),
    }
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
    options: txop::reproduce::Options,
) -> Result<(), Failure> {
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
        // Each run inside names itself; this names the experiment around them.
        let _context = enter_context(format!("reproduce {id}"));
        reports.push(reproduce::run_with(id, options, &|ns| {
            progress.advance(ns)
        })?);
    }
    progress.finish();
    let md = reproduce::markdown(&reports);
    if let Some(dir) = dir {
        write_results(dir, force, &reproduce::files(&md, &reports)?)?;
    }
    if quiet {
        return Ok(());
    }
    Ok(print_stdout(&md)?)
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

/// A scenario given by a bare built-in name while a file of that name is here: say
/// which is used (one line on stderr; the command goes on).
fn warn_if_shadowed(spec: &str) {
    if let Some(notice) = shadowed_file(spec) {
        eprintln!("txop: warning: {notice}");
    }
}

fn dispatch(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        Command::Run {
            scenario,
            set,
            seed,
            kernel,
            out,
            pcap,
        } => {
            warn_if_shadowed(&scenario);
            run(&scenario, &kernel.add_to(set), seed, out, &pcap)
        }
        Command::Compare {
            scenario,
            against: file,
            flent_on,
            stacks,
            vary,
            set,
            seed,
            metric_vs,
            kernel,
            out,
        } => {
            let set = kernel.add_to(set);
            let scenario = scenario.unwrap_or_default();
            if !scenario.is_empty() {
                warn_if_shadowed(&scenario);
            }
            let a = CompareArgs {
                spec: &scenario,
                stacks: &stacks,
                vary: &vary,
                sets: &set,
                seed,
                metric_vs: metric_vs.as_deref(),
            };
            match file {
                Some(file) => against(&file, a, flent_on.as_deref(), out),
                None => compare(a, out),
            }
        }
        Command::Reproduce {
            experiments,
            output,
            force,
            quiet,
            rate_control,
        } => reproduce(
            &experiments,
            output.as_deref(),
            force,
            quiet,
            txop::reproduce::Options { rate_control },
        ),
        Command::List => Ok(list()?),
        Command::Stacks { name } => Ok(stacks(name.as_deref())?),
        Command::Show { scenario, set } => {
            warn_if_shadowed(&scenario);
            Ok(show(&scenario, &set)?)
        }
        Command::Emu(args) => Ok(emu::main(args)?),
        // Handled in `main`: it exits with the Python side's code.
        Command::Sweep { .. } => Ok(()),
    }
}

/// A command-line usage error as one line: clap's message (`rendered`, its first
/// paragraph), its tips if it has any, and the command (`command`, e.g. `txop run`)
/// whose `--help` to read: `txop: error: unexpected argument '--sed' found (a similar
/// argument exists: '--seed'); see `txop run --help``.
fn usage_error_line(rendered: &str, command: &str) -> String {
    let message: Vec<&str> = rendered
        .lines()
        .map(str::trim)
        .skip_while(|l| l.is_empty())
        .take_while(|l| !l.is_empty())
        .collect();
    let message = message.join(" ");
    let message = message.strip_prefix("error: ").unwrap_or(&message);
    let tips: Vec<&str> = rendered
        .lines()
        .filter_map(|l| l.trim().strip_prefix("tip: "))
        .collect();
    let tips = if tips.is_empty() {
        String::new()
    } else {
        format!(" ({})", tips.join("; "))
    };
    format!("txop: error: {message}{tips}; see `{command} --help`")
}

/// The (sub)command `args` (without the program name) name, as far as they name one:
/// `txop`, `txop run`, `txop emu exec`.
fn command_path(args: &[std::ffi::OsString]) -> String {
    use clap::CommandFactory;
    let mut cmd = Cli::command();
    let mut path = vec!["txop".to_string()];
    for arg in args {
        let Some(arg) = arg.to_str() else { break };
        if arg.starts_with('-') {
            continue;
        }
        let Some(sub) = cmd.find_subcommand(arg).cloned() else {
            break;
        };
        path.push(sub.get_name().to_string());
        cmd = sub;
    }
    path.join(" ")
}

/// The arguments, or the exit: `--help` and `--version` print as clap prints them
/// (exit 0), as does the help a bare `txop` gets (exit 2); every other error is one
/// line on stderr, exit 2.
fn parse_args() -> Result<Cli, ExitCode> {
    use clap::error::ErrorKind;
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    Cli::try_parse_from(&args).map_err(|e| match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            ExitCode::SUCCESS
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            ExitCode::from(2)
        }
        _ => {
            let command = command_path(args.get(1..).unwrap_or_default());
            eprintln!("{}", usage_error_line(&e.render().to_string(), &command));
            ExitCode::from(2)
        }
    })
}

/// The panic hook: one line naming what was running (the thread's context: scenario
/// and seed) and where it broke, whatever `RUST_BACKTRACE` says; only the first panic
/// of the process prints (a comparison runs on several threads).
fn report_panic(info: &std::panic::PanicHookInfo<'_>) {
    static PRINTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if PRINTED.swap(true, std::sync::atomic::Ordering::Relaxed) {
        return;
    }
    let msg = info
        .payload()
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| info.payload().downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic".into());
    let at = info
        .location()
        .map(|l| format!(" at {}:{}", l.file(), l.line()))
        .unwrap_or_default();
    let context = txop::runner::current_context();
    eprintln!(
        "{}",
        internal_error_line(context.as_deref(), &format!("{msg}{at}"))
    );
}

/// Exit codes: 0 success, 2 a usage or input error (one line on stderr), 1 an
/// internal error (a bug: one line naming the scenario and seed, never a backtrace).
fn main() -> ExitCode {
    let cli = match parse_args() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    if let Command::Sweep { args } = &cli.command {
        return sweep::main(args);
    }
    std::panic::set_hook(Box::new(report_panic));
    match std::panic::catch_unwind(|| dispatch(cli)) {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(Failure::User(UserError(msg)))) => {
            eprintln!("txop: error: {msg}");
            ExitCode::from(2)
        }
        Ok(Err(Failure::Internal(line))) => {
            eprintln!("{line}");
            ExitCode::from(1)
        }
        Ok(Err(Failure::Panicked)) | Err(_) => ExitCode::from(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_errors_become_one_line_with_the_command_to_ask() {
        let line = |args: &[&str]| {
            let argv: Vec<std::ffi::OsString> = std::iter::once("txop")
                .chain(args.iter().copied())
                .map(Into::into)
                .collect();
            let Err(e) = Cli::try_parse_from(&argv) else {
                panic!("{args:?} parsed")
            };
            usage_error_line(&e.render().to_string(), &command_path(&argv[1..]))
        };
        assert_eq!(
            line(&["run", "default", "--sed", "3"]),
            "txop: error: unexpected argument '--sed' found (a similar argument exists: \
             '--seed'); see `txop run --help`"
        );
        assert_eq!(
            line(&["run", "default", "--seed", "-1"]),
            "txop: error: invalid value '-1' for '--seed <SEED>': expected a whole number \
             from 0 to 18446744073709551615; see `txop run --help`"
        );
        assert_eq!(
            line(&["run"]),
            "txop: error: the following required arguments were not provided: <SCENARIO>; \
             see `txop run --help`"
        );
        assert_eq!(
            line(&["emu", "exec", "sta1"]),
            "txop: error: the following required arguments were not provided: \
             <COMMAND>...; see `txop emu exec --help`"
        );
        assert_eq!(
            usage_error_line("garbage", "txop"),
            "txop: error: garbage; see `txop --help`"
        );
    }

    /// An internal error returned by a run (the simulator's watchdog, say) is one line
    /// naming the scenario and seed; main prints it and exits 1.
    #[test]
    fn an_internal_error_from_a_run_is_one_line_with_scenario_and_seed() {
        let p = txop::runner::prepare("anomaly", &[], Some(3)).unwrap();
        let f = Failure::from(
            p.internal_error("simulated time has not advanced in 10 million events at t=0.4 s"),
        );
        let Failure::Internal(line) = f else {
            panic!("not internal")
        };
        assert_eq!(
            line,
            "txop: internal error: anomaly seed 3: simulated time has not advanced in 10 \
             million events at t=0.4 s"
        );
        assert!(matches!(
            Failure::from(SimError::User("x".into())),
            Failure::User(UserError(m)) if m == "x"
        ));
    }
}
