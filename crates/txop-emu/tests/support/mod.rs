//! The emulator engine's test harness on a virtual clock, shared by txop-emu's engine
//! tests and the CLI crate's comparison with the simulator (`tests/emu_engine.rs`).
// Each test file uses part of it.
#![allow(dead_code)]

use etherparse::PacketBuilder;
use std::cell::Cell as StdCell;
use txop_core::cell::{CellConfig, StationConfig};
use txop_core::network::{NetworkConfig, WiredConfig};
use txop_core::phy::channel::ErrorModel;
use txop_core::phy::{Band, ChannelWidth, GuardInterval, Standard, TxVector};
use txop_core::{stack, Nanos};
use txop_emu::addr::Endpoint;
use txop_emu::engine::{Engine, Port};
use txop_emu::slab::BUF_BYTES;

/// A port on a virtual clock that records every write.
#[derive(Default)]
pub struct FakePort {
    pub now: StdCell<Nanos>,
    pub writes: Vec<(Nanos, Endpoint, Vec<u8>)>,
    /// Writes to this endpoint fail with EIO (a TUN device that is not up).
    pub down: Option<Endpoint>,
}

impl Port for FakePort {
    fn now(&self) -> Nanos {
        self.now.get()
    }
    fn write(&mut self, to: Endpoint, bytes: &[u8]) -> std::io::Result<()> {
        if self.down == Some(to) {
            return Err(std::io::Error::from_raw_os_error(libc_eio()));
        }
        self.writes.push((self.now.get(), to, bytes.to_vec()));
        Ok(())
    }
}

fn libc_eio() -> i32 {
    5
}

pub fn ht20(mcs: u8) -> StationConfig {
    StationConfig::new(
        TxVector::Ht {
            mcs,
            width: ChannelWidth::Mhz20,
            gi: GuardInterval::Long,
        },
        ErrorModel::None,
    )
}

pub fn cell(stack_name: &str, stations: usize) -> CellConfig {
    let mut c = CellConfig::new(
        Standard::N,
        Band::Ghz5,
        (0..stations).map(|_| ht20(0)).collect(),
    );
    c.stack = stack::preset(stack_name).unwrap();
    c
}

/// The network of `cell` behind the default wired link, without host buses.
pub fn network(cell: CellConfig) -> NetworkConfig {
    NetworkConfig {
        cell,
        wired: WiredConfig::default(),
        host_bus: Vec::new(),
    }
}

pub fn buf(bytes: &[u8], e: &mut Engine) -> Box<[u8; BUF_BYTES]> {
    let mut b = e.buffer();
    b[..bytes.len()].copy_from_slice(bytes);
    b
}

pub fn icmp_echo(from: Endpoint, to: Endpoint, request: bool, seq: u16) -> Vec<u8> {
    let b = PacketBuilder::ipv4(from.ipv4().octets(), to.ipv4().octets(), 64);
    let b = if request {
        b.icmpv4_echo_request(7, seq)
    } else {
        b.icmpv4_echo_reply(7, seq)
    };
    let mut v = Vec::new();
    b.write(&mut v, &[0u8; 56]).unwrap();
    v
}

/// Run the engine on the virtual clock until nothing is left to do or `until`.
pub fn run_until(e: &mut Engine, port: &mut FakePort, until: Nanos) {
    while let Some(t) = e.next_deadline() {
        if t > until {
            break;
        }
        port.now.set(t);
        e.advance(t, port);
    }
    port.now.set(until.max(port.now.get()));
}

/// Run the engine on the virtual clock up to the instant of its next write.
pub fn run_to_write(e: &mut Engine, port: &mut FakePort) {
    let before = port.writes.len();
    while let Some(t) = e.next_deadline() {
        port.now.set(t);
        e.advance(t, port);
        if port.writes.len() > before {
            return;
        }
    }
}

/// An echo's ICMP type (8 request, 0 reply) and sequence number: the packets here
/// have a 20-byte IPv4 header, then type, code, checksum, identifier, sequence.
pub fn echo_fields(bytes: &[u8]) -> (u8, u16) {
    (bytes[20], u16::from_be_bytes([bytes[26], bytes[27]]))
}
