//! `txop compare --against FILE.flent.gz`: a real flent run held against txop's run of
//! the closest scenario.
//!
//! The file says the test (NAME), its timing (LENGTH, TOTAL_LENGTH), the hosts, and
//! sometimes the congestion control, ECN and DSCP (TEST_PARAMETERS, SYSCTLS, the
//! netperf command lines in SERIES_META). [`map`] turns that into `--set` keys of a
//! flent test (`traffic.test`, `traffic.length_s` …) on top of a base scenario that
//! says what the file cannot: the PHY, the stack, the wired delay. The user's own
//! `--set` keys come after the mapped ones and win.
//!
//! Where flent ran matters: txop's flent tests run from a station to the server
//! behind the AP, so a file whose flent ran on the wired side (netserver on the
//! stations) has its directions swapped: its "TCP upload" is txop's download. The
//! file tells it by `EGRESS_INFO` (the interface flent sent from) when it has one;
//! otherwise the user says (`--flent-on station|server`).
//!
//! Both sides are then summarised the same way: txop's results are written as the
//! flent data txop writes for `-o` ([`txop_results::flentfile`]) and read back, and
//! each series' median and p90 are taken over the loaded period of its own run.

use crate::flent_read::{self, FlentData};
use crate::plot::{render_plots, PlotRun};
use crate::run::{self, Failure, Outcome, Plan};
use serde::Serialize;
use serde_json::Value;
use std::fmt::Write;
use std::path::Path;
use txop_results::results::{FlowResult, LatencySummary};
use txop_results::Results;
use txop_sim::traffic::flent::FlentTest;
use txop_sim::traffic::Flow;

/// The scenario `--against` starts from when none is given: flent's test host as one
/// HT20 station behind an AP with Linux 6.16 (`tcp-ndown-6mbit`'s cell).
pub const DEFAULT_BASE: &str = "tcp-ndown-6mbit";

/// Where flent itself ran (its LOCAL_HOST).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FlentSide {
    /// On a station: txop's convention (its tests' "upload" is station → server).
    Station,
    /// On the wired side, behind the AP, with netserver on the stations: the file's
    /// "upload" is txop's download.
    Server,
}

impl FlentSide {
    /// `station` or `server`.
    pub fn from_name(s: &str) -> Option<FlentSide> {
        match s {
            "station" => Some(FlentSide::Station),
            "server" => Some(FlentSide::Server),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            FlentSide::Station => "station",
            FlentSide::Server => "server",
        }
    }
}

/// One real series and the txop series it is held against.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SeriesPair {
    pub real: String,
    pub txop: String,
}

/// A flent file mapped onto a txop flent test.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Mapping {
    /// The file's test (NAME).
    pub real_test: String,
    /// txop's flent test (`traffic.test`).
    pub test: String,
    /// tcp_ndown / tcp_nup streams.
    pub streams: Option<u32>,
    pub length_s: f64,
    pub delay_s: f64,
    /// `traffic.cc`.
    pub cc: String,
    /// `traffic.ecn`.
    pub ecn: bool,
    /// The stations the test needs (rtt_fair: one per distinct host), if it needs a
    /// number.
    pub stations: Option<usize>,
    /// rtt_fair's flows, run as explicit `[[flows]]` (flent's rtt_fair runs a flow
    /// per entry of HOSTS, and a host may be given several times: two flows from one
    /// station, which txop's `rtt_fair_*` preset, one flow per station, cannot say).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flows: Option<Vec<ExplicitFlow>>,
    pub flent_on: FlentSide,
    /// The series compared, in txop's flow order.
    pub series: Vec<SeriesPair>,
    /// Per-flow series of the file that txop's test has no counterpart for.
    pub unmatched: Vec<String>,
    /// How each choice was made, one line each (`cc cubic: TEST_PARAMETERS cc`).
    pub notes: Vec<String>,
}

/// One flow of an rtt_fair test, as txop runs it: a TCP transfer or an ICMP ping
/// between a station and the server, and the label its series has.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ExplicitFlow {
    /// `tcp` or `ping`.
    pub kind: &'static str,
    /// The station (`sta1`…) or `server`.
    pub from: String,
    pub to: String,
    pub label: String,
}

impl Mapping {
    /// The `--set` keys that make the base scenario this test (none for explicit
    /// flows: [`Mapping::edit`] writes those).
    pub fn sets(&self) -> Vec<(String, String)> {
        if self.flows.is_some() {
            return Vec::new();
        }
        let mut s = vec![
            ("traffic.test".to_string(), self.test.clone()),
            ("traffic.length_s".to_string(), fmt_num(self.length_s)),
            ("traffic.delay_s".to_string(), fmt_num(self.delay_s)),
            ("traffic.cc".to_string(), self.cc.clone()),
            ("traffic.ecn".to_string(), self.ecn.to_string()),
        ];
        if let Some(n) = self.streams {
            s.push(("traffic.streams".to_string(), n.to_string()));
        }
        s
    }

    /// For explicit flows, the scenario made to run them: no flent test, the flows with
    /// flent's timing (TCP from DELAY for LENGTH, pings from 0 to the end every 0.2 s,
    /// as flent's `ping -i 0.2`), the run as long as the file's.
    pub fn edit(&self, sc: &mut crate::scenario::Scenario) {
        use crate::scenario::schema::{FlowKind, FlowSpec};
        let Some(flows) = &self.flows else {
            return;
        };
        let total = self.delay_s * 2.0 + self.length_s;
        sc.traffic.test = None;
        sc.duration_s = Some(total);
        sc.flows = flows
            .iter()
            .map(|f| {
                let tcp = f.kind == "tcp";
                FlowSpec {
                    kind: if tcp { FlowKind::Tcp } else { FlowKind::Ping },
                    from: f.from.clone(),
                    to: f.to.clone(),
                    start_s: if tcp { self.delay_s } else { 0.0 },
                    stop_s: Some(if tcp {
                        self.delay_s + self.length_s
                    } else {
                        total
                    }),
                    interval_ms: (!tcp).then_some(200.0),
                    rate_mbps: None,
                    packet_bytes: None,
                    bytes: None,
                    cc: tcp.then(|| self.cc.clone()),
                    ecn: tcp && self.ecn,
                    dscp: 0,
                }
            })
            .collect();
    }
}

fn fmt_num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

/// What the file's test is, in flent's terms (`up`: from flent's host to the remote).
#[derive(Clone, Copy, Debug, PartialEq)]
enum RealTest {
    Ping,
    Tcp1 { up: bool },
    TcpN { up: bool },
    Rrul { be: bool },
    RttFair { up: bool },
}

/// txop's flent tests, for the refusal message.
fn txop_counterparts() -> &'static str {
    "ping, tcp_upload/tcp_download (tcp_1up/tcp_1down), tcp_Nup/tcp_Ndown (tcp_nup/tcp_ndown), \
     rrul, rrul_be, rtt_fair_up, rtt_fair_down"
}

fn real_test(name: &str) -> Option<RealTest> {
    Some(match name {
        "ping" => RealTest::Ping,
        "tcp_upload" | "tcp_1up" => RealTest::Tcp1 { up: true },
        "tcp_download" | "tcp_1down" => RealTest::Tcp1 { up: false },
        "rrul" => RealTest::Rrul { be: false },
        "rrul_be" => RealTest::Rrul { be: true },
        "rtt_fair_up" => RealTest::RttFair { up: true },
        "rtt_fair_down" => RealTest::RttFair { up: false },
        n => {
            let rest = n.strip_prefix("tcp_")?;
            let (count, up) = if let Some(c) = rest.strip_suffix("up") {
                (c, true)
            } else {
                (rest.strip_suffix("down")?, false)
            };
            if count != "n" && count.parse::<u32>().map_or(true, |c| c == 0) {
                return None;
            }
            RealTest::TcpN { up }
        }
    })
}

/// Aggregates flent derives from the per-flow series (`TCP download sum`, `Ping (ms)
/// avg`, `TCP totals`, `TCP upload fairness`): not compared as such; [`table`] sums
/// each direction itself, the same way on both sides.
fn is_aggregate(series: &str) -> bool {
    series == "TCP totals"
        || [" sum", " avg", " fairness", " totals"]
            .iter()
            .any(|s| series.ends_with(s))
}

/// Where flent ran: `given` if the user said, else what the file's EGRESS_INFO tells
/// (a wireless interface, `wl…`, is a station; any other is the wired side).
fn flent_side(data: &FlentData, given: Option<FlentSide>) -> Result<(FlentSide, String), String> {
    if let Some(s) = given {
        return Ok((s, format!("flent ran on the {} (--flent-on)", s.name())));
    }
    if data.metadata.get("LOCAL_HOST").and_then(Value::as_str) == Some("txop") {
        return Ok((
            FlentSide::Station,
            "flent ran on the station (a file txop wrote)".into(),
        ));
    }
    let egress = data.metadata.get("EGRESS_INFO");
    if let Some(iface) = egress.and_then(|e| e.get("iface")).and_then(Value::as_str) {
        let driver = egress
            .and_then(|e| e.get("driver"))
            .and_then(Value::as_str)
            .map(|d| format!(", driver {d}"))
            .unwrap_or_default();
        let side = if iface.starts_with("wl") {
            FlentSide::Station
        } else {
            FlentSide::Server
        };
        return Ok((
            side,
            format!(
                "flent ran on the {} (EGRESS_INFO: interface {iface}{driver})",
                side.name()
            ),
        ));
    }
    Err(
        "the file does not say where flent ran (no EGRESS_INFO): give --flent-on station \
         (flent on the WiFi client) or --flent-on server (flent behind the AP, netserver on \
         the clients)"
            .into(),
    )
}

/// A DSCP as netperf's `-Y` or flent's `dscp` parameter gives it (`CS5`, `EF`, `AF41`,
/// `BE`, a number), as a codepoint (RFC 2474 class selectors CSn = 8n; RFC 3246 EF = 46;
/// RFC 2597 AFxy = 8x + 2y).
fn dscp_value(s: &str) -> Option<u8> {
    let s = s.trim().to_ascii_uppercase();
    match s.as_str() {
        "" | "BE" | "DF" => return Some(0),
        "EF" => return Some(46),
        _ => {}
    }
    if let Some(n) = s.strip_prefix("CS") {
        return n.parse::<u8>().ok().filter(|&n| n <= 7).map(|n| n * 8);
    }
    if let Some(xy) = s.strip_prefix("AF") {
        let d: Vec<u8> = xy.bytes().map(|b| b.wrapping_sub(b'0')).collect();
        if let [x @ 1..=4, y @ 1..=3] = d[..] {
            return Some(8 * x + 2 * y);
        }
        return None;
    }
    s.parse::<u8>().ok().filter(|&v| v < 64)
}

/// The value after `flag` in a command line (`-K cubic,cubic` → `cubic,cubic`).
fn option_of<'a>(command: &'a str, flag: &str) -> Option<&'a str> {
    let mut words = command.split_whitespace();
    while let Some(w) = words.next() {
        if w == flag {
            return words.next();
        }
    }
    None
}

/// A series' runner command from SERIES_META (`COMMAND` in flent ≥ 1.0, `command`
/// before).
fn command_of<'a>(data: &'a FlentData, series: &str) -> Option<&'a str> {
    let m = data.series_meta(series)?;
    m.get("COMMAND")
        .or_else(|| m.get("command"))
        .and_then(Value::as_str)
}

/// txop's `traffic.cc` for a kernel's congestion control name.
fn txop_cc(name: &str) -> Option<&'static str> {
    match name.trim().to_ascii_lowercase().as_str() {
        "cubic" => Some("cubic"),
        "reno" | "newreno" => Some("newreno"),
        "bbr" => Some("bbr"),
        _ => None,
    }
}

/// The congestion control of the file's TCP flows: TEST_PARAMETERS `cc`, else the
/// `-K` of each flow's netperf command (SERIES_META) or its `CONG_CONTROL`, else the
/// flent host's `net.ipv4.tcp_congestion_control` (SYSCTLS) or TCP_CONG_CONTROL, else
/// Linux's default, CUBIC (since 2.6.19).
fn congestion_control(data: &FlentData, tcp: &[&str]) -> Result<(String, String), String> {
    let meta = &data.metadata;
    let param = meta
        .get("TEST_PARAMETERS")
        .and_then(|p| p.get("cc"))
        .and_then(Value::as_str);
    let mut found: Vec<(String, String)> = Vec::new();
    if let Some(cc) = param {
        found.push((cc.to_string(), "TEST_PARAMETERS cc".into()));
    } else {
        for s in tcp {
            let per_flow = command_of(data, s)
                .and_then(|c| option_of(c, "-K"))
                .map(|k| k.split(',').next().unwrap_or(k).to_string())
                .or_else(|| {
                    data.series_meta(s)
                        .and_then(|m| m.get("CONG_CONTROL"))
                        .and_then(Value::as_str)
                        .map(str::to_string)
                });
            if let Some(cc) = per_flow {
                found.push((cc, format!("`{s}`'s metadata")));
            }
        }
    }
    if found.is_empty() {
        let sysctl = meta
            .get("SYSCTLS")
            .and_then(|s| s.get("net.ipv4.tcp_congestion_control"))
            .and_then(Value::as_str)
            .map(|c| {
                (
                    c.to_string(),
                    "SYSCTLS net.ipv4.tcp_congestion_control".into(),
                )
            })
            .or_else(|| {
                meta.get("TCP_CONG_CONTROL")
                    .and_then(Value::as_str)
                    .map(|c| (c.to_string(), "TCP_CONG_CONTROL".into()))
            });
        found.extend(sysctl);
    }
    let Some((first, from)) = found.first().cloned() else {
        return Ok((
            "cubic".into(),
            "cc cubic: not in the file; Linux's default".into(),
        ));
    };
    if let Some((other, at)) = found.iter().find(|(c, _)| !c.eq_ignore_ascii_case(&first)) {
        return Err(format!(
            "its flows use {first} ({from}) and {other} ({at}); txop runs one congestion \
             control for every flow of a test"
        ));
    }
    let cc = txop_cc(&first).ok_or_else(|| {
        format!("congestion control `{first}` ({from}); txop runs cubic, reno (newreno) and bbr")
    })?;
    Ok((cc.to_string(), format!("cc {cc}: {from} `{first}`")))
}

/// ECN on the flows: the flent host's `net.ipv4.tcp_ecn` (SYSCTLS) = 1 requests it on
/// the connections it opens (netperf opens every test connection from flent's side,
/// whichever way the data flows), and Linux's default 2 accepts it on the other side;
/// 0 or 2 request none. A top-level `ECN` (true/false) is taken as it is.
fn ecn(data: &FlentData) -> (bool, String) {
    let meta = &data.metadata;
    if let Some(e) = meta.get("ECN").and_then(Value::as_bool) {
        return (e, format!("ECN {}: ECN", on_off(e)));
    }
    if let Some(v) = meta
        .get("SYSCTLS")
        .and_then(|s| s.get("net.ipv4.tcp_ecn"))
        .and_then(flent_read::number)
    {
        let e = v == 1.0;
        return (
            e,
            format!("ECN {}: SYSCTLS net.ipv4.tcp_ecn = {v}", on_off(e)),
        );
    }
    (
        false,
        "ECN off: not in the file; Linux's default tcp_ecn = 2 requests none".into(),
    )
}

fn on_off(b: bool) -> &'static str {
    if b {
        "on"
    } else {
        "off"
    }
}

/// Map `data` onto one of txop's flent tests. `flent_on` says where flent ran, when
/// the file cannot (see [`FlentSide`]). Errors say why the file cannot be mapped,
/// without its name.
pub fn map(data: &FlentData, flent_on: Option<FlentSide>) -> Result<Mapping, String> {
    let Some(kind) = real_test(&data.name) else {
        return Err(format!(
            "flent test `{}` has no counterpart in txop (it runs {})",
            data.name,
            txop_counterparts()
        ));
    };
    let mut notes = Vec::new();
    let (side, how) = match kind {
        // Pings go from flent's host either way: no direction to tell.
        RealTest::Ping => flent_side(data, flent_on).unwrap_or((
            FlentSide::Station,
            "ping only: the same whichever side flent ran on".into(),
        )),
        _ => flent_side(data, flent_on)?,
    };
    notes.push(how);
    // txop's direction word for the file's.
    let swap = side == FlentSide::Server;
    let dir = |up: bool| if up != swap { "up" } else { "down" };
    let per_flow: Vec<&String> = data.series.keys().filter(|s| !is_aggregate(s)).collect();
    let tcp: Vec<&str> = per_flow
        .iter()
        .filter(|s| s.starts_with("TCP "))
        .map(|s| s.as_str())
        .collect();
    let (test, streams, stations) = match kind {
        RealTest::Ping => ("ping".to_string(), None, None),
        RealTest::Tcp1 { up } => (format!("tcp_1{}", dir(up)), None, None),
        RealTest::TcpN { up } => {
            let n = tcp.iter().filter(|s| s.contains("::")).count() as u32;
            if n == 0 {
                return Err(format!(
                    "`{}` has no per-stream series (`TCP …::1`)",
                    data.name
                ));
            }
            (format!("tcp_n{}", dir(up)), Some(n), None)
        }
        RealTest::Rrul { be } => (if be { "rrul_be" } else { "rrul" }.to_string(), None, None),
        RealTest::RttFair { up } => {
            let hosts = &data.hosts;
            if hosts.is_empty() {
                return Err(format!("`{}` names no HOSTS", data.name));
            }
            if side == FlentSide::Station && distinct(hosts).len() > 1 {
                return Err(format!(
                    "`{}` from one station to {} hosts; txop's rtt_fair runs a flow from \
                     every station to its one server (with netserver on the stations, \
                     give --flent-on server)",
                    data.name,
                    distinct(hosts).len()
                ));
            }
            (
                format!("rtt_fair_{}", dir(up)),
                None,
                Some(distinct(hosts).len()),
            )
        }
    };
    let (cc, cc_note) = if tcp.is_empty() {
        ("cubic".to_string(), "no TCP flows".to_string())
    } else {
        congestion_control(data, &tcp)?
    };
    notes.push(cc_note);
    let (ecn, ecn_note) = ecn(data);
    if !tcp.is_empty() {
        notes.push(ecn_note);
    }
    // txop's flows of that test: their labels and markings.
    let explicit = matches!(kind, RealTest::RttFair { .. })
        .then(|| rtt_fair_flows(&data.hosts, test.ends_with("up")));
    let marks: Vec<(String, u8)> = match &explicit {
        Some(flows) => flows.iter().map(|f| (f.label.clone(), 0)).collect(),
        None => {
            let mut ft = FlentTest::new(&test);
            if let Some(n) = streams {
                ft.streams = n;
            }
            ft.flows(1)
                .map_err(|e| format!("`{}`: {e}", data.name))?
                .iter()
                .filter_map(|f| match f {
                    Flow::Tcp(t) => Some((t.label.clone(), t.dscp)),
                    Flow::Ping(p) => Some((p.label.clone(), p.dscp)),
                    _ => None,
                })
                .collect()
        }
    };
    let mut series = Vec::new();
    let mut unmatched = Vec::new();
    for real in &per_flow {
        let label = txop_label(real, kind, swap, &data.hosts);
        match label.and_then(|l| marks.iter().find(|(m, _)| *m == l)) {
            Some((label, dscp)) => {
                check_dscp(data, real, label, *dscp, &test)?;
                series.push(SeriesPair {
                    real: real.to_string(),
                    txop: label.clone(),
                });
            }
            None => unmatched.push(real.to_string()),
        }
    }
    if let Some(d) = data
        .metadata
        .get("TEST_PARAMETERS")
        .and_then(|p| p.get("dscp"))
        .and_then(Value::as_str)
    {
        for code in d.split(',') {
            if dscp_value(code) != Some(0) {
                return Err(format!(
                    "TEST_PARAMETERS dscp `{d}`; txop's {test} marks its flows best effort (0)"
                ));
            }
        }
    }
    series.sort_by_key(|p| marks.iter().position(|(m, _)| *m == p.txop));
    if series.is_empty() {
        return Err(format!(
            "none of its series ({}) is one of txop's {test}",
            per_flow
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok(Mapping {
        real_test: data.name.clone(),
        test,
        streams,
        length_s: data.length_s,
        delay_s: data.delay_s(),
        cc,
        ecn,
        stations,
        flows: explicit,
        flent_on: side,
        series,
        unmatched,
        notes,
    })
}

/// The distinct hosts of `hosts`, in the order they first appear: station 1, 2 …
fn distinct(hosts: &[String]) -> Vec<&String> {
    let mut out: Vec<&String> = Vec::new();
    for h in hosts {
        if !out.contains(&h) {
            out.push(h);
        }
    }
    out
}

/// rtt_fair's flows in txop: for the k-th entry of HOSTS (its station n, hosts
/// numbered as [`distinct`]) a TCP flow (`up`: station → server) labelled `TCP upload
/// BE<k> sta<n>`, then a ping from the station, `Ping (ms) ICMP<k> sta<n>` (flent's
/// names, with the station for the host).
fn rtt_fair_flows(hosts: &[String], up: bool) -> Vec<ExplicitFlow> {
    let stations = distinct(hosts);
    let sta = |h: &String| {
        let n = stations.iter().position(|x| *x == h).unwrap_or(0) + 1;
        format!("sta{n}")
    };
    let dir = if up { "upload" } else { "download" };
    let mut flows = Vec::new();
    for (k, h) in hosts.iter().enumerate() {
        let (from, to) = if up {
            (sta(h), "server".to_string())
        } else {
            ("server".to_string(), sta(h))
        };
        flows.push(ExplicitFlow {
            kind: "tcp",
            from,
            to,
            label: format!("TCP {dir} BE{} {}", k + 1, sta(h)),
        });
    }
    for (k, h) in hosts.iter().enumerate() {
        flows.push(ExplicitFlow {
            kind: "ping",
            from: sta(h),
            to: "server".into(),
            label: format!("Ping (ms) ICMP{} {}", k + 1, sta(h)),
        });
    }
    flows
}

/// The label of txop's series for the file's series `real`: the same name with the
/// direction word swapped when flent ran on the server; for rtt_fair, the host at the
/// end (`TCP upload BE1 10.0.0.2`) becomes its station (`sta1`, hosts numbered in the
/// order of HOSTS).
fn txop_label(real: &str, kind: RealTest, swap: bool, hosts: &[String]) -> Option<String> {
    let swapped = |s: &str| -> String {
        if !swap {
            return s.to_string();
        }
        if let Some(rest) = s.strip_prefix("TCP upload") {
            format!("TCP download{rest}")
        } else if let Some(rest) = s.strip_prefix("TCP download") {
            format!("TCP upload{rest}")
        } else {
            s.to_string()
        }
    };
    if !matches!(kind, RealTest::RttFair { .. }) {
        return Some(swapped(real));
    }
    // `<what><k> <host>`: k counts the test's flows in the order of HOSTS.
    let (head, host) = real.rsplit_once(' ')?;
    let k_start = head.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let k: usize = head[k_start..].parse().ok()?;
    if hosts.get(k.checked_sub(1)?)? != host {
        return None;
    }
    let station = distinct(hosts).iter().position(|h| *h == host)? + 1;
    Some(swapped(&format!("{head} sta{station}")))
}

/// The file's marking of series `real` (netperf's `-Y` in its SERIES_META command) must
/// be txop's (`dscp`) for the flow it is held against.
fn check_dscp(
    data: &FlentData,
    real: &str,
    label: &str,
    dscp: u8,
    test: &str,
) -> Result<(), String> {
    let Some(y) = command_of(data, real).and_then(|c| option_of(c, "-Y")) else {
        return Ok(());
    };
    let code = y.split(',').next().unwrap_or(y);
    match dscp_value(code) {
        Some(v) if v == dscp => Ok(()),
        _ => Err(format!(
            "`{real}` is marked {code} (netperf -Y {y}); txop's {test} marks `{label}` with \
             DSCP {dscp}"
        )),
    }
}

/// Median and 90th percentile of a series over a run's loaded period.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SeriesStats {
    pub p50: f64,
    pub p90: f64,
    /// The samples they are taken over.
    pub samples: usize,
}

/// The `q` quantile (0–1) of `sorted` (ascending, not empty), interpolated linearly
/// between the closest ranks (Hyndman & Fan type 7: numpy's and R's default, so a
/// reader gets the same figures from the file with either).
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    let h = (sorted.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

/// [`SeriesStats`] of `values` (one per `x_values` step) at the steps within `[from_s,
/// to_s]`, `null`s left out; `None` if no value is there.
pub fn window_stats(
    x_values: &[f64],
    values: &[Option<f64>],
    (from_s, to_s): (f64, f64),
) -> Option<SeriesStats> {
    let mut v: Vec<f64> = x_values
        .iter()
        .zip(values)
        .filter(|(&x, _)| x >= from_s - 1e-9 && x <= to_s + 1e-9)
        .filter_map(|(_, v)| *v)
        .filter(|v| v.is_finite())
        .collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(SeriesStats {
        p50: quantile(&v, 0.5),
        p90: quantile(&v, 0.9),
        samples: v.len(),
    })
}

/// The per-step sum of `members` (a step with no value in any is `None`): a
/// direction's total throughput, as flent's `TCP download sum`.
fn sum_series(data: &FlentData, members: &[&str]) -> Vec<Option<f64>> {
    (0..data.x_values.len())
        .map(|i| {
            let vals: Vec<f64> = members
                .iter()
                .filter_map(|m| data.series.get(*m).and_then(|s| s[i]))
                .collect();
            (!vals.is_empty()).then(|| vals.iter().sum())
        })
        .collect()
}

/// One row of the table: a series (by txop's label) on both sides.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    /// txop's label (a direction's sum: `TCP download sum`).
    pub series: String,
    /// The file's name for it, when it differs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub real_series: Option<String>,
    pub units: String,
    pub real: Option<SeriesStats>,
    pub txop: Option<SeriesStats>,
}

impl Row {
    /// txop / real of the medians.
    pub fn p50_ratio(&self) -> Option<f64> {
        ratio(self.real?.p50, self.txop?.p50)
    }
    /// txop / real of the 90th percentiles.
    pub fn p90_ratio(&self) -> Option<f64> {
        ratio(self.real?.p90, self.txop?.p90)
    }
}

fn ratio(real: f64, txop: f64) -> Option<f64> {
    (real != 0.0).then(|| txop / real)
}

/// The rows: every mapped series, then each direction's sum where it has several
/// flows; each side over its own loaded period.
pub fn rows(mapping: &Mapping, real: &FlentData, txop: &FlentData) -> Vec<Row> {
    let mut out = Vec::new();
    let units = |label: &str| {
        if label.starts_with("Ping") {
            "ms"
        } else {
            "Mbit/s"
        }
        .to_string()
    };
    for p in &mapping.series {
        let stats = |d: &FlentData, name: &str| {
            d.series
                .get(name)
                .and_then(|v| window_stats(&d.x_values, v, d.loaded_s()))
        };
        out.push(Row {
            series: p.txop.clone(),
            real_series: (p.real != p.txop).then(|| p.real.clone()),
            units: units(&p.txop),
            real: stats(real, &p.real),
            txop: stats(txop, &p.txop),
        });
    }
    for dir in ["download", "upload"] {
        let prefix = format!("TCP {dir}");
        let pairs: Vec<&SeriesPair> = mapping
            .series
            .iter()
            .filter(|p| p.txop.starts_with(&prefix))
            .collect();
        if pairs.len() < 2 {
            continue;
        }
        let reals: Vec<&str> = pairs.iter().map(|p| p.real.as_str()).collect();
        let txops: Vec<&str> = pairs.iter().map(|p| p.txop.as_str()).collect();
        out.push(Row {
            series: format!("{prefix} sum"),
            real_series: None,
            units: "Mbit/s".into(),
            real: window_stats(&real.x_values, &sum_series(real, &reals), real.loaded_s()),
            txop: window_stats(&txop.x_values, &sum_series(txop, &txops), txop.loaded_s()),
        });
    }
    out
}

/// The table `txop compare --against` prints.
pub fn table(
    file: &str,
    mapping: &Mapping,
    real: &FlentData,
    scenario: &str,
    seed: u64,
    rows: &[Row],
) -> String {
    let mut s = String::new();
    let title = if real.title.is_empty() {
        String::new()
    } else {
        format!(" \"{}\"", real.title)
    };
    let _ = writeln!(
        s,
        "{file}: {}{title}, {} s of load at {} s steps",
        real.name,
        fmt_num(real.length_s),
        real.step_s
    );
    let streams = mapping
        .streams
        .map(|n| format!(", {n} stream{}", if n == 1 { "" } else { "s" }))
        .unwrap_or_default();
    let _ = writeln!(
        s,
        "txop: {scenario} as {}{streams}, {}, ECN {}, seed {seed}",
        mapping.test,
        mapping.cc,
        on_off(mapping.ecn)
    );
    for n in &mapping.notes {
        let _ = writeln!(s, "  {n}");
    }
    if !mapping.unmatched.is_empty() {
        let _ = writeln!(
            s,
            "  not in txop's {}: {}",
            mapping.test,
            mapping.unmatched.join(", ")
        );
    }
    let (from, to) = real.loaded_s();
    let _ = writeln!(
        s,
        "median and p90 over each run's loaded period (the file's {}–{} s); × is txop / real",
        fmt_num(from),
        fmt_num(to)
    );
    let cell = |x: Option<f64>| x.map_or("—".to_string(), |v| format!("{v:.2}"));
    let ratio_cell = |x: Option<f64>| x.map_or("—".to_string(), |v| format!("{v:.2}×"));
    let head = [
        "series", "units", "real p50", "txop p50", "×", "real p90", "txop p90", "×",
    ];
    let mut lines: Vec<Vec<String>> = vec![head.iter().map(|h| h.to_string()).collect()];
    for r in rows {
        let name = match &r.real_series {
            Some(real) => format!("{} (real: {real})", r.series),
            None => r.series.clone(),
        };
        lines.push(vec![
            name,
            r.units.clone(),
            cell(r.real.map(|x| x.p50)),
            cell(r.txop.map(|x| x.p50)),
            ratio_cell(r.p50_ratio()),
            cell(r.real.map(|x| x.p90)),
            cell(r.txop.map(|x| x.p90)),
            ratio_cell(r.p90_ratio()),
        ]);
    }
    let widths: Vec<usize> = (0..head.len())
        .map(|j| {
            lines
                .iter()
                .map(|l| l[j].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for l in &lines {
        let mut line = String::new();
        for (j, c) in l.iter().enumerate() {
            let pad = " ".repeat(widths[j] - c.chars().count());
            if j == 0 {
                line.push_str(c);
                line.push_str(&pad);
            } else {
                line.push_str("  ");
                line.push_str(&pad);
                line.push_str(c);
            }
        }
        s.push_str(line.trim_end());
        s.push('\n');
    }
    s
}

/// A comparison against a real file, ready to run.
pub struct AgainstPlan {
    file: String,
    real: FlentData,
    mapping: Mapping,
    plan: Plan,
}

/// `txop compare [SCENARIO] --against FILE`: read `file`, map it ([`map`]), and
/// prepare `spec` (default [`DEFAULT_BASE`]) with the mapped keys and then the user's
/// `sets` (`KEY=VALUE`), `seed` overriding the scenario's. Errors are one line naming
/// the file (or the scenario key).
pub fn plan_against(
    file: &Path,
    spec: Option<&str>,
    sets: &[String],
    seed: Option<u64>,
    flent_on: Option<FlentSide>,
) -> Result<AgainstPlan, String> {
    let shown = file.display().to_string();
    let real = flent_read::read(file)?;
    let mapping = map(&real, flent_on).map_err(|e| format!("{shown}: cannot map: {e}"))?;
    let spec = spec.unwrap_or(DEFAULT_BASE);
    let mut all = mapping.sets();
    all.extend(crate::runner::parse_sets(sets)?);
    // The base scenario with the keys, as it is (its stations counted before
    // explicit flows name them).
    let mut plan = run::plan(spec, &all, seed)?;
    let Plan::Single(p) = &plan else {
        return Err(format!(
            "{spec}: --against runs one cell; this scenario has [[bss]]"
        ));
    };
    if let Some(n) = mapping.stations {
        let have = p.cfg.cell.stations.len();
        if have != n {
            return Err(format!(
                "{shown}: {} runs its flows on {n} host{} (one station each) and {spec} has \
                 {have} station{} (--set stations.count={n}, or a scenario with {n})",
                mapping.real_test,
                if n == 1 { "" } else { "s" },
                if have == 1 { "" } else { "s" }
            ));
        }
    }
    if mapping.flows.is_some() {
        plan = Plan::Single(Box::new(crate::runner::prepare_edited(
            spec,
            &all,
            seed,
            &|sc| mapping.edit(sc),
        )?));
    }
    Ok(AgainstPlan {
        file: shown,
        real,
        mapping,
        plan,
    })
}

impl AgainstPlan {
    /// The run in messages.
    pub fn label(&self) -> String {
        format!("{} (against {})", self.plan.label(), self.file)
    }

    /// The simulated time of txop's run, ns.
    pub fn duration_ns(&self) -> u64 {
        self.plan.duration_ns()
    }

    /// The mapping made from the file.
    pub fn mapping(&self) -> &Mapping {
        &self.mapping
    }

    /// Run txop's side and hold it against the file.
    pub fn simulate(self, advance: &(dyn Fn(u64) + Sync)) -> Result<AgainstOutcome, Failure> {
        let Outcome::Single { p, mut results } = self.plan.simulate(advance)? else {
            return Err(Failure::User("--against runs one cell".into()));
        };
        if let Some(flows) = &self.mapping.flows {
            // Explicit flows report in the order given, unlabelled: label them as
            // flent names them.
            let same = results.flows.len() == flows.len()
                && results
                    .flows
                    .iter()
                    .zip(flows)
                    .all(|(r, f)| r.kind == f.kind);
            if !same {
                return Err(Failure::Internal(crate::runner::internal_error_line(
                    Some(&p.label()),
                    "--against: the explicit flows did not report in their order",
                )));
            }
            for (r, f) in results.flows.iter_mut().zip(flows) {
                r.label = f.label.clone();
            }
        }
        let data = txop_results::flentfile::flent_data(
            &results,
            &self.mapping.test,
            &p.name,
            match self.mapping.flows {
                Some(_) => self.mapping.length_s,
                None => p.scenario.traffic.length_s,
            },
            &Default::default(),
        );
        let txop = flent_read::from_value(&data)
            .map_err(|e| Failure::Internal(format!("txop: internal error: its flent data: {e}")))?;
        let rows = rows(&self.mapping, &self.real, &txop);
        Ok(AgainstOutcome {
            file: self.file,
            real: self.real,
            mapping: self.mapping,
            outcome: Outcome::Single { p, results },
            txop_flent: data,
            rows,
        })
    }
}

/// A finished comparison against a real file.
pub struct AgainstOutcome {
    file: String,
    real: FlentData,
    mapping: Mapping,
    outcome: Outcome,
    /// txop's run as flent data.
    txop_flent: Value,
    rows: Vec<Row>,
}

/// What `--json` prints and results.json holds.
#[derive(Serialize)]
struct AgainstReport<'a> {
    txop_version: &'a str,
    scenario: &'a str,
    against: AgainstFile<'a>,
    mapping: &'a Mapping,
    rows: &'a [Row],
    #[serde(skip_serializing_if = "Option::is_none")]
    resolved: Option<&'a crate::scenario::Scenario>,
    results: &'a Results,
}

#[derive(Serialize)]
struct AgainstFile<'a> {
    file: &'a str,
    test: &'a str,
    title: &'a str,
    length_s: f64,
    total_length_s: f64,
    step_s: f64,
    hosts: &'a [String],
}

impl AgainstOutcome {
    fn single(&self) -> (&crate::runner::Prepared, &Results) {
        match &self.outcome {
            Outcome::Single { p, results } => (p, results),
            Outcome::Bsss { .. } => unreachable!("plan_against accepts one cell only"),
        }
    }

    /// The rows of the table.
    pub fn rows(&self) -> &[Row] {
        &self.rows
    }

    /// The table `txop compare --against` prints.
    pub fn summary(&self) -> String {
        let (p, results) = self.single();
        table(
            &self.file,
            &self.mapping,
            &self.real,
            &p.name,
            results.seed,
            &self.rows,
        )
    }

    fn report(&self, resolved: bool) -> AgainstReport<'_> {
        let (p, results) = self.single();
        AgainstReport {
            txop_version: env!("CARGO_PKG_VERSION"),
            scenario: &p.name,
            against: AgainstFile {
                file: &self.file,
                test: &self.real.name,
                title: &self.real.title,
                length_s: self.real.length_s,
                total_length_s: self.real.total_length_s,
                step_s: self.real.step_s,
                hosts: &self.real.hosts,
            },
            mapping: &self.mapping,
            rows: &self.rows,
            resolved: resolved.then_some(&p.scenario),
            results,
        }
    }

    /// What `--json` prints: the file, the mapping, the rows and txop's results.
    pub fn json(&self) -> Result<String, String> {
        run::to_json(&self.report(false))
    }

    /// The results directory: summary.txt (the table), results.json (the `--json`
    /// object with the resolved scenario), the plots with the real run beside txop's,
    /// and txop's flent file (the real one is the user's; it is not copied).
    pub fn files(&self) -> Result<Vec<(String, Vec<u8>)>, String> {
        let (p, results) = self.single();
        let json = serde_json::to_vec_pretty(&self.report(true))
            .map_err(|e| format!("cannot encode results: {e}"))?;
        let mut files = vec![
            ("summary.txt".to_string(), self.summary().into_bytes()),
            ("results.json".to_string(), json),
        ];
        let real = real_results(&self.real, &self.mapping, results);
        let runs = [
            PlotRun {
                label: "real",
                results: &real,
            },
            PlotRun {
                label: "txop",
                results,
            },
        ];
        let file_name = Path::new(&self.file)
            .file_name()
            .map_or(self.file.clone(), |f| f.to_string_lossy().into_owned());
        // A plot's title has room for about 60 characters: long file names (flent's
        // carry a date and the whole title) are cut.
        let file_name = match file_name.char_indices().nth(36) {
            Some((i, _)) => format!("{}…", &file_name[..i]),
            None => file_name,
        };
        let title = format!("{} against {file_name}", p.name);
        files.extend(render_plots(&title, &runs).map_err(|e| format!("plots: {e}"))?);
        match run::flent_file(&p.scenario, &p.name, results)? {
            Some(file) => files.push(file),
            // Explicit flows (rtt_fair): the flent data made from them.
            None => files.push((
                format!(
                    "{}-{}.flent.gz",
                    self.mapping.test,
                    crate::compare::slug(&p.name)
                ),
                gzip_json(&self.txop_flent)?,
            )),
        }
        Ok(files)
    }
}

/// The real run as txop's plots take a run: txop's flows that have a real series, each
/// with the real series in place of txop's (TCP: Mbit/s per step as throughput; pings:
/// each step's RTT as a sample), at the file's step; no stations (the file has no
/// airtime). Only for plotting: every other field is txop's.
fn real_results(real: &FlentData, mapping: &Mapping, txop: &Results) -> Results {
    let mut r = txop.clone();
    r.series_step_s = real.step_s;
    r.duration_s = real.total_length_s;
    r.stations.clear();
    r.groups.clear();
    r.host_buses.clear();
    let window = real.loaded_s();
    let mut flows: Vec<FlowResult> = Vec::new();
    for f in &txop.flows {
        let Some(pair) = mapping.series.iter().find(|p| p.txop == f.label) else {
            continue;
        };
        let Some(values) = real.series.get(&pair.real) else {
            continue;
        };
        let mut g = f.clone();
        // A flent file has no delay budget: without this the plot of where the time
        // goes would draw txop's stages under the real run's name.
        g.delay_budget = Default::default();
        let loaded: Vec<f64> = real
            .x_values
            .iter()
            .zip(values)
            .filter(|(&x, _)| x >= window.0 && x <= window.1)
            .filter_map(|(_, v)| *v)
            .collect();
        let mean = if loaded.is_empty() {
            0.0
        } else {
            loaded.iter().sum::<f64>() / loaded.len() as f64
        };
        if f.kind == "tcp" {
            g.throughput_series_bps = values.iter().map(|v| v.unwrap_or(0.0) * 1e6).collect();
            g.throughput_bps = mean * 1e6;
            g.rtt_samples.clear();
        } else {
            g.rtt_samples = real
                .x_values
                .iter()
                .zip(values)
                .filter_map(|(&x, v)| v.map(|v| (x, v)))
                .collect();
            g.sample_stride = 1;
            g.rtt_ms = summary(&g.rtt_samples.iter().map(|s| s.1).collect::<Vec<_>>());
            g.throughput_series_bps.clear();
            g.throughput_bps = 0.0;
        }
        flows.push(g);
    }
    r.total_throughput_bps = flows.iter().map(|f| f.throughput_bps).sum();
    r.flows = flows;
    r
}

fn gzip_json(v: &Value) -> Result<Vec<u8>, String> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    serde_json::to_writer(&mut e, v)
        .map_err(|e| e.to_string())
        .and_then(|_| e.finish().map_err(|e| e.to_string()))
        .map_err(|e| format!("cannot encode the flent file: {e}"))
}

/// A latency summary of `ms` (exact quantiles, as [`quantile`]).
fn summary(ms: &[f64]) -> Option<LatencySummary> {
    let mut v: Vec<f64> = ms.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(LatencySummary {
        min: v[0],
        mean: v.iter().sum::<f64>() / v.len() as f64,
        p50: quantile(&v, 0.5),
        p90: quantile(&v, 0.9),
        p99: quantile(&v, 0.99),
        max: v[v.len() - 1],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A flent file of `name` with `series` (each a list of values on 0.2 s steps over
    /// `total` s) and extra `metadata`.
    fn file(name: &str, series: &[&str], metadata: Value) -> FlentData {
        let n = 36; // 0 … 7 s
        let x: Vec<f64> = (0..n).map(|i| i as f64 * 0.2).collect();
        let mut results = serde_json::Map::new();
        for s in series {
            results.insert(s.to_string(), json!(vec![1.0; n]));
        }
        let mut meta = json!({
            "NAME": name, "LENGTH": 5, "TOTAL_LENGTH": 7, "STEP_SIZE": 0.2,
            "HOSTS": ["10.0.0.2"],
        });
        for (k, v) in metadata.as_object().unwrap() {
            meta[k] = v.clone();
        }
        flent_read::from_value(&json!({"metadata": meta, "results": results, "x_values": x}))
            .unwrap()
    }

    /// The txop series `m` holds the file's series `real` against.
    fn txop_of(m: &Mapping, real: &str) -> String {
        let p = m.series.iter().find(|p| p.real == real);
        p.unwrap_or_else(|| panic!("{real} not mapped"))
            .txop
            .clone()
    }

    const RRUL: &[&str] = &[
        "Ping (ms) ICMP",
        "Ping (ms) UDP BE",
        "Ping (ms) UDP BK",
        "Ping (ms) UDP EF",
        "Ping (ms) avg",
        "TCP download BE",
        "TCP download BK",
        "TCP download CS5",
        "TCP download EF",
        "TCP download sum",
        "TCP totals",
        "TCP upload BE",
        "TCP upload BK",
        "TCP upload CS5",
        "TCP upload EF",
        "TCP upload sum",
    ];

    #[test]
    fn quantiles_are_numpys_linear_interpolation() {
        // numpy.percentile([1, 2, 3, 4, 10], [50, 90]) = [3.0, 7.6]
        let v = [1.0, 2.0, 3.0, 4.0, 10.0];
        assert_eq!(quantile(&v, 0.5), 3.0);
        assert!((quantile(&v, 0.9) - 7.6).abs() < 1e-12);
        // numpy.percentile([5, 7], [50, 90]) = [6.0, 6.8]
        assert_eq!(quantile(&[5.0, 7.0], 0.5), 6.0);
        assert!((quantile(&[5.0, 7.0], 0.9) - 6.8).abs() < 1e-12);
        assert_eq!(quantile(&[3.0], 0.9), 3.0);
        // Only the window's non-null values count.
        let x = [0.0, 1.0, 2.0, 3.0, 4.0];
        let v = [Some(100.0), Some(4.0), None, Some(2.0), Some(-50.0)];
        let s = window_stats(&x, &v, (1.0, 3.0)).unwrap();
        assert_eq!((s.p50, s.samples), (3.0, 2));
        assert!((s.p90 - 3.8).abs() < 1e-12);
        assert_eq!(window_stats(&x, &v, (1.5, 2.5)), None);
    }

    #[test]
    fn rrul_from_the_wired_side_swaps_directions_and_reads_cc_and_ecn() {
        let d = file(
            "rrul",
            RRUL,
            json!({
                "EGRESS_INFO": {"iface": "eno1", "driver": "e1000e"},
                "SYSCTLS": {"net.ipv4.tcp_congestion_control": "reno", "net.ipv4.tcp_ecn": 1},
            }),
        );
        let m = map(&d, None).unwrap();
        assert_eq!(m.test, "rrul");
        assert_eq!(m.flent_on, FlentSide::Server);
        assert_eq!((m.cc.as_str(), m.ecn), ("newreno", true));
        assert_eq!((m.length_s, m.delay_s), (5.0, 1.0));
        // The file's uploads are txop's downloads; pings keep their names; aggregates
        // are not series of their own.
        assert_eq!(txop_of(&m, "TCP upload CS5"), "TCP download CS5");
        assert_eq!(txop_of(&m, "TCP download BK"), "TCP upload BK");
        assert_eq!(txop_of(&m, "Ping (ms) UDP EF"), "Ping (ms) UDP EF");
        assert_eq!(m.series.len(), 12);
        assert!(m.unmatched.is_empty(), "{:?}", m.unmatched);
        // In txop's flow order: its uploads first (rrul's flows), pings last.
        assert_eq!(m.series[0].txop, "TCP upload BE");
        assert_eq!(m.series[11].txop, "Ping (ms) UDP EF");
        let sets = m.sets();
        assert!(sets.contains(&("traffic.test".into(), "rrul".into())));
        assert!(sets.contains(&("traffic.length_s".into(), "5".into())));
        assert!(sets.contains(&("traffic.delay_s".into(), "1".into())));
        assert!(sets.contains(&("traffic.cc".into(), "newreno".into())));
        assert!(sets.contains(&("traffic.ecn".into(), "true".into())));
        // From a WiFi interface it is the station, as txop's own tests.
        let d = file("rrul", RRUL, json!({"EGRESS_INFO": {"iface": "wlp3s0"}}));
        let m = map(&d, None).unwrap();
        assert_eq!(m.flent_on, FlentSide::Station);
        assert_eq!(
            m.series[0],
            SeriesPair {
                real: "TCP upload BE".into(),
                txop: "TCP upload BE".into()
            }
        );
        // The user's word wins over the file's.
        assert_eq!(
            map(&d, Some(FlentSide::Server)).unwrap().flent_on,
            FlentSide::Server
        );
    }

    #[test]
    fn tcp_n_and_rtt_fair_map_streams_and_hosts() {
        let names: Vec<String> = (1..=12).map(|i| format!("TCP download::{i}")).collect();
        let mut series: Vec<&str> = names.iter().map(String::as_str).collect();
        series.extend(["Ping (ms) ICMP", "TCP download sum", "TCP download avg"]);
        let d = file(
            "tcp_12down",
            &series,
            json!({"TEST_PARAMETERS": {"cc": "bbr"}}),
        );
        let m = map(&d, Some(FlentSide::Server)).unwrap();
        assert_eq!(
            (m.test.as_str(), m.streams, m.cc.as_str()),
            ("tcp_nup", Some(12), "bbr")
        );
        assert_eq!(m.series.len(), 13);
        let m = map(&d, Some(FlentSide::Station)).unwrap();
        assert_eq!(m.test, "tcp_ndown");
        assert!(m.sets().contains(&("traffic.streams".into(), "12".into())));

        let series = [
            "Ping (ms) ICMP1 10.0.0.2",
            "Ping (ms) ICMP2 10.0.0.3",
            "TCP upload BE1 10.0.0.2",
            "TCP upload BE2 10.0.0.3",
            "TCP upload sum",
        ];
        let d = file(
            "rtt_fair_up",
            &series,
            json!({"HOSTS": ["10.0.0.2", "10.0.0.3"], "TEST_PARAMETERS": {"dscp": "CS0,CS0"}}),
        );
        let m = map(&d, Some(FlentSide::Server)).unwrap();
        assert_eq!((m.test.as_str(), m.stations), ("rtt_fair_down", Some(2)));
        let txop: Vec<&str> = m.series.iter().map(|p| p.txop.as_str()).collect();
        assert_eq!(
            txop,
            [
                "TCP download BE1 sta1",
                "TCP download BE2 sta2",
                "Ping (ms) ICMP1 sta1",
                "Ping (ms) ICMP2 sta2"
            ]
        );
    }

    #[test]
    fn rtt_fair_with_a_host_given_twice_runs_two_flows_from_its_station() {
        let series = [
            "Ping (ms) ICMP1 h1",
            "Ping (ms) ICMP2 h1",
            "Ping (ms) ICMP3 h2",
            "TCP upload BE1 h1",
            "TCP upload BE2 h1",
            "TCP upload BE3 h2",
            "TCP upload fairness",
        ];
        let d = file("rtt_fair_up", &series, json!({"HOSTS": ["h1", "h1", "h2"]}));
        let m = map(&d, Some(FlentSide::Server)).unwrap();
        assert_eq!((m.test.as_str(), m.stations), ("rtt_fair_down", Some(2)));
        assert!(m.sets().is_empty(), "explicit flows, no preset");
        let flows = m.flows.as_ref().unwrap();
        let tcp: Vec<(&str, &str, &str)> = flows
            .iter()
            .filter(|f| f.kind == "tcp")
            .map(|f| (f.from.as_str(), f.to.as_str(), f.label.as_str()))
            .collect();
        assert_eq!(
            tcp,
            [
                ("server", "sta1", "TCP download BE1 sta1"),
                ("server", "sta1", "TCP download BE2 sta1"),
                ("server", "sta2", "TCP download BE3 sta2")
            ]
        );
        assert_eq!(txop_of(&m, "TCP upload BE2 h1"), "TCP download BE2 sta1");
        assert_eq!(txop_of(&m, "Ping (ms) ICMP3 h2"), "Ping (ms) ICMP3 sta2");
        assert_eq!(m.series.len(), 6);
        // The scenario made: no preset, the flows on flent's timing (LENGTH 5 s
        // between 1 s of pings alone).
        let mut sc = crate::scenario::parse("[traffic]\ntest = \"tcp_ndown\"", &[]).unwrap();
        m.edit(&mut sc);
        assert_eq!((sc.traffic.test.clone(), sc.duration_s), (None, Some(7.0)));
        assert_eq!(sc.flows.len(), 6);
        assert_eq!((sc.flows[0].start_s, sc.flows[0].stop_s), (1.0, Some(6.0)));
        assert_eq!((sc.flows[5].start_s, sc.flows[5].stop_s), (0.0, Some(7.0)));
        assert_eq!(sc.flows[5].from, "sta2");
    }

    #[test]
    fn files_that_cannot_be_mapped_are_refused_with_the_reason() {
        let err = |name: &str, series: &[&str], meta: Value, side: Option<FlentSide>| {
            map(&file(name, series, meta), side).unwrap_err()
        };
        let server = Some(FlentSide::Server);
        assert_eq!(
            err("cubic_bbr", &["TCP upload"], json!({}), server),
            "flent test `cubic_bbr` has no counterpart in txop (it runs ping, \
             tcp_upload/tcp_download (tcp_1up/tcp_1down), tcp_Nup/tcp_Ndown \
             (tcp_nup/tcp_ndown), rrul, rrul_be, rtt_fair_up, rtt_fair_down)"
        );
        assert!(err("rtt_fair4be", &[], json!({}), server).contains("`rtt_fair4be`"));
        // No word on where flent ran: the user is asked.
        assert!(err("rrul", RRUL, json!({}), None).starts_with(
            "the file does not say where flent ran (no EGRESS_INFO): give --flent-on"
        ));
        // Flows to two servers from one station: not txop's rtt_fair.
        let series = [
            "TCP upload BE1 h1",
            "TCP upload BE2 h1",
            "Ping (ms) ICMP1 h1",
        ];
        assert!(err(
            "rtt_fair_up",
            &series,
            json!({"HOSTS": ["h1", "h2"]}),
            Some(FlentSide::Station)
        )
        .contains("from one station to 2 hosts"));
        // A congestion control txop lacks, and two at once.
        assert_eq!(
            err(
                "tcp_upload",
                &["TCP upload"],
                json!({"TEST_PARAMETERS": {"cc": "westwood"}}),
                server
            ),
            "congestion control `westwood` (TEST_PARAMETERS cc); txop runs cubic, reno \
             (newreno) and bbr"
        );
        let mixed = json!({"SERIES_META": {
            "TCP upload BE": {"COMMAND": "netperf -H h -t TCP_STREAM -- -K cubic,cubic"},
            "TCP upload BK": {"COMMAND": "netperf -H h -t TCP_STREAM -Y CS1,CS1 -- -K bbr,bbr"},
        }});
        assert!(err("rrul", RRUL, mixed, Some(FlentSide::Station))
            .contains("its flows use cubic (`TCP upload BE`'s metadata) and bbr"));
        // A marking other than txop's for that flow (rrul's BK flow is CS1).
        let marked = json!({"SERIES_META": {
            "TCP upload BK": {"COMMAND": "netperf -H h -Y CS5,CS5 -t TCP_STREAM"},
        }});
        assert_eq!(
            err("rrul", RRUL, marked, Some(FlentSide::Station)),
            "`TCP upload BK` is marked CS5 (netperf -Y CS5,CS5); txop's rrul marks `TCP \
             upload BK` with DSCP 8"
        );
        let fair = ["TCP upload BE1 h1", "Ping (ms) ICMP1 h1"];
        assert_eq!(
            err(
                "rtt_fair_up",
                &fair,
                json!({"HOSTS": ["h1"], "TEST_PARAMETERS": {"dscp": "CS5,CS5"}}),
                server
            ),
            "TEST_PARAMETERS dscp `CS5,CS5`; txop's rtt_fair_down marks its flows best effort (0)"
        );
    }

    #[test]
    fn dscp_names_are_codepoints() {
        for (name, v) in [
            ("CS0", 0),
            ("cs1", 8),
            ("CS5", 40),
            ("EF", 46),
            ("AF41", 34),
            ("BE", 0),
            ("10", 10),
        ] {
            assert_eq!(dscp_value(name), Some(v), "{name}");
        }
        for bad in ["CS8", "AF51", "64", "XX"] {
            assert_eq!(dscp_value(bad), None, "{bad}");
        }
    }
}
