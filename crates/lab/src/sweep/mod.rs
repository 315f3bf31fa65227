//! `coapcc sweep`, `coapcc merge`: cartesian products of scenarios, run on all cores,
//! resumable, shardable.
//!
//! A plan is TOML: `seed`, `reps`, `preset` (the scenario every cell starts from: `thesis`, the
//! default, or any name of `coapcc presets`, mesh presets included), an optional `[base]`
//! scenario table (any key of that scenario) and a `[matrix]` table whose values are lists.
//! Matrix keys are scenario keys, dotted for nested ones (`downlink.delay_ms`,
//! `radio.success_ratio_tx`), plus `buffer` (both directions' `buffer_bytes` of the bottleneck),
//! `stack` (what `sim --cc` lists: an algorithm over UDP or `tcp[:key=value,...]`, written into
//! the bottleneck's `transport` and `cc` or `[tcp]`) and `preset` (a list of presets: each cell
//! starts from its own). A plan may also hold several
//! `[[matrices]]` (their cells are united). `reps` left out: 1 for the bottleneck, the preset's
//! own count for a mesh preset.
//!
//! Each cell's scenario is resolved (so `cc = "fasor"` and `cc = "fasor:max_retransmit=20"` under
//! the preset are one cell); its id is the first 16 hex digits of the SHA-256 of the resolved
//! scenario's canonical JSON with the seed zeroed, and its seed is derived from that id and the
//! plan's seed. A cell's results are `cells/ID.json` (the `sim --json` object plus `cell`) and
//! `cells/ID.clients.csv` (for a mesh cell, `client` is the client's node id), written to a
//! temporary file and renamed, so a killed sweep loses nothing that finished and a re-run skips
//! finished cells.
//!
//! With `paired = true` the seed comes from the id of the cell's network instead: the scenario
//! with its algorithm (`cc`, `transport`, `[tcp]`) blanked too, so cells that differ only in the
//! algorithm share their seeds and every algorithm meets the same network realisations (common
//! random numbers: a comparison between algorithms is paired, its noise that of the algorithms
//! alone). The league's suite is paired.
//!
//! A plan's identity is the hash of its seed and its cells' ids ([`Plan::hash`]): what its
//! results depend on, not how its text is written. A results directory records it in
//! `plan.json` (with the plan's cell ids) and in every cell's JSON (`cell.plan`); a sweep or a
//! merge into a directory of another plan is refused unless forced, and merges say how many of
//! the plan's cells are present.
//!
//! By part: `plan` (parsing and expanding a plan, ids, seeds, shards), `store` (a results
//! directory: its plan record, the cells' files, the checks, the tidy table), `merge`, `notes`
//! (what finished cells say is wrong with them); here the run of a plan's cells.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

mod merge;
mod notes;
mod plan;
mod store;

use netsim::worlds::WorldScenario;
use netsim::{RepResult, Summary};
use rayon::prelude::*;

use crate::stop::Stop;
use crate::wall::Stopwatch;

pub use merge::{merge, MergeOutcome};
pub use notes::Notes;
use plan::plan_keys;
pub(crate) use plan::set_path;
pub use plan::{cell_id, in_shard, parse_plan, Cell, Plan};
pub(crate) use store::write_atomic;
pub use store::{
    check_cell, finish, finished, machine, prepare, rebuild_clients_csv, CellResults, PlanRecord, SweepOutcome,
};
use store::{client_columns, PLAN_COLUMN};

type Error = Box<dyn std::error::Error + Send + Sync>;

/// Runs one cell's replications; `None` if `stop` left some of them out.
fn run_reps(s: &dyn WorldScenario, stop: &Stop, work: Option<&CellWork>) -> Result<Option<Vec<RepResult>>, Error> {
    let runner = s.runner()?;
    Ok(all_reps(s.reps(), stop, |r| {
        // counted as each replication ends: telling the count of every exchange (an atomic
        // addition each, shared by the threads) had cost the reference matrix 5 % of its time
        let rep = runner.run_rep(r, None);
        if let Some(w) = work {
            w.rep_done();
        }
        rep
    }))
}

/// A sweep's progress: the work of its cells ([`netsim::worlds::Work`]: exchanges, or simulated
/// seconds) summed, counted as their replications end, so that a cell of 400 clients weighs what
/// it costs against one of 5, and the rate and ETA mean something within a cell too.
#[derive(Debug)]
struct SweepWork {
    done: Arc<AtomicU64>,
    total: u64,
    unit: &'static str,
}

impl SweepWork {
    /// The work of `cells`: their units if they all count the same thing, else "work units".
    fn of(cells: &[&Cell]) -> SweepWork {
        let (mut total, mut units) = (0u64, BTreeSet::new());
        for c in cells {
            let (work, unit) = crate::progress::units(c.scenario.work_per_rep(), c.scenario.reps());
            total = total.saturating_add(work);
            units.insert(unit);
        }
        let unit = if units.len() == 1 { units.pop_first().unwrap_or("work units") } else { "work units" };
        SweepWork { done: Arc::default(), total, unit }
    }

    /// The counter of one cell's work.
    fn cell(&self, c: &Cell) -> CellWork {
        let (per_rep, _) = crate::progress::units(c.scenario.work_per_rep(), 1);
        CellWork { per_rep, reps: c.scenario.reps(), done: AtomicU32::new(0), sweep: self.done.clone() }
    }
}

/// One cell's share of a [`SweepWork`]: each replication's work as it ends, and at the cell's end
/// (finished or stopped) that of the replications it did not run.
#[derive(Debug)]
struct CellWork {
    per_rep: u64,
    reps: u32,
    /// Replications counted.
    done: AtomicU32,
    sweep: Arc<AtomicU64>,
}

impl CellWork {
    /// A replication ended (one beyond the cell's replications counts nothing).
    fn rep_done(&self) {
        if self.done.fetch_add(1, Ordering::Relaxed) < self.reps {
            self.sweep.fetch_add(self.per_rep, Ordering::Relaxed);
        }
    }

    /// The cell ended: its whole weight counted.
    fn finish(&self) {
        let left = self.reps.saturating_sub(self.done.load(Ordering::Relaxed));
        self.sweep.fetch_add(self.per_rep * u64::from(left), Ordering::Relaxed);
    }
}

/// Replications `0..reps` of `rep` on the current rayon pool, none started once `stop` is set;
/// `None` unless all of them ran.
fn all_reps(reps: u32, stop: &Stop, rep: impl Fn(u32) -> RepResult + Sync + Send) -> Option<Vec<RepResult>> {
    let done: Vec<RepResult> = (0..reps).into_par_iter().filter_map(|r| (!stop.is_set()).then(|| rep(r))).collect();
    (done.len() == reps as usize).then_some(done)
}

/// Runs cell `id` of `plan` (its replications on the current rayon pool) and returns its files.
pub fn run_cell_of(plan: &Plan, id: &str) -> Result<CellResults, Error> {
    let cell = plan.cells.iter().find(|c| c.id == id).ok_or_else(|| format!("the plan has no cell {id}"))?;
    Ok(compute_cell(cell, &plan_keys(plan), &plan.hash(), &Stop::default(), None)?.expect("never stopped"))
}

/// Runs one cell and writes its results; `false` if `stop` cut it short (nothing written).
fn run_cell(
    dir: &Path,
    cell: &Cell,
    plan_keys: &[String],
    plan_hash: &str,
    stop: &Stop,
    work: &CellWork,
) -> Result<bool, Error> {
    let computed = compute_cell(cell, plan_keys, plan_hash, stop, Some(work));
    work.finish();
    match computed? {
        Some(files) if !stop.is_abandoned() => files.store(dir).map(|()| true),
        _ => Ok(false),
    }
}

/// Runs one cell: its files, or `None` if `stop` left replications out.
fn compute_cell(
    cell: &Cell,
    plan_keys: &[String],
    plan_hash: &str,
    stop: &Stop,
    work: Option<&CellWork>,
) -> Result<Option<CellResults>, Error> {
    let watch = Stopwatch::start();
    let Some(reps) = run_reps(&*cell.scenario, stop, work)? else { return Ok(None) };
    let wall_s = watch.seconds();
    let summary = Summary::new(&reps);
    let mut v = serde_json::to_value(&summary)?;
    let obj = v.as_object_mut().ok_or("summary is an object")?;
    obj.insert("wall_s".into(), wall_s.into());
    obj.insert("events_per_s".into(), (summary.events as f64 / wall_s.max(1e-9)).into());
    obj.insert("scenario".into(), cell.scenario.to_json());
    // a client is named as its world names it (a mesh: by node id, host i is node i + 1), as in `sim --out`
    let world = cell.scenario.world();
    obj.insert("cell".into(), serde_json::json!({ "id": cell.id, "params": cell.params, "plan": plan_hash }));
    // per-client rows: the plan's parameters as columns (each cell's resolved value, also of a
    // key its own matrix does not vary), then the client's numbers
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = plan_keys.to_vec();
    header.extend(client_columns().map(str::to_string));
    header.push(PLAN_COLUMN.into());
    w.write_record(&header)?;
    let scenario = &v["scenario"];
    let values: Vec<String> = plan_keys.iter().map(|k| resolved_value(scenario, k)).collect();
    for rep in &reps {
        for c in &rep.clients {
            let mut row = values.clone();
            row.extend(crate::sim::columns::client_row(rep.rep, world.client_label(c.client), c));
            row.push(cell.id.clone());
            row.push(plan_hash.to_string());
            w.write_record(&row)?;
        }
    }
    Ok(Some(CellResults {
        id: cell.id.clone(),
        json: serde_json::to_string_pretty(&v)?,
        clients_csv: w.into_inner().map_err(|e| e.to_string())?,
    }))
}

/// A cell's value in a parameter column of the tidy table, from its resolved scenario's JSON:
/// `cc` and `cc_params` split from its resolved stack (the algorithm, or `tcp`:
/// [`crate::sim::columns::cc_columns`]), `buffer`
/// the bottleneck's (`UP/DOWN` if the directions differ), `preset` the scenario's name, any
/// other key (dotted for nested ones) its value; empty where the scenario has no such key (a
/// bottleneck key in a mesh cell).
fn resolved_value(scenario: &serde_json::Value, key: &str) -> String {
    let text = |v: &serde_json::Value| match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    };
    match key {
        "cc" | "cc_params" => {
            let [name, params] = crate::sim::columns::cc_columns(&crate::sim::columns::stack_of(scenario));
            if key == "cc" {
                name
            } else {
                params
            }
        }
        "preset" => text(&scenario["name"]),
        "buffer" => {
            let (up, down) = (text(&scenario["uplink"]["buffer_bytes"]), text(&scenario["downlink"]["buffer_bytes"]));
            if up == down {
                up
            } else {
                format!("{up}/{down}")
            }
        }
        _ => text(key.split('.').fold(scenario, |v, part| &v[part])),
    }
}

/// Runs the plan's cells (those of shard `shard`, if given) into `dir`. A `dir` holding another
/// plan's results is refused unless `force`; then this plan's text goes to `plan-HASH.toml` and
/// the directory's own plan stays.
pub fn run(
    plan: &Plan,
    dir: &Path,
    shard: Option<(u64, u64)>,
    threads: Option<usize>,
    force: bool,
    stop: &Stop,
) -> Result<SweepOutcome, Error> {
    let ours = prepare(plan, dir, force)?;
    let keys = plan_keys(plan);
    let mine: Vec<&Cell> = plan.cells.iter().filter(|c| shard.is_none_or(|(k, n)| in_shard(&c.id, k, n))).collect();
    let other_shards = plan.cells.len() - mine.len();
    let mut broken = Vec::new();
    let todo: Vec<&Cell> = mine
        .iter()
        .copied()
        .filter(|c| match check_cell(dir, &c.id) {
            Ok(()) => false,
            Err(why) => {
                // files there but not whole: run again; no files: not run yet
                if dir.join("cells").join(format!("{}.json", c.id)).exists() {
                    broken.push(why);
                }
                true
            }
        })
        .collect();
    let skipped = mine.len() - todo.len();
    for why in &broken {
        eprintln!("coapcc sweep: broken results, running the cell again: {why}");
    }
    let mut builder = rayon::ThreadPoolBuilder::new();
    if let Some(t) = threads {
        builder = builder.num_threads(t);
    }
    let pool = builder.build()?;
    let work = SweepWork::of(&todo);
    let bar = crate::progress::Bar::start(work.total, work.done.clone(), work.unit);
    let watch = Stopwatch::start();
    let results: Vec<Result<bool, String>> = pool.install(|| {
        todo.par_iter()
            .map(|c| {
                if stop.is_set() {
                    return Ok(false);
                }
                run_cell(dir, c, &keys, &ours.plan, stop, &work.cell(c)).map_err(|e| format!("cell {}: {e}", c.id))
            })
            .collect()
    });
    bar.finish();
    let mut ran = 0;
    for r in results {
        ran += r? as usize;
    }
    let wall_s = watch.seconds();
    let outcome = SweepOutcome { ran, skipped, other_shards, wall_s, interrupted: todo.len() - ran };
    finish(plan, dir, shard, &outcome)?;
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;
    use netsim::Scenario;

    #[test]
    fn a_sweeps_progress_weighs_each_cell_by_its_work() {
        // 1 and 4 clients × 50 exchanges × 2 replications: 100 + 400 exchanges
        let p = parse_plan("reps = 2\n[matrix]\nclients = [1, 4]\n").unwrap();
        let cells: Vec<&Cell> = p.cells.iter().collect();
        let w = SweepWork::of(&cells);
        assert_eq!((w.total, w.unit), (500, "exchanges"));
        // a replication of the small cell counts its 50; never more than the cell's weight
        let small = w.cell(cells[0]);
        for _ in 0..3 {
            small.rep_done();
        }
        assert_eq!(w.done.load(Ordering::Relaxed), 100);
        // the big one: a replication, then its end tops it up
        let big = w.cell(cells[1]);
        big.rep_done();
        assert_eq!(w.done.load(Ordering::Relaxed), 300);
        big.finish();
        assert_eq!(w.done.load(Ordering::Relaxed), 500);
        // a mesh cell counts simulated seconds (600 s × 5 replications of nitk-gst-cooja); beside
        // a bottleneck cell the unit says they are mixed
        let m = parse_plan("[matrix]\npreset = [\"nitk-gst-cooja\"]\ncc = [\"default\"]\n").unwrap();
        let mesh = SweepWork::of(&m.cells.iter().collect::<Vec<_>>());
        assert_eq!((mesh.total, mesh.unit), (3000, "simulated s"));
        mesh.cell(&m.cells[0]).rep_done();
        assert_eq!(mesh.done.load(Ordering::Relaxed), 600);
        let both: Vec<&Cell> = cells.iter().copied().chain(m.cells.iter()).collect();
        assert_eq!(SweepWork::of(&both).unit, "work units");
    }

    #[test]
    fn stack_lists_algorithms_and_tcp_together() {
        let p = parse_plan("[matrix]\nstack = [\"cocoa\", \"tcp:sack=false\"]\n").unwrap();
        let s: Vec<&Scenario> = p.cells.iter().map(|c| c.scenario.as_any().downcast_ref().unwrap()).collect();
        assert_eq!(s.len(), 2);
        assert_eq!(
            (s[0].transport, s[0].cc.as_str()),
            (netsim::TransportKind::Udp, "cocoa:max_retransmit=20,aging=false")
        );
        assert_eq!((s[1].transport, s[1].stack().as_str()), (netsim::TransportKind::Tcp, "tcp:sack=false"));
        // beside `stack`, any key it writes is refused: in the matrix or in [base]
        for plan in [
            "[matrix]\nstack = [\"cocoa\", \"tcp\"]\ncc = [\"default\"]\n",
            "[base]\ntransport = \"tcp\"\n[matrix]\nstack = [\"cocoa\"]\n",
            "[matrix]\nstack = [\"tcp\"]\n\"tcp.sack\" = [false]\n",
        ] {
            let e = parse_plan(plan).unwrap_err();
            assert!(e.starts_with("plan: matrix key 'stack' names the algorithm"), "{plan}: {e}");
        }
        // the tidy table's columns: cc and cc_params carry the stack; `stack` is not repeated
        assert_eq!(plan_keys(&p), ["cc", "cc_params"]);
        let json = serde_json::to_value(s[1]).unwrap();
        assert_eq!(resolved_value(&json, "cc"), "tcp");
        assert_eq!(resolved_value(&json, "cc_params"), "sack=false");
        // `cc` names an algorithm only
        let e = parse_plan("[matrix]\ncc = [\"tcp\"]\n").unwrap_err();
        assert!(e.contains("transport = \"tcp\""), "{e}");
    }
}
