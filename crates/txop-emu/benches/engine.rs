//! The emulator's forwarding engine without system calls: 1500-byte UDP packets
//! (real bytes, parsed with etherparse) from the server through the wired link and a
//! VHT80 2×2 MCS9 cell (linux-6.16) to a station, on a virtual clock, written to a
//! port that discards them. One iteration offers 10 000 packets at 600 Mbit/s (just
//! below what the cell carries, ~686 Mbit/s) and runs until the last is delivered.
//!
//! What this measures is the engine's cost per packet — parsing, flow lookup, the
//! model, the slab — which the real-time loop adds to the two system calls (a TUN read
//! and a TUN write) each packet costs. Criterion reports packets/s.
//!
//! Run with `cargo bench -p txop-emu --bench engine`, or `scripts/bench-emu.sh`, which
//! also runs the real emulator.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use etherparse::PacketBuilder;
use std::time::Duration;
use txop_core::cell::{CellConfig, StationConfig};
use txop_core::network::{NetworkConfig, WiredConfig};
use txop_core::phy::channel::ErrorModel;
use txop_core::phy::{Band, ChannelWidth, GuardInterval, Standard, TxVector};
use txop_core::{stack, Nanos};
use txop_emu::addr::Endpoint;
use txop_emu::engine::{Engine, Port};

const PACKETS: u64 = 10_000;

/// A port that counts what it is given.
struct NullPort {
    now: Nanos,
    written: u64,
}

impl Port for NullPort {
    fn now(&self) -> Nanos {
        self.now
    }
    fn write(&mut self, _to: Endpoint, bytes: &[u8]) -> std::io::Result<()> {
        self.written += bytes.len() as u64 / 1500;
        Ok(())
    }
}

fn vht80() -> CellConfig {
    let sta = StationConfig::new(
        TxVector::Vht {
            mcs: 9,
            nss: 2,
            width: ChannelWidth::Mhz80,
            gi: GuardInterval::Short,
        },
        ErrorModel::None,
    );
    let mut c = CellConfig::new(Standard::Ac, Band::Ghz5, vec![sta]);
    c.stack = stack::preset("linux-6.16").unwrap();
    c
}

fn forward(packet: &[u8]) -> u64 {
    let wired = WiredConfig {
        rate_bps: 10_000_000_000,
        delay: Nanos::from_us(100),
        limit_packets: 1000,
    };
    let network = NetworkConfig {
        cell: vht80(),
        wired,
        host_bus: Vec::new(),
    };
    let mut e = Engine::new(network, 1, 32_768).unwrap();
    let mut port = NullPort {
        now: Nanos::ZERO,
        written: 0,
    };
    let gap = Nanos(1500 * 8 * 1_000_000_000 / 600_000_000);
    for i in 0..PACKETS {
        let t = gap * i;
        while let Some(d) = e.next_deadline().filter(|&d| d <= t) {
            port.now = d;
            e.advance(d, &mut port);
        }
        port.now = t;
        let mut b = e.buffer();
        b[..packet.len()].copy_from_slice(packet);
        e.packet_in(t, Endpoint::Server, b, packet.len(), &mut port);
    }
    while let Some(d) = e.next_deadline() {
        port.now = d;
        e.advance(d, &mut port);
    }
    port.written
}

fn bench(c: &mut Criterion) {
    let mut packet = Vec::new();
    PacketBuilder::ipv4([198, 18, 0, 1], [198, 18, 1, 1], 64)
        .udp(5201, 40000)
        .write(&mut packet, &[0u8; 1472])
        .unwrap();
    assert_eq!(packet.len(), 1500);
    assert_eq!(forward(&packet), PACKETS, "every packet delivered");
    let mut g = c.benchmark_group("engine_vht80_1500B");
    g.throughput(Throughput::Elements(PACKETS));
    g.measurement_time(Duration::from_secs(5));
    g.sample_size(20);
    g.bench_function("udp_600Mbps", |b| b.iter(|| forward(&packet)));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
