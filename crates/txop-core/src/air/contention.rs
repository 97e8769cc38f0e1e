//! The EDCA contention engine (802.11-2016 10.22.2; reference §11.1): which EDCA
//! function wins the medium, internal collisions, freezing and counting down backoff,
//! and the return to contention after an exchange. [`super::edca`] holds the
//! parameters and each EDCAF's backoff state; this file runs them for the whole cell.
//!
//! Contention is not simulated slot by slot: every EDCA function keeps its backoff
//! counter and the time it counts from, and contention ends at the earliest
//! `counted_from + slots × slot` among the functions of present nodes that have
//! frames (the cell's access timer). Functions whose backoff ends within aCCATime of
//! that instant transmit too and collide; within one node the higher AC transmits and
//! the lower ones that ended in the same slot suffer an internal collision
//! (10.22.2.4). When the medium turns busy the others' counters are reduced by the
//! slot boundaries that passed (see [`BackoffRule`](super::edca::BackoffRule)). The
//! AP's beacon queue (AIFSN 1, no backoff) goes before its data queues.
//!
//! These are `impl Air` blocks, as smoltcp splits its `Interface` across files: an
//! access reads and writes state the engine owns (every node's EDCA functions and
//! transmit path, the exchange it starts, the AP's pending beacon) within one event.

use crate::air::exchange::Tx;
use crate::air::medium::Medium;
use crate::air::timer::Timer;
use crate::air::{Air, Management};
use crate::mac::edca::Ac;
use crate::mac::frame::{DataFrame, Frame, MgmtFrame, MAX_QUEUED_FRAMES};
use crate::packet::StationId;
use crate::Nanos;

/// What a node does when its contention ends ([`Air::node_wins`]).
pub(crate) struct NodeAccess {
    /// When its transmission starts (its other ACs froze then).
    pub(crate) busy_at: Nanos,
    /// The AC that won (`None`: the AP's beacon).
    pub(crate) ac: Option<Ac>,
    /// What it sends (`None`: the winning AC had nothing after all).
    pub(crate) tx: Option<Tx>,
}

impl Air {
    /// An AC of node `n` got its first PPDU at `now`: if the node senses the medium busy
    /// (see [`Air::senses_busy`]) it invokes backoff (802.11-2016 10.22.2.2 a) unless
    /// post-backoff is still running; if it senses it idle and its counter already ran
    /// out (AIFS has passed and post-backoff finished), the frame may go at once.
    pub(crate) fn edcaf_woken(&mut self, n: usize, ac: Ac, now: Nanos) {
        if self.nodes[n].away {
            // Contention starts when the radio is back (`Air::radio_back`).
            return;
        }
        let slot = self.timing.slot;
        let busy = self.senses_busy(n, now);
        let node = &mut self.nodes[n];
        let b = &mut node.edca[ac.index()];
        if busy {
            if b.slots == 0 {
                b.draw(&mut node.rng);
            }
        } else if b.tx_time(slot) < now {
            b.slots = 0;
            b.counted_from = now;
        }
        if self.medium.is_spatial() {
            // With space the medium keeps the timer.
            self.refresh_medium_timer();
        } else if !self.medium.view_busy(n) {
            let t = self.nodes[n].edca[ac.index()].tx_time(slot);
            let earliest = self.timers.get(Timer::Access).map_or(t, |cur| cur.min(t));
            self.timers.set(Timer::Access, Some(earliest));
        }
    }

    /// Whether node `n` senses the medium busy at `now`, for the backoff rule of a frame
    /// queued for an idle EDCA function (802.11-2016 10.22.2.2 a): by physical carrier
    /// sense, by virtual carrier sense (its NAV), or because it holds an exchange. The
    /// same rule on both media: with space from the node's own view
    /// ([`SpatialMedium::senses_busy`](crate::air::medium::SpatialMedium::senses_busy)); in one
    /// collision domain the exchange is laid out whole and holds every node busy except
    /// where a node's own view has a gap ([`Exchange::idle_for`]): the addressee in the
    /// SIFS before its CTS or response (a frame addressed to it sets no NAV, 10.3.2.4 —
    /// where the TCP ACKs for the data it just received are queued), and every node
    /// but the holder in the SIFS between two exchanges of a TXOP (the NAV of the first
    /// ended with its response). ns-3 decides alike (`NeedBackoffUponAccess`, whose
    /// `IsBusy` is false between a reception's end and the response's start).
    pub(crate) fn senses_busy(&self, n: usize, now: Nanos) -> bool {
        self.medium.senses_busy(n, now, self.timing.sifs)
    }

    /// Queue one of the MAC's own frames (a null-data frame or a PS-Poll) at station
    /// `sta` (a queued, not yet sent null-data frame takes the newer PM bit). Returns
    /// false if the queue is full.
    pub(crate) fn queue_frame(&mut self, sta: StationId, frame: Frame, now: Nanos) -> bool {
        let n = sta.node().index();
        let had = self.nodes[n].has_frame(Ac::Vo);
        let node = &mut self.nodes[n];
        let back_in_air = node.frame_in_air && node.frames.len() == 1;
        if !back_in_air {
            if let Some(b) = node.frames.back_mut() {
                if matches!(
                    (*b, frame),
                    (
                        Frame::Data(DataFrame::NullData { .. }),
                        Frame::Data(DataFrame::NullData { .. })
                    )
                ) {
                    *b = frame;
                    return true;
                }
            }
        }
        if node.frames.len() >= MAX_QUEUED_FRAMES {
            return false;
        }
        node.frames.push_back(frame);
        if !had {
            self.edcaf_woken(n, Ac::Vo, now);
        }
        true
    }

    /// Start contention for the ACs of node `n` that had no frame before (`had`).
    pub(crate) fn wake_new_frames(&mut self, n: usize, had: [bool; 4], now: Nanos) {
        for ac in Ac::ALL {
            if !had[ac.index()] && self.nodes[n].has_frame(ac) {
                self.edcaf_woken(n, ac, now);
            }
        }
    }

    /// Contention ended at `t`: find who transmits, freeze the others, start the exchange.
    pub(crate) fn start_access(&mut self, t: Nanos, mgmt: &mut dyn Management) {
        let slot = self.timing.slot;
        let window_end = t + self.timing.cca_detect;
        let rule = self.cfg.backoff_rule;
        self.clear_txs();
        let beacon = self.beacon_tx_time();
        for n in 0..self.nodes.len() {
            if self.nodes[n].away {
                continue;
            }
            match self.node_wins(n, window_end, beacon.filter(|_| n == 0)) {
                Some(NodeAccess { tx: Some(tx), .. }) => self.medium.shared_mut().exch.txs.push(tx),
                Some(_) => {}
                None => {
                    for b in self.nodes[n].edca.iter_mut() {
                        b.freeze(window_end, slot, rule);
                    }
                }
            }
        }
        let sh = self.medium.shared_mut();
        if sh.exch.txs.is_empty() {
            // Nothing could be built after all (defensive: has_ppdu promised a frame).
            self.reschedule();
            return;
        }
        sh.busy = true;
        sh.exch.txop_start = t;
        sh.exch.busy_from = t;
        if sh.exch.txs.len() > 1 {
            self.resolve_collision(mgmt);
        } else {
            self.resolve_single(None, mgmt);
        }
    }

    /// Node `n` transmits if the backoff of one of its ACs with a frame ends by
    /// `window_end`, or, for the AP, if its `beacon` is due by then: what it sends, on
    /// both media. The AP's beacon queue (AIFSN 1, no backoff: ath9k's beacon queue)
    /// goes before its data queues; otherwise the earliest AC (the higher at a tie; the
    /// lower ones that end in the same slot suffer an internal collision, 10.22.2.4)
    /// sends one of the MAC's own frames (VO) or its next PPDU. Its other ACs freeze at
    /// the transmission's start. `None`: it does not transmit (nothing frozen).
    pub(crate) fn node_wins(
        &mut self,
        n: usize,
        window_end: Nanos,
        beacon: Option<(Nanos, u64)>,
    ) -> Option<NodeAccess> {
        let (slot, rule) = (self.timing.slot, self.cfg.backoff_rule);
        let node = &mut self.nodes[n];
        let best = node.earliest_ac(window_end, slot);
        let beacon_now =
            beacon.filter(|&(bt, _)| bt <= window_end && best.is_none_or(|(t0, _)| bt <= t0));
        let (busy_at, winner, tx) = match (best, beacon_now) {
            (_, Some((bt, k))) => {
                self.beacon = None;
                let ok = self.spare_ok.pop().unwrap_or_default();
                let beacon = Frame::Mgmt(MgmtFrame::Beacon { k });
                (bt, None, Some(Tx::own(node.id, bt, beacon, ok)))
            }
            (Some((start, ac)), None) => {
                self.internal_collisions += node.collide_internally(ac, start, slot);
                let ok = self.spare_ok.pop().unwrap_or_default();
                let tx = match node.frames.front().copied().filter(|_| ac == Ac::Vo) {
                    Some(f) => {
                        node.frame_in_air = true;
                        Some(Tx::own(node.id, start, f, ok))
                    }
                    None => {
                        let ppdu = node.path.take_ppdu(start, ac);
                        ppdu.map(|p| Tx::data(node.id, ac, start, p, ok))
                    }
                };
                (start, Some(ac), tx)
            }
            (None, None) => return None,
        };
        for ac in Ac::ALL {
            if Some(ac) != winner {
                node.edca[ac.index()].freeze(busy_at, slot, rule);
            }
        }
        Some(NodeAccess {
            busy_at,
            ac: winner,
            tx,
        })
    }

    /// Back to contention: every AC counts from its node's interframe reference.
    pub(crate) fn reschedule(&mut self) {
        let slot = self.timing.slot;
        let mut next: Option<Nanos> = None;
        for node in &mut self.nodes {
            for ac in Ac::ALL {
                let contends = !node.away && node.has_frame(ac);
                let b = &mut node.edca[ac.index()];
                b.counted_from = node.ifs_ref + self.timing.aifs(b.params.aifsn);
                if contends {
                    let t = b.tx_time(slot);
                    next = Some(next.map_or(t, |c: Nanos| c.min(t)));
                }
            }
        }
        if let Some((bt, _)) = self.beacon_tx_time() {
            next = Some(next.map_or(bt, |c| c.min(bt)));
        }
        self.timers.set(Timer::Access, next);
    }

    /// While the medium is idle: the earliest transmission of the present nodes'
    /// contending ACs (from their current counters) and of a pending beacon.
    pub(crate) fn idle_timer(&self) -> Option<Nanos> {
        let slot = self.timing.slot;
        let mut next = self.beacon_tx_time().map(|(bt, _)| bt);
        for node in &self.nodes {
            if node.away {
                continue;
            }
            if let Some((t, _)) = node.earliest_ac(Nanos::MAX, slot) {
                next = Some(next.map_or(t, |c: Nanos| c.min(t)));
            }
        }
        next
    }

    /// Node `n`'s radio leaves (retunes or sleeps): its backoff counters stop, unless
    /// its view of the medium was busy (then they stopped already); with space its
    /// receiver lets go of what it was locked on.
    pub(crate) fn radio_gone(&mut self, n: usize, t: Nanos) {
        let (slot, rule) = (self.timing.slot, self.cfg.backoff_rule);
        let idle = !self.medium.view_busy(n);
        self.addressee_left(n, t);
        self.medium.radio_gone(n, t);
        let node = &mut self.nodes[n];
        node.away = true;
        if idle {
            for b in node.edca.iter_mut() {
                b.freeze(t, slot, rule);
            }
        }
        self.contention_changed();
    }

    /// Node `n`'s radio is back: it defers AIFS, then counts its remaining backoff. If
    /// its view is busy it counts from when the medium turns idle; if idle, from AIFS
    /// after its return (with space, after its interframe reference, which an EIFS or a
    /// response timeout may hold later).
    pub(crate) fn radio_back(&mut self, n: usize, t: Nanos) {
        let node = &mut self.nodes[n];
        node.away = false;
        node.ifs_ref = node.ifs_ref.max(t);
        if !self.medium.view_busy(n) {
            let from = if self.medium.is_spatial() {
                node.ifs_ref
            } else {
                t
            };
            for b in node.edca.iter_mut() {
                b.counted_from = from + self.timing.aifs(b.params.aifsn);
            }
        }
        self.contention_changed();
    }

    /// The contention of nodes changed (a radio left or came back, a beacon's
    /// listeners woke): re-arm the next access. With space the medium keeps that timer
    /// ([`Air::refresh_medium_timer`]); in one collision domain the access timer, while
    /// no exchange is on the air (its end reschedules contention).
    pub(crate) fn contention_changed(&mut self) {
        match &self.medium {
            Medium::Spatial(_) => self.refresh_medium_timer(),
            Medium::Shared(sh) => {
                if !sh.busy {
                    self.timers.set(Timer::Access, self.idle_timer());
                }
            }
        }
    }

    /// When the pending beacon goes out if the medium stays idle: at its TBTT, but not
    /// before AIFSN 1 (PIFS) after the medium went idle. With its number.
    pub(crate) fn beacon_tx_time(&self) -> Option<(Nanos, u64)> {
        let b = self.beacon?;
        let at = b.tbtt.max(self.nodes[0].ifs_ref + self.timing.aifs(1));
        Some((at, b.k))
    }
}
