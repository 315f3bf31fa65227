//! `coapcc load`: N concurrent clients, each with its own socket, endpoint and controller,
//! running the reference workload (testbed.md) against a real server.

use std::future::Future;
use std::net::SocketAddr;

use coap_cc::CcConfig;
use coap_endpoint::{ExchangeReport, Request};
use netsim::Workload;
use rand_chacha::ChaCha8Rng;

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
    pub workload: Workload,
    /// Batch sizes of random clients.
    pub batch: (u32, u32),
    /// Congestion control.
    pub cc: CcConfig,
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
}

fn batch_size(rng: &mut ChaCha8Rng, lo: u32, hi: u32) -> u32 {
    (coap_cc::rng::uniform(rng, lo as f64, hi as f64 + 1.0) as u32).min(hi)
}

/// Runs the clients until they finish or `stop` completes (Ctrl-C).
pub async fn run(spec: &LoadSpec, stop: impl Future<Output = ()>) -> std::io::Result<LoadResult> {
    let mut handles = Vec::new();
    for c in 0..spec.clients {
        let seed = rand_core::RngCore::next_u64(&mut netsim::component_rng(spec.seed, 0, c as u64));
        handles.push(crate::client(spec.bind, spec.cc.clone(), seed, None).await?);
    }
    let mut tasks = tokio::task::JoinSet::new();
    for (c, h) in handles.iter().enumerate() {
        let h = h.clone();
        let spec = spec.clone();
        tasks.spawn(async move {
            let mut rng = netsim::component_rng(spec.seed, 0, 0xFFFF_0006 + c as u64);
            let mut left_in_batch = 0;
            for done in 0..spec.exchanges {
                if spec.workload == Workload::Random && left_in_batch == 0 {
                    if done > 0 {
                        h.reset_cc(spec.server).await;
                    }
                    left_in_batch = batch_size(&mut rng, spec.batch.0, spec.batch.1).min(spec.exchanges - done);
                }
                left_in_batch = left_in_batch.saturating_sub(1);
                let _ = h.request(spec.server, spec.request.clone()).await;
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
    for h in handles {
        if interrupted {
            in_flight += h.in_flight().await;
        }
        reports.push(h.finish().await);
    }
    Ok(LoadResult { reports, in_flight, interrupted })
}
