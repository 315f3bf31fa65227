//! `min_rtt`: an RTO algorithm written outside `coap-cc`, as a researcher would write a new one.
//!
//! The rule (a toy for the example, from no paper): before any sample, every exchange starts
//! with `initial_rto`; after one, with `factor` × the smallest unambiguous RTT seen + `margin`.
//! Timeouts double the timer up to `rto_max`; the exchange fails after `max_retransmit`
//! retransmissions. Karn's rule: exchanges that needed retransmissions give no sample.
//!
//! What it takes to add an algorithm, all of it in this file:
//! 1. its parameters, declared once with [`coap_cc::params::params!`] (keys, types, defaults and
//!    the descriptions `coapcc algorithms` would list);
//! 2. the configuration's [`ControllerFactory`]: its rules ([`ControllerFactory::validate`]) and
//!    `build`, one controller per destination;
//! 3. the [`Controller`] itself: time and randomness come in, timers go out;
//! 4. an [`Algorithm`] entry (name, source, summary, defaults) given to [`coap_cc::register`].
//!
//! After [`register`], `min_rtt:margin=0.1` works wherever a built-in's name does: a
//! simulator scenario's `cc`, `CcConfig::parse`, the real client.

use coap_cc::params::{check, check_common, params};
use coap_cc::{
    Algorithm, Completion, Controller, ControllerFactory, Duration, ExchangeTimer, Instant, Marking, Metrics,
    RegisterError, Sample, Start, Violation,
};
use std::sync::OnceLock;

params! {
    /// `min_rtt`'s parameters.
    pub struct MinRttParams {
        /// RTO of every exchange before the first sample, s.
        initial_rto: f64 = 2.0,
        /// The smallest RTT seen is multiplied by this.
        factor: f64 = 1.5,
        /// Then this is added, s.
        margin: f64 = 0.25,
        /// Retransmissions before an exchange fails.
        max_retransmit: u32 = 4,
        /// Exchanges outstanding at once per destination.
        nstart: u32 = 1,
        /// Cap on a backed-off RTO, s.
        rto_max: f64 = 60.0,
    }
}

impl ControllerFactory for MinRttParams {
    fn validate(&self) -> Result<(), Violation> {
        check(self.initial_rto > 0.0, "initial_rto", "must be > 0")?;
        check(self.factor >= 1.0, "factor", "must be >= 1")?;
        check(self.margin > 0.0, "margin", "must be > 0")?;
        check(self.rto_max >= self.initial_rto, "rto_max", "must be >= initial_rto")?;
        check_common(self.max_retransmit, self.nstart)
    }
    fn build(&self, _name: &'static str) -> Box<dyn Controller> {
        Box::new(MinRtt { p: self.clone(), min_rtt: None })
    }
    fn max_retransmit(&self) -> Option<u32> {
        Some(self.max_retransmit)
    }
}

/// The algorithm's entry in the registry.
pub const ALGORITHM: Algorithm = Algorithm {
    name: "min_rtt",
    source: "coapcc's examples/custom-algorithm (a toy, from no paper)",
    summary: "factor x the smallest RTT seen + a margin; doubling backoff; Karn's rule",
    make: |_| Box::new(MinRttParams::default()),
    defines: &[],
};

/// Registers `min_rtt` (once per process; later calls return the same entry).
pub fn register() -> Result<&'static Algorithm, RegisterError> {
    static ENTRY: OnceLock<Result<&'static Algorithm, RegisterError>> = OnceLock::new();
    ENTRY.get_or_init(|| coap_cc::register(ALGORITHM)).clone()
}

/// `min_rtt` for one destination.
#[derive(Debug, Clone)]
pub struct MinRtt {
    p: MinRttParams,
    /// The smallest unambiguous RTT seen, s.
    min_rtt: Option<f64>,
}

impl MinRtt {
    /// The RTO the next exchange starts with, s.
    fn next_rto(&self) -> f64 {
        match self.min_rtt {
            None => self.p.initial_rto,
            Some(m) => (self.p.factor * m + self.p.margin).min(self.p.rto_max),
        }
    }
}

impl Controller for MinRtt {
    fn name(&self) -> &'static str {
        ALGORITHM.name
    }
    fn nstart(&self) -> usize {
        self.p.nstart as usize
    }
    fn start(&mut self, _now: Instant, start: Start, _rng: &mut dyn coap_cc::RngCore) -> ExchangeTimer {
        ExchangeTimer::new(Duration::from_secs_f64(self.next_rto()), start, Marking::None)
    }
    fn on_timeout(
        &mut self,
        _now: Instant,
        ex: &mut ExchangeTimer,
        _rng: &mut dyn coap_cc::RngCore,
    ) -> Option<Duration> {
        if ex.retransmissions() >= self.p.max_retransmit {
            return None;
        }
        let doubled = (2.0 * ex.rto().as_secs_f64()).min(self.p.rto_max);
        ex.retransmit(Duration::from_secs_f64(doubled));
        Some(ex.rto())
    }
    fn on_complete(&mut self, now: Instant, _ex: &ExchangeTimer, done: &Completion<'_>) {
        if let Sample::Unambiguous { rtt, retransmitted: false } = done.sample(now) {
            let rtt = rtt.as_secs_f64();
            self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
        }
    }
    fn reset(&mut self) {
        self.min_rtt = None;
    }
    fn metrics(&self) -> Metrics {
        let mut m = Metrics::default();
        m.rto = Duration::from_secs_f64(self.next_rto());
        m
    }
    fn rto_bounds(&self) -> (Duration, Duration) {
        let lowest = self.p.initial_rto.min(self.p.margin.min(self.p.rto_max));
        (Duration::from_secs_f64(lowest), Duration::from_secs_f64(self.p.rto_max))
    }
}
