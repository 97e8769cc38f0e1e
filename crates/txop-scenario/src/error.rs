//! Errors: what is wrong with a scenario, and the key it concerns.

/// A problem with a scenario: the key it concerns and what is wrong, and where the
/// key was written when that is not the key alone: the scenario file (or built-in) it
/// is in, and with `[[bss]]` the entry that inherited it from the top level.
///
/// Shown as one line, `FILE: KEY: MESSAGE (in bss[K], `NAME`)`, each part when known:
/// the parts are fields rather than text prefixed at each layer, so a caller reads the
/// key and the message as they were written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// The scenario file or built-in scenario, once the caller says it
    /// ([`ScenarioError::in_source`]); `None` inside this crate.
    pub source: Option<String>,
    /// The dotted key (`stations.list[1].mcs`); empty for the file as a whole.
    pub key: String,
    /// What is wrong with it.
    pub message: String,
    /// A top-level key's error met while resolving a `[[bss]]` entry that inherits it.
    pub inherited_by: Option<BssEntry>,
}

/// A `[[bss]]` entry, as an error names it: `bss[K]`, `` `NAME` ``.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BssEntry {
    /// Its index in `[[bss]]`.
    pub index: usize,
    /// Its `name`.
    pub name: String,
}

impl ScenarioError {
    pub(crate) fn new(key: impl Into<String>, message: impl Into<String>) -> ScenarioError {
        ScenarioError {
            source: None,
            key: key.into(),
            message: message.into(),
            inherited_by: None,
        }
    }

    /// The error as met in the scenario `source` (a file path or a built-in name).
    pub fn in_source(self, source: impl Into<String>) -> ScenarioError {
        ScenarioError {
            source: Some(source.into()),
            ..self
        }
    }
}

impl std::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(source) = &self.source {
            write!(f, "{source}: ")?;
        }
        if !self.key.is_empty() {
            write!(f, "{}: ", self.key)?;
        }
        write!(f, "{}", self.message)?;
        if let Some(entry) = &self.inherited_by {
            write!(f, " (in bss[{}], `{}`)", entry.index, entry.name)?;
        }
        Ok(())
    }
}

impl std::error::Error for ScenarioError {}

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
    // The nearest name; between names as near, one the typed key begins (`snr` is
    // `snr_db` rather than `mcs`).
    let best = names
        .iter()
        .map(|n| {
            (
                strsim::damerau_levenshtein(field, n),
                !n.starts_with(field),
                *n,
            )
        })
        .min();
    match best {
        Some((d, _, name)) if d <= 3 => format!("unknown key (did you mean `{name}`?)"),
        _ => format!("unknown key; expected one of {}", names.join(", ")),
    }
}
