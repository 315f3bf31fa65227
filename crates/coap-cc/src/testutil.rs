//! Helpers for the unit tests.

use crate::controller::{Completion, Echo, Start};
use crate::time::Instant;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

pub(crate) const CON: Start = Start { outstanding: 0, confirmable: true };

pub(crate) fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

pub(crate) fn t(secs: f64) -> Instant {
    Instant::from_nanos((secs * 1e9).round() as u64)
}

/// A piggybacked completion without echo.
pub(crate) fn done(sent: &[Instant]) -> Completion<'_> {
    Completion { sent, echo: Echo::None, piggybacked: true }
}

#[track_caller]
pub(crate) fn assert_close(a: f64, b: f64) {
    assert!((a - b).abs() < 1e-9, "{a} != {b}");
}
