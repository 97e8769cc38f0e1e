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
//! Either way one builder makes the record (`Cell::captured_ppdu`) from the
//! exchange's frame sequence and what the medium says it heard (`HeardPpdu`).
//!
//! Either way a record is made before any packet it carries is reported delivered or
//! dropped ([`Output`](crate::Output)), so a driver that drains the capture before the
//! outputs still knows every packet the record names.

use crate::air::exchange::Tx;
use crate::cell::Cell;
use crate::driver::Ppdu;
use crate::mac::edca::Ac;
use crate::mac::frame::{CtlFrame, DataFrame, Frame, MgmtFrame};
use crate::mac::sequence::{PpduKind, SequencePpdu};
use crate::mac80211::powersave::{BeaconClock, DEFAULT_BEACON_INTERVAL_TU, DEFAULT_DTIM_PERIOD};
use crate::mac80211::txq::LinkId;
use crate::packet::{NodeId, Packet, StationId};
use crate::phy::channel::ErrorModel;
use crate::phy::path_loss::noise_dbm;
use crate::phy::{ChannelWidth, TxVector};
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

/// A Duration field in µs from the time the exchange still holds the medium after a
/// frame ends: rounded up (802.11-2016 9.2.5.2), at most 32 767 (the field's 15 bits).
pub fn duration_field_us(after_end: Nanos) -> u16 {
    after_end.as_ns().div_ceil(1000).min(32_767) as u16
}

impl Cell {
    /// Record every PPDU this cell puts on the air from now on, for
    /// [`Cell::poll_capture`], which the caller must then drain after every call (at
    /// least before [`Cell::poll_output`], so that the packets a record names are still
    /// in flight for the caller). Off by default: then nothing is recorded.
    pub fn capture_air(&mut self) {
        self.capture.get_or_insert_with(Box::default);
    }

    /// The next PPDU recorded since capture started ([`Cell::capture_air`]).
    pub fn poll_capture(&mut self) -> Option<CapturedPpdu> {
        self.capture.as_mut()?.pop()
    }

    /// Records lost because the caller did not drain them in time (zero when it
    /// drains after every call).
    pub fn capture_overflowed(&self) -> u64 {
        self.capture.as_ref().map_or(0, |c| c.overflowed)
    }

    /// Keep `record` (capture is on).
    pub(crate) fn capture_push(&mut self, record: CapturedPpdu) {
        if let Some(c) = self.capture.as_mut() {
            c.push(record);
        }
    }

    /// The noise floor a receiver of `txv` sees (thermal noise over its width plus
    /// the receiver's noise figure, as the space uses).
    pub(crate) fn capture_noise_dbm(txv: &TxVector) -> f64 {
        let width = match *txv {
            TxVector::Ht { width, .. }
            | TxVector::Vht { width, .. }
            | TxVector::He { width, .. } => width,
            TxVector::Dsss { .. } | TxVector::Ofdm { .. } => ChannelWidth::Mhz20,
        };
        noise_dbm(width)
    }

    /// The power node `from`'s PPDU on its `link` reaches the peer at, dBm, at `t`:
    /// known only on a link whose losses come from an SNR.
    fn capture_signal_dbm(
        &self,
        from: usize,
        link: LinkId,
        txv: &TxVector,
        t: Nanos,
    ) -> Option<f64> {
        match self.nodes[from].link(link).error_at(t) {
            ErrorModel::Snr { snr_db } => Some(snr_db + Self::capture_noise_dbm(txv)),
            ErrorModel::None | ErrorModel::FixedLoss { .. } => None,
        }
    }

    /// One collision domain: record every PPDU of the exchange just laid out
    /// (`resolve_single`, `resolve_frame`, `resolve_collision`), in order of their ends.
    #[inline(never)]
    pub(crate) fn capture_exchange(&mut self) {
        let mut records = Vec::new();
        let txs = &self.medium.shared().exch.txs;
        let collision = txs.len() > 1;
        for tx in txs {
            match tx.frame {
                Some(f) => self.capture_frame(tx, f, collision, &mut records),
                None => self.capture_data(tx, collision, &mut records),
            }
        }
        records.sort_by_key(|r| (r.end, r.start));
        for r in records {
            self.capture_push(r);
        }
    }

    /// The PPDUs of a data transmission `tx` in one collision domain: its exchange's
    /// sequence ([`Cell::sequence_of`]) as laid out from `tx.start`, SIFS apart. In a
    /// collision only the first PPDU goes out if it is an RTS (its CTS never comes);
    /// after a CTS-to-self the data follows. The response goes out if anything was
    /// decoded.
    fn capture_data(&self, tx: &Tx, collision: bool, out: &mut Vec<CapturedPpdu>) {
        let (n, link) = (tx.node.index(), tx.link());
        let peer = self.nodes[n].link(link).peer;
        let seq = self.sequence_of(tx);
        let (txv, sifs) = (tx.stage.txv, self.timing.sifs);
        let any_ok = tx.ok.iter().any(|&o| o);
        let signal = self.capture_signal_dbm(n, link, &txv, tx.start);
        let ctl = seq.get(PpduKind::Response).txv;
        let back = self.nodes[peer.index()].link_to(tx.node);
        let signal_back =
            back.and_then(|l| self.capture_signal_dbm(peer.index(), l, &ctl, tx.start));
        let mut start = tx.start;
        for p in seq.ppdus() {
            let end = if collision && p.kind == PpduKind::Rts {
                tx.air_end
            } else {
                start + p.duration
            };
            let received = match p.kind {
                PpduKind::Rts | PpduKind::Cts => !collision,
                PpduKind::CtsToSelf | PpduKind::Response => true,
                // (A data sequence's payload is its data PPDU.)
                PpduKind::Data | PpduKind::Own => !collision && any_ok,
            };
            let (transmitter, receiver, signal_dbm) = match p.kind {
                PpduKind::CtsToSelf => (tx.node, tx.node, None),
                k if k.sent_by_holder() => (tx.node, peer, signal),
                _ => (peer, tx.node, signal_back),
            };
            let heard = HeardPpdu {
                start,
                end,
                transmitter,
                receiver: Some(receiver),
                received,
                signal_dbm,
                noise_dbm: Self::capture_noise_dbm(&p.txv),
            };
            out.push(self.captured_ppdu(tx, p, heard));
            let last = match p.kind {
                // Only the RTS went out, into the collision.
                PpduKind::Rts => collision,
                PpduKind::Data => collision || !any_ok,
                _ => false,
            };
            if last {
                return;
            }
            start = end + sifs;
        }
    }

    /// The record of PPDU `p` of `tx`'s exchange, heard as its medium says (`heard`):
    /// the one builder of a record, on both media. The frame it carries follows from
    /// its kind; a data PPDU's MPDUs, retry chain and AQL state from `tx`
    /// ([`Cell::fill_captured_data`]).
    pub(crate) fn captured_ppdu(
        &self,
        tx: &Tx,
        p: &SequencePpdu,
        heard: HeardPpdu,
    ) -> CapturedPpdu {
        let frame = match (p.kind, tx.frame) {
            (PpduKind::Rts, _) => CapturedFrame::Rts,
            (PpduKind::Cts, _) => CapturedFrame::Cts,
            (PpduKind::CtsToSelf, _) => CapturedFrame::CtsToSelf,
            (PpduKind::Own, Some(f)) => self.captured_own_frame(f),
            (PpduKind::Response, Some(_)) => CapturedFrame::Ack,
            (PpduKind::Response, None) => response_frame(&tx.ppdu, &tx.ok),
            (PpduKind::Data | PpduKind::Own, _) => CapturedFrame::Data {
                tid: tx.ppdu.tid.0,
                qos: self.cfg.qos,
            },
        };
        let mut record = CapturedPpdu {
            start: heard.start,
            end: heard.end,
            transmitter: heard.transmitter,
            receiver: heard.receiver,
            frame,
            aggregated: false,
            mpdus: Vec::new(),
            txv: p.txv,
            psdu_bytes: p.bytes,
            duration_us: duration_field_us(p.nav_after),
            received: heard.received,
            signal_dbm: heard.signal_dbm,
            noise_dbm: heard.noise_dbm,
            ac: tx.ac,
            // One of the MAC's own frames counts its tries elsewhere (`frame_attempts`).
            tx_try: if tx.frame.is_some() { 1 } else { tx.ppdu.tries },
            chain: Vec::new(),
            aql_pending_us: None,
            amsdu_msdus: Vec::new(),
        };
        if p.kind == PpduKind::Data {
            self.fill_captured_data(&mut record, tx);
        }
        record
    }

    /// The data PPDU's own fields of `record`, from transmission `tx`: its MPDUs (and
    /// which are given up), whether it is an A-MPDU, its retry chain, the AP's pending
    /// AQL airtime.
    fn fill_captured_data(&self, record: &mut CapturedPpdu, tx: &Tx) {
        let (n, link) = (tx.node.index(), tx.link());
        let ppdu = &tx.ppdu;
        let ok: &[bool] = &tx.ok;
        let any_ok = ok.iter().any(|&o| o);
        // As `TxPath::tx_done` decides: an unanswered PPDU with tries left in its chain
        // is retried in place; otherwise each MPDU not acknowledged at its retry limit
        // is given up.
        let total = ppdu.chain.total_tries();
        let limit = total.max(u32::from(self.cfg.retry_limit));
        let in_place = !any_ok
            && ppdu.tries < total
            && (ppdu.aggregated
                || ppdu
                    .mpdus
                    .first()
                    .is_some_and(|m| u32::from(m.attempts) < limit));
        let retry_limit = self.cfg.retry_limit;
        record.mpdus = captured_mpdus(ppdu, ok, |i| {
            !in_place
                && !ok.get(i).copied().unwrap_or(false)
                && ppdu.mpdus[i].attempts >= retry_limit
        });
        record.aggregated = ppdu.aggregated;
        record.chain = ppdu
            .chain
            .stages()
            .iter()
            .map(|s| (s.txv, s.tries))
            .collect();
        record.aql_pending_us = (n == 0).then(|| self.nodes[n].path.aql_pending_us(link, tx.ac));
        if !self.nodes[n].path.amsdu.is_empty() {
            let store = &self.nodes[n].path.amsdu;
            for m in &ppdu.mpdus {
                record.amsdu_msdus.extend_from_slice(store.msdus(&m.packet));
            }
        }
    }

    /// How the capture shows one of the MAC's own frames: a beacon with its TIM (the
    /// stations the AP buffers for, up to AID 63), interval and DTIM count; a PS-Poll;
    /// a null-data frame with its PM bit.
    pub(crate) fn captured_own_frame(&self, f: Frame) -> CapturedFrame {
        match f {
            Frame::Mgmt(MgmtFrame::Beacon { k }) => {
                // Only a cell with management sends beacons; without, hostapd's
                // defaults.
                let default = BeaconClock::new(DEFAULT_BEACON_INTERVAL_TU, DEFAULT_DTIM_PERIOD);
                let clock = self.mgmt.as_ref().map_or(default, |m| m.clock);
                let mut tim = 0u64;
                if let Some(m) = &self.mgmt {
                    for sta in StationId::all(self.stations()).take(63) {
                        if m.buffers.buffered(sta) > 0 {
                            tim |= 1 << sta.0;
                        }
                    }
                }
                CapturedFrame::Beacon {
                    k,
                    tim,
                    interval_tu: clock.interval_tu(),
                    dtim_period: clock.dtim_period,
                    dtim_count: clock.dtim_count(k),
                }
            }
            Frame::Ctl(CtlFrame::PsPoll) => CapturedFrame::PsPoll,
            Frame::Data(DataFrame::NullData { pm }) => CapturedFrame::NullData { pm },
        }
    }

    /// The PPDUs of one of the MAC's own frames `f` sent by `tx` (its sequence,
    /// [`Cell::own_sequence`]): the frame, and the AP's ACK if the frame got through
    /// and asks for one (a beacon does not).
    fn capture_frame(&self, tx: &Tx, f: Frame, collision: bool, out: &mut Vec<CapturedPpdu>) {
        let n = tx.node.index();
        let seq = self.own_sequence(n, f);
        let beacon = matches!(f, Frame::Mgmt(MgmtFrame::Beacon { .. }));
        let ok = !collision && tx.ok.first() == Some(&true);
        let frame = seq.get(PpduKind::Own);
        let signal = if beacon {
            None
        } else {
            self.capture_signal_dbm(n, LinkId(0), &frame.txv, tx.start)
        };
        let heard = HeardPpdu {
            start: tx.start,
            end: tx.air_end,
            transmitter: tx.node,
            receiver: (!beacon).then_some(NodeId::AP),
            received: beacon || ok,
            signal_dbm: signal,
            noise_dbm: Self::capture_noise_dbm(&frame.txv),
        };
        out.push(self.captured_ppdu(tx, frame, heard));
        let (true, Some(sta)) = (!beacon && ok, tx.node.as_station()) else {
            return;
        };
        let ack = seq.get(PpduKind::Response);
        let start = tx.air_end + self.timing.sifs;
        let heard = HeardPpdu {
            start,
            end: start + ack.duration,
            transmitter: NodeId::AP,
            receiver: Some(tx.node),
            received: true,
            signal_dbm: self.capture_signal_dbm(0, sta.ap_link(), &ack.txv, tx.start),
            noise_dbm: Self::capture_noise_dbm(&ack.txv),
        };
        out.push(self.captured_ppdu(tx, ack, heard));
    }
}

/// Where one PPDU of an exchange went and how it was heard, as its medium tells it
/// ([`Cell::captured_ppdu`] adds what the PPDU itself says).
pub(crate) struct HeardPpdu {
    pub(crate) start: Nanos,
    pub(crate) end: Nanos,
    pub(crate) transmitter: NodeId,
    /// `None`: to every station (a beacon).
    pub(crate) receiver: Option<NodeId>,
    /// Its addressee decoded it (for data, at least one MPDU).
    pub(crate) received: bool,
    pub(crate) signal_dbm: Option<f64>,
    pub(crate) noise_dbm: f64,
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
