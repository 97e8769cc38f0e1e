//! Echo probes: a request every `interval` from one host to another, answered at once
//! by the other host; the round-trip time is measured at the sender.
//!
//! Two flavours, as flent runs them: ICMP echo (`ping -i 0.2`, "Ping (ms) ICMP") and an
//! irtt-like UDP echo ("Ping (ms) UDP …", the voip test) that also reports one-way
//! delays per direction, their variation (IPDV) and losses.

use super::Host;
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
