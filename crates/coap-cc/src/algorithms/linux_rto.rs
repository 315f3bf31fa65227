//! `linux_rto` — the Linux TCP retransmission timer over CoAP (Linux `tcp_rtt_estimator` and
//! `__tcp_set_rto`; also ported as Californium's LinuxRto): the literature's "Linux RTO".
//!
//! Unambiguous samples only. First sample R: SRTT = R, mdev = R/2, mdev_max = max(mdev, 50 ms),
//! RTTVAR = mdev_max. Later: SRTT += (R − SRTT)/8; then, with the NEW SRTT (the specification's
//! order, as Californium's LinuxRto computes it), if R < SRTT − mdev then mdev = 31/32·mdev +
//! |R − SRTT|/32 else mdev = 3/4·mdev + |R − SRTT|/4; if mdev > mdev_max
//! { mdev_max = mdev; RTTVAR = max(RTTVAR, mdev_max) }; once per RTT, here once per sample:
//! if mdev_max < RTTVAR then RTTVAR −= (RTTVAR − mdev_max)/4, and mdev_max resets to 50 ms.
//! RTO = SRTT + 4·RTTVAR within [0.2, 120] s; initial 1 s (`initial_rto`; the thesis testbed
//! used 2). Timeouts double (capped at 120 s). Karn: a retransmitted exchange gives no sample,
//! and its backed-off RTO is kept for the next exchange until an unambiguous sample arrives.
//! No dither (Linux has none).
//!
//! Open point: Linux itself computes the error against the OLD SRTT (`m = R − srtt` before
//! `srtt += m/8`), and its scaled arithmetic then gives exactly the rules above with SRTT_old:
//! `mdev_srtt=old` selects that reading; the default `new` follows the specification's text and
//! Californium.

use crate::controller::{Completion, Controller, ExchangeTimer, Metrics, Sample, Start};
use crate::marking::{MarkingKind, MarkingState, TRANSMISSION_NUMBER_OPTION};
use crate::params::{check, choice, params};
use crate::time::{Duration, Instant};
use rand_core::RngCore;

params! {
    /// Linux RTO parameters.
    pub struct LinuxParams {
        /// RTO before any sample, s (Linux: 1; the thesis testbed: 2).
        initial_rto: f64 = 1.0,
        /// Lower bound of the RTO, s (Linux TCP_RTO_MIN).
        rto_min: f64 = 0.2,
        /// Upper bound of the RTO, s (Linux TCP_RTO_MAX).
        rto_max: f64 = 120.0,
        /// Floor of mdev_max, s (Linux: tcp_rto_min/4 = 50 ms).
        mdev_floor: f64 = 0.05,
        /// MAX_RETRANSMIT (RFC 7252 §4.8).
        max_retransmit: u32 = 4,
        /// NSTART (RFC 7252 §4.7).
        nstart: u32 = 1,
        /// Accurate RTT samples: none, token or option.
        rtt_marking: MarkingKind = MarkingKind::None,
        /// SRTT used by the mdev rule: new (the specification, Californium) or old (Linux's own code).
        mdev_srtt: MdevSrtt = MdevSrtt::New,
    }
}

choice! {
    /// Which SRTT the mdev rule compares against.
    pub enum MdevSrtt { New = "new", Old = "old" }
}

impl LinuxParams {
    /// Checks the values; on failure, the offending key and the rule it breaks.
    pub fn validate(&self) -> Result<(), (&'static str, &'static str)> {
        check(self.rto_min > 0.0 && self.rto_min <= self.rto_max, "rto_min", "need 0 < rto_min <= rto_max")?;
        check(
            (self.rto_min..=self.rto_max).contains(&self.initial_rto),
            "initial_rto",
            "must be within [rto_min, rto_max]",
        )?;
        check(self.mdev_floor >= 0.0, "mdev_floor", "must be >= 0")?;
        crate::params::check_common(self.max_retransmit, self.nstart)
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Estimate {
    srtt: f64,
    mdev: f64,
    mdev_max: f64,
    rttvar: f64,
}

/// Linux RTO for one destination.
#[derive(Debug, Clone)]
pub struct LinuxRto {
    p: LinuxParams,
    est: Option<Estimate>,
    rto: f64,
    marking: MarkingState,
}

impl LinuxRto {
    /// A controller with no history.
    pub fn new(p: LinuxParams) -> Self {
        LinuxRto {
            rto: p.initial_rto,
            marking: MarkingState::new(p.rtt_marking, TRANSMISSION_NUMBER_OPTION),
            p,
            est: None,
        }
    }

    fn update(&mut self, r: f64) {
        let floor = self.p.mdev_floor;
        let e = match self.est {
            None => {
                let mdev = r / 2.0;
                let mdev_max = mdev.max(floor);
                Estimate { srtt: r, mdev, mdev_max, rttvar: mdev_max }
            }
            Some(mut e) => {
                let old = e.srtt;
                e.srtt += (r - old) / 8.0;
                let srtt = match self.p.mdev_srtt {
                    MdevSrtt::New => e.srtt,
                    MdevSrtt::Old => old,
                };
                let err = (r - srtt).abs();
                e.mdev = if r < srtt - e.mdev { 31.0 / 32.0 * e.mdev + err / 32.0 } else { 0.75 * e.mdev + err / 4.0 };
                if e.mdev > e.mdev_max {
                    e.mdev_max = e.mdev;
                    e.rttvar = e.rttvar.max(e.mdev_max);
                }
                if e.mdev_max < e.rttvar {
                    e.rttvar -= (e.rttvar - e.mdev_max) / 4.0;
                }
                e.mdev_max = floor;
                e
            }
        };
        self.est = Some(e);
        self.rto = (e.srtt + 4.0 * e.rttvar).clamp(self.p.rto_min, self.p.rto_max);
    }
}

impl Controller for LinuxRto {
    fn name(&self) -> &'static str {
        "linux_rto"
    }
    fn nstart(&self) -> usize {
        self.p.nstart as usize
    }
    fn start(&mut self, _now: Instant, start: Start, _rng: &mut dyn RngCore) -> ExchangeTimer {
        ExchangeTimer::from_secs(self.rto, start, self.marking.next())
    }
    fn on_timeout(&mut self, _now: Instant, ex: &mut ExchangeTimer, _rng: &mut dyn RngCore) -> Option<Duration> {
        crate::controller::double(ex, self.p.max_retransmit, self.p.rto_max)
    }
    fn on_complete(&mut self, now: Instant, ex: &ExchangeTimer, done: &Completion<'_>) {
        self.marking.observe(ex, done);
        match done.sample(now) {
            Sample::Unambiguous { rtt, .. } => self.update(rtt.as_secs_f64()),
            Sample::Ambiguous { .. } => self.rto = ex.armed,
        }
    }
    fn on_failure(&mut self, _now: Instant, ex: &ExchangeTimer) {
        self.rto = ex.armed;
    }
    fn reset(&mut self) {
        *self = LinuxRto::new(self.p.clone());
    }
    fn metrics(&self) -> Metrics {
        Metrics::secs(self.rto, self.est.map(|e| e.srtt))
    }
    fn rto_bounds(&self) -> (Duration, Duration) {
        crate::controller::bounds(self.p.rto_min, self.p.rto_max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::*;

    #[test]
    fn estimator_by_hand() {
        let mut c = LinuxRto::new(LinuxParams::default());
        assert_eq!(c.rto, 1.0);
        // R = 0.6: SRTT 0.6, mdev 0.3, mdev_max 0.3, RTTVAR 0.3 → RTO 0.6 + 1.2 = 1.8
        c.update(0.6);
        assert_close(c.rto, 1.8);
        // R = 0.2: SRTT = 0.6 − 0.4/8 = 0.55; 0.2 < 0.55 − 0.3 → mdev = 31/32·0.3 + |0.2 − 0.55|/32
        // = 0.3015625 > mdev_max → mdev_max = RTTVAR = 0.3015625; no decay; mdev_max → 0.05
        c.update(0.2);
        let e = c.est.unwrap();
        assert_close(e.srtt, 0.55);
        assert_close(e.mdev, 0.3015625);
        assert_close(e.rttvar, 0.3015625);
        assert_close(c.rto, 0.55 + 4.0 * 0.3015625);
        // R = 0.55: SRTT stays; mdev = 0.75·0.3015625 = 0.226171875 > 0.05 → mdev_max = 0.226…;
        // RTTVAR stays 0.3015625, then decays by (0.3015625 − 0.226171875)/4 → 0.28271484375
        c.update(0.55);
        let e = c.est.unwrap();
        assert_close(e.mdev, 0.226171875);
        assert_close(e.rttvar, 0.28271484375);
        assert_close(c.rto, 0.55 + 4.0 * 0.28271484375);
    }

    #[test]
    fn linux_own_reading_uses_the_old_srtt() {
        let mut c = LinuxRto::new(LinuxParams { mdev_srtt: MdevSrtt::Old, ..LinuxParams::default() });
        c.update(0.6);
        // R = 0.2 against SRTT_old 0.6: 0.2 < 0.6 − 0.3 → mdev = 31/32·0.3 + 0.4/32 = 0.303125
        c.update(0.2);
        let e = c.est.unwrap();
        assert_close(e.srtt, 0.55);
        assert_close(e.mdev, 0.303125);
        assert_close(e.rttvar, 0.303125);
        // R = 0.55 against SRTT_old 0.55: mdev = 0.75·0.303125 = 0.22734375; RTTVAR decays by
        // (0.303125 − 0.22734375)/4 → 0.2841796875
        c.update(0.55);
        let e = c.est.unwrap();
        assert_close(e.mdev, 0.22734375);
        assert_close(e.rttvar, 0.2841796875);
    }

    #[test]
    fn karn_keeps_backed_off_rto_and_bounds() {
        let mut c = LinuxRto::new(LinuxParams { max_retransmit: 20, ..LinuxParams::default() });
        let mut r = rng(1);
        let mut ex = c.start(t(0.0), CON, &mut r);
        assert_close(ex.armed, 1.0);
        for e in [2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 120.0, 120.0] {
            assert_close(c.on_timeout(t(0.0), &mut ex, &mut r).unwrap().as_secs_f64(), e);
        }
        c.on_complete(t(500.0), &ex, &done(&[t(0.0), t(1.0)]));
        assert_close(c.start(t(501.0), CON, &mut r).armed, 120.0);
        // a tiny sample hits the 200 ms floor: SRTT 0.001 + 4·0.05 = 0.201
        let mut c = LinuxRto::new(LinuxParams::default());
        c.update(0.001);
        assert_close(c.rto, 0.201);
    }
}
