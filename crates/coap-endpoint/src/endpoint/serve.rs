//! The endpoint's server request path: a request checked, deduplicated and handed to the
//! handler, and its reply sent now, later (separate), or again to a duplicate.

use super::*;

impl<A, R> Endpoint<A, R>
where
    A: Ord + Clone + core::hash::Hash + core::fmt::Debug + Send + 'static,
    R: RngCore,
{
    /// The server side, made (serving [`NotFound`]) if it was not yet.
    pub(super) fn server_side(&mut self) -> &mut ServerSide<A> {
        let cfg = &self.cfg;
        self.srv.get_or_insert_with(|| ServerSide::new(Box::new(NotFound), cfg))
    }

    /// Retransmits the CON just queued (the last of `pending`) as RFC 7252 §4.2 says, until it is
    /// acknowledged (a separate response or a CON notification).
    #[cold]
    #[inline(never)]
    pub(super) fn track_con(&mut self, now: Instant, peer: &A, mid: u16) {
        if let Some(&Pending::Bytes { start, len, .. }) = self.pending.back() {
            let bytes = self.out[start..start + len].to_vec();
            if self.server_side().separate.len() < self.cfg.max_deferred {
                let rto = coap_cc::rng::uniform(&mut self.rng, SEPARATE_ACK_TIMEOUT, SEPARATE_ACK_TIMEOUT * 1.5);
                let out = SeparateOut { bytes, deadline: now + Duration::from_secs_f64(rto), rto, retransmissions: 0 };
                self.server_side().separate.insert((peer.clone(), mid), out);
            }
        }
    }

    pub(super) fn on_request(&mut self, now: Instant, from: A, msg: &Message<'_>, request_len: usize) {
        let con = msg.ty == MessageType::Con;
        match self.server_side().dedup.get(&from, msg.message_id) {
            Some(Cached::Reply(resp)) => {
                // a duplicate: the same response again, echoing this transmission's token and
                // number (if it fits the amplification limit: else nothing)
                let ty = if con { MessageType::Ack } else { MessageType::Non };
                let mid = if con { msg.message_id } else { self.alloc_mid(&from) };
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
                    if con { (MessageType::Ack, msg.message_id) } else { (MessageType::Non, self.alloc_mid(&from)) };
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

    /// Queues a response (see [`encode_response`]).
    pub(super) fn queue_response(
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
    pub(super) fn queue_shared(
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
            (true, true) => (MessageType::Con, self.alloc_mid(&d.peer)),
            (false, _) => (MessageType::Non, self.alloc_mid(&d.peer)),
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

    /// The deadlines of replies: empty ACKs of slow handlers, separate responses'
    /// retransmissions (an unacknowledged CON notification ends its observation).
    #[cold]
    #[inline(never)]
    pub(super) fn reply_timeouts(&mut self, now: Instant) {
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
}
