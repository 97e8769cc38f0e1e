//! What a cell counts: per station and direction, and per transmission
//! ([`AirtimeRecord`], emitted as [`super::Output::Airtime`]).

use crate::mac::edca::Ac;
use crate::mac::sequence::ExchangeOutcome;
use crate::mac80211::powersave::PsStats;
use crate::mac80211::rate_chain::MAX_RATE_STAGES;
use crate::mac80211::scan::ScanStats;
use crate::packet::NodeId;
use crate::phy::TxVector;
#[cfg(doc)]
use crate::series::STEP;
use crate::series::{sum_bytes, StepSeries};
use crate::Nanos;

/// Airtime of one transmission, charged to the station at the far end of the link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AirtimeRecord {
    /// The station at the far end of the link (the transmitter on the uplink, the
    /// receiver on the downlink).
    pub station: NodeId,
    /// Station → AP.
    pub uplink: bool,
    /// The access category whose EDCA function won the medium.
    pub ac: Ac,
    /// Where the charged time starts: the exchange's start, or within a TXOP the end of
    /// the previous exchange (the SIFS between them is the holder's), so a lone
    /// transmitter's records tile the busy time. For a collision, the transmission's
    /// own start.
    pub start: Nanos,
    /// Medium time charged: the whole exchange (RTS/CTS, data, SIFS, ACK) or, for a
    /// collision, the time its own first PPDU held the air, time shared with the other
    /// colliders split equally (`air/charge.rs`).
    pub airtime: Nanos,
    /// MPDUs in the data PPDU (one, or the subframes of an A-MPDU).
    pub mpdus: u16,
    /// MPDUs the receiver acknowledged (the bits set in the BlockAck).
    pub acked_mpdus: u16,
    /// How the exchange ended.
    pub outcome: ExchangeOutcome,
}

/// Counters of one direction of one station's link.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// Packets handed to the cell for this link ([`Cell::handle_packet`](crate::cell::Cell::handle_packet)).
    pub offered_packets: u64,
    /// Packets the receiver released, in sequence order, as [`super::Output::Delivered`].
    pub delivered_packets: u64,
    /// Bytes of the delivered packets (`Packet::len_bytes`).
    pub delivered_bytes: u64,
    /// PPDUs sent (first transmissions and retries).
    pub ppdus: u64,
    /// MPDUs sent in those PPDUs (first transmissions and retries).
    pub mpdus: u64,
    /// MPDU transmissions that were retransmissions.
    pub mpdu_retries: u64,
    /// PPDUs lost in a collision.
    pub collisions: u64,
    /// PPDUs that got no response for another reason (channel errors).
    pub failures: u64,
    /// PPDUs acknowledged although another PPDU overlapped them at the receiver: the
    /// receiver held on to them or captured them (cells with space only).
    pub captures: u64,
    /// Dropped because a queue was full ([`DropReason::QueueFull`](crate::DropReason::QueueFull)).
    pub dropped_queue_full: u64,
    /// Dropped after the last allowed transmission failed
    /// ([`DropReason::RetryLimit`](crate::DropReason::RetryLimit)).
    pub dropped_retry_limit: u64,
    /// Dropped by CoDel or by flow-queue overload (limit or memory).
    pub dropped_aqm: u64,
    /// Dropped from the AP's power-save buffer (downlink only).
    pub dropped_ps_buffer: u64,
    /// Airtime of the link's exchanges, including the station's null-data frames and
    /// PS-Polls (uplink).
    pub airtime_ns: u64,
    /// Data PPDU transmissions by the stage of the retry chain they went out at.
    pub stage_tries: [u64; MAX_RATE_STAGES],
    /// Probes: first tries of PPDUs whose chain starts with a sample rate.
    pub probes: u64,
    /// Airtime of those probe PPDUs, every try: at the sample rate and down the chain
    /// after it fails.
    pub probe_airtime_ns: u64,
}

/// How much one rate was used on one direction of a station's link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateUse {
    /// The rate.
    pub txv: TxVector,
    /// Data PPDU transmissions at it (first tries and retries).
    pub ppdus: u64,
    /// Their airtime (each transmission's exchange, as in [`LinkStats::airtime_ns`]).
    pub airtime_ns: u64,
}

/// Per-station counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StationStats {
    /// Station → AP.
    pub up: LinkStats,
    /// AP → station.
    pub down: LinkStats,
    /// Background scanning (all zero if the station does not scan).
    pub scan: ScanStats,
    /// Power save, the station's and the AP's side (all zero without).
    pub ps: PsStats,
}

impl StationStats {
    /// Airtime charged to the station, both directions.
    pub fn airtime_ns(&self) -> u64 {
        self.up.airtime_ns + self.down.airtime_ns
    }
}

/// The PHY rate one direction of a station's link sent at over time: per step of the
/// time series ([`crate::series`]), the airtime-weighted mean rate of its data
/// transmissions. Kept only for links whose rate control is not fixed.
#[derive(Clone, Debug, Default)]
pub struct RateSeries {
    /// Per step: Σ rate (kbit/s) × airtime (µs).
    rate_airtime: StepSeries,
    /// Per step: Σ airtime (µs).
    airtime_us: StepSeries,
}

impl RateSeries {
    /// A transmission at `rate_bps` started at `at` and took `airtime_ns`.
    pub(crate) fn record(&mut self, at: Nanos, rate_bps: u64, airtime_ns: u64) {
        let airtime_us = airtime_ns / 1000;
        for (series, value) in [
            (&mut self.rate_airtime, rate_bps / 1000 * airtime_us),
            (&mut self.airtime_us, airtime_us),
        ] {
            let step = series.index(at, sum_bytes);
            if series.values.len() <= step {
                series.values.resize(step + 1, 0);
            }
            series.values[step] += value;
        }
    }

    /// How many times the series' step has doubled so far.
    pub fn shift(&self) -> u32 {
        self.airtime_us.shift.max(self.rate_airtime.shift)
    }

    /// The mean rate (bit/s) per step of [`STEP`] doubled `shift` times, `steps` steps
    /// from time 0; 0 for a step without transmissions.
    pub fn mean_rate_bps(&self, shift: u32, steps: usize) -> Vec<f64> {
        let num = self.rate_airtime.at_shift(shift, sum_bytes);
        let den = self.airtime_us.at_shift(shift, sum_bytes);
        (0..steps)
            .map(|i| match (num.get(i), den.get(i)) {
                (Some(&n), Some(&d)) if d > 0 => n as f64 / d as f64 * 1000.0,
                _ => 0.0,
            })
            .collect()
    }
}
