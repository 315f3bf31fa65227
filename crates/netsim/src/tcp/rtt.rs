//! The retransmission timeout a TCP connection computes from its RTT samples: Linux's rule
//! (`rto=linux`, the default) or RFC 6298's (`rto=rfc6298`, the textbook).
//!
//! **Linux** (`net/ipv4/tcp_input.c`: `tcp_rtt_estimator`, `tcp_set_rto`; `include/net/tcp.h`:
//! `__tcp_set_rto`), in integer microseconds and Linux's scalings (`srtt` ×8, `mdev`, `mdev_max`
//! and `rttvar` ×4):
//! * first sample m: srtt = 8m, mdev = 2m, rttvar = mdev_max = max(mdev, rto_min), rtt_seq = snd_nxt;
//! * later: e = m − srtt/8; srtt += e; if e < 0 { e = −e − mdev/4; if e > 0 { e /= 8 } } else
//!   { e −= mdev/4 }; mdev += e; if mdev > mdev_max { mdev_max = mdev; rttvar = max(rttvar,
//!   mdev_max) }; and once per round trip (snd_una past rtt_seq): if mdev_max < rttvar
//!   { rttvar −= (rttvar − mdev_max)/4 }, rtt_seq = snd_nxt, mdev_max = rto_min;
//! * RTO = srtt/8 + rttvar, at most `max_rto`. Since rttvar never falls below rto_min, the RTO is
//!   at least SRTT + rto_min (200 ms) — not RFC 6298's max(SRTT + 4·RTTVAR, 200 ms), which falls
//!   to SRTT itself when samples agree.
//!
//! Linux counts its timers in jiffies (4 ms with Debian's HZ = 250); the model keeps
//! microseconds (chosen: the rounding is below the testbed's 10 ms jitter).
//!
//! **RFC 6298** (`coap_cc::estimator::Rfc6298`): RTO = SRTT + 4·RTTVAR within [min_rto, max_rto].

use coap_cc::estimator::Rfc6298;

/// Which rule turns samples into an RTO.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RtoRule {
    /// Linux's `tcp_rtt_estimator` and `__tcp_set_rto`.
    Linux,
    /// RFC 6298 §2, clamped to [min_rto, max_rto].
    Rfc6298,
}

impl RtoRule {
    /// The parameter's spelling.
    pub fn name(self) -> &'static str {
        match self {
            RtoRule::Linux => "linux",
            RtoRule::Rfc6298 => "rfc6298",
        }
    }
}

/// Linux's estimator state, microseconds in Linux's scalings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct LinuxState {
    srtt8: i64,
    mdev4: i64,
    mdev_max4: i64,
    rttvar4: i64,
    rtt_seq: u64,
}

/// An RTT estimator of either rule.
#[derive(Debug, Clone)]
pub struct RttEstimator {
    rule: RtoRule,
    min_rto_us: i64,
    max_rto: f64,
    min_rto: f64,
    linux: Option<LinuxState>,
    rfc: Rfc6298,
}

impl RttEstimator {
    /// No sample yet.
    pub fn new(rule: RtoRule, min_rto: f64, max_rto: f64) -> Self {
        RttEstimator {
            rule,
            min_rto_us: (min_rto * 1e6).round() as i64,
            min_rto,
            max_rto,
            linux: None,
            rfc: Rfc6298::default(),
        }
    }

    /// SRTT, s, once a sample was seen.
    pub fn srtt(&self) -> Option<f64> {
        match self.rule {
            RtoRule::Linux => self.linux.map(|l| (l.srtt8 >> 3) as f64 / 1e6),
            RtoRule::Rfc6298 => self.rfc.srtt(),
        }
    }

    /// Feeds a sample of `r` seconds; `snd_una` and `snd_nxt` give Linux its round-trip boundary.
    pub fn sample(&mut self, r: f64, snd_una: u64, snd_nxt: u64) {
        match self.rule {
            RtoRule::Rfc6298 => self.rfc.update(r),
            RtoRule::Linux => {
                let m = ((r * 1e6).round() as i64).max(1);
                let rto_min = self.min_rto_us;
                self.linux = Some(match self.linux {
                    None => {
                        let mdev4 = m << 1;
                        let rttvar4 = mdev4.max(rto_min);
                        LinuxState { srtt8: m << 3, mdev4, mdev_max4: rttvar4, rttvar4, rtt_seq: snd_nxt }
                    }
                    Some(mut l) => {
                        let mut e = m - (l.srtt8 >> 3);
                        l.srtt8 += e;
                        if e < 0 {
                            e = -e - (l.mdev4 >> 2);
                            if e > 0 {
                                e >>= 3;
                            }
                        } else {
                            e -= l.mdev4 >> 2;
                        }
                        l.mdev4 += e;
                        if l.mdev4 > l.mdev_max4 {
                            l.mdev_max4 = l.mdev4;
                            l.rttvar4 = l.rttvar4.max(l.mdev_max4);
                        }
                        if snd_una > l.rtt_seq {
                            if l.mdev_max4 < l.rttvar4 {
                                l.rttvar4 -= (l.rttvar4 - l.mdev_max4) >> 2;
                            }
                            l.rtt_seq = snd_nxt;
                            l.mdev_max4 = rto_min;
                        }
                        l.srtt8 = l.srtt8.max(1);
                        l
                    }
                });
            }
        }
    }

    /// The RTO the samples give, s; `None` before the first.
    pub fn rto(&self) -> Option<f64> {
        match self.rule {
            RtoRule::Linux => self.linux.map(|l| (((l.srtt8 >> 3) + l.rttvar4) as f64 / 1e6).min(self.max_rto)),
            RtoRule::Rfc6298 => self.rfc.rto(4.0, 0.0).map(|r| r.clamp(self.min_rto, self.max_rto)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Samples 0.6, 0.6 and 2.0 s, each acknowledging a later flight. By hand, Linux (µs, its
    /// scalings): (1) srtt 0.6, mdev4 = rttvar4 = 1.2 → RTO 1.8; (2) e = 0 → e −= 0.3 → mdev4 0.9,
    /// below mdev_max4 1.2; new round: rttvar4 stays 1.2 (= mdev_max4), mdev_max4 := 0.2 → RTO
    /// 0.6 + 1.2 = 1.8; (3) e = 1.4, srtt 0.775, e −= 0.225 → mdev4 = 2.075 > mdev_max4 → rttvar4
    /// 2.075 → RTO 0.775 + 2.075 = 2.85. RFC 6298: (1) 0.6 + 4·0.3 = 1.8; (2) RTTVAR 0.225 →
    /// 0.6 + 0.9 = 1.5; (3) RTTVAR 0.75·0.225 + 0.25·1.4 = 0.51875, SRTT 0.775 → 2.85.
    #[test]
    fn samples_06_06_20_under_both_rules() {
        for (rule, want) in [(RtoRule::Linux, [1.8, 1.8, 2.85]), (RtoRule::Rfc6298, [1.8, 1.5, 2.85])] {
            let mut e = RttEstimator::new(rule, 0.2, 120.0);
            assert_eq!(e.rto(), None);
            for (i, (r, want)) in [0.6, 0.6, 2.0].into_iter().zip(want).enumerate() {
                let i = i as u64;
                e.sample(r, 10 * i + 1, 10 * i + 10);
                assert!((e.rto().unwrap() - want).abs() < 1e-9, "{rule:?} sample {i}: {:?} != {want}", e.rto());
            }
        }
    }

    /// Agreeing samples: RFC 6298's RTO falls to SRTT (RTTVAR → 0), Linux's stays SRTT + 200 ms.
    /// Linux by hand: rttvar4 starts at 2·0.5 = 1.0 and, mdev_max4 being reset to 0.2 each
    /// round, loses a quarter of (rttvar4 − mdev4-or-0.2) per round, so it tends to 0.2.
    #[test]
    fn steady_samples_floor_linux_at_srtt_plus_rto_min() {
        let (mut l, mut r) =
            (RttEstimator::new(RtoRule::Linux, 0.2, 120.0), RttEstimator::new(RtoRule::Rfc6298, 0.2, 120.0));
        for i in 0..200u64 {
            l.sample(0.5, 10 * i + 1, 10 * i + 10);
            r.sample(0.5, 10 * i + 1, 10 * i + 10);
        }
        assert!((l.rto().unwrap() - 0.7).abs() < 1e-5, "{:?}", l.rto());
        assert!((r.rto().unwrap() - 0.5).abs() < 1e-5, "{:?}", r.rto());
    }

    /// Within one round trip (snd_una not past rtt_seq) Linux does not decay rttvar.
    #[test]
    fn linux_decays_rttvar_once_per_round_trip() {
        let mut e = RttEstimator::new(RtoRule::Linux, 0.2, 120.0);
        e.sample(0.4, 1, 100); // rttvar4 = max(0.8, 0.2) = 0.8, rtt_seq 100
        e.sample(0.4, 50, 100); // same flight: mdev4 0.8 → 0.6, no decay: RTO 0.4 + 0.8
        assert!((e.rto().unwrap() - 1.2).abs() < 1e-9);
        // next flight: mdev4 0.6 → 0.45; mdev_max4 is still 0.8 = rttvar4 → no decay either;
        // mdev_max4 := 0.2 for the round that starts
        e.sample(0.4, 101, 200);
        assert!((e.rto().unwrap() - 1.2).abs() < 1e-9);
        // then: mdev4 0.45 → 0.3375 < mdev_max4 0.2? no: 0.3375 > 0.2 → mdev_max4 0.3375;
        // decay: rttvar4 −= (0.8 − 0.3375)/4 = 0.115625 → 0.684375
        e.sample(0.4, 201, 300);
        assert!((e.rto().unwrap() - (0.4 + 0.684375)).abs() < 1e-6, "{:?}", e.rto());
    }
}
