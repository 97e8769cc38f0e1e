//! A web page load: the page (the first object) is fetched first, then the remaining
//! objects over up to `connections` persistent TCP connections, one object at a time
//! per connection (HTTP/1.1 without pipelining). The page load time runs from the first
//! request to the last byte of the last object.
//!
//! A page loaded again ([`WebPage::repeat_after`]) is fetched as the first load
//! fetches it, the page first and then its objects over all `connections` connections
//! in parallel, and over the same connections: HTTP/1.1 connections are persistent
//! (RFC 9112 §9.3), and a browser keeps its idle ones to the server (up to 6 per host)
//! and sends a reload's requests over them (libcurl's connection pool likewise). So
//! only the first load opens connections (and pays their handshakes); a later one
//! starts on connections that have been idle, whose window restarts from the initial
//! one if the idle lasted longer than their RTO (`tcp_cwnd_restart`,
//! [`crate::tcp::TcpSender::add_bytes`]). The page's connections are thus at most
//! `connections`, however many times it loads. The server is assumed to keep them open
//! between loads (no keep-alive timeout is modelled). With one connection that is one
//! for every load too, as a browser limited to one; wget run again would open a new
//! one each time and pay one handshake round trip more per load.
//!
//! Simplifications: no DNS lookups; each connection's handshake is one round trip of
//! 60-byte packets; requests are single small packets, sent again after 1 s if lost
//! (the client's TCP would retransmit them after its RTO).

use super::{Arrival, ConnId, FlowCtx, Host, Marking, Message, Source, SourceEvent};
use crate::tcp::{ConnSpec, TcpConfig};
use std::cell::RefCell;
use txop_core::Nanos;
use txop_results::FlowStats;

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
struct WebObject {
    /// Its index in the page's `objects_bytes`.
    index: u32,
    /// The offset in the connection's stream where it ends.
    stream_end_bytes: u64,
}

/// One of a page load's connections.
#[derive(Debug)]
struct WebConn {
    conn: ConnId,
    /// The flow hash its packets carry (each connection its own flow to fq).
    flow_hash: u32,
    /// The object being received.
    object: Option<WebObject>,
    /// The stream offset already asked for (requested bytes so far).
    requested_bytes: u64,
    /// Its handshake is complete on the client's side: it can carry requests.
    connected: bool,
    /// When the client last sent a request on it: a retry is due [`REQUEST_RETRY`]
    /// after it, and one scheduled by an earlier load of the page is stale.
    requested_at: Nanos,
}

/// How long the client waits for the server to answer a request before sending it
/// again (the client's TCP would retransmit it after its RTO).
const REQUEST_RETRY: Nanos = Nanos::from_secs(1);

impl WebConn {
    /// Whether a request for `object` on this connection is still unanswered: it is
    /// the object being received, and no request for it has reached the server (its
    /// bytes are not yet requested from the stream).
    fn awaits(&self, object: u32) -> bool {
        self.object
            .is_some_and(|o| o.index == object && self.requested_bytes < o.stream_end_bytes)
    }
}

/// A web page load in progress.
#[derive(Debug, Default)]
struct PageLoad {
    /// The page's persistent connections, in the order opened (at most
    /// [`WebPage::connections`]): the first load opens them, every later load
    /// ([`WebPage::repeat_after`]) sends its requests over them again.
    conns: Vec<WebConn>,
    /// Next object not yet requested.
    next_object: u32,
    /// Objects received in full.
    done: u32,
    started: Nanos,
}

/// A web page load as it runs: the page and how far its load is.
pub(crate) struct WebSource {
    page: WebPage,
    load: RefCell<PageLoad>,
}

impl WebSource {
    pub(crate) fn new(page: WebPage) -> WebSource {
        WebSource {
            page,
            load: RefCell::new(PageLoad::default()),
        }
    }

    /// Act on connection `conn` of the load (no borrow outlives this call).
    fn conn<R>(&self, conn: ConnId, act: impl FnOnce(&mut WebConn) -> R) -> R {
        let mut load = self.load.borrow_mut();
        let c = load
            .conns
            .iter_mut()
            .find(|c| c.conn == conn)
            .expect("a connection of this page load");
        act(c)
    }

    /// Open one more connection for the page (the server sends, the client receives);
    /// its handshake goes first.
    fn open(&self, ctx: &mut FlowCtx<'_>) {
        let page = &self.page;
        let now = ctx.now();
        let k = self.load.borrow().conns.len() as u32;
        let flow_hash = page.flow_hash ^ k;
        let mut tcp = ctx.tcp();
        let conn = tcp.open(ConnSpec {
            sender: page.server,
            receiver: page.client,
            cfg: page.cfg,
            bytes: Some(0),
            marking: web_marking(flow_hash),
            client_requests: true,
        });
        self.load.borrow_mut().conns.push(WebConn {
            conn,
            flow_hash,
            object: None,
            requested_bytes: 0,
            connected: false,
            requested_at: now,
        });
        tcp.connect(conn);
    }

    /// Ask for the next object on connection `conn`, if any is left.
    fn next(&self, ctx: &mut FlowCtx<'_>, conn: ConnId) {
        let n = self.page.objects_bytes.len() as u32;
        let mut load = self.load.borrow_mut();
        // The page itself first; the other objects only once it is complete.
        if load.next_object >= n || (load.next_object > 0 && load.done == 0) {
            drop(load);
            self.conn(conn, |c| c.object = None);
            return;
        }
        let object = load.next_object;
        load.next_object += 1;
        drop(load);
        self.request(ctx, conn, object);
    }

    /// The client asks for `object` on connection `conn`, and again after 1 s if the
    /// server has not answered by then.
    fn request(&self, ctx: &mut FlowCtx<'_>, conn: ConnId, object: u32) {
        let page = &self.page;
        let size = page.objects_bytes[object as usize] as u64;
        let now = ctx.now();
        let flow_hash = self.conn(conn, |c| {
            c.requested_at = now;
            if c.object.map(|o| o.index) != Some(object) {
                c.object = Some(WebObject {
                    index: object,
                    stream_end_bytes: c.requested_bytes + size,
                });
            }
            c.flow_hash
        });
        let request = Message::WebRequest { conn, object };
        let mut p = ctx.packet(page.client, page.server, page.request_bytes, request);
        web_marking(flow_hash).apply(&mut p);
        ctx.send(page.client, p);
        ctx.schedule(now + REQUEST_RETRY, SourceEvent::Retry { conn, object });
    }
}

/// How a page load's packets are marked: best effort, `flow_hash` per connection.
fn web_marking(flow_hash: u32) -> Marking {
    Marking {
        tid: 0,
        dscp: 0,
        flow_hash,
    }
}

impl Source for WebSource {
    fn src(&self) -> Host {
        self.page.client
    }

    fn dst(&self) -> Host {
        self.page.server
    }

    fn kind(&self) -> &'static str {
        "web"
    }

    fn new_stats(&self) -> FlowStats {
        FlowStats::tcp()
    }

    fn start(&self, ctx: &mut FlowCtx<'_>) {
        ctx.schedule(self.page.start, SourceEvent::Offer);
    }

    /// A page load begins: the first opens a connection for the page itself, a later
    /// one asks for the page on the first connection, idle since the last load. Or a
    /// request not answered after 1 s goes again (the server never saw it: it was
    /// lost); a retry of an earlier load's request for the same object on the same
    /// connection is stale (the request it would repeat is a later one).
    fn due(&self, ctx: &mut FlowCtx<'_>, event: SourceEvent) {
        match event {
            SourceEvent::Offer => {
                let mut load = self.load.borrow_mut();
                load.next_object = 0;
                load.done = 0;
                load.started = ctx.now();
                let first_conn = load.conns.first().map(|c| c.conn);
                drop(load);
                match first_conn {
                    Some(conn) => self.next(ctx, conn),
                    None => self.open(ctx),
                }
            }
            SourceEvent::Retry { conn, object } => {
                let now = ctx.now();
                if self.conn(conn, |c| {
                    c.awaits(object) && now >= c.requested_at + REQUEST_RETRY
                }) {
                    self.request(ctx, conn, object);
                }
            }
            SourceEvent::Stop => {}
        }
    }

    /// The server got a request: it writes the object into the connection. A repeated
    /// request for an object already being sent is ignored.
    fn arrived(&self, ctx: &mut FlowCtx<'_>, arrival: Arrival<'_>) {
        let Message::WebRequest { conn, object } = arrival.message else {
            return;
        };
        let size = self.page.objects_bytes[object as usize] as u64;
        let write = self.conn(conn, |c| {
            let write = c.awaits(object);
            if write {
                c.requested_bytes += size;
            }
            write
        });
        if write {
            ctx.tcp().write(conn, size);
        }
    }

    /// The client side is open: its first request carries the handshake's last ACK.
    fn connected(&self, ctx: &mut FlowCtx<'_>, conn: ConnId) {
        self.conn(conn, |c| c.connected = true);
        self.next(ctx, conn);
    }

    /// The client received more of connection `conn`'s stream: when the object is in,
    /// the next is asked for; when the page is in, the browser asks for its objects on
    /// its other connections, opening those it does not have yet (on the first load);
    /// when every object is in, the load is complete.
    fn received(&self, ctx: &mut FlowCtx<'_>, conn: ConnId) {
        let Some(object) = self.conn(conn, |c| c.object) else {
            return;
        };
        if ctx.tcp().received_bytes(conn) < object.stream_end_bytes {
            return;
        }
        let page = &self.page;
        let (n, max_conns) = (
            page.objects_bytes.len() as u32,
            page.connections.max(1) as usize,
        );
        self.conn(conn, |c| c.object = None);
        let mut load = self.load.borrow_mut();
        load.done += 1;
        if load.done == n {
            let t = (ctx.now() - load.started).as_secs_f64();
            drop(load);
            ctx.stats().page_loaded(t);
            if let Some(r) = page.repeat_after {
                ctx.schedule(ctx.now() + r, SourceEvent::Offer);
            }
            return;
        }
        let first_done = load.done == 1;
        drop(load);
        self.next(ctx, conn);
        // The page is in: the browser's other connections ask for its objects (idle
        // ones from an earlier load at once; one still in its handshake, and new ones,
        // once open).
        if first_done {
            let idle: Vec<ConnId> = self
                .load
                .borrow()
                .conns
                .iter()
                .filter(|c| c.conn != conn && c.connected && c.object.is_none())
                .map(|c| c.conn)
                .collect();
            for other in idle {
                self.next(ctx, other);
            }
            loop {
                let opened = self.load.borrow().conns.len();
                if opened >= max_conns || opened as u32 >= n - 1 {
                    break;
                }
                self.open(ctx);
            }
        }
    }
}
