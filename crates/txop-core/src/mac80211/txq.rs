//! Which TXQ is which (reference §4.1): a node's links, the TIDs, the numbering of the
//! node's station TXQs and the sets kept in that numbering.
//!
//! A node keeps one mac80211 station (`sta_info`) per link, the peer at the other end:
//! on an AP one per associated station, on a station the AP. Each link has one TXQ per
//! data TID. Everything that keeps per-TXQ state indexes it by [`TxqId`], numbered
//! `link × 8 + TID` ([`TxqId::index`]): fq's tins ([`crate::mac80211::fq::Fq`]), the
//! scheduler's TXQ table, the driver's queues. This module is the only place that
//! knows that layout; the others construct, take apart and search TXQs through it.
//!
//! Two bitmaps live in the same numbering: [`TxqSet`], the TXQs whose tin lists a flow
//! (fq keeps it; the firmware push loop searches it), and [`LinkSet`], one bit per link
//! (AQL keeps the stations it lets transmit). [`TxqSet::first_in`] searches the first
//! masked by the second without visiting TXQs one by one.

use std::ops::Range;

/// Data TIDs per link (user priorities 0–7): each link has this many TXQs.
pub const NUM_TIDS: usize = 8;

/// One of a node's links: the index of the peer among the node's links (0-based; on
/// an AP, link `s − 1` leads to station `s`, on a station link 0 leads to the AP). Also
/// the index of the peer's `sta_info`, by which the scheduler and AQL keep per-station
/// state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LinkId(pub u16);

impl LinkId {
    /// The link as an index into per-link tables.
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// Every link of a node with `n` links, in order.
    pub fn all(n: usize) -> impl Iterator<Item = LinkId> {
        (0..n as u16).map(LinkId)
    }
}

impl From<u16> for LinkId {
    fn from(link: u16) -> LinkId {
        LinkId(link)
    }
}

impl From<LinkId> for u16 {
    fn from(link: LinkId) -> u16 {
        link.0
    }
}

/// A traffic identifier: the 802.1d user priority of a data frame, 0–7 (reference
/// §4.1; the model has no TSPEC TIDs 8–15 and keeps management frames out of the TXQs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Tid(pub u8);

impl Tid {
    /// The TID as an index into per-TID tables.
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// The data TIDs 0–7, in order.
    pub fn all() -> impl Iterator<Item = Tid> {
        (0..NUM_TIDS as u8).map(Tid)
    }
}

impl From<u8> for Tid {
    fn from(tid: u8) -> Tid {
        Tid(tid)
    }
}

impl From<Tid> for u8 {
    fn from(tid: Tid) -> u8 {
        tid.0
    }
}

/// A station TXQ of one node: the TXQ of one TID on one link, numbered
/// `link × 8 + TID` ([`TxqId::index`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TxqId(u32);

impl TxqId {
    /// The TXQ of `tid` on `link`. `tid` must be a data TID (below [`NUM_TIDS`]).
    pub const fn new(link: LinkId, tid: Tid) -> TxqId {
        debug_assert!((tid.0 as usize) < NUM_TIDS);
        TxqId(link.0 as u32 * NUM_TIDS as u32 + tid.0 as u32)
    }

    /// The TXQ numbered `index` ([`TxqId::index`]'s inverse).
    pub const fn from_index(index: usize) -> TxqId {
        TxqId(index as u32)
    }

    /// The TXQ's number, its index into per-TXQ tables.
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// The link the TXQ belongs to.
    pub const fn link(self) -> LinkId {
        LinkId((self.0 / NUM_TIDS as u32) as u16)
    }

    /// The TXQ's TID.
    pub const fn tid(self) -> Tid {
        Tid((self.0 % NUM_TIDS as u32) as u8)
    }

    /// The first TXQ of link `n`, i.e. the end of the TXQs of links `0..n`.
    pub const fn first_of_link(n: usize) -> TxqId {
        TxqId((n * NUM_TIDS) as u32)
    }
}

/// A TXQ as the scheduler knows it (reference §4.1): a station TXQ, or the vif TXQ that
/// carries multicast and station-less frames (`sta: None`, TID 0, AC BE).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TxqKey {
    /// The station (by its link), or `None` for the vif (multicast) TXQ.
    pub sta: Option<LinkId>,
    /// The TID.
    pub tid: Tid,
}

impl TxqKey {
    /// The station TXQ of `tid` on `link`.
    pub const fn station(link: LinkId, tid: Tid) -> TxqKey {
        TxqKey {
            sta: Some(link),
            tid,
        }
    }

    /// The vif (multicast / no-station) TXQ: BE, TID 0 (reference §4.1).
    pub const fn vif() -> TxqKey {
        TxqKey {
            sta: None,
            tid: Tid(0),
        }
    }

    /// The key's index into a table of every TXQ of a node: the vif TXQs by TID
    /// first, then the station TXQs by number ([`TxqId::index`]).
    pub const fn index(self) -> usize {
        match self.sta {
            Some(link) => NUM_TIDS + TxqId::new(link, self.tid).index(),
            None => self.tid.0 as usize,
        }
    }

    /// The station TXQ this is, or `None` for the vif TXQ.
    pub const fn txq(self) -> Option<TxqId> {
        match self.sta {
            Some(link) => Some(TxqId::new(link, self.tid)),
            None => None,
        }
    }
}

impl From<TxqId> for TxqKey {
    fn from(txq: TxqId) -> TxqKey {
        TxqKey::station(txq.link(), txq.tid())
    }
}

/// A set of TIDs, e.g. those of one access category.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TidSet(u8);

impl TidSet {
    /// The TIDs for which `pick` holds.
    pub fn from_fn(pick: impl Fn(Tid) -> bool) -> TidSet {
        TidSet(
            Tid::all()
                .filter(|&t| pick(t))
                .fold(0, |bits, t| bits | 1 << t.0),
        )
    }

    /// `tid` is in the set.
    pub const fn contains(self, tid: Tid) -> bool {
        self.0 >> tid.0 & 1 == 1
    }

    /// The set's bit for every TXQ of eight links: the TXQs of those TIDs in one word
    /// of a [`TxqSet`].
    const fn txq_word(self) -> u64 {
        self.0 as u64 * 0x0101_0101_0101_0101
    }
}

/// A set of links, one bit each (e.g. the stations AQL lets transmit on an AC).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinkSet {
    words: Vec<u64>,
}

impl LinkSet {
    /// An empty set with room for `n` links.
    pub fn with_links(n: usize) -> LinkSet {
        LinkSet {
            words: vec![0; n.div_ceil(64)],
        }
    }

    /// Make room for links `0..n`.
    pub fn grow(&mut self, n: usize) {
        if self.words.len() * 64 < n {
            self.words.resize(n.div_ceil(64), 0);
        }
    }

    /// Put `link` in the set (`true`) or take it out (`false`). The set must have room
    /// for it ([`LinkSet::grow`]).
    pub fn set(&mut self, link: LinkId, member: bool) {
        let bit = 1u64 << (link.0 % 64);
        let word = &mut self.words[link.index() / 64];
        if member {
            *word |= bit;
        } else {
            *word &= !bit;
        }
    }

    /// `link` is in the set.
    pub fn contains(&self, link: LinkId) -> bool {
        self.words
            .get(link.index() / 64)
            .is_some_and(|w| w >> (link.0 % 64) & 1 == 1)
    }

    /// A mask for word `w` of a [`TxqSet`]: the TXQs of the eight links
    /// `8 w..8 w + 8` that are in this set (each link's bit widened to its 8 TXQs).
    fn txq_word(&self, w: usize) -> u64 {
        let byte = self.words.get(w / 8).map_or(0, |b| b >> (w % 8 * 8)) as u8;
        spread_bits_to_bytes(byte)
    }
}

/// Bit `i` of `b` becomes byte `i` of the result (0x00 or 0xff): a link's bit widened
/// to the link's 8 TXQs.
const fn spread_bits_to_bytes(b: u8) -> u64 {
    let mut x = b as u64;
    x = (x | x << 28) & 0x0000_000f_0000_000f;
    x = (x | x << 14) & 0x0003_0003_0003_0003;
    x = (x | x << 7) & 0x0101_0101_0101_0101;
    x * 0xff
}

/// A set of TXQs, one bit each in TXQ order (e.g. those whose fq tin lists a flow).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TxqSet {
    words: Vec<u64>,
}

impl TxqSet {
    /// Make room for TXQs `0..n`.
    pub fn grow(&mut self, n: usize) {
        if self.words.len() * 64 < n {
            self.words.resize(n.div_ceil(64), 0);
        }
    }

    /// Put `txq` in the set. The set must have room for it ([`TxqSet::grow`]).
    pub fn insert(&mut self, txq: TxqId) {
        self.words[txq.index() / 64] |= 1 << (txq.0 % 64);
    }

    /// Take `txq` out of the set.
    pub fn remove(&mut self, txq: TxqId) {
        self.words[txq.index() / 64] &= !(1 << (txq.0 % 64));
    }

    /// `txq` is in the set.
    pub fn contains(&self, txq: TxqId) -> bool {
        self.words[txq.index() / 64] >> (txq.0 % 64) & 1 == 1
    }

    /// Some TXQ of one of `tids` (on any link) is in the set.
    pub fn any_of(&self, tids: TidSet) -> bool {
        let mask = tids.txq_word();
        self.words.iter().any(|&w| w & mask != 0)
    }

    /// The first TXQ in `range` that is in the set, is one of `tids` and, with
    /// `links`, belongs to a link in that set.
    // perf: inlined into the firmware push loop, where `links` is known to be there
    // or not.
    #[inline(always)]
    pub fn first_in(
        &self,
        range: Range<TxqId>,
        tids: TidSet,
        links: Option<&LinkSet>,
    ) -> Option<TxqId> {
        let end = range.end.0.min((self.words.len() * 64) as u32);
        let pattern = tids.txq_word();
        let mut t = range.start.0;
        while t < end {
            let w = (t / 64) as usize;
            let link_mask = links.map_or(u64::MAX, |l| l.txq_word(w));
            let bits = self.words[w] & pattern & link_mask & (u64::MAX << (t % 64));
            if bits != 0 {
                let found = w as u32 * 64 + bits.trailing_zeros();
                return (found < end).then_some(TxqId(found));
            }
            t = (w as u32 + 1) * 64;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn txq_numbering_round_trips() {
        for link in 0..300u16 {
            for tid in Tid::all() {
                let txq = TxqId::new(LinkId(link), tid);
                assert_eq!(txq.index(), link as usize * 8 + tid.index());
                assert_eq!((txq.link(), txq.tid()), (LinkId(link), tid));
                assert_eq!(TxqId::from_index(txq.index()), txq);
                assert_eq!(TxqKey::from(txq).txq(), Some(txq));
                assert_eq!(TxqKey::from(txq).index(), NUM_TIDS + txq.index());
            }
            assert_eq!(TxqId::first_of_link(link as usize).link(), LinkId(link));
        }
        assert_eq!(TxqKey::vif().txq(), None);
        assert_eq!(TxqKey::vif().index(), 0);
    }

    #[test]
    fn spread_bits_to_bytes_widens_each_bit() {
        for b in 0..=255u8 {
            let expect = (0..8).fold(0u64, |x, i| {
                if b >> i & 1 == 1 {
                    x | 0xff << (8 * i)
                } else {
                    x
                }
            });
            assert_eq!(spread_bits_to_bytes(b), expect, "{b:#010b}");
        }
    }

    /// `first_in` finds what a TXQ-by-TXQ scan finds, and `any_of` says whether the
    /// scan of the whole set finds anything, for random sets of 150 TXQs, TID sets,
    /// link sets and ranges (also past the set's end and empty ones).
    #[test]
    fn search_matches_a_scan() {
        use crate::rng::{RngStream, StreamKind};
        let mut rng = RngStream::new(3, StreamKind::Misc, 0);
        let n = 150;
        for _ in 0..5_000 {
            let mut set = TxqSet::default();
            set.grow(n);
            let density = rng.next_u64() % 20 + 1;
            let members: Vec<bool> = (0..n)
                .map(|_| rng.next_u64().is_multiple_of(density))
                .collect();
            for (i, &m) in members.iter().enumerate() {
                if m {
                    set.insert(TxqId::from_index(i));
                }
            }
            let tids = TidSet((rng.next_u64() & 0xff) as u8);
            let mut links = LinkSet::with_links(n / NUM_TIDS + 1);
            for l in LinkId::all(n / NUM_TIDS + 1) {
                links.set(l, rng.next_u64().is_multiple_of(2));
            }
            let links = rng.next_u64().is_multiple_of(2).then_some(&links);
            let from = (rng.next_u64() % 160) as usize;
            let end = (rng.next_u64() % 160) as usize;
            let expect = (from..end.min(n)).map(TxqId::from_index).find(|&t| {
                members[t.index()]
                    && tids.contains(t.tid())
                    && links.is_none_or(|l| l.contains(t.link()))
            });
            let range = TxqId::from_index(from)..TxqId::from_index(end);
            assert_eq!(set.first_in(range, tids, links), expect);
            let any = (0..n).any(|i| members[i] && tids.contains(TxqId::from_index(i).tid()));
            assert_eq!(set.any_of(tids), any);
            for (i, &m) in members.iter().enumerate() {
                assert_eq!(set.contains(TxqId::from_index(i)), m);
            }
        }
    }
}
