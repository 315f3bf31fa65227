//! CoAP over TCP (RFC 8323) on real sockets: a tokio task per connection drives a sans-IO
//! [`StreamConnection`] (coap-endpoint): bytes read go in, its output is written, its events
//! answer the application, and it sleeps until the connection's next deadline
//! ([`StreamLimits`]). Congestion control and reliability are the operating system's TCP.
//!
//! # Bounds (every peer is untrusted)
//! * A server keeps at most [`TcpServerConfig::max_connections`] connections; the cap is lowered
//!   to what the process's open-file limit leaves ([`crate::within_fd_budget`]), so that
//!   accepting never fails for want of descriptors. When it is reached, the connection that has
//!   carried no request for longest (counting from its accept if it never carried one) is
//!   closed to make room: connections kept open by keep-alives alone cannot lock out clients
//!   that send requests. One source address keeps at most
//!   [`TcpServerConfig::max_per_source`] connections; further ones are closed at accept.
//! * Each connection ends when its peer makes no progress: no CSM within `csm`, a frame begun and
//!   not finished within `frame` (slow senders), no traffic within `idle`; a peer that does not
//!   read what we write is dropped after `frame` as well (a stalled write).
//! * A failed accept (say EMFILE) waits [`ACCEPT_BACKOFF`] before the next one instead of spinning.
//! * A client waits at most `csm` for the server's CSM and `response` for each response.
//! * Block-wise transfers (RFC 8323 §6, as over UDP, without BERT): one [`Blockwise`] serves
//!   every connection of a server, so the transfers in progress share one budget (16 MiB,
//!   bodies up to 1 MiB; [`BlockLimits::default`]) however many connections there are.
//! * Observe (RFC 8323 §7): the accept task wakes at the resources' next change and hands each
//!   change to every connection (a broadcast channel of [`CHANGES_QUEUE`]; a connection that
//!   falls behind skips to the latest, as RFC 7641's eventual consistency allows), which
//!   notifies its own observers (at most
//!   [`coap_endpoint::stream::MAX_STREAM_OBSERVERS`] per connection). Closing a
//!   connection ends its observations. A client's observation delivers its notifications in a
//!   queue of 64; one not read in time ends it with [`RequestFailure::Overrun`].

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use coap_cc::Duration;
use coap_endpoint::{
    BlockLimits, Blockwise, Change, CloseReason, Deadline, Handler, Reply as HandlerReply, Request, RequestId,
    Response, StreamConnection, StreamEvent, StreamLimits, Transfer,
};
use coap_wire::{Code, Message};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{broadcast, mpsc, oneshot, Notify};

use crate::clock::Clock;
use crate::driver::{Reply, RequestFailure};
use crate::resources::{Resources, ServerStats};

/// The largest message this side accepts (advertised in its CSM).
pub const MAX_MESSAGE_SIZE: u64 = 1152;
/// Changes of observable resources waiting for a connection to take them; one that falls
/// further behind skips to the latest.
pub const CHANGES_QUEUE: usize = 16;
/// How long a server waits after a failed accept (e.g. out of file descriptors) before the next.
pub const ACCEPT_BACKOFF: std::time::Duration = std::time::Duration::from_millis(100);

/// A server's limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpServerConfig {
    /// Connections kept at once (further ones are closed at accept): 1024 by default, lowered to
    /// the open-file limit's budget.
    pub max_connections: usize,
    /// Each connection's deadlines; `response` is unused (a server sends no requests).
    pub limits: StreamLimits,
    /// Connections one source address keeps at once (further ones are closed at accept).
    pub max_per_source: usize,
    /// The listening socket's backlog (1024 by default; the kernel caps it at `net.core.somaxconn`).
    /// It bounds both the connections waiting for accept and, on Linux, the handshakes in
    /// progress: past it the kernel answers SYNs with SYN cookies or drops them (tokio's default,
    /// 128, made hundreds of clients connecting at once through a slow link meet that).
    pub backlog: u32,
}

impl Default for TcpServerConfig {
    fn default() -> Self {
        TcpServerConfig {
            max_connections: 1024,
            limits: server_limits(Duration::from_secs(60)),
            max_per_source: 256,
            backlog: 1024,
        }
    }
}

/// The open connections of a server: each one's source, when it last carried a request or
/// anything to its peer, such as a notification (or was accepted), whether it has observers,
/// and how to close it.
#[derive(Debug, Default)]
struct Open {
    conns: HashMap<u64, Conn>,
    per_source: HashMap<std::net::IpAddr, usize>,
    next_id: u64,
}

/// One open connection of [`Open`].
#[derive(Debug)]
struct Conn {
    ip: std::net::IpAddr,
    used: tokio::time::Instant,
    observed: bool,
    close: Arc<tokio::sync::Notify>,
}

impl Open {
    /// Registers a connection from `ip`; its id and its close signal.
    fn add(&mut self, ip: std::net::IpAddr) -> (u64, Arc<tokio::sync::Notify>) {
        let (id, close) = (self.next_id, Arc::new(tokio::sync::Notify::new()));
        self.next_id += 1;
        self.conns.insert(id, Conn { ip, used: tokio::time::Instant::now(), observed: false, close: close.clone() });
        *self.per_source.entry(ip).or_default() += 1;
        (id, close)
    }

    fn remove(&mut self, id: u64) {
        if let Some(c) = self.conns.remove(&id) {
            if let Some(n) = self.per_source.get_mut(&c.ip) {
                *n -= 1;
                if *n == 0 {
                    self.per_source.remove(&c.ip);
                }
            }
        }
    }

    /// Closes the connection without observers that has carried nothing either way for
    /// longest (else the observed one idle longest: an observer between two notifications looks
    /// idle); whether there was one.
    fn evict_oldest(&mut self) -> bool {
        let oldest = self.conns.iter().min_by_key(|(id, c)| (c.observed, c.used, **id)).map(|(id, _)| *id);
        let Some(id) = oldest else { return false };
        if let Some(c) = self.conns.get(&id) {
            c.close.notify_one();
        }
        self.remove(id);
        true
    }
}

/// A server connection's deadlines: the peer's CSM within 10 s, each frame within 10 s of its
/// first byte, and release after `idle` without traffic.
pub fn server_limits(idle: Duration) -> StreamLimits {
    StreamLimits {
        csm: Some(Duration::from_secs(10)),
        frame: Some(Duration::from_secs(10)),
        idle: Some(idle),
        response: None,
    }
}

/// A client connection's default deadlines: the server's CSM within 10 s, each frame within 10 s,
/// each response within 120 s (TCP's own retransmissions reach Linux's 120 s RTO cap); no idle
/// limit (the application decides when to release).
pub const CLIENT_LIMITS: StreamLimits = StreamLimits {
    csm: Some(Duration::from_secs(10)),
    frame: Some(Duration::from_secs(10)),
    idle: None,
    response: Some(Duration::from_secs(120)),
};

/// What a TCP server counted.
#[derive(Debug, Default)]
pub struct TcpStats {
    /// Connections accepted and served.
    pub accepted: AtomicU64,
    /// Connections closed at accept because their source had `max_per_source` open.
    pub refused: AtomicU64,
    /// Connections closed to make room for a new one (`max_connections` were open): the ones
    /// that had carried no request for longest.
    pub evicted: AtomicU64,
    /// Accepts that failed (e.g. out of file descriptors), each followed by [`ACCEPT_BACKOFF`].
    pub accept_errors: AtomicU64,
    /// Connections released for idleness.
    pub idle_closed: AtomicU64,
    /// Connections we aborted (malformed input, no CSM, a frame or a write that stalled).
    pub aborted: AtomicU64,
}

/// A running TCP server.
#[derive(Debug)]
pub struct TcpServer {
    /// Where it listens.
    pub local: SocketAddr,
    /// Its counters.
    pub stats: Arc<ServerStats>,
    /// Its connection counters.
    pub tcp_stats: Arc<TcpStats>,
    /// Open connections.
    pub connections: Arc<AtomicUsize>,
    /// The connection cap in force (the configured one, lowered to the open-file budget).
    pub max_connections: usize,
    stop: Option<oneshot::Sender<()>>,
}

impl TcpServer {
    /// Stops accepting (open connections finish on their own, within their limits).
    pub fn stop(mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
    }
}

/// Serves the resources over RFC 8323 on `bind` with the default limits.
pub async fn serve(bind: SocketAddr) -> std::io::Result<TcpServer> {
    serve_with(bind, TcpServerConfig::default()).await
}

/// Serves the resources over RFC 8323 on `bind`.
pub async fn serve_with(bind: SocketAddr, cfg: TcpServerConfig) -> std::io::Result<TcpServer> {
    let socket = socket_for(bind)?;
    socket.set_reuseaddr(true)?;
    socket.bind(bind)?;
    let listener = socket.listen(cfg.backlog)?;
    let local = listener.local_addr()?;
    let stats = Arc::new(ServerStats::default());
    let tcp_stats = Arc::new(TcpStats::default());
    let connections = Arc::new(AtomicUsize::new(0));
    let max_connections = crate::within_fd_budget(cfg.max_connections);
    let (stop_tx, mut stop_rx) = oneshot::channel();
    let (ts, conns) = (tcp_stats.clone(), connections.clone());
    let open = Arc::new(std::sync::Mutex::new(Open::default()));
    let resources =
        Blockwise::new(Resources::with_stats(stats.clone()), BlockLimits::default()).with_source_key(crate::source_key);
    let resources = Arc::new(std::sync::Mutex::new(resources));
    let rescheduled = Arc::new(Notify::new());
    let (changes_tx, _) = broadcast::channel::<Arc<Change>>(CHANGES_QUEUE);
    tokio::spawn(async move {
        let clock = Clock::new();
        loop {
            let next_change = resources.lock().ok().and_then(|r| r.next_change()).map(|t| clock.tokio(t));
            tokio::select! {
                _ = &mut stop_rx => break,
                // the resources changed: every connection hears of it and notifies its observers
                _ = tokio::time::sleep_until(next_change.unwrap_or_else(tokio::time::Instant::now)), if next_change.is_some() => {
                    let changes = resources.lock().map(|mut r| r.changes(clock.now())).unwrap_or_default();
                    for c in changes {
                        let _ = changes_tx.send(Arc::new(c));
                    }
                }
                // a request may have scheduled a change (a first registration)
                _ = rescheduled.notified() => {}
                r = listener.accept() => {
                    let (stream, peer) = match r {
                        Ok(x) => x,
                        Err(_) => {
                            ts.accept_errors.fetch_add(1, Ordering::Relaxed);
                            tokio::time::sleep(ACCEPT_BACKOFF).await;
                            continue;
                        }
                    };
                    let (id, close) = {
                        let Ok(mut o) = open.lock() else { break };
                        if o.per_source.get(&peer.ip()).is_some_and(|&n| n >= cfg.max_per_source) {
                            ts.refused.fetch_add(1, Ordering::Relaxed);
                            drop(stream);
                            continue;
                        }
                        // full: the connection idle for longest makes room
                        if o.conns.len() >= max_connections && o.evict_oldest() {
                            ts.evicted.fetch_add(1, Ordering::Relaxed);
                        }
                        o.add(peer.ip())
                    };
                    ts.accepted.fetch_add(1, Ordering::Relaxed);
                    conns.fetch_add(1, Ordering::Relaxed);
                    let (ts, conns, open) = (ts.clone(), conns.clone(), open.clone());
                    let res = Shared(resources.clone(), rescheduled.clone());
                    let changes = changes_tx.subscribe();
                    tokio::spawn(async move {
                        let conn = StreamConnection::new(peer, MAX_MESSAGE_SIZE, Some(Box::new(res)))
                            .with_blockwise()
                            .with_limits(clock.now(), cfg.limits);
                        let used = |observed: bool| {
                            if let Some(c) = open.lock().ok().as_mut().and_then(|o| o.conns.get_mut(&id)) {
                                (c.used, c.observed) = (tokio::time::Instant::now(), observed);
                            }
                        };
                        let end = tokio::select! {
                            end = serve_connection(stream, conn, clock, write_limit(&cfg.limits), used, changes) => end,
                            _ = close.notified() => Some(CloseReason::Released),
                        };
                        if let Ok(mut o) = open.lock() {
                            o.remove(id);
                        }
                        match end {
                            Some(CloseReason::Idle) => ts.idle_closed.fetch_add(1, Ordering::Relaxed),
                            Some(CloseReason::Aborted(_) | CloseReason::TimedOut(_)) => {
                                ts.aborted.fetch_add(1, Ordering::Relaxed)
                            }
                            _ => 0,
                        };
                        conns.fetch_sub(1, Ordering::Relaxed);
                    });
                }
            }
        }
    });
    Ok(TcpServer { local, stats, tcp_stats, connections, max_connections, stop: Some(stop_tx) })
}

/// One handler serving every connection of a server, behind a mutex; the accept task is told
/// when a request moved the handler's next change.
struct Shared<H>(Arc<std::sync::Mutex<H>>, Arc<Notify>);

impl<H: Handler<SocketAddr>> Handler<SocketAddr> for Shared<H> {
    fn handle(&mut self, now: coap_cc::Instant, from: &SocketAddr, id: RequestId, req: &Message<'_>) -> HandlerReply {
        let Ok(mut h) = self.0.lock() else {
            // a handler that panicked: no more answers from it
            return HandlerReply::Now(Response::new(Code::INTERNAL_SERVER_ERROR, Vec::new()));
        };
        let before = h.next_change();
        let reply = h.handle(now, from, id, req);
        if h.next_change() != before {
            self.1.notify_one();
        }
        reply
    }
}

/// How long one write may stall: the frame limit (a peer that reads nothing is as stuck as one
/// that writes nothing), else 10 s.
fn write_limit(l: &StreamLimits) -> std::time::Duration {
    l.frame.unwrap_or(Duration::from_secs(10)).into()
}

/// Waits for the peer's bytes or the connection's next deadline and hands either to `conn`;
/// `Ok(false)` when the peer closed its side of the stream.
async fn feed(
    stream: &mut TcpStream,
    conn: &mut StreamConnection<SocketAddr>,
    buf: &mut [u8],
    clock: Clock,
) -> std::io::Result<bool> {
    let deadline = conn.poll_timeout().map(|t| clock.tokio(t));
    tokio::select! {
        r = stream.read(buf) => match r? {
            0 => return Ok(false),
            n => conn.handle_bytes(clock.now(), &buf[..n]),
        },
        _ = tokio::time::sleep_until(deadline.unwrap_or_else(tokio::time::Instant::now)), if deadline.is_some() => {
            conn.handle_timeout(clock.now());
        }
    }
    Ok(true)
}

/// Writes `bytes` within `limit`; `false` if the write failed or stalled.
async fn write_within(stream: &mut TcpStream, bytes: &[u8], limit: std::time::Duration) -> bool {
    bytes.is_empty() || matches!(tokio::time::timeout(limit, stream.write_all(bytes)).await, Ok(Ok(())))
}

/// Serves one connection until it closes; returns why it closed, if the protocol closed it.
async fn serve_connection(
    mut stream: TcpStream,
    mut conn: StreamConnection<SocketAddr>,
    clock: Clock,
    write_limit: std::time::Duration,
    mut on_activity: impl FnMut(bool),
    mut changes: broadcast::Receiver<Arc<Change>>,
) -> Option<CloseReason> {
    let mut served = 0;
    let _ = stream.set_nodelay(false);
    let mut buf = vec![0u8; 4096];
    let mut reason = None;
    let mut changes_open = true;
    if write_within(&mut stream, &conn.take_output(), write_limit).await {
        loop {
            tokio::select! {
                open = feed(&mut stream, &mut conn, &mut buf, clock) => if !matches!(open, Ok(true)) {
                    break;
                },
                c = changes.recv(), if changes_open => match c {
                    Ok(c) => {
                        conn.notify(clock.now(), &c.path, &c.response);
                    }
                    // fallen behind: the next change is the latest
                    Err(broadcast::error::RecvError::Lagged(_)) => {}
                    Err(broadcast::error::RecvError::Closed) => changes_open = false,
                },
            }
            let out = conn.take_output();
            // a request in, or anything out (a notification to a long-lived observer): in use
            if conn.requests() != served || !out.is_empty() {
                served = conn.requests();
                on_activity(conn.observation_count() > 0);
            }
            if !write_within(&mut stream, &out, write_limit).await {
                reason = Some(CloseReason::Aborted("write stalled".into()));
                break;
            }
            while let Some(ev) = conn.poll_event() {
                if let StreamEvent::Closed(r) = ev {
                    reason = Some(r);
                }
            }
            if conn.is_closed() {
                break;
            }
        }
    }
    let _ = tokio::time::timeout(write_limit, stream.shutdown()).await;
    reason
}

enum Cmd {
    Request(Request, oneshot::Sender<Result<Reply, RequestFailure>>),
    Observe(Request, mpsc::Sender<Result<Reply, RequestFailure>>),
    Ping(oneshot::Sender<bool>),
    Release(oneshot::Sender<()>),
}

/// A client connection.
#[derive(Debug, Clone)]
pub struct TcpClient {
    cmds: mpsc::Sender<Cmd>,
}

/// Connects to `server` with [`CLIENT_LIMITS`]; see [`connect_with`].
pub async fn connect(server: SocketAddr) -> std::io::Result<TcpClient> {
    connect_with(server, CLIENT_LIMITS).await
}

/// Connects to `server`, exchanges CSMs, and returns once the server's CSM arrived; errors name
/// the server. A server whose CSM does not come within `limits.csm` is a `TimedOut` error.
pub async fn connect_with(server: SocketAddr, limits: StreamLimits) -> std::io::Result<TcpClient> {
    connect_from(server, None, limits).await
}

/// A TCP socket of `addr`'s family.
fn socket_for(addr: SocketAddr) -> std::io::Result<tokio::net::TcpSocket> {
    if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()
    } else {
        tokio::net::TcpSocket::new_v6()
    }
}

/// [`connect_with`] from the local address `local` (port 0: any), if given.
pub async fn connect_from(
    server: SocketAddr,
    local: Option<SocketAddr>,
    limits: StreamLimits,
) -> std::io::Result<TcpClient> {
    let named = |e: std::io::Error| std::io::Error::new(e.kind(), format!("{server}: {e}"));
    let mut stream = match local {
        None => TcpStream::connect(server).await.map_err(named)?,
        Some(local) => {
            let socket = socket_for(local).map_err(named)?;
            socket.bind(local).map_err(|e| std::io::Error::new(e.kind(), format!("cannot bind {local}: {e}")))?;
            socket.connect(server).await.map_err(named)?
        }
    };
    let clock = Clock::new();
    let mut conn = StreamConnection::new(server, MAX_MESSAGE_SIZE, None).with_limits(clock.now(), limits);
    let write_limit = write_limit(&limits);
    if !write_within(&mut stream, &conn.take_output(), write_limit).await {
        return Err(named(std::io::Error::new(std::io::ErrorKind::TimedOut, "could not send our CSM")));
    }
    let mut buf = vec![0u8; 4096];
    // wait for the peer's CSM (the connection's CSM deadline aborts a silent server)
    loop {
        if !feed(&mut stream, &mut conn, &mut buf, clock).await.map_err(named)? {
            let e = std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "closed before its CSM");
            return Err(named(e));
        }
        let _ = write_within(&mut stream, &conn.take_output(), write_limit).await;
        match conn.poll_event() {
            Some(StreamEvent::Ready { .. }) => break,
            Some(StreamEvent::Closed(CloseReason::TimedOut(Deadline::Csm))) => {
                let secs = limits.csm.map_or(0.0, |d| d.as_secs_f64());
                let e = std::io::Error::new(std::io::ErrorKind::TimedOut, format!("no CSM within {secs} s"));
                return Err(named(e));
            }
            Some(StreamEvent::Closed(r)) => {
                return Err(named(std::io::Error::other(format!("connection ended: {r:?}"))))
            }
            _ => {}
        }
    }
    let (tx, rx) = mpsc::channel(64);
    tokio::spawn(run_client(stream, conn, clock, rx, buf, write_limit));
    Ok(TcpClient { cmds: tx })
}

async fn run_client(
    mut stream: TcpStream,
    mut conn: StreamConnection<SocketAddr>,
    clock: Clock,
    mut cmds: mpsc::Receiver<Cmd>,
    mut buf: Vec<u8>,
    write_limit: std::time::Duration,
) {
    let mut waiting: HashMap<u64, (oneshot::Sender<Result<Reply, RequestFailure>>, coap_cc::Instant)> = HashMap::new();
    let mut pings: Vec<oneshot::Sender<bool>> = Vec::new();
    let mut observing: HashMap<u64, mpsc::Sender<Result<Reply, RequestFailure>>> = HashMap::new();
    // what ends the connection is what the requests still waiting are told
    let mut failure = RequestFailure::ConnectionClosed;
    let mut ended = false;
    loop {
        tokio::select! {
            cmd = cmds.recv() => match cmd {
                Some(Cmd::Request(req, reply)) => match conn.request(clock.now(), &req) {
                    Some(id) => {
                        waiting.insert(id, (reply, clock.now()));
                    }
                    None => {
                        let _ = reply.send(Err(RequestFailure::NotSent));
                    }
                },
                Some(Cmd::Observe(req, replies)) => match conn.observe(clock.now(), &req) {
                    Some(id) => {
                        observing.insert(id, replies);
                    }
                    None => {
                        let _ = replies.try_send(Err(RequestFailure::NotSent));
                    }
                },
                Some(Cmd::Ping(reply)) => {
                    conn.ping();
                    pings.push(reply);
                }
                Some(Cmd::Release(reply)) => {
                    conn.release();
                    let _ = write_within(&mut stream, &conn.take_output(), write_limit).await;
                    let _ = tokio::time::timeout(write_limit, stream.shutdown()).await;
                    let _ = reply.send(());
                    break;
                }
                None => break,
            },
            open = feed(&mut stream, &mut conn, &mut buf, clock) => if !matches!(open, Ok(true)) {
                // the events first: why the connection closed
                ended = true;
            },
        }
        if !ended && !write_within(&mut stream, &conn.take_output(), write_limit).await {
            break;
        }
        while let Some(ev) = conn.poll_event() {
            match ev {
                StreamEvent::Response { id, code, options, payload } if observing.contains_key(&id) => {
                    let registered = options.iter().any(|o| o.0 == coap_wire::registry::OBSERVE);
                    let reply = Reply { code, options, payload, rtt: Duration::ZERO, transmissions: 1 };
                    if observing[&id].try_send(Ok(reply)).is_err() || !registered {
                        observing.remove(&id);
                        conn.forget_observation(id);
                    }
                }
                StreamEvent::Notification { id, code, options, payload } => {
                    let last = code.class() != 2 || !options.iter().any(|o| o.0 == coap_wire::registry::OBSERVE);
                    let reply = Reply { code, options, payload, rtt: Duration::ZERO, transmissions: 0 };
                    if let Some(tx) = observing.get(&id) {
                        if !crate::driver::deliver_notification(tx, reply, last) {
                            observing.remove(&id);
                            conn.forget_observation(id);
                        }
                    }
                }
                StreamEvent::Response { id, code, options, payload } => {
                    if let Some((reply, start)) = waiting.remove(&id) {
                        let rtt: Duration = clock.now() - start;
                        let _ = reply.send(Ok(Reply { code, options, payload, rtt, transmissions: 1 }));
                    }
                }
                StreamEvent::Pong => {
                    if let Some(p) = pings.pop() {
                        let _ = p.send(true);
                    }
                }
                StreamEvent::Closed(why) => failure = failure_of(&why),
                StreamEvent::Ready { .. } => {}
            }
        }
        if ended || conn.is_closed() {
            break;
        }
    }
    for (_, (reply, _)) in waiting {
        let _ = reply.send(Err(failure));
    }
}

/// What a client's waiting requests are told when the connection closes for `why`.
fn failure_of(why: &CloseReason) -> RequestFailure {
    match why {
        CloseReason::TimedOut(Deadline::Response) => RequestFailure::ResponseDeadline,
        CloseReason::TimedOut(Deadline::Frame) => RequestFailure::FrameDeadline,
        CloseReason::Aborted(_) => RequestFailure::BadFrame,
        CloseReason::TimedOut(Deadline::Csm)
        | CloseReason::AbortedByPeer(_)
        | CloseReason::Released
        | CloseReason::Idle => RequestFailure::ConnectionClosed,
    }
}

impl TcpClient {
    /// Sends a request and waits for its response (on a closed connection:
    /// [`RequestFailure::ConnectionClosed`]).
    pub async fn request(&self, req: Request) -> Result<Reply, RequestFailure> {
        let (tx, rx) = oneshot::channel();
        self.cmds.send(Cmd::Request(req, tx)).await.map_err(|_| RequestFailure::ConnectionClosed)?;
        rx.await.unwrap_or(Err(RequestFailure::ConnectionClosed))
    }
    /// Sends `req` block-wise if it must (RFC 8323 §6, RFC 7959: with `block_size`, a larger body
    /// goes in Block1 blocks of that size and responses are asked for in that size; a response
    /// sent in Block2 blocks is fetched whole in any case) and returns the whole response.
    /// Responses beyond `max_body` fail. The RTT is the sum over the exchanges.
    pub async fn transfer(
        &self,
        req: Request,
        block_size: Option<usize>,
        max_body: usize,
    ) -> Result<Reply, RequestFailure> {
        let t = Transfer::new(req, block_size, max_body).map_err(|_| RequestFailure::NotSent)?;
        crate::driver::run_transfer(t, |next| self.request(next)).await
    }
    /// Observes a resource (RFC 8323 §7): the receiver gets the response to the registration,
    /// then each notification, until the server's last, the connection's end (which also ends
    /// the observation at the server), or [`RequestFailure::Overrun`] when it is not read in time.
    pub async fn observe(&self, req: Request) -> Result<mpsc::Receiver<Result<Reply, RequestFailure>>, RequestFailure> {
        let (tx, rx) = mpsc::channel(64);
        self.cmds.send(Cmd::Observe(req, tx)).await.map_err(|_| RequestFailure::NotSent)?;
        Ok(rx)
    }
    /// Sends a Ping and waits for the Pong.
    pub async fn ping(&self) -> bool {
        let (tx, rx) = oneshot::channel();
        if self.cmds.send(Cmd::Ping(tx)).await.is_err() {
            return false;
        }
        rx.await.unwrap_or(false)
    }
    /// Releases (7.04) and closes the connection.
    pub async fn release(self) {
        let (tx, rx) = oneshot::channel();
        if self.cmds.send(Cmd::Release(tx)).await.is_ok() {
            let _ = rx.await;
        }
    }
}
