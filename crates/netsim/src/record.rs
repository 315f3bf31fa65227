//! What one replication leaves behind.

use coap_endpoint::{ExchangeReport, Tally};
use serde::Serialize;

use netmodel::BottleneckReport;

use runstats::Rtts;

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

impl ExchangeRecord {
    /// When it ended: its response, or (a failure) the expiry of its last timer, which the
    /// ones before it armed back to back from the first transmission, ns.
    pub fn end_ns(&self) -> u64 {
        self.start_ns + self.rtt_ns.unwrap_or_else(|| self.expired_rtos_ns.iter().sum())
    }

    /// When its transmissions went out, ns: the first, then each retransmission as the timer
    /// before it expired (the timers armed back to back from the first transmission).
    pub fn send_times_ns(&self) -> impl Iterator<Item = u64> + '_ {
        let retx = self.expired_rtos_ns.iter().take(self.retransmissions as usize);
        std::iter::once(self.start_ns).chain(retx.scan(self.start_ns, |at, &rto| {
            *at += rto;
            Some(*at)
        }))
    }
}

/// What one client's exchanges span (the burst's and the baseline's per-client figures).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientSpan {
    /// Its first request, ns.
    pub first_ns: u64,
    /// The end of its last exchange ([`ExchangeRecord::end_ns`]), ns.
    pub last_end_ns: u64,
    /// Its exchanges that ended (a response or a failure).
    pub ended: u32,
    /// Those that got a response.
    pub completed: u32,
    /// Their RTTs, summed, ns.
    pub rtt_sum_ns: u64,
}

impl ClientSpan {
    /// Each client's span, indexed by client (None: a client with no exchange).
    pub fn of_all(exchanges: &[ExchangeRecord]) -> Vec<Option<ClientSpan>> {
        let hosts = exchanges.iter().map(|e| e.client as usize + 1).max().unwrap_or(0);
        let mut per: Vec<Option<ClientSpan>> = vec![None; hosts];
        for e in exchanges {
            let (start, end) = (e.start_ns, e.end_ns());
            let span = per[e.client as usize].get_or_insert(ClientSpan {
                first_ns: start,
                last_end_ns: end,
                ended: 0,
                completed: 0,
                rtt_sum_ns: 0,
            });
            span.first_ns = span.first_ns.min(start);
            span.last_end_ns = span.last_end_ns.max(end);
            span.ended += 1;
            if let Some(rtt) = e.rtt_ns {
                span.completed += 1;
                span.rtt_sum_ns += rtt;
            }
        }
        per
    }
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
    Mesh(crate::mesh::run::MeshRun),
    /// A real network (`coapcc load`): nothing modelled, nothing counted.
    Real,
    /// A network model of another crate (a world added with [`crate::worlds::register`]): its
    /// counters as it reports them, a JSON object.
    Other(serde_json::Value),
}

/// What a replication keeps of its exchanges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Detail {
    /// Per-client records and the two per-exchange values the summary needs (RTT,
    /// retransmissions), folded in as each exchange retires: a client's memory does not grow
    /// with its exchanges' records ([`RepResult::exchanges`] stays empty).
    #[default]
    Summary,
    /// Also every exchange's record, in [`RepResult::exchanges`] (`coapcc sim --out`'s
    /// exchanges.csv and rto.csv; the mesh's metrics).
    Exchanges,
}

/// The per-exchange values every summary needs, whatever the [`Detail`].
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ExchangeStats {
    /// The RTTs of the exchanges that got a response, ns: exact up to 65,536 of them, then
    /// counted in a fixed-size sketch ([`runstats::sketch`]).
    #[serde(skip)]
    pub rtt: Rtts,
    /// Exchanges by number of retransmissions (index = retransmissions).
    pub retransmissions_hist: Vec<u64>,
    /// Background NON messages sent and taken by their sink ([`crate::udp::Background`]).
    #[serde(skip_serializing_if = "crate::skip::is_zero")]
    pub background_sent: u64,
    #[serde(skip_serializing_if = "crate::skip::is_zero")]
    pub background_delivered: u64,
}

impl ExchangeStats {
    /// Counts one exchange.
    pub fn add(&mut self, retransmissions: u32, rtt_ns: Option<u64>) {
        let i = retransmissions as usize;
        if self.retransmissions_hist.len() <= i {
            self.retransmissions_hist.resize(i + 1, 0);
        }
        self.retransmissions_hist[i] += 1;
        if let Some(ns) = rtt_ns {
            self.rtt.record(ns);
        }
    }

    /// Exchanges counted.
    pub fn exchanges(&self) -> u64 {
        self.retransmissions_hist.iter().sum()
    }
}

/// One replication; `N` is the network model's report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RepResult<N = NetworkReport> {
    /// Replication number.
    pub rep: u32,
    /// Per client.
    pub clients: Vec<ClientRecord>,
    /// Per exchange, by client then index (only with [`Detail::Exchanges`]).
    pub exchanges: Vec<ExchangeRecord>,
    /// Every exchange's RTT and retransmissions.
    pub stats: ExchangeStats,
    /// The network model's counters.
    pub network: N,
    /// Events processed.
    pub events: u64,
    /// Virtual time when the last client finished, ns.
    pub end_ns: u64,
    /// The run reached `max_time_s` before every client finished: unfinished exchanges are missing.
    pub truncated: bool,
    /// CoAP over TCP: the TCP endpoints' counters.
    pub tcp: Option<TcpCounters>,
}

/// The TCP endpoints' counters of a run (or of several, summed): the clients' connections and
/// the server's, apart.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct TcpCounters {
    /// The clients' connections.
    pub clients: crate::tcp::TcpStats,
    /// The connections the servers accepted.
    pub servers: crate::tcp::TcpStats,
}

impl TcpCounters {
    /// Adds `o`'s counts to these.
    pub fn add(&mut self, o: &TcpCounters) {
        self.clients.add(&o.clients);
        self.servers.add(&o.servers);
    }
}

impl<N> RepResult<N> {
    /// The same results with the network's report mapped.
    pub fn map_network<M>(self, f: impl FnOnce(N) -> M) -> RepResult<M> {
        RepResult {
            rep: self.rep,
            clients: self.clients,
            exchanges: self.exchanges,
            stats: self.stats,
            network: f(self.network),
            events: self.events,
            end_ns: self.end_ns,
            truncated: self.truncated,
            tcp: self.tcp,
        }
    }
}

impl ClientRecord {
    /// Client `client`'s record from its folded exchanges and the duplicate responses its
    /// endpoint counted (also those that came after a report went out: `report_at_finish`).
    pub fn of(client: u32, t: &Tally, duplicates: u64) -> Self {
        ClientRecord {
            client,
            fct_ns: t.flow().map(|d| d.as_nanos()),
            exchanges: t.exchanges as u32,
            failed: t.failed as u32,
            retransmissions: t.retransmissions as u32,
            duplicates: duplicates as u32,
            max_expired_rto_ns: t.max_expired_rto.as_nanos(),
        }
    }
}

/// The record of exchange number `index` of `client`.
pub fn exchange_record<A>(client: u32, index: u32, r: &ExchangeReport<A>) -> ExchangeRecord {
    ExchangeRecord {
        client,
        index,
        start_ns: r.sent.first().map_or(0, |t| t.as_nanos()),
        rtt_ns: r.rtt().map(|d| d.as_nanos()),
        retransmissions: r.retransmissions(),
        expired_rtos_ns: r.expired_rtos().iter().map(|d| d.as_nanos()).collect(),
        last_rto_ns: (r.responded_at.is_some() && r.rtos.len() > r.expired as usize)
            .then(|| r.rtos[r.expired as usize].as_nanos()),
        duplicates: r.duplicates,
    }
}
