//! A TCP flow between two hosts: a bulk transfer (netperf's TCP_STREAM, as flent runs
//! it) or a finite object, with the sender and receiver of `crate::tcp`.

use super::{Flow, Host};
use crate::sim::{Marking, Simulation};
use crate::tcp::TcpConfig;
use txop_core::Nanos;

/// One TCP connection's traffic.
#[derive(Clone, Debug)]
pub struct TcpFlow {
    pub sender: Host,
    pub receiver: Host,
    pub cfg: TcpConfig,
    /// Bytes to send; `None` = unlimited (bulk).
    pub bytes: Option<u64>,
    pub start: Nanos,
    /// Stop writing new data at this time (the connection drains and closes).
    pub stop: Option<Nanos>,
    pub tid: u8,
    pub dscp: u8,
    pub flow_hash: u32,
    /// The flent series name this flow fills ("" when not part of a flent test).
    pub label: String,
}

impl TcpFlow {
    /// A bulk transfer from `sender` to `receiver` with Linux's defaults (CUBIC).
    pub fn bulk(sender: Host, receiver: Host, flow_hash: u32) -> TcpFlow {
        TcpFlow {
            sender,
            receiver,
            cfg: TcpConfig::default(),
            bytes: None,
            start: Nanos::ZERO,
            stop: None,
            tid: 0,
            dscp: 0,
            flow_hash,
            label: String::new(),
        }
    }
}

impl Simulation {
    /// TCP flow `flow` starts: it opens its connection, whose handshake goes first.
    pub(crate) fn tcp_flow_start(&mut self, at: Nanos, flow: usize) {
        let Flow::Tcp(t) = &self.flows[flow] else {
            return;
        };
        let (sender, receiver, cfg, bytes) = (t.sender, t.receiver, t.cfg, t.bytes);
        let marking = Marking {
            tid: t.tid,
            dscp: t.dscp,
            flow_hash: t.flow_hash,
        };
        let conn = self.open_conn(at, flow, sender, receiver, cfg, bytes, marking);
        self.flow_conn[flow] = Some(conn);
        self.send_syn(at, conn);
    }

    /// TCP flow `flow` stops writing new data (what it wrote is still delivered).
    pub(crate) fn tcp_flow_stop(&mut self, flow: usize) {
        if let Some(c) = self.flow_conn[flow] {
            self.conns[c].snd.stop_writing();
        }
    }
}
