//! A results directory: `plan.toml` and `plan.json` (the plan's record), each cell's files
//! written whole or not at all, the checks that tell a finished cell, the tidy per-client table,
//! and the run's metadata.

use std::path::{Path, PathBuf};

use super::plan::{parse_plan, Plan};
use super::Error;

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
    /// What `plan.json` records of `plan`.
    pub fn of(plan: &Plan) -> PlanRecord {
        PlanRecord { plan: plan.hash(), seed: plan.seed, cells: plan.cells.iter().map(|c| c.id.clone()).collect() }
    }

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
            return Ok(Some(PlanRecord::of(&plan)));
        }
        Ok(None)
    }

    /// How many of the plan's cells have finished in `dir`.
    pub fn present(&self, dir: &Path) -> usize {
        self.cells.iter().filter(|id| finished(dir, id)).count()
    }
}

/// The refusal to mix two plans' results in `dir`.
pub(super) fn other_plan(dir: &Path, theirs: &PlanRecord, ours: &PlanRecord, what: &str) -> String {
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
pub(super) fn client_columns() -> impl Iterator<Item = &'static str> {
    crate::sim::columns::CLIENT_COLUMNS.into_iter().chain(["cell"])
}

/// The last column of a cell's rows: the hash of the plan whose sweep ran it ([`Plan::hash`]),
/// which tells the plans of a directory written with `--force` apart. Not required of a cell
/// (results written before it existed stay whole); empty in the tidy table for those.
pub(super) const PLAN_COLUMN: &str = "plan";

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
    /// Cells not finished because the sweep was stopped ([`crate::stop::Stop`]).
    pub interrupted: usize,
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
    let ours = PlanRecord::of(plan);
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
    let (ours, wall_s) = (PlanRecord::of(plan), o.wall_s);
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
pub(super) fn whole_cells(dir: &Path) -> Result<Vec<String>, Error> {
    let mut ids = cell_ids(dir)?;
    ids.retain(|id| finished(dir, id));
    Ok(ids)
}

/// The ids of the cells whose JSON `dir/cells` holds, sorted (whole or not; an unfinished
/// write ends in `.tmp`, not `.json`).
pub(super) fn cell_ids(dir: &Path) -> Result<Vec<String>, Error> {
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
