//! The loaded kernel scheduler behind the core's `ExternalScheduler`: one `struct
//! ksched` (kernel-oracle's `shim/mac80211/scheduler.c`, the differential harness's
//! radio) per radio, of which a run calls the scheduler's functions:
//! `ieee80211_schedule_txq` / `ieee80211_return_txq` (`__ieee80211_schedule_txq`),
//! `ieee80211_txq_schedule_start`, `ieee80211_next_txq`, `ieee80211_txq_may_transmit`
//! and `ieee80211_sta_register_airtime`. AQL is kept by txop (or the `aql` unit's own
//! radio): its values are set before each call that reads them.

use crate::source::{Source, SCHEDULER};
use std::ffi::c_void;
use std::path::Path;
use txop_core::mac::edca::Ac;
use txop_core::mac80211::rate_control::CodeOrigin;
use txop_core::mac80211::scheduler::{ExternalScheduler, SchedulerCode, SchedulerParams};
use txop_core::mac80211::txq::{LinkId, Tid, TxqKey};
use txop_core::Nanos;

/// The kernel's jiffies are the run's nanoseconds plus this (as in kernel-oracle's
/// harness), so that a `last_active` of 0 (never active) is long ago, as on a running
/// system; txop's "never" is `None`.
const JIFFIES_OFFSET_NS: u64 = 1 << 40;

type NewFn = unsafe extern "C" fn(u32, u32, *const u32, *const u32, u32) -> *mut c_void;
type PtrFn = unsafe extern "C" fn(*mut c_void);
type AddStaFn = unsafe extern "C" fn(*mut c_void) -> u32;
type SetAcFn = unsafe extern "C" fn(*mut c_void, i32, u32, u32);
type ReturnFn = unsafe extern "C" fn(*mut c_void, u64, i32, u32, u32);
type ListedFn = unsafe extern "C" fn(*mut c_void, i32, u32) -> u32;
type StartFn = unsafe extern "C" fn(*mut c_void, u64, u32);
type NextFn = unsafe extern "C" fn(*mut c_void, u64, u32, *mut i32, *mut u32) -> i32;
type MayFn = unsafe extern "C" fn(*mut c_void, u64, i32, u32) -> u32;
type RegisterFn = unsafe extern "C" fn(*mut c_void, u64, u32, u32, u32, u32);
type UnscheduleFn = unsafe extern "C" fn(*mut c_void, i32, u32);
type WeightFn = unsafe extern "C" fn(*mut c_void, u32, u16);
type ViewFn = unsafe extern "C" fn(*mut c_void, u32, u32, *const i32, *const u8);
type OverFn = unsafe extern "C" fn(*mut c_void, u32, u32);
type CountFn = unsafe extern "C" fn(*mut c_void, u32) -> u32;
type CloneFn = unsafe extern "C" fn(*const c_void) -> *mut c_void;

/// The shim's C API, looked up in the loaded object.
struct Api {
    new: NewFn,
    free: PtrFn,
    add_sta: AddStaFn,
    set_txq_ac: SetAcFn,
    return_txq: ReturnFn,
    listed: ListedFn,
    schedule_start: StartFn,
    next_txq: NextFn,
    may_transmit: MayFn,
    register_airtime: RegisterFn,
    unschedule: UnscheduleFn,
    set_weight: WeightFn,
    set_aql_view: ViewFn,
    set_ac_over: OverFn,
    active_count: CountFn,
    clone: CloneFn,
}

/// The kernel's scheduler, built and loaded: makes one radio's per node. Lives as long
/// as the process.
pub struct KernelSchedulerCode {
    origin: CodeOrigin,
    api: Api,
}

impl KernelSchedulerCode {
    /// Build (or find in the cache) and load the code of `src` (`None`: the tarball).
    pub(crate) fn build(src: Option<&Path>) -> Result<&'static KernelSchedulerCode, String> {
        let source = Source::read(&SCHEDULER, src)?;
        let (object, fnv64) = source.build()?;
        let lib = crate::load(&object)?;
        let api = Api {
            new: crate::sym(lib, &object, "ksched_new")?,
            free: crate::sym(lib, &object, "ksched_free")?,
            add_sta: crate::sym(lib, &object, "ksched_add_sta")?,
            set_txq_ac: crate::sym(lib, &object, "ksched_set_txq_ac")?,
            return_txq: crate::sym(lib, &object, "ksched_return_txq")?,
            listed: crate::sym(lib, &object, "ksched_listed")?,
            schedule_start: crate::sym(lib, &object, "ksched_schedule_start")?,
            next_txq: crate::sym(lib, &object, "ksched_next_txq")?,
            may_transmit: crate::sym(lib, &object, "ksched_may_transmit")?,
            register_airtime: crate::sym(lib, &object, "ksched_register_airtime")?,
            unschedule: crate::sym(lib, &object, "ksched_unschedule")?,
            set_weight: crate::sym(lib, &object, "ksched_set_weight")?,
            set_aql_view: crate::sym(lib, &object, "ksched_set_aql_view")?,
            set_ac_over: crate::sym(lib, &object, "ksched_set_ac_over")?,
            active_count: crate::sym(lib, &object, "ksched_active_count")?,
            clone: crate::sym(lib, &object, "ksched_clone_scheduler")?,
        };
        Ok(Box::leak(Box::new(KernelSchedulerCode {
            origin: CodeOrigin {
                unit: SCHEDULER.name,
                path: source.path,
                version: source.version,
                fnv64: format!("{fnv64:016x}"),
            },
            api,
        })))
    }
}

impl SchedulerCode for KernelSchedulerCode {
    fn origin(&self) -> &CodeOrigin {
        &self.origin
    }

    /// `ieee80211_alloc_hw_nm` with `params`' `airtime_flags`, on a driver that sets
    /// `NL80211_EXT_FEATURE_AIRTIME_FAIRNESS` and `NL80211_EXT_FEATURE_AQL` (the AQL
    /// values are set before each call, [`ExternalScheduler::set_aql_view`]).
    fn scheduler(&'static self, params: &SchedulerParams) -> Box<dyn ExternalScheduler> {
        let limits = [0u32; 4];
        // SAFETY: the arrays hold four values each; the pointer is owned by the value.
        let raw = unsafe {
            (self.api.new)(
                u32::from(params.airtime_flags),
                1,
                limits.as_ptr(),
                limits.as_ptr(),
                0,
            )
        };
        assert!(!raw.is_null(), "ksched_new: out of memory");
        Box::new(KernelScheduler { code: self, raw })
    }
}

/// One radio's `struct ksched`.
struct KernelScheduler {
    code: &'static KernelSchedulerCode,
    raw: *mut c_void,
}

// SAFETY: the `struct ksched` is reached only through this value; the shim's
// per-thread state (the clock) is set by each call that reads it, and its
// `aql_disable` key stays off (set by `ksched_new`, never written here).
unsafe impl Send for KernelScheduler {}

impl std::fmt::Debug for KernelScheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelScheduler")
            .field("origin", &self.code.origin)
            .finish_non_exhaustive()
    }
}

/// The shim's station number (-1: the vif).
fn raw_sta(sta: Option<LinkId>) -> i32 {
    sta.map_or(-1, |s| i32::from(s.0))
}

/// The kernel's jiffies at `now`.
fn jiffies(now: Nanos) -> u64 {
    now.as_ns() + JIFFIES_OFFSET_NS
}

/// The kernel's `enum ieee80211_ac_numbers` of an AC (VO 0, VI 1, BE 2, BK 3, as
/// txop's [`Ac::index`]).
fn ac_number(ac: Ac) -> u32 {
    ac.index() as u32
}

/// A TID whose AC (`ieee80211_ac_from_tid`, 802.1D) is `ac`: what
/// `ieee80211_sta_register_airtime` finds the AC from.
fn tid_of(ac: Ac) -> u32 {
    match ac {
        Ac::Be => 0,
        Ac::Bk => 1,
        Ac::Vi => 4,
        Ac::Vo => 6,
    }
}

impl ExternalScheduler for KernelScheduler {
    fn add_station(&mut self) {
        // SAFETY: `raw` is live.
        unsafe { (self.code.api.add_sta)(self.raw) };
    }

    fn set_txq_ac(&mut self, sta: Option<LinkId>, tid: Tid, ac: Ac) {
        // SAFETY: `raw` is live, the station was added, the TID is 0–7.
        unsafe {
            (self.code.api.set_txq_ac)(self.raw, raw_sta(sta), u32::from(tid.0), ac_number(ac))
        };
    }

    fn schedule(&mut self, now: Nanos, sta: Option<LinkId>, tid: Tid, has_data: bool) {
        // SAFETY: as above. The TXQ's backlog is 0: `force` says whether it has data.
        unsafe {
            (self.code.api.return_txq)(
                self.raw,
                jiffies(now),
                raw_sta(sta),
                u32::from(tid.0),
                u32::from(has_data),
            )
        };
    }

    fn listed(&self, sta: Option<LinkId>, tid: Tid) -> bool {
        // SAFETY: as above.
        unsafe { (self.code.api.listed)(self.raw, raw_sta(sta), u32::from(tid.0)) != 0 }
    }

    fn schedule_start(&mut self, now: Nanos, ac: Ac) {
        // SAFETY: `raw` is live.
        unsafe { (self.code.api.schedule_start)(self.raw, jiffies(now), ac_number(ac)) };
    }

    fn next_txq(&mut self, now: Nanos, ac: Ac) -> Option<TxqKey> {
        let (mut sta, mut tid) = (0i32, 0u32);
        // SAFETY: `raw` is live; both out-pointers are valid.
        let found = unsafe {
            (self.code.api.next_txq)(self.raw, jiffies(now), ac_number(ac), &mut sta, &mut tid)
        };
        if found == 0 {
            return None;
        }
        let tid = Tid(tid as u8);
        Some(match u16::try_from(sta) {
            Ok(s) => TxqKey::station(LinkId(s), tid),
            Err(_) => TxqKey::vif(),
        })
    }

    fn may_transmit(&mut self, now: Nanos, sta: Option<LinkId>, tid: Tid) -> bool {
        // SAFETY: as above.
        unsafe {
            (self.code.api.may_transmit)(self.raw, jiffies(now), raw_sta(sta), u32::from(tid.0))
                != 0
        }
    }

    fn register_airtime(&mut self, now: Nanos, sta: LinkId, ac: Ac, tx_us: u32, rx_us: u32) {
        // SAFETY: `raw` is live and the station was added.
        unsafe {
            (self.code.api.register_airtime)(
                self.raw,
                jiffies(now),
                u32::from(sta.0),
                tid_of(ac),
                tx_us,
                rx_us,
            )
        };
    }

    fn unschedule(&mut self, sta: Option<LinkId>, tid: Tid) {
        // SAFETY: as above.
        unsafe { (self.code.api.unschedule)(self.raw, raw_sta(sta), u32::from(tid.0)) };
    }

    fn set_weight(&mut self, sta: LinkId, weight: u16) {
        // SAFETY: `raw` is live and the station was added.
        unsafe { (self.code.api.set_weight)(self.raw, u32::from(sta.0), weight) };
    }

    fn set_aql_view(&mut self, ac: Ac, pending_us: &[i32], eligible: &[u8]) {
        let n = pending_us.len().min(eligible.len());
        // SAFETY: `raw` is live; both arrays hold `n` values (the shim stops at its
        // own station count too).
        unsafe {
            (self.code.api.set_aql_view)(
                self.raw,
                ac_number(ac),
                n as u32,
                pending_us.as_ptr(),
                eligible.as_ptr(),
            )
        };
    }

    fn set_ac_over(&mut self, ac: Ac, over: bool) {
        // SAFETY: `raw` is live.
        unsafe { (self.code.api.set_ac_over)(self.raw, ac_number(ac), u32::from(over)) };
    }

    fn active_count(&self, ac: Ac) -> usize {
        // SAFETY: `raw` is live.
        unsafe { (self.code.api.active_count)(self.raw, ac_number(ac)) as usize }
    }

    fn clone_box(&self) -> Box<dyn ExternalScheduler> {
        // SAFETY: `raw` is live; the copy (its lists in the same order) is owned by
        // the new value.
        let raw = unsafe { (self.code.api.clone)(self.raw) };
        assert!(!raw.is_null(), "ksched_clone_scheduler: out of memory");
        Box::new(KernelScheduler {
            code: self.code,
            raw,
        })
    }
}

impl Drop for KernelScheduler {
    fn drop(&mut self) {
        // SAFETY: `raw` came from ksched_new or ksched_clone_scheduler and is freed
        // once.
        unsafe { (self.code.api.free)(self.raw) }
    }
}
