//! The medium a cell's MAC runs on, chosen once when the cell is built ([`Medium`]).
//!
//! The MAC asks the medium two questions: who hears a PPDU at what SINR, and when a
//! node sees the medium idle. There are two answers:
//!
//! - [`Medium::Shared`] (`shared.rs`): one collision domain. Every node hears every
//!   PPDU at its link's SNR, so every outcome is known when an exchange starts and the
//!   engine lays the exchange out whole (`air/contention.rs`, `air/exchange.rs`): one
//!   access timer, one exchange on the air at a time. It is the model the reference
//!   describes (§11.1) and the fast path.
//! - [`Medium::Spatial`] (`spatial.rs`, with `reception.rs`): the cell has space
//!   ([`crate::phy::space`]). Each node has its own view (carrier sense, NAV, EIFS,
//!   reception by SINR, capture, 802.11-2016 10.3.2.1), so the medium is followed PPDU
//!   by PPDU and several exchanges can be under way at once (hidden nodes).
//!
//! The cell holds one of the two from [`Cell::new`](crate::cell::Cell::new) on, and the
//! questions both answer (is a node's view busy, which packets are in the air, what
//! airtime was charged) are asked of the enum. Where the two engines step differently
//! (an access, an exchange's end, a radio leaving or coming back), the step matches on
//! the variant once at its top.

pub(crate) mod reception;
mod shared;
pub(crate) mod spatial;

pub(crate) use self::shared::SharedMedium;
pub use self::spatial::AirPpdu;
pub(crate) use self::spatial::SpatialMedium;
use crate::packet::NodeId;
use crate::Nanos;
use spatial::Departure;

/// The medium of a cell: one collision domain, or every node's own view of it.
#[derive(Clone, Debug)]
pub(crate) enum Medium {
    /// One collision domain: every node hears every PPDU, so an exchange is laid out
    /// whole when it starts (the cell has no space).
    Shared(SharedMedium),
    /// Every node's own view, PPDU by PPDU (the cell has space). Boxed: it is large and
    /// its variant is chosen once.
    Spatial(Box<SpatialMedium>),
}

impl Medium {
    /// Whether the cell has space (each node its own view of the medium).
    #[inline]
    pub(crate) fn is_spatial(&self) -> bool {
        matches!(self, Medium::Spatial(_))
    }

    /// Whether node `n`'s view of the medium is busy: in one collision domain, while an
    /// exchange is on the air (from the access that starts it to the end of its busy
    /// period); with space, its CCA, or it transmits, or it holds an exchange
    /// ([`SpatialMedium::view_busy`]).
    #[inline]
    pub(crate) fn view_busy(&self, n: usize) -> bool {
        match self {
            Medium::Shared(sh) => sh.busy,
            Medium::Spatial(m) => m.view_busy(n),
        }
    }

    /// Whether node `n` senses the medium busy at `now`, for the backoff rule of a
    /// frame queued for an idle EDCA function (802.11-2016 10.22.2.2 a; the rule for
    /// both media is stated at [`Air::senses_busy`](crate::air::Air::senses_busy)).
    #[inline]
    pub(crate) fn senses_busy(&self, n: usize, now: Nanos, sifs: Nanos) -> bool {
        match self {
            Medium::Shared(sh) => sh.busy && !sh.exch.idle_for(NodeId(n as u16), now, sifs),
            Medium::Spatial(m) => m.senses_busy(n, now),
        }
    }

    /// Whether node `n` is sending or holds an exchange (its frames are in the air).
    pub(crate) fn on_air(&self, n: usize) -> bool {
        match self {
            Medium::Shared(sh) => sh.busy && sh.exch.txs.iter().any(|x| x.node.index() == n),
            Medium::Spatial(m) => m.nodes[n].sending.is_some() || m.nodes[n].exchange.is_some(),
        }
    }

    /// MPDUs in the air: sent in an exchange on the air and not yet taken by their
    /// receiver.
    pub(crate) fn packets_in_air(&self) -> u64 {
        match self {
            Medium::Shared(sh) => sh.packets_in_air(),
            Medium::Spatial(m) => m.packets_in_air(),
        }
    }

    /// Node `n` holds an exchange: from the access that started it to its end (its
    /// response, or the timeout of one that never came).
    pub(crate) fn holds_exchange(&self, n: usize) -> bool {
        match self {
            Medium::Shared(sh) => sh.busy && sh.exch.txs.iter().any(|x| x.node.index() == n),
            Medium::Spatial(m) => m.nodes[n].exchange.is_some(),
        }
    }

    /// Node `n`'s radio leaves: with space its receiver lets go of what it was locked
    /// on. One collision domain has no receiver state.
    pub(crate) fn radio_gone(&mut self, n: usize, t: Nanos) {
        if let Medium::Spatial(m) = self {
            let nm = &mut m.nodes[n];
            if let Some(g) = nm.locked.take() {
                nm.lock.close(t);
                nm.left_during = Some(Departure { ppdu: g, at: t });
            }
        }
    }

    /// The airtime charged to every transmission so far, given the cell's busy time
    /// `busy_ns`: in one collision domain all of it (a collision's busy period is split
    /// among its transmitters, `air/charge.rs`); with space what the ended exchanges were charged
    /// ([`SpatialMedium::charged_ns`]), time several shared being split among them.
    #[inline]
    pub(crate) fn airtime_total_ns(&self, busy_ns: u64) -> u64 {
        match self {
            Medium::Shared(_) => busy_ns,
            Medium::Spatial(m) => m.charged_ns,
        }
    }

    /// The cell shares its air with other cells: keep the PPDUs it starts for
    /// [`Medium::poll_air`]. Nothing in one collision domain (it has no air to share).
    pub(crate) fn share_air(&mut self) {
        if let Medium::Spatial(m) = self {
            m.share_air();
        }
    }

    /// The next PPDU the cell started on an air it shares; always `None` in one
    /// collision domain.
    pub(crate) fn poll_air(&mut self) -> Option<AirPpdu> {
        match self {
            Medium::Shared(_) => None,
            Medium::Spatial(m) => m.poll_air(),
        }
    }

    /// The one-collision-domain engine's own state. Only that engine
    /// (`air/contention.rs`, `air/exchange.rs`, stepped by the cell's access, delivery
    /// and exchange-end timers) asks, and it runs only on this variant; with space the
    /// medium's own timer steps the per-node engine instead.
    #[inline]
    pub(crate) fn shared(&self) -> &SharedMedium {
        match self {
            Medium::Shared(sh) => sh,
            Medium::Spatial(_) => unreachable!("the one-collision-domain engine with space"),
        }
    }

    /// [`Medium::shared`], to change.
    #[inline]
    pub(crate) fn shared_mut(&mut self) -> &mut SharedMedium {
        match self {
            Medium::Shared(sh) => sh,
            Medium::Spatial(_) => unreachable!("the one-collision-domain engine with space"),
        }
    }

    /// The per-node engine's own state. Only that engine (`spatial.rs`, stepped by the
    /// cell's medium timer) asks, and it runs only on this variant.
    #[inline]
    pub(crate) fn spatial(&self) -> &SpatialMedium {
        match self {
            Medium::Spatial(m) => m,
            Medium::Shared(_) => unreachable!("the per-node engine without space"),
        }
    }

    /// [`Medium::spatial`], to change.
    #[inline]
    pub(crate) fn spatial_mut(&mut self) -> &mut SpatialMedium {
        match self {
            Medium::Spatial(m) => m,
            Medium::Shared(_) => unreachable!("the per-node engine without space"),
        }
    }
}
