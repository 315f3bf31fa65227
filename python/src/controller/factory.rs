//! A registered class's configuration ([`PyFactory`]): its keyword arguments as parameters,
//! an instance per destination with its NSTART and marking.

use std::sync::Arc;

use super::class::{class_of, Class, Value};
use coap_cc::algorithms::rtt_coap::RTT_COAP_OPTION;
use coap_cc::marking::{MarkingKind, MarkingState, TRANSMISSION_NUMBER_OPTION};
use coap_cc::params::{ParamInfo, Params, SetError};
use coap_cc::{Completion, ControllerFactory, ExchangeTimer, Marking};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// A Python algorithm's configuration: its class and its parameters' values.
#[derive(Debug, Clone)]
pub(super) struct PyFactory {
    pub(super) class: Option<Arc<Class>>,
    pub(super) values: Vec<Value>,
}

impl Params for PyFactory {
    fn set(&mut self, key: &str, value: &str) -> Result<(), SetError> {
        let Some(class) = &self.class else { return Err(SetError::Unknown) };
        let i = class.params.iter().position(|p| p.0 == key).ok_or(SetError::Unknown)?;
        self.values[i] = self.values[i].parse(value)?;
        Ok(())
    }
    fn describe(&self, f: &mut dyn FnMut(ParamInfo<'_>)) {
        if let Some(class) = &self.class {
            for ((name, _), value) in class.params.iter().zip(&self.values) {
                f(ParamInfo { name, value, doc: "a keyword argument of the class's __init__" });
            }
        }
    }
}

/// How a Python controller numbers its transmissions (its class's `marking`): as coap-cc's
/// markings do (`none`, `token`, `option` with its probe), or with RTT-CoAP's transmission counter
/// (`counter`: critical option 65001 on every request, no probe; the server must know it).
#[derive(Debug, Clone, Copy)]
pub(super) enum PyMarking {
    /// coap-cc's marking and what its probe learnt.
    Numbered(MarkingState),
    /// RTT-CoAP's counter.
    Counter,
}

impl PyMarking {
    /// coap-cc's marking of `kind` (its option: the transmission-number option).
    pub(super) fn numbered(kind: MarkingKind) -> PyMarking {
        PyMarking::Numbered(MarkingState::new(kind, TRANSMISSION_NUMBER_OPTION))
    }
    pub(super) fn next(&self) -> Marking {
        match self {
            PyMarking::Numbered(m) => m.next(),
            PyMarking::Counter => Marking::Option { number: RTT_COAP_OPTION, probe: false },
        }
    }
    pub(super) fn active(&self) -> bool {
        match self {
            PyMarking::Numbered(m) => m.active(),
            PyMarking::Counter => true,
        }
    }
    pub(super) fn observe(&mut self, ex: &ExchangeTimer, done: &Completion<'_>) {
        if let PyMarking::Numbered(m) = self {
            m.observe(ex, done);
        }
    }
}

impl PyFactory {
    /// An instance of the class with these parameters, its NSTART and how it numbers
    /// transmissions (its `marking`).
    pub(super) fn instance(&self, py: Python<'_>, class: &Class) -> PyResult<(Py<PyAny>, usize, PyMarking)> {
        let kwargs = PyDict::new(py);
        for ((key, _), v) in class.params.iter().zip(&self.values) {
            kwargs.set_item(*key, v.to_object(py)?)?;
        }
        let obj = class.class.bind(py).call((), Some(&kwargs))?;
        if let Some(why) = hidden_method(&obj, &class.title, RUN_METHODS.iter().chain(&REPORT_METHODS)) {
            return Err(pyo3::exceptions::PyTypeError::new_err(why));
        }
        let nstart = match obj.getattr("nstart") {
            Ok(n) => nstart_of(&n).map_err(|why| {
                pyo3::exceptions::PyValueError::new_err(format!("{}.nstart is {n}: {why}", class.title))
            })?,
            Err(_) => 1,
        };
        let marking = match obj.getattr("marking") {
            Ok(m) => match m.extract::<String>().ok().as_deref() {
                Some("counter") => PyMarking::Counter,
                text => PyMarking::numbered(
                    text.and_then(<MarkingKind as coap_cc::params::ParamValue>::parse).ok_or_else(|| {
                        pyo3::exceptions::PyValueError::new_err(format!(
                            "{}.marking is {m}: \"none\", \"token\", \"option\" or \"counter\"",
                            class.title
                        ))
                    })?,
                ),
            },
            Err(_) => PyMarking::numbered(MarkingKind::None),
        };
        Ok((obj.unbind(), nstart, marking))
    }
}

/// The methods the reports call (`metrics`), which no run's call would find hidden.
pub(super) const REPORT_METHODS: [&str; 2] = ["current_rto", "srtt"];

/// The methods of `coapcc.Controller` a run calls.
pub(super) const RUN_METHODS: [&str; 5] = ["start", "on_timeout", "on_complete", "on_failure", "earliest_start"];

/// Why an instance cannot be called as a controller: an attribute that hides one of `methods`
/// (`self.srtt = 0.5` had silently made the reports' SRTT empty), else `None`.
pub(super) fn hidden_method<'m>(
    obj: &Bound<'_, PyAny>,
    title: &str,
    methods: impl IntoIterator<Item = &'m &'m str>,
) -> Option<String> {
    methods.into_iter().find_map(|m| match obj.getattr(*m) {
        Ok(v) if !v.is_callable() => Some(format!(
            "{title}.{m} is {v}, which hides the Controller method {m}(): give the attribute another name (e.g. _{m})"
        )),
        _ => None,
    })
}

/// The largest NSTART a controller may ask for: more exchanges outstanding at once to one server
/// than any source contemplates (RFC 7252's is 1), far below what would exhaust Message IDs.
pub const MAX_NSTART: usize = 1024;

/// The longest RTO a Python controller may return, s (an hour: a timer beyond it is no
/// retransmission timer, and a real-network run would wait it out).
pub const MAX_RTO: f64 = 3600.0;

/// A controller's `nstart` attribute: a whole number (not a bool) from 1 to [`MAX_NSTART`].
pub(super) fn nstart_of(n: &Bound<'_, PyAny>) -> Result<usize, String> {
    let rule = format!("NSTART must be a whole number from 1 to {MAX_NSTART}");
    if n.is_instance_of::<pyo3::types::PyBool>() {
        return Err(rule);
    }
    match n.extract::<i128>() {
        Ok(v) if (1..=MAX_NSTART as i128).contains(&v) => Ok(v as usize),
        _ => Err(rule),
    }
}

/// coap-cc's constructor of every Python algorithm: the class registered under `name`.
pub(super) fn make(name: &'static str) -> Box<dyn ControllerFactory> {
    let class = class_of(name);
    let values = class.as_ref().map_or_else(Vec::new, |c| c.params.iter().map(|p| p.1.clone()).collect());
    Box::new(PyFactory { class, values })
}
