//! `basic_rto` — Californium's BasicRto (`congestioncontrol/BasicRto.java`; Betzler et al.'s
//! baseline in the CoCoA evaluations): one RFC 6298 estimator fed with every RTT sample,
//! retransmitted exchanges' included.
//!
//! * Before any sample the RTO of an exchange is drawn like DefaultCoAP's, from
//!   [`initial_rto`, `initial_rto`·`ack_random_factor`] ([2, 3] s).
//! * Every completed exchange gives a sample: an unambiguous one, or — after retransmissions —
//!   the time from its original transmission to the response (ambiguous: Karn's rule is not
//!   applied, which is what distinguishes this baseline). RFC 6298 §2: first R: SRTT = R,
//!   RTTVAR = R/2; then RTTVAR = 3/4·RTTVAR + 1/4·|SRTT − R|, SRTT = 7/8·SRTT + 1/8·R;
//!   RTO = SRTT + max(G, 4·RTTVAR) within [`rto_min`, `rto_max`] (RFC 6298 §2.4's 1 s floor by
//!   default). The RTO is used as is for the next exchange (no dither).
//! * Timeouts double, capped at `rto_max`; nothing carries over (no backed-off RTO is kept).
//!
//! Reading of the source: Californium's own BasicRto sets the RTO to the last measured RTT
//! (the smoothing of its comment is commented out) and measures from the last transmission;
//! the specification asks for "RFC 6298 on every sample", which this module follows
//! (`rule=rfc6298`, default). `rule=last` gives Californium's code: RTO = the last sample.

use crate::controller::{
    clamp_rto, estimate_or_initial, Completion, Controller, ExchangeTimer, Metrics, Sample, Start,
};
use crate::estimator::Rfc6298;
use crate::params::{check, choice, params};
use crate::time::{Duration, Instant};
use rand_core::RngCore;

params! {
    /// BasicRto's parameters.
    pub struct BasicParams {
        /// RTO before any sample, s.
        initial_rto: f64 = 2.0,
        /// Before any sample the RTO is initial_rto × U[1, this].
        ack_random_factor: f64 = 1.5,
        /// Floor of the RTO, s (RFC 6298 §2.4: 1).
        rto_min: f64 = 1.0,
        /// Cap on every RTO, s.
        rto_max: f64 = 60.0,
        /// Clock granularity G of RFC 6298, s.
        clock_granularity: f64 = 0.0,
        /// rfc6298 (the specification) or last (Californium's code: RTO = the last sample).
        rule: BasicRule = BasicRule::Rfc6298,
        /// MAX_RETRANSMIT (RFC 7252 §4.8).
        max_retransmit: u32 = 4,
        /// NSTART (RFC 7252 §4.7).
        nstart: u32 = 1,
    }
}

choice! {
    /// How samples become the RTO.
    pub enum BasicRule { Rfc6298 = "rfc6298", Last = "last" }
}

impl BasicParams {
    /// Checks the values; on failure, the offending key and the rule it breaks.
    pub fn validate(&self) -> Result<(), (&'static str, &'static str)> {
        crate::params::check_initial_rto(self.initial_rto, self.rto_max)?;
        check(self.ack_random_factor >= 1.0, "ack_random_factor", "must be >= 1")?;
        check(self.rto_min > 0.0 && self.rto_min <= self.rto_max, "rto_min", "need 0 < rto_min <= rto_max")?;
        check(self.clock_granularity >= 0.0, "clock_granularity", "must be >= 0")?;
        crate::params::check_common(self.max_retransmit, self.nstart)
    }
}

/// BasicRto for one destination.
#[derive(Debug, Clone)]
pub struct BasicRto {
    p: BasicParams,
    est: Rfc6298,
    rto: Option<f64>,
}

impl BasicRto {
    /// A controller with no history.
    pub fn new(p: BasicParams) -> Self {
        BasicRto { p, est: Rfc6298::default(), rto: None }
    }

    fn update(&mut self, r: f64) {
        let rto = match self.p.rule {
            BasicRule::Rfc6298 => {
                self.est.update(r);
                self.est.rto(4.0, self.p.clock_granularity).unwrap_or(r)
            }
            BasicRule::Last => r,
        };
        self.rto = Some(clamp_rto(rto.clamp(self.p.rto_min, self.p.rto_max), self.p.rto_max));
    }
}

impl Controller for BasicRto {
    fn name(&self) -> &'static str {
        "basic_rto"
    }
    fn nstart(&self) -> usize {
        self.p.nstart as usize
    }
    fn start(&mut self, _now: Instant, start: Start, rng: &mut dyn RngCore) -> ExchangeTimer {
        let p = &self.p;
        let rto = estimate_or_initial(self.rto, p.initial_rto, p.ack_random_factor, p.rto_max, rng);
        ExchangeTimer::from_secs(rto, start, crate::controller::Marking::None)
    }
    fn on_timeout(&mut self, _now: Instant, ex: &mut ExchangeTimer, _rng: &mut dyn RngCore) -> Option<Duration> {
        crate::controller::double(ex, self.p.max_retransmit, self.p.rto_max)
    }
    fn on_complete(&mut self, now: Instant, _ex: &ExchangeTimer, done: &Completion<'_>) {
        let r = match done.sample(now) {
            Sample::Unambiguous { rtt, .. } | Sample::Ambiguous { rtt, .. } => rtt.as_secs_f64(),
        };
        self.update(r);
    }
    fn reset(&mut self) {
        *self = BasicRto::new(self.p.clone());
    }
    fn metrics(&self) -> Metrics {
        Metrics::secs(self.rto.unwrap_or(self.p.initial_rto), None)
    }
    fn rto_bounds(&self) -> (Duration, Duration) {
        crate::controller::bounds(crate::controller::RTO_FLOOR, self.p.rto_max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Samples 0.5, 0.5, 4.0 s. RFC 6298 by hand: (1) SRTT 0.5, RTTVAR 0.25 → 0.5 + 1.0 = 1.5;
    /// (2) RTTVAR 3/4·0.25 + 0 = 0.1875, SRTT 0.5 → 0.5 + 0.75 = 1.25; (3) RTTVAR
    /// 3/4·0.1875 + 1/4·3.5 = 1.015625, SRTT 7/8·0.5 + 1/8·4 = 0.9375 → 0.9375 + 4.0625 = 5.0.
    /// Then an agreeing run drives RTTVAR to 0 and the RTO to its 1 s floor. `rule=last`: the
    /// last sample, floored.
    #[test]
    fn rfc6298_on_every_sample_and_californiums_last_sample() {
        let mut c = BasicRto::new(BasicParams::default());
        for (r, want) in [(0.5, 1.5), (0.5, 1.25), (4.0, 5.0)] {
            c.update(r);
            assert!((c.rto.unwrap() - want).abs() < 1e-12, "{r}: {:?}", c.rto);
        }
        for _ in 0..200 {
            c.update(0.3);
        }
        assert_eq!(c.rto, Some(1.0), "RFC 6298's 1 s floor");
        let mut l = BasicRto::new(BasicParams { rule: BasicRule::Last, ..BasicParams::default() });
        l.update(2.5);
        assert_eq!(l.rto, Some(2.5));
        l.update(0.3);
        assert_eq!(l.rto, Some(1.0));
    }
}
