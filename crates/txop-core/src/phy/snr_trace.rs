//! SNR traces: a link's SNR over time, measured or made up, replayed.
//!
//! A trace file is CSV text with one point per line, `time_s, station, snr_db`: at
//! `time_s` seconds the SNR of station `station`'s link (numbered from 1, as in the
//! results) is `snr_db`, within [`MIN_SNR_DB`]..=[`MAX_SNR_DB`]. Lines may carry `#`
//! comments and be blank; a first line that names the columns (`time_s,station,snr_db`,
//! in any order) sets their order. A UTF-8 byte-order mark before it (as spreadsheets
//! write CSV) is skipped. Each station's times must not go backwards; two points at one
//! time make a step there.
//!
//! Between points the SNR is interpolated linearly or held at the earlier point's value
//! (a step); before the first point and after the last it is held at that point's
//! value. This is how ns-3's trace-based models replay a channel (e.g. the
//! `TraceFadingLossModel` of LTE, which reads a pre-computed trace and holds each value
//! for one sample), with linear interpolation added for sparse traces such as a walk
//! measured once a second.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::Nanos;

/// The latest time a trace point may have, s: about 31.7 years (far beyond any run,
/// well inside [`Nanos`]).
pub const MAX_TIME_S: f64 = 1e9;

/// The highest SNR a trace point may have, dB. The strongest signal 802.11 requires a
/// receiver to decode (its "receiver maximum input level": −4 dBm for DSSS, −20 dBm
/// (2.4 GHz) and −30 dBm (5 GHz) for OFDM, at the antenna connector) over the thermal
/// noise of a 20 MHz channel at 290 K with a noiseless receiver (kTB = −174 dBm/Hz +
/// 73 dB = −101 dBm) is 97 dB; stronger signals saturate the front end, so no measured
/// SNR is much above 100 dB. 140 dB leaves a wide margin for made-up traces and
/// refuses what is not an SNR (1e308 dB, accepted before: issue 25).
pub const MAX_SNR_DB: f64 = 140.0;

/// The lowest SNR a trace point may have, dB. No 802.11 frame is received far below
/// 0 dB (DSSS 1 Mbit/s, the most robust rate, has 10 % PER at about −1 dB after its
/// 10.4 dB Barker spreading gain: `channel::snr_threshold_db`), so every value below
/// about −10 dB means the same lost link; −100 dB leaves room for a trace that marks a lost link with a low sentinel,
/// and refuses what is no SNR (a dBm level such as −120, or −1e308).
pub const MIN_SNR_DB: f64 = -100.0;

/// How the SNR between two points of a trace is found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Interpolation {
    /// On the straight line between the points before and after.
    #[default]
    Linear,
    /// The value of the point before, until the next point.
    Step,
}

impl Interpolation {
    /// Every kind, by the name a scenario gives it.
    pub const NAMES: [(&'static str, Interpolation); 2] = [
        ("linear", Interpolation::Linear),
        ("step", Interpolation::Step),
    ];

    /// "linear" or "step".
    pub fn name(self) -> &'static str {
        match self {
            Interpolation::Linear => "linear",
            Interpolation::Step => "step",
        }
    }
}

/// One point of a trace: the SNR at a time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TracePoint {
    /// When.
    pub at: Nanos,
    /// The SNR then, dB.
    pub snr_db: f64,
}

/// One link's SNR over time, replayed from a trace.
#[derive(Clone, Debug, PartialEq)]
pub struct SnrTrace {
    /// The points, in time order (never empty); shared, so copies of a long trace
    /// (both directions of a link) cost nothing.
    points: Arc<[TracePoint]>,
    interpolation: Interpolation,
}

impl SnrTrace {
    /// A trace of `points` (in time order, not going backwards, at least one, each
    /// SNR within [`MIN_SNR_DB`]..=[`MAX_SNR_DB`]) interpolated by `interpolation`;
    /// the error says what is wrong.
    pub fn new(points: Vec<TracePoint>, interpolation: Interpolation) -> Result<SnrTrace, String> {
        if points.is_empty() {
            return Err("a trace needs at least one point".into());
        }
        for (i, p) in points.iter().enumerate() {
            if !(MIN_SNR_DB..=MAX_SNR_DB).contains(&p.snr_db) {
                return Err(format!(
                    "point {i}: the SNR must be {MIN_SNR_DB} to {MAX_SNR_DB} dB, got {}",
                    p.snr_db
                ));
            }
            if i > 0 && p.at < points[i - 1].at {
                return Err(format!("point {i}: time goes backwards"));
            }
        }
        Ok(SnrTrace {
            points: points.into(),
            interpolation,
        })
    }

    /// The points, in time order.
    pub fn points(&self) -> &[TracePoint] {
        &self.points
    }

    /// How values between points are found.
    pub fn interpolation(&self) -> Interpolation {
        self.interpolation
    }

    /// The SNR (dB) at `t`: interpolated between the points around it, held before the
    /// first and after the last. At a time with several points, the last of them.
    /// A binary search: O(log n), no allocation.
    pub fn snr_db(&self, t: Nanos) -> f64 {
        let p = &self.points;
        // The first point after t: the link is between it and the one before.
        let next = p.partition_point(|q| q.at <= t);
        if next == 0 {
            return p[0].snr_db;
        }
        let a = &p[next - 1];
        let Some(b) = p.get(next) else {
            return a.snr_db;
        };
        match self.interpolation {
            Interpolation::Step => a.snr_db,
            Interpolation::Linear => {
                // a.at <= t < b.at: the span is not empty.
                let f = (t - a.at).as_ns() as f64 / (b.at - a.at).as_ns() as f64;
                a.snr_db + f * (b.snr_db - a.snr_db)
            }
        }
    }

    /// Whether the SNR never changes (one point, or all points equal).
    pub fn is_constant(&self) -> bool {
        self.points.windows(2).all(|w| w[0].snr_db == w[1].snr_db)
    }
}

/// What is wrong with a trace file, and where: `file:line:column: column name: what`.
/// Lines and columns count from 1; the column is the character at which the offending
/// field starts (0 when the problem is the file as a whole, 0 and 0 when no line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError {
    /// The file, as the user named it.
    pub file: String,
    /// The line, from 1 (0: the file as a whole).
    pub line: usize,
    /// The character the field starts at, from 1 (0: the line as a whole).
    pub column: usize,
    /// What is wrong, starting with the column's name where one is concerned.
    pub message: String,
}

impl std::fmt::Display for TraceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.line, self.column) {
            (0, _) => write!(f, "{}: {}", self.file, self.message),
            (l, 0) => write!(f, "{}:{l}: {}", self.file, self.message),
            (l, c) => write!(f, "{}:{l}:{c}: {}", self.file, self.message),
        }
    }
}

/// The points of one station in a trace file, with the line of its first point.
#[derive(Clone, Debug, PartialEq)]
pub struct StationPoints {
    /// The line of the station's first point (for messages).
    pub first_line: usize,
    /// Its points in file order (times never going backwards).
    pub points: Vec<TracePoint>,
}

/// The columns of a trace, in their default order.
const COLUMNS: [&str; 3] = ["time_s", "station", "snr_db"];

/// Parse a trace file's `text` (named `file` in errors) into each station's points,
/// by station number. Errors name the file, the line and the column.
pub fn parse_trace(file: &str, text: &str) -> Result<BTreeMap<u16, StationPoints>, TraceError> {
    let error = |line: usize, column: usize, message: String| TraceError {
        file: file.to_string(),
        line,
        column,
        message,
    };
    // Which field holds time_s, station and snr_db.
    let mut order: [usize; 3] = [0, 1, 2];
    let mut seen_data_or_header = false;
    let mut out: BTreeMap<u16, StationPoints> = BTreeMap::new();
    // A byte-order mark (U+FEFF, as spreadsheets begin a CSV file) is not text.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let content = raw.split('#').next().unwrap_or_default();
        if content.trim().is_empty() {
            continue;
        }
        // Each field with the (1-based) character column it starts at.
        let mut fields: Vec<(usize, &str)> = Vec::with_capacity(3);
        let mut start = 0;
        for part in content.split(',') {
            let lead = part.len() - part.trim_start().len();
            let column = content[..start + lead].chars().count() + 1;
            fields.push((column, part.trim()));
            start += part.len() + 1;
        }
        let first_row = !seen_data_or_header;
        seen_data_or_header = true;
        if first_row && fields.iter().any(|(_, f)| COLUMNS.contains(f)) {
            order = header_order(&fields).map_err(|(c, m)| error(line, c, m))?;
            continue;
        }
        if fields.len() != 3 {
            let column = fields.get(3).map_or(0, |(c, _)| *c);
            return Err(error(
                line,
                column,
                format!(
                    "expected 3 fields ({}), got {}",
                    order_names(order),
                    fields.len()
                ),
            ));
        }
        let (t_col, t_text) = fields[order[0]];
        let (s_col, s_text) = fields[order[1]];
        let (v_col, v_text) = fields[order[2]];
        let time_s = number(t_text).ok_or_else(|| {
            error(
                line,
                t_col,
                format!("time_s: expected a number of seconds, got \"{t_text}\""),
            )
        })?;
        if !(0.0..=MAX_TIME_S).contains(&time_s) {
            return Err(error(
                line,
                t_col,
                format!("time_s: must be 0 to {MAX_TIME_S:e} s, got {t_text}"),
            ));
        }
        let station = s_text
            .parse::<u16>()
            .ok()
            .filter(|&s| s >= 1)
            .ok_or_else(|| {
                error(
                    line,
                    s_col,
                    format!("station: expected a station number 1 to 65535, got \"{s_text}\""),
                )
            })?;
        let snr_db = number(v_text).ok_or_else(|| {
            error(
                line,
                v_col,
                format!("snr_db: expected a number, got \"{v_text}\""),
            )
        })?;
        if !(MIN_SNR_DB..=MAX_SNR_DB).contains(&snr_db) {
            return Err(error(
                line,
                v_col,
                format!("snr_db: must be {MIN_SNR_DB} to {MAX_SNR_DB} dB, got {v_text}"),
            ));
        }
        let at = Nanos::from_secs_f64(time_s);
        let entry = out.entry(station).or_insert_with(|| StationPoints {
            first_line: line,
            points: Vec::new(),
        });
        if let Some(prev) = entry.points.last() {
            if at < prev.at {
                return Err(error(
                    line,
                    t_col,
                    format!(
                        "time_s: {t_text} s is before station {station}'s previous point \
                         at {} s; times must not go backwards",
                        prev.at.as_secs_f64()
                    ),
                ));
            }
        }
        entry.points.push(TracePoint { at, snr_db });
    }
    if out.is_empty() {
        return Err(error(
            0,
            0,
            "no points (expected lines of time_s, station, snr_db)".into(),
        ));
    }
    Ok(out)
}

/// A finite number, or `None`.
fn number(text: &str) -> Option<f64> {
    text.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// The field each of [`COLUMNS`] is in, from a header line; or the column and message
/// of what is wrong with it.
fn header_order(fields: &[(usize, &str)]) -> Result<[usize; 3], (usize, String)> {
    let mut order = [usize::MAX; 3];
    for (i, &(column, name)) in fields.iter().enumerate() {
        let Some(k) = COLUMNS.iter().position(|c| *c == name) else {
            return Err((
                column,
                format!(
                    "header: unknown column \"{name}\"; expected {}",
                    COLUMNS.join(", ")
                ),
            ));
        };
        if order[k] != usize::MAX {
            return Err((column, format!("header: column {name} is named twice")));
        }
        order[k] = i;
    }
    if let Some(k) = order.iter().position(|&o| o == usize::MAX) {
        return Err((0, format!("header: no {} column", COLUMNS[k])));
    }
    Ok(order)
}

/// The column names in the file's order.
fn order_names(order: [usize; 3]) -> String {
    let mut names = [""; 3];
    for (k, &i) in order.iter().enumerate() {
        names[i] = COLUMNS[k];
    }
    names.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: f64) -> Nanos {
        Nanos::from_secs_f64(s)
    }

    fn err(text: &str) -> String {
        parse_trace("trace.csv", text).unwrap_err().to_string()
    }

    #[test]
    fn parses_stations_comments_and_a_header() {
        let text = "# a walk\ntime_s, station, snr_db\n0, 1, 30\n0.5,2,10 # far\n\n1, 1, 20\n";
        let t = parse_trace("trace.csv", text).unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t[&1].first_line, 3);
        assert_eq!(
            t[&1].points,
            vec![
                TracePoint {
                    at: Nanos::ZERO,
                    snr_db: 30.0
                },
                TracePoint {
                    at: at(1.0),
                    snr_db: 20.0
                }
            ]
        );
        assert_eq!(t[&2].points.len(), 1);
        // A header in another order reorders the columns; no header: the default order.
        let t = parse_trace("t", "snr_db,time_s,station\n25,2,3\n").unwrap();
        assert_eq!(
            t[&3].points[0],
            TracePoint {
                at: at(2.0),
                snr_db: 25.0
            }
        );
        let t = parse_trace("t", "2,3,25\n").unwrap();
        assert_eq!(
            t[&3].points[0],
            TracePoint {
                at: at(2.0),
                snr_db: 25.0
            }
        );
    }

    #[test]
    fn errors_name_file_line_and_column() {
        assert_eq!(
            err("time_s,station,snr_db\n0,1,30\n1,1,abc\n"),
            "trace.csv:3:5: snr_db: expected a number, got \"abc\""
        );
        assert_eq!(
            err("0, 1, 30\n x, 1, 30\n"),
            "trace.csv:2:2: time_s: expected a number of seconds, got \"x\""
        );
        assert_eq!(
            err("0,0,30\n"),
            "trace.csv:1:3: station: expected a station number 1 to 65535, got \"0\""
        );
        assert_eq!(
            err("0,1\n"),
            "trace.csv:1: expected 3 fields (time_s, station, snr_db), got 2"
        );
        assert_eq!(
            err("0,1,2,3\n"),
            "trace.csv:1:7: expected 3 fields (time_s, station, snr_db), got 4"
        );
        assert_eq!(
            err("2,1,30\n1,2,30\n1,1,30\n"),
            "trace.csv:3:1: time_s: 1 s is before station 1's previous point at 2 s; \
             times must not go backwards"
        );
        assert_eq!(
            err("-1,1,30\n"),
            "trace.csv:1:1: time_s: must be 0 to 1e9 s, got -1"
        );
        assert_eq!(
            err("0,1,inf\n"),
            "trace.csv:1:5: snr_db: expected a number, got \"inf\""
        );
        assert_eq!(
            err("time_s,station,snr\n"),
            "trace.csv:1:16: header: unknown column \"snr\"; expected time_s, station, snr_db"
        );
        assert_eq!(
            err("time_s,station\n"),
            "trace.csv:1: header: no snr_db column"
        );
        assert_eq!(
            err("# nothing\n\n"),
            "trace.csv: no points (expected lines of time_s, station, snr_db)"
        );
        // Columns count characters, not bytes.
        assert_eq!(
            err("0,1,30 # ünïcode\n1,1,\"x\"\n"),
            "trace.csv:2:5: snr_db: expected a number, got \"\"x\"\""
        );
        assert_eq!(
            err("0,\u{e9}\u{e9},30\n"),
            "trace.csv:1:3: station: expected a station number 1 to 65535, got \"\u{e9}\u{e9}\""
        );
        assert_eq!(
            err("\u{e9},1,x\n"),
            "trace.csv:1:1: time_s: expected a number of seconds, got \"\u{e9}\""
        );
    }

    /// Issue 25: a CSV a spreadsheet saved starts with a byte-order mark, which made
    /// the header's first column "\u{feff}time_s"; an SNR of 1e308 dB was accepted.
    #[test]
    fn a_byte_order_mark_is_skipped_and_snrs_are_bounded() {
        let parsed = parse_trace("t.csv", "\u{feff}time_s,station,snr_db\n0,1,30\n").unwrap();
        assert_eq!(parsed[&1].points[0].snr_db, 30.0);
        let parsed = parse_trace("t.csv", "\u{feff}0,2,25\n").unwrap();
        assert_eq!(parsed[&2].points[0].snr_db, 25.0);
        assert_eq!(
            err("0,1,30\n1,1,1e308\n"),
            "trace.csv:2:5: snr_db: must be -100 to 140 dB, got 1e308"
        );
        assert_eq!(
            err("0,1,-100.5\n"),
            "trace.csv:1:5: snr_db: must be -100 to 140 dB, got -100.5"
        );
        // The bounds themselves are SNRs.
        assert!(parse_trace("t.csv", "0,1,-100\n1,1,140\n").is_ok());
        let point = |snr_db| TracePoint {
            at: Nanos::ZERO,
            snr_db,
        };
        assert!(SnrTrace::new(vec![point(140.0)], Interpolation::Linear).is_ok());
        assert_eq!(
            SnrTrace::new(vec![point(140.5)], Interpolation::Linear),
            Err("point 0: the SNR must be -100 to 140 dB, got 140.5".to_string())
        );
    }

    #[test]
    fn interpolation_linear_step_and_holds() {
        let points = vec![
            TracePoint {
                at: at(1.0),
                snr_db: 10.0,
            },
            TracePoint {
                at: at(3.0),
                snr_db: 30.0,
            },
            // Two points at one time: a step at 4 s.
            TracePoint {
                at: at(4.0),
                snr_db: 30.0,
            },
            TracePoint {
                at: at(4.0),
                snr_db: 0.0,
            },
        ];
        let lin = SnrTrace::new(points.clone(), Interpolation::Linear).unwrap();
        assert_eq!(lin.snr_db(Nanos::ZERO), 10.0); // held before the first
        assert_eq!(lin.snr_db(at(1.0)), 10.0);
        assert_eq!(lin.snr_db(at(2.0)), 20.0);
        assert_eq!(lin.snr_db(at(2.5)), 25.0);
        assert_eq!(lin.snr_db(at(3.5)), 30.0);
        assert_eq!(lin.snr_db(at(3.999)), 30.0);
        assert_eq!(lin.snr_db(at(4.0)), 0.0); // the last point at a time wins
        assert_eq!(lin.snr_db(at(99.0)), 0.0); // held after the last
        let step = SnrTrace::new(points, Interpolation::Step).unwrap();
        assert_eq!(step.snr_db(Nanos::ZERO), 10.0);
        assert_eq!(step.snr_db(at(2.999)), 10.0);
        assert_eq!(step.snr_db(at(3.0)), 30.0);
        assert_eq!(step.snr_db(at(4.0)), 0.0);
        assert!(!step.is_constant());
        assert!(SnrTrace::new(vec![], Interpolation::Step).is_err());
        let one = SnrTrace::new(
            vec![TracePoint {
                at: at(5.0),
                snr_db: 12.0,
            }],
            Interpolation::Linear,
        )
        .unwrap();
        assert_eq!(one.snr_db(Nanos::ZERO), 12.0);
        assert_eq!(one.snr_db(at(9.0)), 12.0);
        assert!(one.is_constant());
    }
}
