//! The amplification limit: what a server may send to a source that has not shown it receives
//! what is sent to it. RFC 9175 §2.4 asks a server to verify a source with Echo before it sends
//! much more than the source sent; this module applies that rule as QUIC bounds an unvalidated
//! address (RFC 9000 §8.1), to every datagram of the server role instead of one kind of answer.
//!
//! # The rule
//! * Every byte the server role sends to an unverified source (responses, Echo challenges,
//!   separate responses, notifications, their retransmissions, empty ACKs and RSTs) counts
//!   against `amplification_factor` (3) × the bytes received from it, plus
//!   `amplification_allowance` (1,152 bytes, one datagram of RFC 7252 §4.6, so that the small
//!   answers of clients that never answer Echo challenges, such as aiocoap's and Californium's,
//!   go unchallenged). A response that does not fit is replaced by 4.01 + Echo if that fits,
//!   else nothing is sent; a notification or a retransmission that does not fit is not sent,
//!   and its observation or separate response ends.
//! * A source is verified, and sent to without limit for `echo_lifetime` (60 s), when it
//!   returns a fresh Echo value of ours, or acknowledges (ACK or RST) a CON we sent it. Neither
//!   can be guessed off-path: the Echo value is a keyed hash, and a guarded endpoint's Message
//!   IDs are its counter plus a keyed per-address offset, so an attacker that reads its own
//!   Message IDs learns nothing of a victim's; and a source whose ACKs and RSTs name
//!   [`ACK_GUESSES`] Message IDs that match nothing outstanding in a window is verified by
//!   none of its acknowledgements until the window ends (a blind sweep of the 65,536 IDs
//!   succeeds with probability about 2^-13 per window and address, not 1). An acknowledgement
//!   from a source without an account (the table full) verifies nothing either.
//! * An account lasts one `echo_lifetime` from the source's first datagram, then starts afresh.
//!   Over T seconds a source that never proves anything is sent at most factor × what it sent
//!   + allowance × ⌈T / echo_lifetime⌉.
//! * State is bounded: at most `max_accounts` accounts (16,384; about 100 bytes each) and
//!   `max_verified` verified sources. While every account is inside its window a new source
//!   gets none, and each answer to it is held to factor × the request it answers (no
//!   allowance): under a flood of new sources the limit tightens instead of forgetting.
//!   Accounts go in the order they were made (a queue): O(1) amortised per datagram.
//! * Accounts and verification are kept per *source key*, which the driver chooses
//!   ([`crate::Endpoint::with_source_key`]): the real-network drivers key by IP address, so that
//!   a spoofer cannot multiply the allowance over a victim's ports.
//!
//! Written here rather than taken from a crate: the rule is this protocol's, and its state is
//! two ordered maps and two queues.

use std::collections::{BTreeMap, VecDeque};

use coap_cc::Instant;

use crate::Config;

/// What one unverified source sent and was sent in its current window.
#[derive(Debug, Clone, Copy)]
struct Account {
    received: u64,
    sent: u64,
    /// ACKs and RSTs that matched nothing outstanding.
    guesses: u32,
}

/// Acknowledgements matching nothing that a source may send in one window before none of its
/// acknowledgements verifies it: a few for the legitimate late duplicate (an ACK of a CON
/// retransmitted because the first ACK was slow), few enough that guessing a 16-bit Message ID
/// stays hopeless.
pub const ACK_GUESSES: u32 = 4;

/// The amplification limit's state (made at the first datagram of an endpoint that limits).
#[derive(Debug)]
pub(crate) struct Guard<A> {
    /// The key of the Echo values, drawn at the first challenge (an endpoint that never
    /// challenges draws nothing from its RNG).
    pub echo_key: Option<u64>,
    source_key: fn(&A) -> A,
    verified: BTreeMap<A, Instant>,
    /// (when, source) in verification order: expiry and the size bound follow it.
    verified_order: VecDeque<(Instant, A)>,
    accounts: BTreeMap<A, Account>,
    /// (made at, source) in the order the accounts were made.
    account_order: VecDeque<(Instant, A)>,
    /// 4.01 + Echo responses sent.
    pub challenges: u64,
    /// Datagrams not sent because they did not fit.
    pub withheld: u64,
}

/// The identity: each address its own source.
pub(crate) fn same<A: Clone>(a: &A) -> A {
    a.clone()
}

impl<A: Ord + Clone> Guard<A> {
    pub fn new(source_key: fn(&A) -> A) -> Self {
        Guard {
            echo_key: None,
            source_key,
            verified: BTreeMap::new(),
            verified_order: VecDeque::new(),
            accounts: BTreeMap::new(),
            account_order: VecDeque::new(),
            challenges: 0,
            withheld: 0,
        }
    }

    pub fn set_source_key(&mut self, key: fn(&A) -> A) {
        self.source_key = key;
    }

    /// Forgets the accounts whose window has ended.
    fn expire(&mut self, now: Instant, cfg: &Config) {
        while let Some((made, _)) = self.account_order.front() {
            if now < *made + cfg.echo_lifetime {
                break;
            }
            if let Some((_, k)) = self.account_order.pop_front() {
                self.accounts.remove(&k);
            }
        }
    }

    /// Whether `peer`'s source is verified at `now`.
    pub fn is_verified(&self, now: Instant, cfg: &Config, peer: &A) -> bool {
        let key = (self.source_key)(peer);
        self.verified.get(&key).is_some_and(|&t| now < t + cfg.echo_lifetime)
    }

    /// Remembers `peer`'s source as verified at `now` (forgetting the expired, and the oldest
    /// while full).
    pub fn verify(&mut self, now: Instant, cfg: &Config, peer: &A) {
        let key = (self.source_key)(peer);
        // queue slots of a source verified again since are stale and go with them (so the
        // queue cannot outgrow the map for long)
        while let Some(&(t, _)) = self.verified_order.front() {
            if now < t + cfg.echo_lifetime && self.verified.len() < cfg.max_verified {
                break;
            }
            let Some((t, k)) = self.verified_order.pop_front() else { break };
            if self.verified.get(&k) == Some(&t) {
                self.verified.remove(&k);
            }
        }
        self.verified.insert(key.clone(), now);
        self.verified_order.push_back((now, key));
    }

    /// `peer` acknowledged (ACK or RST) a CON we sent it: verified, unless its source has
    /// guessed too often in this window or has no account (then nothing). Whether it is
    /// verified now.
    pub fn acknowledged(&mut self, now: Instant, cfg: &Config, peer: &A) -> bool {
        let key = (self.source_key)(peer);
        let ok = self.is_verified(now, cfg, peer) || self.accounts.get(&key).is_some_and(|a| a.guesses < ACK_GUESSES);
        if ok {
            self.verify(now, cfg, peer);
        }
        ok
    }

    /// `peer` sent an ACK or RST whose Message ID matched nothing outstanding: a guess.
    pub fn guessed(&mut self, now: Instant, cfg: &Config, peer: &A) {
        self.expire(now, cfg);
        let key = (self.source_key)(peer);
        if let Some(a) = self.accounts.get_mut(&key) {
            a.guesses = a.guesses.saturating_add(1);
        }
    }

    /// `len` bytes received from `peer`.
    pub fn received(&mut self, now: Instant, cfg: &Config, peer: &A, len: usize) {
        self.expire(now, cfg);
        let key = (self.source_key)(peer);
        if let Some(a) = self.accounts.get_mut(&key) {
            a.received += len as u64;
        } else if self.accounts.len() < cfg.max_accounts && !self.is_verified(now, cfg, peer) {
            self.accounts.insert(key.clone(), Account { received: len as u64, sent: 0, guesses: 0 });
            self.account_order.push_back((now, key));
        }
    }

    /// Whether `len` more bytes may go to `peer` now; charged if so. `request_len`: the
    /// request they answer (0 if none), the bound for a source without an account.
    pub fn admit(&mut self, now: Instant, cfg: &Config, peer: &A, len: usize, request_len: usize) -> bool {
        let Some(factor) = cfg.amplification_factor else { return true };
        if self.is_verified(now, cfg, peer) {
            return true;
        }
        self.expire(now, cfg);
        let key = (self.source_key)(peer);
        let ok = match self.accounts.get_mut(&key) {
            Some(a) => {
                let budget = u64::from(factor) * a.received + cfg.amplification_allowance as u64;
                let ok = a.sent + len as u64 <= budget;
                if ok {
                    a.sent += len as u64;
                }
                ok
            }
            None => len <= factor as usize * request_len,
        };
        if !ok {
            self.withheld += 1;
        }
        ok
    }

    /// `len` bytes sent to `peer` that always go (an empty ACK or RST answering a datagram,
    /// which is never smaller): counted.
    pub fn charge(&mut self, now: Instant, cfg: &Config, peer: &A, len: usize) {
        self.expire(now, cfg);
        let key = (self.source_key)(peer);
        if let Some(a) = self.accounts.get_mut(&key) {
            a.sent += len as u64;
        }
    }

    /// Accounts held.
    #[cfg(test)]
    pub fn accounts(&self) -> usize {
        self.accounts.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coap_cc::CcConfig;

    fn cfg() -> Config {
        let mut c = Config::new(CcConfig::parse("default").unwrap());
        c.amplification_factor = Some(3);
        c.amplification_allowance = 100;
        c.max_accounts = 2;
        c
    }
    fn t(s: u64) -> Instant {
        Instant::from_nanos(s * 1_000_000_000)
    }

    #[test]
    fn a_source_gets_three_times_what_it_sent_plus_the_allowance() {
        let (c, mut g) = (cfg(), Guard::new(same::<u8>));
        g.received(t(0), &c, &1, 20);
        // 3 × 20 + 100 = 160 bytes in all
        assert!(g.admit(t(0), &c, &1, 150, 20));
        assert!(!g.admit(t(0), &c, &1, 11, 20));
        assert!(g.admit(t(0), &c, &1, 10, 20));
        assert_eq!(g.withheld, 1);
        // 10 more bytes received: 30 more may go
        g.received(t(1), &c, &1, 10);
        assert!(!g.admit(t(1), &c, &1, 31, 10));
        assert!(g.admit(t(1), &c, &1, 30, 10));
        // charged bytes count too
        g.received(t(2), &c, &1, 4);
        g.charge(t(2), &c, &1, 4);
        assert!(!g.admit(t(2), &c, &1, 9, 4));
        assert!(g.admit(t(2), &c, &1, 8, 4));
    }

    #[test]
    fn an_account_starts_afresh_after_its_window_and_verification_lifts_the_limit() {
        let (c, mut g) = (cfg(), Guard::new(same::<u8>));
        g.received(t(0), &c, &1, 10);
        assert!(g.admit(t(0), &c, &1, 130, 10));
        assert!(!g.admit(t(59), &c, &1, 1, 0));
        // 60 s after it was made the account is gone; the next datagram makes a new one
        g.received(t(60), &c, &1, 10);
        assert!(g.admit(t(60), &c, &1, 130, 10));
        g.verify(t(61), &c, &1);
        assert!(g.admit(t(61), &c, &1, 100_000, 0));
        assert!(!g.admit(t(121), &c, &1, 1, 0), "verified for echo_lifetime only");
    }

    #[test]
    fn a_full_table_holds_new_sources_to_three_times_their_request() {
        let (c, mut g) = (cfg(), Guard::new(same::<u8>));
        g.received(t(0), &c, &1, 10);
        g.received(t(0), &c, &2, 10);
        g.received(t(0), &c, &3, 10);
        assert_eq!(g.accounts(), 2);
        assert!(!g.admit(t(0), &c, &3, 31, 10));
        assert!(g.admit(t(0), &c, &3, 30, 10));
        assert!(!g.admit(t(0), &c, &3, 1, 0), "nothing unasked");
        // the window ends for the first two: room again
        g.received(t(60), &c, &3, 10);
        assert_eq!(g.accounts(), 1);
        assert!(g.admit(t(60), &c, &3, 130, 10));
    }

    #[test]
    fn acknowledgements_verify_until_the_source_has_guessed_too_often() {
        let (c, mut g) = (cfg(), Guard::new(same::<u8>));
        // no account (never sent anything counted): an acknowledgement proves nothing
        assert!(!g.acknowledged(t(0), &c, &1));
        g.received(t(0), &c, &1, 4);
        g.received(t(0), &c, &2, 4);
        // source 1 matches at once: verified
        assert!(g.acknowledged(t(0), &c, &1));
        assert!(g.is_verified(t(0), &c, &1));
        // source 2 names four IDs that match nothing, then one that matches: not verified
        for _ in 0..ACK_GUESSES {
            g.guessed(t(1), &c, &2);
        }
        assert!(!g.acknowledged(t(1), &c, &2));
        assert!(!g.is_verified(t(1), &c, &2));
        // three guesses leave a source its acknowledgement: the budget is four per window
        g.received(t(60), &c, &2, 4);
        for _ in 0..ACK_GUESSES - 1 {
            g.guessed(t(60), &c, &2);
        }
        assert!(g.acknowledged(t(60), &c, &2), "a new window, a new budget");
    }

    #[test]
    fn the_source_key_joins_addresses() {
        let (c, mut g) = (cfg(), Guard::new(|a: &u8| a / 10));
        // 11 and 12 share source 1: one account, one allowance
        g.received(t(0), &c, &11, 10);
        g.received(t(0), &c, &12, 10);
        assert_eq!(g.accounts(), 1);
        assert!(g.admit(t(0), &c, &11, 100, 10));
        assert!(g.admit(t(0), &c, &12, 60, 10));
        assert!(!g.admit(t(0), &c, &12, 1, 10));
        g.verify(t(1), &c, &12);
        assert!(g.is_verified(t(1), &c, &13));
        assert!(!g.is_verified(t(1), &c, &21));
    }
}
