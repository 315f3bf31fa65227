//! The RFC 6298 RTT estimator (SRTT, RTTVAR) shared by CoCoA, FASOR and RTT-CoAP.
//!
//! RFC 6298 §2: on the first sample R: SRTT = R, RTTVAR = R/2; on later ones
//! RTTVAR = (1 - β)·RTTVAR + β·|SRTT - R| (with the old SRTT), then SRTT = (1 - α)·SRTT + α·R,
//! α = 1/8, β = 1/4; RTO = SRTT + max(G, K·RTTVAR). Values are in seconds.

/// α of RFC 6298 §2.3.
pub const ALPHA: f64 = 1.0 / 8.0;
/// β of RFC 6298 §2.3.
pub const BETA: f64 = 1.0 / 4.0;

/// SRTT and RTTVAR; `None` before the first sample. `Copy`: algorithms lend it by value or
/// reference as they need.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Rfc6298 {
    state: Option<(f64, f64)>,
}

impl Rfc6298 {
    /// Feeds one RTT sample (seconds).
    pub fn update(&mut self, r: f64) {
        self.state = Some(match self.state {
            None => (r, r / 2.0),
            Some((srtt, rttvar)) => {
                let rttvar = (1.0 - BETA) * rttvar + BETA * libm::fabs(srtt - r);
                ((1.0 - ALPHA) * srtt + ALPHA * r, rttvar)
            }
        });
    }
    /// Overrides the state (FASOR's first-sample variants set RTTVAR themselves).
    pub fn set(&mut self, srtt: f64, rttvar: f64) {
        self.state = Some((srtt, rttvar));
    }
    /// SRTT, if a sample was seen.
    pub fn srtt(&self) -> Option<f64> {
        self.state.map(|s| s.0)
    }
    /// RTTVAR, if a sample was seen.
    pub fn rttvar(&self) -> Option<f64> {
        self.state.map(|s| s.1)
    }
    /// SRTT + max(G, K·RTTVAR), if a sample was seen.
    pub fn rto(&self, k: f64, g: f64) -> Option<f64> {
        self.state.map(|(srtt, rttvar)| srtt + f64::max(g, k * rttvar))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc6298_by_hand() {
        let mut e = Rfc6298::default();
        assert_eq!(e.rto(4.0, 0.0), None);
        e.update(1.0); // SRTT 1, RTTVAR 0.5 → RTO 1 + 4·0.5 = 3
        assert_eq!(e.rto(4.0, 0.0), Some(3.0));
        e.update(2.0); // RTTVAR = 0.75·0.5 + 0.25·|1-2| = 0.625; SRTT = 0.875 + 0.25 = 1.125
        assert_eq!(e.rttvar(), Some(0.625));
        assert_eq!(e.srtt(), Some(1.125));
        assert_eq!(e.rto(4.0, 0.0), Some(1.125 + 2.5));
        assert_eq!(e.rto(1.0, 1.0), Some(1.125 + 1.0)); // G dominates K·RTTVAR = 0.625
    }
}
