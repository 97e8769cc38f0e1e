//! `txop run` of a scenario with several BSSs (`[[bss]]`): the table, the JSON, the
//! results directory, determinism, and the commands that refuse such a scenario.

mod support;
use support::*;

fn json(args: &[&str]) -> serde_json::Value {
    let o = txop(args);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_str(&stdout(&o)).expect("valid JSON")
}

#[test]
fn every_bss_reports_under_its_name_with_its_packets_conserved() {
    let v = json(&[
        "run",
        "neighbours-in-range",
        "--json",
        "--set",
        "duration_s=3",
    ]);
    assert_eq!(v["scenario"], "neighbours-in-range");
    let bss = v["bss"].as_array().expect("a bss array");
    let names: Vec<&str> = bss.iter().map(|b| b["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["a", "b"]);
    for b in bss {
        assert_eq!(b["channel"], 36);
        assert!(
            b["total_throughput_bps"].as_f64().unwrap() > 0.0,
            "{}",
            b["name"]
        );
        let shares: f64 = b["stations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["airtime_share"].as_f64().unwrap())
            .sum();
        assert!((shares - 1.0).abs() < 1e-9, "shares sum to {shares}");
        let c = &b["conservation"];
        let n = |k: &str| c[k].as_u64().unwrap();
        assert_eq!(
            n("offered_packets"),
            n("delivered_packets") + n("dropped_packets") + n("inside_packets"),
            "{}",
            b["name"]
        );
    }
    // The BSSs draw from their own streams: two BSSs alike do not run alike.
    assert_ne!(bss[0]["seed"], bss[1]["seed"]);
}

#[test]
fn the_same_seed_gives_the_same_bytes_and_another_seed_others() {
    let args = [
        "run",
        "neighbours-in-range",
        "--json",
        "--set",
        "duration_s=2",
    ];
    let (a, b) = (txop(&args), txop(&args));
    assert!(a.status.success(), "{}", stderr(&a));
    assert_eq!(a.stdout, b.stdout);
    let mut other = args.to_vec();
    other.extend(["--seed", "2"]);
    assert_ne!(a.stdout, txop(&other).stdout);
}

#[test]
fn the_table_has_a_column_per_bss_and_each_bss_its_stations() {
    let o = txop(&["run", "apartment-block", "--set", "duration_s=2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.starts_with("apartment-block: 4 BSSs side by side"),
        "{out}"
    );
    for name in ["bloated", "modern", "fq-codel", "aql"] {
        assert!(
            out.contains(&format!("apartment-block / bss {name} (channel 36)")),
            "no section for {name}:\n{out}"
        );
    }
}

#[test]
fn a_results_directory_holds_the_summary_json_plots_and_a_flent_file_per_bss() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bss_run");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("r");
    let o = txop(&[
        "run",
        "neighbours-in-range",
        "--set",
        "duration_s=8",
        "-o",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stdout.is_empty());
    for f in [
        "summary.txt",
        "results.json",
        "throughput.png",
        "rrul-neighbours-in-range-a.flent.gz",
        "rrul-neighbours-in-range-b.flent.gz",
    ] {
        assert!(out.join(f).is_file(), "missing {f}");
    }
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    // results.json carries each BSS as resolved, its own keys over the scenario's.
    assert!(v["bss"][1]["resolved"]["stations"].is_object());
}

#[test]
fn commands_that_take_one_cell_refuse_several_bsss_naming_the_key() {
    for args in [
        vec![
            "compare",
            "neighbours-in-range",
            "--stack",
            "linux-6.16",
            "--stack",
            "linux-4.9",
        ],
        vec!["reproduce", "neighbours-in-range"],
    ] {
        let o = txop(&args);
        assert!(!o.status.success(), "{args:?} succeeded");
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }
    let o = txop(&[
        "compare",
        "neighbours-in-range",
        "--stack",
        "linux-6.16",
        "--stack",
        "linux-4.9",
    ]);
    assert!(stderr(&o).contains("bss"), "{}", stderr(&o));
}
