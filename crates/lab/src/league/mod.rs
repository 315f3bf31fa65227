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

use crate::report::cells::CellData;
use score::{LeagueCell, Measured, Standing};

type Error = Box<dyn std::error::Error + Send + Sync>;

/// The suite's version: `plans/league.toml`'s cells, entrants and replications. A change of any
/// is a new version (docs/league.md).
pub const SUITE_VERSION: u32 = 2;

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
    if extra.is_empty() && reps.is_none() {
        return Ok(suite.to_string());
    }
    let mut doc: toml::Table = suite.parse()?;
    if let Some(r) = reps {
        crate::plans::set_reps(&mut doc, r);
    }
    for m in crate::plans::matrices_mut(&mut doc) {
        if let Some(toml::Value::Array(cc)) = m.get_mut("cc") {
            for e in extra {
                if !cc.iter().any(|c| c.as_str() == Some(e)) {
                    cc.push(toml::Value::String(e.clone()));
                }
            }
        }
    }
    Ok(toml::to_string(&doc)?)
}

/// The league of a results directory: its league cells (in plan order) and the table.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct League {
    pub cells: Vec<LeagueCell>,
    pub standings: Vec<Standing>,
}

/// A league cell's label: its plan values (`key=value`, in the plan's key order) less the
/// algorithm and the replications, which name its network.
fn network_label<'a>(params: impl Iterator<Item = (&'a str, String)>) -> String {
    let kept: Vec<String> =
        params.filter(|(k, _)| !matches!(*k, "cc" | "stack" | "reps")).map(|(k, v)| format!("{k}={v}")).collect();
    kept.join(", ")
}

/// Scores cells the report has loaded from `dir`: the cells that differ only in their algorithm
/// are one league cell, its entrants in the plan's order (that of `dir`'s plan record, else the
/// cells' ids').
pub(crate) fn score_cells(cells: &[CellData], dir: &Path) -> Result<League, Error> {
    let order: BTreeMap<String, usize> = crate::sweep::PlanRecord::of_dir(dir)?
        .map(|p| p.cells.into_iter().enumerate().map(|(i, id)| (id, i)).collect())
        .unwrap_or_default();
    let mut sorted: Vec<&CellData> = cells.iter().collect();
    // stable: cells of no record keep the ids' order, after the others
    sorted.sort_by_key(|c| order.get(&c.id).copied().unwrap_or(usize::MAX));
    let mut groups: Vec<Measured> = Vec::new();
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    for c in sorted {
        let params = c.summary["cell"]["params"].as_object().cloned().unwrap_or_default();
        let label = network_label(
            params.iter().map(|(k, x)| (k.as_str(), x.as_str().map_or_else(|| x.to_string(), str::to_string))),
        );
        let reps = c.per_rep.clone().ok_or_else(|| format!("cell {}: a mesh cell without duration_s", c.id))?;
        let g = *index.entry(label.clone()).or_insert_with(|| {
            groups.push(Measured { label, mesh: c.mesh, by_algorithm: Vec::new() });
            groups.len() - 1
        });
        groups[g].by_algorithm.push((c.algo.clone(), reps));
    }
    // the bottleneck's cells first, then the mesh's, each in plan order
    groups.sort_by_key(|g| g.mesh);
    let cells = score::rank(groups);
    let standings = score::standings(&cells);
    Ok(League { cells, standings })
}

/// Writes `dir/league/`: `cells.csv` (every algorithm in every cell), `table.csv` (the league
/// table), `league.md` (both, and the heat map as a table) and `regret.svg` (the heat map). The
/// report shows the same league first ([`crate::report::write_league`] writes both).
pub fn write_files(dir: &Path, league: &League) -> Result<(), Error> {
    let out = dir.join(DIR);
    std::fs::create_dir_all(&out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let put = |name: &str, bytes: Vec<u8>| {
        let p = out.join(name);
        crate::sweep::write_atomic(&p, &bytes).map_err(|e| format!("cannot write {}: {e}", p.display()))
    };
    put("cells.csv", render::cells_csv(&league.cells)?)?;
    put("table.csv", render::table_csv(&league.standings)?)?;
    put("regret.svg", render::heat_map(league).into_bytes())?;
    put("league.md", render::markdown(league, "regret.svg").into_bytes())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every matrix of the plan `text` lists, as its `cc`, every registered algorithm in the
    /// registry's order, then `extra`.
    fn assert_every_matrix_enters(text: &str, extra: &[&str]) {
        let doc: toml::Table = text.parse().unwrap();
        let mut want: Vec<String> = coap_cc::algorithms().iter().map(|a| a.name.to_string()).collect();
        want.extend(extra.iter().map(|e| e.to_string()));
        for m in doc["matrices"].as_array().unwrap() {
            let cc: Vec<String> = m["cc"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().into()).collect();
            assert_eq!(cc, want);
        }
    }

    /// Every registered algorithm but CoAP over TCP is an entrant of every matrix of the suite,
    /// once (an algorithm added to the registry and not to the suite shows here).
    #[test]
    fn the_suite_enters_every_algorithm_everywhere() {
        assert_every_matrix_enters(SUITE, &[]);
    }

    /// The cells outside the suite (`plans/league-outside.toml`, docs/league.md): every algorithm
    /// in every matrix, paired, and no network of the suite among them (a cell's values less its
    /// algorithm and replications name its network).
    #[test]
    fn the_cells_outside_the_suite_are_outside_it() {
        let outside = include_str!("../../../../plans/league-outside.toml");
        assert_every_matrix_enters(outside, &[]);
        let (o, s) = (crate::sweep::parse_plan(outside).unwrap(), crate::sweep::parse_plan(SUITE).unwrap());
        assert!(o.paired && s.paired);
        let networks = |p: &crate::sweep::Plan| -> std::collections::BTreeSet<String> {
            p.cells.iter().map(|c| network_label(c.params.iter().map(|(k, v)| (k.as_str(), v.clone())))).collect()
        };
        let (on, sn) = (networks(&o), networks(&s));
        assert_eq!(on.len(), 11);
        assert!(on.is_disjoint(&sn), "{:?}", on.intersection(&sn).collect::<Vec<_>>());
    }

    /// The small-buffer cells with the clients started together and spread
    /// (`plans/league-synchrony.toml`, docs/league.md, "Why the small buffer's winners win"):
    /// every algorithm and hedge with a fixed first timer in every matrix, paired; the cells
    /// started together are the suite's own (the same ids, so the same seeds and results: W2,
    /// W3 and W11 for every algorithm of the suite), the spread ones are not.
    #[test]
    fn the_synchrony_cells_started_together_are_the_suites() {
        let text = include_str!("../../../../plans/league-synchrony.toml");
        assert_every_matrix_enters(text, &["hedge:ack_random_factor=1"]);
        let (p, s) = (crate::sweep::parse_plan(text).unwrap(), crate::sweep::parse_plan(SUITE).unwrap());
        assert!(p.paired && p.seed == s.seed);
        let suite: std::collections::BTreeSet<&str> = s.cells.iter().map(|c| c.id.as_str()).collect();
        let (mut together, mut spread) = (0, 0);
        for c in &p.cells {
            let in_suite = suite.contains(c.id.as_str());
            match (c.params["start_spread_ms"].as_str(), c.params["cc"].as_str()) {
                ("0.0", "hedge:ack_random_factor=1") => assert!(!in_suite),
                ("0.0", _) => {
                    assert!(in_suite, "{:?}", c.params);
                    together += 1;
                }
                _ => {
                    assert!(!in_suite, "{:?}", c.params);
                    spread += 1;
                }
            }
        }
        let n = coap_cc::algorithms().len();
        assert_eq!((together, spread), (3 * n, 3 * (n + 1)));
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
