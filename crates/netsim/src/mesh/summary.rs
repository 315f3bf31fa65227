//! The mesh literature's metrics over the replications of a mesh run (definitions in
//! `docs/outputs.md`):
//!
//! * `transactions_per_s` (NITK) = `throughput_req_s` (CLOUD): completed exchanges per second of
//!   the run, summed over clients, averaged over replications;
//! * `initiated_per_s`: exchanges the clients began per second (completed, failed or still open
//!   at the end), and `client_transmissions_per_s`: the clients' CoAP transmissions per second,
//!   their retransmissions included, both averaged over replications. NITK's "average
//!   transactions per second" could be any of the three; its firmware logs an RTO at each first
//!   send and each retransmission, hence `initial_rto_s` beside `rto_s`;
//! * `goodput_bps`: CoAP bits of the requests of completed exchanges per second;
//! * `throughput_bytes_per_s` (NITK ch. 3, 4: "bytes sent"): the clients' CoAP request bytes per
//!   second, retransmissions included, averaged over replications;
//! * `throughput_bytes_per_s_windows` (NITK ch. 4, Table 4.1: throughput at 50, 100, … s): the
//!   same bytes per second within each [`THROUGHPUT_WINDOW_S`] of the run (a transmission counts
//!   in the window it was sent in; the last window may be shorter), averaged over replications;
//! * `packet_transmission_time` (NITK ch. 4, Table 4.2): for N = 500, 1000, 1500 and 2000, the
//!   time from the first request of the run to the N-th completed exchange over all clients,
//!   averaged over the replications that completed N (`reps` says how many);
//! * `jain_fairness`: Jain's index (Σx)²/(n·Σx²) of the clients' completed exchanges, averaged
//!   over replications;
//! * `pdr`: CoAP messages delivered to the servers / CoAP messages the clients sent (their
//!   retransmissions included), pooled over replications;
//! * `retries_per_request`: retransmissions / requests; `retransmissions_total`: all clients'
//!   retransmissions in a run, averaged over replications;
//! * `exchange_duration_s`: first transmission → response, completed exchanges;
//! * `rto_s`: every armed RTO (the initial ones and the backed-off ones; a timer that a response
//!   or Erbium's give-up cancelled before it could be armed again is counted once);
//!   `max_mean` is the per-run maximum averaged over replications; `initial_rto_s` the first RTO
//!   of each exchange;
//! * `per_rep`: each replication's own transactions/s, mean FCT, retransmissions, mean and max
//!   RTO and PDR (for spreads and medians over replications);
//! * `rto_over_time`: every armed RTO by the time it was armed (an exchange's first timer at its
//!   first transmission, each backed-off one when the previous expired), in [`RTO_BINS`] equal
//!   bins of the run, pooled over replications: the mean and the maximum per bin (NaN when empty);
//! * `baseline` (CLOUD's baseline, whose clients run one after the other, one per server): per
//!   server, the throughput = its completed exchanges / T, T from its first request to the end
//!   of its last exchange (50 / T₅₀ when all 50 complete), and its mean exchange duration; each
//!   averaged over the servers, then over replications.

use serde::Serialize;

use netmodel::mesh::{Drops, NodeReport};

use super::{MeshRun, Route};
use crate::record::{ClientSpan, ExchangeRecord, NetworkReport, RepResult};
use runstats::{jain, Distribution};

/// Percentiles and mean.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    pub mean: f64,
    pub p10: f64,
    pub p25: f64,
    pub p50: f64,
    pub p75: f64,
    pub p90: f64,
}

impl Spread {
    fn of(mut v: Vec<f64>) -> Self {
        v.sort_by(f64::total_cmp); // summed in ascending order
        let mean = mean(&v);
        let d = Distribution::of(v);
        Spread { mean, p10: d.p10, p25: d.p25, p50: d.p50, p75: d.p75, p90: d.p90 }
    }
}

/// The mean (NaN for no values).
fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        f64::NAN
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// Armed RTOs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RtoStats {
    pub mean: f64,
    pub max: f64,
    /// The per-run maximum, averaged over replications.
    pub max_mean: f64,
    pub p10: f64,
    pub p25: f64,
    pub p50: f64,
    pub p75: f64,
    pub p90: f64,
}

/// Mean and max.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MeanMax {
    pub mean: f64,
    pub max: f64,
}

/// The mesh metrics (flattened into the summary of a mesh run).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MeshMetrics {
    pub duration_s: f64,
    pub transactions_per_s: f64,
    pub initiated_per_s: f64,
    pub client_transmissions_per_s: f64,
    pub throughput_req_s: f64,
    pub goodput_bps: f64,
    pub throughput_bytes_per_s: f64,
    pub throughput_bytes_per_s_windows: Vec<f64>,
    pub packet_transmission_time: Vec<TransmissionTime>,
    pub jain_fairness: f64,
    pub pdr: f64,
    pub retries_per_request: f64,
    pub retransmissions_total: f64,
    pub exchange_duration_s: Spread,
    /// Mean FCT over clients that reached their successes, s.
    pub fct_mean_s: f64,
    pub rto_s: RtoStats,
    pub initial_rto_s: MeanMax,
    pub per_rep: Vec<RepMetrics>,
    pub rto_over_time: RtoSeries,
    /// CLOUD's burst: each burst client's time from the burst's start to the end of its last
    /// exchange (a response or a failure), s, all replications, sorted (empty without a burst).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub burst_completion_s: Vec<f64>,
    /// CLOUD's burst: burst clients, all replications (those missing from
    /// `burst_completion_s` did not finish within the run).
    #[serde(skip_serializing_if = "crate::skip::is_zero")]
    pub burst_clients: u64,
    /// CLOUD's baseline: per-server throughput and exchange duration (chained runs only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<BaselineMetrics>,
    /// RTTCOAP's time series (runs with a window only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub windows: Option<Windows>,
    /// RTTCOAP's background NON notifications: sent per run, and the share that reached the
    /// collector (runs with background traffic only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub background: Option<BackgroundMetrics>,
}

/// NITK's packet transmission time: how long the clients took to complete `packets` exchanges.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TransmissionTime {
    /// N: the completed exchanges counted.
    pub packets: u32,
    /// From the run's first request to its N-th completed exchange, s, mean over `reps` (NaN
    /// when no replication completed N).
    pub mean_s: f64,
    /// The replications that completed N exchanges.
    pub reps: u32,
}

/// The windows of NITK's Table 4.1 (its throughput at 50, 100, … 300 s of a 300-s run), s.
pub const THROUGHPUT_WINDOW_S: f64 = 50.0;

/// A run's request bytes per second within each [`THROUGHPUT_WINDOW_S`] of its `secs` (the last
/// window as long as what is left of the run), by the window each transmission went out in.
fn bytes_by_window(exchanges: &[ExchangeRecord], request_bytes: u32, secs: f64) -> Vec<f64> {
    let mut out = vec![0.0; (secs / THROUGHPUT_WINDOW_S).ceil() as usize];
    for t in exchanges.iter().flat_map(ExchangeRecord::send_times_ns).map(|t| t as f64 / 1e9).filter(|&t| t < secs) {
        out[(t / THROUGHPUT_WINDOW_S) as usize] += request_bytes as f64;
    }
    for (w, b) in out.iter_mut().enumerate() {
        *b /= (secs - w as f64 * THROUGHPUT_WINDOW_S).min(THROUGHPUT_WINDOW_S);
    }
    out
}

/// The N of NITK's Table 4.2.
pub const TRANSMISSION_TIME_PACKETS: [u32; 4] = [500, 1000, 1500, 2000];

/// One run's completions for [`TransmissionTime`]: each completed exchange's response time after
/// the run's first request, ns, in order (its exchanges as (first send, response time after it)).
fn completions(exchanges: impl Iterator<Item = (u64, Option<u64>)> + Clone) -> Vec<u64> {
    let Some(start) = exchanges.clone().map(|(s, _)| s).min() else { return Vec::new() };
    let mut done: Vec<u64> = exchanges.filter_map(|(s, rtt)| rtt.map(|r| s + r - start)).collect();
    done.sort_unstable();
    done
}

/// The time to the `packets`-th of a run's sorted [`completions`], s (None: fewer completed).
fn time_to(done: &[u64], packets: u32) -> Option<f64> {
    let k = (packets as usize).checked_sub(1)?;
    done.get(k).map(|&t| t as f64 / 1e9)
}

/// CLOUD's baseline, per server (each of its clients in turn), means over replications.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BaselineMetrics {
    /// Clients (servers) that ran, per replication.
    pub servers: f64,
    /// Completed exchanges per second of a server's turn, mean over servers.
    pub throughput_per_s: f64,
    /// A server's mean exchange duration (first transmission to response), mean over the
    /// servers that completed one, s.
    pub exchange_duration_s: f64,
}

/// One replication's baseline: (servers that ran, mean throughput, mean exchange duration).
fn baseline(exchanges: &[ExchangeRecord]) -> (usize, f64, f64) {
    let ran: Vec<ClientSpan> =
        ClientSpan::of_all(exchanges).into_iter().flatten().filter(|s| s.last_end_ns > s.first_ns).collect();
    let throughput: Vec<f64> =
        ran.iter().map(|s| s.completed as f64 / ((s.last_end_ns - s.first_ns) as f64 / 1e9)).collect();
    let duration: Vec<f64> =
        ran.iter().filter(|s| s.completed > 0).map(|s| s.rtt_sum_ns as f64 / 1e9 / s.completed as f64).collect();
    (ran.len(), mean(&throughput), mean(&duration))
}

/// The background traffic's fate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BackgroundMetrics {
    /// NON notifications sent, mean per replication.
    pub sent: f64,
    /// Share of them the collector took.
    pub pdr: f64,
}

/// Per window of the run (`window_s`), means over replications: the goodput, bit/s of CoAP
/// message of the exchanges that succeeded, counted when the response came back; Jain's index
/// over the clients' successes in the window (every client counts, null when none succeeded).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Windows {
    /// The window, s.
    pub window_s: f64,
    /// Goodput per window, bit/s.
    pub goodput_bps: Vec<f64>,
    /// Jain's fairness index per window.
    pub jain: Vec<f64>,
}

/// The time series of the runs that have a window (the first run's window and length).
fn windows(runs: &[(&RepResult, &MeshRun)]) -> Option<Windows> {
    let (_, first) = runs.iter().find(|(_, m)| m.window_ns > 0)?;
    let (window_ns, bins) = (first.window_ns, first.duration_ns.div_ceil(first.window_ns) as usize);
    let window_s = window_ns as f64 / 1e9;
    let (mut goodput, mut jain_sum, mut jain_n) = (vec![0.0; bins], vec![0.0; bins], vec![0u32; bins]);
    for (r, m) in runs {
        // successes per host and window
        let hosts = r.clients.iter().map(|c| c.client as usize + 1).max().unwrap_or(0);
        let mut per = vec![vec![0.0; bins]; hosts];
        for e in &r.exchanges {
            let Some(rtt) = e.rtt_ns else { continue };
            let b = (((e.start_ns + rtt) / window_ns) as usize).min(bins - 1);
            per[e.client as usize][b] += 1.0;
            goodput[b] += 8.0 * m.request_bytes as f64 / window_s / runs.len() as f64;
        }
        for b in 0..bins {
            let done: Vec<f64> = r.clients.iter().map(|c| per[c.client as usize][b]).collect();
            if let Some(j) = jain(&done) {
                jain_sum[b] += j;
                jain_n[b] += 1;
            }
        }
    }
    let jain = jain_sum.iter().zip(&jain_n).map(|(j, &n)| if n == 0 { f64::NAN } else { j / n as f64 }).collect();
    Some(Windows { window_s, goodput_bps: goodput, jain })
}

/// One replication's values.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RepMetrics {
    pub rep: u32,
    pub transactions_per_s: f64,
    pub fct_mean_s: f64,
    pub retransmissions: u64,
    pub rto_mean_s: f64,
    pub rto_max_s: f64,
    pub pdr: f64,
}

/// Bins of [`RtoSeries`] over a run [choice: fine enough for a figure, small enough for JSON].
pub const RTO_BINS: usize = 120;

/// Armed RTOs by arm time, binned.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RtoSeries {
    /// Width of a bin, s.
    pub bin_s: f64,
    /// Mean RTO armed in each bin, s.
    pub mean_s: Vec<f64>,
    /// Largest RTO armed in each bin, s.
    pub max_s: Vec<f64>,
}

impl RtoSeries {
    /// Bins `(arm time, rto)` pairs (s) over `[0, duration_s)` into `bins` bins; a point at or
    /// past the end goes into the last bin.
    pub fn of(points: impl IntoIterator<Item = (f64, f64)>, duration_s: f64, bins: usize) -> Self {
        let bin_s = duration_s / bins as f64;
        let (mut sum, mut n, mut max) = (vec![0.0; bins], vec![0u64; bins], vec![f64::NAN; bins]);
        for (at, rto) in points {
            let i = ((at / bin_s).floor().max(0.0) as usize).min(bins - 1);
            sum[i] += rto;
            n[i] += 1;
            max[i] = f64::max(max[i], rto); // NaN yields to the number
        }
        let mean_s = sum.iter().zip(&n).map(|(s, &k)| if k == 0 { f64::NAN } else { s / k as f64 }).collect();
        RtoSeries { bin_s, mean_s, max_s: max }
    }
}

/// One mote over all replications.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MeshSummary {
    /// Per mote: position, parent, rank, counters summed over replications.
    pub nodes: Vec<NodeReport>,
    /// Drops by cause, all motes and replications.
    pub drops: Drops,
    /// Each client's route.
    pub routes: Vec<Route>,
    /// ContikiMAC: the motes' radio duty cycles (None under nullrdc: always on).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duty_cycle: Option<DutyCycle>,
}

/// Radio-on time as a share of the run, over all replications.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DutyCycle {
    /// Mean over the motes.
    pub mean: f64,
    /// The border router's.
    pub border_router: f64,
    /// The highest of any other mote's, and that mote's id.
    pub max: f64,
    /// Which mote.
    pub max_node: u32,
    /// Every mote's, in id order.
    pub per_node: Vec<f64>,
}

fn mesh_runs(reps: &[RepResult]) -> Vec<(&RepResult, &MeshRun)> {
    reps.iter()
        .filter_map(|r| match &r.network {
            NetworkReport::Mesh(m) => Some((r, m)),
            _ => None,
        })
        .collect()
}

/// The mesh section: None unless the runs are mesh runs.
pub fn mesh_summary(reps: &[RepResult]) -> Option<MeshSummary> {
    let runs = mesh_runs(reps);
    let (_, first) = runs.first()?;
    let mut nodes = first.report.nodes.clone();
    for n in &mut nodes {
        n.stats = Default::default();
    }
    let mut drops = Drops::default();
    let mut total_ns = 0u64;
    for (_, m) in &runs {
        total_ns += m.duration_ns;
        for (sum, n) in nodes.iter_mut().zip(&m.report.nodes) {
            sum.stats.merge(&n.stats);
            drops.merge(&n.stats.drops);
        }
    }
    let duty_cycle = nodes.iter().any(|n| n.stats.radio_on_ns > 0).then(|| {
        let per_node: Vec<f64> = nodes.iter().map(|n| n.stats.radio_on_ns as f64 / total_ns.max(1) as f64).collect();
        let br = nodes.iter().position(|n| n.role == netmodel::mesh::topology::Role::BorderRouter);
        let (max_i, max) = (per_node.iter().enumerate())
            .filter(|(i, _)| Some(*i) != br)
            .fold((0, 0.0f64), |a, (i, &d)| if d > a.1 { (i, d) } else { a });
        DutyCycle {
            mean: per_node.iter().sum::<f64>() / per_node.len().max(1) as f64,
            border_router: br.map_or(0.0, |i| per_node[i]),
            max,
            max_node: nodes.get(max_i).map_or(0, |n| n.id),
            per_node,
        }
    });
    Some(MeshSummary { nodes, drops, routes: first.routes.clone(), duty_cycle })
}

/// The metrics: None unless the runs are mesh runs.
pub fn mesh_metrics(reps: &[RepResult]) -> Option<MeshMetrics> {
    let runs = mesh_runs(reps);
    if runs.is_empty() {
        return None;
    }
    let k = runs.len() as f64;
    let mut tps = 0.0;
    let (mut initiated, mut transmissions) = (0.0, 0.0);
    let mut goodput = 0.0;
    let mut jain = 0.0;
    let (mut delivered, mut sent) = (0u64, 0u64);
    let (mut retx, mut requests) = (0u64, 0u64);
    let mut durations = Vec::new();
    let mut rtos = Vec::new();
    let mut initial = Vec::new();
    let mut max_sum = 0.0;
    let mut per_rep = Vec::with_capacity(runs.len());
    let mut armed_at = Vec::new();
    let mut bytes_sent = 0.0;
    let mut bytes_windows = vec![0.0; (runs[0].1.duration_ns as f64 / 1e9 / THROUGHPUT_WINDOW_S).ceil() as usize];
    let mut to_n = [(0.0, 0u32); TRANSMISSION_TIME_PACKETS.len()];
    for (r, m) in &runs {
        let secs = m.duration_ns as f64 / 1e9;
        let mut per = vec![0.0; r.clients.iter().map(|c| c.client as usize + 1).max().unwrap_or(0)];
        for e in r.exchanges.iter().filter(|e| e.rtt_ns.is_some()) {
            per[e.client as usize] += 1.0;
        }
        let done: Vec<f64> = r.clients.iter().map(|c| per[c.client as usize]).collect();
        let total: f64 = done.iter().sum();
        tps += total / secs;
        goodput += total * 8.0 * m.request_bytes as f64 / secs;
        jain += self::jain(&done).unwrap_or(0.0);
        let (mut run_delivered, mut run_sent) = (0u64, 0u64);
        for n in &m.report.nodes {
            // what reached the servers: server motes, and any mote a client sends to (RTTCOAP's
            // collector is the border router)
            let target = m.routes.iter().any(|r| r.server == n.id);
            match n.role {
                netmodel::mesh::topology::Role::Server => run_delivered += n.stats.delivered,
                netmodel::mesh::topology::Role::Client => run_sent += n.stats.originated,
                _ if target => run_delivered += n.stats.delivered,
                _ => {}
            }
        }
        if let Some(c) = m.report.cloud {
            run_sent += c.originated; // the clients are cloud hosts
        }
        delivered += run_delivered;
        sent += run_sent;
        let mut run_max: f64 = 0.0;
        let mut run_retx = 0u64;
        let rtos_before = rtos.len();
        for (sum, b) in bytes_windows.iter_mut().zip(bytes_by_window(&r.exchanges, m.request_bytes, secs)) {
            *sum += b;
        }
        for e in &r.exchanges {
            run_retx += e.retransmissions as u64;
            requests += 1;
            if let Some(rtt) = e.rtt_ns {
                durations.push(rtt as f64 / 1e9);
            }
            let armed = e.expired_rtos_ns.iter().chain(e.last_rto_ns.iter());
            if let Some(&first) = e.expired_rtos_ns.first().or(e.last_rto_ns.as_ref()) {
                initial.push(first as f64 / 1e9);
            }
            let mut at = e.start_ns;
            for &rto in armed {
                let s = rto as f64 / 1e9;
                run_max = run_max.max(s);
                rtos.push(s);
                armed_at.push((at as f64 / 1e9, s));
                at += rto;
            }
        }
        max_sum += run_max;
        retx += run_retx;
        initiated += r.exchanges.len() as f64 / secs;
        transmissions += (r.exchanges.len() as u64 + run_retx) as f64 / secs;
        bytes_sent += (r.exchanges.len() as u64 + run_retx) as f64 * m.request_bytes as f64 / secs;
        let done = completions(r.exchanges.iter().map(|e| (e.start_ns, e.rtt_ns)));
        for (n, acc) in TRANSMISSION_TIME_PACKETS.iter().zip(&mut to_n) {
            if let Some(t) = time_to(&done, *n) {
                *acc = (acc.0 + t, acc.1 + 1);
            }
        }
        let run_fcts: Vec<f64> = r.clients.iter().filter_map(|c| c.fct_ns).map(|n| n as f64 / 1e9).collect();
        per_rep.push(RepMetrics {
            rep: r.rep,
            transactions_per_s: total / secs,
            fct_mean_s: mean(&run_fcts),
            retransmissions: run_retx,
            rto_mean_s: mean(&rtos[rtos_before..]),
            rto_max_s: if rtos.len() > rtos_before { run_max } else { f64::NAN },
            pdr: if run_sent == 0 { f64::NAN } else { run_delivered as f64 / run_sent as f64 },
        });
    }
    let duration_s = runs[0].1.duration_ns as f64 / 1e9;
    let rto_over_time = RtoSeries::of(armed_at, duration_s, RTO_BINS);
    let fcts: Vec<f64> =
        runs.iter().flat_map(|(r, _)| &r.clients).filter_map(|c| c.fct_ns).map(|n| n as f64 / 1e9).collect();
    let rto_mean = mean(&rtos);
    let d = Distribution::of(rtos);
    Some(MeshMetrics {
        duration_s,
        transactions_per_s: tps / k,
        initiated_per_s: initiated / k,
        client_transmissions_per_s: transmissions / k,
        throughput_req_s: tps / k,
        goodput_bps: goodput / k,
        throughput_bytes_per_s: bytes_sent / k,
        throughput_bytes_per_s_windows: bytes_windows.into_iter().map(|b| b / k).collect(),
        packet_transmission_time: (TRANSMISSION_TIME_PACKETS.iter().zip(to_n))
            .map(|(&packets, (sum, reps))| TransmissionTime {
                packets,
                mean_s: if reps == 0 { f64::NAN } else { sum / reps as f64 },
                reps,
            })
            .collect(),
        jain_fairness: jain / k,
        pdr: if sent == 0 { f64::NAN } else { delivered as f64 / sent as f64 },
        retries_per_request: if requests == 0 { f64::NAN } else { retx as f64 / requests as f64 },
        retransmissions_total: retx as f64 / k,
        exchange_duration_s: Spread::of(durations),
        fct_mean_s: mean(&fcts),
        rto_s: RtoStats {
            mean: rto_mean,
            max: d.max,
            max_mean: max_sum / k,
            p10: d.p10,
            p25: d.p25,
            p50: d.p50,
            p75: d.p75,
            p90: d.p90,
        },
        initial_rto_s: MeanMax { mean: mean(&initial), max: initial.iter().copied().fold(f64::NAN, f64::max) },
        per_rep,
        rto_over_time,
        burst_completion_s: {
            let mut v: Vec<f64> = runs.iter().flat_map(|(_, m)| m.burst_completion_s.iter().copied()).collect();
            v.sort_by(f64::total_cmp);
            v
        },
        burst_clients: runs.iter().map(|(_, m)| m.burst_clients as u64).sum(),
        baseline: runs.iter().all(|(_, m)| m.chained).then(|| {
            let per: Vec<_> = runs.iter().map(|(r, _)| baseline(&r.exchanges)).collect();
            BaselineMetrics {
                servers: per.iter().map(|b| b.0 as f64).sum::<f64>() / k,
                throughput_per_s: per.iter().map(|b| b.1).sum::<f64>() / k,
                exchange_duration_s: per.iter().map(|b| b.2).sum::<f64>() / k,
            }
        }),
        windows: windows(&runs),
        background: {
            let (sent, got) = runs
                .iter()
                .fold((0u64, 0u64), |(s, g), (r, _)| (s + r.stats.background_sent, g + r.stats.background_delivered));
            (sent > 0).then(|| BackgroundMetrics { sent: sent as f64 / k, pdr: got as f64 / sent as f64 })
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transmission_time_counts_completions_from_the_first_request() {
        // first request at 1 s; completions at 1.5, 2.25 (3rd: 2.0 + 0.25), 4.0 s; one failed
        let ex = [(1_000_000_000, Some(500_000_000)), (3_000_000_000, Some(1_000_000_000)), (2_000_000_000, None)];
        let ex = ex.into_iter().chain([(2_000_000_000, Some(250_000_000))]);
        let done = completions(ex);
        assert_eq!(time_to(&done, 1), Some(0.5));
        assert_eq!(time_to(&done, 2), Some(1.25));
        assert_eq!(time_to(&done, 3), Some(3.0));
        assert_eq!(time_to(&done, 4), None);
        assert_eq!(time_to(&completions(std::iter::empty()), 1), None);
    }

    #[test]
    fn bytes_sent_fall_in_the_window_of_each_transmission() {
        // a 120 s run: windows [0, 50), [50, 100), [100, 120) of 50, 50 and 20 s. One exchange
        // from 10 s with timers of 40 and 80 s that expired and were retransmitted: sends at 10,
        // 50 and 130 s (past the end: not counted); one from 99 s, answered: a send at 99 s.
        // 20-byte requests: 20 B / 50 s, 40 B / 50 s, 0 B / 20 s
        let ex = |start_s: u64, expired_s: &[u64]| ExchangeRecord {
            client: 0,
            index: 0,
            start_ns: start_s * 1_000_000_000,
            rtt_ns: None,
            retransmissions: expired_s.len() as u32,
            expired_rtos_ns: expired_s.iter().map(|s| s * 1_000_000_000).collect(),
            last_rto_ns: None,
            duplicates: 0,
        };
        let exchanges = [ex(10, &[40, 80]), ex(99, &[])];
        let sends: Vec<u64> = exchanges[0].send_times_ns().map(|t| t / 1_000_000_000).collect();
        assert_eq!(sends, [10, 50, 130]);
        assert_eq!(bytes_by_window(&exchanges, 20, 120.0), [0.4, 0.8, 0.0]);
        // a timer that expired without a retransmission (the exchange gave up) sends nothing
        let gave_up = ExchangeRecord { retransmissions: 1, ..ex(0, &[3, 6]) };
        assert_eq!(gave_up.send_times_ns().count(), 2);
    }

    #[test]
    fn baseline_is_per_server_then_averaged() {
        let ex = |client, start_s: f64, rtt_s: Option<f64>, expired_s: &[f64]| ExchangeRecord {
            client,
            index: 0,
            start_ns: (start_s * 1e9) as u64,
            rtt_ns: rtt_s.map(|r| (r * 1e9) as u64),
            retransmissions: expired_s.len() as u32,
            expired_rtos_ns: expired_s.iter().map(|r| (r * 1e9) as u64).collect(),
            last_rto_ns: None,
            duplicates: 0,
        };
        // client 0: exchanges at 0 (0.5 s) and 1 (1 s): 2 completed in 2 s = 1/s, mean 0.75 s.
        // client 2: at 10 (0.25 s), then one that fails after timers of 2 and 4 s from 11 s:
        // 1 completed from 10 to 17 s = 1/7 per s, mean 0.25 s. Means over the two servers:
        // (1 + 1/7) / 2 = 4/7 per s, (0.75 + 0.25) / 2 = 0.5 s.
        let exchanges = [
            ex(0, 0.0, Some(0.5), &[]),
            ex(0, 1.0, Some(1.0), &[]),
            ex(2, 10.0, Some(0.25), &[]),
            ex(2, 11.0, None, &[2.0, 4.0]),
        ];
        let (servers, throughput, duration) = baseline(&exchanges);
        assert_eq!(servers, 2);
        assert!((throughput - 4.0 / 7.0).abs() < 1e-12, "{throughput}");
        assert!((duration - 0.5).abs() < 1e-12, "{duration}");
    }

    #[test]
    fn rto_series_bins_by_arm_time() {
        // a 10 s run in 5 bins of 2 s: (0.5, 3) and (1.9, 5) share bin 0; 4.0 opens bin 2;
        // a timer armed at or past the end counts in the last bin
        let s = RtoSeries::of([(0.5, 3.0), (1.9, 5.0), (4.0, 2.0), (10.0, 7.0), (9.0, 1.0)], 10.0, 5);
        assert_eq!(s.bin_s, 2.0);
        assert_eq!(s.mean_s[0], 4.0);
        assert_eq!(s.max_s[0], 5.0);
        assert!(s.mean_s[1].is_nan() && s.max_s[1].is_nan());
        assert_eq!((s.mean_s[2], s.max_s[2]), (2.0, 2.0));
        assert_eq!((s.mean_s[4], s.max_s[4]), (4.0, 7.0));
    }
}
