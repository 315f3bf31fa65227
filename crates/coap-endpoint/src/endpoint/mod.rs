//! The endpoint: client exchanges and server replies over one local address. This module holds
//! its state, its construction and the sans-IO surface (datagrams and timeouts in, transmissions
//! and events out); the rest is by role: [`client`] (exchanges), [`serve`] (the request path),
//! [`echo`] (source verification and the amplification limit), [`observing`] (Observe), and
//! [`encode`] (the wire).

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
use crate::token::{token_matches, Token};
use crate::{PreparedRequest, Request};

mod client;
mod echo;
mod encode;
mod observing;
mod serve;

pub(crate) use encode::bad_critical_option;
use encode::*;

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
                    .max_retransmit()
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

    /// Queues an empty ACK or RST; under the amplification limit it is counted (it answers a
    /// datagram at least as long, so it always goes).
    #[inline]
    fn queue_empty(&mut self, now: Instant, dest: A, ty: MessageType, mid: u16) {
        if self.cfg.amplification_factor.is_some() {
            self.amplification_sent(now, &dest, 4);
        }
        self.pending.push_back(Pending::Empty { dest, ty, mid });
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

    /// The stack's send of the latest transmission of message `mid` to `dest` returned at `now`.
    ///
    /// Erbium takes a transmission's time, and arms its retransmission timer, after
    /// `coap_send_message` returns (`coap_send_transaction`), and on a mote whose send blocks
    /// that is after the frame: a Cooja mote's nullmac over nullrdc returns after the frame and
    /// its ACK wait. A driver that models such a stack calls this; the transmission's time (the
    /// controller's RTT sample, the exchange's records) and its timer's deadline, the same RTO
    /// from then, move to `now`. A driver that never calls it has the timer run from
    /// [`Endpoint::poll_transmit`]'s time. Nothing happens for an exchange no longer waiting,
    /// or a time before the transmission's.
    pub fn send_returned(&mut self, now: Instant, dest: &A, mid: u16) {
        let Some(id) = self.keys.by_mid(&self.exchanges, dest, mid) else { return };
        let Some(ex) = self.exchanges.get_mut(&id) else { return };
        let (Some(sent), Some(&rto)) = (ex.sent.last_mut(), ex.rtos.last()) else { return };
        if let Phase::Waiting { deadline, .. } = &mut ex.phase {
            if now >= *sent {
                *sent = now;
                *deadline = now + rto;
            }
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
