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
//!   scenarios set 20. `rto_capped = false` lifts the cap, as Erbium has none (the NITK presets).
//! * `default_b` is Betzler's "CoAP_B": ACK_TIMEOUT = 1 s.
//!
//! The Full Backoff variants (`default_fb1`, `default_fb2`) and GST (`gst`) change only what is
//! carried from one exchange to the next: see [`super::full_backoff`] and [`super::gst`].

pub use super::default_params::DefaultParams;
use super::full_backoff::{Carry, Kept};
use crate::controller::{Completion, Controller, ExchangeTimer, Marking, Metrics, Start};
use crate::time::{Duration, Instant};
use rand_core::RngCore;

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
        ExchangeTimer::from_secs(super::full_backoff::initial(&self.params, self.kept, rng), start, Marking::None)
    }
    fn on_timeout(&mut self, _now: Instant, ex: &mut ExchangeTimer, _rng: &mut dyn RngCore) -> Option<Duration> {
        crate::controller::double(ex, self.params.max_retransmit, self.params.cap())
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
        crate::controller::bounds(self.params.ack_timeout.min(self.params.cap()), self.params.cap())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::*;

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
