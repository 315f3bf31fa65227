//! The report's data: the finished cells of a results directory as the report, the published
//! figures and the league read them (one pass over each cell's summary and client rows), and the
//! statistics every section computes from them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use runstats::quantile;

use super::Error;

/// A figure: workload, clients, (severity rank, error profile), other varied parameters.
pub(crate) type GroupKey = (String, u64, (usize, String), String);

/// One cell as the report needs it.
#[derive(Debug, Clone)]
pub(crate) struct CellData {
    pub(crate) id: String,
    pub(crate) algo: String,
    /// A mesh cell (`env = "lln"`): drawn by [`super::mesh`].
    pub(crate) mesh: bool,
    /// A world registered by another crate: its title (its cells have no bottleneck's keys).
    pub(crate) world: Option<&'static str>,
    pub(crate) workload: String,
    pub(crate) buffer: u64,
    pub(crate) clients: u64,
    pub(crate) errors: String,
    /// The plan's parameters other than the algorithm and the figure's axes.
    pub(crate) extra: BTreeMap<String, String>,
    pub(crate) reps: u64,
    pub(crate) summary: serde_json::Value,
    /// Every client's FCT over all replications, sorted.
    pub(crate) fcts: Vec<f64>,
    /// A mesh burst's completion times (the summary's `burst_completion_s`), sorted, then one
    /// infinity for each burst client that did not finish (`burst_clients` in all).
    pub(crate) burst: Vec<f64>,
    pub(crate) dups: Vec<f64>,
    /// Each replication's figures as the league ranks them (None: not loaded for a league, or a
    /// mesh cell without `duration_s`, which has no rate).
    pub(crate) per_rep: Option<Vec<crate::league::score::Rep>>,
}

impl CellData {
    /// The figure this cell belongs to (error profiles ordered by severity).
    pub(crate) fn group(&self) -> GroupKey {
        let extra: Vec<String> = self.extra.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let rank = ["none", "low", "medium", "high", "custom"].iter().position(|e| *e == self.errors).unwrap_or(9);
        (self.workload.clone(), self.clients, (rank, self.errors.clone()), extra.join(", "))
    }
}

/// The finished cells of `dir`; with `league`, each with its replications' figures as the league
/// ranks them (read in the same pass over the clients' rows).
pub(crate) fn load(dir: &Path, league: bool) -> Result<Vec<CellData>, Error> {
    let cells_dir = dir.join("cells");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&cells_dir)
        .map_err(|e| format!("{}: {e} (not a results directory of coapcc sweep?)", cells_dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    let mut cells = Vec::new();
    for p in paths {
        let Some(stem) = p.file_stem().and_then(|s| s.to_str()) else { continue };
        crate::sweep::check_cell(dir, stem)
            .map_err(|why| format!("broken results: {why}; run the sweep again to run the cell again"))?;
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&p)?).map_err(|e| format!("{}: {e}", p.display()))?;
        let s = &v["scenario"];
        let params = v["cell"]["params"].as_object().cloned().unwrap_or_default();
        let id = v["cell"]["id"].as_str().unwrap_or_default().to_string();
        // the algorithm as the plan wrote it (`stack` or `cc`), else the resolved one's name
        let stack = crate::sim::columns::stack_of(s);
        let written = params.get("stack").or(params.get("cc")).and_then(|x| x.as_str());
        let algo = written.unwrap_or_else(|| stack.split(':').next().unwrap_or(&stack)).to_string();
        let extra = params
            .iter()
            .filter(|(k, _)| {
                !matches!(k.as_str(), "stack" | "cc" | "buffer" | "reps" | "workload" | "clients" | "errors")
            })
            .filter(|(k, _)| !k.ends_with("buffer_bytes"))
            .map(|(k, v)| (k.clone(), v.as_str().map_or_else(|| v.to_string(), str::to_string)))
            .collect();
        let (mut fcts, mut dups, mut rows) = (Vec::new(), Vec::new(), Vec::new());
        let csv_path = cells_dir.join(format!("{id}.clients.csv"));
        {
            let named = |e: csv::Error| format!("{}: {e}", csv_path.display());
            let mut r = csv::Reader::from_path(&csv_path).map_err(named)?;
            let h = r.headers().map_err(named)?.clone();
            let col = |name: &str| h.iter().position(|x| x == name);
            let (fi, di) = (col("fct_s"), col("duplicates"));
            // check_cell made sure these exist
            let counts = [col("rep"), col("exchanges"), col("failed"), col("retransmissions")];
            for row in r.records() {
                let row = row.map_err(named)?;
                let fct = fi.and_then(|i| row.get(i)).and_then(|x| x.parse::<f64>().ok());
                fcts.extend(fct);
                if let Some(d) = di.and_then(|i| row.get(i)).and_then(|x| x.parse::<f64>().ok()) {
                    dups.push(d);
                }
                if !league {
                    continue;
                }
                let [rep, exchanges, failed, retransmissions] = counts.map(|i| {
                    let x = i.and_then(|i| row.get(i)).unwrap_or_default();
                    x.parse::<u64>().map_err(|_| format!("{}: '{x}' is not a count", csv_path.display()))
                });
                rows.push(crate::league::score::ClientRow {
                    rep: rep? as u32,
                    fct_s: fct,
                    exchanges: exchanges?,
                    failed: failed?,
                    retransmissions: retransmissions?,
                });
            }
        }
        // the mesh's cells have a section of their own; any other world's are drawn as the
        // bottleneck's are, under its title
        let mesh_env = netsim::worlds::World::env(&netsim::worlds::Mesh);
        let mesh = s["env"].as_str() == Some(mesh_env);
        let world = match s["env"].as_str() {
            Some(env) if env != mesh_env => {
                netsim::worlds::all().into_iter().find(|w| w.env() == env).map(|w| w.title())
            }
            _ => None,
        };
        let per_rep = if !league {
            None
        } else if mesh {
            v["duration_s"].as_f64().map(|d| crate::league::score::reps(&rows, Some(d)))
        } else {
            Some(crate::league::score::reps(&rows, None))
        };
        fcts.sort_by(f64::total_cmp);
        dups.sort_by(f64::total_cmp);
        let mut burst: Vec<f64> =
            v["burst_completion_s"].as_array().into_iter().flatten().filter_map(|x| x.as_f64()).collect();
        let all = v["burst_clients"].as_u64().unwrap_or(0) as usize;
        burst.resize(all.max(burst.len()), f64::INFINITY);
        cells.push(CellData {
            id,
            algo,
            mesh,
            world,
            workload: s["workload"].as_str().or(world).unwrap_or("?").to_string(),
            buffer: s["downlink"]["buffer_bytes"].as_u64().unwrap_or(0),
            clients: s["clients"].as_u64().unwrap_or(0),
            errors: s["errors"].as_str().unwrap_or("none").to_string(),
            extra,
            reps: s["reps"].as_u64().unwrap_or(0),
            summary: v,
            fcts,
            burst,
            dups,
            per_rep,
        });
    }
    Ok(cells)
}

pub(crate) fn buffer_label(b: u64) -> String {
    if b >= 1_000_000 {
        format!("{b} B (infinite)")
    } else {
        format!("{b} B")
    }
}

/// p10, p25, median, p75, p90 of sorted values.
pub(crate) fn five(v: &[f64]) -> [f64; 5] {
    [quantile(v, 0.10), quantile(v, 0.25), quantile(v, 0.5), quantile(v, 0.75), quantile(v, 0.90)]
}

pub(crate) fn num(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN)
}
