//! Errors as a user meets them (issue 18, items 2, 5 and 6): one line each, exit 2
//! for usage and input errors, exit 1 and one line naming the scenario and seed for
//! internal ones, whatever RUST_BACKTRACE says.

mod support;
use std::process::Command;
use support::*;

/// Exit 2, nothing on stdout, exactly one line on stderr, pointing to `--help`.
fn usage_error(args: &[&str], needles: &[&str]) {
    let o = txop(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(o.stdout.is_empty(), "{args:?}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(err.starts_with("txop: error: "), "{err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: {err:?} lacks {n:?}");
    }
}

#[test]
fn usage_errors_are_one_line_with_a_pointer_to_help() {
    usage_error(
        &["run", "default", "--seed", "-1"],
        &["'--seed <SEED>'", "whole number", "see `txop run --help`"],
    );
    usage_error(
        &["run", "default", "--sed", "3"],
        &["'--sed'", "'--seed'", "see `txop run --help`"],
    );
    usage_error(&["run"], &["<SCENARIO>", "see `txop run --help`"]);
    usage_error(&["bogus"], &["'bogus'", "see `txop --help`"]);
    usage_error(
        &["run", "default", "--seed", "abc"],
        &["'abc'", "see `txop run --help`"],
    );
    usage_error(
        &["compare", "default", "--stack"],
        &["'--stack <NAME>'", "see `txop compare --help`"],
    );
    usage_error(
        &["reproduce", "-o"],
        &["'--output <DIR>'", "see `txop reproduce --help`"],
    );
    usage_error(
        &["emu", "--rt-priority", "200", "default", "--", "true"],
        &["'200'", "see `txop emu --help`"],
    );
    usage_error(
        &["run", "default", "extra"],
        &["'extra'", "see `txop run --help`"],
    );
    usage_error(&["stacks", "a", "b"], &["'b'", "see `txop stacks --help`"]);
    usage_error(
        &["run", "default", "--json", "--json"],
        &["'--json'", "see `txop run --help`"],
    );
    usage_error(
        &["emu", "exec", "sta1"],
        &["<COMMAND>", "see `txop emu exec --help`"],
    );
}

#[test]
fn help_and_version_print_normally() {
    for args in [
        &["--help"][..],
        &["run", "--help"],
        &["help", "compare"],
        &["show", "--help"],
    ] {
        let o = txop(args);
        assert_eq!(o.status.code(), Some(0), "{args:?}");
        let out = stdout(&o);
        assert!(out.contains("Usage: txop"), "{args:?}: {out}");
        assert!(out.lines().count() > 5, "{args:?}: {out}");
        assert!(o.stderr.is_empty(), "{args:?}");
    }
    let o = txop(&["--version"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).starts_with("txop "), "{}", stdout(&o));
    // `txop show --help` says what --set does.
    let show = stdout(&txop(&["show", "--help"]));
    let set = show
        .lines()
        .find(|l| l.contains("--set <KEY=VALUE>"))
        .expect("--set listed");
    assert!(set.contains("Override any scenario key"), "{set}");
}

#[test]
fn scenario_files_must_be_small_regular_files() {
    usage_error(&["run", "/dev/zero"], &["/dev/zero: not a regular file"]);
    let dir = scratch("fifo");
    let fifo = dir.join("cell.toml");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    let f = fifo.to_str().unwrap();
    // Reading would block for ever; the check comes first.
    usage_error(&["run", f], &[f, "not a regular file"]);
    usage_error(&["show", f], &[f, "not a regular file"]);
    let big = dir.join("big.toml");
    std::fs::write(&big, "# padding\n".repeat(200_000)).unwrap();
    let b = big.to_str().unwrap();
    usage_error(&["run", b], &[b, "larger than 1024 KiB"]);
    std::fs::remove_dir_all(&dir).ok();
}

/// The near-hangs of issue 18 item 2 are input errors naming the key.
#[test]
fn near_hangs_are_refused_naming_the_key() {
    let long_name = format!("name={}", "x".repeat(30_000));
    for (sets, needle) in [
        (
            &["traffic.kind=cbr", "traffic.rate_mbps=1e300"][..],
            "traffic.rate_mbps: must be above 0 and at most 10000 Mbit/s",
        ),
        (
            &["traffic.probe_interval_ms=1e-9"],
            "traffic.probe_interval_ms: must be 0 (none) or 0.1 ms",
        ),
        (&[&long_name], "name: 30000 characters; at most 200"),
        (&["duration_s=2e6"], "duration_s: must be 0.001 s to 1e6 s"),
        (
            &["stack_options.quantum_shift=64"],
            "stack_options.quantum_shift: must be 0 to 16",
        ),
        (
            &["stack_options.airtime_flags=4"],
            "stack_options.airtime_flags: must be 0 to 3",
        ),
        (&["traffic=[]"], "traffic: expected a table"),
        (
            &["traffic.test=tcp_ndown", "traffic.streams=0"],
            "traffic.streams: must be 1 to 1000",
        ),
    ] {
        let mut args = vec!["run", "default"];
        for s in sets {
            args.extend(["--set", s]);
        }
        usage_error(&args, &[&format!("default: {needle}")]);
    }
}

#[test]
fn compare_refuses_a_key_varied_twice_and_too_many_runs() {
    usage_error(
        &[
            "compare",
            "default",
            "--vary",
            "stations.count=1,2",
            "--vary",
            "stations.count=3",
        ],
        &["--vary stations.count: the key is varied twice"],
    );
    let nine = "1,2,3,4,5,6,7,8,9";
    let mut args = vec!["compare", "default"];
    let keys: Vec<String> = (0..9).map(|k| format!("k{k}={nine}")).collect();
    for k in &keys {
        args.extend(["--vary", k]);
    }
    usage_error(&args, &["387420489 runs; at most 1000"]);
}

/// A bare built-in name means the built-in, with a warning when a file of that name
/// is here; `./NAME` means the file.
#[test]
fn a_builtin_name_shadowing_a_file_is_said() {
    let dir = scratch("shadow");
    std::fs::write(
        dir.join("default"),
        "name = \"mine\"\nduration_s = 0.5\n[stations]\ncount = 2\n",
    )
    .unwrap();
    let run = |spec: &str| {
        Command::new(env!("CARGO_BIN_EXE_txop"))
            .args(["run", spec, "--set", "duration_s=0.5"])
            .current_dir(&dir)
            .output()
            .unwrap()
    };
    let o = run("default");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with("default: 4 stations"),
        "{}",
        stdout(&o)
    );
    assert_eq!(
        stderr(&o),
        "txop: warning: `default` is the built-in scenario; the file `default` here is not \
         read (give it as ./default to run it)\n"
    );
    let o = run("./default");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("mine: 2 stations"), "{}", stdout(&o));
    assert!(o.stderr.is_empty(), "{}", stderr(&o));
    // No file, no warning.
    let o = txop(&["run", "default", "--set", "duration_s=0.5"]);
    assert!(o.stderr.is_empty(), "{}", stderr(&o));
    std::fs::remove_dir_all(&dir).ok();
}
