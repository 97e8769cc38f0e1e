//! The MAC engine of a cell ([`Air`]), over the medium it was built with: EDCA
//! contention and the access that starts an exchange (`contention.rs`), the frame
//! exchange and what both media share of it (`exchange.rs`), the medium itself
//! (`medium/`: one collision domain, or every node's own view with space), the nodes it
//! runs (`node.rs`), what it counts (`stats.rs`), its timers (`timer.rs`), the records
//! of what it put on the air (`capture.rs`) and the A-MSDUs it hands out as their MSDUs
//! (`amsdu.rs`).
//!
//! The engine runs the parts of `mac/` (the frame sequence, the protection rule,
//! backoff counters, block acks) on its nodes, and knows nothing of the cell around
//! it: it imports nothing from `cell/`. What it owes the management above it (beacons,
//! scanning, power save, `cell/management.rs`) goes through one narrow context, the
//! [`Management`] trait it is handed at each step: a station's frame the AP decoded, a
//! beacon heard or lost, data received, a frame done, an exchange ended. The
//! management acts back on the engine through the `&mut Air` it is handed with each
//! call, as smoltcp's `Interface` hands its `Context` to the sockets.

pub(crate) mod amsdu;
pub(crate) mod capture;
pub(crate) mod charge;
pub(crate) mod contention;
pub(crate) mod exchange;
pub(crate) mod medium;
pub(crate) mod node;
pub(crate) mod stats;
pub(crate) mod timer;

#[cfg(test)]
mod tests;

use self::medium::Medium;
use self::node::Node;
use self::stats::{AirtimeRecord, LinkStats, StationStats};
use self::timer::{Timer, TimerTable};
use crate::budget::CellStamps;
use crate::capture::{AirCapture, CapturedFrame};
use crate::mac::blockack::Received;
use crate::mac::edca::BackoffRule;
use crate::mac::frame::Frame;
use crate::mac80211::txq::LinkId;
use crate::packet::{DropReason, Dropped, NodeId, Packet, StationId};
use crate::phy::timing::PhyTiming;
use crate::phy::{Band, Standard};
use crate::Nanos;
use std::collections::VecDeque;

/// What the cell reports, through [`Cell::poll_output`](crate::cell::Cell::poll_output).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// `packet` left the cell at `packet.dst`.
    Delivered {
        /// When the receiver released it (the end of the data PPDU that completed it).
        at: Nanos,
        /// The packet as handed in, with `enqueued_at` set to its arrival.
        packet: Packet,
        /// When it crossed each boundary of the cell: its delay budget
        /// ([`crate::budget`]).
        stamps: CellStamps,
    },
    /// `packet` was lost inside the cell.
    Dropped {
        /// When it was dropped.
        at: Nanos,
        /// The node that dropped it.
        node: NodeId,
        /// The packet as handed in.
        packet: Packet,
        /// Why (a full queue, the retry limit, the AQM, no route, ...).
        reason: DropReason,
    },
    /// One data exchange's airtime (only with
    /// [`CellConfig::airtime_records`](crate::cell::CellConfig::airtime_records)).
    Airtime(AirtimeRecord),
}

/// What the engine reads of the cell's configuration, copied once when it is built.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AirConfig {
    pub(crate) standard: Standard,
    pub(crate) band: Band,
    /// QoS data frames (the MPDU overhead).
    pub(crate) qos: bool,
    pub(crate) backoff_rule: BackoffRule,
    pub(crate) retry_limit: u8,
    pub(crate) rts_threshold_bytes: Option<u32>,
    /// Emit an [`Output::Airtime`] per data transmission.
    pub(crate) airtime_records: bool,
}

/// The AP's beacon whose TBTT has passed, waiting for the medium in the AP's beacon
/// queue (AIFSN 1, no backoff: ath9k's beacon queue). Management puts it there at its
/// TBTT; the engine takes it when the beacon goes out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PendingBeacon {
    /// The beacon's number since the start.
    pub(crate) k: u64,
    /// Its target beacon transmission time.
    pub(crate) tbtt: Nanos,
}

/// What the engine tells the management above it, at the moment it happens: the one
/// way up from the MAC engine. The management acts back through the `&mut Air` it is
/// handed (it may queue the MAC's own frames, take radios off the channel or bring them
/// back, pause or release the AP's queues), never by reaching into the engine's steps.
/// A cell without beacons, scanning or power save does nothing on any of them.
pub(crate) trait Management {
    /// The AP decoded station `sta`'s own frame `f` (a null-data frame or a PS-Poll),
    /// which ended at `t`.
    fn frame_heard_by_ap(&mut self, air: &mut Air, t: Nanos, sta: StationId, f: Frame);
    /// The AP's beacon ended at `t`: each station that listens for beacons and whose
    /// radio is on asks `heard` whether it decoded it (in station order, so the draws
    /// keep their order on both media).
    fn beacon_ended(
        &mut self,
        air: &mut Air,
        t: Nanos,
        heard: &mut dyn FnMut(&mut Air, StationId) -> bool,
    );
    /// The AP's beacon collided (its exchange ended at `t`): no station heard it.
    fn beacon_collided(&mut self, air: &mut Air, t: Nanos);
    /// Station `sta`'s own frame `f` completed at `t`: acknowledged, or given up.
    fn frame_done(&mut self, air: &mut Air, t: Nanos, sta: StationId, f: Frame, acked: bool);
    /// Data from node `tx` reached node `rx` at `t` (at least one MPDU decoded).
    fn data_received(&mut self, air: &mut Air, t: Nanos, tx: NodeId, rx: NodeId);
    /// An exchange ended at `t`: a radio that waited for it to leave leaves now.
    fn exchange_ended(&mut self, air: &mut Air, t: Nanos);
    /// The management's own deadline may have moved.
    fn refresh(&mut self, air: &mut Air);
    /// How a packet capture shows the AP's beacon `k`: its interval, DTIM and TIM,
    /// as the management that builds beacons has them now.
    fn captured_beacon(&self, k: u64) -> CapturedFrame;
}

/// The MAC engine of one cell: its nodes (EDCA functions, transmit paths, links), the
/// medium, the MAC's timers and what it reports. Stepped by [`Air::fire`] at its
/// deadlines; the cell hands it packets and the [`Management`] it answers to.
#[derive(Clone, Debug)]
pub(crate) struct Air {
    pub(crate) cfg: AirConfig,
    pub(crate) timing: PhyTiming,
    pub(crate) nodes: Vec<Node>,
    /// The deadlines of management and of the MAC's cycle.
    pub(crate) timers: TimerTable,
    /// Outputs not yet polled.
    pub(crate) out: VecDeque<Output>,
    /// Scratch: packets a reorder buffer released, before they become outputs.
    pub(crate) released: Vec<Received>,
    /// [`PhyTiming::eifs_extra`], computed once.
    pub(crate) eifs_extra: Nanos,
    /// Per-MPDU outcome vectors of finished transmissions, for reuse. At most one per
    /// transmission of an exchange.
    pub(crate) spare_ok: Vec<Vec<bool>>,
    /// Per station, indexed by station number (index 0 unused).
    pub(crate) stats: Vec<StationStats>,
    pub(crate) busy_ns: u64,
    pub(crate) internal_collisions: u64,
    /// Packets whose addressee already has them while a copy of theirs is still counted
    /// inside: their exchange failed only for want of the response (an ACK or BlockAck
    /// lost at the sender, which happens with space), so the sender keeps the MPDU for
    /// a retry that the receiver will discard as a duplicate by its sequence number.
    /// They left the model when they were delivered; [`Air::packets_inside`] does not
    /// count their copies. An id leaves the set when the copy is received again (the
    /// air stops counting it) or dropped.
    pub(crate) delivered_copies: std::collections::HashSet<u64>,
    /// The AP's beacon waiting for the medium, if any.
    pub(crate) beacon: Option<PendingBeacon>,
    pub(crate) beacon_airtime_ns: u64,
    /// The medium, chosen when the cell is built: one collision domain, or every
    /// node's own view of it when the cell has space.
    pub(crate) medium: Medium,
    /// The PPDUs put on the air, while capture is on ([`Air::capture_air`]).
    pub(crate) capture: Option<Box<AirCapture>>,
}

impl Air {
    /// The MAC timer `timer` (not management's) fires at `t`.
    // perf: inlined into `Cell::fire`, which is out of line already.
    #[inline]
    pub(crate) fn fire(&mut self, timer: Timer, t: Nanos, mgmt: &mut dyn Management) {
        match timer {
            Timer::Management => unreachable!("management's timer is the cell's to run"),
            Timer::Access => {
                debug_assert!(!self.medium.shared().busy);
                self.start_access(t, mgmt);
            }
            Timer::Delivery => {
                debug_assert!(self.medium.shared().busy && !self.medium.shared().exch.delivered);
                self.deliver(t, mgmt);
            }
            Timer::ExchangeEnd => {
                debug_assert!(self.medium.shared().busy && self.medium.shared().exch.delivered);
                self.finish_exchange(t, mgmt);
            }
            Timer::Medium => self.medium_fire(t, mgmt),
        }
    }

    /// A packet handed in at node `src` joins the transmit path of its `link`; the
    /// EDCA function of its AC wakes if it had nothing to send.
    #[inline]
    pub(crate) fn enqueue(&mut self, now: Nanos, src: usize, link: LinkId, packet: Packet) {
        // Enqueueing moves frames of the packet's AC only (TxPath::enqueue kicks that
        // AC alone), so only that EDCAF can wake.
        let ac = self.nodes[src].path.classify_ac(&packet);
        let had = self.nodes[src].has_frame(ac);
        #[cfg(debug_assertions)]
        let had_all = crate::mac::edca::Ac::ALL.map(|a| self.nodes[src].has_frame(a));
        self.nodes[src].path.enqueue(now, link, packet);
        self.drain_path(src, now);
        #[cfg(debug_assertions)]
        for a in crate::mac::edca::Ac::ALL.into_iter().filter(|&a| a != ac) {
            debug_assert_eq!(had_all[a.index()], self.nodes[src].has_frame(a));
        }
        if !had && self.nodes[src].has_frame(ac) {
            self.edcaf_woken(src, ac, now);
        }
    }

    /// Number of stations.
    pub(crate) fn stations(&self) -> usize {
        self.nodes.len() - 1
    }

    /// Packets inside the engine: queued in a path, in the air or held in a reorder
    /// buffer; not the copies of packets already delivered that wait for a retry (see
    /// `delivered_copies`).
    pub(crate) fn packets_inside(&self) -> u64 {
        let mut n = 0;
        for node in &self.nodes {
            n += node.path.packets_inside();
            for link in &node.links {
                n += link.rx.iter().map(|r| r.held() as u64).sum::<u64>();
            }
        }
        n += self.medium.packets_in_air();
        n - self.delivered_copies.len() as u64
    }

    /// Whether node `n` is sending or holds an exchange (its frames are in the air).
    pub(crate) fn on_air(&self, n: usize) -> bool {
        self.medium.on_air(n)
    }

    /// Report what node `n`'s path dropped or gave up since the last call.
    #[inline]
    pub(crate) fn drain_path(&mut self, n: usize, now: Nanos) {
        // perf: called after every packet handed to a path, which usually reports
        // nothing; the reporting stays out of line.
        if self.nodes[n].path.drops.is_empty() && self.nodes[n].path.gave_up.is_empty() {
            return;
        }
        self.report_path_losses(n, now);
    }

    /// Report what node `n`'s path dropped (outputs and counters) and tell the
    /// recipients of the frames it gave up to stop waiting for them.
    #[inline(never)]
    fn report_path_losses(&mut self, n: usize, now: Nanos) {
        let mut drops = std::mem::take(&mut self.nodes[n].path.drops);
        // A receiver can decode an MPDU whose BlockAck its sender then misses (with
        // space, under interference; on both media, when the receiver's radio left
        // before answering, `Air::addressee_left`); if the sender gives it up it was
        // delivered all the same, and is not a loss. The path reports each given-up
        // MPDU as a retry-limit drop, in the same order.
        let mut delivered_anyway = (!self.nodes[n].path.gave_up.is_empty()).then(|| {
            self.nodes[n]
                .path
                .gave_up
                .iter()
                .map(|m| {
                    let peer = self.nodes[n].link(m.link).peer.index();
                    let src = self.nodes[n].id;
                    self.nodes[peer].link_to(src).is_some_and(|l| {
                        self.nodes[peer].link(l).rx[m.tid.index()].has_received(m.seq)
                    })
                })
                .collect::<Vec<bool>>()
                .into_iter()
        });
        for Dropped { packet, reason } in drops.drain(..) {
            if !self.delivered_copies.is_empty() {
                self.delivered_copies.remove(&packet.id);
            }
            let received = reason == DropReason::RetryLimit
                && delivered_anyway
                    .as_mut()
                    .and_then(|it| it.next())
                    .unwrap_or(false);
            if packet.amsdu_msdus > 1 {
                for p in self.msdus_dropped(n, packet, received) {
                    self.report_msdu_drop(now, n, p, reason);
                }
            } else if !received {
                self.report_msdu_drop(now, n, packet, reason);
            }
        }
        self.nodes[n].path.drops = drops;
        let mut gave_up = std::mem::take(&mut self.nodes[n].path.gave_up);
        for m in gave_up.drain(..) {
            // The recipient stops waiting for it (see `RxReorder::give_up`).
            let peer = self.nodes[n].link(m.link).peer;
            let src_id = self.nodes[n].id;
            let rx_node = peer.index();
            if let Some(rx_link) = self.nodes[rx_node].link_to(src_id) {
                let released = &mut self.released;
                self.nodes[rx_node].link_mut(rx_link).rx[m.tid.index()]
                    .give_up(m.seq, &mut |p| released.push(p));
                self.emit_released(now, n, m.link);
            }
        }
        self.nodes[n].path.gave_up = gave_up;
    }

    /// The station at one end of node `node`'s `link`: the peer on the AP, the node
    /// itself on a station.
    pub(crate) fn station_of(&self, node: usize, link: LinkId) -> StationId {
        match NodeId(node as u16).as_station() {
            Some(sta) => sta,
            None => StationId::on_ap_link(link),
        }
    }

    /// Station `sta`'s counters.
    pub(crate) fn station_stats(&mut self, sta: StationId) -> &mut StationStats {
        &mut self.stats[sta.node().index()]
    }

    /// The counters of one direction of station `station`'s link.
    pub(crate) fn link_stats(&mut self, station: StationId, uplink: bool) -> &mut LinkStats {
        let s = self.station_stats(station);
        if uplink {
            &mut s.up
        } else {
            &mut s.down
        }
    }

    /// The MAC header and FCS around each MPDU's payload.
    pub(crate) fn mpdu_overhead(&self) -> u32 {
        crate::mac::ampdu::mpdu_overhead(self.cfg.qos)
    }
}
