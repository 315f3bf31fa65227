//! `coapcc load`: N concurrent clients, each with its own socket, endpoint and controller,
//! running the reference workload (docs/bottleneck.md) against a real server.

use std::future::Future;
use std::net::SocketAddr;

use coap_cc::CcConfig;
use coap_endpoint::{ExchangeId, ExchangeReport, FailReason, Outcome, Request};
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
}

/// What a load run leaves.
#[derive(Debug)]
pub struct LoadResult {
    /// Per client, its exchanges' reports.
    pub reports: Vec<Vec<ExchangeReport<SocketAddr>>>,
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
    let mut handles = Vec::new();
    for c in 0..spec.clients {
        let seed = rand_core::RngCore::next_u64(&mut Stream::Host(c).rng(spec.seed, 0));
        handles.push(crate::client(spec.bind, cc.clone(), seed, None).await?);
    }
    let mut tasks = tokio::task::JoinSet::new();
    for (c, h) in handles.iter().enumerate() {
        let h = h.clone();
        let spec = spec.clone();
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
                let _ = h.transfer(spec.server, spec.request.clone(), None, MAX_BODY).await;
                next = w.ended(&wspec);
            }
        });
    }
    let all_done = async { while tasks.join_next().await.is_some() {} };
    let interrupted = tokio::select! {
        _ = all_done => false,
        _ = stop => true,
    };
    let mut in_flight = 0;
    let mut reports = Vec::new();
    let mut echo_challenges = 0;
    for h in handles {
        if interrupted {
            in_flight += h.in_flight().await;
        }
        let mut r = h.finish().await;
        let before = r.len();
        r.retain(|x| x.outcome != Outcome::Response(coap_wire::Code::UNAUTHORIZED));
        echo_challenges += before - r.len();
        reports.push(r);
    }
    Ok(LoadResult { reports, in_flight, interrupted, echo_challenges })
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
        sent: vec![start],
        rtos: Vec::new(),
        expired: 0,
        acked_at: matches!(outcome, Outcome::Response(_)).then_some(end),
        responded_at: matches!(outcome, Outcome::Response(_)).then_some(end),
        outcome,
        duplicates: 0,
    }
}

/// CoAP over TCP: continuous clients connect and exchange CSMs before the clock starts; random
/// clients open a connection per batch (its set-up counts in the batch's first exchange) and
/// release it after.
async fn run_tcp(spec: &LoadSpec, stop: impl Future<Output = ()>) -> std::io::Result<LoadResult> {
    let clock = crate::Clock::new();
    let mut pre = Vec::new();
    if spec.workload == WorkloadKind::Continuous {
        for _ in 0..spec.clients {
            pre.push(Some(crate::tcp::connect(spec.server).await?));
        }
    } else {
        pre.resize_with(spec.clients as usize, || None);
    }
    let in_flight = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut tasks = tokio::task::JoinSet::new();
    for (c, conn) in pre.into_iter().enumerate() {
        let spec = spec.clone();
        let in_flight = in_flight.clone();
        tasks.spawn(async move {
            let wspec = workload_spec(&spec);
            let mut w = ClientSteps::new(c as u32, spec.seed, 0);
            let mut reports = Vec::new();
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
                    conn = crate::tcp::connect(spec.server).await.ok();
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
                reports.push(report(done as u64, spec.server, start, clock.now(), outcome));
                next = w.ended(&wspec);
            }
            if let Some(k) = conn {
                k.release().await;
            }
            (c, reports)
        });
    }
    let mut reports: Vec<Vec<ExchangeReport<SocketAddr>>> = vec![Vec::new(); spec.clients as usize];
    let collect = async {
        while let Some(r) = tasks.join_next().await {
            if let Ok((c, rep)) = r {
                reports[c] = rep;
            }
        }
    };
    let interrupted = tokio::select! {
        _ = collect => false,
        _ = stop => true,
    };
    let in_flight = in_flight.load(std::sync::atomic::Ordering::Relaxed);
    Ok(LoadResult { reports, in_flight, interrupted, echo_challenges: 0 })
}
