//! Echo probes: a request every `interval` from one host to another, answered at once
//! by the other host; the round-trip time is measured at the sender.
//!
//! Two flavours, as flent runs them: ICMP echo (`ping -i 0.2`, "Ping (ms) ICMP") and an
//! irtt-like UDP echo ("Ping (ms) UDP …", the voip test) that also reports one-way
//! delays per direction, their variation (IPDV) and losses.

use super::{Arrival, FlowCtx, Host, Marking, Message, Source, SourceEvent};
use std::cell::Cell;
use txop_core::Nanos;

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

/// A ping session as it runs: its configuration and its next request number.
pub(crate) struct PingSource {
    cfg: Ping,
    seq: Cell<u64>,
}

impl PingSource {
    pub(crate) fn new(cfg: Ping) -> PingSource {
        PingSource {
            cfg,
            seq: Cell::new(0),
        }
    }
}

impl Source for PingSource {
    fn src(&self) -> Host {
        self.cfg.from
    }

    fn dst(&self) -> Host {
        self.cfg.to
    }

    fn kind(&self) -> &'static str {
        if self.cfg.udp {
            "udp_ping"
        } else {
            "ping"
        }
    }

    fn label(&self) -> &str {
        &self.cfg.label
    }

    fn start(&self, ctx: &mut FlowCtx<'_>) {
        ctx.schedule(self.cfg.start, SourceEvent::Offer);
    }

    /// The next request goes, and the one after it is scheduled unless that would be
    /// at or after the flow's stop.
    fn due(&self, ctx: &mut FlowCtx<'_>, event: SourceEvent) {
        debug_assert!(matches!(event, SourceEvent::Offer));
        let ping = &self.cfg;
        ctx.stats().offered += 1;
        let next = ctx.now() + ping.interval;
        if ping.stop.is_none_or(|s| next < s) {
            ctx.schedule(next, SourceEvent::Offer);
        }
        let seq = self.seq.get();
        self.seq.set(seq + 1);
        let request = Message::PingRequest { seq };
        let mut p = ctx.packet(ping.from, ping.to, ping.len_bytes, request);
        Marking {
            tid: ping.tid,
            dscp: ping.dscp,
            flow_hash: ping.flow_hash,
        }
        .apply(&mut p);
        ctx.send(ping.from, p);
    }

    /// A request reached the far host: the reply goes at once, the same size and
    /// marking, back the way it came. A reply reached the host that measures: the
    /// round trip and its two one-way halves go into the flow's statistics.
    fn arrived(&self, ctx: &mut FlowCtx<'_>, arrival: Arrival<'_>) {
        let at = ctx.now();
        match arrival.message {
            Message::PingRequest { seq } => {
                let reply = Message::PingReply {
                    seq,
                    request_sent: arrival.sent_at,
                };
                let request = arrival.packet;
                let mut p = ctx.packet(arrival.to, arrival.from, request.len_bytes, reply);
                Marking::of(request).apply(&mut p);
                ctx.send(arrival.to, p);
            }
            Message::PingReply { seq, request_sent } => {
                // The reply left the far host when the request arrived there.
                let forward = arrival.sent_at - request_sent;
                let back = at - arrival.sent_at;
                ctx.stats().echo(at, seq, forward, back);
            }
            Message::Data | Message::WebRequest { .. } => {}
        }
    }
}
