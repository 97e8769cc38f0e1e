//! Packet metadata. The payload is opaque to the model: a packet carries its length and
//! the header facts the transmit path looks at, plus a `token` the driver uses to find
//! the real bytes (the emulator) or the transport state (the simulator).

use crate::Nanos;
use serde::{Deserialize, Serialize};

/// A node of the cell: the AP is node 0, stations are 1..=n.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct NodeId(pub u16);

impl NodeId {
    pub const AP: NodeId = NodeId(0);

    pub fn is_ap(self) -> bool {
        self.0 == 0
    }
    pub fn index(self) -> usize {
        self.0 as usize
    }
    /// Station number `i` (1-based).
    pub fn station(i: u16) -> NodeId {
        NodeId(i)
    }
}

/// Explicit Congestion Notification codepoint (RFC 3168).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Ecn {
    #[default]
    NotEct,
    Ect1,
    Ect0,
    Ce,
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
    /// 802.1d user priority 0–7 (= TID for data frames).
    pub tid: u8,
    pub ecn: Ecn,
    /// When the packet was handed to the model (set by `Cell::handle_packet`).
    pub enqueued_at: Nanos,
    /// Opaque to the model.
    pub token: u64,
}

impl Packet {
    /// A best-effort packet of `len_bytes` from `src` to `dst`.
    pub fn new(id: u64, src: NodeId, dst: NodeId, len_bytes: u32) -> Packet {
        Packet {
            id,
            flow: 0,
            src,
            dst,
            len_bytes,
            tid: 0,
            ecn: Ecn::NotEct,
            enqueued_at: Nanos::ZERO,
            token: 0,
        }
    }
}
