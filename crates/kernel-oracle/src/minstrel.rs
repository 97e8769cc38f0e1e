//! The kernel's own minstrel_ht (`net/mac80211/rc80211_minstrel_ht.c`, 6.x), compiled at
//! build time from the installed kernel source with the shim in `shim/mac80211/`, as an
//! oracle for txop's `txop_core::mac80211::minstrel_ht` (reference rate-control.md §1).
//!
//! [`KernelMinstrel`] is one hw with one station, driven as mac80211 drives the rate
//! control: `rate_init` once, `get_rate` for every frame, `tx_status_ext` for every
//! status. Time is the harness's nanosecond clock: the shim runs jiffies at
//! HZ = 10^9, so the kernel's `HZ / 20` statistics interval and `HZ / 50` sample
//! interval are txop's 50 ms and 20 ms exactly (a real kernel rounds them to its tick).
//! The module-wide random sample table is replaced by the table txop drew for the
//! station (the kernel's `init_sample_table` draws it differently), so both walk the
//! same permutations.

use crate::Unavailable;
use std::sync::Mutex;

/// Which kernel code the minstrel oracle was built from: the tarball or tree, its
/// version and a hash (FNV-1a 64) of the files compiled; `none` without a source.
pub const MINSTREL_SOURCE: &str = env!("KERNEL_ORACLE_MINSTREL_SOURCE");

/// `MINSTREL_GROUPS_NB` (4 streams: 16 HT groups, CCK, OFDM, 24 VHT groups).
pub const GROUPS: u32 = 42;
// The C API's setup, rate-table and state structs and minstrel's group numbers are
// txop-kernel's, which runs the same shim in scenarios.
pub use txop_kernel::{
    MinstrelSetup, StateView, TableEntry, CCK_GROUP, OFDM_GROUP, RC_USE_RTS_CTS, VHT_GROUP_0,
};

/// `struct minstrel_rate_stats` of one rate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct RateView {
    /// `attempts` (the kernel's `u16`).
    pub attempts: u32,
    /// `last_attempts`.
    pub last_attempts: u32,
    /// `success`.
    pub success: u32,
    /// `last_success`.
    pub last_success: u32,
    /// `att_hist`.
    pub att_hist: u32,
    /// `succ_hist`.
    pub succ_hist: u32,
    /// `prob_avg` (4096 = 100 %).
    pub prob_avg: u32,
    /// `prob_avg_1`.
    pub prob_avg_1: u32,
    /// `retry_count`.
    pub retry_count: u32,
    /// `retry_count_rtscts`.
    pub retry_count_rtscts: u32,
    /// `retry_updated`.
    pub retry_updated: u32,
}

#[cfg(kernel_oracle_built)]
mod ffi {
    use super::{MinstrelSetup, RateView, StateView};

    #[repr(C)]
    pub(crate) struct Kmin {
        _opaque: [u8; 0],
    }

    extern "C" {
        pub(crate) fn kmin_new(p: *const MinstrelSetup, now_ns: u64) -> *mut Kmin;
        pub(crate) fn kmin_free(k: *mut Kmin);
        pub(crate) fn kmin_get_rate(k: *mut Kmin, now_ns: u64, sample: *mut u32) -> u32;
        #[allow(clippy::too_many_arguments)]
        pub(crate) fn kmin_tx_status(
            k: *mut Kmin,
            now_ns: u64,
            rates: *const u32,
            counts: *const u32,
            n: u32,
            ampdu_len: u32,
            ampdu_ack_len: u32,
            probe: u32,
        );
        pub(crate) fn kmin_state(k: *mut Kmin, v: *mut StateView);
        pub(crate) fn kmin_rate(k: *mut Kmin, index: u32, v: *mut RateView);
        pub(crate) fn kmin_supported(k: *mut Kmin, group: u32) -> u32;
        pub(crate) fn kmin_expected_throughput(k: *mut Kmin) -> u32;
    }
}

/// The kernel's sample table is one per module: calls into the kernel's minstrel are
/// serialised, each installing its station's table first.
static KERNEL_MINSTREL: Mutex<()> = Mutex::new(());

fn lock() -> std::sync::MutexGuard<'static, ()> {
    KERNEL_MINSTREL.lock().unwrap_or_else(|e| e.into_inner())
}

/// One station's minstrel_ht in the kernel's code. Not `Send`: the shim's clock is per
/// thread.
pub struct KernelMinstrel {
    #[cfg(kernel_oracle_built)]
    raw: *mut ffi::Kmin,
}

/// One stage of a transmit status: minstrel's rate number and the tries made at it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StatusStage {
    /// `MI_RATE(group, index)` in the kernel's numbering.
    pub rate: u32,
    /// Tries made at it (0 ends the chain).
    pub tries: u32,
}

impl KernelMinstrel {
    /// `minstrel_ht_alloc`, `minstrel_ht_alloc_sta` and `minstrel_ht_rate_init` at
    /// `now_ns`, or why the kernel code is not available.
    pub fn new(setup: &MinstrelSetup, now_ns: u64) -> Result<KernelMinstrel, Unavailable> {
        #[cfg(kernel_oracle_built)]
        {
            let _g = lock();
            // SAFETY: `setup` outlives the call; the pointer is owned by the result.
            let raw = unsafe { ffi::kmin_new(setup, now_ns) };
            if raw.is_null() {
                return Err(Unavailable("kernel-oracle: kmin_new: out of memory"));
            }
            Ok(KernelMinstrel { raw })
        }
        #[cfg(not(kernel_oracle_built))]
        {
            let _ = (setup, now_ns, lock);
            Err(Unavailable(env!("KERNEL_ORACLE_MISSING")))
        }
    }

    /// `minstrel_ht_get_rate` for a frame at `now_ns`: the sample rate when minstrel
    /// probes (`IEEE80211_TX_CTL_RATE_CTRL_PROBE`), else `None` (the rate table).
    pub fn get_rate(&mut self, now_ns: u64) -> Option<u32> {
        let mut sample = 0u32;
        #[cfg(kernel_oracle_built)]
        {
            let _g = lock();
            // SAFETY: self.raw is live; `sample` is a valid out-pointer.
            if unsafe { ffi::kmin_get_rate(self.raw, now_ns, &mut sample) } == 0 {
                return None;
            }
        }
        #[cfg(not(kernel_oracle_built))]
        let _ = now_ns;
        Some(sample)
    }

    /// `minstrel_ht_tx_status` for an A-MPDU status at `now_ns`.
    pub fn tx_status(
        &mut self,
        now_ns: u64,
        stages: &[StatusStage],
        ampdu_len: u8,
        ampdu_ack_len: u8,
        probe: bool,
    ) {
        let rates: Vec<u32> = stages.iter().map(|s| s.rate).collect();
        let counts: Vec<u32> = stages.iter().map(|s| s.tries).collect();
        #[cfg(kernel_oracle_built)]
        {
            let _g = lock();
            // SAFETY: both slices hold `stages.len()` entries and outlive the call.
            unsafe {
                ffi::kmin_tx_status(
                    self.raw,
                    now_ns,
                    rates.as_ptr(),
                    counts.as_ptr(),
                    stages.len() as u32,
                    u32::from(ampdu_len),
                    u32::from(ampdu_ack_len),
                    u32::from(probe),
                )
            }
        }
        #[cfg(not(kernel_oracle_built))]
        let _ = (now_ns, rates, counts, ampdu_len, ampdu_ack_len, probe);
    }

    /// The chosen rates, the rate table and the sample lists.
    pub fn state(&mut self) -> StateView {
        let mut v = StateView::default();
        #[cfg(kernel_oracle_built)]
        {
            let _g = lock();
            // SAFETY: self.raw is live; `v` is a valid out-pointer.
            unsafe { ffi::kmin_state(self.raw, &mut v) }
        }
        v
    }

    /// The statistics of rate `index` (`MI_RATE`).
    pub fn rate(&mut self, index: u32) -> RateView {
        let mut v = RateView::default();
        #[cfg(kernel_oracle_built)]
        {
            let _g = lock();
            // SAFETY: self.raw is live; `v` is a valid out-pointer.
            unsafe { ffi::kmin_rate(self.raw, index, &mut v) }
        }
        #[cfg(not(kernel_oracle_built))]
        let _ = index;
        v
    }

    /// `mi->supported[group]`.
    pub fn supported(&mut self, group: u32) -> u16 {
        #[cfg(kernel_oracle_built)]
        {
            let _g = lock();
            // SAFETY: self.raw is live.
            unsafe { ffi::kmin_supported(self.raw, group) as u16 }
        }
        #[cfg(not(kernel_oracle_built))]
        {
            let _ = group;
            0
        }
    }

    /// `minstrel_ht_get_expected_throughput` (kbit/s).
    pub fn expected_throughput_kbps(&mut self) -> u32 {
        #[cfg(kernel_oracle_built)]
        {
            let _g = lock();
            // SAFETY: self.raw is live.
            unsafe { ffi::kmin_expected_throughput(self.raw) }
        }
        #[cfg(not(kernel_oracle_built))]
        0
    }
}

#[cfg(kernel_oracle_built)]
impl Drop for KernelMinstrel {
    fn drop(&mut self) {
        let _g = lock();
        // SAFETY: self.raw came from kmin_new and is freed once.
        unsafe { ffi::kmin_free(self.raw) }
    }
}
