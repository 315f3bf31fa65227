//! `fasor`, `fasor_k4`, `fasor_slow`, `fasor_fastslow`, `fasor_token`, `fasor_option` — FASOR,
//! the Fast-Slow RTO (Järvinen, Raitahila, Cao, Kojo, GLOBECOM 2018; normative source:
//! draft-ietf-core-fasor-02, 2023, which supersedes the thesis pseudocode).
//!
//! State per destination: fastrto (an RFC 6298 RTO with K = 4 and no 1 s floor), slowrto, the
//! state NORMAL / FAST_SLOW_FAST / SLOW_FAST, and the estimator.
//! * Initial fastrto = 2 s. The value that starts a fast series is fastrto + dither, the dither
//!   uniform in [SRTT/4, SRTT]; before any sample SRTT is taken as fastrto/3 = 2/3, so the first
//!   timer lies in [2.167, 2.667]. Doubled values are not dithered again (`dither_doubled`),
//!   slowrto is not dithered (`dither_slow`): the draft is silent on both. The dither is drawn
//!   when the exchange starts, also in SLOW_FAST where the fast series only begins at n = 1.
//! * Unambiguous ACK: RFC 6298 update; the FIRST sample sets SRTT = R, RTTVAR = R/(2K) = R/8,
//!   so fastrto = 1.5·R (`first_rttvar=text`, the draft's text). `pseudocode`: RTTVAR = R/2 with
//!   K = 1 for that one sample (same first RTO, different later ones). `rfc6298` (`fasor_k4`):
//!   plain RFC 6298, RTTVAR = R/2 and K = 4 (3·R). State → NORMAL.
//! * Ambiguous ACK: slowrto = 1.5 × (time from the ORIGINAL transmission to the ACK),
//!   overwritten each time; state NORMAL → FAST_SLOW_FAST → SLOW_FAST → SLOW_FAST.
//! * RTO for transmission n (0 = original), f = the fast series' first value:
//!   NORMAL f, 2f, 4f, …; FAST_SLOW_FAST f, max(slowrto, 2·fastrto), 2f, 4f, …;
//!   SLOW_FAST slowrto, f, 2f, …. Every armed RTO is capped at `rto_max` = 60 s.
//! * No retransmission limit of its own (RFC 7252's MAX_RETRANSMIT), no aging, no NSTART rule.
//! * The state used by an exchange is the state when it started.
//!
//! Development variants (thesis): `fasor_slow` — after retransmissions the next exchanges use
//! slowrto, doubling (slowrto, 2·slowrto, …) until an unambiguous ACK; `fasor_fastslow` — after
//! retransmissions the next exchange probes with the fast value first, then slowrto, then doubles
//! slowrto.
//!
//! Accurate RTT (`fasor_token`, `fasor_option`; [`crate::marking`]): every sample is
//! measured from the transmission the response names. While the marking is in use the fast
//! series starts from max(fastrto, the previous exchange's RTT sample) (`prev_sample_base`). The
//! draft does not say how a matched sample from a retransmitted exchange moves the state machine:
//! `matched=unambiguous` (default) updates fastrto and goes to NORMAL; `matched=ambiguous`
//! updates fastrto but takes the ambiguous transition (slowrto from the original transmission).

use crate::controller::{
    clamp_rto, Completion, Controller, ExchangeTimer, Metrics, Sample, Start, TimerState, TIMER_STATE_WORDS,
};
use crate::estimator::Rfc6298;
use crate::marking::{MarkingKind, MarkingState, TRANSMISSION_NUMBER_OPTION};
use crate::params::{check, choice, params};
use crate::rng::uniform;
use crate::time::{Duration, Instant};
use rand_core::RngCore;

choice! {
    /// How the first RTT sample initialises RTTVAR.
    pub enum FirstRttvar { Text = "text", Pseudocode = "pseudocode", Rfc6298 = "rfc6298" }
}
choice! {
    /// How a matched (echoed) sample of a retransmitted exchange moves the state machine.
    pub enum Matched { Unambiguous = "unambiguous", Ambiguous = "ambiguous" }
}

params! {
    /// FASOR's parameters (draft-ietf-core-fasor-02).
    pub struct FasorParams {
        /// fastrto before any sample, s.
        initial_rto: f64 = 2.0,
        /// MAX_RETRANSMIT (RFC 7252 §4.8; the reference testbed uses 20).
        max_retransmit: u32 = 4,
        /// NSTART (RFC 7252 §4.7).
        nstart: u32 = 1,
        /// Cap on every armed RTO, s.
        rto_max: f64 = 60.0,
        /// K of the RFC 6298 estimator.
        k: f64 = 4.0,
        /// First sample: text (RTTVAR = R/2K), pseudocode (RTTVAR = R/2, K = 1 once) or rfc6298.
        first_rttvar: FirstRttvar = FirstRttvar::Text,
        /// slowrto = this × the ambiguous RTT.
        slow_factor: f64 = 1.5,
        /// Dither the start of each fast series by U[SRTT/4, SRTT].
        dither: bool = true,
        /// Draw a fresh dither for each doubled value of the fast series.
        dither_doubled: bool = false,
        /// Dither slowrto as well.
        dither_slow: bool = false,
        /// Accurate RTT samples: none, token or option.
        rtt_marking: MarkingKind = MarkingKind::None,
        /// Option number of the transmission-number option (Californium's 0xFE04).
        option_number: u32 = TRANSMISSION_NUMBER_OPTION as u32,
        /// Matched sample of a retransmitted exchange: unambiguous (a) or ambiguous transition (b).
        matched: Matched = Matched::Unambiguous,
        /// With marking in use, start the fast series from max(fastrto, previous RTT sample).
        prev_sample_base: bool = true,
    }
}

impl FasorParams {
    /// Checks the values; on failure, the offending key and the rule it breaks.
    pub fn validate(&self) -> Result<(), (&'static str, &'static str)> {
        crate::params::check_initial_rto(self.initial_rto, self.rto_max)?;
        crate::params::check_common(self.max_retransmit, self.nstart)?;
        check(self.k >= 0.0, "k", "must be >= 0")?;
        check(self.slow_factor > 0.0, "slow_factor", "must be > 0")?;
        check(self.option_number <= u16::MAX as u32, "option_number", "must be <= 65535")
    }
}

/// Which member of the FASOR family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FasorVariant {
    /// FASOR as drafted.
    Fasor,
    /// Development variant: slowrto doubling after retransmissions.
    Slow,
    /// Development variant: fast probe, then slowrto doubling.
    FastSlow,
}

/// A FASOR-family configuration: the parameters and the variant.
#[derive(Debug, Clone, PartialEq)]
pub struct FasorConfig {
    /// FASOR's parameters.
    pub params: FasorParams,
    /// Which member of the family.
    pub variant: FasorVariant,
}

crate::params::delegate_params!(FasorConfig, params);

impl FasorConfig {
    /// Checks the parameters; on failure, the offending key and the rule it breaks.
    pub fn validate(&self) -> Result<(), (&'static str, &'static str)> {
        self.params.validate()
    }
}

/// FASOR's states.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// FAST: the last ACK was unambiguous.
    Normal = 0,
    /// One ambiguous ACK.
    FastSlowFast = 1,
    /// Two or more ambiguous ACKs in a row.
    SlowFast = 2,
}

/// FASOR's per-exchange state, kept in the exchange's timer: the fast series' base, the
/// exchange's dither, and the state it started in.
#[derive(Debug, Clone, Copy, PartialEq)]
struct FasorTimer {
    base: f64,
    dither: f64,
    phase: State,
}

impl TimerState for FasorTimer {
    fn encode(self) -> [u64; TIMER_STATE_WORDS] {
        [self.base.to_bits(), self.dither.to_bits(), self.phase as u64]
    }
    fn decode(w: [u64; TIMER_STATE_WORDS]) -> Self {
        let phase = match w[2] {
            0 => State::Normal,
            1 => State::FastSlowFast,
            _ => State::SlowFast,
        };
        FasorTimer { base: f64::from_bits(w[0]), dither: f64::from_bits(w[1]), phase }
    }
}

/// FASOR for one destination.
#[derive(Debug, Clone)]
pub struct Fasor {
    name: &'static str,
    p: FasorParams,
    variant: FasorVariant,
    est: Rfc6298,
    fastrto: f64,
    slowrto: f64,
    state: State,
    last_sample: Option<f64>,
    marking: MarkingState,
}

impl Fasor {
    /// A controller with no history.
    pub fn new(name: &'static str, p: FasorParams, variant: FasorVariant) -> Self {
        Fasor {
            name,
            fastrto: p.initial_rto,
            slowrto: p.initial_rto,
            marking: MarkingState::new(p.rtt_marking, p.option_number as u16),
            p,
            variant,
            est: Rfc6298::default(),
            state: State::Normal,
            last_sample: None,
        }
    }

    /// The state machine's state.
    pub fn state(&self) -> State {
        self.state
    }

    fn srtt(&self) -> f64 {
        self.est.srtt().unwrap_or(self.fastrto / 3.0)
    }

    fn dither(&self, rng: &mut dyn RngCore) -> f64 {
        let s = self.srtt();
        uniform(rng, s / 4.0, s)
    }

    fn update_fast(&mut self, r: f64) {
        let k = self.p.k;
        self.fastrto = match (self.est.srtt(), self.p.first_rttvar) {
            (None, FirstRttvar::Text) => {
                self.est.set(r, r / (2.0 * k));
                r + k * r / (2.0 * k)
            }
            (None, FirstRttvar::Pseudocode) => {
                self.est.set(r, r / 2.0);
                r + r / 2.0
            }
            _ => {
                self.est.update(r);
                self.est.rto(k, 0.0).unwrap_or(self.fastrto)
            }
        };
        self.fastrto = clamp_rto(self.fastrto, self.p.rto_max);
    }

    fn ambiguous(&mut self, rtt_from_original: f64) {
        self.slowrto = clamp_rto(self.p.slow_factor * rtt_from_original, self.p.rto_max);
        self.state = match self.state {
            State::Normal => State::FastSlowFast,
            _ => State::SlowFast,
        };
    }

    /// Element `j` of the exchange's fast series.
    fn fast(&self, ex: &FasorTimer, j: u32, rng: &mut dyn RngCore) -> f64 {
        let pow = libm::pow(2.0, j as f64);
        if self.p.dither_doubled && j > 0 && self.p.dither {
            ex.base * pow + self.dither(rng)
        } else {
            (ex.base + ex.dither) * pow
        }
    }

    /// The RTO for transmission `n` of `ex`.
    fn armed(&self, ex: &FasorTimer, n: u32, rng: &mut dyn RngCore) -> f64 {
        let slow = if self.p.dither_slow { self.slowrto + self.dither(rng) } else { self.slowrto };
        let rto = match (self.variant, ex.phase) {
            (_, State::Normal) => self.fast(ex, n, rng),
            (FasorVariant::Fasor, State::FastSlowFast) => match n {
                0 => self.fast(ex, 0, rng),
                1 => self.slowrto.max(2.0 * self.fastrto),
                _ => self.fast(ex, n - 1, rng),
            },
            (FasorVariant::Fasor, _) => match n {
                0 => slow,
                _ => self.fast(ex, n - 1, rng),
            },
            (FasorVariant::Slow, _) => slow * libm::pow(2.0, n as f64),
            (FasorVariant::FastSlow, _) => match n {
                0 => self.fast(ex, 0, rng),
                _ => slow * libm::pow(2.0, (n - 1) as f64),
            },
        };
        clamp_rto(rto, self.p.rto_max)
    }
}

impl Controller for Fasor {
    fn name(&self) -> &'static str {
        self.name
    }
    fn nstart(&self) -> usize {
        self.p.nstart as usize
    }
    fn start(&mut self, _now: Instant, start: Start, rng: &mut dyn RngCore) -> ExchangeTimer {
        let base = match self.last_sample {
            Some(s) if self.marking.active() && self.p.prev_sample_base => self.fastrto.max(s),
            _ => self.fastrto,
        };
        let state = FasorTimer { base, dither: if self.p.dither { self.dither(rng) } else { 0.0 }, phase: self.state };
        let rto = self.armed(&state, 0, rng);
        ExchangeTimer::from_secs(rto, start, self.marking.next()).with_state(state)
    }
    fn on_timeout(&mut self, _now: Instant, ex: &mut ExchangeTimer, rng: &mut dyn RngCore) -> Option<Duration> {
        if ex.retransmissions >= self.p.max_retransmit {
            return None;
        }
        let rto = self.armed(&ex.state(), ex.retransmissions + 1, rng);
        ex.retransmit_secs(rto);
        Some(ex.rto())
    }
    fn on_complete(&mut self, now: Instant, ex: &ExchangeTimer, done: &Completion<'_>) {
        self.marking.observe(ex, done);
        match done.sample(now) {
            Sample::Unambiguous { rtt, retransmitted } => {
                let rtt = rtt.as_secs_f64();
                self.update_fast(rtt);
                self.last_sample = Some(rtt);
                if retransmitted && self.p.matched == Matched::Ambiguous {
                    let first = done.sent.first().copied().unwrap_or(now);
                    self.ambiguous((now - first).as_secs_f64());
                } else {
                    self.state = State::Normal;
                }
            }
            Sample::Ambiguous { rtt, .. } => self.ambiguous(rtt.as_secs_f64()),
        }
    }
    fn reset(&mut self) {
        *self = Fasor::new(self.name, self.p.clone(), self.variant);
    }
    fn metrics(&self) -> Metrics {
        Metrics::secs(self.fastrto, self.est.srtt())
    }
    fn rto_bounds(&self) -> (Duration, Duration) {
        crate::controller::bounds(crate::controller::RTO_FLOOR, self.p.rto_max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::Echo;
    use crate::testutil::*;

    fn undithered(variant: FasorVariant, first: FirstRttvar) -> Fasor {
        let p = FasorParams { dither: false, max_retransmit: 20, first_rttvar: first, ..FasorParams::default() };
        Fasor::new("fasor", p, variant)
    }

    /// The RTOs of transmissions 0..n of a new exchange.
    fn series(c: &mut Fasor, n: usize) -> Vec<f64> {
        let mut r = rng(1);
        let mut ex = c.start(t(0.0), CON, &mut r);
        let mut v = vec![ex.armed];
        for _ in 1..n {
            v.push(c.on_timeout(t(0.0), &mut ex, &mut r).unwrap().as_secs_f64());
        }
        v
    }

    fn ack(c: &mut Fasor, sent: &[Instant], at: f64) {
        let mut r = rng(2);
        let mut ex = c.start(sent[0], CON, &mut r);
        ex.retransmissions = sent.len() as u32 - 1;
        c.on_complete(t(at), &ex, &done(sent));
    }

    #[test]
    fn first_timer_dither_range() {
        let mut c = Fasor::new("fasor", FasorParams::default(), FasorVariant::Fasor);
        let mut r = rng(3);
        for _ in 0..200 {
            let a = c.start(t(0.0), CON, &mut r).armed;
            // fastrto 2 + U[SRTT/4, SRTT] with SRTT = 2/3: [2.1667, 2.6667]
            assert!((2.0 + 2.0 / 12.0..=2.0 + 2.0 / 3.0).contains(&a), "{a}");
        }
    }

    #[test]
    fn rto_series_in_every_state() {
        let mut c = undithered(FasorVariant::Fasor, FirstRttvar::Text);
        assert_eq!(series(&mut c, 4), [2.0, 4.0, 8.0, 16.0]); // NORMAL before any sample
        ack(&mut c, &[t(0.0)], 1.0); // R = 1: fastrto = 1.5 R = 1.5
        assert_eq!(c.state(), State::Normal);
        assert_eq!(series(&mut c, 4), [1.5, 3.0, 6.0, 12.0]);
        ack(&mut c, &[t(0.0), t(1.5)], 4.0); // ambiguous 4 s: slowrto 6 → FAST_SLOW_FAST
        assert_eq!(c.state(), State::FastSlowFast);
        assert_eq!(series(&mut c, 5), [1.5, 6.0, 3.0, 6.0, 12.0]); // f, max(6, 2·1.5), 2f, 4f, 8f
        ack(&mut c, &[t(0.0), t(1.5)], 5.0); // ambiguous 5 s: slowrto 7.5 → SLOW_FAST
        assert_eq!(c.state(), State::SlowFast);
        assert_eq!(series(&mut c, 4), [7.5, 1.5, 3.0, 6.0]);
        ack(&mut c, &[t(0.0), t(1.5)], 2.0); // sticky: slowrto 3
        assert_eq!(c.state(), State::SlowFast);
        assert_eq!(series(&mut c, 2), [3.0, 1.5]);
        // unambiguous R = 1 again: RTTVAR = 0.75·(1/8) + 0.25·0 = 0.09375; fastrto = 1 + 4·0.09375
        ack(&mut c, &[t(0.0)], 1.0);
        assert_eq!(c.state(), State::Normal);
        assert_close(c.fastrto, 1.375);
        // FAST_SLOW_FAST with slowrto below 2·fastrto: n=1 is 2·fastrto
        ack(&mut c, &[t(0.0), t(1.0)], 1.0); // slowrto 1.5 < 2.75
        assert_eq!(series(&mut c, 3), [1.375, 2.75, 2.75]);
    }

    #[test]
    fn first_sample_variants() {
        // pseudocode: RTTVAR = R/2, K = 1 once: 1.5 R; then R = 1 again: RTTVAR 0.375 → 1 + 4·0.375
        let mut c = undithered(FasorVariant::Fasor, FirstRttvar::Pseudocode);
        ack(&mut c, &[t(0.0)], 1.0);
        assert_close(c.fastrto, 1.5);
        ack(&mut c, &[t(0.0)], 1.0);
        assert_close(c.fastrto, 2.5);
        // fasor_k4 (plain RFC 6298): 3 R, then 2.5
        let mut c = undithered(FasorVariant::Fasor, FirstRttvar::Rfc6298);
        ack(&mut c, &[t(0.0)], 1.0);
        assert_close(c.fastrto, 3.0);
        ack(&mut c, &[t(0.0)], 1.0);
        assert_close(c.fastrto, 2.5);
    }

    #[test]
    fn development_variants() {
        let mut c = undithered(FasorVariant::Slow, FirstRttvar::Text);
        ack(&mut c, &[t(0.0), t(2.0)], 4.0); // slowrto 6
        assert_eq!(series(&mut c, 4), [6.0, 12.0, 24.0, 48.0]);
        let mut c = undithered(FasorVariant::FastSlow, FirstRttvar::Text);
        ack(&mut c, &[t(0.0), t(2.0)], 4.0);
        assert_eq!(series(&mut c, 4), [2.0, 6.0, 12.0, 24.0]);
        assert_eq!(series(&mut c, 6)[5], 60.0); // 6·2^4 = 96 capped at 60
    }

    #[test]
    fn token_marking_gives_unambiguous_samples() {
        let p = FasorParams { dither: false, rtt_marking: MarkingKind::Token, ..FasorParams::default() };
        let mut c = Fasor::new("fasor_token", p, FasorVariant::Fasor);
        let mut r = rng(4);
        let mut ex = c.start(t(0.0), CON, &mut r);
        assert_eq!(ex.marking(), crate::Marking::Token);
        c.on_timeout(t(2.0), &mut ex, &mut r);
        // the response names transmission 1 (sent at 2.0), arriving at 2.8: sample 0.8
        c.on_complete(t(2.8), &ex, &Completion { sent: &[t(0.0), t(2.0)], echo: Echo::Number(1), piggybacked: true });
        assert_eq!(c.state(), State::Normal);
        assert_close(c.fastrto, 1.2);
        // the next fast series starts at max(fastrto 1.2, previous sample 0.8) = 1.2
        assert_close(c.start(t(3.0), CON, &mut r).armed, 1.2);
        // matched=ambiguous: same fastrto update, but the ambiguous transition
        let p = FasorParams {
            dither: false,
            rtt_marking: MarkingKind::Token,
            matched: Matched::Ambiguous,
            ..FasorParams::default()
        };
        let mut c = Fasor::new("fasor_token", p, FasorVariant::Fasor);
        let mut ex = c.start(t(0.0), CON, &mut r);
        c.on_timeout(t(2.0), &mut ex, &mut r);
        c.on_complete(t(2.8), &ex, &Completion { sent: &[t(0.0), t(2.0)], echo: Echo::Number(1), piggybacked: true });
        assert_close(c.fastrto, 1.2);
        assert_eq!(c.state(), State::FastSlowFast);
        assert_close(c.slowrto, 1.5 * 2.8);
    }
}
