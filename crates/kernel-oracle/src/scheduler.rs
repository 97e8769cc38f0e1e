//! The kernel's own TXQ scheduler and AQL accounting (6.12: `ieee80211_next_txq`,
//! `__ieee80211_schedule_txq`, `ieee80211_txq_may_transmit`,
//! `ieee80211_txq_schedule_start`, `ieee80211_txq_airtime_check` and the per-AC check of
//! `net/mac80211/tx.c`; `ieee80211_sta_register_airtime` and
//! `ieee80211_sta_update_pending_airtime` of `sta_info.c`), compiled at build time from
//! the installed kernel source with the shim `shim/mac80211/scheduler.c`, as an oracle
//! for txop's `txop_core::mac80211::scheduler` (in its 6.x generation,
//! `SchedulerKind::DrrAql`) and `txop_core::mac80211::aql` (reference §5.4, §6.3, §6.4).

use crate::Unavailable;

/// Which kernel code the scheduler oracle was built from; `none` without a source.
pub const SCHEDULER_SOURCE: &str = env!("KERNEL_ORACLE_SCHEDULER_SOURCE");

/// A TXQ of the kernel's radio: station `sta`'s TXQ of TID `tid` (0–7), or the vif's
/// (`sta` `None`; BE, TID 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KTxq {
    /// The station (index in order of [`KernelScheduler::add_station`]), or the vif.
    pub sta: Option<u32>,
    /// The TID.
    pub tid: u32,
}

impl KTxq {
    fn raw_sta(self) -> i32 {
        self.sta.map_or(-1, |s| s as i32)
    }
}

/// The radio's AQL settings at creation (`ieee80211_alloc_hw_nm`'s fields).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RadioSetup {
    /// `local->airtime_flags`.
    pub airtime_flags: u32,
    /// The driver sets `NL80211_EXT_FEATURE_AQL`.
    pub aql: bool,
    /// `local->aql_txq_limit_low[ac]`, by AC (VO, VI, BE, BK).
    pub limit_low_us: [u32; 4],
    /// `local->aql_txq_limit_high[ac]`.
    pub limit_high_us: [u32; 4],
    /// `local->aql_threshold`.
    pub threshold_us: u32,
}

/// One station's `struct airtime_info` on one AC, and its AQL check.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct StaView {
    /// `deficit`.
    pub deficit: i32,
    /// `aql_tx_pending`.
    pub aql_tx_pending: i32,
    /// `aql_limit_low`.
    pub aql_limit_low: u32,
    /// `aql_limit_high`.
    pub aql_limit_high: u32,
    /// `tx_airtime`.
    pub tx_airtime: u64,
    /// `rx_airtime`.
    pub rx_airtime: u64,
    /// `ieee80211_txq_airtime_check` of the station's TXQ on this AC (0 or 1).
    pub eligible: u32,
}

/// One AC's scheduling state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct AcView {
    /// `local->schedule_round[ac]`.
    pub schedule_round: u32,
    /// `local->aql_ac_pending_airtime[ac]`.
    pub ac_pending: i32,
    /// TXQs on `local->active_txqs[ac]`.
    pub active_txqs: u32,
    /// `ieee80211_txq_schedule_airtime_check` (1: under the per-AC limit).
    pub schedule_airtime_ok: u32,
}

#[cfg(kernel_oracle_built)]
mod ffi {
    use super::{AcView, StaView};

    #[repr(C)]
    pub(crate) struct Raw {
        _opaque: [u8; 0],
    }

    extern "C" {
        pub(crate) fn ksched_new(
            airtime_flags: u32,
            aql: u32,
            low: *const u32,
            high: *const u32,
            threshold: u32,
        ) -> *mut Raw;
        pub(crate) fn ksched_free(k: *mut Raw);
        pub(crate) fn ksched_add_sta(k: *mut Raw) -> u32;
        pub(crate) fn ksched_enqueue(k: *mut Raw, now: u64, sta: i32, tid: u32);
        pub(crate) fn ksched_schedule_start(k: *mut Raw, now: u64, ac: u32);
        pub(crate) fn ksched_next_txq(
            k: *mut Raw,
            now: u64,
            ac: u32,
            sta: *mut i32,
            tid: *mut u32,
        ) -> i32;
        pub(crate) fn ksched_dequeue(k: *mut Raw, now: u64, sta: i32, tid: u32, airtime: u32);
        pub(crate) fn ksched_return_txq(k: *mut Raw, now: u64, sta: i32, tid: u32, force: u32);
        pub(crate) fn ksched_may_transmit(k: *mut Raw, now: u64, sta: i32, tid: u32) -> u32;
        pub(crate) fn ksched_complete(k: *mut Raw, now: u64, sta: u32, ac: u32, airtime: u32);
        pub(crate) fn ksched_register_airtime(
            k: *mut Raw,
            now: u64,
            sta: u32,
            tid: u32,
            tx: u32,
            rx: u32,
        );
        pub(crate) fn ksched_set_weight(k: *mut Raw, sta: u32, weight: u16);
        pub(crate) fn ksched_ps_start(k: *mut Raw, sta: u32);
        pub(crate) fn ksched_set_aql_enable(k: *mut Raw, on: u32);
        pub(crate) fn ksched_set_threshold(k: *mut Raw, threshold: u32);
        pub(crate) fn ksched_set_sta_limits(k: *mut Raw, sta: u32, ac: u32, low: u32, high: u32);
        pub(crate) fn ksched_sta_view(k: *mut Raw, sta: u32, ac: u32, v: *mut StaView);
        pub(crate) fn ksched_ac_view(k: *mut Raw, ac: u32, v: *mut AcView);
        pub(crate) fn ksched_total_pending(k: *mut Raw) -> i32;
        pub(crate) fn ksched_listed(k: *mut Raw, sta: i32, tid: u32) -> u32;
        pub(crate) fn ksched_active_list(
            k: *mut Raw,
            ac: u32,
            stas: *mut i32,
            tids: *mut u32,
            max: u32,
        ) -> u32;
        pub(crate) fn ksched_ac_from_tid(tid: u32) -> u32;
        pub(crate) fn ksched_warning_count() -> u32;
    }
}

/// The kernel's scheduler and AQL state of one radio, with its stations and TXQs
/// (TIDs 0–7 per station, and the vif's). Not `Send`: the shim's clock, `aql_disable`
/// key and warning counter are per thread. Times are the caller's nanoseconds; the
/// kernel's jiffies run at HZ = 10^9.
pub struct KernelScheduler {
    #[cfg(kernel_oracle_built)]
    raw: *mut ffi::Raw,
    stations: u32,
}

// The methods are thin FFI calls; without a source they are unreachable (`new` fails).
#[cfg_attr(not(kernel_oracle_built), allow(unused_variables))]
impl KernelScheduler {
    /// `ieee80211_alloc_hw_nm`'s scheduler and AQL state with `setup`, no stations; or
    /// why the kernel code is not available.
    pub fn new(setup: &RadioSetup) -> Result<KernelScheduler, Unavailable> {
        #[cfg(kernel_oracle_built)]
        {
            // SAFETY: plain values and pointers to 4-element arrays in; the pointer is
            // owned by the KernelScheduler.
            let raw = unsafe {
                ffi::ksched_new(
                    setup.airtime_flags,
                    setup.aql as u32,
                    setup.limit_low_us.as_ptr(),
                    setup.limit_high_us.as_ptr(),
                    setup.threshold_us,
                )
            };
            Ok(KernelScheduler { raw, stations: 0 })
        }
        #[cfg(not(kernel_oracle_built))]
        Err(Unavailable(env!("KERNEL_ORACLE_MISSING")))
    }

    /// `sta_info_alloc`'s airtime state for a new station (weight and deficit 256, the
    /// radio's AQL limits); returns its index.
    pub fn add_station(&mut self) -> u32 {
        #[cfg(kernel_oracle_built)]
        // SAFETY: `raw` is live.
        unsafe {
            ffi::ksched_add_sta(self.raw);
        }
        self.stations += 1;
        self.stations - 1
    }

    fn check(&self, txq: KTxq) {
        assert!(txq.tid < 8, "TID {} (0–7)", txq.tid);
        if let Some(s) = txq.sta {
            assert!(s < self.stations, "station {s} of {}", self.stations);
        }
    }

    /// A packet queued on `txq`: its backlog grows and `ieee80211_schedule_txq` runs.
    pub fn enqueue(&mut self, now_ns: u64, txq: KTxq) {
        self.check(txq);
        #[cfg(kernel_oracle_built)]
        // SAFETY: `raw` is live, `txq` in range.
        unsafe {
            ffi::ksched_enqueue(self.raw, now_ns, txq.raw_sta(), txq.tid)
        }
    }

    /// `ieee80211_txq_schedule_start(hw, ac)`.
    pub fn schedule_start(&mut self, now_ns: u64, ac: u32) {
        assert!(ac < 4);
        #[cfg(kernel_oracle_built)]
        // SAFETY: `raw` is live.
        unsafe {
            ffi::ksched_schedule_start(self.raw, now_ns, ac)
        }
    }

    /// `ieee80211_next_txq(hw, ac)`.
    pub fn next_txq(&mut self, now_ns: u64, ac: u32) -> Option<KTxq> {
        assert!(ac < 4);
        let (mut sta, mut tid) = (0i32, 0u32);
        #[cfg(kernel_oracle_built)]
        // SAFETY: `raw` is live, the pointers are to locals.
        unsafe {
            if ffi::ksched_next_txq(self.raw, now_ns, ac, &mut sta, &mut tid) != 0 {
                return Some(KTxq {
                    sta: u32::try_from(sta).ok(),
                    tid,
                });
            }
        }
        None
    }

    /// One packet dequeued from `txq` (`ieee80211_tx_dequeue`), charging a non-zero
    /// stored estimate `airtime_us` (`ieee80211_sta_update_pending_airtime`, not
    /// completed).
    pub fn dequeue(&mut self, now_ns: u64, txq: KTxq, airtime_us: u16) {
        self.check(txq);
        #[cfg(kernel_oracle_built)]
        // SAFETY: `raw` is live, `txq` in range.
        unsafe {
            ffi::ksched_dequeue(self.raw, now_ns, txq.raw_sta(), txq.tid, airtime_us as u32)
        }
    }

    /// `ieee80211_return_txq(hw, txq, force)`.
    pub fn return_txq(&mut self, now_ns: u64, txq: KTxq, force: bool) {
        self.check(txq);
        #[cfg(kernel_oracle_built)]
        // SAFETY: `raw` is live, `txq` in range.
        unsafe {
            ffi::ksched_return_txq(self.raw, now_ns, txq.raw_sta(), txq.tid, force as u32)
        }
    }

    /// `ieee80211_txq_may_transmit(hw, txq)`.
    pub fn may_transmit(&mut self, now_ns: u64, txq: KTxq) -> bool {
        self.check(txq);
        #[cfg(kernel_oracle_built)]
        // SAFETY: `raw` is live, `txq` in range.
        let r = unsafe { ffi::ksched_may_transmit(self.raw, now_ns, txq.raw_sta(), txq.tid) != 0 };
        #[cfg(not(kernel_oracle_built))]
        let r = true;
        r
    }

    /// A tx status of a packet of station `sta` on `ac` whose stored estimate was
    /// `airtime_us` (`ieee80211_sta_update_pending_airtime`, completed).
    pub fn complete(&mut self, now_ns: u64, sta: u32, ac: u32, airtime_us: u16) {
        assert!(sta < self.stations && ac < 4);
        #[cfg(kernel_oracle_built)]
        // SAFETY: `raw` is live, `sta` in range.
        unsafe {
            ffi::ksched_complete(self.raw, now_ns, sta, ac, airtime_us as u32)
        }
    }

    /// `ieee80211_sta_register_airtime(sta, tid, tx_us, rx_us)`.
    pub fn register_airtime(&mut self, now_ns: u64, sta: u32, tid: u32, tx_us: u32, rx_us: u32) {
        self.check(KTxq {
            sta: Some(sta),
            tid,
        });
        #[cfg(kernel_oracle_built)]
        // SAFETY: `raw` is live, `sta` in range.
        unsafe {
            ffi::ksched_register_airtime(self.raw, now_ns, sta, tid, tx_us, rx_us)
        }
    }

    /// nl80211's `airtime_weight` (0: not set, ignored).
    pub fn set_weight(&mut self, sta: u32, weight: u16) {
        assert!(sta < self.stations);
        #[cfg(kernel_oracle_built)]
        // SAFETY: `raw` is live, `sta` in range.
        unsafe {
            ffi::ksched_set_weight(self.raw, sta, weight)
        }
    }

    /// `sta_ps_start`: every TXQ of `sta` leaves its active list.
    pub fn ps_start(&mut self, sta: u32) {
        assert!(sta < self.stations);
        #[cfg(kernel_oracle_built)]
        // SAFETY: `raw` is live, `sta` in range.
        unsafe {
            ffi::ksched_ps_start(self.raw, sta)
        }
    }

    /// debugfs `aql_enable`.
    pub fn set_aql_enable(&mut self, on: bool) {
        #[cfg(kernel_oracle_built)]
        // SAFETY: `raw` is live.
        unsafe {
            ffi::ksched_set_aql_enable(self.raw, on as u32)
        }
    }

    /// debugfs `aql_threshold`.
    pub fn set_threshold(&mut self, threshold_us: u32) {
        #[cfg(kernel_oracle_built)]
        // SAFETY: `raw` is live.
        unsafe {
            ffi::ksched_set_threshold(self.raw, threshold_us)
        }
    }

    /// A station's debugfs `aql` write `limit <ac> <low> <high>`.
    pub fn set_station_limits(&mut self, sta: u32, ac: u32, low_us: u32, high_us: u32) {
        assert!(sta < self.stations && ac < 4);
        #[cfg(kernel_oracle_built)]
        // SAFETY: `raw` is live, `sta` in range.
        unsafe {
            ffi::ksched_set_sta_limits(self.raw, sta, ac, low_us, high_us)
        }
    }

    /// Station `sta`'s airtime state on `ac`.
    pub fn station(&self, sta: u32, ac: u32) -> StaView {
        assert!(sta < self.stations && ac < 4);
        let mut v = StaView::default();
        #[cfg(kernel_oracle_built)]
        // SAFETY: `raw` is live, `sta` in range, `v` a local.
        unsafe {
            ffi::ksched_sta_view(self.raw, sta, ac, &mut v)
        }
        v
    }

    /// AC `ac`'s round, pending airtime, active list length and per-AC check.
    pub fn ac(&self, ac: u32) -> AcView {
        assert!(ac < 4);
        let mut v = AcView::default();
        #[cfg(kernel_oracle_built)]
        // SAFETY: `raw` is live, `v` a local.
        unsafe {
            ffi::ksched_ac_view(self.raw, ac, &mut v)
        }
        v
    }

    /// `local->aql_total_pending_airtime`.
    pub fn total_pending(&self) -> i32 {
        #[cfg(kernel_oracle_built)]
        // SAFETY: `raw` is live.
        let r = unsafe { ffi::ksched_total_pending(self.raw) };
        #[cfg(not(kernel_oracle_built))]
        let r = 0;
        r
    }

    /// Whether `txq` is on its AC's active list.
    pub fn listed(&self, txq: KTxq) -> bool {
        self.check(txq);
        #[cfg(kernel_oracle_built)]
        // SAFETY: `raw` is live, `txq` in range.
        let r = unsafe { ffi::ksched_listed(self.raw, txq.raw_sta(), txq.tid) != 0 };
        #[cfg(not(kernel_oracle_built))]
        let r = false;
        r
    }

    /// AC `ac`'s active list, head first.
    pub fn active_list(&self, ac: u32) -> Vec<KTxq> {
        assert!(ac < 4);
        let max = self.stations * 8 + 1;
        let mut stas = vec![0i32; max as usize];
        let mut tids = vec![0u32; max as usize];
        #[cfg(kernel_oracle_built)]
        // SAFETY: `raw` is live, the buffers hold `max` entries.
        let n = unsafe {
            ffi::ksched_active_list(self.raw, ac, stas.as_mut_ptr(), tids.as_mut_ptr(), max)
        };
        #[cfg(not(kernel_oracle_built))]
        let n = 0u32;
        (0..n as usize)
            .map(|i| KTxq {
                sta: u32::try_from(stas[i]).ok(),
                tid: tids[i],
            })
            .collect()
    }

    /// `ieee80211_ac_from_tid(tid)` (the kernel's `ieee802_1d_to_ac`).
    pub fn ac_from_tid(tid: u32) -> u32 {
        #[cfg(kernel_oracle_built)]
        // SAFETY: a pure function of its argument.
        let r = unsafe { ffi::ksched_ac_from_tid(tid) };
        #[cfg(not(kernel_oracle_built))]
        let r = 0;
        r
    }

    /// `WARN_ONCE` conditions that held on this thread since the last
    /// [`KernelScheduler::new`] (the pending-airtime underflow).
    pub fn warnings(&self) -> u32 {
        #[cfg(kernel_oracle_built)]
        // SAFETY: reads a thread-local counter.
        let r = unsafe { ffi::ksched_warning_count() };
        #[cfg(not(kernel_oracle_built))]
        let r = 0;
        r
    }
}

#[cfg(kernel_oracle_built)]
impl Drop for KernelScheduler {
    fn drop(&mut self) {
        // SAFETY: `raw` came from ksched_new and is freed once.
        unsafe { ffi::ksched_free(self.raw) }
    }
}
