//! Packet metadata. The payload is opaque to the model: a packet carries its length and
//! the header facts the transmit path looks at, plus a `token` the driver uses to find
//! the real bytes (the emulator) or the transport state (the simulator).

use crate::mac80211::txq::LinkId;
use crate::Nanos;
use serde::{Deserialize, Serialize};

/// A node of the cell: the AP is node 0, stations are 1..=n.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct NodeId(pub u16);

impl NodeId {
    /// The access point.
    pub const AP: NodeId = NodeId(0);

    /// This is the access point.
    pub fn is_ap(self) -> bool {
        self.0 == 0
    }

    /// The node as an index into per-node tables.
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// Station number `i` (1-based).
    pub fn station(i: u16) -> NodeId {
        NodeId(i)
    }

    /// The station this node is, or `None` for the AP.
    pub fn as_station(self) -> Option<StationId> {
        (!self.is_ap()).then_some(StationId(self.0))
    }
}

/// A station of the cell, numbered from 1 (station `n` is node `n`; the AP, node 0,
/// is not a station).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StationId(pub u16);

impl StationId {
    /// The station's node.
    pub const fn node(self) -> NodeId {
        NodeId(self.0)
    }

    /// The AP's link to this station: link `n − 1` leads to station `n`.
    pub const fn ap_link(self) -> LinkId {
        LinkId(self.0 - 1)
    }

    /// The station at the other end of the AP's `link`.
    pub const fn on_ap_link(link: LinkId) -> StationId {
        StationId(link.0 + 1)
    }

    /// The station as an index into tables of the cell's stations (0-based: station
    /// `n` at `n − 1`, the index of the AP's link to it).
    pub const fn index(self) -> usize {
        self.ap_link().index()
    }

    /// The stations of a cell of `n` stations, in order (1 to `n`).
    pub fn all(n: usize) -> impl Iterator<Item = StationId> {
        LinkId::all(n).map(StationId::on_ap_link)
    }
}

impl From<StationId> for NodeId {
    fn from(station: StationId) -> NodeId {
        station.node()
    }
}

/// Explicit Congestion Notification codepoint (RFC 3168).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Ecn {
    /// Not ECN-capable transport.
    #[default]
    NotEct,
    /// ECN-capable, ECT(1).
    Ect1,
    /// ECN-capable, ECT(0).
    Ect0,
    /// Congestion experienced.
    Ce,
}

/// Why the model dropped a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DropReason {
    /// A queue with a packet or byte limit was full (tail drop).
    QueueFull,
    /// An MPDU used up its transmission attempts.
    RetryLimit,
    /// Source and destination are not an AP–station pair of this cell.
    NoRoute,
    /// CoDel dropped it (sojourn time above target for too long).
    Codel,
    /// Flow-queue overload: head drop from the fattest flow because the packet limit
    /// (fq_codel `limit`, mac80211 fq `limit`) was exceeded.
    Overlimit,
    /// Flow-queue overload because the memory limit (truesize) was exceeded.
    Overmemory,
    /// Power-save buffer full (oldest dropped).
    PsBuffer,
}

impl DropReason {
    /// The reason's name in results.
    pub fn name(self) -> &'static str {
        match self {
            DropReason::QueueFull => "queue_full",
            DropReason::RetryLimit => "retry_limit",
            DropReason::NoRoute => "no_route",
            DropReason::Codel => "codel",
            DropReason::Overlimit => "overlimit",
            DropReason::Overmemory => "overmemory",
            DropReason::PsBuffer => "ps_buffer",
        }
    }
}

/// A packet a queue dropped, and why: what every queue of the path appends to the
/// caller's drop list, and the cell reports as [`Output::Dropped`](crate::Output::Dropped).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dropped {
    /// The packet as it was when dropped.
    pub packet: Packet,
    /// Why it was dropped.
    pub reason: DropReason,
}

/// One packet (an MSDU) crossing the cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Unique per run; assigned by whoever feeds the model.
    pub id: u64,
    /// Flow identifier (a hash of the 5-tuple in the emulator); used by flow queueing.
    pub flow: u32,
    /// Node where the packet enters the cell.
    pub src: NodeId,
    /// Node where the packet leaves the cell.
    pub dst: NodeId,
    /// Length of the MSDU (the IP packet) in bytes.
    pub len_bytes: u32,
    /// 802.1d user priority 0–7 (= TID for data frames). Set by whoever offers the
    /// packet, or by the transmit path's classification from `dscp`.
    pub tid: u8,
    /// DiffServ codepoint (6 bits) from the IP header.
    pub dscp: u8,
    /// The ECN codepoint from the IP header.
    pub ecn: Ecn,
    /// When the packet was handed to the model (set by `Cell::handle_packet`).
    pub enqueued_at: Nanos,
    /// When the packet entered the queue it is in now (each queue stamps it at enqueue,
    /// like mac80211's `control.enqueue_time`): CoDel's sojourn reference.
    pub queued_at: Nanos,
    /// mac80211's `tx_time_est`: the AQL airtime estimate (µs) charged when the packet
    /// left its TXQ, subtracted again on completion; 0 = not counted.
    pub aql_us: u16,
    /// Opaque to the model.
    pub token: u64,
    /// MSDUs this packet carries as an A-MSDU (`mac80211/amsdu.rs`): 0 for a plain
    /// MSDU; 2 or more for a carrier, whose `len_bytes` is then the A-MSDU's (less
    /// LLC/SNAP) and whose MSDUs wait in its transmitter's store.
    pub amsdu_msdus: u8,
    /// When it left the qdisc ([`Packet::txq_at`]), its low 48 bits: the delay
    /// budget's one stamp that must ride in the packet, in the bytes its layout has
    /// spare (see [`PadWord`]).
    txq_at_low: [u8; 6],
    _tag: PadWord,
}

impl Packet {
    /// It left the qdisc at `now`: it enters mac80211's TXQ (or, on a stack without
    /// TXQs, the driver). A stamp of its delay budget ([`crate::budget`]).
    #[inline]
    pub fn set_txq_at(&mut self, now: Nanos) {
        let b = now.as_ns().to_le_bytes();
        self.txq_at_low.copy_from_slice(&b[..6]);
    }

    /// When it left the qdisc, if it has since it entered the cell
    /// ([`Packet::set_txq_at`]): the instant at or after `enqueued_at` with the
    /// stored low 48 bits (2⁴⁸ ns is 78 hours: no packet waits that long in a qdisc).
    pub fn txq_at(&self) -> Nanos {
        let mut b = [0u8; 8];
        b[..6].copy_from_slice(&self.txq_at_low);
        const MASK: u64 = (1 << 48) - 1;
        let low = u64::from_le_bytes(b);
        let since = low.wrapping_sub(self.enqueued_at.as_ns()) & MASK;
        Nanos(self.enqueued_at.as_ns() + since)
    }
}

/// A word that is always zero: the niche `Option<Packet>` keeps its tag in.
// perf: packets move by value through every queue of the path, mostly as
// `Option<Packet>` returned from one function and copied on by the next. Without this
// word the tag would sit in `ecn`'s spare values and the 7 bytes around it would be
// padding, so the compiler copies the small fields as odd, overlapping chunks; a copy
// read soon after it was written then defeats store-to-load forwarding, a stall on
// every hop. With a whole word for the tag and no padding, packets are copied as whole
// words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u64)]
enum PadWord {
    Zero = 0,
}

const _: () = assert!(size_of::<Packet>() == 64);
const _: () = assert!(size_of::<Option<Packet>>() == 64);

impl Ecn {
    /// Set CE the way Linux's `INET_ECN_set_ce` does: ECT(0) and ECT(1) become CE, a
    /// packet already CE stays CE, and both return true (so CoDel counts a mark and
    /// delivers the packet); only Not-ECT returns false (so an AQM drops it instead).
    /// `IP_ECN_set_ce` returns `!ecn` = 1 for CE, `IP6_ECN_set_ce` refuses only
    /// Not-ECT (`include/net/inet_ecn.h`); the kernel-oracle crate's differential test
    /// runs that code.
    pub fn set_ce(&mut self) -> bool {
        match self {
            Ecn::Ect0 | Ecn::Ect1 | Ecn::Ce => {
                *self = Ecn::Ce;
                true
            }
            Ecn::NotEct => false,
        }
    }
}

impl Packet {
    /// The socket-buffer memory a queued packet accounts for (`skb->truesize`): the
    /// data rounded up to 64 bytes plus `struct sk_buff` (232 B), `skb_shared_info`
    /// (320 B) and 64 B of headroom. Queue memory limits (fq_codel's `memory_limit`,
    /// mac80211's fq `memory_limit`) count this, not the packet length.
    pub fn truesize_bytes(&self) -> u32 {
        (self.len_bytes + 64).div_ceil(64) * 64 + 232 + 320
    }

    /// A best-effort packet of `len_bytes` from `src` to `dst`.
    pub fn new(id: u64, src: NodeId, dst: NodeId, len_bytes: u32) -> Packet {
        Packet {
            id,
            flow: 0,
            src,
            dst,
            len_bytes,
            tid: 0,
            dscp: 0,
            ecn: Ecn::NotEct,
            enqueued_at: Nanos::ZERO,
            queued_at: Nanos::ZERO,
            aql_us: 0,
            token: 0,
            amsdu_msdus: 0,
            txq_at_low: [0; 6],
            _tag: PadWord::Zero,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stations_are_nodes_from_one_and_the_aps_links_from_zero() {
        assert_eq!(NodeId::AP.as_station(), None);
        for n in 1..=300u16 {
            let s = NodeId::station(n).as_station().expect("a station");
            assert_eq!(s, StationId(n));
            assert_eq!(NodeId::from(s), NodeId(n));
            assert_eq!(s.ap_link(), LinkId(n - 1));
            assert_eq!(StationId::on_ap_link(s.ap_link()), s);
            assert_eq!(s.index(), n as usize - 1);
        }
        let all: Vec<StationId> = StationId::all(3).collect();
        assert_eq!(all, [StationId(1), StationId(2), StationId(3)]);
    }
}
