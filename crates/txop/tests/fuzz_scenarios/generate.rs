//! Random valid scenario files, deterministic from a seed.
//!
//! Every key of docs/scenarios.md can appear: `[phy]`, `[mac]` with its EDCA tables,
//! `stack` and every `[stack_options]` key, `[stations]` (count or list entries, rates,
//! weights, channel models, positions, movement, fading, SNR traces, per-direction
//! channels, rate control, `scan`, `power_save`, `bus` as a preset name or a table of
//! overrides), `[traffic]` (bulk kinds and directions, probes, every flent test and its
//! options, `[traffic.web]`), `[[flows]]`, `[wired]`, `[space]` (with the stations
//! placed in their AP's range by position, distance or a path-loss matrix),
//! `[[bss]]` (several BSSs in space, every key of an entry), `duration_s`, `seed`,
//! `name`.
//! Each key is present or left to its default at random, so keys combine; values are
//! drawn from the documented ranges, biased towards their edges (the smallest, the
//! largest, zero where zero is allowed) and spread log-uniformly in between, because
//! bugs live at the edges and across orders of magnitude.
//!
//! "Valid" is kept where the docs state a rule (legacy rates on a/b/g, MCS on n/ac,
//! bands and widths per standard, `cw_min` ≤ `cw_max` of the form 2^k − 1, AQL with
//! TXQs, polling fields only on polled buses, a flow's host in the cell, …); rules the
//! docs do not spell out are left to the scenario checks, which must then answer with
//! one line.
//!
//! Two bounds keep each run short without narrowing the keys: at most
//! [`MAX_STATIONS`] stations, at most 1 s simulated, and the simulated time shortened
//! so that the open-loop sources (cbr, probes, pings) offer at most
//! [`OFFERED_PACKETS_BUDGET`] packets in all. Rates and intervals themselves stay
//! within ranges a user might write (cbr up to 10 Gbit/s, probes down to 10 µs); the
//! absurd ends (`rate_mbps = 1e300`, `probe_interval_ms = 1e-9`) are issue 18's
//! near-hangs, to be refused by the scenario checks, not generated here.

use toml::{Table, Value};
use txop_core::rng::{RngStream, StreamKind};

/// Stations per scenario, at most: "a few hundred" keeps a run within a second or so.
pub const MAX_STATIONS: i64 = 300;

/// Packets the open-loop sources may offer in one run (the duration is cut to fit).
pub const OFFERED_PACKETS_BUDGET: f64 = 1.5e6;

/// The longest simulated time generated, s.
pub const MAX_DURATION_S: f64 = 1.0;

/// The SNR trace the generated scenarios replay: points for every station up to
/// [`MAX_STATIONS`].
pub const SNR_TRACE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fuzz_scenarios/snr_trace.csv"
);

/// [`SNR_TRACE`]'s comments, header and rows of stations 1 to `stations`, as a file
/// under the target directory (written once, atomically: the tests run side by side);
/// its path.
pub fn snr_trace_for(stations: i64) -> String {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz_scenarios");
    let path = dir.join(format!("snr_trace-{stations}.csv"));
    if !path.exists() {
        let all = std::fs::read_to_string(SNR_TRACE).expect("the fuzzer's SNR trace");
        let rows: String = all
            .lines()
            .filter(|l| {
                l.split(',')
                    .nth(1)
                    .and_then(|s| s.trim().parse::<i64>().ok())
                    .is_none_or(|s| s <= stations)
            })
            .map(|l| format!("{l}\n"))
            .collect();
        std::fs::create_dir_all(&dir).expect("a directory for the trace");
        let part = dir.join(format!(
            "snr_trace-{stations}.csv.{}.{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::write(&part, rows).expect("the trace written");
        std::fs::rename(&part, &path).expect("the trace in place");
    }
    path.display().to_string()
}

/// A deterministic source of scenario values.
pub struct Gen {
    rng: RngStream,
    /// The draws of the channel and rate-control keys: a stream of their own, so that
    /// adding them left every other key of a case as it was.
    channel_rng: RngStream,
    /// The draws of `[space]`, likewise.
    space_rng: RngStream,
    /// The draws of `[[bss]]`, likewise.
    bss_rng: RngStream,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Std {
    B,
    A,
    G,
    N,
    Ac,
    Ax,
}

/// What later choices depend on.
struct Ctx {
    std: Std,
    width: i64,
    qos: bool,
    stations: i64,
    /// Offered packets per simulated second of the open-loop sources.
    offered_pps: f64,
    /// `phy.tx_power_dbm`, `phy.path_loss_exponent`, the band and `phy.ap_position_m`
    /// as generated (the defaults when absent): `[space]` places the stations in range.
    tx_power_dbm: f64,
    exponent: f64,
    band_24: bool,
    ap: [f64; 2],
    /// `phy.he_format = "er-su"`: HE-MCS 0–2, one stream.
    he_er: bool,
}

impl Gen {
    /// The generator of case `case` of the campaign seeded `seed`: a case is the
    /// same scenario whatever ran before it.
    pub fn new(seed: u64, case: u64) -> Gen {
        Gen {
            rng: RngStream::new(seed, StreamKind::Misc, case),
            channel_rng: RngStream::new(seed ^ 0x6368_616e_6e65_6c00, StreamKind::Misc, case),
            space_rng: RngStream::new(seed ^ 0x7370_6163_6500_0000, StreamKind::Misc, case),
            bss_rng: RngStream::new(seed ^ 0x6273_7300_0000_0000, StreamKind::Misc, case),
        }
    }

    /// `f` with `[[bss]]`'s own stream.
    fn with_bss_rng<T>(&mut self, f: impl FnOnce(&mut Gen) -> T) -> T {
        std::mem::swap(&mut self.rng, &mut self.bss_rng);
        let out = f(self);
        std::mem::swap(&mut self.rng, &mut self.bss_rng);
        out
    }

    /// `f` with `[space]`'s own stream.
    fn with_space_rng<T>(&mut self, f: impl FnOnce(&mut Gen) -> T) -> T {
        std::mem::swap(&mut self.rng, &mut self.space_rng);
        let out = f(self);
        std::mem::swap(&mut self.rng, &mut self.space_rng);
        out
    }

    /// `f` with the channel keys' own stream.
    fn with_channel_rng<T>(&mut self, f: impl FnOnce(&mut Gen) -> T) -> T {
        std::mem::swap(&mut self.rng, &mut self.channel_rng);
        let out = f(self);
        std::mem::swap(&mut self.rng, &mut self.channel_rng);
        out
    }

    /// `[x, y]` within ±`max` m.
    fn point(&mut self, max: f64) -> Vec<Value> {
        (0..2)
            .map(|_| {
                let sign = if self.chance(0.5) { -1.0 } else { 1.0 };
                let v = sign * self.num(0.0, max);
                self.float(v)
            })
            .collect()
    }

    /// The fading keys, into `t` (a station or a direction).
    fn fading(&mut self, t: &mut Table) {
        let kind = self.pick(&["none", "rayleigh", "rician"]);
        if kind != "none" || self.chance(0.5) {
            self.set_str(t, "fading", kind);
        }
        if kind == "rician" {
            let v = -50.0 + self.num(0.0, 100.0);
            self.set_num(t, "fading_k_db", v);
        }
        if kind != "none" && self.chance(0.5) {
            let v = self.num(0.001, 3.6e6);
            self.set_num(t, "coherence_ms", v);
        }
    }

    /// `snr_trace` (and maybe its interpolation), into `t`.
    fn snr_trace(&mut self, t: &mut Table) {
        self.set_str(t, "snr_trace", SNR_TRACE);
        if self.chance(0.5) {
            let i = self.pick(&["linear", "step"]);
            self.set_str(t, "snr_trace_interpolation", i);
        }
    }

    /// A station's or list entry's channel keys beyond `snr_db`, `distance_m` and
    /// `loss` (`mean`: which of those three it has), each present with probability `p`.
    fn channel_fields(&mut self, t: &mut Table, mean: Option<u8>, p: f64) {
        let mut has_snr = matches!(mean, Some(0 | 1));
        if mean.is_none() && self.chance(p) {
            match self.uniform(0, 2) {
                0 => {
                    let v = self.point(10_000.0);
                    t.insert("position_m".into(), Value::Array(v));
                }
                1 => {
                    let n = self.int(1, 6);
                    let mut at = self.num(0.0, 2.0);
                    let mut w = Vec::new();
                    for _ in 0..n {
                        let xy = self.point(10_000.0);
                        let mut row = vec![self.float(at)];
                        row.extend(xy);
                        w.push(Value::Array(row));
                        at += self.num(1e-3, 30.0);
                    }
                    t.insert("waypoints".into(), Value::Array(w));
                }
                _ => self.snr_trace(t),
            }
            has_snr = true;
        }
        if (t.contains_key("position_m") || t.contains_key("distance_m")) && self.chance(0.5) {
            // Up to 70 m/s each way: at most 99 m/s.
            let v = self.point(70.0);
            t.insert("velocity_mps".into(), Value::Array(v));
        }
        if has_snr && self.chance(p * 2.0) {
            self.fading(t);
        }
        if has_snr && self.chance(p) {
            for dir in ["downlink", "uplink"] {
                if !self.chance(0.6) {
                    continue;
                }
                let mut d = Table::new();
                match self.uniform(0, 2) {
                    0 => {
                        let v = -10.0 + self.num(0.0, 70.0);
                        self.set_num(&mut d, "snr_db", v);
                    }
                    1 => self.snr_trace(&mut d),
                    _ => {}
                }
                if self.chance(0.5) {
                    self.fading(&mut d);
                }
                t.insert(dir.into(), Value::Table(d));
            }
        }
        if self.chance(p) {
            let names: Vec<&str> = txop_core::mac80211::rate_control::RateControlKind::NAMES
                .iter()
                .map(|(n, _)| *n)
                .collect();
            let rc = self.pick(&names);
            self.set_str(t, "rate_control", rc);
        }
    }

    fn chance(&mut self, p: f64) -> bool {
        self.rng.bernoulli(p)
    }

    /// Uniform in `lo..=hi`.
    fn uniform(&mut self, lo: i64, hi: i64) -> i64 {
        debug_assert!(lo <= hi);
        let span = (hi - lo) as u64;
        if span < u32::MAX as u64 {
            lo + self.rng.uniform_inclusive(span as u32) as i64
        } else {
            lo + (self.rng.next_u64() % (span + 1)) as i64
        }
    }

    fn pick<T: Clone>(&mut self, xs: &[T]) -> T {
        xs[self.uniform(0, xs.len() as i64 - 1) as usize].clone()
    }

    /// An integer in `lo..=hi`: the edges (lo, lo + 1, hi) half of the time, else
    /// log-uniform (every order of magnitude alike) or uniform.
    fn int(&mut self, lo: i64, hi: i64) -> i64 {
        match self.uniform(0, 7) {
            0 | 1 => lo,
            2 => (lo + 1).min(hi),
            3 => hi,
            4 | 5 => {
                let top = ((hi - lo) as f64 + 1.0).ln();
                let x = top * self.rng.unit_f64();
                lo.saturating_add((x.exp() - 1.0).round() as i64)
                    .clamp(lo, hi)
            }
            _ => self.uniform(lo, hi),
        }
    }

    /// A number in `lo..=hi` (`lo` ≥ 0), biased like [`Gen::int`]; log-uniform from
    /// `max(lo, hi × 1e-6)`.
    fn num(&mut self, lo: f64, hi: f64) -> f64 {
        match self.uniform(0, 7) {
            0 | 1 => lo,
            2 => hi,
            3..=5 => {
                let floor = lo.max(hi * 1e-6).max(f64::MIN_POSITIVE);
                let (a, b) = (floor.ln(), hi.ln());
                (a + (b - a) * self.rng.unit_f64()).exp().clamp(lo, hi)
            }
            _ => lo + (hi - lo) * self.rng.unit_f64(),
        }
    }

    /// A float as TOML: a whole number is sometimes written as an integer (`5` for
    /// `5.0`), which every float key accepts too.
    fn float(&mut self, v: f64) -> Value {
        if v.fract() == 0.0 && v.abs() < 1e15 && self.chance(0.5) {
            Value::Integer(v as i64)
        } else {
            Value::Float(v)
        }
    }

    fn set_int(&mut self, t: &mut Table, key: &str, v: i64) {
        t.insert(key.into(), Value::Integer(v));
    }

    fn set_num(&mut self, t: &mut Table, key: &str, v: f64) {
        let v = self.float(v);
        t.insert(key.into(), v);
    }

    fn set_str(&mut self, t: &mut Table, key: &str, v: &str) {
        t.insert(key.into(), Value::String(v.into()));
    }

    fn set_bool(&mut self, t: &mut Table, key: &str) {
        let v = self.chance(0.5);
        t.insert(key.into(), Value::Boolean(v));
    }

    /// One scenario file's text.
    pub fn scenario(&mut self) -> String {
        let mut top = Table::new();
        let mut ctx = Ctx {
            std: Std::N,
            width: 20,
            qos: true,
            stations: 1,
            offered_pps: 0.0,
            tx_power_dbm: 20.0,
            exponent: 3.5,
            band_24: false,
            ap: [0.0, 0.0],
            he_er: false,
        };
        if self.chance(0.5) {
            let name = self.pick(&["fuzz", "", "a \"quoted\" name", "naïve · café", "x"]);
            self.set_str(&mut top, "name", name);
        }
        if self.chance(0.2) {
            self.set_str(&mut top, "description", "generated by fuzz_scenarios");
        }
        if self.chance(0.4) {
            let seed = self.int(0, i64::MAX);
            self.set_int(&mut top, "seed", seed);
        }
        if self.chance(0.85) {
            let stacks: Vec<&str> = txop_core::stack::PRESETS.iter().map(|p| p.0).collect();
            let s = self.pick(&stacks);
            self.set_str(&mut top, "stack", s);
        }
        let phy = self.phy(&mut ctx);
        if !phy.is_empty() {
            top.insert("phy".into(), Value::Table(phy));
        }
        let mac = self.mac(&mut ctx);
        if !mac.is_empty() {
            top.insert("mac".into(), Value::Table(mac));
        }
        if self.chance(0.5) {
            let o = self.stack_options();
            top.insert("stack_options".into(), Value::Table(o));
        }
        let mut stations = self.stations(&mut ctx);
        self.with_space_rng(|g| g.space(&ctx, &mut top, &mut stations));
        if !stations.is_empty() {
            top.insert("stations".into(), Value::Table(stations));
        }
        let default_duration = self.traffic(&mut ctx, &mut top);
        if self.chance(0.3) {
            let w = self.wired();
            top.insert("wired".into(), Value::Table(w));
        }
        if self.chance(0.2) {
            let mut server = Table::new();
            let h = self.tcp_host();
            server.insert("tcp".into(), Value::Table(h));
            top.insert("server".into(), Value::Table(server));
        }
        // The simulated time: at most 1 s, and short enough for the open-loop budget.
        let budget_s = if ctx.offered_pps > 0.0 {
            OFFERED_PACKETS_BUDGET / ctx.offered_pps
        } else {
            f64::INFINITY
        };
        let wanted = match default_duration {
            Some(d) if d <= budget_s && self.chance(0.5) => None, // left to the default
            _ => Some(match self.uniform(0, 5) {
                0 => 1e-9,
                1 => 1e-3,
                2 => MAX_DURATION_S,
                _ => self.num(0.0, MAX_DURATION_S).max(1e-9),
            }),
        };
        if let Some(d) = wanted {
            let d = d.min(budget_s).max(1e-9);
            self.set_num(&mut top, "duration_s", d);
        }
        let duration = wanted
            .map(|d| d.min(budget_s).max(1e-9))
            .or(default_duration);
        self.with_bss_rng(|g| g.bss(&ctx, &mut top, duration));
        // `[kernel] src` is read only for `minstrel_ht-kernel` and `units`, never built
        // here (a tree's first build takes seconds): the tree named does not exist, so
        // `units` (well formed or not) is refused in one line, and without them `src` is
        // parsed and left unused. Drawn last, so that it moves no other value of the
        // case.
        if self.chance(0.05) {
            let mut kernel = Table::new();
            self.set_str(&mut kernel, "src", "/nonexistent/linux-tree");
            if self.chance(0.5) {
                let units = self.pick(&[
                    &["fq"][..],
                    &["aql"],
                    &["fq", "aql"],
                    &["scheduler", "airtime"],
                    &["fq", "fq"],
                    &["minstrel_ht"],
                    &[],
                ]);
                let units = units.iter().map(|u| Value::String(u.to_string()));
                kernel.insert("units".into(), Value::Array(units.collect()));
            }
            top.insert("kernel".into(), Value::Table(kernel));
        }
        let text = toml::to_string(&top).expect("a table serialises");
        // A trace's rows for a station the scenario lacks are refused: each scenario
        // replays the rows of its own stations (every BSS has `ctx.stations`).
        if text.contains(SNR_TRACE) {
            text.replace(SNR_TRACE, &snr_trace_for(ctx.stations))
        } else {
            text
        }
    }

    fn phy(&mut self, ctx: &mut Ctx) -> Table {
        let mut t = Table::new();
        let (std, name) = match self.uniform(0, 19) {
            0 | 1 => (Std::B, "b"),
            2..=4 => (Std::A, "a"),
            5..=7 => (Std::G, "g"),
            8..=13 => (Std::N, "n"),
            14..=16 => (Std::Ac, "ac"),
            _ => (Std::Ax, "ax"),
        };
        ctx.std = std;
        if std != Std::N || self.chance(0.5) {
            self.set_str(&mut t, "standard", name);
        }
        let band_24 = match std {
            Std::B | Std::G => true,
            Std::A | Std::Ac => false,
            Std::N => self.chance(0.4),
            Std::Ax => self.chance(0.3),
        };
        ctx.band_24 = band_24;
        if band_24 || self.chance(0.3) {
            let v = match (band_24, self.uniform(0, 1)) {
                (true, 0) => Value::String("2.4".into()),
                (true, _) => Value::Float(2.4),
                (false, 0) => Value::String("5".into()),
                (false, _) => Value::Integer(5),
            };
            t.insert("band".into(), v);
        }
        ctx.width = match std {
            Std::N => self.pick(&[20, 40]),
            Std::Ac => self.pick(&[20, 40, 80]),
            Std::Ax if band_24 => self.pick(&[20, 40]),
            Std::Ax => self.pick(&[20, 40, 80, 160]),
            _ => 20,
        };
        if ctx.width != 20 || self.chance(0.2) {
            self.set_int(&mut t, "width_mhz", ctx.width);
        }
        if std == Std::Ax {
            // A GI and, mostly, an HE-LTF the standard pairs with it.
            let (gi, ltfs): (f64, &[&str]) =
                self.pick(&[(0.8, &["1x", "2x"][..]), (1.6, &["2x"]), (3.2, &["4x"])]);
            if self.chance(0.5) {
                t.insert("he_gi_us".into(), Value::Float(gi));
            }
            if self.chance(0.4) {
                let ltf = if self.chance(0.95) {
                    self.pick(ltfs)
                } else {
                    self.pick(&["1x", "2x", "4x"])
                };
                self.set_str(&mut t, "he_ltf", ltf);
            }
            if self.chance(0.3) {
                let pe = self.pick(&[0, 8, 16]);
                self.set_int(&mut t, "he_pe_us", pe);
            }
            if self.chance(0.3) {
                let er = ctx.width == 20 && self.chance(0.5);
                ctx.he_er = er;
                self.set_str(&mut t, "he_format", if er { "er-su" } else { "su" });
            }
        }
        if matches!(std, Std::N | Std::Ac) && self.chance(0.4) {
            let gi = self.pick(&["long", "short"]);
            self.set_str(&mut t, "guard_interval", gi);
        }
        if std == Std::B && self.chance(0.5) || self.chance(0.05) {
            let p = if std == Std::B {
                self.pick(&["long", "short"])
            } else {
                "long"
            };
            self.set_str(&mut t, "preamble", p);
        }
        if self.chance(0.25) {
            let v = -20.0 + self.num(0.0, 60.0);
            ctx.tx_power_dbm = v;
            self.set_num(&mut t, "tx_power_dbm", v);
        }
        if self.chance(0.25) {
            let v = 1.5 + self.num(0.0, 4.5);
            ctx.exponent = v;
            self.set_num(&mut t, "path_loss_exponent", v);
        }
        self.with_channel_rng(|g| {
            if g.chance(0.1) {
                let v = g.point(10_000.0);
                let n = |x: &Value| x.as_float().or(x.as_integer().map(|i| i as f64));
                ctx.ap = [n(&v[0]).unwrap_or(0.0), n(&v[1]).unwrap_or(0.0)];
                t.insert("ap_position_m".into(), Value::Array(v));
            }
        });
        t
    }

    fn mac(&mut self, ctx: &mut Ctx) -> Table {
        let mut t = Table::new();
        if !self.chance(0.5) {
            return t;
        }
        if self.chance(0.2) {
            ctx.qos = false;
            t.insert("qos".into(), Value::Boolean(false));
        }
        if self.chance(0.2) {
            let r = self.pick(&["edca", "dcf"]);
            self.set_str(&mut t, "backoff_rule", r);
        }
        if self.chance(0.2) {
            self.set_bool(&mut t, "aggregation");
        }
        if self.chance(0.2) {
            let v = self.pick(&["cts-to-self", "rts-cts", "off"]);
            self.set_str(&mut t, "protection", v);
        }
        if self.chance(0.25) {
            let v = self.int(1, 64);
            self.set_int(&mut t, "max_ampdu_subframes", v);
        }
        if self.chance(0.2) {
            let v = self.int(0, 1_048_575);
            self.set_int(&mut t, "max_ampdu_bytes", v);
        }
        if self.chance(0.2) {
            let v = self.int(0, 10_000);
            self.set_int(&mut t, "max_ampdu_duration_us", v);
        }
        if self.chance(0.2) {
            let v = self.int(0, 65_535);
            self.set_int(&mut t, "rts_threshold_bytes", v);
        }
        if self.chance(0.2) {
            let v = self.int(1, 255);
            self.set_int(&mut t, "retry_limit", v);
        }
        if self.chance(0.2) {
            self.set_bool(&mut t, "beacons");
        }
        if self.chance(0.2) {
            let v = self.int(1, 65_535);
            self.set_int(&mut t, "beacon_interval_tu", v);
        }
        if self.chance(0.2) {
            let v = self.int(1, 255);
            self.set_int(&mut t, "dtim_period", v);
        }
        if ctx.qos {
            for side in ["edca_ap", "edca_sta"] {
                if self.chance(0.2) {
                    let e = self.edca_table();
                    t.insert(side.into(), Value::Table(e));
                }
            }
        }
        t
    }

    /// Per-AC overrides: `cw_min` ≤ `cw_max`, both 2^k − 1 (given together, so an
    /// override never crosses the other's default).
    fn edca_table(&mut self) -> Table {
        let mut t = Table::new();
        for ac in ["vo", "vi", "be", "bk"] {
            if !self.chance(0.5) {
                continue;
            }
            let mut e = Table::new();
            if self.chance(0.5) {
                let v = self.int(1, 255);
                self.set_int(&mut e, "aifsn", v);
            }
            if self.chance(0.5) {
                let k_min = self.int(0, 15);
                let k_max = self.int(k_min, 15);
                self.set_int(&mut e, "cw_min", (1 << k_min) - 1);
                self.set_int(&mut e, "cw_max", (1 << k_max) - 1);
            }
            if self.chance(0.5) {
                let v = self.int(0, 10_000);
                self.set_int(&mut e, "txop_limit_us", v);
            }
            t.insert(ac.into(), Value::Table(e));
        }
        t
    }

    fn stack_options(&mut self) -> Table {
        let mut t = Table::new();
        let p = 0.15;
        if self.chance(p) {
            let q = self.pick(&["noqueue", "pfifo_fast", "fq_codel", "fifo"]);
            self.set_str(&mut t, "qdisc", q);
            if matches!(q, "pfifo_fast" | "fifo") && self.chance(0.5) {
                let v = self.int(0, 10_000);
                self.set_int(&mut t, "qdisc_limit_packets", v);
            }
        } else if self.chance(0.05) {
            // Valid only on a preset whose qdisc has a limit: the checks decide.
            let v = self.int(0, 10_000);
            self.set_int(&mut t, "qdisc_limit_packets", v);
        }
        if self.chance(p) {
            self.set_bool(&mut t, "mac80211_txqs");
        }
        for (key, lo, hi) in [
            ("fq_flows", 1, 65_536),
            ("fq_quantum_bytes", 1, 65_536),
            ("fq_limit_packets", 1, 100_000),
            ("fq_memory_limit_bytes", 0, 1 << 26),
            ("aql_limit_low_us", 0, 100_000),
            ("aql_limit_high_us", 0, 100_000),
            ("aql_threshold_us", 0, 100_000),
            ("driver_queue_packets", 1, 10_000),
            ("hw_queue_ppdus", 0, 16),
            ("max_ampdu_subframes", 1, 64),
        ] {
            if self.chance(p) {
                let v = self.int(lo, hi);
                self.set_int(&mut t, key, v);
            }
        }
        for key in ["codel_target_ms", "codel_interval_ms"] {
            if self.chance(p) {
                let v = self.num(1e-3, 10_000.0);
                self.set_num(&mut t, key, v);
            }
        }
        for key in ["codel_ecn", "per_station_codel", "aql_per_ac_limit"] {
            if self.chance(p) {
                self.set_bool(&mut t, key);
            }
        }
        for (key, options) in [
            (
                "fq_overload",
                &["one_from_fattest", "half_from_fattest"][..],
            ),
            ("dscp_mapping", &["legacy", "rfc8325"][..]),
            (
                "scheduler",
                &["round_robin", "ath9k_drr", "drr", "virtual_time", "drr_aql"][..],
            ),
            (
                "aql_estimator",
                &["no_aggregation", "div16", "agg_shift"][..],
            ),
            ("driver", &["ath9k", "firmware"][..]),
        ] {
            if self.chance(p) {
                let v = self.pick(options);
                self.set_str(&mut t, key, v);
            }
        }
        if self.chance(p) {
            let v = self.uniform(0, 3);
            self.set_int(&mut t, "airtime_flags", v);
        }
        if self.chance(p) {
            let v = if self.chance(0.7) {
                self.pick(&[0, 3])
            } else {
                self.uniform(0, 8)
            };
            self.set_int(&mut t, "quantum_shift", v);
        }
        if self.chance(0.2) {
            let v = self.pick(&["as_written", "flipped"]);
            self.set_str(&mut t, "may_transmit_aql_check", v);
        }
        if self.chance(p) {
            let q = self.pick(&["none", "aql", "dql"]);
            self.set_str(&mut t, "queue_limit", q);
            if q == "aql" && self.chance(0.8) {
                t.insert("mac80211_txqs".into(), Value::Boolean(true));
            }
        }
        if self.chance(p) {
            // A-MSDU (mostly with the TXQs it needs: the checks refuse the rest).
            self.set_bool(&mut t, "amsdu");
            if self.chance(0.8) {
                t.insert("mac80211_txqs".into(), Value::Boolean(true));
            }
        }
        if self.chance(p) {
            let v = if self.chance(0.9) {
                self.pick(&[0, 3839, 7935, 3895, 7991, 11454])
            } else {
                self.int(0, 65_535)
            };
            self.set_int(&mut t, "amsdu_max_len_bytes", v);
        }
        if self.chance(p) {
            let v = if self.chance(0.9) {
                self.pick(&[0, 8, 16, 32])
            } else {
                self.int(0, 300)
            };
            self.set_int(&mut t, "amsdu_max_subframes", v);
        }
        if self.chance(p) {
            let v = self.int(0, 300);
            self.set_int(&mut t, "amsdu_max_frags", v);
        }
        if self.chance(p) {
            // Valid only on an mt76 stack: the checks refuse the rest.
            let v = self.pick(&["mt7915", "mt7996"]);
            self.set_str(&mut t, "mt76_chip", v);
        }
        t
    }

    fn stations(&mut self, ctx: &mut Ctx) -> Table {
        let mut t = Table::new();
        let n = match self.uniform(0, 9) {
            0..=3 => self.uniform(1, 4),
            4..=6 => self.uniform(5, 40),
            7 | 8 => self.pick(&[19, 20, 30, 100, MAX_STATIONS]),
            _ => self.uniform(41, MAX_STATIONS),
        };
        ctx.stations = n;
        self.station_fields(ctx, &mut t, 0.2);
        if self.chance(0.35) {
            // A list: up to 6 entries sharing the stations.
            let entries = self.uniform(1, 6.min(n));
            let mut left = n;
            let mut list = Vec::new();
            for i in 0..entries {
                let count = if i + 1 == entries {
                    left
                } else {
                    self.uniform(1, left - (entries - i - 1))
                };
                left -= count;
                let mut e = Table::new();
                if count != 1 || self.chance(0.3) {
                    self.set_int(&mut e, "count", count);
                }
                self.station_fields(ctx, &mut e, 0.3);
                list.push(Value::Table(e));
            }
            t.insert("list".into(), Value::Array(list));
        } else if n != 1 || self.chance(0.3) {
            self.set_int(&mut t, "count", n);
        }
        t
    }

    /// The keys `[stations]` and a list entry share, each present with probability `p`.
    fn station_fields(&mut self, ctx: &Ctx, t: &mut Table, p: f64) {
        if self.chance(p) {
            let v = self.int(1, 65_535);
            self.set_int(t, "weight", v);
        }
        match ctx.std {
            Std::B | Std::A | Std::G if self.chance(p) => {
                let r = if ctx.std == Std::B {
                    self.pick(&[1.0, 2.0, 5.5, 11.0])
                } else {
                    self.pick(&[6.0, 9.0, 12.0, 18.0, 24.0, 36.0, 48.0, 54.0])
                };
                self.set_num(t, "rate_mbps", r);
                if self.chance(0.3) {
                    // A rate fixed for one direction (issue 29), of the same family.
                    let dir = self.pick(&["downlink", "uplink"]);
                    let d = t.entry(dir).or_insert_with(|| Value::Table(Table::new()));
                    if let Value::Table(d) = d {
                        d.insert("rate_mbps".into(), Value::Float(r));
                    }
                }
            }
            Std::N if self.chance(p) => {
                let v = self.int(0, 15);
                self.set_int(t, "mcs", v);
                if self.chance(0.3) {
                    // A rate fixed for one direction (issue 29): into its channel
                    // table, or a table of its own.
                    let dir = self.pick(&["downlink", "uplink"]);
                    let v = self.int(0, 7);
                    let d = t.entry(dir).or_insert_with(|| Value::Table(Table::new()));
                    if let Value::Table(d) = d {
                        d.insert("mcs".into(), Value::Integer(v));
                    }
                }
            }
            Std::Ac => {
                if self.chance(p) {
                    // VHT MCS 9 has no 20 MHz rate at one or two streams.
                    let top = if ctx.width == 20 { 8 } else { 9 };
                    let v = self.int(0, top);
                    self.set_int(t, "mcs", v);
                }
                if self.chance(p) {
                    let v = self.uniform(1, 2);
                    self.set_int(t, "nss", v);
                }
            }
            Std::Ax => {
                if self.chance(p) {
                    let v = self.int(0, if ctx.he_er { 2 } else { 11 });
                    self.set_int(t, "mcs", v);
                }
                if self.chance(p) && !ctx.he_er {
                    let v = self.uniform(1, 4);
                    self.set_int(t, "nss", v);
                }
            }
            _ => {}
        }
        let mut mean = None;
        if self.chance(p) {
            match self.uniform(0, 2) {
                0 => {
                    let v = -10.0 + self.num(0.0, 70.0);
                    self.set_num(t, "snr_db", v);
                    mean = Some(0);
                }
                1 => {
                    let v = self.num(1e-3, 10_000.0);
                    self.set_num(t, "distance_m", v);
                    mean = Some(1);
                }
                _ => {
                    let v = self.num(0.0, 1.0);
                    self.set_num(t, "loss", v);
                    mean = Some(2);
                }
            }
        }
        self.with_channel_rng(|g| g.channel_fields(t, mean, p));
        if self.chance(p * 0.6) {
            let s = self.scan();
            t.insert("scan".into(), Value::Table(s));
        }
        if self.chance(p * 0.6) {
            let s = self.power_save();
            t.insert("power_save".into(), Value::Table(s));
        }
        if self.chance(p * 0.5) {
            let b = self.bus();
            t.insert("bus".into(), b);
        }
        if self.chance(p * 0.4) {
            let h = self.tcp_host();
            t.insert("tcp".into(), Value::Table(h));
        }
        if self.chance(p * 0.3) {
            // Reporting only: entries that share a name make one group.
            let g = self.pick(&["near", "far", "laptops"]);
            self.set_str(t, "group", g);
        }
    }

    /// Sometimes a `[space]` table, every key of it at random, and the stations placed
    /// for it: the keys that give an SNR otherwise or move a station taken out of
    /// `stations` (and its list entries), then a place within range of the AP given to
    /// `[stations]` and to some entries (a position, a distance, on a ring or not), or
    /// a path-loss matrix for a few stations. Space is valid only with every station in
    /// its AP's range, which the thresholds and the link budget decide: the places are
    /// drawn within that range (and the preamble threshold kept low enough for 1 m).
    fn space(&mut self, ctx: &Ctx, top: &mut Table, stations: &mut Table) {
        if !self.chance(0.15) {
            return;
        }
        let mut sp = Table::new();
        let band = if ctx.band_24 {
            txop_core::phy::Band::Ghz2_4
        } else {
            txop_core::phy::Band::Ghz5
        };
        let loss_1m = txop_core::phy::path_loss::path_loss_db(ctx.exponent, band, 1.0);
        // Every station can stand 1 m from the AP: the threshold 1 dB below that power.
        let highest = ctx.tx_power_dbm - loss_1m - 1.0;
        let mut preamble = (-82.0_f64).min(highest);
        if self.chance(0.3) {
            preamble = (-100.0 + self.num(0.0, 80.0)).min(highest);
            self.set_num(&mut sp, "cca_preamble_dbm", preamble);
        }
        if self.chance(0.3) {
            let v = -100.0 + self.num(0.0, 80.0);
            self.set_num(&mut sp, "cca_energy_dbm", v);
        }
        let mut restart = true;
        if self.chance(0.3) {
            let c = self.pick(&["restart", "off"]);
            restart = c == "restart";
            self.set_str(&mut sp, "capture", c);
        }
        if restart && self.chance(0.3) {
            let v = self.num(0.0, 40.0);
            self.set_num(&mut sp, "capture_margin_db", v);
        }
        // The largest loss, and distance, at which the AP and a station still detect
        // each other; places are drawn within 90 % of it.
        let max_loss = ctx.tx_power_dbm - preamble;
        let range_m = 10f64.powf((max_loss - loss_1m) / (10.0 * ctx.exponent));
        let reach_m = (0.9 * range_m).min(10_000.0);
        let mut entries: Vec<&mut Table> = vec![];
        let list = stations.remove("list");
        let mut list = match list {
            Some(Value::Array(items)) => items,
            _ => Vec::new(),
        };
        for key in [
            "snr_db",
            "loss",
            "snr_trace",
            "snr_trace_interpolation",
            "velocity_mps",
            "waypoints",
            "position_m",
            "distance_m",
        ] {
            stations.remove(key);
            for e in list.iter_mut().filter_map(Value::as_table_mut) {
                e.remove(key);
            }
        }
        for t in
            std::iter::once(&mut *stations).chain(list.iter_mut().filter_map(Value::as_table_mut))
        {
            for dir in ["downlink", "uplink"] {
                if let Some(Value::Table(d)) = t.get_mut(dir) {
                    for key in ["snr_db", "snr_trace", "snr_trace_interpolation"] {
                        d.remove(key);
                    }
                }
            }
        }
        if ctx.stations <= 6 && self.chance(0.25) {
            // A matrix: AP ↔ station within range each way, station ↔ station anything.
            let n = ctx.stations as usize + 1;
            let mut m = Vec::with_capacity(n);
            for i in 0..n {
                let mut row = Vec::with_capacity(n);
                for j in 0..n {
                    let v = match (i, j) {
                        _ if i == j => 0.0,
                        (0, _) | (_, 0) => self.num(0.0, (max_loss - 0.01).clamp(0.0, 500.0)),
                        _ => self.num(0.0, 500.0),
                    };
                    row.push(self.float(v));
                }
                m.push(Value::Array(row));
            }
            sp.insert("path_loss_db".into(), Value::Array(m));
            if let Some(Value::Table(phy)) = top.get_mut("phy") {
                phy.remove("ap_position_m");
            }
        } else {
            if self.chance(0.4) {
                let l = self.pick(&["given", "ring"]);
                self.set_str(&mut sp, "layout", l);
            }
            entries.push(stations);
            entries.extend(list.iter_mut().filter_map(Value::as_table_mut));
            for (i, t) in entries.into_iter().enumerate() {
                // [stations] always has a place, so an entry without one inherits it.
                if i > 0 && self.chance(0.5) {
                    continue;
                }
                if self.chance(0.5) {
                    let d = self.num(1e-3, reach_m);
                    self.set_num(t, "distance_m", d);
                } else {
                    let side = reach_m / std::f64::consts::SQRT_2;
                    let mut xy = Vec::new();
                    for c in ctx.ap {
                        let sign = if self.chance(0.5) { -1.0 } else { 1.0 };
                        let v = (c + sign * self.num(0.0, side)).clamp(-10_000.0, 10_000.0);
                        xy.push(self.float(v));
                    }
                    t.insert("position_m".into(), Value::Array(xy));
                }
            }
        }
        if !list.is_empty() {
            stations.insert("list".into(), Value::Array(list));
        }
        top.insert("space".into(), Value::Table(sp));
    }

    /// Sometimes, for a scenario in space placed by position, several BSSs instead of
    /// one cell (`[[bss]]`): the first at the generated AP's place inheriting the
    /// generated tables, the others around it (in range or not), each giving any of
    /// its keys at random: a channel (one of each band's non-overlapping ones, or now
    /// and then one that overlaps, which is refused), a stack, `[bss.stack_options]`,
    /// `[bss.mac]`, its own stations on a ring within its AP's range (always, when the
    /// inherited stations stand at absolute places near the first AP), `[bss.traffic]`,
    /// `[bss.wired]` and `[[bss.flows]]` (now and then naming another BSS's host, which
    /// is refused). The simulated time is shared out among the BSSs, so that a case
    /// does no more work than one cell; scanning, which space refuses, is left out
    /// (beacons and power save stay).
    fn bss(&mut self, ctx: &Ctx, top: &mut Table, duration: Option<f64>) {
        let Some(Value::Table(sp)) = top.get("space") else {
            return;
        };
        if sp.contains_key("path_loss_db") || ctx.stations > 40 || !self.chance(0.6) {
            return;
        }
        let band = if ctx.band_24 {
            txop_core::phy::Band::Ghz2_4
        } else {
            txop_core::phy::Band::Ghz5
        };
        let preamble = sp
            .get("cca_preamble_dbm")
            .and_then(|v| v.as_float().or(v.as_integer().map(|i| i as f64)))
            .unwrap_or(-82.0);
        let loss_1m = txop_core::phy::path_loss::path_loss_db(ctx.exponent, band, 1.0);
        let range_m = 10f64.powf((ctx.tx_power_dbm - preamble - loss_1m) / (10.0 * ctx.exponent));
        let reach_m = (0.9 * range_m).clamp(1e-3, 10_000.0);
        if let Some(Value::Table(phy)) = top.get_mut("phy") {
            phy.remove("ap_position_m");
        }
        // Space refuses scanning (the single cell's cases cover that): the BSSs go
        // without it.
        if let Some(Value::Table(st)) = top.get_mut("stations") {
            st.remove("scan");
            if let Some(Value::Array(list)) = st.get_mut("list") {
                for e in list.iter_mut().filter_map(Value::as_table_mut) {
                    e.remove("scan");
                }
            }
        }
        // Stations at absolute places stand near the first AP only.
        let absolute = match top.get("stations") {
            Some(Value::Table(st)) => {
                st.contains_key("position_m")
                    || st.get("list").and_then(Value::as_array).is_some_and(|l| {
                        l.iter()
                            .any(|e| e.as_table().is_some_and(|e| e.contains_key("position_m")))
                    })
            }
            _ => false,
        };
        let n = self.int(1, 4) as usize;
        let names = ["home", "office", "flat-3", "n_4"];
        let channels: &[i64] = if ctx.band_24 {
            &[1, 6, 11, 3]
        } else {
            &[36, 44, 100, 149, 40]
        };
        let mut list = Vec::with_capacity(n);
        for k in 0..n {
            let mut b = Table::new();
            self.set_str(&mut b, "name", names[k]);
            let ap = if k == 0 {
                ctx.ap
            } else {
                let spread = (3.0 * reach_m).min(10_000.0);
                let mut xy = [0.0; 2];
                for (c, v) in ctx.ap.iter().zip(&mut xy) {
                    let sign = if self.chance(0.5) { -1.0 } else { 1.0 };
                    *v = (c + sign * self.num(0.0, spread)).clamp(-10_000.0, 10_000.0);
                }
                xy
            };
            let xy = ap.iter().map(|&c| self.float(c)).collect();
            b.insert("ap_position_m".into(), Value::Array(xy));
            if self.chance(0.3) {
                let c = self.pick(channels);
                self.set_int(&mut b, "channel", c);
            }
            if self.chance(0.3) {
                let stacks: Vec<&str> = txop_core::stack::PRESETS.iter().map(|p| p.0).collect();
                let st = self.pick(&stacks);
                self.set_str(&mut b, "stack", st);
            }
            if self.chance(0.15) {
                let o = self.stack_options();
                b.insert("stack_options".into(), Value::Table(o));
            }
            if self.chance(0.3) {
                let mut m = Table::new();
                if self.chance(0.7) {
                    let v = self.int(0, 65_535);
                    self.set_int(&mut m, "rts_threshold_bytes", v);
                }
                if self.chance(0.5) {
                    let v = self.int(0, 15);
                    self.set_int(&mut m, "retry_limit", v);
                }
                b.insert("mac".into(), Value::Table(m));
            }
            if (k > 0 && absolute) || self.chance(0.3) {
                // As many stations as inherited, so that inherited flows find theirs.
                let mut st = Table::new();
                self.set_int(&mut st, "count", ctx.stations);
                let d = self.num(1e-3, reach_m);
                self.set_num(&mut st, "distance_m", d);
                b.insert("stations".into(), Value::Table(st));
            }
            if self.chance(0.3) {
                let mut t = Table::new();
                if self.chance(0.5) {
                    self.set_str(&mut t, "kind", "cbr");
                    let v = self.num(1e-3, 20.0);
                    self.set_num(&mut t, "rate_mbps", v);
                } else {
                    let test = self.pick(&["ping", "tcp_1down", "tcp_1up", "rrul", "voip"]);
                    self.set_str(&mut t, "test", test);
                    let length = self.num(0.0, MAX_DURATION_S);
                    self.set_num(&mut t, "length_s", length);
                    self.set_num(&mut t, "delay_s", 0.0);
                }
                b.insert("traffic".into(), Value::Table(t));
            }
            if self.chance(0.2) {
                let mut w = Table::new();
                let v = self.num(0.0, 100.0);
                self.set_num(&mut w, "delay_ms", v);
                b.insert("wired".into(), Value::Table(w));
            }
            if self.chance(0.2) {
                let mut f = Table::new();
                self.set_str(&mut f, "kind", "ping");
                let from = if n > 1 && self.chance(0.1) {
                    // Another BSS's station: refused.
                    format!("{}.sta1", names[(k + 1) % n])
                } else if self.chance(0.5) {
                    format!("{}.sta1", names[k])
                } else {
                    "sta1".to_string()
                };
                self.set_str(&mut f, "from", &from);
                self.set_str(&mut f, "to", "server");
                let v = self.num(10.0, 1000.0);
                self.set_num(&mut f, "interval_ms", v);
                b.insert("flows".into(), Value::Array(vec![Value::Table(f)]));
            }
            list.push(Value::Table(b));
        }
        top.insert("bss".into(), Value::Array(list));
        if let Some(d) = duration {
            // At least the shortest run: the BSSs' own checks, not the duration's, are
            // what these cases are for.
            let share = (d / n as f64).max(1e-3);
            self.set_num(top, "duration_s", share);
        }
    }

    fn scan(&mut self) -> Table {
        let mut t = Table::new();
        let p = 0.4;
        let mut bounded = true;
        if self.chance(p) {
            let policy = self.pick(&["legacy", "bounded"]);
            bounded = policy == "bounded";
            self.set_str(&mut t, "policy", policy);
        }
        if self.chance(p) {
            let v = match self.uniform(0, 4) {
                0 => Value::String("2.4".into()),
                1 => Value::String("5".into()),
                2 => Value::String("both".into()),
                3 => Value::Float(2.4),
                _ => Value::Integer(5),
            };
            t.insert("bands".into(), v);
        }
        if self.chance(0.7) {
            // Mostly within the run, so that the scan happens.
            let v = if self.chance(0.8) {
                self.num(0.0, MAX_DURATION_S)
            } else {
                self.num(0.0, 1e6)
            };
            self.set_num(&mut t, "start_s", v);
        }
        if self.chance(p) {
            let v = self.num(1e-3, 1e6);
            self.set_num(&mut t, "pause_s", v);
        }
        if self.chance(p) {
            self.set_bool(&mut t, "repeat");
        }
        if bounded && self.chance(p) {
            self.set_bool(&mut t, "low_priority");
        }
        if self.chance(p) {
            let v = self.num(0.0, 100.0);
            self.set_num(&mut t, "channel_switch_ms", v);
        }
        if self.chance(p) {
            let v = self.int(1, 65_535);
            self.set_int(&mut t, "listen_interval", v);
        }
        if self.chance(p) {
            let v = self.num(1e-3, 1e6);
            self.set_num(&mut t, "network_latency_s", v);
        }
        for key in ["driver_flush", "answer_tim"] {
            if self.chance(p) {
                self.set_bool(&mut t, key);
            }
        }
        t
    }

    /// A host's `tcp` table: each key now and then, `adv_win_scale` and
    /// `scaling_ratio` apart, `fixed_window_bytes` alone.
    fn tcp_host(&mut self) -> Table {
        let mut t = Table::new();
        if self.chance(0.15) {
            let v = self.int(8192, 1 << 30);
            self.set_int(&mut t, "fixed_window_bytes", v);
            return t;
        }
        if self.chance(0.5) {
            let k = self.pick(&["4.9", "5.4", "6.12"]);
            self.set_str(&mut t, "kernel", k);
        }
        if self.chance(0.3) {
            let min = self.int(1, 8192);
            let default = self.int(8192, 1 << 20);
            let max = self.int(1 << 20, 1 << 30);
            let v = [min, default, max].map(Value::Integer).to_vec();
            t.insert("rmem_bytes".into(), Value::Array(v));
        }
        if self.chance(0.5) {
            let v = self.int(-31, 31);
            self.set_int(&mut t, "adv_win_scale", v);
        } else if self.chance(0.5) {
            let v = self.int(1, 255);
            self.set_int(&mut t, "scaling_ratio", v);
        }
        if self.chance(0.3) {
            self.set_bool(&mut t, "moderate_rcvbuf");
        }
        if self.chance(0.3) {
            let v = self.num(0.1, 1000.0);
            self.set_num(&mut t, "read_rate_mbps", v);
        }
        t
    }

    fn power_save(&mut self) -> Table {
        let mut t = Table::new();
        if self.chance(0.5) {
            let v = self.num(1.0, 1e6);
            self.set_num(&mut t, "dynamic_timeout_ms", v);
        }
        if self.chance(0.5) {
            self.set_bool(&mut t, "ps_poll");
        }
        if self.chance(0.5) {
            let v = self.int(1, 65_535);
            self.set_int(&mut t, "wake_every_beacons", v);
        }
        t
    }

    /// A preset name, or a table naming a preset with overrides; the polling fields
    /// only on a polled bus, the PIO cost only with PIO.
    fn bus(&mut self) -> Value {
        let preset = self.pick(&["sdio-vendor", "sdio-generic"]);
        if self.chance(0.4) {
            return Value::String(preset.into());
        }
        let generic = preset == "sdio-generic";
        let mut t = Table::new();
        self.set_str(&mut t, "preset", preset);
        let p = 0.25;
        if self.chance(p) {
            // Mostly a plausible clock; now and then down to 1 Hz.
            let v = if self.chance(0.7) {
                100_000 + self.int(0, 199_900_000)
            } else {
                self.int(1, 200_000_000)
            };
            self.set_int(&mut t, "clock_hz", v);
        }
        if self.chance(p) {
            let v = self.pick(&[1, 4, 8]);
            self.set_int(&mut t, "width_bits", v);
        }
        for (key, lo, hi) in [
            ("block_bytes", 0, 2048),
            ("block_gap_ns", 0, 1_000_000),
            ("transfer_overhead_ns", 0, 1_000_000),
            ("status_read_bytes", 0, 512),
            ("frame_overhead_bytes", 0, 512),
            ("cpu_per_transfer_ns", 0, 1_000_000),
            ("cpu_per_interrupt_ns", 0, 1_000_000),
            ("cpu_per_poll_ns", 0, 1_000_000),
            ("cpu_per_switch_ns", 0, 1_000_000),
            ("host_cpu_per_packet_ns", 0, 10_000_000),
            ("host_cpu_ps_per_byte", 0, 1_000_000),
            ("host_backlog_packets", 1, 10_000),
            ("host_tx_queue_packets", 1, 1_000),
            ("device_rx_buffers", 1, 256),
        ] {
            if self.chance(p) {
                let v = self.int(lo, hi);
                self.set_int(&mut t, key, v);
            }
        }
        let mut polled = generic;
        if self.chance(p) {
            let c = self.pick(&["interrupt", "polled"]);
            polled = c == "polled";
            self.set_str(&mut t, "completion", c);
        }
        if polled && self.chance(0.4) {
            let v = self.num(1e-3, 1000.0);
            self.set_num(&mut t, "poll_jiffy_ms", v);
        }
        if polled && self.chance(0.4) {
            let v = self.int(1, 100);
            self.set_int(&mut t, "poll_idle_jiffies", v);
        }
        let mut pio = generic;
        if self.chance(p) {
            let d = self.pick(&["dma", "pio"]);
            pio = d == "pio";
            self.set_str(&mut t, "data", d);
        }
        if pio && self.chance(0.4) {
            let v = self.int(0, 10_000_000);
            self.set_int(&mut t, "pio_copy_ps_per_byte", v);
        }
        Value::Table(t)
    }

    /// `[traffic]` and `[[flows]]`; the default duration when it is a flent test's.
    fn traffic(&mut self, ctx: &mut Ctx, top: &mut Table) -> Option<f64> {
        let mut t = Table::new();
        let n = ctx.stations as f64;
        let mut default_duration = None;
        match self.uniform(0, 19) {
            // Bulk flows (saturated or cbr), maybe with probes.
            0..=8 => {
                let mut cbr = false;
                if self.chance(0.6) {
                    let k = self.pick(&["saturated", "cbr"]);
                    cbr = k == "cbr";
                    self.set_str(&mut t, "kind", k);
                }
                let mut directions = 1.0;
                if self.chance(0.6) {
                    let d = self.pick(&["downlink", "uplink", "both"]);
                    directions = if d == "both" { 2.0 } else { 1.0 };
                    self.set_str(&mut t, "direction", d);
                }
                let mut bytes = 1500.0;
                if self.chance(0.3) {
                    let v = self.int(1, 7900);
                    bytes = v as f64;
                    self.set_int(&mut t, "packet_bytes", v);
                }
                if self.chance(0.2) {
                    let v = self.uniform(0, 7);
                    self.set_int(&mut t, "tid", v);
                }
                if self.chance(0.2) {
                    let v = self.int(0, 63);
                    self.set_int(&mut t, "dscp", v);
                }
                if self.chance(0.25) {
                    let v = self.int(0, 4000);
                    self.set_int(&mut t, "depth", v);
                }
                let mut rate_mbps = 10.0;
                if self.chance(if cbr { 0.7 } else { 0.1 }) {
                    rate_mbps = self.num(1e-3, 10_000.0);
                    self.set_num(&mut t, "rate_mbps", rate_mbps);
                }
                if cbr {
                    ctx.offered_pps += n * directions * rate_mbps * 1e6 / (8.0 * bytes);
                }
                if self.chance(0.3) {
                    let ms = if self.chance(0.1) {
                        0.0
                    } else {
                        self.num(1e-2, 10_000.0)
                    };
                    self.set_num(&mut t, "probe_interval_ms", ms);
                    if ms > 0.0 {
                        ctx.offered_pps += n * directions * 1e3 / ms;
                    }
                    if self.chance(0.4) {
                        let v = self.int(1, 7900);
                        self.set_int(&mut t, "probe_bytes", v);
                    }
                }
            }
            // A flent test.
            9..=14 => {
                let tests: Vec<&str> = txop_sim::traffic::flent::TESTS
                    .iter()
                    .map(|t| t.0)
                    .collect();
                let test = self.pick(&tests);
                self.set_str(&mut t, "test", test);
                let length = self.num(0.0, MAX_DURATION_S);
                let delay = self.num(0.0, MAX_DURATION_S / 2.0);
                self.set_num(&mut t, "length_s", length);
                self.set_num(&mut t, "delay_s", delay);
                default_duration = Some(length + 2.0 * delay).filter(|d| *d > 0.0);
                if self.chance(0.3) {
                    let v = self.int(1, 1000);
                    self.set_int(&mut t, "streams", v);
                }
                if self.chance(0.3) {
                    let v = self.int(1, ctx.stations);
                    self.set_int(&mut t, "station", v);
                }
                if self.chance(0.3) {
                    let v = self.pick(&["cubic", "newreno", "bbr"]);
                    self.set_str(&mut t, "cc", v);
                }
                if self.chance(0.3) {
                    self.set_bool(&mut t, "ecn");
                }
                // Pings every 200 ms (ICMP) and 20 ms (UDP) from each station at most.
                ctx.offered_pps += n * 2.0 * (5.0 + 3.0 * 50.0);
            }
            // Explicit flows.
            _ => {
                let flows = self.flows(ctx);
                top.insert("flows".into(), Value::Array(flows));
            }
        }
        if self.chance(0.2) {
            let w = self.web(ctx);
            t.insert("web".into(), Value::Table(w));
        }
        if !t.is_empty() {
            top.insert("traffic".into(), Value::Table(t));
        }
        default_duration
    }

    fn web(&mut self, ctx: &Ctx) -> Table {
        let mut t = Table::new();
        if self.chance(0.5) {
            let v = self.int(1, ctx.stations);
            self.set_int(&mut t, "station", v);
        }
        if self.chance(0.4) {
            let objects = self.uniform(1, 8);
            let sizes = (0..objects)
                .map(|_| Value::Integer(self.int(1, 2_000_000)))
                .collect();
            t.insert("objects_bytes".into(), Value::Array(sizes));
        }
        if self.chance(0.4) {
            let v = self.int(1, 64);
            self.set_int(&mut t, "connections", v);
        }
        // Within the run, or the page never loads.
        let v = self.num(0.0, MAX_DURATION_S);
        self.set_num(&mut t, "start_s", v);
        if self.chance(0.4) {
            let v = self.num(0.0, MAX_DURATION_S);
            self.set_num(&mut t, "repeat_after_s", v);
        }
        t
    }

    fn flows(&mut self, ctx: &mut Ctx) -> Vec<Value> {
        let count = self.uniform(1, 6);
        let mut flows = Vec::new();
        for _ in 0..count {
            let mut f = Table::new();
            let kind = self.pick(&["tcp", "ping", "udp_ping", "cbr"]);
            self.set_str(&mut f, "kind", kind);
            let sta = format!("sta{}", self.int(1, ctx.stations));
            let wired = self.pick(&["server", "ap"]).to_string();
            let (from, to) = if self.chance(0.5) {
                (sta, wired)
            } else {
                (wired, sta)
            };
            self.set_str(&mut f, "from", &from);
            self.set_str(&mut f, "to", &to);
            let mut start = 0.0;
            if self.chance(0.5) {
                start = self.num(0.0, MAX_DURATION_S);
                self.set_num(&mut f, "start_s", start);
            }
            if kind != "cbr" && self.chance(0.3) {
                let stop = start + self.num(1e-6, MAX_DURATION_S);
                self.set_num(&mut f, "stop_s", stop);
            }
            if self.chance(0.3) {
                let v = self.int(0, 63);
                self.set_int(&mut f, "dscp", v);
            }
            match kind {
                "tcp" => {
                    if self.chance(0.3) {
                        let v = self.int(0, 100_000_000);
                        self.set_int(&mut f, "bytes", v);
                    }
                    if self.chance(0.3) {
                        let v = self.pick(&["cubic", "newreno", "bbr"]);
                        self.set_str(&mut f, "cc", v);
                    }
                    if self.chance(0.3) {
                        self.set_bool(&mut f, "ecn");
                    }
                }
                "ping" | "udp_ping" => {
                    let mut interval_ms = if kind == "ping" { 200.0 } else { 20.0 };
                    if self.chance(0.5) {
                        interval_ms = self.num(0.1, 3_600_000.0);
                        self.set_num(&mut f, "interval_ms", interval_ms);
                    }
                    ctx.offered_pps += 1e3 / interval_ms;
                    if self.chance(0.3) {
                        let v = self.int(28, 7900);
                        self.set_int(&mut f, "packet_bytes", v);
                    }
                }
                _ => {
                    let rate = self.num(1e-3, 10_000.0);
                    self.set_num(&mut f, "rate_mbps", rate);
                    let mut bytes = 1500.0;
                    if self.chance(0.3) {
                        let v = self.int(1, 7900);
                        bytes = v as f64;
                        self.set_int(&mut f, "packet_bytes", v);
                    }
                    ctx.offered_pps += rate * 1e6 / (8.0 * bytes);
                }
            }
            flows.push(Value::Table(f));
        }
        flows
    }

    fn wired(&mut self) -> Table {
        let mut t = Table::new();
        if self.chance(0.5) {
            let v = self.num(1e-2, 100_000.0);
            self.set_num(&mut t, "rate_mbps", v);
        }
        if self.chance(0.5) {
            let v = self.num(0.0, 10_000.0);
            self.set_num(&mut t, "delay_ms", v);
        }
        if self.chance(0.5) {
            let v = self.int(1, 100_000);
            self.set_int(&mut t, "limit_packets", v);
        }
        t
    }
}
