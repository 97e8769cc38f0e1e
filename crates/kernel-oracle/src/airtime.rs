//! The kernel's own airtime estimates (`net/mac80211/airtime.c`, 6.12), compiled at
//! build time from the installed kernel source with the shim in `shim/mac80211/`, as an
//! oracle for txop's `txop_core::mac80211::aql` (reference §6.5): the expected airtime
//! of a packet to a station (`ieee80211_calc_expected_tx_airtime`), the received airtime
//! (`ieee80211_calc_rx_airtime`), the rate table (`ieee80211_get_rate_duration`) and the
//! 10-bit store of the estimate (`ieee80211_info_set_tx_time_est`).

use crate::Unavailable;

/// Which kernel code the airtime oracle was built from; `none` without a source.
pub const AIRTIME_SOURCE: &str = env!("KERNEL_ORACLE_AIRTIME_SOURCE");

/// A rate as a driver reports it (`struct kair_rate`: what becomes an
/// `ieee80211_tx_rate`, or for HE the `rate_info` of `last_rate_info`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct ReportedRate {
    /// `NL80211_BAND_2GHZ` (0) or `NL80211_BAND_5GHZ` (1).
    pub band: u32,
    /// 0 legacy, 1 HT, 2 VHT, 3 HE.
    pub encoding: u32,
    /// Legacy: the index in the band's bitrates (2.4 GHz: 1, 2, 5.5, 11, then 6–54
    /// Mbit/s; 5 GHz: 6–54); HT: MCS 0–31; VHT: MCS 0–9; HE: HE-MCS 0–11.
    pub idx: u32,
    /// VHT and HE spatial streams.
    pub nss: u32,
    /// 20, 40, 80 or (HE) 160.
    pub width_mhz: u32,
    /// Short guard interval.
    pub sgi: u32,
    /// Short DSSS preamble (`IEEE80211_TX_RC_USE_SHORT_PREAMBLE`).
    pub short_preamble: u32,
    /// HE guard interval as `enum nl80211_he_gi`: 0 (0.8 µs), 1 (1.6), 2 (3.2).
    pub he_gi: u32,
}

#[cfg(kernel_oracle_built)]
mod ffi {
    use super::ReportedRate;
    extern "C" {
        pub(crate) fn kair_expected(r: *const ReportedRate, len: i32, ampdu: u32) -> u32;
        pub(crate) fn kair_rx(r: *const ReportedRate, len: i32) -> u32;
        pub(crate) fn kair_rate_duration(r: *const ReportedRate, overhead: *mut u32) -> u32;
        pub(crate) fn kair_set_tx_time_est(est: u32) -> u32;
        pub(crate) fn kair_warnings() -> u32;
    }
}

/// The kernel's airtime.c (stateless: a dual-band hw set up once per thread).
pub struct KernelAirtime(());

impl KernelAirtime {
    /// The kernel code, or why it is not available.
    pub fn new() -> Result<KernelAirtime, Unavailable> {
        #[cfg(kernel_oracle_built)]
        return Ok(KernelAirtime(()));
        #[cfg(not(kernel_oracle_built))]
        Err(Unavailable(env!("KERNEL_ORACLE_MISSING")))
    }

    /// `ieee80211_calc_expected_tx_airtime(hw, vif, sta, len, ampdu)` in µs for a station
    /// whose last reported tx rate is `rate` (`len` is `skb->len`; the kernel adds 38).
    pub fn expected_tx_airtime_us(&self, rate: &ReportedRate, len: i32, ampdu: bool) -> u32 {
        #[cfg(kernel_oracle_built)]
        // SAFETY: `rate` outlives the call.
        return unsafe { ffi::kair_expected(rate, len, u32::from(ampdu)) };
        #[cfg(not(kernel_oracle_built))]
        {
            let _ = (rate, len, ampdu);
            0
        }
    }

    /// `ieee80211_calc_rx_airtime` in µs of `len` bytes received at `rate`.
    pub fn rx_airtime_us(&self, rate: &ReportedRate, len: i32) -> u32 {
        #[cfg(kernel_oracle_built)]
        // SAFETY: `rate` outlives the call.
        return unsafe { ffi::kair_rx(rate, len) };
        #[cfg(not(kernel_oracle_built))]
        {
            let _ = (rate, len);
            0
        }
    }

    /// `ieee80211_get_rate_duration`: the duration of 1024 bytes in 1/1024 µs and the
    /// per-PPDU overhead in µs (0 and 0 for a legacy or unknown rate).
    pub fn rate_duration(&self, rate: &ReportedRate) -> (u32, u32) {
        let mut overhead = 0u32;
        #[cfg(kernel_oracle_built)]
        // SAFETY: `rate` outlives the call; `overhead` is a valid out-pointer.
        let d = unsafe { ffi::kair_rate_duration(rate, &mut overhead) };
        #[cfg(not(kernel_oracle_built))]
        let d = {
            let _ = rate;
            0
        };
        (d, overhead)
    }

    /// `ieee80211_info_set_tx_time_est(info, est)` as the AQL path calls it with a `u32`
    /// (truncated to the `u16` parameter): the µs stored.
    pub fn stored_tx_time_est_us(&self, est_us: u32) -> u32 {
        #[cfg(kernel_oracle_built)]
        // SAFETY: plain values.
        return unsafe { ffi::kair_set_tx_time_est(est_us) };
        #[cfg(not(kernel_oracle_built))]
        {
            let _ = est_us;
            0
        }
    }

    /// `WARN_ON_ONCE`s fired in airtime.c on this thread.
    pub fn warnings(&self) -> u32 {
        #[cfg(kernel_oracle_built)]
        // SAFETY: no arguments.
        return unsafe { ffi::kair_warnings() };
        #[cfg(not(kernel_oracle_built))]
        0
    }
}
