//! The cell's named timers, in the style of quinn-proto's `connection/timer.rs`: one
//! deadline per [`Timer`], and the rule by which deadlines fire.
//!
//! [`Cell::poll_timeout`](super::Cell::poll_timeout) is the earliest deadline;
//! [`Cell::handle_timeout`](super::Cell::handle_timeout) fires the deadlines up to its
//! `now` one at a time, earliest first, each stopped before its handler runs (the
//! handler sets the next one).

use crate::Nanos;

/// What a deadline is for.
///
/// Deadlines at the same instant fire in declaration order: management first (a radio
/// that leaves or a beacon that falls due changes who contends at that instant), then
/// the MAC. At most one of the three MAC timers is set; which one says where the medium
/// is in its cycle: idle ([`Timer::Access`]), busy until the data PPDU ends
/// ([`Timer::Delivery`]), busy until the response ends ([`Timer::ExchangeEnd`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Timer {
    /// The earliest of the next TBTT, the scanners' steps and the power-save timeouts
    /// (set only when beacons, scanning or power save are modelled).
    Management,
    /// The medium is idle: contention ends at the earliest backoff of a present node's
    /// EDCAF that has a frame, or when the pending beacon goes.
    Access,
    /// The exchange's data PPDU (or lone frame) ends: the receiver takes what it decoded.
    Delivery,
    /// The busy period ends (the response, or the longest collided PPDU): the exchange
    /// is settled and the TXOP continues or contention resumes.
    ExchangeEnd,
}

impl Timer {
    /// Every timer, in firing order.
    const VALUES: [Timer; 4] = [
        Timer::Management,
        Timer::Access,
        Timer::Delivery,
        Timer::ExchangeEnd,
    ];
}

/// One optional deadline per [`Timer`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TimerTable {
    // perf: an unset timer holds `UNSET` rather than `None`, so that the earliest
    // deadline, asked at every turn of the event loop, is a minimum without branches.
    deadlines: [Nanos; Timer::VALUES.len()],
}

/// The deadline of a timer that is not set (584 years: no run reaches it).
const UNSET: Nanos = Nanos::MAX;

impl Default for TimerTable {
    /// Every timer stopped.
    fn default() -> TimerTable {
        TimerTable {
            deadlines: [UNSET; Timer::VALUES.len()],
        }
    }
}

impl TimerTable {
    /// Set `timer` to fire at `deadline`, or stop it (`None`).
    pub(crate) fn set(&mut self, timer: Timer, deadline: Option<Nanos>) {
        debug_assert_ne!(deadline, Some(UNSET));
        self.deadlines[timer as usize] = deadline.unwrap_or(UNSET);
    }

    /// When `timer` fires, if it is set.
    pub(crate) fn get(&self, timer: Timer) -> Option<Nanos> {
        let at = self.deadlines[timer as usize];
        (at != UNSET).then_some(at)
    }

    /// The earliest deadline of all timers.
    pub(crate) fn next_timeout(&self) -> Option<Nanos> {
        let [a, b, c, d] = self.deadlines.map(|t| t.as_ns());
        let earliest = Nanos(a.min(b).min(c.min(d)));
        (earliest != UNSET).then_some(earliest)
    }

    /// The earliest deadline at or before `now` (of simultaneous ones, the first timer
    /// in firing order), stopped and returned with its timer.
    pub(crate) fn expire(&mut self, now: Nanos) -> Option<(Timer, Nanos)> {
        let at = self.next_timeout().filter(|&at| at <= now)?;
        let timer = Timer::VALUES
            .into_iter()
            .find(|&timer| self.deadlines[timer as usize] == at)?;
        self.deadlines[timer as usize] = UNSET;
        Some((timer, at))
    }

    /// How many of the MAC's timers are set (at most one, see [`Timer`]).
    pub(crate) fn mac_timers_set(&self) -> usize {
        [Timer::Access, Timer::Delivery, Timer::ExchangeEnd]
            .into_iter()
            .filter(|&t| self.get(t).is_some())
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(us: u64) -> Option<Nanos> {
        Some(Nanos::from_us(us))
    }

    #[test]
    fn earliest_deadline_fires_first_whatever_the_timer() {
        let mut t = TimerTable::default();
        assert_eq!(t.next_timeout(), None);
        t.set(Timer::Management, at(30));
        t.set(Timer::Delivery, at(10));
        assert_eq!(t.next_timeout(), at(10));
        // Nothing is due before 10 µs.
        assert_eq!(t.expire(Nanos::from_us(9)), None);
        assert_eq!(t.next_timeout(), at(10));
        // Both are due at 40 µs: the earlier one first, each one once.
        let now = Nanos::from_us(40);
        assert_eq!(t.expire(now), Some((Timer::Delivery, Nanos::from_us(10))));
        assert_eq!(t.get(Timer::Delivery), None);
        assert_eq!(t.expire(now), Some((Timer::Management, Nanos::from_us(30))));
        assert_eq!(t.expire(now), None);
        assert_eq!(t.next_timeout(), None);
    }

    #[test]
    fn simultaneous_deadlines_fire_in_declaration_order() {
        let mut t = TimerTable::default();
        for timer in Timer::VALUES.into_iter().rev() {
            t.set(timer, at(5));
        }
        let fired: Vec<Timer> = std::iter::from_fn(|| t.expire(Nanos::from_us(5)))
            .map(|(timer, when)| {
                assert_eq!(when, Nanos::from_us(5));
                timer
            })
            .collect();
        assert_eq!(fired, Timer::VALUES);
    }

    #[test]
    fn set_none_stops_and_mac_timers_are_counted() {
        let mut t = TimerTable::default();
        t.set(Timer::Management, at(1));
        assert_eq!(t.mac_timers_set(), 0);
        t.set(Timer::Access, at(2));
        t.set(Timer::ExchangeEnd, at(3));
        assert_eq!(t.mac_timers_set(), 2);
        t.set(Timer::Access, None);
        assert_eq!(t.mac_timers_set(), 1);
        assert_eq!(t.next_timeout(), at(1));
        t.set(Timer::Management, None);
        assert_eq!(t.next_timeout(), at(3));
    }
}
