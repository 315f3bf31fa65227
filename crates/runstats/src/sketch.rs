//! A run's RTTs in bounded memory: exact while they are few, a log-linear histogram beyond.
//!
//! Exact quantiles need every value: 8 bytes per exchange, so a run's memory would grow with
//! its length (a million clients of 50 exchanges kept 400 MB of RTTs). [`Rtts`] keeps a
//! replication's RTTs exactly up to [`EXACT_CAP`] of them (512 KB, more than any cell of the
//! reference matrix has: its heaviest has 20,000); past that it counts them in an
//! [`RttSketch`], whose size does not grow with the number of exchanges. The summary's quantiles
//! are exact when every replication stayed exact, and otherwise come from the sketch of all
//! replications' RTTs, with the error bound below (`coapcc sim --json` then says so:
//! `rtt_s_relative_error`). Which of the two a summary uses depends only on whether some
//! replication exceeded the cap, never on which replication finished first (a sketch's counts
//! add up in any order).
//!
//! The sketch is an HdrHistogram (the `hdrhistogram` crate) of nanoseconds with three
//! significant digits: one bucket per nanosecond below 2,048 ns, and above, each power of two
//! [2^k, 2^(k+1)) split into 1,024 equal buckets, so that a bucket is at most 2^-10 of its
//! smallest value wide. It grows to the largest value recorded (about 240 KB for RTTs of
//! minutes) and no further.
//!
//! A sketch's quantile is computed as the exact ones of [`crate::quantile`] are (type 7: linear
//! interpolation between the order statistics of ranks ⌊h⌋ and ⌊h⌋ + 1, h = (n − 1)·p), with
//! each of the two order statistics replaced by the middle of its bucket (the crate's
//! `median_equivalent`: lowest value + half the bucket's width), except the smallest and the
//! largest value, which are kept exactly. **Error bound**: a value x in a bucket of width w ≥ 2
//! starting at a ≥ 1,024·w is at most w/2 ≤ a/2,048 ≤ x/2,048 from the middle; so each order
//! statistic, and the interpolated quantile (a convex combination of two of them), is within
//! 2^-11 (0.049 %) of its exact value, relative ([`RELATIVE_ERROR`]). Values below 2,048 ns,
//! the minimum and the maximum are exact. Merging two sketches adds their counts.
//!
//! Hand-written around the crate because its own quantile (`value_at_quantile`) is the highest
//! value of the bucket at a rank, not the interpolated type 7 of the exact summaries, and its
//! minimum and maximum are rounded to their buckets.

use hdrhistogram::Histogram;

/// Significant decimal digits kept (the crate's `sigfig`): buckets of at most 2^-10 relative
/// width.
const SIGFIG: u8 = 3;

/// The relative error bound of [`RttSketch::quantile_s`] (see the module's doc).
pub const RELATIVE_ERROR: f64 = 1.0 / 2048.0;

/// Counts of nanosecond values in log-linear buckets, with the exact smallest and largest.
#[derive(Debug, Clone, PartialEq)]
pub struct RttSketch {
    hist: Histogram<u64>,
    min: u64,
    max: u64,
}

impl Default for RttSketch {
    fn default() -> Self {
        RttSketch { hist: empty(), min: u64::MAX, max: 0 }
    }
}

/// An empty auto-resizing histogram (the parameters are constants the crate accepts).
fn empty() -> Histogram<u64> {
    Histogram::new(SIGFIG).unwrap_or_else(|_| unreachable!("3 significant digits are valid"))
}

impl RttSketch {
    /// Counts one value, ns.
    pub fn record(&mut self, ns: u64) {
        // the histogram grows to any value below 2^62 ns (146 years); a larger one is counted
        // in the last bucket
        if self.hist.record(ns).is_err() {
            self.hist.saturating_record(ns);
        }
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
    }

    /// Adds `other`'s values.
    pub fn merge(&mut self, other: &RttSketch) {
        if other.is_empty() {
            return;
        }
        // both auto-resize: adding grows this one to other's range (were it ever refused, the
        // counts go in bucket by bucket, clamped to the largest trackable value)
        if self.hist.add(&other.hist).is_err() {
            for v in other.hist.iter_recorded() {
                self.hist.saturating_record_n(v.value_iterated_to(), v.count_at_value());
            }
        }
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// Values counted.
    pub fn len(&self) -> u64 {
        self.hist.len()
    }

    /// No values counted?
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The order statistic of 0-based `rank` (< len): the exact minimum or maximum at the ends,
    /// elsewhere the middle of its bucket (within [min, max]).
    fn at_rank(&self, rank: u64) -> u64 {
        if rank == 0 {
            return self.min;
        }
        if rank + 1 >= self.len() {
            return self.max;
        }
        let mut seen = 0u64;
        for v in self.hist.iter_recorded() {
            seen += v.count_at_value();
            if seen > rank {
                return self.hist.median_equivalent(v.value_iterated_to()).clamp(self.min, self.max);
            }
        }
        self.max
    }

    /// The p-th quantile (p in [0, 1]) in seconds, type 7 with the error bound of the module's
    /// doc; NaN when empty.
    pub fn quantile_s(&self, p: f64) -> f64 {
        let n = self.len();
        if n == 0 {
            return f64::NAN;
        }
        let h = (n - 1) as f64 * p.clamp(0.0, 1.0);
        let lo = h.floor() as u64;
        let hi = (lo + 1).min(n - 1);
        let (a, b) = (self.at_rank(lo) as f64 / 1e9, self.at_rank(hi) as f64 / 1e9);
        a + (h - lo as f64) * (b - a)
    }
}

/// RTTs a replication keeps exactly before it counts them in a sketch (8 bytes each: 512 KB).
pub const EXACT_CAP: usize = 1 << 16;

/// A replication's RTTs, ns: exact up to [`EXACT_CAP`], then a sketch.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rtts {
    /// The values, in no particular order, while there is no sketch.
    exact: Vec<u64>,
    sketch: Option<Box<RttSketch>>,
}

impl Rtts {
    /// Room for `n` values (at most the cap) reserved at once: a vector that doubles holds up
    /// to twice what it needs.
    pub fn with_capacity(n: usize) -> Self {
        Rtts { exact: Vec::with_capacity(n.min(EXACT_CAP)), sketch: None }
    }

    /// Keeps one RTT.
    pub fn record(&mut self, ns: u64) {
        if let Some(s) = self.sketch.as_mut() {
            s.record(ns);
        } else if self.exact.len() < EXACT_CAP {
            self.exact.push(ns);
        } else {
            let mut s = Box::<RttSketch>::default();
            self.add_to(&mut s);
            s.record(ns);
            (self.exact, self.sketch) = (Vec::new(), Some(s));
        }
    }

    /// Counts these RTTs in `sketch` too (how a summary gathers replications of which one
    /// outgrew its exact values).
    pub fn add_to(&self, sketch: &mut RttSketch) {
        match self.sketch.as_deref() {
            Some(s) => sketch.merge(s),
            None => self.exact.iter().for_each(|&v| sketch.record(v)),
        }
    }

    /// The exact values (None once they are counted in a sketch).
    pub fn exact(&self) -> Option<&[u64]> {
        self.sketch.is_none().then_some(&self.exact[..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quantile;
    use proptest::prelude::*;

    fn sketch(values: &[u64]) -> RttSketch {
        let mut s = RttSketch::default();
        values.iter().for_each(|&v| s.record(v));
        s
    }

    #[test]
    fn small_values_are_exact() {
        // below 2,048 ns every value has its own bucket: the same quantiles as the exact ones
        let v = [1, 2, 3, 4, 10, 2047];
        let s = sketch(&v);
        let exact: Vec<f64> = v.iter().map(|&x| x as f64 / 1e9).collect();
        for p in [0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0] {
            assert_eq!(s.quantile_s(p), quantile(&exact, p), "p = {p}");
        }
        assert!(RttSketch::default().quantile_s(0.5).is_nan());
    }

    #[test]
    fn a_value_between_the_ends_reads_as_its_buckets_middle() {
        // 1,000,000 ns: 2^19 ≤ x < 2^20, buckets of 2^(19−10) = 512 ns; 1,000,000 = 1953·512 +
        // 64, so its bucket is [999,936, 1,000,447] and its middle 999,936 + 256 = 1,000,192
        let s = sketch(&[10, 1_000_000, 5_000_000_000]);
        assert_eq!(s.at_rank(1), 1_000_192);
        assert_eq!(s.quantile_s(0.5), 1_000_192e-9);
        // the ends are exact: p = 0.25 is halfway between 10 ns and the middle
        assert_eq!((s.at_rank(0), s.at_rank(2)), (10, 5_000_000_000));
        assert_eq!(s.quantile_s(0.25), 10e-9 + 0.5 * (1_000_192e-9 - 10e-9));
    }

    #[test]
    fn merging_adds_the_counts() {
        let (a, b) = ([5_000, 7_000_000, 9], [3_000_000_000, 42]);
        let mut m = sketch(&a);
        m.merge(&sketch(&b));
        let all = sketch(&[a.as_slice(), b.as_slice()].concat());
        assert_eq!(m, all);
        assert_eq!((m.len(), m.at_rank(0), m.at_rank(4)), (5, 9, 3_000_000_000));
        m.merge(&RttSketch::default());
        assert_eq!(m, all);
    }

    #[test]
    fn exact_up_to_the_cap_then_a_sketch() {
        let mut r = Rtts::with_capacity(usize::MAX);
        for v in 0..EXACT_CAP as u64 {
            r.record(v + 1);
        }
        assert_eq!(r.exact().map(<[u64]>::len), Some(EXACT_CAP));
        r.record(7);
        assert!(r.exact().is_none());
        let s = r.sketch.as_deref().expect("past the cap");
        assert_eq!((s.len(), s.at_rank(0), s.at_rank(EXACT_CAP as u64)), (EXACT_CAP as u64 + 1, 1, EXACT_CAP as u64));
        // exact and sketched replications gather into a sketch of all, in either order
        let small = {
            let mut x = Rtts::default();
            x.record(3);
            x
        };
        let (mut a, mut b) = (RttSketch::default(), RttSketch::default());
        small.add_to(&mut a);
        r.add_to(&mut a);
        r.add_to(&mut b);
        small.add_to(&mut b);
        assert_eq!(a, b);
        assert_eq!((a.len(), a.at_rank(0)), (EXACT_CAP as u64 + 2, 1));
        assert_eq!(a.quantile_s(1.0), EXACT_CAP as f64 / 1e9);
    }

    proptest! {
        #[test]
        fn quantiles_within_the_bound_of_the_exact_ones(
            values in prop::collection::vec(1u64..400_000_000_000, 1..300),
            p in 0.0f64..=1.0,
        ) {
            let s = sketch(&values);
            let mut exact: Vec<f64> = values.iter().map(|&x| x as f64 / 1e9).collect();
            exact.sort_by(f64::total_cmp);
            let (q, e) = (s.quantile_s(p), quantile(&exact, p));
            // the bound, plus a few ulps of the conversions to seconds
            prop_assert!((q - e).abs() <= e * RELATIVE_ERROR * (1.0 + 1e-9) + 1e-15, "q {q} exact {e}");
        }
    }
}
