//! The statistics of a run over all its replications: the fields `coapcc sim --json` prints.
//!
//! Percentiles are [`runstats`]' (type 7, as the real stack's `load` computes them too).

use serde::Serialize;

use netmodel::BottleneckReport;

use crate::record::{NetworkReport, RepResult};
use runstats::{add_histogram, Distribution, Tail};

/// Drops by cause and direction, summed over replications.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Drops {
    pub up_buffer: u64,
    pub down_buffer: u64,
    pub up_error: u64,
    pub down_error: u64,
}

/// One link direction, over all replications.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LinkTotals {
    /// Packets offered to its buffer.
    pub packets: u64,
    /// Bytes serialized.
    pub bytes: u64,
    /// Time spent serializing, s.
    pub busy_s: f64,
    /// The fullest its buffer got in any replication, bytes.
    pub max_queue_bytes: u64,
}

impl LinkTotals {
    fn of<'a>(stats: impl Iterator<Item = &'a netmodel::link::LinkStats>) -> Self {
        let mut t = LinkTotals { packets: 0, bytes: 0, busy_s: 0.0, max_queue_bytes: 0 };
        let mut busy_ns = 0u64;
        for s in stats {
            t.packets += s.offered;
            t.bytes += s.bytes;
            busy_ns += s.busy_ns;
            t.max_queue_bytes = t.max_queue_bytes.max(s.max_queue_bytes);
        }
        t.busy_s = busy_ns as f64 / 1e9;
        t
    }
}

/// Both directions.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Links {
    pub uplink: LinkTotals,
    pub downlink: LinkTotals,
}

/// The wired bottleneck's section of a summary.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BottleneckSummary {
    /// Packet drops.
    pub drops: Drops,
    /// Share of the downlink's busy time spent on duplicate responses.
    pub wasted_downlink_fraction: f64,
    /// Share of the downlink's time it was busy, until the last client finished (≤ 1: what was
    /// still queued then is not counted).
    pub downlink_utilization: f64,
    /// Traffic per link direction.
    pub links: Links,
}

impl BottleneckSummary {
    /// Over replications: (report, the replication's end time in ns).
    fn of(reps: &[(&BottleneckReport, u64)]) -> Self {
        let sum = |f: &dyn Fn(&BottleneckReport) -> u64| reps.iter().map(|(r, _)| f(r)).sum::<u64>();
        let busy = sum(&|r| r.downlink.busy_ns);
        // within each replication's span: less the backlog the downlink still had at its end
        let busy_in_span: u64 =
            reps.iter().map(|(r, end)| r.downlink.busy_ns - r.downlink.busy_until_ns.saturating_sub(*end)).sum();
        let span: u64 = reps.iter().map(|(_, end)| end).sum();
        BottleneckSummary {
            drops: Drops {
                up_buffer: sum(&|r| r.uplink.buffer_drops),
                down_buffer: sum(&|r| r.downlink.buffer_drops),
                up_error: sum(&|r| r.uplink.error_drops),
                down_error: sum(&|r| r.downlink.error_drops),
            },
            wasted_downlink_fraction: if busy == 0 { 0.0 } else { sum(&|r| r.wasted_downlink_ns) as f64 / busy as f64 },
            downlink_utilization: if span == 0 { 0.0 } else { busy_in_span as f64 / span as f64 },
            links: Links {
                uplink: LinkTotals::of(reps.iter().map(|(r, _)| &r.uplink)),
                downlink: LinkTotals::of(reps.iter().map(|(r, _)| &r.downlink)),
            },
        }
    }
}

/// The network model's section of a summary, tagged by `model`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "model", rename_all = "snake_case")]
pub enum NetworkSummary {
    /// The wired reference bottleneck.
    Bottleneck(BottleneckSummary),
    /// The low-power mesh.
    Mesh(crate::mesh::MeshSummary),
    /// A real network: nothing modelled.
    Real,
    /// A network model of another crate: each replication's report as it gave it.
    Other {
        /// Per replication.
        reps: Vec<serde_json::Value>,
    },
}

impl NetworkSummary {
    /// The wired bottleneck's section, if that was the model.
    pub fn bottleneck(&self) -> Option<&BottleneckSummary> {
        match self {
            NetworkSummary::Bottleneck(b) => Some(b),
            _ => None,
        }
    }
}

/// Aggregates over all clients of all replications.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// Flow completion times, s (clients whose last exchange got a response).
    pub fct_s: Distribution,
    /// Clients without an FCT (their last exchange failed).
    pub clients_without_fct: u64,
    /// Exchanges run.
    pub exchanges: u64,
    /// Exchanges that failed.
    pub failed_exchanges: u64,
    /// Exchanges by number of retransmissions (index = retransmissions).
    pub retransmissions_hist: Vec<u64>,
    /// Per exchange RTT (first transmission to response), s: exact unless a replication had more
    /// than 65,536 RTTs ([`runstats::sketch`]).
    pub rtt_s: Distribution,
    /// Present when `rtt_s`'s quantiles come from the sketch: their error bound, relative (the
    /// minimum and maximum stay exact).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rtt_s_relative_error: Option<f64>,
    /// Duplicate responses per client.
    pub unnecessary_retx_per_client: Tail,
    /// Each client's largest expired RTO, s.
    pub max_expired_rto_per_client_s: Tail,
    /// The mesh literature's metrics (mesh runs only).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub mesh: Option<crate::mesh::MeshMetrics>,
    /// CoAP over TCP: the TCP endpoints' counters, summed over the replications.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tcp: Option<crate::record::TcpCounters>,
    /// The network model's own statistics.
    pub network: NetworkSummary,
    /// Events processed.
    pub events: u64,
    /// Replications cut short at the scenario's `max_time_s`.
    pub truncated_reps: u64,
    /// Figures that look like results but describe almost nothing ([`Summary::warnings_of`]);
    /// absent when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// Below this share of exchanges answered (or, in a mesh, of messages delivered), a run's
/// network delivered almost nothing and its summary says so.
pub const LOW_DELIVERY: f64 = 0.05;

impl Summary {
    /// Summarises replications.
    pub fn new(reps: &[RepResult]) -> Self {
        let clients = reps.iter().flat_map(|r| &r.clients);
        let fcts: Vec<f64> = clients.clone().filter_map(|c| c.fct_ns).map(|ns| ns as f64 / 1e9).collect();
        let n_clients = clients.clone().count() as u64;
        let mut hist: Vec<u64> = Vec::new();
        for r in reps {
            add_histogram(&mut hist, &r.stats.retransmissions_hist);
        }
        let (rtt_s, rtt_s_relative_error) = runstats::distribution(reps.iter().map(|r| &r.stats.rtt));
        let bottleneck: Vec<(&BottleneckReport, u64)> = reps
            .iter()
            .filter_map(|r| match &r.network {
                NetworkReport::Bottleneck(b) => Some((b, r.end_ns)),
                _ => None,
            })
            .collect();
        let network = if !bottleneck.is_empty() {
            NetworkSummary::Bottleneck(BottleneckSummary::of(&bottleneck))
        } else if let Some(m) = crate::mesh::summary::mesh_summary(reps) {
            NetworkSummary::Mesh(m)
        } else if reps.iter().any(|r| matches!(r.network, NetworkReport::Other(_))) {
            let of = |r: &RepResult| match &r.network {
                NetworkReport::Other(v) => v.clone(),
                _ => serde_json::Value::Null,
            };
            NetworkSummary::Other { reps: reps.iter().map(of).collect() }
        } else {
            NetworkSummary::Real
        };
        let mut s = Summary {
            clients_without_fct: n_clients - fcts.len() as u64,
            fct_s: Distribution::of(fcts),
            exchanges: reps.iter().map(|r| r.stats.exchanges()).sum(),
            failed_exchanges: clients.clone().map(|c| c.failed as u64).sum(),
            retransmissions_hist: hist,
            rtt_s,
            rtt_s_relative_error,
            unnecessary_retx_per_client: Tail::of(clients.clone().map(|c| c.duplicates as f64).collect()),
            max_expired_rto_per_client_s: Tail::of(clients.map(|c| c.max_expired_rto_ns as f64 / 1e9).collect()),
            mesh: crate::mesh::summary::mesh_metrics(reps),
            tcp: reps.iter().filter_map(|r| r.tcp).reduce(|mut a, b| {
                a.add(&b);
                a
            }),
            network,
            events: reps.iter().map(|r| r.events).sum(),
            truncated_reps: reps.iter().filter(|r| r.truncated).count() as u64,
            warnings: Vec::new(),
        };
        s.warnings = s.warnings_of(n_clients);
        s
    }

    /// What makes this summary's figures misleading, each naming its figure: fewer than
    /// [`LOW_DELIVERY`] of the exchanges answered or of a mesh's messages delivered (`pdr`), or
    /// half of the `clients` or more without an FCT (the FCT figures then describe the few that
    /// finished, or none).
    pub fn warnings_of(&self, clients: u64) -> Vec<String> {
        let mut w = Vec::new();
        let answered = self.exchanges.saturating_sub(self.failed_exchanges);
        if self.exchanges == 0 {
            w.push("exchanges = 0: no client completed or failed an exchange".to_string());
        } else if (answered as f64) < LOW_DELIVERY * self.exchanges as f64 {
            w.push(format!(
                "failed_exchanges = {} of {}: {:.1} % answered, the network delivered almost nothing",
                self.failed_exchanges,
                self.exchanges,
                100.0 * answered as f64 / self.exchanges as f64
            ));
        }
        if let Some(pdr) = self.mesh.as_ref().map(|m| m.pdr).filter(|p| *p < LOW_DELIVERY) {
            w.push(format!("pdr = {pdr:.3}: the servers received {:.1} % of the clients' messages", 100.0 * pdr));
        }
        if clients > 0 && 2 * self.clients_without_fct >= clients {
            w.push(format!(
                "clients_without_fct = {} of {clients}: the FCT figures describe {}",
                self.clients_without_fct,
                match clients - self.clients_without_fct {
                    0 => "no client".to_string(),
                    1 => "the one client that finished".to_string(),
                    n => format!("only the {n} clients that finished"),
                }
            ));
        }
        w
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_name_the_figure_that_describes_almost_nothing() {
        let s = |exchanges: u64, failed: u64, without_fct: u64| Summary {
            exchanges,
            failed_exchanges: failed,
            clients_without_fct: without_fct,
            ..Summary::new(&[])
        };
        // 100 exchanges: 5 answered is not below 5 %, 4 is
        assert!(s(100, 95, 0).warnings_of(10).is_empty());
        let w = s(100, 96, 0).warnings_of(10);
        assert_eq!(w, ["failed_exchanges = 96 of 100: 4.0 % answered, the network delivered almost nothing"]);
        // 4 of 10 clients without an FCT: no warning; 5 of 10: half
        assert!(s(100, 0, 4).warnings_of(10).is_empty());
        assert_eq!(
            s(100, 0, 5).warnings_of(10),
            ["clients_without_fct = 5 of 10: the FCT figures describe only the 5 clients that finished"]
        );
        assert_eq!(
            s(100, 0, 9).warnings_of(10)[0],
            "clients_without_fct = 9 of 10: the FCT figures describe the one client that finished"
        );
        assert_eq!(s(0, 0, 3).warnings_of(3).len(), 2, "no exchange, and no FCT");
    }

    #[test]
    fn utilization_counts_only_the_busy_time_before_the_end() {
        // a downlink of 8,000 bit/s (1 byte per ms) given 3 packets of 10 bytes at t = 0 is busy
        // from 0 to 30 ms; a replication that ended at 20 ms saw it busy all the time (1, not 1.5),
        // one that ended at 60 ms half the time
        use netmodel::loss::{LossModel, LossProcess};
        use rand_chacha::rand_core::SeedableRng;
        let loss = LossProcess::new(LossModel::None, rand_chacha::ChaCha8Rng::seed_from_u64(0));
        let mut link = netmodel::link::Link::new(8_000, coap_cc::Duration::ZERO, u64::MAX, loss);
        for _ in 0..3 {
            link.offer(coap_cc::Instant::ZERO, 10);
        }
        let r = BottleneckReport { uplink: Default::default(), downlink: link.stats, wasted_downlink_ns: 0 };
        assert_eq!((r.downlink.busy_ns, r.downlink.busy_until_ns), (30_000_000, 30_000_000));
        assert_eq!(BottleneckSummary::of(&[(&r, 20_000_000)]).downlink_utilization, 1.0);
        assert_eq!(BottleneckSummary::of(&[(&r, 60_000_000)]).downlink_utilization, 0.5);
        // over replications: (20 + 30) ms busy within 80 ms
        assert_eq!(BottleneckSummary::of(&[(&r, 20_000_000), (&r, 60_000_000)]).downlink_utilization, 50.0 / 80.0);
    }
}
