//! `cocoa_pp` — CoCoA++ (Rathod, Jeppu, Sastry, Singala, Tahiliani, 2019): CoCoA with a
//! Probabilistic Backoff Factor (PBF) driven by CAIA delay gradients (CDG; Hayes & Armitage 2011)
//! instead of the VBF.
//!
//! * RTT samples (strong ones: unambiguous, as CDG uses) are grouped into measurement intervals
//!   of `interval` samples; each interval records RTT_min and RTT_max.
//! * At the end of an interval: g_min = RTT_min,n − RTT_min,n−1 and g_max likewise, averaged
//!   over the last `window` intervals (a moving average, as Linux tcp_cdg).
//! * The gradient used is ḡ_min when positive, else ḡ_max (Linux tcp_cdg's choice).
//! * P(backoff) = 1 − exp(−ḡ/G).
//! * At each retransmission (where CoCoA applies its VBF): with X uniform in [0, 1), if
//!   P(backoff) > X and ḡ > 0 the timer is multiplied by `up` = 1.42, otherwise by `down` = 0.7.
//!   The timer is kept in [`timer_floor`, `timer_ceiling`] = [0.5, 60] s so the ×0.7 branch cannot
//!   spin; CoCoA's 32 s truncation of increases applies as well.
//! * The initial RTO of an exchange is CoCoA's overall RTO ([`super::cocoa`]).
//!
//! Constants per source code, unverified against the paper: the only code found (the authors'
//! students, Contiki) used intervals of 5 samples, a cumulative mean of the gradients, and
//! G = 300 ms; Linux CDG uses a window of 8 and G ≈ 3 ms. Defaults: interval 5, window 8, G = 0.3 s.

use crate::params::params;
use crate::rng::unit;
use rand_core::RngCore;

params! {
    /// CoCoA++'s gradient and PBF parameters.
    pub struct PpParams {
        /// RTT samples per measurement interval (per source code, unverified).
        interval: u32 = 5,
        /// Intervals the gradients are averaged over (a), at most 16.
        window: u32 = 8,
        /// Scale G of P(backoff) = 1 - exp(-g/G), s (per source code, unverified).
        g_scale: f64 = 0.3,
        /// Factor when backing off.
        up: f64 = 1.42,
        /// Factor otherwise.
        down: f64 = 0.7,
        /// Lowest timer, s.
        timer_floor: f64 = 0.5,
        /// Highest timer, s.
        timer_ceiling: f64 = 60.0,
    }
}

impl PpParams {
    /// Checks the values; on failure, the offending key and the rule it breaks.
    pub fn validate(&self) -> Result<(), (&'static str, &'static str)> {
        use crate::params::check;
        check(self.interval >= 1, "interval", "must be >= 1")?;
        check((1..=16).contains(&self.window), "window", "must be in 1..=16")?;
        check(self.g_scale > 0.0, "g_scale", "must be > 0")?;
        check(self.up > 0.0 && self.down > 0.0, "up", "factors must be > 0")?;
        check(
            0.0 < self.timer_floor && self.timer_floor <= self.timer_ceiling,
            "timer_floor",
            "need 0 < timer_floor <= timer_ceiling",
        )
    }
}

const MAX_WINDOW: usize = 16;

/// Measurement intervals and the last gradients.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct Gradients {
    in_interval: u32,
    cur: (f64, f64),
    prev: Option<(f64, f64)>,
    g: [(f64, f64); MAX_WINDOW],
    len: usize,
    next: usize,
}

impl Gradients {
    /// Adds an RTT sample.
    pub(crate) fn add(&mut self, rtt: f64, p: &PpParams) {
        self.cur = if self.in_interval == 0 { (rtt, rtt) } else { (self.cur.0.min(rtt), self.cur.1.max(rtt)) };
        self.in_interval += 1;
        if self.in_interval < p.interval {
            return;
        }
        self.in_interval = 0;
        if let Some((pmin, pmax)) = self.prev {
            let window = p.window as usize;
            self.g[self.next % window] = (self.cur.0 - pmin, self.cur.1 - pmax);
            self.next = (self.next + 1) % window;
            self.len = (self.len + 1).min(window);
        }
        self.prev = Some(self.cur);
    }

    /// ḡ: the mean g_min when positive, else the mean g_max (0 before any gradient).
    pub(crate) fn gradient(&self) -> f64 {
        if self.len == 0 {
            return 0.0;
        }
        let (smin, smax) = self.g[..self.len].iter().fold((0.0, 0.0), |a, g| (a.0 + g.0, a.1 + g.1));
        let (gmin, gmax) = (smin / self.len as f64, smax / self.len as f64);
        if gmin > 0.0 {
            gmin
        } else {
            gmax
        }
    }

    /// P(backoff) = 1 − exp(−ḡ/G) (negative for a falling delay).
    pub(crate) fn p_backoff(&self, p: &PpParams) -> f64 {
        1.0 - libm::exp(-self.gradient() / p.g_scale)
    }

    /// The PBF of one retransmission.
    pub(crate) fn backoff_factor(&self, p: &PpParams, rng: &mut dyn RngCore) -> f64 {
        let x = unit(rng);
        if self.p_backoff(p) > x && self.gradient() > 0.0 {
            p.up
        } else {
            p.down
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::rng;

    #[test]
    fn intervals_and_gradients() {
        let p = PpParams { interval: 2, window: 2, ..PpParams::default() };
        let mut g = Gradients::default();
        for r in [1.0, 1.2] {
            g.add(r, &p); // interval 1: min 1.0, max 1.2 (no gradient yet)
        }
        assert_eq!(g.gradient(), 0.0);
        for r in [1.5, 1.3] {
            g.add(r, &p); // interval 2: min 1.3, max 1.5 → g = (0.3, 0.3)
        }
        assert!((g.gradient() - 0.3).abs() < 1e-12);
        for r in [1.1, 1.6] {
            g.add(r, &p); // interval 3: min 1.1 (g_min −0.2), max 1.6 (g_max +0.1)
        }
        // mean g_min = (0.3 − 0.2)/2 = 0.05 > 0 → ḡ = 0.05
        assert!((g.gradient() - 0.05).abs() < 1e-12);
        // P = 1 − e^(−0.05/0.3) = 0.15351827510938593
        assert!((g.p_backoff(&p) - 0.153_518_275_109_385_93).abs() < 1e-12);
    }

    #[test]
    fn pbf_factors() {
        let p = PpParams::default();
        let mut r = rng(3);
        // no gradient: always ×0.7
        let g = Gradients::default();
        assert!((0..100).all(|_| g.backoff_factor(&p, &mut r) == 0.7));
        // a huge positive gradient: P ≈ 1 → always ×1.42
        let mut g = Gradients::default();
        let p1 = PpParams { interval: 1, ..PpParams::default() };
        g.add(0.1, &p1);
        g.add(100.0, &p1);
        assert!((0..100).all(|_| g.backoff_factor(&p1, &mut r) == 1.42));
        // P ≈ 0.1535: about 15 % of draws back off
        let mut g = Gradients::default();
        g.add(1.0, &p1);
        g.add(1.05, &p1);
        let ups = (0..10_000).filter(|_| g.backoff_factor(&p1, &mut r) == 1.42).count();
        assert!((1300..1800).contains(&ups), "{ups}");
    }

    #[test]
    fn cocoa_pp_timer_floor() {
        use crate::algorithms::cocoa::{Cocoa, CocoaParams, Family};
        use crate::controller::Controller;
        use crate::testutil::*;
        let mut c = Cocoa::new(
            "cocoa_pp",
            CocoaParams { max_retransmit: 20, ..CocoaParams::default() },
            Family::pp(PpParams::default()),
        );
        let mut r = rng(4);
        let mut ex = c.start(t(0.0), CON, &mut r);
        let r0 = ex.armed;
        // no gradients yet: ×0.7 per step, down to the 0.5 s floor
        let mut expect = r0;
        for _ in 0..10 {
            expect = (expect * 0.7).max(0.5);
            assert_close(c.on_timeout(t(0.0), &mut ex, &mut r).unwrap().as_secs_f64(), expect);
        }
        assert_close(expect, 0.5);
    }
}
