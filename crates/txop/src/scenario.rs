//! Scenario files: TOML describing the cell and its traffic (documented key by key in
//! `docs/scenarios.md`).
//!
//! Loading is three steps: parse the TOML into a table, apply `--set key=value`
//! overrides to the table, then deserialise into [`Scenario`] with unknown keys
//! rejected and every error reported with its dotted key path. [`Scenario::resolve`]
//! then checks the values against each other and builds the simulator's configuration.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use txop_core::cell::{CellConfig, StationConfig, StationPowerSave, StationScan};
use txop_core::mac::edca::{Ac, BackoffRule, EdcaParams};
use txop_core::mac::protection::Protection;
use txop_core::mac80211::powersave::{
    PowerSaveConfig, DEFAULT_BEACON_INTERVAL_TU, DEFAULT_DTIM_PERIOD, DYNAMIC_PS_TIMEOUT,
};
use txop_core::mac80211::rate_control::RateControlKind;
use txop_core::mac80211::scan::{
    ScanBands, ScanConfig, ScanPolicy, ATH9K_CHANNEL_SWITCH, ATH9K_LISTEN_INTERVAL,
    PM_QOS_NETWORK_LATENCY_DEFAULT,
};
use txop_core::phy::channel::{best_rate_for_snr, ErrorModel};
use txop_core::phy::fading::{Fading, K_DB_RANGE};
use txop_core::phy::link_channel::{LinkChannel, MeanSnr, StationChannel};
use txop_core::phy::mobility::{Mobility, Position, Waypoint};
use txop_core::phy::path_loss::{self, snr_at_distance, LogDistance};
use txop_core::phy::snr_trace::{parse_trace, Interpolation, SnrTrace, StationPoints};
use txop_core::phy::space::RadioMap;
use txop_core::phy::timing::PhyTiming;
use txop_core::phy::{Band, ChannelWidth, DsssPreamble, GuardInterval, Standard, TxVector};
use txop_core::stack::{self, StackConfig};
use txop_core::{Nanos, NodeId, StationId};
use txop_sim::tcp::CongestionControl;
use txop_sim::traffic::cbr::Cbr;
use txop_sim::traffic::flent::FlentTest;
use txop_sim::traffic::ping::Ping;
use txop_sim::traffic::saturated::Saturated;
use txop_sim::traffic::tcp::TcpFlow;
use txop_sim::traffic::web::WebPage;
use txop_sim::traffic::{Flow, Host};
use txop_sim::{BusConfig, Completion, DataMode, SimConfig, WiredConfig};

mod bss;
mod space;
pub use bss::{channel_groups, BssSpec, ResolvedBss};
pub use space::Space;

/// Limits on the keys whose values become event rates, sizes or counts, so that a
/// short run cannot mean billions of events or gigabytes (docs/scenarios.md, "Limits").
/// Each is well beyond what a real scenario needs.
pub mod limits {
    /// Longest scenario name, characters: it titles every plot and the summary.
    pub const MAX_NAME_CHARS: usize = 200;
    /// Longest run, simulated seconds: 11.6 days.
    pub const MAX_DURATION_S: f64 = 1.0e6;
    /// Shortest run, simulated seconds: 1 ms, a few exchanges (an aggregate alone
    /// may last 4 ms).
    pub const MIN_DURATION_S: f64 = 1.0e-3;
    /// Most stations in a cell (the simulator's; the emulator takes 250).
    pub const MAX_STATIONS: usize = 2000;
    /// Highest offered rate of one constant-rate flow, Mbit/s: 10 Gbit/s, beyond every
    /// PHY rate modelled (VHT80 2×2 MCS9 is 866.7 Mbit/s).
    pub const MAX_FLOW_RATE_MBPS: f64 = 10_000.0;
    /// Shortest time between two packets of one constant-rate flow: 1 µs (10⁶
    /// packets/s). With small packets this bounds the rate below
    /// [`MAX_FLOW_RATE_MBPS`]: at most `8 × packet_bytes` Mbit/s.
    pub const MIN_PACKET_INTERVAL_NS: u64 = 1_000;
    /// The wired link's rate, Mbit/s: 10 kbit/s to 100 Gbit/s.
    pub const WIRED_RATE_MBPS: (f64, f64) = (0.01, 100_000.0);
    /// Probe and ping intervals, ms: 0.1 ms (`ping -i` allows 0.2 ms to root) to 1 hour.
    pub const INTERVAL_MS: (f64, f64) = (0.1, 3_600_000.0);
    /// Packets a saturated flow keeps inside the cell: more than any stack preset's
    /// queues hold (fq 8192 + qdisc 1000 + the firmware's 1424).
    pub const MAX_DEPTH_PACKETS: u32 = 10_000;
    /// Packets per simulated second all open-loop sources (constant-rate flows,
    /// probes, pings with their replies) offer together: 10⁷, some 2.5 Gbit/s of
    /// 32-byte packets or 120 Gbit/s of 1500-byte ones, far above what one cell
    /// carries; a 1 s run stays within seconds of wall time.
    pub const MAX_OFFERED_PACKETS_PER_S: f64 = 1.0e7;
    /// Highest `stack_options.quantum_shift`: 65535 << 16 still fits the scheduler's
    /// arithmetic; mainline uses 0 and OpenWrt 3.
    pub const MAX_QUANTUM_SHIFT: u8 = 16;
    /// `stack_options.airtime_flags` has two bits: 1 (TX airtime), 2 (RX airtime).
    pub const MAX_AIRTIME_FLAGS: u8 = 3;
    /// Coordinates of positions and waypoints, m: within ±10 km of the origin, as
    /// `distance_m`.
    pub const MAX_COORDINATE_M: f64 = 10_000.0;
    /// Fastest station, m/s: 100 m/s (360 km/h), beyond any Wi-Fi client.
    pub const MAX_SPEED_MPS: f64 = 100.0;
    /// A fade's coherence time, ms: 1 µs to 1 hour.
    pub const COHERENCE_MS: (f64, f64) = (0.001, 3_600_000.0);
    /// Largest SNR trace file: 64 MiB (some 3 million points).
    pub const MAX_TRACE_FILE_BYTES: u64 = 64 << 20;
    /// Most BSSs in a scenario (`[[bss]]`): an apartment block's worth of neighbours.
    pub const MAX_BSSS: usize = 64;
    /// Longest BSS name, characters (letters, digits, `-`, `_`): it labels the BSS in
    /// the summary and the results.
    pub const MAX_BSS_NAME_CHARS: usize = 32;
    /// Received powers the BSSs' cells keep in all: each cell one per ordered pair of
    /// the nodes on its channel (16 bytes each), so 2^24 is 256 MiB; one cell of
    /// [`MAX_STATIONS`] stations keeps a quarter of it.
    pub const MAX_AIR_PAIRS: u64 = 1 << 24;
}

/// The offered rate of a constant-rate flow of `packet_bytes`-byte packets at
/// `rate_mbps`, in bit/s, within [`limits::MAX_FLOW_RATE_MBPS`] and
/// [`limits::MIN_PACKET_INTERVAL_NS`]; the error names `key` and the allowed range.
fn cbr_rate_bps(key: &str, rate_mbps: f64, packet_bytes: u32) -> Result<u64, ScenarioError> {
    // One packet per MIN_PACKET_INTERVAL_NS: packet_bytes × 8 bits per µs.
    let per_interval_mbps = packet_bytes as f64 * 8.0 * 1e3 / limits::MIN_PACKET_INTERVAL_NS as f64;
    let max = limits::MAX_FLOW_RATE_MBPS.min(per_interval_mbps);
    if rate_mbps.is_finite() && rate_mbps > 0.0 && rate_mbps <= max {
        return Ok((rate_mbps * 1e6) as u64);
    }
    let why = if max < limits::MAX_FLOW_RATE_MBPS {
        format!(" with {packet_bytes}-byte packets (one per µs at most)")
    } else {
        String::new()
    };
    Err(ScenarioError::new(
        key,
        format!("must be above 0 and at most {max} Mbit/s{why}"),
    ))
}

/// [`limits::INTERVAL_MS`] in words.
fn interval_range() -> String {
    let (lo, hi) = limits::INTERVAL_MS;
    format!("{lo} ms to {hi} ms (1 hour)")
}

/// A probe or ping interval within [`limits::INTERVAL_MS`], as a duration.
fn interval(key: &str, ms: f64) -> Result<Nanos, ScenarioError> {
    let (lo, hi) = limits::INTERVAL_MS;
    if ms.is_finite() && (lo..=hi).contains(&ms) {
        Ok(Nanos::from_secs_f64(ms / 1000.0))
    } else {
        Err(ScenarioError::new(
            key,
            format!("must be {}", interval_range()),
        ))
    }
}

/// Packets per simulated second an open-loop flow offers (a ping counts its replies);
/// 0 for closed-loop ones (saturated, TCP, web), whose pace the cell sets.
fn offered_packets_per_s(flow: &Flow) -> f64 {
    match flow {
        Flow::Cbr(c) => 1e9 / c.interval().as_ns().max(1) as f64,
        Flow::Ping(p) => 2.0 * 1e9 / p.interval.as_ns().max(1) as f64,
        Flow::Saturated(_) | Flow::Tcp(_) | Flow::Web(_) => 0.0,
    }
}

/// A whole scenario file.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Short name (defaults to the file name).
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Simulated seconds (default 10, or a flent test's delay + length + delay).
    #[serde(default)]
    pub duration_s: Option<f64>,
    /// The transmit stack every node runs: a preset name (`txop stacks`).
    #[serde(default = "default_stack")]
    pub stack: String,
    /// Any knob of the stack, overriding the preset.
    #[serde(default)]
    pub stack_options: StackOptions,
    #[serde(default)]
    pub phy: Phy,
    #[serde(default)]
    pub mac: Mac,
    #[serde(default)]
    pub stations: Stations,
    #[serde(default)]
    pub traffic: Traffic,
    #[serde(default)]
    pub wired: Wired,
    /// `[space]`: where the nodes stand and what their radios hear; its presence turns
    /// space on (per-node carrier sense, reception by SINR).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub space: Option<Space>,
    /// Explicit flows (`[[flows]]`); when given they replace `[traffic]`'s bulk flows
    /// and probes (a web page in `[traffic.web]` still runs beside them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flows: Vec<FlowSpec>,
    /// `[[bss]]`: several BSSs, each an AP with its stations and traffic, laid over the
    /// top level's tables and sharing the air ([`Scenario::resolve_bsss`]); empty for a
    /// scenario of one cell.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bss: Vec<BssSpec>,
    /// The directory a relative `snr_trace` is read from: the scenario file's; `None`
    /// (a built-in scenario) for the current directory. Not a key of the file.
    #[serde(skip)]
    pub base_dir: Option<std::path::PathBuf>,
}

/// `[wired]`: the link between the AP and the server.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Wired {
    pub rate_mbps: f64,
    /// One-way propagation delay.
    pub delay_ms: f64,
    pub limit_packets: usize,
}

impl Default for Wired {
    fn default() -> Self {
        Wired {
            rate_mbps: 1000.0,
            delay_ms: 1.0,
            limit_packets: 1000,
        }
    }
}

fn default_stack() -> String {
    "linux-6.16".to_string()
}

/// `[stack_options]`: overrides of the preset's knobs (see `txop stacks`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StackOptions {
    /// "noqueue", "pfifo_fast", "fq_codel" or "fifo".
    pub qdisc: Option<String>,
    /// Limit of pfifo_fast / fifo (txqueuelen).
    pub qdisc_limit_packets: Option<u32>,
    pub mac80211_txqs: Option<bool>,
    pub fq_flows: Option<u32>,
    pub fq_quantum_bytes: Option<u32>,
    pub fq_limit_packets: Option<u32>,
    /// 0 = 16 MiB with VHT, 4 MiB without.
    pub fq_memory_limit_bytes: Option<u64>,
    /// "one_from_fattest" (≤ 5.11) or "half_from_fattest" (≥ 5.12).
    pub fq_overload: Option<String>,
    pub codel_target_ms: Option<f64>,
    pub codel_interval_ms: Option<f64>,
    pub codel_ecn: Option<bool>,
    pub per_station_codel: Option<bool>,
    /// "legacy" (DSCP >> 3) or "rfc8325".
    pub dscp_mapping: Option<String>,
    /// "round_robin", "ath9k_drr", "drr", "virtual_time" or "drr_aql".
    pub scheduler: Option<String>,
    pub airtime_flags: Option<u8>,
    pub quantum_shift: Option<u8>,
    /// "as_written" or "flipped": how 6.0+'s `may_transmit` uses the per-AC AQL check.
    pub may_transmit_aql_check: Option<String>,
    /// "none", "aql" or "dql".
    pub queue_limit: Option<String>,
    pub aql_limit_low_us: Option<u32>,
    pub aql_limit_high_us: Option<u32>,
    pub aql_threshold_us: Option<u32>,
    pub aql_per_ac_limit: Option<bool>,
    /// "no_aggregation", "div16" or "agg_shift".
    pub aql_estimator: Option<String>,
    /// "ath9k" or "firmware".
    pub driver: Option<String>,
    pub driver_queue_packets: Option<u32>,
    pub hw_queue_ppdus: Option<u32>,
    pub max_ampdu_subframes: Option<u16>,
}

fn choose<T: Copy>(key: &str, value: &str, options: &[(&str, T)]) -> Result<T, ScenarioError> {
    choose_in(&format!("stack_options.{key}"), value, options)
}

/// `value` must name one of `options`; the error names `key` and lists them.
fn choose_in<T: Copy>(key: &str, value: &str, options: &[(&str, T)]) -> Result<T, ScenarioError> {
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

fn default_seed() -> u64 {
    1
}

/// `[phy]`: the BSS's PHY.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Phy {
    /// "b", "a", "g", "n" or "ac".
    pub standard: Standard,
    /// "2.4" or "5" (GHz); a number is accepted too.
    #[serde(deserialize_with = "band_from_str_or_number")]
    pub band: Band,
    /// 20, 40 or 80 (MHz; HT and VHT only).
    pub width_mhz: u32,
    /// "long" (0.8 µs) or "short" (0.4 µs), HT and VHT only.
    pub guard_interval: GuardInterval,
    /// "long" or "short" DSSS preamble of DSSS/HR-DSSS rates (802.11b, and 802.11b
    /// stations in a 2.4 GHz 802.11g/n BSS).
    pub preamble: DsssPreamble,
    /// Transmit power for `distance_m` stations (20 dBm = 100 mW).
    pub tx_power_dbm: f64,
    /// Log-distance path-loss exponent for `distance_m` (3.5: indoors, through walls).
    pub path_loss_exponent: f64,
    /// Where the AP stands, `[x, y]` in metres (default `[0, 0]`), for the stations'
    /// `position_m`, `velocity_mps` and `waypoints`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ap_position_m: Option<[f64; 2]>,
}

/// `band = "5"` and `band = 5` (or `--set phy.band=2.4`) mean the same.
fn band_from_str_or_number<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Band, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        S(String),
        F(f64),
        I(i64),
        B(bool),
    }
    let text = match Raw::deserialize(d)? {
        Raw::S(s) => s,
        Raw::F(f) => f.to_string(),
        Raw::I(i) => i.to_string(),
        Raw::B(b) => b.to_string(),
    };
    match text.as_str() {
        "2.4" => Ok(Band::Ghz2_4),
        "5" => Ok(Band::Ghz5),
        other => Err(serde::de::Error::custom(format!(
            "unknown band `{other}`, expected \"2.4\" or \"5\""
        ))),
    }
}

impl Default for Phy {
    fn default() -> Self {
        Phy {
            standard: Standard::N,
            band: Band::Ghz5,
            width_mhz: 20,
            guard_interval: GuardInterval::Long,
            preamble: DsssPreamble::Long,
            tx_power_dbm: 20.0,
            path_loss_exponent: 3.5,
            ap_position_m: None,
        }
    }
}

/// One AC's EDCA override; absent fields keep the default.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EdcaOverride {
    pub aifsn: Option<u8>,
    pub cw_min: Option<u16>,
    pub cw_max: Option<u16>,
    pub txop_limit_us: Option<u32>,
}

/// Per-AC EDCA overrides.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EdcaOverrides {
    pub vo: Option<EdcaOverride>,
    pub vi: Option<EdcaOverride>,
    pub be: Option<EdcaOverride>,
    pub bk: Option<EdcaOverride>,
}

/// `[mac]`: channel access, aggregation, retries and queue limits.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Mac {
    /// WMM/EDCA with four ACs; false = legacy DCF (one queue, no aggregation).
    pub qos: bool,
    /// "edca" or "dcf"; defaults to the one that goes with `qos`.
    pub backoff_rule: Option<BackoffRule>,
    /// A-MPDU aggregation under block ack (HT/VHT only; never for VO).
    pub aggregation: bool,
    pub max_ampdu_subframes: u16,
    /// 0 = the PHY's maximum.
    pub max_ampdu_bytes: u32,
    pub max_ampdu_duration_us: u32,
    /// Protect PSDUs longer than this with RTS/CTS; absent = never.
    pub rts_threshold_bytes: Option<u32>,
    /// ERP protection while an 802.11b station is in a 2.4 GHz 802.11g/n BSS:
    /// "cts-to-self" (the default, mac80211/ath9k), "rts-cts" or "off".
    pub protection: Protection,
    pub retry_limit: u8,
    /// Model the AP's beacons (their airtime and TIM) even when no station scans or
    /// saves power (then they are on anyway).
    pub beacons: bool,
    /// Beacon interval in TU of 1024 µs (hostapd `beacon_int`, 100 = 102.4 ms).
    pub beacon_interval_tu: u16,
    /// Every n-th beacon is a DTIM (hostapd `dtim_period`).
    pub dtim_period: u8,
    pub edca_ap: EdcaOverrides,
    pub edca_sta: EdcaOverrides,
}

impl Default for Mac {
    fn default() -> Self {
        Mac {
            qos: true,
            backoff_rule: None,
            aggregation: true,
            max_ampdu_subframes: 64,
            max_ampdu_bytes: 0,
            max_ampdu_duration_us: 4000,
            rts_threshold_bytes: None,
            protection: Protection::CtsToSelf,
            retry_limit: 7,
            beacons: false,
            beacon_interval_tu: DEFAULT_BEACON_INTERVAL_TU,
            dtim_period: DEFAULT_DTIM_PERIOD,
            edca_ap: EdcaOverrides::default(),
            edca_sta: EdcaOverrides::default(),
        }
    }
}

/// A station's link: rate and channel, as resolved for one station.
#[derive(Clone, Debug, Default)]
struct Link {
    weight: Option<u16>,
    mcs: Option<u8>,
    nss: Option<u8>,
    rate_mbps: Option<f64>,
    snr_db: Option<f64>,
    distance_m: Option<f64>,
    loss: Option<f64>,
    position_m: Option<[f64; 2]>,
    velocity_mps: Option<[f64; 2]>,
    waypoints: Option<Vec<[f64; 3]>>,
    snr_trace: Option<String>,
    snr_trace_interpolation: Option<String>,
    fading: FadingSpec,
    downlink: Option<DirectionSpec>,
    uplink: Option<DirectionSpec>,
    rate_control: Option<String>,
    scan: Option<ScanSpec>,
    power_save: Option<PowerSaveSpec>,
    bus: Option<BusSpec>,
    /// Set by `[space]` with a path-loss matrix: the SNRs are the matrix's (shown
    /// rounded, and said so), not keys of the station.
    snr_from_matrix: bool,
    /// What a `[[stations.list]]` entry took from `[stations]` ([`Link::owner`]'s
    /// names); empty for `[stations]` itself.
    inherited: Vec<&'static str>,
}

impl Link {
    /// The table that wrote `what` (a key, or a group: `channel` for the mean SNR's
    /// keys, `rate` for `mcs`/`nss`/`rate_mbps`, `fading` for the fading keys) of the
    /// station whose entry is `entry`: `stations` when the entry inherited it, else
    /// `entry`. An error then names the key the user wrote (issue 25: a bad
    /// `--set stations.rate_control` was reported under `stations.list[0]`).
    fn owner<'a>(&self, entry: &'a str, what: &str) -> &'a str {
        if self.inherited.contains(&what) {
            "stations"
        } else {
            entry
        }
    }
}

/// `downlink = { … }` / `uplink = { … }` of a station: the channel of one direction
/// of its link. A mean (`snr_db` or `snr_trace`) replaces the station's for this
/// direction; `fading` replaces the station's fading keys, `fading_k_db` or
/// `coherence_ms` alone adjusts them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirectionSpec {
    /// The SNR of this direction, dB.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snr_db: Option<f64>,
    /// A trace of this direction's SNR (as the station's `snr_trace`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snr_trace: Option<String>,
    /// "linear" or "step".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snr_trace_interpolation: Option<String>,
    /// "none", "rayleigh" or "rician".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fading: Option<String>,
    /// The Rician K factor, dB.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fading_k_db: Option<f64>,
    /// How long a fade holds, ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coherence_ms: Option<f64>,
}

impl DirectionSpec {
    fn fading(&self) -> FadingSpec {
        FadingSpec {
            fading: self.fading.clone(),
            fading_k_db: self.fading_k_db,
            coherence_ms: self.coherence_ms,
        }
    }
}

/// The fading keys of a station or a direction, which go together.
#[derive(Clone, Debug, Default, PartialEq)]
struct FadingSpec {
    fading: Option<String>,
    fading_k_db: Option<f64>,
    coherence_ms: Option<f64>,
}

impl FadingSpec {
    fn is_given(&self) -> bool {
        self.fading.is_some() || self.fading_k_db.is_some() || self.coherence_ms.is_some()
    }

    /// These keys over `base`'s: an own `fading` replaces all three; an own
    /// `fading_k_db` or `coherence_ms` alone adjusts the inherited fading.
    fn over(&self, base: &FadingSpec) -> FadingSpec {
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

/// One entry of `[[stations.list]]`: fields left out are inherited from `[stations]`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StationEntry {
    /// How many identical stations this entry stands for (default 1).
    pub count: Option<u16>,
    /// Airtime-fairness weight (default 256): airtime is shared in proportion.
    pub weight: Option<u16>,
    /// HT MCS 0–15 or VHT MCS 0–9.
    pub mcs: Option<u8>,
    /// VHT spatial streams (1–2).
    pub nss: Option<u8>,
    /// Legacy rate in Mbit/s instead of an MCS: OFDM 6–54 (802.11a/g, or an 802.11a/g
    /// station in an 802.11n/ac BSS), DSSS/CCK 1, 2, 5.5, 11 (802.11b, or an 802.11b
    /// station in a 2.4 GHz 802.11g/n BSS).
    pub rate_mbps: Option<f64>,
    /// SNR at the receiver in dB: frames fail per the PER-vs-SNR curves. With no rate
    /// given, the best rate for this SNR is chosen.
    pub snr_db: Option<f64>,
    /// Distance from the AP in metres, instead of snr_db: the SNR follows from
    /// `phy.tx_power_dbm` and a log-distance path loss (`phy.path_loss_exponent`).
    pub distance_m: Option<f64>,
    /// Fixed MPDU loss probability (instead of snr_db).
    pub loss: Option<f64>,
    /// Position on the floor plan, `[x, y]` in metres (the AP is at
    /// `phy.ap_position_m`), instead of snr_db: the SNR follows from the distance as for
    /// `distance_m`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub position_m: Option<[f64; 2]>,
    /// Velocity `[vx, vy]` in m/s from `position_m` (or `distance_m`) at time 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub velocity_mps: Option<[f64; 2]>,
    /// `[[t_s, x_m, y_m], …]`: positions at times (increasing), straight lines between,
    /// held before the first and after the last; instead of a position.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waypoints: Option<Vec<[f64; 3]>>,
    /// "none", "rayleigh" or "rician": block fading around the mean SNR.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fading: Option<String>,
    /// The Rician K factor in dB (fading = "rician").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fading_k_db: Option<f64>,
    /// How long a fade holds, ms (default: the band's at walking speed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coherence_ms: Option<f64>,
    /// A CSV file of `time_s, station, snr_db` (relative to the scenario file), instead
    /// of snr_db: the SNR over time, replayed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snr_trace: Option<String>,
    /// "linear" (default) or "step" between the trace's points.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snr_trace_interpolation: Option<String>,
    /// AP → station: the channel keys for this direction only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub downlink: Option<DirectionSpec>,
    /// Station → AP: the channel keys for this direction only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uplink: Option<DirectionSpec>,
    /// "fixed", "ideal", "minstrel_ht", "minstrel_ht-5.10" or "minstrel_ht-6".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_control: Option<String>,
    /// Background software scanning (`scan = { policy = "bounded" }`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scan: Option<ScanSpec>,
    /// Dynamic power save (`power_save = {}` for the defaults).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub power_save: Option<PowerSaveSpec>,
    /// A host bus between the station's CPU and its chip: a preset name or a table.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "bus_from_name_or_table",
        serialize_with = "bus_as_name_or_table"
    )]
    pub bus: Option<BusSpec>,
}

/// `[stations]`: how many and at which rates. The link fields (`mcs`, `nss`,
/// `rate_mbps`, `snr_db`, `loss`, the channel keys, `rate_control`) and the station's
/// own machinery (`scan`, `power_save`, `bus`) apply to every station unless a list
/// entry says otherwise.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Stations {
    /// Number of stations when there is no `list` (with a list it must stay 1).
    pub count: u16,
    pub weight: Option<u16>,
    pub mcs: Option<u8>,
    pub nss: Option<u8>,
    pub rate_mbps: Option<f64>,
    pub snr_db: Option<f64>,
    pub distance_m: Option<f64>,
    pub loss: Option<f64>,
    /// Position on the floor plan, `[x, y]` in metres (the AP is at
    /// `phy.ap_position_m`), instead of snr_db: the SNR follows from the distance as for
    /// `distance_m`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub position_m: Option<[f64; 2]>,
    /// Velocity `[vx, vy]` in m/s from `position_m` (or `distance_m`) at time 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub velocity_mps: Option<[f64; 2]>,
    /// `[[t_s, x_m, y_m], …]`: positions at times (increasing), straight lines between,
    /// held before the first and after the last; instead of a position.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waypoints: Option<Vec<[f64; 3]>>,
    /// "none", "rayleigh" or "rician": block fading around the mean SNR.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fading: Option<String>,
    /// The Rician K factor in dB (fading = "rician").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fading_k_db: Option<f64>,
    /// How long a fade holds, ms (default: the band's at walking speed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coherence_ms: Option<f64>,
    /// A CSV file of `time_s, station, snr_db` (relative to the scenario file), instead
    /// of snr_db: the SNR over time, replayed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snr_trace: Option<String>,
    /// "linear" (default) or "step" between the trace's points.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snr_trace_interpolation: Option<String>,
    /// AP → station: the channel keys for this direction only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub downlink: Option<DirectionSpec>,
    /// Station → AP: the channel keys for this direction only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uplink: Option<DirectionSpec>,
    /// "fixed", "ideal", "minstrel_ht", "minstrel_ht-5.10" or "minstrel_ht-6".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_control: Option<String>,
    /// Background software scanning (`scan = { policy = "bounded" }`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scan: Option<ScanSpec>,
    /// Dynamic power save (`power_save = {}` for the defaults).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub power_save: Option<PowerSaveSpec>,
    /// A host bus between the station's CPU and its chip: a preset name or a table.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "bus_from_name_or_table",
        serialize_with = "bus_as_name_or_table"
    )]
    pub bus: Option<BusSpec>,
    /// Explicit stations (each may repeat with `count`); overrides `count`.
    pub list: Vec<StationEntry>,
}

impl Default for Stations {
    fn default() -> Self {
        Stations {
            count: 1,
            weight: None,
            mcs: None,
            nss: None,
            rate_mbps: None,
            snr_db: None,
            distance_m: None,
            loss: None,
            position_m: None,
            velocity_mps: None,
            waypoints: None,
            fading: None,
            fading_k_db: None,
            coherence_ms: None,
            snr_trace: None,
            snr_trace_interpolation: None,
            downlink: None,
            uplink: None,
            rate_control: None,
            scan: None,
            power_save: None,
            bus: None,
            list: Vec::new(),
        }
    }
}

/// `scan = { … }` of a station: background software scanning while associated
/// (reference §7; `txop_core::mac80211::scan`), requested by user space like
/// `while true; do iw dev wlan0 scan; sleep 3; done` (seed 000).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ScanSpec {
    /// The kernel's DECISION rule: "legacy" (before Linux 3.9, §7.3) or "bounded"
    /// (after, §7.4).
    pub policy: String,
    /// "2.4" (13 channels), "5" (24, the DFS ones passive) or "both".
    #[serde(deserialize_with = "string_or_number")]
    pub bands: String,
    /// When the first scan is requested.
    pub start_s: f64,
    /// Pause between the end of one scan and the next request (`sleep 3`).
    pub pause_s: f64,
    /// Scan again after each pause; false = one scan.
    pub repeat: bool,
    /// `NL80211_SCAN_FLAG_LOW_PRIORITY`: abort instead of suspending when TX is pending
    /// (bounded rule only).
    pub low_priority: bool,
    /// Time the radio is deaf while it retunes (ath9k 5 ms).
    pub channel_switch_ms: f64,
    /// `listen_interval` in beacon intervals: the legacy rule's off-channel bound
    /// (ath9k 10).
    pub listen_interval: u16,
    /// `PM_QOS_NETWORK_LATENCY`: the legacy rule's other bound (2000 s by default).
    pub network_latency_s: f64,
    /// The driver has a `flush` operation (ath9k does); without, RESUME waits 100 ms.
    pub driver_flush: bool,
    /// During a scan's on-channel stays, answer a beacon whose TIM shows buffered
    /// frames with a null-data PM=0 (mac80211 with dynamic power save configured).
    pub answer_tim: bool,
}

impl Default for ScanSpec {
    /// ath9k-class defaults (`ScanConfig::periodic`), both bands every 3 s from 1 s,
    /// the bounded rule of every kernel since 3.9.
    fn default() -> Self {
        ScanSpec {
            policy: "bounded".into(),
            bands: "both".into(),
            start_s: 1.0,
            pause_s: 3.0,
            repeat: true,
            low_priority: false,
            channel_switch_ms: ATH9K_CHANNEL_SWITCH.as_secs_f64() * 1e3,
            listen_interval: ATH9K_LISTEN_INTERVAL,
            network_latency_s: PM_QOS_NETWORK_LATENCY_DEFAULT.as_secs_f64(),
            driver_flush: true,
            answer_tim: true,
        }
    }
}

impl ScanSpec {
    /// The model's scan configuration; errors name `key` (e.g. `stations.scan`).
    fn resolve(&self, key: &str) -> Result<ScanConfig, ScenarioError> {
        let k = |f: &str| format!("{key}.{f}");
        let policy = choose_in(
            &k("policy"),
            &self.policy,
            &[
                ("legacy", ScanPolicy::Legacy),
                ("bounded", ScanPolicy::Bounded),
            ],
        )?;
        let bands = choose_in(
            &k("bands"),
            &self.bands,
            &[
                ("2.4", ScanBands::Ghz2_4),
                ("5", ScanBands::Ghz5),
                ("both", ScanBands::Both),
            ],
        )?;
        let seconds = |f: &str, v: f64, min_exclusive: bool| {
            let ok = v.is_finite() && v <= 1e6 && if min_exclusive { v > 0.0 } else { v >= 0.0 };
            if ok {
                Ok(Nanos::from_secs_f64(v))
            } else if min_exclusive {
                Err(ScenarioError::new(
                    k(f),
                    "must be above 0 and at most 1e6 s",
                ))
            } else {
                Err(ScenarioError::new(k(f), "must be 0 to 1e6 s"))
            }
        };
        let start = seconds("start_s", self.start_s, false)?;
        let pause = seconds("pause_s", self.pause_s, true)?;
        let network_latency = seconds("network_latency_s", self.network_latency_s, true)?;
        if !(self.channel_switch_ms.is_finite() && (0.0..=100.0).contains(&self.channel_switch_ms))
        {
            return Err(ScenarioError::new(
                k("channel_switch_ms"),
                "must be 0 to 100 ms",
            ));
        }
        if self.listen_interval == 0 {
            return Err(ScenarioError::new(
                k("listen_interval"),
                "must be at least 1 beacon interval",
            ));
        }
        if self.low_priority && policy == ScanPolicy::Legacy {
            return Err(ScenarioError::new(
                k("low_priority"),
                "the legacy rule has no abort path: low-priority scans need policy = \"bounded\"",
            ));
        }
        let mut c = ScanConfig::periodic(policy, bands, start, pause);
        c.pause = self.repeat.then_some(pause);
        c.low_priority = self.low_priority;
        c.channel_switch = Nanos::from_secs_f64(self.channel_switch_ms / 1e3);
        c.listen_interval = self.listen_interval;
        c.network_latency = network_latency;
        c.driver_flush = self.driver_flush;
        c.answer_tim = self.answer_tim;
        c.validate().map_err(|e| ScenarioError::new(key, e))?;
        Ok(c)
    }
}

/// `power_save = { … }` of a station: dynamic power save (reference §9;
/// `txop_core::mac80211::powersave`). `power_save = {}` gives mac80211's defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PowerSaveSpec {
    /// Idle time before the station dozes (`dynamic_ps_timeout`, 100 ms).
    pub dynamic_timeout_ms: f64,
    /// Fetch buffered frames with PS-Polls instead of waking with a null-data PM=0.
    pub ps_poll: bool,
    /// Wake for every n-th beacon (ath9k 1; a DTIM listener the DTIM period).
    pub wake_every_beacons: u16,
}

impl Default for PowerSaveSpec {
    fn default() -> Self {
        PowerSaveSpec {
            dynamic_timeout_ms: DYNAMIC_PS_TIMEOUT.as_secs_f64() * 1e3,
            ps_poll: false,
            wake_every_beacons: 1,
        }
    }
}

impl PowerSaveSpec {
    fn resolve(&self, key: &str) -> Result<PowerSaveConfig, ScenarioError> {
        let ms = self.dynamic_timeout_ms;
        if !(ms.is_finite() && (1.0..=1e6).contains(&ms)) {
            return Err(ScenarioError::new(
                format!("{key}.dynamic_timeout_ms"),
                "must be 1 ms to 1e6 ms",
            ));
        }
        if self.wake_every_beacons == 0 {
            return Err(ScenarioError::new(
                format!("{key}.wake_every_beacons"),
                "must be at least 1",
            ));
        }
        let c = PowerSaveConfig {
            dynamic_timeout: Nanos::from_secs_f64(ms / 1e3),
            ps_poll: self.ps_poll,
            wake_every_beacons: self.wake_every_beacons,
        };
        c.validate().map_err(|e| ScenarioError::new(key, e))?;
        Ok(c)
    }
}

/// `bus = …` of a station: the host bus between its CPU and its WLAN chip (E5;
/// `txop_core::driver::bus`). Either a preset name (`bus = "sdio-generic"`) or a table
/// naming a preset and overriding any of its fields.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BusSpec {
    /// "sdio-vendor" (interrupts + DMA) or "sdio-generic" (polled, PIO).
    pub preset: String,
    pub clock_hz: Option<u64>,
    /// 1, 4 or 8 data lines.
    pub width_bits: Option<u8>,
    /// CMD53 block size; 0 = byte mode.
    pub block_bytes: Option<u32>,
    pub block_gap_ns: Option<u64>,
    pub transfer_overhead_ns: Option<u64>,
    pub status_read_bytes: Option<u32>,
    pub frame_overhead_bytes: Option<u32>,
    /// "interrupt" or "polled".
    pub completion: Option<String>,
    /// Polled: the timer tick (1/HZ) and the longest sleep between polls in ticks.
    pub poll_jiffy_ms: Option<f64>,
    pub poll_idle_jiffies: Option<u32>,
    /// "dma" or "pio".
    pub data: Option<String>,
    /// PIO: the CPU's copy cost, picoseconds per byte.
    pub pio_copy_ps_per_byte: Option<u64>,
    pub cpu_per_transfer_ns: Option<u64>,
    pub cpu_per_interrupt_ns: Option<u64>,
    pub cpu_per_poll_ns: Option<u64>,
    pub cpu_per_switch_ns: Option<u64>,
    pub host_cpu_per_packet_ns: Option<u64>,
    pub host_cpu_ps_per_byte: Option<u64>,
    pub host_backlog_packets: Option<usize>,
    pub host_tx_queue_packets: Option<usize>,
    pub device_rx_buffers: Option<usize>,
}

impl BusSpec {
    /// Only a preset, no overrides: written back as the bare name.
    fn is_bare(&self) -> bool {
        *self
            == BusSpec {
                preset: self.preset.clone(),
                ..BusSpec::default()
            }
    }

    fn resolve(&self, key: &str) -> Result<BusConfig, ScenarioError> {
        let k = |f: &str| format!("{key}.{f}");
        let mut b = BusConfig::preset(&self.preset).ok_or_else(|| {
            ScenarioError::new(
                if self.is_bare() {
                    key.to_string()
                } else {
                    k("preset")
                },
                format!(
                    "unknown bus `{}`; expected one of {}",
                    self.preset,
                    BusConfig::PRESETS.join(", ")
                ),
            )
        })?;
        macro_rules! set {
            ($($field:ident),*) => {
                $(if let Some(v) = self.$field {
                    b.$field = v;
                })*
            };
        }
        set!(
            clock_hz,
            width_bits,
            block_bytes,
            block_gap_ns,
            transfer_overhead_ns,
            status_read_bytes,
            frame_overhead_bytes,
            cpu_per_transfer_ns,
            cpu_per_interrupt_ns,
            cpu_per_poll_ns,
            cpu_per_switch_ns,
            host_cpu_per_packet_ns,
            host_cpu_ps_per_byte,
            host_backlog_packets,
            host_tx_queue_packets,
            device_rx_buffers
        );
        let polled = match &self.completion {
            Some(c) => choose_in(
                &k("completion"),
                c,
                &[("interrupt", false), ("polled", true)],
            )?,
            None => matches!(b.completion, Completion::Polled { .. }),
        };
        let (mut jiffy, mut idle) = match b.completion {
            Completion::Polled {
                jiffy,
                idle_period_jiffies,
            } => (jiffy, idle_period_jiffies),
            // Linux's sdio_irq_thread at HZ = 200 (the S3C24xx's): 5 ms, 2 ticks idle.
            Completion::Interrupt => (Nanos::from_ms(5), 2),
        };
        if let Some(ms) = self.poll_jiffy_ms {
            if !(ms.is_finite() && ms > 0.0 && ms <= 1000.0) {
                return Err(ScenarioError::new(
                    k("poll_jiffy_ms"),
                    "must be above 0 and at most 1000 ms",
                ));
            }
            jiffy = Nanos::from_secs_f64(ms / 1e3);
        }
        if let Some(n) = self.poll_idle_jiffies {
            if n == 0 {
                return Err(ScenarioError::new(
                    k("poll_idle_jiffies"),
                    "must be at least 1",
                ));
            }
            idle = n;
        }
        if !polled && (self.poll_jiffy_ms.is_some() || self.poll_idle_jiffies.is_some()) {
            return Err(ScenarioError::new(
                k(if self.poll_jiffy_ms.is_some() {
                    "poll_jiffy_ms"
                } else {
                    "poll_idle_jiffies"
                }),
                "applies to completion = \"polled\" only",
            ));
        }
        b.completion = if polled {
            Completion::Polled {
                jiffy,
                idle_period_jiffies: idle,
            }
        } else {
            Completion::Interrupt
        };
        let pio = match &self.data {
            Some(d) => choose_in(&k("data"), d, &[("dma", false), ("pio", true)])?,
            None => matches!(b.data, DataMode::Pio { .. }),
        };
        let copy = match b.data {
            DataMode::Pio { copy_ps_per_byte } => copy_ps_per_byte,
            // The generic preset's figure: 600 ns per byte through the SDI's FIFO.
            DataMode::Dma => 600_000,
        };
        if !pio && self.pio_copy_ps_per_byte.is_some() {
            return Err(ScenarioError::new(
                k("pio_copy_ps_per_byte"),
                "applies to data = \"pio\" only",
            ));
        }
        b.data = if pio {
            DataMode::Pio {
                copy_ps_per_byte: self.pio_copy_ps_per_byte.unwrap_or(copy),
            }
        } else {
            DataMode::Dma
        };
        b.validate().map_err(|e| ScenarioError::new(key, e))?;
        Ok(b)
    }
}

/// `bus = "name"` or `bus = { preset = "name", … }`; a table keeps its errors' paths.
fn bus_from_name_or_table<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<BusSpec>, D::Error> {
    struct V;
    impl<'de> serde::de::Visitor<'de> for V {
        type Value = BusSpec;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a bus preset name or a table with `preset` and overrides")
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<BusSpec, E> {
            Ok(BusSpec {
                preset: v.to_string(),
                ..BusSpec::default()
            })
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<BusSpec, A::Error> {
            BusSpec::deserialize(serde::de::value::MapAccessDeserializer::new(map))
        }
    }
    d.deserialize_any(V).map(Some)
}

/// Written back as the bare name when nothing is overridden (round-trips either way).
fn bus_as_name_or_table<S: serde::Serializer>(
    b: &Option<BusSpec>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match b {
        Some(b) if b.is_bare() => s.serialize_str(&b.preset),
        Some(b) => b.serialize(s),
        None => s.serialize_none(),
    }
}

/// A string, or a number written as one (`bands = 5` and `--set …bands=2.4` work).
fn string_or_number<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        S(String),
        F(f64),
        I(i64),
        B(bool),
    }
    // A boolean too, so that `bands = true` is refused by the names' check.
    Ok(match Raw::deserialize(d)? {
        Raw::S(s) => s,
        Raw::F(f) => f.to_string(),
        Raw::I(i) => i.to_string(),
        Raw::B(b) => b.to_string(),
    })
}

/// Which way saturated traffic flows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Uplink,
    Downlink,
    Both,
}

/// `[traffic]`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Traffic {
    /// "saturated": every flow always has frames queued (closed loop);
    /// "cbr": constant-rate UDP at `rate_mbps` per flow (open loop).
    pub kind: TrafficKind,
    pub direction: Direction,
    /// MSDU (IP packet) size.
    pub packet_bytes: u32,
    /// 802.1d user priority 0–7 (selects the AC) when `dscp` is 0.
    pub tid: u8,
    /// DiffServ codepoint; if set, the stack classifies it to a UP (`dscp_mapping`).
    pub dscp: u8,
    /// Saturated: packets each flow keeps inside the cell; 0 = enough to fill aggregates.
    pub depth: u32,
    /// CBR: offered rate of each flow, Mbit/s.
    pub rate_mbps: f64,
    /// A sparse flow beside each bulk flow (same direction, its own flow hash): one
    /// `probe_bytes` packet every `probe_interval_ms`; 0 = none.
    pub probe_interval_ms: f64,
    pub probe_bytes: u32,
    /// A flent test instead of the flows above (`txop list` shows them): its TCP
    /// streams run between the server and the stations, its pings from the stations.
    pub test: Option<String>,
    /// tcp_ndown / tcp_nup streams.
    pub streams: u32,
    /// Loader seconds (flent `-l`).
    pub length_s: f64,
    /// Pings alone before and after the loaders.
    pub delay_s: f64,
    /// The station that is flent's test host.
    pub station: u16,
    /// TCP congestion control: "cubic", "newreno" or "bbr".
    pub cc: String,
    /// ECN on the TCP flows.
    pub ecn: bool,
    /// A web page load beside the other traffic.
    pub web: Option<WebSpec>,
}

/// `[traffic.web]`: a page a station loads (the seed's 62 objects, 1.8 MB, by default).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WebSpec {
    /// The station whose browser loads it.
    pub station: u16,
    /// Object sizes in bytes, the page first; absent = the seed's page.
    pub objects_bytes: Option<Vec<u32>>,
    /// Persistent connections (wget 1, browsers 6).
    pub connections: u32,
    /// When the first load starts.
    pub start_s: f64,
    /// Load again this long after each load ends (absent = once).
    pub repeat_after_s: Option<f64>,
}

impl Default for WebSpec {
    fn default() -> Self {
        WebSpec {
            station: 1,
            objects_bytes: None,
            connections: 6,
            start_s: 5.0,
            repeat_after_s: None,
        }
    }
}

/// `[[flows]]`: one explicit flow between two hosts.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    pub kind: FlowKind,
    /// Sending host (for pings the one that measures): "server", "ap" or "staN".
    pub from: String,
    pub to: String,
    #[serde(default)]
    pub start_s: f64,
    /// When the application stops sending (absent = never).
    #[serde(default)]
    pub stop_s: Option<f64>,
    /// ping / udp_ping: time between requests (default 200 ms / 20 ms).
    #[serde(default)]
    pub interval_ms: Option<f64>,
    /// cbr: offered rate.
    #[serde(default)]
    pub rate_mbps: Option<f64>,
    /// cbr / ping / udp_ping: IP packet size (default 1500 / 84 / 172 bytes).
    #[serde(default)]
    pub packet_bytes: Option<u32>,
    /// tcp: bytes to send (absent = bulk until stop_s).
    #[serde(default)]
    pub bytes: Option<u64>,
    /// tcp: "cubic" (default), "newreno" or "bbr".
    #[serde(default)]
    pub cc: Option<String>,
    /// tcp: ECN-capable.
    #[serde(default)]
    pub ecn: bool,
    /// DiffServ codepoint (0–63): selects the AC through the stack's DSCP mapping.
    #[serde(default)]
    pub dscp: u8,
}

/// The kinds of explicit flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FlowKind {
    /// A TCP transfer (bulk or `bytes`).
    Tcp,
    /// ICMP echo, like `ping -i`.
    Ping,
    /// An irtt-like UDP echo (one-way delays, jitter, loss).
    UdpPing,
    /// Constant-rate UDP (between the AP and a station; "server" means the AP).
    Cbr,
}

/// Traffic models.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TrafficKind {
    Saturated,
    Cbr,
}

impl Default for Traffic {
    fn default() -> Self {
        Traffic {
            kind: TrafficKind::Saturated,
            direction: Direction::Downlink,
            packet_bytes: 1500,
            tid: 0,
            dscp: 0,
            depth: 0,
            rate_mbps: 10.0,
            probe_interval_ms: 0.0,
            probe_bytes: 100,
            test: None,
            streams: 4,
            length_s: 60.0,
            delay_s: 5.0,
            station: 1,
            cc: "cubic".to_string(),
            ecn: false,
            web: None,
        }
    }
}

/// A problem with a scenario: the key it concerns and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    pub key: String,
    pub message: String,
}

impl ScenarioError {
    fn new(key: impl Into<String>, message: impl Into<String>) -> ScenarioError {
        ScenarioError {
            key: key.into(),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.key.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.key, self.message)
        }
    }
}

/// Set `path` (dotted) in `table` to `raw`, parsed as a TOML value, or as a string if it
/// does not parse (so `--set phy.standard=ac` needs no quotes).
pub fn apply_override(table: &mut toml::Table, path: &str, raw: &str) -> Result<(), ScenarioError> {
    let parts: Vec<&str> = path.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(ScenarioError::new(path, "empty key in --set path"));
    }
    let value = match toml::from_str::<toml::Table>(&format!("v = {raw}")) {
        Ok(mut t) => t
            .remove("v")
            .unwrap_or(toml::Value::String(raw.to_string())),
        // Digits TOML cannot hold as an integer are not a word: taken as a string they
        // were refused in serde's words ("invalid type: string …, expected u64").
        Err(_) if is_integer_literal(raw) => {
            return Err(ScenarioError::new(
                path,
                format!("{}: {INTEGER_RANGE}", raw.trim()),
            ))
        }
        Err(_) => toml::Value::String(raw.to_string()),
    };
    let mut cur = table;
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        let here = parts[..=i].join(".");
        // `name[k]` addresses element k of an array of tables.
        let (name, index) = match part.split_once('[') {
            Some((n, rest)) => {
                let idx = rest
                    .strip_suffix(']')
                    .and_then(|x| x.parse::<usize>().ok())
                    .ok_or_else(|| ScenarioError::new(&here, "bad index, expected name[N]"))?;
                (n, Some(idx))
            }
            None => (*part, None),
        };
        if last && index.is_none() {
            cur.insert(name.to_string(), value);
            return Ok(());
        }
        let entry = match index {
            None => cur
                .entry(name.to_string())
                .or_insert_with(|| toml::Value::Table(toml::Table::new())),
            Some(idx) => {
                let arr = cur
                    .get_mut(name)
                    .and_then(|v| v.as_array_mut())
                    .ok_or_else(|| ScenarioError::new(&here, format!("`{name}` is not a list")))?;
                let len = arr.len();
                arr.get_mut(idx).ok_or_else(|| {
                    ScenarioError::new(
                        &here,
                        format!("index {idx} is past the end ({len} entries)"),
                    )
                })?
            }
        };
        if last {
            *entry = value;
            return Ok(());
        }
        cur = match entry {
            toml::Value::Table(t) => t,
            _ => {
                return Err(ScenarioError::new(
                    here,
                    "is not a table, cannot set a key inside it",
                ))
            }
        };
    }
    Ok(())
}

/// Whether `raw` is written as a whole number: an optional sign, then digits (with
/// TOML's `_` separators).
fn is_integer_literal(raw: &str) -> bool {
    let digits = raw.trim().trim_start_matches(['+', '-']);
    digits.starts_with(|c: char| c.is_ascii_digit())
        && digits.chars().all(|c| c.is_ascii_digit() || c == '_')
}

/// The keys whose values are tables (`name[]`: a list of tables), by dotted path with
/// `[]` for a list's entries. serde would build any of them from a TOML list too, field
/// by field in order (`traffic = []` meaning the defaults, `traffic = ["cbr"]` setting
/// `kind`): [`refuse_lists_as_tables`] refuses that.
const TABLE_KEYS: &[&str] = &[
    "stack_options",
    "phy",
    "mac",
    "mac.edca_ap",
    "mac.edca_ap.vo",
    "mac.edca_ap.vi",
    "mac.edca_ap.be",
    "mac.edca_ap.bk",
    "mac.edca_sta",
    "mac.edca_sta.vo",
    "mac.edca_sta.vi",
    "mac.edca_sta.be",
    "mac.edca_sta.bk",
    "stations",
    "stations.scan",
    "stations.power_save",
    "stations.bus",
    "stations.downlink",
    "stations.uplink",
    "stations.list[]",
    "stations.list[].scan",
    "stations.list[].power_save",
    "stations.list[].bus",
    "stations.list[].downlink",
    "stations.list[].uplink",
    "traffic",
    "traffic.web",
    "wired",
    "space",
    "flows[]",
];

/// The top-level tables a `[[bss]]` entry may give too, with the same tables inside.
const BSS_TABLES: &[&str] = &[
    "stack_options",
    "mac",
    "stations",
    "traffic",
    "wired",
    "flows",
];

/// [`TABLE_KEYS`], and the same inside a `[[bss]]` entry (`bss[]`, `bss[].stations`, …).
fn table_keys() -> impl Iterator<Item = String> {
    let in_bss = TABLE_KEYS
        .iter()
        .filter(|k| BSS_TABLES.contains(&k.split(['.', '[']).next().unwrap_or_default()))
        .map(|k| format!("bss[].{k}"));
    TABLE_KEYS
        .iter()
        .map(|k| k.to_string())
        .chain(std::iter::once("bss[]".to_string()))
        .chain(in_bss)
}

/// The keys whose value is one of a set of names (as [`TABLE_KEYS`] writes them; the
/// `[stations]` keys hold for `stations.list[]` entries and `downlink`/`uplink` tables
/// too, and every key for a `[[bss]]` entry's tables: [`choice_keys`]). A value of
/// another type there (`stack = 5`, `traffic.direction = true`) is taken as the text it
/// is written as ([`choices_as_text`]), so that the check that knows the names refuses
/// it with one line: the key, the value given and the names accepted, whichever of
/// serde's enums or the resolver's lookups owns the key. None of the names reads as a
/// number, a boolean or a list, so no value of another type becomes a valid one (the
/// tests set each key to one of each). `phy.band` and `stations.scan.bands` take
/// numbers on purpose and read them themselves.
const CHOICE_KEYS: &[&str] = &[
    "stack",
    "stack_options.qdisc",
    "stack_options.fq_overload",
    "stack_options.dscp_mapping",
    "stack_options.scheduler",
    "stack_options.may_transmit_aql_check",
    "stack_options.queue_limit",
    "stack_options.aql_estimator",
    "stack_options.driver",
    "phy.standard",
    "phy.guard_interval",
    "phy.preamble",
    "mac.protection",
    "mac.backoff_rule",
    "stations.rate_control",
    "stations.fading",
    "stations.snr_trace_interpolation",
    "stations.downlink.fading",
    "stations.downlink.snr_trace_interpolation",
    "stations.uplink.fading",
    "stations.uplink.snr_trace_interpolation",
    "stations.scan.policy",
    "stations.bus",
    "stations.bus.preset",
    "stations.bus.completion",
    "stations.bus.data",
    "traffic.kind",
    "traffic.direction",
    "traffic.test",
    "traffic.cc",
    "flows[].kind",
    "flows[].cc",
    "space.layout",
    "space.capture",
];

/// [`CHOICE_KEYS`], with the `[stations]` keys for `stations.list[]` entries too, and
/// every key inside a `[[bss]]` entry's tables (`bss[].traffic.kind`, …).
fn choice_keys() -> impl Iterator<Item = String> {
    let with_list = CHOICE_KEYS.iter().flat_map(|k| {
        let entry = k
            .strip_prefix("stations.")
            .map(|rest| format!("stations.list[].{rest}"));
        std::iter::once(k.to_string()).chain(entry)
    });
    let all: Vec<String> = with_list.collect();
    let in_bss: Vec<String> = all
        .iter()
        .filter(|k| BSS_TABLES.contains(&k.split(['.', '[']).next().unwrap_or_default()))
        .map(|k| format!("bss[].{k}"))
        .collect();
    all.into_iter()
        .chain(std::iter::once("bss[].stack".to_string()))
        .chain(in_bss)
}

/// Every value at a key of [`choice_keys`] that is not a string (nor, for
/// `stations.bus`, a table) replaced by the text it is written as: see
/// [`CHOICE_KEYS`]. `pattern` is `table`'s path as [`TABLE_KEYS`] writes it.
fn choices_as_text(table: &mut toml::Table, pattern: &str) {
    for (key, value) in table.iter_mut() {
        let pattern = if pattern.is_empty() {
            key.clone()
        } else {
            format!("{pattern}.{key}")
        };
        let is_choice = || choice_keys().any(|k| k == pattern);
        match value {
            toml::Value::String(_) => {}
            toml::Value::Table(t) => choices_as_text(t, &pattern),
            toml::Value::Array(_) if is_choice() => {
                *value = toml::Value::String(value.to_string());
            }
            toml::Value::Array(items) => {
                let entries = format!("{pattern}[]");
                for item in items.iter_mut() {
                    if let toml::Value::Table(t) = item {
                        choices_as_text(t, &entries);
                    }
                }
            }
            other if is_choice() => {
                *other = toml::Value::String(other.to_string());
            }
            _ => {}
        }
    }
}

/// Whether the key `pattern` (as [`TABLE_KEYS`] writes it) is a table.
fn is_table_key(pattern: &str) -> bool {
    table_keys().any(|k| k == pattern)
}

/// A list where a table belongs is an error naming the key (see [`table_keys`]).
/// `pattern` is the table's path as [`TABLE_KEYS`] writes it, `shown` as the user
/// does (`stations.list[]` / `stations.list[2]`).
fn refuse_lists_as_tables(
    table: &toml::Table,
    pattern: &str,
    shown: &str,
) -> Result<(), ScenarioError> {
    let join = |base: &str, key: &str| {
        if base.is_empty() {
            key.to_string()
        } else {
            format!("{base}.{key}")
        }
    };
    for (key, value) in table {
        let (pattern, shown) = (join(pattern, key), join(shown, key));
        match value {
            toml::Value::Table(t) => refuse_lists_as_tables(t, &pattern, &shown)?,
            toml::Value::Array(_) if is_table_key(&pattern) => {
                return Err(ScenarioError::new(
                    shown,
                    "expected a table (`{ … }` or a [section]), not a list",
                ));
            }
            toml::Value::Array(items) => {
                let entries = format!("{pattern}[]");
                if !is_table_key(&entries) {
                    continue;
                }
                for (i, item) in items.iter().enumerate() {
                    let shown = format!("{shown}[{i}]");
                    let toml::Value::Table(t) = item else {
                        return Err(ScenarioError::new(shown, "expected a table (`{ … }`)"));
                    };
                    refuse_lists_as_tables(t, &entries, &shown)?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Parse a scenario from TOML text with overrides applied.
pub fn parse(text: &str, overrides: &[(String, String)]) -> Result<Scenario, ScenarioError> {
    let mut table: toml::Table = toml::from_str(text).map_err(|e| {
        let msg = match e.message() {
            // An integer past i64 (`seed = 18446744073709551615`, or past u64 "as
            // i128"): TOML's integers are 64-bit signed (toml.io, "Integer").
            m if m == "u64 value was too large" || m.contains("` as i128") => {
                INTEGER_RANGE.to_string()
            }
            m => m.to_string(),
        };
        let at = e.span().map(|s| s.start.min(text.len()));
        // The line, and the key whose value it is in, when the error is in a value.
        let line = at.map(|a| text[..a].matches('\n').count() + 1);
        let key = at.and_then(|a| key_at(text, a));
        let place = match (line, key) {
            (Some(l), Some(k)) => format!("line {l}: {k}"),
            (Some(l), None) => format!("line {l}"),
            (None, _) => String::new(),
        };
        ScenarioError::new(place, format!("invalid TOML: {msg}"))
    })?;
    for (k, v) in overrides {
        apply_override(&mut table, k, v)?;
    }
    refuse_lists_as_tables(&table, "", "")?;
    choices_as_text(&mut table, "");
    let de = toml::Value::Table(table);
    serde_path_to_error::deserialize::<_, Scenario>(de).map_err(|e| {
        let path = e.path().to_string();
        let key = if path == "." { String::new() } else { path };
        ScenarioError::new(key, suggest(e.inner().message()))
    })
}

/// What an integer TOML cannot hold is told (TOML's integers are 64-bit signed).
const INTEGER_RANGE: &str =
    "integer out of range; TOML integers are -9223372036854775808 to 9223372036854775807";

/// The dotted key whose value holds byte `offset` of `text` (for a TOML error in a
/// value): the key before `=` on that line, under the last `[table]` or `[[list]]`
/// header above it (`stations.list[1].mcs`). `None` when the offset is not in a value
/// on its key's line (a header, the key itself, a list's later line).
fn key_at(text: &str, offset: usize) -> Option<String> {
    let offset = offset.min(text.len());
    let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let (key, _) = text[start..offset].split_once('=')?;
    let key = key.trim();
    if key.is_empty() || key.starts_with(['[', '#']) {
        return None;
    }
    let mut table = String::new();
    let mut entries: BTreeMap<String, usize> = BTreeMap::new();
    for line in text[..start].lines() {
        let line = line.trim();
        if let Some(h) = line.strip_prefix("[[") {
            let name = h.split("]]").next().unwrap_or_default().trim().to_string();
            let n = entries.entry(name.clone()).or_insert(0);
            table = format!("{name}[{n}]");
            *n += 1;
        } else if let Some(h) = line.strip_prefix('[') {
            table = h.split(']').next().unwrap_or_default().trim().to_string();
        }
    }
    Some(if table.is_empty() {
        key.to_string()
    } else {
        format!("{table}.{key}")
    })
}

/// serde reports unknown fields as "unknown field `x`, expected one of `a`, `b`": add
/// the nearest expected name. An enum's "unknown variant `x`, expected `a` or `b`" /
/// "expected one of `a`, `b`" reads as the resolver's lookups do ([`choose_in`]).
fn suggest(message: &str) -> String {
    if let Some(rest) = message.strip_prefix("unknown variant `") {
        if let Some((value, expected)) = rest.split_once("`, expected ") {
            let names: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
            return format!(
                "unknown value `{value}`; expected one of {}",
                names.join(", ")
            );
        }
    }
    let Some(rest) = message.strip_prefix("unknown field `") else {
        return message.to_string();
    };
    let Some((field, expected)) = rest.split_once('`') else {
        return message.to_string();
    };
    let names: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    let best = names
        .iter()
        .map(|n| (strsim::damerau_levenshtein(field, n), *n))
        .min();
    match best {
        Some((d, name)) if d <= 3 => format!("unknown key (did you mean `{name}`?)"),
        _ => format!("unknown key; expected one of {}", names.join(", ")),
    }
}

/// `[stations]` entries expanded to one link spec per station, with the key to blame.
fn station_links(s: &Stations) -> Result<Vec<(String, Link)>, ScenarioError> {
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

/// The coherence time of a channel whose scatterers move at walking speed, 1 m/s:
/// `0.423 / f_D` with the maximum Doppler shift `f_D = v·f/c` (Clarke's model;
/// Rappaport, *Wireless Communications*, eq. 5.40c): 24.4 ms at 5.2 GHz, 52.0 ms at
/// 2.437 GHz. The default of `coherence_ms`.
fn walking_coherence_ms(band: Band) -> f64 {
    let walking_mps = 1.0;
    let doppler_hz = walking_mps * path_loss::centre_frequency_hz(band) / 299_792_458.0;
    1000.0 * 0.423 / doppler_hz
}

/// A trace file read and parsed once for all the stations that name it.
type ParsedTrace = std::rc::Rc<BTreeMap<u16, StationPoints>>;

/// The trace files read so far while resolving, by path.
#[derive(Default)]
struct TraceFiles {
    files: BTreeMap<std::path::PathBuf, ParsedTrace>,
    /// The key that first named each file, and the file as shown in messages.
    named_by: BTreeMap<std::path::PathBuf, (String, String)>,
}

impl TraceFiles {
    /// Refuse a file with rows for a station the scenario does not have (`stations`
    /// stations): such rows were ignored, so a trace written for another scenario, or
    /// with a station number wrong, replayed silently without them (issue 25). The
    /// error names the key, the file, the line of the station's first row and the
    /// station.
    fn refuse_absent_stations(&self, stations: usize) -> Result<(), ScenarioError> {
        for (path, parsed) in &self.files {
            let Some((sta, points)) = parsed.iter().find(|(&sta, _)| usize::from(sta) > stations)
            else {
                continue;
            };
            let (key, shown) = &self.named_by[path];
            return Err(ScenarioError::new(
                key,
                format!(
                    "{shown}:{}: station: {sta} is not a station of this scenario (it has \
                     {stations}); each row is for one of its stations",
                    points.first_line
                ),
            ));
        }
        Ok(())
    }
}

/// The text of trace file `path` (shown as `shown`): a regular file of at most
/// [`limits::MAX_TRACE_FILE_BYTES`], in UTF-8.
fn read_trace_file(path: &std::path::Path, shown: &str) -> Result<String, String> {
    use std::io::Read;
    let meta = std::fs::metadata(path).map_err(|e| format!("{shown}: cannot read: {e}"))?;
    if !meta.is_file() {
        return Err(format!("{shown}: not a regular file"));
    }
    let cap = limits::MAX_TRACE_FILE_BYTES;
    let too_big = || format!("{shown}: larger than {} MiB", cap >> 20);
    if meta.len() > cap {
        return Err(too_big());
    }
    let file = std::fs::File::open(path).map_err(|e| format!("{shown}: cannot read: {e}"))?;
    let mut bytes = Vec::new();
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{shown}: cannot read: {e}"))?;
    if bytes.len() as u64 > cap {
        return Err(too_big());
    }
    String::from_utf8(bytes).map_err(|_| format!("{shown}: not UTF-8 text"))
}

/// Where a station's mean SNR comes from, before it is split into directions.
#[derive(Clone, Debug)]
enum StationMean {
    /// A fixed SNR (`snr_db`, or `distance_m` standing still).
    Fixed(f64),
    /// The station moves (or stands at `position_m`): the SNR follows the distance.
    Geometry(Mobility),
    /// Replayed from a trace (with the file as the user named it).
    Trace(SnrTrace, String),
}

/// A station's resolved channel: the [`StationConfig::channel`], the SNR its rate is
/// chosen for and its error model holds (`None`: no SNR), and what `txop show` says.
struct ResolvedChannel {
    channel: Option<StationChannel>,
    snr_db: Option<f64>,
    summary: String,
}

/// `[x, y]` as "(x, y) m".
fn xy(p: Position) -> String {
    format!("({}, {}) m", p.x_m, p.y_m)
}

/// What `txop show` says about a fading model.
fn describe_fading(f: &Fading) -> String {
    let ms = |c: Nanos| format!("{} ms", (c.as_ns() as f64 / 1e6 * 1000.0).round() / 1000.0);
    match *f {
        Fading::None => "no fading".into(),
        Fading::Rayleigh { coherence } => format!("rayleigh fading, coherence {}", ms(coherence)),
        Fading::Rician { k_db, coherence } => {
            format!("rician fading K {k_db} dB, coherence {}", ms(coherence))
        }
    }
}

/// What `txop show` says about a station's movement.
fn describe_mobility(m: &Mobility) -> String {
    match m {
        Mobility::Still(p) => format!("at {}", xy(*p)),
        Mobility::ConstantVelocity {
            start,
            velocity_mps: (vx, vy),
        } => format!("from {} at ({vx}, {vy}) m/s", xy(*start)),
        Mobility::Waypoints(w) => {
            let (first, last) = (&w[0], &w[w.len() - 1]);
            format!(
                "{} waypoints from {} at {} s to {} at {} s",
                w.len(),
                xy(first.position),
                first.at.as_secs_f64(),
                xy(last.position),
                last.at.as_secs_f64()
            )
        }
    }
}

/// The stations' resolved channels as TOML comments, one line per run of stations
/// that read the same.
fn channel_summary(per_station: &[String]) -> String {
    let mut out =
        String::from("# Resolved channels and rate control (for reading; ignored as input):\n");
    let mut i = 0;
    while i < per_station.len() {
        let run = per_station[i..]
            .iter()
            .take_while(|s| **s == per_station[i])
            .count();
        let who = if run == 1 {
            format!("station {}", i + 1)
        } else {
            format!("stations {}–{}", i + 1, i + run)
        };
        out.push_str(&format!("# {who}: {}\n", per_station[i]));
        i += run;
    }
    out
}

impl Scenario {
    /// The link budget of `distance_m`, `position_m` and movement: `phy.tx_power_dbm`
    /// and `phy.path_loss_exponent` checked.
    fn path_loss(&self, width: ChannelWidth) -> Result<LogDistance, ScenarioError> {
        let (p, n) = (self.phy.tx_power_dbm, self.phy.path_loss_exponent);
        if !(p.is_finite() && (-20.0..=40.0).contains(&p)) {
            return Err(ScenarioError::new(
                "phy.tx_power_dbm",
                "must be −20 to 40 dBm",
            ));
        }
        if !(n.is_finite() && (1.5..=6.0).contains(&n)) {
            return Err(ScenarioError::new(
                "phy.path_loss_exponent",
                "must be 1.5 to 6",
            ));
        }
        Ok(LogDistance {
            tx_power_dbm: p,
            exponent: n,
            band: self.phy.band,
            width,
        })
    }

    /// A point of the floor plan given as `key = [x, y]`, within
    /// [`limits::MAX_COORDINATE_M`].
    fn position(key: &str, xy: [f64; 2]) -> Result<Position, ScenarioError> {
        let max = limits::MAX_COORDINATE_M;
        if xy.iter().all(|c| c.is_finite() && c.abs() <= max) {
            Ok(Position::new(xy[0], xy[1]))
        } else {
            Err(ScenarioError::new(
                key,
                format!("coordinates must be −{max} to {max} m"),
            ))
        }
    }

    /// Where the AP stands (`phy.ap_position_m`, default the origin).
    fn ap_position(&self) -> Result<Position, ScenarioError> {
        self.phy.ap_position_m.map_or(Ok(Position::default()), |p| {
            Self::position("phy.ap_position_m", p)
        })
    }

    /// The SNR trace `name` of station `sta` (the key `key` names it), read relative to
    /// the scenario's directory and parsed once per file.
    fn snr_trace(
        &self,
        key: &str,
        name: &str,
        interpolation: Option<&str>,
        sta: u16,
        files: &mut TraceFiles,
    ) -> Result<(SnrTrace, String), ScenarioError> {
        let interpolation = choose_in(
            &format!("{key}_interpolation"),
            interpolation.unwrap_or("linear"),
            &Interpolation::NAMES,
        )?;
        let path = match &self.base_dir {
            Some(dir) => dir.join(name),
            None => std::path::PathBuf::from(name),
        };
        let shown = path.display().to_string();
        let parsed = match files.files.get(&path) {
            Some(p) => p.clone(),
            None => {
                let text =
                    read_trace_file(&path, &shown).map_err(|e| ScenarioError::new(key, e))?;
                let parsed = std::rc::Rc::new(
                    parse_trace(&shown, &text)
                        .map_err(|e| ScenarioError::new(key, e.to_string()))?,
                );
                files
                    .named_by
                    .insert(path.clone(), (key.to_string(), shown.clone()));
                files.files.insert(path, parsed.clone());
                parsed
            }
        };
        let Some(points) = parsed.get(&sta) else {
            return Err(ScenarioError::new(
                key,
                format!("{shown} has no points for station {sta}"),
            ));
        };
        let trace = SnrTrace::new(points.points.clone(), interpolation)
            .map_err(|e| ScenarioError::new(key, format!("{shown}: {e}")))?;
        Ok((trace, shown))
    }

    /// The fading of the keys in `f`, named under `key` (`stations.list[2]`,
    /// `stations.downlink`).
    fn fading(&self, key: &str, f: &FadingSpec) -> Result<Fading, ScenarioError> {
        #[derive(Clone, Copy, PartialEq)]
        enum Kind {
            None,
            Rayleigh,
            Rician,
        }
        let kind = choose_in(
            &format!("{key}.fading"),
            f.fading.as_deref().unwrap_or("none"),
            &[
                ("none", Kind::None),
                ("rayleigh", Kind::Rayleigh),
                ("rician", Kind::Rician),
            ],
        )?;
        if kind != Kind::Rician && f.fading_k_db.is_some() {
            return Err(ScenarioError::new(
                format!("{key}.fading_k_db"),
                "applies with fading = \"rician\" only",
            ));
        }
        if kind == Kind::None {
            if f.coherence_ms.is_some() {
                return Err(ScenarioError::new(
                    format!("{key}.coherence_ms"),
                    "applies with fading = \"rayleigh\" or \"rician\" only",
                ));
            }
            return Ok(Fading::None);
        }
        let (lo, hi) = limits::COHERENCE_MS;
        let coherence_ms = f
            .coherence_ms
            .unwrap_or_else(|| walking_coherence_ms(self.phy.band));
        if !(coherence_ms.is_finite() && (lo..=hi).contains(&coherence_ms)) {
            return Err(ScenarioError::new(
                format!("{key}.coherence_ms"),
                format!("must be {lo} to {hi} ms"),
            ));
        }
        let coherence = Nanos::from_secs_f64(coherence_ms / 1000.0);
        let fading = match kind {
            Kind::Rayleigh => Fading::Rayleigh { coherence },
            _ => {
                let Some(k_db) = f.fading_k_db else {
                    return Err(ScenarioError::new(
                        format!("{key}.fading_k_db"),
                        "rician fading needs its K factor (e.g. fading_k_db = 6)",
                    ));
                };
                Fading::Rician { k_db, coherence }
            }
        };
        fading.validate().map_err(|e| {
            let (lo, hi) = K_DB_RANGE;
            ScenarioError::new(
                format!("{key}.fading_k_db"),
                if e.contains("K factor") {
                    format!("must be {lo} to {hi} dB")
                } else {
                    e
                },
            )
        })?;
        Ok(fading)
    }

    /// A station's mean SNR from its own keys: at most one of `snr_db`, `distance_m`,
    /// `position_m`, `waypoints`, `snr_trace` and `loss`; `velocity_mps` with a
    /// position. `None`: no SNR (lossless, or `loss`).
    fn station_mean(
        &self,
        key: &str,
        sta: u16,
        link: &Link,
        width: ChannelWidth,
        files: &mut TraceFiles,
    ) -> Result<Option<StationMean>, ScenarioError> {
        if link.distance_m.is_some() && (link.snr_db.is_some() || link.loss.is_some()) {
            return Err(ScenarioError::new(
                format!("{key}.distance_m"),
                "give distance_m, snr_db or loss, only one",
            ));
        }
        let given: Vec<&str> = [
            ("snr_db", link.snr_db.is_some()),
            ("distance_m", link.distance_m.is_some()),
            ("position_m", link.position_m.is_some()),
            ("waypoints", link.waypoints.is_some()),
            ("snr_trace", link.snr_trace.is_some()),
            ("loss", link.loss.is_some()),
        ]
        .into_iter()
        .filter_map(|(k, on)| on.then_some(k))
        .collect();
        if let [first, second, ..] = given[..] {
            return Err(ScenarioError::new(
                format!("{key}.{second}"),
                format!(
                    "{first} and {second} both given; give one of snr_db, distance_m, \
                     position_m, waypoints, snr_trace or loss"
                ),
            ));
        }
        if link.velocity_mps.is_some() && link.position_m.is_none() && link.distance_m.is_none() {
            return Err(ScenarioError::new(
                format!("{key}.velocity_mps"),
                "needs a starting point: give position_m (or distance_m)",
            ));
        }
        if link.snr_trace_interpolation.is_some() && link.snr_trace.is_none() {
            return Err(ScenarioError::new(
                format!("{key}.snr_trace_interpolation"),
                "applies with snr_trace only",
            ));
        }
        let ap = self.ap_position()?;
        let start = match (link.position_m, link.distance_m) {
            (Some(p), _) => Some(Self::position(&format!("{key}.position_m"), p)?),
            (None, Some(d)) => {
                // Checks the distance and the link budget as before.
                self.snr_at(&format!("{key}.distance_m"), d, width)?;
                Some(Position::new(ap.x_m + d, ap.y_m))
            }
            (None, None) => None,
        };
        if let Some(v) = link.velocity_mps {
            let vkey = format!("{key}.velocity_mps");
            let speed = v[0].hypot(v[1]);
            if !(speed.is_finite() && speed <= limits::MAX_SPEED_MPS) {
                return Err(ScenarioError::new(
                    vkey,
                    format!(
                        "the speed must be at most {} m/s (360 km/h)",
                        limits::MAX_SPEED_MPS
                    ),
                ));
            }
            self.path_loss(width)?;
            return Ok(Some(StationMean::Geometry(Mobility::ConstantVelocity {
                start: start.unwrap_or_default(),
                velocity_mps: (v[0], v[1]),
            })));
        }
        if let Some(snr_db) = link.snr_db {
            return Ok(Some(StationMean::Fixed(snr_db)));
        }
        if let Some(d) = link.distance_m {
            return Ok(Some(StationMean::Fixed(self.snr_at(
                &format!("{key}.distance_m"),
                d,
                width,
            )?)));
        }
        if let Some(p) = start {
            self.path_loss(width)?;
            return Ok(Some(StationMean::Geometry(Mobility::Still(p))));
        }
        if let Some(points) = &link.waypoints {
            let wkey = format!("{key}.waypoints");
            let max_t = limits::MAX_DURATION_S;
            let mut w = Vec::with_capacity(points.len());
            for (i, &[t_s, x, y]) in points.iter().enumerate() {
                if !(t_s.is_finite() && (0.0..=max_t).contains(&t_s)) {
                    return Err(ScenarioError::new(
                        &wkey,
                        format!("waypoint {i}: the time must be 0 to {max_t:e} s"),
                    ));
                }
                let position = Self::position(&wkey, [x, y]).map_err(|e| {
                    ScenarioError::new(&wkey, format!("waypoint {i}: {}", e.message))
                })?;
                w.push(Waypoint {
                    at: Nanos::from_secs_f64(t_s),
                    position,
                });
            }
            let m = Mobility::Waypoints(w);
            m.validate().map_err(|e| ScenarioError::new(&wkey, e))?;
            self.path_loss(width)?;
            return Ok(Some(StationMean::Geometry(m)));
        }
        if let Some(name) = &link.snr_trace {
            let (trace, shown) = self.snr_trace(
                &format!("{key}.snr_trace"),
                name,
                link.snr_trace_interpolation.as_deref(),
                sta,
                files,
            )?;
            return Ok(Some(StationMean::Trace(trace, shown)));
        }
        Ok(None)
    }

    /// Station `sta`'s channel: its mean SNR and fading, and each direction's overrides.
    /// A channel that never changes and is the same both ways is no channel at all
    /// (`StationConfig::channel` = `None`, its SNR in the error model as before).
    fn station_channel(
        &self,
        key: &str,
        sta: u16,
        link: &Link,
        width: ChannelWidth,
        files: &mut TraceFiles,
    ) -> Result<ResolvedChannel, ScenarioError> {
        let mean = self.station_mean(link.owner(key, "channel"), sta, link, width, files)?;
        let station_fading = self.fading(link.owner(key, "fading"), &link.fading)?;
        let ap = self.ap_position()?;
        let path_loss = if matches!(mean, Some(StationMean::Geometry(_))) {
            Some(self.path_loss(width)?)
        } else {
            None
        };
        // One direction: its mean (own or the station's), its fading, and a summary.
        let direction = |name: &str,
                         spec: Option<&DirectionSpec>,
                         down: bool,
                         files: &mut TraceFiles|
         -> Result<Option<(LinkChannel, String)>, ScenarioError> {
            let dkey = format!("{}.{name}", link.owner(key, name));
            let own = spec.cloned().unwrap_or_default();
            if own.snr_db.is_some() && own.snr_trace.is_some() {
                return Err(ScenarioError::new(
                    format!("{dkey}.snr_trace"),
                    "snr_db and snr_trace both given; give one",
                ));
            }
            if own.snr_trace_interpolation.is_some() && own.snr_trace.is_none() {
                return Err(ScenarioError::new(
                    format!("{dkey}.snr_trace_interpolation"),
                    "applies with snr_trace only",
                ));
            }
            let own_fading = own.fading();
            let fading = if own_fading.is_given() {
                self.fading(&dkey, &own_fading.over(&link.fading))?
            } else {
                station_fading
            };
            let own_mean = match (own.snr_db, &own.snr_trace) {
                (Some(snr_db), _) => Some(StationMean::Fixed(snr_db)),
                (None, Some(name)) => {
                    let (trace, shown) = self.snr_trace(
                        &format!("{dkey}.snr_trace"),
                        name,
                        own.snr_trace_interpolation.as_deref(),
                        sta,
                        files,
                    )?;
                    Some(StationMean::Trace(trace, shown))
                }
                (None, None) => None,
            };
            if own_mean.is_some() && link.loss.is_some() {
                return Err(ScenarioError::new(
                    format!(
                        "{dkey}.{}",
                        if own.snr_db.is_some() {
                            "snr_db"
                        } else {
                            "snr_trace"
                        }
                    ),
                    "the station has a fixed loss (loss) both ways; give it an SNR instead",
                ));
            }
            let Some(m) = own_mean.as_ref().or(mean.as_ref()) else {
                if fading != Fading::None {
                    let fkey = if own_fading.is_given() {
                        dkey
                    } else {
                        link.owner(key, "fading").to_string()
                    };
                    return Err(ScenarioError::new(
                        format!("{fkey}.fading"),
                        "fades an SNR: give snr_db, distance_m, position_m, waypoints or \
                         snr_trace (not loss)",
                    ));
                }
                return Ok(None);
            };
            let (mean_snr, what) = match m {
                StationMean::Fixed(snr_db) => (
                    MeanSnr::Fixed { snr_db: *snr_db },
                    if link.snr_from_matrix {
                        format!("SNR {snr_db:.1} dB from space.path_loss_db")
                    } else if (snr_db * 100.0).fract() == 0.0 {
                        format!("SNR {snr_db} dB")
                    } else {
                        // One worked out from a place, not written: rounded.
                        format!("SNR {snr_db:.2} dB")
                    },
                ),
                StationMean::Geometry(mobility) => {
                    let ap = Mobility::Still(ap);
                    let (tx, rx) = if down {
                        (ap, mobility.clone())
                    } else {
                        (mobility.clone(), ap)
                    };
                    let mean = MeanSnr::Geometry {
                        tx,
                        rx,
                        path_loss: path_loss.expect("a geometry has its link budget"),
                    };
                    let at0 = mean.snr_db(Nanos::ZERO);
                    (mean, format!("log-distance SNR {at0:.1} dB at 0 s"))
                }
                StationMean::Trace(trace, shown) => {
                    let p = trace.points();
                    let what = format!(
                        "SNR from {shown} ({} point{}, {} to {} s, {})",
                        p.len(),
                        if p.len() == 1 { "" } else { "s" },
                        p[0].at.as_secs_f64(),
                        p[p.len() - 1].at.as_secs_f64(),
                        trace.interpolation().name()
                    );
                    (MeanSnr::Trace(trace.clone()), what)
                }
            };
            let ch = LinkChannel::new(mean_snr, fading, self.seed, sta as u64);
            let summary = format!("{what}, {}", describe_fading(&fading));
            Ok(Some((ch, summary)))
        };
        let down = direction("downlink", link.downlink.as_ref(), true, files)?;
        let up = direction("uplink", link.uplink.as_ref(), false, files)?;
        let movement = match &mean {
            Some(StationMean::Geometry(m)) => {
                format!("{}, AP at {}; ", describe_mobility(m), xy(ap))
            }
            _ => String::new(),
        };
        let (down, up) = match (down, up) {
            (None, None) => {
                let what = match link.loss {
                    Some(p) => format!("fixed loss {p}"),
                    None => "no SNR (lossless)".into(),
                };
                return Ok(ResolvedChannel {
                    channel: None,
                    snr_db: None,
                    summary: what,
                });
            }
            (Some(d), Some(u)) => (d, u),
            (Some(_), None) | (None, Some(_)) => {
                let (has, lacks) = if link.uplink.is_none() {
                    ("downlink", "uplink")
                } else {
                    ("uplink", "downlink")
                };
                return Err(ScenarioError::new(
                    format!("{key}.{has}"),
                    format!(
                        "gives the {has} an SNR but the {lacks} has none: give {lacks}.snr_db \
                         or the station's snr_db, distance_m, position_m, waypoints or snr_trace"
                    ),
                ));
            }
        };
        let ((down, down_text), (up, up_text)) = (down, up);
        let snr0 = down.mean_snr_db(Nanos::ZERO);
        let directions = if down_text == up_text {
            format!("both ways {down_text}")
        } else {
            format!("downlink {down_text}; uplink {up_text}")
        };
        let summary = format!("{movement}{directions}");
        let unchanging = down.is_static() && up.is_static() && snr0 == up.mean_snr_db(Nanos::ZERO);
        Ok(ResolvedChannel {
            channel: (!unchanging).then_some(StationChannel { down, up }),
            snr_db: Some(snr0),
            summary,
        })
    }

    /// Whether the scenario uses the channel keys of a changing channel or rate
    /// control (then `txop show` prints each station's resolved channel).
    fn uses_channel_keys(&self) -> bool {
        // `[stations]` and its list entries have the same channel keys.
        macro_rules! uses {
            ($s:expr) => {
                $s.position_m.is_some()
                    || $s.velocity_mps.is_some()
                    || $s.waypoints.is_some()
                    || $s.fading.is_some()
                    || $s.fading_k_db.is_some()
                    || $s.coherence_ms.is_some()
                    || $s.snr_trace.is_some()
                    || $s.snr_trace_interpolation.is_some()
                    || $s.downlink.is_some()
                    || $s.uplink.is_some()
                    || $s.rate_control.is_some()
            };
        }
        self.phy.ap_position_m.is_some()
            || uses!(self.stations)
            || self.stations.list.iter().any(|e| uses!(e))
    }
}

impl Scenario {
    /// The SNR (dB) at `distance_m` from the AP: transmit power minus a log-distance
    /// path loss (free space to 1 m at the band's centre frequency, then
    /// `10·n·log10(d)`), over thermal noise in the channel width with a 7 dB noise
    /// figure. Not a fading model: one mean SNR per station.
    fn snr_at(
        &self,
        key: &str,
        distance_m: f64,
        width: ChannelWidth,
    ) -> Result<f64, ScenarioError> {
        if !(distance_m.is_finite() && distance_m > 0.0 && distance_m <= 10_000.0) {
            return Err(ScenarioError::new(
                key,
                "must be more than 0 and at most 10000 m",
            ));
        }
        let budget = self.path_loss(width)?;
        Ok(snr_at_distance(
            budget.tx_power_dbm,
            budget.exponent,
            budget.band,
            budget.width,
            distance_m,
        ))
    }

    fn width(&self) -> Result<ChannelWidth, ScenarioError> {
        match self.phy.width_mhz {
            20 => Ok(ChannelWidth::Mhz20),
            40 => Ok(ChannelWidth::Mhz40),
            80 => Ok(ChannelWidth::Mhz80),
            w => Err(ScenarioError::new(
                "phy.width_mhz",
                format!("{w} MHz is not supported (20, 40 or 80)"),
            )),
        }
    }

    /// The rates a station may use in this BSS, lowest first (for SNR-based choice).
    fn candidate_rates(&self, width: ChannelWidth, nss: u8) -> Vec<TxVector> {
        let gi = self.phy.guard_interval;
        match self.phy.standard {
            Standard::B => [1000, 2000, 5500, 11000]
                .map(|r| TxVector::Dsss {
                    rate_kbps: r,
                    preamble: if r == 1000 {
                        DsssPreamble::Long
                    } else {
                        self.phy.preamble
                    },
                })
                .to_vec(),
            Standard::A | Standard::G => [6, 9, 12, 18, 24, 36, 48, 54]
                .map(|r| TxVector::Ofdm { rate_mbps: r })
                .to_vec(),
            Standard::N => (0..8u8)
                .map(|m| TxVector::Ht {
                    mcs: m + 8 * (nss.saturating_sub(1)),
                    width,
                    gi,
                })
                .collect(),
            Standard::Ac => (0..10u8)
                .map(|mcs| TxVector::Vht {
                    mcs,
                    nss,
                    width,
                    gi,
                })
                .filter(|t| t.validate().is_ok())
                .collect(),
        }
    }

    fn tx_vector(
        &self,
        key: &str,
        l: &Link,
        width: ChannelWidth,
    ) -> Result<TxVector, ScenarioError> {
        let gi = self.phy.guard_interval;
        let std = self.phy.standard;
        let nss = l.nss.unwrap_or(1);
        let legacy = matches!(std, Standard::A | Standard::B | Standard::G);
        if legacy && l.mcs.is_some() {
            return Err(ScenarioError::new(
                format!("{key}.mcs"),
                "802.11a/b/g stations take rate_mbps, not an MCS",
            ));
        }
        if l.mcs.is_some() && l.rate_mbps.is_some() {
            return Err(ScenarioError::new(
                format!("{key}.rate_mbps"),
                "give mcs (an HT/VHT station) or rate_mbps (a legacy one), not both",
            ));
        }
        if l.nss.is_some() && std != Standard::Ac {
            return Err(ScenarioError::new(
                format!("{key}.nss"),
                "nss applies to 802.11ac only (HT MCS 8–15 are two streams)",
            ));
        }
        if l.nss.is_some() && l.rate_mbps.is_some() {
            return Err(ScenarioError::new(
                format!("{key}.nss"),
                "nss goes with mcs; a legacy (rate_mbps) station has one stream",
            ));
        }
        let dsss_bss = std == Standard::B || PhyTiming::non_erp_applies(std, self.phy.band);
        if !dsss_bss && self.phy.preamble == DsssPreamble::Short {
            return Err(ScenarioError::new(
                "phy.preamble",
                "the DSSS preamble applies to DSSS rates: 802.11b, or 802.11g/n in 2.4 GHz",
            ));
        }
        let explicit = match (std, l.rate_mbps) {
            (_, Some(r)) => Some(self.legacy_vector(key, r)?),
            (Standard::N, None) => l.mcs.map(|mcs| TxVector::Ht { mcs, width, gi }),
            (Standard::Ac, None) => l.mcs.map(|mcs| TxVector::Vht {
                mcs,
                nss,
                width,
                gi,
            }),
            (Standard::A | Standard::B | Standard::G, None) => None,
        };
        let field = if legacy || l.rate_mbps.is_some() {
            "rate_mbps"
        } else {
            "mcs"
        };
        let tx = match (explicit, l.snr_db) {
            (Some(t), _) => t,
            (None, Some(snr)) => best_rate_for_snr(&self.candidate_rates(width, nss), snr),
            (None, None) => match std {
                Standard::B => TxVector::Dsss {
                    rate_kbps: 11_000,
                    preamble: self.phy.preamble,
                },
                Standard::A | Standard::G => TxVector::Ofdm { rate_mbps: 54 },
                Standard::N => TxVector::Ht { mcs: 7, width, gi },
                Standard::Ac => TxVector::Vht {
                    mcs: 9.min(if width == ChannelWidth::Mhz20 { 8 } else { 9 }),
                    nss,
                    width,
                    gi,
                },
            },
        };
        tx.validate()
            .map_err(|e| ScenarioError::new(format!("{key}.{field}"), e))?;
        Ok(tx)
    }

    /// A station's legacy `rate_mbps`: DSSS/HR-DSSS (with `phy.preamble`) in an 802.11b
    /// BSS and, at 1, 2, 5.5 and 11 Mbit/s, in a 2.4 GHz 802.11g/n BSS (an 802.11b
    /// station: the cell turns ERP protection and the long slot on); OFDM otherwise (an
    /// 802.11a/g station, in an 802.11n/ac BSS too). The vector is validated by the
    /// caller.
    fn legacy_vector(&self, key: &str, rate_mbps: f64) -> Result<TxVector, ScenarioError> {
        let std = self.phy.standard;
        let dsss = TxVector::Dsss {
            rate_kbps: (rate_mbps * 1000.0).round() as u32,
            preamble: self.phy.preamble,
        };
        if std == Standard::B {
            return Ok(dsss);
        }
        if [1.0, 2.0, 5.5, 11.0].contains(&rate_mbps) {
            if !PhyTiming::non_erp_applies(std, self.phy.band) {
                return Err(ScenarioError::new(
                    format!("{key}.rate_mbps"),
                    format!(
                        "{rate_mbps} Mbit/s is an 802.11b (DSSS) rate: 802.11b, g and n \
                         carry it in 2.4 GHz only"
                    ),
                ));
            }
            return Ok(dsss);
        }
        Ok(TxVector::Ofdm {
            rate_mbps: if rate_mbps.fract() == 0.0 {
                rate_mbps as u32
            } else {
                0
            },
        })
    }

    /// The preset named by `stack` with `[stack_options]` applied.
    pub fn stack_config(&self) -> Result<StackConfig, ScenarioError> {
        use txop_core::mac80211::aql::{AqlEstimator, AqlParams};
        use txop_core::mac80211::classify::DscpMapping;
        use txop_core::mac80211::fq::OverloadPolicy;
        use txop_core::mac80211::scheduler::{MayTransmitAqlCheck, SchedulerKind};
        use txop_core::stack::{DriverKind, QdiscKind, QueueLimit};
        let mut c = stack::preset(&self.stack).ok_or_else(|| {
            let names: Vec<&str> = stack::PRESETS.iter().map(|(n, _)| *n).collect();
            let near = names
                .iter()
                .map(|n| (strsim::damerau_levenshtein(&self.stack, n), *n))
                .min()
                .filter(|(d, _)| *d <= 3)
                .map(|(_, n)| format!(" (did you mean `{n}`?)"))
                .unwrap_or_default();
            ScenarioError::new(
                "stack",
                format!(
                    "unknown stack `{}`{near}; expected one of {} (`txop stacks` \
                     describes them)",
                    self.stack,
                    names.join(", ")
                ),
            )
        })?;
        let o = &self.stack_options;
        let qlimit = o.qdisc_limit_packets.unwrap_or(1000);
        if let Some(q) = &o.qdisc {
            c.qdisc = match q.as_str() {
                "noqueue" => QdiscKind::NoQueue,
                "pfifo_fast" => QdiscKind::PfifoFast {
                    limit_packets: qlimit,
                },
                "fq_codel" => QdiscKind::FqCodel,
                "fifo" => QdiscKind::Fifo {
                    limit_packets: qlimit,
                },
                other => {
                    return Err(ScenarioError::new(
                        "stack_options.qdisc",
                        format!(
                            "unknown value `{other}`; expected one of noqueue, pfifo_fast, \
                         fq_codel, fifo"
                        ),
                    ))
                }
            };
        } else if let Some(l) = o.qdisc_limit_packets {
            match &mut c.qdisc {
                QdiscKind::PfifoFast { limit_packets } | QdiscKind::Fifo { limit_packets } => {
                    *limit_packets = l
                }
                _ => {
                    return Err(ScenarioError::new(
                        "stack_options.qdisc_limit_packets",
                        "this stack's qdisc has no packet limit to set",
                    ))
                }
            }
        }
        macro_rules! set {
            ($field:ident) => {
                if let Some(v) = o.$field {
                    c.$field = v;
                }
            };
        }
        set!(mac80211_txqs);
        set!(fq_flows);
        set!(fq_quantum_bytes);
        set!(fq_limit_packets);
        set!(fq_memory_limit_bytes);
        set!(codel_ecn);
        set!(per_station_codel);
        set!(airtime_flags);
        set!(quantum_shift);
        set!(driver_queue_packets);
        set!(hw_queue_ppdus);
        set!(max_ampdu_subframes);
        if let Some(v) = &o.may_transmit_aql_check {
            c.may_transmit_aql_check = choose(
                "may_transmit_aql_check",
                v,
                &[
                    ("as_written", MayTransmitAqlCheck::AsWritten),
                    ("flipped", MayTransmitAqlCheck::Flipped),
                ],
            )?;
        }
        if let Some(v) = &o.fq_overload {
            c.fq_overload = choose(
                "fq_overload",
                v,
                &[
                    ("one_from_fattest", OverloadPolicy::OneFromFattest),
                    ("half_from_fattest", OverloadPolicy::HalfFromFattest),
                ],
            )?;
        }
        for (key, v, field) in [
            ("codel_target_ms", o.codel_target_ms, &mut c.codel_target),
            (
                "codel_interval_ms",
                o.codel_interval_ms,
                &mut c.codel_interval,
            ),
        ] {
            if let Some(ms) = v {
                if !(ms.is_finite() && ms > 0.0 && ms <= 10_000.0) {
                    return Err(ScenarioError::new(
                        format!("stack_options.{key}"),
                        "must be between 0 and 10000 ms",
                    ));
                }
                *field = Nanos::from_secs_f64(ms / 1000.0);
            }
        }
        if let Some(v) = &o.dscp_mapping {
            c.dscp_mapping = choose(
                "dscp_mapping",
                v,
                &[
                    ("legacy", DscpMapping::Legacy),
                    ("rfc8325", DscpMapping::Rfc8325),
                ],
            )?;
        }
        if let Some(v) = &o.scheduler {
            c.scheduler = choose(
                "scheduler",
                v,
                &[
                    ("round_robin", SchedulerKind::RoundRobin),
                    ("ath9k_drr", SchedulerKind::Ath9kDrr),
                    ("drr", SchedulerKind::Drr),
                    ("virtual_time", SchedulerKind::VirtualTime),
                    ("drr_aql", SchedulerKind::DrrAql),
                ],
            )?;
        }
        if let Some(v) = &o.driver {
            c.driver = choose(
                "driver",
                v,
                &[
                    ("ath9k", DriverKind::Ath9k),
                    ("firmware", DriverKind::Firmware),
                ],
            )?;
        }
        let (mut params, mut estimator) = match c.queue_limit {
            QueueLimit::Aql { params, estimator } => (params, estimator),
            _ => (AqlParams::default(), AqlEstimator::AggShift),
        };
        if let Some(v) = o.aql_limit_low_us {
            params.limit_low_us = [v; 4];
        }
        if let Some(v) = o.aql_limit_high_us {
            params.limit_high_us = [v; 4];
        }
        if let Some(v) = o.aql_threshold_us {
            params.threshold_us = v;
        }
        if let Some(v) = o.aql_per_ac_limit {
            params.per_ac_limit = v;
        }
        if let Some(v) = &o.aql_estimator {
            estimator = choose(
                "aql_estimator",
                v,
                &[
                    ("no_aggregation", AqlEstimator::NoAggregation),
                    ("div16", AqlEstimator::Div16),
                    ("agg_shift", AqlEstimator::AggShift),
                ],
            )?;
        }
        let kind = match &o.queue_limit {
            Some(v) => choose("queue_limit", v, &[("none", 0), ("aql", 1), ("dql", 2)])?,
            None => match c.queue_limit {
                QueueLimit::None => 0,
                QueueLimit::Aql { .. } => 1,
                QueueLimit::Dql => 2,
            },
        };
        c.queue_limit = match kind {
            0 => QueueLimit::None,
            1 => QueueLimit::Aql { params, estimator },
            _ => QueueLimit::Dql,
        };
        if matches!(c.queue_limit, QueueLimit::Aql { .. }) && !c.mac80211_txqs {
            return Err(ScenarioError::new(
                "stack_options.queue_limit",
                "AQL works at mac80211's TXQs: it needs mac80211_txqs = true",
            ));
        }
        if c.airtime_flags > limits::MAX_AIRTIME_FLAGS {
            return Err(ScenarioError::new(
                "stack_options.airtime_flags",
                "must be 0 to 3 (1: TX airtime, 2: RX airtime, 3: both)",
            ));
        }
        if c.quantum_shift > limits::MAX_QUANTUM_SHIFT {
            return Err(ScenarioError::new(
                "stack_options.quantum_shift",
                format!("must be 0 to {}", limits::MAX_QUANTUM_SHIFT),
            ));
        }
        if c.driver_queue_packets == 0 || c.max_ampdu_subframes == 0 {
            return Err(ScenarioError::new(
                "stack_options",
                "driver_queue_packets and max_ampdu_subframes must be at least 1",
            ));
        }
        if c.hw_queue_ppdus == 0 && c.mac80211_txqs && c.driver == DriverKind::Ath9k {
            return Err(ScenarioError::new(
                "stack_options.hw_queue_ppdus",
                "ath9k pulls from mac80211's TXQs into its hardware queue: it needs at least 1",
            ));
        }
        if c.fq_flows == 0 || c.fq_quantum_bytes == 0 || c.fq_limit_packets == 0 {
            return Err(ScenarioError::new(
                "stack_options",
                "fq_flows, fq_quantum_bytes and fq_limit_packets must be at least 1",
            ));
        }
        Ok(c)
    }

    /// The page load of `[traffic.web]`.
    fn web_flow(&self, w: &WebSpec, stations: u16) -> Result<Flow, ScenarioError> {
        let key = |k: &str| format!("traffic.web.{k}");
        if w.station == 0 || w.station > stations {
            return Err(ScenarioError::new(
                key("station"),
                format!("no station {} in this cell", w.station),
            ));
        }
        if w.connections == 0 || w.connections > 64 {
            return Err(ScenarioError::new(key("connections"), "must be 1 to 64"));
        }
        if !(w.start_s.is_finite() && w.start_s >= 0.0) {
            return Err(ScenarioError::new(
                key("start_s"),
                "must be 0 or more seconds",
            ));
        }
        let mut page = WebPage::seed_page(Host::Station(w.station), w.connections, 0x7765_6200);
        if let Some(objects) = &w.objects_bytes {
            if objects.is_empty() || objects.contains(&0) {
                return Err(ScenarioError::new(
                    key("objects_bytes"),
                    "needs at least one object, none empty",
                ));
            }
            page.objects_bytes = objects.clone();
        }
        page.start = Nanos::from_secs_f64(w.start_s);
        if let Some(r) = w.repeat_after_s {
            if !(r.is_finite() && r >= 0.0) {
                return Err(ScenarioError::new(
                    key("repeat_after_s"),
                    "must be 0 or more seconds",
                ));
            }
            page.repeat_after = Some(Nanos::from_secs_f64(r));
        }
        Ok(Flow::Web(page))
    }

    /// The flent test of `[traffic]`.
    /// The host named `name` in `[[flows]]`.
    fn host(key: &str, name: &str, stations: u16) -> Result<Host, ScenarioError> {
        match name {
            "server" => Ok(Host::Server),
            "ap" | "AP" => Ok(Host::Ap),
            _ => match name.strip_prefix("sta").and_then(|n| n.parse::<u16>().ok()) {
                Some(n) if (1..=stations).contains(&n) => Ok(Host::Station(n)),
                Some(n) => Err(ScenarioError::new(
                    key,
                    format!("no station {n} (the cell has {stations})"),
                )),
                None => Err(ScenarioError::new(
                    key,
                    format!("unknown host `{name}`; expected server, ap or sta1…sta{stations}"),
                )),
            },
        }
    }

    /// `[[flows]]` entry `i` as a simulator flow.
    fn explicit_flow(&self, i: usize, f: &FlowSpec, stations: u16) -> Result<Flow, ScenarioError> {
        let key = |k: &str| format!("flows[{i}].{k}");
        let from = Self::host(&key("from"), &f.from, stations)?;
        let to = Self::host(&key("to"), &f.to, stations)?;
        if matches!(from, Host::Station(_)) == matches!(to, Host::Station(_)) {
            return Err(ScenarioError::new(
                key("to"),
                "must be across the air from `from` (one end a station, the other the AP side)",
            ));
        }
        if !(f.start_s.is_finite() && f.start_s >= 0.0) {
            return Err(ScenarioError::new(
                key("start_s"),
                "must be 0 or more seconds",
            ));
        }
        let start = Nanos::from_secs_f64(f.start_s);
        let stop = match f.stop_s {
            Some(s) if !(s.is_finite() && s > f.start_s) => {
                return Err(ScenarioError::new(key("stop_s"), "must be after start_s"))
            }
            s => s.map(Nanos::from_secs_f64),
        };
        if f.dscp > 63 {
            return Err(ScenarioError::new(key("dscp"), "must be 0–63"));
        }
        let hash = (txop_core::rng::mix64(0x666c_6f77 ^ i as u64) >> 32) as u32;
        let size = |default: u32, min: u32| -> Result<u32, ScenarioError> {
            match f.packet_bytes.unwrap_or(default) {
                b if (min..=7_900).contains(&b) => Ok(b),
                _ => Err(ScenarioError::new(
                    key("packet_bytes"),
                    format!("must be {min} to 7900 bytes"),
                )),
            }
        };
        let unused = |name: &str, given: bool| -> Result<(), ScenarioError> {
            if given {
                return Err(ScenarioError::new(
                    key(name),
                    format!("does not apply to a {:?} flow", f.kind).to_lowercase(),
                ));
            }
            Ok(())
        };
        unused(
            "rate_mbps",
            f.rate_mbps.is_some() && f.kind != FlowKind::Cbr,
        )?;
        unused("bytes", f.bytes.is_some() && f.kind != FlowKind::Tcp)?;
        unused("cc", f.cc.is_some() && f.kind != FlowKind::Tcp)?;
        unused("ecn", f.ecn && f.kind != FlowKind::Tcp)?;
        unused(
            "interval_ms",
            f.interval_ms.is_some() && !matches!(f.kind, FlowKind::Ping | FlowKind::UdpPing),
        )?;
        Ok(match f.kind {
            FlowKind::Tcp => {
                unused("packet_bytes", f.packet_bytes.is_some())?;
                let mut t = TcpFlow::bulk(from, to, hash);
                t.start = start;
                t.stop = stop;
                t.dscp = f.dscp;
                t.bytes = f.bytes;
                t.cfg.ecn = f.ecn;
                t.cfg.cc = choose_in(
                    &key("cc"),
                    f.cc.as_deref().unwrap_or("cubic"),
                    &[
                        ("cubic", CongestionControl::Cubic),
                        ("newreno", CongestionControl::NewReno),
                        ("bbr", CongestionControl::Bbr),
                    ],
                )?;
                Flow::Tcp(t)
            }
            FlowKind::Ping | FlowKind::UdpPing => {
                let mut p = if f.kind == FlowKind::Ping {
                    Ping::new(from, to, hash)
                } else {
                    Ping::irtt(from, to, hash)
                };
                if let Some(ms) = f.interval_ms {
                    p.interval = interval(&key("interval_ms"), ms)?;
                }
                p.len_bytes = size(p.len_bytes, 28)?;
                p.start = start;
                p.stop = stop;
                p.dscp = f.dscp;
                Flow::Ping(p)
            }
            FlowKind::Cbr => {
                if stop.is_some() {
                    return Err(ScenarioError::new(
                        key("stop_s"),
                        "constant-rate flows run to the end",
                    ));
                }
                let Some(rate) = f.rate_mbps else {
                    return Err(ScenarioError::new(
                        key("rate_mbps"),
                        "a cbr flow needs its rate",
                    ));
                };
                let len_bytes = size(1500, 1)?;
                Flow::Cbr(Cbr {
                    src: from.node(),
                    dst: to.node(),
                    len_bytes,
                    tid: 0,
                    dscp: f.dscp,
                    rate_bps: cbr_rate_bps(&key("rate_mbps"), rate, len_bytes)?,
                    start,
                    flow_hash: hash,
                })
            }
        })
    }

    fn flent_test(&self, name: &str) -> Result<FlentTest, ScenarioError> {
        let t = &self.traffic;
        let mut f = FlentTest::new(name);
        for (key, v) in [("length_s", t.length_s), ("delay_s", t.delay_s)] {
            if !(v.is_finite() && (0.0..=100_000.0).contains(&v)) {
                return Err(ScenarioError::new(
                    format!("traffic.{key}"),
                    "must be 0 to 100000 seconds",
                ));
            }
        }
        // Checked here, not in the test's own check, so that the error names the key.
        if t.streams == 0 || t.streams > 1000 {
            return Err(ScenarioError::new("traffic.streams", "must be 1 to 1000"));
        }
        f.length = Nanos::from_secs_f64(t.length_s);
        f.delay = Nanos::from_secs_f64(t.delay_s);
        f.streams = t.streams;
        f.station = t.station;
        f.ecn = t.ecn;
        f.cc = choose_in(
            "traffic.cc",
            &t.cc,
            &[
                ("cubic", CongestionControl::Cubic),
                ("newreno", CongestionControl::NewReno),
                ("bbr", CongestionControl::Bbr),
            ],
        )?;
        Ok(f)
    }

    /// All open-loop sources together offer at most
    /// [`limits::MAX_OFFERED_PACKETS_PER_S`]; the error names the key whose flows offer
    /// the most (each source is within its own key's range already, but thousands of
    /// them may not be). `bulk_flows`: how many of `[traffic]`'s flows precede its
    /// probes when neither `[[flows]]` nor a flent test replaced them.
    fn check_offered_packets(
        &self,
        flows: &[Flow],
        bulk_flows: usize,
    ) -> Result<(), ScenarioError> {
        let total: f64 = flows.iter().map(offered_packets_per_s).sum();
        if total <= limits::MAX_OFFERED_PACKETS_PER_S {
            return Ok(());
        }
        // Whose flows these are: [[flows]] entries one by one, or [traffic]'s.
        let mut by_key: Vec<(String, f64)> = Vec::new();
        for (i, flow) in flows.iter().enumerate() {
            let key = if !self.flows.is_empty() {
                // [[flows]] entry i is flow i (a web page after them offers nothing).
                match flow {
                    Flow::Cbr(_) => format!("flows[{i}].rate_mbps"),
                    _ => format!("flows[{i}].interval_ms"),
                }
            } else if self.traffic.test.is_some() {
                "traffic.test".to_string()
            } else if i < bulk_flows {
                "traffic.rate_mbps".to_string()
            } else {
                "traffic.probe_interval_ms".to_string()
            };
            let pps = offered_packets_per_s(flow);
            match by_key.iter_mut().find(|(k, _)| *k == key) {
                Some((_, sum)) => *sum += pps,
                None => by_key.push((key, pps)),
            }
        }
        let key = by_key
            .iter()
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map_or(String::new(), |(k, _)| k.clone());
        Err(ScenarioError::new(
            key,
            format!(
                "the flows would offer {total:.3e} packets per simulated second in all; \
                 at most {:.0e} (lower the rate, lengthen the interval or use fewer flows)",
                limits::MAX_OFFERED_PACKETS_PER_S
            ),
        ))
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
        let mut stations = Vec::new();
        let mut scans = Vec::new();
        let mut power_save = Vec::new();
        let mut buses = Vec::new();
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
            let rate_control = choose_in(
                &format!("{}.rate_control", link.owner(&key, "rate_control")),
                link.rate_control.as_deref().unwrap_or("fixed"),
                &RateControlKind::NAMES,
            )?;
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
            let weight = link.weight.unwrap_or(256);
            if weight == 0 {
                return Err(ScenarioError::new(
                    format!("{}.weight", link.owner(&key, "weight")),
                    "must be 1 to 65535",
                ));
            }
            summaries.push(format!(
                "{}; rate control {}{}",
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
        let m = &self.mac;
        let mut cell = if m.qos {
            CellConfig::new(std, self.phy.band, stations)
        } else {
            CellConfig::legacy_dcf(std, self.phy.band, stations)
        };
        if let Some(rule) = m.backoff_rule {
            cell.backoff_rule = rule;
        }
        cell.aggregation = m.qos && m.aggregation && matches!(std, Standard::N | Standard::Ac);
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
        let t = &self.traffic;
        if t.tid > 7 {
            return Err(ScenarioError::new("traffic.tid", "must be 0–7"));
        }
        if t.packet_bytes == 0 || t.packet_bytes > 7_900 {
            return Err(ScenarioError::new(
                "traffic.packet_bytes",
                "must be 1 to 7900 bytes (an MSDU)",
            ));
        }
        if t.depth > limits::MAX_DEPTH_PACKETS {
            return Err(ScenarioError::new(
                "traffic.depth",
                format!(
                    "must be 0 (automatic) to {} packets",
                    limits::MAX_DEPTH_PACKETS
                ),
            ));
        }
        let depth = if t.depth > 0 {
            t.depth
        } else if cell.aggregation {
            2 * cell.max_ampdu_subframes as u32
        } else {
            4
        };
        if t.dscp > 63 {
            return Err(ScenarioError::new("traffic.dscp", "must be 0–63"));
        }
        let cbr_rate_bps = match t.kind {
            TrafficKind::Cbr => cbr_rate_bps("traffic.rate_mbps", t.rate_mbps, t.packet_bytes)?,
            TrafficKind::Saturated => 0,
        };
        if t.probe_interval_ms != 0.0 {
            interval("traffic.probe_interval_ms", t.probe_interval_ms).map_err(|e| {
                ScenarioError::new(e.key, format!("must be 0 (none) or {}", interval_range()))
            })?;
        }
        if t.probe_interval_ms > 0.0 && (t.probe_bytes == 0 || t.probe_bytes > 7_900) {
            return Err(ScenarioError::new(
                "traffic.probe_bytes",
                "must be 1 to 7900 bytes",
            ));
        }
        let n = cell.stations.len() as u16;
        let mut pairs = Vec::new();
        for i in 1..=n {
            let sta = NodeId(i);
            if matches!(t.direction, Direction::Downlink | Direction::Both) {
                pairs.push((NodeId::AP, sta));
            }
            if matches!(t.direction, Direction::Uplink | Direction::Both) {
                pairs.push((sta, NodeId::AP));
            }
        }
        let hash = |k: u64| (txop_core::rng::mix64(k ^ 0x7478_6f70) >> 32) as u32;
        let mut flows = Vec::new();
        for &(src, dst) in &pairs {
            let index = flows.len() as u64;
            flows.push(match t.kind {
                TrafficKind::Saturated => Flow::Saturated(Saturated {
                    src,
                    dst,
                    len_bytes: t.packet_bytes,
                    tid: t.tid,
                    depth,
                }),
                TrafficKind::Cbr => {
                    let cbr = Cbr {
                        src,
                        dst,
                        len_bytes: t.packet_bytes,
                        tid: t.tid,
                        dscp: t.dscp,
                        rate_bps: cbr_rate_bps,
                        start: Nanos::ZERO,
                        flow_hash: hash(index),
                    };
                    // Independent senders: spread the flows' phases over one interval so
                    // that no flow always arrives first at a shared queue.
                    let phase = cbr.interval().as_ns() * index / pairs.len() as u64;
                    Flow::Cbr(Cbr {
                        start: Nanos(phase),
                        ..cbr
                    })
                }
            });
        }
        if t.probe_interval_ms > 0.0 {
            let interval_s = t.probe_interval_ms / 1000.0;
            for (k, &(src, dst)) in pairs.iter().enumerate() {
                let index = flows.len() as u64;
                flows.push(Flow::Cbr(Cbr {
                    src,
                    dst,
                    len_bytes: t.probe_bytes,
                    tid: t.tid,
                    dscp: t.dscp,
                    rate_bps: ((t.probe_bytes as f64 * 8.0) / interval_s).max(1.0) as u64,
                    // Spread the probes' phases so they do not all arrive together.
                    start: Nanos::from_secs_f64(interval_s * (k as f64 + 0.5) / pairs.len() as f64),
                    flow_hash: hash(index),
                }));
            }
        }
        let mut duration = Nanos::from_secs_f64(self.duration_s.unwrap_or(10.0));
        if let Some(name) = &t.test {
            let test = self.flent_test(name)?;
            if t.station == 0 || t.station > n {
                return Err(ScenarioError::new(
                    "traffic.station",
                    format!("no station {} in this cell (1 to {n})", t.station),
                ));
            }
            flows = test
                .flows(n)
                .map_err(|e| ScenarioError::new("traffic.test", e))?;
            if self.duration_s.is_none() {
                duration = test.total();
            }
        }
        if !self.flows.is_empty() {
            if t.test.is_some() {
                return Err(ScenarioError::new(
                    "flows",
                    "give either [[flows]] or traffic.test, not both",
                ));
            }
            flows = self
                .flows
                .iter()
                .enumerate()
                .map(|(i, f)| self.explicit_flow(i, f, n))
                .collect::<Result<_, _>>()?;
        }
        if let Some(web) = &t.web {
            flows.push(self.web_flow(web, n)?);
        }
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
        self.check_offered_packets(&flows, pairs.len())?;
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
        };
        for (sta, bus) in buses {
            cfg = cfg.with_host_bus(sta, bus);
        }
        let mut summary = self
            .uses_channel_keys()
            .then(|| channel_summary(&summaries));
        if let Some(sp) = &cfg.cell.space {
            let map = RadioMap::new(sp, cfg.cell.band, ChannelWidth::Mhz20);
            let text = space::summary(sp, &map);
            summary = Some(match summary {
                Some(channels) => format!("{channels}{text}"),
                None => text,
            });
        }
        Ok((cfg, summary))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str, sets: &[(&str, &str)]) -> String {
        let sets: Vec<(String, String)> = sets
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        match parse(text, &sets).and_then(|s| s.resolve().map(|_| ())) {
            Ok(()) => panic!("expected an error"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn defaults_resolve() {
        let s = parse("", &[]).unwrap();
        let cfg = s.resolve().unwrap();
        assert_eq!(cfg.cell.stations.len(), 1);
        assert_eq!(cfg.flows.len(), 1);
    }

    #[test]
    fn overrides_set_nested_keys_and_types() {
        let sets = vec![
            ("stations.count".to_string(), "20".to_string()),
            ("phy.standard".to_string(), "ac".to_string()),
            ("phy.width_mhz".to_string(), "80".to_string()),
            ("traffic.direction".to_string(), "both".to_string()),
        ];
        let s = parse("[stations]\ncount = 2\n", &sets).unwrap();
        let cfg = s.resolve().unwrap();
        assert_eq!(cfg.cell.stations.len(), 20);
        assert_eq!(cfg.flows.len(), 40);
    }

    #[test]
    fn unknown_key_names_path_and_suggests() {
        let e = err("[stations]\ncout = 3\n", &[]);
        assert_eq!(e, "stations.cout: unknown key (did you mean `count`?)");
        let e = err("", &[("phy.standrd", "n")]);
        assert!(e.contains("did you mean `standard`"), "{e}");
    }

    #[test]
    fn wrong_type_names_key() {
        let e = err("[stations]\ncount = \"many\"\n", &[]);
        assert!(e.starts_with("stations.count: invalid type"), "{e}");
    }

    #[test]
    fn impossible_values_name_the_key() {
        assert!(err("[stations]\nmcs = 16\n", &[]).starts_with("stations.mcs:"));
        let e = err(
            "[phy]\nstandard = \"ac\"\nwidth_mhz = 20\n[stations]\nmcs = 9\n",
            &[],
        );
        assert!(e.starts_with("stations.mcs:") && e.contains("MCS 9"), "{e}");
        let e = err("[phy]\nstandard = \"ac\"\nband = \"2.4\"\n", &[]);
        assert!(e.starts_with("phy.band:"), "{e}");
        assert!(err("[stations]\nloss = 1.5\n", &[]).starts_with("stations.loss:"));
        assert!(err("duration_s = -1\n", &[]).starts_with("duration_s:"));
        assert!(
            err("[phy]\nstandard = \"a\"\n[stations]\nmcs = 3\n", &[]).starts_with("stations.mcs:")
        );
        let e = err(
            "[[stations.list]]\nmcs = 3\n[[stations.list]]\nmcs = 20\n",
            &[],
        );
        assert!(e.starts_with("stations.list[1].mcs:"), "{e}");
    }

    #[test]
    fn station_list_expands_counts_and_inherits() {
        let text = "[stations]\nsnr_db = 40\n[[stations.list]]\ncount = 29\nmcs = 7\n\
                    [[stations.list]]\nmcs = 0\n";
        let cfg = parse(text, &[]).unwrap().resolve().unwrap();
        assert_eq!(cfg.cell.stations.len(), 30);
        assert_eq!(
            cfg.cell.stations[29].tx,
            TxVector::Ht {
                mcs: 0,
                width: ChannelWidth::Mhz20,
                gi: GuardInterval::Long
            }
        );
        assert_eq!(cfg.cell.stations[0].error, ErrorModel::Snr { snr_db: 40.0 });
    }

    #[test]
    fn snr_without_rate_picks_a_rate() {
        let cfg = parse("[stations]\nsnr_db = 5\n", &[])
            .unwrap()
            .resolve()
            .unwrap();
        // HT MCS0 needs 4 dB for 10 % PER on 1000 B; MCS1 needs 7 dB.
        assert_eq!(
            cfg.cell.stations[0].tx,
            TxVector::Ht {
                mcs: 0,
                width: ChannelWidth::Mhz20,
                gi: GuardInterval::Long
            }
        );
    }

    #[test]
    fn explicit_flows_resolve_and_replace_the_bulk_traffic() {
        let text = "[stations]\ncount = 2\n\
            [[flows]]\nkind = \"ping\"\nfrom = \"sta1\"\nto = \"server\"\ninterval_ms = 1000\n\
            [[flows]]\nkind = \"tcp\"\nfrom = \"server\"\nto = \"sta2\"\nstart_s = 5\ncc = \"newreno\"\n\
            [[flows]]\nkind = \"cbr\"\nfrom = \"ap\"\nto = \"sta1\"\nrate_mbps = 2\n";
        let cfg = parse(text, &[]).unwrap().resolve().unwrap();
        assert_eq!(cfg.flows.len(), 3);
        match &cfg.flows[0] {
            Flow::Ping(p) => {
                assert_eq!((p.from, p.to), (Host::Station(1), Host::Server));
                assert_eq!(p.interval, Nanos::from_ms(1000));
            }
            f => panic!("{f:?}"),
        }
        match &cfg.flows[1] {
            Flow::Tcp(t) => {
                assert_eq!(t.start, Nanos::from_secs(5));
                assert_eq!(t.cfg.cc, CongestionControl::NewReno);
                assert_eq!(t.receiver, Host::Station(2));
            }
            f => panic!("{f:?}"),
        }
        assert!(matches!(&cfg.flows[2], Flow::Cbr(c) if c.rate_bps == 2_000_000));
    }

    #[test]
    fn bbr_is_a_choice_of_cc() {
        let text = "[stations]\ncount = 1\n[traffic]\ntest = \"tcp_ndown\"\n";
        let set = [("traffic.cc".to_string(), "bbr".to_string())];
        let cfg = parse(text, &set).unwrap().resolve().unwrap();
        let tcp: Vec<_> = cfg
            .flows
            .iter()
            .filter_map(|f| match f {
                Flow::Tcp(t) => Some(t.cfg.cc),
                _ => None,
            })
            .collect();
        assert_eq!(tcp, vec![CongestionControl::Bbr; 4]);
        let text = "[stations]\ncount = 1\n[[flows]]\nkind = \"tcp\"\nfrom = \"server\"\n\
            to = \"sta1\"\ncc = \"bbr\"\n";
        let cfg = parse(text, &[]).unwrap().resolve().unwrap();
        assert!(matches!(&cfg.flows[0], Flow::Tcp(t) if t.cfg.cc == CongestionControl::Bbr));
    }

    #[test]
    fn explicit_flow_errors_name_the_entry_and_key() {
        let flow = |body: &str| format!("[stations]\ncount = 2\n[[flows]]\n{body}\n");
        let e = err(
            &flow("kind = \"ping\"\nfrom = \"sta3\"\nto = \"server\""),
            &[],
        );
        assert_eq!(e, "flows[0].from: no station 3 (the cell has 2)");
        let e = err(
            &flow("kind = \"ping\"\nfrom = \"sta1\"\nto = \"sta2\""),
            &[],
        );
        assert!(e.starts_with("flows[0].to: must be across the air"), "{e}");
        let e = err(
            &flow("kind = \"ping\"\nfrom = \"sta1\"\nto = \"server\"\nrate_mbps = 3"),
            &[],
        );
        assert_eq!(e, "flows[0].rate_mbps: does not apply to a ping flow");
        let e = err(
            &flow("kind = \"tcp\"\nfrom = \"server\"\nto = \"sta1\"\nstart_s = 5\nstop_s = 2"),
            &[],
        );
        assert_eq!(e, "flows[0].stop_s: must be after start_s");
        let e = err(
            &flow("kind = \"quic\"\nfrom = \"server\"\nto = \"sta1\""),
            &[],
        );
        assert!(e.starts_with("flows[0].kind"), "{e}");
    }
    fn resolved(text: &str) -> SimConfig {
        parse(text, &[]).unwrap().resolve().unwrap()
    }

    #[test]
    fn scan_power_save_bus_and_beacon_keys_resolve() {
        let cfg = resolved(
            "[mac]\nbeacon_interval_tu = 50\ndtim_period = 3\nbeacons = true\n\
             [stations]\nscan = { policy = \"legacy\", bands = 5, pause_s = 2 }\n\
             power_save = {}\nbus = \"sdio-generic\"\n",
        );
        let c = &cfg.cell;
        assert_eq!(
            (c.beacon_interval_tu, c.dtim_period, c.beacons),
            (50, 3, true)
        );
        // The scan table's defaults are the model's ath9k-class ones, from 1 s.
        let scan = ScanConfig::periodic(
            ScanPolicy::Legacy,
            ScanBands::Ghz5,
            Nanos::from_secs(1),
            Nanos::from_secs(2),
        );
        assert_eq!(
            c.station_scans,
            vec![StationScan {
                station: StationId(1),
                scan
            }]
        );
        assert_eq!(
            c.station_power_save,
            vec![StationPowerSave {
                station: StationId(1),
                power_save: PowerSaveConfig::default()
            }]
        );
        assert_eq!(cfg.host_bus, vec![Some(BusConfig::sdio_generic())]);
        // Without any of them: nobody scans, dozes or has a bus; hostapd's beacons.
        let cfg = resolved("");
        assert!(cfg.cell.station_scans.is_empty() && cfg.cell.station_power_save.is_empty());
        assert!(cfg.host_bus.iter().all(|b| b.is_none()));
        assert_eq!(
            (cfg.cell.beacon_interval_tu, cfg.cell.dtim_period),
            (100, 2)
        );
    }

    #[test]
    fn station_machinery_is_inherited_and_overridden_per_entry() {
        let cfg = resolved(
            "[stations]\nscan = { policy = \"bounded\", low_priority = true }\n\
             [[stations.list]]\ncount = 2\n\
             [[stations.list]]\nscan = { policy = \"legacy\", repeat = false, channel_switch_ms = 2.5 }\n\
             power_save = { dynamic_timeout_ms = 50, ps_poll = true, wake_every_beacons = 2 }\n\
             bus = { preset = \"sdio-vendor\", clock_hz = 50000000, completion = \"polled\", poll_jiffy_ms = 1 }\n",
        );
        let scans = &cfg.cell.station_scans;
        assert_eq!(
            scans.iter().map(|s| s.station).collect::<Vec<_>>(),
            [StationId(1), StationId(2), StationId(3)]
        );
        assert!(scans[0].scan.low_priority && scans[1].scan.policy == ScanPolicy::Bounded);
        let third = &scans[2].scan;
        assert_eq!(third.policy, ScanPolicy::Legacy);
        assert!(
            !third.low_priority,
            "an entry's table replaces the inherited one"
        );
        assert_eq!(third.pause, None);
        assert_eq!(third.channel_switch, Nanos::from_us(2500));
        assert_eq!(
            cfg.cell.station_power_save,
            vec![StationPowerSave {
                station: StationId(3),
                power_save: PowerSaveConfig {
                    dynamic_timeout: Nanos::from_ms(50),
                    ps_poll: true,
                    wake_every_beacons: 2
                }
            }]
        );
        let bus = cfg.host_bus[2].expect("station 3 has a bus");
        assert_eq!(bus.clock_hz, 50_000_000);
        // Polled with the given tick and Linux's 2-tick idle sleep; still DMA.
        assert_eq!(
            bus.completion,
            Completion::Polled {
                jiffy: Nanos::from_ms(1),
                idle_period_jiffies: 2
            }
        );
        assert_eq!(bus.data, DataMode::Dma);
        assert_eq!(bus.block_gap_ns, BusConfig::sdio_vendor().block_gap_ns);
        assert!(cfg.host_bus[0].is_none() && cfg.host_bus[1].is_none());
    }

    #[test]
    fn station_machinery_errors_name_the_key() {
        let e = err("[stations]\nscan = { policy = \"fast\" }\n", &[]);
        assert_eq!(
            e,
            "stations.scan.policy: unknown value `fast`; expected one of legacy, bounded"
        );
        let e = err(
            "[[stations.list]]\n[[stations.list]]\nscan = { bands = 6 }\n",
            &[],
        );
        assert!(
            e.starts_with("stations.list[1].scan.bands: unknown value `6`"),
            "{e}"
        );
        let e = err("[stations]\nscan = { pause_s = 0 }\n", &[]);
        assert!(e.starts_with("stations.scan.pause_s:"), "{e}");
        let e = err(
            "[stations]\nscan = { policy = \"legacy\", low_priority = true }\n",
            &[],
        );
        assert!(e.starts_with("stations.scan.low_priority:"), "{e}");
        let e = err("[stations]\nscan = { listen_interval = 0 }\n", &[]);
        assert!(e.starts_with("stations.scan.listen_interval:"), "{e}");
        let e = err("[stations]\nscan = { chanel_switch_ms = 1 }\n", &[]);
        assert_eq!(
            e,
            "stations.scan.chanel_switch_ms: unknown key (did you mean `channel_switch_ms`?)"
        );
        let e = err("[stations]\npower_save = { wake_every_beacons = 0 }\n", &[]);
        assert!(
            e.starts_with("stations.power_save.wake_every_beacons:"),
            "{e}"
        );
        let e = err(
            "[stations]\npower_save = { dynamic_timeout_ms = 0.5 }\n",
            &[],
        );
        assert!(
            e.starts_with("stations.power_save.dynamic_timeout_ms:"),
            "{e}"
        );
        let e = err("[stations]\nbus = \"sdio-fast\"\n", &[]);
        assert_eq!(
            e,
            "stations.bus: unknown bus `sdio-fast`; expected one of sdio-vendor, sdio-generic"
        );
        let e = err(
            "[stations]\nbus = { preset = \"pcie\", clock_hz = 1 }\n",
            &[],
        );
        assert!(
            e.starts_with("stations.bus.preset: unknown bus `pcie`"),
            "{e}"
        );
        let e = err(
            "[stations]\nbus = { preset = \"sdio-vendor\", clock_mhz = 50 }\n",
            &[],
        );
        assert_eq!(
            e,
            "stations.bus.clock_mhz: unknown key (did you mean `clock_hz`?)"
        );
        let e = err(
            "[stations]\nbus = { preset = \"sdio-vendor\", width_bits = 3 }\n",
            &[],
        );
        assert!(
            e.starts_with("stations.bus: ") && e.contains("width_bits"),
            "{e}"
        );
        let e = err(
            "[stations]\nbus = { preset = \"sdio-vendor\", poll_jiffy_ms = 5 }\n",
            &[],
        );
        assert!(
            e.starts_with("stations.bus.poll_jiffy_ms: applies to"),
            "{e}"
        );
        let e = err(
            "[stations]\nbus = { preset = \"sdio-vendor\", data = \"mmio\" }\n",
            &[],
        );
        assert!(
            e.starts_with("stations.bus.data: unknown value `mmio`"),
            "{e}"
        );
        let e = err("[stations]\nbus = 4\n", &[]);
        assert_eq!(
            e,
            "stations.bus: unknown bus `4`; expected one of sdio-vendor, sdio-generic"
        );
        assert!(err("[mac]\ndtim_period = 0\n", &[]).starts_with("mac.dtim_period:"));
        assert!(err("[mac]\nbeacon_interval_tu = 0\n", &[]).starts_with("mac.beacon_interval_tu:"));
        // --set reaches inside the tables.
        let e = err(
            "[stations]\nscan = {}\n",
            &[("stations.scan.policy", "sometimes")],
        );
        assert!(e.starts_with("stations.scan.policy:"), "{e}");
    }

    /// What `txop show` prints parses back to the same configuration.
    #[test]
    fn station_machinery_round_trips_through_toml() {
        let text = "[stations]\nscan = { policy = \"legacy\" }\nbus = \"sdio-vendor\"\n\
                    [[stations.list]]\n[[stations.list]]\npower_save = { ps_poll = true }\n\
                    bus = { preset = \"sdio-generic\", device_rx_buffers = 8 }\n";
        let s = parse(text, &[]).unwrap();
        let shown = toml::to_string_pretty(&s).unwrap();
        assert!(shown.contains("bus = \"sdio-vendor\""), "{shown}");
        let again = parse(&shown, &[]).unwrap();
        assert_eq!(
            format!("{:?}", s.resolve().unwrap()),
            format!("{:?}", again.resolve().unwrap())
        );
        assert_eq!(
            again.resolve().unwrap().host_bus[1]
                .unwrap()
                .device_rx_buffers,
            8
        );
    }

    /// The log-distance SNR against a hand calculation: 5 GHz (5.2 GHz centre), 20 MHz,
    /// 20 dBm, n = 3.5, 10 m: 20 − (46.77 + 35) − (−174 + 73.01 + 7) = 32.22 dB; and
    /// 2.4 GHz, 40 MHz, 30 m: 20 − (40.18 + 51.70) − (−174 + 76.02 + 7) = 19.10 dB.
    #[test]
    fn distance_gives_the_log_distance_snr() {
        let five = snr_at_distance(20.0, 3.5, Band::Ghz5, ChannelWidth::Mhz20, 10.0);
        assert!((five - 32.22).abs() < 0.01, "{five}");
        let two = snr_at_distance(20.0, 3.5, Band::Ghz2_4, ChannelWidth::Mhz40, 30.0);
        assert!((two - 19.10).abs() < 0.01, "{two}");
        // Nearer is never worse; the best rate follows the SNR.
        let cfg = parse(
            "[stations]\n[[stations.list]]\ndistance_m = 2\n[[stations.list]]\ndistance_m = 40\n",
            &[],
        )
        .unwrap()
        .resolve()
        .unwrap();
        let mcs = |i: usize| match cfg.cell.stations[i].tx {
            TxVector::Ht { mcs, .. } => mcs,
            t => panic!("{t:?}"),
        };
        assert!(mcs(0) > mcs(1), "{} vs {}", mcs(0), mcs(1));
        assert!(matches!(cfg.cell.stations[1].error, ErrorModel::Snr { .. }));
        let e = err("[stations]\ndistance_m = 10\nsnr_db = 20\n", &[]);
        assert_eq!(
            e,
            "stations.distance_m: give distance_m, snr_db or loss, only one"
        );
        let e = err("[stations]\ndistance_m = -1\n", &[]);
        assert!(
            e.starts_with("stations.distance_m: must be more than 0"),
            "{e}"
        );
        let e = err(
            "[phy]\npath_loss_exponent = 9\n[stations]\ndistance_m = 5\n",
            &[],
        );
        assert!(e.starts_with("phy.path_loss_exponent"), "{e}");
    }

    /// A scenario resolved with `files` (name, contents) written to a directory of
    /// their own, which relative `snr_trace` paths are read from.
    fn with_files(text: &str, files: &[(&str, &str)]) -> Result<SimConfig, String> {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("txop-scenario-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (name, contents) in files {
            std::fs::write(dir.join(name), contents).unwrap();
        }
        let mut s = parse(text, &[]).map_err(|e| e.to_string())?;
        s.base_dir = Some(dir.clone());
        let r = s.resolve().map_err(|e| {
            // Messages name the file as the scenario's directory joined with the name.
            e.to_string().replace(&format!("{}/", dir.display()), "")
        });
        std::fs::remove_dir_all(&dir).unwrap();
        r
    }

    fn channel(cfg: &SimConfig, i: usize) -> &StationChannel {
        cfg.cell.stations[i].channel.as_ref().expect("a channel")
    }

    /// A still station at `position_m = [d, 0]`, or with a fading of "none", is the
    /// `distance_m = d` station of before: no channel, the same SNR in its error model
    /// and the same rate. The AP may stand elsewhere.
    #[test]
    fn a_still_position_is_a_distance() {
        let by_distance = resolved("[stations]\ndistance_m = 12.5\n");
        for text in [
            "[stations]\nposition_m = [12.5, 0]\n",
            "[stations]\nposition_m = [0, -12.5]\nfading = \"none\"\n",
            "[phy]\nap_position_m = [3, 4]\n[stations]\nposition_m = [15.5, 4]\n",
            "[stations]\ndistance_m = 12.5\nvelocity_mps = [0, 0]\n",
            "[stations]\nwaypoints = [[0, 12.5, 0], [5, 12.5, 0]]\n",
        ] {
            let cfg = resolved(text);
            assert_eq!(cfg.cell.stations, by_distance.cell.stations, "{text}");
        }
        let s = &by_distance.cell.stations[0];
        assert_eq!(s.channel, None);
        assert_eq!(s.rate_control, RateControlKind::Fixed);
        let snr = snr_at_distance(20.0, 3.5, Band::Ghz5, ChannelWidth::Mhz20, 12.5);
        assert_eq!(s.error, ErrorModel::Snr { snr_db: snr });
    }

    /// Movement, fading, traces and per-direction keys give each station a channel:
    /// its SNR over time is the path loss's, the trace's, or the direction's own; the
    /// error model holds the downlink's mean at 0 s, which the rate is chosen for.
    #[test]
    fn channel_keys_resolve() {
        let text = "[stations]\nfading = \"rayleigh\"\n\
             [[stations.list]]\nposition_m = [5, 0]\nvelocity_mps = [1, 0]\n\
             [[stations.list]]\ncount = 2\nsnr_trace = \"walk.csv\"\n\
             snr_trace_interpolation = \"step\"\nfading = \"none\"\n\
             [[stations.list]]\nsnr_db = 30\ncoherence_ms = 5\n\
             uplink = { snr_db = 10, fading = \"rician\", fading_k_db = 6 }\n\
             [[stations.list]]\nwaypoints = [[0, 1, 0], [10, 11, 0]]\nfading = \"none\"\n";
        let trace = "time_s,station,snr_db\n0,2,30\n1,2,10\n0,3,22\n";
        let cfg = with_files(text, &[("walk.csv", trace)]).unwrap();
        let at = Nanos::from_secs_f64;
        let budget = LogDistance {
            tx_power_dbm: 20.0,
            exponent: 3.5,
            band: Band::Ghz5,
            width: ChannelWidth::Mhz20,
        };
        // Station 1 walks away at 1 m/s from 5 m, fading with the band's default
        // coherence time (0.423·c/5.2 GHz at 1 m/s = 24.387 ms).
        let c = channel(&cfg, 0);
        assert_eq!(c.down.mean_snr_db(at(5.0)), budget.snr_db(10.0));
        assert_eq!(c.up.mean_snr_db(at(5.0)), budget.snr_db(10.0));
        assert_eq!(
            c.down.fading,
            Fading::Rayleigh {
                coherence: Nanos(24_386_963)
            }
        );
        assert_eq!(c.down.seed, 1);
        // Both directions of a link fade together (reciprocity); links independently.
        assert_eq!(c.down.link_key, c.up.link_key);
        assert_ne!(c.down.link_key, channel(&cfg, 1).down.link_key);
        assert_eq!(
            cfg.cell.stations[0].error,
            ErrorModel::Snr {
                snr_db: budget.snr_db(5.0)
            }
        );
        // Stations 2 and 3 replay their own rows of the trace, stepwise.
        let c = channel(&cfg, 1);
        assert_eq!(c.down.snr_db(at(0.99)), 30.0);
        assert_eq!(c.up.snr_db(at(1.0)), 10.0);
        assert!(c.down.fading == Fading::None);
        // One point: a constant SNR both ways, so no channel.
        assert_eq!(cfg.cell.stations[2].channel, None);
        assert_eq!(cfg.cell.stations[2].error, ErrorModel::Snr { snr_db: 22.0 });
        // Station 4: 30 dB down with the inherited Rayleigh at 5 ms; its uplink 10 dB
        // with its own Rician fading at the default coherence.
        let c = channel(&cfg, 3);
        assert_eq!(c.down.mean_snr_db(Nanos::ZERO), 30.0);
        assert_eq!(
            c.down.fading,
            Fading::Rayleigh {
                coherence: Nanos::from_ms(5)
            }
        );
        assert_eq!(c.up.mean_snr_db(Nanos::ZERO), 10.0);
        assert_eq!(
            c.up.fading,
            Fading::Rician {
                k_db: 6.0,
                coherence: Nanos(24_386_963)
            }
        );
        // Station 5 follows its waypoints: 6 m at 5 s, 11 m after 10 s.
        let c = channel(&cfg, 4);
        assert_eq!(c.down.snr_db(at(5.0)), budget.snr_db(6.0));
        assert_eq!(c.down.snr_db(at(60.0)), budget.snr_db(11.0));
        // The rate is chosen for the mean SNR at 0 s: 1 m is better than 11 m.
        assert!(
            cfg.cell.stations[4].error
                == ErrorModel::Snr {
                    snr_db: budget.snr_db(1.0)
                }
        );
    }

    /// `rate_control` per station and inherited; `--set stations.rate_control=…` is one
    /// switch for every station that does not choose its own.
    #[test]
    fn rate_control_is_per_station_and_one_switch() {
        let text = "[stations]\n[[stations.list]]\ncount = 3\nmcs = 7\n\
                    [[stations.list]]\nrate_control = \"ideal\"\nsnr_db = 20\n";
        let cfg = parse(text, &[]).unwrap().resolve().unwrap();
        let kinds: Vec<RateControlKind> =
            cfg.cell.stations.iter().map(|s| s.rate_control).collect();
        use RateControlKind::*;
        assert_eq!(kinds, [Fixed, Fixed, Fixed, Ideal]);
        let sets = [(
            "stations.rate_control".to_string(),
            "minstrel_ht".to_string(),
        )];
        let cfg = parse(text, &sets).unwrap().resolve().unwrap();
        let kinds: Vec<RateControlKind> =
            cfg.cell.stations.iter().map(|s| s.rate_control).collect();
        assert_eq!(
            kinds,
            [MinstrelHt(None), MinstrelHt(None), MinstrelHt(None), Ideal]
        );
        let sets = [(
            "stations.rate_control".to_string(),
            "minstrel_ht-5.10".to_string(),
        )];
        let cfg = parse("", &sets).unwrap().resolve().unwrap();
        assert_eq!(
            cfg.cell.stations[0].rate_control,
            RateControlKind::from_name("minstrel_ht-5.10").unwrap()
        );
        // The rate control changes nothing else.
        let fixed = parse("", &[]).unwrap().resolve().unwrap();
        assert_eq!(
            StationConfig {
                rate_control: Fixed,
                ..cfg.cell.stations[0].clone()
            },
            fixed.cell.stations[0]
        );
    }

    /// Each bad channel or rate-control key is one line naming it (and for a trace the
    /// file, line and column).
    #[test]
    fn channel_errors_name_the_key() {
        let cases: &[(&str, &str)] = &[
            (
                "[stations]\nfading = \"nakagami\"\nsnr_db = 20\n",
                "stations.fading: unknown value `nakagami`; expected one of none, rayleigh, rician",
            ),
            (
                "[stations]\nfading = \"rayleigh\"\ncoherence_ms = -5\nsnr_db = 20\n",
                "stations.coherence_ms: must be 0.001 to 3600000 ms",
            ),
            (
                "[stations]\nfading = \"rician\"\nsnr_db = 20\n",
                "stations.fading_k_db: rician fading needs its K factor (e.g. fading_k_db = 6)",
            ),
            (
                "[stations]\nfading = \"rician\"\nfading_k_db = 99\nsnr_db = 20\n",
                "stations.fading_k_db: must be -50 to 50 dB",
            ),
            (
                "[stations]\nfading = \"rayleigh\"\nfading_k_db = 3\nsnr_db = 20\n",
                "stations.fading_k_db: applies with fading = \"rician\" only",
            ),
            (
                "[stations]\ncoherence_ms = 10\nsnr_db = 20\n",
                "stations.coherence_ms: applies with fading = \"rayleigh\" or \"rician\" only",
            ),
            (
                "[stations]\nfading = \"rayleigh\"\n",
                "stations.fading: fades an SNR: give snr_db, distance_m, position_m, \
                 waypoints or snr_trace (not loss)",
            ),
            (
                "[stations]\nfading = \"rayleigh\"\nloss = 0.1\n",
                "stations.fading: fades an SNR: give snr_db, distance_m, position_m, \
                 waypoints or snr_trace (not loss)",
            ),
            (
                "[stations]\nvelocity_mps = [1, 0]\nsnr_db = 20\n",
                "stations.velocity_mps: needs a starting point: give position_m (or distance_m)",
            ),
            (
                "[stations]\nposition_m = [1, 0]\nvelocity_mps = [100, 100]\n",
                "stations.velocity_mps: the speed must be at most 100 m/s (360 km/h)",
            ),
            (
                "[stations]\nposition_m = [3, 4]\nsnr_db = 20\n",
                "stations.position_m: snr_db and position_m both given; give one of snr_db, \
                 distance_m, position_m, waypoints, snr_trace or loss",
            ),
            (
                "[stations]\nposition_m = [3, 4]\nwaypoints = [[0, 1, 1]]\n",
                "stations.waypoints: position_m and waypoints both given; give one of snr_db, \
                 distance_m, position_m, waypoints, snr_trace or loss",
            ),
            (
                "[stations]\nposition_m = [20000, 0]\n",
                "stations.position_m: coordinates must be −10000 to 10000 m",
            ),
            (
                "[phy]\nap_position_m = [0, nan]\n[stations]\nposition_m = [1, 0]\n",
                "phy.ap_position_m: coordinates must be −10000 to 10000 m",
            ),
            (
                "[stations]\nwaypoints = [[0, 1, 1], [2, 5, 1], [2, 9, 1]]\n",
                "stations.waypoints: waypoint 2: at 2 s, not after waypoint 1 at 2 s; \
                 times must increase",
            ),
            (
                "[stations]\nwaypoints = [[-1, 1, 1]]\n",
                "stations.waypoints: waypoint 0: the time must be 0 to 1e6 s",
            ),
            (
                "[stations]\nwaypoints = []\n",
                "stations.waypoints: at least one waypoint is needed",
            ),
            (
                "[stations]\nsnr_db = 20\nsnr_trace_interpolation = \"step\"\n",
                "stations.snr_trace_interpolation: applies with snr_trace only",
            ),
            (
                "[stations]\nsnr_db = 20\ndownlink = { snr_db = 10, snr_trace = \"t.csv\" }\n",
                "stations.downlink.snr_trace: snr_db and snr_trace both given; give one",
            ),
            (
                "[stations]\ndownlink = { snr_db = 10 }\n",
                "stations.downlink: gives the downlink an SNR but the uplink has none: give \
                 uplink.snr_db or the station's snr_db, distance_m, position_m, waypoints or \
                 snr_trace",
            ),
            (
                "[stations]\nloss = 0.1\nuplink = { snr_db = 10 }\n",
                "stations.uplink.snr_db: the station has a fixed loss (loss) both ways; give \
                 it an SNR instead",
            ),
            (
                "[stations]\nsnr_db = 20\nuplink = { fading = \"rician\" }\n",
                "stations.uplink.fading_k_db: rician fading needs its K factor (e.g. \
                 fading_k_db = 6)",
            ),
            (
                "[stations]\nrate_control = \"minstrel\"\n",
                "stations.rate_control: unknown value `minstrel`; expected one of fixed, \
                 ideal, minstrel_ht, minstrel_ht-5.10, minstrel_ht-6",
            ),
            (
                "[stations]\n[[stations.list]]\n[[stations.list]]\nrate_control = \"x\"\n",
                "stations.list[1].rate_control: unknown value `x`; expected one of fixed, \
                 ideal, minstrel_ht, minstrel_ht-5.10, minstrel_ht-6",
            ),
            (
                "[stations]\ndownlink = { snr = 3 }\n",
                "stations.downlink.snr: unknown key (did you mean `snr_db`?)",
            ),
            (
                "[stations]\nposition_m = [1, 2, 3]\n",
                "stations.position_m: invalid length 3, expected fewer elements in array",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(&err(text, &[]), want, "{text}");
        }
    }

    /// A trace's errors: a file that is not there, a malformed line (file, line and
    /// column), a station without points; a list entry's key is named.
    #[test]
    fn trace_errors_name_the_file_line_and_column() {
        let two = "[stations]\ncount = 2\nsnr_trace = \"t.csv\"\n";
        assert_eq!(
            with_files(two, &[("t.csv", "0,1,20\n0,2,abc\n")]).unwrap_err(),
            "stations.snr_trace: t.csv:2:5: snr_db: expected a number, got \"abc\""
        );
        assert_eq!(
            with_files(two, &[("t.csv", "0,1,20\n1,1,20\n")]).unwrap_err(),
            "stations.snr_trace: t.csv has no points for station 2"
        );
        assert_eq!(
            with_files(two, &[("t.csv", "1,1,20\n0,1,20\n")]).unwrap_err(),
            "stations.snr_trace: t.csv:2:1: time_s: 0 s is before station 1's previous \
             point at 1 s; times must not go backwards"
        );
        let e = with_files(two, &[]).unwrap_err();
        assert!(
            e.starts_with("stations.snr_trace: t.csv: cannot read: "),
            "{e}"
        );
        let list = "[stations]\nsnr_db = 20\n[[stations.list]]\n[[stations.list]]\n\
                    downlink = { snr_trace = \"d.csv\", snr_trace_interpolation = \"cubic\" }\n";
        assert_eq!(
            with_files(list, &[("d.csv", "0,2,20\n")]).unwrap_err(),
            "stations.list[1].downlink.snr_trace_interpolation: unknown value `cubic`; \
             expected one of linear, step"
        );
        let ok = list.replace("cubic", "step");
        let cfg = with_files(&ok, &[("d.csv", "0,2,20\n5,2,10\n")]).unwrap();
        let c = channel(&cfg, 1);
        assert_eq!(c.down.snr_db(Nanos::from_secs(4)), 20.0);
        assert_eq!(c.up.snr_db(Nanos::from_secs(4)), 20.0);
        assert_eq!(cfg.cell.stations[0].channel, None);
    }

    /// `txop show` adds each station's resolved channel when the scenario has channel
    /// keys, in runs of stations that read the same; nothing for the others.
    #[test]
    fn show_summarises_resolved_channels() {
        let summary = |text: &str| parse(text, &[]).unwrap().resolve_with_summary().unwrap().1;
        assert_eq!(summary(""), None);
        assert_eq!(summary("[stations]\ndistance_m = 10\nmcs = 3\n"), None);
        // The built-ins that use channel or rate-control keys show them; the others
        // show nothing.
        let uses_keys = [
            "atf-30-stations-minstrel",
            "rate-walk-away",
            "rate-step-fade",
            "hidden-stations",
            "hidden-stations-rts",
            "walk-hidden",
        ];
        for (name, text) in crate::builtin::SCENARIOS {
            if parse(text, &[]).unwrap().has_bsss() {
                // Several BSSs: `resolve_bsss_with_summary` (tests/bss.rs).
                continue;
            }
            assert_eq!(summary(text).is_some(), uses_keys.contains(name), "{name}");
        }
        let s = summary(
            "[stations]\n[[stations.list]]\ncount = 2\nposition_m = [10, 0]\nvelocity_mps = [1, 0]\n\
             fading = \"rician\"\nfading_k_db = 6\ncoherence_ms = 20\n\
             [[stations.list]]\nsnr_db = 25\nuplink = { snr_db = 15 }\nrate_control = \"ideal\"\n",
        )
        .unwrap();
        assert_eq!(
            s,
            "# Resolved channels and rate control (for reading; ignored as input):\n\
             # stations 1–2: from (10, 0) m at (1, 0) m/s, AP at (0, 0) m; both ways \
             log-distance SNR 32.2 dB at 0 s, rician fading K 6 dB, coherence 20 ms; \
             rate control fixed (HT20 MCS7 LGI)\n\
             # station 3: downlink SNR 25 dB, no fading; uplink SNR 15 dB, no fading; \
             rate control ideal\n"
        );
    }

    /// Every key that becomes an event rate is bounded, so that a short run cannot
    /// mean billions of events: the error names the key and the range.
    #[test]
    fn event_rates_are_bounded_and_errors_name_the_key() {
        let cbr = "[traffic]\nkind = \"cbr\"\n";
        for (text, sets, want) in [
            (cbr, vec![("traffic.rate_mbps", "1e300")],
             "traffic.rate_mbps: must be above 0 and at most 10000 Mbit/s"),
            (cbr, vec![("traffic.rate_mbps", "nan")],
             "traffic.rate_mbps: must be above 0 and at most 10000 Mbit/s"),
            (cbr, vec![("traffic.rate_mbps", "801"), ("traffic.packet_bytes", "100")],
             "traffic.rate_mbps: must be above 0 and at most 800 Mbit/s with 100-byte \
              packets (one per µs at most)"),
            ("", vec![("traffic.probe_interval_ms", "1e-9")],
             "traffic.probe_interval_ms: must be 0 (none) or 0.1 ms to 3600000 ms (1 hour)"),
            ("", vec![("traffic.probe_interval_ms", "-5")],
             "traffic.probe_interval_ms: must be 0 (none) or 0.1 ms to 3600000 ms (1 hour)"),
            ("", vec![("traffic.depth", "4000000000")],
             "traffic.depth: must be 0 (automatic) to 10000 packets"),
            ("", vec![("wired.rate_mbps", "1e300")],
             "wired.rate_mbps: must be 0.01 to 100000 Mbit/s"),
            ("", vec![("wired.rate_mbps", "1e-9")],
             "wired.rate_mbps: must be 0.01 to 100000 Mbit/s"),
            ("[[flows]]\nkind = \"cbr\"\nfrom = \"server\"\nto = \"sta1\"\nrate_mbps = 1e300\n",
             vec![], "flows[0].rate_mbps: must be above 0 and at most 10000 Mbit/s"),
            ("[[flows]]\nkind = \"cbr\"\nfrom = \"server\"\nto = \"sta1\"\n",
             vec![], "flows[0].rate_mbps: a cbr flow needs its rate"),
            ("[[flows]]\nkind = \"ping\"\nfrom = \"sta1\"\nto = \"server\"\ninterval_ms = 1e-9\n",
             vec![], "flows[0].interval_ms: must be 0.1 ms to 3600000 ms (1 hour)"),
        ] {
            let sets: Vec<(&str, &str)> = sets;
            assert_eq!(err(text, &sets), want, "{text} {sets:?}");
        }
        // The limits themselves are allowed.
        let ok = |text: &str| parse(text, &[]).unwrap().resolve().unwrap();
        ok("[traffic]\nkind = \"cbr\"\nrate_mbps = 10000\nprobe_interval_ms = 0.1\n");
        ok("[traffic]\ndepth = 10000\n[wired]\nrate_mbps = 100000\n");
        ok("[traffic]\nkind = \"cbr\"\npacket_bytes = 100\nrate_mbps = 800\n");
    }

    /// Thousands of flows, each within its key's range, are bounded together: at most
    /// 10⁷ packets per simulated second, the error naming the key that offers most.
    #[test]
    fn offered_packets_are_bounded_in_all() {
        let e = err(
            "[stations]\ncount = 2000\n[traffic]\nkind = \"cbr\"\ndirection = \"both\"\n\
             rate_mbps = 8000\nprobe_interval_ms = 1\n",
            &[],
        );
        assert_eq!(
            e,
            "traffic.rate_mbps: the flows would offer 2.671e9 packets per simulated second in \
             all; at most 1e7 (lower the rate, lengthen the interval or use fewer flows)"
        );
        let e = err(
            "[stations]\ncount = 2000\n[traffic]\ndirection = \"both\"\nprobe_interval_ms = 0.1\n",
            &[],
        );
        assert!(
            e.starts_with("traffic.probe_interval_ms: the flows would offer 4.000e7"),
            "{e}"
        );
        let mut pings = String::from("[stations]\ncount = 20\n");
        for i in 0..1000 {
            let ms = if i == 7 { 0.1 } else { 0.2 };
            pings.push_str(&format!(
                "[[flows]]\nkind = \"ping\"\nfrom = \"sta{}\"\nto = \"server\"\ninterval_ms = {ms}\n",
                i % 20 + 1
            ));
        }
        let e = err(&pings, &[]);
        assert!(
            e.starts_with("flows[7].interval_ms: the flows would offer 1.001e7"),
            "{e}"
        );
        // 2000 stations at 10 Mbit/s each way are fine (3.3 million packets/s).
        parse(
            "[stations]\ncount = 2000\n[traffic]\nkind = \"cbr\"\ndirection = \"both\"\n",
            &[],
        )
        .unwrap()
        .resolve()
        .unwrap();
    }

    #[test]
    fn name_duration_and_station_count_are_bounded() {
        let long = "n".repeat(30_000);
        let e = err("", &[("name", &long)]);
        assert_eq!(e, "name: 30000 characters; at most 200");
        let e = err("name = \"a\\nb\"\n", &[]);
        assert_eq!(e, "name: must be one line without control characters");
        parse(&format!("name = \"{}\"\n", "é".repeat(200)), &[])
            .unwrap()
            .resolve()
            .unwrap();
        assert_eq!(
            err("duration_s = 1.5e6\n", &[]),
            "duration_s: must be 0.001 s to 1e6 s"
        );
        assert_eq!(
            err("duration_s = 1e-12\n", &[]),
            "duration_s: must be 0.001 s to 1e6 s"
        );
        assert_eq!(
            err("[stations]\ncount = 2001\n", &[]),
            "stations.count: must be 1 to 2000"
        );
        let e = err(
            "[[stations.list]]\ncount = 65535\n[[stations.list]]\ncount = 65535\n",
            &[],
        );
        assert!(
            e.starts_with("stations.list[0].count: the list comes to more than 2000"),
            "{e}"
        );
    }

    /// What docs/scenarios.md allows for the scheduler's knobs, and nothing more.
    #[test]
    fn quantum_shift_and_airtime_flags_take_the_documented_values() {
        for shift in ["17", "64", "255"] {
            assert_eq!(
                err("", &[("stack_options.quantum_shift", shift)]),
                "stack_options.quantum_shift: must be 0 to 16"
            );
        }
        for flags in 4..=255u8 {
            let e = err("", &[("stack_options.airtime_flags", &flags.to_string())]);
            assert!(
                e.starts_with("stack_options.airtime_flags: must be 0 to 3"),
                "{e}"
            );
        }
        for (k, v) in [
            ("stack_options.quantum_shift", "16"),
            ("stack_options.airtime_flags", "3"),
            ("stack_options.airtime_flags", "0"),
        ] {
            parse("", &[(k.into(), v.into())])
                .unwrap()
                .resolve()
                .unwrap();
        }
    }

    #[test]
    fn may_transmit_aql_check_takes_two_readings() {
        use txop_core::mac80211::scheduler::MayTransmitAqlCheck;
        let e = err(
            "",
            &[("stack_options.may_transmit_aql_check", "\"reversed\"")],
        );
        assert!(
            e.starts_with("stack_options.may_transmit_aql_check: unknown value `reversed`"),
            "{e}"
        );
        for (v, want) in [
            ("\"as_written\"", MayTransmitAqlCheck::AsWritten),
            ("\"flipped\"", MayTransmitAqlCheck::Flipped),
        ] {
            let cfg = parse(
                "",
                &[("stack_options.may_transmit_aql_check".into(), v.into())],
            )
            .unwrap()
            .resolve()
            .unwrap();
            assert_eq!(cfg.cell.stack.may_transmit_aql_check, want);
        }
    }

    #[test]
    fn flent_options_name_their_own_key() {
        let test = |k: &str, v: &str| {
            err(
                "[stations]\ncount = 2\n[traffic]\ntest = \"tcp_ndown\"\n",
                &[(k, v)],
            )
        };
        assert_eq!(
            test("traffic.streams", "0"),
            "traffic.streams: must be 1 to 1000"
        );
        assert_eq!(
            test("traffic.streams", "1001"),
            "traffic.streams: must be 1 to 1000"
        );
        assert_eq!(
            test("traffic.station", "3"),
            "traffic.station: no station 3 in this cell (1 to 2)"
        );
        assert!(test("traffic.test", "tcp_down").starts_with("traffic.test: unknown flent test"));
    }

    /// A list where a table belongs (`--set traffic=[]`) is refused, naming the key,
    /// for every table of the scenario.
    #[test]
    fn a_list_is_not_a_table() {
        let list =
            "[[stations.list]]\n[[flows]]\nkind = \"ping\"\nfrom = \"sta1\"\nto = \"server\"\n\
                    [[bss]]\n[[bss.stations.list]]\n[[bss.flows]]\nkind = \"ping\"\n";
        for key in table_keys() {
            // `a[].b[]` → set `a[0].b` to a list of one number, and the error is at
            // `a[0].b[0]`; `a[].b` → set `a[0].b` to an empty list.
            let (path, shown, value) = match key.strip_suffix("[]") {
                Some(list_key) => {
                    let p = list_key.replace("[]", "[0]");
                    (p.clone(), format!("{p}[0]"), "[1]")
                }
                None => {
                    let p = key.replace("[]", "[0]");
                    (p.clone(), p, "[]")
                }
            };
            let e = err(list, &[(&path, value)]);
            assert!(
                e.starts_with(&format!("{shown}: expected a table")),
                "{key}: {e}"
            );
        }
        assert_eq!(
            err("[traffic]\n", &[("traffic", "[\"cbr\"]")]),
            "traffic: expected a table (`{ … }` or a [section]), not a list"
        );
        // Tables are fine, empty or not; so are the lists that are lists.
        parse(
            "[traffic.web]\nobjects_bytes = [1000, 2000]\n",
            &[("stations.list".into(), "[{mcs=3},{mcs=5}]".into())],
        )
        .unwrap()
        .resolve()
        .unwrap();
        parse("", &[("traffic".into(), "{}".into())])
            .unwrap()
            .resolve()
            .unwrap();
    }

    /// [`TABLE_KEYS`] is every table a scenario has: a scenario with every optional
    /// table given, written back, has tables at exactly those keys.
    #[test]
    fn table_keys_are_complete() {
        let edca = ["vo", "vi", "be", "bk"]
            .iter()
            .flat_map(|ac| ["ap", "sta"].map(|who| format!("[mac.edca_{who}.{ac}]\naifsn = 2\n")))
            .collect::<String>();
        let machinery = "scan = {}\npower_save = {}\nbus = { preset = \"sdio-generic\", \
                         clock_hz = 1000000 }\ndownlink = {}\nuplink = {}\n";
        let bss_edca = edca.replace("[mac.", "[bss.mac.");
        let text = format!(
            "{edca}[stations]\n{machinery}[[stations.list]]\n{machinery}[traffic.web]\n\
             [space]\n[[flows]]\nkind = \"ping\"\nfrom = \"sta1\"\nto = \"server\"\n\
             [[bss]]\n[bss.stack_options]\n{bss_edca}[bss.stations]\n{machinery}\
             [[bss.stations.list]]\n{machinery}[bss.traffic.web]\n[bss.wired]\n\
             [[bss.flows]]\nkind = \"ping\"\n"
        );
        let scenario = parse(&text, &[]).unwrap();
        let value = toml::Value::try_from(&scenario).unwrap();
        fn tables(v: &toml::Value, path: &str, out: &mut Vec<String>) {
            let join = |k: &str| {
                if path.is_empty() {
                    k.to_string()
                } else {
                    format!("{path}.{k}")
                }
            };
            match v {
                toml::Value::Table(t) => {
                    for (k, v) in t {
                        if v.is_table() {
                            out.push(join(k));
                        }
                        tables(v, &join(k), out);
                    }
                }
                toml::Value::Array(items) if items.iter().any(|i| i.is_table()) => {
                    out.push(format!("{path}[]"));
                    for i in items {
                        if let toml::Value::Table(_) = i {
                            tables(i, &format!("{path}[]"), out);
                        }
                    }
                }
                _ => {}
            }
        }
        let mut found = Vec::new();
        tables(&value, "", &mut found);
        found.sort();
        found.dedup();
        let mut want: Vec<String> = table_keys().collect();
        want.sort();
        assert_eq!(found, want);
    }
}

#[cfg(test)]
mod choice_tests {
    use super::*;

    /// The scenario that puts `key` (a [`choice_keys`] pattern with `[0]` for `[]`)
    /// to use, with its value `value` (TOML) set over it.
    fn resolve_with(key: &str, value: &str) -> Result<(), String> {
        let mut text = String::from("duration_s = 0.01\n");
        if key.starts_with("space.") {
            text.push_str("[space]\n");
        }
        text.push_str("[stations]\n");
        let trace = key.contains("snr_trace_interpolation");
        if key.starts_with("space.") {
            text.push_str("distance_m = 5\n");
        } else if !trace {
            text.push_str("snr_db = 30\n");
        }
        if key.contains(".scan.") {
            text.push_str("scan = {}\n");
        }
        if key.contains(".bus.") {
            text.push_str("bus = { preset = \"sdio-vendor\" }\n");
        }
        if key.starts_with("stations.list[0]") {
            text.push_str("[[stations.list]]\n");
            if key.contains(".bus.") {
                text.push_str("bus = { preset = \"sdio-vendor\" }\n");
            }
        }
        if trace {
            // The trace where the interpolation is: the station's, or a direction's.
            let table = key.rsplit_once('.').map_or("", |(t, _)| t);
            let (station, direction) = match table.rsplit_once('.') {
                Some((s, d)) if d == "downlink" || d == "uplink" => (s, Some(d)),
                _ => (table, None),
            };
            match direction {
                None => text.push_str("snr_trace = \"t.csv\"\n"),
                Some(d) => {
                    if station == "stations" {
                        text.push_str("snr_db = 30\n");
                    }
                    text.push_str(&format!("{d} = {{ snr_trace = \"t.csv\" }}\n"));
                }
            }
            if station.starts_with("stations.list") && direction.is_some() {
                text = text.replace("[stations]\n", "[stations]\nsnr_db = 30\n");
            }
        }
        if key == "traffic.cc" {
            text.push_str("[traffic]\ntest = \"tcp_1down\"\n");
        }
        if key.starts_with("flows[0]") {
            text.push_str("[[flows]]\nkind = \"tcp\"\nfrom = \"sta1\"\nto = \"server\"\n");
        }
        let dir = std::env::temp_dir().join(format!(
            "txop-choice-{}-{}",
            std::process::id(),
            key.replace(['[', ']', '.'], "_")
        ));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("t.csv"), "0,1,30\n").unwrap();
        let r = parse(&text, &[(key.to_string(), value.to_string())])
            .and_then(|mut s| {
                s.base_dir = Some(dir.clone());
                s.resolve().map(|_| ())
            })
            .map_err(|e| e.to_string());
        std::fs::remove_dir_all(&dir).ok();
        r
    }

    /// The keys docs/scenarios.md documents, as dotted paths (`[[flows]]` rows as
    /// `flows[0].…`, `stations.downlink` rows as `stations.downlink.…`); `[[bss]]`'s
    /// own rows and the limits table left out.
    fn documented_keys() -> Vec<String> {
        let doc = include_str!("../../../docs/scenarios.md");
        let mut prefix = None;
        let mut keys = Vec::new();
        for line in doc.lines() {
            if let Some(h) = line.strip_prefix("## ").or(line.strip_prefix("### ")) {
                let name = h.trim().trim_matches('`');
                prefix = match name {
                    "Top level" => Some(String::new()),
                    "[[flows]]" => Some("flows[0].".to_string()),
                    "[[bss]]" | "Limits" => None,
                    _ if name.starts_with('[') || name.contains('.') => {
                        Some(format!("{}.", name.trim_matches(['[', ']'])))
                    }
                    _ => None,
                };
            } else if let (Some(p), Some(row)) = (&prefix, line.strip_prefix("| `")) {
                let first_cell = row.split('|').next().unwrap_or_default();
                for key in first_cell.split('`').step_by(2) {
                    let key = key.trim().trim_matches(',').trim();
                    if !key.is_empty() && !key.contains(' ') {
                        keys.push(format!("{p}{key}"));
                    }
                }
            }
        }
        keys
    }

    /// The keys whose value is free text (a name, a file, a node), not a choice.
    const FREE_TEXT: &[&str] = &[
        "name",
        "description",
        "stations.snr_trace",
        "stations.downlink.snr_trace",
        "flows[0].from",
        "flows[0].to",
    ];

    /// Every documented key that takes a string is either a choice ([`CHOICE_KEYS`],
    /// whose other types are refused naming the names) or free text: a key missing
    /// from [`CHOICE_KEYS`] shows as serde's "expected a string" / "unit variant" /
    /// "untagged enum" when given a boolean.
    #[test]
    fn every_key_taking_a_name_is_a_choice_key() {
        let keys = documented_keys();
        assert!(keys.len() > 100, "{}", keys.len());
        let mut missing = Vec::new();
        for key in &keys {
            let text = "duration_s = 0.01\n[stations]\nsnr_db = 30\n\
                        [[flows]]\nkind = \"tcp\"\nfrom = \"sta1\"\nto = \"server\"\n";
            let e = parse(text, &[(key.clone(), "true".to_string())])
                .and_then(|s| s.resolve().map(|_| ()))
                .map_or_else(|e| e.to_string(), |()| String::new());
            let jargon = ["expected a string", "unit variant", "untagged enum"];
            if jargon.iter().any(|j| e.contains(j)) && !FREE_TEXT.contains(&key.as_str()) {
                missing.push(format!("{key}: {e}"));
            }
        }
        assert!(missing.is_empty(), "{}", missing.join("\n"));
    }

    /// Every key that takes one of a set of names refuses a number, a boolean or a
    /// list in one line naming the key, the value and the names (issue 25 item 5:
    /// `stack = 5`, `traffic.kind = 3`, `traffic.direction = true` gave serde's
    /// "invalid type: unit variant, expected string only"); and the scenario around
    /// it is valid, so that it is the value that is refused.
    #[test]
    fn every_choice_key_refuses_another_type_with_the_names() {
        let keys: Vec<String> = choice_keys()
            .filter(|k| !k.starts_with("bss[]"))
            .map(|k| k.replace("[]", "[0]"))
            .collect();
        assert!(keys.len() > 40, "{}", keys.len());
        let mut wrong = Vec::new();
        for key in &keys {
            for value in ["5", "1.5", "true", "[1]"] {
                // A list where a table may be (`stations.bus`) has its own message.
                if value == "[1]" && is_table_key(&key.replace("[0]", "[]")) {
                    continue;
                }
                let Err(e) = resolve_with(key, value) else {
                    wrong.push(format!("{key}={value}: accepted"));
                    continue;
                };
                let shown = toml::from_str::<toml::Table>(&format!("v = {value}")).unwrap()["v"]
                    .to_string();
                // A bus's preset is named as the bus (`bus = "name"` is the same).
                let named = key.strip_suffix(".preset").unwrap_or(key);
                if !(e.starts_with(&format!("{named}: "))
                    && e.contains(&format!("`{shown}`"))
                    && e.contains("expected one of")
                    && !e.contains('\n'))
                {
                    wrong.push(format!("{key}={value}: {e}"));
                }
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }
}
