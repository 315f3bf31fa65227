//! `cocoa`, `cocoa4`, `cocoa_fb1`, `cocoa_fb2` — CoAP Simple Congestion Control/Advanced
//! (draft-ietf-core-cocoa-03; Betzler et al., "CoCoA+", 2015/2016), and the base of `gsrtc`
//! ([`super::gsrtc`]) and `cocoa_pp` ([`super::cocoa_pp`]).
//!
//! Every member of the family is one [`Cocoa`] controller composed of three parts ([`Family`]):
//! what carries into the next exchange ([`Carry`]: nothing, FB1, FB2), how a strong estimate
//! weighs in the overall RTO ([`StrongWeight`]: fixed, or GSRTC's geometric series) and how each
//! backoff step is sized ([`BackoffFactor`]: the VBF, or CoCoA++'s probabilistic factor).
//! `gsrtc` = FB2 (with the weak update) + the geometric series; `cocoa_pp` = the probabilistic
//! factor. Other compositions build too (a [`CocoaConfig`] of your own); none is registered.
//!
//! * Two RFC 6298 estimators per destination: strong (samples of exchanges without
//!   retransmission, K = 4) and weak (ambiguous samples of exchanges with 1 or 2
//!   retransmissions, K = 1; none after 3 or more). Each starts like RFC 6298 on its first sample.
//! * Overall RTO, 2 s before any sample. After a strong update RTO = 0.5·E_strong + 0.5·RTO;
//!   after a weak one RTO = 0.25·E_weak + 0.75·RTO; capped at `rto_max` = 60 s.
//! * A new exchange starts with the overall RTO dithered to [RTO, 1.5·RTO].
//! * Variable backoff factor chosen ONCE per exchange from its initial (dithered) RTO, as the
//!   CoCoA paper's VBF(RTO_init) and Californium do: ×3 below 1 s, ×2 from 1 to 3 s inclusive,
//!   ×`vbf_high` (1.5; the 2014 paper used 1.3) above 3 s. `vbf=per_step` re-evaluates it from
//!   the current timer at every step, as the draft's pseudocode does. A backoff step never
//!   raises the timer above `backoff_limit` = 32 s; a timer already above it stays.
//! * Aging (`aging`, on by default as in the draft; off in the reference testbed): checked when
//!   an exchange starts; if RTO < 1 and not updated for 16·RTO: RTO ×= 2; if RTO > 3 and not
//!   updated for 4·RTO: RTO = 1 + RTO/2; each aging step counts as an update, so a long idle
//!   period ages repeatedly.
//! * `aging_estimators` (off by default; CLOUD, Betzler et al.'s CoCoA for cloud services, in
//!   Californium): with aging, also each estimator left 60 s without a sample while its RTO
//!   (SRTT + K·RTTVAR) exceeds 2 s moves halfway to 2 s: SRTT = (2 + SRTT)/2, RTTVAR = RTTVAR/2,
//!   checked when an exchange starts, one step per 60 s idle. CLOUD's other readings are
//!   `weak_max_retransmissions=1` (weak samples only after exactly one retransmission),
//!   `vbf_high=1.3` and `blind=exp`.
//! * NSTART > 1 (`cocoa4`: NSTART = 4): while no RTT sample exists, an exchange started while
//!   ACT others are outstanding uses the blind RTO 2·2^ACT (`blind=exp`, the 2014 paper, default
//!   of `cocoa4`) or 2·(ACT+1) (`blind=linear`, draft-03, default of `cocoa`), dithered as usual.
//! * NON traffic: at most one NON per RTO to a destination ([`Controller::earliest_start`]);
//!   every `non_con_interval`-th NON (8: 2 of 16) is sent as CON to keep the estimator fed.
//!
//! Compared with Californium's CoCoA (the implementation by CoCoA's author): same VBF thresholds
//! (exactly 1 s and 3 s take ×2), same first-sample and weighting rules; but Californium's
//! estimators use α = 0.25 and β = 0.125, swapped relative to RFC 6298's α = 1/8, β = 1/4, which
//! the specification prescribes and this module follows; and Californium's aging restarts its
//! clock at "now" after aging (leftover idle time is dropped) and compares strictly, where this
//! module carries the leftover over and compares with ≥.
//!
//! Betzler's Contiki CoCoA (`er-coap-transactions` with `COCOA` defined; the code behind the NITK
//! thesis's CoCoA variants, run in Cooja) differs from the draft in ways that change results; each
//! difference is a parameter whose default is the draft, and the NITK mesh presets set all but the
//! last: VBF ×2.5 below 1 s (`vbf_low`), chosen from the undithered overall RTO the exchange
//! started from (`vbf_from=overall`); the overall update written (1 − w)·E + w·RTO, the draft's
//! weights inverted (`weights=inverted`: a weak estimate then weighs 0.75; the strong 0.5 is
//! unchanged); every retransmitted exchange feeds the weak estimator (`weak_max_retransmissions`);
//! after more than 3 retransmissions accumulated over completed exchanges since the last strong
//! sample, the strong estimator starts over (`strong_reset_after=3`); the blind RTO is capped at 32
//! s (`blind_max`); a transaction freed as it gives up feeds its RTT too, the time from its first
//! send (`coap_clear_transaction` stores an RTT for every CON it frees, `retrans_counter <=
//! COAP_MAX_RETRANSMIT` always holding), a weak sample with its retransmissions
//! (`weak_sample_on_failure`; what setting it in the presets would change is measured in
//! docs/mesh.md). [choice] `weights=inverted` inverts the fixed weights only: GSRTC's
//! geometric-series weight keeps its paper's W·E + (1 − W)·RTO. Left out: that code dithers the
//! blind RTO twice before the first sample and ages the overall RTO to exactly 1 s (not ×2).
//!
//! Full Backoff (ANRW 2018): `cocoa_fb1`: after an exchange that needed retransmissions the
//! next exchange uses exactly the backed-off RTO in use when the response arrived (it also
//! becomes the overall RTO, replacing the weighted update). `cocoa_fb2`: after retransmissions
//! take max(overall RTO, the freshly updated weak estimate if there was one), back it off as the
//! exchange's retransmissions did (its VBF, same truncation) and use that exactly for the next
//! exchange (and as the overall RTO). A failed exchange is treated as one with retransmissions
//! and no sample (the sources are silent).

use super::cocoa_pp::{Gradients, PpParams};
use super::gsrtc::{GsrtcParams, GsrtcWeight};
use crate::controller::{
    clamp_rto, Completion, Controller, ExchangeTimer, Metrics, Sample, Start, TimerState, TIMER_STATE_WORDS,
};
use crate::estimator::Rfc6298;
use crate::marking::{MarkingKind, MarkingState, TRANSMISSION_NUMBER_OPTION};
use crate::params::{check, choice, params, ParamInfo, Params, SetError};
use crate::rng::uniform;
use crate::time::{Duration, Instant};
use rand_core::RngCore;

choice! {
    /// When the variable backoff factor is chosen.
    pub enum VbfMode { Once = "once", PerStep = "per_step" }
}
choice! {
    /// The blind RTO while no sample exists and others are outstanding.
    pub enum Blind { Exp = "exp", Linear = "linear" }
}
choice! {
    /// Which RTO the once-per-exchange VBF is chosen from.
    pub enum VbfFrom { Initial = "initial", Overall = "overall" }
}
choice! {
    /// How the fixed weights enter the overall RTO: the draft's w·E + (1 − w)·RTO, or
    /// (1 − w)·E + w·RTO as Betzler's Contiki code writes it.
    pub enum Weights { Draft = "draft", Inverted = "inverted" }
}

params! {
    /// CoCoA's parameters (draft-ietf-core-cocoa-03).
    pub struct CocoaParams {
        /// Overall RTO before any RTT sample, s (draft §4.2).
        initial_rto: f64 = 2.0,
        /// The initial RTO of an exchange is dithered to [RTO, RTO·this].
        ack_random_factor: f64 = 1.5,
        /// MAX_RETRANSMIT (RFC 7252 §4.8; the reference testbed uses 20).
        max_retransmit: u32 = 4,
        /// NSTART (RFC 7252 §4.7).
        nstart: u32 = 1,
        /// Cap on the overall RTO, s.
        rto_max: f64 = 60.0,
        /// A backoff step never raises the timer above this, s (draft: 32; the NITK trees' published Z1 binaries: none).
        backoff_limit: f64 = 32.0,
        /// VBF chosen once per exchange from its initial RTO (paper, Californium) or per step (draft pseudocode).
        vbf: VbfMode = VbfMode::Once,
        /// With vbf=once: from the exchange's dithered first timer (initial) or the undithered RTO it started from (overall, Betzler's Contiki code).
        vbf_from: VbfFrom = VbfFrom::Initial,
        /// VBF for an RTO below 1 s (draft: 3; Betzler's Contiki code: 2.5).
        vbf_low: f64 = 3.0,
        /// VBF for an RTO above 3 s (draft: 1.5; the 2014 paper: 1.3).
        vbf_high: f64 = 1.5,
        /// K of the strong estimator.
        strong_k: f64 = 4.0,
        /// K of the weak estimator.
        weak_k: f64 = 1.0,
        /// Weight of a strong estimate in the overall RTO.
        strong_weight: f64 = 0.5,
        /// Weight of a weak estimate in the overall RTO.
        weak_weight: f64 = 0.25,
        /// draft: RTO = w·E + (1 − w)·RTO; inverted: (1 − w)·E + w·RTO (Betzler's Contiki code).
        weights: Weights = Weights::Draft,
        /// Most retransmissions an exchange may have had for its sample to feed the weak estimator (draft: 2; Betzler's Contiki code: every).
        weak_max_retransmissions: u32 = 2,
        /// Reset the strong estimator once more than this many retransmissions accumulated since its last sample; 0 never (Betzler's Contiki code: 3).
        strong_reset_after: u32 = 0,
        /// A failed exchange feeds the weak estimator the time from its first send to its giving up, as one with its retransmissions (Betzler's Contiki code: true; the draft: no sample).
        weak_sample_on_failure: bool = false,
        /// Clock granularity G of RFC 6298, s.
        clock_granularity: f64 = 0.0,
        /// RTO aging (draft §4.2.2; off in the reference testbed).
        aging: bool = true,
        /// With aging, also CLOUD's rule: an estimator idle 60 s with SRTT + K·RTTVAR > 2 s gets SRTT = (2 + SRTT)/2, RTTVAR/2.
        aging_estimators: bool = false,
        /// Blind RTO with NSTART > 1 before any sample: exp = 2·2^ACT (2014 paper), linear = 2·(ACT+1) (draft-03).
        blind: Blind = Blind::Linear,
        /// Cap on the blind RTO, s (below rto_max it binds; Betzler's Contiki code: 32).
        blind_max: f64 = 60.0,
        /// Every N-th NON is sent as CON (draft: 2 of 16); 0 never.
        non_con_interval: u32 = 8,
        /// Accurate RTT samples: none, token or option.
        rtt_marking: MarkingKind = MarkingKind::None,
    }
}

impl CocoaParams {
    /// Checks the values; on failure, the offending key and the rule it breaks.
    pub fn validate(&self) -> Result<(), (&'static str, &'static str)> {
        check(self.initial_rto > 0.0, "initial_rto", "must be > 0")?;
        check(self.ack_random_factor >= 1.0, "ack_random_factor", "must be >= 1")?;
        crate::params::check_common(self.max_retransmit, self.nstart)?;
        check(self.rto_max >= self.initial_rto, "rto_max", "must be >= initial_rto")?;
        check(self.backoff_limit > 0.0, "backoff_limit", "must be > 0")?;
        check(self.vbf_high >= 1.0, "vbf_high", "must be >= 1")?;
        check(self.vbf_low >= 1.0, "vbf_low", "must be >= 1")?;
        check(self.blind_max > 0.0, "blind_max", "must be > 0")?;
        check(self.strong_k >= 0.0 && self.weak_k >= 0.0, "strong_k", "K must be >= 0")?;
        check((0.0..=1.0).contains(&self.strong_weight), "strong_weight", "must be in [0, 1]")?;
        check((0.0..=1.0).contains(&self.weak_weight), "weak_weight", "must be in [0, 1]")?;
        check(self.clock_granularity >= 0.0, "clock_granularity", "must be >= 0")
    }
}

/// What a CoCoA-family member carries into the next exchange after one that needed
/// retransmissions (Full Backoff, ANRW 2018).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Carry {
    /// Nothing: the next exchange starts from the overall RTO (CoCoA).
    None,
    /// FB1: the backed-off RTO in use when the response arrived.
    Fb1,
    /// FB2: max(overall RTO, the fresh weak estimate) backed off as the exchange's
    /// retransmissions were. `weak_update`: the weak estimate also updates the overall RTO first
    /// (GSRTC); without it the carry replaces that update (ANRW's FB2).
    Fb2 {
        /// Update the overall RTO with the weak estimate before carrying.
        weak_update: bool,
    },
}

impl Carry {
    /// ANRW's FB2: the carry takes the place of the weak estimate's update of the overall RTO.
    fn replaces_weak_update(self) -> bool {
        self == Carry::Fb2 { weak_update: false }
    }
}

/// How a strong estimate weighs in the overall RTO.
#[derive(Debug, Clone, PartialEq)]
pub enum StrongWeight {
    /// The fixed `strong_weight` (CoCoA).
    Fixed,
    /// GSRTC's geometric series ([`super::gsrtc`]).
    GeometricSeries(GsrtcParams),
}

/// The factor of each backoff step.
#[derive(Debug, Clone, PartialEq)]
pub enum BackoffFactor {
    /// CoCoA's variable backoff factor (`vbf`, `vbf_from`, `vbf_low`, `vbf_high`).
    Variable,
    /// CoCoA++'s probabilistic backoff factor from delay gradients ([`super::cocoa_pp`]).
    Probabilistic(PpParams),
}

/// A member of the CoCoA family, composed of the three parts its variants change.
#[derive(Debug, Clone, PartialEq)]
pub struct Family {
    /// What carries into the next exchange.
    pub carry: Carry,
    /// How strong estimates weigh.
    pub weight: StrongWeight,
    /// How each backoff step is sized.
    pub backoff: BackoffFactor,
}

impl Family {
    /// CoCoA as drafted.
    pub const COCOA: Family =
        Family { carry: Carry::None, weight: StrongWeight::Fixed, backoff: BackoffFactor::Variable };
    /// `cocoa_fb1`.
    pub const FB1: Family = Family { carry: Carry::Fb1, ..Family::COCOA };
    /// `cocoa_fb2`.
    pub const FB2: Family = Family { carry: Carry::Fb2 { weak_update: false }, ..Family::COCOA };
    /// `gsrtc`: FB2's carry built from the weakly updated RTO, and the geometric-series weight.
    pub fn gsrtc(g: GsrtcParams) -> Family {
        Family { carry: Carry::Fb2 { weak_update: true }, weight: StrongWeight::GeometricSeries(g), ..Family::COCOA }
    }
    /// `cocoa_pp`: CoCoA with the probabilistic backoff factor.
    pub fn pp(pp: PpParams) -> Family {
        Family { backoff: BackoffFactor::Probabilistic(pp), ..Family::COCOA }
    }
}

/// A CoCoA-family configuration: CoCoA's parameters and the member's composition. Its
/// parameters are CoCoA's, then those of the geometric-series weight or of the probabilistic
/// backoff when the member has one.
#[derive(Debug, Clone, PartialEq)]
pub struct CocoaConfig {
    /// CoCoA's parameters.
    pub params: CocoaParams,
    /// The member.
    pub family: Family,
}

impl CocoaConfig {
    /// Checks CoCoA's parameters, then the extensions'.
    pub fn validate(&self) -> Result<(), (&'static str, &'static str)> {
        self.params.validate()?;
        if let StrongWeight::GeometricSeries(g) = &self.family.weight {
            g.validate()?;
        }
        if let BackoffFactor::Probabilistic(pp) = &self.family.backoff {
            pp.validate()?;
        }
        Ok(())
    }
}

impl Params for CocoaConfig {
    fn set(&mut self, key: &str, value: &str) -> Result<(), SetError> {
        let mut r = self.params.set(key, value);
        if let (Err(SetError::Unknown), StrongWeight::GeometricSeries(g)) = (&r, &mut self.family.weight) {
            r = g.set(key, value);
        }
        if let (Err(SetError::Unknown), BackoffFactor::Probabilistic(pp)) = (&r, &mut self.family.backoff) {
            r = pp.set(key, value);
        }
        r
    }
    fn describe(&self, f: &mut dyn FnMut(ParamInfo<'_>)) {
        self.params.describe(f);
        if let StrongWeight::GeometricSeries(g) = &self.family.weight {
            g.describe(f);
        }
        if let BackoffFactor::Probabilistic(pp) = &self.family.backoff {
            pp.describe(f);
        }
    }
}

/// CoCoA's per-exchange state, kept in the exchange's timer: its variable backoff factor and
/// when it was first sent (for `weak_sample_on_failure`).
#[derive(Debug, Clone, Copy, PartialEq)]
struct CocoaTimer {
    vbf: f64,
    started: Instant,
}

impl TimerState for CocoaTimer {
    fn encode(self) -> [u64; TIMER_STATE_WORDS] {
        [self.vbf.to_bits(), self.started.as_nanos(), 0]
    }
    fn decode(w: [u64; TIMER_STATE_WORDS]) -> Self {
        CocoaTimer { vbf: f64::from_bits(w[0]), started: Instant::from_nanos(w[1]) }
    }
}

/// VBF of an RTO (draft-ietf-core-cocoa-03 §4.2.1: `low` 3, `high` 1.5).
pub(crate) fn vbf(rto: f64, low: f64, high: f64) -> f64 {
    if rto < 1.0 {
        low
    } else if rto <= 3.0 {
        2.0
    } else {
        high
    }
}

/// One backoff step: ×`factor`, never raising the timer above `limit` (a larger timer stays).
pub(crate) fn step(timer: f64, factor: f64, limit: f64) -> f64 {
    let next = timer * factor;
    if next > limit {
        timer.max(limit)
    } else {
        next
    }
}

/// A CoCoA-family controller for one destination.
#[derive(Debug, Clone)]
pub struct Cocoa {
    name: &'static str,
    p: CocoaParams,
    family: Family,
    strong: Rfc6298,
    weak: Rfc6298,
    rto: f64,
    last_update: Option<Instant>,
    /// When each estimator last took a sample (or was aged), for `aging_estimators`.
    strong_at: Option<Instant>,
    weak_at: Option<Instant>,
    /// Full Backoff: the exact initial RTO of the next exchange.
    next_exact: Option<f64>,
    marking: MarkingState,
    /// Retransmissions accumulated since the strong estimator's last sample (`strong_reset_after`).
    missed: u32,
    non_sent: u32,
    last_non: Option<Instant>,
    weight: GsrtcWeight,
    gradients: Gradients,
}

/// CLOUD's estimator aging: every 60 s an estimator goes without a sample while its RTO
/// (SRTT + `k`·RTTVAR) exceeds 2 s, SRTT moves halfway to 2 s and RTTVAR halves (each step counts
/// as an update; 64 steps bound the loop whatever the idle time).
fn age_estimator(est: &mut Rfc6298, at: &mut Option<Instant>, k: f64, g: f64, now: Instant) {
    let Some(mut last) = *at else { return };
    for _ in 0..64 {
        let (Some(srtt), Some(rttvar), Some(rto)) = (est.srtt(), est.rttvar(), est.rto(k, g)) else { break };
        if rto <= 2.0 || now - last < Duration::from_secs(60) {
            break;
        }
        est.set((2.0 + srtt) / 2.0, rttvar / 2.0);
        last += Duration::from_secs(60);
    }
    *at = Some(last);
}

impl Cocoa {
    /// A controller with no history.
    pub fn new(name: &'static str, p: CocoaParams, family: Family) -> Self {
        let weight = match &family.weight {
            StrongWeight::GeometricSeries(g) => GsrtcWeight::new(g),
            StrongWeight::Fixed => GsrtcWeight::default(),
        };
        Cocoa {
            name,
            rto: p.initial_rto,
            marking: MarkingState::new(p.rtt_marking, TRANSMISSION_NUMBER_OPTION),
            p,
            family,
            strong: Rfc6298::default(),
            weak: Rfc6298::default(),
            last_update: None,
            strong_at: None,
            weak_at: None,
            next_exact: None,
            missed: 0,
            non_sent: 0,
            last_non: None,
            weight,
            gradients: Gradients::default(),
        }
    }

    fn has_sample(&self) -> bool {
        self.strong.srtt().is_some() || self.weak.srtt().is_some()
    }

    fn age(&mut self, now: Instant) {
        let Some(mut last) = self.last_update else { return };
        // each step moves RTO towards [1, 3]; 64 steps bound the loop whatever the idle time
        for _ in 0..64 {
            let idle = (now - last).as_secs_f64();
            if self.rto < 1.0 && idle >= 16.0 * self.rto {
                last += Duration::from_secs_f64(16.0 * self.rto);
                self.rto *= 2.0;
            } else if self.rto > 3.0 && idle >= 4.0 * self.rto {
                last += Duration::from_secs_f64(4.0 * self.rto);
                self.rto = 1.0 + self.rto / 2.0;
            } else {
                break;
            }
        }
        self.last_update = Some(last);
    }

    fn blind(&self, act: usize) -> f64 {
        let act = act.min(30) as f64;
        let b = match self.p.blind {
            Blind::Exp => self.p.initial_rto * libm::pow(2.0, act),
            Blind::Linear => self.p.initial_rto * (act + 1.0),
        };
        b.min(self.p.rto_max).min(self.p.blind_max)
    }

    /// An RTT sample of an exchange that was retransmitted: the weak estimator's if it had at
    /// most `weak_max_retransmissions`; the weak estimate it gave, if any.
    fn weak_sample(&mut self, now: Instant, rtt: Duration, retransmissions: u32) -> Option<f64> {
        self.count_missed(retransmissions);
        if retransmissions > self.p.weak_max_retransmissions {
            return None;
        }
        self.weak.update(rtt.as_secs_f64());
        self.weak_at = Some(now);
        let e = self.weak.rto(self.p.weak_k, self.p.clock_granularity).unwrap_or(self.rto);
        if let StrongWeight::GeometricSeries(gp) = &self.family.weight {
            self.weight.on_weak(gp);
        }
        if !self.family.carry.replaces_weak_update() {
            let w = self.estimate_weight(self.p.weak_weight);
            self.rto = w * e + (1.0 - w) * self.rto;
        }
        self.last_update = Some(now);
        Some(e)
    }

    /// Counts an exchange's retransmissions towards `strong_reset_after`; past it, the strong
    /// estimator starts over (its next sample initialises it like a first one).
    fn count_missed(&mut self, retransmissions: u32) {
        if self.p.strong_reset_after == 0 {
            return;
        }
        self.missed = self.missed.saturating_add(retransmissions);
        if self.missed > self.p.strong_reset_after {
            self.strong = Rfc6298::default();
            self.missed = 0;
        }
    }

    /// The weight of a fresh estimate in the overall RTO, from a fixed weight parameter.
    fn estimate_weight(&self, w: f64) -> f64 {
        match self.p.weights {
            Weights::Draft => w,
            Weights::Inverted => 1.0 - w,
        }
    }

    fn factor(&mut self, timer: f64, ex: &ExchangeTimer, rng: &mut dyn RngCore) -> f64 {
        match &self.family.backoff {
            BackoffFactor::Probabilistic(pp) => self.gradients.backoff_factor(pp, rng),
            BackoffFactor::Variable if self.p.vbf == VbfMode::PerStep => vbf(timer, self.p.vbf_low, self.p.vbf_high),
            BackoffFactor::Variable => ex.state::<CocoaTimer>().vbf,
        }
    }

    /// The highest timer a backoff step may arm.
    fn timer_cap(&self) -> f64 {
        let ceiling = match &self.family.backoff {
            BackoffFactor::Probabilistic(pp) => pp.timer_ceiling,
            BackoffFactor::Variable => 0.0,
        };
        (self.p.rto_max * self.p.ack_random_factor).max(self.p.backoff_limit).max(ceiling)
    }

    /// Full Backoff after an exchange with retransmissions.
    fn full_backoff(&mut self, ex: &ExchangeTimer, weak_estimate: Option<f64>) {
        let carried = match self.family.carry {
            Carry::Fb1 => ex.armed,
            Carry::Fb2 { .. } => {
                let mut r = self.rto.max(weak_estimate.unwrap_or(0.0));
                for _ in 0..ex.retransmissions {
                    let f = if self.p.vbf == VbfMode::PerStep {
                        vbf(r, self.p.vbf_low, self.p.vbf_high)
                    } else {
                        ex.state::<CocoaTimer>().vbf
                    };
                    r = step(r, f, self.p.backoff_limit);
                }
                r
            }
            Carry::None => return,
        };
        self.rto = clamp_rto(carried, self.p.rto_max);
        self.next_exact = Some(self.rto);
    }
}

impl Controller for Cocoa {
    fn name(&self) -> &'static str {
        self.name
    }
    fn nstart(&self) -> usize {
        self.p.nstart as usize
    }
    fn earliest_start(&self, now: Instant, confirmable: bool) -> Instant {
        match (confirmable, self.last_non) {
            (false, Some(last)) => now.max(last + Duration::from_secs_f64(self.rto)),
            _ => now,
        }
    }
    fn start(&mut self, now: Instant, mut start: Start, rng: &mut dyn RngCore) -> ExchangeTimer {
        if self.p.aging {
            self.age(now);
            if self.p.aging_estimators {
                let g = self.p.clock_granularity;
                age_estimator(&mut self.strong, &mut self.strong_at, self.p.strong_k, g, now);
                age_estimator(&mut self.weak, &mut self.weak_at, self.p.weak_k, g, now);
            }
        }
        if !start.confirmable {
            self.non_sent = self.non_sent.wrapping_add(1);
            self.last_non = Some(now);
            if self.p.non_con_interval > 0 && self.non_sent % self.p.non_con_interval == 0 {
                start.confirmable = true;
            }
        }
        let (base, initial) = match self.next_exact.take() {
            Some(exact) => (exact, exact),
            None => {
                let base =
                    if !self.has_sample() && start.outstanding > 0 { self.blind(start.outstanding) } else { self.rto };
                (base, uniform(rng, base, base * self.p.ack_random_factor))
            }
        };
        let initial = clamp_rto(initial, self.p.rto_max * self.p.ack_random_factor);
        let chosen_from = match self.p.vbf_from {
            VbfFrom::Initial => initial,
            VbfFrom::Overall => base,
        };
        let state = CocoaTimer { vbf: vbf(chosen_from, self.p.vbf_low, self.p.vbf_high), started: now };
        ExchangeTimer::from_secs(initial, start, self.marking.next()).with_state(state)
    }
    fn on_timeout(&mut self, _now: Instant, ex: &mut ExchangeTimer, rng: &mut dyn RngCore) -> Option<Duration> {
        if ex.retransmissions >= self.p.max_retransmit {
            return None;
        }
        let f = self.factor(ex.armed, ex, rng);
        let mut next = step(ex.armed, f, self.p.backoff_limit);
        if let BackoffFactor::Probabilistic(pp) = &self.family.backoff {
            next = next.clamp(pp.timer_floor, pp.timer_ceiling);
        }
        ex.retransmit_secs(clamp_rto(next, self.timer_cap()));
        Some(ex.rto())
    }
    fn on_complete(&mut self, now: Instant, ex: &ExchangeTimer, done: &Completion<'_>) {
        self.marking.observe(ex, done);
        let g = self.p.clock_granularity;
        let mut weak_estimate = None;
        match done.sample(now) {
            Sample::Unambiguous { rtt, .. } => {
                let rtt = rtt.as_secs_f64();
                self.missed = 0;
                self.strong.update(rtt);
                self.strong_at = Some(now);
                let e = self.strong.rto(self.p.strong_k, g).unwrap_or(self.rto);
                let w = match &self.family.weight {
                    StrongWeight::GeometricSeries(gp) => self.weight.on_strong(gp),
                    StrongWeight::Fixed => self.estimate_weight(self.p.strong_weight),
                };
                self.rto = w * e + (1.0 - w) * self.rto;
                if let BackoffFactor::Probabilistic(pp) = &self.family.backoff {
                    self.gradients.add(rtt, pp);
                }
                self.last_update = Some(now);
            }
            Sample::Ambiguous { rtt, retransmissions } => weak_estimate = self.weak_sample(now, rtt, retransmissions),
        }
        self.rto = clamp_rto(self.rto, self.p.rto_max);
        if ex.retransmissions > 0 {
            self.full_backoff(ex, weak_estimate);
        }
    }
    fn on_failure(&mut self, now: Instant, ex: &ExchangeTimer) {
        let mut weak_estimate = None;
        if self.p.weak_sample_on_failure {
            let started = ex.state::<CocoaTimer>().started;
            weak_estimate = self.weak_sample(now, now.saturating_since(started), ex.retransmissions);
            self.rto = clamp_rto(self.rto, self.p.rto_max);
        }
        self.full_backoff(ex, weak_estimate);
    }
    fn reset(&mut self) {
        *self = Cocoa::new(self.name, self.p.clone(), self.family.clone());
    }
    fn metrics(&self) -> Metrics {
        Metrics::secs(self.rto, self.strong.srtt())
    }
    fn rto_bounds(&self) -> (Duration, Duration) {
        crate::controller::bounds(crate::controller::RTO_FLOOR, self.timer_cap())
    }
}

#[cfg(test)]
mod tests;
