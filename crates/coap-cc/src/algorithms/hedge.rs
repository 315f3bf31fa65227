//! `hedge` — coapcc's own algorithm, designed with the league (`coapcc league`; the design, its
//! ablation and where it loses: docs/algorithms.md, "hedge").
//!
//! Built from the league's evidence: the broadest algorithm of the literature, FASOR with the
//! transmission number in the token, loses on the clean meshes, where it retransmits up to 2.3
//! times per exchange and the Full Backoff family, which carries its backed-off timer into the
//! next exchange, 0.1; that carry collapses on the lossy and mobile meshes (cocoa_fb2 keeps 1 % of
//! the best rate at UDGM RX = 0.8). hedge keeps a fast timer from accurate samples and carries a
//! *bounded* backoff, only after losses that do not look random.
//!
//! * Accurate samples (`rtt_marking`, token by default; [`crate::marking`]): the response names
//!   the transmission it answers, so every completed exchange, retransmitted or not, gives the
//!   RTT of a known transmission. Without an echo (the option, to a peer that does not echo it),
//!   an exchange without retransmission still gives its sample; one with retransmissions none
//!   (Karn).
//! * RFC 6298 estimator (α = 1/8, β = 1/4, first sample SRTT = R, RTTVAR = R/2) over those
//!   samples; RTO = SRTT + `k`·RTTVAR with no 1-s floor (the crate's 1 ms) and capped at
//!   `rto_max`. Before any sample: `initial_rto` × U[1, `ack_random_factor`] (RFC 7252's [2, 3]).
//! * `dither` (off): FASOR's U[SRTT/4, SRTT] added to each exchange's first timer
//!   (draft-ietf-core-fasor-02). Measured in the league, it costs more under random loss (the
//!   high-error bottleneck W15: 27 % behind the best with it, 3 % without, in docs/algorithms.md's
//!   ablation) than it gains on the clean meshes.
//! * Timeouts double (binary exponential backoff), capped at `rto_max`; `max_retransmit`
//!   retransmissions, then the exchange fails.
//! * Carry (`carry`): after an exchange that needed retransmissions, the next exchanges start no
//!   lower than the timer that was armed when the response came, or when the exchange failed
//!   (`carry_failure`), bounded by `carry_cap` × the estimator's RTO (4: two doublings; 0:
//!   unbounded, Full Backoff's rule); each exchange completed without retransmission halves the
//!   carried value, which is dropped once it falls to the estimator's RTO or below (Full
//!   Backoff 2's decay). `carry=congestion` (default) carries only when the loss does not look
//!   random: the answered transmission's RTT exceeded SRTT + 2·RTTVAR as they stood before it (a
//!   queue built up), or no transmission could be named; a loss answered at the usual RTT (a radio
//!   or link error) carries nothing. `always`: every retransmitted exchange carries; `never`: none.
//!
//! Every mechanism is a parameter, so that `coapcc league --cc hedge:carry=never …` measures
//! what each contributes (docs/algorithms.md gives the ablation). The constants are the sources'
//! (RFC 6298's gains and K, RFC 7252's initial timer, the Full Backoff decay); hedge's own three
//! choices, the congestion test's SRTT + 2·RTTVAR, the cap of 4 and the dither left off, were
//! chosen while designing with the league, among 2, 3, 4, 8 and no cap, and are reported as such.

use crate::controller::{clamp_rto, Completion, Controller, ExchangeTimer, Metrics, Sample, Start};
use crate::estimator::Rfc6298;
use crate::marking::{MarkingKind, MarkingState, TRANSMISSION_NUMBER_OPTION};
use crate::params::{check, choice, params};
use crate::rng::uniform;
use crate::time::{Duration, Instant};
use rand_core::RngCore;

choice! {
    /// After which losses a backed-off timer carries into the next exchanges.
    pub enum CarryWhen { Never = "never", Always = "always", Congestion = "congestion" }
}

params! {
    /// hedge's parameters.
    pub struct HedgeParams {
        /// RTO before any sample, s.
        initial_rto: f64 = 2.0,
        /// Before any sample the RTO is initial_rto × U[1, this].
        ack_random_factor: f64 = 1.5,
        /// K of the RFC 6298 estimator.
        k: f64 = 4.0,
        /// Cap on every RTO, s.
        rto_max: f64 = 60.0,
        /// FASOR's dither U[SRTT/4, SRTT] on each exchange's first timer.
        dither: bool = false,
        /// After which losses the backed-off timer carries over: never, always, congestion.
        carry: CarryWhen = CarryWhen::Congestion,
        /// The carried timer is at most this × the estimator's RTO (0: no bound).
        carry_cap: f64 = 4.0,
        /// A failed exchange carries its last timer.
        carry_failure: bool = true,
        /// Accurate RTT samples: none, token or option.
        rtt_marking: MarkingKind = MarkingKind::Token,
        /// Option number of the transmission-number option (Californium's 0xFE04).
        option_number: u32 = TRANSMISSION_NUMBER_OPTION as u32,
        /// MAX_RETRANSMIT (RFC 7252 §4.8).
        max_retransmit: u32 = 4,
        /// NSTART (RFC 7252 §4.7).
        nstart: u32 = 1,
    }
}

impl HedgeParams {
    /// Checks the values; on failure, the offending key and the rule it breaks.
    pub fn validate(&self) -> Result<(), (&'static str, &'static str)> {
        crate::params::check_initial_rto(self.initial_rto, self.rto_max)?;
        check(self.ack_random_factor >= 1.0, "ack_random_factor", "must be >= 1")?;
        check(self.k >= 0.0, "k", "must be >= 0")?;
        check(self.carry_cap == 0.0 || self.carry_cap >= 1.0, "carry_cap", "must be 0 (no bound) or >= 1")?;
        check(self.option_number <= u16::MAX as u32, "option_number", "must be <= 65535")?;
        crate::params::check_common(self.max_retransmit, self.nstart)
    }
}

/// hedge for one destination.
#[derive(Debug, Clone)]
pub struct Hedge {
    p: HedgeParams,
    est: Rfc6298,
    /// The backed-off timer carried into the next exchanges, s.
    carry: Option<f64>,
    marking: MarkingState,
}

impl Hedge {
    /// A controller with no history.
    pub fn new(p: HedgeParams) -> Self {
        Hedge {
            marking: MarkingState::new(p.rtt_marking, p.option_number as u16),
            p,
            est: Rfc6298::default(),
            carry: None,
        }
    }

    /// The estimator's RTO, if a sample was seen.
    fn estimate(&self) -> Option<f64> {
        self.est.rto(self.p.k, 0.0).map(|r| clamp_rto(r, self.p.rto_max))
    }

    /// The timer carried into the next exchanges, s (None: nothing carried).
    pub fn carried(&self) -> Option<f64> {
        self.carry
    }

    /// Carries `ex`'s last timer, within the cap.
    fn carry_over(&mut self, ex: &ExchangeTimer) {
        let mut c = ex.rto_secs();
        if let (true, Some(rto)) = (self.p.carry_cap > 0.0, self.estimate()) {
            c = c.min(self.p.carry_cap * rto);
        }
        self.carry = Some(c);
    }
}

impl Controller for Hedge {
    fn name(&self) -> &'static str {
        "hedge"
    }
    fn nstart(&self) -> usize {
        self.p.nstart as usize
    }
    fn start(&mut self, _now: Instant, start: Start, rng: &mut dyn RngCore) -> ExchangeTimer {
        let p = &self.p;
        let mut rto = match (self.estimate(), self.est.srtt()) {
            (Some(rto), Some(srtt)) if p.dither => rto + uniform(rng, srtt / 4.0, srtt),
            (Some(rto), _) => rto,
            _ => uniform(rng, p.initial_rto, p.initial_rto * p.ack_random_factor),
        };
        if let Some(c) = self.carry {
            rto = rto.max(c);
        }
        ExchangeTimer::from_secs(clamp_rto(rto, p.rto_max), start, self.marking.next())
    }
    fn on_timeout(&mut self, _now: Instant, ex: &mut ExchangeTimer, _rng: &mut dyn RngCore) -> Option<Duration> {
        crate::controller::double(ex, self.p.max_retransmit, self.p.rto_max)
    }
    fn on_complete(&mut self, now: Instant, ex: &ExchangeTimer, done: &Completion<'_>) {
        self.marking.observe(ex, done);
        let retransmitted = done.sent.len() > 1;
        // the answered transmission's RTT; none after retransmissions without an echo (Karn)
        let sample = match done.sample(now) {
            Sample::Unambiguous { rtt, .. } => Some(rtt.as_secs_f64()),
            Sample::Ambiguous { .. } => None,
        };
        let usual = self.est.rto(2.0, 0.0);
        if let Some(r) = sample {
            self.est.update(r);
        }
        if retransmitted {
            let carry = match self.p.carry {
                CarryWhen::Never => false,
                CarryWhen::Always => true,
                CarryWhen::Congestion => match (sample, usual) {
                    (Some(r), Some(usual)) => r > usual,
                    _ => true,
                },
            };
            if carry {
                self.carry_over(ex);
            }
        } else if let Some(c) = self.carry {
            let half = c / 2.0;
            self.carry = match self.estimate() {
                Some(rto) if half <= rto => None,
                _ => Some(half),
            };
        }
    }
    fn on_failure(&mut self, _now: Instant, ex: &ExchangeTimer) {
        if self.p.carry != CarryWhen::Never && self.p.carry_failure {
            self.carry_over(ex);
        }
    }
    fn reset(&mut self) {
        *self = Hedge::new(self.p.clone());
    }
    fn metrics(&self) -> Metrics {
        let rto = self.estimate().unwrap_or(self.p.initial_rto);
        Metrics::secs(self.carry.map_or(rto, |c| rto.max(c)), self.est.srtt())
    }
    fn rto_bounds(&self) -> (Duration, Duration) {
        crate::controller::bounds(crate::controller::RTO_FLOOR, self.p.rto_max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::{Echo, Marking};
    use crate::testutil::*;

    /// Completes an exchange whose transmissions went at `sent`, answered at `at`, echoing
    /// transmission `echo` (None: no echo); its last timer was `armed`.
    fn answer(c: &mut Hedge, sent: &[Instant], at: f64, echo: Option<u8>, armed: f64) {
        let mut ex = c.start(sent[0], CON, &mut rng(1));
        ex.retransmissions = sent.len() as u32 - 1;
        ex.armed = armed;
        let echo = echo.map_or(Echo::None, Echo::Number);
        c.on_complete(t(at), &ex, &Completion { sent, echo, piggybacked: true });
    }

    fn first_rto(c: &mut Hedge) -> f64 {
        c.start(t(0.0), CON, &mut rng(2)).rto_secs()
    }

    #[test]
    fn before_any_sample_the_timer_is_drawn_from_2_to_3_s_and_doubles() {
        let mut c = Hedge::new(HedgeParams::default());
        let mut r = rng(3);
        for _ in 0..100 {
            let mut ex = c.start(t(0.0), CON, &mut r);
            let first = ex.rto_secs();
            assert!((2.0..=3.0).contains(&first), "{first}");
            assert_eq!(ex.marking(), Marking::Token);
            // 4 retransmissions at 2, 4, 8, 16 × the first timer, then the exchange fails
            for n in 1..=4 {
                assert!(c.on_timeout(t(0.0), &mut ex, &mut r).is_some());
                assert_eq!(ex.rto_secs(), first * f64::powi(2.0, n));
            }
            assert_eq!(c.on_timeout(t(0.0), &mut ex, &mut r), None);
        }
    }

    #[test]
    fn rfc6298_over_echoed_samples_and_the_dither() {
        let mut c = Hedge::new(HedgeParams::default());
        // R = 1 (no retransmission): SRTT 1, RTTVAR 0.5 → RTO 1 + 4·0.5 = 3
        answer(&mut c, &[t(0.0)], 1.0, Some(0), 3.0);
        assert_close(first_rto(&mut c), 3.0);
        // a retransmitted exchange whose response echoes transmission 1 (sent at 3 s, answered
        // at 4 s): sample 1 s, not the 4 s since the original. RTTVAR 3/4·0.5 = 0.375 → 2.5
        answer(&mut c, &[t(0.0), t(3.0)], 4.0, Some(1), 6.0);
        assert_close(first_rto(&mut c), 2.5);
        // FASOR's dither: U[SRTT/4, SRTT] = [0.25, 1] on top of the RTO
        let mut d = Hedge::new(HedgeParams { carry: CarryWhen::Never, dither: true, ..HedgeParams::default() });
        answer(&mut d, &[t(0.0)], 1.0, Some(0), 3.0);
        let mut r = rng(4);
        for _ in 0..100 {
            let x = d.start(t(0.0), CON, &mut r).rto_secs();
            assert!((3.25..=4.0).contains(&x), "{x}");
        }
    }

    #[test]
    fn without_an_echo_a_retransmitted_exchange_gives_no_sample() {
        let p = HedgeParams { rtt_marking: MarkingKind::None, carry: CarryWhen::Never, ..HedgeParams::default() };
        let mut c = Hedge::new(p);
        answer(&mut c, &[t(0.0)], 1.0, None, 3.0);
        answer(&mut c, &[t(0.0), t(3.0)], 9.0, None, 6.0); // Karn: no sample of 9 or 6 s
        assert_close(first_rto(&mut c), 3.0);
    }

    #[test]
    fn a_random_loss_carries_nothing_a_congestive_one_a_bounded_timer() {
        let mut c = Hedge::new(HedgeParams { carry_cap: 2.0, ..HedgeParams::default() });
        // SRTT 1, RTTVAR 0.5: RTO 3, usual ≤ 2
        answer(&mut c, &[t(0.0)], 1.0, Some(0), 3.0);
        // the retransmission answered after 1.5 s ≤ SRTT + 2·RTTVAR = 2: a random loss
        answer(&mut c, &[t(0.0), t(3.0)], 4.5, Some(1), 6.0);
        assert_eq!(c.carried(), None);
        // now SRTT 1.0625, RTTVAR 0.5 (3/4·0.5 + 1/4·0.5); RTO 3.0625; usual 2.0625. The
        // retransmission answered after 3 s: congestion. Carried: min(12, 2 × RTO after this
        // sample). After it: RTTVAR 3/4·0.5 + 1/4·1.9375 = 0.859375, SRTT 1.0625 + 1.9375/8
        // = 1.30468750 → RTO 4.74218750; cap 9.484375
        answer(&mut c, &[t(0.0), t(3.0), t(9.0)], 12.0, Some(2), 12.0);
        assert_close(c.carried().unwrap(), 2.0 * (1.3046875 + 4.0 * 0.859375));
        assert_close(first_rto(&mut c), 9.484375);
        // a clean exchange (R = 1.3046875 keeps SRTT; RTTVAR 3/4·0.859375 = 0.64453125 →
        // RTO 3.88281250) halves the carry to 4.7421875, still above the RTO
        answer(&mut c, &[t(0.0)], 1.3046875, Some(0), 9.484375);
        assert_close(c.carried().unwrap(), 4.7421875);
        // the next (RTTVAR 0.4833984375 → RTO 3.23828125) halves it to 2.37109375 ≤ RTO: dropped
        answer(&mut c, &[t(0.0)], 1.3046875, Some(0), 4.7421875);
        assert_eq!(c.carried(), None);
        assert_close(first_rto(&mut c), 1.3046875 + 4.0 * 0.4833984375);
    }

    #[test]
    fn carry_rules_always_never_unbounded_and_failures() {
        let setup = |carry, cap| {
            let mut c = Hedge::new(HedgeParams { carry, carry_cap: cap, ..HedgeParams::default() });
            answer(&mut c, &[t(0.0)], 1.0, Some(0), 3.0); // RTO 3
            c
        };
        // always: even the random loss carries, bounded by 2 × RTO (RTO after 1.5 s: SRTT
        // 1.0625, RTTVAR 0.5 → 3.0625)
        let mut c = setup(CarryWhen::Always, 2.0);
        answer(&mut c, &[t(0.0), t(3.0)], 4.5, Some(1), 6.0);
        assert_close(c.carried().unwrap(), 6.0); // min(6, 6.125)

        // never: nothing, whatever the loss
        let mut c = setup(CarryWhen::Never, 2.0);
        answer(&mut c, &[t(0.0), t(3.0), t(9.0)], 30.0, Some(0), 12.0);
        assert_eq!(c.carried(), None);
        // unbounded (cap 0): the whole backed-off timer, as Full Backoff carries it
        let mut c = setup(CarryWhen::Congestion, 0.0);
        answer(&mut c, &[t(0.0), t(3.0), t(9.0)], 14.0, Some(2), 12.0);
        assert_close(c.carried().unwrap(), 12.0);
        // a failure carries its last timer, bounded: 2 × 3 = 6 of 48
        let mut c = setup(CarryWhen::Congestion, 2.0);
        let mut ex = c.start(t(0.0), CON, &mut rng(5));
        ex.armed = 48.0;
        c.on_failure(t(90.0), &ex);
        assert_close(c.carried().unwrap(), 6.0);
        let mut c = Hedge::new(HedgeParams { carry_failure: false, ..HedgeParams::default() });
        c.on_failure(t(90.0), &ex);
        assert_eq!(c.carried(), None);
    }

    #[test]
    fn bad_parameters_are_refused() {
        let bad = |p: HedgeParams| p.validate().unwrap_err().0;
        assert_eq!(bad(HedgeParams { carry_cap: 0.5, ..HedgeParams::default() }), "carry_cap");
        assert_eq!(bad(HedgeParams { ack_random_factor: 0.9, ..HedgeParams::default() }), "ack_random_factor");
        assert_eq!(bad(HedgeParams { k: -1.0, ..HedgeParams::default() }), "k");
        assert!(HedgeParams::default().validate().is_ok());
    }
}
