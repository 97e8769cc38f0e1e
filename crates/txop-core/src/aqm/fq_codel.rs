//! The Linux `fq_codel` qdisc (`net/sched/sch_fq_codel.c`, RFC 8290), with its
//! defaults from `fq_codel_init`.
//!
//! - **Classification**: flow index `reciprocal_scale(packet.flow, flows)` =
//!   `(flow × flows) >> 32` (`fq_codel_hash`; the model's `flow` is the skb hash). No
//!   tc filters, no `skb->priority` override.
//! - **Enqueue** (`fq_codel_enqueue`): tail-append to the flow; a flow not on any list
//!   goes to the tail of `new_flows` with `deficit = quantum`. Then, if `qlen > limit`
//!   or `memory_usage > memory_limit`, one `fq_codel_drop`: the flow with the largest
//!   byte backlog (linear scan of `backlogs[]`, first maximum wins) loses packets
//!   from its head until half of its backlog is gone or `drop_batch_size` packets
//!   were dropped, and its CoDel `count` grows by the number dropped. Reason
//!   [`DropReason::Overmemory`] if the memory limit was exceeded, else
//!   [`DropReason::Overlimit`]. (Linux returns `NET_XMIT_CN` when the victim is the
//!   arriving packet's flow; not modelled.)
//! - **Dequeue** (`fq_codel_dequeue`): DRR++ over `new_flows` then `old_flows`; a
//!   flow with `deficit <= 0` gets `+quantum` and moves to the tail of `old_flows`;
//!   otherwise CoDel dequeues from it; an empty flow taken from `new_flows` moves to
//!   `old_flows` if that is non-empty (anti-starvation), else it leaves the lists;
//!   the sent packet is charged to the deficit.
//! - **CoDel** per flow ([`CodelVars`]) with the qdisc's [`CodelParams`] (5 ms, 100
//!   ms, ECN on, `mtu` = `psched_mtu` = 1514). As in Linux, the backlog CoDel's `mtu`
//!   guard looks at is the **whole qdisc's** (`codel_dequeue(sch,
//!   &sch->qstats.backlog, …)`), not the flow's: no CoDel drop while at most one MTU
//!   is queued in total.
//!
//! **Bytes**: quantum, deficits, `backlogs[]`, the drop threshold and CoDel's `mtu`
//! guard use `qdisc_pkt_len` = `len_bytes` + 14 (Ethernet header), matching Linux's
//! `skb->len` on an Ethernet-type device and its `psched_mtu` = 1514 defaults; the
//! reported [`FqCodel::backlog_bytes`] is Σ `len_bytes` (see `fifo`'s module note).
//! Memory is Σ [`Packet::truesize_bytes`].
//!
//! After warm-up nothing allocates: the flow table is allocated once, each flow's
//! `VecDeque` keeps its capacity, and the two flow lists are `VecDeque<u32>`s of flow
//! indices with room for every flow (a flow is on at most one list).

use super::codel::{CodelParams, CodelQueue, CodelStats, CodelVars};
use super::fifo::{psched_mtu, qdisc_pkt_len, QdiscStats, DEFAULT_MTU};
use crate::packet::{DropReason, Dropped, Packet};
use crate::Nanos;
use std::collections::VecDeque;

/// fq_codel configuration (`struct fq_codel_sched_data`'s tunables).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FqCodelParams {
    /// Number of flow queues (`flows_cnt`, default 1024; Linux allows 1–65536).
    pub flows: u32,
    /// DRR quantum in `qdisc_pkt_len` bytes (default `psched_mtu` = 1514).
    pub quantum: u32,
    /// Packet limit over all flows (`sch->limit`, default 10240).
    pub limit: u32,
    /// Limit on Σ truesize of queued packets (default 32 MiB).
    pub memory_limit: u64,
    /// Most packets one `fq_codel_drop` removes (default 64).
    pub drop_batch_size: u32,
    /// CoDel parameters (default [`CodelParams::fq_codel_qdisc`]`(1514)`).
    pub codel: CodelParams,
}

impl Default for FqCodelParams {
    /// `fq_codel_init` on a device with a 1500-byte MTU.
    fn default() -> Self {
        FqCodelParams::for_mtu(DEFAULT_MTU)
    }
}

impl FqCodelParams {
    /// `fq_codel_init`'s defaults on a device whose (IP) MTU is `mtu`: quantum and
    /// CoDel `mtu` = `psched_mtu` = `mtu + 14`.
    pub fn for_mtu(mtu: u32) -> FqCodelParams {
        FqCodelParams {
            flows: 1024,
            quantum: psched_mtu(mtu),
            limit: 10 * 1024,
            memory_limit: 32 << 20,
            drop_batch_size: 64,
            codel: CodelParams::fq_codel_qdisc(psched_mtu(mtu)),
        }
    }
}

/// `reciprocal_scale(val, ep_ro)` (`include/linux/kernel.h`): `(val × ep_ro) >> 32`,
/// mapping a 32-bit hash onto `0..ep_ro` without a division.
pub fn reciprocal_scale(val: u32, ep_ro: u32) -> u32 {
    ((val as u64 * ep_ro as u64) >> 32) as u32
}

/// One flow queue (`struct fq_codel_flow`).
#[derive(Clone, Debug, Default)]
struct Flow {
    queue: VecDeque<Packet>,
    /// On `new_flows` or `old_flows` (Linux: `!list_empty(&flow->flowchain)`).
    listed: bool,
    deficit: i32,
    cvars: CodelVars,
}

/// Qdisc-wide totals (`sch->q.qlen`, `sch->qstats.backlog`, `memory_usage`).
#[derive(Clone, Copy, Debug, Default)]
struct Totals {
    qlen: u32,
    /// Σ `qdisc_pkt_len` (Linux `sch->qstats.backlog`).
    qdisc_backlog: u64,
    /// Σ `len_bytes` (reported).
    bytes: u64,
    /// Σ truesize.
    memory_usage: u64,
}

impl Totals {
    fn add(&mut self, p: &Packet) {
        self.qlen += 1;
        self.qdisc_backlog += qdisc_pkt_len(p) as u64;
        self.bytes += p.len_bytes as u64;
        self.memory_usage += p.truesize_bytes() as u64;
    }
    fn remove(&mut self, p: &Packet) {
        self.qlen -= 1;
        self.qdisc_backlog -= qdisc_pkt_len(p) as u64;
        self.bytes -= p.len_bytes as u64;
        self.memory_usage -= p.truesize_bytes() as u64;
    }
}

/// CoDel's view of one flow (`dequeue_func`/`drop_func` of `sch_fq_codel.c`).
struct FlowDequeue<'a> {
    queue: &'a mut VecDeque<Packet>,
    backlog: &'a mut u32,
    totals: &'a mut Totals,
    drops: &'a mut Vec<Dropped>,
    dropped: u64,
}

impl CodelQueue for FlowDequeue<'_> {
    fn dequeue(&mut self) -> Option<Packet> {
        let p = self.queue.pop_front()?;
        *self.backlog -= qdisc_pkt_len(&p);
        self.totals.remove(&p);
        Some(p)
    }
    /// `sch->qstats.backlog`: the whole qdisc's backlog (u32 in Linux).
    fn backlog_bytes(&self) -> u32 {
        self.totals.qdisc_backlog.min(u32::MAX as u64) as u32
    }
    fn drop(&mut self, packet: Packet) {
        self.dropped += 1;
        self.drops.push(Dropped {
            packet,
            reason: DropReason::Codel,
        });
    }
}

/// Which list a dequeue took its flow from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum List {
    New,
    Old,
}

/// How many flows [`FqCodel`]'s two DRR lists hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowListLens {
    /// Flows on `new_flows`.
    pub new_flows: usize,
    /// Flows on `old_flows`.
    pub old_flows: usize,
}

/// The Linux `fq_codel` qdisc (`net/sched/sch_fq_codel.c`); see the module docs.
#[derive(Clone, Debug)]
pub struct FqCodel {
    params: FqCodelParams,
    flows: Vec<Flow>,
    /// Per-flow byte backlog in `qdisc_pkt_len` bytes (Linux `q->backlogs[]`).
    backlogs: Vec<u32>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    totals: Totals,
    cstats: CodelStats,
    new_flow_count: u64,
    stats: QdiscStats,
}

impl Default for FqCodel {
    /// fq_codel with [`FqCodelParams::default`].
    fn default() -> Self {
        FqCodel::new(FqCodelParams::default())
    }
}

impl FqCodel {
    /// An empty fq_codel (`fq_codel_init`). Panics if `params.flows` is 0.
    pub fn new(params: FqCodelParams) -> FqCodel {
        assert!(params.flows > 0, "fq_codel needs at least one flow");
        let n = params.flows as usize;
        FqCodel {
            params,
            flows: vec![Flow::default(); n],
            backlogs: vec![0; n],
            new_flows: VecDeque::with_capacity(n),
            old_flows: VecDeque::with_capacity(n),
            totals: Totals::default(),
            cstats: CodelStats::default(),
            new_flow_count: 0,
            stats: QdiscStats::default(),
        }
    }

    /// The configuration.
    pub fn params(&self) -> &FqCodelParams {
        &self.params
    }

    /// The flow queue a hash maps to (`fq_codel_hash`).
    pub fn flow_index(&self, flow_hash: u32) -> usize {
        reciprocal_scale(flow_hash, self.params.flows) as usize
    }

    /// `fq_codel_enqueue`: queue `packet` (stamping `queued_at = now`); on overload,
    /// head-drop a batch from the fattest flow into `drops` (which may include
    /// `packet` itself).
    pub fn enqueue(&mut self, now: Nanos, mut packet: Packet, drops: &mut Vec<Dropped>) {
        self.stats.enqueued += 1;
        let idx = self.flow_index(packet.flow);
        packet.queued_at = now;
        self.backlogs[idx] += qdisc_pkt_len(&packet);
        self.totals.add(&packet);
        let flow = &mut self.flows[idx];
        flow.queue.push_back(packet);
        if !flow.listed {
            flow.listed = true;
            flow.deficit = self.params.quantum as i32;
            self.new_flows.push_back(idx as u32);
            self.new_flow_count += 1;
        }
        let memory_limited = self.totals.memory_usage > self.params.memory_limit;
        if self.totals.qlen <= self.params.limit && !memory_limited {
            return;
        }
        let reason = if memory_limited {
            DropReason::Overmemory
        } else {
            DropReason::Overlimit
        };
        self.drop_fattest(reason, drops);
    }

    /// `fq_codel_drop`: drop from the head of the flow with the largest byte backlog
    /// until half of that backlog or `drop_batch_size` packets are gone (at least one).
    /// Returns the victim flow's index.
    fn drop_fattest(&mut self, reason: DropReason, drops: &mut Vec<Dropped>) -> usize {
        let mut maxbacklog = 0;
        let mut idx = 0;
        for (i, &b) in self.backlogs.iter().enumerate() {
            if b > maxbacklog {
                maxbacklog = b;
                idx = i;
            }
        }
        let threshold = maxbacklog >> 1;
        let flow = &mut self.flows[idx];
        let mut len = 0u32;
        let mut i = 0u32;
        // The caller just queued a packet, so the fattest flow is non-empty.
        while let Some(p) = flow.queue.pop_front() {
            len += qdisc_pkt_len(&p);
            self.totals.remove(&p);
            drops.push(Dropped { packet: p, reason });
            i += 1;
            if i >= self.params.drop_batch_size || len >= threshold {
                break;
            }
        }
        // "Tell codel to increase its signal strength also."
        flow.cvars.count = flow.cvars.count.wrapping_add(i);
        self.backlogs[idx] -= len;
        self.stats.count_drops(reason, i as u64);
        idx
    }

    /// `fq_codel_dequeue`: DRR++ over new then old flows, CoDel per flow. CoDel's drops
    /// go to `drops` with [`DropReason::Codel`].
    pub fn dequeue(&mut self, now: Nanos, drops: &mut Vec<Dropped>) -> Option<Packet> {
        loop {
            let (list, idx) = if let Some(&i) = self.new_flows.front() {
                (List::New, i as usize)
            } else if let Some(&i) = self.old_flows.front() {
                (List::Old, i as usize)
            } else {
                return None;
            };
            let flow = &mut self.flows[idx];
            if flow.deficit <= 0 {
                flow.deficit += self.params.quantum as i32;
                self.pop_list(list);
                self.old_flows.push_back(idx as u32);
                continue;
            }
            let Flow { queue, cvars, .. } = flow;
            let mut q = FlowDequeue {
                queue,
                backlog: &mut self.backlogs[idx],
                totals: &mut self.totals,
                drops,
                dropped: 0,
            };
            let marks_before = self.cstats.ecn_mark + self.cstats.ce_mark;
            let packet = cvars.dequeue(&mut q, &self.params.codel, &mut self.cstats, now);
            let dropped = q.dropped;
            self.stats.count_drops(DropReason::Codel, dropped);
            self.stats.ecn_marks += self.cstats.ecn_mark + self.cstats.ce_mark - marks_before;
            let Some(packet) = packet else {
                // Force a pass through old_flows to prevent starvation.
                self.pop_list(list);
                if list == List::New && !self.old_flows.is_empty() {
                    self.old_flows.push_back(idx as u32);
                } else {
                    self.flows[idx].listed = false;
                }
                continue;
            };
            self.flows[idx].deficit -= qdisc_pkt_len(&packet) as i32;
            self.stats.dequeued += 1;
            return Some(packet);
        }
    }

    /// Remove the first flow of `list`.
    fn pop_list(&mut self, list: List) {
        match list {
            List::New => self.new_flows.pop_front(),
            List::Old => self.old_flows.pop_front(),
        };
    }

    /// Packets queued (`sch->q.qlen`).
    pub fn len_packets(&self) -> usize {
        self.totals.qlen as usize
    }

    /// Σ `len_bytes` of the queued packets. Linux's `backlog` (`qdisc_pkt_len`) is
    /// `backlog_bytes() + 14 × len_packets()`.
    pub fn backlog_bytes(&self) -> u64 {
        self.totals.bytes
    }

    /// True if no packet is queued.
    pub fn is_empty(&self) -> bool {
        self.totals.qlen == 0
    }

    /// The counters (see [`QdiscStats`] for how they relate to fq_codel's xstats).
    pub fn stats(&self) -> QdiscStats {
        self.stats
    }

    /// Σ truesize of the queued packets (`memory_usage`).
    pub fn memory_usage(&self) -> u64 {
        self.totals.memory_usage
    }

    /// The qdisc-wide CoDel counters (`q->cstats`; `drop_count`/`drop_len` here are
    /// cumulative, Linux resets them when it reports them to the parent).
    pub fn codel_stats(&self) -> CodelStats {
        self.cstats
    }

    /// Flows that became active (`new_flow_count`).
    pub fn new_flow_count(&self) -> u64 {
        self.new_flow_count
    }

    /// Lengths of the `new_flows` and `old_flows` lists (`new_flows_len`,
    /// `old_flows_len` of `tc -s`).
    pub fn flow_list_lens(&self) -> FlowListLens {
        FlowListLens {
            new_flows: self.new_flows.len(),
            old_flows: self.old_flows.len(),
        }
    }

    /// Byte backlog of flow queue `idx` in `qdisc_pkt_len` bytes (`backlogs[idx]`).
    pub fn flow_backlog(&self, idx: usize) -> u32 {
        self.backlogs[idx]
    }

    /// Packets queued in flow queue `idx`.
    pub fn flow_len(&self, idx: usize) -> usize {
        self.flows[idx].queue.len()
    }

    /// CoDel state of flow queue `idx`.
    pub fn flow_codel(&self, idx: usize) -> &CodelVars {
        &self.flows[idx].cvars
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Ecn, NodeId};
    use crate::rng::{RngStream, StreamKind};
    use std::collections::HashMap;

    /// Flow hashes that land in flow queues 0, 1, 2, … of a 1024-flow fq_codel:
    /// reciprocal_scale(i << 22, 1024) = ((i << 22) × 1024) >> 32 = i.
    fn hash(i: u32) -> u32 {
        i << 22
    }

    fn pkt(id: u64, flow: u32, len: u32) -> Packet {
        let mut p = Packet::new(id, NodeId::AP, NodeId(1), len);
        p.flow = flow;
        p
    }

    #[test]
    fn defaults_match_fq_codel_init() {
        let p = FqCodelParams::default();
        assert_eq!(
            (
                p.flows,
                p.quantum,
                p.limit,
                p.memory_limit,
                p.drop_batch_size
            ),
            (1024, 1514, 10240, 33_554_432, 64)
        );
        // 5 ms = 4882 and 100 ms = 97656 CoDel units (ns >> 10), mtu 1514, ECN on.
        assert_eq!((p.codel.target, p.codel.interval), (4882, 97656));
        assert_eq!((p.codel.mtu_bytes, p.codel.ecn), (1514, true));
        assert_eq!(reciprocal_scale(u32::MAX, 1024), 1023);
        assert_eq!(reciprocal_scale(0x8000_0000, 1024), 512);
        assert_eq!(FqCodel::default().flow_index(hash(7)), 7);
    }

    #[test]
    fn sparse_flow_packet_goes_ahead_of_bulk_backlog() {
        let mut q = FqCodel::default();
        let mut drops = Vec::new();
        let t = Nanos::ZERO;
        for id in 0..100 {
            q.enqueue(t, pkt(id, hash(1), 1500), &mut drops);
        }
        for id in 0..10 {
            assert_eq!(q.dequeue(t, &mut drops).unwrap().id, id);
        }
        // A FIFO would put the sparse packet behind 90 bulk packets; DRR++ puts the
        // new flow first.
        q.enqueue(t, pkt(1000, hash(2), 100), &mut drops);
        assert_eq!(q.dequeue(t, &mut drops).unwrap().id, 1000);
        assert_eq!(q.dequeue(t, &mut drops).unwrap().id, 10);
        // The sparse flow emptied while new with old_flows non-empty: it went to
        // old_flows. When it is visited there empty, it leaves the lists, and a later
        // packet makes it a new flow again, again served first.
        for id in 11..14 {
            assert_eq!(q.dequeue(t, &mut drops).unwrap().id, id);
        }
        q.enqueue(t, pkt(1001, hash(2), 100), &mut drops);
        assert_eq!(q.dequeue(t, &mut drops).unwrap().id, 1001);
        assert_eq!(q.new_flow_count(), 3);
        assert!(drops.is_empty());
    }

    /// Backlog two flows at t = 0 (so CoDel stays out), dequeue until `total` qdisc
    /// bytes are out and return each flow's share in qdisc bytes (len + 14).
    fn share(len_a: u32, len_b: u32, total: u64) -> (u64, u64) {
        let mut q = FqCodel::default();
        let mut drops = Vec::new();
        // 600 kB per flow: at most 9375 packets (64 B) + 500, under the 10240 limit.
        let n_a = 600_000 / len_a as u64;
        let n_b = 600_000 / len_b as u64;
        for i in 0..n_a.max(n_b) {
            if i < n_a {
                q.enqueue(Nanos::ZERO, pkt(i, hash(3), len_a), &mut drops);
            }
            if i < n_b {
                q.enqueue(Nanos::ZERO, pkt(1 << 32 | i, hash(9), len_b), &mut drops);
            }
        }
        let (mut a, mut b) = (0, 0);
        while a + b < total {
            let p = q.dequeue(Nanos::ZERO, &mut drops).unwrap();
            if p.flow == hash(3) {
                a += qdisc_pkt_len(&p) as u64;
            } else {
                b += qdisc_pkt_len(&p) as u64;
            }
        }
        assert!(drops.is_empty());
        assert!(
            q.flow_len(3) > 0 && q.flow_len(9) > 0,
            "both still backlogged"
        );
        (a, b)
    }

    #[test]
    fn backlogged_flows_get_equal_bytes() {
        let quantum = 1514;
        for (la, lb) in [
            (1500, 1500),
            (1000, 1000),
            (1500, 300),
            (300, 1500),
            (64, 1200),
        ] {
            for total in [100_000, 333_333, 700_000] {
                let (a, b) = share(la, lb, total);
                assert!(
                    a.abs_diff(b) <= quantum,
                    "{la} vs {lb} B packets, {total} B out: {a} vs {b}"
                );
            }
        }
    }

    #[test]
    fn overlimit_drops_half_the_fattest_flows_bytes_from_its_head() {
        let params = FqCodelParams {
            limit: 50,
            ..FqCodelParams::default()
        };
        let mut q = FqCodel::new(params);
        let mut drops = Vec::new();
        // Fat flow: 41 × 1500 B (41 × 1514 = 62074 qdisc bytes); thin flow 9 × 100 B.
        for id in 0..41 {
            q.enqueue(Nanos::ZERO, pkt(id, hash(5), 1500), &mut drops);
        }
        for id in 100..109 {
            q.enqueue(Nanos::ZERO, pkt(id, hash(6), 100), &mut drops);
        }
        assert!(drops.is_empty() && q.len_packets() == 50);
        // Packet 51 (to the thin flow) exceeds the limit. Threshold = 62074 >> 1 =
        // 31037; 20 × 1514 = 30280 < 31037 ≤ 21 × 1514 = 31794: 21 head drops.
        q.enqueue(Nanos::ZERO, pkt(109, hash(6), 100), &mut drops);
        let ids: Vec<u64> = drops.iter().map(|Dropped { packet: p, .. }| p.id).collect();
        assert_eq!(ids, (0..21).collect::<Vec<_>>());
        assert!(drops
            .iter()
            .all(|Dropped { reason: r, .. }| *r == DropReason::Overlimit));
        assert_eq!(q.flow_backlog(5), 20 * 1514);
        assert_eq!(q.flow_len(6), 10);
        assert_eq!(q.flow_codel(5).count, 21);
        assert_eq!(q.len_packets(), 30);
        assert_eq!(q.stats().dropped_overlimit, 21);
        // The fat flow's next packet is its 22nd.
        while let Some(p) = q.dequeue(Nanos::ZERO, &mut drops) {
            if p.flow == hash(5) {
                assert_eq!(p.id, 21);
                break;
            }
        }
    }

    #[test]
    fn overlimit_drop_batch_stops_at_64_packets() {
        // Default limit 10240: fat flow 6000 × 1500 B (9 084 000 qdisc bytes), thin
        // 4240 × 100 B. One more packet: half the fat flow is 2999+ packets, so the
        // batch limit (64) ends the drop.
        let mut q = FqCodel::default();
        let mut drops = Vec::new();
        for id in 0..6000 {
            q.enqueue(Nanos::ZERO, pkt(id, hash(100), 1500), &mut drops);
        }
        for id in 0..4241 {
            q.enqueue(Nanos::ZERO, pkt(10_000 + id, hash(200), 100), &mut drops);
        }
        assert_eq!(drops.len(), 64);
        assert!(drops.iter().enumerate().all(
            |(
                i,
                Dropped {
                    packet: p,
                    reason: r,
                },
            )| p.id == i as u64 && *r == DropReason::Overlimit
        ));
        assert_eq!(q.len_packets(), 10241 - 64);
        assert_eq!(q.flow_len(200), 4241);
        assert_eq!(q.memory_usage(), 5936 * 2152 + 4241 * 744);
    }

    #[test]
    fn memory_limit_triggers_overmemory() {
        // truesize of a 1500-byte packet: (1564 → 1600) + 232 + 320 = 2152.
        assert_eq!(pkt(0, 0, 1500).truesize_bytes(), 2152);
        let params = FqCodelParams {
            memory_limit: 100 * 2152,
            ..FqCodelParams::default()
        };
        let mut q = FqCodel::new(params);
        let mut drops = Vec::new();
        for id in 0..100 {
            q.enqueue(Nanos::ZERO, pkt(id, hash(1), 1500), &mut drops);
        }
        assert!(drops.is_empty(), "exactly at the limit is fine");
        // 101st: over memory. Backlog 101 × 1514 = 152914, threshold 76457,
        // ⌈76457 / 1514⌉ = 51 drops (50 × 1514 = 75700 < 76457).
        q.enqueue(Nanos::ZERO, pkt(100, hash(1), 1500), &mut drops);
        assert_eq!(drops.len(), 51);
        assert!(drops
            .iter()
            .all(|Dropped { reason: r, .. }| *r == DropReason::Overmemory));
        assert_eq!(drops[0].packet.id, 0);
        let s = q.stats();
        assert_eq!((s.dropped_overmemory, s.dropped_overlimit), (51, 0));
        assert_eq!(q.memory_usage(), 50 * 2152);
    }

    /// Bulk flow arriving at twice the service rate next to a sparse flow; returns
    /// (qdisc, drops, sparse sojourns, time of the first drop or mark).
    fn standing_queue(bulk_ecn: Ecn) -> (FqCodel, Vec<Dropped>, Vec<Nanos>, Option<Nanos>) {
        let mut q = FqCodel::default();
        let mut drops = Vec::new();
        let mut sojourns = Vec::new();
        let mut first_signal = None;
        let mut id = 0;
        let ms = Nanos::from_ms(1);
        for step in 0..2000u64 {
            let now = ms * step;
            for _ in 0..2 {
                let mut p = pkt(id, hash(10), 1500);
                p.ecn = bulk_ecn;
                q.enqueue(now, p, &mut drops);
                id += 1;
            }
            if step % 20 == 10 {
                let mut p = pkt(1 << 40 | step, hash(20), 200);
                p.ecn = Ecn::NotEct;
                q.enqueue(now, p, &mut drops);
            }
            // Service: one packet per ms.
            let p = q.dequeue(now, &mut drops).unwrap();
            if p.flow == hash(20) {
                assert_eq!(p.ecn, Ecn::NotEct);
                sojourns.push(now - p.queued_at);
            }
            if first_signal.is_none() && (!drops.is_empty() || p.ecn == Ecn::Ce) {
                first_signal = Some(now);
            }
        }
        (q, drops, sojourns, first_signal)
    }

    #[test]
    fn codel_controls_standing_queue_without_touching_sparse_flow() {
        let (q, drops, sojourns, first) = standing_queue(Ecn::NotEct);
        assert!(drops.len() > 10, "{}", drops.len());
        assert!(drops.iter().all(
            |Dropped {
                 packet: p,
                 reason: r,
             }| *r == DropReason::Codel && p.flow == hash(10)
        ));
        // By hand: at step s the bulk head was queued ≈ s/2 ms earlier (2 arrivals,
        // ≤ 1 departure per ms), so its sojourn passes 5 ms near s = 10 ms; CoDel drops
        // only once it has stayed above for more than an interval (100 ms).
        let first = first.unwrap();
        assert!(
            first > Nanos::from_ms(105) && first < Nanos::from_ms(120),
            "{first}"
        );
        assert_eq!(q.stats().dropped_codel, drops.len() as u64);
        // Every sparse packet was delivered at once (it is a new flow on arrival).
        assert_eq!(sojourns.len(), 100);
        assert!(sojourns.iter().all(|s| *s == Nanos::ZERO), "{sojourns:?}");
        assert_eq!(q.stats().ecn_marks, 0);
    }

    #[test]
    fn codel_marks_ect_instead_of_dropping() {
        let (q, drops, sojourns, first) = standing_queue(Ecn::Ect0);
        assert!(drops.is_empty());
        let first = first.unwrap();
        assert!(
            first > Nanos::from_ms(105) && first < Nanos::from_ms(120),
            "{first}"
        );
        let marks = q.stats().ecn_marks;
        assert!(marks > 10, "{marks}");
        assert_eq!(q.codel_stats().ecn_mark, marks);
        assert_eq!(sojourns.len(), 100);
    }

    #[test]
    fn conservation_over_random_workload() {
        let params = FqCodelParams {
            flows: 64,
            limit: 300,
            memory_limit: 400_000,
            drop_batch_size: 16,
            ..FqCodelParams::default()
        };
        let mut q = FqCodel::new(params);
        let mut rng = RngStream::new(42, StreamKind::Misc, 0);
        let mut drops = Vec::new();
        // Independent record of what is inside the qdisc.
        let mut inside: HashMap<u64, Packet> = HashMap::new();
        let mut last_out: HashMap<u32, u64> = HashMap::new();
        let hashes: Vec<u32> = (0..40).map(|_| rng.next_u64() as u32).collect();
        let mut now = Nanos::ZERO;
        let (mut n_in, mut n_out, mut n_drop) = (0u64, 0u64, 0u64);
        let mut reasons: HashMap<DropReason, u64> = HashMap::new();
        for id in 0..200_000u64 {
            now += Nanos::from_us(rng.uniform_inclusive(400) as u64);
            if rng.bernoulli(0.55) {
                // Skewed flow choice: a few heavy flows.
                let f = rng.uniform_inclusive(39).min(rng.uniform_inclusive(39));
                // Two phases: with small packets 300 queued hold ≈ 260 kB of truesize,
                // so the packet limit triggers first; with large ones the memory limit
                // (≈ 210 packets) does.
                let len = if id < 100_000 {
                    40 + rng.uniform_inclusive(360)
                } else {
                    1000 + rng.uniform_inclusive(500)
                };
                let mut p = pkt(id, hashes[f as usize], len);
                p.ecn = if rng.bernoulli(0.3) {
                    Ecn::Ect0
                } else {
                    Ecn::NotEct
                };
                inside.insert(id, p);
                n_in += 1;
                q.enqueue(now, p, &mut drops);
            } else if let Some(p) = q.dequeue(now, &mut drops) {
                assert!(inside.remove(&p.id).is_some());
                n_out += 1;
                // FIFO within a flow: ids increase.
                let prev = last_out.insert(p.flow, p.id);
                assert!(prev.is_none_or(|prev| prev < p.id));
                assert!(p.queued_at <= now);
            }
            for Dropped {
                packet: p,
                reason: r,
            } in drops.drain(..)
            {
                assert!(inside.remove(&p.id).is_some(), "dropped twice or unknown");
                n_drop += 1;
                *reasons.entry(r).or_default() += 1;
            }
            assert_eq!(q.len_packets(), inside.len());
        }
        let backlog: u64 = inside.values().map(|p| p.len_bytes as u64).sum();
        assert_eq!(q.backlog_bytes(), backlog);
        let mem: u64 = inside.values().map(|p| p.truesize_bytes() as u64).sum();
        assert_eq!(q.memory_usage(), mem);
        // Drain.
        while let Some(p) = q.dequeue(now, &mut drops) {
            assert!(inside.remove(&p.id).is_some());
            n_out += 1;
        }
        n_drop += drops.len() as u64;
        for Dropped {
            packet: p,
            reason: r,
        } in drops.drain(..)
        {
            assert!(inside.remove(&p.id).is_some());
            *reasons.entry(r).or_default() += 1;
        }
        assert!(inside.is_empty() && q.is_empty() && q.backlog_bytes() == 0);
        assert_eq!(q.memory_usage(), 0);
        let s = q.stats();
        assert_eq!(s.enqueued, n_in);
        assert_eq!(s.dequeued, n_out);
        assert_eq!(s.dropped(), n_drop);
        assert_eq!(s.enqueued, s.dequeued + s.dropped());
        let r = |k| reasons.get(&k).copied().unwrap_or(0);
        assert_eq!(r(DropReason::Codel), s.dropped_codel);
        assert_eq!(r(DropReason::Overlimit), s.dropped_overlimit);
        assert_eq!(r(DropReason::Overmemory), s.dropped_overmemory);
        // The workload exercised every drop path.
        assert!(s.dropped_codel > 0 && s.dropped_overlimit > 0 && s.dropped_overmemory > 0);
        assert!(s.ecn_marks > 0);
        assert_eq!(
            q.flow_list_lens(),
            FlowListLens {
                new_flows: 0,
                old_flows: 0
            }
        );
    }
}
