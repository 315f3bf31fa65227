//! The runs in progress and the first failure among their controllers (which stops them all).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

pyo3::create_exception!(
    coapcc,
    ControllerError,
    PyRuntimeError,
    "A controller written in Python failed or returned nonsense; the run was stopped."
);

/// Set when a controller failed: every controller then gives up at once.
pub(super) static FAILED: AtomicBool = AtomicBool::new(false);

/// The runs in progress in this process (a `sim`, a local sweep, a Dask worker's cells) and the
/// first failure among them. A failure abandons every run in progress at once (their
/// controllers give up, so what they finish is wrong: none of it is kept), and each of them
/// raises when it ends; the failure is forgotten when no run is left.
pub(super) struct Runs {
    next: u64,
    active: Vec<(u64, lab::stop::Stop)>,
    failure: Option<PyErr>,
}

pub(super) static RUNS: Mutex<Runs> = Mutex::new(Runs { next: 0, active: Vec::new(), failure: None });

pub(super) fn runs() -> std::sync::MutexGuard<'static, Runs> {
    RUNS.lock().unwrap_or_else(|p| p.into_inner())
}

/// A run in progress; [`Run::end`] says whether it must raise.
pub struct Run(u64);

impl Run {
    /// Starts a run that `stop` stops.
    pub fn begin(stop: &lab::stop::Stop) -> Run {
        let mut r = runs();
        if r.active.is_empty() {
            FAILED.store(false, Ordering::SeqCst);
            r.failure = None;
        }
        r.next += 1;
        let id = r.next;
        r.active.push((id, stop.clone()));
        Run(id)
    }

    /// Ends the run: the failure to raise if a controller failed while it ran (the first run to
    /// end gets the controller's own exception).
    pub fn end(self) -> Option<PyErr> {
        let mut r = runs();
        r.active.retain(|(id, _)| *id != self.0);
        if !failed() {
            return None;
        }
        Some(r.failure.take().unwrap_or_else(|| {
            ControllerError::new_err("stopped: a controller written in Python failed in another run of this process")
        }))
    }
}

/// A controller failed during the runs in progress.
pub fn failed() -> bool {
    FAILED.load(Ordering::SeqCst)
}

/// Records a failure (the first one wins) and abandons every run in progress: a
/// `ControllerError` saying what and when, caused by `cause` when Python raised.
pub(super) fn fail_with(what: String, cause: Option<(Python<'_>, PyErr)>) {
    let mut r = runs();
    if r.failure.is_none() && !failed() {
        let e = ControllerError::new_err(what);
        if let Some((py, cause)) = cause {
            e.set_cause(py, Some(cause));
        }
        r.failure = Some(e);
    }
    FAILED.store(true, Ordering::SeqCst);
    for (_, stop) in &r.active {
        stop.abandon();
    }
}

pub(super) fn fail(py: Python<'_>, e: PyErr, what: String) {
    let text = format!("{what} raised {e}");
    fail_with(text, Some((py, e)));
}
