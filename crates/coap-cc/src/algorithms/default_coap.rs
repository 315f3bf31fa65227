//! `default`, `default_b` — DefaultCoAP: the retransmission timer of RFC 7252 §4.2 with the
//! transmission parameters of §4.8.
//!
//! * Each new exchange draws its initial RTO uniformly from
//!   [ACK_TIMEOUT, ACK_TIMEOUT·ACK_RANDOM_FACTOR] = [2, 3] s.
//! * Each timeout doubles the timer (binary exponential backoff) and retransmits, until
//!   MAX_RETRANSMIT retransmissions have been sent; the next expiry fails the exchange.
//! * No RTT estimation and, in plain DefaultCoAP, no state between exchanges. NSTART = 1.
//! * `rto_max` caps a backed-off timer. RFC 7252 has no cap (with MAX_RETRANSMIT = 4 the largest
//!   timer is 48 s anyway); the reference testbed uses MAX_RETRANSMIT = 20 with a 60 s cap, which
//!   is this parameter's default. MAX_RETRANSMIT keeps the RFC default, 4; the testbed's
//!   scenarios set 20.
//! * `default_b` is Betzler's "CoAP_B": ACK_TIMEOUT = 1 s.
//!
//! The Full Backoff variants (`default_fb1`, `default_fb2`) and GST (`gst`) change only what is
//! carried from one exchange to the next: see [`super::full_backoff`] and [`super::gst`].

use super::full_backoff::{Carry, Fb2Floor, GstDivisor, GstReset, Kept};
use crate::controller::{Completion, Controller, ExchangeTimer, Marking, Metrics, Start};
use crate::params::{check, params};
use crate::rng::uniform;
use crate::time::{Duration, Instant};
use rand_core::RngCore;

params! {
    /// DefaultCoAP's parameters (RFC 7252 §4.8).
    pub struct DefaultParams {
        /// ACK_TIMEOUT: lower end of the initial RTO, s (RFC 7252 §4.8).
        ack_timeout: f64 = 2.0,
        /// ACK_RANDOM_FACTOR: the initial RTO is at most ACK_TIMEOUT times this (RFC 7252 §4.8).
        ack_random_factor: f64 = 1.5,
        /// MAX_RETRANSMIT (RFC 7252 §4.8; the reference testbed uses 20).
        max_retransmit: u32 = 4,
        /// NSTART: exchanges outstanding at once per destination (RFC 7252 §4.7).
        nstart: u32 = 1,
        /// Cap on a backed-off RTO, s (reference testbed: 60).
        rto_max: f64 = 60.0,
        /// Clock tick of the initial RTO draw, s: 0 draws from the continuous range; Erbium (Contiki 3.0) draws ACK_TIMEOUT + U{0..n} ticks of 1/128 s (0.0078125).
        timer_tick: f64 = 0.0,
        /// Full Backoff / GST: a carried RTO gets the initial draw's random part added (the NITK author's Erbium code arms `fullbackoffvariantN + random_rand() % COAP_RESPONSE_TIMEOUT_BACKOFF_MASK`); false: the carried RTO as it is (Järvinen et al.).
        carry_dither: bool = false,
        /// FB2: where halving the carried RTO stops: `initial_max` (a halved RTO of at most ACK_TIMEOUT·ACK_RANDOM_FACTOR gives way to a fresh draw; our reading of Järvinen et al.) or `ack_timeout` (only one below ACK_TIMEOUT does: the NITK author's code).
        fb2_floor: Fb2Floor = Fb2Floor::InitialMax,
        /// GST: what restarts the count of exchanges completed without retransmission: `retransmission` (the thesis's Algorithm 1) or `never` (the NITK author's published er-coap-transactions.c, whose `count = 1` is commented out).
        gst_count_reset: GstReset = GstReset::Retransmission,
        /// GST: the divisor 2^count as computed: `exact`, or `u64` as the NITK author's C does (`unsigned long long`: from count 64 on it is 0; the MSP430's libgcc divides by 0 to all ones, measured in MSPSim on the author's Z1 binary, so the carried RTO wraps round and the next exchange starts from its random part less one tick).
        gst_divisor: GstDivisor = GstDivisor::Exact,
    }
}

impl DefaultParams {
    /// Checks the values; on failure, the offending key and the rule it breaks.
    pub fn validate(&self) -> Result<(), (&'static str, &'static str)> {
        check(self.ack_timeout > 0.0, "ack_timeout", "must be > 0")?;
        check(self.ack_random_factor >= 1.0, "ack_random_factor", "must be >= 1")?;
        crate::params::check_common(self.max_retransmit, self.nstart)?;
        check(self.timer_tick >= 0.0 && self.timer_tick.is_finite(), "timer_tick", "must be >= 0")?;
        check(
            self.rto_max >= self.ack_timeout * self.ack_random_factor,
            "rto_max",
            "must be >= ack_timeout * ack_random_factor",
        )
    }
    /// Upper end of the initial range.
    pub(crate) fn initial_max(&self) -> f64 {
        self.ack_timeout * self.ack_random_factor
    }
    /// A fresh initial RTO in [ACK_TIMEOUT, ACK_TIMEOUT·ACK_RANDOM_FACTOR]; with a timer tick,
    /// ACK_TIMEOUT plus a whole number of ticks, each of the n + 1 equally likely, n = the
    /// range's width in ticks rounded (Erbium: 3 s + random_rand() % 193 ticks of 1/128 s).
    pub(crate) fn draw(&self, rng: &mut dyn RngCore) -> f64 {
        if self.timer_tick > 0.0 {
            return self.ack_timeout + self.draw_ticks(rng) as f64 * self.timer_tick;
        }
        uniform(rng, self.ack_timeout, self.initial_max())
    }
    /// Erbium's random part in ticks: U{0..n}, n = the range's width in ticks rounded.
    fn draw_ticks(&self, rng: &mut dyn RngCore) -> u64 {
        let n = ((self.initial_max() - self.ack_timeout) / self.timer_tick + 0.5) as u64; // rounded (no_std)
        rng.next_u64() % (n + 1)
    }
    /// The random part of a fresh initial RTO (what [`DefaultParams::draw`] adds to ACK_TIMEOUT).
    fn draw_offset(&self, rng: &mut dyn RngCore) -> f64 {
        if self.timer_tick > 0.0 {
            return self.draw_ticks(rng) as f64 * self.timer_tick;
        }
        uniform(rng, 0.0, self.initial_max() - self.ack_timeout)
    }
    /// The RTO an exchange starts with when `kept` is carried.
    fn initial(&self, kept: Option<Kept>, rng: &mut dyn RngCore) -> f64 {
        match kept {
            None => self.draw(rng),
            Some(Kept::Rto(k)) if !self.carry_dither => k,
            Some(Kept::Rto(k)) => k + self.draw_offset(rng),
            Some(Kept::Wrapped) => {
                // all ones plus the random part, modulo the clock's width: the random part less
                // one tick; a random part of 0 leaves all ones (2^32 − 1 ticks: never)
                let r = self.draw_offset(rng);
                let tick = if self.timer_tick > 0.0 { self.timer_tick } else { super::full_backoff::ERBIUM_TICK };
                if r > 0.0 {
                    r - tick
                } else {
                    u32::MAX as f64 * tick
                }
            }
        }
    }
}

/// A DefaultCoAP-family configuration: the parameters and what carries between exchanges.
#[derive(Debug, Clone, PartialEq)]
pub struct DefaultConfig {
    /// RFC 7252's transmission parameters.
    pub params: DefaultParams,
    /// What carries into the next exchange (`default`: nothing).
    pub carry: Carry,
}

crate::params::delegate_params!(DefaultConfig, params);

impl DefaultConfig {
    /// Checks the parameters; on failure, the offending key and the rule it breaks.
    pub fn validate(&self) -> Result<(), (&'static str, &'static str)> {
        self.params.validate()
    }
}

/// DefaultCoAP and its carry-over variants (Full Backoff, GST).
#[derive(Debug, Clone)]
pub struct DefaultCoap {
    name: &'static str,
    params: DefaultParams,
    carry: Carry,
    /// The RTO carried into the next exchange (Full Backoff / GST).
    kept: Option<Kept>,
    /// GST: exchanges completed without retransmission in a row.
    clean: u32,
}

impl DefaultCoap {
    /// A controller with no history.
    pub fn new(name: &'static str, params: DefaultParams, carry: Carry) -> Self {
        DefaultCoap { name, params, carry, kept: None, clean: 0 }
    }

    fn after_exchange(&mut self, ex: &ExchangeTimer) {
        self.kept = self.carry.next_kept(self.kept, ex, &mut self.clean, &self.params);
    }
}

impl Controller for DefaultCoap {
    fn name(&self) -> &'static str {
        self.name
    }
    fn nstart(&self) -> usize {
        self.params.nstart as usize
    }
    fn start(&mut self, _now: Instant, start: Start, rng: &mut dyn RngCore) -> ExchangeTimer {
        ExchangeTimer::from_secs(self.params.initial(self.kept, rng), start, Marking::None)
    }
    fn on_timeout(&mut self, _now: Instant, ex: &mut ExchangeTimer, _rng: &mut dyn RngCore) -> Option<Duration> {
        crate::controller::double(ex, self.params.max_retransmit, self.params.rto_max)
    }
    fn on_complete(&mut self, _now: Instant, ex: &ExchangeTimer, _done: &Completion<'_>) {
        self.after_exchange(ex);
    }
    fn on_failure(&mut self, _now: Instant, ex: &ExchangeTimer) {
        self.after_exchange(ex);
    }
    fn reset(&mut self) {
        *self = DefaultCoap::new(self.name, self.params.clone(), self.carry);
    }
    fn metrics(&self) -> Metrics {
        let kept = match self.kept {
            Some(Kept::Rto(k)) => k,
            Some(Kept::Wrapped) | None => self.params.ack_timeout,
        };
        Metrics::secs(kept, None)
    }
    fn rto_bounds(&self) -> (Duration, Duration) {
        crate::controller::bounds(self.params.ack_timeout.min(self.params.rto_max), self.params.rto_max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::*;
    use rand_chacha::rand_core::SeedableRng;

    #[test]
    fn erbium_ticks_draw_3_s_plus_0_to_192_ticks_of_1_128_s() {
        let p = DefaultParams { ack_timeout: 3.0, timer_tick: 1.0 / 128.0, ..DefaultParams::default() };
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..40_000 {
            let rto = p.draw(&mut rng);
            let ticks = (rto - 3.0) * 128.0;
            assert!(ticks.fract() == 0.0 && (0.0..=192.0).contains(&ticks), "{rto}");
            seen.insert(ticks as u32);
        }
        assert_eq!(seen.len(), 193, "every tick 0..=192 drawn, the ends included");
    }

    fn ctl(carry: Carry, max_retransmit: u32) -> DefaultCoap {
        DefaultCoap::new("default", DefaultParams { max_retransmit, ..DefaultParams::default() }, carry)
    }

    #[test]
    fn initial_in_range_doubling_and_cap() {
        let mut c = ctl(Carry::None, 20);
        let mut rng = rng(1);
        let mut ex = c.start(t(0.0), CON, &mut rng);
        let r0 = ex.armed;
        assert!((2.0..3.0).contains(&r0), "{r0}");
        // doubling: r0·2, r0·4, r0·8, r0·16 (32..48), then r0·32 ≥ 64 is capped at 60 and stays
        let mut expect = vec![2.0 * r0, 4.0 * r0, 8.0 * r0, 16.0 * r0];
        expect.extend([60.0; 16]);
        for (i, e) in expect.iter().enumerate() {
            let rto = c.on_timeout(t(0.0), &mut ex, &mut rng).unwrap();
            assert_close(rto.as_secs_f64(), *e);
            assert_eq!(ex.retransmissions(), i as u32 + 1);
        }
        // after MAX_RETRANSMIT = 20 retransmissions the next expiry gives up
        assert_eq!(c.on_timeout(t(0.0), &mut ex, &mut rng), None);
    }

    #[test]
    fn rfc_default_gives_up_after_four() {
        let mut c = ctl(Carry::None, 4);
        let mut rng = rng(2);
        let mut ex = c.start(t(0.0), CON, &mut rng);
        for _ in 0..4 {
            assert!(c.on_timeout(t(0.0), &mut ex, &mut rng).is_some());
        }
        assert_eq!(c.on_timeout(t(0.0), &mut ex, &mut rng), None);
        // no state kept between exchanges: a fresh draw each time
        assert!((2.0..3.0).contains(&c.start(t(1.0), CON, &mut rng).armed));
    }

    #[test]
    fn default_b_range() {
        let p = DefaultParams { ack_timeout: 1.0, ..DefaultParams::default() };
        let mut c = DefaultCoap::new("default_b", p, Carry::None);
        let mut rng = rng(3);
        for _ in 0..100 {
            let r = c.start(t(0.0), CON, &mut rng).armed;
            assert!((1.0..1.5).contains(&r));
        }
    }
}
