//! `pfifo_fast`, Linux's default qdisc before fq_codel (`net/sched/sch_generic.c`):
//! three FIFO bands served in strict priority, the band chosen from `skb->priority`.
//!
//! # Band from the packet
//!
//! Linux chooses the band as `prio2band[skb->priority & TC_PRIO_MAX]`. For IPv4,
//! `skb->priority` comes from the TOS byte through `rt_tos2priority(tos)` =
//! `ip_tos2prio[IPTOS_TOS(tos) >> 1]` (`include/net/route.h`, table in
//! `net/ipv4/route.c`): `ip_forward` sets it for forwarded packets and the `IP_TOS`
//! socket option sets `sk_priority` the same way for local ones. The model derives it
//! from the packet's DSCP and ECN (`tos = dscp << 2 | ecn`).
//!
//! `ip_tos2prio` (mainline since at least 4.x, checked against the source) is
//! `[0,0,0,0, 2,2,2,2, 6,6,6,6, 4,4,4,4]` (BESTEFFORT, BULK, INTERACTIVE,
//! INTERACTIVE_BULK, each twice for the ECN_OR_COST entry). `IPTOS_TOS_MASK` = 0x1E
//! keeps the old RFC 1349 TOS bits, which for a DSCP are its *three low bits*
//! (plus the ECT(0) bit, which this table ignores), so the band depends only on
//! `dscp & 7`:
//!
//! | `dscp & 7` | index | priority | band | examples |
//! |---|---|---|---|---|
//! | 0, 1 | 0–3 | 0 BESTEFFORT | 1 | BE, CS1–CS7 |
//! | 2, 3 | 4–7 | 2 BULK | 2 | AF11, AF21, AF31, AF41 |
//! | 4, 5 | 8–11 | 6 INTERACTIVE | 0 | AF12, AF22, AF32, AF42, VA (44), TOS 0x10 |
//! | 6, 7 | 12–15 | 4 INTERACTIVE_BULK | 1 | EF (46), AF13, AF23, AF33, AF43 |
//!
//! So EF (46, tos 0xB8): (0xB8 & 0x1E) >> 1 = 12 → priority 4 → **band 1**, the same
//! band as best effort, and CS1 (8, tos 0x20): 0 → priority 0 → band 1 as well. (A
//! table that maps index 12 to priority 6 and EF to band 0 is *not* Linux's; DSCP
//! classes simply do not line up with pfifo_fast's TOS-era bands.) Kernels of the 2.6
//! era had `ECN_OR_COST(FILLER)` at index 1, sending ECT(0) best-effort traffic to
//! band 2; that variant is not modelled.
//!
//! # Limit
//!
//! [`PfifoFast::new`] (the default, [`PfifoFastLimit::Shared`]) is the pfifo_fast of
//! roughly 2.6.3x–4.15: one limit of `txqueuelen` packets over all bands
//! (`qdisc->q.qlen < qdisc_dev(qdisc)->tx_queue_len`). Since 4.16 (lockless
//! pfifo_fast on `skb_array`) each band is its own ring of `tx_queue_len` entries:
//! [`PfifoFast::per_band`] ([`PfifoFastLimit::PerBand`]); the ring's deferred slot
//! release (`ptr_ring` batch zeroing) that can make a band refuse a packet up to
//! batch−1 entries early is not modelled.

use super::fifo::QdiscStats;
use crate::packet::{DropReason, Dropped, Ecn, Packet};
use crate::Nanos;
use std::collections::VecDeque;

/// `PFIFO_FAST_BANDS`.
pub const PFIFO_FAST_BANDS: usize = 3;

/// `prio2band` (`net/sched/sch_generic.c`): band for each `skb->priority & TC_PRIO_MAX`.
pub const PRIO2BAND: [u8; 16] = [1, 2, 2, 2, 1, 2, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1];

/// `ip_tos2prio` (`net/ipv4/route.c`), indexed by `IPTOS_TOS(tos) >> 1`; values are
/// `TC_PRIO_*` (BESTEFFORT 0, BULK 2, INTERACTIVE_BULK 4, INTERACTIVE 6).
pub const IP_TOS2PRIO: [u8; 16] = [0, 0, 0, 0, 2, 2, 2, 2, 6, 6, 6, 6, 4, 4, 4, 4];

/// `IPTOS_TOS_MASK` (`include/uapi/linux/ip.h`).
pub const IPTOS_TOS_MASK: u8 = 0x1E;

/// `TC_PRIO_MAX` (`include/uapi/linux/pkt_sched.h`).
pub const TC_PRIO_MAX: u8 = 15;

/// Linux's default `txqueuelen` for Ethernet-type devices (`ether_setup`), which Wi-Fi
/// netdevs use.
pub const DEFAULT_TXQUEUELEN: u32 = 1000;

/// The IPv4 TOS byte of a packet: DSCP in the upper six bits, ECN in the lower two
/// (RFC 3168: ECT(1) = 01, ECT(0) = 10, CE = 11).
pub fn ip_tos(packet: &Packet) -> u8 {
    let ecn = match packet.ecn {
        Ecn::NotEct => 0,
        Ecn::Ect1 => 1,
        Ecn::Ect0 => 2,
        Ecn::Ce => 3,
    };
    (packet.dscp << 2) | ecn
}

/// `rt_tos2priority(tos)` = `ip_tos2prio[IPTOS_TOS(tos) >> 1]` (`include/net/route.h`).
pub fn rt_tos2priority(tos: u8) -> u8 {
    IP_TOS2PRIO[((tos & IPTOS_TOS_MASK) >> 1) as usize]
}

/// The `skb->priority` Linux gives this packet: `rt_tos2priority` of its TOS byte.
pub fn skb_priority(packet: &Packet) -> u8 {
    rt_tos2priority(ip_tos(packet))
}

/// The pfifo_fast band of this packet: `prio2band[skb->priority & TC_PRIO_MAX]`.
pub fn band_of(packet: &Packet) -> usize {
    PRIO2BAND[(skb_priority(packet) & TC_PRIO_MAX) as usize] as usize
}

/// How pfifo_fast applies `txqueuelen` (see the module note).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PfifoFastLimit {
    /// One limit over all bands (≈2.6.3x–4.15): `qdisc->q.qlen < tx_queue_len`.
    Shared,
    /// One `skb_array` of `tx_queue_len` per band (4.16+).
    PerBand,
}

/// Linux `pfifo_fast` (`net/sched/sch_generic.c`): three tail-drop FIFO bands; dequeue
/// takes the head of the lowest-numbered non-empty band. Drops are
/// [`DropReason::QueueFull`] of the arriving packet.
#[derive(Clone, Debug)]
pub struct PfifoFast {
    bands: [VecDeque<Packet>; PFIFO_FAST_BANDS],
    txqueuelen: u32,
    limit: PfifoFastLimit,
    bytes: u64,
    stats: QdiscStats,
}

impl Default for PfifoFast {
    /// `txqueuelen` 1000, shared limit.
    fn default() -> Self {
        PfifoFast::new(DEFAULT_TXQUEUELEN)
    }
}

impl PfifoFast {
    /// pfifo_fast with one limit of `txqueuelen` packets over all three bands.
    pub fn new(txqueuelen: u32) -> PfifoFast {
        PfifoFast::with_limit(txqueuelen, PfifoFastLimit::Shared)
    }

    /// pfifo_fast as since 4.16: each band holds up to `txqueuelen` packets.
    pub fn per_band(txqueuelen: u32) -> PfifoFast {
        PfifoFast::with_limit(txqueuelen, PfifoFastLimit::PerBand)
    }

    /// pfifo_fast with the given limit semantics.
    pub fn with_limit(txqueuelen: u32, limit: PfifoFastLimit) -> PfifoFast {
        let cap = (txqueuelen as usize).min(4096);
        PfifoFast {
            bands: std::array::from_fn(|_| VecDeque::with_capacity(cap)),
            txqueuelen,
            limit,
            bytes: 0,
            stats: QdiscStats::default(),
        }
    }

    /// `pfifo_fast_enqueue`: append to the packet's band (stamping `queued_at = now`),
    /// or drop it with [`DropReason::QueueFull`] when the limit is reached.
    pub fn enqueue(&mut self, now: Nanos, mut packet: Packet, drops: &mut Vec<Dropped>) {
        self.stats.enqueued += 1;
        let band = band_of(&packet);
        let occupied = match self.limit {
            PfifoFastLimit::Shared => self.len_packets(),
            PfifoFastLimit::PerBand => self.bands[band].len(),
        };
        if occupied >= self.txqueuelen as usize {
            self.stats.count_drops(DropReason::QueueFull, 1);
            drops.push(Dropped {
                packet,
                reason: DropReason::QueueFull,
            });
            return;
        }
        packet.queued_at = now;
        self.bytes += packet.len_bytes as u64;
        self.bands[band].push_back(packet);
    }

    /// `pfifo_fast_dequeue`: the head of the first non-empty band (0, then 1, then 2).
    /// Never drops.
    pub fn dequeue(&mut self, _now: Nanos, _drops: &mut Vec<Dropped>) -> Option<Packet> {
        let packet = self.bands.iter_mut().find_map(|b| b.pop_front())?;
        self.bytes -= packet.len_bytes as u64;
        self.stats.dequeued += 1;
        Some(packet)
    }

    /// Packets queued in `band` (0–2).
    pub fn band_len(&self, band: usize) -> usize {
        self.bands[band].len()
    }

    /// Packets queued over all bands (`qdisc->q.qlen`).
    pub fn len_packets(&self) -> usize {
        self.bands.iter().map(VecDeque::len).sum()
    }

    /// Σ `len_bytes` of the queued packets (see the byte-counting note in `fifo`).
    pub fn backlog_bytes(&self) -> u64 {
        self.bytes
    }

    /// True if all bands are empty.
    pub fn is_empty(&self) -> bool {
        self.bands.iter().all(VecDeque::is_empty)
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

    fn pkt(id: u64, dscp: u8) -> Packet {
        let mut p = Packet::new(id, NodeId::AP, NodeId(1), 1000);
        p.dscp = dscp;
        p
    }

    /// Expected bands computed by hand from the Linux tables:
    /// idx = (tos & 0x1E) >> 1, prio = ip_tos2prio[idx], band = prio2band[prio].
    #[test]
    fn band_mapping_follows_linux_tables() {
        let cases: &[(u8, Ecn, u8, u8, usize)] = &[
            // dscp, ecn, tos, prio, band
            (0, Ecn::NotEct, 0x00, 0, 1), // BE: idx 0 → BESTEFFORT → band 1
            (0, Ecn::Ect0, 0x02, 0, 1),   // idx 1 → ECN_OR_COST(BESTEFFORT) → band 1
            (0, Ecn::Ce, 0x03, 0, 1),
            (46, Ecn::NotEct, 0xB8, 4, 1), // EF: 0x18>>1 = 12 → INTERACTIVE_BULK → 1
            (8, Ecn::NotEct, 0x20, 0, 1),  // CS1: 0x00 → idx 0 → band 1
            (48, Ecn::NotEct, 0xC0, 0, 1), // CS6: idx 0 → band 1
            (10, Ecn::NotEct, 0x28, 2, 2), // AF11: 0x08>>1 = 4 → BULK → band 2
            (34, Ecn::Ect0, 0x8A, 2, 2),   // AF41+ECT(0): 0x0A>>1 = 5 → BULK → 2
            (12, Ecn::NotEct, 0x30, 6, 0), // AF12: 0x10>>1 = 8 → INTERACTIVE → 0
            (4, Ecn::NotEct, 0x10, 6, 0),  // IPTOS_LOWDELAY → INTERACTIVE → band 0
            (44, Ecn::NotEct, 0xB0, 6, 0), // VA: 0x10 → 8 → band 0
            (14, Ecn::NotEct, 0x38, 4, 1), // AF13: 0x18 → 12 → INTERACTIVE_BULK → 1
        ];
        for &(dscp, ecn, tos, prio, band) in cases {
            let mut p = pkt(0, dscp);
            p.ecn = ecn;
            assert_eq!(ip_tos(&p), tos, "dscp {dscp}");
            assert_eq!(skb_priority(&p), prio, "dscp {dscp}");
            assert_eq!(band_of(&p), band, "dscp {dscp}");
        }
    }

    #[test]
    fn strict_priority_between_bands_fifo_within() {
        let mut q = PfifoFast::default();
        let mut drops = Vec::new();
        // Interleave: AF11 (band 2), BE (band 1), AF12 (band 0), EF (band 1).
        let arrivals = [(0, 10), (1, 0), (2, 12), (3, 46), (4, 10), (5, 0), (6, 12)];
        for (i, &(id, dscp)) in arrivals.iter().enumerate() {
            q.enqueue(Nanos::from_us(i as u64), pkt(id, dscp), &mut drops);
        }
        assert_eq!((q.band_len(0), q.band_len(1), q.band_len(2)), (2, 3, 2));
        let order: Vec<u64> = std::iter::from_fn(|| q.dequeue(Nanos::from_ms(1), &mut drops))
            .map(|p| p.id)
            .collect();
        // Band 0 (2, 6), band 1 in arrival order (1, 3, 5), band 2 (0, 4).
        assert_eq!(order, vec![2, 6, 1, 3, 5, 0, 4]);
        // A band-0 arrival overtakes a backlog in the lower bands.
        for id in 10..20 {
            q.enqueue(Nanos::ZERO, pkt(id, 0), &mut drops);
        }
        q.enqueue(Nanos::ZERO, pkt(99, 4), &mut drops);
        assert_eq!(q.dequeue(Nanos::ZERO, &mut drops).unwrap().id, 99);
        assert!(drops.is_empty());
    }

    #[test]
    fn shared_limit_covers_all_bands() {
        let mut q = PfifoFast::default();
        let mut drops = Vec::new();
        // 1000 best-effort packets fill the whole qdisc…
        for id in 0..1000 {
            q.enqueue(Nanos::ZERO, pkt(id, 0), &mut drops);
        }
        assert!(drops.is_empty());
        // …so even a band-0 packet is tail-dropped.
        q.enqueue(Nanos::ZERO, pkt(1000, 12), &mut drops);
        q.enqueue(Nanos::ZERO, pkt(1001, 10), &mut drops);
        assert_eq!(drops.len(), 2);
        assert!(drops
            .iter()
            .all(|Dropped { reason: r, .. }| *r == DropReason::QueueFull));
        assert_eq!(q.len_packets(), 1000);
        assert_eq!(q.backlog_bytes(), 1_000_000);
        // One out, one in.
        q.dequeue(Nanos::ZERO, &mut drops).unwrap();
        q.enqueue(Nanos::ZERO, pkt(1002, 12), &mut drops);
        assert_eq!(q.band_len(0), 1);
        let s = q.stats();
        assert_eq!(
            s.enqueued,
            s.dequeued + s.dropped() + q.len_packets() as u64
        );
        assert_eq!(s.dropped_queue_full, 2);
    }

    #[test]
    fn per_band_limit_since_4_16() {
        let mut q = PfifoFast::per_band(10);
        let mut drops = Vec::new();
        for id in 0..15 {
            q.enqueue(Nanos::ZERO, pkt(id, 0), &mut drops);
        }
        assert_eq!((q.band_len(1), drops.len()), (10, 5));
        // The other bands still have their own room.
        for id in 20..30 {
            q.enqueue(Nanos::ZERO, pkt(id, 12), &mut drops);
            q.enqueue(Nanos::ZERO, pkt(id + 100, 10), &mut drops);
        }
        assert_eq!(q.len_packets(), 30);
        assert_eq!(drops.len(), 5);
    }
}
