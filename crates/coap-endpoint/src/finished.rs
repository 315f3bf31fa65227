//! Finished exchanges kept until they retire (EXCHANGE_LIFETIME after they finished), so that a
//! late response to one is recognised as a duplicate and acknowledged, not rejected: tombstones
//! of what the live exchange was, without its request or its report.
//!
//! They wait in finishing order, which is retiring order (the lifetime is constant), and a late
//! response finds its tombstone by a scan from the newest: an endpoint holds those of the last
//! 247 s (a simulated client a few dozen at most; the real drivers bound them with
//! `Config::max_finished`). A simulation holds thousands of endpoints, so the layout is tight:
//! a tombstone is 12 bytes. Its peer's address is kept once while every tombstone has the same
//! (a client of one server, as every simulated client is), and in a second queue index for
//! index once they differ (until the tombstones are all gone). Its token is kept apart likewise,
//! in a third queue, only once some token is not empty (an endpoint configured with empty
//! tokens, as the simulator's clients are, never makes it). The queues grow by a quarter rather
//! than double, and give memory back when they are less than half full ([`crate::deque`]).

use std::collections::VecDeque;

use coap_cc::Instant;

use crate::deque::{room_for_one, shrink_if_sparse};
use crate::token::token_matches;

/// One finished exchange: 12 bytes (its retirement time in two words, so that it needs no
/// 8-byte alignment).
#[derive(Debug)]
struct Finished {
    retire_at: [u32; 2],
    mid: u16,
    /// The token's length (bits 0–3), token marking (bit 4), answered (bit 5).
    flags: u8,
    /// Transmissions it sent.
    n_sent: u8,
}

impl Finished {
    fn retire_at(&self) -> Instant {
        Instant::from_nanos((self.retire_at[1] as u64) << 32 | self.retire_at[0] as u64)
    }
}

const LEN_MASK: u8 = 0x0f;
const MARKED: u8 = 1 << 4;
const ANSWERED: u8 = 1 << 5;

/// What is known of a finished exchange, to keep it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tombstone<'a, A> {
    /// When it retires.
    pub(crate) retire_at: Instant,
    /// Its peer.
    pub(crate) dest: A,
    /// Its last Message ID.
    pub(crate) mid: u16,
    /// Its token (at most 8 bytes).
    pub(crate) token: &'a [u8],
    /// Under token marking (the transmission number in front of the token).
    pub(crate) marked: bool,
    /// It got a response (so that a later one is a duplicate).
    pub(crate) answered: bool,
    /// Transmissions it sent.
    pub(crate) n_sent: usize,
}

/// The finished exchanges of an endpoint, oldest first.
#[derive(Debug)]
pub(crate) struct Tombstones<A> {
    entries: VecDeque<Finished>,
    /// The peer of every entry while they all have the same one (None: no entry, or `dests`).
    dest: Option<A>,
    /// The peer of each entry, once they differ.
    dests: Beside<A>,
    /// The token of each entry, once some token is not empty.
    tokens: Beside<[u8; 8]>,
}

/// A queue beside the entries, index for index, made only once it is needed (None until then,
/// and its length always that of the entries once made). Boxed: 8 bytes in every endpoint
/// instead of a queue's 32.
#[derive(Debug)]
#[allow(clippy::box_collection)] // the box is the point: the field's size, not the queue's
struct Beside<T>(Option<Box<VecDeque<T>>>);

impl<T: Clone> Beside<T> {
    fn get(&self) -> Option<&VecDeque<T>> {
        self.0.as_deref()
    }

    /// Makes it, the `older` entries already held reading `fill`.
    fn start(&mut self, older: usize, fill: T) {
        let mut q = VecDeque::with_capacity(older + 1);
        q.resize(older, fill);
        self.0 = Some(Box::new(q));
    }

    /// The newest entry's value, if it is made.
    fn push(&mut self, v: T) {
        if let Some(q) = self.0.as_mut() {
            room_for_one(q, 4);
            q.push_back(v);
        }
    }

    /// The oldest entry leaves.
    fn pop_front(&mut self) {
        if let Some(q) = self.0.as_mut() {
            q.pop_front();
            shrink_if_sparse(q);
        }
    }
}

impl<A> Default for Tombstones<A> {
    fn default() -> Self {
        Tombstones { entries: VecDeque::new(), dest: None, dests: Beside(None), tokens: Beside(None) }
    }
}

impl<A: PartialEq + Clone> Tombstones<A> {
    /// Finished exchanges held.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// None held?
    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Keeps a finished exchange (the newest).
    pub(crate) fn push(&mut self, t: Tombstone<'_, A>) {
        let len = t.token.len().min(8);
        let mut flags = len as u8;
        if t.marked {
            flags |= MARKED;
        }
        if t.answered {
            flags |= ANSWERED;
        }
        if len > 0 && self.tokens.get().is_none() {
            // the first non-empty token: the older ones' (empty) tokens fill in
            self.tokens.start(self.entries.len(), [0; 8]);
        }
        let mut token = [0u8; 8];
        token[..len].copy_from_slice(&t.token[..len]);
        self.tokens.push(token);
        match &self.dest {
            None if self.dests.get().is_none() => self.dest = Some(t.dest),
            Some(d) if *d == t.dest => {}
            Some(_) => {
                // the first other peer: the older ones' (shared) peer fills in
                if let Some(shared) = self.dest.take() {
                    self.dests.start(self.entries.len(), shared);
                }
                self.dests.push(t.dest);
            }
            None => self.dests.push(t.dest),
        }
        room_for_one(&mut self.entries, 4);
        let n_sent = t.n_sent.min(u8::MAX as usize) as u8;
        let at = t.retire_at.as_nanos();
        let retire_at = [at as u32, (at >> 32) as u32];
        self.entries.push_back(Finished { retire_at, mid: t.mid, flags, n_sent });
    }

    /// Forgets the oldest.
    pub(crate) fn pop_front(&mut self) {
        self.entries.pop_front();
        shrink_if_sparse(&mut self.entries);
        self.tokens.pop_front();
        self.dests.pop_front();
        if self.entries.is_empty() {
            (self.dest, self.dests) = (None, Beside(None));
        }
    }

    /// When the oldest retires.
    pub(crate) fn front_retire_at(&self) -> Option<Instant> {
        self.entries.front().map(Finished::retire_at)
    }

    /// Whether finished exchange `i` (0: the oldest) got a response.
    pub(crate) fn answered(&self, i: usize) -> bool {
        self.entries.get(i).is_some_and(|f| f.flags & ANSWERED != 0)
    }

    /// The newest entry of `dest` for which `pred` holds, given the entry and its token.
    fn rfind(&self, dest: &A, pred: impl Fn(&Finished, &[u8]) -> bool) -> Option<usize> {
        let (entries, tokens) = (&self.entries, self.tokens.get());
        match (self.dests.get(), tokens) {
            (None, _) if self.dest.as_ref() != Some(dest) => None,
            (None, None) => entries.iter().rposition(|f| pred(f, &[])),
            (None, Some(t)) => entries.iter().zip(t).rposition(|(f, t)| pred(f, token(f, t))),
            (Some(d), None) => entries.iter().zip(d).rposition(|(f, a)| a == dest && pred(f, &[])),
            (Some(d), Some(t)) => {
                entries.iter().zip(d).zip(t).rposition(|((f, a), t)| a == dest && pred(f, token(f, t)))
            }
        }
    }

    /// The newest finished exchange with `dest` whose last Message ID was `mid`.
    pub(crate) fn find_by_mid(&self, dest: &A, mid: u16) -> Option<usize> {
        self.rfind(dest, |f, _| f.mid == mid)
    }

    /// The newest finished exchange with `dest` that a response with token `received` answers.
    pub(crate) fn find_by_token(&self, dest: &A, received: &[u8]) -> Option<usize> {
        self.rfind(dest, |f, token| token_matches(f.flags & MARKED != 0, token, f.n_sent as usize, received))
    }

    /// Whether a finished exchange with `dest` had `token`.
    pub(crate) fn has_token(&self, dest: &A, token: &[u8]) -> bool {
        self.rfind(dest, |_, t| t == token).is_some()
    }
}

/// Entry `f`'s token, from its slot `t` in the token queue.
fn token<'a>(f: &Finished, t: &'a [u8; 8]) -> &'a [u8] {
    &t[..(f.flags & LEN_MASK) as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stone(at: u64, dest: u32, mid: u16, token: &[u8], answered: bool) -> Tombstone<'_, u32> {
        let retire_at = Instant::from_nanos(at);
        Tombstone { retire_at, dest, mid, token, marked: false, answered, n_sent: 1 }
    }

    #[test]
    fn twelve_bytes_a_tombstone() {
        assert_eq!(std::mem::size_of::<Finished>(), 12);
    }

    #[test]
    fn found_by_mid_and_token_newest_first() {
        let mut t = Tombstones::default();
        t.push(stone(1, 7, 100, &[], true));
        t.push(stone(2, 7, 101, &[], false));
        t.push(stone(3, 8, 100, &[], true));
        assert!(t.tokens.get().is_none()); // empty tokens: no token queue
        assert_eq!((t.find_by_mid(&7, 100), t.find_by_mid(&8, 100), t.find_by_mid(&9, 100)), (Some(0), Some(2), None));
        assert_eq!(t.find_by_token(&7, &[]), Some(1));
        // a token at last: the older ones read as empty
        t.push(stone(4, 7, 102, &[0xab, 0xcd], true));
        assert_eq!(t.tokens.get().map(|q| q.len()), Some(4));
        assert_eq!(t.find_by_token(&7, &[0xab, 0xcd]), Some(3));
        assert_eq!(t.find_by_token(&7, &[]), Some(1));
        assert!(t.has_token(&7, &[0xab, 0xcd]) && !t.has_token(&8, &[0xab, 0xcd]));
        assert!(t.answered(0) && !t.answered(1) && !t.answered(9));
        t.pop_front();
        assert_eq!(
            (t.len(), t.tokens.get().map(|q| q.len()), t.front_retire_at()),
            (3, Some(3), Some(Instant::from_nanos(2)))
        );
        assert_eq!(t.find_by_token(&7, &[0xab, 0xcd]), Some(2));
    }

    #[test]
    fn one_peer_is_kept_once_until_another_comes_and_again_once_all_are_gone() {
        let mut t = Tombstones::default();
        t.push(stone(1, 7, 100, &[], true));
        t.push(stone(2, 7, 101, &[], true));
        assert_eq!((t.dest, t.dests.get().is_none()), (Some(7), true));
        assert_eq!((t.find_by_mid(&7, 101), t.find_by_mid(&8, 101), t.has_token(&8, &[])), (Some(1), None, false));
        // another peer: every entry gets its own, the older ones the shared one
        t.push(stone(3, 8, 101, &[], true));
        assert_eq!((t.dest, t.dests.get().map(|d| d.iter().copied().collect::<Vec<_>>())), (None, Some(vec![7, 7, 8])));
        assert_eq!((t.find_by_mid(&7, 101), t.find_by_mid(&8, 101), t.find_by_mid(&8, 100)), (Some(1), Some(2), None));
        assert_eq!(
            (t.find_by_token(&7, &[]), t.find_by_token(&8, &[]), t.find_by_token(&9, &[])),
            (Some(1), Some(2), None)
        );
        for _ in 0..3 {
            t.pop_front();
        }
        assert_eq!((t.dest, t.dests.get().is_none()), (None, true));
        t.push(stone(4, 9, 102, &[], false));
        assert_eq!(
            (t.dest, t.find_by_mid(&9, 102), t.front_retire_at()),
            (Some(9), Some(0), Some(Instant::from_nanos(4)))
        );
    }

    #[test]
    fn a_retirement_time_past_four_seconds_keeps_every_bit() {
        let mut t = Tombstones::default();
        let at = (1u64 << 40) + (1 << 32) + 12_345; // about 1,100 s, both words in use
        t.push(stone(at, 1, 0, &[], false));
        assert_eq!(t.front_retire_at(), Some(Instant::from_nanos(at)));
    }

    #[test]
    fn a_token_is_kept_from_the_first_tombstone_on() {
        let mut t = Tombstones::default();
        t.push(stone(1, 7, 100, &[1, 2, 3, 4], true));
        t.push(stone(2, 7, 101, &[], true));
        assert_eq!(t.tokens.get().map(|q| q.len()), Some(2));
        assert_eq!((t.find_by_token(&7, &[1, 2, 3, 4]), t.find_by_token(&7, &[])), (Some(0), Some(1)));
        t.pop_front();
        t.pop_front();
        t.push(stone(3, 7, 102, &[5], true));
        assert_eq!((t.tokens.get().map(|q| q.len()), t.find_by_token(&7, &[5])), (Some(1), Some(0)));
    }

    #[test]
    fn a_marked_token_matches_any_transmission_sent() {
        let mut t = Tombstones::default();
        let retire_at = Instant::from_nanos(1);
        t.push(Tombstone { retire_at, dest: 1u32, mid: 5, token: &[9, 9], marked: true, answered: true, n_sent: 3 });
        // the transmission number (0, 1 or 2 for three sent) in front of the token
        assert_eq!(t.find_by_token(&1, &[2, 9, 9]), Some(0));
        assert_eq!(t.find_by_token(&1, &[3, 9, 9]), None);
        assert_eq!(t.find_by_token(&1, &[9, 9]), None);
    }

    #[test]
    fn memory_follows_the_count_down() {
        let mut t = Tombstones::default();
        for i in 0..1000 {
            t.push(stone(i, 1, i as u16, &[], false));
        }
        // grown by quarters: never more than a quarter (or 4) to spare
        assert!(t.entries.capacity() <= 1000 + 1000 / 4 + 4);
        for _ in 0..990 {
            t.pop_front();
        }
        assert_eq!(t.len(), 10);
        assert!(t.entries.capacity() < 20, "capacity {}", t.entries.capacity());
        assert_eq!(t.front_retire_at(), Some(Instant::from_nanos(990)));
    }
}
