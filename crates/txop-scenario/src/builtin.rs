//! Scenarios shipped with txop (the files in `scenarios/`), addressable by name.

/// (name, file contents), in the order `txop list` shows them.
pub const SCENARIOS: &[(&str, &str)] = &[
    ("default", include_str!("../../../scenarios/default.toml")),
    ("anomaly", include_str!("../../../scenarios/anomaly.toml")),
    (
        "bianchi-11a",
        include_str!("../../../scenarios/bianchi-11a.toml"),
    ),
    (
        "tcp-ndown-6mbit",
        include_str!("../../../scenarios/tcp-ndown-6mbit.toml"),
    ),
    (
        "e1-scan-ping",
        include_str!("../../../scenarios/e1-scan-ping.toml"),
    ),
    (
        "e1-scan-bulk",
        include_str!("../../../scenarios/e1-scan-bulk.toml"),
    ),
    (
        "e2-bufferbloat",
        include_str!("../../../scenarios/e2-bufferbloat.toml"),
    ),
    (
        "e2-100-stations",
        include_str!("../../../scenarios/e2-100-stations.toml"),
    ),
    (
        "e3-ath10k-6mbit",
        include_str!("../../../scenarios/e3-ath10k-6mbit.toml"),
    ),
    (
        "e3-rtt-fair-up",
        include_str!("../../../scenarios/e3-rtt-fair-up.toml"),
    ),
    (
        "e3-rtt-fair-up-n",
        include_str!("../../../scenarios/e3-rtt-fair-up-n.toml"),
    ),
    (
        "e3-power-save",
        include_str!("../../../scenarios/e3-power-save.toml"),
    ),
    (
        "e4-near-far",
        include_str!("../../../scenarios/e4-near-far.toml"),
    ),
    (
        "e4-two-downloads",
        include_str!("../../../scenarios/e4-two-downloads.toml"),
    ),
    (
        "e5-sdio-ttcp",
        include_str!("../../../scenarios/e5-sdio-ttcp.toml"),
    ),
    (
        "e5-sdio-ping",
        include_str!("../../../scenarios/e5-sdio-ping.toml"),
    ),
    (
        "atf-30-stations",
        include_str!("../../../scenarios/atf-30-stations.toml"),
    ),
    (
        "atf-30-stations-minstrel",
        include_str!("../../../scenarios/atf-30-stations-minstrel.toml"),
    ),
    (
        "rate-walk-away",
        include_str!("../../../scenarios/rate-walk-away.toml"),
    ),
    (
        "rate-step-fade",
        include_str!("../../../scenarios/rate-step-fade.toml"),
    ),
    (
        "hidden-stations",
        include_str!("../../../scenarios/hidden-stations.toml"),
    ),
    (
        "hidden-stations-rts",
        include_str!("../../../scenarios/hidden-stations-rts.toml"),
    ),
    (
        "walk-hidden",
        include_str!("../../../scenarios/walk-hidden.toml"),
    ),
    (
        "neighbours-in-range",
        include_str!("../../../scenarios/neighbours-in-range.toml"),
    ),
    (
        "neighbours-out-of-range",
        include_str!("../../../scenarios/neighbours-out-of-range.toml"),
    ),
    (
        "apartment-block",
        include_str!("../../../scenarios/apartment-block.toml"),
    ),
    (
        "neighbours-bss4",
        include_str!("../../../scenarios/neighbours-bss4.toml"),
    ),
    (
        "neighbours-call",
        include_str!("../../../scenarios/neighbours-call.toml"),
    ),
];

/// The built-in scenario called `name`.
pub fn get(name: &str) -> Option<&'static str> {
    SCENARIOS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// The built-in name closest to `name`, if any is close.
pub fn nearest(name: &str) -> Option<&'static str> {
    SCENARIOS
        .iter()
        .map(|(n, _)| (strsim::damerau_levenshtein(name, n), *n))
        .filter(|(d, _)| *d <= 3)
        .min()
        .map(|(_, n)| n)
}

/// The `description` line of a built-in scenario.
pub fn description(text: &str) -> String {
    toml::from_str::<toml::Table>(text)
        .ok()
        .and_then(|t| {
            t.get("description")
                .and_then(|d| d.as_str().map(String::from))
        })
        .unwrap_or_default()
}
