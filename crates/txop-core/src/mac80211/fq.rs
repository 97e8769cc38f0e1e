//! mac80211 fair queuing: one [`Fq`] per radio (`local->fq`), one tin per TXQ, DRR++
//! with CoDel per flow (reference §2.3 and §3; `include/net/fq.h`,
//! `include/net/fq_impl.h`, `net/mac80211/tx.c`).
//!
//! # Model
//!
//! * A fixed array of `flows` (4096) flows is shared by every tin (TXQ) of the radio.
//!   A packet's flow is `reciprocal_scale(hash, flows)` ([`flow_index`]); if that flow
//!   is owned by another tin, the packet goes to its own tin's private default flow
//!   instead and `collisions` counts it (`fq_flow_classify`, §3.3). A tin owns a flow
//!   from the enqueue that finds it unowned until `fq_tin_dequeue` removes it from the
//!   tin's lists after it drained (§3.5); a flow emptied by overload drops stays owned
//!   while it is still listed.
//! * Enqueue (`fq_tin_enqueue`, §3.4) stamps [`Packet::queued_at`] (mac80211's
//!   `control.enqueue_time`, set in `ieee80211_txq_enqueue`), appends the packet to its
//!   flow, puts an unlisted flow at the tail of `new_flows` with `deficit = quantum`,
//!   then runs the overload loop: `while backlog > limit || memory_usage >
//!   memory_limit`, drop from the head of the globally fattest flow (largest byte
//!   backlog over all tins, default flows included) per [`OverloadPolicy`].
//! * Dequeue (`fq_tin_dequeue`, §3.5) is DRR++ over the tin's `new_flows` then
//!   `old_flows`, with Linux CoDel ([`CodelVars::dequeue`]) run on the chosen flow.
//!   Every global flow has its own [`CodelVars`] (`local->cvars[4096]`, inherited by
//!   whichever tin owns the flow next); each tin's default flow has its own
//!   (`txqi->def_cvars`). CoDel statistics are per tin (`txqi->cstats`).
//!
//! # Units and judgement calls
//!
//! * **Bytes are [`Packet::len_bytes`]**, standing in for `skb->len` (which in the
//!   kernel is the encapsulated 802.11/802.3 frame, A-MSDU included, §3.5). Callers that
//!   want header overhead counted should fold it into `len_bytes`.
//! * **Memory is [`Packet::truesize_bytes`]** (`skb->truesize`), recomputed from the
//!   length at removal, so a packet must not change length while queued.
//! * **The hash is [`Packet::flow`]** (`skb_get_hash`). Old kernels perturbed it with
//!   `fq->perturbation`; a caller modelling them can perturb `flow` itself.
//! * CoDel parameters come from the caller on every dequeue (per TXQ or per station,
//!   §2.2); [`CodelParams::mac80211`] has mac80211's `mtu` guard of 0.
//! * Fragments/management frames (`txqi->frags`, TID 16) bypass fq and are not
//!   modelled here.
//! * Counters are `u64` (the kernel's are `u32` and wrap).
//! * Overload counters count **passes** of the overload loop, as the kernel does (with
//!   [`OverloadPolicy::HalfFromFattest`] one pass drops up to 32 packets);
//!   [`TinStats::overload_drops`] / [`FqStats::overload_drops`] count packets.
//!   `overmemory` also exists per tin here (the kernel keeps it only in `struct fq`).
//! * Zero-length packets add nothing to a flow's byte backlog, so (as in the kernel's
//!   strict `cur_len > len` scan) such a flow is never chosen as the fattest.
//!
//! # Fattest-flow tie-breaks (deterministic, and the kernel's own)
//!
//! * [`OverloadPolicy::HalfFromFattest`] (≥5.12, `fq_find_fattest_flow`): global flows
//!   are scanned in index order, then the default flows of backlogged tins in the order
//!   of `fq->tin_backlog` (most recently backlogged first, `list_add`); a candidate
//!   replaces the best only if strictly larger. So ties go to the lowest global index,
//!   global flows beat default flows, and among default flows the tin whose default flow
//!   became non-empty most recently wins.
//! * [`OverloadPolicy::OneFromFattest`] (≤5.11): the kernel kept `fq->backlogs` sorted
//!   by byte backlog (`fq_recalc_backlog` on growth moves a flow in front of the flows
//!   with an equal backlog, `fq_rejigger_backlog` on shrinking moves it behind them) and
//!   took the first entry. Here the same order is reproduced with a linear scan and a
//!   per-flow stamp: among equal backlogs, flows that *grew* into the value rank first
//!   (most recent first), then flows that *shrank* into it (least recent first). The
//!   chosen flow is exactly the head of the kernel's sorted list.
//! * The 4.8–4.9 code had no memory limit and a single `if` instead of the loop; since
//!   one enqueue adds one packet, that is [`OverloadPolicy::OneFromFattest`] with
//!   `memory_limit_bytes = u64::MAX`.
//!
//! # Allocation
//!
//! A flow's state (and its CoDel state) is created the first time a packet hashes to
//! it: [`Fq::new`] and [`Fq::add_tin`] only size a table from flow slot to state (4
//! bytes a slot) and the non-empty bitmap. A station's radio uses a handful of its 4096
//! flows, and building every radio's 4096 flows up front cost more than a simulated
//! second of traffic in a 16-station cell. Which state a slot got is invisible: every
//! decision goes by slot (the bitmap's order) or by list order, as in the kernel.
//! Packets live in one slab of nodes with intrusive links (a flow is a singly linked
//! FIFO of slab indices; `new_flows`/`old_flows` are intrusive singly linked lists of
//! flow states). Freed nodes are reused, so after warm-up (the slab has reached the
//! peak backlog, at most `limit + 1` packets, and every flow in use has its state)
//! enqueue and dequeue do not allocate, apart from pushing to the caller's `drops`
//! vector.

use crate::aqm::codel::{CodelParams, CodelQueue, CodelStats, CodelVars};
use crate::mac80211::rate_control::CodeOrigin;
use crate::mac80211::txq::{TxqId, TxqSet};
use crate::packet::{DropReason, Dropped, Packet};
use crate::Nanos;

/// `fq_init(fq, 4096)` in `ieee80211_txq_setup_flows` (reference §3.2).
pub const DEFAULT_FLOWS: u32 = 4096;
/// `fq->quantum` default, 300 bytes (`fq_init`, reference §3.2).
pub const DEFAULT_QUANTUM_BYTES: u32 = 300;
/// `fq->limit` default, 8192 packets across all TXQs of the radio (reference §3.2).
pub const DEFAULT_LIMIT_PACKETS: u32 = 8192;
/// `fq->memory_limit` default, 16 MiB of truesize (reference §3.2).
pub const DEFAULT_MEMORY_LIMIT_BYTES: u64 = 16 << 20;
/// `fq->memory_limit` when no band advertises VHT, 4 MiB (`ieee80211_txq_setup_flows`,
/// reference §3.2).
pub const NON_VHT_MEMORY_LIMIT_BYTES: u64 = 4 << 20;
/// Upper bound of one ≥5.12 overload pass (`fq_flow_drop`: `min(32, qlen / 2)`).
pub const DROP_BATCH_MAX: u32 = 32;

const NIL: u32 = u32::MAX;

/// `struct fq` limits (reference §3.2). All of them can be overridden in the kernel
/// through nl80211 (`txq_limit`, `txq_memory_limit`, `txq_quantum`) or debugfs `aqm`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FqParams {
    /// Number of shared flows (`flows_cnt`, 4096). Values below 1 are treated as 1.
    pub flows: u32,
    /// DRR quantum in bytes (300). A quantum of 0 would make `fq_tin_dequeue` spin
    /// forever on a flow with a non-positive deficit; it is treated as 1.
    pub quantum_bytes: u32,
    /// Global packet limit across all tins (`fq->limit`, 8192).
    pub limit_packets: u32,
    /// Global truesize limit (`fq->memory_limit`, 16 MiB; 4 MiB without VHT).
    pub memory_limit_bytes: u64,
}

impl Default for FqParams {
    /// The VHT-capable defaults: 4096 flows, quantum 300, 8192 packets, 16 MiB.
    fn default() -> FqParams {
        FqParams {
            flows: DEFAULT_FLOWS,
            quantum_bytes: DEFAULT_QUANTUM_BYTES,
            limit_packets: DEFAULT_LIMIT_PACKETS,
            memory_limit_bytes: DEFAULT_MEMORY_LIMIT_BYTES,
        }
    }
}

impl FqParams {
    /// The defaults for hardware with or without VHT: `ieee80211_txq_setup_flows` drops
    /// the memory limit to 4 MiB when no band advertises VHT (reference §3.2).
    pub fn for_hardware(vht: bool) -> FqParams {
        FqParams {
            memory_limit_bytes: if vht {
                DEFAULT_MEMORY_LIMIT_BYTES
            } else {
                NON_VHT_MEMORY_LIMIT_BYTES
            },
            ..FqParams::default()
        }
    }
}

/// What one pass of the enqueue overload loop drops (reference §3.4). Both loop
/// `while backlog > limit || memory_usage > memory_limit`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum OverloadPolicy {
    /// ≤5.11 (`fq_impl.h` with the backlog-sorted flow list): one packet from the head
    /// of the fattest flow per pass.
    #[default]
    OneFromFattest,
    /// ≥5.12 ("net/fq_impl: bulk-free packets from a flow on overmemory"):
    /// `max(1, min(32, qlen / 2))` packets from the head of the fattest flow per pass
    /// (`fq_flow_drop`).
    HalfFromFattest,
}

/// Per-tin counters (`struct fq_tin` and `txqi->cstats`, reference §3.1, §2.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TinStats {
    /// Overload passes that dropped from one of this tin's flows (`tin->overlimit`).
    pub overlimit: u64,
    /// Of those, passes caused by the memory limit (model extension: the kernel counts
    /// `overmemory` only in `struct fq`).
    pub overmemory: u64,
    /// Packets dropped from this tin by the overload loop (model extension).
    pub overload_drops: u64,
    /// Packets of this tin that hashed to a flow owned by another tin and went to the
    /// default flow (`tin->collisions`).
    pub collisions: u64,
    /// Times this tin took an unowned flow, default flow included (`tin->flows`).
    pub flows: u64,
    /// Bytes dequeued (`tin->tx_bytes`, [`Packet::len_bytes`]).
    pub tx_bytes: u64,
    /// Packets dequeued (`tin->tx_packets`).
    pub tx_packets: u64,
    /// CoDel counters of this TXQ (`txqi->cstats`): `drop_count`, `ecn_mark`, …
    pub codel: CodelStats,
}

/// Radio-wide counters and levels (`struct fq`, reference §3.1, §3.6).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FqStats {
    /// Packets queued over all tins (`fq->backlog`).
    pub backlog_packets: u32,
    /// Truesize bytes queued (`fq->memory_usage`).
    pub memory_usage_bytes: u64,
    /// Overload passes (`fq->overlimit`).
    pub overlimit: u64,
    /// Overload passes caused by the memory limit (`fq->overmemory`).
    pub overmemory: u64,
    /// Packets dropped by the overload loop (model extension).
    pub overload_drops: u64,
    /// Classification collisions (`fq->collisions`).
    pub collisions: u64,
}

/// What a tin or a flow holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Backlog {
    /// Packets queued.
    pub packets: u32,
    /// Their bytes ([`Packet::len_bytes`]).
    pub bytes: u64,
}

/// mac80211's fq and CoDel from outside the core, loaded by the front end: the kernel's
/// own `include/net/fq_impl.h` and `codel_impl.h` built at run time
/// (`crates/txop-kernel`, scenario key `kernel.units = ["fq"]`; issue 28, "bring your
/// patch"). The core only drives it through [`ExternalFq`]; it neither builds nor loads
/// it.
pub trait FqCode: Send + Sync + std::panic::RefUnwindSafe {
    /// Where the code came from (`unit` is `fq`).
    fn origin(&self) -> &CodeOrigin;
    /// `fq_init` plus `ieee80211_txq_setup_flows` with `params` (no tins yet), as
    /// [`Fq::new`] does for txop's own.
    fn fq(&'static self, params: FqParams) -> Box<dyn ExternalFq>;
}

/// A handle on loaded [`FqCode`]: `Copy`, as the code lives as long as the process.
/// Two handles are equal when their code has the same origin.
#[derive(Clone, Copy)]
pub struct ExternalFqCode(pub &'static dyn FqCode);

impl PartialEq for ExternalFqCode {
    fn eq(&self, other: &Self) -> bool {
        self.0.origin() == other.0.origin()
    }
}

impl Eq for ExternalFqCode {}

impl std::fmt::Debug for ExternalFqCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("ExternalFqCode")
            .field(self.0.origin())
            .finish()
    }
}

/// One radio's external fq, driven as [`Fq`] drives its own: the same operations with
/// the same contracts (enqueue stamps nothing: [`Fq`] does; drops and purges are
/// appended in the code's order).
pub trait ExternalFq: Send + std::fmt::Debug {
    /// `fq_tin_init`: the next tin (TXQ `n` for the `n`-th call).
    fn add_tin(&mut self);
    /// `fq_tin_enqueue` of `packet` into `tin`, with the overload loop's drops.
    fn enqueue(&mut self, now: Nanos, tin: TxqId, packet: Packet, drops: &mut Vec<Dropped>);
    /// `fq_tin_dequeue` with CoDel `codel`: the packet (ECN as CoDel left it), with
    /// CoDel's drops; `None` when the tin lists no flow any more.
    fn dequeue(
        &mut self,
        now: Nanos,
        tin: TxqId,
        codel: &CodelParams,
        drops: &mut Vec<Dropped>,
    ) -> Option<Packet>;
    /// `fq_tin_reset`: every packet of the tin, in the code's order.
    fn reset_tin(&mut self, tin: TxqId, purged: &mut Vec<Packet>);
    /// What the tin holds.
    fn tin_backlog(&self, tin: TxqId) -> Backlog;
    /// The tin's counters.
    fn tin_stats(&self, tin: TxqId) -> TinStats;
    /// The radio-wide counters and levels.
    fn stats(&self) -> FqStats;
    /// An independent copy in the same state (a cell is `Clone`).
    fn clone_box(&self) -> Box<dyn ExternalFq>;
}

impl Clone for Box<dyn ExternalFq> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// What [`Fq::new`] builds besides its parameters: the overload policy of txop's own
/// fq, or external code in its place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FqSetup {
    /// The overload policy (txop's own fq; external code has its own).
    pub policy: OverloadPolicy,
    /// External code run in place of txop's Rust (`None`: txop's own).
    pub code: Option<ExternalFqCode>,
}

impl From<OverloadPolicy> for FqSetup {
    fn from(policy: OverloadPolicy) -> FqSetup {
        FqSetup { policy, code: None }
    }
}

/// `reciprocal_scale(hash, flows)` = `(hash × flows) >> 32`: the flow index of a hash
/// (`fq_flow_idx`, reference §3.3).
pub fn flow_index(hash: u32, flows: u32) -> u32 {
    ((hash as u64 * flows as u64) >> 32) as u32
}

/// One `struct fq_flow`: a FIFO of slab nodes plus DRR state.
#[derive(Clone, Debug)]
struct Flow {
    /// The flow slot this is the state of (global flows, then default flows).
    slot: u32,
    /// Head and tail slab node, or NIL.
    head: u32,
    tail: u32,
    qlen: u32,
    /// `flow->backlog`, bytes.
    backlog_bytes: u64,
    /// Signed DRR deficit.
    deficit: i64,
    /// Owning tin index, or NIL (`flow->tin == NULL`).
    owner: u32,
    /// On new_flows or old_flows (`!list_empty(&flow->flowchain)`).
    listed: bool,
    /// Next flow on the same new/old list, or NIL.
    next: u32,
    /// Fattest-flow tie-break stamp (smaller wins), see the module docs.
    tie: i64,
}

impl Flow {
    /// What the flow holds.
    fn backlog(&self) -> Backlog {
        Backlog {
            packets: self.qlen,
            bytes: self.backlog_bytes,
        }
    }

    const EMPTY: Flow = Flow {
        slot: NIL,
        head: NIL,
        tail: NIL,
        qlen: 0,
        backlog_bytes: 0,
        deficit: 0,
        owner: NIL,
        listed: false,
        next: NIL,
        tie: 0,
    };
}

/// An intrusive singly linked list of flows (`tin->new_flows` / `old_flows`), by index
/// into [`Fq::flows`].
#[derive(Clone, Copy, Debug)]
struct FlowList {
    head: u32,
    tail: u32,
}

impl FlowList {
    const EMPTY: FlowList = FlowList {
        head: NIL,
        tail: NIL,
    };

    fn is_empty(&self) -> bool {
        self.head == NIL
    }

    fn push_back(&mut self, flows: &mut [Flow], i: u32) {
        flows[i as usize].next = NIL;
        if self.tail == NIL {
            self.head = i;
        } else {
            flows[self.tail as usize].next = i;
        }
        self.tail = i;
    }

    fn pop_front(&mut self, flows: &mut [Flow]) -> u32 {
        let i = self.head;
        debug_assert_ne!(i, NIL);
        let f = &mut flows[i as usize];
        self.head = f.next;
        f.next = NIL;
        if self.head == NIL {
            self.tail = NIL;
        }
        i
    }
}

#[derive(Clone, Debug)]
struct Tin {
    new_flows: FlowList,
    old_flows: FlowList,
    backlog: Backlog,
    stats: TinStats,
}

/// A queued packet and the next node of its flow (or of the free list).
#[derive(Clone, Debug)]
struct Node {
    packet: Packet,
    next: u32,
    /// The truesize accounted at enqueue: an A-MSDU's head keeps the truesize it had
    /// when the frames after it joined (`ieee80211_amsdu_aggregate` chains them on
    /// `frag_list` without adding theirs), so it is not recomputed from the length.
    truesize: u32,
}

/// The radio-wide state the per-flow operations touch.
#[derive(Clone, Debug)]
struct Core {
    policy: OverloadPolicy,
    nodes: Vec<Node>,
    free: u32,
    backlog_packets: u32,
    memory_usage: u64,
    /// Bit per flow slot (global flows, then one default flow per tin): qlen > 0.
    nonempty: Vec<u64>,
    /// Source of tie-break stamps.
    seq: i64,
    stats: FqStats,
}

impl Core {
    fn set_nonempty(&mut self, slot: u32) {
        self.nonempty[(slot / 64) as usize] |= 1 << (slot % 64);
    }

    fn clear_nonempty(&mut self, slot: u32) {
        self.nonempty[(slot / 64) as usize] &= !(1 << (slot % 64));
    }

    fn next_stamp(&mut self) -> i64 {
        self.seq += 1;
        self.seq
    }

    /// Append `packet` to `flow` and account it (`fq_tin_enqueue` steps 1–2, 4).
    fn push(&mut self, flow: &mut Flow, backlog: &mut Backlog, packet: Packet) {
        let len = packet.len_bytes as u64;
        let truesize = packet.truesize_bytes();
        self.memory_usage += truesize as u64;
        self.backlog_packets += 1;
        backlog.packets += 1;
        backlog.bytes += len;
        let node = Node {
            packet,
            next: NIL,
            truesize,
        };
        let idx = if self.free != NIL {
            let idx = self.free;
            self.free = self.nodes[idx as usize].next;
            self.nodes[idx as usize] = node;
            idx
        } else {
            self.nodes.push(node);
            (self.nodes.len() - 1) as u32
        };
        if flow.tail == NIL {
            flow.head = idx;
        } else {
            self.nodes[flow.tail as usize].next = idx;
        }
        flow.tail = idx;
        if flow.qlen == 0 {
            self.set_nonempty(flow.slot);
            if self.policy == OverloadPolicy::HalfFromFattest {
                // ≥5.12: a default flow joins the head of fq->tin_backlog.
                flow.tie = -self.next_stamp();
            }
        }
        flow.qlen += 1;
        flow.backlog_bytes += len;
        if self.policy == OverloadPolicy::OneFromFattest {
            // ≤5.11 fq_recalc_backlog: in front of the flows with an equal backlog.
            flow.tie = -self.next_stamp();
        }
    }

    /// Remove the head packet of `flow` and account it (`fq_flow_dequeue` with
    /// `fq_adjust_removal`, and ≤5.11 `fq_rejigger_backlog`).
    #[inline(always)]
    fn pop(&mut self, flow: &mut Flow, backlog: &mut Backlog) -> Option<Packet> {
        if flow.head == NIL {
            return None;
        }
        let idx = flow.head;
        let node = &mut self.nodes[idx as usize];
        let len = node.packet.len_bytes as u64;
        let truesize = node.truesize as u64;
        flow.head = node.next;
        node.next = self.free;
        self.free = idx;
        if flow.head == NIL {
            flow.tail = NIL;
        }
        flow.qlen -= 1;
        flow.backlog_bytes -= len;
        backlog.packets -= 1;
        backlog.bytes -= len;
        self.backlog_packets -= 1;
        self.memory_usage -= truesize;
        if flow.qlen == 0 {
            self.clear_nonempty(flow.slot);
        } else if self.policy == OverloadPolicy::OneFromFattest {
            // ≤5.11 fq_rejigger_backlog: behind the flows with an equal backlog.
            flow.tie = self.next_stamp();
        }
        // Copied out of its node (now on the free list) once, as it is returned.
        Some(self.nodes[idx as usize].packet)
    }
}

/// One flow seen by CoDel: `fq_tin_dequeue_func`'s view of a flow in mac80211.
struct FlowQueue<'a> {
    core: &'a mut Core,
    flow: &'a mut Flow,
    backlog: &'a mut Backlog,
    drops: &'a mut Vec<Dropped>,
}

impl CodelQueue for FlowQueue<'_> {
    #[inline(always)]
    fn dequeue(&mut self) -> Option<Packet> {
        self.core.pop(self.flow, self.backlog)
    }

    fn backlog_bytes(&self) -> u32 {
        self.flow.backlog_bytes.min(u32::MAX as u64) as u32
    }

    fn drop(&mut self, packet: Packet) {
        // codel_drop_func → ieee80211_free_txskb.
        self.drops.push(Dropped {
            packet,
            reason: DropReason::Codel,
        });
    }
}

/// mac80211's `struct fq` with its tins (one per TXQ): the radio-wide flow queue
/// (reference §3). See the module documentation for the model and its judgement calls.
#[derive(Clone, Debug)]
pub struct Fq {
    params: FqParams,
    /// Per flow slot (global flows `0..params.flows`, then the default flow of tin `t`
    /// at `params.flows + t`): the index of its state in `flows`, or NIL while no
    /// packet has used it (an unused flow is [`Flow::EMPTY`] with fresh CoDel state).
    state_of: Vec<u32>,
    /// The states of the slots used so far, in the order they were first used.
    flows: Vec<Flow>,
    /// CoDel state, parallel to `flows` (`local->cvars[]`, then `txqi->def_cvars`).
    cvars: Vec<CodelVars>,
    tins: Vec<Tin>,
    /// The tins that list a flow on `new_flows` or `old_flows` (the others are idle:
    /// a dequeue returns nothing and changes nothing).
    busy: TxqSet,
    core: Core,
    /// External code run in place of the state above ([`FqSetup::code`]), which then
    /// stays empty but for `busy`, kept here for both (the per-flow inspection
    /// accessors, [`Fq::flow_owner`] to [`Fq::default_flow_codel`], then report that
    /// empty state).
    // perf: an `Option` tested per call, not a trait object, on txop's own path.
    external: Option<Box<dyn ExternalFq>>,
}

impl Fq {
    /// `fq_init` plus `ieee80211_txq_setup_flows`: an empty fq with `params.flows`
    /// unowned flows and no tins. `flows` and `quantum_bytes` below 1 are raised to 1.
    /// `setup` is the overload policy, or ([`FqSetup`]) external code to run instead,
    /// built here with the parameters as given.
    pub fn new(params: FqParams, setup: impl Into<FqSetup>) -> Fq {
        let FqSetup { policy, code } = setup.into();
        let external = code.map(|c| c.0.fq(params));
        let params = FqParams {
            flows: params.flows.max(1),
            quantum_bytes: params.quantum_bytes.max(1),
            ..params
        };
        let n = params.flows as usize;
        Fq {
            params,
            state_of: vec![NIL; n],
            flows: Vec::new(),
            cvars: Vec::new(),
            tins: Vec::new(),
            busy: TxqSet::default(),
            core: Core {
                policy,
                nodes: Vec::new(),
                free: NIL,
                backlog_packets: 0,
                memory_usage: 0,
                nonempty: vec![0; n.div_ceil(64)],
                seq: 0,
                stats: FqStats::default(),
            },
            external,
        }
    }

    /// External code ([`FqSetup::code`]) runs in place of txop's own.
    pub fn runs_external(&self) -> bool {
        self.external.is_some()
    }

    /// The parameters in use (after the clamping described in [`Fq::new`]).
    pub fn params(&self) -> FqParams {
        self.params
    }

    /// The overload policy in use.
    pub fn policy(&self) -> OverloadPolicy {
        self.core.policy
    }

    /// `fq_tin_init`: a new tin (TXQ) with empty lists and its own default flow and
    /// default-flow CoDel state (reference §3.1). Tins are the node's TXQs in their
    /// numbering: the `n`-th tin added is TXQ `n` ([`TxqId::from_index`]), so add
    /// [`NUM_TIDS`](crate::mac80211::txq::NUM_TIDS) per link, links in order.
    /// Allocates; do it at setup, not per packet.
    pub fn add_tin(&mut self) -> TxqId {
        let t = self.tins.len() as u32;
        self.tins.push(Tin {
            new_flows: FlowList::EMPTY,
            old_flows: FlowList::EMPTY,
            backlog: Backlog::default(),
            stats: TinStats::default(),
        });
        self.busy.grow(self.tins.len());
        if let Some(e) = self.external.as_mut() {
            e.add_tin();
        }
        self.state_of.push(NIL);
        let slots = self.state_of.len();
        if self.core.nonempty.len() * 64 < slots {
            self.core.nonempty.push(0);
        }
        TxqId::from_index(t as usize)
    }

    /// Number of tins added so far.
    pub fn tin_count(&self) -> u32 {
        self.tins.len() as u32
    }

    fn default_slot(&self, tin: usize) -> u32 {
        self.params.flows + tin as u32
    }

    /// The state of flow `slot`, if a packet has used it.
    fn flow(&self, slot: u32) -> Option<&Flow> {
        match self.state_of[slot as usize] {
            NIL => None,
            i => Some(&self.flows[i as usize]),
        }
    }

    /// The index of flow `slot`'s state in `flows`, created on first use.
    fn state_index(&mut self, slot: u32) -> u32 {
        let i = self.state_of[slot as usize];
        if i != NIL {
            return i;
        }
        let i = self.flows.len() as u32;
        self.flows.push(Flow {
            slot,
            ..Flow::EMPTY
        });
        self.cvars.push(CodelVars::default());
        self.state_of[slot as usize] = i;
        i
    }

    /// `fq_flow_classify` (§3.3): the slot of the flow a packet hashed `hash` goes to in
    /// tin `t`: its own flow, or the tin's default flow (a collision, counted) if
    /// another tin owns that flow.
    #[inline(always)]
    fn classify(&mut self, t: usize, hash: u32) -> u32 {
        let slot = flow_index(hash, self.params.flows);
        let owner = self.flow(slot).map_or(NIL, |f| f.owner);
        if owner != NIL && owner != t as u32 {
            self.tins[t].stats.collisions += 1;
            self.core.stats.collisions += 1;
            return self.default_slot(t);
        }
        slot
    }

    /// `ieee80211_txq_enqueue` → `fq_tin_enqueue` (reference §3.3, §3.4): stamp
    /// `packet.queued_at = now`, classify by `packet.flow`, append to the flow, list a
    /// new flow at the tail of `new_flows` with `deficit = quantum`, then run the
    /// overload loop. Packets the loop drops (from any tin) are appended to `drops`
    /// with [`DropReason::Overmemory`] when the memory limit caused the pass, else
    /// [`DropReason::Overlimit`]; the dropped packet may be the one just enqueued.
    ///
    /// Panics if `tin` did not come from this fq's [`Fq::add_tin`].
    pub fn enqueue(
        &mut self,
        now: Nanos,
        tin: TxqId,
        mut packet: Packet,
        drops: &mut Vec<Dropped>,
    ) {
        let t = tin.index();
        assert!(t < self.tins.len(), "unknown tin {t}");
        packet.queued_at = now;
        if self.external.is_some() {
            return self.enqueue_external(now, tin, packet, drops);
        }

        let slot = self.classify(t, packet.flow);
        let i = self.state_index(slot);
        let tin_state = &mut self.tins[t];
        let flow = &mut self.flows[i as usize];
        if flow.owner == NIL {
            tin_state.stats.flows += 1;
        }
        flow.owner = t as u32;
        self.core.push(flow, &mut tin_state.backlog, packet);
        if !flow.listed {
            flow.deficit = self.params.quantum_bytes as i64;
            flow.listed = true;
            tin_state.new_flows.push_back(&mut self.flows, i);
            self.busy.insert(tin);
        }

        self.overload(drops);
    }

    /// [`Fq::enqueue`] into the external code: the tin lists a flow afterwards.
    #[cold]
    #[inline(never)]
    fn enqueue_external(
        &mut self,
        now: Nanos,
        tin: TxqId,
        packet: Packet,
        drops: &mut Vec<Dropped>,
    ) {
        if let Some(e) = self.external.as_mut() {
            e.enqueue(now, tin, packet, drops);
            self.busy.insert(tin);
        }
    }

    /// [`Fq::dequeue`] from the external code: a tin that gives nothing lists no flow
    /// any more (`fq_tin_dequeue` returns NULL only then).
    #[cold]
    #[inline(never)]
    fn dequeue_external(
        &mut self,
        now: Nanos,
        tin: TxqId,
        codel: &CodelParams,
        drops: &mut Vec<Dropped>,
    ) -> Option<Packet> {
        let e = self.external.as_mut()?;
        let p = e.dequeue(now, tin, codel, drops);
        if p.is_none() {
            self.busy.remove(tin);
        }
        p
    }

    /// `ieee80211_amsdu_aggregate`'s access to fq (§16.2): classify `packet` into
    /// `tin` as an enqueue would (`fq_flow_classify`, counting a collision as the kernel
    /// does, a second time if the packet is then enqueued), and offer the tail packet
    /// of that flow to `join`. If `join` returns the tail's new length, the tail takes
    /// it (the flow's and tin's byte backlogs follow; packet counts and memory do not,
    /// as in the kernel) and this returns true. A flow with no packet refuses.
    ///
    /// External code ([`FqSetup::code`]) has no such access: it refuses (scenarios
    /// refuse A-MSDU with it).
    ///
    /// Panics if `tin` did not come from this fq's [`Fq::add_tin`].
    pub fn join_tail(
        &mut self,
        tin: TxqId,
        packet: &Packet,
        join: impl FnOnce(&mut Packet) -> Option<u32>,
    ) -> bool {
        let t = tin.index();
        assert!(t < self.tins.len(), "unknown tin {t}");
        if self.external.is_some() {
            return false;
        }
        let slot = self.classify(t, packet.flow);
        let Some(i) = (match self.state_of[slot as usize] {
            NIL => None,
            i => Some(i),
        }) else {
            return false;
        };
        let flow = &mut self.flows[i as usize];
        if flow.tail == NIL {
            return false;
        }
        let node = &mut self.core.nodes[flow.tail as usize];
        let old = node.packet.len_bytes;
        let Some(new) = join(&mut node.packet) else {
            return false;
        };
        node.packet.len_bytes = new;
        let grown = u64::from(new.saturating_sub(old));
        flow.backlog_bytes += grown;
        self.tins[t].backlog.bytes += grown;
        if self.core.policy == OverloadPolicy::OneFromFattest {
            // ≤5.11: the grown flow moves in front of those with an equal backlog.
            flow.tie = -self.core.next_stamp();
        }
        true
    }

    /// The overload loop at the end of `fq_tin_enqueue` (reference §3.4): while the
    /// radio is over its packet or memory limit, drop from the fattest flow.
    // perf: the condition is checked in line, the loop (rarely entered) is out of line.
    #[inline]
    fn overload(&mut self, drops: &mut Vec<Dropped>) {
        if self.core.backlog_packets > self.params.limit_packets
            || self.core.memory_usage > self.params.memory_limit_bytes
        {
            self.overload_loop(drops);
        }
    }

    /// [`Fq::overload`]'s loop, once its condition held: each pass drops what the
    /// [`OverloadPolicy`] says from the fattest flow and counts the pass.
    #[cold]
    #[inline(never)]
    fn overload_loop(&mut self, drops: &mut Vec<Dropped>) {
        let mut oom = self.core.memory_usage > self.params.memory_limit_bytes;
        while self.core.backlog_packets > self.params.limit_packets || oom {
            let Some(i) = self.fattest() else {
                return;
            };
            let flow = &mut self.flows[i as usize];
            let t = flow.owner as usize;
            let batch = match self.core.policy {
                OverloadPolicy::OneFromFattest => 1,
                OverloadPolicy::HalfFromFattest => (flow.qlen / 2).clamp(1, DROP_BATCH_MAX),
            };
            let reason = if oom {
                DropReason::Overmemory
            } else {
                DropReason::Overlimit
            };
            let tin = &mut self.tins[t];
            let mut dropped = 0u64;
            while dropped < batch as u64 {
                let Some(p) = self.core.pop(flow, &mut tin.backlog) else {
                    break;
                };
                drops.push(Dropped { packet: p, reason });
                dropped += 1;
            }
            if dropped == 0 {
                return;
            }
            tin.stats.overlimit += 1;
            tin.stats.overload_drops += dropped;
            self.core.stats.overlimit += 1;
            self.core.stats.overload_drops += dropped;
            if oom {
                tin.stats.overmemory += 1;
                self.core.stats.overmemory += 1;
                oom = self.core.memory_usage > self.params.memory_limit_bytes;
            }
        }
    }

    /// The flow with the largest byte backlog, with the era's tie-break (see the module
    /// docs): the index of its state, or `None` if no flow holds a byte.
    fn fattest(&self) -> Option<u32> {
        let global = self.params.flows;
        let mut best = NIL;
        let mut best_len = 0u64;
        let mut best_tie = 0i64;
        for (w, &word) in self.core.nonempty.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let slot = w as u32 * 64 + bits.trailing_zeros();
                bits &= bits - 1;
                // A non-empty flow has its state.
                let i = self.state_of[slot as usize];
                let f = &self.flows[i as usize];
                let len = f.backlog_bytes;
                if len == 0 || len < best_len {
                    continue;
                }
                let better = len > best_len
                    || match self.core.policy {
                        OverloadPolicy::OneFromFattest => f.tie < best_tie,
                        // Global flows: strict `>` in index order. Default flows: the
                        // tin_backlog list order, after every global flow.
                        OverloadPolicy::HalfFromFattest => {
                            slot >= global && best >= global && f.tie < best_tie
                        }
                    };
                if better {
                    best = slot;
                    best_len = len;
                    best_tie = f.tie;
                }
            }
        }
        (best != NIL).then(|| self.state_of[best as usize])
    }

    /// `ieee80211_tx_dequeue` → `fq_tin_dequeue` (reference §3.5): DRR++ over the tin's
    /// `new_flows` then `old_flows`, running CoDel (`codel`, `now`) on the chosen flow.
    /// Packets CoDel drops are appended to `drops` with [`DropReason::Codel`]; ECN marks
    /// are applied to the returned packet. Returns `None` when the tin is empty (both
    /// lists are then empty and all its flows released).
    ///
    /// Panics if `tin` did not come from this fq's [`Fq::add_tin`].
    #[inline(always)]
    pub fn dequeue(
        &mut self,
        now: Nanos,
        tin: TxqId,
        codel: &CodelParams,
        drops: &mut Vec<Dropped>,
    ) -> Option<Packet> {
        if self.external.is_some() {
            return self.dequeue_external(now, tin, codel, drops);
        }
        let t = tin.index();
        let quantum = self.params.quantum_bytes as i64;
        let Fq {
            flows,
            cvars,
            tins,
            core,
            busy,
            ..
        } = self;
        let Tin {
            new_flows,
            old_flows,
            backlog,
            stats,
        } = &mut tins[t];
        loop {
            let from_new = !new_flows.is_empty();
            // The head flow is the tin's only listed flow.
            let alone = if from_new {
                new_flows.head == new_flows.tail && old_flows.is_empty()
            } else {
                old_flows.head == old_flows.tail
            };
            let head = if from_new {
                &mut *new_flows
            } else if !old_flows.is_empty() {
                &mut *old_flows
            } else {
                busy.remove(tin);
                return None;
            };
            let i = head.head;
            if flows[i as usize].deficit <= 0 && alone {
                // perf: the tin's only flow. The rotations below would just top it up
                // a quantum at a time (moving it to old_flows) until it is positive;
                // do them at once (a 1500 B packet leaves five quanta of 300 B to
                // make up).
                let d = flows[i as usize].deficit;
                flows[i as usize].deficit = d + (-d / quantum + 1) * quantum;
                if from_new {
                    new_flows.pop_front(flows);
                    old_flows.push_back(flows, i);
                }
                continue;
            }
            if flows[i as usize].deficit <= 0 {
                flows[i as usize].deficit += quantum;
                head.pop_front(flows);
                old_flows.push_back(flows, i);
                continue;
            }
            let mut queue = FlowQueue {
                core: &mut *core,
                flow: &mut flows[i as usize],
                backlog: &mut *backlog,
                drops: &mut *drops,
            };
            let packet = cvars[i as usize].dequeue(&mut queue, codel, &mut stats.codel, now);
            // perf: the packet is returned in the `Option` CoDel built, not unwrapped
            // and wrapped again (which copies it).
            if let Some(p) = packet.as_ref() {
                // The flow pays for what it sends.
                flows[i as usize].deficit -= p.len_bytes as i64;
                stats.tx_bytes += p.len_bytes as u64;
                stats.tx_packets += 1;
                return packet;
            }
            // Force a pass through old_flows to prevent starvation.
            if from_new && !old_flows.is_empty() {
                new_flows.pop_front(flows);
                old_flows.push_back(flows, i);
            } else {
                let head = if from_new {
                    &mut *new_flows
                } else {
                    &mut *old_flows
                };
                head.pop_front(flows);
                let f = &mut flows[i as usize];
                f.listed = false;
                f.owner = NIL;
            }
        }
    }

    /// `fq_tin_reset` (as used by `ieee80211_txq_purge`): remove every packet of the
    /// tin, appending them to `purged` in flow-list order, and release its flows.
    /// CoDel state is kept (the kernel does not reset `cvars` either) and no counter
    /// other than the backlog changes; the caller decides what a purge means.
    pub fn reset_tin(&mut self, tin: TxqId, purged: &mut Vec<Packet>) {
        if let Some(e) = self.external.as_mut() {
            e.reset_tin(tin, purged);
            self.busy.remove(tin);
            return;
        }
        let t = tin.index();
        let Tin {
            new_flows,
            old_flows,
            backlog,
            ..
        } = &mut self.tins[t];
        loop {
            let head = if !new_flows.is_empty() {
                &mut *new_flows
            } else if !old_flows.is_empty() {
                &mut *old_flows
            } else {
                break;
            };
            let i = head.pop_front(&mut self.flows);
            let f = &mut self.flows[i as usize];
            while let Some(p) = self.core.pop(f, backlog) {
                purged.push(p);
            }
            f.listed = false;
            f.owner = NIL;
        }
        self.busy.remove(tin);
    }

    /// The tin has no flow on its `new_flows` or `old_flows` list: [`Fq::dequeue`]
    /// returns `None` at once and changes nothing. (A tin with no packets may still list
    /// flows that a dequeue would release.)
    pub fn tin_idle(&self, tin: TxqId) -> bool {
        !self.busy.contains(tin)
    }

    /// The tins that are not idle ([`Fq::tin_idle`]), as a set of TXQs to search.
    pub fn busy_tins(&self) -> &TxqSet {
        &self.busy
    }

    /// What a tin holds (`tin->backlog_packets`, `backlog_bytes`;
    /// `ieee80211_txq_get_depth` without the frags queue, reference §3.6).
    pub fn tin_backlog(&self, tin: TxqId) -> Backlog {
        if let Some(e) = self.external.as_ref() {
            return e.tin_backlog(tin);
        }
        self.tins[tin.index()].backlog
    }

    /// Packets queued over all tins (`fq->backlog`, compared with `limit`).
    pub fn backlog_packets(&self) -> u32 {
        if let Some(e) = self.external.as_ref() {
            return e.stats().backlog_packets;
        }
        self.core.backlog_packets
    }

    /// Truesize bytes queued over all tins (`fq->memory_usage`, compared with
    /// `memory_limit`).
    pub fn memory_usage(&self) -> u64 {
        if let Some(e) = self.external.as_ref() {
            return e.stats().memory_usage_bytes;
        }
        self.core.memory_usage
    }

    /// A tin's counters (reference §3.1, §2.3).
    pub fn tin_stats(&self, tin: TxqId) -> TinStats {
        if let Some(e) = self.external.as_ref() {
            return e.tin_stats(tin);
        }
        self.tins[tin.index()].stats
    }

    /// The radio-wide counters and current levels.
    pub fn stats(&self) -> FqStats {
        if let Some(e) = self.external.as_ref() {
            return e.stats();
        }
        FqStats {
            backlog_packets: self.core.backlog_packets,
            memory_usage_bytes: self.core.memory_usage,
            ..self.core.stats
        }
    }

    /// The tin owning global flow `index` (`flows[index].tin`), if any. For
    /// inspection and tests; `index` must be below `params().flows`.
    pub fn flow_owner(&self, index: u32) -> Option<TxqId> {
        assert!(index < self.params.flows, "flow index {index} out of range");
        let o = self.flow(index).map_or(NIL, |f| f.owner);
        (o != NIL).then_some(TxqId::from_index(o as usize))
    }

    /// What global flow `index` holds (`flow->backlog`).
    pub fn flow_backlog(&self, index: u32) -> Backlog {
        assert!(index < self.params.flows, "flow index {index} out of range");
        self.flow(index).map_or(Backlog::default(), Flow::backlog)
    }

    /// What a tin's default (collision) flow holds.
    pub fn default_flow_backlog(&self, tin: TxqId) -> Backlog {
        self.flow(self.default_slot(tin.index()))
            .map_or(Backlog::default(), Flow::backlog)
    }

    /// CoDel state of global flow `index` (`local->cvars[index]`; zero before a packet
    /// used the flow, as `kcalloc` leaves it). For inspection and tests.
    pub fn flow_codel(&self, index: u32) -> CodelVars {
        assert!(index < self.params.flows, "flow index {index} out of range");
        self.codel_of(index)
    }

    /// CoDel state of a tin's default flow (`txqi->def_cvars`).
    pub fn default_flow_codel(&self, tin: TxqId) -> CodelVars {
        self.codel_of(self.default_slot(tin.index()))
    }

    fn codel_of(&self, slot: u32) -> CodelVars {
        match self.state_of[slot as usize] {
            NIL => CodelVars::default(),
            i => self.cvars[i as usize],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::codel::codel_duration;
    use crate::packet::{Ecn, NodeId};
    use crate::rng::{RngStream, StreamKind};

    /// A hash that lands in bucket `k` of 4096 (each bucket holds 2^20 hashes), with
    /// `low` distinguishing hashes inside the bucket.
    fn bucket(k: u32, low: u32) -> u32 {
        assert!(low < 1 << 20);
        (k << 20) | low
    }

    fn pkt(id: u64, hash: u32, len: u32) -> Packet {
        let mut p = Packet::new(id, NodeId::AP, NodeId(1), len);
        p.flow = hash;
        p
    }

    fn bl(packets: u32, bytes: u64) -> Backlog {
        Backlog { packets, bytes }
    }

    fn fq(policy: OverloadPolicy) -> Fq {
        Fq::new(FqParams::default(), policy)
    }

    fn ids(drops: &[Dropped]) -> Vec<u64> {
        drops.iter().map(|Dropped { packet: p, .. }| p.id).collect()
    }

    /// One flow of [`KernelTin`]: a FIFO with its DRR and CoDel state.
    #[derive(Default)]
    struct KernelFlow {
        q: std::collections::VecDeque<Packet>,
        bytes: u64,
        deficit: i64,
        listed: bool,
        cvars: CodelVars,
    }

    /// A [`KernelFlow`]'s FIFO as CoDel sees it, dropping into `drops`.
    struct KernelFlowQueue<'a> {
        flow: &'a mut KernelFlow,
        drops: &'a mut Vec<Dropped>,
    }

    impl CodelQueue for KernelFlowQueue<'_> {
        fn dequeue(&mut self) -> Option<Packet> {
            let p = self.flow.q.pop_front()?;
            self.flow.bytes -= p.len_bytes as u64;
            Some(p)
        }
        fn backlog_bytes(&self) -> u32 {
            self.flow.bytes.min(u32::MAX as u64) as u32
        }
        fn drop(&mut self, p: Packet) {
            self.drops.push(Dropped {
                packet: p,
                reason: DropReason::Codel,
            });
        }
    }

    /// One tin written as `fq_tin_enqueue` / `fq_tin_dequeue` read (reference §3.4,
    /// §3.5), for flows that never collide: plain FIFOs, `new_flows` and `old_flows` as
    /// lists of flow numbers, and a flow at the head with no deficit getting one quantum
    /// and going to the back of `old_flows`, one rotation per pass.
    struct KernelTin {
        flows: Vec<KernelFlow>,
        new_flows: std::collections::VecDeque<usize>,
        old_flows: std::collections::VecDeque<usize>,
        quantum: i64,
        codel_stats: CodelStats,
    }

    impl KernelTin {
        fn new(n_flows: usize, quantum_bytes: u32) -> KernelTin {
            KernelTin {
                flows: (0..n_flows).map(|_| KernelFlow::default()).collect(),
                new_flows: Default::default(),
                old_flows: Default::default(),
                quantum: quantum_bytes as i64,
                codel_stats: CodelStats::default(),
            }
        }

        fn enqueue(&mut self, now: Nanos, flow: usize, mut p: Packet) {
            p.queued_at = now;
            let f = &mut self.flows[flow];
            f.bytes += p.len_bytes as u64;
            f.q.push_back(p);
            if !f.listed {
                f.listed = true;
                f.deficit = self.quantum;
                self.new_flows.push_back(flow);
            }
        }

        fn dequeue(
            &mut self,
            now: Nanos,
            codel: &CodelParams,
            drops: &mut Vec<Dropped>,
        ) -> Option<Packet> {
            loop {
                let (from_new, k) = match (self.new_flows.front(), self.old_flows.front()) {
                    (Some(&k), _) => (true, k),
                    (None, Some(&k)) => (false, k),
                    (None, None) => return None,
                };
                if self.flows[k].deficit <= 0 {
                    self.flows[k].deficit += self.quantum;
                    self.pop_head(from_new);
                    self.old_flows.push_back(k);
                    continue;
                }
                let f = &mut self.flows[k];
                let mut cvars = std::mem::take(&mut f.cvars);
                let mut queue = KernelFlowQueue { flow: f, drops };
                let p = cvars.dequeue(&mut queue, codel, &mut self.codel_stats, now);
                self.flows[k].cvars = cvars;
                match p {
                    Some(p) => {
                        self.flows[k].deficit -= p.len_bytes as i64;
                        return Some(p);
                    }
                    None if from_new && !self.old_flows.is_empty() => {
                        self.new_flows.pop_front();
                        self.old_flows.push_back(k);
                    }
                    None => {
                        self.pop_head(from_new);
                        self.flows[k].listed = false;
                    }
                }
            }
        }

        /// Take the head flow off `new_flows` (`from_new`) or `old_flows`.
        fn pop_head(&mut self, from_new: bool) {
            if from_new {
                self.new_flows.pop_front();
            } else {
                self.old_flows.pop_front();
            }
        }
    }

    /// fq's DRR++ (which tops a tin's lone flow up by all the quanta it needs at once)
    /// serves what the kernel's one-quantum-per-pass loop serves ([`KernelTin`]): the
    /// same packets, drops, order and CoDel counters, through random enqueues (40 to
    /// 1500 B, one to three flows per tin, three tins), dequeues and CoDel drops.
    #[test]
    fn drr_matches_the_kernels_quantum_at_a_time_loop() {
        let mut fq = Fq::new(FqParams::default(), OverloadPolicy::HalfFromFattest);
        let tins: Vec<TxqId> = (0..3).map(|_| fq.add_tin()).collect();
        let mut kernel: Vec<KernelTin> = (0..3)
            .map(|_| KernelTin::new(3, fq.params().quantum_bytes))
            .collect();
        let mut rng = RngStream::new(5, StreamKind::Misc, 0);
        let codel = CodelParams::mac80211();
        let (mut d1, mut d2) = (Vec::new(), Vec::new());
        let mut served = 0;
        for step in 0..50_000u64 {
            let t = (rng.next_u64() % 3) as usize;
            let now = Nanos::from_us(step * 300);
            if rng.bernoulli(0.45) {
                // Buckets apart per tin: flows never collide.
                let k = (rng.next_u64() % 3) as usize;
                let hash = bucket([11, 900, 3000][k] + t as u32, 0);
                let len = 40 + (rng.next_u64() % 1461) as u32;
                fq.enqueue(now, tins[t], pkt(step, hash, len), &mut d1);
                kernel[t].enqueue(now, k, pkt(step, hash, len));
            } else {
                let a = fq.dequeue(now, tins[t], &codel, &mut d1);
                let b = kernel[t].dequeue(now, &codel, &mut d2);
                assert_eq!(a, b, "step {step}");
                served += a.is_some() as u32;
            }
            assert_eq!(ids(&d1), ids(&d2), "step {step}");
        }
        for (t, k) in tins.iter().zip(&kernel) {
            assert_eq!(fq.tin_stats(*t).codel, k.codel_stats);
        }
        assert!(
            !d1.is_empty() && served > 10_000,
            "{} drops, {served} served",
            d1.len()
        );
    }

    /// `tin_idle` says exactly when a dequeue would return nothing and change nothing
    /// (no flow listed), and `busy_tins` holds exactly the other tins, through
    /// enqueues, dequeues (with CoDel releasing emptied flows), overload drops and
    /// resets. (Searching the set: `txq::tests::search_matches_a_scan`.)
    #[test]
    fn busy_tins_are_those_listing_a_flow() {
        let params = FqParams {
            limit_packets: 40,
            ..FqParams::default()
        };
        let mut fq = Fq::new(params, OverloadPolicy::HalfFromFattest);
        let tins: Vec<TxqId> = (0..150).map(|_| fq.add_tin()).collect();
        let mut rng = RngStream::new(3, StreamKind::Misc, 0);
        let mut drops = Vec::new();
        let codel = CodelParams::mac80211();
        let lists_empty =
            |fq: &Fq, t: usize| fq.tins[t].new_flows.is_empty() && fq.tins[t].old_flows.is_empty();
        for step in 0..20_000u64 {
            let t = tins[(rng.next_u64() % 150) as usize];
            let now = Nanos::from_ms(step);
            match rng.next_u64() % 10 {
                0..=4 => fq.enqueue(now, t, pkt(step, rng.next_u64() as u32, 1000), &mut drops),
                5..=8 => {
                    let _ = fq.dequeue(now, t, &codel, &mut drops);
                }
                _ => {
                    let mut purged = Vec::new();
                    fq.reset_tin(t, &mut purged);
                }
            }
            for (i, &tin) in tins.iter().enumerate() {
                assert_eq!(fq.tin_idle(tin), lists_empty(&fq, i), "tin {i}");
                assert_eq!(
                    fq.busy_tins().contains(tin),
                    !lists_empty(&fq, i),
                    "tin {i}"
                );
            }
        }
    }

    const T0: Nanos = Nanos::ZERO;

    #[test]
    fn defaults_match_reference() {
        let p = FqParams::default();
        assert_eq!(
            (p.flows, p.quantum_bytes, p.limit_packets),
            (4096, 300, 8192)
        );
        assert_eq!(p.memory_limit_bytes, 16 * 1024 * 1024);
        assert_eq!(
            FqParams::for_hardware(false).memory_limit_bytes,
            4 * 1024 * 1024
        );
        assert_eq!(FqParams::for_hardware(true), p);
    }

    #[test]
    fn classification_into_4096_buckets() {
        // (hash × 4096) >> 32: the top 12 bits of the hash.
        assert_eq!(flow_index(0, 4096), 0);
        assert_eq!(flow_index(u32::MAX, 4096), 4095);
        for k in [0, 1, 7, 2048, 4095] {
            assert_eq!(flow_index(bucket(k, 0), 4096), k);
            assert_eq!(flow_index(bucket(k, (1 << 20) - 1), 4096), k);
        }
        // Uniform hashes spread over all buckets, never outside.
        let mut rng = RngStream::new(7, StreamKind::Misc, 0);
        let mut seen = vec![0u32; 4096];
        for _ in 0..200_000 {
            let i = flow_index(rng.next_u64() as u32, 4096);
            seen[i as usize] += 1;
        }
        assert!(seen.iter().all(|&c| c > 0));
        // Through the fq: the packet sits in that global flow.
        let mut fq = fq(OverloadPolicy::OneFromFattest);
        let a = fq.add_tin();
        let mut drops = Vec::new();
        fq.enqueue(T0, a, pkt(1, bucket(1234, 99), 500), &mut drops);
        assert_eq!(fq.flow_backlog(1234), bl(1, 500));
        assert_eq!(fq.flow_owner(1234), Some(a));
        assert_eq!(fq.tin_stats(a).flows, 1);
    }

    #[test]
    fn collision_across_tins_goes_to_default_flow() {
        let mut fq = fq(OverloadPolicy::HalfFromFattest);
        let a = fq.add_tin();
        let b = fq.add_tin();
        let codel = CodelParams::mac80211();
        let mut drops = Vec::new();
        fq.enqueue(T0, a, pkt(1, bucket(5, 1), 1000), &mut drops);
        // Different hash, same bucket, other tin: default flow of b.
        fq.enqueue(T0, b, pkt(2, bucket(5, 2), 700), &mut drops);
        assert_eq!(fq.tin_stats(b).collisions, 1);
        assert_eq!(fq.tin_stats(a).collisions, 0);
        assert_eq!(fq.stats().collisions, 1);
        assert_eq!(fq.flow_backlog(5), bl(1, 1000));
        assert_eq!(fq.default_flow_backlog(b), bl(1, 700));
        assert_eq!(fq.tin_stats(b).flows, 1); // the default flow was unowned
        assert_eq!(fq.tin_backlog(b), bl(1, 700));
        // Same tin, same bucket: shares the global flow, no collision.
        fq.enqueue(T0, a, pkt(3, bucket(5, 3), 100), &mut drops);
        assert_eq!(fq.flow_backlog(5), bl(2, 1100));
        assert_eq!(fq.tin_stats(a).collisions, 0);
        // b's packet comes out of its default flow.
        assert_eq!(fq.dequeue(T0, b, &codel, &mut drops).unwrap().id, 2);
        assert!(fq.dequeue(T0, b, &codel, &mut drops).is_none());

        // a sends its two packets; the flow stays owned while still listed.
        assert_eq!(fq.dequeue(T0, a, &codel, &mut drops).unwrap().id, 1);
        assert_eq!(fq.dequeue(T0, a, &codel, &mut drops).unwrap().id, 3);
        assert_eq!(fq.flow_backlog(5), bl(0, 0));
        assert_eq!(fq.flow_owner(5), Some(a));
        fq.enqueue(T0, b, pkt(4, bucket(5, 4), 100), &mut drops);
        assert_eq!(fq.tin_stats(b).collisions, 2);
        assert_eq!(fq.dequeue(T0, b, &codel, &mut drops).unwrap().id, 4);
        // a's dequeue finds the flow empty and removes it: ownership released.
        assert!(fq.dequeue(T0, a, &codel, &mut drops).is_none());
        assert_eq!(fq.flow_owner(5), None);
        fq.enqueue(T0, b, pkt(5, bucket(5, 5), 100), &mut drops);
        assert_eq!(fq.tin_stats(b).collisions, 2);
        assert_eq!(fq.flow_owner(5), Some(b));
        assert_eq!(fq.flow_backlog(5), bl(1, 100));
        assert!(drops.is_empty());
    }

    #[test]
    fn drr_serves_sparse_flow_ahead_of_bulk() {
        let mut fq = fq(OverloadPolicy::OneFromFattest);
        let a = fq.add_tin();
        let codel = CodelParams::mac80211();
        let mut drops = Vec::new();
        // Bulk flow: 1500-byte packets; one overdrafts the 300-byte quantum.
        for i in 0..6 {
            fq.enqueue(T0, a, pkt(i, bucket(10, 0), 1500), &mut drops);
        }
        assert_eq!(fq.dequeue(T0, a, &codel, &mut drops).unwrap().id, 0);
        assert_eq!(fq.dequeue(T0, a, &codel, &mut drops).unwrap().id, 1);
        // A sparse flow arrives while the bulk flow is backlogged: it is next.
        fq.enqueue(T0, a, pkt(100, bucket(11, 0), 100), &mut drops);
        assert_eq!(fq.dequeue(T0, a, &codel, &mut drops).unwrap().id, 100);
        let rest: Vec<u64> = std::iter::from_fn(|| fq.dequeue(T0, a, &codel, &mut drops))
            .map(|p| p.id)
            .collect();
        assert_eq!(rest, vec![2, 3, 4, 5]);

        // Both arriving together: the bulk flow (first on new_flows) sends one
        // 1500-byte packet, overdrafting its 300-byte deficit, then the sparse flow.
        for i in 0..4 {
            fq.enqueue(T0, a, pkt(200 + i, bucket(10, 0), 1500), &mut drops);
        }
        fq.enqueue(T0, a, pkt(300, bucket(11, 0), 100), &mut drops);
        let order: Vec<u64> = std::iter::from_fn(|| fq.dequeue(T0, a, &codel, &mut drops))
            .map(|p| p.id)
            .collect();
        assert_eq!(order, vec![200, 300, 201, 202, 203]);
        assert_eq!(fq.tin_stats(a).tx_packets, 6 + 1 + 5);
        assert_eq!(fq.tin_stats(a).tx_bytes, 10 * 1500 + 2 * 100);
        assert!(drops.is_empty());
    }

    #[test]
    fn empty_new_flow_moves_to_old_flows_when_old_is_not_empty() {
        let mut fq = fq(OverloadPolicy::OneFromFattest);
        let a = fq.add_tin();
        let b = fq.add_tin();
        let codel = CodelParams::mac80211();
        let mut drops = Vec::new();
        let x = bucket(1, 0);
        let n = bucket(2, 0);
        for i in 0..10 {
            fq.enqueue(T0, a, pkt(i, x, 100), &mut drops);
        }
        // X spends its first quantum (3 × 100 B) on new_flows, then moves to old_flows
        // with a fresh quantum and sends one more (deficit 200 left).
        for i in 0..4 {
            assert_eq!(fq.dequeue(T0, a, &codel, &mut drops).unwrap().id, i);
        }
        // N: one packet, new-flow priority.
        fq.enqueue(T0, a, pkt(100, n, 100), &mut drops);
        assert_eq!(fq.dequeue(T0, a, &codel, &mut drops).unwrap().id, 100);
        // N is empty at the head of new_flows with old_flows non-empty: it goes to the
        // tail of old_flows (not deleted) and X is served.
        assert_eq!(fq.dequeue(T0, a, &codel, &mut drops).unwrap().id, 4);
        assert_eq!(fq.flow_owner(2), Some(a));
        fq.enqueue(T0, b, pkt(500, n, 100), &mut drops);
        assert_eq!(fq.tin_stats(b).collisions, 1);
        // A new packet for N finds it still listed (on old_flows, behind X): no
        // new-flow priority, X keeps its turn.
        fq.enqueue(T0, a, pkt(101, n, 100), &mut drops);
        assert_eq!(fq.dequeue(T0, a, &codel, &mut drops).unwrap().id, 5);
        assert_eq!(fq.dequeue(T0, a, &codel, &mut drops).unwrap().id, 101);

        // Contrast: with old_flows empty, an empty new flow is deleted and released.
        let mut fq2 = Fq::new(FqParams::default(), OverloadPolicy::OneFromFattest);
        let c = fq2.add_tin();
        fq2.enqueue(T0, c, pkt(1, n, 100), &mut drops);
        assert_eq!(fq2.dequeue(T0, c, &codel, &mut drops).unwrap().id, 1);
        assert_eq!(fq2.flow_owner(2), Some(c));
        assert!(fq2.dequeue(T0, c, &codel, &mut drops).is_none());
        assert_eq!(fq2.flow_owner(2), None);
        assert!(drops.is_empty());
    }

    /// Tin A: flow F1 with 3000 × 1400 B (more bytes); tin B: flow F2 with 5192 × 200 B
    /// (more packets). 8192 packets in all, 10.6 MB of truesize (under 16 MiB).
    fn fill_two_tins(fq: &mut Fq) -> (TxqId, TxqId) {
        let a = fq.add_tin();
        let b = fq.add_tin();
        let mut drops = Vec::new();
        for i in 0..3000 {
            fq.enqueue(T0, a, pkt(i, bucket(10, 0), 1400), &mut drops);
        }
        for i in 0..5192 {
            fq.enqueue(T0, b, pkt(10_000 + i, bucket(20, 0), 200), &mut drops);
        }
        assert!(drops.is_empty());
        assert_eq!(fq.backlog_packets(), 8192);
        assert!(fq.memory_usage() < 16 << 20);
        (a, b)
    }

    #[test]
    fn overlimit_one_from_fattest_across_tins() {
        let mut fq = fq(OverloadPolicy::OneFromFattest);
        let (a, b) = fill_two_tins(&mut fq);
        let mut drops = Vec::new();
        // Each excess packet (enqueued on tin B, another flow) costs the globally
        // fattest flow (F1, tin A) exactly its head packet.
        for k in 0..5 {
            fq.enqueue(T0, b, pkt(50_000 + k, bucket(21, 0), 200), &mut drops);
            assert_eq!(fq.backlog_packets(), 8192);
        }
        assert_eq!(ids(&drops), vec![0, 1, 2, 3, 4]);
        assert!(drops
            .iter()
            .all(|Dropped { reason: r, .. }| *r == DropReason::Overlimit));
        assert_eq!(fq.tin_stats(a).overlimit, 5);
        assert_eq!(fq.tin_stats(a).overload_drops, 5);
        assert_eq!(fq.tin_stats(b).overlimit, 0);
        let s = fq.stats();
        assert_eq!((s.overlimit, s.overmemory, s.overload_drops), (5, 0, 5));
        assert_eq!(fq.flow_backlog(10), bl(2995, 2995 * 1400));
        assert_eq!(fq.tin_backlog(a), bl(2995, 2995 * 1400));
    }

    #[test]
    fn overlimit_half_from_fattest_drops_a_batch() {
        let mut fq = fq(OverloadPolicy::HalfFromFattest);
        let (a, b) = fill_two_tins(&mut fq);
        let mut drops = Vec::new();
        fq.enqueue(T0, b, pkt(50_000, bucket(21, 0), 200), &mut drops);
        // One pass: min(32, 3000 / 2) = 32 head packets of F1.
        assert_eq!(ids(&drops), (0..32).collect::<Vec<u64>>());
        assert!(drops
            .iter()
            .all(|Dropped { reason: r, .. }| *r == DropReason::Overlimit));
        assert_eq!(fq.backlog_packets(), 8193 - 32);
        assert_eq!(fq.tin_stats(a).overlimit, 1);
        assert_eq!(fq.tin_stats(a).overload_drops, 32);
        assert_eq!(fq.stats().overlimit, 1);
        // Now under the limit: the next 31 enqueues drop nothing.
        drops.clear();
        for k in 1..=31 {
            fq.enqueue(T0, b, pkt(50_000 + k, bucket(21, 0), 200), &mut drops);
        }
        assert!(drops.is_empty());
        assert_eq!(fq.backlog_packets(), 8192);
    }

    #[test]
    fn half_from_fattest_small_flows() {
        let params = FqParams {
            limit_packets: 20,
            ..FqParams::default()
        };
        let mut fq = Fq::new(params, OverloadPolicy::HalfFromFattest);
        let a = fq.add_tin();
        let mut drops = Vec::new();
        for i in 0..10 {
            fq.enqueue(T0, a, pkt(i, bucket(1, 0), 1500), &mut drops);
            fq.enqueue(T0, a, pkt(100 + i, bucket(2, 0), 100), &mut drops);
        }
        fq.enqueue(T0, a, pkt(200, bucket(2, 0), 100), &mut drops);
        // qlen 10 → 5 packets.
        assert_eq!(ids(&drops), vec![0, 1, 2, 3, 4]);
        // qlen 1 → max(1, 0) = 1 packet.
        let params = FqParams {
            limit_packets: 2,
            ..FqParams::default()
        };
        let mut fq = Fq::new(params, OverloadPolicy::HalfFromFattest);
        let a = fq.add_tin();
        drops.clear();
        fq.enqueue(T0, a, pkt(1, bucket(1, 0), 1500), &mut drops);
        fq.enqueue(T0, a, pkt(2, bucket(2, 0), 100), &mut drops);
        fq.enqueue(T0, a, pkt(3, bucket(2, 0), 100), &mut drops);
        assert_eq!(ids(&drops), vec![1]);
    }

    #[test]
    fn memory_limit_counts_truesize_and_reports_overmemory() {
        for policy in [
            OverloadPolicy::OneFromFattest,
            OverloadPolicy::HalfFromFattest,
        ] {
            // Without VHT: 4 MiB. A 1500-byte packet's truesize is 2152 bytes, so 1949
            // fit (4 194 248 B) and the 1950th is over — far below 8192 packets.
            let mut fq = Fq::new(FqParams::for_hardware(false), policy);
            let a = fq.add_tin();
            let mut drops = Vec::new();
            assert_eq!(pkt(0, 0, 1500).truesize_bytes(), 2152);
            for i in 0..1949 {
                fq.enqueue(T0, a, pkt(i, bucket(3, 0), 1500), &mut drops);
            }
            assert!(drops.is_empty());
            assert_eq!(fq.memory_usage(), 1949 * 2152);
            fq.enqueue(T0, a, pkt(1949, bucket(3, 0), 1500), &mut drops);
            let expect = match policy {
                OverloadPolicy::OneFromFattest => 1,
                OverloadPolicy::HalfFromFattest => 32,
            };
            assert_eq!(ids(&drops), (0..expect).collect::<Vec<u64>>());
            assert!(drops
                .iter()
                .all(|Dropped { reason: r, .. }| *r == DropReason::Overmemory));
            assert!(fq.memory_usage() <= 4 << 20);
            let s = fq.stats();
            assert_eq!((s.overlimit, s.overmemory), (1, 1));
            assert_eq!(fq.tin_stats(a).overmemory, 1);
            assert_eq!(fq.backlog_packets(), 1950 - expect as u32);
        }
    }

    #[test]
    fn fattest_tie_breaks_follow_each_era() {
        // a: [500, 1000] then b: [1000], then 10-byte packets in c up to the limit.
        // First overload pass: a (1500) loses its 500-byte head and shrinks to 1000.
        // Second pass: a and b tie at 1000.
        //   ≤5.11: the sorted list put b (grew into 1000) ahead of a (shrank into it).
        //   ≥5.12: lowest flow index wins: a.
        for (policy, second) in [
            (OverloadPolicy::OneFromFattest, 3),
            (OverloadPolicy::HalfFromFattest, 2),
        ] {
            let params = FqParams {
                limit_packets: 4,
                ..FqParams::default()
            };
            let mut fq = Fq::new(params, policy);
            let t = fq.add_tin();
            let mut drops = Vec::new();
            fq.enqueue(T0, t, pkt(1, bucket(1, 0), 500), &mut drops);
            fq.enqueue(T0, t, pkt(2, bucket(1, 0), 1000), &mut drops);
            fq.enqueue(T0, t, pkt(3, bucket(2, 0), 1000), &mut drops);
            fq.enqueue(T0, t, pkt(4, bucket(3, 0), 10), &mut drops);
            fq.enqueue(T0, t, pkt(5, bucket(3, 0), 10), &mut drops);
            assert_eq!(ids(&drops), vec![1]);
            fq.enqueue(T0, t, pkt(6, bucket(3, 0), 10), &mut drops);
            assert_eq!(ids(&drops), vec![1, second], "{policy:?}");
        }
        // ≤5.11: among flows that grew into the same backlog, the most recent first.
        let params = FqParams {
            limit_packets: 3,
            ..FqParams::default()
        };
        let mut fq = Fq::new(params, OverloadPolicy::OneFromFattest);
        let t = fq.add_tin();
        let mut drops = Vec::new();
        fq.enqueue(T0, t, pkt(1, bucket(1, 0), 1000), &mut drops);
        fq.enqueue(T0, t, pkt(2, bucket(2, 0), 1000), &mut drops);
        fq.enqueue(T0, t, pkt(3, bucket(3, 0), 10), &mut drops);
        fq.enqueue(T0, t, pkt(4, bucket(3, 0), 10), &mut drops);
        assert_eq!(ids(&drops), vec![2]);
    }

    #[test]
    fn fattest_default_flow_tie_break_half_from_fattest() {
        // Two tins' default flows tie; a global flow ties too. ≥5.12 scans global flows
        // first (strict >), then tin_backlog with the most recently backlogged first.
        let params = FqParams {
            limit_packets: 4,
            ..FqParams::default()
        };
        let mut fq = Fq::new(params, OverloadPolicy::HalfFromFattest);
        let owner = fq.add_tin();
        let a = fq.add_tin();
        let b = fq.add_tin();
        let mut drops = Vec::new();
        fq.enqueue(T0, owner, pkt(1, bucket(9, 0), 10), &mut drops);
        fq.enqueue(T0, a, pkt(2, bucket(9, 1), 1000), &mut drops); // a's default flow
        fq.enqueue(T0, b, pkt(3, bucket(9, 2), 1000), &mut drops); // b's default flow
        fq.enqueue(T0, owner, pkt(4, bucket(100, 0), 1000), &mut drops);
        fq.enqueue(T0, owner, pkt(5, bucket(101, 0), 10), &mut drops);
        // Global flow 100 ties with both default flows: it goes first.
        assert_eq!(ids(&drops), vec![4]);
        fq.enqueue(T0, owner, pkt(6, bucket(101, 0), 10), &mut drops);
        // Then b's default flow (backlogged after a's).
        assert_eq!(ids(&drops), vec![4, 3]);
        assert_eq!(fq.tin_stats(b).overlimit, 1);
    }

    /// One tick: enqueue what is due, then one dequeue. Returns delivered packets with
    /// their dequeue time.
    #[allow(clippy::type_complexity)]
    fn codel_run(
        codel: CodelParams,
        until: Nanos,
        arrivals: &dyn Fn(Nanos) -> Vec<Packet>,
        dequeue_from: Nanos,
    ) -> (Vec<(Nanos, Packet)>, Vec<(Nanos, Dropped)>, TinStats) {
        let mut fq = Fq::new(FqParams::default(), OverloadPolicy::HalfFromFattest);
        let t = fq.add_tin();
        let mut out = Vec::new();
        let mut drops = Vec::new();
        let mut timed_drops = Vec::new();
        let mut now = Nanos::ZERO;
        while now <= until {
            for p in arrivals(now) {
                fq.enqueue(now, t, p, &mut drops);
            }
            if now >= dequeue_from {
                if let Some(p) = fq.dequeue(now, t, &codel, &mut drops) {
                    out.push((now, p));
                }
            }
            timed_drops.extend(drops.drain(..).map(|d| (now, d)));
            now += Nanos::from_ms(1);
        }
        (out, timed_drops, fq.tin_stats(t))
    }

    /// A lone flow's packets in a plain FIFO, for [`CodelVars::dequeue`] as it runs
    /// on any queue (it takes the head before it looks at it).
    #[derive(Default)]
    struct RefFlow {
        q: std::collections::VecDeque<Packet>,
        bytes: u64,
        dropped: Vec<u64>,
    }

    impl CodelQueue for RefFlow {
        fn dequeue(&mut self) -> Option<Packet> {
            let p = self.q.pop_front()?;
            self.bytes -= p.len_bytes as u64;
            Some(p)
        }
        fn backlog_bytes(&self) -> u32 {
            self.bytes.min(u32::MAX as u64) as u32
        }
        fn drop(&mut self, p: Packet) {
            self.dropped.push(p.id);
        }
    }

    /// fq's CoDel on a tin's lone flow gives what `codel_dequeue` on the flow's FIFO
    /// gives: the same packets (with the same ECN marks), the same drops, the same
    /// CoDel state, with
    /// ECN on and off, with and without a CE threshold, across bursts and standing
    /// queues that go in and out of the dropping state.
    #[test]
    fn in_place_codel_matches_codel_on_a_fifo() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = move |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for round in 0..24 {
            let mut codel = CodelParams::mac80211();
            codel.ecn = round % 2 == 0;
            if round % 3 == 0 {
                codel.ce_threshold = Some(codel_duration(Nanos::from_ms(2)));
            }
            let mut fq = fq(OverloadPolicy::HalfFromFattest);
            let t = fq.add_tin();
            let slot = flow_index(7, fq.params.flows);
            let mut reference = RefFlow::default();
            let mut vars = CodelVars::default();
            let mut stats = CodelStats::default();
            let mut drops = Vec::new();
            let mut now = Nanos::ZERO;
            let mut id = 0;
            for step in 0..8000u64 {
                now += Nanos::from_us(100 + rnd(900));
                // Phases of overload (a standing queue) and of draining.
                let load = if step % 2000 < 300 { 3 } else { 1 };
                for _ in 0..rnd(load + 1) {
                    let mut p = pkt(id, 7, 60 + rnd(1441) as u32);
                    p.ecn = match rnd(4) {
                        0 => Ecn::NotEct,
                        1 => Ecn::Ect0,
                        2 => Ecn::Ect1,
                        _ => Ecn::Ce,
                    };
                    id += 1;
                    fq.enqueue(now, t, p, &mut drops);
                    let mut r = p;
                    r.queued_at = now;
                    reference.bytes += r.len_bytes as u64;
                    reference.q.push_back(r);
                }
                // Dequeues outpace arrivals in the draining phases only.
                if rnd(8) != 0 && id > 0 {
                    let got = fq.dequeue(now, t, &codel, &mut drops);
                    let want = vars.dequeue(&mut reference, &codel, &mut stats, now);
                    assert_eq!(got, want, "round {round} step {step}");
                    let state = fq.state_of[slot as usize];
                    assert_eq!(fq.cvars[state as usize], vars, "round {round} step {step}");
                }
            }
            let dropped: Vec<u64> = drops
                .iter()
                .filter(|Dropped { reason: r, .. }| *r == DropReason::Codel)
                .map(|Dropped { packet: p, .. }| p.id)
                .collect();
            assert_eq!(dropped, reference.dropped, "round {round}");
            assert!(
                !dropped.is_empty() || round % 2 == 0,
                "round {round}: no drop"
            );
            assert_eq!(fq.tin_stats(t).codel, stats, "round {round}");
        }
    }

    #[test]
    fn codel_drops_standing_queue_but_not_the_sparse_flow_beside_it() {
        const BULK: u32 = 3 << 20;
        const SPARSE: u32 = 7 << 20;
        // Bulk: one 1500-byte packet per ms from t = 0, one dequeue per ms from
        // t = 30 ms: a standing queue with ~30 ms sojourn (target 20 ms). Sparse: a
        // 100-byte packet every 10 ms (t = 5, 15, …), which also takes a dequeue slot.
        let arrivals = |now: Nanos| {
            let ms = now.as_ns() / 1_000_000;
            let mut v = vec![pkt(ms, BULK, 1500)];
            if ms % 10 == 5 {
                v.push(pkt(1_000_000 + ms, SPARSE, 100));
            }
            v
        };
        let (out, drops, stats) = codel_run(
            CodelParams::mac80211(),
            Nanos::from_secs(2),
            &arrivals,
            Nanos::from_ms(30),
        );
        assert!(drops.len() > 5, "{}", drops.len());
        assert!(drops.iter().all(
            |(
                _,
                Dropped {
                    packet: p,
                    reason: r,
                },
            )| *r == DropReason::Codel && p.flow == BULK
        ));
        assert_eq!(stats.codel.drop_count, drops.len() as u64);
        // The first dequeue above target is at 30 ms; CoDel drops at the first
        // dequeue strictly more than one interval (100 ms) later. (The interval is
        // 97656 × 1024 ns = 99.9997 ms, so that is the dequeue at 130 ms.)
        assert_eq!(drops[0].0, Nanos::from_ms(130));
        // Every sparse packet is delivered at the tick it arrived.
        let sparse: Vec<&(Nanos, Packet)> = out.iter().filter(|(_, p)| p.flow == SPARSE).collect();
        assert_eq!(sparse.len(), 200);
        assert!(sparse
            .iter()
            .filter(|(_, p)| p.queued_at >= Nanos::from_ms(30))
            .all(|(t, p)| *t == p.queued_at));
    }

    #[test]
    fn codel_mtu_zero_drops_with_less_than_one_mtu_left() {
        // Two 1500-byte packets stand in the flow; each 25 ms tick dequeues the oldest
        // (sojourn 50 ms > 20 ms target) and then one arrives. After the dequeue one
        // 1500-byte packet remains: mac80211's mtu guard of 0 lets CoDel drop, an
        // fq_codel-style guard of 1514 bytes would not.
        let run = |codel: CodelParams| {
            let mut fq = Fq::new(FqParams::default(), OverloadPolicy::OneFromFattest);
            let t = fq.add_tin();
            let mut drops = Vec::new();
            let mut first_drop = None;
            fq.enqueue(Nanos::ZERO, t, pkt(0, 1, 1500), &mut drops);
            fq.enqueue(Nanos::from_ms(25), t, pkt(1, 1, 1500), &mut drops);
            for k in 2..40u64 {
                let now = Nanos::from_ms(25 * k);
                fq.dequeue(now, t, &codel, &mut drops);
                if first_drop.is_none() && !drops.is_empty() {
                    first_drop = Some(now);
                }
                fq.enqueue(now, t, pkt(k, 1, 1500), &mut drops);
            }
            (drops.len(), first_drop)
        };
        let (n, first) = run(CodelParams::mac80211());
        assert!(n >= 1);
        // Above target from the 50 ms dequeue; the first dequeue more than 100 ms
        // later is at 175 ms.
        assert_eq!(first, Some(Nanos::from_ms(175)));
        let guarded = CodelParams {
            mtu_bytes: 1514,
            ..CodelParams::mac80211()
        };
        assert_eq!(run(guarded).0, 0);
    }

    #[test]
    fn codel_marks_ect_instead_of_dropping() {
        let arrivals = |now: Nanos| {
            let mut p = pkt(now.as_ns() / 1_000_000, 3 << 20, 1500);
            p.ecn = Ecn::Ect0;
            vec![p]
        };
        let (out, drops, stats) = codel_run(
            CodelParams::mac80211(),
            Nanos::from_secs(1),
            &arrivals,
            Nanos::from_ms(30),
        );
        assert!(drops.is_empty());
        assert!(stats.codel.ecn_mark > 0);
        let marked = out.iter().filter(|(_, p)| p.ecn == Ecn::Ce).count() as u64;
        assert_eq!(marked, stats.codel.ecn_mark);
        assert_eq!(
            out.iter().find(|(_, p)| p.ecn == Ecn::Ce).unwrap().0,
            Nanos::from_ms(130)
        );
    }

    #[derive(Clone, Copy, PartialEq, Debug)]
    enum State {
        Queued(u32),
        Delivered,
        Dropped,
    }

    fn random_workload(policy: OverloadPolicy, seed: u64) {
        let params = FqParams {
            flows: 64,
            quantum_bytes: 300,
            limit_packets: 200,
            memory_limit_bytes: 250_000,
        };
        let mut fq = Fq::new(params, policy);
        let tins: Vec<TxqId> = (0..6).map(|_| fq.add_tin()).collect();
        let mut rng = RngStream::new(seed, StreamKind::Misc, 1);
        let hashes: Vec<u32> = (0..40).map(|_| rng.next_u64() as u32).collect();
        let codel = [
            CodelParams::mac80211(),
            CodelParams::mac80211_slow_station(),
        ];
        let mut state: Vec<State> = Vec::new();
        let mut lens: Vec<u32> = Vec::new();
        let mut tin_bytes = [0u64; 6];
        let mut tin_pkts = [0u32; 6];
        let mut mem = 0u64;
        let mut drops = Vec::new();
        let mut now = Nanos::ZERO;
        let (mut codel_drops, mut overload_drops) = (0u64, 0u64);
        let mut settle = |drops: &mut Vec<Dropped>,
                          state: &mut Vec<State>,
                          tin_bytes: &mut [u64; 6],
                          tin_pkts: &mut [u32; 6],
                          mem: &mut u64| {
            for Dropped {
                packet: p,
                reason: r,
            } in drops.drain(..)
            {
                let State::Queued(t) = state[p.id as usize] else {
                    panic!("packet {} dropped twice or never queued", p.id);
                };
                state[p.id as usize] = State::Dropped;
                tin_bytes[t as usize] -= p.len_bytes as u64;
                tin_pkts[t as usize] -= 1;
                *mem -= p.truesize_bytes() as u64;
                match r {
                    DropReason::Codel => codel_drops += 1,
                    DropReason::Overlimit | DropReason::Overmemory => overload_drops += 1,
                    other => panic!("unexpected reason {other:?}"),
                }
            }
        };
        for step in 0..30_000u32 {
            now += Nanos::from_us(rng.uniform_inclusive(600) as u64);
            let t = rng.uniform_inclusive(5) as usize;
            // Phases: overload, then drain-heavy, so flows empty and change owners.
            let p_enq = if (step / 3000) % 2 == 0 { 0.65 } else { 0.35 };
            if rng.bernoulli(p_enq) {
                let id = state.len() as u64;
                // Small packets in some phases (the packet limit binds), full-size
                // mixes in others (the memory limit binds).
                let max_extra = if (step / 3000) % 4 == 0 { 260 } else { 1460 };
                let len = 40 + rng.uniform_inclusive(max_extra);
                let mut p = pkt(id, hashes[rng.uniform_inclusive(39) as usize], len);
                if rng.bernoulli(0.3) {
                    p.ecn = Ecn::Ect0;
                }
                state.push(State::Queued(t as u32));
                lens.push(len);
                tin_bytes[t] += len as u64;
                tin_pkts[t] += 1;
                mem += p.truesize_bytes() as u64;
                fq.enqueue(now, tins[t], p, &mut drops);
                assert!(fq.backlog_packets() <= params.limit_packets);
                assert!(fq.memory_usage() <= params.memory_limit_bytes);
            } else if let Some(p) = fq.dequeue(now, tins[t], &codel[t % 2], &mut drops) {
                assert_eq!(state[p.id as usize], State::Queued(t as u32));
                assert_eq!(p.len_bytes, lens[p.id as usize]);
                state[p.id as usize] = State::Delivered;
                tin_bytes[t] -= p.len_bytes as u64;
                tin_pkts[t] -= 1;
                mem -= p.truesize_bytes() as u64;
            }
            settle(
                &mut drops,
                &mut state,
                &mut tin_bytes,
                &mut tin_pkts,
                &mut mem,
            );
            for (i, &tin) in tins.iter().enumerate() {
                assert_eq!(fq.tin_backlog(tin), bl(tin_pkts[i], tin_bytes[i]));
            }
            assert_eq!(fq.backlog_packets(), tin_pkts.iter().sum::<u32>());
            assert_eq!(fq.memory_usage(), mem);
            // The overload victim would be a flow with the largest byte backlog.
            let max = fq.flows.iter().map(|f| f.backlog_bytes).max().unwrap();
            match fq.fattest() {
                Some(i) => assert_eq!(fq.flows[i as usize].backlog_bytes, max),
                None => assert_eq!(max, 0),
            }
        }
        // Drain everything.
        for (i, &tin) in tins.iter().enumerate() {
            while let Some(p) = fq.dequeue(now, tin, &codel[i % 2], &mut drops) {
                assert_eq!(state[p.id as usize], State::Queued(i as u32));
                state[p.id as usize] = State::Delivered;
                tin_bytes[i] -= p.len_bytes as u64;
                tin_pkts[i] -= 1;
                mem -= p.truesize_bytes() as u64;
            }
            settle(
                &mut drops,
                &mut state,
                &mut tin_bytes,
                &mut tin_pkts,
                &mut mem,
            );
            assert_eq!(fq.tin_backlog(tin), bl(0, 0));
        }
        assert_eq!((fq.backlog_packets(), fq.memory_usage(), mem), (0, 0, 0));
        assert!(state.iter().all(|s| !matches!(s, State::Queued(_))));
        assert!((0..64).all(|i| fq.flow_owner(i).is_none()));
        // Counters agree with what was observed.
        let delivered = state.iter().filter(|s| **s == State::Delivered).count() as u64;
        let tx: u64 = tins.iter().map(|&t| fq.tin_stats(t).tx_packets).sum();
        assert_eq!(tx, delivered);
        let cd: u64 = tins.iter().map(|&t| fq.tin_stats(t).codel.drop_count).sum();
        assert_eq!(cd, codel_drops);
        assert_eq!(fq.stats().overload_drops, overload_drops);
        let tin_od: u64 = tins.iter().map(|&t| fq.tin_stats(t).overload_drops).sum();
        assert_eq!(tin_od, overload_drops);
        let tin_ol: u64 = tins.iter().map(|&t| fq.tin_stats(t).overlimit).sum();
        assert_eq!(tin_ol, fq.stats().overlimit);
        let tin_col: u64 = tins.iter().map(|&t| fq.tin_stats(t).collisions).sum();
        assert_eq!(tin_col, fq.stats().collisions);
        // The workload exercised every mechanism.
        let s = fq.stats();
        assert!(codel_drops > 0 && s.overmemory > 0 && s.overlimit > s.overmemory);
        assert!(s.collisions > 0);
        assert!(tins.iter().any(|&t| fq.tin_stats(t).codel.ecn_mark > 0));
        // The slab never grew past the peak backlog (limit + the packet in flight).
        assert!(fq.core.nodes.len() <= params.limit_packets as usize + 1);
    }

    #[test]
    fn conservation_over_random_workload() {
        for seed in 1..=3 {
            random_workload(OverloadPolicy::OneFromFattest, seed);
            random_workload(OverloadPolicy::HalfFromFattest, seed);
        }
    }

    #[test]
    fn reset_tin_purges_and_releases() {
        let mut fq = fq(OverloadPolicy::HalfFromFattest);
        let a = fq.add_tin();
        let b = fq.add_tin();
        let mut drops = Vec::new();
        for i in 0..5 {
            fq.enqueue(T0, a, pkt(i, bucket(i as u32, 0), 100), &mut drops);
        }
        fq.enqueue(T0, b, pkt(9, bucket(0, 1), 100), &mut drops);
        let mut purged = Vec::new();
        fq.reset_tin(a, &mut purged);
        assert_eq!(
            purged.iter().map(|p| p.id).collect::<Vec<_>>(),
            vec![0, 1, 2, 3, 4]
        );
        assert_eq!(fq.tin_backlog(a), bl(0, 0));
        assert_eq!(fq.backlog_packets(), 1);
        assert_eq!(fq.memory_usage(), pkt(9, 0, 100).truesize_bytes() as u64);
        assert!((0..5).all(|i| fq.flow_owner(i).is_none()));
        let codel = CodelParams::mac80211();
        assert_eq!(fq.dequeue(T0, b, &codel, &mut drops).unwrap().id, 9);
    }
}
