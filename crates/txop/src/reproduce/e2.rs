//! E2 (seed 001): 12 TCP downloads and a page load, before and after the mac80211
//! rework; 100 stations starting flows at once.

use super::{icmp_ping, median, ms, rtts, Ctx, Report};
use txop_results::Results;

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

pub(super) fn run(ctx: &mut Ctx<'_>) -> Result<Report, String> {
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
    // 100 stations each start an upload; the loaders run from 2 s (`delay_s`) to 2 s
    // before the end.
    let mut crowd = |stack: &str| -> Result<(usize, f64), String> {
        let r = ctx.sim(CROWD, &[("stack", stack)])?;
        let load_s = (2.0, r.duration_s - 2.0);
        let stalled = r
            .flows
            .iter()
            .filter(|f| f.kind == "tcp")
            .filter(|f| longest_gap_s(&f.throughput_series_bps, load_s) > 15.0)
            .count();
        let pings: Vec<f64> = r
            .flows
            .iter()
            .filter(|f| f.kind == "ping")
            .flat_map(|f| rtts(f, load_s.0 + 3.0, load_s.1))
            .collect();
        Ok((stalled, median(pings)))
    };
    let (stalled_before, lat_crowd_before) = crowd("linux-4.8-bloated")?;
    let (stalled_after, lat_crowd) = crowd("linux-4.9")?;
    rep.row(
        "100 stations start an upload, after: flows stalled > 15 s; ping RTT (median)",
        "none stalled; 150–300 ms",
        format!("{stalled_after} stalled; {}", ms(lat_crowd)),
        "none stalled; 100 – 600 ms",
        stalled_after == 0 && (100.0..600.0).contains(&lat_crowd),
    );
    rep.row(
        "… before: flows stalled > 15 s; ping RTT (median)",
        "~95 of 100 (only ~5 got going); > 15 s stalls",
        format!("{stalled_before} of 100; {}", ms(lat_crowd_before)),
        "most (> 50); ping ≥ 3× after",
        stalled_before > 50 && lat_crowd_before >= 3.0 * lat_crowd,
    );
    rep.notes.push(format!(
        "Before = `linux-4.8-bloated`, after = `linux-4.9`; one station at HT20 MCS1. After \
         the rework the page under load still takes {:.0}× its idle time: fair queuing gives \
         its one connection about a 13th of the link beside 12 bulk flows, so 1.8 MB takes \
         seconds even with short queues.",
        p_after / p_idle
    ));
    rep.notes.push(
        "100 stations: the seed does not say which way the flows ran; txop runs uploads \
         (`rtt_fair_up`, flent's 60 s). Their TCP ACKs come down through the AP, which wins \
         about one channel access in 101 against the uploading stations. On the bloated \
         stack the ACKs of all 100 flows share one FIFO and ath9k's 123 frames per AC, about \
         one per station, so an aggregate carries one or two of them and they wait seconds; a flow whose ACKs or \
         retransmission are lost backs off (RTO 1, 2, 4, 8 … s) and stalls. After the \
         rework each station's ACKs queue apart and leave as one aggregate. With downloads \
         (`rtt_fair_down`) txop starts all 100 flows on both stacks."
            .to_string(),
    );
    Ok(rep)
}

/// The longest run (s) of 0.2 s steps without data in `series_bps` between `from_s` and
/// `to_s`: how long a flow stalled, at its start or later (a flow backing off its
/// retransmission timer sends nothing).
fn longest_gap_s(series_bps: &[f64], (from_s, to_s): (f64, f64)) -> f64 {
    let steps = series_bps
        .iter()
        .enumerate()
        .filter(|&(i, _)| (from_s..to_s).contains(&(i as f64 * 0.2)));
    let (mut longest, mut run) = (0usize, 0usize);
    for (_, &bps) in steps {
        run = if bps > 0.0 { 0 } else { run + 1 };
        longest = longest.max(run);
    }
    longest as f64 * 0.2
}

#[cfg(test)]
mod tests {
    use super::longest_gap_s;

    #[test]
    fn longest_gap_counts_empty_steps_inside_the_window_only() {
        // 0.2 s steps: data, 3 empty, data, 5 empty (the last two past 2.0 s).
        let series = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        assert!((longest_gap_s(&series, (0.0, 10.0)) - 1.2).abs() < 1e-9);
        // Only steps that start before 1.6 s count: the 3-step gap is the longest.
        assert!((longest_gap_s(&series, (0.0, 1.5)) - 0.6).abs() < 1e-9);
        // A flow that never sends stalls for the whole window.
        assert!((longest_gap_s(&[0.0; 50], (2.0, 8.0)) - 6.0).abs() < 1e-9);
    }
}
