//! Space: where the nodes are, what each receives from each, and what its radio makes
//! of it (carrier sense thresholds, capture).
//!
//! Without a [`SpaceConfig`] a cell is one collision domain: every node hears every
//! other and two overlapping frames are both lost. With one, every pair of nodes has a
//! received power (transmit power minus path loss, from positions through the
//! log-distance model of [`super::path_loss`] or from a matrix the scenario gives), and
//! the MAC gives every node its own view of the medium and decides each reception by
//! its SINR (`air/medium/spatial.rs`, `air/medium/reception.rs`).
//!
//! Placed nodes may walk ([`Walker`]): a PPDU's power at every receiver is then the
//! log-distance loss between where its sender and the receiver stand at the PPDU's
//! start ([`RadioMap::rx_mw_at`]), the granularity at which a link's SNR follows a
//! moving station without space (`link_channel.rs`: the MAC evaluates it at each
//! PPDU's start).

use super::mobility::{Mobility, Position};
use super::path_loss::{noise_dbm, path_loss_db};
use super::{Band, ChannelWidth};
use crate::Nanos;

/// Preamble detection threshold for a 20 MHz OFDM PPDU: a receiver that is idle locks
/// on a PPDU at least this strong and holds CCA busy for its duration (802.11-2016
/// 17.3.10.6, "CCA-PD": −82 dBm for 20 MHz).
pub const CCA_PREAMBLE_DBM: f64 = -82.0;

/// Energy detection threshold: any energy at least this strong holds CCA busy, frame or
/// not (802.11-2016 17.3.10.6: 20 dB above the minimum sensitivity, −62 dBm).
pub const CCA_ENERGY_DBM: f64 = -62.0;

/// The SINR a preamble needs for the receiver to lock on it (ns-3's
/// `ThresholdPreambleDetectionModel` default, 4 dB).
pub const PREAMBLE_MIN_SINR_DB: f64 = 4.0;

/// How much stronger a later frame must be than the one a receiver is locked on to take
/// the receiver over (message-in-message capture, [`Capture`]).
pub const CAPTURE_MARGIN_DB: f64 = 10.0;

/// How a receiver already locked on a frame treats a later, stronger one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Capture {
    /// Never: the receiver stays on the first frame it locked on, and the later frame is
    /// interference (the textbook receiver; ns-3 3.37 without a frame capture model).
    Off,
    /// Message-in-message: a later frame whose power exceeds the locked frame's by at
    /// least `margin_db`, arriving at any point of it, makes the receiver drop the first
    /// and lock on the second (which then has the first as interference). Atheros
    /// receivers behave so (Lee et al., "An experimental study on the capture effect in
    /// 802.11a networks", WiNTECH 2007); ns-3's `SimpleFrameCaptureModel` is the same
    /// rule limited to the first frame's preamble.
    Restart {
        /// The power margin, dB.
        margin_db: f64,
    },
}

/// Where the nodes are: positions, or the path loss of every pair.
#[derive(Clone, Debug, PartialEq)]
pub enum Placement {
    /// One position per node (the AP first, then the stations in order); the path loss
    /// is log-distance with `exponent` (free space to 1 m, [`path_loss_db`]).
    Positions {
        /// Per node, AP first.
        positions: Vec<Position>,
        /// The path-loss exponent beyond 1 m.
        exponent: f64,
    },
    /// The path loss (dB) between every pair, `loss_db[i][j]` from node `i` to node `j`
    /// (AP first); the diagonal is ignored.
    PathLossDb(Vec<Vec<f64>>),
}

/// A placed node that moves: its index in the placement and how it moves (its entry in
/// [`Placement::Positions`] is where it stands at 0 s).
#[derive(Clone, Debug, PartialEq)]
pub struct Walker {
    /// Its index in the placement (AP first).
    pub node: usize,
    /// How it moves.
    pub mobility: Mobility,
}

/// Space for a cell: placement, transmit power and the receivers' thresholds.
///
/// The placement may hold the nodes of several cells sharing one channel (several BSSs):
/// this cell's AP is node `first_node` of it and its stations follow in order; the other
/// cells' nodes are neighbours it hears and interferes with.
#[derive(Clone, Debug, PartialEq)]
pub struct SpaceConfig {
    /// Where the nodes are.
    pub placement: Placement,
    /// This cell's AP's index in the placement.
    pub first_node: usize,
    /// Every node's transmit power, dBm.
    pub tx_power_dbm: f64,
    /// The preamble detection threshold, dBm ([`CCA_PREAMBLE_DBM`]).
    pub cca_preamble_dbm: f64,
    /// The energy detection threshold, dBm ([`CCA_ENERGY_DBM`]).
    pub cca_energy_dbm: f64,
    /// The capture rule.
    pub capture: Capture,
    /// The nodes that move (with [`Placement::Positions`] only: a matrix places no one,
    /// so no one can walk in it).
    pub walkers: Vec<Walker>,
}

impl SpaceConfig {
    /// Space from `placement` at `tx_power_dbm`, with the standard's thresholds and
    /// message-in-message capture at [`CAPTURE_MARGIN_DB`].
    pub fn new(placement: Placement, tx_power_dbm: f64) -> SpaceConfig {
        SpaceConfig {
            placement,
            first_node: 0,
            tx_power_dbm,
            cca_preamble_dbm: CCA_PREAMBLE_DBM,
            cca_energy_dbm: CCA_ENERGY_DBM,
            capture: Capture::Restart {
                margin_db: CAPTURE_MARGIN_DB,
            },
            walkers: Vec::new(),
        }
    }

    /// Number of nodes the placement covers.
    pub fn nodes(&self) -> usize {
        match &self.placement {
            Placement::Positions { positions, .. } => positions.len(),
            Placement::PathLossDb(m) => m.len(),
        }
    }

    /// Check the values, for a cell of `nodes` nodes (from `first_node` on). The error
    /// names the problem.
    pub fn validate(&self, nodes: usize) -> Result<(), String> {
        let finite = |v: f64, what: &str| {
            if v.is_finite() {
                Ok(())
            } else {
                Err(format!("{what} must be a finite number, got {v}"))
            }
        };
        finite(self.tx_power_dbm, "transmit power")?;
        finite(self.cca_preamble_dbm, "preamble detection threshold")?;
        finite(self.cca_energy_dbm, "energy detection threshold")?;
        if let Capture::Restart { margin_db } = self.capture {
            if !(margin_db.is_finite() && margin_db >= 0.0) {
                return Err(format!(
                    "capture margin must be a non-negative number of dB, got {margin_db}"
                ));
            }
        }
        if self.nodes() < self.first_node + nodes {
            return Err(format!(
                "space places {} nodes, too few for a cell of {nodes} from node {}",
                self.nodes(),
                self.first_node
            ));
        }
        match &self.placement {
            Placement::Positions {
                positions,
                exponent,
            } => {
                finite(*exponent, "path-loss exponent")?;
                for (i, p) in positions.iter().enumerate() {
                    finite(p.x_m, &format!("node {i}'s x"))?;
                    finite(p.y_m, &format!("node {i}'s y"))?;
                }
                for w in &self.walkers {
                    if w.node >= positions.len() {
                        return Err(format!(
                            "node {} walks, but the space places {} nodes",
                            w.node,
                            positions.len()
                        ));
                    }
                    w.mobility
                        .validate()
                        .map_err(|e| format!("node {}'s walk: {e}", w.node))?;
                }
            }
            Placement::PathLossDb(_) if !self.walkers.is_empty() => {
                return Err(format!(
                    "node {} walks, but a path-loss matrix places no one",
                    self.walkers[0].node
                ));
            }
            Placement::PathLossDb(m) => {
                for (i, row) in m.iter().enumerate() {
                    if row.len() != m.len() {
                        return Err(format!(
                            "path-loss row {i} has {} entries, expected {}",
                            row.len(),
                            m.len()
                        ));
                    }
                    for (j, &v) in row.iter().enumerate() {
                        if i != j && !(v.is_finite() && v >= 0.0) {
                            return Err(format!(
                                "path loss from node {i} to node {j} must be a non-negative number of dB, got {v}"
                            ));
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

/// What every node receives from every other, resolved once from a [`SpaceConfig`]:
/// received powers in dBm and mW, and the thresholds in mW.
#[derive(Clone, Debug)]
pub struct RadioMap {
    n: usize,
    /// `rx_dbm[i * n + j]`: node `j`'s received power from node `i`.
    rx_dbm: Vec<f64>,
    rx_mw: Vec<f64>,
    /// The noise floor, dBm and mW.
    pub noise_dbm: f64,
    /// The noise floor in mW.
    pub noise_mw: f64,
    /// Preamble detection threshold, dBm.
    pub preamble_dbm: f64,
    /// The same in mW.
    pub preamble_mw: f64,
    /// [`PREAMBLE_MIN_SINR_DB`] as a power ratio.
    pub preamble_sinr: f64,
    /// Energy detection threshold, mW.
    pub energy_mw: f64,
    /// Below this a node does not hear a PPDU at all: 20 dB under the noise floor, where
    /// it moves an SINR by under 0.05 dB.
    pub floor_mw: f64,
    /// The capture rule.
    pub capture: Capture,
    /// Under [`Capture::Restart`], its margin as a power ratio (`None`: no capture).
    pub capture_ratio: Option<f64>,
    /// How the nodes move, when some walk (`None`: every power is in the table).
    motion: Option<Box<Motion>>,
}

/// Where every node of a [`RadioMap`] is over time, when some walk, and the link budget
/// that turns their distance into a received power.
#[derive(Clone, Debug)]
struct Motion {
    /// Per node: whether it walks.
    walks: Vec<bool>,
    /// Per node: how it moves (still for those that do not walk).
    mobility: Vec<Mobility>,
    tx_power_dbm: f64,
    exponent: f64,
    band: Band,
}

impl Motion {
    /// Node `to`'s received power from node `from` when both stand where they are at
    /// `t`, dBm: the same log-distance loss the table holds for nodes standing still.
    fn rx_dbm(&self, from: usize, to: usize, t: Nanos) -> f64 {
        let d = self.mobility[from]
            .position_at(t)
            .distance_m(self.mobility[to].position_at(t));
        self.tx_power_dbm - path_loss_db(self.exponent, self.band, d)
    }
}

/// dBm to mW.
pub fn dbm_to_mw(dbm: f64) -> f64 {
    10f64.powf(dbm / 10.0)
}

/// mW to dBm (−∞ for 0 mW).
pub fn mw_to_dbm(mw: f64) -> f64 {
    10.0 * mw.log10()
}

impl RadioMap {
    /// Resolve `space` for `band` and `width` (the noise floor).
    pub fn new(space: &SpaceConfig, band: Band, width: ChannelWidth) -> RadioMap {
        let n = space.nodes();
        let motion = match &space.placement {
            Placement::Positions {
                positions,
                exponent,
            } if !space.walkers.is_empty() => {
                let mut mobility: Vec<Mobility> =
                    positions.iter().map(|&p| Mobility::Still(p)).collect();
                let mut walks = vec![false; n];
                for w in &space.walkers {
                    mobility[w.node] = w.mobility.clone();
                    walks[w.node] = true;
                }
                Some(Box::new(Motion {
                    walks,
                    mobility,
                    tx_power_dbm: space.tx_power_dbm,
                    exponent: *exponent,
                    band,
                }))
            }
            _ => None,
        };
        let mut rx_dbm = vec![f64::NEG_INFINITY; n * n];
        for i in 0..n {
            for j in 0..n {
                if i == j {
                    continue;
                }
                rx_dbm[i * n + j] = match (&motion, &space.placement) {
                    // A walker's entry: where it stands at 0 s.
                    (Some(m), _) => m.rx_dbm(i, j, Nanos::ZERO),
                    (
                        None,
                        Placement::Positions {
                            positions,
                            exponent,
                        },
                    ) => {
                        space.tx_power_dbm
                            - path_loss_db(*exponent, band, positions[i].distance_m(positions[j]))
                    }
                    (None, Placement::PathLossDb(m)) => space.tx_power_dbm - m[i][j],
                };
            }
        }
        let noise = noise_dbm(width);
        RadioMap {
            n,
            rx_mw: rx_dbm.iter().map(|&d| dbm_to_mw(d)).collect(),
            rx_dbm,
            noise_dbm: noise,
            noise_mw: dbm_to_mw(noise),
            preamble_dbm: space.cca_preamble_dbm,
            preamble_mw: dbm_to_mw(space.cca_preamble_dbm),
            preamble_sinr: dbm_to_mw(PREAMBLE_MIN_SINR_DB),
            energy_mw: dbm_to_mw(space.cca_energy_dbm),
            floor_mw: dbm_to_mw(noise - 20.0),
            capture: space.capture,
            capture_ratio: match space.capture {
                Capture::Off => None,
                Capture::Restart { margin_db } => Some(dbm_to_mw(margin_db)),
            },
            motion,
        }
    }

    /// Whether some node walks: then the powers involving it change over time
    /// ([`RadioMap::rx_mw_at`]), and the table holds them as at 0 s.
    pub fn walks(&self) -> bool {
        self.motion.is_some()
    }

    /// Whether node `node` walks.
    pub fn node_walks(&self, node: usize) -> bool {
        self.motion.as_ref().is_some_and(|m| m.walks[node])
    }

    /// Node `to`'s received power from node `from` when both stand where they are at
    /// `t`, dBm ([`RadioMap::rx_dbm`] when neither walks).
    #[inline]
    pub fn rx_dbm_at(&self, from: usize, to: usize, t: Nanos) -> f64 {
        match &self.motion {
            Some(m) if m.walks[from] || m.walks[to] => m.rx_dbm(from, to, t),
            _ => self.rx_dbm(from, to),
        }
    }

    /// Node `to`'s received power from node `from` when both stand where they are at
    /// `t`, mW. The medium asks it for a PPDU at the PPDU's start, at its start and at
    /// its end alike, so what a PPDU added to a receiver's energy is what it takes away.
    #[inline]
    pub fn rx_mw_at(&self, from: usize, to: usize, t: Nanos) -> f64 {
        match &self.motion {
            Some(m) if m.walks[from] || m.walks[to] => dbm_to_mw(m.rx_dbm(from, to, t)),
            _ => self.rx_mw(from, to),
        }
    }

    /// Whether node `to` detects the preamble of a frame node `from` starts at `t`.
    pub fn detects_at(&self, from: usize, to: usize, t: Nanos) -> bool {
        self.rx_dbm_at(from, to, t) >= self.preamble_dbm
    }

    /// Number of nodes.
    pub fn nodes(&self) -> usize {
        self.n
    }

    /// Node `to`'s received power from node `from`, dBm.
    #[inline]
    pub fn rx_dbm(&self, from: usize, to: usize) -> f64 {
        self.rx_dbm[from * self.n + to]
    }

    /// Node `to`'s received power from node `from`, mW.
    #[inline]
    pub fn rx_mw(&self, from: usize, to: usize) -> f64 {
        self.rx_mw[from * self.n + to]
    }

    /// Whether node `to` detects the preamble of a frame from node `from` (power at or
    /// above the preamble detection threshold).
    #[inline]
    pub fn detects(&self, from: usize, to: usize) -> bool {
        self.rx_dbm(from, to) >= self.preamble_dbm
    }

    /// Node `to`'s mean SNR (dB) for frames from node `from`.
    pub fn snr_db(&self, from: usize, to: usize) -> f64 {
        self.rx_dbm(from, to) - self.noise_dbm
    }

    /// Whether every node detects every other's preamble: the cell is one collision
    /// domain as far as carrier sense goes.
    pub fn all_detect_all(&self) -> bool {
        (0..self.n).all(|i| (0..self.n).all(|j| i == j || self.detects(i, j)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(xs: &[f64]) -> SpaceConfig {
        SpaceConfig::new(
            Placement::Positions {
                positions: xs.iter().map(|&x| Position::new(x, 0.0)).collect(),
                exponent: 3.5,
            },
            20.0,
        )
    }

    #[test]
    fn received_power_is_transmit_power_minus_log_distance_loss() {
        let map = RadioMap::new(&line(&[0.0, 10.0]), Band::Ghz5, ChannelWidth::Mhz20);
        // 20 dBm − (46.77 + 35) dB at 10 m = −61.77 dBm; SNR 32.22 dB over −93.99 dBm,
        // as `path_loss`'s own figures say.
        assert!(
            (map.rx_dbm(0, 1) + 61.77).abs() < 0.01,
            "{}",
            map.rx_dbm(0, 1)
        );
        assert_eq!(map.rx_dbm(0, 1), map.rx_dbm(1, 0));
        assert!((map.snr_db(0, 1) - 32.22).abs() < 0.01);
        assert!((mw_to_dbm(map.rx_mw(0, 1)) - map.rx_dbm(0, 1)).abs() < 1e-9);
    }

    #[test]
    fn hidden_stations_detect_the_ap_but_not_each_other() {
        // −82 dBm is reached at 10^((20 + 82 − 46.77) / 35) = 37.8 m with n = 3.5.
        let map = RadioMap::new(&line(&[0.0, -30.0, 30.0]), Band::Ghz5, ChannelWidth::Mhz20);
        assert!(map.detects(0, 1) && map.detects(1, 0) && map.detects(0, 2));
        assert!(!map.detects(1, 2) && !map.detects(2, 1));
        assert!(!map.all_detect_all());
        let near = RadioMap::new(&line(&[0.0, -5.0, 5.0]), Band::Ghz5, ChannelWidth::Mhz20);
        assert!(near.all_detect_all());
    }

    /// Two stations 10 m apart walk apart at 1 m/s each along x (one by velocity, one
    /// by waypoints): at 20 s they stand at ±25 m, 50 m apart, where −86.2 dBm is under
    /// the preamble threshold (−82 dBm is reached at 37.8 m). Every power involving a
    /// walker is the log-distance loss between where the two stand then; the AP's
    /// powers to the still station and the table (as at 0 s) do not move.
    #[test]
    fn walkers_powers_follow_where_they_stand() {
        let mut space = line(&[0.0, -5.0, 5.0, 30.0]);
        space.walkers = vec![
            Walker {
                node: 1,
                mobility: Mobility::ConstantVelocity {
                    start: Position::new(-5.0, 0.0),
                    velocity_mps: (-1.0, 0.0),
                },
            },
            Walker {
                node: 2,
                mobility: Mobility::Waypoints(vec![
                    super::super::mobility::Waypoint {
                        at: Nanos::ZERO,
                        position: Position::new(5.0, 0.0),
                    },
                    super::super::mobility::Waypoint {
                        at: Nanos::from_secs(20),
                        position: Position::new(25.0, 0.0),
                    },
                ]),
            },
        ];
        space.validate(4).unwrap();
        let map = RadioMap::new(&space, Band::Ghz5, ChannelWidth::Mhz20);
        assert!(map.walks() && map.node_walks(1) && map.node_walks(2));
        assert!(!map.node_walks(0) && !map.node_walks(3));
        let still = RadioMap::new(
            &line(&[0.0, -5.0, 5.0, 30.0]),
            Band::Ghz5,
            ChannelWidth::Mhz20,
        );
        let budget = |d: f64| 20.0 - path_loss_db(3.5, Band::Ghz5, d);
        let t20 = Nanos::from_secs(20);
        for (from, to) in [(0, 1), (1, 2), (2, 3), (3, 0), (0, 3)] {
            // At 0 s the table is the still placement's, and so is every power at 0 s.
            assert_eq!(map.rx_dbm(from, to), still.rx_dbm(from, to));
            assert_eq!(map.rx_dbm_at(from, to, Nanos::ZERO), still.rx_dbm(from, to));
        }
        assert_eq!(map.rx_dbm_at(1, 2, t20), budget(50.0));
        assert_eq!(map.rx_dbm_at(2, 1, t20), budget(50.0));
        assert_eq!(map.rx_dbm_at(0, 1, t20), budget(25.0));
        assert_eq!(map.rx_dbm_at(2, 3, t20), budget(5.0));
        assert_eq!(map.rx_dbm_at(3, 0, t20), still.rx_dbm(3, 0));
        assert_eq!(
            map.rx_dbm(1, 2),
            still.rx_dbm(1, 2),
            "the table stays at 0 s"
        );
        assert!((mw_to_dbm(map.rx_mw_at(1, 2, t20)) - budget(50.0)).abs() < 1e-9);
        // Halfway (10 s, 30 m apart) they still detect each other; at 20 s they are
        // hidden from each other but both still reach the AP.
        assert!(map.detects_at(1, 2, Nanos::from_secs(10)));
        assert!((budget(50.0) + 86.2).abs() < 0.05, "{}", budget(50.0));
        assert!(!map.detects_at(1, 2, t20) && !map.detects_at(2, 1, t20));
        assert!(map.detects_at(0, 1, t20) && map.detects_at(2, 0, t20));
        // Waypoints hold the last point after it.
        assert_eq!(map.rx_dbm_at(2, 3, Nanos::from_secs(99)), budget(5.0));
        assert!(!still.walks());
    }

    #[test]
    fn a_walk_needs_positions_and_a_node() {
        let walker = |node| Walker {
            node,
            mobility: Mobility::ConstantVelocity {
                start: Position::default(),
                velocity_mps: (1.0, 0.0),
            },
        };
        let mut matrix = SpaceConfig::new(
            Placement::PathLossDb(vec![vec![0.0, 80.0], vec![80.0, 0.0]]),
            20.0,
        );
        matrix.walkers = vec![walker(1)];
        let e = matrix.validate(2).unwrap_err();
        assert_eq!(e, "node 1 walks, but a path-loss matrix places no one");
        let mut far = line(&[0.0, 1.0]);
        far.walkers = vec![walker(2)];
        assert_eq!(
            far.validate(2).unwrap_err(),
            "node 2 walks, but the space places 2 nodes"
        );
        far.walkers = vec![Walker {
            node: 1,
            mobility: Mobility::Waypoints(Vec::new()),
        }];
        assert!(far
            .validate(2)
            .unwrap_err()
            .starts_with("node 1's walk: at least one waypoint"));
    }

    #[test]
    fn a_matrix_gives_the_losses_as_written() {
        let m = vec![
            vec![0.0, 80.0, 90.0],
            vec![80.0, 0.0, 200.0],
            vec![90.0, 200.0, 0.0],
        ];
        let space = SpaceConfig::new(Placement::PathLossDb(m), 15.0);
        space.validate(3).unwrap();
        let map = RadioMap::new(&space, Band::Ghz5, ChannelWidth::Mhz20);
        assert_eq!(map.rx_dbm(0, 2), -75.0);
        assert_eq!(map.rx_dbm(1, 2), -185.0);
        assert!(map.detects(2, 0) && !map.detects(1, 2));
    }

    #[test]
    fn validation_names_the_problem() {
        let err = line(&[0.0, 1.0]).validate(3).unwrap_err();
        assert!(
            err.contains("places 2 nodes, too few for a cell of 3 from node 0"),
            "{err}"
        );
        let mut second = line(&[0.0, 1.0, 2.0, 3.0]);
        second.first_node = 2;
        second.validate(2).unwrap();
        second.first_node = 3;
        assert!(second.validate(2).unwrap_err().contains("from node 3"));
        let bad = SpaceConfig::new(
            Placement::PathLossDb(vec![vec![0.0, -1.0], vec![1.0, 0.0]]),
            20.0,
        );
        let err = bad.validate(2).unwrap_err();
        assert!(err.contains("from node 0 to node 1"), "{err}");
        let mut nan = line(&[0.0, 1.0]);
        nan.capture = Capture::Restart {
            margin_db: f64::NAN,
        };
        assert!(nan.validate(2).unwrap_err().contains("capture margin"));
    }
}
