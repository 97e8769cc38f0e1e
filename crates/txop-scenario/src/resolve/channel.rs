//! Channel resolution: path loss, positions, movement, fading and SNR traces, into each
//! station's channel.

use crate::error::ScenarioError;
use crate::inherit::{FadingSpec, Link};
use crate::limits;
use crate::resolve::choose_in;
use crate::schema::{DirectionSpec, Scenario, StationKeys};
use std::collections::BTreeMap;
use txop_core::phy::fading::{Fading, K_DB_RANGE};
use txop_core::phy::link_channel::{LinkChannel, MeanSnr, StationChannel};
use txop_core::phy::mobility::{Mobility, Position, Waypoint};
use txop_core::phy::path_loss::{self, LogDistance};
use txop_core::phy::snr_trace::{parse_trace, Interpolation, SnrTrace, StationPoints};
use txop_core::phy::{Band, ChannelWidth};
use txop_core::Nanos;

/// The coherence time of a channel whose scatterers move at walking speed, 1 m/s:
/// `0.423 / f_D` with the maximum Doppler shift `f_D = v·f/c` (Clarke's model;
/// Rappaport, *Wireless Communications*, eq. 5.40c): 24.4 ms at 5.2 GHz, 52.0 ms at
/// 2.437 GHz. The default of `coherence_ms`.
pub(crate) fn walking_coherence_ms(band: Band) -> f64 {
    let walking_mps = 1.0;
    let doppler_hz = walking_mps * path_loss::centre_frequency_hz(band) / 299_792_458.0;
    1000.0 * 0.423 / doppler_hz
}

/// A trace file read and parsed once for all the stations that name it.
pub(crate) type ParsedTrace = std::rc::Rc<BTreeMap<u16, StationPoints>>;

/// The trace files read so far while resolving, by path.
#[derive(Default)]
pub(crate) struct TraceFiles {
    pub(crate) files: BTreeMap<std::path::PathBuf, ParsedTrace>,
    /// The key that first named each file, and the file as shown in messages.
    pub(crate) named_by: BTreeMap<std::path::PathBuf, (String, String)>,
}

impl TraceFiles {
    /// Refuse a file with rows for a station the scenario does not have (`stations`
    /// stations): such rows were ignored, so a trace written for another scenario, or
    /// with a station number wrong, replayed silently without them (issue 25). The
    /// error names the key, the file, the line of the station's first row and the
    /// station.
    pub(crate) fn refuse_absent_stations(&self, stations: usize) -> Result<(), ScenarioError> {
        for (path, parsed) in &self.files {
            let Some((sta, points)) = parsed.iter().find(|(&sta, _)| usize::from(sta) > stations)
            else {
                continue;
            };
            let (key, shown) = &self.named_by[path];
            return Err(ScenarioError::new(
                key,
                format!(
                    "{shown}:{}: station: {sta} is not a station of this scenario (it has \
                     {stations}); each row is for one of its stations",
                    points.first_line
                ),
            ));
        }
        Ok(())
    }
}

/// The text of trace file `path` (shown as `shown`): a regular file of at most
/// [`limits::MAX_TRACE_FILE_BYTES`], in UTF-8.
pub(crate) fn read_trace_file(path: &std::path::Path, shown: &str) -> Result<String, String> {
    use std::io::Read;
    let meta = std::fs::metadata(path).map_err(|e| format!("{shown}: cannot read: {e}"))?;
    if !meta.is_file() {
        return Err(format!("{shown}: not a regular file"));
    }
    let cap = limits::MAX_TRACE_FILE_BYTES;
    let too_big = || format!("{shown}: larger than {} MiB", cap >> 20);
    if meta.len() > cap {
        return Err(too_big());
    }
    let file = std::fs::File::open(path).map_err(|e| format!("{shown}: cannot read: {e}"))?;
    let mut bytes = Vec::new();
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{shown}: cannot read: {e}"))?;
    if bytes.len() as u64 > cap {
        return Err(too_big());
    }
    String::from_utf8(bytes).map_err(|_| format!("{shown}: not UTF-8 text"))
}

/// Where a station's mean SNR comes from, before it is split into directions.
#[derive(Clone, Debug)]
pub(crate) enum StationMean {
    /// A fixed SNR (`snr_db`, or `distance_m` standing still).
    Fixed(f64),
    /// The station moves (or stands at `position_m`): the SNR follows the distance.
    Geometry(Mobility),
    /// Replayed from a trace (with the file as the user named it).
    Trace(SnrTrace, String),
}

/// A station's resolved channel: the [`StationConfig::channel`], the SNR its rate is
/// chosen for and its error model holds (`None`: no SNR), and what `txop show` says.
pub(crate) struct ResolvedChannel {
    pub(crate) channel: Option<StationChannel>,
    pub(crate) snr_db: Option<f64>,
    pub(crate) summary: String,
}

/// `[x, y]` as "(x, y) m".
pub(crate) fn xy(p: Position) -> String {
    format!("({}, {}) m", p.x_m, p.y_m)
}

/// What `txop show` says about a fading model.
pub(crate) fn describe_fading(f: &Fading) -> String {
    let ms = |c: Nanos| format!("{} ms", (c.as_ns() as f64 / 1e6 * 1000.0).round() / 1000.0);
    match *f {
        Fading::None => "no fading".into(),
        Fading::Rayleigh { coherence } => format!("rayleigh fading, coherence {}", ms(coherence)),
        Fading::Rician { k_db, coherence } => {
            format!("rician fading K {k_db} dB, coherence {}", ms(coherence))
        }
    }
}

/// What `txop show` says about a station's movement.
pub(crate) fn describe_mobility(m: &Mobility) -> String {
    match m {
        Mobility::Still(p) => format!("at {}", xy(*p)),
        Mobility::ConstantVelocity {
            start,
            velocity_mps: (vx, vy),
        } => format!("from {} at ({vx}, {vy}) m/s", xy(*start)),
        Mobility::Waypoints(w) => {
            let (first, last) = (&w[0], &w[w.len() - 1]);
            format!(
                "{} waypoints from {} at {} s to {} at {} s",
                w.len(),
                xy(first.position),
                first.at.as_secs_f64(),
                xy(last.position),
                last.at.as_secs_f64()
            )
        }
    }
}

/// The stations' resolved channels as TOML comments, one line per run of stations
/// that read the same.
pub(crate) fn channel_summary(per_station: &[String]) -> String {
    let mut out =
        String::from("# Resolved channels and rate control (for reading; ignored as input):\n");
    let mut i = 0;
    while i < per_station.len() {
        let run = per_station[i..]
            .iter()
            .take_while(|s| **s == per_station[i])
            .count();
        let who = if run == 1 {
            format!("station {}", i + 1)
        } else {
            format!("stations {}–{}", i + 1, i + run)
        };
        out.push_str(&format!("# {who}: {}\n", per_station[i]));
        i += run;
    }
    out
}

impl Scenario {
    /// The link budget of `distance_m`, `position_m` and movement: `phy.tx_power_dbm`
    /// and `phy.path_loss_exponent` checked.
    pub(crate) fn path_loss(&self, width: ChannelWidth) -> Result<LogDistance, ScenarioError> {
        let (p, n) = (self.phy.tx_power_dbm, self.phy.path_loss_exponent);
        if !(p.is_finite() && (-20.0..=40.0).contains(&p)) {
            return Err(ScenarioError::new(
                "phy.tx_power_dbm",
                "must be −20 to 40 dBm",
            ));
        }
        if !(n.is_finite() && (1.5..=6.0).contains(&n)) {
            return Err(ScenarioError::new(
                "phy.path_loss_exponent",
                "must be 1.5 to 6",
            ));
        }
        Ok(LogDistance {
            tx_power_dbm: p,
            exponent: n,
            band: self.phy.band,
            width,
        })
    }

    /// A point of the floor plan given as `key = [x, y]`, within
    /// [`limits::MAX_COORDINATE_M`].
    pub(crate) fn position(key: &str, xy: [f64; 2]) -> Result<Position, ScenarioError> {
        let max = limits::MAX_COORDINATE_M;
        if xy.iter().all(|c| c.is_finite() && c.abs() <= max) {
            Ok(Position::new(xy[0], xy[1]))
        } else {
            Err(ScenarioError::new(
                key,
                format!("coordinates must be −{max} to {max} m"),
            ))
        }
    }

    /// Where the AP stands (`phy.ap_position_m`, default the origin).
    pub(crate) fn ap_position(&self) -> Result<Position, ScenarioError> {
        self.phy.ap_position_m.map_or(Ok(Position::default()), |p| {
            Self::position("phy.ap_position_m", p)
        })
    }

    /// The SNR trace `name` of station `sta` (the key `key` names it), read relative to
    /// the scenario's directory and parsed once per file.
    pub(crate) fn snr_trace(
        &self,
        key: &str,
        name: &str,
        interpolation: Option<&str>,
        sta: u16,
        files: &mut TraceFiles,
    ) -> Result<(SnrTrace, String), ScenarioError> {
        let interpolation = choose_in(
            &format!("{key}_interpolation"),
            interpolation.unwrap_or("linear"),
            &Interpolation::NAMES,
        )?;
        let path = match &self.base_dir {
            Some(dir) => dir.join(name),
            None => std::path::PathBuf::from(name),
        };
        let shown = path.display().to_string();
        let parsed = match files.files.get(&path) {
            Some(p) => p.clone(),
            None => {
                let text =
                    read_trace_file(&path, &shown).map_err(|e| ScenarioError::new(key, e))?;
                let parsed = std::rc::Rc::new(
                    parse_trace(&shown, &text)
                        .map_err(|e| ScenarioError::new(key, e.to_string()))?,
                );
                files
                    .named_by
                    .insert(path.clone(), (key.to_string(), shown.clone()));
                files.files.insert(path, parsed.clone());
                parsed
            }
        };
        let Some(points) = parsed.get(&sta) else {
            return Err(ScenarioError::new(
                key,
                format!("{shown} has no points for station {sta}"),
            ));
        };
        let trace = SnrTrace::new(points.points.clone(), interpolation)
            .map_err(|e| ScenarioError::new(key, format!("{shown}: {e}")))?;
        Ok((trace, shown))
    }

    /// The fading of the keys in `f`, named under `key` (`stations.list[2]`,
    /// `stations.downlink`).
    pub(crate) fn fading(&self, key: &str, f: &FadingSpec) -> Result<Fading, ScenarioError> {
        #[derive(Clone, Copy, PartialEq)]
        enum Kind {
            None,
            Rayleigh,
            Rician,
        }
        let kind = choose_in(
            &format!("{key}.fading"),
            f.fading.as_deref().unwrap_or("none"),
            &[
                ("none", Kind::None),
                ("rayleigh", Kind::Rayleigh),
                ("rician", Kind::Rician),
            ],
        )?;
        if kind != Kind::Rician && f.fading_k_db.is_some() {
            return Err(ScenarioError::new(
                format!("{key}.fading_k_db"),
                "applies with fading = \"rician\" only",
            ));
        }
        if kind == Kind::None {
            if f.coherence_ms.is_some() {
                return Err(ScenarioError::new(
                    format!("{key}.coherence_ms"),
                    "applies with fading = \"rayleigh\" or \"rician\" only",
                ));
            }
            return Ok(Fading::None);
        }
        let (lo, hi) = limits::COHERENCE_MS;
        let coherence_ms = f
            .coherence_ms
            .unwrap_or_else(|| walking_coherence_ms(self.phy.band));
        if !(coherence_ms.is_finite() && (lo..=hi).contains(&coherence_ms)) {
            return Err(ScenarioError::new(
                format!("{key}.coherence_ms"),
                format!("must be {lo} to {hi} ms"),
            ));
        }
        let coherence = Nanos::from_secs_f64(coherence_ms / 1000.0);
        let fading = match kind {
            Kind::Rayleigh => Fading::Rayleigh { coherence },
            _ => {
                let Some(k_db) = f.fading_k_db else {
                    return Err(ScenarioError::new(
                        format!("{key}.fading_k_db"),
                        "rician fading needs its K factor (e.g. fading_k_db = 6)",
                    ));
                };
                Fading::Rician { k_db, coherence }
            }
        };
        fading.validate().map_err(|e| {
            let (lo, hi) = K_DB_RANGE;
            ScenarioError::new(
                format!("{key}.fading_k_db"),
                if e.contains("K factor") {
                    format!("must be {lo} to {hi} dB")
                } else {
                    e
                },
            )
        })?;
        Ok(fading)
    }

    /// A station's mean SNR from its own keys: at most one of `snr_db`, `distance_m`,
    /// `position_m`, `waypoints`, `snr_trace` and `loss`; `velocity_mps` with a
    /// position. `None`: no SNR (lossless, or `loss`).
    pub(crate) fn station_mean(
        &self,
        key: &str,
        sta: u16,
        link: &Link,
        width: ChannelWidth,
        files: &mut TraceFiles,
    ) -> Result<Option<StationMean>, ScenarioError> {
        if link.distance_m.is_some() && (link.snr_db.is_some() || link.loss.is_some()) {
            return Err(ScenarioError::new(
                format!("{key}.distance_m"),
                "give distance_m, snr_db or loss, only one",
            ));
        }
        let given: Vec<&str> = [
            ("snr_db", link.snr_db.is_some()),
            ("distance_m", link.distance_m.is_some()),
            ("position_m", link.position_m.is_some()),
            ("waypoints", link.waypoints.is_some()),
            ("snr_trace", link.snr_trace.is_some()),
            ("loss", link.loss.is_some()),
        ]
        .into_iter()
        .filter_map(|(k, on)| on.then_some(k))
        .collect();
        if let [first, second, ..] = given[..] {
            return Err(ScenarioError::new(
                format!("{key}.{second}"),
                format!(
                    "{first} and {second} both given; give one of snr_db, distance_m, \
                     position_m, waypoints, snr_trace or loss"
                ),
            ));
        }
        if link.velocity_mps.is_some() && link.position_m.is_none() && link.distance_m.is_none() {
            return Err(ScenarioError::new(
                format!("{key}.velocity_mps"),
                "needs a starting point: give position_m (or distance_m)",
            ));
        }
        if link.snr_trace_interpolation.is_some() && link.snr_trace.is_none() {
            return Err(ScenarioError::new(
                format!("{key}.snr_trace_interpolation"),
                "applies with snr_trace only",
            ));
        }
        let ap = self.ap_position()?;
        let start = match (link.position_m, link.distance_m) {
            (Some(p), _) => Some(Self::position(&format!("{key}.position_m"), p)?),
            (None, Some(d)) => {
                // Checks the distance and the link budget as before.
                self.snr_at(&format!("{key}.distance_m"), d, width)?;
                Some(Position::new(ap.x_m + d, ap.y_m))
            }
            (None, None) => None,
        };
        if let Some(v) = link.velocity_mps {
            let vkey = format!("{key}.velocity_mps");
            let speed = v[0].hypot(v[1]);
            if !(speed.is_finite() && speed <= limits::MAX_SPEED_MPS) {
                return Err(ScenarioError::new(
                    vkey,
                    format!(
                        "the speed must be at most {} m/s (360 km/h)",
                        limits::MAX_SPEED_MPS
                    ),
                ));
            }
            self.path_loss(width)?;
            return Ok(Some(StationMean::Geometry(Mobility::ConstantVelocity {
                start: start.unwrap_or_default(),
                velocity_mps: (v[0], v[1]),
            })));
        }
        if let Some(snr_db) = link.snr_db {
            return Ok(Some(StationMean::Fixed(snr_db)));
        }
        if let Some(d) = link.distance_m {
            return Ok(Some(StationMean::Fixed(self.snr_at(
                &format!("{key}.distance_m"),
                d,
                width,
            )?)));
        }
        if let Some(p) = start {
            self.path_loss(width)?;
            return Ok(Some(StationMean::Geometry(Mobility::Still(p))));
        }
        if let Some(points) = &link.waypoints {
            let wkey = format!("{key}.waypoints");
            let max_t = limits::MAX_DURATION_S;
            let mut w = Vec::with_capacity(points.len());
            for (i, &[t_s, x, y]) in points.iter().enumerate() {
                if !(t_s.is_finite() && (0.0..=max_t).contains(&t_s)) {
                    return Err(ScenarioError::new(
                        &wkey,
                        format!("waypoint {i}: the time must be 0 to {max_t:e} s"),
                    ));
                }
                let position = Self::position(&wkey, [x, y]).map_err(|e| {
                    ScenarioError::new(&wkey, format!("waypoint {i}: {}", e.message))
                })?;
                w.push(Waypoint {
                    at: Nanos::from_secs_f64(t_s),
                    position,
                });
            }
            let m = Mobility::Waypoints(w);
            m.validate().map_err(|e| ScenarioError::new(&wkey, e))?;
            self.path_loss(width)?;
            return Ok(Some(StationMean::Geometry(m)));
        }
        if let Some(name) = &link.snr_trace {
            let (trace, shown) = self.snr_trace(
                &format!("{key}.snr_trace"),
                name,
                link.snr_trace_interpolation.as_deref(),
                sta,
                files,
            )?;
            return Ok(Some(StationMean::Trace(trace, shown)));
        }
        Ok(None)
    }

    /// Station `sta`'s channel: its mean SNR and fading, and each direction's overrides.
    /// A channel that never changes and is the same both ways is no channel at all
    /// (`StationConfig::channel` = `None`, its SNR in the error model as before).
    pub(crate) fn station_channel(
        &self,
        key: &str,
        sta: u16,
        link: &Link,
        width: ChannelWidth,
        files: &mut TraceFiles,
    ) -> Result<ResolvedChannel, ScenarioError> {
        let mean = self.station_mean(link.owner(key, "channel"), sta, link, width, files)?;
        let station_fading = self.fading(link.owner(key, "fading"), &link.fading_spec())?;
        let ap = self.ap_position()?;
        let path_loss = if matches!(mean, Some(StationMean::Geometry(_))) {
            Some(self.path_loss(width)?)
        } else {
            None
        };
        // One direction: its mean (own or the station's), its fading, and a summary.
        let direction = |name: &str,
                         spec: Option<&DirectionSpec>,
                         down: bool,
                         files: &mut TraceFiles|
         -> Result<Option<(LinkChannel, String)>, ScenarioError> {
            let dkey = format!("{}.{name}", link.owner(key, name));
            let own = spec.cloned().unwrap_or_default();
            if own.snr_db.is_some() && own.snr_trace.is_some() {
                return Err(ScenarioError::new(
                    format!("{dkey}.snr_trace"),
                    "snr_db and snr_trace both given; give one",
                ));
            }
            if own.snr_trace_interpolation.is_some() && own.snr_trace.is_none() {
                return Err(ScenarioError::new(
                    format!("{dkey}.snr_trace_interpolation"),
                    "applies with snr_trace only",
                ));
            }
            let own_fading = own.fading();
            let fading = if own_fading.is_given() {
                self.fading(&dkey, &own_fading.over(&link.fading_spec()))?
            } else {
                station_fading
            };
            let own_mean = match (own.snr_db, &own.snr_trace) {
                (Some(snr_db), _) => Some(StationMean::Fixed(snr_db)),
                (None, Some(name)) => {
                    let (trace, shown) = self.snr_trace(
                        &format!("{dkey}.snr_trace"),
                        name,
                        own.snr_trace_interpolation.as_deref(),
                        sta,
                        files,
                    )?;
                    Some(StationMean::Trace(trace, shown))
                }
                (None, None) => None,
            };
            if own_mean.is_some() && link.loss.is_some() {
                return Err(ScenarioError::new(
                    format!(
                        "{dkey}.{}",
                        if own.snr_db.is_some() {
                            "snr_db"
                        } else {
                            "snr_trace"
                        }
                    ),
                    "the station has a fixed loss (loss) both ways; give it an SNR instead",
                ));
            }
            let Some(m) = own_mean.as_ref().or(mean.as_ref()) else {
                if fading != Fading::None {
                    let fkey = if own_fading.is_given() {
                        dkey
                    } else {
                        link.owner(key, "fading").to_string()
                    };
                    return Err(ScenarioError::new(
                        format!("{fkey}.fading"),
                        "fades an SNR: give snr_db, distance_m, position_m, waypoints or \
                         snr_trace (not loss)",
                    ));
                }
                return Ok(None);
            };
            let (mean_snr, what) = match m {
                StationMean::Fixed(snr_db) => (
                    MeanSnr::Fixed { snr_db: *snr_db },
                    if link.snr_from_matrix {
                        format!("SNR {snr_db:.1} dB from space.path_loss_db")
                    } else if (snr_db * 100.0).fract() == 0.0 {
                        format!("SNR {snr_db} dB")
                    } else {
                        // One worked out from a place, not written: rounded.
                        format!("SNR {snr_db:.2} dB")
                    },
                ),
                StationMean::Geometry(mobility) => {
                    let ap = Mobility::Still(ap);
                    let (tx, rx) = if down {
                        (ap, mobility.clone())
                    } else {
                        (mobility.clone(), ap)
                    };
                    let mean = MeanSnr::Geometry {
                        tx,
                        rx,
                        path_loss: path_loss.expect("a geometry has its link budget"),
                    };
                    let at0 = mean.snr_db(Nanos::ZERO);
                    (mean, format!("log-distance SNR {at0:.1} dB at 0 s"))
                }
                StationMean::Trace(trace, shown) => {
                    let p = trace.points();
                    let what = format!(
                        "SNR from {shown} ({} point{}, {} to {} s, {})",
                        p.len(),
                        if p.len() == 1 { "" } else { "s" },
                        p[0].at.as_secs_f64(),
                        p[p.len() - 1].at.as_secs_f64(),
                        trace.interpolation().name()
                    );
                    (MeanSnr::Trace(trace.clone()), what)
                }
            };
            let ch = LinkChannel::new(mean_snr, fading, self.seed, sta as u64);
            let summary = format!("{what}, {}", describe_fading(&fading));
            Ok(Some((ch, summary)))
        };
        let down = direction("downlink", link.downlink.as_ref(), true, files)?;
        let up = direction("uplink", link.uplink.as_ref(), false, files)?;
        let movement = match &mean {
            Some(StationMean::Geometry(m)) => {
                format!("{}, AP at {}; ", describe_mobility(m), xy(ap))
            }
            _ => String::new(),
        };
        let (down, up) = match (down, up) {
            (None, None) => {
                let what = match link.loss {
                    Some(p) => format!("fixed loss {p}"),
                    None => "no SNR (lossless)".into(),
                };
                return Ok(ResolvedChannel {
                    channel: None,
                    snr_db: None,
                    summary: what,
                });
            }
            (Some(d), Some(u)) => (d, u),
            (Some(_), None) | (None, Some(_)) => {
                let (has, lacks) = if link.uplink.is_none() {
                    ("downlink", "uplink")
                } else {
                    ("uplink", "downlink")
                };
                return Err(ScenarioError::new(
                    format!("{key}.{has}"),
                    format!(
                        "gives the {has} an SNR but the {lacks} has none: give {lacks}.snr_db \
                         or the station's snr_db, distance_m, position_m, waypoints or snr_trace"
                    ),
                ));
            }
        };
        let ((down, down_text), (up, up_text)) = (down, up);
        let snr0 = down.mean_snr_db(Nanos::ZERO);
        let directions = if down_text == up_text {
            format!("both ways {down_text}")
        } else {
            format!("downlink {down_text}; uplink {up_text}")
        };
        let summary = format!("{movement}{directions}");
        let unchanging = down.is_static() && up.is_static() && snr0 == up.mean_snr_db(Nanos::ZERO);
        Ok(ResolvedChannel {
            channel: (!unchanging).then_some(StationChannel { down, up }),
            snr_db: Some(snr0),
            summary,
        })
    }

    /// Whether the scenario uses the channel keys of a changing channel or rate
    /// control (then `txop show` prints each station's resolved channel).
    pub(crate) fn uses_channel_keys(&self) -> bool {
        // The keys of a changing channel or rate control, in `[stations]` or an entry.
        const CHANGING: &[&str] = &[
            "position_m",
            "velocity_mps",
            "waypoints",
            "fading",
            "fading_k_db",
            "coherence_ms",
            "snr_trace",
            "snr_trace_interpolation",
            "downlink",
            "uplink",
            "rate_control",
        ];
        let uses = |k: StationKeys| k.given().iter().any(|g| CHANGING.contains(g));
        self.phy.ap_position_m.is_some()
            || uses(self.stations.keys())
            || self.stations.list.iter().any(|e| uses(e.keys()))
    }
}
