//! What `sim --out` writes: summary.json and the chosen CSV tables.

use std::path::Path;

use serde::Serialize;

use super::columns::{cc_columns, client_row, write_exchange, CLIENT_COLUMNS, EXCHANGE_COLUMNS, RTO_COLUMNS};
use super::runner::{to_json, Run};

type Error = Box<dyn std::error::Error>;

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

/// Writes summary.json and the chosen tables of `runs` into `dir`: each run's `cc` columns from
/// `cc` (its resolved stack), each client named by `label` (its host index → the name its
/// world gives it: a mesh's node id).
pub(crate) fn write_runs<S: Serialize>(
    dir: &Path,
    runs: &[Run<S>],
    tables: Tables,
    cc: impl Fn(&S) -> String,
    label: impl Fn(u32) -> u32,
) -> Result<(), Error> {
    write_summary(dir, runs)?;
    let mut clients = Tables::writer(tables.clients, dir, "clients.csv", &CLIENT_COLUMNS)?;
    let mut exchanges = Tables::writer(tables.exchanges, dir, "exchanges.csv", &EXCHANGE_COLUMNS)?;
    let mut rto = Tables::writer(tables.rto, dir, "rto.csv", &RTO_COLUMNS)?;
    for r in runs {
        let cc = cc_columns(&cc(&r.scenario));
        for rep in &r.reps {
            for c in &rep.clients {
                clients.write_record(cc.iter().cloned().chain(client_row(rep.rep, label(c.client), c)))?;
            }
            for e in &rep.exchanges {
                write_exchange(&mut exchanges, &mut rto, &cc, rep.rep, label(e.client), e)?;
            }
        }
    }
    clients.flush()?;
    exchanges.flush()?;
    rto.flush()?;
    Ok(())
}
