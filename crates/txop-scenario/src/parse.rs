//! Loading: TOML text to a table, `--set` overrides, then the schema's types.

use crate::error::{suggest, ScenarioError, INTEGER_RANGE};
use crate::overrides::{apply_override, choices_as_text, refuse_lists_as_tables};
use crate::schema::Scenario;
use serde::de::DeserializeOwned;
use std::collections::BTreeMap;

/// Parse a scenario from TOML text with overrides applied.
pub fn parse(text: &str, overrides: &[(String, String)]) -> Result<Scenario, ScenarioError> {
    let mut table: toml::Table = toml::from_str(text).map_err(|e| {
        let msg = match e.message() {
            // An integer past i64 (`seed = 18446744073709551615`, or past u64 "as
            // i128"): TOML's integers are 64-bit signed (toml.io, "Integer").
            m if m == "u64 value was too large" || m.contains("` as i128") => {
                INTEGER_RANGE.to_string()
            }
            m => m.to_string(),
        };
        let at = e.span().map(|s| s.start.min(text.len()));
        // The line, and the key whose value it is in, when the error is in a value.
        let line = at.map(|a| text[..a].matches('\n').count() + 1);
        let key = at.and_then(|a| key_at(text, a));
        let place = match (line, key) {
            (Some(l), Some(k)) => format!("line {l}: {k}"),
            (Some(l), None) => format!("line {l}"),
            (None, _) => String::new(),
        };
        ScenarioError::new(place, format!("invalid TOML: {msg}"))
    })?;
    for (k, v) in overrides {
        apply_override(&mut table, k, v)?;
    }
    refuse_lists_as_tables(&table, "", "")?;
    choices_as_text(&mut table, "");
    let de = toml::Value::Table(table);
    serde_path_to_error::deserialize::<_, Scenario>(de).map_err(|e| {
        let path = e.path().to_string();
        let key = if path == "." { String::new() } else { path };
        ScenarioError::new(key, suggest(e.inner().message()))
    })
}

/// The dotted key whose value holds byte `offset` of `text` (for a TOML error in a
/// value): the key before `=` on that line, under the last `[table]` or `[[list]]`
/// header above it (`stations.list[1].mcs`). `None` when the offset is not in a value
/// on its key's line (a header, the key itself, a list's later line).
pub(crate) fn key_at(text: &str, offset: usize) -> Option<String> {
    let offset = offset.min(text.len());
    let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let (key, _) = text[start..offset].split_once('=')?;
    let key = key.trim();
    if key.is_empty() || key.starts_with(['[', '#']) {
        return None;
    }
    let mut table = String::new();
    let mut entries: BTreeMap<String, usize> = BTreeMap::new();
    for line in text[..start].lines() {
        let line = line.trim();
        if let Some(h) = line.strip_prefix("[[") {
            let name = h.split("]]").next().unwrap_or_default().trim().to_string();
            let n = entries.entry(name.clone()).or_insert(0);
            table = format!("{name}[{n}]");
            *n += 1;
        } else if let Some(h) = line.strip_prefix('[') {
            table = h.split(']').next().unwrap_or_default().trim().to_string();
        }
    }
    Some(if table.is_empty() {
        key.to_string()
    } else {
        format!("{table}.{key}")
    })
}

/// `value` as a `T`; an error names its key under `key`.
pub(crate) fn deserialize<T: DeserializeOwned>(
    value: toml::Value,
    key: &str,
) -> Result<T, ScenarioError> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let key = if path == "." {
            key.to_string()
        } else {
            format!("{key}.{path}")
        };
        ScenarioError::new(key, suggest(e.inner().message()))
    })
}
