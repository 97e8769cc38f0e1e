//! What went on the air, PPDU by PPDU, for a packet capture (issue 17).
//!
//! When asked ([`Cell::capture_air`](crate::Cell::capture_air)) the cell records every
//! PPDU it puts on the air as an [`CapturedPpdu`]: when it started and ended, who sent it to
//! whom, what frame(s) it carried with the fields a sniffer would decode (sequence
//! numbers, TID, Retry bit, BlockAck bitmap, Duration), its rate, and what its
//! addressee made of it. The driver drains them with
//! [`Cell::poll_capture`](crate::Cell::poll_capture) and writes them out (txop-capture
//! turns them into radiotap pcapng). Nothing is recorded, and nothing costs more than
//! one branch per exchange, while capture is off.
//!
//! When a record is made:
//!
//! - one collision domain (`air/exchange.rs`): an exchange is laid out whole when it
//!   starts, so all its PPDUs (RTS, CTS or CTS-to-self, data, ACK or BlockAck; a
//!   collision's overlapping PPDUs) are recorded then, in order of their ends;
//! - with space (`air/medium/spatial.rs`): each PPDU when it ends (its outcome is known then).
//!
//! Either way one builder makes the record (`Air::captured_ppdu`, `air/capture.rs`) from the
//! exchange's frame sequence and what the medium says it heard (`HeardPpdu`).
//!
//! Either way a record is made before any packet it carries is reported delivered or
//! dropped ([`Output`](crate::Output)), so a driver that drains the capture before the
//! outputs still knows every packet the record names.

use crate::driver::Ppdu;
use crate::mac::edca::Ac;
use crate::mac80211::powersave::BeaconClock;
use crate::packet::{NodeId, Packet};
use crate::phy::TxVector;
use crate::Nanos;
use std::collections::VecDeque;

/// Records held until the driver drains them: far more than one call into the cell
/// produces (an exchange is at most a few PPDUs; a collision a few more per
/// transmitter). Past this the oldest are dropped and counted
/// ([`AirCapture::overflowed`]).
pub const CAPTURE_BUFFER_PPDUS: usize = 1 << 16;

/// What frame a PPDU carried (802.11-2016 9.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CapturedFrame {
    /// (QoS) data: the MPDUs are in [`CapturedPpdu::mpdus`], one or an A-MPDU's.
    Data {
        /// The MPDUs' TID (user priority).
        tid: u8,
        /// QoS data (with a QoS Control field) rather than plain data.
        qos: bool,
    },
    /// An ACK to a lone MPDU.
    Ack,
    /// A compressed BlockAck to an A-MPDU: bit `i` of `bitmap` says whether MPDU
    /// `ssn + i` (mod 4096) was received.
    BlockAck {
        /// The TID it acknowledges.
        tid: u8,
        /// The starting sequence number (12 bits).
        ssn: u16,
        /// One bit per sequence number from `ssn`.
        bitmap: u64,
    },
    /// Request to send.
    Rts,
    /// Clear to send, in answer to an RTS.
    Cts,
    /// CTS-to-self in front of a protected data PPDU (its receiver is its sender).
    CtsToSelf,
    /// The AP's beacon number `k`, with the stations it buffers frames for (its TIM),
    /// and the beacon clock it keeps (`mac.beacon_interval_tu`, `mac.dtim_period`).
    Beacon {
        /// The beacon's number since the start.
        k: u64,
        /// Bit `n` set: the AP buffers frames for station `n` (1 to 63).
        tim: u64,
        /// The beacon interval field, TU (1024 µs).
        interval_tu: u16,
        /// The TIM's DTIM period, beacons.
        dtim_period: u8,
        /// The TIM's DTIM count: beacons until the next DTIM, 0 on a DTIM
        /// (802.11-2016 9.4.2.6).
        dtim_count: u8,
    },
    /// A station's PS-Poll.
    PsPoll,
    /// A station's null-data frame with its power-management bit.
    NullData {
        /// PM bit: 1 = the station goes to sleep.
        pm: bool,
    },
}

/// One MPDU of a data PPDU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CapturedMpdu {
    /// The packet it carries (the flow facts the capture's synthetic headers come
    /// from, and txop's own: when it was queued, its AQL charge).
    pub packet: Packet,
    /// Its 802.11 sequence number (12 bits).
    pub seq: u16,
    /// A retransmission (the Retry bit).
    pub retry: bool,
    /// Its transmission attempts so far, this one included.
    pub attempts: u8,
    /// When the MAC first took it from the queue.
    pub dequeued_at: Nanos,
    /// Its addressee decoded it (false: a bad FCS).
    pub received: bool,
    /// The transmitter gives it up after this attempt (the retry limit): a
    /// `retry_limit` drop. Known only in one collision domain (with space the
    /// BlockAck's fate is not known when the data PPDU ends); false otherwise.
    pub given_up: bool,
}

/// One PPDU on the air.
#[derive(Clone, Debug, PartialEq)]
pub struct CapturedPpdu {
    /// When its first symbol went on the air.
    pub start: Nanos,
    /// When its last symbol did.
    pub end: Nanos,
    /// Its transmitter.
    pub transmitter: NodeId,
    /// Its addressee (`None`: broadcast, a beacon). A CTS-to-self names its sender.
    pub receiver: Option<NodeId>,
    /// The frame it carries.
    pub frame: CapturedFrame,
    /// Sent as an A-MPDU.
    pub aggregated: bool,
    /// The data MPDUs (empty for other frames).
    pub mpdus: Vec<CapturedMpdu>,
    /// Its PHY rate and format.
    pub txv: TxVector,
    /// Its PSDU length in bytes (an A-MPDU's with delimiters and padding).
    pub psdu_bytes: u32,
    /// The Duration field as sent, µs: how long after its end the exchange holds the
    /// medium (the NAV it sets).
    pub duration_us: u16,
    /// Its addressee decoded it (a data PPDU: at least one MPDU; broadcast: true).
    pub received: bool,
    /// The power it reached its addressee at (dBm), where the channel model knows it
    /// (an SNR-based link or a space).
    pub signal_dbm: Option<f64>,
    /// The noise floor at the addressee, dBm.
    pub noise_dbm: f64,
    /// The access category it was sent on.
    pub ac: Ac,
    /// For data: this transmission's number along the rate chain (1 = first try).
    pub tx_try: u32,
    /// For data: the rate chain's stages (rate, tries) as rate control set them.
    pub chain: Vec<(TxVector, u8)>,
    /// For data sent by the AP: the AQL airtime (µs) pending for the station's AC when
    /// the PPDU went out.
    pub aql_pending_us: Option<u32>,
    /// For data: the MSDUs of its A-MSDUs (reference §16), in order: an MPDU whose
    /// packet carries `amsdu_msdus` = k ≥ 2 MSDUs takes the next k. Empty without
    /// A-MSDU.
    pub amsdu_msdus: Vec<Packet>,
}

/// The cell's record of what it put on the air, until drained: bounded
/// ([`CAPTURE_BUFFER_PPDUS`]).
#[derive(Clone, Debug, Default)]
pub struct AirCapture {
    records: VecDeque<CapturedPpdu>,
    /// Records dropped because the driver did not drain them in time.
    pub overflowed: u64,
}

impl AirCapture {
    /// Keep `ppdu` (dropping the oldest record if the buffer is full).
    pub fn push(&mut self, ppdu: CapturedPpdu) {
        if self.records.len() >= CAPTURE_BUFFER_PPDUS {
            self.records.pop_front();
            self.overflowed += 1;
        }
        self.records.push_back(ppdu);
    }

    /// The oldest record not yet drained.
    pub fn pop(&mut self) -> Option<CapturedPpdu> {
        self.records.pop_front()
    }

    /// Records waiting.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// No record waiting.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }
}

/// How the capture shows beacon `k` of a BSS whose beacons follow `clock`, with the
/// TIM bits `tim` (bit *n*: the AP buffers for station *n*).
pub(crate) fn captured_beacon(k: u64, clock: &BeaconClock, tim: u64) -> CapturedFrame {
    CapturedFrame::Beacon {
        k,
        tim,
        interval_tu: clock.interval_tu(),
        dtim_period: clock.dtim_period,
        dtim_count: clock.dtim_count(k),
    }
}

/// A Duration field in µs from the time the exchange still holds the medium after a
/// frame ends: rounded up (802.11-2016 9.2.5.2), at most 32 767 (the field's 15 bits).
pub fn duration_field_us(after_end: Nanos) -> u16 {
    after_end.as_ns().div_ceil(1000).min(32_767) as u16
}

/// The MPDUs of `ppdu` as captured: `ok[i]` whether its addressee decoded MPDU `i`
/// (missing: not decoded), `given_up(i)` whether its sender gives it up now.
pub(crate) fn captured_mpdus(
    ppdu: &Ppdu,
    ok: &[bool],
    given_up: impl Fn(usize) -> bool,
) -> Vec<CapturedMpdu> {
    ppdu.mpdus
        .iter()
        .enumerate()
        .map(|(i, m)| CapturedMpdu {
            packet: m.packet,
            seq: (m.seq & 0xfff) as u16,
            retry: m.attempts > 1,
            attempts: m.attempts,
            dequeued_at: m.dequeued_at,
            received: ok.get(i).copied().unwrap_or(false),
            given_up: given_up(i),
        })
        .collect()
}

/// The response to `ppdu` whose MPDUs were decoded as `ok` says: an ACK to a lone
/// MPDU, a compressed BlockAck to an A-MPDU whose window starts at its lowest
/// sequence number (an A-MPDU spans at most the 64-frame window).
pub(crate) fn response_frame(ppdu: &Ppdu, ok: &[bool]) -> CapturedFrame {
    if !ppdu.aggregated {
        return CapturedFrame::Ack;
    }
    let ssn = ppdu.mpdus.iter().map(|m| m.seq).min().unwrap_or(0);
    let mut bitmap = 0u64;
    for (m, &o) in ppdu.mpdus.iter().zip(ok) {
        let bit = m.seq - ssn;
        if o && bit < 64 {
            bitmap |= 1 << bit;
        }
    }
    CapturedFrame::BlockAck {
        tid: ppdu.tid.0,
        ssn: (ssn & 0xfff) as u16,
        bitmap,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duration_field_rounds_up_and_saturates() {
        assert_eq!(duration_field_us(Nanos::ZERO), 0);
        assert_eq!(duration_field_us(Nanos(1)), 1);
        assert_eq!(duration_field_us(Nanos::from_us(44)), 44);
        assert_eq!(duration_field_us(Nanos::from_ms(100)), 32_767);
    }

    #[test]
    fn a_full_buffer_drops_its_oldest_record() {
        let mut c = AirCapture::default();
        let ppdu = |k: u64| CapturedPpdu {
            start: Nanos(k),
            end: Nanos(k + 1),
            transmitter: NodeId::AP,
            receiver: None,
            frame: CapturedFrame::Beacon {
                k,
                tim: 0,
                interval_tu: 100,
                dtim_period: 2,
                dtim_count: 1,
            },
            aggregated: false,
            mpdus: Vec::new(),
            txv: TxVector::Ofdm { rate_mbps: 6 },
            psdu_bytes: 200,
            duration_us: 0,
            received: true,
            signal_dbm: None,
            noise_dbm: -95.0,
            ac: Ac::Vo,
            tx_try: 1,
            chain: Vec::new(),
            aql_pending_us: None,
            amsdu_msdus: Vec::new(),
        };
        for k in 0..CAPTURE_BUFFER_PPDUS as u64 + 2 {
            c.push(ppdu(k));
        }
        assert_eq!(c.len(), CAPTURE_BUFFER_PPDUS);
        assert_eq!(c.overflowed, 2);
        assert_eq!(c.pop().map(|p| p.start), Some(Nanos(2)));
    }
}
