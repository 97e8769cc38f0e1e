//! Traffic between BSSs (issue 15, `txop_sim::transit`): a flow from a station of one
//! BSS to a station of another crosses the first's air and wired link, the junction,
//! the second's wired link and air. Checked against the same hops measured one BSS at a
//! time: an unloaded ping's one-way delays add up hop by hop, and a download is held to
//! what the far BSS's air carries on its own; packets are conserved in each BSS, and
//! the run is deterministic.

use txop::scenario::{parse, ResolvedBss};
use txop_results::{FlowResult, Results};
use txop_sim::Neighbourhood;

/// Two BSSs of two stations on a ring, 200 m apart (out of range: only the wired
/// sides join them), HT20 at 5 GHz; `a`'s wired link 5 ms, `b`'s 20 ms. Each BSS's
/// `[[bss.flows]]` follow its entry.
fn scenario(a_flows: &str, b_flows: &str, b_distance_m: f64) -> String {
    format!(
        "seed = 3
duration_s = 8
stack = \"linux-6.16\"
[phy]
standard = \"n\"
band = \"5\"
width_mhz = 20
[space]
layout = \"ring\"
[stations]
count = 2
distance_m = 5
[wired]
delay_ms = 5
[[bss]]
name = \"a\"
ap_position_m = [0, 0]
{a_flows}
[[bss]]
name = \"b\"
ap_position_m = [200, 0]
[bss.wired]
delay_ms = 20
[bss.stations]
distance_m = {b_distance_m}
{b_flows}"
    )
}

fn flow(kind: &str, from: &str, to: &str) -> String {
    format!("[[bss.flows]]\nkind = \"{kind}\"\nfrom = \"{from}\"\nto = \"{to}\"\n")
}

/// A station that only pings the server once a second: a BSS with nothing else to do.
fn idle() -> String {
    flow("ping", "sta2", "server") + "interval_ms = 1000\n"
}

fn resolve(text: &str) -> Vec<ResolvedBss> {
    parse(text, &[])
        .and_then(|s| s.resolve_bsss())
        .unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// Every BSS run together to its end.
fn run(text: &str) -> Vec<Results> {
    let bsss = resolve(text);
    Neighbourhood::new(bsss.iter().map(ResolvedBss::bss_config).collect())
        .expect("valid BSSs")
        .try_run()
        .unwrap_or_else(|stuck| panic!("stuck: {stuck}"))
}

fn conserved(r: &Results) {
    let c = &r.conservation;
    assert_eq!(
        c.offered_packets,
        c.delivered_packets + c.dropped_packets + c.inside_packets,
        "{c:?}"
    );
}

/// The mean one-way delays of a ping flow's replies, ms: (there, back).
fn mean_owd_ms(f: &FlowResult) -> (f64, f64) {
    let n = f.owd_samples.len() as f64;
    assert!(n >= 30.0, "{} replies", f.owd_samples.len());
    let there = f.owd_samples.iter().map(|s| s.1).sum::<f64>() / n;
    let back = f.owd_samples.iter().map(|s| s.2).sum::<f64>() / n;
    (there, back)
}

#[test]
fn a_ping_between_bsss_takes_each_hop_as_that_bss_does() {
    let cross = run(&scenario(&flow("ping", "sta1", "b.sta1"), &idle(), 5.0));
    let apart = run(&scenario(
        &flow("ping", "sta1", "server"),
        &flow("ping", "sta1", "server"),
        5.0,
    ));
    for r in cross.iter().chain(&apart) {
        conserved(r);
    }
    let f = &cross[0].flows[0];
    assert_eq!((f.src.as_str(), f.dst.as_str()), ("sta1", "b.sta1"));
    assert_eq!(
        f.delivered_packets,
        f.offered_packets - 1,
        "the last is in flight"
    );
    let (there, back) = mean_owd_ms(f);
    let (a_up, a_down) = mean_owd_ms(&apart[0].flows[0]);
    let (b_up, b_down) = mean_owd_ms(&apart[1].flows[0]);
    // There: a's air up, a's wire, b's wire, b's air down: hop for hop what a's ping
    // to the server takes up and b's takes down (the cells are idle, so the same
    // draws give the same times).
    assert!(
        (there - (a_up + b_down)).abs() < 1e-3,
        "there {there} ms, a up {a_up} + b down {b_down}"
    );
    assert!(there > 25.0, "both wired links: {there} ms");
    // Back: the same hops the other way, and the echo waits at b's station for the
    // BlockAck it sends for the request (SIFS + BlockAck + AIFS, about 0.09 ms),
    // which an echo from the server never does.
    let wait = back - (b_up + a_down);
    assert!(
        (0.05..0.25).contains(&wait),
        "back {back} ms, b up {b_up} + a down {a_down}"
    );
    // b's cell carried the ping both ways: its station 1 sent and received every echo.
    let b_sta1 = &cross[1].stations[0];
    assert!(b_sta1.mpdus >= 2 * f.delivered_packets, "{b_sta1:?}");
}

#[test]
fn a_download_across_is_held_to_what_the_far_air_carries() {
    // b's stations at 30 m: a slower rate than a's at 5 m.
    let cross = run(&scenario(&flow("tcp", "sta1", "b.sta1"), &idle(), 30.0));
    let within_b = run(&scenario(&idle(), &flow("tcp", "server", "sta1"), 30.0));
    let within_a = run(&scenario(&flow("tcp", "server", "sta1"), &idle(), 30.0));
    for r in cross.iter().chain(&within_b).chain(&within_a) {
        conserved(r);
    }
    let got = cross[0].flows[0].throughput_bps;
    let b_alone = within_b[1].flows[0].throughput_bps;
    let a_alone = within_a[0].flows[0].throughput_bps;
    assert!(
        (got / b_alone - 1.0).abs() < 0.1,
        "across {got} bit/s, b's air alone {b_alone}"
    );
    assert!(got < 0.6 * a_alone, "a's air alone {a_alone} bit/s");
    // Both cells carried the same segments (and their ACKs back).
    let a_bytes = cross[0].stations[0].throughput_bps;
    let b_bytes = cross[1].stations[0].throughput_bps;
    assert!(
        (a_bytes / b_bytes - 1.0).abs() < 0.03,
        "a's station {a_bytes} bit/s, b's {b_bytes}"
    );
    assert!(cross[0].flows[0].retransmits.is_some_and(|r| r > 0));
}

#[test]
fn traffic_across_is_deterministic() {
    let text = scenario(
        &(flow("tcp", "sta1", "b.sta1") + "stop_s = 3\n" + &flow("udp_ping", "sta2", "b.sta1")),
        &(flow("ping", "sta2", "a.sta2") + "interval_ms = 50\n"),
        5.0,
    );
    let json = |r: &[Results]| serde_json::to_string(r).unwrap();
    let first = run(&text);
    assert_eq!(json(&first), json(&run(&text)));
    assert_eq!(first[0].flows[1].dst, "b.sta1");
    assert_eq!(first[1].flows[0].dst, "a.sta2");
    for r in &first {
        conserved(r);
        assert!(r.flows.iter().all(|f| f.delivered_packets > 0), "{r:?}");
    }
}

#[test]
fn a_call_to_the_neighbour_waits_behind_its_bloated_ap() {
    let text = txop::builtin::get("neighbours-call").expect("built in");
    let rtt = |stack: &str| {
        let sets = [
            ("duration_s".to_string(), "15".to_string()),
            ("bss[1].stack".to_string(), stack.to_string()),
        ];
        let bsss = parse(text, &sets)
            .and_then(|s| s.resolve_bsss())
            .unwrap_or_else(|e| panic!("{e}"));
        let r = Neighbourhood::new(bsss.iter().map(ResolvedBss::bss_config).collect())
            .expect("valid BSSs")
            .try_run()
            .unwrap_or_else(|stuck| panic!("stuck: {stuck}"));
        r.iter().for_each(conserved);
        let call = &r[0].flows[0];
        assert_eq!(call.dst, "b.sta1");
        call.rtt_ms.expect("echoes came back")
    };
    let bloated = rtt("linux-4.8-bloated");
    let modern = rtt("linux-6.16");
    // Unloaded (before the download starts): both wired links both ways, 20 ms, and
    // four air hops.
    for r in [&bloated, &modern] {
        assert!((20.0..20.6).contains(&r.min), "{r:?}");
    }
    // Loaded for two thirds of the run: the 90th percentile is under load.
    assert!(
        bloated.p90 > 4.0 * modern.p90 && modern.p90 < 40.0,
        "4.8-bloated {bloated:?}\n6.16 {modern:?}"
    );
}
