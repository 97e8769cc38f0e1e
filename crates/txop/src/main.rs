//! `txop`: run WiFi latency-under-load scenarios.

use clap::{Parser, Subcommand};
use serde::Serialize;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use txop::scenario::{self, Scenario};
use txop::{builtin, report};
use txop_sim::{Results, Simulation};

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
        /// Print the results as JSON on stdout instead of the table.
        #[arg(long)]
        json: bool,
        /// Write a results directory: summary.txt, results.json and, for a flent
        /// test, a flent data file (`flent -i FILE`). Refused if it exists.
        #[arg(short = 'o', long = "output", value_name = "DIR")]
        output: Option<std::path::PathBuf>,
        /// Replace an existing results directory.
        #[arg(long)]
        force: bool,
    },
    /// List the built-in scenarios.
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

/// The options of `txop run`.
struct RunOptions<'a> {
    spec: &'a str,
    sets: &'a [String],
    seed: Option<u64>,
    json: bool,
    output: Option<&'a Path>,
    force: bool,
}

/// Write the results directory: everything into a sibling temporary directory first,
/// then one rename, so that a failure leaves nothing that looks complete.
fn write_results(dir: &Path, force: bool, files: &[(String, Vec<u8>)]) -> Result<(), UserError> {
    let shown = dir.display();
    if dir.exists() && !force {
        return Err(UserError(format!(
            "{shown}: output directory exists (use --force to replace it)"
        )));
    }
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

fn run(o: RunOptions) -> Result<(), UserError> {
    let (spec, sets, seed, json) = (o.spec, o.sets, o.seed, o.json);
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
    let summary = report::summary(&name, &results);
    if let Some(dir) = o.output {
        let report = JsonReport {
            txop_version: env!("CARGO_PKG_VERSION"),
            scenario: &name,
            resolved: Some(&scenario),
            results: &results,
        };
        let json_bytes = serde_json::to_vec_pretty(&report)
            .map_err(|e| UserError(format!("cannot encode results: {e}")))?;
        let mut files = vec![
            ("summary.txt".to_string(), summary.clone().into_bytes()),
            ("results.json".to_string(), json_bytes),
        ];
        if let Some(test) = &scenario.traffic.test {
            let data =
                txop_sim::flentfile::flent_data(&results, test, &name, scenario.traffic.length_s);
            let bytes = serde_json::to_vec(&data)
                .and_then(|b| gzip(&b).map_err(serde_json::Error::io))
                .map_err(|e| UserError(format!("cannot encode the flent file: {e}")))?;
            files.push((format!("{test}-{name}.flent.gz"), bytes));
        }
        write_results(dir, o.force, &files)?;
    }
    let mut stdout = std::io::stdout().lock();
    let written = if json {
        let report = JsonReport {
            txop_version: env!("CARGO_PKG_VERSION"),
            scenario: &name,
            resolved: None,
            results: &results,
        };
        serde_json::to_string_pretty(&report)
            .map_err(|e| UserError(format!("cannot encode results: {e}")))
            .and_then(|s| writeln!(stdout, "{s}").map_err(|e| UserError(format!("stdout: {e}"))))
    } else {
        write!(stdout, "{summary}").map_err(|e| UserError(format!("stdout: {e}")))
    };
    written
}

fn show(spec: &str, sets: &[String]) -> Result<(), UserError> {
    let (source, text) = load(spec)?;
    let sets = parse_sets(sets)?;
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run {
            scenario,
            set,
            seed,
            json,
            output,
            force,
        } => run(RunOptions {
            spec: &scenario,
            sets: &set,
            seed,
            json,
            output: output.as_deref(),
            force,
        }),
        Command::List => {
            for (name, text) in builtin::SCENARIOS {
                println!("{name:<14} {}", builtin::description(text));
            }
            Ok(())
        }
        Command::Stacks { name } => stacks(name.as_deref()),
        Command::Show { scenario, set } => show(&scenario, &set),
        Command::Emu(args) => emu::main(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(UserError(msg)) => {
            eprintln!("txop: error: {msg}");
            ExitCode::from(2)
        }
    }
}
