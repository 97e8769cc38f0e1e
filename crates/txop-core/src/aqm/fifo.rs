//! Tail-drop FIFOs: Linux `pfifo` and `bfifo` (`net/sched/sch_fifo.c`), plus the
//! counters and byte-counting convention shared by all qdiscs of this module.
//!
//! # Byte counting
//!
//! Linux qdiscs count `qdisc_pkt_len(skb)`, which on an Ethernet-type device (Wi-Fi
//! netdevs are one) is `skb->len` including the 14-byte Ethernet header; limits derived
//! from the MTU use `psched_mtu(dev) = dev->mtu + dev->hard_header_len` = 1514 bytes.
//! Model packets are IP packets (`Packet::len_bytes`), so every *decision* a qdisc makes
//! in bytes (bfifo's limit, fq_codel's quantum, deficits, per-flow backlogs, CoDel's
//! `mtu` guard, the fat-flow drop threshold) uses [`qdisc_pkt_len`] = `len_bytes` +
//! [`ETH_HLEN`], against Linux's own constants (1514, …).
//!
//! What the qdiscs *report* through the common `backlog_bytes()` is the model's unit,
//! the sum of `len_bytes` of the queued packets, so it can be compared with every other
//! queue of the model. Linux's `backlog` statistic is `backlog_bytes() + 14 ×
//! len_packets()`.

use crate::packet::{DropReason, Dropped, Packet};
use crate::Nanos;
use std::collections::VecDeque;

/// `ETH_HLEN`: the Ethernet header Linux counts in `qdisc_pkt_len(skb)` but a model
/// packet (an IP packet) does not carry.
pub const ETH_HLEN: u32 = 14;

/// The device MTU in the model's unit (IP bytes): `dev->mtu` = 1500.
pub const DEFAULT_MTU: u32 = 1500;

/// `psched_mtu(dev)` = `dev->mtu + dev->hard_header_len` = 1514 for a 1500-byte MTU
/// (`include/net/pkt_sched.h`): fq_codel's default quantum and CoDel `mtu`.
pub const fn psched_mtu(mtu: u32) -> u32 {
    mtu + ETH_HLEN
}

/// The length a Linux qdisc accounts for this packet (`qdisc_pkt_len(skb)` =
/// `skb->len` with the Ethernet header): `len_bytes + ETH_HLEN`.
pub fn qdisc_pkt_len(packet: &Packet) -> u32 {
    packet.len_bytes + ETH_HLEN
}

/// Counters common to the qdiscs of this module (the model's analogue of
/// `struct gnet_stats_basic`/`gnet_stats_queue` plus fq_codel's xstats).
///
/// The drop counters are disjoint, one per [`DropReason`], so that at all times
/// `enqueued == dequeued + dropped() + len_packets()`. Linux's fq_codel counts every
/// fat-flow drop in `drop_overlimit` and the memory-triggered ones *also* in
/// `drop_overmemory`: its `drop_overlimit` is `dropped_overlimit + dropped_overmemory`
/// here.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QdiscStats {
    /// Packets offered to `enqueue` (including any dropped at once).
    pub enqueued: u64,
    /// Packets returned by `dequeue`.
    pub dequeued: u64,
    /// Tail drops by a full FIFO or band ([`DropReason::QueueFull`]).
    pub dropped_queue_full: u64,
    /// CoDel drops at dequeue ([`DropReason::Codel`]).
    pub dropped_codel: u64,
    /// fq_codel fat-flow drops because the packet limit was exceeded
    /// ([`DropReason::Overlimit`]).
    pub dropped_overlimit: u64,
    /// fq_codel fat-flow drops because the memory limit was exceeded
    /// ([`DropReason::Overmemory`]).
    pub dropped_overmemory: u64,
    /// Packets CE-marked instead of dropped (CoDel `ecn_mark` + `ce_mark`).
    pub ecn_marks: u64,
}

impl QdiscStats {
    /// All drops, whatever the reason.
    pub fn dropped(&self) -> u64 {
        self.dropped_queue_full
            + self.dropped_codel
            + self.dropped_overlimit
            + self.dropped_overmemory
    }

    /// Count `n` drops for `reason` (reasons no qdisc produces are not counted).
    pub(crate) fn count_drops(&mut self, reason: DropReason, n: u64) {
        match reason {
            DropReason::QueueFull => self.dropped_queue_full += n,
            DropReason::Codel => self.dropped_codel += n,
            DropReason::Overlimit => self.dropped_overlimit += n,
            DropReason::Overmemory => self.dropped_overmemory += n,
            DropReason::RetryLimit | DropReason::NoRoute | DropReason::PsBuffer => {}
        }
    }
}

/// What a [`Fifo`] limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FifoLimit {
    /// `pfifo`: at most this many packets (`sch->q.qlen < sch->limit` to enqueue).
    Packets(u32),
    /// `bfifo`: at most this many bytes, counted with [`qdisc_pkt_len`]
    /// (`sch->qstats.backlog + qdisc_pkt_len(skb) <= sch->limit` to enqueue).
    Bytes(u64),
}

/// A tail-drop FIFO, Linux `pfifo` or `bfifo` (`net/sched/sch_fifo.c`,
/// `pfifo_enqueue`/`bfifo_enqueue`, dequeue `qdisc_dequeue_head`). A packet that does
/// not fit is dropped with [`DropReason::QueueFull`]; nothing already queued is ever
/// dropped.
#[derive(Clone, Debug)]
pub struct Fifo {
    limit: FifoLimit,
    queue: VecDeque<Packet>,
    /// Σ `len_bytes` (the reported backlog).
    bytes: u64,
    /// Σ `qdisc_pkt_len` (Linux's `sch->qstats.backlog`, what bfifo limits).
    qdisc_bytes: u64,
    stats: QdiscStats,
}

impl Fifo {
    /// `pfifo` with `limit` packets. Linux's default is the device's `txqueuelen`
    /// (1000) (`fifo_init`).
    pub fn packets(limit: u32) -> Fifo {
        Fifo::new(FifoLimit::Packets(limit))
    }

    /// `bfifo` with `limit` bytes of `qdisc_pkt_len` (IP length + 14). Linux's default
    /// is `txqueuelen × psched_mtu(dev)` = 1000 × 1514 (`fifo_init`).
    pub fn bytes(limit: u64) -> Fifo {
        Fifo::new(FifoLimit::Bytes(limit))
    }

    /// A FIFO with the given limit.
    pub fn new(limit: FifoLimit) -> Fifo {
        let capacity = match limit {
            FifoLimit::Packets(n) => (n as usize).min(4096),
            FifoLimit::Bytes(_) => 64,
        };
        Fifo {
            limit,
            queue: VecDeque::with_capacity(capacity),
            bytes: 0,
            qdisc_bytes: 0,
            stats: QdiscStats::default(),
        }
    }

    /// The configured limit.
    pub fn limit(&self) -> FifoLimit {
        self.limit
    }

    /// `pfifo_enqueue`/`bfifo_enqueue`: append `packet` (stamping `queued_at = now`) or
    /// tail-drop it into `drops` with [`DropReason::QueueFull`].
    pub fn enqueue(&mut self, now: Nanos, mut packet: Packet, drops: &mut Vec<Dropped>) {
        self.stats.enqueued += 1;
        let fits = match self.limit {
            FifoLimit::Packets(limit) => self.queue.len() < limit as usize,
            FifoLimit::Bytes(limit) => self.qdisc_bytes + qdisc_pkt_len(&packet) as u64 <= limit,
        };
        if !fits {
            self.stats.count_drops(DropReason::QueueFull, 1);
            drops.push(Dropped {
                packet,
                reason: DropReason::QueueFull,
            });
            return;
        }
        packet.queued_at = now;
        self.bytes += packet.len_bytes as u64;
        self.qdisc_bytes += qdisc_pkt_len(&packet) as u64;
        self.queue.push_back(packet);
    }

    /// `qdisc_dequeue_head`: the oldest packet. Never drops (`drops` is unused).
    pub fn dequeue(&mut self, _now: Nanos, _drops: &mut Vec<Dropped>) -> Option<Packet> {
        let packet = self.queue.pop_front()?;
        self.bytes -= packet.len_bytes as u64;
        self.qdisc_bytes -= qdisc_pkt_len(&packet) as u64;
        self.stats.dequeued += 1;
        Some(packet)
    }

    /// Packets queued (`sch->q.qlen`).
    pub fn len_packets(&self) -> usize {
        self.queue.len()
    }

    /// Σ `len_bytes` of the queued packets (see the module note on byte counting).
    pub fn backlog_bytes(&self) -> u64 {
        self.bytes
    }

    /// True if nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// The counters.
    pub fn stats(&self) -> QdiscStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::NodeId;

    fn pkt(id: u64, len: u32) -> Packet {
        Packet::new(id, NodeId::AP, NodeId(1), len)
    }

    #[test]
    fn packet_limit_tail_drops_the_newcomer() {
        let mut q = Fifo::packets(3);
        let mut drops = Vec::new();
        for id in 0..5 {
            q.enqueue(Nanos::from_us(id), pkt(id, 1000), &mut drops);
        }
        // Three fit; packets 3 and 4 are the ones dropped.
        assert_eq!(q.len_packets(), 3);
        assert_eq!(q.backlog_bytes(), 3000);
        let dropped: Vec<_> = drops
            .iter()
            .map(
                |Dropped {
                     packet: p,
                     reason: r,
                 }| (p.id, *r),
            )
            .collect();
        assert_eq!(
            dropped,
            vec![(3, DropReason::QueueFull), (4, DropReason::QueueFull)]
        );
        // FIFO order, queued_at stamped at enqueue.
        for id in 0..3 {
            let p = q.dequeue(Nanos::from_ms(1), &mut drops).unwrap();
            assert_eq!(p.id, id);
            assert_eq!(p.queued_at, Nanos::from_us(id));
        }
        assert!(q.is_empty() && q.dequeue(Nanos::from_ms(1), &mut drops).is_none());
        // Room again after draining.
        q.enqueue(Nanos::ZERO, pkt(9, 1000), &mut drops);
        assert_eq!(q.len_packets(), 1);
        let s = q.stats();
        assert_eq!((s.enqueued, s.dequeued, s.dropped_queue_full), (6, 3, 2));
        assert_eq!(
            s.enqueued,
            s.dequeued + s.dropped() + q.len_packets() as u64
        );
    }

    #[test]
    fn byte_limit_counts_ethernet_header_like_bfifo() {
        // Limit 3 × 1514: exactly three 1500-byte IP packets (1514 on the wire) fit.
        let mut q = Fifo::bytes(3 * 1514);
        let mut drops = Vec::new();
        for id in 0..3 {
            q.enqueue(Nanos::ZERO, pkt(id, 1500), &mut drops);
        }
        assert!(drops.is_empty());
        // Even a 1-byte packet (15 bytes with header) exceeds the limit now.
        q.enqueue(Nanos::ZERO, pkt(3, 1), &mut drops);
        assert_eq!(drops.len(), 1);
        assert_eq!(drops[0].reason, DropReason::QueueFull);
        assert_eq!(q.backlog_bytes(), 4500);
        // After one dequeue 1514 bytes are free: a 1500 fits, then a 1-byte does not.
        q.dequeue(Nanos::ZERO, &mut drops).unwrap();
        q.enqueue(Nanos::ZERO, pkt(4, 1500), &mut drops);
        assert_eq!(q.len_packets(), 3);
        q.enqueue(Nanos::ZERO, pkt(5, 1), &mut drops);
        assert_eq!(drops.len(), 2);
        // A big limit takes packets of any size until the sum (with headers) passes it.
        let mut q = Fifo::bytes(1000);
        for id in 0..20 {
            q.enqueue(Nanos::ZERO, pkt(id, 86), &mut drops); // 100 bytes each
        }
        assert_eq!(q.len_packets(), 10);
        assert_eq!(q.stats().dropped_queue_full, 10);
    }
}
