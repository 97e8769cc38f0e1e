//! A rate fixed for one direction of a station's link (issue 29, item 2): the AP's
//! `iw dev … set bitrates` while the client keeps its own rate control, as the
//! bufferbloat project's ath10k runs were made. `downlink = { mcs = … }` fixes the
//! AP's frames to the station, `uplink = { … }` the station's; the other direction is
//! untouched. The references are the same cell with the rate set for the whole link.

mod support;

use support::*;
use txop_results::Results;

/// One HT20 station, saturated UDP in `direction`, three seconds.
const CELL: &str = r#"
stack = "linux-6.16"
duration_s = 3
[phy]
standard = "n"
band = "5"
width_mhz = 20
[stations]
count = 1
[traffic]
kind = "saturated"
packet_bytes = 1500
probe_interval_ms = 0
"#;

fn run(case: &str, sets: &[(&str, &str)]) -> Results {
    guard::run_guarded(case, resolved(case, CELL, &owned(sets), 1))
}

/// A downlink fixed at MCS 0 carries exactly what a link at MCS 0 both ways carries
/// (the AP's frames are all that go out under a saturated download), and leaves a
/// saturated upload exactly as at the station's own MCS 7. The reverse for `uplink`.
#[test]
fn a_fixed_direction_is_that_direction_alone() {
    let down = ("traffic.direction", "downlink");
    let up = ("traffic.direction", "uplink");
    let fixed_down = ("stations.list", "[{mcs = 7, downlink = { mcs = 0 }}]");
    let fixed_up = ("stations.list", "[{mcs = 7, uplink = { mcs = 0 }}]");
    let at = |mcs: &'static str| ("stations.mcs", mcs);
    let same = |what: &str, a: &Results, b: &Results| {
        let (sa, sb) = (&a.stations[0], &b.stations[0]);
        assert_eq!(
            (sa.downlink_bps, sa.uplink_bps, sa.ppdus),
            (sb.downlink_bps, sb.uplink_bps, sb.ppdus),
            "{what}"
        );
    };
    same(
        "downlink at MCS 0 vs all at MCS 0, download",
        &run("fixed down, download", &[down, fixed_down]),
        &run("MCS 0, download", &[down, at("0")]),
    );
    same(
        "downlink at MCS 0 vs all at MCS 7, upload",
        &run("fixed down, upload", &[up, fixed_down]),
        &run("MCS 7, upload", &[up, at("7")]),
    );
    same(
        "uplink at MCS 0 vs all at MCS 0, upload",
        &run("fixed up, upload", &[up, fixed_up]),
        &run("MCS 0, upload", &[up, at("0")]),
    );
    same(
        "uplink at MCS 0 vs all at MCS 7, download",
        &run("fixed up, download", &[down, fixed_up]),
        &run("MCS 7, download", &[down, at("7")]),
    );
    let r = run("fixed down, download", &[down, fixed_down]);
    assert_eq!(r.stations[0].rate, "down HT20 MCS0 LGI, up HT20 MCS7 LGI");
}

/// A station running minstrel_ht beside a downlink fixed at MCS 3: the AP's link
/// probes nothing and records no rate changes, the station's probes and climbs above
/// MCS 3 (26 Mbit/s) on its clean 30 dB channel.
#[test]
fn the_station_keeps_its_rate_control_beside_a_fixed_downlink() {
    let r = run(
        "minstrel up, MCS 3 down",
        &[
            ("traffic.direction", "both"),
            (
                "stations.list",
                "[{snr_db = 30, rate_control = \"minstrel_ht\", downlink = { mcs = 3 }}]",
            ),
        ],
    );
    let rc = r.stations[0].rate_control.as_ref().expect("rate control");
    assert_eq!(rc.downlink.probes, 0);
    assert!(rc.downlink.rate_series_bps.is_empty());
    assert!(rc.uplink.probes > 0);
    let fastest = rc
        .uplink
        .rate_series_bps
        .iter()
        .cloned()
        .fold(0.0, f64::max);
    assert!(fastest > 26e6, "uplink at most {fastest} bit/s");
    assert!(r.stations[0].downlink_bps > 0.0 && r.stations[0].downlink_bps < 26e6);
}

/// A direction's rate is checked as the station's: one line naming the key.
#[test]
fn a_bad_direction_rate_names_its_key() {
    assert_user_error(
        &[
            "run",
            "default",
            "--set",
            "stations.list=[{mcs = 7, downlink = { mcs = 0, rate_mbps = 6 }}]",
        ],
        &["stations.list[0].downlink.rate_mbps", "not both"],
    );
    assert_user_error(
        &[
            "run",
            "default",
            "--set",
            "phy.standard=\"a\"",
            "--set",
            "stations.list=[{rate_mbps = 54, uplink = { mcs = 1 }}]",
        ],
        &["stations.list[0].uplink.mcs", "802.11a/b/g"],
    );
}
