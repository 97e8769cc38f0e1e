//! The model's own view of an emulator run, in the simulator's results format
//! ([`txop_results::Results`]: per-station airtime, throughput, drops, host buses;
//! per-flow latency and throughput series), plus what only the emulator has: CE marks
//! written into real headers, packets refused at the edge, and the timing error.

use crate::addr::{Plan, Site};
use crate::engine::{Counters, Engine};
use crate::runloop::LoopStats;
use crate::timing::TimingSummary;
use serde::Serialize;
use txop_core::Nanos;
use txop_results::results::{
    beacon_airtime, bits_per_s, bus_results, host_bus_rows, jain_index, station_results,
};
use txop_results::{Conservation, Results};

/// What only the emulator reports.
#[derive(Clone, Debug, Serialize)]
pub struct EmuReport {
    pub counters: Counters,
    /// Packets the TUN devices dropped before the emulator read them (their queues
    /// overflowed): not seen by the model at all. Should be 0.
    pub tun_queue_drops: u64,
    /// CE marks the model set, per station (index 0 is station 1): [uplink, downlink].
    pub ce_marks_per_station: Vec<[u64; 2]>,
    /// Actual minus modelled write time of every packet written.
    pub timing_error: TimingSummary,
    /// The same for the first write of each modelled instant (see
    /// `Engine::lateness_first`).
    pub timing_error_first_write: TimingSummary,
    #[serde(rename = "loop")]
    pub loop_stats: LoopStats,
    /// CPU use of the real-time loop, as a fraction of one core.
    pub cpu_fraction: f64,
}

/// Build the run's results at `end` (its duration; `seed` is the cell's).
///
/// Flows name their ends as the simulator does: this BSS's hosts `server`, `staN`;
/// another BSS's of `plan` `NAME.staN` (a packet between BSSs is counted in both, each
/// on its own side of the junction, [`crate::engine`]).
pub fn results(engine: &Engine, end: Nanos, seed: u64, plan: &Plan) -> Results {
    let secs = end.as_secs_f64();
    let net = engine.network();
    let cell = net.cell();
    let busy = cell.busy_ns();
    let (mut stations, mut total_bytes) = station_results(cell, secs);
    host_bus_rows(net, &mut stations, &mut total_bytes, secs);
    let shares: Vec<f64> = stations.iter().map(|s| s.airtime_share).collect();
    let c = &engine.counters;
    let world_stations = plan.stations();
    Results {
        seed,
        duration_s: secs,
        series_step_s: txop_results::flowstats::series_step(secs).as_secs_f64(),
        total_throughput_bps: bits_per_s(total_bytes, secs),
        busy_fraction: if secs > 0.0 {
            busy as f64 / (secs * 1e9)
        } else {
            0.0
        },
        airtime_jain_index: jain_index(&shares),
        beacon_airtime_ns: beacon_airtime(cell).0,
        beacon_airtime_share: beacon_airtime(cell).1,
        stations,
        groups: Vec::new(),
        flows: engine.flows.results(secs, &|addr| {
            Site::of(addr, &world_stations)
                .filter(|s| s.bss != engine.bss())
                .map(|s| plan.name(s))
        }),
        host_buses: bus_results(net, end, secs),
        kernel_code: txop_results::results::kernel_code(cell),
        conservation: Conservation {
            // What entered at the junction was offered here; what left there, delivered.
            offered_packets: c.offered_packets + c.junction_in,
            delivered_packets: c.written_packets + c.junction_out,
            dropped_packets: c.cell_drops + c.wire_drops + c.bus_drops + c.write_errors,
            inside_packets: engine.packets_inside() as u64,
        },
    }
}

/// The emulator's own figures.
pub fn emu_report(engine: &Engine, loop_stats: LoopStats, tun_queue_drops: u64) -> EmuReport {
    EmuReport {
        counters: engine.counters,
        tun_queue_drops,
        ce_marks_per_station: engine.marks.iter().skip(1).copied().collect(),
        timing_error: engine.lateness.summary(),
        timing_error_first_write: engine.lateness_first.summary(),
        loop_stats,
        cpu_fraction: loop_stats.cpu_fraction(),
    }
}

/// The emulator lines of the summary.
pub fn emu_summary(r: &EmuReport) -> String {
    let c = &r.counters;
    let t = &r.timing_error;
    let l = &r.loop_stats;
    let mut s = String::new();
    s.push_str(&format!(
        "emulator: {} packets in, {} out ({:.1} Mbit/s), {} dropped by the cell, {} by the wire, {} CE marks\n",
        c.read_packets,
        c.written_packets,
        if l.wall_s > 0.0 { c.written_bytes as f64 * 8.0 / l.wall_s / 1e6 } else { 0.0 },
        c.cell_drops,
        c.wire_drops,
        c.ce_marks
    ));
    if c.bus_drops > 0 {
        s.push_str(&format!(
            "          {} dropped by the stations' host buses\n",
            c.bus_drops
        ));
    }
    if r.tun_queue_drops > 0 {
        s.push_str(&format!(
            "          warning: the TUN devices dropped {} packets before the emulator read them (it fell behind)\n",
            r.tun_queue_drops
        ));
    }
    let refused = c.not_ip + c.malformed + c.unroutable + c.slab_full + c.write_errors;
    if refused > 0 {
        s.push_str(&format!(
            "          refused: {} not IP, {} malformed, {} to no cell address, {} slab full, {} write errors\n",
            c.not_ip, c.malformed, c.unroutable, c.slab_full, c.write_errors
        ));
    }
    s.push_str(&format!(
        "          timing error (actual − modelled write time) over {} writes: median {:.1} µs, p90 {:.1} µs, p99 {:.1} µs, max {:.1} µs\n",
        t.samples, t.p50_us, t.p90_us, t.p99_us, t.max_us
    ));
    let f = &r.timing_error_first_write;
    s.push_str(&format!(
        "          first write of each delivery instant ({} of them): median {:.1} µs, p99 {:.1} µs\n",
        f.samples, f.p50_us, f.p99_us
    ));
    s.push_str(&format!(
        "          CPU {:.0}% of one core over {:.1} s\n",
        r.cpu_fraction * 100.0,
        l.wall_s
    ));
    s
}
