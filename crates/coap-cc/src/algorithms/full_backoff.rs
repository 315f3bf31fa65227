//! `default_fb1`, `default_fb2` — Full Backoff for DefaultCoAP (Järvinen, Raitahila, Cao, Kojo:
//! "Is CoAP Congestion Safe?", ANRW 2018, "Full Backoff").
//!
//! What is carried from one exchange into the next:
//! * FB1 (Karn-like): after an exchange that needed retransmissions, the next exchange starts
//!   with the backed-off RTO in use when the response arrived; a timeout doubles it as usual.
//!   After an exchange without retransmission the next draws again from [2, 3].
//! * FB2: as FB1, but each exchange completed without retransmission HALVES the kept RTO,
//!   until it falls to the initial range, where a fresh [2, 3] draw takes over. Reading chosen:
//!   "falls to the initial range" = the halved value is at most ACK_TIMEOUT·ACK_RANDOM_FACTOR.
//! * A failed exchange (its last timer expired) counts as one that needed retransmissions: its
//!   last timer is kept (the source is silent on failures).
//!
//! GST's geometric halving is the fourth carry rule, documented in [`super::gst`].
//!
//! The NITK author's Erbium code (Contiki 3.1, `apps/er-coap/er-coap-transactions.c` of
//! vishal623/CoAP-Fullbackoff-Variants, read line by line) differs in five places, each a
//! parameter of [`DefaultParams`] that the NITK presets set to the author's behaviour:
//! * every exchange arms `fullbackoffvariantN + random_rand() % MASK`: the carried RTO gets the
//!   initial draw's random part added (`carry_dither`);
//! * FB2 stops halving below ACK_TIMEOUT, not at the initial range's top (`fb2_floor`);
//! * GST's count of clean exchanges is never restarted in the published file (`gst_count_reset`);
//! * GST's divisor 2^count is an `unsigned long long`: 0 from count 64 on, and the MSP430
//!   divides by 0 to all ones (`gst_divisor`);
//! * no cap on a backed-off timer (`interval <<= 1`), so a carried timer grows with every failed
//!   exchange (`rto_capped`; in Cooja the author's code armed timers up to 590 s).
//!
//! Besides, the carried RTO is the timer in use when the exchange ended: after a failure under
//! Erbium (it gives up as it sends the last retransmission) the last timer that expired, not a
//! doubled one it never armed (the endpoint reports the failure with that timer).

use super::default_params::{DefaultParams, ERBIUM_TICK};
pub use super::default_params::{Fb2Floor, GstDivisor, GstReset};
use crate::controller::ExchangeTimer;
use rand_core::RngCore;

/// What DefaultCoAP carries into the next exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Carry {
    /// Plain DefaultCoAP: nothing.
    None,
    /// Full Backoff 1.
    Fb1,
    /// Full Backoff 2.
    Fb2,
    /// GST-CoAP.
    Gst,
}

/// A carried RTO.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kept {
    /// This RTO, s.
    Rto(f64),
    /// GST's kept RTO after a division by zero: all ones ([`GstDivisor::U64`]).
    Wrapped,
}

impl Carry {
    /// The RTO to keep after `ex` ended, given the one kept before. `clean` counts exchanges
    /// without retransmission since the count last restarted (GST).
    pub(crate) fn next_kept(
        self,
        kept: Option<Kept>,
        ex: &ExchangeTimer,
        clean: &mut u32,
        p: &DefaultParams,
    ) -> Option<Kept> {
        let retransmitted = ex.retransmissions > 0;
        if retransmitted {
            if p.gst_count_reset == GstReset::Retransmission {
                *clean = 0;
            }
        } else {
            *clean = clean.saturating_add(1);
        }
        let rto = |k: Option<Kept>| match k {
            Some(Kept::Rto(r)) => Some(r),
            _ => None,
        };
        match self {
            Carry::None => None,
            _ if retransmitted => Some(Kept::Rto(ex.armed)),
            Carry::Fb1 => None,
            Carry::Fb2 => {
                let halved = rto(kept).map(|k| k / 2.0);
                match p.fb2_floor {
                    Fb2Floor::InitialMax => halved.filter(|&h| h > p.initial_max()),
                    Fb2Floor::AckTimeout => halved.filter(|&h| h >= p.ack_timeout),
                }
                .map(Kept::Rto)
            }
            Carry::Gst if p.gst_divisor == GstDivisor::U64 && *clean >= 64 => Some(Kept::Wrapped),
            Carry::Gst => {
                rto(kept).map(|k| super::gst::halve(k, *clean)).filter(|&h| h >= p.ack_timeout).map(Kept::Rto)
            }
        }
    }
}

/// The RTO an exchange of `p` starts with when `kept` is carried.
pub(crate) fn initial(p: &DefaultParams, kept: Option<Kept>, rng: &mut dyn RngCore) -> f64 {
    match kept {
        None => p.draw(rng),
        Some(Kept::Rto(k)) if !p.carry_dither => k,
        Some(Kept::Rto(k)) => k + p.draw_offset(rng),
        Some(Kept::Wrapped) => {
            // all ones plus the random part, modulo the clock's width: the random part less
            // one tick; a random part of 0 leaves all ones (2^32 − 1 ticks: never)
            let r = p.draw_offset(rng);
            let tick = if p.timer_tick > 0.0 { p.timer_tick } else { ERBIUM_TICK };
            if r > 0.0 {
                r - tick
            } else {
                u32::MAX as f64 * tick
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::default_coap::{DefaultCoap, DefaultParams};
    use super::*;
    use crate::controller::Controller;
    use crate::testutil::*;

    /// Runs an exchange with `timeouts` expiries, completing at t.
    fn exchange(c: &mut DefaultCoap, timeouts: u32) -> (f64, f64) {
        let mut rng = rng(7);
        let mut ex = c.start(t(0.0), CON, &mut rng);
        let initial = ex.armed;
        for _ in 0..timeouts {
            c.on_timeout(t(0.0), &mut ex, &mut rng).unwrap();
        }
        let last = ex.armed;
        c.on_complete(t(1.0), &ex, &done(&[t(0.0)]));
        (initial, last)
    }

    fn ctl(carry: Carry) -> DefaultCoap {
        DefaultCoap::new("x", DefaultParams { max_retransmit: 20, ..DefaultParams::default() }, carry)
    }

    #[test]
    fn fb1_keeps_backed_off_rto_once() {
        let mut c = ctl(Carry::Fb1);
        let (r0, last) = exchange(&mut c, 3); // r0·8
        assert_close(last, r0 * 8.0);
        let (next, after) = exchange(&mut c, 1); // starts with r0·8, doubles to r0·16
        assert_close(next, r0 * 8.0);
        assert_close(after, r0 * 16.0);
        let (next, _) = exchange(&mut c, 0); // carried r0·16, completes cleanly
        assert_close(next, r0 * 16.0);
        let (next, _) = exchange(&mut c, 0); // back to a fresh draw
        assert!((2.0..3.0).contains(&next));
    }

    #[test]
    fn fb2_halves_to_the_initial_range() {
        let mut c = ctl(Carry::Fb2);
        let (r0, _) = exchange(&mut c, 4); // kept = 16·r0 ∈ [32, 48)
        let k = 16.0 * r0;
        for expected in [k, k / 2.0, k / 4.0, k / 8.0] {
            // k/8 ∈ [4, 6) > 3 is still kept; k/16 ∈ [2, 3) falls to the initial range
            let (next, _) = exchange(&mut c, 0);
            assert_close(next, expected);
        }
        let (next, _) = exchange(&mut c, 0);
        assert!((2.0..3.0).contains(&next));
    }

    /// The NITK author's Erbium timing: ACK_TIMEOUT 3 s, the random part U{0..192} ticks of 1/128 s.
    fn nitk(carry: Carry, f: impl FnOnce(&mut DefaultParams)) -> DefaultCoap {
        let mut p =
            DefaultParams { ack_timeout: 3.0, timer_tick: 1.0 / 128.0, max_retransmit: 4, ..DefaultParams::default() };
        p.carry_dither = true;
        f(&mut p);
        DefaultCoap::new("x", p, carry)
    }

    /// The random part of an Erbium RTO, in ticks, if `rto` - `base` is one (0..=192 whole ticks).
    fn ticks_over(rto: f64, base: f64) -> u32 {
        let ticks = (rto - base) * 128.0;
        assert!((ticks - ticks.round()).abs() < 1e-6 && (0.0..=192.0).contains(&ticks.round()), "{rto} over {base}");
        ticks.round() as u32
    }

    #[test]
    fn the_author_s_carried_rto_gets_a_fresh_random_part() {
        // fullbackoffvariant1 = the timer in use (3 + r ticks, doubled twice); the next exchange
        // arms fullbackoffvariant1 + random_rand() % 193
        let mut c = nitk(Carry::Fb1, |_| ());
        let (_, last) = exchange(&mut c, 2);
        let (next, _) = exchange(&mut c, 0);
        ticks_over(next, last);
        // a clean exchange sets fullbackoffvariant1 back to 3 s: a fresh draw
        let (next, _) = exchange(&mut c, 0);
        ticks_over(next, 3.0);
    }

    #[test]
    fn the_author_s_fb2_halves_until_below_ack_timeout() {
        let mut c = nitk(Carry::Fb2, |p| p.fb2_floor = Fb2Floor::AckTimeout);
        let (_, last) = exchange(&mut c, 1); // kept: 2·(3 + r) ∈ [6, 9]
                                             // clean exchanges arm kept + U{0..192} ticks and halve kept: [6, 9] → [3, 4.5] is kept
                                             // (not below 3 s), then [1.5, 2.25] falls below 3 s: 3 s, a fresh draw
        let (next, _) = exchange(&mut c, 0);
        ticks_over(next, last);
        let (next, _) = exchange(&mut c, 0);
        ticks_over(next, last / 2.0);
        let (next, _) = exchange(&mut c, 0);
        ticks_over(next, 3.0);
    }

    #[test]
    fn erbium_s_timer_has_no_cap_so_a_carried_timer_grows_with_each_failure() {
        // two failed exchanges in a row (4 timeouts each): the first arms r0 = 3 + r ticks and
        // backs off to 16·r0 ∈ [48, 72]; the second starts from that + r' and backs off to 16
        // times it, ≥ 16·48 = 768 s. Capped at 60 s (rto_max), every backoff stops at 60.
        let mut c = nitk(Carry::Fb1, |p| p.rto_capped = false);
        let (r0, last) = exchange(&mut c, 4);
        assert_close(last, 16.0 * r0);
        let (next, last) = exchange(&mut c, 4);
        assert_close(last, 16.0 * next);
        assert!(last >= 768.0, "{last}");
        let mut c = nitk(Carry::Fb1, |_| ());
        exchange(&mut c, 4);
        let (next, last) = exchange(&mut c, 4);
        assert!(next >= 48.0, "{next}");
        assert_close(last, 60.0);
    }

    #[test]
    fn gst_s_count_restarts_or_not() {
        // after a retransmitted exchange, Algorithm 1 divides the kept RTO by 2, 4, … again; the
        // published file's count goes on from where it was
        for (reset, divisors) in [(GstReset::Retransmission, [2.0, 4.0]), (GstReset::Never, [16.0, 32.0])] {
            let mut c = nitk(Carry::Gst, |p| {
                p.carry_dither = false;
                p.gst_count_reset = reset;
            });
            for _ in 0..3 {
                exchange(&mut c, 0); // count 1, 2, 3 (the kept RTO stays the fresh draw)
            }
            let (_, last) = exchange(&mut c, 4); // kept: 16·(3 + r) ∈ [48, 72]
            let (next, _) = exchange(&mut c, 0);
            assert_close(next, last);
            let (next, _) = exchange(&mut c, 0);
            assert_close(next, last / divisors[0]);
            let (next, _) = exchange(&mut c, 0);
            let expected = last / divisors[0] / divisors[1];
            if expected >= 3.0 {
                assert_close(next, expected);
            } else {
                ticks_over(next, 3.0);
            }
        }
    }

    #[test]
    fn gst_s_64_bit_divisor_wraps_the_kept_rto_round() {
        // count 64: decrease_factor = 2^64 = 0 in 64 bits; the MSP430 divides by 0 to all ones,
        // so fullbackoffvariant3 = 0xFFFFFFFF and the next exchange arms 0xFFFFFFFF + r ticks:
        // r − 1 ticks, or all ones (never) for r = 0
        let mut c = nitk(Carry::Gst, |p| p.gst_divisor = GstDivisor::U64);
        for _ in 0..63 {
            let (next, _) = exchange(&mut c, 0);
            ticks_over(next, 3.0); // count 1 … 63: 3 s / 2^count < 3 s, a fresh draw each time
        }
        exchange(&mut c, 0); // count 64
        let mut seen_short = false;
        let mut rng = rng(11);
        for _ in 0..400 {
            let ex = c.start(t(0.0), CON, &mut rng);
            let ticks = ex.armed * 128.0;
            if ex.armed < 1.5 {
                assert!((ticks - ticks.round()).abs() < 1e-6 && ticks.round() <= 191.0, "{}", ex.armed);
                seen_short = true;
            } else {
                assert_close(ex.armed, u32::MAX as f64 / 128.0);
            }
            c.on_complete(t(1.0), &ex, &done(&[t(0.0)])); // count 65, 66, …: still all ones
        }
        assert!(seen_short);
        // a retransmission keeps the timer in use and restarts the count (Algorithm 1)
        let (_, last) = exchange(&mut c, 1);
        let (next, _) = exchange(&mut c, 0);
        ticks_over(next, last);
    }
}
