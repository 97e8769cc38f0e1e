//! Property tests of mac80211's flow queue [`Fq`] (reference §3) driven by random
//! operation sequences: bursts of enqueues into a few tins (TXQs) with a few flow hashes
//! (chosen so that flows collide across tins and fall back to the tins' default flows),
//! packet sizes from 0 to 1500 B and ECN codepoints; dequeues from a random tin with
//! the clock advancing and CoDel parameters that drop and mark; `reset_tin`; pauses.
//! Small parameters (1–64 flows, packet and memory limits that bursts exceed) and the
//! defaults, with both [`OverloadPolicy`] values. A model kept beside the fq knows
//! every packet, the flow queue (global flow slot, or a tin's default flow) it went to
//! by §3.3's classification, and each queue's FIFO. Checked after every operation,
//! without expected numbers from the code:
//!
//! - **packets are conserved**: enqueued = dequeued + dropped by overload + dropped by
//!   CoDel + purged by `reset_tin` + `backlog_packets()`; each packet leaves once, from
//!   the tin it went to, unchanged (but for an ECN mark and its `queued_at` stamp);
//! - **every packet leaves from the head of its flow queue** (FIFO per flow, §3.4–§3.5:
//!   dequeue, CoDel drops and overload head drops all take the head), so packets of
//!   one flow leave in the order they came;
//! - **the backlogs add up**: per tin (packets, bytes) as the model has it; the flow
//!   queues' backlogs (`flow_backlog`, `default_flow_backlog`) as the model has them,
//!   summing to the totals; `memory_usage()` is the sum of the truesize of what is
//!   inside; a non-empty global flow is owned by the tin of its packets;
//! - **overload** (§3.4): an enqueue that leaves the fq within both limits drops nothing;
//!   after an enqueue the fq is within both limits (unless nothing queued has a byte:
//!   zero-length packets are never the fattest flow, as in the kernel's strict scan);
//!   the first overload drop of an enqueue, and with one packet per pass every drop, is
//!   from a flow with the largest byte backlog and says `Overmemory` exactly when the
//!   memory limit is exceeded; with one packet per pass no drop happens once both limits
//!   hold; an `Overlimit` drop never happens above the memory limit;
//! - **CoDel** (§2.4): drops only packets that waited at least the target and, with ECN
//!   on, never an ECT or CE one (those are marked: `INET_ECN_set_ce` succeeds for a
//!   packet already CE); marks counted in the tin's CoDel statistics are at least the
//!   ECT packets that came out CE and at most two for each packet that came out CE (a
//!   dequeue may mark one packet twice: CoDel's mark, then the CE threshold's, which
//!   succeeds on CE too);
//! - **counters agree**: per-tin `tx_packets`/`tx_bytes`, CoDel `drop_count`, overload
//!   drops, collisions (the enqueues whose flow another tin owned, §3.3);
//! - **busy tins** (fq's set of tins that list a flow): a tin with packets is busy; an
//!   idle tin's dequeue returns nothing and changes nothing; a busy tin without packets
//!   returns nothing and becomes idle; after a dequeue returns nothing or a reset the
//!   tin is idle, and every drained flow is released;
//! - **determinism**: the same sequence gives the same outputs.
//!
//! And DRR++ (§3.5) as a property: two always-backlogged flows of equal packet size `L`
//! in one tin never differ by more than `ceil(quantum / L)` packets sent.
//!
//! 256 sequences of up to 60 operations and 512 DRR runs by default (0.2 s together in
//! release); `PROPTEST_CASES` sets both (50 000 take about 20 s).

#[path = "support/fq_ops.rs"]
mod fq_ops;

use fq_ops::{apply, ops, setups, Op, Setup, Steps};
use proptest::prelude::*;
use std::collections::{BTreeMap, VecDeque};
use txop_core::aqm::codel::CodelParams;
use txop_core::mac80211::fq::{flow_index, Backlog, Fq, FqParams, OverloadPolicy};
use txop_core::mac80211::txq::TxqId;
use txop_core::packet::Ecn;
use txop_core::{DropReason, Dropped, Nanos, NodeId, Packet};

/// A flow queue of the fq: a global flow slot, or a tin's default flow (§3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum QueueId {
    Global(u32),
    Default(usize),
}

/// Where a packet is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    Inside { tin: usize, queue: QueueId },
    Left,
}

/// What the driver observed, for the determinism check.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Event {
    Dequeued(u64, Ecn),
    Empty(usize),
    Dropped(u64, DropReason),
    Purged(u64),
}

/// Per-tin counts the model keeps.
#[derive(Clone, Copy, Debug, Default)]
struct TinModel {
    backlog: Backlog,
    tx_packets: u64,
    tx_bytes: u64,
    codel_drops: u64,
    marks: u64,
    /// Delivered packets that went in CE (CoDel may count a mark for them).
    ce_delivered: u64,
    overload_drops: u64,
    collisions: u64,
}

/// The fq under test and its model.
struct Driver {
    fq: Fq,
    setup: Setup,
    tins: Vec<TxqId>,
    now: Nanos,
    /// Every packet as it went in (with its `queued_at` stamp), by id.
    sent: Vec<Packet>,
    place: Vec<Place>,
    queues: BTreeMap<QueueId, VecDeque<u64>>,
    tin: Vec<TinModel>,
    memory_bytes: u64,
    enqueued: u64,
    dequeued: u64,
    overload_dropped: u64,
    codel_dropped: u64,
    purged: u64,
    log: Vec<Event>,
    drops: Vec<Dropped>,
}

impl Driver {
    fn new(setup: &Setup) -> Driver {
        let mut fq = Fq::new(setup.params, setup.policy);
        let tins = (0..setup.tins).map(|_| fq.add_tin()).collect();
        Driver {
            fq,
            setup: setup.clone(),
            tins,
            now: Nanos::ZERO,
            sent: Vec::new(),
            place: Vec::new(),
            queues: BTreeMap::new(),
            tin: vec![TinModel::default(); setup.tins],
            memory_bytes: 0,
            enqueued: 0,
            dequeued: 0,
            overload_dropped: 0,
            codel_dropped: 0,
            purged: 0,
            log: Vec::new(),
            drops: Vec::new(),
        }
    }

    fn limit_packets(&self) -> u32 {
        self.fq.params().limit_packets
    }

    fn memory_limit_bytes(&self) -> u64 {
        self.fq.params().memory_limit_bytes
    }

    fn total_packets(&self) -> u32 {
        self.tin.iter().map(|t| t.backlog.packets).sum()
    }

    fn total_bytes(&self) -> u64 {
        self.tin.iter().map(|t| t.backlog.bytes).sum()
    }

    fn over_limits(&self) -> bool {
        self.total_packets() > self.limit_packets() || self.memory_bytes > self.memory_limit_bytes()
    }

    fn queue_bytes(&self, q: QueueId) -> u64 {
        self.queues.get(&q).map_or(0, |ids| {
            ids.iter()
                .map(|&id| self.sent[id as usize].len_bytes as u64)
                .sum()
        })
    }

    /// The largest byte backlog of any flow queue.
    fn fattest_bytes(&self) -> u64 {
        self.queues
            .keys()
            .map(|&q| self.queue_bytes(q))
            .max()
            .unwrap_or(0)
    }

    /// Take packet `p` out of the model: it must be inside, in `tin` if given, at the
    /// head of its flow queue, and unchanged but for an ECN mark. Returns its tin.
    fn take(&mut self, p: &Packet, tin: Option<usize>, what: &str) -> Result<usize, TestCaseError> {
        let id = p.id;
        prop_assert!(
            (id as usize) < self.sent.len(),
            "{what}: unknown packet {id}"
        );
        let Place::Inside { tin: t, queue } = self.place[id as usize] else {
            return Err(TestCaseError::fail(format!(
                "{what}: packet {id} left twice"
            )));
        };
        if let Some(expect) = tin {
            prop_assert_eq!(t, expect, "{}: packet {} came out of another tin", what, id);
        }
        let q = self
            .queues
            .get_mut(&queue)
            .expect("queue of a packet inside");
        prop_assert_eq!(
            q.front().copied(),
            Some(id),
            "{}: packet {} is not the head of its flow queue {:?}",
            what,
            id,
            queue
        );
        q.pop_front();
        let orig = self.sent[id as usize];
        let mut expect = orig;
        expect.ecn = p.ecn;
        prop_assert_eq!(*p, expect, "{}: packet {} changed inside", what, id);
        prop_assert!(
            p.ecn == orig.ecn || matches!((orig.ecn, p.ecn), (Ecn::Ect0 | Ecn::Ect1, Ecn::Ce)),
            "{}: packet {} went in {:?}, came out {:?}",
            what,
            id,
            orig.ecn,
            p.ecn
        );
        self.place[id as usize] = Place::Left;
        let m = &mut self.tin[t];
        m.backlog.packets -= 1;
        m.backlog.bytes -= p.len_bytes as u64;
        self.memory_bytes -= p.truesize_bytes() as u64;
        Ok(t)
    }

    fn enqueue_one(
        &mut self,
        tin: usize,
        hash: u32,
        len_bytes: u32,
        ecn: Ecn,
    ) -> Result<(), TestCaseError> {
        let id = self.sent.len() as u64;
        let mut p = Packet::new(id, NodeId::AP, NodeId(1), len_bytes);
        p.flow = hash;
        p.ecn = ecn;
        // §3.3: the hash's flow, unless another tin owns it.
        let slot = flow_index(hash, self.fq.params().flows);
        let queue = match self.fq.flow_owner(slot) {
            Some(owner) if owner != self.tins[tin] => {
                self.tin[tin].collisions += 1;
                QueueId::Default(tin)
            }
            _ => QueueId::Global(slot),
        };
        let mut stamped = p;
        stamped.queued_at = self.now;
        self.sent.push(stamped);
        self.place.push(Place::Inside { tin, queue });
        self.queues.entry(queue).or_default().push_back(id);
        self.tin[tin].backlog.packets += 1;
        self.tin[tin].backlog.bytes += len_bytes as u64;
        self.memory_bytes += p.truesize_bytes() as u64;
        self.enqueued += 1;

        let over = self.over_limits();
        let mut drops = std::mem::take(&mut self.drops);
        drops.clear();
        self.fq.enqueue(self.now, self.tins[tin], p, &mut drops);
        prop_assert!(over || drops.is_empty(), "dropped within the limits");
        let one_per_pass = self.setup.policy == OverloadPolicy::OneFromFattest;
        let mut victim = None;
        for (i, Dropped { packet: d, reason }) in drops.iter().enumerate() {
            let Place::Inside { queue, .. } = self.place[d.id as usize] else {
                return Err(TestCaseError::fail(format!("dropped {} twice", d.id)));
            };
            let pass_start = one_per_pass || victim != Some(queue);
            let mem_over = self.memory_bytes > self.memory_limit_bytes();
            prop_assert!(
                matches!(reason, DropReason::Overlimit | DropReason::Overmemory),
                "enqueue dropped {} for {:?}",
                d.id,
                reason
            );
            prop_assert!(
                *reason == DropReason::Overmemory || !mem_over,
                "an overlimit drop above the memory limit"
            );
            if pass_start {
                prop_assert!(self.over_limits(), "overload drop {i} within both limits");
                prop_assert_eq!(
                    self.queue_bytes(queue),
                    self.fattest_bytes(),
                    "overload drop {} is not from a fattest flow",
                    i
                );
            }
            if i == 0 || one_per_pass {
                prop_assert_eq!(
                    *reason == DropReason::Overmemory,
                    mem_over,
                    "drop {} reason {:?}",
                    i,
                    reason
                );
            }
            victim = Some(queue);
            let t = self.take(d, None, "overload drop")?;
            self.tin[t].overload_drops += 1;
            self.overload_dropped += 1;
            self.log.push(Event::Dropped(d.id, *reason));
        }
        self.drops = drops;
        prop_assert!(
            !self.over_limits() || self.total_bytes() == 0,
            "over a limit after an enqueue: {} packets (limit {}), {} B (limit {})",
            self.total_packets(),
            self.limit_packets(),
            self.memory_bytes,
            self.memory_limit_bytes()
        );
        Ok(())
    }

    fn dequeue_one(&mut self, tin: usize, codel: &CodelParams) -> Result<(), TestCaseError> {
        let mut drops = std::mem::take(&mut self.drops);
        drops.clear();
        let got = self.fq.dequeue(self.now, self.tins[tin], codel, &mut drops);
        for Dropped { packet: d, reason } in &drops {
            prop_assert_eq!(
                *reason,
                DropReason::Codel,
                "dequeue dropped for {:?}",
                reason
            );
            let orig = self.sent[d.id as usize];
            // codel_should_drop: sojourn (in 1024 ns units) at least the target.
            let waited = self.now.as_ns() - orig.queued_at.as_ns();
            prop_assert!(
                waited >= (codel.target as u64).saturating_sub(1) * 1024,
                "CoDel dropped packet {} after {} ns",
                d.id,
                waited
            );
            prop_assert!(
                !(codel.ecn && orig.ecn != Ecn::NotEct),
                "CoDel with ECN dropped ECN-capable packet {}",
                d.id
            );
            self.take(d, Some(tin), "CoDel drop")?;
            self.tin[tin].codel_drops += 1;
            self.codel_dropped += 1;
            self.log.push(Event::Dropped(d.id, *reason));
        }
        self.drops = drops;
        match got {
            Some(p) => {
                self.take(&p, Some(tin), "dequeue")?;
                let orig = self.sent[p.id as usize];
                if p.ecn == Ecn::Ce && orig.ecn != Ecn::Ce {
                    self.tin[tin].marks += 1;
                }
                if orig.ecn == Ecn::Ce {
                    self.tin[tin].ce_delivered += 1;
                }
                self.tin[tin].tx_packets += 1;
                self.tin[tin].tx_bytes += p.len_bytes as u64;
                self.dequeued += 1;
                self.log.push(Event::Dequeued(p.id, p.ecn));
            }
            None => {
                prop_assert_eq!(
                    self.tin[tin].backlog.packets,
                    0,
                    "tin {} returned nothing with packets queued",
                    tin
                );
                prop_assert!(
                    self.fq.tin_idle(self.tins[tin]),
                    "tin {tin} still busy after returning nothing"
                );
                self.log.push(Event::Empty(tin));
            }
        }
        Ok(())
    }

    fn reset(&mut self, tin: usize) -> Result<(), TestCaseError> {
        let stats_before = self.fq.tin_stats(self.tins[tin]);
        let mut purged = Vec::new();
        self.fq.reset_tin(self.tins[tin], &mut purged);
        for p in &purged {
            self.take(p, Some(tin), "purge")?;
            self.purged += 1;
            self.log.push(Event::Purged(p.id));
        }
        prop_assert_eq!(
            self.tin[tin].backlog,
            Backlog::default(),
            "reset left packets"
        );
        prop_assert!(
            self.fq.tin_idle(self.tins[tin]),
            "tin {tin} busy after reset"
        );
        prop_assert_eq!(
            self.fq.tin_stats(self.tins[tin]),
            stats_before,
            "reset changed the tin's counters"
        );
        Ok(())
    }

    /// Every invariant that holds between operations.
    fn check(&self) -> Result<(), TestCaseError> {
        let fq = &self.fq;
        let inside = fq.backlog_packets() as u64;
        prop_assert_eq!(
            self.enqueued,
            self.dequeued + self.overload_dropped + self.codel_dropped + self.purged + inside,
            "packets not conserved"
        );
        prop_assert_eq!(fq.backlog_packets(), self.total_packets());
        prop_assert_eq!(fq.memory_usage(), self.memory_bytes, "memory usage");
        let stats = fq.stats();
        prop_assert_eq!(stats.backlog_packets, fq.backlog_packets());
        prop_assert_eq!(stats.memory_usage_bytes, fq.memory_usage());
        prop_assert_eq!(stats.overload_drops, self.overload_dropped);
        let collisions: u64 = self.tin.iter().map(|t| t.collisions).sum();
        prop_assert_eq!(stats.collisions, collisions);
        // Flow queues: as the model has them, and together they hold everything.
        let mut sum = Backlog::default();
        let flows = fq.params().flows;
        for (&q, ids) in &self.queues {
            let want = Backlog {
                packets: ids.len() as u32,
                bytes: self.queue_bytes(q),
            };
            let got = match q {
                QueueId::Global(slot) => fq.flow_backlog(slot),
                QueueId::Default(t) => fq.default_flow_backlog(self.tins[t]),
            };
            prop_assert_eq!(got, want, "backlog of {:?}", q);
            sum.packets += got.packets;
            sum.bytes += got.bytes;
            if let (QueueId::Global(slot), Some(&first)) = (q, ids.front()) {
                let Place::Inside { tin, .. } = self.place[first as usize] else {
                    unreachable!("queued packets are inside");
                };
                prop_assert!(
                    ids.iter()
                        .all(|&id| matches!(self.place[id as usize], Place::Inside { tin: t, .. } if t == tin)),
                    "flow {} holds packets of two tins",
                    slot
                );
                prop_assert_eq!(
                    fq.flow_owner(slot),
                    Some(self.tins[tin]),
                    "owner of flow {}",
                    slot
                );
            }
            if let QueueId::Global(slot) = q {
                prop_assert!(slot < flows);
            }
        }
        prop_assert_eq!(
            sum,
            Backlog {
                packets: self.total_packets(),
                bytes: self.total_bytes()
            },
            "flow backlogs do not add up to the total"
        );
        for (i, &t) in self.tins.iter().enumerate() {
            let m = &self.tin[i];
            prop_assert_eq!(fq.tin_backlog(t), m.backlog, "backlog of tin {}", i);
            let s = fq.tin_stats(t);
            prop_assert_eq!(
                (s.tx_packets, s.tx_bytes),
                (m.tx_packets, m.tx_bytes),
                "tx counters of tin {}",
                i
            );
            prop_assert_eq!(
                s.codel.drop_count,
                m.codel_drops,
                "CoDel drops of tin {}",
                i
            );
            let marks = s.codel.ecn_mark + s.codel.ce_mark;
            prop_assert!(
                m.marks <= marks && marks <= 2 * (m.marks + m.ce_delivered),
                "CoDel marks of tin {}: {} counted, {} ECT packets came out CE, {} CE packets delivered",
                i,
                marks,
                m.marks,
                m.ce_delivered
            );
            prop_assert_eq!(
                s.overload_drops,
                m.overload_drops,
                "overload drops of tin {}",
                i
            );
            prop_assert_eq!(s.collisions, m.collisions, "collisions of tin {}", i);
            if self.setup.policy == OverloadPolicy::OneFromFattest {
                prop_assert_eq!(s.overlimit, s.overload_drops, "one drop per pass");
            } else {
                prop_assert!(
                    s.overlimit <= s.overload_drops && (s.overlimit > 0) == (s.overload_drops > 0)
                );
            }
            prop_assert!(s.overmemory <= s.overlimit);
            // Busy tins.
            prop_assert_eq!(fq.busy_tins().contains(t), !fq.tin_idle(t));
            if m.backlog.packets > 0 {
                prop_assert!(!fq.tin_idle(t), "tin {i} has packets but is idle");
            } else {
                // Idle: a dequeue returns nothing and changes nothing. Busy without
                // packets: it returns nothing and releases the tin's flows.
                let mut probe = fq.clone();
                let mut drops = Vec::new();
                let idle = fq.tin_idle(t);
                let got = probe.dequeue(self.now, t, &CodelParams::mac80211(), &mut drops);
                prop_assert!(
                    got.is_none() && drops.is_empty(),
                    "empty tin {i} gave a packet"
                );
                prop_assert!(probe.tin_idle(t), "tin {i} busy after returning nothing");
                if idle {
                    prop_assert_eq!(probe.stats(), fq.stats());
                    prop_assert_eq!(probe.tin_stats(t), fq.tin_stats(t));
                }
            }
        }
        Ok(())
    }

    fn run(&mut self, ops: &[Op]) -> Result<(), TestCaseError> {
        let setup = self.setup.clone();
        for op in ops {
            apply(self, &setup, op)?;
            self.check()?;
        }
        Ok(())
    }

    /// Dequeue every tin until it returns nothing: everything leaves, and every flow
    /// is released (§3.5).
    fn drain(&mut self) -> Result<(), TestCaseError> {
        let codel = CodelParams::mac80211();
        for tin in 0..self.setup.tins {
            loop {
                self.dequeue_one(tin, &codel)?;
                if self.log.last() == Some(&Event::Empty(tin)) {
                    break;
                }
            }
        }
        self.check()?;
        prop_assert_eq!((self.fq.backlog_packets(), self.fq.memory_usage()), (0, 0));
        prop_assert!(self.place.iter().all(|p| *p == Place::Left));
        for q in self.queues.keys() {
            if let QueueId::Global(slot) = q {
                prop_assert_eq!(self.fq.flow_owner(*slot), None, "flow {} still owned", slot);
            }
        }
        Ok(())
    }
}

impl Steps for Driver {
    fn enqueue(
        &mut self,
        tin: usize,
        hash: u32,
        len_bytes: u32,
        ecn: Ecn,
    ) -> Result<(), TestCaseError> {
        self.enqueue_one(tin, hash, len_bytes, ecn)
    }
    fn dequeue(&mut self, tin: usize, codel: &CodelParams) -> Result<(), TestCaseError> {
        self.dequeue_one(tin, codel)
    }
    fn reset(&mut self, tin: usize) -> Result<(), TestCaseError> {
        Driver::reset(self, tin)
    }
    fn advance(&mut self, by: Nanos) {
        self.now += by;
    }
}

/// Two flows of one tin, each holding packets of `len_bytes`, as the DRR test drives
/// them.
#[derive(Clone, Copy, Debug)]
enum DrrOp {
    EnqueueA,
    EnqueueB,
    Dequeue,
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn fq_conserves_packets_keeps_flows_fifo_and_respects_limits(
        setup in setups(),
        ops in ops(),
    ) {
        let mut a = Driver::new(&setup);
        a.run(&ops)?;
        a.drain()?;
        let mut b = Driver::new(&setup);
        b.run(&ops)?;
        b.drain()?;
        prop_assert!(a.log == b.log, "the same operations gave different outputs");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// DRR++ (§3.5): a flow at the head sends while its deficit is positive and is
    /// then topped up by one quantum and moved to the tail. With two flows A and B of
    /// equal packet size `L`, each always backlogged (no CoDel drop: the clock stands
    /// still; no overload: default limits), after both have had `k` turns each has sent
    /// between `k·Q` and `k·Q + L` bytes, and during a turn the flow at the head sends
    /// less than `Q + L` bytes more. So the packet counts never differ by more than
    /// `ceil(Q / L)`: one quantum's worth.
    #[test]
    fn drr_two_backlogged_flows_stay_within_a_quantum(
        quantum_bytes in 1u32..=3_000,
        len_bytes in 1u32..=1_500,
        start in (1u32..=20, 1u32..=20),
        ops in proptest::collection::vec(
            prop_oneof![1 => Just(DrrOp::EnqueueA), 1 => Just(DrrOp::EnqueueB), 4 => Just(DrrOp::Dequeue)],
            1..300,
        ),
    ) {
        let params = FqParams { quantum_bytes, ..FqParams::default() };
        let mut fq = Fq::new(params, OverloadPolicy::HalfFromFattest);
        let tin = fq.add_tin();
        // Different top 12 bits: flows 1 and 2 of 4096.
        let (hash_a, hash_b) = (1u32 << 20, 2u32 << 20);
        let codel = CodelParams::mac80211();
        let mut drops = Vec::new();
        let mut id = 0u64;
        let mut enqueue = |fq: &mut Fq, hash: u32| {
            let mut p = Packet::new(id, NodeId::AP, NodeId(1), len_bytes);
            p.flow = hash;
            id += 1;
            fq.enqueue(Nanos::ZERO, tin, p, &mut Vec::new());
        };
        for _ in 0..start.0 {
            enqueue(&mut fq, hash_a);
        }
        for _ in 0..start.1 {
            enqueue(&mut fq, hash_b);
        }
        let (mut queued_a, mut queued_b) = (start.0, start.1);
        let (mut sent_a, mut sent_b) = (0u32, 0u32);
        let bound = quantum_bytes.div_ceil(len_bytes);
        for op in ops {
            match op {
                DrrOp::EnqueueA => {
                    enqueue(&mut fq, hash_a);
                    queued_a += 1;
                }
                DrrOp::EnqueueB => {
                    enqueue(&mut fq, hash_b);
                    queued_b += 1;
                }
                DrrOp::Dequeue => {
                    let p = fq.dequeue(Nanos::ZERO, tin, &codel, &mut drops);
                    let p = p.expect("a backlogged tin gives a packet");
                    if p.flow == hash_a {
                        sent_a += 1;
                        queued_a -= 1;
                    } else {
                        sent_b += 1;
                        queued_b -= 1;
                    }
                    prop_assert!(
                        sent_a.abs_diff(sent_b) <= bound,
                        "A sent {}, B sent {}: more than ceil({} / {}) = {} apart",
                        sent_a, sent_b, quantum_bytes, len_bytes, bound
                    );
                    if queued_a == 0 || queued_b == 0 {
                        // No longer both backlogged.
                        break;
                    }
                }
            }
        }
        prop_assert!(drops.is_empty());
    }
}
