//! One BSS: an AP and N stations sharing one channel, driven sans-I/O.
//!
//! Input: [`Cell::handle_packet`] (a packet arrives at the AP from the wired side, or at
//! a station from its host) and [`Cell::handle_timeout`]. Output: [`Cell::poll_output`]
//! (deliveries, drops, airtime records) and [`Cell::poll_timeout`] (the next deadline).
//!
//! Channel access follows EDCA without per-slot events: every EDCA function keeps its
//! backoff counter and the time it counts from; contention ends at the earliest
//! `counted_from + slots × slot` among the functions that have frames. Functions whose
//! backoff ends within aCCATime of that instant transmit too and collide. When the
//! medium turns busy the others' counters are reduced by the slot boundaries that passed
//! (see [`BackoffRule`]).
//!
//! Each access is one frame exchange, computed in full when it starts: optional RTS/CTS,
//! the data PPDU (one MPDU, or an A-MPDU under a block-ack agreement), SIFS and the ACK
//! or BlockAck. Within a TXOP limit further exchanges follow after SIFS. Receivers
//! deliver MSDUs in sequence order through a reorder buffer at the end of the data PPDU.
//!
//! Above the MAC every node runs a transmit path ([`TxPath`]): the qdisc, mac80211's
//! TXQs, the airtime scheduler, AQL and the driver, configured by a [`StackConfig`]
//! (a kernel era). The MAC transmits the PPDUs the driver put in the hardware queue,
//! reports their outcome back, and charges the airtime to the AP's scheduler.

use crate::driver::{BuildLimits, Ppdu, NUM_TIDS};
use crate::mac::ampdu::{
    BA_WINDOW, DATA_OVERHEAD_BYTES, HT_MAX_AMPDU_BYTES, PPDU_MAX_TIME, QOS_DATA_OVERHEAD_BYTES,
    VHT_MAX_AMPDU_BYTES,
};
use crate::mac::blockack::RxReorder;
use crate::mac::edca::{self, Ac, Backoff, BackoffRule, EdcaTable};
use crate::packet::{DropReason, NodeId, Packet};
use crate::phy::channel::ErrorModel;
use crate::phy::rates::{control_response_rate, ACK_BYTES, BLOCK_ACK_BYTES, CTS_BYTES, RTS_BYTES};
use crate::phy::timing::PhyTiming;
use crate::phy::{Band, Standard, TxVector};
use crate::rng::{RngStream, StreamKind};
use crate::stack::StackConfig;
use crate::txpath::{PathLink, TxPath, TxReport};
use crate::Nanos;
use std::collections::VecDeque;

/// One station's radio link to the AP (the same rate and error model both ways).
#[derive(Clone, Debug, PartialEq)]
pub struct StationConfig {
    pub tx: TxVector,
    pub error: ErrorModel,
    /// Airtime-fairness weight (`NL80211_ATTR_AIRTIME_WEIGHT`, default 256).
    pub weight: u16,
}

impl StationConfig {
    /// A station at rate `tx` with channel `error` and the default weight.
    pub fn new(tx: TxVector, error: ErrorModel) -> StationConfig {
        StationConfig {
            tx,
            error,
            weight: crate::mac80211::scheduler::DEFAULT_AIRTIME_WEIGHT,
        }
    }
}

/// Everything the cell needs to know.
#[derive(Clone, Debug, PartialEq)]
pub struct CellConfig {
    pub standard: Standard,
    pub band: Band,
    /// QoS (WMM/EDCA with four ACs). Without it: legacy DCF, one queue, non-QoS headers.
    pub qos: bool,
    pub edca_ap: EdcaTable,
    pub edca_sta: EdcaTable,
    pub backoff_rule: BackoffRule,
    /// A-MPDU aggregation under block ack (HT/VHT links, every AC but VO).
    pub aggregation: bool,
    pub max_ampdu_subframes: u16,
    /// 0 means the PHY's maximum (65535 for HT, 1048575 for VHT).
    pub max_ampdu_bytes: u32,
    /// Longest aggregate PPDU (ath9k caps aggregates at 4 ms).
    pub max_ampdu_duration: Nanos,
    /// PSDUs longer than this are protected by RTS/CTS; `None` disables RTS/CTS.
    pub rts_threshold_bytes: Option<u32>,
    /// Transmission attempts per MPDU before it is dropped (dot11ShortRetryLimit = 7).
    pub retry_limit: u8,
    /// The transmit stack every node runs (qdisc, TXQs, scheduler, AQL, driver).
    pub stack: StackConfig,
    /// Emit an [`Output::Airtime`] record for every exchange.
    pub airtime_records: bool,
    pub stations: Vec<StationConfig>,
}

impl CellConfig {
    /// A QoS cell with the standard's default EDCA tables and `stations`.
    pub fn new(standard: Standard, band: Band, stations: Vec<StationConfig>) -> CellConfig {
        CellConfig {
            standard,
            band,
            qos: true,
            edca_ap: edca::ap_defaults(standard),
            edca_sta: edca::sta_defaults(standard),
            backoff_rule: BackoffRule::Edca,
            aggregation: matches!(standard, Standard::N | Standard::Ac),
            max_ampdu_subframes: BA_WINDOW,
            max_ampdu_bytes: 0,
            max_ampdu_duration: Nanos::from_us(4_000),
            rts_threshold_bytes: None,
            retry_limit: 7,
            stack: crate::stack::simple(),
            airtime_records: false,
            stations,
        }
    }

    /// Legacy DCF: no QoS, DIFS and aCWmin/aCWmax for everyone, no aggregation.
    pub fn legacy_dcf(standard: Standard, band: Band, stations: Vec<StationConfig>) -> CellConfig {
        let dcf = edca::dcf_defaults(standard);
        CellConfig {
            qos: false,
            edca_ap: dcf,
            edca_sta: dcf,
            backoff_rule: BackoffRule::Dcf,
            aggregation: false,
            ..CellConfig::new(standard, band, stations)
        }
    }

    /// Check the configuration; the error names the offending field.
    pub fn validate(&self) -> Result<(), String> {
        if self.stations.is_empty() {
            return Err("stations: a cell needs at least one station".into());
        }
        if self.stations.len() > u16::MAX as usize - 1 {
            return Err("stations: too many stations".into());
        }
        if !self.standard.operates_in(self.band) {
            return Err(format!(
                "phy.band: 802.11{} does not operate in the {} GHz band",
                self.standard.name(),
                self.band.name()
            ));
        }
        for (name, table) in [("edca_ap", &self.edca_ap), ("edca_sta", &self.edca_sta)] {
            for ac in Ac::ALL {
                table[ac.index()]
                    .validate()
                    .map_err(|e| format!("{name}.{}: {e}", ac.name().to_lowercase()))?;
            }
        }
        if self.retry_limit == 0 {
            return Err("mac.retry_limit: must be at least 1".into());
        }
        if self.stack.driver_queue_packets == 0 {
            return Err("stack.driver_queue_packets: must be at least 1".into());
        }
        if self.max_ampdu_subframes == 0 || self.max_ampdu_subframes > BA_WINDOW {
            return Err(format!(
                "mac.max_ampdu_subframes: must be 1 to {BA_WINDOW} (the block-ack window)"
            ));
        }
        for (i, s) in self.stations.iter().enumerate() {
            let key = format!("stations[{}]", i + 1);
            s.tx.validate().map_err(|e| format!("{key}: {e}"))?;
            s.error.validate().map_err(|e| format!("{key}: {e}"))?;
            if s.weight == 0 {
                return Err(format!("{key}: weight must be at least 1"));
            }
            if !tx_allowed(self.standard, &s.tx) || (s.tx.is_dsss() && self.band != Band::Ghz2_4) {
                return Err(format!(
                    "{key}: {} cannot be used in an 802.11{} BSS",
                    s.tx.modulation_label(),
                    self.standard.name()
                ));
            }
        }
        Ok(())
    }
}

/// Which frame formats a BSS of `standard` carries.
fn tx_allowed(standard: Standard, tx: &TxVector) -> bool {
    matches!(
        (standard, tx),
        (Standard::B, TxVector::Dsss { .. })
            | (Standard::A, TxVector::Ofdm { .. })
            | (Standard::G, TxVector::Ofdm { .. } | TxVector::Dsss { .. })
            // A 2.4 GHz 802.11n BSS also carries 802.11b rates (checked against the
            // band by the caller); the model does not switch to ERP protection or the
            // long slot for them.
            | (
                Standard::N,
                TxVector::Ofdm { .. } | TxVector::Ht { .. } | TxVector::Dsss { .. }
            )
            | (
                Standard::Ac,
                TxVector::Ofdm { .. } | TxVector::Ht { .. } | TxVector::Vht { .. }
            )
    )
}

/// How an exchange ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExchangeOutcome {
    /// Acknowledged (for an A-MPDU: a BlockAck came back, possibly with holes).
    Acked,
    /// No response: every MPDU was lost on the channel.
    Failed,
    /// Two or more transmissions overlapped.
    Collision,
}

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

/// What the model reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// `packet` left the cell at `packet.dst`.
    Delivered {
        at: Nanos,
        packet: Packet,
    },
    Dropped {
        at: Nanos,
        node: NodeId,
        packet: Packet,
        reason: DropReason,
    },
    Airtime(AirtimeRecord),
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
    pub airtime_ns: u64,
}

/// Per-station counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StationStats {
    pub up: LinkStats,
    pub down: LinkStats,
}

impl StationStats {
    pub fn airtime_ns(&self) -> u64 {
        self.up.airtime_ns + self.down.airtime_ns
    }
}

/// One radio link to a peer: its rate, channel, and the receive reorder state.
#[derive(Clone, Debug)]
struct Link {
    peer: NodeId,
    rx: [RxReorder; NUM_TIDS],
    txv: TxVector,
    error: ErrorModel,
    rng: RngStream,
}

#[derive(Clone, Debug)]
struct Node {
    id: NodeId,
    edca: [Backoff; 4],
    /// Start of the interframe space every AC counts its AIFS from.
    ifs_ref: Nanos,
    rng: RngStream,
    links: Vec<Link>,
    path: TxPath,
}

impl Node {
    fn link_to(&self, peer: NodeId) -> Option<usize> {
        self.path.link_to(peer).map(|l| l as usize)
    }
}

/// One transmission within an exchange.
#[derive(Clone, Debug)]
struct Tx {
    node: u16,
    ac: Ac,
    start: Nanos,
    /// End of this transmitter's first PPDU on the air (RTS or data).
    air_end: Nanos,
    ppdu: Ppdu,
    /// Per MPDU: decoded by the receiver.
    ok: Vec<bool>,
}

impl Tx {
    fn link(&self) -> u16 {
        self.ppdu.link
    }
    fn tid(&self) -> u8 {
        self.ppdu.tid
    }
}

#[derive(Clone, Debug, Default)]
struct Exchange {
    txs: Vec<Tx>,
    outcome: Option<ExchangeOutcome>,
    /// When the data PPDU ends and the receiver releases what it got.
    deliver_at: Nanos,
    delivered: bool,
    /// End of the busy period (the response, or the longest colliding PPDU).
    end: Nanos,
    /// Start of the current TXOP (for continuation within the TXOP limit).
    txop_start: Nanos,
    /// Where this exchange's busy time starts: its first transmission, or, within a
    /// TXOP, the end of the previous exchange (the SIFS between them is the holder's).
    busy_from: Nanos,
}

/// The cell.
#[derive(Clone, Debug)]
pub struct Cell {
    cfg: CellConfig,
    timing: PhyTiming,
    nodes: Vec<Node>,
    busy: bool,
    timer: Option<Nanos>,
    now: Nanos,
    exch: Exchange,
    out: VecDeque<Output>,
    /// Scratch: packets a reorder buffer released, before they become outputs.
    released: Vec<Packet>,
    stats: Vec<StationStats>,
    busy_ns: u64,
    internal_collisions: u64,
}

impl Cell {
    /// Build a cell; `seed` seeds every random stream (one per node and per link).
    pub fn new(cfg: CellConfig, seed: u64) -> Result<Cell, String> {
        cfg.validate()?;
        let timing = PhyTiming::new(cfg.standard, cfg.band);
        let n = cfg.stations.len();
        let mut nodes = Vec::with_capacity(n + 1);
        // Without VHT the fq memory limit is 4 MiB (reference §3.2).
        let fq_memory = match cfg.stack.fq_memory_limit_bytes {
            0 if cfg.standard == Standard::Ac => 16 << 20,
            0 => 4 << 20,
            m => m,
        };
        for id in 0..=n as u16 {
            let node_id = NodeId(id);
            let mut rng = RngStream::new(seed, StreamKind::Backoff, id as u64);
            let table = if node_id.is_ap() {
                &cfg.edca_ap
            } else {
                &cfg.edca_sta
            };
            let edca = Ac::ALL.map(|ac| {
                let mut b = Backoff::new(table[ac.index()], &mut rng);
                b.counted_from = timing.aifs(b.params.aifsn);
                b
            });
            let peers: Vec<(NodeId, &StationConfig)> = if node_id.is_ap() {
                (1..=n as u16)
                    .map(|s| (NodeId(s), &cfg.stations[s as usize - 1]))
                    .collect()
            } else {
                vec![(NodeId::AP, &cfg.stations[id as usize - 1])]
            };
            // mac80211 counts associated stations for the slow-station rule.
            let num_sta = if node_id.is_ap() { n as u64 } else { 1 };
            let path_links = peers
                .iter()
                .map(|(peer, sc)| PathLink {
                    peer: *peer,
                    weight: sc.weight,
                    limits: Ac::ALL.map(|ac| build_limits(&cfg, &timing, table, ac, &sc.tx)),
                    slow_station: expected_kbps(sc) < 6_000 * num_sta,
                })
                .collect();
            let links = peers
                .into_iter()
                .map(|(peer, sc)| Link {
                    peer,
                    rx: Default::default(),
                    txv: sc.tx,
                    error: sc.error,
                    rng: RngStream::new(
                        seed,
                        StreamKind::Channel,
                        ((id as u64) << 16) | peer.0 as u64,
                    ),
                })
                .collect();
            nodes.push(Node {
                id: node_id,
                edca,
                ifs_ref: Nanos::ZERO,
                rng,
                links,
                path: TxPath::new(&cfg.stack, cfg.qos, node_id.is_ap(), path_links, fq_memory),
            });
        }
        Ok(Cell {
            cfg,
            timing,
            nodes,
            busy: false,
            timer: None,
            now: Nanos::ZERO,
            exch: Exchange::default(),
            out: VecDeque::new(),
            released: Vec::new(),
            stats: vec![StationStats::default(); n + 1],
            busy_ns: 0,
            internal_collisions: 0,
        })
    }

    pub fn config(&self) -> &CellConfig {
        &self.cfg
    }

    pub fn timing(&self) -> &PhyTiming {
        &self.timing
    }

    /// Number of stations.
    pub fn stations(&self) -> usize {
        self.nodes.len() - 1
    }

    /// Per-station counters, indexed by station number (index 0 is unused).
    pub fn stats(&self) -> &[StationStats] {
        &self.stats
    }

    /// Total time the medium was busy (exchanges and collisions).
    pub fn busy_ns(&self) -> u64 {
        self.busy_ns
    }

    /// Internal (same-station, different-AC) collisions so far.
    pub fn internal_collisions(&self) -> u64 {
        self.internal_collisions
    }

    /// Pending AQL airtime the AP holds for `station`'s AC.
    pub fn aql_pending_us(&self, station: u16, ac: Ac) -> u32 {
        match station.checked_sub(1) {
            Some(link) => self.nodes[0].path.aql_pending_us(link, ac),
            None => 0,
        }
    }

    /// Packets inside the model: queued, in the air, or held in a reorder buffer.
    pub fn packets_inside(&self) -> u64 {
        let mut n = 0;
        for node in &self.nodes {
            n += node.path.packets_inside();
            for link in &node.links {
                n += link.rx.iter().map(|r| r.held() as u64).sum::<u64>();
            }
        }
        if self.busy {
            // After the data PPDU ended, what the receiver decoded belongs to it
            // (released or held for reordering), not to the air any more.
            for tx in &self.exch.txs {
                let received = |k: usize| self.exch.delivered && tx.ok.get(k) == Some(&true);
                n += (0..tx.ppdu.mpdus.len()).filter(|&k| !received(k)).count() as u64;
            }
        }
        n
    }

    /// The next time the model needs [`Cell::handle_timeout`].
    pub fn poll_timeout(&self) -> Option<Nanos> {
        self.timer
    }

    /// The next output, if any.
    pub fn poll_output(&mut self) -> Option<Output> {
        self.out.pop_front()
    }

    /// Run every deadline up to and including `now`.
    pub fn handle_timeout(&mut self, now: Nanos) {
        while let Some(t) = self.timer {
            if t > now {
                break;
            }
            self.now = t;
            if !self.busy {
                self.start_access(t);
            } else if !self.exch.delivered {
                self.deliver(t);
            } else {
                self.finish_exchange(t);
            }
        }
        if now > self.now {
            self.now = now;
        }
    }

    /// A packet arrives at `packet.src` at time `now`, for `packet.dst`.
    pub fn handle_packet(&mut self, now: Nanos, mut packet: Packet) {
        self.handle_timeout(now);
        packet.enqueued_at = now;
        let src = packet.src.index();
        let link = if src < self.nodes.len() && packet.src.is_ap() != packet.dst.is_ap() {
            self.nodes[src].path.link_to(packet.dst)
        } else {
            None
        };
        let Some(link) = link else {
            self.out.push_back(Output::Dropped {
                at: now,
                node: packet.src,
                packet,
                reason: DropReason::NoRoute,
            });
            return;
        };
        let station = self.station_of(src, link as usize);
        self.link_stats(station, src != 0).offered_packets += 1;
        let had: [bool; 4] = Ac::ALL.map(|ac| self.nodes[src].path.has_ppdu(ac));
        self.nodes[src].path.enqueue(now, link, packet);
        self.drain_path(src, now);
        for ac in Ac::ALL {
            if !had[ac.index()] && self.nodes[src].path.has_ppdu(ac) {
                self.edcaf_woken(src, ac, now);
            }
        }
    }

    /// Report what node `n`'s path dropped or gave up since the last call.
    fn drain_path(&mut self, n: usize, now: Nanos) {
        let mut drops = std::mem::take(&mut self.nodes[n].path.drops);
        for (packet, reason) in drops.drain(..) {
            let uplink = !packet.src.is_ap();
            let station = if uplink { packet.src } else { packet.dst }.index();
            let s = self.link_stats(station, uplink);
            match reason {
                DropReason::QueueFull => s.dropped_queue_full += 1,
                DropReason::RetryLimit => s.dropped_retry_limit += 1,
                _ => s.dropped_aqm += 1,
            }
            self.out.push_back(Output::Dropped {
                at: now,
                node: self.nodes[n].id,
                packet,
                reason,
            });
        }
        self.nodes[n].path.drops = drops;
        let mut gave_up = std::mem::take(&mut self.nodes[n].path.gave_up);
        for (link, tid, seq) in gave_up.drain(..) {
            // The recipient stops waiting for it (see `RxReorder::give_up`).
            let peer = self.nodes[n].links[link as usize].peer;
            let src_id = self.nodes[n].id;
            let rx_node = peer.index();
            if let Some(rx_link) = self.nodes[rx_node].link_to(src_id) {
                let released = &mut self.released;
                self.nodes[rx_node].links[rx_link].rx[tid as usize]
                    .give_up(seq, &mut |p| released.push(p));
                self.emit_released(now, n, link as usize);
            }
        }
        self.nodes[n].path.gave_up = gave_up;
    }

    /// An AC of node `n` got its first PPDU at `now`.
    fn edcaf_woken(&mut self, n: usize, ac: Ac, now: Nanos) {
        let slot = self.timing.slot;
        let busy = self.busy;
        let node = &mut self.nodes[n];
        let b = &mut node.edca[ac.index()];
        if busy {
            // A frame for an idle EDCAF while the medium is busy: invoke backoff
            // (10.22.2.2) unless post-backoff is still running.
            if b.slots == 0 {
                b.draw(&mut node.rng);
            }
            return;
        }
        // Medium idle: if the counter already ran out (AIFS has passed and post-backoff
        // finished), the frame may go at once.
        if b.tx_time(slot) < now {
            b.slots = 0;
            b.counted_from = now;
        }
        let t = b.tx_time(slot);
        self.timer = Some(self.timer.map_or(t, |cur| cur.min(t)));
    }

    fn station_of(&self, node: usize, link: usize) -> usize {
        if node == 0 {
            link + 1
        } else {
            node
        }
    }

    fn link_stats(&mut self, station: usize, uplink: bool) -> &mut LinkStats {
        let s = &mut self.stats[station];
        if uplink {
            &mut s.up
        } else {
            &mut s.down
        }
    }

    fn mpdu_overhead(&self) -> u32 {
        mpdu_overhead(self.cfg.qos)
    }

    /// Contention ended at `t`: find who transmits, freeze the others, start the exchange.
    fn start_access(&mut self, t: Nanos) {
        let slot = self.timing.slot;
        let window_end = t + self.timing.cca_detect;
        let rule = self.cfg.backoff_rule;
        self.exch.txs.clear();
        for n in 0..self.nodes.len() {
            let node = &mut self.nodes[n];
            let mut best: Option<(Nanos, Ac)> = None;
            for ac in Ac::ALL {
                if !node.path.has_ppdu(ac) {
                    continue;
                }
                let tx_at = node.edca[ac.index()].tx_time(slot);
                if tx_at <= window_end && best.is_none_or(|(bt, _)| tx_at < bt) {
                    best = Some((tx_at, ac)); // ACs are scanned VO first: ties keep the higher
                }
            }
            let busy_at = match best {
                Some((start, ac)) => {
                    // Lower-priority ACs whose backoff ended in the same slot: internal
                    // collision, handled as if they had collided (10.22.2.4).
                    for other in Ac::ALL {
                        if other != ac
                            && node.path.has_ppdu(other)
                            && node.edca[other.index()].tx_time(slot) == start
                        {
                            let b = &mut node.edca[other.index()];
                            b.fail(&mut node.rng);
                            self.internal_collisions += 1;
                        }
                    }
                    if let Some(ppdu) = node.path.take_ppdu(start, ac) {
                        self.exch.txs.push(Tx {
                            node: n as u16,
                            ac,
                            start,
                            air_end: start,
                            ppdu,
                            ok: Vec::new(),
                        });
                    }
                    start
                }
                None => window_end,
            };
            let winner = best.map(|(_, ac)| ac);
            for ac in Ac::ALL {
                if Some(ac) != winner {
                    node.edca[ac.index()].freeze(busy_at, slot, rule);
                }
            }
        }
        if self.exch.txs.is_empty() {
            // Nothing could be built after all (defensive: has_ppdu promised a frame).
            self.reschedule();
            return;
        }
        self.busy = true;
        self.exch.txop_start = t;
        self.exch.busy_from = t;
        if self.exch.txs.len() > 1 {
            self.resolve_collision();
        } else {
            self.resolve_single();
        }
    }

    fn uses_rts(&self, psdu_bytes: u32) -> bool {
        self.cfg
            .rts_threshold_bytes
            .is_some_and(|th| psdu_bytes > th)
    }

    /// Several transmissions overlap: all are lost.
    fn resolve_collision(&mut self) {
        let band = self.cfg.band;
        let mut end = Nanos::ZERO;
        for i in 0..self.exch.txs.len() {
            let txv = {
                let tx = &self.exch.txs[i];
                self.nodes[tx.node as usize].links[tx.link() as usize].txv
            };
            let psdu = self.exch.txs[i].ppdu.psdu_bytes;
            let dur = if self.uses_rts(psdu) {
                control_response_rate(&txv, self.cfg.standard).ppdu_duration(RTS_BYTES, band)
            } else {
                txv.ppdu_duration(psdu, band)
            };
            let tx = &mut self.exch.txs[i];
            tx.air_end = tx.start + dur;
            end = end.max(tx.air_end);
            tx.ok.clear();
            for m in tx.ppdu.mpdus.iter_mut() {
                m.attempts = m.attempts.saturating_add(1);
                tx.ok.push(false);
            }
        }
        self.exch.outcome = Some(ExchangeOutcome::Collision);
        self.exch.delivered = true;
        self.exch.end = end;
        self.timer = Some(end);
    }

    /// One transmission: draw the channel errors and lay out the exchange.
    fn resolve_single(&mut self) {
        let band = self.cfg.band;
        let sifs = self.timing.sifs;
        let overhead = self.mpdu_overhead();
        let rts = self.uses_rts(self.exch.txs[0].ppdu.psdu_bytes);
        let tx = &mut self.exch.txs[0];
        let link = &mut self.nodes[tx.node as usize].links[tx.ppdu.link as usize];
        let txv = link.txv;
        let ctl = control_response_rate(&txv, self.cfg.standard);
        let mut t = tx.start;
        if rts {
            t += ctl.ppdu_duration(RTS_BYTES, band)
                + sifs
                + ctl.ppdu_duration(CTS_BYTES, band)
                + sifs;
        }
        let data_end = t + txv.ppdu_duration(tx.ppdu.psdu_bytes, band);
        let mut any_ok = false;
        tx.ok.clear();
        for m in tx.ppdu.mpdus.iter_mut() {
            m.attempts = m.attempts.saturating_add(1);
            let per = link.error.per(&txv, m.packet.len_bytes + overhead);
            let ok = !link.rng.bernoulli(per);
            any_ok |= ok;
            tx.ok.push(ok);
        }
        tx.air_end = data_end;
        self.exch.deliver_at = data_end;
        self.exch.delivered = false;
        if any_ok {
            let resp = if tx.ppdu.aggregated {
                BLOCK_ACK_BYTES
            } else {
                ACK_BYTES
            };
            self.exch.end = data_end + sifs + ctl.ppdu_duration(resp, band);
            self.exch.outcome = Some(ExchangeOutcome::Acked);
        } else {
            self.exch.end = data_end;
            self.exch.outcome = Some(ExchangeOutcome::Failed);
        }
        self.timer = Some(data_end);
    }

    /// The data PPDU ended: the receiver releases what it decoded, in order.
    fn deliver(&mut self, t: Nanos) {
        self.exch.delivered = true;
        self.timer = Some(self.exch.end);
        let tx = &self.exch.txs[0];
        let (txn, link, tid) = (tx.node as usize, tx.link() as usize, tx.tid() as usize);
        let rx_node = self.nodes[txn].links[link].peer.index();
        let Some(rx_link) = self.nodes[rx_node].link_to(self.nodes[txn].id) else {
            return;
        };
        let reorder = &mut self.nodes[rx_node].links[rx_link].rx[tid];
        let released = &mut self.released;
        for (m, ok) in tx.ppdu.mpdus.iter().zip(&tx.ok) {
            if *ok {
                reorder.receive(m.seq, m.packet, &mut |p| released.push(p));
            }
        }
        self.emit_released(t, txn, link);
    }

    /// Report the packets a reorder buffer just released as delivered (they came from
    /// node `txn` over its link `link`).
    fn emit_released(&mut self, t: Nanos, txn: usize, link: usize) {
        let station = self.station_of(txn, link);
        let uplink = txn != 0;
        let (pkts, bytes) = (
            self.released.len() as u64,
            self.released
                .iter()
                .map(|p| p.len_bytes as u64)
                .sum::<u64>(),
        );
        for p in self.released.drain(..) {
            self.out.push_back(Output::Delivered { at: t, packet: p });
        }
        let s = self.link_stats(station, uplink);
        s.delivered_packets += pkts;
        s.delivered_bytes += bytes;
    }

    /// The busy period ended at `t`: report every PPDU's outcome to its path (which
    /// retries, drops and refills), count and charge airtime, then either continue the
    /// TXOP or return to contention.
    fn finish_exchange(&mut self, t: Nanos) {
        let outcome = self.exch.outcome.unwrap_or(ExchangeOutcome::Failed);
        let busy = t - self.exch.busy_from;
        self.busy_ns += busy.as_ns();
        let n_tx = self.exch.txs.len() as u64;
        let retry_limit = self.cfg.retry_limit;
        let txs = std::mem::take(&mut self.exch.txs);
        let mut air_ends = Vec::with_capacity(txs.len());
        for (i, mut tx) in txs.into_iter().enumerate() {
            let n = tx.node as usize;
            let link = tx.link() as usize;
            let station = self.station_of(n, link);
            let uplink = n != 0;
            air_ends.push((n, tx.air_end));
            // Charge the busy period: whole to a lone transmitter; a collision is shared
            // equally, the remainder going to the first transmitter.
            let share = busy.as_ns() / n_tx + if i == 0 { busy.as_ns() % n_tx } else { 0 };
            if outcome != ExchangeOutcome::Acked {
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
            {
                let s = self.link_stats(station, uplink);
                s.ppdus += 1;
                s.mpdus += mpdus as u64;
                s.mpdu_retries += retries;
                s.airtime_ns += share;
                match outcome {
                    ExchangeOutcome::Collision => s.collisions += 1,
                    ExchangeOutcome::Failed => s.failures += 1,
                    ExchangeOutcome::Acked => {}
                }
            }
            if self.cfg.airtime_records {
                self.out.push_back(Output::Airtime(AirtimeRecord {
                    station: NodeId(station as u16),
                    uplink,
                    ac: tx.ac,
                    start: if n_tx == 1 {
                        self.exch.busy_from
                    } else {
                        tx.start
                    },
                    airtime: Nanos(share),
                    mpdus: mpdus as u16,
                    acked_mpdus: acked,
                    outcome,
                }));
            }
            // The AP's scheduler is charged: TX airtime for downlink, RX for uplink.
            let share_us = (share / 1000) as u32;
            let (tx_us, rx_us) = if uplink { (0, share_us) } else { (share_us, 0) };
            self.nodes[0]
                .path
                .register_airtime(t, (station - 1) as u16, tx.tid(), tx_us, rx_us);
            let node = &mut self.nodes[n];
            let b = &mut node.edca[tx.ac.index()];
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
            if outcome == ExchangeOutcome::Acked {
                // Keep the lone transmitter's record for a TXOP continuation.
                self.exch.txs.push(tx);
            }
        }
        if outcome == ExchangeOutcome::Acked && self.continue_txop(t) {
            return;
        }
        // Interframe references for the next contention.
        let eifs_extra = self.timing.eifs_extra();
        let timeout = self.timing.response_timeout();
        for node in &mut self.nodes {
            node.ifs_ref = if outcome == ExchangeOutcome::Acked {
                t
            } else {
                t + eifs_extra
            };
        }
        if outcome != ExchangeOutcome::Acked {
            for (n, air_end) in air_ends {
                // A transmitter that got no response waits out its response timeout; it
                // saw no errored frame, so it uses AIFS, not EIFS.
                self.nodes[n].ifs_ref = (air_end + timeout).max(t);
            }
        }
        self.exch.txs.clear();
        self.busy = false;
        self.reschedule();
    }

    /// After an acknowledged exchange, send the next PPDU of the same AC after SIFS if
    /// the AC has a TXOP limit and that whole exchange fits in what is left of it.
    fn continue_txop(&mut self, t: Nanos) -> bool {
        let Some(prev) = self.exch.txs.first() else {
            return false;
        };
        let (n, ac) = (prev.node as usize, prev.ac);
        let limit = self.nodes[n].edca[ac.index()].params.txop_limit();
        if limit == Nanos::ZERO {
            return false;
        }
        let Some((link, aggregated, psdu_bytes)) = self.nodes[n]
            .path
            .peek_ppdu(t, ac)
            .map(|p| (p.link, p.aggregated, p.psdu_bytes))
        else {
            return false;
        };
        let txv = self.nodes[n].links[link as usize].txv;
        let ctl = control_response_rate(&txv, self.cfg.standard);
        let sifs = self.timing.sifs;
        let resp = if aggregated {
            BLOCK_ACK_BYTES
        } else {
            ACK_BYTES
        };
        let start = t + sifs;
        let exchange = txv.ppdu_duration(psdu_bytes, self.cfg.band)
            + sifs
            + ctl.ppdu_duration(resp, self.cfg.band);
        if start + exchange > self.exch.txop_start + limit || self.uses_rts(psdu_bytes) {
            return false;
        }
        let Some(ppdu) = self.nodes[n].path.take_ppdu(start, ac) else {
            return false;
        };
        let mut tx = self.exch.txs.pop().expect("checked above");
        self.exch.txs.clear();
        tx.start = start;
        tx.air_end = start;
        tx.ppdu = ppdu;
        self.exch.txs.push(tx);
        self.exch.busy_from = t;
        self.resolve_single();
        true
    }

    /// Back to contention: every AC counts from its node's interframe reference.
    fn reschedule(&mut self) {
        let slot = self.timing.slot;
        let mut next: Option<Nanos> = None;
        for node in &mut self.nodes {
            for ac in Ac::ALL {
                let b = &mut node.edca[ac.index()];
                b.counted_from = node.ifs_ref + self.timing.aifs(b.params.aifsn);
                if node.path.has_ppdu(ac) {
                    let t = b.tx_time(slot);
                    next = Some(next.map_or(t, |c: Nanos| c.min(t)));
                }
            }
        }
        self.timer = next;
    }
}

fn mpdu_overhead(qos: bool) -> u32 {
    if qos {
        QOS_DATA_OVERHEAD_BYTES
    } else {
        DATA_OVERHEAD_BYTES
    }
}

/// Rate control's expected throughput of a station's link in kbit/s (what mac80211
/// compares with 6 Mbit/s × stations for the slow-station CoDel rule): the PHY rate
/// times the 1500-byte frame success probability.
fn expected_kbps(sc: &StationConfig) -> u64 {
    let per = sc.error.per(&sc.tx, 1500 + QOS_DATA_OVERHEAD_BYTES);
    (sc.tx.data_rate_bps() as f64 * (1.0 - per) / 1000.0) as u64
}

/// How PPDUs of `ac` to a peer at rate `txv` are bounded: A-MPDU under block ack on
/// HT/VHT links (never VO), at most the stack's and the cell's subframe limits, the
/// PHY's byte limit, the maximum aggregate duration, and within a TXOP limit the whole
/// exchange (data + SIFS + BlockAck). RTS/CTS in front of an aggregate is not budgeted.
fn build_limits(
    cfg: &CellConfig,
    timing: &PhyTiming,
    table: &EdcaTable,
    ac: Ac,
    txv: &TxVector,
) -> BuildLimits {
    let aggregated = cfg.aggregation
        && cfg.qos
        && ac != Ac::Vo
        && matches!(txv, TxVector::Ht { .. } | TxVector::Vht { .. });
    let phy_max = if matches!(txv, TxVector::Vht { .. }) {
        VHT_MAX_AMPDU_BYTES
    } else {
        HT_MAX_AMPDU_BYTES
    };
    let max_bytes = match cfg.max_ampdu_bytes {
        0 => phy_max,
        b => b.min(phy_max),
    };
    let mut max_duration = cfg.max_ampdu_duration.min(PPDU_MAX_TIME);
    let txop = table[ac.index()].txop_limit();
    if txop > Nanos::ZERO {
        let response = timing.sifs
            + control_response_rate(txv, cfg.standard).ppdu_duration(BLOCK_ACK_BYTES, cfg.band);
        max_duration = max_duration.min(txop.saturating_sub(response));
    }
    BuildLimits {
        txv: *txv,
        band: cfg.band,
        aggregated,
        max_subframes: cfg.max_ampdu_subframes.min(cfg.stack.max_ampdu_subframes),
        max_bytes,
        max_duration,
        overhead_bytes: mpdu_overhead(cfg.qos),
    }
}
