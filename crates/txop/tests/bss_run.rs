//! `txop run` of a scenario with several BSSs (`[[bss]]`): the table, the JSON, the
//! results directory, determinism, and `compare` over several BSSs.

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

/// `txop compare --stack A --stack B` on an apartment block: the setting holds for the
/// whole run, so every flat runs each stack (over each `[[bss]]` entry's own), one
/// table per BSS with a column per setting, and each setting's run is exactly `txop
/// run` with every entry's stack set to it.
#[test]
fn compare_stacks_on_an_apartment_block() {
    let stacks = ["linux-4.9", "linux-6.16"];
    let short = [
        "--set",
        "traffic.length_s=2",
        "--set",
        "traffic.delay_s=0.5",
    ];
    let mut args = vec!["compare", "apartment-block"];
    for s in stacks {
        args.extend(["--stack", s]);
    }
    args.extend(short);
    let dir = scratch("compare-bss");
    let out = dir.join("cmp");
    let mut with_dir = args.clone();
    with_dir.extend(["-o", out.to_str().unwrap()]);
    let o = txop(&with_dir);
    assert!(o.status.success(), "{}", stderr(&o));
    let table = stdout(&o);
    let bsss = ["bloated", "modern", "fq-codel", "aql"];
    for b in bsss {
        let title = format!("apartment-block / bss {b} (channel 36): 2 settings compared");
        assert!(table.contains(&title), "no table for {b}:\n{table}");
    }
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    assert_valid(&v, "results.json of compare on apartment-block");
    let mut json_args = args.clone();
    json_args.push("--json");
    let printed: serde_json::Value = serde_json::from_slice(&txop(&json_args).stdout).unwrap();
    assert_valid(&printed, "compare --json on apartment-block");
    for (k, stack) in stacks.iter().enumerate() {
        let run = &v["runs"][k];
        assert_eq!(run["label"], *stack);
        let mut single = vec!["run", "apartment-block", "--json"];
        single.extend(short);
        let sets: Vec<String> = (0..bsss.len())
            .map(|i| format!("bss[{i}].stack={stack}"))
            .collect();
        for s in &sets {
            single.extend(["--set", s.as_str()]);
        }
        let single: serde_json::Value = serde_json::from_slice(&txop(&single).stdout).unwrap();
        for (i, b) in bsss.iter().enumerate() {
            let bss = &run["bss"][i];
            assert_eq!(bss["name"], *b);
            assert_eq!(bss["resolved"]["stack"], *stack, "{b} under {stack}");
            for key in ["flows", "stations", "total_throughput_bps", "conservation"] {
                assert_eq!(bss[key], single["bss"][i][key], "{b} under {stack}: {key}");
                assert_eq!(printed["runs"][k]["bss"][i][key], bss[key], "{b}: {key}");
            }
            // A flent file per setting and BSS.
            let flent = out.join(format!(
                "rtt_fair_down-apartment-block-{stack}_{b}.flent.gz"
            ));
            assert!(flent.is_file(), "missing {}", flent.display());
        }
    }
    // The stack changed the run: the bloated flat's own ping differs.
    assert_ne!(
        v["runs"][0]["bss"][0]["flows"],
        v["runs"][1]["bss"][0]["flows"]
    );
    // `bss[N].KEY` varies one BSS; the others keep their own stack.
    let o = txop(&[
        "compare",
        "apartment-block",
        "--vary",
        "bss[0].stack=linux-4.9,linux-6.16",
        "--set",
        "traffic.length_s=2",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for k in 0..2 {
        let single = txop(&[
            "run",
            "apartment-block",
            "--set",
            "traffic.length_s=2",
            "--set",
            ["bss[0].stack=linux-4.9", "bss[0].stack=linux-6.16"][k],
            "--json",
        ]);
        let single: serde_json::Value = serde_json::from_slice(&single.stdout).unwrap();
        assert_eq!(v["runs"][k]["bss"], single["bss"], "setting {k}");
    }
}

/// `txop reproduce` runs the seed experiments (E1–E5), whose scenarios are one cell
/// each; a scenario's name is not one of them.
#[test]
fn reproduce_takes_experiments_not_scenarios() {
    assert_user_error(
        &["reproduce", "neighbours-in-range"],
        &["neighbours-in-range: no such experiment"],
    );
}

/// `--set stack=…` on apartment-block, where every `[[bss]]` entry names its own stack,
/// would change nothing: refused in one line naming the per-BSS keys. A key only some
/// entries give still reaches the others.
#[test]
fn a_setting_every_bss_overrides_is_refused() {
    assert_user_error(
        &["run", "apartment-block", "--set", "stack=linux-4.9"],
        &[
            "apartment-block: stack: every [[bss]] entry gives its own",
            "bss[0].stack … bss[3].stack",
        ],
    );
    let o = txop(&[
        "run",
        "apartment-block",
        "--set",
        "traffic.length_s=1",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}
