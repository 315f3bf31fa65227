//! The server side: the [`Handler`] trait resources implement, and the bounded deduplication
//! cache of RFC 7252 §4.5.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, DefaultHasher, Hash};

use coap_cc::Instant;
use coap_wire::{Code, Message};

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
    /// Answer later with [`crate::Endpoint::respond`]; a CON gets an empty ACK meanwhile.
    Later,
}

/// The server's resources.
pub trait Handler<A>: Send {
    /// Handles a request (already deduplicated: a retransmission never reaches the handler).
    fn handle(&mut self, now: Instant, from: &A, id: RequestId, request: &Message<'_>) -> Reply;
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
    Reply(Response),
    /// The handler answers later; an empty ACK may have been sent.
    Deferred { ack_sent: bool },
}

#[derive(Debug)]
struct Entry {
    expires: Instant,
    cached: Cached,
}

/// Recently seen (peer, Message ID) pairs with their replies, bounded in number; the oldest
/// entry goes first when full, and entries expire after their lifetime.
///
/// The map is a hash map with a fixed-key hasher: it is only looked up, never iterated
/// (eviction follows `order`), so results do not depend on hashing, and no OS entropy is read.
#[derive(Debug)]
pub(crate) struct Dedup<A> {
    map: HashMap<(A, u16), Entry, BuildHasherDefault<DefaultHasher>>,
    order: VecDeque<(Instant, A, u16)>,
    cap: usize,
}

impl<A: Ord + Clone + Hash> Dedup<A> {
    pub(crate) fn new(cap: usize) -> Self {
        Dedup { map: HashMap::default(), order: VecDeque::new(), cap }
    }

    pub(crate) fn get(&self, peer: &A, mid: u16) -> Option<&Cached> {
        self.map.get(&(peer.clone(), mid)).map(|e| &e.cached)
    }

    pub(crate) fn get_mut(&mut self, peer: &A, mid: u16) -> Option<&mut Cached> {
        self.map.get_mut(&(peer.clone(), mid)).map(|e| &mut e.cached)
    }

    pub(crate) fn insert(&mut self, peer: A, mid: u16, expires: Instant, cached: Cached) {
        while self.map.len() >= self.cap {
            let Some((_, p, m)) = self.order.pop_front() else { break };
            self.map.remove(&(p, m));
        }
        self.order.push_back((expires, peer.clone(), mid));
        self.map.insert((peer, mid), Entry { expires, cached });
    }

    /// Drops expired entries.
    pub(crate) fn expire(&mut self, now: Instant) {
        while let Some((t, _, _)) = self.order.front() {
            if *t > now {
                break;
            }
            let (_, p, m) = self.order.pop_front().expect("front exists");
            if self.map.get(&(p.clone(), m)).is_some_and(|e| e.expires <= now) {
                self.map.remove(&(p, m));
            }
        }
    }

    /// Entries held.
    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_and_expiring() {
        let mut d = Dedup::new(3);
        let t = Instant::from_nanos;
        for mid in 0..10u16 {
            d.insert(1u32, mid, t(100 + mid as u64), Cached::Reply(Response::new(Code::CONTENT, vec![mid as u8])));
            assert!(d.len() <= 3);
        }
        assert!(d.get(&1, 6).is_none() && d.get(&1, 7).is_some());
        d.expire(t(108));
        assert_eq!(d.len(), 1);
        assert_eq!(d.get(&1, 9), Some(&Cached::Reply(Response::new(Code::CONTENT, vec![9]))));
        d.expire(t(109));
        assert_eq!(d.len(), 0);
    }
}
