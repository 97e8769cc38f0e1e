//! Differential test: the kernel's own mac80211 fq and CoDel (`include/net/fq_impl.h`,
//! `codel_impl.h`, built by this crate from the installed Linux source) and txop's
//! [`Fq`] (`txop_core::mac80211::fq`, with `txop_core::aqm::codel`) run the same random
//! operation sequences: those of txop-core's `fq_props.rs` (bursts of enqueues into a
//! few tins with colliding flow hashes, 0–1500 B packets and every ECN codepoint;
//! dequeues with four CoDel parameter sets and the clock advancing; purges; pauses).
//!
//! After every single enqueue, dequeue and purge the two must agree on:
//! - what came out: the dequeued packet (id and ECN codepoint), the packets dropped (in
//!   order, with the reason: overload pass caused by the packet or the memory limit,
//!   CoDel) and the packets purged;
//! - `struct fq`: packets queued, memory usage, overload passes (`overlimit`,
//!   `overmemory`), collisions; no `WARN_ON_ONCE` fired in the kernel code;
//! - every tin: backlog (packets, bytes), `overlimit`, `collisions`, `flows`,
//!   `tx_bytes`, `tx_packets`, its CoDel statistics (`maxpacket`, `drop_count`,
//!   `drop_len`, `ecn_mark`, `ce_mark`), and whether it lists any flow (txop's idle tin);
//! - every flow the sequence's hashes reach and every default flow: owner, backlog
//!   (packets, bytes), and the whole CoDel state (`count`, `lastcount`, `dropping`,
//!   `rec_inv_sqrt`, `first_above_time`, `drop_next`, `ldelay`).
//!
//! What txop does differently on purpose is listed in docs/reference/kernel-oracle.md
//! and mapped here explicitly (see [`kernel_limits`]).
//!
//! 10 000 sequences from a fixed seed by default (a few seconds in release);
//! `TXOP_ORACLE_CASES` and `TXOP_ORACLE_SEED` run more or others. A divergence fails
//! with the first differing step, both sides' values and (shrunk by proptest) the
//! sequence.

#[path = "../../txop-core/tests/support/fq_ops.rs"]
mod fq_ops;
mod support;

use fq_ops::{apply, ops, setups, Op, Setup, Steps};
use kernel_oracle::{
    CodelParams as KCodelParams, CodelVars as KCodelVars, EcnBits, Event, FqLimits, KernelFq,
    Removal, CODEL_DISABLED_THRESHOLD,
};
use proptest::prelude::*;
use proptest::test_runner::TestRunner;
use std::sync::Mutex;
use txop_core::aqm::codel::{CodelParams, CodelVars};
use txop_core::mac80211::fq::{flow_index, Fq, FqParams, OverloadPolicy};
use txop_core::mac80211::txq::TxqId;
use txop_core::packet::Ecn;
use txop_core::{DropReason, Dropped, Nanos, NodeId, Packet};

/// The kernel's `fq_init` limits for txop's parameters. One deliberate difference:
/// txop raises a quantum of 0 to 1 (the kernel's `fq_tin_dequeue` would loop forever
/// on a flow with a non-positive deficit), so the kernel is given that 1.
fn kernel_limits(p: &FqParams) -> FqLimits {
    FqLimits {
        flows: p.flows,
        quantum_bytes: p.quantum_bytes.max(1),
        limit_packets: p.limit_packets,
        memory_limit_bytes: u32::try_from(p.memory_limit_bytes)
            .expect("the kernel's memory_limit is a u32"),
    }
}

fn ecn_bits(e: Ecn) -> EcnBits {
    match e {
        Ecn::NotEct => EcnBits::NotEct,
        Ecn::Ect1 => EcnBits::Ect1,
        Ecn::Ect0 => EcnBits::Ect0,
        Ecn::Ce => EcnBits::Ce,
    }
}

fn kernel_codel(p: &CodelParams) -> KCodelParams {
    KCodelParams {
        target: p.target,
        interval: p.interval,
        mtu_bytes: p.mtu_bytes,
        ecn: p.ecn as u32,
        ce_threshold: p.ce_threshold.unwrap_or(CODEL_DISABLED_THRESHOLD),
    }
}

fn codel_vars(v: &CodelVars) -> KCodelVars {
    KCodelVars {
        count: v.count,
        lastcount: v.lastcount,
        dropping: v.dropping as u32,
        rec_inv_sqrt: v.rec_inv_sqrt as u32,
        first_above_time: v.first_above_time,
        drop_next: v.drop_next,
        ldelay: v.ldelay,
    }
}

/// What left the queue other than by dequeue, as comparable values.
#[derive(Debug, PartialEq, Eq)]
struct Out {
    id: u64,
    removal: Removal,
    ecn: EcnBits,
}

fn txop_drops(drops: &[Dropped]) -> Vec<Out> {
    drops
        .iter()
        .map(|Dropped { packet, reason }| Out {
            id: packet.id,
            removal: match reason {
                DropReason::Overlimit => Removal::Overlimit,
                DropReason::Overmemory => Removal::Overmemory,
                DropReason::Codel => Removal::Codel,
                other => panic!("fq dropped a packet for {other:?}"),
            },
            ecn: ecn_bits(packet.ecn),
        })
        .collect()
}

fn kernel_out(events: &[Event]) -> Vec<Out> {
    events
        .iter()
        .map(|e| Out {
            id: e.id,
            removal: e.removal,
            ecn: e.ecn,
        })
        .collect()
}

/// Both sides, the clock and a step counter for the report.
struct Pair {
    txop: Fq,
    kernel: KernelFq,
    tins: Vec<TxqId>,
    /// Global flows the setup's hashes reach.
    flows: Vec<u32>,
    now: Nanos,
    next_id: u64,
    step: usize,
    drops: Vec<Dropped>,
    /// Packets purged, and dequeues after which some flow's CoDel was dropping.
    purged: u64,
    dropping_steps: u64,
}

/// What the compared sequences exercised, summed over the campaign: the test fails if a
/// path was never taken (the comparison would say nothing about it).
#[derive(Debug, Default)]
struct Coverage {
    sequences: u64,
    steps: u64,
    dequeued: u64,
    codel_drops: u64,
    ecn_marks: u64,
    ce_marks: u64,
    overload_passes: u64,
    overmemory_passes: u64,
    collisions: u64,
    purged: u64,
    dropping_steps: u64,
}

static COVERAGE: Mutex<Coverage> = Mutex::new(Coverage {
    sequences: 0,
    steps: 0,
    dequeued: 0,
    codel_drops: 0,
    ecn_marks: 0,
    ce_marks: 0,
    overload_passes: 0,
    overmemory_passes: 0,
    collisions: 0,
    purged: 0,
    dropping_steps: 0,
});

/// Fail with the first differing step.
macro_rules! agree {
    ($pair:expr, $what:expr, $txop:expr, $kernel:expr) => {{
        let (t, k) = (&$txop, &$kernel);
        if t != k {
            return Err(TestCaseError::fail(format!(
                "step {} ({}): txop and the kernel differ\n  txop:   {:?}\n  kernel: {:?}\n  \
                 (kernel code: {})",
                $pair.step,
                $what,
                t,
                k,
                kernel_oracle::SOURCE
            )));
        }
    }};
}

impl Pair {
    fn new(setup: &Setup) -> Pair {
        let mut txop = Fq::new(setup.params, setup.policy);
        let tins = (0..setup.tins).map(|_| txop.add_tin()).collect();
        let kernel = KernelFq::new(kernel_limits(&setup.params), setup.tins as u32)
            .unwrap_or_else(|e| panic!("{e}"));
        let n = txop.params().flows;
        let mut flows: Vec<u32> = setup.hashes.iter().map(|&h| flow_index(h, n)).collect();
        flows.sort_unstable();
        flows.dedup();
        Pair {
            txop,
            kernel,
            tins,
            flows,
            now: Nanos::ZERO,
            next_id: 0,
            step: 0,
            drops: Vec::new(),
            purged: 0,
            dropping_steps: 0,
        }
    }

    /// The state after a step.
    fn compare(&self, what: &str) -> Result<(), TestCaseError> {
        let (t, k) = (&self.txop, &self.kernel);
        let kfq = k.fq();
        agree!(
            self,
            format!("{what}: WARN_ON_ONCE in the kernel code"),
            0,
            kfq.warnings
        );
        let s = t.stats();
        agree!(
            self,
            format!("{what}: fq backlog, memory_usage, overlimit, overmemory, collisions"),
            (
                s.backlog_packets as u64,
                s.memory_usage_bytes,
                s.overlimit,
                s.overmemory,
                s.collisions
            ),
            (
                kfq.backlog as u64,
                kfq.memory_usage as u64,
                kfq.overlimit as u64,
                kfq.overmemory as u64,
                kfq.collisions as u64
            )
        );
        for (i, &tin) in self.tins.iter().enumerate() {
            let kt = k.tin(i as u32);
            let b = t.tin_backlog(tin);
            let ts = t.tin_stats(tin);
            agree!(
                self,
                format!("{what}: tin {i} backlog (packets, bytes), overlimit, collisions, flows, tx_packets, tx_bytes"),
                (b.packets, b.bytes, ts.overlimit, ts.collisions, ts.flows, ts.tx_packets, ts.tx_bytes),
                (
                    kt.backlog_packets,
                    kt.backlog_bytes as u64,
                    kt.overlimit as u64,
                    kt.collisions as u64,
                    kt.flows as u64,
                    kt.tx_packets as u64,
                    kt.tx_bytes as u64
                )
            );
            let c = ts.codel;
            agree!(
                self,
                format!("{what}: tin {i} CoDel stats (maxpacket, drop_count, drop_len, ecn_mark, ce_mark)"),
                (c.maxpacket, c.drop_count, c.drop_len, c.ecn_mark, c.ce_mark),
                (
                    kt.maxpacket,
                    kt.drop_count as u64,
                    kt.drop_len as u64,
                    kt.ecn_mark as u64,
                    kt.ce_mark as u64
                )
            );
            agree!(
                self,
                format!("{what}: tin {i} idle (no flow on new_flows or old_flows)"),
                t.tin_idle(tin),
                kt.new_flows + kt.old_flows == 0
            );
            let kd = k.default_flow(i as u32);
            let db = t.default_flow_backlog(tin);
            agree!(
                self,
                format!("{what}: tin {i} default flow backlog (packets, bytes)"),
                (db.packets, db.bytes),
                (kd.packets, kd.backlog_bytes as u64)
            );
            agree!(
                self,
                format!("{what}: tin {i} default flow CoDel state"),
                codel_vars(&t.default_flow_codel(tin)),
                kd.cvars
            );
        }
        for &f in &self.flows {
            let kf = k.flow(f);
            let b = t.flow_backlog(f);
            agree!(
                self,
                format!("{what}: flow {f} owner, backlog (packets, bytes)"),
                (
                    t.flow_owner(f).map(|o| o.index() as i32).unwrap_or(-1),
                    b.packets,
                    b.bytes
                ),
                (kf.tin, kf.packets, kf.backlog_bytes as u64)
            );
            agree!(
                self,
                format!("{what}: flow {f} CoDel state"),
                codel_vars(&t.flow_codel(f)),
                kf.cvars
            );
        }
        Ok(())
    }

    fn run(&mut self, setup: &Setup, ops: &[Op]) -> Result<(), TestCaseError> {
        for op in ops {
            apply(self, setup, op)?;
        }
        // Drain every tin with mac80211's CoDel parameters.
        let codel = CodelParams::mac80211();
        for tin in 0..setup.tins {
            while self.txop.tin_backlog(self.tins[tin]).packets > 0
                || !self.txop.tin_idle(self.tins[tin])
            {
                Steps::dequeue(self, tin, &codel)?;
            }
            Steps::dequeue(self, tin, &codel)?;
        }
        self.tally();
        Ok(())
    }
}

impl Pair {
    /// Add this sequence's paths to [`COVERAGE`] (read from the kernel's counters).
    fn tally(&self) {
        let fq = self.kernel.fq();
        let mut c = COVERAGE.lock().unwrap_or_else(|e| e.into_inner());
        c.sequences += 1;
        c.steps += self.step as u64;
        for i in 0..self.tins.len() {
            let t = self.kernel.tin(i as u32);
            c.dequeued += t.tx_packets as u64;
            c.codel_drops += t.drop_count as u64;
            c.ecn_marks += t.ecn_mark as u64;
            c.ce_marks += t.ce_mark as u64;
        }
        c.overload_passes += fq.overlimit as u64;
        c.overmemory_passes += fq.overmemory as u64;
        c.collisions += fq.collisions as u64;
        c.purged += self.purged;
        c.dropping_steps += self.dropping_steps;
    }
}

impl Steps for Pair {
    fn enqueue(
        &mut self,
        tin: usize,
        hash: u32,
        len_bytes: u32,
        ecn: Ecn,
    ) -> Result<(), TestCaseError> {
        self.step += 1;
        let id = self.next_id;
        self.next_id += 1;
        let mut p = Packet::new(id, NodeId::AP, NodeId(1), len_bytes);
        p.flow = hash;
        p.ecn = ecn;
        self.drops.clear();
        self.txop
            .enqueue(self.now, self.tins[tin], p, &mut self.drops);
        let k = kernel_out(self.kernel.enqueue(
            tin as u32,
            self.now.as_ns(),
            id,
            hash,
            len_bytes,
            p.truesize_bytes(),
            ecn_bits(ecn),
        ));
        let what = format!(
            "enqueue packet {id} ({len_bytes} B, {ecn:?}, hash {hash:#010x}) to tin {tin} at {}",
            self.now
        );
        agree!(
            self,
            format!("{what}: overload drops"),
            txop_drops(&self.drops),
            k
        );
        self.compare(&what)
    }

    fn dequeue(&mut self, tin: usize, codel: &CodelParams) -> Result<(), TestCaseError> {
        self.step += 1;
        self.drops.clear();
        let got = self
            .txop
            .dequeue(self.now, self.tins[tin], codel, &mut self.drops);
        let (kgot, kev) = self
            .kernel
            .dequeue(tin as u32, self.now.as_ns(), &kernel_codel(codel));
        let kdrops = kernel_out(kev);
        let what = format!("dequeue tin {tin} at {} with {codel:?}", self.now);
        agree!(
            self,
            format!("{what}: packet out (id, ECN)"),
            got.map(|p| (p.id, ecn_bits(p.ecn))),
            kgot.map(|d| (d.id, d.ecn))
        );
        agree!(
            self,
            format!("{what}: CoDel drops"),
            txop_drops(&self.drops),
            kdrops
        );
        let dropping = |v: kernel_oracle::FlowView| v.cvars.dropping != 0;
        if self.flows.iter().any(|&f| dropping(self.kernel.flow(f)))
            || (0..self.tins.len()).any(|i| dropping(self.kernel.default_flow(i as u32)))
        {
            self.dropping_steps += 1;
        }
        self.compare(&what)
    }

    fn reset(&mut self, tin: usize) -> Result<(), TestCaseError> {
        self.step += 1;
        let mut purged = Vec::new();
        self.txop.reset_tin(self.tins[tin], &mut purged);
        let k: Vec<u64> = self
            .kernel
            .reset_tin(tin as u32)
            .iter()
            .map(|e| e.id)
            .collect();
        let t: Vec<u64> = purged.iter().map(|p| p.id).collect();
        let what = format!("reset tin {tin}");
        agree!(self, format!("{what}: purged packets"), t, k);
        self.purged += t.len() as u64;
        self.compare(&what)
    }

    fn advance(&mut self, by: Nanos) {
        self.now += by;
    }
}

/// The kernel 6.12 code has the ≥ 5.12 overload policy (`fq_flow_drop`: up to
/// `min(32, qlen / 2)` packets a pass); txop's ≤ 5.11 policy needs a ≤ 5.11 tree.
fn kernel_era(mut setup: Setup) -> Setup {
    setup.policy = OverloadPolicy::HalfFromFattest;
    setup
}

#[test]
fn txop_fq_and_codel_match_the_kernels_step_by_step() {
    // No kernel source: one line saying how to install it, before any case runs.
    if let Err(e) = KernelFq::new(kernel_limits(&FqParams::default()), 1) {
        panic!("{e}");
    }
    let mut runner = TestRunner::new(support::config());
    let sequences = (setups().prop_map(kernel_era), ops());
    if let Err(e) = runner.run(&sequences, |(setup, ops)| {
        Pair::new(&setup).run(&setup, &ops)
    }) {
        panic!("{e}");
    }
    let c = COVERAGE.lock().unwrap_or_else(|e| e.into_inner());
    eprintln!("kernel oracle: {c:?} ({})", kernel_oracle::SOURCE);
    support::assert_reached(&[
        ("a dequeued packet", c.dequeued),
        ("a CoDel drop", c.codel_drops),
        ("a CoDel ECN mark", c.ecn_marks),
        ("a CE-threshold mark", c.ce_marks),
        ("an overload pass", c.overload_passes),
        (
            "an overload pass caused by the memory limit",
            c.overmemory_passes,
        ),
        ("a collision (default flow)", c.collisions),
        ("a purge", c.purged),
        ("a step with CoDel in the dropping state", c.dropping_steps),
    ]);
}
