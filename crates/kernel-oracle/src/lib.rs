//! The Linux kernel's own mac80211 fair queuing and CoDel (`include/net/fq_impl.h`,
//! `include/net/codel_impl.h`), compiled at build time from the installed kernel source
//! with a small user-space shim, as an oracle for txop's Rust
//! (`txop_core::mac80211::fq`, `txop_core::aqm::codel`; reference §2.4, §3).
//!
//! `build.rs` extracts the headers from Debian's `linux-source-6.12` tarball (or copies
//! them from the tree `TXOP_KERNEL_SRC` names) into the build directory; `shim/` stands
//! in for the kernel around them (sk_buff, lists, bitmaps, the clock) and re-writes
//! mac80211's glue of `net/mac80211/tx.c` (one `struct fq` per radio, a tin per TXQ,
//! CoDel state per flow and per default flow). [`KernelFq`] is its safe interface: the
//! same operations as `txop_core::mac80211::fq::Fq` (enqueue, dequeue with CoDel,
//! purge) and views of the kernel's state after each. [`minstrel::KernelMinstrel`] does
//! the same for `net/mac80211/rc80211_minstrel_ht.c` and [`airtime::KernelAirtime`] for
//! `net/mac80211/airtime.c` and [`scheduler::KernelScheduler`] for the TXQ scheduler and
//! AQL accounting of `net/mac80211/tx.c` and `sta_info.c` (their own shims in
//! `shim/mac80211/`).
//! Test-only (`publish = false`).

// Without a kernel source the FFI calls are compiled out, and what they would fill stays
// as initialised (the methods are unreachable then: `KernelFq::new` fails).
#![cfg_attr(not(kernel_oracle_built), allow(unused_mut, dead_code))]

pub mod airtime;
pub mod minstrel;
pub mod scheduler;

use std::fmt;

/// Which kernel code this crate was built from: the tarball or tree, its version and a
/// hash (FNV-1a 64) of the files compiled; `none` without a source.
pub const SOURCE: &str = env!("KERNEL_ORACLE_SOURCE");

/// The kernel's `INET_ECN_*` codepoints (the low two bits of the IPv4 TOS byte).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum EcnBits {
    /// `INET_ECN_NOT_ECT`.
    NotEct = 0,
    /// `INET_ECN_ECT_1`.
    Ect1 = 1,
    /// `INET_ECN_ECT_0`.
    Ect0 = 2,
    /// `INET_ECN_CE`.
    Ce = 3,
}

impl EcnBits {
    fn from_bits(b: u32) -> EcnBits {
        match b & 3 {
            0 => EcnBits::NotEct,
            1 => EcnBits::Ect1,
            2 => EcnBits::Ect0,
            _ => EcnBits::Ce,
        }
    }
}

/// Why a packet left the kernel's fq other than by dequeue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Removal {
    /// `fq_tin_enqueue`'s overload loop, a pass the packet limit caused.
    Overlimit,
    /// The same, a pass the memory limit caused (`fq->overmemory` counts it).
    Overmemory,
    /// `codel_dequeue` dropped it.
    Codel,
    /// `fq_tin_reset` (`ieee80211_txq_purge`) removed it.
    Purge,
}

/// One packet that left other than by dequeue, in the kernel's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    /// The id given to [`KernelFq::enqueue`].
    pub id: u64,
    /// Why it left.
    pub removal: Removal,
    /// Its ECN codepoint when it left.
    pub ecn: EcnBits,
}

/// A dequeued packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dequeued {
    /// The id given to [`KernelFq::enqueue`].
    pub id: u64,
    /// Its ECN codepoint (CoDel may have set CE).
    pub ecn: EcnBits,
}

/// `struct codel_params` as mac80211 fills it (`ce_threshold_mask` 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct CodelParams {
    /// `target`, in CoDel time units (ns >> 10).
    pub target: u32,
    /// `interval`, in CoDel time units.
    pub interval: u32,
    /// `mtu`: the minimum-backlog guard in bytes (mac80211: 0).
    pub mtu_bytes: u32,
    /// `ecn`: mark ECN-capable packets instead of dropping them (0 or 1).
    pub ecn: u32,
    /// `ce_threshold` in CoDel time units; `CODEL_DISABLED_THRESHOLD` is `i32::MAX`.
    pub ce_threshold: u32,
}

/// `CODEL_DISABLED_THRESHOLD` (`include/net/codel.h`).
pub const CODEL_DISABLED_THRESHOLD: u32 = i32::MAX as u32;

/// `struct codel_vars`, widened to `u32` fields.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct CodelVars {
    /// `count`.
    pub count: u32,
    /// `lastcount`.
    pub lastcount: u32,
    /// `dropping` (0 or 1).
    pub dropping: u32,
    /// `rec_inv_sqrt`.
    pub rec_inv_sqrt: u32,
    /// `first_above_time`.
    pub first_above_time: u32,
    /// `drop_next`.
    pub drop_next: u32,
    /// `ldelay`.
    pub ldelay: u32,
}

/// One `struct fq_flow` and its CoDel state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct FlowView {
    /// The owning TXQ (`flow->tin`), or -1.
    pub tin: i32,
    /// `flow->backlog` in bytes.
    pub backlog_bytes: u32,
    /// Packets queued.
    pub packets: u32,
    /// On `new_flows` or `old_flows` (0 or 1).
    pub listed: u32,
    /// `flow->deficit`.
    pub deficit: i32,
    /// Its CoDel state.
    pub cvars: CodelVars,
}

/// One `struct fq_tin` with its TXQ's CoDel statistics (`txqi->cstats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct TinView {
    /// `backlog_bytes`.
    pub backlog_bytes: u32,
    /// `backlog_packets`.
    pub backlog_packets: u32,
    /// `overlimit`: overload passes that dropped from this tin.
    pub overlimit: u32,
    /// `collisions`.
    pub collisions: u32,
    /// `flows`.
    pub flows: u32,
    /// `tx_bytes`.
    pub tx_bytes: u32,
    /// `tx_packets`.
    pub tx_packets: u32,
    /// Flows on `new_flows`.
    pub new_flows: u32,
    /// Flows on `old_flows`.
    pub old_flows: u32,
    /// `cstats.maxpacket`.
    pub maxpacket: u32,
    /// `cstats.drop_count`.
    pub drop_count: u32,
    /// `cstats.drop_len`.
    pub drop_len: u32,
    /// `cstats.ecn_mark`.
    pub ecn_mark: u32,
    /// `cstats.ce_mark`.
    pub ce_mark: u32,
}

/// `struct fq`'s counters, and how many `WARN_ON_ONCE` fired.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct FqView {
    /// `flows_cnt`.
    pub flows_cnt: u32,
    /// `backlog` (packets over all tins).
    pub backlog: u32,
    /// `memory_usage` (Σ truesize).
    pub memory_usage: u32,
    /// `overlimit` (overload passes).
    pub overlimit: u32,
    /// `overmemory`.
    pub overmemory: u32,
    /// `collisions`.
    pub collisions: u32,
    /// `WARN_ON_ONCE` conditions that held on this thread since [`KernelFq::new`].
    pub warnings: u32,
}

/// The kernel source was not found at build time (the message says how to install it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unavailable(pub &'static str);

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for Unavailable {}

/// `fq_init`'s limits for [`KernelFq::new`] (the kernel keeps them in `u32`s).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FqLimits {
    /// `fq_init(fq, flows)` (0 becomes 1).
    pub flows: u32,
    /// `fq->quantum`.
    pub quantum_bytes: u32,
    /// `fq->limit`.
    pub limit_packets: u32,
    /// `fq->memory_limit`.
    pub memory_limit_bytes: u32,
}

#[cfg(kernel_oracle_built)]
mod ffi {
    use super::{CodelParams, FlowView, FqView, TinView};

    #[repr(C)]
    pub(crate) struct Oracle {
        _opaque: [u8; 0],
    }

    #[repr(C)]
    pub(crate) struct RawEvent {
        pub(crate) id: u64,
        pub(crate) kind: u32,
        pub(crate) ecn: u32,
    }

    extern "C" {
        pub(crate) fn oracle_new(
            flows: u32,
            quantum: u32,
            limit: u32,
            memory_limit: u32,
            ntxqs: u32,
        ) -> *mut Oracle;
        pub(crate) fn oracle_free(o: *mut Oracle);
        #[allow(clippy::too_many_arguments)]
        pub(crate) fn oracle_enqueue(
            o: *mut Oracle,
            txq: u32,
            now_ns: u64,
            id: u64,
            hash: u32,
            len: u32,
            truesize: u32,
            ecn: u32,
        );
        pub(crate) fn oracle_dequeue(
            o: *mut Oracle,
            txq: u32,
            now_ns: u64,
            p: *const CodelParams,
            id: *mut u64,
            ecn: *mut u32,
        ) -> i32;
        pub(crate) fn oracle_reset_tin(o: *mut Oracle, txq: u32);
        pub(crate) fn oracle_events(o: *const Oracle, n: *mut u32) -> *const RawEvent;
        pub(crate) fn oracle_clear_events(o: *mut Oracle);
        pub(crate) fn oracle_flow(o: *const Oracle, idx: u32, v: *mut FlowView);
        pub(crate) fn oracle_default_flow(o: *const Oracle, txq: u32, v: *mut FlowView);
        pub(crate) fn oracle_tin(o: *const Oracle, txq: u32, v: *mut TinView);
        pub(crate) fn oracle_fq(o: *const Oracle, v: *mut FqView);
    }
}

/// The kernel's fq with `txqs` tins, as mac80211 sets it up. Not `Send`: the shim's
/// clock and warning counter are per thread.
#[cfg(kernel_oracle_built)]
pub struct KernelFq {
    raw: *mut ffi::Oracle,
    txqs: u32,
    events: Vec<Event>,
}

/// Without a kernel source: never constructed ([`KernelFq::new`] fails).
#[cfg(not(kernel_oracle_built))]
pub struct KernelFq {
    txqs: u32,
    events: Vec<Event>,
}

impl KernelFq {
    /// `ieee80211_txq_setup_flows` with `limits` and `txqs` TXQs, or why the kernel code
    /// is not available.
    pub fn new(limits: FqLimits, txqs: u32) -> Result<KernelFq, Unavailable> {
        #[cfg(kernel_oracle_built)]
        {
            // SAFETY: plain values in; the pointer is owned by the KernelFq.
            let raw = unsafe {
                ffi::oracle_new(
                    limits.flows,
                    limits.quantum_bytes,
                    limits.limit_packets,
                    limits.memory_limit_bytes,
                    txqs,
                )
            };
            assert!(!raw.is_null(), "fq_init failed");
            Ok(KernelFq {
                raw,
                txqs,
                events: Vec::new(),
            })
        }
        #[cfg(not(kernel_oracle_built))]
        {
            let _ = (limits, txqs);
            Err(Unavailable(env!("KERNEL_ORACLE_MISSING")))
        }
    }

    fn check_txq(&self, txq: u32) {
        assert!(txq < self.txqs, "TXQ {txq} of {}", self.txqs);
    }

    /// `ieee80211_txq_enqueue` at `now_ns` of a packet with the skb hash `hash`.
    /// Returns what the overload loop removed.
    #[allow(clippy::too_many_arguments)]
    pub fn enqueue(
        &mut self,
        txq: u32,
        now_ns: u64,
        id: u64,
        hash: u32,
        len_bytes: u32,
        truesize_bytes: u32,
        ecn: EcnBits,
    ) -> &[Event] {
        self.check_txq(txq);
        #[cfg(kernel_oracle_built)]
        // SAFETY: `raw` is live and `txq` in range.
        unsafe {
            ffi::oracle_enqueue(
                self.raw,
                txq,
                now_ns,
                id,
                hash,
                len_bytes,
                truesize_bytes,
                ecn as u32,
            );
        }
        let _ = (now_ns, id, hash, len_bytes, truesize_bytes, ecn);
        self.take_events()
    }

    /// `fq_tin_dequeue` of TXQ `txq` at `now_ns` with CoDel `params`: the packet, if
    /// any, and what CoDel dropped on the way.
    pub fn dequeue(
        &mut self,
        txq: u32,
        now_ns: u64,
        params: &CodelParams,
    ) -> (Option<Dequeued>, &[Event]) {
        self.check_txq(txq);
        let mut got = None;
        #[cfg(kernel_oracle_built)]
        {
            let (mut id, mut ecn) = (0u64, 0u32);
            // SAFETY: `raw` is live, the pointers are to locals.
            let n =
                unsafe { ffi::oracle_dequeue(self.raw, txq, now_ns, params, &mut id, &mut ecn) };
            if n != 0 {
                got = Some(Dequeued {
                    id,
                    ecn: EcnBits::from_bits(ecn),
                });
            }
        }
        let _ = (now_ns, params);
        (got, self.take_events())
    }

    /// `ieee80211_txq_purge` (`fq_tin_reset`): the packets removed, in order.
    pub fn reset_tin(&mut self, txq: u32) -> &[Event] {
        self.check_txq(txq);
        #[cfg(kernel_oracle_built)]
        // SAFETY: `raw` is live and `txq` in range.
        unsafe {
            ffi::oracle_reset_tin(self.raw, txq);
        }
        self.take_events()
    }

    fn take_events(&mut self) -> &[Event] {
        self.events.clear();
        #[cfg(kernel_oracle_built)]
        // SAFETY: the C side returns its event array and length; copied before clearing.
        unsafe {
            let mut n = 0u32;
            let p = ffi::oracle_events(self.raw, &mut n);
            if n > 0 {
                for e in std::slice::from_raw_parts(p, n as usize) {
                    let removal = match e.kind {
                        1 => Removal::Overlimit,
                        2 => Removal::Overmemory,
                        3 => Removal::Codel,
                        _ => Removal::Purge,
                    };
                    self.events.push(Event {
                        id: e.id,
                        removal,
                        ecn: EcnBits::from_bits(e.ecn),
                    });
                }
            }
            ffi::oracle_clear_events(self.raw);
        }
        &self.events
    }

    /// Global flow `idx` (`fq->flows[idx]`, `local->cvars[idx]`).
    pub fn flow(&self, idx: u32) -> FlowView {
        let mut v = FlowView::default();
        assert!(idx < self.fq().flows_cnt, "flow {idx} out of range");
        #[cfg(kernel_oracle_built)]
        // SAFETY: `raw` is live, `idx` in range.
        unsafe {
            ffi::oracle_flow(self.raw, idx, &mut v);
        }
        v
    }

    /// TXQ `txq`'s default flow (`tin->default_flow`, `txqi->def_cvars`).
    pub fn default_flow(&self, txq: u32) -> FlowView {
        self.check_txq(txq);
        let mut v = FlowView::default();
        #[cfg(kernel_oracle_built)]
        // SAFETY: `raw` is live, `txq` in range.
        unsafe {
            ffi::oracle_default_flow(self.raw, txq, &mut v);
        }
        v
    }

    /// TXQ `txq`'s tin and CoDel statistics.
    pub fn tin(&self, txq: u32) -> TinView {
        self.check_txq(txq);
        let mut v = TinView::default();
        #[cfg(kernel_oracle_built)]
        // SAFETY: `raw` is live, `txq` in range.
        unsafe {
            ffi::oracle_tin(self.raw, txq, &mut v);
        }
        v
    }

    /// `struct fq`'s counters.
    pub fn fq(&self) -> FqView {
        let mut v = FqView::default();
        #[cfg(kernel_oracle_built)]
        // SAFETY: `raw` is live.
        unsafe {
            ffi::oracle_fq(self.raw, &mut v);
        }
        v
    }
}

#[cfg(kernel_oracle_built)]
impl Drop for KernelFq {
    fn drop(&mut self) {
        // SAFETY: `raw` came from oracle_new and is freed once.
        unsafe { ffi::oracle_free(self.raw) }
    }
}
