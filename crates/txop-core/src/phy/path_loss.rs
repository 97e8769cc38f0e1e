//! The log-distance path-loss model: a link's mean SNR from the distance between its
//! ends.
//!
//! Free-space (Friis) loss to a 1 m reference distance at the band's centre frequency,
//! then `10·n·log10(d)` beyond it, as ns-3's `LogDistancePropagationLossModel` (reference
//! distance 1 m, reference loss from `FriisPropagationLossModel`); the noise is thermal
//! noise over the channel width with a 7 dB noise figure (ns-3's `WifiPhy` default
//! `RxNoiseFigure` is 7 dB). It is a mean: fading ([`super::fading`]) varies around it.

use super::{Band, ChannelWidth};

/// Speed of light in vacuum, m/s.
const SPEED_OF_LIGHT_MPS: f64 = 299_792_458.0;

/// The receiver's noise figure in dB (ns-3's `WifiPhy::RxNoiseFigure` default).
pub const NOISE_FIGURE_DB: f64 = 7.0;

/// The band's centre frequency in Hz: channel 6 (2.437 GHz) or 5.2 GHz.
pub fn centre_frequency_hz(band: Band) -> f64 {
    match band {
        Band::Ghz2_4 => 2.437e9,
        Band::Ghz5 => 5.2e9,
    }
}

/// The mean SNR (dB) at `distance_m` from a transmitter of `tx_dbm`: the transmit power
/// minus the path loss (free space to 1 m at the band's centre frequency, then
/// `10·exponent·log10(d)`; distances under 1 m count as 1 m) minus the thermal noise in
/// `width` (−174 dBm/Hz + 10·log10(width) + [`NOISE_FIGURE_DB`]).
///
/// At 20 dBm, exponent 3.5, 5 GHz, 20 MHz: 32.2 dB at 10 m, 15.5 dB at 30 m.
pub fn snr_at_distance(
    tx_dbm: f64,
    exponent: f64,
    band: Band,
    width: ChannelWidth,
    distance_m: f64,
) -> f64 {
    tx_dbm - path_loss_db(exponent, band, distance_m) - noise_dbm(width)
}

/// The log-distance path loss (dB) over `distance_m`: free space to 1 m at the band's
/// centre frequency, then `10·exponent·log10(d)`; distances under 1 m count as 1 m.
pub fn path_loss_db(exponent: f64, band: Band, distance_m: f64) -> f64 {
    let centre_hz = centre_frequency_hz(band);
    let loss_1m_db = 20.0 * (4.0 * std::f64::consts::PI * centre_hz / SPEED_OF_LIGHT_MPS).log10();
    loss_1m_db + 10.0 * exponent * distance_m.max(1.0).log10()
}

/// The receiver's noise floor (dBm) in `width`: thermal noise (−174 dBm/Hz +
/// 10·log10(width)) plus [`NOISE_FIGURE_DB`]: −93.99 dBm in 20 MHz.
pub fn noise_dbm(width: ChannelWidth) -> f64 {
    let width_hz: f64 = match width {
        ChannelWidth::Mhz20 => 20e6,
        ChannelWidth::Mhz40 => 40e6,
        ChannelWidth::Mhz80 => 80e6,
        ChannelWidth::Mhz160 => 160e6,
    };
    -174.0 + 10.0 * width_hz.log10() + NOISE_FIGURE_DB
}

/// A log-distance link budget: everything [`snr_at_distance`] needs but the distance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LogDistance {
    /// The transmitter's power in dBm.
    pub tx_power_dbm: f64,
    /// The path-loss exponent `n` beyond 1 m (2 free space, 3–4 indoors).
    pub exponent: f64,
    /// The band: its centre frequency sets the 1 m loss.
    pub band: Band,
    /// The channel width: it sets the noise power.
    pub width: ChannelWidth,
}

impl LogDistance {
    /// The mean SNR (dB) at `distance_m` ([`snr_at_distance`]).
    pub fn snr_db(&self, distance_m: f64) -> f64 {
        snr_at_distance(
            self.tx_power_dbm,
            self.exponent,
            self.band,
            self.width,
            distance_m,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against a hand calculation: at 5.2 GHz the 1 m free-space loss is
    /// 20·log10(4π·5.2e9/c) = 46.77 dB; 20 MHz of noise with a 7 dB noise figure is
    /// −174 + 73.01 + 7 = −93.99 dBm. At 10 m, n = 3.5: 20 − (46.77 + 35) + 93.99 = 32.22.
    #[test]
    fn log_distance_against_a_hand_calculation() {
        let snr = snr_at_distance(20.0, 3.5, Band::Ghz5, ChannelWidth::Mhz20, 10.0);
        assert!((snr - 32.22).abs() < 0.01, "{snr}");
        // Each decade of distance costs 10·n dB; under 1 m counts as 1 m.
        let near = snr_at_distance(20.0, 3.5, Band::Ghz5, ChannelWidth::Mhz20, 1.0);
        assert!((near - snr - 35.0).abs() < 1e-9);
        let closer = snr_at_distance(20.0, 3.5, Band::Ghz5, ChannelWidth::Mhz20, 0.1);
        assert_eq!(near, closer);
        // Doubling the width doubles the noise: 3.01 dB less.
        let wide = snr_at_distance(20.0, 3.5, Band::Ghz5, ChannelWidth::Mhz40, 10.0);
        assert!((snr - wide - 10.0 * 2f64.log10()).abs() < 1e-9);
        let budget = LogDistance {
            tx_power_dbm: 20.0,
            exponent: 3.5,
            band: Band::Ghz5,
            width: ChannelWidth::Mhz20,
        };
        assert_eq!(budget.snr_db(10.0), snr);
    }
}
