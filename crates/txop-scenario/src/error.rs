//! Errors: what is wrong with a scenario, and the key it concerns.

/// A problem with a scenario: the key it concerns and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    pub key: String,
    pub message: String,
}

impl ScenarioError {
    pub(crate) fn new(key: impl Into<String>, message: impl Into<String>) -> ScenarioError {
        ScenarioError {
            key: key.into(),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.key.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.key, self.message)
        }
    }
}

/// What an integer TOML cannot hold is told (TOML's integers are 64-bit signed).
pub(crate) const INTEGER_RANGE: &str =
    "integer out of range; TOML integers are -9223372036854775808 to 9223372036854775807";

/// serde reports unknown fields as "unknown field `x`, expected one of `a`, `b`": add
/// the nearest expected name. An enum's "unknown variant `x`, expected `a` or `b`" /
/// "expected one of `a`, `b`" reads as the resolver's lookups do ([`choose_in`]).
pub(crate) fn suggest(message: &str) -> String {
    if let Some(rest) = message.strip_prefix("unknown variant `") {
        if let Some((value, expected)) = rest.split_once("`, expected ") {
            let names: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
            return format!(
                "unknown value `{value}`; expected one of {}",
                names.join(", ")
            );
        }
    }
    let Some(rest) = message.strip_prefix("unknown field `") else {
        return message.to_string();
    };
    let Some((field, expected)) = rest.split_once('`') else {
        return message.to_string();
    };
    let names: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    let best = names
        .iter()
        .map(|n| (strsim::damerau_levenshtein(field, n), *n))
        .min();
    match best {
        Some((d, name)) if d <= 3 => format!("unknown key (did you mean `{name}`?)"),
        _ => format!("unknown key; expected one of {}", names.join(", ")),
    }
}
