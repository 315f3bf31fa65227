//! Controllers written in Python (`coapcc.Controller` subclasses) behind coap-cc's interface.
//!
//! A class is registered under a name (`register_controller`); from then on the name works
//! wherever a built-in algorithm's does (`coapcc.sim(cc=[...])`, scenario files, plans), because
//! the name is in coap-cc's registry: its constructor (`factory::make`) finds the class in this
//! module's table and returns a `PyFactory`, whose parameters are the keyword arguments of the
//! class's `__init__` (integers, floats, booleans) and whose `build` makes an instance.
//! Registering a name again (a class redefined in a notebook) replaces the class behind it.
//!
//! Time crosses as float seconds: `now` is the run's clock (in the simulator the simulated time
//! since the run's start; on the real stack the time since the client started), every RTO
//! and RTT is in seconds. The RTOs a controller returns are kept as given
//! ([`ExchangeTimer::from_secs`]), as the built-ins' are, so a Python re-implementation of a
//! built-in gives its results to the bit. Randomness comes through the [`Rng`] the simulator
//! passes to `start` and `on_timeout`: the same ChaCha8 stream and the same draws as the
//! built-ins' (`coap_cc::rng`), so a run is reproducible from its seed.
//!
//! An exception in the Python code, or an RTO that is not a finite number of seconds > 0, stops
//! the run: it is recorded here with the run's time `t` (the first one wins), every controller
//! then gives its exchanges up at once so the replications running end quickly, and the call
//! raises `coapcc.ControllerError` with the original exception as its cause (and so its
//! traceback).

use std::sync::Arc;

use coap_cc::Algorithm;
use pyo3::prelude::*;

use class::{leak, Class, Value, CLASSES};
use factory::make;

/// Registers `class` under `name` with its parameters (name, default): `name` then works
/// wherever an algorithm's name does. A name of a built-in, or of another crate's algorithm, is
/// refused; a Python class's name is taken over by the new class.
#[pyfunction]
#[pyo3(signature = (name, class, params, source="", summary="", overrides=Vec::new()))]
pub fn register_controller(
    py: Python<'_>,
    name: &str,
    class: Py<PyAny>,
    params: Vec<(String, Bound<'_, PyAny>)>,
    source: &str,
    summary: &str,
    overrides: Vec<String>,
) -> PyResult<()> {
    let title = class.bind(py).getattr("__name__").and_then(|n| n.extract::<String>()).unwrap_or_else(|_| name.into());
    let mut typed = Vec::new();
    for (key, default) in params {
        let v = if let Ok(b) = default.downcast::<pyo3::types::PyBool>() {
            Value::Bool(b.is_true())
        } else if let Ok(i) = default.extract::<i64>() {
            Value::Int(i)
        } else if let Ok(f) = default.extract::<f64>() {
            Value::Float(f)
        } else if let Ok(s) = default.downcast::<pyo3::types::PyString>() {
            Value::Text(s.to_string())
        } else {
            return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                "{title}: parameter '{key}' has the default {default}; a controller's parameters are int, float, bool or str"
            )));
        };
        typed.push((leak(&key), v));
    }
    let has = |m: &str| overrides.iter().any(|o| o == m);
    let entry = Arc::new(Class {
        class,
        title,
        params: typed,
        on_complete: has("on_complete"),
        on_failure: has("on_failure"),
        earliest_start: has("earliest_start"),
    });
    let mut table = CLASSES.write().unwrap_or_else(|p| p.into_inner());
    if let Some(slot) = table.iter_mut().find(|(n, _)| *n == name) {
        slot.1 = entry;
        return Ok(());
    }
    // the class goes in first: registering builds its default configuration through `make`
    let name = leak(name);
    table.push((name, entry));
    drop(table);
    // a class's `defines` are written into its spec by the Python side (coapcc.controller.spec)
    let algorithm = Algorithm { name, source: leak(source), summary: leak(summary), make, defines: &[] };
    coap_cc::register(algorithm).map(drop).map_err(|e| {
        CLASSES.write().unwrap_or_else(|p| p.into_inner()).retain(|(n, _)| *n != name);
        let why = match e {
            coap_cc::RegisterError::Taken(_) => {
                format!("'{name}' names an algorithm already (`coapcc.algorithms()`): give the class another `name`")
            }
            e => e.to_string(),
        };
        pyo3::exceptions::PyValueError::new_err(why)
    })
}

mod call;
mod class;
mod factory;
mod objects;
mod run;

pub use objects::{Exchange, Rng};
pub use run::{ControllerError, Run};
