//! `coapcc load` (the real stack's clients against a real server, [`run`]) and its statistics in
//! the simulator's terms: the fields of a simulation's [`Summary`] that a real run has, computed
//! by the same definitions (`runstats`: one quantile rule, one RTT sketch), so `load --json` and
//! `sim --json` can be read side by side. The command line and the Python package both call it.

use std::future::Future;
use std::net::SocketAddr;

use coap_cc::CcConfig;
use coap_endpoint::Request as CoapRequest;
use coap_net::load::{LoadResult, LoadSpec};
use coap_wire::Code;
use netsim::summary::NetworkSummary;
use netsim::Summary;
use netsim::WorkloadKind;
use runstats::{Distribution, Tail};

/// What to run: `clients` clients of `exchanges` GETs each against the `server` URI.
#[derive(Debug, Clone)]
pub struct Request {
    /// The resource every exchange requests: `coap://` (UDP) or `coap+tcp://` (RFC 8323).
    pub server: String,
    /// Concurrent clients, each with its own socket, endpoint and controller.
    pub clients: u32,
    /// Exchanges per client.
    pub exchanges: u32,
    /// Continuous, or random batches of 1 to 10 with the CC state reset between them.
    pub workload: WorkloadKind,
    /// The algorithm, `NAME[:key=value,...]` (default: `default`); over TCP only `tcp`.
    pub cc: Option<String>,
    /// Seed of the clients' RNGs (default: from the OS).
    pub seed: Option<u64>,
    /// Local address for the clients' sockets.
    pub bind: SocketAddr,
    /// One local address per client: client `i` binds the `i`-th address after `bind`'s.
    pub bind_each: bool,
    /// CoAP over TCP: keep the connections' deadlines (the server's CSM and each frame within
    /// 10 s, each response within 120 s); without them a connection lasts as long as TCP keeps
    /// it, as in the simulator.
    pub deadlines: bool,
}

/// What a load run did.
#[derive(Debug)]
pub struct Outcome {
    /// The clients' statistics as they ended.
    pub result: LoadResult,
    /// Their summary ([`summary`]).
    pub summary: Summary,
    /// The algorithm (`None`: CoAP over TCP).
    pub cc: Option<CcConfig>,
    /// Wall-clock seconds of the run.
    pub wall_s: f64,
}

impl Outcome {
    /// The stack as tables name it: the algorithm with its parameters, or `tcp`.
    pub fn stack(&self) -> String {
        self.cc.as_ref().map_or("tcp".to_string(), |c| c.to_string())
    }

    /// Requests sent ([`requests_sent`]).
    pub fn requests(&self) -> u64 {
        requests_sent(self.summary.exchanges, &self.summary.retransmissions_hist)
    }

    /// The object `load --json` prints.
    pub fn to_json(&self, req: &Request) -> serde_json::Value {
        let (s, r, requests) = (&self.summary, &self.result, self.requests());
        serde_json::json!({
            "fct_s": s.fct_s,
            "exchanges": s.exchanges,
            "failed_exchanges": s.failed_exchanges,
            "retransmissions_hist": s.retransmissions_hist,
            "rtt_s": s.rtt_s,
            "unnecessary_retx_per_client": s.unnecessary_retx_per_client,
            "max_expired_rto_per_client_s": s.max_expired_rto_per_client_s,
            "requests_sent": requests,
            "wall_s": self.wall_s,
            "requests_per_s": requests as f64 / self.wall_s.max(1e-9),
            "interrupted": r.interrupted,
            "in_flight": r.in_flight,
            "echo_challenges": r.echo_challenges,
            "early_retirements": r.early_retirements,
            "cc": self.stack(),
            "clients": req.clients,
            "workload": if req.workload == WorkloadKind::Random { "random" } else { "continuous" },
            "server": req.server,
        })
    }
}

type Error = Box<dyn std::error::Error + Send + Sync>;

/// Runs the clients until they are done or `stop` resolves (then the run is `interrupted`).
pub async fn run(req: &Request, stop: impl Future<Output = ()>) -> Result<Outcome, Error> {
    if req.clients == 0 || req.exchanges == 0 {
        return Err(crate::usage("--clients and --exchanges must be at least 1"));
    }
    let sockets = coap_net::within_fd_budget(req.clients as usize);
    if sockets < req.clients as usize {
        return Err(format!(
            "--clients {} needs a socket per client, but the open-file limit leaves {sockets}: raise it (`ulimit -n {}`) or run fewer clients",
            req.clients,
            req.clients as u64 + 64
        )
        .into());
    }
    let uri = crate::uri::parse(&req.server).await?;
    let cc = transport(&uri, &req.server, req.cc.as_deref())?;
    let spec = LoadSpec {
        server: uri.addr,
        request: CoapRequest { code: Code::GET, options: uri.options, payload: Vec::new(), confirmable: true },
        clients: req.clients,
        exchanges: req.exchanges,
        workload: req.workload,
        batch: (1, 10),
        cc: cc.clone(),
        seed: req.seed.unwrap_or_else(coap_net::os_seed),
        bind: req.bind,
        bind_each: req.bind_each,
        tcp_limits: if req.deadlines {
            coap_net::tcp::CLIENT_LIMITS
        } else {
            coap_endpoint::StreamLimits::default() // none: the simulator's
        },
    };
    let watch = crate::wall::Stopwatch::start();
    let result = coap_net::load::run(&spec, stop).await.map_err(|e| named(&req.server, e))?;
    let wall_s = watch.seconds();
    Ok(Outcome { summary: summary(&result), result, cc, wall_s })
}

/// The congestion control that a URI's scheme and `cc` choose: `None` is CoAP over TCP (the
/// scheme chooses the transport; a `cc` that contradicts it is an error).
pub fn transport(uri: &crate::uri::CoapUri, text: &str, cc: Option<&str>) -> Result<Option<CcConfig>, Error> {
    match (uri.tcp, cc) {
        (true, None | Some("tcp")) => Ok(None),
        (true, Some(c)) => Err(format!(
            "--cc {c} conflicts with {text}: a coap+tcp:// URI runs CoAP over TCP, whose congestion control is TCP's (--cc tcp); use a coap:// URI for {c}"
        )
        .into()),
        (false, Some("tcp")) => {
            Err(format!("--cc tcp needs a coap+tcp:// URI (the URI's scheme chooses the transport), not {text}").into())
        }
        (false, c) => {
            CcConfig::parse(c.unwrap_or("default")).map(Some).map_err(|e| netsim::scenario::spec_error(&e).into())
        }
    }
}

/// A network error naming the address it concerns (unless it already does).
pub fn named(addr: &str, e: std::io::Error) -> Error {
    let text = e.to_string();
    let host = addr.split("://").nth(1).and_then(|r| r.split('/').next()).unwrap_or(addr);
    if text.contains(host) {
        text.into()
    } else {
        format!("{addr}: {text}").into()
    }
}

/// A load run's summary from its clients' streamed statistics.
///
/// A request the server refused (4.01 again after the repeat with its Echo) is an exchange that
/// failed; a failed block-wise transfer is a failed exchange whose blocks were each answered.
pub fn summary(r: &LoadResult) -> Summary {
    let mut hist: Vec<u64> = Vec::new();
    for c in &r.clients {
        runstats::add_histogram(&mut hist, &c.retransmissions_hist);
    }
    let fcts: Vec<f64> = r.clients.iter().filter_map(|c| c.fct()).map(|d| d.as_secs_f64()).collect();
    let (rtt_s, rtt_s_relative_error) = runstats::distribution(std::iter::once(&r.rtts));
    let mut s = Summary {
        clients_without_fct: (r.clients.len() - fcts.len()) as u64,
        fct_s: Distribution::of(fcts),
        exchanges: r.clients.iter().map(|c| c.tally.exchanges + c.refused).sum(),
        failed_exchanges: r
            .clients
            .iter()
            .map(|c| (c.tally.failed + c.refused + c.failed_transfers).min(c.tally.exchanges + c.refused))
            .sum(),
        retransmissions_hist: hist,
        rtt_s,
        rtt_s_relative_error,
        unnecessary_retx_per_client: Tail::of(r.clients.iter().map(|c| c.tally.duplicates as f64).collect()),
        max_expired_rto_per_client_s: Tail::of(
            r.clients.iter().map(|c| c.tally.max_expired_rto.as_secs_f64()).collect(),
        ),
        mesh: None,
        tcp: None,
        network: NetworkSummary::Real,
        events: 0,
        truncated_reps: 0,
        warnings: Vec::new(),
    };
    s.warnings = s.warnings_of(r.clients.len() as u64);
    s
}

/// Requests sent: every exchange's first transmission and its retransmissions.
/// (`hist[i]`: exchanges with `i` retransmissions.)
pub fn requests_sent(exchanges: u64, hist: &[u64]) -> u64 {
    exchanges + hist.iter().enumerate().map(|(i, n)| i as u64 * n).sum::<u64>()
}

#[cfg(test)]
mod tests {
    #[test]
    fn requests_are_first_transmissions_and_retransmissions() {
        // 3 exchanges without a retransmission, 2 with one, 1 with two: 6 + 2 + 2
        assert_eq!(super::requests_sent(6, &[3, 2, 1]), 10);
        assert_eq!(super::requests_sent(0, &[]), 0);
    }
}
