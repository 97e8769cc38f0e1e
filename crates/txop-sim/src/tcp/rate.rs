//! Delivery-rate estimation (Linux `net/ipv4/tcp_rate.c`;
//! draft-cheng-iccrg-delivery-rate-estimation-02): what BBR's bandwidth model is built
//! from.
//!
//! Each transmission snapshots the connection's delivery state in the segment
//! ([`TxRateInfo`]: `delivered`, `delivered_mstamp`, `first_tx_mstamp`,
//! `is_app_limited`). When an ACK (or SACK) delivers segments, the most recently sent
//! of them gives the sample: `delivered` = segments delivered since it was sent,
//! over the longer of the send phase (`first_tx_mstamp` → its send time) and the ACK
//! phase (`delivered_mstamp` → now). Samples shorter than the minimum RTT are
//! invalid (they would overestimate the rate). A sample is application-limited when
//! the application left a bubble (nothing to send, the window not full, nothing lost
//! to retransmit) while its segment was in flight (`tcp_rate_check_app_limited`).
//!
//! Times are kept in nanoseconds where Linux keeps microseconds.

use super::sack::TxSeg;
use txop_core::Nanos;

/// The delivery state a segment carries from its (re)transmission (`tcp_skb_cb.tx`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TxRateInfo {
    /// `first_tx_mstamp` when it was sent: start of the send phase.
    pub first_tx: Nanos,
    /// `delivered_mstamp` when it was sent; `None` once it has been SACKed (so a later
    /// cumulative ACK does not count it twice).
    pub delivered_at: Option<Nanos>,
    /// `tp->delivered` when it was sent.
    pub delivered: u64,
    /// The connection was application-limited when it was sent.
    pub app_limited: bool,
}

/// One ACK's rate sample (`struct rate_sample`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RateSample {
    /// `tp->delivered` when the sampled segment was sent.
    pub prior_delivered: u64,
    /// `delivered_mstamp` when the sampled segment was sent (`None`: no sample).
    pub prior_mstamp: Option<Nanos>,
    /// Segments delivered over the interval; `None` when the sample is invalid.
    pub delivered: Option<u64>,
    /// Sampling interval (max of send and ACK phases); `None` when invalid.
    pub interval: Option<Nanos>,
    /// Segments newly ACKed or SACKed by this ACK.
    pub acked_sacked: u32,
    /// Segments newly marked lost on this ACK.
    pub losses: u32,
    /// `tcp_packets_in_flight` before this ACK.
    pub prior_in_flight: u32,
    /// RTT of the most recently sent segment this ACK (S)ACKed (`rs->rtt_us`).
    pub rtt: Option<Nanos>,
    /// The sampled segment was sent while application-limited.
    pub is_app_limited: bool,
    /// The sampled segment was a retransmission.
    pub is_retrans: bool,
    /// Send time and end of the sampled segment (`tcp_skb_sent_after` ordering).
    pub last_sent: Option<(Nanos, u64)>,
    /// Send time of the most recently sent clean segment newly SACKed (`last_sackt`).
    pub last_sackt: Option<Nanos>,
}

impl RateSample {
    /// A sample for an ACK that found `prior_in_flight` segments in flight.
    pub fn new(prior_in_flight: u32) -> RateSample {
        RateSample {
            prior_in_flight,
            ..RateSample::default()
        }
    }

    /// The delivery rate in segments per second, when valid.
    #[cfg(test)]
    pub fn rate_segments_per_s(&self) -> Option<f64> {
        let (d, i) = (self.delivered?, self.interval?);
        Some(d as f64 / i.as_secs_f64())
    }
}

/// The connection's delivery-rate state (the `tcp_sock` fields of `tcp_rate.c`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RateEstimator {
    /// Time of the last delivery (`delivered_mstamp`).
    delivered_mstamp: Nanos,
    /// Send time of the most recently delivered segment (`first_tx_mstamp`).
    first_tx_mstamp: Nanos,
    /// `tp->app_limited`: 0, or the `delivered` count after which the bubble is gone.
    app_limited: u64,
    /// The sample `tcp_info` reports (`tp->rate_delivered`, `tp->rate_interval_us`):
    /// the last one not application-limited, or an application-limited one at least as
    /// fast; `None` before the first valid sample.
    reported: Option<ReportedRate>,
}

/// A delivery-rate sample as `tcp_info`'s `tcpi_delivery_rate` reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ReportedRate {
    /// Segments delivered over the interval (`rate_delivered`).
    delivered: u64,
    /// The sample's interval (`rate_interval_us`), > 0.
    interval: Nanos,
}

impl RateEstimator {
    /// `tcp_rate_skb_sent`: the snapshot for a segment sent at `now`, with
    /// `packets_out` segments outstanding before it and `delivered` delivered so far.
    pub fn on_send(&mut self, now: Nanos, packets_out: u32, delivered: u64) -> TxRateInfo {
        if packets_out == 0 {
            // Nothing in flight: the interval starts now.
            self.first_tx_mstamp = now;
            self.delivered_mstamp = now;
        }
        TxRateInfo {
            first_tx: self.first_tx_mstamp,
            delivered_at: Some(self.delivered_mstamp),
            delivered,
            app_limited: self.app_limited != 0,
        }
    }

    /// `tcp_rate_skb_delivered`: segment `seg` was (S)ACKed; keep the delivery state of
    /// the most recently sent one (latest send time, then highest sequence).
    /// `sacked`: delivered by a SACK block (and counted once: the caller clears its
    /// `delivered_at`).
    pub fn on_delivered(&mut self, seg: &TxSeg, sacked: bool, rs: &mut RateSample) {
        let Some(delivered_at) = seg.rate.delivered_at else {
            return;
        };
        if sacked && !seg.ever_retrans {
            rs.last_sackt = Some(rs.last_sackt.map_or(seg.sent_at, |t| t.max(seg.sent_at)));
        }
        // tcp_skb_sent_after(tx_tstamp, first_tx_mstamp, end_seq, last_end_seq)
        let newer = match rs.last_sent {
            None => true,
            Some((t, end)) => seg.sent_at > t || (seg.sent_at == t && seg.end() > end),
        };
        if rs.prior_mstamp.is_none() || newer {
            rs.prior_delivered = seg.rate.delivered;
            rs.prior_mstamp = Some(delivered_at);
            rs.is_app_limited = seg.rate.app_limited;
            rs.is_retrans = seg.ever_retrans;
            rs.last_sent = Some((seg.sent_at, seg.end()));
            self.first_tx_mstamp = seg.sent_at;
            // The send phase of this window.
            rs.interval = Some(seg.sent_at.saturating_sub(seg.rate.first_tx));
        }
    }

    /// `tcp_rate_gen`: finish the sample of an ACK at `now` that newly delivered
    /// `newly_delivered` segments (the connection total is now `delivered`) and newly
    /// marked `newly_lost` lost; `min_rtt` is the connection's (`tcp_min_rtt`).
    pub fn generate(
        &mut self,
        now: Nanos,
        delivered: u64,
        newly_delivered: u32,
        newly_lost: u32,
        min_rtt: Option<Nanos>,
        rs: &mut RateSample,
    ) {
        // The bubble is acknowledged and gone.
        if self.app_limited != 0 && delivered > self.app_limited {
            self.app_limited = 0;
        }
        if newly_delivered > 0 {
            self.delivered_mstamp = now;
        }
        rs.acked_sacked = newly_delivered;
        rs.losses = newly_lost;
        let Some(prior_mstamp) = rs.prior_mstamp else {
            rs.delivered = None;
            rs.interval = None;
            return;
        };
        rs.delivered = Some(delivered - rs.prior_delivered);
        // Sending and ACKing are separate pipeline phases: use the longer.
        let snd = rs.interval.unwrap_or(Nanos::ZERO);
        let ack = now.saturating_sub(prior_mstamp);
        let interval = snd.max(ack);
        // Shorter than a round trip: not a trustworthy sample.
        if min_rtt.is_some_and(|m| interval < m) || interval == Nanos::ZERO {
            rs.interval = None;
            return;
        }
        rs.interval = Some(interval);
        // Record the last non-app-limited or the highest app-limited bw (the end of
        // `tcp_rate_gen`).
        let delivered = delivered - rs.prior_delivered;
        let keep = !rs.is_app_limited
            || self.reported.is_none_or(|r| {
                delivered as u128 * r.interval.as_ns() as u128
                    >= r.delivered as u128 * interval.as_ns() as u128
            });
        if keep {
            self.reported = Some(ReportedRate {
                delivered,
                interval,
            });
        }
    }

    /// The delivery rate `tcp_info` reports (`tcp_compute_delivery_rate`:
    /// `rate_delivered` × MSS over `rate_interval_us`), payload bytes per second, for
    /// segments of `mss_bytes`; `None` before the first valid sample.
    pub fn delivery_rate_bytes_per_s(&self, mss_bytes: u32) -> Option<u64> {
        let r = self.reported?;
        Some(
            (r.delivered as u128 * mss_bytes as u128 * 1_000_000_000 / r.interval.as_ns() as u128)
                as u64,
        )
    }

    /// `tcp_rate_check_app_limited`: the application has less than a segment left
    /// to send (`no_data`), the window is not full, and every lost segment has been
    /// retransmitted: mark a bubble that lasts until what is in flight is delivered.
    pub fn check_app_limited(
        &mut self,
        no_data: bool,
        delivered: u64,
        in_flight: u32,
        cwnd: u32,
        lost_out: u32,
        retrans_out: u32,
    ) {
        if no_data && in_flight < cwnd && lost_out <= retrans_out {
            self.mark_app_limited(delivered, in_flight);
        }
    }

    /// Set the bubble: samples of segments sent from now on are application-limited
    /// until the `delivered + in_flight`-th delivery (`tp->app_limited`; BBR also sets
    /// it in PROBE_RTT).
    pub fn mark_app_limited(&mut self, delivered: u64, in_flight: u32) {
        self.app_limited = (delivered + in_flight as u64).max(1);
    }

    /// The connection is application-limited (`tp->app_limited != 0`).
    pub fn is_app_limited(&self) -> bool {
        self.app_limited != 0
    }

    /// Time of the last delivery (`tp->delivered_mstamp`).
    pub fn delivered_mstamp(&self) -> Nanos {
        self.delivered_mstamp
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(seq: u64, sent_at: Nanos, rate: TxRateInfo) -> TxSeg {
        TxSeg {
            seq,
            len: 1000,
            sent_at,
            sacked: false,
            lost: false,
            retrans: false,
            ever_retrans: false,
            rate,
        }
    }

    fn ms(v: u64) -> Nanos {
        Nanos::from_ms(v)
    }

    /// A window of 10 segments sent back to back at t = 0 and ACKed one per ms from
    /// t = 100 ms: each ACK's sample is (segments delivered since the sampled one was
    /// sent) / (time since the first delivery it saw) — the ACK rate, 1 per ms, once
    /// the ACK phase is longer than the send phase.
    #[test]
    fn samples_are_delivered_over_the_longer_phase() {
        let mut r = RateEstimator::default();
        let mut segs = vec![];
        for i in 0..10u64 {
            let info = r.on_send(Nanos::ZERO, i as u32, 0);
            segs.push(seg(i * 1000, Nanos::ZERO, info));
        }
        assert!(segs
            .iter()
            .all(|s| s.rate.delivered_at == Some(Nanos::ZERO)));
        let mut delivered = 0;
        // First ACK at 100 ms: 1 segment over 100 ms.
        let mut rs = RateSample::new(10);
        r.on_delivered(&segs[0], false, &mut rs);
        delivered += 1;
        r.generate(ms(100), delivered, 1, 0, Some(ms(100)), &mut rs);
        assert_eq!((rs.delivered, rs.interval), (Some(1), Some(ms(100))));
        // A segment sent now (after the first delivery) starts its ACK phase at 100 ms.
        let info = r.on_send(ms(100), 9, delivered);
        assert_eq!(
            (info.delivered_at, info.delivered, info.first_tx),
            (Some(ms(100)), 1, Nanos::ZERO)
        );
        // Second ACK at 101 ms for segment 1 (sent at 0): interval 101 ms (from the
        // ACK-phase start of 0), 2 delivered.
        let mut rs = RateSample::new(9);
        r.on_delivered(&segs[1], false, &mut rs);
        delivered += 1;
        r.generate(ms(101), delivered, 1, 0, Some(ms(100)), &mut rs);
        assert_eq!((rs.delivered, rs.interval), (Some(2), Some(ms(101))));
        // Segments 2..9 are ACKed at 110 ms; the new segment (sent at 100 ms when 1 was
        // delivered) at 200 ms: 11 − 1 = 10 delivered over 200 − 100 ms.
        for s in &segs[2..] {
            let mut rs = RateSample::new(8);
            r.on_delivered(s, false, &mut rs);
            delivered += 1;
            r.generate(ms(110), delivered, 1, 0, Some(ms(100)), &mut rs);
        }
        let mut rs = RateSample::new(1);
        let late = seg(10_000, ms(100), info);
        r.on_delivered(&late, false, &mut rs);
        delivered += 1;
        r.generate(ms(200), delivered, 1, 0, Some(ms(100)), &mut rs);
        assert_eq!((rs.delivered, rs.interval), (Some(10), Some(ms(100))));
        assert_eq!(rs.rate_segments_per_s(), Some(100.0));
    }

    /// An ACK covering several segments samples the most recently sent; SACKed
    /// segments are not sampled again by the cumulative ACK; short intervals are
    /// invalid.
    #[test]
    fn newest_segment_wins_and_short_samples_are_invalid() {
        let mut r = RateEstimator::default();
        let a = seg(0, ms(0), r.on_send(ms(0), 0, 0));
        let b = seg(1000, ms(5), r.on_send(ms(5), 1, 0));
        let mut rs = RateSample::new(2);
        r.on_delivered(&b, true, &mut rs);
        r.on_delivered(&a, false, &mut rs);
        assert_eq!(rs.last_sackt, Some(ms(5)));
        assert_eq!(rs.last_sent, Some((ms(5), 2000)));
        // Interval 50 ms, below a min RTT of 60 ms: invalid.
        r.generate(ms(50), 2, 2, 0, Some(ms(60)), &mut rs);
        assert_eq!(rs.delivered, Some(2));
        assert_eq!(rs.interval, None);
        // Cleared delivery stamp: not sampled.
        let mut cleared = b;
        cleared.rate.delivered_at = None;
        let mut rs = RateSample::new(0);
        r.on_delivered(&cleared, false, &mut rs);
        r.generate(ms(60), 2, 0, 0, Some(ms(60)), &mut rs);
        assert_eq!((rs.delivered, rs.interval), (None, None));
    }

    /// The application-limited bubble marks what is sent during it and ends when the
    /// data in flight at its start has been delivered.
    #[test]
    fn app_limited_bubble() {
        let mut r = RateEstimator::default();
        r.check_app_limited(true, 10, 5, 5, 0, 0);
        assert!(!r.is_app_limited(), "window full: not app-limited");
        r.check_app_limited(true, 10, 4, 5, 1, 0);
        assert!(!r.is_app_limited(), "a lost segment waits: not app-limited");
        r.check_app_limited(true, 10, 4, 5, 0, 0);
        assert!(r.is_app_limited());
        assert!(r.on_send(ms(1), 4, 10).app_limited);
        let mut rs = RateSample::new(4);
        r.generate(ms(2), 14, 4, 0, None, &mut rs);
        assert!(r.is_app_limited(), "14 delivered: the bubble ends after 14");
        r.generate(ms(3), 15, 1, 0, None, &mut rs);
        assert!(!r.is_app_limited());
        assert!(!r.on_send(ms(3), 1, 15).app_limited);
    }
}
