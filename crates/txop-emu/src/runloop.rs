//! The real-time loop: one thread, epoll over the TUN devices and the signal pipe,
//! the monotonic clock as the model's time axis.
//!
//! Each turn runs everything the model has due (cell deadlines, wired-link arrivals,
//! host bus deadlines)
//! and writes what leaves the network, then sleeps until the next deadline or a packet
//! — `epoll_pwait2` with a nanosecond timeout and the thread's timer slack at 1 ns
//! (the default 50 µs slack would be most of the timing error) — and reads what
//! arrived, up to [`READ_BATCH`] packets per device per turn so no device starves the
//! others or the deadlines. Within `spin` of a deadline it polls without sleeping.

use crate::addr::{Endpoint, Site};
use crate::engine::{Engine, Port};
use crate::tun::Tun;
use std::io;
use std::time::{Duration, Instant};
use txop_core::world::World;
use txop_core::Nanos;

/// Packets read from one device per turn.
pub const READ_BATCH: usize = 64;

/// The model's clock: nanoseconds of CLOCK_MONOTONIC since the run started.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    start: Instant,
}

impl Clock {
    pub fn start() -> Clock {
        Clock {
            start: Instant::now(),
        }
    }
    pub fn now(&self) -> Nanos {
        Nanos(self.start.elapsed().as_nanos() as u64)
    }
}

/// Writes to the TUN devices, one per site.
struct TunPort<'a> {
    tuns: &'a [Tun],
    /// Where each BSS's devices begin in `tuns` (its server's, then its stations').
    first: Vec<usize>,
    clock: Clock,
}

impl<'a> TunPort<'a> {
    /// A port over `tuns`, one per site of `sites` (BSS by BSS, each BSS's server
    /// then its stations, as [`crate::addr::Plan::sites`] lists them).
    fn new(tuns: &'a [Tun], sites: &[Site], clock: Clock) -> TunPort<'a> {
        let mut first = Vec::new();
        for (i, s) in sites.iter().enumerate() {
            if s.endpoint == Endpoint::Server {
                first.resize(s.bss.index() + 1, i);
            }
        }
        TunPort { tuns, first, clock }
    }
}

impl Port for TunPort<'_> {
    fn now(&self) -> Nanos {
        self.clock.now()
    }
    fn write(&mut self, to: Endpoint, bytes: &[u8]) -> io::Result<()> {
        self.write_at(Site::new(txop_core::world::BssId(0), to), bytes)
    }
    fn write_at(&mut self, to: Site, bytes: &[u8]) -> io::Result<()> {
        let k = to.bss.index();
        let end = self.first.get(k + 1).copied().unwrap_or(self.tuns.len());
        let tun = self
            .first
            .get(k)
            .map(|&i| i + to.endpoint.index())
            .filter(|&i| i < end)
            .and_then(|i| self.tuns.get(i));
        match tun {
            Some(t) => t.write(bytes),
            None => Err(io::Error::from(io::ErrorKind::NotFound)),
        }
    }
}

/// Run everything due in `world` up to and including `now`, in the world's order.
fn advance(world: &mut World<Engine>, now: Nanos, port: &mut dyn Port) {
    while let Some(due) = world.next_due(now) {
        world.step(due, port);
    }
}

/// When anything in `world` is next due.
fn next_deadline(world: &mut World<Engine>) -> Option<Nanos> {
    world
        .bsss_mut()
        .iter_mut()
        .filter_map(Engine::next_deadline)
        .min()
}

/// Options of the loop.
#[derive(Clone, Copy, Debug)]
pub struct LoopOptions {
    /// Stop sleeping this long before a deadline and poll until it (CPU for
    /// precision).
    pub spin: Duration,
    /// SCHED_FIFO priority of the loop's thread (0: the normal scheduler).
    pub realtime_priority: i32,
}

impl Default for LoopOptions {
    /// 30 µs of polling before each deadline: on a 2-core VM this took the median
    /// timing error of an idle ping from 37 µs to 10 µs for a few % of a core.
    /// SCHED_FIFO priority 10: under load it took the p99 from 2.5 ms to 0.2 ms.
    fn default() -> Self {
        LoopOptions {
            spin: Duration::from_micros(30),
            realtime_priority: 10,
        }
    }
}

/// What the loop measured about itself.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct LoopStats {
    pub wall_s: f64,
    /// CPU time of the loop's thread (user + system), seconds.
    pub cpu_s: f64,
    /// epoll waits, and reads that failed with an error other than "nothing waiting".
    pub wakeups: u64,
    pub read_errors: u64,
}

impl LoopStats {
    /// CPU use of the loop, as a fraction of one core.
    pub fn cpu_fraction(&self) -> f64 {
        if self.wall_s > 0.0 {
            self.cpu_s / self.wall_s
        } else {
            0.0
        }
    }
}

fn thread_cpu_s() -> f64 {
    // SAFETY: getrusage(2) fills a zeroed struct we own.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// An epoll instance.
struct Epoll {
    fd: std::os::fd::OwnedFd,
    /// `epoll_pwait2` is missing before Linux 5.11: fall back to millisecond waits.
    pwait2: bool,
}

impl Epoll {
    fn new() -> io::Result<Epoll> {
        use std::os::fd::FromRawFd;
        // SAFETY: epoll_create1(2); the fd is owned below.
        let raw = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Epoll {
            // SAFETY: a fresh fd nothing else owns.
            fd: unsafe { std::os::fd::OwnedFd::from_raw_fd(raw) },
            pwait2: true,
        })
    }

    fn add(&self, fd: std::os::fd::RawFd, data: u64) -> io::Result<()> {
        use std::os::fd::AsRawFd;
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: data,
        };
        // SAFETY: epoll_ctl(2) with a valid epoll fd and event struct.
        if unsafe { libc::epoll_ctl(self.fd.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Wait up to `timeout` (`None`: until an event); the number of events.
    fn wait(&mut self, evs: &mut [libc::epoll_event], timeout: Option<Duration>) -> usize {
        use std::os::fd::AsRawFd;
        let fd = self.fd.as_raw_fd();
        let max = evs.len() as libc::c_int;
        if self.pwait2 {
            let ts = timeout.map(|t| libc::timespec {
                tv_sec: t.as_secs() as libc::time_t,
                tv_nsec: t.subsec_nanos() as libc::c_long,
            });
            let tp = ts.as_ref().map_or(std::ptr::null(), |t| t as *const _);
            // SAFETY: epoll_pwait2(2) writes at most `max` events into `evs`.
            let n = unsafe { libc::epoll_pwait2(fd, evs.as_mut_ptr(), max, tp, std::ptr::null()) };
            if n >= 0 {
                return n as usize;
            }
            if io::Error::last_os_error().raw_os_error() != Some(libc::ENOSYS) {
                return 0; // EINTR: a signal; the caller looks at the flags.
            }
            self.pwait2 = false;
        }
        let ms = timeout.map_or(-1, |t| {
            t.as_nanos().div_ceil(1_000_000).min(i32::MAX as u128) as i32
        });
        // SAFETY: epoll_wait(2) writes at most `max` events into `evs`.
        let n = unsafe { libc::epoll_wait(fd, evs.as_mut_ptr(), max, ms) };
        n.max(0) as usize
    }
}

const WAKE: u64 = u64::MAX;

/// Back to the normal scheduler (the teardown and the report need no priority).
fn set_normal() {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: sched_setscheduler(2) on the calling thread with a valid param.
    unsafe {
        libc::sched_setscheduler(0, libc::SCHED_OTHER, &param);
    }
}

/// Run this thread under SCHED_FIFO at `priority`, so that the programs it carries
/// (and anything else on the machine) cannot delay its deadlines; children forked
/// later get the normal policy back (`SCHED_RESET_ON_FORK`). Best effort: without
/// the privilege the loop runs at normal priority.
fn set_realtime(priority: i32) -> bool {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: sched_setscheduler(2) on the calling thread with a valid param.
    unsafe {
        libc::sched_setscheduler(0, libc::SCHED_FIFO | libc::SCHED_RESET_ON_FORK, &param) == 0
    }
}

/// Run the world's engines (one per BSS) in real time over `tuns` (one per site of
/// `sites`) until `control` says stop. `control` is called at the start and whenever
/// `wake_fd` turns readable (a signal arrived); it drains the fd itself.
pub fn run(
    world: &mut World<Engine>,
    tuns: &[Tun],
    sites: &[Site],
    wake_fd: std::os::fd::RawFd,
    control: &mut dyn FnMut() -> bool,
    opts: LoopOptions,
    clock: Clock,
) -> io::Result<LoopStats> {
    // SAFETY: prctl(2) on this thread's own timer slack.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
    if opts.realtime_priority > 0 {
        set_realtime(opts.realtime_priority);
    }
    let mut ep = Epoll::new()?;
    for (i, t) in tuns.iter().enumerate() {
        ep.add(t.raw_fd(), i as u64)?;
    }
    ep.add(wake_fd, WAKE)?;
    let mut evs = vec![libc::epoll_event { events: 0, u64: 0 }; tuns.len() + 1];
    let mut port = TunPort::new(tuns, sites, clock);
    let mut stats = LoopStats::default();
    let cpu0 = thread_cpu_s();
    let wall0 = Instant::now();
    let mut stop = control();
    while !stop {
        advance(world, clock.now(), &mut port);
        let timeout = next_deadline(world)
            .map(|d| Duration::from_nanos(d.as_ns().saturating_sub(clock.now().as_ns())));
        // Sleep until `spin` before the deadline, then poll without sleeping: the
        // wake-up latency of a sleeping thread (tens of µs) would be timing error.
        let timeout = timeout.map(|t| t.saturating_sub(opts.spin));
        let n = ep.wait(&mut evs, timeout);
        stats.wakeups += 1;
        for ev in &evs[..n] {
            let data = ev.u64;
            if data == WAKE {
                stop |= control();
                continue;
            }
            let (Some(tun), Some(&from)) = (tuns.get(data as usize), sites.get(data as usize))
            else {
                continue;
            };
            for _ in 0..READ_BATCH {
                let b = from.bss.index();
                let mut buf = world.bsss_mut()[b].buffer();
                match tun.read(&mut buf[..]) {
                    Ok(len) => {
                        // Everything due before it first, in the world's order; then
                        // what it put across the junction.
                        let now = clock.now();
                        advance(world, now, &mut port);
                        let engine = &mut world.bsss_mut()[b];
                        engine.packet_in(now, from.endpoint, buf, len, &mut port);
                        world.settle(&mut port);
                    }
                    Err(e) => {
                        world.bsss_mut()[b].recycle(buf);
                        if e.kind() != io::ErrorKind::WouldBlock
                            && e.kind() != io::ErrorKind::Interrupted
                        {
                            stats.read_errors += 1;
                        }
                        break;
                    }
                }
            }
        }
    }
    stats.wall_s = wall0.elapsed().as_secs_f64();
    stats.cpu_s = thread_cpu_s() - cpu0;
    if opts.realtime_priority > 0 {
        set_normal();
    }
    Ok(stats)
}
