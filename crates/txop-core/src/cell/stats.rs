//! What a cell counts: per station and direction, and per transmission
//! ([`AirtimeRecord`], emitted as [`super::Output::Airtime`]).

use crate::mac::edca::Ac;
use crate::mac::exchange::ExchangeOutcome;
use crate::mac80211::powersave::PsStats;
use crate::mac80211::scan::ScanStats;
use crate::packet::NodeId;
use crate::Nanos;

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
