//! Seeded block fading: a link's power gain around its mean SNR.
//!
//! The gain is constant for a coherence time and drawn afresh, independently, for the
//! next block ("block fading", the usual abstraction of a channel whose coherence time
//! is long against a PPDU: Tse & Viswanath, *Fundamentals of Wireless Communication*,
//! section 5.4.5). Its complex amplitude is
//!
//! ```text
//! h = sqrt(K/(K+1)) + sqrt(1/(K+1)) · CN(0, 1)
//! ```
//!
//! a fixed line-of-sight component plus a circularly symmetric Gaussian scattered one:
//! Rician with factor `K` (the LOS power over the scattered power; Rappaport, *Wireless
//! Communications*, 2nd ed., section 5.6.2), and Rayleigh when `K = 0` (no LOS, section
//! 5.6.1), whose power `|h|²` is exponential with mean 1. The power gain has mean 1 for every `K`, so fading
//! varies the SNR around the mean the path loss or the scenario sets without moving it.
//!
//! The gain is a pure function of (run seed, link key, block index): each block's draws
//! come from a fresh [`RngStream`] of [`StreamKind::Fading`] seeded from the three.
//! Whoever needs the link's SNR at some time (the MAC for each PPDU, an `ideal` rate
//! control when it builds one) computes the same value without sharing any state, in
//! any order, and a run is reproducible whatever evaluates the channel when. Each link's
//! block boundaries are shifted by an offset drawn from (seed, link), so that the links
//! of a cell do not all change at the same instants.
//!
//! ns-3 draws its `NakagamiPropagationLossModel` (m = 1: Rayleigh) afresh for every
//! packet, which makes consecutive PPDUs independent; a coherence time is what makes
//! a rate control's statistics over tens of milliseconds meaningful.

use crate::rng::{mix64, RngStream, StreamKind};
use crate::Nanos;

/// The smallest power gain returned, 10⁻¹² (−120 dB): a fade so deep no frame
/// survives it, kept finite for the dB arithmetic. A Rayleigh draw is below it with
/// probability 10⁻¹².
pub const MIN_POWER_GAIN: f64 = 1e-12;

/// Bounds of a Rician K factor, dB: −50 is Rayleigh to 10⁻⁵, 50 no fading to 10⁻⁵.
pub const K_DB_RANGE: (f64, f64) = (-50.0, 50.0);

/// A link's fading.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Fading {
    /// No fading: the power gain is 1 (0 dB).
    None,
    /// Block Rayleigh fading: an exponential power gain of mean 1, independent from one
    /// block of `coherence` to the next.
    Rayleigh {
        /// How long the gain holds (the channel's coherence time).
        coherence: Nanos,
    },
    /// Block Rician fading with factor `k_db` (the line-of-sight power over the
    /// scattered power, in dB), independent from one block of `coherence` to the next.
    Rician {
        /// The K factor in dB (0 dB: as much LOS as scattered power).
        k_db: f64,
        /// How long the gain holds (the channel's coherence time).
        coherence: Nanos,
    },
}

impl Fading {
    /// "none", "rayleigh" or "rician".
    pub fn name(&self) -> &'static str {
        match self {
            Fading::None => "none",
            Fading::Rayleigh { .. } => "rayleigh",
            Fading::Rician { .. } => "rician",
        }
    }

    /// The coherence time, `None` without fading.
    pub fn coherence(&self) -> Option<Nanos> {
        match *self {
            Fading::None => None,
            Fading::Rayleigh { coherence } | Fading::Rician { coherence, .. } => Some(coherence),
        }
    }

    /// The linear K factor (0 for Rayleigh), `None` without fading.
    fn k_linear(&self) -> Option<f64> {
        match *self {
            Fading::None => None,
            Fading::Rayleigh { .. } => Some(0.0),
            Fading::Rician { k_db, .. } => Some(10f64.powf(k_db / 10.0)),
        }
    }

    /// Check the model: a coherence time above zero; a finite K within [`K_DB_RANGE`].
    /// The error says what is wrong (the caller names the key).
    pub fn validate(&self) -> Result<(), String> {
        if let Some(c) = self.coherence() {
            if c == Nanos::ZERO {
                return Err("the coherence time must be more than 0".into());
            }
        }
        if let Fading::Rician { k_db, .. } = *self {
            let (lo, hi) = K_DB_RANGE;
            if !(k_db.is_finite() && (lo..=hi).contains(&k_db)) {
                return Err(format!("the K factor must be {lo} to {hi} dB, got {k_db}"));
            }
        }
        Ok(())
    }

    /// The index of the block `t` falls in, on link `link_key` of a run seeded with
    /// `seed` (the link's blocks start at a per-link offset within one coherence time);
    /// 0 without fading.
    pub fn block_at(&self, seed: u64, link_key: u64, t: Nanos) -> u64 {
        let Some(c) = self.coherence() else {
            return 0;
        };
        let c = c.as_ns().max(1);
        let mut rng = RngStream::new(seed, StreamKind::Fading, link_base(link_key));
        // Lemire's multiply-shift: uniform in 0..c (bias below 2⁻³⁰, irrelevant here).
        let offset = ((rng.next_u64() as u128 * c as u128) >> 64) as u64;
        // Past u64::MAX − c ns (584 years) the last block lasts for ever.
        t.as_ns().saturating_add(offset) / c
    }

    /// The power gain (linear, mean 1) of block `block` of link `link_key` in a run
    /// seeded with `seed`; 1 without fading. At least [`MIN_POWER_GAIN`].
    pub fn block_power_gain(&self, seed: u64, link_key: u64, block: u64) -> f64 {
        let Some(k) = self.k_linear() else {
            return 1.0;
        };
        let index = link_base(link_key) ^ mix64(block.wrapping_add(1));
        let mut rng = RngStream::new(seed, StreamKind::Fading, index);
        // Box–Muller: two independent N(0, 1) from two uniforms (u1 in (0, 1]).
        let u1 = 1.0 - rng.unit_f64();
        let u2 = rng.unit_f64();
        let r = (-2.0 * u1.ln()).sqrt();
        let (sin, cos) = (std::f64::consts::TAU * u2).sin_cos();
        let los = (k / (k + 1.0)).sqrt();
        let scattered = (0.5 / (k + 1.0)).sqrt();
        let (re, im) = (los + scattered * r * cos, scattered * r * sin);
        (re * re + im * im).max(MIN_POWER_GAIN)
    }

    /// The power gain (linear, mean 1) at time `t` on link `link_key` of a run seeded
    /// with `seed`.
    pub fn power_gain(&self, seed: u64, link_key: u64, t: Nanos) -> f64 {
        if *self == Fading::None {
            return 1.0;
        }
        self.block_power_gain(seed, link_key, self.block_at(seed, link_key, t))
    }

    /// The gain in dB at time `t` (0 without fading): what fading adds to the mean SNR.
    pub fn gain_db(&self, seed: u64, link_key: u64, t: Nanos) -> f64 {
        if *self == Fading::None {
            return 0.0;
        }
        10.0 * self.power_gain(seed, link_key, t).log10()
    }
}

/// The stream index a link's fading streams derive from.
fn link_base(link_key: u64) -> u64 {
    mix64(link_key ^ 0x6661_6469_6e67_0000)
}

#[cfg(test)]
mod tests {
    use super::*;

    const N: u64 = 200_000;

    fn gains(f: &Fading, seed: u64, link: u64) -> Vec<f64> {
        (0..N).map(|b| f.block_power_gain(seed, link, b)).collect()
    }

    fn mean(x: &[f64]) -> f64 {
        x.iter().sum::<f64>() / x.len() as f64
    }

    fn variance(x: &[f64]) -> f64 {
        let m = mean(x);
        x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (x.len() - 1) as f64
    }

    /// Pearson correlation of two equally long samples.
    fn correlation(a: &[f64], b: &[f64]) -> f64 {
        let (ma, mb) = (mean(a), mean(b));
        let cov: f64 = a.iter().zip(b).map(|(x, y)| (x - ma) * (y - mb)).sum();
        let va: f64 = a.iter().map(|x| (x - ma) * (x - ma)).sum();
        let vb: f64 = b.iter().map(|y| (y - mb) * (y - mb)).sum();
        cov / (va * vb).sqrt()
    }

    /// The Kolmogorov–Smirnov distance between a sample and the CDF `cdf`.
    fn ks_distance(sample: &[f64], cdf: impl Fn(f64) -> f64) -> f64 {
        let mut s = sample.to_vec();
        s.sort_by(f64::total_cmp);
        let n = s.len() as f64;
        s.iter()
            .enumerate()
            .map(|(i, &x)| {
                let f = cdf(x);
                (f - i as f64 / n).abs().max((f - (i + 1) as f64 / n).abs())
            })
            .fold(0.0, f64::max)
    }

    /// The KS critical distance at significance 0.001 (`1.95/√n`).
    fn ks_critical(n: usize) -> f64 {
        1.95 / (n as f64).sqrt()
    }

    /// The CDF of the power gain of Rician fading with linear factor `k`, computed
    /// independently of the generator: `2(K+1)·|h|²` is non-central χ² with 2 degrees of
    /// freedom and non-centrality `2K`, i.e. a Poisson(K) mixture of central χ² with
    /// `2 + 2j` degrees of freedom, whose CDF is `1 − e^{−y/2}·Σ_{i≤j} (y/2)^i / i!`.
    fn rician_cdf(k: f64, x: f64) -> f64 {
        let half_y = (k + 1.0) * x; // y/2
        let mut total = 0.0;
        let mut poisson = (-k).exp(); // P(J = 0)
        let mut term = (-half_y).exp(); // e^{−y/2}·(y/2)^0/0!
        let mut tail = term; // e^{−y/2}·Σ_{i≤j} (y/2)^i/i!
        for j in 0..400 {
            total += poisson * (1.0 - tail);
            poisson *= k / (j + 1) as f64;
            term *= half_y / (j + 1) as f64;
            tail += term;
        }
        total
    }

    #[test]
    fn no_fading_is_unit_gain() {
        assert_eq!(Fading::None.power_gain(1, 2, Nanos::from_ms(5)), 1.0);
        assert_eq!(Fading::None.gain_db(1, 2, Nanos::from_ms(5)), 0.0);
        assert_eq!(Fading::None.block_at(1, 2, Nanos::from_secs(9)), 0);
    }

    /// Rayleigh power is exponential with mean 1: KS against `1 − e^{−x}` over 200 000
    /// blocks, the mean within 4σ, and the deep-fade probability P(gain < −10 dB) =
    /// 1 − e^{−0.1} = 9.52 %.
    #[test]
    fn rayleigh_power_is_exponential_with_mean_one() {
        let f = Fading::Rayleigh {
            coherence: Nanos::from_ms(10),
        };
        let g = gains(&f, 1, 7);
        let d = ks_distance(&g, |x| 1.0 - (-x).exp());
        assert!(d < ks_critical(g.len()), "KS distance {d}");
        let sigma = 1.0 / (N as f64).sqrt();
        assert!((mean(&g) - 1.0).abs() < 4.0 * sigma, "mean {}", mean(&g));
        // Exponential: variance 1.
        assert!(
            (variance(&g) - 1.0).abs() < 0.03,
            "variance {}",
            variance(&g)
        );
        let p = 1.0 - (-0.1f64).exp();
        let deep = g.iter().filter(|&&x| x < 0.1).count() as f64 / N as f64;
        let sd = (p * (1.0 - p) / N as f64).sqrt();
        assert!(
            (deep - p).abs() < 4.0 * sd,
            "P(< −10 dB) = {deep}, want {p}"
        );
        // The median of Exp(1) is ln 2.
        let mut s = g.clone();
        s.sort_by(f64::total_cmp);
        let median = s[s.len() / 2];
        assert!((median - 2f64.ln()).abs() < 0.01, "median {median}");
    }

    /// Rician power with K = 6 dB: KS against the non-central χ² CDF, mean 1, the
    /// variance `(1 + 2K)/(K + 1)²`, and K recovered from the moments
    /// (`K = √(1−γ)/(1−√(1−γ))`, γ the variance over the squared mean).
    #[test]
    fn rician_power_has_mean_one_and_the_right_k() {
        for k_db in [0.0, 6.0, 10.0] {
            let f = Fading::Rician {
                k_db,
                coherence: Nanos::from_ms(10),
            };
            let k = 10f64.powf(k_db / 10.0);
            let g = gains(&f, 3, 11);
            let d = ks_distance(&g, |x| rician_cdf(k, x));
            assert!(d < ks_critical(g.len()), "K {k_db} dB: KS distance {d}");
            let want_var = (1.0 + 2.0 * k) / ((k + 1.0) * (k + 1.0));
            let m = mean(&g);
            assert!(
                (m - 1.0).abs() < 4.0 * (want_var / N as f64).sqrt(),
                "K {k_db} dB: mean {m}"
            );
            let v = variance(&g);
            assert!((v / want_var - 1.0).abs() < 0.03, "K {k_db} dB: var {v}");
            let gamma = v / (m * m);
            let k_hat = (1.0 - gamma).sqrt() / (1.0 - (1.0 - gamma).sqrt());
            let k_hat_db = 10.0 * k_hat.log10();
            assert!(
                (k_hat_db - k_db).abs() < 0.3,
                "K {k_db} dB: estimated {k_hat_db}"
            );
        }
        // The CDF helper itself: at K = 0 it is the exponential's.
        for x in [0.05, 0.5, 1.0, 3.0] {
            assert!((rician_cdf(0.0, x) - (1.0 - (-x).exp())).abs() < 1e-12);
        }
    }

    /// Blocks of one link, the same block of two links (an uplink and a downlink key),
    /// and two seeds are uncorrelated (|r| < 4/√n); the same inputs give the same gain.
    #[test]
    fn blocks_links_and_seeds_are_independent() {
        let f = Fading::Rayleigh {
            coherence: Nanos::from_ms(10),
        };
        let bound = 4.0 / (N as f64 - 1.0).sqrt();
        let a = gains(&f, 1, 1);
        let r = correlation(&a[..N as usize - 1], &a[1..]);
        assert!(r.abs() < bound, "consecutive blocks r = {r}");
        let b = gains(&f, 1, 1 << 16);
        let r = correlation(&a, &b);
        assert!(r.abs() < bound, "two links r = {r}");
        let c = gains(&f, 2, 1);
        let r = correlation(&a, &c);
        assert!(r.abs() < bound, "two seeds r = {r}");
        assert_eq!(a, gains(&f, 1, 1));
    }

    /// The gain holds for a coherence time and changes at the block boundary; the
    /// links' boundaries are offset from one another.
    #[test]
    fn the_gain_holds_within_a_block() {
        let coherence = Nanos::from_ms(10);
        let f = Fading::Rician {
            k_db: 3.0,
            coherence,
        };
        let (seed, link) = (5, 3);
        let mut changes = Vec::new();
        let mut last = f.power_gain(seed, link, Nanos::ZERO);
        for us in (0..100_000).step_by(50) {
            let t = Nanos::from_us(us);
            let g = f.power_gain(seed, link, t);
            if g != last {
                changes.push(t);
                last = g;
            }
        }
        // 100 ms of 10 ms blocks: 10 boundaries, 10 ms apart.
        assert_eq!(changes.len(), 10, "{changes:?}");
        for w in changes.windows(2) {
            assert_eq!(w[1] - w[0], coherence);
        }
        // Another link's blocks start elsewhere.
        let first_change = |link| {
            let g0 = f.power_gain(seed, link, Nanos::ZERO);
            (1..=10_000u64)
                .map(Nanos::from_us)
                .find(|&t| f.power_gain(seed, link, t) != g0)
        };
        let starts: std::collections::BTreeSet<Option<Nanos>> = (1..6).map(first_change).collect();
        assert!(starts.len() > 1, "{starts:?}");
    }

    #[test]
    fn validation_names_the_problem() {
        assert!(Fading::Rayleigh {
            coherence: Nanos::ZERO
        }
        .validate()
        .unwrap_err()
        .contains("coherence"));
        assert!(Fading::Rician {
            k_db: f64::NAN,
            coherence: Nanos::from_ms(1)
        }
        .validate()
        .unwrap_err()
        .contains("K factor"));
        assert!(Fading::Rician {
            k_db: 6.0,
            coherence: Nanos::from_ms(1)
        }
        .validate()
        .is_ok());
    }
}
