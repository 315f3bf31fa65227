//! One replication: N client endpoints and a server endpoint (the real coap-endpoint and
//! coap-cc code) over the reference bottleneck, in virtual time.
//!
//! ```text
//! clients ─▶ [uplink buffer] ═ uplink ═▶ router ─ 10..20 ms ─▶ server
//! clients ◀═ downlink ═ [downlink buffer] ◀ router ◀ 10..20 ms ─ server
//! ```
//!
//! Events are counted frugally: a datagram is ONE event, its delivery at the far end. When a
//! host sends, its whole path is computed at once: the uplink's queue (see [`crate::link`]),
//! then the router–server hop; or the hop, then the downlink's queue at the router-arrival time.
//! This is exact because every queue has a single FIFO feeder whose offers are made in
//! non-decreasing time order. Endpoint timers are one event each, re-armed only when an
//! endpoint's next deadline changes (stale ones are skipped by a generation number).

use std::sync::atomic::{AtomicU64, Ordering};

use coap_cc::{CcConfig, Duration, Instant};
use coap_endpoint::{Config, Endpoint, Event, ExchangeReport, Handler, Reply, Request, RequestId, Response};
use coap_wire::{registry, Code, Message};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::network::{streams, Network};
use crate::queue::EventQueue;
use crate::record::RepResult;
use crate::scenario::{draw_batch, Scenario, Workload};

/// The server's address in client endpoints.
const SERVER: u32 = u32::MAX;
/// Event-queue lanes: deliveries of each path are FIFO in time.
const LANE_UP: usize = 0;
const LANE_DOWN: usize = 1;

/// The RNG of one component of one replication: ChaCha8 seeded with the master seed, on its own
/// stream `rep << 32 | component`. Portable and independent of thread scheduling.
pub fn component_rng(seed: u64, rep: u32, component: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(((rep as u64) << 32) | (component & 0xFFFF_FFFF));
    rng
}

fn uniform(rng: &mut ChaCha8Rng, lo: f64, hi: f64) -> f64 {
    coap_cc::rng::uniform(rng, lo, hi)
}

/// Serves the reference response (2.05 with the scenario's payload) to every request.
#[derive(Debug)]
struct SimServer {
    payload: Vec<u8>,
}

impl Handler<u32> for SimServer {
    fn handle(&mut self, _: Instant, _: &u32, _: RequestId, _: &Message<'_>) -> Reply {
        Reply::Now(Response::new(Code::CONTENT, self.payload.clone()))
    }
}

#[derive(Debug, Clone, Copy)]
enum Ev {
    /// Client `c` starts its workload.
    Start(u32),
    /// A datagram reaches the server.
    ToServer(u32),
    /// A datagram reaches its client.
    ToClient(u32),
    /// A host's timer (client index, or SERVER), valid if its generation is current.
    Timer(u32, u32),
}

#[derive(Debug)]
struct Packet {
    bytes: Vec<u8>,
    /// Client sending (for the server) or receiving (for the client).
    client: u32,
    /// Its serialization time on the downlink, for wasted-capacity accounting.
    down_busy: Duration,
}

struct Host {
    ep: Endpoint<u32, ChaCha8Rng>,
    timer_at: Option<Instant>,
    timer_gen: u32,
}

struct ClientState {
    host: Host,
    done: u32,
    batch_left: u32,
    reports: Vec<ExchangeReport<u32>>,
}

/// One replication's world.
struct World<'a> {
    scn: &'a Scenario,
    now: Instant,
    queue: EventQueue<Ev>,
    clients: Vec<ClientState>,
    server: Host,
    net: Network,
    workload_rng: ChaCha8Rng,
    packets: Vec<Packet>,
    free: Vec<u32>,
    buf: Vec<u8>,
    request: Request,
    finished_clients: u32,
    stopping: bool,
    events: u64,
    truncated: bool,
    wasted_down_ns: u64,
    end: Instant,
    progress: Option<&'a AtomicU64>,
}

/// Runs replication `rep` of a resolved scenario. `progress`, if given, is incremented by one for
/// every finished exchange (for a progress bar).
pub fn run_rep_udp(scn: &Scenario, cc: &CcConfig, rep: u32, progress: Option<&AtomicU64>) -> RepResult {
    let seed = scn.seed;
    let client_cfg = Config::new(cc.clone());
    let mut server_cfg = Config::new(cc.clone());
    // the server's cache must hold every client's recent exchanges: a larger cap than a device's
    server_cfg.max_dedup_entries = (scn.clients as usize * 64).max(4096);
    let server = Endpoint::new(server_cfg, component_rng(seed, rep, streams::SERVER))
        .expect("valid endpoint config")
        .with_handler(Box::new(SimServer { payload: vec![0x2A; scn.payload_bytes as usize] }));
    let clients = (0..scn.clients)
        .map(|c| ClientState {
            host: Host {
                ep: Endpoint::new(client_cfg.clone(), component_rng(seed, rep, c as u64))
                    .expect("valid endpoint config"),
                timer_at: None,
                timer_gen: 0,
            },
            done: 0,
            batch_left: 0,
            reports: Vec::with_capacity(scn.exchanges as usize),
        })
        .collect();
    let mut w = World {
        scn,
        now: Instant::ZERO,
        queue: EventQueue::new(2),
        clients,
        server: Host { ep: server, timer_at: None, timer_gen: 0 },
        net: Network::new(scn, rep),
        workload_rng: component_rng(seed, rep, streams::WORKLOAD),
        packets: Vec::new(),
        free: Vec::new(),
        buf: Vec::with_capacity(1500),
        request: Request {
            code: Code::GET,
            options: vec![(registry::URI_PATH, scn.path.as_bytes().to_vec())],
            payload: Vec::new(),
            confirmable: true,
        },
        finished_clients: 0,
        stopping: false,
        events: 0,
        truncated: false,
        wasted_down_ns: 0,
        end: Instant::ZERO,
        progress,
    };
    for c in 0..scn.clients {
        let offset = uniform(&mut w.workload_rng, 0.0, scn.start_spread_ms / 1000.0);
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
                Ev::Timer(..) if self.stopping => continue,
                Ev::Timer(SERVER, gen) => {
                    if gen != self.server.timer_gen {
                        continue;
                    }
                    self.server.timer_at = None;
                    self.server.ep.handle_timeout(self.now);
                    self.after_server();
                }
                Ev::Timer(c, gen) => {
                    let host = &mut self.clients[c as usize].host;
                    if gen != host.timer_gen {
                        continue;
                    }
                    host.timer_at = None;
                    host.ep.handle_timeout(self.now);
                    self.after_client(c);
                }
                Ev::Start(c) => {
                    self.next_exchange(c);
                    self.after_client(c);
                }
                Ev::ToServer(p) => {
                    let pkt = &self.packets[p as usize];
                    self.server.ep.handle_datagram(self.now, pkt.client, &pkt.bytes);
                    self.free.push(p);
                    self.after_server();
                }
                Ev::ToClient(p) => {
                    let pkt = &self.packets[p as usize];
                    let c = pkt.client;
                    let ep = &mut self.clients[c as usize].host.ep;
                    let dups = ep.duplicates_received();
                    ep.handle_datagram(self.now, SERVER, &pkt.bytes);
                    if ep.duplicates_received() > dups {
                        self.wasted_down_ns += pkt.down_busy.as_nanos();
                    }
                    self.free.push(p);
                    self.after_client(c);
                }
            }
            self.events += 1;
        }
    }

    /// Issues client `c`'s next request, resetting its CC state between random batches.
    fn next_exchange(&mut self, c: u32) {
        let scn = self.scn;
        let cl = &mut self.clients[c as usize];
        if scn.workload == Workload::Random && cl.batch_left == 0 {
            if cl.done > 0 {
                cl.host.ep.reset_cc(&SERVER); // a new short-lived device
            }
            cl.batch_left = draw_batch(&mut self.workload_rng, scn.batch_min, scn.batch_max, scn.exchanges - cl.done);
        }
        cl.batch_left = cl.batch_left.saturating_sub(1);
        // the request is small and valid: it always fits the maximum message size
        let _ = cl.host.ep.request(self.now, SERVER, self.request.clone());
    }

    fn alloc_packet(&mut self, client: u32, len: usize) -> u32 {
        let bytes = &self.buf[..len];
        match self.free.pop() {
            Some(i) => {
                let p = &mut self.packets[i as usize];
                p.bytes.clear();
                p.bytes.extend_from_slice(bytes);
                p.client = client;
                p.down_busy = Duration::ZERO;
                i
            }
            None => {
                self.packets.push(Packet { bytes: bytes.to_vec(), client, down_busy: Duration::ZERO });
                (self.packets.len() - 1) as u32
            }
        }
    }

    /// IP size of a CoAP message of `len` bytes.
    fn ip_size(&self, len: usize) -> u32 {
        len as u32 + self.scn.ip_header_bytes + self.scn.udp_header_bytes
    }

    fn after_client(&mut self, c: u32) {
        let scn = self.scn;
        // a finished exchange may start the next one, whose request must go out too
        loop {
            // datagrams: client host → uplink buffer → router → hop → server
            while let Some(tx) = self.clients[c as usize].host.ep.poll_transmit(&mut self.buf) {
                let size = self.ip_size(tx.len);
                if let Some(arrive) = self.net.upstream(self.now, size) {
                    let p = self.alloc_packet(c, tx.len);
                    self.queue.push_lane(LANE_UP, arrive.as_nanos(), Ev::ToServer(p));
                }
            }
            let Some(ev) = self.clients[c as usize].host.ep.poll_event() else { break };
            match ev {
                Event::Response { .. } | Event::Failed { .. } => {
                    let cl = &mut self.clients[c as usize];
                    cl.done += 1;
                    if let Some(p) = self.progress {
                        p.fetch_add(1, Ordering::Relaxed);
                    }
                    if cl.done < scn.exchanges {
                        self.next_exchange(c);
                    } else {
                        self.finished_clients += 1;
                        if self.finished_clients == scn.clients {
                            self.stopping = true;
                            self.end = self.now;
                        }
                    }
                }
                Event::Retired(r) => self.clients[c as usize].reports.push(r),
                Event::Transmission { .. } => {}
            }
        }
        let host = &mut self.clients[c as usize].host;
        Self::rearm(&mut self.queue, host, c, self.stopping);
    }

    fn after_server(&mut self) {
        // datagrams: server → hop → router → downlink buffer → client
        while let Some(tx) = self.server.ep.poll_transmit(&mut self.buf) {
            let size = self.ip_size(tx.len);
            if let Some((at, busy)) = self.net.downstream(self.now, size) {
                let p = self.alloc_packet(tx.dest, tx.len);
                self.packets[p as usize].down_busy = busy;
                self.queue.push_lane(LANE_DOWN, at.as_nanos(), Ev::ToClient(p));
            }
        }
        Self::rearm(&mut self.queue, &mut self.server, SERVER, self.stopping);
    }

    fn rearm(queue: &mut EventQueue<Ev>, host: &mut Host, id: u32, stopping: bool) {
        let next = host.ep.poll_timeout();
        if next != host.timer_at && !stopping {
            host.timer_at = next;
            host.timer_gen = host.timer_gen.wrapping_add(1);
            if let Some(t) = next {
                queue.push(t.as_nanos(), Ev::Timer(id, host.timer_gen));
            }
        }
    }

    fn finish(mut self, rep: u32) -> RepResult {
        let mut clients = Vec::with_capacity(self.clients.len());
        let mut exchanges = Vec::new();
        for (c, cl) in self.clients.iter_mut().enumerate() {
            cl.host.ep.retire_all();
            while let Some(ev) = cl.host.ep.poll_event() {
                if let Event::Retired(r) = ev {
                    cl.reports.push(r);
                }
            }
            let (rec, ex) = crate::record::from_reports(c as u32, &mut cl.reports);
            exchanges.extend(ex);
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
