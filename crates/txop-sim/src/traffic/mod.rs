//! Traffic models that feed the cell.

pub mod cbr;
pub mod saturated;

use cbr::Cbr;
use saturated::Saturated;
use txop_core::{NodeId, Packet};

/// A traffic flow the simulator feeds into the cell.
#[derive(Clone, Debug)]
pub enum Flow {
    Saturated(Saturated),
    Cbr(Cbr),
}

impl Flow {
    pub fn src(&self) -> NodeId {
        match self {
            Flow::Saturated(f) => f.src,
            Flow::Cbr(f) => f.src,
        }
    }

    pub fn dst(&self) -> NodeId {
        match self {
            Flow::Saturated(f) => f.dst,
            Flow::Cbr(f) => f.dst,
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Flow::Saturated(_) => "saturated",
            Flow::Cbr(_) => "cbr",
        }
    }

    pub fn packet(&self, id: u64, token: u64) -> Packet {
        match self {
            Flow::Saturated(f) => f.packet(id, token),
            Flow::Cbr(f) => f.packet(id, token),
        }
    }
}
