//! One emulator run from start to finish: signals, namespaces and TUN devices, the
//! engine, the command (or shell) in its namespace, the real-time loop until the
//! command exits or a stop signal arrives, then the results and the teardown.
//!
//! Also `exec` (a command in a namespace of a running emulator) and `cleanup`.

use crate::addr::{self, Endpoint};
use crate::engine::{Engine, DEFAULT_SLAB_PACKETS};
use crate::netns;
use crate::nsexec;
use crate::results::{self, EmuReport};
use crate::runloop::{self, Clock, LoopOptions};
use crate::session::{Network, StopSignals};
use std::ffi::OsString;
use std::io::{Read, Seek, Write};
use std::process::{Child, ExitStatus, Stdio};
use txop_core::network::NetworkConfig;
use txop_results::Results;

/// What to run inside the emulated network.
#[derive(Clone, Debug)]
pub enum Program {
    /// A command (argv) in `endpoint`'s namespace. Its stdout and stderr are this
    /// process's; with `keep_log`, they are also copied, as they come, into
    /// [`Outcome::command_log`].
    Command {
        endpoint: Endpoint,
        argv: Vec<OsString>,
        keep_log: bool,
    },
    /// An interactive shell (`$SHELL`, else /bin/bash) in `endpoint`'s namespace
    /// (Ctrl-C goes to the shell, not to the emulator).
    Shell { endpoint: Endpoint },
}

impl Program {
    /// The endpoint, the argv and whether to keep a log.
    fn parts(&self) -> (Endpoint, Vec<OsString>, bool) {
        match self {
            Program::Command {
                endpoint,
                argv,
                keep_log,
            } => (*endpoint, argv.clone(), *keep_log),
            Program::Shell { endpoint } => {
                let sh = std::env::var_os("SHELL").unwrap_or_else(|| "/bin/bash".into());
                (*endpoint, vec![sh], false)
            }
        }
    }
}

/// An emulator run's configuration.
#[derive(Clone, Debug)]
pub struct EmuConfig {
    /// The modelled network: the cell, the wired link, the stations' host buses.
    pub network: NetworkConfig,
    /// The cell's seed.
    pub seed: u64,
    /// Packets the engine holds at most.
    pub slab_packets: usize,
    pub loop_options: LoopOptions,
    /// Capture the air within these bounds (`txop emu --pcap`); `None`: no capture.
    pub capture: Option<txop_capture::CaptureConfig>,
}

impl EmuConfig {
    /// A run of `network` with the default slab and loop options.
    pub fn new(network: NetworkConfig, seed: u64) -> EmuConfig {
        EmuConfig {
            network,
            seed,
            slab_packets: DEFAULT_SLAB_PACKETS,
            loop_options: LoopOptions::default(),
            capture: None,
        }
    }
}

/// How the run ended and what it measured.
pub struct Outcome {
    /// The command's exit status (`None` if it could not be waited for).
    pub status: Option<ExitStatus>,
    /// The stop signal that ended the run early, if one did.
    pub stopped_by: Option<i32>,
    pub results: Results,
    pub report: EmuReport,
    /// What the command wrote on stdout and stderr, interleaved as it came (with
    /// `keep_log`).
    pub command_log: Option<Vec<u8>>,
    /// The capture's pcapng file and what it holds (with [`EmuConfig::capture`]).
    pub capture: Option<(Vec<u8>, txop_capture::CaptureStats)>,
}

impl Outcome {
    /// The exit code txop passes on: the command's own; 128 + N if signal N ended
    /// the command (as a shell reports it) or stopped the run.
    pub fn exit_code(&self) -> i32 {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = self.stopped_by {
            return 128 + sig;
        }
        match self.status {
            Some(s) => s.code().unwrap_or_else(|| 128 + s.signal().unwrap_or(0)),
            None => 1,
        }
    }
}

/// The environment every program inside the emulator gets: the run id (so that
/// `txop emu exec` finds the run), which endpoint it is in, every endpoint's address,
/// and the txop executable.
pub fn program_env(run_id: u32, stations: u16, here: Endpoint) -> Vec<(String, String)> {
    let mut env = vec![
        ("TXOP_EMU_ID".to_string(), run_id.to_string()),
        ("TXOP_NODE".to_string(), here.name()),
        (
            "TXOP_SERVER".to_string(),
            Endpoint::Server.ipv4().to_string(),
        ),
        (
            "TXOP_SERVER6".to_string(),
            Endpoint::Server.ipv6().to_string(),
        ),
    ];
    for n in 1..=stations {
        let e = Endpoint::Station(n);
        env.push((format!("TXOP_STA{n}"), e.ipv4().to_string()));
        env.push((format!("TXOP_STA{n}_6"), e.ipv6().to_string()));
    }
    if let Ok(exe) = std::env::current_exe() {
        env.push(("TXOP_EXE".to_string(), exe.display().to_string()));
    }
    env
}

/// A table of the namespaces and addresses (printed by `--shell`).
pub fn describe_network(net: &Network) -> String {
    let mut s = format!(
        "txop emulator {}: {} station(s); run `txop emu exec NODE -- CMD` to use another namespace\n",
        net.run_id(),
        net.stations()
    );
    for i in 0..=net.stations() as usize {
        let e = Endpoint::from_index(i);
        s.push_str(&format!(
            "  {:<8} {:<22} {:<16} {}\n",
            e.name(),
            net.namespace(e).unwrap_or(""),
            e.ipv4(),
            e.ipv6()
        ));
    }
    s
}

/// Copy a child's output stream to ours (the same stream: stdout stays stdout) and to
/// the log.
fn tee(
    mut from: impl Read + Send + 'static,
    to_stderr: bool,
    log: std::fs::File,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut log = log;
        let mut buf = [0u8; 8192];
        while let Ok(n) = from.read(&mut buf) {
            if n == 0 {
                break;
            }
            let _ = if to_stderr {
                std::io::stderr().write_all(&buf[..n])
            } else {
                let mut out = std::io::stdout().lock();
                out.write_all(&buf[..n]).and_then(|_| out.flush())
            };
            let _ = log.write_all(&buf[..n]);
        }
    })
}

/// An unnamed temporary file for the command's log: unlinked as soon as it is
/// created, so nothing is left behind whatever way txop ends (SIGKILL included).
fn anonymous_file() -> Result<std::fs::File, String> {
    let dir = std::env::temp_dir();
    for attempt in 0..100u32 {
        let path = dir.join(format!(
            "txop-emu-{}-{attempt}-{}.log",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos())
        ));
        match std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(f) => {
                let _ = std::fs::remove_file(&path);
                return Ok(f);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(format!("{}: cannot create: {e}", dir.display())),
        }
    }
    Err(format!("{}: cannot create a log file", dir.display()))
}

/// The command started, the threads copying its output, and its log.
struct Started {
    child: Child,
    threads: Vec<std::thread::JoinHandle<()>>,
    log: Option<std::fs::File>,
}

fn spawn(net: &Network, program: &Program) -> Result<Started, String> {
    let (endpoint, argv, keep_log) = program.parts();
    let shell = matches!(program, Program::Shell { .. });
    let ns = net
        .namespace(endpoint)
        .ok_or_else(|| format!("no {} in this cell", endpoint.name()))?;
    let mut cmd = nsexec::command_in(ns, &argv)?;
    cmd.envs(program_env(net.run_id(), net.stations(), endpoint));
    if shell {
        cmd.env("PS1", format!("[txop {}] \\w\\$ ", endpoint.name()));
    }
    let log = if keep_log {
        Some(anonymous_file()?)
    } else {
        None
    };
    if log.is_some() {
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| nsexec::start_error(&argv, ns, &e))?;
    let mut threads = Vec::new();
    if let Some(f) = &log {
        let clone = || f.try_clone().map_err(|e| format!("log file: {e}"));
        if let Some(out) = child.stdout.take() {
            threads.push(tee(out, false, clone()?));
        }
        if let Some(err) = child.stderr.take() {
            threads.push(tee(err, true, clone()?));
        }
    }
    Ok(Started {
        child,
        threads,
        log,
    })
}

/// Run `program` inside an emulated `cfg` cell; `on_ready` is called once the
/// network is up, before the program starts. Everything is torn down before this
/// returns, whatever happens.
pub fn emulate(
    cfg: EmuConfig,
    program: Program,
    on_ready: &mut dyn FnMut(&Network),
) -> Result<Outcome, String> {
    // A command that cannot run is refused before anything is created.
    if let Some(program) = program.parts().1.first() {
        nsexec::resolve_program(program)?;
    }
    let signals = StopSignals::register()?;
    let stations = cfg.network.cell.stations.len() as u16;
    let mut engine = Engine::new(cfg.network, cfg.seed, cfg.slab_packets)?;
    if let Some(c) = cfg.capture {
        engine
            .capture(c)
            .map_err(|e| format!("cannot start the capture: {e}"))?;
    }
    let mut net = Network::create(stations, &|| signals.stop_signal().is_some())?;
    on_ready(&net);
    let Started {
        mut child,
        threads,
        log,
    } = spawn(&net, &program)?;
    let shell = matches!(program, Program::Shell { .. });
    let mut status: Option<ExitStatus> = None;
    let mut stopped_by = None;
    let clock = Clock::start();
    // Fault injection for the cleanup tests: a panic inside the running loop.
    let inject_panic = std::env::var_os("TXOP_EMU_FAULT").is_some_and(|v| v == "panic");
    let mut control = || {
        if inject_panic {
            std::thread::sleep(std::time::Duration::from_millis(300));
            panic!("TXOP_EMU_FAULT=panic: a panic injected in the emulator's loop");
        }
        signals.drain();
        signals.take_child();
        if let Some(sig) = signals.stop_signal() {
            if shell && sig == libc::SIGINT {
                signals.clear_stop();
            } else {
                stopped_by = Some(sig);
                return true;
            }
        }
        match child.try_wait() {
            Ok(Some(s)) => {
                status = Some(s);
                true
            }
            Ok(None) => false,
            Err(_) => true,
        }
    };
    let loop_result = runloop::run(
        &mut engine,
        net.tuns(),
        signals.wake_fd(),
        &mut control,
        cfg.loop_options,
        clock,
    );
    let end = clock.now();
    let tun_queue_drops = net
        .namespaces()
        .iter()
        .filter_map(|ns| netns::tun_tx_dropped(ns))
        .sum();
    // Everything still running in the namespaces (the command, if a signal ended the
    // run; daemons it started) is killed before the namespaces go.
    let teardown = net.teardown();
    if status.is_none() {
        status = child.wait().ok();
    }
    for t in threads {
        let _ = t.join();
    }
    let loop_stats = loop_result.map_err(|e| format!("the emulator's loop failed: {e}"))?;
    teardown?;
    let command_log = match log {
        Some(mut f) => {
            let mut bytes = Vec::new();
            f.rewind()
                .and_then(|_| f.read_to_end(&mut bytes))
                .map_err(|e| format!("cannot read back the command's log: {e}"))?;
            Some(bytes)
        }
        None => None,
    };
    let capture = engine
        .finish_capture()
        .transpose()
        .map_err(|e| format!("cannot write the capture: {e}"))?;
    Ok(Outcome {
        capture,
        status,
        stopped_by,
        results: results::results(&engine, end, cfg.seed),
        report: results::emu_report(&engine, loop_stats, tun_queue_drops),
        command_log,
    })
}

/// The ids as a list for a message: `12, 345`.
fn id_list(ids: &[u32]) -> String {
    ids.iter()
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The run a `txop emu exec` means: `explicit` (`--id`), else `TXOP_EMU_ID` from the
/// environment (set for every program inside an emulator), else the only live run.
/// Several live runs and no id, no live run, or an id that names no live run: an
/// error (one line) rather than a guess.
pub fn find_run(explicit: Option<u32>) -> Result<u32, String> {
    let inherited = std::env::var("TXOP_EMU_ID").ok();
    let chosen = match (explicit, &inherited) {
        (Some(id), _) => Some((id, format!("--id {id}"))),
        (None, Some(v)) => Some((
            v.parse()
                .map_err(|_| format!("TXOP_EMU_ID={v}: not an emulator id"))?,
            format!("TXOP_EMU_ID={v} (from the environment)"),
        )),
        (None, None) => None,
    };
    let live = netns::live_runs();
    if let Some((id, how)) = chosen {
        return if live.contains(&id) {
            Ok(id)
        } else if live.is_empty() {
            Err(format!("{how}: no such emulator; none is running"))
        } else {
            Err(format!(
                "{how}: no such emulator; running: {}",
                id_list(&live)
            ))
        };
    }
    match live.as_slice() {
        [id] => Ok(*id),
        [] => Err("no txop emulator is running (start one with `txop emu SCENARIO -- …`)".into()),
        many => Err(format!(
            "{} txop emulators are running ({}): choose one with --id",
            many.len(),
            id_list(many)
        )),
    }
}

/// Replace this process with `argv` run in `endpoint`'s namespace of run `run_id`.
/// Returns only if that fails (one line).
pub fn exec_in(run_id: u32, endpoint: Endpoint, argv: &[OsString]) -> Result<(), String> {
    use std::os::unix::process::CommandExt;
    netns::check_privileges()?;
    let ns = addr::namespace(run_id, endpoint);
    if !std::path::Path::new(netns::NETNS_DIR).join(&ns).exists() {
        return Err(format!(
            "emulator {run_id} has no {} (no namespace {ns})",
            endpoint.name()
        ));
    }
    if argv.is_empty() {
        return Err("no command given (txop emu exec NODE -- COMMAND…)".into());
    }
    let stations = netns::namespaces_by_run()
        .get(&run_id)
        .map_or(0, |names| names.len().saturating_sub(1)) as u16;
    let err = nsexec::command_in(&ns, argv)?
        .envs(program_env(run_id, stations, endpoint))
        .exec();
    Err(nsexec::start_error(argv, &ns, &err))
}
