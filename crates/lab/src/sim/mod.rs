//! `sim`: one scenario, one or several algorithms, every replication; the runner the
//! command line's `coapcc sim` and the Python package's `coapcc.sim` share.
//!
//! One view per world, each owning its run, its check, its files and its table:
//! [`bottleneck`] (the wired reference bottleneck, with the memory estimate that refuses a run
//! the machine cannot hold), [`mesh`] (a mesh scenario), [`registered`] (any world another crate
//! registered). Below them, shared: [`request`] (what is asked), [`runner`] (replications on
//! worker threads), [`columns`] (the CSV tables' columns), [`out`] (the files `--out` writes),
//! `capture` (`--pcap`), `text` (what the tables print alike). Here the entry, which asks the
//! scenario's world, and [`Runs`], which hands each question to its world's view.

pub mod bottleneck;
mod capture;
pub mod columns;
mod memory;
pub mod mesh;
pub mod out;
pub mod registered;
pub mod request;
pub mod runner;
mod text;

use std::path::Path;

use netsim::mesh::MeshScenario;
use netsim::worlds::World;
use netsim::{Detail, Scenario};

use crate::progress::{Counting, Progress};
use crate::stop::Stop;

pub use columns::NO_CC_PARAMS;
pub use out::Tables;
pub use request::Request;
use runner::to_json;
pub use runner::{spelled, warning_lines, Run};

type Error = Box<dyn std::error::Error>;

/// The scenario text a preset name or a file names, and where it came from.
pub fn scenario_text(preset: Option<&str>, path: Option<&Path>) -> Result<Option<(String, String)>, Error> {
    if let Some(name) = preset {
        let text = netsim::mesh::presets::text(name)
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
    Mesh(Box<MeshScenario>, Vec<Run<MeshScenario>>),
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

    /// The runs' table, as `coapcc sim` prints it: each world's own.
    pub fn table(&self) -> String {
        match self {
            Runs::Bottleneck(base, runs) => bottleneck::table(base, runs),
            Runs::Mesh(base, runs) => mesh::table(base, runs),
            Runs::Registered(world, runs) => registered::table(*world, runs),
        }
    }

    /// Writes summary.json and the CSV tables into `dir` (nodes.csv too for a mesh).
    pub fn write_out(&self, dir: &Path, tables: Tables) -> Result<(), Error> {
        match self {
            Runs::Bottleneck(_, runs) => bottleneck::write_out(dir, runs, tables),
            Runs::Mesh(_, runs) => mesh::write_out(dir, runs, tables),
            Runs::Registered(world, runs) => registered::write_out(*world, dir, runs, tables),
        }
    }

    /// An [`crate::Incomplete`] error if `stop` cut the runs short (`asked` algorithms were asked
    /// for), a replication was truncated or every exchange of a run failed.
    pub fn check(&self, stop: &Stop, asked: usize) -> Result<(), Error> {
        match self {
            Runs::Bottleneck(_, runs) => bottleneck::check(stop, runs, asked),
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
    let (base, runs, asked) = bottleneck::run(req, stop, progress)?;
    Ok((Runs::Bottleneck(Box::new(base), runs), asked))
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
