//! Replications on worker threads, for either world: each algorithm's [`Run`], the workers, the
//! stop, and the sentences that say a run is incomplete.

use std::fmt::Display;

use netsim::{RepResult, Summary};
use rayon::prelude::*;
use serde::Serialize;

use crate::progress::Progress;
use crate::stop::Stop;
use crate::wall::Stopwatch;

type Error = Box<dyn std::error::Error>;

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

/// A value's name as scenario files and JSON spell it (`continuous`, `none`).
pub use netsim::scenario::spelled;

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
