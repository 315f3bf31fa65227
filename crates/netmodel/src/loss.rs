//! Link-error models: Bernoulli and Gilbert-Elliott, with netem's parameter names, and the
//! reference testbed's error profiles.
//!
//! Gilbert-Elliott as netem's `loss gemodel p r 1-h 1-k` applies it, per packet: in the good
//! state the packet moves to bad with probability p, in the bad state back to good with r; the
//! packet is lost with probability 1-k if the state it arrived in was good, 1-h if bad. The
//! stationary share of bad is π = p/(p+r), so the average loss is π(1-h) + (1-π)(1-k).
//!
//! The testbed gives the averages but not the transitions (docs/bottleneck.md, "Link errors"). Chosen:
//! r = 0.5 — a bad burst lasts 1/r = 2 packets on average, "a few packets" — and p from the
//! stationary average:
//! * `low`: 2 % constant, no state alternation (Bernoulli 0.02);
//! * `medium`: good 0 %, bad 50 %: π = 0.2, p = r·π/(1-π) = 0.125;
//! * `high`: good 2 %, bad 80 %: π = (0.18-0.02)/(0.80-0.02) = 0.205128…, p = 0.129032….

use rand_core::RngCore;
use serde::{Deserialize, Serialize};

/// A loss model of one link direction.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "snake_case", deny_unknown_fields)]
pub enum LossModel {
    /// No link errors.
    None,
    /// Each packet lost independently with probability `p`.
    Bernoulli {
        /// Loss probability.
        p: f64,
    },
    /// netem's Gilbert-Elliott model.
    GilbertElliott {
        /// Good → bad transition probability.
        p: f64,
        /// Bad → good transition probability.
        r: f64,
        /// Loss probability in the bad state.
        one_minus_h: f64,
        /// Loss probability in the good state.
        one_minus_k: f64,
    },
}

/// The testbed's named error profiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorProfile {
    /// 0 %.
    None,
    /// 2 % constant.
    Low,
    /// 10 % average: 0 % good, 50 % bad.
    Medium,
    /// 18 % average: 2 % good, 80 % bad.
    High,
    /// Use each link's own `loss` table.
    Custom,
}

/// Mean bad-burst length 1/R = 2 packets (chosen; see the module doc).
pub const PROFILE_R: f64 = 0.5;

impl ErrorProfile {
    /// The model of this profile (`None` for `custom`, whose links say their own).
    pub fn model(self) -> Option<LossModel> {
        let ge = |good: f64, bad: f64, avg: f64| {
            let pi = (avg - good) / (bad - good);
            LossModel::GilbertElliott {
                p: PROFILE_R * pi / (1.0 - pi),
                r: PROFILE_R,
                one_minus_h: bad,
                one_minus_k: good,
            }
        };
        match self {
            ErrorProfile::None => Some(LossModel::None),
            ErrorProfile::Low => Some(LossModel::Bernoulli { p: 0.02 }),
            ErrorProfile::Medium => Some(ge(0.0, 0.5, 0.10)),
            ErrorProfile::High => Some(ge(0.02, 0.8, 0.18)),
            ErrorProfile::Custom => None,
        }
    }

    /// Parses the CLI name.
    pub fn parse(s: &str) -> Option<Self> {
        ErrorProfile::ALL.into_iter().find(|p| p.name() == s)
    }

    /// Every profile, as scenario files may name them.
    pub const ALL: [ErrorProfile; 5] =
        [ErrorProfile::None, ErrorProfile::Low, ErrorProfile::Medium, ErrorProfile::High, ErrorProfile::Custom];

    /// The name [`ErrorProfile::parse`] reads (and scenario files write).
    pub fn name(self) -> &'static str {
        match self {
            ErrorProfile::None => "none",
            ErrorProfile::Low => "low",
            ErrorProfile::Medium => "medium",
            ErrorProfile::High => "high",
            ErrorProfile::Custom => "custom",
        }
    }
}

impl LossModel {
    /// The long-run average loss rate.
    pub fn average(&self) -> f64 {
        match *self {
            LossModel::None => 0.0,
            LossModel::Bernoulli { p } => p,
            LossModel::GilbertElliott { p, r, one_minus_h, one_minus_k } => {
                if p + r == 0.0 {
                    one_minus_k
                } else {
                    let pi = p / (p + r);
                    pi * one_minus_h + (1.0 - pi) * one_minus_k
                }
            }
        }
    }

    /// Checks every probability is in [0, 1]; on failure the offending field.
    pub fn validate(&self) -> Result<(), &'static str> {
        let ok = |v: f64| (0.0..=1.0).contains(&v);
        match *self {
            LossModel::None => Ok(()),
            LossModel::Bernoulli { p } => ok(p).then_some(()).ok_or("p"),
            LossModel::GilbertElliott { p, r, one_minus_h, one_minus_k } => {
                for (name, v) in [("p", p), ("r", r), ("one_minus_h", one_minus_h), ("one_minus_k", one_minus_k)] {
                    if !ok(v) {
                        return Err(name);
                    }
                }
                Ok(())
            }
        }
    }
}

/// A loss model with its state, drawing from its own RNG.
#[derive(Debug, Clone)]
pub struct LossProcess<R> {
    model: LossModel,
    bad: bool,
    rng: R,
}

fn draw(rng: &mut impl RngCore) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

impl<R: RngCore> LossProcess<R> {
    /// Starts in the good state.
    pub fn new(model: LossModel, rng: R) -> Self {
        LossProcess { model, bad: false, rng }
    }

    /// Is the next packet lost?
    pub fn lose(&mut self) -> bool {
        match self.model {
            LossModel::None => false,
            LossModel::Bernoulli { p } => draw(&mut self.rng) < p,
            LossModel::GilbertElliott { p, r, one_minus_h, one_minus_k } => {
                let was_bad = self.bad;
                if was_bad {
                    if draw(&mut self.rng) < r {
                        self.bad = false;
                    }
                } else if draw(&mut self.rng) < p {
                    self.bad = true;
                }
                draw(&mut self.rng) < if was_bad { one_minus_h } else { one_minus_k }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::rand_core::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn a_profiles_name_reads_back_as_the_profile() {
        for p in ErrorProfile::ALL {
            assert_eq!(ErrorProfile::parse(p.name()), Some(p));
        }
        assert_eq!(ErrorProfile::Medium.name(), "medium");
    }

    #[test]
    fn profiles_have_the_testbed_averages() {
        for (profile, avg) in [
            (ErrorProfile::None, 0.0),
            (ErrorProfile::Low, 0.02),
            (ErrorProfile::Medium, 0.10),
            (ErrorProfile::High, 0.18),
        ] {
            let m = profile.model().unwrap();
            assert!((m.average() - avg).abs() < 1e-12, "{profile:?}: {}", m.average());
        }
        assert_eq!(
            ErrorProfile::Medium.model(),
            Some(LossModel::GilbertElliott { p: 0.125, r: 0.5, one_minus_h: 0.5, one_minus_k: 0.0 })
        );
    }

    #[test]
    fn simulated_loss_rate_and_bursts() {
        let m = ErrorProfile::Medium.model().unwrap();
        let mut lp = LossProcess::new(m, ChaCha8Rng::seed_from_u64(1));
        let n = 400_000;
        let (mut lost, mut bursts, mut prev) = (0, 0, false);
        for _ in 0..n {
            let l = lp.lose();
            lost += l as u32;
            bursts += (l && !prev) as u32;
            prev = l;
        }
        let rate = lost as f64 / n as f64;
        assert!((rate - 0.10).abs() < 0.005, "{rate}");
        // losses come in short bursts: mean run length between 1 and 2 packets
        let run = lost as f64 / bursts as f64;
        assert!((1.0..2.0).contains(&run), "{run}");
    }
}
