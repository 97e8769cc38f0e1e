//! What a run reports. Serialised as the `--json` object (documented in
//! `docs/results.md`).

use serde::Serialize;
use txop_core::cell::Cell;
use txop_core::mac80211::powersave::PsStats;
use txop_core::mac80211::rate_control::RateControlKind;
use txop_core::mac80211::scan::ScanStats;
use txop_core::network::Network;
use txop_core::series::{series_shift, series_step};
use txop_core::{Nanos, StationId};

/// One run's results.
#[derive(Clone, Debug, Serialize)]
pub struct Results {
    pub seed: u64,
    pub duration_s: f64,
    /// The step of every flow's `throughput_series_bps` and TCP series (`cwnd_series_bytes` …), s:
    /// flent's 0.2 s, doubled as often as needed for the run to fit
    /// [`crate::flowstats::SERIES_MAX_STEPS`] steps.
    pub series_step_s: f64,
    /// Payload bits delivered per second, all stations, both directions.
    pub total_throughput_bps: f64,
    /// Fraction of the run the medium was busy.
    pub busy_fraction: f64,
    /// Jain's fairness index over the stations' airtime shares.
    pub airtime_jain_index: f64,
    /// The AP's beacons' airtime (0 when beacons are not modelled), and its share of
    /// the medium's busy time: with the stations' `airtime_share`s it sums to 1.
    pub beacon_airtime_ns: u64,
    pub beacon_airtime_share: f64,
    pub stations: Vec<StationResult>,
    /// The stations by group (a `[[stations.list]]` entry or a `group` key): per group,
    /// the spread across its stations ([`group_results`]). Filled in by whoever knows
    /// the scenario (txop-report); absent when nobody did.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<GroupResult>,
    pub flows: Vec<FlowResult>,
    pub conservation: Conservation,
    /// The host buses of the stations that have one (absent when none has).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub host_buses: Vec<BusResult>,
    /// Which kernel code ran in place of txop's Rust for the radio-wide units
    /// (`[kernel] units`: `fq`, `aql`, `scheduler`, `airtime`), on every node ([`kernel_code`]); absent when
    /// none did.
    /// A station's rate control names its own (`rate_control.code`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub kernel_code: Vec<CodeResult>,
}

/// The kernel code `cell`'s stack runs in place of txop's Rust (`[kernel] units`), as
/// [`Results::kernel_code`] lists it.
pub fn kernel_code(cell: &Cell) -> Vec<CodeResult> {
    let stack = &cell.config().stack;
    let aql = match &stack.queue_limit {
        txop_core::stack::QueueLimit::Aql { params, .. } => params.code,
        _ => None,
    };
    let fq = stack.fq_code.iter().map(|c| c.0.origin());
    let scheduler = stack.scheduler_code.iter().map(|c| c.0.origin());
    let airtime = stack.airtime_code.iter().map(|c| c.0.origin());
    fq.chain(aql.iter().map(|c| c.0.origin()))
        .chain(scheduler)
        .chain(airtime)
        .map(CodeResult::of)
        .collect()
}

/// One station's host bus (`txop_core::driver::bus`): what crossed it and what it
/// cost the host.
#[derive(Clone, Debug, Serialize)]
pub struct BusResult {
    pub station: u16,
    /// Packets handed from the host to the chip, and from the chip to the host.
    pub packets_to_device: u64,
    pub packets_to_host: u64,
    /// Bus transfers each way (device → host includes status reads and polls).
    pub transfers_to_device: u64,
    pub transfers_to_host: u64,
    /// Bytes on the wire each way (framing and block padding included).
    pub bytes_to_device: u64,
    pub bytes_to_host: u64,
    /// Interrupts taken (card interrupts and DMA completions).
    pub interrupts: u64,
    /// Polls of the card, and those that found its interrupt pending.
    pub polls: u64,
    pub polls_with_work: u64,
    /// Wake-ups of the receiving process: services that handed packets to the host.
    pub context_switches: u64,
    /// Fraction of the run the host CPU was busy (driver and host work), and of it
    /// the bus driver's share of the run.
    pub cpu_busy_fraction: f64,
    pub cpu_driver_fraction: f64,
    /// Fraction of the run the bus was in a command or data phase.
    pub bus_busy_fraction: f64,
    /// Packets dropped: host backlog full, host → device queue full, chip's receive
    /// buffers full.
    pub dropped_host_backlog: u64,
    pub dropped_host_tx_queue: u64,
    pub dropped_device_rx: u64,
}

/// One traffic flow's outcome.
#[derive(Clone, Debug, Serialize)]
pub struct FlowResult {
    pub flow: u32,
    /// What the flow is (docs/results.md, "Flow kinds"): "saturated", "cbr"
    /// (constant-rate UDP), "probe" (sparse constant-rate probes), "ping" (ICMP echo),
    /// "udp_ping" (irtt-like UDP echo), "tcp" (bulk TCP) or "web" (page loads); the
    /// emulator's flows by protocol ("tcp", "udp", "icmp", "ip", "other").
    pub kind: String,
    /// The flent series it fills ("" outside flent tests); in the emulator, the
    /// 5-tuple.
    pub label: String,
    /// Hosts: "server", "AP" (injected at the AP), "sta1"…
    pub src: String,
    pub dst: String,
    /// What the flow is and where it runs, for tables, legends and datasets: its label
    /// (or its kind in words) and its ends, `TCP download BE (server → sta1)`,
    /// `probe (AP → sta1)` ([`flow_name`]).
    pub name: String,
    /// Packets handed to the network: data, echo requests, TCP data segments
    /// (retransmissions included; not the handshake, pure ACKs or web requests).
    pub offered_packets: u64,
    /// Of those, the ones (or their echo replies) that arrived.
    pub delivered_packets: u64,
    /// Of those, the ones (or their echo replies) lost on the way.
    pub dropped_packets: u64,
    /// Of the drops, those by CoDel or flow-queue overload.
    pub dropped_aqm: u64,
    pub throughput_bps: f64,
    /// One-way delay, application to application, ms.
    pub latency_ms: Option<LatencySummary>,
    /// From entering the driver/firmware to leaving the cell, ms.
    pub driver_latency_ms: Option<LatencySummary>,
    /// Ping round-trip times, ms.
    pub rtt_ms: Option<LatencySummary>,
    /// TCP (and web): the sender's RTT samples, one per ACK that advanced its window,
    /// the ones its RTT estimator (srtt, RTO) takes: from the timestamp the ACK echoes,
    /// that of the earliest segment it acknowledges (RFC 7323), ms; `None` for other
    /// flows.
    pub tcp_rtt_ms: Option<LatencySummary>,
    /// Throughput per step of [`Results::series_step_s`] from the start (flent's
    /// sampling, 0.2 s in runs up to 409.6 s).
    pub throughput_series_bps: Vec<f64>,
    /// Every `sample_stride`-th echo reply: [time s, RTT ms].
    pub rtt_samples: Vec<(f64, f64)>,
    /// The same replies: [time s, forward one-way ms, return one-way ms].
    pub owd_samples: Vec<(f64, f64, f64)>,
    /// The sample lists (`rtt_samples`, `owd_samples`, `page_load_times_s`) hold
    /// every n-th entry, first included (1: all; doubles each time a flow outgrows
    /// [`crate::flowstats::SAMPLES_MAX`]).
    pub sample_stride: u64,
    /// TCP and web: data segments retransmitted by the sender (the connections of a
    /// web page summed); `None` for other flows.
    pub retransmits: Option<u64>,
    /// TCP and web: the sender's retransmission timeouts (RTOs); `None` for other
    /// flows.
    pub timeouts: Option<u64>,
    /// TCP: the sender's congestion window at the end of each step (bytes), up to the
    /// step of its last ACK.
    pub cwnd_series_bytes: Vec<u64>,
    /// TCP: the sender's smoothed RTT (RFC 6298 SRTT, what `ss -ti` shows as `rtt`)
    /// at the end of each step, ms; `null` before its first RTT sample; as long as
    /// `cwnd_series_bytes` (empty for other flows).
    pub srtt_series_ms: Vec<Option<f64>>,
    /// TCP: the sender's pacing rate at the end of each step, bit/s (`null` before its
    /// first ACK); empty for a sender that does not pace (CUBIC and Reno unless
    /// `pacing` is on) and for other flows.
    pub pacing_rate_series_bps: Vec<Option<u64>>,
    /// TCP: the sender's delivery rate at the end of each step, payload bit/s
    /// (`tcpi_delivery_rate`: the last rate sample of `tcp_rate.c` that was not
    /// application-limited, or an application-limited one at least as fast); `null`
    /// before its first valid sample; empty for other flows.
    pub delivery_rate_series_bps: Vec<Option<u64>>,
    /// BBR: the modes its sender was in during each step ("STARTUP", "DRAIN",
    /// "PROBE_BW", "PROBE_RTT", in that order), empty before its first ACK; empty for
    /// other flows.
    pub bbr_mode_series: Vec<Vec<&'static str>>,
    /// Web: every `sample_stride`-th completed page load, seconds.
    pub page_load_times_s: Vec<f64>,
    /// Mean |ΔRTT| between consecutive replies (IPDV, jitter), ms.
    pub ipdv_ms: Option<f64>,
    /// Fraction of echo requests (up to the last one answered) never answered.
    pub echo_loss: Option<f64>,
    /// Where the one-way delay went, stage by stage (docs/results.md, "The delay
    /// budget"): the flow's own direction (data, echo requests), and back (TCP's
    /// ACKs, echo replies). `None` for a direction no packet took.
    pub delay_budget: DelayBudgetResult,
}

/// A flow's delay budget, each way.
#[derive(Clone, Debug, Default, Serialize)]
pub struct DelayBudgetResult {
    /// Packets from the flow's source to its destination: the packets of
    /// `latency_ms` (for TCP, the data segments that advanced what the receiver
    /// had; for pings, the requests).
    pub forward: Option<DirectionBudget>,
    /// Packets the other way: TCP's ACKs, echo replies.
    pub back: Option<DirectionBudget>,
}

/// The delay budget of the packets one way.
#[derive(Clone, Debug, Serialize)]
pub struct DirectionBudget {
    /// Packets whose delay was split.
    pub packets: u64,
    /// Packets whose delay could not be split (a stamp out of order): 0 unless the
    /// model has a bug.
    pub unsplit_packets: u64,
    /// The split packets' delays added up, ns (each from its application sending to
    /// its application receiving, measured apart from the stages).
    pub delay_sum_ns: u64,
    /// Each stage, in the packet's order.
    pub stages: Vec<StageBudget>,
}

/// One stage of a delay budget.
#[derive(Clone, Debug, Serialize)]
pub struct StageBudget {
    /// `to_cell`, `qdisc`, `txq`, `driver`, `access`, `retries`, `air`, `reorder`,
    /// `from_cell`.
    pub stage: &'static str,
    /// The stage's time over every split packet, ns: the stages' sums add up to
    /// `delay_sum_ns`.
    pub sum_ns: u64,
    /// Per packet, ms: `mean` (the means add up to the mean delay), `p50`, `p99`
    /// (percentiles do not add up; `None` for TCP's ACKs, which record means only).
    pub mean_ms: f64,
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
}

impl FlowResult {
    /// Whether the flow measures round trips (ping, UDP echo): its delay is `rtt_ms`
    /// and its throughput (the echoes' bytes) is not a load.
    pub fn is_echo(&self) -> bool {
        self.kind == "ping" || self.kind == "udp_ping"
    }

    /// Whether the flow measures delay rather than carrying a load (echo flows and
    /// probes): tables show its delay and no throughput.
    pub fn is_measurement(&self) -> bool {
        self.is_echo() || self.kind == "probe"
    }

    /// The delay a reader compares across flows: the round-trip time of an echo flow,
    /// the one-way delay of any other (docs/results.md, "Flow kinds").
    pub fn delay_ms(&self) -> Option<LatencySummary> {
        if self.is_echo() {
            self.rtt_ms
        } else {
            self.latency_ms
        }
    }

    /// Sets [`FlowResult::name`] again after `src` or `dst` changed (an end in another
    /// BSS, known by its name only to the caller).
    pub fn rename(&mut self) {
        self.name = flow_name(&self.kind, &self.label, &self.src, &self.dst);
    }
}

/// A flow's kind in words, for its name when it has no label.
pub fn kind_words(kind: &str) -> &str {
    match kind {
        "saturated" => "saturated",
        "cbr" => "constant-rate UDP",
        "probe" => "probe",
        "ping" => "ICMP ping",
        "udp_ping" => "UDP echo",
        "tcp" => "bulk TCP",
        "web" => "web page loads",
        other => other,
    }
}

/// A flow's name: its label (the flent series, or the emulator's 5-tuple), or else its
/// kind in words, then its ends: `TCP download BE (server → sta1)`, `probe (AP → sta1)`.
pub fn flow_name(kind: &str, label: &str, src: &str, dst: &str) -> String {
    let what = if label.is_empty() {
        kind_words(kind)
    } else {
        label
    };
    format!("{what} ({src} → {dst})")
}

/// A latency distribution, ms: the exact minimum, mean and maximum, and percentiles
/// from a histogram (hdrhistogram's layout, 2 significant digits: each the highest
/// value of its bucket, at most 1 % above the true percentile, and never outside
/// [`min`, `max`]).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct LatencySummary {
    pub min: f64,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
}

/// Stations reported together: their spread of throughput, airtime and latency
/// (docs/results.md, "Station groups").
#[derive(Clone, Debug, Serialize)]
pub struct GroupResult {
    /// The `group` key, else the `[[stations.list]]` entry (`list[0]` for `stations.list[0]`).
    pub name: String,
    /// Its stations' numbers.
    pub stations: Vec<u16>,
    /// Across its stations: [`StationResult::throughput_bps`].
    pub throughput_bps: Spread,
    /// Across its stations: [`StationResult::airtime_share`].
    pub airtime_share: Spread,
    /// Across its stations that have a flow with a delay: each station's latency, the
    /// largest median delay ([`FlowResult::delay_ms`] p50) of the flows it sends or
    /// receives, ms; `None` when none has one.
    pub latency_ms: Option<Spread>,
    /// How many of its stations `latency_ms` covers.
    pub latency_stations: usize,
}

/// A spread across stations: the smallest, the 10th, 50th and 90th percentiles (nearest
/// rank: each is one station's value) and the largest.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Spread {
    pub min: f64,
    pub p10: f64,
    pub p50: f64,
    pub p90: f64,
    pub max: f64,
}

impl Spread {
    /// The spread of `values` (`None` if there are none): percentile q is the value of
    /// rank ⌈q·n⌉ in ascending order (nearest rank), so a group of one is that value
    /// five times.
    pub fn of(values: &[f64]) -> Option<Spread> {
        if values.is_empty() {
            return None;
        }
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let rank = |q: f64| v[((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
        Some(Spread {
            min: v[0],
            p10: rank(0.1),
            p50: rank(0.5),
            p90: rank(0.9),
            max: v[v.len() - 1],
        })
    }
}

/// The station `sta` of a flow's end (`"sta7"` → 7), if that end is one of this BSS's
/// stations (not the server, the AP or another BSS's `NAME.staN`).
pub fn station_of(end: &str) -> Option<u16> {
    end.strip_prefix("sta").and_then(|n| n.parse().ok())
}

/// Each station's latency, ms, indexed by station number: the largest p50 of
/// [`FlowResult::delay_ms`] among the flows that start or end at it.
pub fn station_latencies_ms(flows: &[FlowResult]) -> std::collections::BTreeMap<u16, f64> {
    let mut out = std::collections::BTreeMap::new();
    for f in flows {
        let Some(d) = f.delay_ms() else { continue };
        for sta in [station_of(&f.src), station_of(&f.dst)]
            .into_iter()
            .flatten()
        {
            let e = out.entry(sta).or_insert(d.p50);
            *e = f64::max(*e, d.p50);
        }
    }
    out
}

/// The groups' results: `groups` are (name, station numbers) as the scenario makes
/// them; a station number with no row in `stations` is left out.
pub fn group_results(
    stations: &[StationResult],
    flows: &[FlowResult],
    groups: &[(String, Vec<u16>)],
) -> Vec<GroupResult> {
    let latency = station_latencies_ms(flows);
    groups
        .iter()
        .map(|(name, members)| {
            let rows: Vec<&StationResult> = members
                .iter()
                .filter_map(|&n| stations.iter().find(|s| s.station == n))
                .collect();
            let col = |f: &dyn Fn(&StationResult) -> f64| -> Vec<f64> {
                rows.iter().map(|s| f(s)).collect()
            };
            let lat: Vec<f64> = rows
                .iter()
                .filter_map(|s| latency.get(&s.station).copied())
                .collect();
            let zero = Spread {
                min: 0.0,
                p10: 0.0,
                p50: 0.0,
                p90: 0.0,
                max: 0.0,
            };
            GroupResult {
                name: name.clone(),
                stations: rows.iter().map(|s| s.station).collect(),
                throughput_bps: Spread::of(&col(&|s| s.throughput_bps)).unwrap_or(zero),
                airtime_share: Spread::of(&col(&|s| s.airtime_share)).unwrap_or(zero),
                latency_ms: Spread::of(&lat),
                latency_stations: lat.len(),
            }
        })
        .collect()
}

/// One station's share of the run.
#[derive(Clone, Debug, Serialize)]
pub struct StationResult {
    pub station: u16,
    /// The link's modulation and rate.
    pub rate: String,
    pub throughput_bps: f64,
    pub uplink_bps: f64,
    pub downlink_bps: f64,
    /// This station's airtime (both directions) over the airtime of every transmission
    /// ([`Cell::airtime_total_ns`]: the medium's busy time in one collision domain); the
    /// stations' shares and [`Results::beacon_airtime_share`] sum to 1.
    pub airtime_share: f64,
    pub airtime_ns: u64,
    pub ppdus: u64,
    pub mpdus: u64,
    pub collisions: u64,
    pub failures: u64,
    pub mpdu_retries: u64,
    pub dropped_queue_full: u64,
    pub dropped_retry_limit: u64,
    /// Dropped by CoDel or flow-queue overload.
    pub dropped_aqm: u64,
    /// Its background scans, when it scans.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scan: Option<ScanStats>,
    /// Its power save and the AP's buffering for it, when it saves power.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub power_save: Option<PsStats>,
    /// The rates its rate control chose, when that is not fixed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_control: Option<RateControlResult>,
}

/// What a station's rate control did, per direction of its link.
#[derive(Clone, Debug, Serialize)]
pub struct RateControlResult {
    /// The rate control ("ideal", "minstrel_ht", …).
    pub kind: String,
    /// Which code ran, for code from outside txop (`minstrel_ht-kernel`: the kernel's
    /// own, built from the tarball or tree named here); absent for txop's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<CodeResult>,
    /// Station → AP.
    pub uplink: LinkRateResult,
    /// AP → station.
    pub downlink: LinkRateResult,
}

/// Where the code a station's rate control ran came from
/// (`txop_core::mac80211::rate_control::CodeOrigin`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CodeResult {
    /// The unit the code replaces (`minstrel_ht`).
    pub unit: String,
    /// The tarball or source tree it was built from.
    pub path: String,
    /// The kernel version of its top Makefile, or `unknown`.
    pub version: String,
    /// FNV-1a 64 of the kernel files compiled (hexadecimal).
    pub fnv64: String,
}

impl CodeResult {
    /// What results say of code from `o`.
    pub fn of(o: &txop_core::mac80211::rate_control::CodeOrigin) -> CodeResult {
        CodeResult {
            unit: o.unit.to_string(),
            path: o.path.clone(),
            version: o.version.clone(),
            fnv64: o.fnv64.clone(),
        }
    }
}

/// The rates one direction of a link went out at.
#[derive(Clone, Debug, Serialize)]
pub struct LinkRateResult {
    /// Every rate used, in the rate control's order (slowest group first).
    pub rates: Vec<RateShareResult>,
    /// Data PPDU transmissions per stage of the retry chain (the first stage, its
    /// fallbacks, …).
    pub stage_tries: Vec<u64>,
    /// Probes sent (PPDUs whose first try went out at a sample rate).
    pub probes: u64,
    /// Their airtime over the direction's data airtime.
    pub probe_airtime_share: f64,
    /// The airtime-weighted mean PHY rate per step of [`Results::series_step_s`], bit/s
    /// (0 for a step without transmissions).
    pub rate_series_bps: Vec<f64>,
}

/// One rate's use.
#[derive(Clone, Debug, Serialize)]
pub struct RateShareResult {
    /// The modulation and rate.
    pub rate: String,
    /// Transmissions at it (first tries and retries).
    pub ppdus: u64,
    /// Their airtime.
    pub airtime_ns: u64,
    /// Their airtime over the direction's data airtime.
    pub airtime_share: f64,
}

/// One direction of `station`'s link under a rate control other than fixed, over a run
/// of `secs` seconds.
fn link_rate_result(cell: &Cell, station: StationId, uplink: bool, secs: f64) -> LinkRateResult {
    let s = cell.stats()[station.node().index()];
    let link = if uplink { s.up } else { s.down };
    let used = cell.rate_use(station, uplink);
    let total: u64 = used.iter().map(|u| u.airtime_ns).sum();
    let share = |ns: u64| {
        if total > 0 {
            ns as f64 / total as f64
        } else {
            0.0
        }
    };
    let shift = series_shift(secs);
    let steps = (secs / series_step(secs).as_secs_f64()).ceil() as usize;
    LinkRateResult {
        rates: used
            .iter()
            .filter(|u| u.ppdus > 0)
            .map(|u| RateShareResult {
                rate: u.txv.modulation_label(),
                ppdus: u.ppdus,
                airtime_ns: u.airtime_ns,
                airtime_share: share(u.airtime_ns),
            })
            .collect(),
        stage_tries: link.stage_tries.to_vec(),
        probes: link.probes,
        probe_airtime_share: share(link.probe_airtime_ns),
        rate_series_bps: cell
            .rate_series(station, uplink)
            .map(|r| r.mean_rate_bps(shift, steps))
            .unwrap_or_default(),
    }
}

/// The AP's beacon airtime (ns) and its share of the medium's busy time (0 when the
/// medium was never busy): the part of the busy time no station's share holds.
pub fn beacon_airtime(cell: &Cell) -> (u64, f64) {
    let (ns, busy) = (cell.beacon_airtime_ns(), cell.airtime_total_ns());
    (
        ns,
        if busy > 0 {
            ns as f64 / busy as f64
        } else {
            0.0
        },
    )
}

/// Mean rate (bit/s) of `bytes` delivered over `secs` seconds; 0 for an empty run.
pub fn bits_per_s(bytes: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        bytes as f64 * 8.0 / secs
    } else {
        0.0
    }
}

/// Every station's share of a run of `secs` seconds, from the cell's counters (the
/// simulator and the emulator both report this), and the payload bytes delivered.
pub fn station_results(cell: &Cell, secs: f64) -> (Vec<StationResult>, u64) {
    let busy = cell.airtime_total_ns();
    let cfg = cell.config();
    let rate = |b: u64| bits_per_s(b, secs);
    let mut total_bytes = 0;
    let stations = cell
        .stats()
        .iter()
        .enumerate()
        .skip(1)
        .map(|(i, s)| {
            let bytes = s.up.delivered_bytes + s.down.delivered_bytes;
            total_bytes += bytes;
            let sta = i as u16;
            let sc = &cfg.stations[i - 1];
            let rc = sc.rate_control.resolved(cfg.stack.minstrel_era);
            let own = match rc {
                RateControlKind::Fixed => sc.tx.modulation_label(),
                _ => rc.name().to_string(),
            };
            StationResult {
                station: sta,
                // A direction with a rate of its own says so: `down HT20 MCS3 LGI, up
                // minstrel_ht-6`.
                rate: match (sc.fixed_downlink, sc.fixed_uplink) {
                    (None, None) => own,
                    (down, up) => {
                        let label = |t: Option<txop_core::phy::TxVector>| {
                            t.map_or(own.clone(), |t| t.modulation_label())
                        };
                        format!("down {}, up {}", label(down), label(up))
                    }
                },
                throughput_bps: rate(bytes),
                uplink_bps: rate(s.up.delivered_bytes),
                downlink_bps: rate(s.down.delivered_bytes),
                airtime_share: if busy > 0 {
                    s.airtime_ns() as f64 / busy as f64
                } else {
                    0.0
                },
                airtime_ns: s.airtime_ns(),
                ppdus: s.up.ppdus + s.down.ppdus,
                mpdus: s.up.mpdus + s.down.mpdus,
                collisions: s.up.collisions + s.down.collisions,
                failures: s.up.failures + s.down.failures,
                mpdu_retries: s.up.mpdu_retries + s.down.mpdu_retries,
                dropped_queue_full: s.up.dropped_queue_full + s.down.dropped_queue_full,
                dropped_retry_limit: s.up.dropped_retry_limit + s.down.dropped_retry_limit,
                dropped_aqm: s.up.dropped_aqm + s.down.dropped_aqm,
                scan: cfg
                    .station_scans
                    .iter()
                    .any(|c| c.station.0 == sta)
                    .then_some(s.scan),
                power_save: cfg
                    .station_power_save
                    .iter()
                    .any(|c| c.station.0 == sta)
                    .then_some(s.ps),
                rate_control: match rc {
                    RateControlKind::Fixed => None,
                    kind => Some(RateControlResult {
                        kind: kind.name().to_string(),
                        code: match kind {
                            RateControlKind::External(code) => {
                                Some(CodeResult::of(code.0.origin()))
                            }
                            _ => None,
                        },
                        uplink: link_rate_result(cell, StationId(sta), true, secs),
                        downlink: link_rate_result(cell, StationId(sta), false, secs),
                    }),
                },
            }
        })
        .collect();
    (stations, total_bytes)
}

/// Packet accounting: offered = delivered + dropped + inside.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Conservation {
    pub offered_packets: u64,
    pub delivered_packets: u64,
    pub dropped_packets: u64,
    /// Still queued, in the air, or held in a reorder buffer at the end.
    pub inside_packets: u64,
}

/// Jain's fairness index (Σx)² / (n·Σx²): 1 when all equal, 1/n when one takes all.
pub fn jain_index(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let sum: f64 = xs.iter().sum();
    let sq: f64 = xs.iter().map(|x| x * x).sum();
    if sq == 0.0 {
        1.0
    } else {
        sum * sum / (n * sq)
    }
}

/// The rows of stations with a host bus count what their host got: downlink is what
/// crossed the bus to the host (not what reached the chip over the air), and the bus's
/// drops (host backlog, host → device queue, chip receive buffers: full queues all)
/// are in `dropped_queue_full`. `total_bytes` follows. `stations` are
/// [`station_results`] of `net`'s cell over `secs` seconds.
pub fn host_bus_rows(
    net: &Network,
    stations: &mut [StationResult],
    total_bytes: &mut u64,
    secs: f64,
) {
    for (station, bus) in net.host_buses() {
        let i = station as usize - 1;
        let Some(row) = stations.get_mut(i) else {
            continue;
        };
        let air = &net.cell().stats()[i + 1];
        let (up, down) = (air.up.delivered_bytes, net.bus_to_host_bytes(station));
        *total_bytes = *total_bytes - air.down.delivered_bytes + down;
        row.downlink_bps = bits_per_s(down, secs);
        row.throughput_bps = bits_per_s(up + down, secs);
        let s = bus.stats();
        row.dropped_queue_full +=
            s.dropped_host_backlog + s.dropped_host_tx_queue + s.dropped_device_rx;
    }
}

/// The host buses' counters over a run of `secs` seconds ending at `now`, busy times
/// counted up to `now` (`HostBus::stats_until`: a transfer that would outlast the run
/// counts only its part inside it).
pub fn bus_results(net: &Network, now: Nanos, secs: f64) -> Vec<BusResult> {
    let frac = |ns: u64| {
        if secs > 0.0 {
            ns as f64 / 1e9 / secs
        } else {
            0.0
        }
    };
    net.host_buses()
        .map(|(station, bus)| {
            let s = bus.stats_until(now);
            BusResult {
                station,
                packets_to_device: s.packets_to_device,
                packets_to_host: s.packets_to_host,
                transfers_to_device: s.transfers_to_device,
                transfers_to_host: s.transfers_to_host,
                bytes_to_device: s.bytes_to_device,
                bytes_to_host: s.bytes_to_host,
                interrupts: s.interrupts,
                polls: s.polls,
                polls_with_work: s.polls_with_work,
                context_switches: s.context_switches,
                cpu_busy_fraction: frac(s.cpu_busy_ns()),
                cpu_driver_fraction: frac(s.cpu_driver_ns),
                bus_busy_fraction: frac(s.bus_busy_ns),
                dropped_host_backlog: s.dropped_host_backlog,
                dropped_host_tx_queue: s.dropped_host_tx_queue,
                dropped_device_rx: s.dropped_device_rx,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Nearest rank over 1…10: p10 is the 1st value, p50 the 5th, p90 the 9th; one
    /// value is all five; none is none.
    #[test]
    fn spread_is_nearest_rank() {
        let v: Vec<f64> = (1..=10).rev().map(f64::from).collect();
        let s = Spread::of(&v).unwrap();
        assert_eq!(
            (s.min, s.p10, s.p50, s.p90, s.max),
            (1.0, 1.0, 5.0, 9.0, 10.0)
        );
        let hundred: Vec<f64> = (1..=100).map(f64::from).collect();
        let s = Spread::of(&hundred).unwrap();
        assert_eq!((s.p10, s.p50, s.p90), (10.0, 50.0, 90.0));
        let one = Spread::of(&[3.5]).unwrap();
        assert_eq!(
            (one.min, one.p10, one.p50, one.p90, one.max),
            (3.5, 3.5, 3.5, 3.5, 3.5)
        );
        assert!(Spread::of(&[]).is_none());
    }

    #[test]
    fn jain_index_bounds() {
        assert!((jain_index(&[1.0, 1.0, 1.0]) - 1.0).abs() < 1e-12);
        assert!((jain_index(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
    }
}
