//! What one replication leaves behind.

use coap_endpoint::{ExchangeReport, Outcome};
use serde::Serialize;

use netmodel::BottleneckReport;

/// One exchange.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExchangeRecord {
    /// The client.
    pub client: u32,
    /// Its index among the client's exchanges.
    pub index: u32,
    /// First transmission, ns.
    pub start_ns: u64,
    /// First transmission to response, ns (None if it failed).
    pub rtt_ns: Option<u64>,
    /// Retransmissions sent.
    pub retransmissions: u32,
    /// The RTOs that expired, ns.
    pub expired_rtos_ns: Vec<u64>,
    /// The RTO armed for the transmission that got the response (it did not expire), ns.
    pub last_rto_ns: Option<u64>,
    /// Responses that arrived after the first.
    pub duplicates: u32,
}

/// One client.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClientRecord {
    /// The client.
    pub client: u32,
    /// First transmission of the first request to the first response to the last, ns (None if
    /// the last exchange failed).
    pub fct_ns: Option<u64>,
    /// Exchanges run.
    pub exchanges: u32,
    /// Exchanges that failed.
    pub failed: u32,
    /// Retransmissions sent.
    pub retransmissions: u32,
    /// Duplicate responses received (unnecessary retransmissions).
    pub duplicates: u32,
    /// The largest RTO that expired, ns.
    pub max_expired_rto_ns: u64,
}

/// The network model's counters of one replication: its own section of the results.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "model", rename_all = "snake_case")]
pub enum NetworkReport {
    /// The wired reference bottleneck.
    Bottleneck(BottleneckReport),
    /// The low-power mesh.
    Mesh(crate::lln::MeshRun),
    /// A real network (`coapcc load`): nothing modelled, nothing counted.
    Real,
}

/// One replication; `N` is the network model's report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RepResult<N = NetworkReport> {
    /// Replication number.
    pub rep: u32,
    /// Per client.
    pub clients: Vec<ClientRecord>,
    /// Per exchange, by client then index.
    pub exchanges: Vec<ExchangeRecord>,
    /// The network model's counters.
    pub network: N,
    /// Events processed.
    pub events: u64,
    /// Virtual time when the last client finished, ns.
    pub end_ns: u64,
    /// The run reached `max_time_s` before every client finished: unfinished exchanges are missing.
    pub truncated: bool,
}

impl<N> RepResult<N> {
    /// The same results with the network's report mapped.
    pub fn map_network<M>(self, f: impl FnOnce(N) -> M) -> RepResult<M> {
        RepResult {
            rep: self.rep,
            clients: self.clients,
            exchanges: self.exchanges,
            network: f(self.network),
            events: self.events,
            end_ns: self.end_ns,
            truncated: self.truncated,
        }
    }
}

/// A client's records from its exchange reports (sorted here by exchange id): the same
/// bookkeeping for the simulator and for real clients (`coapcc load`).
pub fn from_reports<A>(client: u32, reports: &mut [ExchangeReport<A>]) -> (ClientRecord, Vec<ExchangeRecord>) {
    reports.sort_by_key(|r| r.id);
    let mut rec = ClientRecord {
        client,
        fct_ns: None,
        exchanges: reports.len() as u32,
        failed: 0,
        retransmissions: 0,
        duplicates: 0,
        max_expired_rto_ns: 0,
    };
    let mut exchanges = Vec::with_capacity(reports.len());
    for (i, r) in reports.iter().enumerate() {
        let expired: Vec<u64> = r.expired_rtos().iter().map(|d| d.as_nanos()).collect();
        rec.max_expired_rto_ns = rec.max_expired_rto_ns.max(expired.iter().copied().max().unwrap_or(0));
        rec.retransmissions += r.retransmissions();
        rec.duplicates += r.duplicates;
        rec.failed += matches!(r.outcome, Outcome::Failed(_)) as u32;
        exchanges.push(ExchangeRecord {
            client,
            index: i as u32,
            start_ns: r.sent.first().map_or(0, |t| t.as_nanos()),
            rtt_ns: r.rtt().map(|d| d.as_nanos()),
            retransmissions: r.retransmissions(),
            expired_rtos_ns: expired,
            last_rto_ns: (r.responded_at.is_some() && r.rtos.len() > r.expired as usize)
                .then(|| r.rtos[r.expired as usize].as_nanos()),
            duplicates: r.duplicates,
        });
    }
    if let (Some(first), Some(last)) = (reports.first(), reports.last()) {
        if let (Some(&start), Some(end)) = (first.sent.first(), last.responded_at) {
            rec.fct_ns = Some((end - start).as_nanos());
        }
    }
    (rec, exchanges)
}
