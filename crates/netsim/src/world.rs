//! The reference world: N client hosts and one server behind the wired bottleneck
//! ([`netmodel::Bottleneck`]), running the scenario's workload over UDP or TCP on the engine.
//!
//! Hosts `0..N` are the clients, host `N` the server. Each component draws from its own stream
//! ([`netmodel::Stream`]): client `i`'s endpoint `Host(i)`, the server's `Server`, the links'
//! errors and the hop's jitter their own; the workload's (start offsets, batch sizes) are
//! described in [`netmodel::workload`].

use std::sync::atomic::{AtomicU64, Ordering};

use coap_cc::{CcConfig, Duration, Instant};
use coap_endpoint::{Config, Endpoint, Request};
use coap_wire::{registry, Code};
use netmodel::workload::Batches;
use netmodel::{Bottleneck, HostId, Stream, WorkloadKind};

use crate::capture::{Addressing, Capture, SynOptions, Tapped};
use crate::engine::{self, Observer, Records, RunEnd};
use crate::record::{Detail, NetworkReport, RepResult};
use crate::scenario::{Scenario, Transport};
use crate::tcp_stack::TcpStack;
use crate::udp::{FixedResponse, UdpHost, UdpStack};

/// Told of every finished exchange by the thread that runs its replication: what a progress
/// display counts. A plain counter ([`AtomicU64`]) counts the exchanges.
pub trait Progress: Sync {
    /// One more exchange finished; its replication's virtual time has passed `sim_s` more whole
    /// seconds since its previous one (over a replication these add up to the whole seconds it
    /// has simulated, which is what a run of fixed length counts).
    fn exchange_done(&self, sim_s: u64);
}

impl Progress for AtomicU64 {
    fn exchange_done(&self, _: u64) {
        self.fetch_add(1, Ordering::Relaxed);
    }
}

/// Builds a replication's results; tells a progress display of every finished exchange.
pub struct Recorder<'a> {
    rep: u32,
    progress: Option<&'a dyn Progress>,
    /// Whole virtual seconds told to `progress` so far.
    told_s: u64,
}

impl<'a> Recorder<'a> {
    /// The recorder of replication `rep`, telling `progress` of its exchanges.
    pub fn new(rep: u32, progress: Option<&'a dyn Progress>) -> Self {
        Recorder { rep, progress, told_s: 0 }
    }
}

impl std::fmt::Debug for Recorder<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder").field("rep", &self.rep).field("progress", &self.progress.is_some()).finish()
    }
}

impl<R> Observer<R> for Recorder<'_> {
    type Output = RepResult<R>;

    fn exchange_ended(&mut self, now: Instant, _: HostId) {
        if let Some(p) = self.progress {
            let s = now.as_nanos() / 1_000_000_000;
            p.exchange_done(s - self.told_s);
            self.told_s = s;
        }
    }

    fn finish(self, end: RunEnd, records: Records, network: R) -> RepResult<R> {
        RepResult {
            rep: self.rep,
            clients: records.clients,
            exchanges: records.exchanges,
            stats: records.stats,
            network,
            events: end.events,
            end_ns: end.end_ns,
            truncated: end.truncated,
            tcp: records.tcp,
        }
    }
}

/// Runs replication `rep` of a resolved scenario over its transport, keeping the summary's
/// [`Detail`]. `progress`, if given, is told of every finished exchange.
pub fn run_rep(scn: &Scenario, transport: &Transport, rep: u32, progress: Option<&dyn Progress>) -> RepResult {
    run_rep_with(scn, transport, rep, progress, Detail::Summary)
}

/// [`run_rep`], keeping `detail` of every exchange.
pub fn run_rep_with(
    scn: &Scenario,
    transport: &Transport,
    rep: u32,
    progress: Option<&dyn Progress>,
    detail: Detail,
) -> RepResult {
    run_rep_inner(scn, transport, rep, progress, detail, None)
}

/// [`run_rep_with`], every packet sent (a datagram, or a TCP segment) written to `capture`
/// ([`addressing`]). The results are those of the run without it.
pub fn run_rep_captured(
    scn: &Scenario,
    transport: &Transport,
    rep: u32,
    progress: Option<&dyn Progress>,
    detail: Detail,
    capture: &mut Capture,
) -> RepResult {
    run_rep_inner(scn, transport, rep, progress, detail, Some(capture))
}

/// Where the bottleneck's hosts are in a capture of a run over `transport`.
pub fn addressing(scn: &Scenario, transport: &Transport) -> Addressing {
    let tcp = match transport {
        Transport::Udp(_) => None,
        Transport::Tcp(p) => {
            Some(SynOptions { mss: p.mss.min(u16::MAX as u32) as u16, sack: p.sack, bytes: p.syn_options })
        }
    };
    Addressing::Bottleneck { server: HostId(scn.clients), tcp }
}

fn run_rep_inner(
    scn: &Scenario,
    transport: &Transport,
    rep: u32,
    progress: Option<&dyn Progress>,
    detail: Detail,
    capture: Option<&mut Capture>,
) -> RepResult {
    let server = HostId(scn.clients);
    let medium = Bottleneck::new(&scn.bottleneck(), server, scn.seed, rep);
    let workload = Batches::new(scn.workload_spec(), scn.clients, scn.seed, rep);
    let observer = Recorder::new(rep, progress);
    let limit = engine::Until::SafetyNet(Instant::ZERO + Duration::from_secs_f64(scn.max_time_s));
    let result = match transport {
        Transport::Udp(cc) => {
            let stack = udp_stack(scn, cc, rep, detail);
            match capture {
                Some(c) => engine::run(medium, Tapped::new(stack, c), workload, observer, limit),
                None => engine::run(medium, stack, workload, observer, limit),
            }
        }
        Transport::Tcp(p) => {
            let pairs: Vec<(HostId, HostId)> = (0..scn.clients).map(|c| (HostId(c), server)).collect();
            let payload = vec![0x2A; scn.payload_bytes as usize];
            let continuous = scn.workload == WorkloadKind::Continuous;
            let stack = TcpStack::new(
                p.clone(),
                scn.clients + 1,
                &pairs,
                continuous,
                request(scn),
                &payload,
                scn.exchanges as usize,
            )
            .with_detail(detail)
            .with_token_len(scn.token_bytes as usize);
            match capture {
                Some(c) => engine::run(medium, Tapped::new(stack, c), workload, observer, limit),
                None => engine::run(medium, stack, workload, observer, limit),
            }
        }
    };
    let mut result = result.map_network(NetworkReport::Bottleneck);
    if result.truncated {
        // a client cut short has no FCT: its last recorded exchange is not its workload's last
        for c in result.clients.iter_mut().filter(|c| c.exchanges < scn.exchanges) {
            c.fct_ns = None;
        }
    }
    result
}

/// What one deduplication entry of the server's costs (its reply is the scenario's payload).
fn dedup_entry_bytes(scn: &Scenario) -> usize {
    coap_endpoint::ENTRY_OVERHEAD + 2 * core::mem::size_of::<HostId>() + scn.payload_bytes as usize
}

fn udp_stack(scn: &Scenario, cc: &CcConfig, rep: u32, detail: Detail) -> UdpStack {
    let mut client_cfg = Config::new(cc.clone());
    // without per-exchange records, a finished exchange keeps no report for its lifetime
    client_cfg.report_at_finish = detail == Detail::Summary;
    client_cfg.response_payloads = false; // the workloads count responses, never read them
    client_cfg.token_len = scn.token_bytes as usize;
    let client_cfg = std::sync::Arc::new(client_cfg); // one for every client
    let mut server_cfg = Config::new(cc.clone());
    // the server's cache must hold every client's exchanges of an EXCHANGE_LIFETIME: a budget
    // that grows with the clients (64 entries each, at least the default)
    server_cfg.dedup_bytes = server_cfg.dedup_bytes.max(scn.clients as usize * 64 * dedup_entry_bytes(scn));
    server_cfg.dedup_hash_seed = Some(crate::udp::DEDUP_HASH_SEED);
    let server = HostId(scn.clients);
    let mut hosts = Vec::with_capacity(scn.clients as usize + 1);
    let rngs = netmodel::SmallRngs::new(scn.seed, rep); // one key for every host
    hosts.extend((0..scn.clients).map(|c| {
        let ep = Endpoint::new(client_cfg.clone(), rngs.get(Stream::Host(c))).expect("valid endpoint config");
        UdpHost::client(ep, server, scn.exchanges as usize)
    }));
    let ep = Endpoint::new(server_cfg, rngs.get(Stream::Server))
        .expect("valid endpoint config")
        .with_handler(Box::new(FixedResponse::payload(vec![0x2A; scn.payload_bytes as usize])));
    hosts.push(UdpHost::server(ep));
    UdpStack::new(hosts, request(scn), scn.ip_header_bytes + scn.udp_header_bytes).with_detail(detail)
}

/// The request of every exchange: a GET of the scenario's path (one Uri-Path option).
fn request(scn: &Scenario) -> Request {
    Request {
        code: Code::GET,
        options: vec![(registry::URI_PATH, scn.path.as_bytes().to_vec())],
        payload: Vec::new(),
        confirmable: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Adds up the seconds it is told.
    struct Seconds(AtomicU64);

    impl Progress for Seconds {
        fn exchange_done(&self, sim_s: u64) {
            self.0.fetch_add(sim_s, Ordering::Relaxed);
        }
    }

    #[test]
    fn a_recorder_tells_whole_seconds_that_add_up_to_the_time_simulated() {
        let (seconds, count) = (Seconds(AtomicU64::new(0)), AtomicU64::new(0));
        let mut told = Recorder::new(0, Some(&seconds));
        let mut counted = Recorder::new(0, Some(&count));
        // exchanges end at 0.5 s, 2.7 s, 2.9 s and 5.0 s: 0 + 2 + 0 + 3 whole seconds
        for ns in [500_000_000, 2_700_000_000, 2_900_000_000, 5_000_000_000] {
            Observer::<()>::exchange_ended(&mut told, Instant::from_nanos(ns), HostId(0));
            Observer::<()>::exchange_ended(&mut counted, Instant::from_nanos(ns), HostId(0));
        }
        assert_eq!(seconds.0.load(Ordering::Relaxed), 5);
        assert_eq!(count.load(Ordering::Relaxed), 4, "a plain counter counts exchanges");
    }
}
