//! One replication of CoAP over TCP (RFC 8323) over the reference bottleneck, with the TCP
//! model of [`crate::tcp`] under real RFC 8323 frames (coap-wire).
//!
//! * Every client has its own connection(s) to the server. It sends a CSM (7.01 with
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
//!   retransmissions of data, in either direction, whose bytes had all arrived before; those
//!   from the server count towards the wasted downlink share.
//! * A connection whose SYN retries run out fails the exchanges its batch had left.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use coap_cc::{Duration, Instant};
use coap_wire::{encode_uint, registry, CoapOption, Code, Frame, Options};
use rand_chacha::ChaCha8Rng;

use crate::network::{streams, Network};
use crate::queue::EventQueue;
use crate::record::{ClientRecord, ExchangeRecord, RepResult};
use crate::scenario::{draw_batch, Scenario, Workload};
use crate::tcp::{Segment, Tcp, TcpParams};
use crate::world::component_rng;

const LANE_UP: usize = 0;
const LANE_DOWN: usize = 1;
const MAX_FRAME: u64 = 1152 + 64;

#[derive(Debug, Clone, Copy)]
enum Ev {
    Start(u32),
    ToServer(u32),
    ToClient(u32),
    ClientTimer(u32, u32),
    ServerTimer(u32, u32),
}

#[derive(Debug)]
struct Pkt {
    seg: Segment,
    client: u32,
    conn: u32,
    down_busy: Duration,
}

#[derive(Debug)]
struct ClientConn {
    id: u32,
    tcp: Tcp,
    rx: Vec<u8>,
    written: u64,
    csm_sent: bool,
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

#[derive(Debug)]
struct Client {
    conns: Vec<ClientConn>,
    next_conn: u32,
    exch: Vec<Exch>,
    outstanding: bool,
    done: u32,
    batch_left: u32,
    first_syn: Option<Instant>,
    started: bool,
    finished: bool,
    timer_at: Option<Instant>,
    timer_gen: u32,
    dups: u32,
}

#[derive(Debug)]
struct ServerConn {
    tcp: Tcp,
    rx: Vec<u8>,
    client: u32,
    conn: u32,
    csm_sent: bool,
    fin_sent: bool,
    timer_at: Option<Instant>,
    timer_gen: u32,
}

struct World<'a> {
    scn: &'a Scenario,
    p: &'a TcpParams,
    now: Instant,
    queue: EventQueue<Ev>,
    clients: Vec<Client>,
    server: Vec<ServerConn>,
    server_index: HashMap<(u32, u32), u32>,
    net: Network,
    workload_rng: ChaCha8Rng,
    packets: Vec<Pkt>,
    free: Vec<u32>,
    request: Vec<u8>,
    response: Vec<u8>,
    csm: Vec<u8>,
    csm_done: u32,
    /// Continuous clients: every connection is ready (or failed), the clock has started.
    go: bool,
    finished_clients: u32,
    stopping: bool,
    events: u64,
    truncated: bool,
    wasted_down_ns: u64,
    end: Instant,
    progress: Option<&'a AtomicU64>,
}

fn frame(code: Code, options: &[CoapOption<'_>], payload: &[u8]) -> Vec<u8> {
    Frame { code, token: &[], options: Options::from_list(options), payload }.to_vec().expect("a valid frame")
}

/// Runs replication `rep` of a resolved scenario whose transport is TCP.
pub fn run_rep_tcp(scn: &Scenario, p: &TcpParams, rep: u32, progress: Option<&AtomicU64>) -> RepResult {
    let seed = scn.seed;
    let mut mms = [0u8; 4];
    let csm = frame(
        Code::CSM,
        &[CoapOption { number: registry::CSM_MAX_MESSAGE_SIZE, value: encode_uint(1152, &mut mms) }],
        &[],
    );
    let path = [CoapOption { number: registry::URI_PATH, value: scn.path.as_bytes() }];
    let mut w = World {
        scn,
        p,
        now: Instant::ZERO,
        queue: EventQueue::new(2),
        clients: (0..scn.clients)
            .map(|_| Client {
                conns: Vec::new(),
                next_conn: 0,
                exch: Vec::with_capacity(scn.exchanges as usize),
                outstanding: false,
                done: 0,
                batch_left: 0,
                first_syn: None,
                started: scn.workload == Workload::Random,
                finished: false,
                timer_at: None,
                timer_gen: 0,
                dups: 0,
            })
            .collect(),
        server: Vec::new(),
        server_index: HashMap::new(),
        net: Network::new(scn, rep),
        workload_rng: component_rng(seed, rep, streams::WORKLOAD),
        packets: Vec::new(),
        free: Vec::new(),
        request: frame(Code::GET, &path, &[]),
        response: frame(Code::CONTENT, &[], &vec![0x2A; scn.payload_bytes as usize]),
        csm,
        csm_done: 0,
        go: false,
        finished_clients: 0,
        stopping: false,
        events: 0,
        truncated: false,
        wasted_down_ns: 0,
        end: Instant::ZERO,
        progress,
    };
    for c in 0..scn.clients {
        let offset = coap_cc::rng::uniform(&mut w.workload_rng, 0.0, scn.start_spread_ms / 1000.0);
        w.queue.push(Duration::from_secs_f64(offset).as_nanos(), Ev::Start(c));
    }
    w.run();
    w.finish(rep)
}

impl World<'_> {
    fn run(&mut self) {
        let limit = Duration::from_secs_f64(self.scn.max_time_s).as_nanos();
        while let Some((t, ev)) = self.queue.pop() {
            if t > limit {
                self.truncated = true;
                self.end = Instant::from_nanos(limit);
                break;
            }
            self.now = Instant::from_nanos(t);
            match ev {
                Ev::ClientTimer(..) | Ev::ServerTimer(..) if self.stopping => continue,
                Ev::Start(c) => {
                    self.open_connection(c);
                    self.client_step(c);
                }
                Ev::ClientTimer(c, gen) => {
                    let cl = &mut self.clients[c as usize];
                    if gen != cl.timer_gen {
                        continue;
                    }
                    cl.timer_at = None;
                    let now = self.now;
                    for conn in &mut cl.conns {
                        if let Some(rto) = conn.tcp.rto_expiring(now) {
                            if let Some(e) = cl.exch.last_mut().filter(|e| e.done.is_none() && !e.failed) {
                                e.expired.push(Duration::from_secs_f64(rto).as_nanos());
                            }
                        }
                        conn.tcp.on_timeout(now);
                    }
                    self.client_step(c);
                }
                Ev::ServerTimer(slot, gen) => {
                    let sc = &mut self.server[slot as usize];
                    if gen != sc.timer_gen {
                        continue;
                    }
                    sc.timer_at = None;
                    sc.tcp.on_timeout(self.now);
                    self.server_step(slot);
                }
                Ev::ToServer(p) => {
                    let (client, conn) = (self.packets[p as usize].client, self.packets[p as usize].conn);
                    let slot = match self.server_index.get(&(client, conn)) {
                        Some(&s) => s,
                        None => {
                            let s = self.server.len() as u32;
                            self.server.push(ServerConn {
                                tcp: Tcp::listen(self.p.clone()),
                                rx: Vec::new(),
                                client,
                                conn,
                                csm_sent: false,
                                fin_sent: false,
                                timer_at: None,
                                timer_gen: 0,
                            });
                            self.server_index.insert((client, conn), s);
                            s
                        }
                    };
                    let sc = &mut self.server[slot as usize];
                    let before = sc.tcp.stats.spurious_received;
                    sc.tcp.on_segment(self.now, &self.packets[p as usize].seg);
                    if sc.tcp.stats.spurious_received > before {
                        self.note_duplicate(client);
                    }
                    self.free.push(p);
                    self.server_step(slot);
                }
                Ev::ToClient(p) => {
                    let pkt = &self.packets[p as usize];
                    let (c, id) = (pkt.client, pkt.conn);
                    let cl = &mut self.clients[c as usize];
                    if let Some(conn) = cl.conns.iter_mut().find(|x| x.id == id) {
                        let before = conn.tcp.stats.spurious_received;
                        conn.tcp.on_segment(self.now, &pkt.seg);
                        if conn.tcp.stats.spurious_received > before {
                            self.wasted_down_ns += pkt.down_busy.as_nanos();
                            self.note_duplicate(c);
                        }
                    }
                    self.free.push(p);
                    self.client_step(c);
                }
            }
            self.events += 1;
        }
    }

    fn note_duplicate(&mut self, c: u32) {
        let cl = &mut self.clients[c as usize];
        cl.dups += 1;
        if let Some(e) = cl.exch.last_mut() {
            e.dups += 1;
        }
    }

    fn open_connection(&mut self, c: u32) {
        let cl = &mut self.clients[c as usize];
        let id = cl.next_conn;
        cl.next_conn += 1;
        cl.first_syn.get_or_insert(self.now);
        cl.conns.push(ClientConn {
            id,
            tcp: Tcp::connect(self.p.clone()),
            rx: Vec::new(),
            written: 0,
            csm_sent: false,
            csm_received: false,
        });
        if self.scn.workload == Workload::Random {
            let scn = self.scn;
            cl.batch_left = draw_batch(&mut self.workload_rng, scn.batch_min, scn.batch_max, scn.exchanges - cl.done);
        }
    }

    fn write_request(&mut self, c: u32) {
        let now = self.now;
        let cl = &mut self.clients[c as usize];
        let Some(conn) = cl.conns.last_mut() else { return };
        conn.tcp.write(&self.request);
        let begin = conn.written;
        conn.written += self.request.len() as u64;
        cl.exch.push(Exch {
            start: now,
            begin,
            end: conn.written,
            done: None,
            retx: 0,
            expired: Vec::new(),
            dups: 0,
            failed: false,
        });
        cl.outstanding = true;
    }

    /// An exchange ended (response, or failure): the workload moves on.
    fn exchange_done(&mut self, c: u32) {
        let scn = self.scn;
        let cl = &mut self.clients[c as usize];
        cl.outstanding = false;
        cl.done += 1;
        cl.batch_left = cl.batch_left.saturating_sub(1);
        if let Some(p) = self.progress {
            p.fetch_add(1, Ordering::Relaxed);
        }
        if cl.done >= scn.exchanges {
            cl.finished = true;
            if scn.workload == Workload::Random {
                if let Some(conn) = cl.conns.last_mut() {
                    conn.tcp.close();
                }
            }
            self.finished_clients += 1;
            if self.finished_clients == scn.clients {
                self.stopping = true;
                self.end = self.now;
            }
        } else if scn.workload == Workload::Random && cl.batch_left == 0 {
            if let Some(conn) = cl.conns.last_mut() {
                conn.tcp.close();
            }
            self.open_connection(c);
        }
    }

    fn client_step(&mut self, c: u32) {
        let now = self.now;
        // 1. what arrived
        let mut responses = 0;
        {
            let cl = &mut self.clients[c as usize];
            for conn in &mut cl.conns {
                let bytes = conn.tcp.read();
                if bytes.is_empty() {
                    continue;
                }
                conn.rx.extend_from_slice(&bytes);
                let mut used = 0;
                while let Ok((f, n)) = Frame::decode(&conn.rx[used..], MAX_FRAME) {
                    used += n;
                    if f.code == Code::CSM {
                        conn.csm_received = true;
                    } else if f.code.is_response() {
                        responses += 1;
                    }
                }
                conn.rx.drain(..used);
            }
        }
        for _ in 0..responses {
            if let Some(e) = self.clients[c as usize].exch.last_mut().filter(|e| e.done.is_none()) {
                e.done = Some(now);
                self.exchange_done(c);
            }
        }
        // a connection that could not be established fails what its batch had left
        let failed = self.clients[c as usize].conns.last().is_some_and(|x| x.tcp.has_failed());
        if failed && !self.clients[c as usize].finished {
            if !self.clients[c as usize].started {
                // it will never be ready: it must not hold the others' start back
                self.clients[c as usize].started = true;
                self.csm_done += 1;
            }
            let left = {
                let cl = &self.clients[c as usize];
                if self.scn.workload == Workload::Random {
                    cl.batch_left.max(1)
                } else {
                    self.scn.exchanges - cl.done
                }
            };
            for _ in 0..left {
                let cl = &mut self.clients[c as usize];
                if cl.finished {
                    break;
                }
                if !cl.outstanding {
                    cl.exch.push(Exch {
                        start: now,
                        begin: 0,
                        end: 0,
                        done: None,
                        retx: 0,
                        expired: Vec::new(),
                        dups: 0,
                        failed: true,
                    });
                } else if let Some(e) = cl.exch.last_mut() {
                    e.failed = true;
                }
                cl.outstanding = true;
                self.exchange_done(c);
            }
        }
        // 2. CSM once established; the barrier of continuous clients
        {
            let csm = &self.csm;
            let cl = &mut self.clients[c as usize];
            if let Some(conn) = cl.conns.last_mut() {
                if conn.tcp.is_established() && !conn.csm_sent {
                    conn.tcp.write(csm);
                    conn.written += csm.len() as u64;
                    conn.csm_sent = true;
                }
                // ready: both CSMs through and acknowledged (the connection idle), so that
                // setup effects such as Nagle waiting for the CSM's delayed ACK stay before the clock
                if !cl.started && conn.csm_sent && conn.csm_received && conn.tcp.all_acked() {
                    cl.started = true; // counted once towards the barrier
                    self.csm_done += 1;
                }
            }
        }
        if self.scn.workload == Workload::Continuous {
            if !self.go && self.csm_done == self.scn.clients {
                // every client has its connection and CSMs (or failed): the clock starts for all
                self.go = true;
                for other in 0..self.scn.clients {
                    let o = &self.clients[other as usize];
                    if !o.outstanding && !o.finished {
                        self.write_request(other);
                        if other != c {
                            self.client_transmit(other);
                        }
                    }
                }
            } else if self.go {
                let cl = &self.clients[c as usize];
                if !cl.outstanding && !cl.finished {
                    self.write_request(c);
                }
            }
        } else {
            let cl = &self.clients[c as usize];
            let ready = cl.conns.last().is_some_and(|x| x.csm_sent);
            if ready && !cl.outstanding && !cl.finished {
                self.write_request(c);
            }
        }
        self.client_transmit(c);
    }

    fn client_transmit(&mut self, c: u32) {
        let now = self.now;
        let mut out: Vec<(u32, Segment)> = Vec::new();
        {
            let cl = &mut self.clients[c as usize];
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
            let next = cl.conns.iter().filter_map(|x| x.tcp.poll_timeout()).min();
            if next != cl.timer_at && !self.stopping {
                cl.timer_at = next;
                cl.timer_gen = cl.timer_gen.wrapping_add(1);
                if let Some(t) = next {
                    self.queue.push(t.as_nanos(), Ev::ClientTimer(c, cl.timer_gen));
                }
            }
        }
        for (conn, seg) in out {
            let size = seg.wire_size(self.p);
            if let Some(arrive) = self.net.upstream(now, size) {
                let p = self.alloc(Pkt { seg, client: c, conn, down_busy: Duration::ZERO });
                self.queue.push_lane(LANE_UP, arrive.as_nanos(), Ev::ToServer(p));
            }
        }
    }

    fn server_step(&mut self, slot: u32) {
        let now = self.now;
        let (client, conn) = {
            let sc = &mut self.server[slot as usize];
            if sc.tcp.is_established() && !sc.csm_sent {
                sc.tcp.write(&self.csm);
                sc.csm_sent = true;
            }
            let bytes = sc.tcp.read();
            if !bytes.is_empty() {
                sc.rx.extend_from_slice(&bytes);
                let mut used = 0;
                let mut requests = 0;
                while let Ok((f, n)) = Frame::decode(&sc.rx[used..], MAX_FRAME) {
                    used += n;
                    requests += f.code.is_request() as u32;
                }
                sc.rx.drain(..used);
                for _ in 0..requests {
                    sc.tcp.write(&self.response);
                }
            }
            if sc.tcp.peer_closed() && !sc.fin_sent {
                sc.tcp.close();
                sc.fin_sent = true;
            }
            (sc.client, sc.conn)
        };
        let mut out = Vec::new();
        {
            let sc = &mut self.server[slot as usize];
            while let Some(seg) = sc.tcp.poll_segment(now) {
                out.push(seg);
            }
            let next = sc.tcp.poll_timeout();
            if next != sc.timer_at && !self.stopping {
                sc.timer_at = next;
                sc.timer_gen = sc.timer_gen.wrapping_add(1);
                if let Some(t) = next {
                    self.queue.push(t.as_nanos(), Ev::ServerTimer(slot, sc.timer_gen));
                }
            }
        }
        for seg in out {
            let size = seg.wire_size(self.p);
            if let Some((at, busy)) = self.net.downstream(now, size) {
                let p = self.alloc(Pkt { seg, client, conn, down_busy: busy });
                self.queue.push_lane(LANE_DOWN, at.as_nanos(), Ev::ToClient(p));
            }
        }
    }

    fn alloc(&mut self, pkt: Pkt) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.packets[i as usize] = pkt;
                i
            }
            None => {
                self.packets.push(pkt);
                (self.packets.len() - 1) as u32
            }
        }
    }

    fn finish(self, rep: u32) -> RepResult {
        let mut clients = Vec::new();
        let mut exchanges = Vec::new();
        for (c, cl) in self.clients.iter().enumerate() {
            let mut rec = ClientRecord {
                client: c as u32,
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
                exchanges.push(ExchangeRecord {
                    client: c as u32,
                    index: i as u32,
                    start_ns: e.start.as_nanos(),
                    rtt_ns: e.done.filter(|_| !e.failed).map(|d| (d - e.start).as_nanos()),
                    retransmissions: e.retx,
                    expired_rtos_ns: e.expired.clone(),
                    duplicates: e.dups,
                });
            }
            let start = match self.scn.workload {
                Workload::Random => cl.first_syn,
                Workload::Continuous => cl.exch.first().map(|e| e.start),
            };
            if let (Some(s), Some(end)) = (start, cl.exch.last().and_then(|e| e.done.filter(|_| !e.failed))) {
                rec.fct_ns = Some((end - s).as_nanos());
            }
            clients.push(rec);
        }
        RepResult {
            rep,
            clients,
            exchanges,
            uplink: self.net.uplink.stats,
            downlink: self.net.downlink.stats,
            wasted_downlink_ns: self.wasted_down_ns,
            events: self.events,
            end_ns: self.end.as_nanos(),
            truncated: self.truncated,
        }
    }
}
