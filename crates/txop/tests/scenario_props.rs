//! Property tests of the scenario parser: whatever a user writes, the answer is a
//! scenario or one line naming what is wrong — never a panic, never a second line.
//!
//! Inputs are the built-in scenarios, mutated: a line deleted or repeated, a `--set`
//! override of one of their keys (or an unknown one) with a value from the edges of
//! TOML (negative, huge, NaN, infinite, strings, booleans, empty). The oracle needs no
//! expected values:
//!
//! - `parse` then `resolve` then `Simulation::new` (everything `txop run` does before
//!   the first event; `resolve_bsss` and `Neighbourhood::new` with `[[bss]]`) returns,
//!   without panicking;
//! - an error renders as one non-empty line;
//! - an override of a key no scenario has is refused, and the error names that key.
//!
//! `tests/fuzz_scenarios.rs` complements this: it generates valid scenarios and runs
//! them. 256 cases per property; `PROPTEST_CASES=100000` runs longer.

use proptest::prelude::*;
use txop::builtin::SCENARIOS;
use txop::scenario::{channel_groups, parse, ScenarioError};
use txop_sim::{Neighbourhood, Simulation};

/// Every dotted key path of a TOML table whose value is not a table or an array of
/// tables (the keys `--set` can reach).
fn leaf_keys(table: &toml::Table, prefix: &str, out: &mut Vec<String>) {
    for (k, v) in table {
        let path = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            toml::Value::Table(t) => leaf_keys(t, &path, out),
            toml::Value::Array(a) if a.iter().any(|x| x.is_table()) => {}
            _ => out.push(path),
        }
    }
}

fn scenario_keys() -> Vec<String> {
    let mut keys = Vec::new();
    for (_, text) in SCENARIOS {
        let table: toml::Table = toml::from_str(text).expect("built-in scenarios parse");
        leaf_keys(&table, "", &mut keys);
    }
    keys.sort();
    keys.dedup();
    keys
}

/// A raw `--set` value from the edges of what TOML (or a typo) gives.
fn raw_values() -> impl Strategy<Value = String> {
    prop_oneof![
        (-3i64..4).prop_map(|v| v.to_string()),
        Just(i64::MAX.to_string()),
        Just(i64::MIN.to_string()),
        Just("4294967296".to_string()),
        Just("65536".to_string()),
        (-1.0e3f64..1.0e3).prop_map(|v| format!("{v:?}")),
        Just("nan".to_string()),
        Just("inf".to_string()),
        Just("-0.0".to_string()),
        Just("1e308".to_string()),
        Just("true".to_string()),
        Just(String::new()),
        Just("[1, 2]".to_string()),
        Just("{ a = 1 }".to_string()),
        "[a-z0-9._-]{0,12}",
    ]
}

/// What `txop run` does before its first event; an error as the CLI would print it.
/// A scenario with `[[bss]]` is resolved BSS by BSS and built as its neighbourhoods.
fn load(text: &str, overrides: &[(String, String)]) -> Result<(), String> {
    let scenario = parse(text, overrides).map_err(|e: ScenarioError| e.to_string())?;
    if scenario.has_bsss() {
        let bsss = scenario.resolve_bsss().map_err(|e| e.to_string())?;
        for group in channel_groups(&bsss) {
            let cfgs = group.iter().map(|&b| bsss[b].bss_config()).collect();
            Neighbourhood::new(cfgs)?;
        }
        return Ok(());
    }
    let cfg = scenario.resolve().map_err(|e| e.to_string())?;
    Simulation::new(cfg).map(|_| ())
}

fn assert_one_line(e: &str) -> Result<(), TestCaseError> {
    prop_assert!(!e.trim().is_empty(), "empty error");
    prop_assert!(!e.contains('\n'), "error of more than one line: {e:?}");
    Ok(())
}

proptest! {
    #[test]
    fn an_override_of_a_known_key_is_accepted_or_refused_in_one_line(
        scenario in 0..SCENARIOS.len(),
        key in proptest::sample::select(scenario_keys()),
        raw in raw_values(),
    ) {
        let (_, text) = SCENARIOS[scenario];
        let set = vec![(key.clone(), raw.clone())];
        if let Err(e) = load(text, &set) {
            assert_one_line(&e)?;
        }
    }

    #[test]
    fn an_unknown_key_is_refused_by_name(
        scenario in 0..SCENARIOS.len(),
        section in proptest::sample::select(vec!["", "phy.", "traffic.", "stations.", "mac.", "wired."]),
        name in "zz[a-z_]{1,10}",
        raw in raw_values(),
    ) {
        let (_, text) = SCENARIOS[scenario];
        let key = format!("{section}{name}");
        let err = load(text, &[(key.clone(), raw)]).expect_err("an unknown key is refused");
        assert_one_line(&err)?;
        prop_assert!(err.contains(&name), "error {err:?} does not name {key}");
    }

    #[test]
    fn a_mangled_file_is_accepted_or_refused_in_one_line(
        scenario in 0..SCENARIOS.len(),
        line in any::<prop::sample::Index>(),
        repeat in any::<bool>(),
        cut in any::<prop::sample::Index>(),
    ) {
        let (_, text) = SCENARIOS[scenario];
        let mut lines: Vec<&str> = text.lines().collect();
        let i = line.index(lines.len());
        if repeat {
            lines.insert(i, lines[i]);
        } else {
            lines.remove(i);
        }
        let mut mangled = lines.join("\n");
        // Sometimes also cut the file short at a character boundary.
        if cut.index(4) == 0 {
            let mut at = cut.index(mangled.len().max(1));
            while !mangled.is_char_boundary(at) {
                at -= 1;
            }
            mangled.truncate(at);
        }
        if let Err(e) = load(&mangled, &[]) {
            assert_one_line(&e)?;
        }
    }
}

#[test]
fn the_key_list_covers_every_section() {
    let keys = scenario_keys();
    for section in ["phy.", "traffic.", "stations.", "wired."] {
        assert!(
            keys.iter().any(|k| k.starts_with(section)),
            "no {section} key in the built-in scenarios: {keys:?}"
        );
    }
    assert!(keys.len() > 30, "only {} keys", keys.len());
}
