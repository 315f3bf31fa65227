//! `sim` on a mesh scenario (`env = "lln"`: a `nitk-…` preset or such a scenario file).

use std::path::Path;

use netsim::mesh::{self, MeshScenario};
use netsim::NetworkReport;

use super::capture::Captures;
use std::fmt::Write as _;

use netmodel::mesh::topology::Role;
use netsim::summary::NetworkSummary;

use super::columns::cc_columns;
use super::out::{write_runs, Tables};
use super::request::Request;
use super::runner::{all_failed, check_complete, cut_short, interrupted, run_all, Workers};
use super::runner::{spelled, warning_lines};
use super::text::{num, throughput};
use crate::progress::{Counting, Progress};
use crate::stop::Stop;

type Error = Box<dyn std::error::Error>;

type Run = super::runner::Run<MeshScenario>;

/// Runs every algorithm asked for (or the scenario's own list) over the mesh scenario `text`:
/// the scenario the options described (before each algorithm's resolution), the runs, and how
/// many algorithms were asked for.
pub(crate) fn run(
    args: &Request,
    text: &str,
    origin: &str,
    stop: &Stop,
    progress: impl FnOnce(u64, Counting) -> Option<Progress>,
) -> Result<(MeshScenario, Vec<Run>, usize), Error> {
    for (given, flag) in [
        (args.clients.is_some(), "--clients"),
        (args.buffer.is_some(), "--buffer"),
        (args.workload.is_some(), "--workload"),
        (args.errors.is_some(), "--errors"),
    ] {
        if given {
            return Err(crate::usage(format!(
                "{flag} is an option of the wired bottleneck; {origin} is a mesh scenario"
            )));
        }
    }
    let mut base = MeshScenario::from_toml(text).map_err(|e| format!("{origin}: {e}"))?;
    if let Some(v) = args.reps {
        base.reps = v;
    }
    if let Some(v) = args.seed {
        base.seed = v;
    }
    if let Some(d) = args.duration {
        base.duration_s = d;
    }
    let specs: Vec<String> = match (args.cc.is_empty(), base.algorithms.is_empty()) {
        (false, _) => args.cc.clone(),
        (true, false) => base.algorithms.clone(),
        (true, true) => vec![base.cc.clone()],
    };
    let mut scenarios = Vec::new();
    for cc in &specs {
        let s = MeshScenario { cc: cc.clone(), ..base.clone() };
        let res = s.resolve().map_err(|e| format!("{origin}: {e}"))?;
        // the resolved algorithm, every parameter written out
        let s = MeshScenario { cc: res.cc.to_string(), ..s };
        scenarios.push((s, res));
    }
    let workers = Workers::new(args.threads)?;
    // progress in simulated seconds: a run's length is fixed, the number of its exchanges is not
    // (under congestion they take longer than their clients' intervals)
    let total: u64 = scenarios
        .iter()
        .map(|(s, _)| crate::progress::units(netsim::worlds::WorldScenario::work_per_rep(s), s.reps).0)
        .sum();
    let captures = match &args.pcap {
        Some(file) => {
            let algorithms: Vec<(&str, _)> =
                scenarios.iter().map(|(s, res)| (s.cc.as_str(), mesh::addressing(res))).collect();
            Captures::open(file, &algorithms)?
        }
        None => Captures::none(),
    };
    let items: Vec<(usize, &(MeshScenario, mesh::Resolved))> = scenarios.iter().enumerate().collect();
    let runs = run_all(
        &workers,
        progress(total, Counting::SimulatedSeconds),
        stop,
        &items,
        |(_, (s, _))| (s.clone(), s.reps),
        |(i, (s, res)), r, told| match captures.take(*i, r) {
            Some((path, mut c)) => {
                let result = mesh::run_rep_captured(s, res, r, told, &mut c);
                captures.done(*i, path, c.finish());
                result
            }
            None => mesh::run_rep(s, res, r, told),
        },
    )?;
    captures.tell()?;
    Ok((base, runs, scenarios.len()))
}

/// An [`crate::Incomplete`] error if `stop` cut the runs short, a run's clients had not all
/// finished when its `duration_s` was up, or every exchange of a run failed.
pub(crate) fn check(stop: &Stop, runs: &[Run], asked: usize) -> Result<(), Error> {
    let done = runs.iter().map(|r| (algorithm(r), r.reps.len(), r.scenario.reps));
    interrupted(stop, done, asked)?;
    let failed = runs.iter().filter_map(|r| all_failed(algorithm(r), &r.summary));
    check_complete(truncations(runs).into_iter().chain(failed).collect())
}

/// One sentence per run whose clients, taking turns, had not all finished when the run's
/// `duration_s` was up.
pub fn truncations(runs: &[Run]) -> Vec<String> {
    (runs.iter().filter(|r| r.summary.truncated_reps > 0))
        .map(|r| {
            let (s, cut) = (&r.scenario, r.summary.truncated_reps);
            cut_short(algorithm(r), cut, s.reps, "duration_s", s.duration_s) + "; their unfinished clients have no FCT"
        })
        .collect()
}

/// The run's algorithm by name (its scenario's `cc` has every parameter written out).
pub fn algorithm(r: &Run) -> &str {
    r.scenario.cc.split(':').next().unwrap_or("")
}

/// Writes a mesh run's summary.json and the chosen tables into `dir`, nodes.csv too.
pub(crate) fn write_out(dir: &Path, runs: &[Run], tables: Tables) -> Result<(), Error> {
    // a mesh client is named by its node id (host i is node i + 1), as in a sweep's table
    write_runs(dir, runs, tables, |s: &MeshScenario| s.cc.clone(), |c| c + 1)?;
    let mut nodes = Tables::writer(tables.nodes, dir, "nodes.csv", &crate::tables::NODE_COLUMNS)?;
    for r in runs {
        let cc = cc_columns(&r.scenario.cc);
        for rep in &r.reps {
            if let NetworkReport::Mesh(m) = &rep.network {
                for n in &m.report.nodes {
                    let head = [
                        rep.rep.to_string(),
                        n.id.to_string(),
                        serde_json::to_value(n.role)?.as_str().unwrap_or("").to_string(),
                        format!("{:.4}", n.x),
                        format!("{:.4}", n.y),
                        n.parent.map(|p| p.to_string()).unwrap_or_default(),
                        n.rank.map(|p| p.to_string()).unwrap_or_default(),
                    ];
                    let counts = crate::tables::node_counts(n, m.duration_ns).map(|v| v.to_string());
                    nodes.write_record(cc.iter().cloned().chain(head).chain(counts))?;
                }
            }
        }
    }
    nodes.flush()?;
    Ok(())
}

/// The mesh runs' table, as `coapcc sim` prints it.
pub(crate) fn table(base: &MeshScenario, runs: &[Run]) -> String {
    let mut out = String::new();
    let layout = base.topology.layout.as_deref().unwrap_or("explicit nodes");
    let _ = writeln!(
        out,
        "{}: {} ({}), {} s × {} rep(s), seed {}",
        base.name,
        layout,
        spelled(&base.stack.mac),
        base.duration_s,
        runs[0].scenario.reps,
        base.seed
    );
    if let Some(a) = &base.approximation {
        let _ = writeln!(out, "approximation: {a}");
    }
    out.push('\n');
    let _ = writeln!(
        out,
        "{:<12} {:>8} {:>9} {:>9} {:>9} {:>7} {:>8} {:>9} {:>9} {:>6}",
        "algorithm", "trans/s", "FCT mean", "FCT p50", "retx/run", "PDR", "Jain", "RTO mean", "RTO max", "failed"
    );
    for r in runs {
        let (m, s) = (r.summary.mesh.as_ref(), &r.summary);
        let Some(m) = m else { continue };
        let name = algorithm(r);
        let _ = writeln!(
            out,
            "{:<12} {:>8} {:>9} {:>9} {:>9} {:>7} {:>8} {:>9} {:>9} {:>6}",
            name,
            num(m.transactions_per_s, 2),
            num(m.fct_mean_s, 2),
            num(s.fct_s.p50, 2),
            num(m.retransmissions_total, 0),
            num(m.pdr, 3),
            num(m.jain_fairness, 3),
            num(m.rto_s.mean, 2),
            num(m.rto_s.max_mean, 2),
            s.failed_exchanges
        );
    }
    if let NetworkSummary::Mesh(mesh) = &runs[0].summary.network {
        let d = &mesh.drops;
        let _ = writeln!(
            out,
            "\nframe/packet losses ({}; all reps): collision {}, cca_busy {}, queue_full {}, no_neighbor_queue {}, \
             rx_overflow {}, tx_fail {}, rx_fail {}, no_route {}",
            algorithm(&runs[0]),
            d.collision,
            d.cca_busy,
            d.queue_full,
            d.no_neighbor_queue,
            d.rx_overflow,
            d.tx_fail,
            d.rx_fail,
            d.no_route
        );
        let rpl_sent: u64 = mesh.nodes.iter().map(|n| n.stats.rpl_frames_sent).sum();
        if rpl_sent > 0 {
            let by_br: u64 =
                mesh.nodes.iter().filter(|n| n.role == Role::BorderRouter).map(|n| n.stats.rpl_frames_sent).sum();
            let lost: u64 = mesh.nodes.iter().map(|n| n.stats.rpl_dropped).sum();
            let refused: u64 = mesh.nodes.iter().map(|n| n.stats.routes_refused).sum();
            let evicted: u64 = mesh.nodes.iter().map(|n| n.stats.routes_evicted).sum();
            let tables = if refused + evicted > 0 {
                format!("; full route tables refused {refused} routes and evicted {evicted}")
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "RPL control ({}; all reps): {} frames on the air ({} by the border router), {} control packets lost{}",
                algorithm(&runs[0]),
                rpl_sent,
                by_br,
                lost,
                tables
            );
        }
        if let Some(dc) = &mesh.duty_cycle {
            // the copies of the ContikiMAC senders (beside nullrdc motes, a kept-on border
            // router's); duplicates are counted where they arrive
            let st =
                mesh.nodes.iter().filter(|n| n.contikimac).fold(netmodel::mesh::NodeStats::default(), |mut a, n| {
                    a.merge(&n.stats);
                    a
                });
            let duplicates: u64 = mesh.nodes.iter().map(|n| n.stats.duplicates).sum();
            let c = &st.copy_drops;
            let _ = writeln!(
                out,
                "ContikiMAC ({}; all reps): radio on {:.2} % of the time on average (border router {:.2} %, \
                 highest mote {} {:.2} %); {:.1} copies per packet handed over ({} copies, {} handed over, \
                 {} duplicates); copies lost: asleep {}, collision {}, rx_fail {}, rx_overflow {}; \
                 CSMA gave up on {} packets ({} of them taken already: lost ACKs)",
                algorithm(&runs[0]),
                dc.mean * 100.0,
                dc.border_router * 100.0,
                dc.max_node,
                dc.max * 100.0,
                st.frames_sent as f64 / st.handed_over.max(1) as f64,
                st.frames_sent,
                st.handed_over,
                duplicates,
                c.asleep,
                c.collision,
                c.rx_fail,
                c.rx_overflow,
                d.csma_retry_limit + st.given_up_after_handover,
                st.given_up_after_handover
            );
        }
    }
    let cut = truncations(runs);
    if !cut.is_empty() {
        let _ = write!(out, "\nINCOMPLETE: {}\n", cut.join("\nINCOMPLETE: "));
    }
    out += &warning_lines(runs.iter().map(|r| (algorithm(r), &r.summary)));
    let _ = writeln!(
        out,
        "\ntrans/s: completed exchanges per second; FCT: first request to the {}th success (s), mean over clients; \
         retx/run: retransmissions per replication; RTO max: per-run maximum, averaged.",
        base.workload.fct_successes
    );
    out + &throughput(runs.iter().map(|r| (r.summary.events, r.wall_s)))
}

/// The mesh's view (`env = "lln"`).
pub(crate) struct View;

impl super::View for View {
    fn run(
        &self,
        _: &'static dyn netsim::worlds::World,
        req: &Request,
        stop: &Stop,
        progress: super::ProgressFn<'_>,
    ) -> Result<(super::Runs, usize), Error> {
        let (text, origin) = req.text.as_ref().ok_or("a mesh run needs its scenario")?;
        let (base, runs, asked) = run(req, text, origin, stop, progress)?;
        Ok((Box::new(Runs { base, runs }), asked))
    }
}

/// A mesh's runs, with the scenario the options described.
#[derive(Debug)]
struct Runs {
    base: MeshScenario,
    runs: Vec<Run>,
}

impl super::WorldRuns for Runs {
    fn to_json(&self) -> Result<serde_json::Value, Error> {
        super::runner::to_json(&self.runs)
    }
    fn warning_lines(&self) -> String {
        warning_lines(self.runs.iter().map(|r| (algorithm(r), &r.summary)))
    }
    fn tables(&self) -> Vec<(&'static str, crate::tables::Table)> {
        crate::tables::mesh(&self.runs)
    }
    fn table(&self) -> String {
        table(&self.base, &self.runs)
    }
    fn write_out(&self, dir: &Path, tables: Tables) -> Result<(), Error> {
        write_out(dir, &self.runs, tables)
    }
    fn check(&self, stop: &Stop, asked: usize) -> Result<(), Error> {
        check(stop, &self.runs, asked)
    }
}
