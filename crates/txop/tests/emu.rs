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
    c.env_remove("RUST_BACKTRACE").env_remove("TXOP_EMU_ID");
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

/// Run `id`'s lock file (held while the run lives).
fn lock_file(id: u32) -> std::path::PathBuf {
    std::path::PathBuf::from(format!("/run/txop/emu-{id}.lock"))
}

/// Assert that run `id` left nothing: no namespace, no process carrying `marker`, no
/// device, no lock file.
fn assert_nothing_left(id: u32, marker: &str) {
    assert_eq!(
        namespaces(Some(id)),
        Vec::<String>::new(),
        "namespaces left"
    );
    assert_eq!(processes_with(marker), Vec::<i32>::new(), "processes left");
    assert_eq!(root_txop_devices(), Vec::<String>::new(), "devices left");
    assert!(!lock_file(id).exists(), "lock file left");
}

/// A command that starts background processes in two namespaces (the server's and,
/// through `txop emu exec`, station 2's) and then runs `last`.
fn busy_command(marker: &str, last: &str) -> String {
    format!("sleep {marker}1 & $TXOP_EXE emu exec sta2 -- sleep {marker}2 & sleep 0.3; {last}")
}

/// Start `txop emu default -- sh -c CMD` and wait until its namespaces and the
/// marker processes exist.
fn start_busy(marker: &str) -> Child {
    start_busy_as(txop(), marker)
}

/// [`start_busy`] with `txop`, a command running txop (perhaps under another name).
fn start_busy_as(mut txop: Command, marker: &str) -> Child {
    let cmd = busy_command(marker, &format!("sleep {marker}3"));
    let child = txop
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

/// Run `txop ARGS`, its stdout piped: its run id (its pid) and its output.
fn emu_output(args: &[&str]) -> (u32, Output) {
    let child = txop().args(args).stdout(Stdio::piped()).spawn().unwrap();
    let id = child.id();
    (id, child.wait_with_output().unwrap())
}

#[test]
fn normal_exit_leaves_nothing() {
    require_root();
    require_tool("ping");
    let _g = serial();
    let marker = "86411";
    let cmd = busy_command(marker, "ping -c 1 -W 2 $TXOP_STA1");
    let (id, out) = emu_output(&["emu", "default", "--", "sh", "-c", &cmd]);
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
    // txop's convention for a bug: exit code 1 and one line naming it.
    assert_eq!(out.status.code(), Some(1), "an internal error's exit code");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("internal error") && err.contains("injected"),
        "{err}"
    );
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

/// A background emulator that is stopped (SIGTERM, then waited for) when dropped, so
/// that a failing test leaves no emulator running behind it.
struct Background(Child);

impl Background {
    fn id(&self) -> u32 {
        self.0.id()
    }

    /// SIGTERM and wait: the emulator tears everything down.
    fn stop(&mut self) {
        if self.0.try_wait().ok().flatten().is_none() {
            unsafe { libc::kill(self.0.id() as i32, libc::SIGTERM) };
            let _ = self.0.wait();
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Wait until run `id`'s namespaces (server + 4 stations of `default`) exist.
fn wait_for_run(id: u32) {
    assert!(
        wait_until(Duration::from_secs(10), || namespaces(Some(id)).len() == 5),
        "emulator {id} did not come up"
    );
}

/// What a SIGKILLed run leaves (namespaces, the processes in them, its lock file) is
/// removed when the next run starts, which then works; a run alive at the same time
/// is untouched although it runs under another executable name (liveness is the
/// run's lock, not the name of the process behind a pid).
#[test]
fn the_next_run_removes_what_a_sigkilled_run_left_and_spares_a_live_one() {
    require_root();
    require_tool("ping");
    let _g = serial();
    let dir = scratch("renamed");
    let renamed = dir.join("wifi-lab");
    std::os::unix::fs::symlink(TXOP, &renamed).unwrap();
    let mut other_name = Command::new(&renamed);
    other_name.env_remove("TXOP_EMU_ID");
    let (live_marker, dead_marker) = ("86471", "86472");
    let mut live = Background(start_busy_as(other_name, live_marker));
    let live_id = live.id();
    // sh, its two background sleeps (one through `txop emu exec`) and the last one.
    assert!(wait_until(Duration::from_secs(5), || processes_with(
        live_marker
    )
    .len()
        == 4));
    let live_processes = processes_with(live_marker);
    let mut dead = start_busy(dead_marker);
    let dead_id = dead.id();
    dead.kill().unwrap(); // SIGKILL: no teardown can run
    dead.wait().unwrap();
    assert_eq!(namespaces(Some(dead_id)).len(), 5, "SIGKILL leaves them");
    assert!(!processes_with(dead_marker).is_empty());
    assert!(lock_file(dead_id).exists());

    let out = run(&[
        "emu",
        "default",
        "--",
        "sh",
        "-c",
        "ping -c 1 -W 2 $TXOP_STA1",
    ]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("1 received"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("txop-{dead_id}-srv")) && !err.contains(&format!("{live_id}")),
        "{err}"
    );
    assert!(wait_until(Duration::from_secs(2), || processes_with(
        dead_marker
    )
    .is_empty()));
    assert_nothing_left(dead_id, dead_marker);

    // The live run: namespaces, processes and lock untouched, and it still forwards.
    assert_eq!(namespaces(Some(live_id)).len(), 5);
    assert_eq!(processes_with(live_marker), live_processes);
    assert!(lock_file(live_id).exists());
    let id = live_id.to_string();
    let ping = run(&[
        "emu",
        "exec",
        "--id",
        &id,
        "sta3",
        "--",
        "ping",
        "-c",
        "1",
        "-W",
        "2",
        "198.18.0.1",
    ]);
    assert!(ping.status.success());
    assert!(String::from_utf8_lossy(&ping.stdout).contains("1 received"));
    live.stop();
    assert_nothing_left(live_id, live_marker);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A dead run's lock file makes it dead even when its pid now belongs to a live
/// process named like txop (a reused pid): its leftovers go at the next start.
#[test]
fn a_reused_pid_does_not_keep_a_dead_runs_leftovers() {
    require_root();
    let _g = serial();
    let dir = scratch("reused");
    let sleeper = dir.join("txop-sleeper");
    std::os::unix::fs::symlink("/bin/sleep", &sleeper).unwrap();
    let mut imposter = Command::new(&sleeper).arg("30").spawn().unwrap();
    let pid = imposter.id();
    // What a SIGKILLed run with that pid would have left: a namespace and a lock
    // file with its pid written in, nobody holding it.
    let ns = format!("txop-{pid}-srv");
    assert!(Command::new("ip")
        .args(["netns", "add", &ns])
        .status()
        .unwrap()
        .success());
    std::fs::create_dir_all("/run/txop").unwrap();
    std::fs::write(lock_file(pid), format!("{pid}\n")).unwrap();
    let out = run(&["emu", "default", "--", "true"]);
    assert!(out.status.success());
    assert_eq!(namespaces(Some(pid)), Vec::<String>::new());
    assert!(!lock_file(pid).exists());
    assert!(
        imposter.try_wait().unwrap().is_none(),
        "the process is left alone"
    );
    imposter.kill().unwrap();
    imposter.wait().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// The command's stdout is its own, byte for byte; txop's summary goes to stderr
/// after the command's stderr; `--quiet` leaves only the command's output.
#[test]
fn stdout_is_the_commands_own_and_txops_summary_goes_to_stderr() {
    require_root();
    let _g = serial();
    let out = run(&["emu", "default", "--", "echo", "hello"]);
    assert!(out.status.success());
    assert_eq!(out.stdout, b"hello\n");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("emulated in real time") && err.contains("emulator:"),
        "{err}"
    );

    // Both streams and -o: each stream gets its own; the log has both; the summary
    // printed is summary.txt.
    let dir = scratch("streams");
    let out_dir = dir.join("out");
    let script = "echo '{\"a\": 1}'; echo oops >&2";
    let out = run(&[
        "emu",
        "default",
        "-o",
        out_dir.to_str().unwrap(),
        "--",
        "sh",
        "-c",
        script,
    ]);
    assert!(out.status.success());
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["a"], 1, "stdout parses as the command's JSON");
    let err = String::from_utf8_lossy(&out.stderr);
    let summary = std::fs::read_to_string(out_dir.join("summary.txt")).unwrap();
    assert!(err.starts_with("oops\n"), "{err}");
    assert!(err.ends_with(&summary), "{err}");
    let log = std::fs::read_to_string(out_dir.join("command.log")).unwrap();
    assert!(
        log.contains("{\"a\": 1}\n") && log.contains("oops\n"),
        "{log}"
    );

    // --quiet: the command's streams alone, the results directory still written.
    let quiet_dir = dir.join("quiet");
    let out = run(&[
        "emu",
        "default",
        "--quiet",
        "-o",
        quiet_dir.to_str().unwrap(),
        "--",
        "sh",
        "-c",
        "echo hello; echo oops >&2",
    ]);
    assert!(out.status.success());
    assert_eq!(out.stdout, b"hello\n");
    assert_eq!(out.stderr, b"oops\n");
    assert!(quiet_dir.join("summary.txt").exists());
    let out = run(&["emu", "--cleanup", "-q"]);
    assert!(out.status.success());
    assert_eq!((out.stdout.len(), out.stderr.len()), (0, 0));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A command that cannot be started is the user's error: one line naming it, exit 2,
/// nothing on stdout, nothing left. Found out before anything is built, or, for a
/// script whose interpreter is missing (only exec(2) can tell), when it is started.
/// The command's own failures pass through as its exit status.
#[test]
fn a_command_that_cannot_start_is_a_one_line_error_and_its_own_status_passes_through() {
    require_root();
    let _g = serial();
    let dir = scratch("nostart");
    let script = dir.join("script");
    std::fs::write(&script, "#!/nonexistent/interpreter\n").unwrap();
    let plain = dir.join("plain");
    std::fs::write(&plain, "echo hi\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o644)).unwrap();
    let cases = [
        ("no-such-command-86481", "command not found"),
        ("/nonexistent/86481", "no such file"),
        (plain.to_str().unwrap(), "not executable"),
        (dir.to_str().unwrap(), "not a regular file"),
        (script.to_str().unwrap(), "No such file or directory"),
    ];
    for (cmd, why) in cases {
        let child = txop()
            .args(["emu", "default", "--", cmd, "arg"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let id = child.id();
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{cmd}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("txop: error: ") && err.contains(cmd) && err.contains(why));
        assert!(out.stdout.is_empty());
        assert_nothing_left(id, "no-marker-86481");
    }
    // The same through `txop emu exec`.
    let mut emu = Background(
        txop()
            .args(["emu", "default", "--", "sleep", "30"])
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let id = emu.id();
    wait_for_run(id);
    let out = run(&[
        "emu",
        "exec",
        "sta1",
        "--id",
        &id.to_string(),
        "--",
        "no-such-command-86481",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);
    emu.stop();
    // The command's own status: its exit code, or 128 + the signal that ended it.
    for (script, code) in [("exit 1", 1), ("exit 127", 127), ("kill -KILL $$", 137)] {
        let out = run(&["emu", "default", "-q", "--", "sh", "-c", script]);
        assert_eq!(out.status.code(), Some(code), "{script}");
        assert!(
            out.stderr.is_empty(),
            "nothing of txop's: the command failed, not txop"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `txop emu exec` without `--id` joins the one emulator running; with two it refuses
/// in one line naming both; `--id` or TXOP_EMU_ID choose; an id that names no live
/// emulator, or none running, is an error. (Assumes no other emulator runs on the
/// machine meanwhile.)
#[test]
fn exec_without_id_joins_the_only_emulator_and_refuses_to_guess_between_two() {
    require_root();
    let _g = serial();
    let start = || {
        let c = txop()
            .args(["emu", "default", "--", "sleep", "30"])
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_for_run(c.id());
        Background(c)
    };
    let which = &["sh", "-c", "echo $TXOP_EMU_ID $TXOP_NODE"];
    let exec = |extra: &[&str], env: Option<u32>| {
        let mut args = vec!["emu", "exec"];
        args.extend(extra);
        args.push("--");
        args.extend(which);
        let mut c = txop();
        if let Some(id) = env {
            c.env("TXOP_EMU_ID", id.to_string());
        }
        let out = c.args(&args).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let mut a = start();
    let mut b = start();
    let (ida, idb) = (a.id(), b.id());
    let (code, out, err) = exec(&["sta1"], None);
    assert_eq!(code, Some(2), "{out}{err}");
    assert!(out.is_empty());
    assert_eq!(err.lines().count(), 1, "{err}");
    let (lo, hi) = (ida.min(idb), ida.max(idb));
    assert!(
        err.contains(&format!("{lo}, {hi}")) && err.contains("--id"),
        "{err}"
    );
    assert_eq!(
        exec(&["--id", &ida.to_string(), "sta2"], None).1,
        format!("{ida} sta2\n")
    );
    assert_eq!(exec(&["sta3"], Some(idb)).1, format!("{idb} sta3\n"));
    b.stop();
    // One left: joined without an id.
    assert_eq!(
        exec(&["server"], None),
        (Some(0), format!("{ida} server\n"), String::new())
    );
    // A dead id, explicit or inherited: refused, naming the one that runs.
    let dead_id = idb.to_string();
    for (extra, env) in [
        (&["--id", &dead_id, "sta1"][..], None),
        (&["sta1"], Some(idb)),
    ] {
        let (code, out, err) = exec(extra, env);
        assert_eq!(code, Some(2), "{out}{err}");
        assert!(
            err.contains("no such emulator") && err.contains(&ida.to_string()),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1);
    }
    a.stop();
    let (code, _, err) = exec(&["sta1"], None);
    assert_eq!(code, Some(2));
    assert!(err.contains("no txop emulator is running"), "{err}");
    assert_eq!(err.lines().count(), 1);
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

// ---- Real programs through the model, compared with the model ----

/// A scratch directory for one test's files.
fn scratch(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("txop-emu-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Run `script` with `sh -c` in `node`'s namespace of an emulated `scenario`.
fn emu_sh(scenario: &str, sets: &[&str], node: &str, script: &str) -> Output {
    let mut args = vec!["emu", scenario];
    for s in sets {
        args.extend(["--set", s]);
    }
    args.extend(["--in", node, "--", "sh", "-c", script]);
    let out = run(&args);
    assert!(out.status.success(), "txop emu failed");
    out
}

/// (icmp_seq, RTT ms) of every reply in ping's output.
fn ping_samples(text: &str) -> Vec<(u32, f64)> {
    text.lines()
        .filter_map(|l| {
            let seq = l.split("icmp_seq=").nth(1)?.split_whitespace().next()?;
            let t = l.split("time=").nth(1)?.split_whitespace().next()?;
            Some((seq.parse().ok()?, t.parse().ok()?))
        })
        .collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    assert!(!v.is_empty(), "no samples");
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// The simulator's results (`txop run … --json`).
fn simulate(scenario: &str, sets: &[&str]) -> serde_json::Value {
    let mut args = vec!["run", scenario, "--json"];
    for s in sets {
        args.extend(["--set", s]);
    }
    let out = txop().args(&args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Median RTT (ms) of the simulator's ICMP ping flow between `from_s` and `to_s`.
fn sim_ping_median(r: &serde_json::Value, from_s: f64, to_s: f64) -> f64 {
    let flow = r["flows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "ping")
        .expect("a ping flow");
    median(
        flow["rtt_samples"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|s| {
                let (t, v) = (s[0].as_f64()?, s[1].as_f64()?);
                (from_s..to_s).contains(&t).then_some(v)
            })
            .collect(),
    )
}

#[test]
fn idle_ping_matches_the_models_round_trip_within_a_millisecond() {
    require_root();
    require_tool("ping");
    let _g = serial();
    // The model's idle RTT: the simulator's ICMP ping (84-byte packets, as ping's
    // default) from the station to the server over the same scenario.
    let sim = simulate(
        "tcp-ndown-6mbit",
        &["traffic.test=ping", "traffic.length_s=5"],
    );
    let model_ms = sim_ping_median(&sim, 0.0, 1e9);
    let out = emu_sh(
        "tcp-ndown-6mbit",
        &[],
        "sta1",
        "ping -c 20 -i 0.1 $TXOP_SERVER",
    );
    let samples = ping_samples(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(samples.len(), 20, "every echo answered");
    let emu_ms = median(samples.iter().map(|s| s.1).collect());
    eprintln!("idle ping: model {model_ms:.3} ms, emulated {emu_ms:.3} ms");
    // Real packets cross two TUN devices and two network stacks on top of the model:
    // they can only add time, and less than a millisecond.
    assert!(emu_ms >= model_ms - 0.01, "{emu_ms} < {model_ms}");
    assert!(emu_ms - model_ms < 1.0, "{emu_ms} vs {model_ms}");
}

/// `txop emu e5-sdio-ping` carries station 1's polled SDIO host bus: a real ping from
/// the server to station 1 waits for the bus's polls as the simulator's does (3.3 to
/// 13.1 ms over the poll phases), not the 1.7 ms of a station without a bus (station
/// 2, and what the emulator answered before it carried host buses).
#[test]
fn e5_sdio_ping_waits_for_the_bus_as_the_simulators_does() {
    require_root();
    require_tool("ping");
    let _g = serial();
    let sim = simulate("e5-sdio-ping", &[]);
    let flows = sim["flows"].as_array().unwrap();
    let rtts = |to: &str| -> Vec<f64> {
        let f = flows.iter().find(|f| f["dst"] == to).expect("a ping flow");
        f["rtt_samples"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s[1].as_f64().unwrap())
            .collect()
    };
    let (bussed, plain) = (rtts("sta1"), rtts("sta2"));
    let lo = bussed.iter().copied().fold(f64::MAX, f64::min);
    let hi = bussed.iter().copied().fold(f64::MIN, f64::max);
    let plain_hi = plain.iter().copied().fold(f64::MIN, f64::max);
    assert!(
        lo > plain_hi + 1.0,
        "the model's bus: {lo} vs {plain_hi} ms"
    );
    // Requests 0.3 s apart meet the bus's 5 ms polls at spread phases.
    let out = emu_sh(
        "e5-sdio-ping",
        &[],
        "server",
        "ping -c 15 -i 0.3 $TXOP_STA1",
    );
    let samples = ping_samples(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(samples.len(), 15, "every echo answered");
    let emu: Vec<f64> = samples.iter().map(|s| s.1).collect();
    eprintln!("e5-sdio-ping: model {lo:.2} to {hi:.2} ms, emulated {emu:?}");
    // The model's phases are 0.37 ms apart; real stacks add less than a millisecond.
    for rtt in &emu {
        assert!(*rtt >= lo - 0.5 && *rtt <= hi + 1.5, "{rtt} ms");
    }
}

/// What an iperf3 TCP download with a concurrent ping measured.
struct Download {
    /// iperf3's receiver throughput over the whole test, Mbit/s.
    mbps: f64,
    /// Median ping RTT from 2 s into the download to its end, ms.
    ping_ms: f64,
    cc: String,
}

/// The station runs an iperf3 server and pings the server every 0.2 s; the server
/// sends to it for `secs` s with the kernel's congestion control `cc`.
fn download(stack: &str, cc: &str, secs: u32) -> Download {
    let dir = scratch(&format!("{stack}-{cc}"));
    let d = dir.display();
    let pings = (secs + 2) * 5;
    let script = format!(
        "iperf3 -s -1 -D -B $TXOP_STA1 && sleep 0.3 && \
         (ping -i 0.2 -c {pings} $TXOP_SERVER > {d}/ping.txt &) && sleep 1 && \
         $TXOP_EXE emu exec server -- iperf3 -c $TXOP_STA1 -C {cc} -t {secs} -J > {d}/iperf.json; \
         sleep 1"
    );
    let stack_set = format!("stack={stack}");
    emu_sh("tcp-ndown-6mbit", &[&stack_set], "sta1", &script);
    let iperf: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("iperf.json")).unwrap()).unwrap();
    let mbps = iperf["end"]["sum_received"]["bits_per_second"]
        .as_f64()
        .unwrap_or_else(|| panic!("iperf3: {iperf}"))
        / 1e6;
    let cc_used = iperf["end"]["sender_tcp_congestion"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let pings = ping_samples(&std::fs::read_to_string(dir.join("ping.txt")).unwrap());
    // The download starts about 1 s (5 pings) after the pings; skip its first 2 s.
    let under_load: Vec<f64> = pings
        .iter()
        .filter(|(seq, _)| (15..(5 + secs * 5)).contains(seq))
        .map(|s| s.1)
        .collect();
    assert!(
        under_load.len() as u32 > secs * 5 / 2,
        "pings lost: {pings:?}"
    );
    let ping_ms = median(under_load);
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!("{stack}, kernel {cc_used}: {mbps:.2} Mbit/s, ping under load {ping_ms:.1} ms");
    Download {
        mbps,
        ping_ms,
        cc: cc_used,
    }
}

/// The simulator's single TCP CUBIC download (flent tcp_1down, `secs` s) on the same
/// scenario: (throughput Mbit/s over the transfer, median ping from 2 s into it).
fn simulated_download(stack: &str, secs: u32) -> (f64, f64) {
    let st = format!("stack={stack}");
    let len = format!("traffic.length_s={secs}");
    let r = simulate("tcp-ndown-6mbit", &[&st, "traffic.test=tcp_1down", &len]);
    let tcp = r["flows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "tcp")
        .unwrap();
    // flent's timing: 5 s of pings, then the transfer; 0.2 s steps.
    let series: Vec<f64> = tcp["throughput_series_bps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    let steps = &series[25..25 + secs as usize * 5];
    let mbps = steps.iter().sum::<f64>() / steps.len() as f64 / 1e6;
    let ping = sim_ping_median(&r, 7.0, 5.0 + secs as f64);
    (mbps, ping)
}

#[test]
fn tcp_download_bloated_stack_hundreds_of_ms_modern_tens_and_the_simulator_agrees() {
    require_root();
    require_tool("ping");
    require_tool("iperf3");
    let _g = serial();
    let secs = 10;
    let bloated = download("linux-4.8-bloated", "cubic", secs);
    let modern = download("linux-5.5", "cubic", secs);
    assert_eq!(
        (bloated.cc.as_str(), modern.cc.as_str()),
        ("cubic", "cubic")
    );
    assert!(bloated.ping_ms > 100.0, "bloated: {} ms", bloated.ping_ms);
    assert!(
        (10.0..100.0).contains(&modern.ping_ms),
        "linux-5.5: {} ms",
        modern.ping_ms
    );
    // Both fill the 6.5 Mbit/s link.
    for d in [&bloated, &modern] {
        assert!((4.0..6.5).contains(&d.mbps), "{} Mbit/s", d.mbps);
    }
    assert!(
        (bloated.mbps / modern.mbps - 1.0).abs() < 0.25,
        "similar throughput: {} vs {}",
        bloated.mbps,
        modern.mbps
    );
    // The simulator's TCP against the kernel's, same scenario.
    for (stack, emu) in [("linux-5.5", &modern), ("linux-4.8-bloated", &bloated)] {
        let (mbps, ping) = simulated_download(stack, secs);
        eprintln!(
            "sim vs emu, {stack}: throughput {mbps:.2} vs {:.2} Mbit/s ({:+.1} %), \
             ping under load {ping:.1} vs {:.1} ms ({:+.1} %)",
            emu.mbps,
            (emu.mbps / mbps - 1.0) * 100.0,
            emu.ping_ms,
            (emu.ping_ms / ping - 1.0) * 100.0
        );
        assert!((emu.mbps / mbps - 1.0).abs() < 0.10, "{stack}: throughput");
        // The median of ~40 pings under CoDel moved by ±5 % between runs (−3.5 % to
        // −11 % in three runs of linux-5.5 against a simulated 22.1 ms); the bloated
        // queue's delay is steadier. Since issue 26's backoff rule the simulator sits
        // about 7 % higher on linux-5.5 (23.7 ms; the emulator measured 20.0): its TCP
        // receiver answers in no time, so the TCP ACK falls in the SIFS before the
        // station's own BlockAck and goes without backoff (802.11-2016 10.22.2.2 a),
        // while the kernel's ACK reaches the model tens of µs later, during that
        // BlockAck, and backs off. Hence 20 % there until the simulator models a
        // receiver's processing time.
        let tolerance = if stack == "linux-5.5" { 0.20 } else { 0.10 };
        assert!(
            (emu.ping_ms / ping - 1.0).abs() < tolerance,
            "{stack}: ping under load"
        );
    }
}

#[test]
fn the_kernels_bbr_runs_through_it() {
    require_root();
    require_tool("ping");
    require_tool("iperf3");
    let _g = serial();
    let bbr = download("linux-5.5", "bbr", 6);
    assert_eq!(bbr.cc, "bbr");
    assert!((3.0..6.5).contains(&bbr.mbps), "{} Mbit/s", bbr.mbps);
    assert!(bbr.ping_ms < 200.0, "{} ms", bbr.ping_ms);
}

/// flent's `ping` and `voip` tests (fping/ping and irtt; Debian's packages) from
/// station 1 to the server through the cell, and their data files load in flent.
#[test]
fn flent_ping_and_voip_run_through_it_and_their_data_files_load() {
    require_root();
    for t in ["flent", "irtt", "fping", "ping"] {
        require_tool(t);
    }
    let _g = serial();
    let dir = scratch("flent");
    let d = dir.display();
    let script = format!(
        "$TXOP_EXE emu exec server -- irtt server -b $TXOP_SERVER >/dev/null 2>&1 & sleep 0.5; \
         flent ping -H $TXOP_SERVER -l 4 -D {d} -t emu && \
         flent voip -H $TXOP_SERVER -l 4 -D {d} -t emu"
    );
    emu_sh("tcp-ndown-6mbit", &[], "sta1", &script);
    let files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|p| p.to_string_lossy().ends_with(".flent.gz"))
        .collect();
    assert_eq!(files.len(), 2, "{files:?}");
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let out = Command::new("flent").arg("-i").arg(f).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "flent -i {name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let series = if name.starts_with("ping") {
            vec!["Ping (ms) ICMP", "Ping (ms) UDP"]
        } else {
            vec!["VoIP::delay", "VoIP::jitter", "VoIP::loss"]
        };
        for s in series {
            let line = text
                .lines()
                .find(|l| l.trim_start().starts_with(s))
                .unwrap_or_else(|| panic!("{name}: no {s} in\n{text}"));
            // `name : avg median p99 unit points`: values measured, not N/A.
            let avg: f64 = line
                .split(':')
                .nth_back(0)
                .and_then(|r| r.split_whitespace().next())
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{name}: {line}"));
            if s.starts_with("Ping") || s == "VoIP::delay" {
                assert!((1.0..10.0).contains(&avg), "{name}: {line}");
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `-o DIR`: the cell's view in the simulator's results format, plus what the command
/// printed and the emulator's own figures.
#[test]
fn results_directory_holds_the_cells_view_and_the_commands_output() {
    require_root();
    require_tool("ping");
    let _g = serial();
    let dir = scratch("results").join("out");
    let out = run(&[
        "emu",
        "tcp-ndown-6mbit",
        "--in",
        "sta1",
        "-o",
        dir.to_str().unwrap(),
        "--",
        "ping",
        "-c",
        "5",
        "-i",
        "0.2",
        "198.18.0.1",
    ]);
    assert!(out.status.success());
    let log = std::fs::read_to_string(dir.join("command.log")).unwrap();
    assert!(log.contains("5 received"), "{log}");
    let summary = std::fs::read_to_string(dir.join("summary.txt")).unwrap();
    // txop's summary on stderr; stdout is ping's alone, as command.log has it.
    assert!(String::from_utf8_lossy(&out.stderr).contains(&summary));
    assert_eq!(String::from_utf8_lossy(&out.stdout), log);
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("results.json")).unwrap()).unwrap();
    assert_eq!(r["mode"], "emulation");
    assert_eq!(r["stations"][0]["rate"], "HT20 MCS0 LGI");
    assert!(r["stations"][0]["airtime_ns"].as_u64().unwrap() > 0);
    let flows = r["flows"].as_array().unwrap();
    let icmp: Vec<_> = flows.iter().filter(|f| f["kind"] == "icmp").collect();
    assert_eq!(icmp.len(), 2, "echo requests and replies");
    for f in &icmp {
        assert_eq!(f["delivered_packets"], 5);
        assert!(
            f["latency_ms"]["p50"].as_f64().unwrap() > 1.0,
            "wired 1 ms + air"
        );
    }
    let c = &r["conservation"];
    assert_eq!(c["offered_packets"], c["delivered_packets"]);
    assert!(r["emulator"]["timing_error"]["samples"].as_u64().unwrap() >= 10);
    assert_eq!(r["emulator"]["tun_queue_drops"], 0);
    // A second run refuses to overwrite it.
    let again = run(&[
        "emu",
        "tcp-ndown-6mbit",
        "-o",
        dir.to_str().unwrap(),
        "--",
        "true",
    ]);
    assert_eq!(again.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(dir.parent().unwrap());
}

/// `--shell` prints the namespaces and addresses (on stderr: stdout is the shell's),
/// then runs a shell in the chosen namespace (here fed from stdin), from which the
/// others are reachable through the cell.
#[test]
fn shell_prints_the_network_and_runs_in_the_chosen_namespace() {
    require_root();
    require_tool("ping");
    let _g = serial();
    let mut child = txop()
        .args(["emu", "default", "--in", "sta2", "--shell"])
        .env("SHELL", "/bin/sh")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let id = child.id();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(
            b"echo node=$TXOP_NODE; ping -c 1 -W 2 $TXOP_STA4 | grep -c 'bytes from'\nexit\n",
        )
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let plan = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}{plan}");
    assert_eq!(text, "node=sta2\n1\n", "the shell's output alone");
    for line in [
        format!("sta2     txop-{id}-sta2"),
        "198.18.0.1".to_string(),
        "fd74:786f:7000::1:4".to_string(),
    ] {
        assert!(plan.contains(&line), "{line:?} not in\n{plan}");
    }
    // Each node's TCP congestion control: the host's default, without --cc.
    let cc = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_congestion_control").unwrap();
    let sta2 = plan.lines().find(|l| l.trim_start().starts_with("sta2 "));
    assert!(
        sta2.is_some_and(|l| l.ends_with(&format!("TCP {}", cc.trim()))),
        "{plan}"
    );
    assert_nothing_left(id, "no-marker-86461");
}

/// With ECN negotiated by the kernels, fq_codel (linux-6.16) marks instead of
/// dropping: the marks reach the receiving kernel as CE in valid IP headers (it counts
/// them and no checksum error), and the sender loses nothing.
#[test]
fn ce_marks_reach_the_kernel_in_valid_headers() {
    require_root();
    require_tool("iperf3");
    let _g = serial();
    let dir = scratch("ecn");
    let d = dir.display();
    let script = format!(
        "sysctl -qw net.ipv4.tcp_ecn=1 && nstat -n && iperf3 -s -1 -D -B $TXOP_STA1 && sleep 0.3 && \
         $TXOP_EXE emu exec server -- sh -c 'sysctl -qw net.ipv4.tcp_ecn=1 && \
             iperf3 -c $TXOP_STA1 -C cubic -t 6 -J > {d}/iperf.json' && \
         nstat -az IpExtInCEPkts IpExtInCsumErrors TcpInCsumErrors > {d}/nstat.txt"
    );
    let out = run(&[
        "emu",
        "tcp-ndown-6mbit",
        "--set",
        "stack=linux-6.16",
        "--in",
        "sta1",
        "-o",
        &format!("{d}/out"),
        "--",
        "sh",
        "-c",
        &script,
    ]);
    assert!(out.status.success());
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("out/results.json")).unwrap()).unwrap();
    let marks = r["emulator"]["counters"]["ce_marks"].as_u64().unwrap();
    let nstat = std::fs::read_to_string(dir.join("nstat.txt")).unwrap();
    let counter = |name: &str| -> u64 {
        nstat
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
            .unwrap_or_else(|| panic!("{name} in {nstat}"))
    };
    let iperf: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("iperf.json")).unwrap()).unwrap();
    let retransmits = iperf["end"]["sum_sent"]["retransmits"].as_u64().unwrap();
    eprintln!("CE marks {marks}, kernel: {nstat}, retransmits {retransmits}");
    assert!(marks > 0, "CoDel marked");
    assert_eq!(counter("IpExtInCEPkts"), marks, "every mark arrived as CE");
    assert_eq!(counter("IpExtInCsumErrors") + counter("TcpInCsumErrors"), 0);
    assert_eq!(r["stations"][0]["dropped_aqm"], 0, "marked, not dropped");
    assert_eq!(retransmits, 0, "nothing lost");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `txop emu --pcap` (issue 17): the capture holds the real packets, here ping's echo
/// requests and replies with the payload pattern ping was given, and tshark reads it
/// without a malformed packet.
#[test]
fn an_emulator_capture_shows_the_real_icmp_bytes() {
    require_root();
    require_tool("ping");
    require_tool("tshark");
    let _g = serial();
    let dir = std::env::temp_dir().join(format!("txop-emu-pcap-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.to_str().unwrap();
    // sta1's address (docs/emulator.md).
    let out = run(&[
        "emu",
        "default",
        "-o",
        d,
        "--pcap",
        "-q",
        "--",
        "ping",
        "-c",
        "3",
        "-i",
        "0.2",
        "-p",
        "deadbeef",
        "198.18.1.1",
    ]);
    assert!(out.status.success());
    let file = dir.join("air.pcapng");
    let tshark = |filter: &str, field: &str| -> Vec<String> {
        let o = Command::new("tshark")
            .arg("-r")
            .arg(&file)
            .args(["-Y", filter, "-T", "fields", "-e", field])
            .output()
            .expect("tshark");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(str::to_string)
            .collect()
    };
    let requests = tshark("icmp.type == 8 && wlan.fc.retry == 0", "data.data");
    let replies = tshark("icmp.type == 0 && wlan.fc.retry == 0", "data.data");
    assert_eq!(
        (requests.len(), replies.len()),
        (3, 3),
        "{requests:?} {replies:?}"
    );
    for payload in requests.iter().chain(&replies) {
        assert!(payload.contains("deadbeefdeadbeef"), "{payload}");
    }
    // Each reply answers its request (Wireshark pairs them by id and sequence).
    assert_eq!(tshark("icmp.resp_to", "frame.number").len(), 3);
    assert!(tshark("_ws.malformed", "frame.number").is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

/// `txop emu --pcap` says what the file holds on stderr, as `txop run --pcap` does (and
/// would say what its size bound left out, also under `-q`: the same lines,
/// `txop::pcap::stderr_lines`, tested there); issue 25 found it silent.
#[test]
fn an_emulator_capture_says_what_it_holds() {
    require_root();
    require_tool("ping");
    let _g = serial();
    let dir = std::env::temp_dir().join(format!("txop-emu-pcap-says-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.to_str().unwrap();
    let out = run(&[
        "emu",
        "default",
        "-o",
        d,
        "--pcap",
        "--",
        "ping",
        "-c",
        "2",
        "-i",
        "0.2",
        "198.18.1.1",
    ]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    let line = err
        .lines()
        .find(|l| l.starts_with("txop: air.pcapng: "))
        .unwrap_or_else(|| panic!("no capture line in:\n{err}"));
    assert!(
        line.contains(" PPDUs, ") && line.ends_with(" MiB"),
        "{line}"
    );
    assert!(!err.contains("left out"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Two flats (`[[bss]]` a and b, 200 m apart: out of range of each other, joined only
/// by their wired sides, 5 ms and 20 ms one way), with the simulator's ping from a's
/// station 1 to b's station 1, and b otherwise idle (a ping a second from its station
/// 2: without flows of its own it would inherit the default saturated traffic).
const TWO_FLATS: &str = r#"
seed = 3
duration_s = 8
stack = "linux-6.16"
[phy]
standard = "n"
band = "5"
width_mhz = 20
[space]
layout = "ring"
[stations]
count = 2
distance_m = 5
[wired]
delay_ms = 5
[[bss]]
name = "a"
ap_position_m = [0, 0]
[[bss.flows]]
kind = "ping"
from = "sta1"
to = "b.sta1"
interval_ms = 200
[[bss]]
name = "b"
ap_position_m = [200, 0]
[bss.wired]
delay_ms = 20
[[bss.flows]]
kind = "ping"
from = "sta2"
to = "server"
interval_ms = 1000
"#;

/// `txop emu` of two BSSs: a real ping from a station of flat a to a station of flat
/// b crosses a's air, both wired links (they meet at the junction, where the servers
/// stand) and b's air, and takes what the simulator's ping between the same flats
/// takes (50.3 ms here: 2 × (5 + 20) ms of wire plus four crossings of an idle HT20
/// air). The tolerance is the one-BSS idle ping's: the junction is inside the
/// emulator, so the real packets still cross just two TUN devices and two network
/// stacks on top of the model, which can only add time, and less than a millisecond.
/// A host of the other flat is named `b.sta1` (`txop emu exec`, and in each flat's
/// results, as the simulator names it); each flat's capture (`air-a.pcapng`,
/// `air-b.pcapng`) shows every request and reply crossing its own air with the real
/// bytes; each flat conserves packets (what entered at the junction counts as offered
/// there, what left there as delivered); and everything of both flats is removed at
/// the end.
#[test]
fn a_ping_between_two_flats_matches_the_simulators() {
    require_root();
    require_tool("ping");
    require_tool("tshark");
    let _g = serial();
    let dir = scratch("two-flats");
    let file = dir.join("two-flats.toml");
    std::fs::write(&file, TWO_FLATS).unwrap();
    let file = file.to_str().unwrap();
    let sim = simulate(file, &[]);
    let flat_a = &sim["bss"][0];
    assert_eq!(flat_a["flows"][0]["dst"], "b.sta1");
    let model_ms = sim_ping_median(flat_a, 0.0, 1e9);
    let marker = "86433";
    let script = format!(
        "$TXOP_EXE emu exec b.sta1 -- sh -c 'echo in $TXOP_NODE at $TXOP_STA1; sleep {marker}' & \
         sleep 0.3; ping -c 20 -i 0.2 $TXOP_B_STA1"
    );
    let out_dir = dir.join("out");
    let out_dir = out_dir.to_str().unwrap();
    let (id, out) = emu_output(&[
        "emu", file, "--in", "a.sta1", "-o", out_dir, "--pcap", "--", "sh", "-c", &script,
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("in b.sta1 at 198.18.3.1"), "{text}");
    let samples = ping_samples(&text);
    assert_eq!(samples.len(), 20, "every echo answered: {text}");
    let emu_ms = median(samples.iter().map(|s| s.1).collect());
    eprintln!("ping between flats: model {model_ms:.3} ms, emulated {emu_ms:.3} ms");
    assert!(emu_ms >= model_ms - 0.01, "{emu_ms} < {model_ms}");
    assert!(emu_ms - model_ms < 1.0, "{emu_ms} vs {model_ms}");
    assert_nothing_left(id, marker);
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(Path::new(out_dir).join("results.json")).unwrap())
            .unwrap();
    // Flows in order of first sight: a sees the requests first, b the requests too.
    for (k, (flat, far)) in [("a", "b.sta1"), ("b", "a.sta1")].into_iter().enumerate() {
        let r = &json["bss"][k];
        assert_eq!(r["name"], flat);
        let c = &r["conservation"];
        let n = |key: &str| c[key].as_u64().unwrap();
        assert_eq!(
            n("offered_packets"),
            n("delivered_packets") + n("dropped_packets") + n("inside_packets"),
            "flat {flat}: {c}"
        );
        let names: Vec<(&str, &str)> = r["flows"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["kind"] == "icmp")
            .map(|f| (f["src"].as_str().unwrap(), f["dst"].as_str().unwrap()))
            .collect();
        let expected = match flat {
            "a" => [("sta1", far), (far, "sta1")],
            _ => [(far, "sta1"), ("sta1", far)],
        };
        assert_eq!(names, expected, "flat {flat}");
    }
    // a.sta1 is 198.18.1.1 and b.sta1 198.18.3.1 (docs/emulator.md).
    for flat in ["a", "b"] {
        let file = Path::new(out_dir).join(format!("air-{flat}.pcapng"));
        let count = |filter: &str| {
            let o = Command::new("tshark")
                .arg("-r")
                .arg(&file)
                .args(["-Y", filter, "-T", "fields", "-e", "frame.number"])
                .output()
                .expect("tshark");
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            String::from_utf8_lossy(&o.stdout).lines().count()
        };
        let first_tries = "&& wlan.fc.retry == 0";
        let requests =
            format!("icmp.type == 8 && ip.src == 198.18.1.1 && ip.dst == 198.18.3.1 {first_tries}");
        let replies =
            format!("icmp.type == 0 && ip.src == 198.18.3.1 && ip.dst == 198.18.1.1 {first_tries}");
        assert_eq!(
            (count(&requests), count(&replies)),
            (20, 20),
            "air-{flat}.pcapng"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Ctrl-C during a run of two flats: every namespace of both flats, and the processes
/// started in the other flat through `txop emu exec`, are removed, as with one BSS.
#[test]
fn sigint_leaves_nothing_of_either_flat() {
    require_root();
    let _g = serial();
    let dir = scratch("two-flats-sigint");
    let file = dir.join("two-flats.toml");
    std::fs::write(&file, TWO_FLATS).unwrap();
    let marker = "86441";
    let cmd = format!("$TXOP_EXE emu exec b.sta2 -- sleep {marker}1 & sleep {marker}2");
    let mut child = txop()
        .args(["emu", file.to_str().unwrap(), "--in", "a.sta1", "--"])
        .args(["sh", "-c", &cmd])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let id = child.id();
    assert!(
        wait_until(Duration::from_secs(10), || processes_with(marker).len()
            >= 2),
        "the command's processes did not start"
    );
    assert_eq!(
        namespaces(Some(id)).len(),
        6,
        "two flats of a server and 2 stations"
    );
    unsafe { libc::kill(id as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(
        status.code(),
        Some(128 + libc::SIGINT),
        "exit code 128 + signal"
    );
    assert_nothing_left(id, marker);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--cc` sets each namespace's TCP congestion control (`net.ipv4.tcp_congestion_control`
/// inside it, as the programs there read it), `NODE=NAME` winning over `NAME`, and the
/// summary states what each node had (issue 27: the host's default, BBR on some
/// machines, made a bloated AP look fine). Reno is always allowed in a namespace and
/// the host's default is; a name the host does not allow is refused in one line naming
/// `--cc` and the host's list, exit 2. Nothing is left either way, and the host's own
/// setting is untouched.
#[test]
fn cc_sets_and_states_each_namespaces_congestion_control() {
    require_root();
    let _g = serial();
    let host = || {
        std::fs::read_to_string("/proc/sys/net/ipv4/tcp_congestion_control")
            .unwrap()
            .trim()
            .to_string()
    };
    let default = host();
    // `txop ARGS` with both streams piped: its run id and its output.
    let emu = |args: &[&str]| {
        let child = txop()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        (child.id(), child.wait_with_output().unwrap())
    };
    let stated = |stderr: &str| -> String {
        let line = stderr
            .lines()
            .find(|l| l.starts_with("TCP congestion control"));
        let line = line.unwrap_or_else(|| panic!("no congestion control line: {stderr}"));
        line.split_once("): ").unwrap().1.to_string()
    };
    let marker = "86481";
    let cmd = format!(
        "sleep {marker} & cat /proc/sys/net/ipv4/tcp_congestion_control; \
         $TXOP_EXE emu exec sta2 -- cat /proc/sys/net/ipv4/tcp_congestion_control"
    );
    let sta2 = format!("sta2={default}");
    let (id, out) = emu(&[
        "emu", "default", "--cc", "reno", "--cc", &sta2, "--", "sh", "-c", &cmd,
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("reno\n{default}\n")
    );
    assert_eq!(
        stated(&stderr),
        format!("server reno, sta1 reno, sta2 {default}, sta3 reno, sta4 reno")
    );
    assert_nothing_left(id, marker);
    // Without --cc every node has, and is said to have, the host's default.
    let (id, out) = emu(&["emu", "default", "--", "true"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let all: Vec<String> = ["server", "sta1", "sta2", "sta3", "sta4"]
        .iter()
        .map(|n| format!("{n} {default}"))
        .collect();
    assert_eq!(stated(&stderr), all.join(", "));
    assert_nothing_left(id, marker);
    // A name the kernel does not have: refused in one line, nothing left.
    let (id, out) = emu(&["emu", "default", "--cc", "sta1=no_such_cc", "--", "true"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("--cc sta1=no_such_cc") && err.contains("tcp_allowed_congestion_control"),
        "{err}"
    );
    assert_nothing_left(id, marker);
    assert_eq!(host(), default, "the host's setting is untouched");
}
