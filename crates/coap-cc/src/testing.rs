//! A stand-in controller for the tests of code that drives controllers (the messaging layer,
//! the simulator, a driver of your own): no randomness, timers worked out by hand, and a
//! [`Probe`] that records every call the controller received.
//!
//! The stand-in arms `rto` for the first transmission and `rto`·`backoff`^n for the n-th
//! retransmission, gives up after `max_retransmit` retransmissions, and allows `nstart`
//! exchanges at once. It is not registered under a name (it is no algorithm of the literature);
//! [`stand_in`] returns its [`CcConfig`] directly.
//!
//! ```
//! use coap_cc::testing::{stand_in, Call};
//! use coap_cc::{Duration, Instant, Start};
//!
//! let (cfg, probe) = stand_in(Duration::from_secs(1), 2.0, 2);
//! let mut c = cfg.build();
//! let mut rng = coap_cc::testing::NoRng;
//! let start = Start { outstanding: 0, confirmable: true };
//! let mut ex = c.start(Instant::ZERO, start, &mut rng);
//! assert_eq!(ex.rto(), Duration::from_secs(1));
//! assert_eq!(c.on_timeout(Instant::ZERO, &mut ex, &mut rng), Some(Duration::from_secs(2)));
//! assert_eq!(probe.calls().len(), 2);
//! assert!(matches!(probe.calls()[1], Call::Timeout { retransmissions: 1, .. }));
//! ```

use alloc::boxed::Box;
use alloc::sync::Arc;
use alloc::vec::Vec;
use std::sync::Mutex;

use crate::controller::{Completion, Controller, ExchangeTimer, Marking, Metrics, Sample, Start};
use crate::factory::{ControllerFactory, Violation};
use crate::params::{check, params};
use crate::registry::{Algorithm, CcConfig};
use crate::time::{Duration, Instant};
use rand_core::RngCore;

params! {
    /// The stand-in's parameters.
    pub struct StandInParams {
        /// RTO of the first transmission, s.
        rto: f64 = 1.0,
        /// Each retransmission's RTO is the previous one times this.
        backoff: f64 = 2.0,
        /// Retransmissions before giving up.
        max_retransmit: u32 = 2,
        /// Exchanges outstanding at once.
        nstart: u32 = 1,
    }
}

/// One call the stand-in received.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Call {
    /// [`Controller::start`].
    Start {
        /// When.
        at: Instant,
        /// What the caller said.
        start: Start,
    },
    /// [`Controller::on_timeout`]; `retransmissions` counts the one it allowed, if any.
    Timeout {
        /// When.
        at: Instant,
        /// The exchange's retransmissions after the call.
        retransmissions: u32,
        /// Whether it gave up.
        gave_up: bool,
    },
    /// [`Controller::on_complete`].
    Complete {
        /// When.
        at: Instant,
        /// The sample the completion gives.
        sample: Sample,
    },
    /// [`Controller::on_failure`].
    Failure {
        /// When.
        at: Instant,
        /// The exchange's retransmissions.
        retransmissions: u32,
    },
}

/// The calls a stand-in (and every controller built from the same configuration) received.
#[derive(Debug, Clone, Default)]
pub struct Probe(Arc<Mutex<Vec<Call>>>);

impl Probe {
    /// Every call so far, in order.
    pub fn calls(&self) -> Vec<Call> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
    fn push(&self, call: Call) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(call);
    }
}

/// The stand-in's configuration: its parameters and the probe its controllers report to.
#[derive(Debug, Clone, Default)]
pub struct StandIn {
    /// The parameters.
    pub params: StandInParams,
    /// Where its controllers record their calls.
    pub probe: Probe,
}

crate::params::delegate_params!(StandIn, params);

impl ControllerFactory for StandIn {
    fn validate(&self) -> Result<(), Violation> {
        check(self.params.rto > 0.0, "rto", "must be > 0")?;
        check(self.params.backoff >= 1.0, "backoff", "must be >= 1")?;
        crate::params::check_common(self.params.max_retransmit, self.params.nstart)
    }
    fn build(&self, _name: &'static str) -> Box<dyn Controller> {
        Box::new(StandInController { p: self.params.clone(), probe: self.probe.clone() })
    }
    fn max_retransmit(&self) -> Option<u32> {
        Some(self.params.max_retransmit)
    }
}

/// The stand-in's entry: not in the registry's table, so `stand_in` is no name a user can ask for.
static STAND_IN: Algorithm = Algorithm {
    name: "stand_in",
    source: "coap_cc::testing",
    summary: "fixed RTO × backoff^n, no randomness; records its calls (tests only)",
    make: |_| Box::new(StandIn::default()),
    defines: &[],
};

/// A stand-in configuration: first RTO `rto`, each retransmission's `backoff` times the one
/// before, `max_retransmit` retransmissions; and the probe its controllers report to.
///
/// # Panics
/// If the values break the stand-in's rules (`rto` > 0, `backoff` ≥ 1, `max_retransmit` ≤ 30):
/// it is for tests.
pub fn stand_in(rto: Duration, backoff: f64, max_retransmit: u32) -> (CcConfig, Probe) {
    let params = StandInParams { rto: rto.as_secs_f64(), backoff, max_retransmit, nstart: 1 };
    let factory = StandIn { params, probe: Probe::default() };
    let probe = factory.probe.clone();
    let cfg = CcConfig::from_factory(&STAND_IN, Box::new(factory)).expect("the stand-in's values are valid");
    (cfg, probe)
}

#[derive(Debug)]
struct StandInController {
    p: StandInParams,
    probe: Probe,
}

impl Controller for StandInController {
    fn name(&self) -> &'static str {
        STAND_IN.name
    }
    fn nstart(&self) -> usize {
        self.p.nstart as usize
    }
    fn start(&mut self, now: Instant, start: Start, _rng: &mut dyn RngCore) -> ExchangeTimer {
        self.probe.push(Call::Start { at: now, start });
        ExchangeTimer::new(Duration::from_secs_f64(self.p.rto), start, Marking::None)
    }
    fn on_timeout(&mut self, now: Instant, ex: &mut ExchangeTimer, _rng: &mut dyn RngCore) -> Option<Duration> {
        let gave_up = ex.retransmissions() >= self.p.max_retransmit;
        if !gave_up {
            let n = ex.retransmissions() + 1;
            ex.retransmit(Duration::from_secs_f64(self.p.rto * libm::pow(self.p.backoff, f64::from(n))));
        }
        self.probe.push(Call::Timeout { at: now, retransmissions: ex.retransmissions(), gave_up });
        (!gave_up).then(|| ex.rto())
    }
    fn on_complete(&mut self, now: Instant, _ex: &ExchangeTimer, done: &Completion<'_>) {
        self.probe.push(Call::Complete { at: now, sample: done.sample(now) });
    }
    fn on_failure(&mut self, now: Instant, ex: &ExchangeTimer) {
        self.probe.push(Call::Failure { at: now, retransmissions: ex.retransmissions() });
    }
    fn reset(&mut self) {}
    fn metrics(&self) -> Metrics {
        Metrics { rto: Duration::from_secs_f64(self.p.rto), ..Metrics::default() }
    }
    fn rto_bounds(&self) -> (Duration, Duration) {
        let top = self.p.rto * libm::pow(self.p.backoff, f64::from(self.p.max_retransmit));
        (Duration::from_secs_f64(self.p.rto), Duration::from_secs_f64(top))
    }
}

/// An RNG for callers that must pass one to a controller that draws nothing (the stand-in):
/// every draw is zero.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoRng;

impl RngCore for NoRng {
    fn next_u32(&mut self) -> u32 {
        0
    }
    fn next_u64(&mut self) -> u64 {
        0
    }
    fn fill_bytes(&mut self, dst: &mut [u8]) {
        dst.fill(0);
    }
}
