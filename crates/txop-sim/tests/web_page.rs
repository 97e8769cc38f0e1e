//! Web page loads (`txop_sim::traffic::web`) seen from the air: which TCP connections
//! each load of a repeated page uses, read from the simulator's capture.

use txop_capture::CaptureConfig;
use txop_core::cell::{CellConfig, StationConfig};
use txop_core::network::WiredConfig;
use txop_core::phy::channel::ErrorModel;
use txop_core::phy::{Band, ChannelWidth, GuardInterval, Standard, TxVector};
use txop_core::stack::preset;
use txop_core::Nanos;
use txop_sim::capture::{host_ip, SERVER_PORT};
use txop_sim::traffic::web::WebPage;
use txop_sim::traffic::{Flow, Host};
use txop_sim::{SimConfig, Simulation};

/// A TCP segment of the capture: when it ended on the air and what it carried.
#[derive(Clone, Copy, Debug)]
struct CapturedSegment {
    at_ns: u64,
    /// Sent by the station (the client) to the server.
    from_client: bool,
    client_port: u16,
    syn: bool,
    payload_bytes: u32,
}

/// The TCP segments between station 1 and the server in a pcapng file of the simulator
/// (`txop_sim::capture`: enhanced packet blocks, ns timestamps, each MPDU's body an
/// IPv4 packet), found by their IPv4 header (version 4, no options, protocol 6, the two
/// hosts' addresses), wherever in the frame it lies.
fn tcp_segments(pcapng: &[u8]) -> Vec<CapturedSegment> {
    let u32_at = |b: &[u8], i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
    let be16 = |b: &[u8], i: usize| u16::from_be_bytes([b[i], b[i + 1]]);
    let (server, client) = (host_ip(Host::Server), host_ip(Host::Station(1)));
    let mut out = Vec::new();
    let mut at = 0;
    while at + 12 <= pcapng.len() {
        let (kind, len) = (u32_at(pcapng, at), u32_at(pcapng, at + 4) as usize);
        assert!(len >= 12, "a pcapng block of {len} bytes");
        if kind == 6 {
            let block = &pcapng[at..at + len];
            let at_ns = (u32_at(block, 12) as u64) << 32 | u32_at(block, 16) as u64;
            let data = &block[28..28 + u32_at(block, 20) as usize];
            for ip in 0..data.len().saturating_sub(40) {
                let (src, dst) = (&data[ip + 12..ip + 16], &data[ip + 16..ip + 20]);
                let from_client = src == client && dst == server;
                if data[ip] != 0x45
                    || data[ip + 9] != 6
                    || !(from_client || src == server && dst == client)
                {
                    continue;
                }
                let tcp = &data[ip + 20..];
                let (sport, dport) = (be16(tcp, 0), be16(tcp, 2));
                let client_port = if from_client { sport } else { dport };
                assert_eq!(if from_client { dport } else { sport }, SERVER_PORT);
                let header_bytes = 20 + (tcp[12] >> 4) as u32 * 4;
                out.push(CapturedSegment {
                    at_ns,
                    from_client,
                    client_port,
                    syn: tcp[13] & 0x02 != 0,
                    payload_bytes: be16(data, ip + 2) as u32 - header_bytes,
                });
            }
        }
        at += len;
    }
    out
}

/// What one load of the page used.
#[derive(Debug)]
struct LoadSeen {
    load_s: f64,
    /// Connections the client opened during the load (its SYNs, one per client port).
    opened: usize,
    /// Connections that carried the page's bytes to the client during the load.
    carried: usize,
}

/// A page of a 20 kB page and 30 objects of 20 kB, fetched over 6 connections, loaded
/// 2 s after each load ends, at HT20 MCS7 over a 20 ms wired link (40 ms of round trip
/// beside about 1 ms in the cell).
/// Returns each load's figures and the connections the client opened in the whole run.
fn repeated_loads() -> (Vec<LoadSeen>, usize) {
    let sta = StationConfig::new(
        TxVector::Ht {
            mcs: 7,
            width: ChannelWidth::Mhz20,
            gi: GuardInterval::Long,
        },
        ErrorModel::None,
    );
    let mut cell = CellConfig::new(Standard::N, Band::Ghz5, vec![sta]);
    cell.stack = preset("linux-6.16").unwrap();
    let mut page = WebPage::seed_page(Host::Station(1), 6, 0x5eb);
    page.objects_bytes = vec![20_000; 31];
    page.start = Nanos::from_secs(1);
    page.repeat_after = Some(Nanos::from_secs(2));
    let secs = 20;
    let mut cfg = SimConfig::new(cell, vec![Flow::Web(page)], Nanos::from_secs(secs), 1);
    cfg.wired = WiredConfig {
        delay: Nanos::from_ms(20),
        ..WiredConfig::default()
    };
    let mut sim = Simulation::new(cfg).unwrap();
    let mut cap = CaptureConfig::new(Band::Ghz5);
    cap.snaplen_bytes = 65_535;
    sim.capture(cap).unwrap();
    sim.run_until(Nanos::from_secs(secs));
    let (pcapng, _) = sim.finish_capture().unwrap().unwrap();
    let segments = tcp_segments(&pcapng);
    let mut opened_ports: Vec<u16> = segments
        .iter()
        .filter(|s| s.from_client && s.syn)
        .map(|s| s.client_port)
        .collect();
    opened_ports.sort_unstable();
    opened_ports.dedup();
    let times_s = sim.results().flows[0].page_load_times_s.clone();
    // Load k runs from its start; the window given to it runs on through the 2 s pause
    // after it (only its last ACKs can fall there).
    let mut start_s = 1.0;
    let mut loads = Vec::new();
    for &load_s in &times_s {
        let end_s = start_s + load_s + 2.0;
        let inside: Vec<_> = segments
            .iter()
            .filter(|s| (start_s..end_s).contains(&(s.at_ns as f64 * 1e-9)))
            .collect();
        let ports = |keep: &dyn Fn(&CapturedSegment) -> bool| {
            let mut p: Vec<u16> = inside
                .iter()
                .filter(|s| keep(s))
                .map(|s| s.client_port)
                .collect();
            p.sort_unstable();
            p.dedup();
            p.len()
        };
        loads.push(LoadSeen {
            load_s,
            opened: ports(&|s| s.from_client && s.syn),
            carried: ports(&|s| !s.from_client && s.payload_bytes > 0),
        });
        start_s = end_s;
    }
    (loads, opened_ports.len())
}

/// Every load of a page loaded again and again fetches its objects over the page's
/// `connections` connections in parallel, as the first load does, and the later loads
/// reuse the first load's persistent connections: the client opens 6 connections in
/// the whole run, not more with each load.
///
/// Each load takes about as long as the first: the first also pays the two handshake
/// round trips (the page's connection, then the other five), 2 × 42 ms, which the
/// later loads skip; the connections have been idle for 2 s, far longer than their RTO
/// (about 0.25 s), so each later load starts again from the initial window
/// (`tcp_cwnd_restart`), as the first. A later load is therefore at most one round trip
/// slower and at most three faster (two handshakes and one of slack). Before the fix a
/// later load opened one new connection and fetched all 31 objects over it one after
/// another: at least 31 round trips, 1.3 s, against about 0.5 s.
#[test]
fn every_load_of_a_repeated_page_uses_its_connections_in_parallel() {
    let (loads, opened) = repeated_loads();
    assert!(loads.len() >= 4, "{loads:?}");
    let rtt_s = 0.042;
    let first = &loads[0];
    assert_eq!((first.opened, first.carried), (6, 6), "{loads:?}");
    for (k, l) in loads.iter().enumerate().skip(1) {
        assert_eq!((l.opened, l.carried), (0, 6), "load {k}: {loads:?}");
        assert!(
            (first.load_s - 3.0 * rtt_s..=first.load_s + rtt_s).contains(&l.load_s),
            "load {k} took {} s, the first {} s",
            l.load_s,
            first.load_s
        );
    }
    assert_eq!(opened, 6, "the connection table does not grow per load");
}
