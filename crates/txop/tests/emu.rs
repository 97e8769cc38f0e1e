//! The emulator end to end (`txop emu`): containment, cleanup on every exit path, and
//! real programs through the modelled cell compared with the model itself.
//!
//! These tests need root (network namespaces, TUN devices) and Debian's iputils-ping,
//! iperf3, irtt and fping (scripts/setup.sh installs them); they fail, saying so, when
//! either is missing. They run one at a time (a lock): each starts real programs, and
//! two emulators at once on two cores would disturb each other's timing.

use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

const TXOP: &str = env!("CARGO_BIN_EXE_txop");

fn require_root() {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let uid = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|v| v.split_whitespace().nth(1).map(|s| s.to_string()))
        .unwrap();
    assert_eq!(
        uid, "0",
        "the emulator tests need root (network namespaces, TUN devices)"
    );
}

fn require_tool(name: &str) {
    let ok = Command::new("sh")
        .args(["-c", &format!("command -v {name}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "{name} is missing: run scripts/setup.sh");
}

fn txop() -> Command {
    let mut c = Command::new(TXOP);
    c.env_remove("RUST_BACKTRACE");
    c
}

fn run(args: &[&str]) -> Output {
    let out = txop().args(args).output().expect("run txop");
    eprintln!(
        "$ txop {}\n{}{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// txop's namespaces of run `id` (all runs if `None`).
fn namespaces(id: Option<u32>) -> Vec<String> {
    let Ok(dir) = std::fs::read_dir("/run/netns") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| match id {
            Some(id) => n.starts_with(&format!("txop-{id}-")),
            None => n.starts_with("txop-"),
        })
        .collect()
}

/// Processes whose command line contains `marker` (not zombies).
fn processes_with(marker: &str) -> Vec<i32> {
    let mut v = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let zombie = stat
            .rsplit_once(')')
            .is_some_and(|(_, r)| r.trim_start().starts_with('Z'));
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        if !zombie && cmd.contains(marker) && !cmd.contains("txop") {
            v.push(pid);
        }
    }
    v
}

/// Network devices in the root namespace whose name mentions txop.
fn root_txop_devices() -> Vec<String> {
    std::fs::read_dir("/sys/class/net")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.contains("txop"))
        .collect()
}

fn wait_until(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    f()
}

/// Assert that run `id` left nothing: no namespace, no process carrying `marker`, no
/// device.
fn assert_nothing_left(id: u32, marker: &str) {
    assert_eq!(
        namespaces(Some(id)),
        Vec::<String>::new(),
        "namespaces left"
    );
    assert_eq!(processes_with(marker), Vec::<i32>::new(), "processes left");
    assert_eq!(root_txop_devices(), Vec::<String>::new(), "devices left");
}

/// A command that starts background processes in two namespaces (the server's and,
/// through `txop emu exec`, station 2's) and then runs `last`.
fn busy_command(marker: &str, last: &str) -> String {
    format!("sleep {marker}1 & $TXOP_EXE emu exec sta2 -- sleep {marker}2 & sleep 0.3; {last}")
}

/// Start `txop emu default -- sh -c CMD` and wait until its namespaces and the
/// marker processes exist.
fn start_busy(marker: &str) -> Child {
    let cmd = busy_command(marker, &format!("sleep {marker}3"));
    let child = txop()
        .args(["emu", "default", "--", "sh", "-c", &cmd])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    assert!(
        wait_until(Duration::from_secs(10), || processes_with(marker).len()
            >= 3),
        "the command's processes did not start"
    );
    assert_eq!(namespaces(Some(child.id())).len(), 5, "server + 4 stations");
    child
}

#[test]
fn normal_exit_leaves_nothing() {
    require_root();
    require_tool("ping");
    let _g = serial();
    let marker = "86411";
    let cmd = busy_command(marker, "ping -c 1 -W 2 $TXOP_STA1");
    let child = txop()
        .args(["emu", "default", "--", "sh", "-c", &cmd])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let id = child.id();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("1 received"), "{text}");
    assert_nothing_left(id, marker);
}

#[test]
fn sigterm_and_sigint_leave_nothing() {
    require_root();
    let _g = serial();
    for (sig, marker) in [(libc::SIGTERM, "86421"), (libc::SIGINT, "86422")] {
        let mut child = start_busy(marker);
        let id = child.id();
        unsafe { libc::kill(id as i32, sig) };
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(128 + sig), "exit code 128 + signal");
        assert_nothing_left(id, marker);
    }
}

#[test]
fn failing_command_passes_its_exit_code_and_leaves_nothing() {
    require_root();
    let _g = serial();
    let marker = "86431";
    let cmd = busy_command(marker, "exit 3");
    let child = txop()
        .args(["emu", "default", "--", "sh", "-c", &cmd])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let id = child.id();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert_nothing_left(id, marker);
}

#[test]
fn panic_leaves_nothing() {
    require_root();
    let _g = serial();
    let marker = "86441";
    let cmd = busy_command(marker, &format!("sleep {marker}3"));
    let child = txop()
        .args(["emu", "default", "--", "sh", "-c", &cmd])
        .env("TXOP_EMU_FAULT", "panic")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let id = child.id();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(101), "a Rust panic's exit code");
    assert!(String::from_utf8_lossy(&out.stderr).contains("injected"));
    assert_nothing_left(id, marker);
}

#[test]
fn cleanup_removes_what_sigkill_left() {
    require_root();
    let _g = serial();
    let marker = "86451";
    let mut child = start_busy(marker);
    let id = child.id();
    child.kill().unwrap(); // SIGKILL: no teardown can run
    child.wait().unwrap();
    assert_eq!(
        namespaces(Some(id)).len(),
        5,
        "SIGKILL leaves the namespaces"
    );
    assert!(!processes_with(marker).is_empty(), "… and their processes");
    // TUN devices are not persistent: they went with the process.
    assert_eq!(root_txop_devices(), Vec::<String>::new());
    let out = run(&["emu", "--cleanup"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains(&format!("txop-{id}-srv")));
    assert!(wait_until(Duration::from_secs(2), || processes_with(
        marker
    )
    .is_empty()));
    assert_nothing_left(id, marker);
}

#[test]
fn missing_privileges_and_tun_are_one_line_errors() {
    require_root();
    let _g = serial();
    let no_caps = Command::new("setpriv")
        .args(["--bounding-set=-net_admin,-sys_admin", TXOP])
        .args(["emu", "default", "--", "true"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&no_caps.stderr);
    assert_eq!(no_caps.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("needs root"), "{err}");
    let no_tun = Command::new("unshare")
        .args([
            "-m",
            "sh",
            "-c",
            &format!("mount -t tmpfs tmpfs /dev/net && exec {TXOP} emu default -- true"),
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&no_tun.stderr);
    assert_eq!(no_tun.status.code(), Some(2), "{err}");
    assert!(err.contains("/dev/net/tun"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// The device of the root namespace's default route (the real interface).
fn default_route_device() -> Option<String> {
    let out = Command::new("ip")
        .args(["route", "show", "default"])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut words = text.split_whitespace();
    while let Some(w) = words.next() {
        if w == "dev" {
            return words.next().map(|s| s.to_string());
        }
    }
    None
}

fn tx_packets(dev: &str) -> u64 {
    std::fs::read_to_string(format!("/sys/class/net/{dev}/statistics/tx_packets"))
        .map(|s| s.trim().parse().unwrap_or(0))
        .unwrap_or(0)
}

/// The root namespace's route to txop's range must be `unreachable` before anything is
/// sent towards it from here: otherwise this test itself would leak.
fn assert_root_protected() {
    for (fam, net) in [("-4", "198.18.0.0/16"), ("-6", "fd74:786f:7000::/48")] {
        let out = Command::new("ip")
            .args([fam, "route", "show", "exact", net])
            .output()
            .unwrap();
        let r = String::from_utf8_lossy(&out.stdout);
        assert!(r.starts_with("unreachable"), "route to {net}: {r:?}");
    }
}

/// From the root namespace, every way of reaching the cell's addresses fails at
/// once, and the real interface sends nothing because of it.
///
/// The counter check: `ATTEMPTS` UDP datagrams to cell addresses would move the
/// interface's tx_packets by `ATTEMPTS` if any left; the attempts take a few ms, so
/// background traffic in that window is far below that. The same window measured just
/// before gives the background rate, printed for the record.
fn check_root_namespace_contained() {
    const ATTEMPTS: u64 = 2000;
    assert_root_protected();
    let start = Instant::now();
    let ping = Command::new("ping")
        .args(["-c", "1", "-W", "1", "198.18.1.1"])
        .output()
        .unwrap();
    let ping_time = start.elapsed();
    assert!(!ping.status.success());
    assert!(ping_time < Duration::from_millis(500), "{ping_time:?}");
    assert!(
        String::from_utf8_lossy(&ping.stderr).contains("No route to host"),
        "{}",
        String::from_utf8_lossy(&ping.stderr)
    );
    for addr in ["198.18.0.1:5201", "[fd74:786f:7000::1:1]:5201"] {
        let a: SocketAddr = addr.parse().unwrap();
        let t = Instant::now();
        let e = TcpStream::connect_timeout(&a, Duration::from_secs(1)).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EHOSTUNREACH), "{addr}: {e}");
        assert!(
            t.elapsed() < Duration::from_millis(100),
            "{addr}: not at once"
        );
    }
    let dev = default_route_device();
    let v4 = UdpSocket::bind("0.0.0.0:0").unwrap();
    let v6 = UdpSocket::bind("[::]:0").unwrap();
    let targets: Vec<(&UdpSocket, SocketAddr)> = vec![
        (&v4, "198.18.0.1:9".parse().unwrap()),
        (&v4, "198.18.1.1:9".parse().unwrap()),
        (&v6, "[fd74:786f:7000::1]:9".parse().unwrap()),
        (&v6, "[fd74:786f:7000::1:2]:9".parse().unwrap()),
    ];
    let send_all = || {
        let mut refused = 0;
        for i in 0..ATTEMPTS {
            let (s, a) = targets[i as usize % targets.len()];
            if s.send_to(b"txop", a).is_err() {
                refused += 1;
            }
        }
        refused
    };
    // Background: the counter over a window as long as the attempts take.
    let t0 = Instant::now();
    let refused = send_all();
    let attempt_time = t0.elapsed();
    let before_bg = dev.as_deref().map_or(0, tx_packets);
    std::thread::sleep(attempt_time);
    let background = dev.as_deref().map_or(0, tx_packets) - before_bg;
    let before = dev.as_deref().map_or(0, tx_packets);
    let refused2 = send_all();
    let during = dev.as_deref().map_or(0, tx_packets) - before;
    eprintln!(
        "root namespace: {ATTEMPTS}+{ATTEMPTS} datagrams refused {refused}+{refused2} in {attempt_time:?}; \
         {dev:?} tx_packets moved {during} during the second burst, {background} in a quiet window as long"
    );
    assert_eq!(
        (refused, refused2),
        (ATTEMPTS, ATTEMPTS),
        "every send fails"
    );
    assert!(
        during < ATTEMPTS / 10,
        "{dev:?} sent {during} packets while {ATTEMPTS} datagrams were aimed at the cell"
    );
}

#[test]
fn root_namespace_cannot_reach_the_cell_with_or_without_an_emulator() {
    require_root();
    require_tool("ping");
    let _g = serial();
    // Without a running emulator: --cleanup (like every txop emu) leaves the range
    // unreachable from here.
    assert!(run(&["emu", "--cleanup"]).status.success());
    check_root_namespace_contained();
    // With one running.
    let mut child = txop()
        .args(["emu", "default", "--", "sleep", "5"])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let id = child.id();
    assert!(wait_until(Duration::from_secs(10), || Path::new(&format!(
        "/run/netns/txop-{id}-sta4"
    ))
    .exists()));
    std::thread::sleep(Duration::from_millis(300));
    check_root_namespace_contained();
    unsafe { libc::kill(id as i32, libc::SIGTERM) };
    child.wait().unwrap();
    // And after it exited.
    check_root_namespace_contained();
}

#[test]
fn namespaces_have_no_route_out() {
    require_root();
    require_tool("ping");
    let _g = serial();
    let dev = default_route_device();
    let before = dev.as_deref().map_or(0, tx_packets);
    // 198.51.100.1 is TEST-NET-2 (RFC 5737): outside the cell, never routed.
    let script = "ip -4 route; ip -6 route; \
        ping -c 1 -W 1 198.51.100.1; echo ping4=$?; \
        ping -6 -c 1 -W 1 2001:db8::1; echo ping6=$?; \
        ping -c 1 -W 2 $TXOP_SERVER >/dev/null; echo cell=$?";
    let out = run(&["emu", "default", "--in", "sta3", "--", "sh", "-c", script]);
    let during = dev.as_deref().map_or(0, tx_packets) - before;
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success());
    let routes: Vec<&str> = text
        .lines()
        .take_while(|l| !l.starts_with("ping4="))
        .filter(|l| !l.starts_with("PING") && !l.trim().is_empty())
        .collect();
    assert!(
        routes.iter().all(|r| !r.starts_with("default")),
        "{routes:?}"
    );
    assert!(
        routes
            .iter()
            .any(|r| r.starts_with("198.18.0.0/16 dev txop0")),
        "{routes:?}"
    );
    assert!(
        text.contains("ping4=2") && text.contains("ping6=2"),
        "{text}"
    );
    assert!(err.matches("Network is unreachable").count() >= 2, "{err}");
    assert!(
        text.contains("cell=0"),
        "the cell itself is reachable: {text}"
    );
    eprintln!("{dev:?} tx_packets moved {during} during the whole run (background included)");
}
