//! Open-loop downlink traffic for the transmit-path tests: constant-bit-rate UDP from
//! the AP to each station, phases spread so that the flows do not arrive in lockstep;
//! and the simulation of a cell with such flows (seed 3, no wired side or host bus).
//!
//! Include it from an integration test with
//!
//! ```ignore
//! #[path = "support/downlink.rs"]
//! mod downlink;
//! ```

use txop_core::cell::CellConfig;
use txop_core::{Nanos, NodeId};
use txop_sim::traffic::cbr::Cbr;
use txop_sim::traffic::Flow;
use txop_sim::{SimConfig, Simulation};

/// Downlink CBR to every station at `rate_bps`, phases spread over one interval.
pub fn downlink_cbr(n: usize, rate_bps: u64, len_bytes: u32) -> Vec<Flow> {
    (0..n)
        .map(|i| {
            let c = Cbr {
                src: NodeId::AP,
                dst: NodeId(i as u16 + 1),
                len_bytes,
                tid: 0,
                dscp: 0,
                rate_bps,
                start: Nanos::ZERO,
                flow_hash: (txop_core::rng::mix64(i as u64) >> 32) as u32,
                probe: false,
            };
            let start = Nanos(c.interval().as_ns() * i as u64 / n as u64);
            Flow::Cbr(Cbr { start, ..c })
        })
        .collect()
}

/// The simulation of `cell` with `flows` for `secs` seconds, seed 3.
pub fn simulation(cell: CellConfig, flows: Vec<Flow>, secs: u64) -> Simulation {
    Simulation::new(SimConfig {
        cell,
        flows,
        duration: Nanos::from_secs(secs),
        seed: 3,
        wired: Default::default(),
        host_bus: Vec::new(),
        remote_ends: Vec::new(),
        tcp_hosts: Default::default(),
    })
    .expect("valid config")
}
