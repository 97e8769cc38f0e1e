//! Integer nanosecond time.
//!
//! All model time is a [`Nanos`]: nanoseconds since the start of the run, as a `u64`
//! (enough for 584 years). Integer time keeps the simulation exact and deterministic:
//! 802.11 durations are whole microseconds (or 100 ns multiples), so no rounding
//! ever accumulates.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Add, AddAssign, Mul, Sub, SubAssign};

/// A point in time or a duration, in nanoseconds.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Nanos(pub u64);

impl Nanos {
    /// The start of the run; the empty duration.
    pub const ZERO: Nanos = Nanos(0);
    /// The largest time: "never" where a deadline is required.
    pub const MAX: Nanos = Nanos(u64::MAX);

    /// `ns` nanoseconds.
    pub const fn from_ns(ns: u64) -> Nanos {
        Nanos(ns)
    }
    /// `us` microseconds.
    pub const fn from_us(us: u64) -> Nanos {
        Nanos(us * 1_000)
    }
    /// `ms` milliseconds.
    pub const fn from_ms(ms: u64) -> Nanos {
        Nanos(ms * 1_000_000)
    }
    /// `s` seconds.
    pub const fn from_secs(s: u64) -> Nanos {
        Nanos(s * 1_000_000_000)
    }
    /// From (possibly fractional) seconds, rounded to the nearest nanosecond.
    pub fn from_secs_f64(s: f64) -> Nanos {
        Nanos((s * 1e9).round().max(0.0) as u64)
    }
    /// In nanoseconds.
    pub const fn as_ns(self) -> u64 {
        self.0
    }
    /// Whole microseconds (truncated).
    pub const fn as_us(self) -> u64 {
        self.0 / 1_000
    }
    /// In microseconds, with the fraction (for results).
    pub fn as_us_f64(self) -> f64 {
        self.0 as f64 / 1e3
    }
    /// In milliseconds, with the fraction (for results).
    pub fn as_ms_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
    /// In seconds, with the fraction (for results).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    /// `self − other`, or zero if `other` is later: the time left until a deadline.
    pub const fn saturating_sub(self, other: Nanos) -> Nanos {
        Nanos(self.0.saturating_sub(other.0))
    }
    /// The later of the two.
    pub fn max(self, other: Nanos) -> Nanos {
        if self >= other {
            self
        } else {
            other
        }
    }
    /// The earlier of the two.
    pub fn min(self, other: Nanos) -> Nanos {
        if self <= other {
            self
        } else {
            other
        }
    }
}

impl Add for Nanos {
    type Output = Nanos;
    fn add(self, rhs: Nanos) -> Nanos {
        Nanos(self.0 + rhs.0)
    }
}
impl AddAssign for Nanos {
    fn add_assign(&mut self, rhs: Nanos) {
        self.0 += rhs.0;
    }
}
impl Sub for Nanos {
    type Output = Nanos;
    fn sub(self, rhs: Nanos) -> Nanos {
        Nanos(self.0 - rhs.0)
    }
}
impl SubAssign for Nanos {
    fn sub_assign(&mut self, rhs: Nanos) {
        self.0 -= rhs.0;
    }
}
impl Mul<u64> for Nanos {
    type Output = Nanos;
    fn mul(self, rhs: u64) -> Nanos {
        Nanos(self.0 * rhs)
    }
}

impl fmt::Display for Nanos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 >= 1_000_000_000 {
            write!(f, "{:.6} s", self.as_secs_f64())
        } else if self.0 >= 1_000_000 {
            write!(f, "{:.3} ms", self.as_ms_f64())
        } else {
            write!(f, "{:.3} µs", self.as_us_f64())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_conversions_are_exact() {
        assert_eq!(Nanos::from_us(9), Nanos(9_000));
        assert_eq!(Nanos::from_ms(20).as_us(), 20_000);
        assert_eq!(Nanos::from_secs_f64(0.0000036), Nanos(3_600));
        assert_eq!(Nanos::from_us(5) - Nanos::from_us(2), Nanos::from_us(3));
        assert_eq!(Nanos::from_us(4) * 3, Nanos::from_us(12));
    }
}
