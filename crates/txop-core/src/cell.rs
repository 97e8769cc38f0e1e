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
//! The queues here are plain per-(link, TID) FIFOs served round robin per AC, the way
//! ath9k's per-TID software queues are; the Linux stack (mac80211 TXQs) replaces them.

use crate::mac::ampdu::{
    AggregationLimits, AmpduLength, BA_WINDOW, DATA_OVERHEAD_BYTES, HT_MAX_AMPDU_BYTES,
    PPDU_MAX_TIME, QOS_DATA_OVERHEAD_BYTES, VHT_MAX_AMPDU_BYTES,
};
use crate::mac::blockack::{Mpdu, RxReorder, TxTid};
use crate::mac::edca::{self, Ac, Backoff, BackoffRule, EdcaTable};
use crate::packet::{DropReason, NodeId, Packet};
use crate::phy::channel::ErrorModel;
use crate::phy::rates::{control_response_rate, ACK_BYTES, BLOCK_ACK_BYTES, CTS_BYTES, RTS_BYTES};
use crate::phy::timing::PhyTiming;
use crate::phy::{Band, Standard, TxVector};
use crate::rng::{RngStream, StreamKind};
use crate::Nanos;
use std::collections::VecDeque;

/// Number of TIDs used for data (user priorities 0–7).
const NUM_TIDS: usize = 8;

/// One station's radio link to the AP (the same rate and error model both ways).
#[derive(Clone, Debug, PartialEq)]
pub struct StationConfig {
    pub tx: TxVector,
    pub error: ErrorModel,
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
    /// Packets per (link, TID) queue.
    pub queue_limit_packets: usize,
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
            queue_limit_packets: 1000,
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
        if self.queue_limit_packets == 0 {
            return Err("mac.queue_limit_packets: must be at least 1".into());
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
            if !tx_allowed(self.standard, &s.tx) {
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
            | (Standard::N, TxVector::Ofdm { .. } | TxVector::Ht { .. })
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

/// One (link, TID) transmit queue and receive reorder state.
#[derive(Clone, Debug)]
struct Link {
    peer: NodeId,
    tx: [TxTid; NUM_TIDS],
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
    /// Round-robin list per AC of (link, TID) queues that hold frames.
    active: [VecDeque<(u16, u8)>; 4],
    /// Packets queued per AC (new and awaiting retransmission).
    backlog: [usize; 4],
}

impl Node {
    fn link_to(&self, peer: NodeId) -> Option<usize> {
        if self.id.is_ap() {
            let i = peer.index().checked_sub(1)?;
            (i < self.links.len()).then_some(i)
        } else {
            peer.is_ap().then_some(0)
        }
    }
}

/// One transmission within an exchange.
#[derive(Clone, Copy, Debug)]
struct Tx {
    node: u16,
    ac: Ac,
    link: u16,
    tid: u8,
    start: Nanos,
    /// End of this transmitter's first PPDU on the air (RTS or data).
    air_end: Nanos,
    psdu_bytes: u32,
    /// Range of its MPDUs in `Exchange::mpdus`.
    first: usize,
    count: usize,
}

#[derive(Clone, Debug, Default)]
struct Exchange {
    txs: Vec<Tx>,
    mpdus: Vec<Mpdu>,
    ok: Vec<bool>,
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
            let links = peers
                .into_iter()
                .map(|(peer, sc)| Link {
                    peer,
                    tx: Default::default(),
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
                active: Default::default(),
                backlog: [0; 4],
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

    /// Packets inside the model: queued, in the air, or held in a reorder buffer.
    pub fn packets_inside(&self) -> u64 {
        let mut n = 0;
        for node in &self.nodes {
            for link in &node.links {
                n += link.tx.iter().map(|t| t.len() as u64).sum::<u64>();
                n += link.rx.iter().map(|r| r.held() as u64).sum::<u64>();
            }
        }
        if self.busy {
            // After the data PPDU ended, what the receiver decoded belongs to it
            // (released or held for reordering), not to the air any more.
            let received = |k: usize| self.exch.delivered && self.exch.ok.get(k) == Some(&true);
            n += (0..self.exch.mpdus.len()).filter(|&k| !received(k)).count() as u64;
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
            self.nodes[src].link_to(packet.dst)
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
        if !self.cfg.qos {
            packet.tid = 0;
        }
        let tid = (packet.tid & 7) as usize;
        let ac = if self.cfg.qos {
            Ac::from_up(packet.tid)
        } else {
            Ac::Be
        };
        let station = self.station_of(src, link);
        let uplink = src != 0;
        self.link_stats(station, uplink).offered_packets += 1;
        let limit = self.cfg.queue_limit_packets;
        let node = &mut self.nodes[src];
        let q = &mut node.links[link].tx[tid];
        if q.fifo.len() >= limit {
            self.link_stats(station, uplink).dropped_queue_full += 1;
            self.out.push_back(Output::Dropped {
                at: now,
                node: packet.src,
                packet,
                reason: DropReason::QueueFull,
            });
            return;
        }
        let was_empty = q.is_empty();
        q.fifo.push_back(packet);
        if was_empty {
            node.active[ac.index()].push_back((link as u16, tid as u8));
        }
        node.backlog[ac.index()] += 1;
        if node.backlog[ac.index()] == 1 {
            self.edcaf_woken(src, ac, now);
        }
    }

    /// An AC of node `n` got its first frame at `now`.
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
        if self.cfg.qos {
            QOS_DATA_OVERHEAD_BYTES
        } else {
            DATA_OVERHEAD_BYTES
        }
    }

    /// Is (link, TID) under a block-ack agreement (A-MPDU allowed)?
    fn ba_session(&self, txv: &TxVector, ac: Ac) -> bool {
        self.cfg.aggregation
            && self.cfg.qos
            && ac != Ac::Vo
            && matches!(txv, TxVector::Ht { .. } | TxVector::Vht { .. })
    }

    /// Contention ended at `t`: find who transmits, freeze the others, start the exchange.
    fn start_access(&mut self, t: Nanos) {
        let slot = self.timing.slot;
        let window_end = t + self.timing.cca_detect;
        let rule = self.cfg.backoff_rule;
        self.exch.txs.clear();
        self.exch.mpdus.clear();
        self.exch.ok.clear();
        for n in 0..self.nodes.len() {
            let node = &mut self.nodes[n];
            let mut best: Option<(Nanos, Ac)> = None;
            for ac in Ac::ALL {
                if node.backlog[ac.index()] == 0 {
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
                            && node.backlog[other.index()] > 0
                            && node.edca[other.index()].tx_time(slot) == start
                        {
                            let b = &mut node.edca[other.index()];
                            b.fail(&mut node.rng);
                            self.internal_collisions += 1;
                        }
                    }
                    self.exch.txs.push(Tx {
                        node: n as u16,
                        ac,
                        link: 0,
                        tid: 0,
                        start,
                        air_end: start,
                        psdu_bytes: 0,
                        first: 0,
                        count: 0,
                    });
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
        self.busy = true;
        self.exch.txop_start = t;
        self.exch.busy_from = t;
        let collision = self.exch.txs.len() > 1;
        for i in 0..self.exch.txs.len() {
            let tx = self.exch.txs[i];
            self.fill_ppdu(i, tx.start, None);
        }
        if collision {
            self.resolve_collision();
        } else {
            self.resolve_single();
        }
    }

    /// Take the MPDUs for transmission `i` from its node's queues. `max_duration` caps
    /// the exchange (data PPDU) within a TXOP.
    fn fill_ppdu(&mut self, i: usize, start: Nanos, max_duration: Option<Nanos>) -> bool {
        let overhead = self.mpdu_overhead();
        let band = self.cfg.band;
        let tx = self.exch.txs[i];
        let ac = tx.ac;
        let Some(&(link, tid)) = self.nodes[tx.node as usize].active[ac.index()].front() else {
            return false;
        };
        let txv = self.nodes[tx.node as usize].links[link as usize].txv;
        let ba = self.ba_session(&txv, ac);
        let node = &mut self.nodes[tx.node as usize];
        let limits = if ba {
            let phy_max = if matches!(txv, TxVector::Vht { .. }) {
                VHT_MAX_AMPDU_BYTES
            } else {
                HT_MAX_AMPDU_BYTES
            };
            let max_bytes = if self.cfg.max_ampdu_bytes == 0 {
                phy_max
            } else {
                self.cfg.max_ampdu_bytes.min(phy_max)
            };
            let mut max_duration = self.cfg.max_ampdu_duration.min(PPDU_MAX_TIME);
            let txop = node.edca[ac.index()].params.txop_limit();
            if txop > Nanos::ZERO {
                // The whole exchange must fit the TXOP limit: data + SIFS + BlockAck.
                // (RTS/CTS in front of an aggregate is not budgeted here.)
                let response = self.timing.sifs
                    + control_response_rate(&txv, self.cfg.standard)
                        .ppdu_duration(BLOCK_ACK_BYTES, self.cfg.band);
                max_duration = max_duration.min(txop.saturating_sub(response));
            }
            AggregationLimits {
                max_subframes: self.cfg.max_ampdu_subframes,
                max_bytes,
                max_duration,
            }
        } else {
            AggregationLimits {
                max_subframes: 1,
                max_bytes: u32::MAX,
                max_duration: Nanos::MAX,
            }
        };
        let max_duration = max_duration.map_or(limits.max_duration, |m| m.min(limits.max_duration));
        let first = self.exch.mpdus.len();
        let q = &mut node.links[link as usize].tx[tid as usize];
        let mut len = AmpduLength::default();
        loop {
            if len.subframes >= limits.max_subframes {
                break;
            }
            let next_bytes = if let Some(m) = q.retry.front() {
                m.packet.len_bytes + overhead
            } else if !q.fifo.is_empty() && (!ba || q.window_open(BA_WINDOW)) {
                q.fifo[0].len_bytes + overhead
            } else {
                break;
            };
            let psdu = if ba { len.with(next_bytes) } else { next_bytes };
            if len.subframes > 0
                && (psdu > limits.max_bytes || txv.ppdu_duration(psdu, band) > max_duration)
            {
                break;
            }
            let mpdu = match q.retry.pop_front() {
                Some(m) => m,
                None => match q.pop_new(start) {
                    Some(m) => m,
                    None => break,
                },
            };
            len.push(next_bytes);
            self.exch.mpdus.push(mpdu);
        }
        let count = self.exch.mpdus.len() - first;
        if count == 0 {
            return false;
        }
        node.backlog[ac.index()] -= count;
        // Rotate the round robin: the queue goes to the back, or leaves if empty.
        node.active[ac.index()].pop_front();
        if !q.is_empty() {
            node.active[ac.index()].push_back((link, tid));
        }
        let psdu_bytes = if ba {
            len.psdu_bytes
        } else {
            len.psdu_bytes - 4
        };
        let tx = &mut self.exch.txs[i];
        tx.link = link;
        tx.tid = tid;
        tx.first = first;
        tx.count = count;
        tx.start = start;
        tx.psdu_bytes = psdu_bytes;
        true
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
            let tx = self.exch.txs[i];
            let txv = self.nodes[tx.node as usize].links[tx.link as usize].txv;
            let psdu = tx.psdu_bytes;
            let dur = if self.uses_rts(psdu) {
                control_response_rate(&txv, self.cfg.standard).ppdu_duration(RTS_BYTES, band)
            } else {
                txv.ppdu_duration(psdu, band)
            };
            let air_end = tx.start + dur;
            self.exch.txs[i].air_end = air_end;
            end = end.max(air_end);
            for k in tx.first..tx.first + tx.count {
                self.exch.mpdus[k].attempts = self.exch.mpdus[k].attempts.saturating_add(1);
            }
        }
        self.exch.ok.resize(self.exch.mpdus.len(), false);
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
        let tx = self.exch.txs[0];
        let psdu = tx.psdu_bytes;
        let rts = self.uses_rts(psdu);
        let link = &mut self.nodes[tx.node as usize].links[tx.link as usize];
        let txv = link.txv;
        let ctl = control_response_rate(&txv, self.cfg.standard);
        let mut t = tx.start;
        if rts {
            t += ctl.ppdu_duration(RTS_BYTES, band)
                + sifs
                + ctl.ppdu_duration(CTS_BYTES, band)
                + sifs;
        }
        let data_end = t + txv.ppdu_duration(psdu, band);
        let mut any_ok = false;
        for k in tx.first..tx.first + tx.count {
            let m = &mut self.exch.mpdus[k];
            m.attempts = m.attempts.saturating_add(1);
            let per = link.error.per(&txv, m.packet.len_bytes + overhead);
            let ok = !link.rng.bernoulli(per);
            any_ok |= ok;
            self.exch.ok.push(ok);
        }
        let ba = self.ba_session(&txv, tx.ac);
        self.exch.txs[0].air_end = data_end;
        self.exch.deliver_at = data_end;
        self.exch.delivered = false;
        if any_ok {
            let resp = if ba { BLOCK_ACK_BYTES } else { ACK_BYTES };
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
        let tx = self.exch.txs[0];
        let peer = self.nodes[tx.node as usize].links[tx.link as usize].peer;
        let rx_node = peer.index();
        let rx_link = match self.nodes[rx_node].link_to(self.nodes[tx.node as usize].id) {
            Some(l) => l,
            None => return,
        };
        let reorder = &mut self.nodes[rx_node].links[rx_link].rx[tx.tid as usize];
        let released = &mut self.released;
        for k in tx.first..tx.first + tx.count {
            if self.exch.ok[k] {
                let m = self.exch.mpdus[k];
                reorder.receive(m.seq, m.packet, &mut |p| released.push(p));
            }
        }
        self.emit_released(t, &tx);
    }

    /// Report the packets a reorder buffer just released as delivered.
    fn emit_released(&mut self, t: Nanos, tx: &Tx) {
        let station = self.station_of(tx.node as usize, tx.link as usize);
        let uplink = tx.node != 0;
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

    /// The busy period ended at `t`: settle retries and drops, count airtime, then either
    /// continue the TXOP or return to contention.
    fn finish_exchange(&mut self, t: Nanos) {
        let outcome = self.exch.outcome.unwrap_or(ExchangeOutcome::Failed);
        let busy = t - self.exch.busy_from;
        self.busy_ns += busy.as_ns();
        let n_tx = self.exch.txs.len() as u64;
        let retry_limit = self.cfg.retry_limit;
        for i in 0..self.exch.txs.len() {
            let tx = self.exch.txs[i];
            let station = self.station_of(tx.node as usize, tx.link as usize);
            let uplink = tx.node != 0;
            // Charge the busy period: whole to a lone transmitter; a collision is shared
            // equally, the remainder going to the first transmitter.
            let share = busy.as_ns() / n_tx + if i == 0 { busy.as_ns() % n_tx } else { 0 };
            let mut acked = 0u16;
            let mut retries = 0u64;
            let mut head_dropped = false;
            for k in tx.first..tx.first + tx.count {
                let m = self.exch.mpdus[k];
                if m.attempts > 1 {
                    retries += 1;
                }
                if self.exch.ok[k] && outcome == ExchangeOutcome::Acked {
                    acked += 1;
                } else if m.attempts >= retry_limit {
                    if k == tx.first {
                        head_dropped = true;
                    }
                    self.drop_mpdu(t, &tx, m);
                } else {
                    let node = &mut self.nodes[tx.node as usize];
                    let q = &mut node.links[tx.link as usize].tx[tx.tid as usize];
                    let was_empty = q.is_empty();
                    q.requeue(m);
                    node.backlog[tx.ac.index()] += 1;
                    // The failed frames go out again at this AC's next access.
                    let key = (tx.link, tx.tid);
                    let active = &mut node.active[tx.ac.index()];
                    if !was_empty {
                        if let Some(pos) = active.iter().position(|&e| e == key) {
                            active.remove(pos);
                        }
                    }
                    active.push_front(key);
                }
            }
            {
                let s = self.link_stats(station, uplink);
                s.ppdus += 1;
                s.mpdus += tx.count as u64;
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
                    mpdus: tx.count as u16,
                    acked_mpdus: acked,
                    outcome,
                }));
            }
            let node = &mut self.nodes[tx.node as usize];
            let b = &mut node.edca[tx.ac.index()];
            // CW back to CWmin after every acknowledged exchange (also within a TXOP) and
            // when a frame is given up; doubled after a failure.
            match outcome {
                ExchangeOutcome::Acked => b.reset(&mut node.rng),
                _ if head_dropped => b.reset(&mut node.rng),
                _ => b.fail(&mut node.rng),
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
            for tx in &self.exch.txs {
                // A transmitter that got no response waits out its response timeout; it
                // saw no errored frame, so it uses AIFS, not EIFS.
                self.nodes[tx.node as usize].ifs_ref = (tx.air_end + timeout).max(t);
            }
        }
        self.exch.mpdus.clear();
        self.exch.txs.clear();
        self.exch.ok.clear();
        self.busy = false;
        self.reschedule();
    }

    /// After an acknowledged exchange, send the next one after SIFS if the AC has a TXOP
    /// limit and another exchange fits in it.
    fn continue_txop(&mut self, t: Nanos) -> bool {
        let tx = self.exch.txs[0];
        let node = &self.nodes[tx.node as usize];
        let limit = node.edca[tx.ac.index()].params.txop_limit();
        if limit == Nanos::ZERO || node.backlog[tx.ac.index()] == 0 {
            return false;
        }
        let Some(&(link, tid)) = node.active[tx.ac.index()].front() else {
            return false;
        };
        let txv = node.links[link as usize].txv;
        let ctl = control_response_rate(&txv, self.cfg.standard);
        let sifs = self.timing.sifs;
        let resp = if self.ba_session(&txv, tx.ac) {
            BLOCK_ACK_BYTES
        } else {
            ACK_BYTES
        };
        let start = t + sifs;
        let used = start - self.exch.txop_start;
        let overhead = sifs + ctl.ppdu_duration(resp, self.cfg.band);
        if used + overhead >= limit {
            return false;
        }
        let room = limit - used - overhead;
        // Check that at least the first MPDU fits before taking anything.
        let q = &node.links[link as usize].tx[tid as usize];
        let first_len = q
            .retry
            .front()
            .map(|m| m.packet.len_bytes)
            .or(q.fifo.front().map(|p| p.len_bytes));
        let Some(first_len) = first_len else {
            return false;
        };
        let min_psdu = first_len + self.mpdu_overhead() + 4;
        if txv.ppdu_duration(min_psdu, self.cfg.band) > room || self.uses_rts(min_psdu) {
            return false;
        }
        self.exch.mpdus.clear();
        self.exch.ok.clear();
        self.exch.txs.truncate(1);
        if !self.fill_ppdu(0, start, Some(room)) {
            return false;
        }
        self.exch.busy_from = t;
        self.resolve_single();
        true
    }

    fn drop_mpdu(&mut self, t: Nanos, tx: &Tx, m: Mpdu) {
        let station = self.station_of(tx.node as usize, tx.link as usize);
        let uplink = tx.node != 0;
        self.link_stats(station, uplink).dropped_retry_limit += 1;
        self.out.push_back(Output::Dropped {
            at: t,
            node: self.nodes[tx.node as usize].id,
            packet: m.packet,
            reason: DropReason::RetryLimit,
        });
        // The recipient stops waiting for it (see `RxReorder::give_up`).
        let peer = self.nodes[tx.node as usize].links[tx.link as usize].peer;
        let src_id = self.nodes[tx.node as usize].id;
        let rx_node = peer.index();
        if let Some(rx_link) = self.nodes[rx_node].link_to(src_id) {
            let released = &mut self.released;
            self.nodes[rx_node].links[rx_link].rx[tx.tid as usize]
                .give_up(m.seq, &mut |p| released.push(p));
            self.emit_released(t, tx);
        }
    }

    /// Back to contention: every AC counts from its node's interframe reference.
    fn reschedule(&mut self) {
        let slot = self.timing.slot;
        let mut next: Option<Nanos> = None;
        for node in &mut self.nodes {
            for ac in Ac::ALL {
                let b = &mut node.edca[ac.index()];
                b.counted_from = node.ifs_ref + self.timing.aifs(b.params.aifsn);
                if node.backlog[ac.index()] > 0 {
                    let t = b.tx_time(slot);
                    next = Some(next.map_or(t, |c: Nanos| c.min(t)));
                }
            }
        }
        self.timer = next;
    }
}
