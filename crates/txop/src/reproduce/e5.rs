//! E5 (seed 004): ttcp both ways and ping through the Neo's SDIO host bus, with the
//! vendor stack (interrupts + DMA) and Linux's generic one (polled, PIO).
//!
//! "Host" and "device" mean two things here. The seed's "host → neo" is a PC sending to
//! the Neo: on the Neo's bus that is device → host (chip to CPU). Rows use the seed's
//! words.

use super::{mean_min_max, Ctx, Report};
use txop_results::Results;

const TTCP: &str = "e5-sdio-ttcp";
const PING: &str = "e5-sdio-ping";
/// Seeds averaged for each ttcp figure.
const SEEDS: [&str; 3] = ["1", "2", "3"];
/// ttcp's default run: 2048 buffers of 8 KiB (the seed's context switches are per run).
const TTCP_RUN_BYTES: f64 = (2048 * 8192) as f64;

/// One ttcp-like run: its rate after the first second (slow start) in 1000 B/s, as
/// ttcp prints it, and the Neo's context switches scaled to one 16 MiB run.
fn ttcp(r: &Results) -> Result<(f64, f64), String> {
    let f = r
        .flows
        .iter()
        .find(|f| f.kind == "tcp")
        .ok_or("E5: no TCP flow")?;
    let steps = f.throughput_series_bps.get(5..).unwrap_or(&[]); // 0.2 s steps from 1 s
    if steps.is_empty() {
        return Err("E5: the run is shorter than a second".into());
    }
    let kbps = steps.iter().sum::<f64>() / steps.len() as f64 / 8.0 / 1000.0;
    let bytes = f.throughput_bps * r.duration_s / 8.0;
    let bus = r
        .host_buses
        .iter()
        .find(|b| b.station == 1)
        .ok_or("E5: the Neo has no host bus")?;
    Ok((
        kbps,
        bus.context_switches as f64 * TTCP_RUN_BYTES / bytes.max(1.0),
    ))
}

/// RTTs (ms) of the ping to or from station `sta`.
fn rtts(r: &Results, sta: &str) -> Vec<f64> {
    r.flows
        .iter()
        .filter(|f| f.kind == "ping" && (f.src == sta || f.dst == sta))
        .flat_map(|f| f.rtt_samples.iter().map(|&(_, v)| v))
        .collect()
}

fn min_avg_max(v: (f64, f64, f64)) -> String {
    format!("{:.2} / {:.2} / {:.2} ms", v.1, v.0, v.2)
}

pub(super) fn run(ctx: &mut Ctx<'_>) -> Result<Report, String> {
    let mut rep = Report::new("E5", "host-bus stack (seed 004, SDIO)", &[TTCP, PING]);
    let from_neo = [("flows[0].from", "sta1"), ("flows[0].to", "server")];
    // [stack][direction] = (rate 1000 B/s, switches per run), direction 0 = to the Neo.
    let mut t = [[(0.0f64, 0.0f64); 2]; 2];
    for (s, bus) in ["sdio-vendor", "sdio-generic"].into_iter().enumerate() {
        for (d, to_neo) in [true, false].into_iter().enumerate() {
            for seed in SEEDS {
                let mut sets = vec![("stations.bus", bus), ("seed", seed)];
                if !to_neo {
                    sets.extend(from_neo);
                }
                let (kbps, sw) = ttcp(&ctx.sim(TTCP, &sets)?)?;
                t[s][d].0 += kbps / SEEDS.len() as f64;
                t[s][d].1 += sw / SEEDS.len() as f64;
            }
        }
    }
    let [vendor, generic] = t;
    let into = generic[0].0 / vendor[0].0;
    rep.row(
        "ttcp host → neo, vendor / generic (1000 B/s)",
        "745.5 / 744.0 (same)",
        format!(
            "{:.1} / {:.1} ({:+.1} %)",
            vendor[0].0,
            generic[0].0,
            (into - 1.0) * 100.0
        ),
        "within 6 % of each other, each within 10 % of the seed's",
        (0.94..1.06).contains(&into)
            && (vendor[0].0 / 745.5 - 1.0).abs() < 0.1
            && (generic[0].0 / 744.0 - 1.0).abs() < 0.1,
    );
    let out = generic[1].0 / vendor[1].0;
    rep.row(
        "ttcp neo → host, vendor / generic (1000 B/s)",
        "804.8 / 722.5 (−10 %)",
        format!(
            "{:.1} / {:.1} ({:+.1} %)",
            vendor[1].0,
            generic[1].0,
            (out - 1.0) * 100.0
        ),
        "generic 5 – 15 % lower, each within 10 % of the seed's",
        (0.85..0.95).contains(&out)
            && (vendor[1].0 / 804.75 - 1.0).abs() < 0.1
            && (generic[1].0 / 722.47 - 1.0).abs() < 0.1,
    );
    let sw_ratio = vendor[0].1 / generic[0].1;
    rep.row(
        "context switches on the receiving Neo per ttcp run, vendor / generic",
        "12 248 / 5 170 (÷2.4)",
        format!("{:.0} / {:.0} (÷{sw_ratio:.1})", vendor[0].1, generic[0].1),
        "generic fewer, ÷2 – 6",
        (2.0..6.0).contains(&sw_ratio),
    );

    // Ping: to the Neo (generic stack, as the seed measured), from it, and to a laptop.
    let to = ctx.sim(PING, &[])?;
    let from = ctx.sim(PING, &from_neo)?;
    let to_vendor = ctx.sim(PING, &[("stations.list[0].bus", "sdio-vendor")])?;
    rep.figure(
        "sdio-ping",
        "E5: ping to the SDIO device",
        &[
            ("vendor (interrupt, DMA)", &to_vendor),
            ("generic (polled, PIO)", &to),
        ],
    );
    let g_to = mean_min_max(&rtts(&to, "sta1"));
    let g_from = mean_min_max(&rtts(&from, "sta1"));
    let laptop = mean_min_max(&rtts(&to, "sta2"));
    let v_to = mean_min_max(&rtts(&to_vendor, "sta1"));
    rep.row(
        "ping a laptop on the same network (no bus), avg",
        "1.7 ms",
        format!("{:.2} ms", laptop.0),
        "1 – 2.5 ms",
        (1.0..2.5).contains(&laptop.0),
    );
    let (wait, spread) = (g_to.0 - v_to.0, g_to.2 - g_to.1);
    rep.row(
        "where the bus's latency comes from: vendor adds; polling adds on top (avg; spread)",
        "(not measured)",
        format!(
            "vendor +{:.1} ms ({:.1} ms spread); polled +{wait:.1} ms ({spread:.1} ms spread)",
            v_to.0 - laptop.0,
            v_to.2 - v_to.1
        ),
        "vendor: its transfers, +0.5 – 4 ms, < 1 ms spread; polled: uniform over the 10 ms \
         idle poll period, +3.5 – 6.5 ms, 8 – 10.5 ms spread",
        (0.5..4.0).contains(&(v_to.0 - laptop.0))
            && v_to.2 - v_to.1 < 1.0
            && (3.5..6.5).contains(&wait)
            && (8.0..10.5).contains(&spread),
    );
    rep.row(
        "ping host → neo, generic stack, min / avg / max",
        "10.60 / 75.91 / 287.00 ms",
        min_avg_max(g_to),
        "avg within 2× of the seed's",
        (75.91 / 2.0..75.91 * 2.0).contains(&g_to.0),
    );
    rep.known_gap(
        "Ping through the generic stack: the bus model explains about 7 ms of the seed's \
         76 ms average (its transfers ~2 ms, the poll wait 0–10 ms), and none of its \
         216–287 ms maxima. What else made the seed's pings slow is not identified and \
         not in this scenario; candidates are 802.11 power save on the Neo (a wake-up waits \
         up to a beacon interval, ~100 ms: the shape `e3-power-save` shows; tried in the \
         last row) and other work on its CPU.",
    );
    rep.row(
        "ping neo → host, generic stack, min / avg / max",
        "20.85 / 78.82 / 216.25 ms",
        min_avg_max(g_from),
        "avg within 2× of the seed's",
        (78.82 / 2.0..78.82 * 2.0).contains(&g_from.0),
    );
    rep.known_gap("Ping from the Neo: the same gap, the other way.");
    // The candidate the gap names, tried: the Neo's 802.11 dynamic power save on (waking
    // for every beacon), as phone-class devices run by default; the seed does not say.
    let ps = ctx.sim(PING, &[("stations.list[0].power_save", "{}")])?;
    let g_ps = mean_min_max(&rtts(&ps, "sta1"));
    rep.row(
        "ping host → neo, generic stack with the Neo's power save on, min / avg / max",
        "10.60 / 75.91 / 287.00 ms",
        min_avg_max(g_ps),
        "min and avg within 2× of the seed's",
        (10.6 / 2.0..10.6 * 2.0).contains(&g_ps.1) && (75.91 / 2.0..75.91 * 2.0).contains(&g_ps.0),
    );
    rep.notes.push(format!(
        "With power save on, the ping waits for the Neo's next beacon wake-up (up to \
         102.4 ms) plus the bus: min / avg {:.1} / {:.1} ms against the seed's 10.6 / 75.9. \
         Its maximum ({:.0} ms) stays below the seed's 287 ms: a station that wakes only \
         for DTIM beacons reaches ~210 ms; the rest is not modelled. This is a plausible \
         explanation, not a measured one.",
        g_ps.1, g_ps.0, g_ps.2
    ));
    rep.notes.push(
        "ttcp: one CUBIC connection for 12 s, its rate after the first second, averaged \
         over seeds 1–3. In the model the vendor stack is limited by its bus (DMA hand-offs \
         per 128-byte block), the generic one by its CPU (PIO copies); receiving costs the \
         vendor stack one more transfer per packet (the status read), which is why it \
         receives slower than it sends. The vendor stack's reader wakes once per packet \
         (one card interrupt each); the polled one at most once per 5 ms tick."
            .into(),
    );
    Ok(rep)
}
