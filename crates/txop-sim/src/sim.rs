//! The virtual-time driver: feeds the cell from traffic models and collects results.

use crate::events::EventQueue;
use crate::flowstats::FlowStats;
use crate::results::{Conservation, Results, StationResult};
use crate::traffic::Flow;
use txop_core::cell::{Cell, CellConfig, Output};
use txop_core::DropReason;
use txop_core::Nanos;

/// A simulation run: the cell, its traffic, and how long to run.
#[derive(Clone, Debug)]
pub struct SimConfig {
    pub cell: CellConfig,
    pub flows: Vec<Flow>,
    pub duration: Nanos,
    pub seed: u64,
}

/// Things that happen outside the cell.
#[derive(Clone, Copy, Debug)]
enum Event {
    /// Offer the next packet of a flow.
    Offer { flow: usize },
}

/// A running simulation.
pub struct Simulation {
    cell: Cell,
    flows: Vec<Flow>,
    flow_stats: Vec<FlowStats>,
    events: EventQueue<Event>,
    next_id: u64,
    now: Nanos,
    end: Nanos,
    offered: u64,
    delivered: u64,
    dropped: u64,
    seed: u64,
}

impl Simulation {
    pub fn new(cfg: SimConfig) -> Result<Simulation, String> {
        let cell = Cell::new(cfg.cell, cfg.seed)?;
        let mut events = EventQueue::default();
        for (i, f) in cfg.flows.iter().enumerate() {
            match f {
                Flow::Saturated(s) => {
                    for _ in 0..s.depth {
                        events.push(Nanos::ZERO, Event::Offer { flow: i });
                    }
                }
                Flow::Cbr(c) => events.push(c.start, Event::Offer { flow: i }),
            }
        }
        Ok(Simulation {
            cell,
            flow_stats: cfg.flows.iter().map(|_| FlowStats::default()).collect(),
            flows: cfg.flows,
            events,
            next_id: 0,
            now: Nanos::ZERO,
            end: cfg.duration,
            offered: 0,
            delivered: 0,
            dropped: 0,
            seed: cfg.seed,
        })
    }

    pub fn cell(&self) -> &Cell {
        &self.cell
    }

    /// Run until `until` (or the configured end, whichever is earlier).
    pub fn run_until(&mut self, until: Nanos) {
        let until = until.min(self.end);
        loop {
            let tc = self.cell.poll_timeout();
            let te = self.events.peek_time();
            let next = match (tc, te) {
                (Some(c), Some(e)) => c.min(e),
                (Some(c), None) => c,
                (None, Some(e)) => e,
                (None, None) => break,
            };
            if next > until {
                break;
            }
            self.now = next;
            // At one instant the cell's own deadline runs before external events (as
            // `Cell::handle_packet` would run it anyway).
            if tc == Some(next) {
                self.cell.handle_timeout(next);
            } else if let Some((at, ev)) = self.events.pop() {
                self.handle_event(at, ev);
            }
            self.drain_outputs();
        }
        self.now = until;
    }

    fn handle_event(&mut self, at: Nanos, ev: Event) {
        match ev {
            Event::Offer { flow } => {
                let id = self.next_id;
                self.next_id += 1;
                self.offered += 1;
                let p = self.flows[flow].packet(id, flow as u64);
                self.flow_stats[flow].offered += 1;
                if let Flow::Cbr(c) = &self.flows[flow] {
                    self.events.push(at + c.interval(), Event::Offer { flow });
                }
                self.cell.handle_packet(at, p);
            }
        }
    }

    fn drain_outputs(&mut self) {
        while let Some(o) = self.cell.poll_output() {
            match o {
                Output::Delivered { at, packet } => {
                    self.delivered += 1;
                    let flow = packet.token as usize;
                    if let Some(st) = self.flow_stats.get_mut(flow) {
                        st.delivered(at, &packet);
                    }
                    self.replace(at, flow);
                }
                Output::Dropped {
                    at, packet, reason, ..
                } => {
                    self.dropped += 1;
                    let flow = packet.token as usize;
                    if let Some(st) = self.flow_stats.get_mut(flow) {
                        st.dropped(reason);
                    }
                    // A saturated source keeps its queue full: a packet lost in the air or
                    // to an AQM is replaced; one refused by a full queue (or unroutable) is
                    // not — that would offer it again at the same instant, for ever.
                    if !matches!(reason, DropReason::QueueFull | DropReason::NoRoute) {
                        self.replace(at, flow);
                    }
                }
                Output::Airtime(_) => {}
            }
        }
    }

    /// A saturated flow's packet left the cell: offer the next one now.
    fn replace(&mut self, at: Nanos, flow: usize) {
        if matches!(self.flows.get(flow), Some(Flow::Saturated(_))) {
            self.events.push(at, Event::Offer { flow });
        }
    }

    /// Run to the end and summarise.
    pub fn run(mut self) -> Results {
        self.run_until(self.end);
        self.results()
    }

    /// Summarise what happened so far.
    pub fn results(&self) -> Results {
        let secs = self.now.as_secs_f64();
        let busy = self.cell.busy_ns();
        let stats = self.cell.stats();
        let cfg = self.cell.config();
        let mut stations = Vec::with_capacity(self.cell.stations());
        let mut total_bytes = 0u64;
        for (i, s) in stats.iter().enumerate().skip(1) {
            let bytes = s.up.delivered_bytes + s.down.delivered_bytes;
            total_bytes += bytes;
            let rate = |b: u64| {
                if secs > 0.0 {
                    b as f64 * 8.0 / secs
                } else {
                    0.0
                }
            };
            stations.push(StationResult {
                station: i as u16,
                rate: cfg.stations[i - 1].tx.modulation_label(),
                throughput_bps: rate(bytes),
                uplink_bps: rate(s.up.delivered_bytes),
                downlink_bps: rate(s.down.delivered_bytes),
                airtime_share: if busy > 0 {
                    s.airtime_ns() as f64 / busy as f64
                } else {
                    0.0
                },
                airtime_ns: s.airtime_ns(),
                ppdus: s.up.ppdus + s.down.ppdus,
                mpdus: s.up.mpdus + s.down.mpdus,
                collisions: s.up.collisions + s.down.collisions,
                failures: s.up.failures + s.down.failures,
                mpdu_retries: s.up.mpdu_retries + s.down.mpdu_retries,
                dropped_queue_full: s.up.dropped_queue_full + s.down.dropped_queue_full,
                dropped_retry_limit: s.up.dropped_retry_limit + s.down.dropped_retry_limit,
                dropped_aqm: s.up.dropped_aqm + s.down.dropped_aqm,
            });
        }
        let shares: Vec<f64> = stations.iter().map(|s| s.airtime_share).collect();
        Results {
            seed: self.seed,
            duration_s: secs,
            total_throughput_bps: if secs > 0.0 {
                total_bytes as f64 * 8.0 / secs
            } else {
                0.0
            },
            busy_fraction: if secs > 0.0 {
                busy as f64 / self.now.as_ns() as f64
            } else {
                0.0
            },
            airtime_jain_index: jain_index(&shares),
            stations,
            flows: self
                .flows
                .iter()
                .zip(&self.flow_stats)
                .enumerate()
                .map(|(i, (f, st))| st.result(i, f.kind(), f.src().0, f.dst().0, secs))
                .collect(),
            conservation: Conservation {
                offered_packets: self.offered,
                delivered_packets: self.delivered,
                dropped_packets: self.dropped,
                inside_packets: self.cell.packets_inside(),
            },
        }
    }
}

/// Jain's fairness index (Σx)² / (n·Σx²): 1 when all equal, 1/n when one takes all.
pub fn jain_index(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let sum: f64 = xs.iter().sum();
    let sq: f64 = xs.iter().map(|x| x * x).sum();
    if sq == 0.0 {
        1.0
    } else {
        sum * sum / (n * sq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_index_bounds() {
        assert!((jain_index(&[1.0, 1.0, 1.0]) - 1.0).abs() < 1e-12);
        assert!((jain_index(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
    }
}
