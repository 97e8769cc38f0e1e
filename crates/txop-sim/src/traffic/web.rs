//! A web page load: the page (the first object) is fetched first, then the remaining
//! objects over up to `connections` persistent TCP connections, one object at a time
//! per connection (HTTP/1.1 without pipelining). The page load time runs from the first
//! request to the last byte of the last object.
//!
//! Simplifications: no DNS lookups; each connection's handshake is one round trip of
//! 60-byte packets; requests are single small packets, sent again after 1 s if lost
//! (the client's TCP would retransmit them after its RTO).

use super::{Flow, Host};
use crate::sim::{Event, Marking, Payload, Simulation};
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

/// The object a web connection is receiving.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WebObject {
    /// Its index in the page's `objects_bytes`.
    pub(crate) index: u32,
    /// The offset in the connection's stream where it ends.
    pub(crate) stream_end_bytes: u64,
}

/// A web page load in progress.
#[derive(Default)]
pub(crate) struct WebState {
    /// Connection indices in `conns` (opened as the page needs them).
    pub(crate) conns: Vec<usize>,
    /// Next object not yet requested.
    pub(crate) next_object: u32,
    /// Objects received in full.
    pub(crate) done: u32,
    pub(crate) started: Nanos,
}

impl Simulation {
    /// A page load begins: a connection for the page itself.
    pub(crate) fn web_start(&mut self, at: Nanos, flow: usize) {
        let w = &mut self.web[flow];
        w.next_object = 0;
        w.done = 0;
        w.started = at;
        self.web_open(at, flow);
    }

    /// Open one more connection for a page (the server sends, the client receives);
    /// its handshake goes first.
    fn web_open(&mut self, at: Nanos, flow: usize) {
        let Flow::Web(page) = &self.flows[flow] else {
            return;
        };
        let (client, server, cfg, hash) = (page.client, page.server, page.cfg, page.flow_hash);
        let k = self.web[flow].conns.len() as u32;
        // Best effort; each connection its own flow to fq.
        let marking = Marking {
            tid: 0,
            dscp: 0,
            flow_hash: hash ^ k,
        };
        let conn = self.open_conn(at, flow, server, client, cfg, Some(0), marking);
        self.web[flow].conns.push(conn);
        self.send_syn(at, conn);
    }

    /// Ask for the next object on connection `conn`, if any is left.
    pub(crate) fn web_next(&mut self, at: Nanos, conn: usize) {
        let flow = self.conns[conn].flow;
        let Flow::Web(page) = &self.flows[flow] else {
            return;
        };
        let n = page.objects_bytes.len() as u32;
        let w = &mut self.web[flow];
        // The page itself first; the other objects only once it is complete.
        if w.next_object >= n || (w.next_object > 0 && w.done == 0) {
            self.conns[conn].object = None;
            return;
        }
        let object = w.next_object;
        w.next_object += 1;
        self.web_request(at, conn, object);
    }

    fn web_request(&mut self, at: Nanos, conn: usize, object: u32) {
        let flow = self.conns[conn].flow;
        let Flow::Web(page) = &self.flows[flow] else {
            return;
        };
        let (client, server, req) = (page.client, page.server, page.request_bytes);
        let size = page.objects_bytes[object as usize] as u64;
        let c = &mut self.conns[conn];
        if c.object.map(|o| o.index) != Some(object) {
            c.object = Some(WebObject {
                index: object,
                stream_end_bytes: c.requested + size,
            });
        }
        self.conn_packet(
            at,
            conn,
            Payload::WebRequest {
                conn: conn as u32,
                object,
            },
            req,
            client,
            server,
        );
        self.events.push(
            at + Nanos::from_secs(1),
            Event::WebRetry {
                conn: conn as u32,
                object,
            },
        );
    }

    /// The request for `object` on connection `conn` was sent 1 s ago.
    pub(crate) fn web_retry(&mut self, at: Nanos, conn: usize, object: u32) {
        // The server never saw the request (it was lost): ask again.
        let c = &self.conns[conn];
        if c.object
            .is_some_and(|o| o.index == object && c.requested < o.stream_end_bytes)
        {
            self.web_request(at, conn, object);
        }
    }

    /// The server got a request for `object` on connection `conn`: it writes the
    /// object into the connection.
    pub(crate) fn web_request_arrived(&mut self, at: Nanos, conn: usize, object: u32) {
        let flow = self.conns[conn].flow;
        let Flow::Web(page) = &self.flows[flow] else {
            return;
        };
        let size = page.objects_bytes[object as usize] as u64;
        let c = &mut self.conns[conn];
        // A repeated request for an object already being sent is ignored.
        if c.object
            .is_some_and(|o| o.index == object && c.requested < o.stream_end_bytes)
        {
            c.requested += size;
            c.snd.add_bytes(at, size);
            self.pump_tcp(at, conn);
        }
    }

    /// The client received more of connection `conn`'s stream.
    pub(crate) fn web_progress(&mut self, at: Nanos, conn: usize) {
        let c = &self.conns[conn];
        let Some(object) = c.object else {
            return;
        };
        if c.rcv.bytes_received() < object.stream_end_bytes {
            return;
        }
        let flow = c.flow;
        let Flow::Web(page) = &self.flows[flow] else {
            return;
        };
        let (n, max_conns, repeat) = (
            page.objects_bytes.len() as u32,
            page.connections.max(1) as usize,
            page.repeat_after,
        );
        self.conns[conn].object = None;
        let w = &mut self.web[flow];
        w.done += 1;
        if w.done == n {
            let t = (at - w.started).as_secs_f64();
            self.flow_stats[flow].page_loaded(t);
            if let Some(r) = repeat {
                self.events.push(at + r, Event::Offer { flow: flow as u32 });
            }
            return;
        }
        let first_done = w.done == 1;
        self.web_next(at, conn);
        // The page is in: open the browser's other connections for its objects.
        if first_done {
            while self.web[flow].conns.len() < max_conns
                && (self.web[flow].conns.len() as u32) < n - 1
            {
                self.web_open(at, flow);
            }
        }
    }
}
