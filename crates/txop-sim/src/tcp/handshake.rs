//! The connection handshake as the simulator runs it: the client's SYN, the server's
//! SYN-ACK, and the client's last ACK, each a packet of its own through the network.
//!
//! - The client (the station's end, [`TcpConn::client`]) sends a SYN and sends it again
//!   when no SYN-ACK came within its timeout: 1 s, doubling, at most
//!   `tcp_syn_retries` (6) times.
//! - The server answers every SYN with a SYN-ACK. When the server is the one that
//!   sends data it waits for the handshake's last ACK, sending the SYN-ACK again on
//!   the same timeouts, at most `tcp_synack_retries` (5) times.
//! - The client's last ACK is a packet only when the server sends the data; otherwise
//!   the client's first data segment or, for a web page, its first request carries it.
//!
//! The data sender sends nothing before its side is complete
//! ([`TcpConn::sender_open`]). A connection whose retries are used up stays unopened
//! (no reset, no error). There is no teardown.
//!
//! [`TcpConn::client`]: super::conn::TcpConn::client
//! [`TcpConn::sender_open`]: super::conn::TcpConn::sender_open

use super::TcpConfig;
use crate::sim::{Event, Payload, Simulation};
use txop_core::Nanos;

/// Where a connection's handshake is.
#[derive(Debug, Default)]
pub(crate) struct Handshake {
    /// The client has its SYN-ACK.
    pub(crate) client_open: bool,
    /// The server has the handshake's last ACK (on a web connection, set when the
    /// client has its SYN-ACK: the client's first request carries that ACK).
    pub(crate) server_open: bool,
    /// SYNs the client sent so far.
    pub(crate) syns: u32,
    /// SYN-ACKs the server sent so far.
    pub(crate) syn_acks: u32,
}

/// Linux's handshake timers: the first SYN and SYN-ACK retransmission after 1 s
/// (`TCP_TIMEOUT_INIT`), doubling; `tcp_syn_retries` 6 and `tcp_synack_retries` 5.
const SYN_TIMEOUT: Nanos = Nanos::from_secs(1);
const SYN_RETRIES: u32 = 6;
const SYNACK_RETRIES: u32 = 5;

/// The retransmission timeout after the `n`-th SYN or SYN-ACK (1-based): 1 s doubling.
fn syn_timeout(n: u32) -> Nanos {
    Nanos(SYN_TIMEOUT.as_ns() << (n - 1))
}
/// IP length of a SYN or SYN-ACK: IPv4 (20) + TCP (20) + the 20 bytes of options
/// Linux sends on both (`tcp_syn_options`, `tcp_synack_options`: MSS 4, SACK-permitted
/// and timestamps 12, NOP and window scale 4), which the capture writes
/// ([`txop_capture::synth::SYN_OPTION_BYTES`]). And of a bare ACK (timestamps alone).
const SYN_BYTES: u32 = 20 + 20 + txop_capture::synth::SYN_OPTION_BYTES as u32;
const ACK_BYTES: u32 = super::HEADER_BYTES;

/// What a connection's SYN and SYN-ACK advertise, and the window field its segments
/// then carry, from its [`TcpConfig`]: both ends take the same configuration, so
/// both advertise the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SynAdvert {
    /// The MSS option: `mss_bytes` + 12, as Linux's `tcp_advertise_mss` gives the
    /// MTU − 40 and its `mss_cache` takes the timestamp option off it.
    pub(crate) mss_bytes: u16,
    /// The window scale shift: `tcp_select_initial_window`'s `ilog2(space) − 15`
    /// (clamped to 0–14): for a fixed window of `rwnd_bytes` (16 MiB: 9), or for
    /// Linux's receiver the larger of `tcp_rmem[2]` and `rmem_max` (6 MiB: 7).
    pub(crate) wscale: u8,
    /// The window field of the SYN and SYN-ACK (never scaled, RFC 7323 2.2): the
    /// window up to 65535, rounded down to a whole MSS (`tcp_select_initial_window`;
    /// 64240 for MSS 1460, as a Linux SYN shows).
    pub(crate) syn_window: u16,
    /// The window field of the data segments (and, with a fixed window, of every
    /// later segment): the window scaled, at most 65535. A Linux receiver's ACKs carry
    /// their own ([`super::Segment::wnd`] scaled).
    pub(crate) window: u16,
}

/// What the SYNs of a connection of `cfg` advertise ([`SynAdvert`]).
pub(crate) fn syn_advert(cfg: &TcpConfig) -> SynAdvert {
    let mss = (cfg.mss_bytes + super::HEADER_BYTES - 40).min(u16::MAX as u32);
    if let super::ReceiveWindow::Linux(_) = cfg.receive {
        let w = cfg.initial_rcv_window();
        return SynAdvert {
            mss_bytes: mss as u16,
            wscale: w.wscale,
            syn_window: w.rcv_wnd_bytes.min(u16::MAX as u64) as u16,
            window: (w.rcv_wnd_bytes >> w.wscale).min(u16::MAX as u64) as u16,
        };
    }
    let rwnd = cfg.rwnd_bytes.max(1);
    let wscale = (rwnd.ilog2() as i64 - 15).clamp(0, 14) as u8;
    let unscaled = rwnd.min(u16::MAX as u64) as u32;
    let syn_window = if unscaled > mss {
        unscaled / mss * mss
    } else {
        unscaled
    };
    SynAdvert {
        mss_bytes: mss as u16,
        wscale,
        syn_window: syn_window as u16,
        window: (rwnd >> wscale).min(u16::MAX as u64) as u16,
    }
}

impl Simulation {
    /// The client sends a SYN (again) and arms its retransmission timer.
    pub(crate) fn send_syn(&mut self, at: Nanos, conn: usize) {
        let c = &mut self.conns[conn];
        c.handshake.syns += 1;
        let (n, client, server) = (c.handshake.syns, c.client(), c.server());
        self.events.push(
            at + syn_timeout(n),
            Event::SynTimer {
                conn: conn as u32,
                n,
            },
        );
        let syn = Payload::Syn { conn: conn as u32 };
        self.conn_packet(at, conn, syn, SYN_BYTES, client, server);
    }

    /// The server answers a SYN (again). When it sends the data it waits for the
    /// handshake's last ACK, retransmitting the SYN-ACK until it comes.
    pub(crate) fn send_syn_ack(&mut self, at: Nanos, conn: usize) {
        let c = &mut self.conns[conn];
        c.handshake.syn_acks += 1;
        let (n, client, server) = (c.handshake.syn_acks, c.client(), c.server());
        if server == c.sender && !c.handshake.server_open {
            self.events.push(
                at + syn_timeout(n),
                Event::SynAckTimer {
                    conn: conn as u32,
                    n,
                },
            );
        }
        let syn_ack = Payload::SynAck { conn: conn as u32 };
        self.conn_packet(at, conn, syn_ack, SYN_BYTES, server, client);
    }

    /// The client's last ACK of the handshake, when the server is the one that sends.
    fn send_handshake_ack(&mut self, at: Nanos, conn: usize) {
        let c = &self.conns[conn];
        let (client, server) = (c.client(), c.server());
        let ack = Payload::HandshakeAck { conn: conn as u32 };
        self.conn_packet(at, conn, ack, ACK_BYTES, client, server);
    }

    /// The client's SYN number `n` went unanswered for its timeout: send it again,
    /// unless a SYN-ACK came, a later SYN was sent, or the retries are used up.
    pub(crate) fn syn_timer(&mut self, at: Nanos, conn: usize, n: u32) {
        let c = &self.conns[conn];
        if !c.handshake.client_open && c.handshake.syns == n && n <= SYN_RETRIES {
            self.send_syn(at, conn);
        }
    }

    /// The server's SYN-ACK number `n` went unacknowledged for its timeout: send it
    /// again, unless the last ACK came, a later SYN-ACK was sent, or the retries are
    /// used up.
    pub(crate) fn syn_ack_timer(&mut self, at: Nanos, conn: usize, n: u32) {
        let c = &self.conns[conn];
        if !c.handshake.server_open && c.handshake.syn_acks == n && n <= SYNACK_RETRIES {
            self.send_syn_ack(at, conn);
        }
    }

    /// A SYN-ACK reached the client: its side is open. A client that makes requests
    /// (a web client) sends its first request (which carries the last ACK); a client
    /// that sends data starts sending; otherwise it sends the last ACK. A SYN-ACK that
    /// comes again means the last ACK was lost: it is sent again.
    pub(crate) fn syn_ack_arrived(&mut self, at: Nanos, conn: usize) {
        let c = &mut self.conns[conn];
        if c.handshake.client_open {
            // A retransmitted SYN-ACK: the ACK to it was lost; send it again.
            if c.server() == c.sender && !c.client_requests {
                self.send_handshake_ack(at, conn);
            }
            return;
        }
        c.handshake.client_open = true;
        if c.client_requests {
            // The request carries the ACK; the server needs no other.
            c.handshake.server_open = true;
            self.with_conn_source(conn, at, |s, ctx, conn| s.connected(ctx, conn));
        } else if c.client() == c.sender {
            self.pump_tcp(at, conn);
        } else {
            self.send_handshake_ack(at, conn);
        }
    }

    /// The handshake's last ACK reached the server: its side is open, and it starts
    /// sending.
    pub(crate) fn handshake_ack_arrived(&mut self, at: Nanos, conn: usize) {
        let c = &mut self.conns[conn];
        if !c.handshake.server_open {
            c.handshake.server_open = true;
            self.pump_tcp(at, conn);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_1500_byte_mtu_advertises_what_linux_does() {
        // MSS 1460 and a SYN window of 44 of them, 64240, as a Linux 6.x SYN on
        // Ethernet; 16 MiB of window needs a shift of 9 to fit 16 bits.
        let a = syn_advert(&TcpConfig::default());
        assert_eq!(
            a,
            SynAdvert {
                mss_bytes: 1460,
                wscale: 9,
                syn_window: 64240,
                window: 32768,
            }
        );
        assert_eq!(SYN_BYTES, 60);
        let small = syn_advert(&TcpConfig {
            rwnd_bytes: 4 * 1448,
            ..TcpConfig::default()
        });
        assert_eq!((small.wscale, small.window), (0, 4 * 1448));
        // A 6.12 receiver: its initial window (45 × 1448) and the scale of 6 MiB.
        let linux = syn_advert(&TcpConfig {
            receive: super::super::ReceiveWindow::Linux(super::super::LinuxReceive::linux_6_12()),
            ..TcpConfig::default()
        });
        assert_eq!((linux.wscale, linux.syn_window), (7, 65_160));
    }
}
