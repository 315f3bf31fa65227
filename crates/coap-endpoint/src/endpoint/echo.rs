//! The endpoint's guard against spoofed sources: Echo (RFC 9175 §2.4) verifies a request's
//! source address, and until it is verified what goes to it is held to 3× what it sent.

use super::*;

impl<A, R> Endpoint<A, R>
where
    A: Ord + Clone + core::hash::Hash + core::fmt::Debug + Send + 'static,
    R: RngCore,
{
    /// The amplification limit's state, made if it was not yet, and the configuration it reads.
    #[cold]
    #[inline(never)]
    pub(super) fn guard(&mut self) -> (&mut Guard<A>, &Config) {
        let g = self.rare.parts().guard.get_or_insert_with(|| Box::new(Guard::new(amplification::same::<A>)));
        (g, &self.cfg)
    }

    /// `len` bytes sent to `dest` that always go, for the amplification limit.
    #[cold]
    #[inline(never)]
    pub(super) fn amplification_sent(&mut self, now: Instant, dest: &A, len: usize) {
        let (g, cfg) = self.guard();
        g.charge(now, cfg, dest, len);
    }

    /// `len` bytes received from `from`, for the amplification limit.
    #[cold]
    #[inline(never)]
    pub(super) fn amplification_received(&mut self, now: Instant, from: &A, len: usize) {
        let (g, cfg) = self.guard();
        g.received(now, cfg, from, len);
    }

    /// `from` acknowledged (ACK or RST) a CON we sent it: it receives what we send it, which
    /// verifies it for the amplification limit as an Echo would (unless it has been guessing
    /// Message IDs: [`amplification::ACK_GUESSES`]).
    pub(super) fn acknowledged_by(&mut self, now: Instant, from: &A) {
        if self.cfg.amplification_factor.is_some() {
            let (g, cfg) = self.guard();
            g.acknowledged(now, cfg, from);
        }
    }

    /// `from` sent an ACK or RST that matched nothing outstanding: a guess, for the
    /// amplification limit.
    pub(super) fn guessed_by(&mut self, now: Instant, from: &A) {
        if self.cfg.amplification_factor.is_some() {
            let (g, cfg) = self.guard();
            g.guessed(now, cfg, from);
        }
    }

    /// The offset a guarded endpoint adds to its Message ID counter for `peer`: a keyed hash of
    /// the address, so that the IDs one address sees (consecutive, as RFC 7252 §4.4 wants them
    /// per endpoint) tell nothing of the IDs another is sent.
    #[cold]
    #[inline(never)]
    pub(super) fn mid_offset(&mut self, peer: &A) -> u16 {
        self.keyed_hash(("message id", peer)) as u16
    }

    /// SipHash of `what` keyed by prefixing the endpoint's secret (drawn at its first use: an
    /// endpoint that never uses it draws nothing from its RNG): the Echo values and the Message
    /// ID offsets. Not a cryptographic MAC; against off-path guessing it is enough.
    fn keyed_hash(&mut self, what: impl core::hash::Hash) -> u64 {
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
        (key, what).hash(&mut h);
        h.finish()
    }

    /// Whether the datagram just queued (the last of `pending`, encoded in `out`) may go to
    /// `peer` under the amplification limit: charged if so, else taken back and counted as
    /// withheld. `request_len`: the request it answers (0 if none).
    #[inline]
    pub(super) fn admit_last(&mut self, now: Instant, peer: &A, request_len: usize) -> bool {
        self.cfg.amplification_factor.is_none() || self.admit_last_limited(now, peer, request_len)
    }

    #[cold]
    #[inline(never)]
    pub(super) fn admit_last_limited(&mut self, now: Instant, peer: &A, request_len: usize) -> bool {
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
    pub(super) fn queue_challenge(
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

    /// The Echo value for `peer` at time second `secs`: the second (4 bytes) and a keyed hash of
    /// the peer and the second (8 bytes). Not a cryptographic MAC (SipHash keyed by prefixing a
    /// random secret): it proves an address can receive, against off-path guessing (2^64).
    #[cold]
    #[inline(never)]
    pub(super) fn echo_value(&mut self, peer: &A, secs: u32) -> [u8; 12] {
        let mut v = [0u8; 12];
        v[..4].copy_from_slice(&secs.to_be_bytes());
        v[4..].copy_from_slice(&self.keyed_hash((peer, secs)).to_be_bytes());
        v
    }

    /// Whether `peer` is verified at `now`, or proves it now with a fresh Echo from `msg` (then
    /// it is remembered as verified).
    #[cold]
    #[inline(never)]
    pub(super) fn source_verified(&mut self, now: Instant, peer: &A, msg: &Message<'_>) -> bool {
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

    /// Whether `peer`'s source counts as verified at `now` (it returned an Echo value of ours or
    /// acknowledged a CON we sent it within `echo_lifetime`): sent to without the amplification
    /// limit.
    pub fn source_is_verified(&self, now: Instant, peer: &A) -> bool {
        self.rare.guard().is_some_and(|g| g.is_verified(now, &self.cfg, peer))
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
}

/// The second an Echo value names (seconds of the endpoint's clock).
fn echo_second(now: Instant) -> u32 {
    (now.as_nanos() / 1_000_000_000) as u32
}
