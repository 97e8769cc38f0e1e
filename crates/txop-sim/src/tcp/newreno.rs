//! Reno/NewReno window growth and reduction as Linux's built-in `reno` module
//! (`tcp_reno_cong_avoid`, `tcp_reno_ssthresh` in `net/ipv4/tcp_cong.c`; RFC 5681).
//!
//! Slow start below ssthresh, then +1 segment per window of ACKed segments (appropriate
//! byte counting: delayed ACKs that cover 2 segments count 2). On a congestion event
//! ssthresh = max(cwnd / 2, 2) — Linux halves the congestion window, where RFC 5681
//! says FlightSize / 2; they agree for a window-limited flow. The window returns to
//! ssthresh when recovery ends (see the sender).

use super::cc::Window;

/// The Reno congestion control (stateless: everything is in [`Window`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct NewReno;

impl NewReno {
    /// `tcp_reno_ssthresh`: half the window, at least 2 segments.
    pub fn ssthresh(&self, w: &Window) -> u32 {
        (w.cwnd >> 1).max(2)
    }

    /// `tcp_reno_cong_avoid`.
    pub fn cong_avoid(&self, w: &mut Window, acked: u32, cwnd_limited: bool) {
        if !cwnd_limited {
            return;
        }
        let mut acked = acked;
        if w.in_slow_start() {
            acked = w.slow_start(acked);
            if acked == 0 {
                return;
            }
        }
        let cwnd = w.cwnd;
        w.cong_avoid_ai(cwnd, acked);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_and_grows_one_per_rtt() {
        let r = NewReno;
        let mut w = Window {
            cwnd: 100,
            cwnd_cnt: 0,
            ssthresh: 50,
            clamp: u32::MAX,
        };
        assert_eq!(r.ssthresh(&w), 50);
        // One RTT of delayed ACKs (2 segments each) for a window of 100.
        for _ in 0..50 {
            r.cong_avoid(&mut w, 2, true);
        }
        assert_eq!(w.cwnd, 101);
        // Not window-limited: no growth.
        for _ in 0..200 {
            r.cong_avoid(&mut w, 2, false);
        }
        assert_eq!(w.cwnd, 101);
        w.cwnd = 3;
        assert_eq!(r.ssthresh(&w), 2);
    }

    #[test]
    fn slow_start_doubles_per_rtt() {
        let r = NewReno;
        let mut w = Window {
            cwnd: 10,
            cwnd_cnt: 0,
            ssthresh: u32::MAX,
            clamp: u32::MAX,
        };
        for _ in 0..5 {
            r.cong_avoid(&mut w, 2, true);
        }
        assert_eq!(w.cwnd, 20);
    }
}
