//! E4 (seed 003): the near client's ping while a far client downloads, through each
//! generation of the transmit path.

use super::{icmp_ping, median, ms, rtts, station_ping, tcp_bps, Ctx, Report};
use txop_results::Results;

const SCENARIO: &str = "e4-near-far";
const TWO: &str = "e4-two-downloads";

/// The near client's ping RTT (ms) while the far client downloads (from 7 s on).
fn near_ping(r: &Results) -> Result<f64, String> {
    Ok(median(rtts(icmp_ping(r)?, 7.0, 40.0)))
}

pub(super) fn run(ctx: &mut Ctx<'_>) -> Result<Report, String> {
    let mut rep = Report::new(
        "E4",
        "reducing latency in wireless drivers (seed 003)",
        &[SCENARIO, TWO],
    );
    let bloated = ctx.sim(SCENARIO, &[])?;
    let idle = median(rtts(icmp_ping(&bloated)?, 0.0, 5.0));
    rep.row(
        "near client's ping, idle",
        "~1.5 ms",
        ms(idle),
        "0.5 – 5 ms",
        (0.5..5.0).contains(&idle),
    );
    let pfifo = near_ping(&bloated)?;
    rep.row(
        "… during the far download, pfifo_fast (linux-4.8-bloated)",
        "100–170 ms",
        ms(pfifo),
        "50 – 1000 ms",
        (50.0..1000.0).contains(&pfifo),
    );
    let fq_qdisc_run = ctx.sim(SCENARIO, &[("stack", "fq_codel-qdisc")])?;
    let fq_qdisc = near_ping(&fq_qdisc_run)?;
    rep.row(
        "… fq_codel as the qdisc",
        "10–60 ms",
        ms(fq_qdisc),
        "5 – 60 ms, below pfifo_fast",
        (5.0..60.0).contains(&fq_qdisc) && fq_qdisc < pfifo,
    );
    let txqs_run = ctx.sim(SCENARIO, &[("stack", "linux-4.9")])?;
    let txqs = near_ping(&txqs_run)?;
    rep.figure(
        "near-far",
        "E4: near client's ping while a far client downloads",
        &[
            ("pfifo_fast", &bloated),
            ("fq_codel qdisc", &fq_qdisc_run),
            ("mac80211 TXQs", &txqs_run),
        ],
    );
    rep.row(
        "… fq_codel in mac80211's intermediate queues (linux-4.9)",
        "lower still",
        ms(txqs),
        "below the fq_codel qdisc",
        txqs < fq_qdisc,
    );
    // Both clients download (`e4-two-downloads`): a deep firmware queue under the TXQs,
    // with no limit, a byte limit (DQL) or an airtime limit (AQL).
    let mut limits = Vec::new();
    for limit in ["none", "dql", "aql"] {
        let r = ctx.sim(TWO, &[("stack_options.queue_limit", limit)])?;
        let near = station_ping(&r, "sta1", 4.0, 30.0)?;
        let far = station_ping(&r, "sta2", 4.0, 30.0)?;
        let total = tcp_bps(&r, 28.0) / 1e6;
        rep.row(
            format!(
                "both clients download, firmware queue limit {limit}: near / far ping, TCP total"
            ),
            match limit {
                "none" => "(the firmware queue bloats)",
                "dql" => "bytes are a poor proxy for time at mixed rates",
                _ => "keeps both clients' latency low",
            },
            format!("{} / {}, {total:.1} Mbit/s", ms(near), ms(far)),
            match limit {
                "aql" => "both pings < 60 ms; far ≥ 5× below no limit; total ≥ 1.5× DQL's",
                _ => "(compared in the AQL row)",
            },
            true,
        );
        limits.push((near, far, total));
    }
    let [(_, far_none, _), (_, _, total_dql), (near_aql, far_aql, total_aql)] = limits[..] else {
        return Err("E4: missing runs".into());
    };
    if let Some(row) = rep.rows.last_mut() {
        row.holds = near_aql < 60.0
            && far_aql < 60.0
            && far_aql * 5.0 <= far_none
            && total_aql >= 1.5 * total_dql;
    }
    rep.notes.push(
        "DQL keeps the queue short but in bytes: with PPDUs built from what the firmware \
         holds, a byte limit small enough for the far client starves the near client's \
         aggregates, so total throughput collapses; the airtime limit keeps both short \
         without that cost."
            .into(),
    );
    Ok(rep)
}
