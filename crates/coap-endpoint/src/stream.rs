//! CoAP over reliable streams (RFC 8323 §3–§5), sans-IO: bytes in, bytes and events out.
//!
//! * Each side's first message is a CSM (7.01) with its Max-Message-Size; a first message that
//!   is not a CSM, a CSM with an unknown critical option, a frame larger than our
//!   Max-Message-Size, or a malformed frame aborts the connection with 7.05 Abort (with
//!   Bad-CSM-Option where §5.3 asks for it) and a diagnostic payload.
//! * Ping (7.02) is answered with Pong (7.03), echoing its token. Release (7.04) and Abort
//!   (7.05) from the peer end the connection ([`StreamEvent::Closed`]).
//! * Requests carry a token (4 bytes by default, 0 to 8 with [`StreamConnection::with_token_len`]);
//!   any number may be outstanding; responses are matched by token. With empty tokens (a client
//!   that, like the reference testbed's, sends no token) responses are matched in request order,
//!   which is exact when one request is outstanding at a time and a peer answering in order
//!   otherwise. A server side hands requests to a [`Handler`] and writes its reply
//!   (a handler answering later gets 5.03: deferred replies are not supported over streams).
//!   Block-wise transfers (RFC 8323 §6) are served when the handler is a [`crate::Blockwise`]
//!   ([`StreamConnection::with_blockwise`]; BERT is not offered), else refused with 4.02.
//! * Observe (RFC 8323 §7, RFC 7641): a server adds the sender of a GET with Observe 0 that its
//!   handler answers with Observe (at most [`MAX_STREAM_OBSERVERS`] per connection; beyond, the
//!   answer goes without Observe) and notifies it through [`StreamConnection::notify`], numbering
//!   the registration's answer and the notifications per connection; no CON, no ACK: the stream is
//!   reliable and ordered. A client's [`StreamConnection::observe`] gets the later responses as
//!   [`StreamEvent::Notification`]. Closing the connection ends its observations.
//! * The application writes everything [`StreamConnection::take_output`] returns, in order.
//! * Untrusted peers: a frame is buffered only up to our Max-Message-Size (the header announces
//!   its length); a complete frame that does not decode aborts. [`StreamLimits`] (none unless
//!   [`StreamConnection::with_limits`] sets them) end connections that make no progress: no CSM
//!   in time or a frame begun and not finished in time (Abort), no frame at all for the idle time
//!   (Release), or a request of ours unanswered (Abort). The driver sleeps until
//!   [`StreamConnection::poll_timeout`] and calls [`StreamConnection::handle_timeout`].

use std::collections::{BTreeMap, VecDeque};

use coap_cc::{Duration, Instant};
use coap_wire::{decode_uint, encode_uint, registry, CoapOption, Code, Error as WireError, Frame, Options};

use crate::server::{Handler, Reply, RequestId, Response};
use crate::Request;

/// RFC 8323 §5.3.1: the Max-Message-Size assumed before the peer's CSM.
pub const DEFAULT_MAX_MESSAGE_SIZE: u64 = 1152;

/// Deadlines that end a connection making no progress. RFC 8323 leaves them to the
/// implementation; `None` disables one (the default: the simulator's connections have none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StreamLimits {
    /// The peer's CSM must arrive within this time of the connection's start (else Abort).
    pub csm: Option<Duration>,
    /// A frame whose first bytes arrived must be complete within this time (else Abort): a peer
    /// trickling bytes (slowloris) cannot hold the connection.
    pub frame: Option<Duration>,
    /// With no request of ours outstanding and no frame in progress, the connection is released
    /// after this long without a complete frame from the peer or a request from us.
    pub idle: Option<Duration>,
    /// A request of ours must be answered within this time (else Abort).
    pub response: Option<Duration>,
}

/// Why the connection ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CloseReason {
    /// The peer sent 7.04 Release.
    Released,
    /// The peer sent 7.05 Abort (with its diagnostic).
    AbortedByPeer(String),
    /// We aborted (with this diagnostic).
    Aborted(String),
    /// We released it after [`StreamLimits::idle`] without traffic.
    Idle,
    /// We aborted it because the peer missed a deadline of [`StreamLimits`].
    TimedOut(Deadline),
}

/// Which of the [`StreamLimits`] a peer missed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deadline {
    /// Its CSM did not come.
    Csm,
    /// A frame it began was not completed.
    Frame,
    /// A request of ours was not answered.
    Response,
}

impl Deadline {
    /// The diagnostic of the Abort we send.
    pub fn diagnostic(self) -> &'static str {
        match self {
            Deadline::Csm => "no CSM received in time",
            Deadline::Frame => "frame not completed in time",
            Deadline::Response => "no response in time",
        }
    }
}

/// What the application learns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEvent {
    /// The peer's CSM arrived: requests may flow.
    Ready {
        /// The peer's Max-Message-Size.
        max_message_size: u64,
    },
    /// A response to request `id`.
    Response {
        /// The request.
        id: u64,
        /// Its code.
        code: Code,
        /// Its options in order.
        options: Vec<(u16, Vec<u8>)>,
        /// Its payload.
        payload: Vec<u8>,
    },
    /// A notification of observation `id` (RFC 7641 over a stream, RFC 8323 §7): the response
    /// to its registration came as [`StreamEvent::Response`]. One without Observe, or not a
    /// success, is the last.
    Notification {
        /// The registration's request.
        id: u64,
        /// Its code.
        code: Code,
        /// Its options in order.
        options: Vec<(u16, Vec<u8>)>,
        /// Its payload.
        payload: Vec<u8>,
    },
    /// A Pong to our Ping.
    Pong,
    /// The connection is over; close the socket after writing the pending output.
    Closed(CloseReason),
}

/// One RFC 8323 connection, client or server side.
pub struct StreamConnection<A> {
    peer: A,
    handler: Option<Box<dyn Handler<A>>>,
    max_message_size: u64,
    peer_max_message_size: u64,
    rx: Vec<u8>,
    out: Vec<u8>,
    csm_received: bool,
    closed: bool,
    token_len: usize,
    next_token: u64,
    next_request: u64,
    /// Outstanding requests by token: (id, when sent).
    pending: BTreeMap<([u8; 8], usize), (u64, Instant)>,
    /// Requests sent with an empty token, oldest first.
    pending_empty: VecDeque<(u64, Instant)>,
    events: VecDeque<StreamEvent>,
    limits: StreamLimits,
    /// When the connection began (for the CSM deadline).
    started: Instant,
    /// The last complete frame from the peer or request from us (for the idle deadline).
    active_at: Instant,
    /// When the first bytes of the frame now partly buffered arrived.
    partial_since: Option<Instant>,
    /// The handler serves Block1 and Block2 (a [`crate::Blockwise`]): else they are refused.
    blockwise: bool,
    /// A server's observers on this connection: (token, Uri-Path joined by '/').
    observers: Vec<(TokenKey, String)>,
    /// The Observe value of the last notification sent.
    observe_seq: u32,
    /// A client's observations: token → the registration's id.
    observations: BTreeMap<TokenKey, u64>,
}

/// A token as a map key: its bytes, padded, and its length.
type TokenKey = ([u8; 8], usize);

fn token_key(token: &[u8]) -> TokenKey {
    let mut key = [0u8; 8];
    let len = token.len().min(8);
    key[..len].copy_from_slice(&token[..len]);
    (key, len)
}

/// Observers one connection keeps (a server), and observations (a client); beyond, a
/// registration is answered without Observe (not added), or refused before it is sent.
pub const MAX_STREAM_OBSERVERS: usize = 16;

impl<A: core::fmt::Debug> core::fmt::Debug for StreamConnection<A> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("StreamConnection")
            .field("peer", &self.peer)
            .field("pending", &self.pending.len())
            .finish_non_exhaustive()
    }
}

fn write_frame(out: &mut Vec<u8>, code: Code, token: &[u8], options: &[CoapOption<'_>], payload: &[u8]) {
    let mut opts: smallvec::SmallVec<[CoapOption<'_>; 8]> = options.iter().copied().collect();
    opts.sort_by_key(|o| o.number);
    let f = Frame { code, token, options: Options::from_list(&opts), payload };
    if let Ok(bytes) = f.to_vec() {
        out.extend_from_slice(&bytes);
    }
}

impl<A: Clone> StreamConnection<A> {
    /// A connection to `peer` accepting frames up to `max_message_size`; it queues our CSM.
    /// With a handler it serves requests.
    pub fn new(peer: A, max_message_size: u64, handler: Option<Box<dyn Handler<A>>>) -> Self {
        let mut c = StreamConnection {
            peer,
            handler,
            max_message_size,
            peer_max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            rx: Vec::new(),
            out: Vec::new(),
            csm_received: false,
            closed: false,
            token_len: 4,
            next_token: 0,
            next_request: 0,
            pending: BTreeMap::new(),
            pending_empty: VecDeque::new(),
            events: VecDeque::new(),
            limits: StreamLimits::default(),
            started: Instant::ZERO,
            active_at: Instant::ZERO,
            partial_since: None,
            blockwise: false,
            observers: Vec::new(),
            observe_seq: 0,
            observations: BTreeMap::new(),
        };
        let mut b = [0u8; 4];
        let mms = encode_uint(max_message_size.min(u32::MAX as u64) as u32, &mut b);
        write_frame(
            &mut c.out,
            Code::CSM,
            &[],
            &[CoapOption { number: registry::CSM_MAX_MESSAGE_SIZE, value: mms }],
            &[],
        );
        c
    }

    /// Tokens of `len` bytes (at most 8; 0: no token, responses matched in request order).
    pub fn with_token_len(mut self, len: usize) -> Self {
        self.token_len = len.min(coap_wire::MAX_TOKEN_LEN);
        self
    }

    /// Serves Block1 and Block2 (RFC 8323 §6: block-wise transfers as over UDP, without BERT,
    /// which our CSM does not offer): the handler must be a [`crate::Blockwise`]. Without this,
    /// requests carrying them are refused with 4.02 Bad Option.
    pub fn with_blockwise(mut self) -> Self {
        self.blockwise = true;
        self
    }

    /// Ends the connection when it makes no progress (see [`StreamLimits`]); `now` is its start.
    pub fn with_limits(mut self, now: Instant, limits: StreamLimits) -> Self {
        self.limits = limits;
        self.started = now;
        self.active_at = now;
        self
    }

    /// Bytes received and held: the start of a frame not complete yet (at most our
    /// Max-Message-Size, since a longer frame aborts from its header).
    pub fn buffered(&self) -> usize {
        self.rx.len()
    }

    /// When [`StreamConnection::handle_timeout`] must be called next, if a limit is set.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.next_deadline().map(|(t, _)| t)
    }

    /// The earliest deadline in force and what passing it means: a missed [`Deadline`], or
    /// (`None`) the idle limit.
    fn next_deadline(&self) -> Option<(Instant, Option<Deadline>)> {
        if self.closed {
            return None;
        }
        let l = &self.limits;
        let csm = l.csm.filter(|_| !self.csm_received).map(|d| (self.started + d, Some(Deadline::Csm)));
        let frame = l.frame.zip(self.partial_since).map(|(d, t)| (t + d, Some(Deadline::Frame)));
        // a frame in progress is governed by the frame limit, a request of ours by the response
        // limit; only a connection with neither is idle
        let waiting = if self.outstanding() == 0 {
            l.idle.filter(|_| self.partial_since.is_none()).map(|d| (self.active_at + d, None))
        } else {
            l.response.zip(self.oldest_request()).map(|(d, t)| (t + d, Some(Deadline::Response)))
        };
        // the earliest; on a tie the first in this order
        [csm, frame, waiting].into_iter().flatten().reduce(|a, b| if b.0 < a.0 { b } else { a })
    }

    fn oldest_request(&self) -> Option<Instant> {
        let by_token = self.pending.values().map(|&(_, t)| t);
        by_token.chain(self.pending_empty.front().map(|&(_, t)| t)).min()
    }

    /// Ends the connection if one of its [`StreamLimits`] has passed at `now`: Abort for a
    /// missed deadline, Release for idleness.
    pub fn handle_timeout(&mut self, now: Instant) {
        match self.next_deadline() {
            Some((t, Some(d))) if t <= now => self.abort_as(d.diagnostic(), None, CloseReason::TimedOut(d)),
            Some((t, None)) if t <= now => {
                self.release();
                self.events.push_back(StreamEvent::Closed(CloseReason::Idle));
            }
            _ => {}
        }
    }

    /// Bytes to write to the stream now.
    pub fn take_output(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.out)
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<StreamEvent> {
        self.events.pop_front()
    }

    /// Has the connection ended?
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Requests awaiting their response.
    pub fn outstanding(&self) -> usize {
        self.pending.len() + self.pending_empty.len()
    }

    /// Requests sent (a client) or handed to the handler (a server) so far.
    pub fn requests(&self) -> u64 {
        self.next_request
    }

    /// Sends a request at `now` (its `confirmable` flag has no meaning on streams); returns its
    /// id, or `None` when the connection is closed or the request exceeds the peer's
    /// Max-Message-Size.
    pub fn request(&mut self, now: Instant, req: &Request) -> Option<u64> {
        self.send(now, req).map(|(id, _)| id)
    }

    /// Observes a resource (RFC 7641 over a stream, RFC 8323 §7): `req` (a GET) goes with
    /// Observe 0; its response comes as [`StreamEvent::Response`] and, if the server added us
    /// (its response carries Observe), the later ones as [`StreamEvent::Notification`] with the
    /// same id, in order (the stream keeps it: no reordering to detect) until one without
    /// Observe. `None` as [`StreamConnection::request`], or with empty tokens, or when
    /// [`MAX_STREAM_OBSERVERS`] observations run. Closing the connection ends them all (§7.4).
    pub fn observe(&mut self, now: Instant, req: &Request) -> Option<u64> {
        if self.token_len == 0 || self.observations.len() >= MAX_STREAM_OBSERVERS {
            return None;
        }
        let mut req = req.clone();
        req.options.retain(|o| o.0 != registry::OBSERVE);
        req.options.push((registry::OBSERVE, Vec::new()));
        let (id, key) = self.send(now, &req)?;
        self.observations.insert(key, id);
        Some(id)
    }

    /// Forgets observation `id`: its later notifications are ignored (the server learns it when
    /// the connection closes, or from a GET with Observe 1).
    pub fn forget_observation(&mut self, id: u64) {
        self.observations.retain(|_, v| *v != id);
    }

    /// Observations running (a client) or observers (a server) on this connection.
    pub fn observation_count(&self) -> usize {
        self.observations.len() + self.observers.len()
    }

    /// Sends `req`: its id and token.
    fn send(&mut self, now: Instant, req: &Request) -> Option<(u64, TokenKey)> {
        if self.closed {
            return None;
        }
        self.next_token = self.next_token.wrapping_add(1);
        let mut key = [0u8; 8];
        let len = self.token_len;
        key[..len].copy_from_slice(&self.next_token.to_be_bytes()[8 - len..]);
        let options: Vec<CoapOption<'_>> =
            req.options.iter().map(|(n, v)| CoapOption { number: *n, value: v }).collect();
        let before = self.out.len();
        write_frame(&mut self.out, req.code, &key[..len], &options, &req.payload);
        if (self.out.len() - before) as u64 > self.peer_max_message_size {
            self.out.truncate(before);
            return None;
        }
        let id = self.next_request;
        self.next_request += 1;
        if len == 0 {
            self.pending_empty.push_back((id, now));
        } else {
            self.pending.insert((key, len), (id, now));
        }
        self.active_at = now;
        Some((id, (key, len)))
    }

    /// Notifies this connection's observers of `path` (Uri-Path segments joined by '/') of
    /// `resp`, each with the next Observe value; a response that is not a success goes without
    /// Observe and ends their observations (RFC 7641 §4.2), as does one larger than the peer's
    /// Max-Message-Size (5.00 with the reason goes instead). Notifications keep the connection
    /// from counting as idle. Returns how many were sent.
    pub fn notify(&mut self, now: Instant, path: &str, resp: &Response) -> usize {
        if self.closed || !self.observers.iter().any(|o| o.1 == path) {
            return 0;
        }
        let last = resp.code.class() != 2;
        let mut ended = Vec::new();
        let mut n = 0;
        for (token, p) in &self.observers {
            if p != path {
                continue;
            }
            self.observe_seq = (self.observe_seq + 1) % crate::observe::SEQ_MODULUS;
            let seq = crate::observe::encode(self.observe_seq);
            let mut options: Vec<CoapOption<'_>> = resp
                .options
                .iter()
                .filter(|o| o.0 != registry::OBSERVE)
                .map(|(n, v)| CoapOption { number: *n, value: v })
                .collect();
            if !last {
                options.push(CoapOption { number: registry::OBSERVE, value: &seq });
            }
            let t = &token.0[..token.1];
            let before = self.out.len();
            write_frame(&mut self.out, resp.code, t, &options, &resp.payload);
            if (self.out.len() - before) as u64 > self.peer_max_message_size {
                self.out.truncate(before);
                let why = format!("the notification exceeds your Max-Message-Size ({})", self.peer_max_message_size);
                write_frame(&mut self.out, Code::INTERNAL_SERVER_ERROR, t, &[], why.as_bytes());
                ended.push(*token);
            } else if last {
                ended.push(*token);
            }
            n += 1;
        }
        self.observers.retain(|o| !ended.contains(&o.0));
        self.active_at = now;
        n
    }

    /// Sends a Ping.
    pub fn ping(&mut self) {
        write_frame(&mut self.out, Code::PING, &[0xAB], &[], &[]);
    }

    /// Ends the connection gracefully (7.04 Release).
    pub fn release(&mut self) {
        if !self.closed {
            write_frame(&mut self.out, Code::RELEASE, &[], &[], &[]);
            self.closed = true;
        }
    }

    fn abort(&mut self, diagnostic: &str, bad_csm_option: Option<u16>) {
        self.abort_as(diagnostic, bad_csm_option, CloseReason::Aborted(diagnostic.into()));
    }

    fn abort_as(&mut self, diagnostic: &str, bad_csm_option: Option<u16>, reason: CloseReason) {
        if self.closed {
            return;
        }
        let mut b = [0u8; 4];
        let opt;
        let options: &[CoapOption<'_>] = match bad_csm_option {
            Some(n) => {
                opt = [CoapOption { number: registry::ABORT_BAD_CSM_OPTION, value: encode_uint(n as u32, &mut b) }];
                &opt
            }
            None => &[],
        };
        write_frame(&mut self.out, Code::ABORT, &[], options, diagnostic.as_bytes());
        self.closed = true;
        self.events.push_back(StreamEvent::Closed(reason));
    }

    /// Feeds bytes read from the stream.
    pub fn handle_bytes(&mut self, now: Instant, bytes: &[u8]) {
        if self.closed {
            return;
        }
        // frames borrow the receive buffer while `on_frame` needs `self`: move it out meanwhile
        let mut rx = std::mem::take(&mut self.rx);
        rx.extend_from_slice(bytes);
        let mut used = 0;
        while !self.closed {
            match Frame::decode(&rx[used..], self.max_message_size) {
                Ok((f, n)) => {
                    self.active_at = now;
                    self.on_frame(now, &f);
                    used += n;
                }
                Err(WireError::Truncated) => break,
                Err(WireError::FrameTooLarge { len }) => {
                    //= https://www.rfc-editor.org/rfc/rfc8323#section-5.3.1
                    //# ... an endpoint MAY abort the connection if a message exceeds the
                    //# Max-Message-Size it indicated.
                    self.abort(
                        &format!("message of {len} bytes exceeds Max-Message-Size {}", self.max_message_size),
                        None,
                    );
                }
                Err(e) => self.abort(&format!("malformed message: {e}"), None),
            }
        }
        rx.drain(..used.min(rx.len()));
        if self.closed {
            rx = Vec::new(); // nothing more is read: free the buffer
        }
        // a partial frame starts its clock when its first bytes arrive, not when it is complete
        self.partial_since = match (rx.is_empty(), self.partial_since) {
            (true, _) => None,
            (false, Some(t)) if used == 0 => Some(t),
            (false, _) => Some(now),
        };
        self.rx = rx;
    }

    fn on_frame(&mut self, now: Instant, f: &Frame<'_>) {
        if !self.csm_received && f.code != Code::CSM {
            //= https://www.rfc-editor.org/rfc/rfc8323#section-5.3
            //# ... each endpoint MUST send a CSM as its first message; a missing or invalid
            //# CSM is a connection error.
            self.abort("the first message must be a CSM", None);
            return;
        }
        match f.code {
            Code::CSM => {
                for o in f.options.iter() {
                    match o.number {
                        registry::CSM_MAX_MESSAGE_SIZE => {
                            self.peer_max_message_size =
                                decode_uint(o.value).map_or(DEFAULT_MAX_MESSAGE_SIZE, u64::from);
                        }
                        registry::CSM_BLOCK_WISE_TRANSFER => {}
                        n if registry::is_critical(n) => {
                            self.abort("unknown critical CSM option", Some(n));
                            return;
                        }
                        _ => {}
                    }
                }
                if !self.csm_received {
                    self.csm_received = true;
                    self.events.push_back(StreamEvent::Ready { max_message_size: self.peer_max_message_size });
                }
            }
            Code::PING => write_frame(&mut self.out, Code::PONG, f.token, &[], &[]),
            Code::PONG => self.events.push_back(StreamEvent::Pong),
            Code::RELEASE => {
                self.closed = true;
                self.events.push_back(StreamEvent::Closed(CloseReason::Released));
            }
            Code::ABORT => {
                self.closed = true;
                let diag = String::from_utf8_lossy(f.payload).into_owned();
                self.events.push_back(StreamEvent::Closed(CloseReason::AbortedByPeer(diag)));
            }
            c if c.is_request() => {
                // block-wise options are unrecognized unless the handler serves them: 4.02, as are
                // unknown critical options and ones of a bad length
                let unserved: &[u16] = if self.blockwise { &[] } else { &[registry::BLOCK1, registry::BLOCK2] };
                let unrecognized = crate::endpoint::bad_critical_option(&f.options, unserved);
                let reply = match self.handler.as_mut() {
                    _ if unrecognized => Reply::Now(Response::new(Code::BAD_OPTION, Vec::new())),
                    Some(h) => {
                        let m = coap_wire::Message {
                            ty: coap_wire::MessageType::Con,
                            code: f.code,
                            message_id: 0,
                            token: f.token,
                            options: f.options,
                            payload: f.payload,
                        };
                        let id = RequestId(self.next_request);
                        self.next_request += 1;
                        h.handle(now, &self.peer, id, &m)
                    }
                    None => Reply::Now(Response::new(Code::NOT_FOUND, Vec::new())),
                };
                let mut resp =
                    reply.into_response().unwrap_or_else(|| Response::new(Code::SERVICE_UNAVAILABLE, Vec::new()));
                //= https://www.rfc-editor.org/rfc/rfc7641#section-3.6
                //# a client MAY explicitly deregister by issuing a GET request that has the Token
                //# field set to the token of the observation to be cancelled and includes an
                //# Observe Option with the value set to 1 (deregister).
                // (any GET with the token replaces the entry; Observe 0 adds it again)
                let key = token_key(f.token);
                let registering =
                    f.code == Code::GET && f.options.get(registry::OBSERVE).and_then(crate::observe::value) == Some(0);
                if f.code == Code::GET {
                    self.observers.retain(|o| o.0 != key);
                }
                let observable = resp.code.class() == 2 && resp.options.iter().any(|o| o.0 == registry::OBSERVE);
                if registering && observable && !unrecognized && self.observers.len() < MAX_STREAM_OBSERVERS {
                    let path: Vec<&str> =
                        f.options.get_all(registry::URI_PATH).map(|s| core::str::from_utf8(s).unwrap_or("")).collect();
                    self.observers.push((key, path.join("/")));
                    // the connection numbers what it sends its observers: the registration's
                    // answer first, so that the notifications after it count up from it
                    self.observe_seq = (self.observe_seq + 1) % crate::observe::SEQ_MODULUS;
                    for o in resp.options.iter_mut().filter(|o| o.0 == registry::OBSERVE) {
                        o.1 = crate::observe::encode(self.observe_seq);
                    }
                } else {
                    // an answer without Observe tells the client it is not an observer (RFC 7641
                    // §3.1): not asked, not observable, or full
                    resp.options.retain(|o| o.0 != registry::OBSERVE);
                }
                let options: Vec<CoapOption<'_>> =
                    resp.options.iter().map(|(n, v)| CoapOption { number: *n, value: v }).collect();
                let before = self.out.len();
                write_frame(&mut self.out, resp.code, f.token, &options, &resp.payload);
                //= https://www.rfc-editor.org/rfc/rfc8323#section-5.3.1
                //# ... the peer's Max-Message-Size ...
                if (self.out.len() - before) as u64 > self.peer_max_message_size {
                    self.out.truncate(before);
                    let why = format!("the response exceeds your Max-Message-Size ({})", self.peer_max_message_size);
                    write_frame(&mut self.out, Code::INTERNAL_SERVER_ERROR, f.token, &[], why.as_bytes());
                }
            }
            c if c.is_response() => {
                let key = token_key(f.token);
                let id = if f.token.is_empty() {
                    self.pending_empty.pop_front().map(|(id, _)| id)
                } else {
                    self.pending.remove(&key).map(|(id, _)| id)
                };
                let observed = if f.token.is_empty() { None } else { self.observations.get(&key).copied() };
                // the last of an observation: not a success, or without Observe
                if observed.is_some() && (c.class() != 2 || f.options.get(registry::OBSERVE).is_none()) {
                    self.observations.remove(&key);
                }
                let options = || f.options.iter().map(|o| (o.number, o.value.to_vec())).collect();
                if let Some(id) = id {
                    self.events.push_back(StreamEvent::Response {
                        id,
                        code: c,
                        options: options(),
                        payload: f.payload.to_vec(),
                    });
                } else if let Some(id) = observed {
                    let payload = f.payload.to_vec();
                    self.events.push_back(StreamEvent::Notification { id, code: c, options: options(), payload });
                }
            }
            _ => {} // an empty frame (keep-alive) or an unknown signaling code: ignored
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NotFound;

    fn pair() -> (StreamConnection<u8>, StreamConnection<u8>) {
        (StreamConnection::new(1, 1152, None), StreamConnection::new(2, 1152, Some(Box::new(NotFound))))
    }

    fn shuttle(a: &mut StreamConnection<u8>, b: &mut StreamConnection<u8>) {
        for _ in 0..4 {
            let x = a.take_output();
            b.handle_bytes(Instant::ZERO, &x);
            let y = b.take_output();
            a.handle_bytes(Instant::ZERO, &y);
        }
    }

    /// Answers every request with 2.05, Observe 5 and `len` bytes.
    #[derive(Debug)]
    struct Big(usize);

    impl Handler<u8> for Big {
        fn handle(&mut self, _: Instant, _: &u8, _: RequestId, _: &coap_wire::Message<'_>) -> Reply {
            let mut r = Response::new(Code::CONTENT, vec![b'x'; self.0]);
            r.options.push((registry::OBSERVE, vec![5]));
            Reply::Now(r)
        }
    }

    /// The code, options and payload length of the answer to `req` from a server answering
    /// with `Big(len)`, the client's Max-Message-Size being `client_max`.
    fn answer(client_max: u64, len: usize, req: &Request) -> (Code, Vec<u16>, usize) {
        let mut c = StreamConnection::new(1u8, client_max, None);
        let mut s = StreamConnection::new(2u8, 1152, Some(Box::new(Big(len)) as Box<dyn Handler<u8>>));
        // the client's CSM first (the server must know its Max-Message-Size), then the request
        s.handle_bytes(Instant::ZERO, &c.take_output());
        c.handle_bytes(Instant::ZERO, &s.take_output());
        c.request(Instant::ZERO, req).unwrap();
        shuttle(&mut c, &mut s);
        loop {
            match c.poll_event() {
                Some(StreamEvent::Response { code, options, payload, .. }) => {
                    return (code, options.iter().map(|o| o.0).collect(), payload.len())
                }
                Some(_) => {}
                None => panic!("no answer"),
            }
        }
    }

    #[test]
    fn what_streams_do_not_serve_is_refused_or_said() {
        // a plain GET: 2.05 with its 100 bytes, without the Observe the handler added (not a
        // registration: the client learns it is not an observer)
        assert_eq!(answer(1152, 100, &Request::get("a")), (Code::CONTENT, vec![], 100));
        // Block2 and Block1 (critical) are not served over streams: 4.02, as is an unknown
        // critical option (9) and a Uri-Path longer than 255 bytes
        let with = |n: u16, v: Vec<u8>| {
            let mut r = Request::get("a");
            r.options.push((n, v));
            r
        };
        for req in [with(registry::BLOCK2, vec![0x02]), with(registry::BLOCK1, vec![0x08]), with(9, vec![1])] {
            assert_eq!(answer(1152, 100, &req).0, Code::BAD_OPTION, "{req:?}");
        }
        assert_eq!(answer(1152, 100, &Request::get(&"p".repeat(256))).0, Code::BAD_OPTION);
        // a client that takes at most 200-byte messages: 150 bytes of payload fit, 300 do not
        // (5.00 with the reason instead of a message it would refuse)
        assert_eq!(answer(200, 150, &Request::get("a")).0, Code::CONTENT);
        let (code, _, len) = answer(200, 300, &Request::get("a"));
        assert_eq!(code, Code::INTERNAL_SERVER_ERROR);
        assert!(len > 0 && len < 200);
    }

    /// Answers with the request's body (POST), or with `len` bytes.
    struct EchoOr(usize);

    impl Handler<u8> for EchoOr {
        fn handle(&mut self, _: Instant, _: &u8, _: RequestId, req: &coap_wire::Message<'_>) -> Reply {
            let body = if req.code == Code::POST { req.payload.to_vec() } else { vec![b'y'; self.0] };
            Reply::Now(Response::new(Code::CONTENT, body))
        }
    }

    #[test]
    fn block_wise_transfers_both_ways_with_a_blockwise_handler() {
        let inner = crate::Blockwise::new(EchoOr(2500), crate::BlockLimits::default());
        let mut s = StreamConnection::new(2u8, 1152, Some(Box::new(inner) as Box<dyn Handler<u8>>)).with_blockwise();
        let mut c = StreamConnection::new(1u8, 1152, None);
        let mut run = |req: Request, block: Option<usize>| {
            let mut t = crate::Transfer::new(req, block, 1 << 20).unwrap();
            let mut next = t.first();
            for _ in 0..100 {
                c.request(Instant::ZERO, &next).unwrap();
                shuttle(&mut c, &mut s);
                let Some(StreamEvent::Response { code, options, payload, .. }) =
                    core::iter::from_fn(|| c.poll_event()).find(|e| matches!(e, StreamEvent::Response { .. }))
                else {
                    panic!("no answer")
                };
                match t.on_response(Response { code, options, payload }) {
                    crate::Step::Send(r) => next = r,
                    crate::Step::Done(r) => return r,
                    crate::Step::Failed(why) => panic!("{why}"),
                }
            }
            panic!("no end")
        };
        // 3,000 bytes up in 512-byte Block1 blocks, reassembled and echoed back in Block2 blocks
        let body: Vec<u8> = (0..3000u32).map(|i| i as u8).collect();
        let up = run(Request { code: Code::POST, payload: body.clone(), ..Request::get("e") }, Some(512));
        assert_eq!((up.code, up.payload), (Code::CONTENT, body));
        // a 2,500-byte answer to a plain GET comes in the server's 1,024-byte blocks
        let down = run(Request::get("d"), None);
        assert_eq!(down.payload, vec![b'y'; 2500]);
    }

    /// Answers GET with 2.05 "v", and with Observe 9 when asked to register.
    struct Observable;

    impl Handler<u8> for Observable {
        fn handle(&mut self, _: Instant, _: &u8, _: RequestId, req: &coap_wire::Message<'_>) -> Reply {
            let mut r = Response::new(Code::CONTENT, b"v".to_vec());
            if req.options.get(registry::OBSERVE).is_some() {
                r.options.push((registry::OBSERVE, vec![9]));
            }
            Reply::Now(r)
        }
    }

    fn observe_of(options: &[(u16, Vec<u8>)]) -> Option<u32> {
        options.iter().find(|o| o.0 == registry::OBSERVE).and_then(|o| crate::observe::value(&o.1))
    }

    #[test]
    fn observe_over_a_stream_registers_notifies_in_order_and_ends() {
        let mut s = StreamConnection::new(2u8, 1152, Some(Box::new(Observable) as Box<dyn Handler<u8>>));
        let mut c = StreamConnection::new(1u8, 1152, None);
        let events = |c: &mut StreamConnection<u8>| core::iter::from_fn(|| c.poll_event()).collect::<Vec<_>>();
        let id = c.observe(Instant::ZERO, &Request::get("a/b")).unwrap();
        shuttle(&mut c, &mut s);
        // the registration's answer carries the connection's first Observe number
        let first = events(&mut c);
        let Some(StreamEvent::Response { id: rid, options, .. }) =
            first.iter().find(|e| matches!(e, StreamEvent::Response { .. }))
        else {
            panic!("{first:?}")
        };
        assert_eq!((*rid, observe_of(options)), (id, Some(1)));
        assert_eq!(s.observation_count(), 1);
        // three changes of a/b (and one of another path) arrive in order, as notifications of `id`
        for _ in 0..3 {
            assert_eq!(s.notify(Instant::ZERO, "a/b", &Response::new(Code::CONTENT, b"w".to_vec())), 1);
        }
        assert_eq!(s.notify(Instant::ZERO, "other", &Response::new(Code::CONTENT, Vec::new())), 0);
        shuttle(&mut c, &mut s);
        let seqs: Vec<Option<u32>> = events(&mut c)
            .iter()
            .map(|e| match e {
                StreamEvent::Notification { id: n, options, .. } if *n == id => observe_of(options),
                e => panic!("{e:?}"),
            })
            .collect();
        assert_eq!(seqs, vec![Some(2), Some(3), Some(4)]);
        // a 4.04 is the last: without Observe, and both sides forget the observation
        s.notify(Instant::ZERO, "a/b", &Response::new(Code::NOT_FOUND, Vec::new()));
        shuttle(&mut c, &mut s);
        let last = events(&mut c);
        assert!(
            matches!(&last[..], [StreamEvent::Notification { code: Code::NOT_FOUND, options, .. }] if options.is_empty())
        );
        assert_eq!((s.observation_count(), c.observation_count()), (0, 0));
        // a GET with Observe 1 and the token deregisters
        c.observe(Instant::ZERO, &Request::get("a/b")).unwrap();
        shuttle(&mut c, &mut s);
        assert_eq!(s.observation_count(), 1);
        events(&mut c);
        let mut key = [0u8; 8];
        key[..4].copy_from_slice(&(c.next_token as u32).to_be_bytes());
        let bye = [
            CoapOption { number: registry::OBSERVE, value: &[1] },
            CoapOption { number: registry::URI_PATH, value: b"a" },
        ];
        write_frame(&mut c.out, Code::GET, &key[..4], &bye, &[]);
        shuttle(&mut c, &mut s);
        assert_eq!(s.observation_count(), 0);
        // at most MAX_STREAM_OBSERVERS per connection: the next registration is answered
        // without Observe
        for _ in 0..MAX_STREAM_OBSERVERS + 1 {
            c.request(Instant::ZERO, &Request { options: vec![(registry::OBSERVE, vec![])], ..Request::get("x") });
        }
        shuttle(&mut c, &mut s);
        let answers = events(&mut c);
        let observed = answers
            .iter()
            .filter(|e| matches!(e, StreamEvent::Response { options, .. } if observe_of(options).is_some()));
        assert_eq!((observed.count(), s.observation_count()), (MAX_STREAM_OBSERVERS, MAX_STREAM_OBSERVERS));
    }

    #[test]
    fn csm_then_requests_matched_by_token_even_byte_by_byte() {
        let (mut c, mut s) = pair();
        let id1 = c.request(Instant::ZERO, &Request::get("a")).unwrap();
        let id2 = c.request(Instant::ZERO, &Request::get("b")).unwrap();
        // deliver the client's bytes one at a time: frames are reassembled
        for b in c.take_output() {
            s.handle_bytes(Instant::ZERO, &[b]);
        }
        let back = s.take_output();
        c.handle_bytes(Instant::ZERO, &back);
        assert_eq!(c.poll_event(), Some(StreamEvent::Ready { max_message_size: 1152 }));
        assert_eq!(
            c.poll_event(),
            Some(StreamEvent::Response { id: id1, code: Code::NOT_FOUND, options: vec![], payload: vec![] })
        );
        assert_eq!(
            c.poll_event(),
            Some(StreamEvent::Response { id: id2, code: Code::NOT_FOUND, options: vec![], payload: vec![] })
        );
        assert_eq!(c.outstanding(), 0);
    }

    #[test]
    fn empty_tokens_are_matched_in_order_and_other_lengths_by_value() {
        for len in [0, 1, 8] {
            let (c, mut s) = pair();
            let mut c = c.with_token_len(len);
            let ids = [
                c.request(Instant::ZERO, &Request::get("a")).unwrap(),
                c.request(Instant::ZERO, &Request::get("b")).unwrap(),
            ];
            let out = c.take_output();
            // CSM (3 bytes: Len/TKL, code, Max-Message-Size 1152 in 2 bytes after its header)
            // then a GET: Len/TKL, code, token, Uri-Path "a" (2 bytes)
            let (csm, n) = Frame::decode(&out, 1152).unwrap();
            assert_eq!(csm.code, Code::CSM);
            let (get, _) = Frame::decode(&out[n..], 1152).unwrap();
            assert_eq!(get.token.len(), len);
            s.handle_bytes(Instant::ZERO, &out);
            c.handle_bytes(Instant::ZERO, &s.take_output());
            let got: Vec<u64> = std::iter::from_fn(|| c.poll_event())
                .filter_map(|e| match e {
                    StreamEvent::Response { id, .. } => Some(id),
                    _ => None,
                })
                .collect();
            assert_eq!(got, ids, "token length {len}");
            assert_eq!(c.outstanding(), 0);
        }
    }

    #[test]
    fn ping_pong_and_release() {
        let (mut c, mut s) = pair();
        shuttle(&mut c, &mut s);
        c.ping();
        shuttle(&mut c, &mut s);
        assert!(std::iter::from_fn(|| c.poll_event()).any(|e| e == StreamEvent::Pong));
        c.release();
        shuttle(&mut c, &mut s);
        assert!(s.is_closed());
        assert!(std::iter::from_fn(|| s.poll_event()).any(|e| e == StreamEvent::Closed(CloseReason::Released)));
    }

    fn t(ms: u64) -> Instant {
        Instant::from_nanos(ms * 1_000_000)
    }

    fn closed_with(c: &mut StreamConnection<u8>) -> Option<CloseReason> {
        std::iter::from_fn(|| c.poll_event()).find_map(|e| match e {
            StreamEvent::Closed(r) => Some(r),
            _ => None,
        })
    }

    const LIMITS: StreamLimits = StreamLimits {
        csm: Some(Duration::from_millis(1000)),
        frame: Some(Duration::from_millis(500)),
        idle: Some(Duration::from_millis(3000)),
        response: Some(Duration::from_millis(2000)),
    };

    #[test]
    fn a_complete_frame_that_does_not_decode_aborts_and_nothing_after_it_is_kept() {
        // the 4 bytes `20 01 77 00`: Len 2, GET, an option of length 7 with 1 byte left in the frame
        let mut s = StreamConnection::<u8>::new(2, 1152, Some(Box::new(NotFound)));
        let _ = s.take_output();
        s.handle_bytes(Instant::ZERO, &[0x00, 0xE1]); // the peer's CSM
        s.handle_bytes(Instant::ZERO, &[0x20, 0x01, 0x77, 0x00]);
        assert!(s.is_closed());
        assert!(matches!(closed_with(&mut s), Some(CloseReason::Aborted(d)) if d.contains("malformed")));
        for _ in 0..100 {
            s.handle_bytes(Instant::ZERO, &[0u8; 4096]);
        }
        assert_eq!(s.buffered(), 0);
    }

    #[test]
    fn deadlines_close_stuck_connections() {
        // no CSM: Abort at 1000 ms, not before
        let mut s = StreamConnection::<u8>::new(2, 1152, None).with_limits(t(0), LIMITS);
        assert_eq!(s.poll_timeout(), Some(t(1000)));
        s.handle_timeout(t(999));
        assert!(!s.is_closed());
        s.handle_timeout(t(1000));
        assert_eq!(closed_with(&mut s), Some(CloseReason::TimedOut(Deadline::Csm)));
        assert_eq!(s.poll_timeout(), None);
        // a frame begun at 200 ms, one more byte at 600 ms: still due at 200 + 500 = 700 ms
        let mut s = StreamConnection::<u8>::new(2, 1152, None).with_limits(t(0), LIMITS);
        s.handle_bytes(t(100), &[0x00, 0xE1]);
        s.handle_bytes(t(200), &[0x30]);
        s.handle_bytes(t(600), &[0x01]);
        assert_eq!(s.poll_timeout(), Some(t(700)));
        s.handle_timeout(t(700));
        assert_eq!(closed_with(&mut s), Some(CloseReason::TimedOut(Deadline::Frame)));
        // a frame begun long after the CSM: not idle while it is in progress, so the idle limit
        // (3100 ms) does not apply and the frame limit (2900 + 500 ms) does
        let mut s = StreamConnection::<u8>::new(2, 1152, None).with_limits(t(0), LIMITS);
        s.handle_bytes(t(100), &[0x00, 0xE1]);
        s.handle_bytes(t(2900), &[0x31]);
        assert_eq!(s.poll_timeout(), Some(t(3400)));
        s.handle_timeout(t(3400));
        assert_eq!(closed_with(&mut s), Some(CloseReason::TimedOut(Deadline::Frame)));
        // idle: the last complete frame at 100 ms, released (7.04) at 3100 ms
        let mut s = StreamConnection::<u8>::new(2, 1152, None).with_limits(t(0), LIMITS);
        s.handle_bytes(t(100), &[0x00, 0xE1]);
        let _ = s.take_output();
        assert_eq!(s.poll_timeout(), Some(t(3100)));
        s.handle_timeout(t(3100));
        assert_eq!(closed_with(&mut s), Some(CloseReason::Idle));
        assert_eq!(Frame::decode(&s.take_output(), 1152).unwrap().0.code, Code::RELEASE);
        // a request sent at 400 ms and never answered: Abort at 2400 ms (idle does not apply meanwhile)
        let mut c = StreamConnection::<u8>::new(1, 1152, None).with_limits(t(0), LIMITS);
        c.handle_bytes(t(100), &[0x00, 0xE1]);
        c.request(t(400), &Request::get("a")).unwrap();
        assert_eq!(c.poll_timeout(), Some(t(2400)));
        c.handle_timeout(t(2400));
        assert_eq!(closed_with(&mut c), Some(CloseReason::TimedOut(Deadline::Response)));
    }

    #[test]
    fn no_limits_no_deadline() {
        let (mut c, _) = pair();
        c.request(Instant::ZERO, &Request::get("a")).unwrap();
        assert_eq!(c.poll_timeout(), None);
        c.handle_timeout(Instant::from_nanos(u64::MAX));
        assert!(!c.is_closed());
    }

    #[test]
    fn bad_input_aborts() {
        // a first message that is not a CSM
        let mut s = StreamConnection::<u8>::new(2, 1152, Some(Box::new(NotFound)));
        let _ = s.take_output();
        s.handle_bytes(Instant::ZERO, &[0x01, 0x01, 0x07]); // GET with token 7, no CSM before
        let out = s.take_output();
        let (f, _) = Frame::decode(&out, u64::MAX).unwrap();
        assert_eq!(f.code, Code::ABORT);
        assert!(s.is_closed());
        // a frame announcing more than our Max-Message-Size
        let mut s = StreamConnection::<u8>::new(2, 1152, None);
        let _ = s.take_output();
        s.handle_bytes(Instant::ZERO, &[0xF0, 0x00, 0x10, 0x00, 0x00]);
        let out = s.take_output();
        let (f, _) = Frame::decode(&out, u64::MAX).unwrap();
        assert_eq!(f.code, Code::ABORT);
        assert!(String::from_utf8_lossy(f.payload).contains("exceeds Max-Message-Size"));
        // garbage: reserved token length
        let mut s = StreamConnection::<u8>::new(2, 1152, None);
        let _ = s.take_output();
        s.handle_bytes(Instant::ZERO, &[0x0F, 0xFF]);
        assert_eq!(Frame::decode(&s.take_output(), u64::MAX).unwrap().0.code, Code::ABORT);
        // an unknown critical CSM option (9): Abort with Bad-CSM-Option 9
        let mut s = StreamConnection::<u8>::new(2, 1152, None);
        let _ = s.take_output();
        s.handle_bytes(Instant::ZERO, &[0x10, 0xE1, 0x90]);
        let out = s.take_output();
        let (f, _) = Frame::decode(&out, u64::MAX).unwrap();
        assert_eq!(f.code, Code::ABORT);
        assert_eq!(f.options.get(registry::ABORT_BAD_CSM_OPTION), Some(&[9u8][..]));
    }
}
