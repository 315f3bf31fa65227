//! One tokio task per endpoint: it owns the sans-IO [`Endpoint`] and its UDP socket, feeds in
//! datagrams, the clock and the application's commands, sends what `poll_transmit` returns and
//! sleeps until `poll_timeout` (quinn's `drive_timer` pattern). All protocol logic stays in
//! coap-endpoint.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use coap_cc::{Duration, Instant};
use coap_endpoint::{Endpoint, Event, ExchangeId, ExchangeReport, FailReason, Request, Response, Step, Transfer};
use coap_wire::Code;
use rand_chacha::ChaCha8Rng;
use tokio::net::UdpSocket;
use tokio::sync::{mpsc, oneshot};

use crate::clock::Clock;

/// A response, as the application receives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// The response code.
    pub code: Code,
    /// Its options in order.
    pub options: Vec<(u16, Vec<u8>)>,
    /// Its payload.
    pub payload: Vec<u8>,
    /// First transmission to response.
    pub rtt: Duration,
    /// Transmissions sent (1 + retransmissions; over all the requests of a block-wise transfer).
    pub transmissions: u32,
}

/// Runs block-wise transfer `t`, each of its requests through `send`: the whole response, its
/// RTT and transmissions summed over the exchanges.
pub(crate) async fn run_transfer<F, Fut>(mut t: Transfer, mut send: F) -> Result<Reply, RequestFailure>
where
    F: FnMut(Request) -> Fut,
    Fut: std::future::Future<Output = Result<Reply, RequestFailure>>,
{
    let (mut rtt, mut transmissions) = (Duration::ZERO, 0);
    let mut next = t.first();
    loop {
        let r = send(next).await?;
        rtt = rtt + r.rtt;
        transmissions += r.transmissions;
        match t.on_response(Response { code: r.code, options: r.options, payload: r.payload }) {
            Step::Send(req) => next = req,
            Step::Done(resp) => {
                let (code, options, payload) = (resp.code, resp.options, resp.payload);
                return Ok(Reply { code, options, payload, rtt, transmissions });
            }
            Step::Failed(_) => return Err(RequestFailure::Blockwise),
        }
    }
}

/// Hands a notification to its observation's receiver; whether the observation goes on. The
/// last free slot of the receiver's queue says that it is not keeping up (and the observation
/// ends) instead of a notification it would miss; a dropped receiver ends it too, and so does
/// the server's `last` notification.
pub(crate) fn deliver_notification(tx: &mpsc::Sender<Result<Reply, RequestFailure>>, reply: Reply, last: bool) -> bool {
    let message = if tx.capacity() <= 1 { Err(RequestFailure::Overrun) } else { Ok(reply) };
    let overrun = message.is_err();
    tx.try_send(message).is_ok() && !overrun && !last
}

/// Why a request failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestFailure {
    /// No response after MAX_RETRANSMIT retransmissions (or NON_LIFETIME for a NON).
    Timeout,
    /// The server answered with RST.
    Reset,
    /// The request could not be sent (too large, or the endpoint is shutting down).
    NotSent,
    /// A block-wise transfer could not go on (the server's blocks did not fit together, or the
    /// body exceeded its limit).
    Blockwise,
    /// An ICMP port unreachable came back: nothing listens on the server's port (reported only by
    /// an endpoint whose socket is connected to the server, see [`crate::ClientOptions`]).
    Unreachable,
    /// The server acknowledged the request (an empty ACK) and never sent the response within
    /// EXCHANGE_LIFETIME of the first transmission.
    NoSeparateResponse,
    /// Notifications came faster than the application took them: the observation was cancelled
    /// (its receiver would otherwise have lost some silently).
    Overrun,
    /// TCP: no response within the connection's response deadline; we aborted the connection.
    ResponseDeadline,
    /// TCP: the server began a frame and did not finish it within the frame deadline; we
    /// aborted the connection.
    FrameDeadline,
    /// TCP: the server sent a frame that does not decode or exceeds our Max-Message-Size; we
    /// aborted the connection.
    BadFrame,
    /// TCP: the connection closed before the response came (the server released or aborted it,
    /// or it was lost).
    ConnectionClosed,
}

impl From<FailReason> for RequestFailure {
    fn from(r: FailReason) -> Self {
        match r {
            FailReason::Timeout => RequestFailure::Timeout,
            FailReason::Reset => RequestFailure::Reset,
            FailReason::NoSeparateResponse => RequestFailure::NoSeparateResponse,
        }
    }
}

impl std::fmt::Display for RequestFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RequestFailure::Timeout => "no response (all retransmissions timed out)",
            RequestFailure::Reset => "the server answered with Reset",
            RequestFailure::NotSent => "the request could not be sent (larger than a message? try a block size)",
            RequestFailure::Blockwise => "the block-wise transfer failed",
            RequestFailure::Unreachable => "port unreachable (ICMP): nothing listens there",
            RequestFailure::Overrun => {
                "notifications came faster than they were read: the observation was cancelled"
            }
            RequestFailure::ResponseDeadline => "no response within the response deadline: the connection was aborted",
            RequestFailure::FrameDeadline => {
                "the server began a frame and did not finish it within the frame deadline: the connection was aborted"
            }
            RequestFailure::BadFrame => {
                "the server sent a frame that does not decode or is larger than our Max-Message-Size: the connection was aborted"
            }
            RequestFailure::ConnectionClosed => "the connection closed before the response came",
            RequestFailure::NoSeparateResponse => {
                "the server acknowledged the request but never sent its response (gave up after EXCHANGE_LIFETIME, 247 s)"
            }
        })
    }
}
impl std::error::Error for RequestFailure {}

/// A transmission, for logs (`coapcc client -v`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransmissionLog {
    /// The exchange.
    pub id: ExchangeId,
    /// 0 for the original.
    pub number: u32,
    /// The RTO armed for it.
    pub rto: Option<Duration>,
    /// Time since the endpoint started.
    pub at: Instant,
}

/// Receives transmission logs.
pub type LogFn = Box<dyn FnMut(TransmissionLog) + Send>;

/// Which way a datagram went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Sent by the endpoint.
    Sent,
    /// Received by it.
    Received,
}

/// Receives every datagram sent and received, with its peer (`coapcc client -v 2`).
pub type DatagramLogFn = Box<dyn FnMut(Direction, SocketAddr, &[u8]) + Send>;

/// Receives the report of every exchange as it retires (without one, the driver drops them: a
/// long run's memory does not grow with its exchanges, nor a block-wise transfer's with its
/// blocks).
pub type RetiredFn = Box<dyn FnMut(ExchangeReport<SocketAddr>) + Send>;

/// What a driver reports as it goes.
#[derive(Default)]
pub struct Logs {
    /// Each transmission of a request, with its RTO.
    pub transmissions: Option<LogFn>,
    /// Each datagram, both ways.
    pub datagrams: Option<DatagramLogFn>,
    /// Each retired exchange's report (else none is kept).
    pub retired: Option<RetiredFn>,
}

impl std::fmt::Debug for Logs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Logs")
            .field("transmissions", &self.transmissions.is_some())
            .field("datagrams", &self.datagrams.is_some())
            .field("retired", &self.retired.is_some())
            .finish()
    }
}

enum Command {
    Request { dest: SocketAddr, req: Request, reply: oneshot::Sender<Result<Reply, RequestFailure>> },
    Observe { dest: SocketAddr, req: Request, replies: mpsc::Sender<Result<Reply, RequestFailure>> },
    Deregister { dest: SocketAddr, req: Request, reply: oneshot::Sender<Result<Reply, RequestFailure>> },
    ResetCc { dest: SocketAddr },
    InFlight { reply: oneshot::Sender<usize> },
    State { reply: oneshot::Sender<StateSize> },
    Finish { reply: oneshot::Sender<()> },
}

/// How much state an endpoint holds (bounded for servers under floods).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StateSize {
    /// Deduplication entries.
    pub dedup: usize,
    /// The bytes they cost (within the configured budget).
    pub dedup_bytes: usize,
    /// Entries evicted before their lifetime ended to stay within the budget.
    pub dedup_early_evictions: u64,
    /// Exchanges, finished ones awaiting retirement included.
    pub exchanges: usize,
    /// Finished exchanges retired early to stay within `Config::max_finished`.
    pub early_retirements: u64,
    /// Echo challenges sent (4.01 + Echo in place of a response past the amplification limit).
    pub echo_challenges: u64,
    /// Datagrams the amplification limit kept from unverified sources.
    pub amplification_withheld: u64,
}

/// The application's handle on an endpoint task.
#[derive(Debug, Clone)]
pub struct EndpointHandle {
    cmds: mpsc::Sender<Command>,
    local: SocketAddr,
}

impl EndpointHandle {
    /// The socket's local address.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// Observes a resource (RFC 7641): `req` (a GET) goes with Observe 0. The receiver yields the
    /// response, then every notification (`rtt` zero, `transmissions` 0); it ends when the
    /// server did not add us, sends its last notification, or the exchange fails (an `Err`).
    /// Dropping the receiver cancels the observation (its next notification gets RST).
    pub async fn observe(
        &self,
        dest: SocketAddr,
        req: Request,
    ) -> Result<mpsc::Receiver<Result<Reply, RequestFailure>>, RequestFailure> {
        let (tx, rx) = mpsc::channel(64);
        self.cmds.send(Command::Observe { dest, req, replies: tx }).await.map_err(|_| RequestFailure::NotSent)?;
        Ok(rx)
    }

    /// Ends the observation of `dest` that `req` registered, explicitly (RFC 7641 §3.6: `req`
    /// again, with Observe 1 and the observation's token), and waits for the server's answer.
    /// Its receiver ends. `NotSent` if no such observation is running.
    pub async fn deregister(&self, dest: SocketAddr, req: Request) -> Result<Reply, RequestFailure> {
        let (tx, rx) = oneshot::channel();
        self.cmds.send(Command::Deregister { dest, req, reply: tx }).await.map_err(|_| RequestFailure::NotSent)?;
        rx.await.unwrap_or(Err(RequestFailure::NotSent))
    }

    /// Sends a request and waits for its outcome.
    pub async fn request(&self, dest: SocketAddr, req: Request) -> Result<Reply, RequestFailure> {
        let (tx, rx) = oneshot::channel();
        self.cmds.send(Command::Request { dest, req, reply: tx }).await.map_err(|_| RequestFailure::NotSent)?;
        rx.await.unwrap_or(Err(RequestFailure::NotSent))
    }

    /// Sends a request as a block-wise transfer ([`Transfer`]: Block1 upload of a body larger
    /// than `block_size`, Block2 download of a large response, a repeat with the server's Echo)
    /// and returns the whole response; `rtt` spans the whole transfer.
    pub async fn transfer(
        &self,
        dest: SocketAddr,
        req: Request,
        block_size: Option<usize>,
        max_body: usize,
    ) -> Result<Reply, RequestFailure> {
        let t = Transfer::new(req, block_size, max_body).map_err(|_| RequestFailure::NotSent)?;
        run_transfer(t, |next| self.request(dest, next)).await
    }

    /// Forgets the congestion-control state of `dest` (a new device).
    pub async fn reset_cc(&self, dest: SocketAddr) {
        let _ = self.cmds.send(Command::ResetCc { dest }).await;
    }

    /// Exchanges waiting for their outcome.
    pub async fn in_flight(&self) -> usize {
        let (tx, rx) = oneshot::channel();
        if self.cmds.send(Command::InFlight { reply: tx }).await.is_err() {
            return 0;
        }
        rx.await.unwrap_or(0)
    }

    /// How much state the endpoint holds.
    pub async fn state(&self) -> Option<StateSize> {
        let (tx, rx) = oneshot::channel();
        self.cmds.send(Command::State { reply: tx }).await.ok()?;
        rx.await.ok()
    }

    /// Stops the task, once every exchange left has retired (its report to
    /// [`Logs::retired`]).
    pub async fn finish(self) {
        let (tx, rx) = oneshot::channel();
        if self.cmds.send(Command::Finish { reply: tx }).await.is_err() {
            return;
        }
        let _ = rx.await;
    }
}

/// Spawns the task driving `ep` over `socket`. It ends at [`EndpointHandle::finish`], or, unless
/// it `serve`s, when every handle is dropped and no exchange is waiting.
pub fn spawn(
    socket: UdpSocket,
    ep: Endpoint<SocketAddr, ChaCha8Rng>,
    clock: Clock,
    logs: Logs,
    serve: bool,
) -> EndpointHandle {
    let (tx, rx) = mpsc::channel(64);
    let local = socket.local_addr().unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0)));
    tokio::spawn(run(Arc::new(socket), ep, clock, rx, logs, serve));
    EndpointHandle { cmds: tx, local }
}

struct Waiting {
    reply: oneshot::Sender<Result<Reply, RequestFailure>>,
    first: Option<Instant>,
    transmissions: u32,
}

async fn run(
    socket: Arc<UdpSocket>,
    mut ep: Endpoint<SocketAddr, ChaCha8Rng>,
    clock: Clock,
    mut cmds: mpsc::Receiver<Command>,
    logs: Logs,
    serve: bool,
) {
    let (mut log, mut datagrams, mut retired) = (logs.transmissions, logs.datagrams, logs.retired);
    let mut inbuf = vec![0u8; 65536];
    let mut out = Vec::with_capacity(1500);
    let mut waiting: HashMap<ExchangeId, Waiting> = HashMap::new();
    let mut observing: HashMap<ExchangeId, mpsc::Sender<Result<Reply, RequestFailure>>> = HashMap::new();
    // each observation's destination and registration request (for its deregistration)
    let mut registered: HashMap<ExchangeId, (SocketAddr, Request)> = HashMap::new();
    let mut finish: Option<oneshot::Sender<()>> = None;
    let mut commands_open = true;
    loop {
        let deadline = ep.poll_timeout().map(|t| clock.tokio(t));
        tokio::select! {
            r = socket.recv_from(&mut inbuf) => match r {
                Ok((n, from)) => {
                    if let Some(d) = datagrams.as_mut() {
                        d(Direction::Received, from, &inbuf[..n]);
                    }
                    ep.handle_datagram(clock.now(), from, &inbuf[..n]);
                }
                // an ICMP port unreachable: reported by Linux on a connected socket only, so it
                // concerns the one peer; its exchanges fail at once (the endpoint's own go on
                // until they time out, unseen)
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                    for (_, w) in waiting.drain() {
                        let _ = w.reply.send(Err(RequestFailure::Unreachable));
                    }
                }
                Err(_) => {}
            },
            cmd = cmds.recv(), if commands_open => match cmd {
                Some(Command::Request { dest, req, reply }) => match ep.request(clock.now(), dest, req) {
                    Ok(id) => {
                        waiting.insert(id, Waiting { reply, first: None, transmissions: 0 });
                    }
                    Err(_) => {
                        let _ = reply.send(Err(RequestFailure::NotSent));
                    }
                },
                Some(Command::Observe { dest, req, replies }) => match ep.observe(clock.now(), dest, req.clone()) {
                    Ok(id) => {
                        observing.insert(id, replies);
                        registered.insert(id, (dest, req));
                    }
                    Err(_) => {
                        let _ = replies.try_send(Err(RequestFailure::NotSent));
                    }
                },
                Some(Command::Deregister { dest, req, reply }) => {
                    let same = |r: &Request| {
                        let plain = |r: &Request| {
                            let mut o = r.options.clone();
                            o.retain(|o| o.0 != coap_wire::registry::OBSERVE);
                            (r.code, o, r.payload.clone())
                        };
                        plain(r) == plain(&req)
                    };
                    let found = (registered.iter().filter(|(id, _)| observing.contains_key(id)))
                        .find(|(_, (d, r))| *d == dest && same(r))
                        .map(|(id, _)| *id);
                    match found.and_then(|id| ep.deregister(clock.now(), id, req).map(|r| (id, r))) {
                        Some((id, Ok(new))) => {
                            observing.remove(&id);
                            registered.remove(&id);
                            waiting.insert(new, Waiting { reply, first: None, transmissions: 0 });
                        }
                        _ => {
                            let _ = reply.send(Err(RequestFailure::NotSent));
                        }
                    }
                }
                Some(Command::ResetCc { dest }) => ep.reset_cc(&dest),
                Some(Command::InFlight { reply }) => {
                    let _ = reply.send(waiting.len());
                }
                Some(Command::State { reply }) => {
                    let _ = reply.send(StateSize {
                        dedup: ep.dedup_len(),
                        dedup_bytes: ep.dedup_bytes(),
                        dedup_early_evictions: ep.dedup_early_evictions(),
                        exchanges: ep.exchange_count(),
                        early_retirements: ep.early_retirements(),
                        echo_challenges: ep.echo_challenges(),
                        amplification_withheld: ep.amplification_withheld(),
                    });
                }
                Some(Command::Finish { reply }) => {
                    ep.retire_all();
                    finish = Some(reply);
                }
                None => commands_open = false,
            },
            _ = tokio::time::sleep_until(deadline.unwrap_or_else(tokio::time::Instant::now)), if deadline.is_some() => {
                ep.handle_timeout(clock.now());
            }
        }
        while let Some(tx) = ep.poll_transmit(&mut out) {
            if let Some(d) = datagrams.as_mut() {
                d(Direction::Sent, tx.dest, &out[..tx.len]);
            }
            let _ = socket.send_to(&out[..tx.len], tx.dest).await;
        }
        while let Some(ev) = ep.poll_event() {
            match ev {
                Event::Transmission { id, number, at, rto } => {
                    if let Some(w) = waiting.get_mut(&id) {
                        w.first.get_or_insert(at);
                        w.transmissions += 1;
                    }
                    if let Some(log) = log.as_mut() {
                        log(TransmissionLog { id, number, rto, at });
                    }
                }
                Event::Response { id, code, options, payload } if observing.contains_key(&id) => {
                    let registered = options.iter().any(|o| o.0 == coap_wire::registry::OBSERVE);
                    let reply = Reply { code, options, payload, rtt: Duration::ZERO, transmissions: 0 };
                    let tx = &observing[&id];
                    if tx.try_send(Ok(reply)).is_err() || !registered {
                        observing.remove(&id);
                        ep.cancel_observation(id);
                    }
                }
                Event::Notification { id, seq, code, options, payload } => {
                    if let Some(tx) = observing.get(&id) {
                        let reply = Reply { code, options, payload, rtt: Duration::ZERO, transmissions: 0 };
                        if !deliver_notification(tx, reply, seq.is_none()) {
                            observing.remove(&id);
                            ep.cancel_observation(id);
                        }
                    } else {
                        ep.cancel_observation(id);
                    }
                }
                Event::Response { id, code, options, payload } => {
                    if let Some(w) = waiting.remove(&id) {
                        let rtt = clock.now() - w.first.unwrap_or_else(|| clock.now());
                        let reply = Reply { code, options, payload, rtt, transmissions: w.transmissions };
                        let _ = w.reply.send(Ok(reply));
                    }
                }
                Event::Failed { id, reason } if observing.contains_key(&id) => {
                    if let Some(tx) = observing.remove(&id) {
                        let _ = tx.try_send(Err(reason.into()));
                    }
                }
                Event::Failed { id, reason } => {
                    if let Some(w) = waiting.remove(&id) {
                        let _ = w.reply.send(Err(reason.into()));
                    }
                }
                Event::Retired(r) => {
                    if let Some(f) = retired.as_mut() {
                        f(*r);
                    }
                }
            }
        }
        if let Some(reply) = finish.take() {
            let _ = reply.send(());
            return;
        }
        // a receiver dropped since: cancel its observation
        let dropped: Vec<ExchangeId> = observing.iter().filter(|(_, tx)| tx.is_closed()).map(|(id, _)| *id).collect();
        for id in dropped {
            observing.remove(&id);
            ep.cancel_observation(id);
        }
        if registered.len() > observing.len() {
            registered.retain(|id, _| observing.contains_key(id));
        }
        if !commands_open && waiting.is_empty() && observing.is_empty() && !serve {
            return;
        }
    }
}
