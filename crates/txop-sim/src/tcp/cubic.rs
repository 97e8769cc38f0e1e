//! CUBIC as Linux implements it (`net/ipv4/tcp_cubic.c`, Linux 6.13; RFC 9438).
//!
//! Everything in segments and Linux's fixed point, so the trajectory matches the
//! kernel's to the segment:
//!
//! - On a congestion event (`cubictcp_recalc_ssthresh`): the epoch ends; `W_max` =
//!   cwnd, or cwnd × (1 + β)/2 if cwnd is below the previous `W_max` (fast
//!   convergence); ssthresh = max(cwnd × β, 2) with β = 717/1024.
//! - In congestion avoidance (`bictcp_update`): the epoch starts at the first ACK
//!   after the reduction with K = cbrt((W_max − cwnd) / C) (`cubic_root`, table +
//!   one Newton step, in 1/1024 s), C = 410/1024; the target is
//!   W(t) = C (t − K)³ + W_max with t = now − epoch_start + delay_min (one RTT ahead);
//!   cwnd grows by 1 every `cnt` = cwnd / (target − cwnd) ACKed segments (at most 1
//!   per 2, i.e. ×1.5 per RTT; at least 1 per 100·cwnd); `cnt` is recomputed at most
//!   once per jiffy, and not within HZ/32 while cwnd is unchanged.
//! - TCP-friendly region: a Reno-equivalent window `tcp_cwnd` grows by 1 per
//!   cwnd × 15/8 ACKed segments (≈ 3(1 − β)/(1 + β) = 0.53 segments per RTT) and
//!   caps `cnt` so cwnd is never slower than it.
//! - Before the first loss (`W_max` = 0) growth is at least 5 % per RTT (`cnt` ≤ 20).
//! - HyStart (`hystart_update`, delay detection only): from cwnd ≥ 16 in slow start,
//!   the minimum of the first 8 RTT samples of a round (a round ends when `snd_una`
//!   passes the `snd_nxt` of its start) is compared with `delay_min` +
//!   clamp(delay_min / 8, 4 ms, 16 ms); above it, ssthresh = cwnd (slow start ends).
//!   HyStart's ACK-train detection (also on by default in Linux) is not modelled.
//! - `delay_min` is the minimum RTT sample ever (samples within 1 s of an epoch start
//!   are ignored); an RTO resets everything (`cubictcp_state(TCP_CA_Loss)`).
//!
//! Time is counted in jiffies of 1 ms (`CONFIG_HZ=1000`).

use super::cc::{AckedSample, Window};
use txop_core::Nanos;

/// `BICTCP_BETA_SCALE`.
pub const BICTCP_BETA_SCALE: u32 = 1024;
/// β × 1024 (`beta` module parameter, 717 ≈ 0.7).
pub const BETA: u32 = 717;
/// C × 1024 / 10 (`bic_scale`, 41: C = 410/1024 ≈ 0.4).
pub const BIC_SCALE: u32 = 41;
/// Time unit of K and t: 1/2^10 s (`BICTCP_HZ`).
const BICTCP_HZ: u32 = 10;
/// Jiffies per second.
const HZ: u64 = 1000;
/// `hystart_low_window`.
pub const HYSTART_LOW_WINDOW: u32 = 16;
/// `HYSTART_MIN_SAMPLES`.
pub const HYSTART_MIN_SAMPLES: u8 = 8;
/// `HYSTART_DELAY_MIN` (µs).
pub const HYSTART_DELAY_MIN_US: u32 = 4000;
/// `HYSTART_DELAY_MAX` (µs).
pub const HYSTART_DELAY_MAX_US: u32 = 16000;

/// `beta_scale` = 8 (1024 + β) / 3 / (1024 − β) = 15 (integer arithmetic).
const BETA_SCALE: u32 = 8 * (BICTCP_BETA_SCALE + BETA) / 3 / (BICTCP_BETA_SCALE - BETA);
/// `cube_rtt_scale` = bic_scale × 10.
const CUBE_RTT_SCALE: u128 = BIC_SCALE as u128 * 10;
/// `cube_factor` = 2^40 / (bic_scale × 10).
const CUBE_FACTOR: u64 = (1u64 << (10 + 3 * BICTCP_HZ)) / (BIC_SCALE as u64 * 10);

fn jiffies(t: Nanos) -> u64 {
    t.as_ns() / (1_000_000_000 / HZ)
}

/// `usecs_to_jiffies` (rounds up).
fn usecs_to_jiffies(us: u32) -> u64 {
    (us as u64).div_ceil(1_000_000 / HZ)
}

/// Linux's `cubic_root`: a table lookup on the top bits and one Newton-Raphson step
/// (average error ≈ 0.2 %).
pub fn cubic_root(a: u64) -> u32 {
    const V: [u8; 64] = [
        0, 54, 54, 54, 118, 118, 118, 118, 123, 129, 134, 138, 143, 147, 151, 156, 157, 161, 164,
        168, 170, 173, 176, 179, 181, 185, 187, 190, 192, 194, 197, 199, 200, 202, 204, 206, 209,
        211, 213, 215, 217, 219, 221, 222, 224, 225, 227, 229, 231, 232, 234, 236, 237, 239, 240,
        242, 244, 245, 246, 248, 250, 251, 252, 254,
    ];
    let b = 64 - a.leading_zeros();
    if b < 7 {
        return (V[a as usize] as u32 + 35) >> 6;
    }
    let b = ((b * 84) >> 8) - 1;
    let shift = (a >> (b * 3)) as usize;
    let mut x = ((V[shift] as u32 + 10) << b) >> 6;
    x = 2 * x + (a / (x as u64 * (x as u64 - 1))) as u32;
    ((x as u64 * 341) >> 10) as u32
}

/// CUBIC state (`struct bictcp`).
#[derive(Clone, Debug)]
pub struct Cubic {
    hystart: bool,
    /// Increase cwnd by 1 after this many ACKed segments.
    cnt: u32,
    /// W_max (segments).
    last_max_cwnd: u32,
    last_cwnd: u32,
    /// Jiffy of the last `cnt` computation.
    last_time: u64,
    bic_origin_point: u32,
    /// K in 1/1024 s.
    bic_k: u32,
    /// Minimum RTT sample (µs), 0 = none.
    delay_min_us: u32,
    /// Jiffy the epoch started, `None` = no epoch.
    epoch_start: Option<u64>,
    ack_cnt: u32,
    /// Reno-equivalent window (segments).
    tcp_cwnd: u32,
    found: bool,
    /// HyStart round ends when snd_una passes this.
    end_seq: u64,
    /// Minimum RTT of the round's first samples (µs).
    curr_rtt_us: u32,
    sample_cnt: u8,
    hystart_exit_cwnd: Option<u32>,
}

impl Cubic {
    /// `cubictcp_init` (the round starts at sequence 0).
    pub fn new(hystart: bool) -> Cubic {
        Cubic {
            hystart,
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            bic_origin_point: 0,
            bic_k: 0,
            delay_min_us: 0,
            epoch_start: None,
            ack_cnt: 0,
            tcp_cwnd: 0,
            found: false,
            end_seq: 0,
            curr_rtt_us: u32::MAX,
            sample_cnt: 0,
            hystart_exit_cwnd: None,
        }
    }

    /// `bictcp_reset`.
    fn reset(&mut self) {
        *self = Cubic {
            end_seq: self.end_seq,
            curr_rtt_us: self.curr_rtt_us,
            sample_cnt: self.sample_cnt,
            hystart_exit_cwnd: self.hystart_exit_cwnd,
            ..Cubic::new(self.hystart)
        };
    }

    /// `bictcp_hystart_reset`: a new round starts.
    fn hystart_reset(&mut self, snd_nxt: u64) {
        self.end_seq = snd_nxt;
        self.curr_rtt_us = u32::MAX;
        self.sample_cnt = 0;
    }

    /// W_max (segments; 0 before the first congestion event).
    pub fn w_max(&self) -> u32 {
        self.last_max_cwnd
    }

    /// cwnd at which HyStart ended slow start.
    pub fn hystart_exit_cwnd(&self) -> Option<u32> {
        self.hystart_exit_cwnd
    }

    /// `bictcp_update`: recompute `cnt` for the window `cwnd`.
    fn update(&mut self, cwnd: u32, acked: u32, now: u64) {
        self.ack_cnt = self.ack_cnt.wrapping_add(acked);
        if self.last_cwnd == cwnd && now.saturating_sub(self.last_time) <= HZ / 32 {
            return;
        }
        if !(self.epoch_start.is_some() && now == self.last_time) {
            self.last_cwnd = cwnd;
            self.last_time = now;
            let epoch_start = match self.epoch_start {
                Some(e) => e,
                None => {
                    self.epoch_start = Some(now);
                    self.ack_cnt = acked;
                    self.tcp_cwnd = cwnd;
                    if self.last_max_cwnd <= cwnd {
                        self.bic_k = 0;
                        self.bic_origin_point = cwnd;
                    } else {
                        self.bic_k = cubic_root(CUBE_FACTOR * (self.last_max_cwnd - cwnd) as u64);
                        self.bic_origin_point = self.last_max_cwnd;
                    }
                    now
                }
            };
            // t = now − epoch_start + delay_min, in 1/1024 s.
            let t_jiffies = now.saturating_sub(epoch_start) + usecs_to_jiffies(self.delay_min_us);
            let t = (t_jiffies << BICTCP_HZ) / HZ;
            let k = self.bic_k as u64;
            let offs = t.abs_diff(k) as u128;
            let delta = ((CUBE_RTT_SCALE * offs * offs * offs) >> (10 + 3 * BICTCP_HZ))
                .min(u32::MAX as u128) as u32;
            let bic_target = if t < k {
                self.bic_origin_point.saturating_sub(delta)
            } else {
                self.bic_origin_point.saturating_add(delta)
            };
            self.cnt = if bic_target > cwnd {
                cwnd / (bic_target - cwnd)
            } else {
                100 * cwnd
            };
            if self.last_max_cwnd == 0 && self.cnt > 20 {
                self.cnt = 20;
            }
        }
        // TCP friendliness.
        let delta = ((cwnd * BETA_SCALE) >> 3).max(1);
        if self.ack_cnt > delta {
            let n = (self.ack_cnt - 1) / delta;
            self.ack_cnt -= n * delta;
            self.tcp_cwnd += n;
        }
        if self.tcp_cwnd > cwnd {
            let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
            self.cnt = self.cnt.min(max_cnt);
        }
        self.cnt = self.cnt.max(2);
    }

    /// `cubictcp_cong_avoid`.
    pub fn cong_avoid(&mut self, w: &mut Window, now: Nanos, acked: u32, cwnd_limited: bool) {
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
        self.update(w.cwnd, acked, jiffies(now));
        w.cong_avoid_ai(self.cnt, acked);
    }

    /// `cubictcp_recalc_ssthresh`: end the epoch, set W_max (fast convergence) and
    /// return cwnd × β.
    pub fn recalc_ssthresh(&mut self, w: &Window) -> u32 {
        self.epoch_start = None;
        self.last_max_cwnd = if w.cwnd < self.last_max_cwnd {
            ((w.cwnd as u64 * (BICTCP_BETA_SCALE + BETA) as u64) / (2 * BICTCP_BETA_SCALE) as u64)
                as u32
        } else {
            w.cwnd
        };
        ((w.cwnd as u64 * BETA as u64 / BICTCP_BETA_SCALE as u64) as u32).max(2)
    }

    /// `cubictcp_state(TCP_CA_Loss)`.
    pub fn on_enter_loss(&mut self, _now: Nanos, snd_nxt: u64) {
        self.reset();
        self.hystart_reset(snd_nxt);
    }

    /// `cubictcp_cwnd_event(CA_EVENT_TX_START)`: shift the epoch by the idle time so
    /// growth continues on the curve.
    pub fn on_tx_start(&mut self, now: Nanos, last_send: Nanos) {
        let now = jiffies(now);
        let delta = now.saturating_sub(jiffies(last_send));
        if let Some(e) = self.epoch_start.as_mut() {
            if delta > 0 {
                *e = (*e + delta).min(now);
            }
        }
    }

    /// `cubictcp_acked`: track `delay_min`, run HyStart.
    pub fn acked(&mut self, w: &mut Window, s: &AckedSample) {
        let Some(rtt) = s.rtt else { return };
        if let Some(e) = self.epoch_start {
            if jiffies(s.now).saturating_sub(e) < HZ {
                return;
            }
        }
        let delay = (rtt.as_us().min(u32::MAX as u64) as u32).max(1);
        if self.delay_min_us == 0 || self.delay_min_us > delay {
            self.delay_min_us = delay;
        }
        if !self.found && w.in_slow_start() && self.hystart {
            self.hystart_update(w, delay, s);
        }
    }

    /// `hystart_update` (delay detection).
    fn hystart_update(&mut self, w: &mut Window, delay: u32, s: &AckedSample) {
        if s.snd_una > self.end_seq {
            self.hystart_reset(s.snd_nxt);
        }
        if w.cwnd < HYSTART_LOW_WINDOW {
            return;
        }
        self.curr_rtt_us = self.curr_rtt_us.min(delay);
        if self.sample_cnt < HYSTART_MIN_SAMPLES {
            self.sample_cnt += 1;
        } else {
            let thresh = (self.delay_min_us >> 3).clamp(HYSTART_DELAY_MIN_US, HYSTART_DELAY_MAX_US);
            if self.curr_rtt_us > self.delay_min_us + thresh {
                self.found = true;
                w.ssthresh = w.cwnd;
                self.hystart_exit_cwnd = Some(w.cwnd);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::cc::TCP_INFINITE_SSTHRESH;

    #[test]
    fn constants_match_linux() {
        assert_eq!(BETA_SCALE, 15);
        assert_eq!(CUBE_FACTOR, 2_681_735_677);
    }

    #[test]
    fn cubic_root_is_within_a_percent() {
        for &a in &[
            1u64,
            7,
            63,
            64,
            1000,
            123_456,
            1 << 30,
            2_681_735_677 * 40,
            1 << 50,
        ] {
            let exact = (a as f64).cbrt();
            let got = cubic_root(a) as f64;
            let tol = if a < 64 { 0.6 } else { exact * 0.01 + 1.0 };
            assert!(
                (got - exact).abs() <= tol,
                "cbrt({a}) = {got}, exact {exact}"
            );
        }
        // K for W_max − cwnd = 40 segments: cbrt(40 / 0.4004) s ≈ 4.64 s.
        let k = cubic_root(CUBE_FACTOR * 40) as f64 / 1024.0;
        assert!((k - (40.0f64 / 0.4004).cbrt()).abs() < 0.02, "{k}");
    }

    fn win(cwnd: u32) -> Window {
        Window {
            cwnd,
            cwnd_cnt: 0,
            ssthresh: TCP_INFINITE_SSTHRESH,
            clamp: u32::MAX,
        }
    }

    #[test]
    fn beta_and_fast_convergence() {
        let mut c = Cubic::new(false);
        assert_eq!(c.recalc_ssthresh(&win(100)), 70); // 100 × 717 / 1024 = 70.02
        assert_eq!(c.w_max(), 100);
        // A loss below the previous W_max: W_max = 80 × (1 + β) / 2 = 68.
        assert_eq!(c.recalc_ssthresh(&win(80)), 56);
        assert_eq!(c.w_max(), 68);
        // Above it: plain.
        assert_eq!(c.recalc_ssthresh(&win(90)), 63);
        assert_eq!(c.w_max(), 90);
        assert_eq!(c.recalc_ssthresh(&win(2)), 2);
    }

    /// Congestion avoidance with a steady ACK clock follows max(W_cubic, W_est):
    /// W_cubic(t) = C(t − K)³ + W_max (with t one RTT ahead, as Linux computes it) and
    /// the Reno-friendly W_est(t) = W_epoch + 3(1 − β)/(1 + β) · t / RTT, which wins
    /// for a while on this short RTT.
    #[test]
    fn window_follows_the_cubic_function() {
        for (rtt_ms, friendly_wins) in [(50u64, true), (200, false)] {
            let rtt = Nanos::from_ms(rtt_ms);
            let mut c = Cubic::new(false);
            let mut w = win(100);
            w.ssthresh = c.recalc_ssthresh(&w);
            w.cwnd = w.ssthresh;
            assert_eq!(w.cwnd, 70);
            // One RTT sample (at t = 0, before the epoch).
            let s = AckedSample {
                now: Nanos::ZERO,
                rtt: Some(rtt),
                snd_una: 0,
                snd_nxt: 0,
            };
            c.acked(&mut w, &s);
            let k = (30.0f64 / 0.4).cbrt();
            let beta = 717.0 / 1024.0;
            let alpha = 3.0 * (1.0 - beta) / (1.0 + beta);
            let mut now = Nanos::from_ms(1);
            let start = now;
            let mut worst: f64 = 0.0;
            let mut friendly = false;
            while now < start + Nanos::from_secs(8) {
                // A window of ACKs per RTT, one segment each, evenly spread.
                let gap = Nanos(rtt.0 / w.cwnd as u64);
                c.cong_avoid(&mut w, now, 1, true);
                now += gap;
                let t = (now - start).as_secs_f64();
                let w_cubic = 0.4 * (t + rtt.as_secs_f64() - k).powi(3) + 100.0;
                let w_est = 70.0 + alpha * t / rtt.as_secs_f64();
                friendly |= w_est > w_cubic + 1.0;
                let target = w_cubic.max(w_est);
                if t > 0.5 {
                    worst = worst.max((w.cwnd as f64 - target).abs() / target);
                }
            }
            assert_eq!(friendly, friendly_wins);
            // cwnd lags a fast-rising target by up to a round trip's growth.
            assert!(
                worst < 0.05,
                "RTT {rtt_ms} ms: worst relative error {worst}"
            );
            assert!(w.cwnd > 110, "convex region reached: {}", w.cwnd);
        }
    }

    #[test]
    fn before_the_first_loss_growth_is_at_least_five_percent_per_rtt() {
        let mut c = Cubic::new(false);
        let mut w = win(100);
        w.ssthresh = 100;
        let rtt = Nanos::from_ms(50);
        let mut now = Nanos::from_ms(1);
        for _ in 0..100 {
            c.cong_avoid(&mut w, now, 1, true);
            now += Nanos(rtt.0 / 100);
        }
        assert_eq!(w.cwnd, 105);
    }

    #[test]
    fn hystart_exits_on_delay_increase() {
        let mut c = Cubic::new(true);
        let mut w = win(20);
        // Round r: snd_una just past the previous round's end, snd_nxt one round on.
        let mk = |now: u64, rtt_ms: u64, round: u64, i: u64| AckedSample {
            now: Nanos::from_ms(now),
            rtt: Some(Nanos::from_ms(rtt_ms)),
            snd_una: round * 1_000_000 + 1 + i,
            snd_nxt: (round + 1) * 1_000_000,
        };
        // Round 0 at the base RTT of 40 ms.
        for i in 0..10 {
            c.acked(&mut w, &mk(40 + i, 40, 0, i));
        }
        assert!(w.in_slow_start());
        // Round 1: RTTs 4 ms higher stay below 40 + clamp(5, 4, 16) = 45 ms.
        for i in 0..10 {
            c.acked(&mut w, &mk(100 + i, 44, 1, i));
        }
        assert!(w.in_slow_start());
        // Round 2, whose minimum is 46 ms: exit after 8 samples.
        for i in 0..10 {
            c.acked(&mut w, &mk(200 + i, 46, 2, i));
        }
        assert!(!w.in_slow_start());
        assert_eq!(w.ssthresh, 20);
        assert_eq!(c.hystart_exit_cwnd(), Some(20));
    }
}
