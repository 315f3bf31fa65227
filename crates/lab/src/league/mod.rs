//! The league (`coapcc league`): every algorithm on every network of a fixed, versioned suite
//! (`plans/league.toml`), ranked by how far each falls behind the best of each cell.
//!
//! The suite is an ordinary sweep plan, so a league run is a sweep: resumable, shardable, on Dask
//! from Python. This module builds the plan (the suite with its entrants and replications),
//! [`score`]s a results directory (any sweep's: the cells that differ only in their algorithm
//! are one league cell) and [`render`]s the league table, the heat map of regret and the tidy
//! CSVs into `OUT/league/`.

pub mod render;
pub mod score;

use std::collections::BTreeMap;
use std::path::Path;

use score::{ClientRow, LeagueCell, Measured, Standing};

type Error = Box<dyn std::error::Error + Send + Sync>;

/// The suite's version: `plans/league.toml`'s cells, entrants and replications. A change of any
/// is a new version (docs/league.md).
pub const SUITE_VERSION: u32 = 1;

/// The suite as the repository holds it.
pub const SUITE: &str = include_str!("../../../../plans/league.toml");

/// The folder of a results directory the league writes (its presence also makes the report
/// show the league).
pub const DIR: &str = "league";

/// A suite's plan (`suite`: a plan's text, [`SUITE`] the league's) with `extra` entrants added to
/// every matrix that lists algorithms (built-ins of other parameters, or algorithms registered by
/// a program) and `reps` replications (the suite's ratios kept: in [`SUITE`], `reps = 3` gives the
/// error cells 6).
pub fn plan(suite: &str, extra: &[String], reps: Option<u32>) -> Result<String, Error> {
    let mut doc: toml::Table = suite.parse()?;
    let base = doc.get("reps").and_then(toml::Value::as_integer).unwrap_or(1);
    if let Some(r) = reps {
        doc.insert("reps".into(), toml::Value::Integer(i64::from(r)));
    }
    for m in doc.get_mut("matrices").and_then(|m| m.as_array_mut()).into_iter().flatten() {
        let Some(m) = m.as_table_mut() else { continue };
        if let Some(toml::Value::Array(cc)) = m.get_mut("cc") {
            for e in extra {
                if !cc.iter().any(|c| c.as_str() == Some(e)) {
                    cc.push(toml::Value::String(e.clone()));
                }
            }
        }
        if let (Some(r), Some(toml::Value::Array(own))) = (reps, m.get_mut("reps")) {
            for v in own.iter_mut() {
                if let Some(n) = v.as_integer() {
                    // the suite's ratio, at least one
                    *v = toml::Value::Integer((n * i64::from(r) / base).max(1));
                }
            }
        }
    }
    if extra.is_empty() && reps.is_none() {
        return Ok(suite.to_string());
    }
    Ok(toml::to_string(&doc)?)
}

/// The league of a results directory: its league cells (in plan order) and the table.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct League {
    pub cells: Vec<LeagueCell>,
    pub standings: Vec<Standing>,
}

/// Scores the finished cells of `dir` (a sweep's results directory).
pub fn score(dir: &Path) -> Result<League, Error> {
    // plan order where the directory records it, else the ids' order
    let order: Vec<String> = match crate::sweep::PlanRecord::of_dir(dir)? {
        Some(p) => p.cells,
        None => Vec::new(),
    };
    let cells_dir = dir.join("cells");
    let mut ids: Vec<String> = order.into_iter().filter(|id| crate::sweep::finished(dir, id)).collect();
    let mut others: Vec<String> = std::fs::read_dir(&cells_dir)
        .map_err(|e| format!("{}: {e} (not a results directory of coapcc sweep?)", cells_dir.display()))?
        .filter_map(|e| e.ok()?.file_name().to_str()?.strip_suffix(".json").map(str::to_string))
        .filter(|id| !ids.contains(id))
        .collect();
    others.sort();
    ids.extend(others);
    // league cell (parameters less the algorithm) → algorithm → replications
    let mut groups: Vec<Measured> = Vec::new();
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    for id in &ids {
        crate::sweep::check_cell(dir, id)
            .map_err(|why| format!("broken results: {why}; run the sweep again to run the cell again"))?;
        let path = cells_dir.join(format!("{id}.json"));
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path)?).map_err(|e| format!("{}: {e}", path.display()))?;
        let params = v["cell"]["params"].as_object().cloned().unwrap_or_default();
        let text = |x: &serde_json::Value| x.as_str().map_or_else(|| x.to_string(), str::to_string);
        let algorithm =
            params.get("stack").or(params.get("cc")).map(text).unwrap_or_else(|| crate::sim::stack_of(&v["scenario"]));
        let label: Vec<String> = params
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "cc" | "stack" | "reps"))
            .map(|(k, x)| format!("{k}={}", text(x)))
            .collect();
        let label = label.join(", ");
        let mesh = v["scenario"]["env"].as_str() == Some("lln");
        let duration = if mesh {
            Some(
                v["duration_s"]
                    .as_f64()
                    .ok_or_else(|| format!("{}: a mesh cell without duration_s", path.display()))?,
            )
        } else {
            None
        };
        let rows: Vec<ClientRow> = score::read_rows(&cells_dir.join(format!("{id}.clients.csv")))?;
        let reps = score::reps(&rows, duration);
        let g = *index.entry(label.clone()).or_insert_with(|| {
            groups.push(Measured { label: label.clone(), mesh, by_algorithm: Vec::new() });
            groups.len() - 1
        });
        groups[g].by_algorithm.push((algorithm, reps));
    }
    // the bottleneck's cells first, then the mesh's, each in plan order
    groups.sort_by_key(|g| g.mesh);
    let cells = score::rank(groups);
    let standings = score::standings(&cells);
    Ok(League { cells, standings })
}

/// Scores `dir` and writes `dir/league/`: `cells.csv` (every algorithm in every cell),
/// `table.csv` (the league table), `league.md` (both, and the heat map as a table) and
/// `regret.svg` (the heat map).
pub fn write(dir: &Path) -> Result<League, Error> {
    let league = score(dir)?;
    if league.cells.is_empty() {
        return Err(format!("{}: no finished cells to rank", dir.display()).into());
    }
    let out = dir.join(DIR);
    std::fs::create_dir_all(&out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let put = |name: &str, bytes: Vec<u8>| {
        let p = out.join(name);
        crate::sweep::write_atomic(&p, &bytes).map_err(|e| format!("cannot write {}: {e}", p.display()))
    };
    put("cells.csv", render::cells_csv(&league.cells)?)?;
    put("table.csv", render::table_csv(&league.standings)?)?;
    put("regret.svg", render::heat_map(&league).into_bytes())?;
    put("league.md", render::markdown(&league, "regret.svg").into_bytes())?;
    Ok(league)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every registered algorithm but CoAP over TCP is an entrant of every matrix of the suite,
    /// once (an algorithm added to the registry and not to the suite shows here).
    #[test]
    fn the_suite_enters_every_algorithm_everywhere() {
        let doc: toml::Table = SUITE.parse().unwrap();
        let want: Vec<String> = coap_cc::algorithms().iter().map(|a| a.name.to_string()).collect();
        for m in doc["matrices"].as_array().unwrap() {
            let cc: Vec<String> = m["cc"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().into()).collect();
            assert_eq!(cc, want);
        }
    }

    #[test]
    fn entrants_and_replications_apply_to_every_matrix() {
        let p = crate::sweep::parse_plan(&plan(SUITE, &["fasor:dither=false".into()], Some(3)).unwrap()).unwrap();
        let untouched = crate::sweep::parse_plan(&plan(SUITE, &[], None).unwrap()).unwrap();
        let entrants = coap_cc::algorithms().len();
        // one more entrant in every league cell
        assert_eq!(p.cells.len(), untouched.cells.len() / entrants * (entrants + 1));
        // the suite's own counts: 10 (wired), 20 (errors), 15 (mesh), 5 (RTT-CoAP) → 3, 6, 4, 1
        let mut counts = std::collections::BTreeSet::new();
        for c in &p.cells {
            counts.insert(c.scenario.reps());
        }
        assert_eq!(counts.into_iter().collect::<Vec<_>>(), [1, 3, 4, 6]);
        assert_eq!(plan(SUITE, &[], None).unwrap(), SUITE);
    }
}
