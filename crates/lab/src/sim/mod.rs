//! `sim`: one scenario, one or several algorithms, every replication; the runner the
//! command line's `coapcc sim` and the Python package's `coapcc.sim` share.
//!
//! One view per world, each owning its run, its check, its files and its table:
//! [`bottleneck`] (the wired reference bottleneck, with the memory estimate that refuses a run
//! the machine cannot hold), [`mesh`] (a mesh scenario), [`registered`] (any world another crate
//! registered). Below them, shared: [`request`] (what is asked), [`runner`] (replications on
//! worker threads), [`columns`] (the CSV tables' columns), [`out`] (the files `--out` writes),
//! `capture` (`--pcap`), `text` (what the tables print alike). Here the entry, which finds the
//! scenario's world's view, and [`WorldRuns`], what every view's runs answer.

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

use netsim::worlds::World;
use netsim::{Detail, Scenario};

use crate::progress::{Counting, Progress};
use crate::stop::Stop;

pub use columns::NO_CC_PARAMS;
pub use out::Tables;
pub use request::Request;
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

/// The runs of a simulation, as their world's view holds them (with the scenario the options
/// described, before each algorithm's resolution): every question about them is the view's.
pub trait WorldRuns: std::fmt::Debug {
    /// One run's object, or `{"runs": [...]}` for several: what `sim --json` prints.
    fn to_json(&self) -> Result<serde_json::Value, Error>;
    /// The summaries' warnings, a line each.
    fn warning_lines(&self) -> String;
    /// The tables `--out` writes, as columns ([`crate::tables`]).
    fn tables(&self) -> Vec<(&'static str, crate::tables::Table)>;
    /// The runs' table, as `coapcc sim` prints it: each world's own.
    fn table(&self) -> String;
    /// Writes summary.json and the CSV tables into `dir` (a world's own tables too).
    fn write_out(&self, dir: &Path, tables: Tables) -> Result<(), Error>;
    /// An [`crate::Incomplete`] error if `stop` cut the runs short (`asked` algorithms were
    /// asked for), a replication was truncated or every exchange of a run failed.
    fn check(&self, stop: &Stop, asked: usize) -> Result<(), Error>;
}

/// The runs of a simulation ([`WorldRuns`]).
pub type Runs = Box<dyn WorldRuns>;

/// The progress display `run`'s caller gives, for a total and what it counts.
pub type ProgressFn<'a> = Box<dyn FnOnce(u64, Counting) -> Option<Progress> + 'a>;

/// A world's view in `sim`: it runs a request over the world's scenario into its [`WorldRuns`].
trait View: Sync {
    /// Runs every algorithm `req` asks for over its scenario (`req.text`; none: the view's default
    /// scenario) of `world`; the runs and how many algorithms were asked for.
    fn run(
        &self,
        world: &'static dyn World,
        req: &Request,
        stop: &Stop,
        progress: ProgressFn<'_>,
    ) -> Result<(Runs, usize), Error>;
}

/// The worlds whose views have options and tables of their own (`--clients`; a mesh's
/// nodes.csv), with those views; any other world is shown by [`registered`]'s.
static VIEWS: [(&dyn World, &dyn View); 2] =
    [(&netsim::worlds::Bottleneck, &bottleneck::View), (&netsim::worlds::Mesh, &mesh::View)];

/// Runs what `req` asks for until `stop` is set (then the runs hold the replications that
/// finished); `progress(total, counting)` gives the display to tell, if any (it is finished at
/// the end). The scenario's world's view runs it. Returns the runs and how many algorithms were
/// asked for.
pub fn run(
    req: &Request,
    stop: &Stop,
    progress: impl FnOnce(u64, Counting) -> Option<Progress>,
) -> Result<(Runs, usize), Error> {
    let world = match &req.text {
        Some((t, origin)) => netsim::worlds::of_text(t).map_err(|e| format!("{origin}: {e}"))?,
        None => &netsim::worlds::Bottleneck, // the thesis preset's
    };
    let view = VIEWS.iter().find(|(w, _)| w.env() == world.env()).map_or(&registered::View as &dyn View, |v| v.1);
    view.run(world, req, stop, Box::new(progress))
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
