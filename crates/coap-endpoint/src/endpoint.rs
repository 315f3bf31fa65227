//! The endpoint: client exchanges and server replies over one local address.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use coap_cc::{Completion, Controller, Duration, Echo, ExchangeTimer, Instant, Marking, Start};
use coap_wire::{decode_uint, encode_uint, registry, CoapOption, Code, Message, MessageType, Options};
use litemap::LiteMap;
use rand_core::RngCore;
use smallvec::SmallVec;

use crate::amplification::{self, Guard};
use crate::config::{Config, ConfigError, GiveUp};
use crate::dedup::{Cached, Dedup};
use crate::finished::{Tombstone, Tombstones};
use crate::keys::{Keyed, Keys};
use crate::observe::{self, Observation, Observer};
use crate::report::{ExchangeId, ExchangeReport, FailReason, Outcome, PerTransmission};
use crate::server::{Handler, NotFound, Reply, RequestId, Response};
use crate::token::Token;
use crate::{PreparedRequest, Request};

/// Transmissions an exchange can have: the original and up to MAX_RETRANSMIT_LIMIT more.
const MAX_TX: usize = coap_cc::MAX_RETRANSMIT_LIMIT as usize + 1;
/// The request options a server that echoes transmission numbers answers under their echo
/// numbers (FASOR's and RTT-CoAP's).
const ECHOED: [u16; 2] = [registry::TRANSMISSION_NUMBER, registry::RTT_COAP_TRANSMISSION_COUNTER];
/// RFC 7252 §4.8 defaults for the server's own separate CON responses.
const SEPARATE_ACK_TIMEOUT: f64 = 2.0;
const SEPARATE_MAX_RETRANSMIT: u32 = 4;

/// A datagram to send: `len` bytes of the caller's buffer, to `dest`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub struct Transmit<A> {
    /// Where to.
    pub dest: A,
    /// How many bytes of the buffer.
    pub len: usize,
}

/// What the application learns.
#[derive(Debug, Clone, PartialEq)]
pub enum Event<A> {
    /// The response to an exchange.
    Response {
        /// The exchange.
        id: ExchangeId,
        /// Its code.
        code: Code,
        /// Its options in order (Block2, Echo, Content-Format, …), less the transmission-number
        /// echoes the endpoint consumes itself (so that a simulated response with only those, or
        /// none, allocates nothing here).
        options: Vec<(u16, Vec<u8>)>,
        /// Its payload.
        payload: Vec<u8>,
    },
    /// A notification of an observation (RFC 7641): a later response to the exchange that
    /// registered it, fresher than the ones before. `seq` is None for the last one (a response
    /// without Observe: an error, or the server's end of the observation).
    Notification {
        /// The exchange that registered the observation.
        id: ExchangeId,
        /// Its Observe sequence number.
        seq: Option<u32>,
        /// Its code.
        code: Code,
        /// Its options in order.
        options: Vec<(u16, Vec<u8>)>,
        /// Its payload.
        payload: Vec<u8>,
    },
    /// An exchange failed.
    Failed {
        /// The exchange.
        id: ExchangeId,
        /// Why.
        reason: FailReason,
    },
    /// An exchange's final record (see [`ExchangeReport`]); boxed, so that the queue of events
    /// stays small.
    Retired(Box<ExchangeReport<A>>),
    /// A request transmission was queued (only with [`Config::transmission_events`]).
    Transmission {
        /// The exchange.
        id: ExchangeId,
        /// 0 for the original, 1 for the first retransmission, ….
        number: u32,
        /// When.
        at: Instant,
        /// The RTO armed for it (None for a NON).
        rto: Option<Duration>,
    },
}

/// Why a request was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestError {
    /// Its encoding would exceed the configured maximum message size.
    TooLarge,
}

impl core::fmt::Display for RequestError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("request larger than the maximum message size")
    }
}
impl std::error::Error for RequestError {}

#[derive(Debug, Clone, Copy)]
enum Phase {
    /// A CON awaiting its ACK.
    Waiting { timer: ExchangeTimer, deadline: Instant },
    /// Empty ACK received; awaiting the separate response until `deadline` (EXCHANGE_LIFETIME
    /// after the first transmission: past it the token may be reused, and a server that never
    /// sends the response must not hold the exchange for ever).
    Acked { deadline: Instant },
    /// A NON awaiting its response.
    NonWaiting { deadline: Instant },
}

#[derive(Debug)]
struct Exchange<A> {
    dest: A,
    /// Shared and encoded once: a driver that sends the same request again and again (the
    /// simulator) clones an `Arc` per exchange, not the request's buffers, and a transmission
    /// writes only its header and token in front of the request's encoded options and payload.
    req: PreparedRequest,
    mid: u16,
    token: Token,
    phase: Phase,
    marking: Marking,
    confirmable: bool,
    /// Send times of its transmissions (at most [`MAX_TX`]), inline up to five.
    sent: PerTransmission<Instant>,
    /// The RTO armed after each (CON only).
    rtos: PerTransmission<Duration>,
    expired: u32,
    acked_at: Option<Instant>,
    responded_at: Option<Instant>,
    /// The keys it holds ([`crate::keys`]).
    marks: u8,
}

impl<A> Keyed<A> for Exchange<A> {
    fn key(&self) -> (&A, u16, Token) {
        (&self.dest, self.mid, self.token)
    }
    fn marks(&self) -> u8 {
        self.marks
    }
    fn set_marks(&mut self, marks: u8) {
        self.marks = marks;
    }
}

/// Does `received` name the exchange of `token` that has sent `n_sent` transmissions (with the
/// transmission number in front under token marking)?
pub(crate) fn token_matches(token_marked: bool, token: &[u8], n_sent: usize, received: &[u8]) -> bool {
    if token_marked {
        received.split_first().is_some_and(|(&n, rest)| (n as usize) < n_sent && rest == token)
    } else {
        received == token
    }
}

impl<A: Clone> Exchange<A> {
    fn report(&self, id: ExchangeId, outcome: Outcome) -> ExchangeReport<A> {
        // copied inline: no allocation unless there were more than five transmissions
        let rtos = if self.confirmable { self.rtos.clone() } else { PerTransmission::new() };
        ExchangeReport {
            id,
            dest: self.dest.clone(),
            sent: self.sent.clone(),
            rtos,
            expired: self.expired,
            acked_at: self.acked_at,
            responded_at: self.responded_at,
            outcome,
            duplicates: 0,
        }
    }

    fn token_matches(&self, received: &[u8]) -> bool {
        token_matches(matches!(self.marking, Marking::Token), self.token.as_slice(), self.sent.len(), received)
    }

    /// What is kept of it once finished: what matches a message to it.
    fn tombstone(&self, retire_at: Instant, answered: bool) -> Tombstone<'_, A> {
        Tombstone {
            retire_at,
            dest: self.dest.clone(),
            mid: self.mid,
            token: self.token.as_slice(),
            marked: matches!(self.marking, Marking::Token),
            answered,
            n_sent: self.sent.len(),
        }
    }

    fn echo(&self, msg: &Message<'_>) -> Echo {
        match self.marking {
            Marking::Token => msg.token.first().map_or(Echo::None, |&n| Echo::Number(n)),
            Marking::Option { number, .. } => msg
                .options
                .get(registry::echo_number(number))
                .and_then(decode_uint)
                .map_or(Echo::None, |v| Echo::Number(v.min(255) as u8)),
            Marking::None => Echo::None,
        }
    }
}

#[derive(Debug)]
struct Peer {
    cc: Box<dyn Controller>,
    outstanding: usize,
    /// Requests waiting for NSTART or pacing, oldest first: not exchanges yet (the exchange
    /// map holds only started ones, so a long queue costs nothing per event).
    queue: VecDeque<(ExchangeId, PreparedRequest)>,
    wake: Option<Instant>,
}

#[derive(Debug)]
enum Pending<A> {
    Request(ExchangeId),
    Empty {
        dest: A,
        ty: MessageType,
        mid: u16,
    },
    /// Encoded bytes `out[start..start + len]` of the endpoint's output arena.
    Bytes {
        dest: A,
        start: usize,
        len: usize,
    },
}

#[derive(Debug)]
struct Deferred<A> {
    peer: A,
    mid: u16,
    token: Token,
    con: bool,
    ack_deadline: Option<Instant>,
}

/// The shared reply sent last and its options and payload as encoded (see
/// [`Endpoint::queue_shared`]): a server answering one resource, or a deduplicated request's
/// retransmissions, encodes them once.
#[derive(Debug)]
struct ReplyWire {
    resp: Arc<Response>,
    tail: Vec<u8>,
}

/// Observe's state, made when first used (most endpoints never observe).
#[derive(Debug)]
struct ObserveState<A> {
    /// A server's observers.
    observers: Vec<Observer<A>>,
    /// A client's observations, by server and token.
    observations: LiteMap<(A, Token), Observation>,
    /// Exchanges that deregister an observation, and its token, which they go with (RFC 7641
    /// §3.6) instead of a new one.
    deregistering: LiteMap<ExchangeId, Token>,
}

#[derive(Debug)]
struct SeparateOut {
    bytes: Vec<u8>,
    deadline: Instant,
    rto: f64,
    retransmissions: u32,
}

/// What only a server uses: its handler, its requests' ids, the deduplication cache, the
/// answers its handler defers and its own separate CON responses. Made when the endpoint is
/// given a handler or first receives a request (with [`NotFound`]): a simulated client does
/// neither and keeps 8 bytes for it instead of 88.
struct ServerSide<A> {
    handler: Box<dyn Handler<A>>,
    next_request: u64,
    dedup: Dedup<A>,
    deferred: BTreeMap<RequestId, Deferred<A>>,
    separate: BTreeMap<(A, u16), SeparateOut>,
}

impl<A: Ord + Clone + core::hash::Hash> ServerSide<A> {
    fn new(handler: Box<dyn Handler<A>>, cfg: &Config) -> Box<Self> {
        Box::new(ServerSide {
            handler,
            next_request: 0,
            dedup: Dedup::new(cfg.dedup_bytes, cfg.dedup_hash_seed),
            deferred: BTreeMap::new(),
            separate: BTreeMap::new(),
        })
    }
}

/// The parts of an endpoint that few endpoints use, in one box made at the first use: 8 bytes in
/// each of a simulation's thousands of endpoints instead of 40.
#[derive(Debug)]
struct Rare<A>(Option<Box<RareParts<A>>>);

/// What [`Rare`] holds.
#[derive(Debug)]
struct RareParts<A> {
    /// The reports of the finished exchanges, index for index (empty with
    /// [`Config::report_at_finish`]).
    kept: VecDeque<Box<ExchangeReport<A>>>,
    /// Finished exchanges retired before their lifetime to stay within `Config::max_finished`.
    early_retirements: u64,
    /// The amplification limit's accounts, verified sources and Echo key (made at the first
    /// datagram of an endpoint that limits, or when given a source key).
    guard: Option<Box<Guard<A>>>,
    /// RFC 7641 Observe, both sides (None until used).
    obs: Option<Box<ObserveState<A>>>,
    /// The last shared reply's encoding (None until one is sent).
    reply_wire: Option<Box<ReplyWire>>,
}

impl<A> Rare<A> {
    /// The parts, made if they were not yet.
    fn parts(&mut self) -> &mut RareParts<A> {
        self.0.get_or_insert_with(|| {
            let kept = VecDeque::new();
            Box::new(RareParts { kept, early_retirements: 0, guard: None, obs: None, reply_wire: None })
        })
    }
    fn get(&self) -> Option<&RareParts<A>> {
        self.0.as_deref()
    }
    fn get_mut(&mut self) -> Option<&mut RareParts<A>> {
        self.0.as_deref_mut()
    }
    /// The Observe state, made if it was not yet.
    fn observe(&mut self) -> &mut ObserveState<A> {
        self.parts().obs.get_or_insert_with(|| {
            let (observers, observations, deregistering) = (Vec::new(), LiteMap::new(), LiteMap::new());
            Box::new(ObserveState { observers, observations, deregistering })
        })
    }
    fn obs(&self) -> Option<&ObserveState<A>> {
        self.get()?.obs.as_deref()
    }
    fn obs_mut(&mut self) -> Option<&mut ObserveState<A>> {
        self.get_mut()?.obs.as_deref_mut()
    }
    fn guard(&self) -> Option<&Guard<A>> {
        self.get()?.guard.as_deref()
    }
    fn guard_mut(&mut self) -> Option<&mut Guard<A>> {
        self.get_mut()?.guard.as_deref_mut()
    }
    fn reply_wire(&self) -> Option<&ReplyWire> {
        self.get()?.reply_wire.as_deref()
    }
    fn kept_mut(&mut self) -> Option<&mut VecDeque<Box<ExchangeReport<A>>>> {
        Some(&mut self.get_mut()?.kept)
    }
}

/// One CoAP endpoint (client and server) over one local address. `A` is the driver's address
/// type; `R` the seeded RNG it owns.
pub struct Endpoint<A, R> {
    /// Shared: the simulator's thousands of clients hold one.
    cfg: Arc<Config>,
    rng: R,
    /// The server side (None until the endpoint gets a handler or a request).
    srv: Option<Box<ServerSide<A>>>,
    next_mid: u16,
    next_id: u64,
    /// By destination, in a sorted vector (a client has one or a few: a B-tree's first node
    /// costs about ten times the entry).
    peers: LiteMap<A, Peer>,
    /// Exchanges not yet finished, inline (about 230 bytes each, with the send times and RTOs of
    /// up to five transmissions): the map moves them on insertion and removal, but an endpoint
    /// holds few, and a box would cost an allocation per exchange.
    ///
    /// A sorted vector ([`LiteMap`]): an endpoint holds few live exchanges (a simulated client:
    /// one), and a B-tree's first node costs several hundred bytes (the simulator holds
    /// thousands of endpoints). Ids grow, so most insertions append.
    exchanges: LiteMap<ExchangeId, Exchange<A>>,
    /// Finished exchanges, kept to count duplicate responses until they retire ([`Tombstones`]:
    /// what matches a message to one, 12 bytes; its report, unless it went out at once with
    /// [`Config::report_at_finish`], waits in [`RareParts::kept`]).
    finished: Tombstones<A>,
    duplicates: u64,
    /// Which live exchange a (peer, Message ID) or a (peer, token) names.
    keys: Keys<A>,
    pending: VecDeque<Pending<A>>,
    /// Arena of encoded replies waiting in `pending`; emptied whenever `pending` is.
    out: Vec<u8>,
    events: VecDeque<Event<A>>,
    /// With [`GiveUp::AtLastSend`]: the retransmission (MAX_RETRANSMIT) at which an exchange fails.
    give_up_at_retransmission: Option<u32>,
    /// What few endpoints use.
    rare: Rare<A>,
}

impl<A: Ord + Clone + core::hash::Hash + core::fmt::Debug, R> core::fmt::Debug for Endpoint<A, R> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Endpoint")
            .field("cc", &self.cfg.cc.to_string())
            .field("exchanges", &self.exchanges.len())
            .field("dedup", &self.srv.as_ref().map_or(0, |s| s.dedup.len()))
            .finish_non_exhaustive()
    }
}

impl<A, R> Endpoint<A, R>
where
    A: Ord + Clone + core::hash::Hash + core::fmt::Debug + Send + 'static,
    R: RngCore,
{
    /// An endpoint answering 4.04 to every request (a pure client); see [`Endpoint::with_handler`].
    /// `cfg` may be shared (an `Arc<Config>`) by many endpoints.
    pub fn new(cfg: impl Into<Arc<Config>>, mut rng: R) -> Result<Self, ConfigError> {
        let cfg = cfg.into();
        cfg.validate()?;
        let give_up_at_retransmission = match cfg.give_up {
            GiveUp::AfterLastTimer => None,
            GiveUp::AtLastSend => Some(
                cfg.cc
                    .get("max_retransmit")
                    .and_then(|v| v.parse().ok())
                    .ok_or(ConfigError("give_up = at_last_send needs an algorithm with max_retransmit"))?,
            ),
        };
        let next_mid = rng.next_u32() as u16;
        Ok(Endpoint {
            give_up_at_retransmission,
            rare: Rare(None),
            srv: None,
            cfg,
            rng,
            next_mid,
            next_id: 0,
            peers: LiteMap::new(),
            exchanges: LiteMap::new(),
            finished: Tombstones::default(),
            duplicates: 0,
            keys: Keys::default(),
            pending: VecDeque::new(),
            out: Vec::new(),
            events: VecDeque::new(),
        })
    }

    /// Serves requests with `handler`.
    pub fn with_handler(mut self, handler: Box<dyn Handler<A>>) -> Self {
        match self.srv.as_deref_mut() {
            Some(s) => s.handler = handler,
            None => self.srv = Some(ServerSide::new(handler, &self.cfg)),
        }
        self
    }

    /// Keys the amplification limit's accounts and verified sources by `key(address)` instead
    /// of the address (see [`crate::amplification`]): the real-network drivers pass the IP
    /// address, so that a source's ports share one account.
    pub fn with_source_key(mut self, key: fn(&A) -> A) -> Self {
        self.guard().0.set_source_key(key);
        self
    }

    /// The amplification limit's state, made if it was not yet, and the configuration it reads.
    #[cold]
    #[inline(never)]
    fn guard(&mut self) -> (&mut Guard<A>, &Config) {
        let g = self.rare.parts().guard.get_or_insert_with(|| Box::new(Guard::new(amplification::same::<A>)));
        (g, &self.cfg)
    }

    /// Queues an empty ACK or RST; under the amplification limit it is counted (it answers a
    /// datagram at least as long, so it always goes).
    #[inline]
    fn queue_empty(&mut self, now: Instant, dest: A, ty: MessageType, mid: u16) {
        if self.cfg.amplification_factor.is_some() {
            self.amplification_sent(now, &dest, 4);
        }
        self.pending.push_back(Pending::Empty { dest, ty, mid });
    }

    /// `len` bytes sent to `dest` that always go, for the amplification limit.
    #[cold]
    #[inline(never)]
    fn amplification_sent(&mut self, now: Instant, dest: &A, len: usize) {
        let (g, cfg) = self.guard();
        g.charge(now, cfg, dest, len);
    }

    /// `len` bytes received from `from`, for the amplification limit.
    #[cold]
    #[inline(never)]
    fn amplification_received(&mut self, now: Instant, from: &A, len: usize) {
        let (g, cfg) = self.guard();
        g.received(now, cfg, from, len);
    }

    /// `from` acknowledged (ACK or RST) a CON we sent it: it receives what we send it, which
    /// verifies it for the amplification limit as an Echo would.
    fn acknowledged_by(&mut self, now: Instant, from: &A) {
        if self.cfg.amplification_factor.is_some() {
            let (g, cfg) = self.guard();
            g.verify(now, cfg, from);
        }
    }

    /// Whether the datagram just queued (the last of `pending`, encoded in `out`) may go to
    /// `peer` under the amplification limit: charged if so, else taken back and counted as
    /// withheld. `request_len`: the request it answers (0 if none).
    #[inline]
    fn admit_last(&mut self, now: Instant, peer: &A, request_len: usize) -> bool {
        self.cfg.amplification_factor.is_none() || self.admit_last_limited(now, peer, request_len)
    }

    #[cold]
    #[inline(never)]
    fn admit_last_limited(&mut self, now: Instant, peer: &A, request_len: usize) -> bool {
        let Some(&Pending::Bytes { start, len, .. }) = self.pending.back() else { return true };
        let (g, cfg) = self.guard();
        if g.admit(now, cfg, peer, len, request_len) {
            return true;
        }
        self.pending.pop_back();
        self.out.truncate(start);
        false
    }

    /// Queues 4.01 Unauthorized with a fresh Echo value (RFC 9175 §2.4) in place of a response
    /// that does not fit the amplification limit, if the challenge itself fits: it, or None.
    #[cold]
    #[inline(never)]
    fn queue_challenge(
        &mut self,
        now: Instant,
        dest: &A,
        (ty, mid): (MessageType, u16),
        token: &[u8],
        (request_len, echo_from): (usize, Option<&Message<'_>>),
    ) -> Option<Arc<Response>> {
        let echo = self.echo_value(dest, echo_second(now)).to_vec();
        let resp = Response { code: Code::UNAUTHORIZED, options: vec![(registry::ECHO, echo)], payload: Vec::new() };
        self.queue_response(dest, ty, mid, token, &resp, echo_from);
        if !self.admit_last(now, dest, request_len) {
            return None;
        }
        self.guard().0.challenges += 1;
        Some(Arc::new(resp))
    }

    /// The server side, made (serving [`NotFound`]) if it was not yet.
    fn server_side(&mut self) -> &mut ServerSide<A> {
        let cfg = &self.cfg;
        self.srv.get_or_insert_with(|| ServerSide::new(Box::new(NotFound), cfg))
    }

    /// Observes a resource (RFC 7641): `req` (a GET) goes with Observe 0; its response comes as
    /// [`Event::Response`] and, if the server added us as an observer (its response carries
    /// Observe), the later ones as [`Event::Notification`] with the same id.
    pub fn observe(&mut self, now: Instant, dest: A, mut req: Request) -> Result<ExchangeId, RequestError> {
        req.options.retain(|o| o.0 != registry::OBSERVE);
        req.options.push((registry::OBSERVE, Vec::new()));
        self.request(now, dest, req)
    }

    /// Stops following the observation exchange `id` registered: its later notifications are
    /// answered with RST, which makes the server forget us (RFC 7641 §3.6).
    pub fn cancel_observation(&mut self, id: ExchangeId) {
        if let Some(o) = self.rare.obs_mut() {
            for (_, ob) in o.observations.iter_mut() {
                if ob.id == id {
                    ob.cancelled = true;
                }
            }
        }
    }

    /// Deregisters the observation that exchange `id` registered (RFC 7641 §3.6): `req`, the
    /// registration's request, goes again with Observe 1 and the observation's token, and the
    /// observation is forgotten (a notification still in flight is answered with RST). Its
    /// response comes as [`Event::Response`] of the returned exchange. `None`: no such
    /// observation (it ended, or was never made).
    pub fn deregister(
        &mut self,
        now: Instant,
        id: ExchangeId,
        mut req: Request,
    ) -> Option<Result<ExchangeId, RequestError>> {
        let o = self.rare.obs_mut()?;
        let key = o.observations.iter().find(|(_, ob)| ob.id == id).map(|(k, _)| k.clone())?;
        o.observations.remove(&key);
        let (dest, token) = key;
        req.options.retain(|o| o.0 != registry::OBSERVE);
        req.options.push((registry::OBSERVE, observe::encode(1)));
        // the token is looked up when the exchange starts, which may be at once
        let next = ExchangeId(self.next_id);
        self.rare.observe().deregistering.insert(next, token);
        let r = self.request(now, dest, req);
        debug_assert!(r.as_ref().map_or(true, |&id| id == next));
        if let (Err(_), Some(o)) = (&r, self.rare.obs_mut()) {
            o.deregistering.remove(&next); // never queued
        }
        Some(r)
    }

    /// Observations this client follows (cancelled ones until they are forgotten).
    pub fn observation_count(&self) -> usize {
        self.rare.obs().map_or(0, |o| o.observations.len())
    }

    /// Observers this server has.
    pub fn observer_count(&self) -> usize {
        self.rare.obs().map_or(0, |o| o.observers.len())
    }

    /// Notifies every observer of `path` (Uri-Path segments joined by '/') of `resp`: each gets
    /// it with its next sequence number, as CON if `confirmable` or after
    /// [`observe::NON_MAX`] NON in a row, else as NON. A response that is not a success (2.xx)
    /// goes without Observe and ends the observations (RFC 7641 §4.2). Returns how many were
    /// notified.
    #[cold]
    #[inline(never)]
    pub fn notify(&mut self, now: Instant, path: &str, resp: &Response, confirmable: bool) -> usize {
        let Some(o) = self.rare.obs_mut() else { return 0 };
        let last = resp.code.class() != 2;
        let mut targets: Vec<(A, Token, u32, bool)> = Vec::new();
        for ob in o.observers.iter_mut().filter(|ob| ob.path == path) {
            ob.seq = (ob.seq + 1) % observe::SEQ_MODULUS;
            let con = confirmable || ob.non_in_a_row >= observe::NON_MAX;
            ob.non_in_a_row = if con { 0 } else { ob.non_in_a_row + 1 };
            targets.push((ob.peer.clone(), ob.token, ob.seq, con));
        }
        let n = targets.len();
        let mut stopped = Vec::new();
        for (peer, token, seq, con) in targets {
            let mut r = Response {
                code: resp.code,
                options: resp.options.iter().filter(|o| o.0 != registry::OBSERVE).cloned().collect(),
                payload: resp.payload.clone(),
            };
            if !last {
                r.options.push((registry::OBSERVE, observe::encode(seq)));
            }
            let mid = self.alloc_mid();
            let ty = if con { MessageType::Con } else { MessageType::Non };
            self.queue_response(&peer, ty, mid, token.as_slice(), &r, None);
            if !self.admit_last(now, &peer, 0) {
                // an unverified observer past the amplification limit: its observation ends
                stopped.push((peer, Ok(token)));
                continue;
            }
            if con {
                self.track_con(now, &peer, mid);
            }
            if let Some(ob) =
                self.rare.obs_mut().and_then(|o| o.observers.iter_mut().find(|ob| ob.peer == peer && ob.token == token))
            {
                ob.last_mid = Some(mid);
            }
        }
        if last {
            if let Some(o) = self.rare.obs_mut() {
                o.observers.retain(|ob| ob.path != path);
            }
        }
        if !stopped.is_empty() {
            self.drop_observers(&stopped);
        }
        n
    }

    /// Forgets the observers of the notifications `gone` names: (peer, the token of a CON
    /// notification of theirs) when one was reset or went unacknowledged, or (peer, the Message
    /// ID) of the last notification sent to them when a NON one was reset.
    #[cold]
    #[inline(never)]
    fn drop_observers(&mut self, gone: &[(A, Result<Token, u16>)]) {
        if let Some(o) = self.rare.obs_mut() {
            o.observers.retain(|ob| {
                !gone.iter().any(|(p, g)| {
                    *p == ob.peer
                        && match g {
                            Ok(token) => *token == ob.token,
                            Err(mid) => Some(*mid) == ob.last_mid,
                        }
                })
            });
        }
    }

    /// Retransmits the CON just queued (the last of `pending`) as RFC 7252 §4.2 says, until it is
    /// acknowledged (a separate response or a CON notification).
    #[cold]
    #[inline(never)]
    fn track_con(&mut self, now: Instant, peer: &A, mid: u16) {
        if let Some(&Pending::Bytes { start, len, .. }) = self.pending.back() {
            let bytes = self.out[start..start + len].to_vec();
            if self.server_side().separate.len() < self.cfg.max_deferred {
                let rto = coap_cc::rng::uniform(&mut self.rng, SEPARATE_ACK_TIMEOUT, SEPARATE_ACK_TIMEOUT * 1.5);
                let out = SeparateOut { bytes, deadline: now + Duration::from_secs_f64(rto), rto, retransmissions: 0 };
                self.server_side().separate.insert((peer.clone(), mid), out);
            }
        }
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// Deduplication entries held.
    pub fn dedup_len(&self) -> usize {
        self.srv.as_ref().map_or(0, |s| s.dedup.len())
    }

    /// Bytes the deduplication entries cost (at most [`Config::dedup_bytes`]).
    pub fn dedup_bytes(&self) -> usize {
        self.srv.as_ref().map_or(0, |s| s.dedup.bytes())
    }

    /// Deduplication entries evicted before their lifetime ended to stay within
    /// [`Config::dedup_bytes`]: a duplicate of one of them runs the handler again. Non-zero means
    /// the budget is too small for the request rate.
    pub fn dedup_early_evictions(&self) -> u64 {
        self.srv.as_ref().map_or(0, |s| s.dedup.early_evictions())
    }

    /// Finished exchanges retired before `exchange_lifetime` to stay within
    /// [`Config::max_finished`]: duplicates of their responses that came later were not counted.
    pub fn early_retirements(&self) -> u64 {
        self.rare.get().map_or(0, |r| r.early_retirements)
    }

    /// Exchanges held, finished ones awaiting retirement included.
    pub fn exchange_count(&self) -> usize {
        self.exchanges.len() + self.finished.len() + self.peers.values().map(|p| p.queue.len()).sum::<usize>()
    }

    /// Duplicate responses received so far (responses to exchanges already answered).
    pub fn duplicates_received(&self) -> u64 {
        self.duplicates
    }

    /// The controller of a destination, if one exists.
    pub fn controller(&self, dest: &A) -> Option<&dyn Controller> {
        self.peers.get(dest).map(|p| &*p.cc)
    }

    /// Forgets all congestion-control state of `dest`, as a new device would start (the
    /// reference workload's "random" clients between batches).
    pub fn reset_cc(&mut self, dest: &A) {
        if let Some(p) = self.peers.get_mut(dest) {
            p.cc.reset();
        }
    }

    /// Opens an exchange with `dest`. It starts now, or when NSTART and the controller allow.
    /// `req` is a [`Request`], an `Arc<Request>`, or a [`PreparedRequest`]: a driver that sends
    /// the same request many times prepares it once and passes clones, which share its encoding.
    pub fn request(
        &mut self,
        now: Instant,
        dest: A,
        req: impl Into<PreparedRequest>,
    ) -> Result<ExchangeId, RequestError> {
        let req = req.into();
        // header + token (with marking byte) + options + a marking option (≤ 4 bytes) + payload
        let body = req.options_len();
        let payload = if req.payload.is_empty() { 0 } else { 1 + req.payload.len() };
        if 4 + 1 + self.cfg.token_len + body + 4 + payload > self.cfg.max_message_size {
            return Err(RequestError::TooLarge);
        }
        let id = ExchangeId(self.next_id);
        self.next_id += 1;
        if self.peers.is_empty() {
            // A client's first request. Most endpoints talk to one destination and run one
            // exchange at a time: its maps and queues start with room for that (the default
            // first allocation is four entries, a third of a simulated client's memory).
            self.peers = LiteMap::with_capacity(1);
            if self.exchanges.is_empty() {
                self.exchanges = LiteMap::with_capacity(1);
            }
            self.pending.reserve_exact(1);
            self.events.reserve_exact(2); // a response, then its report
        }
        let cc = &self.cfg.cc;
        let peer = self.peers.entry(dest.clone()).or_insert_with(|| Peer {
            cc: cc.build(),
            outstanding: 0,
            queue: VecDeque::with_capacity(1),
            wake: None,
        });
        peer.queue.push_back((id, req));
        self.try_start(now, &dest);
        Ok(id)
    }

    fn alloc_mid(&mut self) -> u16 {
        self.next_mid = self.next_mid.wrapping_add(1);
        self.next_mid
    }

    fn alloc_token(&mut self, dest: &A) -> Token {
        let mut bytes = [0u8; 8];
        let len = self.cfg.token_len;
        if len == 0 {
            return Token::default(); // nothing drawn, nothing to compare
        }
        for _ in 0..4 {
            self.rng.fill_bytes(&mut bytes[..len]);
            let t = Token::new(&bytes[..len]);
            let taken =
                self.keys.by_token(&self.exchanges, dest, t).is_some() || self.finished.has_token(dest, t.as_slice());
            if !taken {
                return t;
            }
        }
        Token::new(&bytes[..len])
    }

    /// Starts queued exchanges of `dest` while NSTART and the controller's pacing allow.
    fn try_start(&mut self, now: Instant, dest: &A) {
        loop {
            let Some(peer) = self.peers.get_mut(dest) else { return };
            if peer.outstanding >= peer.cc.nstart() {
                return;
            }
            let Some((_, req)) = peer.queue.front() else {
                peer.wake = None;
                return;
            };
            let at = peer.cc.earliest_start(now, req.confirmable);
            if at > now {
                peer.wake = Some(at);
                return;
            }
            let Some((id, req)) = peer.queue.pop_front() else { return };
            peer.wake = None;
            let start = Start { outstanding: peer.outstanding, confirmable: req.confirmable };
            let timer = peer.cc.start(now, start, &mut self.rng);
            peer.outstanding += 1;
            let mid = self.alloc_mid();
            // a deregistration goes with its observation's token
            let token = match self.rare.obs_mut().and_then(|o| o.deregistering.remove(&id)) {
                Some(t) => t,
                None => self.alloc_token(dest),
            };
            let non_lifetime = self.cfg.non_lifetime;
            let confirmable = timer.confirmable();
            let mut rtos = SmallVec::new();
            let phase = if confirmable {
                rtos.push(timer.rto());
                Phase::Waiting { timer, deadline: now + timer.rto() }
            } else {
                Phase::NonWaiting { deadline: now + non_lifetime }
            };
            let mut sent = SmallVec::new();
            sent.push(now);
            let ex = Exchange {
                dest: dest.clone(),
                req,
                mid,
                token,
                phase,
                marking: timer.marking(),
                confirmable,
                sent,
                rtos,
                expired: 0,
                acked_at: None,
                responded_at: None,
                marks: 0,
            };
            let rto = confirmable.then(|| timer.rto());
            self.exchanges.insert(id, ex);
            self.keys.insert(&mut self.exchanges, id);
            self.pending.push_back(Pending::Request(id));
            if self.cfg.transmission_events {
                self.events.push_back(Event::Transmission { id, number: 0, at: now, rto });
            }
        }
    }

    /// Ends an exchange with `outcome`; `outstanding` says whether it still counted for NSTART.
    fn finish(&mut self, now: Instant, id: ExchangeId, outcome: Outcome, answer: Answer, outstanding: bool) {
        let retire_at = now + self.cfg.exchange_lifetime;
        let Some(ex) = self.exchanges.remove(&id) else { return };
        self.keys.remove(&self.exchanges, id, &ex);
        let report = Box::new(ex.report(id, outcome));
        let now_report = if self.cfg.report_at_finish {
            Some(report)
        } else {
            self.rare.parts().kept.push_back(report);
            None
        };
        self.finished.push(ex.tombstone(retire_at, matches!(outcome, Outcome::Response(_))));
        while self.finished.len() > self.cfg.max_finished {
            self.retire_oldest();
            self.rare.parts().early_retirements += 1;
        }
        if let Outcome::Response(_) = outcome {
            self.maybe_observe(now, id, &ex, &answer);
        }
        self.events.push_back(match outcome {
            Outcome::Response(code) => Event::Response { id, code, options: answer.0, payload: answer.1 },
            Outcome::Failed(reason) => Event::Failed { id, reason },
        });
        if let Some(r) = now_report {
            self.events.push_back(Event::Retired(r));
        }
        if outstanding {
            if let Some(p) = self.peers.get_mut(&ex.dest) {
                p.outstanding = p.outstanding.saturating_sub(1);
            }
        }
        self.try_start(now, &ex.dest);
    }

    /// Retires the oldest finished exchange, emitting its report if it kept it.
    fn retire_oldest(&mut self) {
        self.finished.pop_front();
        if let Some(r) = self.rare.kept_mut().and_then(VecDeque::pop_front) {
            self.events.push_back(Event::Retired(r));
        }
    }

    /// Counts a response to finished exchange `i` that arrived after the first one.
    fn duplicate_of(&mut self, i: usize) {
        if self.finished.answered(i) {
            self.duplicates += 1;
            if let Some(r) = self.rare.kept_mut().and_then(|k| k.get_mut(i)) {
                r.duplicates += 1;
            }
        }
    }

    /// Retires every finished exchange now (at the end of a run), emitting their reports.
    pub fn retire_all(&mut self) {
        while !self.finished.is_empty() {
            self.retire_oldest();
        }
    }

    /// Lazy housekeeping, done on every call that passes time in: expired deduplication entries
    /// go, and finished exchanges retire. It sets no deadline of its own (a simulator would
    /// otherwise wake once per request just to forget it); the cache's size bound holds anyway.
    fn housekeeping(&mut self, now: Instant) {
        if let Some(s) = self.srv.as_deref_mut() {
            s.dedup.expire(now);
        }
        while self.finished.front_retire_at().is_some_and(|t| t <= now) {
            self.retire_oldest();
        }
    }

    /// Processes one received datagram. Malformed input never fails the endpoint: a CON is
    /// rejected with RST, anything else is silently dropped (RFC 7252 §4.2, §4.3).
    pub fn handle_datagram(&mut self, now: Instant, from: A, bytes: &[u8]) {
        self.housekeeping(now);
        if self.cfg.amplification_factor.is_some() {
            self.amplification_received(now, &from, bytes.len());
        }
        let msg = match Message::decode(bytes).and_then(|m| m.check_semantics().map(|()| m)) {
            Ok(m) => m,
            Err(_) => {
                if let Some((MessageType::Con, mid)) = Message::peek_header(bytes) {
                    self.queue_empty(now, from, MessageType::Rst, mid);
                }
                return;
            }
        };
        match msg.ty {
            MessageType::Rst => self.on_reset(now, from, msg.message_id),
            MessageType::Ack => self.on_ack(now, from, &msg),
            MessageType::Con if msg.code.is_empty() => {
                // a "CoAP ping" (RFC 7252 §4.3): answered with RST
                self.queue_empty(now, from, MessageType::Rst, msg.message_id);
            }
            _ if msg.code.is_request() => self.on_request(now, from, &msg, bytes.len()),
            _ => self.on_separate_response(now, from, &msg),
        }
    }

    #[cold]
    #[inline(never)]
    fn on_reset(&mut self, now: Instant, from: A, mid: u16) {
        let con = self.srv.as_deref_mut().and_then(|s| s.separate.remove(&(from.clone(), mid)));
        if con.is_some() {
            self.acknowledged_by(now, &from);
        }
        if self.rare.obs().is_some() {
            let which = con.map_or(Err(mid), |c| Ok(token_of(&c.bytes)));
            self.drop_observers(&[(from.clone(), which)]);
        }
        let Some(id) = self.keys.by_mid(&self.exchanges, &from, mid) else { return };
        let Some(ex) = self.exchanges.get(&id) else { return }; // finished ones ignore RST
        let outstanding = match ex.phase {
            Phase::Waiting { timer, .. } => {
                if let Some(p) = self.peers.get_mut(&from) {
                    p.cc.on_failure(now, &timer);
                }
                true
            }
            Phase::NonWaiting { .. } => true,
            Phase::Acked { .. } => false,
        };
        self.finish(now, id, Outcome::Failed(FailReason::Reset), Answer::default(), outstanding);
    }

    fn on_ack(&mut self, now: Instant, from: A, msg: &Message<'_>) {
        let Some(id) = self.keys.by_mid(&self.exchanges, &from, msg.message_id) else {
            if let Some(i) = self.finished.find_by_mid(&from, msg.message_id) {
                if !msg.code.is_empty() {
                    self.duplicate_of(i);
                }
                return;
            }
            // the ACK of one of our separate responses (or CON notifications): the source
            // receives what we send it
            let ours = self.srv.as_deref_mut().and_then(|s| s.separate.remove(&(from.clone(), msg.message_id)));
            if ours.is_some() {
                self.acknowledged_by(now, &from);
            }
            return;
        };
        let Some(ex) = self.exchanges.get_mut(&id) else { return };
        match ex.phase {
            Phase::Waiting { timer, .. } => {
                if !msg.code.is_empty() && !ex.token_matches(msg.token) {
                    return; // not a response to this request: ignore
                }
                ex.acked_at = Some(now);
                let piggybacked = !msg.code.is_empty();
                let done = Completion { sent: &ex.sent, echo: ex.echo(msg), piggybacked };
                if let Some(p) = self.peers.get_mut(&from) {
                    p.cc.on_complete(now, &timer, &done);
                }
                if piggybacked {
                    ex.responded_at = Some(now);
                    self.finish(now, id, Outcome::Response(msg.code), answer(msg, self.cfg.response_payloads), true);
                } else {
                    ex.phase = Phase::Acked { deadline: ex.sent[0] + self.cfg.exchange_lifetime };
                    if let Some(p) = self.peers.get_mut(&from) {
                        p.outstanding = p.outstanding.saturating_sub(1);
                    }
                    self.try_start(now, &from);
                }
            }
            Phase::Acked { .. } | Phase::NonWaiting { .. } => {}
        }
    }

    /// A request with Observe 0 whose response carries Observe: an observation to follow (room
    /// allowing: a cancelled one gives way first).
    fn maybe_observe(&mut self, now: Instant, id: ExchangeId, ex: &Exchange<A>, answer: &Answer) {
        let asked = ex.req.options.iter().any(|o| o.0 == registry::OBSERVE && observe::value(&o.1) == Some(0));
        let Some(seq) = answer.0.iter().find(|o| o.0 == registry::OBSERVE).and_then(|o| observe::value(&o.1)) else {
            return;
        };
        if !asked {
            return;
        }
        let max = self.cfg.max_observations;
        let o = self.rare.observe();
        if o.observations.len() >= max {
            let Some(k) = o.observations.iter().find(|(_, v)| v.cancelled).map(|(k, _)| k.clone()) else { return };
            o.observations.remove(&k);
        }
        o.observations.insert((ex.dest.clone(), ex.token), Observation { id, seq, at: now, cancelled: false });
    }

    /// A response for one of our observations (true), handled; false if it is not one.
    #[cold]
    #[inline(never)]
    fn on_notification(&mut self, now: Instant, from: &A, msg: &Message<'_>) -> bool {
        let Some(o) = self.rare.obs_mut() else { return false };
        let key = (from.clone(), Token::new(msg.token));
        let Some(ob) = o.observations.get_mut(&key) else { return false };
        if ob.cancelled {
            self.pending.push_back(Pending::Empty { dest: from.clone(), ty: MessageType::Rst, mid: msg.message_id });
            return true;
        }
        if msg.ty == MessageType::Con {
            self.pending.push_back(Pending::Empty { dest: from.clone(), ty: MessageType::Ack, mid: msg.message_id });
        }
        let id = ob.id;
        let seq = msg.options.get(registry::OBSERVE).and_then(observe::value);
        match seq {
            Some(v) if !observe::is_fresh(ob.seq, ob.at, v, now) => return true, // stale: dropped
            Some(v) => {
                ob.seq = v;
                ob.at = now;
            }
            None => {
                o.observations.remove(&key); // the last one
            }
        }
        let (options, payload) = answer(msg, self.cfg.response_payloads);
        self.events.push_back(Event::Notification { id, seq, code: msg.code, options, payload });
        true
    }

    #[inline(never)]
    fn on_separate_response(&mut self, now: Instant, from: A, msg: &Message<'_>) {
        let lookup = |t: &[u8]| self.keys.by_token(&self.exchanges, &from, Token::new(t));
        let id = lookup(msg.token).or_else(|| msg.token.split_first().and_then(|(_, rest)| lookup(rest)));
        let live = id.filter(|id| self.exchanges.get(id).is_some_and(|ex| ex.token_matches(msg.token)));
        // a live exchange's response first (an endpoint with empty tokens may observe and ask
        // at once), then a notification
        if live.is_none() && self.rare.obs().is_some() && self.on_notification(now, &from, msg) {
            return;
        }
        let done = match live {
            Some(_) => None,
            None => self.finished.find_by_token(&from, msg.token),
        };
        if msg.ty == MessageType::Con {
            let known = live.is_some() || done.is_some();
            let ty = if known { MessageType::Ack } else { MessageType::Rst };
            self.pending.push_back(Pending::Empty { dest: from.clone(), ty, mid: msg.message_id });
        }
        if let Some(i) = done {
            self.duplicate_of(i);
            return;
        }
        let Some(id) = live else { return };
        let Some(ex) = self.exchanges.get_mut(&id) else { return };
        let outstanding = match ex.phase {
            Phase::Waiting { timer, .. } => {
                // the response arrived before (or instead of) the empty ACK: it acknowledges too
                ex.acked_at = Some(now);
                let done = Completion { sent: &ex.sent, echo: Echo::None, piggybacked: false };
                if let Some(p) = self.peers.get_mut(&from) {
                    p.cc.on_complete(now, &timer, &done);
                }
                true
            }
            Phase::NonWaiting { .. } => true,
            Phase::Acked { .. } => false,
        };
        ex.responded_at = Some(now);
        self.finish(now, id, Outcome::Response(msg.code), answer(msg, self.cfg.response_payloads), outstanding);
    }

    /// The Echo value for `peer` at time second `secs`: the second (4 bytes) and a keyed hash of
    /// the peer and the second (8 bytes). Not a cryptographic MAC (SipHash keyed by prefixing a
    /// random secret): it proves an address can receive, against off-path guessing (2^64).
    #[cold]
    #[inline(never)]
    fn echo_value(&mut self, peer: &A, secs: u32) -> [u8; 12] {
        use core::hash::{Hash, Hasher};
        let key = match self.rare.guard().and_then(|g| g.echo_key) {
            Some(key) => key,
            None => {
                let key = self.rng.next_u64();
                self.guard().0.echo_key = Some(key);
                key
            }
        };
        let mut h = std::hash::DefaultHasher::new();
        (key, peer, secs).hash(&mut h);
        let mut v = [0u8; 12];
        v[..4].copy_from_slice(&secs.to_be_bytes());
        v[4..].copy_from_slice(&h.finish().to_be_bytes());
        v
    }

    /// Whether `peer` is verified at `now`, or proves it now with a fresh Echo from `msg` (then
    /// it is remembered as verified).
    #[cold]
    #[inline(never)]
    fn source_verified(&mut self, now: Instant, peer: &A, msg: &Message<'_>) -> bool {
        // no key yet: no Echo valid
        let Some(g) = self.rare.guard() else { return false };
        if g.is_verified(now, &self.cfg, peer) {
            return true;
        }
        if g.echo_key.is_none() {
            return false;
        }
        let Some(echo) = msg.options.get(registry::ECHO).filter(|e| e.len() == 12) else { return false };
        let secs = u32::from_be_bytes([echo[0], echo[1], echo[2], echo[3]]);
        let now_secs = echo_second(now);
        if now_secs.saturating_sub(secs) as f64 > self.cfg.echo_lifetime.as_secs_f64() || secs > now_secs {
            return false;
        }
        if self.echo_value(peer, secs)[..] != *echo {
            return false;
        }
        let (g, cfg) = self.guard();
        g.verify(now, cfg, peer);
        true
    }

    /// Echo challenges sent (4.01 with Echo instead of a response that did not fit the
    /// amplification limit).
    pub fn echo_challenges(&self) -> u64 {
        self.rare.guard().map_or(0, |g| g.challenges)
    }

    /// Datagrams the amplification limit kept from unverified sources (responses, challenges,
    /// notifications, retransmissions).
    pub fn amplification_withheld(&self) -> u64 {
        self.rare.guard().map_or(0, |g| g.withheld)
    }

    fn on_request(&mut self, now: Instant, from: A, msg: &Message<'_>, request_len: usize) {
        let con = msg.ty == MessageType::Con;
        match self.server_side().dedup.get(&from, msg.message_id) {
            Some(Cached::Reply(resp)) => {
                // a duplicate: the same response again, echoing this transmission's token and
                // number (if it fits the amplification limit: else nothing)
                let ty = if con { MessageType::Ack } else { MessageType::Non };
                let mid = if con { msg.message_id } else { self.alloc_mid() };
                self.queue_shared(&from, ty, mid, msg.token, &resp, con.then_some(msg));
                self.admit_last(now, &from, request_len);
                return;
            }
            Some(Cached::Deferred { ack_sent }) => {
                if con && ack_sent {
                    self.queue_empty(now, from, MessageType::Ack, msg.message_id);
                }
                return;
            }
            None => {}
        }
        let lifetime = if con { self.cfg.exchange_lifetime } else { self.cfg.non_lifetime };
        //= https://www.rfc-editor.org/rfc/rfc7252#section-5.4.1
        //# Unrecognized options of class "critical" that occur in a
        //# Confirmable request MUST cause the return of a 4.02 (Bad Option)
        //# response.
        //= https://www.rfc-editor.org/rfc/rfc7252#section-5.4.3
        //# An option whose length is outside the defined range MUST be treated like an
        //# unrecognized option
        //= https://www.rfc-editor.org/rfc/rfc7252#section-5.4.5
        //# ... each supernumerary occurrence ... MUST be treated like an unrecognized option.
        let unknown_critical = bad_critical_option(&msg.options, &[]);
        // a valid Echo verifies its source (RFC 9175 §2.4)
        if self.cfg.amplification_factor.is_some() {
            self.source_verified(now, &from, msg);
        }
        //= https://www.rfc-editor.org/rfc/rfc7641#section-3.6
        //# a client MAY explicitly deregister by issuing a GET request that has the Token
        //# field set to the token of the observation to be cancelled and includes an
        //# Observe Option with the value set to 1 (deregister).
        // (any GET of the same endpoint and token replaces the entry; Observe 0 adds it again)
        let observe_req =
            if msg.code == Code::GET { msg.options.get(registry::OBSERVE).and_then(observe::value) } else { None };
        if msg.code == Code::GET {
            if let Some(o) = self.rare.obs_mut() {
                o.observers.retain(|ob| !(ob.peer == from && ob.token.as_slice() == msg.token));
            }
        }
        let srv = self.server_side();
        let rid = RequestId(srv.next_request);
        srv.next_request += 1;
        let reply = if unknown_critical {
            Reply::Now(Response::new(Code::BAD_OPTION, Vec::new()))
        } else {
            srv.handler.handle(now, &from, rid, msg)
        };
        let deferred_full = srv.deferred.len() >= self.cfg.max_deferred;
        // what to send now (None: later)
        let reply: Option<Arc<Response>> = match reply {
            Reply::Now(resp) => Some(Arc::new(resp)),
            Reply::Shared(resp) => Some(resp),
            Reply::Later if deferred_full => Some(Arc::new(Response::new(Code::SERVICE_UNAVAILABLE, Vec::new()))),
            Reply::Later => None,
        };
        match reply {
            Some(resp) => {
                // an observable resource's answer to Observe 0 adds the requester, room allowing:
                // when full, the answer without Observe tells the client it was not added
                let registering = observe_req == Some(0)
                    && resp.code.class() == 2
                    && resp.options.iter().any(|o| o.0 == registry::OBSERVE);
                let room = registering && self.rare.obs().is_none_or(|o| o.observers.len() < self.cfg.max_observers);
                let resp = if registering && !room {
                    let options = resp.options.iter().filter(|x| x.0 != registry::OBSERVE).cloned().collect();
                    Arc::new(Response { code: resp.code, options, payload: resp.payload.clone() })
                } else {
                    resp
                };
                let (ty, mid) =
                    if con { (MessageType::Ack, msg.message_id) } else { (MessageType::Non, self.alloc_mid()) };
                self.queue_shared(&from, ty, mid, msg.token, &resp, con.then_some(msg));
                //= https://www.rfc-editor.org/rfc/rfc9175#section-2.4
                //# ... a server ... SHOULD use the Echo option to verify the request source's address
                //# ... if the response would be more than three times the size of the request
                // (here: if it does not fit what the source's account allows; a duplicate gets
                // the challenge again, or the response if nothing could be sent)
                let cached = if self.admit_last(now, &from, request_len) {
                    if room {
                        self.add_observer(&from, msg, &resp);
                    }
                    resp
                } else {
                    let echo_from = con.then_some(msg);
                    self.queue_challenge(now, &from, (ty, mid), msg.token, (request_len, echo_from)).unwrap_or(resp)
                };
                self.server_side().dedup.insert(now, from, msg.message_id, now + lifetime, Cached::Reply(cached));
            }
            None => {
                let ack_deadline = con.then(|| now + self.cfg.separate_ack_delay);
                self.server_side().deferred.insert(
                    rid,
                    Deferred {
                        peer: from.clone(),
                        mid: msg.message_id,
                        token: Token::new(msg.token),
                        con,
                        ack_deadline,
                    },
                );
                self.server_side().dedup.insert(
                    now,
                    from,
                    msg.message_id,
                    now + lifetime,
                    Cached::Deferred { ack_sent: false },
                );
            }
        }
    }

    /// Adds the sender of `msg` (a GET with Observe 0 answered by `resp`) as an observer.
    #[cold]
    #[inline(never)]
    fn add_observer(&mut self, from: &A, msg: &Message<'_>, resp: &Response) {
        let seq = resp.options.iter().find(|x| x.0 == registry::OBSERVE).and_then(|x| observe::value(&x.1));
        let path: Vec<&str> =
            msg.options.get_all(registry::URI_PATH).map(|s| core::str::from_utf8(s).unwrap_or("")).collect();
        self.rare.observe().observers.push(Observer {
            peer: from.clone(),
            token: Token::new(msg.token),
            path: path.join("/"),
            seq: seq.unwrap_or(0),
            last_mid: None,
            non_in_a_row: 0,
        });
    }

    /// Queues a response (see [`encode_response`]).
    fn queue_response(
        &mut self,
        dest: &A,
        ty: MessageType,
        mid: u16,
        token: &[u8],
        resp: &Response,
        echo_from: Option<&Message<'_>>,
    ) {
        let echo = self.cfg.echo_transmission_numbers;
        if let Some((start, len)) = encode_response(&mut self.out, echo, ty, mid, token, resp, echo_from) {
            self.pending.push_back(Pending::Bytes { dest: dest.clone(), start, len });
        }
    }

    /// Queues a response that may be sent again and again (a shared reply, or one the
    /// deduplication cache holds): the options and payload of the last one are kept encoded
    /// ([`ReplyWire`]), so that sending it again writes only the header and the token. A
    /// piggybacked response that echoes transmission-number options is encoded in full.
    fn queue_shared(
        &mut self,
        dest: &A,
        ty: MessageType,
        mid: u16,
        token: &[u8],
        resp: &Arc<Response>,
        echo_from: Option<&Message<'_>>,
    ) {
        let echoes = self.cfg.echo_transmission_numbers
            && echo_from.is_some_and(|m| ECHOED.iter().any(|&n| m.options.get(n).is_some()));
        let start = self.out.len();
        match self.rare.reply_wire() {
            Some(w) if !echoes && token.len() <= coap_wire::MAX_TOKEN_LEN && Arc::ptr_eq(&w.resp, resp) => {
                put_with_tail(&mut self.out, ty, resp.code, mid, token, &w.tail);
            }
            _ => {
                let echo = self.cfg.echo_transmission_numbers;
                let Some((start, len)) = encode_response(&mut self.out, echo, ty, mid, token, resp, echo_from) else {
                    return;
                };
                if !echoes {
                    let tail = self.out[start + 4 + token.len()..start + len].to_vec();
                    self.rare.parts().reply_wire = Some(Box::new(ReplyWire { resp: resp.clone(), tail }));
                }
            }
        }
        let len = self.out.len() - start;
        self.pending.push_back(Pending::Bytes { dest: dest.clone(), start, len });
    }

    /// The deferred answer to request `id` (the handler returned [`Reply::Later`]): piggybacked
    /// if the empty ACK has not gone yet, else a separate CON response, retransmitted as RFC 7252
    /// §4.2 says. Unknown or expired ids are ignored.
    #[cold]
    #[inline(never)]
    pub fn respond(&mut self, now: Instant, id: RequestId, resp: Response) {
        let Some(d) = self.srv.as_deref_mut().and_then(|s| s.deferred.remove(&id)) else { return };
        let ack_sent =
            matches!(self.server_side().dedup.get(&d.peer, d.mid), Some(Cached::Deferred { ack_sent: true }));
        let (ty, mid) = match (d.con, ack_sent) {
            (true, false) => (MessageType::Ack, d.mid),
            (true, true) => (MessageType::Con, self.alloc_mid()),
            (false, _) => (MessageType::Non, self.alloc_mid()),
        };
        self.queue_response(&d.peer, ty, mid, d.token.as_slice(), &resp, None);
        let resp = Arc::new(resp);
        // under the amplification limit: the response, a challenge in its place, or nothing
        let sent = match self.admit_last(now, &d.peer, 0) {
            true => Some(resp.clone()),
            false => self.queue_challenge(now, &d.peer, (ty, mid), d.token.as_slice(), (0, None)),
        };
        if ty == MessageType::Con {
            if sent.is_some() {
                self.track_con(now, &d.peer, mid);
            }
        } else {
            self.server_side().dedup.replace(now, &d.peer, d.mid, Cached::Reply(sent.unwrap_or(resp)));
        }
    }

    /// Handles every deadline up to `now`: retransmissions, give-ups, paced starts, empty ACKs
    /// of slow handlers, separate-response retransmissions; and the lazy housekeeping.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.housekeeping(now);
        let due: SmallVec<[ExchangeId; 4]> = self
            .exchanges
            .iter()
            .filter(|(_, e)| match e.phase {
                Phase::Waiting { deadline, .. } | Phase::NonWaiting { deadline } | Phase::Acked { deadline } => {
                    deadline <= now
                }
            })
            .map(|(id, _)| *id)
            .collect();
        // handling one exchange's deadline changes no other's phase
        for id in due {
            let Some(phase) = self.exchanges.get(&id).map(|e| e.phase) else { continue };
            match phase {
                Phase::Waiting { mut timer, .. } => self.on_rto(now, id, &mut timer),
                Phase::NonWaiting { .. } => {
                    self.finish(now, id, Outcome::Failed(FailReason::Timeout), Answer::default(), true)
                }
                // no longer outstanding since its ACK
                Phase::Acked { .. } => {
                    let reason = FailReason::NoSeparateResponse;
                    self.finish(now, id, Outcome::Failed(reason), Answer::default(), false)
                }
            }
        }
        let woken: Vec<A> =
            self.peers.iter().filter(|(_, p)| p.wake.is_some_and(|w| w <= now)).map(|(a, _)| a.clone()).collect();
        for dest in woken {
            self.try_start(now, &dest);
        }
        // a client's endpoint has no server side: nothing more is due
        let Some(srv) = self.srv.as_deref() else { return };
        // usually empty: skip
        if !srv.deferred.is_empty() || !srv.separate.is_empty() {
            self.reply_timeouts(now);
        }
        let Some(srv) = self.srv.as_deref_mut() else { return };
        if srv.handler.next_change().is_some_and(|t| t <= now) {
            for c in srv.handler.changes(now) {
                self.notify(now, &c.path, &c.response, c.confirmable);
            }
        }
    }

    /// The deadlines of replies: empty ACKs of slow handlers, separate responses'
    /// retransmissions (an unacknowledged CON notification ends its observation).
    #[cold]
    #[inline(never)]
    fn reply_timeouts(&mut self, now: Instant) {
        let Some(srv) = self.srv.as_deref_mut() else { return };
        let mut acks = Vec::new();
        for d in srv.deferred.values_mut().filter(|d| d.ack_deadline.is_some_and(|t| t <= now)) {
            d.ack_deadline = None;
            srv.dedup.mark_ack_sent(&d.peer, d.mid);
            acks.push((d.peer.clone(), d.mid));
        }
        for (peer, mid) in acks {
            self.queue_empty(now, peer, MessageType::Ack, mid);
        }
        let Some(srv) = self.srv.as_deref_mut() else { return };
        let mut resend = Vec::new();
        let mut gone = Vec::new();
        let arena = &mut self.out;
        // under the amplification limit, a retransmission that does not fit ends its response
        let (cfg, mut guard) = (&*self.cfg, self.rare.guard_mut().filter(|_| self.cfg.amplification_factor.is_some()));
        srv.separate.retain(|(dest, _), out| {
            if out.deadline > now {
                return true;
            }
            let refused = |g: &mut Guard<A>| !g.admit(now, cfg, dest, out.bytes.len(), 0);
            if out.retransmissions >= SEPARATE_MAX_RETRANSMIT || guard.as_deref_mut().is_some_and(refused) {
                gone.push((dest.clone(), Ok(token_of(&out.bytes))));
                return false;
            }
            out.retransmissions += 1;
            out.rto *= 2.0;
            out.deadline = now + Duration::from_secs_f64(out.rto);
            resend.push(Pending::Bytes { dest: dest.clone(), start: arena.len(), len: out.bytes.len() });
            arena.extend_from_slice(&out.bytes);
            true
        });
        self.pending.extend(resend);
        if !gone.is_empty() && self.rare.obs().is_some() {
            self.drop_observers(&gone); // an unacknowledged CON notification ends its observer
        }
    }

    fn on_rto(&mut self, now: Instant, id: ExchangeId, timer: &mut ExchangeTimer) {
        let Some(ex) = self.exchanges.get_mut(&id) else { return };
        ex.expired += 1;
        let Some(peer) = self.peers.get_mut(&ex.dest) else { return };
        match peer.cc.on_timeout(now, timer, &mut self.rng) {
            Some(rto) if ex.sent.len() < MAX_TX => {
                ex.sent.push(now);
                ex.rtos.push(rto);
                ex.phase = Phase::Waiting { timer: *timer, deadline: now + rto };
                let number = ex.sent.len() as u32 - 1;
                if self.cfg.transmission_events {
                    self.events.push_back(Event::Transmission { id, number, at: now, rto: Some(rto) });
                }
                if self.give_up_at_retransmission != Some(number) {
                    self.pending.push_back(Pending::Request(id));
                } else {
                    // Erbium: the last retransmission goes out and the transaction is freed; it is
                    // encoded now, as a finished exchange keeps no request
                    let start = self.out.len();
                    if let Some(len) = encode_request(ex, &mut self.out, self.cfg.max_message_size) {
                        self.pending.push_back(Pending::Bytes { dest: ex.dest.clone(), start, len });
                    }
                    peer.cc.on_failure(now, timer);
                    self.finish(now, id, Outcome::Failed(FailReason::Timeout), Answer::default(), true);
                }
            }
            _ => {
                peer.cc.on_failure(now, timer);
                self.finish(now, id, Outcome::Failed(FailReason::Timeout), Answer::default(), true);
            }
        }
    }

    /// The next protocol deadline, if any: a retransmission, a give-up, a paced start, an empty
    /// ACK or a separate response's retransmission. (Housekeeping sets none; see `retire_all`.)
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Instant> {
        let mut next: Option<Instant> = None;
        let mut consider = |t: Instant| next = Some(next.map_or(t, |n| n.min(t)));
        for e in self.exchanges.values() {
            let (Phase::Waiting { deadline, .. } | Phase::NonWaiting { deadline } | Phase::Acked { deadline }) =
                e.phase;
            consider(deadline);
        }
        self.peers.values().filter_map(|p| p.wake).for_each(&mut consider);
        if let Some(srv) = self.srv.as_deref() {
            // usually empty: skip their iterators
            if !srv.deferred.is_empty() {
                srv.deferred.values().filter_map(|d| d.ack_deadline).for_each(&mut consider);
            }
            if !srv.separate.is_empty() {
                srv.separate.values().map(|s| s.deadline).for_each(&mut consider);
            }
            if self.rare.obs().is_some_and(|o| !o.observers.is_empty()) {
                srv.handler.next_change().into_iter().for_each(&mut consider);
            }
        }
        next
    }

    /// The next datagram to send: `buf`'s bytes, [`Transmit::len`] of them (`buf` is cleared
    /// and filled).
    #[must_use]
    #[inline]
    pub fn poll_transmit(&mut self, buf: &mut Vec<u8>) -> Option<Transmit<A>> {
        // a driver asks until there is nothing: that last call is cheap, inlined
        if self.pending.is_empty() {
            self.out.clear(); // everything encoded there has been taken
            return None;
        }
        self.next_transmit(buf)
    }

    fn next_transmit(&mut self, buf: &mut Vec<u8>) -> Option<Transmit<A>> {
        loop {
            let Some(p) = self.pending.pop_front() else {
                self.out.clear(); // everything encoded there has been taken
                return None;
            };
            match p {
                Pending::Request(id) => {
                    let Some(ex) = self.exchanges.get(&id) else { continue };
                    buf.clear();
                    match encode_request(ex, buf, self.cfg.max_message_size) {
                        Some(len) => return Some(Transmit { dest: ex.dest.clone(), len }),
                        None => continue,
                    }
                }
                Pending::Empty { dest, ty, mid } => {
                    buf.clear();
                    buf.resize(4, 0);
                    let len = Message::empty(ty, mid).encode(buf).ok()?;
                    return Some(Transmit { dest, len });
                }
                Pending::Bytes { dest, start, len } => {
                    buf.clear();
                    buf.extend_from_slice(&self.out[start..start + len]);
                    return Some(Transmit { dest, len });
                }
            }
        }
    }

    /// The next application event.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<Event<A>> {
        self.events.pop_front()
    }
}

/// The second an Echo value names (seconds of the endpoint's clock).
fn echo_second(now: Instant) -> u32 {
    (now.as_nanos() / 1_000_000_000) as u32
}

/// A response's options, sorted by number as they are encoded.
fn sorted_options(resp: &Response) -> SmallVec<[CoapOption<'_>; 8]> {
    let mut options: SmallVec<[CoapOption<'_>; 8]> =
        resp.options.iter().map(|(n, v)| CoapOption { number: *n, value: v }).collect();
    options.sort_by_key(|o| o.number);
    options
}

/// A response's options and payload, owned.
type Answer = (Vec<(u16, Vec<u8>)>, Vec<u8>);

/// The token of an encoded message (one the endpoint made itself).
fn token_of(bytes: &[u8]) -> Token {
    let tkl = bytes.first().map_or(0, |b| (b & 0x0F) as usize).min(8);
    Token::new(bytes.get(4..4 + tkl).unwrap_or(&[]))
}

/// What the application gets of a response: its options (less the transmission-number echoes,
/// which are the endpoint's own business) and its payload (if `payload`, else none).
fn answer(msg: &Message<'_>, payload: bool) -> Answer {
    let own = |n: u16| n == registry::TRANSMISSION_NUMBER || n == registry::RTT_COAP_COUNTER_ECHO;
    let options = msg.options.iter().filter(|o| !own(o.number)).map(|o| (o.number, o.value.to_vec())).collect();
    (options, if payload { msg.payload.to_vec() } else { Vec::new() })
}

/// Encodes a response at the end of the arena `out`, returning where it stands. `echo_from`: the
/// request whose transmission-number options a piggybacked response echoes (when `echo`).
fn encode_response(
    out: &mut Vec<u8>,
    echo: bool,
    ty: MessageType,
    mid: u16,
    token: &[u8],
    resp: &Response,
    echo_from: Option<&Message<'_>>,
) -> Option<(usize, usize)> {
    let mut options = sorted_options(resp);
    if let (true, Some(req)) = (echo, echo_from) {
        // only the options this server knows, each under its echo number (elective)
        for number in ECHOED {
            if let Some(value) = req.options.get(number) {
                let number = registry::echo_number(number);
                let at = options.iter().position(|o| o.number > number).unwrap_or(options.len());
                options.insert(at, CoapOption { number, value });
            }
        }
    }
    let m = Message {
        ty,
        code: resp.code,
        message_id: mid,
        token,
        options: Options::from_list(&options),
        payload: &resp.payload,
    };
    let start = out.len();
    out.resize(start + m.encoded_len(), 0);
    match m.encode(&mut out[start..]) {
        Ok(len) => {
            out.truncate(start + len);
            Some((start, len))
        }
        Err(_) => {
            out.truncate(start);
            None
        }
    }
}

/// Appends a message whose options and payload are already encoded (`tail`): its header and
/// token (RFC 7252 §3: version 1, type, token length; code; Message ID), then `tail`. The
/// token must be at most 8 bytes. Inlined: it is on the path of every transmission.
#[inline(always)]
fn put_with_tail(out: &mut Vec<u8>, ty: MessageType, code: Code, mid: u16, token: &[u8], tail: &[u8]) {
    out.extend_from_slice(&[(Message::VERSION << 6) | ((ty as u8) << 4) | token.len() as u8, code.0]);
    out.extend_from_slice(&mid.to_be_bytes());
    out.extend_from_slice(token);
    out.extend_from_slice(tail);
}

/// Appends the latest transmission of `ex`, with its marking, to `out`: its length, or None
/// (and `out` unchanged) if it cannot be encoded in `max` bytes.
fn encode_request<A>(ex: &Exchange<A>, out: &mut Vec<u8>, max: usize) -> Option<usize> {
    let n = ex.sent.len().saturating_sub(1) as u8;
    let mut token = [0u8; 9];
    let base = ex.token.as_slice();
    let token: &[u8] = match ex.marking {
        Marking::Token => {
            token[0] = n;
            token[1..1 + base.len()].copy_from_slice(base);
            &token[..1 + base.len()]
        }
        _ => base,
    };
    let ty = if ex.confirmable { MessageType::Con } else { MessageType::Non };
    let marking = match ex.marking {
        Marking::Option { number, probe } => Some((number, probe)),
        _ => None,
    };
    if let (None, Some(tail)) = (marking, ex.req.tail()) {
        // header and token (RFC 7252 §3), then the options and payload encoded once
        if token.len() > coap_wire::MAX_TOKEN_LEN {
            return None;
        }
        let len = 4 + token.len() + tail.len();
        if len > max {
            return None;
        }
        put_with_tail(out, ty, ex.req.code, ex.mid, token, tail);
        return Some(len);
    }
    // a marking option goes among the request's: the whole message is encoded
    let mut value = [0u8; 4];
    let mut options: SmallVec<[CoapOption<'_>; 8]> =
        ex.req.options.iter().map(|(num, v)| CoapOption { number: *num, value: v }).collect();
    if let Some((number, probe)) = marking {
        let v: &[u8] = match (n, probe) {
            (0, true) => &[255],
            _ => encode_uint(n as u32, &mut value),
        };
        let at = options.iter().position(|o| o.number > number).unwrap_or(options.len());
        options.insert(at, CoapOption { number, value: v });
    }
    let m = Message {
        ty,
        code: ex.req.code,
        message_id: ex.mid,
        token,
        options: Options::from_list(&options),
        payload: &ex.req.payload,
    };
    let len = m.encoded_len();
    if len > max {
        return None;
    }
    let start = out.len();
    out.resize(start + len, 0);
    let written = m.encode(&mut out[start..]).ok();
    out.truncate(start + written.unwrap_or(0));
    written
}

/// Whether a request carries a critical option that must be treated as unrecognized: one not
/// registered or among the registered ones this side does not serve (`unsupported`), one whose
/// length is outside its registered range, or a repetition of one that is not repeatable (the
/// options come in order, so a repetition follows its first occurrence).
pub(crate) fn bad_critical_option(options: &coap_wire::Options<'_>, unsupported: &[u16]) -> bool {
    let mut previous = None;
    options.iter().any(|o| {
        let repeated = previous == Some(o.number);
        previous = Some(o.number);
        registry::is_critical(o.number)
            && match registry::lookup(o.number).filter(|_| !unsupported.contains(&o.number)) {
                None => true,
                Some(d) => {
                    let len = o.value.len();
                    len < usize::from(d.min_len) || len > usize::from(d.max_len) || (repeated && !d.repeatable)
                }
            }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_finished_exchange_matches_tokens_as_the_live_one_did() {
        let ex = |marking: Marking| Exchange {
            dest: 7u32,
            req: PreparedRequest::from(Request::get("a")),
            mid: 0x1234,
            token: Token::new(&[0xAB, 0xCD]),
            phase: Phase::Acked { deadline: Instant::ZERO },
            marking,
            confirmable: true,
            sent: SmallVec::from_slice(&[Instant::ZERO, Instant::from_nanos(1)]),
            rtos: SmallVec::new(),
            expired: 0,
            acked_at: None,
            responded_at: None,
            marks: 0,
        };
        let tombstone = |ex: &Exchange<u32>, answered| {
            let mut t = Tombstones::default();
            t.push(ex.tombstone(Instant::ZERO, answered));
            t
        };
        // plain token: the bytes themselves
        let plain = ex(Marking::None);
        let f = tombstone(&plain, true);
        assert!(f.answered(0) && f.has_token(&7, &[0xAB, 0xCD]));
        for received in [&[0xAB, 0xCD][..], &[0xAB], &[1, 0xAB, 0xCD]] {
            assert_eq!(f.find_by_token(&7, received).is_some(), plain.token_matches(received), "{received:?}");
        }
        assert!(f.find_by_token(&7, &[0xAB, 0xCD]).is_some() && f.find_by_token(&7, &[0xAB]).is_none());
        // token marking: a transmission number below the two sent, then the bytes
        let marked = ex(Marking::Token);
        let f = tombstone(&marked, false);
        assert!(!f.answered(0));
        for received in [&[0, 0xAB, 0xCD][..], &[1, 0xAB, 0xCD], &[2, 0xAB, 0xCD], &[0xAB, 0xCD]] {
            assert_eq!(f.find_by_token(&7, received).is_some(), marked.token_matches(received), "{received:?}");
        }
        assert!(f.find_by_token(&7, &[1, 0xAB, 0xCD]).is_some() && f.find_by_token(&7, &[2, 0xAB, 0xCD]).is_none());
    }
}
