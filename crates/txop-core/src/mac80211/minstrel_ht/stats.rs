//! Per-rate statistics and the two averages minstrel_ht has used for the success
//! probability (`struct minstrel_rate_stats`, `minstrel_filter_avg_add`,
//! `minstrel_ewma`, `minstrel_ht_calc_rate_stats`; rate-control.md §3).
//!
//! Probabilities are fixed point with 12 fractional bits (`MINSTREL_SCALE`), so 4096
//! is 100 %.

/// Fractional bits of a probability (`MINSTREL_SCALE`).
pub(super) const SCALE: u32 = 12;

/// `val / div` in fixed point (`MINSTREL_FRAC`).
#[inline]
pub(super) const fn frac(val: u32, div: u32) -> u32 {
    (val << SCALE) / div
}

/// The integer part of a fixed-point value (`MINSTREL_TRUNC`).
#[inline]
pub(super) const fn trunc(val: u32) -> u32 {
    val >> SCALE
}

/// Weight of the old value in [`ewma`] (`EWMA_LEVEL`, over [`EWMA_DIV`]: 75 %).
pub(super) const EWMA_LEVEL: i32 = 96;
/// Denominator of [`EWMA_LEVEL`] (`EWMA_DIV`).
pub(super) const EWMA_DIV: i32 = 128;

/// `MINSTREL_AVG_COEFF2`: `2 · a1 · cos(√2 · 2π / 16)` with `a1 = exp(−π√2 / 16)`,
/// scaled by 4096 (the noise filter of period 16).
pub(super) const AVG_COEFF2: i32 = 0x1499;
/// `MINSTREL_AVG_COEFF3`: `−a1²`, scaled by 4096.
pub(super) const AVG_COEFF3: i32 = -0x92e;
/// `MINSTREL_AVG_COEFF1`: `1 − C2 − C3`, scaled by 4096.
pub(super) const AVG_COEFF1: i32 = (1 << SCALE) - AVG_COEFF2 - AVG_COEFF3;

/// `minstrel_ewma`: moves `old` a quarter of the way to `new`
/// (`old + (128 − 96) · (new − old) / 128`, the division truncating toward zero).
#[inline]
pub(super) fn ewma(old: i32, new: i32, weight: i32) -> i32 {
    old + (EWMA_DIV - weight) * (new - old) / EWMA_DIV
}

/// `minstrel_filter_avg_add`: one step of the 2nd-order noise filter
/// `out = C1 · in + C2 · out₋₁ + C3 · out₋₂` (≥ 5.11), clamped to [1, 4096]. An input
/// of 0 counts as 1; the first input (`prev_1 == 0`) starts the filter at that value.
/// Returns the new output and shifts it into `prev_1`/`prev_2`.
pub(super) fn filter_avg_add(prev_1: &mut u16, prev_2: &mut u16, input: u32) -> u16 {
    let input = (input as i32).max(1);
    let out_1 = i32::from(*prev_1);
    let out_2 = i32::from(*prev_2);
    let (val, shifted) = if out_1 == 0 {
        (input, input)
    } else {
        let v = (AVG_COEFF1 * input + AVG_COEFF2 * out_1 + AVG_COEFF3 * out_2) >> SCALE;
        let v = if v > 1 << SCALE {
            1 << SCALE
        } else if v < 0 {
            1
        } else {
            v
        };
        (v, out_1)
    };
    *prev_2 = shifted as u16;
    *prev_1 = val as u16;
    val as u16
}

/// One rate's counters and averages (`struct minstrel_rate_stats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct RateStats {
    /// MPDU attempts in the current statistics interval (the kernel's `u16`; `u32`
    /// here so a long interval cannot wrap).
    pub(super) attempts: u32,
    /// MPDUs acknowledged in the current interval.
    pub(super) success: u32,
    /// `attempts` of the previous interval.
    pub(super) last_attempts: u32,
    /// `success` of the previous interval.
    pub(super) last_success: u32,
    /// All attempts since the station was set up.
    pub(super) att_hist: u64,
    /// All successes since the station was set up.
    pub(super) succ_hist: u64,
    /// The averaged success probability (fixed point, 4096 = 100 %).
    pub(super) prob_avg: u16,
    /// The filter's previous output (6.x only).
    pub(super) prob_avg_1: u16,
    /// Tries of a chain stage at this rate without RTS/CTS.
    pub(super) retry_count: u8,
    /// Tries of a chain stage at this rate with RTS/CTS.
    pub(super) retry_count_rtscts: u8,
    /// `retry_count` is up to date for this interval.
    pub(super) retry_updated: bool,
    /// Intervals in a row without an attempt (≤ 5.10 look-around).
    pub(super) sample_skipped: u8,
}

impl RateStats {
    /// `minstrel_ht_calc_rate_stats` (6.x): the interval's success ratio into the noise
    /// filter, then the counters move to `last_*` and restart.
    pub(super) fn close_interval_filter(&mut self) {
        if self.attempts > 0 {
            let cur_prob = frac_ratio(self.success, self.attempts);
            filter_avg_add(&mut self.prob_avg, &mut self.prob_avg_1, cur_prob);
            self.att_hist += u64::from(self.attempts);
            self.succ_hist += u64::from(self.success);
        }
        self.roll_counters();
    }

    /// `minstrel_calc_rate_stats` (≤ 5.4, and 5.5–5.10 with `new_avg` off): the first
    /// ratio is taken as it is, later ones through the 75 % EWMA; counts intervals
    /// without attempts in `sample_skipped`.
    pub(super) fn close_interval_ewma(&mut self) {
        if self.attempts > 0 {
            self.sample_skipped = 0;
            let cur_prob = frac_ratio(self.success, self.attempts) as i32;
            self.prob_avg = if self.att_hist == 0 {
                cur_prob as u16
            } else {
                ewma(i32::from(self.prob_avg), cur_prob, EWMA_LEVEL) as u16
            };
            self.att_hist += u64::from(self.attempts);
            self.succ_hist += u64::from(self.success);
        } else {
            self.sample_skipped = self.sample_skipped.saturating_add(1);
        }
        self.roll_counters();
    }

    fn roll_counters(&mut self) {
        self.last_success = self.success;
        self.last_attempts = self.attempts;
        self.success = 0;
        self.attempts = 0;
    }
}

/// `MINSTREL_FRAC(success, attempts)` without overflow for large counts; successes
/// beyond the attempts count as 100 %.
fn frac_ratio(success: u32, attempts: u32) -> u32 {
    let s = u64::from(success.min(attempts));
    ((s << SCALE) / u64::from(attempts)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::PI;

    /// The coefficients as the kernel's comment defines them, in f64.
    fn coefficients_f64() -> (f64, f64, f64) {
        let a1 = (-PI * 2f64.sqrt() / 16.0).exp();
        let c2 = 2.0 * a1 * (2f64.sqrt() * 2.0 * PI / 16.0).cos();
        let c3 = -a1 * a1;
        (1.0 - c2 - c3, c2, c3)
    }

    #[test]
    fn filter_constants_follow_their_formula() {
        let (c1, c2, c3) = coefficients_f64();
        assert_eq!((c2 * 4096.0).round() as i32, AVG_COEFF2);
        assert_eq!((c3 * 4096.0).round() as i32 + 1, AVG_COEFF3); // the kernel truncates
        assert!((f64::from(AVG_COEFF1) / 4096.0 - c1).abs() < 2.0 / 4096.0);
    }

    /// A step from nothing to a constant success ratio: the fixed-point filter follows
    /// the same filter evaluated in f64 step by step, and settles on the ratio.
    #[test]
    fn filter_step_response_matches_f64_and_converges() {
        let (c1, c2, c3) = coefficients_f64();
        for p in [0.25f64, 0.6, 0.9, 1.0] {
            let input = (p * 4096.0) as u32;
            let x = f64::from(input);
            let (mut p1, mut p2) = (0u16, 0u16);
            // Start from an old value of 10 % so the step is visible; the first input
            // fills both of the filter's memories.
            filter_avg_add(&mut p1, &mut p2, 410);
            assert_eq!((p1, p2), (410, 410));
            let (mut y1, mut y2) = (410.0f64, 410.0f64);
            let mut worst = 0.0f64;
            for step in 0..40 {
                let got = filter_avg_add(&mut p1, &mut p2, input);
                let want = (c1 * x + c2 * y1 + c3 * y2).clamp(1.0, 4096.0);
                (y2, y1) = (y1, want);
                worst = worst.max((f64::from(got) - want).abs());
                if step >= 30 {
                    assert!(
                        (f64::from(got) - x).abs() <= 4.0,
                        "p={p} step {step}: {got} vs {x}"
                    );
                }
            }
            // Each step truncates at most 1/4096; through the filter's gain the error
            // stays within a few units of the last place.
            assert!(worst <= 8.0, "p={p}: worst deviation {worst}/4096");
        }
    }

    #[test]
    fn filter_overshoots_like_the_f64_filter_and_stays_clamped() {
        // From 10 % to 100 % the 2nd-order filter overshoots; the clamp keeps 4096.
        let (mut p1, mut p2) = (0u16, 0u16);
        filter_avg_add(&mut p1, &mut p2, 410);
        let outs: Vec<u16> = (0..10)
            .map(|_| filter_avg_add(&mut p1, &mut p2, 4096))
            .collect();
        assert!(outs.iter().all(|&o| (1..=4096).contains(&o)));
        assert!(outs.contains(&4096), "{outs:?}");
        // An input of 0 counts as 1 and the output never drops below 1.
        for _ in 0..20 {
            assert!(filter_avg_add(&mut p1, &mut p2, 0) >= 1);
        }
    }

    #[test]
    fn ewma_step_response_matches_f64() {
        // First interval: 50 %, taken as it is.
        let mut stats = RateStats {
            attempts: 100,
            success: 50,
            ..RateStats::default()
        };
        stats.close_interval_ewma();
        assert_eq!(stats.prob_avg, 2048);
        let mut y = 2048.0f64;
        for k in 0..30 {
            stats.attempts = 160;
            stats.success = 144; // 90 %
            stats.close_interval_ewma();
            let x = f64::from(frac(144, 160));
            y = 0.75 * y + 0.25 * x;
            let got = f64::from(stats.prob_avg);
            assert!((got - y).abs() <= 4.0, "step {k}: {got} vs {y}");
        }
        assert!((f64::from(stats.prob_avg) - 0.9 * 4096.0).abs() <= 4.0);
        assert_eq!(stats.attempts, 0);
        assert_eq!(stats.last_attempts, 160);
        assert_eq!(stats.att_hist, 100 + 30 * 160);
    }

    #[test]
    fn intervals_without_attempts_keep_the_average() {
        let mut stats = RateStats {
            prob_avg: 3000,
            prob_avg_1: 2900,
            att_hist: 5,
            ..RateStats::default()
        };
        stats.close_interval_filter();
        assert_eq!((stats.prob_avg, stats.prob_avg_1), (3000, 2900));
        stats.close_interval_ewma();
        assert_eq!(stats.prob_avg, 3000);
        assert_eq!(stats.sample_skipped, 1);
    }
}
