//! AQL's airtime estimate from outside the core: the kernel's own
//! `ieee80211_calc_expected_tx_airtime` (`net/mac80211/airtime.c`), built at run time by
//! the front end (`crates/txop-kernel`, scenario key `kernel.units = ["airtime"]`;
//! issue 28, "bring your patch") and used in place of txop's
//! [`expected_tx_airtime_us`](crate::mac80211::aql::expected_tx_airtime_us) wherever a
//! packet's AQL pending airtime is computed (`ieee80211_tx_dequeue`, reference §6.5).
//! The code is 6.12's, the [`AqlEstimator::AggShift`](crate::mac80211::aql::AqlEstimator)
//! generation; the stored value is still `ieee80211_info_set_tx_time_est`'s
//! ([`stored_tx_time_est_us`](crate::mac80211::aql::stored_tx_time_est_us)).

use crate::mac80211::rate_control::CodeOrigin;
use crate::phy::TxVector;

/// Airtime-estimate code loaded by the front end (stateless, as airtime.c is).
pub trait AirtimeCode: Send + Sync + std::panic::RefUnwindSafe {
    /// Where the code came from (`unit` is `airtime`).
    fn origin(&self) -> &CodeOrigin;
    /// `ieee80211_calc_expected_tx_airtime(hw, vif, sta, len_bytes, ampdu)` in µs for a
    /// station whose last reported tx rate is `rate` (`len_bytes` is `skb->len`).
    fn expected_tx_airtime_us(&self, len_bytes: u32, rate: &TxVector, ampdu: bool) -> u32;
}

/// A handle on loaded [`AirtimeCode`]: `Copy`, as the code lives as long as the
/// process. Two handles are equal when their code has the same origin.
#[derive(Clone, Copy)]
pub struct ExternalAirtimeCode(pub &'static dyn AirtimeCode);

impl PartialEq for ExternalAirtimeCode {
    fn eq(&self, other: &Self) -> bool {
        self.0.origin() == other.0.origin()
    }
}

impl Eq for ExternalAirtimeCode {}

impl std::fmt::Debug for ExternalAirtimeCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("ExternalAirtimeCode")
            .field(self.0.origin())
            .finish()
    }
}
