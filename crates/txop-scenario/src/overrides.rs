//! `--set key=value`: overrides applied to the scenario's TOML table before it is
//! deserialised, and the keys that take tables or names.

use crate::error::{ScenarioError, INTEGER_RANGE};

/// Set `path` (dotted) in `table` to `raw`, parsed as a TOML value, or as a string if it
/// does not parse (so `--set phy.standard=ac` needs no quotes).
pub fn apply_override(table: &mut toml::Table, path: &str, raw: &str) -> Result<(), ScenarioError> {
    let parts: Vec<&str> = path.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(ScenarioError::new(path, "empty key in --set path"));
    }
    let value = match toml::from_str::<toml::Table>(&format!("v = {raw}")) {
        Ok(mut t) => t
            .remove("v")
            .unwrap_or(toml::Value::String(raw.to_string())),
        // Digits TOML cannot hold as an integer are not a word: taken as a string they
        // were refused in serde's words ("invalid type: string …, expected u64").
        Err(_) if is_integer_literal(raw) => {
            return Err(ScenarioError::new(
                path,
                format!("{}: {INTEGER_RANGE}", raw.trim()),
            ))
        }
        Err(_) => toml::Value::String(raw.to_string()),
    };
    let mut cur = table;
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        let here = parts[..=i].join(".");
        // `name[k]` addresses element k of an array of tables.
        let (name, index) = match part.split_once('[') {
            Some((n, rest)) => {
                let idx = rest
                    .strip_suffix(']')
                    .and_then(|x| x.parse::<usize>().ok())
                    .ok_or_else(|| ScenarioError::new(&here, "bad index, expected name[N]"))?;
                (n, Some(idx))
            }
            None => (*part, None),
        };
        if last && index.is_none() {
            cur.insert(name.to_string(), value);
            return Ok(());
        }
        let entry = match index {
            None => cur
                .entry(name.to_string())
                .or_insert_with(|| toml::Value::Table(toml::Table::new())),
            Some(idx) => {
                let arr = cur
                    .get_mut(name)
                    .and_then(|v| v.as_array_mut())
                    .ok_or_else(|| ScenarioError::new(&here, format!("`{name}` is not a list")))?;
                let len = arr.len();
                arr.get_mut(idx).ok_or_else(|| {
                    ScenarioError::new(
                        &here,
                        format!("index {idx} is past the end ({len} entries)"),
                    )
                })?
            }
        };
        if last {
            *entry = value;
            return Ok(());
        }
        cur = match entry {
            toml::Value::Table(t) => t,
            _ => {
                return Err(ScenarioError::new(
                    here,
                    "is not a table, cannot set a key inside it",
                ))
            }
        };
    }
    Ok(())
}

/// Whether `raw` is written as a whole number: an optional sign, then digits (with
/// TOML's `_` separators).
pub(crate) fn is_integer_literal(raw: &str) -> bool {
    let digits = raw.trim().trim_start_matches(['+', '-']);
    digits.starts_with(|c: char| c.is_ascii_digit())
        && digits.chars().all(|c| c.is_ascii_digit() || c == '_')
}

/// The keys whose values are tables (`name[]`: a list of tables), by dotted path with
/// `[]` for a list's entries. serde would build any of them from a TOML list too, field
/// by field in order (`traffic = []` meaning the defaults, `traffic = ["cbr"]` setting
/// `kind`): [`refuse_lists_as_tables`] refuses that.
pub(crate) const TABLE_KEYS: &[&str] = &[
    "stack_options",
    "phy",
    "mac",
    "mac.edca_ap",
    "mac.edca_ap.vo",
    "mac.edca_ap.vi",
    "mac.edca_ap.be",
    "mac.edca_ap.bk",
    "mac.edca_sta",
    "mac.edca_sta.vo",
    "mac.edca_sta.vi",
    "mac.edca_sta.be",
    "mac.edca_sta.bk",
    "stations",
    "stations.scan",
    "stations.power_save",
    "stations.bus",
    "stations.tcp",
    "stations.downlink",
    "stations.uplink",
    "stations.list[]",
    "traffic",
    "traffic.web",
    "wired",
    "server",
    "server.tcp",
    "space",
    "flows[]",
];

/// The top-level tables a `[[bss]]` entry may give too, with the same tables inside.
pub(crate) const BSS_TABLES: &[&str] = &[
    "stack_options",
    "mac",
    "stations",
    "traffic",
    "wired",
    "flows",
];

/// [`TABLE_KEYS`], with the `[stations]` tables for `stations.list[]` entries too (a
/// station key is declared once, for both), and the same inside a `[[bss]]` entry
/// (`bss[]`, `bss[].stations`, …).
pub(crate) fn table_keys() -> impl Iterator<Item = String> {
    let with_list: Vec<String> = TABLE_KEYS
        .iter()
        .flat_map(|k| {
            let entry = k
                .strip_prefix("stations.")
                .filter(|rest| !rest.starts_with("list"))
                .map(|rest| format!("stations.list[].{rest}"));
            std::iter::once(k.to_string()).chain(entry)
        })
        .collect();
    let in_bss: Vec<String> = with_list
        .iter()
        .filter(|k| BSS_TABLES.contains(&k.split(['.', '[']).next().unwrap_or_default()))
        .map(|k| format!("bss[].{k}"))
        .collect();
    with_list
        .into_iter()
        .chain(std::iter::once("bss[]".to_string()))
        .chain(in_bss)
}

pub(crate) const CHOICE_KEYS: &[&str] = &[
    "stack",
    "stack_options.qdisc",
    "stack_options.fq_overload",
    "stack_options.dscp_mapping",
    "stack_options.scheduler",
    "stack_options.may_transmit_aql_check",
    "stack_options.queue_limit",
    "stack_options.aql_estimator",
    "stack_options.driver",
    "stack_options.mt76_chip",
    "phy.standard",
    "phy.guard_interval",
    "phy.preamble",
    "phy.he_ltf",
    "phy.he_format",
    "mac.protection",
    "mac.backoff_rule",
    "stations.rate_control",
    "stations.fading",
    "stations.snr_trace_interpolation",
    "stations.downlink.fading",
    "stations.downlink.snr_trace_interpolation",
    "stations.uplink.fading",
    "stations.uplink.snr_trace_interpolation",
    "stations.scan.policy",
    "stations.bus",
    "stations.bus.preset",
    "stations.bus.completion",
    "stations.bus.data",
    "stations.tcp.kernel",
    "server.tcp.kernel",
    "traffic.kind",
    "traffic.direction",
    "traffic.test",
    "traffic.cc",
    "flows[].kind",
    "flows[].cc",
    "space.layout",
    "space.capture",
];

/// [`CHOICE_KEYS`], with the `[stations]` keys for `stations.list[]` entries too, and
/// every key inside a `[[bss]]` entry's tables (`bss[].traffic.kind`, …).
pub(crate) fn choice_keys() -> impl Iterator<Item = String> {
    let with_list = CHOICE_KEYS.iter().flat_map(|k| {
        let entry = k
            .strip_prefix("stations.")
            .map(|rest| format!("stations.list[].{rest}"));
        std::iter::once(k.to_string()).chain(entry)
    });
    let all: Vec<String> = with_list.collect();
    let in_bss: Vec<String> = all
        .iter()
        .filter(|k| BSS_TABLES.contains(&k.split(['.', '[']).next().unwrap_or_default()))
        .map(|k| format!("bss[].{k}"))
        .collect();
    all.into_iter()
        .chain(std::iter::once("bss[].stack".to_string()))
        .chain(in_bss)
}

/// Every value at a key of [`choice_keys`] that is not a string (nor, for
/// `stations.bus`, a table) replaced by the text it is written as: see
/// [`CHOICE_KEYS`]. `pattern` is `table`'s path as [`TABLE_KEYS`] writes it.
pub(crate) fn choices_as_text(table: &mut toml::Table, pattern: &str) {
    for (key, value) in table.iter_mut() {
        let pattern = if pattern.is_empty() {
            key.clone()
        } else {
            format!("{pattern}.{key}")
        };
        let is_choice = || choice_keys().any(|k| k == pattern);
        match value {
            toml::Value::String(_) => {}
            toml::Value::Table(t) => choices_as_text(t, &pattern),
            toml::Value::Array(_) if is_choice() => {
                *value = toml::Value::String(value.to_string());
            }
            toml::Value::Array(items) => {
                let entries = format!("{pattern}[]");
                for item in items.iter_mut() {
                    if let toml::Value::Table(t) = item {
                        choices_as_text(t, &entries);
                    }
                }
            }
            other if is_choice() => {
                *other = toml::Value::String(other.to_string());
            }
            _ => {}
        }
    }
}

/// Whether the key `pattern` (as [`TABLE_KEYS`] writes it) is a table.
pub(crate) fn is_table_key(pattern: &str) -> bool {
    table_keys().any(|k| k == pattern)
}

/// A list where a table belongs is an error naming the key (see [`table_keys`]).
/// `pattern` is the table's path as [`TABLE_KEYS`] writes it, `shown` as the user
/// does (`stations.list[]` / `stations.list[2]`).
pub(crate) fn refuse_lists_as_tables(
    table: &toml::Table,
    pattern: &str,
    shown: &str,
) -> Result<(), ScenarioError> {
    let join = |base: &str, key: &str| {
        if base.is_empty() {
            key.to_string()
        } else {
            format!("{base}.{key}")
        }
    };
    for (key, value) in table {
        let (pattern, shown) = (join(pattern, key), join(shown, key));
        match value {
            toml::Value::Table(t) => refuse_lists_as_tables(t, &pattern, &shown)?,
            toml::Value::Array(_) if is_table_key(&pattern) => {
                return Err(ScenarioError::new(
                    shown,
                    "expected a table (`{ … }` or a [section]), not a list",
                ));
            }
            toml::Value::Array(items) => {
                let entries = format!("{pattern}[]");
                if !is_table_key(&entries) {
                    continue;
                }
                for (i, item) in items.iter().enumerate() {
                    let shown = format!("{shown}[{i}]");
                    let toml::Value::Table(t) = item else {
                        return Err(ScenarioError::new(shown, "expected a table (`{ … }`)"));
                    };
                    refuse_lists_as_tables(t, &entries, &shown)?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse;

    /// The scenario that puts `key` (a [`choice_keys`] pattern with `[0]` for `[]`)
    /// to use, with its value `value` (TOML) set over it.
    fn resolve_with(key: &str, value: &str) -> Result<(), String> {
        let mut text = String::from("duration_s = 0.01\n");
        if key.starts_with("space.") {
            text.push_str("[space]\n");
        }
        text.push_str("[stations]\n");
        let trace = key.contains("snr_trace_interpolation");
        if key.starts_with("space.") {
            text.push_str("distance_m = 5\n");
        } else if !trace {
            text.push_str("snr_db = 30\n");
        }
        if key.contains(".scan.") {
            text.push_str("scan = {}\n");
        }
        if key.contains(".bus.") {
            text.push_str("bus = { preset = \"sdio-vendor\" }\n");
        }
        if key.starts_with("stations.list[0]") {
            text.push_str("[[stations.list]]\n");
            if key.contains(".bus.") {
                text.push_str("bus = { preset = \"sdio-vendor\" }\n");
            }
        }
        if trace {
            // The trace where the interpolation is: the station's, or a direction's.
            let table = key.rsplit_once('.').map_or("", |(t, _)| t);
            let (station, direction) = match table.rsplit_once('.') {
                Some((s, d)) if d == "downlink" || d == "uplink" => (s, Some(d)),
                _ => (table, None),
            };
            match direction {
                None => text.push_str("snr_trace = \"t.csv\"\n"),
                Some(d) => {
                    if station == "stations" {
                        text.push_str("snr_db = 30\n");
                    }
                    text.push_str(&format!("{d} = {{ snr_trace = \"t.csv\" }}\n"));
                }
            }
            if station.starts_with("stations.list") && direction.is_some() {
                text = text.replace("[stations]\n", "[stations]\nsnr_db = 30\n");
            }
        }
        if key == "traffic.cc" {
            text.push_str("[traffic]\ntest = \"tcp_1down\"\n");
        }
        if key.starts_with("flows[0]") {
            text.push_str("[[flows]]\nkind = \"tcp\"\nfrom = \"sta1\"\nto = \"server\"\n");
        }
        let dir = std::env::temp_dir().join(format!(
            "txop-choice-{}-{}",
            std::process::id(),
            key.replace(['[', ']', '.'], "_")
        ));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("t.csv"), "0,1,30\n").unwrap();
        let r = parse(&text, &[(key.to_string(), value.to_string())])
            .and_then(|mut s| {
                s.base_dir = Some(dir.clone());
                s.resolve().map(|_| ())
            })
            .map_err(|e| e.to_string());
        std::fs::remove_dir_all(&dir).ok();
        r
    }

    /// The keys docs/scenarios.md documents, as dotted paths (`[[flows]]` rows as
    /// `flows[0].…`, `stations.downlink` rows as `stations.downlink.…`); `[[bss]]`'s
    /// own rows and the limits table left out.
    fn documented_keys() -> Vec<String> {
        let doc = include_str!("../../../docs/scenarios.md");
        let mut prefix = None;
        let mut keys = Vec::new();
        for line in doc.lines() {
            if let Some(h) = line.strip_prefix("## ").or(line.strip_prefix("### ")) {
                let name = h.trim().trim_matches('`');
                prefix = match name {
                    "Top level" => Some(String::new()),
                    "[[flows]]" => Some("flows[0].".to_string()),
                    "[[bss]]" | "Limits" => None,
                    _ if name.starts_with('[') || name.contains('.') => {
                        Some(format!("{}.", name.trim_matches(['[', ']'])))
                    }
                    _ => None,
                };
            } else if let (Some(p), Some(row)) = (&prefix, line.strip_prefix("| `")) {
                let first_cell = row.split('|').next().unwrap_or_default();
                for key in first_cell.split('`').step_by(2) {
                    let key = key.trim().trim_matches(',').trim();
                    if !key.is_empty() && !key.contains(' ') {
                        keys.push(format!("{p}{key}"));
                    }
                }
            }
        }
        keys
    }

    /// The keys whose value is free text (a name, a file, a node), not a choice.
    const FREE_TEXT: &[&str] = &[
        "name",
        "description",
        "stations.snr_trace",
        "stations.group",
        "stations.downlink.snr_trace",
        "kernel.src",
        "flows[0].from",
        "flows[0].to",
    ];

    /// Every documented key that takes a string is either a choice ([`CHOICE_KEYS`],
    /// whose other types are refused naming the names) or free text: a key missing
    /// from [`CHOICE_KEYS`] shows as serde's "expected a string" / "unit variant" /
    /// "untagged enum" when given a boolean.
    #[test]
    fn every_key_taking_a_name_is_a_choice_key() {
        let keys = documented_keys();
        assert!(keys.len() > 100, "{}", keys.len());
        let mut missing = Vec::new();
        for key in &keys {
            let text = "duration_s = 0.01\n[stations]\nsnr_db = 30\n\
                        [[flows]]\nkind = \"tcp\"\nfrom = \"sta1\"\nto = \"server\"\n";
            let e = parse(text, &[(key.clone(), "true".to_string())])
                .and_then(|s| s.resolve().map(|_| ()))
                .map_or_else(|e| e.to_string(), |()| String::new());
            let jargon = ["expected a string", "unit variant", "untagged enum"];
            if jargon.iter().any(|j| e.contains(j)) && !FREE_TEXT.contains(&key.as_str()) {
                missing.push(format!("{key}: {e}"));
            }
        }
        assert!(missing.is_empty(), "{}", missing.join("\n"));
    }

    /// Every key that takes one of a set of names refuses a number, a boolean or a
    /// list in one line naming the key, the value and the names (issue 25 item 5:
    /// `stack = 5`, `traffic.kind = 3`, `traffic.direction = true` gave serde's
    /// "invalid type: unit variant, expected string only"); and the scenario around
    /// it is valid, so that it is the value that is refused.
    #[test]
    fn every_choice_key_refuses_another_type_with_the_names() {
        let keys: Vec<String> = choice_keys()
            .filter(|k| !k.starts_with("bss[]"))
            .map(|k| k.replace("[]", "[0]"))
            .collect();
        assert!(keys.len() > 40, "{}", keys.len());
        let mut wrong = Vec::new();
        for key in &keys {
            for value in ["5", "1.5", "true", "[1]"] {
                // A list where a table may be (`stations.bus`) has its own message.
                if value == "[1]" && is_table_key(&key.replace("[0]", "[]")) {
                    continue;
                }
                let Err(e) = resolve_with(key, value) else {
                    wrong.push(format!("{key}={value}: accepted"));
                    continue;
                };
                let shown = toml::from_str::<toml::Table>(&format!("v = {value}")).unwrap()["v"]
                    .to_string();
                // A bus's preset is named as the bus (`bus = "name"` is the same).
                let named = key.strip_suffix(".preset").unwrap_or(key);
                if !(e.starts_with(&format!("{named}: "))
                    && e.contains(&format!("`{shown}`"))
                    && e.contains("expected one of")
                    && !e.contains('\n'))
                {
                    wrong.push(format!("{key}={value}: {e}"));
                }
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }
}
