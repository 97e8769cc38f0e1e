//! Property tests of the TXQ schedulers (reference §5, with §6.4 for AQL eligibility):
//! every [`SchedulerKind`], `airtime_flags` 0–3, the mainline and OpenWrt quanta and both
//! readings of 6.0's `may_transmit` AQL check, over a few stations (one of them named
//! only after the scheduler was built) with a few TXQs each, QoS (TIDs on their ACs,
//! §4.2) or not (every TID on BE), and sometimes the vif TXQ. Random sequences of
//! `schedule_txq`, `unschedule_txq`, driver rounds (`schedule_start`, then `next_txq`,
//! `return_txq` with or without data, with the pending airtime grown by what was
//! dequeued, and arrivals, holding up to three TXQs at once; random AQL eligibility,
//! pending airtime and per-AC limit), `register_airtime`,
//! `may_transmit` / `may_transmit_asking`, weight changes and pauses. A model kept
//! beside the scheduler says which TXQs are scheduled. Checked after every operation,
//! without expected numbers from the code:
//!
//! - **scheduled set**: `is_scheduled` agrees with the model (§5.1–§5.5: a TXQ is
//!   scheduled by `schedule_txq`, leaves with `unschedule_txq`, with `next_txq` in the
//!   list kinds, with `may_transmit`'s yes in the list kinds, when returned empty in the
//!   virtual-time kind and, in ath9k, when an empty TXQ reaches the head; a returned TXQ
//!   with data comes back; 6.0 keeps an empty one in debt that was active in the last
//!   100 ms; ath9k lists a station TXQ again when a charge leaves it in debt), and
//!   `active_txq_count` counts exactly the scheduled TXQs of the AC;
//! - **hand-outs**: `next_txq` hands out only a TXQ of that AC that was scheduled, that
//!   AQL called eligible, never one the driver still holds, at most once per round in
//!   the DRR and round-robin kinds (§5.2), nothing in a 6.0 round opened over the AC's
//!   limit (§5.4); in virtual time only a TXQ whose virtual time is not ahead of the
//!   AC's, after the catch-up (5.14 has no rounds: a TXQ returned empty and scheduled
//!   again may come again); in ath9k only a TXQ with data, and `None` only when no
//!   scheduled TXQ of the AC has data and is eligible (ath9k serves its head until the
//!   deficit is spent, so its driver returns a TXQ before asking again, §5.5);
//! - **airtime is conserved**: each station's `airtime` counters (TX and RX separately,
//!   per AC) are the sums `register_airtime` was given for its TXQs;
//! - **deficits move only by the rules** (§5.2, §5.4, §5.5): a charge takes exactly
//!   the charged airtime (per `airtime_flags`; 6.0 only while the station is active),
//!   `next_txq` and `may_transmit` only add whole quanta (`weight << shift`; ath9k
//!   300 µs) and only to a station in debt, nothing else moves a deficit; virtual times
//!   never go back (§5.3), except that an inserted TXQ's station is set to the AC's
//!   virtual time while that is below 20 ms (the kernel's wrapping u64 test, kept by the
//!   model); weights are what was set (0 is ignored);
//! - **`may_transmit`**: yes for an unscheduled or vif TXQ in the list kinds, always in
//!   round robin and ath9k, for a listed 6.0 TXQ the per-AC check lets through; a no
//!   only for a scheduled TXQ, which stays scheduled; in virtual time yes only for a
//!   scheduled, eligible TXQ not ahead of the AC; the per-AC limit is asked about the
//!   AC's active TXQs; `may_transmit_asking(k)` leaves the scheduler exactly as asking
//!   one at a time would;
//! - **no TXQ starves**: after the random sequence, each AC's TXQs (one per station,
//!   plus the vif except in ath9k) are kept backlogged and returned with data, AQL lets
//!   everything through, and each service is charged 100–1000 µs TX and RX; every TXQ is
//!   handed out within a number of rounds bounded from the state at that point by the
//!   algorithm's quanta and weights (see [`Driver::starvation_bound_rounds`]); then
//!   again from the state that phase left. One TXQ per station: a station's TXQs on
//!   one AC share its deficit (or virtual time), so the bound is between stations; two
//!   TIDs of one station on one AC can take turns being topped up such that one of
//!   them is always the one served (charges that leave the deficit between −2q and
//!   −q − 1 do it), in the kernel as here;
//! - **determinism**: the same sequence gives the same hand-outs and the same state.
//!
//! 512 sequences of up to 60 operations, each followed by the starvation phases, by
//! default (0.4 s in release); `PROPTEST_CASES` sets the count (30 000 take about
//! 10 s).

use proptest::prelude::*;
use std::cell::RefCell;
use txop_core::mac::edca::Ac;
use txop_core::mac80211::scheduler::{
    MayTransmitAqlCheck, Scheduler, SchedulerKind, SchedulerParams, AIRTIME_ACTIVE_DURATION,
    AIRTIME_MAX_BEHIND_US, AIRTIME_USE_RX, AIRTIME_USE_TX, ATH_AIRTIME_QUANTUM_US,
    DEFAULT_AIRTIME_WEIGHT,
};
use txop_core::mac80211::txq::{LinkId, Tid, TxqKey};
use txop_core::Nanos;

/// A random scheduler and the TXQs in use.
#[derive(Clone, Debug)]
struct Setup {
    params: SchedulerParams,
    /// Stations given to `Scheduler::new`; the TXQs may also use station `n_stations`.
    n_stations: usize,
    /// TIDs on their ACs (QoS), or every TID on BE.
    qos: bool,
    /// Distinct TXQs.
    txqs: Vec<TxqKey>,
}

impl Setup {
    /// The AC a TXQ is scheduled on (§4.2; the vif TXQ is BE, §4.1).
    fn ac(&self, txq: TxqKey) -> Ac {
        if self.qos && txq.sta.is_some() {
            Ac::from_up(txq.tid.0)
        } else {
            Ac::Be
        }
    }

    fn index_of(&self, txq: TxqKey) -> Option<usize> {
        self.txqs.iter().position(|&t| t == txq)
    }

    /// Stations the TXQs may name.
    fn stations(&self) -> usize {
        self.n_stations + 1
    }

    fn is_list_kind(&self) -> bool {
        matches!(
            self.params.kind,
            SchedulerKind::RoundRobin | SchedulerKind::Drr | SchedulerKind::DrrAql
        )
    }
}

/// One step of a driver round.
#[derive(Clone, Copy, Debug)]
enum Step {
    /// `next_txq`; the driver holds what it gets.
    Next,
    /// `return_txq` of one of the held TXQs, after dequeuing frames of `dequeued_us`
    /// estimated airtime from it (AQL's pending airtime grows at dequeue, §6.3).
    Return {
        held: usize,
        has_data: bool,
        dequeued_us: u32,
    },
    /// A packet arrives for a TXQ (`schedule_txq`).
    Arrive { txq: usize },
}

/// The AQL state a round or a `may_transmit` sees.
#[derive(Clone, Debug)]
struct AqlView {
    /// Bit `i`: setup TXQ `i` is not eligible (§6.4).
    ineligible: u16,
    /// Pending airtime per station (index modulo the length), µs.
    pending_us: Vec<u32>,
    /// The AC is over its 6.0 limit.
    over_limit: bool,
}

impl AqlView {
    fn open() -> AqlView {
        AqlView {
            ineligible: 0,
            pending_us: vec![0],
            over_limit: false,
        }
    }

    fn pending(&self, sta: LinkId) -> u32 {
        self.pending_us[sta.index() % self.pending_us.len()]
    }
}

/// One operation. TXQ and station indices are taken modulo the setup's counts.
#[derive(Clone, Debug)]
enum Op {
    Schedule {
        txq: usize,
    },
    Unschedule {
        txq: usize,
    },
    Round {
        ac: usize,
        aql: AqlView,
        steps: Vec<Step>,
        /// Bit `i`: the `i`-th TXQ still held at the end is returned with data.
        end_has_data: u8,
    },
    Register {
        txq: usize,
        tx_us: u32,
        rx_us: u32,
    },
    MayTransmit {
        txq: usize,
        aql: AqlView,
        /// `None`: one `may_transmit`; `Some(k)`: `may_transmit_asking(k)`.
        asks: Option<u32>,
    },
    SetWeight {
        sta: usize,
        weight: u16,
    },
    Advance {
        us: u64,
    },
}

fn kinds() -> impl Strategy<Value = SchedulerKind> {
    proptest::sample::select(SchedulerKind::ALL.to_vec())
}

fn setups() -> impl Strategy<Value = Setup> {
    (
        kinds(),
        prop_oneof![1 => Just(0u8), 1 => Just(1), 1 => Just(2), 3 => Just(3)],
        prop_oneof![Just(0u8), Just(3)],
        prop_oneof![
            Just(MayTransmitAqlCheck::AsWritten),
            Just(MayTransmitAqlCheck::Flipped)
        ],
        1usize..=4,
        any::<bool>(),
        proptest::collection::vec((0usize..5, 0u8..8), 1..=8),
        any::<bool>(),
    )
        .prop_map(
            |(kind, airtime_flags, quantum_shift, check, n_stations, qos, specs, vif)| {
                let mut txqs: Vec<TxqKey> = Vec::new();
                for (sta, tid) in specs {
                    let key = TxqKey::station(LinkId((sta % (n_stations + 1)) as u16), Tid(tid));
                    if !txqs.contains(&key) {
                        txqs.push(key);
                    }
                }
                if vif {
                    txqs.push(TxqKey::vif());
                }
                Setup {
                    params: SchedulerParams {
                        kind,
                        airtime_flags,
                        quantum_shift,
                        may_transmit_aql_check: check,
                    },
                    n_stations,
                    qos,
                    txqs,
                }
            },
        )
}

fn aql_views() -> impl Strategy<Value = AqlView> {
    prop_oneof![
        2 => Just(AqlView::open()),
        1 => (
            any::<u16>(),
            proptest::collection::vec(prop_oneof![Just(0u32), 0u32..3_000, 3_000u32..20_000], 1..=5),
            any::<bool>(),
        )
            .prop_map(|(ineligible, pending_us, over_limit)| AqlView {
                ineligible,
                pending_us,
                over_limit,
            }),
    ]
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    let step = prop_oneof![
        4 => Just(Step::Next),
        3 => (
            0usize..3,
            prop_oneof![3 => Just(true), 1 => Just(false)],
            prop_oneof![Just(0u32), 0u32..5_000],
        )
            .prop_map(|(held, has_data, dequeued_us)| Step::Return {
                held,
                has_data,
                dequeued_us
            }),
        1 => (0usize..16).prop_map(|txq| Step::Arrive { txq }),
    ];
    proptest::collection::vec(step, 0..24)
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let schedule = (0usize..16).prop_map(|txq| Op::Schedule { txq });
    let unschedule = (0usize..16).prop_map(|txq| Op::Unschedule { txq });
    let round = (0usize..4, aql_views(), steps(), any::<u8>()).prop_map(
        |(ac, aql, steps, end_has_data)| Op::Round {
            ac,
            aql,
            steps,
            end_has_data,
        },
    );
    let register = (
        0usize..16,
        prop_oneof![2 => Just(0u32), 6 => 0u32..3_000, 1 => 3_000u32..30_000],
        prop_oneof![2 => Just(0u32), 6 => 0u32..3_000, 1 => 3_000u32..30_000],
    )
        .prop_map(|(txq, tx_us, rx_us)| Op::Register { txq, tx_us, rx_us });
    let may_transmit = (
        0usize..16,
        aql_views(),
        prop_oneof![Just(None), (0u32..20).prop_map(Some)],
    )
        .prop_map(|(txq, aql, asks)| Op::MayTransmit { txq, aql, asks });
    let set_weight = (
        0usize..5,
        prop_oneof![
            Just(0u16),
            Just(64),
            Just(100),
            Just(256),
            Just(300),
            Just(1024)
        ],
    )
        .prop_map(|(sta, weight)| Op::SetWeight { sta, weight });
    let advance = prop_oneof![0u64..5_000, 5_000u64..300_000].prop_map(|us| Op::Advance { us });
    proptest::collection::vec(
        prop_oneof![
            3 => schedule,
            1 => unschedule,
            4 => round,
            3 => register,
            2 => may_transmit,
            1 => set_weight,
            2 => advance,
        ],
        1..60,
    )
}

/// Smallest TX and RX airtime of one service in the starvation phase, µs.
const PHASE_MIN_US: u32 = 100;
/// Largest TX and RX airtime of one service in the starvation phase, µs.
const PHASE_MAX_US: u32 = 1_000;

/// What the driver observed, for the determinism check.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Event {
    Handed(Option<TxqKey>),
    Allowed(bool, u32),
}

/// The scheduler under test and its model.
struct Driver {
    s: Scheduler,
    setup: Setup,
    now: Nanos,
    /// Per setup TXQ: scheduled (the model).
    scheduled: Vec<bool>,
    /// Per setup TXQ: whether it has data, as last told.
    has_data: Vec<bool>,
    /// Per station and AC: when a TXQ of it was last inserted with data (6.0's
    /// `last_active`, §5.4).
    last_active: Vec<[Option<Nanos>; 4]>,
    weights: Vec<u16>,
    /// Per station and AC: airtime reported (TX, RX), µs.
    reported: Vec<[(u64, u64); 4]>,
    /// Virtual times last seen (stations then the vif, per AC) and the AC's.
    virtual_us: Vec<[u64; 4]>,
    global_virtual_us: [u64; 4],
    log: Vec<Event>,
}

impl Driver {
    fn new(setup: &Setup) -> Driver {
        let n = setup.stations();
        Driver {
            s: Scheduler::new(setup.params, setup.n_stations),
            setup: setup.clone(),
            now: Nanos::ZERO,
            scheduled: vec![false; setup.txqs.len()],
            has_data: vec![false; setup.txqs.len()],
            last_active: vec![[None; 4]; n],
            weights: vec![DEFAULT_AIRTIME_WEIGHT; n],
            reported: vec![[(0, 0); 4]; n],
            virtual_us: vec![[0; 4]; n + 1],
            global_virtual_us: [0; 4],
            log: Vec::new(),
        }
    }

    fn kind(&self) -> SchedulerKind {
        self.setup.params.kind
    }

    fn key(&self, i: usize) -> TxqKey {
        self.setup.txqs[i % self.setup.txqs.len()]
    }

    fn ac_of(&self, i: usize) -> Ac {
        self.setup.ac(self.key(i))
    }

    fn active(&self, sta: LinkId, ac: Ac) -> bool {
        self.last_active[sta.index()][ac.index()]
            .is_some_and(|t| self.now.saturating_sub(t) <= AIRTIME_ACTIVE_DURATION)
    }

    /// DRR quantum of a station (§5.2, §12 item 1; ath9k §5.5).
    fn quantum(&self, sta: usize) -> i64 {
        match self.kind() {
            SchedulerKind::Ath9kDrr => ATH_AIRTIME_QUANTUM_US,
            _ => (self.weights[sta] as i64) << self.setup.params.quantum_shift,
        }
    }

    /// The airtime a report charges, per `airtime_flags` (§5.1).
    fn charged(&self, tx_us: u32, rx_us: u32) -> i64 {
        let flags = self.setup.params.airtime_flags;
        let tx = if flags & AIRTIME_USE_TX != 0 {
            tx_us
        } else {
            0
        };
        let rx = if flags & AIRTIME_USE_RX != 0 {
            rx_us
        } else {
            0
        };
        tx as i64 + rx as i64
    }

    fn deficits(&self) -> Vec<[i64; 4]> {
        (0..self.setup.stations())
            .map(|s| Ac::ALL.map(|ac| self.s.deficit_us(LinkId(s as u16), ac)))
            .collect()
    }

    /// A station's deficit moved only by whole quanta upward, and only if it was in debt
    /// (so it ends below one quantum, plus the pending airtime in 6.0's effective
    /// deficit).
    fn check_top_ups(
        &self,
        before: &[[i64; 4]],
        pending: &dyn Fn(LinkId) -> u32,
        what: &str,
    ) -> Result<(), TestCaseError> {
        let after = self.deficits();
        for (sta, (b, a)) in before.iter().zip(&after).enumerate() {
            for ac in Ac::ALL {
                let (b, a) = (b[ac.index()], a[ac.index()]);
                if b == a {
                    continue;
                }
                let q = self.quantum(sta);
                prop_assert!(
                    matches!(
                        self.kind(),
                        SchedulerKind::Drr | SchedulerKind::DrrAql | SchedulerKind::Ath9kDrr
                    ),
                    "{}: {:?} moved a deficit",
                    what,
                    self.kind()
                );
                prop_assert!(
                    a > b && (a - b) % q == 0,
                    "{}: station {} {:?} deficit {} -> {} (quantum {})",
                    what,
                    sta,
                    ac,
                    b,
                    a,
                    q
                );
                let ceiling = match self.kind() {
                    SchedulerKind::Ath9kDrr => q + 1,
                    SchedulerKind::DrrAql => q + pending(LinkId(sta as u16)) as i64,
                    _ => q,
                };
                prop_assert!(
                    a < ceiling,
                    "{}: station {} {:?} topped up to {} (quantum {}): it was not in debt",
                    what,
                    sta,
                    ac,
                    a,
                    q
                );
            }
        }
        Ok(())
    }

    fn check_unchanged_deficits(
        &self,
        before: &[[i64; 4]],
        what: &str,
    ) -> Result<(), TestCaseError> {
        prop_assert_eq!(&self.deficits(), before, "{} moved a deficit", what);
        Ok(())
    }

    /// A list-kind insertion with data stamps the station active (6.0, §5.4).
    fn stamp_active(&mut self, txq: TxqKey, ac: Ac) {
        if let Some(sta) = txq.sta {
            self.last_active[sta.index()][ac.index()] = Some(self.now);
        }
    }

    fn schedule(&mut self, i: usize) -> Result<(), TestCaseError> {
        let i = i % self.setup.txqs.len();
        let (txq, ac) = (self.key(i), self.ac_of(i));
        let before = self.deficits();
        if !self.scheduled[i] && self.setup.is_list_kind() {
            self.stamp_active(txq, ac);
        }
        self.s.schedule_txq(self.now, txq, ac);
        self.scheduled[i] = true;
        self.has_data[i] = true;
        self.check_unchanged_deficits(&before, "schedule_txq")
    }

    fn unschedule(&mut self, i: usize) -> Result<(), TestCaseError> {
        let i = i % self.setup.txqs.len();
        let (txq, ac) = (self.key(i), self.ac_of(i));
        let before = self.deficits();
        self.s.unschedule_txq(self.now, txq, ac);
        self.scheduled[i] = false;
        self.check_unchanged_deficits(&before, "unschedule_txq")
    }

    fn register(&mut self, i: usize, tx_us: u32, rx_us: u32) -> Result<(), TestCaseError> {
        let i = i % self.setup.txqs.len();
        let (txq, ac) = (self.key(i), self.ac_of(i));
        let mut expect = self.deficits();
        let charged = self.charged(tx_us, rx_us);
        if let Some(sta) = txq.sta {
            let d = &mut expect[sta.index()][ac.index()];
            match self.kind() {
                SchedulerKind::Drr | SchedulerKind::Ath9kDrr => *d -= charged,
                SchedulerKind::DrrAql if self.active(sta, ac) => *d -= charged,
                _ => {}
            }
            let r = &mut self.reported[sta.index()][ac.index()];
            r.0 += tx_us as u64;
            r.1 += rx_us as u64;
        }
        self.s.register_airtime(self.now, txq, ac, tx_us, rx_us);
        prop_assert_eq!(self.deficits(), expect, "register_airtime's charge");
        if let (SchedulerKind::Ath9kDrr, Some(sta)) = (self.kind(), txq.sta) {
            // ath_tx_count_airtime: a charge that leaves the station in debt lists the
            // TXQ (on the old list), even without data (§5.5).
            let charging = self.setup.params.airtime_flags & (AIRTIME_USE_TX | AIRTIME_USE_RX) != 0;
            if charging && self.s.deficit_us(sta, ac) <= 0 {
                self.scheduled[i] = true;
            }
        }
        Ok(())
    }

    fn set_weight(&mut self, sta: usize, weight: u16) -> Result<(), TestCaseError> {
        let sta = sta % self.setup.stations();
        let before = self.deficits();
        self.s.set_weight(LinkId(sta as u16), weight);
        if weight != 0 {
            self.weights[sta] = weight;
        }
        self.check_unchanged_deficits(&before, "set_weight")
    }

    /// One driver round on `ac`; returns the TXQs handed out, in order.
    fn round(
        &mut self,
        ac: Ac,
        aql: &AqlView,
        steps: &[Step],
        end_has_data: u8,
    ) -> Result<Vec<TxqKey>, TestCaseError> {
        let kind = self.kind();
        let txqs = self.setup.txqs.clone();
        let eligible = |t: TxqKey| {
            txqs.iter()
                .position(|&k| k == t)
                .is_none_or(|i| aql.ineligible >> i & 1 == 0)
        };
        // Pending airtime: the AQL state's, plus what the round dequeued.
        let dequeued_us = RefCell::new(vec![0u32; self.setup.stations()]);
        let pending = |sta: LinkId| aql.pending(sta) + dequeued_us.borrow()[sta.index()];
        let before = self.deficits();
        let asked = RefCell::new(Vec::new());
        let active_before = self.s.active_txq_count(ac);
        let round_before = self.s.schedule_round(ac);
        self.s.schedule_start(self.now, ac, &|n| {
            asked.borrow_mut().push(n);
            aql.over_limit
        });
        match kind {
            SchedulerKind::DrrAql => {
                let asked = asked.borrow().clone();
                prop_assert_eq!(asked, vec![active_before], "the per-AC limit's TXQ count");
                prop_assert_eq!(
                    self.s.schedule_round(ac) == 0,
                    aql.over_limit,
                    "6.0: round 0 exactly when the AC is over its limit"
                );
            }
            SchedulerKind::Drr | SchedulerKind::RoundRobin => {
                prop_assert_eq!(self.s.schedule_round(ac), round_before.wrapping_add(1));
            }
            _ => {}
        }
        let mut held: Vec<TxqKey> = Vec::new();
        let mut handed: Vec<TxqKey> = Vec::new();
        let mut step_list: Vec<Step> = steps.to_vec();
        let mut end = end_has_data;
        // What is still held at the end is returned.
        for _ in 0..3 {
            step_list.push(Step::Return {
                held: 0,
                has_data: end & 1 == 1,
                dequeued_us: 0,
            });
            end >>= 1;
        }
        for step in step_list {
            match step {
                Step::Next => {
                    if kind == SchedulerKind::Ath9kDrr && !held.is_empty() {
                        // ath9k serves the head until its deficit is spent; it stays at
                        // the head (§5.5), so the driver returns it before asking again.
                        let t = held.remove(0);
                        self.return_txq(t, ac, true, &pending)?;
                    }
                    if held.len() == 3 {
                        continue;
                    }
                    let scheduled_before = self.scheduled.clone();
                    let got = self
                        .s
                        .next_txq(self.now, ac, &mut |t| eligible(t), &pending);
                    self.log.push(Event::Handed(got));
                    if let Some(t) = got {
                        let i = self.setup.index_of(t);
                        prop_assert!(i.is_some(), "next_txq handed out unknown {:?}", t);
                        let i = i.unwrap();
                        prop_assert_eq!(self.setup.ac(t), ac, "{:?} handed out on another AC", t);
                        prop_assert!(scheduled_before[i], "{t:?} handed out but not scheduled");
                        prop_assert!(
                            t.sta.is_none() && kind != SchedulerKind::VirtualTime || eligible(t),
                            "{t:?} handed out though AQL called it ineligible"
                        );
                        prop_assert!(!held.contains(&t), "{t:?} handed out while held");
                        if self.setup.is_list_kind() {
                            // §5.2: a TXQ already served in this round ends the round.
                            prop_assert!(!handed.contains(&t), "{t:?} handed out twice in a round");
                        }
                        prop_assert!(
                            !(kind == SchedulerKind::DrrAql && aql.over_limit),
                            "6.0 round over the AC's limit handed out {t:?}"
                        );
                        match kind {
                            SchedulerKind::VirtualTime => prop_assert!(
                                self.s.virtual_time_us(t.sta, ac)
                                    <= self.s.global_virtual_time_us(ac),
                                "{t:?} handed out ahead of the AC's virtual time"
                            ),
                            SchedulerKind::Ath9kDrr => {
                                prop_assert!(self.has_data[i], "ath9k handed out empty {t:?}")
                            }
                            _ => {}
                        }
                        if self.setup.is_list_kind() {
                            self.scheduled[i] = false;
                        }
                        held.push(t);
                        handed.push(t);
                    } else if kind == SchedulerKind::Ath9kDrr {
                        let waiting = (0..txqs.len()).find(|&j| {
                            scheduled_before[j]
                                && self.ac_of(j) == ac
                                && self.has_data[j]
                                && (txqs[j].sta.is_none() || eligible(txqs[j]))
                        });
                        prop_assert!(
                            waiting.is_none(),
                            "ath9k handed out nothing while {:?} waits",
                            waiting.map(|j| txqs[j])
                        );
                    }
                    if kind == SchedulerKind::Ath9kDrr {
                        // Empty TXQs met at the head leave the lists (§5.5); nothing else
                        // changes.
                        for (j, &t) in txqs.iter().enumerate() {
                            if self.ac_of(j) == ac && !self.has_data[j] && self.scheduled[j] {
                                self.scheduled[j] = self.s.is_scheduled(t);
                            }
                        }
                    }
                    self.check_scheduled()?;
                }
                Step::Return {
                    held: h,
                    has_data,
                    dequeued_us: d,
                } => {
                    if held.is_empty() {
                        continue;
                    }
                    let t = held.remove(h % held.len());
                    if let Some(sta) = t.sta {
                        dequeued_us.borrow_mut()[sta.index()] += d;
                    }
                    self.return_txq(t, ac, has_data, &pending)?;
                }
                Step::Arrive { txq } => {
                    self.schedule(txq)?;
                    self.check_scheduled()?;
                }
            }
        }
        prop_assert!(held.is_empty());
        self.check_top_ups(&before, &pending, "a round")?;
        Ok(handed)
    }

    fn return_txq(
        &mut self,
        t: TxqKey,
        ac: Ac,
        has_data: bool,
        pending: &dyn Fn(LinkId) -> u32,
    ) -> Result<(), TestCaseError> {
        let i = self.setup.index_of(t).expect("held TXQs are setup TXQs");
        let kind = self.kind();
        if self.setup.is_list_kind() && !self.scheduled[i] {
            if has_data {
                self.scheduled[i] = true;
                self.stamp_active(t, ac);
            } else if kind == SchedulerKind::DrrAql {
                // ieee80211_txq_keep_active (§5.4).
                self.scheduled[i] = t.sta.is_some_and(|sta| {
                    self.s.deficit_us(sta, ac) - (pending(sta) as i64) < 0 && self.active(sta, ac)
                });
            }
        }
        match kind {
            SchedulerKind::VirtualTime if !has_data => self.scheduled[i] = false,
            SchedulerKind::Ath9kDrr if has_data => self.scheduled[i] = true,
            _ => {}
        }
        self.has_data[i] = has_data;
        self.s.return_txq(self.now, t, ac, has_data, pending);
        self.check_scheduled()
    }

    fn may_transmit(
        &mut self,
        i: usize,
        aql: &AqlView,
        asks: Option<u32>,
    ) -> Result<(), TestCaseError> {
        let i = i % self.setup.txqs.len();
        let (txq, ac) = (self.key(i), self.ac_of(i));
        let kind = self.kind();
        let eligible = aql.ineligible >> i & 1 == 0;
        let txqs = self.setup.txqs.clone();
        let mut eligible_fn = |t: TxqKey| {
            txqs.iter()
                .position(|&k| k == t)
                .is_none_or(|j| aql.ineligible >> j & 1 == 0)
        };
        let pending = |sta: LinkId| aql.pending(sta);
        let asked = RefCell::new(Vec::new());
        let over = |n: usize| {
            asked.borrow_mut().push(n);
            aql.over_limit
        };
        let before = self.deficits();
        let was_scheduled = self.scheduled[i];
        let active_before = self.s.active_txq_count(ac);
        let (allowed, refusals) = match asks {
            None => {
                let a = self
                    .s
                    .may_transmit(self.now, txq, ac, &mut eligible_fn, &pending, &over);
                (a, 0)
            }
            Some(k) => {
                // Asking k times at once leaves the scheduler as asking one at a time.
                let mut one = self.s.clone();
                let mut want = (false, 0u32);
                while want.1 < k {
                    if one.may_transmit(self.now, txq, ac, &mut eligible_fn, &pending, &|_| {
                        aql.over_limit
                    }) {
                        want.0 = true;
                        break;
                    }
                    want.1 += 1;
                }
                let got = self.s.may_transmit_asking(
                    self.now,
                    txq,
                    ac,
                    k,
                    &mut eligible_fn,
                    &pending,
                    &over,
                );
                prop_assert_eq!(
                    (got.allowed, got.refusals),
                    want,
                    "may_transmit_asking({})",
                    k
                );
                prop_assert_eq!(
                    format!("{:?}", self.s),
                    format!("{one:?}"),
                    "may_transmit_asking({}) left another state",
                    k
                );
                (got.allowed, got.refusals)
            }
        };
        self.log.push(Event::Allowed(allowed, refusals));
        prop_assert!(
            asked.borrow().iter().all(|&n| n == active_before),
            "the per-AC limit was asked about {:?} TXQs, {} are active",
            asked.borrow(),
            active_before
        );
        let asked_once = asks.is_none_or(|k| k > 0);
        match kind {
            SchedulerKind::RoundRobin | SchedulerKind::Drr | SchedulerKind::DrrAql => {
                if asked_once {
                    let lets_through = kind == SchedulerKind::DrrAql
                        && match self.setup.params.may_transmit_aql_check {
                            MayTransmitAqlCheck::AsWritten => aql.over_limit,
                            MayTransmitAqlCheck::Flipped => !aql.over_limit,
                        };
                    prop_assert!(
                        allowed
                            || !(kind == SchedulerKind::RoundRobin
                                || !was_scheduled
                                || txq.sta.is_none()
                                || lets_through),
                        "may_transmit refused {:?} (scheduled {})",
                        txq,
                        was_scheduled
                    );
                }
                if allowed {
                    self.scheduled[i] = false;
                } else if asked_once {
                    prop_assert!(was_scheduled, "refused an unscheduled TXQ");
                }
            }
            SchedulerKind::VirtualTime => {
                if allowed {
                    prop_assert!(was_scheduled && eligible, "allowed {txq:?}");
                    prop_assert!(
                        self.s.virtual_time_us(txq.sta, ac) <= self.s.global_virtual_time_us(ac),
                        "allowed {txq:?} ahead of the AC's virtual time"
                    );
                }
                if asked_once && (!was_scheduled || !eligible) {
                    prop_assert!(!allowed, "allowed an unscheduled or ineligible TXQ");
                }
            }
            SchedulerKind::Ath9kDrr => prop_assert!(allowed || !asked_once),
        }
        if let Some(k) = asks {
            prop_assert!(refusals <= k && (allowed || refusals == k));
        }
        self.check_top_ups(&before, &pending, "may_transmit")
    }

    /// `is_scheduled` and `active_txq_count` agree with the model.
    fn check_scheduled(&self) -> Result<(), TestCaseError> {
        let mut per_ac = [0usize; 4];
        for (i, &txq) in self.setup.txqs.iter().enumerate() {
            prop_assert_eq!(
                self.s.is_scheduled(txq),
                self.scheduled[i],
                "is_scheduled({:?})",
                txq
            );
            if self.scheduled[i] {
                per_ac[self.setup.ac(txq).index()] += 1;
            }
        }
        for ac in Ac::ALL {
            prop_assert_eq!(
                self.s.active_txq_count(ac),
                per_ac[ac.index()],
                "active TXQs on {:?}",
                ac
            );
        }
        Ok(())
    }

    /// Everything that holds between operations.
    fn check(&mut self) -> Result<(), TestCaseError> {
        self.check_scheduled()?;
        let (mut tx_sum, mut rx_sum) = (0u64, 0u64);
        for sta in 0..self.setup.stations() {
            let link = LinkId(sta as u16);
            for ac in Ac::ALL {
                let a = self.s.airtime(link, ac);
                prop_assert_eq!(
                    (a.tx_us, a.rx_us),
                    self.reported[sta][ac.index()],
                    "airtime of station {} on {:?}",
                    sta,
                    ac
                );
                tx_sum += a.tx_us;
                rx_sum += a.rx_us;
            }
            prop_assert_eq!(self.s.weight(link), self.weights[sta], "weight of {}", sta);
        }
        let given: (u64, u64) = self
            .reported
            .iter()
            .flatten()
            .fold((0, 0), |s, r| (s.0 + r.0, s.1 + r.1));
        prop_assert_eq!((tx_sum, rx_sum), given);
        // Virtual times never go back (§5.3), but for the kernel's u64 test
        // `v_t < global − AIRTIME_MAX_BEHIND`, which wraps while the AC's virtual time is
        // below 20 ms and sets an inserted TXQ's station to the AC's virtual time even if
        // it was ahead.
        for ac in Ac::ALL {
            let g_before = self.global_virtual_us[ac.index()];
            let g = self.s.global_virtual_time_us(ac);
            prop_assert!(g >= g_before, "global v_t went back");
            self.global_virtual_us[ac.index()] = g;
            for who in 0..=self.setup.stations() {
                let sta = (who < self.setup.stations()).then_some(LinkId(who as u16));
                let v = self.s.virtual_time_us(sta, ac);
                let v_before = self.virtual_us[who][ac.index()];
                prop_assert!(
                    v >= v_before || (g_before < AIRTIME_MAX_BEHIND_US && v >= g_before),
                    "v_t of {:?} on {:?} went back from {} to {} (AC's v_t {} -> {})",
                    sta,
                    ac,
                    v_before,
                    v,
                    g_before,
                    g
                );
                self.virtual_us[who][ac.index()] = v;
            }
        }
        Ok(())
    }

    fn run(&mut self, ops: &[Op]) -> Result<(), TestCaseError> {
        for op in ops {
            match op {
                Op::Schedule { txq } => self.schedule(*txq)?,
                Op::Unschedule { txq } => self.unschedule(*txq)?,
                Op::Round {
                    ac,
                    aql,
                    steps,
                    end_has_data,
                } => {
                    self.round(Ac::ALL[ac % 4], aql, steps, *end_has_data)?;
                }
                Op::Register { txq, tx_us, rx_us } => self.register(*txq, *tx_us, *rx_us)?,
                Op::MayTransmit { txq, aql, asks } => self.may_transmit(*txq, aql, *asks)?,
                Op::SetWeight { sta, weight } => self.set_weight(*sta, *weight)?,
                Op::Advance { us } => self.now += Nanos::from_us(*us),
            }
            self.check()?;
        }
        Ok(())
    }

    /// The TXQs of `ac` the starvation phase keeps backlogged: the first of each
    /// station (TXQs of one station on one AC share its deficit or virtual time, so
    /// fairness is between stations, §5.2–§5.5), and the vif TXQ except in ath9k
    /// (whose in-driver scheduler had none; a TXQ without a station is never
    /// deficit-limited, and ath9k serves its head until the deficit is spent).
    fn phase_txqs(&self, ac: Ac) -> Vec<usize> {
        let mut chosen: Vec<usize> = Vec::new();
        for (i, &t) in self.setup.txqs.iter().enumerate() {
            if self.setup.ac(t) != ac {
                continue;
            }
            let first_of_station = !chosen.iter().any(|&j| self.setup.txqs[j].sta == t.sta);
            let allowed = t.sta.is_some() || self.kind() != SchedulerKind::Ath9kDrr;
            if first_of_station && allowed {
                chosen.push(i);
            }
        }
        chosen
    }

    /// Rounds within which TXQ `x` of the phase set `phase` is handed out, from the
    /// state now, with every TXQ of `phase` backlogged and returned with data at once,
    /// AQL letting everything through, and each service charged between rounds at
    /// least `c_min` (= 100 µs per charged direction) and at most 2 × 1000 µs. `None`
    /// if the algorithm gives no bound (which the test reports as a failure).
    ///
    /// - Round robin (§5.2 with tail insertion): every listed TXQ is served once per
    ///   round: 1.
    /// - DRR (5.0–5.13 and 6.0 without pending airtime, §5.2, §5.4): each round serves at
    ///   least one TXQ (in-debt heads are topped up by `q = weight << shift` and rotated
    ///   until one is not). A station TXQ at the head is served, and put back at the
    ///   head, until its deficit is negative; its deficit never exceeds
    ///   `U = max(D₀, q − 1)`, so one visit serves it at most `⌊U / c_min⌋ + 1` times
    ///   (once for the vif, once without charging: then insertion is at the tail).
    ///   Between two visits of `x`, every other TXQ visits once; `x` needs
    ///   `k = ⌈−D₀ / q⌉` visits in debt before it is served. So at most
    ///   `S = (k + 1) · Σ_{y ≠ x} visits(y)` services, and `S + 1` rounds (`2S + 1` if
    ///   `S` reaches the `u16` round counter's period, which can end one round early).
    ///   6.0 sets the round number to 0 in a round opened over the AC's limit (§5.4), so
    ///   numbers repeat: a TXQ last served before that may find its old stamp equal to
    ///   the round's and end it, once per TXQ: `+ |phase|` rounds.
    /// - ath9k (§5.5; one service per round): the head is served while its deficit is
    ///   positive, `⌈max(D₀, 300) / c_min⌉` times per visit at most, then topped up by
    ///   300 µs and moved to the old list's tail; `x` needs `k = ⌊−D₀ / 300⌋ + 1`
    ///   top-ups if `D₀ ≤ 0`; new-list TXQs visit once more: `(k + 2) · Σ visits + 1`.
    ///   Without charging it is round robin (`k = 0`, one service per visit).
    /// - Virtual time (§5.3): each round serves the first TXQ (catch-up) and every
    ///   TXQ in order while its `v_t ≤` the AC's, so `x` is served in the first round if
    ///   `v_t(x) ≤ max(global, min v_t)`. Otherwise, while `x` waits every TXQ served
    ///   has `v_t ≤ v_t(x)` and each service raises it by at least
    ///   `i = ((c_min << 8) + w/2) · ⌊2¹⁹ / w⌋ >> 19`: at most
    ///   `Σ_{y: v_t(y) ≤ v_t(x)} (⌊(v_t(x) − v_t(y)) / i_y⌋ + 1)` services before `x`,
    ///   one per round at least.
    fn starvation_bound_rounds(&self, ac: Ac, phase: &[usize], x: usize) -> Option<u64> {
        let flags = self.setup.params.airtime_flags;
        let c_min = self.charged(PHASE_MIN_US, PHASE_MIN_US);
        let charging = c_min > 0;
        let deficit = |i: usize| {
            self.setup.txqs[i]
                .sta
                .map(|s| self.s.deficit_us(s, ac))
                .unwrap_or(0)
        };
        let sta_index = |i: usize| self.setup.txqs[i].sta.map(|s| s.index());
        let others = phase.iter().copied().filter(|&y| y != x);
        match self.kind() {
            SchedulerKind::RoundRobin => Some(1),
            SchedulerKind::Drr | SchedulerKind::DrrAql => {
                let visits = |y: usize| match sta_index(y) {
                    Some(s) if charging => {
                        let u = deficit(y).max(self.quantum(s) - 1);
                        (u / c_min + 1) as u64
                    }
                    _ => 1,
                };
                let k = match sta_index(x) {
                    Some(s) if deficit(x) < 0 => {
                        (-deficit(x) as u64).div_ceil(self.quantum(s) as u64)
                    }
                    _ => 0,
                };
                let services = (k + 1) * others.map(visits).sum::<u64>();
                let rounds = if services < u16::MAX as u64 {
                    services + 1
                } else {
                    2 * services + 1
                };
                // 6.0 sets the round number to 0 in a round opened over the AC's limit,
                // so numbers repeat: a TXQ whose stamp is from before that ends the round
                // that reaches its number again, once.
                let stale_stamps = if self.kind() == SchedulerKind::DrrAql {
                    phase.len() as u64
                } else {
                    0
                };
                Some(rounds + stale_stamps)
            }
            SchedulerKind::Ath9kDrr => {
                let q = ATH_AIRTIME_QUANTUM_US;
                let visits = |y: usize| {
                    if charging {
                        (deficit(y).max(q) as u64).div_ceil(c_min as u64)
                    } else {
                        1
                    }
                };
                let k = if charging && deficit(x) <= 0 {
                    (-deficit(x) / q + 1) as u64
                } else {
                    0
                };
                Some((k + 2) * others.map(visits).sum::<u64>() + 1)
            }
            SchedulerKind::VirtualTime => {
                let v = |i: usize| self.s.virtual_time_us(self.setup.txqs[i].sta, ac);
                let vx = v(x);
                let min = phase.iter().map(|&i| v(i)).min().unwrap_or(0);
                if vx <= self.s.global_virtual_time_us(ac).max(min) {
                    return Some(1);
                }
                if !charging {
                    return None;
                }
                let mut services = 0u64;
                for y in others {
                    let vy = v(y);
                    if vy > vx {
                        continue;
                    }
                    let w = sta_index(y).map_or(DEFAULT_AIRTIME_WEIGHT, |s| self.weights[s]) as u64;
                    let recip = (1u64 << 19) / w;
                    // The kernel's product is 32-bit; the phase's charges stay below
                    // its wrap, where the increment grows with the charge.
                    let c_max = self.charged(PHASE_MAX_US, PHASE_MAX_US) as u64;
                    assert!(((c_max << 8) + w / 2) * recip < 1 << 32, "flags {flags}");
                    let i_min = ((((c_min as u64) << 8) + w / 2) * recip) >> 19;
                    if i_min == 0 {
                        return None;
                    }
                    services += (vx - vy) / i_min + 1;
                }
                Some(services + 1)
            }
        }
    }

    /// The starvation phase on `ac` (see the module documentation). With `reinsert`,
    /// first take every TXQ of the AC out and schedule the phase's TXQs afresh (after
    /// the random sequence); without, go on from where the previous phase left them
    /// (every phase TXQ scheduled, with data).
    fn starvation_phase(&mut self, ac: Ac, seed: u64, reinsert: bool) -> Result<(), TestCaseError> {
        let phase = self.phase_txqs(ac);
        if phase.is_empty() {
            return Ok(());
        }
        if reinsert {
            for i in 0..self.setup.txqs.len() {
                if self.ac_of(i) == ac {
                    self.unschedule(i)?;
                }
            }
            for &i in &phase {
                self.schedule(i)?;
            }
            self.check()?;
        }
        let mut bounds = Vec::new();
        for &x in &phase {
            let b = self.starvation_bound_rounds(ac, &phase, x);
            prop_assert!(
                b.is_some(),
                "{:?}: no bound for {:?}",
                self.kind(),
                self.setup.txqs[x]
            );
            bounds.push(b.unwrap());
        }
        let steps: Vec<Step> = if self.kind() == SchedulerKind::Ath9kDrr {
            vec![Step::Next]
        } else {
            (0..=phase.len())
                .flat_map(|_| {
                    [
                        Step::Next,
                        Step::Return {
                            held: 0,
                            has_data: true,
                            dequeued_us: 0,
                        },
                    ]
                })
                .collect()
        };
        let mut first_served: Vec<Option<u64>> = vec![None; phase.len()];
        let mut rng = seed | 1;
        let mut draw = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            PHASE_MIN_US + (rng % (PHASE_MAX_US - PHASE_MIN_US + 1) as u64) as u32
        };
        let max_bound = *bounds.iter().max().expect("a phase TXQ");
        for round in 1..=max_bound {
            let served = self.round(ac, &AqlView::open(), &steps, u8::MAX)?;
            for t in served {
                let i = self.setup.index_of(t).expect("setup TXQ");
                if let Some(j) = phase.iter().position(|&p| p == i) {
                    first_served[j].get_or_insert(round);
                }
                let (tx_us, rx_us) = (draw(), draw());
                self.register(i, tx_us, rx_us)?;
                self.now += Nanos::from_us((tx_us + rx_us) as u64);
            }
            self.check()?;
            for (j, &x) in phase.iter().enumerate() {
                prop_assert!(
                    first_served[j].is_some() || round < bounds[j],
                    "{:?} not handed out within its bound of {} rounds",
                    self.setup.txqs[x],
                    bounds[j]
                );
            }
            if first_served.iter().all(Option::is_some) {
                break;
            }
        }
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn schedulers_keep_their_sets_conserve_airtime_and_starve_no_txq(
        setup in setups(),
        ops in ops(),
        seed in any::<u64>(),
    ) {
        let mut a = Driver::new(&setup);
        a.run(&ops)?;
        for ac in Ac::ALL {
            a.starvation_phase(ac, seed, true)?;
            a.starvation_phase(ac, seed.rotate_left(17), false)?;
        }
        let mut b = Driver::new(&setup);
        b.run(&ops)?;
        for ac in Ac::ALL {
            b.starvation_phase(ac, seed, true)?;
            b.starvation_phase(ac, seed.rotate_left(17), false)?;
        }
        prop_assert!(a.log == b.log, "the same operations gave different hand-outs");
        prop_assert_eq!(format!("{:?}", a.s), format!("{:?}", b.s));
    }
}
