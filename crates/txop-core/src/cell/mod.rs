//! One BSS: an AP and N stations sharing one channel, driven sans-I/O ([`Cell`]).
//!
//! Where the parts live:
//!
//! - this file: [`Cell`], its construction and its four entry points, the nodes (the
//!   AP is node 0, station *n* node *n*) and their links;
//! - `config`: what a cell is built from ([`CellConfig`], [`StationConfig`]) and its
//!   validation;
//! - `stats`: the counters ([`StationStats`], [`LinkStats`]) and [`AirtimeRecord`];
//! - `timer`: the named deadlines [`Cell::handle_timeout`] runs;
//! - `management`: beacons, background scanning and power save (reference §7, §9);
//! - `air/medium/`: the medium, chosen once when the cell is built: one collision
//!   domain (`shared.rs`) or every node's own view of it, with space (`spatial.rs`);
//! - `air/contention.rs`: the EDCA contention engine (who wins the medium);
//! - `air/exchange.rs`: the frame exchange that follows (RTS/CTS, data, response,
//!   TXOP continuation);
//! - `mac/frame.rs`: the frames the MAC sends on its own (beacon, PS-Poll, null-data).
//!
//! Above the MAC every node runs a transmit path (`TxPath`, `txpath.rs`): the qdisc, mac80211's
//! TXQs, the airtime scheduler, AQL and the driver, configured by a
//! [`StackConfig`](crate::stack::StackConfig) (a kernel era). The MAC transmits the
//! PPDUs the driver put in the hardware queue, reports their outcome back, and charges
//! the airtime to the AP's scheduler.

mod amsdu;
mod config;
mod management;
mod stats;
mod timer;

use self::config::{aggregates, build_limits, expected_kbps, link_rate_control, mpdu_overhead};
pub use self::config::{CellConfig, StationConfig, StationPowerSave, StationScan};
use self::management::Mgmt;
pub use self::stats::{AirtimeRecord, LinkStats, RateSeries, RateUse, StationStats};
pub(crate) use self::timer::Timer;
use self::timer::TimerTable;
pub use crate::mac::sequence::ExchangeOutcome;

pub use crate::air::medium::AirPpdu;
use crate::air::medium::{Medium, SharedMedium, SpatialMedium};
use crate::budget::CellStamps;
use crate::driver::NUM_TIDS;
use crate::mac::blockack::Received;
use crate::mac::blockack::RxReorder;
use crate::mac::edca::{Ac, Backoff};
use crate::mac::frame::Frame;
use crate::mac::link_airtime::LinkAirtime;
use crate::mac::protection::{needs_protection, Protection};
use crate::mac80211::rate_control::{LinkRateControl, RateControlKind, RateMap};
use crate::mac80211::txq::LinkId;
use crate::packet::{DropReason, Dropped, NodeId, Packet, StationId};
use crate::phy::channel::ErrorModel;
use crate::phy::link_channel::LinkChannel;
use crate::phy::space::RadioMap;
use crate::phy::timing::PhyTiming;
use crate::phy::{Standard, TxVector};
use crate::rng::{RngStream, StreamKind};
use crate::txpath::{PathLink, TxPath};
use crate::Nanos;
use std::collections::VecDeque;

/// What the cell reports, through [`Cell::poll_output`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// `packet` left the cell at `packet.dst`.
    Delivered {
        /// When the receiver released it (the end of the data PPDU that completed it).
        at: Nanos,
        /// The packet as handed in, with `enqueued_at` set to its arrival.
        packet: Packet,
        /// When it crossed each boundary of the cell: its delay budget
        /// ([`crate::budget`]).
        stamps: CellStamps,
    },
    /// `packet` was lost inside the cell.
    Dropped {
        /// When it was dropped.
        at: Nanos,
        /// The node that dropped it.
        node: NodeId,
        /// The packet as handed in.
        packet: Packet,
        /// Why (a full queue, the retry limit, the AQM, no route, ...).
        reason: DropReason,
    },
    /// One data exchange's airtime (only with [`CellConfig::airtime_records`]).
    Airtime(AirtimeRecord),
}

/// One radio link to a peer: its rate, channel, and the receive reorder state.
#[derive(Clone, Debug)]
pub(crate) struct Link {
    pub(crate) peer: NodeId,
    /// Per TID: what this node has received from the peer, in sequence order.
    pub(crate) rx: [RxReorder; NUM_TIDS],
    /// The link's configured rate: what the station's own frames (null-data, PS-Poll)
    /// are answered at, and the one rate of fixed rate control.
    pub(crate) txv: TxVector,
    /// The PPDU durations of every rate the link's rate control may choose.
    pub(crate) air: RateMap<LinkAirtime>,
    /// How much each of those rates was used.
    pub(crate) rate_use: RateMap<RateUse>,
    /// The rate sent at over time (not kept under fixed rate control).
    pub(crate) rate_series: Option<RateSeries>,
    pub(crate) error: ErrorModel,
    /// This direction's SNR over time when the channel changes (then it, not `error`,
    /// decides the link's losses).
    pub(crate) channel: Option<LinkChannel>,
    /// The channel's draws on this link (its own stream: adding a station changes no
    /// other link's draws).
    pub(crate) rng: RngStream,
}

/// The AP (node 0) or a station (node *n*): its EDCA functions, transmit path and
/// links (the AP's link *l* leads to station *l* + 1; a station's only link to the AP).
#[derive(Clone, Debug)]
pub(crate) struct Node {
    pub(crate) id: NodeId,
    /// One EDCA function per AC, indexed by [`Ac::index`].
    pub(crate) edca: [Backoff; 4],
    /// Start of the interframe space every AC counts its AIFS from.
    pub(crate) ifs_ref: Nanos,
    /// The node's backoff draws.
    pub(crate) rng: RngStream,
    pub(crate) links: Vec<Link>,
    /// qdisc, TXQs, scheduler, AQL and driver: where the node's PPDUs come from.
    pub(crate) path: TxPath,
    /// The radio is off the operating channel (scanning) or asleep (power save): the
    /// node neither contends nor receives.
    pub(crate) away: bool,
    /// Its radio is to leave (its scanner or power save said so) when the exchange it
    /// holds ends: mac80211 flushes the driver before it tunes away.
    pub(crate) leaving: bool,
    /// The frames the MAC sends on its own (null-data, PS-Poll), waiting to be sent on
    /// AC VO ahead of the AC's data. At most
    /// [`MAX_QUEUED_FRAMES`](crate::mac::frame::MAX_QUEUED_FRAMES).
    pub(crate) frames: VecDeque<Frame>,
    /// The front of `frames` is on the air.
    pub(crate) frame_in_air: bool,
    /// Transmissions of the front of `frames` so far.
    pub(crate) frame_attempts: u8,
}

impl Link {
    /// How the channel loses frames sent on this link at `t`: at the SNR of that moment
    /// on a changing channel (a PPDU sees the channel of its start: the coherence time
    /// of the fading is longer than a PPDU), otherwise the link's constant model.
    #[inline]
    pub(crate) fn error_at(&self, t: Nanos) -> ErrorModel {
        match &self.channel {
            Some(c) => ErrorModel::Snr {
                snr_db: c.snr_db(t),
            },
            None => self.error,
        }
    }

    /// Whether a frame of `bytes` at `txv` that nothing interfered with gets through
    /// this link's channel, lossy as `error` says (its [`Link::error_at`] when the
    /// frame started): one draw from the link's stream, none when the PER is 0. The
    /// one channel draw of both media, for data MPDUs, the MAC's own frames and
    /// beacons alike.
    #[inline]
    pub(crate) fn draws_through(&mut self, error: &ErrorModel, txv: &TxVector, bytes: u32) -> bool {
        !self.rng.bernoulli(error.per(txv, bytes))
    }
}

impl Node {
    /// The node's link to `peer`, if `peer` is at the other end of one.
    pub(crate) fn link_to(&self, peer: NodeId) -> Option<LinkId> {
        self.path.link_to(peer)
    }

    /// The node's `link`.
    pub(crate) fn link(&self, link: LinkId) -> &Link {
        &self.links[link.index()]
    }

    /// The node's `link`, to change.
    pub(crate) fn link_mut(&mut self, link: LinkId) -> &mut Link {
        &mut self.links[link.index()]
    }

    /// Whether `ac` has a frame to contend for: one of the MAC's own (VO) or a PPDU.
    pub(crate) fn has_frame(&self, ac: Ac) -> bool {
        (ac == Ac::Vo && !self.frames.is_empty()) || self.path.has_ppdu(ac)
    }

    /// The AC with a frame whose backoff ends first, by `window_end`, and when: the
    /// higher AC at a tie (ACs are scanned VO first).
    pub(crate) fn earliest_ac(&self, window_end: Nanos, slot: Nanos) -> Option<(Nanos, Ac)> {
        let mut best: Option<(Nanos, Ac)> = None;
        for ac in Ac::ALL {
            if !self.has_frame(ac) {
                continue;
            }
            let tx_at = self.edca[ac.index()].tx_time(slot);
            if tx_at <= window_end && best.is_none_or(|(bt, _)| tx_at < bt) {
                best = Some((tx_at, ac));
            }
        }
        best
    }

    /// `ac` transmits at `start`: the node's lower-priority ACs whose backoff ended in
    /// the same slot suffer an internal collision, handled as if they had collided
    /// (10.22.2.4). Returns how many did.
    pub(crate) fn collide_internally(&mut self, ac: Ac, start: Nanos, slot: Nanos) -> u64 {
        let mut n = 0;
        for other in Ac::ALL {
            if other != ac
                && self.has_frame(other)
                && self.edca[other.index()].tx_time(slot) == start
            {
                self.edca[other.index()].fail(&mut self.rng);
                n += 1;
            }
        }
        n
    }
}

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
    pub(crate) timing: PhyTiming,
    pub(crate) nodes: Vec<Node>,
    /// The deadlines of management and of the MAC's cycle.
    pub(crate) timers: TimerTable,
    /// Outputs not yet polled.
    pub(crate) out: VecDeque<Output>,
    /// Scratch: packets a reorder buffer released, before they become outputs.
    pub(crate) released: Vec<Received>,
    /// [`PhyTiming::eifs_extra`], computed once.
    pub(crate) eifs_extra: Nanos,
    /// Per-MPDU outcome vectors of finished transmissions, for reuse. At most one per
    /// transmission of an exchange.
    pub(crate) spare_ok: Vec<Vec<bool>>,
    /// Per station, indexed by station number (index 0 unused).
    pub(crate) stats: Vec<StationStats>,
    pub(crate) busy_ns: u64,
    pub(crate) internal_collisions: u64,
    /// Packets whose addressee already has them while a copy of theirs is still counted
    /// inside: their exchange failed only for want of the response (an ACK or BlockAck
    /// lost at the sender, which happens with space), so the sender keeps the MPDU for
    /// a retry that the receiver will discard as a duplicate by its sequence number.
    /// They left the model when they were delivered; [`Cell::packets_inside`] does not
    /// count their copies. An id leaves the set when the copy is received again (the
    /// air stops counting it) or dropped.
    pub(crate) delivered_copies: std::collections::HashSet<u64>,
    /// Beacons, scanning and power save; `None` when none is configured.
    pub(crate) mgmt: Option<Box<Mgmt>>,
    pub(crate) beacon_airtime_ns: u64,
    /// The medium, chosen when the cell is built: one collision domain, or every
    /// node's own view of it when the cell has space.
    pub(crate) medium: Medium,
    /// The PPDUs put on the air, while capture is on ([`Cell::capture_air`]).
    pub(crate) capture: Option<Box<crate::capture::AirCapture>>,
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
        let mut cell = Cell {
            cfg,
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
            mgmt,
            beacon_airtime_ns: 0,
            medium,
            capture: None,
        };
        cell.init_link_signals();
        Ok(cell)
    }

    /// The configuration the cell was built from.
    pub fn config(&self) -> &CellConfig {
        &self.cfg
    }

    /// The BSS's PHY timing (slot, SIFS, AIFS, basic rates), as the stations in it make it.
    pub fn timing(&self) -> &PhyTiming {
        &self.timing
    }

    /// Number of stations.
    pub fn stations(&self) -> usize {
        self.nodes.len() - 1
    }

    /// Per-station counters, indexed by station number (index 0 is unused).
    pub fn stats(&self) -> &[StationStats] {
        &self.stats
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
            self.nodes[station.node().index()].link(LinkId(0))
        } else {
            self.nodes[0].link(station.ap_link())
        }
    }

    /// Total time the medium was busy (exchanges and collisions).
    pub fn busy_ns(&self) -> u64 {
        self.busy_ns
    }

    /// The airtime charged to every transmission so far, what airtime shares divide:
    /// the busy time of the transmissions that ended, time that several shared being
    /// split among them (a collision's in one collision domain; any overlap with
    /// space). With space it stays short of [`Cell::busy_ns`] by the part of the busy
    /// time whose exchanges have not ended.
    pub fn airtime_total_ns(&self) -> u64 {
        self.medium.airtime_total_ns(self.busy_ns)
    }

    /// Internal (same-station, different-AC) collisions so far.
    pub fn internal_collisions(&self) -> u64 {
        self.internal_collisions
    }

    /// Medium time taken by the AP's beacons (part of [`Cell::busy_ns`]).
    pub fn beacon_airtime_ns(&self) -> u64 {
        self.beacon_airtime_ns
    }

    /// Whether station `sta`'s radio is away from the operating channel or asleep.
    pub fn station_away(&self, sta: StationId) -> bool {
        self.nodes.get(sta.node().index()).is_some_and(|n| n.away)
    }

    /// Whether the AP believes station `sta` dozes (and buffers its frames).
    pub fn ap_buffers_for(&self, sta: StationId) -> bool {
        self.mgmt
            .as_ref()
            .is_some_and(|m| m.ap_dozing.get(sta.index()) == Some(&true))
    }

    /// Pending AQL airtime (µs) the AP holds for `station`'s AC.
    pub fn aql_pending_us(&self, station: StationId, ac: Ac) -> u32 {
        self.nodes[0].path.aql_pending_us(station.ap_link(), ac)
    }

    /// The most each bounded queue of each node's transmit path has held so far, against
    /// its documented limit ([`crate::QueueOccupancy`]): an invariant of the model,
    /// which tests check after a run.
    pub fn queue_occupancy(&self) -> Vec<crate::QueueOccupancy> {
        self.nodes
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
        self.nodes[0].path.polled_airtime()
    }

    /// Packets inside the model: queued, in the air, held in a reorder buffer, or in
    /// the AP's power-save buffer; not the copies of packets already delivered that
    /// wait for a retry (see `delivered_copies`).
    pub fn packets_inside(&self) -> u64 {
        let mut n = self.mgmt.as_ref().map_or(0, |m| m.buffers.total() as u64);
        for node in &self.nodes {
            n += node.path.packets_inside();
            for link in &node.links {
                n += link.rx.iter().map(|r| r.held() as u64).sum::<u64>();
            }
        }
        n += self.medium.packets_in_air();
        n - self.delivered_copies.len() as u64
    }

    /// This cell shares its air with other cells (its space's placement holds their
    /// nodes too): from now on it keeps every PPDU it starts for [`Cell::poll_air`],
    /// which the caller must then drain after every call. Nothing for a cell without
    /// space.
    pub fn share_air(&mut self) {
        self.medium.share_air();
    }

    /// The next PPDU this cell put on an air it shares with other cells
    /// ([`Cell::share_air`]), for the caller to hand to each of them with
    /// [`Cell::handle_air`] at once. Always `None` for a cell alone on its air.
    pub fn poll_air(&mut self) -> Option<AirPpdu> {
        self.medium.poll_air()
    }

    /// A PPDU of another cell sharing the air starts now (`ppdu.start`): this cell's
    /// nodes sense it, lock on it or suffer it. The caller hands every PPDU any other
    /// cell announced ([`Cell::poll_air`]) to every cell, at its start; each cell's own
    /// deadlines before that instant must have run. Ignored by a cell without space.
    pub fn handle_air(&mut self, ppdu: AirPpdu) {
        if self.medium.is_spatial() {
            debug_assert!(self.poll_timeout().is_none_or(|t| t >= ppdu.start));
            self.foreign_ppdu(ppdu);
        }
    }

    /// The next time the model needs [`Cell::handle_timeout`].
    #[inline]
    pub fn poll_timeout(&self) -> Option<Nanos> {
        self.timers.next_timeout()
    }

    /// The next output, if any.
    #[inline]
    pub fn poll_output(&mut self) -> Option<Output> {
        self.out.pop_front()
    }

    /// Run every deadline up to and including `now`, earliest first.
    #[inline]
    pub fn handle_timeout(&mut self, now: Nanos) {
        // perf: most calls (every packet handed in) find nothing due; the handlers stay
        // out of line.
        while let Some((timer, t)) = self.timers.expire(now) {
            self.fire(timer, t);
        }
    }

    /// `timer`, stopped, fires at `t`.
    #[inline(never)]
    fn fire(&mut self, timer: Timer, t: Nanos) {
        match timer {
            Timer::Management => self.handle_mgmt(t),
            Timer::Access => {
                debug_assert!(!self.medium.shared().busy);
                self.start_access(t);
            }
            Timer::Delivery => {
                debug_assert!(self.medium.shared().busy && !self.medium.shared().exch.delivered);
                self.deliver(t);
            }
            Timer::ExchangeEnd => {
                debug_assert!(self.medium.shared().busy && self.medium.shared().exch.delivered);
                self.finish_exchange(t);
            }
            Timer::Medium => self.medium_fire(t),
        }
    }

    /// A packet arrives at `packet.src` at time `now`, for `packet.dst`.
    pub fn handle_packet(&mut self, now: Nanos, mut packet: Packet) {
        self.handle_timeout(now);
        packet.enqueued_at = now;
        let src = packet.src.index();
        let link = if src < self.nodes.len() && packet.src.is_ap() != packet.dst.is_ap() {
            self.nodes[src].path.link_to(packet.dst)
        } else {
            None
        };
        let Some(link) = link else {
            self.out.push_back(Output::Dropped {
                at: now,
                node: packet.src,
                packet,
                reason: DropReason::NoRoute,
            });
            return;
        };
        let station = self.station_of(src, link);
        self.link_stats(station, src != 0).offered_packets += 1;
        if self.mgmt.is_some() && self.mgmt_takes_packet(now, src, station, packet) {
            return;
        }
        // Enqueueing moves frames of the packet's AC only (TxPath::enqueue kicks that
        // AC alone), so only that EDCAF can wake.
        let ac = self.nodes[src].path.classify_ac(&packet);
        let had = self.nodes[src].has_frame(ac);
        #[cfg(debug_assertions)]
        let had_all = Ac::ALL.map(|a| self.nodes[src].has_frame(a));
        self.nodes[src].path.enqueue(now, link, packet);
        self.drain_path(src, now);
        #[cfg(debug_assertions)]
        for a in Ac::ALL.into_iter().filter(|&a| a != ac) {
            debug_assert_eq!(had_all[a.index()], self.nodes[src].has_frame(a));
        }
        if !had && self.nodes[src].has_frame(ac) {
            self.edcaf_woken(src, ac, now);
        }
    }

    /// Whether node `n` is sending or holds an exchange (its frames are in the air).
    pub(crate) fn on_air(&self, n: usize) -> bool {
        self.medium.on_air(n)
    }

    /// Report what node `n`'s path dropped or gave up since the last call.
    #[inline]
    pub(crate) fn drain_path(&mut self, n: usize, now: Nanos) {
        // perf: called after every packet handed to a path, which usually reports
        // nothing; the reporting stays out of line.
        if self.nodes[n].path.drops.is_empty() && self.nodes[n].path.gave_up.is_empty() {
            return;
        }
        self.report_path_losses(n, now);
    }

    /// Report what node `n`'s path dropped (outputs and counters) and tell the
    /// recipients of the frames it gave up to stop waiting for them.
    #[inline(never)]
    fn report_path_losses(&mut self, n: usize, now: Nanos) {
        let mut drops = std::mem::take(&mut self.nodes[n].path.drops);
        // A receiver can decode an MPDU whose BlockAck its sender then misses (with
        // space, under interference; on both media, when the receiver's radio left
        // before answering, `Cell::addressee_left`); if the sender gives it up it was
        // delivered all the same, and is not a loss. The path reports each given-up
        // MPDU as a retry-limit drop, in the same order.
        let mut delivered_anyway = (!self.nodes[n].path.gave_up.is_empty()).then(|| {
            self.nodes[n]
                .path
                .gave_up
                .iter()
                .map(|m| {
                    let peer = self.nodes[n].link(m.link).peer.index();
                    let src = self.nodes[n].id;
                    self.nodes[peer].link_to(src).is_some_and(|l| {
                        self.nodes[peer].link(l).rx[m.tid.index()].has_received(m.seq)
                    })
                })
                .collect::<Vec<bool>>()
                .into_iter()
        });
        for Dropped { packet, reason } in drops.drain(..) {
            if !self.delivered_copies.is_empty() {
                self.delivered_copies.remove(&packet.id);
            }
            let received = reason == DropReason::RetryLimit
                && delivered_anyway
                    .as_mut()
                    .and_then(|it| it.next())
                    .unwrap_or(false);
            if packet.amsdu_msdus > 1 {
                for p in self.msdus_dropped(n, packet, received) {
                    self.report_msdu_drop(now, n, p, reason);
                }
            } else if !received {
                self.report_msdu_drop(now, n, packet, reason);
            }
        }
        self.nodes[n].path.drops = drops;
        let mut gave_up = std::mem::take(&mut self.nodes[n].path.gave_up);
        for m in gave_up.drain(..) {
            // The recipient stops waiting for it (see `RxReorder::give_up`).
            let peer = self.nodes[n].link(m.link).peer;
            let src_id = self.nodes[n].id;
            let rx_node = peer.index();
            if let Some(rx_link) = self.nodes[rx_node].link_to(src_id) {
                let released = &mut self.released;
                self.nodes[rx_node].link_mut(rx_link).rx[m.tid.index()]
                    .give_up(m.seq, &mut |p| released.push(p));
                self.emit_released(now, n, m.link);
            }
        }
        self.nodes[n].path.gave_up = gave_up;
    }

    /// The station at one end of node `node`'s `link`: the peer on the AP, the node
    /// itself on a station.
    pub(crate) fn station_of(&self, node: usize, link: LinkId) -> StationId {
        match NodeId(node as u16).as_station() {
            Some(sta) => sta,
            None => StationId::on_ap_link(link),
        }
    }

    /// Station `sta`'s counters.
    pub(crate) fn station_stats(&mut self, sta: StationId) -> &mut StationStats {
        &mut self.stats[sta.node().index()]
    }

    /// The counters of one direction of station `station`'s link.
    pub(crate) fn link_stats(&mut self, station: StationId, uplink: bool) -> &mut LinkStats {
        let s = self.station_stats(station);
        if uplink {
            &mut s.up
        } else {
            &mut s.down
        }
    }

    pub(crate) fn mpdu_overhead(&self) -> u32 {
        mpdu_overhead(self.cfg.qos)
    }
}
