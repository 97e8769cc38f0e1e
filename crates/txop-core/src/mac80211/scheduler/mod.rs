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
//! One interface, one file per generation ([`SchedulerKind`], timeline §13):
//! - `drr.rs`: mac80211's active list with schedule rounds, the kernel's code from 5.0
//!   on: [`SchedulerKind::Drr`] (5.0–5.13, §5.2), [`SchedulerKind::DrrAql`] (6.0+,
//!   §5.4) and, the same list without deficits, [`SchedulerKind::RoundRobin`]
//!   (4.9–4.10, or any era with `airtime_flags = 0`);
//! - `virtual_time.rs`: [`SchedulerKind::VirtualTime`] (5.14–5.19, §5.3);
//! - `ath9k_drr.rs`: [`SchedulerKind::Ath9kDrr`] (4.11–4.20, §5.5), ath9k's in-driver
//!   scheduler.
//! - `external.rs`: external code standing for [`SchedulerKind::DrrAql`] (the kernel's
//!   own 6.12 functions, built by the front end; [`Scheduler::with_code`]).
//!
//! This file holds what they share. [`Scheduler`]'s methods are the kernel's API: each
//! records the time, creates the TXQ's state on first use and keeps the airtime
//! statistics, then hands over to the generation. The bookkeeping every generation uses
//! is here too: per TXQ, its AC, whether it is scheduled and whether it has data; per
//! station and AC, the airtime weight, the DRR deficit and the reported airtime. Each
//! generation keeps the rest (lists, rounds, trees, virtual times) in its own type,
//! which implements the `Generation` trait; [`Scheduler`] holds it in an enum and
//! dispatches with a `match` (the transmit path calls it per packet, so no indirect
//! call).
//!
//! Adding a generation: a [`SchedulerKind`] variant, a file whose type implements
//! `Generation`, and its arm in `Generations`, in `dispatch!` and in [`Scheduler::new`].
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

mod ath9k_drr;
mod drr;
mod external;
mod virtual_time;

use crate::mac::edca::Ac;
use crate::mac80211::txq::{LinkId, Tid, TxqKey};
use crate::Nanos;
use ath9k_drr::Ath9kDrr;
use drr::ActiveList;
use serde::{Deserialize, Serialize};
use virtual_time::VirtualTime;

pub use ath9k_drr::ATH_AIRTIME_QUANTUM_US;
pub use external::{external_supports, ExternalScheduler, ExternalSchedulerCode, SchedulerCode};
pub use virtual_time::AIRTIME_MAX_BEHIND_US;

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
/// OpenWrt's `AIRTIME_QUANTUM_SHIFT` (reference §12 item 1): quantum = weight << 3.
pub const OPENWRT_AIRTIME_QUANTUM_SHIFT: u8 = 3;

/// Which scheduler generation runs (reference §5, timeline §13).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SchedulerKind {
    /// No airtime fairness: TXQs are served in turn per AC, tail insertion, no deficits
    /// (4.9–4.10, and any later era with `airtime_flags = 0`). Uses the generation-1
    /// rounds and AQL rotation (reference §5.2 "otherwise → tail (plain round robin)").
    RoundRobin,
    /// ath9k's in-driver DRR of 4.11–4.20 (reference §5.5): per-AC new/old lists,
    /// per-station per-AC deficit, quantum 300 µs \[U\], TX and RX airtime charged.
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

/// `struct airtime_info`, the part every generation uses: one station's (or the vif's)
/// airtime state on one AC. What only one generation needs (6.0's `last_active`, 5.14's
/// virtual time) lives with that generation.
#[derive(Clone, Debug)]
struct AirInfo {
    /// DRR deficit in µs (generations 1 and 3, ath9k; the others leave it at its
    /// initial value).
    deficit: i64,
    /// Airtime weight (5.14 keeps it per AC; the other kinds use the same value).
    weight: u16,
    /// Reported transmit airtime, for statistics.
    tx_airtime_us: u64,
    /// Reported receive airtime, for statistics.
    rx_airtime_us: u64,
}

impl AirInfo {
    fn new(deficit: i64) -> AirInfo {
        AirInfo {
            deficit,
            weight: DEFAULT_AIRTIME_WEIGHT,
            tx_airtime_us: 0,
            rx_airtime_us: 0,
        }
    }
}

/// Per-TXQ scheduler state that every generation keeps.
#[derive(Clone, Debug)]
struct TxqState {
    /// The AC given when the TXQ was first seen.
    ac: Ac,
    /// Scheduled: on the AC's active list (list kinds), on ath9k's new or old list, or
    /// in the virtual-time tree.
    listed: bool,
    /// Whether the TXQ has data, as last told (used by ath9k's empty-TID rule).
    has_data: bool,
}

/// A per-TXQ table (a value exists from the first call that names the TXQ), by
/// [`TxqKey::index`]. Looked up on every enqueue, dequeue and completion, so it is a
/// table rather than an ordered map; nothing iterates it in key order.
#[derive(Clone, Debug)]
struct TxqTable<T> {
    /// Per TXQ (grown to the largest used).
    slots: Vec<Option<T>>,
}

impl<T> Default for TxqTable<T> {
    fn default() -> TxqTable<T> {
        TxqTable { slots: Vec::new() }
    }
}

// perf: the small accessors here and on `Book` are `#[inline]`: the generations call
// them from their own files, on every enqueue, dequeue and completion.
impl<T> TxqTable<T> {
    #[inline]
    fn get(&self, txq: &TxqKey) -> Option<&T> {
        self.slots.get(txq.index())?.as_ref()
    }

    #[inline]
    fn get_mut(&mut self, txq: &TxqKey) -> Option<&mut T> {
        self.slots.get_mut(txq.index())?.as_mut()
    }

    /// The value of `txq`, created with `new()` if it has none.
    fn get_or_insert_with(&mut self, txq: TxqKey, new: impl FnOnce() -> T) -> &mut T {
        let slot = txq.index();
        if self.slots.len() <= slot {
            self.slots.resize_with(slot + 1, || None);
        }
        self.slots[slot].get_or_insert_with(new)
    }

    /// The values of station `sta`'s TXQs.
    fn station(&self, sta: LinkId) -> impl Iterator<Item = &T> {
        Tid::all().filter_map(move |tid| self.get(&TxqKey::station(sta, tid)))
    }
}

impl<T> std::ops::Index<&TxqKey> for TxqTable<T> {
    type Output = T;

    #[inline]
    fn index(&self, txq: &TxqKey) -> &T {
        self.get(txq).expect("TXQ state exists")
    }
}

/// The bookkeeping every generation shares: the configuration, the airtime state of
/// each station and of the vif per AC, the per-TXQ state and the latest time seen.
#[derive(Clone, Debug)]
struct Book {
    params: SchedulerParams,
    /// Per station, per AC.
    stas: Vec<[AirInfo; 4]>,
    /// The vif's airtime state per AC (5.14 charges multicast airtime to it).
    vif: [AirInfo; 4],
    txqs: TxqTable<TxqState>,
    /// The latest time passed to any method (used by [`Scheduler::set_weight`]).
    last_now: Nanos,
}

impl Book {
    /// Deficits start at the weight (`sta_info_alloc`, §5.2) or, for ath9k, at the
    /// 300 µs quantum (§5.5).
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
            has_data: false,
        });
    }

    #[inline]
    fn state_mut(&mut self, txq: TxqKey) -> &mut TxqState {
        self.txqs.get_mut(&txq).expect("TXQ state exists")
    }

    #[inline]
    fn air(&self, sta: Option<LinkId>, ac: Ac) -> &AirInfo {
        match sta {
            Some(s) => &self.stas[s.index()][ac.index()],
            None => &self.vif[ac.index()],
        }
    }

    #[inline]
    fn air_mut(&mut self, sta: Option<LinkId>, ac: Ac) -> &mut AirInfo {
        match sta {
            Some(s) => &mut self.stas[s.index()][ac.index()],
            None => &mut self.vif[ac.index()],
        }
    }

    /// DRR quantum of a station: `weight << quantum_shift` (§5.2, §5.4, §12 item 1).
    #[inline]
    fn quantum(&self, sta: LinkId, ac: Ac) -> i64 {
        (self.stas[sta.index()][ac.index()].weight as i64) << self.params.quantum_shift
    }

    /// Whether `airtime_flags` charges any airtime (TX or RX, §5.1).
    #[inline]
    fn charges_airtime(&self) -> bool {
        self.params.airtime_flags & (AIRTIME_USE_TX | AIRTIME_USE_RX) != 0
    }

    /// The airtime `airtime_flags` charges of a report of `tx_us` and `rx_us` (§5.1),
    /// summed in wrapping `u32` as in the kernel.
    #[inline]
    fn charged_us(&self, tx_us: u32, rx_us: u32) -> u32 {
        let flags = self.params.airtime_flags;
        let mut charged: u32 = 0;
        if flags & AIRTIME_USE_TX != 0 {
            charged = charged.wrapping_add(tx_us);
        }
        if flags & AIRTIME_USE_RX != 0 {
            charged = charged.wrapping_add(rx_us);
        }
        charged
    }
}

/// What a scheduler generation implements: the kernel's API (§5.1) over its own state
/// and the shared [`Book`]. [`Scheduler`] records the time and creates the TXQ's state
/// (`Book::touch`) before each call, so the TXQ's state exists in every method that
/// takes a TXQ.
trait Generation {
    /// `ieee80211_schedule_txq` of a TXQ that now has data (its `has_data` already
    /// set); `listed` is whether it is scheduled already.
    fn schedule_txq(&mut self, book: &mut Book, now: Nanos, txq: TxqKey, ac: Ac, listed: bool);

    /// `ieee80211_txq_schedule_start` (see [`Scheduler::schedule_start`]).
    fn schedule_start(&mut self, book: &Book, ac: Ac, ac_over_limit: &dyn Fn(usize) -> bool);

    /// `ieee80211_next_txq` (see [`Scheduler::next_txq`]).
    fn next_txq(
        &mut self,
        book: &mut Book,
        ac: Ac,
        aql_eligible: &mut dyn FnMut(TxqKey) -> bool,
        aql_pending_us: &dyn Fn(LinkId) -> u32,
    ) -> Option<TxqKey>;

    /// `ieee80211_return_txq` of a TXQ whose `has_data` is already set (see
    /// [`Scheduler::return_txq`]).
    fn return_txq(
        &mut self,
        book: &mut Book,
        now: Nanos,
        txq: TxqKey,
        ac: Ac,
        has_data: bool,
        aql_pending_us: &dyn Fn(LinkId) -> u32,
    );

    /// Take `txq` out of scheduling (see [`Scheduler::unschedule_txq`]).
    fn unschedule_txq(&mut self, book: &mut Book, now: Nanos, txq: TxqKey, ac: Ac);

    /// `ieee80211_txq_may_transmit` (see [`Scheduler::may_transmit`]).
    fn may_transmit(
        &mut self,
        book: &mut Book,
        txq: TxqKey,
        ac: Ac,
        aql_eligible: &mut dyn FnMut(TxqKey) -> bool,
        aql_pending_us: &dyn Fn(LinkId) -> u32,
        ac_over_limit: &dyn Fn(usize) -> bool,
    ) -> bool;

    /// The answers to `max_asks` calls of `may_transmit` for `txq` in a row, taken at
    /// once, leaving the state as those calls would; `None` where the generation has no
    /// such shortcut (then [`Scheduler::may_transmit_asking`] asks one at a time).
    fn answer_asks_at_once(
        &mut self,
        _book: &mut Book,
        _now: Nanos,
        _txq: TxqKey,
        _ac: Ac,
        _max_asks: u32,
        _ac_over_limit: &dyn Fn(usize) -> bool,
    ) -> Option<MayTransmitAnswers> {
        None
    }

    /// Charge `charged_us` of airtime to `txq`'s station (or the vif) on `ac`
    /// (`ieee80211_sta_register_airtime`; the statistics are already counted).
    fn charge(&mut self, book: &mut Book, now: Nanos, txq: TxqKey, ac: Ac, charged_us: u32);

    /// Station `sta`'s weight on `ac` has just changed (`sta_apply_airtime_params`).
    fn weight_changed(&mut self, _book: &mut Book, _sta: LinkId, _ac: Ac) {}

    /// How many TXQs are scheduled on `ac`.
    fn active_txq_count(&self, ac: Ac) -> usize;
}

/// The state of the generation that runs, one variant per file.
// One per radio, made once and never moved on the transmit path: the variants stay
// inline rather than boxed, so a call reaches its generation's state directly.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
enum Generations {
    /// [`SchedulerKind::RoundRobin`], [`SchedulerKind::Drr`], [`SchedulerKind::DrrAql`].
    ActiveList(ActiveList),
    /// [`SchedulerKind::Ath9kDrr`].
    Ath9kDrr(Ath9kDrr),
    /// [`SchedulerKind::VirtualTime`].
    VirtualTime(VirtualTime),
    /// [`SchedulerKind::DrrAql`] run by external code ([`Scheduler::with_code`]).
    External(external::External),
}

/// `dispatch!(generations, g => g.method(…))`: the call on whichever generation runs.
// perf: a `match`, so that each arm's call can be inlined (the transmit path calls the
// scheduler per packet); a `dyn Generation` would be an indirect call each time.
macro_rules! dispatch {
    ($generations:expr, $g:ident => $call:expr) => {
        match $generations {
            Generations::ActiveList($g) => $call,
            Generations::Ath9kDrr($g) => $call,
            Generations::VirtualTime($g) => $call,
            Generations::External($g) => $call,
        }
    };
}

/// The TXQ scheduler of one radio: per-AC state for the configured generation
/// (reference §5). See the module documentation for the driver loop.
#[derive(Clone, Debug)]
pub struct Scheduler {
    book: Book,
    generation: Generations,
}

impl Scheduler {
    /// Whether the driver's scheduling pass ends at the first TXQ it hands out that
    /// the driver cannot serve (nothing could be built from it: its block-ack window is
    /// closed, its rate chain refuses, the hardware queue is full). So it is in ath9k's
    /// own scheduler of 4.11–4.20 (§5.5): in `ath_txq_schedule`, an
    /// `ath_tx_sched_aggr` that sends nothing jumps to the end (`goto out`) and the TID
    /// stays at the head of its list until the next pass (the next completion). The
    /// mac80211 schedulers hand each TXQ out once per round (§5.1), and the driver's
    /// loop (`while ((txq = ieee80211_next_txq(…)))`) goes on to the next one.
    pub fn pass_ends_when_unserved(&self) -> bool {
        self.book.params.kind == SchedulerKind::Ath9kDrr
    }

    /// A scheduler for `n_stations` stations (indices `0..n_stations`; larger indices are
    /// added on first use). Weights start at 256 (§5.1); deficits start at the weight
    /// (`sta_info_alloc`, §5.2) or, for ath9k, at the 300 µs quantum (§5.5).
    pub fn new(params: SchedulerParams, n_stations: usize) -> Scheduler {
        let d = Book::initial_deficit(params.kind);
        let generation = match params.kind {
            SchedulerKind::RoundRobin | SchedulerKind::Drr | SchedulerKind::DrrAql => {
                Generations::ActiveList(ActiveList::default())
            }
            SchedulerKind::Ath9kDrr => Generations::Ath9kDrr(Ath9kDrr::default()),
            SchedulerKind::VirtualTime => Generations::VirtualTime(VirtualTime::default()),
        };
        Scheduler {
            book: Book {
                params,
                stas: (0..n_stations)
                    .map(|_| std::array::from_fn(|_| AirInfo::new(d)))
                    .collect(),
                vif: std::array::from_fn(|_| AirInfo::new(d)),
                txqs: TxqTable::default(),
                last_now: Nanos::ZERO,
            },
            generation,
        }
    }

    /// [`Scheduler::new`] with external code in place of the generation's Rust (the
    /// kernel's 6.12 scheduler, `external.rs`); `params` must be what
    /// [`external_supports`] accepts.
    pub fn with_code(
        params: SchedulerParams,
        n_stations: usize,
        code: ExternalSchedulerCode,
    ) -> Scheduler {
        debug_assert_eq!(external_supports(&params), Ok(()));
        let mut s = Scheduler::new(params, n_stations);
        s.generation = Generations::External(external::External::new(code, &params, n_stations));
        s
    }

    /// The configuration this scheduler runs with (§5.1, §12 item 1).
    pub fn params(&self) -> SchedulerParams {
        self.book.params
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
        self.book.ensure_sta(sta);
        for ac in Ac::ALL {
            let air = &mut self.book.stas[sta.index()][ac.index()];
            if air.weight == weight {
                continue;
            }
            air.weight = weight;
            dispatch!(&mut self.generation, g => g.weight_changed(&mut self.book, sta, ac));
        }
    }

    /// A station's airtime weight (§5.1).
    pub fn weight(&self, sta: LinkId) -> u16 {
        self.book
            .stas
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
        if self.book.txqs.get(&txq).is_none() {
            return self.schedule_new_txq(now, txq, ac);
        }
        let st = self.book.touch(now, txq, ac);
        st.has_data = true;
        let listed = st.listed;
        // perf: a TXQ that gets a packet is usually known and listed already (every
        // enqueue comes here); creating its state and listing it are out of line, so
        // that the common call is small and makes no call but in tail position.
        dispatch!(&mut self.generation, g => g.schedule_txq(&mut self.book, now, txq, ac, listed))
    }

    /// [`Scheduler::schedule_txq`] of a TXQ named for the first time: its state is
    /// created, then it is scheduled.
    #[cold]
    #[inline(never)]
    fn schedule_new_txq(&mut self, now: Nanos, txq: TxqKey, ac: Ac) {
        self.book.touch(now, txq, ac);
        self.schedule_txq(now, txq, ac);
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
        self.book.last_now = self.book.last_now.max(now);
        dispatch!(&mut self.generation, g => g.schedule_start(&self.book, ac, ac_over_limit))
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
        self.book.last_now = self.book.last_now.max(now);
        dispatch!(
            &mut self.generation,
            g => g.next_txq(&mut self.book, ac, aql_eligible, aql_pending_us)
        )
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
        self.book.touch(now, txq, ac).has_data = has_data;
        dispatch!(
            &mut self.generation,
            g => g.return_txq(&mut self.book, now, txq, ac, has_data, aql_pending_us)
        )
    }

    /// Take a TXQ out of scheduling, e.g. when its station starts power saving (§9.1)
    /// (`sta_ps_start` → `list_del_init` in generations 1/3, `ieee80211_unschedule_txq`
    /// in 5.14, which also marks the station active; ath9k removes the TID from its lists).
    /// It comes back with the next [`Scheduler::schedule_txq`].
    pub fn unschedule_txq(&mut self, now: Nanos, txq: TxqKey, ac: Ac) {
        self.book.touch(now, txq, ac);
        dispatch!(&mut self.generation, g => g.unschedule_txq(&mut self.book, now, txq, ac))
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
    ///   quantum shift is applied here too \[U\];
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
        self.book.touch(now, txq, ac);
        dispatch!(
            &mut self.generation,
            g => g.may_transmit(
                &mut self.book,
                txq,
                ac,
                aql_eligible,
                aql_pending_us,
                ac_over_limit
            )
        )
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
            // perf: a generation may answer the remaining asks at once (DRR: a station
            // TXQ alone on its list, refused a few times per exchange when saturating).
            let asks_left = max_asks - refusals;
            if let Some(rest) = dispatch!(
                &mut self.generation,
                g => g.answer_asks_at_once(&mut self.book, now, txq, ac, asks_left, ac_over_limit)
            ) {
                return MayTransmitAnswers {
                    refusals: refusals + rest.refusals,
                    allowed: rest.allowed,
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
        self.book.touch(now, txq, ac);
        let charged_us = self.book.charged_us(tx_us, rx_us);
        let air = self.book.air_mut(txq.sta, ac);
        air.tx_airtime_us += tx_us as u64;
        air.rx_airtime_us += rx_us as u64;
        dispatch!(&mut self.generation, g => g.charge(&mut self.book, now, txq, ac, charged_us))
    }

    /// A station's DRR deficit on `ac`, in µs (generations 1 and 3, ath9k; §5.2, §5.4,
    /// §5.5). Other kinds leave it at its initial value.
    pub fn deficit_us(&self, sta: LinkId, ac: Ac) -> i64 {
        self.book
            .stas
            .get(sta.index())
            .map_or(Book::initial_deficit(self.book.params.kind), |s| {
                s[ac.index()].deficit
            })
    }

    /// The virtual time of a station (`Some(sta)`) or of the vif (`None`) on `ac`, in
    /// virtual µs (5.14, §5.3); 0 in the other kinds.
    pub fn virtual_time_us(&self, sta: Option<LinkId>, ac: Ac) -> u64 {
        match &self.generation {
            Generations::VirtualTime(vt) => vt.virtual_time_us(sta, ac),
            _ => 0,
        }
    }

    /// The global virtual time of `ac` (5.14, §5.3); 0 in the other kinds.
    pub fn global_virtual_time_us(&self, ac: Ac) -> u64 {
        match &self.generation {
            Generations::VirtualTime(vt) => vt.global_virtual_time_us(ac),
            _ => 0,
        }
    }

    /// The weight sum of active stations on `ac`, as last recomputed (5.14, §5.3); 0 in
    /// the other kinds.
    pub fn weight_sum(&self, ac: Ac) -> u64 {
        match &self.generation {
            Generations::VirtualTime(vt) => vt.weight_sum(ac),
            _ => 0,
        }
    }

    /// The current `schedule_round[ac]` (generations 1/3; 0 = blocked in DrrAql, §5.4);
    /// 0 in the kinds without rounds.
    pub fn schedule_round(&self, ac: Ac) -> u16 {
        match &self.generation {
            Generations::ActiveList(lists) => lists.schedule_round(ac),
            _ => 0,
        }
    }

    /// Whether `txq` is currently scheduled: on the active list (list kinds, §5.2, §5.4),
    /// on a new/old list (ath9k, §5.5) or in the tree (VirtualTime, §5.3).
    pub fn is_scheduled(&self, txq: TxqKey) -> bool {
        self.book.txqs.get(&txq).is_some_and(|s| s.listed)
    }

    /// The active list of `ac` from its head, the order `next_txq` visits it (list
    /// kinds, §5.2, §5.4); `None` for the kinds that keep other structures. What the
    /// kernel-oracle harness compares with `local->active_txqs[ac]`.
    pub fn active_list(&self, ac: Ac) -> Option<Vec<TxqKey>> {
        match &self.generation {
            Generations::ActiveList(lists) => Some(lists.active_list(ac).copied().collect()),
            _ => None,
        }
    }

    /// How many TXQs are scheduled on `ac` (the `N` of the 6.0 per-AC check, §5.4).
    pub fn active_txq_count(&self, ac: Ac) -> usize {
        dispatch!(&self.generation, g => g.active_txq_count(ac))
    }

    /// Total airtime reported for a station on `ac`, whether charged or not (the
    /// debugfs `airtime` counters, §5.1, §10).
    pub fn airtime(&self, sta: LinkId, ac: Ac) -> Airtime {
        self.book
            .stas
            .get(sta.index())
            .map_or(Airtime::default(), |s| {
                let a = &s[ac.index()];
                Airtime {
                    tx_us: a.tx_airtime_us,
                    rx_us: a.rx_airtime_us,
                }
            })
    }
}

/// The fake drivers and helpers the scheduler's unit tests share (here and in each
/// generation's file).
#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    pub(super) const AC: Ac = Ac::Be;

    pub(super) fn no_pending(_: LinkId) -> u32 {
        0
    }

    /// `refusals_to_come` of the active-list generation; `None` for the others.
    pub(super) fn refusals_to_come(
        s: &Scheduler,
        txq: TxqKey,
        ac: Ac,
        ac_over_limit: &dyn Fn(usize) -> bool,
    ) -> Option<u32> {
        match &s.generation {
            Generations::ActiveList(lists) => {
                lists.refusals_to_come(&s.book, txq, ac, ac_over_limit)
            }
            _ => None,
        }
    }

    fn jain(x: &[f64]) -> f64 {
        let s: f64 = x.iter().sum();
        let s2: f64 = x.iter().map(|v| v * v).sum();
        s * s / (x.len() as f64 * s2)
    }

    pub(super) struct RunResult {
        pub(super) airtime: Vec<u64>,
        pub(super) services: Vec<u64>,
    }

    impl RunResult {
        pub(super) fn shares(&self) -> Vec<f64> {
            let total: u64 = self.airtime.iter().sum();
            self.airtime
                .iter()
                .map(|&a| a as f64 / total as f64)
                .collect()
        }
        pub(super) fn jain(&self) -> f64 {
            jain(&self.airtime.iter().map(|&a| a as f64).collect::<Vec<_>>())
        }
    }

    /// A tiny fake driver: every station has one always-backlogged BE TXQ; the "hardware"
    /// holds up to `hw_depth` PPDUs; each service transmits `per_service[sta]` µs of
    /// airtime. The scheduler refills the hardware after each completion (schedule_start,
    /// next_txq… until full or None); a completion advances time, clears the AQL pending
    /// airtime, charges the airtime and models a new packet arriving (schedule_txq).
    pub(super) fn run(
        params: SchedulerParams,
        per_service: &[u32],
        weights: &[u16],
        dur: Nanos,
    ) -> RunResult {
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
                        batched += refusals_to_come(&s, a, AC, &|_| over).is_some() as u32;
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
