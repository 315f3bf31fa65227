//! `sim`: one scenario, one or several algorithms, every replication; the runner the
//! command line's `coapcc sim` and the Python package's `coapcc.sim` share, the memory estimate
//! that refuses a run the machine cannot hold, and the CSV tables `--out` writes.

use std::fmt::Display;
use std::path::Path;

use netsim::lln::LlnScenario;
use netsim::loss::ErrorProfile;
use netsim::{run_rep_with, Detail, RepResult, Scenario, Summary, Transport, WorkloadKind};
use rayon::prelude::*;
use serde::Serialize;

use crate::progress::{Counting, Progress};
use crate::stop::Stop;
use crate::wall::Stopwatch;

type Error = Box<dyn std::error::Error>;

/// What a simulation asks for: a scenario and every option a caller may leave to it (unset:
/// the scenario's value; no scenario: the `thesis` preset).
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// The scenario: TOML text and where it came from (for errors); `None`: the thesis preset.
    pub text: Option<(String, String)>,
    /// Algorithms, `name[:key=value,...]`, compared on the same scenario and seeds; empty: the
    /// scenario's own (a mesh preset's list, or its `cc`).
    pub cc: Vec<String>,
    /// Clients (the bottleneck).
    pub clients: Option<u32>,
    /// Both bottleneck directions' buffers, bytes.
    pub buffer: Option<u64>,
    /// The bottleneck's workload.
    pub workload: Option<WorkloadKind>,
    /// The bottleneck's link-error profile.
    pub errors: Option<ErrorProfile>,
    /// Replications.
    pub reps: Option<u32>,
    /// Master seed.
    pub seed: Option<u64>,
    /// Worker threads (default: all cores); results do not depend on it.
    pub threads: Option<usize>,
    /// Simulated seconds per replication (a mesh scenario).
    pub duration: Option<f64>,
    /// Keep every exchange's record (for [`Runs::write_out`]'s exchanges.csv and rto.csv).
    pub detail: Detail,
    /// Run even if the memory estimate exceeds what the machine has available.
    pub ignore_memory: bool,
}

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
}

impl Runs {
    /// One run's object, or `{"runs": [...]}` for several: what `sim --json` prints.
    pub fn to_json(&self) -> Result<serde_json::Value, Error> {
        match self {
            Runs::Bottleneck(_, runs) => to_json(runs),
            Runs::Mesh(_, runs) => to_json(runs),
        }
    }

    /// The summaries' warnings, a line each.
    pub fn warning_lines(&self) -> String {
        match self {
            Runs::Bottleneck(_, runs) => warning_lines(runs.iter().map(|r| (r.scenario.stack(), &r.summary))),
            Runs::Mesh(_, runs) => warning_lines(runs.iter().map(|r| (crate::sim_mesh::algorithm(r), &r.summary))),
        }
    }

    /// Writes summary.json and the CSV tables into `dir` (nodes.csv too for a mesh).
    pub fn write_out(&self, dir: &Path, tables: Tables) -> Result<(), Error> {
        match self {
            Runs::Bottleneck(_, runs) => write_out(dir, runs, tables),
            Runs::Mesh(_, runs) => crate::sim_mesh::write_out(dir, runs, tables),
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
            Runs::Mesh(_, runs) => crate::sim_mesh::check(stop, runs, asked),
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
            "mesh" => return crate::sim_mesh::run(req, t, origin, stop, progress),
            _ => {
                return Err(format!(
                    "{origin}: a {} scenario (env = \"{}\") runs in sweeps (`coapcc sweep`); sim runs the \
                     wired bottleneck and the low-power mesh",
                    world.title(),
                    world.env()
                )
                .into())
            }
        }
    }
    let base = scenario(req)?;
    let specs = if req.cc.is_empty() { vec![base.stack()] } else { req.cc.clone() };
    let scenarios: Vec<Scenario> =
        specs.iter().map(|spec| base.with_stack(spec)?.resolve()).collect::<Result<_, _>>()?;
    let workers = Workers::new(req.threads)?;
    if !req.ignore_memory {
        check_memory(&scenarios, workers.threads(), req.detail)?;
    }
    let total: u64 = scenarios
        .iter()
        .map(|s| crate::progress::units(netsim::worlds::WorldScenario::work_per_rep(s), s.reps).0)
        .sum();
    let items: Vec<(&Scenario, Transport)> =
        scenarios.iter().map(|s| Ok((s, s.transport()?))).collect::<Result<_, Error>>()?;
    let detail = req.detail;
    let runs = run_all(
        &workers,
        progress(total, Counting::Exchanges),
        stop,
        &items,
        |(s, _)| ((*s).clone(), s.reps),
        |(s, transport), r, told| run_rep_with(s, transport, r, told, detail),
    )?;
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
    Ok(Outcome { summary: runs.to_json()?, tables: crate::tables::of(&runs), incomplete })
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

/// What a bottleneck client costs while its replication runs (endpoint, controller, workload,
/// the exchanges it finished in the last 247 s, its share of the event queue and of the server's
/// deduplication cache): measured as peak RSS, about 2.0 KB at 10,000 and 20,000 clients behind
/// a bottleneck scaled ×10 and ×20, and at 1,000,000 (docs/performance.md); counted
/// generously, as a refusal costs less than a machine driven into swap.
const LIVE_BYTES_PER_CLIENT: u64 = 6_000;
/// What a replication keeps of its RTTs until the summary: 8 bytes each up to netsim's exact cap,
/// then a sketch of at most about 240 KB (counted 256 KB).
const RTT_BYTES: u64 = 8;
const SKETCH_BYTES: u64 = 256 << 10;
/// With `--out`, every exchange's record.
const RECORD_BYTES_PER_EXCHANGE: u64 = 180;
const BASE_BYTES: u64 = 32 << 20;

/// What one replication of `s` keeps of its exchanges until the summary, bytes.
fn bytes_kept(s: &Scenario, detail: Detail) -> u64 {
    let exchanges = s.clients as u64 * s.exchanges as u64;
    match detail {
        Detail::Summary if exchanges > runstats::EXACT_CAP as u64 => {
            runstats::EXACT_CAP as u64 * RTT_BYTES + SKETCH_BYTES
        }
        Detail::Summary => exchanges * RTT_BYTES,
        Detail::Exchanges => exchanges * RECORD_BYTES_PER_EXCHANGE,
    }
}

/// The memory a run of `scenarios` needs, estimated: what every replication keeps of its
/// exchanges (`detail`), and the live state of `threads` replications at once.
pub(crate) fn memory_estimate(scenarios: &[Scenario], threads: usize, detail: Detail) -> u64 {
    let records: u64 = scenarios.iter().map(|s| s.reps as u64 * bytes_kept(s, detail)).sum();
    let live = scenarios
        .iter()
        .map(|s| s.clients as u64 * LIVE_BYTES_PER_CLIENT * (s.reps as u64).min(threads as u64))
        .max()
        .unwrap_or(0);
    BASE_BYTES + records + live
}

/// The memory the machine has available (Linux's MemAvailable), if it says.
fn memory_available() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Stops, with the estimate, a run that would not fit in the machine's available memory.
fn check_memory(scenarios: &[Scenario], threads: usize, detail: Detail) -> Result<(), Error> {
    let need = memory_estimate(scenarios, threads, detail);
    let Some(have) = memory_available() else { return Ok(()) };
    if need <= have {
        return Ok(());
    }
    let gb = |b: u64| b as f64 / (1u64 << 30) as f64;
    let s = &scenarios[0];
    Err(format!(
        "this run would need about {:.1} GB ({} clients × {} exchanges × {} replication(s) × {} algorithm(s): about {} KB per \
         client while its replication runs, {} replication(s) at once, and {} MB a replication keeps for the summary), but \
         the machine has {:.1} GB available. Use fewer clients, exchanges or replications, or fewer --threads; \
         --ignore-memory runs it anyway",
        gb(need),
        s.clients,
        s.exchanges,
        s.reps,
        scenarios.len(),
        LIVE_BYTES_PER_CLIENT / 1000,
        (s.reps as usize).min(threads),
        bytes_kept(s, detail) >> 20,
        gb(have)
    )
    .into())
}

/// One algorithm's run over a scenario of kind `S` (bottleneck or mesh): what `--json` prints.
#[derive(Debug, Serialize)]
pub struct Run<S> {
    /// The statistics over the replications.
    #[serde(flatten)]
    pub summary: Summary,
    /// Wall time, s.
    pub wall_s: f64,
    /// Events per wall second.
    pub events_per_s: f64,
    /// The resolved scenario.
    pub scenario: S,
    /// Every replication's results.
    #[serde(skip)]
    pub reps: Vec<RepResult>,
}

/// Where replications run: on the calling thread when `--threads 1` asks for one worker (no
/// pool thread is started: an idle rayon worker spins for a while before it sleeps, and on a
/// single core that spinning takes time from the run), otherwise on a rayon pool.
#[derive(Debug)]
pub(crate) enum Workers {
    /// The calling thread.
    Here,
    /// A pool (default: one thread per core).
    Pool(rayon::ThreadPool),
}

impl Workers {
    /// The workers `--threads` asks for.
    pub(crate) fn new(threads: Option<usize>) -> Result<Self, Error> {
        match threads {
            Some(0) => Err(crate::usage("--threads must be at least 1")),
            Some(1) => Ok(Workers::Here),
            Some(t) => Ok(Workers::Pool(rayon::ThreadPoolBuilder::new().num_threads(t).build()?)),
            None => Ok(Workers::Pool(rayon::ThreadPoolBuilder::new().build()?)),
        }
    }

    /// Replications that run at once.
    pub(crate) fn threads(&self) -> usize {
        match self {
            Workers::Here => 1,
            Workers::Pool(pool) => pool.current_num_threads(),
        }
    }
}

/// Runs replications `0..reps` of `scenario` on `workers` with `rep`, timed, and summarises them;
/// once `stop` is set, the replications not started yet are left out.
fn run_reps<S>(
    workers: &Workers,
    scenario: S,
    reps: u32,
    stop: &Stop,
    rep: impl Fn(u32) -> RepResult + Sync,
) -> Run<S> {
    let watch = Stopwatch::start();
    let one = |r: u32| (!stop.is_set()).then(|| rep(r));
    let reps: Vec<RepResult> = match workers {
        // in order, on this thread; the results are the same on any number of threads
        Workers::Here => (0..reps).map_while(one).collect(),
        Workers::Pool(pool) => pool.install(|| (0..reps).into_par_iter().filter_map(one).collect()),
    };
    let wall_s = watch.seconds();
    let summary = Summary::new(&reps);
    let events_per_s = if wall_s > 0.0 { summary.events as f64 / wall_s } else { 0.0 };
    Run { summary, wall_s, events_per_s, scenario, reps }
}

/// Runs the replications of every one of `items` (its scenario and replication count from
/// `scenario`, a replication from `rep`) on `workers`, telling `progress`, if any, and finishing
/// its display at the end. Once `stop` is set no replication starts: the runs hold those that
/// finished, a run none of whose replications started is left out, and none at all is an
/// [`crate::Incomplete`] error.
pub(crate) fn run_all<T: Sync, S>(
    workers: &Workers,
    progress: Option<Progress>,
    stop: &Stop,
    items: &[T],
    scenario: impl Fn(&T) -> (S, u32),
    rep: impl Fn(&T, u32, Option<&dyn netsim::Progress>) -> RepResult + Sync,
) -> Result<Vec<Run<S>>, Error> {
    let told = progress.as_ref().map(|p| p as &dyn netsim::Progress);
    let runs = items
        .iter()
        .map(|item| {
            let (s, reps) = scenario(item);
            run_reps(workers, s, reps, stop, |r| rep(item, r, told))
        })
        .filter(|r| !r.reps.is_empty())
        .collect::<Vec<_>>();
    if let Some(progress) = progress {
        progress.finish();
    }
    if runs.is_empty() {
        return Err(Box::new(crate::Incomplete("interrupted before a replication finished: nothing to report".into())));
    }
    Ok(runs)
}

/// One run's object, or `{"runs": [...]}` for several.
pub(crate) fn to_json<S: Serialize>(runs: &[Run<S>]) -> Result<serde_json::Value, Error> {
    Ok(if runs.len() == 1 { serde_json::to_value(&runs[0])? } else { serde_json::json!({ "runs": runs }) })
}

/// Every file `sim --out` writes (a mesh run: all; a bottleneck run: all but nodes.csv).
const OUT_FILES: [&str; 5] = ["summary.json", "clients.csv", "exchanges.csv", "rto.csv", "nodes.csv"];

/// Creates `dir`, removes what an earlier run wrote there (so that no stale table stays beside
/// this run's), and writes `summary.json` (what `--json` prints) into it.
pub(crate) fn write_summary<S: Serialize>(dir: &Path, runs: &[Run<S>]) -> Result<(), Error> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    for f in OUT_FILES {
        match std::fs::remove_file(dir.join(f)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(format!("cannot replace {}: {e}", dir.join(f).display()).into())
            }
            _ => {}
        }
    }
    std::fs::write(dir.join("summary.json"), serde_json::to_string_pretty(&to_json(runs)?)? + "\n")?;
    Ok(())
}

/// A value's name as scenario files and JSON spell it (`continuous`, `none`).
pub fn spelled<T: Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        _ => "?".into(),
    }
}

/// The summaries' warnings ([`netsim::Summary::warnings_of`]), a `WARNING:` line each after a
/// blank line, named by algorithm; empty when there are none.
pub fn warning_lines<'a, N: Display>(runs: impl Iterator<Item = (N, &'a netsim::Summary)>) -> String {
    let lines: Vec<String> =
        runs.flat_map(|(cc, s)| s.warnings.iter().map(move |w| format!("WARNING: {cc}: {w}\n"))).collect();
    if lines.is_empty() {
        String::new()
    } else {
        format!("\n{}", lines.concat())
    }
}

/// An [`crate::Incomplete`] error if `stop` cut the runs short: `runs` gives each reported run's
/// algorithm, its finished and its asked replications; `asked` is how many runs were asked for.
pub(crate) fn interrupted<N: Display>(
    stop: &Stop,
    runs: impl Iterator<Item = (N, usize, u32)>,
    asked: usize,
) -> Result<(), Error> {
    if !stop.is_set() {
        return Ok(());
    }
    let runs: Vec<(N, usize, u32)> = runs.collect();
    if runs.len() == asked && runs.iter().all(|&(_, done, of)| done == of as usize) {
        return Ok(()); // stopped after the last replication had started
    }
    let mut told: Vec<String> =
        runs.iter().map(|(cc, done, of)| format!("{cc}: {done} of {of} replication(s)")).collect();
    if told.len() < asked {
        told.push(format!("{} algorithm(s) not started", asked - told.len()));
    }
    Err(Box::new(crate::Incomplete(format!(
        "interrupted: the results are those of the replications that finished ({})",
        told.join("; ")
    ))))
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

/// `who`'s `cut` of `reps` replications cut at `key` = `limit` s, in one sentence (a run of either
/// kind, or a sweep's cell).
pub(crate) fn cut_short(who: &str, cut: u64, reps: impl Display, key: &str, limit: impl Display) -> String {
    format!("{who}: {cut} of {reps} replication(s) cut at {key} = {limit} s before every client finished")
}

/// `who`'s run in one sentence if every one of its exchanges failed (it measured nothing: exit
/// status 3, as `load`'s when no exchange was answered), else `None`.
pub(crate) fn all_failed(who: &str, s: &Summary) -> Option<String> {
    (s.exchanges > 0 && s.failed_exchanges == s.exchanges)
        .then(|| format!("{who}: every exchange ({}) failed: the run measured nothing", s.exchanges))
}

/// An [`crate::Incomplete`] error naming the runs `cut` short (their sentences), if any.
pub(crate) fn check_complete(cut: Vec<String>) -> Result<(), Error> {
    if cut.is_empty() {
        Ok(())
    } else {
        Err(Box::new(crate::Incomplete(cut.join("; "))))
    }
}

/// Nanoseconds as seconds with 9 decimals: the time format of every CSV file.
pub(crate) fn secs(ns: u64) -> String {
    format!("{:.9}", ns as f64 / 1e9)
}

/// A resolved scenario's stack ([`Scenario::stack`]) from its JSON, of either world: `tcp[:...]`
/// for a bottleneck over TCP, else its `cc`.
pub(crate) fn stack_of(scenario: &serde_json::Value) -> String {
    if scenario["transport"] == "tcp" {
        serde_json::from_value::<netsim::tcp::TcpParams>(scenario["tcp"].clone()).map_or("tcp".into(), |p| p.to_spec())
    } else {
        scenario["cc"].as_str().unwrap_or_default().to_string()
    }
}

/// The `cc` and `cc_params` columns of every CSV, from a resolved spec: the algorithm's name
/// (`default`, `tcp`), and the parameters that differ from its defaults as `key=value,...` in
/// the algorithm's parameter order, e.g. `max_retransmit=20`, or [`NO_CC_PARAMS`] when none do.
pub(crate) fn cc_columns(spec: &str) -> [String; 2] {
    match spec.split_once(':') {
        Some((name, params)) if !params.is_empty() => [name.to_string(), params.to_string()],
        _ => [spec.split(':').next().unwrap_or(spec).to_string(), NO_CC_PARAMS.to_string()],
    }
}

/// `cc_params` of an algorithm run with its defaults. Never empty: pandas, polars and R read an
/// empty field as missing, and a `groupby(["cc", "cc_params"])` then drops those rows.
pub const NO_CC_PARAMS: &str = "defaults";

/// The columns of `exchanges.csv` after `cc`, `cc_params`.
pub(crate) const EXCHANGE_COLUMNS: [&str; 8] =
    ["rep", "client", "exchange", "start_s", "rtt_s", "retransmissions", "duplicates", "expired_rtos"];

/// Writes an exchange's row of `exchanges.csv` and its rows of `rto.csv` after the `cc` columns,
/// its client named `client`.
pub(crate) fn write_exchange<W: std::io::Write>(
    exchanges: &mut csv::Writer<W>,
    rto: &mut csv::Writer<W>,
    cc: &[String; 2],
    rep: u32,
    client: u32,
    e: &netsim::ExchangeRecord,
) -> csv::Result<()> {
    exchanges.write_record(cc.iter().cloned().chain([
        rep.to_string(),
        client.to_string(),
        e.index.to_string(),
        secs(e.start_ns),
        e.rtt_ns.map(secs).unwrap_or_default(),
        e.retransmissions.to_string(),
        e.duplicates.to_string(),
        e.expired_rtos_ns.len().to_string(),
    ]))?;
    for row in rto_rows(rep, client, e) {
        rto.write_record(cc.iter().cloned().chain(row))?;
    }
    Ok(())
}

/// The columns of `rto.csv` after `cc`, `cc_params`: one row per RTO armed for an exchange.
pub(crate) const RTO_COLUMNS: [&str; 6] = ["rep", "client", "exchange", "armed_s", "rto_s", "expired"];

/// An exchange's rows of `rto.csv` (after `cc`, `cc_params`), its client named `client`: each
/// RTO armed when the previous one expired, the last one `expired = false` if the exchange
/// ended while it ran.
pub(crate) fn rto_rows(rep: u32, client: u32, e: &netsim::ExchangeRecord) -> Vec<[String; 6]> {
    armed_rtos(e)
        .map(|(at, t, expired)| {
            [rep.to_string(), client.to_string(), e.index.to_string(), secs(at), secs(t), expired.to_string()]
        })
        .collect()
}

/// Every RTO armed for an exchange, as (armed at, RTO, expired), ns: each armed when the
/// previous one expired, the last one unexpired if the exchange ended while it ran.
pub(crate) fn armed_rtos(e: &netsim::ExchangeRecord) -> impl Iterator<Item = (u64, u64, bool)> + '_ {
    let armed = e.expired_rtos_ns.iter().map(|&t| (t, true)).chain(e.last_rto_ns.map(|t| (t, false)));
    armed.scan(e.start_ns, |at, (t, expired)| {
        let row = (*at, t, expired);
        *at += t;
        Some(row)
    })
}

/// The per-client tables' columns after their leading ones (`sim --out`'s `cc`, a sweep's
/// parameters) and [`client_row`]'s values for them.
pub(crate) const CLIENT_COLUMNS: [&str; 8] =
    ["rep", "client", "fct_s", "exchanges", "failed", "retransmissions", "duplicates", "max_expired_rto_s"];

/// One client's values of [`CLIENT_COLUMNS`], the client named `client`.
pub(crate) fn client_row(rep: u32, client: u32, c: &netsim::ClientRecord) -> [String; 8] {
    [
        rep.to_string(),
        client.to_string(),
        c.fct_ns.map(secs).unwrap_or_default(),
        c.exchanges.to_string(),
        c.failed.to_string(),
        c.retransmissions.to_string(),
        c.duplicates.to_string(),
        secs(c.max_expired_rto_ns),
    ]
}

/// The CSV tables `--out` writes beside summary.json (`--tables`): every one by default;
/// exchanges.csv and rto.csv, by far the largest (one row per exchange, one per armed timer),
/// only when asked for, so a run without them keeps no per-exchange record at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tables {
    /// clients.csv: one row per client and replication.
    pub clients: bool,
    /// exchanges.csv: one row per exchange.
    pub exchanges: bool,
    /// rto.csv: one row per armed retransmission timer.
    pub rto: bool,
    /// nodes.csv (a mesh): one row per mote and replication.
    pub nodes: bool,
}

impl Tables {
    /// Every table.
    pub const ALL: Tables = Tables { clients: true, exchanges: true, rto: true, nodes: true };

    /// `clients,exchanges,rto,nodes` (any of them, comma-separated), `all` or `none`.
    pub fn parse(s: &str) -> Result<Tables, String> {
        let mut t = Tables { clients: false, exchanges: false, rto: false, nodes: false };
        for name in s.split(',').map(str::trim) {
            match name {
                "all" => t = Tables::ALL,
                "none" => {}
                "clients" => t.clients = true,
                "exchanges" => t.exchanges = true,
                "rto" => t.rto = true,
                "nodes" => t.nodes = true,
                other => {
                    return Err(format!(
                        "unknown table '{other}': the tables are clients, exchanges, rto and nodes (or all, none)"
                    ))
                }
            }
        }
        Ok(t)
    }

    /// Whether the run must keep every exchange's record (for exchanges.csv or rto.csv).
    pub fn per_exchange(self) -> bool {
        self.exchanges || self.rto
    }

    /// A CSV writer for `name` in `dir` if this table is chosen, else one that writes nowhere; its
    /// header (`cc`, `cc_params`, then `columns`) written.
    pub(crate) fn writer(
        chosen: bool,
        dir: &Path,
        name: &str,
        columns: &[&str],
    ) -> Result<csv::Writer<Box<dyn std::io::Write>>, Error> {
        let out: Box<dyn std::io::Write> = if chosen {
            let path = dir.join(name);
            Box::new(std::io::BufWriter::new(
                std::fs::File::create(&path).map_err(|e| format!("cannot create {}: {e}", path.display()))?,
            ))
        } else {
            // (write_summary removed an earlier run's file of that name)
            Box::new(std::io::sink())
        };
        let mut w = csv::Writer::from_writer(out);
        w.write_record(["cc", "cc_params"].iter().chain(columns))?;
        Ok(w)
    }
}

pub(crate) fn write_out(dir: &Path, runs: &[Run<Scenario>], tables: Tables) -> Result<(), Error> {
    write_summary(dir, runs)?;
    let mut clients = Tables::writer(tables.clients, dir, "clients.csv", &CLIENT_COLUMNS)?;
    let mut exchanges = Tables::writer(tables.exchanges, dir, "exchanges.csv", &EXCHANGE_COLUMNS)?;
    let mut rto = Tables::writer(tables.rto, dir, "rto.csv", &RTO_COLUMNS)?;
    for r in runs {
        let cc = cc_columns(&r.scenario.stack());
        for rep in &r.reps {
            for c in &rep.clients {
                clients.write_record(cc.iter().cloned().chain(client_row(rep.rep, c.client, c)))?;
            }
            for e in &rep.exchanges {
                write_exchange(&mut exchanges, &mut rto, &cc, rep.rep, e.client, e)?;
            }
        }
    }
    clients.flush()?;
    exchanges.flush()?;
    rto.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cc_columns_split_a_spec_and_name_the_defaults() {
        assert_eq!(cc_columns("default:max_retransmit=20"), ["default", "max_retransmit=20"]);
        assert_eq!(cc_columns("fasor:max_retransmit=20,dither=false"), ["fasor", "max_retransmit=20,dither=false"]);
        // no parameter off its default: a word, never an empty field (read as missing)
        assert_eq!(cc_columns("tcp"), ["tcp", "defaults"]);
        assert_eq!(cc_columns("cocoa:"), ["cocoa", "defaults"]);
    }
}
