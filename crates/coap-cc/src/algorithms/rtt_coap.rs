//! `rtt_coap` — RTT-CoAP, rate-based congestion control from RTT measurements (Ancillotti &
//! Bruno, "RTT-based congestion control for the Internet of Things", WWIC 2018; the seed paper on
//! RTT-based CC for 6LoWPAN).
//!
//! Rate-based pacing: [`Controller::earliest_start`] spaces exchange starts by 1/R.
//! * Every CON is timed through a 1-byte transmission-counter option that the receiver echoes
//!   (critical, safe-to-forward; number [`RTT_COAP_OPTION`], chosen from the experimental range),
//!   so all samples are unambiguous. A peer that does not know the critical option rejects the
//!   request (4.02): RTT-CoAP needs cooperating servers, as its source assumes. A server echoes
//!   the counter under the elective number 65000 (coap-wire's `RTT_COAP_COUNTER_ECHO`; **choice**:
//!   the source names no number), so that a client that does not know it can ignore it.
//! * Per destination: SRTT_S (short term, α_S), SRTT_L (long term, α_L), RTTVAR_L (β_L); first
//!   sample: SRTT_S = SRTT_L = R, RTTVAR_L = R/2. (The source's "SRTT_L = α_L·r + (1−α_L)·SRTT_S"
//!   is read as the typo it looks like: SRTT_L's own previous value.)
//! * Boundaries T(γ) = SRTT_L + γ·RTTVAR_L; at each ACK the region is LC if SRTT_S < T(−1),
//!   NO if < T(1), MV if < T(2), HV otherwise.
//! * μ = EWMA (gain `mu_gain`) of the indicator "this CON was retransmitted".
//! * Rate R (messages/s), base = 1/SRTT_L (one message per SRTT); at each unambiguous ACK:
//!   LC fast increase; NO slow increase unless μ > L_high; MV slow decrease; HV fast decrease;
//!   decreases disabled while μ < L_low. Increase: below the base rate a fraction of (base − R),
//!   above it a fraction of base. Decrease: δ_slow = base/8, δ_fast = base/2. R within
//!   [`rate_min`, `rate_max`]. Before the first sample there is no pacing.
//! * Retransmissions of a CON use the RFC 6298 RTO over the accurate samples (K = 4, the RFC's
//!   1 s floor, initial 2 s = CoAP's ACK_TIMEOUT), doubling, capped at 60 s.
//!
//! The paper's Algorithm 1 and its constants could not be retrieved. Every constant below is
//! CHOSEN, NOT FROM THE PAPER: α_S = 1/2, α_L = 1/16, β_L = 1/8, μ gain 1/8, L_low = 0.01,
//! L_high = 0.1, fast/slow increase 1/2 and 1/8, decrease steps base/8 and base/2,
//! rate bounds [1/60, 100] messages/s.

use crate::controller::{Completion, Controller, ExchangeTimer, Marking, Metrics, Sample, Start};
use crate::estimator::Rfc6298;
use crate::params::{check, params};
use crate::time::{Duration, Instant};
use rand_core::RngCore;

/// RTT-CoAP's transmission-counter option (coap-wire's `RTT_COAP_TRANSMISSION_COUNTER`).
pub const RTT_COAP_OPTION: u16 = 65001;

params! {
    /// RTT-CoAP's parameters (all chosen, not from the paper).
    pub struct RttCoapParams {
        /// α_S: gain of the short-term SRTT.
        alpha_s: f64 = 0.5,
        /// α_L: gain of the long-term SRTT.
        alpha_l: f64 = 1.0 / 16.0,
        /// β_L: gain of the long-term RTTVAR.
        beta_l: f64 = 1.0 / 8.0,
        /// Gain of μ, the EWMA of the retransmission indicator.
        mu_gain: f64 = 1.0 / 8.0,
        /// L_low: below it, no decrease.
        l_low: f64 = 0.01,
        /// L_high: above it, no slow increase.
        l_high: f64 = 0.1,
        /// Fast increase fraction.
        inc_fast: f64 = 0.5,
        /// Slow increase fraction.
        inc_slow: f64 = 0.125,
        /// Slow decrease step, as a fraction of the base rate.
        dec_slow: f64 = 0.125,
        /// Fast decrease step, as a fraction of the base rate.
        dec_fast: f64 = 0.5,
        /// Lowest rate, messages/s.
        rate_min: f64 = 1.0 / 60.0,
        /// Highest rate, messages/s.
        rate_max: f64 = 100.0,
        /// RTO before any sample, s.
        initial_rto: f64 = 2.0,
        /// RFC 6298 lower bound of the RTO, s.
        rto_min: f64 = 1.0,
        /// Cap on every RTO, s.
        rto_max: f64 = 60.0,
        /// MAX_RETRANSMIT (RFC 7252 §4.8).
        max_retransmit: u32 = 4,
        /// NSTART (RFC 7252 §4.7).
        nstart: u32 = 1,
    }
}

impl RttCoapParams {
    /// Checks the values; on failure, the offending key and the rule it breaks.
    pub fn validate(&self) -> Result<(), (&'static str, &'static str)> {
        for (k, v) in
            [("alpha_s", self.alpha_s), ("alpha_l", self.alpha_l), ("beta_l", self.beta_l), ("mu_gain", self.mu_gain)]
        {
            check(v > 0.0 && v <= 1.0, k, "gains must be in (0, 1]")?;
        }
        check(0.0 <= self.l_low && self.l_low <= self.l_high, "l_low", "need 0 <= l_low <= l_high")?;
        check(0.0 < self.rate_min && self.rate_min <= self.rate_max, "rate_min", "need 0 < rate_min <= rate_max")?;
        check(0.0 < self.rto_min && self.rto_min <= self.rto_max, "rto_min", "need 0 < rto_min <= rto_max")?;
        crate::params::check_common(self.max_retransmit, self.nstart)
    }
}

/// The region of SRTT_S relative to the boundaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Region {
    /// Low congestion.
    Lc,
    /// Normal.
    No,
    /// Medium variation.
    Mv,
    /// High variation.
    Hv,
}

/// RTT-CoAP for one destination.
#[derive(Debug, Clone)]
pub struct RttCoap {
    p: RttCoapParams,
    srtt_s: f64,
    srtt_l: f64,
    rttvar_l: f64,
    has_sample: bool,
    mu: f64,
    rate: Option<f64>,
    last_start: Option<Instant>,
    est: Rfc6298,
}

impl RttCoap {
    /// A controller with no history.
    pub fn new(p: RttCoapParams) -> Self {
        RttCoap {
            p,
            srtt_s: 0.0,
            srtt_l: 0.0,
            rttvar_l: 0.0,
            has_sample: false,
            mu: 0.0,
            rate: None,
            last_start: None,
            est: Rfc6298::default(),
        }
    }

    fn rto(&self) -> f64 {
        match self.est.rto(4.0, 0.0) {
            Some(r) => r.clamp(self.p.rto_min, self.p.rto_max),
            None => self.p.initial_rto,
        }
    }

    /// The region of the last sample.
    pub fn region(&self) -> Region {
        let t = |g: f64| self.srtt_l + g * self.rttvar_l;
        if self.srtt_s < t(-1.0) {
            Region::Lc
        } else if self.srtt_s < t(1.0) {
            Region::No
        } else if self.srtt_s < t(2.0) {
            Region::Mv
        } else {
            Region::Hv
        }
    }

    fn sample(&mut self, r: f64) {
        let p = &self.p;
        if self.has_sample {
            self.rttvar_l = (1.0 - p.beta_l) * self.rttvar_l + p.beta_l * (self.srtt_l - r).abs();
            self.srtt_l = (1.0 - p.alpha_l) * self.srtt_l + p.alpha_l * r;
            self.srtt_s = (1.0 - p.alpha_s) * self.srtt_s + p.alpha_s * r;
        } else {
            (self.srtt_s, self.srtt_l, self.rttvar_l, self.has_sample) = (r, r, r / 2.0, true);
        }
        let base = 1.0 / self.srtt_l.max(1e-6);
        let rate = self.rate.unwrap_or(base);
        let inc = |frac: f64| if rate < base { frac * (base - rate) } else { frac * base };
        let can_decrease = self.mu >= p.l_low;
        let rate = match self.region() {
            Region::Lc => rate + inc(p.inc_fast),
            Region::No if self.mu <= p.l_high => rate + inc(p.inc_slow),
            Region::Mv if can_decrease => rate - p.dec_slow * base,
            Region::Hv if can_decrease => rate - p.dec_fast * base,
            _ => rate,
        };
        self.rate = Some(rate.clamp(p.rate_min, p.rate_max));
    }
}

impl Controller for RttCoap {
    fn name(&self) -> &'static str {
        "rtt_coap"
    }
    fn nstart(&self) -> usize {
        self.p.nstart as usize
    }
    fn earliest_start(&self, now: Instant, _confirmable: bool) -> Instant {
        match (self.last_start, self.rate) {
            (Some(last), Some(rate)) => now.max(last + Duration::from_secs_f64(1.0 / rate)),
            _ => now,
        }
    }
    fn start(&mut self, now: Instant, start: Start, _rng: &mut dyn RngCore) -> ExchangeTimer {
        self.last_start = Some(now);
        ExchangeTimer::from_secs(self.rto(), start, Marking::Option { number: RTT_COAP_OPTION, probe: false })
    }
    fn on_timeout(&mut self, _now: Instant, ex: &mut ExchangeTimer, _rng: &mut dyn RngCore) -> Option<Duration> {
        crate::controller::double(ex, self.p.max_retransmit, self.p.rto_max)
    }
    fn on_complete(&mut self, now: Instant, ex: &ExchangeTimer, done: &Completion<'_>) {
        let x = if ex.retransmissions > 0 { 1.0 } else { 0.0 };
        self.mu = (1.0 - self.p.mu_gain) * self.mu + self.p.mu_gain * x;
        if let Sample::Unambiguous { rtt, .. } = done.sample(now) {
            let rtt = rtt.as_secs_f64();
            self.est.update(rtt);
            self.sample(rtt);
        }
    }
    fn on_failure(&mut self, _now: Instant, _ex: &ExchangeTimer) {
        self.mu = (1.0 - self.p.mu_gain) * self.mu + self.p.mu_gain;
    }
    fn reset(&mut self) {
        *self = RttCoap::new(self.p.clone());
    }
    fn metrics(&self) -> Metrics {
        Metrics { rate: self.rate, ..Metrics::secs(self.rto(), self.has_sample.then_some(self.srtt_s)) }
    }
    fn rto_bounds(&self) -> (Duration, Duration) {
        crate::controller::bounds(self.p.rto_min.min(self.p.initial_rto), self.p.rto_max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::*;

    #[test]
    fn regions_and_rate_steps() {
        let mut c = RttCoap::new(RttCoapParams::default());
        c.sample(1.0); // SRTT_S = SRTT_L = 1, RTTVAR_L = 0.5; SRTT_S = T(0) → NO; rate starts at base 1/s
        assert_eq!(c.region(), Region::No);
        // NO with μ = 0 ≤ L_high: slow increase; rate == base → +1/8 of base
        assert_close(c.rate.unwrap(), 1.125);
        // R = 4: RTTVAR_L = 7/8·0.5 + 1/8·3 = 0.8125; SRTT_L = 15/16 + 4/16 = 1.1875;
        // SRTT_S = 2.5 ≥ T(2) = 1.1875 + 1.625 = 2.8125? no: 2.5 < 2.8125 and ≥ T(1) = 2.0 → MV.
        // μ = 0 < L_low: decreases disabled, rate unchanged
        c.sample(4.0);
        assert_eq!(c.region(), Region::Mv);
        assert_close(c.rate.unwrap(), 1.125);
        // with μ above L_low the same region decreases by base/8 = (1/1.1875)/8
        c.mu = 0.5;
        let before = c.rate.unwrap();
        c.sample(c.srtt_s); // R = 2.5 keeps SRTT_S at 2.5; SRTT_L = 1.1875·15/16 + 2.5/16
        let srtt_l = 1.1875 * 15.0 / 16.0 + 2.5 / 16.0;
        let rttvar_l = 0.8125 * 7.0 / 8.0 + (1.1875f64 - 2.5).abs() / 8.0;
        assert_close(c.srtt_l, srtt_l);
        // T(1) = 1.27 + 0.87 = 2.14 ≤ 2.5 < T(2) = 3.01 → MV
        assert!(srtt_l + rttvar_l <= 2.5 && 2.5 < srtt_l + 2.0 * rttvar_l);
        assert_close(c.rate.unwrap(), before - (1.0 / srtt_l) / 8.0);
    }

    #[test]
    fn pacing_and_accurate_marking() {
        let mut c = RttCoap::new(RttCoapParams::default());
        let mut r = rng(1);
        assert_eq!(c.earliest_start(t(0.0), true), t(0.0));
        let ex = c.start(t(0.0), CON, &mut r);
        assert_eq!(ex.marking(), Marking::Option { number: RTT_COAP_OPTION, probe: false });
        assert_close(ex.armed, 2.0);
        c.on_complete(t(0.5), &ex, &done(&[t(0.0)])); // rate = 2/s + 2/8 = 2.25/s
        assert_close(c.rate.unwrap(), 2.25);
        assert_eq!(c.earliest_start(t(0.1), true), t(0.0) + Duration::from_secs_f64(1.0 / 2.25));
        // RFC 6298 with its 1 s floor: 0.5 + 4·0.25 = 1.5
        assert_close(c.start(t(1.0), CON, &mut r).armed, 1.5);
    }
}
