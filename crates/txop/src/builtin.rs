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
