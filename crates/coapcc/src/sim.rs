//! `coapcc sim`: the reference testbed in virtual time.

use std::fmt::Display;
use std::path::{Path, PathBuf};

use netsim::loss::ErrorProfile;
use netsim::{run_rep_with, Detail, RepResult, Scenario, Summary, Transport, WorkloadKind};
use rayon::prelude::*;
use serde::Serialize;

use crate::progress::{Counting, Progress};
use crate::stop::Stop;
use crate::wall::Stopwatch;

/// Arguments of `coapcc sim`. Unset options take the scenario file's values, and those default
/// to the `thesis` preset (docs/scenario.md).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Congestion control, `NAME[:key=value,...]` (see `coapcc algorithms`). Repeat to compare
    /// algorithms on the same scenario and seeds. [default: the scenario's `cc`; thesis: default]
    #[arg(long = "cc", value_name = "SPEC")]
    pub(crate) cc: Vec<String>,
    /// Number of clients. [default: the scenario's; thesis: 50]
    #[arg(long, value_name = "N", value_parser = crate::args::count, allow_negative_numbers = true)]
    pub(crate) clients: Option<u32>,
    /// Buffer in front of both bottleneck directions, bytes (thesis: 2500; 1410000 is
    /// "infinite"; `infinite` is accepted for it).
    #[arg(long, value_name = "BYTES", value_parser = parse_buffer, allow_negative_numbers = true)]
    pub(crate) buffer: Option<u64>,
    /// Workload: continuous or random.
    #[arg(long, value_parser = ["continuous", "random"])]
    pub(crate) workload: Option<String>,
    /// Link-error profile of both directions: none, low (2 %), medium (10 %), high (18 %).
    #[arg(long, value_parser = ["none", "low", "medium", "high"])]
    pub(crate) errors: Option<String>,
    /// Replications (each with its own seed stream). [default: the scenario's; thesis: 1]
    #[arg(long, value_name = "R", value_parser = crate::args::count, allow_negative_numbers = true)]
    pub(crate) reps: Option<u32>,
    /// Master seed. [default: the scenario's; thesis: 1]
    #[arg(long, value_name = "S", value_parser = crate::args::seed, allow_negative_numbers = true)]
    pub(crate) seed: Option<u64>,
    /// Worker threads for replications (default: all cores). Results do not depend on it.
    #[arg(long, value_name = "T", value_parser = crate::args::threads, allow_negative_numbers = true)]
    pub(crate) threads: Option<usize>,
    /// A TOML scenario (every key with its unit and default: docs/scenario.md, and for mesh
    /// scenarios, `env = "lln"`, docs/mesh.md; the presets written out: scenarios/).
    #[arg(long, value_name = "FILE", conflicts_with = "preset")]
    pub(crate) scenario: Option<PathBuf>,
    /// A named preset (`coapcc presets` lists them), e.g. `nitk-gst-cooja`; without --cc a
    /// mesh preset runs every algorithm its source compared.
    #[arg(long, value_name = "NAME")]
    pub(crate) preset: Option<String>,
    /// Simulated seconds per replication of a mesh scenario (shortens or lengthens its run).
    #[arg(long, value_name = "S", value_parser = crate::args::positive_secs, allow_negative_numbers = true)]
    pub(crate) duration: Option<f64>,
    /// Print one JSON object on stdout instead of a table (with several --cc: {"runs": [...]}).
    #[arg(long)]
    pub(crate) json: bool,
    /// Write summary.json, clients.csv, exchanges.csv and rto.csv into this directory.
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    /// Run even if the memory the run is estimated to need exceeds what the machine has available.
    #[arg(long)]
    pub(crate) ignore_memory: bool,
    /// No progress display on stderr (errors and warnings still go there). The run still counts
    /// its progress, so it takes the same steps as one that shows it.
    #[arg(long, short = 'q')]
    pub(crate) quiet: bool,
    /// A library caller's scenario text and where it came from (instead of --scenario/--preset).
    #[arg(skip)]
    pub(crate) text: Option<(String, String)>,
    /// A library caller's run: nothing on stdout or stderr, only the files of `out`.
    #[arg(skip)]
    pub(crate) silent: bool,
}

impl Args {
    /// The progress of a run of `total` units counted as `counting`: none for a library caller,
    /// never shown with `--quiet`.
    pub(crate) fn progress(&self, total: u64, counting: Counting) -> Option<Progress> {
        (!self.silent).then(|| {
            if self.quiet {
                Progress::hidden(total, counting)
            } else {
                Progress::start(total, counting)
            }
        })
    }
}

/// `coapcc sim` for a library caller (the Python package): what the options say, with the
/// scenario given as TOML `text` (and where it came from, for errors); nothing printed, the
/// results written into `out` as `--out` writes them (summary.json is what `--json` prints).
#[derive(Debug, Clone, Default)]
pub struct LibraryRun {
    /// The scenario: TOML text and its origin; `None`: the thesis preset.
    pub text: Option<(String, String)>,
    /// `--cc`, repeatable.
    pub cc: Vec<String>,
    /// `--reps`.
    pub reps: Option<u32>,
    /// `--seed`.
    pub seed: Option<u64>,
    /// `--threads`.
    pub threads: Option<usize>,
    /// `--duration` (mesh).
    pub duration: Option<f64>,
    /// `--buffer` (both directions of the bottleneck).
    pub buffer: Option<u64>,
    /// Set to stop early: replications not started yet are not run ([`Stop`]).
    pub stop: Stop,
}

/// Runs `run` into `out`. `Ok(Some(message))`: the results are there but incomplete (a
/// replication truncated).
pub fn run_library(run: LibraryRun, out: PathBuf) -> Result<Option<String>, Error> {
    let args = Args {
        cc: run.cc,
        clients: None,
        buffer: run.buffer,
        workload: None,
        errors: None,
        reps: run.reps,
        seed: run.seed,
        threads: run.threads,
        scenario: None,
        preset: None,
        duration: run.duration,
        json: false,
        ignore_memory: false,
        quiet: true,
        out: Some(out),
        text: run.text,
        silent: true,
    };
    match run_with(&args, &run.stop) {
        Ok(()) => Ok(None),
        Err(e) => match e.downcast::<crate::Incomplete>() {
            Ok(i) => Ok(Some(i.0)),
            Err(e) => Err(e),
        },
    }
}

pub fn parse_buffer(s: &str) -> Result<u64, String> {
    match s {
        "infinite" | "inf" => Ok(1_410_000),
        _ => s.parse().map_err(|_| format!("'{s}' is not a byte count (or `infinite`)")),
    }
}

type Error = Box<dyn std::error::Error>;

/// The scenario file's or preset's text and where it came from, if one was named.
fn scenario_text(args: &Args) -> Result<Option<(String, String)>, Error> {
    if let Some(t) = &args.text {
        return Ok(Some(t.clone()));
    }
    if let Some(name) = &args.preset {
        let text = netsim::lln::presets::text(name)
            .ok_or_else(|| format!("unknown preset '{name}' (`coapcc presets` lists them)"))?;
        return Ok(Some((text.to_string(), format!("preset {name}"))));
    }
    match &args.scenario {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            Ok(Some((text, path.display().to_string())))
        }
        None => Ok(None),
    }
}

/// The scenario the options describe, before resolution.
fn scenario(args: &Args, text: Option<(String, String)>) -> Result<Scenario, Error> {
    let mut s = match text {
        Some((text, origin)) => Scenario::from_toml(&text).map_err(|e| format!("{origin}: {e}"))?,
        None => Scenario::thesis(),
    };
    if args.duration.is_some() {
        return Err(crate::usage(
            "--duration applies to mesh scenarios (the bottleneck's clients run their exchanges)",
        ));
    }
    if let Some(v) = args.clients {
        s.clients = v;
    }
    if let Some(v) = args.buffer {
        s.uplink.buffer_bytes = v;
        s.downlink.buffer_bytes = v;
    }
    if let Some(w) = &args.workload {
        s.workload = if w == "random" { WorkloadKind::Random } else { WorkloadKind::Continuous };
    }
    if let Some(e) = &args.errors {
        s.errors = ErrorProfile::parse(e).ok_or("bad --errors")?;
    }
    if let Some(v) = args.reps {
        s.reps = v;
    }
    if let Some(v) = args.seed {
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
pub(crate) struct Run<S> {
    #[serde(flatten)]
    pub(crate) summary: Summary,
    pub(crate) wall_s: f64,
    pub(crate) events_per_s: f64,
    pub(crate) scenario: S,
    #[serde(skip)]
    pub(crate) reps: Vec<RepResult>,
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

/// Runs the command; Ctrl-C stops it early ([`Stop::on_ctrl_c`]).
pub fn run(args: &Args) -> Result<(), Error> {
    run_with(args, &Stop::on_ctrl_c())
}

/// Runs the command until `stop` is set: the results are then those of the replications that
/// finished, and the run is [`crate::Incomplete`].
fn run_with(args: &Args, stop: &Stop) -> Result<(), Error> {
    let text = scenario_text(args)?;
    if let Some((t, origin)) = &text {
        if netsim::lln::presets::mesh_env_of(t).map_err(|e| format!("{origin}: {e}"))? {
            return crate::sim_lln::run(args, t, origin, stop);
        }
    }
    let base = scenario(args, text)?;
    let specs = if args.cc.is_empty() { vec![base.cc.clone()] } else { args.cc.clone() };
    let scenarios: Vec<Scenario> =
        specs.iter().map(|cc| Scenario { cc: cc.clone(), ..base.clone() }.resolve()).collect::<Result<_, _>>()?;
    let workers = Workers::new(args.threads)?;
    // per-exchange records only for --out's exchanges.csv and rto.csv
    let detail = if args.out.is_some() { Detail::Exchanges } else { Detail::Summary };
    if !args.ignore_memory {
        check_memory(&scenarios, workers.threads(), detail)?;
    }
    let total: u64 = scenarios.iter().map(|s| s.reps as u64 * s.clients as u64 * s.exchanges as u64).sum();
    let items: Vec<(&Scenario, Transport)> =
        scenarios.iter().map(|s| Ok((s, s.transport()?))).collect::<Result<_, Error>>()?;
    let runs = run_all(
        &workers,
        args.progress(total, Counting::Exchanges),
        stop,
        &items,
        |(s, _)| ((*s).clone(), s.reps),
        |(s, transport), r, told| run_rep_with(s, transport, r, told, detail),
    )?;
    if let Some(dir) = &args.out {
        write_out(dir, &runs)?;
    }
    if !args.silent {
        if args.json {
            crate::stdout::json(&to_json(&runs)?)?;
            eprint!("{}", warning_lines(runs.iter().map(|r| (r.scenario.cc.as_str(), &r.summary))));
        } else {
            crate::stdout::write(&table(&base, &runs))?;
        }
    }
    interrupted(stop, runs.iter().map(|r| (r.scenario.cc.as_str(), r.reps.len(), r.scenario.reps)), specs.len())?;
    check_complete(&runs)
}

fn fmt_s(v: f64) -> String {
    if v.is_nan() {
        "-".into()
    } else {
        format!("{v:.2}")
    }
}

/// A value's name as scenario files and JSON spell it (`continuous`, `none`).
pub(crate) fn spelled<T: Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        _ => "?".into(),
    }
}

fn table(base: &Scenario, runs: &[Run<Scenario>]) -> String {
    use std::fmt::Write;
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
    let w = runs.iter().map(|r| r.scenario.cc.chars().count()).max().unwrap_or(0).max("algorithm".len());
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
            r.scenario.cc,
            fmt_s(m.fct_s.p10),
            fmt_s(m.fct_s.p50),
            fmt_s(m.fct_s.p90),
            fmt_s(m.fct_s.max),
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
    out += &warning_lines(runs.iter().map(|r| (r.scenario.cc.as_str(), &r.summary)));
    let events: u64 = runs.iter().map(|r| r.summary.events).sum();
    let wall: f64 = runs.iter().map(|r| r.wall_s).sum();
    let reps = if s.reps == 1 { String::new() } else { format!(", summed over the {} replications", s.reps) };
    let _ = writeln!(
        out,
        "\nFCT in seconds, over the clients that finished (no FCT: clients whose last exchange failed or that were\n\
         cut short); failed: exchanges without a response; dup/cli: median duplicate responses per client;\n\
         drops: packets lost in the bottleneck's buffers and to link errors{reps};\n\
         wasted: share of the downlink's busy time spent on duplicates."
    );
    let _ =
        writeln!(out, "{events} events in {wall:.2} s wall ({:.1} M events/s)", events as f64 / wall.max(1e-9) / 1e6);
    out
}

/// The summaries' warnings ([`netsim::Summary::warnings_of`]), a `WARNING:` line each after a
/// blank line, named by algorithm; empty when there are none.
pub(crate) fn warning_lines<'a>(runs: impl Iterator<Item = (&'a str, &'a netsim::Summary)>) -> String {
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
pub(crate) fn interrupted<'a>(
    stop: &Stop,
    runs: impl Iterator<Item = (&'a str, usize, u32)>,
    asked: usize,
) -> Result<(), Error> {
    if !stop.is_set() {
        return Ok(());
    }
    let runs: Vec<(&str, usize, u32)> = runs.collect();
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
fn truncations(runs: &[Run<Scenario>]) -> Vec<String> {
    runs.iter().filter(|r| r.summary.truncated_reps > 0).map(truncation).collect()
}

/// What a run's truncated replications mean, in one sentence.
fn truncation(r: &Run<Scenario>) -> String {
    let (s, cut) = (&r.scenario, r.summary.truncated_reps);
    cut_short(&s.cc, cut, s.reps, "max_time_s", s.max_time_s) + "; their unfinished clients have no FCT"
}

/// `who`'s `cut` of `reps` replications cut at `key` = `limit` s, in one sentence (a run of either
/// kind, or a sweep's cell).
pub(crate) fn cut_short(who: &str, cut: u64, reps: impl Display, key: &str, limit: impl Display) -> String {
    format!("{who}: {cut} of {reps} replication(s) cut at {key} = {limit} s before every client finished")
}

/// An [`crate::Incomplete`] error if a replication of `runs` was truncated.
pub(crate) fn check_complete(runs: &[Run<Scenario>]) -> Result<(), Error> {
    let cut = truncations(runs);
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
    let mut at = e.start_ns;
    let armed = e.expired_rtos_ns.iter().map(|&t| (t, true)).chain(e.last_rto_ns.map(|t| (t, false)));
    armed
        .map(|(t, expired)| {
            let row =
                [rep.to_string(), client.to_string(), e.index.to_string(), secs(at), secs(t), expired.to_string()];
            at += t;
            row
        })
        .collect()
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

fn write_out(dir: &Path, runs: &[Run<Scenario>]) -> Result<(), Error> {
    write_summary(dir, runs)?;
    let mut clients = csv::Writer::from_path(dir.join("clients.csv"))?;
    clients.write_record(["cc", "cc_params"].into_iter().chain(CLIENT_COLUMNS))?;
    let mut exchanges = csv::Writer::from_path(dir.join("exchanges.csv"))?;
    exchanges.write_record(["cc", "cc_params"].into_iter().chain(EXCHANGE_COLUMNS))?;
    let mut rto = csv::Writer::from_path(dir.join("rto.csv"))?;
    rto.write_record(["cc", "cc_params"].into_iter().chain(RTO_COLUMNS))?;
    for r in runs {
        let cc = cc_columns(&r.scenario.cc);
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
