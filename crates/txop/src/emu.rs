//! `txop emu`: run real programs through a modelled cell in real time (the emulator
//! in `txop-emu`), with the scenario files of `txop run`.

use crate::{refuse_existing, write_results, UserError};
use clap::{Args, Subcommand};
use serde::Serialize;
use std::ffi::OsString;
use std::path::PathBuf;
use txop::emulated;
use txop::report;
use txop::run::Plan;
use txop::runner::parse_sets;
use txop::scenario::Scenario;
use txop_emu::results::EmuReport;
use txop_emu::{netns, Program};
use txop_results::Results;

/// `txop emu …`
#[derive(Args)]
#[command(
    args_conflicts_with_subcommands = true,
    after_help = "Examples:\n  \
        txop emu tcp-ndown-6mbit -- ping -c 5 198.18.1.1\n  \
        txop emu tcp-ndown-6mbit --in sta1 -- ping -c 5 198.18.0.1\n  \
        txop emu tcp-ndown-6mbit --set stack=linux-4.8-bloated -o out -- sh -c \\\n      \
        '$TXOP_EXE emu exec sta1 -- iperf3 -s -1 -D; sleep 0.5; iperf3 -c $TXOP_STA1 -C cubic -t 10'\n  \
        txop emu default --shell\n  \
        txop emu exec sta1 -- ping -c 3 198.18.0.1\n  \
        txop emu --cleanup\n\n\
        The command's stdout and stderr are its own (`-- iperf3 -J | jq` works); txop's\n\
        summary goes to stderr after it (not with --quiet) and to summary.txt with -o.\n\
        Exit status: the command's; 128+N if signal N ended it or the run; 2 if txop\n\
        refused (bad input, a command that cannot be started); 1 for an internal error.\n\n\
        Addresses: the server is 198.18.0.1 (fd74:786f:7000::1), station N is 198.18.1.N\n\
        (fd74:786f:7000::1:N). Programs get TXOP_SERVER, TXOP_STA1…, TXOP_EMU_ID and TXOP_EXE\n\
        in their environment. With [[bss]], BSS K (from 0) has its own server 198.18.2K.1\n\
        and stations 198.18.(2K+1).N, named NAME.server and NAME.staN (--in, exec), and\n\
        programs also get TXOP_<NAME>_SERVER, TXOP_<NAME>_STA1…; packets between BSSs\n\
        cross both wired links, which meet where the servers stand. The scenario's cell, stack, host buses and wired link are\n\
        emulated; its [traffic], [[flows]] and duration_s are not used: the programs are\n\
        the traffic, and the run lasts as long as they do."
)]
pub struct EmuArgs {
    #[command(subcommand)]
    action: Option<EmuAction>,
    /// Built-in scenario name or path to a scenario file (the cell, stack and wired link).
    scenario: Option<String>,
    /// Override any scenario key (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Random seed of the cell.
    #[arg(long)]
    seed: Option<u64>,
    /// Where COMMAND (or the shell) runs: `server` or `staN`; with `[[bss]]`,
    /// `NAME.server` or `NAME.staN` (bare: the first BSS's).
    #[arg(long = "in", value_name = "NODE", default_value = "server")]
    node: String,
    /// TCP congestion control in the namespaces (`net.ipv4.tcp_congestion_control`
    /// inside each): `NAME` for every node, `NODE=NAME` for one (wins); repeatable.
    /// Without it each keeps this machine's default, which the summary states.
    #[arg(long = "cc", value_name = "[NODE=]NAME")]
    cc: Vec<String>,
    /// Start an interactive shell instead of a command (the namespaces and addresses
    /// are printed first).
    #[arg(long, conflicts_with = "output")]
    shell: bool,
    /// Remove what emulators killed with SIGKILL left behind (their namespaces, the
    /// processes in them, their lock files; every run's start does the same), make
    /// sure txop's range is unreachable from the root namespace, then exit.
    #[arg(long, conflicts_with_all = ["scenario", "shell"])]
    cleanup: bool,
    /// Write a results directory: summary.txt, results.json (the cell's view) and
    /// command.log (what the command printed).
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    output: Option<PathBuf>,
    /// Replace an existing results directory.
    #[arg(long)]
    force: bool,
    /// Print nothing of txop's own (the summary, the --shell plan, notes); errors
    /// still get their one line on stderr. The command's output is untouched.
    #[arg(short, long)]
    quiet: bool,
    /// Poll instead of sleeping this many µs before each deadline (CPU for timing
    /// precision).
    #[arg(long, value_name = "US", default_value_t = 30)]
    spin_us: u64,
    /// Run the emulator's loop under SCHED_FIFO at this priority (1-99; 0: the normal
    /// scheduler). The programs it carries keep the normal scheduler.
    #[arg(long, value_name = "PRIO", default_value_t = 10, value_parser = clap::value_parser!(i32).range(0..=99))]
    rt_priority: i32,
    /// The air as a radiotap capture, DIR/air.pcapng, with the real packet bytes (with
    /// `[[bss]]`, DIR/air-<name>.pcapng per BSS).
    #[command(flatten)]
    pcap: crate::pcap_args::PcapArgs,
    /// The command and its arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<OsString>,
}

#[derive(Subcommand)]
enum EmuAction {
    /// Run a command in a namespace of a running emulator.
    Exec {
        /// The emulator's id (its pid); by default the one this command runs inside
        /// (TXOP_EMU_ID), else the only one running (with several, --id is required).
        #[arg(long)]
        id: Option<u32>,
        /// `server` or `staN`; with `[[bss]]`, `NAME.server` or `NAME.staN`.
        node: String,
        /// The command and its arguments, after `--`.
        #[arg(last = true, required = true, value_name = "COMMAND")]
        command: Vec<OsString>,
    },
}

/// results.json of an emulator run.
#[derive(Serialize)]
struct EmuJson<'a> {
    txop_version: &'a str,
    scenario: &'a str,
    mode: &'a str,
    command: Vec<String>,
    exit_code: i32,
    resolved: &'a Scenario,
    #[serde(flatten)]
    results: &'a Results,
    emulator: &'a EmuReport,
}

/// results.json of an emulator run with several BSSs: each BSS's results under its
/// name.
#[derive(Serialize)]
struct EmuBssJson<'a> {
    txop_version: &'a str,
    scenario: &'a str,
    mode: &'a str,
    command: Vec<String>,
    exit_code: i32,
    bss: Vec<BssJson<'a>>,
}

#[derive(Serialize)]
struct BssJson<'a> {
    name: &'a str,
    channel: u16,
    resolved: &'a Scenario,
    #[serde(flatten)]
    results: &'a Results,
    emulator: &'a EmuReport,
}

/// `--cc` values: `NAME` for every node, `NODE=NAME` for one (`NODE` as `--in`
/// takes it).
fn congestion_controls(
    values: &[String],
    plan: &txop_emu::addr::Plan,
) -> Result<txop_emu::CongestionControls, UserError> {
    let mut ccs = txop_emu::CongestionControls::default();
    for v in values {
        match v.split_once('=') {
            Some((node, cc)) => {
                let site = plan
                    .parse(node)
                    .map_err(|e| UserError(format!("--cc {v}: {e}")))?;
                ccs.sites.push((site, cc.to_string()));
            }
            None => ccs.every = Some(v.clone()),
        }
    }
    Ok(ccs)
}

/// The summary printed on stderr after the command's output (and summary.txt).
fn summary(name: &str, r: &Results, e: &EmuReport) -> String {
    let sim = report::summary(name, r);
    // The table is the simulator's; its first line speaks of simulated time.
    let table = sim.split_once('\n').map_or("", |(_, rest)| rest);
    format!(
        "{name}: {} station(s), {:.1} s emulated in real time, seed {}\n{table}{}",
        r.stations.len(),
        r.duration_s,
        r.seed,
        txop_emu::results::emu_summary(e)
    )
}

pub fn main(args: EmuArgs) -> Result<(), UserError> {
    if let Some(EmuAction::Exec { id, node, command }) = args.action {
        let run = txop_emu::emulator::find_run(id).map_err(UserError)?;
        return txop_emu::emulator::exec_in(run, &node, &command).map_err(UserError);
    }
    if args.cleanup {
        netns::check_privileges().map_err(UserError)?;
        netns::protect_root_namespace().map_err(UserError)?;
        let removed = netns::cleanup_leftovers();
        if !removed.errors.is_empty() {
            return Err(UserError(format!(
                "txop emu --cleanup: {}",
                removed.errors.join("; ")
            )));
        }
        if !args.quiet {
            match removed.runs.is_empty() {
                true => println!("txop emu: nothing to clean up"),
                false => println!("txop emu: {}", leftovers_line(&removed)),
            }
        }
        return Ok(());
    }
    let Some(spec) = args.scenario.as_deref() else {
        return Err(UserError(
            "txop emu: give a scenario (and `-- COMMAND…` or --shell); see `txop emu --help`"
                .into(),
        ));
    };
    if args.command.is_empty() && !args.shell {
        return Err(UserError(
            "txop emu: nothing to run: give `-- COMMAND…` or --shell".into(),
        ));
    }
    if args.shell && !args.command.is_empty() {
        return Err(UserError("txop emu: --shell takes no command".into()));
    }
    if args.pcap.pcap && args.output.is_none() {
        return Err(UserError(
            "--pcap writes air.pcapng into the results directory: give -o DIR".into(),
        ));
    }
    let plan = txop::run::plan(spec, &parse_sets(&args.set)?, args.seed).map_err(UserError)?;
    let capture = plan.capture(&args.pcap.options()).map_err(UserError)?;
    let (scenario, mut emu_cfg, name, bsss) = match plan {
        Plan::Single(p) => {
            let p = *p;
            (p.scenario, emulated::single(p.cfg), p.name, None)
        }
        Plan::Bsss(p) => {
            let cfg = emulated::bsss(&p);
            let p = *p;
            (p.scenario, cfg, p.name, Some(p.bsss))
        }
    };
    let site = emu_cfg
        .plan()
        .parse(&args.node)
        .map_err(|e| UserError(format!("--in {e}")))?;
    emu_cfg.congestion_control = congestion_controls(&args.cc, &emu_cfg.plan())?;
    let max_bytes = capture
        .as_ref()
        .and_then(|c| c.first())
        .map_or(0, |c| c.max_bytes);
    emu_cfg.capture_each(capture.unwrap_or_default());
    if let Some(dir) = &args.output {
        refuse_existing(dir, args.force)?;
    }
    let program = if args.shell {
        Program::Shell { site }
    } else {
        Program::Command {
            site,
            argv: args.command.clone(),
            keep_log: args.output.is_some(),
        }
    };
    let (shell, quiet) = (args.shell, args.quiet);
    emu_cfg.loop_options.spin = std::time::Duration::from_micros(args.spin_us);
    emu_cfg.loop_options.realtime_priority = args.rt_priority;
    // Everything txop says while the command runs goes to stderr: stdout is the
    // command's.
    let outcome = txop_emu::emulate(emu_cfg, program, &mut |net| {
        let removed = net.leftovers();
        for e in &removed.errors {
            eprintln!("txop emu: warning: leftovers of a dead run: {e}");
        }
        if !quiet && !removed.runs.is_empty() {
            eprintln!("txop emu: {}", leftovers_line(removed));
        }
        if shell && !quiet {
            eprint!("{}", txop_emu::emulator::describe_network(net));
        }
    })
    .map_err(UserError)?;
    let mut text = match &bsss {
        None => summary(&name, &outcome.bsss[0].results, &outcome.bsss[0].report),
        Some(bsss) => bsss
            .iter()
            .zip(&outcome.bsss)
            .map(|(b, o)| summary(&format!("{name}: {}", b.name), &o.results, &o.report))
            .collect::<Vec<_>>()
            .join("\n"),
    };
    text.push_str(&txop_emu::emulator::congestion_control_line(
        &outcome.congestion_control,
    ));
    let code = outcome.exit_code();
    // Each capture with its file name: air.pcapng for one BSS, air-<name>.pcapng each
    // with several (as `txop run --pcap` names them).
    let air: Vec<(String, &(Vec<u8>, txop_capture::CaptureStats))> = outcome
        .bsss
        .iter()
        .enumerate()
        .filter_map(|(k, o)| {
            let file = match &bsss {
                None => txop::pcap::PCAP_FILE.to_string(),
                Some(bsss) => txop::pcap::bss_file(&bsss[k].name),
            };
            Some((file, o.capture.as_ref()?))
        })
        .collect();
    if let Some(dir) = &args.output {
        let command = args
            .command
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let encoded = match &bsss {
            None => serde_json::to_vec_pretty(&EmuJson {
                txop_version: env!("CARGO_PKG_VERSION"),
                scenario: &name,
                mode: "emulation",
                command,
                exit_code: code,
                resolved: &scenario,
                results: &outcome.bsss[0].results,
                emulator: &outcome.bsss[0].report,
            }),
            Some(bsss) => serde_json::to_vec_pretty(&EmuBssJson {
                txop_version: env!("CARGO_PKG_VERSION"),
                scenario: &name,
                mode: "emulation",
                command,
                exit_code: code,
                bss: bsss
                    .iter()
                    .zip(&outcome.bsss)
                    .map(|(b, o)| BssJson {
                        name: &b.name,
                        channel: b.channel,
                        resolved: &b.scenario,
                        results: &o.results,
                        emulator: &o.report,
                    })
                    .collect(),
            }),
        };
        let json_bytes = encoded.map_err(|e| UserError(format!("cannot encode results: {e}")))?;
        let mut files = vec![
            ("summary.txt".to_string(), text.clone().into_bytes()),
            ("results.json".to_string(), json_bytes),
        ];
        if let Some(b) = &outcome.command_log {
            files.push(("command.log".to_string(), b.clone()));
        }
        for (file, (bytes, _)) in &air {
            files.push((file.clone(), bytes.clone()));
        }
        write_results(dir, args.force, &files)?;
    }
    // As `txop run --pcap` says it: what each file holds, and what its bound left out
    // (a warning, also with --quiet); with several BSSs, whose capture it is.
    for (file, (_, stats)) in &air {
        for line in txop::pcap::stderr_lines(stats, max_bytes, quiet) {
            match bsss.is_some() {
                true => eprintln!("{file}: {line}"),
                false => eprintln!("{line}"),
            }
        }
    }
    if !quiet {
        eprint!("\n{text}");
        if let Some(sig) = outcome.stopped_by {
            eprintln!("txop emu: stopped by signal {sig}; everything removed");
        }
    }
    if code != 0 {
        use std::io::Write;
        let _ = std::io::stdout().flush();
        std::process::exit(code);
    }
    Ok(())
}

/// One line naming what a cleanup removed.
fn leftovers_line(removed: &netns::Removed) -> String {
    let runs: Vec<String> = removed.runs.iter().map(|r| r.to_string()).collect();
    if removed.namespaces.is_empty() {
        format!(
            "removed the lock file(s) of dead run(s) {}",
            runs.join(", ")
        )
    } else {
        format!(
            "removed what dead run(s) {} left: {}",
            runs.join(", "),
            removed.namespaces.join(", ")
        )
    }
}
