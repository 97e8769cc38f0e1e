//! The schema: the serde types of a scenario file, key by key as `docs/scenarios.md`
//! documents them, with their defaults. No checks beyond types and unknown keys: those
//! are resolution's (`resolve`).

use crate::{BssSpec, Space};
use serde::{Deserialize, Serialize};
use txop_core::mac::edca::BackoffRule;
use txop_core::mac::protection::Protection;
use txop_core::mac80211::powersave::{
    DEFAULT_BEACON_INTERVAL_TU, DEFAULT_DTIM_PERIOD, DYNAMIC_PS_TIMEOUT,
};
use txop_core::mac80211::scan::{
    ATH9K_CHANNEL_SWITCH, ATH9K_LISTEN_INTERVAL, PM_QOS_NETWORK_LATENCY_DEFAULT,
};
use txop_core::phy::{Band, DsssPreamble, GuardInterval, HeFormat, HeLtf, Standard};

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
    /// `[server]`: the wired host's own settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerSpec>,
    /// `[kernel]`: which of the kernel's own code runs in place of txop's Rust
    /// (`units`; stations' `minstrel_ht-kernel`), and where it comes from (absent:
    /// Debian's `linux-source-6.12`).
    #[serde(default, skip_serializing_if = "Kernel::is_default")]
    pub kernel: Kernel,
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

/// `[kernel]`: the kernel source whose own code runs in place of txop's Rust
/// (`rate_control = "minstrel_ht-kernel"`; issue 28, "bring your patch"). A table of its
/// own rather than a station key: one tree serves every station, as one kernel runs
/// every station of a radio.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Kernel {
    /// A kernel source tree (relative to the scenario file; a built-in scenario's to
    /// the current directory); `None`: the Debian tarball `/usr/src/linux-source-6.12.tar.xz`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub src: Option<String>,
    /// The radio-wide units whose kernel code runs in place of txop's Rust on every
    /// node (`"fq"`: `include/net/fq_impl.h` and `codel_impl.h`; `"aql"`, `"scheduler"`:
    /// AQL and the 6.12 scheduler of `net/mac80211/tx.c`; `"airtime"`:
    /// `net/mac80211/airtime.c`); a station's rate
    /// control is chosen per station instead (`minstrel_ht-kernel`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub units: Vec<String>,
}

impl Kernel {
    /// Nothing set (left out of `txop show`).
    pub fn is_default(&self) -> bool {
        *self == Kernel::default()
    }
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

/// `[server]`: the host behind the wired link.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSpec {
    /// Its TCP receive settings (as a station's `tcp`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp: Option<TcpHostSpec>,
}

/// `tcp = { … }` of a host (a station, or `[server]`): how its kernel sizes the TCP
/// receive window (`tcp_rmem`, window scaling, the buffer's auto-tuning) and how fast
/// its application reads. Keys left out take the defaults of `kernel`, itself by
/// default the stack preset's era (`docs/scenarios.md` lists which).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpHostSpec {
    /// "4.9", "5.4" or "6.12": whose receive defaults the host has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    /// `net.ipv4.tcp_rmem`: `[min, default, max]` bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rmem_bytes: Option<[u32; 3]>,
    /// `net.ipv4.tcp_adv_win_scale` (−31 to 31; kernels before 6.6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adv_win_scale: Option<i8>,
    /// 6.6+'s `scaling_ratio` (1–255, in 256ths of the buffer offered as window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scaling_ratio: Option<u8>,
    /// `net.ipv4.tcp_moderate_rcvbuf`: the receive buffer's auto-tuning (default on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moderate_rcvbuf: Option<bool>,
    /// The receiving application reads at most this fast (a slow reader); absent: it
    /// reads everything at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_rate_mbps: Option<f64>,
    /// A fixed window of this many bytes instead of Linux's (txop before the receive
    /// window was modelled: 16777216); excludes the other keys but `read_rate_mbps`'s
    /// absence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixed_window_bytes: Option<u64>,
}

pub(crate) fn default_stack() -> String {
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
    /// "mt7915" or "mt7996": the token pool of an `mt76` preset's firmware stage.
    pub mt76_chip: Option<String>,
    pub hw_queue_ppdus: Option<u32>,
    pub max_ampdu_subframes: Option<u16>,
    /// mac80211's A-MSDU at enqueue (the driver sets `TX_AMSDU`); off in every preset.
    pub amsdu: Option<bool>,
    /// The stations' (and the AP's) advertised A-MSDU limit: 0 (the capability's
    /// default) or 3839, 7935, 3895, 7991, 11454.
    pub amsdu_max_len_bytes: Option<u16>,
    /// "Max Number Of MSDUs In A-MSDU": 0 (none), 8, 16 or 32.
    pub amsdu_max_subframes: Option<u16>,
    /// `hw->max_tx_fragments`: skbs per A-MSDU, 0 (none) to 255 (mt76: 16).
    pub amsdu_max_frags: Option<u16>,
}

pub(crate) fn default_seed() -> u64 {
    1
}

/// `[phy]`: the BSS's PHY.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Phy {
    /// "b", "a", "g", "n", "ac" or "ax".
    pub standard: Standard,
    /// "2.4" or "5" (GHz); a number is accepted too.
    #[serde(deserialize_with = "band_from_str_or_number")]
    pub band: Band,
    /// 20, 40, 80 or 160 (MHz; 40 and 80 HT/VHT/HE, 160 HE only).
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
    /// 802.11ax: the guard interval of HE data and HE-LTF symbols, µs: 0.8 (default),
    /// 1.6 or 3.2.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub he_gi_us: Option<f64>,
    /// 802.11ax: the HE-LTF size, "1x", "2x" (default) or "4x", paired with the GI as
    /// the standard allows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub he_ltf: Option<HeLtf>,
    /// 802.11ax: the receivers' nominal packet padding, µs: 0 (default), 8 or 16.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub he_pe_us: Option<u32>,
    /// 802.11ax: the PPDU format, "su" (default) or "er-su" (extended range).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub he_format: Option<HeFormat>,
}

/// `band = "5"` and `band = 5` (or `--set phy.band=2.4`) mean the same.
pub(crate) fn band_from_str_or_number<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Band, D::Error> {
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
            he_gi_us: None,
            he_ltf: None,
            he_pe_us: None,
            he_format: None,
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
    /// A rate fixed for this direction, as the station's `mcs` (HT/VHT; `nss` is the
    /// station's): the AP's `iw dev … set bitrates` for the downlink while the station
    /// keeps its own rate control, or the reverse.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mcs: Option<u8>,
    /// A legacy rate fixed for this direction, Mbit/s (as the station's `rate_mbps`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_mbps: Option<f64>,
}

/// The keys of one station, declared once: `[stations]` gives them to every station,
/// a `[[stations.list]]` entry to its own ([`crate::schema::StationEntry`]), and
/// [`StationKeys`] holds them as one station's, inherited (`inherit.rs`).
///
/// A new station key goes here, and nowhere else in the schema: its doc comment, its
/// serde attributes, `name: Option<T>`. Then give it its inheritance rule if it is
/// not inherited alone (`StationKeys::over`) and resolve it (`resolve/mod.rs`). Every
/// key is an `Option`: absent means inherited, or the default.
///
/// Written as a macro, not a struct flattened into the two tables, because serde's
/// `flatten` does not go with `deny_unknown_fields` and buffers the table, which would
/// change the errors users see (their key paths and the unknown-key lists).
macro_rules! station_keys {
    ($then:ident! { $($args:tt)* }) => {
        $then! {
            { $($args)* }
            /// Airtime-fairness weight (default 256): airtime is shared in proportion.
            weight: Option<u16>,
            /// HT MCS 0–15 or VHT MCS 0–9.
            mcs: Option<u8>,
            /// VHT spatial streams (1–2).
            nss: Option<u8>,
            /// Legacy rate in Mbit/s instead of an MCS: OFDM 6–54 (802.11a/g, or an
            /// 802.11a/g station in an 802.11n/ac BSS), DSSS/CCK 1, 2, 5.5, 11 (802.11b, or
            /// an 802.11b station in a 2.4 GHz 802.11g/n BSS).
            rate_mbps: Option<f64>,
            /// SNR at the receiver in dB: frames fail per the PER-vs-SNR curves. With no
            /// rate given, the best rate for this SNR is chosen.
            snr_db: Option<f64>,
            /// Distance from the AP in metres, instead of snr_db: the SNR follows from
            /// `phy.tx_power_dbm` and a log-distance path loss (`phy.path_loss_exponent`).
            distance_m: Option<f64>,
            /// Fixed MPDU loss probability (instead of snr_db).
            loss: Option<f64>,
            /// Position on the floor plan, `[x, y]` in metres (the AP is at
            /// `phy.ap_position_m`), instead of snr_db: the SNR follows from the distance
            /// as for `distance_m`.
            #[serde(skip_serializing_if = "Option::is_none")]
            position_m: Option<[f64; 2]>,
            /// Velocity `[vx, vy]` in m/s from `position_m` (or `distance_m`) at time 0.
            #[serde(skip_serializing_if = "Option::is_none")]
            velocity_mps: Option<[f64; 2]>,
            /// `[[t_s, x_m, y_m], …]`: positions at times (increasing), straight lines
            /// between, held before the first and after the last; instead of a position.
            #[serde(skip_serializing_if = "Option::is_none")]
            waypoints: Option<Vec<[f64; 3]>>,
            /// "none", "rayleigh" or "rician": block fading around the mean SNR.
            #[serde(skip_serializing_if = "Option::is_none")]
            fading: Option<String>,
            /// The Rician K factor in dB (fading = "rician").
            #[serde(skip_serializing_if = "Option::is_none")]
            fading_k_db: Option<f64>,
            /// How long a fade holds, ms (default: the band's at walking speed).
            #[serde(skip_serializing_if = "Option::is_none")]
            coherence_ms: Option<f64>,
            /// A CSV file of `time_s, station, snr_db` (relative to the scenario file),
            /// instead of snr_db: the SNR over time, replayed.
            #[serde(skip_serializing_if = "Option::is_none")]
            snr_trace: Option<String>,
            /// "linear" (default) or "step" between the trace's points.
            #[serde(skip_serializing_if = "Option::is_none")]
            snr_trace_interpolation: Option<String>,
            /// AP → station: the channel keys for this direction only.
            #[serde(skip_serializing_if = "Option::is_none")]
            downlink: Option<DirectionSpec>,
            /// Station → AP: the channel keys for this direction only.
            #[serde(skip_serializing_if = "Option::is_none")]
            uplink: Option<DirectionSpec>,
            /// "fixed", "ideal", "minstrel_ht", "minstrel_ht-5.10" or "minstrel_ht-6".
            #[serde(skip_serializing_if = "Option::is_none")]
            rate_control: Option<String>,
            /// Background software scanning (`scan = { policy = "bounded" }`).
            #[serde(skip_serializing_if = "Option::is_none")]
            scan: Option<ScanSpec>,
            /// Dynamic power save (`power_save = {}` for the defaults).
            #[serde(skip_serializing_if = "Option::is_none")]
            power_save: Option<PowerSaveSpec>,
            /// The station host's TCP receive settings (`tcp = { kernel = "4.9" }`).
            #[serde(skip_serializing_if = "Option::is_none")]
            tcp: Option<TcpHostSpec>,
            /// A host bus between the station's CPU and its chip: a preset name or a
            /// table.
            #[serde(
                default,
                skip_serializing_if = "Option::is_none",
                deserialize_with = "bus_from_name_or_table",
                serialize_with = "bus_as_name_or_table"
            )]
            bus: Option<BusSpec>,
            /// The station group it is reported in (results' `groups`, the summary
            /// beyond 20 stations, the plots): by default its `[[stations.list]]`
            /// entry (`list[0]` for `stations.list[0]`, or `stations` without a list); entries
            /// that give the same name make one group. Changes nothing in the model.
            #[serde(skip_serializing_if = "Option::is_none")]
            group: Option<String>,
        }
    };
}

/// A table with the station keys between its own first and last keys (the order in
/// which they are written back and listed in an unknown key's error).
macro_rules! station_table {
    (
        {
            $(#[$meta:meta])*
            pub struct $name:ident {
                $( $(#[$hm:meta])* pub $h:ident: $hty:ty, )*
            } then {
                $( $(#[$tm:meta])* pub $t:ident: $tty:ty, )*
            }
        }
        $( $(#[$fm:meta])* $f:ident: $fty:ty, )*
    ) => {
        $(#[$meta])*
        pub struct $name {
            $( $(#[$hm])* pub $h: $hty, )*
            $( $(#[$fm])* pub $f: $fty, )*
            $( $(#[$tm])* pub $t: $tty, )*
        }

        impl $name {
            /// Its station keys, as written.
            pub fn keys(&self) -> StationKeys {
                StationKeys { $( $f: self.$f.clone(), )* }
            }

            /// The table of its own keys and the station keys `keys`.
            pub fn from_parts($( $h: $hty, )* keys: StationKeys, $( $t: $tty, )*) -> Self {
                $name { $( $h, )* $( $f: keys.$f, )* $( $t, )* }
            }
        }
    };
}

/// [`StationKeys`] itself, with the two helpers inheritance is built on.
macro_rules! station_keys_struct {
    (
        { $(#[$meta:meta])* pub struct $name:ident; }
        $( $(#[$fm:meta])* $f:ident: $fty:ty, )*
    ) => {
        $(#[$meta])*
        pub struct $name {
            $( $(#[$fm])* pub $f: $fty, )*
        }

        impl $name {
            /// The keys' names, in order.
            pub const NAMES: &'static [&'static str] = &[$( stringify!($f), )*];

            /// Each key: its own value, else `base`'s (a table replaced whole). The
            /// default rule of inheritance; `StationKeys::over` adds the groups.
            pub fn or(&self, base: &$name) -> $name {
                $name { $( $f: Option::or(self.$f.clone(), base.$f.clone()), )* }
            }

            /// The names of the keys it gives.
            pub fn given(&self) -> Vec<&'static str> {
                let mut names = Vec::new();
                $( if self.$f.is_some() { names.push(stringify!($f)); } )*
                names
            }
        }
    };
}

station_keys!(station_keys_struct! {
    /// One station's keys: a `[[stations.list]]` entry over `[stations]`
    /// (`StationKeys::over`), or `[stations]`'s own for every station.
    #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct StationKeys;
});

station_keys!(station_table! {
    /// One entry of `[[stations.list]]`: fields left out are inherited from `[stations]`.
    #[derive(Clone, Debug, Default, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct StationEntry {
        /// How many identical stations this entry stands for (default 1).
        pub count: Option<u16>,
    } then {}
});

station_keys!(station_table! {
    /// `[stations]`: how many and at which rates. The link fields (`mcs`, `nss`,
    /// `rate_mbps`, `snr_db`, `loss`, the channel keys, `rate_control`) and the
    /// station's own machinery (`scan`, `power_save`, `bus`) apply to every station
    /// unless a list entry says otherwise.
    #[derive(Clone, Debug, Serialize, Deserialize)]
    #[serde(deny_unknown_fields, default)]
    pub struct Stations {
        /// Number of stations when there is no `list` (with a list it must stay 1).
        pub count: u16,
    } then {
        /// Explicit stations (each may repeat with `count`); overrides `count`.
        pub list: Vec<StationEntry>,
    }
});

impl Default for Stations {
    fn default() -> Self {
        Stations::from_parts(1, StationKeys::default(), Vec::new())
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
    pub(crate) fn is_bare(&self) -> bool {
        *self
            == BusSpec {
                preset: self.preset.clone(),
                ..BusSpec::default()
            }
    }
}
/// `bus = "name"` or `bus = { preset = "name", … }`; a table keeps its errors' paths.
pub(crate) fn bus_from_name_or_table<'de, D: serde::Deserializer<'de>>(
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
pub(crate) fn bus_as_name_or_table<S: serde::Serializer>(
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
pub(crate) fn string_or_number<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
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
