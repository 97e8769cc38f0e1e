//! The engine alone: an [`Air`] stepped by hand, with a [`Management`] that records
//! what the engine tells it, on both media. No cell runs it: the cell's configuration
//! only builds it.

use super::timer::Timer;
use super::{Air, Management};
use crate::capture::CapturedFrame;
use crate::cell::{Cell, CellConfig, Output, StationConfig};
use crate::mac::frame::{DataFrame, Frame};
use crate::packet::{NodeId, Packet, StationId};
use crate::phy::channel::ErrorModel;
use crate::phy::space::{Placement, SpaceConfig};
use crate::phy::{Band, ChannelWidth, GuardInterval, Standard, TxVector};
use crate::Nanos;

/// What the engine told its management, and when.
#[derive(Clone, Debug, PartialEq)]
enum Told {
    FrameHeardByAp(Nanos, StationId, Frame),
    BeaconEnded(Nanos),
    BeaconCollided(Nanos),
    FrameDone(Nanos, StationId, Frame, bool),
    DataReceived(Nanos, NodeId, NodeId),
    ExchangeEnded(Nanos),
}

/// A management that only listens.
#[derive(Default)]
struct Recorder {
    told: Vec<Told>,
    refreshes: u64,
}

impl Management for Recorder {
    fn frame_heard_by_ap(&mut self, _: &mut Air, t: Nanos, sta: StationId, f: Frame) {
        self.told.push(Told::FrameHeardByAp(t, sta, f));
    }
    fn beacon_ended(
        &mut self,
        _: &mut Air,
        t: Nanos,
        _: &mut dyn FnMut(&mut Air, StationId) -> bool,
    ) {
        self.told.push(Told::BeaconEnded(t));
    }
    fn beacon_collided(&mut self, _: &mut Air, t: Nanos) {
        self.told.push(Told::BeaconCollided(t));
    }
    fn frame_done(&mut self, _: &mut Air, t: Nanos, sta: StationId, f: Frame, acked: bool) {
        self.told.push(Told::FrameDone(t, sta, f, acked));
    }
    fn data_received(&mut self, _: &mut Air, t: Nanos, tx: NodeId, rx: NodeId) {
        self.told.push(Told::DataReceived(t, tx, rx));
    }
    fn exchange_ended(&mut self, _: &mut Air, t: Nanos) {
        self.told.push(Told::ExchangeEnded(t));
    }
    fn refresh(&mut self, _: &mut Air) {
        self.refreshes += 1;
    }
    fn captured_beacon(&self, _: u64) -> CapturedFrame {
        unreachable!("no beacon is sent and nothing is captured")
    }
}

/// An engine of two error-free HT20 MCS 7 stations, in one collision domain or with
/// every node hearing every other at −40 dBm (equal-power space).
fn engine(space: bool) -> Air {
    let tx = TxVector::Ht {
        mcs: 7,
        width: ChannelWidth::Mhz20,
        gi: GuardInterval::Long,
    };
    let sta = || StationConfig::new(tx, ErrorModel::None);
    let mut cfg = CellConfig::new(Standard::N, Band::Ghz5, vec![sta(), sta()]);
    if space {
        let loss = vec![vec![60.0; 3]; 3];
        cfg.space = Some(SpaceConfig::new(Placement::PathLossDb(loss), 20.0));
    }
    Cell::new(cfg, 7).expect("a valid cell").air
}

/// Step `air` through every deadline until it is idle or `end`, handing each step
/// `mgmt`; returns the packets delivered.
fn run(air: &mut Air, mgmt: &mut Recorder, end: Nanos) -> u64 {
    let mut delivered = 0;
    while let Some(t) = air.timers.next_timeout().filter(|&t| t <= end) {
        let (timer, at) = air.timers.expire(t).expect("a deadline is due");
        assert_ne!(
            timer,
            Timer::Management,
            "the engine set management's timer"
        );
        air.fire(timer, at, mgmt);
        while let Some(out) = air.out.pop_front() {
            delivered += u64::from(matches!(out, Output::Delivered { .. }));
        }
    }
    delivered
}

/// What the engine tells its management while it carries downlink data to both
/// stations and station 1's null-data frame (PM=1) to the AP.
fn told(space: bool) -> (Vec<Told>, Air) {
    let mut air = engine(space);
    let mut rec = Recorder::default();
    let now = Nanos::from_us(100);
    for id in 0..40u64 {
        let dst = NodeId(1 + (id % 2) as u16);
        let link = air.nodes[0].link_to(dst).expect("the AP's link");
        air.enqueue(now, 0, link, Packet::new(id, NodeId::AP, dst, 1500));
    }
    let null = Frame::Data(DataFrame::NullData { pm: true });
    assert!(air.queue_frame(StationId(1), null, now));
    let delivered = run(&mut air, &mut rec, Nanos::from_secs(1));
    assert_eq!(delivered, 40, "every packet reached its station");
    (rec.told, air)
}

#[test]
fn the_engine_tells_its_management_what_happened_and_nothing_else() {
    for space in [false, true] {
        let (told, air) = told(space);
        let null = Frame::Data(DataFrame::NullData { pm: true });
        let heard: Vec<&Told> = told
            .iter()
            .filter(|x| matches!(x, Told::FrameHeardByAp(..)))
            .collect();
        let done: Vec<&Told> = told
            .iter()
            .filter(|x| matches!(x, Told::FrameDone(..)))
            .collect();
        // The null-data frame: the AP decodes it once, and its sender learns it was
        // acknowledged (one ACK later).
        let [Told::FrameHeardByAp(t_heard, StationId(1), f)] = heard[..] else {
            panic!("space {space}: {heard:?}");
        };
        assert_eq!(*f, null);
        let [Told::FrameDone(t_done, StationId(1), f, true)] = done[..] else {
            panic!("space {space}: {done:?}");
        };
        assert_eq!(*f, null);
        assert!(t_done > t_heard, "space {space}: ACKed before it was heard");
        // Every data PPDU that got through tells it once (nothing is lost here, but two
        // transmitters can collide).
        let received = told
            .iter()
            .filter(|x| matches!(x, Told::DataReceived(_, NodeId::AP, _)))
            .count() as u64;
        let got_through: u64 = air.stats[1..]
            .iter()
            .map(|s| s.down.ppdus - s.down.collisions - s.down.failures)
            .sum();
        assert!(got_through > 0);
        assert_eq!(received, got_through, "space {space}");
        assert!(told.iter().any(|x| matches!(x, Told::ExchangeEnded(_))));
        assert!(!told
            .iter()
            .any(|x| matches!(x, Told::BeaconEnded(_) | Told::BeaconCollided(_))));
    }
}

/// With every node in range at equal power the two media lay out the same exchanges
/// at the same instants, so they tell management the same things at the same times.
#[test]
fn both_media_tell_management_alike() {
    let (shared, _) = told(false);
    let (spatial, _) = told(true);
    assert_eq!(shared, spatial);
}
