//! The real flows seen crossing the emulated network, each with the per-flow statistics
//! the simulator keeps too ([`FlowStats`]): packets offered, delivered and dropped, one-way
//! delay through the network, time in the driver and air, throughput per 0.2 s.
//!
//! Bounded: after [`MAX_FLOWS`] distinct flows, further ones share one "other" entry.

use crate::addr::Endpoint;
use crate::parse::PacketInfo;
use std::collections::HashMap;
use std::net::IpAddr;
use txop_results::{FlowResult, FlowStats};

/// Distinct flows tracked one by one.
pub const MAX_FLOWS: usize = 1024;

/// A flow: one direction of a 5-tuple.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FlowKey {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub proto: u8,
    pub src_port: u16,
    pub dst_port: u16,
}

/// One tracked flow.
pub struct FlowEntry {
    /// `None` for the shared entry of flows beyond [`MAX_FLOWS`].
    pub key: Option<FlowKey>,
    pub from: Endpoint,
    pub to: Endpoint,
    pub stats: FlowStats,
}

#[derive(Default)]
pub struct FlowTable {
    index: HashMap<FlowKey, u32>,
    entries: Vec<FlowEntry>,
    /// The shared entry's index, once there is one.
    other: Option<u32>,
}

fn proto_name(p: u8) -> &'static str {
    match p {
        1 | 58 => "icmp",
        6 => "tcp",
        17 => "udp",
        _ => "ip",
    }
}

impl FlowTable {
    /// The entry of the packet's flow, created on first sight.
    pub fn flow_of(&mut self, info: &PacketInfo, from: Endpoint, to: Endpoint) -> u32 {
        let key = FlowKey {
            src: info.src,
            dst: info.dst,
            proto: info.proto,
            src_port: info.src_port,
            dst_port: info.dst_port,
        };
        if let Some(&i) = self.index.get(&key) {
            return i;
        }
        if self.index.len() >= MAX_FLOWS {
            if let Some(o) = self.other {
                return o;
            }
            let o = self.push(None, from, to);
            self.other = Some(o);
            return o;
        }
        let i = self.push(Some(key), from, to);
        self.index.insert(key, i);
        i
    }

    fn push(&mut self, key: Option<FlowKey>, from: Endpoint, to: Endpoint) -> u32 {
        self.entries.push(FlowEntry {
            key,
            from,
            to,
            stats: FlowStats::default(),
        });
        (self.entries.len() - 1) as u32
    }

    pub fn stats(&mut self, flow: u32) -> &mut FlowStats {
        &mut self.entries[flow as usize].stats
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Every flow's result, in order of first sight, over `secs` seconds. The kind is
    /// the protocol (`tcp`, `udp`, `icmp`, `ip`, or `other` for the shared entry), the
    /// label the 5-tuple. An end whose address `far_name` names (a host of another
    /// BSS, whose packets enter and leave here at the junction) is called so.
    pub fn results(
        &self,
        secs: f64,
        far_name: &dyn Fn(IpAddr) -> Option<String>,
    ) -> Vec<FlowResult> {
        self.entries
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let (kind, label) = match e.key {
                    Some(k) => (proto_name(k.proto), describe(&k)),
                    None => ("other", format!("flows beyond the first {MAX_FLOWS}")),
                };
                let mut r = e
                    .stats
                    .result(i, (kind, &label), e.from.host(), e.to.host(), secs);
                if let Some(k) = e.key {
                    if let Some(name) = far_name(k.src) {
                        r.src = name;
                    }
                    if let Some(name) = far_name(k.dst) {
                        r.dst = name;
                    }
                    r.rename();
                }
                r
            })
            .collect()
    }
}

/// `198.18.0.1:5201 → 198.18.1.1:41234` (ports omitted for ICMP and other protocols).
fn describe(k: &FlowKey) -> String {
    let ep = |a: IpAddr, p: u16| match (k.proto, a) {
        (6 | 17, IpAddr::V4(a)) => format!("{a}:{p}"),
        (6 | 17, IpAddr::V6(a)) => format!("[{a}]:{p}"),
        _ => a.to_string(),
    };
    let mut s = format!(
        "{} {} → {}",
        proto_name(k.proto),
        ep(k.src, k.src_port),
        ep(k.dst, k.dst_port)
    );
    if matches!(k.proto, 1 | 58) {
        s.push_str(&format!(" id {}", k.src_port));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use txop_core::packet::Ecn;

    fn info(sport: u16) -> PacketInfo {
        PacketInfo {
            src: "198.18.0.1".parse().unwrap(),
            dst: "198.18.1.1".parse().unwrap(),
            proto: 6,
            src_port: sport,
            dst_port: 80,
            dscp: 0,
            ecn: Ecn::NotEct,
        }
    }

    #[test]
    fn one_entry_per_tuple_and_bounded() {
        let mut t = FlowTable::default();
        let (s, a) = (Endpoint::Server, Endpoint::Station(1));
        assert_eq!(t.flow_of(&info(1), s, a), t.flow_of(&info(1), s, a));
        assert_ne!(t.flow_of(&info(1), s, a), t.flow_of(&info(2), s, a));
        for p in 0..(MAX_FLOWS as u16 + 50) {
            t.flow_of(&info(p), s, a);
        }
        assert_eq!(t.len(), MAX_FLOWS + 1, "then one shared entry");
        let r = t.results(1.0, &|_| None);
        assert_eq!(r[0].label, "tcp 198.18.0.1:1 → 198.18.1.1:80");
        assert_eq!((r[0].src.as_str(), r[0].dst.as_str()), ("server", "sta1"));
        assert_eq!(r[MAX_FLOWS].kind, "other");
    }
}
