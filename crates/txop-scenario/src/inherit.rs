//! Inheritance: what a station takes from `[stations]`, and what a direction takes from
//! its station.

use crate::error::ScenarioError;
use crate::limits;
use crate::schema::{BusSpec, DirectionSpec, PowerSaveSpec, ScanSpec, Stations};

/// A station's link: rate and channel, as resolved for one station.
#[derive(Clone, Debug, Default)]
pub(crate) struct Link {
    pub(crate) weight: Option<u16>,
    pub(crate) mcs: Option<u8>,
    pub(crate) nss: Option<u8>,
    pub(crate) rate_mbps: Option<f64>,
    pub(crate) snr_db: Option<f64>,
    pub(crate) distance_m: Option<f64>,
    pub(crate) loss: Option<f64>,
    pub(crate) position_m: Option<[f64; 2]>,
    pub(crate) velocity_mps: Option<[f64; 2]>,
    pub(crate) waypoints: Option<Vec<[f64; 3]>>,
    pub(crate) snr_trace: Option<String>,
    pub(crate) snr_trace_interpolation: Option<String>,
    pub(crate) fading: FadingSpec,
    pub(crate) downlink: Option<DirectionSpec>,
    pub(crate) uplink: Option<DirectionSpec>,
    pub(crate) rate_control: Option<String>,
    pub(crate) scan: Option<ScanSpec>,
    pub(crate) power_save: Option<PowerSaveSpec>,
    pub(crate) bus: Option<BusSpec>,
    /// Set by `[space]` with a path-loss matrix: the SNRs are the matrix's (shown
    /// rounded, and said so), not keys of the station.
    pub(crate) snr_from_matrix: bool,
    /// What a `[[stations.list]]` entry took from `[stations]` ([`Link::owner`]'s
    /// names); empty for `[stations]` itself.
    pub(crate) inherited: Vec<&'static str>,
}

impl Link {
    /// The table that wrote `what` (a key, or a group: `channel` for the mean SNR's
    /// keys, `rate` for `mcs`/`nss`/`rate_mbps`, `fading` for the fading keys) of the
    /// station whose entry is `entry`: `stations` when the entry inherited it, else
    /// `entry`. An error then names the key the user wrote (issue 25: a bad
    /// `--set stations.rate_control` was reported under `stations.list[0]`).
    pub(crate) fn owner<'a>(&self, entry: &'a str, what: &str) -> &'a str {
        if self.inherited.contains(&what) {
            "stations"
        } else {
            entry
        }
    }
}

impl DirectionSpec {
    pub(crate) fn fading(&self) -> FadingSpec {
        FadingSpec {
            fading: self.fading.clone(),
            fading_k_db: self.fading_k_db,
            coherence_ms: self.coherence_ms,
        }
    }
}

/// The fading keys of a station or a direction, which go together.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct FadingSpec {
    pub(crate) fading: Option<String>,
    pub(crate) fading_k_db: Option<f64>,
    pub(crate) coherence_ms: Option<f64>,
}

impl FadingSpec {
    pub(crate) fn is_given(&self) -> bool {
        self.fading.is_some() || self.fading_k_db.is_some() || self.coherence_ms.is_some()
    }

    /// These keys over `base`'s: an own `fading` replaces all three; an own
    /// `fading_k_db` or `coherence_ms` alone adjusts the inherited fading.
    pub(crate) fn over(&self, base: &FadingSpec) -> FadingSpec {
        if self.fading.is_some() {
            return self.clone();
        }
        FadingSpec {
            fading: base.fading.clone(),
            fading_k_db: self.fading_k_db.or(base.fading_k_db),
            coherence_ms: self.coherence_ms.or(base.coherence_ms),
        }
    }
}

/// `[stations]` entries expanded to one link spec per station, with the key to blame.
pub(crate) fn station_links(s: &Stations) -> Result<Vec<(String, Link)>, ScenarioError> {
    let base = Link {
        weight: s.weight,
        mcs: s.mcs,
        nss: s.nss,
        rate_mbps: s.rate_mbps,
        snr_db: s.snr_db,
        distance_m: s.distance_m,
        loss: s.loss,
        position_m: s.position_m,
        velocity_mps: s.velocity_mps,
        waypoints: s.waypoints.clone(),
        snr_trace: s.snr_trace.clone(),
        snr_trace_interpolation: s.snr_trace_interpolation.clone(),
        fading: FadingSpec {
            fading: s.fading.clone(),
            fading_k_db: s.fading_k_db,
            coherence_ms: s.coherence_ms,
        },
        downlink: s.downlink.clone(),
        uplink: s.uplink.clone(),
        rate_control: s.rate_control.clone(),
        scan: s.scan.clone(),
        power_save: s.power_save.clone(),
        bus: s.bus.clone(),
        snr_from_matrix: false,
        inherited: Vec::new(),
    };
    if s.list.is_empty() {
        if s.count == 0 || s.count as usize > limits::MAX_STATIONS {
            return Err(ScenarioError::new(
                "stations.count",
                format!("must be 1 to {}", limits::MAX_STATIONS),
            ));
        }
        return Ok((0..s.count)
            .map(|_| ("stations".to_string(), base.clone()))
            .collect());
    }
    if s.count != 1 {
        return Err(ScenarioError::new(
            "stations.count",
            "cannot be combined with stations.list (set stations.list[N].count instead)",
        ));
    }
    let mut out = Vec::new();
    for (i, e) in s.list.iter().enumerate() {
        let key = format!("stations.list[{i}]");
        let count = e.count.unwrap_or(1);
        if count == 0 {
            return Err(ScenarioError::new(
                format!("{key}.count"),
                "must be at least 1",
            ));
        }
        // Refused before expanding: 65535 stations in each of many entries.
        if out.len() + count as usize > limits::MAX_STATIONS {
            return Err(ScenarioError::new(
                format!("{key}.count"),
                format!(
                    "the list comes to more than {} stations, the most a cell takes",
                    limits::MAX_STATIONS
                ),
            ));
        }
        // An entry's own channel model (its mean SNR: a value, a place, a movement, a
        // trace, or a loss) replaces the inherited one entirely.
        let own_channel = e.snr_db.is_some()
            || e.loss.is_some()
            || e.distance_m.is_some()
            || e.position_m.is_some()
            || e.velocity_mps.is_some()
            || e.waypoints.is_some()
            || e.snr_trace.is_some()
            || e.snr_trace_interpolation.is_some();
        // Its own `fading` replaces the inherited fading keys; its own `fading_k_db` or
        // `coherence_ms` alone adjusts them.
        let own_fading = FadingSpec {
            fading: e.fading.clone(),
            fading_k_db: e.fading_k_db,
            coherence_ms: e.coherence_ms,
        };
        // So does its own rate: an MCS (with the inherited nss) or a legacy rate_mbps.
        let own_rate = e.mcs.is_some() || e.rate_mbps.is_some();
        let merged = Link {
            weight: e.weight.or(base.weight),
            mcs: if own_rate { e.mcs } else { base.mcs },
            nss: e.nss.or(if e.rate_mbps.is_some() {
                None
            } else {
                base.nss
            }),
            rate_mbps: if own_rate {
                e.rate_mbps
            } else {
                base.rate_mbps
            },
            snr_db: if own_channel { e.snr_db } else { base.snr_db },
            distance_m: if own_channel {
                e.distance_m
            } else {
                base.distance_m
            },
            loss: if own_channel { e.loss } else { base.loss },
            position_m: if own_channel {
                e.position_m
            } else {
                base.position_m
            },
            velocity_mps: if own_channel {
                e.velocity_mps
            } else {
                base.velocity_mps
            },
            waypoints: if own_channel {
                e.waypoints.clone()
            } else {
                base.waypoints.clone()
            },
            snr_trace: if own_channel {
                e.snr_trace.clone()
            } else {
                base.snr_trace.clone()
            },
            snr_trace_interpolation: if own_channel {
                e.snr_trace_interpolation.clone()
            } else {
                base.snr_trace_interpolation.clone()
            },
            fading: own_fading.over(&base.fading),
            rate_control: e.rate_control.clone().or_else(|| base.rate_control.clone()),
            // An entry's own table replaces the inherited one as a whole.
            downlink: e.downlink.clone().or_else(|| base.downlink.clone()),
            uplink: e.uplink.clone().or_else(|| base.uplink.clone()),
            scan: e.scan.clone().or_else(|| base.scan.clone()),
            power_save: e.power_save.clone().or_else(|| base.power_save.clone()),
            bus: e.bus.clone().or_else(|| base.bus.clone()),
            snr_from_matrix: false,
            inherited: [
                ("weight", e.weight.is_none() && base.weight.is_some()),
                ("rate", !own_rate && e.nss.is_none()),
                ("channel", !own_channel),
                ("fading", !own_fading.is_given()),
                ("rate_control", e.rate_control.is_none()),
                ("downlink", e.downlink.is_none()),
                ("uplink", e.uplink.is_none()),
                ("scan", e.scan.is_none()),
                ("power_save", e.power_save.is_none()),
                ("bus", e.bus.is_none()),
            ]
            .into_iter()
            .filter_map(|(what, inherited)| inherited.then_some(what))
            .collect(),
        };
        for _ in 0..count {
            out.push((key.clone(), merged.clone()));
        }
    }
    Ok(out)
}
