//! `[[bss]]`: several BSSs in one scenario, each an AP with its stations, stack and
//! traffic, sharing the air (issue 15).
//!
//! Each entry is resolved as a single-BSS scenario of its own, through
//! [`Scenario::resolve_with_summary`], so every key and every check works as without
//! `[[bss]]`: the top level's tables with the entry's laid over them key by key (lists
//! replaced whole), the AP at the entry's `ap_position_m`. Then every cell's space is
//! replaced by one placing every node of every BSS on its channel — AP then stations,
//! BSS by BSS — with the cell's own AP at `first_node`: BSSs on one channel hear and
//! interfere with each other (`txop_sim::Neighbourhood`), BSSs on different channels
//! do not.
//!
//! An error names the entry's key (`bss[1].stations.count`) when the entry gives it,
//! and otherwise the top level's key and the entry that inherits it.

use super::{limits, FlowSpec, Scenario, ScenarioError, Space};
use crate::inherit::{attribute, entry_gives, overlay, STATION_ALTERNATIVES};
use crate::parse::deserialize;
use serde::{Deserialize, Serialize};
use txop_core::phy::mobility::Position;
use txop_core::phy::space::{Capture, Placement, RadioMap, SpaceConfig, Walker};
use txop_core::phy::{Band, ChannelWidth, Standard};
use txop_sim::SimConfig;

/// One `[[bss]]` entry as written: its AP's place and channel, and the tables it lays
/// over the top level's (absent: inherited whole).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BssSpec {
    /// Its name, unique among the BSSs (letters, digits, `-`, `_`): required.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Where its AP stands, `[x, y]` in metres: required.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ap_position_m: Option<[f64; 2]>,
    /// Its 20 MHz (primary) channel number; absent: the band's default channel, shared
    /// by every BSS that gives none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<u16>,
    /// Its stack preset, instead of the top level's `stack`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack: Option<String>,
    /// `[bss.stack_options]`, over the top level's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack_options: Option<toml::Table>,
    /// `[bss.mac]`, over the top level's `[mac]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mac: Option<toml::Table>,
    /// `[bss.stations]`, over the top level's `[stations]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stations: Option<toml::Table>,
    /// `[bss.traffic]`, over the top level's `[traffic]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traffic: Option<toml::Table>,
    /// `[bss.wired]`, over the top level's `[wired]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wired: Option<toml::Table>,
    /// `[[bss.flows]]`, instead of the top level's `[[flows]]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flows: Option<Vec<toml::Table>>,
}

/// One BSS of a scenario with `[[bss]]`, resolved.
#[derive(Clone, Debug)]
pub struct ResolvedBss {
    /// Its name (`bss[k].name`).
    pub name: String,
    /// Its simulation: its cell (with a space placing every node of every BSS on its
    /// channel, its own from `first_node`), wired side, flows, and the seed
    /// `txop_sim::bss_seed(run seed, k)`.
    pub cfg: SimConfig,
    /// Its 20 MHz (primary) channel number: BSSs on different channels do not hear
    /// each other, so only the BSSs of one channel make one `txop_sim::Neighbourhood`
    /// ([`channel_groups`]).
    pub channel: u16,
    /// The BSS as a single-BSS scenario (its entry laid over the top level): what its
    /// results say it resolved from, and its flent test.
    pub scenario: Scenario,
}

impl ResolvedBss {
    /// Its simulation and channel, as [`txop_sim::Neighbourhood::new`] takes them.
    pub fn bss_config(&self) -> txop_sim::BssConfig {
        txop_sim::BssConfig {
            sim: self.cfg.clone(),
            channel: self.channel,
        }
    }
}

/// The BSSs that share the air, as indices into `bsss`: one group per channel, in
/// order of each channel's first BSS, each group in the BSSs' order. Each group is one
/// `txop_sim::Neighbourhood`; its cells' placements hold exactly its BSSs' nodes.
pub fn channel_groups(bsss: &[ResolvedBss]) -> Vec<Vec<usize>> {
    let mut groups: Vec<(u16, Vec<usize>)> = Vec::new();
    for (b, bss) in bsss.iter().enumerate() {
        match groups.iter_mut().find(|(c, _)| *c == bss.channel) {
            Some((_, g)) => g.push(b),
            None => groups.push((bss.channel, vec![b])),
        }
    }
    groups.into_iter().map(|(_, g)| g).collect()
}

/// Where a flow's host, as `[[flows]]` names it, is: in the BSS that lists the flow,
/// or in another.
enum HostIn {
    /// This BSS's `server`, `ap` or `staN`.
    Own(String),
    /// Host `host` of BSS `bss` (an index).
    Far { bss: usize, host: String },
}

/// A flow's host `host` (the key `key` names it) in BSS `own` (an index into `names`):
/// `server`, `ap`, `staN`, or the same prefixed with a BSS's name (`home.sta2`), this
/// BSS's or another's.
fn host_in(key: &str, host: &str, own: usize, names: &[String]) -> Result<HostIn, ScenarioError> {
    let Some((bss, h)) = host.split_once('.') else {
        return Ok(HostIn::Own(host.to_string()));
    };
    match names.iter().position(|n| n == bss) {
        Some(b) if b == own => Ok(HostIn::Own(h.to_string())),
        Some(b) => Ok(HostIn::Far {
            bss: b,
            host: h.to_string(),
        }),
        None => Err(ScenarioError::new(
            key,
            format!(
                "no BSS called `{bss}` (the BSSs are {})",
                names
                    .iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

/// A flow of one BSS with its far end in another (`txop_sim::transit`), as found in
/// its `[[flows]]` entry: resolved once every BSS's stations are known.
#[derive(Clone, Debug)]
struct Crossing {
    /// The flow's index in the BSS's flows.
    flow: usize,
    /// Whether the far end is the flow's `from` (else its `to`).
    far_is_from: bool,
    /// The far end's key (`bss[0].flows[1].to`).
    key: String,
    /// The other BSS (an index) and the host there as written after its name.
    bss: usize,
    host: String,
}

/// The 20 MHz channels of `band`.
fn channels(band: Band) -> Vec<u16> {
    match band {
        Band::Ghz2_4 => (1..=13).collect(),
        Band::Ghz5 => (36..=64)
            .step_by(4)
            .chain((100..=144).step_by(4))
            .chain((149..=165).step_by(4))
            .collect(),
    }
}

/// The channel a BSS that gives none is on.
fn default_channel(band: Band) -> u16 {
    match band {
        Band::Ghz2_4 => 1,
        Band::Ghz5 => 36,
    }
}

/// The spectrum (MHz, low and high edge) a BSS whose primary channel is `ch` occupies
/// with `width_mhz`, or why there is no such channel. 5 GHz: the 20, 40 or 80 MHz
/// channel of 802.11-2016 Annex E containing `ch`; 2.4 GHz: the channel's centre ±10 MHz
/// (±11 for 802.11b's DSSS), ±30 MHz at 40 MHz (the secondary may lie either side).
fn spectrum_mhz(
    band: Band,
    standard: Standard,
    width_mhz: u32,
    ch: u16,
) -> Result<(u32, u32), String> {
    let valid = channels(band);
    if !valid.contains(&ch) {
        let list = match band {
            Band::Ghz2_4 => "1 to 13".to_string(),
            Band::Ghz5 => "36–64, 100–144 and 149–165, every 4th".to_string(),
        };
        return Err(format!(
            "{ch} is not a {} GHz channel ({list})",
            band.name()
        ));
    }
    let ch = ch as u32;
    match band {
        Band::Ghz2_4 => {
            let centre = 2407 + 5 * ch;
            let half = match (width_mhz, standard) {
                (40, _) => 30,
                (_, Standard::B) => 11,
                _ => 10,
            };
            Ok((centre - half, centre + half))
        }
        Band::Ghz5 => {
            if width_mhz == 20 {
                let centre = 5000 + 5 * ch;
                return Ok((centre - 10, centre + 10));
            }
            // The first 20 MHz channel of each wider channel.
            let starts: &[u32] = if width_mhz == 40 {
                &[36, 44, 52, 60, 100, 108, 116, 124, 132, 140, 149, 157]
            } else {
                &[36, 52, 100, 116, 132, 149]
            };
            let span = width_mhz / 5;
            match starts.iter().find(|&&s| (s..s + span).contains(&ch)) {
                Some(&s) => {
                    let low = 5000 + 5 * s - 10;
                    Ok((low, low + width_mhz))
                }
                None => Err(format!("channel {ch} is in no {width_mhz} MHz channel")),
            }
        }
    }
}

/// Node runs as text: "2–5, 9".
fn runs(numbers: &[usize]) -> String {
    super::space::runs(numbers)
}

/// A coordinate for reading.
fn metres(v: f64) -> String {
    super::space::metres(v)
}

/// The positions of a resolved cell's space (AP first).
fn positions(cfg: &SimConfig) -> &[Position] {
    match cfg.cell.space.as_ref().map(|s| &s.placement) {
        Some(Placement::Positions { positions, .. }) => positions,
        // Every BSS is resolved with positions ([[bss]] refuses a path-loss matrix).
        _ => &[],
    }
}

/// Which BSS and node of it (0: the AP, n: station n) each node of a channel's
/// placement is, in order.
fn owners(bsss: &[ResolvedBss], group: &[usize]) -> Vec<(usize, usize)> {
    group
        .iter()
        .flat_map(|&b| (0..=bsss[b].cfg.cell.stations.len()).map(move |n| (b, n)))
        .collect()
}

/// What BSS `own`'s node cannot detect, in words: its own nodes as "AP" / "station
/// 2–3", another BSS's prefixed by "bss NAME".
fn hidden_words(bsss: &[ResolvedBss], own: usize, hidden: &[(usize, usize)]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < hidden.len() {
        let b = hidden[i].0;
        let j = hidden[i..].iter().take_while(|h| h.0 == b).count() + i;
        let prefix = if b == own {
            String::new()
        } else {
            format!("bss {} ", bsss[b].name)
        };
        let nodes = &hidden[i..j];
        if nodes[0].1 == 0 {
            parts.push(format!("{prefix}AP"));
        }
        let stations: Vec<usize> = nodes.iter().map(|h| h.1).filter(|&n| n > 0).collect();
        if !stations.is_empty() {
            let s = if stations.len() == 1 { "" } else { "s" };
            parts.push(format!("{prefix}station{s} {}", runs(&stations)));
        }
        i = j;
    }
    parts.join(", ")
}

/// What `txop show` says about the BSSs, as TOML comments: the radio settings, then per
/// BSS its channel, stack and seed, each station's resolved channel (`channels[b]`), and
/// where each node stands, what each station receives from its AP, and which nodes of
/// its channel, its own BSS's or another's, each node cannot detect.
fn summary(bsss: &[ResolvedBss], channels: &[String]) -> String {
    let mut out = String::from("# Resolved BSSs (for reading; ignored as input):\n");
    let Some(first) = bsss.first().and_then(|b| b.cfg.cell.space.as_ref()) else {
        return out;
    };
    let capture = match first.capture {
        Capture::Off => "capture off".to_string(),
        Capture::Restart { margin_db } => format!("capture restart at {margin_db} dB"),
    };
    let exponent = match &first.placement {
        Placement::Positions { exponent, .. } => *exponent,
        Placement::PathLossDb(_) => f64::NAN,
    };
    let band = bsss[0].cfg.cell.band;
    let noise = RadioMap::new(first, band, ChannelWidth::Mhz20).noise_dbm;
    out.push_str(&format!(
        "# {} dBm, log-distance exponent {exponent}; CCA preamble {} dBm, energy {} dBm; \
         {capture}; noise {noise:.1} dBm\n",
        first.tx_power_dbm, first.cca_preamble_dbm, first.cca_energy_dbm
    ));
    let groups = channel_groups(bsss);
    let mut lines: Vec<Vec<String>> = vec![Vec::new(); bsss.len()];
    for group in &groups {
        let space: &SpaceConfig = bsss[group[0]].cfg.cell.space.as_ref().expect("space");
        let map = RadioMap::new(space, band, ChannelWidth::Mhz20);
        let owners = owners(bsss, group);
        let all = positions(&bsss[group[0]].cfg);
        let channel = bsss[group[0]].channel;
        for (node, &(b, n)) in owners.iter().enumerate() {
            let hidden: Vec<(usize, usize)> = owners
                .iter()
                .enumerate()
                .filter(|&(m, _)| m != node && !map.detects(m, node))
                .map(|(_, o)| *o)
                .collect();
            let hears = if hidden.is_empty() {
                format!("hears every node on channel {channel}")
            } else {
                format!("hidden from: {}", hidden_words(bsss, b, &hidden))
            };
            let p = all[node];
            let at = format!("({}, {}) m", metres(p.x_m), metres(p.y_m));
            let ap = node - n;
            let walks = if map.node_walks(node) {
                " (walks; as at 0 s)"
            } else {
                ""
            };
            lines[b].push(if n == 0 {
                format!("# AP at {at}; {hears}\n")
            } else {
                format!(
                    "# station {n} at {at}{walks}: AP {:.1} dBm (SNR {:.1} dB); {hears}\n",
                    map.rx_dbm(ap, node),
                    map.snr_db(ap, node)
                )
            });
        }
    }
    for (b, bss) in bsss.iter().enumerate() {
        let n = bss.cfg.cell.stations.len();
        out.push_str(&format!(
            "# bss {}: channel {}, stack {}, seed {}, {n} station{}\n",
            bss.name,
            bss.channel,
            bss.cfg.cell.stack.name,
            bss.cfg.seed,
            if n == 1 { "" } else { "s" }
        ));
        out.push_str(&channels[b]);
        for l in &lines[b] {
            out.push_str(l);
        }
    }
    out
}

/// The station lines of a single-BSS summary's channel part (its header and its space
/// part, which the BSSs' own summary replaces, left out).
fn channel_lines(summary: Option<&str>) -> String {
    let Some(s) = summary else {
        return String::new();
    };
    let channels = s
        .split("# Resolved space (for reading")
        .next()
        .unwrap_or_default();
    channels
        .lines()
        .filter(|l| !l.starts_with("# Resolved channels"))
        .map(|l| format!("{l}\n"))
        .collect()
}

impl Scenario {
    /// Whether the scenario lists BSSs (`[[bss]]`).
    pub fn has_bsss(&self) -> bool {
        !self.bss.is_empty()
    }

    /// The `[[bss]]` entries that give `key` (a key as `--set` addresses it:
    /// `stations.list[1].mcs`) themselves, so that the top level's value does not reach
    /// them: for a key entries inherit from the top level (`stack` and the tables of
    /// `BSS_TABLES`); none for any other key (an entry's name, place and channel are
    /// its own).
    pub fn bss_giving(&self, key: &str) -> Vec<usize> {
        let first = key.split(['.', '[']).next().unwrap_or_default();
        if first != "stack" && !crate::overrides::BSS_TABLES.contains(&first) {
            return Vec::new();
        }
        self.bss
            .iter()
            .enumerate()
            .filter(|(_, entry)| entry_gives(entry, key))
            .map(|(i, _)| i)
            .collect()
    }

    /// Every `[[bss]]` entry gives `key` itself (there is at least one entry): a value
    /// set for the whole scenario reaches none of them.
    pub fn every_bss_gives(&self, key: &str) -> bool {
        !self.bss.is_empty() && self.bss_giving(key).len() == self.bss.len()
    }

    /// Every BSS resolved, in order; errors name the key (`bss[2].stations.count: …`).
    pub fn resolve_bsss(&self) -> Result<Vec<ResolvedBss>, ScenarioError> {
        self.resolve_bsss_with_summary().map(|(bsss, _)| bsss)
    }

    /// [`Scenario::resolve_bsss`], with what `txop show` adds: each BSS's channel,
    /// stack, seed and stations' channels, where every node stands and whom it cannot
    /// detect, other BSSs' nodes included (`hidden from: bss b station 2`).
    pub fn resolve_bsss_with_summary(&self) -> Result<(Vec<ResolvedBss>, String), ScenarioError> {
        if self.bss.is_empty() {
            return Err(ScenarioError::new(
                "bss",
                "this scenario lists no BSSs ([[bss]]): it is one cell",
            ));
        }
        if self.bss.len() > limits::MAX_BSSS {
            return Err(ScenarioError::new(
                "bss",
                format!("{} BSSs; at most {}", self.bss.len(), limits::MAX_BSSS),
            ));
        }
        if self.phy.ap_position_m.is_some() {
            return Err(ScenarioError::new(
                "phy.ap_position_m",
                "cannot be combined with [[bss]]: each BSS's AP stands at its \
                 bss[N].ap_position_m",
            ));
        }
        if self
            .space
            .as_ref()
            .is_some_and(|s| s.path_loss_db.is_some())
        {
            return Err(ScenarioError::new(
                "space.path_loss_db",
                "cannot be combined with [[bss]]: BSSs are placed by position (their \
                 ap_position_m and their stations' places)",
            ));
        }
        let names = self.bss_names()?;
        for (k, e) in self.bss.iter().enumerate() {
            let key = format!("bss[{k}].ap_position_m");
            match e.ap_position_m {
                None => {
                    return Err(ScenarioError::new(
                        key,
                        "required: where this BSS's AP stands, [x, y] in metres",
                    ))
                }
                Some(p) => {
                    Self::position(&key, p)?;
                }
            }
        }
        let mut bsss = Vec::with_capacity(self.bss.len());
        let mut crossings = Vec::with_capacity(self.bss.len());
        let mut channel_parts = Vec::with_capacity(self.bss.len());
        for (k, entry) in self.bss.iter().enumerate() {
            let (single, crossing) = self.bss_scenario(k, &names)?;
            // The far ends resolve as the server here (`txop_sim::transit`).
            let mut runnable = single.clone();
            for c in &crossing {
                let f = &mut runnable.flows[c.flow];
                let far = if c.far_is_from {
                    &mut f.from
                } else {
                    &mut f.to
                };
                *far = "server".to_string();
            }
            crossings.push(crossing);
            let (mut cfg, summary) = runnable
                .resolve_with_summary()
                .map_err(|e| attribute(e, k, &names[k], entry))?;
            cfg.seed = txop_sim::bss_seed(self.seed, k);
            channel_parts.push(channel_lines(summary.as_deref()));
            bsss.push(ResolvedBss {
                name: names[k].clone(),
                cfg,
                channel: entry.channel.unwrap_or(default_channel(self.phy.band)),
                scenario: single,
            });
        }
        for (k, crossing) in crossings.iter().enumerate() {
            bsss[k].cfg.remote_ends = self.remote_ends(k, crossing, &bsss)?;
        }
        self.check_channels(&bsss)?;
        share_the_air(&mut bsss)?;
        let text = summary(&bsss, &channel_parts);
        Ok((bsss, text))
    }

    /// Every entry's name: given, well formed, and unique.
    fn bss_names(&self) -> Result<Vec<String>, ScenarioError> {
        let mut names: Vec<String> = Vec::with_capacity(self.bss.len());
        for (k, e) in self.bss.iter().enumerate() {
            let key = format!("bss[{k}].name");
            let Some(name) = &e.name else {
                return Err(ScenarioError::new(
                    key,
                    "required: a name for this BSS, unique among them",
                ));
            };
            let well_formed = (1..=limits::MAX_BSS_NAME_CHARS).contains(&name.len())
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
            if !well_formed {
                return Err(ScenarioError::new(
                    key,
                    format!(
                        "must be 1 to {} letters, digits, `-` or `_`",
                        limits::MAX_BSS_NAME_CHARS
                    ),
                ));
            }
            if let Some(j) = names.iter().position(|n| n == name) {
                return Err(ScenarioError::new(
                    key,
                    format!("`{name}` is bss[{j}]'s name too; each BSS needs its own"),
                ));
            }
            names.push(name.clone());
        }
        Ok(names)
    }

    /// BSS `k` as a single-BSS scenario: the top level with the entry's tables laid
    /// over it, its AP at the entry's place, in space.
    fn bss_scenario(
        &self,
        k: usize,
        names: &[String],
    ) -> Result<(Scenario, Vec<Crossing>), ScenarioError> {
        let e = &self.bss[k];
        let key = |s: &str| format!("bss[{k}].{s}");
        let mut s = self.clone();
        s.bss = Vec::new();
        s.phy.ap_position_m = e.ap_position_m;
        if s.space.is_none() {
            s.space = Some(Space::default());
        }
        if let Some(stack) = &e.stack {
            s.stack = stack.clone();
        }
        s.stack_options = overlay(
            &self.stack_options,
            e.stack_options.as_ref(),
            &key("stack_options"),
            &[],
        )?;
        s.mac = overlay(&self.mac, e.mac.as_ref(), &key("mac"), &[])?;
        s.stations = overlay(
            &self.stations,
            e.stations.as_ref(),
            &key("stations"),
            STATION_ALTERNATIVES,
        )?;
        s.traffic = overlay(&self.traffic, e.traffic.as_ref(), &key("traffic"), &[])?;
        s.wired = overlay(&self.wired, e.wired.as_ref(), &key("wired"), &[])?;
        let gives_test = e.traffic.as_ref().is_some_and(|t| t.contains_key("test"));
        let (flows, flows_key) = match &e.flows {
            Some(list) => {
                // Its own flows replace an inherited flent test.
                if !gives_test {
                    s.traffic.test = None;
                }
                let flows = list
                    .iter()
                    .enumerate()
                    .map(|(i, t)| {
                        deserialize::<FlowSpec>(
                            toml::Value::Table(t.clone()),
                            &key(&format!("flows[{i}]")),
                        )
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                (flows, key("flows"))
            }
            // Its own flent test replaces inherited flows.
            None if gives_test => (Vec::new(), String::new()),
            None => (self.flows.clone(), "flows".to_string()),
        };
        s.flows = flows;
        let in_entry = |err| self.flow_error(err, k, &names[k]);
        let mut crossings = Vec::new();
        for (i, f) in s.flows.iter_mut().enumerate() {
            let mut far = None;
            for (far_is_from, host) in [(true, &mut f.from), (false, &mut f.to)] {
                let end = if far_is_from { "from" } else { "to" };
                let key = format!("{flows_key}[{i}].{end}");
                match host_in(&key, host, k, names).map_err(in_entry)? {
                    HostIn::Own(h) => *host = h,
                    HostIn::Far { bss, host: h } if far.is_none() => {
                        far = Some(Crossing {
                            flow: i,
                            far_is_from,
                            key,
                            bss,
                            host: h,
                        })
                    }
                    HostIn::Far { .. } => {
                        return Err(in_entry(ScenarioError::new(
                            key,
                            format!(
                                "both ends are in other BSSs: a flow is listed in the BSS of \
                                 one of its ends (`{}`)",
                                names[k]
                            ),
                        )))
                    }
                }
            }
            let Some(c) = far else {
                continue;
            };
            if f.kind == super::FlowKind::Cbr {
                return Err(in_entry(ScenarioError::new(
                    c.key,
                    "a cbr flow runs between one BSS's AP and a station; between BSSs use \
                     tcp, ping or udp_ping",
                )));
            }
            let (own_end, own) = if c.far_is_from {
                ("to", &f.to)
            } else {
                ("from", &f.from)
            };
            if !own.starts_with("sta") {
                return Err(in_entry(ScenarioError::new(
                    format!("{flows_key}[{i}].{own_end}"),
                    format!(
                        "`{own}`: a flow to another BSS runs from or to a station of this \
                         one (`{}`), across both BSSs' air and wired links",
                        names[k]
                    ),
                )));
            }
            crossings.push(c);
        }
        Ok((s, crossings))
    }

    /// An error in BSS `k`'s (called `name`) flows as the user sees it: under the
    /// entry's key when the entry gives `[[bss.flows]]`, else under the top level's
    /// `[[flows]]` it inherits, said to be the entry's.
    fn flow_error(&self, err: ScenarioError, k: usize, name: &str) -> ScenarioError {
        if self.bss[k].flows.is_some() {
            err
        } else {
            attribute(err, k, name, &self.bss[k])
        }
    }

    /// Each crossing flow's far end as the simulator takes it: a station of another
    /// BSS, which must have it. `bsss` are every BSS resolved.
    fn remote_ends(
        &self,
        k: usize,
        crossings: &[Crossing],
        bsss: &[ResolvedBss],
    ) -> Result<Vec<txop_sim::RemoteEnd>, ScenarioError> {
        let in_entry = |err| self.flow_error(err, k, &bsss[k].name);
        crossings
            .iter()
            .map(|c| {
                let far = &bsss[c.bss];
                let stations = far.cfg.cell.stations.len() as u16;
                let host = Scenario::host(&c.key, &c.host, stations).map_err(|e| {
                    in_entry(ScenarioError::new(
                        e.key,
                        format!("in BSS `{}`: {}", far.name, e.message),
                    ))
                })?;
                let refuse = |why: String| Err(in_entry(ScenarioError::new(c.key.clone(), why)));
                match host {
                    txop_sim::traffic::Host::Station(_) => {}
                    txop_sim::traffic::Host::Server => {
                        return refuse(format!(
                            "`{}.server`: every BSS's wired link ends at one junction, where \
                             the server stands; name it `server`",
                            far.name
                        ))
                    }
                    txop_sim::traffic::Host::Ap => {
                        return refuse(format!(
                            "`{}.ap`: an AP's own host sends only over its air, not its wired \
                             link; end the flow at one of `{}`'s stations",
                            far.name, far.name
                        ))
                    }
                }
                Ok(txop_sim::RemoteEnd {
                    flow: c.flow,
                    bss: c.bss,
                    host,
                    name: format!("{}.{}", far.name, host.name()),
                })
            })
            .collect()
    }

    /// Every BSS's channel exists in the band (at the width), and two BSSs are on one
    /// channel or on channels that do not overlap: partly overlapping channels are not
    /// modelled.
    fn check_channels(&self, bsss: &[ResolvedBss]) -> Result<(), ScenarioError> {
        let mut spans: Vec<(u16, (u32, u32))> = Vec::with_capacity(bsss.len());
        for (k, b) in bsss.iter().enumerate() {
            let key = format!("bss[{k}].channel");
            let span = spectrum_mhz(
                self.phy.band,
                self.phy.standard,
                self.phy.width_mhz,
                b.channel,
            )
            .map_err(|e| {
                let key = if self.bss[k].channel.is_some() {
                    key.clone()
                } else {
                    "phy.width_mhz".to_string()
                };
                ScenarioError::new(key, e)
            })?;
            if let Some(j) = spans
                .iter()
                .position(|&(c, (lo, hi))| c != b.channel && lo < span.1 && span.0 < hi)
            {
                return Err(ScenarioError::new(
                    key,
                    format!(
                        "channel {} ({}–{} MHz) overlaps bss[{j}]'s channel {} ({}–{} MHz); \
                         BSSs share a channel or use channels that do not overlap (partly \
                         overlapping channels are not modelled)",
                        b.channel, span.0, span.1, spans[j].0, spans[j].1 .0, spans[j].1 .1
                    ),
                ));
            }
            spans.push((b.channel, span));
        }
        Ok(())
    }
}

/// Give every cell a space placing every node of every BSS on its channel — AP then
/// stations, BSS by BSS — with its own AP at `first_node`, within
/// [`limits::MAX_AIR_PAIRS`].
fn share_the_air(bsss: &mut [ResolvedBss]) -> Result<(), ScenarioError> {
    let groups = channel_groups(bsss);
    let pairs: u64 = groups
        .iter()
        .map(|g| {
            let nodes: u64 = g
                .iter()
                .map(|&b| bsss[b].cfg.cell.stations.len() as u64 + 1)
                .sum();
            g.len() as u64 * nodes * nodes
        })
        .sum();
    if pairs > limits::MAX_AIR_PAIRS {
        return Err(ScenarioError::new(
            "bss",
            format!(
                "the BSSs' cells would keep {pairs} received powers in all (each cell one per \
                 pair of nodes on its channel); at most {} (fewer stations or BSSs per channel)",
                limits::MAX_AIR_PAIRS
            ),
        ));
    }
    for group in groups {
        let mut all = Vec::new();
        let mut first = Vec::with_capacity(group.len());
        // Every cell of the channel follows every walker, renumbered as it joins.
        let mut walkers = Vec::new();
        for &b in &group {
            first.push(all.len());
            if let Some(space) = &bsss[b].cfg.cell.space {
                walkers.extend(space.walkers.iter().map(|w| Walker {
                    node: all.len() + w.node,
                    mobility: w.mobility.clone(),
                }));
            }
            all.extend_from_slice(positions(&bsss[b].cfg));
        }
        for (&b, &f) in group.iter().zip(&first) {
            let space = bsss[b]
                .cfg
                .cell
                .space
                .as_mut()
                .expect("every BSS is in space");
            if let Placement::Positions { positions, .. } = &mut space.placement {
                *positions = all.clone();
            }
            space.first_node = f;
            space.walkers = walkers.clone();
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn five_ghz_channels_occupy_their_annex_e_blocks() {
        let s = |w, ch| spectrum_mhz(Band::Ghz5, Standard::N, w, ch);
        assert_eq!(s(20, 36), Ok((5170, 5190)));
        assert_eq!(s(40, 40), Ok((5170, 5210)));
        assert_eq!(s(80, 48), Ok((5170, 5250)));
        assert_eq!(s(80, 161), Ok((5735, 5815)));
        assert!(s(40, 165).unwrap_err().contains("in no 40 MHz channel"));
        assert!(s(20, 38).unwrap_err().contains("38 is not a 5 GHz channel"));
        let b = spectrum_mhz(Band::Ghz2_4, Standard::B, 20, 6).unwrap();
        assert_eq!(b, (2426, 2448));
        assert!(spectrum_mhz(Band::Ghz2_4, Standard::N, 20, 14).is_err());
    }
}
