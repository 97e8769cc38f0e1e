//! A scenario fuzzer: random valid scenario files (every key of docs/scenarios.md, see
//! `generate.rs`), each run as `txop run FILE --json` runs it (a scenario with
//! `[[bss]]` BSS by BSS through `txop_sim::Neighbourhood`, each BSS's results checked
//! as a run's), against an oracle that needs no expected numbers:
//!
//! - parsing and resolving either succeed or give one line (no panic);
//! - a resolved run ends: no panic, the event loop's watchdog does not find simulated
//!   time stuck, and the wall-clock guard does not run out;
//! - packets are conserved: offered = delivered + dropped + inside at the end;
//! - airtime is conserved: no station's exceeds the run, and all of it together (with
//!   the beacons') the medium's busy time;
//! - every queue of every node stayed within its documented limit
//!   (`Cell::queue_occupancy`: the most each held over the run);
//! - the summary table is printed without a panic, and results.json, exactly the
//!   bytes `txop run FILE -o DIR` writes (`txop::run::Outcome::results_json`: a run
//!   object, or for `[[bss]]` the object with every BSS), validates against
//!   docs/results.schema.json as a whole;
//! - every 8th case runs twice and must give byte-identical JSON (same scenario and
//!   seed, same results).
//!
//! `cargo test` runs [`DEFAULT_CASES`] cases from seed [`DEFAULT_SEED`], split over
//! two tests that run side by side. For hours, by hand (docs/testing.md):
//!
//! ```text
//! TXOP_FUZZ_SECONDS=3600 TXOP_FUZZ_SEED=7 TXOP_FUZZ_CASES=100000000 \
//!     nice -n 10 cargo test --release -p txop --test fuzz_scenarios -- \
//!     --include-ignored --nocapture
//! ```
//!
//! - `TXOP_FUZZ_CASES`: how many cases (in all, both tests together);
//! - `TXOP_FUZZ_SEED`: the campaign's seed (case `i` of seed `s` is always the same
//!   scenario);
//! - `TXOP_FUZZ_FIRST`: the first case's index (replay case `i` alone with
//!   `TXOP_FUZZ_FIRST=i TXOP_FUZZ_CASES=1`);
//! - `TXOP_FUZZ_SECONDS`: stop after this much wall time;
//! - `TXOP_FUZZ_GUARD_SECONDS`: the wall-clock guard of one case (default 120 s);
//! - `TXOP_FUZZ_MAX_HUNG`: stop a test after this many hung runs (default 1).
//!
//! Each distinct failure (the panic's location and message with numbers masked, or the
//! broken rule) is printed once with its scenario, seed and case, and written as a
//! scenario file that `txop run FILE` accepts under
//! `target/tmp/fuzz_scenarios/`; later cases with the same failure are counted. The
//! test fails at the end if there was any. Every hung run is reported (a hang has no
//! message to tell two apart); its thread cannot be stopped and keeps a core busy, so
//! a test stops after `TXOP_FUZZ_MAX_HUNG` of them.

#[path = "fuzz_scenarios/generate.rs"]
mod generate;
mod support;

use generate::Gen;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::guard::{
    check_airtime, check_budget, check_conservation, check_queue_limits, guarded,
    guarded_cancellable, Failure, GUARD,
};
use txop::neighbours::PreparedBsss;
use txop::report::JsonReport;
use txop::run::Outcome;
use txop::runner::{self, Prepared};
use txop::scenario;
use txop_core::{Nanos, QueueOccupancy};
use txop_results::Results;
use txop_sim::Neighbourhood;

/// Cases `cargo test` runs: 25–35 s in release on two cores shared with other builds.
const DEFAULT_CASES: u64 = 800;

/// The seed `cargo test` runs (the issue the fuzzer comes from).
const DEFAULT_SEED: u64 = 18;

/// Tests the cases are shared between (case `i` goes to test `i % PARTS`).
const PARTS: u64 = 2;

/// Every this many cases, one runs twice to check determinism.
const DETERMINISM_EVERY: u64 = 8;

/// The campaign, from the environment or the defaults.
struct Campaign {
    seed: u64,
    first: u64,
    cases: u64,
    deadline: Option<Instant>,
    guard: Duration,
    max_hung: u64,
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().map(|v| {
        v.trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v}: expected a non-negative integer"))
    })
}

impl Campaign {
    fn from_env() -> Campaign {
        Campaign {
            seed: env_u64("TXOP_FUZZ_SEED").unwrap_or(DEFAULT_SEED),
            first: env_u64("TXOP_FUZZ_FIRST").unwrap_or(0),
            cases: env_u64("TXOP_FUZZ_CASES").unwrap_or(DEFAULT_CASES),
            deadline: env_u64("TXOP_FUZZ_SECONDS").map(|s| Instant::now() + Duration::from_secs(s)),
            guard: env_u64("TXOP_FUZZ_GUARD_SECONDS").map_or(GUARD, Duration::from_secs),
            max_hung: env_u64("TXOP_FUZZ_MAX_HUNG").unwrap_or(1),
        }
    }
}

/// How far one scenario got, from inside the guarded thread.
enum Stage {
    /// Refused by the scenario checks or the simulator's: the message the user sees.
    Refused(String),
    /// Ran to its end.
    Ran {
        /// One per BSS (one for a scenario without `[[bss]]`).
        results: Vec<Results>,
        /// results.json as `txop run FILE -o DIR` writes it.
        json: Vec<u8>,
        /// The most each queue held, over every BSS.
        occupancy: Vec<QueueOccupancy>,
        /// The `--json` text of a second run of the same scenario, when checked.
        again: Option<(String, String)>,
    },
}

/// Set by the guard when a run is to give up; the simulated ns done so far.
#[derive(Clone, Default)]
struct Watch {
    cancel: Arc<AtomicBool>,
    done_ns: Arc<AtomicU64>,
    total_ns: Arc<AtomicU64>,
}

/// Unwinds a run the guard gave up on (no panic message: it is not a failure of its own).
struct Cancelled;

/// Parse, resolve and run `text` as `txop run FILE --json` does (runner::simulate:
/// the CLI's own loop, which turns a stuck run into a panic naming the file). Between
/// its 1 % steps the run reports progress to `watch` and gives up when told to.
fn run_scenario(text: &str, twice: bool, watch: &Watch) -> Stage {
    let scenario = match scenario::parse(text, &[]) {
        Ok(s) => s,
        Err(e) => return Stage::Refused(format!("fuzz.toml: {e}")),
    };
    if scenario.has_bsss() {
        return run_bsss(scenario, twice, watch);
    }
    let cfg = match scenario.resolve() {
        Ok(c) => c,
        Err(e) => return Stage::Refused(format!("fuzz.toml: {e}")),
    };
    let name = if scenario.name.is_empty() {
        "fuzz".to_string()
    } else {
        scenario.name.clone()
    };
    let p = Prepared {
        source: "fuzz.toml".to_string(),
        name,
        setting: String::new(),
        scenario,
        cfg,
    };
    let json_text = |r: &Results| {
        serde_json::to_string(&JsonReport {
            txop_version: env!("CARGO_PKG_VERSION"),
            scenario: &p.name,
            resolved: None,
            results: r,
        })
        .expect("results serialise")
    };
    watch
        .total_ns
        .store(p.cfg.duration.as_ns(), Ordering::Relaxed);
    let advance = |ns: u64| {
        watch.done_ns.fetch_add(ns, Ordering::Relaxed);
        if watch.cancel.load(Ordering::Relaxed) {
            std::panic::resume_unwind(Box::new(Cancelled));
        }
    };
    let mut occupancy = Vec::new();
    let observe = &mut |sim: &txop_sim::Simulation| occupancy = sim.cell().queue_occupancy();
    let results = match runner::simulate_observed(&p, &advance, observe) {
        Ok(r) => r,
        Err(runner::SimError::User(e)) => return Stage::Refused(e),
        // The watchdog, or another failure inside the model: a finding.
        Err(e) => panic!("{e}"),
    };
    let _ = txop::report::summary(&p.name, &results);
    let again = twice.then(|| {
        let second = runner::simulate(&p, &advance).expect("it ran once");
        (json_text(&results), json_text(&second))
    });
    let outcome = Outcome::Single {
        p: Box::new(p),
        results,
    };
    let json = outcome.results_json().expect("results.json serialises");
    let Outcome::Single { results, .. } = outcome else {
        unreachable!("built as one cell")
    };
    Stage::Ran {
        results: vec![results],
        json,
        occupancy,
        again,
    }
}

/// A scenario with `[[bss]]`: resolved BSS by BSS, each channel's BSSs run together
/// through `txop_sim::Neighbourhood` in 1 % steps (reporting to `watch`, giving up when
/// told to), a stuck BSS a finding. Each BSS's results are checked as a run's.
fn run_bsss(scenario: scenario::Scenario, twice: bool, watch: &Watch) -> Stage {
    let bsss = match scenario.resolve_bsss() {
        Ok(b) => b,
        Err(e) => return Stage::Refused(format!("fuzz.toml: {e}")),
    };
    let end = bsss
        .iter()
        .map(|b| b.cfg.duration)
        .max()
        .unwrap_or_default();
    watch.total_ns.store(end.as_ns(), Ordering::Relaxed);
    let mut occupancy = Vec::new();
    let run = |occupancy: &mut Vec<QueueOccupancy>| -> Result<Vec<Results>, String> {
        let mut out: Vec<Option<Results>> = vec![None; bsss.len()];
        for group in scenario::channel_groups(&bsss) {
            let cfgs = group.iter().map(|&b| bsss[b].bss_config()).collect();
            let mut n = Neighbourhood::new(cfgs).map_err(|e| format!("fuzz.toml: {e}"))?;
            let step = Nanos::from_ns((end.as_ns() / 100).max(1));
            let mut t = Nanos::ZERO;
            while t < end {
                let next = (t + step).min(end);
                n.run_until(next);
                if let Some(stuck) = n.bsss().iter().find_map(|s| s.stuck()) {
                    panic!("fuzz.toml: {stuck}");
                }
                watch
                    .done_ns
                    .fetch_add((next - t).as_ns(), Ordering::Relaxed);
                if watch.cancel.load(Ordering::Relaxed) {
                    std::panic::resume_unwind(Box::new(Cancelled));
                }
                t = next;
            }
            for (&b, sim) in group.iter().zip(n.bsss()) {
                let r = runner::with_groups(sim.results(), &bsss[b].scenario)
                    .map_err(|e| format!("fuzz.toml: {e}"))?;
                out[b] = Some(r);
                occupancy.extend(sim.cell().queue_occupancy());
            }
        }
        Ok(out.into_iter().map(|r| r.expect("every BSS ran")).collect())
    };
    let results = match run(&mut occupancy) {
        Ok(r) => r,
        Err(e) => return Stage::Refused(e),
    };
    let json_text = |rs: &[Results]| {
        rs.iter()
            .zip(&bsss)
            .map(|(r, b)| {
                serde_json::to_string(&JsonReport {
                    txop_version: env!("CARGO_PKG_VERSION"),
                    scenario: &b.name,
                    resolved: None,
                    results: r,
                })
                .expect("results serialise")
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    for (r, b) in results.iter().zip(&bsss) {
        let _ = txop::report::summary(&b.name, r);
    }
    let again = twice.then(|| {
        let second = run(&mut Vec::new()).expect("it ran once");
        (json_text(&results), json_text(&second))
    });
    // As `txop run fuzz.toml` names and reports it (`neighbours::prepare`).
    let name = if scenario.name.is_empty() {
        "fuzz".to_string()
    } else {
        scenario.name.clone()
    };
    let outcome = Outcome::Bsss {
        p: Box::new(PreparedBsss {
            name,
            setting: String::new(),
            seed: scenario.seed,
            scenario,
            bsss,
        }),
        results,
    };
    let json = outcome.results_json().expect("results.json serialises");
    let Outcome::Bsss { results, .. } = outcome else {
        unreachable!("built as BSSs")
    };
    Stage::Ran {
        results,
        json,
        occupancy,
        again,
    }
}

/// docs/results.schema.json, whole: what results.json must follow.
fn results_schema() -> jsonschema::Validator {
    let text = include_str!("../../../docs/results.schema.json");
    let schema: serde_json::Value = serde_json::from_str(text).expect("the schema is JSON");
    jsonschema::validator_for(&schema).expect("a valid JSON Schema")
}

/// One of the schema's top-level objects (`run`, `neighbourhood`) alone, so that an
/// error names the field instead of "not valid under any of the schemas listed in
/// oneOf".
fn branch_schema(def: &str) -> jsonschema::Validator {
    let text = include_str!("../../../docs/results.schema.json");
    let mut schema: serde_json::Value = serde_json::from_str(text).expect("the schema is JSON");
    let root = schema.as_object_mut().expect("an object");
    assert!(
        root.remove("oneOf").is_some(),
        "the schema's top level is a oneOf of its objects"
    );
    root.insert("$ref".into(), format!("#/$defs/{def}").into());
    jsonschema::validator_for(&schema).expect("a valid JSON Schema")
}

/// results.json's `bytes` against the whole schema (`schema`, [`results_schema`]); a
/// finding naming the fields broken (found against the object it should be: a run, or
/// with `bss` the object with every BSS) if it fails.
fn check_results_json(schema: &jsonschema::Validator, bytes: &[u8]) -> Result<(), Finding> {
    let json: serde_json::Value = serde_json::from_slice(bytes)
        .map_err(|e| finding("results.json is not JSON", e.to_string()))?;
    if schema.is_valid(&json) {
        return Ok(());
    }
    let def = if json.get("bss").is_some() {
        "neighbourhood"
    } else {
        "run"
    };
    // One signature for the set of fields broken, so that a case breaking a known
    // field and a new one is reported apart from the known one alone.
    let mut broken = std::collections::BTreeSet::new();
    let mut details = Vec::new();
    for e in branch_schema(def).iter_errors(&json) {
        let at = mask_numbers(&e.instance_path().to_string());
        broken.insert(format!("{} at {at}", e.schema_path()));
        if details.len() < 5 {
            details.push(format!("{e} at {}", e.instance_path()));
        }
    }
    if broken.is_empty() {
        // Valid as its own object, refused by the whole: the top-level oneOf.
        return Err(finding(
            format!("schema: the top level's oneOf refuses a valid {def} object"),
            schema
                .iter_errors(&json)
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join("\n"),
        ));
    }
    let broken: Vec<String> = broken.into_iter().collect();
    Err(finding(
        format!("schema: {}", broken.join("; ")),
        details.join("\n"),
    ))
}

/// Digits masked, so that one bug gives one signature whatever the numbers.
fn mask_numbers(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_digit() {
            if !out.ends_with('#') {
                out.push('#');
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// What went wrong with one case: a signature (one per bug) and the details.
struct Finding {
    signature: String,
    detail: String,
}

fn finding(signature: impl Into<String>, detail: impl Into<String>) -> Finding {
    Finding {
        signature: signature.into(),
        detail: detail.into(),
    }
}

/// A case that passed.
enum Passed {
    /// Ran to its end and passed every check.
    Ran,
    /// Refused with this one line.
    Refused(String),
}

/// The verdict on one case.
fn check(
    case: u64,
    text: &str,
    twice: bool,
    guard: Duration,
    schema: &jsonschema::Validator,
) -> Result<Passed, Finding> {
    let owned = text.to_string();
    let watch = Watch::default();
    let w = watch.clone();
    let outcome = guarded_cancellable(guard, Some(watch.cancel.clone()), move || {
        run_scenario(&owned, twice, &w)
    });
    let progress = || {
        format!(
            "had simulated {:.6} s of {:.6} s{}",
            watch.done_ns.load(Ordering::Relaxed) as f64 * 1e-9,
            watch.total_ns.load(Ordering::Relaxed) as f64 * 1e-9,
            if twice { " (runs twice)" } else { "" }
        )
    };
    match outcome {
        Err(Failure::TimedOut(d)) => Err(finding(
            format!("hang: the wall-clock guard ran out (case {case})"),
            format!(
                "still running after {d:?}, and {:?} more after it was told to stop; {}",
                d,
                progress()
            ),
        )),
        Err(Failure::Slow(d)) => Err(finding(
            format!("slow: the wall-clock guard ran out (case {case})"),
            format!(
                "still running after {d:?}; stopped when told to; {}",
                progress()
            ),
        )),
        Err(Failure::Panicked(m)) => {
            // The location's line and column stay: one panic site, one signature.
            let (location, message) = m.split_once(": ").unwrap_or(("", &m));
            let signature = if message.contains("simulated time has not advanced") {
                "stuck: the watchdog stopped the run".to_string()
            } else {
                format!("panic at {location}: {}", mask_numbers(message))
            };
            Err(finding(signature, m))
        }
        Ok(Stage::Refused(message)) => {
            if message.trim().is_empty() || message.trim_end().contains('\n') {
                Err(finding("a refusal that is not one line", message))
            } else {
                Ok(Passed::Refused(message))
            }
        }
        Ok(Stage::Ran {
            results,
            json,
            occupancy,
            again,
        }) => {
            for r in &results {
                check_conservation(r).map_err(|e| finding("packets not conserved", e))?;
                check_airtime(r).map_err(|e| finding("airtime not conserved", e))?;
                check_budget(r).map_err(|e| finding("delay budget not split", e))?;
            }
            check_queue_limits(&occupancy).map_err(|e| {
                // One signature per kind of queue broken, whatever the node and numbers.
                let queues: BTreeMap<&str, ()> = occupancy
                    .iter()
                    .filter(|q| !q.within_limit())
                    .map(|q| (q.queue.name(), ()))
                    .collect();
                let queues: Vec<&str> = queues.into_keys().collect();
                finding(format!("queue over its limit: {}", queues.join(", ")), e)
            })?;
            check_results_json(schema, &json)?;
            if let Some((first, second)) = again {
                if first != second {
                    return Err(finding(
                        "not deterministic: two runs of one scenario and seed differ",
                        "the --json of the second run differs from the first",
                    ));
                }
            }
            Ok(Passed::Ran)
        }
    }
}

/// Where failing scenarios are written (under the target directory).
fn failure_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fuzz_scenarios")
}

/// Print one new failure and write its scenario file; returns the file.
fn report(campaign_seed: u64, case: u64, text: &str, f: &Finding) -> PathBuf {
    let dir = failure_dir();
    let _ = std::fs::create_dir_all(&dir);
    let file = dir.join(format!("seed{campaign_seed}-case{case}.toml"));
    let replay = format!(
        "TXOP_FUZZ_SEED={campaign_seed} TXOP_FUZZ_FIRST={case} TXOP_FUZZ_CASES=1 \
         cargo test --release -p txop --test fuzz_scenarios -- --include-ignored --nocapture"
    );
    let mut body = String::new();
    for line in [f.signature.as_str(), f.detail.as_str(), replay.as_str()]
        .iter()
        .flat_map(|s| s.lines())
    {
        body.push_str(&format!("# {line}\n"));
    }
    body.push_str(text);
    if let Err(e) = std::fs::write(&file, &body) {
        eprintln!("cannot write {}: {e}", file.display());
    }
    eprintln!(
        "\n=== fuzz failure, seed {campaign_seed}, case {case}: {}\n{}\n--- scenario ({}):\n{text}---",
        f.signature,
        f.detail,
        file.display()
    );
    file
}

/// Counts of one campaign part.
#[derive(Default)]
struct Tally {
    ran: u64,
    refused: u64,
    /// Refusals by the key they name (the text before the first ": " after the file).
    refused_keys: BTreeMap<String, u64>,
    /// Distinct failures: signature → (cases, first file).
    failures: BTreeMap<String, (u64, PathBuf)>,
    slowest: (Duration, u64),
}

/// Run the cases of `part` (case `i` with `i % PARTS == part`).
fn campaign_part(part: u64) {
    let c = Campaign::from_env();
    let schema = results_schema();
    let start = Instant::now();
    let mut t = Tally::default();
    let mut last_progress = Instant::now();
    let mut hung = 0;
    for case in (c.first..c.first.saturating_add(c.cases)).filter(|i| i % PARTS == part) {
        if c.deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        let text = Gen::new(c.seed, case).scenario();
        let t0 = Instant::now();
        let twice = case % DETERMINISM_EVERY == 0;
        let verdict = check(case, &text, twice, c.guard, &schema);
        let took = t0.elapsed();
        if took > t.slowest.0 {
            t.slowest = (took, case);
        }
        match verdict {
            Ok(Passed::Ran) => t.ran += 1,
            Ok(Passed::Refused(refusal)) => {
                t.refused += 1;
                // Which check refused it, for the coverage line below.
                let key = refusal
                    .split(": ")
                    .nth(1)
                    .map(mask_numbers)
                    .unwrap_or_default();
                *t.refused_keys.entry(key).or_default() += 1;
            }
            Err(f) => {
                hung += u64::from(f.signature.starts_with("hang"));
                match t.failures.get_mut(&f.signature) {
                    Some(entry) => entry.0 += 1,
                    None => {
                        let file = report(c.seed, case, &text, &f);
                        t.failures.insert(f.signature.clone(), (1, file));
                    }
                }
                if hung >= c.max_hung {
                    eprintln!("stopping: {hung} hung runs' threads are still running");
                    break;
                }
            }
        }
        if last_progress.elapsed() > Duration::from_secs(60) {
            last_progress = Instant::now();
            eprintln!(
                "fuzz part {part}: case {case}, {} ran, {} refused, {} distinct failures, {:.0} s",
                t.ran,
                t.refused,
                t.failures.len(),
                start.elapsed().as_secs_f64()
            );
        }
    }
    let mut refusals: Vec<_> = t.refused_keys.iter().collect();
    refusals.sort_by(|a, b| b.1.cmp(a.1));
    eprintln!(
        "fuzz part {part} of seed {}: {} ran clean, {} refused with one line, {} distinct \
         failures in {:.1} s (slowest case {} took {:.2} s); refused most for: {:?}",
        c.seed,
        t.ran,
        t.refused,
        t.failures.len(),
        start.elapsed().as_secs_f64(),
        t.slowest.1,
        t.slowest.0.as_secs_f64(),
        &refusals[..refusals.len().min(6)]
    );
    let list: Vec<String> = t
        .failures
        .iter()
        .map(|(sig, (n, file))| format!("{sig} ({n} cases; {})", file.display()))
        .collect();
    assert!(
        list.is_empty(),
        "{} distinct failures:\n{}",
        list.len(),
        list.join("\n")
    );
}

#[test]
fn generated_scenarios_part_1_of_2() {
    campaign_part(0);
}

#[test]
fn generated_scenarios_part_2_of_2() {
    campaign_part(1);
}

/// The harness itself: a panic is reported with where it happened, and a run that
/// outlives the guard is reported as such, not waited for: slow if it stops when
/// told to, hung if not.
#[test]
fn the_guard_reports_panics_and_hangs() {
    match guarded(GUARD, || -> u32 { panic!("deliberately, {}", 42) }) {
        Err(Failure::Panicked(m)) => {
            assert!(
                m.contains("fuzz_scenarios.rs:") && m.ends_with("deliberately, 42"),
                "{m}"
            );
        }
        other => panic!("{other:?}"),
    }
    let t0 = Instant::now();
    let r = guarded(Duration::from_millis(50), || {
        std::thread::sleep(Duration::from_secs(2))
    });
    assert_eq!(r, Err(Failure::TimedOut(Duration::from_millis(50))));
    assert!(t0.elapsed() < Duration::from_secs(1));
    // A run that stops when told is slow, one that does not is hung.
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = cancel.clone();
    let r = guarded_cancellable(Duration::from_millis(50), Some(cancel), move || {
        while !flag.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(1));
        }
        std::panic::resume_unwind(Box::new(Cancelled))
    });
    assert_eq!(r, Err(Failure::Slow(Duration::from_millis(50))));
    let cancel = Arc::new(AtomicBool::new(false));
    let r = guarded_cancellable(Duration::from_millis(50), Some(cancel), || {
        std::thread::sleep(Duration::from_secs(2))
    });
    assert_eq!(r, Err(Failure::TimedOut(Duration::from_millis(50))));
}

/// The schema check can fail: a run's results with a fraction above 1 are refused
/// at that field, and so is a BSS's.
#[test]
fn the_schema_check_names_the_field() {
    let schema = results_schema();
    for (text, at) in [
        ("duration_s = 0.01\n", "/busy_fraction"),
        (TWO_BSSS, "/bss/#/busy_fraction"),
    ] {
        let Stage::Ran { json, .. } = run_scenario(text, false, &Watch::default()) else {
            panic!("{text} runs");
        };
        check_results_json(&schema, &json).unwrap_or_else(|f| panic!("{}", f.detail));
        let mut v: serde_json::Value = serde_json::from_slice(&json).unwrap();
        let target = match v.get_mut("bss") {
            Some(bss) => &mut bss[1],
            None => &mut v,
        };
        target["busy_fraction"] = 1.5.into();
        let f = check_results_json(&schema, &serde_json::to_vec(&v).unwrap())
            .expect_err("1.5 is not a fraction");
        assert!(
            f.signature.contains(&format!(" at {at}")),
            "{}",
            f.signature
        );
    }
}

/// A small scenario of two BSSs on one channel.
const TWO_BSSS: &str = "duration_s = 0.05\n[space]\n[stations]\ndistance_m = 5\n\
                        [[bss]]\nname = \"a\"\nap_position_m = [0, 0]\n\
                        [bss.stations]\ncount = 2\n\
                        [[bss]]\nname = \"b\"\nap_position_m = [20, 0]\n";

/// What the fuzzer validates is exactly the results.json `txop run FILE -o DIR`
/// writes, for one cell and for several BSSs (issue 25 item 3: each BSS alone was
/// checked, never the file, and the file broke the schema).
#[test]
fn the_fuzzer_checks_the_file_txop_run_writes() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fuzz_file_as_written");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (i, text) in ["duration_s = 0.05\n", TWO_BSSS].into_iter().enumerate() {
        let file = dir.join(format!("fuzz{i}.toml"));
        std::fs::write(&file, format!("name = \"fuzz\"\n{text}")).unwrap();
        let out = dir.join(format!("out{i}"));
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_txop"))
            .args([
                "run",
                file.to_str().unwrap(),
                "-q",
                "-o",
                out.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let written = std::fs::read(out.join("results.json")).unwrap();
        let Stage::Ran { json, .. } = run_scenario(
            &format!("name = \"fuzz\"\n{text}"),
            false,
            &Watch::default(),
        ) else {
            panic!("{text} runs");
        };
        assert!(json == written, "{text}: the fuzzer's results.json differs");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A case is one scenario whatever runs before it, and the cases differ.
#[test]
fn the_generator_is_deterministic() {
    let a: Vec<String> = (0..50).map(|i| Gen::new(3, i).scenario()).collect();
    let b: Vec<String> = (0..50)
        .map(|i| Gen::new(3, 49 - i).scenario())
        .rev()
        .collect();
    assert_eq!(a, b);
    let distinct: std::collections::BTreeSet<&String> = a.iter().collect();
    assert_eq!(distinct.len(), a.len());
    assert_ne!(Gen::new(4, 0).scenario(), a[0]);
}

/// The keys docs/scenarios.md documents, as dotted paths: each table's rows under its
/// heading (`## \`[phy]\`` → `phy.`; `### \`stations.scan\`` → `stations.scan.`).
fn documented_keys() -> Vec<String> {
    let doc = include_str!("../../../docs/scenarios.md");
    let mut prefix = String::new();
    let mut keys = Vec::new();
    for line in doc.lines() {
        if let Some(h) = line.strip_prefix("## ").or(line.strip_prefix("### ")) {
            let name = h.trim().trim_matches('`').trim_matches(['[', ']']);
            if name == "Limits" {
                // The limits table restates keys documented above (and `txop compare`).
                prefix = "\0".into();
                continue;
            }
            prefix = if name == "Top level" {
                String::new()
            } else {
                format!("{name}.")
            };
        } else if let Some(row) = line.strip_prefix("| `").filter(|_| prefix != "\0") {
            let first_cell = row.split('|').next().unwrap_or_default();
            for key in first_cell.split('`').step_by(2) {
                let key = key.trim().trim_matches(',').trim();
                if !key.is_empty() {
                    keys.push(format!("{prefix}{key}"));
                }
            }
        }
    }
    keys
}

/// Every dotted path in `v`, list entries folded into their list's keys
/// (`stations.list[2].mcs` → `stations.list`, `stations.mcs`; `flows[0].kind` →
/// `flows.kind`) and EDCA's ACs into `<ac>`.
fn key_paths(prefix: &str, v: &toml::Value, out: &mut std::collections::BTreeSet<String>) {
    let toml::Value::Table(t) = v else {
        if let toml::Value::Array(items) = v {
            for item in items.iter().filter(|i| i.is_table()) {
                let inner = if prefix == "stations.list" {
                    "stations"
                } else {
                    prefix
                };
                key_paths(inner, item, out);
            }
        }
        return;
    };
    for (k, child) in t {
        let k = if prefix.ends_with("edca_ap") || prefix.ends_with("edca_sta") {
            "<ac>"
        } else {
            k.as_str()
        };
        let path = if prefix.is_empty() {
            k.to_string()
        } else {
            format!("{prefix}.{k}")
        };
        out.insert(path.clone());
        key_paths(&path, child, out);
    }
}

/// The generator reaches every key the docs document (a key added to the docs and not
/// to the generator fails here), and what it writes parses as TOML.
#[test]
fn the_generator_covers_every_documented_key() {
    let documented = documented_keys();
    assert!(documented.len() > 100, "{documented:?}");
    let mut seen = std::collections::BTreeSet::new();
    for case in 0..3000 {
        let text = Gen::new(DEFAULT_SEED, case).scenario();
        let v: toml::Value = toml::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        key_paths("", &v, &mut seen);
    }
    let missing: Vec<&String> = documented.iter().filter(|k| !seen.contains(*k)).collect();
    assert!(missing.is_empty(), "never generated: {missing:?}");
}
