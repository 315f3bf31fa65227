//! Integer-nanosecond time. Sans-IO: nothing here reads a clock; the caller passes `now` in.

use core::ops::{Add, AddAssign, Sub};

/// A point in time: nanoseconds since an epoch the driver chooses (simulation start, or the
/// moment a real endpoint was created).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Instant(u64);

/// A span of time in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Duration(u64);

impl Instant {
    /// The epoch.
    pub const ZERO: Instant = Instant(0);
    /// From nanoseconds since the epoch.
    pub const fn from_nanos(ns: u64) -> Self {
        Instant(ns)
    }
    /// Nanoseconds since the epoch.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// `self - earlier`, or zero if `earlier` is later.
    pub const fn saturating_since(self, earlier: Instant) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
}

impl Duration {
    /// Zero.
    pub const ZERO: Duration = Duration(0);
    /// The longest span.
    pub const MAX: Duration = Duration(u64::MAX);
    /// From nanoseconds.
    pub const fn from_nanos(ns: u64) -> Self {
        Duration(ns)
    }
    /// From microseconds (saturating).
    pub const fn from_micros(us: u64) -> Self {
        Duration(us.saturating_mul(1_000))
    }
    /// From milliseconds (saturating).
    pub const fn from_millis(ms: u64) -> Self {
        Duration(ms.saturating_mul(1_000_000))
    }
    /// From whole seconds (saturating).
    pub const fn from_secs(s: u64) -> Self {
        Duration(s.saturating_mul(1_000_000_000))
    }
    /// From seconds, rounded to the nearest nanosecond; negative and NaN give zero, values past
    /// the range saturate.
    pub fn from_secs_f64(s: f64) -> Self {
        let ns = s * 1e9;
        if ns.is_nan() || ns <= 0.0 {
            Duration(0)
        } else if ns >= u64::MAX as f64 {
            Duration(u64::MAX)
        } else {
            Duration(round_positive(ns))
        }
    }
    /// Nanoseconds.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Seconds as a float.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;
    fn add(self, d: Duration) -> Instant {
        Instant(self.0.saturating_add(d.0))
    }
}
impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}
impl Sub<Instant> for Instant {
    type Output = Duration;
    /// Saturating: an `Instant` earlier than `rhs` gives zero.
    fn sub(self, rhs: Instant) -> Duration {
        self.saturating_since(rhs)
    }
}
impl Add for Duration {
    type Output = Duration;
    fn add(self, d: Duration) -> Duration {
        Duration(self.0.saturating_add(d.0))
    }
}

impl From<core::time::Duration> for Duration {
    fn from(d: core::time::Duration) -> Self {
        Duration(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
    }
}
impl From<Duration> for core::time::Duration {
    fn from(d: Duration) -> Self {
        core::time::Duration::from_nanos(d.0)
    }
}

/// `x` (0 < x < 2^64) rounded to the nearest integer, halves away from zero (C's `round`):
/// its integer part, plus one if the fraction is at least a half. Both are exact: below 2^53
/// the integer part is representable and `x` minus it loses no bit; from 2^53 on, `x` is an
/// integer. (The library `round` costs a call and a truncation; this runs for every RTO and
/// every jitter draw of the simulator.) Below 2^63 the conversions go through `i64`, which
/// x86-64 does in one instruction each way (`u64`'s take several); from 2^63 on, `x` is an
/// integer already.
fn round_positive(x: f64) -> u64 {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if x >= TWO_63 {
        return x as u64;
    }
    let int = x as i64; // truncates toward zero
    if x - int as f64 >= 0.5 {
        int as u64 + 1
    } else {
        int as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions() {
        assert_eq!(Duration::from_secs_f64(2.5).as_nanos(), 2_500_000_000);
        assert_eq!(Duration::from_secs_f64(-1.0), Duration::ZERO);
        assert_eq!(Duration::from_secs_f64(f64::NAN), Duration::ZERO);
        assert_eq!(Duration::from_secs_f64(1e30), Duration::MAX);
        assert_eq!(Instant::from_nanos(5) - Instant::from_nanos(9), Duration::ZERO);
        assert_eq!(Instant::ZERO + Duration::from_millis(3), Instant::from_nanos(3_000_000));
    }

    #[test]
    fn rounding_to_nanoseconds_breaks_ties_away_from_zero() {
        // halves go up; the largest double below a half goes down
        assert_eq!(round_positive(0.5), 1);
        assert_eq!(round_positive(1.5), 2);
        assert_eq!(round_positive(2.5), 3);
        assert_eq!(round_positive(0.5 - f64::EPSILON / 4.0), 0);
        assert_eq!(round_positive(2.4999999999999996), 2); // 2.5 less one unit in the last place
        assert_eq!(round_positive(1e-300), 0);
        // 2^52 - 0.5 is the last representable half (from 2^52 on the spacing is 1, from 2^53
        // on 2)
        assert_eq!(round_positive(4503599627370495.5), 4503599627370496);
        assert_eq!(round_positive(9007199254740994.0), 9007199254740994);
        // the largest double below 2^64 is 2^64 - 2^11
        assert_eq!(round_positive(f64::from_bits(0x43EF_FFFF_FFFF_FFFF)), u64::MAX - 2047);
        // either side of 2^63, where the conversion changes: 2^63 itself, and the largest
        // double below it, 2^63 - 2^10
        assert_eq!(round_positive(9_223_372_036_854_775_808.0), 1 << 63);
        assert_eq!(round_positive(f64::from_bits(0x43DF_FFFF_FFFF_FFFF)), (1 << 63) - 1024);
        // C's round (libm) agrees on a sweep of magnitudes and fractions
        let mut x = 1e-3;
        while x < 1.8e19 {
            for f in [0.0, 0.25, 0.4999999, 0.5, 0.5000001, 0.75] {
                let v = x + f;
                assert_eq!(round_positive(v), libm::round(v) as u64, "{v}");
            }
            x *= 1.37;
        }
    }
}
