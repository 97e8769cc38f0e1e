//! Network namespaces and routes, through iproute2's `ip` (the tool every Linux with
//! namespaces has): creating and deleting txop's namespaces, configuring the TUN device
//! inside each, the `unreachable` routes that keep txop's range off the real network in
//! the root namespace, and finding and killing every process left in a namespace
//! (processes survive `ip netns del`: the namespace lives on as long as one of them
//! does).

use crate::addr::{self, Site};
use crate::runs;
use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Where `ip netns add` bind-mounts named namespaces.
pub const NETNS_DIR: &str = "/run/netns";

/// Linux capability numbers (`include/uapi/linux/capability.h`).
const CAP_NET_ADMIN: u32 = 12;
const CAP_SYS_ADMIN: u32 = 21;

/// Check that this process can create namespaces and TUN devices: one line saying
/// what is missing.
pub fn check_privileges() -> Result<(), String> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let cap_eff = status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        .unwrap_or(0);
    let has = |cap: u32| cap_eff & (1 << cap) != 0;
    if !(has(CAP_NET_ADMIN) && has(CAP_SYS_ADMIN)) {
        return Err(
            "txop emu needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN) to create network \
             namespaces and TUN devices: run it with sudo"
                .into(),
        );
    }
    if !Path::new("/dev/net/tun").exists() {
        return Err(
            "txop emu needs /dev/net/tun (the TUN driver): load it with `modprobe tun`".into(),
        );
    }
    match Command::new("ip")
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
    {
        Ok(s) if s.success() => Ok(()),
        _ => {
            Err("txop emu needs iproute2's `ip` command (Debian: apt-get install iproute2)".into())
        }
    }
}

/// Run `ip ARGS`; on failure, its own error message.
pub fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run `ip`: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

fn ip_output(args: &[&str]) -> Result<String, String> {
    let out = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run `ip`: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Make txop's ranges `unreachable` in the root namespace (idempotent), after checking
/// that nothing on this machine uses them: a client started in the wrong namespace,
/// or after the emulator exited, then fails at once ("No route to host") instead of
/// sending anything out of a real interface. The routes are left in place on exit.
pub fn protect_root_namespace() -> Result<(), String> {
    for (family, net) in [("-4", addr::NET4), ("-6", addr::NET6)] {
        let used = ip_output(&[family, "-o", "addr", "show", "to", net])?;
        if let Some(line) = used.lines().find(|l| !l.trim().is_empty()) {
            return Err(format!(
                "txop's address range {net} is already used on this machine ({}); \
                 txop emu will not share it",
                line.split_whitespace()
                    .take(4)
                    .collect::<Vec<_>>()
                    .join(" ")
            ));
        }
        // Any route inside the range other than txop's own would win over it
        // (longest prefix match).
        let routes = ip_output(&[family, "route", "show", "root", net, "table", "all"])?;
        for r in routes.lines().filter(|l| !l.trim().is_empty()) {
            let ours =
                r.starts_with("unreachable ") && r.contains(net.split('/').next().unwrap_or(net));
            if !ours {
                return Err(format!(
                    "a route into txop's address range {net} exists on this machine ({}); \
                     txop emu will not share the range",
                    r.trim()
                ));
            }
        }
        ip(&[family, "route", "replace", "unreachable", net])?;
    }
    Ok(())
}

/// Whether the root namespace currently refuses txop's range (both families).
pub fn root_namespace_protected() -> bool {
    [("-4", addr::NET4), ("-6", addr::NET6)]
        .iter()
        .all(|(family, net)| {
            ip_output(&[family, "route", "show", "exact", net])
                .is_ok_and(|r| r.trim_start().starts_with("unreachable"))
        })
}

/// Create the named namespace with its loopback up.
pub fn add_namespace(name: &str) -> Result<(), String> {
    ip(&["netns", "add", name])?;
    ip(&["-n", name, "link", "set", "lo", "up"])
}

/// Give the TUN device in `ns` its MTU, addresses (the whole range, so the connected
/// route covers every cell address) and bring it up. No other route is added: there
/// is no default route, nothing outside txop's range is reachable from inside.
pub fn configure_tun(ns: &str, endpoint: Site) -> Result<(), String> {
    let dev = addr::TUN_NAME;
    let mtu = addr::MTU_BYTES.to_string();
    ip(&["-n", ns, "link", "set", dev, "mtu", &mtu, "up"])?;
    let v4 = format!("{}/{}", endpoint.ipv4(), addr::PREFIX4);
    ip(&["-n", ns, "addr", "add", &v4, "dev", dev])?;
    let v6 = format!("{}/{}", endpoint.ipv6(), addr::PREFIX6);
    // A TUN device is point-to-point with no link layer: no neighbour to detect.
    ip(&["-n", ns, "addr", "add", &v6, "dev", dev, "nodad"])
}

/// The sysctl naming a network namespace's default TCP congestion control: what a
/// connection opened in it uses unless the program chooses (`TCP_CONGESTION`,
/// `iperf3 -C`). Per namespace since Linux 4.15; a new namespace starts with the root
/// namespace's.
pub const CC_SYSCTL: &str = "net.ipv4.tcp_congestion_control";

/// Run `sysctl ARGS` inside `ns` (`ip netns exec`); its output, or its own error.
fn sysctl_in(ns: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new("ip")
        .args(["netns", "exec", ns, "sysctl"])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run `ip netns exec … sysctl`: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

/// The TCP congestion control new connections in `ns` use ([`CC_SYSCTL`]).
pub fn congestion_control(ns: &str) -> Result<String, String> {
    sysctl_in(ns, &["-n", CC_SYSCTL]).map_err(|e| format!("{ns}: {CC_SYSCTL}: {e}"))
}

/// Make `name` the TCP congestion control of `ns` ([`CC_SYSCTL`]); the setting goes
/// with the namespace. A namespace other than the root one may take only the root
/// namespace's `tcp_allowed_congestion_control` (`tcp_set_default_congestion_control`:
/// `-EPERM` for a restricted one); the emulator does not change that host-wide list,
/// and on failure says what it holds and how to extend it.
pub fn set_congestion_control(ns: &str, name: &str) -> Result<(), String> {
    let valid = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if !valid {
        return Err(format!("`{name}` is not a congestion control's name"));
    }
    sysctl_in(ns, &["-q", "-w", &format!("{CC_SYSCTL}={name}")])
        .map(|_| ())
        .map_err(|_| {
            let read = |what: &str| {
                std::fs::read_to_string(format!("/proc/sys/net/ipv4/tcp_{what}_congestion_control"))
                    .unwrap_or_default()
                    .trim()
                    .to_string()
            };
            let allowed = read("allowed");
            format!(
                "cannot set `{name}`: a namespace takes only the host's \
                 net.ipv4.tcp_allowed_congestion_control ({allowed}; available: {}); \
                 allow it with `sysctl -w net.ipv4.tcp_allowed_congestion_control=\"{allowed} {name}\"`",
                read("available")
            )
        })
}

/// Packets the TUN device in `ns` dropped on its way to the emulator because its
/// queue (txqueuelen) was full: the emulator did not read fast enough.
pub fn tun_tx_dropped(ns: &str) -> Option<u64> {
    let json = ip_output(&["-j", "-s", "-n", ns, "link", "show", "dev", addr::TUN_NAME]).ok()?;
    let v: serde_json::Value = serde_json::from_str(&json).ok()?;
    v.get(0)?
        .get("stats64")?
        .get("tx")?
        .get("dropped")?
        .as_u64()
}

/// The txop namespaces that exist now (names starting with [`addr::NS_PREFIX`]).
pub fn txop_namespaces() -> Vec<String> {
    let Ok(dir) = std::fs::read_dir(NETNS_DIR) else {
        return Vec::new();
    };
    let mut v: Vec<String> = dir
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.starts_with(addr::NS_PREFIX))
        .collect();
    v.sort();
    v
}

/// (device, inode) identifying a namespace.
fn ns_id(path: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// The processes whose network namespace is `name` (like `ip netns pids`). Zombies
/// have left their namespaces and are not listed.
pub fn namespace_pids(name: &str) -> Vec<i32> {
    let Some(id) = ns_id(&Path::new(NETNS_DIR).join(name)) else {
        return Vec::new();
    };
    let Ok(proc_dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    proc_dir
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| ns_id(Path::new(&format!("/proc/{pid}/ns/net"))) == Some(id))
        .collect()
}

fn signal_all(pids: &[i32], sig: libc::c_int) {
    for &pid in pids {
        // SAFETY: kill(2) with a pid and a signal number; no memory is involved.
        unsafe {
            libc::kill(pid, sig);
        }
    }
}

/// Kill every process in the namespaces `names`: SIGTERM, up to `grace` for them to
/// exit, then SIGKILL (and up to 2 s more for the kernel to finish them). Returns the
/// pids that were still there at the end (none, normally).
pub fn kill_namespace_processes(names: &[String], grace: Duration) -> Vec<i32> {
    let all = || -> Vec<i32> { names.iter().flat_map(|n| namespace_pids(n)).collect() };
    let me = std::process::id() as i32;
    let wait_gone = |limit: Duration| -> Vec<i32> {
        let start = Instant::now();
        loop {
            let left: Vec<i32> = all().into_iter().filter(|&p| p != me).collect();
            if left.is_empty() || start.elapsed() >= limit {
                return left;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    };
    let pids: Vec<i32> = all().into_iter().filter(|&p| p != me).collect();
    if pids.is_empty() {
        return pids;
    }
    signal_all(&pids, libc::SIGTERM);
    let left = wait_gone(grace);
    if left.is_empty() {
        return left;
    }
    signal_all(&left, libc::SIGKILL);
    wait_gone(Duration::from_secs(2))
}

/// Delete a namespace (its processes must be gone first). A namespace that does not
/// exist, or that another cleaner deleted meanwhile, is not an error.
pub fn delete_namespace(name: &str) -> Result<(), String> {
    let path = Path::new(NETNS_DIR).join(name);
    if !path.exists() {
        return Ok(());
    }
    match ip(&["netns", "del", name]) {
        Err(_) if !path.exists() => Ok(()),
        r => r,
    }
}

/// txop's namespaces (names [`addr::parse_namespace`] reads back; nobody else's,
/// whatever their name) grouped by run id.
pub fn namespaces_by_run() -> BTreeMap<u32, Vec<String>> {
    let mut runs: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    for n in txop_namespaces() {
        if let Some(parsed) = addr::parse_namespace(&n) {
            runs.entry(parsed.run_id).or_default().push(n);
        }
    }
    runs
}

/// The emulator runs alive now (by their locks, [`runs::run_alive`]), sorted.
pub fn live_runs() -> Vec<u32> {
    let mut ids: BTreeSet<u32> = namespaces_by_run().into_keys().collect();
    ids.extend(runs::lock_file_ids());
    ids.into_iter().filter(|&id| runs::run_alive(id)).collect()
}

/// What [`cleanup_leftovers`] removed, and what it could not.
#[derive(Debug, Default)]
pub struct Removed {
    /// The dead runs whose leftovers (namespaces, processes, lock file) were removed.
    pub runs: Vec<u32>,
    pub namespaces: Vec<String>,
    /// One line per namespace that could not be removed.
    pub errors: Vec<String>,
}

/// Remove what dead emulator runs (SIGKILLed ones) left behind: the processes still
/// running in their namespaces, the namespaces, their lock files. A run is dead when
/// its lock is free ([`runs::claim_dead`], which holds it meanwhile): a live run's
/// leftovers are never touched, whatever its pid or name. The TUN devices went with the
/// dead process (they are not persistent); the `unreachable` routes in the root
/// namespace are meant to stay.
pub fn cleanup_leftovers() -> Removed {
    let by_run = namespaces_by_run();
    let mut ids: BTreeSet<u32> = by_run.keys().copied().collect();
    ids.extend(runs::lock_file_ids());
    let mut removed = Removed::default();
    for id in ids {
        let Some(_claim) = runs::claim_dead(id) else {
            continue;
        };
        let names = by_run.get(&id).cloned().unwrap_or_default();
        let left = kill_namespace_processes(&names, Duration::from_millis(500));
        if !left.is_empty() {
            removed.errors.push(format!(
                "run {id}: processes {left:?} would not die; its namespaces are kept"
            ));
            continue;
        }
        for n in &names {
            match delete_namespace(n) {
                Ok(()) => removed.namespaces.push(n.clone()),
                Err(e) => removed.errors.push(e),
            }
        }
        removed.runs.push(id);
    }
    removed
}
