//! The registered Python classes: each one's parameters ([`Value`]s) and the table of them.

use std::fmt;
use std::sync::{Arc, Mutex, RwLock};

use coap_cc::params::SetError;
use pyo3::prelude::*;

/// A keyword argument of a controller class, with its type and value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `int`.
    Int(i64),
    /// `float`.
    Float(f64),
    /// `bool`.
    Bool(bool),
    /// `str` (a choice among words, as a built-in's `vbf_from = overall`).
    Text(String),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(v) => write!(f, "{v}"),
            Value::Float(v) => write!(f, "{v}"),
            Value::Bool(v) => write!(f, "{v}"),
            Value::Text(v) => f.write_str(v),
        }
    }
}

impl Value {
    /// `text` read as a value of this one's type.
    pub(super) fn parse(&self, text: &str) -> Result<Value, SetError> {
        let bad = |expected| SetError::BadValue { expected };
        match self {
            Value::Int(_) => text.parse().map(Value::Int).map_err(|_| bad("an integer")),
            Value::Float(_) => {
                text.parse::<f64>().ok().filter(|v| v.is_finite()).map(Value::Float).ok_or(bad("a finite number"))
            }
            Value::Bool(_) => text.parse().map(Value::Bool).map_err(|_| bad("true or false")),
            Value::Text(_) => Ok(Value::Text(text.to_string())),
        }
    }

    pub(super) fn to_object(&self, py: Python<'_>) -> PyResult<PyObject> {
        Ok(match self {
            Value::Int(v) => v.into_pyobject(py)?.into_any().unbind(),
            Value::Float(v) => v.into_pyobject(py)?.into_any().unbind(),
            Value::Bool(v) => pyo3::types::PyBool::new(py, *v).to_owned().into_any().unbind(),
            Value::Text(v) => v.into_pyobject(py)?.into_any().unbind(),
        })
    }
}

/// A registered class: the class object and its parameters' names and defaults.
pub(super) struct Class {
    pub(super) class: Py<PyAny>,
    /// The class's own name, for messages.
    pub(super) title: String,
    pub(super) params: Vec<(&'static str, Value)>,
    /// It defines `on_complete` and `on_failure` itself (the base class's do nothing, and
    /// are not called: a call into Python is the cost of a Python algorithm).
    pub(super) on_complete: bool,
    pub(super) on_failure: bool,
    /// It defines `earliest_start` (pacing) itself.
    pub(super) earliest_start: bool,
}

impl fmt::Debug for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Class").field("title", &self.title).field("params", &self.params).finish()
    }
}

/// Every registered class by name (bounded by what the program registers).
pub(super) static CLASSES: RwLock<Vec<(&'static str, Arc<Class>)>> = RwLock::new(Vec::new());

pub(super) fn class_of(name: &str) -> Option<Arc<Class>> {
    let table = CLASSES.read().unwrap_or_else(|p| p.into_inner());
    table.iter().find(|(n, _)| *n == name).map(|(_, c)| Arc::clone(c))
}

/// A string that lives until the process ends (the registry's names and parameters' keys are
/// `&'static str`), made once per distinct text: registering a class again (each `coapcc.sim`
/// with it does) adds nothing.
pub(super) fn leak(s: &str) -> &'static str {
    static KEPT: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());
    let mut kept = KEPT.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(&k) = kept.iter().find(|k| **k == s) {
        return k;
    }
    let k: &'static str = Box::leak(s.to_string().into_boxed_str());
    kept.push(k);
    k
}
