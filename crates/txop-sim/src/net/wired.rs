//! A wired link in one direction: serialisation at a rate, a FIFO with a packet limit
//! (tail drop) and a propagation delay. Between the AP and the servers behind it.
//!
//! The link carries its packets itself: they reach the far end in the order they were
//! sent (one rate, one delay), each with its arrival time and the event-queue sequence
//! number its arrival would have had as an event, so the event loop merges the link's
//! oldest packet with its queue ([`WiredLink::next_arrival`], [`WiredLink::arrive`])
//! instead of queueing an event per packet.

use std::collections::VecDeque;
use txop_core::{Nanos, Packet};

/// One direction of a wired link.
#[derive(Clone, Debug)]
pub struct WiredLink {
    pub rate_bps: u64,
    pub delay: Nanos,
    pub limit_packets: usize,
    /// Departure times of the packets queued or being serialised, oldest first.
    departures: VecDeque<Nanos>,
    /// Packets sent and not yet arrived, oldest first (arrival times never decrease),
    /// with their arrival time and sequence number. Bounded: at most `limit_packets`
    /// queued plus what fits in the propagation delay.
    on_wire: VecDeque<(Nanos, u64, Packet)>,
    /// Arrival time and sequence number of `on_wire`'s front, kept where the front
    /// changes (a packet put on an empty wire, an arrival): the event loop asks for it
    /// more often than packets arrive, and a field is cheaper to read than a ring
    /// buffer's front.
    head: Option<(Nanos, u64)>,
    pub dropped: u64,
}

impl WiredLink {
    pub fn new(rate_bps: u64, delay: Nanos, limit_packets: usize) -> WiredLink {
        WiredLink {
            rate_bps: rate_bps.max(1),
            delay,
            limit_packets: limit_packets.max(1),
            departures: VecDeque::new(),
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
        while self.departures.front().is_some_and(|&d| d <= now) {
            self.departures.pop_front();
        }
        self.departures.len()
    }

    /// Send a packet of `len_bytes` at `now`: its arrival time at the far end, or
    /// `None` if the queue was full (dropped).
    pub fn send(&mut self, now: Nanos, len_bytes: u32) -> Option<Nanos> {
        if self.backlog(now) >= self.limit_packets {
            self.dropped += 1;
            return None;
        }
        let start = self.departures.back().copied().unwrap_or(now).max(now);
        let done = start + self.serialisation(len_bytes);
        self.departures.push_back(done);
        Some(done + self.delay)
    }

    /// Send `packet` at `now`; `seq()` gives the sequence number that orders its
    /// arrival among simultaneous events (taken only if the packet is sent). Returns
    /// the arrival time at the far end, or the packet back if the queue was full
    /// (dropped).
    pub fn send_packet(
        &mut self,
        now: Nanos,
        packet: Packet,
        seq: impl FnOnce() -> u64,
    ) -> Result<Nanos, Packet> {
        match self.send(now, packet.len_bytes) {
            Some(at) => {
                let seq = seq();
                if self.on_wire.is_empty() {
                    self.head = Some((at, seq));
                }
                self.on_wire.push_back((at, seq, packet));
                Ok(at)
            }
            None => Err(packet),
        }
    }

    /// Arrival time and sequence number of the oldest packet on the wire.
    #[inline]
    pub fn next_arrival(&self) -> Option<(Nanos, u64)> {
        debug_assert_eq!(
            self.head,
            self.on_wire.front().map(|&(at, seq, _)| (at, seq))
        );
        self.head
    }

    /// The oldest packet on the wire reaches the far end (at its
    /// [`WiredLink::next_arrival`]; packets arrive in sending order).
    pub fn arrive(&mut self) -> Option<Packet> {
        let (_, _, p) = self.on_wire.pop_front()?;
        self.head = self.on_wire.front().map(|&(at, seq, _)| (at, seq));
        Some(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialises_at_rate_then_delays() {
        // 100 Mbit/s: (1500 + 38) B × 8 = 12304 bits → 123.04 µs.
        let mut l = WiredLink::new(100_000_000, Nanos::from_ms(5), 10);
        let a = l.send(Nanos::ZERO, 1500).unwrap();
        assert_eq!(a, Nanos(123_040) + Nanos::from_ms(5));
        // A second packet at the same instant waits for the first.
        let b = l.send(Nanos::ZERO, 1500).unwrap();
        assert_eq!(b, Nanos(246_080) + Nanos::from_ms(5));
        // After both left, the line is idle again.
        let c = l.send(Nanos::from_ms(1), 1500).unwrap();
        assert_eq!(c, Nanos::from_ms(1) + Nanos(123_040) + Nanos::from_ms(5));
    }

    #[test]
    fn packets_arrive_in_sending_order() {
        let mut l = WiredLink::new(100_000_000, Nanos::from_ms(5), 10);
        let p = |id, len| Packet::new(id, txop_core::NodeId(1), txop_core::NodeId::AP, len);
        let a = l.send_packet(Nanos::ZERO, p(1, 1500), || 7).unwrap();
        let b = l.send_packet(Nanos::ZERO, p(2, 40), || 8).unwrap();
        assert!(b > a, "the short packet waits behind the long one");
        assert_eq!(l.next_arrival(), Some((a, 7)));
        assert_eq!(l.arrive().map(|p| p.id), Some(1));
        assert_eq!(l.next_arrival(), Some((b, 8)));
        assert_eq!(l.arrive().map(|p| p.id), Some(2));
        assert_eq!(l.next_arrival(), None);
        assert_eq!(l.arrive(), None);
        // A packet put on the empty wire is its next arrival again.
        let c = l.send_packet(Nanos::from_ms(1), p(3, 40), || 9).unwrap();
        assert_eq!(l.next_arrival(), Some((c, 9)));
    }

    #[test]
    fn tail_drops_beyond_the_limit() {
        let mut l = WiredLink::new(1_000_000, Nanos::ZERO, 3);
        for _ in 0..3 {
            assert!(l.send(Nanos::ZERO, 1000).is_some());
        }
        assert!(l.send(Nanos::ZERO, 1000).is_none());
        assert_eq!(l.dropped, 1);
        assert_eq!(l.backlog(Nanos::ZERO), 3);
    }
}
