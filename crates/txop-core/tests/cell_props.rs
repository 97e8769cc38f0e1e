//! Property tests of `Cell` as a sans-I/O state machine: random cells (every stack era,
//! QoS or not, loss, scanning and power-save stations; on one collision domain or in
//! space with random path losses, hidden pairs included) driven by random sequences of
//! packet arrivals and clock advances, checked against invariants that need no
//! expected numbers:
//!
//! - **packets are conserved** after every call: offered = delivered + dropped + inside;
//!   each packet leaves at most once, at the node it was sent to, never before it came;
//! - **airtime is conserved**: the medium time charged in airtime records and the busy
//!   time never exceed the time elapsed, and no record ends in the future;
//! - **the contract holds**: outputs come in time order and never ahead of `now`; after
//!   `handle_timeout(now)` the next deadline is later than `now`; a bounded number of
//!   deadlines fire at one instant;
//! - **it drains**: without scanning or power save, every packet is delivered or dropped
//!   within 5 s of the last arrival;
//! - **it is deterministic**: the same sequence gives the same outputs.
//!
//! 64 cells × up to 40 operations by default (a few seconds); `PROPTEST_CASES` raises it.

use proptest::prelude::*;
use std::collections::HashSet;
use txop_core::cell::{Cell, CellConfig, Output, StationConfig, StationPowerSave, StationScan};
use txop_core::mac80211::powersave::PowerSaveConfig;
use txop_core::mac80211::scan::{ScanBands, ScanConfig, ScanPolicy};
use txop_core::phy::channel::ErrorModel;
use txop_core::phy::space::{Placement, SpaceConfig};
use txop_core::phy::{Band, ChannelWidth, GuardInterval, Standard, TxVector};
use txop_core::{Nanos, NodeId, Packet, StationId};

/// One step of the driver.
#[derive(Clone, Debug)]
enum Op {
    /// `burst` packets arrive at once, for station `station` (from the AP) or from it.
    Offer {
        station: u16,
        downlink: bool,
        len_bytes: u32,
        tid: u8,
        flow: u32,
        burst: u16,
    },
    /// The clock advances by `us`, firing every deadline on the way.
    Advance { us: u64 },
}

/// A random cell.
#[derive(Clone, Debug)]
struct Setup {
    stations: u16,
    stack: &'static str,
    qos: bool,
    mcs: Vec<u8>,
    loss: f64,
    scanning: bool,
    power_save: bool,
    /// With space: the path loss (dB) between every pair of nodes, AP first
    /// (symmetric); losses then follow from the SINR.
    path_loss_db: Option<Vec<Vec<f64>>>,
}

/// A symmetric path-loss matrix for `nodes` nodes: every station within 50–95 dB of the
/// AP (in range at 20 dBm: at least −75 dBm, above the −82 dBm preamble threshold), and
/// each pair of stations 50–130 dB apart, so some hear each other and some are hidden.
fn path_losses(nodes: usize) -> impl Strategy<Value = Vec<Vec<f64>>> {
    let pairs = nodes * (nodes - 1) / 2;
    proptest::collection::vec(0.0f64..1.0, pairs).prop_map(move |u| {
        // Pair (a, b), a < b, draws u[k] with k its place in row-major order.
        let loss = |a: usize, b: usize| {
            let k = a * nodes - a * (a + 1) / 2 + (b - a - 1);
            let span = if a == 0 { 45.0 } else { 80.0 };
            50.0 + span * u[k]
        };
        (0..nodes)
            .map(|i| {
                (0..nodes)
                    .map(|j| {
                        if i == j {
                            0.0
                        } else {
                            loss(i.min(j), i.max(j))
                        }
                    })
                    .collect()
            })
            .collect()
    })
}

fn setups() -> impl Strategy<Value = Setup> {
    let stacks: Vec<&'static str> = std::iter::once("simple")
        .chain(txop_core::stack::PRESETS.iter().map(|(n, _)| *n))
        .collect();
    (1u16..=5, proptest::sample::select(stacks), any::<bool>())
        .prop_flat_map(|(stations, stack, qos)| {
            (
                Just(stations),
                Just(stack),
                Just(qos),
                proptest::collection::vec(0u8..8, stations as usize),
                prop_oneof![Just(0.0), 0.0f64..0.6],
                any::<bool>(),
                any::<bool>(),
                proptest::option::of(path_losses(stations as usize + 1)),
            )
        })
        .prop_map(
            |(stations, stack, qos, mcs, loss, scanning, power_save, path_loss_db)| {
                let space = path_loss_db.is_some();
                Setup {
                    stations,
                    stack,
                    qos,
                    mcs,
                    loss: if space { 0.0 } else { loss },
                    scanning,
                    power_save,
                    path_loss_db,
                }
            },
        )
}

fn ops(stations: u16) -> impl Strategy<Value = Vec<Op>> {
    let offer = (
        1..=stations,
        any::<bool>(),
        40u32..=1500,
        0u8..8,
        0u32..6,
        1u16..=64,
    )
        .prop_map(
            |(station, downlink, len_bytes, tid, flow, burst)| Op::Offer {
                station,
                downlink,
                len_bytes,
                tid,
                flow,
                burst,
            },
        );
    let advance =
        prop_oneof![0u64..50, 50u64..5_000, 5_000u64..200_000].prop_map(|us| Op::Advance { us });
    proptest::collection::vec(prop_oneof![offer, advance], 1..40)
}

fn config(s: &Setup) -> CellConfig {
    let stations = s
        .mcs
        .iter()
        .map(|&mcs| {
            let tx = TxVector::Ht {
                mcs,
                width: ChannelWidth::Mhz20,
                gi: GuardInterval::Long,
            };
            let error = if s.loss > 0.0 {
                ErrorModel::FixedLoss {
                    probability: s.loss,
                }
            } else {
                ErrorModel::None
            };
            StationConfig::new(tx, error)
        })
        .collect();
    let mut cfg = CellConfig::new(Standard::N, Band::Ghz5, stations);
    cfg.stack = if s.stack == "simple" {
        txop_core::stack::simple()
    } else {
        txop_core::stack::preset(s.stack).expect("listed preset")
    };
    cfg.qos = s.qos;
    cfg.aggregation = s.qos;
    cfg.airtime_records = true;
    if s.scanning {
        let scan = ScanConfig::periodic(
            ScanPolicy::Bounded,
            ScanBands::Both,
            Nanos::from_ms(20),
            Nanos::from_ms(300),
        );
        cfg.station_scans.push(StationScan {
            station: StationId(1),
            scan,
        });
    }
    if s.power_save {
        cfg.station_power_save.push(StationPowerSave {
            station: StationId(s.stations),
            power_save: PowerSaveConfig::default(),
        });
    }
    if let Some(m) = &s.path_loss_db {
        cfg.space = Some(SpaceConfig::new(Placement::PathLossDb(m.clone()), 20.0));
    }
    cfg
}

/// Deadlines that may fire at one instant before the test calls it stuck.
const MAX_STEPS_AT_ONE_INSTANT: u32 = 100_000;

/// Drives a cell and checks the invariants after every call.
struct Driver {
    cell: Cell,
    now: Nanos,
    next_id: u64,
    offered: u64,
    delivered: u64,
    dropped: u64,
    gone: HashSet<u64>,
    charged_ns: u64,
    last_output_at: Nanos,
    log: Vec<Output>,
}

impl Driver {
    fn new(cfg: CellConfig, seed: u64) -> Driver {
        Driver {
            cell: Cell::new(cfg, seed).expect("valid config"),
            now: Nanos::ZERO,
            next_id: 0,
            offered: 0,
            delivered: 0,
            dropped: 0,
            gone: HashSet::new(),
            charged_ns: 0,
            last_output_at: Nanos::ZERO,
            log: Vec::new(),
        }
    }

    fn drain(&mut self) -> Result<(), TestCaseError> {
        while let Some(out) = self.cell.poll_output() {
            let at = match out {
                Output::Delivered { at, packet, .. } => {
                    self.delivered += 1;
                    prop_assert!(
                        self.gone.insert(packet.id),
                        "packet {} left twice",
                        packet.id
                    );
                    prop_assert!(at >= packet.enqueued_at, "delivered before it came");
                    at
                }
                Output::Dropped { at, packet, .. } => {
                    self.dropped += 1;
                    prop_assert!(
                        self.gone.insert(packet.id),
                        "packet {} left twice",
                        packet.id
                    );
                    at
                }
                Output::Airtime(r) => {
                    self.charged_ns += r.airtime.as_ns();
                    prop_assert!(
                        r.start + r.airtime <= self.now,
                        "an airtime record ends in the future: {r:?} at {:?}",
                        self.now
                    );
                    r.start
                }
            };
            if !matches!(out, Output::Airtime(_)) {
                prop_assert!(
                    at <= self.now,
                    "output at {at:?} ahead of now {:?}",
                    self.now
                );
                prop_assert!(at >= self.last_output_at, "outputs out of time order");
                self.last_output_at = at;
            }
            self.log.push(out);
        }
        let inside = self.cell.packets_inside();
        prop_assert_eq!(
            self.offered,
            self.delivered + self.dropped + inside,
            "offered = delivered + dropped + inside at {:?}",
            self.now
        );
        prop_assert!(
            self.charged_ns <= self.now.as_ns(),
            "more airtime charged than elapsed"
        );
        prop_assert!(
            self.cell.busy_ns() <= self.now.as_ns(),
            "busy longer than elapsed"
        );
        Ok(())
    }

    fn offer(
        &mut self,
        station: u16,
        downlink: bool,
        len_bytes: u32,
        tid: u8,
        flow: u32,
    ) -> Result<(), TestCaseError> {
        let (src, dst) = if downlink {
            (NodeId::AP, NodeId::station(station))
        } else {
            (NodeId::station(station), NodeId::AP)
        };
        let mut p = Packet::new(self.next_id, src, dst, len_bytes);
        p.tid = tid;
        p.flow = flow;
        self.next_id += 1;
        self.offered += 1;
        self.cell.handle_packet(self.now, p);
        self.drain()
    }

    /// Advance the clock to `until`, firing each deadline at its time.
    fn advance_to(&mut self, until: Nanos) -> Result<(), TestCaseError> {
        let mut steps_here = 0;
        while let Some(t) = self.cell.poll_timeout() {
            if t > until {
                break;
            }
            prop_assert!(
                t >= self.now,
                "deadline {t:?} in the past (now {:?})",
                self.now
            );
            steps_here = if t == self.now { steps_here + 1 } else { 0 };
            prop_assert!(steps_here < MAX_STEPS_AT_ONE_INSTANT, "stuck at {t:?}");
            self.now = t;
            self.cell.handle_timeout(t);
            self.drain()?;
            if let Some(next) = self.cell.poll_timeout() {
                prop_assert!(next >= t, "a deadline went back in time");
            }
        }
        self.now = until;
        self.cell.handle_timeout(until);
        self.drain()
    }

    fn run(&mut self, ops: &[Op]) -> Result<(), TestCaseError> {
        for op in ops {
            match *op {
                Op::Offer {
                    station,
                    downlink,
                    len_bytes,
                    tid,
                    flow,
                    burst,
                } => {
                    for _ in 0..burst {
                        self.offer(station, downlink, len_bytes, tid, flow)?;
                    }
                }
                Op::Advance { us } => self.advance_to(self.now + Nanos::from_us(us))?,
            }
        }
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn cells_conserve_packets_and_airtime_and_keep_the_contract(
        setup in setups(),
        ops in (1u16..=5).prop_flat_map(ops),
        seed in any::<u64>(),
    ) {
        let ops: Vec<Op> = ops
            .into_iter()
            .map(|op| match op {
                Op::Offer { station, downlink, len_bytes, tid, flow, burst } => Op::Offer {
                    station: 1 + (station - 1) % setup.stations,
                    downlink, len_bytes, tid, flow, burst,
                },
                other => other,
            })
            .collect();
        let cfg = config(&setup);
        prop_assume!(cfg.validate().is_ok());
        let mut a = Driver::new(cfg.clone(), seed);
        a.run(&ops)?;
        let quiet = !setup.scanning && !setup.power_save;
        a.advance_to(a.now + Nanos::from_secs(5))?;
        if quiet {
            prop_assert_eq!(a.cell.packets_inside(), 0, "packets still inside 5 s after the last arrival");
        }
        let mut b = Driver::new(cfg, seed);
        b.run(&ops)?;
        b.advance_to(b.now + Nanos::from_secs(5))?;
        prop_assert!(a.log == b.log, "the same inputs gave different outputs");
    }
}
