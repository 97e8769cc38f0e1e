//! One node's transmit path: qdisc → mac80211 TXQs (fq + CoDel) → scheduler, gated by
//! AQL or DQL → driver/firmware queues → hardware queue of built PPDUs.
//!
//! The layers are the algorithm units of `aqm/`, `mac80211/` and `driver/`; this file
//! only wires them the way Linux does for the configured era ([`StackConfig`]):
//! - without mac80211 TXQs the qdisc feeds the driver whenever the driver has room
//!   (the netdev queue is stopped while it is full);
//! - with TXQs there is no qdisc (`IFF_NO_QUEUE`): ath9k pulls packets from the TXQ the
//!   scheduler picks while it builds an aggregate; the firmware model is fed by a push
//!   loop over the scheduler's TXQs while the firmware has room and AQL/DQL allow;
//! - the hardware queue is refilled on enqueue and on every completion.

use crate::aqm::codel::CodelParams;
use crate::aqm::fifo::Fifo;
use crate::aqm::fq_codel::{FqCodel, FqCodelParams};
use crate::aqm::pfifo_fast::PfifoFast;
use crate::driver::{
    ath9k_hw_depth_bound, BuildLimits, DriverQueues, Ppdu, ATH_BURST_FRAMES,
    ATH_NON_AGGR_MIN_QDEPTH,
};
use crate::mac::edca::Ac;
use crate::mac80211::airtime_code::ExternalAirtimeCode;
use crate::mac80211::amsdu::{self, AmsduStore, JoinLimits, PeerClass};
use crate::mac80211::aql::{expected_tx_airtime_us, stored_tx_time_est_us, Aql, AqlEstimator};
use crate::mac80211::classify::dscp_to_up;
use crate::mac80211::dql::Dql;
use crate::mac80211::fq::{Fq, FqParams};
use crate::mac80211::rate_chain::{RateChain, RateIdx, TxStatus};
use crate::mac80211::rate_control::{LinkRateControl, RateMap};
use crate::mac80211::scheduler::{MayTransmitAnswers, Scheduler, SchedulerParams};
use crate::mac80211::txq::{LinkId, Tid, TidSet, TxqId, TxqKey};
use crate::packet::{DropReason, Dropped, NodeId, Packet};
use crate::phy::TxVector;
use crate::stack::{DriverKind, QdiscKind, QueueLimit, StackConfig};
use crate::Nanos;

mod stage;
pub use stage::PolledAirtime;

/// BQL's slack hold time (`dql_init(&queue->dql, HZ)`: one second).
const DQL_HOLD_TIME: Nanos = Nanos::from_secs(1);
/// Packets the firmware push loop takes from one TXQ per turn.
const PUSH_BATCH: u32 = 16;
/// PPDUs of one AC queued or in the air when the firmware builds them on demand: one in
/// the air and one built for the next transmission (built only when none is waiting; a
/// retried PPDU goes from the air back to the head, which adds none).
const ON_DEMAND_HW_DEPTH: u32 = 2;

/// A qdisc instance.
#[derive(Clone, Debug)]
enum Qdisc {
    Fifo(Fifo),
    PfifoFast(PfifoFast),
    FqCodel(FqCodel),
}

impl Qdisc {
    fn new(kind: QdiscKind) -> Option<Qdisc> {
        match kind {
            QdiscKind::NoQueue => None,
            QdiscKind::Fifo { limit_packets } => Some(Qdisc::Fifo(Fifo::packets(limit_packets))),
            QdiscKind::PfifoFast { limit_packets } => {
                Some(Qdisc::PfifoFast(PfifoFast::new(limit_packets)))
            }
            QdiscKind::FqCodel => Some(Qdisc::FqCodel(FqCodel::new(FqCodelParams::default()))),
        }
    }

    fn enqueue(&mut self, now: Nanos, p: Packet, drops: &mut Vec<Dropped>) {
        match self {
            Qdisc::Fifo(q) => q.enqueue(now, p, drops),
            Qdisc::PfifoFast(q) => q.enqueue(now, p, drops),
            Qdisc::FqCodel(q) => q.enqueue(now, p, drops),
        }
    }

    fn dequeue(&mut self, now: Nanos, drops: &mut Vec<Dropped>) -> Option<Packet> {
        match self {
            Qdisc::Fifo(q) => q.dequeue(now, drops),
            Qdisc::PfifoFast(q) => q.dequeue(now, drops),
            Qdisc::FqCodel(q) => q.dequeue(now, drops),
        }
    }

    fn len_packets(&self) -> usize {
        match self {
            Qdisc::Fifo(q) => q.len_packets(),
            Qdisc::PfifoFast(q) => q.len_packets(),
            Qdisc::FqCodel(q) => q.len_packets(),
        }
    }
}

/// The packet limit of a qdisc of `kind` (`txqueuelen` over pfifo_fast's bands, the
/// FIFO's limit, fq_codel's `sch->limit`), or `None` without a qdisc.
fn qdisc_limit_packets(kind: QdiscKind) -> Option<u32> {
    match kind {
        QdiscKind::NoQueue => None,
        QdiscKind::Fifo { limit_packets } | QdiscKind::PfifoFast { limit_packets } => {
            Some(limit_packets)
        }
        QdiscKind::FqCodel => Some(FqCodelParams::default().limit),
    }
}

/// A queue of the transmit path that has a limit ([`QueueOccupancy`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathQueue {
    /// The qdisc of one AC, in packets, against its packet limit (`txqueuelen` for
    /// pfifo_fast and the FIFO, `sch->limit` for fq_codel).
    Qdisc,
    /// mac80211's TXQs (fq), packets over all of them, against `fq_limit_packets`
    /// (fq's overload loop drops from the fattest flow above it).
    Txqs,
    /// The driver's or firmware's own queue, packets held until their completion, as
    /// they are handed to it, against `driver_queue_packets` (per AC for ath9k, over
    /// all ACs for the firmware): the netdev queue stops at that limit.
    Driver,
    /// mt76's TX data ring: entries one worker run wrote, against `ndesc − 32`.
    FirmwareRing,
    /// ath9k's `axq_ampdu_depth` of one AC (PPDUs of a block-ack session, probes
    /// aside, queued or in the air) against `hw_queue_ppdus` (`ATH_AGGR_MIN_QDEPTH`).
    HardwareAmpdus,
    /// The hardware queue of one AC: PPDUs queued or in the air, probes on a block-ack
    /// session aside (ath9k's limits do not count them). ath9k: at most 8 − 1 + 2 +
    /// `hw_queue_ppdus` (`ath9k_hw_depth_bound` in [`crate::driver`]); built on
    /// demand: one built and one in the air.
    Hardware,
}

impl PathQueue {
    /// Its name in a message.
    pub fn name(self) -> &'static str {
        match self {
            PathQueue::Qdisc => "qdisc",
            PathQueue::Txqs => "mac80211 TXQs",
            PathQueue::Driver => "driver queue",
            PathQueue::FirmwareRing => "firmware DMA ring",
            PathQueue::HardwareAmpdus => "hardware queue (axq_ampdu_depth)",
            PathQueue::Hardware => "hardware queue",
        }
    }
}

/// The most a queue of one node's transmit path has held so far, against the most it
/// may hold: a model whose `peak` exceeds `limit` is wrong (a queue without bound, as in
/// issue 25), whatever the scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueOccupancy {
    /// The node whose transmit path holds it.
    pub node: NodeId,
    /// Which queue.
    pub queue: PathQueue,
    /// Its AC, for the queues kept per AC.
    pub ac: Option<Ac>,
    /// The most it held (packets, or PPDUs for the hardware queue).
    pub peak: u64,
    /// Its documented limit, in the same unit.
    pub limit: u64,
}

impl QueueOccupancy {
    /// It stayed within its limit.
    pub fn within_limit(&self) -> bool {
        self.peak <= self.limit
    }
}

/// The most the path's queues held so far, noted where each grows
/// ([`TxPath::queue_occupancy`]); the driver notes its own
/// ([`DriverQueues::peak_held`]).
#[derive(Clone, Debug, Default)]
struct QueuePeaks {
    /// Per AC, the qdisc's packets after an enqueue.
    qdisc_packets: [u32; 4],
    /// fq's packets after an enqueue (after its overload drops).
    txqs_packets: u32,
    /// Per AC, [`DriverQueues::hw_ampdu_depth`] after a refill.
    hw_ampdu_ppdus: [u32; 4],
    /// Per AC, [`DriverQueues::hw_depth_bounded`] after a refill, or queued and in the
    /// air when built on demand.
    hw_ppdus: [u32; 4],
}

/// What the path needs to know about one link (peer).
#[derive(Clone, Debug)]
pub(crate) struct PathLink {
    /// How PPDUs to this peer are bounded, per rate its rate control may choose and
    /// per AC.
    pub(crate) limits: RateMap<[BuildLimits; 4]>,
    /// Per AC: PPDUs to this peer are A-MPDUs under block ack.
    pub(crate) aggregated: [bool; 4],
    /// The peer's rate control.
    pub(crate) rc: LinkRateControl,
    /// The rate the last PPDU to this peer went out at (its last try), what AQL
    /// estimates airtime with (`sta->deflink.tx_stats.last_rate`).
    pub(crate) last_rate: RateIdx,
    /// Airtime-fairness weight of the peer station (256 = default).
    pub(crate) weight: u16,
    /// Whether mac80211 would give this station the slow-station CoDel parameters
    /// (expected throughput below 6 Mbit/s × stations, reference §2.2).
    pub(crate) slow_station: bool,
}

/// The outcome of one PPDU, as the MAC reports it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TxReport<'a> {
    /// Per MPDU: acknowledged (ACK, or its bit in the BlockAck).
    pub(crate) acked: &'a [bool],
    /// Attempts after which an unacknowledged MPDU is given up.
    pub(crate) retry_limit: u8,
}

/// AQL as the path runs it: the accounting and the estimator of the era.
#[derive(Clone, Debug)]
struct AqlGate {
    aql: Aql,
    estimator: AqlEstimator,
    /// The kernel's estimate in place of txop's (`None`: txop's, by `estimator`).
    airtime: Option<ExternalAirtimeCode>,
}

/// The kernel's AQL estimate of a packet of `len_bytes` at `txv` (`ampdu`: the
/// TXQ's AC is not VO and the rate aggregates).
// perf: out of line and cold, so that the Rust path's estimate stays as it was.
#[cold]
#[inline(never)]
fn external_estimate(
    code: ExternalAirtimeCode,
    len_bytes: u32,
    txv: &TxVector,
    ampdu: bool,
) -> u32 {
    code.0.expected_tx_airtime_us(len_bytes, txv, ampdu)
}

/// The AQL estimate last stored for one link and AC, and the packet length and rate it
/// was computed for: the estimate depends on nothing else, and most packets of a link
/// have one of few lengths.
#[derive(Clone, Copy, Debug)]
struct AqlEstimateMemo {
    len_bytes: u32,
    rate: RateIdx,
    stored_us: u32,
}

/// One node's transmit path.
#[derive(Clone, Debug)]
pub(crate) struct TxPath {
    cfg: StackConfig,
    qos: bool,
    is_ap: bool,
    links: Vec<PathLink>,
    qdisc: Vec<Qdisc>,
    fq: Option<Fq>,
    sched: Option<Scheduler>,
    aql: Option<AqlGate>,
    /// Per link and AC, the AQL estimate last stored.
    aql_estimate_memo: Vec<[Option<AqlEstimateMemo>; 4]>,
    dql: Option<Vec<Dql>>,
    codel: CodelParams,
    codel_slow: CodelParams,
    drv: DriverQueues,
    /// Where the firmware push loop resumes its turn over the TXQs, per AC: the TXQ
    /// from which it looks for the AC's next one.
    push_rr: [TxqId; 4],
    /// Per AC, its TIDs: without QoS all of them are BE's and the other ACs have none
    /// ([`TxPath::tid_ac`]), so that a kick of another AC (every AC is kicked when a
    /// dozing station wakes) pushes nothing to the firmware under that AC.
    ac_tids: [TidSet; 4],
    /// Per link: its station dozes and the AP holds its frames (§9.1).
    paused: Vec<bool>,
    /// Some link is paused (keeps the checks off the common path).
    any_paused: bool,
    /// The most each queue held so far.
    peaks: QueuePeaks,
    /// Packets dropped since the caller last drained them.
    pub(crate) drops: Vec<Dropped>,
    /// MPDUs given up since the caller last drained them: the recipient must stop
    /// waiting for them.
    pub(crate) gave_up: Vec<GivenUpMpdu>,
    /// Per AC, when the node's last transmission of it ended: where medium access for
    /// a PPDU already waiting begins (`CellStamps::access_at`).
    access_from: [Nanos; 4],
    /// Per link: its peer's PHY class, which sets its advertised A-MSDU limit.
    amsdu_peer: Vec<PeerClass>,
    /// The MSDUs of this node's A-MSDUs until their carriers are done with.
    pub(crate) amsdu: AmsduStore,
}

/// An MPDU the path gave up after its last allowed attempt, as the recipient's reorder
/// buffer knows it: it must stop waiting for that sequence number
/// ([`RxReorder::give_up`](crate::mac::blockack::RxReorder::give_up)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct GivenUpMpdu {
    /// The link it was sent on.
    pub(crate) link: LinkId,
    /// Its TID.
    pub(crate) tid: Tid,
    /// Its sequence number.
    pub(crate) seq: u64,
}

impl TxPath {
    /// `fq_memory_limit` is resolved by the caller (16 MiB with VHT, 4 MiB without).
    pub(crate) fn new(
        cfg: &StackConfig,
        qos: bool,
        is_ap: bool,
        links: Vec<PathLink>,
        fq_memory_limit_bytes: u64,
    ) -> TxPath {
        let n = links.len();
        let amsdu_peer = links
            .iter()
            .map(|l| PeerClass::of(l.rc.rate_set().into_iter().map(|(_, t)| t)))
            .collect();
        let qdisc = match Qdisc::new(cfg.qdisc) {
            Some(q) => vec![q; 4],
            None => Vec::new(),
        };
        let (fq, sched) = if cfg.mac80211_txqs {
            let mut fq = Fq::new(
                FqParams {
                    flows: cfg.fq_flows,
                    quantum_bytes: cfg.fq_quantum_bytes,
                    limit_packets: cfg.fq_limit_packets,
                    memory_limit_bytes: fq_memory_limit_bytes,
                },
                cfg.fq_setup(),
            );
            // One tin per TXQ, in TXQ order.
            for i in 0..TxqId::first_of_link(n).index() {
                let tin = fq.add_tin();
                debug_assert_eq!(tin, TxqId::from_index(i));
            }
            let params = SchedulerParams {
                kind: cfg.scheduler,
                airtime_flags: cfg.airtime_flags,
                quantum_shift: cfg.quantum_shift,
                may_transmit_aql_check: cfg.may_transmit_aql_check,
            };
            let mut sched = match cfg.scheduler_code {
                Some(code) => Scheduler::with_code(params, n, code),
                None => Scheduler::new(params, n),
            };
            for (link, l) in LinkId::all(n).zip(&links) {
                sched.set_weight(link, l.weight);
            }
            (Some(fq), Some(sched))
        } else {
            (None, None)
        };
        let aql = match cfg.queue_limit {
            QueueLimit::Aql { params, estimator } if cfg.mac80211_txqs => Some(AqlGate {
                aql: Aql::new(params, n),
                estimator,
                airtime: cfg.airtime_code,
            }),
            _ => None,
        };
        let dql = match cfg.queue_limit {
            QueueLimit::Dql => Some(
                (0..4)
                    .map(|_| Dql::new(DQL_HOLD_TIME, Nanos::ZERO))
                    .collect(),
            ),
            _ => None,
        };
        TxPath {
            codel: cfg.codel_params(),
            codel_slow: CodelParams::mac80211_slow_station(),
            cfg: cfg.clone(),
            qos,
            is_ap,
            links,
            qdisc,
            fq,
            sched,
            aql,
            aql_estimate_memo: vec![[None; 4]; n],
            dql,
            drv: DriverQueues::new(n),
            push_rr: [TxqId::from_index(0); 4],
            ac_tids: Ac::ALL.map(|ac| {
                TidSet::from_fn(|tid| {
                    if qos {
                        Ac::from_up(tid.0) == ac
                    } else {
                        ac == Ac::Be
                    }
                })
            }),
            paused: vec![false; n],
            any_paused: false,
            peaks: QueuePeaks::default(),
            drops: Vec::new(),
            gave_up: Vec::new(),
            access_from: [Nanos::ZERO; 4],
            amsdu_peer,
            amsdu: AmsduStore::default(),
        }
    }

    /// The link a packet for `dst` leaves on, or `None` if `dst` is not at the other
    /// end of one of the node's links.
    pub(crate) fn link_to(&self, dst: NodeId) -> Option<LinkId> {
        if self.is_ap {
            let link = dst.as_station()?.ap_link();
            (link.index() < self.links.len()).then_some(link)
        } else {
            dst.is_ap().then_some(LinkId(0))
        }
    }

    fn ac_of(&self, p: &Packet) -> Ac {
        self.tid_ac(Tid(p.tid))
    }

    fn tid_ac(&self, tid: Tid) -> Ac {
        if self.qos {
            Ac::from_up(tid.0)
        } else {
            Ac::Be
        }
    }

    /// The AC `packet` will be queued in (after DSCP classification, as
    /// [`TxPath::enqueue`] does it).
    pub(crate) fn classify_ac(&self, packet: &Packet) -> Ac {
        if !self.qos {
            Ac::Be
        } else if packet.dscp != 0 {
            Ac::from_up(dscp_to_up(packet.dscp, self.cfg.dscp_mapping))
        } else {
            Ac::from_up(packet.tid)
        }
    }

    fn is_paused(&self, link: LinkId) -> bool {
        self.any_paused && self.paused[link.index()]
    }

    /// The station of `link` starts power saving (`sta_ps_start`, §9.1): its TXQs leave
    /// the scheduler, the driver stops serving it and takes back the PPDUs it had built
    /// for it. Its frames stay where they are until [`TxPath::resume_link`].
    pub(crate) fn pause_link(&mut self, now: Nanos, link: LinkId) {
        if self.paused[link.index()] {
            return;
        }
        self.paused[link.index()] = true;
        self.any_paused = true;
        self.drv.pause(link);
        if let Some(s) = self.sched.as_mut() {
            for tid in Tid::all() {
                let ac = if self.qos { Ac::from_up(tid.0) } else { Ac::Be };
                s.unschedule_txq(now, TxqKey::station(link, tid), ac);
            }
        }
    }

    /// The station of `link` woke: its TXQs are rescheduled (`schedule_and_wake_txq`)
    /// and the driver serves it again.
    pub(crate) fn resume_link(&mut self, now: Nanos, link: LinkId) {
        if !self.paused[link.index()] {
            return;
        }
        self.paused[link.index()] = false;
        self.any_paused = self.paused.iter().any(|&p| p);
        let qos = self.qos;
        self.drv
            .resume(link, |tid| if qos { Ac::from_up(tid.0) } else { Ac::Be });
        if self.fq.is_some() {
            for tid in Tid::all() {
                let txq = TxqId::new(link, tid);
                if self.txq_has_data(txq) {
                    self.schedule_txq(now, txq, self.tid_ac(tid));
                }
            }
        }
        for ac in Ac::ALL {
            self.kick(now, ac);
        }
    }

    /// Packets held for `link` in its TXQs and the driver (not the shared qdisc, not
    /// the air).
    pub(crate) fn link_backlog_packets(&self, link: LinkId) -> u64 {
        let fq = self.fq.as_ref().map_or(0, |fq| {
            Tid::all()
                .map(|tid| fq.tin_backlog(TxqId::new(link, tid)).packets as u64)
                .sum()
        });
        fq + self.drv.link_packets(link) as u64
    }

    /// Packets the netdev's qdisc would hold while its queues are stopped
    /// (`!qdisc_all_tx_empty`, what the scan's DECISION looks at, §7.4): the qdisc and,
    /// without mac80211 TXQs, everything below it not yet in the air (the model keeps
    /// feeding the driver where the kernel's stopped queues would keep the packets in
    /// the qdisc). With TXQs and no qdisc this is 0, as in the kernel.
    pub(crate) fn netdev_backlog_packets(&self) -> u64 {
        let q: usize = self.qdisc.iter().map(|q| q.len_packets()).sum();
        let drv = if self.fq.is_none() {
            self.drv.packets()
        } else {
            0
        };
        q as u64 + drv
    }

    /// A packet from the host (or the wired side) for `link`.
    pub(crate) fn enqueue(&mut self, now: Nanos, link: LinkId, mut packet: Packet) {
        if !self.qos {
            packet.tid = 0;
        } else if packet.dscp != 0 {
            packet.tid = dscp_to_up(packet.dscp, self.cfg.dscp_mapping);
        }
        let ac = self.ac_of(&packet);
        let txq = TxqId::new(link, Tid(packet.tid));
        // It leaves the qdisc now under noqueue; a qdisc stamps it again at dequeue
        // (`pump_qdisc`).
        packet.set_txq_at(now);
        if let Some(q) = self.qdisc.get_mut(ac.index()) {
            q.enqueue(now, packet, &mut self.drops);
            let peak = &mut self.peaks.qdisc_packets[ac.index()];
            *peak = (*peak).max(q.len_packets() as u32);
        } else if self.fq.is_some() {
            self.enqueue_txq(now, txq, packet, ac);
        } else if self.driver_room(ac) {
            packet.queued_at = now;
            self.drv.hold(txq, ac, packet);
            self.dql_queued(ac, packet.len_bytes);
        } else {
            // noqueue on a stopped device: the packet is dropped.
            self.drops.push(Dropped {
                packet,
                reason: DropReason::QueueFull,
            });
        }
        self.kick(now, ac);
    }

    /// Into its TXQ (`ieee80211_txq_enqueue`), and schedule it; or, with A-MSDU, into
    /// the tail frame of its flow if it may join it (the TXQ is then scheduled
    /// already).
    fn enqueue_txq(&mut self, now: Nanos, txq: TxqId, packet: Packet, ac: Ac) {
        if self.cfg.amsdu.enabled && self.join_amsdu(txq, &packet) {
            return;
        }
        if let Some(fq) = self.fq.as_mut() {
            fq.enqueue(now, txq, packet, &mut self.drops);
            self.peaks.txqs_packets = self.peaks.txqs_packets.max(fq.backlog_packets());
        }
        self.schedule_txq(now, txq, ac);
    }

    /// `ieee80211_amsdu_aggregate` (reference §16.2): `packet` joins the tail frame
    /// of its fq flow if the peer, rate control and driver limits allow. Only QoS data
    /// to an HT/VHT/HE peer that is not dozing (the kernel's fast-xmit path, which a
    /// station in power save leaves).
    #[cold]
    #[inline(never)]
    fn join_amsdu(&mut self, txq: TxqId, packet: &Packet) -> bool {
        let link = txq.link();
        if !self.qos || self.is_paused(link) {
            return false;
        }
        let class = self.amsdu_peer[link.index()];
        let peer_max = class.max_len_bytes(self.cfg.amsdu.max_len_bytes);
        if peer_max == 0 {
            return false;
        }
        let rc_cap = match &self.links[link.index()].rc {
            LinkRateControl::MinstrelHt(m) => amsdu::minstrel_cap_bytes(m, class == PeerClass::Vht),
            // `max_rc_amsdu_len` as `sta_info.c` starts it, for a rate control that
            // never sets it.
            _ => Some(amsdu::MAX_LEN_HT_BA),
        };
        let limits = JoinLimits {
            max_len_bytes: amsdu::effective_max_len(peer_max, rc_cap),
            max_subframes: self.cfg.amsdu.max_subframes,
            max_frags: self.cfg.amsdu.max_frags,
        };
        let (Some(fq), store) = (self.fq.as_mut(), &mut self.amsdu) else {
            return false;
        };
        fq.join_tail(txq, packet, |tail| {
            let len = amsdu::join(tail.len_bytes, tail.amsdu_msdus, packet.len_bytes, &limits)?;
            store.joined(tail, *packet);
            tail.amsdu_msdus = tail.amsdu_msdus.max(1) + 1;
            Some(len)
        })
    }

    /// `ieee80211_schedule_txq`: the TXQ has data for the scheduler.
    fn schedule_txq(&mut self, now: Nanos, txq: TxqId, ac: Ac) {
        if self.is_paused(txq.link()) {
            return;
        }
        if let Some(s) = self.sched.as_mut() {
            s.schedule_txq(now, TxqKey::from(txq), ac);
        }
    }

    /// Whether the driver/firmware takes another packet for `ac` (else its netdev queue
    /// is stopped).
    fn driver_room(&self, ac: Ac) -> bool {
        let room = match self.cfg.driver {
            DriverKind::Ath9k => self.drv.held(ac) < self.cfg.driver_queue_packets,
            DriverKind::Firmware => self.drv.held_total() < self.cfg.driver_queue_packets,
        };
        room && self.dql_allows(ac)
    }

    /// DQL (if configured) lets the driver take more of `ac`: `dql_avail() >= 0`.
    fn dql_allows(&self, ac: Ac) -> bool {
        self.dql.as_ref().is_none_or(|d| d[ac.index()].avail() >= 0)
    }

    fn dql_queued(&mut self, ac: Ac, bytes: u32) {
        if let Some(d) = self.dql.as_mut() {
            d[ac.index()].queued(bytes);
        }
    }

    /// Move packets down the path for `ac` and refill the hardware queue.
    #[inline]
    pub(crate) fn kick(&mut self, now: Nanos, ac: Ac) {
        self.kick_with(now, ac, false);
    }

    /// [`TxPath::kick`]; with `check_busy`, the firmware push loop is entered only if
    /// some TXQ of the AC lists a flow ([`Fq::busy_tins`]). Equivalent: the push loop
    /// visits only such TXQs and returns at once, changing nothing, when there is none.
    // perf: worth checking only where it may say no: after a transmission (the TXQs
    // have often been drained into the firmware by then), not after an enqueue into a
    // TXQ (which always leaves the TXQ's tin listed).
    #[inline(always)]
    fn kick_with(&mut self, now: Nanos, ac: Ac, check_busy: bool) {
        if !self.qdisc.is_empty() {
            self.pump_qdisc(now, ac);
        }
        if self
            .fq
            .as_ref()
            .is_some_and(|fq| !check_busy || fq.busy_tins().any_of(self.ac_tids[ac.index()]))
            && self.cfg.driver == DriverKind::Firmware
            && !self.links.is_empty()
            && !self.aql_holds_all(ac)
        {
            self.push_firmware(now, ac);
        }
        if !self.on_demand() {
            self.refill(now, ac);
        }
    }

    /// AQL holds every station back on `ac` (most packets of a saturating download
    /// arrive then): a visit of the firmware push loop would give nothing and change
    /// nothing (`dequeue_txq` checks AQL before it touches the TXQ). Said only with few
    /// stations (AQL keeps no eligibility set): with many, the push loop's search skips
    /// the held-back stations itself.
    // perf: checked before the push loop is entered, so that a kick that finds nothing
    // to do returns without the loop's setup.
    #[inline]
    fn aql_holds_all(&self, ac: Ac) -> bool {
        self.aql.as_ref().is_some_and(|gate| {
            gate.aql.eligible_stations(ac).is_none()
                && !LinkId::all(self.links.len()).any(|s| gate.aql.station_eligible(s, ac))
        })
    }

    /// qdisc → driver (or → TXQs if both are configured) while there is room.
    fn pump_qdisc(&mut self, now: Nanos, ac: Ac) {
        loop {
            let to_txqs = self.fq.is_some();
            if !to_txqs && !self.driver_room(ac) {
                break;
            }
            let Some(mut p) = self.qdisc[ac.index()].dequeue(now, &mut self.drops) else {
                break;
            };
            let Some(link) = self.link_to(if self.is_ap { p.dst } else { NodeId::AP }) else {
                self.drops.push(Dropped {
                    packet: p,
                    reason: DropReason::NoRoute,
                });
                continue;
            };
            let txq = TxqId::new(link, Tid(p.tid));
            p.set_txq_at(now);
            if to_txqs {
                self.enqueue_txq(now, txq, p, ac);
            } else {
                p.queued_at = now;
                let len = p.len_bytes;
                self.drv.hold(txq, ac, p);
                self.dql_queued(ac, len);
            }
        }
    }

    /// `ieee80211_tx_dequeue`: AQL gate, fq + CoDel, then the accounting of what
    /// leaves the TXQ: DQL counts it as queued in the driver and AQL charges its
    /// airtime estimate.
    #[inline(always)]
    fn dequeue_txq(&mut self, now: Nanos, txq: TxqId, ac: Ac) -> Option<Packet> {
        let link = txq.link();
        if self.is_paused(link) {
            return None;
        }
        if let Some(gate) = self.aql.as_ref() {
            if !gate.aql.station_eligible(link, ac) {
                return None;
            }
        }
        let codel = if self.cfg.per_station_codel && self.links[link.index()].slow_station {
            &self.codel_slow
        } else {
            &self.codel
        };
        // perf: the packet stays in the `Option` fq returns (not taken out and
        // wrapped again), which spares copies of it.
        let mut packet = self.fq.as_mut()?.dequeue(now, txq, codel, &mut self.drops);
        let Some(p) = packet.as_mut() else {
            return packet;
        };
        p.queued_at = now;
        // What leaves the TXQ is the driver's now: DQL counts it as queued
        // (`dql_queued`), whichever way the driver takes it (ath9k pulls, the firmware
        // is pushed to); `tx_done` completes it.
        self.dql_queued(ac, p.len_bytes);
        if let Some(gate) = self.aql.as_mut() {
            let memo = &mut self.aql_estimate_memo[link.index()][ac.index()];
            let l = &self.links[link.index()];
            let stored = match *memo {
                Some(m) if m.len_bytes == p.len_bytes && m.rate == l.last_rate => m.stored_us,
                _ => {
                    let limits = &l.limits.get(l.last_rate)[ac.index()];
                    let est = match gate.airtime {
                        None => expected_tx_airtime_us(
                            p.len_bytes,
                            Some(&limits.txv),
                            limits.aggregated,
                            gate.estimator,
                        ),
                        Some(code) => {
                            external_estimate(code, p.len_bytes, &limits.txv, limits.aggregated)
                        }
                    };
                    let stored_us = stored_tx_time_est_us(est);
                    *memo = Some(AqlEstimateMemo {
                        len_bytes: p.len_bytes,
                        rate: l.last_rate,
                        stored_us,
                    });
                    stored_us
                }
            };
            p.aql_us = stored as u16;
            if stored > 0 {
                gate.aql.add(link, ac, stored);
            }
        }
        packet
    }

    /// The TXQ holds packets, in fq or in the driver.
    fn txq_has_data(&self, txq: TxqId) -> bool {
        self.fq
            .as_ref()
            .is_some_and(|fq| fq.tin_backlog(txq).packets > 0)
            || self.drv.queued(txq) > 0
    }

    /// `ieee80211_txq_schedule_start` with the 6.0 per-AC AQL check.
    fn schedule_start(&mut self, now: Nanos, ac: Ac) {
        let aql = self.aql.as_ref().map(|gate| &gate.aql);
        if let Some(s) = self.sched.as_mut() {
            s.schedule_start(now, ac, &|n_active| {
                aql.is_some_and(|a| a.ac_over_limit(ac, n_active))
            });
        }
    }

    /// The scheduler's next TXQ for `ac`, with AQL eligibility.
    fn next_txq(&mut self, now: Nanos, ac: Ac) -> Option<TxqId> {
        let aql = self.aql.as_ref().map(|gate| &gate.aql);
        let sched = self.sched.as_mut()?;
        let mut eligible = |k: TxqKey| match (aql, k.sta) {
            (Some(a), Some(sta)) => a.station_eligible(sta, ac),
            _ => true,
        };
        let pending = |sta: LinkId| aql.map_or(0, |a| a.pending_us(sta, ac));
        sched.next_txq(now, ac, &mut eligible, &pending)?.txq()
    }

    /// `ieee80211_return_txq`: the driver is done with `txq` for now.
    fn return_txq(&mut self, now: Nanos, txq: TxqId, ac: Ac) {
        let has = self.txq_has_data(txq);
        let aql = self.aql.as_ref().map(|gate| &gate.aql);
        if let Some(s) = self.sched.as_mut() {
            let pending = |sta: LinkId| aql.map_or(0, |a| a.pending_us(sta, ac));
            s.return_txq(now, TxqKey::from(txq), ac, has, &pending);
        }
    }

    /// Pull-push firmware: move packets from the TXQs into the firmware while it has
    /// room and AQL/DQL allow, visiting the AC's TXQs in turn. The airtime scheduler is
    /// not run here: the firmware consults it when it picks what to send
    /// ([`TxPath::build_on_demand`], `ieee80211_txq_may_transmit`), as ath10k's fetch
    /// requests do; running `next_txq` on every push would keep topping up deficits and
    /// erase the scheduler's decisions.
    ///
    /// The caller ([`TxPath::kick`]) has checked that there are links and that AQL
    /// does not hold every station back ([`TxPath::aql_holds_all`]).
    #[inline(never)]
    fn push_firmware(&mut self, now: Nanos, ac: Ac) {
        if !self.cfg.firmware.asks_may_transmit() {
            return self.run_firmware_stage(now, ac);
        }
        // One turn visits the AC's TXQs in TXQ order from where the last one that gave
        // packets left off, wrapping around. A TXQ whose tin lists no flow gives
        // nothing and changes nothing when dequeued, so only the others are visited
        // (fq's set of busy tins), and of them the AC's TIDs.
        let start = self.push_rr[ac.index()];
        let end = TxqId::first_of_link(self.links.len());
        let tids = self.ac_tids[ac.index()];
        let (mut from, mut to, mut wrapped) = (start, end, false);
        while self.driver_room(ac) {
            // Stations AQL holds back give nothing and change nothing when dequeued
            // either: with many stations, AQL's set of eligible stations keeps them
            // out of the search.
            let eligible = self
                .aql
                .as_ref()
                .and_then(|gate| gate.aql.eligible_stations(ac));
            let Some(tins) = self.fq.as_ref().map(Fq::busy_tins) else {
                return;
            };
            let mut busy = tins.first_in(from..to, tids, eligible);
            if busy.is_none() && !wrapped {
                // The search reached the end of the turn: go on from the first TXQ at
                // once (nothing changed since the room and the eligibility above were
                // checked, so another pass of the loop would find the same).
                (from, to, wrapped) = (TxqId::from_index(0), start, true);
                busy = tins.first_in(from..to, tids, eligible);
            }
            let Some(txq) = busy else {
                break;
            };
            from = TxqId::from_index(txq.index() + 1);
            let mut pushed = 0;
            while pushed < PUSH_BATCH && self.driver_room(ac) {
                let Some(p) = self.dequeue_txq(now, txq, ac) else {
                    break;
                };
                self.drv.hold(txq, ac, p);
                pushed += 1;
            }
            if pushed > 0 {
                // The next turn starts at the TXQ after this one (past the last
                // station's, the search finds none and wraps to the first).
                self.push_rr[ac.index()] = if from >= end {
                    TxqId::from_index(0)
                } else {
                    from
                };
            }
        }
    }

    /// Does the driver build PPDUs only when the MAC asks (firmware-style)?
    fn on_demand(&self) -> bool {
        self.cfg.hw_queue_ppdus == 0
    }

    /// ath9k's `ath_txq_schedule`: serve TIDs in turn (the driver's round robin, or the
    /// scheduler's TXQs) while the hardware queue has room, as `ath_tx_sched_aggr`
    /// decides it per TID (drivers/net/wireless/ath/ath9k/xmit.c): a TID with a
    /// block-ack session only while fewer than `hw_queue_ppdus` PPDUs count in
    /// `axq_ampdu_depth` (`ATH_AGGR_MIN_QDEPTH`), one PPDU at a time; a TID without one
    /// only while fewer than 8 PPDUs are queued or in the air (`axq_depth` against
    /// `ATH_NON_AGGR_MIN_QDEPTH`), in bursts of at most 2 frames. `axq_ampdu_depth`
    /// counts every frame of a session but probes (`bf_is_ampdu_not_probing`), also one
    /// that goes out alone because its chain holds a legacy rate (`ath_lookup_rate`
    /// returns an aggregate limit of 0, the frame stays `BUF_AMPDU`): counting only
    /// A-MPDUs let a station whose chains fell back to CCK fill the hardware queue
    /// without bound (issue 25). The first TID that cannot be served ends the pass and
    /// goes to the back of the list. Nothing to do when PPDUs are built on demand.
    #[inline(never)]
    fn refill(&mut self, now: Nanos, ac: Ac) {
        if self.on_demand() {
            return;
        }
        let pulls = self.fq.is_some() && self.cfg.driver == DriverKind::Ath9k;
        if pulls {
            self.schedule_start(now, ac);
        }
        let mut tries = 0;
        let mut built = false;
        while tries < 4 * TxqId::first_of_link(self.links.len()).index() + 8 {
            tries += 1;
            if pulls && !self.dql_allows(ac) {
                // Every pull would be refused: the TXQs keep their packets.
                break;
            }
            let next = if pulls {
                self.next_txq(now, ac)
            } else {
                self.drv.next_active(ac)
            };
            let Some(txq) = next else {
                break;
            };
            if self.is_paused(txq.link()) {
                // A dozing station's TXQ the scheduler still held (ath9k's airtime
                // accounting can list it again): take it out and go on.
                if let Some(s) = self.sched.as_mut() {
                    s.unschedule_txq(now, TxqKey::from(txq), ac);
                }
                continue;
            }
            let aggregated = self.links[txq.link().index()].aggregated[ac.index()];
            let full = if aggregated {
                self.drv.hw_ampdu_depth(ac) >= self.cfg.hw_queue_ppdus
            } else {
                self.drv.hw_depth(ac) >= ATH_NON_AGGR_MIN_QDEPTH
            };
            if full {
                if pulls {
                    self.return_txq(now, txq, ac);
                } else {
                    self.drv.skip(ac);
                }
                break;
            }
            let ppdus = if aggregated { 1 } else { ATH_BURST_FRAMES };
            let mut served = false;
            for _ in 0..ppdus {
                let (chain, limits) = self.next_chain(now, txq.link(), ac);
                let ppdu = if pulls {
                    // Split borrows: the builder pulls from the TXQ through `dequeue_txq`.
                    // With DQL in front of the driver, a pull is refused while the AC's
                    // limit is used up (the netdev queue is stopped), as the firmware
                    // push loop's `driver_room` refuses it.
                    let mut drv = std::mem::replace(&mut self.drv, DriverQueues::new(0));
                    let ppdu = drv.build(txq, ac, &limits, aggregated, chain, now, &mut || {
                        if !self.dql_allows(ac) {
                            return None;
                        }
                        self.dequeue_txq(now, txq, ac)
                    });
                    self.drv = drv;
                    ppdu
                } else {
                    self.drv
                        .build(txq, ac, &limits, aggregated, chain, now, &mut || None)
                };
                match ppdu {
                    Some(p) => {
                        self.drv.hw[ac.index()].push_back(p);
                        built = true;
                        served = true;
                    }
                    None => break,
                }
            }
            if pulls {
                self.return_txq(now, txq, ac);
                // ath9k's own scheduler (4.11–4.20) ends its pass at the first TXQ it
                // could not serve; that TXQ stays at the head of its list.
                if !served
                    && self
                        .sched
                        .as_ref()
                        .is_some_and(Scheduler::pass_ends_when_unserved)
                {
                    break;
                }
            }
        }
        if built {
            self.note_hw_peaks(ac);
        }
    }

    /// Note the hardware queue's depths of `ac` after it grew ([`QueuePeaks`]).
    fn note_hw_peaks(&mut self, ac: Ac) {
        let i = ac.index();
        let (ampdus, ppdus) = if self.on_demand() {
            (0, self.drv.hw_depth(ac))
        } else {
            (self.drv.hw_ampdu_depth(ac), self.drv.hw_depth_bounded(ac))
        };
        self.peaks.hw_ampdu_ppdus[i] = self.peaks.hw_ampdu_ppdus[i].max(ampdus);
        self.peaks.hw_ppdus[i] = self.peaks.hw_ppdus[i].max(ppdus);
    }

    /// The most each of the path's bounded queues has held so far, against its limit
    /// ([`QueueOccupancy`]): the qdisc and the hardware queue per AC, mac80211's TXQs,
    /// the driver's queue (per AC for ath9k, one for the firmware).
    pub(crate) fn queue_occupancy(&self, node: NodeId) -> Vec<QueueOccupancy> {
        let mut out = Vec::new();
        let per_ac = |queue, ac: Ac, peak: u32, limit: u32| QueueOccupancy {
            node,
            queue,
            ac: Some(ac),
            peak: u64::from(peak),
            limit: u64::from(limit),
        };
        if let Some(limit) = qdisc_limit_packets(self.cfg.qdisc) {
            for ac in Ac::ALL {
                let peak = self.peaks.qdisc_packets[ac.index()];
                out.push(per_ac(PathQueue::Qdisc, ac, peak, limit));
            }
        }
        if self.fq.is_some() {
            out.push(QueueOccupancy {
                node,
                queue: PathQueue::Txqs,
                ac: None,
                peak: u64::from(self.peaks.txqs_packets),
                limit: u64::from(self.cfg.fq_limit_packets),
            });
        }
        let limit = self.cfg.driver_queue_packets;
        match self.cfg.driver {
            DriverKind::Ath9k => {
                for ac in Ac::ALL {
                    let peak = self.drv.peak_held(ac);
                    out.push(per_ac(PathQueue::Driver, ac, peak, limit));
                }
            }
            DriverKind::Firmware => out.push(QueueOccupancy {
                node,
                queue: PathQueue::Driver,
                ac: None,
                peak: u64::from(self.drv.peak_held_total()),
                limit: u64::from(limit),
            }),
        }
        for ac in Ac::ALL {
            let (ampdus, ppdus) = (
                self.peaks.hw_ampdu_ppdus[ac.index()],
                self.peaks.hw_ppdus[ac.index()],
            );
            if self.on_demand() {
                out.push(per_ac(PathQueue::Hardware, ac, ppdus, ON_DEMAND_HW_DEPTH));
            } else {
                let limit = self.cfg.hw_queue_ppdus;
                out.push(per_ac(PathQueue::HardwareAmpdus, ac, ampdus, limit));
                let bound = ath9k_hw_depth_bound(limit);
                out.push(per_ac(PathQueue::Hardware, ac, ppdus, bound));
            }
        }
        out
    }

    /// Is a PPDU ready for `ac` (or, on demand, could one be built)?
    pub(crate) fn has_ppdu(&self, ac: Ac) -> bool {
        !self.drv.hw[ac.index()].is_empty()
            || (self.on_demand() && self.drv.next_active(ac).is_some())
    }

    /// On demand: build the next PPDU of `ac` from the driver's (firmware's) round robin.
    /// With mac80211 TXQs the firmware asks mac80211 before it serves a TXQ
    /// (`ieee80211_txq_may_transmit`, ath10k pull mode): a station over its airtime share
    /// is passed over for now, which is how airtime fairness reaches firmware-scheduled
    /// drivers. The firmware keeps asking: every refusal tops the refused station's
    /// deficit up by its quantum (its weight, 256 µs by default) while an exchange
    /// charges several ms, so it may take tens of rounds; the bound only guards against
    /// a scheduler that never says yes.
    #[inline]
    fn build_on_demand(&mut self, now: Nanos, ac: Ac) {
        if !self.on_demand() || !self.drv.hw[ac.index()].is_empty() {
            return;
        }
        self.build_on_demand_now(now, ac);
    }

    /// [`TxPath::build_on_demand`] once no PPDU is waiting: the firmware serves the
    /// front of its round robin, asking mac80211 first, and builds one PPDU.
    // perf: out of line, so that the frequent calls that find a PPDU waiting (every
    // `take_ppdu` after a `peek_ppdu`) return without this function's prologue.
    #[inline(never)]
    fn build_on_demand_now(&mut self, now: Nanos, ac: Ac) {
        let gated =
            self.sched.is_some() && self.fq.is_some() && self.cfg.firmware.asks_may_transmit();
        let passes = 256 * self.drv.active_len(ac);
        let mut attempt = 0;
        while attempt <= passes {
            let Some(txq) = self.drv.next_active(ac) else {
                return;
            };
            if gated && attempt < passes {
                // A refused TXQ is passed over for the next in the firmware's round
                // robin; one alone there is asked again at once.
                let max_asks = if self.drv.active_len(ac) == 1 {
                    (passes - attempt) as u32
                } else {
                    1
                };
                let answers = self.may_transmit(now, txq, ac, max_asks);
                attempt += answers.refusals as usize;
                if !answers.allowed {
                    self.drv.skip(ac);
                    continue;
                }
            }
            let (chain, limits) = self.next_chain(now, txq.link(), ac);
            let ba_session = self.links[txq.link().index()].aggregated[ac.index()];
            if let Some(p) = self
                .drv
                .build(txq, ac, &limits, ba_session, chain, now, &mut || None)
            {
                self.drv.hw[ac.index()].push_back(p);
                self.note_hw_peaks(ac);
            }
            if gated {
                self.return_txq(now, txq, ac);
            }
            return;
        }
    }

    /// Rate control's chain for the next PPDU to `link` of `ac`, and the limits that
    /// PPDU is built within, as ath9k's `ath_lookup_rate` sets them: those of the
    /// chain's first rate, an aggregate that fits the duration limit at the slowest
    /// rate of the chain (the least of the stages' `max_aggr_framelen`), so that a chain
    /// falling back to a slow rate shrinks the aggregate; and no aggregation at all for
    /// a probe ("if rate selected is a probe rate then avoid aggregation of this
    /// packet") or a chain with a legacy rate (an A-MPDU goes only in an HT or VHT
    /// PPDU). The firmware's stand-in rate control is held to the same rules.
    fn next_chain(&mut self, now: Nanos, link: LinkId, ac: Ac) -> (RateChain, BuildLimits) {
        let l = &mut self.links[link.index()];
        let chain = l.rc.rates(now, l.aggregated[ac.index()]);
        let mut limits = l.limits.get(chain.first().rate)[ac.index()];
        if chain.stages().len() > 1 || chain.probe {
            for s in &chain.stages()[1..] {
                let other = &l.limits.get(s.rate)[ac.index()];
                // `None` (nothing fits) is the least.
                limits.max_duration_psdu_bytes = limits
                    .max_duration_psdu_bytes
                    .min(other.max_duration_psdu_bytes);
                limits.aggregated &= other.aggregated;
            }
            limits.aggregated &= !chain.probe;
        }
        (chain, limits)
    }

    /// `ieee80211_txq_may_transmit` for `txq`, asked up to `max_asks` times in a row
    /// until it allows ([`Scheduler::may_transmit_asking`]).
    fn may_transmit(
        &mut self,
        now: Nanos,
        txq: TxqId,
        ac: Ac,
        max_asks: u32,
    ) -> MayTransmitAnswers {
        let aql = self.aql.as_ref().map(|gate| &gate.aql);
        let Some(sched) = self.sched.as_mut() else {
            return MayTransmitAnswers {
                refusals: 0,
                allowed: true,
            };
        };
        let mut eligible = |k: TxqKey| match (aql, k.sta) {
            (Some(a), Some(sta)) => a.station_eligible(sta, ac),
            _ => true,
        };
        let pending = |sta: LinkId| aql.map_or(0, |a| a.pending_us(sta, ac));
        let over = |n_active: usize| aql.is_some_and(|a| a.ac_over_limit(ac, n_active));
        sched.may_transmit_asking(
            now,
            TxqKey::from(txq),
            ac,
            max_asks,
            &mut eligible,
            &pending,
            &over,
        )
    }

    /// The next PPDU of `ac` (built now if the driver builds on demand).
    pub(crate) fn peek_ppdu(&mut self, now: Nanos, ac: Ac) -> Option<&Ppdu> {
        self.build_on_demand(now, ac);
        self.drv.hw[ac.index()].front()
    }

    /// The MAC takes the next PPDU of `ac` for transmission.
    pub(crate) fn take_ppdu(&mut self, now: Nanos, ac: Ac) -> Option<Ppdu> {
        self.build_on_demand(now, ac);
        let mut p = self.drv.hw[ac.index()].pop_front()?;
        self.drv.air_started(&p);
        let access_from = self.access_from[ac.index()];
        for m in p.mpdus.iter_mut() {
            m.tries.tried(now, access_from, m.packet.queued_at);
        }
        Some(p)
    }

    /// A transmission of a PPDU ended. Unanswered, with tries left in its chain, it is
    /// retried by the hardware in place (back to the head of the hardware queue; a lone
    /// MPDU also only below the retry limit). Otherwise rate control gets the status,
    /// and each MPDU is settled (acknowledged, retried, or given up) before a refill:
    /// failed subframes of an A-MPDU go back to the driver for software retransmission.
    pub(crate) fn tx_done(&mut self, now: Nanos, ppdu: Ppdu, report: TxReport<'_>) {
        let ac = ppdu.ac;
        self.access_from[ac.index()] = now;
        self.drv.air_ended(&ppdu);
        let txq = ppdu.txq();
        let acked_mpdus = report.acked.iter().filter(|&&a| a).count() as u16;
        // An MPDU is given up after the retry limit or its chain's tries, whichever is
        // more (a fixed-rate lone MPDU's chain is the retry limit; minstrel_ht's may be
        // longer, and its last stages are its most robust rates).
        let total = ppdu.chain.total_tries();
        let mpdu_limit = total.max(u32::from(report.retry_limit));
        if acked_mpdus == 0
            && ppdu.tries < total
            && (ppdu.aggregated
                || ppdu
                    .mpdus
                    .first()
                    .is_some_and(|m| u32::from(m.attempts) < mpdu_limit))
        {
            self.drv.hw[ac.index()].push_front(ppdu);
            return;
        }
        let l = &mut self.links[ppdu.link.index()];
        l.last_rate = ppdu
            .chain
            .stage_of_try(ppdu.tries.saturating_sub(1))
            .map_or(l.last_rate, |s| s.rate);
        l.rc.tx_status(
            now,
            &TxStatus {
                chain: &ppdu.chain,
                tries_used: ppdu.tries.max(1),
                acked: acked_mpdus > 0,
                ampdu_len: ppdu.mpdus.len() as u16,
                ampdu_ack_len: acked_mpdus,
            },
        );
        let mut requeued = false;
        let mut completed_bytes = 0;
        // perf: by reference (a drain would copy each MPDU out of the vector).
        for (i, m) in ppdu.mpdus.iter().enumerate() {
            let acked = report.acked.get(i).copied().unwrap_or(false);
            if acked && m.packet.amsdu_msdus > 1 {
                self.amsdu.done(&m.packet);
            }
            if acked || m.attempts >= report.retry_limit {
                self.drv.release_held(ac);
                self.drv.tid_mut(txq).complete(m.seq);
                if let Some(gate) = self.aql.as_mut() {
                    if m.packet.aql_us > 0 {
                        gate.aql.complete(txq.link(), ac, m.packet.aql_us as u32);
                    }
                }
                completed_bytes += m.packet.len_bytes;
                if !acked {
                    self.drops.push(Dropped {
                        packet: m.packet,
                        reason: DropReason::RetryLimit,
                    });
                    self.gave_up.push(GivenUpMpdu {
                        link: ppdu.link,
                        tid: ppdu.tid,
                        seq: m.seq,
                    });
                }
            } else {
                self.drv.requeue(txq, ac, *m);
                requeued = true;
            }
        }
        if completed_bytes > 0 {
            if let Some(d) = self.dql.as_mut() {
                d[ac.index()].completed(now, completed_bytes);
            }
        }
        self.drv.recycle(ppdu);
        if requeued {
            self.schedule_txq(now, txq, ac);
        }
        self.kick_with(now, ac, true);
    }

    /// Charge airtime to a station's TXQ in the scheduler
    /// (`ieee80211_sta_register_airtime`).
    pub(crate) fn register_airtime(
        &mut self,
        now: Nanos,
        link: LinkId,
        tid: Tid,
        tx_us: u32,
        rx_us: u32,
    ) {
        let ac = self.tid_ac(tid);
        if let Some(s) = self.sched.as_mut() {
            s.register_airtime(now, TxqKey::station(link, tid), ac, tx_us, rx_us);
        }
    }

    /// Packets held anywhere in the path (not those in the air).
    pub(crate) fn packets_inside(&self) -> u64 {
        let q: usize = self.qdisc.iter().map(|q| q.len_packets()).sum();
        let fq = self.fq.as_ref().map_or(0, |f| f.backlog_packets() as u64);
        q as u64 + fq + self.drv.packets() + self.amsdu.extra_undelivered()
    }

    /// The driver below this path.
    pub(crate) fn driver(&self) -> DriverKind {
        self.cfg.driver
    }

    /// Pending AQL airtime of a station's AC (0 without AQL).
    pub(crate) fn aql_pending_us(&self, link: LinkId, ac: Ac) -> u32 {
        self.aql
            .as_ref()
            .map_or(0, |gate| gate.aql.pending_us(link, ac))
    }
}
