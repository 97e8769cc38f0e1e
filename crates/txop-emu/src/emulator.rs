//! One emulator run from start to finish: signals, namespaces and TUN devices, the
//! engine, the command (or shell) in its namespace, the real-time loop until the
//! command exits or a stop signal arrives, then the results and the teardown.
//!
//! Also `exec` (a command in a namespace of a running emulator) and `cleanup`.

use crate::addr::{BssPlan, Endpoint, Plan, Site};
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
use txop_core::world::{BssId, World};
use txop_results::Results;

/// What to run inside the emulated network.
#[derive(Clone, Debug)]
pub enum Program {
    /// A command (argv) in `site`'s namespace. Its stdout and stderr are this
    /// process's; with `keep_log`, they are also copied, as they come, into
    /// [`Outcome::command_log`].
    Command {
        site: Site,
        argv: Vec<OsString>,
        keep_log: bool,
    },
    /// An interactive shell (`$SHELL`, else /bin/bash) in `site`'s namespace
    /// (Ctrl-C goes to the shell, not to the emulator).
    Shell { site: Site },
}

impl Program {
    /// The site, the argv and whether to keep a log.
    fn parts(&self) -> (Site, Vec<OsString>, bool) {
        match self {
            Program::Command {
                site,
                argv,
                keep_log,
            } => (*site, argv.clone(), *keep_log),
            Program::Shell { site } => {
                let sh = std::env::var_os("SHELL").unwrap_or_else(|| "/bin/bash".into());
                (*site, vec![sh], false)
            }
        }
    }
}

/// A BSS of an emulated world besides the first (`[[bss]]`).
#[derive(Clone, Debug)]
pub struct EmuBss {
    /// Its name (`NAME.sta1`).
    pub name: String,
    pub network: NetworkConfig,
    /// Its cell's seed.
    pub seed: u64,
    /// Its 20 MHz channel: BSSs on one channel share the air.
    pub channel: u16,
    /// Capture its air within these bounds (`txop emu --pcap`); `None`: no capture.
    pub capture: Option<txop_capture::CaptureConfig>,
}

/// With several BSSs: the first's name and channel, and the others.
#[derive(Clone, Debug)]
pub struct EmuWorld {
    pub name: String,
    pub channel: u16,
    pub others: Vec<EmuBss>,
}

/// An emulator run's configuration.
#[derive(Clone, Debug)]
pub struct EmuConfig {
    /// The modelled network: the cell, the wired link, the stations' host buses (the
    /// first BSS's, with several).
    pub network: NetworkConfig,
    /// The cell's seed.
    pub seed: u64,
    /// With several BSSs (`[[bss]]`): the others, and the names; `None`: one BSS.
    pub world: Option<EmuWorld>,
    /// Packets the engine holds at most.
    pub slab_packets: usize,
    pub loop_options: LoopOptions,
    /// Capture the (first BSS's) air within these bounds (`txop emu --pcap`); `None`:
    /// no capture.
    pub capture: Option<txop_capture::CaptureConfig>,
    /// The TCP congestion control to set in the namespaces (`txop emu --cc`); the
    /// others keep the machine's.
    pub congestion_control: CongestionControls,
}

/// TCP congestion controls for the namespaces (`net.ipv4.tcp_congestion_control` in
/// each, [`netns::CC_SYSCTL`]): one for every namespace, and one per site, which wins.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CongestionControls {
    pub every: Option<String>,
    pub sites: Vec<(Site, String)>,
}

impl CongestionControls {
    /// What to set in `site`'s namespace; `None`: leave the machine's.
    pub fn of(&self, site: Site) -> Option<&str> {
        (self.sites.iter().rev())
            .find(|(s, _)| *s == site)
            .map(|(_, cc)| cc.as_str())
            .or(self.every.as_deref())
    }
}

impl EmuConfig {
    /// Capture each BSS's air within `captures`' bounds (one per BSS, in order).
    pub fn capture_each(&mut self, captures: Vec<txop_capture::CaptureConfig>) {
        let mut captures = captures.into_iter();
        self.capture = captures.next();
        for (b, c) in self
            .world
            .iter_mut()
            .flat_map(|w| &mut w.others)
            .zip(captures)
        {
            b.capture = Some(c);
        }
    }

    /// Its BSSs as the address plan and the names see them.
    pub fn plan(&self) -> Plan {
        world_of(self).0
    }

    /// A run of `network` with the default slab and loop options.
    pub fn new(network: NetworkConfig, seed: u64) -> EmuConfig {
        EmuConfig {
            network,
            seed,
            world: None,
            slab_packets: DEFAULT_SLAB_PACKETS,
            loop_options: LoopOptions::default(),
            capture: None,
            congestion_control: CongestionControls::default(),
        }
    }
}

/// How the run ended and what it measured.
pub struct Outcome {
    /// The command's exit status (`None` if it could not be waited for).
    pub status: Option<ExitStatus>,
    /// The stop signal that ended the run early, if one did.
    pub stopped_by: Option<i32>,
    /// Each BSS's results, the emulator's figures and its capture, in order (one for a
    /// lone BSS).
    pub bsss: Vec<BssOutcome>,
    /// What the command wrote on stdout and stderr, interleaved as it came (with
    /// `keep_log`).
    pub command_log: Option<Vec<u8>>,
    /// Each node's TCP congestion control as its namespace had it when the command
    /// started (name, `net.ipv4.tcp_congestion_control`), in the order of the plan.
    pub congestion_control: Vec<(String, String)>,
}

/// What one BSS of a run measured.
pub struct BssOutcome {
    pub results: Results,
    pub report: EmuReport,
    /// The capture's pcapng file and what it holds (with [`EmuConfig::capture`],
    /// [`EmuBss::capture`]).
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
/// `txop emu exec` finds the run), which site it is in, every site's address, and the
/// txop executable. `TXOP_SERVER` and `TXOP_STA<n>` are the program's own BSS's; with
/// several BSSs, `TXOP_<NAME>_SERVER` and `TXOP_<NAME>_STA<n>` are BSS `NAME`'s (its
/// name in capitals, `-` as `_`).
pub fn program_env(run_id: u32, plan: &Plan, here: Site) -> Vec<(String, String)> {
    let mut env = vec![
        ("TXOP_EMU_ID".to_string(), run_id.to_string()),
        ("TXOP_NODE".to_string(), plan.name(here)),
    ];
    let mut addresses = |prefix: &str, bss: BssId, stations: u16| {
        let server = Site::new(bss, Endpoint::Server);
        env.push((format!("{prefix}SERVER"), server.ipv4().to_string()));
        env.push((format!("{prefix}SERVER6"), server.ipv6().to_string()));
        for n in 1..=stations {
            let s = Site::new(bss, Endpoint::Station(n));
            env.push((format!("{prefix}STA{n}"), s.ipv4().to_string()));
            env.push((format!("{prefix}STA{n}_6"), s.ipv6().to_string()));
        }
    };
    let own = plan.bsss.get(here.bss.index()).map_or(0, |b| b.stations);
    addresses("TXOP_", here.bss, own);
    for (k, b) in plan.bsss.iter().enumerate() {
        if let Some(name) = &b.name {
            let prefix = format!("TXOP_{}_", name.to_uppercase().replace('-', "_"));
            addresses(&prefix, BssId(k as u16), b.stations);
        }
    }
    if let Ok(exe) = std::env::current_exe() {
        env.push(("TXOP_EXE".to_string(), exe.display().to_string()));
    }
    env
}

/// A table of the namespaces and addresses (printed by `--shell`).
pub fn describe_network(net: &Network) -> String {
    let plan = net.plan();
    let stations: u16 = plan.bsss.iter().map(|b| b.stations).sum();
    let bsss = match plan.bsss.len() {
        1 => String::new(),
        n => format!("{n} BSSs, "),
    };
    let mut s = format!(
        "txop emulator {}: {bsss}{stations} station(s); run `txop emu exec NODE -- CMD` to use another namespace\n",
        net.run_id(),
    );
    // Names and namespaces are longer with several BSSs (`flat2.sta1`).
    let (name_w, ns_w) = if bsss.is_empty() { (8, 22) } else { (16, 34) };
    for (&site, cc) in net.sites().iter().zip(net.congestion_controls()) {
        s.push_str(&format!(
            "  {:<name_w$} {:<ns_w$} {:<16} {:<24} TCP {cc}\n",
            plan.name(site),
            net.namespace(site).unwrap_or(""),
            site.ipv4(),
            site.ipv6()
        ));
    }
    s
}

/// The line stating each node's TCP congestion control (`txop emu`'s summary): the
/// kernel's own TCP runs in the namespaces, with the machine's default unless `--cc`
/// set one, so the same scenario can behave differently on another machine.
pub fn congestion_control_line(ccs: &[(String, String)]) -> String {
    let nodes: Vec<String> = ccs.iter().map(|(n, cc)| format!("{n} {cc}")).collect();
    format!(
        "TCP congestion control ({}; set with --cc): {}\n",
        netns::CC_SYSCTL,
        nodes.join(", ")
    )
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
    let (site, argv, keep_log) = program.parts();
    let shell = matches!(program, Program::Shell { .. });
    let name = net.plan().name(site);
    let ns = net
        .namespace(site)
        .ok_or_else(|| format!("no {name} in this emulator"))?;
    let mut cmd = nsexec::command_in(ns, &argv)?;
    cmd.envs(program_env(net.run_id(), net.plan(), site));
    if shell {
        cmd.env("PS1", format!("[txop {name}] \\w\\$ "));
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
    let (plan, bsss) = world_of(&cfg);
    let world_stations = plan.stations();
    let mut engines = Vec::with_capacity(bsss.len());
    for (k, (network, seed, channel)) in bsss.into_iter().enumerate() {
        let bss = BssId(k as u16);
        let engine = Engine::in_world(network, seed, cfg.slab_packets, bss, world_stations.clone())
            .map_err(|e| match &plan.bsss[k].name {
                Some(name) => format!("bss {name}: {e}"),
                None => e,
            })?;
        engines.push((engine, channel));
    }
    let mut world = World::new(engines)?;
    let captures = std::iter::once(cfg.capture.clone()).chain(
        cfg.world
            .iter()
            .flat_map(|w| w.others.iter().map(|b| b.capture.clone())),
    );
    for (engine, capture) in world.bsss_mut().iter_mut().zip(captures) {
        if let Some(c) = capture {
            engine
                .capture(c)
                .map_err(|e| format!("cannot start the capture: {e}"))?;
        }
    }
    let mut net = Network::create(&plan, &cfg.congestion_control, &|| {
        signals.stop_signal().is_some()
    })?;
    let congestion_control = net
        .sites()
        .iter()
        .zip(net.congestion_controls())
        .map(|(&site, cc)| (plan.name(site), cc.clone()))
        .collect();
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
        &mut world,
        net.tuns(),
        net.sites(),
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
    let seeds = std::iter::once(cfg.seed).chain(
        cfg.world
            .iter()
            .flat_map(|w| w.others.iter().map(|b| b.seed)),
    );
    let mut bsss = Vec::new();
    for (engine, seed) in world.bsss_mut().iter_mut().zip(seeds) {
        let capture = engine
            .finish_capture()
            .transpose()
            .map_err(|e| format!("cannot write the capture: {e}"))?;
        bsss.push(BssOutcome {
            results: results::results(engine, end, seed, &plan),
            report: results::emu_report(engine, loop_stats, tun_queue_drops),
            capture,
        });
    }
    Ok(Outcome {
        status,
        stopped_by,
        bsss,
        command_log,
        congestion_control,
    })
}

/// The plan of `cfg`'s world (names, stations) and each BSS's network, seed and
/// channel, in order.
#[allow(clippy::type_complexity)]
fn world_of(cfg: &EmuConfig) -> (Plan, Vec<(NetworkConfig, u64, u16)>) {
    let stations = |n: &NetworkConfig| n.cell.stations.len().min(usize::from(u16::MAX)) as u16;
    let Some(w) = &cfg.world else {
        let plan = Plan::lone(stations(&cfg.network));
        return (plan, vec![(cfg.network.clone(), cfg.seed, 0)]);
    };
    let mut plan = vec![BssPlan {
        name: Some(w.name.clone()),
        stations: stations(&cfg.network),
    }];
    let mut bsss = vec![(cfg.network.clone(), cfg.seed, w.channel)];
    for b in &w.others {
        plan.push(BssPlan {
            name: Some(b.name.clone()),
            stations: stations(&b.network),
        });
        bsss.push((b.network.clone(), b.seed, b.channel));
    }
    (Plan { bsss: plan }, bsss)
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

/// Replace this process with `argv` run in the namespace of `node` (`sta1`,
/// `flat2.sta1`: [`Plan::parse`]) of run `run_id`. Returns only if that fails (one
/// line).
pub fn exec_in(run_id: u32, node: &str, argv: &[OsString]) -> Result<(), String> {
    use std::os::unix::process::CommandExt;
    netns::check_privileges()?;
    let names = netns::namespaces_by_run()
        .get(&run_id)
        .cloned()
        .unwrap_or_default();
    let plan = Plan::of_namespaces(&names);
    let site = plan.parse(node)?;
    let ns = plan.namespace(run_id, site);
    if !std::path::Path::new(netns::NETNS_DIR).join(&ns).exists() {
        return Err(format!(
            "emulator {run_id} has no {node} (no namespace {ns})"
        ));
    }
    if argv.is_empty() {
        return Err("no command given (txop emu exec NODE -- COMMAND…)".into());
    }
    let err = nsexec::command_in(&ns, argv)?
        .envs(program_env(run_id, &plan, site))
        .exec();
    Err(nsexec::start_error(argv, &ns, &err))
}
