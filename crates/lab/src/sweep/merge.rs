//! `coapcc merge`: the finished cells of shard directories copied into one, every input checked
//! before anything is written.

use std::path::{Path, PathBuf};

use super::store::{cell_ids, check_cell, finished, other_plan, rebuild_clients_csv, write_atomic, PlanRecord};
use super::Error;

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
