//! Reading a flent data file (`*.flent.gz`, or `*.flent` uncompressed): the JSON of
//! `reference/flent-format.md` that flent writes and `txop_results::flentfile` writes too
//! (format versions 1–4 share what is read here).
//!
//! What is read: `x_values` (seconds from T0, one per step), `results` (per series one
//! value or `null` per step) and `metadata` (NAME, LENGTH, TOTAL_LENGTH, STEP_SIZE,
//! HOSTS, TITLE, and what [`crate::against`] looks up in it). Anything else a file may
//! hold (`raw_values`, per-series metadata) stays in [`FlentData::metadata`] or is
//! ignored.

use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

/// The largest file read, compressed or not, and the largest JSON a `.gz` may expand
/// to: 512 MiB. A 600 s flent run at 0.05 s steps is a few MB; the cap keeps a wrong
/// path (`/dev/zero`) from reading until memory runs out.
pub const MAX_FLENT_BYTES: u64 = 512 << 20;

/// A flent data file as read: its test, timing and series.
#[derive(Clone, Debug)]
pub struct FlentData {
    /// The test (`NAME`): `rrul`, `tcp_12down`…
    pub name: String,
    /// `TITLE` (flent's `-t`), empty if none.
    pub title: String,
    /// The loaders' duration (`LENGTH`, flent `-l`), s.
    pub length_s: f64,
    /// The whole run (`TOTAL_LENGTH`): LENGTH plus flent's DELAY before and after; if
    /// absent, LENGTH + 10 s (flent's default DELAY of 5 s).
    pub total_length_s: f64,
    /// The sampling step (`STEP_SIZE`), s.
    pub step_s: f64,
    /// `HOSTS` (the remote hosts, in the order of the test's flows), or `[HOST]`.
    pub hosts: Vec<String>,
    /// Seconds from T0 of each step.
    pub x_values: Vec<f64>,
    /// Each series: one value per step of `x_values`, `None` where flent has `null`.
    pub series: BTreeMap<String, Vec<Option<f64>>>,
    /// The whole `metadata` object.
    pub metadata: Map<String, Value>,
}

impl FlentData {
    /// flent's DELAY: the pings alone before and after the loaders, s.
    pub fn delay_s(&self) -> f64 {
        ((self.total_length_s - self.length_s) / 2.0).max(0.0)
    }

    /// The loaded period `[delay, delay + length]`, s from T0.
    pub fn loaded_s(&self) -> (f64, f64) {
        let d = self.delay_s();
        (d, d + self.length_s)
    }

    /// A series' UNITS from `SERIES_META`, if the file gives it.
    pub fn units(&self, series: &str) -> Option<&str> {
        self.metadata
            .get("SERIES_META")?
            .get(series)?
            .get("UNITS")?
            .as_str()
    }

    /// A series' entry in `SERIES_META` (flent ≥ 0.15 records each runner's command
    /// line there), if any.
    pub fn series_meta(&self, series: &str) -> Option<&Map<String, Value>> {
        self.metadata.get("SERIES_META")?.get(series)?.as_object()
    }
}

/// Read the flent data file at `path`, gzip'd (by its magic bytes) or not. Errors are
/// one line naming the file.
pub fn read(path: &Path) -> Result<FlentData, String> {
    let shown = path.display();
    let file = std::fs::File::open(path).map_err(|e| format!("{shown}: {e}"))?;
    if !file.metadata().map(|m| m.is_file()).unwrap_or(false) {
        return Err(format!("{shown}: not a regular file"));
    }
    let mut bytes = Vec::new();
    file.take(MAX_FLENT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{shown}: {e}"))?;
    if bytes.len() as u64 > MAX_FLENT_BYTES {
        return Err(format!(
            "{shown}: larger than {} MiB; not a flent data file",
            MAX_FLENT_BYTES >> 20
        ));
    }
    parse(&bytes).map_err(|e| format!("{shown}: {e}"))
}

/// [`read`] from the file's bytes; errors without the file's name.
pub fn parse(bytes: &[u8]) -> Result<FlentData, String> {
    let json = if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(bytes)
            .take(MAX_FLENT_BYTES + 1)
            .read_to_end(&mut out)
            .map_err(|e| format!("not a flent data file (gzip: {e})"))?;
        if out.len() as u64 > MAX_FLENT_BYTES {
            return Err(format!(
                "expands to more than {} MiB; not a flent data file",
                MAX_FLENT_BYTES >> 20
            ));
        }
        out
    } else {
        bytes.to_vec()
    };
    let value: Value =
        serde_json::from_slice(&json).map_err(|e| format!("not a flent data file (JSON: {e})"))?;
    from_value(&value)
}

/// A flent data file's JSON, checked: `metadata`, `results` and `x_values` present,
/// NAME, LENGTH and STEP_SIZE given, every series as long as `x_values`.
pub fn from_value(value: &Value) -> Result<FlentData, String> {
    let not = |what: &str| format!("not a flent data file ({what})");
    let obj = value.as_object().ok_or_else(|| not("not a JSON object"))?;
    let metadata = obj
        .get("metadata")
        .and_then(Value::as_object)
        .ok_or_else(|| not("no `metadata` object"))?
        .clone();
    let results = obj
        .get("results")
        .and_then(Value::as_object)
        .ok_or_else(|| not("no `results` object"))?;
    let x_values: Vec<f64> = obj
        .get("x_values")
        .and_then(Value::as_array)
        .ok_or_else(|| not("no `x_values` array"))?
        .iter()
        .map(|x| {
            x.as_f64()
                .ok_or_else(|| not("`x_values` holds a non-number"))
        })
        .collect::<Result<_, _>>()?;
    let name = metadata
        .get("NAME")
        .and_then(Value::as_str)
        .ok_or_else(|| "metadata: no NAME (the flent test)".to_string())?
        .to_string();
    let positive = |key: &str| -> Result<Option<f64>, String> {
        match metadata.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => match number(v) {
                Some(x) if x > 0.0 && x.is_finite() => Ok(Some(x)),
                _ => Err(format!(
                    "metadata: {key} is {v}; expected a number of seconds above 0"
                )),
            },
        }
    };
    let length_s = positive("LENGTH")?.ok_or("metadata: no LENGTH (the test's -l)")?;
    let step_s = positive("STEP_SIZE")?.ok_or("metadata: no STEP_SIZE")?;
    let total_length_s = positive("TOTAL_LENGTH")?.unwrap_or(length_s + 10.0);
    if total_length_s < length_s {
        return Err(format!(
            "metadata: TOTAL_LENGTH {total_length_s} is shorter than LENGTH {length_s}"
        ));
    }
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|h| h.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut hosts = metadata.get("HOSTS").map(strings).unwrap_or_default();
    if hosts.is_empty() {
        hosts.extend(
            metadata
                .get("HOST")
                .and_then(Value::as_str)
                .map(str::to_string),
        );
    }
    let mut series = BTreeMap::new();
    for (k, v) in results {
        let values = v
            .as_array()
            .ok_or_else(|| format!("results: series `{k}` is not an array"))?;
        if values.len() != x_values.len() {
            return Err(format!(
                "results: series `{k}` has {} values for {} x_values",
                values.len(),
                x_values.len()
            ));
        }
        let values = values
            .iter()
            .map(|x| match x {
                Value::Null => Ok(None),
                x => x
                    .as_f64()
                    .map(Some)
                    .ok_or_else(|| format!("results: series `{k}` holds {x}")),
            })
            .collect::<Result<Vec<_>, _>>()?;
        series.insert(k.clone(), values);
    }
    Ok(FlentData {
        name,
        title: metadata
            .get("TITLE")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        length_s,
        total_length_s,
        step_s,
        hosts,
        x_values,
        series,
        metadata,
    })
}

/// A JSON number, or a string holding one (flent's TEST_PARAMETERS are strings).
pub fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}
