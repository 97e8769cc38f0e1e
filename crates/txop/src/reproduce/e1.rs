//! E1 (seed 000): a station scanning both bands every 3 s, with the legacy (pre-2013)
//! and the bounded (post-2013) scan rule: pings to and from it, bulk TCP to and from
//! it, and how long a full scan takes.

use super::{mean_min_max, Ctx, Report};
use txop_results::Results;

const PING: &str = "e1-scan-ping";
const BULK: &str = "e1-scan-bulk";
/// Seeds averaged for the bulk transfers (TCP against the excursions is noisy).
const BULK_SEEDS: [&str; 2] = ["1", "2"];

const POLICIES: [&str; 2] = ["legacy", "bounded"];

/// Mean, minimum and maximum RTT (ms) of the run's ping.
fn ping_stats(r: &Results) -> Result<(f64, f64, f64), String> {
    let f = r
        .flows
        .iter()
        .find(|f| f.kind == "ping")
        .ok_or("E1: no ping flow")?;
    let v: Vec<f64> = f.rtt_samples.iter().map(|&(_, v)| v).collect();
    if v.is_empty() {
        return Err("E1: the ping got no replies".into());
    }
    Ok(mean_min_max(&v))
}

fn avg_max(v: (f64, f64, f64)) -> String {
    format!("{:.1} / {:.0} ms", v.0, v.2)
}

pub(super) fn run(ctx: &mut Ctx<'_>) -> Result<Report, String> {
    let mut rep = Report::new("E1", "background scanning (seed 000)", &[PING, BULK]);
    let policy = |p: &'static str| ("stations.scan.policy", p);
    let local = [("flows[0].from", "sta1"), ("flows[0].to", "ap")];

    // Station → AP.
    let mut loc = Vec::new();
    for p in POLICIES {
        let mut sets = vec![policy(p)];
        sets.extend(local);
        loc.push(ping_stats(&ctx.sim(PING, &sets)?)?);
    }
    rep.row(
        "station → AP ping avg / max, legacy → bounded",
        "24.9 / 182 → 19.7 / 151 ms",
        format!("{} → {}", avg_max(loc[0]), avg_max(loc[1])),
        "bounded avg lower; both avg 5 – 60 ms, max < 250 ms",
        loc[1].0 < loc[0].0
            && loc
                .iter()
                .all(|l| (5.0..60.0).contains(&l.0) && l.2 < 250.0),
    );

    // Remote → station, with the scan counters.
    let mut remote = Vec::new();
    let mut scan_s = Vec::new();
    let mut lost = Vec::new();
    for p in POLICIES {
        let r = ctx.sim(PING, &[policy(p)])?;
        let sc = r
            .stations
            .first()
            .and_then(|s| s.scan)
            .ok_or("E1: station 1 reports no scans")?;
        let mean = sc
            .mean_scan_time()
            .ok_or("E1: no scan finished within the run")?;
        scan_s.push(mean.as_secs_f64());
        let f = r
            .flows
            .iter()
            .find(|f| f.kind == "ping")
            .ok_or("E1: no ping")?;
        lost.push(1.0 - f.rtt_samples.len() as f64 / f.offered_packets.max(1) as f64);
        remote.push(ping_stats(&r)?);
    }
    let (avg_cut, max_cut) = (remote[0].0 / remote[1].0, remote[0].2 / remote[1].2);
    rep.row(
        "remote → station ping avg, legacy → bounded",
        "120.7 → 26.9 ms (÷4.5)",
        format!("{:.1} → {:.1} ms (÷{avg_cut:.1})", remote[0].0, remote[1].0),
        "cut several times (÷ ≥ 3); legacy 40 – 250 ms, bounded 8 – 50 ms",
        avg_cut >= 3.0
            && (40.0..250.0).contains(&remote[0].0)
            && (8.0..50.0).contains(&remote[1].0),
    );
    rep.row(
        "remote → station ping max, legacy → bounded",
        "709 → 201 ms (÷3.5)",
        format!("{:.0} → {:.0} ms (÷{max_cut:.1})", remote[0].2, remote[1].2),
        "cut ≥ 2.5× and ≤ 12× (the seed's order); bounded 100 – 250 ms (one excursion)",
        (2.5..12.0).contains(&max_cut) && (100.0..250.0).contains(&remote[1].2),
    );
    rep.row(
        "full scan of both bands (mean), legacy → bounded",
        "~5 → ~10 s (×2)",
        format!(
            "{:.1} → {:.1} s (×{:.1})",
            scan_s[0],
            scan_s[1],
            scan_s[1] / scan_s[0]
        ),
        "×1.6 – 2.8; legacy 3.5 – 6.5 s, bounded 7 – 11.5 s",
        (1.6..2.8).contains(&(scan_s[1] / scan_s[0]))
            && (3.5..6.5).contains(&scan_s[0])
            && (7.0..11.5).contains(&scan_s[1]),
    );

    // Bulk TCP (MB/s over the run), averaged over seeds: [to, from][legacy, bounded].
    let mut bulk = [[0.0f64; 2]; 2];
    for (d, dir) in [
        [("flows[0].from", "server"), ("flows[0].to", "sta1")],
        [("flows[0].from", "sta1"), ("flows[0].to", "server")],
    ]
    .into_iter()
    .enumerate()
    {
        for (k, p) in POLICIES.into_iter().enumerate() {
            for seed in BULK_SEEDS {
                let mut sets = vec![policy(p), ("seed", seed)];
                sets.extend(dir);
                let r = ctx.sim(BULK, &sets)?;
                let bps: f64 = r
                    .flows
                    .iter()
                    .filter(|f| f.kind == "tcp")
                    .map(|f| f.throughput_bps)
                    .sum();
                bulk[d][k] += bps / 8e6 / BULK_SEEDS.len() as f64;
            }
        }
    }
    let gain = |l: f64, b: f64| (b / l - 1.0) * 100.0;
    let [to, from] = bulk;
    let change = |[l, b]: [f64; 2]| format!("{l:.2} → {b:.2} MB/s ({:+.0} %)", gain(l, b));
    rep.row(
        "bulk TCP to the station, legacy → bounded",
        "3.9 → 4.3 MB/s (+10 %)",
        change(to),
        "bounded ≥ 5 % higher",
        to[1] >= 1.05 * to[0],
    );
    rep.row(
        "bulk TCP from the station, legacy → bounded",
        "5.5 → 6.2 MB/s (+13 %)",
        change(from),
        "bounded ≥ 5 % higher",
        from[1] >= 1.05 * from[0],
    );
    rep.known_gap(
        "Bulk from the scanning station: no gain in txop. With a qdisc (the 3.8-era stack), \
         the station's own pending data suspends the scan at every DECISION under both \
         rules, so its uploads meet the same short excursions whichever rule runs; the \
         legacy rule's long unannounced excursions, which cost the downlink, rarely \
         happen while the station sends. With an empty qdisc the upload does gain: on \
         `linux-4.9` (no qdisc) legacy → bounded gives 2.90 → 4.38 MB/s (seed 1). What \
         emptied the seed's qdisc, if anything did, is not identified. TCP Small Queues \
         (Linux 3.6, 128 KB per socket below TCP) was tried in a scratch build: it cuts \
         the upload's queueing (its packets' median latency 270 → 21 ms) but not the \
         excursions, since the flush before each one frees the socket's budget and the \
         qdisc refills at once.",
    );
    let (l, b) = (to[0] + from[0], to[1] + from[1]);
    rep.row(
        "bulk TCP, both directions together",
        "+11 %",
        format!("{:+.0} %", gain(l, b)),
        "+4 % to +50 % (around 10 %)",
        (4.0..50.0).contains(&gain(l, b)),
    );
    rep.notes.push(format!(
        "The legacy rule stays off channel up to the listen interval (ath9k's 10 beacons, \
         1024 ms) once the AP has been told only at the scan's start: frames to the station \
         during its unannounced excursions fail until dropped ({:.0} % of the remote pings \
         unanswered with legacy, {:.0} % with bounded), and the worst reply waits one whole \
         excursion, so txop's legacy maximum exceeds the seed's 709 ms and its cut of the \
         maximum is larger than the seed's 3.5×. The bounded rule announces every \
         excursion (null-data PM=1/PM=0) and is back within 125 ms; the AP buffers \
         meanwhile.",
        lost[0] * 100.0,
        lost[1] * 100.0
    ));
    rep.notes.push(format!(
        "Bulk averaged over seeds {}; 60 s each, MB/s over the whole run.",
        BULK_SEEDS.join(" and ")
    ));
    Ok(rep)
}
