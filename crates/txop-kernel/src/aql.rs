//! The loaded kernel AQL behind the core's `ExternalAql`: one `struct ksched`
//! (kernel-oracle's `shim/mac80211/scheduler.c`: a radio with its stations' airtime
//! state) per radio, of which a run calls only the AQL functions:
//! `ieee80211_sta_update_pending_airtime`, `ieee80211_txq_airtime_check` and
//! `ieee80211_txq_schedule_airtime_check` (txop's scheduler keeps the active lists and
//! says how many TXQs the AC's holds).

use crate::source::{Source, AQL};
use std::ffi::c_void;
use std::path::Path;
use txop_core::mac::edca::Ac;
use txop_core::mac80211::aql::{AqlCode, AqlLimits, AqlParams, ExternalAql};
use txop_core::mac80211::rate_control::CodeOrigin;
use txop_core::mac80211::txq::LinkId;

/// `struct ksched_sta_view`.
#[derive(Default)]
#[repr(C)]
struct StaView {
    deficit: i32,
    aql_tx_pending: i32,
    aql_limit_low: u32,
    aql_limit_high: u32,
    tx_airtime: u64,
    rx_airtime: u64,
    eligible: u32,
}

/// `struct ksched_ac_view`.
#[derive(Default)]
#[repr(C)]
struct AcView {
    schedule_round: u32,
    ac_pending: i32,
    active_txqs: u32,
    schedule_airtime_ok: u32,
}

type NewFn = unsafe extern "C" fn(u32, u32, *const u32, *const u32, u32) -> *mut c_void;
type PtrFn = unsafe extern "C" fn(*mut c_void);
type AddStaFn = unsafe extern "C" fn(*mut c_void) -> u32;
type UpdateFn = unsafe extern "C" fn(*mut c_void, u64, u32, u32, u32, u32);
type CheckFn = unsafe extern "C" fn(*mut c_void, u32, u32) -> u32;
type EnableFn = unsafe extern "C" fn(*mut c_void, u32);
type StaViewFn = unsafe extern "C" fn(*mut c_void, u32, u32, *mut StaView);
type AcViewFn = unsafe extern "C" fn(*mut c_void, u32, *mut AcView);
type TotalFn = unsafe extern "C" fn(*mut c_void) -> i32;
type LimitsFn = unsafe extern "C" fn(*mut c_void, u32, u32, u32);
type StaLimitsFn = unsafe extern "C" fn(*mut c_void, u32, u32, u32, u32);
type CloneFn = unsafe extern "C" fn(*const c_void) -> *mut c_void;

/// The shim's C API, looked up in the loaded object.
struct Api {
    new: NewFn,
    free: PtrFn,
    add_sta: AddStaFn,
    update_pending: UpdateFn,
    airtime_check: CheckFn,
    ac_airtime_ok: CheckFn,
    set_aql_enable: EnableFn,
    sta_view: StaViewFn,
    ac_view: AcViewFn,
    total_pending: TotalFn,
    set_threshold: EnableFn,
    set_radio_limits: LimitsFn,
    set_sta_limits: StaLimitsFn,
    clone: CloneFn,
}

/// The kernel's AQL, built and loaded: makes one radio's accounting per node. Lives as
/// long as the process.
pub struct KernelAqlCode {
    origin: CodeOrigin,
    api: Api,
}

impl KernelAqlCode {
    /// Build (or find in the cache) and load the code of `src` (`None`: the tarball).
    pub(crate) fn build(src: Option<&Path>) -> Result<&'static KernelAqlCode, String> {
        let source = Source::read(&AQL, src)?;
        let (object, fnv64) = source.build()?;
        let lib = crate::load(&object)?;
        let api = Api {
            new: crate::sym(lib, &object, "ksched_new")?,
            free: crate::sym(lib, &object, "ksched_free")?,
            add_sta: crate::sym(lib, &object, "ksched_add_sta")?,
            update_pending: crate::sym(lib, &object, "ksched_update_pending")?,
            airtime_check: crate::sym(lib, &object, "ksched_airtime_check")?,
            ac_airtime_ok: crate::sym(lib, &object, "ksched_ac_airtime_ok")?,
            set_aql_enable: crate::sym(lib, &object, "ksched_set_aql_enable")?,
            sta_view: crate::sym(lib, &object, "ksched_sta_view")?,
            ac_view: crate::sym(lib, &object, "ksched_ac_view")?,
            total_pending: crate::sym(lib, &object, "ksched_total_pending")?,
            set_threshold: crate::sym(lib, &object, "ksched_set_threshold")?,
            set_radio_limits: crate::sym(lib, &object, "ksched_set_radio_limits")?,
            set_sta_limits: crate::sym(lib, &object, "ksched_set_sta_limits")?,
            clone: crate::sym(lib, &object, "ksched_clone")?,
        };
        Ok(Box::leak(Box::new(KernelAqlCode {
            origin: CodeOrigin {
                unit: AQL.name,
                path: source.path,
                version: source.version,
                fnv64: format!("{fnv64:016x}"),
            },
            api,
        })))
    }
}

impl AqlCode for KernelAqlCode {
    fn origin(&self) -> &CodeOrigin {
        &self.origin
    }

    /// `ieee80211_alloc_hw_nm`'s AQL defaults from `params`, on a driver that sets
    /// `NL80211_EXT_FEATURE_AQL` (txop runs AQL only for such stacks).
    fn aql(&'static self, params: &AqlParams) -> Box<dyn ExternalAql> {
        // SAFETY: the arrays hold four values each; the pointer is owned by the value.
        let raw = unsafe {
            (self.api.new)(
                0,
                1,
                params.limit_low_us.as_ptr(),
                params.limit_high_us.as_ptr(),
                params.threshold_us,
            )
        };
        assert!(!raw.is_null(), "ksched_new: out of memory");
        Box::new(KernelAql { code: self, raw })
    }
}

/// One radio's `struct ksched`.
struct KernelAql {
    code: &'static KernelAqlCode,
    raw: *mut c_void,
}

// SAFETY: the `struct ksched` is reached only through this value; the shim's
// per-thread state (the clock, the `aql_disable` key) is set before each call that
// reads it.
unsafe impl Send for KernelAql {}

impl std::fmt::Debug for KernelAql {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelAql")
            .field("origin", &self.code.origin)
            .finish_non_exhaustive()
    }
}

/// The kernel's `enum ieee80211_ac_numbers` of an AC (VO 0, VI 1, BE 2, BK 3, as
/// txop's [`Ac::index`]).
fn ac_number(ac: Ac) -> u32 {
    ac.index() as u32
}

impl KernelAql {
    fn sta_view(&self, sta: LinkId, ac: Ac) -> StaView {
        let mut v = StaView::default();
        // SAFETY: `raw` is live, the station was added; `v` is a valid out-pointer.
        unsafe { (self.code.api.sta_view)(self.raw, u32::from(sta.0), ac_number(ac), &mut v) };
        v
    }
}

impl ExternalAql for KernelAql {
    fn add_station(&mut self) {
        // SAFETY: `raw` is live.
        unsafe { (self.code.api.add_sta)(self.raw) };
    }

    fn update_pending_airtime(&mut self, sta: LinkId, ac: Ac, us: u32, completed: bool) {
        // SAFETY: `raw` is live and the station was added. The clock is not read.
        unsafe {
            (self.code.api.update_pending)(
                self.raw,
                0,
                u32::from(sta.0),
                ac_number(ac),
                us,
                u32::from(completed),
            )
        };
    }

    fn airtime_check(&self, sta: LinkId, ac: Ac, enabled: bool) -> bool {
        // SAFETY: `raw` is live and the station was added; the key is this thread's.
        unsafe {
            (self.code.api.set_aql_enable)(self.raw, u32::from(enabled));
            (self.code.api.airtime_check)(self.raw, u32::from(sta.0), ac_number(ac)) != 0
        }
    }

    fn schedule_airtime_check(&self, ac: Ac, n_active_txqs: usize) -> bool {
        let n = u32::try_from(n_active_txqs).unwrap_or(u32::MAX);
        // SAFETY: `raw` is live; the AC's list is empty again when the call returns.
        unsafe { (self.code.api.ac_airtime_ok)(self.raw, ac_number(ac), n) != 0 }
    }

    fn pending_us(&self, sta: LinkId, ac: Ac) -> i32 {
        self.sta_view(sta, ac).aql_tx_pending
    }

    fn ac_pending_us(&self, ac: Ac) -> i32 {
        let mut v = AcView::default();
        // SAFETY: `raw` is live; `v` is a valid out-pointer.
        unsafe { (self.code.api.ac_view)(self.raw, ac_number(ac), &mut v) };
        v.ac_pending
    }

    fn total_pending_us(&self) -> i32 {
        // SAFETY: `raw` is live.
        unsafe { (self.code.api.total_pending)(self.raw) }
    }

    fn set_threshold_us(&mut self, threshold_us: u32) {
        // SAFETY: `raw` is live.
        unsafe { (self.code.api.set_threshold)(self.raw, threshold_us) };
    }

    fn set_radio_limits(&mut self, ac: Ac, low_us: u32, high_us: u32) {
        // SAFETY: `raw` is live.
        unsafe { (self.code.api.set_radio_limits)(self.raw, ac_number(ac), low_us, high_us) };
    }

    fn station_limits(&self, sta: LinkId, ac: Ac) -> AqlLimits {
        let v = self.sta_view(sta, ac);
        AqlLimits {
            low_us: v.aql_limit_low,
            high_us: v.aql_limit_high,
        }
    }

    fn set_station_limits(&mut self, sta: LinkId, ac: Ac, limits: AqlLimits) {
        // SAFETY: `raw` is live and the station was added.
        unsafe {
            (self.code.api.set_sta_limits)(
                self.raw,
                u32::from(sta.0),
                ac_number(ac),
                limits.low_us,
                limits.high_us,
            )
        };
    }

    fn clone_box(&self) -> Box<dyn ExternalAql> {
        // SAFETY: `raw` is live; the copy is owned by the new value.
        let raw = unsafe { (self.code.api.clone)(self.raw) };
        assert!(!raw.is_null(), "ksched_clone: out of memory");
        Box::new(KernelAql {
            code: self.code,
            raw,
        })
    }
}

impl Drop for KernelAql {
    fn drop(&mut self) {
        // SAFETY: `raw` came from ksched_new or ksched_clone and is freed once.
        unsafe { (self.code.api.free)(self.raw) }
    }
}
