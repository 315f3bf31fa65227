//! CoAP over UDP (RFC 7252) on every host: the real `coap_endpoint::Endpoint` with its
//! `coap_cc` controller, driven by the engine.
//!
//! A client host runs its workload against its server: every exchange the workload asks for is
//! one request (with a fresh start, its controller is reset: a new short-lived device). A server
//! host answers with its handler. A host's endpoint has one timer slot, re-armed whenever its
//! next deadline changes; a client whose workload waits ([`Next::At`]) has a second one, its
//! application timer. A response that arrives as a duplicate (the endpoint counts it) makes
//! the packet unnecessary, which the medium books as wasted capacity.

use coap_cc::Instant;
use coap_endpoint::{
    Endpoint, Event, ExchangeReport, Handler, PreparedRequest, Reply, Request, RequestId, Response, Tally,
};
use coap_wire::{CoapOption, Code, Message, MessageType, Options};
use netmodel::{ChaCha8Small, HostId, Next, Packet, PacketId};

use crate::engine::{Context, Records, Stack, TimerSlot};
use crate::record::{ClientRecord, Detail, ExchangeStats};
use runstats::Rtts;

/// The seed of every simulated server's deduplication hash
/// ([`coap_endpoint::Config::dedup_hash_seed`]): fixed, so that every run takes the same steps
/// (the fastest build is trained on such runs). Results never depend on it.
pub const DEDUP_HASH_SEED: u64 = 0;

/// The endpoint's timer slot of a host.
const ENDPOINT_TIMER: u32 = 0;
/// The slot of a waiting workload's next start.
const APP_TIMER: u32 = 1;
/// The slot of a background source's next NON.
const BG_TIMER: u32 = 2;

/// A send that has not returned is forgotten after this ([`UdpStack::with_send_returns`]): a
/// mote's blocking send returns within milliseconds, so an older one never will (a medium that
/// did not report it), and the host's timer must not wait for it.
const SEND_RETURN_LIMIT: coap_cc::Duration = coap_cc::Duration::from_secs(1);

/// Sends a host may have outstanding whose return it waits for (an Erbium client has one).
const UNRETURNED_MAX: usize = 8;

/// A confirmable datagram whose send has not returned ([`UdpStack::with_send_returns`]).
#[derive(Debug, Clone, Copy)]
struct Unreturned {
    packet: PacketId,
    dest: HostId,
    mid: u16,
    at: Instant,
}

/// One-way NON traffic beside the workload (RTTCOAP's background notifications): each source
/// sends NON 2.05 notifications (token 2, a 3-byte Observe, the payload) to the sink at stepping
/// rates, under no congestion control, from its first arrival (a random phase in the first
/// interval, its own [`netmodel::Stream::Background`], or when its workload starts if that is
/// later) on; the sink takes them without an answer, as an observer takes NON notifications,
/// and counts them.
#[derive(Debug)]
pub struct Background {
    sink: HostId,
    steps: netmodel::RateSteps,
    until_ns: u64,
    message: Vec<u8>,
    /// Per host: its timer, first arrival and last send, ns (None: not a source).
    sources: Vec<Option<(TimerSlot, u64, u64)>>,
    sent: u64,
    delivered: u64,
}

impl Background {
    /// `sources` (host ids) send to `sink` with `steps` until `until_ns`, notifications of
    /// `payload` bytes; phases drawn for replication `rep` of a run seeded with `seed`.
    pub fn new(
        sources: &[HostId],
        sink: HostId,
        steps: netmodel::RateSteps,
        until_ns: u64,
        payload: usize,
        seed: u64,
        rep: u32,
    ) -> Self {
        let n = sources.iter().map(|h| h.index() + 1).max().unwrap_or(0);
        let mut slots: Vec<Option<(TimerSlot, u64, u64)>> = (0..n).map(|_| None).collect();
        for &h in sources {
            let mut rng = netmodel::Stream::Background(h.0).rng(seed, rep);
            let phase = coap_cc::rng::uniform(&mut rng, 0.0, steps.first() as f64) as u64;
            slots[h.index()] = Some((TimerSlot::default(), phase, phase));
        }
        // a NON 2.05 with a 2-byte token and a 3-byte Observe, encoded by the codec
        let observe = [CoapOption { number: coap_wire::registry::OBSERVE, value: &[0, 0, 1] }];
        let body = vec![0x2a; payload];
        let m = Message {
            ty: MessageType::Non,
            code: Code::CONTENT,
            message_id: 0,
            token: &[0xb6, 0xb6],
            options: Options::from_list(&observe),
            payload: &body,
        };
        let message = m.to_vec().expect("a valid notification");
        Background { sink, steps, until_ns, message, sources: slots, sent: 0, delivered: 0 }
    }

    /// A NON response (version 1, type NON, code class 2): what the sources send.
    fn is_notification(bytes: &[u8]) -> bool {
        bytes.len() >= 2 && bytes[0] >> 4 == 0x5 && bytes[1] >> 5 == 2
    }
}

/// Serves one fixed response to every request, shared (the server's deduplication cache holds
/// it without a copy per request).
#[derive(Debug)]
pub struct FixedResponse(pub std::sync::Arc<Response>);

impl FixedResponse {
    /// Serves `response`.
    pub fn new(response: Response) -> Self {
        FixedResponse(std::sync::Arc::new(response))
    }

    /// 2.05 with this payload and no option.
    pub fn payload(payload: Vec<u8>) -> Self {
        FixedResponse::new(Response::new(Code::CONTENT, payload))
    }
}

impl Handler<HostId> for FixedResponse {
    fn handle(&mut self, _: Instant, _: &HostId, _: RequestId, _: &Message<'_>) -> Reply {
        Reply::Shared(self.0.clone())
    }
}

/// One host's endpoint.
#[derive(Debug)]
pub struct UdpHost {
    ep: Endpoint<HostId, ChaCha8Small>,
    timer: TimerSlot,
    /// When a waiting workload's next exchange starts.
    app_timer: TimerSlot,
    /// Where its workload's requests go (None: it runs no workload).
    server: Option<HostId>,
    /// Its record so far.
    tally: Tally,
    /// About how many exchanges it runs.
    expected: u32,
    /// Its CON datagrams whose send has not returned, oldest first.
    unreturned: std::collections::VecDeque<Unreturned>,
}

impl UdpHost {
    /// A host that runs a workload against `server` (expecting about `exchanges` exchanges).
    pub fn client(ep: Endpoint<HostId, ChaCha8Small>, server: HostId, exchanges: usize) -> Self {
        let expected = u32::try_from(exchanges).unwrap_or(u32::MAX);
        UdpHost { server: Some(server), expected, ..UdpHost::server(ep) }
    }

    /// A host that only answers (its endpoint has a handler).
    pub fn server(ep: Endpoint<HostId, ChaCha8Small>) -> Self {
        UdpHost {
            ep,
            timer: TimerSlot::default(),
            app_timer: TimerSlot::default(),
            server: None,
            tally: Tally::default(),
            expected: 0,
            unreturned: std::collections::VecDeque::new(),
        }
    }
}

/// Every host's endpoint.
#[derive(Debug)]
pub struct UdpStack {
    hosts: Vec<UdpHost>,
    background: Option<Background>,
    request: PreparedRequest,
    /// Bytes added to every CoAP message on the network (IP and UDP headers).
    overhead: u32,
    buf: Vec<u8>,
    detail: Detail,
    stats: ExchangeStats,
    /// Every exchange's report with its host (only with [`Detail::Exchanges`]).
    reports: Vec<(HostId, ExchangeReport<HostId>)>,
    /// The medium reports when a send returns ([`UdpStack::with_send_returns`]).
    send_returns: bool,
}

impl UdpStack {
    /// Hosts (indexed by [`HostId`]) sending `request` for every exchange; `overhead` header
    /// bytes are added to each datagram's size. Keeps [`Detail::Summary`].
    pub fn new(hosts: Vec<UdpHost>, request: Request, overhead: u32) -> Self {
        // one RTT per expected exchange reserved at once, up to the exact ones' cap
        let rtt = Rtts::with_capacity(hosts.iter().map(|h| h.expected as usize).sum());
        UdpStack {
            hosts,
            background: None,
            request: request.into(),
            overhead,
            buf: Vec::with_capacity(1500),
            detail: Detail::Summary,
            stats: ExchangeStats { rtt, ..Default::default() },
            reports: Vec::new(),
            send_returns: false,
        }
    }

    /// Adds one-way background NON traffic.
    pub fn with_background(mut self, background: Background) -> Self {
        self.background = Some(background);
        self
    }

    /// A background source's next NON goes on its timer (the first: at its phase, or now).
    fn arm_background<C: Context<Vec<u8>>>(&mut self, ctx: &mut C, h: HostId, first: bool) {
        let Some(bg) = self.background.as_mut() else { return };
        let (steps, until) = (&bg.steps, bg.until_ns);
        let Some(Some((timer, phase, last))) = bg.sources.get_mut(h.index()) else { return };
        let next = if first { Some((*phase).max(ctx.now().as_nanos())) } else { steps.next(*last, until) };
        if let Some(at) = next.filter(|&t| t < until) {
            *last = at;
            timer.rearm(ctx, h, BG_TIMER, Some(Instant::from_nanos(at)));
        }
    }

    /// Over a medium whose sends block and that reports when each returns
    /// ([`netmodel::Schedule::send_returned`]; a Cooja mote's): a confirmable transmission's
    /// time and timer start when its send returns ([`Endpoint::send_returned`], as Erbium arms
    /// them), and the host's endpoint timer waits while one of its sends has not returned (for
    /// at most [`SEND_RETURN_LIMIT`]).
    pub fn with_send_returns(mut self) -> Self {
        self.send_returns = true;
        self
    }

    /// Keeps `detail` of every exchange.
    pub fn with_detail(mut self, detail: Detail) -> Self {
        self.detail = detail;
        if detail == Detail::Exchanges {
            self.reports.reserve(self.hosts.iter().map(|h| h.expected as usize).sum());
        }
        self
    }

    /// Folds a retired exchange's report into `host`'s record and the statistics.
    fn retired(&mut self, h: HostId, r: ExchangeReport<HostId>) {
        let host = &mut self.hosts[h.index()];
        host.tally.add(&r);
        self.stats.add(r.retransmissions(), r.rtt().map(|d| d.as_nanos()));
        if self.detail == Detail::Exchanges {
            self.reports.push((h, r));
        }
    }

    /// Opens the exchange the workload asked for, or sets the timer for it.
    fn issue<C: Context<Vec<u8>>>(&mut self, ctx: &mut C, h: HostId, next: Next) {
        let now = ctx.now();
        let host = &mut self.hosts[h.index()];
        if let Next::At(at) = next {
            host.app_timer.rearm(ctx, h, APP_TIMER, Some(at));
            return;
        }
        let (Next::Exchange { fresh }, Some(server)) = (next, host.server) else { return };
        if fresh {
            host.ep.reset_cc(&server); // a new short-lived device
        }
        // the request is small and valid: it always fits the maximum message size
        let _ = host.ep.request(now, server, self.request.clone());
    }

    /// An open-loop client's next arrival goes on its application timer.
    fn arm_arrival<C: Context<Vec<u8>>>(&mut self, ctx: &mut C, h: HostId) {
        if let Some(at) = ctx.next_arrival(h) {
            self.hosts[h.index()].app_timer.rearm(ctx, h, APP_TIMER, Some(at));
        }
    }

    /// Sends what the endpoint has, follows its events, re-arms its timer.
    fn after<C: Context<Vec<u8>>>(&mut self, ctx: &mut C, h: HostId) {
        // a finished exchange may start the next one, whose request must go out too
        loop {
            let host = &mut self.hosts[h.index()];
            while let Some(tx) = host.ep.poll_transmit(&mut self.buf) {
                debug_assert_eq!(tx.len, self.buf.len());
                let mid = match Message::peek_header(&self.buf) {
                    Some((MessageType::Con, mid)) if self.send_returns => Some(mid),
                    _ => None,
                };
                // the datagram's buffer becomes the packet's; the packet slot's old one is next
                let buf = &mut self.buf;
                let packet = ctx.send(h, tx.dest, tx.len as u32 + self.overhead, |p| std::mem::swap(p, buf));
                if let Some(mid) = mid {
                    if host.unreturned.len() == UNRETURNED_MAX {
                        host.unreturned.pop_front();
                    }
                    host.unreturned.push_back(Unreturned { packet, dest: tx.dest, mid, at: ctx.now() });
                }
            }
            let Some(ev) = host.ep.poll_event() else { break };
            match ev {
                Event::Response { .. } | Event::Failed { .. } => {
                    let next = ctx.ended(h);
                    self.issue(ctx, h, next);
                }
                Event::Retired(r) => self.retired(h, *r),
                // the simulated workloads observe nothing
                Event::Transmission { .. } | Event::Notification { .. } => {}
            }
        }
        let host = &mut self.hosts[h.index()];
        let next = host.ep.poll_timeout();
        host.timer.rearm(ctx, h, ENDPOINT_TIMER, next);
    }
}

impl Stack for UdpStack {
    type Payload = Vec<u8>;

    fn start<C: Context<Vec<u8>>>(&mut self, ctx: &mut C, host: HostId) {
        for _ in 0..ctx.parallel(host) {
            let next = ctx.start(host);
            self.issue(ctx, host, next);
        }
        self.arm_arrival(ctx, host);
        self.arm_background(ctx, host, true);
        self.after(ctx, host);
    }

    fn receive<C: Context<Vec<u8>>>(&mut self, ctx: &mut C, packet: &Packet, payload: &Vec<u8>) -> bool {
        if let Some(bg) = self.background.as_mut() {
            if packet.to == bg.sink && Background::is_notification(payload) {
                bg.delivered += 1;
                return false;
            }
        }
        let ep = &mut self.hosts[packet.to.index()].ep;
        let dups = ep.duplicates_received();
        ep.handle_datagram(ctx.now(), packet.from, payload);
        let duplicate = ep.duplicates_received() > dups;
        self.after(ctx, packet.to);
        duplicate
    }

    fn timeout<C: Context<Vec<u8>>>(&mut self, ctx: &mut C, host: HostId, slot: u32, gen: u32) -> bool {
        if slot == BG_TIMER {
            let Some(bg) = self.background.as_mut() else { return false };
            let Some(Some((timer, ..))) = bg.sources.get_mut(host.index()) else { return false };
            if !timer.fire(gen) {
                return false;
            }
            bg.sent += 1;
            let (sink, bytes) = (bg.sink, &bg.message);
            ctx.send(host, sink, bytes.len() as u32 + self.overhead, |p| {
                p.clear();
                p.extend_from_slice(bytes);
            });
            self.arm_background(ctx, host, false);
            return true;
        }
        let h = &mut self.hosts[host.index()];
        if slot == APP_TIMER {
            if !h.app_timer.fire(gen) {
                return false;
            }
            self.issue(ctx, host, Next::Exchange { fresh: false });
            self.arm_arrival(ctx, host);
            self.after(ctx, host);
            return true;
        }
        if !h.timer.fire(gen) {
            return false;
        }
        let now = ctx.now();
        while h.unreturned.front().is_some_and(|u| now - u.at > SEND_RETURN_LIMIT) {
            h.unreturned.pop_front();
        }
        if h.unreturned.is_empty() {
            h.ep.handle_timeout(now);
            self.after(ctx, host);
        } else {
            // the deadline waits for the send: its return re-arms the timer
            let limit = h.unreturned.front().map(|u| u.at + SEND_RETURN_LIMIT);
            h.timer.rearm(ctx, host, ENDPOINT_TIMER, limit.max(h.ep.poll_timeout()));
        }
        true
    }

    fn send_returned<C: Context<Vec<u8>>>(&mut self, ctx: &mut C, host: HostId, packet: PacketId) {
        let h = &mut self.hosts[host.index()];
        let Some(i) = h.unreturned.iter().position(|u| u.packet == packet) else { return };
        let u = h.unreturned[i];
        h.unreturned.drain(..=i);
        h.ep.send_returned(ctx.now(), &u.dest, u.mid);
        self.after(ctx, host);
    }

    fn finish(mut self) -> Records {
        let mut out = Records::default();
        out.clients.reserve_exact(self.hosts.iter().filter(|h| h.server.is_some()).count());
        for i in 0..self.hosts.len() {
            if self.hosts[i].server.is_none() {
                continue;
            }
            let h = HostId(i as u32);
            self.hosts[i].ep.retire_all();
            while let Some(ev) = self.hosts[i].ep.poll_event() {
                if let Event::Retired(r) = ev {
                    self.retired(h, *r);
                }
            }
            let host = &self.hosts[i];
            out.clients.push(ClientRecord::of(h.0, &host.tally, host.ep.duplicates_received()));
        }
        // by host, then by exchange id; each host's exchanges numbered from 0
        self.reports.sort_by_key(|(h, r)| (h.0, r.id));
        for host in self.reports.chunk_by(|a, b| a.0 == b.0) {
            for (k, (h, r)) in host.iter().enumerate() {
                out.exchanges.push(crate::record::exchange_record(h.0, k as u32, r));
            }
        }
        out.stats = self.stats;
        if let Some(bg) = &self.background {
            out.stats.background_sent = bg.sent;
            out.stats.background_delivered = bg.delivered;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_background_notification_is_a_non_205_with_a_3_byte_observe() {
        let steps = netmodel::RateSteps { intervals_ns: vec![1_000_000_000], step_ns: 10_000_000_000 };
        let bg = Background::new(&[HostId(1)], HostId(0), steps, 10_000_000_000, 2, 1, 0);
        // RFC 7252 §3 by hand: Ver 1, T=NON (1), TKL 2 → 0x52; 2.05 → 0x45; Message ID 0; token
        // b6 b6; Observe (6) as delta 6, length 3 → 0x63, value 00 00 01; marker; 2-byte payload
        let bytes = [0x52, 0x45, 0, 0, 0xb6, 0xb6, 0x63, 0, 0, 1, 0xff, 0x2a, 0x2a];
        assert_eq!(bg.message, bytes);
        assert!(Background::is_notification(&bg.message));
    }
}
