//! Scenario files: TOML describing the cell and its traffic (documented key by key in
//! `docs/scenarios.md`).
//!
//! Loading is three steps: parse the TOML into a table, apply `--set key=value`
//! overrides to the table, then deserialise into [`Scenario`] with unknown keys
//! rejected and every error reported with its dotted key path. [`Scenario::resolve`]
//! then checks the values against each other and builds the simulator's configuration.
//!
//! One job per file: [`schema`] (the serde types; each station key declared once, in
//! its `station_keys!`), `overrides` (`--set`), `parse` (text to [`Scenario`]),
//! `inherit` (what a station takes from `[stations]`, a direction from its station and
//! a `[[bss]]` entry from the top level), `resolve` (into the model's configurations,
//! with `space` and `bss` for `[space]` and `[[bss]]`) and `error` ([`ScenarioError`]:
//! the key, and what is wrong with it).

mod bss;
pub mod builtin;
mod error;
mod inherit;
mod overrides;
mod parse;
mod resolve;
pub mod schema;
mod space;
#[cfg(test)]
mod tests;

pub use bss::{channel_groups, BssSpec, ResolvedBss};
pub use error::{BssEntry, ScenarioError};
pub use overrides::apply_override;
pub use parse::parse;
pub use schema::{
    BusSpec, Direction, DirectionSpec, EdcaOverride, EdcaOverrides, FlowKind, FlowSpec, Kernel,
    Mac, Phy, PowerSaveSpec, ScanSpec, Scenario, StackOptions, StationEntry, StationKeys, Stations,
    Traffic, TrafficKind, WebSpec, Wired,
};
pub use space::Space;

/// Stations reported together ([`Scenario::station_groups`]): a `[[stations.list]]`
/// entry, or every entry that gives the same `group`.
#[derive(Clone, Debug, PartialEq)]
pub struct StationGroup {
    /// The `group` key, else the entry (`list[0]` for `stations.list[0]`).
    pub name: String,
    /// Its stations, numbered from 1 as in results.
    pub stations: Vec<u16>,
}

// What `bss` and `space` take from their parent.
use inherit::Link;
use resolve::choose_in;

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
    /// Longest station group name (`stations.group`), characters: it heads a row of
    /// the summary.
    pub const GROUP_NAME_CHARS: usize = 24;
    /// Received powers the BSSs' cells keep in all: each cell one per ordered pair of
    /// the nodes on its channel (16 bytes each), so 2^24 is 256 MiB; one cell of
    /// [`MAX_STATIONS`] stations keeps a quarter of it.
    pub const MAX_AIR_PAIRS: u64 = 1 << 24;
}
