//! A TCP flow between two hosts: a bulk transfer (netperf's TCP_STREAM, as flent runs
//! it) or a finite object, with the sender and receiver of `crate::tcp`.

use super::Host;
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
