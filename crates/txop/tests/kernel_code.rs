//! "Bring your patch" (issue 28): a scenario's stations run the kernel's own
//! `rc80211_minstrel_ht.c` (`rate_control = "minstrel_ht-kernel"`, built at run time by
//! txop-kernel) instead of txop's Rust, end to end through the `txop` binary.
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
    let out = txop(&args);
    assert!(
        out.status.success(),
        "txop {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("--json is JSON")
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
    let out = txop(&args);
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
