//! The congestion window and the interface to the congestion-control modules
//! (Linux `struct tcp_congestion_ops`, `net/ipv4/tcp_cong.c`).

use super::cubic::Cubic;
use super::newreno::NewReno;
use super::{CongestionControl, TcpConfig};
use txop_core::Nanos;

/// `TCP_INFINITE_SSTHRESH`: no slow-start threshold yet.
pub const TCP_INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

/// The window state congestion control reads and writes (`tcp_sock`'s `snd_cwnd`,
/// `snd_cwnd_cnt`, `snd_ssthresh`, `snd_cwnd_clamp`), in segments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// Congestion window (segments).
    pub cwnd: u32,
    /// ACKed segments counted towards the next +1 in congestion avoidance.
    pub cwnd_cnt: u32,
    /// Slow-start threshold (segments).
    pub ssthresh: u32,
    /// Upper bound of `cwnd` (the receive window in segments).
    pub clamp: u32,
}

impl Window {
    /// `tcp_in_slow_start`.
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// `tcp_slow_start`: grow by the ACKed segments up to ssthresh; return the ACKed
    /// segments left over for congestion avoidance.
    pub fn slow_start(&mut self, acked: u32) -> u32 {
        let cwnd = self.cwnd.saturating_add(acked).min(self.ssthresh);
        let left = acked.saturating_sub(cwnd.saturating_sub(self.cwnd));
        self.cwnd = cwnd.min(self.clamp);
        left
    }

    /// `tcp_cong_avoid_ai`: +1 segment per `w` ACKed segments.
    pub fn cong_avoid_ai(&mut self, w: u32, acked: u32) {
        let w = w.max(1);
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            self.cwnd += 1;
        }
        self.cwnd_cnt += acked;
        if self.cwnd_cnt >= w {
            let delta = self.cwnd_cnt / w;
            self.cwnd_cnt -= delta * w;
            self.cwnd += delta;
        }
        self.cwnd = self.cwnd.min(self.clamp);
    }
}

/// What an ACK that acknowledged new data tells congestion control (`struct
/// ack_sample`, for `pkts_acked`).
#[derive(Clone, Copy, Debug)]
pub struct AckedSample {
    /// Arrival time of the ACK.
    pub now: Nanos,
    /// RTT of the newest newly acknowledged segment (Linux `ca_rtt_us`), if any.
    pub rtt: Option<Nanos>,
    /// `snd_una` after the ACK.
    pub snd_una: u64,
    /// `snd_nxt` when the ACK arrived.
    pub snd_nxt: u64,
}

/// The congestion-control module of a connection.
#[derive(Clone, Debug)]
pub enum Cc {
    /// `tcp_cubic.c`.
    Cubic(Cubic),
    /// `tcp_reno_*`.
    NewReno(NewReno),
}

impl Cc {
    /// `tcp_init_congestion_control` → `.init`.
    pub fn new(cfg: &TcpConfig) -> Cc {
        match cfg.cc {
            CongestionControl::Cubic => Cc::Cubic(Cubic::new(cfg.hystart)),
            CongestionControl::NewReno => Cc::NewReno(NewReno),
        }
    }

    /// `.ssthresh`: the slow-start threshold after a congestion event (loss, ECE or
    /// RTO), from the window at that moment.
    pub fn ssthresh(&mut self, w: &Window) -> u32 {
        match self {
            Cc::Cubic(c) => c.recalc_ssthresh(w),
            Cc::NewReno(r) => r.ssthresh(w),
        }
    }

    /// `.cong_avoid`: grow the window for `acked` newly delivered segments.
    /// `cwnd_limited` is `tcp_is_cwnd_limited`.
    pub fn cong_avoid(&mut self, w: &mut Window, now: Nanos, acked: u32, cwnd_limited: bool) {
        match self {
            Cc::Cubic(c) => c.cong_avoid(w, now, acked, cwnd_limited),
            Cc::NewReno(r) => r.cong_avoid(w, acked, cwnd_limited),
        }
    }

    /// `.pkts_acked`: an ACK acknowledged new data (CUBIC's delay tracking and HyStart).
    pub fn pkts_acked(&mut self, w: &mut Window, s: &AckedSample) {
        if let Cc::Cubic(c) = self {
            c.acked(w, s);
        }
    }

    /// `.set_state(TCP_CA_Loss)`: the retransmission timer fired.
    pub fn on_enter_loss(&mut self, now: Nanos, snd_nxt: u64) {
        if let Cc::Cubic(c) = self {
            c.on_enter_loss(now, snd_nxt);
        }
    }

    /// `.cwnd_event(CA_EVENT_TX_START)`: transmission resumes with nothing in flight
    /// after the sender was last active at `last_send`.
    pub fn on_tx_start(&mut self, now: Nanos, last_send: Nanos) {
        if let Cc::Cubic(c) = self {
            c.on_tx_start(now, last_send);
        }
    }

    /// CUBIC's W_max (segments), 0 before the first congestion event.
    pub fn w_max(&self) -> Option<u32> {
        match self {
            Cc::Cubic(c) => Some(c.w_max()),
            Cc::NewReno(_) => None,
        }
    }

    /// Congestion window at which HyStart ended slow start, if it did.
    pub fn hystart_exit_cwnd(&self) -> Option<u32> {
        match self {
            Cc::Cubic(c) => c.hystart_exit_cwnd(),
            Cc::NewReno(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn win(cwnd: u32, ssthresh: u32) -> Window {
        Window {
            cwnd,
            cwnd_cnt: 0,
            ssthresh,
            clamp: u32::MAX,
        }
    }

    #[test]
    fn slow_start_stops_at_ssthresh_and_returns_the_rest() {
        let mut w = win(10, 14);
        assert_eq!(w.slow_start(2), 0);
        assert_eq!(w.cwnd, 12);
        assert_eq!(w.slow_start(5), 3);
        assert_eq!(w.cwnd, 14);
        assert!(!w.in_slow_start());
    }

    #[test]
    fn additive_increase_is_one_segment_per_window() {
        let mut w = win(20, 10);
        for _ in 0..10 {
            w.cong_avoid_ai(20, 2);
        }
        assert_eq!(w.cwnd, 21);
        assert_eq!(w.cwnd_cnt, 0);
    }
}
