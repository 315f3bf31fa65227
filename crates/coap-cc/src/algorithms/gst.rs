//! `gst` — Geometric Sequence Technique for CoAP (GST-CoAP; Rathod & Tahiliani, 2020).
//!
//! Builds on `default_fb2`. `count` = exchanges completed in a row without retransmission (reset
//! to 0 by any retransmission). After a retransmitted exchange the backed-off RTO is kept. After
//! each clean exchange: count += 1 and the kept RTO is multiplied by (1/2)^count, so successive
//! clean exchanges divide it by 2, 4, 8, …; when it falls BELOW the initial range (under
//! ACK_TIMEOUT) a fresh [2, 3] draw takes over. Timeouts double as in DefaultCoAP.
//! The controller is [`super::default_coap::DefaultCoap`] with [`super::full_backoff::Carry::Gst`].

/// The kept RTO after the `count`-th clean exchange in a row: `kept · (1/2)^count`.
pub(crate) fn halve(kept: f64, count: u32) -> f64 {
    kept * libm::pow(0.5, count as f64)
}

#[cfg(test)]
mod tests {
    use super::super::default_coap::{DefaultCoap, DefaultParams};
    use super::super::full_backoff::Carry;
    use crate::controller::Controller;
    use crate::testutil::*;

    #[test]
    fn geometric_halving() {
        let mut c =
            DefaultCoap::new("gst", DefaultParams { max_retransmit: 20, ..DefaultParams::default() }, Carry::Gst);
        let mut rng = rng(5);
        let mut ex = c.start(t(0.0), CON, &mut rng);
        let r0 = ex.armed;
        for _ in 0..5 {
            c.on_timeout(t(0.0), &mut ex, &mut rng);
        }
        c.on_complete(t(1.0), &ex, &done(&[t(0.0)]));
        let k = (r0 * 32.0).min(60.0); // 64..96 capped: kept 60
        assert_close(k, 60.0);
        // clean #1: 60/2 = 30; clean #2: 30/4 = 7.5; clean #3: 7.5/8 = 0.9375 < 2 → fresh draw
        let mut starts = vec![];
        for _ in 0..4 {
            let ex = c.start(t(2.0), CON, &mut rng);
            starts.push(ex.armed);
            c.on_complete(t(3.0), &ex, &done(&[t(2.0)]));
        }
        assert_close(starts[0], 60.0);
        assert_close(starts[1], 30.0);
        assert_close(starts[2], 7.5);
        assert!((2.0..3.0).contains(&starts[3]));
    }
}
