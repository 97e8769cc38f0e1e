//! mac80211's TXQ schedulers: which TXQ the driver serves next, per access category
//! (reference §5, with §6.4 for AQL eligibility and §12 item 1 for OpenWrt's quantum).
//!
//! The scheduler is modelled on its own, without the queues or AQL: the caller says when
//! a TXQ gets data ([`Scheduler::schedule_txq`]) and, on every call that needs it, passes
//! the AQL state as closures (`aql_eligible(txq)` = `ieee80211_txq_airtime_check`,
//! `aql_pending_us(sta)` = the station's `aql_tx_pending` on the AC in question,
//! `ac_over_limit(n_active_txqs)` = the 6.0 per-AC check, see [`ac_aql_limit_us`]).
//!
//! The driver loop is the kernel's (§1 step 5, §5.1):
//! `schedule_start(ac)`, then repeatedly `next_txq(ac)` → dequeue → `return_txq(txq)`;
//! airtime reported on completion goes to [`Scheduler::register_airtime`].
//!
//! Five generations ([`SchedulerKind`]):
//! - **RoundRobin**: no airtime fairness (4.9–4.10, or any era with `airtime_flags = 0`):
//!   the generation-1 list with tail insertion and no deficits. Rounds and the AQL
//!   rotation rule still apply.
//! - **Ath9kDrr** (4.11–4.20, §5.5): ath9k's in-driver scheduler (`ath_txq_schedule`,
//!   `__ath_tx_queue_tid`, `ath_tx_count_airtime`, `ath_rx_count_airtime` in
//!   `drivers/net/wireless/ath/ath9k/{xmit,recv}.c` of that era). Per AC a *new* and an
//!   *old* list; the deficit is per station per AC, but, as in the driver, the list
//!   entries are the station's TIDs (TXQs), so "station lists" of §5.5 are lists of the
//!   stations' TXQs. A TXQ at the head whose station has `deficit <= 0` gets
//!   `+ATH_AIRTIME_QUANTUM` (300 µs, [U]) and moves to the tail of the old list; an empty
//!   TXQ at the head leaves the lists (or moves from new to old if old is not empty);
//!   otherwise the head is served and **stays at the head**, so a station keeps sending
//!   until its deficit is used up. A TXQ that becomes backlogged joins the *new* list if
//!   its station's deficit is positive, else the old list (ath9k's default
//!   `AIRTIME_USE_NEW_QUEUES`, assumed on; [U]). TX and RX airtime are charged, and a
//!   charge that leaves the deficit `<= 0` re-lists the TXQ on the old list even if empty,
//!   so an idle station's debt is paid back by later passes. ath9k had no rounds:
//!   [`Scheduler::schedule_start`] is a no-op and `next_txq` returns `None` only when the
//!   lists are empty (or, as an extension, when no listed TXQ is AQL-eligible); the driver
//!   stops on its own (ath9k: when the hardware queue holds two aggregates, §8.1).
//! - **Drr** (5.0–5.13, §5.2): `deficit < 0` → `+= weight << quantum_shift` and rotate;
//!   AQL-ineligible → rotate; a full rotation without an AQL-eligible station TXQ → `None`;
//!   a TXQ already served in this round → `None`; vif TXQs are never deficit-limited.
//!   (Re)inserted station TXQs go to the head when `airtime_flags != 0`, others to the tail.
//! - **VirtualTime** (5.14–5.19, §5.3), reproduced from the code of that era: an ordered
//!   set per AC keyed by virtual time (a `BTreeMap` standing in for the rbtree), the
//!   kernel's fixed-point reciprocals, catch-up, reactivation and `AIRTIME_MAX_BEHIND`
//!   rules; details on [`SchedulerKind::VirtualTime`].
//! - **DrrAql** (6.0+, §5.4): generation 1 with the effective deficit
//!   `deficit − aql_tx_pending`, the 100 ms activity window (charging only active
//!   stations, keeping recently active indebted TXQs listed) and the per-AC
//!   `schedule_start` check (round 0 blocks the whole round).
//!
//! Differences from the kernel, all deliberate:
//! - time is exact nanoseconds: the 6.0 jiffies window `HZ/10` is exactly 100 ms, and the
//!   5.14 "coarse boottime" is exact;
//! - deficits are `i64` (the kernel's 6.0 deficit is `s32`; no difference below 35 min of
//!   debt);
//! - timestamps the kernel initialises to 0 ("long ago" on a running system) are `None`
//!   here, so a station is never "active" before it was first scheduled;
//! - API shape: [`Scheduler::register_airtime`] takes the TXQ (the kernel's
//!   `ieee80211_sta_register_airtime` takes station + TID; ath9k re-lists and 5.14 re-sorts
//!   that TID's TXQ); [`Scheduler::return_txq`] takes `aql_pending_us` (6.0's "stay listed"
//!   rule needs the effective deficit); [`Scheduler::schedule_start`] takes
//!   `ac_over_limit` as a closure of the active-list length, which only the scheduler
//!   knows. [`Scheduler::may_transmit`] (ath10k pull mode) and
//!   [`Scheduler::unschedule_txq`] (power save) complete the §5.1 API.
//!
//! Sources beyond the reference: the 5.14 code (patch "mac80211: Switch to a virtual
//! time-based airtime scheduler" v7 and its removal in Felix Fietkau's 6.0 series, which
//! shows the 5.19 state), the 6.0 series patches ("consider aql_tx_pending…", "keep
//! recently active tx queues…", "add a per-PHY AQL limit…", "only accumulate airtime
//! deficit for active clients") and ath9k's `xmit.c` of the 4.1x era, read in the
//! linux-wireless archive. They agree with §5 except where noted on
//! [`SchedulerKind::VirtualTime`] and [`SchedulerKind::Ath9kDrr`].
//!
//! Determinism: all state is in `Vec`, `VecDeque` and `BTreeMap`; no hash iteration.

use crate::mac::edca::Ac;
use crate::mac80211::txq::{LinkId, Tid, TxqKey};
use crate::Nanos;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};
use std::ops::Bound::{Excluded, Unbounded};

/// `IEEE80211_DEFAULT_AIRTIME_WEIGHT` (reference §5.1): the default station weight, which
/// is also the DRR quantum in µs (§5.2).
pub const DEFAULT_AIRTIME_WEIGHT: u16 = 256;

/// `AIRTIME_USE_TX` (bit 0 of `airtime_flags`, reference §5.1): charge TX airtime.
pub const AIRTIME_USE_TX: u8 = 1 << 0;

/// `AIRTIME_USE_RX` (bit 1 of `airtime_flags`, reference §5.1): charge RX airtime.
pub const AIRTIME_USE_RX: u8 = 1 << 1;

/// The default `airtime_flags`, `AIRTIME_USE_TX | AIRTIME_USE_RX` = 3 (reference §5.1).
pub const DEFAULT_AIRTIME_FLAGS: u8 = AIRTIME_USE_TX | AIRTIME_USE_RX;

/// `AIRTIME_ACTIVE_DURATION`: the activity window of 5.14 (100 ms) and of 6.0 (`HZ/10`)
/// (reference §5.3, §5.4).
pub const AIRTIME_ACTIVE_DURATION: Nanos = Nanos::from_ms(100);

/// `AIRTIME_MAX_BEHIND` (5.14–5.19, reference §5.3): how far (in virtual µs) a station may
/// fall behind the global virtual time before it is caught up on (re)insertion.
pub const AIRTIME_MAX_BEHIND_US: u64 = 20_000;

/// `ATH_AIRTIME_QUANTUM` of ath9k's in-driver scheduler, in µs (reference §5.5;
/// value [U], the definition was not seen).
pub const ATH_AIRTIME_QUANTUM_US: i64 = 300;

/// OpenWrt's `AIRTIME_QUANTUM_SHIFT` (reference §12 item 1): quantum = weight << 3.
pub const OPENWRT_AIRTIME_QUANTUM_SHIFT: u8 = 3;

/// 5.14 per-station reciprocal divisor `IEEE80211_RECIPROCAL_DIVISOR_32` = 2^19.
const RECIPROCAL_DIVISOR_32: u32 = 1 << RECIPROCAL_SHIFT_32;
const RECIPROCAL_SHIFT_32: u32 = 19;
/// 5.14 weight-sum reciprocal divisor `IEEE80211_RECIPROCAL_DIVISOR_64` = 2^32.
const RECIPROCAL_DIVISOR_64: u64 = 1 << RECIPROCAL_SHIFT_64;
const RECIPROCAL_SHIFT_64: u32 = 32;
/// Airtime is scaled by 2^8 so that the unit weight is 256 (5.14 `airtime <<= 8`).
const WEIGHT_SHIFT: u32 = 8;

/// Which scheduler generation runs (reference §5, timeline §13).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SchedulerKind {
    /// No airtime fairness: TXQs are served in turn per AC, tail insertion, no deficits
    /// (4.9–4.10, and any later era with `airtime_flags = 0`). Uses the generation-1
    /// rounds and AQL rotation (reference §5.2 "otherwise → tail (plain round robin)").
    RoundRobin,
    /// ath9k's in-driver DRR of 4.11–4.20 (reference §5.5): per-AC new/old lists,
    /// per-station per-AC deficit, quantum 300 µs [U], TX and RX airtime charged.
    Ath9kDrr,
    /// mac80211 DRR of 5.0–5.13 (reference §5.2): quantum = weight (256 µs), head
    /// insertion of newly active station TXQs, schedule rounds.
    Drr,
    /// The virtual-time scheduler of 5.14–5.19 (reference §5.3), as in the code of that
    /// era:
    /// - TXQs ordered by their station's (or the vif's) `v_t`; a newly inserted TXQ goes
    ///   *before* TXQs with an equal `v_t` (the rbtree insert walks left on `<=`);
    /// - charging `a` µs: `a <<= 8`; station `v_t += (u32)((a + w/2) · ⌊2^19/w⌋) >> 19`
    ///   (32-bit, so it wraps above ≈ 8 ms per report at weight 256, as in the kernel);
    ///   global `v_t += ((a + W/2) · ⌊2^32/W⌋) >> 32` with `W` the weight sum of active
    ///   stations (if `W` is 0 the kernel uses the station's 2^19 reciprocal with the
    ///   2^32 shift, which adds almost nothing; reproduced). The vif TXQ is charged too
    ///   (5.14's `status.c` did so for multicast);
    /// - only the charged TXQ is re-sorted, and only if it is out of order;
    /// - `next_txq` walks from the last returned position; a TXQ may go if its `v_t ≤`
    ///   global `v_t`; if the *first* node is ahead, global `v_t` jumps to it (catch-up);
    ///   AQL-ineligible TXQs are skipped; TXQs stay in the tree until returned empty;
    /// - on insertion, `v_t` := global if the station was inactive (not scheduled in
    ///   the last 100 ms) and behind, or more than 20 ms behind (`global − 20000` is a
    ///   `u64` subtraction, so while global < 20000 every inserted TXQ is set to global,
    ///   as in the kernel);
    /// - `weight_sum` is recomputed from the stations scheduled in the last 100 ms when a
    ///   station becomes active (forced), and otherwise only if the previous recompute is
    ///   *less* than 100 ms old: the kernel's test is
    ///   `if (!force && last_weight_update < now - 100 ms) return;`, reproduced as
    ///   written (the reference's "at most once per 100 ms" is the intent).
    VirtualTime,
    /// DRR with AQL-aware deficits, 6.0 onwards (reference §5.4): effective deficit
    /// `deficit − aql_tx_pending`, 100 ms activity window, the stay-listed rule and the
    /// per-AC `schedule_start` check.
    DrrAql,
}

impl SchedulerKind {
    /// Every generation, oldest first (reference §13).
    pub const ALL: [SchedulerKind; 5] = [
        SchedulerKind::RoundRobin,
        SchedulerKind::Ath9kDrr,
        SchedulerKind::Drr,
        SchedulerKind::VirtualTime,
        SchedulerKind::DrrAql,
    ];

    /// A short name, as used in scenario files (`snake_case`); eras in §13.
    pub fn name(self) -> &'static str {
        match self {
            SchedulerKind::RoundRobin => "round_robin",
            SchedulerKind::Ath9kDrr => "ath9k_drr",
            SchedulerKind::Drr => "drr",
            SchedulerKind::VirtualTime => "virtual_time",
            SchedulerKind::DrrAql => "drr_aql",
        }
    }
}

/// How `ieee80211_txq_may_transmit` (6.0+, [`SchedulerKind::DrrAql`]) uses the per-AC
/// AQL check `ieee80211_txq_schedule_airtime_check` (reference §5.4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MayTransmitAqlCheck {
    /// The kernel as written: `if (!ieee80211_txq_schedule_airtime_check(local, ac))
    /// goto out;`. Over the AC's limit a TXQ may transmit whatever its deficit (and
    /// leaves the active list); under it the deficit round robin decides. So while the
    /// AC is over its limit (a saturated firmware queue) airtime fairness is off.
    #[default]
    AsWritten,
    /// The check's sense flipped, the reading that the line is reversed (raised on
    /// linux-wireless, August 2024, in review of "wifi: mac80211: add AQL support for
    /// broadcast packets"): under the AC's limit every TXQ may transmit; over it the
    /// deficit round robin decides, and a TXQ in debt is refused (topped up and rotated).
    Flipped,
}

/// Airtime reported for a station ([`Scheduler::airtime`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Airtime {
    /// Transmit airtime, µs.
    pub tx_us: u64,
    /// Receive airtime, µs.
    pub rx_us: u64,
}

/// What [`Scheduler::may_transmit_asking`] was told.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MayTransmitAnswers {
    /// Asks that were refused.
    pub refusals: u32,
    /// The ask after those refusals allowed the TXQ (false: every ask refused).
    pub allowed: bool,
}

/// Scheduler configuration (reference §5.1 `airtime_flags`, §12 item 1 quantum shift).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SchedulerParams {
    /// The generation (§5.2–§5.5).
    pub kind: SchedulerKind,
    /// debugfs `airtime_flags`: bit 0 charge TX, bit 1 charge RX; default 3 (§5.1). With 0,
    /// nothing is charged and the mac80211 DRR kinds insert at the tail (plain round robin);
    /// ath9k turns its deficit logic off. Other bits are not interpreted (5.5's
    /// `AIRTIME_USE_AQL` = 4, §10: AQL is the caller's `aql_eligible`), except that any
    /// non-zero value enables head insertion, as in the kernel.
    pub airtime_flags: u8,
    /// DRR quantum = `weight << quantum_shift` for [`SchedulerKind::Drr`] and
    /// [`SchedulerKind::DrrAql`]: 0 in mainline, 3 in OpenWrt (§12 item 1). Ignored by the
    /// other kinds.
    pub quantum_shift: u8,
    /// [`SchedulerKind::DrrAql`]'s `may_transmit` and the per-AC AQL limit (§5.4).
    pub may_transmit_aql_check: MayTransmitAqlCheck,
}

impl SchedulerParams {
    /// Mainline settings for `kind`: `airtime_flags` = 3, no quantum shift (§5.1).
    pub const fn mainline(kind: SchedulerKind) -> SchedulerParams {
        SchedulerParams {
            kind,
            airtime_flags: DEFAULT_AIRTIME_FLAGS,
            quantum_shift: 0,
            may_transmit_aql_check: MayTransmitAqlCheck::AsWritten,
        }
    }

    /// OpenWrt settings for `kind`: `airtime_flags` = 3, quantum shift 3 (§12 item 1).
    pub const fn openwrt(kind: SchedulerKind) -> SchedulerParams {
        SchedulerParams {
            kind,
            airtime_flags: DEFAULT_AIRTIME_FLAGS,
            quantum_shift: OPENWRT_AIRTIME_QUANTUM_SHIFT,
            may_transmit_aql_check: MayTransmitAqlCheck::AsWritten,
        }
    }
}

impl Default for SchedulerParams {
    /// Current mainline: [`SchedulerKind::DrrAql`], flags 3, shift 0 (§5.4).
    fn default() -> SchedulerParams {
        SchedulerParams::mainline(SchedulerKind::DrrAql)
    }
}

/// The 6.0 per-AC AQL limit (`ieee80211_txq_schedule_airtime_check`, reference §5.4):
/// `(n − 1) · limit_low / 2 + limit_high` in wrapping `u32` arithmetic, where `n` counts
/// the TXQs on the AC's active list. With `n = 0` the subtraction wraps and the limit is
/// very large, as in the kernel. The AC is over its limit when its total pending airtime
/// is `>=` this value; pass that comparison as `ac_over_limit` to
/// [`Scheduler::schedule_start`].
pub fn ac_aql_limit_us(n_active_txqs: usize, limit_low_us: u32, limit_high_us: u32) -> u32 {
    ((n_active_txqs as u32)
        .wrapping_sub(1)
        .wrapping_mul(limit_low_us)
        / 2)
    .wrapping_add(limit_high_us)
}

/// Position of a TXQ in the virtual-time tree: by `v_t`, then by tie-break. Tie-breaks
/// decrease with each fresh insertion so that a new TXQ sorts before TXQs with an
/// equal `v_t`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct VtKey {
    /// The virtual time of the TXQ's station (or the vif), virtual µs.
    v_t: u64,
    /// Order among equal `v_t`s (smaller first).
    tiebreak: i64,
}

/// `struct airtime_info`: one station's (or the vif's) airtime state on one AC.
#[derive(Clone, Debug)]
struct AirInfo {
    /// DRR deficit in µs (generations 1 and 3, ath9k).
    deficit: i64,
    /// 6.0 `last_active`: when a TXQ of this station was last inserted with data.
    last_active: Option<Nanos>,
    /// 5.14 virtual time (µs scaled by 256/weight).
    v_t: u64,
    /// 5.14 `last_scheduled`.
    last_scheduled: Option<Nanos>,
    /// 5.14: on the AC's `active_list`.
    on_active_list: bool,
    /// Airtime weight (5.14 keeps it per AC; the other kinds use the same value).
    weight: u16,
    /// 5.14 `weight_reciprocal` = 2^19 / weight.
    weight_reciprocal: u32,
    /// Reported airtime, for statistics.
    tx_airtime_us: u64,
    rx_airtime_us: u64,
}

impl AirInfo {
    fn new(deficit: i64) -> AirInfo {
        let mut a = AirInfo {
            deficit,
            last_active: None,
            v_t: 0,
            last_scheduled: None,
            on_active_list: false,
            weight: 0,
            weight_reciprocal: 0,
            tx_airtime_us: 0,
            rx_airtime_us: 0,
        };
        a.set_weight(DEFAULT_AIRTIME_WEIGHT);
        a
    }

    /// `airtime_weight_set`.
    fn set_weight(&mut self, weight: u16) {
        self.weight = weight;
        self.weight_reciprocal = RECIPROCAL_DIVISOR_32
            .checked_div(weight as u32)
            .unwrap_or(0);
    }

    /// 5.14 `airtime_is_active`: scheduled within the last 100 ms.
    fn vt_active(&self, now: Nanos) -> bool {
        self.last_scheduled
            .is_some_and(|t| t + AIRTIME_ACTIVE_DURATION >= now)
    }

    /// 6.0 `ieee80211_sta_keep_active`: `jiffies − last_active ≤ HZ/10`.
    fn drr_active(&self, now: Nanos) -> bool {
        self.last_active
            .is_some_and(|t| now.saturating_sub(t) <= AIRTIME_ACTIVE_DURATION)
    }
}

/// Per-TXQ scheduler state.
#[derive(Clone, Debug)]
struct TxqState {
    /// The AC given when the TXQ was first seen.
    ac: Ac,
    /// On the AC's active list (list kinds) or on ath9k's new/old list.
    listed: bool,
    /// ath9k: on the new list (else the old one) when `listed`.
    in_new: bool,
    /// Generations 1/3: the round in which it was last returned by `next_txq`.
    round: u16,
    /// 5.14: position in the tree, if scheduled.
    vt_key: Option<VtKey>,
    /// Whether the TXQ has data, as last told (used by ath9k's empty-TID rule).
    has_data: bool,
}

/// The scheduler's per-TXQ states (a TXQ's state exists from the first call that names
/// it), by [`TxqKey::index`]. Looked up on every enqueue, dequeue and completion, so it
/// is a table rather than an ordered map; nothing iterates it in key order.
#[derive(Clone, Debug, Default)]
struct TxqTable {
    /// Per TXQ (grown to the largest used).
    slots: Vec<Option<TxqState>>,
}

impl TxqTable {
    fn get(&self, txq: &TxqKey) -> Option<&TxqState> {
        self.slots.get(txq.index())?.as_ref()
    }

    fn get_mut(&mut self, txq: &TxqKey) -> Option<&mut TxqState> {
        self.slots.get_mut(txq.index())?.as_mut()
    }

    /// The state of `txq`, created with `new()` if it has none.
    fn get_or_insert_with(&mut self, txq: TxqKey, new: impl FnOnce() -> TxqState) -> &mut TxqState {
        let slot = txq.index();
        if self.slots.len() <= slot {
            self.slots.resize_with(slot + 1, || None);
        }
        self.slots[slot].get_or_insert_with(new)
    }

    /// The states of station `sta`'s TXQs.
    fn station(&self, sta: LinkId) -> impl Iterator<Item = &TxqState> {
        Tid::all().filter_map(move |tid| self.get(&TxqKey::station(sta, tid)))
    }
}

impl std::ops::Index<&TxqKey> for TxqTable {
    type Output = TxqState;

    fn index(&self, txq: &TxqKey) -> &TxqState {
        self.get(txq).expect("TXQ state exists")
    }
}

/// Per-AC scheduler state.
#[derive(Clone, Debug, Default)]
struct AcState {
    /// Generations 1/3: `active_txqs[ac]`. ath9k: `acq_old`.
    list: VecDeque<TxqKey>,
    /// ath9k: `acq_new`.
    new_list: VecDeque<TxqKey>,
    /// Generations 1/3: `schedule_round[ac]`.
    round: u16,
    /// 5.14: the rbtree of scheduled TXQs.
    tree: BTreeMap<VtKey, TxqKey>,
    /// 5.14: `schedule_pos`.
    pos: Option<VtKey>,
    /// 5.14: global virtual time.
    v_t: u64,
    /// 5.14: sum of active weights and its 2^32 reciprocal.
    weight_sum: u64,
    weight_sum_reciprocal: u64,
    /// 5.14: `last_weight_update`.
    last_weight_update: Option<Nanos>,
    /// Next (decreasing) tie-break for fresh tree insertions.
    next_tiebreak: i64,
}

impl AcState {
    /// `airtime_weight_sum_set`.
    fn set_weight_sum(&mut self, weight_sum: u64) {
        if self.weight_sum == weight_sum {
            return;
        }
        self.weight_sum = weight_sum;
        self.weight_sum_reciprocal = RECIPROCAL_DIVISOR_64.checked_div(weight_sum).unwrap_or(0);
    }

    /// Take `txq` off the lists it is on (each holds it at most once).
    // perf: the TXQ taken off is usually the head of `list` (the one the firmware was
    // just allowed to serve), so that is checked first; an empty `new_list` (every kind
    // but ath9k) needs no search.
    #[inline]
    fn remove_from_lists(&mut self, txq: TxqKey) {
        if self.list.front() == Some(&txq) {
            self.list.pop_front();
        } else if let Some(i) = self.list.iter().position(|&k| k == txq) {
            self.list.remove(i);
        }
        if self.new_list.is_empty() {
            return;
        }
        if let Some(i) = self.new_list.iter().position(|&k| k == txq) {
            self.new_list.remove(i);
        }
    }
}

/// The TXQ scheduler of one radio: per-AC state for the configured generation
/// (reference §5). See the module documentation for the driver loop.
#[derive(Clone, Debug)]
pub struct Scheduler {
    params: SchedulerParams,
    /// Per station, per AC.
    stas: Vec<[AirInfo; 4]>,
    /// The vif's airtime state per AC (5.14 charges multicast airtime to it).
    vif: [AirInfo; 4],
    txqs: TxqTable,
    acs: [AcState; 4],
    /// The latest time passed to any method (used by [`Scheduler::set_weight`]).
    last_now: Nanos,
}

impl Scheduler {
    /// A scheduler for `n_stations` stations (indices `0..n_stations`; larger indices are
    /// added on first use). Weights start at 256 (§5.1); deficits start at the weight
    /// (`sta_info_alloc`, §5.2) or, for ath9k, at the 300 µs quantum (§5.5).
    pub fn new(params: SchedulerParams, n_stations: usize) -> Scheduler {
        let d = Self::initial_deficit(params.kind);
        Scheduler {
            params,
            stas: (0..n_stations)
                .map(|_| std::array::from_fn(|_| AirInfo::new(d)))
                .collect(),
            vif: std::array::from_fn(|_| AirInfo::new(d)),
            txqs: TxqTable::default(),
            acs: std::array::from_fn(|_| AcState::default()),
            last_now: Nanos::ZERO,
        }
    }

    /// The configuration this scheduler runs with (§5.1, §12 item 1).
    pub fn params(&self) -> SchedulerParams {
        self.params
    }

    /// Set a station's airtime weight (nl80211 `airtime_weight`, §5.1). 0 means "not set"
    /// (as in nl80211) and is ignored. The deficit is not touched (generations 1/3). In
    /// [`SchedulerKind::VirtualTime`] the new weight is applied per AC and, if the station
    /// has a scheduled TXQ on that AC, the weight sum is recomputed at once, at the latest
    /// time seen by the scheduler (`sta_apply_airtime_params`). ath9k had no weights.
    pub fn set_weight(&mut self, sta: LinkId, weight: u16) {
        if weight == 0 {
            return;
        }
        self.ensure_sta(sta);
        for ac in Ac::ALL {
            let air = &mut self.stas[sta.index()][ac.index()];
            if air.weight == weight {
                continue;
            }
            air.set_weight(weight);
            if self.params.kind == SchedulerKind::VirtualTime {
                let scheduled = self
                    .txqs
                    .station(sta)
                    .any(|s| s.ac == ac && s.vt_key.is_some());
                if scheduled {
                    self.vt_update_weight(ac, self.last_now, true);
                }
            }
        }
    }

    /// A station's airtime weight (§5.1).
    pub fn weight(&self, sta: LinkId) -> u16 {
        self.stas
            .get(sta.index())
            .map_or(DEFAULT_AIRTIME_WEIGHT, |s| s[0].weight)
    }

    /// A TXQ got data: `ieee80211_schedule_txq` (called on every enqueue, §1 step 4, §5.1),
    /// or ath9k's `ath_tx_queue_tid` (§5.5).
    /// - Drr / DrrAql / RoundRobin: list it if not listed (head or tail, §5.2, §5.4); DrrAql
    ///   stamps the station active when it is inserted;
    /// - VirtualTime: mark the station active and insert the TXQ if not in the tree,
    ///   applying the catch-up rules (§5.3);
    /// - Ath9kDrr: list it on the new (deficit > 0) or old list if not listed.
    #[inline]
    pub fn schedule_txq(&mut self, now: Nanos, txq: TxqKey, ac: Ac) {
        if self.txqs.get(&txq).is_none() {
            return self.schedule_new_txq(now, txq, ac);
        }
        let st = self.touch(now, txq, ac);
        st.has_data = true;
        let listed = st.listed;
        // perf: a TXQ that gets a packet is usually known and listed already (every
        // enqueue comes here); creating its state and listing it are out of line, so
        // that the common call is small and makes no call but in tail position.
        match self.params.kind {
            SchedulerKind::RoundRobin | SchedulerKind::Drr | SchedulerKind::DrrAql => {
                if !listed {
                    self.drr_list(now, txq, ac);
                }
            }
            SchedulerKind::VirtualTime => self.vt_schedule(now, txq, ac),
            SchedulerKind::Ath9kDrr => self.ath_queue(txq, ac),
        }
    }

    /// [`Scheduler::schedule_txq`] of a TXQ named for the first time: its state is
    /// created, then it is scheduled.
    #[cold]
    #[inline(never)]
    fn schedule_new_txq(&mut self, now: Nanos, txq: TxqKey, ac: Ac) {
        self.touch(now, txq, ac);
        self.schedule_txq(now, txq, ac);
    }

    /// List a TXQ that has frames and is not listed ([`Scheduler::schedule_txq`] of
    /// the list kinds).
    #[inline(never)]
    fn drr_list(&mut self, now: Nanos, txq: TxqKey, ac: Ac) {
        self.drr_schedule(now, txq, ac, true, &|_| 0);
    }

    /// Open a scheduling round: `ieee80211_txq_schedule_start` (§5.1).
    /// - Drr / RoundRobin: `schedule_round[ac]++` (wrapping, §5.2);
    /// - DrrAql: if `ac_over_limit(n)` (n = TXQs on the AC's active list) the round number
    ///   becomes 0 and `next_txq` returns `None` until the next start; otherwise
    ///   `schedule_round[ac]++`, skipping 0 (§5.4). Use [`ac_aql_limit_us`] for the limit;
    ///   a driver without AQL passes `&|_| false`;
    /// - VirtualTime: restart the walk from the smallest `v_t` (§5.3);
    /// - Ath9kDrr: nothing (the in-driver scheduler had no rounds, §5.5).
    pub fn schedule_start(&mut self, now: Nanos, ac: Ac, ac_over_limit: &dyn Fn(usize) -> bool) {
        self.last_now = self.last_now.max(now);
        let a = &mut self.acs[ac.index()];
        match self.params.kind {
            SchedulerKind::RoundRobin | SchedulerKind::Drr => a.round = a.round.wrapping_add(1),
            SchedulerKind::DrrAql => {
                if ac_over_limit(a.list.len()) {
                    a.round = 0;
                } else {
                    a.round = a.round.wrapping_add(1);
                    if a.round == 0 {
                        a.round = 1;
                    }
                }
            }
            SchedulerKind::VirtualTime => a.pos = None,
            SchedulerKind::Ath9kDrr => {}
        }
    }

    /// `ieee80211_next_txq` (§5.1): the next TXQ to serve on `ac`, or `None`.
    /// `aql_eligible(txq)` is `ieee80211_txq_airtime_check` (§6.4; the list kinds ask it
    /// only for station TXQs, VirtualTime for every TXQ, as the kernels did);
    /// `aql_pending_us(sta)` is the station's `aql_tx_pending` on `ac` (used by DrrAql).
    /// The caller dequeues from the TXQ, then calls [`Scheduler::return_txq`].
    /// The list kinds remove the TXQ from the list; VirtualTime and ath9k leave it in
    /// place until it is returned empty.
    pub fn next_txq(
        &mut self,
        now: Nanos,
        ac: Ac,
        aql_eligible: &mut dyn FnMut(TxqKey) -> bool,
        aql_pending_us: &dyn Fn(LinkId) -> u32,
    ) -> Option<TxqKey> {
        self.last_now = self.last_now.max(now);
        match self.params.kind {
            SchedulerKind::RoundRobin | SchedulerKind::Drr | SchedulerKind::DrrAql => {
                self.drr_next(ac, aql_eligible, aql_pending_us)
            }
            SchedulerKind::VirtualTime => self.vt_next(ac, aql_eligible),
            SchedulerKind::Ath9kDrr => self.ath_next(ac, aql_eligible),
        }
    }

    /// `ieee80211_return_txq(txq, force)` (§5.1): the driver is done with `txq`;
    /// `has_data` is "it still has frames, or force".
    /// - Drr / RoundRobin: re-list it if it has data (head/tail rule, §5.2);
    /// - DrrAql: also keep an *empty* station TXQ listed (at the tail) if its effective
    ///   deficit (`deficit − aql_pending_us(sta)`) is negative and the station was active in
    ///   the last 100 ms (§5.4); `last_active` is stamped only when it is inserted with data;
    /// - VirtualTime: remove it from the tree if empty (marking the station active);
    /// - Ath9kDrr: remember whether it has data (an empty TXQ leaves the lists when it next
    ///   reaches the head); with `airtime_flags = 0` a served TXQ moves to the old tail.
    pub fn return_txq(
        &mut self,
        now: Nanos,
        txq: TxqKey,
        ac: Ac,
        has_data: bool,
        aql_pending_us: &dyn Fn(LinkId) -> u32,
    ) {
        let st = self.touch(now, txq, ac);
        st.has_data = has_data;
        let listed = st.listed;
        match self.params.kind {
            SchedulerKind::RoundRobin | SchedulerKind::Drr | SchedulerKind::DrrAql => {
                if !listed {
                    self.drr_schedule(now, txq, ac, has_data, aql_pending_us);
                }
            }
            SchedulerKind::VirtualTime => {
                if !has_data {
                    self.vt_unschedule(now, txq, ac);
                }
            }
            SchedulerKind::Ath9kDrr => self.ath_return(txq, ac, has_data),
        }
    }

    /// Take a TXQ out of scheduling, e.g. when its station starts power saving (§9.1)
    /// (`sta_ps_start` → `list_del_init` in generations 1/3, `ieee80211_unschedule_txq`
    /// in 5.14, which also marks the station active; ath9k removes the TID from its lists).
    /// It comes back with the next [`Scheduler::schedule_txq`].
    pub fn unschedule_txq(&mut self, now: Nanos, txq: TxqKey, ac: Ac) {
        self.touch(now, txq, ac);
        match self.params.kind {
            SchedulerKind::VirtualTime => self.vt_unschedule(now, txq, ac),
            _ => {
                self.acs[ac.index()].remove_from_lists(txq);
                self.state_mut(txq).listed = false;
            }
        }
    }

    /// `ieee80211_txq_may_transmit` (§5.1), for firmware-scheduled drivers (ath10k pull
    /// mode): may `txq` send now?
    /// - Drr / DrrAql / RoundRobin: walk from the head to `txq`, topping up (+quantum) every
    ///   station before it whose deficit is negative (DrrAql: effective deficit) and
    ///   rotating it to the tail; if `txq`'s (raw) deficit is `>= 0`, remove it from the
    ///   list and allow it; otherwise top it up, rotate it and refuse. A vif TXQ, an unlisted
    ///   TXQ and (DrrAql) a TXQ the per-AC AQL check lets through — an AC over its limit,
    ///   as the kernel is written (§5.4), or under it with the check flipped
    ///   ([`MayTransmitAqlCheck`]) — are allowed, and removed from the list. The OpenWrt
    ///   quantum shift is applied here too [U];
    /// - VirtualTime: refuse if AQL-ineligible or not scheduled; catch global `v_t` up to
    ///   the smallest node; allow if the TXQ's `v_t ≤` global (§5.3);
    /// - Ath9kDrr: always allowed (there was no such API).
    pub fn may_transmit(
        &mut self,
        now: Nanos,
        txq: TxqKey,
        ac: Ac,
        aql_eligible: &mut dyn FnMut(TxqKey) -> bool,
        aql_pending_us: &dyn Fn(LinkId) -> u32,
        ac_over_limit: &dyn Fn(usize) -> bool,
    ) -> bool {
        self.touch(now, txq, ac);
        match self.params.kind {
            SchedulerKind::RoundRobin | SchedulerKind::Drr | SchedulerKind::DrrAql => {
                self.drr_may_transmit(txq, ac, aql_pending_us, ac_over_limit)
            }
            SchedulerKind::VirtualTime => self.vt_may_transmit(txq, ac, aql_eligible),
            SchedulerKind::Ath9kDrr => true,
        }
    }

    /// [`Scheduler::may_transmit`] asked for `txq` again and again, with nothing else
    /// happening in between, until it allows or `max_asks` asks have been made: what a
    /// firmware does with the one TXQ it has to serve. Leaves the scheduler as that many
    /// calls of `may_transmit` would, and says how many refused and whether the last
    /// one allowed.
    // `may_transmit`'s arguments and the budget of asks.
    #[allow(clippy::too_many_arguments)]
    pub fn may_transmit_asking(
        &mut self,
        now: Nanos,
        txq: TxqKey,
        ac: Ac,
        max_asks: u32,
        aql_eligible: &mut dyn FnMut(TxqKey) -> bool,
        aql_pending_us: &dyn Fn(LinkId) -> u32,
        ac_over_limit: &dyn Fn(usize) -> bool,
    ) -> MayTransmitAnswers {
        let mut refusals = 0;
        while refusals < max_asks {
            // perf: a refusal of a station TXQ alone on a DRR list only tops its
            // deficit up by its quantum, so the refusals to come are taken at once
            // (a saturating station is refused a few times per exchange).
            if let Some(to_come) = self.refusals_to_come(txq, ac, ac_over_limit) {
                let k = to_come.min(max_asks - refusals);
                if k > 0 {
                    let sta = txq.sta.expect("a station TXQ");
                    let q = self.quantum(sta, ac);
                    self.touch(now, txq, ac);
                    self.stas[sta.index()][ac.index()].deficit += q * k as i64;
                    refusals += k;
                }
                if refusals == max_asks {
                    break;
                }
                // None to come: the next ask allows it, taking it off the list.
                self.last_now = self.last_now.max(now);
                self.acs[ac.index()].remove_from_lists(txq);
                self.state_mut(txq).listed = false;
                return MayTransmitAnswers {
                    refusals,
                    allowed: true,
                };
            }
            if self.may_transmit(now, txq, ac, aql_eligible, aql_pending_us, ac_over_limit) {
                return MayTransmitAnswers {
                    refusals,
                    allowed: true,
                };
            }
            refusals += 1;
        }
        MayTransmitAnswers {
            refusals,
            allowed: false,
        }
    }

    /// How many times in a row [`Scheduler::may_transmit`] would refuse `txq`, when
    /// each refusal only tops its deficit up: a DRR kind, `txq` a station TXQ alone on
    /// its AC's list, the per-AC AQL check not letting it through at once (DrrAql,
    /// [`MayTransmitAqlCheck`]). That takes `ceil(−deficit / quantum)` refusals. `None`
    /// in every other case.
    fn refusals_to_come(
        &self,
        txq: TxqKey,
        ac: Ac,
        ac_over_limit: &dyn Fn(usize) -> bool,
    ) -> Option<u32> {
        let kind = self.params.kind;
        if !matches!(kind, SchedulerKind::Drr | SchedulerKind::DrrAql) {
            return None;
        }
        let sta = txq.sta?;
        let a = &self.acs[ac.index()];
        if a.list.len() != 1 || a.list.front() != Some(&txq) || !self.txqs.get(&txq)?.listed {
            return None;
        }
        if kind == SchedulerKind::DrrAql && self.aql_check_allows(ac_over_limit(1)) {
            return None;
        }
        let deficit = self.stas.get(sta.index())?[ac.index()].deficit;
        let q = self.quantum(sta, ac);
        if deficit >= 0 {
            return Some(0);
        }
        if q <= 0 {
            return None;
        }
        u32::try_from((-deficit + q - 1) / q).ok()
    }

    /// `ieee80211_sta_register_airtime` (§5.1): charge airtime used by `txq`'s station on
    /// `ac`, `tx_us` and/or `rx_us` according to `airtime_flags`.
    /// - Drr: `deficit −= charged` (§5.2);
    /// - DrrAql: the same, but only if the station was active in the last 100 ms (§5.4);
    /// - VirtualTime: advance the station's (or, for the vif TXQ, the vif's) and the global
    ///   virtual time with the kernel's reciprocals, then re-sort this TXQ (§5.3);
    /// - Ath9kDrr: `deficit −= charged`; if that leaves it `<= 0`, list the TXQ on the old
    ///   list even if empty (ath9k `ath_tx_count_airtime` / `ath_rx_count_airtime`, §5.5);
    /// - RoundRobin: statistics only.
    ///
    /// Station-less (vif) airtime is ignored except by VirtualTime.
    pub fn register_airtime(&mut self, now: Nanos, txq: TxqKey, ac: Ac, tx_us: u32, rx_us: u32) {
        self.touch(now, txq, ac);
        let flags = self.params.airtime_flags;
        let mut charged: u32 = 0;
        if flags & AIRTIME_USE_TX != 0 {
            charged = charged.wrapping_add(tx_us);
        }
        if flags & AIRTIME_USE_RX != 0 {
            charged = charged.wrapping_add(rx_us);
        }
        let kind = self.params.kind;
        if kind == SchedulerKind::VirtualTime {
            self.vt_register(txq, ac, tx_us, rx_us, charged);
            return;
        }
        let Some(sta) = txq.sta else { return };
        let air = &mut self.stas[sta.index()][ac.index()];
        air.tx_airtime_us += tx_us as u64;
        air.rx_airtime_us += rx_us as u64;
        match kind {
            SchedulerKind::Drr => air.deficit -= charged as i64,
            SchedulerKind::DrrAql => {
                if air.drr_active(now) {
                    air.deficit -= charged as i64;
                }
            }
            SchedulerKind::Ath9kDrr => {
                if flags & (AIRTIME_USE_TX | AIRTIME_USE_RX) != 0 {
                    air.deficit -= charged as i64;
                    if air.deficit <= 0 {
                        self.ath_queue(txq, ac);
                    }
                }
            }
            SchedulerKind::RoundRobin | SchedulerKind::VirtualTime => {}
        }
    }

    /// A station's DRR deficit on `ac`, in µs (generations 1 and 3, ath9k; §5.2, §5.4,
    /// §5.5). Other kinds leave it at its initial value.
    pub fn deficit_us(&self, sta: LinkId, ac: Ac) -> i64 {
        self.stas
            .get(sta.index())
            .map_or(Self::initial_deficit(self.params.kind), |s| {
                s[ac.index()].deficit
            })
    }

    /// The virtual time of a station (`Some(sta)`) or of the vif (`None`) on `ac`, in
    /// virtual µs (5.14, §5.3).
    pub fn virtual_time_us(&self, sta: Option<LinkId>, ac: Ac) -> u64 {
        match sta {
            Some(s) => self.stas.get(s.index()).map_or(0, |x| x[ac.index()].v_t),
            None => self.vif[ac.index()].v_t,
        }
    }

    /// The global virtual time of `ac` (5.14, §5.3).
    pub fn global_virtual_time_us(&self, ac: Ac) -> u64 {
        self.acs[ac.index()].v_t
    }

    /// The weight sum of active stations on `ac`, as last recomputed (5.14, §5.3).
    pub fn weight_sum(&self, ac: Ac) -> u64 {
        self.acs[ac.index()].weight_sum
    }

    /// The current `schedule_round[ac]` (generations 1/3; 0 = blocked in DrrAql, §5.4).
    pub fn schedule_round(&self, ac: Ac) -> u16 {
        self.acs[ac.index()].round
    }

    /// Whether `txq` is currently scheduled: on the active list (list kinds, §5.2, §5.4),
    /// on a new/old list (ath9k, §5.5) or in the tree (VirtualTime, §5.3).
    pub fn is_scheduled(&self, txq: TxqKey) -> bool {
        self.txqs
            .get(&txq)
            .is_some_and(|s| s.listed || s.vt_key.is_some())
    }

    /// How many TXQs are scheduled on `ac` (the `N` of the 6.0 per-AC check, §5.4).
    pub fn active_txq_count(&self, ac: Ac) -> usize {
        let a = &self.acs[ac.index()];
        a.list.len() + a.new_list.len() + a.tree.len()
    }

    /// Total airtime reported for a station on `ac`, whether charged or not (the
    /// debugfs `airtime` counters, §5.1, §10).
    pub fn airtime(&self, sta: LinkId, ac: Ac) -> Airtime {
        self.stas.get(sta.index()).map_or(Airtime::default(), |s| {
            let a = &s[ac.index()];
            Airtime {
                tx_us: a.tx_airtime_us,
                rx_us: a.rx_airtime_us,
            }
        })
    }

    // ----- common helpers -----

    fn initial_deficit(kind: SchedulerKind) -> i64 {
        match kind {
            SchedulerKind::Ath9kDrr => ATH_AIRTIME_QUANTUM_US,
            _ => DEFAULT_AIRTIME_WEIGHT as i64,
        }
    }

    fn ensure_sta(&mut self, sta: LinkId) {
        let d = Self::initial_deficit(self.params.kind);
        while self.stas.len() <= sta.index() {
            self.stas.push(std::array::from_fn(|_| AirInfo::new(d)));
        }
    }

    /// Record the time and return `txq`'s state, creating it (and its station's
    /// airtime state) on first use.
    #[inline]
    fn touch(&mut self, now: Nanos, txq: TxqKey, ac: Ac) -> &mut TxqState {
        self.last_now = self.last_now.max(now);
        if self.txqs.get(&txq).is_none() {
            self.create_txq(txq, ac);
        }
        let st = self.state_mut(txq);
        debug_assert_eq!(st.ac, ac, "TXQ {txq:?} used on two ACs");
        st
    }

    /// The state of a TXQ first named now, and its station's airtime state.
    #[cold]
    fn create_txq(&mut self, txq: TxqKey, ac: Ac) {
        if let Some(sta) = txq.sta {
            self.ensure_sta(sta);
        }
        self.txqs.get_or_insert_with(txq, || TxqState {
            ac,
            listed: false,
            in_new: false,
            round: 0,
            vt_key: None,
            has_data: false,
        });
    }

    fn state_mut(&mut self, txq: TxqKey) -> &mut TxqState {
        self.txqs.get_mut(&txq).expect("TXQ state exists")
    }

    fn air(&self, sta: Option<LinkId>, ac: Ac) -> &AirInfo {
        match sta {
            Some(s) => &self.stas[s.index()][ac.index()],
            None => &self.vif[ac.index()],
        }
    }

    fn air_mut(&mut self, sta: Option<LinkId>, ac: Ac) -> &mut AirInfo {
        match sta {
            Some(s) => &mut self.stas[s.index()][ac.index()],
            None => &mut self.vif[ac.index()],
        }
    }

    /// DRR quantum of a station: `weight << quantum_shift` (§5.2, §5.4, §12 item 1).
    fn quantum(&self, sta: LinkId, ac: Ac) -> i64 {
        (self.stas[sta.index()][ac.index()].weight as i64) << self.params.quantum_shift
    }

    // ----- generations 1 and 3, and plain round robin (§5.2, §5.4) -----

    /// `__ieee80211_schedule_txq(txq, force)` for a TXQ that is not listed. A TXQ
    /// without frames (`has_queue` false) stays off the list unless 6.0's
    /// `ieee80211_txq_keep_active` holds (DrrAql: a station TXQ with a negative
    /// effective deficit, `deficit − aql_pending_us(sta)`, whose station was active in
    /// the last 100 ms); one with frames goes to the head under airtime DRR (§5.2
    /// head/tail rule) and, under DrrAql, stamps its station active.
    // perf: inlined into schedule_txq and return_txq (a TXQ the firmware was allowed
    // to serve comes back through here after every PPDU).
    #[inline(always)]
    fn drr_schedule(
        &mut self,
        now: Nanos,
        txq: TxqKey,
        ac: Ac,
        has_queue: bool,
        aql_pending_us: &dyn Fn(LinkId) -> u32,
    ) {
        debug_assert!(!self.txqs[&txq].listed, "{txq:?} listed twice");
        let kind = self.params.kind;
        let keep = !has_queue
            && kind == SchedulerKind::DrrAql
            && txq.sta.is_some_and(|sta| {
                let air = &self.stas[sta.index()][ac.index()];
                air.deficit - (aql_pending_us(sta) as i64) < 0 && air.drr_active(now)
            });
        if !has_queue && !keep {
            return;
        }
        let head = kind != SchedulerKind::RoundRobin
            && txq.sta.is_some()
            && self.params.airtime_flags != 0
            && has_queue;
        let list = &mut self.acs[ac.index()].list;
        if head {
            list.push_front(txq);
        } else {
            list.push_back(txq);
        }
        self.state_mut(txq).listed = true;
        if kind == SchedulerKind::DrrAql && has_queue {
            if let Some(sta) = txq.sta {
                self.stas[sta.index()][ac.index()].last_active = Some(now);
            }
        }
    }

    /// `ieee80211_next_txq` of generations 1 and 3.
    fn drr_next(
        &mut self,
        ac: Ac,
        aql_eligible: &mut dyn FnMut(TxqKey) -> bool,
        aql_pending_us: &dyn Fn(LinkId) -> u32,
    ) -> Option<TxqKey> {
        let kind = self.params.kind;
        let a = ac.index();
        let round = self.acs[a].round;
        if kind == SchedulerKind::DrrAql && round == 0 {
            return None;
        }
        let mut head: Option<TxqKey> = None;
        let mut found_eligible = false;
        loop {
            let t = *self.acs[a].list.front()?;
            if head == Some(t) {
                if !found_eligible {
                    return None;
                }
                found_eligible = false;
            }
            if head.is_none() {
                head = Some(t);
            }
            if let Some(sta) = t.sta {
                let eligible = aql_eligible(t);
                if eligible {
                    found_eligible = true;
                }
                let mut rotate = !eligible;
                if kind != SchedulerKind::RoundRobin {
                    let pending = if kind == SchedulerKind::DrrAql {
                        aql_pending_us(sta) as i64
                    } else {
                        0
                    };
                    let q = self.quantum(sta, ac);
                    let air = &mut self.stas[sta.index()][a];
                    if air.deficit - pending < 0 {
                        air.deficit += q;
                        rotate = true;
                    }
                }
                if rotate {
                    let list = &mut self.acs[a].list;
                    list.pop_front();
                    list.push_back(t);
                    continue;
                }
            }
            let st = self.txqs.get_mut(&t).expect("listed TXQ has state");
            if st.round == round {
                return None;
            }
            st.round = round;
            st.listed = false;
            self.acs[a].list.pop_front();
            return Some(t);
        }
    }

    /// `ieee80211_txq_may_transmit` of generations 1 and 3.
    /// `may_transmit`'s per-AC AQL check (DrrAql): whether it lets the TXQ through
    /// without the deficit walk, given whether the AC is over its limit.
    fn aql_check_allows(&self, ac_over_limit: bool) -> bool {
        match self.params.may_transmit_aql_check {
            MayTransmitAqlCheck::AsWritten => ac_over_limit,
            MayTransmitAqlCheck::Flipped => !ac_over_limit,
        }
    }

    fn drr_may_transmit(
        &mut self,
        txq: TxqKey,
        ac: Ac,
        aql_pending_us: &dyn Fn(LinkId) -> u32,
        ac_over_limit: &dyn Fn(usize) -> bool,
    ) -> bool {
        let kind = self.params.kind;
        let a = ac.index();
        let allow = |s: &mut Scheduler| {
            if s.txqs[&txq].listed {
                s.acs[a].remove_from_lists(txq);
                s.state_mut(txq).listed = false;
            }
            true
        };
        let Some(sta) = txq.sta else {
            return allow(self);
        };
        if !self.txqs[&txq].listed {
            return allow(self);
        }
        if kind == SchedulerKind::DrrAql
            && self.aql_check_allows(ac_over_limit(self.acs[a].list.len()))
        {
            return allow(self);
        }
        // One pass at most: the kernel's `list_empty(&txqi->schedule_order)` test above
        // guarantees the TXQ is on the list, and here `listed` stands for that. A TXQ
        // marked listed but not on its AC's list would make the walk rotate for ever,
        // so a pass that does not reach it treats it as unlisted (allowed, flag
        // cleared), as the kernel would.
        debug_assert!(
            self.acs[a].list.contains(&txq),
            "{txq:?} marked listed but not on {ac:?}'s list"
        );
        let mut steps = self.acs[a].list.len();
        while let Some(&front) = self.acs[a].list.front() {
            if front == txq {
                break;
            }
            if steps == 0 {
                return allow(self);
            }
            steps -= 1;
            if let (Some(s), true) = (front.sta, kind != SchedulerKind::RoundRobin) {
                let pending = if kind == SchedulerKind::DrrAql {
                    aql_pending_us(s) as i64
                } else {
                    0
                };
                let q = self.quantum(s, ac);
                let air = &mut self.stas[s.index()][a];
                if air.deficit - pending < 0 {
                    air.deficit += q;
                }
            }
            let list = &mut self.acs[a].list;
            list.pop_front();
            list.push_back(front);
        }
        if kind == SchedulerKind::RoundRobin || self.stas[sta.index()][a].deficit >= 0 {
            return allow(self);
        }
        let q = self.quantum(sta, ac);
        self.stas[sta.index()][a].deficit += q;
        let list = &mut self.acs[a].list;
        list.pop_front();
        list.push_back(txq);
        false
    }

    // ----- generation 2: virtual time (§5.3) -----

    /// `ieee80211_schedule_txq` of 5.14.
    // perf: out of line, as the listing paths of `Scheduler::schedule_txq` are.
    #[inline(never)]
    fn vt_schedule(&mut self, now: Nanos, txq: TxqKey, ac: Ac) {
        let in_tree = self.txqs[&txq].vt_key.is_some();
        let global = self.acs[ac.index()].v_t;
        let air = self.air_mut(txq.sta, ac);
        let was_active = air.vt_active(now);
        air.last_scheduled = Some(now);
        air.on_active_list = true;
        if in_tree {
            return;
        }
        if (!was_active && air.v_t < global) || air.v_t < global.wrapping_sub(AIRTIME_MAX_BEHIND_US)
        {
            air.v_t = global;
        }
        let v = air.v_t;
        self.vt_update_weight(ac, now, !was_active);
        self.vt_insert_fresh(txq, ac, v);
    }

    /// `__ieee80211_insert_txq`: before every TXQ with an equal `v_t`.
    fn vt_insert_fresh(&mut self, txq: TxqKey, ac: Ac, v: u64) {
        let a = &mut self.acs[ac.index()];
        let key = VtKey {
            v_t: v,
            tiebreak: a.next_tiebreak,
        };
        a.next_tiebreak -= 1;
        a.tree.insert(key, txq);
        self.state_mut(txq).vt_key = Some(key);
    }

    /// `ieee80211_update_airtime_weight`, with the kernel's condition as written.
    fn vt_update_weight(&mut self, ac: Ac, now: Nanos, force: bool) {
        let a = ac.index();
        if !force {
            match self.acs[a].last_weight_update {
                None => return,
                Some(t) if t + AIRTIME_ACTIVE_DURATION < now => return,
                Some(_) => {}
            }
        }
        let mut sum = 0u64;
        for air in self
            .stas
            .iter_mut()
            .map(|s| &mut s[a])
            .chain(std::iter::once(&mut self.vif[a]))
        {
            if air.on_active_list {
                if air.vt_active(now) {
                    sum += air.weight as u64;
                } else {
                    air.on_active_list = false;
                }
            }
        }
        let acs = &mut self.acs[a];
        acs.set_weight_sum(sum);
        acs.last_weight_update = Some(now);
    }

    /// `ieee80211_next_txq` of 5.14.
    fn vt_next(&mut self, ac: Ac, aql_eligible: &mut dyn FnMut(TxqKey) -> bool) -> Option<TxqKey> {
        let a = ac.index();
        let mut node = self.acs[a].pos;
        let mut first = false;
        loop {
            let tree = &self.acs[a].tree;
            let cur = match node {
                None => {
                    first = true;
                    tree.iter().next()
                }
                Some(k) => tree.range((Excluded(k), Unbounded)).next(),
            };
            let (key, t) = cur.map(|(k, t)| (*k, *t))?;
            let v = self.air(t.sta, ac).v_t;
            if v > self.acs[a].v_t {
                if !first {
                    return None;
                }
                // airtime_catchup_v_t: never let the system idle.
                self.acs[a].v_t = v;
            }
            if !aql_eligible(t) {
                first = false;
                node = Some(key);
                continue;
            }
            self.acs[a].pos = Some(key);
            return Some(t);
        }
    }

    /// `__ieee80211_unschedule_txq(txq, purge = false)`.
    fn vt_unschedule(&mut self, now: Nanos, txq: TxqKey, ac: Ac) {
        let Some(key) = self.txqs[&txq].vt_key else {
            return;
        };
        let acs = &mut self.acs[ac.index()];
        if acs.pos == Some(key) {
            acs.pos = acs.tree.range(..key).next_back().map(|(k, _)| *k);
        }
        acs.tree.remove(&key);
        self.state_mut(txq).vt_key = None;
        let air = self.air_mut(txq.sta, ac);
        air.last_scheduled = Some(now);
        air.on_active_list = true;
    }

    /// `ieee80211_register_airtime` of 5.14.
    fn vt_register(&mut self, txq: TxqKey, ac: Ac, tx_us: u32, rx_us: u32, charged: u32) {
        let airtime = charged << WEIGHT_SHIFT;
        let (weight_sum, weight_sum_reciprocal) = {
            let acs = &self.acs[ac.index()];
            (acs.weight_sum, acs.weight_sum_reciprocal)
        };
        let air = self.air_mut(txq.sta, ac);
        air.tx_airtime_us += tx_us as u64;
        air.rx_airtime_us += rx_us as u64;
        let (ws, ws_recip) = if weight_sum != 0 {
            (weight_sum, weight_sum_reciprocal)
        } else {
            (air.weight as u64, air.weight_reciprocal as u64)
        };
        let global_inc = (airtime as u64 + (ws >> 1)).wrapping_mul(ws_recip) >> RECIPROCAL_SHIFT_64;
        let sta_inc = airtime
            .wrapping_add((air.weight >> 1) as u32)
            .wrapping_mul(air.weight_reciprocal)
            >> RECIPROCAL_SHIFT_32;
        air.v_t += sta_inc as u64;
        self.acs[ac.index()].v_t += global_inc;
        self.vt_resort(txq, ac);
    }

    /// `ieee80211_resort_txq`: move the TXQ only if it is out of order with its neighbours.
    fn vt_resort(&mut self, txq: TxqKey, ac: Ac) {
        let Some(key) = self.txqs.get(&txq).and_then(|s| s.vt_key) else {
            return;
        };
        let v = self.air(txq.sta, ac).v_t;
        let acs = &mut self.acs[ac.index()];
        let prev = acs.tree.range(..key).next_back().map(|(k, _)| *k);
        let next = acs
            .tree
            .range((Excluded(key), Unbounded))
            .next()
            .map(|(k, _)| *k);
        let in_place = prev.is_none_or(|p| p.v_t <= v) && next.is_none_or(|n| n.v_t > v);
        acs.tree.remove(&key);
        let new_key = if in_place {
            // Same position, new v_t: pick a tie-break that keeps it after `prev`.
            let tb = match prev {
                Some(p) if p.v_t == v => p.tiebreak + 1,
                _ => key.tiebreak,
            };
            let new_key = VtKey {
                v_t: v,
                tiebreak: tb,
            };
            if acs.pos == Some(key) {
                acs.pos = Some(new_key);
            }
            new_key
        } else {
            if acs.pos == Some(key) {
                acs.pos = prev;
            }
            let k = VtKey {
                v_t: v,
                tiebreak: acs.next_tiebreak,
            };
            acs.next_tiebreak -= 1;
            k
        };
        acs.tree.insert(new_key, txq);
        self.state_mut(txq).vt_key = Some(new_key);
    }

    /// `ieee80211_txq_may_transmit` of 5.14.
    fn vt_may_transmit(
        &mut self,
        txq: TxqKey,
        ac: Ac,
        aql_eligible: &mut dyn FnMut(TxqKey) -> bool,
    ) -> bool {
        if !aql_eligible(txq) || self.txqs[&txq].vt_key.is_none() {
            return false;
        }
        if let Some((_, &first)) = self.acs[ac.index()].tree.first_key_value() {
            let fv = self.air(first.sta, ac).v_t;
            let acs = &mut self.acs[ac.index()];
            if acs.v_t < fv {
                acs.v_t = fv;
            }
        }
        self.air(txq.sta, ac).v_t <= self.acs[ac.index()].v_t
    }

    // ----- pre-5.0 ath9k in-driver DRR (§5.5) -----

    /// `__ath_tx_queue_tid`: list on the new list if the station's deficit is positive
    /// (`AIRTIME_USE_NEW_QUEUES` assumed on), else on the old list; tail insertion.
    // perf: out of line, as the listing paths of `Scheduler::schedule_txq` are.
    #[inline(never)]
    fn ath_queue(&mut self, txq: TxqKey, ac: Ac) {
        if self.txqs[&txq].listed {
            return;
        }
        let positive = txq
            .sta
            .is_none_or(|s| self.stas[s.index()][ac.index()].deficit > 0);
        let a = &mut self.acs[ac.index()];
        if positive {
            a.new_list.push_back(txq);
        } else {
            a.list.push_back(txq);
        }
        let st = self.state_mut(txq);
        st.listed = true;
        st.in_new = positive;
    }

    /// Move a listed TXQ to the tail of the old list.
    fn ath_move_to_old(&mut self, txq: TxqKey, ac: Ac) {
        let a = &mut self.acs[ac.index()];
        a.remove_from_lists(txq);
        a.list.push_back(txq);
        let st = self.state_mut(txq);
        st.listed = true;
        st.in_new = false;
    }

    /// The selection part of `ath_txq_schedule`.
    fn ath_next(&mut self, ac: Ac, aql_eligible: &mut dyn FnMut(TxqKey) -> bool) -> Option<TxqKey> {
        let active = self.params.airtime_flags & (AIRTIME_USE_TX | AIRTIME_USE_RX) != 0;
        let a = ac.index();
        // Consecutive AQL rotations without meeting an eligible TXQ (AQL extension).
        let mut ineligible_streak = 0usize;
        loop {
            let acs = &self.acs[a];
            let (in_new, t) = match (acs.new_list.front(), acs.list.front()) {
                (Some(&t), _) => (true, t),
                (None, Some(&t)) => (false, t),
                (None, None) => return None,
            };
            let mut eligible = true;
            if let Some(sta) = t.sta {
                eligible = aql_eligible(t);
                if eligible {
                    ineligible_streak = 0;
                }
                let air = &mut self.stas[sta.index()][a];
                if active && air.deficit <= 0 {
                    air.deficit += ATH_AIRTIME_QUANTUM_US;
                    self.ath_move_to_old(t, ac);
                    continue;
                }
            }
            if !self.txqs[&t].has_data {
                let acs = &mut self.acs[a];
                if in_new {
                    acs.new_list.pop_front();
                } else {
                    acs.list.pop_front();
                }
                if in_new && !acs.list.is_empty() {
                    acs.list.push_back(t);
                    self.state_mut(t).in_new = false;
                } else {
                    self.state_mut(t).listed = false;
                }
                continue;
            }
            if !eligible {
                ineligible_streak += 1;
                let listed = self.acs[a].new_list.len() + self.acs[a].list.len();
                if ineligible_streak > listed {
                    return None;
                }
                self.ath_move_to_old(t, ac);
                continue;
            }
            return Some(t);
        }
    }

    /// After `ath_tx_sched_aggr`: without airtime accounting the served TID moves to the
    /// old tail (round robin); a TID with data that is not listed is queued.
    fn ath_return(&mut self, txq: TxqKey, ac: Ac, has_data: bool) {
        let active = self.params.airtime_flags & (AIRTIME_USE_TX | AIRTIME_USE_RX) != 0;
        if !self.txqs[&txq].listed {
            if has_data {
                self.ath_queue(txq, ac);
            }
        } else if !active {
            self.ath_move_to_old(txq, ac);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const AC: Ac = Ac::Be;

    fn no_pending(_: LinkId) -> u32 {
        0
    }

    fn jain(x: &[f64]) -> f64 {
        let s: f64 = x.iter().sum();
        let s2: f64 = x.iter().map(|v| v * v).sum();
        s * s / (x.len() as f64 * s2)
    }

    struct RunResult {
        airtime: Vec<u64>,
        services: Vec<u64>,
    }

    impl RunResult {
        fn shares(&self) -> Vec<f64> {
            let total: u64 = self.airtime.iter().sum();
            self.airtime
                .iter()
                .map(|&a| a as f64 / total as f64)
                .collect()
        }
        fn jain(&self) -> f64 {
            jain(&self.airtime.iter().map(|&a| a as f64).collect::<Vec<_>>())
        }
    }

    /// A tiny fake driver: every station has one always-backlogged BE TXQ; the "hardware"
    /// holds up to `hw_depth` PPDUs; each service transmits `per_service[sta]` µs of
    /// airtime. The scheduler refills the hardware after each completion (schedule_start,
    /// next_txq… until full or None); a completion advances time, clears the AQL pending
    /// airtime, charges the airtime and models a new packet arriving (schedule_txq).
    fn run(params: SchedulerParams, per_service: &[u32], weights: &[u16], dur: Nanos) -> RunResult {
        let n = per_service.len();
        let mut s = Scheduler::new(params, n);
        for (i, &w) in weights.iter().enumerate() {
            s.set_weight(LinkId(i as u16), w);
        }
        let mut now = Nanos::ZERO;
        for i in 0..n {
            s.schedule_txq(now, TxqKey::station(LinkId(i as u16), Tid(0)), AC);
        }
        let hw_depth = 2;
        let mut inflight: VecDeque<(TxqKey, u32)> = VecDeque::new();
        let mut pending = vec![0u32; n];
        let mut airtime = vec![0u64; n];
        let mut services = vec![0u64; n];
        while now < dur {
            s.schedule_start(now, AC, &|_| false);
            while inflight.len() < hw_depth {
                let p = pending.clone();
                let Some(t) = s.next_txq(now, AC, &mut |_| true, &|x| p[x.index()]) else {
                    break;
                };
                let i = t.sta.unwrap().index();
                pending[i] += per_service[i];
                inflight.push_back((t, per_service[i]));
                let p = pending.clone();
                s.return_txq(now, t, AC, true, &|x| p[x.index()]);
            }
            let (t, at) = inflight.pop_front().expect("scheduler stalled");
            let i = t.sta.unwrap().index();
            now += Nanos::from_us(at as u64);
            pending[i] -= at;
            airtime[i] += at as u64;
            services[i] += 1;
            s.register_airtime(now, t, AC, at, 0);
            s.schedule_txq(now, t, AC);
        }
        RunResult { airtime, services }
    }

    /// A harsher fake driver: `hw_depth` PPDUs in flight, per-service airtime jittered
    /// ±50 % (deterministic LCG), and AQL as in §6.4 with the default limits (5000 /
    /// 12000 µs per station, 24000 µs total) plus the 6.0 per-AC check.
    fn run_aql(kind: SchedulerKind, base: &[u32], hw_depth: usize, dur: Nanos) -> RunResult {
        const LOW: u32 = 5000;
        const HIGH: u32 = 12000;
        const THRESHOLD: u32 = 24000;
        let n = base.len();
        let mut s = Scheduler::new(SchedulerParams::mainline(kind), n);
        let mut now = Nanos::ZERO;
        for i in 0..n {
            s.schedule_txq(now, TxqKey::station(LinkId(i as u16), Tid(0)), AC);
        }
        let mut rng: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut inflight: VecDeque<(TxqKey, u32)> = VecDeque::new();
        let mut pending = vec![0u32; n];
        let mut airtime = vec![0u64; n];
        let mut services = vec![0u64; n];
        while now < dur {
            let total: u32 = pending.iter().sum();
            s.schedule_start(now, AC, &|k| total >= ac_aql_limit_us(k, LOW, HIGH));
            while inflight.len() < hw_depth {
                let p = pending.clone();
                let total: u32 = p.iter().sum();
                let mut eligible = |t: TxqKey| {
                    let sp = t.sta.map_or(0, |x| p[x.index()]);
                    sp < LOW || (total < THRESHOLD && sp < HIGH)
                };
                let Some(t) = s.next_txq(now, AC, &mut eligible, &|x| p[x.index()]) else {
                    break;
                };
                let i = t.sta.unwrap().index();
                rng = rng
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                let jitter = 50 + (rng >> 33) % 101; // 50..=150 %
                let at = (base[i] as u64 * jitter / 100) as u32;
                pending[i] += at;
                inflight.push_back((t, at));
                let p = pending.clone();
                s.return_txq(now, t, AC, true, &|x| p[x.index()]);
            }
            let (t, at) = inflight.pop_front().expect("scheduler stalled");
            let i = t.sta.unwrap().index();
            now += Nanos::from_us(at as u64);
            pending[i] -= at;
            airtime[i] += at as u64;
            services[i] += 1;
            s.register_airtime(now, t, AC, at, 0);
            s.schedule_txq(now, t, AC);
        }
        RunResult { airtime, services }
    }

    #[test]
    fn fair_kinds_stay_fair_with_aql_jitter_and_deep_hardware_queue() {
        for kind in FAIR_KINDS {
            for base in [&[200u32, 2000][..], &[200, 450, 900, 1400, 2000][..]] {
                let r = run_aql(kind, base, 4, Nanos::from_secs(20));
                let shares = r.shares();
                println!(
                    "{:12} AQL+jitter, depth 4, {:?} µs: shares {:.4?}, Jain {:.5}",
                    kind.name(),
                    base,
                    shares,
                    r.jain()
                );
                let fair = 1.0 / base.len() as f64;
                for &sh in &shares {
                    assert!((sh - fair).abs() < 0.03, "{kind:?} {base:?}: {shares:?}");
                }
                assert!(r.jain() >= 0.98, "{kind:?} {base:?}: Jain {}", r.jain());
            }
        }
    }

    const FAIR_KINDS: [SchedulerKind; 4] = [
        SchedulerKind::Ath9kDrr,
        SchedulerKind::Drr,
        SchedulerKind::VirtualTime,
        SchedulerKind::DrrAql,
    ];

    #[test]
    fn round_robin_gives_equal_service_counts() {
        let r = run(
            SchedulerParams::mainline(SchedulerKind::RoundRobin),
            &[200, 2000],
            &[],
            Nanos::from_secs(20),
        );
        let shares = r.shares();
        println!(
            "round_robin 200/2000 µs: services {:?}, airtime shares {:.4?}, Jain {:.4}",
            r.services,
            shares,
            r.jain()
        );
        assert!(r.services[0].abs_diff(r.services[1]) <= 1);
        assert!((shares[1] - 2000.0 / 2200.0).abs() < 0.005, "{shares:?}");
    }

    #[test]
    fn fair_kinds_equalise_airtime_two_stations() {
        for kind in FAIR_KINDS {
            let r = run(
                SchedulerParams::mainline(kind),
                &[200, 2000],
                &[],
                Nanos::from_secs(20),
            );
            let shares = r.shares();
            println!(
                "{:12} 200/2000 µs: airtime shares {:.4?}, services {:?}, Jain {:.5}",
                kind.name(),
                shares,
                r.services,
                r.jain()
            );
            for &sh in &shares {
                assert!((sh - 0.5).abs() < 0.03, "{kind:?}: {shares:?}");
            }
            assert!(r.jain() >= 0.98, "{kind:?}: Jain {}", r.jain());
        }
    }

    #[test]
    fn fair_kinds_equalise_airtime_five_stations() {
        for kind in FAIR_KINDS {
            let r = run(
                SchedulerParams::mainline(kind),
                &[200, 450, 900, 1400, 2000],
                &[],
                Nanos::from_secs(20),
            );
            let shares = r.shares();
            println!(
                "{:12} 200/450/900/1400/2000 µs: airtime shares {:.4?}, Jain {:.5}",
                kind.name(),
                shares,
                r.jain()
            );
            for &sh in &shares {
                assert!((sh - 0.2).abs() < 0.03, "{kind:?}: {shares:?}");
            }
            assert!(r.jain() >= 0.98, "{kind:?}: Jain {}", r.jain());
        }
    }

    #[test]
    fn openwrt_quantum_still_fair() {
        for kind in [SchedulerKind::Drr, SchedulerKind::DrrAql] {
            let r = run(
                SchedulerParams::openwrt(kind),
                &[200, 450, 900, 1400, 2000],
                &[],
                Nanos::from_secs(20),
            );
            println!(
                "{:12} (quantum << 3) 5 stations: shares {:.4?}, Jain {:.5}",
                kind.name(),
                r.shares(),
                r.jain()
            );
            assert!(r.jain() >= 0.98);
        }
    }

    #[test]
    fn weights_split_airtime_proportionally() {
        for kind in [
            SchedulerKind::Drr,
            SchedulerKind::VirtualTime,
            SchedulerKind::DrrAql,
        ] {
            for per in [[1000, 1000], [300, 1500]] {
                let r = run(
                    SchedulerParams::mainline(kind),
                    &per,
                    &[256, 512],
                    Nanos::from_secs(20),
                );
                let ratio = r.airtime[1] as f64 / r.airtime[0] as f64;
                println!(
                    "{:12} weights 256/512, {:?} µs per service: shares {:.4?}, ratio {:.3}",
                    kind.name(),
                    per,
                    r.shares(),
                    ratio
                );
                assert!((ratio - 2.0).abs() < 0.1, "{kind:?} {per:?}: ratio {ratio}");
            }
        }
    }

    #[test]
    fn drr_serves_newly_active_station_first() {
        let mut s = Scheduler::new(SchedulerParams::mainline(SchedulerKind::Drr), 3);
        let (a, b, c) = (
            TxqKey::station(LinkId(0), Tid(0)),
            TxqKey::station(LinkId(1), Tid(0)),
            TxqKey::station(LinkId(2), Tid(0)),
        );
        let t0 = Nanos::ZERO;
        s.schedule_txq(t0, a, AC);
        s.schedule_txq(t0, b, AC);
        // Serve a few rounds so both have been charged.
        for _ in 0..6 {
            s.schedule_start(t0, AC, &|_| false);
            while let Some(t) = s.next_txq(t0, AC, &mut |_| true, &no_pending) {
                s.return_txq(t0, t, AC, true, &no_pending);
                s.register_airtime(t0, t, AC, 300, 0);
            }
        }
        s.schedule_txq(t0, c, AC);
        s.schedule_start(t0, AC, &|_| false);
        assert_eq!(s.next_txq(t0, AC, &mut |_| true, &no_pending), Some(c));

        // Without airtime accounting the newcomer waits at the tail.
        let mut rr = Scheduler::new(SchedulerParams::mainline(SchedulerKind::RoundRobin), 3);
        rr.schedule_txq(t0, a, AC);
        rr.schedule_txq(t0, b, AC);
        rr.schedule_txq(t0, c, AC);
        rr.schedule_start(t0, AC, &|_| false);
        assert_eq!(rr.next_txq(t0, AC, &mut |_| true, &no_pending), Some(a));
        // airtime_flags = 0 turns Drr into tail insertion too.
        let mut p = SchedulerParams::mainline(SchedulerKind::Drr);
        p.airtime_flags = 0;
        let mut d0 = Scheduler::new(p, 3);
        d0.schedule_txq(t0, a, AC);
        d0.schedule_txq(t0, c, AC);
        d0.schedule_start(t0, AC, &|_| false);
        assert_eq!(d0.next_txq(t0, AC, &mut |_| true, &no_pending), Some(a));
    }

    #[test]
    fn drr_round_ends_at_txq_already_served() {
        let mut s = Scheduler::new(SchedulerParams::mainline(SchedulerKind::Drr), 2);
        let a = TxqKey::station(LinkId(0), Tid(0));
        let t0 = Nanos::ZERO;
        s.schedule_txq(t0, a, AC);
        s.schedule_start(t0, AC, &|_| false);
        assert_eq!(s.next_txq(t0, AC, &mut |_| true, &no_pending), Some(a));
        s.return_txq(t0, a, AC, true, &no_pending);
        // Deficit still >= 0 but already served this round.
        assert_eq!(s.next_txq(t0, AC, &mut |_| true, &no_pending), None);
        s.schedule_start(t0, AC, &|_| false);
        assert_eq!(s.next_txq(t0, AC, &mut |_| true, &no_pending), Some(a));
    }

    #[test]
    fn drr_negative_deficit_gets_one_quantum_and_rotates() {
        for (params, q) in [
            (SchedulerParams::mainline(SchedulerKind::Drr), 256),
            (SchedulerParams::openwrt(SchedulerKind::Drr), 2048),
        ] {
            let mut s = Scheduler::new(params, 2);
            let (a, b) = (
                TxqKey::station(LinkId(0), Tid(0)),
                TxqKey::station(LinkId(1), Tid(0)),
            );
            let t0 = Nanos::ZERO;
            s.schedule_txq(t0, a, AC);
            s.schedule_txq(t0, b, AC); // head insertion: b, a
            s.register_airtime(t0, b, AC, 1000, 0);
            assert_eq!(s.deficit_us(LinkId(1), AC), 256 - 1000);
            s.schedule_start(t0, AC, &|_| false);
            assert_eq!(s.next_txq(t0, AC, &mut |_| true, &no_pending), Some(a));
            assert_eq!(s.deficit_us(LinkId(1), AC), 256 - 1000 + q);
        }
    }

    #[test]
    fn drr_vif_txq_is_never_deficit_limited() {
        let mut s = Scheduler::new(SchedulerParams::mainline(SchedulerKind::Drr), 1);
        let v = TxqKey::vif();
        let t0 = Nanos::ZERO;
        s.schedule_txq(t0, v, AC);
        s.register_airtime(t0, v, AC, 50_000, 0); // ignored: no station
        for _ in 0..5 {
            s.schedule_start(t0, AC, &|_| false);
            assert_eq!(s.next_txq(t0, AC, &mut |_| false, &no_pending), Some(v));
            s.return_txq(t0, v, AC, true, &no_pending);
        }
    }

    #[test]
    fn aql_ineligible_txqs_are_skipped_and_none_eligible_returns_none() {
        for kind in SchedulerKind::ALL {
            let mut s = Scheduler::new(SchedulerParams::mainline(kind), 2);
            let (a, b) = (
                TxqKey::station(LinkId(0), Tid(0)),
                TxqKey::station(LinkId(1), Tid(0)),
            );
            let t0 = Nanos::ZERO;
            s.schedule_txq(t0, a, AC);
            s.schedule_txq(t0, b, AC);
            s.schedule_start(t0, AC, &|_| false);
            let got = s.next_txq(t0, AC, &mut |t| t == b, &no_pending);
            assert_eq!(got, Some(b), "{kind:?}");
            s.return_txq(t0, b, AC, true, &no_pending);
            s.schedule_start(t0, AC, &|_| false);
            let mut asked = 0;
            let got = s.next_txq(
                t0,
                AC,
                &mut |_| {
                    asked += 1;
                    false
                },
                &no_pending,
            );
            assert_eq!(got, None, "{kind:?}");
            assert!(asked >= 2, "{kind:?}: every TXQ was asked");
            // Eligible again: served.
            s.schedule_start(t0, AC, &|_| false);
            assert!(s.next_txq(t0, AC, &mut |_| true, &no_pending).is_some());
        }
    }

    #[test]
    fn drr_aql_over_limit_round_returns_none() {
        let mut s = Scheduler::new(SchedulerParams::mainline(SchedulerKind::DrrAql), 2);
        let (a, b) = (
            TxqKey::station(LinkId(0), Tid(0)),
            TxqKey::station(LinkId(1), Tid(0)),
        );
        let t0 = Nanos::ZERO;
        s.schedule_txq(t0, a, AC);
        s.schedule_txq(t0, b, AC);
        assert_eq!(s.active_txq_count(AC), 2);
        // 2 TXQs: limit = 5000/2 + 12000 = 14500 µs; 15000 µs pending → over.
        let pending_ac = 15_000u32;
        let over = |n: usize| pending_ac >= ac_aql_limit_us(n, 5000, 12000);
        s.schedule_start(t0, AC, &over);
        assert_eq!(s.schedule_round(AC), 0);
        assert_eq!(s.next_txq(t0, AC, &mut |_| true, &no_pending), None);
        assert_eq!(s.next_txq(t0, AC, &mut |_| true, &no_pending), None);
        s.schedule_start(t0, AC, &|_| false);
        assert_ne!(s.schedule_round(AC), 0);
        assert!(s.next_txq(t0, AC, &mut |_| true, &no_pending).is_some());
        // Drr (5.x) has no per-AC check: the closure is ignored.
        let mut d = Scheduler::new(SchedulerParams::mainline(SchedulerKind::Drr), 1);
        d.schedule_txq(t0, a, AC);
        d.schedule_start(t0, AC, &|_| true);
        assert_eq!(d.next_txq(t0, AC, &mut |_| true, &no_pending), Some(a));
    }

    /// `may_transmit`'s per-AC AQL check as written lets a TXQ in debt through while the
    /// AC is over its limit and applies the deficit under it; flipped, the other way
    /// round. `refusals_to_come` agrees with `may_transmit` either way.
    #[test]
    fn may_transmit_aql_check_as_written_and_flipped() {
        let a = TxqKey::station(LinkId(0), Tid(0));
        let t0 = Nanos::ZERO;
        for check in [MayTransmitAqlCheck::AsWritten, MayTransmitAqlCheck::Flipped] {
            for over in [false, true] {
                let params = SchedulerParams {
                    may_transmit_aql_check: check,
                    ..SchedulerParams::mainline(SchedulerKind::DrrAql)
                };
                let mut s = Scheduler::new(params, 1);
                s.schedule_txq(t0, a, AC);
                s.register_airtime(t0, a, AC, 600, 0);
                let debt = s.deficit_us(LinkId(0), AC);
                assert!(debt < 0, "in debt: {debt}");
                let over_limit = |_: usize| over;
                let expect_allow = match check {
                    MayTransmitAqlCheck::AsWritten => over,
                    MayTransmitAqlCheck::Flipped => !over,
                };
                let refusals = s.refusals_to_come(a, AC, &over_limit);
                let allowed = s.may_transmit(t0, a, AC, &mut |_| true, &no_pending, &over_limit);
                assert_eq!(allowed, expect_allow, "{check:?}, over {over}");
                if allowed {
                    // Let through without the deficit walk: off the list, deficit unchanged.
                    assert!(!s.is_scheduled(a));
                    assert_eq!(s.deficit_us(LinkId(0), AC), debt);
                    assert_eq!(refusals, None, "the shortcut does not apply");
                } else {
                    // Refused by the deficit: topped up by its quantum, still listed.
                    assert!(s.is_scheduled(a));
                    assert_eq!(s.deficit_us(LinkId(0), AC), debt + 256);
                    let expect = (-debt as u32).div_ceil(256);
                    assert_eq!(refusals, Some(expect), "ceil(debt / quantum) refusals");
                }
            }
        }
    }

    #[test]
    fn per_ac_limit_formula_wraps_like_the_kernel() {
        assert_eq!(ac_aql_limit_us(1, 5000, 12000), 12000);
        assert_eq!(ac_aql_limit_us(3, 5000, 12000), 17000);
        // Empty list: (0 − 1) · 5000 wraps in u32, then / 2 + 12000.
        assert_eq!(
            ac_aql_limit_us(0, 5000, 12000),
            (u32::MAX.wrapping_mul(5000) / 2) + 12000
        );
        assert!(ac_aql_limit_us(0, 5000, 12000) > 1 << 31);
    }

    #[test]
    fn drr_aql_round_number_skips_zero() {
        let mut s = Scheduler::new(SchedulerParams::mainline(SchedulerKind::DrrAql), 1);
        for _ in 0..70_000 {
            s.schedule_start(Nanos::ZERO, AC, &|_| false);
            assert_ne!(s.schedule_round(AC), 0);
        }
    }

    #[test]
    fn drr_aql_effective_deficit_counts_pending_airtime() {
        let mut s = Scheduler::new(SchedulerParams::mainline(SchedulerKind::DrrAql), 2);
        let (a, b) = (
            TxqKey::station(LinkId(0), Tid(0)),
            TxqKey::station(LinkId(1), Tid(0)),
        );
        let t0 = Nanos::ZERO;
        s.schedule_txq(t0, a, AC);
        s.schedule_txq(t0, b, AC); // list: b, a
        s.schedule_start(t0, AC, &|_| false);
        // b has deficit 256 but 1000 µs pending in the hardware: effective −744.
        let pend = |x: LinkId| if x == LinkId(1) { 1000 } else { 0 };
        assert_eq!(s.next_txq(t0, AC, &mut |_| true, &pend), Some(a));
        assert_eq!(s.deficit_us(LinkId(1), AC), 256 + 256);
        // The same state under 5.x Drr ignores the pending airtime.
        let mut d = Scheduler::new(SchedulerParams::mainline(SchedulerKind::Drr), 2);
        d.schedule_txq(t0, a, AC);
        d.schedule_txq(t0, b, AC);
        d.schedule_start(t0, AC, &|_| false);
        assert_eq!(d.next_txq(t0, AC, &mut |_| true, &pend), Some(b));
    }

    /// 6.0's activity rules: an indebted station that empties within 100 ms of its last
    /// activity stays listed (its debt is still charged and paid off by later passes); a
    /// station inactive for more than 100 ms leaves the list and is no longer charged.
    #[test]
    fn drr_aql_debt_cannot_be_escaped_by_short_idle() {
        let (a, b) = (
            TxqKey::station(LinkId(0), Tid(0)),
            TxqKey::station(LinkId(1), Tid(0)),
        );
        let setup = || {
            let mut s = Scheduler::new(SchedulerParams::mainline(SchedulerKind::DrrAql), 2);
            let t0 = Nanos::ZERO;
            s.schedule_txq(t0, b, AC);
            s.schedule_txq(t0, a, AC); // list: a, b; a last_active = 0
            s.schedule_start(t0, AC, &|_| false);
            assert_eq!(s.next_txq(t0, AC, &mut |_| true, &no_pending), Some(a));
            s.return_txq(t0, a, AC, true, &no_pending); // back at head, last_active = 0
            s
        };
        let a_pending = |x: LinkId| if x == LinkId(0) { 3000 } else { 0 };

        // Short idle: a is popped at 50 ms, its last frames go to the hardware (3000 µs
        // pending → effective deficit < 0) and it is returned empty: it stays listed.
        let mut s = setup();
        let t = Nanos::from_ms(50);
        s.schedule_start(t, AC, &|_| false);
        assert_eq!(s.next_txq(t, AC, &mut |_| true, &no_pending), Some(a));
        s.return_txq(t, a, AC, false, &a_pending);
        assert!(s.is_scheduled(a));
        // Its airtime is charged on completion (active within 100 ms of t = 0).
        s.register_airtime(Nanos::from_ms(60), a, AC, 3000, 0);
        assert_eq!(s.deficit_us(LinkId(0), AC), 256 - 3000);
        // New data 20 ms later: a is already listed, so no head insertion; its debt
        // makes it yield to b.
        let t2 = Nanos::from_ms(80);
        s.schedule_txq(t2, a, AC);
        s.schedule_start(t2, AC, &|_| false);
        assert_eq!(s.next_txq(t2, AC, &mut |_| true, &no_pending), Some(b));

        // Long idle: the same at 150 ms (last activity at 0): a leaves the list and the
        // late airtime report is not charged.
        let mut s = setup();
        let t = Nanos::from_ms(150);
        s.schedule_start(t, AC, &|_| false);
        assert_eq!(s.next_txq(t, AC, &mut |_| true, &no_pending), Some(a));
        s.return_txq(t, a, AC, false, &a_pending);
        assert!(!s.is_scheduled(a));
        s.register_airtime(Nanos::from_ms(160), a, AC, 3000, 0);
        assert_eq!(s.deficit_us(LinkId(0), AC), 256);
        // Back with data: head insertion, served first.
        let t2 = Nanos::from_ms(180);
        s.schedule_txq(t2, a, AC);
        s.schedule_start(t2, AC, &|_| false);
        assert_eq!(s.next_txq(t2, AC, &mut |_| true, &no_pending), Some(a));
    }

    #[test]
    fn drr_aql_empty_txq_with_positive_deficit_leaves_the_list() {
        let mut s = Scheduler::new(SchedulerParams::mainline(SchedulerKind::DrrAql), 1);
        let a = TxqKey::station(LinkId(0), Tid(0));
        let t0 = Nanos::ZERO;
        s.schedule_txq(t0, a, AC);
        s.schedule_start(t0, AC, &|_| false);
        assert_eq!(s.next_txq(t0, AC, &mut |_| true, &no_pending), Some(a));
        s.return_txq(t0, a, AC, false, &no_pending);
        assert!(!s.is_scheduled(a));
    }

    #[test]
    fn virtual_time_charging_uses_kernel_reciprocals() {
        let mut s = Scheduler::new(SchedulerParams::mainline(SchedulerKind::VirtualTime), 2);
        let (a, b) = (
            TxqKey::station(LinkId(0), Tid(0)),
            TxqKey::station(LinkId(1), Tid(0)),
        );
        let t0 = Nanos::from_secs(1);
        s.schedule_txq(t0, a, AC);
        s.schedule_txq(t0, b, AC);
        assert_eq!(s.weight_sum(AC), 512);
        s.register_airtime(t0, a, AC, 1000, 0);
        // (1000·256 + 128) · 2048 >> 19 = 1000; global: (256000 + 256) · ⌊2^32/512⌋ >> 32.
        assert_eq!(s.virtual_time_us(Some(LinkId(0)), AC), 1000);
        assert_eq!(s.global_virtual_time_us(AC), 500);
        // RX counts too with the default flags; weight 512 halves the advance.
        s.set_weight(LinkId(1), 512);
        s.register_airtime(t0, b, AC, 600, 400);
        assert_eq!(s.virtual_time_us(Some(LinkId(1)), AC), 500);
        // The 32-bit per-station product wraps above ≈ 8 ms per report, as in 5.14–5.19.
        let before = s.virtual_time_us(Some(LinkId(0)), AC);
        s.register_airtime(t0, a, AC, 9000, 0);
        let exact = 9000u64;
        let got = s.virtual_time_us(Some(LinkId(0)), AC) - before;
        assert_eq!(
            got,
            (((9000u32 << 8) + 128).wrapping_mul(2048) >> 19) as u64
        );
        assert!(got < exact);
    }

    #[test]
    fn virtual_time_reactivation_after_long_idle_resets_to_global() {
        let (a, b) = (
            TxqKey::station(LinkId(0), Tid(0)),
            TxqKey::station(LinkId(1), Tid(0)),
        );
        let mk = || {
            let mut s = Scheduler::new(SchedulerParams::mainline(SchedulerKind::VirtualTime), 2);
            let t0 = Nanos::from_secs(1);
            s.schedule_txq(t0, a, AC);
            s.schedule_txq(t0, b, AC);
            // Get global v_t well past AIRTIME_MAX_BEHIND, both stations busy.
            let mut now = t0;
            for _ in 0..100 {
                for t in [a, b] {
                    now += Nanos::from_us(500);
                    s.register_airtime(now, t, AC, 500, 0);
                    s.schedule_txq(now, t, AC);
                }
            }
            // a goes idle.
            s.return_txq(now, a, AC, false, &no_pending);
            assert!(!s.is_scheduled(a));
            (s, now)
        };

        // Short idle (10 ms, b sending meanwhile): a keeps its own (lower) v_t.
        let (mut s, mut now) = mk();
        let va = s.virtual_time_us(Some(LinkId(0)), AC);
        for _ in 0..10 {
            now += Nanos::from_ms(1);
            s.register_airtime(now, b, AC, 1000, 0);
            s.schedule_txq(now, b, AC);
        }
        assert!(va < s.global_virtual_time_us(AC));
        s.schedule_txq(now, a, AC);
        assert_eq!(s.virtual_time_us(Some(LinkId(0)), AC), va);

        // Long idle (150 ms, b sending a little so a stays within 20 ms): reset to global.
        let (mut s, mut now) = mk();
        let va = s.virtual_time_us(Some(LinkId(0)), AC);
        for _ in 0..15 {
            now += Nanos::from_ms(10);
            s.register_airtime(now, b, AC, 500, 0);
            s.schedule_txq(now, b, AC);
        }
        let g = s.global_virtual_time_us(AC);
        assert!(va < g && g - va < AIRTIME_MAX_BEHIND_US);
        s.schedule_txq(now, a, AC);
        assert_eq!(s.virtual_time_us(Some(LinkId(0)), AC), g);
    }

    #[test]
    fn virtual_time_max_behind_catches_up_active_station() {
        let (a, b) = (
            TxqKey::station(LinkId(0), Tid(0)),
            TxqKey::station(LinkId(1), Tid(0)),
        );
        let mut s = Scheduler::new(SchedulerParams::mainline(SchedulerKind::VirtualTime), 2);
        let mut now = Nanos::from_secs(1);
        s.schedule_txq(now, a, AC);
        s.schedule_txq(now, b, AC);
        s.return_txq(now, a, AC, false, &no_pending);
        // b alone burns 60 ms of airtime within 30 ms of wall time (a stays "active").
        for _ in 0..30 {
            now += Nanos::from_ms(1);
            s.register_airtime(now, b, AC, 2000, 0);
        }
        let g = s.global_virtual_time_us(AC);
        assert!(g > AIRTIME_MAX_BEHIND_US + s.virtual_time_us(Some(LinkId(0)), AC));
        s.schedule_txq(now, a, AC);
        assert_eq!(s.virtual_time_us(Some(LinkId(0)), AC), g);
    }

    #[test]
    fn virtual_time_catches_up_when_none_eligible() {
        let mut s = Scheduler::new(SchedulerParams::mainline(SchedulerKind::VirtualTime), 2);
        let (a, b) = (
            TxqKey::station(LinkId(0), Tid(0)),
            TxqKey::station(LinkId(1), Tid(0)),
        );
        let t0 = Nanos::from_secs(1);
        s.schedule_txq(t0, a, AC);
        s.schedule_txq(t0, b, AC);
        // b empties but stays active (weight sum 512): a's charges advance global by half.
        s.return_txq(t0, b, AC, false, &no_pending);
        s.register_airtime(t0, a, AC, 1000, 0);
        assert_eq!(s.virtual_time_us(Some(LinkId(0)), AC), 1000);
        assert_eq!(s.global_virtual_time_us(AC), 500);
        // The first (only) node is ahead: global v_t jumps to it and it is served.
        s.schedule_start(t0, AC, &|_| false);
        assert_eq!(s.next_txq(t0, AC, &mut |_| true, &no_pending), Some(a));
        assert_eq!(s.global_virtual_time_us(AC), 1000);
    }

    #[test]
    fn virtual_time_round_ends_at_ineligible_second_node() {
        let mut s = Scheduler::new(SchedulerParams::mainline(SchedulerKind::VirtualTime), 2);
        let (a, b) = (
            TxqKey::station(LinkId(0), Tid(0)),
            TxqKey::station(LinkId(1), Tid(0)),
        );
        let t0 = Nanos::from_secs(1);
        s.schedule_txq(t0, a, AC);
        s.schedule_txq(t0, b, AC);
        s.register_airtime(t0, b, AC, 4000, 0); // b: 4000, global: 2000
        s.schedule_start(t0, AC, &|_| false);
        assert_eq!(s.next_txq(t0, AC, &mut |_| true, &no_pending), Some(a));
        // b is ahead of global and not first: the walk ends.
        assert_eq!(s.next_txq(t0, AC, &mut |_| true, &no_pending), None);
        // may_transmit agrees.
        assert!(s.may_transmit(t0, a, AC, &mut |_| true, &no_pending, &|_| false));
        assert!(!s.may_transmit(t0, b, AC, &mut |_| true, &no_pending, &|_| false));
    }

    /// The shortcut for a firmware that keeps asking: as many refusals as asking one
    /// at a time gives, the same deficit after them, then an allowed TXQ; and no
    /// shortcut when another TXQ shares the list.
    /// `max_asks` calls of `may_transmit` for `txq`, stopping at the first that allows.
    fn ask_one_at_a_time(
        s: &mut Scheduler,
        txq: TxqKey,
        max_asks: u32,
        over: bool,
    ) -> MayTransmitAnswers {
        let mut refusals = 0;
        while refusals < max_asks {
            if s.may_transmit(Nanos::ZERO, txq, AC, &mut |_| true, &no_pending, &|_| over) {
                return MayTransmitAnswers {
                    refusals,
                    allowed: true,
                };
            }
            refusals += 1;
        }
        MayTransmitAnswers {
            refusals,
            allowed: false,
        }
    }

    /// `may_transmit_asking` (which takes the refusals of a TXQ alone on a DRR list at
    /// once) answers and leaves the scheduler exactly as asking `may_transmit` one
    /// call at a time does: for every kind, debts of 0 to 7777 µs, budgets that end
    /// before, at and after the allowing ask, alone on the list or with a second TXQ,
    /// and (DrrAql) with the AC over its limit.
    #[test]
    fn may_transmit_asking_matches_asking_one_at_a_time() {
        let (a, b) = (
            TxqKey::station(LinkId(0), Tid(0)),
            TxqKey::station(LinkId(1), Tid(0)),
        );
        let t0 = Nanos::ZERO;
        let mut batched = 0;
        for kind in SchedulerKind::ALL {
            for charge_us in [0u32, 1, 255, 256, 257, 1000, 7777] {
                for with_b in [false, true] {
                    for over in [false, true] {
                        let mut s = Scheduler::new(SchedulerParams::mainline(kind), 2);
                        s.schedule_txq(t0, a, AC);
                        if with_b {
                            s.schedule_txq(t0, b, AC);
                        }
                        s.register_airtime(t0, a, AC, charge_us, 0);
                        let needed = ask_one_at_a_time(&mut s.clone(), a, 1000, over).refusals;
                        batched += s.refusals_to_come(a, AC, &|_| over).is_some() as u32;
                        for max_asks in [0, 1, needed, needed + 1, 256] {
                            let mut one = s.clone();
                            let want = ask_one_at_a_time(&mut one, a, max_asks, over);
                            let mut all = s.clone();
                            let got = all.may_transmit_asking(
                                t0,
                                a,
                                AC,
                                max_asks,
                                &mut |_| true,
                                &no_pending,
                                &|_| over,
                            );
                            let case = format!(
                                "{kind:?} {charge_us} µs, b {with_b}, over {over}, {max_asks} asks"
                            );
                            assert_eq!(got, want, "{case}");
                            assert_eq!(format!("{all:?}"), format!("{one:?}"), "{case}");
                        }
                    }
                }
            }
        }
        // The batched path was taken (Drr, DrrAql under the limit, `a` alone).
        assert_eq!(batched, 2 * 7 + 7);
    }

    #[test]
    fn drr_may_transmit_walks_and_tops_up() {
        let mut s = Scheduler::new(SchedulerParams::mainline(SchedulerKind::Drr), 2);
        let (a, b) = (
            TxqKey::station(LinkId(0), Tid(0)),
            TxqKey::station(LinkId(1), Tid(0)),
        );
        let t0 = Nanos::ZERO;
        s.schedule_txq(t0, a, AC);
        s.schedule_txq(t0, b, AC); // b, a
        s.register_airtime(t0, b, AC, 1000, 0); // b: −744
        s.register_airtime(t0, a, AC, 600, 0); // a: −344
                                               // a: b is topped up and rotated; a is negative → refused, topped up, rotated.
        assert!(!s.may_transmit(t0, a, AC, &mut |_| true, &no_pending, &|_| false));
        assert_eq!(s.deficit_us(LinkId(1), AC), -744 + 256);
        assert_eq!(s.deficit_us(LinkId(0), AC), -344 + 256);
        assert!(!s.may_transmit(t0, a, AC, &mut |_| true, &no_pending, &|_| false));
        assert_eq!(s.deficit_us(LinkId(0), AC), -344 + 512);
        assert!(s.may_transmit(t0, a, AC, &mut |_| true, &no_pending, &|_| false));
        assert!(!s.is_scheduled(a));
    }

    #[test]
    fn ath9k_new_list_quantum_and_stay_at_head() {
        let mut s = Scheduler::new(SchedulerParams::mainline(SchedulerKind::Ath9kDrr), 3);
        let (a, b, c) = (
            TxqKey::station(LinkId(0), Tid(0)),
            TxqKey::station(LinkId(1), Tid(0)),
            TxqKey::station(LinkId(2), Tid(0)),
        );
        let t0 = Nanos::ZERO;
        s.schedule_txq(t0, a, AC);
        s.schedule_txq(t0, b, AC);
        assert_eq!(s.deficit_us(LinkId(0), AC), 300);
        // The head stays at the head while its deficit is positive.
        for _ in 0..2 {
            assert_eq!(s.next_txq(t0, AC, &mut |_| true, &no_pending), Some(a));
            s.return_txq(t0, a, AC, true, &no_pending);
            s.register_airtime(t0, a, AC, 100, 0);
        }
        s.register_airtime(t0, a, AC, 300, 0); // a: −200
                                               // a gets +300 and goes to the old list; b (new list) is next.
        assert_eq!(s.next_txq(t0, AC, &mut |_| true, &no_pending), Some(b));
        assert_eq!(s.deficit_us(LinkId(0), AC), 100);
        s.register_airtime(t0, b, AC, 500, 300); // TX and RX charged: b: −500
                                                 // A newly backlogged station with a positive deficit joins the new list and goes
                                                 // before the old list.
        s.schedule_txq(t0, c, AC);
        assert_eq!(s.next_txq(t0, AC, &mut |_| true, &no_pending), Some(c));
        s.return_txq(t0, c, AC, false, &no_pending);
        // c, empty at the head of the new list, moves to the old tail (the old list is
        // not empty); then a (deficit 100) is served from the old list.
        assert_eq!(s.next_txq(t0, AC, &mut |_| true, &no_pending), Some(a));
        assert!(s.is_scheduled(c));
        s.return_txq(t0, a, AC, false, &no_pending);
        // a empty at the old head: dropped; b (−200 → 100) rotates; c empty: dropped.
        assert_eq!(s.next_txq(t0, AC, &mut |_| true, &no_pending), Some(b));
        assert!(!s.is_scheduled(a));
        assert!(!s.is_scheduled(c));
        assert_eq!(s.deficit_us(LinkId(1), AC), 100);
    }

    #[test]
    fn ath9k_charge_relists_an_empty_indebted_txq() {
        let mut s = Scheduler::new(SchedulerParams::mainline(SchedulerKind::Ath9kDrr), 2);
        let (a, b) = (
            TxqKey::station(LinkId(0), Tid(0)),
            TxqKey::station(LinkId(1), Tid(0)),
        );
        let t0 = Nanos::ZERO;
        s.schedule_txq(t0, a, AC);
        s.schedule_txq(t0, b, AC);
        assert_eq!(s.next_txq(t0, AC, &mut |_| true, &no_pending), Some(a));
        s.return_txq(t0, a, AC, false, &no_pending);
        // a empties and is dropped when it reaches the head again.
        assert_eq!(s.next_txq(t0, AC, &mut |_| true, &no_pending), Some(b));
        assert!(!s.is_scheduled(a));
        // A late completion puts a in debt: it is re-listed (old list) although empty...
        s.register_airtime(t0, a, AC, 1000, 0);
        assert!(s.is_scheduled(a));
        // ...and is topped up as it reaches the head, until it leaves with deficit > 0.
        for _ in 0..10 {
            assert_eq!(s.next_txq(t0, AC, &mut |_| true, &no_pending), Some(b));
            s.return_txq(t0, b, AC, true, &no_pending);
            s.register_airtime(t0, b, AC, 300, 0);
        }
        assert!(!s.is_scheduled(a));
        assert!(s.deficit_us(LinkId(0), AC) > 0);
    }

    #[test]
    fn ath9k_without_airtime_flags_is_round_robin() {
        let mut p = SchedulerParams::mainline(SchedulerKind::Ath9kDrr);
        p.airtime_flags = 0;
        let r = run(p, &[200, 2000], &[], Nanos::from_secs(5));
        assert!(
            r.services[0].abs_diff(r.services[1]) <= 2,
            "{:?}",
            r.services
        );
    }

    #[test]
    fn unschedule_and_reschedule() {
        for kind in SchedulerKind::ALL {
            let mut s = Scheduler::new(SchedulerParams::mainline(kind), 1);
            let a = TxqKey::station(LinkId(0), Tid(0));
            let t0 = Nanos::from_secs(1);
            s.schedule_txq(t0, a, AC);
            assert!(s.is_scheduled(a), "{kind:?}");
            s.unschedule_txq(t0, a, AC);
            assert!(!s.is_scheduled(a), "{kind:?}");
            s.schedule_start(t0, AC, &|_| false);
            assert_eq!(s.next_txq(t0, AC, &mut |_| true, &no_pending), None);
            s.schedule_txq(t0, a, AC);
            s.schedule_start(t0, AC, &|_| false);
            assert_eq!(
                s.next_txq(t0, AC, &mut |_| true, &no_pending),
                Some(a),
                "{kind:?}"
            );
        }
    }

    #[test]
    fn runs_are_deterministic() {
        for kind in SchedulerKind::ALL {
            let p = SchedulerParams::mainline(kind);
            let r1 = run(p, &[200, 700, 2000], &[256, 300, 512], Nanos::from_secs(2));
            let r2 = run(p, &[200, 700, 2000], &[256, 300, 512], Nanos::from_secs(2));
            assert_eq!(r1.airtime, r2.airtime);
            assert_eq!(r1.services, r2.services);
        }
    }

    #[test]
    fn params_serde_names() {
        assert_eq!(SchedulerKind::DrrAql.name(), "drr_aql");
        let p = SchedulerParams::default();
        assert_eq!(p.kind, SchedulerKind::DrrAql);
        assert_eq!(p.airtime_flags, 3);
        assert_eq!(p.quantum_shift, 0);
    }
}
