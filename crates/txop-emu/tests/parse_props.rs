//! Property tests of the emulator's packet parser: its one untrusted input.
//!
//! Whatever a program in a namespace writes to its TUN device reaches
//! [`PacketInfo::parse`], [`ecn_of_bytes`] and [`set_ce`]. The oracles:
//!
//! - arbitrary bytes never panic, and a packet that is not IP is refused as `NotIp`;
//! - a packet built by etherparse (IPv4/IPv6 × TCP/UDP, any addresses, ports, DSCP and
//!   ECN) parses to exactly the fields it was built with, and every truncation of it
//!   either parses or is refused, never panics;
//! - marking CE changes the ECN field to CE and nothing else the model reads, and keeps
//!   the IPv4 header checksum valid (RFC 791: the one's-complement sum of the header is
//!   0xffff).
//!
//! 256 cases each by default, a few seconds in all; `PROPTEST_CASES=100000` runs longer.

use etherparse::PacketBuilder;
use proptest::prelude::*;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use txop_core::packet::Ecn;
use txop_emu::parse::{ecn_of_bytes, set_ce, PacketInfo, ParseError};

/// The transport of a generated packet.
#[derive(Clone, Copy, Debug)]
enum Transport {
    Tcp,
    Udp,
}

/// One generated packet and the header facts it was built with.
#[derive(Clone, Debug)]
struct Built {
    bytes: Vec<u8>,
    expect: PacketInfo,
}

fn ecn(bits: u8) -> Ecn {
    match bits {
        0 => Ecn::NotEct,
        1 => Ecn::Ect1,
        2 => Ecn::Ect0,
        _ => Ecn::Ce,
    }
}

/// The IPv4 header's one's-complement sum, 0xffff when its checksum is right.
fn ipv4_header_sum(header: &[u8]) -> u16 {
    let mut sum: u32 = header
        .chunks(2)
        .map(|w| u16::from_be_bytes([w[0], *w.get(1).unwrap_or(&0)]) as u32)
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum as u16
}

#[allow(clippy::too_many_arguments)]
fn build(
    v6: bool,
    transport: Transport,
    src: u128,
    dst: u128,
    ports: (u16, u16),
    dscp: u8,
    ecn_bits: u8,
    payload: &[u8],
) -> Built {
    let (src_ip, dst_ip, builder) = if v6 {
        let (s, d) = (Ipv6Addr::from(src), Ipv6Addr::from(dst));
        let b = PacketBuilder::ipv6(s.octets(), d.octets(), 64);
        (IpAddr::V6(s), IpAddr::V6(d), b)
    } else {
        let (s, d) = (Ipv4Addr::from(src as u32), Ipv4Addr::from(dst as u32));
        let b = PacketBuilder::ipv4(s.octets(), d.octets(), 64);
        (IpAddr::V4(s), IpAddr::V4(d), b)
    };
    let (proto, mut bytes) = match transport {
        Transport::Tcp => {
            let b = builder.tcp(ports.0, ports.1, 1, 65535);
            let mut out = Vec::with_capacity(b.size(payload.len()));
            b.write(&mut out, payload).unwrap();
            (6, out)
        }
        Transport::Udp => {
            let b = builder.udp(ports.0, ports.1);
            let mut out = Vec::with_capacity(b.size(payload.len()));
            b.write(&mut out, payload).unwrap();
            (17, out)
        }
    };
    // Traffic class: DSCP in the top six bits, ECN in the low two.
    let tos = (dscp << 2) | ecn_bits;
    if v6 {
        bytes[0] = (bytes[0] & 0xf0) | (tos >> 4);
        bytes[1] = (bytes[1] & 0x0f) | (tos << 4);
    } else {
        bytes[1] = tos;
        bytes[10] = 0;
        bytes[11] = 0;
        let sum = !ipv4_header_sum(&bytes[..20]);
        bytes[10..12].copy_from_slice(&sum.to_be_bytes());
    }
    Built {
        bytes,
        expect: PacketInfo {
            src: src_ip,
            dst: dst_ip,
            proto,
            src_port: ports.0,
            dst_port: ports.1,
            dscp,
            ecn: ecn(ecn_bits),
        },
    }
}

fn packets() -> impl Strategy<Value = Built> {
    (
        any::<bool>(),
        prop_oneof![Just(Transport::Tcp), Just(Transport::Udp)],
        any::<u128>(),
        any::<u128>(),
        any::<(u16, u16)>(),
        0u8..64,
        0u8..4,
        proptest::collection::vec(any::<u8>(), 0..1400),
    )
        .prop_map(|(v6, t, s, d, ports, dscp, e, payload)| {
            build(v6, t, s, d, ports, dscp, e, &payload)
        })
}

/// Arbitrary bytes, half of them starting like an IPv4 or IPv6 header so that the
/// parser gets past its first check.
fn garbage() -> impl Strategy<Value = Vec<u8>> {
    let any_bytes = proptest::collection::vec(any::<u8>(), 0..1600);
    prop_oneof![
        any_bytes.clone(),
        (
            prop_oneof![Just(0x45u8), Just(0x4fu8), Just(0x60u8)],
            any_bytes
        )
            .prop_map(|(first, mut rest)| {
                rest.insert(0, first);
                rest
            }),
    ]
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in garbage()) {
        let parsed = PacketInfo::parse(&bytes);
        if !matches!(bytes.first().map(|b| b >> 4), Some(4 | 6)) {
            prop_assert_eq!(parsed, Err(ParseError::NotIp));
        }
        if let Ok(info) = parsed {
            let _ = info.flow_hash();
        }
        let mut marked = bytes.clone();
        if set_ce(&mut marked) {
            prop_assert_eq!(ecn_of_bytes(&marked), Some(Ecn::Ce));
            prop_assert_eq!(marked.len(), bytes.len());
        } else {
            prop_assert_eq!(&marked, &bytes, "a refused mark changes nothing");
        }
    }

    #[test]
    fn built_packets_parse_to_what_they_were_built_with(p in packets()) {
        prop_assert_eq!(PacketInfo::parse(&p.bytes), Ok(p.expect));
        prop_assert_eq!(ecn_of_bytes(&p.bytes), Some(p.expect.ecn));
        if p.expect.src.is_ipv4() {
            prop_assert_eq!(ipv4_header_sum(&p.bytes[..20]), 0xffff);
        }
    }

    #[test]
    fn every_truncation_parses_or_is_refused(p in packets(), cut in any::<prop::sample::Index>()) {
        let len = cut.index(p.bytes.len());
        let header_bytes = if p.expect.src.is_ipv4() { 20 } else { 40 };
        match PacketInfo::parse(&p.bytes[..len]) {
            Ok(info) => {
                prop_assert!(len >= header_bytes, "parsed a cut IP header ({len} bytes)");
                prop_assert_eq!((info.src, info.dst), (p.expect.src, p.expect.dst));
            }
            Err(e) => prop_assert!(len == 0 || e == ParseError::Malformed),
        }
    }

    #[test]
    fn marking_ce_changes_only_the_ecn_field(p in packets()) {
        let mut marked = p.bytes.clone();
        prop_assert!(set_ce(&mut marked));
        let info = PacketInfo::parse(&marked).expect("a marked packet still parses");
        prop_assert_eq!(info, PacketInfo { ecn: Ecn::Ce, ..p.expect });
        prop_assert_eq!(info.flow_hash(), p.expect.flow_hash(), "CE does not move a packet to another flow");
        if p.expect.src.is_ipv4() {
            prop_assert_eq!(ipv4_header_sum(&marked[..20]), 0xffff);
        }
        let changed: Vec<usize> = (0..marked.len()).filter(|&i| marked[i] != p.bytes[i]).collect();
        let allowed: &[usize] = if p.expect.src.is_ipv4() { &[1, 10, 11] } else { &[1] };
        prop_assert!(changed.iter().all(|i| allowed.contains(i)), "changed bytes {:?}", changed);
    }
}
