//! `sim`: one scenario, one or several algorithms, every replication; the runner the
//! command line's `coapcc sim` and the Python package's `coapcc.sim` share, the memory estimate
//! that refuses a run the machine cannot hold, and the CSV tables `--out` writes.
//!
//! By layer, the lower first: [`request`] (what is asked), [`runner`] (replications on worker
//! threads, for either world), [`columns`] (the CSV tables' columns), [`out`] (the files `--out`
//! writes), [`mesh`] (a mesh scenario's run), and here the entry that asks the scenario's world.

mod capture;
pub mod columns;
mod memory;
pub mod mesh;
pub mod out;
pub mod registered;
pub mod request;
pub mod runner;

use std::path::Path;

use netsim::lln::LlnScenario;
use netsim::loss::ErrorProfile;
use netsim::worlds::World;
use netsim::{run_rep_with, Detail, Scenario, Transport};

use crate::progress::{Counting, Progress};
use crate::stop::Stop;

use capture::Captures;
pub use columns::NO_CC_PARAMS;
pub use out::Tables;
pub use request::Request;
use runner::{all_failed, check_complete, cut_short, interrupted, run_all, to_json, Workers};
pub use runner::{spelled, warning_lines, Run};

type Error = Box<dyn std::error::Error>;

/// The scenario text a preset name or a file names, and where it came from.
pub fn scenario_text(preset: Option<&str>, path: Option<&Path>) -> Result<Option<(String, String)>, Error> {
    if let Some(name) = preset {
        let text = netsim::lln::presets::text(name)
            .ok_or_else(|| format!("unknown preset '{name}' (`coapcc presets` lists them)"))?;
        return Ok(Some((text.to_string(), format!("preset {name}"))));
    }
    match path {
        Some(path) => {
            let text = netsim::text_file::read_text(path, netsim::text_file::MAX_SCENARIO_BYTES)?;
            Ok(Some((text, path.display().to_string())))
        }
        None => Ok(None),
    }
}

/// The scenario `text` names (`None`: the thesis preset) with `settings` written over it, each
/// `KEY=VALUE` as a plan's matrix key is (`radio.success_ratio_rx=1`, `buffer=5000`,
/// `cc_defaults.max_retransmit=4`); VALUE is read as TOML (a number, `true`, `"text"`), else
/// taken as text. A key the scenario does not have is refused when it is resolved.
pub fn with_settings(text: Option<(String, String)>, settings: &[String]) -> Result<Option<(String, String)>, Error> {
    if settings.is_empty() {
        return Ok(text);
    }
    let (mut table, origin) = match text {
        Some((t, origin)) => (t.parse::<toml::Table>().map_err(|e| format!("{origin}: {e}"))?, origin),
        None => (toml::Table::try_from(Scenario::thesis())?, "preset thesis".to_string()),
    };
    for set in settings {
        let (key, value) = set.split_once('=').filter(|(k, _)| !k.trim().is_empty()).ok_or_else(|| -> Error {
            crate::usage(format!("--set '{set}': expected KEY=VALUE, e.g. radio.success_ratio_rx=1"))
        })?;
        let value = format!("v = {value}")
            .parse::<toml::Table>()
            .ok()
            .and_then(|mut t| t.remove("v"))
            .unwrap_or_else(|| toml::Value::String(value.to_string()));
        crate::sweep::set_path(&mut table, key.trim(), value).map_err(|e| format!("--set {set}: {e}"))?;
    }
    let origin = format!("{origin} with --set {}", settings.join(" --set "));
    Ok(Some((toml::to_string(&table)?, origin)))
}

/// The runs of a simulation, over the bottleneck or over a mesh, with the scenario the
/// options described (before each algorithm's resolution).
#[derive(Debug)]
pub enum Runs {
    /// The wired bottleneck.
    Bottleneck(Box<Scenario>, Vec<Run<Scenario>>),
    /// A low-power mesh (`env = "lln"`).
    Mesh(Box<LlnScenario>, Vec<Run<LlnScenario>>),
    /// A world registered by another crate ([`registered`]).
    Registered(&'static dyn World, Vec<registered::Run>),
}

impl Runs {
    /// One run's object, or `{"runs": [...]}` for several: what `sim --json` prints.
    pub fn to_json(&self) -> Result<serde_json::Value, Error> {
        match self {
            Runs::Bottleneck(_, runs) => to_json(runs),
            Runs::Mesh(_, runs) => to_json(runs),
            Runs::Registered(_, runs) => to_json(runs),
        }
    }

    /// The summaries' warnings, a line each.
    pub fn warning_lines(&self) -> String {
        match self {
            Runs::Bottleneck(_, runs) => warning_lines(runs.iter().map(|r| (r.scenario.stack(), &r.summary))),
            Runs::Mesh(_, runs) => warning_lines(runs.iter().map(|r| (mesh::algorithm(r), &r.summary))),
            Runs::Registered(_, runs) => warning_lines(runs.iter().map(|r| (registered::algorithm(r), &r.summary))),
        }
    }

    /// The tables `--out` writes, as columns ([`crate::tables`]).
    pub fn tables(&self) -> Vec<(&'static str, crate::tables::Table)> {
        match self {
            Runs::Bottleneck(_, runs) => crate::tables::bottleneck(runs),
            Runs::Mesh(_, runs) => crate::tables::mesh(runs),
            Runs::Registered(world, runs) => crate::tables::registered(runs, |c| world.client_label(c)),
        }
    }

    /// Writes summary.json and the CSV tables into `dir` (nodes.csv too for a mesh).
    pub fn write_out(&self, dir: &Path, tables: Tables) -> Result<(), Error> {
        match self {
            Runs::Bottleneck(_, runs) => out::write_bottleneck(dir, runs, tables),
            Runs::Mesh(_, runs) => mesh::write_out(dir, runs, tables),
            Runs::Registered(world, runs) => registered::write_out(*world, dir, runs, tables),
        }
    }

    /// An [`crate::Incomplete`] error if `stop` cut the runs short (`asked` algorithms were asked
    /// for), a replication was truncated or every exchange of a run failed.
    pub fn check(&self, stop: &Stop, asked: usize) -> Result<(), Error> {
        match self {
            Runs::Bottleneck(_, runs) => {
                interrupted(stop, runs.iter().map(|r| (r.scenario.stack(), r.reps.len(), r.scenario.reps)), asked)?;
                let failed = runs.iter().filter_map(|r| all_failed(&r.scenario.stack(), &r.summary));
                check_complete(truncations(runs).into_iter().chain(failed).collect())
            }
            Runs::Mesh(_, runs) => mesh::check(stop, runs, asked),
            Runs::Registered(_, runs) => registered::check(stop, runs, asked),
        }
    }
}

/// Runs what `req` asks for until `stop` is set (then the runs hold the replications that
/// finished); `progress(total, counting)` gives the display to tell, if any (it is finished at
/// the end). Returns the runs and how many algorithms were asked for.
pub fn run(
    req: &Request,
    stop: &Stop,
    progress: impl FnOnce(u64, Counting) -> Option<Progress>,
) -> Result<(Runs, usize), Error> {
    if let Some((t, origin)) = &req.text {
        let world = netsim::worlds::of_text(t).map_err(|e| format!("{origin}: {e}"))?;
        match world.kind() {
            "bottleneck" => {}
            "mesh" => {
                let (base, runs, asked) = mesh::run(req, t, origin, stop, progress)?;
                return Ok((Runs::Mesh(Box::new(base), runs), asked));
            }
            _ => {
                let (runs, asked) = registered::run(world, req, t, origin, stop, progress)?;
                return Ok((Runs::Registered(world, runs), asked));
            }
        }
    }
    let base = scenario(req)?;
    let specs = if req.cc.is_empty() { vec![base.stack()] } else { req.cc.clone() };
    let scenarios: Vec<Scenario> =
        specs.iter().map(|spec| base.with_stack(spec)?.resolve()).collect::<Result<_, _>>()?;
    let workers = Workers::new(req.threads)?;
    if !req.ignore_memory {
        memory::check_memory(&scenarios, workers.threads(), req.detail)?;
    }
    let total: u64 = scenarios
        .iter()
        .map(|s| crate::progress::units(netsim::worlds::WorldScenario::work_per_rep(s), s.reps).0)
        .sum();
    let items: Vec<(usize, &Scenario, Transport)> =
        scenarios.iter().enumerate().map(|(i, s)| Ok((i, s, s.transport()?))).collect::<Result<_, Error>>()?;
    let captures = match &req.pcap {
        Some(file) => {
            if let Some((_, s, _)) = items.iter().find(|(_, _, t)| matches!(t, Transport::Tcp(_))) {
                return Err(crate::usage(format!(
                    "--pcap writes CoAP over UDP; {} runs over the TCP model, whose segments carry no bytes",
                    s.stack()
                )));
            }
            let stacks: Vec<String> = scenarios.iter().map(|s| s.stack()).collect();
            let algorithms: Vec<(&str, _)> =
                stacks.iter().zip(&scenarios).map(|(n, s)| (n.as_str(), netsim::addressing(s))).collect();
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
                let result = result.unwrap_or_else(|_| run_rep_with(s, transport, r, told, detail));
                captures.done(*i, path, c.finish());
                result
            }
            None => run_rep_with(s, transport, r, told, detail),
        },
    )?;
    captures
        .tell(&scenarios.iter().map(|s| s.stack().split(':').next().unwrap_or("").to_string()).collect::<Vec<_>>())?;
    Ok((Runs::Bottleneck(Box::new(base), runs), specs.len()))
}

/// What a library caller gets from [`run_library`].
#[derive(Debug)]
pub struct Outcome {
    /// What `sim --json` prints.
    pub summary: serde_json::Value,
    /// The tables `sim --out` writes, as columns ([`crate::tables`]).
    pub tables: Vec<(&'static str, crate::tables::Table)>,
    /// The message of an incomplete run (a truncated replication, or stopped early).
    pub incomplete: Option<String>,
}

/// Runs `req` with no progress shown, keeping every exchange's record, and returns its summary
/// and tables in memory; with `out`, also writes the files `sim --out` writes (summary.json and
/// the CSV tables): the Python package's call.
pub fn run_library(req: &Request, out: Option<&Path>, stop: &Stop) -> Result<Outcome, Error> {
    let req = Request { detail: Detail::Exchanges, ..req.clone() };
    let (runs, asked) = run(&req, stop, |_, _| None)?;
    if stop.is_abandoned() {
        return Err("the run was abandoned: its results are not written".into());
    }
    if let Some(dir) = out {
        runs.write_out(dir, Tables::ALL)?;
    }
    let incomplete = match runs.check(stop, asked) {
        Ok(()) => None,
        Err(e) => match e.downcast::<crate::Incomplete>() {
            Ok(i) => Some(i.0),
            Err(e) => return Err(e),
        },
    };
    Ok(Outcome { summary: runs.to_json()?, tables: runs.tables(), incomplete })
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
