//! What a run reports. Serialised as the `--json` object (documented in
//! `docs/results.md`).

use serde::Serialize;

/// One run's results.
#[derive(Clone, Debug, Serialize)]
pub struct Results {
    pub seed: u64,
    pub duration_s: f64,
    /// Payload bits delivered per second, all stations, both directions.
    pub total_throughput_bps: f64,
    /// Fraction of the run the medium was busy.
    pub busy_fraction: f64,
    /// Jain's fairness index over the stations' airtime shares.
    pub airtime_jain_index: f64,
    pub stations: Vec<StationResult>,
    pub conservation: Conservation,
}

/// One station's share of the run.
#[derive(Clone, Debug, Serialize)]
pub struct StationResult {
    pub station: u16,
    /// The link's modulation and rate.
    pub rate: String,
    pub throughput_bps: f64,
    pub uplink_bps: f64,
    pub downlink_bps: f64,
    /// This station's airtime (both directions) over the medium's busy time.
    pub airtime_share: f64,
    pub airtime_ns: u64,
    pub ppdus: u64,
    pub mpdus: u64,
    pub collisions: u64,
    pub failures: u64,
    pub mpdu_retries: u64,
    pub dropped_queue_full: u64,
    pub dropped_retry_limit: u64,
}

/// Packet accounting: offered = delivered + dropped + inside.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Conservation {
    pub offered_packets: u64,
    pub delivered_packets: u64,
    pub dropped_packets: u64,
    /// Still queued, in the air, or held in a reorder buffer at the end.
    pub inside_packets: u64,
}
