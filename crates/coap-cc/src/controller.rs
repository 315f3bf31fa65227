//! The one interface every algorithm implements ([`Controller`]) and the values that cross it.
//!
//! A controller holds the congestion-control state for ONE destination (remote address + port);
//! the messaging layer keeps one per destination and builds it from a [`crate::CcConfig`].
//! The caller's loop, identical for every algorithm:
//!
//! 1. wait until [`Controller::earliest_start`] and until fewer than [`Controller::nstart`]
//!    exchanges are outstanding, then call [`Controller::start`]: it returns the exchange's
//!    [`ExchangeTimer`] with the RTO to arm for the first transmission, and how to number
//!    transmissions ([`Marking`]);
//! 2. each time the armed RTO expires call [`Controller::on_timeout`]: `Some(rto)` means
//!    retransmit and arm `rto`, `None` means give up (then [`Controller::on_failure`]);
//! 3. when the ACK (empty or piggybacked) or a response arrives call
//!    [`Controller::on_complete`] with a [`Completion`]: the send time of every transmission and
//!    the transmission number the response echoed, if any.

use crate::time::{Duration, Instant};
use rand_core::RngCore;

/// How the transmissions of an exchange carry their number, for accurate RTT samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marking {
    /// Not numbered.
    None,
    /// The first token byte is the transmission number (0 = original); servers echo tokens.
    Token,
    /// An option carries the transmission number (original: empty value; retransmissions 1, 2,
    /// …). With `probe`, the original carries 255 (read as 0) to learn whether the peer echoes.
    Option {
        /// The option number.
        number: u16,
        /// This is the first request to the peer: probe for support.
        probe: bool,
    },
}

/// What the caller tells [`Controller::start`] about a new exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Start {
    /// Exchanges to this destination already outstanding (CoCoA's ACT for its blind RTO).
    pub outstanding: usize,
    /// A Confirmable request (false: Non-confirmable).
    pub confirmable: bool,
}

/// Per-exchange timer state. The controller creates it in [`Controller::start`] and updates it
/// in [`Controller::on_timeout`]; the caller stores it with the exchange and passes it back.
///
/// Besides the armed RTO and the retransmission count, a timer carries up to
/// [`TIMER_STATE_WORDS`] words of the algorithm's own per-exchange state, typed by the algorithm
/// through [`TimerState`] (FASOR keeps its series base, its dither and the state it started in;
/// CoCoA its backoff factor). The words are fixed in size so the messaging layer stores timers
/// inline, without allocating per exchange.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ExchangeTimer {
    /// The RTO armed now, seconds (kept as the algorithms compute it; [`ExchangeTimer::rto`]
    /// rounds it to nanoseconds).
    pub(crate) armed: f64,
    /// The RTO of the first transmission, seconds.
    pub(crate) initial: f64,
    pub(crate) retransmissions: u32,
    pub(crate) confirmable: bool,
    pub(crate) marking: Marking,
    state: [u64; TIMER_STATE_WORDS],
}

/// How many 64-bit words of algorithm state an [`ExchangeTimer`] holds.
pub const TIMER_STATE_WORDS: usize = 3;

/// An algorithm's typed per-exchange state, stored in an [`ExchangeTimer`] as
/// [`TIMER_STATE_WORDS`] 64-bit words. Implement it for a small `Copy` struct; read it back with
/// [`ExchangeTimer::state`]. `()` is the state of algorithms that keep none.
pub trait TimerState: Copy {
    /// The state as words (`f64::to_bits` for numbers).
    fn encode(self) -> [u64; TIMER_STATE_WORDS];
    /// The state back from the words [`TimerState::encode`] wrote (a new timer holds zeros).
    fn decode(words: [u64; TIMER_STATE_WORDS]) -> Self;
}

impl TimerState for () {
    fn encode(self) -> [u64; TIMER_STATE_WORDS] {
        [0; TIMER_STATE_WORDS]
    }
    fn decode(_: [u64; TIMER_STATE_WORDS]) -> Self {}
}

impl ExchangeTimer {
    /// A timer armed with `rto` for the first transmission of an exchange started with `start`,
    /// its transmissions numbered as `marking` says; no algorithm state yet (zeros).
    pub fn new(rto: Duration, start: Start, marking: Marking) -> Self {
        ExchangeTimer::from_secs(rto.as_secs_f64(), start, marking)
    }
    /// As [`ExchangeTimer::new`], from seconds. The built-in algorithms compute in seconds and
    /// the timer keeps the value as given (it is rounded to nanoseconds only where it is armed):
    /// an algorithm that computes in seconds too, as one written in Python does, reproduces
    /// theirs to the bit.
    pub fn from_secs(initial: f64, start: Start, marking: Marking) -> Self {
        ExchangeTimer {
            armed: initial,
            initial,
            retransmissions: 0,
            confirmable: start.confirmable,
            marking,
            state: [0; TIMER_STATE_WORDS],
        }
    }
    /// The same timer carrying `state`.
    pub fn with_state<S: TimerState>(mut self, state: S) -> Self {
        self.state = state.encode();
        self
    }
    /// The algorithm's per-exchange state.
    pub fn state<S: TimerState>(&self) -> S {
        S::decode(self.state)
    }
    /// Replaces the algorithm's per-exchange state.
    pub fn set_state<S: TimerState>(&mut self, state: S) {
        self.state = state.encode();
    }
    /// Counts a retransmission and arms `rto` for it: what [`Controller::on_timeout`] does
    /// before it returns `Some(rto)`.
    pub fn retransmit(&mut self, rto: Duration) {
        self.retransmit_secs(rto.as_secs_f64());
    }
    /// [`ExchangeTimer::retransmit`] with the RTO in seconds, kept as given.
    pub fn retransmit_secs(&mut self, rto: f64) {
        self.retransmissions += 1;
        self.armed = rto;
    }
    /// The RTO armed now, seconds, as the algorithm gave it.
    pub fn rto_secs(&self) -> f64 {
        self.armed
    }
    /// The RTO armed for the first transmission, seconds, as the algorithm gave it.
    pub fn initial_rto_secs(&self) -> f64 {
        self.initial
    }
    /// The RTO to arm now.
    pub fn rto(&self) -> Duration {
        Duration::from_secs_f64(self.armed)
    }
    /// The RTO armed for the first transmission.
    pub fn initial_rto(&self) -> Duration {
        Duration::from_secs_f64(self.initial)
    }
    /// Retransmissions so far.
    pub fn retransmissions(&self) -> u32 {
        self.retransmissions
    }
    /// Send the request as CON (a controller may turn a NON into a CON, CoCoA's 2-of-16 rule).
    pub fn confirmable(&self) -> bool {
        self.confirmable
    }
    /// How to number this exchange's transmissions.
    pub fn marking(&self) -> Marking {
        self.marking
    }
}

/// The transmission number the response echoed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Echo {
    /// No number came back (not marked, an empty ACK, or a peer that does not echo).
    None,
    /// The echoed number; 255 (the probe) reads as 0.
    Number(u8),
}

impl Echo {
    /// The transmission the echo names (0 the original; the probe's 255 reads as 0), if any.
    pub fn transmission(self) -> Option<u8> {
        match self {
            Echo::Number(255) => Some(0),
            Echo::Number(n) => Some(n),
            Echo::None => None,
        }
    }
}

/// What the caller knows when an exchange completes (its ACK or response arrived).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Completion<'a> {
    /// Send time of every transmission, in order (at least the original).
    pub sent: &'a [Instant],
    /// The echoed transmission number.
    pub echo: Echo,
    /// The response was piggybacked on the ACK.
    pub piggybacked: bool,
}

/// An RTT sample, classified (the "common vocabulary" of the specification).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Sample {
    /// The RTT of a known transmission: the only one, or the one the response echoed.
    Unambiguous {
        /// The round-trip time.
        rtt: Duration,
        /// The exchange had retransmissions (the echo resolved the ambiguity).
        retransmitted: bool,
    },
    /// Time from the ORIGINAL transmission to the response, after retransmissions.
    Ambiguous {
        /// From the original transmission to the response.
        rtt: Duration,
        /// How many retransmissions the exchange had.
        retransmissions: u32,
    },
}

impl Completion<'_> {
    /// Classifies the sample this completion gives at `now`.
    pub fn sample(&self, now: Instant) -> Sample {
        let first = self.sent.first().copied().unwrap_or(now);
        let retransmissions = self.sent.len().saturating_sub(1) as u32;
        match self.echo.transmission().and_then(|n| self.sent.get(n as usize)) {
            Some(&t) => Sample::Unambiguous { rtt: now - t, retransmitted: retransmissions > 0 },
            None if retransmissions == 0 => Sample::Unambiguous { rtt: now - first, retransmitted: false },
            None => Sample::Ambiguous { rtt: now - first, retransmissions },
        }
    }
}

/// A snapshot for metrics and logs.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[non_exhaustive]
pub struct Metrics {
    /// The RTO the next exchange starts from (before any dither).
    pub rto: Duration,
    /// Smoothed RTT, if the algorithm keeps one.
    pub srtt: Option<Duration>,
    /// Pacing rate in messages per second, for rate-based algorithms.
    pub rate: Option<f64>,
}

impl Metrics {
    /// Metrics with an RTO and a smoothed RTT given in seconds (the built-ins compute in seconds).
    pub(crate) fn secs(rto: f64, srtt: Option<f64>) -> Self {
        Metrics { rto: Duration::from_secs_f64(rto), srtt: srtt.map(Duration::from_secs_f64), rate: None }
    }
}

/// Bounds given in seconds, as [`Controller::rto_bounds`] returns them.
pub(crate) fn bounds(lo: f64, hi: f64) -> (Duration, Duration) {
    (Duration::from_secs_f64(lo), Duration::from_secs_f64(hi))
}

/// Retransmission-timeout / congestion control for one destination. Sans-IO: time and
/// randomness are passed in; no method blocks, allocates or reads a clock.
pub trait Controller: core::fmt::Debug + Send {
    /// The registered name of the algorithm.
    fn name(&self) -> &'static str;

    /// How many exchanges may be outstanding to the destination at once (NSTART).
    fn nstart(&self) -> usize {
        1
    }

    /// Earliest time a new exchange may start (rate-based algorithms and NON pacing).
    /// Call before [`Controller::start`]; the default allows `now`.
    fn earliest_start(&self, now: Instant, _confirmable: bool) -> Instant {
        now
    }

    /// A new exchange starts now: returns its timer, whose [`ExchangeTimer::rto`] is armed for
    /// the first transmission.
    fn start(&mut self, now: Instant, start: Start, rng: &mut dyn RngCore) -> ExchangeTimer;

    /// The armed RTO of `ex` expired. `Some(rto)`: retransmit now and arm `rto`
    /// (`ex.retransmissions()` has been incremented). `None`: MAX_RETRANSMIT was reached; the
    /// exchange fails (call [`Controller::on_failure`]).
    fn on_timeout(&mut self, now: Instant, ex: &mut ExchangeTimer, rng: &mut dyn RngCore) -> Option<Duration>;

    /// The exchange was acknowledged (piggybacked or empty ACK) or answered.
    fn on_complete(&mut self, now: Instant, ex: &ExchangeTimer, done: &Completion<'_>);

    /// The exchange failed (its last RTO expired, or the peer answered with RST).
    fn on_failure(&mut self, _now: Instant, _ex: &ExchangeTimer) {}

    /// Forgets everything learnt about the destination, as a new device would start.
    fn reset(&mut self);

    /// The algorithm's state for metrics.
    fn metrics(&self) -> Metrics;

    /// The documented bounds of every RTO [`Controller::start`] and [`Controller::on_timeout`]
    /// return: (lowest, highest).
    fn rto_bounds(&self) -> (Duration, Duration);
}

/// No RTO is ever shorter than this (1 ms). Several sources set no floor at all; an RTO of
/// microseconds would fire on scheduling noise alone. No reference scenario comes near it.
pub const RTO_FLOOR: f64 = 0.001;

/// Binary exponential backoff, the timeout rule of DefaultCoAP and of every algorithm that
/// "doubles as usual": give up once `max_retransmit` retransmissions went out, else double the
/// armed timer (capped at `cap`) and count the retransmission.
pub(crate) fn double(ex: &mut ExchangeTimer, max_retransmit: u32, cap: f64) -> Option<Duration> {
    if ex.retransmissions >= max_retransmit {
        return None;
    }
    ex.retransmit_secs(clamp_rto(ex.armed * 2.0, cap));
    Some(ex.rto())
}

/// The RTO a new exchange starts with under an estimator holding `rto` (None before its first
/// sample): that estimate, or `initial_rto` × U[1, `ack_random_factor`] (RFC 7252 §4.2) before
/// one; within the floor and `cap`.
pub(crate) fn estimate_or_initial(
    rto: Option<f64>,
    initial_rto: f64,
    ack_random_factor: f64,
    cap: f64,
    rng: &mut dyn RngCore,
) -> f64 {
    let rto = rto.unwrap_or_else(|| crate::rng::uniform(rng, initial_rto, initial_rto * ack_random_factor));
    clamp_rto(rto, cap)
}

/// Applies the crate-wide floor and an algorithm's cap (NaN becomes the cap): how every built-in
/// bounds its timers.
pub fn clamp_rto(rto: f64, cap: f64) -> f64 {
    if rto.is_nan() {
        return cap;
    }
    rto.clamp(RTO_FLOOR, cap.max(RTO_FLOOR))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: f64) -> Instant {
        Instant::from_nanos((s * 1e9) as u64)
    }

    #[test]
    fn samples_are_classified() {
        let sent = [at(0.0), at(2.0), at(6.0)];
        let c = Completion { sent: &sent[..1], echo: Echo::None, piggybacked: true };
        let s = |secs: f64| Duration::from_secs_f64(secs);
        assert_eq!(c.sample(at(0.5)), Sample::Unambiguous { rtt: s(0.5), retransmitted: false });
        let c = Completion { sent: &sent, echo: Echo::None, piggybacked: true };
        assert_eq!(c.sample(at(7.0)), Sample::Ambiguous { rtt: s(7.0), retransmissions: 2 });
        let c = Completion { sent: &sent, echo: Echo::Number(1), piggybacked: true };
        assert_eq!(c.sample(at(7.0)), Sample::Unambiguous { rtt: s(5.0), retransmitted: true });
        // the probe value 255 names the original
        let c = Completion { sent: &sent[..1], echo: Echo::Number(255), piggybacked: true };
        assert_eq!(c.sample(at(1.0)), Sample::Unambiguous { rtt: s(1.0), retransmitted: false });
        // an echo naming a transmission that never happened is ignored
        let c = Completion { sent: &sent, echo: Echo::Number(9), piggybacked: true };
        assert!(matches!(c.sample(at(7.0)), Sample::Ambiguous { .. }));
    }
}
