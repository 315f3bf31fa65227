//! `eifel` — CoAP-Eifel: the Eifel retransmission timer (Ludwig & Sklower, "The Eifel
//! retransmission timer", ACM CCR 2000), adapted to CoAP.
//!
//! Karn sampling (no sample from a retransmitted exchange). GAIN = 1/3 (one sample per RTT).
//! δ = R − SRTT; GAIN' = GAIN if δ − RTTVAR ≥ 0 else GAIN²; SRTT += GAIN·δ;
//! RTTVAR += GAIN'·(δ − RTTVAR) only if δ ≥ 0 (else unchanged);
//! RTO = max(SRTT + RTTVAR/GAIN, R + 2·tick) (= SRTT + 3·RTTVAR with GAIN = 1/3).
//! * First sample: SRTT = R, RTTVAR = R/2 (`first=half`). The authors' code starts both from 0
//!   and applies the update (`first=zero`: SRTT = R/3, RTTVAR = R/3): a quirk kept as an option.
//! * Before any sample the RTO is 2 s (the source's "2 ticks" of a 1 s CoAP tick); `tick` of the
//!   "+2 ticks" term is 1 ms.
//! * Each exchange's initial timer is dithered like DefaultCoAP's, ×U[1, 1.5] (reading chosen:
//!   every exchange, since DefaultCoAP dithers every exchange), except a carried-over one.
//! * Timeouts double (capped at `rto_max` = 60 s). The backed-off timer of a retransmitted
//!   exchange becomes the peer's RTO for the next exchange (Karn carry-over), used as is, until
//!   the next sample (`estimate = "kept"`, the thesis's description).
//!
//! The NITK author's published code (vishal623/CoAP-Fullbackoff-Variants f7b517a: the Eifel
//! lines of `apps/er-coap/er-coap-transactions.c`, commented out there, and `er-coap-eifel.c`),
//! read line by line, keeps no estimator from one sample to the next (`estimate =
//! "last_sample"`): each exchange's start takes the peer's estimate and frees it (`check_rtt`:
//! `list_remove`, `memb_free`); a transaction freed without retransmission makes a new one from
//! its RTT with SRTT = RTTVAR = 0 (`calculateRTO`: SRTT = RTTVAR = R/3, RTO = max(4R/3, R + 2
//! ticks)); one freed after retransmissions makes none (`update_rto` finds nothing to update), so
//! the next exchange starts from COAP_INITIAL_RTO (2 s), dithered as every first timer. All of
//! it in whole clock ticks (`tick`; 1 ms on Cooja motes), as `clock_time_t` counts: R is the
//! clock's count between request and response, R/3 an integer division, and the first timer
//! `rto + random_rand() % (rto >> 1)` ticks.

use crate::controller::{clamp_rto, Completion, Controller, ExchangeTimer, Metrics, Sample, Start};
use crate::marking::{MarkingKind, MarkingState, TRANSMISSION_NUMBER_OPTION};
use crate::params::{check, choice, params};
use crate::rng::uniform;
use crate::time::{Duration, Instant};
use rand_core::RngCore;

choice! {
    /// How the first sample initialises the estimator.
    pub enum EifelFirst { Half = "half", Zero = "zero" }
}

choice! {
    /// What an exchange starts from: the estimator kept across samples, or the last sample alone.
    pub enum EifelEstimate { Kept = "kept", LastSample = "last_sample" }
}

params! {
    /// CoAP-Eifel's parameters.
    pub struct EifelParams {
        /// RTO before any sample, s.
        initial_rto: f64 = 2.0,
        /// Each exchange's initial timer is RTO × U[1, this].
        ack_random_factor: f64 = 1.5,
        /// GAIN (Eifel: 1/3).
        gain: f64 = 1.0 / 3.0,
        /// Clock tick of the RTT + 2·tick floor, s.
        tick: f64 = 0.001,
        /// First sample: half (SRTT = R, RTTVAR = R/2) or zero (the authors' code).
        first: EifelFirst = EifelFirst::Half,
        /// `kept`: SRTT and RTTVAR carry from sample to sample, and a retransmitted exchange's backed-off timer into the next exchange; `last_sample`: the NITK author's published code, where each exchange's start consumes the peer's estimate, a clean exchange makes a new one from its RTT alone (as `first = "zero"`: RTO = max(4R/3, R + 2 ticks)) and after a retransmitted one the next starts from `initial_rto`.
        estimate: EifelEstimate = EifelEstimate::Kept,
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

impl EifelParams {
    /// Checks the values; on failure, the offending key and the rule it breaks.
    pub fn validate(&self) -> Result<(), (&'static str, &'static str)> {
        crate::params::check_initial_rto(self.initial_rto, self.rto_max)?;
        check(self.ack_random_factor >= 1.0, "ack_random_factor", "must be >= 1")?;
        check(self.gain > 0.0 && self.gain <= 1.0, "gain", "must be in (0, 1]")?;
        check(self.tick >= 0.0, "tick", "must be >= 0")?;
        crate::params::check_common(self.max_retransmit, self.nstart)
    }
}

/// CoAP-Eifel for one destination.
#[derive(Debug, Clone)]
pub struct Eifel {
    p: EifelParams,
    est: Option<(f64, f64)>,
    rto: f64,
    carried: bool,
    marking: MarkingState,
}

impl Eifel {
    /// A controller with no history.
    pub fn new(p: EifelParams) -> Self {
        Eifel {
            rto: p.initial_rto,
            carried: false,
            marking: MarkingState::new(p.rtt_marking, TRANSMISSION_NUMBER_OPTION),
            p,
            est: None,
        }
    }

    /// The published code's estimate from one sample (`estimate = "last_sample"`): a new entry
    /// from SRTT = RTTVAR = 0 (`calculateRTO` with GAIN 1/3 gives SRTT = RTTVAR = R/3), in whole
    /// clock ticks as `clock_time_t` counts them when `tick` > 0: R is the ticks the clock counted
    /// between the request (sent `rtt` before `now`) and the response, and R/3 an integer division.
    fn last_sample(&mut self, now: Instant, rtt: Duration) {
        let Some(tick_ns) = self.tick_ns() else {
            self.est = None;
            self.update(rtt.as_secs_f64(), EifelFirst::Zero);
            return;
        };
        let at = now.as_nanos();
        let r = at / tick_ns - at.saturating_sub(rtt.as_nanos()) / tick_ns;
        let third = r / 3;
        let tick = self.p.tick;
        self.est = Some((third as f64 * tick, third as f64 * tick));
        self.rto = clamp_rto((4 * third).max(r + 2) as f64 * tick, self.p.rto_max);
    }

    /// The published code's clock tick, ns: `Some` when it counts in whole ticks
    /// (`estimate = "last_sample"` with a `tick`).
    fn tick_ns(&self) -> Option<u64> {
        let ns = (self.p.tick * 1e9 + 0.5) as u64;
        (self.p.estimate == EifelEstimate::LastSample && ns > 0).then_some(ns)
    }

    fn update(&mut self, r: f64, first: EifelFirst) {
        let gain = self.p.gain;
        let (mut srtt, mut rttvar) = match (self.est, first) {
            (Some(e), _) => e,
            (None, EifelFirst::Zero) => (0.0, 0.0),
            (None, EifelFirst::Half) => {
                self.est = Some((r, r / 2.0));
                self.rto = clamp_rto((r + r / 2.0 / gain).max(r + 2.0 * self.p.tick), self.p.rto_max);
                return;
            }
        };
        let delta = r - srtt;
        let gain2 = if delta - rttvar >= 0.0 { gain } else { gain * gain };
        srtt += gain * delta;
        if delta >= 0.0 {
            rttvar += gain2 * (delta - rttvar);
        }
        self.est = Some((srtt, rttvar));
        self.rto = clamp_rto((srtt + rttvar / gain).max(r + 2.0 * self.p.tick), self.p.rto_max);
    }
}

impl Controller for Eifel {
    fn name(&self) -> &'static str {
        "eifel"
    }
    fn nstart(&self) -> usize {
        self.p.nstart as usize
    }
    fn start(&mut self, _now: Instant, start: Start, rng: &mut dyn RngCore) -> ExchangeTimer {
        let initial = if self.carried {
            self.rto
        } else if self.tick_ns().is_some() {
            // `rto + random_rand() % (rto >> 1)` in ticks (the factor's share of the RTO)
            let tick = self.p.tick;
            let n = (self.rto / tick + 0.5) as u64;
            let spread = ((n as f64 * (self.p.ack_random_factor - 1.0)) as u64).max(1);
            (n + rng.next_u64() % spread) as f64 * tick
        } else {
            uniform(rng, self.rto, self.rto * self.p.ack_random_factor)
        };
        ExchangeTimer::from_secs(clamp_rto(initial, self.p.rto_max), start, self.marking.next())
    }
    fn on_timeout(&mut self, _now: Instant, ex: &mut ExchangeTimer, _rng: &mut dyn RngCore) -> Option<Duration> {
        crate::controller::double(ex, self.p.max_retransmit, self.p.rto_max)
    }
    fn on_complete(&mut self, now: Instant, ex: &ExchangeTimer, done: &Completion<'_>) {
        self.marking.observe(ex, done);
        match done.sample(now) {
            Sample::Unambiguous { rtt, .. } => {
                match self.p.estimate {
                    EifelEstimate::Kept => self.update(rtt.as_secs_f64(), self.p.first),
                    EifelEstimate::LastSample => self.last_sample(now, rtt),
                }
                self.carried = false;
            }
            Sample::Ambiguous { .. } => self.on_failure(now, ex),
        }
    }
    fn on_failure(&mut self, _now: Instant, ex: &ExchangeTimer) {
        match self.p.estimate {
            EifelEstimate::Kept => {
                self.rto = ex.armed;
                self.carried = true;
            }
            EifelEstimate::LastSample => {
                // no estimate is left for the peer: COAP_INITIAL_RTO
                self.est = None;
                self.rto = self.p.initial_rto;
            }
        }
    }
    fn reset(&mut self) {
        *self = Eifel::new(self.p.clone());
    }
    fn metrics(&self) -> Metrics {
        Metrics::secs(self.rto, self.est.map(|e| e.0))
    }
    fn rto_bounds(&self) -> (Duration, Duration) {
        crate::controller::bounds(crate::controller::RTO_FLOOR, self.p.rto_max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::*;

    #[test]
    fn gains_by_hand() {
        let mut c = Eifel::new(EifelParams::default());
        // first R = 1: SRTT 1, RTTVAR 0.5, RTO = 1 + 0.5·3 = 2.5
        c.update(1.0, EifelFirst::Half);
        assert_close(c.rto, 2.5);
        // R = 2: δ = 1, δ − RTTVAR = 0.5 ≥ 0 → GAIN' = 1/3; SRTT = 1 + 1/3;
        // RTTVAR = 0.5 + (1 − 0.5)/3 = 2/3; RTO = 4/3 + 2 = 10/3
        c.update(2.0, EifelFirst::Half);
        assert_close(c.est.unwrap().0, 4.0 / 3.0);
        assert_close(c.est.unwrap().1, 2.0 / 3.0);
        assert_close(c.rto, 10.0 / 3.0);
        // R = 1.5: δ = 1/6 ≥ 0 but δ − RTTVAR < 0 → GAIN' = 1/9; SRTT = 4/3 + 1/18 = 25/18;
        // RTTVAR = 2/3 + (1/6 − 2/3)/9 = 2/3 − 1/18 = 11/18; RTO = 25/18 + 33/18 = 58/18
        c.update(1.5, EifelFirst::Half);
        assert_close(c.est.unwrap().1, 11.0 / 18.0);
        assert_close(c.rto, 58.0 / 18.0);
        // R = 1: δ < 0 → RTTVAR unchanged; SRTT = 25/18 − (7/18)/3 = 68/54
        c.update(1.0, EifelFirst::Half);
        assert_close(c.est.unwrap().1, 11.0 / 18.0);
        assert_close(c.est.unwrap().0, 68.0 / 54.0);
        assert_close(c.rto, 68.0 / 54.0 + 33.0 / 18.0);
    }

    #[test]
    fn authors_zero_start_and_carry_over() {
        let mut c = Eifel::new(EifelParams { first: EifelFirst::Zero, max_retransmit: 20, ..EifelParams::default() });
        c.update(1.5, EifelFirst::Zero); // δ = 1.5 → SRTT 0.5, RTTVAR 0.5 → RTO 0.5 + 1.5 = 2.0
        assert_close(c.rto, 2.0);
        let mut r = rng(1);
        let mut ex = c.start(t(0.0), CON, &mut r);
        assert!((2.0..3.0).contains(&ex.armed));
        let a0 = ex.armed;
        c.on_timeout(t(0.0), &mut ex, &mut r);
        c.on_complete(t(9.0), &ex, &done(&[t(0.0), t(3.0)]));
        assert_close(c.start(t(10.0), CON, &mut r).armed, 2.0 * a0); // carried, not dithered
    }

    #[test]
    fn the_published_code_keeps_only_the_last_sample_in_ticks() {
        let mut c = Eifel::new(EifelParams { estimate: EifelEstimate::LastSample, ..EifelParams::default() });
        // 1-ms ticks. A request at 10.0004 s answered at 10.0154 s: the clock counts 10015 − 10000
        // = 15 ticks; SRTT = RTTVAR = 15/3 = 5; RTO = max(5 + 3·5, 15 + 2) = 20 ticks
        c.last_sample(t(10.0154), Duration::from_millis(15));
        assert_close(c.rto, 0.020);
        // then 14 ticks (10 − 24 ms): 14/3 = 4 → max(16, 16) = 16 ticks, nothing kept of the 15
        c.last_sample(t(20.0243), Duration::from_micros(14_200));
        assert_close(c.est.unwrap().0, 0.004);
        assert_close(c.rto, 0.016);
        // 4 ticks: 4/3 = 1 → max(4, 6) = 6 ticks, the R + 2 ticks floor
        c.last_sample(t(30.004), Duration::from_millis(4));
        assert_close(c.rto, 0.006);
        // the first timer: 6 + U{0..2} ticks (6 >> 1 = 3 values)
        let mut r = rng(3);
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..200 {
            let ex = c.start(t(40.0), CON, &mut r);
            seen.insert((ex.armed * 1000.0).round() as u64);
            c.on_failure(t(40.0), &ex);
            c.last_sample(t(30.004), Duration::from_millis(4));
        }
        assert_eq!(seen.into_iter().collect::<Vec<_>>(), [6, 7, 8]);
        // a retransmitted exchange leaves no estimate: the next starts from 2 s + U{0..999} ms
        let mut ex = c.start(t(50.0), CON, &mut r);
        c.on_timeout(t(50.0), &mut ex, &mut r);
        c.on_complete(t(59.0), &ex, &done(&[t(50.0), t(53.0)]));
        let next = c.start(t(60.0), CON, &mut r).armed;
        let ms = next * 1000.0;
        assert!((2000.0..3000.0).contains(&ms) && (ms - ms.round()).abs() < 1e-6, "{next}");
    }
}
