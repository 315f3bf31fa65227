//! `coapcc._native`: the Rust side of the Python package. Each function is a thin call into the
//! experiment library (`lab`), the code the command line runs too, so that Python and `coapcc`
//! give the same results; the Python module `coapcc` wraps them with pandas and Dask. Long calls release the
//! GIL. Errors become `ValueError`s with the command line's messages.

use std::path::PathBuf;

mod controller;

use lab::stop::Stop;
use lab::sweep::{self, Plan, SweepOutcome};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

fn err(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// Runs `work` on a thread of its own while this one, the interpreter's, looks for signals
/// every 20 ms (Python runs its signal handlers only on the thread that holds the GIL, and a
/// call that released it would see Ctrl-C only when it returns). When a handler raises
/// (KeyboardInterrupt), `stop` is set, the work winds down (the replications running then
/// finish and what finished is written), and the exception is raised. A controller written in
/// Python that fails stops the work too, and its `ControllerError` is raised.
fn interruptible<T: Send>(py: Python<'_>, stop: &Stop, work: impl FnOnce() -> T + Send) -> PyResult<T> {
    let run = controller::Run::begin(stop);
    let out = watch(py, stop, work);
    match run.end() {
        Some(e) => Err(e),
        None => out,
    }
}

fn watch<T: Send>(py: Python<'_>, stop: &Stop, work: impl FnOnce() -> T + Send) -> PyResult<T> {
    std::thread::scope(|scope| {
        let handle = scope.spawn(work);
        let join = |h: std::thread::ScopedJoinHandle<'_, T>| {
            h.join().map_err(|_| PyRuntimeError::new_err("coapcc: the simulation thread panicked"))
        };
        loop {
            let finished = py.allow_threads(|| {
                for _ in 0..10 {
                    if handle.is_finished() {
                        return true;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
                false
            });
            if finished {
                // joined with the GIL released: the thread may still need it to end (its Python
                // thread state is released as it exits)
                return py.allow_threads(|| join(handle));
            }
            if let Err(e) = py.check_signals() {
                stop.set();
                py.allow_threads(|| join(handle).map(drop))?;
                return Err(e);
            }
        }
    })
}

fn plan(text: &str) -> PyResult<Plan> {
    sweep::parse_plan(text).map_err(err)
}

/// The scenario's TOML text: `text`, else the named preset's, with the `keys` (a JSON object of
/// scenario keys, nested tables as objects) written over it key by key.
fn scenario_text(text: Option<String>, preset: Option<&str>, keys: Option<&str>) -> PyResult<Option<String>> {
    let base = match (text, preset) {
        (Some(t), _) => Some(t),
        (None, Some(name)) => Some(
            netsim::mesh::presets::text(name)
                .ok_or_else(|| err(format!("unknown preset '{name}' (coapcc.presets() lists them)")))?
                .to_string(),
        ),
        (None, None) => None,
    };
    let Some(keys) = keys else { return Ok(base) };
    let json: serde_json::Value = serde_json::from_str(keys).map_err(err)?;
    let toml::Value::Table(given) = toml::Value::try_from(json).map_err(|e| err(format!("scenario keys: {e}")))? else {
        return Err(err("scenario keys must be a mapping"));
    };
    let mut table: toml::Table = match &base {
        Some(t) => t.parse().map_err(|e: toml::de::Error| err(format!("scenario: {e}")))?,
        None => toml::Table::new(),
    };
    netsim::scenario::overlay(&mut table, given);
    Ok(Some(toml::to_string(&table).map_err(err)?))
}

/// A table's columns as a dict of lists (name → values), for `pandas.DataFrame`.
fn columns<'py>(py: Python<'py>, t: &lab::tables::Table) -> PyResult<Bound<'py, PyDict>> {
    use lab::tables::Column;
    let d = PyDict::new(py);
    for (name, c) in &t.columns {
        match c {
            Column::Text(v) => d.set_item(name, v)?,
            Column::Int(v) => d.set_item(name, v)?,
            Column::Float(v) => d.set_item(name, v)?,
            Column::Bool(v) => d.set_item(name, v)?,
        }
    }
    Ok(d)
}

/// Runs `coapcc sim`; returns (the summary `--json` prints, as JSON text; the tables as
/// {name: {column: values}}; the message of an incomplete run, else None). With `out`, the
/// files of `sim --out` are written there too; with `pcap`, `sim --pcap`'s captures.
#[pyfunction]
#[pyo3(signature = (origin, text=None, preset=None, keys=None, cc=Vec::new(), reps=None, seed=None, threads=None, duration=None, buffer=None, out=None, pcap=None))]
#[allow(clippy::too_many_arguments)]
fn sim<'py>(
    py: Python<'py>,
    origin: String,
    text: Option<String>,
    preset: Option<String>,
    keys: Option<String>,
    cc: Vec<String>,
    reps: Option<u32>,
    seed: Option<u64>,
    threads: Option<usize>,
    duration: Option<f64>,
    buffer: Option<u64>,
    out: Option<PathBuf>,
    pcap: Option<PathBuf>,
) -> PyResult<(String, Bound<'py, PyDict>, Option<String>)> {
    let text = scenario_text(text, preset.as_deref(), keys.as_deref())?.map(|t| (t, origin));
    let stop = Stop::default();
    let req = lab::sim::Request { text, cc, reps, seed, threads, duration, buffer, pcap, ..Default::default() };
    let outcome = interruptible(py, &stop, || {
        let o = lab::sim::run_library(&req, out.as_deref(), &stop).map_err(|e| e.to_string())?;
        let summary = serde_json::to_string(&o.summary).map_err(|e| e.to_string())?;
        Ok::<_, String>((summary, o.tables, o.incomplete))
    })?
    .map_err(err)?;
    let (summary, tables, incomplete) = outcome;
    let d = PyDict::new(py);
    for (name, t) in &tables {
        d.set_item(name, columns(py, t)?)?;
    }
    Ok((summary, d, incomplete))
}

/// `coapcc load`: real clients (this process's UDP or TCP sockets) against `server`; returns
/// the JSON `load --json` prints. The algorithm may be a Python controller's name.
#[pyfunction]
#[pyo3(signature = (server, cc=None, clients=10, exchanges=50, workload="continuous", seed=None, bind="0.0.0.0:0"))]
#[allow(clippy::too_many_arguments)]
fn load(
    py: Python<'_>,
    server: String,
    cc: Option<String>,
    clients: u32,
    exchanges: u32,
    workload: &str,
    seed: Option<u64>,
    bind: &str,
) -> PyResult<String> {
    let bind: std::net::SocketAddr =
        bind.parse().map_err(|_| err(format!("bind must be HOST:PORT with an IP address, not '{bind}'")))?;
    let workload = match workload {
        "continuous" => netsim::WorkloadKind::Continuous,
        "random" => netsim::WorkloadKind::Random,
        w => return Err(err(format!("workload must be continuous or random, not '{w}'"))),
    };
    let req =
        lab::load::Request { server, clients, exchanges, workload, cc, seed, bind, bind_each: false, deadlines: true };
    let stop = Stop::default();
    interruptible(py, &stop, || {
        let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(|e| e.to_string())?;
        let outcome = rt.block_on(async {
            let stopped = async {
                while !stop.is_set() {
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                }
            };
            lab::load::run(&req, stopped).await.map_err(|e| e.to_string())
        })?;
        serde_json::to_string(&outcome.to_json(&req)).map_err(|e| e.to_string())
    })?
    .map_err(err)
}

/// `coapcc algorithms --json`.
#[pyfunction]
fn algorithms_json() -> PyResult<String> {
    lab::algorithms::all_json().map_err(err)
}

/// `coapcc presets`: (name, description) pairs.
#[pyfunction]
fn presets() -> Vec<(String, String)> {
    netsim::mesh::presets::listed()
        .iter()
        .map(|(name, text)| (name.to_string(), netsim::mesh::presets::describe(text).to_string()))
        .collect()
}

/// A plan's hash and its cell ids, in plan order.
#[pyfunction]
fn plan_cells(text: &str) -> PyResult<(String, Vec<String>)> {
    let p = plan(text)?;
    Ok((p.hash(), p.cells.iter().map(|c| c.id.clone()).collect()))
}

/// Readies `out` for the plan (refusing another plan's directory unless `force`); returns the
/// ids of the cells not finished there yet.
#[pyfunction]
fn prepare(text: &str, out: PathBuf, force: bool) -> PyResult<Vec<String>> {
    let p = plan(text)?;
    sweep::prepare(&p, &out, force).map_err(err)?;
    Ok(p.cells.iter().filter(|c| !sweep::finished(&out, &c.id)).map(|c| c.id.clone()).collect())
}

/// Runs one cell of the plan; returns its files: (cells/ID.json text, cells/ID.clients.csv bytes).
#[pyfunction]
fn run_cell(py: Python<'_>, text: String, id: String) -> PyResult<(String, Py<PyBytes>)> {
    let run = controller::Run::begin(&Stop::default());
    let r = py.allow_threads(|| {
        let p = sweep::parse_plan(&text)?;
        sweep::run_cell_of(&p, &id).map_err(|e| e.to_string())
    });
    if let Some(e) = run.end() {
        return Err(e);
    }
    let r = r.map_err(err)?;
    Ok((r.json, PyBytes::new(py, &r.clients_csv).unbind()))
}

/// Writes a cell's files into `out` (atomically, the JSON last).
#[pyfunction]
fn store_cell(out: PathBuf, id: String, json: String, clients_csv: Vec<u8>) -> PyResult<()> {
    sweep::CellResults { id, json, clients_csv }.store(&out).map_err(err)
}

/// Ends a sweep: the tidy clients.csv and the run's metadata (run-all.json).
#[pyfunction]
fn finish(text: &str, out: PathBuf, ran: usize, skipped: usize, wall_s: f64) -> PyResult<()> {
    let p = plan(text)?;
    sweep::finish(&p, &out, None, &SweepOutcome { ran, skipped, other_shards: 0, wall_s, interrupted: 0 }).map_err(err)
}

/// `coapcc sweep` on this machine's cores; returns (cells run, cells already finished).
#[pyfunction]
#[pyo3(signature = (text, out, threads=None, force=false))]
fn sweep_local(
    py: Python<'_>,
    text: String,
    out: PathBuf,
    threads: Option<usize>,
    force: bool,
) -> PyResult<(usize, usize)> {
    let stop = Stop::default();
    interruptible(py, &stop, || {
        let p = sweep::parse_plan(&text)?;
        sweep::run(&p, &out, None, threads, force, &stop).map(|o| (o.ran, o.skipped)).map_err(|e| e.to_string())
    })?
    .map_err(err)
}

/// What is wrong with the plan's finished cells in `out`, a sentence each: (cells cut at
/// max_time_s, figures that describe almost nothing).
#[pyfunction]
fn notes(text: &str, out: PathBuf) -> PyResult<(Vec<String>, Vec<String>)> {
    let n = sweep::Notes::of(&plan(text)?, &out);
    Ok((n.truncated, n.warnings))
}

/// An RTO within [RTO_FLOOR, `cap`], NaN read as `cap`: how every built-in bounds its timers
/// (coap-cc's `clamp_rto`), so an algorithm that bounds its own with it computes as they do, to
/// the bit.
#[pyfunction]
fn clamp_rto(rto: f64, cap: f64) -> f64 {
    coap_cc::controller::clamp_rto(rto, cap)
}

/// A league's plan: `suite` (a plan's text; None: the league's own) with `extra` entrants and
/// `reps` replications (`quick`: the command line's `--quick` count).
#[pyfunction]
#[pyo3(signature = (extra, reps=None, suite=None, quick=false))]
fn league_plan(extra: Vec<String>, reps: Option<u32>, suite: Option<String>, quick: bool) -> PyResult<String> {
    let reps = if quick { Some(lab::plans::QUICK_REPS) } else { reps };
    lab::league::plan(suite.as_deref().unwrap_or(lab::league::SUITE), &extra, reps).map_err(err)
}

/// Ranks the results in `out` and writes `out/league/` and the report.
#[pyfunction]
fn league_write(py: Python<'_>, out: PathBuf) -> PyResult<()> {
    py.allow_threads(|| lab::report::write_league(&out, &out.join("report")).map(drop)).map_err(err)
}

/// The command line (`coapcc …`, argv with the program's name first), run in this process: the
/// package's `coapcc` command. Returns the exit status; `--help` and usage errors exit the
/// process from clap, as the binary does.
#[pyfunction]
fn cli(py: Python<'_>, argv: Vec<String>) -> u8 {
    py.allow_threads(|| coapcc::cli::status(argv))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("VERSION", env!("CARGO_PKG_VERSION"))?;
    m.add("RTO_FLOOR", coap_cc::controller::RTO_FLOOR)?;
    m.add_function(wrap_pyfunction!(clamp_rto, m)?)?;
    m.add_function(wrap_pyfunction!(sim, m)?)?;
    m.add_function(wrap_pyfunction!(algorithms_json, m)?)?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(plan_cells, m)?)?;
    m.add_function(wrap_pyfunction!(prepare, m)?)?;
    m.add_function(wrap_pyfunction!(run_cell, m)?)?;
    m.add_function(wrap_pyfunction!(store_cell, m)?)?;
    m.add_function(wrap_pyfunction!(finish, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_local, m)?)?;
    m.add_function(wrap_pyfunction!(notes, m)?)?;
    m.add_function(wrap_pyfunction!(cli, m)?)?;
    m.add_function(wrap_pyfunction!(league_plan, m)?)?;
    m.add_function(wrap_pyfunction!(league_write, m)?)?;
    m.add_function(wrap_pyfunction!(controller::register_controller, m)?)?;
    m.add_class::<controller::Exchange>()?;
    m.add_class::<controller::Rng>()?;
    m.add("ControllerError", m.py().get_type::<controller::ControllerError>())?;
    Ok(())
}
