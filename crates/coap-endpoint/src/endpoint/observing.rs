//! The endpoint's side of Observe (RFC 7641): observations it holds as a client, observers it
//! serves and notifies as a server.

use super::*;

impl<A, R> Endpoint<A, R>
where
    A: Ord + Clone + core::hash::Hash + core::fmt::Debug + Send + 'static,
    R: RngCore,
{
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
            let mid = self.alloc_mid(&peer);
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
    pub(super) fn drop_observers(&mut self, gone: &[(A, Result<Token, u16>)]) {
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

    /// A request with Observe 0 whose response carries Observe: an observation to follow (room
    /// allowing: a cancelled one gives way first).
    pub(super) fn maybe_observe(&mut self, now: Instant, id: ExchangeId, ex: &Exchange<A>, answer: &Answer) {
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
    pub(super) fn on_notification(&mut self, now: Instant, from: &A, msg: &Message<'_>) -> bool {
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

    /// Adds the sender of `msg` (a GET with Observe 0 answered by `resp`) as an observer.
    #[cold]
    #[inline(never)]
    pub(super) fn add_observer(&mut self, from: &A, msg: &Message<'_>, resp: &Response) {
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
}
