//! The endpoint's client exchanges: starting them under the controller, their retransmissions,
//! and what ends them (an ACK, a separate response, a Reset, the last timeout).

use super::*;

impl<A, R> Endpoint<A, R>
where
    A: Ord + Clone + core::hash::Hash + core::fmt::Debug + Send + 'static,
    R: RngCore,
{
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

    /// The next Message ID for `dest`: the counter, plus on a guarded endpoint (amplification
    /// limit on) the address's keyed offset, so an off-path attacker cannot predict the IDs
    /// another address is sent (whose acknowledgement verifies it).
    pub(super) fn alloc_mid(&mut self, dest: &A) -> u16 {
        self.next_mid = self.next_mid.wrapping_add(1);
        if self.cfg.amplification_factor.is_some() {
            return self.next_mid.wrapping_add(self.mid_offset(dest));
        }
        self.next_mid
    }

    pub(super) fn alloc_token(&mut self, dest: &A) -> Token {
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
    pub(super) fn try_start(&mut self, now: Instant, dest: &A) {
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
            let mid = self.alloc_mid(dest);
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
    pub(super) fn finish(&mut self, now: Instant, id: ExchangeId, outcome: Outcome, answer: Answer, outstanding: bool) {
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
    pub(super) fn retire_oldest(&mut self) {
        self.finished.pop_front();
        if let Some(r) = self.rare.kept_mut().and_then(VecDeque::pop_front) {
            self.events.push_back(Event::Retired(r));
        }
    }

    /// Counts a response to finished exchange `i` that arrived after the first one.
    pub(super) fn duplicate_of(&mut self, i: usize) {
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

    #[cold]
    #[inline(never)]
    pub(super) fn on_reset(&mut self, now: Instant, from: A, mid: u16) {
        let con = self.srv.as_deref_mut().and_then(|s| s.separate.remove(&(from.clone(), mid)));
        if con.is_some() {
            self.acknowledged_by(now, &from);
        }
        let mut matched = con.is_some();
        if let Some(o) = self.rare.obs() {
            matched |= o.observers.iter().any(|ob| ob.peer == from && ob.last_mid == Some(mid));
            let which = con.map_or(Err(mid), |c| Ok(token_of(&c.bytes)));
            self.drop_observers(&[(from.clone(), which)]);
        }
        let Some(id) = self.keys.by_mid(&self.exchanges, &from, mid) else {
            if !matched {
                self.guessed_by(now, &from);
            }
            return;
        };
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

    pub(super) fn on_ack(&mut self, now: Instant, from: A, msg: &Message<'_>) {
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
            match ours {
                Some(_) => self.acknowledged_by(now, &from),
                None => self.guessed_by(now, &from),
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

    #[inline(never)]
    pub(super) fn on_separate_response(&mut self, now: Instant, from: A, msg: &Message<'_>) {
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

    pub(super) fn on_rto(&mut self, now: Instant, id: ExchangeId, timer: &mut ExchangeTimer) {
        let Some(ex) = self.exchanges.get_mut(&id) else { return };
        ex.expired += 1;
        let Some(peer) = self.peers.get_mut(&ex.dest) else { return };
        // the timer that expired: an exchange that fails as its last retransmission goes out
        // (Erbium) ends with it, never arming the one the controller doubles to
        let expired = *timer;
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
                    peer.cc.on_failure(now, &expired);
                    self.finish(now, id, Outcome::Failed(FailReason::Timeout), Answer::default(), true);
                }
            }
            _ => {
                peer.cc.on_failure(now, timer);
                self.finish(now, id, Outcome::Failed(FailReason::Timeout), Answer::default(), true);
            }
        }
    }
}
