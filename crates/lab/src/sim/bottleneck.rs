//! `sim` on the wired reference bottleneck: the scenario the options describe, its runs (the
//! memory estimate first, `--pcap`'s captures), their check, files and table.

use std::fmt::Write as _;
use std::path::Path;

use netsim::loss::ErrorProfile;
use netsim::{run_rep_with, Scenario, Transport};

use super::capture::Captures;
use super::out::{write_runs, Tables};
use super::request::Request;
use super::runner::{
    all_failed, check_complete, cut_short, interrupted, run_all, spelled, warning_lines, Run, Workers,
};
use super::text::{num, throughput};
use crate::progress::{Counting, Progress};
use crate::stop::Stop;

type Error = Box<dyn std::error::Error>;

/// Runs every algorithm asked for (or the scenario's) over the bottleneck scenario `req`
/// describes: the scenario the options described (before each algorithm's resolution), the
/// runs, and how many algorithms were asked for.
pub(crate) fn run(
    req: &Request,
    stop: &Stop,
    progress: impl FnOnce(u64, Counting) -> Option<Progress>,
) -> Result<(Scenario, Vec<Run<Scenario>>, usize), Error> {
    let base = scenario(req)?;
    let specs = if req.cc.is_empty() { vec![base.stack()] } else { req.cc.clone() };
    let (scenarios, transports): (Vec<Scenario>, Vec<Transport>) = specs
        .iter()
        .map(|spec| base.with_stack(spec)?.resolve_with_transport())
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .unzip();
    let workers = Workers::new(req.threads)?;
    if !req.ignore_memory {
        super::memory::check_memory(&scenarios, workers.threads(), req.detail)?;
    }
    let total: u64 = scenarios
        .iter()
        .map(|s| crate::progress::units(netsim::worlds::WorldScenario::work_per_rep(s), s.reps).0)
        .sum();
    let items: Vec<(usize, &Scenario, Transport)> =
        scenarios.iter().zip(transports).enumerate().map(|(i, (s, t))| (i, s, t)).collect();
    let captures = match &req.pcap {
        Some(file) => {
            let stacks: Vec<String> = scenarios.iter().map(|s| s.stack()).collect();
            let algorithms: Vec<(&str, _)> =
                stacks.iter().zip(&items).map(|(n, (_, s, t))| (n.as_str(), netsim::addressing(s, t))).collect();
            Captures::open(file, &algorithms)?
        }
        None => Captures::none(),
    };
    let detail = req.detail;
    let runs = run_all(
        &workers,
        progress(total, Counting::Exchanges),
        stop,
        &items,
        |(_, s, _)| ((*s).clone(), s.reps),
        |(i, s, transport), r, told| match captures.take(*i, r) {
            Some((path, mut c)) => {
                let result = netsim::run_rep_captured(s, transport, r, told, detail, &mut c);
                captures.done(*i, path, c.finish());
                result
            }
            None => run_rep_with(s, transport, r, told, detail),
        },
    )?;
    captures.tell()?;
    Ok((base, runs, specs.len()))
}

/// The bottleneck scenario the request describes, before resolution.
fn scenario(req: &Request) -> Result<Scenario, Error> {
    let mut s = match &req.text {
        Some((text, origin)) => Scenario::from_toml(text).map_err(|e| format!("{origin}: {e}"))?,
        None => Scenario::thesis(),
    };
    if req.duration.is_some() {
        return Err(crate::usage(
            "--duration applies to mesh scenarios (the bottleneck's clients run their exchanges)",
        ));
    }
    // the options' own bounds are usage errors (exit 2), as clap's are
    if let Some(v) = req.clients {
        if v > netsim::scenario::MAX_CLIENTS {
            return Err(crate::usage(format!("--clients: at most {}, not {v}", netsim::scenario::MAX_CLIENTS)));
        }
        s.clients = v;
    }
    if let Some(v) = req.buffer {
        if v > netsim::scenario::MAX_BUFFER_BYTES {
            return Err(crate::usage(format!(
                "--buffer: at most {} bytes, not {v}",
                netsim::scenario::MAX_BUFFER_BYTES
            )));
        }
        s.uplink.buffer_bytes = v;
        s.downlink.buffer_bytes = v;
    }
    if let Some(w) = req.workload {
        s.workload = w;
    }
    if let Some(e) = req.errors {
        s.errors = e;
        if e != ErrorProfile::Custom {
            // the option replaces a file's own loss tables (which resolve refuses beside a profile)
            s.uplink.loss = netmodel::loss::LossModel::None;
            s.downlink.loss = netmodel::loss::LossModel::None;
        }
    }
    if let Some(v) = req.reps {
        s.reps = v;
    }
    if let Some(v) = req.seed {
        s.seed = v;
    }
    Ok(s)
}

/// One sentence per run with truncated replications.
pub fn truncations(runs: &[Run<Scenario>]) -> Vec<String> {
    runs.iter().filter(|r| r.summary.truncated_reps > 0).map(truncation).collect()
}

/// What a run's truncated replications mean, in one sentence.
fn truncation(r: &Run<Scenario>) -> String {
    let (s, cut) = (&r.scenario, r.summary.truncated_reps);
    cut_short(&s.stack(), cut, s.reps, "max_time_s", s.max_time_s) + "; their unfinished clients have no FCT"
}

/// An [`crate::Incomplete`] error if `stop` cut the runs short (`asked` algorithms were asked
/// for), a replication was truncated or every exchange of a run failed.
pub(crate) fn check(stop: &Stop, runs: &[Run<Scenario>], asked: usize) -> Result<(), Error> {
    interrupted(stop, runs.iter().map(|r| (r.scenario.stack(), r.reps.len(), r.scenario.reps)), asked)?;
    let failed = runs.iter().filter_map(|r| all_failed(&r.scenario.stack(), &r.summary));
    check_complete(truncations(runs).into_iter().chain(failed).collect())
}

/// Writes a bottleneck run's summary.json and the chosen tables into `dir`.
pub(crate) fn write_out(dir: &Path, runs: &[Run<Scenario>], tables: Tables) -> Result<(), Error> {
    write_runs(dir, runs, tables, Scenario::stack, |c| c)
}

/// The runs' table, as `coapcc sim` prints it.
pub(crate) fn table(base: &Scenario, runs: &[Run<Scenario>]) -> String {
    let s = &runs[0].scenario;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} clients × {} exchanges, {} workload, buffers {}/{} B (up/down), errors {}, {} rep(s), seed {}\n",
        base.name,
        s.clients,
        s.exchanges,
        spelled(&s.workload),
        s.uplink.buffer_bytes,
        s.downlink.buffer_bytes,
        spelled(&s.errors),
        s.reps,
        s.seed
    );
    let w = runs.iter().map(|r| r.scenario.stack().chars().count()).max().unwrap_or(0).max("algorithm".len());
    let _ = writeln!(
        out,
        "{:<w$} {:>9} {:>9} {:>9} {:>9} {:>7} {:>8} {:>9} {:>8} {:>13} {:>7}",
        "algorithm",
        "FCT p10",
        "median",
        "p90",
        "max",
        "no FCT",
        "failed",
        "retx/exch",
        "dup/cli",
        "drops up/down",
        "wasted"
    );
    for r in runs {
        let m = &r.summary;
        let retx: u64 = m.retransmissions_hist.iter().enumerate().map(|(i, n)| i as u64 * n).sum();
        let (drops, wasted) = match m.network.bottleneck() {
            Some(b) => {
                let d = &b.drops;
                (format!("{}/{}", d.up_buffer + d.up_error, d.down_buffer + d.down_error), b.wasted_downlink_fraction)
            }
            None => ("-".into(), f64::NAN),
        };
        let _ = writeln!(
            out,
            "{:<w$} {:>9} {:>9} {:>9} {:>9} {:>7} {:>8} {:>9.2} {:>8.0} {:>13} {:>6.1}%",
            r.scenario.stack(),
            num(m.fct_s.p10, 2),
            num(m.fct_s.p50, 2),
            num(m.fct_s.p90, 2),
            num(m.fct_s.max, 2),
            m.clients_without_fct,
            m.failed_exchanges,
            retx as f64 / m.exchanges.max(1) as f64,
            m.unnecessary_retx_per_client.p50,
            drops,
            100.0 * wasted
        );
    }
    let cut = truncations(runs);
    if !cut.is_empty() {
        let _ = write!(out, "\nINCOMPLETE: {}\n", cut.join("\nINCOMPLETE: "));
    }
    out += &warning_lines(runs.iter().map(|r| (r.scenario.stack(), &r.summary)));
    let reps = if s.reps == 1 { String::new() } else { format!(", summed over the {} replications", s.reps) };
    let _ = writeln!(
        out,
        "\nFCT in seconds, over the clients that finished (no FCT: clients whose last exchange failed or that were\n\
         cut short); failed: exchanges without a response; dup/cli: median duplicate responses per client;\n\
         drops: packets lost in the bottleneck's buffers and to link errors{reps};\n\
         wasted: share of the downlink's busy time spent on duplicates."
    );
    out + &throughput(runs.iter().map(|r| (r.summary.events, r.wall_s)))
}

/// The bottleneck's view: the scenarios without `env`, and `sim` with no scenario at all.
pub(crate) struct View;

impl super::View for View {
    fn run(
        &self,
        _: &'static dyn netsim::worlds::World,
        req: &Request,
        stop: &Stop,
        progress: super::ProgressFn<'_>,
    ) -> Result<(super::Runs, usize), Error> {
        let (base, runs, asked) = run(req, stop, progress)?;
        Ok((Box::new(Runs { base, runs }), asked))
    }
}

/// The bottleneck's runs, with the scenario the options described.
#[derive(Debug)]
struct Runs {
    base: Scenario,
    runs: Vec<Run<Scenario>>,
}

impl super::WorldRuns for Runs {
    fn to_json(&self) -> Result<serde_json::Value, Error> {
        super::runner::to_json(&self.runs)
    }
    fn warning_lines(&self) -> String {
        warning_lines(self.runs.iter().map(|r| (r.scenario.stack(), &r.summary)))
    }
    fn tables(&self) -> Vec<(&'static str, crate::tables::Table)> {
        crate::tables::bottleneck(&self.runs)
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
