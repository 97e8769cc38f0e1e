//! Constant-bit-rate UDP: open-loop packets at fixed intervals, whatever happens to
//! them (like `iperf -u -b RATE` or a UDP flood). Unlike a saturated source it does not
//! slow down when queues are full: excess is dropped by the queues, so each flow's
//! share of a shared FIFO follows its offered rate.

use txop_core::{Nanos, NodeId, Packet};

/// One constant-rate flow.
#[derive(Clone, Debug)]
pub struct Cbr {
    pub src: NodeId,
    pub dst: NodeId,
    pub len_bytes: u32,
    pub tid: u8,
    pub dscp: u8,
    /// Offered rate of IP packets (bits per second).
    pub rate_bps: u64,
    pub start: Nanos,
    /// Flow hash (what fq classifies on).
    pub flow_hash: u32,
}

impl Cbr {
    /// Time between packets.
    pub fn interval(&self) -> Nanos {
        let ns = (self.len_bytes as u128 * 8 * 1_000_000_000) / self.rate_bps.max(1) as u128;
        Nanos(ns.max(1) as u64)
    }

    pub fn packet(&self, id: u64, token: u64) -> Packet {
        let mut p = Packet::new(id, self.src, self.dst, self.len_bytes);
        p.tid = self.tid;
        p.dscp = self.dscp;
        p.flow = self.flow_hash;
        p.token = token;
        p
    }
}
