//! The loaded kernel fq/CoDel and AQL behind the core's `Fq` and `Aql`, against txop's
//! own on the same operations (the kernel-oracle harness finds the two codes agree step
//! by step, so a run through the core's types must too): the same packets out, the
//! same drops with their reasons, the same backlogs, counters and checks; and a copy
//! (`Fq`/`Aql` cloned: the shim's `oracle_clone`, `ksched_clone`) that goes on exactly
//! as the original would, independently of it.
//!
//! Needs Debian's linux-source-6.12 and a C compiler (the objects are cached under the
//! test's temporary directory).

use txop_core::aqm::codel::CodelParams;
use txop_core::mac::edca::Ac;
use txop_core::mac80211::aql::{Aql, AqlParams};
use txop_core::mac80211::fq::{Fq, FqParams, FqSetup, OverloadPolicy};
use txop_core::mac80211::txq::{LinkId, TxqId};
use txop_core::packet::Ecn;
use txop_core::{Dropped, Nanos, NodeId, Packet};

fn cache() {
    std::env::set_var(
        "TXOP_CACHE_DIR",
        concat!(env!("CARGO_TARGET_TMPDIR"), "/kernel-units-cache"),
    );
}

/// A deterministic stream of draws (a 64-bit LCG: no randomness to share).
struct Draws(u64);

impl Draws {
    fn next(&mut self, below: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % below
    }
}

/// What one step did, comparable across the two codes.
#[derive(Debug, PartialEq, Eq)]
struct Step {
    out: Option<(u64, Ecn)>,
    drops: Vec<(u64, String)>,
    backlog_packets: u32,
    memory_bytes: u64,
    tin_packets: u32,
    tin_bytes: u64,
}

const TINS: usize = 12;

/// Steps `from..to` on `fq`: a packet of one of 40 flows into a tin, or a dequeue at
/// 1.5 ms steps with CoDel on (ECN for some flows), or a purge now and then.
fn drive(fq: &mut Fq, from: u64, to: u64) -> Vec<Step> {
    let mut d = Draws(from.wrapping_mul(0x9e37_79b9) + 1);
    let codel = CodelParams::mac80211();
    let mut steps = Vec::new();
    for i in from..to {
        let now = Nanos::from_us(1500 * i);
        let tin = TxqId::from_index(d.next(TINS as u64) as usize);
        let mut drops: Vec<Dropped> = Vec::new();
        let mut out = None;
        match d.next(100) {
            0..=74 => {
                let mut p = Packet::new(i, NodeId::AP, NodeId(1), 60 + d.next(1441) as u32);
                p.flow = (d.next(40) as u32).wrapping_mul(0x0765_4321);
                p.ecn = if p.flow.is_multiple_of(3) {
                    Ecn::Ect0
                } else {
                    Ecn::NotEct
                };
                fq.enqueue(now, tin, p, &mut drops);
            }
            75..=98 => {
                out = fq
                    .dequeue(now, tin, &codel, &mut drops)
                    .map(|p| (p.id, p.ecn))
            }
            _ => {
                let mut purged = Vec::new();
                fq.reset_tin(tin, &mut purged);
                drops.extend(purged.into_iter().map(|packet| Dropped {
                    packet,
                    reason: txop_core::DropReason::QueueFull,
                }));
            }
        }
        let b = fq.tin_backlog(tin);
        steps.push(Step {
            out,
            drops: drops
                .iter()
                .map(|x| (x.packet.id, format!("{:?}", x.reason)))
                .collect(),
            backlog_packets: fq.backlog_packets(),
            memory_bytes: fq.memory_usage(),
            tin_packets: b.packets,
            tin_bytes: b.bytes,
        });
    }
    steps
}

fn fq_pair(params: FqParams) -> (Fq, Fq) {
    let code = txop_kernel::fq(None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(code.0.origin().unit, "fq");
    let mut rust = Fq::new(params, OverloadPolicy::HalfFromFattest);
    let mut kernel = Fq::new(
        params,
        FqSetup {
            policy: OverloadPolicy::HalfFromFattest,
            code: Some(code),
        },
    );
    assert!(kernel.runs_external() && !rust.runs_external());
    for _ in 0..TINS {
        rust.add_tin();
        kernel.add_tin();
    }
    (rust, kernel)
}

#[test]
fn kernel_fq_behind_fq_is_txops_and_its_copy_goes_on_alike() {
    cache();
    // A packet limit of 200 so that the overload loop runs too.
    let params = FqParams {
        limit_packets: 200,
        ..FqParams::default()
    };
    let (mut rust, mut kernel) = fq_pair(params);
    let a = drive(&mut rust, 0, 6000);
    assert_eq!(a, drive(&mut kernel, 0, 6000), "the first 6000 steps");
    let drops: usize = a.iter().map(|s| s.drops.len()).sum();
    let outs = a.iter().filter(|s| s.out.is_some()).count();
    assert!(
        drops > 100 && outs > 1000,
        "{drops} drops, {outs} packets out"
    );
    let marked = a
        .iter()
        .filter(|s| matches!(s.out, Some((_, Ecn::Ce))))
        .count();
    let reasons: std::collections::BTreeSet<&str> = a
        .iter()
        .flat_map(|s| s.drops.iter().map(|(_, r)| r.as_str()))
        .collect();
    eprintln!("{drops} drops ({reasons:?}), {outs} out, {marked} CE-marked");
    assert!(
        reasons.contains("Overlimit") && reasons.contains("Codel"),
        "{reasons:?}"
    );

    // Copies go on as the originals do, and the originals are not disturbed by them.
    let (mut rust_copy, mut kernel_copy) = (rust.clone(), kernel.clone());
    let b = drive(&mut rust, 6000, 9000);
    assert_eq!(
        b,
        drive(&mut kernel, 6000, 9000),
        "the originals, after the copy"
    );
    assert_eq!(b, drive(&mut kernel_copy, 6000, 9000), "the kernel's copy");
    assert_eq!(b, drive(&mut rust_copy, 6000, 9000), "txop's copy");
}

#[test]
fn kernel_aql_behind_aql_is_txops_and_its_copy_goes_on_alike() {
    cache();
    let code = txop_kernel::aql(None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(code.0.origin().unit, "aql");
    let params = AqlParams::default();
    // Enough stations for txop's eligibility bitmap to be kept.
    let mut rust = Aql::new(params, 10);
    let mut kernel = Aql::new(
        AqlParams {
            code: Some(code),
            ..params
        },
        10,
    );
    // Charges and completions of random stored estimates (what the path charges:
    // multiples of 4 µs up to 4092), the checks after each.
    let run = |aql: &mut Aql, from: u64, to: u64| -> Vec<(bool, u32, u32, bool, bool)> {
        let mut d = Draws(from + 7);
        let mut pending: Vec<(LinkId, Ac, u32)> = Vec::new();
        let mut log = Vec::new();
        for i in from..to {
            let sta = LinkId(d.next(10) as u16);
            let ac = Ac::ALL[d.next(4) as usize];
            if d.next(100) < 55 || pending.is_empty() {
                let us = 4 * (1 + d.next(1023) as u32);
                aql.add(sta, ac, us);
                pending.push((sta, ac, us));
            } else {
                let (s, a, us) = pending.swap_remove(d.next(pending.len() as u64) as usize);
                // Now and then a status reports more than was charged (the clamps).
                let extra = if i % 97 == 0 { 1000 } else { 0 };
                aql.complete(s, a, us + extra);
            }
            log.push((
                aql.station_eligible(sta, ac),
                aql.pending_us(sta, ac),
                aql.total_pending_us(),
                aql.ac_over_limit(ac, 1 + d.next(12) as usize),
                aql.eligible_stations(ac).is_some_and(|e| e.contains(sta)),
            ));
        }
        log
    };
    let a = run(&mut rust, 0, 20_000);
    assert_eq!(a, run(&mut kernel, 0, 20_000));
    let held = a.iter().filter(|x| !x.0).count();
    let over = a.iter().filter(|x| x.3).count();
    assert!(
        held > 100 && over > 100,
        "{held} ineligible, {over} over the AC limit"
    );
    let (mut rust_copy, mut kernel_copy) = (rust.clone(), kernel.clone());
    let b = run(&mut rust, 20_000, 30_000);
    assert_eq!(b, run(&mut kernel, 20_000, 30_000));
    assert_eq!(b, run(&mut kernel_copy, 20_000, 30_000));
    assert_eq!(b, run(&mut rust_copy, 20_000, 30_000));
}
