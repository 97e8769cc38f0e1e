//! The cell's named timers, in the style of quinn-proto's `connection/timer.rs`: one
//! deadline per [`Timer`], and the rule by which deadlines fire.
//!
//! [`Cell::poll_timeout`](crate::cell::Cell::poll_timeout) is the earliest deadline;
//! [`Cell::handle_timeout`](crate::cell::Cell::handle_timeout) fires the deadlines up to its
//! `now` one at a time, earliest first, each stopped before its handler runs (the
//! handler sets the next one).

use crate::Nanos;

/// What a deadline is for.
///
/// Deadlines at the same instant fire in declaration order: management first (a radio
/// that leaves or a beacon that falls due changes who contends at that instant), then
/// the MAC. At most one of the three MAC timers is set (setting one replaces the
/// other); which one says where the medium is in its cycle: idle ([`Timer::Access`]), busy until the data PPDU ends
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
    /// In a cell with space, the only MAC timer: the next PPDU start or end, or the
    /// earliest access of a node whose view is idle (`air/medium/spatial.rs`).
    Medium,
}

impl Timer {
    /// Whether this is one of the MAC's timers (of which at most one is set).
    fn is_mac(self) -> bool {
        self != Timer::Management
    }
}

/// The deadline of every [`Timer`]: each is set or not.
///
/// The MAC's three timers are the phases of one cycle, never set together: setting one
/// replaces whichever other MAC timer was set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TimerTable {
    // perf: the earliest deadline is asked at every turn of the event loop. The MAC's
    // timers share one deadline, and an unset one holds `UNSET` rather than `None`, so
    // it is the minimum of two numbers.
    management: Nanos,
    mac: Nanos,
    /// Which MAC timer `mac` is (meaningless while `mac` is `UNSET`).
    mac_timer: Timer,
}

/// The deadline of a timer that is not set (584 years: no run reaches it).
const UNSET: Nanos = Nanos::MAX;

impl Default for TimerTable {
    /// Every timer stopped.
    fn default() -> TimerTable {
        TimerTable {
            management: UNSET,
            mac: UNSET,
            mac_timer: Timer::Access,
        }
    }
}

impl TimerTable {
    /// Set `timer` to fire at `deadline`, or stop it (`None`). Setting a MAC timer
    /// stops the MAC timer that was set.
    pub(crate) fn set(&mut self, timer: Timer, deadline: Option<Nanos>) {
        debug_assert_ne!(deadline, Some(UNSET));
        let at = deadline.unwrap_or(UNSET);
        if !timer.is_mac() {
            self.management = at;
        } else if deadline.is_some() || self.mac_timer == timer {
            self.mac = at;
            self.mac_timer = timer;
        }
    }

    /// When `timer` fires, if it is set.
    pub(crate) fn get(&self, timer: Timer) -> Option<Nanos> {
        let at = match timer {
            Timer::Management => self.management,
            _ if self.mac_timer == timer => self.mac,
            _ => UNSET,
        };
        (at != UNSET).then_some(at)
    }

    /// The earliest deadline of all timers.
    pub(crate) fn next_timeout(&self) -> Option<Nanos> {
        let earliest = Nanos(self.management.as_ns().min(self.mac.as_ns()));
        (earliest != UNSET).then_some(earliest)
    }

    /// The earliest deadline at or before `now` (of simultaneous ones, management's),
    /// stopped and returned with its timer.
    pub(crate) fn expire(&mut self, now: Nanos) -> Option<(Timer, Nanos)> {
        let at = self.management.min(self.mac);
        if at > now || at == UNSET {
            return None;
        }
        if self.management == at {
            self.management = UNSET;
            Some((Timer::Management, at))
        } else {
            self.mac = UNSET;
            Some((self.mac_timer, at))
        }
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
    fn at_one_instant_management_fires_before_the_mac() {
        for mac in [Timer::Access, Timer::Delivery, Timer::ExchangeEnd] {
            let mut t = TimerTable::default();
            t.set(mac, at(5));
            t.set(Timer::Management, at(5));
            let now = Nanos::from_us(5);
            assert_eq!(t.expire(now), Some((Timer::Management, Nanos::from_us(5))));
            assert_eq!(t.expire(now), Some((mac, Nanos::from_us(5))));
            assert_eq!(t.expire(now), None);
        }
    }

    #[test]
    fn a_mac_timer_replaces_the_other_mac_timer() {
        let mut t = TimerTable::default();
        t.set(Timer::Management, at(1));
        t.set(Timer::Access, at(2));
        t.set(Timer::ExchangeEnd, at(3));
        assert_eq!(t.get(Timer::Access), None);
        assert_eq!(t.get(Timer::ExchangeEnd), at(3));
        // Stopping a MAC timer that is not set leaves the one that is.
        t.set(Timer::Access, None);
        assert_eq!(t.get(Timer::ExchangeEnd), at(3));
        t.set(Timer::ExchangeEnd, None);
        assert_eq!(t.get(Timer::ExchangeEnd), None);
        assert_eq!(t.next_timeout(), at(1));
        t.set(Timer::Management, None);
        assert_eq!(t.next_timeout(), None);
    }
}
