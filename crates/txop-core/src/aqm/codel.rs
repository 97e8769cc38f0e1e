//! CoDel exactly as Linux implements it (`include/net/codel.h`, `codel_impl.h`;
//! reference §2.4).
//!
//! Differences from RFC 8289 that matter and are reproduced here:
//! - time is a `u32` count of 1024-ns units (`CODEL_SHIFT = 10`), compared wrap-safely;
//! - the dropping state is entered only when `now > first_above_time` (strictly);
//! - the minimum-backlog guard compares the flow's byte backlog, after removing the
//!   packet, with `params.mtu_bytes` (fq_codel: the device MTU; mac80211: 0);
//! - 1/√count is a 16-bit fixed-point value refined by one Newton step per change;
//! - ECN-capable packets are CE-marked instead of dropped when `ecn` is on (a packet
//!   already CE too: `INET_ECN_set_ce` succeeds for it, so it counts as a mark and is
//!   delivered; only Not-ECT packets are dropped);
//! - the count-reuse rule: re-entering the dropping state within 16 intervals of the
//!   last drop schedule, after more than one drop, starts at `count − lastcount`.

use crate::packet::Packet;
use crate::Nanos;

/// CoDel time: nanoseconds >> 10, wrapping.
pub type CodelTime = u32;

/// `CODEL_SHIFT`: CoDel's clock counts 1024-ns units.
pub const CODEL_SHIFT: u32 = 10;

/// Convert model time to CoDel time (`codel_get_time`).
pub fn codel_time(t: Nanos) -> CodelTime {
    (t.as_ns() >> CODEL_SHIFT) as u32
}

/// A duration in CoDel units (`MS2TIME`/`US2TIME`: ns >> 10, truncated).
pub fn codel_duration(d: Nanos) -> CodelTime {
    (d.as_ns() >> CODEL_SHIFT) as u32
}

fn after(a: CodelTime, b: CodelTime) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}
fn after_eq(a: CodelTime, b: CodelTime) -> bool {
    (a.wrapping_sub(b) as i32) >= 0
}
fn before(a: CodelTime, b: CodelTime) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

/// `REC_INV_SQRT_SHIFT`: rec_inv_sqrt is 16 bits, Q0.32 after this shift.
const REC_INV_SQRT_SHIFT: u32 = 16;

/// CoDel parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodelParams {
    /// Acceptable standing sojourn time.
    pub target: CodelTime,
    /// Sliding window over which the sojourn must stay above target before dropping
    /// starts, and the base of the control law.
    pub interval: CodelTime,
    /// Minimum-backlog guard: no drop while the flow holds at most this many bytes.
    pub mtu_bytes: u32,
    /// Mark ECN-capable packets instead of dropping them.
    pub ecn: bool,
    /// Mark CE above this sojourn (disabled: `None`, as `CODEL_DISABLED_THRESHOLD`).
    pub ce_threshold: Option<CodelTime>,
}

impl CodelParams {
    /// Parameters from model durations (converted to [`CodelTime`] units, ns >> 10),
    /// without a CE threshold.
    pub fn new(target: Nanos, interval: Nanos, mtu_bytes: u32, ecn: bool) -> CodelParams {
        CodelParams {
            target: codel_duration(target),
            interval: codel_duration(interval),
            mtu_bytes,
            ecn,
            ce_threshold: None,
        }
    }

    /// mac80211's TXQ parameters: 20 ms / 100 ms, ECN on, mtu 0 (reference §2.1).
    pub fn mac80211() -> CodelParams {
        CodelParams::new(Nanos::from_ms(20), Nanos::from_ms(100), 0, true)
    }

    /// mac80211's per-station parameters for slow stations (4.10 → 6.15, §2.2):
    /// 50 ms / 300 ms, ECN off.
    pub fn mac80211_slow_station() -> CodelParams {
        CodelParams::new(Nanos::from_ms(50), Nanos::from_ms(300), 0, false)
    }

    /// The fq_codel qdisc's defaults: 5 ms / 100 ms, ECN on, mtu = device MTU.
    pub fn fq_codel_qdisc(mtu_bytes: u32) -> CodelParams {
        CodelParams::new(Nanos::from_ms(5), Nanos::from_ms(100), mtu_bytes, true)
    }
}

/// Per-flow CoDel state (`struct codel_vars`), zero-initialised as in Linux.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CodelVars {
    /// Drops (or marks) since entering the dropping state.
    pub count: u32,
    /// `count` when the dropping state was last entered.
    pub lastcount: u32,
    /// In the dropping state.
    pub dropping: bool,
    /// ≈ 1/√count in Q0.16.
    pub rec_inv_sqrt: u16,
    /// When the sojourn first went above target plus an interval (0: below).
    pub first_above_time: CodelTime,
    /// When the next drop is due in the dropping state.
    pub drop_next: CodelTime,
    /// Sojourn time of the last packet examined.
    pub ldelay: CodelTime,
}

/// Counters (`struct codel_stats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CodelStats {
    /// Largest packet seen, bytes (`maxpacket`).
    pub maxpacket: u32,
    /// Packets dropped (`drop_count`).
    pub drop_count: u64,
    /// Bytes dropped (`drop_len`).
    pub drop_len: u64,
    /// Packets ECN-marked instead of dropped (`ecn_mark`).
    pub ecn_mark: u64,
    /// Packets CE-marked above the CE threshold (`ce_mark`).
    pub ce_mark: u64,
}

/// The queue CoDel dequeues from: one flow's FIFO.
pub trait CodelQueue {
    /// Remove and return the head packet (its `queued_at` is its enqueue time).
    fn dequeue(&mut self) -> Option<Packet>;
    /// Bytes still queued in the flow (after the dequeue above).
    fn backlog_bytes(&self) -> u32;
    /// CoDel dropped `packet` (the queue reports it).
    fn drop(&mut self, packet: Packet);
}

impl CodelVars {
    /// `codel_Newton_step`: refine rec_inv_sqrt for the current count.
    pub fn newton_step(&mut self) {
        let invsqrt = (self.rec_inv_sqrt as u32) << REC_INV_SQRT_SHIFT;
        let invsqrt2 = ((invsqrt as u64 * invsqrt as u64) >> 32) as u32;
        let mut val: u64 = (3u64 << 32).wrapping_sub(self.count as u64 * invsqrt2 as u64);
        val >>= 2; // avoid overflow in the following multiply
                   // u64 arithmetic wraps in C; after fq_codel's overload drops raise `count`
                   // by a batch, the product can exceed 2^64 and must wrap the same way.
        val = val.wrapping_mul(invsqrt as u64) >> (32 - 2 + 1);
        self.rec_inv_sqrt = (val >> REC_INV_SQRT_SHIFT) as u16;
    }

    /// `codel_control_law`: t + interval / √count.
    pub fn control_law(&self, t: CodelTime, interval: CodelTime) -> CodelTime {
        let scale = (self.rec_inv_sqrt as u32) << REC_INV_SQRT_SHIFT;
        t.wrapping_add(((interval as u64 * scale as u64) >> 32) as u32)
    }

    /// `codel_should_drop`.
    fn should_drop(
        &mut self,
        packet: Option<&Packet>,
        backlog_bytes: u32,
        params: &CodelParams,
        stats: &mut CodelStats,
        now: CodelTime,
    ) -> bool {
        let Some(p) = packet else {
            self.first_above_time = 0;
            return false;
        };
        self.ldelay = now.wrapping_sub(codel_time(p.queued_at));
        stats.maxpacket = stats.maxpacket.max(p.len_bytes);
        if before(self.ldelay, params.target) || backlog_bytes <= params.mtu_bytes {
            // Went below: stay below for at least an interval.
            self.first_above_time = 0;
            return false;
        }
        if self.first_above_time == 0 {
            // Just went above: if we stay above for an interval, it is ok to drop.
            self.first_above_time = now.wrapping_add(params.interval);
            false
        } else {
            after(now, self.first_above_time)
        }
    }

    /// `codel_dequeue`: the next packet to send, after CoDel's drops and marks.
    #[inline(always)]
    pub fn dequeue<Q: CodelQueue>(
        &mut self,
        queue: &mut Q,
        params: &CodelParams,
        stats: &mut CodelStats,
        now_ns: Nanos,
    ) -> Option<Packet> {
        // perf: every path returns this one `packet` (never a new `Some` or `None`), so
        // that it can be built where the caller takes it instead of copied there.
        let mut packet = queue.dequeue();
        let Some(p) = packet.as_ref() else {
            self.dropping = false;
            return packet;
        };
        let now = codel_time(now_ns);
        let drop = self.should_drop(Some(p), queue.backlog_bytes(), params, stats, now);
        if self.dropping {
            if !drop {
                // Sojourn below target: leave the dropping state.
                self.dropping = false;
            } else if after_eq(now, self.drop_next) {
                // Time for the next drop(s); a large backlog may need several now.
                while self.dropping && after_eq(now, self.drop_next) {
                    self.count = self.count.wrapping_add(1);
                    self.newton_step();
                    if params.ecn && packet.as_mut().is_some_and(|p| p.ecn.set_ce()) {
                        stats.ecn_mark += 1;
                        self.drop_next = self.control_law(self.drop_next, params.interval);
                        break;
                    }
                    let Some(p) = packet.take() else {
                        break;
                    };
                    stats.drop_len += p.len_bytes as u64;
                    stats.drop_count += 1;
                    queue.drop(p);
                    packet = queue.dequeue();
                    if !self.should_drop(packet.as_ref(), queue.backlog_bytes(), params, stats, now)
                    {
                        self.dropping = false;
                    } else {
                        self.drop_next = self.control_law(self.drop_next, params.interval);
                    }
                }
            }
        } else if drop {
            if params.ecn && packet.as_mut().is_some_and(|p| p.ecn.set_ce()) {
                stats.ecn_mark += 1;
            } else if let Some(p) = packet.take() {
                stats.drop_len += p.len_bytes as u64;
                stats.drop_count += 1;
                queue.drop(p);
                packet = queue.dequeue();
                // Evaluated for its side effects on first_above_time / ldelay.
                let _ =
                    self.should_drop(packet.as_ref(), queue.backlog_bytes(), params, stats, now);
            }
            self.dropping = true;
            // If we re-enter soon after leaving, the drop rate that controlled the queue
            // last time is a good start.
            let delta = self.count.wrapping_sub(self.lastcount);
            if delta > 1
                && before(
                    now.wrapping_sub(self.drop_next),
                    params.interval.wrapping_mul(16),
                )
            {
                self.count = delta;
                self.newton_step();
            } else {
                self.count = 1;
                self.rec_inv_sqrt = (u32::MAX >> REC_INV_SQRT_SHIFT) as u16;
            }
            self.lastcount = self.count;
            self.drop_next = self.control_law(now, params.interval);
        }
        if let (Some(p), Some(th)) = (packet.as_mut(), params.ce_threshold) {
            if after(self.ldelay, th) && p.ecn.set_ce() {
                stats.ce_mark += 1;
            }
        }
        packet
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Ecn, NodeId};
    use std::collections::VecDeque;

    /// A FIFO flow for tests.
    #[derive(Default)]
    struct Fifo {
        q: VecDeque<Packet>,
        bytes: u32,
        dropped: Vec<u64>,
    }

    impl Fifo {
        fn push(&mut self, id: u64, at: Nanos, ecn: Ecn) {
            let mut p = Packet::new(id, NodeId(0), NodeId(1), 1500);
            p.queued_at = at;
            p.ecn = ecn;
            self.bytes += p.len_bytes;
            self.q.push_back(p);
        }
    }

    impl CodelQueue for Fifo {
        fn dequeue(&mut self) -> Option<Packet> {
            let p = self.q.pop_front()?;
            self.bytes -= p.len_bytes;
            Some(p)
        }
        fn backlog_bytes(&self) -> u32 {
            self.bytes
        }
        fn drop(&mut self, p: Packet) {
            self.dropped.push(p.id);
        }
    }

    #[test]
    fn time_units_match_linux() {
        // MS2TIME(20) = 19531, MS2TIME(100) = 97656 (reference §2.1).
        let p = CodelParams::mac80211();
        assert_eq!(p.target, 19531);
        assert_eq!(p.interval, 97656);
    }

    /// The float Newton recurrence x ← x(3 − n·x²)/2, applied once per count
    /// increment from x = 1 at count 1 (what Linux's fixed point approximates).
    fn newton_float(n_max: u32) -> Vec<f64> {
        let mut x = 1.0f64;
        let mut out = vec![1.0];
        for n in 2..=n_max {
            x = x * (3.0 - n as f64 * x * x) / 2.0;
            out.push(x);
        }
        out
    }

    #[test]
    fn newton_step_tracks_float_recurrence_and_converges() {
        let mut v = CodelVars {
            count: 1,
            rec_inv_sqrt: u16::MAX,
            ..Default::default()
        };
        let float = newton_float(400);
        for n in 2..=400u32 {
            v.count = n;
            v.newton_step();
            let got = v.rec_inv_sqrt as f64 / 65536.0;
            let want = float[n as usize - 1];
            assert!(
                (got - want).abs() < 2e-4,
                "n={n}: {got} vs recurrence {want}"
            );
            // One step per increment is not exact early on (count 2 gives 0.5, not
            // 0.707) but converges to 1/√n.
            if n >= 10 {
                let exact = 1.0 / (n as f64).sqrt();
                assert!(
                    (got - exact).abs() / exact < 0.03,
                    "n={n}: {got} vs {exact}"
                );
            }
        }
        assert_eq!(float[1], 0.5);
    }

    /// A standing queue: a packet enqueued every `gap` and dequeued when its sojourn
    /// reaches `sojourn` (constant delay above target). Returns drop times.
    fn standing_queue(params: CodelParams, sojourn: Nanos, until: Nanos) -> Vec<Nanos> {
        let gap = Nanos::from_ms(1);
        let mut vars = CodelVars::default();
        let mut stats = CodelStats::default();
        let mut q = Fifo::default();
        let mut drops = Vec::new();
        let mut id = 0;
        // Prefill so the queue always holds more than one packet.
        let mut t_in = Nanos::ZERO;
        let mut now = sojourn;
        while t_in <= now + gap * 4 {
            q.push(id, t_in, Ecn::NotEct);
            id += 1;
            t_in += gap;
        }
        while now < until {
            while t_in <= now + gap * 4 {
                q.push(id, t_in, Ecn::NotEct);
                id += 1;
                t_in += gap;
            }
            let before = q.dropped.len();
            let p = vars.dequeue(&mut q, &params, &mut stats, now);
            assert!(p.is_some());
            for _ in before..q.dropped.len() {
                drops.push(now);
            }
            now += gap;
        }
        drops
    }

    #[test]
    fn drop_spacing_follows_interval_over_sqrt_count() {
        let params = CodelParams::mac80211();
        let drops = standing_queue(params, Nanos::from_ms(30), Nanos::from_secs(2));
        assert!(drops.len() >= 8, "{drops:?}");
        // First drop: the sojourn has been above target for strictly more than one
        // interval since the first dequeue above target (at 30 ms). The interval is
        // 97656 units of 1024 ns (99.9997 ms), so that is the dequeue at 130 ms.
        assert_eq!(drops[0], Nanos::from_ms(130));
        // Then spacing interval × rec_inv_sqrt(count): 100 ms × (1, 0.5, 0.5625, 0.488,
        // 0.442 …) by Linux's one Newton step per count, approaching interval/√n.
        let x = newton_float(40);
        for (i, w) in drops.windows(2).take(12).enumerate() {
            let expected_ms = 100.0 * x[i];
            let got_ms = (w[1] - w[0]).as_ms_f64();
            // 1 ms dequeue granularity.
            assert!(
                (got_ms - expected_ms).abs() <= 1.0,
                "gap {i}: {got_ms} ms, expected {expected_ms}"
            );
        }
        // Later gaps approach interval/√n.
        let n = drops.len();
        let last_gap = (drops[n - 1] - drops[n - 2]).as_ms_f64();
        let ideal = 100.0 / ((n - 1) as f64).sqrt();
        assert!(
            (last_gap - ideal).abs() / ideal < 0.1,
            "{last_gap} vs {ideal}"
        );
    }

    #[test]
    fn no_drop_below_target_or_within_first_interval() {
        let params = CodelParams::mac80211();
        assert!(standing_queue(params, Nanos::from_ms(19), Nanos::from_secs(2)).is_empty());
        // Above target but for less than an interval: nothing yet.
        let d = standing_queue(params, Nanos::from_ms(25), Nanos::from_ms(125));
        assert!(d.is_empty(), "{d:?}");
    }

    #[test]
    fn entry_requires_strictly_more_than_interval() {
        // Dequeue exactly at first_above_time: not yet (strict >).
        let params = CodelParams::mac80211();
        let mut vars = CodelVars::default();
        let mut stats = CodelStats::default();
        let mut q = Fifo::default();
        for i in 0..10 {
            q.push(i, Nanos::ZERO, Ecn::NotEct);
        }
        let t0 = Nanos::from_ms(50);
        vars.dequeue(&mut q, &params, &mut stats, t0);
        assert_eq!(vars.first_above_time, codel_time(t0) + params.interval);
        // Same CoDel tick as first_above_time: no drop.
        let at = Nanos((vars.first_above_time as u64) << CODEL_SHIFT);
        vars.dequeue(&mut q, &params, &mut stats, at);
        assert!(!vars.dropping && q.dropped.is_empty());
        // One tick later: drop.
        vars.dequeue(&mut q, &params, &mut stats, at + Nanos(1024));
        assert!(vars.dropping);
        assert_eq!(q.dropped.len(), 1);
    }

    #[test]
    fn empty_flow_guard_with_mtu_zero_and_mtu_guard() {
        // mac80211 (mtu 0): a lone packet (backlog 0 after removal) is never dropped.
        let mut vars = CodelVars {
            first_above_time: 1,
            ..Default::default()
        };
        let mut stats = CodelStats::default();
        let mut q = Fifo::default();
        q.push(0, Nanos::ZERO, Ecn::NotEct);
        let p = vars.dequeue(
            &mut q,
            &CodelParams::mac80211(),
            &mut stats,
            Nanos::from_secs(1),
        );
        assert!(p.is_some() && q.dropped.is_empty());
        // fq_codel (mtu 1514): one more full packet behind it is still "≤ mtu".
        let mut vars = CodelVars {
            first_above_time: 1,
            ..Default::default()
        };
        let mut q = Fifo::default();
        q.push(0, Nanos::ZERO, Ecn::NotEct);
        q.push(1, Nanos::ZERO, Ecn::NotEct);
        let p = vars.dequeue(
            &mut q,
            &CodelParams::fq_codel_qdisc(1514),
            &mut stats,
            Nanos::from_secs(1),
        );
        assert!(p.is_some() && q.dropped.is_empty());
    }

    #[test]
    fn ecn_marks_instead_of_dropping_but_drops_not_ect() {
        let params = CodelParams::mac80211();
        // A packet already CE is "marked" again: `IP_ECN_set_ce` returns 1 for it.
        for (ecn, expect_mark) in [
            (Ecn::Ect0, true),
            (Ecn::Ect1, true),
            (Ecn::NotEct, false),
            (Ecn::Ce, true),
        ] {
            let mut vars = CodelVars::default();
            let mut stats = CodelStats::default();
            let mut q = Fifo::default();
            for i in 0..50 {
                q.push(i, Nanos::ZERO, ecn);
            }
            vars.dequeue(&mut q, &params, &mut stats, Nanos::from_ms(30));
            let p = vars
                .dequeue(&mut q, &params, &mut stats, Nanos::from_ms(140))
                .unwrap();
            assert!(vars.dropping);
            if expect_mark {
                assert_eq!(stats.ecn_mark, 1);
                assert!(q.dropped.is_empty());
                assert_eq!(p.ecn, Ecn::Ce);
            } else {
                assert_eq!(stats.ecn_mark, 0);
                assert_eq!(q.dropped.len(), 1);
            }
        }
    }

    #[test]
    fn count_reuse_when_reentering_soon() {
        let params = CodelParams::mac80211();
        let mut vars = CodelVars::default();
        let mut stats = CodelStats::default();
        let mut q = Fifo::default();
        // Old packets: enter and drop several times.
        for i in 0..400 {
            q.push(i, Nanos::ZERO, Ecn::NotEct);
        }
        let mut now = Nanos::from_ms(30);
        while now < Nanos::from_ms(600) {
            vars.dequeue(&mut q, &params, &mut stats, now);
            now += Nanos::from_ms(1);
        }
        let count_before = vars.count;
        assert!(count_before > 3, "{count_before}");
        // Queue drains below target: leave the dropping state (count is kept).
        let mut q2 = Fifo::default();
        q2.push(1000, now, Ecn::NotEct);
        q2.push(1001, now, Ecn::NotEct);
        vars.dequeue(&mut q2, &params, &mut stats, now);
        assert!(!vars.dropping);
        assert_eq!(vars.count, count_before);
        // Soon after, a standing queue again: re-entry starts at count - lastcount.
        let lastcount = vars.lastcount;
        let mut q3 = Fifo::default();
        for i in 0..400 {
            q3.push(2000 + i, now, Ecn::NotEct);
        }
        let mut t = now + Nanos::from_ms(30);
        while !vars.dropping {
            vars.dequeue(&mut q3, &params, &mut stats, t);
            t += Nanos::from_ms(1);
        }
        assert_eq!(vars.count, count_before - lastcount);
        assert!(vars.count > 1);
    }
}
