//! Per-flow counters, latency histograms and flent-style time series.

use crate::results::{FlowResult, LatencySummary};
use crate::traffic::Host;
#[cfg(test)]
use hdrhistogram::Histogram;
use txop_core::{DropReason, Nanos, Packet};

/// flent's sampling step: throughput is reported per 0.2 s.
pub const STEP: Nanos = Nanos::from_ms(200);

/// What happened to one flow's packets.
#[derive(Default)]
pub struct FlowStats {
    pub offered: u64,
    pub delivered: u64,
    pub delivered_bytes: u64,
    pub dropped: u64,
    pub dropped_aqm: u64,
    /// One-way delay (µs): from the application sending to the destination receiving.
    /// (Histograms are allocated on first use: most flows fill only some of them.)
    latency_us: Option<Buckets>,
    /// In the driver, firmware and air (µs): from entering the driver to leaving the
    /// cell.
    driver_us: Option<Buckets>,
    /// Round-trip times of a ping flow (µs).
    rtt_us: Option<Buckets>,
    /// Bytes delivered per [`STEP`].
    bytes_per_step: Vec<u64>,
    /// (time s, RTT ms) of every ping reply.
    rtt_samples: Vec<(f64, f64)>,
    /// (time s, forward one-way ms, return one-way ms) of every echo reply.
    owd_samples: Vec<(f64, f64, f64)>,
    /// Highest echo sequence number answered so far, and how many were answered.
    echo_max_seq: Option<u64>,
    echo_replies: u64,
    /// TCP: the sender's cwnd at the end of each step, and its retransmissions.
    cwnd_per_step: Vec<u64>,
    retransmits: Option<u64>,
    /// Web: page load times (s).
    page_loads: Vec<f64>,
}

#[cfg(test)]
fn histogram() -> Histogram<u32> {
    // 1 µs to 1000 s, 2 significant digits (1 % resolution): about 12 KB. Three digits
    // would be 15 times larger, which dominates short runs with many flows.
    Histogram::new_with_bounds(1, 1_000_000_000, 2).expect("valid bounds")
}

/// Counts per bucket of [`histogram`]'s layout (1 µs to 1000 s, 2 significant digits:
/// 256 sub-buckets, the upper 128 of each used past the first bucket), for values in
/// 1..=10⁹. Recording is the hot path (two per packet): a bucket index is a shift and
/// an add, where hdrhistogram's `record` also checks bounds, resizing and min/max. The
/// summary only reads the counts (quantiles, mean) and the maximum to its bucket's
/// highest equivalent value, so [`Buckets::histogram`] recording each bucket's lowest
/// value with its count gives the same summary as recording every value, and
/// [`Buckets::summary`] computes that summary from the counts directly.
struct Buckets(Box<[u32; Buckets::LEN]>);

impl Buckets {
    /// Sub-buckets per half bucket (2⁷): 256 sub-buckets per bucket.
    const HALF_MAGNITUDE: u32 = 7;
    /// 10⁹ < 2³⁰ lies in bucket 22: (22 + 1) × 128 + 128 counts.
    const LEN: usize = 3072;

    fn new() -> Buckets {
        Buckets(Box::new([0; Buckets::LEN]))
    }

    /// hdrhistogram's `index_for` with unit magnitude 0 and 256 sub-buckets.
    #[inline]
    fn index(v: u64) -> usize {
        let bucket = 56 - (v | 255).leading_zeros();
        (bucket << Self::HALF_MAGNITUDE) as usize + (v >> bucket) as usize
    }

    /// The lowest value of bucket index `i` (hdrhistogram's `value_for`).
    fn value(i: usize) -> u64 {
        let bucket = (i >> Self::HALF_MAGNITUDE).saturating_sub(1);
        ((i - (bucket << Self::HALF_MAGNITUDE)) as u64) << bucket
    }

    #[inline]
    fn record(&mut self, v: u64) {
        let c = &mut self.0[Self::index(v)];
        *c = c.saturating_add(1);
    }

    /// Width of the value range of bucket index `i` (hdrhistogram's
    /// `equivalent_range`: 2 to the power of its bucket).
    fn range(i: usize) -> u64 {
        1 << (i >> Self::HALF_MAGNITUDE).saturating_sub(1)
    }

    /// The summary (mean, p50, p90, p99, max in ms) of the hdrhistogram these counts
    /// stand for, computed as hdrhistogram computes it, without building it (which
    /// allocates and fills a histogram, then walks it once per statistic):
    /// - `mean`: the sum, over non-empty buckets in index order, of the bucket's
    ///   median equivalent (lowest value + half its range) × count / total count,
    ///   in that order of operations (`Histogram::mean`);
    /// - quantile `q`: the highest equivalent value (lowest + range − 1) of the first
    ///   bucket at which the running count reaches ⌈q × total⌉, at least 1
    ///   (`Histogram::value_at_quantiles`);
    /// - `max`: the highest equivalent value of the last non-empty bucket
    ///   (`Histogram::max` of the largest value recorded, a bucket's lowest value).
    ///
    /// `None` when nothing was recorded.
    fn summary(&self) -> Option<LatencySummary> {
        const QUANTILES: [f64; 3] = [0.5, 0.9, 0.99];
        let total: u64 = self.0.iter().map(|&c| c as u64).sum();
        if total == 0 {
            return None;
        }
        let targets = QUANTILES.map(|q| ((q * total as f64).ceil() as u64).max(1));
        let highest = |i: usize| Self::value(i) + Self::range(i) - 1;
        let mut at_quantile = [0u64; 3];
        let mut next_q = 0;
        let (mut running, mut sum, mut last) = (0u64, 0.0f64, 0usize);
        for (i, &c) in self.0.iter().enumerate() {
            if c == 0 {
                continue;
            }
            running += c as u64;
            let median = Self::value(i) + (Self::range(i) >> 1);
            sum += median as f64 * c as f64 / total as f64;
            while next_q < targets.len() && running >= targets[next_q] {
                at_quantile[next_q] = highest(i);
                next_q += 1;
            }
            last = i;
        }
        let ms = |v: u64| v as f64 / 1000.0;
        Some(LatencySummary {
            mean: sum / 1000.0,
            p50: ms(at_quantile[0]),
            p90: ms(at_quantile[1]),
            p99: ms(at_quantile[2]),
            max: ms(highest(last)),
        })
    }

    /// The hdrhistogram these counts summarise.
    #[cfg(test)]
    fn histogram(&self) -> Histogram<u32> {
        let mut h = histogram();
        for (i, &c) in self.0.iter().enumerate() {
            if c > 0 {
                let v = Self::value(i);
                debug_assert_eq!(h.lowest_equivalent(v), v);
                let _ = h.record_n(v, c);
            }
        }
        h
    }
}

#[inline]
fn record(h: &mut Option<Buckets>, v: u64) {
    h.get_or_insert_with(Buckets::new).record(v);
}

#[inline]
fn us(d: Nanos) -> u64 {
    (d.as_ns() / 1000).clamp(1, 1_000_000_000)
}

impl FlowStats {
    /// The cell delivered one of this flow's packets (it may still cross the wire).
    pub fn air_delivered(&mut self, at: Nanos, p: &Packet) {
        record(&mut self.driver_us, us(at.saturating_sub(p.queued_at)));
    }

    /// A data packet reached its destination host.
    pub fn delivered(&mut self, at: Nanos, sent_at: Nanos, len_bytes: u32) {
        self.delivered_bytes_at(at, sent_at, len_bytes as u64);
    }

    /// `bytes` of payload reached the application at `at` (for TCP: what became
    /// in-order with a segment sent at `sent_at`).
    // Once per delivered packet or in-order TCP advance, and a few instructions past
    // its call overhead; the optimiser does not inline it on its own (a plain
    // `#[inline]` changes nothing).
    #[inline(always)]
    pub fn delivered_bytes_at(&mut self, at: Nanos, sent_at: Nanos, bytes: u64) {
        self.delivered += 1;
        self.delivered_bytes += bytes;
        record(&mut self.latency_us, us(at.saturating_sub(sent_at)));
        let step = (at.as_ns() / STEP.as_ns()) as usize;
        if self.bytes_per_step.len() <= step {
            self.bytes_per_step.resize(step + 1, 0);
        }
        self.bytes_per_step[step] += bytes;
    }

    /// A web page finished loading after `secs`.
    pub fn page_loaded(&mut self, secs: f64) {
        self.page_loads.push(secs);
    }

    /// A TCP sender's state after an ACK.
    pub fn tcp_sample(&mut self, at: Nanos, cwnd_bytes: u64, retransmits: u64) {
        let step = (at.as_ns() / STEP.as_ns()) as usize;
        if self.cwnd_per_step.len() <= step {
            let last = self.cwnd_per_step.last().copied().unwrap_or(cwnd_bytes);
            self.cwnd_per_step.resize(step + 1, last);
        }
        self.cwnd_per_step[step] = cwnd_bytes;
        self.retransmits = Some(retransmits);
    }

    /// An echo reply came back: `forward` and `back` are the one-way delays of the
    /// request and of the reply.
    pub fn echo(&mut self, at: Nanos, seq: u64, forward: Nanos, back: Nanos) {
        let rtt = forward + back;
        self.delivered += 1;
        self.echo_replies += 1;
        self.echo_max_seq = Some(self.echo_max_seq.map_or(seq, |m| m.max(seq)));
        record(&mut self.rtt_us, us(rtt));
        let t = at.as_secs_f64();
        self.rtt_samples.push((t, rtt.as_ms_f64()));
        self.owd_samples
            .push((t, forward.as_ms_f64(), back.as_ms_f64()));
    }

    /// Mean absolute difference of consecutive RTTs (IPDV, as irtt and flent's voip
    /// jitter), ms.
    fn ipdv_ms(&self) -> Option<f64> {
        if self.rtt_samples.len() < 2 {
            return None;
        }
        let d: f64 = self
            .rtt_samples
            .windows(2)
            .map(|w| (w[1].1 - w[0].1).abs())
            .sum();
        Some(d / (self.rtt_samples.len() - 1) as f64)
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

    pub fn result(
        &self,
        id: usize,
        (kind, label): (&str, &str),
        src: Host,
        dst: Host,
        secs: f64,
    ) -> FlowResult {
        let steps = (secs / STEP.as_secs_f64()).ceil() as usize;
        FlowResult {
            flow: id as u32,
            kind: kind.to_string(),
            label: label.to_string(),
            src: src.name(),
            dst: dst.name(),
            offered_packets: self.offered,
            delivered_packets: self.delivered,
            dropped_packets: self.dropped,
            dropped_aqm: self.dropped_aqm,
            throughput_bps: crate::results::bits_per_s(self.delivered_bytes, secs),
            latency_ms: summary(self.latency_us.as_ref()),
            driver_latency_ms: summary(self.driver_us.as_ref()),
            rtt_ms: summary(self.rtt_us.as_ref()),
            throughput_series_bps: (0..steps)
                .map(|i| {
                    self.bytes_per_step.get(i).copied().unwrap_or(0) as f64 * 8.0
                        / STEP.as_secs_f64()
                })
                .collect(),
            rtt_samples: self.rtt_samples.clone(),
            owd_samples: self.owd_samples.clone(),
            retransmits: self.retransmits,
            cwnd_series_bytes: self.cwnd_per_step.clone(),
            page_load_times_s: self.page_loads.clone(),
            ipdv_ms: self.ipdv_ms(),
            // Requests sent whose reply never came (those still in flight at the end,
            // sent in the last second, are not counted as lost).
            echo_loss: self.echo_max_seq.map(|m| {
                let expected = m + 1;
                1.0 - self.echo_replies.min(expected) as f64 / expected as f64
            }),
        }
    }
}

fn summary(b: Option<&Buckets>) -> Option<LatencySummary> {
    b?.summary()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The summary as hdrhistogram computes it (what [`Buckets::summary`] replaces).
    fn hdr_summary(h: &Histogram<u32>) -> Option<LatencySummary> {
        if h.is_empty() {
            return None;
        }
        let ms = |v: u64| v as f64 / 1000.0;
        let mut q = h.value_at_quantiles([0.5, 0.9, 0.99]);
        let (p50, p90, p99) = (q.next()?, q.next()?, q.next()?);
        Some(LatencySummary {
            mean: h.mean() / 1000.0,
            p50: ms(p50),
            p90: ms(p90),
            p99: ms(p99),
            max: ms(h.max()),
        })
    }

    /// The summary from the counts is bit for bit hdrhistogram's, for few and many
    /// values, narrow and wide spreads, ties at the quantiles and extreme values.
    #[test]
    fn summary_matches_hdrhistogram() {
        let bits = |s: Option<LatencySummary>| {
            s.map(|s| [s.mean, s.p50, s.p90, s.p99, s.max].map(f64::to_bits))
        };
        let mut x = 987654321u64;
        for case in 0..300u64 {
            let mut b = Buckets::new();
            let n = [1, 2, 3, 10, 100, 1000, 20_000][(case % 7) as usize];
            let spread = [10u64, 1_000, 100_000, 50_000_000, 1_000_000_000][(case % 5) as usize];
            for _ in 0..n {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                b.record((x >> 33) % spread + 1);
            }
            if case % 11 == 0 {
                b.record(1);
                b.record(1_000_000_000);
            }
            assert_eq!(
                bits(b.summary()),
                bits(hdr_summary(&b.histogram())),
                "case {case}"
            );
        }
        let empty = Buckets::new();
        assert!(empty.summary().is_none() && hdr_summary(&empty.histogram()).is_none());
    }

    /// Every value from 1 µs to 1000 s falls into the bucket hdrhistogram would use, and
    /// the summary from bucket counts is the one from recording the values themselves.
    #[test]
    fn buckets_match_hdrhistogram() {
        let h = histogram();
        for x in 1..=100_000u64 {
            assert_eq!(Buckets::value(Buckets::index(x)), h.lowest_equivalent(x));
        }
        let mut v = 1u64;
        while v <= 1_000_000_000 {
            for x in [v, v + 1, v.saturating_sub(1).max(1), v * 3 / 2] {
                let x = x.min(1_000_000_000);
                let i = Buckets::index(x);
                assert!(i < Buckets::LEN);
                assert_eq!(Buckets::value(i), h.lowest_equivalent(x), "value {x}");
            }
            v = v * 9 / 8 + 1;
        }
        let (mut direct, mut b) = (histogram(), Buckets::new());
        let mut x = 12345u64;
        for _ in 0..10_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let v = (x >> 33) % 50_000_000 + 1;
            direct.record(v).unwrap();
            b.record(v);
        }
        let s = |h: &Histogram<u32>| {
            let q: Vec<u64> = h.value_at_quantiles([0.5, 0.9, 0.99]).collect();
            (h.mean().to_bits(), q, h.max(), h.len())
        };
        assert_eq!(s(&direct), s(&b.histogram()));
    }
}
