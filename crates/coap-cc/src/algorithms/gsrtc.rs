//! `gsrtc` — Geometric Series RTO for CoCoA (Rathod & Tahiliani, 2021).
//!
//! Builds on `cocoa_fb2` ([`super::cocoa`]). `count` = strong samples in a row; after each
//! strong sample count += 1 and W = W_prev + (1/2)^count, bounded to [`w_min`, `w_max`] =
//! [0.5, 0.99]; the overall RTO becomes W·E_strong + (1 − W)·RTO. A weak sample resets count to
//! 0 and W to its starting value, and the weak update keeps CoCoA's weight 0.25; after an
//! exchange with retransmissions FB2's carry then applies, built from that weighted RTO.
//!
//! Open point: the starting value of W. The specification takes the lower bound 0.5 (the
//! pseudocode's 0, clamped), which makes the first strong sample give W = min(0.5 + 0.5, 0.99)
//! = 0.99. With `w_initial=0` the series is the geometric 0.5, 0.75, 0.875, … the name
//! suggests. Default: the specification's 0.5.

use crate::params::params;

params! {
    /// GSRTC's weight series.
    pub struct GsrtcParams {
        /// Starting (and reset) value of W.
        w_initial: f64 = 0.5,
        /// Lower bound of W.
        w_min: f64 = 0.5,
        /// Upper bound of W.
        w_max: f64 = 0.99,
    }
}

impl GsrtcParams {
    /// Checks the values; on failure, the offending key and the rule it breaks.
    pub fn validate(&self) -> Result<(), (&'static str, &'static str)> {
        crate::params::check(
            0.0 <= self.w_min && self.w_min <= self.w_max && self.w_max <= 1.0,
            "w_min",
            "need 0 <= w_min <= w_max <= 1",
        )?;
        crate::params::check((0.0..=1.0).contains(&self.w_initial), "w_initial", "must be in [0, 1]")
    }
}

/// The weight state: `count` strong samples in a row and the current W.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct GsrtcWeight {
    count: u32,
    w: f64,
}

impl GsrtcWeight {
    pub(crate) fn new(p: &GsrtcParams) -> Self {
        GsrtcWeight { count: 0, w: p.w_initial }
    }
    /// A strong sample: the weight of E_strong.
    pub(crate) fn on_strong(&mut self, p: &GsrtcParams) -> f64 {
        self.count = self.count.saturating_add(1);
        self.w = (self.w + libm::pow(0.5, self.count as f64)).clamp(p.w_min, p.w_max);
        self.w
    }
    /// A weak sample resets the series.
    pub(crate) fn on_weak(&mut self, p: &GsrtcParams) {
        *self = GsrtcWeight::new(p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weight_series_and_bounds() {
        // specification's start 0.5: 0.5 + 1/2 = 1.0 → bounded to 0.99, and stays there
        let p = GsrtcParams::default();
        let mut w = GsrtcWeight::new(&p);
        assert_eq!(w.on_strong(&p), 0.99);
        assert_eq!(w.on_strong(&p), 0.99);
        // the geometric reading: 0 + 1/2, + 1/4, + 1/8, + 1/16, + 1/32, + 1/64 = 0.984375, then 0.99
        let p0 = GsrtcParams { w_initial: 0.0, ..GsrtcParams::default() };
        let mut w = GsrtcWeight::new(&p0);
        let series: Vec<f64> = (0..7).map(|_| w.on_strong(&p0)).collect();
        assert_eq!(series, [0.5, 0.75, 0.875, 0.9375, 0.96875, 0.984375, 0.99]);
        w.on_weak(&p0);
        assert_eq!(w.on_strong(&p0), 0.5);
    }

    #[test]
    fn gsrtc_controller_uses_the_weight() {
        use crate::algorithms::cocoa::{Cocoa, CocoaParams, Family};
        use crate::controller::Controller;
        use crate::testutil::*;
        let mut c = Cocoa::new(
            "gsrtc",
            CocoaParams { aging: false, ..CocoaParams::default() },
            Family::gsrtc(GsrtcParams::default()),
        );
        let mut r = rng(1);
        // strong sample 1: E = 3; W = 0.99: RTO = 0.99·3 + 0.01·2 = 2.99
        let ex = c.start(t(0.0), CON, &mut r);
        c.on_complete(t(1.0), &ex, &done(&[t(0.0)]));
        assert_close(c.metrics().rto.as_secs_f64(), 2.99);
    }
}
