//! `[space]` in scenario files (issue 15): every key parsed into the cell's
//! `SpaceConfig`, every error naming its key, the layouts' positions, the link SNRs
//! agreeing with the space, `txop show`'s summary, and the built-in hidden-station
//! scenarios. The expected values are computed here from the log-distance formula and
//! 802.11's thresholds, not taken from the code under test.

mod support;

use support::*;
use txop::scenario::parse;
use txop_core::cell::CellConfig;
use txop_core::phy::channel::ErrorModel;
use txop_core::phy::mobility::Position;
use txop_core::phy::space::{Capture, Placement, RadioMap, SpaceConfig};
use txop_core::phy::{Band, ChannelWidth};
use txop_core::Nanos;

/// The cell `text` (with `sets`) resolves to.
fn cell(text: &str, sets: &[(&str, &str)]) -> CellConfig {
    let sets: Vec<(String, String)> = sets
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let s = parse(text, &sets).unwrap_or_else(|e| panic!("{e}\n{text}"));
    s.resolve().unwrap_or_else(|e| panic!("{e}\n{text}")).cell
}

/// The error `text` (with `sets`) resolves to, as the user sees it after the file name.
fn error(text: &str, sets: &[(&str, &str)]) -> String {
    let sets: Vec<(String, String)> = sets
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    match parse(text, &sets).and_then(|s| s.resolve().map(|_| ())) {
        Ok(()) => panic!("expected an error:\n{text}\n{sets:?}"),
        Err(e) => e.to_string(),
    }
}

fn space(c: &CellConfig) -> &SpaceConfig {
    c.space.as_ref().expect("the cell has space")
}

fn positions(c: &CellConfig) -> Vec<Position> {
    match &space(c).placement {
        Placement::Positions { positions, .. } => positions.clone(),
        other => panic!("not positions: {other:?}"),
    }
}

/// A station's link SNR both ways (the error model's, or its channel's at 0 s).
fn link_snr_db(c: &CellConfig, station: usize) -> (f64, f64) {
    let s = &c.stations[station - 1];
    let ErrorModel::Snr { snr_db } = s.error else {
        panic!("station {station} has no SNR: {:?}", s.error);
    };
    match &s.channel {
        None => (snr_db, snr_db),
        Some(ch) => {
            assert_eq!(ch.down.mean_snr_db(Nanos::ZERO), snr_db);
            (snr_db, ch.up.mean_snr_db(Nanos::ZERO))
        }
    }
}

/// The log-distance SNR at `d` m, 5 GHz, 20 MHz, computed here: free space to 1 m at
/// 5.2 GHz, then 10·n·log10(d), over −174 dBm/Hz + 73 dB + 7 dB noise figure.
fn snr_5ghz_db(tx_dbm: f64, n: f64, d: f64) -> f64 {
    let loss_1m = 20.0 * (4.0 * std::f64::consts::PI * 5.2e9 / 299_792_458.0).log10();
    tx_dbm - (loss_1m + 10.0 * n * d.max(1.0).log10()) - NOISE_20MHZ_DBM
}

const NOISE_20MHZ_DBM: f64 = -174.0 + 73.010_299_956_639_81 + 7.0;

const TWO_AT_25M: &str = "
[space]
[[stations.list]]
position_m = [-25, 0]
[[stations.list]]
position_m = [25, 0]
";

#[test]
fn without_space_the_cell_has_none() {
    assert!(cell("", &[]).space.is_none());
    assert!(cell("[stations]\ndistance_m = 10\n", &[]).space.is_none());
}

#[test]
fn an_empty_space_table_turns_space_on_with_the_standard_thresholds() {
    let c = cell("[space]\n[stations]\ndistance_m = 10\n", &[]);
    let sp = space(&c);
    // 802.11-2016 17.3.10.6 for 20 MHz: −82 dBm preamble, −62 dBm energy.
    assert_eq!(sp.cca_preamble_dbm, -82.0);
    assert_eq!(sp.cca_energy_dbm, -62.0);
    assert_eq!(sp.capture, Capture::Restart { margin_db: 10.0 });
    assert_eq!(sp.tx_power_dbm, 20.0);
    assert_eq!(
        sp.placement,
        Placement::Positions {
            positions: vec![Position::new(0.0, 0.0), Position::new(10.0, 0.0)],
            exponent: 3.5,
        }
    );
}

#[test]
fn every_key_reaches_the_cell() {
    let c = cell(
        "[phy]\ntx_power_dbm = 15\npath_loss_exponent = 3\nap_position_m = [1, 2]\n\
         [space]\nlayout = \"given\"\ncca_preamble_dbm = -90\ncca_energy_dbm = -65.5\n\
         capture = \"restart\"\ncapture_margin_db = 6\n\
         [stations]\nposition_m = [4, 6]\n",
        &[],
    );
    let sp = space(&c);
    assert_eq!(sp.cca_preamble_dbm, -90.0);
    assert_eq!(sp.cca_energy_dbm, -65.5);
    assert_eq!(sp.capture, Capture::Restart { margin_db: 6.0 });
    assert_eq!(sp.tx_power_dbm, 15.0);
    assert_eq!(
        sp.placement,
        Placement::Positions {
            positions: vec![Position::new(1.0, 2.0), Position::new(4.0, 6.0)],
            exponent: 3.0,
        }
    );
    let off = cell(
        "[space]\ncapture = \"off\"\n[stations]\ndistance_m = 5\n",
        &[],
    );
    assert_eq!(space(&off).capture, Capture::Off);
    let m = cell(
        "[space]\npath_loss_db = [[0, 80], [80, 0]]\n[stations]\ncount = 1\n",
        &[],
    );
    assert_eq!(
        space(&m).placement,
        Placement::PathLossDb(vec![vec![0.0, 80.0], vec![80.0, 0.0]])
    );
}

#[test]
fn set_reaches_every_key() {
    let c = cell(
        TWO_AT_25M,
        &[
            ("space.cca_preamble_dbm", "-95"),
            ("space.cca_energy_dbm", "-70"),
            ("space.capture", "off"),
            ("space.layout", "ring"),
        ],
    );
    let sp = space(&c);
    assert_eq!(
        (sp.cca_preamble_dbm, sp.cca_energy_dbm, sp.capture),
        (-95.0, -70.0, Capture::Off)
    );
    let c = cell(TWO_AT_25M, &[("space.capture_margin_db", "3")]);
    assert_eq!(space(&c).capture, Capture::Restart { margin_db: 3.0 });
    // A `--set space.…` on a scenario without [space] turns it on.
    let c = cell(
        "[stations]\ndistance_m = 10\n",
        &[("space.cca_preamble_dbm", "-85")],
    );
    assert_eq!(space(&c).cca_preamble_dbm, -85.0);
    let c = cell(
        "[stations]\ncount = 1\n",
        &[("space.path_loss_db", "[[0, 70], [71, 0]]")],
    );
    assert_eq!(
        space(&c).placement,
        Placement::PathLossDb(vec![vec![0.0, 70.0], vec![71.0, 0.0]])
    );
}

/// A scenario, its `--set`s, and the start of the error it gives.
type ErrorCase<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a str);

#[test]
fn every_error_names_its_key() {
    let placed = "[stations]\ndistance_m = 10\n";
    let cases: &[ErrorCase<'_>] = &[
        (placed, &[("space.layout", "grid")], "space.layout: unknown value `grid`"),
        (placed, &[("space.cca_preamble_dbm", "-101")], "space.cca_preamble_dbm: must be -100 to -20 dBm"),
        (placed, &[("space.cca_preamble_dbm", "-19")], "space.cca_preamble_dbm: must be -100 to -20 dBm"),
        (placed, &[("space.cca_preamble_dbm", "nan")], "space.cca_preamble_dbm: must be"),
        (placed, &[("space.cca_energy_dbm", "0")], "space.cca_energy_dbm: must be -100 to -20 dBm"),
        (placed, &[("space.capture", "sometimes")], "space.capture: unknown value `sometimes`"),
        (placed, &[("space.capture_margin_db", "41")], "space.capture_margin_db: must be 0 to 40 dB"),
        (placed, &[("space.capture_margin_db", "-1")], "space.capture_margin_db: must be 0 to 40 dB"),
        (
            placed,
            &[("space.capture", "off"), ("space.capture_margin_db", "5")],
            "space.capture_margin_db: applies with capture = \"restart\" only",
        ),
        (placed, &[("space.bogus", "1")], "space.bogus: unknown key"),
        (placed, &[("space", "[]")], "space: expected a table"),
        (placed, &[("space.capture", "1")], "space.capture: unknown value `1`; expected one of restart, off"),
        (placed, &[("space.layout", "1")], "space.layout: unknown value `1`; expected one of given, ring"),
        (
            placed,
            &[("space.cca_preamble_dbm", "-82"), ("phy.tx_power_dbm", "50")],
            "phy.tx_power_dbm: must be",
        ),
        (
            placed,
            &[("space.cca_preamble_dbm", "-82"), ("phy.path_loss_exponent", "9")],
            "phy.path_loss_exponent: must be",
        ),
        // Every station needs a place.
        ("[space]\n", &[], "stations: needs a place in [space]: give position_m or distance_m"),
        (
            "[space]\n[[stations.list]]\ndistance_m = 5\n[[stations.list]]\nmcs = 3\n",
            &[],
            "stations.list[1]: needs a place in [space]",
        ),
        (
            "[space]\n[stations]\ndistance_m = 0\n",
            &[],
            "stations.distance_m: must be more than 0",
        ),
        (
            "[space]\n[stations]\nposition_m = [20000, 0]\n",
            &[],
            "stations.position_m: coordinates must be",
        ),
        // The keys that give an SNR otherwise.
        ("[space]\n[stations]\nsnr_db = 20\n", &[], "stations.snr_db: cannot be combined with [space]: the SNR follows"),
        ("[space]\n[stations]\nloss = 0.1\n", &[], "stations.loss: cannot be combined with [space]: losses follow from the SINR"),
        ("[space]\n[stations]\nsnr_trace = \"x.csv\"\n", &[], "stations.snr_trace: cannot be combined with [space]"),
        // A walk needs a place to start from: a matrix places no one, a ring no point.
        (
            "[space]\npath_loss_db = [[0, 80], [80, 0]]\n[stations]\nvelocity_mps = [1, 0]\n",
            &[],
            "stations.velocity_mps: cannot be combined with space.path_loss_db (the matrix places no one, so no one can walk",
        ),
        (
            "[space]\npath_loss_db = [[0, 80], [80, 0]]\n[stations]\nwaypoints = [[0, 1, 1], [5, 9, 9]]\n",
            &[],
            "stations.waypoints: cannot be combined with space.path_loss_db (the matrix places no one",
        ),
        (
            "[space]\nlayout = \"ring\"\n[stations]\ndistance_m = 3\nvelocity_mps = [1, 0]\n",
            &[],
            "stations.velocity_mps: cannot be combined with distance_m under space.layout = \"ring\"",
        ),
        (
            "[space]\n[stations]\nwaypoints = [[0, 1, 1], [0, 9, 9]]\n",
            &[],
            "stations.waypoints: waypoint 1: at 0 s, not after waypoint 0",
        ),
        (
            "[space]\n[stations]\nwaypoints = [[0, 20000, 1], [5, 9, 9]]\n",
            &[],
            "stations.waypoints: waypoint 0: coordinates must be",
        ),
        (
            "[space]\n[stations]\ndistance_m = 3\ndownlink = { snr_db = 20 }\n",
            &[],
            "stations.downlink.snr_db: cannot be combined with [space]",
        ),
        (
            "[space]\n[[stations.list]]\ndistance_m = 3\n[[stations.list]]\ndistance_m = 3\nuplink = { snr_trace = \"x.csv\" }\n",
            &[],
            "stations.list[1].uplink.snr_trace: cannot be combined with [space]",
        ),
        // The matrix.
        (
            "[space]\npath_loss_db = [[0, 80], [80, 0]]\n[stations]\ncount = 2\n",
            &[],
            "space.path_loss_db: 2 rows; the cell has 3 nodes (the AP first, then 2 stations)",
        ),
        (
            "[space]\npath_loss_db = [[0, 80], [80]]\n",
            &[],
            "space.path_loss_db[1]: 1 entries; expected 2",
        ),
        (
            "[space]\npath_loss_db = [[0, 80], [80, 3]]\n",
            &[],
            "space.path_loss_db[1][1]: the loss from node 1 to itself must be 0",
        ),
        (
            "[space]\npath_loss_db = [[0, -1], [80, 0]]\n",
            &[],
            "space.path_loss_db[0][1]: must be 0 to 500 dB",
        ),
        (
            "[space]\npath_loss_db = [[0, 80], [501, 0]]\n",
            &[],
            "space.path_loss_db[1][0]: must be 0 to 500 dB",
        ),
        (
            "[space]\npath_loss_db = [[0, 80], [80, 0]]\n[stations]\nposition_m = [1, 1]\n",
            &[],
            "stations.position_m: cannot be combined with space.path_loss_db",
        ),
        (
            "[space]\npath_loss_db = [[0, 80], [80, 0]]\n[stations]\ndistance_m = 1\n",
            &[],
            "stations.distance_m: cannot be combined with space.path_loss_db",
        ),
        (
            "[space]\nlayout = \"ring\"\npath_loss_db = [[0, 80], [80, 0]]\n",
            &[],
            "space.layout: cannot be combined with space.path_loss_db",
        ),
        (
            "[phy]\nap_position_m = [1, 1]\n[space]\npath_loss_db = [[0, 80], [80, 0]]\n",
            &[],
            "phy.ap_position_m: cannot be combined with space.path_loss_db",
        ),
        (
            "[space]\npath_loss_db = [[0, 80], [80, 0]]\n",
            &[("space.path_loss_db", "[[0, \"x\"], [80, 0]]")],
            "space.path_loss_db[0][1]: invalid type",
        ),
    ];
    for (text, sets, expected) in cases {
        let e = error(text, sets);
        assert!(
            e.starts_with(expected),
            "{text}{sets:?}\n got: {e}\nwant: {expected}…"
        );
        assert_eq!(e.lines().count(), 1, "{e}");
    }
}

#[test]
fn a_station_out_of_range_of_its_ap_is_an_error_naming_space() {
    // 20 dBm, n = 3.5 at 5 GHz: −82 dBm is reached at 10^((20 + 82 − 46.77) / 35) =
    // 37.8 m. A station at 40 m is out of range; at 35 m it is in.
    let e = error(
        "[space]\n[[stations.list]]\ndistance_m = 5\n[[stations.list]]\nposition_m = [0, 40]\n",
        &[],
    );
    assert!(
        e.starts_with("space: station 2 is out of range of its AP ("),
        "{e}"
    );
    cell("[space]\n[stations]\nposition_m = [0, 35]\n", &[]);
    // A lower threshold brings it back in; a matrix entry either way takes it out.
    cell(
        "[space]\ncca_preamble_dbm = -85\n[stations]\nposition_m = [0, 40]\n",
        &[],
    );
    let e = error(
        "[space]\npath_loss_db = [[0, 90], [103, 0]]\n[stations]\ncount = 1\n",
        &[],
    );
    assert!(e.starts_with("space: station 1 is out of range"), "{e}");
}

#[test]
fn given_layout_puts_distance_stations_along_x_from_the_ap() {
    let c = cell(
        "[phy]\nap_position_m = [3, -4]\n[space]\n[[stations.list]]\ndistance_m = 10\n\
         [[stations.list]]\nposition_m = [0, 0]\n[[stations.list]]\ncount = 2\ndistance_m = 7\n",
        &[],
    );
    assert_eq!(
        positions(&c),
        vec![
            Position::new(3.0, -4.0),
            Position::new(13.0, -4.0),
            Position::new(0.0, 0.0),
            Position::new(10.0, -4.0),
            Position::new(10.0, -4.0),
        ]
    );
}

#[test]
fn ring_layout_spreads_distance_stations_evenly_around_the_ap() {
    // Five stations, the third at a position of its own: the four given by distance
    // go to 0°, 90°, 180° and 270° around the AP at (3, −4), each at its distance.
    let c = cell(
        "[phy]\nap_position_m = [3, -4]\n[space]\nlayout = \"ring\"\n\
         [[stations.list]]\ncount = 2\ndistance_m = 10\n\
         [[stations.list]]\nposition_m = [1, 1]\n\
         [[stations.list]]\ndistance_m = 20\n[[stations.list]]\ndistance_m = 5\n",
        &[],
    );
    let p = positions(&c);
    let expected = [
        (3.0, -4.0),
        (13.0, -4.0),
        (3.0, 6.0),
        (1.0, 1.0),
        (-17.0, -4.0),
        (3.0, -9.0),
    ];
    assert_eq!(p.len(), expected.len());
    for (i, (&got, &(x, y))) in p.iter().zip(&expected).enumerate() {
        assert!(
            (got.x_m - x).abs() < 1e-9 && (got.y_m - y).abs() < 1e-9,
            "node {i}: {got:?}, expected ({x}, {y})"
        );
    }
    // The ring only rotates: each station's link SNR is its distance's, as without
    // space, and what the space's radio map gives for the AP and the station.
    let map = RadioMap::new(space(&c), Band::Ghz5, ChannelWidth::Mhz20);
    for (sta, d) in [(1, 10.0), (2, 10.0), (4, 20.0), (5, 5.0)] {
        let (down, up) = link_snr_db(&c, sta);
        let want = snr_5ghz_db(20.0, 3.5, d);
        assert!(
            (down - want).abs() < 1e-9 && (up - want).abs() < 1e-9,
            "{sta}"
        );
        assert!((map.snr_db(0, sta) - want).abs() < 1e-9, "{sta}");
        assert!((map.snr_db(sta, 0) - want).abs() < 1e-9, "{sta}");
    }
}

#[test]
fn a_ring_of_one_sits_on_the_x_axis() {
    let c = cell(
        "[space]\nlayout = \"ring\"\n[stations]\ndistance_m = 8\n",
        &[],
    );
    assert_eq!(positions(&c)[1], Position::new(8.0, 0.0));
}

#[test]
fn positions_give_the_link_the_same_snr_as_the_space() {
    let c = cell(TWO_AT_25M, &[]);
    let map = RadioMap::new(space(&c), Band::Ghz5, ChannelWidth::Mhz20);
    let want = snr_5ghz_db(20.0, 3.5, 25.0);
    assert!((want - 18.3).abs() < 0.05, "{want}");
    for sta in [1, 2] {
        let (down, up) = link_snr_db(&c, sta);
        assert!((down - want).abs() < 1e-9 && (up - want).abs() < 1e-9);
        assert!((map.snr_db(0, sta) - want).abs() < 1e-9);
    }
    // 50 m apart: −86.2 dBm, below −82 dBm. Hidden from each other, not from the AP.
    assert!((map.rx_dbm(1, 2) - (snr_5ghz_db(20.0, 3.5, 50.0) + NOISE_20MHZ_DBM)).abs() < 1e-9);
    assert!(!map.detects(1, 2) && !map.detects(2, 1));
    assert!(map.detects(0, 1) && map.detects(1, 0) && map.detects(0, 2));
}

#[test]
fn a_matrix_gives_each_direction_its_snr() {
    // Station 1 symmetric (80 dB), station 2 85 dB down and 90 dB up.
    let c = cell(
        "[space]\npath_loss_db = [[0, 80, 85], [80, 0, 200], [90, 200, 0]]\n\
         [stations]\ncount = 2\n",
        &[],
    );
    let snr = |loss: f64| 20.0 - loss - NOISE_20MHZ_DBM;
    let (d1, u1) = link_snr_db(&c, 1);
    assert!((d1 - snr(80.0)).abs() < 1e-9 && (u1 - snr(80.0)).abs() < 1e-9);
    assert!(
        c.stations[0].channel.is_none(),
        "a symmetric pair is one SNR"
    );
    let (d2, u2) = link_snr_db(&c, 2);
    assert!((d2 - snr(85.0)).abs() < 1e-9, "{d2}");
    assert!((u2 - snr(90.0)).abs() < 1e-9, "{u2}");
    // The rate is chosen for the downlink's SNR, as for any station: 29 dB is MCS 7.
    assert_eq!(c.stations[1].tx.modulation_label(), "HT20 MCS7 LGI");
}

#[test]
fn a_matrix_of_the_positions_losses_resolves_like_the_positions() {
    // docs/scenarios.md's two examples: the same cell by positions and by matrix.
    let doc = include_str!("../../../docs/scenarios.md");
    let section = &doc[doc.find("## `[space]`").expect("a [space] section")..];
    let section = &section[..section.find("\n## ").expect("a next section")];
    let blocks: Vec<&str> = section
        .split("```toml\n")
        .skip(1)
        .map(|b| &b[..b.find("```").expect("closed")])
        .collect();
    assert_eq!(blocks.len(), 2, "{blocks:?}");
    let by_place = cell(blocks[0], &[]);
    let by_matrix = cell(blocks[1], &[]);
    for sta in [1, 2] {
        let (a, b) = (link_snr_db(&by_place, sta), link_snr_db(&by_matrix, sta));
        assert!(
            (a.0 - b.0).abs() < 0.05 && (a.1 - b.1).abs() < 0.05,
            "{a:?} {b:?}"
        );
        assert_eq!(
            by_place.stations[sta - 1].tx,
            by_matrix.stations[sta - 1].tx
        );
    }
    let m1 = RadioMap::new(space(&by_place), Band::Ghz5, ChannelWidth::Mhz20);
    let m2 = RadioMap::new(space(&by_matrix), Band::Ghz5, ChannelWidth::Mhz20);
    for i in 0..3 {
        for j in (0..3).filter(|&j| j != i) {
            assert!((m1.rx_dbm(i, j) - m2.rx_dbm(i, j)).abs() < 0.05, "{i}→{j}");
            assert_eq!(m1.detects(i, j), m2.detects(i, j), "{i}→{j}");
        }
    }
}

#[test]
fn fading_goes_with_space() {
    let c = cell(
        "[space]\n[stations]\ndistance_m = 10\nfading = \"rayleigh\"\n",
        &[],
    );
    let ch = c.stations[0].channel.as_ref().expect("a fading channel");
    let want = snr_5ghz_db(20.0, 3.5, 10.0);
    assert!((ch.down.mean_snr_db(Nanos::ZERO) - want).abs() < 1e-9);
}

#[test]
fn show_prints_where_everyone_stands_and_who_is_hidden() {
    let o = txop(&["show", "hidden-stations"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for line in [
        "# Resolved space (for reading; ignored as input):",
        "# 20 dBm, log-distance exponent 3.5; CCA preamble -82 dBm, energy -62 dBm; capture restart at 10 dB; noise -94.0 dBm",
        "# AP at (0, 0) m",
        "# station 1 at (-25, 0) m: AP -75.7 dBm (SNR 18.3 dB); hidden from: 2",
        "# station 2 at (25, 0) m: AP -75.7 dBm (SNR 18.3 dB); hidden from: 1",
    ] {
        assert!(out.lines().any(|l| l == line), "missing {line:?} in:\n{out}");
    }
    // What show prints is a scenario again, with the same space.
    let dir = scratch("space-show");
    let file = dir.join("again.toml");
    std::fs::write(&file, &out).unwrap();
    let again = cell(&out, &[]);
    let original = cell(txop::builtin::get("hidden-stations").unwrap(), &[]);
    assert_eq!(again.space, original.space);
    let o = txop(&["show", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), out);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn show_of_a_ring_and_a_matrix() {
    let dir = scratch("space-show-kinds");
    let ring = dir.join("ring.toml");
    std::fs::write(
        &ring,
        "[space]\nlayout = \"ring\"\ncapture = \"off\"\n[stations]\ncount = 4\ndistance_m = 30\n",
    )
    .unwrap();
    let o = txop(&["show", ring.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    // 30 m: SNR 15.5 dB. Neighbours on the ring are 42.4 m apart (−83.7 dBm: hidden),
    // opposite ones 60 m (hidden too).
    for line in [
        "# station 1 at (30, 0) m: AP -78.5 dBm (SNR 15.5 dB); hidden from: 2–4",
        "# station 2 at (0, 30) m: AP -78.5 dBm (SNR 15.5 dB); hidden from: 1, 3–4",
        "# station 3 at (-30, 0) m: AP -78.5 dBm (SNR 15.5 dB); hidden from: 1–2, 4",
        "# station 4 at (0, -30) m: AP -78.5 dBm (SNR 15.5 dB); hidden from: 1–3",
    ] {
        assert!(
            out.lines().any(|l| l == line),
            "missing {line:?} in:\n{out}"
        );
    }
    assert!(out.contains("; capture off;"), "{out}");
    let near = txop(&[
        "show",
        ring.to_str().unwrap(),
        "--set",
        "stations.distance_m=10",
    ]);
    assert!(stdout(&near)
        .contains("# station 1 at (10, 0) m: AP -61.8 dBm (SNR 32.2 dB); hears every station"));
    let matrix = dir.join("matrix.toml");
    std::fs::write(
        &matrix,
        "[space]\npath_loss_db = [[0, 80, 85], [80, 0, 200], [90, 200, 0]]\n[stations]\ncount = 2\n",
    )
    .unwrap();
    let o = txop(&["show", matrix.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for line in [
        "# 20 dBm, path losses from space.path_loss_db; CCA preamble -82 dBm, energy -62 dBm; capture restart at 10 dB; noise -94.0 dBm",
        "# AP",
        "# station 1: AP -60.0 dBm (SNR 34.0 dB); hidden from: 2",
        "# station 2: AP -65.0 dBm (SNR 29.0 dB), at the AP -70.0 dBm (SNR 24.0 dB); hidden from: 1",
    ] {
        assert!(out.lines().any(|l| l == line), "missing {line:?} in:\n{out}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn cli_errors_are_one_line_naming_the_key() {
    assert_user_error(
        &[
            "run",
            "hidden-stations",
            "--set",
            "space.capture_margin_db=50",
        ],
        &["hidden-stations: space.capture_margin_db: must be 0 to 40 dB"],
    );
    assert_user_error(
        &[
            "show",
            "hidden-stations",
            "--set",
            "stations.list[1].position_m=[80, 0]",
        ],
        &["hidden-stations: space: station 2 is out of range of its AP ("],
    );
    assert_user_error(
        &[
            "run",
            "hidden-stations",
            "--set",
            "stations.list[0].snr_db=20",
        ],
        &["hidden-stations: stations.list[0].snr_db: cannot be combined with [space]"],
    );
}

#[test]
fn the_hidden_station_built_ins_place_two_stations_hidden_from_each_other() {
    for name in ["hidden-stations", "hidden-stations-rts"] {
        let text = txop::builtin::get(name).unwrap_or_else(|| panic!("{name} is built in"));
        assert!(text.starts_with("# "), "{name} has a comment header");
        let c = cell(text, &[]);
        assert_eq!(
            positions(&c),
            vec![
                Position::new(0.0, 0.0),
                Position::new(-25.0, 0.0),
                Position::new(25.0, 0.0)
            ]
        );
        let map = RadioMap::new(space(&c), Band::Ghz5, ChannelWidth::Mhz20);
        assert!(!map.detects(1, 2) && !map.detects(2, 1), "{name}: hidden");
        for sta in [1, 2] {
            assert!(map.detects(0, sta) && map.detects(sta, 0), "{name}");
            // 18.3 dB: HT MCS 4 (39 Mbit/s) is the highest rate with ≤ 10 % PER.
            assert_eq!(c.stations[sta - 1].tx.modulation_label(), "HT20 MCS4 LGI");
        }
        let rts = c.rts_threshold_bytes;
        assert_eq!(rts, (name == "hidden-stations-rts").then_some(0), "{name}");
    }
    // The two differ in RTS/CTS alone.
    let plain = cell(txop::builtin::get("hidden-stations").unwrap(), &[]);
    let mut rts = cell(txop::builtin::get("hidden-stations-rts").unwrap(), &[]);
    rts.rts_threshold_bytes = None;
    assert_eq!(format!("{plain:?}"), format!("{rts:?}"));
}

#[test]
fn the_hidden_station_built_ins_run_to_the_end() {
    for name in ["hidden-stations", "hidden-stations-rts"] {
        let o = txop(&["run", name, "--json"]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
        assert_eq!(v["duration_s"].as_f64(), Some(10.0), "{name}");
        let c = &v["conservation"];
        let n = |k: &str| c[k].as_u64().unwrap();
        assert_eq!(
            n("offered_packets"),
            n("delivered_packets") + n("dropped_packets") + n("inside_packets"),
            "{name}"
        );
        for s in v["stations"].as_array().unwrap() {
            assert!(s["throughput_bps"].as_f64().unwrap() > 0.0, "{name}");
        }
    }
}

/// Issue 25: with space, a station's downlink and uplink exchanges that overlap in time
/// were each charged their whole span, so a station could be charged more airtime than
/// the run lasted (1.055 s in 1 s for this one: its AP and it both send 30 Mbit/s and
/// collide 42 times). Overlapping time is split among the exchanges sharing it, as in
/// one collision domain, so no station exceeds the run and the stations' airtimes sum
/// to at most the busy time, short of it by no more than the exchanges still under way
/// at the end (at most one per node: a few ms each).
#[test]
fn no_station_is_charged_more_airtime_than_the_run_lasted() {
    let both = "duration_s = 1\nstack = \"linux-6.16\"\n[space]\n[traffic]\nkind = \"cbr\"\n\
                direction = \"both\"\nrate_mbps = 30\n[[stations.list]]\nposition_m = [-13, -22]\n";
    for (name, text, nodes) in [
        ("both ways at 25 m", both, 2.0),
        (
            "hidden-stations",
            txop::builtin::get("hidden-stations").unwrap(),
            3.0,
        ),
        (
            "hidden-stations-rts",
            txop::builtin::get("hidden-stations-rts").unwrap(),
            3.0,
        ),
    ] {
        let cfg = parse(text, &[]).and_then(|s| s.resolve()).expect(name);
        // No station above the run, and the charges within the busy time
        // (`guard::check_airtime`, which `run_guarded` applies).
        let r = guard::run_guarded(name, cfg);
        let busy_ns = r.busy_fraction * r.duration_s * 1e9;
        let sum_ns: f64 = r.stations.iter().map(|s| s.airtime_ns as f64).sum();
        // Under way at the end: at most one exchange per node, each within a 5.484 ms
        // PPDU (the longest an HT A-MPDU may last, 802.11-2016 §19.4.3's aPPDUMaxTime)
        // plus its RTS/CTS and BlockAck.
        assert!(
            busy_ns - sum_ns <= nodes * 6e6,
            "{name}: {sum_ns} ns charged of {busy_ns} ns busy"
        );
    }
}
