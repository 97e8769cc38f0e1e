//! Test support: cells with space that several test files run — saturated uplinks,
//! path-loss matrices, and the two-hidden-station topology.
#![allow(dead_code)] // each test file uses its own subset

use txop_core::cell::{CellConfig, StationConfig};
use txop_core::phy::channel::ErrorModel;
use txop_core::phy::mobility::Position;
use txop_core::phy::space::{Placement, SpaceConfig};
use txop_core::phy::{Band, Standard, TxVector};
use txop_core::{Nanos, NodeId};
use txop_sim::traffic::saturated::Saturated;
use txop_sim::traffic::Flow;
use txop_sim::{SimConfig, Simulation};

/// What the stations of a saturated uplink run got.
pub struct Outcome {
    /// Per station, Mbit/s delivered.
    pub mbps: Vec<f64>,
    /// PPDUs the stations sent, and how many of them collided.
    pub ppdus: u64,
    pub collisions: u64,
}

/// One saturated 1500-byte uplink per station.
pub fn saturated_uplink(n: usize) -> Vec<Flow> {
    (1..=n as u16)
        .map(|i| {
            Flow::Saturated(Saturated {
                src: NodeId(i),
                dst: NodeId::AP,
                len_bytes: 1500,
                tid: 0,
                depth: 4,
            })
        })
        .collect()
}

/// `cell` with every station saturating its uplink for `secs` seconds, seeded `seed`.
pub fn uplink(cell: CellConfig, secs: u64, seed: u64) -> Outcome {
    let n = cell.stations.len();
    let flows = saturated_uplink(n);
    let mut sim =
        Simulation::new(SimConfig::new(cell, flows, Nanos::from_secs(secs), seed)).unwrap();
    sim.run_until(Nanos::from_secs(secs));
    let stats = sim.cell().stats();
    let secs_f = secs as f64;
    Outcome {
        mbps: (1..=n)
            .map(|i| stats[i].up.delivered_bytes as f64 * 8.0 / secs_f / 1e6)
            .collect(),
        ppdus: (1..=n).map(|i| stats[i].up.ppdus).sum(),
        collisions: (1..=n).map(|i| stats[i].up.collisions).sum(),
    }
}

/// A path-loss matrix of `n` nodes (AP first), `loss(i, j)` off the diagonal.
pub fn matrix(n: usize, loss: impl Fn(usize, usize) -> f64) -> Placement {
    Placement::PathLossDb(
        (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| if i == j { 0.0 } else { loss(i, j) })
                    .collect()
            })
            .collect(),
    )
}

/// A space shared by several BSSs: `positions` of every node (each BSS's AP, then its
/// stations), log-distance exponent 3.5, 20 dBm; this cell's AP is node `first_node`.
pub fn shared_space(positions: &[Position], first_node: usize) -> SpaceConfig {
    let mut space = SpaceConfig::new(
        Placement::Positions {
            positions: positions.to_vec(),
            exponent: 3.5,
        },
        20.0,
    );
    space.first_node = first_node;
    space
}

/// Totals of [`hidden_pair`] over its seeds.
pub struct PairRun {
    /// Mbit/s of both stations, the mean over the seeds.
    pub mbps: f64,
    pub ppdus: u64,
    pub collisions: u64,
}

impl PairRun {
    /// Collided PPDUs over PPDUs sent.
    pub fn collision_probability(&self) -> f64 {
        self.collisions as f64 / self.ppdus as f64
    }
}

/// Two stations uploading to the AP, 1500-byte frames, legacy DCF at `rate_mbps`
/// (control frames at its control-response rate): hidden from each other (200 dB
/// apart) or not (80 dB, as each is from the AP), 20 dBm. Seeds 1–3 of 10 s each:
/// `bench/ns3/hidden.cc`'s topology.
pub fn hidden_pair(rate_mbps: u32, rts: bool, hidden: bool) -> PairRun {
    let mut run = PairRun {
        mbps: 0.0,
        ppdus: 0,
        collisions: 0,
    };
    for seed in 1..=3 {
        let stations = vec![StationConfig::new(TxVector::Ofdm { rate_mbps }, ErrorModel::None); 2];
        let mut cell = CellConfig::legacy_dcf(Standard::A, Band::Ghz5, stations);
        if rts {
            cell.rts_threshold_bytes = Some(0);
        }
        let apart = if hidden { 200.0 } else { 80.0 };
        cell.space = Some(SpaceConfig::new(
            matrix(3, |i, j| if i > 0 && j > 0 { apart } else { 80.0 }),
            20.0,
        ));
        let o = uplink(cell, 10, seed);
        run.mbps += o.mbps.iter().sum::<f64>() / 3.0;
        run.ppdus += o.ppdus;
        run.collisions += o.collisions;
    }
    run
}
