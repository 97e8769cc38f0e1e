//! A TCP flow between two hosts: a bulk transfer (netperf's TCP_STREAM, as flent runs
//! it) or a finite object, with the sender and receiver of `crate::tcp`.

use super::{Arrival, ConnId, FlowCtx, Host, Marking, Source, SourceEvent};
use crate::tcp::{ConnSpec, TcpConfig};
use std::cell::Cell;
use txop_core::Nanos;
use txop_results::FlowStats;

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

/// A TCP flow as it runs: its configuration and its connection, once open.
pub(crate) struct TcpSource {
    cfg: TcpFlow,
    conn: Cell<Option<ConnId>>,
}

impl TcpSource {
    pub(crate) fn new(cfg: TcpFlow) -> TcpSource {
        TcpSource {
            cfg,
            conn: Cell::new(None),
        }
    }
}

impl Source for TcpSource {
    fn src(&self) -> Host {
        self.cfg.sender
    }

    fn dst(&self) -> Host {
        self.cfg.receiver
    }

    fn kind(&self) -> &'static str {
        "tcp"
    }

    fn label(&self) -> &str {
        &self.cfg.label
    }

    fn new_stats(&self) -> FlowStats {
        FlowStats::tcp()
    }

    fn start(&self, ctx: &mut FlowCtx<'_>) {
        ctx.schedule(self.cfg.start, SourceEvent::Offer);
        if let Some(stop) = self.cfg.stop {
            ctx.schedule(stop, SourceEvent::Stop);
        }
    }

    /// At its start the flow opens its connection, whose handshake goes first; at its
    /// stop it writes no new data (what it wrote is still delivered).
    fn due(&self, ctx: &mut FlowCtx<'_>, event: SourceEvent) {
        let t = &self.cfg;
        match event {
            SourceEvent::Offer => {
                let mut tcp = ctx.tcp();
                let conn = tcp.open(ConnSpec {
                    sender: t.sender,
                    receiver: t.receiver,
                    cfg: t.cfg,
                    bytes: t.bytes,
                    marking: Marking {
                        tid: t.tid,
                        dscp: t.dscp,
                        flow_hash: t.flow_hash,
                    },
                    client_requests: false,
                });
                self.conn.set(Some(conn));
                tcp.connect(conn);
            }
            SourceEvent::Stop => {
                if let Some(conn) = self.conn.get() {
                    ctx.tcp().stop_writing(conn);
                }
            }
            SourceEvent::Retry { .. } => {}
        }
    }

    /// Its packets are all TCP's (segments and the handshake).
    fn arrived(&self, _ctx: &mut FlowCtx<'_>, _arrival: Arrival<'_>) {}
}
