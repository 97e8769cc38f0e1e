//! Test support: running the `txop` binary from tests (here) and simulations under a
//! wall-clock guard ([`guard`]).
#![allow(dead_code)] // each test file uses its own subset

pub mod guard;

use std::process::{Command, Output};

pub fn txop(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_txop"))
        .args(args)
        .output()
        .expect("run txop")
}

/// The built-in scenarios: the first section `txop list` prints, up to its first
/// blank line.
pub fn builtin_names() -> Vec<String> {
    let list = txop(&["list"]);
    assert!(list.status.success(), "{}", stderr(&list));
    stdout(&list)
        .lines()
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_whitespace().next().map(String::from))
        .collect()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// One line on stderr that contains all of `needles`, exit code 2, nothing on stdout.
pub fn assert_user_error(args: &[&str], needles: &[&str]) {
    let o = txop(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(o.stdout.is_empty(), "{args:?} printed to stdout");
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "{args:?}: not one line: {err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: {err:?} lacks {n:?}");
    }
}

pub fn scratch(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("txop-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

pub fn flent_renders(file: &std::path::Path, plot: &str, png: &std::path::Path) {
    let out = Command::new("flent")
        .arg("-i")
        .arg(file)
        .args(["-p", plot, "-o"])
        .arg(png)
        .output()
        .expect("flent is installed by scripts/setup.sh (pip install flent matplotlib)");
    let size = std::fs::metadata(png).map(|m| m.len()).unwrap_or(0);
    assert!(
        size > 10_000,
        "flent -p {plot} wrote {size} bytes: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// docs/results.schema.json as a validator.
pub fn schema() -> jsonschema::Validator {
    let text = include_str!("../../../../docs/results.schema.json");
    let schema: serde_json::Value = serde_json::from_str(text).expect("the schema is JSON");
    jsonschema::validator_for(&schema).expect("a valid JSON Schema")
}

/// `v` follows the results schema; else fail naming `what` and the first errors.
pub fn assert_valid(v: &serde_json::Value, what: &str) {
    let errors: Vec<String> = schema()
        .iter_errors(v)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .take(5)
        .collect();
    assert!(errors.is_empty(), "{what}: {errors:#?}");
}

/// `--set` pairs as the scenario parser takes them.
pub fn owned(sets: &[(&str, &str)]) -> Vec<(String, String)> {
    sets.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// `text` with `sets` applied and resolved, to run with `seed`; a refusal fails the
/// test naming `case`.
pub fn resolved(
    case: &str,
    text: &str,
    sets: &[(String, String)],
    seed: u64,
) -> txop_sim::SimConfig {
    let mut cfg = match txop::scenario::parse(text, sets).and_then(|s| s.resolve()) {
        Ok(c) => c,
        Err(e) => panic!("{case}: {e}"),
    };
    cfg.seed = seed;
    cfg
}
