//! Draws from the caller's RNG.
//!
//! Written by hand rather than with `rand`'s distributions on purpose: the mapping from the
//! generator's 64-bit outputs to a float is fixed here, so a seed gives the same RTOs whatever
//! version of `rand` a driver links (rand documents its distributions' value stability only
//! within a release series).

use rand_core::RngCore;

/// Uniform in [0, 1): the top 53 bits of one `next_u64`.
pub fn unit(rng: &mut dyn RngCore) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Uniform in [lo, hi) (just `lo` when the range is empty).
pub fn uniform(rng: &mut dyn RngCore, lo: f64, hi: f64) -> f64 {
    if hi <= lo {
        return lo;
    }
    lo + (hi - lo) * unit(rng)
}
