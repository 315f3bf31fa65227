//! `sim` on a mesh scenario (`env = "lln"`: a `nitk-…` preset or such a scenario file).

use std::path::Path;

use netsim::lln::{self, LlnScenario};
use netsim::NetworkReport;

use super::capture::Captures;
use super::columns::cc_columns;
use super::out::{write_runs, Tables};
use super::request::Request;
use super::runner::{all_failed, check_complete, cut_short, interrupted, run_all, Workers};
use crate::progress::{Counting, Progress};
use crate::stop::Stop;

type Error = Box<dyn std::error::Error>;

type Run = super::runner::Run<LlnScenario>;

/// Runs every algorithm asked for (or the scenario's own list) over the mesh scenario `text`:
/// the scenario the options described (before each algorithm's resolution), the runs, and how
/// many algorithms were asked for.
pub(crate) fn run(
    args: &Request,
    text: &str,
    origin: &str,
    stop: &Stop,
    progress: impl FnOnce(u64, Counting) -> Option<Progress>,
) -> Result<(LlnScenario, Vec<Run>, usize), Error> {
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
    let mut base = LlnScenario::from_toml(text).map_err(|e| format!("{origin}: {e}"))?;
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
        let s = LlnScenario { cc: cc.clone(), ..base.clone() };
        let res = s.resolve().map_err(|e| format!("{origin}: {e}"))?;
        // the resolved algorithm, every parameter written out
        let s = LlnScenario { cc: res.cc.to_string(), ..s };
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
                scenarios.iter().map(|(s, res)| (s.cc.as_str(), lln::addressing(res))).collect();
            Captures::open(file, &algorithms)?
        }
        None => Captures::none(),
    };
    let items: Vec<(usize, &(LlnScenario, lln::Resolved))> = scenarios.iter().enumerate().collect();
    let runs = run_all(
        &workers,
        progress(total, Counting::SimulatedSeconds),
        stop,
        &items,
        |(_, (s, _))| (s.clone(), s.reps),
        |(i, (s, res)), r, told| match captures.take(*i, r) {
            Some((path, mut c)) => {
                let result = lln::run_rep_captured(s, res, r, told, &mut c);
                captures.done(*i, path, c.finish());
                result
            }
            None => lln::run_rep(s, res, r, told),
        },
    )?;
    captures
        .tell(&scenarios.iter().map(|(s, _)| s.cc.split(':').next().unwrap_or("").to_string()).collect::<Vec<_>>())?;
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
    write_runs(dir, runs, tables, |s: &LlnScenario| s.cc.clone(), |c| c + 1)?;
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
