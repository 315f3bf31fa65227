//! [`PyController`]: coap-cc's [`Controller`] calls made on the Python object, with the GIL.

use std::fmt;

use super::class::{Class, Value};
use super::factory::{hidden_method, PyFactory, PyMarking, MAX_RTO, REPORT_METHODS};
use super::objects::{lend, secs, Exchange, Floats};
use super::run::{fail, fail_with, failed};
use coap_cc::marking::MarkingKind;
use coap_cc::ControllerFactory;
use coap_cc::{Completion, Controller, Duration, ExchangeTimer, Instant, Metrics, RngCore, Sample, Start};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// A Python instance behind coap-cc's [`Controller`].
pub(super) struct PyController {
    pub(super) name: &'static str,
    /// Its class and parameters: what `reset` makes a fresh instance of.
    pub(super) factory: PyFactory,
    /// `None` when the class could not be made (the run is stopping).
    pub(super) obj: Option<Py<PyAny>>,
    pub(super) nstart: usize,
    /// How it numbers transmissions, and what the option's probe learnt.
    pub(super) marking: PyMarking,
}

impl fmt::Debug for PyController {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (Python class {})", self.name, self.title())
    }
}

/// What a controller does once the run is stopping: give every exchange up at once.
pub(super) const WINDING_DOWN_RTO: f64 = 1.0;

impl PyController {
    /// The class's name, for messages.
    fn title(&self) -> &str {
        self.factory.class.as_ref().map_or(self.name, |c| &c.title)
    }

    /// Whether the class defines `method` itself (`on_complete`, `on_failure`, `earliest_start`).
    fn defines(&self, method: fn(&Class) -> bool) -> bool {
        self.factory.class.as_deref().is_some_and(method)
    }

    /// A fresh instance with the factory's parameters, no history (when built, and at `reset`);
    /// a failure is recorded and leaves none.
    pub(super) fn renew(&mut self, why: &str) {
        self.obj = None;
        let Some(class) = self.factory.class.clone() else {
            fail_with(format!("{}: no Python class is registered under this name", self.name), None);
            return;
        };
        with_gil(|py| match self.factory.instance(py, &class) {
            Ok((obj, nstart, marking)) => {
                self.obj = Some(obj);
                self.nstart = nstart;
                self.marking = marking;
            }
            Err(e) => fail(py, e, format!("{}(...) ({why})", class.title)),
        });
    }

    /// The instance, unless the run is stopping.
    fn live(&self) -> Option<&Py<PyAny>> {
        self.obj.as_ref().filter(|_| !failed())
    }

    /// An RTO a method returned: a number (not a bool) of seconds > 0 and at most [`MAX_RTO`],
    /// else a failure.
    fn rto(&self, py: Python<'_>, method: &str, now: f64, v: &Bound<'_, PyAny>) -> Option<f64> {
        let rule = format!("an RTO must be a number of seconds > 0 and at most {MAX_RTO}");
        if v.is_instance_of::<pyo3::types::PyBool>() {
            fail_with(format!("{}.{method} returned {v} at t = {now} s: {rule}, not a bool", self.title()), None);
            return None;
        }
        match v.extract::<f64>() {
            Ok(x) if x > 0.0 && x <= MAX_RTO => Some(x),
            Ok(x) => {
                fail_with(format!("{}.{method} returned {x} at t = {now} s: {rule}", self.title()), None);
                None
            }
            Err(e) => {
                fail(py, e, format!("{}.{method}'s return value {v} at t = {now} s", self.title()));
                None
            }
        }
    }

    /// `v`, or `None` with the failure recorded: Python could not make the call's objects (out
    /// of memory), and an exchange timed without the controller would be a wrong result.
    fn recorded<T>(&self, py: Python<'_>, method: &str, now: f64, v: PyResult<T>) -> Option<T> {
        match v {
            Ok(v) => Some(v),
            Err(e) => {
                fail(py, e, format!("{}.{method} at t = {now} s (preparing the call)", self.title()));
                None
            }
        }
    }

    /// Calls `method` on the instance with `args`; a failure is recorded and gives `None`.
    fn call<'py>(
        &self,
        py: Python<'py>,
        method: &str,
        now: f64,
        args: impl IntoPyObject<'py, Target = PyTuple>,
    ) -> Option<Bound<'py, PyAny>> {
        let obj = self.live()?.bind(py);
        match obj.call_method1(method, args) {
            // the report methods are called by no run; an attribute set in a call that hides
            // one (`self.srtt = rtt`) is caught here (two lookups, against the call's ~4 µs)
            Ok(v) => match hidden_method(obj, self.title(), &REPORT_METHODS) {
                Some(why) => {
                    fail_with(why, None);
                    None
                }
                None => Some(v),
            },
            Err(e) => {
                fail(py, e, format!("{}.{method} at t = {now} s", self.title()));
                None
            }
        }
    }
}

/// A Python thread state kept for a simulator thread for the thread's life (its GIL released):
/// without it every call into Python from a thread Python does not know makes a thread state
/// and throws it away again, which costs more than the call.
pub(super) struct KeptThreadState {
    gil: pyo3::ffi::PyGILState_STATE,
    saved: *mut pyo3::ffi::PyThreadState,
}

impl Drop for KeptThreadState {
    fn drop(&mut self) {
        // SAFETY: undoes `keep_thread_state`'s calls on the thread that made them, in reverse
        unsafe {
            pyo3::ffi::PyEval_RestoreThread(self.saved);
            pyo3::ffi::PyGILState_Release(self.gil);
        }
    }
}

thread_local! {
    static KEPT: std::cell::RefCell<Option<KeptThreadState>> = const { std::cell::RefCell::new(None) };
}

/// Gives this thread a Python thread state for its life, if it has none (a simulator thread);
/// a thread Python made (the interpreter's, a Dask worker's) has its own and is left alone.
pub(super) fn keep_thread_state() {
    KEPT.with(|k| {
        if k.borrow().is_some() {
            return;
        }
        // SAFETY: on a thread without a thread state (so not holding the GIL): make one and
        // take the GIL, then release the GIL keeping the state; `Drop` undoes both
        unsafe {
            if !pyo3::ffi::PyGILState_GetThisThreadState().is_null() {
                return;
            }
            let gil = pyo3::ffi::PyGILState_Ensure();
            let saved = pyo3::ffi::PyEval_SaveThread();
            *k.borrow_mut() = Some(KeptThreadState { gil, saved });
        }
    });
}

/// [`Python::with_gil`] from a simulator thread, its thread state kept.
pub(super) fn with_gil<T>(f: impl for<'py> FnOnce(Python<'py>) -> T) -> T {
    keep_thread_state();
    Python::with_gil(f)
}

/// The timer's per-exchange state back from the Python [`Exchange`].
pub(super) fn keep_state(t: &mut ExchangeTimer, ex: &Bound<'_, Exchange>) {
    t.set_state(Floats(ex.borrow().state));
}

impl Controller for PyController {
    fn name(&self) -> &'static str {
        self.name
    }
    fn nstart(&self) -> usize {
        self.nstart
    }
    fn earliest_start(&self, now: Instant, confirmable: bool) -> Instant {
        if !self.defines(|c| c.earliest_start) || self.live().is_none() {
            return now;
        }
        let at = secs(now);
        with_gil(|py| {
            let out = self.call(py, "earliest_start", at, (at, confirmable))?;
            // a pair (t0, interval): not before t0 + interval, added in nanoseconds as the
            // built-ins pace (RTT-CoAP: the last start + 1/R); t0 is a time the controller was
            // given, which converts back to its nanosecond exactly
            if let Ok((t0, interval)) = out.extract::<(f64, f64)>() {
                if t0.is_finite()
                    && interval.is_finite()
                    && t0 >= 0.0
                    && interval >= 0.0
                    && t0 + interval - at <= MAX_RTO
                {
                    let base = Instant::from_nanos(Duration::from_secs_f64(t0).as_nanos());
                    return Some(now.max(base + Duration::from_secs_f64(interval)));
                }
                fail_with(
                    format!(
                        "{}.earliest_start returned ({t0}, {interval}) at t = {at} s: a time and an interval \
                         ≥ 0 s ending at most {MAX_RTO} s ahead",
                        self.title()
                    ),
                    None,
                );
                return None;
            }
            match out.extract::<f64>() {
                // a time in the past (or now) allows now; one beyond an hour ahead is no pacing
                Ok(t) if t.is_finite() && t - at <= MAX_RTO => {
                    Some(if t <= at { now } else { now + Duration::from_secs_f64(t - at) })
                }
                Ok(t) => {
                    fail_with(
                        format!(
                            "{}.earliest_start returned {t} at t = {at} s: a time in seconds at most {MAX_RTO} s ahead",
                            self.title()
                        ),
                        None,
                    );
                    None
                }
                Err(e) => {
                    fail(py, e, format!("{}.earliest_start's return value {out} at t = {at} s", self.title()));
                    None
                }
            }
        })
        .unwrap_or(now)
    }
    fn start(&mut self, now: Instant, start: Start, rng: &mut dyn RngCore) -> ExchangeTimer {
        let marking = self.marking.next();
        let mut timer = ExchangeTimer::from_secs(WINDING_DOWN_RTO, start, marking);
        if self.live().is_none() {
            return timer;
        }
        let at = secs(now);
        with_gil(|py| {
            let made = Bound::new(py, Exchange::of(&timer, start.outstanding, &self.marking));
            let Some(ex) = self.recorded(py, "start", at, made) else { return };
            let out = lend(py, rng, |r| self.call(py, "start", at, (at, ex.clone(), r.clone())));
            if let Some(rto) = self.recorded(py, "start", at, out).flatten().and_then(|v| self.rto(py, "start", at, &v))
            {
                timer = ExchangeTimer::from_secs(rto, start, marking);
                keep_state(&mut timer, &ex);
            }
        });
        timer
    }
    fn on_timeout(&mut self, now: Instant, ex: &mut ExchangeTimer, rng: &mut dyn RngCore) -> Option<Duration> {
        self.live()?;
        let at = secs(now);
        with_gil(|py| {
            let e = self.recorded(py, "on_timeout", at, Bound::new(py, Exchange::of(ex, 0, &self.marking)))?;
            let out = lend(py, rng, |r| self.call(py, "on_timeout", at, (at, e.clone(), r.clone())));
            let out = self.recorded(py, "on_timeout", at, out)??;
            if out.is_none() {
                return None;
            }
            let rto = self.rto(py, "on_timeout", at, &out)?;
            keep_state(ex, &e);
            ex.retransmit_secs(rto);
            Some(ex.rto())
        })
    }
    fn on_complete(&mut self, now: Instant, ex: &ExchangeTimer, done: &Completion<'_>) {
        self.marking.observe(ex, done);
        if !self.defines(|c| c.on_complete) || self.live().is_none() {
            return;
        }
        let at = secs(now);
        let (rtt, unambiguous) = match done.sample(now) {
            Sample::Unambiguous { rtt, .. } => (rtt.as_secs_f64(), true),
            Sample::Ambiguous { rtt, .. } => (rtt.as_secs_f64(), false),
        };
        with_gil(|py| {
            let e = Bound::new(py, Exchange::completed(ex, &self.marking, done));
            if let Some(e) = self.recorded(py, "on_complete", at, e) {
                self.call(py, "on_complete", at, (at, e, rtt, unambiguous));
            }
        });
    }
    fn on_failure(&mut self, now: Instant, ex: &ExchangeTimer) {
        if !self.defines(|c| c.on_failure) || self.live().is_none() {
            return;
        }
        let at = secs(now);
        with_gil(|py| {
            if let Some(e) = self.recorded(py, "on_failure", at, Bound::new(py, Exchange::of(ex, 0, &self.marking))) {
                self.call(py, "on_failure", at, (at, e));
            }
        });
    }
    fn reset(&mut self) {
        if self.live().is_none() {
            return;
        }
        self.renew("resetting a controller");
    }
    fn metrics(&self) -> Metrics {
        let (rto, srtt) = with_gil(|py| {
            let Some(obj) = self.obj.as_ref() else { return (0.0, None) };
            let obj = obj.bind(py);
            let rto = obj.call_method0("current_rto").and_then(|v| v.extract::<f64>()).unwrap_or(0.0);
            let srtt = obj.call_method0("srtt").and_then(|v| v.extract::<Option<f64>>()).unwrap_or(None);
            (rto, srtt)
        });
        let d = |s: f64| Duration::from_secs_f64(if s.is_finite() && s > 0.0 { s } else { 0.0 });
        let mut m = Metrics::default();
        m.rto = d(rto);
        m.srtt = srtt.map(d);
        m
    }
    fn rto_bounds(&self) -> (Duration, Duration) {
        (Duration::from_secs_f64(coap_cc::controller::RTO_FLOOR), Duration::from_secs_f64(MAX_RTO))
    }
}

impl ControllerFactory for PyFactory {
    fn build(&self, name: &'static str) -> Box<dyn Controller> {
        let mut c = PyController {
            name,
            factory: self.clone(),
            obj: None,
            nstart: 1,
            marking: PyMarking::numbered(MarkingKind::None),
        };
        c.renew("making a controller");
        Box::new(c)
    }
    /// The class's `max_retransmit` keyword argument, when it declares one as an `int`.
    fn max_retransmit(&self) -> Option<u32> {
        let class = self.class.as_ref()?;
        let i = class.params.iter().position(|p| p.0 == "max_retransmit")?;
        match self.values[i] {
            Value::Int(n) => u32::try_from(n).ok(),
            _ => None,
        }
    }
}
