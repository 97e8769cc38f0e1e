//! One BSS: an AP and N stations sharing one channel, driven sans-I/O ([`Cell`]).
//!
//! A cell composes the MAC engine and the management above it, and owns no algorithm
//! of either. Where the parts live:
//!
//! - this file: [`Cell`], its construction (the nodes: the AP is node 0, station *n*
//!   node *n*, and their links) and its four entry points;
//! - `config`: what a cell is built from ([`CellConfig`], [`StationConfig`]) and its
//!   validation;
//! - `management`: beacons, background scanning and power save (reference §7, §9),
//!   which the engine answers to through its `Management` trait;
//! - `air/`: the MAC engine (`Air`): the nodes it runs, the medium chosen
//!   once when the cell is built (one collision domain, or every node's own view with
//!   space), EDCA contention, the frame exchange, the counters ([`StationStats`],
//!   [`LinkStats`], [`AirtimeRecord`]), the named deadlines [`Cell::handle_timeout`]
//!   runs, and the capture records;
//! - `mac/frame.rs`: the frames the MAC sends on its own (beacon, PS-Poll, null-data).
//!
//! Above the MAC every node runs a transmit path (`TxPath`, `txpath.rs`): the qdisc, mac80211's
//! TXQs, the airtime scheduler, AQL and the driver, configured by a
//! [`StackConfig`](crate::stack::StackConfig) (a kernel era). The MAC transmits the
//! PPDUs the driver put in the hardware queue, reports their outcome back, and charges
//! the airtime to the AP's scheduler.

mod config;
mod management;

use self::config::{aggregates, build_limits, expected_kbps, link_rate_control};
pub use self::config::{CellConfig, StationConfig, StationPowerSave, StationScan};
use self::management::Mgmt;
pub use crate::air::stats::{AirtimeRecord, LinkStats, RateSeries, RateUse, StationStats};
pub use crate::air::Output;
pub use crate::mac::sequence::ExchangeOutcome;

pub use crate::air::medium::AirPpdu;
use crate::air::medium::{Medium, SharedMedium, SpatialMedium};
use crate::air::node::{Link, Node};
use crate::air::timer::{Timer, TimerTable};
use crate::air::{Air, AirConfig};
use crate::capture::CapturedPpdu;
use crate::mac::edca::{Ac, Backoff};
use crate::mac::link_airtime::LinkAirtime;
use crate::mac::protection::{needs_protection, Protection};
use crate::mac80211::rate_control::{LinkRateControl, RateControlKind, RateMap};
use crate::mac80211::txq::LinkId;
use crate::packet::{DropReason, NodeId, Packet, StationId};
use crate::phy::space::RadioMap;
use crate::phy::timing::PhyTiming;
use crate::phy::{Standard, TxVector};
use crate::rng::{RngStream, StreamKind};
use crate::txpath::{PathLink, TxPath};
use crate::Nanos;
use std::collections::VecDeque;

/// One BSS, driven sans-I/O: it never reads a clock or a socket.
///
/// The caller owns time and I/O. It hands the cell two kinds of input and drains two
/// kinds of output:
///
/// - [`handle_packet(now, packet)`](Cell::handle_packet): `packet` enters the cell at
///   `packet.src` (the AP from the wired side, a station from its host) for
///   `packet.dst`. It first runs every deadline up to `now`, as `handle_timeout(now)`
///   would, so the packet meets the cell as it is at `now`, after what happens at
///   `now`.
/// - [`handle_timeout(now)`](Cell::handle_timeout): runs every deadline at or before
///   `now`, earliest first (at one instant management before the MAC). A call with
///   nothing due does nothing, so calling early or twice is harmless.
/// - [`poll_output()`](Cell::poll_output): the next [`Output`] (a delivery, a drop, an
///   airtime record) in the order the cell produced them, `None` once drained. Each
///   carries its own time, never later than the last `now` handed in.
/// - [`poll_timeout()`](Cell::poll_timeout): when the cell next needs
///   `handle_timeout`, or `None` while it is idle (nothing queued, nothing on the air,
///   no beacon, scan or power-save timer).
///
/// Time is monotonic: every `now` handed in is at or after the previous one (virtual
/// time in the simulator, time since the start in the emulator). Any input can move the
/// next deadline, earlier (a frame for an idle EDCA function) or later, so after every
/// `handle_*` call the caller drains `poll_output` and asks `poll_timeout` again. A
/// driver's loop, with external events (arrivals) merged in time order:
///
/// ```
/// use txop_core::cell::{Cell, CellConfig, Output, StationConfig};
/// use txop_core::phy::channel::ErrorModel;
/// use txop_core::phy::{Band, Standard, TxVector};
/// use txop_core::{Nanos, NodeId, Packet};
///
/// let sta = StationConfig::new(TxVector::Ofdm { rate_mbps: 54 }, ErrorModel::None);
/// let mut cell = Cell::new(CellConfig::new(Standard::A, Band::Ghz5, vec![sta]), 1)?;
/// // One arrival: 1500 bytes from the AP to station 1 at 1 ms.
/// let mut arrivals = vec![(Nanos::from_ms(1), Packet::new(7, NodeId::AP, NodeId(1), 1500))];
/// let mut delivered = Vec::new();
/// loop {
///     let next_arrival = arrivals.first().map(|&(at, _)| at);
///     match cell.poll_timeout() {
///         // At one instant the cell's deadline goes first (handle_packet would run it).
///         Some(t) if next_arrival.is_none_or(|a| t <= a) => cell.handle_timeout(t),
///         _ if !arrivals.is_empty() => {
///             let (at, packet) = arrivals.remove(0);
///             cell.handle_packet(at, packet);
///         }
///         _ => break, // idle, and nothing more will arrive
///     }
///     while let Some(out) = cell.poll_output() {
///         if let Output::Delivered { at, packet, .. } = out {
///             delivered.push((at, packet.id));
///         }
///     }
/// }
/// assert_eq!(delivered.len(), 1);
/// assert_eq!(delivered[0].1, 7);
/// assert!(delivered[0].0 > Nanos::from_ms(1)); // after AIFS, backoff and the PPDU
/// # Ok::<(), String>(())
/// ```
#[derive(Clone, Debug)]
pub struct Cell {
    pub(crate) cfg: CellConfig,
    /// The MAC engine: the nodes, the medium, the MAC's timers and what it reports.
    pub(crate) air: Air,
    /// Beacons, scanning and power save; `None` when none is configured. The engine
    /// answers to it ([`crate::air::Management`]).
    pub(crate) mgmt: Option<Box<Mgmt>>,
}

impl Cell {
    /// Build a cell; `seed` seeds every random stream (one per node and per link).
    pub fn new(mut cfg: CellConfig, seed: u64) -> Result<Cell, String> {
        cfg.validate()?;
        // A channel fades with the run's seed, whoever built the configuration.
        for sc in &mut cfg.stations {
            if let Some(ch) = &mut sc.channel {
                ch.set_seed(seed);
            }
        }
        let non_erp = cfg.non_erp_present();
        let timing = PhyTiming::for_bss(cfg.standard, cfg.band, non_erp);
        // How a link's PPDUs are protected from the 802.11b stations (if any).
        let protection_of = |txv: &TxVector| {
            if non_erp && needs_protection(txv) {
                cfg.protection
            } else {
                Protection::Off
            }
        };
        let n = cfg.stations.len();
        let mut nodes = Vec::with_capacity(n + 1);
        // Without VHT the fq memory limit is 4 MiB (reference §3.2); an HE radio is
        // VHT-capable too.
        let fq_memory = match cfg.stack.fq_memory_limit_bytes {
            0 if matches!(cfg.standard, Standard::Ac | Standard::Ax) => 16 << 20,
            0 => 4 << 20,
            m => m,
        };
        for id in 0..=n as u16 {
            let node_id = NodeId(id);
            let mut rng = RngStream::new(seed, StreamKind::Backoff, id as u64);
            let table = if node_id.is_ap() {
                &cfg.edca_ap
            } else {
                &cfg.edca_sta
            };
            let edca = Ac::ALL.map(|ac| {
                let mut b = Backoff::new(table[ac.index()], &mut rng);
                b.counted_from = timing.aifs(b.params.aifsn);
                b
            });
            // The AP's link to each station, in station order; a station's to the AP.
            let peers: Vec<(NodeId, &StationConfig)> = match node_id.as_station() {
                None => StationId::all(n)
                    .zip(&cfg.stations)
                    .map(|(sta, sc)| (sta.node(), sc))
                    .collect(),
                Some(sta) => vec![(NodeId::AP, &cfg.stations[sta.index()])],
            };
            // mac80211 counts associated stations for the slow-station rule.
            let num_sta = if node_id.is_ap() { n as u64 } else { 1 };
            let rcs: Vec<LinkRateControl> = peers
                .iter()
                .map(|(peer, sc)| {
                    let key = ((id as u64) << 16) | peer.0 as u64;
                    link_rate_control(&cfg, sc, node_id.is_ap(), crate::rng::mix64(seed ^ key))
                })
                .collect();
            let rate_sets: Vec<_> = rcs.iter().map(LinkRateControl::rate_set).collect();
            let path_links = peers
                .iter()
                .zip(rcs)
                .zip(&rate_sets)
                .map(|(((_, sc), rc), rates)| {
                    let rate = sc.direction_rate(node_id.is_ap());
                    let limits = RateMap::new(rates, |txv| {
                        let air = LinkAirtime::new(txv, &timing, protection_of(txv));
                        Ac::ALL.map(|ac| build_limits(&cfg, &timing, table, ac, txv, &air))
                    });
                    PathLink {
                        weight: sc.weight,
                        limits,
                        aggregated: Ac::ALL.map(|ac| aggregates(&cfg, ac, &rate.tx)),
                        last_rate: rates[0].0,
                        rc,
                        slow_station: expected_kbps(sc, node_id.is_ap()) < 6_000 * num_sta,
                    }
                })
                .collect();
            let links = peers
                .into_iter()
                .zip(&rate_sets)
                .map(|((peer, sc), rates)| Link {
                    peer,
                    rx: Default::default(),
                    txv: sc.direction_rate(node_id.is_ap()).tx,
                    air: RateMap::new(rates, |txv| {
                        LinkAirtime::new(txv, &timing, protection_of(txv))
                    }),
                    rate_series: (sc.direction_rate(node_id.is_ap()).rate_control
                        != RateControlKind::Fixed)
                        .then(RateSeries::default),
                    rate_use: RateMap::new(rates, |txv| RateUse {
                        txv: *txv,
                        ppdus: 0,
                        airtime_ns: 0,
                    }),
                    error: sc.error,
                    channel: sc
                        .channel
                        .as_ref()
                        .map(|c| c.direction(node_id.is_ap()).clone()),
                    rng: RngStream::new(
                        seed,
                        StreamKind::Channel,
                        ((id as u64) << 16) | peer.0 as u64,
                    ),
                })
                .collect();
            nodes.push(Node {
                id: node_id,
                edca,
                ifs_ref: Nanos::ZERO,
                rng,
                links,
                path: TxPath::new(&cfg.stack, cfg.qos, node_id.is_ap(), path_links, fq_memory),
                away: false,
                leaving: false,
                frames: VecDeque::new(),
                frame_in_air: false,
                frame_attempts: 0,
            });
        }
        let mgmt = cfg.has_mgmt().then(|| Mgmt::new(&cfg));
        // The medium is chosen here, once: space gives every node its own view.
        let medium = match cfg.space.as_ref() {
            Some(space) => Medium::Spatial(Box::new(SpatialMedium::new(
                RadioMap::new(space, cfg.band, crate::phy::ChannelWidth::Mhz20),
                space.first_node,
                n + 1,
                seed,
            ))),
            None => Medium::Shared(SharedMedium::default()),
        };
        let mut timers = TimerTable::default();
        timers.set(Timer::Management, mgmt.as_ref().map(|m| m.next_deadline()));
        let air_cfg = AirConfig {
            standard: cfg.standard,
            band: cfg.band,
            qos: cfg.qos,
            backoff_rule: cfg.backoff_rule,
            retry_limit: cfg.retry_limit,
            rts_threshold_bytes: cfg.rts_threshold_bytes,
            airtime_records: cfg.airtime_records,
        };
        let mut air = Air {
            cfg: air_cfg,
            timing,
            nodes,
            timers,
            out: VecDeque::new(),
            released: Vec::new(),
            eifs_extra: timing.eifs_extra(),
            spare_ok: Vec::new(),
            stats: vec![StationStats::default(); n + 1],
            busy_ns: 0,
            internal_collisions: 0,
            delivered_copies: std::collections::HashSet::new(),
            beacon: None,
            beacon_airtime_ns: 0,
            medium,
            capture: None,
        };
        air.init_link_signals();
        Ok(Cell { cfg, air, mgmt })
    }

    /// The configuration the cell was built from.
    pub fn config(&self) -> &CellConfig {
        &self.cfg
    }

    /// The BSS's PHY timing (slot, SIFS, AIFS, basic rates), as the stations in it make it.
    pub fn timing(&self) -> &PhyTiming {
        &self.air.timing
    }

    /// Number of stations.
    pub fn stations(&self) -> usize {
        self.air.stations()
    }

    /// Per-station counters, indexed by station number (index 0 is unused).
    pub fn stats(&self) -> &[StationStats] {
        &self.air.stats
    }

    /// How each rate was used on one direction of `station`'s link (station → AP if
    /// `uplink`), in the order of its rate control's rate set: the rates used and the
    /// rates never used alike.
    pub fn rate_use(&self, station: StationId, uplink: bool) -> &[RateUse] {
        self.station_link(station, uplink).rate_use.entries()
    }

    /// The rate one direction of `station`'s link sent at over time (`None` under fixed
    /// rate control).
    pub fn rate_series(&self, station: StationId, uplink: bool) -> Option<&RateSeries> {
        self.station_link(station, uplink).rate_series.as_ref()
    }

    /// One direction of `station`'s link: the station's own (uplink) or the AP's to it.
    fn station_link(&self, station: StationId, uplink: bool) -> &Link {
        if uplink {
            self.air.nodes[station.node().index()].link(LinkId(0))
        } else {
            self.air.nodes[0].link(station.ap_link())
        }
    }

    /// Total time the medium was busy (exchanges and collisions).
    pub fn busy_ns(&self) -> u64 {
        self.air.busy_ns
    }

    /// The airtime charged to every transmission so far, what airtime shares divide:
    /// the busy time of the transmissions that ended, time that several shared being
    /// split among them (a collision's in one collision domain; any overlap with
    /// space). With space it stays short of [`Cell::busy_ns`] by the part of the busy
    /// time whose exchanges have not ended.
    pub fn airtime_total_ns(&self) -> u64 {
        self.air.medium.airtime_total_ns(self.air.busy_ns)
    }

    /// Internal (same-station, different-AC) collisions so far.
    pub fn internal_collisions(&self) -> u64 {
        self.air.internal_collisions
    }

    /// Medium time taken by the AP's beacons (part of [`Cell::busy_ns`]).
    pub fn beacon_airtime_ns(&self) -> u64 {
        self.air.beacon_airtime_ns
    }

    /// Whether station `sta`'s radio is away from the operating channel or asleep.
    pub fn station_away(&self, sta: StationId) -> bool {
        self.air
            .nodes
            .get(sta.node().index())
            .is_some_and(|n| n.away)
    }

    /// Whether the AP believes station `sta` dozes (and buffers its frames).
    pub fn ap_buffers_for(&self, sta: StationId) -> bool {
        self.mgmt
            .as_ref()
            .is_some_and(|m| m.ap_dozing.get(sta.index()) == Some(&true))
    }

    /// Pending AQL airtime (µs) the AP holds for `station`'s AC.
    pub fn aql_pending_us(&self, station: StationId, ac: Ac) -> u32 {
        self.air.nodes[0].path.aql_pending_us(station.ap_link(), ac)
    }

    /// The most each bounded queue of each node's transmit path has held so far, against
    /// its documented limit ([`crate::QueueOccupancy`]): an invariant of the model,
    /// which tests check after a run.
    pub fn queue_occupancy(&self) -> Vec<crate::QueueOccupancy> {
        self.air
            .nodes
            .iter()
            .enumerate()
            .flat_map(|(i, node)| {
                let id = NodeId(i as u16);
                let mut q = node.path.queue_occupancy(id);
                q.extend(node.path.stage_occupancy(id));
                q
            })
            .collect()
    }

    /// The AP's polled airtime (an mt76 firmware stage, firmware-queues.md §2.3):
    /// what its stations' exchanges accrued and what the polls reported to the
    /// scheduler so far; all zero for other stages.
    pub fn ap_polled_airtime(&self) -> crate::PolledAirtime {
        self.air.nodes[0].path.polled_airtime()
    }

    /// Packets inside the model: queued, in the air, held in a reorder buffer, or in
    /// the AP's power-save buffer; not the copies of packets already delivered that
    /// wait for a retry.
    pub fn packets_inside(&self) -> u64 {
        let buffered = self.mgmt.as_ref().map_or(0, |m| m.buffers.total() as u64);
        buffered + self.air.packets_inside()
    }

    /// This cell shares its air with other cells (its space's placement holds their
    /// nodes too): from now on it keeps every PPDU it starts for [`Cell::poll_air`],
    /// which the caller must then drain after every call. Nothing for a cell without
    /// space.
    pub fn share_air(&mut self) {
        self.air.medium.share_air();
    }

    /// The next PPDU this cell put on an air it shares with other cells
    /// ([`Cell::share_air`]), for the caller to hand to each of them with
    /// [`Cell::handle_air`] at once. Always `None` for a cell alone on its air.
    pub fn poll_air(&mut self) -> Option<AirPpdu> {
        self.air.medium.poll_air()
    }

    /// A PPDU of another cell sharing the air starts now (`ppdu.start`): this cell's
    /// nodes sense it, lock on it or suffer it. The caller hands every PPDU any other
    /// cell announced ([`Cell::poll_air`]) to every cell, at its start; each cell's own
    /// deadlines before that instant must have run. Ignored by a cell without space.
    pub fn handle_air(&mut self, ppdu: AirPpdu) {
        if self.air.medium.is_spatial() {
            debug_assert!(self.poll_timeout().is_none_or(|t| t >= ppdu.start));
            self.air.foreign_ppdu(ppdu);
        }
    }

    /// Record every PPDU this cell puts on the air from now on, for
    /// [`Cell::poll_capture`], which the caller must then drain after every call (at
    /// least before [`Cell::poll_output`], so that the packets a record names are still
    /// in flight for the caller). Off by default: then nothing is recorded.
    pub fn capture_air(&mut self) {
        self.air.capture_air();
    }

    /// The next PPDU recorded since capture started ([`Cell::capture_air`]).
    pub fn poll_capture(&mut self) -> Option<CapturedPpdu> {
        self.air.poll_capture()
    }

    /// Records lost because the caller did not drain them in time (zero when it
    /// drains after every call).
    pub fn capture_overflowed(&self) -> u64 {
        self.air.capture_overflowed()
    }

    /// The next time the model needs [`Cell::handle_timeout`].
    #[inline]
    pub fn poll_timeout(&self) -> Option<Nanos> {
        self.air.timers.next_timeout()
    }

    /// The next output, if any.
    #[inline]
    pub fn poll_output(&mut self) -> Option<Output> {
        self.air.out.pop_front()
    }

    /// Run every deadline up to and including `now`, earliest first.
    #[inline]
    pub fn handle_timeout(&mut self, now: Nanos) {
        // perf: most calls (every packet handed in) find nothing due; the handlers stay
        // out of line.
        while let Some((timer, t)) = self.air.timers.expire(now) {
            self.fire(timer, t);
        }
    }

    /// `timer`, stopped, fires at `t`: management's, or one of the engine's.
    #[inline(never)]
    fn fire(&mut self, timer: Timer, t: Nanos) {
        match (timer, self.mgmt.as_mut()) {
            (Timer::Management, Some(m)) => m.handle(&mut self.air, t),
            (Timer::Management, None) => {}
            _ => self.air.fire(timer, t, &mut self.mgmt),
        }
    }

    /// A packet arrives at `packet.src` at time `now`, for `packet.dst`.
    pub fn handle_packet(&mut self, now: Nanos, mut packet: Packet) {
        self.handle_timeout(now);
        packet.enqueued_at = now;
        let src = packet.src.index();
        let air = &mut self.air;
        let link = if src < air.nodes.len() && packet.src.is_ap() != packet.dst.is_ap() {
            air.nodes[src].path.link_to(packet.dst)
        } else {
            None
        };
        let Some(link) = link else {
            air.out.push_back(Output::Dropped {
                at: now,
                node: packet.src,
                packet,
                reason: DropReason::NoRoute,
            });
            return;
        };
        let station = air.station_of(src, link);
        air.link_stats(station, src != 0).offered_packets += 1;
        if let Some(m) = self.mgmt.as_mut() {
            if m.takes_packet(air, now, src, station, packet) {
                return;
            }
        }
        air.enqueue(now, src, link, packet);
    }
}
