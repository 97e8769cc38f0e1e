//! What the model needs to know about a real IP packet: its addresses, its flow (a hash
//! of the 5-tuple, as the kernel's flow dissector feeds fq), its DSCP and ECN codepoint
//! — and the one rewrite the model asks for, setting CE (RFC 3168 §5).
//!
//! Parsing is etherparse's. The model classifies the DSCP to a TID itself
//! (`TxPath::enqueue`, `cfg80211_classify8021d`), so the packet goes in with TID 0 and
//! its DSCP.

use etherparse::{NetSlice, SlicedPacket, TransportSlice};
use std::net::IpAddr;
use txop_core::packet::Ecn;
use txop_core::rng::mix64;

/// Header facts of one IP packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketInfo {
    pub src: IpAddr,
    pub dst: IpAddr,
    /// IP protocol number (IPv6: of the last extension header's payload).
    pub proto: u8,
    /// TCP/UDP ports; for ICMP echo the identifier in both; otherwise 0.
    pub src_port: u16,
    pub dst_port: u16,
    pub dscp: u8,
    pub ecn: Ecn,
}

/// Why a packet was not forwarded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParseError {
    /// Not IPv4 or IPv6 (ARP, a bad version nibble, garbage).
    NotIp,
    /// An IP packet whose headers are cut short or inconsistent.
    Malformed,
}

fn ecn_of(bits: u8) -> Ecn {
    match bits & 3 {
        0 => Ecn::NotEct,
        1 => Ecn::Ect1,
        2 => Ecn::Ect0,
        _ => Ecn::Ce,
    }
}

/// ICMP echo request/reply identifier (both versions put it in bytes 4–5), so that
/// concurrent pings are separate flows as their sockets would be.
fn echo_id(icmp: &[u8], echo_types: [u8; 2]) -> u16 {
    match icmp {
        [t, _, _, _, a, b, ..] if echo_types.contains(t) => u16::from_be_bytes([*a, *b]),
        _ => 0,
    }
}

impl PacketInfo {
    /// Parse the IP packet `bytes` (a TUN frame without packet information).
    pub fn parse(bytes: &[u8]) -> Result<PacketInfo, ParseError> {
        match bytes.first().map(|b| b >> 4) {
            Some(4 | 6) => {}
            _ => return Err(ParseError::NotIp),
        }
        let p = SlicedPacket::from_ip(bytes).map_err(|_| ParseError::Malformed)?;
        let (src, dst, proto, dscp, ecn) = match &p.net {
            Some(NetSlice::Ipv4(v4)) => {
                let h = v4.header();
                (
                    IpAddr::V4(h.source_addr()),
                    IpAddr::V4(h.destination_addr()),
                    v4.payload_ip_number().0,
                    h.dcp().value(),
                    ecn_of(h.ecn().value()),
                )
            }
            Some(NetSlice::Ipv6(v6)) => {
                let h = v6.header();
                (
                    IpAddr::V6(h.source_addr()),
                    IpAddr::V6(h.destination_addr()),
                    v6.payload().ip_number.0,
                    h.dscp().value(),
                    ecn_of(h.ecn().value()),
                )
            }
            _ => return Err(ParseError::NotIp),
        };
        let (src_port, dst_port) = match &p.transport {
            Some(TransportSlice::Tcp(t)) => (t.source_port(), t.destination_port()),
            Some(TransportSlice::Udp(u)) => (u.source_port(), u.destination_port()),
            Some(TransportSlice::Icmpv4(i)) => {
                let id = echo_id(i.slice(), [0, 8]);
                (id, id)
            }
            Some(TransportSlice::Icmpv6(i)) => {
                let id = echo_id(i.slice(), [128, 129]);
                (id, id)
            }
            _ => (0, 0),
        };
        Ok(PacketInfo {
            src,
            dst,
            proto,
            src_port,
            dst_port,
            dscp,
            ecn,
        })
    }

    /// The 5-tuple's hash: the flow identifier fq uses (each direction its own flow,
    /// which is all the model's per-direction queues can see).
    pub fn flow_hash(&self) -> u32 {
        let addr = |a: IpAddr| match a {
            IpAddr::V4(v) => u32::from(v) as u64,
            IpAddr::V6(v) => {
                let x = u128::from(v);
                mix64((x >> 64) as u64) ^ x as u64
            }
        };
        let ports = ((self.src_port as u64) << 16) | self.dst_port as u64;
        let h = mix64(
            addr(self.src) ^ mix64(addr(self.dst) ^ mix64(ports ^ (self.proto as u64) << 32)),
        );
        (h ^ (h >> 32)) as u32
    }
}

/// The ECN codepoint in the IP header of `bytes`, if it is IPv4 or IPv6.
pub fn ecn_of_bytes(bytes: &[u8]) -> Option<Ecn> {
    match (bytes.first().map(|b| b >> 4), bytes.get(1)) {
        (Some(4), Some(tos)) => Some(ecn_of(*tos)),
        (Some(6), Some(b1)) => Some(ecn_of(b1 >> 4)),
        _ => None,
    }
}

/// Set the ECN field of the IP packet `bytes` to CE (the model marked it), fixing the
/// IPv4 header checksum (IPv6 has none). Returns false, changing nothing, if the
/// packet is not IP or too short.
pub fn set_ce(bytes: &mut [u8]) -> bool {
    match bytes.first().map(|b| b >> 4) {
        Some(4) if bytes.len() >= 20 => {
            let ihl_bytes = ((bytes[0] & 0x0f) as usize) * 4;
            if ihl_bytes < 20 || bytes.len() < ihl_bytes {
                return false;
            }
            bytes[1] |= 0b11;
            bytes[10] = 0;
            bytes[11] = 0;
            let sum = ipv4_header_checksum(&bytes[..ihl_bytes]);
            bytes[10..12].copy_from_slice(&sum.to_be_bytes());
            true
        }
        Some(6) if bytes.len() >= 40 => {
            // Traffic class is bits 4–11 of the first word; ECN its two low bits.
            bytes[1] |= 0x30;
            true
        }
        _ => false,
    }
}

/// The Internet checksum of an IPv4 header whose checksum field is zero (RFC 1071).
fn ipv4_header_checksum(header: &[u8]) -> u16 {
    let mut sum: u32 = header
        .chunks(2)
        .map(|w| u16::from_be_bytes([w[0], *w.get(1).unwrap_or(&0)]) as u32)
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

#[cfg(test)]
mod tests {
    use super::*;
    use etherparse::{IpDscp, IpEcn, PacketBuilder};

    fn udp4(dscp: u8, ecn: Ecn, sport: u16) -> Vec<u8> {
        let b = PacketBuilder::ipv4([198, 18, 0, 1], [198, 18, 1, 1], 64).udp(sport, 5201);
        let mut v = Vec::new();
        b.write(&mut v, &[7u8; 100]).unwrap();
        // PacketBuilder has no DSCP/ECN setters on this path: set the TOS byte and
        // recompute the checksum the way a sender's stack would.
        let ecn_bits = match ecn {
            Ecn::NotEct => 0,
            Ecn::Ect1 => 1,
            Ecn::Ect0 => 2,
            Ecn::Ce => 3,
        };
        v[1] = dscp << 2 | ecn_bits;
        let mut h = etherparse::Ipv4Header::from_slice(&v).unwrap().0;
        h.header_checksum = h.calc_header_checksum();
        v[..20].copy_from_slice(&h.to_bytes());
        v
    }

    #[test]
    fn parses_udp_over_ipv4_with_dscp_and_ecn() {
        let v = udp4(46, Ecn::Ect0, 4000);
        let i = PacketInfo::parse(&v).unwrap();
        assert_eq!(i.src, "198.18.0.1".parse::<IpAddr>().unwrap());
        assert_eq!(i.dst, "198.18.1.1".parse::<IpAddr>().unwrap());
        assert_eq!((i.proto, i.src_port, i.dst_port), (17, 4000, 5201));
        assert_eq!((i.dscp, i.ecn), (46, Ecn::Ect0));
    }

    #[test]
    fn parses_tcp_over_ipv6_and_icmp_echo() {
        let b = PacketBuilder::ipv6(
            "fd74:786f:7000::1"
                .parse::<std::net::Ipv6Addr>()
                .unwrap()
                .octets(),
            "fd74:786f:7000::1:2"
                .parse::<std::net::Ipv6Addr>()
                .unwrap()
                .octets(),
            64,
        )
        .tcp(443, 50000, 1, 65535);
        let mut v = Vec::new();
        b.write(&mut v, b"hello").unwrap();
        // Traffic class 0xa1 = DSCP 40, ECN 01, split over the first two bytes.
        let tc: u8 = 40 << 2 | 1;
        v[0] = 0x60 | tc >> 4;
        v[1] = (v[1] & 0x0f) | (tc & 0x0f) << 4;
        let i = PacketInfo::parse(&v).unwrap();
        assert_eq!((i.proto, i.src_port, i.dst_port), (6, 443, 50000));
        assert_eq!((i.dscp, i.ecn), (40, Ecn::Ect1));

        let b = PacketBuilder::ipv4([198, 18, 1, 1], [198, 18, 0, 1], 64)
            .icmpv4_echo_request(0x1234, 1);
        let mut v = Vec::new();
        b.write(&mut v, &[0u8; 56]).unwrap();
        let i = PacketInfo::parse(&v).unwrap();
        assert_eq!((i.proto, i.src_port, i.dst_port), (1, 0x1234, 0x1234));
        assert_eq!(v.len(), 84, "ping's default packet");
    }

    #[test]
    fn flows_differ_by_any_tuple_field_and_are_stable() {
        let a = PacketInfo::parse(&udp4(0, Ecn::NotEct, 4000)).unwrap();
        let b = PacketInfo::parse(&udp4(0, Ecn::NotEct, 4001)).unwrap();
        let a2 = PacketInfo::parse(&udp4(46, Ecn::Ect0, 4000)).unwrap();
        assert_ne!(a.flow_hash(), b.flow_hash());
        assert_eq!(
            a.flow_hash(),
            a2.flow_hash(),
            "DSCP/ECN are not in the tuple"
        );
    }

    #[test]
    fn rejects_non_ip_and_truncated_packets() {
        assert_eq!(PacketInfo::parse(&[]), Err(ParseError::NotIp));
        assert_eq!(
            PacketInfo::parse(&[0x00, 0x01, 0x08, 0x00]),
            Err(ParseError::NotIp)
        );
        let v = udp4(0, Ecn::NotEct, 1);
        assert_eq!(PacketInfo::parse(&v[..15]), Err(ParseError::Malformed));
        // A total length beyond the bytes read.
        let mut bad = v.clone();
        bad[2] = 0xff;
        assert_eq!(PacketInfo::parse(&bad), Err(ParseError::Malformed));
    }

    #[test]
    fn ce_marking_sets_both_bits_and_a_valid_ipv4_checksum() {
        for ecn in [Ecn::Ect0, Ecn::Ect1] {
            let mut v = udp4(10, ecn, 9);
            assert!(set_ce(&mut v));
            let (h, _) = etherparse::Ipv4Header::from_slice(&v).unwrap();
            assert_eq!(h.ecn, IpEcn::CongestionExperienced);
            assert_eq!(h.dscp, IpDscp::try_new(10).unwrap(), "DSCP untouched");
            assert_eq!(h.header_checksum, h.calc_header_checksum());
            assert_eq!(PacketInfo::parse(&v).unwrap().ecn, Ecn::Ce);
        }
        let mut v6 = vec![0u8; 48];
        v6[0] = 0x60;
        v6[1] = 0x20; // ECT(0)
        assert!(set_ce(&mut v6));
        assert_eq!((v6[0], v6[1]), (0x60, 0x30));
        assert!(!set_ce(&mut [0x45, 0, 0]));
    }
}
