//! txop-capture: what txop's cell put on the air, as a radiotap pcapng file that
//! Wireshark and tshark read (issue 17).
//!
//! The cell records each PPDU ([`txop_core::capture::CapturedPpdu`]); this crate turns
//! the records into frames: a radiotap header ([`radiotap`]) in front of the 802.11
//! frame ([`frame`]) whose body is the packet's bytes — the real ones in the
//! emulator, synthetic IPv4/IPv6 + TCP/UDP/ICMP headers ([`synth`]) in the simulator —
//! written by [`AirWriter`] (window, station filter, snap length, size bound) with txop's
//! per-frame facts as pcapng comments.

pub mod frame;
pub mod radiotap;
pub mod synth;
pub mod writer;

pub use writer::{AirWriter, CaptureConfig, CaptureStats};
