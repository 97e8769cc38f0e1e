//! Timing error: how late a packet was really written compared with the time the
//! model said it leaves the network (the target: median well under 100 µs).

use hdrhistogram::Histogram;
use txop_core::Nanos;

/// Write lateness in nanoseconds, 1 ns to 100 s at 3 significant digits (bounded: a
/// fixed-size histogram, whatever the run's length).
pub struct LatenessHistogram {
    h: Histogram<u64>,
}

impl Default for LatenessHistogram {
    fn default() -> Self {
        LatenessHistogram {
            h: Histogram::new_with_bounds(1, 100_000_000_000, 3).expect("valid bounds"),
        }
    }
}

/// Percentiles of the timing error, µs.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct TimingSummary {
    pub samples: u64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
}

impl LatenessHistogram {
    pub fn record(&mut self, late: Nanos) {
        let _ = self.h.record(late.as_ns().clamp(1, 100_000_000_000));
    }

    pub fn summary(&self) -> TimingSummary {
        if self.h.is_empty() {
            return TimingSummary::default();
        }
        let us = |q: f64| self.h.value_at_quantile(q) as f64 / 1e3;
        TimingSummary {
            samples: self.h.len(),
            p50_us: us(0.5),
            p90_us: us(0.9),
            p99_us: us(0.99),
            max_us: self.h.max() as f64 / 1e3,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_known_samples() {
        let mut h = LatenessHistogram::default();
        for us in 1..=100u64 {
            h.record(Nanos::from_us(us));
        }
        let s = h.summary();
        assert_eq!(s.samples, 100);
        assert!((s.p50_us - 50.0).abs() < 0.1, "{s:?}");
        assert!((s.p99_us - 99.0).abs() < 0.1, "{s:?}");
        assert!((s.max_us - 100.0).abs() < 0.1, "{s:?}");
    }
}
