//! Dynamic queue limits (DQL), the byte-based limit behind BQL: Linux
//! `lib/dynamic_queue_limits.c` and `include/linux/dynamic_queue_limits.h`, the
//! 2011–2023 version without stall detection (reference §6.6).
//!
//! The algorithm is reproduced with the kernel's `u32` counters and wrap-safe
//! comparisons (`POSDIFF`, `AFTER_EQ`). Time is model time ([`Nanos`]) instead of
//! jiffies, so the hold time is measured exactly rather than in ticks.
//!
//! Usage, as a driver with BQL does it (`netdev_tx_sent_queue` /
//! `netdev_tx_completed_queue`): call [`Dql::queued`] for every object handed to the
//! hardware and stop feeding it once [`Dql::avail`] is negative; call
//! [`Dql::completed`] with the bytes each completion event reports, then resume while
//! [`Dql::avail`] is non-negative.

use crate::Nanos;

/// `DQL_MAX_OBJECT`: largest single object, `UINT_MAX / 16` bytes.
pub const DQL_MAX_OBJECT: u32 = u32::MAX / 16;
/// `DQL_MAX_LIMIT`: `(UINT_MAX / 2) − (UINT_MAX / 16)` bytes, the default maximum limit.
pub const DQL_MAX_LIMIT: u32 = u32::MAX / 2 - u32::MAX / 16;
/// BQL's slack hold time: `dql_init(&queue->dql, HZ)` in `net/core/dev.c`, one second
/// (reference §6.6).
pub const BQL_HOLD_TIME: Nanos = Nanos::from_secs(1);

/// `POSDIFF(A, B)`: `A − B` if positive when taken as a signed 32-bit difference, else 0.
fn posdiff(a: u32, b: u32) -> u32 {
    if (a.wrapping_sub(b) as i32) > 0 {
        a.wrapping_sub(b)
    } else {
        0
    }
}

/// `AFTER_EQ(A, B)`: `A − B ≥ 0` as a signed 32-bit difference.
fn after_eq(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) >= 0
}

/// One dynamic queue limit (`struct dql`; reference §6.6). All byte counters are `u32`
/// and wrap, as in the kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dql {
    /// Total bytes ever queued (monotonic, wrapping).
    num_queued: u32,
    /// `limit + num_completed`: enqueue is allowed while `num_queued` does not exceed it.
    adj_limit: u32,
    /// Size of the last object queued.
    last_obj_cnt: u32,
    /// The current limit in bytes.
    limit: u32,
    /// Total bytes ever completed (monotonic, wrapping).
    num_completed: u32,
    /// How far the queue was over its limit at the previous completion (0 if not, or
    /// if the limit changed then).
    prev_ovlimit: u32,
    /// `num_queued` at the previous completion.
    prev_num_queued: u32,
    /// `last_obj_cnt` at the previous completion.
    prev_last_obj_cnt: u32,
    /// Smallest slack seen since `slack_start_time` (`UINT_MAX` = none yet).
    lowest_slack: u32,
    /// Start of the current slack-tracking period.
    slack_start_time: Nanos,
    /// Upper bound of the limit.
    max_limit: u32,
    /// Lower bound of the limit.
    min_limit: u32,
    /// How long slack must have been observed before the limit shrinks by it.
    slack_hold_time: Nanos,
}

impl Dql {
    /// `dql_init(dql, hold_time)` at time `now`: limits `[0, DQL_MAX_LIMIT]`, everything
    /// else zero, slack tracking starting now.
    pub fn new(slack_hold_time: Nanos, now: Nanos) -> Dql {
        let mut dql = Dql {
            num_queued: 0,
            adj_limit: 0,
            last_obj_cnt: 0,
            limit: 0,
            num_completed: 0,
            prev_ovlimit: 0,
            prev_num_queued: 0,
            prev_last_obj_cnt: 0,
            lowest_slack: u32::MAX,
            slack_start_time: now,
            max_limit: DQL_MAX_LIMIT,
            min_limit: 0,
            slack_hold_time,
        };
        dql.reset(now);
        dql
    }

    /// A BQL queue (`netdev_queue` DQL): hold time 1 s ([`BQL_HOLD_TIME`]).
    pub fn bql(now: Nanos) -> Dql {
        Dql::new(BQL_HOLD_TIME, now)
    }

    /// `dql_reset`: zeroes the limit and the counters and restarts slack tracking. As in
    /// the kernel, `adj_limit`, the bounds and the hold time are left unchanged.
    pub fn reset(&mut self, now: Nanos) {
        self.limit = 0;
        self.num_queued = 0;
        self.num_completed = 0;
        self.last_obj_cnt = 0;
        self.prev_num_queued = 0;
        self.prev_last_obj_cnt = 0;
        self.prev_ovlimit = 0;
        self.lowest_slack = u32::MAX;
        self.slack_start_time = now;
    }

    /// `dql_queued`: records `bytes` handed to the hardware.
    ///
    /// # Panics
    /// If `bytes > DQL_MAX_OBJECT` (the kernel's `BUG_ON`).
    pub fn queued(&mut self, bytes: u32) {
        assert!(
            bytes <= DQL_MAX_OBJECT,
            "DQL object of {bytes} bytes too large"
        );
        self.last_obj_cnt = bytes;
        self.num_queued = self.num_queued.wrapping_add(bytes);
    }

    /// `dql_avail`: `adj_limit − num_queued` as the kernel's signed 32-bit result.
    /// Negative means the queue is over its limit and should be stopped.
    pub fn avail(&self) -> i64 {
        i64::from(self.adj_limit.wrapping_sub(self.num_queued) as i32)
    }

    /// `dql_completed`: records `bytes` completed at time `now` and recalculates the
    /// limit (reference §6.6).
    ///
    /// * Starved (the queue was over its limit and is now empty, or was over its limit
    ///   at the previous completion and everything queued then has completed): the
    ///   limit grows by the bytes completed beyond the previous `num_queued` plus the
    ///   previous over-limit, and slack tracking restarts.
    /// * Busy for the whole interval (data in flight now and at the previous completion,
    ///   and not all of the previous backlog completed): the slack
    ///   `max(posdiff(limit + prev_ovlimit, 2 × completed_now), prev_ovlimit ?
    ///   posdiff(prev_last_obj_cnt, prev_ovlimit) : 0)` feeds the minimum; once `now`
    ///   is strictly after `slack_start_time + slack_hold_time` the limit shrinks by
    ///   that minimum (not below 0) and tracking restarts.
    ///
    /// The limit is then clamped to `[min_limit, max_limit]`; a changed limit clears
    /// the over-limit flag carried to the next completion.
    ///
    /// # Panics
    /// If `bytes` exceeds what is outstanding (the kernel's `BUG_ON`).
    pub fn completed(&mut self, now: Nanos, bytes: u32) {
        let num_queued = self.num_queued;
        assert!(
            bytes <= num_queued.wrapping_sub(self.num_completed),
            "DQL completion of {bytes} bytes exceeds the {} outstanding",
            num_queued.wrapping_sub(self.num_completed)
        );

        let completed = self.num_completed.wrapping_add(bytes);
        let mut limit = self.limit;
        let mut ovlimit = posdiff(num_queued.wrapping_sub(self.num_completed), limit);
        let inprogress = num_queued.wrapping_sub(completed);
        let prev_inprogress = self.prev_num_queued.wrapping_sub(self.num_completed);
        let all_prev_completed = after_eq(completed, self.prev_num_queued);

        if (ovlimit != 0 && inprogress == 0) || (self.prev_ovlimit != 0 && all_prev_completed) {
            // Starved: grow by what was both sent and completed in the last interval,
            // plus any previous over-limit.
            limit = limit
                .wrapping_add(posdiff(completed, self.prev_num_queued))
                .wrapping_add(self.prev_ovlimit);
            self.slack_start_time = now;
            self.lowest_slack = u32::MAX;
        } else if inprogress != 0 && prev_inprogress != 0 && !all_prev_completed {
            // Busy throughout: track the excess the limit allowed.
            let slack = posdiff(
                limit.wrapping_add(self.prev_ovlimit),
                completed.wrapping_sub(self.num_completed).wrapping_mul(2),
            );
            let slack_last_objs = if self.prev_ovlimit != 0 {
                posdiff(self.prev_last_obj_cnt, self.prev_ovlimit)
            } else {
                0
            };
            let slack = slack.max(slack_last_objs);
            if slack < self.lowest_slack {
                self.lowest_slack = slack;
            }
            if now > self.slack_start_time + self.slack_hold_time {
                limit = posdiff(limit, self.lowest_slack);
                self.slack_start_time = now;
                self.lowest_slack = u32::MAX;
            }
        }

        // clamp(limit, min, max) = min(max(limit, min), max).
        limit = limit.max(self.min_limit).min(self.max_limit);
        if limit != self.limit {
            self.limit = limit;
            ovlimit = 0;
        }

        self.adj_limit = limit.wrapping_add(completed);
        self.prev_ovlimit = ovlimit;
        self.prev_last_obj_cnt = self.last_obj_cnt;
        self.num_completed = completed;
        self.prev_num_queued = num_queued;
    }

    /// The current limit in bytes (`dql->limit`; sysfs `byte_queue_limits/limit`).
    pub fn limit(&self) -> u32 {
        self.limit
    }

    /// `adj_limit = limit + num_completed` as of the last completion.
    pub fn adj_limit(&self) -> u32 {
        self.adj_limit
    }

    /// Bytes queued and not yet completed (sysfs `byte_queue_limits/inflight`).
    pub fn inflight(&self) -> u32 {
        self.num_queued.wrapping_sub(self.num_completed)
    }

    /// Total bytes ever queued (wrapping).
    pub fn num_queued(&self) -> u32 {
        self.num_queued
    }

    /// Total bytes ever completed (wrapping).
    pub fn num_completed(&self) -> u32 {
        self.num_completed
    }

    /// The over-limit amount carried from the previous completion.
    pub fn prev_ovlimit(&self) -> u32 {
        self.prev_ovlimit
    }

    /// `num_queued` at the previous completion.
    pub fn prev_num_queued(&self) -> u32 {
        self.prev_num_queued
    }

    /// Size of the last object queued before the previous completion.
    pub fn prev_last_obj_cnt(&self) -> u32 {
        self.prev_last_obj_cnt
    }

    /// Minimum slack seen in the current tracking period (`u32::MAX` if none).
    pub fn lowest_slack(&self) -> u32 {
        self.lowest_slack
    }

    /// Start of the current slack-tracking period.
    pub fn slack_start_time(&self) -> Nanos {
        self.slack_start_time
    }

    /// The slack hold time (sysfs `byte_queue_limits/hold_time`).
    pub fn slack_hold_time(&self) -> Nanos {
        self.slack_hold_time
    }

    /// Lower bound of the limit (sysfs `limit_min`; default 0).
    pub fn min_limit(&self) -> u32 {
        self.min_limit
    }

    /// Upper bound of the limit (sysfs `limit_max`; default [`DQL_MAX_LIMIT`]).
    pub fn max_limit(&self) -> u32 {
        self.max_limit
    }

    /// Sets sysfs `limit_min`; applied at the next completion.
    pub fn set_min_limit(&mut self, bytes: u32) {
        self.min_limit = bytes;
    }

    /// Sets sysfs `limit_max`; applied at the next completion.
    pub fn set_max_limit(&mut self, bytes: u32) {
        self.max_limit = bytes;
    }

    /// Sets sysfs `hold_time`.
    pub fn set_slack_hold_time(&mut self, hold: Nanos) {
        self.slack_hold_time = hold;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Nanos {
        Nanos::from_ms(v)
    }

    #[test]
    fn bounds_and_defaults() {
        assert_eq!(DQL_MAX_OBJECT, 268_435_455);
        assert_eq!(DQL_MAX_LIMIT, 2_147_483_647 - 268_435_455);
        let d = Dql::bql(ms(5));
        assert_eq!(d.slack_hold_time(), Nanos::from_secs(1));
        assert_eq!(d.slack_start_time(), ms(5));
        assert_eq!(
            (d.limit(), d.min_limit(), d.max_limit()),
            (0, 0, DQL_MAX_LIMIT)
        );
        assert_eq!(d.lowest_slack(), u32::MAX);
        // adj_limit 0, nothing queued: avail 0, so the first object may be queued.
        assert_eq!(d.avail(), 0);
    }

    #[test]
    fn avail_gates_enqueue() {
        let mut d = Dql::bql(Nanos::ZERO);
        d.queued(1500);
        assert_eq!(d.avail(), -1500);
        d.completed(ms(1), 1500);
        // Starved (over limit 0, now empty): limit 0 + 1500; adj = 1500 + 1500.
        assert_eq!(d.limit(), 1500);
        assert_eq!(d.avail(), 1500);
        d.queued(1000);
        assert_eq!(d.avail(), 500);
        d.queued(500);
        assert_eq!(d.avail(), 0);
        d.queued(1);
        assert_eq!(d.avail(), -1);
        assert_eq!(d.inflight(), 1501);
    }

    #[test]
    fn grows_when_the_queue_starved() {
        let mut d = Dql::bql(Nanos::ZERO);
        d.queued(1000);
        d.completed(ms(1), 1000);
        assert_eq!(d.limit(), 1000);
        // Over limit (2000 outstanding > 1000) and drained completely: grow by
        // completed − prev_num_queued = 3000 − 1000 = 2000, prev_ovlimit 0 (the limit
        // changed at the last completion).
        d.queued(1000);
        d.queued(1000);
        d.completed(ms(2), 2000);
        assert_eq!(d.limit(), 3000);
        assert_eq!(d.prev_ovlimit(), 0);
        assert_eq!(d.slack_start_time(), ms(2));
        assert_eq!(d.lowest_slack(), u32::MAX);
        // Within the limit and drained: not starved, no change.
        d.queued(3000);
        d.completed(ms(3), 3000);
        assert_eq!(d.limit(), 3000);
    }

    #[test]
    fn grows_when_previously_over_limit_and_all_previous_completed() {
        let mut d = Dql::bql(Nanos::ZERO);
        d.queued(1000);
        d.completed(ms(1), 1000); // limit 1000, num_completed 1000
                                  // 3000 outstanding, limit 1000. Complete 500: ovlimit = 3000 − 1000 = 2000,
                                  // in progress; prev_inprogress = 1000 − 1000 = 0, so neither branch. prev_ovlimit
                                  // becomes 2000, prev_num_queued 4000.
        d.queued(3000);
        d.completed(ms(2), 500);
        assert_eq!(d.limit(), 1000);
        assert_eq!(d.prev_ovlimit(), 2000);
        assert_eq!(d.prev_num_queued(), 4000);
        // Queue 500 more, complete the 2500 left of the previous backlog: completed 4000
        // ≥ prev_num_queued 4000 with prev_ovlimit → starved even though 500 remain
        // in flight. Grow by posdiff(4000, 4000) + 2000 = 2000 → 3000.
        d.queued(500);
        d.completed(ms(3), 2500);
        assert_eq!(d.limit(), 3000);
        assert_eq!(d.inflight(), 500);
    }

    /// Builds limit 10000 at t = 1 ms, then a steady busy phase: 3000 bytes always in
    /// flight, one object queued and completed per millisecond.
    fn busy_queue(hold: Nanos) -> Dql {
        let mut d = Dql::new(hold, Nanos::ZERO);
        d.queued(10_000);
        d.completed(ms(1), 10_000);
        assert_eq!(d.limit(), 10_000);
        assert_eq!(d.slack_start_time(), ms(1));
        // First busy completion: prev_inprogress = 10000 − 10000 = 0 → no branch.
        d.queued(4000);
        d.completed(ms(2), 1000);
        assert_eq!(d.lowest_slack(), u32::MAX);
        d
    }

    #[test]
    fn shrinks_by_minimum_slack_only_after_hold_time() {
        let hold = ms(100);
        let mut d = busy_queue(hold);
        // Busy completion of 1000: slack = posdiff(10000 + 0, 2 × 1000) = 8000.
        d.queued(1000);
        d.completed(ms(3), 1000);
        assert_eq!(d.lowest_slack(), 8000);
        // A completion of 2000: slack = 10000 − 4000 = 6000, the new minimum.
        d.queued(2000);
        d.completed(ms(4), 2000);
        assert_eq!(d.lowest_slack(), 6000);
        // Back to 1000-byte completions: slack 8000, minimum stays 6000.
        let mut t = 5;
        while t <= 101 {
            d.queued(1000);
            d.completed(ms(t), 1000);
            assert_eq!(d.limit(), 10_000, "no shrink at {t} ms");
            t += 1;
        }
        // t = 101 ms is exactly slack_start (1 ms) + hold (100 ms): not yet after.
        assert_eq!(d.lowest_slack(), 6000);
        d.queued(1000);
        d.completed(ms(102), 1000);
        // Strictly after: limit 10000 − 6000 = 4000; tracking restarts.
        assert_eq!(d.limit(), 4000);
        assert_eq!(d.slack_start_time(), ms(102));
        assert_eq!(d.lowest_slack(), u32::MAX);
        // The limit changed, so ovlimit is not carried over.
        assert_eq!(d.prev_ovlimit(), 0);
    }

    #[test]
    fn bql_hold_is_one_second() {
        let mut d = busy_queue(BQL_HOLD_TIME);
        let mut t = 3;
        while t <= 1001 {
            d.queued(1000);
            d.completed(ms(t), 1000);
            t += 1;
        }
        assert_eq!(d.limit(), 10_000);
        d.queued(1000);
        d.completed(ms(1002), 1000);
        assert_eq!(d.limit(), 2000);
    }

    #[test]
    fn never_below_min_limit() {
        let mut d = busy_queue(ms(100));
        d.set_min_limit(5000);
        let mut t = 3;
        while t <= 102 {
            d.queued(1000);
            d.completed(ms(t), 1000);
            t += 1;
        }
        // 10000 − 8000 = 2000, clamped up to min_limit.
        assert_eq!(d.limit(), 5000);
    }

    #[test]
    fn max_limit_caps_growth() {
        let mut d = Dql::bql(Nanos::ZERO);
        d.set_max_limit(1200);
        d.queued(1500);
        d.completed(ms(1), 1500);
        assert_eq!(d.limit(), 1200);
        assert_eq!(d.avail(), 1200);
    }

    #[test]
    fn shrink_slack_uses_last_object_when_over_limit() {
        // prev_ovlimit > 0 makes the last object's excess a candidate slack.
        let mut d = busy_queue(ms(100));
        // Make the queue over its limit: outstanding 3000 + 9000 = 12000 > 10000.
        d.queued(9000);
        d.completed(ms(3), 1000);
        // slack = posdiff(10000 + 0, 2000) = 8000; ovlimit = 12000 − 10000 = 2000.
        assert_eq!(d.lowest_slack(), 8000);
        assert_eq!(d.prev_ovlimit(), 2000);
        assert_eq!(d.prev_last_obj_cnt(), 9000);
        // Next: slack = max(posdiff(10000 + 2000, 2 × 1000), 9000 − 2000)
        //             = max(10000, 7000) = 10000 → minimum stays 8000.
        d.queued(100);
        d.completed(ms(4), 1000);
        assert_eq!(d.lowest_slack(), 8000);
        // A big completion: 2 × 6000 = 12000 ≥ limit + prev_ovlimit (10000 + 1100), so
        // the first term is 0; the last-object term is posdiff(100, 1100) = 0.
        d.queued(100);
        d.completed(ms(5), 6000);
        assert_eq!(d.lowest_slack(), 0);
    }

    #[test]
    fn reset_keeps_adj_limit_and_bounds() {
        let mut d = Dql::bql(Nanos::ZERO);
        d.set_min_limit(100);
        d.queued(1500);
        d.completed(ms(1), 1500);
        d.reset(ms(2));
        assert_eq!((d.limit(), d.num_queued(), d.num_completed()), (0, 0, 0));
        assert_eq!(d.adj_limit(), 3000);
        assert_eq!(d.min_limit(), 100);
        assert_eq!(d.slack_start_time(), ms(2));
    }

    #[test]
    fn counters_wrap_like_u32() {
        let mut d = Dql::bql(Nanos::ZERO);
        // Push the byte counters near 2^32 through repeated starvation cycles.
        d.queued(DQL_MAX_OBJECT);
        d.completed(ms(1), DQL_MAX_OBJECT);
        for i in 0..16u64 {
            d.queued(DQL_MAX_OBJECT);
            d.completed(ms(2 + i), DQL_MAX_OBJECT);
        }
        // 17 × (2^32 − 1)/16 wraps past 2^32; in-flight arithmetic still works.
        assert!(d.num_queued() < DQL_MAX_OBJECT);
        assert_eq!(d.inflight(), 0);
        d.queued(10);
        assert_eq!(d.inflight(), 10);
        assert!(d.avail() >= 0);
    }

    #[test]
    #[should_panic]
    fn completing_more_than_outstanding_panics() {
        let mut d = Dql::bql(Nanos::ZERO);
        d.queued(10);
        d.completed(ms(1), 11);
    }
}
