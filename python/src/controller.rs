//! Controllers written in Python (`coapcc.Controller` subclasses) behind coap-cc's interface.
//!
//! A class is registered under a name (`register_controller`); from then on the name works
//! wherever a built-in algorithm's does (`coapcc.sim(cc=[...])`, scenario files, plans), because
//! the name is in coap-cc's registry: its constructor ([`make`]) finds the class in this
//! module's table and returns a [`PyFactory`], whose parameters are the keyword arguments of the
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

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use coap_cc::algorithms::rtt_coap::RTT_COAP_OPTION;
use coap_cc::marking::{MarkingKind, MarkingState, TRANSMISSION_NUMBER_OPTION};
use coap_cc::params::{ParamInfo, Params, SetError};
use coap_cc::{
    Algorithm, Completion, Controller, ControllerFactory, Duration, ExchangeTimer, Instant, Marking, Metrics, RngCore,
    Sample, Start,
};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

pyo3::create_exception!(
    coapcc,
    ControllerError,
    PyRuntimeError,
    "A controller written in Python failed or returned nonsense; the run was stopped."
);

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
    fn parse(&self, text: &str) -> Result<Value, SetError> {
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

    fn to_object(&self, py: Python<'_>) -> PyResult<PyObject> {
        Ok(match self {
            Value::Int(v) => v.into_pyobject(py)?.into_any().unbind(),
            Value::Float(v) => v.into_pyobject(py)?.into_any().unbind(),
            Value::Bool(v) => pyo3::types::PyBool::new(py, *v).to_owned().into_any().unbind(),
            Value::Text(v) => v.into_pyobject(py)?.into_any().unbind(),
        })
    }
}

/// A registered class: the class object and its parameters' names and defaults.
struct Class {
    class: Py<PyAny>,
    /// The class's own name, for messages.
    title: String,
    params: Vec<(&'static str, Value)>,
    /// It defines `on_complete` and `on_failure` itself (the base class's do nothing, and
    /// are not called: a call into Python is the cost of a Python algorithm).
    on_complete: bool,
    on_failure: bool,
    /// It defines `earliest_start` (pacing) itself.
    earliest_start: bool,
}

impl fmt::Debug for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Class").field("title", &self.title).field("params", &self.params).finish()
    }
}

/// Every registered class by name (bounded by what the program registers).
static CLASSES: RwLock<Vec<(&'static str, Arc<Class>)>> = RwLock::new(Vec::new());

fn class_of(name: &str) -> Option<Arc<Class>> {
    let table = CLASSES.read().unwrap_or_else(|p| p.into_inner());
    table.iter().find(|(n, _)| *n == name).map(|(_, c)| Arc::clone(c))
}

/// A string that lives until the process ends (the registry's names and parameters' keys are
/// `&'static str`), made once per distinct text: registering a class again (each `coapcc.sim`
/// with it does) adds nothing.
fn leak(s: &str) -> &'static str {
    static KEPT: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());
    let mut kept = KEPT.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(&k) = kept.iter().find(|k| **k == s) {
        return k;
    }
    let k: &'static str = Box::leak(s.to_string().into_boxed_str());
    kept.push(k);
    k
}

/// coap-cc's constructor of every Python algorithm: the class registered under `name`.
fn make(name: &'static str) -> Box<dyn ControllerFactory> {
    let class = class_of(name);
    let values = class.as_ref().map_or_else(Vec::new, |c| c.params.iter().map(|p| p.1.clone()).collect());
    Box::new(PyFactory { class, values })
}

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

/// A Python algorithm's configuration: its class and its parameters' values.
#[derive(Debug, Clone)]
struct PyFactory {
    class: Option<Arc<Class>>,
    values: Vec<Value>,
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
enum PyMarking {
    /// coap-cc's marking and what its probe learnt.
    Numbered(MarkingState),
    /// RTT-CoAP's counter.
    Counter,
}

impl PyMarking {
    /// coap-cc's marking of `kind` (its option: the transmission-number option).
    fn numbered(kind: MarkingKind) -> PyMarking {
        PyMarking::Numbered(MarkingState::new(kind, TRANSMISSION_NUMBER_OPTION))
    }
    fn next(&self) -> Marking {
        match self {
            PyMarking::Numbered(m) => m.next(),
            PyMarking::Counter => Marking::Option { number: RTT_COAP_OPTION, probe: false },
        }
    }
    fn active(&self) -> bool {
        match self {
            PyMarking::Numbered(m) => m.active(),
            PyMarking::Counter => true,
        }
    }
    fn observe(&mut self, ex: &ExchangeTimer, done: &Completion<'_>) {
        if let PyMarking::Numbered(m) = self {
            m.observe(ex, done);
        }
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

impl PyFactory {
    /// An instance of the class with these parameters, its NSTART and how it numbers
    /// transmissions (its `marking`).
    fn instance(&self, py: Python<'_>, class: &Class) -> PyResult<(Py<PyAny>, usize, PyMarking)> {
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
const REPORT_METHODS: [&str; 2] = ["current_rto", "srtt"];

/// The methods of `coapcc.Controller` a run calls.
const RUN_METHODS: [&str; 5] = ["start", "on_timeout", "on_complete", "on_failure", "earliest_start"];

/// Why an instance cannot be called as a controller: an attribute that hides one of `methods`
/// (`self.srtt = 0.5` had silently made the reports' SRTT empty), else `None`.
fn hidden_method<'m>(
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
fn nstart_of(n: &Bound<'_, PyAny>) -> Result<usize, String> {
    let rule = format!("NSTART must be a whole number from 1 to {MAX_NSTART}");
    if n.is_instance_of::<pyo3::types::PyBool>() {
        return Err(rule);
    }
    match n.extract::<i128>() {
        Ok(v) if (1..=MAX_NSTART as i128).contains(&v) => Ok(v as usize),
        _ => Err(rule),
    }
}

/// Set when a controller failed: every controller then gives up at once.
static FAILED: AtomicBool = AtomicBool::new(false);

/// The runs in progress in this process (a `sim`, a local sweep, a Dask worker's cells) and the
/// first failure among them. A failure abandons every run in progress at once (their
/// controllers give up, so what they finish is wrong: none of it is kept), and each of them
/// raises when it ends; the failure is forgotten when no run is left.
struct Runs {
    next: u64,
    active: Vec<(u64, lab::stop::Stop)>,
    failure: Option<PyErr>,
}

static RUNS: Mutex<Runs> = Mutex::new(Runs { next: 0, active: Vec::new(), failure: None });

fn runs() -> std::sync::MutexGuard<'static, Runs> {
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
fn fail_with(what: String, cause: Option<(Python<'_>, PyErr)>) {
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

fn fail(py: Python<'_>, e: PyErr, what: String) {
    let text = format!("{what} raised {e}");
    fail_with(text, Some((py, e)));
}

/// One exchange as a controller sees it: its timer's values (seconds) and three floats of the
/// algorithm's own per-exchange state (`state`, kept with the exchange between calls).
#[pyclass(module = "coapcc")]
pub struct Exchange {
    /// The RTO armed now, s.
    #[pyo3(get)]
    rto: f64,
    /// The RTO armed for the first transmission, s.
    #[pyo3(get)]
    initial_rto: f64,
    /// Retransmissions so far.
    #[pyo3(get)]
    retransmissions: u32,
    /// A Confirmable request.
    #[pyo3(get)]
    confirmable: bool,
    /// In `start`: exchanges to the destination already outstanding (CoCoA's blind RTO); 0 in
    /// the later calls, which the timer does not keep it for.
    #[pyo3(get)]
    outstanding: usize,
    /// The algorithm's per-exchange state: three floats (zeros when the exchange starts).
    #[pyo3(get, set)]
    state: [f64; 3],
    /// The destination's transmissions are numbered now (the class's `marking`: always for
    /// `"token"`; for `"option"` once the peer has echoed the option, until then not).
    #[pyo3(get)]
    marking_active: bool,
    /// In `on_complete`: the send time of every transmission, s, the original first.
    #[pyo3(get)]
    sent: Vec<f64>,
    /// In `on_complete`: the transmission number the response echoed (0 the original), or None.
    #[pyo3(get)]
    echo: Option<u8>,
    /// In `on_complete`: the response came piggybacked on the ACK.
    #[pyo3(get)]
    piggybacked: bool,
}

/// How three floats ride in the timer's state words.
#[derive(Debug, Clone, Copy)]
struct Floats([f64; 3]);

impl coap_cc::TimerState for Floats {
    fn encode(self) -> [u64; coap_cc::TIMER_STATE_WORDS] {
        self.0.map(f64::to_bits)
    }
    fn decode(words: [u64; coap_cc::TIMER_STATE_WORDS]) -> Self {
        Floats(words.map(f64::from_bits))
    }
}

impl Exchange {
    fn of(t: &ExchangeTimer, outstanding: usize, marking: &PyMarking) -> Exchange {
        Exchange {
            rto: t.rto_secs(),
            initial_rto: t.initial_rto_secs(),
            retransmissions: t.retransmissions(),
            confirmable: t.confirmable(),
            outstanding,
            state: t.state::<Floats>().0,
            marking_active: marking.active(),
            sent: Vec::new(),
            echo: None,
            piggybacked: false,
        }
    }

    /// As [`Exchange::of`], with what the completion tells.
    fn completed(t: &ExchangeTimer, marking: &PyMarking, done: &Completion<'_>) -> Exchange {
        Exchange {
            sent: done.sent.iter().map(|s| secs(*s)).collect(),
            echo: done.echo.transmission(),
            piggybacked: done.piggybacked,
            ..Exchange::of(t, 0, marking)
        }
    }
}

/// The simulator's random stream, lent to `start` and `on_timeout` for the call only.
#[pyclass(module = "coapcc")]
pub struct Rng {
    /// The stream; `None` once the call has returned.
    rng: Option<*mut (dyn RngCore + 'static)>,
}

// SAFETY: the pointer is dereferenced only while it is `Some`, i.e. during `lend`'s call, and
// only by a method holding the GIL (`uniform` and the others never release it), so no two
// threads reach the stream at once; after the call a handle kept elsewhere holds `None`.
unsafe impl Send for Rng {}
// SAFETY: as for `Send`: every access holds the GIL.
unsafe impl Sync for Rng {}

impl Rng {
    fn with<T>(&self, f: impl FnOnce(&mut dyn RngCore) -> T) -> PyResult<T> {
        let Some(rng) = self.rng else {
            return Err(ControllerError::new_err(
                "the random stream is lent for the call only: draw from it inside start or on_timeout",
            ));
        };
        // SAFETY: `Some` only during `lend`'s call, which holds the unique borrow it came from
        Ok(f(unsafe { &mut *rng }))
    }
}

#[pymethods]
impl Rng {
    /// A uniform draw in [lo, hi), as the built-in algorithms draw (`coap_cc::rng::uniform`).
    fn uniform(&self, lo: f64, hi: f64) -> PyResult<f64> {
        self.with(|r| coap_cc::rng::uniform(r, lo, hi))
    }
    /// A uniform draw in [0, 1).
    fn random(&self) -> PyResult<f64> {
        self.with(|r| coap_cc::rng::unit(r))
    }
    /// The stream's next 64 bits.
    fn next_u64(&self) -> PyResult<u64> {
        self.with(|r| r.next_u64())
    }
}

/// Calls `f` with a Python [`Rng`] that lends `rng` for the call's duration only.
fn lend<'py, T>(py: Python<'py>, rng: &mut dyn RngCore, f: impl FnOnce(&Bound<'py, Rng>) -> T) -> PyResult<T> {
    let ptr: *mut (dyn RngCore + '_) = rng;
    // SAFETY: only the lifetime is erased, and the pointer is taken back before this function
    // returns, so Python reaches the stream only while the borrow is live
    let ptr: *mut (dyn RngCore + 'static) = unsafe { std::mem::transmute(ptr) };
    let handle = Bound::new(py, Rng { rng: Some(ptr) })?;
    let out = f(&handle);
    handle.borrow_mut().rng = None;
    Ok(out)
}

/// A Python instance behind coap-cc's [`Controller`].
struct PyController {
    name: &'static str,
    /// Its class and parameters: what `reset` makes a fresh instance of.
    factory: PyFactory,
    /// `None` when the class could not be made (the run is stopping).
    obj: Option<Py<PyAny>>,
    nstart: usize,
    /// How it numbers transmissions, and what the option's probe learnt.
    marking: PyMarking,
}

impl fmt::Debug for PyController {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (Python class {})", self.name, self.title())
    }
}

/// What a controller does once the run is stopping: give every exchange up at once.
const WINDING_DOWN_RTO: f64 = 1.0;

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
    fn renew(&mut self, why: &str) {
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
struct KeptThreadState {
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
fn keep_thread_state() {
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
fn with_gil<T>(f: impl for<'py> FnOnce(Python<'py>) -> T) -> T {
    keep_thread_state();
    Python::with_gil(f)
}

fn secs(t: Instant) -> f64 {
    t.as_nanos() as f64 / 1e9
}

/// The timer's per-exchange state back from the Python [`Exchange`].
fn keep_state(t: &mut ExchangeTimer, ex: &Bound<'_, Exchange>) {
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
