//! Differential test: the kernel's own TXQ scheduler and AQL accounting (6.12's
//! `ieee80211_next_txq`, `__ieee80211_schedule_txq` behind `ieee80211_schedule_txq` and
//! `ieee80211_return_txq`, `ieee80211_txq_may_transmit`, `ieee80211_txq_schedule_start`
//! with its per-AC AQL check, `ieee80211_txq_airtime_check`,
//! `ieee80211_sta_register_airtime` and `ieee80211_sta_update_pending_airtime`, built by
//! this crate from the installed Linux source) and txop's [`Scheduler`] in its 6.x
//! generation ([`SchedulerKind::DrrAql`]) with [`Aql`], glued as txop's transmit path
//! glues them (`txpath.rs`: `next_txq`, `return_txq`, `may_transmit`, `schedule_start`),
//! run the same random operation sequences at the same times.
//!
//! Each sequence sets up a radio (1–5 stations, `airtime_flags` 0–3, AQL on or off,
//! default or random per-AC limits and threshold) and repeats operations: the clock
//! advances (0–300 ms, across the 100 ms activity window); packets are queued on a
//! station's TXQ of TID 0–7 or the vif's; a driver round (`schedule_start`, then
//! `next_txq` → dequeue with a stored airtime estimate → `return_txq`, several times);
//! a firmware's `may_transmit` asked up to N times (txop: `may_transmit_asking`), then
//! one packet dequeued; a tx status (the pending airtime released, the airtime
//! registered); receive airtime registered; a weight set; a station starting power
//! save; AQL switched off or on, its threshold or a station's limits changed; a station
//! added; a status for airtime never charged (the underflow clamps).
//!
//! At every step both must agree on: the TXQ `next_txq` returns, the answers of
//! `may_transmit`; and after every step, per station and AC, the deficit, the pending
//! airtime, the AQL limits, `ieee80211_txq_airtime_check`, the registered tx and rx
//! airtime; per AC, the schedule round, the pending airtime, the active list in order
//! and the per-AC check; the radio's total pending airtime.
//!
//! The vif TXQ's dequeues charge nothing on either side: txop sends no vif traffic
//! through AQL (docs/reference/kernel-oracle.md). 10 000 sequences from a fixed seed by
//! default; `TXOP_ORACLE_CASES` and `TXOP_ORACLE_SEED` run more or others. A divergence
//! fails with the first differing step and both sides' values.

use kernel_oracle::scheduler::{KTxq, KernelScheduler, RadioSetup, SCHEDULER_SOURCE};
mod support;

use proptest::prelude::*;
use proptest::test_runner::{TestCaseError, TestRunner};
use std::sync::Mutex;
use txop_core::mac::edca::Ac;
use txop_core::mac80211::aql::{Aql, AqlLimits, AqlParams};
use txop_core::mac80211::classify::ac_from_tid;
use txop_core::mac80211::scheduler::{
    MayTransmitAqlCheck, Scheduler, SchedulerKind, SchedulerParams,
};
use txop_core::mac80211::txq::{LinkId, Tid, TxqKey};
use txop_core::Nanos;

/// The kernel's jiffies are the harness's nanoseconds plus this (1100 s), so that a
/// `last_active` of 0 (never active) is long ago, as on a running system; txop's
/// "never" is `None`.
const JIFFIES_OFFSET_NS: u64 = 1 << 40;

/// A radio's configuration.
#[derive(Clone, Debug)]
struct Setup {
    stations: u32,
    airtime_flags: u8,
    aql: bool,
    limit_low_us: [u32; 4],
    limit_high_us: [u32; 4],
    threshold_us: u32,
}

/// A TXQ named by the sequence: station `sta % stations` (or the vif) and a TID.
#[derive(Clone, Copy, Debug)]
struct TxqPick {
    vif: bool,
    sta: u32,
    tid: u8,
}

#[derive(Clone, Debug)]
enum Op {
    Advance {
        ns: u64,
    },
    Enqueue {
        txq: TxqPick,
        packets: u8,
    },
    /// `schedule_start` (if `start`), then up to `visits` of `next_txq` → dequeue up to
    /// `per_visit` packets → `return_txq`.
    Round {
        ac: u8,
        start: bool,
        visits: u8,
        per_visit: u8,
        est_us: Vec<u16>,
    },
    MayTransmit {
        txq: TxqPick,
        max_asks: u32,
        est_us: u16,
    },
    Complete {
        pick: u32,
        tx_us: u32,
        rx_us: u32,
        register: bool,
    },
    RegisterRx {
        sta: u32,
        tid: u8,
        rx_us: u32,
    },
    Weight {
        sta: u32,
        weight: u16,
    },
    PsStart {
        sta: u32,
    },
    AqlEnable {
        on: bool,
    },
    Threshold {
        us: u32,
    },
    StationLimits {
        sta: u32,
        ac: u8,
        low_us: u32,
        high_us: u32,
    },
    AddStation,
    /// A status for airtime never charged: the kernel's underflow clamps.
    Stale {
        sta: u32,
        ac: u8,
        est_us: u16,
    },
}

/// A stored estimate: `tx_time_est` holds multiples of 4 µs up to 4092; 0 is "no
/// estimate" (nothing charged).
fn stored_est() -> impl Strategy<Value = u16> {
    prop_oneof![1 => Just(0u16), 9 => (1u16..1024).prop_map(|x| x * 4)]
}

fn txq_pick() -> impl Strategy<Value = TxqPick> {
    (prop::bool::weighted(0.1), 0u32..16, 0u8..8).prop_map(|(vif, sta, tid)| TxqPick {
        vif,
        sta,
        tid,
    })
}

fn setups() -> impl Strategy<Value = Setup> {
    let limits = prop_oneof![
        1 => Just(([5000u32; 4], [12000u32; 4], 24000u32)),
        1 => (
            prop::array::uniform4(200u32..6000),
            prop::array::uniform4(0u32..8000),
            500u32..30000
        )
            .prop_map(|(low, extra, t)| {
                let high = std::array::from_fn(|i| low[i] + extra[i]);
                (low, high, t)
            }),
    ];
    (
        1u32..=5,
        prop_oneof![6 => Just(3u8), 1 => 0u8..=2],
        prop::bool::weighted(0.85),
        limits,
    )
        .prop_map(
            |(stations, airtime_flags, aql, (low, high, threshold))| Setup {
                stations,
                airtime_flags,
                aql,
                limit_low_us: low,
                limit_high_us: high,
                threshold_us: threshold,
            },
        )
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        8 => prop_oneof![
            6 => 0u64..2_000_000,
            2 => 0u64..30_000_000,
            1 => 0u64..300_000_000
        ]
        .prop_map(|ns| Op::Advance { ns }),
        10 => (txq_pick(), 1u8..6).prop_map(|(txq, packets)| Op::Enqueue { txq, packets }),
        10 => (
            prop_oneof![1 => Just(2u8), 1 => 0u8..4],
            prop::bool::weighted(0.8),
            1u8..6,
            1u8..5,
            prop::collection::vec(stored_est(), 1..6)
        )
            .prop_map(|(ac, start, visits, per_visit, est_us)| Op::Round {
                ac,
                start,
                visits,
                per_visit,
                est_us
            }),
        5 => (
            txq_pick(),
            prop_oneof![3 => 1u32..4, 1 => 1u32..300],
            stored_est()
        )
            .prop_map(|(txq, max_asks, est_us)| Op::MayTransmit {
                txq,
                max_asks,
                est_us
            }),
        12 => (any::<u32>(), 0u32..6000, prop_oneof![3 => Just(0u32), 1 => 0u32..3000], prop::bool::weighted(0.9))
            .prop_map(|(pick, tx_us, rx_us, register)| Op::Complete {
                pick,
                tx_us,
                rx_us,
                register
            }),
        1 => (0u32..16, 0u8..8, 0u32..3000).prop_map(|(sta, tid, rx_us)| Op::RegisterRx {
            sta,
            tid,
            rx_us
        }),
        1 => (0u32..16, prop_oneof![1 => Just(0u16), 3 => 1u16..1024])
            .prop_map(|(sta, weight)| Op::Weight { sta, weight }),
        1 => (0u32..16).prop_map(|sta| Op::PsStart { sta }),
        1 => prop::bool::weighted(0.6).prop_map(|on| Op::AqlEnable { on }),
        1 => (500u32..30000).prop_map(|us| Op::Threshold { us }),
        1 => (0u32..16, 0u8..4, 100u32..6000, 0u32..8000).prop_map(|(sta, ac, low_us, extra)| {
            Op::StationLimits {
                sta,
                ac,
                low_us,
                high_us: low_us + extra
            }
        }),
        1 => Just(Op::AddStation),
        1 => (0u32..16, 0u8..4, stored_est()).prop_map(|(sta, ac, est_us)| Op::Stale {
            sta,
            ac,
            est_us
        }),
    ];
    prop::collection::vec(op, 1..250)
}

/// What the campaign reached, over all sequences.
#[derive(Debug)]
struct Coverage {
    sequences: u64,
    steps: u64,
    served: u64,
    next_none: u64,
    blocked_rounds: u64,
    none_while_listed: u64,
    refusals: u64,
    allowed: u64,
    kept_active_empty: u64,
    ineligible_seen: u64,
    negative_deficits: u64,
    underflow_warnings: u64,
}

impl Coverage {
    const ZERO: Coverage = Coverage {
        sequences: 0,
        steps: 0,
        served: 0,
        next_none: 0,
        blocked_rounds: 0,
        none_while_listed: 0,
        refusals: 0,
        allowed: 0,
        kept_active_empty: 0,
        ineligible_seen: 0,
        negative_deficits: 0,
        underflow_warnings: 0,
    };
}

static COVERAGE: Mutex<Coverage> = Mutex::new(Coverage::ZERO);

/// A packet handed to the hardware, awaiting its status.
#[derive(Clone, Copy, Debug)]
struct InFlight {
    sta: u32,
    tid: u8,
    est_us: u16,
}

/// txop's scheduler and AQL, the kernel's, and the state the harness keeps for both
/// (the TXQs' backlogs and the packets in flight).
struct Pair {
    sched: Scheduler,
    aql: Option<Aql>,
    kernel: KernelScheduler,
    stations: u32,
    /// Packets queued per TXQ: index 0 the vif, then station × 8 + TID + 1.
    backlog: Vec<u32>,
    inflight: Vec<InFlight>,
    now_ns: u64,
    step: u64,
    c: Coverage,
}

macro_rules! agree {
    ($pair:expr, $what:expr, $txop:expr, $kernel:expr) => {{
        let (t, k) = (&$txop, &$kernel);
        if t != k {
            return Err(TestCaseError::fail(format!(
                "step {} at {} ns ({}): txop and the kernel differ\n  txop:   {:?}\n  \
                 kernel: {:?}\n  (kernel code: {})",
                $pair.step, $pair.now_ns, $what, t, k, SCHEDULER_SOURCE
            )));
        }
    }};
}

fn key(t: KTxq) -> TxqKey {
    match t.sta {
        Some(s) => TxqKey::station(LinkId(s as u16), Tid(t.tid as u8)),
        None => TxqKey::vif(),
    }
}

fn ktxq(t: TxqKey) -> KTxq {
    KTxq {
        sta: t.sta.map(|s| s.index() as u32),
        tid: t.tid.0 as u32,
    }
}

impl Pair {
    fn new(setup: &Setup) -> Pair {
        let params = SchedulerParams {
            kind: SchedulerKind::DrrAql,
            airtime_flags: setup.airtime_flags,
            quantum_shift: 0,
            may_transmit_aql_check: MayTransmitAqlCheck::AsWritten,
        };
        let aql = setup.aql.then(|| {
            Aql::new(
                AqlParams {
                    limit_low_us: setup.limit_low_us,
                    limit_high_us: setup.limit_high_us,
                    threshold_us: setup.threshold_us,
                    per_ac_limit: true,
                    enabled: true,
                    code: None,
                },
                setup.stations as usize,
            )
        });
        let mut kernel = KernelScheduler::new(&RadioSetup {
            airtime_flags: setup.airtime_flags as u32,
            aql: setup.aql,
            limit_low_us: setup.limit_low_us,
            limit_high_us: setup.limit_high_us,
            threshold_us: setup.threshold_us,
        })
        .unwrap_or_else(|e| panic!("{e}"));
        for _ in 0..setup.stations {
            kernel.add_station();
        }
        Pair {
            sched: Scheduler::new(params, setup.stations as usize),
            aql,
            kernel,
            stations: setup.stations,
            backlog: vec![0; 1 + 8 * setup.stations as usize],
            inflight: Vec::new(),
            now_ns: 0,
            step: 0,
            c: Coverage {
                sequences: 1,
                ..Coverage::ZERO
            },
        }
    }

    fn now(&self) -> Nanos {
        Nanos::from_ns(self.now_ns)
    }

    fn kt(&self) -> u64 {
        self.now_ns + JIFFIES_OFFSET_NS
    }

    fn txq(&self, p: TxqPick) -> KTxq {
        KTxq {
            sta: (!p.vif).then_some(p.sta % self.stations),
            tid: if p.vif { 0 } else { p.tid as u32 },
        }
    }

    fn slot(t: KTxq) -> usize {
        t.sta.map_or(0, |s| 1 + 8 * s as usize + t.tid as usize)
    }

    fn ac_of(t: KTxq) -> Ac {
        if t.sta.is_none() {
            Ac::Be
        } else {
            ac_from_tid(t.tid as u8)
        }
    }

    fn ac_index(ac: Ac) -> u32 {
        ac.index() as u32
    }

    /// `txpath.rs`'s `schedule_start`.
    fn schedule_start(&mut self, ac: Ac) {
        let aql = self.aql.as_ref();
        self.sched.schedule_start(self.now(), ac, &|n| {
            aql.is_some_and(|a| a.ac_over_limit(ac, n))
        });
        self.kernel.schedule_start(self.kt(), Self::ac_index(ac));
    }

    /// `txpath.rs`'s `next_txq`.
    fn next_txq(&mut self, ac: Ac) -> Result<Option<KTxq>, TestCaseError> {
        let aql = self.aql.as_ref();
        let mut eligible = |k: TxqKey| match (aql, k.sta) {
            (Some(a), Some(sta)) => a.station_eligible(sta, ac),
            _ => true,
        };
        let pending = |sta: LinkId| aql.map_or(0, |a| a.pending_us(sta, ac));
        let now = self.now();
        let t = self
            .sched
            .next_txq(now, ac, &mut eligible, &pending)
            .map(ktxq);
        let k = self.kernel.next_txq(self.kt(), Self::ac_index(ac));
        agree!(self, format!("next_txq({ac:?})"), t, k);
        Ok(t)
    }

    /// `txpath.rs`'s `return_txq`: has data if packets are queued.
    fn return_txq(&mut self, t: KTxq) {
        let ac = Self::ac_of(t);
        let has = self.backlog[Self::slot(t)] > 0;
        let aql = self.aql.as_ref();
        let pending = |sta: LinkId| aql.map_or(0, |a| a.pending_us(sta, ac));
        self.sched.return_txq(self.now(), key(t), ac, has, &pending);
        self.kernel.return_txq(self.kt(), t, false);
        if !has && self.kernel.listed(t) {
            self.c.kept_active_empty += 1;
        }
    }

    /// One packet leaves `t` with the stored estimate `est_us` (the vif's: none).
    fn dequeue(&mut self, t: KTxq, est_us: u16) {
        let slot = Self::slot(t);
        if self.backlog[slot] == 0 {
            return;
        }
        self.backlog[slot] -= 1;
        let Some(sta) = t.sta else {
            self.kernel.dequeue(self.kt(), t, 0);
            return;
        };
        let ac = Self::ac_of(t);
        if est_us > 0 {
            if let Some(a) = self.aql.as_mut() {
                a.add(LinkId(sta as u16), ac, est_us as u32);
            }
        }
        self.kernel.dequeue(self.kt(), t, est_us);
        self.inflight.push(InFlight {
            sta,
            tid: t.tid as u8,
            est_us,
        });
    }

    fn apply(&mut self, op: &Op) -> Result<(), TestCaseError> {
        self.step += 1;
        self.c.steps += 1;
        match op {
            Op::Advance { ns } => self.now_ns += ns,
            Op::Enqueue { txq, packets } => {
                let t = self.txq(*txq);
                for _ in 0..*packets {
                    self.backlog[Self::slot(t)] += 1;
                    self.sched.schedule_txq(self.now(), key(t), Self::ac_of(t));
                    self.kernel.enqueue(self.kt(), t);
                }
            }
            Op::Round {
                ac,
                start,
                visits,
                per_visit,
                est_us,
            } => {
                let ac = Ac::ALL[*ac as usize];
                if *start {
                    self.schedule_start(ac);
                    if self.sched.schedule_round(ac) == 0 {
                        self.c.blocked_rounds += 1;
                    }
                }
                let mut e = est_us.iter().cycle();
                for _ in 0..*visits {
                    let Some(t) = self.next_txq(ac)? else {
                        self.c.next_none += 1;
                        if self.sched.active_txq_count(ac) > 0 {
                            self.c.none_while_listed += 1;
                        }
                        break;
                    };
                    self.c.served += 1;
                    for _ in 0..*per_visit {
                        let est = *e.next().expect("non-empty");
                        self.dequeue(t, est);
                    }
                    self.return_txq(t);
                }
            }
            Op::MayTransmit {
                txq,
                max_asks,
                est_us,
            } => {
                let t = self.txq(*txq);
                let ac = Self::ac_of(t);
                let aql = self.aql.as_ref();
                let mut eligible = |k: TxqKey| match (aql, k.sta) {
                    (Some(a), Some(sta)) => a.station_eligible(sta, ac),
                    _ => true,
                };
                let pending = |sta: LinkId| aql.map_or(0, |a| a.pending_us(sta, ac));
                let over = |n: usize| aql.is_some_and(|a| a.ac_over_limit(ac, n));
                let now = self.now();
                let answers = self.sched.may_transmit_asking(
                    now,
                    key(t),
                    ac,
                    *max_asks,
                    &mut eligible,
                    &pending,
                    &over,
                );
                let mut k_refusals = 0;
                let mut k_allowed = false;
                while k_refusals < *max_asks {
                    if self.kernel.may_transmit(self.kt(), t) {
                        k_allowed = true;
                        break;
                    }
                    k_refusals += 1;
                }
                agree!(
                    self,
                    format!(
                        "may_transmit({t:?}) asked up to {max_asks} times: (refusals, allowed)"
                    ),
                    (answers.refusals, answers.allowed),
                    (k_refusals, k_allowed)
                );
                self.c.refusals += k_refusals as u64;
                if k_allowed {
                    self.c.allowed += 1;
                    if self.backlog[Self::slot(t)] > 0 {
                        self.dequeue(t, *est_us);
                        self.return_txq(t);
                    }
                }
            }
            Op::Complete {
                pick,
                tx_us,
                rx_us,
                register,
            } => {
                if !self.inflight.is_empty() {
                    let p = self.inflight.remove(*pick as usize % self.inflight.len());
                    let t = KTxq {
                        sta: Some(p.sta),
                        tid: p.tid as u32,
                    };
                    let ac = Self::ac_of(t);
                    if p.est_us > 0 {
                        if let Some(a) = self.aql.as_mut() {
                            a.complete(LinkId(p.sta as u16), ac, p.est_us as u32);
                        }
                        self.kernel
                            .complete(self.kt(), p.sta, Self::ac_index(ac), p.est_us);
                    }
                    if *register {
                        self.sched
                            .register_airtime(self.now(), key(t), ac, *tx_us, *rx_us);
                        self.kernel.register_airtime(
                            self.kt(),
                            p.sta,
                            p.tid as u32,
                            *tx_us,
                            *rx_us,
                        );
                    }
                }
            }
            Op::RegisterRx { sta, tid, rx_us } => {
                let t = self.txq(TxqPick {
                    vif: false,
                    sta: *sta,
                    tid: *tid,
                });
                let s = t.sta.expect("a station");
                self.sched
                    .register_airtime(self.now(), key(t), Self::ac_of(t), 0, *rx_us);
                self.kernel.register_airtime(self.kt(), s, t.tid, 0, *rx_us);
            }
            Op::Weight { sta, weight } => {
                let s = sta % self.stations;
                self.sched.set_weight(LinkId(s as u16), *weight);
                self.kernel.set_weight(s, *weight);
            }
            Op::PsStart { sta } => {
                let s = sta % self.stations;
                for tid in 0..8u8 {
                    let t = KTxq {
                        sta: Some(s),
                        tid: tid as u32,
                    };
                    self.sched
                        .unschedule_txq(self.now(), key(t), Self::ac_of(t));
                }
                self.kernel.ps_start(s);
            }
            Op::AqlEnable { on } => {
                if let Some(a) = self.aql.as_mut() {
                    a.set_enabled(*on);
                }
                self.kernel.set_aql_enable(*on);
            }
            Op::Threshold { us } => {
                if let Some(a) = self.aql.as_mut() {
                    a.set_threshold_us(*us);
                }
                self.kernel.set_threshold(*us);
            }
            Op::StationLimits {
                sta,
                ac,
                low_us,
                high_us,
            } => {
                let s = sta % self.stations;
                if let Some(a) = self.aql.as_mut() {
                    a.set_station_limits(
                        LinkId(s as u16),
                        Ac::ALL[*ac as usize],
                        AqlLimits {
                            low_us: *low_us,
                            high_us: *high_us,
                        },
                    );
                }
                self.kernel
                    .set_station_limits(s, *ac as u32, *low_us, *high_us);
            }
            Op::AddStation => {
                if self.stations < 16 {
                    if let Some(a) = self.aql.as_mut() {
                        a.add_station();
                    }
                    self.kernel.add_station();
                    self.stations += 1;
                    self.backlog.resize(1 + 8 * self.stations as usize, 0);
                }
            }
            Op::Stale { sta, ac, est_us } => {
                if *est_us > 0 {
                    let s = sta % self.stations;
                    let ac = Ac::ALL[*ac as usize];
                    if let Some(a) = self.aql.as_mut() {
                        a.complete(LinkId(s as u16), ac, *est_us as u32);
                    }
                    self.kernel
                        .complete(self.kt(), s, Self::ac_index(ac), *est_us);
                }
            }
        }
        self.compare(op)
    }

    /// Every piece of state both keep.
    fn compare(&mut self, op: &Op) -> Result<(), TestCaseError> {
        let what = |s: &str| format!("after {op:?}: {s}");
        for s in 0..self.stations {
            let link = LinkId(s as u16);
            for ac in Ac::ALL {
                let k = self.kernel.station(s, Self::ac_index(ac));
                agree!(
                    self,
                    what(&format!("station {s} {ac:?} deficit")),
                    self.sched.deficit_us(link, ac),
                    k.deficit as i64
                );
                if k.deficit < 0 {
                    self.c.negative_deficits += 1;
                }
                let air = self.sched.airtime(link, ac);
                agree!(
                    self,
                    what(&format!("station {s} {ac:?} airtime (tx, rx)")),
                    (air.tx_us, air.rx_us),
                    (k.tx_airtime, k.rx_airtime)
                );
                let (pending, limits, eligible) = match self.aql.as_ref() {
                    Some(a) => {
                        let l = a.station_limits(link, ac);
                        (
                            a.pending_us(link, ac) as i64,
                            Some((l.low_us, l.high_us)),
                            a.station_eligible(link, ac),
                        )
                    }
                    None => (0, None, true),
                };
                agree!(
                    self,
                    what(&format!("station {s} {ac:?} aql_tx_pending")),
                    pending,
                    k.aql_tx_pending as i64
                );
                if limits.is_some() {
                    agree!(
                        self,
                        what(&format!("station {s} {ac:?} AQL limits (low, high)")),
                        limits,
                        Some((k.aql_limit_low, k.aql_limit_high))
                    );
                }
                agree!(
                    self,
                    what(&format!("station {s} {ac:?} ieee80211_txq_airtime_check")),
                    eligible,
                    k.eligible != 0
                );
                if !eligible {
                    self.c.ineligible_seen += 1;
                }
            }
        }
        let total = self.aql.as_ref().map_or(0, |a| a.total_pending_us() as i64);
        agree!(
            self,
            what("aql_total_pending_airtime"),
            total,
            self.kernel.total_pending() as i64
        );
        for ac in Ac::ALL {
            let k = self.kernel.ac(Self::ac_index(ac));
            agree!(
                self,
                what(&format!("{ac:?} schedule_round")),
                self.sched.schedule_round(ac) as u32,
                k.schedule_round
            );
            let ac_pending = self.aql.as_ref().map_or(0, |a| a.ac_pending_us(ac) as i64);
            agree!(
                self,
                what(&format!("{ac:?} aql_ac_pending_airtime")),
                ac_pending,
                k.ac_pending as i64
            );
            let list: Vec<KTxq> = self
                .sched
                .active_list(ac)
                .expect("DrrAql keeps an active list")
                .into_iter()
                .map(ktxq)
                .collect();
            agree!(
                self,
                what(&format!("{ac:?} active list, head first")),
                list,
                self.kernel.active_list(Self::ac_index(ac))
            );
            let over = self
                .aql
                .as_ref()
                .is_some_and(|a| a.ac_over_limit(ac, list.len()));
            agree!(
                self,
                what(&format!("{ac:?} ieee80211_txq_schedule_airtime_check")),
                !over,
                k.schedule_airtime_ok != 0
            );
        }
        Ok(())
    }

    fn run(mut self, ops: &[Op]) -> Result<(), TestCaseError> {
        for op in ops {
            self.apply(op)?;
        }
        self.c.underflow_warnings = self.kernel.warnings() as u64;
        let mut c = COVERAGE.lock().unwrap_or_else(|e| e.into_inner());
        c.sequences += self.c.sequences;
        c.steps += self.c.steps;
        c.served += self.c.served;
        c.next_none += self.c.next_none;
        c.blocked_rounds += self.c.blocked_rounds;
        c.none_while_listed += self.c.none_while_listed;
        c.refusals += self.c.refusals;
        c.allowed += self.c.allowed;
        c.kept_active_empty += self.c.kept_active_empty;
        c.ineligible_seen += self.c.ineligible_seen;
        c.negative_deficits += self.c.negative_deficits;
        c.underflow_warnings += self.c.underflow_warnings;
        Ok(())
    }
}

/// txop's TID → AC map is the kernel's `ieee802_1d_to_ac`.
#[test]
fn tid_to_ac_is_the_kernels() {
    if let Err(e) = KernelScheduler::new(&RadioSetup {
        airtime_flags: 3,
        aql: true,
        limit_low_us: [5000; 4],
        limit_high_us: [12000; 4],
        threshold_us: 24000,
    }) {
        panic!("{e}");
    }
    for tid in 0..16u8 {
        assert_eq!(
            ac_from_tid(tid).index() as u32,
            KernelScheduler::ac_from_tid(tid as u32),
            "TID {tid}"
        );
    }
}

#[test]
fn txop_scheduler_and_aql_match_the_kernels_step_by_step() {
    let mut runner = TestRunner::new(support::config());
    if let Err(e) = runner.run(&(setups(), ops()), |(setup, ops)| {
        Pair::new(&setup).run(&ops)
    }) {
        panic!("{e}");
    }
    let c = COVERAGE.lock().unwrap_or_else(|e| e.into_inner());
    eprintln!("kernel oracle: {c:?} ({SCHEDULER_SOURCE})");
    support::assert_reached(&[
        ("a TXQ served by next_txq", c.served),
        ("next_txq returning none", c.next_none),
        ("a round blocked by the per-AC AQL check", c.blocked_rounds),
        (
            "next_txq refusing a TXQ already served this round",
            c.none_while_listed,
        ),
        ("a may_transmit refusal", c.refusals),
        ("a may_transmit allowed", c.allowed),
        (
            "an empty TXQ kept listed (ieee80211_txq_keep_active)",
            c.kept_active_empty,
        ),
        (
            "a station held by ieee80211_txq_airtime_check",
            c.ineligible_seen,
        ),
        ("a negative deficit", c.negative_deficits),
        ("a pending-airtime underflow", c.underflow_warnings),
    ]);
}
