//! Saturated traffic: a source that always has frames of a given size queued.
//!
//! It keeps `depth` of its packets inside the cell: whenever one is delivered or
//! dropped it offers another at once. With `depth` above the aggregate size the
//! transmitter never runs dry, which is what Bianchi's saturation model assumes.

use txop_core::{NodeId, Packet};

/// One saturated flow over the air.
#[derive(Clone, Debug)]
pub struct Saturated {
    pub src: NodeId,
    pub dst: NodeId,
    pub len_bytes: u32,
    pub tid: u8,
    /// Packets kept inside the cell.
    pub depth: u32,
}

impl Saturated {
    /// A packet of this flow with the given id; `token` tells the simulator whose it is.
    pub fn packet(&self, id: u64, token: u64) -> Packet {
        let mut p = Packet::new(id, self.src, self.dst, self.len_bytes);
        p.tid = self.tid;
        // A well-spread flow hash (fq classifies on its top bits).
        p.flow = (txop_core::rng::mix64(token) >> 32) as u32;
        p.token = token;
        p
    }
}
