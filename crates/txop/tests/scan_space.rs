//! Background scanning in `[space]` (issue 26, "everything composes": a scanning station
//! hidden from another). Two stations hidden from each other saturate the uplink to one
//! AP (the `hidden-stations` built-in); station 1 scans both bands. While it is off the
//! channel station 2 is alone on the air, so station 2's throughput is the mix of the two
//! cells it alternates between, weighted by the time station 1 spends away (its own scan
//! counter): alone, and beside a hidden station. Both references are run here as their
//! own cells; nothing is taken from the run under test but the time away.

mod support;

use support::*;
use txop_results::Results;

const SCAN: (&str, &str) = (
    "stations.list[0].scan",
    "{policy=\"bounded\",bands=\"both\",start_s=1,pause_s=3}",
);

fn run(case: &str, sets: &[(&str, &str)], seed: u64) -> Results {
    let mut all = vec![("duration_s", "20")];
    all.extend_from_slice(sets);
    let text = txop::builtin::get("hidden-stations").expect("built-in");
    guard::run_guarded(case, resolved(case, text, &owned(&all), seed))
}

#[test]
fn a_scanning_station_hidden_from_another_lends_it_the_air_while_away() {
    for seed in [1, 2, 3] {
        let scanning = run("scanning", &[SCAN], seed);
        let hidden = run("hidden", &[], seed);
        let alone = run(
            "alone",
            &[("stations.list", "[{position_m=[25.0,0.0]}]")],
            seed,
        );
        let scan = scanning.stations[0].scan.expect("station 1 scans");
        assert!(
            scan.scans_completed >= 1 && scan.channels_scanned >= 37,
            "seed {seed}: the scan did not run: {scan:?}"
        );
        let away = scan.off_channel_ns as f64 / 20e9;
        let (t_alone, t_hidden) = (
            alone.stations[0].throughput_bps,
            hidden.stations[1].throughput_bps,
        );
        let expected = away * t_alone + (1.0 - away) * t_hidden;
        let got = scanning.stations[1].throughput_bps;
        assert!(
            (got / expected - 1.0).abs() < 0.10,
            "seed {seed}: station 2 {:.2} Mbit/s, expected {:.2} ({:.0} % of the time alone at \
             {:.2}, else hidden at {:.2})",
            got / 1e6,
            expected / 1e6,
            away * 100.0,
            t_alone / 1e6,
            t_hidden / 1e6
        );
        // The scanner gets less than it would beside its hidden neighbour all along.
        assert!(scanning.stations[0].throughput_bps < hidden.stations[0].throughput_bps);
    }
}
