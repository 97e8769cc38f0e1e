//! Time series in steps of 0.2 s, bounded over simulated time: a series holds at most
//! [`SERIES_MAX_STEPS`] + 1 steps; when a run outgrows them adjacent steps merge and
//! the step doubles. flent reports per 0.2 s; txop's per-flow and per-station series
//! share this step.

use crate::Nanos;

/// flent's sampling step: throughput is reported per 0.2 s (the finest step; a run
/// longer than [`SERIES_MAX_STEPS`] × 0.2 s reports per 0.4 s, 0.8 s, …).
pub const STEP: Nanos = Nanos::from_ms(200);

/// The most steps a run's time series report. A run of `secs` seconds reports them per
/// [`series_step`]`(secs)`: 0.2 s doubled until `ceil(secs / step)` steps fit (0.2 s up
/// to 409.6 s, 0.4 s up to 819.2 s, …; 819.2 s at the 1e6 s maximum).
pub const SERIES_MAX_STEPS: usize = 2048;

/// How many times a run of `secs` seconds doubles [`STEP`] for its series.
pub fn series_shift(secs: f64) -> u32 {
    let mut shift = 0;
    while (secs / step_secs(shift)).ceil() > SERIES_MAX_STEPS as f64 {
        shift += 1;
    }
    shift
}

/// [`STEP`] doubled `shift` times, in seconds (exact: a power-of-two multiple).
pub fn step_secs(shift: u32) -> f64 {
    STEP.as_secs_f64() * (1u64 << shift) as f64
}

/// The step of the time series of a run of `secs` seconds (see [`SERIES_MAX_STEPS`]).
pub fn series_step(secs: f64) -> Nanos {
    Nanos(STEP.as_ns() << series_shift(secs))
}

/// One value per step of a time series, from time 0: [`STEP`] doubled `shift` times.
/// A value recorded more than [`SERIES_MAX_STEPS`] steps from the start merges the
/// steps pairwise first (`merge` combines a step with the next), so at most
/// `SERIES_MAX_STEPS + 1` values are held, however long the run.
#[derive(Clone, Debug, Default)]
pub struct StepSeries {
    /// How many times [`STEP`] has doubled.
    pub shift: u32,
    /// One value per step from time 0 (steps not reached yet are absent).
    pub values: Vec<u64>,
    /// The step [`StepSeries::index`] found last, and the times it holds (none before
    /// the first).
    last: LastStep,
}

/// A step of a [`StepSeries`] at its shift: index `index` holds `from_ns..to_ns`.
#[derive(Clone, Copy, Debug, Default)]
struct LastStep {
    from_ns: u64,
    to_ns: u64,
    index: usize,
}

impl StepSeries {
    /// The index of the step holding time `at`, after merging steps until it is at
    /// most [`SERIES_MAX_STEPS`].
    #[inline]
    pub fn index(&mut self, at: Nanos, merge: fn(u64, Option<u64>) -> u64) -> usize {
        // perf: once per packet delivered and per ACK; most fall in the step before.
        let last = self.last;
        if last.from_ns <= at.as_ns() && at.as_ns() < last.to_ns {
            return last.index;
        }
        self.find(at, merge)
    }

    /// [`StepSeries::index`] of a step other than the last one found.
    fn find(&mut self, at: Nanos, merge: fn(u64, Option<u64>) -> u64) -> usize {
        loop {
            let step_ns = STEP.as_ns() << self.shift;
            let i = (at.as_ns() / step_ns) as usize;
            if i <= SERIES_MAX_STEPS {
                let from_ns = i as u64 * step_ns;
                self.last = LastStep {
                    from_ns,
                    to_ns: from_ns.saturating_add(step_ns),
                    index: i,
                };
                return i;
            }
            self.merge_pairs(merge);
        }
    }

    /// Merge steps 2k and 2k + 1 into step k, doubling the step.
    fn merge_pairs(&mut self, merge: fn(u64, Option<u64>) -> u64) {
        let n = self.values.len().div_ceil(2);
        for k in 0..n {
            self.values[k] = merge(self.values[2 * k], self.values.get(2 * k + 1).copied());
        }
        self.values.truncate(n);
        self.shift += 1;
        self.last = LastStep::default();
    }

    /// The values at `shift` (at least the series' own), merged as `merge` says.
    pub fn at_shift(&self, shift: u32, merge: fn(u64, Option<u64>) -> u64) -> Vec<u64> {
        let mut s = self.clone();
        while s.shift < shift {
            s.merge_pairs(merge);
        }
        s.values
    }
}

/// Sums per step (bytes, airtime): a merged step carries both steps' sums.
pub fn sum_bytes(a: u64, b: Option<u64>) -> u64 {
    a + b.unwrap_or(0)
}

/// A value at the end of each step: a merged step ends where its second step ends (or
/// where its first does, when the series stops there).
pub fn end_value(a: u64, b: Option<u64>) -> u64 {
    b.unwrap_or(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The step found is the one holding the time at the series' shift, whatever
    /// the step found before (the same, an earlier or a later one, before or after
    /// steps merged).
    #[test]
    fn index_is_the_step_holding_the_time() {
        let mut s = StepSeries::default();
        let mut x = 7u64;
        let mut at_ns = 0u64;
        for k in 0..20_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Mostly forward by up to 0.3 s, sometimes back, sometimes a big leap.
            at_ns = match (x >> 60) % 8 {
                0 => at_ns.saturating_sub((x >> 20) % 1_000_000_000),
                1 if k % 100 == 0 => at_ns + 300_000_000_000,
                _ => at_ns + (x >> 33) % 300_000_000,
            };
            let i = s.index(Nanos(at_ns), sum_bytes);
            assert_eq!(i as u64, at_ns / (STEP.as_ns() << s.shift), "{at_ns} ns");
            assert!(i <= SERIES_MAX_STEPS);
            if s.values.len() <= i {
                s.values.resize(i + 1, 0);
            }
            s.values[i] += 1;
        }
        assert!(s.shift > 0, "the steps merged");
        assert_eq!(s.values.iter().sum::<u64>(), 20_000);
    }
}
