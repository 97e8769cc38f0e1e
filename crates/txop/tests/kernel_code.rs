//! "Bring your patch" (issue 28): a scenario's stations run the kernel's own
//! `rc80211_minstrel_ht.c` (`rate_control = "minstrel_ht-kernel"`, built at run time by
//! txop-kernel) instead of txop's Rust, end to end through the `txop` binary; and every
//! node runs the kernel's fq/CoDel and AQL (`[kernel] units = ["fq", "aql"]`).
//!
//! - The stock code (Debian's linux-source-6.12) gives the same `--json` as txop's
//!   minstrel_ht-6, which the kernel-oracle harness finds equal to it step by step, but
//!   for the fields that name the code: each station's `rate` label and
//!   `rate_control.kind` (`minstrel_ht-kernel`), and `rate_control.code`.
//! - A copy of the tree with one constant changed (made here, in a temporary
//!   directory) changes the results, and the results name that copy and a hash of its
//!   own.
//! - A tree that does not build, or a directory that does not exist, is one line on
//!   stderr (exit 2) naming the file, and for the build, the line and the symbol.
//!
//! Needs the Debian package (`scripts/setup.sh` installs it) and a C compiler; the
//! built objects are cached under the test's own temporary directory.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const TARBALL: &str = "/usr/src/linux-source-6.12.tar.xz";

/// Two stations at 20 dB and one at 11 dB (where minstrel probes and moves most), a
/// saturated downlink, 3 s.
fn sets(rate_control: &str) -> Vec<String> {
    vec![
        "--set".into(),
        format!(
            "stations.list=[{{count=2,snr_db=20,rate_control=\"{rate_control}\"}},\
             {{snr_db=11,rate_control=\"{rate_control}\"}}]"
        ),
        "--set".into(),
        "traffic.kind=saturated".into(),
        "--set".into(),
        "traffic.probe_interval_ms=0".into(),
        "--set".into(),
        "duration_s=3".into(),
    ]
}

fn cache() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("kernel-code-cache")
}

fn txop(args: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_txop"))
        .args(args)
        .env("TXOP_CACHE_DIR", cache())
        .output()
        .expect("run txop")
}

/// `txop run default … --json` with `rate_control`, and more arguments; its JSON.
fn run_json(rate_control: &str, more: &[String]) -> serde_json::Value {
    let mut args: Vec<String> = vec!["run".into(), "default".into(), "--json".into()];
    args.extend(sets(rate_control));
    args.extend(more.iter().cloned());
    serde_json::from_slice(&succeeded(&args)).expect("--json is JSON")
}

/// `txop ARGS`' stdout; it must succeed.
fn succeeded(args: &[String]) -> Vec<u8> {
    let out = txop(args);
    assert!(
        out.status.success(),
        "txop {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The JSON without what names the code (each station's `rate` label,
/// `rate_control.kind` and `rate_control.code`), as text.
fn without_code_names(mut v: serde_json::Value) -> String {
    for st in v["stations"].as_array_mut().expect("stations") {
        st["rate"] = serde_json::Value::Null;
        let rc = st["rate_control"].as_object_mut().expect("a rate control");
        rc.remove("kind");
        rc.remove("code");
    }
    serde_json::to_string_pretty(&v).unwrap()
}

/// The kernel files of the Debian tarball, unpacked into a fresh directory (a tree
/// the test can change).
fn unpack_tree(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let status = Command::new("tar")
        .args(["-xJf", TARBALL, "-C"])
        .arg(&dir)
        .args([
            "--strip-components=1",
            "--wildcards",
            "--no-wildcards-match-slash",
            "*/Makefile",
            "*/net/mac80211/rc80211_minstrel_ht.c",
            "*/net/mac80211/rc80211_minstrel_ht.h",
            "*/net/mac80211/util.c",
            "*/include/net/mac80211.h",
            "*/include/net/fq.h",
            "*/include/net/fq_impl.h",
            "*/include/net/codel.h",
            "*/include/net/codel_impl.h",
            "*/include/net/inet_ecn.h",
            "*/net/mac80211/tx.c",
            "*/net/mac80211/sta_info.c",
            "*/net/mac80211/ieee80211_i.h",
            "*/net/mac80211/wme.c",
            "*/net/mac80211/airtime.c",
        ])
        .status()
        .expect("run tar");
    assert!(status.success(), "tar could not unpack {TARBALL}");
    dir
}

/// Replace the one occurrence of `from` in `dir/file` by `to`.
fn patch(dir: &Path, file: &str, from: &str, to: &str) {
    let p = dir.join(file);
    let text = std::fs::read_to_string(&p).unwrap();
    assert_eq!(text.matches(from).count(), 1, "{file}: `{from}` once");
    std::fs::write(&p, text.replacen(from, to, 1)).unwrap();
}

fn code(v: &serde_json::Value) -> &serde_json::Value {
    &v["stations"][0]["rate_control"]["code"]
}

#[test]
fn the_kernels_minstrel_gives_txops_results_and_a_patch_changes_them() {
    assert!(
        Path::new(TARBALL).exists(),
        "{TARBALL} is missing: apt-get install linux-source-6.12 (scripts/setup.sh does)"
    );
    let rust = run_json("minstrel_ht-6", &[]);
    let stock = run_json("minstrel_ht-kernel", &[]);

    // Which code ran: the tarball, its version, the hash kernel-oracle's harness
    // names for the same files.
    let c = code(&stock);
    assert_eq!(c["unit"], "minstrel_ht");
    assert_eq!(c["path"], TARBALL);
    assert!(c["version"].as_str().unwrap().starts_with("6.12."), "{c}");
    assert_eq!(c["fnv64"].as_str().unwrap().len(), 16, "{c}");
    for st in stock["stations"].as_array().unwrap() {
        assert_eq!(st["rate_control"]["kind"], "minstrel_ht-kernel");
        assert_eq!(&st["rate_control"]["code"], c);
    }
    assert!(rust["stations"][0]["rate_control"].get("code").is_none());
    // The same results otherwise, byte for byte.
    let probes = |v: &serde_json::Value| -> u64 {
        v["stations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["rate_control"]["downlink"]["probes"].as_u64().unwrap())
            .sum()
    };
    assert!(probes(&rust) > 50, "minstrel probed: {}", probes(&rust));
    assert_eq!(without_code_names(rust), without_code_names(stock.clone()));

    // The user's tree, with minstrel probing every 100 ms instead of every 20 ms.
    let tree = unpack_tree("kernel-code-patched");
    patch(
        &tree,
        "net/mac80211/rc80211_minstrel_ht.h",
        "#define MINSTREL_SAMPLE_INTERVAL\t(HZ / 50)",
        "#define MINSTREL_SAMPLE_INTERVAL\t(HZ / 10)",
    );
    let patched = run_json(
        "minstrel_ht-kernel",
        &["--kernel-src".into(), tree.display().to_string()],
    );
    let p = code(&patched);
    assert_eq!(p["path"], tree.display().to_string());
    assert_eq!(p["version"], c["version"]);
    assert_ne!(p["fnv64"], c["fnv64"], "the patched files hash differently");
    // Fewer probes: one per 100 ms and one after each 50 ms statistics update at most,
    // against one per 20 ms.
    let (before, after) = (probes(&stock), probes(&patched));
    assert!(
        after < before * 3 / 4,
        "probes with the patch: {after}, stock: {before}"
    );
}

/// The error of `txop run default …` on `minstrel_ht-kernel` with `--kernel-src dir`:
/// exit 2 and one line on stderr, returned.
fn one_line_error(dir: &Path) -> String {
    let mut args: Vec<String> = vec!["run".into(), "default".into()];
    args.extend(sets("minstrel_ht-kernel"));
    args.extend(["--kernel-src".into(), dir.display().to_string()]);
    refused(&args)
}

/// `txop ARGS`' error: exit 2 and one line on stderr, returned.
fn refused(args: &[String]) -> String {
    let out = txop(args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    err
}

#[test]
fn a_tree_that_does_not_build_or_is_missing_is_one_line() {
    let missing = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("no-such-kernel-tree");
    let err = one_line_error(&missing);
    assert!(
        err.contains(&format!(
            "kernel.src: {}: no such directory",
            missing.display()
        )),
        "{err}"
    );

    // A member minstrel_ht.c reads renamed in the header: the compiler names the
    // first use, its line and the member.
    let tree = unpack_tree("kernel-code-broken");
    patch(
        &tree,
        "net/mac80211/rc80211_minstrel_ht.h",
        "\tbool use_short_preamble;",
        "\tbool use_short_preamble_renamed;",
    );
    let err = one_line_error(&tree);
    let file = format!("{}/net/mac80211/rc80211_minstrel_ht.c:", tree.display());
    assert!(err.contains(&file), "names the file and line: {err}");
    assert!(
        err.contains("use_short_preamble"),
        "names the symbol: {err}"
    );

    // A function the tree calls that neither it nor the shim defines: the linker
    // names it (no object with an unresolved symbol is ever loaded).
    let tree = unpack_tree("kernel-code-unresolved");
    patch(
        &tree,
        "net/mac80211/rc80211_minstrel_ht.c",
        "\tmi->overhead = ieee80211_frame_duration(",
        "\tmi->overhead = txop_no_such_function(",
    );
    let err = one_line_error(&tree);
    let file = format!("{}/net/mac80211/rc80211_minstrel_ht.c:", tree.display());
    assert!(err.contains(&file), "names the file and line: {err}");
    assert!(
        err.contains("txop_no_such_function"),
        "names the symbol: {err}"
    );
}

/// `txop run NAME --json` with `sets`; its stdout, as text.
fn run_text(name: &str, sets: &[&str]) -> String {
    let mut args: Vec<String> = vec!["run".into(), name.into(), "--json".into()];
    for s in sets {
        args.extend(["--set".into(), s.to_string()]);
    }
    String::from_utf8(succeeded(&args)).expect("--json is UTF-8")
}

/// A kernel run's `--json` split at its last top-level field, `kernel_code`: the text
/// without it (which must be the Rust run's, byte for byte) and the field's value.
fn split_kernel_code(text: &str) -> (String, serde_json::Value) {
    let at = text
        .rfind(",\n  \"kernel_code\": ")
        .unwrap_or_else(|| panic!("no top-level kernel_code:\n{text}"));
    let end = text.rfind("\n}").expect("a JSON object");
    let field = &text[at + 2..end];
    let value: serde_json::Value =
        serde_json::from_str(&format!("{{{field}}}")).expect("kernel_code is JSON");
    (
        format!("{}{}", &text[..at], &text[end..]),
        value["kernel_code"].clone(),
    )
}

/// On the stock code (the Debian tarball), a built-in's `--json` with the kernel's fq
/// and CoDel, its AQL, or both, is the Rust run's byte for byte but for the added
/// top-level `kernel_code`, which names each unit, the tarball, its version and a hash:
/// where kernel-oracle's harness finds both codes agree step by step (fq_codel_oracle.rs,
/// scheduler_oracle.rs), a whole run agrees. The default (saturated, CoDel drops
/// thousands), hidden stations (fq alone) and TCP uploads from two stations at
/// different rates (AQL alone).
#[test]
fn the_kernels_fq_and_aql_give_rusts_json_byte_for_byte() {
    for (name, duration, units) in [
        ("default", "duration_s=3", r#"kernel.units=["fq","aql"]"#),
        ("hidden-stations", "duration_s=10", r#"kernel.units=["fq"]"#),
        ("e3-rtt-fair-up", "duration_s=3", r#"kernel.units=["aql"]"#),
    ] {
        let rust = run_text(name, &[duration]);
        let kernel = run_text(name, &[duration, units]);
        let (rest, code) = split_kernel_code(&kernel);
        assert!(
            rest == rust,
            "{name} with {units}: the JSON differs beyond kernel_code"
        );
        if units.contains("fq") {
            let v: serde_json::Value = serde_json::from_str(&rust).unwrap();
            let codel: u64 = v["stations"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["dropped_aqm"].as_u64().unwrap())
                .sum();
            assert!(
                codel > 0,
                "{name}: CoDel dropped nothing, so fq decided little"
            );
        }
        let code = code.as_array().expect("a list");
        let wanted: Vec<&str> = ["fq", "aql"]
            .into_iter()
            .filter(|u| units.contains(&format!("\"{u}\"")))
            .collect();
        let got: Vec<&str> = code.iter().map(|c| c["unit"].as_str().unwrap()).collect();
        assert_eq!(got, wanted, "{name}");
        for c in code {
            assert_eq!(c["path"], TARBALL);
            assert!(c["version"].as_str().unwrap().starts_with("6.12."), "{c}");
            assert_eq!(c["fnv64"].as_str().unwrap().len(), 16, "{c}");
        }
    }
}

/// On the stock code, 6.12's scheduler (`ieee80211_next_txq` and the rest) and
/// airtime.c's estimate, alone and with the kernel's fq and AQL, give the Rust run's
/// `--json` byte for byte but for `kernel_code`: where kernel-oracle's harness finds
/// them agree step by step (scheduler_oracle.rs, airtime_oracle.rs), a whole run
/// agrees. The default (Linux 6.16's firmware asking `may_transmit`, one slow station
/// of four), the same with ath9k pulling (`schedule_start`, `next_txq`,
/// `return_txq`: airtime fairness decides, the slow station gets a quarter of the
/// airtime), and TCP uploads from a fast and a slow station.
#[test]
fn the_kernels_scheduler_and_airtime_give_rusts_json_byte_for_byte() {
    const ATH9K: [&str; 3] = [
        "duration_s=3",
        "stack_options.driver=\"ath9k\"",
        "stack_options.hw_queue_ppdus=2",
    ];
    for (name, sets, units) in [
        ("default", &ATH9K[..1], r#"kernel.units=["scheduler"]"#),
        ("default", &ATH9K[..1], r#"kernel.units=["airtime"]"#),
        (
            "default",
            &ATH9K[..1],
            r#"kernel.units=["fq","aql","scheduler","airtime"]"#,
        ),
        (
            "default",
            &ATH9K[..],
            r#"kernel.units=["scheduler","airtime"]"#,
        ),
        (
            "e3-rtt-fair-up",
            &ATH9K[..1],
            r#"kernel.units=["scheduler","airtime"]"#,
        ),
    ] {
        let rust = run_text(name, sets);
        let mut with_units = sets.to_vec();
        with_units.push(units);
        let kernel = run_text(name, &with_units);
        let (rest, code) = split_kernel_code(&kernel);
        assert!(
            rest == rust,
            "{name} {sets:?} with {units}: the JSON differs beyond kernel_code"
        );
        let got: Vec<&str> = code
            .as_array()
            .expect("a list")
            .iter()
            .map(|c| c["unit"].as_str().unwrap())
            .collect();
        let wanted: Vec<&str> = ["fq", "aql", "scheduler", "airtime"]
            .into_iter()
            .filter(|u| units.contains(&format!("\"{u}\"")))
            .collect();
        assert_eq!(got, wanted, "{name}");
        if sets.len() > 1 {
            // Airtime fairness held the slow station (MCS 0) to its share.
            let v: serde_json::Value = serde_json::from_str(&rust).unwrap();
            let share = v["stations"][3]["airtime_share"].as_f64().unwrap();
            assert!(
                (share - 0.25).abs() < 0.02,
                "slow station's airtime {share}"
            );
        }
    }
}

/// A copied tree with one line of the scheduler changed or of airtime.c runs that
/// change: other results, named by the copy. The scheduler's: `next_txq` no longer
/// rotates a station in debt (`if (deficit < 0 || !aql_check)` made `if
/// (!aql_check)`), so with ath9k pulling, the slow station, listed at the head with
/// every packet, takes nearly all the airtime instead of its quarter. airtime.c's: no
/// aggregation assumed (the whole per-PPDU overhead charged to every packet, as 5.5
/// did).
#[test]
fn a_patched_scheduler_or_airtime_changes_the_results() {
    const ATH9K: [&str; 3] = [
        "duration_s=3",
        "stack_options.driver=\"ath9k\"",
        "stack_options.hw_queue_ppdus=2",
    ];
    for (unit, sets, file, from, to) in [
        (
            "scheduler",
            &ATH9K[..],
            "net/mac80211/tx.c",
            "\t\tif (deficit < 0 || !aql_check) {",
            "\t\tif (!aql_check) {",
        ),
        (
            "airtime",
            &ATH9K[..1],
            "net/mac80211/airtime.c",
            "\t\tduration += (overhead >> agg_shift);",
            "\t\tduration += overhead;",
        ),
    ] {
        let rust = run_text("default", sets);
        let tree = unpack_tree(&format!("kernel-units-{unit}-patched"));
        patch(&tree, file, from, to);
        let units = format!("kernel.units=[\"{unit}\"]");
        let src = format!("kernel.src=\"{}\"", tree.display());
        let mut with_units = sets.to_vec();
        with_units.extend([units.as_str(), src.as_str()]);
        let patched = run_text("default", &with_units);
        let (rest, code) = split_kernel_code(&patched);
        assert_eq!(code[0]["unit"], unit);
        assert_eq!(code[0]["path"], tree.display().to_string());
        assert!(rest != rust, "the patched {unit} changes the default run");
        if unit == "scheduler" {
            let v: serde_json::Value = serde_json::from_str(&rest).unwrap();
            let share = v["stations"][3]["airtime_share"].as_f64().unwrap();
            assert!(share > 0.9, "the slow station's airtime: {share}");
        }
    }
}

/// The summary's first numbers of the probe rows (each group's median RTT, ms) and the
/// total throughput line of `txop run default` with 30 stations, in three groups at
/// 30, 18 and 11 dB under minstrel_ht, 3 s, with `more`.
fn thirty_stations(more: &[String]) -> (String, String) {
    let mut args: Vec<String> = vec!["run".into(), "default".into()];
    for s in [
        "stations.list=[{count=10,snr_db=30},{count=10,snr_db=18},{count=10,snr_db=11}]",
        "stations.rate_control=\"minstrel_ht\"",
        "duration_s=3",
    ] {
        args.extend(["--set".into(), s.into()]);
    }
    args.extend(more.iter().cloned());
    let text = String::from_utf8(succeeded(&args)).expect("the summary is UTF-8");
    let line = |key: &str| {
        text.lines()
            .filter(|l| l.contains(key))
            .collect::<Vec<_>>()
            .join("\n")
    };
    (line("kernel code:"), line("total"))
}

/// A copied tree with one line of AQL changed (a station is always eligible only below
/// half its low limit) runs that change: other results, named by the copy and its own
/// hash. Likewise one line of CoDel (the target compared doubled) in fq's.
#[test]
fn a_patched_aql_or_codel_changes_the_results() {
    let units = |u: &str| vec!["--set".to_string(), format!("kernel.units=[\"{u}\"]")];
    let (stock_code, stock) = thirty_stations(&units("aql"));
    assert!(
        stock_code.contains(&format!("aql from {TARBALL}")),
        "{stock_code}"
    );
    let tree = unpack_tree("kernel-units-aql-patched");
    patch(
        &tree,
        "net/mac80211/tx.c",
        "\t    sta->airtime[txq->ac].aql_limit_low)\n\t\treturn true;",
        "\t    sta->airtime[txq->ac].aql_limit_low / 2)\n\t\treturn true;",
    );
    let mut more = units("aql");
    more.extend(["--kernel-src".into(), tree.display().to_string()]);
    let (code, patched) = thirty_stations(&more);
    assert!(
        code.contains(&format!("aql from {}", tree.display())),
        "{code}"
    );
    assert_ne!(code.split("fnv64").nth(1), stock_code.split("fnv64").nth(1));
    assert_ne!(
        patched, stock,
        "halving the low limit changes the 30-station run"
    );

    let rust = run_text("default", &["duration_s=3"]);
    let tree = unpack_tree("kernel-units-fq-patched");
    patch(
        &tree,
        "include/net/codel_impl.h",
        "\tif (codel_time_before(vars->ldelay, params->target) ||",
        "\tif (codel_time_before(vars->ldelay, 2 * params->target) ||",
    );
    let src = format!("kernel.src=\"{}\"", tree.display());
    let patched = run_text("default", &["duration_s=3", r#"kernel.units=["fq"]"#, &src]);
    let (rest, code) = split_kernel_code(&patched);
    assert_eq!(code[0]["path"], tree.display().to_string());
    assert!(
        rest != rust,
        "CoDel with twice the target changes the saturated run"
    );
}

/// fq's and AQL's trees that do not build are one line naming the file, the line and
/// the symbol; bad `units` values are one line naming the file and the key.
#[test]
fn bad_units_and_trees_that_do_not_build_are_one_line() {
    let run = |more: &[&str]| -> String {
        let mut args: Vec<String> = vec!["run".into(), "default".into()];
        for s in more {
            args.extend(["--set".into(), s.to_string()]);
        }
        refused(&args)
    };
    // A copy of the tarball's files with `from` made `to` in `file`, run with `unit`:
    // the tree and the error.
    let broken = |name: &str, unit: &str, file: &str, from: &str, to: &str| {
        let tree = unpack_tree(name);
        patch(&tree, file, from, to);
        let err = run(&[
            &format!("kernel.units=[\"{unit}\"]"),
            &format!("kernel.src=\"{}\"", tree.display()),
        ]);
        (tree, err)
    };
    let (tree, err) = broken(
        "kernel-units-fq-broken",
        "fq",
        "include/net/fq.h",
        "\tu32 backlog;\n\tint deficit;",
        "\tu32 backlog_renamed;\n\tint deficit;",
    );
    assert!(
        err.contains(&format!(
            "kernel.src: {}/include/net/fq_impl.h:",
            tree.display()
        )),
        "names the file and line: {err}"
    );
    assert!(err.contains("backlog"), "names the member: {err}");

    let (tree, err) = broken(
        "kernel-units-aql-broken",
        "aql",
        "net/mac80211/tx.c",
        "\tif (static_branch_unlikely(&aql_disable))\n\t\treturn true;\n\n\tif (!txq->sta)",
        "\tif (txop_no_such_function(&aql_disable))\n\t\treturn true;\n\n\tif (!txq->sta)",
    );
    // The function was taken from tx.c into the build: the error gives tx.c's line.
    let line = std::fs::read_to_string(tree.join("net/mac80211/tx.c"))
        .unwrap()
        .lines()
        .position(|l| l.contains("txop_no_such_function"))
        .unwrap()
        + 1;
    let file = format!("kernel.src: {}/net/mac80211/tx.c:{line}: ", tree.display());
    assert!(err.contains(&file), "names the file and line: {err}");
    assert!(
        err.contains("txop_no_such_function"),
        "names the symbol: {err}"
    );

    // A scenario file: the error names it and the key.
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("kernel-units-files");
    std::fs::create_dir_all(&dir).unwrap();
    for (units, stack, says) in [
        (
            r#"["fq", "fq"]"#,
            "linux-6.16",
            "kernel.units: `fq` is listed twice",
        ),
        (
            r#"["codel"]"#,
            "linux-6.16",
            "kernel.units: unknown unit `codel`; expected fq, aql, scheduler or airtime",
        ),
        (
            r#"["fq"]"#,
            "linux-4.8-bloated",
            "kernel.units: `fq` is mac80211's TXQ fq",
        ),
        (
            r#"["aql"]"#,
            "linux-4.9",
            "kernel.units: `aql` is mac80211's Airtime Queue Limits",
        ),
        (
            r#"["scheduler"]"#,
            "linux-5.14",
            "kernel.units: `scheduler` cannot run on stack `linux-5.14`: the kernel's \
             scheduler is 6.12's DRR with AQL (drr_aql); this stack runs `virtual_time`",
        ),
        (
            r#"["scheduler"]"#,
            "linux-4.8-bloated",
            "kernel.units: `scheduler` cannot run on stack `linux-4.8-bloated`: this stack \
             has no mac80211 TXQs to schedule",
        ),
        (
            r#"["airtime"]"#,
            "linux-5.5",
            "kernel.units: `airtime` is 6.12's estimate, and stack `linux-5.5` runs an \
             older one (NoAggregation)",
        ),
        (
            r#"["airtime"]"#,
            "linux-4.9",
            "kernel.units: `airtime` is AQL's airtime estimate, which stack `linux-4.9` \
             does not compute",
        ),
    ] {
        let file = dir.join("units.toml");
        std::fs::write(
            &file,
            format!("stack = \"{stack}\"\nduration_s = 1\n[kernel]\nunits = {units}\n"),
        )
        .unwrap();
        let err = refused(&["run".into(), file.display().to_string()]);
        assert!(
            err.contains(&file.display().to_string()),
            "names the file: {err}"
        );
        assert!(err.contains(says), "{units} on {stack}: {err}");
    }
}
