//! `coapcc load`: N concurrent clients, each with its own socket, endpoint and controller,
//! running the reference workload (docs/bottleneck.md) against a real server.
//!
//! Statistics are streamed: each exchange's report is folded into its client's [`ClientStats`]
//! (counters and the ends of its flow) and its RTT into the run's [`Rtts`] as it retires, so a
//! run's memory is bounded per client whatever its length. The RTTs are the simulator's
//! (`runstats`): nanoseconds kept exactly up to `runstats::EXACT_CAP` of them, then in a sketch
//! of bounded size, and their quantiles are the simulator's too (type 7: exact, or within
//! `runstats::RELATIVE_ERROR` from the sketch), so `load --json` and `sim --json` report RTTs
//! by one definition.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use runstats::Rtts;

use coap_cc::CcConfig;
use coap_endpoint::{ExchangeId, ExchangeReport, FailReason, Outcome, Request, Tally};
use netmodel::{ClientSteps, Next, Stream, WorkloadKind, WorkloadSpec};

/// What to run.
#[derive(Debug, Clone)]
pub struct LoadSpec {
    /// The server (or a relay in front of it).
    pub server: SocketAddr,
    /// The request each exchange sends.
    pub request: Request,
    /// Number of clients.
    pub clients: u32,
    /// Exchanges per client.
    pub exchanges: u32,
    /// Continuous, or random batches with CC state reset between them.
    pub workload: WorkloadKind,
    /// Batch sizes of random clients.
    pub batch: (u32, u32),
    /// Congestion control; `None`: CoAP over TCP (RFC 8323), the OS's TCP.
    pub cc: Option<CcConfig>,
    /// Seed of the clients' RNGs (client i uses stream i of it, as in the simulator).
    pub seed: u64,
    /// Local address to bind the clients' sockets to (port 0).
    pub bind: SocketAddr,
    /// Client `i` binds the `i`-th address after `bind`'s (`bind` itself for client 0): one
    /// source address per client, as the IP-level emulator tells clients apart.
    pub bind_each: bool,
    /// CoAP over TCP: the connections' deadlines ([`crate::tcp::CLIENT_LIMITS`] by default;
    /// none at all leaves a connection to TCP's own retries, as in the simulator).
    pub tcp_limits: coap_endpoint::StreamLimits,
}

impl LoadSpec {
    /// Client `c`'s local address.
    pub fn bind_of(&self, c: u32) -> SocketAddr {
        if !self.bind_each {
            return self.bind;
        }
        let ip: std::net::IpAddr = match self.bind.ip() {
            std::net::IpAddr::V4(a) => std::net::Ipv4Addr::from(u32::from(a).wrapping_add(c)).into(),
            std::net::IpAddr::V6(a) => std::net::Ipv6Addr::from(u128::from(a).wrapping_add(c.into())).into(),
        };
        SocketAddr::new(ip, self.bind.port())
    }

    /// Client `c`'s TCP connection to the server, from its own address if it has one.
    fn connect(&self, c: u32) -> impl Future<Output = std::io::Result<crate::tcp::TcpClient>> + Send + 'static {
        let b = self.bind_of(c);
        let local = (!b.ip().is_unspecified() || b.port() != 0).then_some(b);
        crate::tcp::connect_from(self.server, local, self.tcp_limits)
    }
}

/// One client's exchanges, folded as they end: constant memory whatever the run's length.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClientStats {
    /// Its exchanges (Echo challenges left out): counts and the ends of its flow.
    pub tally: Tally,
    /// Exchanges by number of retransmissions (index = retransmissions).
    pub retransmissions_hist: Vec<u64>,
    /// Exchanges answered with an Echo challenge (4.01), left out of everything else.
    pub echo_challenges: u64,
    /// Requests the server refused (4.01 again after the repeat with its Echo): failed
    /// exchanges, which the tally left out with the challenges.
    pub refused: u64,
    /// Block-wise transfers that failed (blocks that did not fit together): each block got its
    /// answer, so the tally counts them; the transfer, the workload's exchange, failed.
    pub failed_transfers: u64,
    /// The client ran its whole workload (not interrupted).
    pub complete: bool,
}

impl ClientStats {
    /// Folds in one exchange's report.
    pub fn add(&mut self, r: &ExchangeReport<SocketAddr>) {
        if r.outcome == Outcome::Response(coap_wire::Code::UNAUTHORIZED) {
            self.echo_challenges += 1;
            return;
        }
        self.tally.add(r);
        let retx = r.retransmissions() as usize;
        if self.retransmissions_hist.len() <= retx {
            self.retransmissions_hist.resize(retx + 1, 0);
        }
        self.retransmissions_hist[retx] += 1;
    }

    /// The flow completion time ([`Tally::flow`]); `None` also if the client did not run its
    /// whole workload (an interrupted run).
    pub fn fct(&self) -> Option<coap_cc::Duration> {
        self.tally.flow().filter(|_| self.complete)
    }
}

/// Folds `r` into `stats`, and its RTT (if it got a response) into `rtts`.
fn fold(stats: &mut ClientStats, rtts: &Mutex<Rtts>, r: &ExchangeReport<SocketAddr>) {
    stats.add(r);
    if r.outcome == Outcome::Response(coap_wire::Code::UNAUTHORIZED) {
        return;
    }
    if let Some(rtt) = r.rtt() {
        if let Ok(mut h) = rtts.lock() {
            h.record(rtt.as_nanos());
        }
    }
}

/// The clients' folded statistics and the run's RTTs, taken out of their locks.
fn collected(stats: &[Arc<Mutex<ClientStats>>], rtts: &Mutex<Rtts>) -> (Vec<ClientStats>, Rtts) {
    let clients = stats.iter().map(|s| s.lock().map(|s| s.clone()).unwrap_or_default()).collect();
    (clients, rtts.lock().map(|h| h.clone()).unwrap_or_default())
}

/// What a load run leaves.
#[derive(Debug)]
pub struct LoadResult {
    /// Per client, its exchanges folded.
    pub clients: Vec<ClientStats>,
    /// Every answered exchange's RTT.
    pub rtts: Rtts,
    /// Finished exchanges retired before EXCHANGE_LIFETIME to bound memory
    /// ([`crate::MAX_FINISHED`] per client): duplicates of their responses that came later were
    /// not counted.
    pub early_retirements: u64,
    /// Exchanges still waiting for their outcome when the run was interrupted.
    pub in_flight: usize,
    /// Whether `stop` ended the run early.
    pub interrupted: bool,
    /// Exchanges answered with an Echo challenge (4.01) and repeated with the Echo; they are
    /// left out of `reports` (the repeat is the workload's exchange; its FCT starts then).
    pub echo_challenges: usize,
}

/// Runs the clients until they finish or `stop` completes (Ctrl-C).
pub async fn run(spec: &LoadSpec, stop: impl Future<Output = ()>) -> std::io::Result<LoadResult> {
    let Some(cc) = spec.cc.clone() else { return run_tcp(spec, stop).await };
    let rtts = Arc::new(Mutex::new(Rtts::default()));
    let mut handles = Vec::new();
    let mut stats = Vec::new();
    for c in 0..spec.clients {
        let seed = rand_core::RngCore::next_u64(&mut Stream::Host(c).rng(spec.seed, 0));
        // each report folded as its exchange retires, not kept
        let st = Arc::new(Mutex::new(ClientStats::default()));
        let (s, r) = (st.clone(), rtts.clone());
        let retired: crate::RetiredFn = Box::new(move |report| {
            if let Ok(mut s) = s.lock() {
                fold(&mut s, &r, &report);
            }
        });
        // connected to the server, so that an ICMP port unreachable is reported (Linux reports
        // it on connected sockets only): a run against a closed port ends at once
        let logs = crate::Logs { retired: Some(retired), ..Default::default() };
        let opts = crate::ClientOptions { connect: Some(spec.server), logs };
        handles.push(crate::client_with(spec.bind_of(c), cc.clone(), seed, opts).await?);
        stats.push(st);
    }
    let mut tasks = tokio::task::JoinSet::new();
    let refused = Arc::new(tokio::sync::Notify::new());
    for (c, h) in handles.iter().enumerate() {
        let h = h.clone();
        let spec = spec.clone();
        let stats = stats[c].clone();
        let refused = refused.clone();
        tasks.spawn(async move {
            // the simulator's workload and draws (replication 0): client c's own stream
            let wspec = workload_spec(&spec);
            let mut w = ClientSteps::new(c as u32, spec.seed, 0);
            let mut next = w.start(&wspec);
            while let Next::Exchange { fresh } = next {
                if fresh {
                    h.reset_cc(spec.server).await;
                }
                // a transfer: an Echo challenge of the server's amplification mitigation (RFC 9175)
                // is answered by repeating the request with its Echo (the challenged exchange is
                // left out of the statistics, see below)
                let r = h.transfer(spec.server, spec.request.clone(), None, MAX_BODY).await;
                match r {
                    Err(crate::RequestFailure::Unreachable) => {
                        refused.notify_one();
                        return;
                    }
                    Err(crate::RequestFailure::Blockwise) => {
                        if let Ok(mut s) = stats.lock() {
                            s.failed_transfers += 1;
                        }
                    }
                    Ok(reply) if reply.code == coap_wire::Code::UNAUTHORIZED => {
                        if let Ok(mut s) = stats.lock() {
                            s.refused += 1;
                        }
                    }
                    _ => {}
                }
                next = w.ended(&wspec);
            }
            if let Ok(mut s) = stats.lock() {
                s.complete = true;
            }
        });
    }
    let all_done = async { while tasks.join_next().await.is_some() {} };
    let interrupted = tokio::select! {
        // in this order: when every client returned for a refused port, all_done is ready too,
        // and an unbiased choice reported an empty run as a success (exit 0) in 2 runs of 5
        biased;
        _ = refused.notified() => {
            tasks.abort_all();
            return Err(std::io::Error::new(
                std::io::ErrorKind::ConnectionRefused,
                "port unreachable (ICMP): nothing listens there",
            ));
        }
        _ = all_done => false,
        _ = stop => true,
    };
    // the clients stop at once (their exchanges in flight stay in their endpoints, counted)
    tasks.abort_all();
    let (mut in_flight, mut early_retirements) = (0, 0);
    for h in handles {
        if interrupted {
            in_flight += h.in_flight().await;
        }
        early_retirements += h.state().await.map_or(0, |s| s.early_retirements);
        // its exchanges still open retire now, through the same fold
        h.finish().await;
    }
    let (clients, rtts) = collected(&stats, &rtts);
    let echo_challenges = clients.iter().map(|c| c.echo_challenges as usize).sum();
    Ok(LoadResult { clients, rtts, in_flight, interrupted, echo_challenges, early_retirements })
}

/// The largest response body a load client accepts.
const MAX_BODY: usize = 1 << 20;

fn workload_spec(spec: &LoadSpec) -> WorkloadSpec {
    WorkloadSpec {
        kind: spec.workload,
        exchanges: spec.exchanges,
        batch_min: spec.batch.0,
        batch_max: spec.batch.1,
        start_spread_s: 0.0,
    }
}

fn report(
    id: u64,
    server: SocketAddr,
    start: coap_cc::Instant,
    end: coap_cc::Instant,
    outcome: Outcome,
) -> ExchangeReport<SocketAddr> {
    ExchangeReport {
        id: ExchangeId(id),
        dest: server,
        sent: [start].into_iter().collect(),
        rtos: Default::default(),
        expired: 0,
        acked_at: matches!(outcome, Outcome::Response(_)).then_some(end),
        responded_at: matches!(outcome, Outcome::Response(_)).then_some(end),
        outcome,
        duplicates: 0,
    }
}

/// CoAP over TCP: continuous clients connect and exchange CSMs before the clock starts (all at
/// once; a client whose connection fails fails its exchanges); random clients open a connection
/// per batch (its set-up counts in the batch's first exchange) and release it after.
async fn run_tcp(spec: &LoadSpec, stop: impl Future<Output = ()>) -> std::io::Result<LoadResult> {
    let clock = crate::Clock::new();
    let mut pre = Vec::new();
    if spec.workload == WorkloadKind::Continuous {
        let mut set = tokio::task::JoinSet::new();
        for c in 0..spec.clients {
            let conn = spec.connect(c);
            set.spawn(async move { (c, conn.await) });
        }
        pre.resize_with(spec.clients as usize, || None);
        // a client whose connection fails (its SYN retries run out, or the server resets it)
        // fails its exchanges, as in the simulator; only when every one fails is it the run's error
        let mut first_error = None;
        while let Some(r) = set.join_next().await {
            let (c, conn) = r.map_err(std::io::Error::other)?;
            match conn {
                Ok(k) => pre[c as usize] = Some(k),
                Err(e) => first_error = first_error.or(Some(e)),
            }
        }
        if let (Some(e), true) = (first_error, pre.iter().all(Option::is_none)) {
            return Err(e);
        }
    } else {
        pre.resize_with(spec.clients as usize, || None);
    }
    let in_flight = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let rtts = Arc::new(Mutex::new(Rtts::default()));
    let stats: Vec<Arc<Mutex<ClientStats>>> =
        (0..spec.clients).map(|_| Arc::new(Mutex::new(ClientStats::default()))).collect();
    let mut tasks = tokio::task::JoinSet::new();
    for (c, conn) in pre.into_iter().enumerate() {
        let spec = spec.clone();
        let in_flight = in_flight.clone();
        let (stats, rtts) = (stats[c].clone(), rtts.clone());
        tasks.spawn(async move {
            let wspec = workload_spec(&spec);
            let mut w = ClientSteps::new(c as u32, spec.seed, 0);
            let mut conn = conn;
            let mut setup_start = None;
            let mut next = w.start(&wspec);
            while let Next::Exchange { fresh } = next {
                let done = w.done();
                if spec.workload == WorkloadKind::Random && (fresh || done == 0) {
                    if let Some(old) = conn.take() {
                        old.release().await;
                    }
                    setup_start = Some(clock.now());
                    conn = spec.connect(c as u32).await.ok();
                }
                let start = setup_start.take().unwrap_or_else(|| clock.now());
                let outcome = match &conn {
                    Some(k) => {
                        in_flight.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let r = k.request(spec.request.clone()).await;
                        in_flight.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
                        match r {
                            Ok(reply) => Outcome::Response(reply.code),
                            Err(_) => Outcome::Failed(FailReason::Reset),
                        }
                    }
                    None => Outcome::Failed(FailReason::Timeout),
                };
                let r = report(done as u64, spec.server, start, clock.now(), outcome);
                if let Ok(mut s) = stats.lock() {
                    fold(&mut s, &rtts, &r);
                }
                next = w.ended(&wspec);
            }
            if let Some(k) = conn {
                k.release().await;
            }
            if let Ok(mut s) = stats.lock() {
                s.complete = true;
            }
        });
    }
    let collect = async { while tasks.join_next().await.is_some() {} };
    let interrupted = tokio::select! {
        _ = collect => false,
        _ = stop => true,
    };
    tasks.abort_all();
    let in_flight = in_flight.load(std::sync::atomic::Ordering::Relaxed);
    let (clients, rtts) = collected(&stats, &rtts);
    Ok(LoadResult { clients, rtts, in_flight, interrupted, echo_challenges: 0, early_retirements: 0 })
}

#[cfg(test)]
mod tests {
    use super::*;
    use coap_cc::{Duration, Instant};

    fn at(ms: u64) -> Instant {
        Instant::from_nanos(ms * 1_000_000)
    }

    /// Exchange `id` sent at `sent` (ms), retransmitted after each of `rtos` (ms) expired,
    /// answered at `answered` (ms) with `code`, or failed.
    fn exchange(
        id: u64,
        sent: u64,
        rtos: &[u64],
        answered: Option<(u64, coap_wire::Code)>,
    ) -> ExchangeReport<SocketAddr> {
        let mut times = coap_endpoint::PerTransmission::from_elem(at(sent), 1);
        for r in rtos {
            times.push(*times.last().unwrap() + Duration::from_nanos(r * 1_000_000));
        }
        ExchangeReport {
            id: ExchangeId(id),
            dest: SocketAddr::from(([127, 0, 0, 1], 5683)),
            sent: times,
            rtos: rtos.iter().map(|r| Duration::from_nanos(r * 1_000_000)).collect(),
            expired: rtos.len() as u32,
            acked_at: answered.map(|a| at(a.0)),
            responded_at: answered.map(|a| at(a.0)),
            outcome: answered.map_or(Outcome::Failed(FailReason::Timeout), |a| Outcome::Response(a.1)),
            duplicates: rtos.len() as u32,
        }
    }

    #[test]
    fn a_clients_exchanges_fold_in_any_order() {
        let ok = coap_wire::Code::CONTENT;
        let reports = [
            exchange(0, 100, &[], Some((350, ok))),
            // challenged with Echo: left out of everything
            exchange(1, 350, &[], Some((360, coap_wire::Code::UNAUTHORIZED))),
            exchange(2, 360, &[2000, 4000], Some((6600, ok))),
            exchange(3, 6600, &[2500], None),
            exchange(4, 9100, &[], Some((9400, ok))),
        ];
        let rtts = Mutex::new(Rtts::default());
        let mut forward = ClientStats { complete: true, ..ClientStats::default() };
        for r in &reports {
            fold(&mut forward, &rtts, r);
        }
        // by hand: 4 exchanges (one Echo challenge apart), 1 failed, retransmissions 0, 2, 1, 0;
        // duplicates 3; the largest expired RTO 4 s; FCT from 100 ms to 9,400 ms
        assert_eq!((forward.tally.exchanges, forward.tally.failed, forward.echo_challenges), (4, 1, 1));
        assert_eq!(forward.retransmissions_hist, [2, 1, 1]);
        assert_eq!(forward.tally.duplicates, 3);
        assert_eq!(forward.tally.max_expired_rto, Duration::from_nanos(4_000_000_000));
        assert_eq!(forward.fct(), Some(Duration::from_nanos(9_300_000_000)));
        // RTTs of the answered ones: 250, 6,240 and 300 ms
        let h = rtts.lock().unwrap();
        let mut ns = h.exact().unwrap().to_vec();
        ns.sort_unstable();
        assert_eq!(ns, [250_000_000, 300_000_000, 6_240_000_000]);
        // retirement order does not matter
        let mut shuffled = ClientStats { complete: true, ..ClientStats::default() };
        for i in [4, 2, 0, 3, 1] {
            shuffled.add(&reports[i]);
        }
        assert_eq!(shuffled, forward);
        // a last exchange that failed: no FCT; nor for a client interrupted before its end
        let mut cut = ClientStats { complete: true, ..ClientStats::default() };
        cut.add(&reports[0]);
        cut.add(&reports[3]);
        assert_eq!(cut.fct(), None);
        assert_eq!(ClientStats { complete: false, ..forward }.fct(), None);
    }
}
