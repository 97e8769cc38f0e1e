//! A Linux-like TCP endpoint, sans-I/O: a bulk or finite data sender ([`TcpSender`])
//! and its receiver ([`TcpReceiver`]), driven with virtual time and polled for segments
//! and deadlines (no clock, no socket), like the rest of the model.
//!
//! What it reproduces is what matters for queueing, after Linux 6.x:
//!
//! - **Congestion control**: CUBIC (RFC 9438 as `net/ipv4/tcp_cubic.c` implements it,
//!   integer arithmetic included: β = 717/1024, C = 410/1024 ≈ 0.4, fast convergence,
//!   the TCP-friendly region, HyStart's delay detection) and Reno/NewReno
//!   (`tcp_reno_cong_avoid`, `tcp_reno_ssthresh` in `net/ipv4/tcp_cong.c`). The window
//!   is counted in **segments**, as Linux's `snd_cwnd`; [`TcpSenderStats`] reports it
//!   in bytes too.
//! - **Loss recovery** (`net/ipv4/tcp_input.c`): a SACK scoreboard with RFC 6675's
//!   `IsLost` (3 SACKed segments above a hole, or 3 duplicate ACKs), fast retransmit,
//!   one window reduction per recovery episode (until `snd_una` passes the recovery
//!   point `high_seq`), proportional rate reduction during it (RFC 6937,
//!   `tcp_cwnd_reduction`), lost segments retransmitted before new data; the RTO per
//!   RFC 6298 with exponential backoff, after which the window is 1 segment and every
//!   un-SACKed segment is retransmitted (go-back-N, `tcp_enter_loss`).
//! - **RTT**: RFC 6298 SRTT/RTTVAR from the echoed timestamps (RFC 7323), with Linux's
//!   floor on the variance term (`rto = srtt + max(4·rttvar, 200 ms)`), and windowed
//!   minimum RTT (`lib/minmax.c`).
//! - **ECN** (RFC 3168): ECT(0) data, ECE echoed until CWR, at most one reduction per
//!   window of data (`tcp_enter_cwr`), CWR on the next new segment.
//! - **BBR** v1 (`net/ipv4/tcp_bbr.c`) on delivery-rate samples (`tcp_rate.c`): see
//!   the `bbr` and `rate` modules.
//! - **Pacing** (`tcp_update_pacing_rate`, internal pacing of `tcp_output.c`): 200 %
//!   of cwnd/srtt in slow start, 120 % in congestion avoidance; BBR sets its own rate.
//! - **Delayed ACKs** (`__tcp_ack_snd_check`): an ACK per two full segments, quick-ack
//!   for the first 16, immediate ACKs for out-of-order data (SACK blocks most recent
//!   first), a 40 ms timer otherwise.
//! - **Handshake** (the `handshake` module): SYN, SYN-ACK and the last ACK are packets
//!   of their own (60, 60 and 52 B: a SYN has Linux's 20 bytes of options, see
//!   `handshake::syn_advert`; the last ACK only when the server sends the data,
//!   otherwise the client's first segment or web request carries it), the data sender
//!   sends nothing before its side is open, and a lost SYN or SYN-ACK is sent again
//!   after 1 s, doubling (`TCP_TIMEOUT_INIT`), at most 6 and 5 times
//!   (`tcp_syn_retries`, `tcp_synack_retries`). The handshake takes no sequence space
//!   and negotiates nothing: both ends take the same [`TcpConfig`].
//!
//! [`TcpSender`] and [`TcpReceiver`] are sans-I/O; the `conn` and `handshake` modules
//! are how the simulator runs a pair of them as one connection between two hosts,
//! through its event queue and its network.
//!
//! Not modelled (documented where it matters): connection teardown (FIN is a flag on
//! the last segment and takes no sequence space), RACK-TLP, F-RTO, undo of spurious
//! reductions, D-SACK, SACK compression, TSO/GSO, Nagle (segments are sent as soon as
//! the window allows, as with `TCP_NODELAY`).
//!
//! The receive window is either fixed ([`ReceiveWindow::Fixed`], `rwnd_bytes`, 16 MiB
//! by default: it never limits) or Linux's ([`ReceiveWindow::Linux`], the `rwnd`
//! module: `tcp_rmem`, window scaling, `tcp_grow_window` and the buffer's
//! auto-tuning), which each ACK advertises and the sender obeys.
//!
//! Sequence numbers are 64-bit byte offsets starting at 0 and never wrap.

mod bbr;
mod cc;
mod conn;
mod cubic;
mod handshake;
mod newreno;
mod pacing;
mod rate;
mod reassembly;
mod receiver;
mod rtt;
mod rwnd;
mod sack;
mod segment;
mod sender;

#[cfg(test)]
mod harness;
#[cfg(test)]
mod tests;

pub use bbr::{BbrInfo, BbrMode};
pub(crate) use conn::{ConnSpec, TcpConn};
pub(crate) use handshake::{syn_advert, SynAdvert};
pub use receiver::{TcpReceiver, TcpReceiverStats};
pub use rwnd::{
    initial_window, AutotuneRule, InitialWindow, LinuxRcvWindow, LinuxReceive, TcpRmem,
    WindowShare, TCP_DEFAULT_SCALING_RATIO,
};
pub use segment::{Segment, MAX_SACK_BLOCKS};
pub use sender::{CaState, TcpSender, TcpSenderStats};

use txop_core::Nanos;

/// Bytes of IPv4 (20) + TCP (20) + timestamp option (12) headers on every segment:
/// what Linux subtracts from the MTU to get `mss_cache` (`tcp_mtu_to_mss` minus
/// `TCPOLEN_TSTAMP_ALIGNED`).
pub const HEADER_BYTES: u32 = 20 + 20 + 12;

/// Linux's initial window, `TCP_INIT_CWND` (RFC 6928).
pub const TCP_INIT_CWND: u32 = 10;

/// Lower bound of the retransmission timeout, `TCP_RTO_MIN` (200 ms).
pub const TCP_RTO_MIN: Nanos = Nanos::from_ms(200);

/// Upper bound of the retransmission timeout, `TCP_RTO_MAX` (120 s).
pub const TCP_RTO_MAX: Nanos = Nanos::from_secs(120);

/// Retransmission timeout before any RTT sample, `TCP_TIMEOUT_INIT` (1 s, RFC 6298).
pub const TCP_TIMEOUT_INIT: Nanos = Nanos::from_secs(1);

/// Delayed-ACK timeout, `TCP_DELACK_MIN` (40 ms; Linux's `ato` starts and, for a
/// stream of data, stays there).
pub const TCP_DELACK_MIN: Nanos = Nanos::from_ms(40);

/// Segments acknowledged one by one at the start of a connection, `TCP_MAX_QUICKACKS`.
pub const TCP_MAX_QUICKACKS: u32 = 16;

/// RFC 6675's DupThresh, Linux's `sysctl_tcp_reordering` default.
pub const DUP_THRESH: u32 = 3;

/// Which congestion control the sender runs (`net.ipv4.tcp_congestion_control`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CongestionControl {
    /// CUBIC (`net/ipv4/tcp_cubic.c`, RFC 9438): Linux's default.
    #[default]
    Cubic,
    /// Reno's AIMD window (`tcp_reno_cong_avoid`, `tcp_reno_ssthresh`): slow start,
    /// +1 segment per RTT, half the window on loss. Loss recovery is the same SACK
    /// recovery as for CUBIC (as Linux's `reno` module with SACK).
    NewReno,
    /// BBR v1 (`net/ipv4/tcp_bbr.c`): a model of bottleneck bandwidth and round-trip
    /// propagation time from delivery-rate samples (`tcp_rate.c`), paced at the
    /// estimated bandwidth; loss is not a congestion signal. Always paced, whatever
    /// [`TcpConfig::pacing`] says (Linux sets `SK_PACING_NEEDED`).
    Bbr,
}

/// Configuration of one TCP connection (both ends take the same one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpConfig {
    /// Congestion control of the sender.
    pub cc: CongestionControl,
    /// Payload bytes per full segment (Linux `mss_cache`): 1448 for a 1500-byte MTU
    /// (MTU − [`HEADER_BYTES`]). See [`TcpConfig::for_mtu`].
    pub mss_bytes: u32,
    /// Initial congestion window in segments (10, RFC 6928).
    pub initial_cwnd_segments: u32,
    /// Floor of the RTO's variance term (`TCP_RTO_MIN`, 200 ms).
    pub min_rto: Nanos,
    /// RTO before the first RTT sample (1 s, RFC 6298 §2.1).
    pub initial_rto: Nanos,
    /// Receiver delays ACKs as Linux does (an ACK per two full segments or after
    /// 40 ms, quick-ack for the first 16 segments); `false`: an ACK per segment.
    pub delayed_ack: bool,
    /// ECN negotiated (RFC 3168): new data segments are ECT(0), the receiver echoes
    /// CE as ECE. Both ends must have it.
    pub ecn: bool,
    /// Linux internal pacing (`tcp_update_pacing_rate`: `tcp_pacing_ss_ratio` 200 %,
    /// `tcp_pacing_ca_ratio` 120 % of cwnd × mss / srtt).
    pub pacing: bool,
    /// CUBIC's HyStart delay detection (`hystart_detect` = `HYSTART_DELAY`: low window
    /// 16, threshold clamp(min_rtt/8, 4 ms, 16 ms), 8 samples per round). Ignored by
    /// NewReno.
    pub hystart: bool,
    /// Receive window in bytes with [`ReceiveWindow::Fixed`]; the sender never has
    /// more than this beyond `snd_una`. Large by default (16 MiB) so that it never
    /// limits.
    pub rwnd_bytes: u64,
    /// The receiver's window: fixed at `rwnd_bytes`, or Linux's. The receiving host's
    /// settings (both ends take this configuration: the sender reads the window the
    /// handshake offers from it).
    pub receive: ReceiveWindow,
}

/// How the receiver sizes the window it advertises.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReceiveWindow {
    /// Always [`TcpConfig::rwnd_bytes`], from the first segment; ACKs' window is not
    /// read.
    #[default]
    Fixed,
    /// Linux's receive buffer and window ([`LinuxRcvWindow`]): the sender starts
    /// with the window of the handshake and takes each ACK's.
    Linux(LinuxReceive),
}

impl Default for TcpConfig {
    /// CUBIC with HyStart, delayed ACKs, no ECN, no pacing, MSS 1448, IW 10.
    fn default() -> Self {
        TcpConfig {
            cc: CongestionControl::Cubic,
            mss_bytes: 1448,
            initial_cwnd_segments: TCP_INIT_CWND,
            min_rto: TCP_RTO_MIN,
            initial_rto: TCP_TIMEOUT_INIT,
            delayed_ack: true,
            ecn: false,
            pacing: false,
            hystart: true,
            rwnd_bytes: 16 << 20,
            receive: ReceiveWindow::Fixed,
        }
    }
}

impl TcpConfig {
    /// The defaults with the MSS for an IP MTU of `mtu_bytes` (MTU − 52: IPv4, TCP
    /// and timestamp-option headers).
    pub fn for_mtu(mtu_bytes: u32) -> TcpConfig {
        assert!(mtu_bytes > HEADER_BYTES, "MTU too small for TCP");
        TcpConfig {
            mss_bytes: mtu_bytes - HEADER_BYTES,
            ..TcpConfig::default()
        }
    }

    /// The window the receiver's SYN or SYN-ACK offers, what the sender may send
    /// before the first ACK (`tcp_select_initial_window`; at most 65535, the SYN's
    /// window being unscaled, RFC 7323 §2.2), and the scale of later windows.
    pub fn initial_rcv_window(&self) -> InitialWindow {
        match self.receive {
            ReceiveWindow::Fixed => InitialWindow {
                rcv_wnd_bytes: self.rwnd_bytes,
                wscale: (self.rwnd_bytes.max(1).ilog2() as i64 - 15).clamp(0, 14) as u8,
            },
            ReceiveWindow::Linux(l) => {
                let w = initial_window(&l, self.mss_bytes, l.rmem.default_bytes as u64);
                InitialWindow {
                    rcv_wnd_bytes: w.rcv_wnd_bytes.min(u16::MAX as u64),
                    ..w
                }
            }
        }
    }

    /// The same configuration with another congestion control.
    pub fn with_cc(self, cc: CongestionControl) -> TcpConfig {
        TcpConfig { cc, ..self }
    }
}
