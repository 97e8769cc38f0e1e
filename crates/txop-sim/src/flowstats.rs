//! Per-flow counters, latency histograms and flent-style time series.

use crate::results::{FlowResult, LatencySummary};
use crate::traffic::Host;
use hdrhistogram::Histogram;
use txop_core::{DropReason, Nanos, Packet};

/// flent's sampling step: throughput is reported per 0.2 s.
pub const STEP: Nanos = Nanos::from_ms(200);

/// What happened to one flow's packets.
pub struct FlowStats {
    pub offered: u64,
    pub delivered: u64,
    pub delivered_bytes: u64,
    pub dropped: u64,
    pub dropped_aqm: u64,
    /// One-way delay (µs): from the application sending to the destination receiving.
    latency_us: Histogram<u32>,
    /// In the driver, firmware and air (µs): from entering the driver to leaving the
    /// cell.
    driver_us: Histogram<u32>,
    /// Round-trip times of a ping flow (µs).
    rtt_us: Histogram<u32>,
    /// Bytes delivered per [`STEP`].
    bytes_per_step: Vec<u64>,
    /// (time s, RTT ms) of every ping reply.
    rtt_samples: Vec<(f64, f64)>,
}

fn histogram() -> Histogram<u32> {
    // 1 µs to 1000 s, 2 significant digits (1 % resolution): about 12 KB. Three digits
    // would be 15 times larger, which dominates short runs with many flows.
    Histogram::new_with_bounds(1, 1_000_000_000, 2).expect("valid bounds")
}

impl Default for FlowStats {
    fn default() -> Self {
        FlowStats {
            offered: 0,
            delivered: 0,
            delivered_bytes: 0,
            dropped: 0,
            dropped_aqm: 0,
            latency_us: histogram(),
            driver_us: histogram(),
            rtt_us: histogram(),
            bytes_per_step: Vec::new(),
            rtt_samples: Vec::new(),
        }
    }
}

fn us(d: Nanos) -> u64 {
    (d.as_ns() / 1000).clamp(1, 1_000_000_000)
}

impl FlowStats {
    /// The cell delivered one of this flow's packets (it may still cross the wire).
    pub fn air_delivered(&mut self, at: Nanos, p: &Packet) {
        let _ = self.driver_us.record(us(at.saturating_sub(p.queued_at)));
    }

    /// A data packet reached its destination host.
    pub fn delivered(&mut self, at: Nanos, sent_at: Nanos, len_bytes: u32) {
        self.delivered += 1;
        self.delivered_bytes += len_bytes as u64;
        let _ = self.latency_us.record(us(at.saturating_sub(sent_at)));
        let step = (at.as_ns() / STEP.as_ns()) as usize;
        if self.bytes_per_step.len() <= step {
            self.bytes_per_step.resize(step + 1, 0);
        }
        self.bytes_per_step[step] += len_bytes as u64;
    }

    /// A ping reply came back after `rtt`.
    pub fn rtt(&mut self, at: Nanos, rtt: Nanos) {
        self.delivered += 1;
        let _ = self.rtt_us.record(us(rtt));
        self.rtt_samples.push((at.as_secs_f64(), rtt.as_ms_f64()));
    }

    pub fn dropped(&mut self, reason: DropReason) {
        self.dropped += 1;
        if matches!(
            reason,
            DropReason::Codel | DropReason::Overlimit | DropReason::Overmemory
        ) {
            self.dropped_aqm += 1;
        }
    }

    pub fn result(&self, id: usize, kind: &str, src: Host, dst: Host, secs: f64) -> FlowResult {
        let steps = (secs / STEP.as_secs_f64()).ceil() as usize;
        FlowResult {
            flow: id as u32,
            kind: kind.to_string(),
            src: src.name(),
            dst: dst.name(),
            offered_packets: self.offered,
            delivered_packets: self.delivered,
            dropped_packets: self.dropped,
            dropped_aqm: self.dropped_aqm,
            throughput_bps: if secs > 0.0 {
                self.delivered_bytes as f64 * 8.0 / secs
            } else {
                0.0
            },
            latency_ms: summary(&self.latency_us),
            driver_latency_ms: summary(&self.driver_us),
            rtt_ms: summary(&self.rtt_us),
            throughput_series_bps: (0..steps)
                .map(|i| {
                    self.bytes_per_step.get(i).copied().unwrap_or(0) as f64 * 8.0
                        / STEP.as_secs_f64()
                })
                .collect(),
            rtt_samples: self.rtt_samples.clone(),
        }
    }
}

fn summary(h: &Histogram<u32>) -> Option<LatencySummary> {
    if h.is_empty() {
        return None;
    }
    let ms = |v: u64| v as f64 / 1000.0;
    Some(LatencySummary {
        mean: h.mean() / 1000.0,
        p50: ms(h.value_at_quantile(0.5)),
        p90: ms(h.value_at_quantile(0.9)),
        p99: ms(h.value_at_quantile(0.99)),
        max: ms(h.max()),
    })
}
