//! The frame exchange: what happens on the medium from the access that starts it to
//! the return to contention, and what both media share of it.
//!
//! In one collision domain each access is one exchange, computed in full when it
//! starts: optional RTS/CTS (or the CTS-to-self of ERP protection), the data PPDU (one
//! MPDU, or an A-MPDU under a block-ack agreement), SIFS and the ACK or BlockAck; a
//! collision instead when several transmitters started within aCCATime. The receiver
//! releases what it decoded, in sequence order through its reorder buffer, when the
//! data PPDU ends (the cell's delivery timer); the outcome is settled when the busy
//! period ends (the exchange-end timer): each path learns which MPDUs were
//! acknowledged, retries or drops the rest, and the airtime is charged. Within a TXOP
//! limit the next exchange of the same AC follows after SIFS if it fits whole
//! (802.11-2016 10.22.2.8). A beacon, null-data frame or PS-Poll is an exchange of its
//! own (`mac/frame.rs`).
//!
//! The per-node medium (`medium/spatial.rs`) steps the same sequence PPDU by PPDU, and
//! shares with this file every rule that is not about when a PPDU goes out or what its
//! addressee makes of it: the try count ([`Tx::count_try`]), the protection and
//! TXOP-fit rules ([`Air::protection_of`], [`Air::take_txop_ppdu`],
//! [`Air::continue_in_txop`]), the channel draw, the settling of each transmission
//! ([`Air::settle_tx`]), the airtime charge of exchanges that overlap
//! (`air/charge.rs`) and the response timeout ([`Air::response_given_up_at`]).
//!
//! Like `contention.rs`, these are `impl Air` blocks over the state the engine owns.

use crate::air::charge::{split_share, Span};
use crate::air::medium::Medium;
use crate::air::stats::AirtimeRecord;
use crate::air::timer::Timer;
use crate::air::{Air, Management, Output};
use crate::budget::CellStamps;
use crate::driver::airtime_report::ath9k_frame_us;
use crate::driver::Ppdu;
use crate::mac::ampdu::SubframeClock;
use crate::mac::blockack::Received;
use crate::mac::edca::Ac;
use crate::mac::frame::{CtlFrame, DataFrame, Frame, MgmtFrame};
use crate::mac::link_airtime::LinkAirtime;
use crate::mac::protection::Protection;
use crate::mac::sequence::{ExchangeOutcome, FrameSequence, PpduKind};
use crate::mac80211::powersave::{BEACON_BYTES, NULL_DATA_BYTES, PS_POLL_BYTES};
use crate::mac80211::rate_chain::RateStage;
use crate::mac80211::txq::{LinkId, Tid};
use crate::packet::{NodeId, StationId};
use crate::phy::channel::ErrorModel;
use crate::phy::rates::{control_response_rate, ACK_BYTES};
use crate::phy::TxVector;
use crate::stack::DriverKind;
use crate::txpath::TxReport;
use crate::Nanos;

/// One transmission within an exchange.
#[derive(Clone, Debug)]
pub(crate) struct Tx {
    /// The transmitter.
    pub(crate) node: NodeId,
    pub(crate) ac: Ac,
    pub(crate) start: Nanos,
    /// End of this transmitter's first PPDU on the air (RTS or data).
    pub(crate) air_end: Nanos,
    /// The stage of the PPDU's retry chain this transmission goes out at.
    pub(crate) stage: RateStage,
    pub(crate) ppdu: Ppdu,
    /// Per MPDU: decoded by the receiver.
    pub(crate) ok: Vec<bool>,
    /// One of the MAC's own frames instead of the (then empty) PPDU.
    pub(crate) frame: Option<Frame>,
}

impl Tx {
    /// `node`'s data PPDU `ppdu` on `ac`, going out at `start` (`ok`: a cleared
    /// outcome vector to reuse).
    pub(crate) fn data(node: NodeId, ac: Ac, start: Nanos, ppdu: Ppdu, ok: Vec<bool>) -> Tx {
        Tx {
            node,
            ac,
            start,
            air_end: start,
            stage: *ppdu.stage(),
            ppdu,
            ok,
            frame: None,
        }
    }

    /// `node`'s own frame `frame` (beacon, null-data, PS-Poll) on AC VO, going out at
    /// `start`, with an empty PPDU.
    pub(crate) fn own(node: NodeId, start: Nanos, frame: Frame, ok: Vec<bool>) -> Tx {
        Tx {
            node,
            ac: Ac::Vo,
            start,
            air_end: start,
            stage: *Ppdu::default().stage(),
            ppdu: Ppdu::default(),
            ok,
            frame: Some(frame),
        }
    }

    /// A try of the data PPDU begins (from the exchange's first frame, its RTS if it has
    /// one): the PPDU's try and each MPDU's attempt are counted, and the per-MPDU outcome
    /// is cleared for what this try brings. The one place tries are counted, on both
    /// media.
    pub(crate) fn count_try(&mut self) {
        self.ppdu.tries += 1;
        self.ok.clear();
        for m in self.ppdu.mpdus.iter_mut() {
            m.attempts = m.attempts.saturating_add(1);
        }
    }

    /// The transmitter's link the data PPDU goes out on.
    pub(crate) fn link(&self) -> LinkId {
        self.ppdu.link
    }

    /// The TID of the data PPDU.
    pub(crate) fn tid(&self) -> Tid {
        self.ppdu.tid
    }
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Exchange {
    pub(crate) txs: Vec<Tx>,
    pub(crate) outcome: Option<ExchangeOutcome>,
    /// When the data PPDU ends and the receiver releases what it got.
    pub(crate) deliver_at: Nanos,
    pub(crate) delivered: bool,
    /// End of the busy period (the response, or the longest colliding PPDU).
    pub(crate) end: Nanos,
    /// Start of the current TXOP (for continuation within the TXOP limit).
    pub(crate) txop_start: Nanos,
    /// Where this exchange's busy time starts: its first transmission, or, within a
    /// TXOP, the end of the previous exchange (the SIFS between them is the holder's).
    pub(crate) busy_from: Nanos,
    /// The node that answers a lone transmission (its CTS, ACK or BlockAck), if any.
    pub(crate) addressee: Option<NodeId>,
    /// End of the RTS, when the exchange began with one.
    pub(crate) rts_end: Option<Nanos>,
    /// A CTS-to-self set the addressee's NAV too (it is addressed to its sender).
    pub(crate) addressee_nav: bool,
}

impl Exchange {
    /// Whether node `n` senses the medium idle at `now` although this exchange holds
    /// the cell busy: in the SIFS between two exchanges of a TXOP, every node but the
    /// holder (the NAV the previous data PPDU set lasted to the end of its response);
    /// in the SIFS before its CTS or its response, the addressee, unless a CTS-to-self
    /// set its NAV (802.11-2016 10.3.2.4: a frame addressed to a node does not set its
    /// NAV). A collision holds everyone busy to its end.
    pub(crate) fn idle_for(&self, n: NodeId, now: Nanos, sifs: Nanos) -> bool {
        let [tx] = self.txs.as_slice() else {
            return false;
        };
        if tx.node == n {
            return false;
        }
        if now >= self.busy_from && now < tx.start {
            return true;
        }
        if self.addressee != Some(n) || self.addressee_nav {
            return false;
        }
        let in_gap = |end: Nanos| now >= end && now < end + sifs;
        self.rts_end.is_some_and(in_gap)
            || (self.outcome == Some(ExchangeOutcome::Acked) && in_gap(self.deliver_at))
    }
}

impl Air {
    /// Keep a finished transmission's per-MPDU outcome vector for the next one.
    pub(crate) fn recycle_ok(&mut self, mut tx: Tx) {
        tx.ok.clear();
        self.spare_ok.push(std::mem::take(&mut tx.ok));
    }

    /// Empty the exchange's transmissions, keeping their outcome vectors.
    pub(crate) fn clear_txs(&mut self) {
        while let Some(tx) = self.medium.shared_mut().exch.txs.pop() {
            self.recycle_ok(tx);
        }
    }

    /// How `tx`'s exchange protects its data PPDU ([`LinkAirtime::protection_for`]), and
    /// the durations on its link at its stage's rate.
    #[inline]
    pub(crate) fn protection_of(&self, tx: &Tx) -> (Protection, LinkAirtime) {
        let air = *self.nodes[tx.node.index()]
            .link(tx.link())
            .air
            .get(tx.stage.rate);
        let p = air.protection_for(
            tx.ppdu.psdu_bytes,
            tx.stage.rts,
            self.cfg.rts_threshold_bytes,
        );
        (p, air)
    }

    /// The PPDUs of `tx`'s exchange ([`FrameSequence::data`]), protected as
    /// [`Air::protection_of`] decides.
    #[inline]
    pub(crate) fn sequence_of(&self, tx: &Tx) -> FrameSequence {
        let (protection, air) = self.protection_of(tx);
        FrameSequence::data(
            &air,
            protection,
            tx.stage.txv,
            tx.ppdu.psdu_bytes,
            tx.ppdu.aggregated,
            self.timing.sifs,
        )
    }

    /// The PPDUs of node `n`'s own frame `f` ([`FrameSequence::own`]): the frame at
    /// [`Air::frame_vector`]'s rate, and the AP's ACK at its control-response rate unless
    /// it is a beacon.
    pub(crate) fn own_sequence(&self, n: usize, f: Frame) -> FrameSequence {
        let band = self.cfg.band;
        let (v, bytes) = self.frame_vector(n, f);
        let ack = match f {
            Frame::Mgmt(MgmtFrame::Beacon { .. }) => None,
            _ => {
                let ctl = control_response_rate(&v, self.cfg.standard);
                Some((ctl, ctl.ppdu_duration(ACK_BYTES, band)))
            }
        };
        FrameSequence::own(
            v,
            bytes,
            v.ppdu_duration(bytes, band),
            ack,
            self.timing.sifs,
        )
    }

    /// The next data PPDU of node `n`'s TXOP on `ac`, after an acknowledged exchange that
    /// ended at `t`, to start SIFS later: only if the AC has a TXOP limit, the node is
    /// present, the PPDU needs no RTS, and its whole exchange (with the link's
    /// CTS-to-self, which ath9k sends before every protected frame) fits in what is left
    /// of the TXOP begun at `txop_start` (802.11-2016 10.22.2.8). The one TXOP-fit rule,
    /// on both media. With the PPDU: the stage it goes out at and its exchange.
    pub(crate) fn take_txop_ppdu(
        &mut self,
        n: usize,
        ac: Ac,
        t: Nanos,
        txop_start: Nanos,
    ) -> Option<(Ppdu, RateStage, FrameSequence)> {
        let limit = self.nodes[n].edca[ac.index()].params.txop_limit();
        if limit == Nanos::ZERO || self.nodes[n].away || self.nodes[n].leaving {
            return None;
        }
        let (link, aggregated, psdu_bytes, stage) = self.nodes[n]
            .path
            .peek_ppdu(t, ac)
            .map(|p| (p.link, p.aggregated, p.psdu_bytes, *p.stage()))?;
        let air = self.nodes[n].link(link).air.get(stage.rate);
        let sifs = self.timing.sifs;
        let start = t + sifs;
        let protection = air.protection_for(psdu_bytes, stage.rts, self.cfg.rts_threshold_bytes);
        if protection == Protection::RtsCts {
            return None;
        }
        // The whole exchange: its protection, the data PPDU, SIFS and the response.
        // perf: worked out from the link's durations before any sequence is built;
        // most PPDUs a TXOP peeks at do not fit.
        let exchange = air.protection(protection, sifs)
            + air.data.duration(psdu_bytes)
            + sifs
            + air.response(aggregated);
        if start + exchange > txop_start + limit {
            return None;
        }
        let seq = FrameSequence::data(air, protection, stage.txv, psdu_bytes, aggregated, sifs);
        // The same span as the sequence's: its first PPDU's Duration field reaches the
        // end of the response.
        debug_assert_eq!(exchange, seq.ppdus()[0].duration + seq.ppdus()[0].nav_after);
        let ppdu = self.nodes[n].path.take_ppdu(start, ac)?;
        Some((ppdu, stage, seq))
    }

    /// Several transmissions overlap: all are lost.
    pub(crate) fn resolve_collision(&mut self, mgmt: &mut dyn Management) {
        let band = self.cfg.band;
        let mut end = Nanos::ZERO;
        for i in 0..self.medium.shared().exch.txs.len() {
            let tx = &self.medium.shared().exch.txs[i];
            let dur = if let Some(f) = tx.frame {
                let (v, bytes) = self.frame_vector(tx.node.index(), f);
                v.ppdu_duration(bytes, band)
            } else {
                let seq = self.sequence_of(tx);
                match seq.first() {
                    // Only the RTS goes out, and its CTS never comes.
                    PpduKind::Rts => seq.get(PpduKind::Rts).duration,
                    // A CTS-to-self draws no response: its sender goes on with the data
                    // PPDU after SIFS, unaware of the collision.
                    _ => seq.data_offset(self.timing.sifs) + seq.get(PpduKind::Data).duration,
                }
            };
            let tx = &mut self.medium.shared_mut().exch.txs[i];
            tx.air_end = tx.start + dur;
            end = end.max(tx.air_end);
            tx.count_try();
            tx.ok.resize(tx.ppdu.mpdus.len(), false);
        }
        let exch = &mut self.medium.shared_mut().exch;
        exch.outcome = Some(ExchangeOutcome::Collision);
        exch.addressee = None;
        exch.delivered = true;
        exch.end = end;
        self.timers.set(Timer::ExchangeEnd, Some(end));
        if self.capture.is_some() {
            self.capture_exchange(mgmt);
        }
    }

    /// One transmission: draw the channel errors and lay out the exchange. `known` is
    /// this PPDU's frame sequence when the caller has just built it
    /// ([`Air::continue_txop`] does, for every PPDU of a TXOP).
    pub(crate) fn resolve_single(
        &mut self,
        known: Option<FrameSequence>,
        mgmt: &mut dyn Management,
    ) {
        if self.medium.shared().exch.txs[0].frame.is_some() {
            self.resolve_frame(mgmt);
            return;
        }
        let sifs = self.timing.sifs;
        let overhead = self.mpdu_overhead();
        let seq = match known {
            Some(seq) => {
                debug_assert_eq!(seq, self.sequence_of(&self.medium.shared().exch.txs[0]));
                seq
            }
            None => self.sequence_of(&self.medium.shared().exch.txs[0]),
        };
        // The medium and the nodes' links are borrowed apart.
        let exch = &mut self.medium.shared_mut().exch;
        let tx = &mut exch.txs[0];
        // A receiver that is off channel or asleep decodes nothing (and answers
        // nothing): the sender retries and finally drops (the legacy scan's losses).
        let peer = self.nodes[tx.node.index()].link(tx.ppdu.link).peer;
        let absent = self.nodes[peer.index()].away;
        let link = self.nodes[tx.node.index()].link_mut(tx.ppdu.link);
        let txv = tx.stage.txv;
        tx.count_try();
        let t = tx.start + seq.data_offset(sifs);
        let data_end = t + seq.get(PpduKind::Data).duration;
        let error = link.error_at(tx.start);
        let any_ok = if absent || matches!(error, ErrorModel::None) {
            // Nothing to draw: an absent receiver decodes nothing, and an error-free
            // link loses nothing (its PER is exactly 0, for which `bernoulli` returns
            // false without drawing), so every MPDU has the same outcome and the
            // channel stream is left untouched, as in the per-MPDU loop below.
            tx.ok.resize(tx.ppdu.mpdus.len(), !absent);
            !absent && !tx.ppdu.mpdus.is_empty()
        } else {
            let mut any_ok = false;
            for m in tx.ppdu.mpdus.iter() {
                let ok = link.draws_through(&error, &txv, m.packet.len_bytes + overhead);
                any_ok |= ok;
                tx.ok.push(ok);
            }
            any_ok
        };
        tx.air_end = data_end;
        let first = seq.ppdus()[0];
        exch.rts_end = (first.kind == PpduKind::Rts).then_some(tx.start + first.duration);
        exch.deliver_at = data_end;
        exch.delivered = false;
        exch.addressee = Some(peer);
        exch.addressee_nav = first.kind == PpduKind::CtsToSelf;
        if any_ok {
            exch.end = data_end + sifs + seq.get(PpduKind::Response).duration;
            exch.outcome = Some(ExchangeOutcome::Acked);
        } else {
            exch.end = data_end;
            exch.outcome = Some(ExchangeOutcome::Failed);
        }
        self.timers.set(Timer::Delivery, Some(data_end));
    }

    /// Node `n`'s radio left at `t` (it retunes to scan, or dozes) while a data PPDU
    /// addressed to it may be on the air. It keeps the subframes that had arrived, as
    /// the channel drew them, and loses the rest; it answers nothing, so the exchange
    /// laid out when it started fails at the data's end instead. The driver takes what
    /// the chip received before it retunes: ath9k's channel change stops the receive
    /// DMA and flushes the completed descriptors up to mac80211 (`ath_stoprecv` →
    /// `ath_flushrecv` → `ath_rx_tasklet(sc, 1, …)`, which still calls `ieee80211_rx`;
    /// `drivers/net/wireless/ath/ath9k/recv.c`); nothing in mac80211 holds a scan back
    /// for a frame being received. With space the addressee records its departure
    /// ([`Medium::radio_gone`]) and `draw_data` applies the same rule.
    pub(crate) fn addressee_left(&mut self, n: usize, t: Nanos) {
        let Medium::Shared(sh) = &self.medium else {
            return;
        };
        let exch = &sh.exch;
        let receiving = sh.busy
            && !exch.delivered
            && t < exch.deliver_at
            && exch.addressee == Some(NodeId(n as u16))
            && exch.outcome == Some(ExchangeOutcome::Acked);
        let [tx] = exch.txs.as_slice() else {
            return;
        };
        if !receiving || tx.frame.is_some() {
            return;
        }
        let duration = self.sequence_of(tx).get(PpduKind::Data).duration;
        let overhead = self.mpdu_overhead();
        let exch = &mut self.medium.shared_mut().exch;
        let tx = &mut exch.txs[0];
        let mut clock =
            SubframeClock::new(exch.deliver_at - duration, duration, tx.ppdu.psdu_bytes);
        for (m, ok) in tx.ppdu.mpdus.iter().zip(tx.ok.iter_mut()) {
            if clock.next(m.packet.len_bytes + overhead).to > t {
                *ok = false;
            }
        }
        exch.outcome = Some(ExchangeOutcome::Failed);
        exch.end = exch.deliver_at;
    }

    /// The data PPDU ended: the receiver releases what it decoded, in order.
    pub(crate) fn deliver(&mut self, t: Nanos, mgmt: &mut dyn Management) {
        let exch = &mut self.medium.shared_mut().exch;
        exch.delivered = true;
        self.timers.set(Timer::ExchangeEnd, Some(exch.end));
        if exch.txs[0].frame.is_some() {
            self.deliver_frame(t, mgmt);
            return;
        }
        // Captured when the data ends, not when the exchange starts: an
        // addressee that leaves in between (`addressee_left`) changes its outcome.
        if self.capture.is_some() {
            self.capture_exchange(mgmt);
        }
        // The transmission is lent out while its receiver takes what it decoded.
        let txs = std::mem::take(&mut self.medium.shared_mut().exch.txs);
        self.release_received(t, &txs[0], mgmt);
        self.medium.shared_mut().exch.txs = txs;
    }

    /// `tx`'s data PPDU ended at `t`: its receiver takes the MPDUs it decoded (`tx.ok`)
    /// into its reorder buffer and releases what is in order.
    pub(crate) fn release_received(&mut self, t: Nanos, tx: &Tx, mgmt: &mut dyn Management) {
        let (txn, link, tid) = (tx.node.index(), tx.link(), tx.tid());
        let rx = self.nodes[txn].link(link).peer;
        let rx_node = rx.index();
        if tx.ok.iter().any(|&o| o) {
            mgmt.data_received(self, t, tx.node, rx);
        }
        let Some(rx_link) = self.nodes[rx_node].link_to(self.nodes[txn].id) else {
            return;
        };
        let reorder = &mut self.nodes[rx_node].link_mut(rx_link).rx[tid.index()];
        // What the reorder buffer releases becomes an output at once, in the order
        // released, as `emit_released` reports it.
        // perf: straight into `out`, without the copy through `released`.
        let from = self.out.len();
        let out = &mut self.out;
        let (mut pkts, mut bytes) = (0, 0);
        let mut emit = |r: Received| {
            pkts += 1;
            bytes += r.packet.len_bytes as u64;
            out.push_back(Output::Delivered {
                at: t,
                packet: r.packet,
                stamps: r.stamps,
            });
        };
        for (m, ok) in tx.ppdu.mpdus.iter().zip(&tx.ok) {
            if *ok {
                let stamps = CellStamps::of(&m.packet, m.tries, tx.start, t);
                let r = Received {
                    packet: m.packet,
                    stamps,
                };
                reorder.receive(m.seq, r, &mut emit);
            }
        }
        if self.has_amsdus(txn) {
            (pkts, bytes) = self.unpack_delivered(txn, from);
        }
        if !self.delivered_copies.is_empty() {
            // A copy received again is no longer in the air's count.
            for (m, _) in tx.ppdu.mpdus.iter().zip(&tx.ok).filter(|(_, &ok)| ok) {
                self.delivered_copies.remove(&m.packet.id);
            }
        }
        self.count_delivered(txn, link, pkts, bytes);
    }

    /// The airtime the AP's driver reports for transmission `tx` (charged `share_ns`
    /// of the busy period), µs, as (TX, RX) (`driver/airtime_report.rs`): ath9k reports
    /// the data PPDU alone for its own transmissions and each received data MPDU as if
    /// sent alone; other drivers are charged the busy time, to the transmitter's side.
    fn reported_airtime_us(&self, tx: &Tx, uplink: bool, share_ns: u64) -> (u32, u32) {
        if self.nodes[0].path.driver() != DriverKind::Ath9k {
            let share_us = (share_ns / 1000) as u32;
            return if uplink { (0, share_us) } else { (share_us, 0) };
        }
        let txv = tx.stage.txv;
        if !uplink {
            return (ath9k_frame_us(&txv, tx.ppdu.psdu_bytes) as u32, 0);
        }
        let overhead = self.mpdu_overhead();
        let rx_us: u64 = tx
            .ppdu
            .mpdus
            .iter()
            .zip(&tx.ok)
            .filter(|(_, &ok)| ok)
            .map(|(m, _)| ath9k_frame_us(&txv, m.packet.len_bytes + overhead))
            .sum();
        (0, rx_us as u32)
    }

    /// Report the packets a reorder buffer just released as delivered (they came from
    /// node `txn` over its link `link`).
    pub(crate) fn emit_released(&mut self, t: Nanos, txn: usize, link: LinkId) {
        let mut pkts = self.released.len() as u64;
        let mut bytes = 0;
        let from = self.out.len();
        // perf: one pass, and one reservation in `out` (the drain's length is known).
        self.out.extend(self.released.drain(..).map(|r| {
            bytes += r.packet.len_bytes as u64;
            Output::Delivered {
                at: t,
                packet: r.packet,
                stamps: r.stamps,
            }
        }));
        if self.has_amsdus(txn) {
            (pkts, bytes) = self.unpack_delivered(txn, from);
        }
        self.count_delivered(txn, link, pkts, bytes);
    }

    /// Count `pkts` packets of `bytes` bytes delivered from node `txn` over its link
    /// `link`.
    pub(crate) fn count_delivered(&mut self, txn: usize, link: LinkId, pkts: u64, bytes: u64) {
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
    pub(crate) fn finish_exchange(&mut self, t: Nanos, mgmt: &mut dyn Management) {
        let exch = &mut self.medium.shared_mut().exch;
        let outcome = exch.outcome.unwrap_or(ExchangeOutcome::Failed);
        let busy_from = exch.busy_from;
        let busy = t - busy_from;
        let n_tx = exch.txs.len() as u64;
        let mut txs = std::mem::take(&mut exch.txs);
        self.busy_ns += busy.as_ns();
        // When each transmitter whose response never came stops waiting for it, worked
        // out while its PPDU is in hand (settling hands the PPDU back to its path).
        let waits: Vec<Nanos> = if outcome == ExchangeOutcome::Acked {
            Vec::new()
        } else {
            let collision = outcome == ExchangeOutcome::Collision;
            txs.iter()
                .map(|tx| self.response_wait_in_one_domain(tx, collision))
                .collect()
        };
        // A collision's transmitters are each charged the time their own first PPDU
        // held the air, time they held it together split among them (`air/charge.rs`).
        // The busy period starts with the earliest of them: its span starts there too,
        // so that the charges sum to the busy period.
        let first_start = txs.iter().map(|tx| tx.start).min().unwrap_or(busy_from);
        let spans: Vec<Span> = if n_tx > 1 {
            txs.iter()
                .map(|tx| Span {
                    node: tx.node.index(),
                    from: if tx.start == first_start {
                        busy_from
                    } else {
                        tx.start
                    },
                    to: tx.air_end,
                })
                .collect()
        } else {
            Vec::new()
        };
        let mut charged = 0;
        for (i, tx) in txs.iter_mut().enumerate() {
            let share = if n_tx == 1 {
                busy.as_ns()
            } else {
                split_share(tx.node.index(), spans[i].from, spans[i].to, &spans)
            };
            charged += share;
            // A lone transmitter's airtime starts where its busy period does (within a
            // TXOP, at the end of the previous exchange).
            let start = if n_tx == 1 { busy_from } else { tx.start };
            self.settle_tx(tx, start, t, outcome, share, mgmt);
        }
        debug_assert_eq!(charged, busy.as_ns(), "charges sum to the busy period");
        self.medium.shared_mut().exch.txs = txs;
        // An acknowledged exchange had a lone transmitter: its record stays for a TXOP
        // continuation.
        if outcome == ExchangeOutcome::Acked && self.continue_txop(t, mgmt) {
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
        for (tx, &waited) in self.medium.shared().exch.txs.iter().zip(&waits) {
            // A transmitter that got no response waits out its response timeout; it saw
            // no errored frame, so it uses AIFS, not EIFS.
            self.nodes[tx.node.index()].ifs_ref = waited.max(t);
        }
        self.clear_txs();
        self.medium.shared_mut().busy = false;
        mgmt.exchange_ended(self, t);
        self.reschedule();
    }

    /// When the transmitter of `tx`, whose exchange in one collision domain got no
    /// response (`collision`: it overlapped others), stops waiting for one
    /// ([`Air::response_given_up_at`]). What went out: in a collision an RTS alone if
    /// the exchange starts with one, else the data (or the MAC's own frame), which is
    /// also what a lone transmitter's addressee failed to decode. Asked before `tx` is
    /// settled: its sequence needs its PPDU.
    fn response_wait_in_one_domain(&self, tx: &Tx, collision: bool) -> Nanos {
        let seq = self.sequence_of_tx(tx);
        let lost = match seq.first() {
            PpduKind::Rts if collision => PpduKind::Rts,
            PpduKind::Own => PpduKind::Own,
            _ => PpduKind::Data,
        };
        self.response_given_up_at(&seq, lost, tx.air_end)
    }

    /// Settle `tx`, a data PPDU's transmission whose airtime started at `start`: count
    /// it, charge its `share` of the busy period, update its EDCAF's contention window
    /// and report the outcome to its path.
    pub(crate) fn settle_data(
        &mut self,
        tx: &mut Tx,
        start: Nanos,
        t: Nanos,
        outcome: ExchangeOutcome,
        share: u64,
    ) {
        if outcome != ExchangeOutcome::Acked {
            // Nothing decoded may have been drawn (an addressee that never locked on).
            tx.ok.resize(tx.ppdu.mpdus.len(), false);
        }
        let retry_limit = self.cfg.retry_limit;
        let n = tx.node.index();
        let station = self.station_of(n, tx.link());
        let uplink = n != 0;
        let (tx_us, rx_us) = self.reported_airtime_us(tx, uplink, share);
        if outcome != ExchangeOutcome::Acked {
            // What the addressee decoded it has, though the response never came: the
            // copies the path keeps for their retries are duplicates.
            for (m, _) in tx.ppdu.mpdus.iter().zip(&tx.ok).filter(|(_, &ok)| ok) {
                self.delivered_copies.insert(m.packet.id);
            }
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
        let (ac, tid, rate) = (tx.ac, tx.tid(), tx.stage.rate);
        // The stage this transmission went out at (its try was counted when it
        // started).
        let stage = tx
            .ppdu
            .chain
            .stage_index_of_try(tx.ppdu.tries.saturating_sub(1));
        // A probe's cost is every try of the probe PPDU: the one at the sample rate
        // and the retries down the chain after it fails.
        let (probe, probe_try) = (tx.ppdu.chain.probe && stage == Some(0), tx.ppdu.chain.probe);
        {
            let s = self.link_stats(station, uplink);
            s.ppdus += 1;
            s.mpdus += mpdus as u64;
            s.mpdu_retries += retries;
            s.airtime_ns += share;
            if let Some(k) = stage {
                s.stage_tries[k] += 1;
            }
            s.probes += probe as u64;
            if probe_try {
                s.probe_airtime_ns += share;
            }
            match outcome {
                ExchangeOutcome::Collision => s.collisions += 1,
                ExchangeOutcome::Failed => s.failures += 1,
                ExchangeOutcome::Acked => {}
            }
        }
        if self.cfg.airtime_records {
            self.out.push_back(Output::Airtime(AirtimeRecord {
                station: station.node(),
                uplink,
                ac,
                start,
                airtime: Nanos(share),
                mpdus: mpdus as u16,
                acked_mpdus: acked,
                outcome,
            }));
        }
        // The AP's scheduler is charged what its driver reports: TX airtime for
        // downlink, RX for uplink.
        self.nodes[0]
            .path
            .report_airtime(t, station.ap_link(), tid, tx_us, rx_us);
        let node = &mut self.nodes[n];
        let link = tx.link();
        let l = &mut node.links[link.index()];
        let used = l.rate_use.get_mut(rate);
        used.ppdus += 1;
        used.airtime_ns += share;
        if let Some(series) = l.rate_series.as_mut() {
            series.record(start, used.txv.data_rate_bps(), share);
        }
        let b = &mut node.edca[ac.index()];
        // CW back to CWmin after every acknowledged exchange (also within a TXOP) and
        // when a frame is given up; doubled after a failure.
        match outcome {
            ExchangeOutcome::Acked => b.reset(&mut node.rng),
            _ if head_dropped => b.reset(&mut node.rng),
            _ => b.fail(&mut node.rng),
        }
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
    /// the AC has a TXOP limit and that whole exchange fits in what is left of it
    /// ([`Air::continue_in_txop`]).
    pub(crate) fn continue_txop(&mut self, t: Nanos, mgmt: &mut dyn Management) -> bool {
        // An exchange of one of the MAC's own frames is not continued.
        let exch = &self.medium.shared().exch;
        if exch.txs.first().is_none_or(|tx| tx.frame.is_some()) {
            return false;
        }
        let txop_start = exch.txop_start;
        // An acknowledged exchange had a single transmitter (collisions are never
        // acknowledged): its record becomes the next transmission's. It is lent out
        // while the path gives up the next PPDU.
        let mut txs = std::mem::take(&mut self.medium.shared_mut().exch.txs);
        debug_assert_eq!(txs.len(), 1);
        let seq = self.continue_in_txop(&mut txs[0], t, txop_start);
        let exch = &mut self.medium.shared_mut().exch;
        exch.txs = txs;
        let Some(seq) = seq else {
            return false;
        };
        exch.busy_from = t;
        self.resolve_single(Some(seq), mgmt);
        true
    }

    /// `tx`'s exchange was acknowledged at `t`: make `tx` the next transmission of its
    /// TXOP, begun at `txop_start`, if there is one ([`Air::take_txop_ppdu`]): the
    /// next data PPDU of its AC, SIFS later. Returns that exchange's sequence, or
    /// `None` (and `tx` is left as it was). Both media continue a TXOP through it.
    // perf: the record is rewritten in place, not built anew (a `Tx` is large).
    pub(crate) fn continue_in_txop(
        &mut self,
        tx: &mut Tx,
        t: Nanos,
        txop_start: Nanos,
    ) -> Option<FrameSequence> {
        let (ppdu, stage, seq) = self.take_txop_ppdu(tx.node.index(), tx.ac, t, txop_start)?;
        let start = t + self.timing.sifs;
        tx.start = start;
        tx.air_end = start;
        tx.stage = stage;
        tx.ppdu = ppdu;
        Some(seq)
    }

    /// Settle transmission `tx` of an exchange that ended at `t` with `outcome`,
    /// charged `share` ns of the busy period (its airtime from `start`): a data
    /// PPDU ([`Air::settle_data`]) or one of the MAC's own frames
    /// ([`Air::finish_frame`]). Both media settle every transmission through it.
    pub(crate) fn settle_tx(
        &mut self,
        tx: &mut Tx,
        start: Nanos,
        t: Nanos,
        outcome: ExchangeOutcome,
        share: u64,
        mgmt: &mut dyn Management,
    ) {
        match tx.frame {
            Some(f) => self.finish_frame(t, tx.node, f, outcome, share, mgmt),
            None => self.settle_data(tx, start, t, outcome, share),
        }
    }

    /// The PPDUs of `tx`'s exchange: its data sequence ([`Air::sequence_of`]) or
    /// that of one of the MAC's own frames ([`Air::own_sequence`]).
    pub(crate) fn sequence_of_tx(&self, tx: &Tx) -> FrameSequence {
        match tx.frame {
            Some(f) => self.own_sequence(tx.node.index(), f),
            None => self.sequence_of(tx),
        }
    }

    /// When the holder of an exchange (`seq`) stops waiting for a response that never
    /// came: `lost`, the PPDU that did not get through or whose response did not,
    /// ended at `end`; the holder waits the response timeout at the rate of the frame
    /// that elicited the response ([`FrameSequence::eliciting`]; 10.3.2.9: a DSSS
    /// frame waits longer). The one rule on both media.
    pub(crate) fn response_given_up_at(
        &self,
        seq: &FrameSequence,
        lost: PpduKind,
        end: Nanos,
    ) -> Nanos {
        end + self.timing.response_timeout_for(&seq.eliciting(lost).txv)
    }

    /// Rate and PSDU size of one of the MAC's own frames: beacons at the lowest basic rate;
    /// null-data frames and PS-Polls at the basic rate that would answer the station's
    /// data rate (a simplification: mac80211's rate control treats null-data as data).
    pub(crate) fn frame_vector(&self, n: usize, f: Frame) -> (TxVector, u32) {
        let std = self.cfg.standard;
        match f {
            Frame::Mgmt(MgmtFrame::Beacon { .. }) => (self.timing.lowest_basic, BEACON_BYTES),
            Frame::Data(DataFrame::NullData { .. }) => (
                control_response_rate(&self.nodes[n].links[0].txv, std),
                NULL_DATA_BYTES,
            ),
            Frame::Ctl(CtlFrame::PsPoll) => (
                control_response_rate(&self.nodes[n].links[0].txv, std),
                PS_POLL_BYTES,
            ),
        }
    }

    /// A lone frame of the MAC's own: a station's is acknowledged by the AP if it gets
    /// through the channel; a beacon is answered by nobody (its reception by each
    /// station is drawn when it ends).
    pub(crate) fn resolve_frame(&mut self, mgmt: &mut dyn Management) {
        let (n, f, start) = {
            let tx = &self.medium.shared().exch.txs[0];
            (
                tx.node.index(),
                tx.frame.expect("one of the MAC's own frames"),
                tx.start,
            )
        };
        let seq = self.own_sequence(n, f);
        let frame = *seq.get(PpduKind::Own);
        let data_end = start + frame.duration;
        let exch = &mut self.medium.shared_mut().exch;
        exch.deliver_at = data_end;
        exch.delivered = false;
        // A station's frame is acknowledged by the AP; a beacon by nobody.
        exch.addressee = (n != 0).then_some(NodeId::AP);
        exch.rts_end = None;
        exch.addressee_nav = false;
        self.timers.set(Timer::Delivery, Some(data_end));
        let ok = match f {
            Frame::Mgmt(MgmtFrame::Beacon { .. }) => true,
            _ => {
                let link = &mut self.nodes[n].links[0];
                let error = link.error_at(start);
                link.draws_through(&error, &frame.txv, frame.bytes)
            }
        };
        let exch = &mut self.medium.shared_mut().exch;
        let tx = &mut exch.txs[0];
        tx.air_end = data_end;
        tx.ok.clear();
        tx.ok.push(ok);
        if !ok {
            exch.end = data_end;
            exch.outcome = Some(ExchangeOutcome::Failed);
        } else {
            // The ACK, if the frame asks for one (a beacon does not).
            exch.end = data_end + frame.nav_after;
            exch.outcome = Some(ExchangeOutcome::Acked);
        }
        if self.capture.is_some() {
            self.capture_exchange(mgmt);
        }
    }

    /// One of the MAC's own frames ended on the air: the receivers act on it.
    pub(crate) fn deliver_frame(&mut self, t: Nanos, mgmt: &mut dyn Management) {
        let tx = &self.medium.shared().exch.txs[0];
        let (sender, f, ok) = (
            tx.node,
            tx.frame.expect("one of the MAC's own frames"),
            tx.ok.first() == Some(&true),
        );
        self.deliver_own_frame(t, sender, f, ok, mgmt);
    }

    /// `sender`'s own frame `f` ended on the air at `t` (`ok`: its addressee decoded
    /// it): the AP acts on a station's null-data frame or PS-Poll, the stations on a
    /// beacon (one collision domain draws each station's reception here; with space
    /// the medium does, from each receiver's lock).
    pub(crate) fn deliver_own_frame(
        &mut self,
        t: Nanos,
        sender: NodeId,
        f: Frame,
        ok: bool,
        mgmt: &mut dyn Management,
    ) {
        // Stations send null-data frames and PS-Polls, the AP beacons.
        match (f, sender.as_station()) {
            // With space the medium draws each station's reception from its lock.
            (Frame::Mgmt(MgmtFrame::Beacon { .. }), _) if !self.medium.is_spatial() => {
                mgmt.beacon_ended(self, t, &mut |air, sta| air.beacon_through_link(sta, t));
            }
            (_, Some(sta)) if ok => mgmt.frame_heard_by_ap(self, t, sta, f),
            _ => {}
        }
        mgmt.refresh(self);
    }

    /// Whether station `sta` decodes a beacon ending at `t` that nothing interfered
    /// with: drawn at the AP's link's channel of that moment.
    pub(crate) fn beacon_through_link(&mut self, sta: StationId, t: Nanos) -> bool {
        let v = self.timing.lowest_basic;
        let link = &mut self.nodes[0].link_mut(sta.ap_link());
        let error = link.error_at(t);
        link.draws_through(&error, &v, BEACON_BYTES)
    }

    /// The busy period of one of the MAC's own frames ended: charge it, and retry, give up or
    /// complete a station's frame (CW as for data: reset on success or when given up,
    /// doubled on failure).
    pub(crate) fn finish_frame(
        &mut self,
        t: Nanos,
        sender: NodeId,
        f: Frame,
        outcome: ExchangeOutcome,
        share: u64,
        mgmt: &mut dyn Management,
    ) {
        // Stations send null-data frames and PS-Polls, the AP beacons.
        let sta = match (f, sender.as_station()) {
            (Frame::Mgmt(MgmtFrame::Beacon { .. }), _) => {
                self.beacon_airtime_ns += share;
                if outcome == ExchangeOutcome::Collision {
                    mgmt.beacon_collided(self, t);
                }
                mgmt.refresh(self);
                return;
            }
            (_, Some(sta)) => sta,
            (_, None) => return,
        };
        self.station_stats(sta).up.airtime_ns += share;
        let retry_limit = self.cfg.retry_limit;
        let acked = outcome == ExchangeOutcome::Acked;
        let node = &mut self.nodes[sta.node().index()];
        node.frame_in_air = false;
        node.frame_attempts = node.frame_attempts.saturating_add(1);
        let done = acked || node.frame_attempts >= retry_limit;
        let b = &mut node.edca[Ac::Vo.index()];
        if done {
            b.reset(&mut node.rng);
            node.frames.pop_front();
            node.frame_attempts = 0;
            let ps = &mut self.station_stats(sta).ps;
            match f {
                Frame::Ctl(CtlFrame::PsPoll) => ps.ps_polls += 1,
                _ => ps.null_frames += 1,
            }
            mgmt.frame_done(self, t, sta, f, acked);
        } else {
            b.fail(&mut node.rng);
        }
        mgmt.refresh(self);
    }
}
