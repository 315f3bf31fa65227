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

use crate::controller::ExchangeTimer;

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

impl Carry {
    /// The RTO to keep after `ex` ended, given the one kept before. `clean` counts exchanges in a
    /// row without retransmission (GST).
    pub(crate) fn next_kept(
        self,
        kept: Option<f64>,
        ex: &ExchangeTimer,
        clean: &mut u32,
        initial_min: f64,
        initial_max: f64,
    ) -> Option<f64> {
        let retransmitted = ex.retransmissions > 0;
        if retransmitted {
            *clean = 0;
        } else {
            *clean = clean.saturating_add(1);
        }
        match self {
            Carry::None => None,
            _ if retransmitted => Some(ex.armed),
            Carry::Fb1 => None,
            Carry::Fb2 => kept.map(|k| k / 2.0).filter(|&h| h > initial_max),
            Carry::Gst => kept.map(|k| super::gst::halve(k, *clean)).filter(|&h| h >= initial_min),
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
}
