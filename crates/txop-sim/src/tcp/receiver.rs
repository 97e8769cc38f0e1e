//! The data receiver: reassembly, SACK, ECN echo and Linux's ACK policy
//! (`tcp_data_queue`, `tcp_event_data_recv`, `__tcp_ack_snd_check`,
//! `tcp_send_delayed_ack`, `__tcp_ecn_check_ce` in `net/ipv4/tcp_input.c`).
//!
//! ACK policy, with `delayed_ack` on:
//! - **immediately** for out-of-order data (with SACK blocks), duplicates, data that
//!   fills a hole (RFC 5681 §4.2), out-of-window data, the FIN (Linux may hold it
//!   in pingpong mode to piggyback on the application's reply), the first CE mark
//!   after a CWR (RFC 3168 echo change: Linux enters quick-ack for 2 ACKs), and while
//!   in quick-ack mode;
//! - **quick-ack mode** at the start of the connection and after 1 s without data
//!   (Linux's `tcp_incr_quickack`: receiver RTO, `TCP_TIMEOUT_INIT`): the next 16 ACKs
//!   (`TCP_MAX_QUICKACKS`) go out at once — simplified to "each of the first 16
//!   segments is ACKed", Linux's count being `min(rcv_wnd / (2·mss), 16)` = 16 with a
//!   large window;
//! - otherwise once more than one full segment is unacknowledged (`rcv_nxt − rcv_wup >
//!   rcv_mss`: every second full segment), or when the 40 ms delayed-ACK timer started
//!   by the first unacknowledged segment fires (`ato` = `TCP_ATO_MIN`; Linux adapts
//!   it, but it stays at 40 ms for a stream of data).
//!
//! The window each ACK advertises: `rwnd_bytes` with [`ReceiveWindow::Fixed`] (and
//! the application reads every byte at once); with [`ReceiveWindow::Linux`], Linux's
//! (the `rwnd` module), the application reading each in-order byte at once or at its
//! read rate. A slow reader is woken when it can read another segment's worth; when
//! its read opens the window at least twofold, an ACK says so at once
//! (`__tcp_cleanup_rbuf`).
//!
//! Not modelled: SACK compression of `tcp_sack_compress` (Linux may hold ACKs for
//! out-of-order data up to 1 ms), D-SACK.
//! Timestamps: `TS.Recent` is updated by segments that start at or below the last
//! acknowledged sequence (RFC 7323 §4.3), so an ACK echoes the earliest unacknowledged
//! segment's TSval.

use super::reassembly::OooQueue;
use super::rwnd::LinuxRcvWindow;
use super::segment::Segment;
use super::{ReceiveWindow, TcpConfig, TCP_DELACK_MIN, TCP_MAX_QUICKACKS, TCP_TIMEOUT_INIT};
use txop_core::Nanos;

/// Counters of a receiver.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpReceiverStats {
    /// Data segments received (including duplicates and out-of-order ones).
    pub segments_received: u64,
    /// Bytes delivered in order to the application.
    pub bytes_received: u64,
    /// Segments carrying no new byte.
    pub duplicate_segments: u64,
    /// Segments that arrived above a hole.
    pub out_of_order_segments: u64,
    /// Segments that arrived with CE set.
    pub ce_received: u64,
    /// ACKs sent.
    pub acks_sent: u64,
    /// ACKs sent because the delayed-ACK timer fired.
    pub delayed_acks: u64,
    /// The FIN arrived (in order).
    pub fin_received: bool,
}

/// The receiving end of one connection.
#[derive(Clone, Debug)]
pub struct TcpReceiver {
    cfg: TcpConfig,
    /// Next byte expected.
    rcv_nxt: u64,
    /// `rcv_nxt` in the last ACK sent (`rcv_wup`).
    rcv_wup: u64,
    ooo: OooQueue,
    /// RFC 7323 `TS.Recent`.
    ts_recent: Nanos,
    /// Echo ECE until a CWR arrives (`TCP_ECN_DEMAND_CWR`).
    demand_cwr: bool,
    /// Quick ACKs left (`icsk_ack.quick`).
    quick: u32,
    /// Last data arrival (`icsk_ack.lrcvtime`).
    lrcvtime: Option<Nanos>,
    /// An ACK must go out now (`ICSK_ACK_NOW` or the ACK-every-2-segments rule).
    ack_now: bool,
    /// Delayed-ACK timer (`ICSK_ACK_TIMER`).
    delack_at: Option<Nanos>,
    /// Linux's window and buffer ([`ReceiveWindow::Linux`]); `None`: fixed.
    rwnd: Option<Box<LinuxRcvWindow>>,
    /// Its application reads at a limited rate (wakes to read on its own).
    slow_reader: bool,
    stats: TcpReceiverStats,
}

impl TcpReceiver {
    /// A receiver expecting byte 0.
    pub fn new(cfg: TcpConfig) -> TcpReceiver {
        TcpReceiver {
            cfg,
            rcv_nxt: 0,
            rcv_wup: 0,
            ooo: OooQueue::default(),
            ts_recent: Nanos::ZERO,
            demand_cwr: false,
            quick: 0,
            lrcvtime: None,
            ack_now: false,
            delack_at: None,
            rwnd: match cfg.receive {
                ReceiveWindow::Fixed => None,
                ReceiveWindow::Linux(l) => Some(Box::new(LinuxRcvWindow::new(l, cfg.mss_bytes))),
            },
            slow_reader: matches!(cfg.receive, ReceiveWindow::Linux(l) if l.read_rate_bytes_per_s.is_some()),
            stats: TcpReceiverStats::default(),
        }
    }

    /// Linux's window state, when the receiver models it.
    pub fn linux_window(&self) -> Option<&LinuxRcvWindow> {
        self.rwnd.as_deref()
    }

    /// Bytes that take buffer memory: in order but not read (up to `rcv_nxt`), and
    /// out of order.
    fn held_bytes(rcv_nxt: u64, ooo: &OooQueue, rw: &LinuxRcvWindow) -> u64 {
        let ooo = if ooo.is_empty() { 0 } else { ooo.bytes() };
        (rcv_nxt - rw.copied_seq()) + ooo
    }

    /// What the last advertised window still allows beyond `rcv_nxt`
    /// (`tcp_receive_window`).
    fn receive_window(rcv_wup: u64, rcv_nxt: u64, rw: &LinuxRcvWindow) -> u64 {
        (rcv_wup + rw.rcv_wnd_bytes()).saturating_sub(rcv_nxt)
    }

    /// The application reads what it can at `now`; an ACK goes out if that opened
    /// the window enough (`__tcp_cleanup_rbuf`).
    // perf: inlined into on_segment, where it runs once per in-order segment (a call
    // saved and restored more registers than it does work).
    #[inline(always)]
    fn app_read(&mut self, now: Nanos) {
        let Some(rw) = self.rwnd.as_deref_mut() else {
            return;
        };
        if rw.read(now, self.rcv_nxt) > 0 && !self.ack_now {
            let cur = Self::receive_window(self.rcv_wup, self.rcv_nxt, rw);
            // perf: the test's first condition, before the free space is computed.
            if 2 * cur <= rw.window_clamp_bytes() {
                let held = Self::held_bytes(self.rcv_nxt, &self.ooo, rw);
                if rw.window_update_due(cur, held) {
                    self.ack_now = true;
                }
            }
        }
    }

    /// `tcp_incr_quickack`.
    fn incr_quickack(&mut self, n: u32) {
        self.quick = self.quick.max(n);
    }

    /// A data segment arrived at `now` (pure ACKs are ignored).
    // perf: inlined into the one caller on the path of every segment
    // (`Simulation::arrive_tcp`), which LLVM stops doing on its own once that grows.
    #[inline(always)]
    pub fn on_segment(&mut self, now: Nanos, seg: &Segment) {
        if seg.is_pure_ack() {
            return;
        }
        self.stats.segments_received += 1;
        // ECN (tcp_ecn_accept_cwr, then __tcp_ecn_check_ce).
        if self.cfg.ecn {
            if seg.cwr {
                self.demand_cwr = false;
            }
            if seg.ce {
                self.stats.ce_received += 1;
                if !self.demand_cwr {
                    self.incr_quickack(2);
                    self.ack_now = true;
                }
                self.demand_cwr = true;
            }
        }
        let (start, end) = (seg.seq, seg.end());
        let fin_in_order;
        if end <= self.rcv_nxt && seg.len > 0 {
            // Entirely old: a duplicate (tcp_send_dupack enters quick-ack mode).
            self.stats.duplicate_segments += 1;
            self.ack_now = true;
            fin_in_order = false;
        } else if start > self.rcv_nxt.saturating_add(self.window_limit()) {
            // Out of window: drop, ACK.
            self.ack_now = true;
            fin_in_order = false;
        } else if start <= self.rcv_nxt {
            // In order (possibly overlapping old data).
            if start <= self.rcv_wup {
                self.ts_recent = seg.ts_val;
            }
            self.event_data_recv(now);
            let had_ooo = !self.ooo.is_empty();
            let prev_nxt = self.rcv_nxt;
            self.rcv_nxt = self.ooo.advance(end.max(self.rcv_nxt));
            if had_ooo {
                self.ack_now = true;
            }
            if let Some(rw) = self.rwnd.as_deref_mut() {
                if rw.copied_seq() == prev_nxt {
                    rw.reader_idle_until(now);
                }
                let held = Self::held_bytes(self.rcv_nxt, &self.ooo, rw);
                rw.on_data(now, seg.len, seg.ts_ecr, self.rcv_nxt, held);
                self.app_read(now);
            }
            fin_in_order = seg.fin && self.rcv_nxt == end;
        } else {
            // Above a hole.
            self.stats.out_of_order_segments += 1;
            if !self.ooo.insert(start, end) {
                self.stats.duplicate_segments += 1;
            }
            self.ack_now = true;
            fin_in_order = false;
        }
        if fin_in_order {
            self.stats.fin_received = true;
            self.ack_now = true;
        }
        self.stats.bytes_received = self.rcv_nxt;
        // __tcp_ack_snd_check.
        if !self.cfg.delayed_ack
            || self.rcv_nxt - self.rcv_wup > self.cfg.mss_bytes as u64
            || self.quick > 0
        {
            self.ack_now = true;
        }
        if !self.ack_now && self.delack_at.is_none() {
            self.delack_at = Some(now + TCP_DELACK_MIN);
        }
    }

    /// How far beyond `rcv_nxt` a segment may start and be taken.
    fn window_limit(&self) -> u64 {
        match &self.rwnd {
            None => self.cfg.rwnd_bytes,
            Some(rw) => Self::receive_window(self.rcv_wup, self.rcv_nxt, rw),
        }
    }

    /// `tcp_event_data_recv`'s quick-ack part.
    fn event_data_recv(&mut self, now: Nanos) {
        match self.lrcvtime {
            None => self.incr_quickack(TCP_MAX_QUICKACKS),
            Some(t) if now.saturating_sub(t) > TCP_TIMEOUT_INIT => {
                self.incr_quickack(TCP_MAX_QUICKACKS)
            }
            _ => {}
        }
        self.lrcvtime = Some(now);
    }

    /// The ACK to send now, if one is due (call until `None`; at most one is due).
    pub fn poll_ack(&mut self, now: Nanos) -> Option<Segment> {
        let timer = self.delack_at.is_some_and(|t| now >= t);
        if !self.ack_now && !timer {
            return None;
        }
        if timer && !self.ack_now {
            self.stats.delayed_acks += 1;
        }
        self.ack_now = false;
        self.delack_at = None;
        self.quick = self.quick.saturating_sub(1);
        let wnd = match self.rwnd.as_deref_mut() {
            None => self.cfg.rwnd_bytes.min(u32::MAX as u64) as u32,
            Some(rw) => {
                let cur = Self::receive_window(self.rcv_wup, self.rcv_nxt, rw);
                let held = Self::held_bytes(self.rcv_nxt, &self.ooo, rw);
                rw.select_window(cur, held).min(u32::MAX as u64) as u32
            }
        };
        self.rcv_wup = self.rcv_nxt;
        self.stats.acks_sent += 1;
        let (sack, sack_len) = self.ooo.sack_blocks();
        Some(Segment {
            seq: 0,
            len: 0,
            ack: self.rcv_nxt,
            sack,
            sack_len,
            ece: self.cfg.ecn && self.demand_cwr,
            cwr: false,
            ect: false,
            ce: false,
            ts_val: now,
            ts_ecr: self.ts_recent,
            fin: false,
            wnd,
            ..Segment::default()
        })
    }

    /// The delayed-ACK deadline, if an ACK is being delayed, or when a slow reader
    /// can next read a segment's worth.
    pub fn poll_timeout(&self) -> Option<Nanos> {
        if self.ack_now {
            return None;
        }
        match self.rwnd.as_deref() {
            Some(rw) if self.slow_reader => match (self.delack_at, self.next_read(rw)) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
            _ => self.delack_at,
        }
    }

    /// When a slow reader can next read a segment's worth (or the rest), if anything
    /// is unread.
    fn next_read(&self, rw: &LinuxRcvWindow) -> Option<Nanos> {
        let unread = self.rcv_nxt - rw.copied_seq();
        (unread > 0)
            .then(|| rw.read_due(unread.min(rw.rcv_mss() as u64)))
            .flatten()
    }

    /// Time passed to `now` (the delayed-ACK timer, a slow reader's next read;
    /// [`TcpReceiver::poll_ack`] then returns the ACK if one is due).
    pub fn handle_timeout(&mut self, now: Nanos) {
        if self.delack_at.is_some_and(|t| now >= t) && !self.ack_now {
            self.stats.delayed_acks += 1;
            self.ack_now = true;
        }
        if self.slow_reader {
            self.app_read(now);
        }
    }

    /// Bytes delivered in order to the application (= `rcv_nxt`).
    pub fn bytes_received(&self) -> u64 {
        self.rcv_nxt
    }

    /// Counters.
    pub fn stats(&self) -> TcpReceiverStats {
        self.stats
    }

    /// Out-of-order ranges held (bounded by the window).
    pub fn ooo_ranges(&self) -> usize {
        self.ooo.ranges()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1448;

    fn data(i: u64, now: Nanos) -> Segment {
        Segment {
            seq: i * MSS as u64,
            len: MSS,
            ts_val: now,
            ect: true,
            ..Segment::default()
        }
    }

    fn ms(v: u64) -> Nanos {
        Nanos::from_ms(v)
    }

    #[test]
    fn quick_acks_then_every_second_segment_then_the_timer() {
        let mut r = TcpReceiver::new(TcpConfig::default());
        let mut acks = 0;
        for i in 0..16u64 {
            r.on_segment(ms(i), &data(i, ms(i)));
            let a = r.poll_ack(ms(i)).expect("quick ack");
            assert_eq!(a.ack, (i + 1) * MSS as u64);
            assert!(r.poll_ack(ms(i)).is_none());
            acks += 1;
        }
        // Now every second segment.
        for i in 16..26u64 {
            r.on_segment(ms(i), &data(i, ms(i)));
            if let Some(a) = r.poll_ack(ms(i)) {
                acks += 1;
                assert_eq!(a.ack, (i + 1) * MSS as u64);
                assert_eq!(i % 2, 1);
                // Echoes the first of the two segments (RFC 7323).
                assert_eq!(a.ts_ecr, ms(i - 1));
            } else {
                assert_eq!(r.poll_timeout(), Some(ms(i) + TCP_DELACK_MIN));
            }
        }
        assert_eq!(acks, 21);
        // An odd last segment waits for the 40 ms timer.
        r.on_segment(ms(30), &data(26, ms(30)));
        assert!(r.poll_ack(ms(30)).is_none());
        assert_eq!(r.poll_timeout(), Some(ms(70)));
        assert!(r.poll_ack(ms(69)).is_none());
        r.handle_timeout(ms(70));
        let a = r.poll_ack(ms(70)).expect("delayed ack");
        assert_eq!(a.ack, 27 * MSS as u64);
        assert_eq!(r.stats().delayed_acks, 1);
        assert_eq!(r.poll_timeout(), None);
        // After more than 1 s of silence: quick-ack again.
        r.on_segment(ms(1200), &data(27, ms(1200)));
        assert!(r.poll_ack(ms(1200)).is_some());
    }

    #[test]
    fn out_of_order_data_is_acked_at_once_with_sack_blocks() {
        let mut r = TcpReceiver::new(TcpConfig::default());
        for i in 0..20u64 {
            r.on_segment(ms(i), &data(i, ms(i)));
            r.poll_ack(ms(i));
        }
        // Segment 20 lost; 21, 22 and 24 arrive.
        let b = |from: u64, to: u64| (from * MSS as u64, to * MSS as u64);
        let expect = [vec![b(21, 22)], vec![b(21, 23)], vec![b(24, 25), b(21, 23)]];
        for (k, i) in [21u64, 22, 24].into_iter().enumerate() {
            let t = ms(30 + k as u64);
            r.on_segment(t, &data(i, t));
            let a = r.poll_ack(t).expect("dupack");
            assert_eq!(a.ack, 20 * MSS as u64);
            assert_eq!(a.ts_ecr, ms(18), "TS.Recent of the last in-order ACK");
            assert_eq!(a.sack_blocks(), &expect[k][..]);
        }
        let a = {
            let t = ms(40);
            r.on_segment(t, &data(23, t));
            r.poll_ack(t).unwrap()
        };
        assert_eq!(a.sack_blocks(), &[(21 * MSS as u64, 25 * MSS as u64)]);
        // The retransmission fills the hole: immediate ACK, echoing its timestamp.
        let t = ms(50);
        r.on_segment(t, &data(20, t));
        let a = r.poll_ack(t).expect("hole filled");
        assert_eq!(a.ack, 25 * MSS as u64);
        assert_eq!(a.sack_len, 0);
        assert_eq!(a.ts_ecr, t);
        assert_eq!(r.bytes_received(), 25 * MSS as u64);
        // A duplicate: immediate ACK, nothing new.
        r.on_segment(ms(60), &data(3, ms(60)));
        assert_eq!(r.poll_ack(ms(60)).unwrap().ack, 25 * MSS as u64);
        let s = r.stats();
        assert_eq!(s.duplicate_segments, 1);
        assert_eq!(s.out_of_order_segments, 4);
        assert_eq!(s.bytes_received, 25 * MSS as u64);
    }

    #[test]
    fn ece_is_echoed_from_the_first_ce_until_cwr() {
        let cfg = TcpConfig {
            ecn: true,
            ..TcpConfig::default()
        };
        let mut r = TcpReceiver::new(cfg);
        for i in 0..20u64 {
            r.on_segment(ms(i), &data(i, ms(i)));
            if let Some(a) = r.poll_ack(ms(i)) {
                assert!(!a.ece);
            }
        }
        // Two segments in delayed-ACK mode; the first is CE: ACK at once with ECE.
        let mut s = data(20, ms(20));
        s.ce = true;
        r.on_segment(ms(20), &s);
        assert!(r.poll_ack(ms(20)).unwrap().ece);
        // ECE stays on every ACK (no CE needed) …
        let mut ece_acks = 0;
        for i in 21..30u64 {
            r.on_segment(ms(i), &data(i, ms(i)));
            if let Some(a) = r.poll_ack(ms(i)) {
                assert!(a.ece);
                ece_acks += 1;
            }
        }
        assert!(ece_acks >= 4);
        // … until a CWR arrives.
        let mut s = data(30, ms(30));
        s.cwr = true;
        r.on_segment(ms(30), &s);
        r.on_segment(ms(31), &data(31, ms(31)));
        assert!(!r.poll_ack(ms(31)).unwrap().ece);
        assert_eq!(r.stats().ce_received, 1);
    }

    #[test]
    fn without_delayed_acks_every_segment_is_acked() {
        let cfg = TcpConfig {
            delayed_ack: false,
            ..TcpConfig::default()
        };
        let mut r = TcpReceiver::new(cfg);
        for i in 0..40u64 {
            r.on_segment(ms(i), &data(i, ms(i)));
            assert!(r.poll_ack(ms(i)).is_some());
        }
    }
}
