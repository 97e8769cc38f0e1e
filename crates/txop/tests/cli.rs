//! The `txop` command as a user runs it: output, determinism and errors.

mod support;
use support::*;

#[test]
fn json_is_byte_identical_for_same_seed() {
    let args = ["run", "default", "--json", "--set", "duration_s=2"];
    let a = txop(&args);
    let b = txop(&args);
    assert!(a.status.success(), "{}", stderr(&a));
    assert!(!a.stdout.is_empty());
    assert_eq!(
        a.stdout, b.stdout,
        "same scenario and seed must give identical JSON"
    );
    let c = txop(&[
        "run",
        "default",
        "--json",
        "--set",
        "duration_s=2",
        "--seed",
        "2",
    ]);
    assert!(c.status.success());
    assert_ne!(a.stdout, c.stdout, "another seed should change the results");
}

#[test]
fn json_has_documented_fields() {
    let o = txop(&["run", "anomaly", "--json", "--set", "duration_s=2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("valid JSON");
    assert_eq!(v["scenario"], "anomaly");
    assert!(v["total_throughput_bps"].as_f64().unwrap() > 1e6);
    let stations = v["stations"].as_array().unwrap();
    assert_eq!(stations.len(), 2);
    let mut share_sum = 0.0;
    for s in stations {
        assert!(s["throughput_bps"].as_f64().unwrap() > 0.0);
        share_sum += s["airtime_share"].as_f64().unwrap();
    }
    assert!(
        (share_sum - 1.0).abs() < 1e-9,
        "airtime shares sum to {share_sum}"
    );
    let c = &v["conservation"];
    let n = |k: &str| c[k].as_u64().unwrap();
    assert_eq!(
        n("offered_packets"),
        n("delivered_packets") + n("dropped_packets") + n("inside_packets")
    );
}

#[test]
fn table_lists_every_station_and_total() {
    let o = txop(&["run", "default", "--set", "duration_s=1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for needle in ["station", "HT20 MCS7 LGI", "HT20 MCS0 LGI", "total", "Jain"] {
        assert!(out.contains(needle), "missing {needle:?} in:\n{out}");
    }
    assert_eq!(out.lines().filter(|l| l.contains("HT20 MCS")).count(), 4);
}

#[test]
fn every_builtin_scenario_runs() {
    let names = builtin_names();
    assert!(names.len() >= 3, "{names:?}");
    for name in names {
        let o = txop(&["run", &name, "--set", "duration_s=0.5"]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        assert!(stdout(&o).contains("total"), "{name}");
    }
}

#[test]
fn unknown_scenario_suggests_nearest() {
    assert_user_error(&["run", "defualt"], &["defualt", "did you mean `default`"]);
}

#[test]
fn unknown_key_names_key_and_suggests() {
    assert_user_error(
        &["run", "default", "--set", "phy.standrd=ac"],
        &["default: phy.standrd: unknown key", "`standard`"],
    );
}

#[test]
fn wrong_type_names_key() {
    assert_user_error(
        &["run", "default", "--set", "stations.count=many"],
        &["stations.count", "invalid type"],
    );
}

#[test]
fn impossible_values_name_key() {
    assert_user_error(
        &[
            "run",
            "bianchi-11a",
            "--set",
            "phy.standard=ac",
            "--set",
            "phy.band=2.4",
            "--set",
            "stations.rate_mbps=0",
        ],
        &["phy.band"],
    );
    assert_user_error(
        &["run", "default", "--set", "stations.list[0].mcs=16"],
        &["stations.list"],
    );
    assert_user_error(
        &["run", "default", "--set", "stations.count=6"],
        &["stations.count", "stations.list[N].count"],
    );
    assert_user_error(
        &[
            "run",
            "bianchi-11a",
            "--set",
            "phy.standard=ac",
            "--set",
            "mac.qos=true",
            "--set",
            "stations.rate_mbps=0",
        ],
        &["rate_mbps"],
    );
}

#[test]
fn bad_scenario_file_names_file_and_line() {
    let dir = std::env::temp_dir().join(format!("txop-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("broken.toml");
    std::fs::write(&f, "[phy]\nstandard = \"n\"\nband = \n").unwrap();
    let path = f.to_string_lossy().into_owned();
    assert_user_error(&["run", &path], &[&path, "line 3", "invalid TOML"]);
    let g = dir.join("vht20.toml");
    std::fs::write(&g, "[phy]\nstandard = \"ac\"\n[stations]\nmcs = 9\n").unwrap();
    let path = g.to_string_lossy().into_owned();
    assert_user_error(&["run", &path], &[&path, "stations.mcs", "MCS 9"]);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn malformed_set_is_an_error() {
    assert_user_error(&["run", "default", "--set", "novalue"], &["KEY=VALUE"]);
}

#[test]
fn stacks_lists_every_era_with_its_parts() {
    let o = txop(&["stacks"]);
    assert!(o.status.success());
    let out = stdout(&o);
    for era in [
        "linux-4.8-bloated",
        "fq_codel-qdisc",
        "linux-4.9",
        "linux-4.11-ath9k",
        "linux-5.5",
        "linux-5.14",
        "linux-6.0",
        "linux-6.16",
        "mt76",
        "ath11k",
        "ath11k-aql",
    ] {
        assert!(out.lines().any(|l| l == era), "{era} missing");
    }
    // The firmware-stage presets name their kernel and sources (issue 30).
    let o = txop(&["stacks", "ath11k"]);
    let out = stdout(&o);
    for part in [
        "    kernel         6.12.117",
        "    sources        ",
        "ath11k/",
    ] {
        assert!(out.contains(part), "{part} missing:\n{out}");
    }
    for part in [
        "qdisc",
        "mac80211 TXQs",
        "scheduler",
        "queue limit",
        "driver",
    ] {
        assert!(out.contains(part), "{part} missing");
    }
    assert_user_error(&["stacks", "linux-9"], &["linux-9", "no such stack"]);
}

#[test]
fn unknown_stack_and_bad_stack_option_name_the_key() {
    assert_user_error(
        &["run", "default", "--set", "stack=linux-6.61"],
        &[
            "default: stack: unknown stack `linux-6.61`",
            "did you mean `linux-6.16`",
        ],
    );
    assert_user_error(
        &["run", "default", "--set", "stack_options.scheduler=fastest"],
        &[
            "stack_options.scheduler",
            "unknown value `fastest`",
            "drr_aql",
        ],
    );
    assert_user_error(
        &["run", "default", "--set", "stack_options.shceduler=drr"],
        &["stack_options.shceduler", "did you mean `scheduler`"],
    );
}

#[test]
fn stack_changes_the_outcome() {
    let shares = |stack: &str| -> f64 {
        let o = txop(&[
            "run",
            "default",
            "--json",
            "--set",
            "duration_s=3",
            "--set",
            &format!("stack={stack}"),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        v["stations"][3]["airtime_share"].as_f64().unwrap()
    };
    // The slow station's airtime: most of it with a shared FIFO, a quarter with ATF.
    assert!(shares("linux-4.8-bloated") > 0.6);
    assert!(shares("linux-6.16") < 0.3);
}

#[test]
fn flent_test_and_web_page_through_the_cli() {
    let o = txop(&[
        "run",
        "tcp-ndown-6mbit",
        "--json",
        "--set",
        "traffic.length_s=10",
        "--set",
        "traffic.web={connections=2, objects_bytes=[20000, 10000, 10000]}",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(
        (v["duration_s"].as_f64().unwrap() - 20.0).abs() < 1e-9,
        "delay + length + delay"
    );
    let flows = v["flows"].as_array().unwrap();
    let kinds: Vec<&str> = flows.iter().map(|f| f["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, vec!["tcp", "tcp", "tcp", "tcp", "ping", "web"]);
    assert!(flows[5]["page_load_times_s"].as_array().unwrap().len() == 1);
    assert!(flows[4]["rtt_samples"].as_array().unwrap().len() > 90);
    assert_user_error(
        &["run", "tcp-ndown-6mbit", "--set", "traffic.test=tcp_down"],
        &["traffic.test", "unknown flent test `tcp_down`"],
    );
    assert_user_error(
        &["run", "tcp-ndown-6mbit", "--set", "traffic.web={station=3}"],
        &["traffic.web.station", "no station 3"],
    );
}

/// A results directory with summary, JSON and a flent data file that flent itself
/// opens and plots (issue 5); refusing to overwrite, leaving nothing half-written.
#[test]
fn results_directory_and_flent_file() {
    let dir = scratch("results");
    let out = dir.join("rrul");
    let o = txop(&[
        "run",
        "tcp-ndown-6mbit",
        "--set",
        "traffic.test=rrul",
        "--set",
        "traffic.length_s=10",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let summary = std::fs::read_to_string(out.join("summary.txt")).unwrap();
    assert_eq!(summary, stdout(&o), "summary.txt is what was printed");
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(v["resolved"]["traffic"]["test"], "rrul");
    assert!(v["flows"].as_array().unwrap().len() == 12);
    for plot in ["latency-cdf", "latency-time", "throughput", "stations"] {
        assert!(out.join(format!("{plot}.png")).exists(), "{plot}.png");
        assert!(out.join(format!("{plot}.svg")).exists(), "{plot}.svg");
    }
    let flent = out.join("rrul-tcp-ndown-6mbit.flent.gz");
    flent_renders(&flent, "all_scaled", &dir.join("rrul.png"));
    flent_renders(&flent, "ping_cdf", &dir.join("rrul-cdf.png"));

    // An existing directory is refused, and left as it was.
    assert_user_error(
        &["run", "default", "-o", out.to_str().unwrap()],
        &["output directory exists", "--force"],
    );
    assert!(out.join("rrul-tcp-ndown-6mbit.flent.gz").exists());
    // With --force it is replaced (no flent file for non-flent traffic).
    let o = txop(&[
        "run",
        "default",
        "--set",
        "duration_s=1",
        "-o",
        out.to_str().unwrap(),
        "--force",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!out.join("rrul-tcp-ndown-6mbit.flent.gz").exists());
    // Nothing partial is left beside it.
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("partial"))
        .collect();
    assert!(leftovers.is_empty());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn flent_file_is_deterministic() {
    let dir = scratch("det");
    let mut files = Vec::new();
    for k in ["a", "b"] {
        let out = dir.join(k);
        let o = txop(&[
            "run",
            "tcp-ndown-6mbit",
            "--set",
            "traffic.length_s=5",
            "-o",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        files.push(std::fs::read(out.join("tcp_ndown-tcp-ndown-6mbit.flent.gz")).unwrap());
    }
    assert_eq!(files[0], files[1]);
    flent_renders(
        &dir.join("a").join("tcp_ndown-tcp-ndown-6mbit.flent.gz"),
        "ping_cdf",
        &dir.join("cdf.png"),
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `txop show` prints every key resolved; running what it prints gives the same
/// results as the original.
#[test]
fn show_round_trips() {
    let dir = scratch("show");
    let o = txop(&["show", "tcp-ndown-6mbit", "--set", "traffic.length_s=3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    for key in [
        "stack = \"linux-6.16\"",
        "[phy]",
        "guard_interval",
        "[wired]",
        "test = \"tcp_ndown\"",
    ] {
        assert!(text.contains(key), "{key} missing from:\n{text}");
    }
    let file = dir.join("shown.toml");
    std::fs::write(&file, &text).unwrap();
    let a = txop(&[
        "run",
        "tcp-ndown-6mbit",
        "--set",
        "traffic.length_s=3",
        "--json",
    ]);
    let b = txop(&["run", file.to_str().unwrap(), "--json"]);
    assert!(a.status.success() && b.status.success(), "{}", stderr(&b));
    assert_eq!(a.stdout, b.stdout);
    std::fs::remove_dir_all(&dir).ok();
}

/// A write that fails (here: the output's parent is a file) is one clear error, exit 2,
/// and leaves nothing behind.
#[test]
fn failed_write_leaves_nothing() {
    let dir = scratch("failwrite");
    let blocker = dir.join("not-a-dir");
    std::fs::write(&blocker, b"x").unwrap();
    let out = blocker.join("results");
    assert_user_error(
        &[
            "run",
            "default",
            "--set",
            "duration_s=1",
            "-o",
            out.to_str().unwrap(),
        ],
        &["cannot create the directory"],
    );
    let entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .collect();
    assert_eq!(entries.len(), 1, "only the blocking file remains");
    std::fs::remove_dir_all(&dir).ok();
}
