//! E2 (seed 001): 12 TCP downloads and a page load, before and after the mac80211
//! rework; 100 stations starting flows at once.

use super::{icmp_ping, median, ms, rtts, Ctx, Report};
use txop_sim::Results;

const SCENARIO: &str = "e2-bufferbloat";
const CROWD: &str = "e2-100-stations";

fn page_load_s(r: &Results) -> Option<f64> {
    r.flows
        .iter()
        .find(|f| f.kind == "web")
        .and_then(|f| f.page_load_times_s.first().copied())
}

/// Median time the TCP packets spent from entering the driver to leaving the cell.
fn driver_ms(r: &Results) -> f64 {
    median(
        r.flows
            .iter()
            .filter(|f| f.kind == "tcp")
            .filter_map(|f| f.driver_latency_ms.map(|l| l.p50))
            .collect(),
    )
}

pub(super) fn run(ctx: &mut Ctx) -> Result<Report, String> {
    let mut rep = Report::new(
        "E2",
        "bufferbloat and the mac80211 rework (seed 001)",
        &[SCENARIO, CROWD],
    );
    let before = ctx.sim(SCENARIO, &[])?;
    let after = ctx.sim(SCENARIO, &[("stack", "linux-4.9")])?;
    // The same page with the loaders moved after it: the page alone on the link.
    let idle = ctx.sim(
        SCENARIO,
        &[
            ("traffic.delay_s", "60"),
            ("traffic.length_s", "1"),
            ("traffic.web.start_s", "1"),
        ],
    )?;
    rep.figure(
        "bufferbloat",
        "E2: 12 TCP downloads + a page load, 13 Mbit/s station",
        &[("linux-4.8-bloated", &before), ("linux-4.9", &after)],
    );
    // Pings while the 12 flows run (they load from 5 s to 305 s).
    let ping = |r: &Results| icmp_ping(r).map(|p| median(rtts(p, 10.0, 300.0)));
    let (lat_before, lat_after) = (ping(&before)?, ping(&after)?);
    rep.row(
        "ping RTT under 12-stream load, before (median)",
        "~1 s (peaks 1–2 s)",
        ms(lat_before),
        "0.5 – 3 s",
        (500.0..3000.0).contains(&lat_before),
    );
    rep.row(
        "ping RTT under load, after (median)",
        "~40 ms",
        ms(lat_after),
        "< 100 ms and ≥ 10× below before",
        lat_after < 100.0 && lat_after * 10.0 <= lat_before,
    );
    let drv = driver_ms(&after);
    rep.row(
        "driver-side buffering after (TCP packets, driver + air, median)",
        "2–12 ms",
        ms(drv),
        "1 – 20 ms",
        (1.0..20.0).contains(&drv),
    );
    let page = |r: &Results, what: &str| {
        page_load_s(r).ok_or_else(|| format!("E2: the page never finished loading ({what})"))
    };
    let (p_idle, p_before, p_after) = (
        page(&idle, "idle")?,
        page(&before, "before")?,
        page(&after, "after")?,
    );
    rep.row(
        "page load (62 objects, 1.8 MB), idle",
        "~8 s",
        format!("{p_idle:.1} s"),
        "a handful of seconds (< 15 s)",
        p_idle < 15.0,
    );
    rep.row(
        "page load under load, before",
        "232.8 s",
        format!("{p_before:.0} s"),
        "≥ 10× idle, and within 3× of the seed's",
        p_before >= 10.0 * p_idle && (232.8 / 3.0..232.8 * 3.0).contains(&p_before),
    );
    rep.row(
        "page load under load, after",
        "(the rework narrows the gap)",
        format!("{p_after:.0} s"),
        "≤ half of before",
        p_after <= p_before / 2.0,
    );
    // 100 stations each start a download (loaders from 2 s to 32 s).
    let mut crowd = |stack: &str| -> Result<(usize, f64), String> {
        let r = ctx.sim(CROWD, &[("stack", stack)])?;
        let stalled = r
            .flows
            .iter()
            .filter(|f| f.kind == "tcp")
            .filter(|f| {
                // The first 0.2 s step with data, counted from the flows' start at 2 s.
                let first = f.throughput_series_bps.iter().position(|&b| b > 0.0);
                first.is_none_or(|i| i as f64 * 0.2 - 2.0 > 15.0)
            })
            .count();
        let pings: Vec<f64> = r
            .flows
            .iter()
            .filter(|f| f.kind == "ping")
            .flat_map(|f| rtts(f, 5.0, 32.0))
            .collect();
        Ok((stalled, median(pings)))
    };
    let (stalled_before, _) = crowd("linux-4.8-bloated")?;
    let (stalled_after, lat_crowd) = crowd("linux-4.9")?;
    rep.row(
        "100 stations start a download, after: stalled > 15 s; ping RTT (median)",
        "none stalled; 150–300 ms",
        format!("{stalled_after} stalled; {}", ms(lat_crowd)),
        "none stalled; 100 – 600 ms",
        stalled_after == 0 && (100.0..600.0).contains(&lat_crowd),
    );
    rep.row(
        "… before: flows stalled > 15 s",
        "~95 of 100 (only ~5 got going)",
        format!("{stalled_before} of 100"),
        "most (> 50)",
        stalled_before > 50,
    );
    rep.known_gap(
        "Not reproduced: on the bloated stack all 100 downloads start in txop. Their \
         handshakes (modelled, with Linux's 1 s SYN/SYN-ACK timers) get through the 1000-packet \
         FIFO, and flows that lose their first window recover by RTO within seconds. What \
         stalled 95 flows for > 15 s on the seed's hardware is not identified, and not in \
         the model.",
    );
    rep.notes.push(format!(
        "Before = `linux-4.8-bloated`, after = `linux-4.9`; one station at HT20 MCS1. After \
         the rework the page under load still takes {:.0}× its idle time: fair queuing gives \
         its one connection about a 13th of the link beside 12 bulk flows, so 1.8 MB takes \
         seconds even with short queues.",
        p_after / p_idle
    ));
    Ok(rep)
}
