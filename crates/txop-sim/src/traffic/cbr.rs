//! Constant-bit-rate UDP: open-loop packets at fixed intervals, whatever happens to
//! them (like `iperf -u -b RATE` or a UDP flood). Unlike a saturated source it does not
//! slow down when queues are full: excess is dropped by the queues, so each flow's
//! share of a shared FIFO follows its offered rate.

use super::Flow;
use crate::sim::{Event, Simulation};
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

impl Simulation {
    /// CBR flow `flow` sends its next packet and schedules the one after it.
    pub(crate) fn cbr_send(&mut self, at: Nanos, flow: usize) {
        let (from, to) = (self.flows[flow].src(), self.flows[flow].dst());
        self.flow_stats[flow].offered += 1;
        if let Flow::Cbr(c) = &self.flows[flow] {
            self.events
                .push(at + c.interval(), Event::Offer { flow: flow as u32 });
        }
        if let Some(p) = self.data_packet(at, flow, from, to) {
            self.send(at, from, p);
        }
    }
}
