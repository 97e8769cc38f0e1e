//! The loaded kernel airtime.c behind the core's `AirtimeCode`: kernel-oracle's
//! `shim/mac80211/airtime_api.c` (a dual-band hw set up once per thread, airtime.c
//! compiled whole), of which a run calls `ieee80211_calc_expected_tx_airtime` for a
//! station whose last reported tx rate is the packet's link's.

use crate::source::{Source, AIRTIME};
use std::path::Path;
use txop_core::mac80211::airtime_code::AirtimeCode;
use txop_core::mac80211::rate_control::CodeOrigin;
use txop_core::phy::{ChannelWidth, DsssPreamble, GuardInterval, HeGuardInterval, TxVector};

/// `struct kair_rate`: a rate as a driver reports it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
struct ReportedRate {
    band: u32,
    encoding: u32,
    idx: u32,
    nss: u32,
    width_mhz: u32,
    sgi: u32,
    short_preamble: u32,
    he_gi: u32,
}

/// `NL80211_BAND_2GHZ`.
const BAND_2GHZ: u32 = 0;
/// `NL80211_BAND_5GHZ`.
const BAND_5GHZ: u32 = 1;

/// The rate as a driver reports `txv` (as kernel-oracle's airtime test maps every rate
/// of txop's PHY): DSSS/CCK by its index in the 2.4 GHz bitrates, OFDM by its index
/// in the 5 GHz ones (the estimate is the same in either band), HT, VHT and HE by MCS,
/// streams, width and guard interval.
fn reported(txv: &TxVector) -> ReportedRate {
    let width_mhz = |w: &ChannelWidth| match w {
        ChannelWidth::Mhz20 => 20,
        ChannelWidth::Mhz40 => 40,
        ChannelWidth::Mhz80 => 80,
        ChannelWidth::Mhz160 => 160,
    };
    let base = ReportedRate {
        band: BAND_5GHZ,
        nss: 1,
        width_mhz: 20,
        ..ReportedRate::default()
    };
    match txv {
        TxVector::Dsss {
            rate_kbps,
            preamble,
        } => ReportedRate {
            band: BAND_2GHZ,
            idx: [1000, 2000, 5500, 11000]
                .iter()
                .position(|r| r == rate_kbps)
                .unwrap_or(0) as u32,
            short_preamble: u32::from(*preamble == DsssPreamble::Short),
            ..base
        },
        TxVector::Ofdm { rate_mbps } => ReportedRate {
            idx: [6, 9, 12, 18, 24, 36, 48, 54]
                .iter()
                .position(|r| r == rate_mbps)
                .unwrap_or(0) as u32,
            ..base
        },
        TxVector::Ht { mcs, width, gi } => ReportedRate {
            encoding: 1,
            idx: u32::from(*mcs),
            width_mhz: width_mhz(width),
            sgi: u32::from(*gi == GuardInterval::Short),
            ..base
        },
        TxVector::Vht {
            mcs,
            nss,
            width,
            gi,
        } => ReportedRate {
            encoding: 2,
            idx: u32::from(*mcs),
            nss: u32::from(*nss),
            width_mhz: width_mhz(width),
            sgi: u32::from(*gi == GuardInterval::Short),
            ..base
        },
        TxVector::He {
            mcs,
            nss,
            width,
            gi,
            ..
        } => ReportedRate {
            encoding: 3,
            idx: u32::from(*mcs),
            nss: u32::from(*nss),
            width_mhz: width_mhz(width),
            he_gi: match gi {
                HeGuardInterval::Us0_8 => 0,
                HeGuardInterval::Us1_6 => 1,
                HeGuardInterval::Us3_2 => 2,
            },
            ..base
        },
    }
}

type ExpectedFn = unsafe extern "C" fn(*const ReportedRate, i32, u32) -> u32;

/// The kernel's airtime.c, built and loaded. Lives as long as the process.
pub struct KernelAirtimeCode {
    origin: CodeOrigin,
    expected: ExpectedFn,
}

impl KernelAirtimeCode {
    /// Build (or find in the cache) and load the code of `src` (`None`: the tarball).
    pub(crate) fn build(src: Option<&Path>) -> Result<&'static KernelAirtimeCode, String> {
        let source = Source::read(&AIRTIME, src)?;
        let (object, fnv64) = source.build()?;
        let lib = crate::load(&object)?;
        Ok(Box::leak(Box::new(KernelAirtimeCode {
            origin: CodeOrigin {
                unit: AIRTIME.name,
                path: source.path,
                version: source.version,
                fnv64: format!("{fnv64:016x}"),
            },
            expected: crate::sym(lib, &object, "kair_expected")?,
        })))
    }
}

impl AirtimeCode for KernelAirtimeCode {
    fn origin(&self) -> &CodeOrigin {
        &self.origin
    }

    fn expected_tx_airtime_us(&self, len_bytes: u32, rate: &TxVector, ampdu: bool) -> u32 {
        let r = reported(rate);
        let len = i32::try_from(len_bytes).unwrap_or(i32::MAX);
        // SAFETY: `r` outlives the call; the shim's hw is per thread.
        unsafe { (self.expected)(&r, len, u32::from(ampdu)) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The mapping gives each rate of a kind its own index (the table's order), so
    /// that no two rates the PHY has are reported alike.
    #[test]
    fn every_legacy_rate_has_its_own_index() {
        let dsss: Vec<u32> = [1000, 2000, 5500, 11000]
            .into_iter()
            .map(|k| {
                reported(&TxVector::Dsss {
                    rate_kbps: k,
                    preamble: DsssPreamble::Long,
                })
                .idx
            })
            .collect();
        assert_eq!(dsss, [0, 1, 2, 3]);
        let ofdm: Vec<u32> = [6, 9, 12, 18, 24, 36, 48, 54]
            .into_iter()
            .map(|m| reported(&TxVector::Ofdm { rate_mbps: m }).idx)
            .collect();
        assert_eq!(ofdm, [0, 1, 2, 3, 4, 5, 6, 7]);
    }
}
