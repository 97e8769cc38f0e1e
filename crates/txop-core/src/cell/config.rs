//! What a cell is built from: the BSS's PHY and MAC settings, its stations' links, and
//! the limits every PPDU is built within. [`CellConfig::validate`] names the offending
//! field of a bad configuration.

use crate::driver::BuildLimits;
use crate::mac::ampdu::{
    mpdu_overhead, BA_WINDOW, HT_MAX_AMPDU_BYTES, PPDU_MAX_TIME, QOS_DATA_OVERHEAD_BYTES,
    VHT_MAX_AMPDU_BYTES,
};
use crate::mac::edca::{self, Ac, BackoffRule, EdcaTable};
use crate::mac::link_airtime::LinkAirtime;
use crate::mac::protection::Protection;
use crate::mac80211::minstrel_ht::{MinstrelHt, PeerCaps};
use crate::mac80211::powersave::{
    PowerSaveConfig, DEFAULT_BEACON_INTERVAL_TU, DEFAULT_DTIM_PERIOD,
};
use crate::mac80211::rate_control::{peer_rates, LinkRateControl, RateControlKind};
use crate::mac80211::scan::ScanConfig;
use crate::packet::StationId;
use crate::phy::channel::ErrorModel;
use crate::phy::he::HE_MAX_AMPDU_BYTES;
use crate::phy::link_channel::StationChannel;
use crate::phy::rates::{control_response_rate, BLOCK_ACK_BYTES};
use crate::phy::space::{RadioMap, SpaceConfig};
use crate::phy::timing::PhyTiming;
use crate::phy::{Band, ChannelWidth, DsssPreamble, GuardInterval, Standard, TxVector};
use crate::stack::StackConfig;
use crate::Nanos;

/// One station's radio link to the AP (the same rate and error model both ways).
#[derive(Clone, Debug, PartialEq)]
pub struct StationConfig {
    /// The rate (modulation, coding, width, guard interval) of every data PPDU on the
    /// link.
    pub tx: TxVector,
    /// How the channel loses the link's frames.
    pub error: ErrorModel,
    /// Airtime-fairness weight (`NL80211_ATTR_AIRTIME_WEIGHT`, default 256).
    pub weight: u16,
    /// A channel that changes: each direction's SNR over time (movement, fading, a
    /// trace). `None` (the default): the link's SNR is `error`'s, constant. With a
    /// channel, `error` holds the downlink's mean SNR at time 0 (what a rate is chosen
    /// for when none is given).
    pub channel: Option<StationChannel>,
    /// Which rate control picks the station's rates, both ways (default
    /// [`RateControlKind::Fixed`]: `tx` for every PPDU); `tx` gives the station's
    /// capabilities (family, width, guard interval, streams).
    pub rate_control: RateControlKind,
    /// A rate fixed for the AP's frames to the station, whatever `rate_control` picks
    /// for the station's own: the AP's `iw dev … set bitrates` while the client runs
    /// its rate control, as the bufferbloat project's ath10k runs were made (issue 29).
    /// `None`: the downlink follows `tx` and `rate_control`.
    pub fixed_downlink: Option<TxVector>,
    /// The same for the station's frames to the AP.
    pub fixed_uplink: Option<TxVector>,
}

/// The rate of one direction of a station's link: a fixed vector, or the rate control
/// that picks one (with `tx` as the station's capabilities).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct DirectionRate {
    pub(crate) tx: TxVector,
    pub(crate) rate_control: RateControlKind,
}

impl StationConfig {
    /// A station at rate `tx` with channel `error`, the default weight, a static channel
    /// and a fixed rate.
    pub fn new(tx: TxVector, error: ErrorModel) -> StationConfig {
        StationConfig {
            tx,
            error,
            weight: crate::mac80211::scheduler::DEFAULT_AIRTIME_WEIGHT,
            channel: None,
            rate_control: RateControlKind::Fixed,
            fixed_downlink: None,
            fixed_uplink: None,
        }
    }

    /// The rate of the link's direction `from_ap` (the AP's frames to the station),
    /// else the station's to the AP: its fixed rate if it has one, else `tx` and
    /// `rate_control`.
    pub(crate) fn direction_rate(&self, from_ap: bool) -> DirectionRate {
        let fixed = if from_ap {
            self.fixed_downlink
        } else {
            self.fixed_uplink
        };
        match fixed {
            Some(tx) => DirectionRate {
                tx,
                rate_control: RateControlKind::Fixed,
            },
            None => DirectionRate {
                tx: self.tx,
                rate_control: self.rate_control,
            },
        }
    }
}

/// Everything the cell needs to know.
#[derive(Clone, Debug, PartialEq)]
pub struct CellConfig {
    /// The PHY of the BSS (802.11a/b/g/n/ac): its timing and which rates it carries.
    pub standard: Standard,
    /// The band the BSS operates in (2.4 or 5 GHz).
    pub band: Band,
    /// QoS (WMM/EDCA with four ACs). Without it: legacy DCF, one queue, non-QoS headers.
    pub qos: bool,
    /// The AP's EDCA parameters per AC (hostapd's `tx_queue_data*`).
    pub edca_ap: EdcaTable,
    /// The stations' EDCA parameters per AC (802.11-2016 Table 9-155 by default; an AP
    /// advertises them, hostapd's `wmm_ac_*`).
    pub edca_sta: EdcaTable,
    /// How a frozen backoff counter counts the slots that passed (EDCA or DCF).
    pub backoff_rule: BackoffRule,
    /// A-MPDU aggregation under block ack (HT/VHT links, every AC but VO).
    pub aggregation: bool,
    /// Most subframes per A-MPDU (at most the block-ack window, 64).
    pub max_ampdu_subframes: u16,
    /// 0 means the PHY's maximum (65535 for HT, 1048575 for VHT).
    pub max_ampdu_bytes: u32,
    /// Longest aggregate PPDU (ath9k caps aggregates at 4 ms).
    pub max_ampdu_duration: Nanos,
    /// PSDUs longer than this are protected by RTS/CTS; `None` disables RTS/CTS.
    pub rts_threshold_bytes: Option<u32>,
    /// ERP protection of OFDM/HT PPDUs while an 802.11b station is in a 2.4 GHz
    /// 802.11g/n cell ([`CellConfig::non_erp_present`]); ignored otherwise.
    pub protection: Protection,
    /// Transmission attempts per MPDU before it is dropped (dot11ShortRetryLimit = 7).
    pub retry_limit: u8,
    /// The transmit stack every node runs (qdisc, TXQs, scheduler, AQL, driver).
    pub stack: StackConfig,
    /// Emit an [`Output::Airtime`](super::Output::Airtime) record for every data exchange (not for beacons,
    /// null-data frames or PS-Polls).
    pub airtime_records: bool,
    /// The stations, numbered from 1 in this order (the AP is node 0).
    pub stations: Vec<StationConfig>,
    /// Model the AP's beacons: one every beacon interval on the AP's channel access,
    /// with the TIM of the stations it buffers for (reference §9). Off by default (no
    /// beacon airtime, as before); always on when a station scans or saves power.
    pub beacons: bool,
    /// Beacon interval in TU of 1024 µs (hostapd `beacon_int` = 100: 102.4 ms).
    pub beacon_interval_tu: u16,
    /// Every n-th beacon is a DTIM (hostapd `dtim_period` = 2).
    pub dtim_period: u8,
    /// Stations that scan in the background (§7), each listed at most once. Empty by
    /// default: nobody scans.
    pub station_scans: Vec<StationScan>,
    /// Stations in power save (§9), each listed at most once. Empty by default: every
    /// station stays awake.
    pub station_power_save: Vec<StationPowerSave>,
    /// Where the nodes are and what their radios hear (`None`, the default: one
    /// collision domain, every node hears every other and overlapping frames are lost).
    /// With space every node senses the medium for itself and receptions are decided by
    /// SINR ([`crate::phy::space`]).
    pub space: Option<SpaceConfig>,
}

/// A station that scans in the background (§7), and how.
#[derive(Clone, Debug, PartialEq)]
pub struct StationScan {
    /// The station (a station of the cell).
    pub station: StationId,
    /// Its scan: policy, bands, period, dwell and switch times.
    pub scan: ScanConfig,
}

/// A station in power save (§9), and its settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StationPowerSave {
    /// The station (a station of the cell).
    pub station: StationId,
    /// Its power-save settings: dynamic timeout, PS-Poll, listen interval.
    pub power_save: PowerSaveConfig,
}

impl CellConfig {
    /// A QoS cell with the standard's default EDCA tables and `stations`.
    pub fn new(standard: Standard, band: Band, stations: Vec<StationConfig>) -> CellConfig {
        CellConfig {
            standard,
            band,
            qos: true,
            edca_ap: edca::ap_defaults(standard),
            edca_sta: edca::sta_defaults(standard),
            backoff_rule: BackoffRule::Edca,
            aggregation: matches!(standard, Standard::N | Standard::Ac | Standard::Ax),
            max_ampdu_subframes: BA_WINDOW,
            max_ampdu_bytes: 0,
            max_ampdu_duration: Nanos::from_us(4_000),
            rts_threshold_bytes: None,
            protection: Protection::CtsToSelf,
            retry_limit: 7,
            stack: crate::stack::simple(),
            airtime_records: false,
            stations,
            beacons: false,
            beacon_interval_tu: DEFAULT_BEACON_INTERVAL_TU,
            dtim_period: DEFAULT_DTIM_PERIOD,
            station_scans: Vec::new(),
            station_power_save: Vec::new(),
            space: None,
        }
    }

    /// Whether a non-ERP (802.11b, DSSS/HR-DSSS) station is in a 2.4 GHz 802.11g/n cell.
    /// Then the cell uses the long slot and DSSS basic rates ([`PhyTiming::for_bss`])
    /// and, unless `protection` is off, protects every OFDM/HT PPDU
    /// ([`crate::mac::protection`]).
    pub fn non_erp_present(&self) -> bool {
        PhyTiming::non_erp_applies(self.standard, self.band)
            && self.stations.iter().any(|s| s.tx.is_dsss())
    }

    /// Whether beacons, power save or scanning are modelled at all.
    pub(super) fn has_mgmt(&self) -> bool {
        self.beacons || !self.station_scans.is_empty() || !self.station_power_save.is_empty()
    }

    /// Legacy DCF: no QoS, DIFS and aCWmin/aCWmax for everyone, no aggregation.
    pub fn legacy_dcf(standard: Standard, band: Band, stations: Vec<StationConfig>) -> CellConfig {
        let dcf = edca::dcf_defaults(standard);
        CellConfig {
            qos: false,
            edca_ap: dcf,
            edca_sta: dcf,
            backoff_rule: BackoffRule::Dcf,
            aggregation: false,
            ..CellConfig::new(standard, band, stations)
        }
    }

    /// Check the configuration; the error names the offending field.
    pub fn validate(&self) -> Result<(), String> {
        if self.stations.is_empty() {
            return Err("stations: a cell needs at least one station".into());
        }
        if self.stations.len() > u16::MAX as usize - 1 {
            return Err("stations: too many stations".into());
        }
        if !self.standard.operates_in(self.band) {
            return Err(format!(
                "phy.band: 802.11{} does not operate in the {} GHz band",
                self.standard.name(),
                self.band.name()
            ));
        }
        for (name, table) in [("edca_ap", &self.edca_ap), ("edca_sta", &self.edca_sta)] {
            for ac in Ac::ALL {
                table[ac.index()]
                    .validate()
                    .map_err(|e| format!("{name}.{}: {e}", ac.name().to_lowercase()))?;
            }
        }
        if self.retry_limit == 0 {
            return Err("mac.retry_limit: must be at least 1".into());
        }
        if self.stack.driver_queue_packets == 0 {
            return Err("stack.driver_queue_packets: must be at least 1".into());
        }
        if self.max_ampdu_subframes == 0 || self.max_ampdu_subframes > BA_WINDOW {
            return Err(format!(
                "mac.max_ampdu_subframes: must be 1 to {BA_WINDOW} (the block-ack window)"
            ));
        }
        for (sta, s) in StationId::all(self.stations.len()).zip(&self.stations) {
            let key = format!("stations[{}]", sta.0);
            s.tx.validate().map_err(|e| format!("{key}: {e}"))?;
            for (dir, fixed) in [("downlink", s.fixed_downlink), ("uplink", s.fixed_uplink)] {
                let Some(tx) = fixed else { continue };
                tx.validate().map_err(|e| format!("{key}.{dir}: {e}"))?;
                if !tx_allowed(self.standard, &tx) || (tx.is_dsss() && self.band != Band::Ghz2_4) {
                    return Err(format!(
                        "{key}.{dir}: {} cannot be used in an 802.11{} BSS",
                        tx.modulation_label(),
                        self.standard.name()
                    ));
                }
            }
            s.error.validate().map_err(|e| format!("{key}: {e}"))?;
            if let Some(ch) = &s.channel {
                ch.validate().map_err(|e| format!("{key}: channel: {e}"))?;
            }
            if s.weight == 0 {
                return Err(format!("{key}: weight must be at least 1"));
            }
            if !tx_allowed(self.standard, &s.tx) || (s.tx.is_dsss() && self.band != Band::Ghz2_4) {
                return Err(format!(
                    "{key}: {} cannot be used in an 802.11{} BSS",
                    s.tx.modulation_label(),
                    self.standard.name()
                ));
            }
        }
        if self.beacon_interval_tu == 0 {
            return Err("beacon_interval_tu: must be at least 1".into());
        }
        if self.dtim_period == 0 {
            return Err("dtim_period: must be at least 1".into());
        }
        let n = self.stations.len();
        let check_station = |what: &str, sta: StationId, seen: &mut Vec<StationId>| {
            if sta.0 == 0 || sta.0 as usize > n {
                return Err(format!("{what}: no station {} in this cell", sta.0));
            }
            if seen.contains(&sta) {
                return Err(format!("{what}: station {} is listed twice", sta.0));
            }
            seen.push(sta);
            Ok(())
        };
        let mut seen = Vec::new();
        for s in &self.station_scans {
            check_station("scan", s.station, &mut seen)?;
            s.scan
                .validate()
                .map_err(|e| format!("stations[{}].{e}", s.station.0))?;
        }
        let mut seen = Vec::new();
        for s in &self.station_power_save {
            check_station("power_save", s.station, &mut seen)?;
            s.power_save
                .validate()
                .map_err(|e| format!("stations[{}].{e}", s.station.0))?;
        }
        if let Some(space) = &self.space {
            self.validate_space(space)?;
        }
        Ok(())
    }

    /// Space must place every node, and every station must reach its AP: the AP and
    /// the station detect each other's preambles. A station that walks may leave its
    /// AP's range or enter it later, as a moving station without space may lose its
    /// link: where it starts is not checked.
    fn validate_space(&self, space: &SpaceConfig) -> Result<(), String> {
        space
            .validate(self.stations.len() + 1)
            .map_err(|e| format!("space: {e}"))?;
        let map = RadioMap::new(space, self.band, ChannelWidth::Mhz20);
        let ap = space.first_node;
        for (sta, s) in StationId::all(self.stations.len()).zip(&self.stations) {
            if matches!(s.error, ErrorModel::FixedLoss { .. }) {
                return Err(format!(
                    "stations[{}]: a fixed loss probability cannot be combined with space (losses follow from the SINR)",
                    sta.0
                ));
            }
            let n = ap + sta.node().index();
            if map.node_walks(n) {
                continue;
            }
            let weakest = map.rx_dbm(ap, n).min(map.rx_dbm(n, ap));
            if weakest < map.preamble_dbm {
                return Err(format!(
                    "space: station {} is out of range of its AP ({weakest:.1} dBm, below the {} dBm preamble detection threshold)",
                    sta.0, map.preamble_dbm
                ));
            }
        }
        Ok(())
    }
}

/// Which frame formats a BSS of `standard` carries.
fn tx_allowed(standard: Standard, tx: &TxVector) -> bool {
    matches!(
        (standard, tx),
        (Standard::B, TxVector::Dsss { .. })
            | (Standard::A, TxVector::Ofdm { .. })
            | (Standard::G, TxVector::Ofdm { .. } | TxVector::Dsss { .. })
            // A 2.4 GHz 802.11n BSS also carries 802.11b rates (checked against the
            // band by the caller), with ERP protection and the long slot.
            | (
                Standard::N,
                TxVector::Ofdm { .. } | TxVector::Ht { .. } | TxVector::Dsss { .. }
            )
            | (
                Standard::Ac,
                TxVector::Ofdm { .. } | TxVector::Ht { .. } | TxVector::Vht { .. }
            )
            | (
                Standard::Ax,
                TxVector::Ofdm { .. }
                    | TxVector::Ht { .. }
                    | TxVector::Vht { .. }
                    | TxVector::He { .. }
            )
    )
}

/// Rate control's expected throughput of a station's link in kbit/s (what mac80211
/// compares with 6 Mbit/s × stations for the slow-station CoDel rule): the PHY rate
/// times the 1500-byte frame success probability.
pub(super) fn expected_kbps(sc: &StationConfig, from_ap: bool) -> u64 {
    let tx = sc.direction_rate(from_ap).tx;
    let per = sc.error.per(&tx, 1500 + QOS_DATA_OVERHEAD_BYTES);
    (tx.data_rate_bps() as f64 * (1.0 - per) / 1000.0) as u64
}

/// The rate control a node runs for its link to a station configured as `sc`
/// (`from_ap`: the AP's link to it, else the station's to the AP); `seed` is the
/// link's own (minstrel_ht's sample table).
pub(super) fn link_rate_control(
    cfg: &CellConfig,
    sc: &StationConfig,
    from_ap: bool,
    seed: u64,
) -> LinkRateControl {
    let retry_limit = cfg.retry_limit;
    let rate = sc.direction_rate(from_ap);
    match rate.rate_control {
        RateControlKind::Fixed => LinkRateControl::Fixed {
            txv: rate.tx,
            retry_limit,
        },
        RateControlKind::MinstrelHt(era) => {
            let era = era.unwrap_or(cfg.stack.minstrel_era);
            // ath10k-like firmware runs its own rate control, whose algorithm is not
            // public: minstrel_ht of the stack's era stands in for it, on the rate
            // slots the stack gives (ath9k's), so that the firmware's rate choices
            // react to the channel as a host rate control would.
            let hw = cfg.stack.rate_caps;
            LinkRateControl::MinstrelHt(Box::new(MinstrelHt::new(
                era,
                &peer_caps(cfg, &sc.tx),
                hw,
                seed,
            )))
        }
        // Code loaded by the front end (the kernel's minstrel_ht), on the stack's rate
        // slots as txop's minstrel_ht above.
        RateControlKind::External(code) => LinkRateControl::External(code.0.link(
            &peer_caps(cfg, &sc.tx),
            cfg.stack.rate_caps,
            seed,
        )),
        RateControlKind::Ideal => LinkRateControl::Ideal {
            candidates: peer_rates(&sc.tx),
            snr_db: match sc.error {
                ErrorModel::Snr { snr_db } => snr_db,
                // A channel that loses nothing for SNR reasons: the fastest rate.
                ErrorModel::None | ErrorModel::FixedLoss { .. } => f64::INFINITY,
            },
            channel: sc.channel.as_ref().map(|c| c.direction(from_ap).clone()),
            retry_limit,
        },
    }
}

/// What minstrel_ht learns of a peer configured at `txv` (its family, width, guard
/// interval and streams) in this BSS.
fn peer_caps(cfg: &CellConfig, txv: &TxVector) -> PeerCaps {
    let (standard, width, sgi) = match *txv {
        TxVector::Dsss { .. } => (Standard::B, ChannelWidth::Mhz20, false),
        TxVector::Ofdm { .. } => (
            if cfg.band == Band::Ghz5 {
                Standard::A
            } else {
                Standard::G
            },
            ChannelWidth::Mhz20,
            false,
        ),
        TxVector::Ht { width, gi, .. } => (Standard::N, width, gi == GuardInterval::Short),
        TxVector::Vht { width, gi, .. } => (Standard::Ac, width, gi == GuardInterval::Short),
        // 6.12's minstrel_ht has no HE groups: an HE peer offers it none of its rates.
        TxVector::He { width, .. } => (Standard::Ax, width, false),
    };
    PeerCaps {
        standard,
        band: cfg.band,
        width,
        sgi,
        max_nss: txv.nss(),
        short_preamble: matches!(
            txv,
            TxVector::Dsss {
                preamble: DsssPreamble::Short,
                ..
            }
        ),
    }
}

/// Whether PPDUs of `ac` at `txv` are A-MPDUs under block ack: HT/VHT links with
/// aggregation and QoS on, every AC but VO.
pub(super) fn aggregates(cfg: &CellConfig, ac: Ac, txv: &TxVector) -> bool {
    cfg.aggregation
        && cfg.qos
        && ac != Ac::Vo
        && matches!(
            txv,
            TxVector::Ht { .. } | TxVector::Vht { .. } | TxVector::He { .. }
        )
}

/// How PPDUs of `ac` to a peer at rate `txv` are bounded: A-MPDU under block ack on
/// HT/VHT links (never VO; a legacy station's link never aggregates), at most the
/// stack's and the cell's subframe limits, the PHY's byte limit, the maximum aggregate
/// duration, and within a TXOP limit the whole exchange (protection from 802.11b
/// stations + data + SIFS + BlockAck; `air` holds the link's protection). RTS/CTS
/// asked for by the RTS threshold is not budgeted.
pub(super) fn build_limits(
    cfg: &CellConfig,
    timing: &PhyTiming,
    table: &EdcaTable,
    ac: Ac,
    txv: &TxVector,
    air: &LinkAirtime,
) -> BuildLimits {
    let aggregated = aggregates(cfg, ac, txv);
    let phy_max = match txv {
        TxVector::Vht { .. } => VHT_MAX_AMPDU_BYTES,
        TxVector::He { .. } => HE_MAX_AMPDU_BYTES,
        _ => HT_MAX_AMPDU_BYTES,
    };
    let max_bytes = match cfg.max_ampdu_bytes {
        0 => phy_max,
        b => b.min(phy_max),
    };
    let mut max_duration = cfg.max_ampdu_duration.min(PPDU_MAX_TIME);
    let txop = table[ac.index()].txop_limit();
    if txop > Nanos::ZERO {
        let response = timing.sifs
            + control_response_rate(txv, cfg.standard).ppdu_duration(BLOCK_ACK_BYTES, cfg.band);
        let protection = air.protection(air.standing_protection(), timing.sifs);
        max_duration = max_duration.min(txop.saturating_sub(protection + response));
    }
    BuildLimits {
        txv: *txv,
        aggregated,
        max_subframes: cfg.max_ampdu_subframes.min(cfg.stack.max_ampdu_subframes),
        max_bytes,
        overhead_bytes: mpdu_overhead(cfg.qos),
        max_duration_psdu_bytes: BuildLimits::psdu_bytes_within(txv, cfg.band, max_duration),
    }
}
