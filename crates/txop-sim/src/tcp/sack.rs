//! The sender's retransmission queue and SACK scoreboard (RFC 6675; Linux's
//! `tcp_sacktag_write_queue`, `tcp_clean_rtx_queue`, `tcp_mark_head_lost`,
//! `tcp_enter_loss` in `net/ipv4/tcp_input.c`).
//!
//! One entry per segment sent and not yet cumulatively acknowledged, in sequence
//! order, so its size is bounded by the window. Each carries Linux's tag bits:
//! SACKed, LOST, RETRANS (a retransmission of it is in flight). The counters are
//! Linux's `sacked_out`, `lost_out`, `retrans_out`, and the pipe is
//! `tcp_packets_in_flight` = packets_out − sacked_out − lost_out + retrans_out
//! (RFC 6675's `pipe` counted in segments).
//!
//! Loss marking is RFC 6675's `IsLost`: an un-SACKed segment is lost once
//! [`DUP_THRESH`] segments above it have been SACKed (with full-sized segments this is
//! also the "more than (DupThresh − 1) × SMSS bytes" rule). A retransmission that is
//! lost again is only recovered by the RTO (no RACK).

use super::rate::TxRateInfo;
use super::DUP_THRESH;
use std::cell::Cell;
use std::collections::VecDeque;
use txop_core::Nanos;

/// One segment in the retransmission queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TxSeg {
    /// First byte.
    pub seq: u64,
    /// Payload bytes.
    pub len: u32,
    /// Time of the last (re)transmission.
    pub sent_at: Nanos,
    /// The receiver SACKed it (`TCPCB_SACKED_ACKED`).
    pub sacked: bool,
    /// Considered lost (`TCPCB_LOST`).
    pub lost: bool,
    /// A retransmission is in flight (`TCPCB_SACKED_RETRANS`).
    pub retrans: bool,
    /// Was ever retransmitted (`TCPCB_EVER_RETRANS`): its ACK timing is ambiguous.
    pub ever_retrans: bool,
    /// Delivery state at its last (re)transmission, for rate samples (`tcp_rate.c`).
    pub rate: TxRateInfo,
}

impl TxSeg {
    /// One past the last byte.
    pub fn end(&self) -> u64 {
        self.seq + self.len as u64
    }
}

/// What a cumulative ACK removed from the queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CumAck {
    /// Segments removed.
    pub segments: u32,
    /// Of those, segments not SACKed before (newly delivered).
    pub newly_delivered: u32,
    /// Payload bytes removed.
    pub bytes: u64,
    /// Send time of the newest removed segment that was neither retransmitted nor
    /// SACKed (Linux's `last_ackt`), unless retransmitted data was acknowledged too.
    pub rtt_sent_at: Option<Nanos>,
}

/// The scoreboard.
#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    segs: VecDeque<TxSeg>,
    sacked_out: u32,
    lost_out: u32,
    retrans_out: u32,
    /// Lost, not SACKed, not being retransmitted: what to retransmit next.
    lost_pending: u32,
    /// Every un-SACKed segment below this was already checked by `IsLost`.
    lost_scan_upto: u64,
    /// Highest sequence number of a segment ever SACKed: every segment above it is
    /// un-SACKed, so `IsLost`'s scan from the top can start there.
    highest_sacked: u64,
    /// The previous ACK's SACK blocks: every segment inside one of them is SACKed
    /// (SACKed segments stay so until they leave, and segments sent later lie above
    /// any block), so a block that repeats or extends one only needs its new part
    /// walked (Linux's `recv_sack_cache`).
    sack_cache: [(u64, u64); 4],
    sack_cache_len: usize,
    /// No segment below this waits for retransmission (Linux's
    /// `retransmit_skb_hint`), so finding the next one is amortised O(1).
    retransmit_hint: Cell<u64>,
}

impl Scoreboard {
    /// Segments outstanding (`packets_out`).
    pub fn packets_out(&self) -> u32 {
        self.segs.len() as u32
    }

    /// Nothing outstanding.
    pub fn is_empty(&self) -> bool {
        self.segs.is_empty()
    }

    /// `sacked_out`.
    pub fn sacked_out(&self) -> u32 {
        self.sacked_out
    }

    /// `lost_out`.
    pub fn lost_out(&self) -> u32 {
        self.lost_out
    }

    /// `retrans_out`.
    pub fn retrans_out(&self) -> u32 {
        self.retrans_out
    }

    /// `tcp_packets_in_flight`: RFC 6675's pipe, in segments.
    pub fn in_flight(&self) -> u32 {
        self.packets_out() - self.sacked_out - self.lost_out + self.retrans_out
    }

    /// The segment at `idx` (0 = `snd_una`).
    pub fn get(&self, idx: usize) -> &TxSeg {
        &self.segs[idx]
    }

    /// A new segment `[seq, seq + len)` was sent at `now` (it must follow the last).
    pub fn push(&mut self, seq: u64, len: u32, now: Nanos) {
        debug_assert!(self.segs.back().is_none_or(|s| s.end() == seq));
        self.segs.push_back(TxSeg {
            seq,
            len,
            sent_at: now,
            sacked: false,
            lost: false,
            retrans: false,
            ever_retrans: false,
            rate: TxRateInfo::default(),
        });
    }

    /// Record the delivery state of segment `idx`'s (re)transmission
    /// (`tcp_rate_skb_sent`).
    pub fn set_tx_rate(&mut self, idx: usize, rate: TxRateInfo) {
        self.segs[idx].rate = rate;
    }

    /// Remove the segments a cumulative ACK of `ack` covers (`tcp_clean_rtx_queue`).
    #[cfg(test)]
    pub fn ack(&mut self, ack: u64) -> CumAck {
        self.ack_with(ack, |_| {})
    }

    /// [`Scoreboard::ack`], calling `delivered` with each segment it newly delivers
    /// (not SACKed before), as `tcp_clean_rtx_queue` calls `tcp_rate_skb_delivered`.
    pub fn ack_with(&mut self, ack: u64, mut delivered: impl FnMut(&TxSeg)) -> CumAck {
        let mut r = CumAck::default();
        let mut retrans_acked = false;
        // Each segment is read in place and then removed (not copied out first: a
        // `TxSeg` is eight words).
        while let Some(s) = self.segs.front() {
            if s.end() > ack {
                break;
            }
            r.segments += 1;
            r.bytes += s.len as u64;
            if s.sacked {
                self.sacked_out -= 1;
            } else {
                r.newly_delivered += 1;
                delivered(s);
                if s.lost {
                    self.lost_out -= 1;
                    if !s.retrans {
                        self.lost_pending -= 1;
                    }
                }
                if s.retrans {
                    self.retrans_out -= 1;
                }
                if s.ever_retrans {
                    retrans_acked = true;
                } else {
                    r.rtt_sent_at = Some(s.sent_at);
                }
            }
            self.segs.pop_front();
        }
        if retrans_acked {
            r.rtt_sent_at = None;
        }
        r
    }

    /// Tag the segments the SACK blocks cover; returns the number newly SACKed.
    #[cfg(test)]
    pub fn sack(&mut self, blocks: &[(u64, u64)]) -> u32 {
        self.sack_with(blocks, |_| {})
    }

    /// [`Scoreboard::sack`], calling `delivered` with each newly SACKed segment once
    /// it is tagged (`tcp_sacktag_walk` → `tcp_rate_skb_delivered`), after which its
    /// rate snapshot is cleared so the cumulative ACK does not sample it again.
    pub fn sack_with(&mut self, blocks: &[(u64, u64)], mut delivered: impl FnMut(&TxSeg)) -> u32 {
        let mut newly = 0;
        for &(start, end) in blocks {
            let mut i = self.segs.partition_point(|s| s.seq < start);
            // Segments of this block inside a cached block are SACKed already: start
            // after them (the walk below would only pass over them).
            let cached_end = self.sack_cache[..self.sack_cache_len]
                .iter()
                .filter(|&&(cs, ce)| cs <= start && start <= ce)
                .map(|&(_, ce)| ce)
                .max();
            if let Some(ce) = cached_end {
                i = i.max(self.segs.partition_point(|s| s.end() <= ce));
            }
            while i < self.segs.len() && self.segs[i].end() <= end {
                let s = &mut self.segs[i];
                if !s.sacked {
                    s.sacked = true;
                    self.highest_sacked = self.highest_sacked.max(s.seq);
                    newly += 1;
                    self.sacked_out += 1;
                    if s.lost {
                        s.lost = false;
                        self.lost_out -= 1;
                        if !s.retrans {
                            self.lost_pending -= 1;
                        }
                    }
                    if s.retrans {
                        s.retrans = false;
                        self.retrans_out -= 1;
                    }
                    delivered(s);
                    s.rate.delivered_at = None;
                }
                i += 1;
            }
        }
        let n = blocks.len().min(self.sack_cache.len());
        self.sack_cache[..n].copy_from_slice(&blocks[..n]);
        self.sack_cache_len = n;
        newly
    }

    fn mark_lost(&mut self, idx: usize) -> bool {
        let s = &mut self.segs[idx];
        if s.sacked || s.lost {
            return false;
        }
        s.lost = true;
        self.lost_out += 1;
        self.lost_pending += 1;
        self.retransmit_hint
            .set(self.retransmit_hint.get().min(self.segs[idx].seq));
        true
    }

    /// RFC 6675 `IsLost`: mark every un-SACKed segment with at least [`DUP_THRESH`]
    /// SACKed segments above it. Returns the number newly marked.
    pub fn mark_lost_rfc6675(&mut self) -> u32 {
        if self.sacked_out < DUP_THRESH {
            return 0;
        }
        // The DupThresh-th SACKed segment from the top: everything below it is lost.
        // (Segments above the highest SACKed one are skipped: they count nothing.)
        let mut count = 0;
        let mut boundary = None;
        let top = self.segs.partition_point(|s| s.seq <= self.highest_sacked);
        for i in (0..top).rev() {
            if self.segs[i].seq < self.lost_scan_upto {
                break;
            }
            if self.segs[i].sacked {
                count += 1;
                if count == DUP_THRESH {
                    boundary = Some(i);
                    break;
                }
            }
        }
        let Some(b) = boundary else { return 0 };
        let mut newly = 0;
        for i in (0..b).rev() {
            if self.segs[i].seq < self.lost_scan_upto {
                break;
            }
            newly += self.mark_lost(i) as u32;
        }
        self.lost_scan_upto = self.segs[b].seq;
        newly
    }

    /// Mark the first segment lost (`DUP_THRESH` duplicate ACKs without SACK
    /// information). Returns whether it was newly marked.
    pub fn mark_head_lost(&mut self) -> bool {
        !self.segs.is_empty() && self.mark_lost(0)
    }

    /// `tcp_enter_loss`: forget retransmissions in flight and mark every un-SACKed
    /// segment lost (go-back-N). Returns the number newly marked.
    pub fn mark_all_lost(&mut self) -> u32 {
        let mut newly = 0;
        self.retransmit_hint.set(0);
        for i in 0..self.segs.len() {
            let s = &mut self.segs[i];
            if s.retrans {
                s.retrans = false;
                self.retrans_out -= 1;
                if s.lost {
                    self.lost_pending += 1;
                }
            }
            newly += self.mark_lost(i) as u32;
        }
        if let Some(last) = self.segs.back() {
            self.lost_scan_upto = last.end();
        }
        newly
    }

    /// The first segment to retransmit: lost, not SACKed, not already retransmitted.
    pub fn next_lost(&self) -> Option<usize> {
        if self.lost_pending == 0 {
            return None;
        }
        let from = self
            .segs
            .partition_point(|s| s.seq < self.retransmit_hint.get());
        let i = (from..self.segs.len()).find(|&i| self.segs[i].lost && !self.segs[i].retrans);
        debug_assert!(i.is_some(), "lost_pending > 0 but nothing to retransmit");
        if let Some(i) = i {
            self.retransmit_hint.set(self.segs[i].seq);
        }
        i
    }

    /// Segment `idx` was retransmitted at `now`.
    pub fn mark_retransmitted(&mut self, idx: usize, now: Nanos) {
        let s = &mut self.segs[idx];
        debug_assert!(s.lost && !s.retrans && !s.sacked);
        s.retrans = true;
        s.ever_retrans = true;
        s.sent_at = now;
        self.retrans_out += 1;
        self.lost_pending -= 1;
    }

    /// Recount everything (tests).
    #[cfg(test)]
    pub fn check(&self) {
        let sacked = self.segs.iter().filter(|s| s.sacked).count() as u32;
        let lost = self.segs.iter().filter(|s| s.lost).count() as u32;
        let retrans = self.segs.iter().filter(|s| s.retrans).count() as u32;
        let pending = self.segs.iter().filter(|s| s.lost && !s.retrans).count() as u32;
        assert_eq!(
            (sacked, lost, retrans, pending),
            (
                self.sacked_out,
                self.lost_out,
                self.retrans_out,
                self.lost_pending
            )
        );
        assert!(self
            .segs
            .iter()
            .all(|s| !(s.sacked && (s.lost || s.retrans))));
        assert!(self
            .segs
            .iter()
            .all(|s| !s.sacked || s.seq <= self.highest_sacked));
        assert!(self.segs.iter().all(|s| !s.retrans || s.lost));
        let hint = self.retransmit_hint.get();
        assert!(self
            .segs
            .iter()
            .all(|s| s.seq >= hint || !s.lost || s.retrans));
        for w in self.segs.iter().collect::<Vec<_>>().windows(2) {
            assert_eq!(w[0].end(), w[1].seq);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn board(n: u64) -> Scoreboard {
        let mut b = Scoreboard::default();
        for i in 0..n {
            b.push(i * MSS, MSS as u32, Nanos::from_ms(i));
        }
        b
    }

    fn blk(from: u64, to: u64) -> (u64, u64) {
        (from * MSS, to * MSS)
    }

    /// Walking only the new part of a block the previous ACK carried tags exactly
    /// what walking every block whole tags, through growing, repeated, shifted and
    /// new blocks (also off segment boundaries), cumulative ACKs, losses and sends.
    #[test]
    fn sack_cache_tags_the_same_segments() {
        use txop_core::rng::{RngStream, StreamKind};
        let mut rng = RngStream::new(9, StreamKind::Misc, 0);
        let (mut fast, mut slow) = (board(400), board(400));
        let mut next = 400u64;
        let mut blocks: Vec<(u64, u64)> = Vec::new();
        for _ in 0..20_000 {
            let una = fast.segs.front().map_or(next * MSS, |s| s.seq);
            let top = next * MSS;
            match rng.next_u64() % 10 {
                0 => {
                    let a = (una + rng.next_u64() % (3 * MSS)).min(top);
                    fast.ack(a);
                    slow.ack(a);
                    blocks.retain(|&(_, e)| e > a);
                }
                1 => {
                    fast.push(next * MSS, MSS as u32, Nanos::ZERO);
                    slow.push(next * MSS, MSS as u32, Nanos::ZERO);
                    next += 1;
                }
                2 => {
                    assert_eq!(fast.mark_lost_rfc6675(), slow.mark_lost_rfc6675());
                }
                _ => {
                    // Grow a block, or start one (sometimes off a boundary).
                    if blocks.is_empty() || rng.bernoulli(0.2) {
                        let s = una + rng.next_u64() % (top - una + 1);
                        let s = if rng.bernoulli(0.8) { s / MSS * MSS } else { s };
                        blocks.insert(0, (s, s));
                        blocks.truncate(3);
                    }
                    let k = (rng.next_u64() % blocks.len() as u64) as usize;
                    let (s, e) = blocks[k];
                    let e = (e + rng.next_u64() % (3 * MSS)).min(top);
                    blocks[k] = (s, e.max(s));
                    let newly = fast.sack(&blocks);
                    slow.sack_cache_len = 0;
                    assert_eq!(newly, slow.sack(&blocks));
                }
            }
            let flags = |b: &Scoreboard| b.segs.iter().map(|s| s.sacked).collect::<Vec<_>>();
            assert_eq!(flags(&fast), flags(&slow));
            fast.check();
        }
        assert!(fast.sacked_out() > 0 && fast.packets_out() > 100);
    }

    #[test]
    fn three_sacked_segments_above_a_hole_make_it_lost() {
        let mut b = board(10);
        assert_eq!(b.in_flight(), 10);
        assert_eq!(b.sack(&[blk(1, 3)]), 2);
        assert_eq!(b.mark_lost_rfc6675(), 0);
        assert_eq!(b.next_lost(), None);
        assert_eq!(b.sack(&[blk(1, 4)]), 1);
        assert_eq!(b.mark_lost_rfc6675(), 1);
        assert_eq!(b.next_lost(), Some(0));
        assert_eq!((b.sacked_out(), b.lost_out()), (3, 1));
        assert_eq!(b.in_flight(), 10 - 3 - 1);
        b.check();
        // Retransmit it: back in flight.
        b.mark_retransmitted(0, Nanos::from_ms(50));
        assert_eq!(b.in_flight(), 7);
        assert_eq!(b.next_lost(), None);
        // Two more holes at 4 and 6 with 3 SACKed above 6 (7, 8, 9): both lost.
        assert_eq!(b.sack(&[blk(7, 10), blk(5, 6)]), 4);
        assert_eq!(b.mark_lost_rfc6675(), 2);
        assert_eq!(b.next_lost(), Some(4));
        b.check();
        // The cumulative ACK of the retransmission: ACK = 4 (1..3 were SACKed).
        let r = b.ack(4 * MSS);
        assert_eq!(r.segments, 4);
        assert_eq!(r.newly_delivered, 1);
        assert_eq!(r.rtt_sent_at, None, "retransmitted data acked: no RTT");
        assert_eq!(b.packets_out(), 6);
        b.check();
        // A later ACK of clean data gives the newest send time.
        b.mark_retransmitted(0, Nanos::from_ms(60));
        b.mark_retransmitted(2, Nanos::from_ms(60));
        let r = b.ack(10 * MSS);
        assert_eq!(r.newly_delivered, 2);
        assert!(b.is_empty());
        b.check();
    }

    #[test]
    fn rto_marks_everything_unsacked_and_clears_retransmissions() {
        let mut b = board(6);
        b.sack(&[blk(2, 5)]);
        assert_eq!(b.mark_lost_rfc6675(), 2);
        b.mark_retransmitted(0, Nanos::from_ms(10));
        assert_eq!(b.mark_all_lost(), 1); // segment 5
        assert_eq!(b.retrans_out(), 0);
        assert_eq!(b.lost_out(), 3);
        assert_eq!(b.in_flight(), 0);
        assert_eq!(b.next_lost(), Some(0));
        b.check();
        let r = b.ack(MSS);
        assert_eq!(r.newly_delivered, 1);
        b.check();
    }

    #[test]
    fn clean_ack_reports_newest_send_time_and_dupack_marks_head() {
        let mut b = board(4);
        let r = b.ack(2 * MSS);
        assert_eq!(r.rtt_sent_at, Some(Nanos::from_ms(1)));
        assert_eq!(r.bytes, 2 * MSS);
        assert!(b.mark_head_lost());
        assert!(!b.mark_head_lost());
        assert_eq!(b.next_lost(), Some(0));
        b.check();
    }
}
