//! `[space]`: where the AP and its stations stand and what their radios hear
//! (`txop_core::phy::space`). Its presence turns space on: every node senses the medium
//! for itself and receptions are decided by SINR, so two stations out of each other's
//! range are hidden from each other.
//!
//! The placement comes from the stations' own keys (`position_m`, or `distance_m` as
//! the point `[d, 0]` from the AP, or spread around the AP by `layout = "ring"`), or
//! from a path-loss matrix. Either way a station's link SNR (its error model and
//! channel) follows from the same path losses the space uses, so the two never
//! disagree. A station placed by position may walk (`velocity_mps`, `waypoints`): its
//! link's SNR follows it as without space, and the space's powers to and from it
//! follow it PPDU by PPDU (`txop_core::phy::space::Walker`).

use super::{choose_in, DirectionSpec, Link, Scenario, ScenarioError};
use serde::{Deserialize, Serialize};
use txop_core::phy::link_channel::{MeanSnr, StationChannel};
use txop_core::phy::mobility::Position;
use txop_core::phy::path_loss::noise_dbm;
use txop_core::phy::space::{
    Capture, Placement, RadioMap, SpaceConfig, Walker, CAPTURE_MARGIN_DB, CCA_ENERGY_DBM,
    CCA_PREAMBLE_DBM,
};
use txop_core::phy::ChannelWidth;

/// The CCA thresholds a scenario may set, dBm: from below the noise floor of a 20 MHz
/// channel (−94 dBm) to far above any preamble a receiver would miss.
pub const THRESHOLD_DBM: (f64, f64) = (-100.0, -20.0);

/// The capture margin a scenario may set, dB (0: any stronger frame captures).
pub const CAPTURE_MARGIN_RANGE_DB: (f64, f64) = (0.0, 40.0);

/// The path loss a matrix entry may give, dB: 0 (the diagonal) to 500 (a pair that
/// never hears each other).
pub const MATRIX_LOSS_DB: (f64, f64) = (0.0, 500.0);

/// `[space]` as written; absent keys take the defaults of `txop_core::phy::space`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Space {
    /// "given" (default): stations stand where `position_m`, or `distance_m` as
    /// `[d, 0]` from the AP, puts them; "ring": stations given by `distance_m` are
    /// spread evenly around the AP at their distances.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layout: Option<String>,
    /// The path loss (dB) between every pair of nodes, AP first, instead of positions:
    /// `path_loss_db[i][j]` from node `i` to node `j`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path_loss_db: Option<Vec<Vec<f64>>>,
    /// Preamble detection threshold, dBm (−82).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cca_preamble_dbm: Option<f64>,
    /// Energy detection threshold, dBm (−62).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cca_energy_dbm: Option<f64>,
    /// "restart" (default: a later frame stronger by `capture_margin_db` takes the
    /// receiver over) or "off".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capture: Option<String>,
    /// The capture margin, dB (10), with `capture = "restart"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capture_margin_db: Option<f64>,
}

/// How `distance_m` stations are placed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layout {
    Given,
    Ring,
}

/// `[space]` resolved against the stations.
pub(super) struct ResolvedSpace {
    /// The cell's space.
    pub config: SpaceConfig,
    /// With a matrix: each station's (downlink, uplink) SNR in dB, from the matrix's
    /// AP → station and station → AP entries.
    pub matrix_snr_db: Option<Vec<(f64, f64)>>,
}

impl ResolvedSpace {
    /// Give station `index`'s link (0 for station 1) its SNR from the matrix, if there
    /// is one: the downlink's as the station's SNR, the uplink's as its uplink's when
    /// the matrix's two entries differ.
    pub fn place_link(&self, index: usize, link: &mut Link) {
        let Some(snrs) = &self.matrix_snr_db else {
            return;
        };
        let (down, up) = snrs[index];
        link.snr_from_matrix = true;
        link.snr_db = Some(down);
        if up != down {
            link.uplink = Some(DirectionSpec {
                snr_db: Some(up),
                ..link.uplink.clone().unwrap_or_default()
            });
        }
    }

    /// Station `index` (0 for station 1) walks if its resolved `channel` moves it: the
    /// space follows the same movement its link's SNR does (the downlink's receiver).
    pub fn walk(&mut self, index: usize, channel: Option<&StationChannel>) {
        let Some(MeanSnr::Geometry { rx, .. }) = channel.map(|c| &c.down.mean) else {
            return;
        };
        if rx.is_still() {
            return;
        }
        // The AP is node 0 of a cell's own space (`[[bss]]` renumbers when it joins the
        // BSSs' spaces).
        let node = index + 1;
        if let Placement::Positions { positions, .. } = &mut self.config.placement {
            positions[node] = rx.position_at(txop_core::Nanos::ZERO);
        }
        self.config.walkers.push(Walker {
            node,
            mobility: rx.clone(),
        });
    }
}

/// `value` (the key `key`) within `range`, in `unit`.
fn within(key: &str, value: f64, (lo, hi): (f64, f64), unit: &str) -> Result<f64, ScenarioError> {
    if value.is_finite() && (lo..=hi).contains(&value) {
        Ok(value)
    } else {
        Err(ScenarioError::new(
            format!("space.{key}"),
            format!("must be {lo} to {hi} {unit}"),
        ))
    }
}

/// The keys of a station that give its SNR: none of them goes with space, where the
/// SNR follows from the placement.
fn refuse_unplaceable(key: &str, link: &Link) -> Result<(), ScenarioError> {
    let from_placement = "the SNR follows from where the station stands (give position_m or \
                          distance_m, or space.path_loss_db)";
    let own: [(&str, bool, &str); 4] = [
        ("snr_db", link.snr_db.is_some(), from_placement),
        (
            "loss",
            link.loss.is_some(),
            "losses follow from the SINR in space",
        ),
        ("snr_trace", link.snr_trace.is_some(), from_placement),
        (
            "snr_trace_interpolation",
            link.snr_trace_interpolation.is_some(),
            from_placement,
        ),
    ];
    for (name, given, why) in own {
        if given {
            return Err(ScenarioError::new(
                format!("{key}.{name}"),
                format!("cannot be combined with [space]: {why}"),
            ));
        }
    }
    for (dir, spec) in [("downlink", &link.downlink), ("uplink", &link.uplink)] {
        let Some(d) = spec else { continue };
        for (name, given) in [
            ("snr_db", d.snr_db.is_some()),
            ("snr_trace", d.snr_trace.is_some()),
            (
                "snr_trace_interpolation",
                d.snr_trace_interpolation.is_some(),
            ),
        ] {
            if given {
                return Err(ScenarioError::new(
                    format!("{key}.{dir}.{name}"),
                    format!("cannot be combined with [space]: {from_placement}"),
                ));
            }
        }
    }
    Ok(())
}

impl Scenario {
    /// `[space]` checked and resolved for `links` (the stations, in order) in a cell of
    /// `width`; `None` without `[space]`.
    pub(super) fn resolve_space(
        &self,
        links: &[(String, Link)],
        width: ChannelWidth,
    ) -> Result<Option<ResolvedSpace>, ScenarioError> {
        let Some(s) = &self.space else {
            return Ok(None);
        };
        let cca_preamble_dbm = within(
            "cca_preamble_dbm",
            s.cca_preamble_dbm.unwrap_or(CCA_PREAMBLE_DBM),
            THRESHOLD_DBM,
            "dBm",
        )?;
        let cca_energy_dbm = within(
            "cca_energy_dbm",
            s.cca_energy_dbm.unwrap_or(CCA_ENERGY_DBM),
            THRESHOLD_DBM,
            "dBm",
        )?;
        let restart = choose_in(
            "space.capture",
            s.capture.as_deref().unwrap_or("restart"),
            &[("restart", true), ("off", false)],
        )?;
        let capture = if restart {
            Capture::Restart {
                margin_db: within(
                    "capture_margin_db",
                    s.capture_margin_db.unwrap_or(CAPTURE_MARGIN_DB),
                    CAPTURE_MARGIN_RANGE_DB,
                    "dB",
                )?,
            }
        } else {
            if s.capture_margin_db.is_some() {
                return Err(ScenarioError::new(
                    "space.capture_margin_db",
                    "applies with capture = \"restart\" only",
                ));
            }
            Capture::Off
        };
        let layout = choose_in(
            "space.layout",
            s.layout.as_deref().unwrap_or("given"),
            &[("given", Layout::Given), ("ring", Layout::Ring)],
        )?;
        // Checks phy.tx_power_dbm and phy.path_loss_exponent, naming them.
        let budget = self.path_loss(width)?;
        for (key, link) in links {
            refuse_unplaceable(key, link)?;
        }
        let (placement, matrix_snr_db) = match &s.path_loss_db {
            Some(m) => {
                if s.layout.is_some() {
                    return Err(ScenarioError::new(
                        "space.layout",
                        "cannot be combined with space.path_loss_db (the matrix places no one)",
                    ));
                }
                if self.phy.ap_position_m.is_some() {
                    return Err(ScenarioError::new(
                        "phy.ap_position_m",
                        "cannot be combined with space.path_loss_db (the matrix places no one)",
                    ));
                }
                self.check_matrix(m, links)?;
                // The station's link SNR from the matrix as from a position: transmit
                // power minus path loss over the channel's noise.
                let noise = noise_dbm(width);
                let snr = |from: usize, to: usize| budget.tx_power_dbm - m[from][to] - noise;
                let snrs = (1..m.len()).map(|k| (snr(0, k), snr(k, 0))).collect();
                (Placement::PathLossDb(m.clone()), Some(snrs))
            }
            None => {
                let positions = self.positions(layout, links, width)?;
                (
                    Placement::Positions {
                        positions,
                        exponent: budget.exponent,
                    },
                    None,
                )
            }
        };
        Ok(Some(ResolvedSpace {
            config: SpaceConfig {
                placement,
                first_node: 0,
                tx_power_dbm: budget.tx_power_dbm,
                cca_preamble_dbm,
                cca_energy_dbm,
                capture,
                walkers: Vec::new(),
            },
            matrix_snr_db,
        }))
    }

    /// `space.path_loss_db`: a square of the AP and every station, each entry 0 to
    /// [`MATRIX_LOSS_DB`]'s top with 0 on the diagonal; the stations give no place.
    fn check_matrix(&self, m: &[Vec<f64>], links: &[(String, Link)]) -> Result<(), ScenarioError> {
        let nodes = links.len() + 1;
        if m.len() != nodes {
            return Err(ScenarioError::new(
                "space.path_loss_db",
                format!(
                    "{} rows; the cell has {nodes} nodes (the AP first, then {} station{})",
                    m.len(),
                    links.len(),
                    if links.len() == 1 { "" } else { "s" }
                ),
            ));
        }
        let (lo, hi) = MATRIX_LOSS_DB;
        for (i, row) in m.iter().enumerate() {
            let key = format!("space.path_loss_db[{i}]");
            if row.len() != nodes {
                return Err(ScenarioError::new(
                    key,
                    format!("{} entries; expected {nodes}, one per node", row.len()),
                ));
            }
            for (j, &v) in row.iter().enumerate() {
                if i == j && v != 0.0 {
                    return Err(ScenarioError::new(
                        format!("{key}[{j}]"),
                        format!("the loss from node {i} to itself must be 0, got {v}"),
                    ));
                }
                if !(v.is_finite() && (lo..=hi).contains(&v)) {
                    return Err(ScenarioError::new(
                        format!("{key}[{j}]"),
                        format!("must be {lo} to {hi} dB"),
                    ));
                }
            }
        }
        let placed = "the matrix places the stations";
        let walks = "the matrix places no one, so no one can walk; give positions instead";
        for (key, link) in links {
            for (name, given, why) in [
                ("position_m", link.position_m.is_some(), placed),
                ("distance_m", link.distance_m.is_some(), placed),
                ("velocity_mps", link.velocity_mps.is_some(), walks),
                ("waypoints", link.waypoints.is_some(), walks),
            ] {
                if given {
                    return Err(ScenarioError::new(
                        format!("{key}.{name}"),
                        format!("cannot be combined with space.path_loss_db ({why})"),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Every node's position, the AP first: a station at its `position_m`, or at its
    /// `distance_m` from the AP, along +x (`given`) or at angle 2π(k−1)/n for the k-th
    /// of the n stations given by distance (`ring`).
    fn positions(
        &self,
        layout: Layout,
        links: &[(String, Link)],
        width: ChannelWidth,
    ) -> Result<Vec<Position>, ScenarioError> {
        let ap = self.ap_position()?;
        let on_ring = links
            .iter()
            .filter(|(_, l)| l.position_m.is_none() && l.distance_m.is_some())
            .count();
        let mut k = 0;
        let mut positions = vec![ap];
        for (key, link) in links {
            let p = match (link.position_m, link.distance_m) {
                (Some(p), None) => Self::position(&format!("{key}.position_m"), p)?,
                (Some(_), Some(_)) => {
                    return Err(ScenarioError::new(
                        format!("{key}.position_m"),
                        "distance_m and position_m both given; give one",
                    ))
                }
                (None, Some(d)) => {
                    if layout == Layout::Ring && link.velocity_mps.is_some() {
                        return Err(ScenarioError::new(
                            format!("{key}.velocity_mps"),
                            "cannot be combined with distance_m under space.layout = \"ring\" \
                             (a walk starts from a point: give position_m)",
                        ));
                    }
                    // Checks the distance as without space.
                    self.snr_at(&format!("{key}.distance_m"), d, width)?;
                    let angle = match layout {
                        Layout::Given => 0.0,
                        Layout::Ring => std::f64::consts::TAU * k as f64 / on_ring as f64,
                    };
                    k += 1;
                    if angle == 0.0 {
                        Position::new(ap.x_m + d, ap.y_m)
                    } else {
                        Position::new(ap.x_m + d * angle.cos(), ap.y_m + d * angle.sin())
                    }
                }
                // Where the walk starts (the waypoints are checked with the station's
                // channel; `ResolvedSpace::walk` then places it at its position at 0 s).
                (None, None) if link.waypoints.as_ref().is_some_and(|w| !w.is_empty()) => {
                    let [_, x, y] = link.waypoints.as_ref().expect("waypoints")[0];
                    let wkey = format!("{key}.waypoints");
                    Self::position(&wkey, [x, y]).map_err(|e| {
                        ScenarioError::new(&wkey, format!("waypoint 0: {}", e.message))
                    })?
                }
                (None, None) => {
                    return Err(ScenarioError::new(
                        key.as_str(),
                        "needs a place in [space]: give position_m or distance_m (or \
                         space.path_loss_db)",
                    ))
                }
            };
            positions.push(p);
        }
        Ok(positions)
    }
}

/// A coordinate for reading: to the centimetre, without trailing zeros or a "-0".
pub(super) fn metres(v: f64) -> String {
    let r = (v * 100.0).round() / 100.0;
    format!("{}", if r == 0.0 { 0.0 } else { r })
}

/// Station numbers as runs: "2–5, 9".
pub(super) fn runs(stations: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < stations.len() {
        let mut j = i;
        while j + 1 < stations.len() && stations[j + 1] == stations[j] + 1 {
            j += 1;
        }
        out.push(if j == i {
            stations[i].to_string()
        } else {
            format!("{}–{}", stations[i], stations[j])
        });
        i = j + 1;
    }
    out.join(", ")
}

/// What `txop show` says about a resolved space, as TOML comments: the radio settings,
/// where each node stands, and for each station what it receives from the AP and
/// which stations it cannot detect (those it is hidden from); for a station that
/// walks, how, and all of that as at 0 s.
pub(super) fn summary(space: &SpaceConfig, map: &RadioMap) -> String {
    let mut out = String::from("# Resolved space (for reading; ignored as input):\n");
    let capture = match space.capture {
        Capture::Off => "capture off".to_string(),
        Capture::Restart { margin_db } => format!("capture restart at {margin_db} dB"),
    };
    let placement = match &space.placement {
        Placement::Positions { exponent, .. } => format!("log-distance exponent {exponent}"),
        Placement::PathLossDb(_) => "path losses from space.path_loss_db".to_string(),
    };
    out.push_str(&format!(
        "# {} dBm, {placement}; CCA preamble {} dBm, energy {} dBm; {capture}; noise {:.1} dBm\n",
        space.tx_power_dbm, space.cca_preamble_dbm, space.cca_energy_dbm, map.noise_dbm
    ));
    let at = |node: usize| match &space.placement {
        Placement::Positions { positions, .. } => {
            let p = positions[node];
            format!(" at ({}, {}) m", metres(p.x_m), metres(p.y_m))
        }
        Placement::PathLossDb(_) => String::new(),
    };
    out.push_str(&format!("# AP{}\n", at(0)));
    for n in 1..map.nodes() {
        let (down, up) = (map.rx_dbm(0, n), map.rx_dbm(n, 0));
        let ap = if down == up {
            format!("AP {down:.1} dBm (SNR {:.1} dB)", map.snr_db(0, n))
        } else {
            format!(
                "AP {down:.1} dBm (SNR {:.1} dB), at the AP {up:.1} dBm (SNR {:.1} dB)",
                map.snr_db(0, n),
                map.snr_db(n, 0)
            )
        };
        let hidden: Vec<usize> = (1..map.nodes())
            .filter(|&j| j != n && !map.detects(j, n))
            .collect();
        let hears = if hidden.is_empty() {
            "hears every station".to_string()
        } else {
            format!("hidden from: {}", runs(&hidden))
        };
        let place = match space.walkers.iter().find(|w| w.node == n) {
            Some(w) => format!(
                " walks {}; at 0 s",
                crate::resolve::channel::describe_mobility(&w.mobility)
            ),
            None => at(n),
        };
        out.push_str(&format!("# station {n}{place}: {ap}; {hears}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_join_consecutive_stations() {
        assert_eq!(runs(&[]), "");
        assert_eq!(runs(&[2]), "2");
        assert_eq!(runs(&[1, 2, 3, 5, 7, 8]), "1–3, 5, 7–8");
    }

    #[test]
    fn metres_round_to_the_centimetre() {
        assert_eq!(metres(-25.0), "-25");
        assert_eq!(metres(1.5e-15), "0");
        assert_eq!(metres(-1.5e-15), "0");
        assert_eq!(metres(12.345_6), "12.35");
    }
}
