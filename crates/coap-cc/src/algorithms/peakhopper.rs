//! `peakhopper` — Peak-Hopper RTO (PH-RTO; Šimůnek et al.; in the literature's comparisons and
//! in Californium's PeakhopperRto).
//!
//! Unambiguous samples only. First sample R: RTO = 1.75·R. Then, with F = 24, D = 1 − 1/F,
//! B_max = 1, G = 50 ms and a history of the last 2 samples:
//! δ = |R − R_prev|/R; B = min(max(2δ, D·B), B_max); RTT_max = max(R, R_prev);
//! RTO = max(D·RTO, (1 + B)·RTT_max, RTT_max + (1 + B_max)·G, max(history) + 2·G); R_prev = R.
//! Californium computes δ with integer division, which makes it almost always 0: a bug; real
//! division is used here. B starts at 0. R_prev is the first sample after the first sample
//! (Californium leaves it at 0, so its second sample sees δ = 1 and B = 1: read here as an
//! oversight, since the history is meant to hold the previous sample). Before any sample the RTO of an exchange is drawn
//! like DefaultCoAP's, from [2, 3] s (`initial_rto` × U[1, `ack_random_factor`]); after, the RTO
//! is used as is. Timeouts double, capped at `rto_max` = 60 s; no Karn carry-over (the source
//! keeps none).

use crate::controller::{
    clamp_rto, estimate_or_initial, Completion, Controller, ExchangeTimer, Metrics, Sample, Start,
};
use crate::marking::{MarkingKind, MarkingState, TRANSMISSION_NUMBER_OPTION};
use crate::params::{check, params};
use crate::time::{Duration, Instant};
use rand_core::RngCore;

params! {
    /// Peak-Hopper's parameters.
    pub struct PeakHopperParams {
        /// RTO before any sample, s.
        initial_rto: f64 = 2.0,
        /// Before any sample the RTO is initial_rto × U[1, this].
        ack_random_factor: f64 = 1.5,
        /// F: decay D = 1 − 1/F per sample.
        f: f64 = 24.0,
        /// B_max.
        b_max: f64 = 1.0,
        /// G, s.
        g: f64 = 0.05,
        /// MAX_RETRANSMIT (RFC 7252 §4.8).
        max_retransmit: u32 = 4,
        /// NSTART (RFC 7252 §4.7).
        nstart: u32 = 1,
        /// Cap on every RTO, s.
        rto_max: f64 = 60.0,
        /// Accurate RTT samples: none, token or option.
        rtt_marking: MarkingKind = MarkingKind::None,
    }
}

impl PeakHopperParams {
    /// Checks the values; on failure, the offending key and the rule it breaks.
    pub fn validate(&self) -> Result<(), (&'static str, &'static str)> {
        crate::params::check_initial_rto(self.initial_rto, self.rto_max)?;
        check(self.ack_random_factor >= 1.0, "ack_random_factor", "must be >= 1")?;
        check(self.f >= 1.0, "f", "must be >= 1")?;
        check(self.b_max >= 0.0 && self.g >= 0.0, "b_max", "b_max and g must be >= 0")?;
        crate::params::check_common(self.max_retransmit, self.nstart)
    }
}

/// Peak-Hopper for one destination.
#[derive(Debug, Clone)]
pub struct PeakHopper {
    p: PeakHopperParams,
    rto: Option<f64>,
    b: f64,
    r_prev: f64,
    marking: MarkingState,
}

impl PeakHopper {
    /// A controller with no history.
    pub fn new(p: PeakHopperParams) -> Self {
        PeakHopper {
            rto: None,
            b: 0.0,
            r_prev: 0.0,
            marking: MarkingState::new(p.rtt_marking, TRANSMISSION_NUMBER_OPTION),
            p,
        }
    }

    fn update(&mut self, r: f64) {
        let p = &self.p;
        let rto = match self.rto {
            None => 1.75 * r,
            Some(rto) => {
                let d = 1.0 - 1.0 / p.f;
                let delta = if r > 0.0 { (r - self.r_prev).abs() / r } else { 0.0 };
                self.b = (2.0 * delta).max(d * self.b).min(p.b_max);
                // the 2-sample history is {R_prev, R}: its maximum is RTT_max
                let rtt_max = r.max(self.r_prev);
                (d * rto).max((1.0 + self.b) * rtt_max).max(rtt_max + (1.0 + p.b_max) * p.g).max(rtt_max + 2.0 * p.g)
            }
        };
        self.r_prev = r;
        self.rto = Some(clamp_rto(rto, p.rto_max));
    }
}

impl Controller for PeakHopper {
    fn name(&self) -> &'static str {
        "peakhopper"
    }
    fn nstart(&self) -> usize {
        self.p.nstart as usize
    }
    fn start(&mut self, _now: Instant, start: Start, rng: &mut dyn RngCore) -> ExchangeTimer {
        let p = &self.p;
        let rto = estimate_or_initial(self.rto, p.initial_rto, p.ack_random_factor, p.rto_max, rng);
        ExchangeTimer::from_secs(rto, start, self.marking.next())
    }
    fn on_timeout(&mut self, _now: Instant, ex: &mut ExchangeTimer, _rng: &mut dyn RngCore) -> Option<Duration> {
        crate::controller::double(ex, self.p.max_retransmit, self.p.rto_max)
    }
    fn on_complete(&mut self, now: Instant, ex: &ExchangeTimer, done: &Completion<'_>) {
        self.marking.observe(ex, done);
        if let Sample::Unambiguous { rtt, .. } = done.sample(now) {
            let rtt = rtt.as_secs_f64();
            self.update(rtt);
        }
    }
    fn reset(&mut self) {
        *self = PeakHopper::new(self.p.clone());
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

    #[test]
    fn peak_hopping_by_hand() {
        let mut c = PeakHopper::new(PeakHopperParams::default());
        c.update(1.0);
        assert_eq!(c.rto, Some(1.75));
        // R = 2: δ = |2−1|/2 = 0.5 → B = min(max(1, 0), 1) = 1; RTT_max = 2;
        // RTO = max(23/24·1.75, 2·2, 2 + 2·0.05, 2 + 0.1) = 4
        c.update(2.0);
        assert_eq!(c.b, 1.0);
        assert_eq!(c.rto, Some(4.0));
        // R = 2: δ = 0 → B = 23/24; RTT_max 2; RTO = max(23/24·4, (1 + 23/24)·2, 2.1) = 94/24
        c.update(2.0);
        assert!((c.rto.unwrap() - (1.0 + 23.0 / 24.0) * 2.0).abs() < 1e-12);
        assert!((c.b - 23.0 / 24.0).abs() < 1e-12);
        // R = 0.5: δ = 3 → B = 1; RTT_max = max(0.5, 2) = 2 → RTO = max(23/24·94/24, 4, …) = 4
        c.update(0.5);
        assert_eq!(c.rto, Some(4.0));
    }
}
