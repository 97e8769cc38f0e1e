//! Resolution: a scenario's values checked against each other and built into the
//! model's configurations (`txop_sim::SimConfig`).

use crate::error::ScenarioError;
use crate::inherit::station_links;
use crate::limits;
use crate::resolve::channel::{channel_summary, TraceFiles};
use crate::resolve::flows::ResolvedTraffic;
use crate::schema::Scenario;
use crate::space::ResolvedSpace;
use crate::StationGroup;
use txop_core::cell::{CellConfig, StationConfig, StationPowerSave, StationScan};
use txop_core::mac::edca::{Ac, EdcaParams};
use txop_core::mac80211::rate_control::{ExternalCode, RateControlKind, EXTERNAL_MINSTREL_HT};
use txop_core::phy::channel::ErrorModel;
use txop_core::phy::space::RadioMap;
use txop_core::phy::{Band, ChannelWidth, Standard};
use txop_core::{Nanos, StationId};
use txop_sim::BusConfig;
use txop_sim::{SimConfig, WiredConfig};

pub(crate) mod channel;
pub(crate) mod flows;
pub(crate) mod machinery;
pub(crate) mod rates;
pub(crate) mod stack_options;
pub(crate) mod tcp_hosts;

/// `value` must name one of `options`; the error names `key` and lists them.
pub(crate) fn choose_in<T: Copy>(
    key: &str,
    value: &str,
    options: &[(&str, T)],
) -> Result<T, ScenarioError> {
    options
        .iter()
        .find(|(n, _)| *n == value)
        .map(|(_, v)| *v)
        .ok_or_else(|| {
            let names: Vec<&str> = options.iter().map(|(n, _)| *n).collect();
            ScenarioError::new(
                key,
                format!(
                    "unknown value `{value}`; expected one of {}",
                    names.join(", ")
                ),
            )
        })
}

impl Scenario {
    /// The kernel's own minstrel_ht from `kernel.src` (relative to the scenario file)
    /// or the Debian tarball, built and loaded (`txop-kernel`), or its one-line error
    /// under the key `kernel.src`.
    fn kernel_minstrel_ht(&self) -> Result<ExternalCode, ScenarioError> {
        txop_kernel::minstrel_ht(self.kernel_src().as_deref())
            .map_err(|e| ScenarioError::new("kernel.src", e))
    }

    /// `kernel.src`, relative to the scenario file; `None`: the Debian tarball.
    pub(crate) fn kernel_src(&self) -> Option<std::path::PathBuf> {
        self.kernel.src.as_ref().map(|s| match &self.base_dir {
            Some(dir) if std::path::Path::new(s).is_relative() => dir.join(s),
            _ => std::path::PathBuf::from(s),
        })
    }

    /// Check every value and build the simulator's configuration.
    pub fn resolve(&self) -> Result<SimConfig, ScenarioError> {
        self.resolve_with_summary().map(|(cfg, _)| cfg)
    }

    /// [`Scenario::resolve`], and what `txop show` adds to the scenario: each station's
    /// resolved channel and rate control as TOML comments, when the scenario uses the
    /// channel or rate-control keys (`None` otherwise: nothing to add).
    pub fn resolve_with_summary(&self) -> Result<(SimConfig, Option<String>), ScenarioError> {
        if self.has_bsss() {
            return Err(ScenarioError::new(
                "bss",
                "this scenario lists several BSSs; only `txop run` and `txop show` take it",
            ));
        }
        let (std, width) = self.check_top()?;
        let ResolvedStations {
            stations,
            scans,
            power_save,
            buses,
            summaries,
            space,
            tcp,
        } = self.resolve_stations(width)?;
        let tcp_hosts = self.tcp_hosts(stations.len() as u16, tcp)?;
        let cell = self.cell_config(std, stations, scans, power_save, space)?;
        let ResolvedTraffic {
            flows,
            duration,
            pairs,
        } = self.traffic_flows(&cell)?;
        let w = &self.wired;
        let (lo, hi) = limits::WIRED_RATE_MBPS;
        if !(w.rate_mbps.is_finite() && (lo..=hi).contains(&w.rate_mbps)) {
            return Err(ScenarioError::new(
                "wired.rate_mbps",
                format!("must be {lo} to {hi} Mbit/s"),
            ));
        }
        if !(w.delay_ms.is_finite() && (0.0..=10_000.0).contains(&w.delay_ms)) {
            return Err(ScenarioError::new(
                "wired.delay_ms",
                "must be 0 to 10000 ms",
            ));
        }
        if w.limit_packets == 0 {
            return Err(ScenarioError::new(
                "wired.limit_packets",
                "must be at least 1",
            ));
        }
        self.check_offered_packets(&flows, pairs)?;
        let mut cfg = SimConfig {
            cell,
            flows,
            duration,
            seed: self.seed,
            wired: WiredConfig {
                rate_bps: (w.rate_mbps * 1e6) as u64,
                delay: Nanos::from_secs_f64(w.delay_ms / 1000.0),
                limit_packets: w.limit_packets,
            },
            host_bus: Vec::new(),
            remote_ends: Vec::new(),
            tcp_hosts,
        };
        for (sta, bus) in buses {
            cfg = cfg.with_host_bus(sta, bus);
        }
        let mut summary = self
            .uses_channel_keys()
            .then(|| channel_summary(&summaries));
        if let Some(sp) = &cfg.cell.space {
            let map = RadioMap::new(sp, cfg.cell.band, ChannelWidth::Mhz20);
            let text = crate::space::summary(sp, &map);
            summary = Some(match summary {
                Some(channels) => format!("{channels}{text}"),
                None => text,
            });
        }
        Ok((cfg, summary))
    }

    /// The top level's own checks: the name, the duration, and the PHY's standard,
    /// band and width against each other.
    fn check_top(&self) -> Result<(Standard, ChannelWidth), ScenarioError> {
        let name_chars = self.name.chars().count();
        if name_chars > limits::MAX_NAME_CHARS {
            return Err(ScenarioError::new(
                "name",
                format!(
                    "{name_chars} characters; at most {}",
                    limits::MAX_NAME_CHARS
                ),
            ));
        }
        if self.name.chars().any(char::is_control) {
            return Err(ScenarioError::new(
                "name",
                "must be one line without control characters",
            ));
        }
        if let Some(d) = self.duration_s {
            let (lo, hi) = (limits::MIN_DURATION_S, limits::MAX_DURATION_S);
            if !(d.is_finite() && (lo..=hi).contains(&d)) {
                return Err(ScenarioError::new(
                    "duration_s",
                    format!("must be {lo} s to {hi:e} s"),
                ));
            }
        }
        let std = self.phy.standard;
        let width = self.width()?;
        if matches!(std, Standard::A | Standard::B | Standard::G) && width != ChannelWidth::Mhz20 {
            return Err(ScenarioError::new(
                "phy.width_mhz",
                "802.11a/b/g channels are 20 MHz",
            ));
        }
        if !std.operates_in(self.phy.band) {
            return Err(ScenarioError::new(
                "phy.band",
                format!(
                    "802.11{} does not operate in the {} GHz band",
                    std.name(),
                    self.phy.band.name()
                ),
            ));
        }
        if std == Standard::N && width == ChannelWidth::Mhz80 {
            return Err(ScenarioError::new(
                "phy.width_mhz",
                "802.11n (HT) has no 80 MHz channels",
            ));
        }
        if std != Standard::Ax && width == ChannelWidth::Mhz160 {
            return Err(ScenarioError::new(
                "phy.width_mhz",
                "160 MHz channels are modelled for 802.11ax (HE) only",
            ));
        }
        if std == Standard::Ax
            && self.phy.band == Band::Ghz2_4
            && matches!(width, ChannelWidth::Mhz80 | ChannelWidth::Mhz160)
        {
            return Err(ScenarioError::new(
                "phy.width_mhz",
                "802.11ax in 2.4 GHz has 20 and 40 MHz channels",
            ));
        }
        self.he_settings(width)?;
        Ok((std, width))
    }

    /// The station groups results are reported by, in order of first appearance: each
    /// station's `group` key, else the key of the `[stations]` table or
    /// `[[stations.list]]` entry it comes from (`stations`, `list[1]` for
    /// `stations.list[1]`).
    /// Stations are numbered from 1, as in results.
    pub fn station_groups(&self) -> Result<Vec<StationGroup>, ScenarioError> {
        let mut groups: Vec<StationGroup> = Vec::new();
        for (i, (key, link)) in station_links(&self.stations)?.into_iter().enumerate() {
            // `stations.list[1]` → `list[1]`: short enough to head a row.
            let entry = key
                .strip_prefix("stations.")
                .map_or(key.clone(), str::to_string);
            let name = link.group.clone().unwrap_or(entry);
            let station = i as u16 + 1;
            match groups.iter_mut().find(|g| g.name == name) {
                Some(g) => g.stations.push(station),
                None => groups.push(StationGroup {
                    name,
                    stations: vec![station],
                }),
            }
        }
        Ok(groups)
    }

    /// Every station resolved from its inherited keys ([`station_links`]), placed in
    /// `[space]` when there is one, in order.
    fn resolve_stations(&self, width: ChannelWidth) -> Result<ResolvedStations, ScenarioError> {
        let mut stations = Vec::new();
        let mut scans = Vec::new();
        let mut power_save = Vec::new();
        let mut buses = Vec::new();
        let mut tcp = Vec::new();
        let era = self.receive_era();
        let mut trace_files = TraceFiles::default();
        let mut summaries = Vec::new();
        let links = station_links(&self.stations)?;
        let mut space = self.resolve_space(&links, width)?;
        for (index, (key, mut link)) in links.into_iter().enumerate() {
            if let Some(space) = &space {
                space.place_link(index, &mut link);
            }
            let sta = stations.len() as u16 + 1;
            let resolved = self.station_channel(&key, sta, &link, width, &mut trace_files)?;
            if let Some(space) = &mut space {
                space.walk(index, resolved.channel.as_ref());
            }
            if link.loss.is_none() {
                link.snr_db = resolved.snr_db;
            }
            let rc_key = format!("{}.rate_control", link.owner(&key, "rate_control"));
            // The kernel's own minstrel_ht is built and loaded here, at the first
            // station that asks for it (once per process and tree).
            let mut names: Vec<(&str, Option<RateControlKind>)> = RateControlKind::NAMES
                .iter()
                .map(|&(n, k)| (n, Some(k)))
                .collect();
            names.push((EXTERNAL_MINSTREL_HT, None));
            let rate_control = match choose_in(
                &rc_key,
                link.rate_control.as_deref().unwrap_or("fixed"),
                &names,
            )? {
                Some(kind) => kind,
                None => RateControlKind::External(self.kernel_minstrel_ht()?),
            };
            if self.phy.standard == Standard::Ax
                && matches!(
                    rate_control,
                    RateControlKind::MinstrelHt(_) | RateControlKind::External(_)
                )
            {
                return Err(ScenarioError::new(
                    format!("{}.rate_control", link.owner(&key, "rate_control")),
                    "minstrel_ht has no HE rates (Linux 6.12; HE drivers rate in \
                     firmware): use \"fixed\" or \"ideal\" with phy.standard = \"ax\"",
                ));
            }
            if let Some(sc) = &link.scan {
                scans.push(StationScan {
                    station: StationId(sta),
                    scan: sc.resolve(&format!("{}.scan", link.owner(&key, "scan")))?,
                });
            }
            if let Some(ps) = &link.power_save {
                power_save.push(StationPowerSave {
                    station: StationId(sta),
                    power_save: ps
                        .resolve(&format!("{}.power_save", link.owner(&key, "power_save")))?,
                });
            }
            if let Some(t) = &link.tcp {
                tcp.push((
                    sta,
                    t.resolve(&format!("{}.tcp", link.owner(&key, "tcp")), era)?,
                ));
            }
            if let Some(b) = &link.bus {
                buses.push((sta, b.resolve(&format!("{}.bus", link.owner(&key, "bus")))?));
            }
            let error = match (link.snr_db, link.loss) {
                (Some(_), Some(_)) => {
                    return Err(ScenarioError::new(
                        link.owner(&key, "channel"),
                        "give snr_db or loss, not both",
                    ))
                }
                (Some(snr_db), None) => ErrorModel::Snr { snr_db },
                (None, Some(probability)) => ErrorModel::FixedLoss { probability },
                (None, None) => ErrorModel::None,
            };
            let field = if link.loss.is_some() {
                "loss"
            } else {
                "snr_db"
            };
            error.validate().map_err(|e| {
                ScenarioError::new(format!("{}.{field}", link.owner(&key, "channel")), e)
            })?;
            let tx = self.tx_vector(link.owner(&key, "rate"), &link, width)?;
            let fixed_downlink = self.fixed_direction_rate(&key, "downlink", &link, width)?;
            let fixed_uplink = self.fixed_direction_rate(&key, "uplink", &link, width)?;
            let weight = link.weight.unwrap_or(256);
            if weight == 0 {
                return Err(ScenarioError::new(
                    format!("{}.weight", link.owner(&key, "weight")),
                    "must be 1 to 65535",
                ));
            }
            if let Some(group) = &link.group {
                let n = group.chars().count();
                if group.trim().is_empty() || n > limits::GROUP_NAME_CHARS {
                    return Err(ScenarioError::new(
                        format!("{}.group", link.owner(&key, "group")),
                        format!(
                            "must be a name of 1 to {} characters",
                            limits::GROUP_NAME_CHARS
                        ),
                    ));
                }
            }
            let fixed_summary = [("downlink", fixed_downlink), ("uplink", fixed_uplink)]
                .iter()
                .filter_map(|(dir, t)| {
                    t.map(|t| format!("; {dir} fixed at {}", t.modulation_label()))
                })
                .collect::<String>();
            summaries.push(format!(
                "{}; rate control {}{}{fixed_summary}",
                resolved.summary,
                rate_control.name(),
                if rate_control == RateControlKind::Fixed {
                    format!(" ({})", tx.modulation_label())
                } else {
                    String::new()
                }
            ));
            stations.push(StationConfig {
                tx,
                error,
                weight,
                channel: resolved.channel,
                rate_control,
                fixed_downlink,
                fixed_uplink,
            });
        }
        trace_files.refuse_absent_stations(stations.len())?;
        if stations.len() > limits::MAX_STATIONS {
            return Err(ScenarioError::new(
                "stations",
                format!(
                    "{} stations; at most {}",
                    stations.len(),
                    limits::MAX_STATIONS
                ),
            ));
        }
        Ok(ResolvedStations {
            stations,
            scans,
            power_save,
            buses,
            summaries,
            space,
            tcp,
        })
    }

    /// The cell: its stations with `[mac]`, the stack and `[space]`, validated.
    fn cell_config(
        &self,
        std: Standard,
        stations: Vec<StationConfig>,
        scans: Vec<StationScan>,
        power_save: Vec<StationPowerSave>,
        space: Option<ResolvedSpace>,
    ) -> Result<CellConfig, ScenarioError> {
        let m = &self.mac;
        let mut cell = if m.qos {
            CellConfig::new(std, self.phy.band, stations)
        } else {
            CellConfig::legacy_dcf(std, self.phy.band, stations)
        };
        if let Some(rule) = m.backoff_rule {
            cell.backoff_rule = rule;
        }
        cell.aggregation =
            m.qos && m.aggregation && matches!(std, Standard::N | Standard::Ac | Standard::Ax);
        cell.max_ampdu_subframes = m.max_ampdu_subframes;
        cell.max_ampdu_bytes = m.max_ampdu_bytes;
        cell.max_ampdu_duration = Nanos::from_us(m.max_ampdu_duration_us as u64);
        cell.rts_threshold_bytes = m.rts_threshold_bytes;
        cell.protection = m.protection;
        cell.retry_limit = m.retry_limit;
        if m.beacon_interval_tu == 0 {
            return Err(ScenarioError::new(
                "mac.beacon_interval_tu",
                "must be at least 1 TU",
            ));
        }
        if m.dtim_period == 0 {
            return Err(ScenarioError::new("mac.dtim_period", "must be at least 1"));
        }
        cell.beacons = m.beacons;
        cell.beacon_interval_tu = m.beacon_interval_tu;
        cell.dtim_period = m.dtim_period;
        cell.station_scans = scans;
        cell.station_power_save = power_save;
        cell.stack = self.stack_config()?;
        cell.space = space.map(|s| s.config);
        for (name, ov, table) in [
            ("mac.edca_ap", &m.edca_ap, &mut cell.edca_ap),
            ("mac.edca_sta", &m.edca_sta, &mut cell.edca_sta),
        ] {
            for (ac, o) in [
                (Ac::Vo, &ov.vo),
                (Ac::Vi, &ov.vi),
                (Ac::Be, &ov.be),
                (Ac::Bk, &ov.bk),
            ] {
                let Some(o) = o else { continue };
                if !m.qos {
                    return Err(ScenarioError::new(
                        name,
                        "EDCA tables apply with mac.qos = true only",
                    ));
                }
                let e: &mut EdcaParams = &mut table[ac.index()];
                e.aifsn = o.aifsn.unwrap_or(e.aifsn);
                e.cw_min = o.cw_min.unwrap_or(e.cw_min);
                e.cw_max = o.cw_max.unwrap_or(e.cw_max);
                e.txop_limit_us = o.txop_limit_us.unwrap_or(e.txop_limit_us);
            }
        }
        cell.validate().map_err(|e| {
            // Cell errors name a field of its own config; map station indices back.
            match e.split_once(": ") {
                Some((k, msg)) if k.starts_with("stations[") => {
                    ScenarioError::new(format!("stations (station {})", &k[9..k.len() - 1]), msg)
                }
                Some((k, msg)) => ScenarioError::new(k, msg),
                None => ScenarioError::new("", e),
            }
        })?;
        Ok(cell)
    }
}

/// The stations of a scenario resolved, with what the cell and the run take from them.
struct ResolvedStations {
    /// Each station's link, rate and channel.
    stations: Vec<StationConfig>,
    /// The stations that scan, and how.
    scans: Vec<StationScan>,
    /// The stations in power save, and how.
    power_save: Vec<StationPowerSave>,
    /// The stations behind a host bus (1-based station numbers).
    buses: Vec<(u16, BusConfig)>,
    /// Each station's channel and rate control in words, for `txop show`.
    summaries: Vec<String>,
    /// `[space]`, resolved for these stations.
    space: Option<ResolvedSpace>,
    /// The stations with their own `tcp` keys (1-based station numbers).
    tcp: Vec<(u16, txop_sim::HostWindow)>,
}
