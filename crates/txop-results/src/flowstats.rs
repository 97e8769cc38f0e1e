//! Per-flow counters, latency histograms and flent-style time series, all in memory
//! bounded over simulated time: the histograms have a fixed size, the time series hold
//! at most [`SERIES_MAX_STEPS`] + 1 steps (adjacent steps merge, doubling the step,
//! when a run outgrows them) and the sample lists at most [`SAMPLES_MAX`] entries
//! (every other is dropped, doubling the stride, when a flow outgrows them).

use crate::results::{DelayBudgetResult, DirectionBudget, FlowResult, LatencySummary, StageBudget};
#[cfg(test)]
use hdrhistogram::Histogram;
use txop_core::budget::{Stage, Stages};
use txop_core::network::Host;
use txop_core::series::{end_value, series_shift, step_secs, sum_bytes, StepSeries};
pub use txop_core::series::{series_step, SERIES_MAX_STEPS, STEP};
use txop_core::{DropReason, Nanos, Packet};

/// The most entries a flow keeps of a sample list (echo replies, page loads): past
/// it, every other entry is dropped and from then on only every second one is kept,
/// and so on, so that the list always holds every `stride`-th entry, evenly over the
/// run ([`FlowResult::sample_stride`]).
pub const SAMPLES_MAX: usize = 2048;

/// Every `stride`-th entry of a stream (entries 0, stride, 2 × stride …), at most
/// [`SAMPLES_MAX`] of them: when one more would not fit, every other one kept is
/// dropped and the stride doubles.
#[derive(Clone, Debug)]
struct Thinned<T> {
    kept: Vec<T>,
    stride: u64,
    seen: u64,
}

impl<T> Default for Thinned<T> {
    fn default() -> Self {
        Thinned {
            kept: Vec::new(),
            stride: 1,
            seen: 0,
        }
    }
}

impl<T> Thinned<T> {
    fn push(&mut self, item: T) {
        let i = self.seen;
        self.seen += 1;
        if !i.is_multiple_of(self.stride) {
            return;
        }
        if self.kept.len() >= SAMPLES_MAX {
            let mut k = 0usize;
            self.kept.retain(|_| {
                k += 1;
                k % 2 == 1
            });
            self.stride *= 2;
            if !i.is_multiple_of(self.stride) {
                return;
            }
        }
        self.kept.push(item);
    }
}

/// One echo reply: when it came back (s), its RTT and the one-way delays of the
/// request and of the reply (ms).
#[derive(Clone, Copy, Debug)]
struct EchoSample {
    t_s: f64,
    rtt_ms: f64,
    forward_ms: f64,
    back_ms: f64,
}

/// What happened to one flow's packets.
#[derive(Default)]
pub struct FlowStats {
    pub offered: u64,
    pub delivered: u64,
    pub delivered_bytes: u64,
    pub dropped: u64,
    pub dropped_aqm: u64,
    /// One-way delay: from the application sending to the destination receiving.
    /// (Histograms are allocated on first use: most flows fill only some of them.)
    latency: Option<Latency>,
    /// In the driver, firmware and air: from entering the driver to leaving the cell.
    driver: Option<Latency>,
    /// Round-trip times of a ping flow.
    rtt: Option<Latency>,
    /// TCP: the sender's RTT samples.
    tcp_rtt: Option<Latency>,
    /// Bytes delivered per step.
    bytes_per_step: StepSeries,
    /// Echo replies (every `stride`-th).
    echoes: Thinned<EchoSample>,
    /// The RTT of the last echo reply (ms), and the sum of the absolute differences of
    /// consecutive RTTs (for [`FlowStats::ipdv_ms`], over every reply).
    last_rtt_ms: Option<f64>,
    rtt_deltas_ms: f64,
    /// Highest echo sequence number answered so far, and how many were answered.
    echo_max_seq: Option<u64>,
    echo_replies: u64,
    /// TCP: the sender's cwnd at the end of each step, and its retransmissions.
    cwnd_per_step: StepSeries,
    retransmits: Option<u64>,
    /// TCP: retransmission timeouts of the sender(s).
    timeouts: Option<u64>,
    /// TCP: srtt, pacing and delivery rate, BBR's modes per step (allocated by the
    /// first sample: most flows are not TCP).
    tcp_series: Option<Box<TcpSeries>>,
    /// Web: page load times (s), every `stride`-th.
    page_loads: Thinned<f64>,
    /// The delay budget, forward and back (allocated by the first packet split).
    budget: Option<Box<[Option<DirectionBudgetStats>; 2]>>,
}

/// A packet of a flow reached the application at its destination: what its delay
/// budget records ([`FlowStats::budget`]).
#[derive(Clone, Copy, Debug)]
pub struct BudgetArrival<'a> {
    /// Which way it went.
    pub direction: Direction,
    /// When its application sent it.
    pub sent_at: Nanos,
    /// When it reached the application.
    pub at: Nanos,
    /// Its stages go into the percentiles too, not only the sums and means (not for
    /// TCP's ACKs: their means split a round trip, and they are half of a TCP flow's
    /// packets, whose percentiles would cost as much again).
    pub percentiles: bool,
    /// Its delay split by stage; `None` when it could not be split.
    pub stages: Option<&'a Stages>,
}

/// Which way a packet of a flow went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// From the flow's source to its destination (data, echo requests).
    Forward,
    /// Back (TCP's ACKs, echo replies).
    Back,
}

/// The delay budget of a flow's packets one way, as recorded.
#[derive(Default)]
struct DirectionBudgetStats {
    packets: u64,
    unsplit_packets: u64,
    delay_sum_ns: u64,
    sum_ns: [u64; Stage::COUNT],
    /// Per stage, its non-zero times (µs, as [`Latency`] buckets them), allocated by
    /// the first: many stages stay 0 on a stack (the qdisc under `noqueue`, the
    /// reorder buffer without losses). The packets not counted here spent 0 there.
    nonzero: [Option<Buckets>; Stage::COUNT],
    /// Packets recorded without percentiles ([`BudgetArrival::percentiles`]): then
    /// there are none.
    means_only: bool,
}

/// Count a stage's non-zero time, `us` (µs, as [`Latency`] buckets it), in its
/// buckets (allocated by the first).
#[cold]
#[inline(never)]
fn first_nonzero(nonzero: &mut Option<Buckets>, us: u64) {
    nonzero.insert(Buckets::new()).record(us);
}

/// Count a stage's non-zero time, `us` (µs), in its buckets.
#[inline(always)]
fn record_nonzero(nonzero: &mut Option<Buckets>, us: u64) {
    match nonzero {
        Some(b) => b.record(us),
        None => first_nonzero(nonzero, us),
    }
}

/// Count each stage's non-zero time, `ns` in µs as `to_us` rounds it, in its buckets.
#[inline(always)]
fn record_nonzero_stages(
    nonzero: &mut [Option<Buckets>; Stage::COUNT],
    stages: &Stages,
    to_us: impl Fn(u64) -> u64,
) {
    let stage = |nonzero: &mut Option<Buckets>, ns: u64| {
        if ns != 0 {
            record_nonzero(nonzero, to_us(ns));
        }
    };
    // perf: unrolled (a loop's counter and test cost as much as a stage's zero
    // test, and the optimiser keeps the loop for the cold call in it).
    let [b0, b1, b2, b3, b4, b5, b6, b7, b8] = nonzero;
    let [n0, n1, n2, n3, n4, n5, n6, n7, n8] = stages.ns;
    stage(b0, n0);
    stage(b1, n1);
    stage(b2, n2);
    stage(b3, n3);
    stage(b4, n4);
    stage(b5, n5);
    stage(b6, n6);
    stage(b7, n7);
    stage(b8, n8);
}

impl DirectionBudgetStats {
    // perf: once per packet each way: nine sums, and a bucket count for each stage
    // that took time (on a loaded link, most stages of a data packet).
    #[inline]
    fn record(&mut self, delay: Nanos, stages: &Stages, percentiles: bool) {
        self.packets += 1;
        self.delay_sum_ns += delay.as_ns();
        let mut any_bits = 0;
        for (sum, &ns) in self.sum_ns.iter_mut().zip(&stages.ns) {
            *sum += ns;
            any_bits |= ns;
        }
        if !percentiles {
            self.means_only = true;
            return;
        }
        // perf: under 2³⁹ ns (550 s) no stage reaches the buckets' top (1000 s), so
        // one test spares the nine clamps from above (as [`Latency::record`] rounds).
        if any_bits < 1 << 39 {
            record_nonzero_stages(&mut self.nonzero, stages, |ns| (ns / 1000).max(1));
        } else {
            record_nonzero_stages(&mut self.nonzero, stages, |ns| {
                (ns / 1000).clamp(1, 1_000_000_000)
            });
        }
    }

    fn result(&self) -> DirectionBudget {
        DirectionBudget {
            packets: self.packets,
            unsplit_packets: self.unsplit_packets,
            delay_sum_ns: self.delay_sum_ns,
            stages: Stage::ALL
                .iter()
                .enumerate()
                .map(|(i, stage)| {
                    let mean_ms = if self.packets == 0 {
                        0.0
                    } else {
                        self.sum_ns[i] as f64 / self.packets as f64 / 1e6
                    };
                    let [p50_ms, p99_ms] = match &self.nonzero[i] {
                        _ if self.means_only => [None; 2],
                        None => [Some(0.0); 2],
                        Some(b) => b
                            .quantiles_ms_with_zeros(self.packets, [0.5, 0.99])
                            .map(Some),
                    };
                    StageBudget {
                        stage: stage.name(),
                        sum_ns: self.sum_ns[i],
                        mean_ms,
                        p50_ms,
                        p99_ms,
                    }
                })
                .collect(),
        }
    }
}

#[cfg(test)]
fn histogram() -> Histogram<u32> {
    // 1 µs to 1000 s, 2 significant digits (1 % resolution): about 12 KB. Three digits
    // would be 15 times larger, which dominates short runs with many flows.
    Histogram::new_with_bounds(1, 1_000_000_000, 2).expect("valid bounds")
}

/// Counts per bucket of [`histogram`]'s layout (1 µs to 1000 s, 2 significant digits:
/// 256 sub-buckets, the upper 128 of each used past the first bucket), for values in
/// 1..=10⁹. Recording a value (two per packet) is a shift and an add, where
/// hdrhistogram's `record` also checks bounds, resizing and min/max. The summary only
/// reads the counts (quantiles, mean) and the maximum to its bucket's highest
/// equivalent value, so [`Buckets::histogram`] recording each bucket's lowest
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

    /// Quantiles `qs` (ms) of `total` samples: those counted here and, below them,
    /// `total` minus those, each 0. A quantile is the highest equivalent value of
    /// the bucket at which the running count reaches ⌈q × total⌉, as in
    /// [`Buckets::summary`], or 0 where the zeros reach it.
    fn quantiles_ms_with_zeros<const N: usize>(&self, total: u64, qs: [f64; N]) -> [f64; N] {
        let counted: u64 = self.0.iter().map(|&c| c as u64).sum();
        let zeros = total.saturating_sub(counted);
        qs.map(|q| {
            let target = ((q * total as f64).ceil() as u64).max(1);
            if target <= zeros {
                return 0.0;
            }
            let mut running = zeros;
            for (i, &c) in self.0.iter().enumerate() {
                running += c as u64;
                if c > 0 && running >= target {
                    return (Self::value(i) + Self::range(i) - 1) as f64 / 1000.0;
                }
            }
            0.0
        })
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
    ///   (`Histogram::max` of the largest value recorded, a bucket's lowest value);
    /// - `min`: the lowest value of the first non-empty bucket (`Histogram::min`).
    ///
    /// `None` when nothing was recorded. ([`Latency::summary`] replaces `min`, `mean`
    /// and `max` with the exact ones.)
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
        let mut first = None;
        for (i, &c) in self.0.iter().enumerate() {
            if c == 0 {
                continue;
            }
            first.get_or_insert(i);
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
            min: ms(Self::value(first.unwrap_or(last))),
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

/// A latency distribution: its histogram (µs, for the percentiles) and, exactly, its
/// extremes and sum (ns), which a histogram bucket would round up by up to 1 %.
struct Latency {
    buckets: Buckets,
    min_ns: u64,
    max_ns: u64,
    sum_ns: u128,
    count: u64,
}

impl Latency {
    fn new() -> Latency {
        Latency {
            buckets: Buckets::new(),
            min_ns: u64::MAX,
            max_ns: 0,
            sum_ns: 0,
            count: 0,
        }
    }

    #[inline]
    fn record(&mut self, d: Nanos) {
        let ns = d.as_ns();
        self.buckets.record((ns / 1000).clamp(1, 1_000_000_000));
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
        self.sum_ns += ns as u128;
        self.count += 1;
    }

    /// The summary in ms: `min`, `mean` and `max` exact (a single sample is all
    /// three), the percentiles from the histogram (the highest value of their bucket,
    /// at most 1 % above), brought within [`min`, `max`] where a bucket reaches past
    /// them. `None` when nothing was recorded.
    fn summary(&self) -> Option<LatencySummary> {
        let h = self.buckets.summary()?;
        let ms = |ns: u64| Nanos(ns).as_ms_f64();
        let (min, max) = (ms(self.min_ns), ms(self.max_ns));
        Some(LatencySummary {
            min,
            mean: self.sum_ns as f64 / self.count as f64 / 1e6,
            p50: h.p50.clamp(min, max),
            p90: h.p90.clamp(min, max),
            p99: h.p99.clamp(min, max),
            max,
        })
    }
}

#[inline]
fn record(h: &mut Option<Latency>, d: Nanos) {
    h.get_or_insert_with(Latency::new).record(d);
}

/// BBR's mode (`enum bbr_mode` of `net/ipv4/tcp_bbr.c`): the TCP model's state
/// machine, and what a BBR flow's results report per step (`bbr_mode_series`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum BbrMode {
    /// Ramp up to fill the pipe (gain 2.885).
    #[default]
    Startup,
    /// Drain the queue STARTUP made.
    Drain,
    /// Cycle the pacing gain around the estimated bandwidth.
    ProbeBw,
    /// Cap inflight at 4 segments to re-measure the propagation delay.
    ProbeRtt,
}

impl BbrMode {
    /// Every mode, in the order of the state machine's first pass.
    pub const ALL: [BbrMode; 4] = [
        BbrMode::Startup,
        BbrMode::Drain,
        BbrMode::ProbeBw,
        BbrMode::ProbeRtt,
    ];

    /// The kernel's name for it (`BBR_STARTUP` … without the prefix), as results
    /// name it.
    pub const fn name(self) -> &'static str {
        match self {
            BbrMode::Startup => "STARTUP",
            BbrMode::Drain => "DRAIN",
            BbrMode::ProbeBw => "PROBE_BW",
            BbrMode::ProbeRtt => "PROBE_RTT",
        }
    }

    /// Its bit in a set of modes ([`BbrSample::entered`]).
    pub fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// BBR's state as a sender reports it after an ACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BbrSample {
    /// Its mode now.
    pub mode: BbrMode,
    /// The modes it entered since its last sample (bits of [`BbrMode::bit`]): a mode
    /// may begin and end within one ACK (DRAIN, when STARTUP ends with no queue to
    /// drain, `bbr_check_drain`).
    pub entered: u8,
}

/// What a TCP sender reports after an ACK ([`FlowStats::tcp_sample`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpSample {
    /// Its congestion window, bytes.
    pub cwnd_bytes: u64,
    /// Segments retransmitted since the last sample.
    pub new_retransmits: u64,
    /// Retransmission timeouts since the last sample.
    pub new_timeouts: u64,
    /// The RTT sample the ACK gave, if it advanced the window (the one the sender's
    /// RTT estimator takes: from the timestamp it echoes).
    pub rtt: Option<Nanos>,
    /// Its smoothed RTT, once measured.
    pub srtt: Option<Nanos>,
    /// Its pacing rate, bit/s, when it paces.
    pub pacing_rate_bps: Option<u64>,
    /// Its delivery rate (`tcpi_delivery_rate`), payload bit/s, once sampled.
    pub delivery_rate_bps: Option<u64>,
    /// BBR's mode after the ACK and the modes it passed through, for a BBR sender.
    pub bbr: Option<BbrSample>,
}

/// A step of a [`StepSeries`] of end values that no sample has reached yet (before a
/// flow's first one): `null` in the results.
const NO_SAMPLE: u64 = u64::MAX;

/// Record `v` as the value at the end of the step holding `at`: steps skipped since the
/// last sample keep its value (nothing changed without a sample), and steps before the
/// first take `lead`. Returns the step it found.
#[inline]
fn record_end_value(series: &mut StepSeries, at: Nanos, v: u64, lead: u64) -> SeriesStep {
    let step = series.index(at, end_value);
    set_end_value(series, step, v, lead);
    SeriesStep {
        shift: series.shift,
        step,
    }
}

/// The step of a sample in a [`StepSeries`] at its shift: what the other series of
/// the same sample reuse ([`SeriesStep::of`]).
#[derive(Clone, Copy)]
struct SeriesStep {
    shift: u32,
    step: usize,
}

impl SeriesStep {
    /// The step of the same instant in `series` (merged as `merge` says).
    // perf: a TCP sample records into up to five series that step alike (sampled at
    // the same instants, they merge at the same shift); one division finds the step
    // of all.
    #[inline]
    fn of(self, series: &mut StepSeries, at: Nanos, merge: fn(u64, Option<u64>) -> u64) -> usize {
        if series.shift == self.shift {
            self.step
        } else {
            series.index(at, merge)
        }
    }
}

/// [`record_end_value`] at step `step` (of the series' shift).
#[inline]
fn set_end_value(series: &mut StepSeries, step: usize, v: u64, lead: u64) {
    if series.values.len() <= step {
        let last = series.values.last().copied().unwrap_or(lead);
        series.values.resize(step + 1, last);
    }
    series.values[step] = v;
}

/// Sets of BBR modes per step (bits of [`BbrMode::bit`]): a merged step was in the
/// modes of both.
fn union_bits(a: u64, b: Option<u64>) -> u64 {
    a | b.unwrap_or(0)
}

/// A TCP sender's state per step, sampled on every ACK as `cwnd_per_step` is (so its
/// series merge in step with it): srtt, pacing and delivery rate at the end of each
/// step ([`NO_SAMPLE`] before the first), and the set of BBR modes the sender was in
/// during each step, which a sample at the end of the step would not show (DRAIN
/// lasts at most about a round trip, sometimes not past the ACK that begins it).
#[derive(Default)]
struct TcpSeries {
    srtt_ns: StepSeries,
    pacing_rate_bps: StepSeries,
    delivery_rate_bps: StepSeries,
    bbr_modes: StepSeries,
    /// BBR's mode at the last sample: the one it was in until the next.
    bbr_mode: Option<BbrMode>,
}

impl TcpSeries {
    /// Record `sample`, taken at `at`, whose step in the flow's cwnd series is `cwnd`.
    fn record(&mut self, at: Nanos, cwnd: SeriesStep, sample: &TcpSample) {
        let value = |v: Option<u64>| v.unwrap_or(NO_SAMPLE);
        let srtt = value(sample.srtt.map(Nanos::as_ns));
        let step = cwnd.of(&mut self.srtt_ns, at, end_value);
        set_end_value(&mut self.srtt_ns, step, srtt, NO_SAMPLE);
        let pacing = value(sample.pacing_rate_bps);
        let step = cwnd.of(&mut self.pacing_rate_bps, at, end_value);
        set_end_value(&mut self.pacing_rate_bps, step, pacing, NO_SAMPLE);
        let delivery = value(sample.delivery_rate_bps);
        let step = cwnd.of(&mut self.delivery_rate_bps, at, end_value);
        set_end_value(&mut self.delivery_rate_bps, step, delivery, NO_SAMPLE);
        if let Some(bbr) = sample.bbr {
            let series = &mut self.bbr_modes;
            let step = cwnd.of(series, at, union_bits);
            // Steps since the last sample were in its mode all along, and so was this
            // one until now.
            let before = self.bbr_mode.map_or(0, |m| m.bit() as u64);
            if series.values.len() <= step {
                series.values.resize(step + 1, before);
            }
            series.values[step] |= (bbr.entered | bbr.mode.bit()) as u64;
            self.bbr_mode = Some(bbr.mode);
        }
    }

    fn retained_entries(&self) -> usize {
        self.srtt_ns.values.len()
            + self.pacing_rate_bps.values.len()
            + self.delivery_rate_bps.values.len()
            + self.bbr_modes.values.len()
    }
}

/// A series of end values at `shift`, cut to the run's `steps`, `None` where no
/// sample had come yet; empty when no step has a sample.
fn end_values(series: &StepSeries, shift: u32, steps: usize) -> Vec<Option<u64>> {
    let mut v = series.at_shift(shift, end_value);
    v.truncate(steps);
    if v.iter().all(|&x| x == NO_SAMPLE) {
        return Vec::new();
    }
    v.into_iter()
        .map(|x| (x != NO_SAMPLE).then_some(x))
        .collect()
}

impl FlowStats {
    /// The cell delivered one of this flow's packets (it may still cross the wire).
    // perf: once per packet, a few instructions past its call overhead.
    #[inline(always)]
    pub fn air_delivered(&mut self, at: Nanos, p: &Packet) {
        record(&mut self.driver, at.saturating_sub(p.queued_at));
    }

    /// A data packet reached its destination host.
    pub fn delivered(&mut self, at: Nanos, sent_at: Nanos, len_bytes: u32) {
        self.delivered += 1;
        self.delivered_bytes_at(at, sent_at, len_bytes as u64);
    }

    /// `bytes` of payload reached the application at `at` (for TCP: what became
    /// in-order with a segment sent at `sent_at`). Packets are counted apart: by
    /// [`FlowStats::delivered`], or for TCP, one per data segment that reaches the
    /// receiver.
    // Once per delivered packet or in-order TCP advance, and a few instructions past
    // its call overhead; the optimiser does not inline it on its own (a plain
    // `#[inline]` changes nothing).
    #[inline(always)]
    pub fn delivered_bytes_at(&mut self, at: Nanos, sent_at: Nanos, bytes: u64) {
        self.delivered_bytes += bytes;
        record(&mut self.latency, at.saturating_sub(sent_at));
        let series = &mut self.bytes_per_step;
        let step = series.index(at, sum_bytes);
        if series.values.len() <= step {
            series.values.resize(step + 1, 0);
        }
        series.values[step] += bytes;
    }

    /// One of the flow's packets, sent by its application at `sent_at`, reached the
    /// application at its destination at `at`, going `direction`; `stages` is its
    /// delay split by stage (`None`: it could not be split).
    // perf: out of line, so that the callers on the path of every packet (TCP's
    // arrival, with the receiver inlined) stay small enough to inline what they call.
    #[inline(never)]
    pub fn budget(&mut self, arrived: BudgetArrival<'_>) {
        let both = self.budget.get_or_insert_with(Default::default);
        let d = both[arrived.direction as usize].get_or_insert_with(Default::default);
        match arrived.stages {
            Some(stages) => {
                let delay = arrived.at.saturating_sub(arrived.sent_at);
                d.record(delay, stages, arrived.percentiles);
            }
            None => d.unsplit_packets += 1,
        }
    }

    /// A web page finished loading after `secs`.
    pub fn page_loaded(&mut self, secs: f64) {
        self.page_loads.push(secs);
    }

    /// A TCP or web flow's counters: its retransmissions count from 0 (not null: it is
    /// TCP even if it never opens).
    pub fn tcp() -> FlowStats {
        FlowStats {
            retransmits: Some(0),
            timeouts: Some(0),
            ..FlowStats::default()
        }
    }

    /// A TCP sender's state after an ACK: its cwnd, and the segments retransmitted and
    /// the timeouts since its last sample (a web flow's connections add up).
    pub fn tcp_sample(&mut self, at: Nanos, sample: TcpSample) {
        if let Some(rtt) = sample.rtt {
            record(&mut self.tcp_rtt, rtt);
        }
        let cwnd = sample.cwnd_bytes;
        let step = record_end_value(&mut self.cwnd_per_step, at, cwnd, cwnd);
        self.tcp_series
            .get_or_insert_with(Box::default)
            .record(at, step, &sample);
        self.retransmits = Some(self.retransmits.unwrap_or(0) + sample.new_retransmits);
        self.timeouts = Some(self.timeouts.unwrap_or(0) + sample.new_timeouts);
    }

    /// An echo reply came back: `forward` and `back` are the one-way delays of the
    /// request and of the reply.
    pub fn echo(&mut self, at: Nanos, seq: u64, forward: Nanos, back: Nanos) {
        let rtt = forward + back;
        self.delivered += 1;
        self.echo_replies += 1;
        self.echo_max_seq = Some(self.echo_max_seq.map_or(seq, |m| m.max(seq)));
        record(&mut self.rtt, rtt);
        let rtt_ms = rtt.as_ms_f64();
        if let Some(last) = self.last_rtt_ms {
            self.rtt_deltas_ms += (rtt_ms - last).abs();
        }
        self.last_rtt_ms = Some(rtt_ms);
        self.echoes.push(EchoSample {
            t_s: at.as_secs_f64(),
            rtt_ms,
            forward_ms: forward.as_ms_f64(),
            back_ms: back.as_ms_f64(),
        });
    }

    /// Mean absolute difference of consecutive RTTs (IPDV, as irtt and flent's voip
    /// jitter) over every reply, ms.
    fn ipdv_ms(&self) -> Option<f64> {
        if self.echo_replies < 2 {
            return None;
        }
        Some(self.rtt_deltas_ms / (self.echo_replies - 1) as f64)
    }

    /// Entries held in the flow's time series and sample lists: at most
    /// 6 × ([`SERIES_MAX_STEPS`] + 1) + 2 × [`SAMPLES_MAX`], however long the run.
    pub fn retained_entries(&self) -> usize {
        self.bytes_per_step.values.len()
            + self.cwnd_per_step.values.len()
            + self.tcp_series.as_ref().map_or(0, |t| t.retained_entries())
            + self.echoes.kept.len()
            + self.page_loads.kept.len()
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
        // The run's step; a flow never merges further unless it recorded past the end.
        // The TCP series record with `cwnd_per_step` and share its step.
        let shift = series_shift(secs)
            .max(self.bytes_per_step.shift)
            .max(self.cwnd_per_step.shift);
        let tcp = self.tcp_series.as_deref();
        let step_s = step_secs(shift);
        let steps = (secs / step_s).ceil() as usize;
        let bytes = self.bytes_per_step.at_shift(shift, sum_bytes);
        let echoes = &self.echoes.kept;
        let (src, dst) = (src.name(), dst.name());
        FlowResult {
            flow: id as u32,
            kind: kind.to_string(),
            label: label.to_string(),
            name: crate::results::flow_name(kind, label, &src, &dst),
            src,
            dst,
            offered_packets: self.offered,
            delivered_packets: self.delivered,
            dropped_packets: self.dropped,
            dropped_aqm: self.dropped_aqm,
            throughput_bps: crate::results::bits_per_s(self.delivered_bytes, secs),
            latency_ms: self.latency.as_ref().and_then(Latency::summary),
            driver_latency_ms: self.driver.as_ref().and_then(Latency::summary),
            rtt_ms: self.rtt.as_ref().and_then(Latency::summary),
            tcp_rtt_ms: self.tcp_rtt.as_ref().and_then(Latency::summary),
            throughput_series_bps: (0..steps)
                .map(|i| bytes.get(i).copied().unwrap_or(0) as f64 * 8.0 / step_s)
                .collect(),
            rtt_samples: echoes.iter().map(|e| (e.t_s, e.rtt_ms)).collect(),
            owd_samples: echoes
                .iter()
                .map(|e| (e.t_s, e.forward_ms, e.back_ms))
                .collect(),
            sample_stride: self.echoes.stride.max(self.page_loads.stride),
            retransmits: self.retransmits,
            timeouts: self.timeouts,
            cwnd_series_bytes: {
                // A sample at the very end belongs to a step past the run's.
                let mut cwnd = self.cwnd_per_step.at_shift(shift, end_value);
                cwnd.truncate(steps);
                cwnd
            },
            srtt_series_ms: tcp.map_or_else(Vec::new, |t| {
                end_values(&t.srtt_ns, shift, steps)
                    .into_iter()
                    .map(|v| v.map(|ns| Nanos(ns).as_ms_f64()))
                    .collect()
            }),
            pacing_rate_series_bps: tcp
                .map_or_else(Vec::new, |t| end_values(&t.pacing_rate_bps, shift, steps)),
            delivery_rate_series_bps: tcp
                .map_or_else(Vec::new, |t| end_values(&t.delivery_rate_bps, shift, steps)),
            bbr_mode_series: tcp.map_or_else(Vec::new, |t| {
                let mut steps_modes = t.bbr_modes.at_shift(shift, union_bits);
                steps_modes.truncate(steps);
                steps_modes
                    .iter()
                    .map(|&bits| {
                        BbrMode::ALL
                            .iter()
                            .filter(|m| bits & m.bit() as u64 != 0)
                            .map(|m| m.name())
                            .collect()
                    })
                    .collect()
            }),
            page_load_times_s: self.page_loads.kept.clone(),
            ipdv_ms: self.ipdv_ms(),
            // Requests sent whose reply never came (those still in flight at the end,
            // sent in the last second, are not counted as lost).
            echo_loss: self.echo_max_seq.map(|m| {
                let expected = m + 1;
                1.0 - self.echo_replies.min(expected) as f64 / expected as f64
            }),
            delay_budget: self.budget.as_deref().map_or_else(Default::default, |b| {
                DelayBudgetResult {
                    forward: b[0].as_ref().map(DirectionBudgetStats::result),
                    back: b[1].as_ref().map(DirectionBudgetStats::result),
                }
            }),
        }
    }
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
            min: ms(h.min()),
            mean: h.mean() / 1000.0,
            p50: ms(p50),
            p90: ms(p90),
            p99: ms(p99),
            max: ms(h.max()),
        })
    }

    /// One echo reply of 2998.516 ms (issue 18: the histogram said max 3014.655): its
    /// RTT is the summary's min, mean and max exactly, and no percentile lies outside.
    #[test]
    fn a_single_sample_is_its_own_min_mean_and_max() {
        let mut f = FlowStats::default();
        let (forward, back) = (Nanos(1_500_000_000), Nanos(1_498_516_000));
        f.echo(Nanos::from_secs(3), 0, forward, back);
        let r = f.result(0, ("ping", ""), Host::Station(1), Host::Server, 4.0);
        let rtt = r.rtt_ms.unwrap();
        assert_eq!(r.rtt_samples[0].1, 2998.516);
        for v in [rtt.min, rtt.mean, rtt.max, rtt.p50, rtt.p90, rtt.p99] {
            assert_eq!(v, r.rtt_samples[0].1);
        }
    }

    /// Over many values: min, mean and max are the exact ones (to the ns), the
    /// percentiles are hdrhistogram's within [min, max], and ordered.
    #[test]
    fn summaries_are_exact_at_the_extremes() {
        let mut x = 42u64;
        for n in [2usize, 10, 1000] {
            let mut l = Latency::new();
            let mut values = Vec::new();
            for _ in 0..n {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let ns = (x >> 33) % 5_000_000_000 + 1;
                values.push(ns);
                l.record(Nanos(ns));
            }
            let s = l.summary().unwrap();
            let min = *values.iter().min().unwrap();
            let max = *values.iter().max().unwrap();
            let sum: u128 = values.iter().map(|&v| v as u128).sum();
            assert_eq!(s.min, Nanos(min).as_ms_f64());
            assert_eq!(s.max, Nanos(max).as_ms_f64());
            assert_eq!(s.mean, sum as f64 / n as f64 / 1e6);
            assert!(s.min <= s.p50 && s.p50 <= s.p90 && s.p90 <= s.p99 && s.p99 <= s.max);
            let h = l.buckets.summary().unwrap();
            assert_eq!(s.p50, h.p50.clamp(s.min, s.max));
            assert!(h.max >= s.max && h.max <= s.max * 1.01 + 0.001, "{n}");
        }
    }

    /// A run of 1e6 s with something every second: every structure stays within its
    /// cap at every moment, and what the results report is exact: the series' bytes
    /// add up to the bytes delivered, each coarse step's cwnd is the last one of the
    /// step, the samples are replies 0, stride, 2 × stride … and the jitter counts
    /// every reply.
    #[test]
    fn long_runs_keep_bounded_exact_summaries() {
        let secs = 1_000_000u64;
        let bound = 6 * (SERIES_MAX_STEPS + 1) + 2 * SAMPLES_MAX;
        let mut f = FlowStats::default();
        let mut delivered = 0u64;
        for k in 0..secs {
            let at = Nanos::from_secs(k) + Nanos::from_ms(500);
            let bytes = 1000 + k % 7;
            delivered += bytes;
            f.delivered_bytes_at(at, at - Nanos::from_ms(3), bytes);
            f.tcp_sample(
                at,
                TcpSample {
                    cwnd_bytes: k,
                    new_retransmits: 0,
                    new_timeouts: 0,
                    rtt: Some(Nanos::from_ms(20 + k % 3)),
                    srtt: Some(Nanos::from_ms(20)),
                    pacing_rate_bps: Some(k),
                    delivery_rate_bps: None,
                    bbr: Some(BbrSample {
                        mode: BbrMode::ALL[(k % 4) as usize],
                        entered: 0,
                    }),
                },
            );
            // RTTs 10 ms and 11 ms alternately: every |ΔRTT| is 1 ms.
            let forward = Nanos::from_ms(5 + k % 2);
            f.echo(at, k, forward, Nanos::from_ms(5));
            f.page_loaded(k as f64);
            assert!(f.retained_entries() <= bound, "at {k} s");
        }
        let r = f.result(0, ("tcp", ""), Host::Server, Host::Station(1), secs as f64);
        let step_s = series_step(secs as f64).as_secs_f64();
        assert_eq!(step_s, 0.2 * 4096.0, "1e6 s in at most 2048 steps");
        assert_eq!(
            r.throughput_series_bps.len(),
            (secs as f64 / step_s).ceil() as usize
        );
        let bytes: f64 = r
            .throughput_series_bps
            .iter()
            .map(|b| b * step_s / 8.0)
            .sum();
        assert!((bytes - delivered as f64).abs() < 1e-6 * delivered as f64);
        // One cwnd sample per second, at k + 0.5 s: the last in step j is that of the
        // last whole second before its end.
        for (j, &cwnd) in r.cwnd_series_bytes.iter().enumerate() {
            let end_s = ((j + 1) as f64 * step_s).min(secs as f64);
            assert_eq!(cwnd as f64, (end_s - 0.5).floor(), "step {j}");
        }
        // The pacing rate (k at k + 0.5 s) is sampled as cwnd is, srtt was 20 ms all
        // along, the delivery rate was never sampled, and a mode a second puts all four
        // in every 819.2 s step.
        let pacing: Vec<u64> = r.cwnd_series_bytes.clone();
        assert_eq!(
            r.pacing_rate_series_bps,
            pacing.into_iter().map(Some).collect::<Vec<_>>()
        );
        assert_eq!(
            r.srtt_series_ms,
            vec![Some(20.0); r.cwnd_series_bytes.len()]
        );
        assert!(r.delivery_rate_series_bps.is_empty());
        assert_eq!(r.bbr_mode_series.len(), r.cwnd_series_bytes.len());
        assert!(r
            .bbr_mode_series
            .iter()
            .all(|m| *m == ["STARTUP", "DRAIN", "PROBE_BW", "PROBE_RTT"]));
        assert!(r.rtt_samples.len() <= SAMPLES_MAX && r.rtt_samples.len() > SAMPLES_MAX / 2);
        assert_eq!(r.sample_stride, 512, "1e6 replies in at most 2048");
        for (i, (&(t, _), &(t2, _, _))) in r.rtt_samples.iter().zip(&r.owd_samples).enumerate() {
            assert_eq!(t, (i as u64 * r.sample_stride) as f64 + 0.5);
            assert_eq!(t2, t);
        }
        assert_eq!(r.page_load_times_s.len(), r.rtt_samples.len());
        assert_eq!(r.page_load_times_s[3], 3.0 * 512.0);
        assert_eq!(r.ipdv_ms, Some(1.0));
    }

    /// Up to 409.6 s every 0.2 s step is kept; beyond, steps merge.
    #[test]
    fn series_step_doubles_past_the_cap() {
        assert_eq!(series_step(0.0), STEP);
        assert_eq!(series_step(409.6), STEP);
        assert_eq!(series_step(409.7), STEP * 2);
        assert_eq!(series_step(819.2), STEP * 2);
        assert_eq!(series_step(1e6), STEP * 4096);
        // Delivered at the last instant of a 409.6 s run: still at 0.2 s.
        let mut f = FlowStats::default();
        f.delivered_bytes_at(Nanos::from_ms(409_600), Nanos::ZERO, 1);
        let r = f.result(0, ("cbr", ""), Host::Server, Host::Station(1), 409.6);
        assert_eq!(r.throughput_series_bps.len(), SERIES_MAX_STEPS);
        assert_eq!(f.bytes_per_step.shift, 0);
        // The first ~2048 samples are all kept.
        let mut t = Thinned::default();
        (0..SAMPLES_MAX).for_each(|i| t.push(i));
        assert_eq!((t.kept.len(), t.stride), (SAMPLES_MAX, 1));
        t.push(SAMPLES_MAX);
        assert_eq!((t.kept.len(), t.stride), (SAMPLES_MAX / 2 + 1, 2));
        assert!(t.kept.iter().enumerate().all(|(i, &v)| v == 2 * i));
    }

    /// The summary from the counts is bit for bit hdrhistogram's, for few and many
    /// values, narrow and wide spreads, ties at the quantiles and extreme values.
    #[test]
    fn summary_matches_hdrhistogram() {
        let bits = |s: Option<LatencySummary>| {
            s.map(|s| [s.min, s.mean, s.p50, s.p90, s.p99, s.max].map(f64::to_bits))
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

    /// A stage's percentiles bucket its time as a latency's do: under 1 µs in the
    /// first µs, past 1000 s at the top, between them to the µs; with a time past
    /// 2³⁹ ns in another stage of the packet too (the budget clamps from above only
    /// then).
    #[test]
    fn budget_stages_bucket_as_latencies_do() {
        let (sent, access) = (Nanos(0), Stage::Access as usize);
        for ns in [1, 999, 1_000, 1_234_567, 600_000_000_000, 2_000_000_000_000] {
            for other_ns in [0, 1u64 << 39] {
                let mut stages = Stages {
                    ns: [0; Stage::COUNT],
                };
                stages.ns[access] = ns;
                stages.ns[0] = other_ns;
                let mut f = FlowStats::default();
                f.budget(BudgetArrival {
                    direction: Direction::Forward,
                    sent_at: sent,
                    at: Nanos(ns + other_ns),
                    percentiles: true,
                    stages: Some(&stages),
                });
                let r = f.result(0, ("udp", ""), Host::Server, Host::Station(1), 1.0);
                let stage = &r.delay_budget.forward.unwrap().stages[access];
                let mut l = Latency::new();
                l.record(Nanos(ns));
                let h = l.buckets.summary().unwrap();
                assert_eq!(stage.p50_ms, Some(h.p50), "{ns} ns beside {other_ns}");
                assert_eq!(stage.p99_ms, Some(h.p99), "{ns} ns beside {other_ns}");
            }
        }
    }
}
