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

/// Issue 25 item 5: a bad `--set stations.rate_control` in a scenario whose stations
/// are a list was reported under `stations.list[0].rate_control`, a key the user did
/// not write; so were the other keys a list entry inherits.
#[test]
fn an_inherited_key_is_named_as_written() {
    usage_error(
        &["run", "default", "--set", "stations.rate_control=minstrel"],
        &[
            "default: stations.rate_control: unknown value `minstrel`; expected one of \
             fixed, ideal, minstrel_ht",
        ],
    );
    usage_error(
        &["run", "default", "--set", "stations.scan.policy=sometimes"],
        &["default: stations.scan.policy: unknown value `sometimes`"],
    );
    // An entry's own value is named as the entry's.
    usage_error(
        &[
            "run",
            "default",
            "--set",
            "stations.list[0].rate_control=minstrel",
        ],
        &["default: stations.list[0].rate_control: unknown value `minstrel`"],
    );
}

/// Issue 25 item 5: a value of the wrong type for a key that takes one of a set of
/// names gave serde's words ("invalid type: unit variant, expected string only");
/// now one line names the key, the value given and the names accepted, on the
/// command line and in a file.
#[test]
fn a_choice_of_the_wrong_type_names_the_key_value_and_choices() {
    for (set, needle) in [
        (
            "stack=5",
            "default: stack: unknown stack `5`; expected one of simple, linux-4.8-bloated,",
        ),
        (
            "traffic.kind=3",
            "default: traffic.kind: unknown value `3`; expected one of saturated, cbr",
        ),
        (
            "traffic.direction=true",
            "default: traffic.direction: unknown value `true`; expected one of uplink, \
             downlink, both",
        ),
        (
            "phy.standard=11",
            "default: phy.standard: unknown value `11`; expected one of b, a, g, n, ac",
        ),
        (
            "stack_options.scheduler=2",
            "default: stack_options.scheduler: unknown value `2`; expected one of \
             round_robin,",
        ),
        (
            "phy.band=true",
            "default: phy.band: unknown band `true`, expected \"2.4\" or \"5\"",
        ),
    ] {
        usage_error(&["run", "default", "--set", set], &[needle]);
    }
    let dir = scratch("choice-type");
    let file = dir.join("cell.toml");
    std::fs::write(&file, "[traffic]\nkind = 3\ndirection = true\n").unwrap();
    let f = file.to_str().unwrap();
    usage_error(
        &["run", f],
        &[&format!(
            "{f}: traffic.direction: unknown value `true`; expected one of"
        )],
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 25 item 5: a number TOML cannot hold (`seed = 18446744073709551615`, past
/// i64) was "line 1: invalid TOML: u64 value was too large", naming no key.
#[test]
fn a_number_too_large_for_toml_names_its_key() {
    let dir = scratch("too-large");
    let file = dir.join("cell.toml");
    let f = file.to_str().unwrap();
    std::fs::write(&file, "seed = 18446744073709551615\n").unwrap();
    usage_error(
        &["run", f],
        &[&format!(
            "{f}: line 1: seed: invalid TOML: integer out of range; TOML integers are \
             -9223372036854775808 to 9223372036854775807"
        )],
    );
    std::fs::write(
        &file,
        "[stations]\ncount = 2\n[[stations.list]]\nmcs = 99999999999999999999\n",
    )
    .unwrap();
    usage_error(
        &["run", f],
        &[&format!(
            "{f}: line 4: stations.list[0].mcs: invalid TOML: integer out of range"
        )],
    );
    // On the command line, digits TOML cannot hold are not taken as a word.
    usage_error(
        &["run", "default", "--set", "seed=18446744073709551615"],
        &["default: seed: 18446744073709551615: integer out of range; TOML integers"],
    );
    std::fs::write(
        &file,
        "duration_s = 1\n[stations]\ncount = 2\n[[flows]]\nkind = \"cbr\"\n\
         [[flows]]\nkind = \"cbr\"\nrate_mbps = 99999999999999999999\n",
    )
    .unwrap();
    usage_error(
        &["run", f],
        &[&format!("{f}: line 8: flows[1].rate_mbps: ")],
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// A scenario of two stations replaying `trace` (the file's contents) from `walk.csv`
/// beside it: the command's output.
fn run_trace(name: &str, trace: &str) -> (std::process::Output, String) {
    let dir = scratch(name);
    std::fs::write(dir.join("walk.csv"), trace).unwrap();
    let file = dir.join("cell.toml");
    std::fs::write(
        &file,
        "duration_s = 0.2\n[stations]\ncount = 2\nsnr_trace = \"walk.csv\"\n",
    )
    .unwrap();
    let f = file.to_str().unwrap().to_string();
    let o = txop(&["run", &f]);
    std::fs::remove_dir_all(&dir).ok();
    (o, f)
}

/// Issue 25 item 5: a trace saved by a spreadsheet (a UTF-8 byte-order mark before
/// the header) was refused with `unknown column "time_s"`.
#[test]
fn a_trace_with_a_byte_order_mark_is_read() {
    let (o, _) = run_trace(
        "trace-bom",
        "\u{feff}time_s,station,snr_db\r\n0,1,30\r\n0,2,20\r\n",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("2 stations"), "{}", stdout(&o));
}

/// Issue 25 item 5: an SNR of 1e308 dB was accepted; rows for a station the scenario
/// does not have were ignored. Both are refused naming the key, file, line and what.
#[test]
fn a_trace_out_of_range_or_for_no_station_is_refused() {
    for (name, trace, needle) in [
        (
            "trace-huge",
            "0,1,30\n0,2,1e308\n",
            "walk.csv:2:5: snr_db: must be -100 to 140 dB, got 1e308",
        ),
        (
            "trace-absent",
            "0,1,30\n0,2,20\n1,1,25\n0,3,20\n",
            "walk.csv:4: station: 3 is not a station of this scenario (it has 2)",
        ),
    ] {
        let (o, f) = run_trace(name, trace);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(o.stdout.is_empty());
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with(&format!("txop: error: {f}: stations.snr_trace: ")),
            "{err}"
        );
        assert!(err.contains(needle), "{err:?} lacks {needle:?}");
    }
}

/// The A-MSDU keys (reference mac80211-tx-path.md §16) refuse what no station or
/// driver says, in one line naming the key, exit 2.
#[test]
fn amsdu_keys_refuse_values_no_device_advertises() {
    for (set, needle) in [
        (
            "stack_options.amsdu_max_len_bytes=4000",
            "amsdu_max_len_bytes: 4000",
        ),
        (
            "stack_options.amsdu_max_subframes=7",
            "amsdu_max_subframes: 7",
        ),
        ("stack_options.amsdu_max_frags=300", "amsdu_max_frags"),
        ("stack=linux-4.8-bloated", "stack_options.amsdu: "),
    ] {
        let o = txop(&[
            "run",
            "default",
            "--set",
            "stack_options.amsdu=true",
            "--set",
            set,
        ]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{set}: {err}");
        assert_eq!(err.lines().count(), 1, "{set}: {err}");
        assert!(err.contains(needle), "{set}: {err}");
    }
}

/// `stack_options.mt76_chip` names an mt76 firmware stage's token pool: on another
/// stack, or with an unknown chip, it is refused in one line naming the key, exit 2.
#[test]
fn mt76_chip_is_refused_off_mt76_and_for_unknown_chips() {
    for (sets, needle) in [
        (
            &["stack_options.mt76_chip=mt7996"][..],
            "stack_options.mt76_chip: only an mt76 stack",
        ),
        (
            &["stack=mt76", "stack_options.mt76_chip=mt7921"][..],
            "stack_options.mt76_chip: unknown value `mt7921`; expected one of mt7915, mt7996",
        ),
    ] {
        let mut args = vec!["run", "default"];
        for s in sets {
            args.extend(["--set", s]);
        }
        let o = txop(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{sets:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{sets:?}: {err}");
        assert!(err.contains(needle), "{sets:?}: {err}");
    }
}
