//! Echo probes: a request every `interval` from one host to another, answered at once
//! by the other host; the round-trip time is measured at the sender.
//!
//! Two flavours, as flent runs them: ICMP echo (`ping -i 0.2`, "Ping (ms) ICMP") and an
//! irtt-like UDP echo ("Ping (ms) UDP …", the voip test) that also reports one-way
//! delays per direction, their variation (IPDV) and losses.

use super::{Flow, Host};
use crate::sim::{Event, InFlight, Marking, Payload, Simulation};
use txop_core::{Nanos, Packet};

/// One ping session.
#[derive(Clone, Debug)]
pub struct Ping {
    pub from: Host,
    pub to: Host,
    pub interval: Nanos,
    /// IP packet size of requests and replies (ping's default 56 B of data → 84 B).
    pub len_bytes: u32,
    pub start: Nanos,
    /// Stop sending at this time (replies may still arrive).
    pub stop: Option<Nanos>,
    pub tid: u8,
    pub dscp: u8,
    pub flow_hash: u32,
    /// UDP (irtt) rather than ICMP: only the label and the one-way figures differ.
    pub udp: bool,
    /// The flent series name this flow fills ("" when not part of a flent test).
    pub label: String,
}

impl Ping {
    /// `ping -i 0.2` from `from` to `to`.
    pub fn new(from: Host, to: Host, flow_hash: u32) -> Ping {
        Ping {
            from,
            to,
            interval: Nanos::from_ms(200),
            len_bytes: 84,
            start: Nanos::ZERO,
            stop: None,
            tid: 0,
            dscp: 0,
            flow_hash,
            udp: false,
            label: String::new(),
        }
    }

    /// irtt-like isochronous UDP echo: 20 ms apart, 172-byte packets (irtt's default
    /// payload plus headers; the size of a G.711 voice packet), as flent's voip test.
    pub fn irtt(from: Host, to: Host, flow_hash: u32) -> Ping {
        Ping {
            interval: Nanos::from_ms(20),
            len_bytes: 172,
            udp: true,
            ..Ping::new(from, to, flow_hash)
        }
    }
}

impl Simulation {
    /// Ping flow `flow` sends its next request, and schedules the one after it unless
    /// that would be at or after the flow's stop.
    pub(crate) fn ping_send(&mut self, at: Nanos, flow: usize) {
        let Flow::Ping(ping) = &self.flows[flow] else {
            return;
        };
        let (from, to) = (ping.from, ping.to);
        self.flow_stats[flow].offered += 1;
        let next = at + ping.interval;
        if ping.stop.is_none_or(|s| next < s) {
            self.events.push(next, Event::Offer { flow: flow as u32 });
        }
        let len = ping.len_bytes;
        let marking = Marking {
            tid: ping.tid,
            dscp: ping.dscp,
            flow_hash: ping.flow_hash,
        };
        let seq = self.ping_seq[flow];
        self.ping_seq[flow] += 1;
        let token = self.alloc(InFlight {
            flow: flow as u32,
            to,
            from,
            sent_at: at,
            payload: Payload::PingRequest { seq },
        });
        let p = self.make_packet(from, to, len, marking, token);
        self.send(at, from, p);
    }

    /// Echo request `seq` (`request`, its packet `packet`) reached the far host: the
    /// reply goes at once, the same size, back the way it came.
    pub(crate) fn ping_echo(&mut self, at: Nanos, request: InFlight, seq: u64, packet: Packet) {
        let f = request;
        let token = self.alloc(InFlight {
            flow: f.flow,
            to: f.from,
            from: f.to,
            sent_at: at,
            payload: Payload::PingReply {
                seq,
                request_sent: f.sent_at,
            },
        });
        let marking = Marking {
            tid: packet.tid,
            dscp: packet.dscp,
            flow_hash: packet.flow,
        };
        let p = self.make_packet(f.to, f.from, packet.len_bytes, marking, token);
        self.send(at, f.to, p);
    }

    /// Echo reply `seq` (`reply`) reached the host that measures: the round trip and
    /// its two one-way halves go into the flow's statistics.
    pub(crate) fn ping_reply_arrived(
        &mut self,
        at: Nanos,
        reply: InFlight,
        seq: u64,
        request_sent: Nanos,
    ) {
        // The reply left the far host when the request arrived there.
        let forward = reply.sent_at - request_sent;
        let back = at - reply.sent_at;
        self.flow_stats[reply.flow as usize].echo(at, seq, forward, back);
    }
}
