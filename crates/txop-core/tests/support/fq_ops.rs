//! The random fq setups and operation sequences of `fq_props.rs` (mac80211's fq, reference
//! §3), shared with the kernel-oracle crate's differential test, which includes this file
//! by path and drives the kernel's own `fq_impl.h` with the same sequences.

#![allow(dead_code)]

use proptest::prelude::*;
use txop_core::aqm::codel::{codel_duration, CodelParams};
use txop_core::mac80211::fq::{FqParams, OverloadPolicy};
use txop_core::packet::Ecn;
use txop_core::Nanos;

/// A random fq: its parameters, policy, number of tins and the flow hashes in use.
#[derive(Clone, Debug)]
pub(crate) struct Setup {
    pub(crate) params: FqParams,
    pub(crate) policy: OverloadPolicy,
    pub(crate) tins: usize,
    pub(crate) hashes: Vec<u32>,
}

/// One step of the driver. Tin and hash indices are taken modulo the setup's counts.
#[derive(Clone, Debug)]
pub(crate) enum Op {
    /// `burst` packets of one hash into one tin.
    Enqueue {
        tin: usize,
        hash: usize,
        len_bytes: u32,
        ecn: Ecn,
        burst: u16,
    },
    /// Up to `count` dequeues from one tin, the clock advancing `step_us` before each.
    Dequeue {
        tin: usize,
        codel: usize,
        count: u8,
        step_us: u64,
    },
    /// `reset_tin` (a purge).
    Reset { tin: usize },
    /// The clock advances.
    Advance { us: u64 },
}

/// The CoDel parameters dequeues choose from: mac80211's (§2.1), the slow-station ones
/// (§2.2, ECN off), and two fast ones so that short sequences reach the dropping state
/// (one with ECN and a CE threshold, one without ECN).
pub(crate) fn codel_choices() -> [CodelParams; 4] {
    let mut fast_ecn = CodelParams::new(Nanos::from_ms(1), Nanos::from_ms(5), 0, true);
    fast_ecn.ce_threshold = Some(codel_duration(Nanos::from_us(500)));
    [
        CodelParams::mac80211(),
        CodelParams::mac80211_slow_station(),
        fast_ecn,
        CodelParams::new(Nanos::from_ms(2), Nanos::from_ms(10), 0, false),
    ]
}

pub(crate) fn policies() -> impl Strategy<Value = OverloadPolicy> {
    prop_oneof![
        Just(OverloadPolicy::OneFromFattest),
        Just(OverloadPolicy::HalfFromFattest)
    ]
}

pub(crate) fn params() -> impl Strategy<Value = FqParams> {
    let small = (
        prop_oneof![Just(0u32), Just(1), Just(2), Just(3), Just(16), Just(64)],
        prop_oneof![Just(0u32), Just(1), Just(64), Just(300), Just(1500)],
        1u32..=48,
        500u64..=40_000,
    )
        .prop_map(
            |(flows, quantum_bytes, limit_packets, memory_limit_bytes)| FqParams {
                flows,
                quantum_bytes,
                limit_packets,
                memory_limit_bytes,
            },
        );
    prop_oneof![3 => small, 1 => Just(FqParams::default())]
}

/// Hashes whose top three bits pick one of 8 buckets: with 8 or more flows, hashes of
/// one bucket share a flow and hashes of different buckets do not, so two tins using
/// one bucket collide (§3.3); with fewer flows, buckets merge.
pub(crate) fn hashes() -> impl Strategy<Value = Vec<u32>> {
    proptest::collection::vec(
        (0u32..8, any::<u16>()).prop_map(|(bucket, low)| bucket << 29 | low as u32),
        1..=8,
    )
}

pub(crate) fn setups() -> impl Strategy<Value = Setup> {
    (params(), policies(), 1usize..=4, hashes()).prop_map(|(params, policy, tins, hashes)| Setup {
        params,
        policy,
        tins,
        hashes,
    })
}

pub(crate) fn ecns() -> impl Strategy<Value = Ecn> {
    prop_oneof![
        Just(Ecn::NotEct),
        Just(Ecn::Ect0),
        Just(Ecn::Ect1),
        Just(Ecn::Ce)
    ]
}

pub(crate) fn ops() -> impl Strategy<Value = Vec<Op>> {
    let enqueue = (
        0usize..4,
        0usize..8,
        prop_oneof![1 => Just(0u32), 8 => 1u32..=1500, 2 => Just(1500u32)],
        ecns(),
        prop_oneof![3 => 1u16..=4, 1 => 5u16..=64],
    )
        .prop_map(|(tin, hash, len_bytes, ecn, burst)| Op::Enqueue {
            tin,
            hash,
            len_bytes,
            ecn,
            burst,
        });
    let dequeue =
        (0usize..4, 0usize..4, 1u8..=16, 0u64..=5_000).prop_map(|(tin, codel, count, step_us)| {
            Op::Dequeue {
                tin,
                codel,
                count,
                step_us,
            }
        });
    let reset = (0usize..4).prop_map(|tin| Op::Reset { tin });
    let advance = prop_oneof![0u64..2_000, 2_000u64..300_000].prop_map(|us| Op::Advance { us });
    proptest::collection::vec(
        prop_oneof![5 => enqueue, 4 => dequeue, 1 => reset, 2 => advance],
        1..60,
    )
}

/// The single steps an [`Op`] is made of, as a driver carries them out.
pub(crate) trait Steps {
    /// One packet of `hash` into `tin`.
    fn enqueue(
        &mut self,
        tin: usize,
        hash: u32,
        len_bytes: u32,
        ecn: Ecn,
    ) -> Result<(), TestCaseError>;
    /// One dequeue from `tin` with `codel` (the clock has advanced already).
    fn dequeue(&mut self, tin: usize, codel: &CodelParams) -> Result<(), TestCaseError>;
    /// `reset_tin`.
    fn reset(&mut self, tin: usize) -> Result<(), TestCaseError>;
    /// The clock advances by `by`.
    fn advance(&mut self, by: Nanos);
}

/// Carry out `op` step by step: tin and hash indices modulo the setup's counts, a burst
/// as single enqueues, a dequeue count as single dequeues each after its clock step.
pub(crate) fn apply<S: Steps>(driver: &mut S, setup: &Setup, op: &Op) -> Result<(), TestCaseError> {
    let codels = codel_choices();
    let n = setup.tins;
    match *op {
        Op::Enqueue {
            tin,
            hash,
            len_bytes,
            ecn,
            burst,
        } => {
            let h = setup.hashes[hash % setup.hashes.len()];
            for _ in 0..burst {
                driver.enqueue(tin % n, h, len_bytes, ecn)?;
            }
        }
        Op::Dequeue {
            tin,
            codel,
            count,
            step_us,
        } => {
            for _ in 0..count {
                driver.advance(Nanos::from_us(step_us));
                driver.dequeue(tin % n, &codels[codel % codels.len()])?;
            }
        }
        Op::Reset { tin } => driver.reset(tin % n)?,
        Op::Advance { us } => driver.advance(Nanos::from_us(us)),
    }
    Ok(())
}
