//! The congestion window and the interface to the congestion-control modules
//! (Linux `struct tcp_congestion_ops`, `net/ipv4/tcp_cong.c`).

use super::bbr::{Bbr, BbrInfo};
use super::cubic::Cubic;
use super::newreno::NewReno;
use super::rate::RateSample;
use super::sender::CaState;
use super::{CongestionControl, TcpConfig};
use txop_core::Nanos;
use txop_results::flowstats::BbrSample;

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

/// What a congestion-control module reads of the connection (fields of `tcp_sock`),
/// taken after the ACK's scoreboard and state updates.
#[derive(Clone, Copy, Debug)]
pub struct ConnInfo {
    /// `tcp_mstamp`.
    pub now: Nanos,
    /// Segments delivered so far (`tp->delivered`).
    pub delivered: u64,
    /// Time of the last delivery (`tp->delivered_mstamp`).
    pub delivered_mstamp: Nanos,
    /// Segments ever marked lost (`tp->lost`).
    pub lost: u64,
    /// `tcp_packets_in_flight`.
    pub in_flight: u32,
    /// `icsk_ca_state`.
    pub ca_state: CaState,
    /// Smoothed RTT, once measured.
    pub srtt: Option<Nanos>,
    /// `tp->app_limited != 0`.
    pub app_limited: bool,
    /// Release time of the next segment (`tcp_wstamp_ns`, the earliest departure time).
    pub edt: Nanos,
}

/// The congestion-control module of a connection.
#[derive(Clone, Debug)]
pub enum Cc {
    /// `tcp_cubic.c`.
    Cubic(Cubic),
    /// `tcp_reno_*`.
    NewReno(NewReno),
    /// `tcp_bbr.c` (boxed: its state is several times CUBIC's).
    Bbr(Box<Bbr>),
}

impl Cc {
    /// `tcp_init_congestion_control` → `.init`, for a connection starting at `now`
    /// with window `w`.
    pub fn new(cfg: &TcpConfig, w: &Window, now: Nanos) -> Cc {
        match cfg.cc {
            CongestionControl::Cubic => Cc::Cubic(Cubic::new(cfg.hystart)),
            CongestionControl::NewReno => Cc::NewReno(NewReno),
            CongestionControl::Bbr => Cc::Bbr(Box::new(Bbr::new(cfg.mss_bytes, w, now))),
        }
    }

    /// The module has `.cong_control` (BBR): it sets cwnd and the pacing rate itself
    /// on every ACK, instead of PRR / `.cong_avoid` and `tcp_update_pacing_rate`
    /// (`tcp_cong_control`); the window is not reset to ssthresh when a reduction
    /// ends (`tcp_end_cwnd_reduction`), and the connection always paces
    /// (`SK_PACING_NEEDED`).
    pub fn has_cong_control(&self) -> bool {
        matches!(self, Cc::Bbr(_))
    }

    /// `.cong_control` (BBR's `bbr_main`), with this ACK's rate sample.
    pub fn cong_control(&mut self, w: &mut Window, c: &ConnInfo, rs: &RateSample) {
        if let Cc::Bbr(b) = self {
            b.main(w, c, rs);
        }
    }

    /// The pacing rate the module sets (`sk_pacing_rate`), bytes/s.
    pub fn pacing_rate(&self) -> Option<u64> {
        match self {
            Cc::Bbr(b) => Some(b.pacing_rate()),
            _ => None,
        }
    }

    /// The module wants the connection marked application-limited now (BBR in
    /// PROBE_RTT).
    pub fn marks_app_limited(&self) -> bool {
        matches!(self, Cc::Bbr(b) if b.in_probe_rtt())
    }

    /// BBR's mode (`bbr->mode`) and the modes it entered since the last call
    /// ([`BbrSample`]): the simulator samples them on every ACK.
    pub fn take_bbr_sample(&mut self) -> Option<BbrSample> {
        match self {
            Cc::Bbr(b) => Some(BbrSample {
                mode: b.mode(),
                entered: b.take_entered(),
            }),
            _ => None,
        }
    }

    /// BBR's model, for stats.
    pub fn bbr_info(&self) -> Option<BbrInfo> {
        match self {
            Cc::Bbr(b) => Some(b.info()),
            _ => None,
        }
    }

    /// `.ssthresh`: the slow-start threshold after a congestion event (loss, ECE or
    /// RTO), from the window at that moment.
    pub fn ssthresh(&mut self, w: &Window) -> u32 {
        match self {
            Cc::Cubic(c) => c.recalc_ssthresh(w),
            Cc::NewReno(r) => r.ssthresh(w),
            Cc::Bbr(b) => b.ssthresh(w),
        }
    }

    /// `.cong_avoid`: grow the window for `acked` newly delivered segments.
    /// `cwnd_limited` is `tcp_is_cwnd_limited`.
    pub fn cong_avoid(&mut self, w: &mut Window, now: Nanos, acked: u32, cwnd_limited: bool) {
        match self {
            Cc::Cubic(c) => c.cong_avoid(w, now, acked, cwnd_limited),
            Cc::NewReno(r) => r.cong_avoid(w, acked, cwnd_limited),
            Cc::Bbr(_) => {}
        }
    }

    /// `.pkts_acked`: an ACK acknowledged new data (CUBIC's delay tracking and HyStart).
    pub fn pkts_acked(&mut self, w: &mut Window, s: &AckedSample) {
        if let Cc::Cubic(c) = self {
            c.acked(w, s);
        }
    }

    /// `.set_state(TCP_CA_Loss)`: the retransmission timer fired.
    pub fn on_enter_loss(&mut self, c: &ConnInfo, snd_nxt: u64) {
        match self {
            Cc::Cubic(cubic) => cubic.on_enter_loss(c.now, snd_nxt),
            Cc::Bbr(b) => b.on_enter_loss(c),
            Cc::NewReno(_) => {}
        }
    }

    /// `.cwnd_event(CA_EVENT_TX_START)`: transmission resumes with nothing in flight
    /// after the sender was last active at `last_send`.
    pub fn on_tx_start(&mut self, w: &mut Window, c: &ConnInfo, last_send: Nanos) {
        match self {
            Cc::Cubic(cubic) => cubic.on_tx_start(c.now, last_send),
            Cc::Bbr(b) => b.on_tx_start(c, w),
            Cc::NewReno(_) => {}
        }
    }

    /// CUBIC's W_max (segments), 0 before the first congestion event.
    pub fn w_max(&self) -> Option<u32> {
        match self {
            Cc::Cubic(c) => Some(c.w_max()),
            Cc::NewReno(_) | Cc::Bbr(_) => None,
        }
    }

    /// Congestion window at which HyStart ended slow start, if it did.
    pub fn hystart_exit_cwnd(&self) -> Option<u32> {
        match self {
            Cc::Cubic(c) => c.hystart_exit_cwnd(),
            Cc::NewReno(_) | Cc::Bbr(_) => None,
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
