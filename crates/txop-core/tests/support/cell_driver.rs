//! A small driver that runs a [`Cell`] by hand through its sans-I/O interface and keeps
//! every output, plus the rates and flows the cell's tests are written with.
//!
//! Shared by txop-core's `cell_behaviour.rs` and txop-sim's `simulation_behaviour.rs`
//! (which includes this file by path); each uses part of it.

#![allow(dead_code)]

use std::collections::{HashMap, VecDeque};
use txop_core::cell::{AirtimeRecord, Cell, CellConfig, Output, StationConfig};
use txop_core::phy::channel::ErrorModel;
use txop_core::phy::space::{Placement, SpaceConfig};
use txop_core::phy::{ChannelWidth, GuardInterval, TxVector};
use txop_core::DropReason;
use txop_core::{Nanos, NodeId, Packet};

/// The MSDU size of most tests' packets, in bytes.
pub(crate) const MSDU: u32 = 1500;

pub(crate) fn ht20(mcs: u8) -> TxVector {
    TxVector::Ht {
        mcs,
        width: ChannelWidth::Mhz20,
        gi: GuardInterval::Long,
    }
}

pub(crate) fn vht80_mcs9_2ss_sgi() -> TxVector {
    TxVector::Vht {
        mcs: 9,
        nss: 2,
        width: ChannelWidth::Mhz80,
        gi: GuardInterval::Short,
    }
}

pub(crate) fn ofdm(rate_mbps: u32) -> TxVector {
    TxVector::Ofdm { rate_mbps }
}

pub(crate) fn sta(tx: TxVector, error: ErrorModel) -> StationConfig {
    StationConfig::new(tx, error)
}

pub(crate) fn us(n: u64) -> Nanos {
    Nanos::from_us(n)
}

/// The medium a cell's test runs on: one collision domain (no space: outcomes decided
/// when an exchange starts), or space with every node hearing every other at equal
/// power (each node following the medium itself, receptions by SINR).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Medium {
    Shared,
    EqualPowerSpace,
}

/// Both media, for tests that must hold on each.
pub(crate) const BOTH_MEDIA: [Medium; 2] = [Medium::Shared, Medium::EqualPowerSpace];

/// The path loss between every pair of nodes in [`Medium::EqualPowerSpace`]: 60 dB, so
/// at 20 dBm every node receives −40 dBm, 42 dB above preamble detection (−82 dBm) and
/// 50 dB or more above the noise, where every MCS's PER is nil.
pub(crate) const EQUAL_PATH_LOSS_DB: f64 = 60.0;

/// `cfg` on `medium`.
pub(crate) fn on(medium: Medium, mut cfg: CellConfig) -> CellConfig {
    if medium == Medium::EqualPowerSpace {
        let n = cfg.stations.len() + 1;
        let loss = vec![vec![EQUAL_PATH_LOSS_DB; n]; n];
        cfg.space = Some(SpaceConfig::new(Placement::PathLossDb(loss), 20.0));
    }
    cfg
}

/// A flow that keeps `depth` packets inside the cell (like txop-sim's `Saturated`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Flow {
    pub(crate) src: NodeId,
    pub(crate) dst: NodeId,
    pub(crate) tid: u8,
    pub(crate) len: u32,
    pub(crate) depth: u32,
}

pub(crate) fn up(station: u16, tid: u8, depth: u32) -> Flow {
    Flow {
        src: NodeId(station),
        dst: NodeId::AP,
        tid,
        len: MSDU,
        depth,
    }
}

pub(crate) fn down(station: u16, tid: u8, depth: u32) -> Flow {
    Flow {
        src: NodeId::AP,
        dst: NodeId(station),
        tid,
        len: MSDU,
        depth,
    }
}

/// Drives a [`Cell`] directly and keeps everything it reports.
///
/// Packets come from saturated flows (a replacement is offered when one leaves the
/// cell) and from a pre-scheduled list of arrivals. Ids are assigned in offer order, so
/// within a (src, dst, tid) a larger id was offered later. At equal times offers go
/// first; that is equivalent to the simulator's order, since `Cell::handle_packet(now)`
/// runs the cell's deadlines up to `now` before it takes the packet.
pub(crate) struct Driver {
    pub(crate) cell: Cell,
    pub(crate) flows: Vec<Flow>,
    pub(crate) feeding: bool,
    /// (time, packet template) sorted by time.
    pub(crate) scheduled: VecDeque<(Nanos, Packet)>,
    /// Replacement offers (time, flow index); times never decrease.
    pub(crate) replacements: VecDeque<(Nanos, usize)>,
    pub(crate) next_id: u64,
    pub(crate) offered: Vec<Packet>,
    /// Every output in the order the cell produced it.
    pub(crate) log: Vec<Output>,
}

impl Driver {
    pub(crate) fn new(cfg: CellConfig, seed: u64, flows: &[Flow]) -> Driver {
        let cell = Cell::new(cfg, seed).expect("valid config");
        let mut replacements = VecDeque::new();
        for (i, f) in flows.iter().enumerate() {
            for _ in 0..f.depth {
                replacements.push_back((Nanos::ZERO, i));
            }
        }
        Driver {
            cell,
            flows: flows.to_vec(),
            feeding: true,
            scheduled: VecDeque::new(),
            replacements,
            next_id: 0,
            offered: Vec::new(),
            log: Vec::new(),
        }
    }

    /// Add arrivals (must be given in time order and after anything already run).
    pub(crate) fn schedule(&mut self, at: Nanos, src: NodeId, dst: NodeId, tid: u8, len: u32) {
        if let Some(&(last, _)) = self.scheduled.back() {
            assert!(at >= last, "schedule arrivals in time order");
        }
        let mut p = Packet::new(0, src, dst, len);
        p.tid = tid;
        self.scheduled.push_back((at, p));
    }

    pub(crate) fn offer(&mut self, at: Nanos, mut p: Packet) {
        p.id = self.next_id;
        self.next_id += 1;
        self.offered.push(p);
        self.cell.handle_packet(at, p);
        self.collect();
    }

    pub(crate) fn collect(&mut self) {
        while let Some(o) = self.cell.poll_output() {
            let (at, packet) = match o {
                Output::Delivered { at, packet, .. } => (at, packet),
                Output::Dropped {
                    at, packet, reason, ..
                } => {
                    assert!(
                        !(reason == DropReason::QueueFull && packet.token > 0),
                        "driver: a saturated flow's depth exceeds the queue limit"
                    );
                    (at, packet)
                }
                Output::Airtime(_) => {
                    self.log.push(o);
                    continue;
                }
            };
            self.log.push(o);
            if self.feeding && packet.token > 0 {
                self.replacements.push_back((at, packet.token as usize - 1));
            }
        }
    }

    pub(crate) fn next_offer_time(&self) -> Option<Nanos> {
        let a = self.scheduled.front().map(|&(t, _)| t);
        let b = self.replacements.front().map(|&(t, _)| t);
        match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    pub(crate) fn run_until(&mut self, until: Nanos) {
        loop {
            let tc = self.cell.poll_timeout();
            let to = self.next_offer_time();
            let next = match (tc, to) {
                (Some(c), Some(o)) => c.min(o),
                (c, o) => match c.or(o) {
                    Some(t) => t,
                    None => break,
                },
            };
            if next > until {
                break;
            }
            if to == Some(next) {
                let from_schedule = self.scheduled.front().is_some_and(|&(t, _)| t == next);
                if from_schedule {
                    let (t, p) = self.scheduled.pop_front().unwrap();
                    self.offer(t, p);
                } else {
                    let (t, i) = self.replacements.pop_front().unwrap();
                    let f = self.flows[i];
                    let mut p = Packet::new(0, f.src, f.dst, f.len);
                    p.tid = f.tid;
                    p.token = i as u64 + 1;
                    self.offer(t, p);
                }
            } else {
                self.cell.handle_timeout(next);
                self.collect();
            }
        }
    }

    /// Stop offering and run until the cell has nothing left to do.
    pub(crate) fn drain(&mut self) {
        self.feeding = false;
        self.scheduled.clear();
        self.replacements.clear();
        let mut steps = 0u64;
        while let Some(t) = self.cell.poll_timeout() {
            self.cell.handle_timeout(t);
            self.collect();
            steps += 1;
            assert!(steps < 50_000_000, "cell never went idle");
        }
    }

    pub(crate) fn airtime(&self) -> Vec<AirtimeRecord> {
        self.log
            .iter()
            .filter_map(|o| match o {
                Output::Airtime(r) => Some(*r),
                _ => None,
            })
            .collect()
    }

    pub(crate) fn delivered(&self) -> Vec<Packet> {
        self.log
            .iter()
            .filter_map(|o| match o {
                Output::Delivered { packet, .. } => Some(*packet),
                _ => None,
            })
            .collect()
    }

    pub(crate) fn dropped(&self, reason: DropReason) -> usize {
        self.log
            .iter()
            .filter(|o| matches!(o, Output::Dropped { reason: r, .. } if *r == reason))
            .count()
    }

    /// Ids offered but never reported, and ids reported more than once or never offered.
    pub(crate) fn accounting_errors(&self) -> (Vec<u64>, Vec<u64>) {
        let mut seen: HashMap<u64, u32> = HashMap::new();
        for o in &self.log {
            if let Output::Delivered { packet, .. } | Output::Dropped { packet, .. } = o {
                *seen.entry(packet.id).or_default() += 1;
            }
        }
        let missing = self
            .offered
            .iter()
            .filter(|p| !seen.contains_key(&p.id))
            .map(|p| p.id)
            .collect();
        let offered: std::collections::HashSet<u64> = self.offered.iter().map(|p| p.id).collect();
        let mut extra: Vec<u64> = seen
            .iter()
            .filter(|&(id, &n)| n != 1 || !offered.contains(id))
            .map(|(&id, _)| id)
            .collect();
        extra.sort();
        (missing, extra)
    }

    /// Deliveries per (src, dst, tid) must come out in offer order (increasing id).
    pub(crate) fn order_violations(&self) -> Vec<String> {
        let mut last: HashMap<(NodeId, NodeId, u8), u64> = HashMap::new();
        let mut bad = Vec::new();
        for p in self.delivered() {
            let key = (p.src, p.dst, p.tid);
            if let Some(&prev) = last.get(&key) {
                if p.id <= prev {
                    bad.push(format!("{key:?}: id {} after id {prev}", p.id));
                }
            }
            last.insert(key, p.id);
        }
        bad
    }
}
