//! E2 (seed 001): 12 TCP downloads and a page load, before and after the mac80211
//! rework; 100 stations starting flows at once.

use super::{icmp_ping, median, ms, rtts, Ctx, Report};
use txop_sim::Results;

const SCENARIO: &str = "e2-bufferbloat";

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
        &[SCENARIO, "e2-100-stations"],
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
    rep.notes.push(format!(
        "Before = `linux-4.8-bloated`, after = `linux-4.9`; one station at HT20 MCS1. After \
         the rework the page under load still takes {:.0}× its idle time: fair queuing gives \
         its one connection about a 13th of the link beside 12 bulk flows, so 1.8 MB takes \
         seconds even with short queues.",
        p_after / p_idle
    ));
    Ok(rep)
}
