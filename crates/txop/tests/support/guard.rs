//! Running simulations under a wall-clock guard: a hang fails the test with a message
//! instead of stalling it, a panic is caught with its location, and every finished run
//! is checked for packet conservation (what was offered was delivered, dropped, or is
//! still inside at the end) and for queues within their documented limits (the most
//! each queue of each node held, `Cell::queue_occupancy`).

use std::cell::RefCell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Once};
use std::time::{Duration, Instant};
use txop_core::{Nanos, QueueOccupancy};
use txop_results::Results;
use txop_sim::{SimConfig, Simulation};

/// How long one short run may take before it counts as hung: runs take milliseconds to
/// a second; the event loop's watchdog stops a run stuck at one instant after a few
/// seconds. A guard against hangs, not a speed assertion.
pub const GUARD: Duration = Duration::from_secs(120);

/// Why a guarded closure gave no value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// It panicked: `file:line:col: message`.
    Panicked(String),
    /// It was still running when the guard ran out (its thread is left behind).
    TimedOut(Duration),
    /// It was still running when the guard ran out, and stopped when asked to (within
    /// another guard's time): slow, not stuck.
    Slow(Duration),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Panicked(m) => write!(f, "panicked at {m}"),
            Failure::TimedOut(d) => write!(f, "still running after {d:?} (hung)"),
            Failure::Slow(d) => write!(f, "still running after {d:?}, stopped when asked (slow)"),
        }
    }
}

thread_local! {
    /// The location and message of the last panic on this thread (set by the hook).
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Record every panic's location on its thread, then print it as before.
fn install_panic_recorder() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let location = info
                .location()
                .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()))
                .unwrap_or_default();
            let message = payload_text(info.payload());
            LAST_PANIC.with(|p| *p.borrow_mut() = Some(format!("{location}: {message}")));
            previous(info);
        }));
    });
}

fn payload_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(a panic without a message)".to_string())
}

/// Run `f` in its own thread (8 MiB of stack, as the `txop` binary's main thread has)
/// and wait at most `guard` for it. A panic comes back as [`Failure::Panicked`] with its
/// location; a run that outlives the guard as [`Failure::TimedOut`], its thread left
/// running (a thread cannot be stopped from outside).
pub fn guarded<T: Send + 'static>(
    guard: Duration,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Failure> {
    guarded_cancellable(guard, None, f)
}

/// [`guarded`], for a closure that watches `cancel` and gives up (with
/// [`std::panic::resume_unwind`]) once it is set: when the guard runs out, `cancel` is
/// set and the closure gets another `guard` to stop; if it does, the run was slow
/// ([`Failure::Slow`]), its thread gone; if not, it is hung ([`Failure::TimedOut`]).
pub fn guarded_cancellable<T: Send + 'static>(
    guard: Duration,
    cancel: Option<Arc<AtomicBool>>,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Failure> {
    install_panic_recorder();
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("guarded".into())
        .stack_size(8 << 20)
        .spawn(move || {
            let outcome = panic::catch_unwind(AssertUnwindSafe(f)).map_err(|payload| {
                LAST_PANIC
                    .with(|p| p.borrow_mut().take())
                    .unwrap_or_else(|| payload_text(payload.as_ref()))
            });
            let _ = tx.send(outcome);
        })
        .expect("spawn a thread");
    match rx.recv_timeout(guard) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(message)) => Err(Failure::Panicked(message)),
        Err(mpsc::RecvTimeoutError::Timeout) => match cancel {
            Some(cancel) => {
                cancel.store(true, Ordering::Relaxed);
                match rx.recv_timeout(guard) {
                    Ok(_) => Err(Failure::Slow(guard)),
                    Err(_) => Err(Failure::TimedOut(guard)),
                }
            }
            None => Err(Failure::TimedOut(guard)),
        },
        Err(mpsc::RecvTimeoutError::Disconnected) => Err(Failure::Panicked(
            "the thread ended without a result".to_string(),
        )),
    }
}

/// `Err` naming the counts when the run's packets are not conserved.
pub fn check_conservation(r: &Results) -> Result<(), String> {
    let k = r.conservation;
    if k.offered_packets == k.delivered_packets + k.dropped_packets + k.inside_packets {
        Ok(())
    } else {
        Err(format!(
            "packets not conserved: offered {} != delivered {} + dropped {} + inside {}",
            k.offered_packets, k.delivered_packets, k.dropped_packets, k.inside_packets
        ))
    }
}

/// `Err` unless every flow's delay budget split every packet it recorded, and its
/// stages add up to the delays (issue 27: the instants a packet crosses the cell's
/// boundaries come in order, docs/results.md "The delay budget").
pub fn check_budget(r: &Results) -> Result<(), String> {
    for f in &r.flows {
        let budgets = [
            ("forward", &f.delay_budget.forward),
            ("back", &f.delay_budget.back),
        ];
        for (dir, b) in budgets {
            let Some(b) = b else { continue };
            if b.unsplit_packets > 0 {
                return Err(format!(
                    "flow {} ({dir}): {} packets whose delay could not be split",
                    f.flow, b.unsplit_packets
                ));
            }
            let sum: u64 = b.stages.iter().map(|s| s.sum_ns).sum();
            if sum != b.delay_sum_ns {
                return Err(format!(
                    "flow {} ({dir}): stages add up to {sum} ns, the delays to {} ns",
                    f.flow, b.delay_sum_ns
                ));
            }
        }
    }
    Ok(())
}

/// `Err` unless airtime is conserved: no station was charged more airtime than the run
/// lasted, and the stations' and the beacons' airtime together is at most the time
/// the medium was busy (issue 25: with `[space]`, a station's overlapping exchanges
/// were charged twice, up to 1.055 s in a 1 s run). 1 µs of slack for the busy
/// fraction's rounding.
pub fn check_airtime(r: &Results) -> Result<(), String> {
    let run_ns = r.duration_s * 1e9;
    let busy_ns = r.busy_fraction * run_ns;
    let mut charged_ns = r.beacon_airtime_ns as f64;
    for s in &r.stations {
        if s.airtime_ns as f64 > run_ns {
            return Err(format!(
                "station {} was charged {} ns of airtime in a {run_ns} ns run",
                s.station, s.airtime_ns
            ));
        }
        charged_ns += s.airtime_ns as f64;
    }
    if charged_ns > busy_ns + 1e3 {
        return Err(format!(
            "{charged_ns} ns of airtime charged, more than the {busy_ns} ns the medium was busy"
        ));
    }
    Ok(())
}

/// `Err` naming every queue whose peak exceeded its documented limit (issue 25: an
/// ath9k hardware queue that grew for ever).
pub fn check_queue_limits(occupancy: &[QueueOccupancy]) -> Result<(), String> {
    let over: Vec<String> = occupancy
        .iter()
        .filter(|q| !q.within_limit())
        .map(|q| {
            let ac = q.ac.map(|ac| format!(" {ac:?}")).unwrap_or_default();
            format!(
                "node {} {}{ac} held {} (limit {})",
                q.node.0,
                q.queue.name(),
                q.peak,
                q.limit
            )
        })
        .collect();
    if over.is_empty() {
        Ok(())
    } else {
        Err(format!("queue over its limit: {}", over.join("; ")))
    }
}

/// Run `cfg` to its end (as [`Simulation::try_run`] does): its results and the most
/// each queue held, or where it got stuck.
pub fn run_to_end(cfg: SimConfig) -> Result<(Results, Vec<QueueOccupancy>), String> {
    let end = cfg.duration;
    let mut sim = Simulation::new(cfg)?;
    sim.run_until(end);
    if let Some(stuck) = sim.stuck() {
        return Err(stuck.to_string());
    }
    Ok((sim.results(), sim.cell().queue_occupancy()))
}

/// Run `cfg` to its end under [`GUARD`]; fail naming `case` if it outlives the guard,
/// panics, is stuck, loses packets or airtime, or lets a queue exceed its limit.
pub fn run_guarded(case: &str, cfg: SimConfig) -> Results {
    match guarded(GUARD, move || run_to_end(cfg)) {
        Ok(Ok((r, occupancy))) => {
            if let Err(e) = check_conservation(&r)
                .and(check_airtime(&r))
                .and(check_queue_limits(&occupancy))
            {
                panic!("{case}: {e}");
            }
            r
        }
        Ok(Err(e)) => panic!("{case}: {e}"),
        Err(failure) => panic!("{case}: {failure}"),
    }
}

/// How much more wall time per simulated second a run three times as long may take
/// before its cost counts as growing with run length (the model's work per event must
/// not grow with what it has accumulated). Generous: machines are shared, and a
/// short run's fixed costs only make its own rate look worse.
pub const WALL_GROWTH_FACTOR: f64 = 3.0;

/// Wall time that never counts as growth (scheduling noise on a shared machine).
pub const WALL_GROWTH_SLACK: Duration = Duration::from_millis(500);

/// Run `cfg` for `short` and for three times `short`, each the faster of two tries
/// (each under [`GUARD`], to its end), and fail naming `case` if the long run's wall
/// time per simulated second exceeds the short one's by more than
/// [`WALL_GROWTH_FACTOR`] (plus [`WALL_GROWTH_SLACK`]): a guard against cost that grows
/// with run length whatever its cause (issue 25: 0.6 wall-s per sim-s at 4 s, 7 at
/// 12 s), not a speed assertion. The runs' other invariants are [`run_guarded`]'s.
pub fn check_wall_time_linear(case: &str, cfg: SimConfig, short: Nanos) {
    let timed = |duration: Nanos| -> Duration {
        (0..2)
            .map(|_| {
                let mut c = cfg.clone();
                c.duration = duration;
                let start = Instant::now();
                let run = format!("{case}, {:.1} s", duration.as_secs_f64());
                match guarded(GUARD, move || run_to_end(c)) {
                    Ok(Ok(_)) => {}
                    Ok(Err(e)) => panic!("{run}: {e}"),
                    Err(failure) => panic!("{run}: {failure}"),
                }
                start.elapsed()
            })
            .min()
            .unwrap_or_default()
    };
    let long = Nanos::from_ns(3 * short.as_ns());
    let (t_short, t_long) = (timed(short), timed(long));
    let allowed = t_short.mul_f64(3.0 * WALL_GROWTH_FACTOR) + WALL_GROWTH_SLACK;
    assert!(
        t_long <= allowed,
        "{case}: wall time grows with run length: {:.3} s for {:.1} simulated s, {:.3} s for \
         {:.1} s ({:.3} vs {:.3} wall-s per sim-s; at most {WALL_GROWTH_FACTOR}x allowed)",
        t_short.as_secs_f64(),
        short.as_secs_f64(),
        t_long.as_secs_f64(),
        long.as_secs_f64(),
        t_short.as_secs_f64() / short.as_secs_f64(),
        t_long.as_secs_f64() / long.as_secs_f64(),
    );
}
