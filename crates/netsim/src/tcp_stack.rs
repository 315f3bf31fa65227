//! CoAP over TCP (RFC 8323) on every host: the shipped RFC 8323 code
//! ([`coap_endpoint::StreamConnection`]) over the TCP model of [`crate::tcp`].
//!
//! * Requests carry no token (the testbed's token length 0; one request is outstanding per
//!   connection, so responses match in order).
//! * Every client has its own connection(s) to its server. It sends a CSM (7.01 with
//!   Max-Message-Size) as soon as its connection is established, as the server does; requests
//!   follow their CSM at once (Nagle holds them until the CSM is acknowledged).
//! * Continuous clients connect and exchange CSMs first; when every client has, all start their
//!   exchanges at that instant (the testbed's "before the clock starts"). Their FCT runs from
//!   their first request.
//! * Random clients open a new connection for every batch (handshake, CSM, batch, FIN), the
//!   next batch's connection opening as the previous one closes. Their FCT runs from their
//!   first SYN: the handshakes are inside the measured time.
//! * Per exchange, "retransmissions" counts the client's TCP retransmissions of segments that
//!   carried bytes of its request; expired RTOs are the client's TCP RTOs that expired while it
//!   was outstanding. "Duplicates" (unnecessary retransmissions) are spurious TCP
//!   retransmissions of data, in either direction, whose bytes had all arrived before; they make
//!   their packet unnecessary (the wired bottleneck books those from the server as wasted
//!   downlink time).
//! * A connection whose SYN retries run out fails the exchanges its batch had left.
//! * Timer slots: slot 0 is a host's client side (the earliest deadline of its connections),
//!   slot `1 + k` the `k`-th connection it accepted.

use std::collections::BTreeMap;

use coap_cc::{Duration, Instant};
use coap_endpoint::{Request, StreamConnection, StreamEvent};
use netmodel::{HostId, Next, Packet};

use crate::engine::{Context, Records, Stack, TimerSlot};
use crate::record::{ClientRecord, Detail, ExchangeRecord};
use crate::tcp::{Segment, Tcp, TcpParams};
use crate::udp::FixedResponse;

/// Max-Message-Size each side announces in its CSM (RFC 8323 §5.3.1's default).
const MAX_MESSAGE_SIZE: u64 = 1152;

/// Writes what the RFC 8323 connection has to send into the TCP stream; returns its length.
fn pump(tcp: &mut Tcp, coap: &mut StreamConnection<HostId>) -> u64 {
    let out = coap.take_output();
    tcp.write(&out);
    out.len() as u64
}

/// What a packet carries: a segment of one of the sender's connections.
#[derive(Debug, Default)]
pub struct TcpPayload {
    seg: Segment,
    /// The connection, numbered by the client that opened it.
    conn: u32,
}

/// A segment's bytes, in its connection's TCP header.
impl crate::capture::Captured for TcpPayload {
    fn capture(&self, capture: &mut crate::capture::Capture, now: Instant, from: HostId, to: HostId) {
        capture.tcp(now, from, to, self.conn, &self.seg);
    }
}

#[derive(Debug)]
struct ClientConn {
    id: u32,
    tcp: Tcp,
    /// The RFC 8323 connection, from the moment TCP is established (its CSM goes out then).
    coap: Option<StreamConnection<HostId>>,
    written: u64,
    csm_received: bool,
}

#[derive(Debug)]
struct Exch {
    start: Instant,
    begin: u64,
    end: u64,
    done: Option<Instant>,
    retx: u32,
    expired: Vec<u64>,
    dups: u32,
    failed: bool,
}

impl Exch {
    fn new(start: Instant, begin: u64, end: u64, failed: bool) -> Self {
        Exch { start, begin, end, done: None, retx: 0, expired: Vec::new(), dups: 0, failed }
    }
}

/// A host's client side.
#[derive(Debug)]
struct Client {
    server: HostId,
    conns: Vec<ClientConn>,
    next_conn: u32,
    exch: Vec<Exch>,
    outstanding: bool,
    first_syn: Option<Instant>,
    started: bool,
    finished: bool,
    timer: TimerSlot,
    dups: u32,
}

/// A connection a host accepted.
#[derive(Debug)]
struct ServerConn {
    tcp: Tcp,
    coap: Option<StreamConnection<HostId>>,
    client: HostId,
    conn: u32,
    fin_sent: bool,
    timer: TimerSlot,
}

/// One host: a client side if it runs a workload, and the connections it accepted.
#[derive(Debug, Default)]
struct TcpHost {
    client: Option<Client>,
    accepted: Vec<ServerConn>,
    /// Which accepted connection a (peer, connection id) is (an ordered map, not a randomly
    /// seeded hash, so that every run takes the same steps).
    index: BTreeMap<(HostId, u32), u32>,
}

/// Every host's TCP connections and CoAP framing.
#[derive(Debug)]
pub struct TcpStack {
    p: TcpParams,
    /// Continuous clients (one connection, set up before the clock); else one per batch.
    continuous: bool,
    hosts: Vec<TcpHost>,
    clients: Vec<HostId>,
    request: Request,
    /// The payload every request is answered with.
    payload: Vec<u8>,
    csm_done: u32,
    /// Continuous clients: every connection is ready (or failed), the clock has started.
    go: bool,
    detail: Detail,
    /// Token length of the clients' requests.
    token_len: usize,
}

impl TcpStack {
    /// `hosts` hosts; each `(client, server)` pair runs a workload from `client` to `server`,
    /// sending `request` for every exchange, answered with `payload`. `continuous`: one connection per client,
    /// set up before the clock starts; else one per batch.
    pub fn new(
        p: TcpParams,
        hosts: u32,
        pairs: &[(HostId, HostId)],
        continuous: bool,
        request: Request,
        payload: &[u8],
        exchanges: usize,
    ) -> Self {
        let mut all: Vec<TcpHost> = (0..hosts).map(|_| TcpHost::default()).collect();
        for &(c, server) in pairs {
            all[c.index()].client = Some(Client {
                server,
                conns: Vec::new(),
                next_conn: 0,
                exch: Vec::with_capacity(exchanges),
                outstanding: false,
                first_syn: None,
                started: !continuous,
                finished: false,
                timer: TimerSlot::default(),
                dups: 0,
            });
        }
        TcpStack {
            p,
            continuous,
            hosts: all,
            clients: pairs.iter().map(|&(c, _)| c).collect(),
            request,
            payload: payload.to_vec(),
            csm_done: 0,
            go: false,
            detail: Detail::Summary,
            token_len: 0,
        }
    }

    /// Requests with `len`-byte tokens (default none, as the testbed's libcoap clients sent).
    pub fn with_token_len(mut self, len: usize) -> Self {
        self.token_len = len;
        self
    }

    /// Keeps `detail` of every exchange (default [`Detail::Summary`]).
    pub fn with_detail(mut self, detail: Detail) -> Self {
        self.detail = detail;
        self
    }

    fn client(&mut self, h: HostId) -> &mut Client {
        self.hosts[h.index()].client.as_mut().expect("a workload host")
    }

    fn note_duplicate(&mut self, c: HostId) {
        if let Some(cl) = self.hosts[c.index()].client.as_mut() {
            cl.dups += 1;
            if let Some(e) = cl.exch.last_mut() {
                e.dups += 1;
            }
        }
    }

    fn open_connection(&mut self, now: Instant, c: HostId) {
        let p = self.p.clone();
        let cl = self.client(c);
        let id = cl.next_conn;
        cl.next_conn += 1;
        cl.first_syn.get_or_insert(now);
        cl.conns.push(ClientConn { id, tcp: Tcp::connect(p), coap: None, written: 0, csm_received: false });
    }

    fn write_request(&mut self, now: Instant, c: HostId) {
        let req = &self.request;
        let cl = self.hosts[c.index()].client.as_mut().expect("a workload host");
        let Some(conn) = cl.conns.last_mut() else { return };
        let Some(coap) = conn.coap.as_mut() else { return };
        // a small GET always fits the peer's Max-Message-Size
        let _ = coap.request(now, req);
        let begin = conn.written;
        conn.written += pump(&mut conn.tcp, coap);
        cl.exch.push(Exch::new(now, begin, conn.written, false));
        cl.outstanding = true;
    }

    /// An exchange ended (response, or failure): the workload moves on. Returns its step.
    fn exchange_done<C: Context<TcpPayload>>(&mut self, ctx: &mut C, c: HostId) -> Next {
        self.client(c).outstanding = false;
        let next = ctx.ended(c);
        match next {
            Next::Done => {
                let continuous = self.continuous;
                let cl = self.client(c);
                cl.finished = true;
                if !continuous {
                    if let Some(conn) = cl.conns.last_mut() {
                        conn.tcp.close();
                    }
                }
            }
            Next::Exchange { fresh: true } => {
                if let Some(conn) = self.client(c).conns.last_mut() {
                    conn.tcp.close();
                }
                self.open_connection(ctx.now(), c);
            }
            Next::Exchange { fresh: false } => {}
            // only the periodic and parallel mesh clients wait, and the mesh runs CoAP over UDP
            Next::At(_) | Next::Idle => debug_assert!(false, "a waiting workload over the TCP stack"),
        }
        next
    }

    fn client_step<C: Context<TcpPayload>>(&mut self, ctx: &mut C, c: HostId) {
        let now = ctx.now();
        // 0. what the kernel sends before the application runs (Linux's softirq): an immediate
        // ACK (quick-ACK mode, a duplicate) leaves ahead of the request it could have ridden on
        self.client_send(ctx, c);
        // 1. what arrived
        let mut responses = 0;
        {
            let cl = self.client(c);
            for conn in &mut cl.conns {
                let bytes = conn.tcp.read();
                let Some(coap) = conn.coap.as_mut().filter(|_| !bytes.is_empty()) else { continue };
                coap.handle_bytes(now, &bytes);
                conn.written += pump(&mut conn.tcp, coap);
                while let Some(ev) = coap.poll_event() {
                    match ev {
                        StreamEvent::Ready { .. } => conn.csm_received = true,
                        StreamEvent::Response { .. } => responses += 1,
                        StreamEvent::Notification { .. } | StreamEvent::Pong | StreamEvent::Closed(_) => {}
                    }
                }
            }
        }
        for _ in 0..responses {
            if let Some(e) = self.client(c).exch.last_mut().filter(|e| e.done.is_none()) {
                e.done = Some(now);
                self.exchange_done(ctx, c);
            }
        }
        // a connection that could not be established fails what its batch had left
        let cl = self.client(c);
        let failed = cl.conns.last().is_some_and(|x| x.tcp.has_failed());
        if failed && !cl.finished {
            if !cl.started {
                // it will never be ready: it must not hold the others' start back
                cl.started = true;
                self.csm_done += 1;
            }
            loop {
                let cl = self.client(c);
                if cl.finished {
                    break;
                }
                if !cl.outstanding {
                    cl.exch.push(Exch::new(now, 0, 0, true));
                } else if let Some(e) = cl.exch.last_mut() {
                    e.failed = true;
                }
                cl.outstanding = true;
                if self.exchange_done(ctx, c) != (Next::Exchange { fresh: false }) {
                    break; // done, or the next batch has its own connection
                }
            }
        }
        // 2. CSM once established; the barrier of continuous clients
        {
            let cl = self.hosts[c.index()].client.as_mut().expect("a workload host");
            let server = cl.server;
            if let Some(conn) = cl.conns.last_mut() {
                if conn.tcp.is_established() && conn.coap.is_none() {
                    let mut coap = StreamConnection::new(server, MAX_MESSAGE_SIZE, None).with_token_len(self.token_len);
                    conn.written += pump(&mut conn.tcp, &mut coap); // the CSM
                    conn.coap = Some(coap);
                }
                // ready: both CSMs through and acknowledged (the connection idle), so that
                // setup effects such as Nagle waiting for the CSM's delayed ACK stay before the clock
                if !cl.started && conn.coap.is_some() && conn.csm_received && conn.tcp.all_acked() {
                    cl.started = true; // counted once towards the barrier
                    self.csm_done += 1;
                }
            }
        }
        if self.continuous {
            if !self.go && self.csm_done == self.clients.len() as u32 {
                // every client has its connection and CSMs (or failed): the clock starts for all
                self.go = true;
                for i in 0..self.clients.len() {
                    let other = self.clients[i];
                    let o = self.client(other);
                    if !o.outstanding && !o.finished {
                        self.write_request(now, other);
                        if other != c {
                            self.client_transmit(ctx, other);
                        }
                    }
                }
            } else if self.go {
                let cl = self.client(c);
                if !cl.outstanding && !cl.finished {
                    self.write_request(now, c);
                }
            }
        } else {
            let cl = self.client(c);
            let ready = cl.conns.last().is_some_and(|x| x.coap.is_some());
            if ready && !cl.outstanding && !cl.finished {
                self.write_request(now, c);
            }
        }
        self.client_transmit(ctx, c);
    }

    /// Sends what the client's connections have to send, and sets its timer.
    fn client_transmit<C: Context<TcpPayload>>(&mut self, ctx: &mut C, c: HostId) {
        self.client_send(ctx, c);
        let cl = self.hosts[c.index()].client.as_mut().expect("a workload host");
        let next = cl.conns.iter().filter_map(|x| x.tcp.poll_timeout()).min();
        cl.timer.rearm(ctx, c, 0, next);
    }

    /// Sends what the client's connections have to send now.
    fn client_send<C: Context<TcpPayload>>(&mut self, ctx: &mut C, c: HostId) {
        let now = ctx.now();
        let mut out: Vec<(u32, Segment)> = Vec::new();
        let cl = self.hosts[c.index()].client.as_mut().expect("a workload host");
        for conn in &mut cl.conns {
            while let Some(seg) = conn.tcp.poll_segment(now) {
                if seg.retransmission && !seg.payload.is_empty() {
                    let (b, e) = (seg.seq.saturating_sub(1), seg.seq.saturating_sub(1) + seg.payload.len() as u64);
                    for x in cl.exch.iter_mut().rev().take(4) {
                        if x.begin < e && b < x.end && x.done.is_none() {
                            x.retx += 1;
                        }
                    }
                }
                out.push((conn.id, seg));
            }
        }
        let server = cl.server;
        for (conn, seg) in out {
            let size = seg.wire_size(&self.p);
            ctx.send(c, server, size, |p| *p = TcpPayload { seg, conn });
        }
    }

    fn server_step<C: Context<TcpPayload>>(&mut self, ctx: &mut C, h: HostId, slot: u32) {
        let now = ctx.now();
        let sc = &mut self.hosts[h.index()].accepted[slot as usize];
        if sc.tcp.is_established() && sc.coap.is_none() {
            let handler = Box::new(FixedResponse::payload(self.payload.clone()));
            let mut coap = StreamConnection::new(sc.client, MAX_MESSAGE_SIZE, Some(handler));
            pump(&mut sc.tcp, &mut coap); // the CSM
            sc.coap = Some(coap);
        }
        // what the kernel sends before the application runs (Linux's softirq): an immediate ACK
        // (quick-ACK mode, a duplicate) leaves ahead of the response it could have ridden on
        let mut out = Vec::new();
        while let Some(seg) = sc.tcp.poll_segment(now) {
            out.push(seg);
        }
        let bytes = sc.tcp.read();
        if let Some(coap) = sc.coap.as_mut().filter(|_| !bytes.is_empty()) {
            coap.handle_bytes(now, &bytes); // the handler answers every request
            pump(&mut sc.tcp, coap);
            while coap.poll_event().is_some() {}
        }
        if sc.tcp.peer_closed() && !sc.fin_sent {
            sc.tcp.close();
            sc.fin_sent = true;
        }
        while let Some(seg) = sc.tcp.poll_segment(now) {
            out.push(seg);
        }
        let next = sc.tcp.poll_timeout();
        sc.timer.rearm(ctx, h, 1 + slot, next);
        let (client, conn) = (sc.client, sc.conn);
        for seg in out {
            let size = seg.wire_size(&self.p);
            ctx.send(h, client, size, |p| *p = TcpPayload { seg, conn });
        }
    }
}

impl Stack for TcpStack {
    type Payload = TcpPayload;

    fn start<C: Context<TcpPayload>>(&mut self, ctx: &mut C, host: HostId) {
        let _ = ctx.start(host); // the first exchange goes out once the connection is ready
        self.open_connection(ctx.now(), host);
        self.client_step(ctx, host);
    }

    fn receive<C: Context<TcpPayload>>(&mut self, ctx: &mut C, packet: &Packet, payload: &TcpPayload) -> bool {
        let now = ctx.now();
        let h = &mut self.hosts[packet.to.index()];
        if let Some(cl) = h.client.as_mut().filter(|cl| cl.server == packet.from) {
            // a segment of one of our connections
            let mut spurious = false;
            if let Some(conn) = cl.conns.iter_mut().find(|x| x.id == payload.conn) {
                let before = conn.tcp.stats.spurious_received;
                conn.tcp.on_segment(now, &payload.seg);
                spurious = conn.tcp.stats.spurious_received > before;
            }
            if spurious {
                self.note_duplicate(packet.to);
            }
            self.client_step(ctx, packet.to);
            return spurious;
        }
        // a segment for a connection we accept
        let key = (packet.from, payload.conn);
        let slot = match h.index.get(&key) {
            Some(&s) => s,
            None => {
                let s = h.accepted.len() as u32;
                h.accepted.push(ServerConn {
                    tcp: Tcp::listen(self.p.clone()),
                    coap: None,
                    client: packet.from,
                    conn: payload.conn,
                    fin_sent: false,
                    timer: TimerSlot::default(),
                });
                h.index.insert(key, s);
                s
            }
        };
        let sc = &mut h.accepted[slot as usize];
        let before = sc.tcp.stats.spurious_received;
        sc.tcp.on_segment(now, &payload.seg);
        let spurious = sc.tcp.stats.spurious_received > before;
        if spurious {
            self.note_duplicate(packet.from);
        }
        self.server_step(ctx, packet.to, slot);
        spurious
    }

    fn timeout<C: Context<TcpPayload>>(&mut self, ctx: &mut C, host: HostId, slot: u32, gen: u32) -> bool {
        let now = ctx.now();
        if slot == 0 {
            let cl = self.client(host);
            if !cl.timer.fire(gen) {
                return false;
            }
            for conn in &mut cl.conns {
                if let Some(rto) = conn.tcp.rto_expiring(now) {
                    if let Some(e) = cl.exch.last_mut().filter(|e| e.done.is_none() && !e.failed) {
                        e.expired.push(Duration::from_secs_f64(rto).as_nanos());
                    }
                }
                conn.tcp.on_timeout(now);
            }
            self.client_step(ctx, host);
        } else {
            let sc = &mut self.hosts[host.index()].accepted[slot as usize - 1];
            if !sc.timer.fire(gen) {
                return false;
            }
            sc.tcp.on_timeout(now);
            self.server_step(ctx, host, slot - 1);
        }
        true
    }

    fn finish(self) -> Records {
        let mut out = Records::default();
        let mut tcp = crate::record::TcpCounters::default();
        for h in &self.hosts {
            for c in h.client.iter().flat_map(|cl| &cl.conns) {
                tcp.clients.add(&c.tcp.stats);
            }
            for s in &h.accepted {
                tcp.servers.add(&s.tcp.stats);
            }
        }
        out.tcp = Some(tcp);
        for &c in &self.clients {
            let cl = self.hosts[c.index()].client.as_ref().expect("a workload host");
            let mut rec = ClientRecord {
                client: c.0,
                fct_ns: None,
                exchanges: cl.exch.len() as u32,
                failed: 0,
                retransmissions: 0,
                duplicates: cl.dups,
                max_expired_rto_ns: 0,
            };
            for (i, e) in cl.exch.iter().enumerate() {
                rec.failed += (e.failed || e.done.is_none()) as u32;
                rec.retransmissions += e.retx;
                rec.max_expired_rto_ns = rec.max_expired_rto_ns.max(e.expired.iter().copied().max().unwrap_or(0));
                let rtt_ns = e.done.filter(|_| !e.failed).map(|d| (d - e.start).as_nanos());
                out.stats.add(e.retx, rtt_ns);
                if self.detail == Detail::Exchanges {
                    out.exchanges.push(ExchangeRecord {
                        client: c.0,
                        index: i as u32,
                        start_ns: e.start.as_nanos(),
                        rtt_ns,
                        retransmissions: e.retx,
                        expired_rtos_ns: e.expired.clone(),
                        last_rto_ns: None, // TCP's timers are per connection, not per exchange
                        duplicates: e.dups,
                    });
                }
            }
            let start = if self.continuous { cl.exch.first().map(|e| e.start) } else { cl.first_syn };
            if let (Some(s), Some(end)) = (start, cl.exch.last().and_then(|e| e.done.filter(|_| !e.failed))) {
                rec.fct_ns = Some((end - s).as_nanos());
            }
            out.clients.push(rec);
        }
        out
    }
}
