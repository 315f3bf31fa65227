//! The low-power mesh world: every mote runs the real `coap_endpoint` (Erbium's behaviour:
//! piggybacked responses, no token, one outstanding request per client, `give_up`), over
//! [`netmodel::mesh::Mesh`], driven by the one engine with periodic blocking clients.
//!
//! Hosts are motes: host i is node id i + 1. Each client sends to its server (the nearest
//! server, ties to the lower id). A replication runs for exactly `duration_s` of simulated time:
//! exchanges still open then are not reported (neither success nor failure), and rates are per
//! second of that duration. A client's FCT is the time from its first request's first
//! transmission to the response of its `fct_successes`-th successful exchange (NITK's "time taken
//! to exchange 50 messages successfully"); clients with fewer successes have none.

pub mod presets;
pub(crate) mod run;
pub mod scenario;
pub mod summary;

use coap_cc::Instant;
use coap_endpoint::{Config, Endpoint};
use netmodel::mesh::routing::{Routes, NONE};
use netmodel::mesh::{MacSpec, Mesh};
use netmodel::{HostId, Periodic, Stream};

use crate::capture::{Addressing, Capture, Tapped};
use crate::engine;
use crate::record::{ClientRecord, ClientSpan, Detail, ExchangeRecord, NetworkReport, RepResult};
use crate::udp::{Background, FixedResponse, UdpHost, UdpStack};
use crate::world::Recorder;
pub use run::{MeshRun, Route};
pub use scenario::{MeshEnv, MeshScenario, Resolved, Traffic};
pub use summary::{MeshMetrics, MeshSummary};

/// Runs replication `rep` of a mesh scenario (`res` = `scn.resolve()`).
pub fn run_rep(
    scn: &MeshScenario,
    res: &Resolved,
    rep: u32,
    progress: Option<&dyn crate::world::Progress>,
) -> RepResult {
    run_rep_inner(scn, res, rep, progress, None)
}

/// [`run_rep`], every datagram sent written to `capture` ([`addressing`]). The results are
/// those of the run without it.
pub fn run_rep_captured(
    scn: &MeshScenario,
    res: &Resolved,
    rep: u32,
    progress: Option<&dyn crate::world::Progress>,
    capture: &mut Capture,
) -> RepResult {
    run_rep_inner(scn, res, rep, progress, Some(capture))
}

/// Where the mesh's hosts are in a capture: the motes, and the servers its clients send to.
pub fn addressing(res: &Resolved) -> Addressing {
    let mut servers: Vec<HostId> = res.clients.iter().map(|&(_, s)| HostId(s)).collect();
    servers.sort_unstable_by_key(|h| h.0);
    servers.dedup();
    Addressing::Mesh {
        motes: res.mesh.nodes.len() as u32,
        servers,
        compression: res.mesh.compression,
        root: res.mesh.root() as u16,
        queued: res
            .mesh
            .macs
            .iter()
            .map(|m| match m {
                MacSpec::Csma { queuebuf_num, .. } => *queuebuf_num,
                MacSpec::Nullmac => 1,
            })
            .max()
            .unwrap_or(1),
    }
}

fn run_rep_inner(
    scn: &MeshScenario,
    res: &Resolved,
    rep: u32,
    progress: Option<&dyn crate::world::Progress>,
    capture: Option<&mut Capture>,
) -> RepResult {
    let medium = Mesh::new(res.mesh.clone(), scn.seed, rep);
    let motes = res.mesh.nodes.len();
    let root = res.mesh.root();
    let client_routes = |r: &Routes| -> Vec<Route> {
        res.clients
            .iter()
            .map(|&(c, s)| {
                // a cloud client's radio hops are the border router's
                let from = if c as usize >= motes { root } else { c as usize };
                Route {
                    client: c + 1,
                    server: s + 1,
                    hops: r.hops(from, s as usize),
                    hops_back: r.hops(s as usize, from),
                }
            })
            .collect()
    };
    let routes = client_routes(medium.routes());
    // RPL forming its DODAG as the run goes: the routes it had at the end
    let formed = res.mesh.rpl.is_some_and(|r| r.startup);
    let duration_ns = (scn.duration_s * 1e9).round() as u64;
    let clients: Vec<(HostId, u64)> =
        res.clients.iter().zip(&res.intervals_ns).map(|(&(c, _), &i)| (HostId(c), i)).collect();
    let w = &scn.workload;
    let mut burst: Option<BurstGroup> = None;
    let mut workload =
        Periodic::new(&clients, duration_ns, w.start_spread_ms / 1000.0, scn.seed, rep).with_parallel(res.outstanding);
    // a mote the model boots starts its client when its application starts
    for &(c, _) in &clients {
        if let Some(t) = medium.app_start_ns(c.index()) {
            workload = workload.with_start(c, t);
        }
    }
    if w.first_after_interval {
        workload = workload.first_after_interval();
    }
    if let Traffic::Burst(b) = &res.traffic {
        // CLOUD's burst: `continuous` clients drawn for this replication (uniform, without
        // replacement) run from 0; every other starts at start_s with its requests back to back
        let mut order: Vec<usize> = (0..clients.len()).collect();
        let mut rng = netmodel::Stream::BurstGroups.rng(scn.seed, rep);
        let keep = (b.continuous as usize).min(order.len());
        for i in 0..keep {
            let j = i + (rand_core::RngCore::next_u64(&mut rng) % (order.len() - i) as u64) as usize;
            order.swap(i, j);
        }
        let start_ns = (b.start_s * 1e9).round() as u64;
        for &k in &order[keep..] {
            workload = workload.with_schedule(clients[k].0, start_ns, b.exchanges as u64);
        }
        let members = order[keep..].iter().map(|&k| clients[k].0 .0).collect();
        burst = Some(BurstGroup { start_ns, exchanges: b.exchanges, clients: members });
    }
    if let Some(steps) = &res.open_loop {
        workload = workload.open_loop(steps.clone());
    }
    // CLOUD's baseline: each client (server) in turn; the run lasts until the last is done
    let chained = matches!(res.traffic, Traffic::Baseline(_));
    if let Traffic::Baseline(b) = &res.traffic {
        workload = workload.chained((b.gap_s * 1e9).round() as u64, b.exchanges as u64);
    }
    let mut stack = stack(scn, res, rep);
    if let Some(steps) = &res.background {
        // every source sends its share to the collector
        let sources: Vec<HostId> = res.clients.iter().map(|&(c, _)| HostId(c)).collect();
        let sink = HostId(res.clients.first().map_or(0, |c| c.1));
        let payload = match &res.traffic {
            Traffic::Collect(c) => c.payload_bytes,
            _ => 0,
        };
        stack =
            stack.with_background(Background::new(&sources, sink, steps.clone(), duration_ns, payload, scn.seed, rep));
    }
    let observer = Recorder::new(rep, progress);
    let until = if chained {
        engine::Until::SafetyNet(Instant::from_nanos(duration_ns))
    } else {
        engine::Until::Planned(Instant::from_nanos(duration_ns))
    };
    let mut result = match capture {
        Some(c) => engine::run(medium, Tapped::new(stack, c), workload, observer, until),
        None => engine::run(medium, stack, workload, observer, until),
    };
    fct_of_first_successes(&mut result.clients, &result.exchanges, w.fct_successes);
    let duration_ns = if chained { result.end_ns.max(1) } else { duration_ns };
    let burst_clients = burst.as_ref().map_or(0, |b| b.clients.len() as u32);
    let burst_completion_s = burst.map_or_else(Vec::new, |b| b.completions(&result.exchanges));
    result.map_network(|report| {
        let routes = if formed {
            let parents = report.nodes.iter().map(|n| n.parent.map_or(NONE, |p| (p - 1) as u16)).collect();
            client_routes(&Routes::from_parents(root, parents))
        } else {
            routes
        };
        NetworkReport::Mesh(MeshRun {
            report,
            routes,
            request_bytes: res.request_bytes,
            duration_ns,
            burst_completion_s,
            burst_clients,
            window_ns: match &res.traffic {
                Traffic::Collect(c) => (c.window_s * 1e9).round() as u64,
                _ => 0,
            },
            chained,
        })
    })
}

/// CLOUD's burst group: when it starts, how many exchanges each member runs, who they are.
struct BurstGroup {
    start_ns: u64,
    exchanges: u32,
    clients: Vec<u32>,
}

impl BurstGroup {
    /// The members that ran all their exchanges within the run: from the burst's start to the
    /// end of their last one (its response, or the expiry of its last timer: a failure), s.
    fn completions(&self, exchanges: &[ExchangeRecord]) -> Vec<f64> {
        let spans = ClientSpan::of_all(exchanges);
        (self.clients.iter().filter_map(|&c| spans.get(c as usize).copied().flatten()))
            .filter(|s| s.ended == self.exchanges)
            .map(|s| s.last_end_ns.saturating_sub(self.start_ns) as f64 / 1e9)
            .collect()
    }
}

/// Every mote's endpoint: clients with their server, servers with the fixed response, the
/// others (border router, routers) answering nothing.
pub fn stack(scn: &MeshScenario, res: &Resolved, rep: u32) -> UdpStack {
    let w = &scn.workload;
    let mut cfg = Config::new(res.cc.clone());
    cfg.token_len = w.token_len;
    cfg.give_up = res.give_up;
    // Erbium knows no transmission-number option: it echoes nothing (RTTCOAP's collector does)
    cfg.echo_transmission_numbers = scn.endpoint.echo_transmission_numbers;
    cfg.response_payloads = false; // the workloads count responses, never read them
    cfg.dedup_hash_seed = Some(crate::udp::DEDUP_HASH_SEED);
    let cfg = std::sync::Arc::new(cfg);
    let n = res.mesh.nodes.len() + res.mesh.cloud.map_or(0, |c| c.hosts as usize);
    let mut server_of = vec![None; n];
    // whom some client sends to: it answers (a server mote, RTTCOAP's collector)
    let mut answers = vec![false; n];
    for &(c, s) in &res.clients {
        server_of[c as usize] = Some(s);
        if let Some(a) = answers.get_mut(s as usize) {
            *a = true;
        }
    }
    let mut interval_of = vec![u64::MAX; n];
    for (&(c, _), &i) in res.clients.iter().zip(&res.intervals_ns) {
        interval_of[c as usize] = i;
    }
    let duration_ns = (scn.duration_s * 1e9) as u64;
    let rngs = netmodel::SmallRngs::new(scn.seed, rep); // one key for every mote

    // with clients that share one random sequence, each draws from the first client's stream
    let shared = match scn.workload.client_random {
        scenario::ClientRandom::Shared => res.clients.first().map(|&(c, _)| c),
        scenario::ClientRandom::PerMote => None,
    };
    let hosts = (0..n)
        .map(|i| {
            let stream = match shared {
                Some(first) if server_of[i].is_some() => first,
                _ => i as u32,
            };
            let ep = Endpoint::new(cfg.clone(), rngs.get(Stream::Host(stream))).expect("valid endpoint config");
            let role = res.mesh.nodes.get(i).map_or(netmodel::mesh::topology::Role::Client, |m| m.role);
            match (server_of[i], role) {
                // at most one exchange per interval (blocking client); a continuous one as many
                // as fit
                (Some(s), _) => {
                    let most = duration_ns.checked_div(interval_of[i]).map_or(1 << 16, |k| k + 1).min(1 << 16);
                    UdpHost::client(ep, HostId(s), most as usize)
                }
                // a server mote, or any host a client sends to (RTTCOAP's collector)
                (None, role) if role == netmodel::mesh::topology::Role::Server || answers[i] => {
                    UdpHost::server(ep.with_handler(Box::new(FixedResponse::new(res.response.clone()))))
                }
                (None, _) => UdpHost::server(ep),
            }
        })
        .collect();
    let stack = UdpStack::new(hosts, res.request.clone(), 0).with_detail(Detail::Exchanges);
    // a Cooja mote's nullmac send blocks through the frame's ACK wait, and Erbium arms its timer
    // after it
    if res.mesh.cooja_mote.is_some() {
        stack.with_send_returns()
    } else {
        stack
    }
}

/// Replaces each client's FCT by the time from its first transmission to the response of its
/// `k`-th successful exchange (None with fewer successes).
fn fct_of_first_successes(clients: &mut [ClientRecord], exchanges: &[ExchangeRecord], k: u32) {
    let mut at = 0;
    for c in clients.iter_mut() {
        c.fct_ns = None;
        let mine = exchanges[at..].iter().take_while(|e| e.client == c.client);
        let n = mine.clone().count();
        let first = mine.clone().next().map(|e| e.start_ns);
        let mut ok = 0;
        for e in mine {
            if let Some(rtt) = e.rtt_ns {
                ok += 1;
                if ok == k {
                    c.fct_ns = first.map(|f| e.start_ns + rtt - f);
                    break;
                }
            }
        }
        at += n;
    }
}
