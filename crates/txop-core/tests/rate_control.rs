//! Rate control in the cell: the rates the MAC sends at, against the best fixed rate
//! on the same channel.
//!
//! The reference is measured side by side: every fixed MCS of the peer on the same
//! link and seed, the best of them being what a rate control could reach at most
//! without probing. Which MCS a given SNR supports follows from the PER model of
//! `phy/channel.rs`, independent of any rate control.

mod support;

use support::cell_driver::{down, ht20, sta, Driver};
use txop_core::cell::{CellConfig, RateUse};
use txop_core::mac80211::rate_control::RateControlKind;
use txop_core::phy::channel::ErrorModel;
use txop_core::phy::{Band, Standard, TxVector};
use txop_core::{Nanos, StationId};

/// The SNRs of the static-channel checks: from the lowest usable (MCS 0's threshold,
/// 4 dB) to beyond MCS 7's (22 dB), in 3 dB steps.
const SNRS_DB: [f64; 8] = [4.0, 7.0, 10.0, 13.0, 16.0, 19.0, 22.0, 25.0];

/// Saturated downlink UDP to one HT20 station at `snr_db` for `ms` milliseconds.
struct Run {
    goodput_mbps: f64,
    rates: Vec<RateUse>,
    probe_airtime_share: f64,
}

fn run(tx: TxVector, rc: RateControlKind, snr_db: f64, ms: u64) -> Run {
    let mut s = sta(tx, ErrorModel::Snr { snr_db });
    s.rate_control = rc;
    let cfg = CellConfig::new(Standard::N, Band::Ghz5, vec![s]);
    let mut d = Driver::new(cfg, 7, &[down(1, 0, 128)]);
    d.run_until(Nanos::from_ms(ms));
    let bytes: u64 = d.delivered().iter().map(|p| p.len_bytes as u64).sum();
    let station = StationId::all(1).next().expect("one station");
    let stats = d.cell.stats()[1].down;
    Run {
        goodput_mbps: bytes as f64 * 8.0 / (ms as f64 * 1e3),
        rates: d.cell.rate_use(station, false).to_vec(),
        probe_airtime_share: stats.probe_airtime_ns as f64 / stats.airtime_ns.max(1) as f64,
    }
}

/// The best fixed MCS (0–7) at `snr_db`: its number and goodput.
fn best_fixed(snr_db: f64, ms: u64) -> (u8, f64) {
    (0..8u8)
        .map(|mcs| {
            (
                mcs,
                run(ht20(mcs), RateControlKind::Fixed, snr_db, ms).goodput_mbps,
            )
        })
        .fold((0, 0.0), |best, x| if x.1 > best.1 { x } else { best })
}

#[test]
fn ideal_reaches_the_best_fixed_mcs_at_every_snr() {
    for snr in SNRS_DB {
        let (mcs, best) = best_fixed(snr, 500);
        let ideal = run(ht20(7), RateControlKind::Ideal, snr, 500);
        eprintln!(
            "SNR {snr:>4} dB: best fixed MCS {mcs} {best:6.2} Mbit/s, ideal {:6.2}",
            ideal.goodput_mbps
        );
        assert!(
            ideal.goodput_mbps >= 0.97 * best,
            "SNR {snr} dB: ideal {:.2} Mbit/s, best fixed (MCS {mcs}) {best:.2}",
            ideal.goodput_mbps
        );
        // The oracle uses one rate on a static channel and never probes.
        assert_eq!(ideal.rates.iter().filter(|r| r.ppdus > 0).count(), 1);
        assert_eq!(ideal.probe_airtime_share, 0.0);
    }
}
