//! The result tables in memory, as typed columns: what `sim --out` writes as CSV (clients.csv,
//! exchanges.csv, rto.csv, and a mesh run's nodes.csv), for callers that build data frames
//! directly (the Python package) instead of reading the files back.
//!
//! The same rows and columns as the files, by the same rules (a mesh client is named by its node
//! id). Times are seconds as `f64` computed from the integer nanoseconds (the files print them
//! with 9 decimals, which reads back as the same `f64`); a missing value (no FCT, a failed
//! exchange's RTT, a mote without a parent) is NaN, as a CSV reader makes of an empty field.
//! Mote positions keep their full precision (the files round them to 4 decimals).

use netsim::mesh::MeshScenario;
use netsim::{NetworkReport, Scenario};

use crate::sim::columns::{
    cc_columns, client_cells, exchange_cells, rto_cells, Cell, CLIENT_COLUMNS, EXCHANGE_COLUMNS, RTO_COLUMNS,
};
use crate::sim::runner::Run;

/// One column's values.
#[derive(Debug, Clone, PartialEq)]
pub enum Column {
    /// Text.
    Text(Vec<String>),
    /// Whole numbers.
    Int(Vec<i64>),
    /// Numbers; NaN where the value is missing.
    Float(Vec<f64>),
    /// Flags.
    Bool(Vec<bool>),
}

/// A table: its columns, in the CSV file's order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Table {
    /// (name, values), every column as long as the others.
    pub columns: Vec<(&'static str, Column)>,
}

impl Table {
    fn with(names: &[&'static str], kinds: &[fn() -> Column]) -> Self {
        Table { columns: names.iter().zip(kinds).map(|(n, k)| (*n, k())).collect() }
    }
    fn text(&mut self, i: usize, v: String) {
        if let Column::Text(c) = &mut self.columns[i].1 {
            c.push(v);
        }
    }
    fn int(&mut self, i: usize, v: i64) {
        if let Column::Int(c) = &mut self.columns[i].1 {
            c.push(v);
        }
    }
    fn float(&mut self, i: usize, v: f64) {
        if let Column::Float(c) = &mut self.columns[i].1 {
            c.push(v);
        }
    }
    fn bool(&mut self, i: usize, v: bool) {
        if let Column::Bool(c) = &mut self.columns[i].1 {
            c.push(v);
        }
    }
    /// Rows.
    pub fn len(&self) -> usize {
        self.columns.first().map_or(0, |(_, c)| match c {
            Column::Text(v) => v.len(),
            Column::Int(v) => v.len(),
            Column::Float(v) => v.len(),
            Column::Bool(v) => v.len(),
        })
    }
    /// No rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn text() -> Column {
    Column::Text(Vec::new())
}
fn int() -> Column {
    Column::Int(Vec::new())
}
fn float() -> Column {
    Column::Float(Vec::new())
}
fn flag() -> Column {
    Column::Bool(Vec::new())
}

fn names(tail: &[&'static str]) -> Vec<&'static str> {
    ["cc", "cc_params"].into_iter().chain(tail.iter().copied()).collect()
}

/// The tables of a bottleneck's runs: `clients`, `exchanges`, `rto`. Exchanges and RTOs need the
/// runs' per-exchange records ([`netsim::Detail::Exchanges`]).
pub fn bottleneck(runs: &[Run<Scenario>]) -> Vec<(&'static str, Table)> {
    common(runs, |c| c)
}

/// The tables of a mesh's runs: the bottleneck's, its clients named by node id, and `nodes`.
pub fn mesh(runs: &[Run<MeshScenario>]) -> Vec<(&'static str, Table)> {
    let mut t = common(runs, |c| c + 1);
    t.push(("nodes", nodes(runs)));
    t
}

/// The tables of a registered world's runs (their scenarios as JSON), each client named by
/// `label`.
pub fn registered(runs: &[Run<serde_json::Value>], label: impl Fn(u32) -> u32) -> Vec<(&'static str, Table)> {
    common(runs, label)
}

/// A scenario kind's runs: what each calls its stack (the bottleneck's may be TCP; the mesh's
/// is always `cc`).
trait Named {
    fn cc(&self) -> String;
}
impl Named for Scenario {
    fn cc(&self) -> String {
        self.stack()
    }
}
impl Named for serde_json::Value {
    fn cc(&self) -> String {
        crate::sim::columns::stack_of(self)
    }
}
impl Named for MeshScenario {
    fn cc(&self) -> String {
        self.cc.clone()
    }
}

fn common<S: Named>(runs: &[Run<S>], name: impl Fn(u32) -> u32) -> Vec<(&'static str, Table)> {
    let mut clients = Table::with(&names(&CLIENT_COLUMNS), &[text, text, int, int, float, int, int, int, int, float]);
    let mut exchanges =
        Table::with(&names(&EXCHANGE_COLUMNS), &[text, text, int, int, int, float, float, int, int, int]);
    let mut rto = Table::with(&names(&RTO_COLUMNS), &[text, text, int, int, int, float, float, flag]);
    for r in runs {
        let [cc, params] = cc_columns(&r.scenario.cc());
        for rep in &r.reps {
            for c in &rep.clients {
                push_row(&mut clients, &cc, &params, &client_cells(rep.rep, name(c.client), c));
            }
            for e in &rep.exchanges {
                push_row(&mut exchanges, &cc, &params, &exchange_cells(rep.rep, name(e.client), e));
                for row in rto_cells(rep.rep, name(e.client), e) {
                    push_row(&mut rto, &cc, &params, &row);
                }
            }
        }
    }
    vec![("clients", clients), ("exchanges", exchanges), ("rto", rto)]
}

/// Appends a row: the `cc` columns, then `cells` in the columns after them.
fn push_row(t: &mut Table, cc: &str, params: &str, cells: &[Cell]) {
    t.text(0, cc.to_string());
    t.text(1, params.to_string());
    for (i, &c) in cells.iter().enumerate() {
        match c {
            Cell::Int(v) => t.int(i + 2, v),
            Cell::Secs(ns) => t.float(i + 2, ns.map_or(f64::NAN, |ns| ns as f64 / 1e9)),
            Cell::Flag(v) => t.bool(i + 2, v),
        }
    }
}

/// The columns of nodes.csv.
pub const NODE_COLUMNS: [&str; 17] = [
    "rep",
    "node",
    "role",
    "x",
    "y",
    "parent",
    "rank",
    "originated",
    "forwarded",
    "delivered",
    "frames_sent",
    "frames_received",
    "drops",
    "radio_on_ns",
    "rpl_frames_sent",
    "rpl_frames_received",
    "rpl_dropped",
];

fn nodes(runs: &[Run<MeshScenario>]) -> Table {
    let kinds: [fn() -> Column; 19] =
        [text, text, int, int, text, float, float, int, int, int, int, int, int, int, int, int, int, int, int];
    let mut t = Table::with(&names(&NODE_COLUMNS), &kinds);
    // parent and rank: whole numbers, or missing (the root has no parent, a mote off the tree
    // neither): set at the end, as numbers with NaN if any is missing (as a CSV reader makes them)
    let (mut parents, mut ranks) = (Vec::new(), Vec::new());
    for r in runs {
        let [cc, params] = cc_columns(&r.scenario.cc);
        for rep in &r.reps {
            let NetworkReport::Mesh(m) = &rep.network else { continue };
            for n in &m.report.nodes {
                t.text(0, cc.clone());
                t.text(1, params.clone());
                t.int(2, i64::from(rep.rep));
                t.int(3, n.id as i64);
                t.text(
                    4,
                    serde_json::to_value(n.role).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default(),
                );
                t.float(5, n.x);
                t.float(6, n.y);
                parents.push(n.parent.map(|p| p as i64));
                ranks.push(n.rank.map(|r| r as i64));
                for (i, v) in node_counts(n, m.duration_ns).into_iter().enumerate() {
                    t.int(9 + i, v as i64);
                }
            }
        }
    }
    t.columns[7].1 = optional(parents);
    t.columns[8].1 = optional(ranks);
    t
}

/// A mote's counts, the last ten columns of [`NODE_COLUMNS`] (nodes.csv writes the same).
pub(crate) fn node_counts(n: &netmodel::mesh::NodeReport, run_ns: u64) -> [u64; 10] {
    let st = &n.stats;
    [
        st.originated,
        st.forwarded,
        st.delivered,
        st.frames_sent,
        st.frames_received,
        st.drops.total(),
        // nullrdc: the radio is always on
        if st.radio_on_ns > 0 { st.radio_on_ns } else { run_ns },
        st.rpl_frames_sent,
        st.rpl_frames_received,
        st.rpl_dropped,
    ]
}

/// Whole numbers, or numbers with NaN when any is missing.
fn optional(v: Vec<Option<i64>>) -> Column {
    if v.iter().all(Option::is_some) {
        Column::Int(v.into_iter().flatten().collect())
    } else {
        Column::Float(v.into_iter().map(|x| x.map_or(f64::NAN, |x| x as f64)).collect())
    }
}
