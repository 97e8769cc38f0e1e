//! Seeded random-number streams.
//!
//! Every component that draws random numbers (a station's backoff, a link's error draws,
//! a traffic source) owns its own stream, derived from the run's seed and a stable key
//! that names the component. Adding a station therefore adds streams without reshuffling
//! the numbers any other component sees.

use rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// SplitMix64 finaliser: a bijective mixer used to derive independent stream seeds.
pub fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Stable keys for the kinds of component that own a stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u64)]
pub enum StreamKind {
    /// A node's backoff draws (one stream per node).
    Backoff = 1,
    /// A link's channel-error draws (one stream per direction of a link).
    Channel = 2,
    /// Kept for traffic sources' draws; today's traffic models draw nothing.
    Traffic = 3,
    /// Anything else: tests, fuzz cases, the TCP test harness.
    Misc = 4,
    /// A link's fading: one fresh stream per coherence block, so that the gain is a
    /// function of (seed, link, block) that anyone can evaluate
    /// ([`crate::phy::fading`]).
    Fading = 5,
    /// A node's draws for control frames it receives under interference (cells with
    /// space only).
    Reception = 6,
}

/// One independent random stream.
#[derive(Clone, Debug)]
pub struct RngStream {
    rng: Pcg64Mcg,
}

impl RngStream {
    /// The stream for component `index` of kind `kind` in a run seeded with `seed`.
    pub fn new(seed: u64, kind: StreamKind, index: u64) -> RngStream {
        let s = mix64(mix64(mix64(seed) ^ (kind as u64)) ^ index);
        RngStream {
            rng: Pcg64Mcg::seed_from_u64(s),
        }
    }

    /// The next 64 uniformly random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.rng.next_u64()
    }

    /// Uniform integer in `0..=max` (Lemire's multiply-and-reject method, unbiased).
    pub fn uniform_inclusive(&mut self, max: u32) -> u32 {
        let range = max as u64 + 1;
        let mut m = (self.next_u64() >> 32) * range;
        if (m & 0xFFFF_FFFF) < range {
            let threshold = (1u64 << 32) % range;
            while (m & 0xFFFF_FFFF) < threshold {
                m = (self.next_u64() >> 32) * range;
            }
        }
        (m >> 32) as u32
    }

    /// Uniform float in `[0, 1)` with 53 bits of precision.
    pub fn unit_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `p` (p ≤ 0 never, p ≥ 1 always).
    pub fn bernoulli(&mut self, p: f64) -> bool {
        if p <= 0.0 {
            false
        } else if p >= 1.0 {
            true
        } else {
            self.unit_f64() < p
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_independent() {
        let mut a = RngStream::new(7, StreamKind::Backoff, 3);
        let mut b = RngStream::new(7, StreamKind::Backoff, 3);
        let mut c = RngStream::new(7, StreamKind::Backoff, 4);
        let xa: Vec<u64> = (0..8).map(|_| a.next_u64()).collect();
        let xb: Vec<u64> = (0..8).map(|_| b.next_u64()).collect();
        let xc: Vec<u64> = (0..8).map(|_| c.next_u64()).collect();
        assert_eq!(xa, xb);
        assert_ne!(xa, xc);
    }

    #[test]
    fn uniform_inclusive_covers_range_evenly() {
        let mut r = RngStream::new(1, StreamKind::Misc, 0);
        let mut counts = [0u32; 16];
        let n = 160_000;
        for _ in 0..n {
            let v = r.uniform_inclusive(15);
            counts[v as usize] += 1;
        }
        for &c in &counts {
            // Expected 10000 each; 5 sigma is ~500.
            assert!((9_500..10_500).contains(&c), "{counts:?}");
        }
        assert_eq!(r.uniform_inclusive(0), 0);
    }
}
