//! A web page load: the page (the first object) is fetched first, then the remaining
//! objects over up to `connections` persistent TCP connections, one object at a time
//! per connection (HTTP/1.1 without pipelining). The page load time runs from the first
//! request to the last byte of the last object.
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
}

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
    /// Its connections, in the order opened, by every load of the page: a load again
    /// ([`WebPage::repeat_after`]) counts the earlier loads' connections against
    /// [`WebPage::connections`], so it opens one more connection and no others.
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
        let flow_hash = self.conn(conn, |c| {
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
        ctx.schedule(
            ctx.now() + Nanos::from_secs(1),
            SourceEvent::Retry { conn, object },
        );
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

    /// A page load begins, with a connection for the page itself; or a request not
    /// answered after 1 s goes again (the server never saw it: it was lost).
    fn due(&self, ctx: &mut FlowCtx<'_>, event: SourceEvent) {
        match event {
            SourceEvent::Offer => {
                let mut load = self.load.borrow_mut();
                load.next_object = 0;
                load.done = 0;
                load.started = ctx.now();
                drop(load);
                self.open(ctx);
            }
            SourceEvent::Retry { conn, object } => {
                if self.conn(conn, |c| c.awaits(object)) {
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
        self.next(ctx, conn);
    }

    /// The client received more of connection `conn`'s stream: when the object is in,
    /// the next is asked for; when the page is in, the browser's other connections open
    /// for its objects; when every object is in, the load is complete.
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
        // The page is in: open the browser's other connections for its objects.
        if first_done {
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
