//! The loaded kernel fq and CoDel behind the core's `ExternalFq`: one `struct oracle`
//! (kernel-oracle's `shim/oracle.c`: mac80211's `struct fq` with a tin and CoDel state
//! per TXQ, glued as `net/mac80211/tx.c` glues them) per radio.
//!
//! The packets stay on the Rust side, in a slab: the kernel's code queues an `sk_buff`
//! that carries what fq and CoDel read (length, truesize, flow hash, enqueue time, ECN
//! codepoint) and the slab index as its id, and says which ids it dequeued, dropped
//! (overload, CoDel) or purged, in its own order.

use crate::source::{Source, FQ};
use std::ffi::c_void;
use std::path::Path;
use txop_core::aqm::codel::{CodelParams, CodelStats};
use txop_core::mac80211::fq::{Backlog, ExternalFq, FqCode, FqParams, FqStats, TinStats};
use txop_core::mac80211::rate_control::CodeOrigin;
use txop_core::mac80211::txq::TxqId;
use txop_core::packet::Ecn;
use txop_core::{DropReason, Dropped, Nanos, Packet};

/// `CODEL_DISABLED_THRESHOLD` (`include/net/codel.h`).
pub const CODEL_DISABLED_THRESHOLD: u32 = i32::MAX as u32;

/// `struct oracle_codel_params` (`shim/oracle.c`): `struct codel_params` as mac80211
/// fills it, in CoDel time units (ns >> 10).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct KernelCodelParams {
    /// `target`.
    pub target: u32,
    /// `interval`.
    pub interval: u32,
    /// `mtu`: the minimum-backlog guard in bytes (mac80211: 0).
    pub mtu_bytes: u32,
    /// `ecn` (0 or 1).
    pub ecn: u32,
    /// `ce_threshold`; [`CODEL_DISABLED_THRESHOLD`] when off.
    pub ce_threshold: u32,
}

impl KernelCodelParams {
    /// txop's CoDel parameters as the kernel's.
    pub fn of(p: &CodelParams) -> KernelCodelParams {
        KernelCodelParams {
            target: p.target,
            interval: p.interval,
            mtu_bytes: p.mtu_bytes,
            ecn: u32::from(p.ecn),
            ce_threshold: p.ce_threshold.unwrap_or(CODEL_DISABLED_THRESHOLD),
        }
    }
}

/// The kernel's `INET_ECN_*` codepoint of txop's.
pub fn ecn_bits(e: Ecn) -> u32 {
    match e {
        Ecn::NotEct => 0,
        Ecn::Ect1 => 1,
        Ecn::Ect0 => 2,
        Ecn::Ce => 3,
    }
}

/// txop's ECN codepoint of the kernel's.
pub fn ecn_of_bits(b: u32) -> Ecn {
    match b & 3 {
        0 => Ecn::NotEct,
        1 => Ecn::Ect1,
        2 => Ecn::Ect0,
        _ => Ecn::Ce,
    }
}

/// `struct oracle_event`.
#[repr(C)]
struct RawEvent {
    id: u64,
    kind: u32,
    ecn: u32,
}

/// `struct oracle_tin_view`.
#[derive(Default)]
#[repr(C)]
struct TinView {
    backlog_bytes: u32,
    backlog_packets: u32,
    overlimit: u32,
    collisions: u32,
    flows: u32,
    tx_bytes: u32,
    tx_packets: u32,
    new_flows: u32,
    old_flows: u32,
    maxpacket: u32,
    drop_count: u32,
    drop_len: u32,
    ecn_mark: u32,
    ce_mark: u32,
}

/// `struct oracle_fq_view`.
#[derive(Default)]
#[repr(C)]
struct FqView {
    flows_cnt: u32,
    backlog: u32,
    memory_usage: u32,
    overlimit: u32,
    overmemory: u32,
    collisions: u32,
    warnings: u32,
}

type NewFn = unsafe extern "C" fn(u32, u32, u32, u32, u32) -> *mut c_void;
type PtrFn = unsafe extern "C" fn(*mut c_void);
type AddTxqFn = unsafe extern "C" fn(*mut c_void) -> u32;
type EnqueueFn = unsafe extern "C" fn(*mut c_void, u32, u64, u64, u32, u32, u32, u32);
type DequeueFn = unsafe extern "C" fn(
    *mut c_void,
    u32,
    u64,
    *const KernelCodelParams,
    *mut u64,
    *mut u32,
) -> i32;
type ResetFn = unsafe extern "C" fn(*mut c_void, u32);
type EventsFn = unsafe extern "C" fn(*const c_void, *mut u32) -> *const RawEvent;
type TinFn = unsafe extern "C" fn(*const c_void, u32, *mut TinView);
type FqFn = unsafe extern "C" fn(*const c_void, *mut FqView);
type CloneFn = unsafe extern "C" fn(*const c_void) -> *mut c_void;

/// The shim's C API (`shim/oracle.c`), looked up in the loaded object.
struct Api {
    new: NewFn,
    free: PtrFn,
    add_txq: AddTxqFn,
    enqueue: EnqueueFn,
    dequeue: DequeueFn,
    reset_tin: ResetFn,
    events: EventsFn,
    clear_events: PtrFn,
    tin: TinFn,
    fq: FqFn,
    clone: CloneFn,
}

/// The kernel's fq and CoDel, built and loaded: makes one fq per radio. Lives as long
/// as the process (the object is never unloaded).
pub struct KernelFqCode {
    origin: CodeOrigin,
    api: Api,
}

impl KernelFqCode {
    /// Build (or find in the cache) and load the code of `src` (`None`: the tarball).
    pub(crate) fn build(src: Option<&Path>) -> Result<&'static KernelFqCode, String> {
        let source = Source::read(&FQ, src)?;
        let (object, fnv64) = source.build()?;
        let lib = crate::load(&object)?;
        let api = Api {
            new: crate::sym(lib, &object, "oracle_new")?,
            free: crate::sym(lib, &object, "oracle_free")?,
            add_txq: crate::sym(lib, &object, "oracle_add_txq")?,
            enqueue: crate::sym(lib, &object, "oracle_enqueue")?,
            dequeue: crate::sym(lib, &object, "oracle_dequeue")?,
            reset_tin: crate::sym(lib, &object, "oracle_reset_tin")?,
            events: crate::sym(lib, &object, "oracle_events")?,
            clear_events: crate::sym(lib, &object, "oracle_clear_events")?,
            tin: crate::sym(lib, &object, "oracle_tin")?,
            fq: crate::sym(lib, &object, "oracle_fq")?,
            clone: crate::sym(lib, &object, "oracle_clone")?,
        };
        Ok(Box::leak(Box::new(KernelFqCode {
            origin: CodeOrigin {
                unit: FQ.name,
                path: source.path,
                version: source.version,
                fnv64: format!("{fnv64:016x}"),
            },
            api,
        })))
    }
}

impl FqCode for KernelFqCode {
    fn origin(&self) -> &CodeOrigin {
        &self.origin
    }

    /// `ieee80211_txq_setup_flows` with txop's limits; a quantum of 0 is given as 1,
    /// as txop raises it (kernel-oracle.md, "quantum 0"), and a memory limit above the
    /// kernel's `u32` as `u32::MAX`.
    fn fq(&'static self, params: FqParams) -> Box<dyn ExternalFq> {
        // SAFETY: plain values in; the pointer is owned by the KernelFq.
        let raw = unsafe {
            (self.api.new)(
                params.flows.max(1),
                params.quantum_bytes.max(1),
                params.limit_packets,
                u32::try_from(params.memory_limit_bytes).unwrap_or(u32::MAX),
                0,
            )
        };
        assert!(!raw.is_null(), "fq_init: out of memory");
        Box::new(KernelFq {
            code: self,
            raw,
            packets: Vec::new(),
            free: Vec::new(),
            overload_drops_by_tin: Vec::new(),
            overload_drops: 0,
        })
    }
}

/// One radio's `struct oracle`, and the packets it holds.
struct KernelFq {
    code: &'static KernelFqCode,
    raw: *mut c_void,
    /// The queued packets by id (the slab index), with their tin; `None`: a free slot.
    packets: Vec<Option<(Packet, u32)>>,
    /// Free slots of `packets`.
    free: Vec<u32>,
    /// Per tin, packets the overload loop dropped from it (txop's model extension
    /// [`TinStats::overload_drops`]; the kernel reports each drop, not the count).
    overload_drops_by_tin: Vec<u64>,
    /// Radio-wide, the same.
    overload_drops: u64,
}

// SAFETY: the `struct oracle` is reached only through this value, and each call sets
// the shim's per-thread clock first, so it may move between threads.
unsafe impl Send for KernelFq {}

impl std::fmt::Debug for KernelFq {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelFq")
            .field("origin", &self.code.origin)
            .finish_non_exhaustive()
    }
}

impl KernelFq {
    fn take(&mut self, id: u64) -> (Packet, u32) {
        self.free.push(id as u32);
        self.packets[id as usize]
            .take()
            .expect("the kernel's fq names a packet it holds")
    }

    /// What the code removed other than by dequeue since the last call, in its order:
    /// drops into `drops`, purges into `purged`.
    fn events(&mut self, drops: &mut Vec<Dropped>, mut purged: Option<&mut Vec<Packet>>) {
        let mut n = 0u32;
        // SAFETY: `raw` is live; the array holds `n` events until cleared below.
        let events = unsafe {
            let p = (self.code.api.events)(self.raw, &mut n);
            if n == 0 {
                return;
            }
            std::slice::from_raw_parts(p, n as usize)
                .iter()
                .map(|e| (e.id, e.kind, e.ecn))
                .collect::<Vec<_>>()
        };
        // SAFETY: `raw` is live.
        unsafe { (self.code.api.clear_events)(self.raw) };
        for (id, kind, ecn) in events {
            let (mut packet, tin) = self.take(id);
            packet.ecn = ecn_of_bits(ecn);
            let reason = match kind {
                1 => DropReason::Overlimit,
                2 => DropReason::Overmemory,
                3 => DropReason::Codel,
                _ => {
                    if let Some(p) = purged.as_deref_mut() {
                        p.push(packet);
                    }
                    continue;
                }
            };
            if kind != 3 {
                self.overload_drops += 1;
                self.overload_drops_by_tin[tin as usize] += 1;
            }
            drops.push(Dropped { packet, reason });
        }
    }
}

impl ExternalFq for KernelFq {
    fn add_tin(&mut self) {
        // SAFETY: `raw` is live.
        unsafe { (self.code.api.add_txq)(self.raw) };
        self.overload_drops_by_tin.push(0);
    }

    fn enqueue(&mut self, now: Nanos, tin: TxqId, packet: Packet, drops: &mut Vec<Dropped>) {
        let id = match self.free.pop() {
            Some(i) => i,
            None => {
                self.packets.push(None);
                (self.packets.len() - 1) as u32
            }
        };
        self.packets[id as usize] = Some((packet, tin.index() as u32));
        // SAFETY: `raw` is live and the tin was added.
        unsafe {
            (self.code.api.enqueue)(
                self.raw,
                tin.index() as u32,
                now.as_ns(),
                u64::from(id),
                packet.flow,
                packet.len_bytes,
                packet.truesize_bytes(),
                ecn_bits(packet.ecn),
            )
        };
        self.events(drops, None);
    }

    fn dequeue(
        &mut self,
        now: Nanos,
        tin: TxqId,
        codel: &CodelParams,
        drops: &mut Vec<Dropped>,
    ) -> Option<Packet> {
        let params = KernelCodelParams::of(codel);
        let (mut id, mut ecn) = (0u64, 0u32);
        // SAFETY: `raw` is live, the tin was added, the pointers are to locals.
        let got = unsafe {
            (self.code.api.dequeue)(
                self.raw,
                tin.index() as u32,
                now.as_ns(),
                &params,
                &mut id,
                &mut ecn,
            )
        };
        self.events(drops, None);
        if got == 0 {
            return None;
        }
        let (mut packet, _) = self.take(id);
        packet.ecn = ecn_of_bits(ecn);
        Some(packet)
    }

    fn reset_tin(&mut self, tin: TxqId, purged: &mut Vec<Packet>) {
        // SAFETY: `raw` is live and the tin was added.
        unsafe { (self.code.api.reset_tin)(self.raw, tin.index() as u32) };
        let mut drops = Vec::new();
        self.events(&mut drops, Some(purged));
    }

    fn tin_backlog(&self, tin: TxqId) -> Backlog {
        let v = self.tin_view(tin);
        Backlog {
            packets: v.backlog_packets,
            bytes: u64::from(v.backlog_bytes),
        }
    }

    fn tin_stats(&self, tin: TxqId) -> TinStats {
        let v = self.tin_view(tin);
        TinStats {
            overlimit: u64::from(v.overlimit),
            // The kernel counts `overmemory` only per radio.
            overmemory: 0,
            overload_drops: self.overload_drops_by_tin[tin.index()],
            collisions: u64::from(v.collisions),
            flows: u64::from(v.flows),
            tx_bytes: u64::from(v.tx_bytes),
            tx_packets: u64::from(v.tx_packets),
            codel: CodelStats {
                maxpacket: v.maxpacket,
                drop_count: u64::from(v.drop_count),
                drop_len: u64::from(v.drop_len),
                ecn_mark: u64::from(v.ecn_mark),
                ce_mark: u64::from(v.ce_mark),
            },
        }
    }

    fn stats(&self) -> FqStats {
        let mut v = FqView::default();
        // SAFETY: `raw` is live; `v` is a valid out-pointer.
        unsafe { (self.code.api.fq)(self.raw, &mut v) };
        FqStats {
            backlog_packets: v.backlog,
            memory_usage_bytes: u64::from(v.memory_usage),
            overlimit: u64::from(v.overlimit),
            overmemory: u64::from(v.overmemory),
            overload_drops: self.overload_drops,
            collisions: u64::from(v.collisions),
        }
    }

    fn clone_box(&self) -> Box<dyn ExternalFq> {
        // SAFETY: `raw` is live; the copy is owned by the new value.
        let raw = unsafe { (self.code.api.clone)(self.raw) };
        assert!(!raw.is_null(), "oracle_clone: out of memory");
        Box::new(KernelFq {
            code: self.code,
            raw,
            packets: self.packets.clone(),
            free: self.free.clone(),
            overload_drops_by_tin: self.overload_drops_by_tin.clone(),
            overload_drops: self.overload_drops,
        })
    }
}

impl KernelFq {
    fn tin_view(&self, tin: TxqId) -> TinView {
        let mut v = TinView::default();
        // SAFETY: `raw` is live, the tin was added; `v` is a valid out-pointer.
        unsafe { (self.code.api.tin)(self.raw, tin.index() as u32, &mut v) };
        v
    }
}

impl Drop for KernelFq {
    fn drop(&mut self) {
        // SAFETY: `raw` came from oracle_new or oracle_clone and is freed once.
        unsafe { (self.code.api.free)(self.raw) }
    }
}
