//! Walking stations on the per-node medium, driven by hand: the space's powers follow
//! a walker from the PPDU that starts after it moves, and not before.
//!
//! Two stations stand 5 m either side of their AP and send saturated uplinks at HT
//! MCS 4; one cell has them stand there, the other has them walk apart to 25 m between
//! 1 s and 2 s (waypoints). With 20 dBm and exponent 3.5 at 5 GHz they detect each
//! other (−51.2 dBm at 10 m) until they are 37.8 m apart (−82 dBm), and at 50 m
//! (−86.2 dBm) they are hidden from each other, each still 18.3 dB above the noise at
//! the AP: the textbook hidden pair, whose exchanges nearly all collide.

mod support;

use support::cell_driver::{ht20, sta, up, Driver};
use txop_core::cell::{AirtimeRecord, CellConfig, ExchangeOutcome};
use txop_core::phy::channel::ErrorModel;
use txop_core::phy::fading::Fading;
use txop_core::phy::link_channel::{LinkChannel, MeanSnr, StationChannel};
use txop_core::phy::mobility::{Mobility, Position, Waypoint};
use txop_core::phy::path_loss::LogDistance;
use txop_core::phy::space::{Placement, SpaceConfig, Walker};
use txop_core::phy::{Band, ChannelWidth, Standard};
use txop_core::Nanos;

fn budget() -> LogDistance {
    LogDistance {
        tx_power_dbm: 20.0,
        exponent: 3.5,
        band: Band::Ghz5,
        width: ChannelWidth::Mhz20,
    }
}

/// Station at `x_m` on the x axis; walking to `to_x_m` between 1 s and 2 s if given.
fn station_mobility(x_m: f64, to_x_m: Option<f64>) -> Mobility {
    match to_x_m {
        None => Mobility::Still(Position::new(x_m, 0.0)),
        Some(to) => Mobility::Waypoints(vec![
            Waypoint {
                at: Nanos::from_secs(1),
                position: Position::new(x_m, 0.0),
            },
            Waypoint {
                at: Nanos::from_secs(2),
                position: Position::new(to, 0.0),
            },
        ]),
    }
}

/// The two-station cell, the stations walking apart (`walk`) or standing.
fn cell(walk: bool) -> CellConfig {
    let ap = Mobility::Still(Position::default());
    let mut stations = Vec::new();
    let mut walkers = Vec::new();
    let mut positions = vec![Position::default()];
    for (k, x) in [-5.0, 5.0].into_iter().enumerate() {
        let m = station_mobility(x, walk.then_some(x * 5.0));
        let mut s = sta(
            ht20(4),
            ErrorModel::Snr {
                snr_db: budget().snr_db(5.0),
            },
        );
        if walk {
            let link = |tx: &Mobility, rx: &Mobility| {
                LinkChannel::new(
                    MeanSnr::Geometry {
                        tx: tx.clone(),
                        rx: rx.clone(),
                        path_loss: budget(),
                    },
                    Fading::None,
                    0,
                    k as u64 + 1,
                )
            };
            s.channel = Some(StationChannel {
                down: link(&ap, &m),
                up: link(&m, &ap),
            });
            walkers.push(Walker {
                node: k + 1,
                mobility: m.clone(),
            });
        }
        positions.push(m.position_at(Nanos::ZERO));
        stations.push(s);
    }
    let mut cfg = CellConfig::new(Standard::N, Band::Ghz5, stations);
    cfg.airtime_records = true;
    let mut space = SpaceConfig::new(
        Placement::Positions {
            positions,
            exponent: 3.5,
        },
        20.0,
    );
    space.walkers = walkers;
    cfg.space = Some(space);
    cfg
}

fn run(walk: bool, until_s: u64) -> Vec<AirtimeRecord> {
    let mut d = Driver::new(cell(walk), 7, &[up(1, 0, 256), up(2, 0, 256)]);
    d.run_until(Nanos::from_secs(until_s));
    d.airtime()
}

/// Collided exchanges over all exchanges starting in `[from_s, to_s)`.
fn collided(records: &[AirtimeRecord], from_s: u64, to_s: u64) -> f64 {
    let (from, to) = (Nanos::from_secs(from_s), Nanos::from_secs(to_s));
    let window: Vec<_> = records
        .iter()
        .filter(|r| r.start >= from && r.start < to)
        .collect();
    assert!(window.len() > 100, "{} exchanges", window.len());
    let c = window
        .iter()
        .filter(|r| r.outcome == ExchangeOutcome::Collision)
        .count();
    c as f64 / window.len() as f64
}

#[test]
fn walkers_are_the_still_stations_until_they_move_and_hidden_after() {
    let still = run(false, 4);
    let walked = run(true, 4);
    // Before 1 s nobody has moved: the same exchanges, outcome for outcome.
    let before = |r: &[AirtimeRecord]| -> Vec<AirtimeRecord> {
        r.iter()
            .filter(|x| x.start < Nanos::from_secs(1))
            .copied()
            .collect()
    };
    assert_eq!(before(&still), before(&walked));
    assert!(before(&still).len() > 100, "{}", before(&still).len());
    // Once 50 m apart they are hidden from each other: their exchanges nearly all
    // collide, where in range they seldom do.
    let (in_range, hidden) = (collided(&still, 2, 4), collided(&walked, 2, 4));
    assert!(in_range < 0.2, "in range: {in_range}");
    assert!(hidden > 0.8, "hidden: {hidden}");
}
