//! The TCP header facts that travel in a packet (the simulator keeps a [`Segment`]
//! beside the model's `Packet`, the way the emulator has real headers).

use super::HEADER_BYTES;
use txop_core::Nanos;

/// Most SACK blocks one segment carries: 3 with the timestamp option (RFC 2018 §3,
/// Linux `TCP_NUM_SACKS` is 4 but only 3 fit next to timestamps).
pub const MAX_SACK_BLOCKS: usize = 3;

/// One TCP segment: data (`len > 0`) from the sender, or a pure ACK (`len == 0`) from
/// the receiver.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Segment {
    /// Sequence number of the first payload byte (byte offset from 0).
    pub seq: u64,
    /// Payload bytes (0 for a pure ACK).
    pub len: u32,
    /// Cumulative acknowledgment: next byte expected (meaningful on ACKs).
    pub ack: u64,
    /// SACK blocks `[start, end)`, most recent first (RFC 2018); `sack_len` are valid.
    pub sack: [(u64, u64); MAX_SACK_BLOCKS],
    /// Number of valid entries in `sack`.
    pub sack_len: u8,
    /// ECN-Echo (RFC 3168 §6.1.3): the receiver saw CE and has not yet seen CWR.
    pub ece: bool,
    /// Congestion Window Reduced (RFC 3168 §6.1.2): the sender reduced its window.
    pub cwr: bool,
    /// Sent ECN-capable (ECT(0)); new data only, never retransmissions or pure ACKs
    /// (RFC 3168 §6.1.5, Linux `tcp_ecn_send`).
    pub ect: bool,
    /// The network set CE on the way (the simulator copies it from the packet).
    pub ce: bool,
    /// Timestamp value: the sender's clock when the segment left (RFC 7323 TSval).
    pub ts_val: Nanos,
    /// Timestamp echo reply (RFC 7323 TSecr).
    pub ts_ecr: Nanos,
    /// Last segment of the stream (informational: takes no sequence space here).
    pub fin: bool,
    /// The receive window an ACK advertises, in bytes: the window field shifted by
    /// the scale the handshake agreed (RFC 7323 §2.3), so a multiple of `1 << wscale`.
    /// Read by the sender only when the receiver models Linux's window
    /// ([`super::ReceiveWindow::Linux`]).
    pub wnd: u32,
    /// Layout only (always zero): see [`PadWord`].
    pub(crate) _pad: [u8; 2],
    pub(crate) _tag: PadWord,
}

/// A word that is always zero: the niche `Option<Segment>` keeps its tag in.
// perf: segments are returned as `Option<Segment>` and copied on at once (by every
// `poll_transmit`, `poll_ack` and into the packet slab). Without this word the tag
// would sit in a `bool`'s spare values next to padding, and the compiler copies the
// small fields as odd, overlapping chunks: reading such a copy right after it was
// written stalls store-to-load forwarding. With a whole word for the tag and no
// padding, segments are copied as whole words.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(u64)]
pub(crate) enum PadWord {
    #[default]
    Zero = 0,
}

const _: () = assert!(size_of::<Option<Segment>>() == size_of::<Segment>());

impl Segment {
    /// One past the last payload byte.
    pub fn end(&self) -> u64 {
        self.seq + self.len as u64
    }

    /// A pure ACK (no payload and no FIN).
    pub fn is_pure_ack(&self) -> bool {
        self.len == 0 && !self.fin
    }

    /// The valid SACK blocks, most recent first.
    pub fn sack_blocks(&self) -> &[(u64, u64)] {
        &self.sack[..self.sack_len as usize]
    }

    /// Length of the IP packet that carries it: payload + IPv4 + TCP + timestamp
    /// option, plus the SACK option (2 NOPs, kind, length, 8 bytes per block) if any.
    /// Use it as the packet's `len_bytes`.
    pub fn ip_len(&self) -> u32 {
        let sack_opt = if self.sack_len > 0 {
            4 + 8 * self.sack_len as u32
        } else {
            0
        };
        HEADER_BYTES + sack_opt + self.len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ip_length_counts_headers_and_sack_option() {
        let mut s = Segment {
            len: 1448,
            ..Segment::default()
        };
        assert_eq!(s.ip_len(), 1500);
        s.len = 0;
        s.sack_len = 2;
        assert_eq!(s.ip_len(), 52 + 20);
        assert!(s.is_pure_ack());
        assert_eq!(s.sack_blocks().len(), 2);
    }
}
