//! `txop`: run WiFi latency-under-load scenarios.

use clap::{Parser, Subcommand};
use serde::Serialize;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use txop::scenario::{self, Scenario};
use txop::{builtin, report};
use txop_sim::{Results, Simulation};

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
        /// Print the results as JSON on stdout instead of the table.
        #[arg(long)]
        json: bool,
    },
    /// List the built-in scenarios.
    List,
    /// List the transmit-stack presets (kernel eras) and what each contains.
    Stacks {
        /// Show only this preset.
        name: Option<String>,
    },
}

/// The `--json` object: the run's results plus what produced them.
#[derive(Serialize)]
struct JsonReport<'a> {
    txop_version: &'a str,
    scenario: &'a str,
    #[serde(flatten)]
    results: &'a Results,
}

/// An error for the user: one line, exit code 2.
struct UserError(String);

fn load(spec: &str) -> Result<(String, String), UserError> {
    if let Some(text) = builtin::get(spec) {
        return Ok((spec.to_string(), text.to_string()));
    }
    let path = Path::new(spec);
    if path.exists() {
        return std::fs::read_to_string(path)
            .map(|t| (spec.to_string(), t))
            .map_err(|e| UserError(format!("{spec}: cannot read: {e}")));
    }
    let hint = builtin::nearest(spec)
        .map(|n| format!(" (did you mean `{n}`?)"))
        .unwrap_or_default();
    Err(UserError(format!(
        "{spec}: no such scenario file or built-in scenario{hint}; `txop list` shows the built-ins"
    )))
}

fn parse_sets(sets: &[String]) -> Result<Vec<(String, String)>, UserError> {
    sets.iter()
        .map(|s| match s.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => {
                Ok((k.trim().to_string(), v.trim().to_string()))
            }
            _ => Err(UserError(format!("--set {s}: expected KEY=VALUE"))),
        })
        .collect()
}

fn run(spec: &str, sets: &[String], seed: Option<u64>, json: bool) -> Result<(), UserError> {
    let (source, text) = load(spec)?;
    let sets = parse_sets(sets)?;
    let scenario: Scenario =
        scenario::parse(&text, &sets).map_err(|e| UserError(format!("{source}: {e}")))?;
    let mut cfg = scenario
        .resolve()
        .map_err(|e| UserError(format!("{source}: {e}")))?;
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
    let sim = Simulation::new(cfg).map_err(|e| UserError(format!("{source}: {e}")))?;
    let results = sim.run();
    let mut stdout = std::io::stdout().lock();
    let written = if json {
        let report = JsonReport {
            txop_version: env!("CARGO_PKG_VERSION"),
            scenario: &name,
            results: &results,
        };
        serde_json::to_string_pretty(&report)
            .map_err(|e| UserError(format!("cannot encode results: {e}")))
            .and_then(|s| writeln!(stdout, "{s}").map_err(|e| UserError(format!("stdout: {e}"))))
    } else {
        write!(stdout, "{}", report::summary(&name, &results))
            .map_err(|e| UserError(format!("stdout: {e}")))
    };
    written
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run {
            scenario,
            set,
            seed,
            json,
        } => run(&scenario, &set, seed, json),
        Command::List => {
            for (name, text) in builtin::SCENARIOS {
                println!("{name:<14} {}", builtin::description(text));
            }
            Ok(())
        }
        Command::Stacks { name } => stacks(name.as_deref()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(UserError(msg)) => {
            eprintln!("txop: error: {msg}");
            ExitCode::from(2)
        }
    }
}
