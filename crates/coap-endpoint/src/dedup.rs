//! The deduplication cache of RFC 7252 §4.5: the replies a server gave, kept for
//! EXCHANGE_LIFETIME so a duplicate request gets the same answer, bounded in bytes.

use std::collections::VecDeque;
use std::hash::{BuildHasher, Hash};
use std::sync::Arc;

use coap_cc::Instant;
use foldhash::fast::SeedableRandomState;
use hashbrown::hash_table::{Entry, HashTable};

use crate::deque::room_for_one;
use crate::server::Response;

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
/// holds, not stored). 16 bytes with a 4-byte address (a simulated host): a reply is not in the
/// slot but in the run of slots that share it ([`Run`]).
#[derive(Debug)]
struct Slot<A> {
    expires: Instant,
    peer: A,
    mid: u16,
    state: State,
}

impl<A> Slot<A> {
    /// Whether it is the entry of (`peer`, `mid`).
    fn is(&self, peer: &A, mid: u16) -> bool
    where
        A: PartialEq,
    {
        self.mid == mid && self.peer == *peer
    }
}

/// Consecutive queue slots answered with one shared response (a fixed resource's: every request
/// of a simulation): the reply of each [`State::Reply`] slot from sequence number `first` up to
/// the next run's first. A server whose replies differ has a run per reply (then 16 bytes more
/// an entry than a pointer in the slot); one that shares a reply, a run for thousands of
/// entries. A run leaves when the queue's front passes the next run's first, so a reply taken
/// out of its slot early (a replaced entry) is freed then.
#[derive(Debug)]
struct Run {
    first: u32,
    reply: Arc<Response>,
}

/// What an entry holding `reply` (None: a deferred one) costs in memory, in bytes: a fixed part
/// for the key, the expiry, the index's and the queue's slots and the response's allocations
/// ([`ENTRY_OVERHEAD`]), plus the peer address and the reply's option values and payload.
fn entry_cost<A>(reply: Option<&Response>) -> usize {
    let reply = reply.map_or(0, |r| r.payload.len() + r.options.iter().map(|(_, v)| v.len() + 8).sum::<usize>());
    ENTRY_OVERHEAD + 2 * core::mem::size_of::<A>() + reply
}

/// Where the slot of sequence number `seq` is in a queue whose front is `head`.
fn position(head: u32, seq: u32) -> usize {
    seq.wrapping_sub(head) as usize
}

/// The slot of sequence number `seq` in `queue`, whose front is `head`.
fn slot_at<A>(queue: &VecDeque<Slot<A>>, head: u32, seq: u32) -> &Slot<A> {
    &queue[position(head, seq)]
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
/// bucket, unless the endpoint's configuration fixes the seed
/// ([`crate::Config::dedup_hash_seed`]). The index is only looked up, never iterated (eviction
/// follows the queue), so results do not depend on the seed, and no OS entropy is read.
///
/// Its table is made at the first entry: an endpoint that never serves (each of a simulation's
/// thousands of clients) holds 16 bytes for it.
#[derive(Debug)]
pub(crate) struct Dedup<A> {
    budget: usize,
    seed: Option<u64>,
    table: Option<Box<Table<A>>>,
}

impl<A: Eq + Clone + Hash> Dedup<A> {
    /// A cache holding at most `budget` bytes of entries, its hash seeded with `seed` (None:
    /// unpredictably).
    pub(crate) fn new(budget: usize, seed: Option<u64>) -> Self {
        Dedup { budget, seed, table: None }
    }

    /// What the live entry of (`peer`, `mid`) holds.
    pub(crate) fn get(&self, peer: &A, mid: u16) -> Option<Cached> {
        let t = self.table.as_ref()?;
        t.cached(t.find(peer, mid)?)
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
                let slot = t.slot_mut(seq);
                if let State::Deferred { .. } = slot.state {
                    slot.state = State::Deferred { ack_sent: true };
                }
            }
        }
    }

    pub(crate) fn insert(&mut self, now: Instant, peer: A, mid: u16, expires: Instant, cached: Cached) {
        let seed = self.seed;
        let t = self.table.get_or_insert_with(|| Box::new(Table::new(seed)));
        t.push(now, self.budget, expires, peer, mid, cached);
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
    hasher: SeedableRandomState,
    /// Entries in insertion order; the slot of sequence number `s` is `queue[s - head]`
    /// (wrapping: fewer than 2^31 entries are ever queued at once).
    queue: VecDeque<Slot<A>>,
    /// The replies of the slots, in runs of slots sharing one, oldest first; the first run may
    /// start before `head`.
    runs: VecDeque<Run>,
    /// The sequence number of the queue's front.
    head: u32,
    bytes: usize,
    early_evictions: u64,
}

impl<A: Eq + Clone + Hash> Table<A> {
    fn new(seed: Option<u64>) -> Self {
        let hasher = match seed {
            Some(s) => SeedableRandomState::with_seed(s, foldhash::SharedSeed::global_fixed()),
            None => SeedableRandomState::random(),
        };
        Table {
            index: HashTable::new(),
            hasher,
            queue: VecDeque::new(),
            runs: VecDeque::new(),
            head: 0,
            bytes: 0,
            early_evictions: 0,
        }
    }

    fn hash(&self, peer: &A, mid: u16) -> u64 {
        self.hasher.hash_one((peer, mid))
    }

    /// Where sequence number `seq` is from the queue's front (negative: already gone).
    fn offset(&self, seq: u32) -> i32 {
        seq.wrapping_sub(self.head) as i32
    }

    /// The reply of the [`State::Reply`] slot of sequence number `seq`: its run's.
    #[inline]
    fn reply_of(&self, seq: u32) -> &Arc<Response> {
        let at = self.offset(seq);
        match self.runs.back() {
            // the newest run first: a server that shares one reply has only that
            Some(run) if self.offset(run.first) <= at => &run.reply,
            _ => &self.runs[self.runs.partition_point(|r| self.offset(r.first) <= at) - 1].reply,
        }
    }

    /// What the slot of sequence number `seq` holds, if live.
    fn cached(&self, seq: u32) -> Option<Cached> {
        match slot_at(&self.queue, self.head, seq).state {
            State::Dead => None,
            State::Reply => Some(Cached::Reply(self.reply_of(seq).clone())),
            State::Deferred { ack_sent } => Some(Cached::Deferred { ack_sent }),
        }
    }

    /// What the slot of sequence number `seq` costs (0 once dead).
    fn cost(&self, seq: u32) -> usize {
        match slot_at(&self.queue, self.head, seq).state {
            State::Dead => 0,
            State::Reply => entry_cost::<A>(Some(self.reply_of(seq))),
            State::Deferred { .. } => entry_cost::<A>(None),
        }
    }

    /// The slot of sequence number `seq`, to change.
    fn slot_mut(&mut self, seq: u32) -> &mut Slot<A> {
        &mut self.queue[position(self.head, seq)]
    }

    /// Takes what the slot of sequence number `seq` holds out (it stays queued, dead).
    fn take(&mut self, seq: u32) -> Option<Cached> {
        let cached = self.cached(seq);
        self.bytes -= self.cost(seq);
        self.slot_mut(seq).state = State::Dead;
        cached
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
        let expires = slot_at(&self.queue, self.head, seq).expires;
        Some((expires, self.take(seq)?))
    }

    /// Queues a new entry, first evicting the oldest until it fits in `budget`; one under the
    /// same key (a rare reuse of a Message ID within its lifetime) is replaced.
    fn push(&mut self, now: Instant, budget: usize, expires: Instant, peer: A, mid: u16, cached: Cached) {
        let (state, reply) = match cached {
            Cached::Reply(reply) => (State::Reply, Some(reply)),
            Cached::Deferred { ack_sent } => (State::Deferred { ack_sent }, None),
        };
        let cost = entry_cost::<A>(reply.as_deref());
        self.evict_to(now, cost, budget);
        self.bytes += cost;
        let seq = self.head.wrapping_add(self.queue.len() as u32);
        if let Some(reply) = reply {
            if !self.runs.back().is_some_and(|run| Arc::ptr_eq(&run.reply, &reply)) {
                room_for_one(&mut self.runs, 1);
                self.runs.push_back(Run { first: seq, reply });
            }
        }
        let hash = self.hash(&peer, mid);
        // the slot is queued before the index may grow: rehashing reads the keys in the queue
        room_for_one(&mut self.queue, 16);
        self.queue.push_back(Slot { expires, peer, mid, state });
        let (queue, head, hasher) = (&self.queue, self.head, &self.hasher);
        let key = |seq: u32| {
            let s = slot_at(queue, head, seq);
            (&s.peer, s.mid)
        };
        // one index operation on the hot path: the key's entry, found or made
        match self.index.entry(hash, |&old| key(old) == key(seq), |&s| hasher.hash_one(key(s))) {
            Entry::Occupied(mut e) => {
                let old = std::mem::replace(e.get_mut(), seq);
                self.take(old);
            }
            Entry::Vacant(e) => {
                e.insert(seq);
            }
        }
    }

    /// Takes the front slot off the queue; if it was live, drops its index entry and returns its
    /// expiry.
    fn pop_front(&mut self) -> Option<Option<Instant>> {
        self.queue.front()?;
        let front = self.head;
        let cost = self.cost(front); // before its run may leave
        let slot = self.queue.pop_front()?;
        self.head = self.head.wrapping_add(1);
        // a run whose slots are all gone leaves (the newest stays for the next entries, unless
        // the queue is empty)
        while self.runs.len() > 1 && self.offset(self.runs[1].first) <= 0 {
            self.runs.pop_front();
        }
        if self.queue.is_empty() {
            self.runs.clear();
        }
        if slot.state == State::Dead {
            return Some(None);
        }
        self.bytes -= cost;
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
    use coap_wire::Code;

    /// An entry for peer `u32` with a 1-byte payload costs 160 + 2·4 + 1 = 169 bytes.
    const COST: usize = ENTRY_OVERHEAD + 8 + 1;

    #[test]
    fn bounded_in_bytes_and_expiring() {
        let mut d = Dedup::new(3 * COST, None);
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
    fn a_fixed_hash_seed_hashes_alike_in_every_cache_and_the_answers_never_depend_on_the_seed() {
        // two caches given one seed hash a key alike, so a simulation's runs take the same steps;
        // two drawn seeds differ, so a peer cannot aim at a bucket of the real stack's cache
        assert_eq!(Table::<u32>::new(Some(7)).hash(&1, 2), Table::<u32>::new(Some(7)).hash(&1, 2));
        assert_ne!(Table::<u32>::new(None).hash(&1, 2), Table::<u32>::new(None).hash(&1, 2));
        // 200 entries of 20 peers under a drawn seed and two fixed ones: the same answers
        let t = Instant::from_nanos;
        for seed in [None, Some(0), Some(7)] {
            let mut d = Dedup::new(usize::MAX, seed);
            for mid in 0..200u16 {
                d.insert(t(0), u32::from(mid % 20), mid, t(1000), Cached::Deferred { ack_sent: mid % 3 == 0 });
            }
            for mid in 0..200u16 {
                let peer = u32::from(mid % 20);
                assert_eq!(d.get(&peer, mid), Some(Cached::Deferred { ack_sent: mid % 3 == 0 }));
                assert_eq!(d.get(&((peer + 1) % 20), mid), None); // a pair never inserted
            }
        }
    }

    #[test]
    fn a_large_reply_takes_the_room_of_many_small_ones_and_replacing_keeps_the_count_right() {
        let t = Instant::from_nanos;
        let mut d = Dedup::new(10 * COST, None);
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
        let mut d = Dedup::new(3 * COST, None);
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
    fn a_shared_reply_is_one_run_and_each_slot_finds_its_own_reply() {
        let t = Instant::from_nanos;
        let mut d = Dedup::new(usize::MAX, None);
        let shared = Arc::new(Response::new(Code::CONTENT, vec![1]));
        let other = Arc::new(Response::new(Code::CONTENT, vec![2]));
        let runs = |d: &Dedup<u32>| d.table.as_ref().map_or(0, |t| t.runs.len());
        // 100 requests answered with the one shared reply: one run
        for mid in 0..100u16 {
            d.insert(t(mid as u64), 1u32, mid, t(1000 + mid as u64), Cached::Reply(shared.clone()));
        }
        assert_eq!(runs(&d), 1);
        // a deferred entry inside the run needs none; another reply starts a run, the shared
        // one after it a third
        d.insert(t(100), 1, 100, t(1100), Cached::Deferred { ack_sent: false });
        d.insert(t(101), 1, 101, t(1101), Cached::Reply(other.clone()));
        d.insert(t(102), 1, 102, t(1102), Cached::Reply(shared.clone()));
        assert_eq!(runs(&d), 3);
        assert_eq!(d.get(&1, 0), Some(Cached::Reply(shared.clone())));
        assert_eq!(d.get(&1, 100), Some(Cached::Deferred { ack_sent: false }));
        assert_eq!(d.get(&1, 101), Some(Cached::Reply(other.clone())));
        assert_eq!(d.get(&1, 102), Some(Cached::Reply(shared.clone())));
        // the first run leaves with its last slot (the deferred one is not a run's)
        d.expire(t(1100));
        assert_eq!((d.len(), runs(&d)), (2, 2));
        d.expire(t(1101));
        assert_eq!((runs(&d), d.get(&1, 102)), (1, Some(Cached::Reply(shared.clone()))));
        // the deferred reply of a new entry comes: its slot moves to the back, where the run of
        // the reply it gets starts
        d.insert(t(103), 1, 103, t(1103), Cached::Deferred { ack_sent: true });
        d.replace(t(104), &1, 103, Cached::Reply(other.clone()));
        assert_eq!((d.get(&1, 103), runs(&d)), (Some(Cached::Reply(other.clone())), 2));
        // once empty, no reply is held
        d.expire(t(2000));
        assert_eq!((d.len(), d.bytes(), runs(&d)), (0, 0, 0));
        assert_eq!((Arc::strong_count(&shared), Arc::strong_count(&other)), (1, 1));
    }

    #[test]
    fn entries_are_found_after_the_index_grows_and_a_reused_id_replaces_its_entry() {
        let t = Instant::from_nanos;
        let mut d = Dedup::new(usize::MAX, None);
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
        // a slot with a 4-byte address is 16 bytes
        assert_eq!(std::mem::size_of::<Slot<u32>>(), 16);
    }
}
