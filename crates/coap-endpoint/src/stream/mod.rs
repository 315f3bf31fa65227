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
mod tests;
