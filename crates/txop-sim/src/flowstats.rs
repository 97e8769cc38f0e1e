//! Per-flow counters and latency histograms.

use crate::results::{FlowResult, LatencySummary};
use hdrhistogram::Histogram;
use txop_core::{DropReason, Nanos, Packet};

/// What happened to one flow's packets.
pub struct FlowStats {
    pub offered: u64,
    pub delivered: u64,
    pub delivered_bytes: u64,
    pub dropped: u64,
    pub dropped_aqm: u64,
    /// One-way delay through the cell (µs): from entering the model to delivery.
    latency_us: Histogram<u32>,
    /// Of which in the driver, firmware and air (µs): from entering the driver.
    driver_us: Histogram<u32>,
}

impl Default for FlowStats {
    fn default() -> Self {
        FlowStats {
            offered: 0,
            delivered: 0,
            delivered_bytes: 0,
            dropped: 0,
            dropped_aqm: 0,
            // 1 µs to 1000 s, 2 significant digits (1 % resolution): about 12 KB each.
            // Three digits would be 15 times larger, which dominates short runs with
            // many flows.
            latency_us: Histogram::new_with_bounds(1, 1_000_000_000, 2).expect("valid bounds"),
            driver_us: Histogram::new_with_bounds(1, 1_000_000_000, 2).expect("valid bounds"),
        }
    }
}

fn us(d: Nanos) -> u64 {
    (d.as_ns() / 1000).clamp(1, 1_000_000_000)
}

impl FlowStats {
    pub fn delivered(&mut self, at: Nanos, p: &Packet) {
        self.delivered += 1;
        self.delivered_bytes += p.len_bytes as u64;
        let _ = self.latency_us.record(us(at.saturating_sub(p.enqueued_at)));
        let _ = self.driver_us.record(us(at.saturating_sub(p.queued_at)));
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

    pub fn result(&self, id: usize, kind: &str, src: u16, dst: u16, secs: f64) -> FlowResult {
        FlowResult {
            flow: id as u32,
            kind: kind.to_string(),
            src,
            dst,
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
