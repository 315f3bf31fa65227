//! DefaultCoAP's parameters (RFC 7252 §4.8) and the knobs of the variants that carry an RTO from
//! one exchange to the next (Full Backoff, GST), with the initial RTO draw they share. One file
//! below both [`super::default_coap`] (the controller) and [`super::full_backoff`] (the carry
//! rules), which each read them.

use crate::params::{check, choice, params};
use crate::rng::uniform;
use rand_core::RngCore;

/// Erbium's clock tick on the Z1 and Sky (CLOCK_SECOND 128), s: the unit of a wrapped GST RTO
/// when no `timer_tick` is set.
pub(crate) const ERBIUM_TICK: f64 = 1.0 / 128.0;

choice! {
    /// Where FB2's halving gives way to a fresh draw.
    pub enum Fb2Floor { InitialMax = "initial_max", AckTimeout = "ack_timeout" }
}

choice! {
    /// What restarts GST's count of exchanges completed without retransmission.
    pub enum GstReset { Retransmission = "retransmission", Never = "never" }
}

choice! {
    /// GST's divisor 2^count: exact, or as a 64-bit unsigned integer on the MSP430.
    pub enum GstDivisor { Exact = "exact", U64 = "u64" }
}

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
        /// Whether `rto_max` caps a backed-off timer; false: nothing does, as in Erbium (Contiki 3.x `er-coap-transactions.c` doubles the timer's `interval` with no bound), so a timer Full Backoff or GST carries grows with every exchange that fails (Cooja running the NITK author's code arms timers up to 590 s).
        rto_capped: bool = true,
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

/// The cap on a timer when `rto_capped` is false, s: none a run can reach (31.7 years; Erbium's
/// 32-bit clock on the Z1 would wrap after 2^32 ticks of 1/128 s, 388 days, not modelled), finite
/// so that every timer stays a [`crate::time::Duration`].
const NO_CAP_S: f64 = 1e9;

impl DefaultParams {
    /// The cap on a backed-off timer, s: `rto_max`, or none (`rto_capped` false).
    pub(crate) fn cap(&self) -> f64 {
        if self.rto_capped {
            self.rto_max
        } else {
            NO_CAP_S
        }
    }
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
    pub(crate) fn draw_offset(&self, rng: &mut dyn RngCore) -> f64 {
        if self.timer_tick > 0.0 {
            return self.draw_ticks(rng) as f64 * self.timer_tick;
        }
        uniform(rng, 0.0, self.initial_max() - self.ack_timeout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
}
