//! E3 (seed 002): fq_codel on ath10k at 6 Mbit/s; rtt_fair_up over 1, 2 and 4 stations
//! and over a fast and a slow station.

use super::{median, ms, rtts, station_ping, tcp_bps, Ctx, Report};
use txop_results::Results;

const SLOW: &str = "e3-ath10k-6mbit";
const PAIR: &str = "e3-rtt-fair-up";
const EQUAL: &str = "e3-rtt-fair-up-n";
const POWER_SAVE: &str = "e3-power-save";
/// hostapd's beacon interval, 100 TU (`e3-power-save` keeps it).
const BEACON_INTERVAL_MS: f64 = 102.4;

/// Throughput (Mbit/s) of the TCP flow from station `sta`, over `secs` of load.
fn station_tcp_mbps(r: &Results, sta: &str, secs: f64) -> f64 {
    r.flows
        .iter()
        .filter(|f| f.kind == "tcp" && f.src == sta)
        .map(|f| f.throughput_bps)
        .sum::<f64>()
        * r.duration_s
        / secs
        / 1e6
}

pub(super) fn run(ctx: &mut Ctx<'_>) -> Result<Report, String> {
    let mut rep = Report::new(
        "E3",
        "fq_codel on ath10k (seed 002)",
        &[SLOW, PAIR, EQUAL, POWER_SAVE],
    );
    // 4 streams at 6.5 Mbit/s: load from 5 s to 35 s.
    let fifo = ctx.sim(SLOW, &[])?;
    let fq = ctx.sim(
        SLOW,
        &[
            ("stack", "linux-4.9"),
            ("stack_options.driver", "ath9k"),
            ("stack_options.driver_queue_packets", "123"),
        ],
    )?;
    rep.figure(
        "ath10k-6mbit",
        "E3: 4 TCP downloads at 6.5 Mbit/s",
        &[("FIFO (ath10k-like)", &fifo), ("fq_codel (linux-4.9)", &fq)],
    );
    let (lat_fifo, lat_fq) = (
        station_ping(&fifo, "sta1", 7.0, 35.0)?,
        station_ping(&fq, "sta1", 7.0, 35.0)?,
    );
    rep.row(
        "4 streams at ~6 Mbit/s: ping RTT, FIFO (median)",
        "~2.5 s",
        ms(lat_fifo),
        "1 – 7.5 s",
        (1000.0..7500.0).contains(&lat_fifo),
    );
    rep.row(
        "… with fq_codel in the driver (median)",
        "< 20 ms",
        ms(lat_fq),
        "< 40 ms and ≥ 20× below FIFO",
        lat_fq < 40.0 && lat_fq * 20.0 <= lat_fifo,
    );
    let (t_fifo, t_fq) = (tcp_bps(&fifo, 30.0) / 1e6, tcp_bps(&fq, 30.0) / 1e6);
    rep.row(
        "… TCP throughput, FIFO vs fq_codel",
        "~6 Mbit/s both",
        format!("{t_fifo:.2} vs {t_fq:.2} Mbit/s"),
        "within 10 %",
        (t_fq / t_fifo - 1.0).abs() <= 0.10,
    );

    // rtt_fair_up over 1, 2 and 4 equal stations (loaders from 5 s to 35 s).
    let mut per_n = Vec::new();
    for n in ["1", "2", "4"] {
        let r = ctx.sim(EQUAL, &[("stations.count", n)])?;
        let total = tcp_bps(&r, 30.0) / 1e6;
        let pings: Vec<f64> = (1..=n.parse::<u16>().unwrap_or(1))
            .map(|i| station_ping(&r, &format!("sta{i}"), 7.0, 35.0))
            .collect::<Result<_, _>>()?;
        let worst = pings.iter().cloned().fold(0.0, f64::max);
        per_n.push((n, total, worst, r.airtime_jain_index));
    }
    let summary: Vec<String> = per_n
        .iter()
        .map(|(n, t, w, _)| format!("{n}: {t:.1} Mbit/s, {}", ms(*w)))
        .collect();
    let keeps = per_n
        .iter()
        .all(|&(_, t, w, j)| t >= 0.8 * per_n[0].1 && w < 100.0 && j > 0.95);
    rep.row(
        "rtt_fair_up over 1, 2, 4 equal stations: total TCP, worst station's ping",
        "(plots only)",
        summary.join("; "),
        "total within 20 % of one station's, every ping < 100 ms, airtime Jain > 0.95",
        keeps,
    );

    // One fast and one slow station, without and with fq_codel/ATF.
    let bloated = ctx.sim(PAIR, &[("stack", "linux-4.8-bloated")])?;
    let modern = ctx.sim(PAIR, &[])?;
    let alone = &ctx.sim(EQUAL, &[("stations.count", "1")])?;
    rep.figure(
        "rtt-fair-up",
        "E3: rtt_fair_up, a fast and a slow station",
        &[("linux-4.8-bloated", &bloated), ("linux-6.16", &modern)],
    );
    let fast_alone = station_tcp_mbps(alone, "sta1", 30.0);
    let fast = station_tcp_mbps(&modern, "sta1", 30.0);
    let (fast_lat, slow_lat) = (
        station_ping(&modern, "sta1", 7.0, 35.0)?,
        station_ping(&modern, "sta2", 7.0, 35.0)?,
    );
    let slow_lat_bloated = station_ping(&bloated, "sta2", 7.0, 35.0)?;
    rep.row(
        "fast + slow station (linux-6.16): fast station's TCP vs alone",
        "the fast one keeps high throughput",
        format!("{fast:.1} vs {fast_alone:.1} Mbit/s"),
        "≥ 40 % of alone (airtime split two ways)",
        fast >= 0.4 * fast_alone,
    );
    rep.row(
        "… ping RTT, fast / slow station (median)",
        "low for the fast one; the goal: low for the slow one too",
        format!("{} / {}", ms(fast_lat), ms(slow_lat)),
        "both < 100 ms",
        fast_lat < 100.0 && slow_lat < 100.0,
    );
    rep.row(
        "… slow station's ping on linux-4.8-bloated (median)",
        "(FIFO: seconds)",
        ms(slow_lat_bloated),
        "≥ 10× linux-6.16's",
        slow_lat_bloated >= 10.0 * slow_lat,
    );
    rep.notes.push(
        "With A-MPDUs every uplink transmission is capped at 4 ms, so the fast and the slow \
         station get about equal airtime in every era (the throughput anomaly of DCF shows \
         without aggregation: `txop run anomaly`). What fq_codel changes here is the slow \
         station's latency."
            .into(),
    );
    power_save(ctx, &mut rep)?;
    Ok(rep)
}

/// The ping samples of the ping-only phases of `e3-power-save` (before 5 s and after
/// 15 s, leaving the download's tail out): (RTT ms, how long after the last TBTT the
/// request reached the station, ms).
fn ping_only_phases(r: &Results) -> Result<Vec<(f64, f64)>, String> {
    let f = r
        .flows
        .iter()
        .find(|f| f.kind == "ping")
        .ok_or("E3: no ping flow")?;
    Ok(f.rtt_samples
        .iter()
        .zip(&f.owd_samples)
        .filter(|((t, _), _)| *t < 5.0 || *t > 16.0)
        .map(|(&(t, rtt), &(_, _, back_ms))| {
            // The reply left the station when the request got there (it answers at once).
            let arrival_ms = t * 1000.0 - back_ms;
            (rtt, arrival_ms % BEACON_INTERVAL_MS)
        })
        .collect())
}

/// Power save in the ping-only phases (seed 002): spikes, each ending just after a
/// beacon, none longer than the beacon interval the station wakes for.
fn power_save(ctx: &mut Ctx<'_>, rep: &mut Report) -> Result<(), String> {
    let ps = ctx.sim(POWER_SAVE, &[])?;
    // `wake_every_beacons` so large that the station would never doze between pings is
    // not the same as awake; a timeout longer than the run is: it never dozes.
    let awake = ctx.sim(
        POWER_SAVE,
        &[("stations.power_save.dynamic_timeout_ms", "1000000")],
    )?;
    let dtim = ctx.sim(
        POWER_SAVE,
        &[("stations.power_save.wake_every_beacons", "2")],
    )?;
    rep.figure(
        "power-save",
        "E3: pings to a power-saving station",
        &[("awake", &awake), ("power save", &ps), ("DTIM only", &dtim)],
    );
    let (p, a, d) = (
        ping_only_phases(&ps)?,
        ping_only_phases(&awake)?,
        ping_only_phases(&dtim)?,
    );
    let max = |v: &[(f64, f64)]| v.iter().map(|x| x.0).fold(0.0, f64::max);
    let mean = |v: &[(f64, f64)]| v.iter().map(|x| x.0).sum::<f64>() / v.len().max(1) as f64;
    let spikes: Vec<&(f64, f64)> = p.iter().filter(|x| x.0 > 5.0).collect();
    let late = spikes.iter().map(|x| x.1).fold(0.0, f64::max);
    rep.row(
        "ping-only phases, power save: ping RTT mean / max; spikes (> 5 ms)",
        "spikes, quantised by the beacon interval (102.4 ms)",
        format!(
            "{} / {}; {} of {} pings, each delivered ≤ {late:.1} ms after a beacon (awake: max {})",
            ms(mean(&p)),
            ms(max(&p)),
            spikes.len(),
            p.len(),
            ms(max(&a))
        ),
        "awake < 5 ms; > half spike; max ≤ 102.4 + 5 ms; every spike ends < 3 ms after a TBTT",
        max(&a) < 5.0
            && spikes.len() * 2 > p.len()
            && max(&p) <= BEACON_INTERVAL_MS + 5.0
            && late < 3.0,
    );
    rep.row(
        "… waking for DTIM beacons only (every 2nd): ping RTT max",
        "(up to two beacon intervals, §9.3)",
        ms(max(&d)),
        "between 1 and 2 beacon intervals (112 – 210 ms)",
        (BEACON_INTERVAL_MS + 10.0..=2.0 * BEACON_INTERVAL_MS + 5.0).contains(&max(&d)),
    );
    let tput = |r: &Results| tcp_bps(r, 10.0) / 1e6;
    let (t_ps, t_awake) = (tput(&ps), tput(&awake));
    let (load_ps, load_awake) = (
        station_ping_to(&ps, 7.0, 15.0)?,
        station_ping_to(&awake, 7.0, 15.0)?,
    );
    rep.row(
        "… during the download, with / without power save: TCP; ping RTT (median)",
        "(no spikes under load)",
        format!(
            "{t_ps:.1} / {t_awake:.1} Mbit/s; {} / {}",
            ms(load_ps),
            ms(load_awake)
        ),
        "throughput within 5 %, ping within 5 ms: the station stays awake",
        (t_ps / t_awake - 1.0).abs() <= 0.05 && (load_ps - load_awake).abs() <= 5.0,
    );
    Ok(())
}

/// Median RTT (ms) of the ping to a station, sent between `from_s` and `to_s`.
fn station_ping_to(r: &Results, from_s: f64, to_s: f64) -> Result<f64, String> {
    r.flows
        .iter()
        .find(|f| f.kind == "ping")
        .map(|f| median(rtts(f, from_s, to_s)))
        .ok_or_else(|| "E3: no ping flow".to_string())
}
