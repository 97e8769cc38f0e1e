//! Inheritance: what a station takes from `[stations]`, and what a direction takes from
//! its station.
//!
//! A `[[stations.list]]` entry's keys lie over `[stations]`'s ([`StationKeys::over`]):
//! each key alone, except the groups that go together (the channel, the rate, the
//! fading). A `downlink`/`uplink` table's fading lies over its station's by the same
//! fading rule ([`FadingSpec::over`]).
//!
//! A `[[bss]]` entry's tables lie over the top level's as TOML tables, before they are
//! deserialised ([`overlay`]), so that an error names the key the user wrote: the
//! entry's (`bss[1].stations.count`) when the entry gives it, else the top level's
//! ([`attribute`]). This is a second rule on purpose: it inherits whole tables
//! (`[mac]`, `[traffic]`, `[wired]`, `[stack_options]`) key by key, nested tables
//! included, where a list entry replaces its `scan` or `downlink` table whole.

use crate::bss::BssSpec;
use crate::error::{BssEntry, ScenarioError};
use crate::limits;
use crate::parse::deserialize;
use crate::schema::{DirectionSpec, StationKeys, Stations};
use serde::de::DeserializeOwned;
use serde::Serialize;

/// A station's link: its keys as inherited, for one station.
#[derive(Clone, Debug, Default)]
pub(crate) struct Link {
    /// Its keys: its entry's over `[stations]`'s.
    pub(crate) keys: StationKeys,
    /// Set by `[space]` with a path-loss matrix: the SNRs are the matrix's (shown
    /// rounded, and said so), not keys of the station.
    pub(crate) snr_from_matrix: bool,
    /// What a `[[stations.list]]` entry took from `[stations]` ([`Link::owner`]'s
    /// names); empty for `[stations]` itself.
    pub(crate) inherited: Vec<&'static str>,
}

/// A link reads as its keys (`link.snr_db`).
impl std::ops::Deref for Link {
    type Target = StationKeys;

    fn deref(&self) -> &StationKeys {
        &self.keys
    }
}

impl std::ops::DerefMut for Link {
    fn deref_mut(&mut self) -> &mut StationKeys {
        &mut self.keys
    }
}

impl Link {
    /// The table that wrote `what` (a key, or a group: `channel` for the mean SNR's
    /// keys, `rate` for `mcs`/`nss`/`rate_mbps`, `fading` for the fading keys) of the
    /// station whose entry is `entry`: `stations` when the entry inherited it, else
    /// `entry`. An error then names the key the user wrote (issue 25: a bad
    /// `--set stations.rate_control` was reported under `stations.list[0]`).
    pub(crate) fn owner<'a>(&self, entry: &'a str, what: &str) -> &'a str {
        if self.inherited.contains(&what) {
            "stations"
        } else {
            entry
        }
    }
}

/// The keys of a station's mean SNR: an entry giving one of them replaces the inherited
/// channel entirely (a value, a place, a movement, a trace, or a loss).
const CHANNEL_KEYS: &[&str] = &[
    "snr_db",
    "loss",
    "distance_m",
    "position_m",
    "velocity_mps",
    "waypoints",
    "snr_trace",
    "snr_trace_interpolation",
];

/// The keys of a station's rate.
const RATE_KEYS: &[&str] = &["mcs", "nss", "rate_mbps"];

/// The keys of a station's fading.
const FADING_KEYS: &[&str] = &["fading", "fading_k_db", "coherence_ms"];

impl StationKeys {
    /// These keys (a `[[stations.list]]` entry's) over `base`'s (`[stations]`'s), and
    /// what was inherited ([`Link::owner`]'s names: a key, or `channel`, `rate` or
    /// `fading` for a group). Each key is its own value, else `base`'s, a table
    /// replaced whole ([`StationKeys::or`]); but
    /// - an own channel key ([`CHANNEL_KEYS`]) replaces the inherited channel;
    /// - an own `mcs` or `rate_mbps` replaces the inherited rate (an `mcs` keeps the
    ///   inherited `nss`, a `rate_mbps` does not);
    /// - an own `fading` replaces the fading keys, an own `fading_k_db` or
    ///   `coherence_ms` alone adjusts them ([`FadingSpec::over`]).
    pub(crate) fn over(&self, base: &StationKeys) -> (StationKeys, Vec<&'static str>) {
        let mut k = self.or(base);
        let given = self.given();
        let own_channel = given.iter().any(|g| CHANNEL_KEYS.contains(g));
        if own_channel {
            k.snr_db = self.snr_db;
            k.loss = self.loss;
            k.distance_m = self.distance_m;
            k.position_m = self.position_m;
            k.velocity_mps = self.velocity_mps;
            k.waypoints = self.waypoints.clone();
            k.snr_trace = self.snr_trace.clone();
            k.snr_trace_interpolation = self.snr_trace_interpolation.clone();
        }
        let own_rate = self.mcs.is_some() || self.rate_mbps.is_some();
        if own_rate {
            k.mcs = self.mcs;
            k.rate_mbps = self.rate_mbps;
        }
        if self.rate_mbps.is_some() {
            k.nss = self.nss;
        }
        let own_fading = self.fading_spec();
        let fading = own_fading.over(&base.fading_spec());
        k.fading = fading.fading;
        k.fading_k_db = fading.fading_k_db;
        k.coherence_ms = fading.coherence_ms;
        let groups = [
            ("rate", !own_rate && self.nss.is_none()),
            ("channel", !own_channel),
            ("fading", !own_fading.is_given()),
        ];
        // The keys inherited alone, then the groups.
        let mut inherited: Vec<&'static str> = StationKeys::NAMES
            .iter()
            .copied()
            .filter(|name| {
                !given.contains(name)
                    && ![CHANNEL_KEYS, RATE_KEYS, FADING_KEYS]
                        .iter()
                        .any(|group| group.contains(name))
            })
            .collect();
        inherited.extend(groups.into_iter().filter_map(|(g, on)| on.then_some(g)));
        (k, inherited)
    }

    /// Its fading keys, which go together.
    pub(crate) fn fading_spec(&self) -> FadingSpec {
        FadingSpec {
            fading: self.fading.clone(),
            fading_k_db: self.fading_k_db,
            coherence_ms: self.coherence_ms,
        }
    }
}

impl DirectionSpec {
    pub(crate) fn fading(&self) -> FadingSpec {
        FadingSpec {
            fading: self.fading.clone(),
            fading_k_db: self.fading_k_db,
            coherence_ms: self.coherence_ms,
        }
    }
}

/// The fading keys of a station or a direction, which go together.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct FadingSpec {
    pub(crate) fading: Option<String>,
    pub(crate) fading_k_db: Option<f64>,
    pub(crate) coherence_ms: Option<f64>,
}

impl FadingSpec {
    pub(crate) fn is_given(&self) -> bool {
        self.fading.is_some() || self.fading_k_db.is_some() || self.coherence_ms.is_some()
    }

    /// These keys over `base`'s: an own `fading` replaces all three; an own
    /// `fading_k_db` or `coherence_ms` alone adjusts the inherited fading.
    pub(crate) fn over(&self, base: &FadingSpec) -> FadingSpec {
        if self.fading.is_some() {
            return self.clone();
        }
        FadingSpec {
            fading: base.fading.clone(),
            fading_k_db: self.fading_k_db.or(base.fading_k_db),
            coherence_ms: self.coherence_ms.or(base.coherence_ms),
        }
    }
}

/// `[stations]` entries expanded to one link spec per station, with the key to blame.
pub(crate) fn station_links(s: &Stations) -> Result<Vec<(String, Link)>, ScenarioError> {
    let base = Link {
        keys: s.keys(),
        snr_from_matrix: false,
        inherited: Vec::new(),
    };
    if s.list.is_empty() {
        if s.count == 0 || s.count as usize > limits::MAX_STATIONS {
            return Err(ScenarioError::new(
                "stations.count",
                format!("must be 1 to {}", limits::MAX_STATIONS),
            ));
        }
        return Ok((0..s.count)
            .map(|_| ("stations".to_string(), base.clone()))
            .collect());
    }
    if s.count != 1 {
        return Err(ScenarioError::new(
            "stations.count",
            "cannot be combined with stations.list (set stations.list[N].count instead)",
        ));
    }
    let mut out = Vec::new();
    for (i, e) in s.list.iter().enumerate() {
        let key = format!("stations.list[{i}]");
        let count = e.count.unwrap_or(1);
        if count == 0 {
            return Err(ScenarioError::new(
                format!("{key}.count"),
                "must be at least 1",
            ));
        }
        // Refused before expanding: 65535 stations in each of many entries.
        if out.len() + count as usize > limits::MAX_STATIONS {
            return Err(ScenarioError::new(
                format!("{key}.count"),
                format!(
                    "the list comes to more than {} stations, the most a cell takes",
                    limits::MAX_STATIONS
                ),
            ));
        }
        let (keys, inherited) = e.keys().over(&base.keys);
        let merged = Link {
            keys,
            snr_from_matrix: false,
            inherited,
        };
        for _ in 0..count {
            out.push((key.clone(), merged.clone()));
        }
    }
    Ok(out)
}

/// Keys a BSS's table may give in place of inherited ones: giving one of a group drops
/// the inherited others of that group, which it could not go with. Narrower than a list
/// entry's [`CHANNEL_KEYS`]: a BSS's `velocity_mps` moves the inherited position, its
/// `snr_trace_interpolation` applies to the inherited trace.
pub(crate) const STATION_ALTERNATIVES: &[&[&str]] = &[
    &["count", "list"],
    &[
        "position_m",
        "distance_m",
        "snr_db",
        "loss",
        "snr_trace",
        "waypoints",
    ],
];

/// The top-level keys every BSS shares: an error in one is the top level's alone.
pub(crate) const SHARED_KEYS: &[&str] =
    &["name", "description", "seed", "duration_s", "phy", "space"];

/// `over`'s keys laid over `base`'s: a table into a table key by key, anything else
/// (a value, a list) replacing what was there.
pub(crate) fn lay_over(base: &mut toml::Table, over: &toml::Table) {
    for (k, v) in over {
        match (base.get_mut(k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => lay_over(b, o),
            _ => {
                base.insert(k.clone(), v.clone());
            }
        }
    }
}

/// `base` (a top-level table, as resolved) with the entry's table `over` laid over it;
/// the error names the entry's key under `key` (`bss[1].stations`).
pub(crate) fn overlay<T: Serialize + DeserializeOwned + Clone>(
    base: &T,
    over: Option<&toml::Table>,
    key: &str,
    alternatives: &[&[&str]],
) -> Result<T, ScenarioError> {
    let Some(over) = over else {
        return Ok(base.clone());
    };
    let mut merged = match toml::Value::try_from(base) {
        Ok(toml::Value::Table(t)) => t,
        // The top level's own values do not write back as TOML (an integer beyond
        // i64): the entry cannot be laid over them.
        _ => {
            return Err(ScenarioError::new(
                key,
                "cannot be combined with the top level's table (a value there is out of \
                 TOML's range)",
            ))
        }
    };
    for group in alternatives {
        if group.iter().any(|k| over.contains_key(*k)) {
            for k in group.iter().filter(|k| !over.contains_key(**k)) {
                merged.remove(*k);
            }
        }
    }
    lay_over(&mut merged, over);
    deserialize(toml::Value::Table(merged), key)
}

/// Whether `entry` gives the key `key` (a dotted path, `name[i]` for a list's entry;
/// anything after a space, as in `stations (station 3)`, ignored).
pub(crate) fn entry_gives(entry: &BssSpec, key: &str) -> bool {
    let Ok(mut cur) = toml::Value::try_from(entry) else {
        return false;
    };
    let path = key.split(' ').next().unwrap_or_default();
    if path.is_empty() {
        return false;
    }
    for seg in path.split('.') {
        let (name, index) = match seg.split_once('[') {
            Some((n, rest)) => (
                n,
                rest.strip_suffix(']').and_then(|i| i.parse::<usize>().ok()),
            ),
            None => (seg, None),
        };
        let Some(next) = cur.get(name) else {
            return false;
        };
        cur = match index {
            None => next.clone(),
            Some(i) => match next.get(i) {
                Some(v) => v.clone(),
                None => return false,
            },
        };
    }
    true
}

/// An error of BSS `k`'s single-BSS scenario, as the user sees it: its key in the
/// entry (`bss[k].…`) when the entry gives it, else the top level's key, said to be
/// inherited by the entry.
pub(crate) fn attribute(e: ScenarioError, k: usize, name: &str, entry: &BssSpec) -> ScenarioError {
    let at = format!("bss[{k}]");
    if e.key == "phy.ap_position_m" {
        return ScenarioError::new(format!("{at}.ap_position_m"), e.message);
    }
    if e.key == "space" && e.message.contains("out of range of its AP") {
        return ScenarioError::new(format!("{at}.stations"), e.message);
    }
    let first = e.key.split(['.', '[', ' ']).next().unwrap_or_default();
    if SHARED_KEYS.contains(&first) {
        return e;
    }
    if entry_gives(entry, &e.key) {
        return ScenarioError::new(format!("{at}.{}", e.key), e.message);
    }
    ScenarioError {
        inherited_by: Some(BssEntry {
            index: k,
            name: name.to_string(),
        }),
        ..e
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_lays_over_key_by_key_and_lists_replace() {
        let mut base: toml::Table =
            toml::from_str("a = 1\nl = [1, 2]\n[t]\nx = 1\ny = 2\n").unwrap();
        let over: toml::Table = toml::from_str("l = [3]\n[t]\ny = 5\nz = 6\n").unwrap();
        lay_over(&mut base, &over);
        let want: toml::Table =
            toml::from_str("a = 1\nl = [3]\n[t]\nx = 1\ny = 5\nz = 6\n").unwrap();
        assert_eq!(base, want);
    }

    #[test]
    fn a_key_is_the_entrys_when_it_gives_it() {
        let entry: BssSpec = toml::from_str(
            "name = \"a\"\n[stations]\ncount = 3\n[[flows]]\nkind = \"ping\"\nfrom = \"sta1\"\nto = \"server\"\n",
        )
        .unwrap();
        assert!(entry_gives(&entry, "stations.count"));
        assert!(entry_gives(&entry, "stations (station 2)"));
        assert!(entry_gives(&entry, "flows[0].to"));
        assert!(!entry_gives(&entry, "flows[1].to"));
        assert!(!entry_gives(&entry, "traffic.test"));
        assert!(!entry_gives(&entry, ""));
    }

    fn keys(text: &str) -> StationKeys {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn an_entry_key_replaces_its_group_and_other_keys_alone() {
        let base = keys(
            "mcs = 7\nnss = 2\nsnr_db = 30.0\nfading = \"rician\"\nfading_k_db = 6.0\n\
             rate_control = \"ideal\"\nweight = 100\n",
        );
        // A legacy rate replaces the rate, nss too; a position replaces the SNR; a K
        // factor alone adjusts the inherited fading.
        let entry = keys("rate_mbps = 24.0\nposition_m = [3.0, 4.0]\nfading_k_db = 9.0\n");
        let (k, inherited) = entry.over(&base);
        assert_eq!((k.mcs, k.nss, k.rate_mbps), (None, None, Some(24.0)));
        assert_eq!((k.snr_db, k.position_m), (None, Some([3.0, 4.0])));
        assert_eq!(k.fading.as_deref(), Some("rician"));
        assert_eq!(k.fading_k_db, Some(9.0));
        assert_eq!(
            (k.weight, k.rate_control.as_deref()),
            (Some(100), Some("ideal"))
        );
        for name in ["weight", "rate_control", "scan", "downlink"] {
            assert!(inherited.contains(&name), "{name} inherited");
        }
        for name in ["rate", "channel", "fading"] {
            assert!(!inherited.contains(&name), "{name} the entry's own");
        }
        // An MCS keeps the inherited nss; the channel and the fading stay inherited.
        let (k, inherited) = keys("mcs = 3\n").over(&base);
        assert_eq!((k.mcs, k.nss, k.snr_db), (Some(3), Some(2), Some(30.0)));
        assert!(inherited.contains(&"channel") && inherited.contains(&"fading"));
        assert!(!inherited.contains(&"rate"));
        // An own fading replaces the inherited K factor.
        let (k, _) = keys("fading = \"rayleigh\"\n").over(&base);
        assert_eq!(
            (k.fading.as_deref(), k.fading_k_db),
            (Some("rayleigh"), None)
        );
        // Nothing of its own: everything inherited.
        let (k, _) = StationKeys::default().over(&base);
        assert_eq!(k, base);
    }

    /// The two tables hold the station keys, declared once, between their own: the
    /// order in which an unknown key's error lists them.
    #[test]
    fn the_tables_list_the_station_keys_between_their_own() {
        let expected = |e: String| -> Vec<String> {
            e.split("expected one of ")
                .nth(1)
                .unwrap_or_default()
                .split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_string)
                .collect()
        };
        let names = StationKeys::NAMES.iter().map(|n| n.to_string());
        let stations = toml::from_str::<Stations>("zz = 1\n")
            .unwrap_err()
            .to_string();
        let want: Vec<String> = std::iter::once("count".to_string())
            .chain(names.clone())
            .chain(std::iter::once("list".to_string()))
            .collect();
        assert_eq!(expected(stations), want);
        let entry = toml::from_str::<crate::StationEntry>("zz = 1\n")
            .unwrap_err()
            .to_string();
        let want: Vec<String> = std::iter::once("count".to_string()).chain(names).collect();
        assert_eq!(expected(entry), want);
    }
}
