//! A link's SNR over time: a mean (fixed, from the geometry, or from a trace) plus
//! fading.
//!
//! [`LinkChannel::snr_db`] is a pure function of time: the run's seed and the link's key
//! are stored in the channel, fading is a stateless function of (seed, link, block)
//! ([`super::fading`]), mobility and traces are functions of time. The MAC evaluates it
//! for each PPDU (at the PPDU's start) and an `ideal` rate control when it builds one,
//! and both see the same SNR. An evaluation allocates nothing: a trace lookup is a
//! binary search, a fading block a fresh small RNG.

use super::fading::Fading;
use super::mobility::Mobility;
use super::path_loss::LogDistance;
use super::snr_trace::SnrTrace;
use crate::Nanos;

/// Where a link's mean SNR comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum MeanSnr {
    /// A fixed SNR, dB.
    Fixed {
        /// The SNR, dB.
        snr_db: f64,
    },
    /// From the distance between the transmitter and the receiver as they move, through
    /// a log-distance path loss ([`super::path_loss`]).
    Geometry {
        /// How the transmitter moves.
        tx: Mobility,
        /// How the receiver moves.
        rx: Mobility,
        /// The link budget: transmit power, exponent, band and width.
        path_loss: LogDistance,
    },
    /// Replayed from a trace.
    Trace(SnrTrace),
}

impl MeanSnr {
    /// The mean SNR (dB) at `t`.
    pub fn snr_db(&self, t: Nanos) -> f64 {
        match self {
            MeanSnr::Fixed { snr_db } => *snr_db,
            MeanSnr::Geometry { tx, rx, path_loss } => {
                path_loss.snr_db(tx.position_at(t).distance_m(rx.position_at(t)))
            }
            MeanSnr::Trace(trace) => trace.snr_db(t),
        }
    }

    /// Whether the mean never changes.
    pub fn is_static(&self) -> bool {
        match self {
            MeanSnr::Fixed { .. } => true,
            MeanSnr::Geometry { tx, rx, .. } => tx.is_still() && rx.is_still(),
            MeanSnr::Trace(trace) => trace.is_constant(),
        }
    }
}

/// The SNR of one direction of a link over time.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkChannel {
    /// The mean SNR over time.
    pub mean: MeanSnr,
    /// The fading around it.
    pub fading: Fading,
    /// The run's seed (fading draws from it). [`crate::Cell::new`] sets it to the cell's
    /// seed, so a run seeded anew (`--seed`) fades anew.
    pub seed: u64,
    /// The link's fading key: links with the same key (and fading) fade together, links
    /// with different keys independently.
    pub link_key: u64,
}

impl LinkChannel {
    /// A channel with mean `mean` and fading `fading` on link `link_key` of a run seeded
    /// with `seed`.
    pub fn new(mean: MeanSnr, fading: Fading, seed: u64, link_key: u64) -> LinkChannel {
        LinkChannel {
            mean,
            fading,
            seed,
            link_key,
        }
    }

    /// A fixed SNR without fading.
    pub fn fixed(snr_db: f64) -> LinkChannel {
        LinkChannel::new(MeanSnr::Fixed { snr_db }, Fading::None, 0, 0)
    }

    /// The SNR (dB) at `t`: the mean plus the fading gain.
    pub fn snr_db(&self, t: Nanos) -> f64 {
        self.mean.snr_db(t) + self.fading.gain_db(self.seed, self.link_key, t)
    }

    /// The mean SNR (dB) at `t`, without fading.
    pub fn mean_snr_db(&self, t: Nanos) -> f64 {
        self.mean.snr_db(t)
    }

    /// Whether the SNR never changes: a static mean and no fading.
    pub fn is_static(&self) -> bool {
        self.mean.is_static() && self.fading == Fading::None
    }

    /// Check the channel: a finite fixed SNR, valid movements and fading. The error
    /// says what is wrong.
    pub fn validate(&self) -> Result<(), String> {
        match &self.mean {
            MeanSnr::Fixed { snr_db } if !snr_db.is_finite() => {
                return Err(format!("SNR must be a finite number of dB, got {snr_db}"));
            }
            MeanSnr::Geometry { tx, rx, path_loss } => {
                tx.validate().map_err(|e| format!("transmitter: {e}"))?;
                rx.validate().map_err(|e| format!("receiver: {e}"))?;
                if !(path_loss.tx_power_dbm.is_finite() && path_loss.exponent.is_finite()) {
                    return Err("the transmit power and path-loss exponent must be finite".into());
                }
            }
            MeanSnr::Fixed { .. } | MeanSnr::Trace(_) => {}
        }
        self.fading.validate()
    }
}

/// A station's channel: the AP → station (downlink) and station → AP (uplink)
/// directions.
#[derive(Clone, Debug, PartialEq)]
pub struct StationChannel {
    /// AP → station: what the station receives.
    pub down: LinkChannel,
    /// Station → AP: what the AP receives.
    pub up: LinkChannel,
}

impl StationChannel {
    /// The direction from `from_ap` (true: the downlink).
    pub fn direction(&self, from_ap: bool) -> &LinkChannel {
        if from_ap {
            &self.down
        } else {
            &self.up
        }
    }

    /// Seed both directions' fading with the run's `seed`.
    pub fn set_seed(&mut self, seed: u64) {
        self.down.seed = seed;
        self.up.seed = seed;
    }

    /// Whether neither direction ever changes.
    pub fn is_static(&self) -> bool {
        self.down.is_static() && self.up.is_static()
    }

    /// Check both directions; the error names the direction.
    pub fn validate(&self) -> Result<(), String> {
        self.down.validate().map_err(|e| format!("downlink: {e}"))?;
        self.up.validate().map_err(|e| format!("uplink: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::super::mobility::Position;
    use super::super::snr_trace::{Interpolation, TracePoint};
    use super::super::{Band, ChannelWidth};
    use super::*;

    fn budget() -> LogDistance {
        LogDistance {
            tx_power_dbm: 20.0,
            exponent: 3.5,
            band: Band::Ghz5,
            width: ChannelWidth::Mhz20,
        }
    }

    /// A station walking away at 1 m/s from 1 m: the SNR at 10 s is the path loss's at
    /// 11 m, and each decade of distance costs 35 dB.
    #[test]
    fn geometry_follows_the_path_loss() {
        let ch = LinkChannel::new(
            MeanSnr::Geometry {
                tx: Mobility::Still(Position::default()),
                rx: Mobility::ConstantVelocity {
                    start: Position::new(1.0, 0.0),
                    velocity_mps: (1.0, 0.0),
                },
                path_loss: budget(),
            },
            Fading::None,
            1,
            1,
        );
        assert!(!ch.is_static());
        assert_eq!(ch.snr_db(Nanos::from_secs(10)), budget().snr_db(11.0));
        let drop = ch.snr_db(Nanos::ZERO) - ch.snr_db(Nanos::from_secs(9));
        assert!((drop - 35.0).abs() < 1e-9, "{drop}");
        let still = LinkChannel::new(
            MeanSnr::Geometry {
                tx: Mobility::Still(Position::new(10.0, 0.0)),
                rx: Mobility::Still(Position::default()),
                path_loss: budget(),
            },
            Fading::None,
            1,
            1,
        );
        assert!(still.is_static());
        assert_eq!(still.snr_db(Nanos::from_secs(3)), budget().snr_db(10.0));
    }

    /// Fading adds its gain in dB to the mean; the mean alone is there too; the same
    /// channel and time give the same SNR, another seed another one.
    #[test]
    fn fading_adds_to_the_mean() {
        let fading = Fading::Rayleigh {
            coherence: Nanos::from_ms(20),
        };
        let mut ch = LinkChannel::new(MeanSnr::Fixed { snr_db: 25.0 }, fading, 9, 4);
        assert!(!ch.is_static());
        let t = Nanos::from_ms(123);
        assert_eq!(ch.mean_snr_db(t), 25.0);
        assert_eq!(ch.snr_db(t), 25.0 + fading.gain_db(9, 4, t));
        assert_eq!(ch.snr_db(t), ch.clone().snr_db(t));
        let before = ch.snr_db(t);
        ch.seed = 10;
        assert_ne!(ch.snr_db(t), before);
        assert!(LinkChannel::fixed(3.0).is_static());
    }

    #[test]
    fn trace_mean_and_station_directions() {
        let trace = SnrTrace::new(
            vec![
                TracePoint {
                    at: Nanos::ZERO,
                    snr_db: 30.0,
                },
                TracePoint {
                    at: Nanos::from_secs(2),
                    snr_db: 10.0,
                },
            ],
            Interpolation::Linear,
        )
        .unwrap();
        let down = LinkChannel::new(MeanSnr::Trace(trace), Fading::None, 1, 1);
        assert_eq!(down.snr_db(Nanos::from_secs(1)), 20.0);
        let mut sc = StationChannel {
            down,
            up: LinkChannel::fixed(15.0),
        };
        assert!(!sc.is_static());
        assert_eq!(sc.direction(true).snr_db(Nanos::from_secs(3)), 10.0);
        assert_eq!(sc.direction(false).snr_db(Nanos::from_secs(3)), 15.0);
        sc.set_seed(77);
        assert_eq!((sc.down.seed, sc.up.seed), (77, 77));
    }

    /// A cell fades its stations' channels with its own seed, whatever seed the
    /// configuration was built with (a run seeded anew fades anew).
    #[test]
    fn the_cell_seeds_its_channels() {
        use crate::cell::{Cell, CellConfig, StationConfig};
        use crate::phy::channel::ErrorModel;
        use crate::phy::{GuardInterval, Standard, TxVector};
        let fading = Fading::Rayleigh {
            coherence: Nanos::from_ms(10),
        };
        let ch = LinkChannel::new(MeanSnr::Fixed { snr_db: 30.0 }, fading, 1, 1);
        let mut sta = StationConfig::new(
            TxVector::Ht {
                mcs: 7,
                width: ChannelWidth::Mhz20,
                gi: GuardInterval::Long,
            },
            ErrorModel::Snr { snr_db: 30.0 },
        );
        sta.channel = Some(StationChannel {
            down: ch.clone(),
            up: ch,
        });
        let cfg = CellConfig::new(Standard::N, Band::Ghz5, vec![sta]);
        let cell = Cell::new(cfg, 42).unwrap();
        let got = cell.config().stations[0].channel.as_ref().unwrap();
        assert_eq!((got.down.seed, got.up.seed), (42, 42));
    }
}
