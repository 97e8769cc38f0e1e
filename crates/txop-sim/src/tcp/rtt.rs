//! Round-trip time estimation: RFC 6298's SRTT/RTTVAR and retransmission timeout, and
//! a windowed minimum RTT (Kathleen Nichols' algorithm, Linux `lib/minmax.c`).

use super::TCP_RTO_MAX;
use txop_core::Nanos;

/// Window of the minimum-RTT filter: Linux `sysctl_tcp_min_rtt_wlen` (300 s).
pub const MIN_RTT_WINDOW: Nanos = Nanos::from_secs(300);

/// RFC 6298 estimator. Samples come from echoed timestamps (RFC 7323), so
/// retransmitted segments are measurable and Karn's rule is not needed.
///
/// The RTO floor is applied as Linux does (`tcp_set_rto`: `srtt + rttvar_us` with
/// `rttvar_us ≥ tcp_rto_min`), i.e. `RTO = SRTT + max(4·RTTVAR, min_rto)`, rather than
/// RFC 6298's `max(SRTT + 4·RTTVAR, min_rto)`; both are ≥ 200 ms, Linux's keeps a
/// margin of 200 ms above SRTT even when the RTT is stable (what makes its RTOs
/// srtt + 200 ms in practice).
#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt: Option<Nanos>,
    rttvar: Nanos,
    rto: Nanos,
    min_rto: Nanos,
    min_rtt: MinMax,
}

impl RttEstimator {
    /// No sample yet: RTO = `initial_rto` (RFC 6298 §2.1).
    pub fn new(initial_rto: Nanos, min_rto: Nanos) -> RttEstimator {
        RttEstimator {
            srtt: None,
            rttvar: Nanos::ZERO,
            rto: initial_rto.min(TCP_RTO_MAX),
            min_rto,
            min_rtt: MinMax::default(),
        }
    }

    /// Feed one RTT measurement `r` (RFC 6298 §2.2–2.3: α = 1/8, β = 1/4, K = 4).
    pub fn on_sample(&mut self, r: Nanos) {
        let r = r.max(Nanos(1));
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = Nanos(r.0 / 2);
            }
            Some(srtt) => {
                let err = srtt.0.abs_diff(r.0);
                self.rttvar = Nanos((3 * self.rttvar.0 + err) / 4);
                self.srtt = Some(Nanos((7 * srtt.0 + r.0) / 8));
            }
        }
        let srtt = self.srtt.unwrap_or(r);
        let var_term = Nanos(4 * self.rttvar.0).max(self.min_rto);
        self.rto = (srtt + var_term).min(TCP_RTO_MAX);
    }

    /// Feed an RTT measurement to the minimum filter (Linux `tcp_update_rtt_min`).
    pub fn on_min_rtt_sample(&mut self, now: Nanos, r: Nanos) {
        self.min_rtt
            .running_min(MIN_RTT_WINDOW, now, r.max(Nanos(1)));
    }

    /// Smoothed RTT, once there is a sample.
    pub fn srtt(&self) -> Option<Nanos> {
        self.srtt
    }

    /// RTT variation (RTTVAR).
    pub fn rttvar(&self) -> Nanos {
        self.rttvar
    }

    /// The retransmission timeout before any backoff.
    pub fn rto(&self) -> Nanos {
        self.rto
    }

    /// The RTO after `backoff` expirations: doubled each time, at most 120 s
    /// (RFC 6298 §5.5, Linux `inet_csk_rto_backoff`).
    pub fn backed_off_rto(&self, backoff: u32) -> Nanos {
        let shifted = if backoff >= 40 {
            u64::MAX
        } else {
            self.rto().0.saturating_mul(1u64 << backoff)
        };
        Nanos(shifted).min(TCP_RTO_MAX)
    }

    /// Windowed minimum RTT, once there is a sample.
    pub fn min_rtt(&self) -> Option<Nanos> {
        self.min_rtt.get()
    }
}

/// Running windowed minimum keeping the best three candidates (`lib/minmax.c`).
#[derive(Clone, Copy, Debug, Default)]
pub struct MinMax {
    /// (time, value), best first; `None` before the first sample.
    s: Option<[(Nanos, Nanos); 3]>,
}

impl MinMax {
    /// Current minimum.
    pub fn get(&self) -> Option<Nanos> {
        self.s.map(|s| s[0].1)
    }

    /// `minmax_running_min`: add `meas` taken at `t`, forget samples older than `win`.
    pub fn running_min(&mut self, win: Nanos, t: Nanos, meas: Nanos) -> Nanos {
        let val = (t, meas);
        let Some(s) = self.s.as_mut() else {
            self.s = Some([val; 3]);
            return meas;
        };
        if meas <= s[0].1 || t.saturating_sub(s[2].0) > win {
            *s = [val; 3];
            return meas;
        }
        if meas <= s[1].1 {
            s[1] = val;
            s[2] = val;
        } else if meas <= s[2].1 {
            s[2] = val;
        }
        // minmax_subwin_update
        let dt = t.saturating_sub(s[0].0);
        if dt > win {
            s[0] = s[1];
            s[1] = s[2];
            s[2] = val;
            if t.saturating_sub(s[0].0) > win {
                s[0] = s[1];
                s[1] = s[2];
                s[2] = val;
            }
        } else if s[1].0 == s[0].0 && dt > Nanos(win.0 / 4) {
            s[1] = val;
            s[2] = val;
        } else if s[2].0 == s[1].0 && dt > Nanos(win.0 / 2) {
            s[2] = val;
        }
        s[0].1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Nanos {
        Nanos::from_ms(v)
    }

    #[test]
    fn rfc6298_first_and_later_samples() {
        let mut e = RttEstimator::new(Nanos::from_secs(1), ms(200));
        assert_eq!(e.rto(), Nanos::from_secs(1));
        assert_eq!(e.srtt(), None);
        e.on_sample(ms(100));
        // SRTT = R, RTTVAR = R/2, RTO = SRTT + max(4·RTTVAR, 200 ms) = 100 + 200.
        assert_eq!(e.srtt(), Some(ms(100)));
        assert_eq!(e.rttvar(), ms(50));
        assert_eq!(e.rto(), ms(300));
        e.on_sample(ms(180));
        // RTTVAR = 3/4·50 + 1/4·|100 − 180| = 57.5; SRTT = 7/8·100 + 1/8·180 = 110.
        assert_eq!(e.rttvar(), Nanos(57_500_000));
        assert_eq!(e.srtt(), Some(ms(110)));
        assert_eq!(e.rto(), ms(110) + ms(230));
    }

    #[test]
    fn stable_rtt_keeps_the_200ms_floor_and_backoff_doubles_to_the_cap() {
        let mut e = RttEstimator::new(Nanos::from_secs(1), ms(200));
        for _ in 0..200 {
            e.on_sample(ms(40));
        }
        assert_eq!(e.rto(), ms(240));
        assert_eq!(e.backed_off_rto(0), ms(240));
        assert_eq!(e.backed_off_rto(1), ms(480));
        assert_eq!(e.backed_off_rto(3), ms(1920));
        assert_eq!(e.backed_off_rto(20), TCP_RTO_MAX);
        assert_eq!(e.backed_off_rto(200), TCP_RTO_MAX);
    }

    #[test]
    fn windowed_min_forgets_old_minimum() {
        let mut m = MinMax::default();
        let w = Nanos::from_secs(10);
        assert_eq!(m.get(), None);
        m.running_min(w, Nanos::from_secs(0), ms(40));
        m.running_min(w, Nanos::from_secs(1), ms(60));
        assert_eq!(m.get(), Some(ms(40)));
        m.running_min(w, Nanos::from_secs(4), ms(70));
        m.running_min(w, Nanos::from_secs(7), ms(80));
        // 11 s: the 40 ms sample is out of the window; the best left is 60 ms… or the
        // later candidates the filter kept (60 ms was taken in the first quarter).
        let v = m.running_min(w, Nanos::from_secs(11), ms(90));
        assert!(v > ms(40) && v <= ms(80), "{v}");
        // A new minimum replaces everything.
        assert_eq!(m.running_min(w, Nanos::from_secs(12), ms(30)), ms(30));
    }
}
