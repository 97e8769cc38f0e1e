//! The engine's records of what it put on the air, for a packet capture
//! ([`crate::capture`] holds the record types and the buffer): one builder,
//! [`Air::captured_ppdu`], from an exchange's frame sequence and what the medium says
//! it heard ([`HeardPpdu`]), on both media. One collision domain records an exchange
//! when its data ends (`capture_exchange`), the medium with space each PPDU when it
//! ends.

use crate::air::exchange::Tx;
use crate::air::{Air, Management};
use crate::capture::{
    captured_mpdus, duration_field_us, response_frame, AirCapture, CapturedFrame, CapturedPpdu,
};
use crate::mac::frame::{CtlFrame, DataFrame, Frame, MgmtFrame};
use crate::mac::sequence::{PpduKind, SequencePpdu};
use crate::mac80211::txq::LinkId;
use crate::packet::NodeId;
use crate::phy::channel::ErrorModel;
use crate::phy::path_loss::noise_dbm;
use crate::phy::{ChannelWidth, TxVector};
use crate::Nanos;

/// Where one PPDU of an exchange went and how it was heard, as its medium tells it
/// ([`Air::captured_ppdu`] adds what the PPDU itself says).
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

impl Air {
    /// Record every PPDU the engine puts on the air from now on
    /// ([`Cell::capture_air`](crate::cell::Cell::capture_air)).
    pub(crate) fn capture_air(&mut self) {
        self.capture.get_or_insert_with(Box::<AirCapture>::default);
    }

    /// The next PPDU recorded since capture started.
    pub(crate) fn poll_capture(&mut self) -> Option<CapturedPpdu> {
        self.capture.as_mut()?.pop()
    }

    /// Records lost because the caller did not drain them in time.
    pub(crate) fn capture_overflowed(&self) -> u64 {
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
    pub(crate) fn capture_exchange(&mut self, mgmt: &dyn Management) {
        let mut records = Vec::new();
        let txs = &self.medium.shared().exch.txs;
        let collision = txs.len() > 1;
        for tx in txs {
            match tx.frame {
                Some(f) => self.capture_frame(tx, f, collision, &mut records, mgmt),
                None => self.capture_data(tx, collision, &mut records, mgmt),
            }
        }
        records.sort_by_key(|r| (r.end, r.start));
        for r in records {
            self.capture_push(r);
        }
    }

    /// The PPDUs of a data transmission `tx` in one collision domain: its exchange's
    /// sequence ([`Air::sequence_of`]) as laid out from `tx.start`, SIFS apart. In a
    /// collision only the first PPDU goes out if it is an RTS (its CTS never comes);
    /// after a CTS-to-self the data follows. The response goes out if anything was
    /// decoded.
    fn capture_data(
        &self,
        tx: &Tx,
        collision: bool,
        out: &mut Vec<CapturedPpdu>,
        mgmt: &dyn Management,
    ) {
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
            out.push(self.captured_ppdu(tx, p, heard, mgmt));
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
    /// ([`Air::fill_captured_data`]).
    pub(crate) fn captured_ppdu(
        &self,
        tx: &Tx,
        p: &SequencePpdu,
        heard: HeardPpdu,
        mgmt: &dyn Management,
    ) -> CapturedPpdu {
        let frame = match (p.kind, tx.frame) {
            (PpduKind::Rts, _) => CapturedFrame::Rts,
            (PpduKind::Cts, _) => CapturedFrame::Cts,
            (PpduKind::CtsToSelf, _) => CapturedFrame::CtsToSelf,
            (PpduKind::Own, Some(f)) => Self::captured_own_frame(f, mgmt),
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

    /// How the capture shows one of the MAC's own frames: a beacon as the management
    /// that built it says ([`Management::captured_beacon`]); a PS-Poll; a null-data
    /// frame with its PM bit.
    pub(crate) fn captured_own_frame(f: Frame, mgmt: &dyn Management) -> CapturedFrame {
        match f {
            Frame::Mgmt(MgmtFrame::Beacon { k }) => mgmt.captured_beacon(k),
            Frame::Ctl(CtlFrame::PsPoll) => CapturedFrame::PsPoll,
            Frame::Data(DataFrame::NullData { pm }) => CapturedFrame::NullData { pm },
        }
    }

    /// The PPDUs of one of the MAC's own frames `f` sent by `tx` (its sequence,
    /// [`Air::own_sequence`]): the frame, and the AP's ACK if the frame got through
    /// and asks for one (a beacon does not).
    fn capture_frame(
        &self,
        tx: &Tx,
        f: Frame,
        collision: bool,
        out: &mut Vec<CapturedPpdu>,
        mgmt: &dyn Management,
    ) {
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
        out.push(self.captured_ppdu(tx, frame, heard, mgmt));
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
        out.push(self.captured_ppdu(tx, ack, heard, mgmt));
    }
}
