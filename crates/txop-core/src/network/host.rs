//! The hosts at the network's edges: where applications run and packets enter and
//! leave the modelled network.

use crate::NodeId;

/// Where an application runs: a host at one edge of the modelled network.
///
/// The server sits behind the AP's wired link; the AP's own host hands packets to the
/// cell directly; a station's host hands them to its WLAN chip, across its host bus if
/// it has one (`crate::driver::bus`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Host {
    /// A server on the wired side, behind the AP's wired link.
    Server,
    /// The AP itself: packets enter the cell at the AP directly (no wired hop).
    Ap,
    /// The host of station `n` (1-based).
    Station(u16),
}

impl Host {
    /// The cell node through which this host's packets enter or leave the air.
    pub fn node(self) -> NodeId {
        match self {
            Host::Server | Host::Ap => NodeId::AP,
            Host::Station(n) => NodeId(n),
        }
    }

    /// The host's name in results: `server`, `AP`, `sta1`, …
    pub fn name(self) -> String {
        match self {
            Host::Server => "server".into(),
            Host::Ap => "AP".into(),
            Host::Station(n) => format!("sta{n}"),
        }
    }
}
