//! The server side: the [`Handler`] trait resources implement, and the deduplication cache of
//! RFC 7252 §4.5, bounded in bytes.

use std::collections::VecDeque;
use std::hash::{BuildHasher, Hash};
use std::sync::Arc;

use coap_cc::Instant;
use coap_wire::{Code, Message};
use hashbrown::hash_table::{Entry, HashTable};

use crate::deque::room_for_one;

/// A response to build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The response code.
    pub code: Code,
    /// Options (any order; sorted stably by number when encoded).
    pub options: Vec<(u16, Vec<u8>)>,
    /// The payload.
    pub payload: Vec<u8>,
}

impl Response {
    /// A response with a code and payload, no options.
    pub fn new(code: Code, payload: impl Into<Vec<u8>>) -> Self {
        Response { code, options: Vec::new(), payload: payload.into() }
    }
}

/// Identifies a request whose handler answers later ([`crate::Endpoint::respond`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RequestId(pub u64);

/// What a handler does with a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// Answer now: piggybacked on the ACK of a CON, or a NON response to a NON.
    Now(Response),
    /// Answer now with a response many requests share (a fixed resource): the deduplication
    /// cache holds it without a copy per request.
    Shared(Arc<Response>),
    /// Answer later with [`crate::Endpoint::respond`]; a CON gets an empty ACK meanwhile.
    Later,
}

impl Reply {
    /// The response to send now (a shared one copied if it is still shared), or None for
    /// [`Reply::Later`].
    pub fn into_response(self) -> Option<Response> {
        match self {
            Reply::Now(r) => Some(r),
            Reply::Shared(r) => Some(Arc::unwrap_or_clone(r)),
            Reply::Later => None,
        }
    }
}

/// The server's resources.
pub trait Handler<A>: Send {
    /// Handles a request (already deduplicated: a retransmission never reaches the handler).
    /// An observable resource answers a GET carrying Observe 0 with an Observe option in its
    /// (success) response: the endpoint then adds the requester to its observers (RFC 7641).
    fn handle(&mut self, now: Instant, from: &A, id: RequestId, request: &Message<'_>) -> Reply;

    /// When one of its observable resources next changes, if ever (the endpoint then calls
    /// [`Handler::changes`] and notifies the observers).
    fn next_change(&self) -> Option<Instant> {
        None
    }

    /// The observable resources that changed by `now`, with their new representations.
    fn changes(&mut self, _now: Instant) -> Vec<Change> {
        Vec::new()
    }
}

/// A new representation of an observable resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// Its Uri-Path, segments joined by '/' (`"time"`, `"sensors/temp"`).
    pub path: String,
    /// The representation (its Observe option is the endpoint's business).
    pub response: Response,
    /// Send it as CON (else NON, with a CON every [`crate::observe::NON_MAX`]).
    pub confirmable: bool,
}

/// A handler with no resources: 4.04 to everything.
#[derive(Debug, Clone, Copy, Default)]
pub struct NotFound;

impl<A> Handler<A> for NotFound {
    fn handle(&mut self, _: Instant, _: &A, _: RequestId, _: &Message<'_>) -> Reply {
        Reply::Now(Response::new(Code::NOT_FOUND, Vec::new()))
    }
}

/// What a deduplication entry holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Cached {
    /// The reply, to send again (re-encoded with the duplicate's token and transmission number,
    /// so that accurate-RTT samples name the transmission that was answered).
    Reply(Arc<Response>),
    /// The handler answers later; an empty ACK may have been sent.
    Deferred { ack_sent: bool },
}

/// The fixed memory cost of a deduplication entry, bytes (measured order of magnitude of a hash
/// map slot, a queue slot and a `Response`'s headers; the budget is what matters, not the digit).
pub const ENTRY_OVERHEAD: usize = 160;

/// What a queue slot holds: nothing (replaced or evicted: it only waits to leave the queue), a
/// reply, or a deferred one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Dead,
    Reply,
    Deferred { ack_sent: bool },
}

/// An entry, in the queue of entries in insertion order (its cost is recomputed from what it
/// holds, not stored). 24 bytes with a 4-byte address (a simulated host): the reply pointer and
/// a one-byte state instead of an optional enum of 16.
#[derive(Debug)]
struct Slot<A> {
    expires: Instant,
    reply: Option<Arc<Response>>,
    peer: A,
    mid: u16,
    state: State,
}

impl<A> Slot<A> {
    fn new(expires: Instant, peer: A, mid: u16, cached: Cached) -> Self {
        let (reply, state) = match cached {
            Cached::Reply(r) => (Some(r), State::Reply),
            Cached::Deferred { ack_sent } => (None, State::Deferred { ack_sent }),
        };
        Slot { expires, reply, peer, mid, state }
    }

    /// Whether it is the entry of (`peer`, `mid`).
    fn is(&self, peer: &A, mid: u16) -> bool
    where
        A: PartialEq,
    {
        self.mid == mid && self.peer == *peer
    }

    fn cached(&self) -> Option<Cached> {
        match self.state {
            State::Dead => None,
            State::Reply => self.reply.clone().map(Cached::Reply),
            State::Deferred { ack_sent } => Some(Cached::Deferred { ack_sent }),
        }
    }

    /// What it held, if live; it is dead afterwards.
    fn take(&mut self) -> Option<Cached> {
        let cached = self.cached();
        (self.state, self.reply) = (State::Dead, None);
        cached
    }

    /// What it costs in memory, in bytes (0 once dead): a fixed part for the key, the expiry,
    /// the index's and the queue's slots and the response's allocations ([`ENTRY_OVERHEAD`]),
    /// plus the peer address and the reply's option values and payload.
    fn cost(&self) -> usize {
        if self.state == State::Dead {
            return 0;
        }
        let reply = self
            .reply
            .as_deref()
            .map_or(0, |r| r.payload.len() + r.options.iter().map(|(_, v)| v.len() + 8).sum::<usize>());
        ENTRY_OVERHEAD + 2 * core::mem::size_of::<A>() + reply
    }
}

/// The slot of sequence number `seq` in `queue`, whose front is `head`.
fn slot_at<A>(queue: &VecDeque<Slot<A>>, head: u32, seq: u32) -> &Slot<A> {
    &queue[seq.wrapping_sub(head) as usize]
}

/// Recently seen (peer, Message ID) pairs with their replies. Each entry is kept for its
/// lifetime (EXCHANGE_LIFETIME for CON, NON_LIFETIME for NON: RFC 7252 §4.5) within a memory
/// budget in bytes; when a new entry would exceed it, the oldest go first, each one that had
/// not expired yet counted in [`Dedup::early_evictions`] (a duplicate of it would run the
/// handler again: the budget is too small for the request rate).
///
/// The entries wait in a queue in insertion order (the lifetime is constant, so this is expiry
/// order for CON entries; a NON entry leaves when it reaches the front after its shorter
/// lifetime), and a hash index finds an entry's sequence number in that queue from (peer,
/// Message ID). The index holds only the 4-byte sequence numbers (`hashbrown`'s `HashTable`, the
/// table under the standard library's map, which lets a lookup compare with the key kept in the
/// queue): a hash table is kept at most seven-eighths full and doubles (both tables live while it
/// grows), so its slots are what the cache's memory grows with. Keys are hashed by foldhash (a
/// crate made for hash tables; SipHash took 4 % of the heaviest simulated cell), seeded per
/// table from the address-space layout and the time, so a peer cannot aim its Message IDs at one
/// bucket. The index is only looked up, never iterated (eviction follows the queue), so results
/// do not depend on the seed, and no OS entropy is read.
///
/// Its table is made at the first entry: an endpoint that never serves (each of a simulation's
/// thousands of clients) holds 16 bytes for it.
#[derive(Debug)]
pub(crate) struct Dedup<A> {
    budget: usize,
    table: Option<Box<Table<A>>>,
}

impl<A: Eq + Clone + Hash> Dedup<A> {
    /// A cache holding at most `budget` bytes of entries.
    pub(crate) fn new(budget: usize) -> Self {
        Dedup { budget, table: None }
    }

    /// What the live entry of (`peer`, `mid`) holds.
    pub(crate) fn get(&self, peer: &A, mid: u16) -> Option<Cached> {
        let t = self.table.as_ref()?;
        slot_at(&t.queue, t.head, t.find(peer, mid)?).cached()
    }

    /// Replaces what an entry holds (a deferred reply that has come), within the budget.
    /// (Its queue slot moves to the back with its expiry unchanged.)
    pub(crate) fn replace(&mut self, now: Instant, peer: &A, mid: u16, cached: Cached) {
        if let Some((expires, _)) = self.table.as_mut().and_then(|t| t.remove(peer, mid)) {
            self.insert(now, peer.clone(), mid, expires, cached);
        }
    }

    /// Marks a deferred entry's empty ACK as sent.
    pub(crate) fn mark_ack_sent(&mut self, peer: &A, mid: u16) {
        if let Some(t) = self.table.as_mut() {
            if let Some(seq) = t.find(peer, mid) {
                let slot = &mut t.queue[seq.wrapping_sub(t.head) as usize];
                if let State::Deferred { .. } = slot.state {
                    slot.state = State::Deferred { ack_sent: true };
                }
            }
        }
    }

    pub(crate) fn insert(&mut self, now: Instant, peer: A, mid: u16, expires: Instant, cached: Cached) {
        let t = self.table.get_or_insert_with(|| Box::new(Table::new()));
        let slot = Slot::new(expires, peer, mid, cached);
        t.evict_to(now, slot.cost(), self.budget);
        t.push(slot);
    }

    /// Drops expired entries.
    pub(crate) fn expire(&mut self, now: Instant) {
        if let Some(t) = self.table.as_mut() {
            t.expire(now);
        }
    }

    /// Entries held.
    pub(crate) fn len(&self) -> usize {
        self.table.as_ref().map_or(0, |t| t.index.len())
    }

    /// Bytes held (as a slot's cost counts them); at most the budget.
    pub(crate) fn bytes(&self) -> usize {
        self.table.as_ref().map_or(0, |t| t.bytes)
    }

    /// Entries evicted before their lifetime ended, to stay within the budget.
    pub(crate) fn early_evictions(&self) -> u64 {
        self.table.as_ref().map_or(0, |t| t.early_evictions)
    }
}

/// The deduplication cache's entries.
#[derive(Debug)]
struct Table<A> {
    /// The sequence numbers of the live slots in `queue`, hashed by their (peer, Message ID).
    index: HashTable<u32>,
    hasher: foldhash::fast::RandomState,
    /// Entries in insertion order; the slot of sequence number `s` is `queue[s - head]`
    /// (wrapping: fewer than 2^32 entries are ever queued at once).
    queue: VecDeque<Slot<A>>,
    /// The sequence number of the queue's front.
    head: u32,
    bytes: usize,
    early_evictions: u64,
}

impl<A: Eq + Clone + Hash> Table<A> {
    fn new() -> Self {
        Table {
            index: HashTable::new(),
            hasher: Default::default(),
            queue: VecDeque::new(),
            head: 0,
            bytes: 0,
            early_evictions: 0,
        }
    }

    fn hash(&self, peer: &A, mid: u16) -> u64 {
        self.hasher.hash_one((peer, mid))
    }

    /// The sequence number of the live entry of (`peer`, `mid`).
    #[inline]
    fn find(&self, peer: &A, mid: u16) -> Option<u32> {
        let is = |&seq: &u32| slot_at(&self.queue, self.head, seq).is(peer, mid);
        self.index.find(self.hash(peer, mid), is).copied()
    }

    /// Takes the live entry of (`peer`, `mid`) out (its slot stays queued, dead): its expiry
    /// and what it held.
    fn remove(&mut self, peer: &A, mid: u16) -> Option<(Instant, Cached)> {
        let hash = self.hash(peer, mid);
        let is = |&seq: &u32| slot_at(&self.queue, self.head, seq).is(peer, mid);
        let (seq, _) = self.index.find_entry(hash, is).ok()?.remove();
        let slot = &mut self.queue[seq.wrapping_sub(self.head) as usize];
        self.bytes -= slot.cost();
        let expires = slot.expires;
        Some((expires, slot.take()?))
    }

    /// Queues a new entry; one under the same key (a rare reuse of a Message ID within its
    /// lifetime) is replaced.
    fn push(&mut self, slot: Slot<A>) {
        let seq = self.head.wrapping_add(self.queue.len() as u32);
        let hash = self.hash(&slot.peer, slot.mid);
        self.bytes += slot.cost();
        // the slot is queued before the index may grow: rehashing reads the keys in the queue
        room_for_one(&mut self.queue, 16);
        self.queue.push_back(slot);
        let (queue, head, hasher) = (&self.queue, self.head, &self.hasher);
        let key = |seq: u32| {
            let s = slot_at(queue, head, seq);
            (&s.peer, s.mid)
        };
        // one index operation on the hot path: the key's entry, found or made
        match self.index.entry(hash, |&old| key(old) == key(seq), |&s| hasher.hash_one(key(s))) {
            Entry::Occupied(mut e) => {
                let old = std::mem::replace(e.get_mut(), seq);
                let slot = &mut self.queue[old.wrapping_sub(head) as usize];
                self.bytes -= slot.cost();
                slot.take();
            }
            Entry::Vacant(e) => {
                e.insert(seq);
            }
        }
    }

    /// Takes the front slot off the queue; if it was live, drops its index entry and returns its
    /// expiry.
    fn pop_front(&mut self) -> Option<Option<Instant>> {
        let front = self.head;
        let slot = self.queue.pop_front()?;
        self.head = self.head.wrapping_add(1);
        if slot.state == State::Dead {
            return Some(None);
        }
        self.bytes -= slot.cost();
        let hash = self.hash(&slot.peer, slot.mid);
        if let Ok(e) = self.index.find_entry(hash, |&seq| seq == front) {
            e.remove();
        }
        Some(Some(slot.expires))
    }

    /// Evicts the oldest entries until `extra` more bytes fit in `budget`.
    fn evict_to(&mut self, now: Instant, extra: usize, budget: usize) {
        while self.bytes + extra > budget {
            let Some(evicted) = self.pop_front() else { break };
            if let Some(expires) = evicted {
                self.early_evictions += u64::from(expires > now);
            }
        }
    }

    fn expire(&mut self, now: Instant) {
        while self.queue.front().is_some_and(|s| s.expires <= now) {
            self.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An entry for peer `u32` with a 1-byte payload costs 160 + 2·4 + 1 = 169 bytes.
    const COST: usize = ENTRY_OVERHEAD + 8 + 1;

    #[test]
    fn bounded_in_bytes_and_expiring() {
        let mut d = Dedup::new(3 * COST);
        let t = Instant::from_nanos;
        for mid in 0..10u16 {
            let reply = Cached::Reply(Arc::new(Response::new(Code::CONTENT, vec![mid as u8])));
            d.insert(t(mid as u64), 1u32, mid, t(100 + mid as u64), reply);
            assert!(d.bytes() <= 3 * COST);
        }
        // 7 inserted beyond room for 3: the 7 oldest went, each before its expiry
        assert_eq!((d.len(), d.bytes(), d.early_evictions()), (3, 3 * COST, 7));
        assert!(d.get(&1, 6).is_none() && d.get(&1, 7).is_some());
        d.expire(t(108));
        assert_eq!((d.len(), d.bytes()), (1, COST));
        assert_eq!(d.get(&1, 9), Some(Cached::Reply(Arc::new(Response::new(Code::CONTENT, vec![9])))));
        d.expire(t(109));
        assert_eq!((d.len(), d.bytes()), (0, 0));
        // entries evicted at or after their expiry are not early
        assert_eq!(d.early_evictions(), 7);
    }

    #[test]
    fn a_large_reply_takes_the_room_of_many_small_ones_and_replacing_keeps_the_count_right() {
        let t = Instant::from_nanos;
        let mut d = Dedup::new(10 * COST);
        for mid in 0..10u16 {
            d.insert(t(0), 1u32, mid, t(1000), Cached::Deferred { ack_sent: false });
        }
        assert_eq!(d.bytes(), 10 * (COST - 1));
        // a reply of 5·COST bytes replaces the deferred entry 9: entries 0–4 make room
        let big = Response::new(Code::CONTENT, vec![0; 5 * COST]);
        d.replace(t(1), &1, 9, Cached::Reply(Arc::new(big.clone())));
        assert_eq!(d.get(&1, 9), Some(Cached::Reply(Arc::new(big))));
        assert!(d.bytes() <= 10 * COST);
        assert!((0..5).all(|m| d.get(&1, m).is_none()) && (5..9).all(|m| d.get(&1, m).is_some()));
        assert_eq!(d.early_evictions(), 5);
        // the replaced entry still expires at its own time
        d.expire(t(1000));
        assert_eq!((d.len(), d.bytes()), (0, 0));
    }

    #[test]
    fn a_replaced_entry_waits_for_its_new_turn_to_be_evicted() {
        let t = Instant::from_nanos;
        let mut d = Dedup::new(3 * COST);
        for mid in 0..3u16 {
            d.insert(t(0), 1u32, mid, t(1000), Cached::Deferred { ack_sent: false });
            // COST - 1 each
        }
        // the deferred reply of 0 comes (1 byte: COST): 0 is now the newest entry
        let reply = Cached::Reply(Arc::new(Response::new(Code::CONTENT, vec![7])));
        d.replace(t(1), &1, 0, reply.clone());
        assert_eq!(d.bytes(), 3 * COST - 2);
        // room for one more deferred entry (COST - 1): the oldest live entry, 1, goes, not 0
        d.insert(t(2), 1u32, 3, t(1000), Cached::Deferred { ack_sent: false });
        assert_eq!(d.get(&1, 0), Some(reply.clone()));
        assert!(d.get(&1, 1).is_none() && d.get(&1, 2).is_some() && d.get(&1, 3).is_some());
        assert_eq!((d.len(), d.bytes(), d.early_evictions()), (3, 3 * COST - 2, 1));
    }

    #[test]
    fn entries_are_found_after_the_index_grows_and_a_reused_id_replaces_its_entry() {
        let t = Instant::from_nanos;
        let mut d = Dedup::new(usize::MAX);
        let reply = |b: u8| Cached::Reply(Arc::new(Response::new(Code::CONTENT, vec![b])));
        // 3,000 entries of 7 peers: the index doubles many times, rehashing from the queue's keys
        for i in 0..3000u32 {
            d.insert(t(i as u64), i % 7, (i / 7) as u16, t(1000 + i as u64), reply(i as u8));
        }
        assert_eq!(d.len(), 3000);
        assert!((0..3000u32).all(|i| d.get(&(i % 7), (i / 7) as u16) == Some(reply(i as u8))));
        assert!(d.get(&7, 0).is_none() && d.get(&0, 429).is_none());
        // peer 3 reuses Message ID 5 (entry 38): the new entry replaces it, the count stays
        d.insert(t(3000), 3, 5, t(4000), reply(99));
        assert_eq!((d.len(), d.get(&3, 5)), (3000, Some(reply(99))));
        // the first 1,000 expire (the replaced one's old slot among them, already dead)
        d.expire(t(1999));
        assert_eq!(d.len(), 2001);
        assert!((1000..3000u32).all(|i| i == 38 || d.get(&(i % 7), (i / 7) as u16) == Some(reply(i as u8))));
        assert_eq!(d.get(&3, 5), Some(reply(99)));
        // a slot with a 4-byte address is 24 bytes
        assert_eq!(std::mem::size_of::<Slot<u32>>(), 24);
    }
}
