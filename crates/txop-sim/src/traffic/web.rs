//! A web page load: the page (the first object) is fetched first, then the remaining
//! objects over up to `connections` persistent TCP connections, one object at a time
//! per connection (HTTP/1.1 without pipelining). The page load time runs from the first
//! request to the last byte of the last object.
//!
//! Simplifications: no DNS lookups; each connection's handshake is one round trip of
//! 60-byte packets; requests are single small packets, sent again after 1 s if lost
//! (the client's TCP would retransmit them after its RTO).

use super::Host;
use crate::tcp::TcpConfig;
use txop_core::Nanos;

/// One page and how it is fetched.
#[derive(Clone, Debug)]
pub struct WebPage {
    /// The station whose browser loads the page.
    pub client: Host,
    pub server: Host,
    /// Object sizes in bytes; the first is the page itself.
    pub objects_bytes: Vec<u32>,
    /// Persistent connections the browser opens (wget: 1, browsers: 6).
    pub connections: u32,
    /// Size of a request packet (an HTTP GET with headers).
    pub request_bytes: u32,
    pub start: Nanos,
    /// Load the page again this long after each load completes (None: once).
    pub repeat_after: Option<Nanos>,
    pub cfg: TcpConfig,
    pub flow_hash: u32,
}

impl WebPage {
    /// The seed's page: 62 objects, 1.8 MB in all (a 100 kB page and 61 objects of
    /// 1.7 MB / 61 each), fetched over `connections` connections.
    pub fn seed_page(client: Host, connections: u32, flow_hash: u32) -> WebPage {
        let mut objects_bytes = vec![100_000];
        objects_bytes.extend(std::iter::repeat_n(1_700_000 / 61, 61));
        WebPage {
            client,
            server: Host::Server,
            objects_bytes,
            connections,
            request_bytes: 400,
            start: Nanos::ZERO,
            repeat_after: None,
            cfg: TcpConfig::default(),
            flow_hash,
        }
    }

    pub fn total_bytes(&self) -> u64 {
        self.objects_bytes.iter().map(|&b| b as u64).sum()
    }
}
