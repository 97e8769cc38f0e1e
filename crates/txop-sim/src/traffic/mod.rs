//! Traffic models that feed the cell. Each file holds one model's configuration and,
//! in an `impl Simulation` block, its behaviour: what it sends when its events come due
//! and what it does when its packets arrive (the event loop in `crate::sim` dispatches
//! to it). The TCP connections under TCP flows and page loads are in `crate::tcp`.

pub mod cbr;
pub mod flent;
pub mod ping;
pub mod saturated;
pub mod tcp;
pub mod web;

use cbr::Cbr;
use ping::Ping;
use saturated::Saturated;
use tcp::TcpFlow;
use txop_core::{NodeId, Packet};
use web::WebPage;

/// Where an application runs (the network's edges: `txop_core::network::Host`).
pub use txop_core::network::Host;

/// A traffic flow the simulator feeds into the cell.
#[derive(Clone, Debug)]
pub enum Flow {
    Saturated(Saturated),
    Cbr(Cbr),
    Ping(Ping),
    Tcp(TcpFlow),
    Web(WebPage),
}

impl Flow {
    /// The host that sends (for ping: the one that measures).
    pub fn src(&self) -> Host {
        match self {
            Flow::Saturated(f) => node_host(f.src),
            Flow::Cbr(f) => node_host(f.src),
            Flow::Ping(p) => p.from,
            Flow::Tcp(t) => t.sender,
            Flow::Web(w) => w.client,
        }
    }

    pub fn dst(&self) -> Host {
        match self {
            Flow::Saturated(f) => node_host(f.dst),
            Flow::Cbr(f) => node_host(f.dst),
            Flow::Ping(p) => p.to,
            Flow::Tcp(t) => t.receiver,
            Flow::Web(w) => w.server,
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Flow::Saturated(_) => "saturated",
            Flow::Cbr(_) => "cbr",
            Flow::Ping(p) if p.udp => "udp_ping",
            Flow::Ping(_) => "ping",
            Flow::Tcp(_) => "tcp",
            Flow::Web(_) => "web",
        }
    }

    /// The flent series name of the flow, if it belongs to a flent test.
    pub fn label(&self) -> &str {
        match self {
            Flow::Ping(p) => &p.label,
            Flow::Tcp(t) => &t.label,
            _ => "",
        }
    }

    /// A data packet of a one-way flow (saturated, CBR).
    pub fn packet(&self, id: u64, token: u64) -> Option<Packet> {
        match self {
            Flow::Saturated(f) => Some(f.packet(id, token)),
            Flow::Cbr(f) => Some(f.packet(id, token)),
            Flow::Ping(_) | Flow::Tcp(_) | Flow::Web(_) => None,
        }
    }
}

/// One-way flows name cell nodes: the AP injects directly.
fn node_host(n: NodeId) -> Host {
    if n.is_ap() {
        Host::Ap
    } else {
        Host::Station(n.0)
    }
}
