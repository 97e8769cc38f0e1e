//! The airtime an exchange is charged, on both media: the time its own PPDUs held the
//! air, where several exchanges held it at once each piece of that time split equally
//! among them ([`split_share`]). Summed over every exchange, the charges are the
//! medium's busy time, to the nanosecond.
//!
//! What a station is charged is its own transmissions' time, as the kernel's drivers
//! report airtime: each station's own frames (ath9k's `ath_tx_count_airtime`, mt76's
//! per-station hardware counters), never another station's. In one collision domain
//! the exchanges of a collision start within aCCATime of each other and each holds the
//! air to the end of its own first PPDU (an RTS, or the data); with space, exchanges
//! overlap however the nodes hear each other. One collision domain used to split a
//! collision's whole busy period equally, so a station whose short frame collided with
//! a long one was charged half of the long one.

use crate::Nanos;

/// The time one exchange held the air: from its first PPDU's start (within a TXOP, the
/// previous exchange's end) to its last PPDU's end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Span {
    pub(crate) node: usize,
    pub(crate) from: Nanos,
    pub(crate) to: Nanos,
}

/// The part of `from..to`, the span of node `holder`'s exchange, charged to it when
/// `others` (any spans; those not overlapping it count for nothing, nor do the
/// holder's own, so a collision's whole list may be passed) held the air too:
/// each piece of time shared by k exchanges is split equally among them, the
/// remainder going to the lowest node. Summed over every exchange that took part, the
/// charges are the measure of the union of their spans, to the nanosecond.
pub(crate) fn split_share(holder: usize, from: Nanos, to: Nanos, others: &[Span]) -> u64 {
    // (The holder's own spans never overlap this one: its exchanges follow each other.)
    let overlapping = || {
        others
            .iter()
            .filter(|o| o.node != holder && o.from < to && o.to > from)
    };
    let mut iter = overlapping();
    let Some(first) = iter.next() else {
        // The common case: the exchange had the air to itself.
        return (to - from).as_ns();
    };
    if iter.next().is_none() {
        // perf: one other exchange (most collisions), without the general pieces.
        return pair_share(holder, from, to, first);
    }
    let mut cuts: Vec<Nanos> = overlapping()
        .flat_map(|o| [o.from, o.to])
        .filter(|&c| c > from && c < to)
        .chain([from, to])
        .collect();
    cuts.sort_unstable();
    cuts.dedup();
    let mut share = 0;
    for piece in cuts.windows(2) {
        let (a, b) = (piece[0], piece[1]);
        let (k, lowest) = overlapping()
            .filter(|o| o.from <= a && o.to >= b)
            .fold((1u64, holder), |(k, low), o| (k + 1, low.min(o.node)));
        let len = (b - a).as_ns();
        share += len / k + if lowest == holder { len % k } else { 0 };
    }
    share
}

/// [`split_share`] when exactly one other exchange, `other`, overlaps: the time they
/// shared is halved (the odd nanosecond to the lower node), the rest is the holder's.
fn pair_share(holder: usize, from: Nanos, to: Nanos, other: &Span) -> u64 {
    let shared = (to.min(other.to) - from.max(other.from)).as_ns();
    let odd = if holder < other.node { shared % 2 } else { 0 };
    (to - from).as_ns() - shared + shared / 2 + odd
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(node: usize, from_ns: u64, to_ns: u64) -> Span {
        Span {
            node,
            from: Nanos(from_ns),
            to: Nanos(to_ns),
        }
    }

    /// Each exchange's charge, computed as the medium does: against all the others.
    fn charges(spans: &[Span]) -> Vec<u64> {
        spans
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let others: Vec<Span> = spans
                    .iter()
                    .enumerate()
                    .filter(|&(j, _)| j != i)
                    .map(|(_, o)| *o)
                    .collect();
                split_share(s.node, s.from, s.to, &others)
            })
            .collect()
    }

    #[test]
    fn an_exchange_alone_is_charged_its_span() {
        assert_eq!(charges(&[span(1, 100, 1_100)]), vec![1_000]);
        // Spans that only touch it (a TXOP's next exchange) take nothing.
        assert_eq!(
            charges(&[span(0, 0, 100), span(0, 100, 400), span(2, 400, 500)]),
            vec![100, 300, 100]
        );
    }

    #[test]
    fn overlapping_time_is_split_equally() {
        // The AP's 10 µs exchange and its station's 3 µs one inside it: the 3 µs are
        // halved, the AP has the other 7 to itself.
        assert_eq!(
            charges(&[span(0, 0, 10_000), span(1, 2_000, 5_000)]),
            vec![8_500, 1_500]
        );
        // Three at once for 3 ns (1 each), two for 4 ns (2 each), one alone for 2 ns.
        assert_eq!(
            charges(&[span(0, 0, 7), span(1, 0, 9), span(2, 4, 7)]),
            vec![4 / 2 + 3 / 3, 4 / 2 + 3 / 3 + 2, 3 / 3]
        );
    }

    /// One collision domain passes a collision's whole list, the holder's own span in
    /// it: the same charges as against the others alone.
    #[test]
    fn the_holders_own_span_counts_for_nothing() {
        let spans = [span(0, 0, 10_000), span(1, 0, 3_000), span(2, 0, 52)];
        let whole: Vec<u64> = spans
            .iter()
            .map(|s| split_share(s.node, s.from, s.to, &spans))
            .collect();
        assert_eq!(whole, charges(&spans));
        assert_eq!(whole.iter().sum::<u64>(), 10_000);
    }

    /// The shortcut for two overlapping exchanges gives what the general pieces give,
    /// over every way two spans can overlap (odd lengths, either node lower).
    #[test]
    fn a_pair_is_charged_as_the_general_rule_charges_it() {
        let general = |holder: usize, from: u64, to: u64, o: Span| {
            // The pieces of 0..10 written out: halved where both hold the air.
            let (from, to) = (Nanos(from), Nanos(to));
            let mut cuts = vec![from, to];
            for c in [o.from, o.to] {
                if c > from && c < to {
                    cuts.push(c);
                }
            }
            cuts.sort_unstable();
            cuts.dedup();
            cuts.windows(2)
                .map(|w| {
                    let len = (w[1] - w[0]).as_ns();
                    let both = o.from <= w[0] && o.to >= w[1];
                    if both {
                        len / 2 + if holder < o.node { len % 2 } else { 0 }
                    } else {
                        len
                    }
                })
                .sum::<u64>()
        };
        for (a, b) in [(0, 7), (0, 10), (3, 5), (5, 13), (0, 3), (2, 11)] {
            for (holder, other) in [(1, 2), (2, 1)] {
                let o = span(other, a, b);
                let got = split_share(holder, Nanos(0), Nanos(10), &[o]);
                assert_eq!(got, general(holder, 0, 10, o), "{holder} vs {o:?}");
            }
        }
    }

    #[test]
    fn the_charges_sum_to_the_union_of_the_spans() {
        // Pieces that do not divide leave remainders: they go to the lowest node (1).
        // 0..5 shared by nodes 3 and 1 (2 each, 1 left), 5..10 by 3, 1 and 2 (1 each,
        // 2 left), 10..30 node 2's alone, 40..41 node 4's.
        let spans = [
            span(3, 0, 10),
            span(1, 0, 10),
            span(2, 5, 30),
            span(4, 40, 41),
        ];
        let c = charges(&spans);
        assert_eq!(c.iter().sum::<u64>(), 30 + 1);
        assert_eq!(c, vec![2 + 1, (2 + 1) + (1 + 2), 1 + 20, 1]);
    }
}
