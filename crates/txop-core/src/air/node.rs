//! The nodes the engine runs: the AP (node 0) and the stations, each with its EDCA
//! functions, its transmit path and its links, and the MAC's own frames waiting to go.

use crate::air::stats::{RateSeries, RateUse};
use crate::driver::NUM_TIDS;
use crate::mac::blockack::RxReorder;
use crate::mac::edca::{Ac, Backoff};
use crate::mac::frame::Frame;
use crate::mac::link_airtime::LinkAirtime;
use crate::mac80211::rate_control::RateMap;
use crate::mac80211::txq::LinkId;
use crate::packet::NodeId;
use crate::phy::channel::ErrorModel;
use crate::phy::link_channel::LinkChannel;
use crate::phy::TxVector;
use crate::rng::RngStream;
use crate::txpath::TxPath;
use crate::Nanos;
use std::collections::VecDeque;

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
