//! A TCP connection as the simulator runs it: a [`TcpSender`] and a [`TcpReceiver`] on
//! two hosts, their timer in the event queue, and their segments carried as packets
//! through the network (the cell, a host bus, the wired link).
//!
//! The connection is opened by the handshake ([`super::handshake`]); the sender sends
//! no data before its side of it is complete.

use super::handshake::Handshake;
use super::{Segment, TcpConfig, TcpReceiver, TcpSender};
use crate::conn_timer::ConnTimer;
use crate::sim::{Event, InFlight, Payload, Simulation};
use crate::traffic::{Host, Marking};
use txop_core::packet::Ecn;
use txop_core::Nanos;
use txop_core::Packet;
use txop_results::flowstats::TcpSample;
use txop_results::{BudgetArrival, Direction};

/// One TCP connection's two ends.
pub(crate) struct TcpConn {
    pub(crate) flow: usize,
    pub(crate) sender: Host,
    pub(crate) receiver: Host,
    /// How both ends mark their packets.
    pub(crate) marking: Marking,
    pub(crate) snd: TcpSender,
    pub(crate) rcv: TcpReceiver,
    /// Its timer: the deadline asked for last and its queue entries.
    pub(crate) timer: ConnTimer,
    /// The client's first packet is a request of its application ([`ConnSpec`]).
    pub(crate) client_requests: bool,
    /// Where its handshake is.
    pub(crate) handshake: Handshake,
    /// The sender's counters already added to its flow's statistics.
    pub(crate) reported: Reported,
}

/// A sender's counters already added to its flow's statistics (a web flow's several
/// connections add up).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Reported {
    retransmits: u64,
    timeouts: u64,
}

/// What the flow's statistics take of `snd` after an ACK ([`FlowStats::tcp_sample`]):
/// its state, its RTT sample, and its retransmissions and timeouts since `reported`
/// (which this updates).
///
/// [`FlowStats::tcp_sample`]: txop_results::FlowStats::tcp_sample
pub(crate) fn ack_sample(snd: &mut TcpSender, reported: &mut Reported) -> TcpSample {
    let (retransmits, timeouts) = (snd.retransmits(), snd.timeouts());
    let sample = TcpSample {
        cwnd_bytes: snd.cwnd_bytes(),
        rtt: snd.take_rtt_sample(),
        new_retransmits: retransmits - reported.retransmits,
        new_timeouts: timeouts - reported.timeouts,
        srtt: snd.srtt(),
        pacing_rate_bps: snd.pacing_rate().map(|r| r * 8),
        delivery_rate_bps: snd.delivery_rate().map(|r| r * 8),
        bbr: snd.take_bbr_sample(),
    };
    *reported = Reported {
        retransmits,
        timeouts,
    };
    sample
}

impl TcpConn {
    /// The end that opens the connection: the station (netperf, wget and browsers run
    /// on the station in every seed experiment).
    pub(crate) fn client(&self) -> Host {
        if matches!(self.sender, Host::Station(_)) {
            self.sender
        } else {
            self.receiver
        }
    }

    pub(crate) fn server(&self) -> Host {
        if self.client() == self.sender {
            self.receiver
        } else {
            self.sender
        }
    }

    /// The data sender may send: it has completed its side of the handshake.
    pub(crate) fn sender_open(&self) -> bool {
        if self.sender == self.client() {
            self.handshake.client_open
        } else {
            self.handshake.server_open
        }
    }
}

/// What a flow opens a connection with.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ConnSpec {
    pub(crate) sender: Host,
    pub(crate) receiver: Host,
    pub(crate) cfg: TcpConfig,
    /// Bytes the sender has to send at the start; `None`: unlimited (bulk).
    pub(crate) bytes: Option<u64>,
    /// How both ends mark their packets.
    pub(crate) marking: Marking,
    /// The client's first packet after the SYN-ACK is a request of its application (a
    /// web request), which carries the handshake's last ACK: the server needs no
    /// other, and the flow's source is told when the client's side is open
    /// ([`crate::traffic::Source::connected`]).
    pub(crate) client_requests: bool,
}

impl Simulation {
    /// Open a TCP connection of flow `flow`; the client's SYN goes first
    /// ([`Simulation::send_syn`]).
    pub(crate) fn open_conn(&mut self, now: Nanos, flow: usize, spec: ConnSpec) -> usize {
        let mut cfg = spec.cfg;
        if let Some(r) = self.tcp_hosts.receive_of(spec.receiver) {
            cfg = r.apply(cfg);
        }
        self.conns.push(TcpConn {
            flow,
            sender: spec.sender,
            receiver: spec.receiver,
            marking: spec.marking,
            snd: TcpSender::new(cfg, now, spec.bytes),
            rcv: TcpReceiver::new(cfg),
            timer: ConnTimer::default(),
            client_requests: spec.client_requests,
            handshake: Handshake::default(),
            reported: Reported::default(),
        });
        self.conns.len() - 1
    }

    /// Send a packet of connection `conn` that is not a TCP segment.
    pub(crate) fn conn_packet(
        &mut self,
        at: Nanos,
        conn: usize,
        payload: Payload,
        len: u32,
        from: Host,
        to: Host,
    ) {
        let c = &self.conns[conn];
        let (flow, marking) = (c.flow, c.marking);
        let token = self.alloc(InFlight {
            flow: flow as u32,
            to,
            from,
            sent_at: at,
            cell: None,
            payload,
        });
        let p = self.make_packet(from, to, len, marking, token);
        self.send(at, from, p);
    }

    /// Connection `conn`'s timer entry (RTO, pacing, delayed ACK) came due.
    pub(crate) fn tcp_timer(&mut self, at: Nanos, id: u32) {
        let conn = id as usize;
        let c = &mut self.conns[conn];
        let event = Event::TcpTimer { conn: id };
        if !c.timer.on_entry(at, &mut self.events, event) {
            return; // superseded by a later reschedule
        }
        c.snd.handle_timeout(at);
        c.rcv.handle_timeout(at);
        self.pump_tcp(at, conn);
    }

    /// Send whatever a TCP connection's two ends have to send now, and reschedule its
    /// timer.
    pub(crate) fn pump_tcp(&mut self, now: Nanos, conn: usize) {
        let c = &self.conns[conn];
        let (flow, sender, receiver, marking) = (c.flow, c.sender, c.receiver, c.marking);
        // No data before the sender's side of the handshake is complete.
        let open = c.sender_open();
        loop {
            let c = &mut self.conns[conn];
            let data = if open { c.snd.poll_transmit(now) } else { None };
            let (seg, from, to) = if let Some(seg) = data {
                (seg, sender, receiver)
            } else if let Some(ack) = c.rcv.poll_ack(now) {
                (ack, receiver, sender)
            } else {
                break;
            };
            if seg.len > 0 {
                self.flow_stats[flow].offered += 1;
            }
            let token = self.alloc(InFlight {
                flow: flow as u32,
                to,
                from,
                sent_at: now,
                cell: None,
                payload: Payload::Tcp {
                    conn: conn as u32,
                    seg,
                },
            });
            let mut p = self.make_packet(from, to, seg.ip_len(), marking, token);
            if seg.ect {
                p.ecn = Ecn::Ect0;
            }
            self.send(now, from, p);
        }
        let c = &mut self.conns[conn];
        let next = match (c.snd.poll_timeout(), c.rcv.poll_timeout()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if let Some(t) = next {
            if c.timer.deadline() != Some(t) {
                let event = Event::TcpTimer { conn: conn as u32 };
                c.timer.set(now, t, &mut self.events, event);
            }
        }
    }

    /// A TCP segment (slab entry `token`, which must hold one) reached its end: the
    /// receiver or the sender takes it where it lies in the slab, instead of the
    /// entry being copied out first (it is mostly the segment, thirteen words). The
    /// entry is freed before anything new is sent, where [`Simulation::release`]
    /// would have freed it as far as tokens handed out later are concerned.
    pub(crate) fn arrive_tcp(&mut self, at: Nanos, packet: &Packet) {
        let (token, ecn) = (packet.token as usize, packet.ecn);
        let Some(Some(f)) = self.slab.get_mut(token) else {
            return;
        };
        let stages = f.stages(at);
        let (flow, to, sent_at) = (f.flow as usize, f.to, f.sent_at);
        let Payload::Tcp { conn, seg } = &mut f.payload else {
            return;
        };
        let conn = *conn as usize;
        seg.ce = ecn == Ecn::Ce;
        let seg: &Segment = seg;
        let c = &mut self.conns[conn];
        let new_bytes = if to == c.receiver {
            if seg.len > 0 {
                self.flow_stats[flow].delivered += 1;
            }
            let before = c.rcv.bytes_received();
            c.rcv.on_segment(at, seg);
            c.rcv.bytes_received() - before
        } else {
            c.snd.on_ack(at, seg);
            let sample = ack_sample(&mut c.snd, &mut c.reported);
            self.flow_stats[flow].tcp_sample(at, sample);
            self.flow_stats[flow].budget(BudgetArrival {
                direction: Direction::Back,
                sent_at,
                at,
                stages: stages.as_ref(),
                percentiles: false,
            });
            0
        };
        self.slab[token] = None;
        self.free.push(token as u32);
        if new_bytes > 0 {
            self.flow_stats[flow].delivered_bytes_at(at, sent_at, new_bytes);
            self.flow_stats[flow].budget(BudgetArrival {
                direction: Direction::Forward,
                sent_at,
                at,
                stages: stages.as_ref(),
                percentiles: true,
            });
            self.with_conn_source(conn, at, |s, ctx, conn| s.received(ctx, conn));
        }
        self.pump_tcp(at, conn);
    }
}
