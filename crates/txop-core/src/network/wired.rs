//! A wired link in one direction: serialisation at a rate, a FIFO with a packet limit
//! (tail drop) and a propagation delay. Between the AP and the server behind it.
//!
//! The link carries its packets itself: they reach the far end in the order they were
//! sent (one rate, one delay), each at its arrival time ([`WiredLink::next_arrival`],
//! [`WiredLink::arrive`]). How an arrival is ordered among other things that happen at
//! the same instant is the driver's business (`super::agenda`), not the link's.
//!
//! The same record serves as the FIFO: a packet is queued or being serialised until its
//! departure time, and it arrives only after it (one delay later), so the packets
//! still queued are the newest ones on the wire whose departure is ahead.

use crate::{Nanos, Packet};
use std::collections::VecDeque;

/// The wired link between the AP and the server (each direction alike).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WiredConfig {
    /// Line rate, bit/s.
    pub rate_bps: u64,
    /// One-way propagation delay.
    pub delay: Nanos,
    /// Packets the sending end queues at most (tail drop beyond).
    pub limit_packets: usize,
}

impl Default for WiredConfig {
    /// Gigabit Ethernet to a server on the LAN: 1 Gbit/s, 1 ms one way, 1000 packets.
    fn default() -> Self {
        WiredConfig {
            rate_bps: 1_000_000_000,
            delay: Nanos::from_ms(1),
            limit_packets: 1000,
        }
    }
}

/// A packet on the wire.
#[derive(Clone, Debug)]
struct OnWire {
    /// End of its serialisation (it leaves the queue).
    done: Nanos,
    /// Arrival at the far end.
    at: Nanos,
    packet: Packet,
}

/// One direction of a wired link.
#[derive(Clone, Debug)]
pub struct WiredLink {
    /// Line rate, bit/s (at least 1).
    pub rate_bps: u64,
    /// One-way propagation delay.
    pub delay: Nanos,
    /// Packets queued at most (at least 1).
    pub limit_packets: usize,
    /// Packets sent and not yet arrived, oldest first (departure and arrival times
    /// never decrease). The queue's backlog is its newest entries whose departure is
    /// ahead: an entry leaves this record only by arriving, at its arrival time, which
    /// is after its departure (a driver never sends at an earlier time than a past
    /// arrival). Bounded: at most `limit_packets` queued plus what fits in the
    /// propagation delay.
    on_wire: VecDeque<OnWire>,
    /// Arrival time of `on_wire`'s front, kept where the front changes (a packet put
    /// on an empty wire, an arrival).
    // perf: the drivers ask for it more often than packets arrive, and a field is
    // cheaper to read than a ring buffer's front.
    head: Option<Nanos>,
    /// Packets tail-dropped so far.
    pub dropped: u64,
}

impl WiredLink {
    /// An idle link of `rate_bps` bit/s, `delay` one way and room for
    /// `limit_packets` (a rate or limit of 0 counts as 1).
    pub fn new(rate_bps: u64, delay: Nanos, limit_packets: usize) -> WiredLink {
        WiredLink {
            rate_bps: rate_bps.max(1),
            delay,
            limit_packets: limit_packets.max(1),
            on_wire: VecDeque::new(),
            head: None,
            dropped: 0,
        }
    }

    /// Serialisation time of `len_bytes` (plus 38 bytes of Ethernet framing,
    /// preamble and interframe gap).
    pub fn serialisation(&self, len_bytes: u32) -> Nanos {
        let bits_ns = (len_bytes as u64 + 38) * 8;
        // In 64 bits whenever the product fits (every real packet): a 128-bit division
        // is a library call, and this runs for every packet on the wire.
        match bits_ns.checked_mul(1_000_000_000) {
            Some(p) => Nanos(p / self.rate_bps),
            None => Nanos((bits_ns as u128 * 1_000_000_000 / self.rate_bps as u128) as u64),
        }
    }

    /// Packets waiting or being sent at `now`.
    pub fn backlog(&mut self, now: Nanos) -> usize {
        // Departure times never decrease: the backlog is the entries after the last one
        // that has left.
        self.on_wire.len() - self.on_wire.partition_point(|w| w.done <= now)
    }

    /// Put a transmission of `len_bytes` on the wire at `now` unless the queue is full:
    /// its departure and arrival times, or `None` (dropped).
    #[inline]
    fn depart(&mut self, now: Nanos, len_bytes: u32) -> Option<(Nanos, Nanos)> {
        // The backlog reaches the limit exactly when the limit-th newest entry has not
        // left yet (departure times never decrease), so no count is kept.
        let n = self.on_wire.len();
        let limit = self.limit_packets;
        if n >= limit && self.on_wire[n - limit].done > now {
            self.dropped += 1;
            return None;
        }
        // Serialisation starts when the previous transmission has left, or now: the
        // newest entry's departure is the queue's last, or in the past if it is empty.
        let start = self.on_wire.back().map_or(now, |w| w.done).max(now);
        let done = start + self.serialisation(len_bytes);
        Some((done, done + self.delay))
    }

    /// Send `packet` at `now`: its arrival time at the far end, or the packet back if
    /// the queue was full (dropped).
    // perf: inlined into the network's routing, as the drivers send on every packet.
    #[inline(always)]
    pub fn send(&mut self, now: Nanos, packet: Packet) -> Result<Nanos, Packet> {
        match self.depart(now, packet.len_bytes) {
            Some((done, at)) => {
                if self.on_wire.is_empty() {
                    self.head = Some(at);
                }
                self.on_wire.push_back(OnWire { done, at, packet });
                Ok(at)
            }
            None => Err(packet),
        }
    }

    /// Arrival time of the oldest packet on the wire.
    #[inline]
    pub fn next_arrival(&self) -> Option<Nanos> {
        debug_assert_eq!(self.head, self.on_wire.front().map(|w| w.at));
        self.head
    }

    /// Packets on the wire (queued, being serialised or propagating).
    pub fn len(&self) -> usize {
        self.on_wire.len()
    }

    /// Whether the wire carries nothing.
    pub fn is_empty(&self) -> bool {
        self.on_wire.is_empty()
    }

    /// The oldest packet on the wire reaches the far end (at its
    /// [`WiredLink::next_arrival`]; packets arrive in sending order).
    #[inline]
    pub fn arrive(&mut self) -> Option<Packet> {
        let w = self.on_wire.pop_front()?;
        self.head = self.on_wire.front().map(|w| w.at);
        Some(w.packet)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::NodeId;

    fn packet(id: u64, len_bytes: u32) -> Packet {
        Packet::new(id, NodeId(1), NodeId::AP, len_bytes)
    }

    #[test]
    fn serialises_at_rate_then_delays() {
        // 100 Mbit/s: (1500 + 38) B × 8 = 12304 bits → 123.04 µs.
        let mut l = WiredLink::new(100_000_000, Nanos::from_ms(5), 10);
        let a = l.send(Nanos::ZERO, packet(1, 1500)).unwrap();
        assert_eq!(a, Nanos(123_040) + Nanos::from_ms(5));
        // A second packet at the same instant waits for the first.
        let b = l.send(Nanos::ZERO, packet(2, 1500)).unwrap();
        assert_eq!(b, Nanos(246_080) + Nanos::from_ms(5));
        // After both left, the line is idle again.
        let c = l.send(Nanos::from_ms(1), packet(3, 1500)).unwrap();
        assert_eq!(c, Nanos::from_ms(1) + Nanos(123_040) + Nanos::from_ms(5));
    }

    #[test]
    fn packets_arrive_in_sending_order() {
        let mut l = WiredLink::new(100_000_000, Nanos::from_ms(5), 10);
        let a = l.send(Nanos::ZERO, packet(1, 1500)).unwrap();
        let b = l.send(Nanos::ZERO, packet(2, 40)).unwrap();
        assert!(b > a, "the short packet waits behind the long one");
        assert_eq!((l.len(), l.next_arrival()), (2, Some(a)));
        assert_eq!(l.arrive().map(|p| p.id), Some(1));
        assert_eq!(l.next_arrival(), Some(b));
        assert_eq!(l.arrive().map(|p| p.id), Some(2));
        assert_eq!(l.next_arrival(), None);
        assert_eq!(l.arrive(), None);
        assert!(l.is_empty());
        // A packet put on the empty wire is its next arrival again.
        let c = l.send(Nanos::from_ms(1), packet(3, 40)).unwrap();
        assert_eq!(l.next_arrival(), Some(c));
    }

    /// The backlog read off the wire's record matches a queue of departure times (the
    /// former model) when packets arrive at their arrival times, with drops.
    #[test]
    fn backlog_matches_a_queue_of_departures() {
        let mut l = WiredLink::new(10_000_000, Nanos::from_us(300), 4);
        let mut departures: VecDeque<Nanos> = VecDeque::new();
        let mut now = Nanos::ZERO;
        let mut x: u64 = 12345;
        let (mut sent, mut dropped) = (0, 0);
        for id in 0..2000u64 {
            // A pseudo-random gap (0..=400 µs, often 0) and length.
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let gap = if (x >> 60) < 6 {
                0
            } else {
                (x >> 33) % 400_000
            };
            now += Nanos(gap);
            while l.next_arrival().is_some_and(|at| at <= now) {
                assert!(l.arrive().is_some());
            }
            let len = 40 + ((x >> 20) % 1461) as u32;
            // Reference: departures queue.
            while departures.front().is_some_and(|&d| d <= now) {
                departures.pop_front();
            }
            let expect = if departures.len() >= 4 {
                None
            } else {
                let start = departures.back().copied().unwrap_or(now).max(now);
                let done = start + l.serialisation(len);
                departures.push_back(done);
                Some(done + l.delay)
            };
            assert_eq!(l.backlog(now), departures.len() - expect.is_some() as usize);
            let got = l.send(now, packet(id, len)).ok();
            assert_eq!(got, expect);
            assert_eq!(l.backlog(now), departures.len());
            if got.is_some() {
                sent += 1;
            } else {
                dropped += 1;
            }
        }
        assert!(
            sent > 100 && dropped > 100,
            "{sent} sent, {dropped} dropped"
        );
        assert_eq!(l.dropped, dropped);
    }

    #[test]
    fn tail_drops_beyond_the_limit() {
        let mut l = WiredLink::new(1_000_000, Nanos::ZERO, 3);
        for id in 0..3 {
            assert!(l.send(Nanos::ZERO, packet(id, 1000)).is_ok());
        }
        assert_eq!(
            l.send(Nanos::ZERO, packet(3, 1000)).map_err(|p| p.id),
            Err(3)
        );
        assert_eq!(l.dropped, 1);
        assert_eq!(l.backlog(Nanos::ZERO), 3);
    }
}
