//! The spatial medium ([`Medium::Spatial`](super::Medium::Spatial)): every node's own view of it, PPDU by PPDU.
//!
//! Without space the cell is one collision domain and an exchange is laid out whole when
//! it starts (`shared.rs`, `air/contention.rs`, `air/exchange.rs`). With space
//! ([`crate::phy::space`]) a node hears only what reaches it, so the medium is followed
//! one PPDU at a time, each with a start and an end:
//!
//! - **Carrier sense** (802.11-2016 10.3.2.1, 17.3.10.6). A node's CCA is busy while a
//!   PPDU at or above −82 dBm is on the air at it — whether its receiver locked on it
//!   (preamble detected: SINR at least 4 dB, while not transmitting nor locked already)
//!   or missed its preamble (mid-packet detection; ns-3 3.37 likewise judges every Wi-Fi
//!   PPDU against the CCA sensitivity) — or while the energy of what is on the air
//!   reaches −62 dBm. When its CCA turns busy its EDCA functions freeze
//!   (the slot boundaries that passed count, as without space); when it turns idle they
//!   count again from AIFS after it — after EIFS if the last PPDU it locked on could not
//!   be decoded, and not before the NAV it set from the Duration of a frame it decoded
//!   for someone else (RTS, CTS, data) has run out.
//! - **Reception** (`reception.rs`): the receiver's lock is cut into pieces of
//!   constant interference; data MPDUs are drawn piece by piece at their SINR; a control
//!   frame nobody interfered with always gets through (as without space), one that was
//!   interfered with is drawn at its SINR. A later frame takes the receiver over per the
//!   capture rule; at one instant the receiver locks on the strongest preamble.
//! - **The exchange** of each transmitter goes step by step through its frame sequence
//!   (`mac/sequence.rs`, the one that one collision domain lays out whole): RTS, CTS
//!   (or CTS-to-self), data, ACK or BlockAck, each sent SIFS after the previous one
//!   ended if that one got through, and the exchange fails at the first that did not (a
//!   *collision* if interference took part, a *failure* if noise alone). Its transmitter
//!   then waits its response timeout.
//!
//! Contention still has no per-slot events: a node's next transmission is computed from
//! its counters, and the medium's deadline is the earliest of those of the nodes whose
//! view is idle and of the PPDU starts and ends to come. Walking adds none either: a
//! PPDU's power at each node is the space's at the PPDU's start
//! ([`RadioMap::rx_mw_at`]), from its start to its end.
//!
//! Beacons and power save run here too: the MAC's own frames are sequences like data
//! (`FrameSequence::own`); each station's beacon reception is drawn from its lock; a
//! node whose radio is away (dozing) neither locks on nor defers, but its carrier sense
//! follows the air. So does background scanning: a receiver whose radio leaves in the
//! middle of a data PPDU keeps the subframes that had arrived ([`Departure`]; the rule,
//! the same in one collision domain, is `Air::addressee_left`'s, reference §11.4).

use super::reception::{sync_time, RxLock};
use super::Medium;
use crate::air::capture::HeardPpdu;
use crate::air::charge::{split_share, Span};
use crate::air::exchange::Tx;
use crate::air::timer::Timer;
use crate::air::{Air, Management};
use crate::mac::ampdu::SubframeClock;
use crate::mac::edca::Ac;
use crate::mac::frame::{Frame, MgmtFrame};
use crate::mac::sequence::ExchangeOutcome;
use crate::mac::sequence::{FrameSequence, PpduKind};
use crate::packet::NodeId;
use crate::phy::channel::{snr_threshold_db, ErrorModel};
use crate::phy::space::{dbm_to_mw, RadioMap};
use crate::phy::TxVector;
use crate::rng::{RngStream, StreamKind};
use crate::Nanos;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A PPDU on the air (or about to start).
#[derive(Clone, Copy, Debug)]
pub(crate) struct OnAir {
    pub(crate) kind: PpduKind,
    pub(crate) start: Nanos,
    pub(crate) end: Nanos,
    /// The node whose exchange it belongs to.
    pub(crate) holder: usize,
    /// The node it is addressed to (`None`: CTS-to-self).
    pub(crate) to: Option<usize>,
    /// Its rate (for the control frames, the control-response rate).
    pub(crate) txv: TxVector,
    /// PSDU bytes.
    pub(crate) bytes: u32,
    /// The end of the NAV it sets at a third party that decodes it (its end plus its
    /// Duration field).
    pub(crate) nav_end: Nanos,
}

/// One node's part of the medium.
#[derive(Clone, Debug)]
pub(crate) struct NodeMedium {
    /// The PPDU it is transmitting.
    pub(crate) sending: Option<OnAir>,
    /// The PPDU it will transmit SIFS after the previous one of its exchange.
    pub(crate) pending: Option<OnAir>,
    /// The exchange it holds, from the access that started it to its end.
    pub(crate) exchange: Option<Box<SpatialExchange>>,
    /// Its receiver is locked on this node's PPDU.
    pub(crate) locked: Option<usize>,
    /// Its radio left while it was locked on a PPDU; settled when that PPDU ends.
    pub(crate) left_during: Option<Departure>,
    /// The lock's pieces (kept while not locked, for their allocation).
    pub(crate) lock: RxLock,
    /// Other nodes' PPDUs on the air it receives any power from.
    pub(crate) heard: u32,
    /// Of those, the ones at or above the preamble detection threshold: they hold its
    /// CCA busy whether or not it caught their preambles.
    pub(crate) loud: u32,
    /// Their total power, mW (exactly zero when `heard` is).
    pub(crate) energy_mw: f64,
    /// Its CCA is busy.
    pub(crate) busy: bool,
    /// The last PPDU it locked on was not decoded: EIFS instead of AIFS.
    pub(crate) undecoded: bool,
    /// It may not count down before this: the NAV it set from frames it decoded for
    /// others, or, after an exchange of its own failed, its response timeout.
    pub(crate) defer_until: Nanos,
    /// Its NAV: the end of the Duration of the last frame it decoded for someone else.
    pub(crate) nav_until: Nanos,
    /// Draws for control frames received under interference.
    pub(crate) rng: RngStream,
}

/// A receiver's radio left (retuned or dozed) while it was locked on a PPDU: the
/// subframes that had arrived by then it decoded, the rest and the response are lost
/// ([`Air::addressee_left`] has the rule, for both media).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Departure {
    /// The PPDU's sender (its index in the placement).
    pub(crate) ppdu: usize,
    /// When the radio left.
    pub(crate) at: Nanos,
}

/// What an ending PPDU was at its addressee.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct AtAddressee {
    /// It stayed locked on it to its end.
    locked_to_end: bool,
    /// Another PPDU overlapped it there.
    interfered: bool,
    /// Its radio left in the middle of it, at this instant.
    left_at: Option<Nanos>,
}

/// An exchange of one holder, PPDU by PPDU.
#[derive(Clone, Debug)]
pub(crate) struct SpatialExchange {
    pub(crate) tx: Tx,
    /// The node the data goes to.
    pub(crate) peer: usize,
    /// Its PPDUs, stepped through one by one.
    pub(crate) seq: FrameSequence,
    /// It is the AP's beacon: addressed to every station, answered by none.
    pub(crate) broadcast: bool,
    /// Start of the exchange's airtime (its first PPDU; within a TXOP the end of the
    /// previous exchange).
    pub(crate) busy_from: Nanos,
    /// Start of the TXOP.
    pub(crate) txop_start: Nanos,
    /// The receiver has taken what it decoded of the data PPDU.
    pub(crate) delivered: bool,
    /// Another PPDU overlapped the data PPDU at the receiver.
    pub(crate) interfered: bool,
}

/// Who sends a PPDU: one of the cell's nodes, or (by its index in the space's
/// placement) a node of another cell sharing the air.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Sender {
    Own(usize),
    Foreign(usize),
}

/// A PPDU starts or ends. At one instant ends go first, then starts, each in the order
/// they were scheduled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Event {
    at: Nanos,
    starts: bool,
    seq: u64,
    sender: Sender,
}

/// A PPDU on an air several cells share, as the cells tell one another about it
/// ([`Cell::poll_air`](crate::cell::Cell::poll_air), [`Cell::handle_air`](crate::cell::Cell::handle_air)): enough for another cell's nodes to sense
/// it, suffer it as interference and honour its Duration field.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AirPpdu {
    /// Its sender's index in the space's placement.
    pub transmitter: usize,
    /// When it starts.
    pub start: Nanos,
    /// When it ends.
    pub end: Nanos,
    /// Its rate (what a third party must decode it at).
    pub txv: TxVector,
    /// The end of the NAV it sets at a third party that decodes it.
    pub nav_end: Nanos,
}

/// The medium of a cell with space.
#[derive(Clone, Debug)]
pub(crate) struct SpatialMedium {
    pub(crate) map: RadioMap,
    pub(crate) nodes: Vec<NodeMedium>,
    events: BinaryHeap<Reverse<Event>>,
    seq: u64,
    /// Exchanges under way, and since when at least one has been (the cell's busy time).
    active: usize,
    active_since: Nanos,
    /// Where the cell's busy time has been counted to: the end of the last exchange.
    busy_counted_to: Nanos,
    /// The airtime charged to the exchanges so far ([`Air::airtime_total_ns`]).
    pub(crate) charged_ns: u64,
    /// Exchanges that ended while another was under way whose span they may overlap:
    /// what [`SpatialMedium::charge`] splits overlapping time against.
    ended: Vec<Span>,
    /// The index of the cell's AP in the space's placement (its nodes follow it).
    pub(crate) first: usize,
    /// PPDUs of other cells on the air, with their senders' indices in the placement.
    foreign: Vec<(usize, OnAir)>,
    /// The PPDUs this cell started, for the other cells sharing the air (`None` unless
    /// [`Air::share_air`] asked for them: nobody would drain them). Drained by
    /// [`Air::poll_air`]; at most the PPDUs of one instant.
    announce: Option<std::collections::VecDeque<AirPpdu>>,
    /// Per station (index 0 unused): the power its static link delivers, down (from
    /// the AP) and up, mW ([`Air::signal_mw`]).
    link_signal_mw: Vec<[f64; 2]>,
    /// Scratch: the power each node receives a starting PPDU at.
    signals: Vec<f64>,
    /// Scratch: nodes that transmit although a PPDU just started.
    late: Vec<usize>,
    /// Scratch: nodes whose CCA just turned idle.
    idle_again: Vec<usize>,
    /// Scratch: the spans an ending exchange's charge is split against.
    spans: Vec<Span>,
    /// Scratch: the nodes that stayed locked on the beacon that just ended, and whether
    /// anything interfered with it there.
    beacon_locks: Vec<(usize, bool)>,
}

impl SpatialMedium {
    /// The medium of a cell of `nodes` nodes whose AP is node `first` of `map`.
    pub(crate) fn new(map: RadioMap, first: usize, nodes: usize, seed: u64) -> SpatialMedium {
        let nodes = (0..nodes)
            .map(|i| NodeMedium {
                sending: None,
                pending: None,
                exchange: None,
                locked: None,
                left_during: None,
                lock: RxLock::default(),
                heard: 0,
                loud: 0,
                energy_mw: 0.0,
                busy: false,
                undecoded: false,
                defer_until: Nanos::ZERO,
                nav_until: Nanos::ZERO,
                rng: RngStream::new(seed, StreamKind::Reception, (first + i) as u64),
            })
            .collect();
        SpatialMedium {
            map,
            nodes,
            events: BinaryHeap::new(),
            seq: 0,
            active: 0,
            active_since: Nanos::ZERO,
            busy_counted_to: Nanos::ZERO,
            charged_ns: 0,
            ended: Vec::new(),
            first,
            foreign: Vec::new(),
            announce: None,
            link_signal_mw: Vec::new(),
            signals: Vec::new(),
            late: Vec::new(),
            idle_again: Vec::new(),
            spans: Vec::new(),
            beacon_locks: Vec::new(),
        }
    }

    /// The airtime charged to node `holder`'s exchange, which held the air `from..to`
    /// and has just ended (it is no longer under way). Time it shared with k − 1 other
    /// exchanges of the cell is split equally among the k, the remainder of each piece to
    /// the lowest node ([`split_share`], as one collision domain splits a collision in
    /// [`Air::finish_exchange`]): so the charges sum to the cell's busy time, and no station is
    /// charged more airtime than the run lasted, however its exchanges and its AP's
    /// overlap (issue 25).
    ///
    /// Every exchange that overlaps `from..to` is known now: one still under way began
    /// before `to` and lasts to `to` at least; one that ended is in `ended`.
    fn charge(&mut self, holder: usize, from: Nanos, to: Nanos) -> u64 {
        let under_way = self.nodes.iter().enumerate().filter_map(|(node, nm)| {
            nm.exchange.as_ref().map(|x| Span {
                node,
                from: x.busy_from,
                to: Nanos::MAX,
            })
        });
        let mut others = std::mem::take(&mut self.spans);
        others.clear();
        others.extend(self.ended.iter().copied().chain(under_way));
        let share = split_share(holder, from, to, &others);
        self.spans = others;
        self.ended.push(Span {
            node: holder,
            from,
            to,
        });
        // An ended span matters while it overlaps an exchange under way; later ones
        // begin at or after now.
        let earliest = self
            .nodes
            .iter()
            .filter_map(|nm| nm.exchange.as_ref().map(|x| x.busy_from))
            .min();
        match earliest {
            Some(t) => self.ended.retain(|o| o.to > t),
            None => self.ended.clear(),
        }
        share
    }

    /// A PPDU of `sender` ends at `at`.
    fn push(&mut self, at: Nanos, sender: Sender) {
        self.push_event(at, false, sender);
    }

    fn push_event(&mut self, at: Nanos, starts: bool, sender: Sender) {
        self.seq += 1;
        self.events.push(Reverse(Event {
            at,
            starts,
            seq: self.seq,
            sender,
        }));
    }

    /// From now on keep the PPDUs this cell starts for [`SpatialMedium::poll_air`].
    pub(crate) fn share_air(&mut self) {
        self.announce.get_or_insert_with(Default::default);
    }

    /// The next PPDU this cell started, for the other cells sharing the air.
    pub(crate) fn poll_air(&mut self) -> Option<AirPpdu> {
        self.announce.as_mut()?.pop_front()
    }

    /// Whether node `n`'s view of the medium is busy: its CCA, or it transmits, or it
    /// holds an exchange.
    pub(crate) fn view_busy(&self, n: usize) -> bool {
        let m = &self.nodes[n];
        m.busy || m.sending.is_some() || m.exchange.is_some()
    }

    /// Whether node `n` senses the medium busy at `now`, for the backoff rule of a frame
    /// queued for an idle EDCA function (802.11-2016 10.22.2.2 a): its view is busy
    /// ([`SpatialMedium::view_busy`]) or its NAV runs ([`Air::senses_busy`] states the rule
    /// for both media).
    pub(crate) fn senses_busy(&self, n: usize, now: Nanos) -> bool {
        self.view_busy(n) || self.nodes[n].nav_until > now
    }

    /// MPDUs in the air: sent in an exchange and not yet taken by their receiver.
    pub(crate) fn packets_in_air(&self) -> u64 {
        self.nodes
            .iter()
            .filter_map(|m| m.exchange.as_ref())
            .map(|x| {
                let received = |k: usize| x.delivered && x.tx.ok.get(k) == Some(&true);
                (0..x.tx.ppdu.mpdus.len()).filter(|&k| !received(k)).count() as u64
            })
            .sum()
    }
}

impl Air {
    /// Work out once the power each static link delivers: its SNR over the noise (or
    /// the space's power for a link without an SNR).
    pub(crate) fn init_link_signals(&mut self) {
        let Medium::Spatial(m) = &self.medium else {
            return;
        };
        let first = m.first;
        let power = |from: usize, to: usize| match self.nodes[from]
            .link_to(NodeId(to as u16))
            .map(|l| self.nodes[from].link(l).error_at(Nanos::ZERO))
        {
            Some(ErrorModel::Snr { snr_db }) => dbm_to_mw(snr_db + m.map.noise_dbm),
            _ => m.map.rx_mw(first + from, first + to),
        };
        let signals: Vec<[f64; 2]> = (0..self.nodes.len())
            .map(|s| {
                if s == 0 {
                    [0.0; 2]
                } else {
                    [power(0, s), power(s, 0)]
                }
            })
            .collect();
        self.medium.spatial_mut().link_signal_mw = signals;
    }

    /// The medium's next deadline: the earliest PPDU start or end to come, or the
    /// earliest transmission of a node whose view is idle.
    pub(crate) fn refresh_medium_timer(&mut self) {
        let access = self.medium_access_time();
        self.set_medium_timer(access);
    }

    /// [`Air::refresh_medium_timer`] with the access time already worked out.
    fn set_medium_timer(&mut self, access: Option<Nanos>) {
        let next_event = self.medium.spatial().events.peek().map(|e| e.0.at);
        let next = match (next_event, access) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.timers.set(Timer::Medium, next);
    }

    /// The earliest instant a node whose view is idle transmits, if any.
    fn medium_access_time(&self) -> Option<Nanos> {
        let Medium::Spatial(medium) = &self.medium else {
            return None;
        };
        let slot = self.timing.slot;
        let mut next: Option<Nanos> = None;
        for (n, node) in self.nodes.iter().enumerate() {
            if node.away || medium.view_busy(n) {
                continue;
            }
            if let Some((t, _)) = node.earliest_ac(Nanos::MAX, slot) {
                next = Some(next.map_or(t, |c: Nanos| c.min(t)));
            }
            if n == 0 {
                if let Some((bt, _)) = self.beacon_tx_time() {
                    next = Some(next.map_or(bt, |c: Nanos| c.min(bt)));
                }
            }
        }
        next
    }

    /// Everything on the medium due at `t`: PPDU ends, then starts, then accesses.
    pub(crate) fn medium_fire(&mut self, t: Nanos, mgmt: &mut dyn Management) {
        loop {
            let due = self
                .medium
                .spatial()
                .events
                .peek()
                .filter(|e| e.0.at <= t)
                .map(|e| e.0);
            if let Some(ev) = due {
                self.medium.spatial_mut().events.pop();
                match (ev.sender, ev.starts) {
                    (Sender::Own(n), true) => self.ppdu_start(n, ev.at),
                    (Sender::Own(n), false) => self.ppdu_end(n, ev.at, mgmt),
                    (Sender::Foreign(g), _) => self.foreign_end(g, ev.at),
                }
                continue;
            }
            match self.medium_access_time() {
                Some(a) if a <= t => self.medium_access(a),
                // perf: the access time just worked out sets the timer.
                access => {
                    self.set_medium_timer(access);
                    return;
                }
            }
        }
    }

    /// Contention ended at `t` for the nodes whose view is idle: every one whose backoff
    /// ends within aCCATime of `t` transmits (it cannot have detected the others yet).
    fn medium_access(&mut self, t: Nanos) {
        let window_end = t + self.timing.cca_detect;
        for n in 0..self.nodes.len() {
            if self.nodes[n].away || self.medium.view_busy(n) {
                continue;
            }
            self.node_access(n, window_end);
        }
    }

    /// Node `n` transmits if its contention ends by `window_end` ([`Air::node_wins`]):
    /// it starts an exchange.
    fn node_access(&mut self, n: usize, window_end: Nanos) {
        let beacon = if n == 0 { self.beacon_tx_time() } else { None };
        let Some(access) = self.node_wins(n, window_end, beacon) else {
            return;
        };
        match (access.tx, access.ac) {
            (Some(tx), _) => {
                let start = tx.start;
                self.begin_exchange(n, tx, None, start, start);
            }
            // Defensive (has_frame promised a PPDU): try again a slot later.
            (None, Some(ac)) => {
                self.nodes[n].edca[ac.index()].counted_from = access.busy_at + self.timing.slot
            }
            (None, None) => {}
        }
    }

    /// Node `n` starts an exchange with `tx` at `start` (`known`: its frame sequence,
    /// when the caller has just built it; `busy_from`: where its airtime starts;
    /// `txop_start`: its TXOP's start).
    fn begin_exchange(
        &mut self,
        n: usize,
        mut tx: Tx,
        known: Option<FrameSequence>,
        busy_from: Nanos,
        txop_start: Nanos,
    ) {
        let (peer, broadcast) = match tx.frame {
            // One of the MAC's own frames: a station's to its AP, or the AP's beacon.
            Some(f) => {
                tx.ok.clear();
                (0, matches!(f, Frame::Mgmt(MgmtFrame::Beacon { .. })))
            }
            None => {
                tx.count_try();
                (self.nodes[n].link(tx.link()).peer.index(), false)
            }
        };
        let seq = match known {
            Some(seq) => {
                debug_assert_eq!(seq, self.sequence_of_tx(&tx));
                seq
            }
            None => self.sequence_of_tx(&tx),
        };
        let start = tx.start;
        let x = Box::new(SpatialExchange {
            tx,
            peer,
            seq,
            broadcast,
            busy_from,
            txop_start,
            delivered: false,
            interfered: false,
        });
        let m = self.medium.spatial_mut();
        // Nodes that win the same contention begin in node order, not in the order of
        // their starts (which differ within aCCATime): the busy period starts at the
        // earliest.
        m.active_since = if m.active == 0 {
            busy_from
        } else {
            m.active_since.min(busy_from)
        };
        m.active += 1;
        m.nodes[n].exchange = Some(x);
        self.schedule_ppdu(n, seq.first(), start);
    }

    /// Schedule the `kind` PPDU of node `holder`'s exchange to start at `start`.
    fn schedule_ppdu(&mut self, holder: usize, kind: PpduKind, start: Nanos) {
        let m = self.medium.spatial_mut();
        let x = m.nodes[holder].exchange.as_ref().expect("an exchange");
        let p = *x.seq.get(kind);
        let (from, to) = if kind.sent_by_holder() {
            (holder, x.peer)
        } else {
            (x.peer, holder)
        };
        let end = start + p.duration;
        m.nodes[from].pending = Some(OnAir {
            kind,
            start,
            end,
            holder,
            to: (kind.addressed() && !x.broadcast).then_some(to),
            txv: p.txv,
            bytes: p.bytes,
            nav_end: end + p.nav_after,
        });
        m.push_event(start, true, Sender::Own(from));
    }

    /// The power node `to` receives node `from`'s PPDU at, mW: from the link's own SNR
    /// at `t` when the two are the AP and one of its stations (so fading and traces
    /// apply), from the space otherwise.
    fn signal_mw(&self, from: usize, to: usize, t: Nanos) -> f64 {
        let m = self.medium.spatial();
        let first = m.first;
        let Some(link) = self.nodes[from].link_to(NodeId(to as u16)) else {
            return m.map.rx_mw_at(first + from, first + to, t);
        };
        let link = self.nodes[from].link(link);
        if link.channel.is_none() {
            // A static link: its power was worked out once.
            let (sta, up) = if from == 0 { (to, 0) } else { (from, 1) };
            return m.link_signal_mw[sta][up];
        }
        match link.error_at(t) {
            ErrorModel::Snr { snr_db } => dbm_to_mw(snr_db + m.map.noise_dbm),
            _ => m.map.rx_mw_at(first + from, first + to, t),
        }
    }

    /// Node `x`'s pending PPDU goes on the air.
    fn ppdu_start(&mut self, x: usize, s: Nanos) {
        let m = self.medium.spatial_mut();
        let Some(ppdu) = m.nodes[x].pending.take() else {
            return;
        };
        // A transmitter's receiver is off while it sends: it loses what it was locked on.
        m.nodes[x].locked = None;
        m.nodes[x].sending = Some(ppdu);
        m.nodes[x].undecoded = false;
        m.push(ppdu.end, Sender::Own(x));
        let g = m.first + x;
        if let Some(out) = m.announce.as_mut() {
            out.push_back(AirPpdu {
                transmitter: g,
                start: ppdu.start,
                end: ppdu.end,
                txv: ppdu.txv,
                nav_end: ppdu.nav_end,
            });
        }
        // What each receives of it (scratch kept in the medium for its allocation).
        let mut signals = std::mem::take(&mut m.signals);
        signals.clear();
        signals.extend((0..self.nodes.len()).map(|r| {
            if r == x {
                0.0
            } else {
                self.signal_mw(x, r, s)
            }
        }));
        self.hear_start(g, Some(x), &ppdu, s, &signals);
        self.medium.spatial_mut().signals = signals;
    }

    /// A PPDU of another cell sharing the air starts (at `ppdu.start`, now): this cell's
    /// nodes sense it, lock on it or suffer it.
    pub(crate) fn foreign_ppdu(&mut self, ppdu: AirPpdu) {
        let m = self.medium.spatial_mut();
        // Its kind, holder and addressee are the other cell's business: here it is a
        // PPDU addressed to no node of this cell.
        let on_air = OnAir {
            kind: PpduKind::Data,
            start: ppdu.start,
            end: ppdu.end,
            holder: usize::MAX,
            to: None,
            txv: ppdu.txv,
            bytes: 0,
            nav_end: ppdu.nav_end,
        };
        m.foreign.push((ppdu.transmitter, on_air));
        m.push(ppdu.end, Sender::Foreign(ppdu.transmitter));
        let mut signals = std::mem::take(&mut m.signals);
        signals.clear();
        let first = m.first;
        signals.extend(
            (0..self.nodes.len()).map(|r| m.map.rx_mw_at(ppdu.transmitter, first + r, ppdu.start)),
        );
        self.hear_start(ppdu.transmitter, None, &on_air, ppdu.start, &signals);
        self.medium.spatial_mut().signals = signals;
        self.refresh_medium_timer();
    }

    /// Every node of the cell but its sender (`own`, if the sender is one) hears a PPDU
    /// from node `g` of the air start at `s`, at `signals[r]` (what it is decided on):
    /// its energy rises, its receiver locks on it, is captured by it or suffers it, and
    /// its CCA may turn busy. A node whose backoff ends within aCCATime of `s` cannot
    /// have sensed it yet, and transmits.
    fn hear_start(
        &mut self,
        g: usize,
        own: Option<usize>,
        ppdu: &OnAir,
        s: Nanos,
        signals: &[f64],
    ) {
        let cca = self.timing.cca_detect;
        let (slot, rule) = (self.timing.slot, self.cfg.backoff_rule);
        let sync = sync_time(&ppdu.txv);
        let m = self.medium.spatial_mut();
        let mut late = std::mem::take(&mut m.late);
        for (r, &signal) in signals.iter().enumerate() {
            if Some(r) == own {
                continue;
            }
            // A node whose radio is away (off channel, asleep) neither locks on nor
            // defers to what starts; its energy is still followed, so that its carrier
            // sense is right when it comes back.
            let away = self.nodes[r].away;
            let p_mw = m.map.rx_mw_at(g, m.first + r, ppdu.start);
            if p_mw < m.map.floor_mw {
                continue;
            }
            let (preamble_mw, preamble_sinr) = (m.map.preamble_mw, m.map.preamble_sinr);
            let noise_mw = m.map.noise_mw;
            let capture_ratio = m.map.capture_ratio;
            let energy_mw_threshold = m.map.energy_mw;
            let nm = &mut m.nodes[r];
            let was_idle = !nm.busy;
            nm.heard += 1;
            nm.loud += u32::from(p_mw >= preamble_mw);
            nm.energy_mw += p_mw;
            if nm.sending.is_none() && !away {
                // perf: thresholds compared as powers (no logarithm per receiver).
                let detectable = p_mw >= preamble_mw
                    && signal >= preamble_sinr * (noise_mw + nm.energy_mw - p_mw);
                match nm.locked {
                    Some(_) => {
                        let takes_over = detectable
                            && (if s == nm.lock.start {
                                // Preambles at one instant: the strongest is the one
                                // the receiver synchronises to.
                                signal > nm.lock.signal_mw
                            } else {
                                capture_ratio.is_some_and(|r| signal >= nm.lock.signal_mw * r)
                            });
                        let i = (nm.energy_mw - nm.lock.power_mw).max(0.0);
                        if takes_over {
                            nm.locked = Some(g);
                            nm.lock.lock(g, s, sync, signal, p_mw, nm.energy_mw - p_mw);
                        } else if s < nm.lock.sync_until
                            && nm.lock.signal_mw < preamble_sinr * (noise_mw + i)
                        {
                            // The preamble it was synchronising to is buried: it
                            // decodes neither (at one instant, two equal preambles).
                            nm.locked = None;
                            nm.undecoded = true;
                        } else {
                            nm.lock.change(s, i);
                        }
                    }
                    None if detectable => {
                        nm.locked = Some(g);
                        nm.lock.lock(g, s, sync, signal, p_mw, nm.energy_mw - p_mw);
                    }
                    None => {}
                }
            }
            let busy_now = nm.loud > 0 || nm.energy_mw >= energy_mw_threshold;
            if was_idle && busy_now {
                nm.busy = true;
                let holds = nm.exchange.is_some() || nm.sending.is_some();
                if !holds && !away {
                    let node = &mut self.nodes[r];
                    let starts_anyway = Ac::ALL.into_iter().any(|ac| {
                        node.has_frame(ac) && node.edca[ac.index()].tx_time(slot) <= s + cca
                    });
                    if starts_anyway {
                        late.push(r);
                    } else {
                        // Its counters stop at the slot boundaries that passed before
                        // it could detect the PPDU.
                        for b in node.edca.iter_mut() {
                            b.freeze(s + cca, slot, rule);
                        }
                    }
                }
            }
        }
        for &r in &late {
            self.node_access(r, s + cca);
        }
        late.clear();
        self.medium.spatial_mut().late = late;
    }

    /// Every node of the cell but its sender hears the PPDU from node `g` of the air end
    /// at `e`: locks on it close (a third party that decoded it honours its Duration),
    /// energy falls, CCA may turn idle. Returns what its addressee (if one of the
    /// cell's) made of it: (locked on it to the end, interfered with).
    fn hear_end(&mut self, g: usize, own: Option<usize>, ppdu: &OnAir, e: Nanos) -> AtAddressee {
        let m = self.medium.spatial_mut();
        let noise_mw = m.map.noise_mw;
        let energy_threshold = m.map.energy_mw;
        let mut at_addressee = AtAddressee::default();
        let mut idle_again = std::mem::take(&mut m.idle_again);
        idle_again.clear();
        for r in 0..m.nodes.len() {
            if Some(r) == own {
                continue;
            }
            // As at its start (`hear_start`): what it added is what it takes away.
            let p_mw = m.map.rx_mw_at(g, m.first + r, ppdu.start);
            let nm = &mut m.nodes[r];
            if nm.heard == 0 || p_mw < m.map.floor_mw {
                continue; // away when it started, or too weak to hear
            }
            nm.heard -= 1;
            nm.loud -= u32::from(p_mw >= m.map.preamble_mw);
            nm.energy_mw = if nm.heard == 0 {
                0.0
            } else {
                nm.energy_mw - p_mw
            };
            if let Some(d) = nm.left_during.filter(|d| d.ppdu == g) {
                nm.left_during = None;
                if own.is_some() && Some(r) == ppdu.to {
                    at_addressee.left_at = Some(d.at);
                    at_addressee.interfered = nm.lock.interfered();
                }
            }
            if nm.locked == Some(g) {
                nm.lock.close(e);
                nm.locked = None;
                if own.is_some() && ppdu.kind == PpduKind::Own && ppdu.to.is_none() {
                    // The cell's own beacon: each station's reception is drawn from
                    // its lock (`Air::beacon_heard_in_space`).
                    m.beacon_locks.push((r, nm.lock.interfered()));
                }
                if own.is_some() && Some(r) == ppdu.to {
                    at_addressee.locked_to_end = true;
                    at_addressee.interfered = nm.lock.interfered();
                    nm.undecoded = false; // settled by the exchange
                } else {
                    // A third party decodes it if its worst piece clears the rate's
                    // threshold; then it honours the Duration field.
                    let decoded = nm.lock.min_sinr_db(noise_mw) >= snr_threshold_db(&ppdu.txv);
                    nm.undecoded = !decoded;
                    if decoded {
                        nm.defer_until = nm.defer_until.max(ppdu.nav_end);
                        nm.nav_until = nm.nav_until.max(ppdu.nav_end);
                    }
                }
            } else if nm.locked.is_some() {
                let i = (nm.energy_mw - nm.lock.power_mw).max(0.0);
                nm.lock.change(e, if nm.heard <= 1 { 0.0 } else { i });
            }
            let busy_now = nm.loud > 0 || nm.energy_mw >= energy_threshold;
            if nm.busy && !busy_now {
                nm.busy = false;
                idle_again.push(r);
            }
        }
        self.medium.spatial_mut().idle_again = idle_again;
        at_addressee
    }

    /// The nodes whose CCA turned idle at `e` (gathered by `hear_end`) count from then.
    fn settle_idle(&mut self, e: Nanos) {
        let eifs_extra = self.eifs_extra;
        let idle = std::mem::take(&mut self.medium.spatial_mut().idle_again);
        for &r in &idle {
            self.view_idle(r, e, eifs_extra);
        }
        self.medium.spatial_mut().idle_again = idle;
    }

    /// Node `x`'s PPDU ends at `e`.
    fn ppdu_end(&mut self, x: usize, e: Nanos, mgmt: &mut dyn Management) {
        let m = self.medium.spatial_mut();
        let Some(ppdu) = m.nodes[x].sending.take() else {
            return;
        };
        let g = m.first + x;
        let at = self.hear_end(g, Some(x), &ppdu, e);
        let (locked_to_end, interfered) = (at.locked_to_end, at.interfered);
        let outcome = self.addressee_outcome(&ppdu, at);
        if self.capture.is_some() {
            self.capture_medium_ppdu(x, &ppdu, outcome == PpduOutcome::Through, mgmt);
        }
        if let (Some(to), PpduOutcome::Lost { .. }) = (ppdu.to, outcome) {
            // It started receiving and could not decode: EIFS.
            if locked_to_end {
                self.medium.spatial_mut().nodes[to].undecoded = true;
            }
        }
        self.settle_idle(e);
        // A responder (or a CTS sender) counts from the end of what it sent.
        let m = self.medium.spatial();
        if m.nodes[x].exchange.is_none() && !m.nodes[x].busy {
            self.set_ifs_ref(x, e);
        }
        self.advance_exchange(ppdu, outcome, interfered, mgmt);
    }

    /// The PPDU of node `g` of another cell ends at `e`.
    fn foreign_end(&mut self, g: usize, e: Nanos) {
        let m = self.medium.spatial_mut();
        let Some(k) = m.foreign.iter().position(|(t, p)| *t == g && p.end == e) else {
            return;
        };
        let (_, ppdu) = m.foreign.swap_remove(k);
        self.hear_end(g, None, &ppdu, e);
        self.settle_idle(e);
    }

    /// Node `r`'s CCA turned idle at `e`: its EDCA functions count from AIFS after it
    /// (EIFS after an undecoded PPDU), and not before its NAV runs out.
    fn view_idle(&mut self, r: usize, e: Nanos, eifs_extra: Nanos) {
        let m = self.medium.spatial();
        let nm = &m.nodes[r];
        if nm.sending.is_some() || nm.exchange.is_some() {
            return;
        }
        let from = if nm.undecoded { e + eifs_extra } else { e };
        let ifs_ref = from.max(nm.defer_until);
        self.set_ifs_ref(r, ifs_ref);
    }

    /// Node `r`'s interframe reference is `t`: every AC counts from AIFS after it.
    fn set_ifs_ref(&mut self, r: usize, t: Nanos) {
        let node = &mut self.nodes[r];
        node.ifs_ref = t;
        for b in node.edca.iter_mut() {
            b.counted_from = t + self.timing.aifs(b.params.aifsn);
        }
    }

    /// Whether the addressee of `ppdu` got it: for data, which MPDUs (drawn into the
    /// exchange's `ok`); for a control frame, yes or no.
    fn addressee_outcome(&mut self, ppdu: &OnAir, at: AtAddressee) -> PpduOutcome {
        let AtAddressee {
            locked_to_end: locked,
            interfered,
            left_at,
        } = at;
        let Some(to) = ppdu.to else {
            return PpduOutcome::Through;
        };
        if let (Some(left_at), PpduKind::Data) = (left_at, ppdu.kind) {
            // Its radio left during the data: what had arrived it keeps, but it
            // answers nothing.
            self.draw_data(ppdu, interfered, Some(left_at));
            return PpduOutcome::Lost { interfered: false };
        }
        if !locked {
            // An addressee whose radio is away decodes nothing, with nothing to blame but
            // its absence (as in one collision domain).
            let interfered = !self.nodes[to].away;
            return PpduOutcome::Lost { interfered };
        }
        if ppdu.kind == PpduKind::Own && !interfered {
            // A station's own frame nobody interfered with: drawn through its link's
            // channel, as one collision domain draws it (`Air::resolve_frame`).
            let link = &mut self.nodes[ppdu.holder].links[0];
            let error = link.error_at(ppdu.start);
            return if link.draws_through(&error, &ppdu.txv, ppdu.bytes) {
                PpduOutcome::Through
            } else {
                PpduOutcome::Lost { interfered: false }
            };
        }
        if ppdu.kind != PpduKind::Data {
            if !interfered {
                return PpduOutcome::Through;
            }
            let signal = self.medium.spatial().nodes[to].lock.signal_mw;
            let m = self.medium.spatial_mut();
            let noise = m.map.noise_mw;
            let nm = &mut m.nodes[to];
            let p = nm
                .lock
                .success(&ppdu.txv, signal, noise, ppdu.start, ppdu.end, ppdu.bytes);
            return if nm.rng.bernoulli(1.0 - p) {
                PpduOutcome::Lost { interfered: true }
            } else {
                PpduOutcome::Through
            };
        }
        self.draw_data(ppdu, interfered, None)
    }

    /// The addressee of a data PPDU it stayed locked on draws each MPDU: at the link's
    /// own error model when nothing interfered (exactly as without space), piece by
    /// piece at the SINR otherwise. An MPDU that arrives after `left_at` (the
    /// addressee's radio left then) is lost, undrawn.
    fn draw_data(&mut self, ppdu: &OnAir, interfered: bool, left_at: Option<Nanos>) -> PpduOutcome {
        let holder = ppdu.holder;
        let overhead = self.mpdu_overhead();
        let to = ppdu.to.expect("data has an addressee");
        // The medium and the nodes' links are borrowed apart.
        let medium = self.medium.spatial_mut();
        let noise = medium.map.noise_mw;
        // The lock is lent out while the exchange's MPDUs are drawn.
        let lock = std::mem::take(&mut medium.nodes[to].lock);
        let x = medium.nodes[holder].exchange.as_mut().expect("an exchange");
        let tx = &mut x.tx;
        let link = self.nodes[holder].link_mut(tx.ppdu.link);
        let error = link.error_at(tx.start);
        let txv = tx.stage.txv;
        tx.ok.clear();
        let mut any_ok = false;
        // The MPDUs' shares of the PPDU's time, by their places in the PSDU.
        let mut clock = SubframeClock::new(ppdu.start, ppdu.end - ppdu.start, tx.ppdu.psdu_bytes);
        for m in tx.ppdu.mpdus.iter() {
            let bytes = m.packet.len_bytes + overhead;
            let span = clock.next(bytes);
            let ok = if left_at.is_some_and(|l| span.to > l) {
                false
            } else if !interfered {
                link.draws_through(&error, &txv, bytes)
            } else {
                let p = lock.success(&txv, lock.signal_mw, noise, span.from, span.to, bytes);
                !link.rng.bernoulli(1.0 - p)
            };
            any_ok |= ok;
            tx.ok.push(ok);
        }
        medium.nodes[to].lock = lock;
        if any_ok {
            PpduOutcome::Through
        } else {
            PpduOutcome::Lost { interfered }
        }
    }

    /// The next step of the exchange `ppdu` belonged to, now that it ended
    /// (`interfered`: another PPDU overlapped it at its addressee).
    fn advance_exchange(
        &mut self,
        ppdu: OnAir,
        outcome: PpduOutcome,
        interfered: bool,
        mgmt: &mut dyn Management,
    ) {
        let sifs = self.timing.sifs;
        let holder = ppdu.holder;
        let e = ppdu.end;
        match (ppdu.kind, outcome) {
            (PpduKind::Rts | PpduKind::Cts | PpduKind::CtsToSelf, PpduOutcome::Through) => {
                // Protection got through: the sequence's next PPDU, SIFS later.
                let m = self.medium.spatial();
                let x = m.nodes[holder].exchange.as_ref().expect("an exchange");
                let next = x.seq.after(ppdu.kind).expect("data follows protection");
                self.schedule_ppdu(holder, next, e + sifs)
            }
            (PpduKind::Data, o) => {
                // The holder's exchange is lent out while its receiver takes what it
                // decoded (`release_received` needs the whole cell). The medium stays
                // in place: what the reception wakes (the AP's queues for a station
                // it believed asleep) contends on it as at any other time.
                let mut x = self.medium.spatial_mut().nodes[holder]
                    .exchange
                    .take()
                    .expect("an exchange");
                x.delivered = true;
                x.interfered = interfered;
                if matches!(o, PpduOutcome::Lost { .. }) {
                    // Nothing decoded: `ok` may still be empty (addressee not locked).
                    x.tx.ok.resize(x.tx.ppdu.mpdus.len(), false);
                }
                self.release_received(e, &x.tx, mgmt);
                self.medium.spatial_mut().nodes[holder].exchange = Some(x);
                match o {
                    PpduOutcome::Through => {
                        self.schedule_ppdu(holder, PpduKind::Response, e + sifs)
                    }
                    PpduOutcome::Lost { interfered } => {
                        self.end_exchange(holder, e, failed(interfered), Some(ppdu.kind), mgmt)
                    }
                }
            }
            (PpduKind::Own, o) => self.own_frame_ended(ppdu, o, mgmt),
            (PpduKind::Response, PpduOutcome::Through) => {
                self.end_exchange(holder, e, ExchangeOutcome::Acked, None, mgmt)
            }
            (
                PpduKind::Response | PpduKind::Cts | PpduKind::Rts,
                PpduOutcome::Lost { interfered },
            ) => {
                // The holder missed the response it waited for, or its RTS was.
                self.end_exchange(holder, e, failed(interfered), Some(ppdu.kind), mgmt)
            }
            (PpduKind::CtsToSelf, PpduOutcome::Lost { .. }) => unreachable!(),
        }
    }

    /// One of the MAC's own frames ended (`ppdu`, with what its addressee made of it):
    /// the receivers act on it, as in one collision domain; a station's frame then
    /// waits for the AP's ACK, a beacon's exchange ends.
    fn own_frame_ended(&mut self, ppdu: OnAir, outcome: PpduOutcome, mgmt: &mut dyn Management) {
        let (holder, e) = (ppdu.holder, ppdu.end);
        let through = outcome == PpduOutcome::Through;
        let (sender, f) = {
            let m = self.medium.spatial_mut();
            let x = m.nodes[holder].exchange.as_mut().expect("an exchange");
            x.tx.ok.clear();
            x.tx.ok.push(through);
            x.delivered = true;
            (x.tx.node, x.tx.frame.expect("one of the MAC's own frames"))
        };
        if matches!(f, Frame::Mgmt(MgmtFrame::Beacon { .. })) {
            self.beacon_heard_in_space(&ppdu, mgmt);
            mgmt.refresh(self);
            self.end_exchange(holder, e, ExchangeOutcome::Acked, None, mgmt);
            return;
        }
        self.deliver_own_frame(e, sender, f, through, mgmt);
        match outcome {
            PpduOutcome::Through => {
                self.schedule_ppdu(holder, PpduKind::Response, e + self.timing.sifs)
            }
            PpduOutcome::Lost { interfered } => {
                self.end_exchange(holder, e, failed(interfered), Some(PpduKind::Own), mgmt)
            }
        }
    }

    /// The cell's beacon `ppdu` ended ([`Air::stations_hear_beacon`]): a station heard it
    /// if it stayed locked on it to the end and drew it through: at its link's channel
    /// if nothing interfered (as one collision domain draws it), at its pieces' SINRs
    /// otherwise.
    fn beacon_heard_in_space(&mut self, ppdu: &OnAir, mgmt: &mut dyn Management) {
        let t = ppdu.end;
        let locks = std::mem::take(&mut self.medium.spatial_mut().beacon_locks);
        mgmt.beacon_ended(self, t, &mut |cell, sta| {
            let n = sta.node().index();
            match locks.iter().find(|l| l.0 == n) {
                None => false,
                Some(&(_, false)) => cell.beacon_through_link(sta, t),
                Some(&(_, true)) => {
                    let m = cell.medium.spatial_mut();
                    let noise = m.map.noise_mw;
                    let nm = &mut m.nodes[n];
                    let signal = nm.lock.signal_mw;
                    let p = nm
                        .lock
                        .success(&ppdu.txv, signal, noise, ppdu.start, t, ppdu.bytes);
                    !nm.rng.bernoulli(1.0 - p)
                }
            }
        });
        let mut locks = locks;
        locks.clear();
        self.medium.spatial_mut().beacon_locks = locks;
    }

    /// Record node `x`'s PPDU `ppdu`, which just ended (`through`: its addressee
    /// decoded it; for data, at least one MPDU), heard at the power the space gives
    /// ([`Air::captured_ppdu`] builds the record, as in one collision domain).
    #[inline(never)]
    fn capture_medium_ppdu(
        &mut self,
        x: usize,
        ppdu: &OnAir,
        through: bool,
        mgmt: &dyn Management,
    ) {
        let m = self.medium.spatial();
        let Some(ex) = m.nodes[ppdu.holder].exchange.as_ref() else {
            return;
        };
        let signal_dbm = ppdu.to.map(|to| {
            let mw = self.signal_mw(x, to, ppdu.start);
            10.0 * mw.log10()
        });
        let heard = HeardPpdu {
            start: ppdu.start,
            end: ppdu.end,
            transmitter: NodeId(x as u16),
            // A beacon goes to everyone; a CTS-to-self to its own sender.
            receiver: match (ppdu.to, ppdu.kind) {
                (None, PpduKind::Own) => None,
                (to, _) => Some(NodeId(to.unwrap_or(x) as u16)),
            },
            received: through,
            signal_dbm,
            noise_dbm: m.map.noise_dbm,
        };
        let record = self.captured_ppdu(&ex.tx, ex.seq.get(ppdu.kind), heard, mgmt);
        self.capture_push(record);
    }

    /// Node `holder`'s exchange ends at `e` with `outcome`. `lost`: the PPDU that did
    /// not get through or whose response did not (the holder then waits its response
    /// timeout, [`Air::response_given_up_at`]).
    fn end_exchange(
        &mut self,
        holder: usize,
        e: Nanos,
        outcome: ExchangeOutcome,
        lost: Option<PpduKind>,
        mgmt: &mut dyn Management,
    ) {
        let mut x = {
            let m = self.medium.spatial_mut();
            let x = m.nodes[holder].exchange.take().expect("an exchange");
            m.active -= 1;
            x
        };
        let m = self.medium.spatial_mut();
        let share = m.charge(holder, x.busy_from, e);
        m.charged_ns += share;
        // The air has been busy without a break since `active_since`: count it up to
        // here now, so that a busy period still open when the run ends (hidden nodes
        // can keep one open for long) is counted up to its last exchange.
        let counted = e.saturating_sub(m.active_since.max(m.busy_counted_to));
        m.busy_counted_to = m.busy_counted_to.max(e);
        self.busy_ns += counted.as_ns();
        let data = x.tx.frame.is_none();
        if data && outcome == ExchangeOutcome::Acked && x.interfered {
            let station = self.station_of(holder, x.tx.link());
            self.link_stats(station, holder != 0).captures += 1;
        }
        self.settle_tx(&mut x.tx, x.busy_from, e, outcome, share, mgmt);
        if data && outcome == ExchangeOutcome::Acked {
            if let Some(seq) = self.continue_in_txop(&mut x.tx, e, x.txop_start) {
                let txop_start = x.txop_start;
                self.begin_exchange(holder, x.tx, Some(seq), e, txop_start);
                return;
            }
        }
        let after = lost.map_or(e, |k| self.response_given_up_at(&x.seq, k, e));
        self.recycle_ok(x.tx);
        // A holder whose response never came waits its response timeout, then AIFS
        // (it saw no errored frame); if its CCA is still busy then, whichever is later.
        let nm = &mut self.medium.spatial_mut().nodes[holder];
        nm.defer_until = nm.defer_until.max(after);
        nm.undecoded = false;
        if !nm.busy {
            let at = nm.defer_until;
            self.set_ifs_ref(holder, at);
        }
        mgmt.exchange_ended(self, e);
    }
}

/// What the addressee made of a PPDU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PpduOutcome {
    /// Decoded (for data: at least one MPDU).
    Through,
    /// Not decoded; `interfered`: another PPDU took part.
    Lost { interfered: bool },
}

fn failed(interfered: bool) -> ExchangeOutcome {
    if interfered {
        ExchangeOutcome::Collision
    } else {
        ExchangeOutcome::Failed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A node's energy is the sum of the powers of the PPDUs on the air at it, each as
    /// at its start (and `heard` / `loud` count them), whatever the nodes do meanwhile:
    /// a PPDU takes away what it added. Station 2 jumps between 30 and 45 m from
    /// station 1 every millisecond, across the −82 dBm preamble threshold (37.8 m at
    /// 20 dBm, exponent 3.5), far faster than anyone walks, so its powers change within
    /// every PPDU; both stations saturate their uplinks. Checked after every step.
    #[test]
    fn a_ppdu_takes_away_what_it_added_while_nodes_walk() {
        use crate::cell::{Cell, CellConfig, Output, StationConfig};
        use crate::packet::Packet;
        use crate::phy::mobility::{Mobility, Position, Waypoint};
        use crate::phy::space::{Placement, SpaceConfig, Walker};
        use crate::phy::{Band, ChannelWidth, GuardInterval, Standard};
        let jumps: Vec<Waypoint> = (0..2000u64)
            .flat_map(|k| {
                let x = if k % 2 == 0 { 10.0 } else { 25.0 };
                [Nanos::from_ms(k), Nanos::from_ms(k) + Nanos::from_us(999)].map(|at| Waypoint {
                    at,
                    position: Position::new(x, 0.0),
                })
            })
            .collect();
        let mut space = SpaceConfig::new(
            Placement::Positions {
                positions: vec![
                    Position::default(),
                    Position::new(-20.0, 0.0),
                    Position::new(10.0, 0.0),
                ],
                exponent: 3.5,
            },
            20.0,
        );
        space.walkers = vec![Walker {
            node: 2,
            mobility: Mobility::Waypoints(jumps),
        }];
        let tx = TxVector::Ht {
            mcs: 4,
            width: ChannelWidth::Mhz20,
            gi: GuardInterval::Long,
        };
        let sta = || StationConfig::new(tx, ErrorModel::Snr { snr_db: 30.0 });
        let mut cfg = CellConfig::new(Standard::N, Band::Ghz5, vec![sta(), sta()]);
        cfg.space = Some(space);
        let mut cell = Cell::new(cfg, 3).expect("a valid cell");
        {
            let map = &cell.air.medium.spatial().map;
            assert!(map.detects_at(1, 2, Nanos::ZERO));
            assert!(!map.detects_at(1, 2, Nanos::from_ms(1)));
        }
        let mut id = 0;
        for s in [1, 2] {
            for _ in 0..64 {
                cell.handle_packet(Nanos::ZERO, Packet::new(id, NodeId(s), NodeId::AP, 1500));
                id += 1;
            }
        }
        let (mut steps, mut overlaps) = (0, 0);
        while let Some(t) = cell.poll_timeout().filter(|&t| t < Nanos::from_secs(2)) {
            cell.handle_timeout(t);
            while let Some(o) = cell.poll_output() {
                let (at, p) = match o {
                    Output::Delivered { at, packet, .. } | Output::Dropped { at, packet, .. } => {
                        (at, packet)
                    }
                    Output::Airtime(_) => continue,
                };
                cell.handle_packet(at, Packet::new(id, p.src, p.dst, 1500));
                id += 1;
            }
            let m = cell.air.medium.spatial();
            for (r, nm) in m.nodes.iter().enumerate() {
                let on_air: Vec<f64> = m
                    .nodes
                    .iter()
                    .enumerate()
                    .filter(|&(x, _)| x != r)
                    .filter_map(|(x, n)| n.sending.map(|p| m.map.rx_mw_at(x, r, p.start)))
                    .filter(|&p| p >= m.map.floor_mw)
                    .collect();
                let energy: f64 = on_air.iter().sum();
                let loud = on_air.iter().filter(|&&p| p >= m.map.preamble_mw).count();
                overlaps += usize::from(on_air.len() > 1);
                assert_eq!(nm.heard as usize, on_air.len(), "node {r} at {t:?}");
                assert_eq!(nm.loud as usize, loud, "node {r} at {t:?}");
                assert!(
                    (nm.energy_mw - energy).abs() <= 1e-9 * energy,
                    "node {r} at {t:?}: {} mW, {energy} mW on the air",
                    nm.energy_mw
                );
            }
            steps += 1;
        }
        assert!(
            steps > 1000 && overlaps > 50,
            "{steps} steps, {overlaps} overlaps"
        );
    }
}
