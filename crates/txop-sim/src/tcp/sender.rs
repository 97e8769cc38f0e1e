//! The data sender: window, loss recovery, timers and pacing of one connection
//! (`tcp_ack`, `tcp_fastretrans_alert`, `tcp_cong_control`, `tcp_cwnd_reduction`,
//! `tcp_enter_loss` in `net/ipv4/tcp_input.c`; `tcp_write_xmit`,
//! `tcp_xmit_retransmit_queue`, `tcp_cwnd_validate` in `net/ipv4/tcp_output.c`;
//! `tcp_retransmit_timer` in `net/ipv4/tcp_timer.c`).
//!
//! Congestion-avoidance states follow Linux's `icsk_ca_state` ([`CaState`]):
//!
//! - **Recovery** starts when the scoreboard marks a segment lost (RFC 6675 `IsLost`
//!   or 3 duplicate ACKs): `high_seq` = `snd_nxt`, ssthresh from the congestion
//!   control (one reduction per episode), and it ends when `snd_una ≥ high_seq`, with
//!   cwnd = ssthresh. During it, cwnd follows proportional rate reduction (RFC 6937,
//!   `tcp_cwnd_reduction`): about ssthresh/prior_cwnd segments are sent per segment
//!   delivered, so the window lands on ssthresh at the end without a pause or a burst.
//!   Lost segments go before new data.
//! - **CWR**: an ACK with ECE outside recovery reduces the window the same way (one
//!   ssthresh computation, PRR) and CWR rides on the next new segment; further ECEs
//!   are ignored until `snd_una > high_seq`, i.e. one window of data later (at most
//!   one reduction per RTT, RFC 3168 §6.1.2).
//! - **Loss** after a retransmission timeout: ssthresh from the congestion control
//!   (unless already reduced in this episode), cwnd = 1, every un-SACKed segment
//!   marked lost and retransmitted in order as slow start reopens the window; the RTO
//!   doubles on each expiry (up to 120 s) and resets on the next RTT sample.
//!
//! RTT samples come from the echoed timestamp of ACKs that advance `snd_una`
//! (RFC 7323 §4), for SRTT/RTO; CUBIC's delay (`ca_rtt`) uses the send time of the
//! newest newly acknowledged, never retransmitted segment as Linux does, falling back
//! to the timestamp.
//!
//! Every (re)transmission snapshots the delivery state for rate samples
//! (`tcp_rate.c`, see `rate`); a module with `.cong_control` (BBR) takes each ACK's
//! sample and sets cwnd and the pacing rate itself, in place of PRR and `.cong_avoid`.
//!
//! Simplifications: no F-RTO, no undo of spurious reductions, no RACK/TLP (a lost
//! retransmission or a tail loss waits for the RTO), no `tcp_cwnd_application_limited`
//! decay (slow start after idle, `tcp_cwnd_restart`, is modelled).
//!
//! The peer's window: the configured `rwnd_bytes` with [`ReceiveWindow::Fixed`]; with
//! [`ReceiveWindow::Linux`], the handshake's ([`TcpConfig::initial_rcv_window`]) and
//! then each ACK's that does not acknowledge less than an earlier one
//! (`tcp_ack_update_window`); an ACK that changes the window is no duplicate
//! (`tcp_ack`'s `FLAG_WIN_UPDATE`). A window closed with nothing in flight is probed
//! at the RTO, doubling (`tcp_probe_timer`, `tcp_xmit_probe_skb`: a segment below
//! `snd_una` that the receiver must acknowledge with its window).

use super::bbr::BbrInfo;
use super::cc::{AckedSample, Cc, ConnInfo, Window, TCP_INFINITE_SSTHRESH};
use super::pacing::Pacer;
use super::rate::{RateEstimator, RateSample};
use super::rtt::RttEstimator;
use super::sack::Scoreboard;
use super::segment::Segment;
use super::ReceiveWindow;
use super::{TcpConfig, DUP_THRESH};
use txop_core::Nanos;
use txop_results::flowstats::BbrSample;

/// Congestion-avoidance state (Linux `enum tcp_ca_state`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    /// Nothing unusual.
    #[default]
    Open,
    /// SACKs or duplicate ACKs seen, no loss detected yet.
    Disorder,
    /// Window reduction after an ECN echo.
    Cwr,
    /// Fast recovery after a detected loss.
    Recovery,
    /// After a retransmission timeout.
    Loss,
}

/// A snapshot of a sender's state and counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpSenderStats {
    /// Congestion window in segments (Linux `snd_cwnd`).
    pub cwnd_segments: u32,
    /// Congestion window in bytes (segments × MSS).
    pub cwnd_bytes: u64,
    /// Slow-start threshold in segments (`0x7fffffff` before the first reduction).
    pub ssthresh_segments: u32,
    /// Slow-start threshold in bytes (saturating).
    pub ssthresh_bytes: u64,
    /// Smoothed RTT, once measured.
    pub srtt: Option<Nanos>,
    /// RTT variation.
    pub rttvar: Nanos,
    /// Windowed minimum RTT, once measured.
    pub min_rtt: Option<Nanos>,
    /// Current retransmission timeout, backoff included.
    pub rto: Nanos,
    /// Consecutive RTO expirations without an RTT sample (the backoff exponent).
    pub backoff: u32,
    /// Congestion-avoidance state.
    pub state: CaState,
    /// In fast recovery or RTO recovery.
    pub in_recovery: bool,
    /// Segments sent and not cumulatively acknowledged (`packets_out`).
    pub packets_out: u32,
    /// Segments in the network (RFC 6675 pipe).
    pub in_flight: u32,
    /// Segments SACKed.
    pub sacked_out: u32,
    /// Segments considered lost.
    pub lost_out: u32,
    /// Retransmissions in flight.
    pub retrans_out: u32,
    /// `snd_una`.
    pub snd_una: u64,
    /// `snd_nxt`.
    pub snd_nxt: u64,
    /// Payload bytes cumulatively acknowledged.
    pub bytes_acked: u64,
    /// Payload bytes sent, retransmissions included.
    pub bytes_sent: u64,
    /// Data segments sent, retransmissions included.
    pub segments_sent: u64,
    /// Segments retransmitted.
    pub retransmits: u64,
    /// Segments newly marked lost (by SACK/dupACK loss detection or an RTO).
    pub losses_detected: u64,
    /// Fast-recovery episodes.
    pub fast_recoveries: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Window reductions caused by ECN echoes (entries into CWR).
    pub ecn_reductions: u64,
    /// ACKs received with ECE.
    pub ece_acks: u64,
    /// Pacing rate in bytes per second, when pacing.
    pub pacing_rate: Option<u64>,
    /// Delivery rate in payload bytes per second ([`TcpSender::delivery_rate`]).
    pub delivery_rate: Option<u64>,
    /// cwnd at which HyStart ended slow start (CUBIC).
    pub hystart_exit_cwnd: Option<u32>,
    /// CUBIC's W_max in segments (0 before the first congestion event).
    pub cubic_w_max: Option<u32>,
    /// BBR's model.
    pub bbr: Option<BbrInfo>,
}

/// The sending end of one connection.
#[derive(Clone, Debug)]
pub struct TcpSender {
    cfg: TcpConfig,
    mss: u32,
    snd_una: u64,
    snd_nxt: u64,
    /// End of the data the application wrote; `None` = unlimited (bulk).
    write_end: Option<u64>,
    closed: bool,
    sb: Scoreboard,
    win: Window,
    cc: Cc,
    rtt: RttEstimator,
    /// The RTT sample the last ACK gave, until the simulator takes it
    /// ([`TcpSender::take_rtt_sample`]).
    rtt_sample: Option<Nanos>,
    state: CaState,
    /// Recovery point (`high_seq`).
    high_seq: u64,
    prior_cwnd: u32,
    prr_delivered: u32,
    prr_out: u32,
    dupacks: u32,
    rto_at: Option<Nanos>,
    backoff: u32,
    /// RTOs since the last cumulative progress (`icsk_retransmits`).
    rto_retransmits: u32,
    /// Put CWR on the next new segment (`TCP_ECN_QUEUE_CWR`).
    queue_cwr: bool,
    pacer: Pacer,
    is_cwnd_limited: bool,
    max_packets_out: u32,
    cwnd_usage_seq: u64,
    /// Last data transmission (`lsndtime`).
    lsndtime: Nanos,
    /// Latest TSval from the peer (echoed on data).
    peer_ts: Nanos,
    /// Segments delivered (cumulatively ACKed or SACKed, each once).
    delivered: u64,
    /// Delivery-rate sampling (`tcp_rate.c`).
    rate: RateEstimator,
    /// The peer's window (`snd_wnd`): data may go up to `snd_una + snd_wnd`.
    snd_wnd: u64,
    /// The peer's window is read from its ACKs ([`ReceiveWindow::Linux`]).
    reads_window: bool,
    /// The zero-window probe timer (`ICSK_TIME_PROBE0`) and probes sent since the
    /// window last opened (`icsk_probes_out`).
    probe_at: Option<Nanos>,
    probes: u32,
    /// A probe is due.
    send_probe: bool,
    stats: TcpSenderStats,
}

/// What `poll_transmit` would send next.
enum Next {
    Retransmit(usize),
    NewData(u32),
}

/// Why nothing can be sent.
enum Blocked {
    /// The window is full.
    Cwnd,
    /// No data (application-limited) or the receive window is full.
    Nothing,
}

impl TcpSender {
    /// A sender that starts at `now` with `bytes_to_send` bytes (`None` = unlimited).
    pub fn new(cfg: TcpConfig, now: Nanos, bytes_to_send: Option<u64>) -> TcpSender {
        assert!(cfg.mss_bytes > 0 && cfg.initial_cwnd_segments > 0);
        let reads_window = matches!(cfg.receive, ReceiveWindow::Linux(_));
        // Linux's snd_cwnd_clamp is unlimited (~0); the fixed model clamps the window to
        // the receive window it never reads.
        let clamp = if reads_window {
            u32::MAX / 2
        } else {
            (cfg.rwnd_bytes / cfg.mss_bytes as u64).clamp(2, u32::MAX as u64 / 2) as u32
        };
        let win = Window {
            cwnd: cfg.initial_cwnd_segments.min(clamp),
            cwnd_cnt: 0,
            ssthresh: TCP_INFINITE_SSTHRESH,
            clamp,
        };
        let mut s = TcpSender {
            cfg,
            mss: cfg.mss_bytes,
            snd_una: 0,
            snd_nxt: 0,
            write_end: bytes_to_send,
            closed: false,
            sb: Scoreboard::default(),
            win,
            cc: Cc::new(&cfg, &win, now),
            rtt: RttEstimator::new(cfg.initial_rto, cfg.min_rto),
            rtt_sample: None,
            state: CaState::Open,
            high_seq: 0,
            prior_cwnd: 0,
            prr_delivered: 0,
            prr_out: 0,
            dupacks: 0,
            rto_at: None,
            backoff: 0,
            rto_retransmits: 0,
            queue_cwr: false,
            pacer: Pacer::default(),
            is_cwnd_limited: false,
            max_packets_out: 0,
            cwnd_usage_seq: 0,
            lsndtime: now,
            peer_ts: Nanos::ZERO,
            delivered: 0,
            rate: RateEstimator::default(),
            snd_wnd: cfg.initial_rcv_window().rcv_wnd_bytes,
            reads_window,
            probe_at: None,
            probes: 0,
            send_probe: false,
            stats: TcpSenderStats::default(),
        };
        s.sync_cc_pacing_rate();
        s
    }

    /// Paces: configured, or the congestion control needs it (BBR).
    fn paces(&self) -> bool {
        self.cfg.pacing || self.cc.has_cong_control()
    }

    /// Take the pacing rate the congestion control sets, if it sets one.
    fn sync_cc_pacing_rate(&mut self) {
        if let Some(rate) = self.cc.pacing_rate() {
            self.pacer.set_rate(rate);
        }
    }

    /// The connection as congestion control sees it at `now`.
    fn conn_info(&self, now: Nanos) -> ConnInfo {
        ConnInfo {
            now,
            delivered: self.delivered,
            delivered_mstamp: self.rate.delivered_mstamp(),
            lost: self.stats.losses_detected,
            in_flight: self.sb.in_flight(),
            ca_state: self.state,
            srtt: self.rtt.srtt(),
            app_limited: self.rate.is_app_limited(),
            edt: self.pacer.next_send(),
        }
    }

    /// The application writes `bytes` more (ignored for an unlimited sender); poll
    /// [`TcpSender::poll_transmit`] afterwards. After an idle period longer than the
    /// RTO the window restarts (RFC 2861 / RFC 5681 §4.1, Linux
    /// `tcp_slow_start_after_idle_check`).
    pub fn add_bytes(&mut self, now: Nanos, bytes: u64) {
        debug_assert!(!self.closed, "add_bytes after close");
        let Some(end) = self.write_end else {
            return;
        };
        // tcp_sendmsg → tcp_rate_check_app_limited: a bubble if less than a segment
        // was waiting.
        self.rate.check_app_limited(
            end.saturating_sub(self.snd_nxt) < self.mss as u64,
            self.delivered,
            self.sb.in_flight(),
            self.win.cwnd,
            self.sb.lost_out(),
            self.sb.retrans_out(),
        );
        self.write_end = Some(end + bytes);
        // tcp_slow_start_after_idle_check: not for a module with `.cong_control` (BBR).
        if self.sb.is_empty() && !self.cc.has_cong_control() {
            let idle = now.saturating_sub(self.lsndtime);
            if idle > self.current_rto() {
                self.cwnd_restart(idle);
            }
        }
    }

    /// No more data will be written: the segment carrying the last byte (sent or
    /// retransmitted after this call) carries FIN. FIN is informational here: it
    /// takes no sequence space and completion is [`TcpSender::is_done`].
    pub fn close(&mut self) {
        self.closed = true;
    }

    /// The application stops writing and closes: an unlimited (bulk) sender ends at
    /// what it has sent so far, as flent's loaders do when the test ends.
    pub fn stop_writing(&mut self) {
        self.write_end.get_or_insert(self.snd_nxt);
        self.close();
    }

    /// A finite transfer is completely acknowledged.
    pub fn is_done(&self) -> bool {
        self.write_end.is_some_and(|e| self.snd_una >= e)
    }

    /// State and counters.
    pub fn stats(&self) -> TcpSenderStats {
        let mut s = self.stats;
        s.cwnd_segments = self.win.cwnd;
        s.cwnd_bytes = self.cwnd_bytes();
        s.ssthresh_segments = self.win.ssthresh;
        s.ssthresh_bytes = (self.win.ssthresh as u64).saturating_mul(self.mss as u64);
        s.srtt = self.rtt.srtt();
        s.rttvar = self.rtt.rttvar();
        s.min_rtt = self.rtt.min_rtt();
        s.rto = self.current_rto();
        s.backoff = self.backoff;
        s.state = self.state;
        s.in_recovery = matches!(self.state, CaState::Recovery | CaState::Loss);
        s.packets_out = self.sb.packets_out();
        s.in_flight = self.sb.in_flight();
        s.sacked_out = self.sb.sacked_out();
        s.lost_out = self.sb.lost_out();
        s.retrans_out = self.sb.retrans_out();
        s.snd_una = self.snd_una;
        s.snd_nxt = self.snd_nxt;
        s.pacing_rate = self.pacing_rate();
        s.delivery_rate = self.delivery_rate();
        s.hystart_exit_cwnd = self.cc.hystart_exit_cwnd();
        s.cubic_w_max = self.cc.w_max();
        s.bbr = self.cc.bbr_info();
        s
    }

    /// Congestion window in bytes (as in [`TcpSender::stats`], without building the
    /// whole snapshot: the simulator samples it on every ACK).
    pub fn cwnd_bytes(&self) -> u64 {
        self.win.cwnd as u64 * self.mss as u64
    }

    /// The RTT sample of the last ACK that advanced the window, once: the one the
    /// RTT estimator (srtt, the RTO) takes, from the timestamp the ACK echoes (RFC
    /// 7323: the earliest segment it acknowledges, as Linux's `seq_rtt_us` is the
    /// oldest newly acknowledged segment's).
    pub fn take_rtt_sample(&mut self) -> Option<Nanos> {
        self.rtt_sample.take()
    }

    /// Segments retransmitted so far (as in [`TcpSender::stats`]).
    pub fn retransmits(&self) -> u64 {
        self.stats.retransmits
    }

    /// Retransmission timeouts so far (as in [`TcpSender::stats`]).
    pub fn timeouts(&self) -> u64 {
        self.stats.timeouts
    }

    /// Smoothed RTT, once measured (as in [`TcpSender::stats`]).
    pub fn srtt(&self) -> Option<Nanos> {
        self.rtt.srtt()
    }

    /// Pacing rate in bytes per second, when pacing (as in [`TcpSender::stats`]).
    pub fn pacing_rate(&self) -> Option<u64> {
        if self.paces() {
            self.pacer.rate()
        } else {
            None
        }
    }

    /// The delivery rate `ss -ti` shows (`tcpi_delivery_rate`, `tcp_rate.c`): the
    /// last delivery-rate sample not application-limited, or an application-limited
    /// one at least as fast, payload bytes per second; `None` before the first valid
    /// sample.
    pub fn delivery_rate(&self) -> Option<u64> {
        self.rate.delivery_rate_bytes_per_s(self.mss)
    }

    /// For a BBR sender, its mode and the modes it entered since the last call (a mode
    /// can last less than an ACK: DRAIN may end in the ACK that starts it).
    pub fn take_bbr_sample(&mut self) -> Option<BbrSample> {
        self.cc.take_bbr_sample()
    }

    /// The configuration.
    pub fn config(&self) -> &TcpConfig {
        &self.cfg
    }

    fn current_rto(&self) -> Nanos {
        self.rtt.backed_off_rto(self.backoff)
    }

    fn in_cwnd_reduction(&self) -> bool {
        matches!(self.state, CaState::Cwr | CaState::Recovery)
    }

    /// Bytes of the next new segment, or 0.
    fn new_data_len(&self) -> u32 {
        let avail = match self.write_end {
            Some(e) => e.saturating_sub(self.snd_nxt),
            None => u64::MAX,
        };
        let len = avail.min(self.mss as u64);
        // tcp_snd_wnd_test: the whole segment must fit in the receive window.
        if len == 0 || self.snd_nxt + len > self.snd_una + self.snd_wnd {
            0
        } else {
            len as u32
        }
    }

    /// What may go next, or why nothing may: the congestion window, the receiver's
    /// window, pacing, or nothing to send.
    // perf: inlined into its two callers (`poll_transmit`, `poll_timeout`): called twice
    // or more per segment sent, it is mostly its call overhead.
    #[inline]
    fn next_candidate(&self) -> Result<Next, Blocked> {
        if self.sb.in_flight() >= self.win.cwnd {
            return Err(Blocked::Cwnd);
        }
        if let Some(i) = self.sb.next_lost() {
            return Ok(Next::Retransmit(i));
        }
        match self.new_data_len() {
            0 => Err(Blocked::Nothing),
            len => Ok(Next::NewData(len)),
        }
    }

    /// `tcp_cwnd_validate`: remember whether the window was used up in this window of
    /// data (for `tcp_is_cwnd_limited`).
    fn cwnd_validate(&mut self, is_cwnd_limited: bool) {
        let packets_out = self.sb.packets_out();
        if self.snd_una >= self.cwnd_usage_seq
            || is_cwnd_limited
            || (!self.is_cwnd_limited && packets_out > self.max_packets_out)
        {
            self.is_cwnd_limited = is_cwnd_limited;
            self.max_packets_out = packets_out;
            self.cwnd_usage_seq = self.snd_nxt;
        }
    }

    /// `tcp_is_cwnd_limited`.
    fn cwnd_limited(&self) -> bool {
        if self.is_cwnd_limited {
            return true;
        }
        if self.win.in_slow_start() {
            return self.win.cwnd < 2 * self.max_packets_out;
        }
        false
    }

    /// The next segment to send at `now` (a retransmission first, else new data),
    /// within the congestion window, the receive window and the pacing rate; `None`
    /// if nothing may go now. Call until `None`.
    pub fn poll_transmit(&mut self, now: Nanos) -> Option<Segment> {
        let next = match self.next_candidate() {
            Ok(n) => n,
            Err(Blocked::Cwnd) => {
                self.cwnd_validate(true);
                return None;
            }
            // A probe is due only with nothing in flight and the window closed.
            Err(Blocked::Nothing) if self.send_probe => {
                self.send_probe = false;
                return Some(self.window_probe(now));
            }
            Err(Blocked::Nothing) => {
                self.arm_window_probe(now);
                return None;
            }
        };
        if self.paces() && !self.pacer.may_send(now) {
            return None;
        }
        let in_flight_before = self.sb.in_flight();
        let mut seg = Segment {
            ts_val: now,
            ts_ecr: self.peer_ts,
            ..Segment::default()
        };
        match next {
            Next::Retransmit(i) => {
                let s = *self.sb.get(i);
                seg.seq = s.seq;
                seg.len = s.len;
                self.sb.mark_retransmitted(i, now);
                let info = self
                    .rate
                    .on_send(now, self.sb.packets_out(), self.delivered);
                self.sb.set_tx_rate(i, info);
                self.stats.retransmits += 1;
                if i == 0 {
                    // tcp_xmit_retransmit_queue re-arms the RTO for the head.
                    self.rto_at = Some(now + self.current_rto());
                }
            }
            Next::NewData(len) => {
                seg.seq = self.snd_nxt;
                seg.len = len;
                seg.ect = self.cfg.ecn;
                if self.cfg.ecn && self.queue_cwr {
                    self.queue_cwr = false;
                    seg.cwr = true;
                }
                let first = self.sb.is_empty();
                let info = self
                    .rate
                    .on_send(now, self.sb.packets_out(), self.delivered);
                self.sb.push(self.snd_nxt, len, now);
                self.sb
                    .set_tx_rate(self.sb.packets_out() as usize - 1, info);
                self.snd_nxt += len as u64;
                if first || self.rto_at.is_none() {
                    self.rto_at = Some(now + self.current_rto());
                }
            }
        }
        seg.fin = self.closed && self.write_end == Some(seg.end());
        if in_flight_before == 0 {
            let c = self.conn_info(now);
            self.cc.on_tx_start(&mut self.win, &c, self.lsndtime);
        }
        self.lsndtime = now;
        if self.in_cwnd_reduction() {
            self.prr_out += 1;
        }
        self.pacer.on_send(now, seg.len);
        self.sync_cc_pacing_rate();
        self.stats.segments_sent += 1;
        self.stats.bytes_sent += seg.len as u64;
        let limited = self.sb.in_flight() >= self.win.cwnd;
        self.cwnd_validate(limited);
        Some(seg)
    }

    /// The next time something happens without an ACK: the retransmission timer, or
    /// the pacing release of a segment that is ready to go.
    #[inline]
    pub fn poll_timeout(&self) -> Option<Nanos> {
        let mut t = self.rto_at;
        if let Some(p) = self.probe_at {
            t = Some(t.map_or(p, |r| r.min(p)));
        }
        if self.paces() && self.next_candidate().is_ok() {
            let p = self.pacer.next_send();
            t = Some(t.map_or(p, |r| r.min(p)));
        }
        t
    }

    /// Time passed to `now`: fire the retransmission timer if due (then poll
    /// [`TcpSender::poll_transmit`]).
    pub fn handle_timeout(&mut self, now: Nanos) {
        if self.rto_at.is_some_and(|t| now >= t) {
            self.on_rto(now);
        }
        if self.probe_at.is_some_and(|t| now >= t) {
            self.probe_at = None;
            self.probes += 1;
            self.send_probe = true;
        }
    }

    /// Nothing in flight, data to send and the peer's window closed: arm the
    /// zero-window probe (`tcp_check_probe_timer`) at the RTO, doubling per probe.
    fn arm_window_probe(&mut self, now: Nanos) {
        let closed = self.reads_window
            && self.sb.is_empty()
            && self.snd_una > 0
            && self.write_end.is_none_or(|e| e > self.snd_nxt)
            && !self.send_probe;
        if closed && self.probe_at.is_none() {
            let rto = Nanos(self.current_rto().as_ns() << self.probes.min(10));
            self.probe_at = Some(now + rto.min(super::TCP_RTO_MAX));
        } else if !closed {
            self.probe_at = None;
        }
    }

    /// `tcp_xmit_probe_skb`: the last acknowledged byte again, which the receiver
    /// takes as a duplicate and answers with an ACK carrying its window.
    fn window_probe(&self, now: Nanos) -> Segment {
        Segment {
            seq: self.snd_una - 1,
            len: 1,
            ts_val: now,
            ts_ecr: self.peer_ts,
            ..Segment::default()
        }
    }

    /// `tcp_retransmit_timer` + `tcp_enter_loss`.
    fn on_rto(&mut self, now: Nanos) {
        if self.sb.is_empty() {
            self.rto_at = None;
            return;
        }
        self.stats.timeouts += 1;
        let new_episode = matches!(self.state, CaState::Open | CaState::Disorder)
            || self.snd_una >= self.high_seq
            || (self.state == CaState::Loss && self.rto_retransmits == 0);
        if new_episode {
            self.win.ssthresh = self.cc.ssthresh(&self.win);
        }
        self.win.cwnd_cnt = 0;
        self.stats.losses_detected += self.sb.mark_all_lost() as u64;
        self.win.cwnd = self.sb.in_flight() + 1;
        self.state = CaState::Loss;
        self.high_seq = self.snd_nxt;
        let c = self.conn_info(now);
        self.cc.on_enter_loss(&c, self.snd_nxt);
        if self.cfg.ecn {
            self.queue_cwr = true;
        }
        self.dupacks = 0;
        self.backoff += 1;
        self.rto_retransmits += 1;
        self.rto_at = Some(now + self.current_rto());
        self.pacer.release_now(now);
    }

    /// `tcp_cwnd_restart`: after an idle period, halve the window per RTO idle, down to
    /// the initial window.
    fn cwnd_restart(&mut self, idle: Nanos) {
        let restart = self.cfg.initial_cwnd_segments.min(self.win.cwnd);
        if !self.in_cwnd_reduction() {
            let c = self.win.cwnd;
            self.win.ssthresh = self.win.ssthresh.max((c >> 1) + (c >> 2));
        }
        let rto = self.current_rto();
        let mut cwnd = self.win.cwnd;
        let mut left = idle;
        while left > rto && cwnd > restart {
            left -= rto;
            cwnd >>= 1;
        }
        self.win.cwnd = cwnd.max(restart);
    }

    /// `tcp_init_cwnd_reduction`: one congestion response (loss or ECE).
    fn init_cwnd_reduction(&mut self) {
        self.high_seq = self.snd_nxt;
        self.win.cwnd_cnt = 0;
        self.prior_cwnd = self.win.cwnd;
        self.prr_delivered = 0;
        self.prr_out = 0;
        self.win.ssthresh = self.cc.ssthresh(&self.win);
        if self.cfg.ecn {
            self.queue_cwr = true;
        }
    }

    /// `tcp_end_cwnd_reduction` (not for a module with `.cong_control`).
    fn end_cwnd_reduction(&mut self) {
        if self.cc.has_cong_control() {
            return;
        }
        if self.win.ssthresh < TCP_INFINITE_SSTHRESH {
            self.win.cwnd = self.win.ssthresh;
        }
    }

    /// `tcp_cwnd_reduction`: proportional rate reduction (RFC 6937, PRR-SSRB).
    fn cwnd_reduction(&mut self, newly_acked_sacked: u32, newly_lost: u32, una_advanced: bool) {
        if newly_acked_sacked == 0 || self.prior_cwnd == 0 {
            return;
        }
        self.prr_delivered += newly_acked_sacked;
        let in_flight = self.sb.in_flight() as i64;
        let ssthresh = self.win.ssthresh as i64;
        let delta = ssthresh - in_flight;
        let mut sndcnt = if delta < 0 {
            let dividend = ssthresh * self.prr_delivered as i64 + self.prior_cwnd as i64 - 1;
            dividend / self.prior_cwnd as i64 - self.prr_out as i64
        } else {
            let mut s =
                (self.prr_delivered as i64 - self.prr_out as i64).max(newly_acked_sacked as i64);
            if una_advanced && newly_lost == 0 {
                s += 1;
            }
            s.min(delta)
        };
        // Force a fast retransmit upon entering fast recovery.
        sndcnt = sndcnt.max(if self.prr_out > 0 { 0 } else { 1 });
        self.win.cwnd = ((in_flight + sndcnt) as u32).clamp(1, self.win.clamp);
    }

    /// An ACK arrived at `now`.
    pub fn on_ack(&mut self, now: Nanos, ack: &Segment) {
        if ack.ack > self.snd_nxt {
            return; // acknowledges data never sent
        }
        self.peer_ts = ack.ts_val;
        // tcp_ack_update_window (ACKs arrive in order here: any ACK not behind
        // snd_una is the newest).
        let window_update =
            self.reads_window && ack.ack >= self.snd_una && ack.wnd as u64 != self.snd_wnd;
        if window_update {
            self.snd_wnd = ack.wnd as u64;
            if self.snd_wnd > 0 {
                self.probes = 0;
            }
        }
        let prior_delivered = self.delivered;
        let mut rs = RateSample::new(self.sb.in_flight());
        let ece = self.cfg.ecn && ack.ece;
        if ece {
            self.stats.ece_acks += 1;
        }
        // SACK tagging (tcp_sacktag_write_queue runs before the cumulative part).
        let rate = &mut self.rate;
        self.delivered += self
            .sb
            .sack_with(ack.sack_blocks(), |s| rate.on_delivered(s, true, &mut rs))
            as u64;
        // Cumulative ACK (tcp_clean_rtx_queue).
        let advanced = ack.ack > self.snd_una;
        if advanced {
            let rate = &mut self.rate;
            let r = self
                .sb
                .ack_with(ack.ack, |s| rate.on_delivered(s, false, &mut rs));
            self.snd_una = ack.ack;
            self.delivered += r.newly_delivered as u64;
            self.stats.bytes_acked += r.bytes;
            let ts_rtt = now.saturating_sub(ack.ts_ecr);
            self.rtt.on_sample(ts_rtt);
            self.backoff = 0;
            let ca_rtt = r.rtt_sent_at.map_or(ts_rtt, |t| now.saturating_sub(t));
            self.rtt.on_min_rtt_sample(now, ca_rtt);
            self.rtt_sample = Some(ts_rtt);
            rs.rtt = Some(ca_rtt);
            let sample = AckedSample {
                now,
                rtt: Some(ca_rtt),
                snd_una: self.snd_una,
                snd_nxt: self.snd_nxt,
            };
            self.cc.pkts_acked(&mut self.win, &sample);
            self.rto_retransmits = 0;
            self.dupacks = 0;
            self.rto_at = if self.sb.is_empty() {
                None
            } else {
                Some(now + self.current_rto())
            };
        } else if ack.ack == self.snd_una
            && ack.is_pure_ack()
            && ack.sack_len == 0
            && !window_update
            && !self.sb.is_empty()
        {
            self.dupacks += 1;
        }
        // Loss detection.
        let mut newly_lost = self.sb.mark_lost_rfc6675();
        if self.dupacks >= DUP_THRESH {
            newly_lost += self.sb.mark_head_lost() as u32;
        }
        self.stats.losses_detected += newly_lost as u64;
        // State exits (tcp_fastretrans_alert, "D").
        match self.state {
            CaState::Cwr if self.snd_una > self.high_seq => {
                self.end_cwnd_reduction();
                self.state = CaState::Open;
            }
            CaState::Recovery if self.snd_una >= self.high_seq => {
                self.end_cwnd_reduction();
                self.state = CaState::Open;
            }
            CaState::Loss if self.snd_una >= self.high_seq => {
                self.state = CaState::Open;
            }
            _ => {}
        }
        // State entries ("E").
        if matches!(self.state, CaState::Open | CaState::Disorder | CaState::Cwr) {
            if self.sb.lost_out() > 0 {
                // tcp_enter_recovery: no second reduction if CWR already made one.
                if self.state != CaState::Cwr {
                    self.init_cwnd_reduction();
                }
                self.state = CaState::Recovery;
                self.stats.fast_recoveries += 1;
            } else if self.state != CaState::Cwr {
                if ece {
                    // tcp_enter_cwr
                    self.init_cwnd_reduction();
                    self.state = CaState::Cwr;
                    self.stats.ecn_reductions += 1;
                } else if self.sb.sacked_out() > 0 || self.dupacks > 0 {
                    self.state = CaState::Disorder;
                } else {
                    self.state = CaState::Open;
                }
            }
        }
        let acked_sacked = (self.delivered - prior_delivered) as u32;
        // tcp_rate_gen; a newly SACKed clean segment gives the RTT (`last_sackt`).
        if let Some(t) = rs.last_sackt {
            rs.rtt = Some(now.saturating_sub(t));
        }
        self.rate.generate(
            now,
            self.delivered,
            acked_sacked,
            newly_lost,
            self.rtt.min_rtt(),
            &mut rs,
        );
        // tcp_cong_control.
        if self.cc.has_cong_control() {
            let c = self.conn_info(now);
            self.cc.cong_control(&mut self.win, &c, &rs);
            if self.cc.marks_app_limited() {
                self.rate
                    .mark_app_limited(self.delivered, self.sb.in_flight());
            }
            self.sync_cc_pacing_rate();
            return;
        }
        if self.in_cwnd_reduction() {
            self.cwnd_reduction(acked_sacked, newly_lost, advanced);
        } else if advanced {
            let limited = self.cwnd_limited();
            self.cc
                .cong_avoid(&mut self.win, now, acked_sacked, limited);
        }
        if self.cfg.pacing {
            self.pacer.update_rate(
                self.mss,
                self.win.cwnd,
                self.win.ssthresh,
                self.sb.packets_out(),
                self.rtt.srtt(),
            );
        }
    }

    /// Check the scoreboard's counters (tests).
    #[cfg(test)]
    pub(crate) fn check_invariants(&self) {
        self.sb.check();
        assert_eq!(self.sb.is_empty(), self.snd_una == self.snd_nxt);
        assert!(self.win.cwnd >= 1);
        if !self.reads_window {
            assert!(self.snd_nxt - self.snd_una <= self.cfg.rwnd_bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::CongestionControl;

    const MSS: u64 = 1448;

    fn ms(v: u64) -> Nanos {
        Nanos::from_ms(v)
    }

    fn drain(s: &mut TcpSender, now: Nanos) -> Vec<Segment> {
        std::iter::from_fn(|| s.poll_transmit(now)).collect()
    }

    fn ack_of(ack: u64, ts_ecr: Nanos, sack: &[(u64, u64)]) -> Segment {
        let mut a = Segment {
            ack,
            ts_ecr,
            ..Segment::default()
        };
        for (i, b) in sack.iter().enumerate() {
            a.sack[i] = *b;
        }
        a.sack_len = sack.len() as u8;
        a
    }

    #[test]
    fn initial_window_and_finite_transfer() {
        let mut s = TcpSender::new(TcpConfig::default(), Nanos::ZERO, Some(20 * MSS + 100));
        s.close();
        let segs = drain(&mut s, Nanos::ZERO);
        assert_eq!(segs.len(), 10);
        assert!(segs.iter().all(|x| x.len == MSS as u32 && !x.ect && !x.fin));
        assert_eq!(s.poll_timeout(), Some(Nanos::from_secs(1)), "initial RTO");
        // ACK all 10 (slow start: +10).
        s.on_ack(ms(100), &ack_of(10 * MSS, Nanos::ZERO, &[]));
        assert_eq!(s.stats().cwnd_segments, 20);
        assert_eq!(s.stats().srtt, Some(ms(100)));
        assert_eq!(s.stats().rto, ms(300));
        let segs = drain(&mut s, ms(100));
        assert_eq!(segs.len(), 11);
        let last = segs.last().unwrap();
        assert_eq!((last.len, last.fin), (100, true));
        assert!(!s.is_done());
        s.on_ack(ms(200), &ack_of(20 * MSS + 100, ms(100), &[]));
        assert!(s.is_done());
        assert_eq!(s.poll_timeout(), None);
        assert!(s.poll_transmit(ms(200)).is_none());
        // More data on a persistent connection after a long idle: window restarts.
        s.closed = false;
        s.add_bytes(Nanos::from_secs(10), 5 * MSS);
        assert_eq!(s.stats().cwnd_segments, 10);
        assert_eq!(drain(&mut s, Nanos::from_secs(10)).len(), 5);
        s.check_invariants();
    }

    #[test]
    fn receive_window_limits_the_flight() {
        let cfg = TcpConfig {
            rwnd_bytes: 4 * MSS,
            ..TcpConfig::default()
        };
        let mut s = TcpSender::new(cfg, Nanos::ZERO, None);
        assert_eq!(drain(&mut s, Nanos::ZERO).len(), 4);
        s.on_ack(ms(50), &ack_of(2 * MSS, Nanos::ZERO, &[]));
        assert_eq!(drain(&mut s, ms(50)).len(), 2);
        s.check_invariants();
    }

    /// Fast retransmit on the third SACKed segment above a hole; one reduction per
    /// episode; recovery ends at the recovery point with cwnd = ssthresh.
    #[test]
    fn sack_fast_recovery_reduces_once() {
        for (cc, expect_ssthresh) in [
            (CongestionControl::Cubic, 7),
            (CongestionControl::NewReno, 5),
        ] {
            let cfg = TcpConfig::default().with_cc(cc);
            let mut s = TcpSender::new(cfg, Nanos::ZERO, None);
            assert_eq!(drain(&mut s, Nanos::ZERO).len(), 10);
            // Segments 0 and 4 lost. SACKs for 1, 2, 3.
            for k in 1..=3u64 {
                s.on_ack(
                    ms(100 + k),
                    &ack_of(0, Nanos::ZERO, &[(MSS, (k + 1) * MSS)]),
                );
            }
            let st = s.stats();
            assert_eq!(st.state, CaState::Recovery);
            assert_eq!(st.ssthresh_segments, expect_ssthresh);
            assert_eq!(st.lost_out, 1);
            let segs = drain(&mut s, ms(103));
            assert_eq!(segs[0].seq, 0, "fast retransmit of the hole first");
            assert!(!segs[0].ect);
            // More SACKs: 5..9 → segment 4 lost as well, same episode.
            for k in 5..10u64 {
                s.on_ack(
                    ms(100 + k),
                    &ack_of(0, Nanos::ZERO, &[(5 * MSS, (k + 1) * MSS), (MSS, 4 * MSS)]),
                );
                drain(&mut s, ms(100 + k));
                s.check_invariants();
            }
            assert_eq!(s.stats().fast_recoveries, 1);
            assert_eq!(s.stats().ssthresh_segments, expect_ssthresh);
            assert_eq!(s.stats().retransmits, 2);
            // Cumulative ACK past the recovery point.
            let nxt = s.stats().snd_nxt;
            s.on_ack(ms(300), &ack_of(nxt, ms(200), &[]));
            let st = s.stats();
            assert_eq!(st.state, CaState::Open);
            assert!(st.cwnd_segments >= expect_ssthresh && st.cwnd_segments <= expect_ssthresh + 1);
            assert_eq!(st.timeouts, 0);
        }
    }

    #[test]
    fn ece_reduces_once_per_window_and_sets_cwr() {
        let cfg = TcpConfig {
            ecn: true,
            ..TcpConfig::default()
        };
        let mut s = TcpSender::new(cfg, Nanos::ZERO, None);
        let segs = drain(&mut s, Nanos::ZERO);
        assert!(segs.iter().all(|x| x.ect && !x.cwr));
        let mut a = ack_of(2 * MSS, Nanos::ZERO, &[]);
        a.ece = true;
        s.on_ack(ms(100), &a);
        let st = s.stats();
        assert_eq!(
            (st.state, st.ecn_reductions, st.ssthresh_segments),
            (CaState::Cwr, 1, 7)
        );
        let segs = drain(&mut s, ms(100));
        assert!(segs[0].cwr && segs.iter().skip(1).all(|x| !x.cwr));
        // More ECEs in the same window: no new reduction.
        for k in 3..=10u64 {
            let mut a = ack_of(k * MSS, Nanos::ZERO, &[]);
            a.ece = true;
            s.on_ack(ms(100 + k), &a);
            drain(&mut s, ms(100 + k));
        }
        assert_eq!(s.stats().ecn_reductions, 1);
        assert_eq!(s.stats().retransmits, 0);
        // Past high_seq (snd_nxt at the reduction = 10 segments), without ECE: CWR ends
        // with cwnd = ssthresh.
        s.on_ack(ms(200), &ack_of(11 * MSS, ms(100), &[]));
        let st = s.stats();
        assert_eq!(st.state, CaState::Open);
        assert!(
            st.cwnd_segments >= 7 && st.cwnd_segments <= 8,
            "{}",
            st.cwnd_segments
        );
        // A new ECE now reduces again.
        let mut a = ack_of(12 * MSS, ms(100), &[]);
        a.ece = true;
        s.on_ack(ms(201), &a);
        assert_eq!(s.stats().ecn_reductions, 2);
    }

    #[test]
    fn rto_backs_off_and_goes_back_to_one_segment() {
        let mut s = TcpSender::new(TcpConfig::default(), Nanos::ZERO, None);
        drain(&mut s, Nanos::ZERO);
        s.on_ack(ms(100), &ack_of(2 * MSS, Nanos::ZERO, &[]));
        drain(&mut s, ms(100));
        let rto = s.stats().rto;
        assert_eq!(rto, ms(300));
        let mut t = s.poll_timeout().unwrap();
        assert_eq!(t, ms(400));
        let mut expected_gap = rto;
        for k in 1..=4u32 {
            s.handle_timeout(t);
            let st = s.stats();
            assert_eq!(
                (st.timeouts, st.backoff, st.cwnd_segments),
                (k as u64, k, 1)
            );
            assert_eq!(st.state, CaState::Loss);
            let segs = drain(&mut s, t);
            assert_eq!(segs.len(), 1);
            assert_eq!(segs[0].seq, 2 * MSS, "go back to snd_una");
            expected_gap = Nanos(expected_gap.0 * 2);
            let next = s.poll_timeout().unwrap();
            assert_eq!(next - t, expected_gap);
            t = next;
        }
        // The ssthresh was computed once (at the first RTO).
        assert_eq!(s.stats().ssthresh_segments, 12 * 717 / 1024);
        // The retransmission gets through: backoff resets, slow start resumes.
        s.on_ack(t, &ack_of(3 * MSS, t - ms(50), &[]));
        let st = s.stats();
        assert_eq!((st.backoff, st.cwnd_segments), (0, 2));
        let segs = drain(&mut s, t);
        assert!(segs.iter().all(|x| x.seq >= 3 * MSS));
        assert_eq!(segs.len(), 2);
        s.check_invariants();
    }

    #[test]
    fn pacing_holds_segments_until_release() {
        let cfg = TcpConfig {
            pacing: true,
            ..TcpConfig::default()
        };
        let mut s = TcpSender::new(cfg, Nanos::ZERO, None);
        assert_eq!(drain(&mut s, Nanos::ZERO).len(), 10);
        s.on_ack(ms(100), &ack_of(10 * MSS, Nanos::ZERO, &[]));
        // cwnd 20, srtt 100 ms, slow start: 2 × 20 × 1448 B / 100 ms.
        let rate = s.stats().pacing_rate.unwrap();
        assert_eq!(rate, 2 * 20 * MSS * 10);
        let mut times = vec![];
        let mut now = ms(100);
        while times.len() < 20 {
            match s.poll_transmit(now) {
                Some(_) => times.push(now),
                None => now = s.poll_timeout().unwrap(),
            }
        }
        let gap = Nanos(MSS * 1_000_000_000 / rate);
        // The first paced segment after the idle initial window gets Linux's jitter
        // credit (half a slot); then the spacing is exact.
        assert!(times[1] - times[0] >= Nanos(gap.0 / 2));
        for w in times[1..].windows(2) {
            assert!(w[1] - w[0] >= gap - Nanos(1), "{:?}", w);
        }
    }
}
