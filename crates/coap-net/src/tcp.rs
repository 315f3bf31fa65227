//! CoAP over TCP (RFC 8323) on real sockets: a tokio task per connection drives a sans-IO
//! [`StreamConnection`] (coap-endpoint): bytes read go in, its output is written, its events
//! answer the application. Congestion control and reliability are the operating system's TCP.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use coap_cc::Duration;
use coap_endpoint::{CloseReason, Request, StreamConnection, StreamEvent};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot};

use crate::clock::Clock;
use crate::driver::{Reply, RequestFailure};
use crate::resources::{Resources, ServerStats};

/// The largest message this side accepts (advertised in its CSM).
pub const MAX_MESSAGE_SIZE: u64 = 1152;
/// Connections a server keeps at once; further ones are closed at accept.
pub const MAX_CONNECTIONS: usize = 1024;

/// A running TCP server.
#[derive(Debug)]
pub struct TcpServer {
    /// Where it listens.
    pub local: SocketAddr,
    /// Its counters.
    pub stats: Arc<ServerStats>,
    /// Open connections.
    pub connections: Arc<AtomicUsize>,
    stop: Option<oneshot::Sender<()>>,
}

impl TcpServer {
    /// Stops accepting (open connections finish on their own).
    pub fn stop(mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
    }
}

/// Serves the resources over RFC 8323 on `bind`.
pub async fn serve(bind: SocketAddr) -> std::io::Result<TcpServer> {
    let listener = TcpListener::bind(bind).await?;
    let local = listener.local_addr()?;
    let stats = Arc::new(ServerStats::default());
    let connections = Arc::new(AtomicUsize::new(0));
    let (stop_tx, mut stop_rx) = oneshot::channel();
    let (st, conns) = (stats.clone(), connections.clone());
    tokio::spawn(async move {
        let clock = Clock::new();
        loop {
            tokio::select! {
                _ = &mut stop_rx => break,
                r = listener.accept() => {
                    let Ok((stream, peer)) = r else { continue };
                    if conns.load(Ordering::Relaxed) >= MAX_CONNECTIONS {
                        drop(stream);
                        continue;
                    }
                    conns.fetch_add(1, Ordering::Relaxed);
                    let (st, conns) = (st.clone(), conns.clone());
                    tokio::spawn(async move {
                        let res = Resources { stats: st };
                        let conn = StreamConnection::new(peer, MAX_MESSAGE_SIZE, Some(Box::new(res)));
                        let _ = serve_connection(stream, conn, clock).await;
                        conns.fetch_sub(1, Ordering::Relaxed);
                    });
                }
            }
        }
    });
    Ok(TcpServer { local, stats, connections, stop: Some(stop_tx) })
}

async fn serve_connection(
    mut stream: TcpStream,
    mut conn: StreamConnection<SocketAddr>,
    clock: Clock,
) -> std::io::Result<()> {
    let _ = stream.set_nodelay(false);
    stream.write_all(&conn.take_output()).await?;
    let mut buf = vec![0u8; 4096];
    loop {
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        conn.handle_bytes(clock.now(), &buf[..n]);
        let out = conn.take_output();
        if !out.is_empty() {
            stream.write_all(&out).await?;
        }
        while conn.poll_event().is_some() {}
        if conn.is_closed() {
            break;
        }
    }
    stream.shutdown().await
}

enum Cmd {
    Request(Request, oneshot::Sender<Result<Reply, RequestFailure>>),
    Ping(oneshot::Sender<bool>),
    Release(oneshot::Sender<()>),
}

/// A client connection.
#[derive(Debug, Clone)]
pub struct TcpClient {
    cmds: mpsc::Sender<Cmd>,
}

/// Connects to `server`, exchanges CSMs, and returns once the server's CSM arrived.
pub async fn connect(server: SocketAddr) -> std::io::Result<TcpClient> {
    let mut stream = TcpStream::connect(server).await?;
    let mut conn = StreamConnection::new(server, MAX_MESSAGE_SIZE, None);
    stream.write_all(&conn.take_output()).await?;
    let clock = Clock::new();
    let mut buf = vec![0u8; 4096];
    // wait for the peer's CSM
    loop {
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "closed before its CSM"));
        }
        conn.handle_bytes(clock.now(), &buf[..n]);
        stream.write_all(&conn.take_output()).await?;
        match conn.poll_event() {
            Some(StreamEvent::Ready { .. }) => break,
            Some(StreamEvent::Closed(r)) => return Err(std::io::Error::other(format!("connection ended: {r:?}"))),
            _ => {}
        }
    }
    let (tx, rx) = mpsc::channel(64);
    tokio::spawn(run_client(stream, conn, clock, rx, buf));
    Ok(TcpClient { cmds: tx })
}

async fn run_client(
    mut stream: TcpStream,
    mut conn: StreamConnection<SocketAddr>,
    clock: Clock,
    mut cmds: mpsc::Receiver<Cmd>,
    mut buf: Vec<u8>,
) {
    let mut waiting: HashMap<u64, (oneshot::Sender<Result<Reply, RequestFailure>>, coap_cc::Instant)> = HashMap::new();
    let mut pings: Vec<oneshot::Sender<bool>> = Vec::new();
    loop {
        tokio::select! {
            cmd = cmds.recv() => match cmd {
                Some(Cmd::Request(req, reply)) => match conn.request(&req) {
                    Some(id) => {
                        waiting.insert(id, (reply, clock.now()));
                    }
                    None => {
                        let _ = reply.send(Err(RequestFailure::NotSent));
                    }
                },
                Some(Cmd::Ping(reply)) => {
                    conn.ping();
                    pings.push(reply);
                }
                Some(Cmd::Release(reply)) => {
                    conn.release();
                    let _ = stream.write_all(&conn.take_output()).await;
                    let _ = stream.shutdown().await;
                    let _ = reply.send(());
                    break;
                }
                None => break,
            },
            r = stream.read(&mut buf) => match r {
                Ok(0) | Err(_) => break,
                Ok(n) => conn.handle_bytes(clock.now(), &buf[..n]),
            },
        }
        let out = conn.take_output();
        if !out.is_empty() && stream.write_all(&out).await.is_err() {
            break;
        }
        while let Some(ev) = conn.poll_event() {
            match ev {
                StreamEvent::Response { id, code, payload } => {
                    if let Some((reply, start)) = waiting.remove(&id) {
                        let rtt: Duration = clock.now() - start;
                        let _ = reply.send(Ok(Reply { code, payload, rtt, transmissions: 1 }));
                    }
                }
                StreamEvent::Pong => {
                    if let Some(p) = pings.pop() {
                        let _ = p.send(true);
                    }
                }
                StreamEvent::Closed(
                    CloseReason::Aborted(_) | CloseReason::AbortedByPeer(_) | CloseReason::Released,
                ) => {}
                StreamEvent::Ready { .. } => {}
            }
        }
        if conn.is_closed() {
            break;
        }
    }
    for (_, (reply, _)) in waiting {
        let _ = reply.send(Err(RequestFailure::Reset));
    }
}

impl TcpClient {
    /// Sends a request and waits for its response.
    pub async fn request(&self, req: Request) -> Result<Reply, RequestFailure> {
        let (tx, rx) = oneshot::channel();
        self.cmds.send(Cmd::Request(req, tx)).await.map_err(|_| RequestFailure::NotSent)?;
        rx.await.unwrap_or(Err(RequestFailure::NotSent))
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
