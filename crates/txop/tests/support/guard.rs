//! Running simulations under a wall-clock guard: a hang fails the test with a message
//! instead of stalling it, a panic is caught with its location, and every finished run
//! is checked for packet conservation (what was offered was delivered, dropped, or is
//! still inside at the end).

use std::cell::RefCell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Once};
use std::time::Duration;
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

/// Run `cfg` to its end under [`GUARD`]; fail naming `case` if it outlives the guard,
/// panics, is stuck, or loses packets.
pub fn run_guarded(case: &str, cfg: SimConfig) -> Results {
    match guarded(GUARD, move || Simulation::new(cfg).map(|sim| sim.try_run())) {
        Ok(Ok(Ok(r))) => {
            if let Err(e) = check_conservation(&r) {
                panic!("{case}: {e}");
            }
            r
        }
        Ok(Ok(Err(stuck))) => panic!("{case}: {stuck}"),
        Ok(Err(e)) => panic!("{case}: {e}"),
        Err(failure) => panic!("{case}: {failure}"),
    }
}
