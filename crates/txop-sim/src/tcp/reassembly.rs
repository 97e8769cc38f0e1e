//! The receiver's out-of-order queue as byte ranges, and the SACK blocks it reports
//! (RFC 2018; Linux `tcp_data_queue_ofo`, `tcp_sack_new_ofo_skb`, `tcp_sack_remove`).
//!
//! Only ranges are kept (the payload is not modelled), so memory is bounded by the
//! number of holes, itself bounded by the receive window.

/// SACK blocks remembered for reporting (`TCP_NUM_SACKS`).
const TCP_NUM_SACKS: usize = 4;

use super::segment::MAX_SACK_BLOCKS;

/// Data received above `rcv_nxt`.
#[derive(Clone, Debug, Default)]
pub struct OooQueue {
    /// Disjoint, non-adjacent `[start, end)` ranges in order.
    ranges: Vec<(u64, u64)>,
    /// Blocks in order of last change, most recent first (each is one of `ranges`).
    recent: Vec<(u64, u64)>,
}

impl OooQueue {
    /// Nothing out of order.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Number of disjoint ranges (holes above `rcv_nxt`).
    pub fn ranges(&self) -> usize {
        self.ranges.len()
    }

    /// Bytes held above `rcv_nxt` (they take receive-buffer memory).
    pub fn bytes(&self) -> u64 {
        self.ranges.iter().map(|r| r.1 - r.0).sum()
    }

    /// Add `[start, end)` (above `rcv_nxt`); its block becomes the most recent one.
    /// Returns whether any byte was new.
    pub fn insert(&mut self, start: u64, end: u64) -> bool {
        debug_assert!(start < end);
        let i = self.ranges.partition_point(|r| r.1 < start);
        let (mut s, mut e) = (start, end);
        let mut j = i;
        let mut covered = false;
        while j < self.ranges.len() && self.ranges[j].0 <= e {
            let r = self.ranges[j];
            covered |= r.0 <= start && end <= r.1;
            s = s.min(r.0);
            e = e.max(r.1);
            j += 1;
        }
        self.ranges.splice(i..j, [(s, e)]);
        self.recent.retain(|r| r.1 < s || r.0 > e);
        self.recent.insert(0, (s, e));
        self.recent.truncate(TCP_NUM_SACKS);
        !covered
    }

    /// `rcv_nxt` reached `rcv_nxt`: absorb the ranges it now touches and return the new
    /// `rcv_nxt`.
    pub fn advance(&mut self, rcv_nxt: u64) -> u64 {
        let mut n = rcv_nxt;
        let mut k = 0;
        while k < self.ranges.len() && self.ranges[k].0 <= n {
            n = n.max(self.ranges[k].1);
            k += 1;
        }
        self.ranges.drain(..k);
        self.recent.retain(|r| r.0 > n);
        n
    }

    /// Up to 3 SACK blocks, most recently changed first (RFC 2018 §4).
    pub fn sack_blocks(&self) -> ([(u64, u64); MAX_SACK_BLOCKS], u8) {
        let mut out = [(0, 0); MAX_SACK_BLOCKS];
        let n = self.recent.len().min(MAX_SACK_BLOCKS);
        out[..n].copy_from_slice(&self.recent[..n]);
        (out, n as u8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_merge_and_most_recent_comes_first() {
        let mut q = OooQueue::default();
        assert!(q.insert(20, 30));
        assert!(q.insert(40, 50));
        assert!(q.insert(60, 70));
        let (b, n) = q.sack_blocks();
        assert_eq!(&b[..n as usize], &[(60, 70), (40, 50), (20, 30)]);
        // Extending the oldest block moves it to the front.
        assert!(q.insert(30, 35));
        let (b, n) = q.sack_blocks();
        assert_eq!(&b[..n as usize], &[(20, 35), (60, 70), (40, 50)]);
        // Filling between two blocks merges them.
        assert!(q.insert(35, 40));
        let (b, n) = q.sack_blocks();
        assert_eq!(&b[..n as usize], &[(20, 50), (60, 70)]);
        // A duplicate is not new but refreshes its block.
        assert!(!q.insert(62, 64));
        assert_eq!(q.sack_blocks().0[0], (60, 70));
        // rcv_nxt reaches 20: everything up to 50 is in order.
        assert_eq!(q.advance(20), 50);
        let (b, n) = q.sack_blocks();
        assert_eq!(&b[..n as usize], &[(60, 70)]);
        assert_eq!(q.advance(55), 55);
        assert_eq!(q.advance(60), 70);
        assert!(q.is_empty());
        assert_eq!(q.sack_blocks().1, 0);
    }

    #[test]
    fn at_most_three_blocks_are_reported() {
        let mut q = OooQueue::default();
        for i in 0..6u64 {
            q.insert(100 * i + 10, 100 * i + 20);
        }
        let (b, n) = q.sack_blocks();
        assert_eq!(n, 3);
        assert_eq!(b[0], (510, 520));
        assert_eq!(q.ranges(), 6);
    }
}
