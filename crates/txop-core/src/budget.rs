//! The delay budget (issue 27, item 1): where each packet's one-way delay went, stage
//! by stage, from the application handing it over to the application receiving it.
//!
//! The cell stamps the instant a packet crosses each boundary of its transmit path; a
//! stage is the time between two consecutive stamps, so the stages sum to the delay to
//! the nanosecond by construction, and a stamp missing or out of order shows as a
//! packet that cannot be split ([`CellStamps::inside`] or [`Passes::stages`] returns `None`), which the
//! exactness test looks for. The stamps ride where the packet is: the one taken
//! before the driver in the packet itself ([`Packet::txq_at`]), those of the MAC in
//! its MPDU and the receiver's reorder buffer, and all of them out of the cell in
//! [`Output::Delivered`](crate::Output::Delivered).

use crate::packet::Packet;
use crate::Nanos;

/// When a delivered packet crossed each boundary of the cell, after it entered it
/// ([`Packet::enqueued_at`]) and before it left ([`Output::Delivered`]'s `at`).
///
/// [`Output::Delivered`]: crate::Output::Delivered
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CellStamps {
    /// Left the qdisc: entered mac80211's TXQ, or the driver on a stack without TXQs
    /// (`enqueued_at` without a qdisc).
    pub txq_at: Nanos,
    /// Left the TXQ (`ieee80211_tx_dequeue`): the driver's or the firmware's.
    pub driver_at: Nanos,
    /// Its node began contending for the first PPDU that carried it: the later of
    /// `driver_at` and the end of the node's previous transmission of the same access
    /// category. Before, it waited behind its node's earlier PPDUs.
    pub access_at: Nanos,
    /// The first exchange that carried it began (its first try; the RTS, if any).
    pub first_try_at: Nanos,
    /// The exchange that delivered it began (its last try).
    pub last_try_at: Nanos,
    /// That exchange's data PPDU ended: the receiver had it, into its reorder buffer.
    pub received_at: Nanos,
}

/// What the MAC knows of an MPDU's tries when it stamps them
/// ([`CellStamps::access_at`], [`CellStamps::first_try_at`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TryStamps {
    /// See [`CellStamps::access_at`].
    pub access_at: Nanos,
    /// See [`CellStamps::first_try_at`]; [`Nanos::MAX`] before its first try.
    pub first_try_at: Nanos,
}

impl TryStamps {
    /// Not tried yet.
    pub const UNTRIED: TryStamps = TryStamps {
        access_at: Nanos::MAX,
        first_try_at: Nanos::MAX,
    };

    /// A try begins at `start`; its node has contended since `access_from`, and the
    /// packet entered the driver at `driver_at`. Only the first try sets them.
    #[inline]
    pub fn tried(&mut self, start: Nanos, access_from: Nanos, driver_at: Nanos) {
        if self.first_try_at == Nanos::MAX {
            self.access_at = driver_at.max(access_from);
            self.first_try_at = start;
        }
    }
}

impl CellStamps {
    /// The stamps of `packet` (in the driver since `packet.queued_at`), tried as
    /// `tries` says, delivered by the exchange begun at `last_try_at` whose data PPDU
    /// ended at `received_at`.
    pub fn of(packet: &Packet, tries: TryStamps, last_try_at: Nanos, received_at: Nanos) -> Self {
        CellStamps {
            txq_at: packet.txq_at(),
            driver_at: packet.queued_at,
            access_at: tries.access_at,
            first_try_at: tries.first_try_at,
            last_try_at,
            received_at,
        }
    }

    /// The times of the stages inside the cell (from [`Stage::Qdisc`] to
    /// [`Stage::Reorder`]) of a packet that entered it at `entered_at` and left at
    /// `left_at`: the time between consecutive stamps. `None` when a stamp is out of
    /// order (the pass cannot be split).
    pub fn inside(&self, entered_at: Nanos, left_at: Nanos) -> Option<[u64; INSIDE]> {
        let marks = [
            entered_at,
            self.txq_at,
            self.driver_at,
            self.access_at,
            self.first_try_at,
            self.last_try_at,
            self.received_at,
            left_at,
        ];
        // perf: once per packet delivered; the differences are taken whatever their
        // sign, and one test of the signs' union refuses a stamp out of order.
        let mut ns = [0u64; INSIDE];
        let mut signs = 0u64;
        for (i, d) in ns.iter_mut().enumerate() {
            *d = marks[i + 1].as_ns().wrapping_sub(marks[i].as_ns());
            signs |= *d;
        }
        (signs >> 63 == 0).then_some(ns)
    }
}

/// How many stages lie inside a cell: all but [`Stage::ToCell`] and
/// [`Stage::FromCell`].
pub const INSIDE: usize = Stage::COUNT - 2;

/// A packet's way through the cells it crossed so far (one, or two for a packet
/// between BSSs): what its delay budget needs once it reaches its host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Passes {
    /// When it entered the first cell.
    pub first_entered_at: Nanos,
    /// The stages inside the cells, summed over the cells crossed.
    pub inside_ns: [u64; INSIDE],
    /// Every pass could be split.
    pub split: bool,
}

impl Passes {
    /// The first cell crossed: entered at `entered_at`, left at `left_at`.
    pub fn first(entered_at: Nanos, stamps: &CellStamps, left_at: Nanos) -> Passes {
        let mut p = Passes {
            first_entered_at: entered_at,
            inside_ns: [0; INSIDE],
            split: true,
        };
        p.add(entered_at, stamps, left_at);
        p
    }

    /// Another cell crossed.
    pub fn add(&mut self, entered_at: Nanos, stamps: &CellStamps, left_at: Nanos) {
        match stamps.inside(entered_at, left_at) {
            Some(ns) => {
                for (sum, ns) in self.inside_ns.iter_mut().zip(ns) {
                    *sum += ns;
                }
            }
            None => self.split = false,
        }
    }

    /// The delay budget of the packet the application sent at `sent_at` and received
    /// at `arrived_at`: [`Stage::ToCell`] up to the first cell, the cells' stages, and
    /// [`Stage::FromCell`] for the rest (after the last cell, and between cells).
    /// The stages sum to `arrived_at − sent_at`. `None` when a pass could not be
    /// split or the times are out of order.
    pub fn stages(&self, sent_at: Nanos, arrived_at: Nanos) -> Option<Stages> {
        if !self.split {
            return None;
        }
        let to_cell = self.first_entered_at.as_ns().checked_sub(sent_at.as_ns())?;
        let inside: u64 = self.inside_ns.iter().sum();
        let from_cell = arrived_at
            .as_ns()
            .checked_sub(sent_at.as_ns())?
            .checked_sub(to_cell)?
            .checked_sub(inside)?;
        let mut ns = [0u64; Stage::COUNT];
        ns[0] = to_cell;
        ns[1..=INSIDE].copy_from_slice(&self.inside_ns);
        ns[Stage::COUNT - 1] = from_cell;
        Some(Stages { ns })
    }
}

/// A stage of a packet's one-way delay, in the order the packet goes through them
/// (docs/results.md, "The delay budget").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// From the application to the cell: the sender's wired hop (the server) or host
    /// bus (a station); for a packet from another BSS, its way through that one too.
    ToCell,
    /// The qdisc above mac80211 (pfifo_fast, fq_codel, a FIFO); 0 with `noqueue`.
    Qdisc,
    /// mac80211's TXQ: fq + CoDel, waiting for the scheduler and AQL.
    Txq,
    /// The driver's or the firmware's queue: behind its node's earlier PPDUs.
    Driver,
    /// Medium access for the first PPDU that carried it: AIFS and backoff, others'
    /// transmissions and NAV, off-channel and doze gaps, its node's other ACs.
    Access,
    /// Its earlier tries: from the first exchange that carried it to the one that
    /// delivered it (their airtime and the access between them).
    Retries,
    /// The exchange that delivered it, to the end of its data PPDU (protection
    /// included).
    Air,
    /// The receiver's reorder buffer: a block-ack hole ahead of it.
    Reorder,
    /// From the cell to the application: the receiver's host bus (a station) or wired
    /// hop (the server).
    FromCell,
}

impl Stage {
    /// How many stages there are.
    pub const COUNT: usize = 9;
    /// Every stage, in the packet's order.
    pub const ALL: [Stage; Stage::COUNT] = [
        Stage::ToCell,
        Stage::Qdisc,
        Stage::Txq,
        Stage::Driver,
        Stage::Access,
        Stage::Retries,
        Stage::Air,
        Stage::Reorder,
        Stage::FromCell,
    ];

    /// The stage's name in results.
    pub fn name(self) -> &'static str {
        match self {
            Stage::ToCell => "to_cell",
            Stage::Qdisc => "qdisc",
            Stage::Txq => "txq",
            Stage::Driver => "driver",
            Stage::Access => "access",
            Stage::Retries => "retries",
            Stage::Air => "air",
            Stage::Reorder => "reorder",
            Stage::FromCell => "from_cell",
        }
    }
}

/// One packet's delay split by [`Stage`]: nanoseconds per stage, in the order of
/// [`Stage::ALL`]. The stages sum to the delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stages {
    /// Nanoseconds per stage.
    pub ns: [u64; Stage::COUNT],
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::NodeId;

    #[test]
    fn the_qdisc_stamp_survives_48_bits_past_entry() {
        let mut p = Packet::new(1, NodeId(0), NodeId(1), 100);
        // Entered just below a 2⁴⁸ boundary, left the qdisc just above it.
        p.enqueued_at = Nanos((1 << 48) - 10);
        p.set_txq_at(Nanos((1 << 48) + 5));
        assert_eq!(p.txq_at(), Nanos((1 << 48) + 5));
        p.enqueued_at = Nanos(3 << 48);
        p.set_txq_at(Nanos(3 << 48));
        assert_eq!(p.txq_at(), Nanos(3 << 48));
    }

    fn stamps(t0: u64) -> CellStamps {
        CellStamps {
            txq_at: Nanos(t0 + 10),
            driver_at: Nanos(t0 + 40),
            access_at: Nanos(t0 + 50),
            first_try_at: Nanos(t0 + 90),
            last_try_at: Nanos(t0 + 290),
            received_at: Nanos(t0 + 390),
        }
    }

    #[test]
    fn stages_telescope_and_refuse_a_stamp_out_of_order() {
        let p = Passes::first(Nanos(10), &stamps(10), Nanos(450));
        let st = p.stages(Nanos(0), Nanos(1000)).unwrap();
        assert_eq!(st.ns, [10, 10, 30, 10, 40, 200, 100, 50, 550]);
        assert_eq!(st.ns.iter().sum::<u64>(), 1000);
        // Arrived before it left the cell.
        assert_eq!(p.stages(Nanos(0), Nanos(440)), None);
        let late = CellStamps {
            access_at: Nanos(130),
            ..stamps(10)
        };
        let p = Passes::first(Nanos(10), &late, Nanos(450));
        assert_eq!(p.stages(Nanos(0), Nanos(1000)), None);
    }

    #[test]
    fn two_cells_add_their_stages_and_the_hop_between_is_from_cell() {
        let mut p = Passes::first(Nanos(10), &stamps(10), Nanos(450));
        // Through a wire for 100 ns into the second cell.
        p.add(Nanos(550), &stamps(550), Nanos(990));
        let st = p.stages(Nanos(0), Nanos(1500)).unwrap();
        assert_eq!(st.ns, [10, 20, 60, 20, 80, 400, 200, 100, 610]);
        assert_eq!(st.ns.iter().sum::<u64>(), 1500);
    }
}
