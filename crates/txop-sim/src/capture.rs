//! The simulator's radiotap capture of the air (`txop run --pcap`, issue 17): the
//! cell's records of its PPDUs ([`txop_core::capture`]) written by
//! [`txop_capture::AirWriter`], each data MPDU's body an IPv4 packet synthesised from
//! what the simulator knows about it (its flow, the TCP segment it carries).
//!
//! Addresses: the server 10.0.0.1, the AP 10.0.0.2, station *n* 10.1.*n/256*.*n%256*.
//! TCP connection *c*: the client's port 32768 + *c* (mod 28 232), the server's 5201;
//! each direction's initial sequence number 0 (its SYN), so byte *k* of the stream is
//! sequence number *k* + 1; timestamps in ms. One-way (UDP) flow *f*: ports 40000 + *f*
//! to 5001. Ping flow *f*: ICMP echo identifier *f*.

use crate::sim::{InFlight, Payload, Simulation};
use crate::traffic::Message;
use std::io;
use txop_capture::synth::{self, tcp_flags, IpFacts, SynOptions, TcpFacts, Transport};
use txop_capture::{AirWriter, CaptureConfig, CaptureStats};
use txop_core::network::Host;
use txop_core::{Nanos, Packet};

/// A running capture: the writer (into memory; its size is bounded by
/// [`CaptureConfig::max_bytes`]) and the first error it met.
pub struct SimCapture {
    writer: AirWriter<Vec<u8>>,
    error: Option<io::Error>,
}

/// The IPv4 address the capture gives `host`.
pub fn host_ip(host: Host) -> [u8; 4] {
    match host {
        Host::Server => [10, 0, 0, 1],
        Host::Ap => [10, 0, 0, 2],
        Host::Station(n) => {
            let [hi, lo] = n.to_be_bytes();
            [10, 1, hi, lo]
        }
    }
}

/// The TCP port of connection `conn`'s client.
pub fn client_port(conn: usize) -> u16 {
    32768 + (conn % 28_232) as u16
}

/// The TCP port of every connection's server.
pub const SERVER_PORT: u16 = 5201;

impl Simulation {
    /// Capture the air from now on, within `cfg`'s bounds; [`Simulation::finish_capture`]
    /// returns the pcapng file.
    pub fn capture(&mut self, cfg: CaptureConfig) -> io::Result<()> {
        let writer = AirWriter::new(Vec::new(), cfg, "txop (simulator)")?;
        self.network_mut().capture_air();
        self.capture = Some(Box::new(SimCapture {
            writer,
            error: None,
        }));
        Ok(())
    }

    /// The capture's pcapng file and what it holds (`None` if none was asked for).
    pub fn finish_capture(&mut self) -> Option<io::Result<(Vec<u8>, CaptureStats)>> {
        let cap = self.capture.take()?;
        Some(match cap.error {
            Some(e) => Err(e),
            None => cap.writer.finish(),
        })
    }

    /// Write what the cell recorded since the last call.
    pub(crate) fn drain_capture(&mut self) {
        let Some(mut cap) = self.capture.take() else {
            return;
        };
        while let Some(ppdu) = self.network_mut().poll_capture() {
            if cap.error.is_some() || !cap.writer.wants(&ppdu) {
                continue;
            }
            let r = cap.writer.write(&ppdu, &mut |packet, max, out| {
                synth::ip_packet(&self.ip_facts(packet), max, out)
            });
            if let Err(e) = r {
                cap.error = Some(e);
            }
        }
        self.capture = Some(cap);
    }

    /// What the capture says `packet` is: its hosts and transport header.
    fn ip_facts(&self, packet: &Packet) -> IpFacts {
        let inflight = self
            .slab
            .get(packet.token as usize)
            .and_then(Option::as_ref);
        let (from, to) = match inflight {
            Some(f) => (f.from, f.to),
            None => (node_host(packet.src), node_host(packet.dst)),
        };
        IpFacts {
            ipv6: false,
            src: host_ip(from),
            dst: host_ip(to),
            dscp: packet.dscp,
            ecn: packet.ecn,
            id: packet.id as u16,
            len_bytes: packet.len_bytes,
            transport: inflight.map_or(
                Transport::Udp {
                    src_port: 9,
                    dst_port: 9,
                },
                |f| self.transport(f, packet),
            ),
        }
    }

    fn transport(&self, f: &InFlight, packet: &Packet) -> Transport {
        let flow = f.flow as usize;
        let ms = |t: Nanos| (t.as_ns() / 1_000_000) as u32;
        let seq32 = |k: u64| (k.wrapping_add(1)) as u32;
        match f.payload {
            Payload::App(Message::Data) => Transport::Udp {
                src_port: 40000u16.wrapping_add(flow as u16),
                dst_port: 5001,
            },
            Payload::App(Message::PingRequest { seq }) => Transport::Echo {
                reply: false,
                id: flow as u16,
                seq: seq as u16,
            },
            Payload::App(Message::PingReply { seq, .. }) => Transport::Echo {
                reply: true,
                id: flow as u16,
                seq: seq as u16,
            },
            Payload::Tcp { conn, seg } => {
                let c = &self.conns[conn as usize];
                let from_client = f.from == c.client();
                let (src_port, dst_port) = self.ports(conn as usize, from_client);
                let mut t = TcpFacts {
                    src_port,
                    dst_port,
                    flags: tcp_flags::ACK,
                    ts: Some((ms(seg.ts_val), ms(seg.ts_ecr))),
                    window: self.advert(conn).window,
                    ..TcpFacts::default()
                };
                if f.from == c.sender {
                    t.seq = seq32(seg.seq);
                    t.ack = 1;
                    if seg.cwr {
                        t.flags |= tcp_flags::CWR;
                    }
                    if seg.fin {
                        t.flags |= tcp_flags::FIN;
                    }
                } else {
                    t.seq = 1;
                    t.ack = seq32(seg.ack);
                    if let crate::tcp::ReceiveWindow::Linux(_) = c.snd.config().receive {
                        let a = self.advert(conn);
                        t.window = (seg.wnd >> a.wscale).min(u16::MAX as u32) as u16;
                    }
                    if seg.ece {
                        t.flags |= tcp_flags::ECE;
                    }
                    let blocks = seg.sack_blocks();
                    for (k, &(l, r)) in blocks.iter().enumerate().take(3) {
                        t.sack[k] = (seq32(l), seq32(r));
                    }
                    t.sack_len = blocks.len().min(3) as u8;
                }
                Transport::Tcp(t)
            }
            Payload::Syn { conn } | Payload::SynAck { conn } | Payload::HandshakeAck { conn } => {
                let from_client = !matches!(f.payload, Payload::SynAck { .. });
                let (src_port, dst_port) = self.ports(conn as usize, from_client);
                let (seq, ack, flags) = match f.payload {
                    Payload::Syn { .. } => (0, 0, tcp_flags::SYN),
                    Payload::SynAck { .. } => (0, 1, tcp_flags::SYN | tcp_flags::ACK),
                    _ => (1, 1, tcp_flags::ACK),
                };
                // With the timestamp option, as every segment the simulator sizes
                // (`tcp::HEADER_BYTES`); a SYN and SYN-ACK with Linux's other
                // options too, the 60 bytes the handshake sizes them.
                let a = self.advert(conn);
                let syn = (flags & tcp_flags::SYN != 0).then_some(SynOptions {
                    mss_bytes: a.mss_bytes,
                    wscale: a.wscale,
                });
                Transport::Tcp(TcpFacts {
                    src_port,
                    dst_port,
                    seq,
                    ack,
                    flags,
                    ts: Some((0, 0)),
                    window: if syn.is_some() {
                        a.syn_window
                    } else {
                        a.window
                    },
                    syn,
                    ..TcpFacts::default()
                })
            }
            // Another BSS's packet (`crate::transit`): its transport is its home
            // simulation's, and `txop run --pcap` captures one BSS alone.
            Payload::Transit { .. } => Transport::Udp {
                src_port: 9,
                dst_port: 9,
            },
            Payload::App(Message::WebRequest { conn, object }) => {
                // The client's requests are not modelled as a byte stream: each takes
                // the sequence space of its own length, by object number.
                let (src_port, dst_port) = self.ports(conn.index(), true);
                let len = packet.len_bytes.saturating_sub(52);
                Transport::Tcp(TcpFacts {
                    src_port,
                    dst_port,
                    seq: 1u32.wrapping_add(object.wrapping_mul(len)),
                    ack: 1,
                    flags: tcp_flags::ACK | tcp_flags::PSH,
                    ts: Some((0, 0)),
                    window: self.advert(conn.0).window,
                    ..TcpFacts::default()
                })
            }
        }
    }

    /// What connection `conn`'s SYNs advertise, and its segments' window field.
    fn advert(&self, conn: u32) -> crate::tcp::SynAdvert {
        crate::tcp::syn_advert(self.conns[conn as usize].snd.config())
    }

    /// (source, destination) ports of connection `conn`'s packets.
    fn ports(&self, conn: usize, from_client: bool) -> (u16, u16) {
        if from_client {
            (client_port(conn), SERVER_PORT)
        } else {
            (SERVER_PORT, client_port(conn))
        }
    }
}

/// The host behind a node, for a packet the simulator no longer tracks.
fn node_host(node: txop_core::NodeId) -> Host {
    match node.as_station() {
        Some(s) => Host::Station(s.0),
        None => Host::Server,
    }
}
