//! What a Python controller is handed: an [`Exchange`]'s timer and state, and the run's [`Rng`].

use super::factory::PyMarking;
use super::run::ControllerError;
use coap_cc::{Completion, ExchangeTimer, Instant, RngCore};
use pyo3::prelude::*;

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
    pub(super) state: [f64; 3],
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
pub(super) struct Floats(pub(super) [f64; 3]);

impl coap_cc::TimerState for Floats {
    fn encode(self) -> [u64; coap_cc::TIMER_STATE_WORDS] {
        self.0.map(f64::to_bits)
    }
    fn decode(words: [u64; coap_cc::TIMER_STATE_WORDS]) -> Self {
        Floats(words.map(f64::from_bits))
    }
}

impl Exchange {
    pub(super) fn of(t: &ExchangeTimer, outstanding: usize, marking: &PyMarking) -> Exchange {
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
    pub(super) fn completed(t: &ExchangeTimer, marking: &PyMarking, done: &Completion<'_>) -> Exchange {
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
pub(super) fn lend<'py, T>(
    py: Python<'py>,
    rng: &mut dyn RngCore,
    f: impl FnOnce(&Bound<'py, Rng>) -> T,
) -> PyResult<T> {
    let ptr: *mut (dyn RngCore + '_) = rng;
    // SAFETY: only the lifetime is erased, and the pointer is taken back before this function
    // returns, so Python reaches the stream only while the borrow is live
    let ptr: *mut (dyn RngCore + 'static) = unsafe { std::mem::transmute(ptr) };
    let handle = Bound::new(py, Rng { rng: Some(ptr) })?;
    let out = f(&handle);
    handle.borrow_mut().rng = None;
    Ok(out)
}

pub(super) fn secs(t: Instant) -> f64 {
    t.as_nanos() as f64 / 1e9
}
