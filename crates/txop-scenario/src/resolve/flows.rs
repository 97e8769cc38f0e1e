//! Flows: `[traffic]`'s flent test or bulk traffic, `[traffic.web]` and `[[flows]]`,
//! within the limits on offered load.

use crate::error::ScenarioError;
use crate::limits;
use crate::resolve::choose_in;
use crate::schema::{Direction, TrafficKind};
use crate::schema::{FlowKind, FlowSpec, Scenario, WebSpec};
use txop_core::cell::CellConfig;
use txop_core::Nanos;
use txop_core::NodeId;
use txop_sim::tcp::CongestionControl;
use txop_sim::traffic::cbr::Cbr;
use txop_sim::traffic::flent::FlentTest;
use txop_sim::traffic::ping::Ping;
use txop_sim::traffic::saturated::Saturated;
use txop_sim::traffic::tcp::TcpFlow;
use txop_sim::traffic::web::WebPage;
use txop_sim::traffic::{Flow, Host};

/// The offered rate of a constant-rate flow of `packet_bytes`-byte packets at
/// `rate_mbps`, in bit/s, within [`limits::MAX_FLOW_RATE_MBPS`] and
/// [`limits::MIN_PACKET_INTERVAL_NS`]; the error names `key` and the allowed range.
pub(crate) fn cbr_rate_bps(
    key: &str,
    rate_mbps: f64,
    packet_bytes: u32,
) -> Result<u64, ScenarioError> {
    // One packet per MIN_PACKET_INTERVAL_NS: packet_bytes × 8 bits per µs.
    let per_interval_mbps = packet_bytes as f64 * 8.0 * 1e3 / limits::MIN_PACKET_INTERVAL_NS as f64;
    let max = limits::MAX_FLOW_RATE_MBPS.min(per_interval_mbps);
    if rate_mbps.is_finite() && rate_mbps > 0.0 && rate_mbps <= max {
        return Ok((rate_mbps * 1e6) as u64);
    }
    let why = if max < limits::MAX_FLOW_RATE_MBPS {
        format!(" with {packet_bytes}-byte packets (one per µs at most)")
    } else {
        String::new()
    };
    Err(ScenarioError::new(
        key,
        format!("must be above 0 and at most {max} Mbit/s{why}"),
    ))
}

/// [`limits::INTERVAL_MS`] in words.
pub(crate) fn interval_range() -> String {
    let (lo, hi) = limits::INTERVAL_MS;
    format!("{lo} ms to {hi} ms (1 hour)")
}

/// A probe or ping interval within [`limits::INTERVAL_MS`], as a duration.
pub(crate) fn interval(key: &str, ms: f64) -> Result<Nanos, ScenarioError> {
    let (lo, hi) = limits::INTERVAL_MS;
    if ms.is_finite() && (lo..=hi).contains(&ms) {
        Ok(Nanos::from_secs_f64(ms / 1000.0))
    } else {
        Err(ScenarioError::new(
            key,
            format!("must be {}", interval_range()),
        ))
    }
}

/// Packets per simulated second an open-loop flow offers (a ping counts its replies);
/// 0 for closed-loop ones (saturated, TCP, web), whose pace the cell sets.
pub(crate) fn offered_packets_per_s(flow: &Flow) -> f64 {
    match flow {
        Flow::Cbr(c) => 1e9 / c.interval().as_ns().max(1) as f64,
        Flow::Ping(p) => 2.0 * 1e9 / p.interval.as_ns().max(1) as f64,
        Flow::Saturated(_) | Flow::Tcp(_) | Flow::Web(_) => 0.0,
    }
}

impl Scenario {
    /// The page load of `[traffic.web]`.
    pub(crate) fn web_flow(&self, w: &WebSpec, stations: u16) -> Result<Flow, ScenarioError> {
        let key = |k: &str| format!("traffic.web.{k}");
        if w.station == 0 || w.station > stations {
            return Err(ScenarioError::new(
                key("station"),
                format!("no station {} in this cell", w.station),
            ));
        }
        if w.connections == 0 || w.connections > 64 {
            return Err(ScenarioError::new(key("connections"), "must be 1 to 64"));
        }
        if !(w.start_s.is_finite() && w.start_s >= 0.0) {
            return Err(ScenarioError::new(
                key("start_s"),
                "must be 0 or more seconds",
            ));
        }
        let mut page = WebPage::seed_page(Host::Station(w.station), w.connections, 0x7765_6200);
        if let Some(objects) = &w.objects_bytes {
            if objects.is_empty() || objects.contains(&0) {
                return Err(ScenarioError::new(
                    key("objects_bytes"),
                    "needs at least one object, none empty",
                ));
            }
            page.objects_bytes = objects.clone();
        }
        page.start = Nanos::from_secs_f64(w.start_s);
        if let Some(r) = w.repeat_after_s {
            if !(r.is_finite() && r >= 0.0) {
                return Err(ScenarioError::new(
                    key("repeat_after_s"),
                    "must be 0 or more seconds",
                ));
            }
            page.repeat_after = Some(Nanos::from_secs_f64(r));
        }
        Ok(Flow::Web(page))
    }

    /// The flent test of `[traffic]`.
    /// The host named `name` in `[[flows]]`.
    pub(crate) fn host(key: &str, name: &str, stations: u16) -> Result<Host, ScenarioError> {
        match name {
            "server" => Ok(Host::Server),
            "ap" | "AP" => Ok(Host::Ap),
            _ => match name.strip_prefix("sta").and_then(|n| n.parse::<u16>().ok()) {
                Some(n) if (1..=stations).contains(&n) => Ok(Host::Station(n)),
                Some(n) => Err(ScenarioError::new(
                    key,
                    format!("no station {n} (the cell has {stations})"),
                )),
                None => Err(ScenarioError::new(
                    key,
                    format!("unknown host `{name}`; expected server, ap or sta1…sta{stations}"),
                )),
            },
        }
    }

    /// `[[flows]]` entry `i` as a simulator flow.
    pub(crate) fn explicit_flow(
        &self,
        i: usize,
        f: &FlowSpec,
        stations: u16,
    ) -> Result<Flow, ScenarioError> {
        let key = |k: &str| format!("flows[{i}].{k}");
        let from = Self::host(&key("from"), &f.from, stations)?;
        let to = Self::host(&key("to"), &f.to, stations)?;
        if matches!(from, Host::Station(_)) == matches!(to, Host::Station(_)) {
            return Err(ScenarioError::new(
                key("to"),
                "must be across the air from `from` (one end a station, the other the AP side)",
            ));
        }
        if !(f.start_s.is_finite() && f.start_s >= 0.0) {
            return Err(ScenarioError::new(
                key("start_s"),
                "must be 0 or more seconds",
            ));
        }
        let start = Nanos::from_secs_f64(f.start_s);
        let stop = match f.stop_s {
            Some(s) if !(s.is_finite() && s > f.start_s) => {
                return Err(ScenarioError::new(key("stop_s"), "must be after start_s"))
            }
            s => s.map(Nanos::from_secs_f64),
        };
        if f.dscp > 63 {
            return Err(ScenarioError::new(key("dscp"), "must be 0–63"));
        }
        let hash = (txop_core::rng::mix64(0x666c_6f77 ^ i as u64) >> 32) as u32;
        let size = |default: u32, min: u32| -> Result<u32, ScenarioError> {
            match f.packet_bytes.unwrap_or(default) {
                b if (min..=7_900).contains(&b) => Ok(b),
                _ => Err(ScenarioError::new(
                    key("packet_bytes"),
                    format!("must be {min} to 7900 bytes"),
                )),
            }
        };
        let unused = |name: &str, given: bool| -> Result<(), ScenarioError> {
            if given {
                return Err(ScenarioError::new(
                    key(name),
                    format!("does not apply to a {:?} flow", f.kind).to_lowercase(),
                ));
            }
            Ok(())
        };
        unused(
            "rate_mbps",
            f.rate_mbps.is_some() && f.kind != FlowKind::Cbr,
        )?;
        unused("bytes", f.bytes.is_some() && f.kind != FlowKind::Tcp)?;
        unused("cc", f.cc.is_some() && f.kind != FlowKind::Tcp)?;
        unused("ecn", f.ecn && f.kind != FlowKind::Tcp)?;
        unused(
            "interval_ms",
            f.interval_ms.is_some() && !matches!(f.kind, FlowKind::Ping | FlowKind::UdpPing),
        )?;
        Ok(match f.kind {
            FlowKind::Tcp => {
                unused("packet_bytes", f.packet_bytes.is_some())?;
                let mut t = TcpFlow::bulk(from, to, hash);
                t.start = start;
                t.stop = stop;
                t.dscp = f.dscp;
                t.bytes = f.bytes;
                t.cfg.ecn = f.ecn;
                t.cfg.cc = choose_in(
                    &key("cc"),
                    f.cc.as_deref().unwrap_or("cubic"),
                    &[
                        ("cubic", CongestionControl::Cubic),
                        ("newreno", CongestionControl::NewReno),
                        ("bbr", CongestionControl::Bbr),
                    ],
                )?;
                Flow::Tcp(t)
            }
            FlowKind::Ping | FlowKind::UdpPing => {
                let mut p = if f.kind == FlowKind::Ping {
                    Ping::new(from, to, hash)
                } else {
                    Ping::irtt(from, to, hash)
                };
                if let Some(ms) = f.interval_ms {
                    p.interval = interval(&key("interval_ms"), ms)?;
                }
                p.len_bytes = size(p.len_bytes, 28)?;
                p.start = start;
                p.stop = stop;
                p.dscp = f.dscp;
                Flow::Ping(p)
            }
            FlowKind::Cbr => {
                if stop.is_some() {
                    return Err(ScenarioError::new(
                        key("stop_s"),
                        "constant-rate flows run to the end",
                    ));
                }
                let Some(rate) = f.rate_mbps else {
                    return Err(ScenarioError::new(
                        key("rate_mbps"),
                        "a cbr flow needs its rate",
                    ));
                };
                let len_bytes = size(1500, 1)?;
                Flow::Cbr(Cbr {
                    src: from.node(),
                    dst: to.node(),
                    len_bytes,
                    tid: 0,
                    dscp: f.dscp,
                    rate_bps: cbr_rate_bps(&key("rate_mbps"), rate, len_bytes)?,
                    start,
                    flow_hash: hash,
                    probe: false,
                })
            }
        })
    }

    pub(crate) fn flent_test(&self, name: &str) -> Result<FlentTest, ScenarioError> {
        let t = &self.traffic;
        let mut f = FlentTest::new(name);
        for (key, v) in [("length_s", t.length_s), ("delay_s", t.delay_s)] {
            if !(v.is_finite() && (0.0..=100_000.0).contains(&v)) {
                return Err(ScenarioError::new(
                    format!("traffic.{key}"),
                    "must be 0 to 100000 seconds",
                ));
            }
        }
        // Checked here, not in the test's own check, so that the error names the key.
        if t.streams == 0 || t.streams > 1000 {
            return Err(ScenarioError::new("traffic.streams", "must be 1 to 1000"));
        }
        f.length = Nanos::from_secs_f64(t.length_s);
        f.delay = Nanos::from_secs_f64(t.delay_s);
        f.streams = t.streams;
        f.station = t.station;
        f.ecn = t.ecn;
        f.cc = choose_in(
            "traffic.cc",
            &t.cc,
            &[
                ("cubic", CongestionControl::Cubic),
                ("newreno", CongestionControl::NewReno),
                ("bbr", CongestionControl::Bbr),
            ],
        )?;
        Ok(f)
    }

    /// All open-loop sources together offer at most
    /// [`limits::MAX_OFFERED_PACKETS_PER_S`]; the error names the key whose flows offer
    /// the most (each source is within its own key's range already, but thousands of
    /// them may not be). `bulk_flows`: how many of `[traffic]`'s flows precede its
    /// probes when neither `[[flows]]` nor a flent test replaced them.
    pub(crate) fn check_offered_packets(
        &self,
        flows: &[Flow],
        bulk_flows: usize,
    ) -> Result<(), ScenarioError> {
        let total: f64 = flows.iter().map(offered_packets_per_s).sum();
        if total <= limits::MAX_OFFERED_PACKETS_PER_S {
            return Ok(());
        }
        // Whose flows these are: [[flows]] entries one by one, or [traffic]'s.
        let mut by_key: Vec<(String, f64)> = Vec::new();
        for (i, flow) in flows.iter().enumerate() {
            let key = if !self.flows.is_empty() {
                // [[flows]] entry i is flow i (a web page after them offers nothing).
                match flow {
                    Flow::Cbr(_) => format!("flows[{i}].rate_mbps"),
                    _ => format!("flows[{i}].interval_ms"),
                }
            } else if self.traffic.test.is_some() {
                "traffic.test".to_string()
            } else if i < bulk_flows {
                "traffic.rate_mbps".to_string()
            } else {
                "traffic.probe_interval_ms".to_string()
            };
            let pps = offered_packets_per_s(flow);
            match by_key.iter_mut().find(|(k, _)| *k == key) {
                Some((_, sum)) => *sum += pps,
                None => by_key.push((key, pps)),
            }
        }
        let key = by_key
            .iter()
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map_or(String::new(), |(k, _)| k.clone());
        Err(ScenarioError::new(
            key,
            format!(
                "the flows would offer {total:.3e} packets per simulated second in all; \
                 at most {:.0e} (lower the rate, lengthen the interval or use fewer flows)",
                limits::MAX_OFFERED_PACKETS_PER_S
            ),
        ))
    }

    /// The flows of `[traffic]`, its flent test, `[traffic.web]` and `[[flows]]` for
    /// `cell`'s stations, and the run's duration.
    pub(crate) fn traffic_flows(
        &self,
        cell: &CellConfig,
    ) -> Result<ResolvedTraffic, ScenarioError> {
        let t = &self.traffic;
        if t.tid > 7 {
            return Err(ScenarioError::new("traffic.tid", "must be 0–7"));
        }
        if t.packet_bytes == 0 || t.packet_bytes > 7_900 {
            return Err(ScenarioError::new(
                "traffic.packet_bytes",
                "must be 1 to 7900 bytes (an MSDU)",
            ));
        }
        if t.depth > limits::MAX_DEPTH_PACKETS {
            return Err(ScenarioError::new(
                "traffic.depth",
                format!(
                    "must be 0 (automatic) to {} packets",
                    limits::MAX_DEPTH_PACKETS
                ),
            ));
        }
        let depth = if t.depth > 0 {
            t.depth
        } else if cell.aggregation {
            2 * cell.max_ampdu_subframes as u32
        } else {
            4
        };
        if t.dscp > 63 {
            return Err(ScenarioError::new("traffic.dscp", "must be 0–63"));
        }
        let cbr_rate_bps = match t.kind {
            TrafficKind::Cbr => cbr_rate_bps("traffic.rate_mbps", t.rate_mbps, t.packet_bytes)?,
            TrafficKind::Saturated => 0,
        };
        if t.probe_interval_ms != 0.0 {
            interval("traffic.probe_interval_ms", t.probe_interval_ms).map_err(|e| {
                ScenarioError::new(e.key, format!("must be 0 (none) or {}", interval_range()))
            })?;
        }
        if t.probe_interval_ms > 0.0 && (t.probe_bytes == 0 || t.probe_bytes > 7_900) {
            return Err(ScenarioError::new(
                "traffic.probe_bytes",
                "must be 1 to 7900 bytes",
            ));
        }
        let n = cell.stations.len() as u16;
        let mut pairs = Vec::new();
        for i in 1..=n {
            let sta = NodeId(i);
            if matches!(t.direction, Direction::Downlink | Direction::Both) {
                pairs.push((NodeId::AP, sta));
            }
            if matches!(t.direction, Direction::Uplink | Direction::Both) {
                pairs.push((sta, NodeId::AP));
            }
        }
        let hash = |k: u64| (txop_core::rng::mix64(k ^ 0x7478_6f70) >> 32) as u32;
        let mut flows = Vec::new();
        for &(src, dst) in &pairs {
            let index = flows.len() as u64;
            flows.push(match t.kind {
                TrafficKind::Saturated => Flow::Saturated(Saturated {
                    src,
                    dst,
                    len_bytes: t.packet_bytes,
                    tid: t.tid,
                    depth,
                }),
                TrafficKind::Cbr => {
                    let cbr = Cbr {
                        src,
                        dst,
                        len_bytes: t.packet_bytes,
                        tid: t.tid,
                        dscp: t.dscp,
                        rate_bps: cbr_rate_bps,
                        start: Nanos::ZERO,
                        flow_hash: hash(index),
                        probe: false,
                    };
                    // Independent senders: spread the flows' phases over one interval so
                    // that no flow always arrives first at a shared queue.
                    let phase = cbr.interval().as_ns() * index / pairs.len() as u64;
                    Flow::Cbr(Cbr {
                        start: Nanos(phase),
                        ..cbr
                    })
                }
            });
        }
        if t.probe_interval_ms > 0.0 {
            let interval_s = t.probe_interval_ms / 1000.0;
            for (k, &(src, dst)) in pairs.iter().enumerate() {
                let index = flows.len() as u64;
                flows.push(Flow::Cbr(Cbr {
                    src,
                    dst,
                    len_bytes: t.probe_bytes,
                    tid: t.tid,
                    dscp: t.dscp,
                    rate_bps: ((t.probe_bytes as f64 * 8.0) / interval_s).max(1.0) as u64,
                    // Spread the probes' phases so they do not all arrive together.
                    start: Nanos::from_secs_f64(interval_s * (k as f64 + 0.5) / pairs.len() as f64),
                    flow_hash: hash(index),
                    probe: true,
                }));
            }
        }
        let mut duration = Nanos::from_secs_f64(self.duration_s.unwrap_or(10.0));
        if let Some(name) = &t.test {
            let test = self.flent_test(name)?;
            if t.station == 0 || t.station > n {
                return Err(ScenarioError::new(
                    "traffic.station",
                    format!("no station {} in this cell (1 to {n})", t.station),
                ));
            }
            flows = test
                .flows(n)
                .map_err(|e| ScenarioError::new("traffic.test", e))?;
            if self.duration_s.is_none() {
                duration = test.total();
            }
        }
        if !self.flows.is_empty() {
            if t.test.is_some() {
                return Err(ScenarioError::new(
                    "flows",
                    "give either [[flows]] or traffic.test, not both",
                ));
            }
            flows = self
                .flows
                .iter()
                .enumerate()
                .map(|(i, f)| self.explicit_flow(i, f, n))
                .collect::<Result<_, _>>()?;
        }
        if let Some(web) = &t.web {
            flows.push(self.web_flow(web, n)?);
        }
        Ok(ResolvedTraffic {
            flows,
            duration,
            pairs: pairs.len(),
        })
    }
}

/// A scenario's flows, resolved for its cell.
pub(crate) struct ResolvedTraffic {
    /// Every flow: the bulk traffic and probes, a flent test's, `[[flows]]`, the web page.
    pub(crate) flows: Vec<Flow>,
    /// How long the run lasts: `duration_s`, else the flent test's, else 10 s.
    pub(crate) duration: Nanos,
    /// How many station–AP pairs the bulk traffic and probes run between.
    pub(crate) pairs: usize,
}
