//! One BSS: an AP and N stations sharing one channel, driven sans-I/O.
//!
//! Input: [`Cell::handle_packet`] (a packet arrives at the AP from the wired side, or at
//! a station from its host) and [`Cell::handle_timeout`]. Output: [`Cell::poll_output`]
//! (deliveries, drops, airtime records) and [`Cell::poll_timeout`] (the next deadline).
//!
//! Channel access follows EDCA without per-slot events: every EDCA function keeps its
//! backoff counter and the time it counts from; contention ends at the earliest
//! `counted_from + slots × slot` among the functions that have frames. Functions whose
//! backoff ends within aCCATime of that instant transmit too and collide. When the
//! medium turns busy the others' counters are reduced by the slot boundaries that passed
//! (see [`BackoffRule`]).
//!
//! Each access is one frame exchange, computed in full when it starts: optional RTS/CTS,
//! the data PPDU (one MPDU, or an A-MPDU under a block-ack agreement), SIFS and the ACK
//! or BlockAck. Within a TXOP limit further exchanges follow after SIFS. Receivers
//! deliver MSDUs in sequence order through a reorder buffer at the end of the data PPDU.
//!
//! Above the MAC every node runs a transmit path ([`TxPath`]): the qdisc, mac80211's
//! TXQs, the airtime scheduler, AQL and the driver, configured by a [`StackConfig`]
//! (a kernel era). The MAC transmits the PPDUs the driver put in the hardware queue,
//! reports their outcome back, and charges the airtime to the AP's scheduler.
//!
//! Beacons, background scanning and power save (reference §7, §9) are off unless
//! configured ([`CellConfig::beacons`], [`CellConfig::station_scans`],
//! [`CellConfig::station_power_save`]); then a second, management timer runs beside
//! the MAC's. A station whose radio is off the operating channel or asleep is *away*:
//! it does not contend, and what is sent to it is lost (the sender retries, then drops).
//! Null-data frames (PM bit), PS-Polls and beacons are frames on the air with their
//! own airtime and contention (null-data and PS-Poll on AC VO, beacons on a queue with
//! AIFSN 1 and no backoff). The AP holds the frames of a station it believes dozes:
//! new ones in a power-save buffer (64 per AC, 512 in all), those already queued
//! paused in its TXQs and driver, and releases them on PM=0 or a PS-Poll.

use crate::driver::{BuildLimits, Ppdu, NUM_TIDS};
use crate::mac::ampdu::{
    BA_WINDOW, DATA_OVERHEAD_BYTES, HT_MAX_AMPDU_BYTES, PPDU_MAX_TIME, QOS_DATA_OVERHEAD_BYTES,
    VHT_MAX_AMPDU_BYTES,
};
use crate::mac::blockack::RxReorder;
use crate::mac::edca::{self, Ac, Backoff, BackoffRule, EdcaTable};
use crate::mac::protection::{needs_protection, Protection, PROTECTION_RATE};
use crate::mac80211::powersave::{
    BeaconClock, PowerSaveConfig, PsAction, PsBuffers, PsState, PsStats, StaPowerSave,
    BEACON_BYTES, DEFAULT_BEACON_INTERVAL_TU, DEFAULT_DTIM_PERIOD, NULL_DATA_BYTES, PS_POLL_BYTES,
};
use crate::mac80211::scan::{ScanAction, ScanConfig, ScanStats, Scanner};
use crate::packet::{DropReason, NodeId, Packet};
use crate::phy::channel::ErrorModel;
use crate::phy::rates::{
    control_response_rate, PpduTimer, ACK_BYTES, BLOCK_ACK_BYTES, CTS_BYTES, RTS_BYTES,
};
use crate::phy::timing::PhyTiming;
use crate::phy::{Band, Standard, TxVector};
use crate::rng::{RngStream, StreamKind};
use crate::stack::StackConfig;
use crate::txpath::{PathLink, TxPath, TxReport};
use crate::Nanos;
use std::collections::VecDeque;

/// One station's radio link to the AP (the same rate and error model both ways).
#[derive(Clone, Debug, PartialEq)]
pub struct StationConfig {
    pub tx: TxVector,
    pub error: ErrorModel,
    /// Airtime-fairness weight (`NL80211_ATTR_AIRTIME_WEIGHT`, default 256).
    pub weight: u16,
}

impl StationConfig {
    /// A station at rate `tx` with channel `error` and the default weight.
    pub fn new(tx: TxVector, error: ErrorModel) -> StationConfig {
        StationConfig {
            tx,
            error,
            weight: crate::mac80211::scheduler::DEFAULT_AIRTIME_WEIGHT,
        }
    }
}

/// Everything the cell needs to know.
#[derive(Clone, Debug, PartialEq)]
pub struct CellConfig {
    pub standard: Standard,
    pub band: Band,
    /// QoS (WMM/EDCA with four ACs). Without it: legacy DCF, one queue, non-QoS headers.
    pub qos: bool,
    pub edca_ap: EdcaTable,
    pub edca_sta: EdcaTable,
    pub backoff_rule: BackoffRule,
    /// A-MPDU aggregation under block ack (HT/VHT links, every AC but VO).
    pub aggregation: bool,
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
    /// Emit an [`Output::Airtime`] record for every data exchange (not for beacons,
    /// null-data frames or PS-Polls).
    pub airtime_records: bool,
    pub stations: Vec<StationConfig>,
    /// Model the AP's beacons: one every beacon interval on the AP's channel access,
    /// with the TIM of the stations it buffers for (reference §9). Off by default (no
    /// beacon airtime, as before); always on when a station scans or saves power.
    pub beacons: bool,
    /// Beacon interval in TU of 1024 µs (hostapd `beacon_int` = 100: 102.4 ms).
    pub beacon_interval_tu: u16,
    /// Every n-th beacon is a DTIM (hostapd `dtim_period` = 2).
    pub dtim_period: u8,
    /// Stations that scan in the background (§7): (station number from 1, its scan).
    /// Empty by default: nobody scans.
    pub station_scans: Vec<(u16, ScanConfig)>,
    /// Stations in power save (§9): (station number from 1, its settings). Empty by
    /// default: every station stays awake.
    pub station_power_save: Vec<(u16, PowerSaveConfig)>,
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
            aggregation: matches!(standard, Standard::N | Standard::Ac),
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
    fn has_mgmt(&self) -> bool {
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
        for (i, s) in self.stations.iter().enumerate() {
            let key = format!("stations[{}]", i + 1);
            s.tx.validate().map_err(|e| format!("{key}: {e}"))?;
            s.error.validate().map_err(|e| format!("{key}: {e}"))?;
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
        let check_station = |what: &str, sta: u16, seen: &mut Vec<u16>| {
            if sta == 0 || sta as usize > n {
                return Err(format!("{what}: no station {sta} in this cell"));
            }
            if seen.contains(&sta) {
                return Err(format!("{what}: station {sta} is listed twice"));
            }
            seen.push(sta);
            Ok(())
        };
        let mut seen = Vec::new();
        for (sta, sc) in &self.station_scans {
            check_station("scan", *sta, &mut seen)?;
            sc.validate().map_err(|e| format!("stations[{sta}].{e}"))?;
        }
        let mut seen = Vec::new();
        for (sta, ps) in &self.station_power_save {
            check_station("power_save", *sta, &mut seen)?;
            ps.validate().map_err(|e| format!("stations[{sta}].{e}"))?;
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
    )
}

/// How an exchange ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExchangeOutcome {
    /// Acknowledged (for an A-MPDU: a BlockAck came back, possibly with holes).
    Acked,
    /// No response: every MPDU was lost on the channel.
    Failed,
    /// Two or more transmissions overlapped.
    Collision,
}

/// Airtime of one transmission, charged to the station at the far end of the link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AirtimeRecord {
    pub station: NodeId,
    /// Station → AP.
    pub uplink: bool,
    pub ac: Ac,
    /// Where the charged time starts: the exchange's start, or within a TXOP the end of
    /// the previous exchange (the SIFS between them is the holder's), so a lone
    /// transmitter's records tile the busy time. For a collision, the transmission's
    /// own start.
    pub start: Nanos,
    /// Medium time charged: the whole exchange (RTS/CTS, data, SIFS, ACK) or, for a
    /// collision, an equal share of the collided busy period.
    pub airtime: Nanos,
    pub mpdus: u16,
    pub acked_mpdus: u16,
    pub outcome: ExchangeOutcome,
}

/// What the model reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// `packet` left the cell at `packet.dst`.
    Delivered {
        at: Nanos,
        packet: Packet,
    },
    Dropped {
        at: Nanos,
        node: NodeId,
        packet: Packet,
        reason: DropReason,
    },
    Airtime(AirtimeRecord),
}

/// Counters of one direction of one station's link.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkStats {
    pub offered_packets: u64,
    pub delivered_packets: u64,
    pub delivered_bytes: u64,
    /// PPDUs sent (first transmissions and retries).
    pub ppdus: u64,
    pub mpdus: u64,
    /// MPDU transmissions that were retransmissions.
    pub mpdu_retries: u64,
    /// PPDUs lost in a collision.
    pub collisions: u64,
    /// PPDUs that got no response for another reason (channel errors).
    pub failures: u64,
    pub dropped_queue_full: u64,
    pub dropped_retry_limit: u64,
    /// Dropped by CoDel or by flow-queue overload (limit or memory).
    pub dropped_aqm: u64,
    /// Dropped from the AP's power-save buffer (downlink only).
    pub dropped_ps_buffer: u64,
    /// Airtime of the link's exchanges, including the station's null-data frames and
    /// PS-Polls (uplink).
    pub airtime_ns: u64,
}

/// Per-station counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StationStats {
    pub up: LinkStats,
    pub down: LinkStats,
    /// Background scanning (all zero if the station does not scan).
    pub scan: ScanStats,
    /// Power save, the station's and the AP's side (all zero without).
    pub ps: PsStats,
}

impl StationStats {
    pub fn airtime_ns(&self) -> u64 {
        self.up.airtime_ns + self.down.airtime_ns
    }
}

/// One radio link to a peer: its rate, channel, and the receive reorder state.
#[derive(Clone, Debug)]
struct Link {
    peer: NodeId,
    rx: [RxReorder; NUM_TIDS],
    txv: TxVector,
    /// The PPDU durations of `txv` (which never changes).
    air: LinkAirtime,
    error: ErrorModel,
    rng: RngStream,
}

/// The durations the MAC needs for every exchange on a link, computed once: a link's
/// rate and the band are fixed for the whole run, so the data PPDU's TXTIME equation
/// ([`PpduTimer`]) and the control frames at the link's control-response rate
/// (10.6.6.5) are the same at every exchange. Each value equals the
/// [`TxVector::ppdu_duration`] call it replaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct LinkAirtime {
    /// Data PPDUs at the link's rate.
    data: PpduTimer,
    /// ACK and BlockAck at the control-response rate of the link's rate.
    ack: Nanos,
    block_ack: Nanos,
    /// RTS and CTS of an RTS/CTS exchange: at the control-response rate, or at the
    /// protection rate on a link protected from 802.11b stations (10.26.2).
    rts: Nanos,
    cts: Nanos,
    /// CTS-to-self + SIFS in front of every data PPDU of a link protected by
    /// CTS-to-self; zero on every other link.
    cts_to_self: Nanos,
    /// Every data PPDU goes after RTS/CTS (a link protected by RTS/CTS).
    always_rts: bool,
}

impl LinkAirtime {
    /// The durations of a link at `txv` with `timing`'s band, SIFS and standard.
    /// `protection` is how the link's PPDUs are protected: [`Protection::Off`] unless an
    /// 802.11b station is in the cell and `txv` needs protection.
    fn new(txv: &TxVector, timing: &PhyTiming, protection: Protection) -> LinkAirtime {
        let band = timing.band;
        let ctl = control_response_rate(txv, timing.standard);
        // RTS and CTS go at a rate the 802.11b stations decode when they protect.
        let rts_cts = match protection {
            Protection::Off => ctl,
            Protection::CtsToSelf | Protection::RtsCts => PROTECTION_RATE,
        };
        LinkAirtime {
            data: PpduTimer::new(txv, band),
            ack: ctl.ppdu_duration(ACK_BYTES, band),
            block_ack: ctl.ppdu_duration(BLOCK_ACK_BYTES, band),
            rts: rts_cts.ppdu_duration(RTS_BYTES, band),
            cts: rts_cts.ppdu_duration(CTS_BYTES, band),
            cts_to_self: match protection {
                Protection::CtsToSelf => {
                    PROTECTION_RATE.ppdu_duration(CTS_BYTES, band) + timing.sifs
                }
                Protection::RtsCts | Protection::Off => Nanos::ZERO,
            },
            always_rts: protection == Protection::RtsCts,
        }
    }

    /// The air time an exchange spends protecting its data PPDU before it starts: RTS,
    /// SIFS, CTS, SIFS if `rts`, else the CTS-to-self and SIFS (zero if unprotected).
    fn protection(&self, rts: bool, sifs: Nanos) -> Nanos {
        if rts {
            self.rts + sifs + self.cts + sifs
        } else {
            self.cts_to_self
        }
    }

    /// The response to a data PPDU: a BlockAck to an A-MPDU, an ACK otherwise.
    fn response(&self, aggregated: bool) -> Nanos {
        if aggregated {
            self.block_ack
        } else {
            self.ack
        }
    }
}

#[derive(Clone, Debug)]
struct Node {
    id: NodeId,
    edca: [Backoff; 4],
    /// Start of the interframe space every AC counts its AIFS from.
    ifs_ref: Nanos,
    rng: RngStream,
    links: Vec<Link>,
    path: TxPath,
    /// The radio is off the operating channel (scanning) or asleep (power save): the
    /// node neither contends nor receives.
    away: bool,
    /// Management frames waiting to be sent on AC VO (mac80211 sends null-data frames
    /// at TID 7), ahead of the AC's data. At most [`MAX_CTL_FRAMES`].
    ctl: VecDeque<CtlFrame>,
    /// The front of `ctl` is on the air.
    ctl_in_air: bool,
    /// Transmissions of the front of `ctl` so far.
    ctl_attempts: u8,
}

impl Node {
    fn link_to(&self, peer: NodeId) -> Option<usize> {
        self.path.link_to(peer).map(|l| l as usize)
    }

    /// Whether `ac` has a frame to contend for: a management frame (VO) or a PPDU.
    fn has_frame(&self, ac: Ac) -> bool {
        (ac == Ac::Vo && !self.ctl.is_empty()) || self.path.has_ppdu(ac)
    }
}

/// Management frames queued per station: a null-data frame and a PS-Poll at most, plus
/// slack.
const MAX_CTL_FRAMES: usize = 4;

/// A frame that is not data. Null-data frames and PS-Polls are acknowledged and retried
/// like data; beacons are broadcast.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CtlFrame {
    /// Station → AP: the PM bit tells the AP to buffer (1) or release (0).
    NullData { pm: bool },
    /// Station → AP: release one buffered frame.
    PsPoll,
    /// The AP's `k`-th beacon.
    Beacon { k: u64 },
}

/// Beacons, the AP's power-save state and the stations' scanners and power save
/// (absent when none is configured, so the data path pays nothing).
#[derive(Clone, Debug)]
struct Mgmt {
    clock: BeaconClock,
    /// The next beacon whose TBTT is still ahead.
    next_beacon: u64,
    /// A beacon whose TBTT has passed, waiting for the medium.
    beacon_pending: Option<u64>,
    /// Per station (index station − 1): the AP believes it dozes.
    ap_dozing: Vec<bool>,
    /// Per station: the AP serves its PS-Polls (its frames flow although it dozes).
    ap_service: Vec<bool>,
    buffers: PsBuffers,
    stas: Vec<StaMgmt>,
    /// The earliest management deadline.
    timer: Option<Nanos>,
    scratch: Vec<Packet>,
}

/// One station's scanner and power save.
#[derive(Clone, Debug, Default)]
struct StaMgmt {
    scan: Option<Scanner>,
    ps: Option<StaPowerSave>,
    /// The scanner waits for the station's next null-data frame to complete.
    scan_waits_null: bool,
    /// The power-save radio is off since then.
    doze_since: Option<Nanos>,
}

impl StaMgmt {
    /// The radio can neither send nor receive on the operating channel.
    fn away(&self) -> bool {
        self.scan.as_ref().is_some_and(|s| !s.on_channel())
            || self.ps.as_ref().is_some_and(|p| !p.radio_on())
    }
}

/// One transmission within an exchange.
#[derive(Clone, Debug)]
struct Tx {
    node: u16,
    ac: Ac,
    start: Nanos,
    /// End of this transmitter's first PPDU on the air (RTS or data).
    air_end: Nanos,
    ppdu: Ppdu,
    /// Per MPDU: decoded by the receiver.
    ok: Vec<bool>,
    /// A management frame instead of the (then empty) PPDU.
    ctl: Option<CtlFrame>,
}

impl Tx {
    fn link(&self) -> u16 {
        self.ppdu.link
    }
    fn tid(&self) -> u8 {
        self.ppdu.tid
    }
}

#[derive(Clone, Debug, Default)]
struct Exchange {
    txs: Vec<Tx>,
    outcome: Option<ExchangeOutcome>,
    /// When the data PPDU ends and the receiver releases what it got.
    deliver_at: Nanos,
    delivered: bool,
    /// End of the busy period (the response, or the longest colliding PPDU).
    end: Nanos,
    /// Start of the current TXOP (for continuation within the TXOP limit).
    txop_start: Nanos,
    /// Where this exchange's busy time starts: its first transmission, or, within a
    /// TXOP, the end of the previous exchange (the SIFS between them is the holder's).
    busy_from: Nanos,
}

/// The cell.
#[derive(Clone, Debug)]
pub struct Cell {
    cfg: CellConfig,
    timing: PhyTiming,
    nodes: Vec<Node>,
    busy: bool,
    /// The MAC's next deadline. Written only through [`Cell::set_timer`], which keeps
    /// `deadline` in step.
    timer: Option<Nanos>,
    /// The earlier of `timer` and the management timer: what [`Cell::poll_timeout`]
    /// returns. Kept up to date where either timer changes ([`Cell::set_timer`],
    /// [`Cell::refresh_mgmt_timer`]) because it is asked far more often (every turn of
    /// the event loop, every packet handed in) than the timers change.
    deadline: Option<Nanos>,
    now: Nanos,
    exch: Exchange,
    out: VecDeque<Output>,
    /// Scratch: packets a reorder buffer released, before they become outputs.
    released: Vec<Packet>,
    /// [`PhyTiming::eifs_extra`], computed once.
    eifs_extra: Nanos,
    /// Per-MPDU outcome vectors of finished transmissions, for reuse. At most one per
    /// transmission of an exchange.
    spare_ok: Vec<Vec<bool>>,
    stats: Vec<StationStats>,
    busy_ns: u64,
    internal_collisions: u64,
    mgmt: Option<Box<Mgmt>>,
    beacon_airtime_ns: u64,
}

impl Cell {
    /// Build a cell; `seed` seeds every random stream (one per node and per link).
    pub fn new(cfg: CellConfig, seed: u64) -> Result<Cell, String> {
        cfg.validate()?;
        let non_erp = cfg.non_erp_present();
        let timing = PhyTiming::for_bss(cfg.standard, cfg.band, non_erp);
        // How a link's PPDUs are protected from the 802.11b stations (if any).
        let protection_of = |txv: &TxVector| {
            if non_erp && needs_protection(txv) {
                cfg.protection
            } else {
                Protection::Off
            }
        };
        let n = cfg.stations.len();
        let mut nodes = Vec::with_capacity(n + 1);
        // Without VHT the fq memory limit is 4 MiB (reference §3.2).
        let fq_memory = match cfg.stack.fq_memory_limit_bytes {
            0 if cfg.standard == Standard::Ac => 16 << 20,
            0 => 4 << 20,
            m => m,
        };
        for id in 0..=n as u16 {
            let node_id = NodeId(id);
            let mut rng = RngStream::new(seed, StreamKind::Backoff, id as u64);
            let table = if node_id.is_ap() {
                &cfg.edca_ap
            } else {
                &cfg.edca_sta
            };
            let edca = Ac::ALL.map(|ac| {
                let mut b = Backoff::new(table[ac.index()], &mut rng);
                b.counted_from = timing.aifs(b.params.aifsn);
                b
            });
            let peers: Vec<(NodeId, &StationConfig)> = if node_id.is_ap() {
                (1..=n as u16)
                    .map(|s| (NodeId(s), &cfg.stations[s as usize - 1]))
                    .collect()
            } else {
                vec![(NodeId::AP, &cfg.stations[id as usize - 1])]
            };
            // mac80211 counts associated stations for the slow-station rule.
            let num_sta = if node_id.is_ap() { n as u64 } else { 1 };
            let airs: Vec<LinkAirtime> = peers
                .iter()
                .map(|(_, sc)| LinkAirtime::new(&sc.tx, &timing, protection_of(&sc.tx)))
                .collect();
            let path_links = peers
                .iter()
                .zip(&airs)
                .map(|((peer, sc), air)| PathLink {
                    peer: *peer,
                    weight: sc.weight,
                    limits: Ac::ALL.map(|ac| build_limits(&cfg, &timing, table, ac, &sc.tx, air)),
                    slow_station: expected_kbps(sc) < 6_000 * num_sta,
                })
                .collect();
            let links = peers
                .into_iter()
                .zip(airs)
                .map(|((peer, sc), air)| Link {
                    peer,
                    rx: Default::default(),
                    txv: sc.tx,
                    air,
                    error: sc.error,
                    rng: RngStream::new(
                        seed,
                        StreamKind::Channel,
                        ((id as u64) << 16) | peer.0 as u64,
                    ),
                })
                .collect();
            nodes.push(Node {
                id: node_id,
                edca,
                ifs_ref: Nanos::ZERO,
                rng,
                links,
                path: TxPath::new(&cfg.stack, cfg.qos, node_id.is_ap(), path_links, fq_memory),
                away: false,
                ctl: VecDeque::new(),
                ctl_in_air: false,
                ctl_attempts: 0,
            });
        }
        let mgmt = cfg.has_mgmt().then(|| {
            let clock = BeaconClock::new(cfg.beacon_interval_tu, cfg.dtim_period);
            let mut stas = vec![StaMgmt::default(); n];
            for (sta, sc) in &cfg.station_scans {
                stas[*sta as usize - 1].scan = Some(Scanner::new(sc.clone(), clock.interval));
            }
            for (sta, ps) in &cfg.station_power_save {
                stas[*sta as usize - 1].ps = Some(StaPowerSave::new(*ps, Nanos::ZERO));
            }
            let mut m = Box::new(Mgmt {
                clock,
                next_beacon: clock.next_after(Nanos::ZERO),
                beacon_pending: None,
                ap_dozing: vec![false; n],
                ap_service: vec![false; n],
                buffers: PsBuffers::new(n),
                stas,
                timer: None,
                scratch: Vec::new(),
            });
            m.refresh_timer();
            m
        });
        let deadline = mgmt.as_ref().and_then(|m| m.timer);
        Ok(Cell {
            cfg,
            timing,
            nodes,
            busy: false,
            timer: None,
            deadline,
            now: Nanos::ZERO,
            exch: Exchange::default(),
            out: VecDeque::new(),
            released: Vec::new(),
            eifs_extra: timing.eifs_extra(),
            spare_ok: Vec::new(),
            stats: vec![StationStats::default(); n + 1],
            busy_ns: 0,
            internal_collisions: 0,
            mgmt,
            beacon_airtime_ns: 0,
        })
    }

    pub fn config(&self) -> &CellConfig {
        &self.cfg
    }

    pub fn timing(&self) -> &PhyTiming {
        &self.timing
    }

    /// Number of stations.
    pub fn stations(&self) -> usize {
        self.nodes.len() - 1
    }

    /// Per-station counters, indexed by station number (index 0 is unused).
    pub fn stats(&self) -> &[StationStats] {
        &self.stats
    }

    /// Total time the medium was busy (exchanges and collisions).
    pub fn busy_ns(&self) -> u64 {
        self.busy_ns
    }

    /// Internal (same-station, different-AC) collisions so far.
    pub fn internal_collisions(&self) -> u64 {
        self.internal_collisions
    }

    /// Medium time taken by the AP's beacons (part of [`Cell::busy_ns`]).
    pub fn beacon_airtime_ns(&self) -> u64 {
        self.beacon_airtime_ns
    }

    /// Whether station `sta`'s radio is away from the operating channel or asleep.
    pub fn station_away(&self, sta: u16) -> bool {
        self.nodes.get(sta as usize).is_some_and(|n| n.away)
    }

    /// Whether the AP believes station `sta` dozes (and buffers its frames).
    pub fn ap_buffers_for(&self, sta: u16) -> bool {
        self.mgmt.as_ref().is_some_and(|m| {
            sta.checked_sub(1)
                .is_some_and(|i| m.ap_dozing.get(i as usize) == Some(&true))
        })
    }

    /// Pending AQL airtime the AP holds for `station`'s AC.
    pub fn aql_pending_us(&self, station: u16, ac: Ac) -> u32 {
        match station.checked_sub(1) {
            Some(link) => self.nodes[0].path.aql_pending_us(link, ac),
            None => 0,
        }
    }

    /// Packets inside the model: queued, in the air, held in a reorder buffer, or in
    /// the AP's power-save buffer.
    pub fn packets_inside(&self) -> u64 {
        let mut n = self.mgmt.as_ref().map_or(0, |m| m.buffers.total() as u64);
        for node in &self.nodes {
            n += node.path.packets_inside();
            for link in &node.links {
                n += link.rx.iter().map(|r| r.held() as u64).sum::<u64>();
            }
        }
        if self.busy {
            // After the data PPDU ended, what the receiver decoded belongs to it
            // (released or held for reordering), not to the air any more.
            for tx in &self.exch.txs {
                let received = |k: usize| self.exch.delivered && tx.ok.get(k) == Some(&true);
                n += (0..tx.ppdu.mpdus.len()).filter(|&k| !received(k)).count() as u64;
            }
        }
        n
    }

    /// The next time the model needs [`Cell::handle_timeout`].
    #[inline]
    pub fn poll_timeout(&self) -> Option<Nanos> {
        debug_assert_eq!(self.deadline, self.combined_deadline());
        self.deadline
    }

    /// The earlier of the MAC's and the management timer (what `deadline` caches).
    fn combined_deadline(&self) -> Option<Nanos> {
        match (self.timer, self.mgmt.as_ref().and_then(|m| m.timer)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Set the MAC's timer (the only way it changes) and the cached deadline with it.
    #[inline]
    fn set_timer(&mut self, timer: Option<Nanos>) {
        self.timer = timer;
        // Without management (most runs) the deadline is the MAC's timer itself.
        self.deadline = match &self.mgmt {
            None => timer,
            Some(_) => self.combined_deadline(),
        };
    }

    /// The next output, if any.
    #[inline]
    pub fn poll_output(&mut self) -> Option<Output> {
        self.out.pop_front()
    }

    /// Run every deadline up to and including `now`.
    #[inline]
    pub fn handle_timeout(&mut self, now: Nanos) {
        // Most calls (every packet handed in) find nothing due: check before entering
        // the MAC's large state machine.
        if self.poll_timeout().is_some_and(|t| t <= now) {
            self.run_deadlines(now);
        }
        if now > self.now {
            self.now = now;
        }
    }

    /// The deadlines up to and including `now`, in order.
    #[inline(never)]
    fn run_deadlines(&mut self, now: Nanos) {
        while let Some(t) = self.poll_timeout() {
            if t > now {
                break;
            }
            self.now = t;
            // At one instant, management (a radio leaving, a beacon falling due) goes
            // before the MAC.
            if self.mgmt.as_ref().and_then(|m| m.timer) == Some(t) {
                self.handle_mgmt(t);
            } else if !self.busy {
                self.start_access(t);
            } else if !self.exch.delivered {
                self.deliver(t);
            } else {
                self.finish_exchange(t);
            }
        }
    }

    /// A packet arrives at `packet.src` at time `now`, for `packet.dst`.
    pub fn handle_packet(&mut self, now: Nanos, mut packet: Packet) {
        self.handle_timeout(now);
        packet.enqueued_at = now;
        let src = packet.src.index();
        let link = if src < self.nodes.len() && packet.src.is_ap() != packet.dst.is_ap() {
            self.nodes[src].path.link_to(packet.dst)
        } else {
            None
        };
        let Some(link) = link else {
            self.out.push_back(Output::Dropped {
                at: now,
                node: packet.src,
                packet,
                reason: DropReason::NoRoute,
            });
            return;
        };
        let station = self.station_of(src, link as usize);
        self.link_stats(station, src != 0).offered_packets += 1;
        if self.mgmt.is_some() && self.mgmt_takes_packet(now, src, station, packet) {
            return;
        }
        // Enqueueing moves frames of the packet's AC only (TxPath::enqueue kicks that
        // AC alone), so only that EDCAF can wake.
        let ac = self.nodes[src].path.classify_ac(&packet);
        let had = self.nodes[src].has_frame(ac);
        #[cfg(debug_assertions)]
        let had_all = Ac::ALL.map(|a| self.nodes[src].has_frame(a));
        self.nodes[src].path.enqueue(now, link, packet);
        self.drain_path(src, now);
        #[cfg(debug_assertions)]
        for a in Ac::ALL.into_iter().filter(|&a| a != ac) {
            debug_assert_eq!(had_all[a.index()], self.nodes[src].has_frame(a));
        }
        if !had && self.nodes[src].has_frame(ac) {
            self.edcaf_woken(src, ac, now);
        }
    }

    /// Start contention for the ACs of node `n` that had no frame before (`had`).
    fn wake_new_frames(&mut self, n: usize, had: [bool; 4], now: Nanos) {
        for ac in Ac::ALL {
            if !had[ac.index()] && self.nodes[n].has_frame(ac) {
                self.edcaf_woken(n, ac, now);
            }
        }
    }

    /// Report what node `n`'s path dropped or gave up since the last call.
    #[inline]
    fn drain_path(&mut self, n: usize, now: Nanos) {
        // Called after every packet handed to a path; usually there is nothing.
        if self.nodes[n].path.drops.is_empty() && self.nodes[n].path.gave_up.is_empty() {
            return;
        }
        self.report_path_losses(n, now);
    }

    /// [`Cell::drain_path`] when there is something to report.
    #[inline(never)]
    fn report_path_losses(&mut self, n: usize, now: Nanos) {
        let mut drops = std::mem::take(&mut self.nodes[n].path.drops);
        for (packet, reason) in drops.drain(..) {
            let uplink = !packet.src.is_ap();
            let station = if uplink { packet.src } else { packet.dst }.index();
            let s = self.link_stats(station, uplink);
            match reason {
                DropReason::QueueFull => s.dropped_queue_full += 1,
                DropReason::RetryLimit => s.dropped_retry_limit += 1,
                DropReason::PsBuffer => s.dropped_ps_buffer += 1,
                _ => s.dropped_aqm += 1,
            }
            self.out.push_back(Output::Dropped {
                at: now,
                node: self.nodes[n].id,
                packet,
                reason,
            });
        }
        self.nodes[n].path.drops = drops;
        let mut gave_up = std::mem::take(&mut self.nodes[n].path.gave_up);
        for (link, tid, seq) in gave_up.drain(..) {
            // The recipient stops waiting for it (see `RxReorder::give_up`).
            let peer = self.nodes[n].links[link as usize].peer;
            let src_id = self.nodes[n].id;
            let rx_node = peer.index();
            if let Some(rx_link) = self.nodes[rx_node].link_to(src_id) {
                let released = &mut self.released;
                self.nodes[rx_node].links[rx_link].rx[tid as usize]
                    .give_up(seq, &mut |p| released.push(p));
                self.emit_released(now, n, link as usize);
            }
        }
        self.nodes[n].path.gave_up = gave_up;
    }

    /// An AC of node `n` got its first PPDU at `now`.
    fn edcaf_woken(&mut self, n: usize, ac: Ac, now: Nanos) {
        let slot = self.timing.slot;
        let busy = self.busy;
        let node = &mut self.nodes[n];
        if node.away {
            // Contention starts when the radio is back (`Cell::radio_back`).
            return;
        }
        let b = &mut node.edca[ac.index()];
        if busy {
            // A frame for an idle EDCAF while the medium is busy: invoke backoff
            // (10.22.2.2) unless post-backoff is still running.
            if b.slots == 0 {
                b.draw(&mut node.rng);
            }
            return;
        }
        // Medium idle: if the counter already ran out (AIFS has passed and post-backoff
        // finished), the frame may go at once.
        if b.tx_time(slot) < now {
            b.slots = 0;
            b.counted_from = now;
        }
        let t = b.tx_time(slot);
        self.set_timer(Some(self.timer.map_or(t, |cur| cur.min(t))));
    }

    fn station_of(&self, node: usize, link: usize) -> usize {
        if node == 0 {
            link + 1
        } else {
            node
        }
    }

    fn link_stats(&mut self, station: usize, uplink: bool) -> &mut LinkStats {
        let s = &mut self.stats[station];
        if uplink {
            &mut s.up
        } else {
            &mut s.down
        }
    }

    fn mpdu_overhead(&self) -> u32 {
        mpdu_overhead(self.cfg.qos)
    }

    /// Keep a finished transmission's per-MPDU outcome vector for the next one.
    fn recycle_ok(&mut self, mut tx: Tx) {
        tx.ok.clear();
        self.spare_ok.push(std::mem::take(&mut tx.ok));
    }

    /// Empty the exchange's transmissions, keeping their outcome vectors.
    fn clear_txs(&mut self) {
        while let Some(tx) = self.exch.txs.pop() {
            self.recycle_ok(tx);
        }
    }

    /// Contention ended at `t`: find who transmits, freeze the others, start the exchange.
    fn start_access(&mut self, t: Nanos) {
        let slot = self.timing.slot;
        let window_end = t + self.timing.cca_detect;
        let rule = self.cfg.backoff_rule;
        self.clear_txs();
        let beacon = self.beacon_tx_time();
        for n in 0..self.nodes.len() {
            let node = &mut self.nodes[n];
            if node.away {
                continue;
            }
            let mut best: Option<(Nanos, Ac)> = None;
            for ac in Ac::ALL {
                if !node.has_frame(ac) {
                    continue;
                }
                let tx_at = node.edca[ac.index()].tx_time(slot);
                if tx_at <= window_end && best.is_none_or(|(bt, _)| tx_at < bt) {
                    best = Some((tx_at, ac)); // ACs are scanned VO first: ties keep the higher
                }
            }
            // The AP's beacon queue (AIFSN 1, no backoff: ath9k's beacon queue) goes
            // before its data queues.
            let beacon_now = if n == 0 {
                beacon.filter(|&(bt, _)| bt <= window_end && best.is_none_or(|(t0, _)| bt <= t0))
            } else {
                None
            };
            if let Some((bt, k)) = beacon_now {
                best = None;
                self.exch.txs.push(Tx {
                    node: 0,
                    ac: Ac::Vo,
                    start: bt,
                    air_end: bt,
                    ppdu: Ppdu::default(),
                    ok: self.spare_ok.pop().unwrap_or_default(),
                    ctl: Some(CtlFrame::Beacon { k }),
                });
                if let Some(m) = self.mgmt.as_mut() {
                    m.beacon_pending = None;
                }
            }
            let busy_at = match (best, beacon_now) {
                (_, Some((bt, _))) => bt,
                (Some((start, ac)), None) => {
                    // Lower-priority ACs whose backoff ended in the same slot: internal
                    // collision, handled as if they had collided (10.22.2.4).
                    for other in Ac::ALL {
                        if other != ac
                            && node.has_frame(other)
                            && node.edca[other.index()].tx_time(slot) == start
                        {
                            let b = &mut node.edca[other.index()];
                            b.fail(&mut node.rng);
                            self.internal_collisions += 1;
                        }
                    }
                    if ac == Ac::Vo && !node.ctl.is_empty() {
                        node.ctl_in_air = true;
                        self.exch.txs.push(Tx {
                            node: n as u16,
                            ac,
                            start,
                            air_end: start,
                            ppdu: Ppdu::default(),
                            ok: self.spare_ok.pop().unwrap_or_default(),
                            ctl: node.ctl.front().copied(),
                        });
                    } else if let Some(ppdu) = node.path.take_ppdu(start, ac) {
                        self.exch.txs.push(Tx {
                            node: n as u16,
                            ac,
                            start,
                            air_end: start,
                            ppdu,
                            ok: self.spare_ok.pop().unwrap_or_default(),
                            ctl: None,
                        });
                    }
                    start
                }
                (None, None) => window_end,
            };
            let winner = best.map(|(_, ac)| ac);
            for ac in Ac::ALL {
                if Some(ac) != winner {
                    node.edca[ac.index()].freeze(busy_at, slot, rule);
                }
            }
        }
        if self.exch.txs.is_empty() {
            // Nothing could be built after all (defensive: has_ppdu promised a frame).
            self.reschedule();
            return;
        }
        self.busy = true;
        self.exch.txop_start = t;
        self.exch.busy_from = t;
        if self.exch.txs.len() > 1 {
            self.resolve_collision();
        } else {
            self.resolve_single(None);
        }
    }

    fn uses_rts(&self, psdu_bytes: u32) -> bool {
        self.cfg
            .rts_threshold_bytes
            .is_some_and(|th| psdu_bytes > th)
    }

    /// Several transmissions overlap: all are lost.
    fn resolve_collision(&mut self) {
        let band = self.cfg.band;
        let mut end = Nanos::ZERO;
        for i in 0..self.exch.txs.len() {
            let air = {
                let tx = &self.exch.txs[i];
                self.nodes[tx.node as usize].links[tx.link() as usize].air
            };
            let psdu = self.exch.txs[i].ppdu.psdu_bytes;
            let dur = if let Some(c) = self.exch.txs[i].ctl {
                let (v, bytes) = self.ctl_vector(self.exch.txs[i].node as usize, c);
                v.ppdu_duration(bytes, band)
            } else if self.uses_rts(psdu) || air.always_rts {
                air.rts
            } else {
                // A CTS-to-self draws no response: its sender goes on with the data
                // PPDU after SIFS, unaware of the collision.
                air.cts_to_self + air.data.duration(psdu)
            };
            let tx = &mut self.exch.txs[i];
            tx.air_end = tx.start + dur;
            end = end.max(tx.air_end);
            tx.ok.clear();
            for m in tx.ppdu.mpdus.iter_mut() {
                m.attempts = m.attempts.saturating_add(1);
                tx.ok.push(false);
            }
        }
        self.exch.outcome = Some(ExchangeOutcome::Collision);
        self.exch.delivered = true;
        self.exch.end = end;
        self.set_timer(Some(end));
    }

    /// One transmission: draw the channel errors and lay out the exchange. `known` is
    /// (data PPDU, response) duration when the caller has just computed them for this
    /// PPDU without RTS ([`Cell::continue_txop`] does, for every PPDU of a TXOP).
    fn resolve_single(&mut self, known: Option<(Nanos, Nanos)>) {
        if self.exch.txs[0].ctl.is_some() {
            self.resolve_ctl();
            return;
        }
        let sifs = self.timing.sifs;
        let overhead = self.mpdu_overhead();
        let rts = self.uses_rts(self.exch.txs[0].ppdu.psdu_bytes);
        let tx = &mut self.exch.txs[0];
        // A receiver that is off channel or asleep decodes nothing (and answers
        // nothing): the sender retries and finally drops (the legacy scan's losses).
        let peer = self.nodes[tx.node as usize].links[tx.ppdu.link as usize].peer;
        let absent = self.nodes[peer.index()].away;
        let link = &mut self.nodes[tx.node as usize].links[tx.ppdu.link as usize];
        let txv = link.txv;
        let air = link.air;
        let rts = rts || air.always_rts;
        let t = tx.start + air.protection(rts, sifs);
        let (data_dur, resp_dur) = match known {
            Some(d) => {
                debug_assert!(!rts);
                debug_assert_eq!(
                    d,
                    (
                        air.data.duration(tx.ppdu.psdu_bytes),
                        air.response(tx.ppdu.aggregated)
                    )
                );
                d
            }
            None => (
                air.data.duration(tx.ppdu.psdu_bytes),
                air.response(tx.ppdu.aggregated),
            ),
        };
        let data_end = t + data_dur;
        tx.ok.clear();
        let any_ok = if absent || matches!(link.error, ErrorModel::None) {
            // Nothing to draw: an absent receiver decodes nothing, and an error-free
            // link loses nothing (its PER is exactly 0, for which `bernoulli` returns
            // false without drawing), so every MPDU has the same outcome and the
            // channel stream is left untouched, as in the per-MPDU loop below.
            for m in tx.ppdu.mpdus.iter_mut() {
                m.attempts = m.attempts.saturating_add(1);
            }
            tx.ok.resize(tx.ppdu.mpdus.len(), !absent);
            !absent && !tx.ppdu.mpdus.is_empty()
        } else {
            let mut any_ok = false;
            for m in tx.ppdu.mpdus.iter_mut() {
                m.attempts = m.attempts.saturating_add(1);
                let per = link.error.per(&txv, m.packet.len_bytes + overhead);
                let ok = !link.rng.bernoulli(per);
                any_ok |= ok;
                tx.ok.push(ok);
            }
            any_ok
        };
        tx.air_end = data_end;
        self.exch.deliver_at = data_end;
        self.exch.delivered = false;
        if any_ok {
            self.exch.end = data_end + sifs + resp_dur;
            self.exch.outcome = Some(ExchangeOutcome::Acked);
        } else {
            self.exch.end = data_end;
            self.exch.outcome = Some(ExchangeOutcome::Failed);
        }
        self.set_timer(Some(data_end));
    }

    /// The data PPDU ended: the receiver releases what it decoded, in order.
    fn deliver(&mut self, t: Nanos) {
        self.exch.delivered = true;
        self.set_timer(Some(self.exch.end));
        if self.exch.txs[0].ctl.is_some() {
            self.deliver_ctl(t);
            return;
        }
        let tx = &self.exch.txs[0];
        let (txn, link, tid) = (tx.node as usize, tx.link() as usize, tx.tid() as usize);
        let rx_node = self.nodes[txn].links[link].peer.index();
        if self.mgmt.is_some() && tx.ok.iter().any(|&o| o) {
            self.data_received(t, txn, rx_node);
        }
        let tx = &self.exch.txs[0];
        let Some(rx_link) = self.nodes[rx_node].link_to(self.nodes[txn].id) else {
            return;
        };
        let reorder = &mut self.nodes[rx_node].links[rx_link].rx[tid];
        // What the reorder buffer releases becomes an output at once, in the order
        // released (as `emit_released` would report it, without the scratch copy).
        let out = &mut self.out;
        let (mut pkts, mut bytes) = (0, 0);
        let mut emit = |p: Packet| {
            pkts += 1;
            bytes += p.len_bytes as u64;
            out.push_back(Output::Delivered { at: t, packet: p });
        };
        for (m, ok) in tx.ppdu.mpdus.iter().zip(&tx.ok) {
            if *ok {
                reorder.receive(m.seq, m.packet, &mut emit);
            }
        }
        self.count_delivered(txn, link, pkts, bytes);
    }

    /// Report the packets a reorder buffer just released as delivered (they came from
    /// node `txn` over its link `link`).
    fn emit_released(&mut self, t: Nanos, txn: usize, link: usize) {
        let pkts = self.released.len() as u64;
        let mut bytes = 0;
        // One pass, and one reservation in `out` (the drain's length is known).
        self.out.extend(self.released.drain(..).map(|p| {
            bytes += p.len_bytes as u64;
            Output::Delivered { at: t, packet: p }
        }));
        self.count_delivered(txn, link, pkts, bytes);
    }

    /// Count `pkts` packets of `bytes` bytes delivered from node `txn` over its link
    /// `link`.
    fn count_delivered(&mut self, txn: usize, link: usize, pkts: u64, bytes: u64) {
        let station = self.station_of(txn, link);
        let s = self.link_stats(station, txn != 0);
        s.delivered_packets += pkts;
        s.delivered_bytes += bytes;
    }

    /// The busy period ended at `t`: report every PPDU's outcome to its path (which
    /// retries, drops and refills), count and charge airtime, then either continue the
    /// TXOP or return to contention.
    ///
    /// The transmissions are settled where they are, in order: nothing called from here
    /// looks at the exchange's transmissions (only `ps_timeout` does, from
    /// `handle_mgmt`), so they need not be moved out first.
    fn finish_exchange(&mut self, t: Nanos) {
        let outcome = self.exch.outcome.unwrap_or(ExchangeOutcome::Failed);
        let busy = t - self.exch.busy_from;
        self.busy_ns += busy.as_ns();
        let n_tx = self.exch.txs.len() as u64;
        for i in 0..self.exch.txs.len() {
            // Charge the busy period: whole to a lone transmitter; a collision is shared
            // equally, the remainder going to the first transmitter.
            let share = busy.as_ns() / n_tx + if i == 0 { busy.as_ns() % n_tx } else { 0 };
            let tx = &self.exch.txs[i];
            match tx.ctl {
                Some(c) => self.finish_ctl(t, tx.node as usize, c, outcome, share),
                None => self.settle_data(i, t, outcome, share),
            }
        }
        // An acknowledged exchange had a lone transmitter: its record stays for a TXOP
        // continuation.
        if outcome == ExchangeOutcome::Acked && self.continue_txop(t) {
            return;
        }
        // Interframe references for the next contention.
        let eifs_extra = self.eifs_extra;
        for node in &mut self.nodes {
            node.ifs_ref = if outcome == ExchangeOutcome::Acked {
                t
            } else {
                t + eifs_extra
            };
        }
        if outcome != ExchangeOutcome::Acked {
            for tx in &self.exch.txs {
                // A transmitter that got no response waits out its response timeout; it
                // saw no errored frame, so it uses AIFS, not EIFS.
                let n = tx.node as usize;
                let eliciting = match tx.ctl {
                    Some(c) => self.ctl_vector(n, c).0,
                    None => self.nodes[n].links[tx.link() as usize].txv,
                };
                let timeout = self.timing.response_timeout_for(&eliciting);
                self.nodes[n].ifs_ref = (tx.air_end + timeout).max(t);
            }
        }
        self.clear_txs();
        self.busy = false;
        self.reschedule();
    }

    /// Settle the exchange's `i`-th transmission, a data PPDU: count it, charge its
    /// `share` of the busy period, update its EDCAF's contention window and report the
    /// outcome to its path.
    fn settle_data(&mut self, i: usize, t: Nanos, outcome: ExchangeOutcome, share: u64) {
        let retry_limit = self.cfg.retry_limit;
        let n_tx = self.exch.txs.len();
        let n = self.exch.txs[i].node as usize;
        let station = self.station_of(n, self.exch.txs[i].link() as usize);
        let uplink = n != 0;
        let tx = &mut self.exch.txs[i];
        if outcome != ExchangeOutcome::Acked {
            tx.ok.iter_mut().for_each(|o| *o = false);
        }
        let acked = tx.ok.iter().filter(|&&o| o).count() as u16;
        let retries = tx.ppdu.mpdus.iter().filter(|m| m.attempts > 1).count() as u64;
        let head_dropped = !tx.ok.first().copied().unwrap_or(false)
            && tx
                .ppdu
                .mpdus
                .first()
                .is_some_and(|m| m.attempts >= retry_limit);
        let mpdus = tx.ppdu.mpdus.len();
        let (ac, tid) = (tx.ac, tx.tid());
        let start = if n_tx == 1 {
            self.exch.busy_from
        } else {
            tx.start
        };
        {
            let s = self.link_stats(station, uplink);
            s.ppdus += 1;
            s.mpdus += mpdus as u64;
            s.mpdu_retries += retries;
            s.airtime_ns += share;
            match outcome {
                ExchangeOutcome::Collision => s.collisions += 1,
                ExchangeOutcome::Failed => s.failures += 1,
                ExchangeOutcome::Acked => {}
            }
        }
        if self.cfg.airtime_records {
            self.out.push_back(Output::Airtime(AirtimeRecord {
                station: NodeId(station as u16),
                uplink,
                ac,
                start,
                airtime: Nanos(share),
                mpdus: mpdus as u16,
                acked_mpdus: acked,
                outcome,
            }));
        }
        // The AP's scheduler is charged: TX airtime for downlink, RX for uplink.
        let share_us = (share / 1000) as u32;
        let (tx_us, rx_us) = if uplink { (0, share_us) } else { (share_us, 0) };
        self.nodes[0]
            .path
            .register_airtime(t, (station - 1) as u16, tid, tx_us, rx_us);
        let node = &mut self.nodes[n];
        let b = &mut node.edca[ac.index()];
        // CW back to CWmin after every acknowledged exchange (also within a TXOP) and
        // when a frame is given up; doubled after a failure.
        match outcome {
            ExchangeOutcome::Acked => b.reset(&mut node.rng),
            _ if head_dropped => b.reset(&mut node.rng),
            _ => b.fail(&mut node.rng),
        }
        let tx = &mut self.exch.txs[i];
        let ppdu = std::mem::take(&mut tx.ppdu);
        node.path.tx_done(
            t,
            ppdu,
            TxReport {
                acked: &tx.ok,
                retry_limit,
            },
        );
        self.drain_path(n, t);
    }

    /// After an acknowledged exchange, send the next PPDU of the same AC after SIFS if
    /// the AC has a TXOP limit and that whole exchange fits in what is left of it.
    fn continue_txop(&mut self, t: Nanos) -> bool {
        // A management frame's exchange is not continued.
        let Some(prev) = self.exch.txs.first().filter(|tx| tx.ctl.is_none()) else {
            return false;
        };
        let (n, ac) = (prev.node as usize, prev.ac);
        let limit = self.nodes[n].edca[ac.index()].params.txop_limit();
        if limit == Nanos::ZERO || self.nodes[n].away {
            return false;
        }
        let Some((link, aggregated, psdu_bytes)) = self.nodes[n]
            .path
            .peek_ppdu(t, ac)
            .map(|p| (p.link, p.aggregated, p.psdu_bytes))
        else {
            return false;
        };
        let air = &self.nodes[n].links[link as usize].air;
        let sifs = self.timing.sifs;
        let start = t + sifs;
        let durations = (air.data.duration(psdu_bytes), air.response(aggregated));
        // A protected PPDU brings its CTS-to-self along (ath9k protects every frame).
        let exchange = air.cts_to_self + durations.0 + sifs + durations.1;
        let rts = self.uses_rts(psdu_bytes) || air.always_rts;
        if start + exchange > self.exch.txop_start + limit || rts {
            return false;
        }
        let Some(ppdu) = self.nodes[n].path.take_ppdu(start, ac) else {
            return false;
        };
        // An acknowledged exchange had a single transmitter (collisions are never
        // acknowledged): its record is reused in place for the next PPDU.
        debug_assert_eq!(self.exch.txs.len(), 1);
        let tx = &mut self.exch.txs[0];
        tx.start = start;
        tx.air_end = start;
        tx.ppdu = ppdu;
        self.exch.busy_from = t;
        self.resolve_single(Some(durations));
        true
    }

    /// Back to contention: every AC counts from its node's interframe reference.
    fn reschedule(&mut self) {
        let slot = self.timing.slot;
        let mut next: Option<Nanos> = None;
        for node in &mut self.nodes {
            for ac in Ac::ALL {
                let contends = !node.away && node.has_frame(ac);
                let b = &mut node.edca[ac.index()];
                b.counted_from = node.ifs_ref + self.timing.aifs(b.params.aifsn);
                if contends {
                    let t = b.tx_time(slot);
                    next = Some(next.map_or(t, |c: Nanos| c.min(t)));
                }
            }
        }
        if let Some((bt, _)) = self.beacon_tx_time() {
            next = Some(next.map_or(bt, |c| c.min(bt)));
        }
        self.set_timer(next);
    }

    /// While the medium is idle: the earliest transmission of the present nodes'
    /// contending ACs (from their current counters) and of a pending beacon.
    fn idle_timer(&self) -> Option<Nanos> {
        let slot = self.timing.slot;
        let mut next = self.beacon_tx_time().map(|(bt, _)| bt);
        for node in &self.nodes {
            if node.away {
                continue;
            }
            for ac in Ac::ALL {
                if node.has_frame(ac) {
                    let t = node.edca[ac.index()].tx_time(slot);
                    next = Some(next.map_or(t, |c: Nanos| c.min(t)));
                }
            }
        }
        next
    }
}

impl Mgmt {
    /// The earliest of the next TBTT, the scanners' steps and the power-save timeouts.
    fn refresh_timer(&mut self) {
        let mut t = self.clock.tbtt(self.next_beacon);
        for sm in &self.stas {
            let scan = sm.scan.as_ref().and_then(|s| s.poll_timeout());
            let ps = sm.ps.as_ref().and_then(|p| p.deadline());
            for d in [scan, ps].into_iter().flatten() {
                t = t.min(d);
            }
        }
        self.timer = Some(t);
    }
}

/// Beacons, scanning and power save: the frames they put on the air and the radios
/// they take off it (reference §7, §9).
impl Cell {
    /// Scan and power-save counters of station `sta` (1-based).
    pub fn scan_stats(&self, sta: u16) -> Option<ScanStats> {
        let m = self.mgmt.as_ref()?;
        let s = m.stas.get((sta as usize).checked_sub(1)?)?.scan.as_ref()?;
        Some(*s.stats())
    }

    fn refresh_mgmt_timer(&mut self) {
        if let Some(m) = self.mgmt.as_mut() {
            m.refresh_timer();
            self.deadline = self.combined_deadline();
        }
    }

    /// When the pending beacon goes out if the medium stays idle: at its TBTT, but not
    /// before AIFSN 1 (PIFS) after the medium went idle. With its number.
    fn beacon_tx_time(&self) -> Option<(Nanos, u64)> {
        let m = self.mgmt.as_ref()?;
        let k = m.beacon_pending?;
        let at = m
            .clock
            .tbtt(k)
            .max(self.nodes[0].ifs_ref + self.timing.aifs(1));
        Some((at, k))
    }

    /// Rate and PSDU size of a management frame: beacons at the lowest basic rate;
    /// null-data frames and PS-Polls at the basic rate that would answer the station's
    /// data rate (a simplification: mac80211's rate control treats null-data as data).
    fn ctl_vector(&self, n: usize, c: CtlFrame) -> (TxVector, u32) {
        let std = self.cfg.standard;
        match c {
            CtlFrame::Beacon { .. } => (self.timing.lowest_basic, BEACON_BYTES),
            CtlFrame::NullData { .. } => (
                control_response_rate(&self.nodes[n].links[0].txv, std),
                NULL_DATA_BYTES,
            ),
            CtlFrame::PsPoll => (
                control_response_rate(&self.nodes[n].links[0].txv, std),
                PS_POLL_BYTES,
            ),
        }
    }

    /// A lone management frame: a station's is acknowledged by the AP if it gets
    /// through the channel; a beacon is answered by nobody (its reception by each
    /// station is drawn when it ends).
    fn resolve_ctl(&mut self) {
        let band = self.cfg.band;
        let (n, c, start) = {
            let tx = &self.exch.txs[0];
            (
                tx.node as usize,
                tx.ctl.expect("a management frame"),
                tx.start,
            )
        };
        let (v, bytes) = self.ctl_vector(n, c);
        let data_end = start + v.ppdu_duration(bytes, band);
        self.exch.deliver_at = data_end;
        self.exch.delivered = false;
        self.set_timer(Some(data_end));
        let ok = match c {
            CtlFrame::Beacon { .. } => true,
            _ => {
                let link = &mut self.nodes[n].links[0];
                let per = link.error.per(&v, bytes);
                !link.rng.bernoulli(per)
            }
        };
        let tx = &mut self.exch.txs[0];
        tx.air_end = data_end;
        tx.ok.clear();
        tx.ok.push(ok);
        if !ok {
            self.exch.end = data_end;
            self.exch.outcome = Some(ExchangeOutcome::Failed);
        } else if matches!(c, CtlFrame::Beacon { .. }) {
            self.exch.end = data_end;
            self.exch.outcome = Some(ExchangeOutcome::Acked);
        } else {
            let ack = control_response_rate(&v, self.cfg.standard).ppdu_duration(ACK_BYTES, band);
            self.exch.end = data_end + self.timing.sifs + ack;
            self.exch.outcome = Some(ExchangeOutcome::Acked);
        }
    }

    /// A management frame ended on the air: the receivers act on it.
    fn deliver_ctl(&mut self, t: Nanos) {
        let tx = &self.exch.txs[0];
        let (n, c, ok) = (
            tx.node as usize,
            tx.ctl.expect("a management frame"),
            tx.ok.first() == Some(&true),
        );
        match c {
            CtlFrame::NullData { pm: true } if ok => self.ap_doze(n, t),
            CtlFrame::NullData { pm: false } if ok => self.ap_wake(n, t),
            CtlFrame::PsPoll if ok => self.ap_ps_poll(n, t),
            CtlFrame::Beacon { .. } => self.beacon_received(t),
            _ => {}
        }
        self.refresh_mgmt_timer();
    }

    /// The busy period of a management frame ended: charge it, and retry, give up or
    /// complete a station's frame (CW as for data: reset on success or when given up,
    /// doubled on failure).
    fn finish_ctl(
        &mut self,
        t: Nanos,
        n: usize,
        c: CtlFrame,
        outcome: ExchangeOutcome,
        share: u64,
    ) {
        if let CtlFrame::Beacon { .. } = c {
            self.beacon_airtime_ns += share;
            if outcome == ExchangeOutcome::Collision {
                for s in 1..self.nodes.len() {
                    self.station_beacon(t, s, false, false);
                }
            }
            self.refresh_mgmt_timer();
            return;
        }
        self.stats[n].up.airtime_ns += share;
        let retry_limit = self.cfg.retry_limit;
        let acked = outcome == ExchangeOutcome::Acked;
        let node = &mut self.nodes[n];
        node.ctl_in_air = false;
        node.ctl_attempts = node.ctl_attempts.saturating_add(1);
        let done = acked || node.ctl_attempts >= retry_limit;
        let b = &mut node.edca[Ac::Vo.index()];
        if done {
            b.reset(&mut node.rng);
            node.ctl.pop_front();
            node.ctl_attempts = 0;
            match c {
                CtlFrame::PsPoll => self.stats[n].ps.ps_polls += 1,
                _ => self.stats[n].ps.null_frames += 1,
            }
            self.ctl_done(t, n, c, acked);
        } else {
            b.fail(&mut node.rng);
        }
        self.refresh_mgmt_timer();
    }

    /// Station `n`'s management frame completed (acknowledged, or given up).
    fn ctl_done(&mut self, t: Nanos, n: usize, c: CtlFrame, acked: bool) {
        let CtlFrame::NullData { pm } = c else {
            return;
        };
        let nulls_left = self.nodes[n]
            .ctl
            .iter()
            .any(|f| matches!(f, CtlFrame::NullData { .. }));
        let Some(m) = self.mgmt.as_mut() else {
            return;
        };
        let sm = &mut m.stas[n - 1];
        let ps_action = sm.ps.as_mut().and_then(|ps| ps.null_done(t, pm, acked));
        // mac80211 flushes before it tunes away, so the scanner waits until every
        // null-data frame queued so far has left.
        let scan_goes_on = sm.scan_waits_null && !nulls_left;
        if scan_goes_on {
            sm.scan_waits_null = false;
            if let Some(sc) = sm.scan.as_mut() {
                sc.null_done(t);
            }
        }
        self.apply_ps_action(n, ps_action, t);
        if scan_goes_on {
            self.run_scanner(n, t);
        }
        self.sync_station(n, t);
    }

    /// Queue a management frame at station `n` (a queued, not yet sent null-data frame
    /// takes the newer PM bit). Returns false if the queue is full.
    fn queue_ctl(&mut self, n: usize, frame: CtlFrame, now: Nanos) -> bool {
        let had = self.nodes[n].has_frame(Ac::Vo);
        let node = &mut self.nodes[n];
        let back_in_air = node.ctl_in_air && node.ctl.len() == 1;
        if !back_in_air {
            if let Some(b) = node.ctl.back_mut() {
                if matches!(
                    (*b, frame),
                    (CtlFrame::NullData { .. }, CtlFrame::NullData { .. })
                ) {
                    *b = frame;
                    return true;
                }
            }
        }
        if node.ctl.len() >= MAX_CTL_FRAMES {
            return false;
        }
        node.ctl.push_back(frame);
        if !had {
            self.edcaf_woken(n, Ac::Vo, now);
        }
        true
    }

    /// Management deadlines at `t`: a TBTT, scanner steps, power-save timeouts.
    fn handle_mgmt(&mut self, t: Nanos) {
        let n_sta = self.nodes.len() - 1;
        let Some(m) = self.mgmt.as_mut() else {
            return;
        };
        let mut new_beacon = None;
        if m.clock.tbtt(m.next_beacon) <= t {
            let k = m.next_beacon;
            m.next_beacon += 1;
            // A beacon still waiting for the medium is superseded by the new one.
            m.beacon_pending = Some(k);
            new_beacon = Some(k);
        }
        if let Some(k) = new_beacon {
            for s in 1..=n_sta {
                let listens = self
                    .mgmt
                    .as_mut()
                    .and_then(|m| m.stas[s - 1].ps.as_mut())
                    .is_some_and(|ps| {
                        let w = ps.wakes_for(k);
                        if w {
                            ps.listen();
                        }
                        w
                    });
                if listens {
                    self.sync_station(s, t);
                }
            }
            if !self.busy {
                self.set_timer(self.idle_timer());
            }
        }
        for s in 1..=n_sta {
            let Some(sm) = self.mgmt.as_ref().map(|m| &m.stas[s - 1]) else {
                return;
            };
            let scan_due = sm
                .scan
                .as_ref()
                .and_then(|sc| sc.poll_timeout())
                .is_some_and(|d| d <= t);
            let ps_due = sm
                .ps
                .as_ref()
                .and_then(|p| p.deadline())
                .is_some_and(|d| d <= t);
            if scan_due {
                self.run_scanner(s, t);
            }
            if ps_due {
                self.ps_timeout(s, t);
            }
        }
        self.refresh_mgmt_timer();
    }

    /// Run station `s`'s scanner at `t` and carry out what it asks.
    fn run_scanner(&mut self, s: usize, t: Nanos) {
        let tx_pending = self.nodes[s].path.netdev_backlog_packets() > 0;
        let Some(m) = self.mgmt.as_mut() else {
            return;
        };
        let sm = &mut m.stas[s - 1];
        let Some(sc) = sm.scan.as_mut() else {
            return;
        };
        let was = sc.scanning();
        sc.handle_timeout(t, tx_pending);
        let mut actions = Vec::new();
        while let Some(a) = sc.poll_action() {
            actions.push(a);
        }
        let is = sc.scanning();
        if let Some(ps) = sm.ps.as_mut() {
            if !was && is {
                // `ieee80211_offchannel_ps_enable`: the scan takes the radio.
                ps.suspend();
            } else if was && !is {
                ps.resume(t);
            }
        }
        // Back on the channel first, so frames queued now contend at once.
        self.sync_station(s, t);
        for a in actions {
            if let ScanAction::SendNullData { pm, wait } = a {
                if wait {
                    if let Some(m) = self.mgmt.as_mut() {
                        m.stas[s - 1].scan_waits_null = true;
                    }
                }
                if !self.queue_ctl(s, CtlFrame::NullData { pm }, t) && wait {
                    // Cannot happen with the bounded queue; do not stall the scan.
                    if let Some(sc) = self.mgmt.as_mut().and_then(|m| m.stas[s - 1].scan.as_mut()) {
                        sc.null_done(t);
                    }
                }
            }
        }
        self.sync_station(s, t);
    }

    /// Station `s`'s dynamic power-save timeout may have expired.
    fn ps_timeout(&mut self, s: usize, t: Nanos) {
        let node = &self.nodes[s];
        let idle = node.path.packets_inside() == 0
            && node.ctl.is_empty()
            && !(self.busy && self.exch.txs.iter().any(|x| x.node as usize == s));
        let action = self
            .mgmt
            .as_mut()
            .and_then(|m| m.stas[s - 1].ps.as_mut())
            .and_then(|ps| ps.timeout(t, idle));
        self.apply_ps_action(s, action, t);
    }

    fn apply_ps_action(&mut self, s: usize, action: Option<PsAction>, t: Nanos) {
        match action {
            Some(PsAction::SendNullData { pm }) => {
                self.queue_ctl(s, CtlFrame::NullData { pm }, t);
            }
            Some(PsAction::SendPsPoll) => {
                self.queue_ctl(s, CtlFrame::PsPoll, t);
            }
            Some(PsAction::Doze) | None => {}
        }
        self.sync_station(s, t);
    }

    /// Bring station `s`'s node in line with its scanner and power save: account doze
    /// time, copy the scan counters, and take the radio off or back on the channel.
    fn sync_station(&mut self, s: usize, t: Nanos) {
        let Some(m) = self.mgmt.as_mut() else {
            return;
        };
        let sm = &mut m.stas[s - 1];
        let ps_off = sm.ps.as_ref().is_some_and(|p| !p.radio_on());
        match (ps_off, sm.doze_since) {
            (true, None) => {
                sm.doze_since = Some(t);
                self.stats[s].ps.dozes += 1;
            }
            (false, Some(since)) => {
                self.stats[s].ps.doze_ns += (t - since).as_ns();
                sm.doze_since = None;
            }
            _ => {}
        }
        if let Some(sc) = sm.scan.as_ref() {
            self.stats[s].scan = *sc.stats();
        }
        let away = sm.away();
        if away && !self.nodes[s].away {
            self.radio_gone(s, t);
        } else if !away && self.nodes[s].away {
            self.radio_back(s, t);
        }
    }

    /// Node `n`'s radio leaves (retunes or sleeps): its backoff counters stop.
    fn radio_gone(&mut self, n: usize, t: Nanos) {
        let (slot, rule) = (self.timing.slot, self.cfg.backoff_rule);
        let node = &mut self.nodes[n];
        node.away = true;
        if !self.busy {
            for b in node.edca.iter_mut() {
                b.freeze(t, slot, rule);
            }
            self.set_timer(self.idle_timer());
        }
    }

    /// Node `n`'s radio is back: it defers AIFS, then counts its remaining backoff.
    fn radio_back(&mut self, n: usize, t: Nanos) {
        let node = &mut self.nodes[n];
        node.away = false;
        node.ifs_ref = node.ifs_ref.max(t);
        if !self.busy {
            for b in node.edca.iter_mut() {
                b.counted_from = t + self.timing.aifs(b.params.aifsn);
            }
            self.set_timer(self.idle_timer());
        }
    }

    /// The AP's TIM bit for station `s`: it dozes (as far as the AP knows) and frames
    /// wait for it, in the power-save buffer or in its TXQs and driver queues.
    fn tim_bit(&self, s: usize) -> bool {
        self.mgmt.as_ref().is_some_and(|m| {
            m.ap_dozing[s - 1]
                && (m.buffers.buffered(s - 1) > 0
                    || self.nodes[0].path.link_backlog_packets((s - 1) as u16) > 0)
        })
    }

    /// A beacon ended: every station whose radio is on may have heard it.
    fn beacon_received(&mut self, t: Nanos) {
        let v = self.timing.lowest_basic;
        for s in 1..self.nodes.len() {
            let listening = self.mgmt.as_ref().is_some_and(|m| {
                let sm = &m.stas[s - 1];
                sm.ps.is_some() || sm.scan.is_some()
            });
            if !listening || self.nodes[s].away {
                continue;
            }
            let link = &mut self.nodes[0].links[s - 1];
            let per = link.error.per(&v, BEACON_BYTES);
            let heard = !link.rng.bernoulli(per);
            let tim = self.tim_bit(s);
            self.station_beacon(t, s, heard, tim);
        }
    }

    /// Station `s` heard (or missed) a beacon with (or without) its TIM bit.
    fn station_beacon(&mut self, t: Nanos, s: usize, heard: bool, tim: bool) {
        let Some(m) = self.mgmt.as_mut() else {
            return;
        };
        let sm = &mut m.stas[s - 1];
        if heard {
            self.stats[s].ps.beacons_heard += 1;
            if tim {
                self.stats[s].ps.tim_wakeups += 1;
            }
        }
        let scanning = sm.scan.as_ref().is_some_and(|sc| sc.scanning());
        let action = match sm.ps.as_mut() {
            Some(ps) if !scanning => {
                if heard {
                    ps.beacon(t, tim)
                } else {
                    ps.beacon_missed()
                }
            }
            _ => {
                // No power save running (none, or suspended by the scan): answer a TIM
                // with PM=0 if the scan is configured to (see `ScanConfig::answer_tim`).
                let answer = sm.scan.as_ref().is_some_and(|sc| sc.config().answer_tim);
                (heard && tim && answer).then_some(PsAction::SendNullData { pm: false })
            }
        };
        self.apply_ps_action(s, action, t);
    }

    /// A packet enters the cell where power save may hold it: at the AP for a dozing
    /// station, into the power-save buffer (returns true); at a sleeping station, which
    /// wakes to send it.
    fn mgmt_takes_packet(
        &mut self,
        now: Nanos,
        src: usize,
        station: usize,
        packet: Packet,
    ) -> bool {
        let Some(m) = self.mgmt.as_mut() else {
            return false;
        };
        if src == 0 {
            if !m.ap_dozing[station - 1] {
                return false;
            }
            let ac = self.nodes[0].path.classify_ac(&packet);
            let drops = &mut self.nodes[0].path.drops;
            let before = drops.len();
            m.buffers.push(station - 1, ac, packet, drops);
            let dropped = (drops.len() - before) as u64;
            let st = &mut self.stats[station].ps;
            st.ap_buffered += 1;
            st.ap_buffer_drops += dropped;
            self.drain_path(0, now);
            return true;
        }
        if let Some(ps) = m.stas[src - 1].ps.as_mut() {
            ps.tx_wake(now);
            self.sync_station(src, now);
            self.refresh_mgmt_timer();
        }
        false
    }

    /// Data from node `txn` reached node `rx`: uplink data carries PM=0 and ends power
    /// save at the AP (`ieee80211_rx_h_sta_process`); downlink data keeps a power-saving
    /// station awake, and answers its PS-Poll.
    fn data_received(&mut self, t: Nanos, txn: usize, rx: usize) {
        if rx == 0 {
            if self.mgmt.as_ref().is_some_and(|m| m.ap_dozing[txn - 1]) {
                self.ap_wake(txn, t);
            }
            return;
        }
        let link = (rx - 1) as u16;
        let backlog = self.nodes[0].path.link_backlog_packets(link);
        let Some(m) = self.mgmt.as_mut() else {
            return;
        };
        let more = m.buffers.buffered(rx - 1) > 0 || backlog > 0;
        let Some(ps) = m.stas[rx - 1].ps.as_mut() else {
            return;
        };
        ps.activity(t);
        if ps.state() != PsState::Polling {
            return;
        }
        let action = ps.polled_frame(more);
        if !more && m.ap_service[rx - 1] {
            // The poll sequence is over: the AP holds the station's frames again.
            m.ap_service[rx - 1] = false;
            if m.ap_dozing[rx - 1] {
                self.nodes[0].path.pause_link(t, link);
            }
        }
        self.apply_ps_action(rx, action, t);
        self.refresh_mgmt_timer();
    }

    /// The AP received PM=1 from station `s`: buffer from now on (`sta_ps_start`).
    fn ap_doze(&mut self, s: usize, t: Nanos) {
        let Some(m) = self.mgmt.as_mut() else {
            return;
        };
        if m.ap_dozing[s - 1] {
            return;
        }
        m.ap_dozing[s - 1] = true;
        m.ap_service[s - 1] = false;
        self.nodes[0].path.pause_link(t, (s - 1) as u16);
    }

    /// The AP learned that station `s` is awake (PM=0): release everything
    /// (`ieee80211_sta_ps_deliver_wakeup`).
    fn ap_wake(&mut self, s: usize, t: Nanos) {
        let Some(m) = self.mgmt.as_mut() else {
            return;
        };
        if !m.ap_dozing[s - 1] {
            return;
        }
        m.ap_dozing[s - 1] = false;
        m.ap_service[s - 1] = false;
        let mut buf = std::mem::take(&mut m.scratch);
        m.buffers.take_all(s - 1, &mut buf);
        let link = (s - 1) as u16;
        let had = Ac::ALL.map(|ac| self.nodes[0].has_frame(ac));
        self.nodes[0].path.resume_link(t, link);
        for p in buf.drain(..) {
            self.nodes[0].path.enqueue(t, link, p);
        }
        if let Some(m) = self.mgmt.as_mut() {
            m.scratch = buf;
        }
        self.drain_path(0, t);
        self.wake_new_frames(0, had, t);
    }

    /// A PS-Poll from station `s`: one buffered frame goes out (with the frames held in
    /// its TXQs and driver, which the model releases for the whole poll sequence rather
    /// than one per poll).
    fn ap_ps_poll(&mut self, s: usize, t: Nanos) {
        let Some(m) = self.mgmt.as_mut() else {
            return;
        };
        if !m.ap_dozing[s - 1] {
            return;
        }
        let link = (s - 1) as u16;
        let one = m.buffers.take_one(s - 1).map(|(p, _)| p);
        let resume = !m.ap_service[s - 1];
        m.ap_service[s - 1] = true;
        let had = Ac::ALL.map(|ac| self.nodes[0].has_frame(ac));
        if resume {
            self.nodes[0].path.resume_link(t, link);
        }
        if let Some(p) = one {
            self.nodes[0].path.enqueue(t, link, p);
        }
        self.drain_path(0, t);
        self.wake_new_frames(0, had, t);
        if one.is_none() && self.nodes[0].path.link_backlog_packets(link) == 0 {
            // Nothing to send after all: the station goes back to sleep.
            self.data_received_nothing(s, t);
        }
    }

    /// A PS-Poll found nothing: end the poll sequence.
    fn data_received_nothing(&mut self, s: usize, t: Nanos) {
        let Some(m) = self.mgmt.as_mut() else {
            return;
        };
        m.ap_service[s - 1] = false;
        if m.ap_dozing[s - 1] {
            self.nodes[0].path.pause_link(t, (s - 1) as u16);
        }
        let action = m.stas[s - 1]
            .ps
            .as_mut()
            .and_then(|ps| ps.polled_frame(false));
        self.apply_ps_action(s, action, t);
    }
}

fn mpdu_overhead(qos: bool) -> u32 {
    if qos {
        QOS_DATA_OVERHEAD_BYTES
    } else {
        DATA_OVERHEAD_BYTES
    }
}

/// Rate control's expected throughput of a station's link in kbit/s (what mac80211
/// compares with 6 Mbit/s × stations for the slow-station CoDel rule): the PHY rate
/// times the 1500-byte frame success probability.
fn expected_kbps(sc: &StationConfig) -> u64 {
    let per = sc.error.per(&sc.tx, 1500 + QOS_DATA_OVERHEAD_BYTES);
    (sc.tx.data_rate_bps() as f64 * (1.0 - per) / 1000.0) as u64
}

/// How PPDUs of `ac` to a peer at rate `txv` are bounded: A-MPDU under block ack on
/// HT/VHT links (never VO; a legacy station's link never aggregates), at most the
/// stack's and the cell's subframe limits, the PHY's byte limit, the maximum aggregate
/// duration, and within a TXOP limit the whole exchange (protection from 802.11b
/// stations + data + SIFS + BlockAck; `air` holds the link's protection). RTS/CTS
/// asked for by the RTS threshold is not budgeted.
fn build_limits(
    cfg: &CellConfig,
    timing: &PhyTiming,
    table: &EdcaTable,
    ac: Ac,
    txv: &TxVector,
    air: &LinkAirtime,
) -> BuildLimits {
    let aggregated = cfg.aggregation
        && cfg.qos
        && ac != Ac::Vo
        && matches!(txv, TxVector::Ht { .. } | TxVector::Vht { .. });
    let phy_max = if matches!(txv, TxVector::Vht { .. }) {
        VHT_MAX_AMPDU_BYTES
    } else {
        HT_MAX_AMPDU_BYTES
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
        let protection = air.protection(air.always_rts, timing.sifs);
        max_duration = max_duration.min(txop.saturating_sub(protection + response));
    }
    BuildLimits {
        txv: *txv,
        band: cfg.band,
        aggregated,
        max_subframes: cfg.max_ampdu_subframes.min(cfg.stack.max_ampdu_subframes),
        max_bytes,
        max_duration,
        overhead_bytes: mpdu_overhead(cfg.qos),
        max_duration_psdu_bytes: BuildLimits::psdu_bytes_within(txv, cfg.band, max_duration),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_airtime_equals_direct_durations() {
        let vectors = crate::phy::rates::sample_vectors();
        let standards = [
            Standard::A,
            Standard::B,
            Standard::G,
            Standard::N,
            Standard::Ac,
        ];
        for txv in vectors {
            for standard in standards {
                for band in [Band::Ghz2_4, Band::Ghz5] {
                    let timing = PhyTiming::new(standard, band);
                    let air = LinkAirtime::new(&txv, &timing, Protection::Off);
                    let ctl = control_response_rate(&txv, standard);
                    assert_eq!(air.ack, ctl.ppdu_duration(ACK_BYTES, band));
                    assert_eq!(air.response(false), ctl.ppdu_duration(ACK_BYTES, band));
                    assert_eq!(air.response(true), ctl.ppdu_duration(BLOCK_ACK_BYTES, band));
                    assert_eq!(air.rts, ctl.ppdu_duration(RTS_BYTES, band));
                    assert_eq!(air.cts, ctl.ppdu_duration(CTS_BYTES, band));
                    assert_eq!(air.protection(false, timing.sifs), Nanos::ZERO);
                    assert!(!air.always_rts);
                    for len in [0, 14, 1_500, 1_538, 65_535] {
                        assert_eq!(air.data.duration(len), txv.ppdu_duration(len, band));
                    }
                    // Protected links: the same data and responses, protection frames
                    // at 1 Mbit/s (long preamble, no signal extension: 192 µs + 8 µs
                    // per byte).
                    for mode in [Protection::CtsToSelf, Protection::RtsCts] {
                        let p = LinkAirtime::new(&txv, &timing, mode);
                        assert_eq!(
                            (p.data, p.ack, p.block_ack),
                            (air.data, air.ack, air.block_ack)
                        );
                        assert_eq!(p.rts, Nanos::from_us(192 + 8 * 20));
                        assert_eq!(p.cts, Nanos::from_us(192 + 8 * 14));
                        let expected = match mode {
                            Protection::CtsToSelf => Nanos::from_us(304) + timing.sifs,
                            _ => Nanos::from_us(352 + 304) + timing.sifs * 2,
                        };
                        assert_eq!(p.protection(p.always_rts, timing.sifs), expected);
                    }
                }
            }
        }
    }
}
