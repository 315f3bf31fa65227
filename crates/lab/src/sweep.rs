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

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use netsim::lln;
use netsim::worlds::{self, WorldScenario};
use netsim::{RepResult, Summary};
use rayon::prelude::*;
use sha2::{Digest, Sha256};

use crate::stop::Stop;
use crate::wall::Stopwatch;

type Error = Box<dyn std::error::Error + Send + Sync>;

/// A cell: its id, the values the matrix gave it, its resolved scenario.
#[derive(Debug, Clone)]
pub struct Cell {
    /// Stable id.
    pub id: String,
    /// Matrix key → value, as written in the plan.
    pub params: BTreeMap<String, String>,
    /// The resolved scenario, seed included, of the world its `env` names.
    pub scenario: Box<dyn WorldScenario>,
}

/// A parsed plan.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The plan's text (kept with the results).
    pub text: String,
    /// Master seed.
    pub seed: u64,
    /// Cells that differ only in the algorithm share their seeds.
    pub paired: bool,
    /// The cells, in plan order, without duplicates.
    pub cells: Vec<Cell>,
}

/// Writes `value` at a plan's matrix key (`downlink.delay_ms`; `buffer` for both directions;
/// `stack` as `sim --cc` reads it) into a scenario's table.
pub(crate) fn set_path(table: &mut toml::Table, key: &str, value: toml::Value) -> Result<(), String> {
    if key == STACK {
        return set_stack(table, &value);
    }
    if key == "buffer" {
        set_path(table, "uplink.buffer_bytes", value.clone())?;
        return set_path(table, "downlink.buffer_bytes", value);
    }
    let mut parts: Vec<&str> = key.split('.').collect();
    let last = parts.pop().ok_or("empty matrix key")?;
    let mut t = table;
    for p in parts {
        t = t
            .entry(p.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()))
            .as_table_mut()
            .ok_or_else(|| format!("matrix key '{key}': '{p}' is not a table"))?;
    }
    t.insert(last.to_string(), value);
    Ok(())
}

/// The matrix key that lists stacks to compare as `sim --cc` does: an algorithm over UDP, or
/// `tcp[:key=value,...]` for CoAP over TCP. It sets the scenario's own keys (`transport`, then
/// `cc` or the `[tcp]` table), which each name one thing.
const STACK: &str = "stack";

/// Writes a `stack` value into a cell's table as the scenario's keys.
fn set_stack(table: &mut toml::Table, value: &toml::Value) -> Result<(), String> {
    let spec = value.as_str().ok_or_else(|| format!("matrix key 'stack': {value} is not a string"))?;
    let s = netsim::Scenario::default().with_stack(spec).map_err(|e| format!("matrix key 'stack': {e}"))?;
    table.insert("transport".into(), toml::Value::try_from(s.transport).map_err(|e| e.to_string())?);
    match s.tcp {
        Some(p) => {
            table.insert("tcp".into(), toml::Value::try_from(p).map_err(|e| e.to_string())?);
        }
        None => {
            table.remove("tcp");
            table.insert("cc".into(), spec.into());
        }
    }
    Ok(())
}

fn display(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The first 16 hex digits of the SHA-256 of `text`: the ids of cells, networks and plans.
fn short_hash(text: &str) -> String {
    Sha256::digest(text.as_bytes())[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// The id of a resolved scenario (seed zeroed): its JSON, fields in declaration order, hashed.
pub fn cell_id(s: &dyn WorldScenario) -> String {
    let mut zeroed = s.clone_box();
    *zeroed.seed_mut() = 0;
    short_hash(&zeroed.canonical())
}

/// The table a cell starts from: the named preset (mesh presets included), else the defaults of
/// the world the plan's `[base]` names with `env` (none: the wired bottleneck's thesis preset).
fn start_table(preset: Option<&str>, base: &toml::Table) -> Result<toml::Table, String> {
    let Some(name) = preset else { return Ok(worlds::of(base)?.defaults()) };
    let text =
        lln::presets::text(name).ok_or_else(|| format!("unknown preset '{name}' (`coapcc presets` lists them)"))?;
    text.parse().map_err(|e: toml::de::Error| format!("preset {name}: {e}"))
}

/// Resolves a cell's table into its scenario, of the world its `env` names.
fn resolve_cell(table: toml::Table) -> Result<Box<dyn WorldScenario>, String> {
    worlds::of(&table)?.scenario(table)
}

/// The id of a cell's network: as [`cell_id`], with the algorithm blanked as well (a paired
/// plan's seeds come from it).
fn network_id(s: &dyn WorldScenario) -> String {
    let mut json = s.to_json();
    if let Some(o) = json.as_object_mut() {
        o.insert("seed".into(), 0.into());
        for k in ["cc", "transport", "tcp"] {
            o.remove(k);
        }
    }
    short_hash(&json.to_string())
}

/// The seed of a cell from its id and the plan's seed.
fn cell_seed(id: &str, plan_seed: u64) -> u64 {
    let digest = Sha256::digest(format!("{id}/{plan_seed}").as_bytes());
    u64::from_be_bytes(digest[..8].try_into().expect("8 bytes"))
}

/// Parses a plan and expands its cells.
pub fn parse_plan(text: &str) -> Result<Plan, String> {
    let doc: toml::Table = text.parse().map_err(|e: toml::de::Error| format!("plan: {}", e.to_string().trim_end()))?;
    let mut seed = 1u64;
    let mut paired = false;
    let mut reps = None;
    let mut preset = None;
    let mut base = toml::Table::new();
    let mut matrices = Vec::new();
    for (k, v) in &doc {
        match (k.as_str(), v) {
            ("seed", toml::Value::Integer(s)) if *s >= 0 => seed = *s as u64,
            ("seed", v) => return Err(format!("plan: seed must be a whole number ≥ 0, not {v}")),
            ("paired", toml::Value::Boolean(b)) => paired = *b,
            ("paired", v) => return Err(format!("plan: paired must be true or false, not {v}")),
            ("reps", toml::Value::Integer(r)) if *r >= 1 => reps = Some(*r),
            ("reps", v) => {
                return Err(format!("plan: reps must be a whole number ≥ 1 (replications per cell), not {v}"))
            }
            ("preset", toml::Value::String(p)) => preset = Some(p.clone()),
            ("base", toml::Value::Table(t)) => base = t.clone(),
            ("matrix", toml::Value::Table(t)) => matrices.push(t.clone()),
            ("matrices", toml::Value::Array(a)) => {
                for m in a {
                    matrices.push(m.as_table().ok_or("plan: each [[matrices]] entry must be a table")?.clone());
                }
            }
            (k, _) => {
                return Err(format!(
                    "plan: unknown or invalid key '{k}' (expected seed, paired, reps, preset, [base], [matrix] or [[matrices]])"
                ))
            }
        }
    }
    if matrices.is_empty() {
        matrices.push(toml::Table::new());
    }
    let mut cells = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for matrix in &matrices {
        let dims: Vec<(String, Vec<toml::Value>)> = matrix
            .iter()
            .map(|(k, v)| match v {
                toml::Value::Array(a) if !a.is_empty() => Ok((k.clone(), a.clone())),
                _ => Err(format!("plan: matrix key '{k}' must be a non-empty list")),
            })
            .collect::<Result<_, _>>()?;
        if matrix.contains_key(STACK) {
            // `stack` writes the scenario's transport and its cc or [tcp]: one of them beside it
            // would be overwritten in some cells and not others
            let beside = (matrix.keys().chain(base.keys()))
                .find(|k| ["cc", "transport", "tcp"].contains(&k.as_str()) || k.starts_with("tcp."));
            if let Some(k) = beside {
                return Err(format!(
                    "plan: matrix key 'stack' names the algorithm or `tcp[:...]` of each cell; '{k}' beside it (in the \
                     matrix or [base]) contradicts it: list every stack in 'stack'"
                ));
            }
        }
        let total: usize = dims.iter().map(|d| d.1.len()).product();
        for n in 0..total {
            // the cell's values, the matrix's last key varying fastest
            let mut values = Vec::with_capacity(dims.len());
            let mut rest = n;
            for (k, vs) in dims.iter().rev() {
                values.push((k, &vs[rest % vs.len()]));
                rest /= vs.len();
            }
            let params: BTreeMap<String, String> = values.iter().map(|(k, v)| (k.to_string(), display(v))).collect();
            let cell_preset = params.get("preset").map(String::as_str).or(preset.as_deref());
            let mut table = start_table(cell_preset, &base).map_err(|e| format!("plan: {e}"))?;
            netsim::scenario::overlay(&mut table, base.clone());
            // the plan's reps, else the world's (1 for the bottleneck, the preset's own for a mesh)
            let world = worlds::of(&table).map_err(|e| format!("plan: {e}"))?;
            if let Some(r) = reps.or(world.plan_reps().map(i64::from)) {
                table.insert("reps".into(), toml::Value::Integer(r));
            }
            for (k, v) in values.iter().filter(|(k, _)| k.as_str() != "preset") {
                set_path(&mut table, k, (*v).clone())?;
            }
            let mut scenario = resolve_cell(table).map_err(|e| format!("plan: cell {params:?}: {e}"))?;
            let id = cell_id(&*scenario);
            let network = if paired { network_id(&*scenario) } else { id.clone() };
            *scenario.seed_mut() = cell_seed(&network, seed);
            if seen.insert(id.clone()) {
                cells.push(Cell { id, params, scenario });
            }
        }
    }
    Ok(Plan { text: text.to_string(), seed, paired, cells })
}

impl Plan {
    /// The plan's identity: the first 16 hex digits of the SHA-256 of its seed (marked paired
    /// where it is) and its cells' ids, sorted.
    pub fn hash(&self) -> String {
        let mut ids: Vec<&str> = self.cells.iter().map(|c| c.id.as_str()).collect();
        ids.sort_unstable();
        let seed = if self.paired { format!("{} paired", self.seed) } else { self.seed.to_string() };
        short_hash(&format!("{seed}\n{}", ids.join("\n")))
    }

    /// What `plan.json` records.
    fn record(&self) -> PlanRecord {
        PlanRecord { plan: self.hash(), seed: self.seed, cells: self.cells.iter().map(|c| c.id.clone()).collect() }
    }
}

/// `plan.json` of a results directory: the plan's hash, seed and cell ids.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PlanRecord {
    /// [`Plan::hash`].
    pub plan: String,
    /// The plan's seed.
    pub seed: u64,
    /// The plan's cell ids, in plan order.
    pub cells: Vec<String>,
}

impl PlanRecord {
    /// The plan a results directory holds: its `plan.json`, else (a directory written before
    /// plan.json existed) its `plan.toml` parsed again; `None` for a directory with neither.
    pub fn of_dir(dir: &Path) -> Result<Option<PlanRecord>, Error> {
        let json = dir.join("plan.json");
        if json.exists() {
            let text = std::fs::read_to_string(&json)?;
            return Ok(Some(serde_json::from_str(&text).map_err(|e| format!("{}: {e}", json.display()))?));
        }
        let toml = dir.join("plan.toml");
        if toml.exists() {
            let plan = parse_plan(&std::fs::read_to_string(&toml)?).map_err(|e| format!("{}: {e}", toml.display()))?;
            return Ok(Some(plan.record()));
        }
        Ok(None)
    }

    /// How many of the plan's cells have finished in `dir`.
    pub fn present(&self, dir: &Path) -> usize {
        self.cells.iter().filter(|id| finished(dir, id)).count()
    }
}

/// The refusal to mix two plans' results in `dir`.
fn other_plan(dir: &Path, theirs: &PlanRecord, ours: &PlanRecord, what: &str) -> String {
    format!(
        "{} holds results of another plan ({}, {} cells) than {what} ({}, {} cells): results of two plans would mix. \
         Use another --out, or --force to mix them anyway",
        dir.display(),
        theirs.plan,
        theirs.cells.len(),
        ours.plan,
        ours.cells.len()
    )
}

/// Is `id` in shard `k` of `n` (1-based)?
pub fn in_shard(id: &str, k: u64, n: u64) -> bool {
    u64::from_str_radix(&id[..id.len().min(16)], 16).map_or(true, |v| v % n == k - 1)
}

/// Writes `path` whole or not at all: into a temporary file of a unique name beside it (so that
/// concurrent writers, say two sweeps into one directory, never share one), then renamed. The
/// temporary's name ends in `.tmp`, which readers of a results directory skip.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new().prefix(".").suffix(".tmp").tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.persist(path).map(|_| ()).map_err(|e| e.error)
}

/// The columns of the tidy per-client table after the plan's parameters.
fn client_columns() -> impl Iterator<Item = &'static str> {
    crate::sim::columns::CLIENT_COLUMNS.into_iter().chain(["cell"])
}

/// The last column of a cell's rows: the hash of the plan whose sweep ran it ([`Plan::hash`]),
/// which tells the plans of a directory written with `--force` apart. Not required of a cell
/// (results written before it existed stay whole); empty in the tidy table for those.
const PLAN_COLUMN: &str = "plan";

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

/// A finished cell's files: `cells/ID.json` and `cells/ID.clients.csv`.
#[derive(Debug, Clone)]
pub struct CellResults {
    /// The cell's id.
    pub id: String,
    /// `cells/ID.json`.
    pub json: String,
    /// `cells/ID.clients.csv`.
    pub clients_csv: Vec<u8>,
}

impl CellResults {
    /// Writes the files into `dir`, each atomically, the JSON last (its presence marks the cell
    /// finished).
    pub fn store(&self, dir: &Path) -> Result<(), Error> {
        let cells = dir.join("cells");
        write_atomic(&cells.join(format!("{}.clients.csv", self.id)), &self.clients_csv)?;
        write_atomic(&cells.join(format!("{}.json", self.id)), self.json.as_bytes())?;
        Ok(())
    }
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

/// What a sweep did.
#[derive(Debug)]
pub struct SweepOutcome {
    /// Cells run now.
    pub ran: usize,
    /// Cells found finished.
    pub skipped: usize,
    /// Cells in other shards.
    pub other_shards: usize,
    /// Wall time, s.
    pub wall_s: f64,
    /// Cells not finished because the sweep was stopped ([`Stop`]).
    pub interrupted: usize,
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

/// The tidy table's parameter columns: `cc` and `cc_params`, then every other matrix key of the
/// plan in order of first appearance.
fn plan_keys(plan: &Plan) -> Vec<String> {
    let mut keys: Vec<String> = vec!["cc".into(), "cc_params".into()];
    for c in &plan.cells {
        for k in c.params.keys().filter(|k| *k != STACK) {
            if !keys.contains(k) {
                keys.push(k.clone());
            }
        }
    }
    keys
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

/// What is wrong with a set of finished cells' results, a sentence each naming its cell.
#[derive(Debug, Default)]
pub struct Notes {
    /// Cells with replications cut at `max_time_s`.
    pub truncated: Vec<String>,
    /// Their summaries' warnings (figures that describe almost nothing).
    pub warnings: Vec<String>,
}

impl Notes {
    /// Adds what the results of one cell (its `cells/ID.json`) say of themselves.
    pub(crate) fn add(&mut self, v: &serde_json::Value) {
        let params: Vec<String> = v["cell"]["params"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, x)| format!("{k}={}", x.as_str().map_or_else(|| x.to_string(), str::to_string)))
            .collect();
        let label = format!("cell {} ({})", v["cell"]["id"].as_str().unwrap_or("?"), params.join(", "));
        let cut = v["truncated_reps"].as_u64().unwrap_or(0);
        if cut > 0 {
            // the bottleneck's safety net, or the length of a mesh run whose clients take turns
            let s = &v["scenario"];
            let (key, limit) = match s.get("max_time_s") {
                Some(t) => ("max_time_s", t),
                None => ("duration_s", &s["duration_s"]),
            };
            self.truncated.push(crate::sim::runner::cut_short(&label, cut, &s["reps"], key, limit));
        }
        for w in v["warnings"].as_array().into_iter().flatten().filter_map(|w| w.as_str()) {
            self.warnings.push(format!("{label}: {w}"));
        }
    }

    /// The notes of `plan`'s cells finished in `dir`.
    pub fn of(plan: &Plan, dir: &Path) -> Notes {
        let mut notes = Notes::default();
        for c in &plan.cells {
            let path = dir.join("cells").join(format!("{}.json", c.id));
            if let Some(v) = std::fs::read_to_string(path).ok().and_then(|t| serde_json::from_str(&t).ok()) {
                notes.add(&v);
            }
        }
        notes
    }

    /// Prints the warnings on stderr, prefixed by `who`; an [`crate::Incomplete`] error (exit 3)
    /// if a cell was truncated.
    pub fn tell(&self, who: &str) -> Result<(), Box<dyn std::error::Error>> {
        for w in &self.warnings {
            eprintln!("{who}: WARNING: {w}");
        }
        match self.truncated.len() {
            0 => Ok(()),
            n => Err(Box::new(crate::Incomplete(format!(
                "{n} cell(s) finished incomplete (their unfinished clients have no FCT):\n  {}",
                self.truncated.join("\n  ")
            )))),
        }
    }
}

/// Whether cell `id` has finished in `dir`: its files are there and whole ([`check_cell`]).
pub fn finished(dir: &Path, id: &str) -> bool {
    check_cell(dir, id).is_ok()
}

/// Why cell `id`'s files in `dir` are not a finished cell's results, naming the file: its JSON
/// must be a results object of that cell (`cell.id`, `scenario`, `fct_s`), and its per-client
/// table a CSV with the client columns, every row as long as the header and of that cell.
/// (A killed sweep never leaves such files, which are written whole and renamed; a full disk, a
/// copy gone wrong or a hand edit can.)
pub fn check_cell(dir: &Path, id: &str) -> Result<(), String> {
    let json = dir.join("cells").join(format!("{id}.json"));
    let text = std::fs::read_to_string(&json).map_err(|e| format!("{}: {e}", json.display()))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: not the JSON of a cell: {e}", json.display()))?;
    if v["cell"]["id"].as_str() != Some(id) || !v["scenario"].is_object() || !v["fct_s"].is_object() {
        return Err(format!("{}: not the results of cell {id} (no cell.id, scenario or fct_s)", json.display()));
    }
    let csv_path = dir.join("cells").join(format!("{id}.clients.csv"));
    let mut r = csv::ReaderBuilder::new()
        .flexible(true)
        .from_path(&csv_path)
        .map_err(|e| format!("{}: {e}", csv_path.display()))?;
    let header = r.headers().map_err(|e| format!("{}: {e}", csv_path.display()))?.clone();
    let missing: Vec<&str> = client_columns().filter(|c| !header.iter().any(|h| h == *c)).collect();
    if !missing.is_empty() {
        return Err(format!("{}: no column {}", csv_path.display(), missing.join(", ")));
    }
    let cell = header.iter().position(|h| h == "cell").unwrap_or(0);
    for (i, row) in r.records().enumerate() {
        let row = row.map_err(|e| format!("{}: {e}", csv_path.display()))?;
        if row.len() != header.len() || row.get(cell) != Some(id) {
            return Err(format!("{}: row {} is not a row of cell {id}", csv_path.display(), i + 2));
        }
    }
    Ok(())
}

/// Readies `dir` for `plan`'s results: refuses a directory of another plan unless `force` (then
/// this plan's text goes to `plan-HASH.toml` and the directory's own plan stays), else writes
/// `plan.toml` and `plan.json`. Returns the plan's record.
pub fn prepare(plan: &Plan, dir: &Path, force: bool) -> Result<PlanRecord, Error> {
    let ours = plan.record();
    match PlanRecord::of_dir(dir)? {
        Some(theirs) if theirs.plan != ours.plan => {
            if !force {
                return Err(other_plan(dir, &theirs, &ours, "this one").into());
            }
            std::fs::create_dir_all(dir.join("cells"))?;
            write_atomic(&dir.join(format!("plan-{}.toml", ours.plan)), plan.text.as_bytes())?;
        }
        _ => {
            std::fs::create_dir_all(dir.join("cells")).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            write_atomic(&dir.join("plan.toml"), plan.text.as_bytes())?;
            write_atomic(&dir.join("plan.json"), serde_json::to_string_pretty(&ours)?.as_bytes())?;
        }
    }
    Ok(ours)
}

/// Ends a sweep of `plan` into `dir`: rebuilds the tidy table and writes the run's metadata.
pub fn finish(plan: &Plan, dir: &Path, shard: Option<(u64, u64)>, o: &SweepOutcome) -> Result<(), Error> {
    let (ours, wall_s) = (plan.record(), o.wall_s);
    rebuild_clients_csv(dir)?;
    let meta = serde_json::json!({
        "coapcc_version": env!("CARGO_PKG_VERSION"),
        "git": option_env!("COAPCC_GIT_HASH").unwrap_or("unknown"),
        "plan": ours.plan,
        "plan_seed": plan.seed,
        "cells_in_plan": plan.cells.len(),
        "cells_run": o.ran,
        "cells_skipped": o.skipped,
        "shard": shard.map(|(k, n)| format!("{k}/{n}")),
        "wall_s": wall_s,
        "machine": machine(),
    });
    write_atomic(
        &dir.join(format!("run-{}.json", shard.map_or("all".into(), |(k, n)| format!("{k}of{n}")))),
        serde_json::to_string_pretty(&meta)?.as_bytes(),
    )?;
    Ok(())
}

/// A description of this machine for reports.
pub fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    format!("{cpu}, {cores} cores, {} {}", std::env::consts::OS, std::env::consts::ARCH)
}

/// The ids of the cells whose files in `dir` are whole ([`check_cell`]), sorted.
fn whole_cells(dir: &Path) -> Result<Vec<String>, Error> {
    let mut ids = cell_ids(dir)?;
    ids.retain(|id| finished(dir, id));
    Ok(ids)
}

/// The ids of the cells whose JSON `dir/cells` holds, sorted (whole or not; an unfinished
/// write ends in `.tmp`, not `.json`).
fn cell_ids(dir: &Path) -> Result<Vec<String>, Error> {
    let cells = dir.join("cells");
    let mut ids: Vec<String> = std::fs::read_dir(&cells)
        .map_err(|e| format!("{}: {e}", cells.display()))?
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.strip_suffix(".json")).map(str::to_string))
        .collect();
    ids.sort();
    Ok(ids)
}

/// Rebuilds DIR/clients.csv from every finished cell's per-client table (the union of their
/// columns); a cell whose files are broken is left out (a sweep runs it again; merge refuses it).
pub fn rebuild_clients_csv(dir: &Path) -> Result<(), Error> {
    let files: Vec<PathBuf> =
        whole_cells(dir)?.iter().map(|id| dir.join("cells").join(format!("{id}.clients.csv"))).collect();
    let mut columns: Vec<String> = Vec::new();
    let mut tables = Vec::new();
    for f in &files {
        let named = |e: csv::Error| format!("{}: {e}", f.display());
        let mut r = csv::Reader::from_path(f).map_err(named)?;
        let header: Vec<String> = r.headers().map_err(named)?.iter().map(str::to_string).collect();
        for h in &header {
            if !columns.contains(h) {
                columns.push(h.clone());
            }
        }
        let rows: Vec<csv::StringRecord> = r.records().collect::<Result<_, _>>().map_err(named)?;
        tables.push((header, rows));
    }
    // parameters first, then the client columns in their fixed order, the plan last
    let last = client_columns().count() + 1;
    columns.sort_by_key(|c| match client_columns().position(|x| x == c) {
        Some(i) => i + 1,
        None if c == PLAN_COLUMN => last,
        None => 0,
    });
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(&columns)?;
    for (header, rows) in tables {
        let idx: Vec<Option<usize>> = columns.iter().map(|c| header.iter().position(|h| h == c)).collect();
        for row in rows {
            w.write_record(idx.iter().map(|i| i.and_then(|i| row.get(i)).unwrap_or("")))?;
        }
    }
    write_atomic(&dir.join("clients.csv"), &w.into_inner().map_err(|e| e.to_string())?)?;
    Ok(())
}

/// What a merge did.
#[derive(Debug)]
pub struct MergeOutcome {
    /// Cells copied.
    pub copied: usize,
    /// The plan merged, if the directories record one.
    pub plan: Option<PlanRecord>,
    /// Of its cells, how many `out` now holds.
    pub present: usize,
}

/// Copies the finished cells of shard directories into `out` and rebuilds its tables. The
/// directories (and `out`, if it holds results) must record one plan, unless `force`. Every input
/// is checked before anything is written: a directory that records no plan beside ones that do,
/// a cell whose files are broken ([`check_cell`]), or a cell of another plan than the one merged
/// is refused (the last two with `force` too: they are not results), and `out` is left as it was.
pub fn merge(out: &Path, shards: &[PathBuf], force: bool) -> Result<MergeOutcome, Error> {
    let mut plan: Option<(PathBuf, PlanRecord)> = None;
    let mut planless = Vec::new();
    let existing = if out.exists() { Some(out.to_path_buf()) } else { None };
    for dir in existing.iter().chain(shards) {
        let is_out = existing.as_ref() == Some(dir);
        if !dir.join("cells").is_dir() {
            if is_out {
                continue; // an empty or new output directory
            }
            return Err(format!("{}: not a results directory of coapcc sweep (no cells/)", dir.display()).into());
        }
        let Some(rec) = PlanRecord::of_dir(dir)? else {
            planless.push(dir.clone());
            continue;
        };
        match &plan {
            Some((first, p)) if p.plan != rec.plan && !force => {
                return Err(other_plan(dir, &rec, p, &format!("{}", first.display())).into());
            }
            Some(_) => {}
            None => plan = Some((dir.clone(), rec)),
        }
    }
    if let (Some((first, p)), Some(dir), false) = (&plan, planless.first(), force) {
        return Err(format!(
            "{} records no plan (no plan.json or plan.toml) while {} holds plan {}: it may hold another plan's \
             cells. Use --force to merge it anyway",
            dir.display(),
            first.display(),
            p.plan
        )
        .into());
    }
    // every shard's cells, checked before anything is written
    let mut copies: Vec<(PathBuf, String)> = Vec::new();
    for dir in shards {
        for id in cell_ids(dir)? {
            check_cell(dir, &id).map_err(|why| format!("broken results, nothing merged: {why}"))?;
            if let Some((_, p)) = plan.as_ref().filter(|(_, p)| !p.cells.contains(&id)) {
                if !force {
                    return Err(format!(
                        "{}: cell {id} is not a cell of plan {}: nothing merged (--force merges it anyway)",
                        dir.display(),
                        p.plan
                    )
                    .into());
                }
            }
            copies.push((dir.clone(), id));
        }
    }
    std::fs::create_dir_all(out.join("cells")).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let mut copied = 0;
    for (dir, id) in &copies {
        if finished(out, id) {
            continue; // there already (another shard's copy, or a merge before)
        }
        // the table first, the JSON last: its presence marks the cell finished
        for name in [format!("{id}.clients.csv"), format!("{id}.json")] {
            write_atomic(&out.join("cells").join(&name), &std::fs::read(dir.join("cells").join(&name))?)?;
        }
        copied += 1;
    }
    for dir in shards {
        for f in ["plan.toml", "plan.json"] {
            if dir.join(f).exists() && !out.join(f).exists() {
                std::fs::copy(dir.join(f), out.join(f))?;
            }
        }
        for e in std::fs::read_dir(dir)?.filter_map(|e| e.ok()) {
            let n = e.file_name().to_string_lossy().to_string();
            if n.starts_with("run-") && n.ends_with(".json") {
                std::fs::copy(e.path(), out.join(&n))?;
            }
        }
    }
    rebuild_clients_csv(out)?;
    let plan = plan.map(|p| p.1);
    let present = plan.as_ref().map_or(0, |p| p.present(out));
    Ok(MergeOutcome { copied, plan, present })
}

#[cfg(test)]
mod tests {
    use super::*;
    use netsim::lln::LlnScenario;
    use netsim::Scenario;

    #[test]
    fn matrix_expansion_ids_and_seeds() {
        let p = parse_plan("seed = 5\nreps = 2\n[matrix]\ncc = [\"default\", \"fasor\"]\nclients = [1, 10]\nbuffer = [2500, 1410000]\n").unwrap();
        assert_eq!(p.cells.len(), 8);
        let c = &p.cells[0];
        assert_eq!(c.params["cc"], "default");
        let s: &Scenario = c.scenario.as_any().downcast_ref().expect("a bottleneck cell");
        assert_eq!(s.uplink.buffer_bytes, 2500);
        assert_eq!(s.downlink.buffer_bytes, 2500);
        assert_eq!(s.reps, 2);
        // the same plan gives the same ids and seeds; another plan seed, other seeds, same ids
        let q = parse_plan("seed = 6\nreps = 2\n[matrix]\ncc = [\"default\", \"fasor\"]\nclients = [1, 10]\nbuffer = [2500, 1410000]\n").unwrap();
        assert_eq!(
            p.cells.iter().map(|c| &c.id).collect::<Vec<_>>(),
            q.cells.iter().map(|c| &c.id).collect::<Vec<_>>()
        );
        let seed = |c: &Cell| c.scenario.clone().seed_mut().to_owned();
        assert_ne!(seed(&p.cells[0]), seed(&q.cells[0]));
        // resolution unites equal cells
        let r = parse_plan("[matrix]\ncc = [\"fasor\", \"fasor:max_retransmit=20\"]\n").unwrap();
        assert_eq!(r.cells.len(), 1);
        // nested keys, [[matrices]], and clear errors
        let n =
            parse_plan("[[matrices]]\n\"downlink.delay_ms\" = [100.0]\n[[matrices]]\nerrors = [\"low\"]\n").unwrap();
        assert_eq!(n.cells.len(), 2);
        let s: &Scenario = n.cells[0].scenario.as_any().downcast_ref().expect("a bottleneck cell");
        assert_eq!(s.downlink.delay_ms, 100.0);
        assert!(parse_plan("[matrix]\nclientz = [1]\n").unwrap_err().contains("unknown field `clientz`"));
        assert!(parse_plan("[matrix]\nclients = 1\n").unwrap_err().contains("must be a non-empty list"));
        assert!(parse_plan("[matrix]\nstack = [\"tcp\", \"nope\"]\n")
            .unwrap_err()
            .contains("unknown algorithm 'nope'"));
    }

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

    #[test]
    fn mesh_cells_from_presets() {
        let p = parse_plan(
            "preset = \"nitk-gsrtc-cooja\"\n[matrix]\ncc = [\"cocoa\", \"gsrtc\"]\n\"radio.success_ratio_rx\" = [1.0, 0.9]\n",
        )
        .unwrap();
        assert_eq!(p.cells.len(), 4);
        for c in &p.cells {
            let s: &LlnScenario = c.scenario.as_any().downcast_ref().expect("a mesh cell");
            assert_eq!(s.reps, 5, "the preset's replications when the plan gives none");
            assert!(s.algorithms.is_empty());
            // the algorithm written out: the preset's Betzler readings are in it
            assert!(s.cc.starts_with(&c.params["cc"]) && s.cc.contains("vbf_low=2.5"), "{}", s.cc);
            assert_eq!(s.radio.success_ratio_rx, c.params["radio.success_ratio_rx"].parse::<f64>().unwrap());
        }
        // `preset` as a matrix key mixes kinds; reps given by the plan apply to every cell
        let q = parse_plan("reps = 2\n[matrix]\npreset = [\"thesis\", \"nitk-gst-cooja\"]\n").unwrap();
        let s: &Scenario = q.cells[0].scenario.as_any().downcast_ref().expect("a bottleneck cell");
        assert_eq!(s.reps, 2);
        let s: &LlnScenario = q.cells[1].scenario.as_any().downcast_ref().expect("a mesh cell");
        assert!(s.reps == 2 && s.name == "nitk-gst-cooja");
        assert!(parse_plan("preset = \"nope\"\n").unwrap_err().contains("unknown preset 'nope'"));
        assert!(parse_plan("preset = \"nitk-gst-cooja\"\n[matrix]\nclients = [3]\n")
            .unwrap_err()
            .contains("unknown field `clients`"));
    }

    /// `paired = true`: cells that differ only in the algorithm share their seed (bottleneck and
    /// mesh); the ids stay, the plan's identity changes; unpaired, every cell has its own seed.
    #[test]
    fn a_paired_plan_seeds_by_network() {
        let text = "[[matrices]]\ncc = [\"default\", \"fasor\", \"hedge\"]\nclients = [1, 10]\n\
                    [[matrices]]\npreset = [\"nitk-gst-cooja\"]\ncc = [\"cocoa\", \"hedge\"]\n";
        let p = parse_plan(&format!("paired = true\n{text}")).unwrap();
        let u = parse_plan(text).unwrap();
        let seed = |c: &Cell| c.scenario.clone().seed_mut().to_owned();
        let of = |plan: &Plan, cc: &str, clients: Option<&str>| {
            let c = plan
                .cells
                .iter()
                .find(|c| c.params["cc"] == cc && c.params.get("clients").map(String::as_str) == clients);
            seed(c.expect("the cell"))
        };
        for clients in [Some("1"), Some("10")] {
            assert_eq!(of(&p, "default", clients), of(&p, "fasor", clients));
            assert_eq!(of(&p, "default", clients), of(&p, "hedge", clients));
            assert_ne!(of(&u, "default", clients), of(&u, "fasor", clients));
        }
        assert_ne!(of(&p, "default", Some("1")), of(&p, "default", Some("10")));
        assert_eq!(of(&p, "cocoa", None), of(&p, "hedge", None));
        assert_ne!(of(&u, "cocoa", None), of(&u, "hedge", None));
        assert_ne!(of(&p, "cocoa", None), of(&p, "default", Some("1")));
        assert_eq!(
            p.cells.iter().map(|c| &c.id).collect::<Vec<_>>(),
            u.cells.iter().map(|c| &c.id).collect::<Vec<_>>()
        );
        assert_ne!(p.hash(), u.hash());
        assert!(parse_plan("paired = 1\n").unwrap_err().contains("paired must be true or false"));
    }

    #[test]
    fn shards_partition_the_cells() {
        let p = parse_plan("[matrix]\nclients = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n").unwrap();
        let counts: Vec<usize> = (1..=3).map(|k| p.cells.iter().filter(|c| in_shard(&c.id, k, 3)).count()).collect();
        assert_eq!(counts.iter().sum::<usize>(), 10);
        // every cell in exactly one shard
        assert!(p.cells.iter().all(|c| (1..=3).filter(|&k| in_shard(&c.id, k, 3)).count() == 1));
    }
}
