//! The emulated network's plumbing and its guaranteed teardown.
//!
//! [`Network::create`] makes a server namespace and one namespace per station, each
//! with a TUN device and addresses and no route out, after making txop's range
//! `unreachable` in the root namespace. Everything it creates is removed by
//! [`Network::teardown`] — every process in the namespaces killed first (they survive
//! `ip netns del`), then the TUN devices closed, then the namespaces deleted — which
//! runs on every exit path: normal return, an error (`Drop`), a panic (the guard's
//! `Drop` while unwinding, and a panic hook for panics that do not unwind through
//! it), and SIGINT/SIGTERM/SIGHUP, which [`StopSignals`] turns into a clean stop of the
//! loop. Only SIGKILL escapes: what it leaves is removed when the next run starts (or
//! by `txop emu --cleanup`), which knows the run is dead because its lock
//! ([`crate::runs`]) is free.

use crate::addr::{self, Plan, Site};
use crate::emulator::CongestionControls;
use crate::netns;
use crate::runs::RunLock;
use crate::tun::Tun;
use std::io::Read;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Once};
use std::time::Duration;

/// Namespaces this process created and has not removed yet: what the panic hook
/// removes if a panic does not unwind through [`Network`]'s `Drop`.
static LIVE_NAMESPACES: Mutex<Vec<String>> = Mutex::new(Vec::new());
static PANIC_HOOK: Once = Once::new();

fn live() -> std::sync::MutexGuard<'static, Vec<String>> {
    LIVE_NAMESPACES.lock().unwrap_or_else(|e| e.into_inner())
}

/// Grace period between SIGTERM and SIGKILL for the processes in the namespaces.
pub const KILL_GRACE: Duration = Duration::from_millis(500);

/// Kill the processes in `names` and delete the namespaces; errors as one line.
fn remove_namespaces(names: &[String]) -> Result<(), String> {
    let left = netns::kill_namespace_processes(names, KILL_GRACE);
    let mut errors = Vec::new();
    if !left.is_empty() {
        errors.push(format!("processes {left:?} survived SIGKILL"));
    }
    for n in names {
        if let Err(e) = netns::delete_namespace(n) {
            errors.push(e);
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}

/// Remove what this process registered, whatever state it is in (the panic hook).
fn teardown_registered() {
    let names = std::mem::take(&mut *live());
    if !names.is_empty() {
        let _ = remove_namespaces(&names);
        // The lock itself goes with the process; its file is removed here.
        let _ = std::fs::remove_file(crate::runs::lock_path(std::process::id()));
    }
}

fn install_panic_hook() {
    PANIC_HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            teardown_registered();
            previous(info);
        }));
    });
}

/// SIGINT, SIGTERM, SIGHUP (stop) and SIGCHLD (a child exited), noted in flags and
/// announced on a pipe the run loop polls. Registered before anything is created, so
/// a signal during setup is not lost.
pub struct StopSignals {
    /// The last stop signal received (0: none).
    pub stop: Arc<AtomicUsize>,
    pub child: Arc<AtomicBool>,
    wake_read: UnixStream,
    ids: Vec<signal_hook::SigId>,
}

impl StopSignals {
    pub fn register() -> Result<StopSignals, String> {
        let (wake_read, wake_write) =
            UnixStream::pair().map_err(|e| format!("cannot create a pipe: {e}"))?;
        wake_read
            .set_nonblocking(true)
            .and_then(|_| wake_write.set_nonblocking(true))
            .map_err(|e| format!("cannot set up signal handling: {e}"))?;
        let stop = Arc::new(AtomicUsize::new(0));
        let child = Arc::new(AtomicBool::new(false));
        let mut ids = Vec::new();
        let err = |e: std::io::Error| format!("cannot install signal handlers: {e}");
        use signal_hook::consts::{SIGCHLD, SIGHUP, SIGINT, SIGTERM};
        for sig in [SIGINT, SIGTERM, SIGHUP] {
            ids.push(
                signal_hook::flag::register_usize(sig, stop.clone(), sig as usize).map_err(err)?,
            );
        }
        ids.push(signal_hook::flag::register(SIGCHLD, child.clone()).map_err(err)?);
        for sig in [SIGINT, SIGTERM, SIGHUP, SIGCHLD] {
            let w = wake_write.try_clone().map_err(err)?;
            ids.push(signal_hook::low_level::pipe::register(sig, w).map_err(err)?);
        }
        Ok(StopSignals {
            stop,
            child,
            wake_read,
            ids,
        })
    }

    /// The fd that turns readable when a signal arrived.
    pub fn wake_fd(&self) -> std::os::fd::RawFd {
        use std::os::fd::AsRawFd;
        self.wake_read.as_raw_fd()
    }

    /// Empty the wake-up pipe.
    pub fn drain(&self) {
        let mut buf = [0u8; 64];
        while matches!((&self.wake_read).read(&mut buf), Ok(n) if n > 0) {}
    }

    /// The stop signal received so far, if any.
    pub fn stop_signal(&self) -> Option<i32> {
        match self.stop.load(Ordering::SeqCst) {
            0 => None,
            s => Some(s as i32),
        }
    }

    /// Forget a stop signal (an interactive shell handles Ctrl-C itself).
    pub fn clear_stop(&self) {
        self.stop.store(0, Ordering::SeqCst);
    }

    /// Whether SIGCHLD arrived since the last call.
    pub fn take_child(&self) -> bool {
        self.child.swap(false, Ordering::SeqCst)
    }
}

impl Drop for StopSignals {
    fn drop(&mut self) {
        for id in self.ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}

/// The namespaces and TUN devices of one emulator run. Dropping it tears everything
/// down.
pub struct Network {
    run_id: u32,
    plan: Plan,
    /// Every site ([`Plan::sites`]: BSS by BSS, its server then its stations), and
    /// each one's namespace and TUN device, in the same order.
    sites: Vec<Site>,
    namespaces: Vec<String>,
    tuns: Vec<Tun>,
    /// The run's lock ([`RunLock`]): held from before the first namespace exists until
    /// the last one is deleted, so that other txop processes see this run alive.
    lock: Option<RunLock>,
    /// What dead runs had left, removed before this run started.
    leftovers: netns::Removed,
    torn_down: bool,
    /// Each namespace's TCP congestion control, read back from it once set up.
    congestion_controls: Vec<String>,
}

impl Network {
    /// Check privileges, protect the root namespace, remove what dead runs left
    /// ([`netns::cleanup_leftovers`]), take this run's lock, then create the server's
    /// and stations' namespaces of every BSS of `plan` with their TUN devices.
    /// `cancelled` is polled between namespaces so that a signal during a long setup
    /// stops it. On error everything created so far is removed.
    /// Each namespace's TCP congestion control is `ccs`' for its site, else the
    /// machine's; [`Network::congestion_controls`] says which it has.
    pub fn create(
        plan: &Plan,
        ccs: &CongestionControls,
        cancelled: &dyn Fn() -> bool,
    ) -> Result<Network, String> {
        for b in &plan.bsss {
            let stations = b.stations;
            if stations == 0 || stations > addr::MAX_STATIONS {
                return Err(format!(
                    "the emulator runs 1 to {} stations per BSS, not {stations}",
                    addr::MAX_STATIONS
                ));
            }
        }
        if plan.bsss.is_empty() || plan.bsss.len() > usize::from(addr::MAX_BSSS) {
            return Err(format!(
                "the emulator runs 1 to {} BSSs, not {}",
                addr::MAX_BSSS,
                plan.bsss.len()
            ));
        }
        netns::check_privileges()?;
        netns::protect_root_namespace()?;
        install_panic_hook();
        let leftovers = netns::cleanup_leftovers();
        let run_id = std::process::id();
        let lock = RunLock::acquire(run_id)?;
        let mut net = Network {
            run_id,
            plan: plan.clone(),
            sites: plan.sites(),
            namespaces: Vec::new(),
            tuns: Vec::new(),
            lock: Some(lock),
            leftovers,
            torn_down: false,
            congestion_controls: Vec::new(),
        };
        for site in net.sites.clone() {
            if cancelled() {
                return Err("interrupted while creating the namespaces".into());
            }
            let ns = plan.namespace(run_id, site);
            // Registered before it exists, so that every exit path removes it.
            live().push(ns.clone());
            net.namespaces.push(ns.clone());
            netns::add_namespace(&ns)?;
            let tun = Tun::create_in(&Path::new(netns::NETNS_DIR).join(&ns), addr::TUN_NAME)
                .map_err(|e| format!("{ns}: cannot create the TUN device: {e}"))?;
            net.tuns.push(tun);
            netns::configure_tun(&ns, site)?;
            if let Some(cc) = ccs.of(site) {
                netns::set_congestion_control(&ns, cc)
                    .map_err(|e| format!("--cc {}={cc}: {e}", plan.name(site)))?;
            }
            net.congestion_controls
                .push(netns::congestion_control(&ns)?);
        }
        Ok(net)
    }

    pub fn run_id(&self) -> u32 {
        self.run_id
    }

    /// Its BSSs, their names and stations.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Every site, in the order of [`Network::namespaces`] and [`Network::tuns`].
    pub fn sites(&self) -> &[Site] {
        &self.sites
    }

    /// The namespace of `site`.
    pub fn namespace(&self, site: Site) -> Option<&str> {
        let i = self.sites.iter().position(|&s| s == site)?;
        self.namespaces.get(i).map(|s| s.as_str())
    }

    pub fn namespaces(&self) -> &[String] {
        &self.namespaces
    }

    /// Each namespace's TCP congestion control (`net.ipv4.tcp_congestion_control`), in
    /// the order of [`Network::sites`].
    pub fn congestion_controls(&self) -> &[String] {
        &self.congestion_controls
    }

    /// What dead runs had left and this run removed before it started.
    pub fn leftovers(&self) -> &netns::Removed {
        &self.leftovers
    }

    /// The TUN devices, in the order of [`Network::sites`].
    pub fn tuns(&self) -> &[Tun] {
        &self.tuns
    }

    /// Kill every process in the namespaces, close the TUN devices, delete the
    /// namespaces. Idempotent.
    pub fn teardown(&mut self) -> Result<(), String> {
        if self.torn_down {
            return Ok(());
        }
        self.torn_down = true;
        let left = netns::kill_namespace_processes(&self.namespaces, KILL_GRACE);
        // Closing the descriptors destroys the (non-persistent) TUN devices.
        self.tuns.clear();
        let result = remove_namespaces(&self.namespaces);
        live().retain(|n| !self.namespaces.contains(n));
        // Released only now: until the namespaces are gone the run is alive.
        self.lock = None;
        match (left.is_empty(), result) {
            (true, r) => r,
            (false, Err(e)) => Err(e),
            (false, Ok(())) => Err(format!("processes {left:?} survived SIGKILL")),
        }
    }
}

impl Drop for Network {
    fn drop(&mut self) {
        if let Err(e) = self.teardown() {
            eprintln!("txop: warning: cleanup: {e}");
        }
    }
}
