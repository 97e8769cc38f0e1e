//! A flow's packet counts add up: what it offered was delivered, dropped or is still
//! on the way. For TCP the counts are of data segments (retransmissions included); the
//! handshake and pure ACKs are not counted, sent or lost.

use txop_core::cell::{CellConfig, StationConfig};
use txop_core::phy::channel::ErrorModel;
use txop_core::phy::{Band, ChannelWidth, GuardInterval, Standard, TxVector};
use txop_core::stack::preset;
use txop_core::Nanos;
use txop_sim::traffic::tcp::TcpFlow;
use txop_sim::traffic::web::WebPage;
use txop_sim::traffic::{Flow, Host};
use txop_sim::{SimConfig, Simulation, WiredConfig};

fn ht20(mcs: u8, loss: f64) -> StationConfig {
    StationConfig::new(
        TxVector::Ht {
            mcs,
            width: ChannelWidth::Mhz20,
            gi: GuardInterval::Long,
        },
        ErrorModel::FixedLoss { probability: loss },
    )
}

/// Four 2 MB TCP transfers (downloads and uploads) over lossy links, through a
/// 20-packet wired FIFO and the bloated stack: segments and ACKs are lost on the air
/// (retry limit) and on the wire (tail drop). Once every transfer is complete and the
/// network has drained, each flow's data segments were all delivered or dropped:
/// offered = delivered + dropped, exactly. Before, a flow's drops counted its lost
/// ACKs and SYNs too, and its deliveries the in-order advances, not the segments.
#[test]
fn tcp_offered_is_delivered_plus_dropped() {
    let stations = vec![ht20(7, 0.55), ht20(7, 0.55), ht20(3, 0.6), ht20(3, 0.6)];
    let mut cell = CellConfig::new(Standard::N, Band::Ghz5, stations);
    cell.stack = preset("linux-4.8-bloated").unwrap();
    let total = 2_000_000u64;
    let flows = (1..=4u16)
        .map(|n| {
            let sta = Host::Station(n);
            let (from, to) = if n % 2 == 0 {
                (sta, Host::Server)
            } else {
                (Host::Server, sta)
            };
            let mut t = TcpFlow::bulk(from, to, 0x100 + n as u32);
            t.bytes = Some(total);
            Flow::Tcp(t)
        })
        .collect();
    let mut cfg = SimConfig::new(cell, flows, Nanos::from_secs(60), 3);
    cfg.wired = WiredConfig {
        rate_bps: 100_000_000,
        delay: Nanos::from_ms(5),
        limit_packets: 20,
    };
    let r = Simulation::new(cfg).unwrap().run();
    let mut dropped = 0;
    for f in &r.flows {
        let bytes = (f.throughput_bps * r.duration_s / 8.0).round() as u64;
        assert_eq!(bytes, total, "flow {} completed", f.flow);
        assert!(
            f.retransmits.unwrap() > 0,
            "flow {}: losses were repaired",
            f.flow
        );
        assert_eq!(
            f.offered_packets,
            f.delivered_packets + f.dropped_packets,
            "flow {}: {f:?}",
            f.flow
        );
        assert!(f.offered_packets >= total / 1448, "flow {}", f.flow);
        dropped += f.dropped_packets;
    }
    assert!(dropped > 10, "the test loses data segments: {dropped}");
}

/// A connection that never opens (every frame of its station is lost): nothing was
/// offered, nothing dropped, and it is still TCP — retransmits 0, not null. A web page
/// on such a station likewise. Before, the SYNs' drops were the flow's only count
/// (dropped > offered = 0) and retransmits was null, which means "not TCP".
#[test]
fn a_connection_that_never_opens_counts_nothing() {
    let mut cell = CellConfig::new(Standard::N, Band::Ghz5, vec![ht20(7, 1.0)]);
    cell.stack = preset("linux-6.16").unwrap();
    let flows = vec![
        Flow::Tcp(TcpFlow::bulk(Host::Server, Host::Station(1), 1)),
        Flow::Web(WebPage::seed_page(Host::Station(1), 6, 2)),
    ];
    let r = Simulation::new(SimConfig::new(cell, flows, Nanos::from_secs(20), 1))
        .unwrap()
        .run();
    assert!(r.conservation.dropped_packets > 0, "the SYNs were lost");
    for f in &r.flows {
        assert_eq!(
            (f.offered_packets, f.delivered_packets, f.dropped_packets),
            (0, 0, 0),
            "{f:?}"
        );
        assert_eq!(f.retransmits, Some(0), "{}", f.kind);
    }
}
