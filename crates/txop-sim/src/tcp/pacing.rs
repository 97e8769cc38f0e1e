//! Linux internal TCP pacing (`tcp_update_pacing_rate` in `tcp_input.c`,
//! `tcp_update_skb_after_send` and `tcp_pacing_check` in `tcp_output.c`).
//!
//! Rate = mss × max(cwnd, packets_out) / srtt × 200 % while cwnd < ssthresh / 2
//! (`tcp_pacing_ss_ratio`), else × 120 % (`tcp_pacing_ca_ratio`). No pacing before the
//! first RTT sample (Linux's rate is then unlimited) nor for the first 10 segments
//! (`data_segs_out < 10`, as the original `sch_fq`). Each segment moves the release
//! time on by len / rate, less up to half of that when the segment left late (Linux's
//! "OS jitter" credit).

use txop_core::Nanos;

/// `sysctl_tcp_pacing_ss_ratio` (%).
pub const PACING_SS_RATIO: u64 = 200;
/// `sysctl_tcp_pacing_ca_ratio` (%).
pub const PACING_CA_RATIO: u64 = 120;
/// Segments sent before pacing starts.
const UNPACED_SEGMENTS: u64 = 10;

/// Pacing state of one sender.
#[derive(Clone, Debug, Default)]
pub struct Pacer {
    /// Bytes per second; `None` = unlimited.
    rate: Option<u64>,
    /// Earliest time the next segment may leave (`tcp_wstamp_ns`).
    next_send: Nanos,
    /// Data segments sent (`data_segs_out`).
    segs_out: u64,
}

impl Pacer {
    /// `tcp_update_pacing_rate`.
    pub fn update_rate(
        &mut self,
        mss: u32,
        cwnd: u32,
        ssthresh: u32,
        packets_out: u32,
        srtt: Option<Nanos>,
    ) {
        let Some(srtt) = srtt else {
            self.rate = None;
            return;
        };
        let ratio = if cwnd < ssthresh / 2 {
            PACING_SS_RATIO
        } else {
            PACING_CA_RATIO
        };
        let (a, b, c) = (mss as u64, cwnd.max(packets_out) as u64, ratio);
        let div = srtt.as_ns().max(1);
        // In 64 bits when nothing overflows (always, for realistic windows and RTTs):
        // the 128-bit division is a library call and this runs for every segment sent.
        let fast = a
            .checked_mul(b)
            .and_then(|x| x.checked_mul(c))
            .and_then(|x| x.checked_mul(1_000_000_000))
            .zip(div.checked_mul(100))
            .map(|(num, den)| num / den);
        let rate = match fast {
            Some(r) => r,
            None => {
                let bytes = a as u128 * b as u128 * c as u128;
                let rate = bytes * 1_000_000_000 / (100 * div as u128);
                rate.min(u64::MAX as u128) as u64
            }
        };
        self.rate = Some(rate.max(1));
    }

    /// Set the rate a congestion-control module chose (BBR's `sk_pacing_rate`),
    /// bytes per second.
    pub fn set_rate(&mut self, rate: u64) {
        self.rate = Some(rate.max(1));
    }

    /// Current rate (bytes per second), if pacing.
    pub fn rate(&self) -> Option<u64> {
        self.rate
    }

    /// `tcp_pacing_check` passes: nothing holds a segment back at `now`.
    pub fn may_send(&self, now: Nanos) -> bool {
        now >= self.next_send
    }

    /// Release time of the next segment.
    pub fn next_send(&self) -> Nanos {
        self.next_send
    }

    /// Let the next segment go at once (the retransmission timer sends its segment
    /// directly, without the pacing check).
    pub fn release_now(&mut self, now: Nanos) {
        self.next_send = self.next_send.min(now);
    }

    /// A segment of `len` payload bytes left at `now`.
    pub fn on_send(&mut self, now: Nanos, len: u32) {
        self.segs_out += 1;
        let prior = self.next_send;
        self.next_send = self.next_send.max(now);
        let Some(rate) = self.rate else { return };
        if self.segs_out < UNPACED_SEGMENTS {
            return;
        }
        // `len × 10⁹` always fits in 64 bits (`len` is a u32).
        let len_ns = len as u64 * 1_000_000_000 / rate;
        let credit = self.next_send.saturating_sub(prior).as_ns();
        self.next_send += Nanos(len_ns - credit.min(len_ns / 2));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_is_200_percent_in_slow_start_and_120_after() {
        let mut p = Pacer::default();
        p.update_rate(1000, 10, u32::MAX, 0, None);
        assert_eq!(p.rate(), None);
        // 10 × 1000 B per 100 ms = 100 kB/s; × 2 in slow start.
        p.update_rate(1000, 10, u32::MAX, 0, Some(Nanos::from_ms(100)));
        assert_eq!(p.rate(), Some(200_000));
        // cwnd ≥ ssthresh / 2: × 1.2; packets_out above cwnd counts.
        p.update_rate(1000, 10, 20, 12, Some(Nanos::from_ms(100)));
        assert_eq!(p.rate(), Some(144_000));
    }

    #[test]
    fn spacing_after_the_first_ten_segments() {
        let mut p = Pacer::default();
        p.update_rate(1000, 10, 10, 0, Some(Nanos::from_ms(12))); // 1 MB/s
        let now = Nanos::from_secs(1);
        for _ in 0..9 {
            assert!(p.may_send(now));
            p.on_send(now, 1000);
        }
        assert!(p.may_send(now));
        p.on_send(now, 1000); // the 10th is paced: next at +1 ms
        assert!(!p.may_send(now));
        assert_eq!(p.next_send(), now + Nanos::from_ms(1));
        let t = p.next_send();
        p.on_send(t, 1000);
        assert_eq!(p.next_send(), t + Nanos::from_ms(1));
        // Sending 10 ms late earns half a slot of credit.
        let late = p.next_send() + Nanos::from_ms(10);
        p.on_send(late, 1000);
        assert_eq!(p.next_send(), late + Nanos::from_us(500));
    }
}
