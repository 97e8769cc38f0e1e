//! Synthetic IP packets for the simulator's captures: the IPv4 or IPv6 header and the
//! TCP, UDP or ICMP header of each modelled packet, from the flow's facts (addresses,
//! ports, TCP sequence and acknowledgement numbers, timestamps and SACK blocks, ECN),
//! so that Wireshark's TCP analysis follows the modelled connections. The payload after
//! the headers is zeros.

use txop_core::packet::Ecn;

/// TCP flag bits (RFC 9293 3.1, RFC 3168 ECE/CWR).
pub mod tcp_flags {
    /// FIN.
    pub const FIN: u8 = 0x01;
    /// SYN.
    pub const SYN: u8 = 0x02;
    /// PSH.
    pub const PSH: u8 = 0x08;
    /// ACK.
    pub const ACK: u8 = 0x10;
    /// ECN-Echo.
    pub const ECE: u8 = 0x40;
    /// Congestion Window Reduced.
    pub const CWR: u8 = 0x80;
}

/// What a SYN or SYN-ACK advertises beside its timestamps: the options Linux puts on
/// every SYN and SYN-ACK by default (`tcp_syn_options`, `tcp_synack_options` in
/// `net/ipv4/tcp_output.c`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SynOptions {
    /// Maximum segment size, bytes (the MTU − 40: Linux's `tcp_advertise_mss`, which
    /// leaves the timestamp option out of it).
    pub mss_bytes: u16,
    /// Window scale shift (RFC 7323 2.2), 0 to 14.
    pub wscale: u8,
}

/// TCP options bytes on a SYN or SYN-ACK: MSS (4), SACK-permitted and timestamps
/// together (2 + 10), NOP and window scale (1 + 3) — 20 bytes, so that a SYN's IP
/// packet is 20 + 20 + 20 = 60 bytes, as Linux's.
pub const SYN_OPTION_BYTES: usize = 20;

/// A TCP header's facts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpFacts {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Sequence number.
    pub seq: u32,
    /// Acknowledgement number.
    pub ack: u32,
    /// Flags ([`tcp_flags`]).
    pub flags: u8,
    /// Timestamp option: TSval and TSecr (RFC 7323).
    pub ts: Option<(u32, u32)>,
    /// SACK blocks (left, right edge), at most 3 (`sack_len` valid).
    pub sack: [(u32, u32); 3],
    /// Valid SACK blocks.
    pub sack_len: u8,
    /// The window field as sent (scaled by the window scale the SYNs advertised, except
    /// on a SYN or SYN-ACK itself, RFC 7323 2.2).
    pub window: u16,
    /// A SYN or SYN-ACK's options (`None` on other segments). They need `ts` too.
    pub syn: Option<SynOptions>,
}

/// What follows the IP header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// TCP.
    Tcp(TcpFacts),
    /// UDP between two ports.
    Udp {
        /// Source port.
        src_port: u16,
        /// Destination port.
        dst_port: u16,
    },
    /// ICMP (ICMPv6 over IPv6) echo request or reply.
    Echo {
        /// A reply (else a request).
        reply: bool,
        /// Identifier.
        id: u16,
        /// Sequence number.
        seq: u16,
    },
}

/// One IP packet's facts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IpFacts {
    /// IPv6 (else IPv4); the addresses are then `fd00::` followed by the IPv4 ones.
    pub ipv6: bool,
    /// Source IPv4 address (or the last 32 bits of the IPv6 one).
    pub src: [u8; 4],
    /// Destination address, likewise.
    pub dst: [u8; 4],
    /// DSCP (6 bits).
    pub dscp: u8,
    /// ECN codepoint.
    pub ecn: Ecn,
    /// IPv4 identification.
    pub id: u16,
    /// The IP packet's whole length, bytes (headers included).
    pub len_bytes: u32,
    /// The transport header.
    pub transport: Transport,
}

fn ecn_bits(ecn: Ecn) -> u8 {
    match ecn {
        Ecn::NotEct => 0,
        Ecn::Ect1 => 1,
        Ecn::Ect0 => 2,
        Ecn::Ce => 3,
    }
}

/// The Internet checksum (RFC 1071) of `bytes`, starting from `sum`.
fn checksum(bytes: &[u8], mut sum: u32) -> u16 {
    for c in bytes.chunks(2) {
        let word = u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]);
        sum += u32::from(word);
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Append the first `max_bytes` bytes (at most) of the IP packet `f` describes to
/// `out`: its headers, then zeros up to its length. The headers are cut off there too.
pub fn ip_packet(f: &IpFacts, max_bytes: usize, out: &mut Vec<u8>) {
    let start = out.len();
    let len = f.len_bytes as usize;
    let ip_header = if f.ipv6 { 40 } else { 20 };
    let tos = f.dscp << 2 | ecn_bits(f.ecn);
    let proto = match f.transport {
        Transport::Tcp(_) => 6,
        Transport::Udp { .. } => 17,
        Transport::Echo { .. } if f.ipv6 => 58,
        Transport::Echo { .. } => 1,
    };
    if f.ipv6 {
        let word = 6u32 << 28 | u32::from(tos) << 20;
        out.extend_from_slice(&word.to_be_bytes());
        out.extend_from_slice(&((len.saturating_sub(40)) as u16).to_be_bytes());
        out.extend_from_slice(&[proto, 64]);
        for a in [f.src, f.dst] {
            out.extend_from_slice(&[0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
            out.extend_from_slice(&a);
        }
    } else {
        out.extend_from_slice(&[0x45, tos]);
        out.extend_from_slice(&(len as u16).to_be_bytes());
        out.extend_from_slice(&f.id.to_be_bytes());
        // Don't fragment, TTL 64.
        out.extend_from_slice(&[0x40, 0, 64, proto, 0, 0]);
        out.extend_from_slice(&f.src);
        out.extend_from_slice(&f.dst);
        let c = checksum(&out[start..start + 20], 0);
        out[start + 10..start + 12].copy_from_slice(&c.to_be_bytes());
    }
    let l4 = out.len();
    match f.transport {
        Transport::Tcp(t) => {
            let mut opts: Vec<u8> = Vec::new();
            // In `tcp_options_write`'s order and layout: MSS; timestamps, behind
            // SACK-permitted on a SYN (else behind two NOPs); NOP and window scale;
            // SACK blocks behind two NOPs.
            if let Some(syn) = t.syn {
                opts.extend_from_slice(&[2, 4]);
                opts.extend_from_slice(&syn.mss_bytes.to_be_bytes());
            }
            if let Some((val, ecr)) = t.ts {
                let lead = if t.syn.is_some() { [4, 2] } else { [1, 1] };
                opts.extend_from_slice(&lead);
                opts.extend_from_slice(&[8, 10]);
                opts.extend_from_slice(&val.to_be_bytes());
                opts.extend_from_slice(&ecr.to_be_bytes());
            } else if t.syn.is_some() {
                opts.extend_from_slice(&[1, 1, 4, 2]);
            }
            if let Some(syn) = t.syn {
                opts.extend_from_slice(&[1, 3, 3, syn.wscale]);
            }
            if t.sack_len > 0 {
                let n = t.sack_len.min(3) as usize;
                opts.extend_from_slice(&[1, 1, 5, 2 + 8 * n as u8]);
                for &(l, r) in &t.sack[..n] {
                    opts.extend_from_slice(&l.to_be_bytes());
                    opts.extend_from_slice(&r.to_be_bytes());
                }
            }
            let header = 20 + opts.len();
            out.extend_from_slice(&t.src_port.to_be_bytes());
            out.extend_from_slice(&t.dst_port.to_be_bytes());
            out.extend_from_slice(&t.seq.to_be_bytes());
            out.extend_from_slice(&t.ack.to_be_bytes());
            out.extend_from_slice(&[((header / 4) as u8) << 4, t.flags]);
            // Checksum left zero (Wireshark does not check it by default), no
            // urgent pointer.
            out.extend_from_slice(&t.window.to_be_bytes());
            out.extend_from_slice(&[0, 0, 0, 0]);
            out.extend_from_slice(&opts);
        }
        Transport::Udp { src_port, dst_port } => {
            out.extend_from_slice(&src_port.to_be_bytes());
            out.extend_from_slice(&dst_port.to_be_bytes());
            out.extend_from_slice(&((len.saturating_sub(ip_header)) as u16).to_be_bytes());
            out.extend_from_slice(&[0, 0]);
        }
        Transport::Echo { reply, id, seq } => {
            let kind = match (f.ipv6, reply) {
                (false, false) => 8,
                (false, true) => 0,
                (true, false) => 128,
                (true, true) => 129,
            };
            out.extend_from_slice(&[kind, 0, 0, 0]);
            out.extend_from_slice(&id.to_be_bytes());
            out.extend_from_slice(&seq.to_be_bytes());
            if !f.ipv6 {
                // The payload is zeros: the checksum covers the header alone.
                let c = checksum(&out[l4..l4 + 8], 0);
                out[l4 + 2..l4 + 4].copy_from_slice(&c.to_be_bytes());
            }
        }
    }
    let whole = len.max(out.len() - start);
    out.resize(start + whole.min(max_bytes), 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv4_tcp_header_with_timestamps_is_52_bytes_and_checksummed() {
        let f = IpFacts {
            ipv6: false,
            src: [10, 0, 0, 1],
            dst: [10, 1, 0, 2],
            dscp: 0,
            ecn: Ecn::Ect0,
            id: 7,
            len_bytes: 1500,
            transport: Transport::Tcp(TcpFacts {
                src_port: 5201,
                dst_port: 40000,
                seq: 1,
                ack: 1,
                flags: tcp_flags::ACK,
                ts: Some((1, 2)),
                ..TcpFacts::default()
            }),
        };
        let mut out = Vec::new();
        ip_packet(&f, usize::MAX, &mut out);
        assert_eq!(out.len(), 1500);
        assert_eq!(out[1], 2, "ECT(0)");
        assert_eq!(checksum(&out[..20], 0), 0, "a valid header sums to zero");
        assert_eq!(out[20 + 12] >> 4, 8, "TCP header 32 bytes");
        assert!(out[52..].iter().all(|&b| b == 0));
        let mut cut = Vec::new();
        ip_packet(&f, 40, &mut cut);
        assert_eq!(cut, out[..40]);
    }

    #[test]
    fn a_syn_carries_linuxs_options_and_no_payload() {
        let f = IpFacts {
            ipv6: false,
            src: [10, 1, 0, 1],
            dst: [10, 0, 0, 1],
            dscp: 0,
            ecn: Ecn::NotEct,
            id: 0,
            len_bytes: 60,
            transport: Transport::Tcp(TcpFacts {
                src_port: 32768,
                dst_port: 5201,
                flags: tcp_flags::SYN,
                ts: Some((0x0102_0304, 0)),
                window: 64240,
                syn: Some(SynOptions {
                    mss_bytes: 1460,
                    wscale: 9,
                }),
                ..TcpFacts::default()
            }),
        };
        let mut out = Vec::new();
        ip_packet(&f, usize::MAX, &mut out);
        assert_eq!(out.len(), 60);
        // Data offset 10 words: the headers fill the packet, nothing is payload.
        assert_eq!(out[20 + 12] >> 4, 10);
        assert_eq!(&out[20 + 14..20 + 16], &64240u16.to_be_bytes());
        // `tcp_options_write`: MSS; SACK-permitted, timestamps; NOP, window scale.
        assert_eq!(
            &out[40..60],
            &[2, 4, 0x05, 0xb4, 4, 2, 8, 10, 1, 2, 3, 4, 0, 0, 0, 0, 1, 3, 3, 9]
        );
        assert_eq!(40 + SYN_OPTION_BYTES, 60);
    }
}
