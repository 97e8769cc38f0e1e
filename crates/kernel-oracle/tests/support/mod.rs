//! What the differential tests share: the campaign's size and seed from the
//! environment, and the check that a campaign reached every path it is there to compare.

use proptest::test_runner::{Config as ProptestConfig, RngSeed};

/// `name` from the environment as a whole number, or `default`.
pub fn env_u64(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v}: not a whole number")),
        Err(_) => default,
    }
}

/// `TXOP_ORACLE_CASES` sequences (10 000) from `TXOP_ORACLE_SEED` (28).
pub fn config() -> ProptestConfig {
    ProptestConfig {
        cases: env_u64("TXOP_ORACLE_CASES", 10_000) as u32,
        rng_seed: RngSeed::Fixed(env_u64("TXOP_ORACLE_SEED", 28)),
        // The seed is fixed: a failure is replayed by running the test again.
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Fails unless every path was reached at least once.
pub fn assert_reached(paths: &[(&str, u64)]) {
    for (path, n) in paths {
        assert!(
            *n > 0,
            "the sequences never reached {path}: nothing was compared there"
        );
    }
}
