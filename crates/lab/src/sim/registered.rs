//! `sim` on a world registered by another crate ([`netsim::worlds::register`]): its scenario
//! read and resolved by the world, each algorithm's replications run by the scenario's own
//! [`netsim::worlds::Runner`], the results tabulated like any world's (summary.json, the
//! clients', exchanges' and RTOs' tables, the Python package's frames). Nothing here names a
//! world: a new network model gets `sim` without a change to this crate.

use std::path::Path;

use netsim::worlds::{Runner, Work, World, WorldScenario};

use std::fmt::Write as _;

use super::columns::stack_of;
use super::out::{write_runs, Tables};
use super::request::Request;
use super::runner::warning_lines;
use super::runner::{all_failed, check_complete, interrupted, run_all, Workers};
use super::text::{num, throughput};
use crate::progress::{Counting, Progress};
use crate::stop::Stop;

type Error = Box<dyn std::error::Error>;

/// One algorithm's run: its scenario as the world records it (JSON).
pub type Run = super::runner::Run<serde_json::Value>;

/// The run's algorithm as its scenario names it (`cc`, or `tcp[:...]`).
pub fn algorithm(r: &Run) -> String {
    stack_of(&r.scenario)
}

/// Runs every algorithm asked for (or the scenario's own) over `world`'s scenario `text`: the
/// runs and how many algorithms were asked for.
pub(crate) fn run(
    world: &'static dyn World,
    args: &Request,
    text: &str,
    origin: &str,
    stop: &Stop,
    progress: impl FnOnce(u64, Counting) -> Option<Progress>,
) -> Result<(Vec<Run>, usize), Error> {
    for (given, flag) in [
        (args.clients.is_some(), "--clients"),
        (args.buffer.is_some(), "--buffer"),
        (args.workload.is_some(), "--workload"),
        (args.errors.is_some(), "--errors"),
        (args.duration.is_some(), "--duration"),
        (args.pcap.is_some(), "--pcap"),
    ] {
        if given {
            return Err(crate::usage(format!(
                "{flag} is an option of the built-in worlds; {origin} is a {} scenario (set its own keys with --set)",
                world.title()
            )));
        }
    }
    let mut table: toml::Table = text.parse().map_err(|e: toml::de::Error| format!("{origin}: {e}"))?;
    if let Some(v) = args.reps {
        table.insert("reps".into(), toml::Value::Integer(v.into()));
    }
    if let Some(v) = args.seed {
        let Ok(seed) = i64::try_from(v) else {
            return Err(crate::usage(format!("--seed {v}: at most {} for a TOML scenario", i64::MAX)));
        };
        table.insert("seed".into(), toml::Value::Integer(seed));
    }
    // each algorithm asked for, written as the scenario's `cc`; none: the scenario's own
    let specs: Vec<Option<&String>> = if args.cc.is_empty() { vec![None] } else { args.cc.iter().map(Some).collect() };
    let mut scenarios: Vec<Box<dyn WorldScenario>> = Vec::with_capacity(specs.len());
    for spec in &specs {
        let mut t = table.clone();
        if let Some(cc) = spec {
            t.insert("cc".into(), toml::Value::String((*cc).clone()));
        }
        scenarios.push(world.scenario(t).map_err(|e| format!("{origin}: {e}"))?);
    }
    let runners: Vec<Box<dyn Runner + '_>> =
        scenarios.iter().map(|s| s.runner().map_err(|e| format!("{origin}: {e}"))).collect::<Result<_, _>>()?;
    let workers = Workers::new(args.threads)?;
    // a progress display counts exchanges or simulated seconds (the scenarios, of one world and
    // differing in their algorithm alone, count alike); a world that counts whole replications
    // runs without one
    let counting = match scenarios[0].work_per_rep() {
        Work::Exchanges(_) => Some(Counting::Exchanges),
        Work::SimulatedSeconds(_) => Some(Counting::SimulatedSeconds),
        Work::Replication => None,
    };
    let total = scenarios.iter().map(|s| crate::progress::units(s.work_per_rep(), s.reps()).0).sum();
    let shown = counting.and_then(|c| progress(total, c));
    let items: Vec<usize> = (0..scenarios.len()).collect();
    let runs = run_all(
        &workers,
        shown,
        stop,
        &items,
        |&i| (scenarios[i].to_json(), scenarios[i].reps()),
        |&i, r, told| runners[i].run_rep_detail(r, told, args.detail),
    )?;
    Ok((runs, specs.len()))
}

/// The replications asked of a run (its scenario's `reps`; a world without one: those it ran).
fn reps(r: &Run) -> u32 {
    r.scenario["reps"].as_u64().map_or(r.reps.len() as u32, |n| n as u32)
}

/// An [`crate::Incomplete`] error if `stop` cut the runs short, a replication was truncated or
/// every exchange of a run failed.
pub(crate) fn check(stop: &Stop, runs: &[Run], asked: usize) -> Result<(), Error> {
    interrupted(stop, runs.iter().map(|r| (algorithm(r), r.reps.len(), reps(r))), asked)?;
    let cut = runs.iter().filter(|r| r.summary.truncated_reps > 0).map(|r| {
        format!(
            "{}: {} of {} replication(s) cut short before every client finished; their unfinished clients have no FCT",
            algorithm(r),
            r.summary.truncated_reps,
            reps(r)
        )
    });
    let failed = runs.iter().filter_map(|r| all_failed(&algorithm(r), &r.summary));
    check_complete(cut.chain(failed).collect())
}

/// Writes summary.json and the chosen tables into `dir`, each client named as `world` names it.
pub(crate) fn write_out(world: &'static dyn World, dir: &Path, runs: &[Run], tables: Tables) -> Result<(), Error> {
    write_runs(dir, runs, tables, stack_of, |c| world.client_label(c))
}

/// The runs' table, as `coapcc sim` prints it: what every world's results hold.
pub(crate) fn table(world: &dyn World, runs: &[Run]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{} (env = \"{}\"), {} rep(s)\n", world.title(), world.env(), runs[0].reps.len());
    let w = runs.iter().map(|r| algorithm(r).chars().count()).max().unwrap_or(0).max("algorithm".len());
    let _ = writeln!(
        out,
        "{:<w$} {:>9} {:>9} {:>9} {:>9} {:>7} {:>8} {:>9}",
        "algorithm", "exchanges", "FCT p10", "median", "p90", "no FCT", "failed", "retx/exch"
    );
    for r in runs {
        let m = &r.summary;
        let retx: u64 = m.retransmissions_hist.iter().enumerate().map(|(i, n)| i as u64 * n).sum();
        let _ = writeln!(
            out,
            "{:<w$} {:>9} {:>9} {:>9} {:>9} {:>7} {:>8} {:>9.2}",
            algorithm(r),
            m.exchanges,
            num(m.fct_s.p10, 2),
            num(m.fct_s.p50, 2),
            num(m.fct_s.p90, 2),
            m.clients_without_fct,
            m.failed_exchanges,
            retx as f64 / m.exchanges.max(1) as f64,
        );
    }
    out += &warning_lines(runs.iter().map(|r| (algorithm(r), &r.summary)));
    let _ = writeln!(
        out,
        "\nFCT in seconds, over the clients that finished (no FCT: clients whose last exchange failed or that were\n\
         cut short); failed: exchanges without a response; the world's own counters: --json's \"network\"."
    );
    out + &throughput(runs.iter().map(|r| (r.summary.events, r.wall_s)))
}

/// The view of any world without one of its own.
pub(crate) struct View;

impl super::View for View {
    fn run(
        &self,
        world: &'static dyn World,
        req: &Request,
        stop: &Stop,
        progress: super::ProgressFn<'_>,
    ) -> Result<(super::Runs, usize), Error> {
        let (text, origin) = req.text.as_ref().ok_or("a registered world's run needs its scenario")?;
        let (runs, asked) = run(world, req, text, origin, stop, progress)?;
        Ok((Box::new(Runs { world, runs }), asked))
    }
}

/// A registered world's runs.
#[derive(Debug)]
struct Runs {
    world: &'static dyn World,
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
        crate::tables::registered(&self.runs, |c| self.world.client_label(c))
    }
    fn table(&self) -> String {
        table(self.world, &self.runs)
    }
    fn write_out(&self, dir: &Path, tables: Tables) -> Result<(), Error> {
        write_out(self.world, dir, &self.runs, tables)
    }
    fn check(&self, stop: &Stop, asked: usize) -> Result<(), Error> {
        check(stop, &self.runs, asked)
    }
}
