//! The run statistics the simulator (`netsim`) and the real stack's load generator (`coapcc
//! load`) share, so that both report RTTs and FCTs by one definition.
//!
//! Percentiles interpolate linearly between the closest ranks (Hyndman & Fan type 7, numpy's
//! default): for sorted values x[0..n), p ∈ [0, 1], h = (n−1)·p, q = x[⌊h⌋] + (h−⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋]).
//! [`sketch`] keeps RTTs in bounded memory and answers the same quantiles within a stated error.

pub mod sketch;

use serde::Serialize;

pub use sketch::{RttSketch, Rtts, EXACT_CAP, RELATIVE_ERROR};

/// The p-th quantile (p in [0, 1]) of sorted values, type 7; NaN for no values.
pub fn quantile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let h = (sorted.len() - 1) as f64 * p.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

/// Jain's fairness index of `xs`: (Σx)² / (n·Σx²); None when there are none or every x is 0.
pub fn jain(xs: &[f64]) -> Option<f64> {
    let total: f64 = xs.iter().sum();
    let sq: f64 = xs.iter().map(|x| x * x).sum();
    (sq > 0.0).then(|| total * total / (xs.len() as f64 * sq))
}

/// min, p10, p25, median, p75, p90, max.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Distribution {
    pub min: f64,
    pub p10: f64,
    pub p25: f64,
    pub p50: f64,
    pub p75: f64,
    pub p90: f64,
    pub max: f64,
}

impl Distribution {
    /// Of unsorted values (NaN everywhere when empty).
    pub fn of(mut v: Vec<f64>) -> Self {
        // under total_cmp only bitwise-equal values compare equal, so an unstable sort gives the
        // same sequence as a stable one, with less work (pattern-defeating quicksort, in place)
        v.sort_unstable_by(f64::total_cmp);
        Self::of_sorted(&v)
    }

    /// Of values sorted in ascending order.
    pub fn of_sorted(v: &[f64]) -> Self {
        Self::from_quantiles(|p| quantile(v, p))
    }

    /// From a quantile function of p in [0, 1].
    pub fn from_quantiles(q: impl Fn(f64) -> f64) -> Self {
        Distribution { min: q(0.0), p10: q(0.10), p25: q(0.25), p50: q(0.5), p75: q(0.75), p90: q(0.9), max: q(1.0) }
    }
}

/// Median, p90 and max.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Tail {
    pub p50: f64,
    pub p90: f64,
    pub max: f64,
}

/// Adds histogram `h` into `into`, bin by bin (`into` grows to `h`'s bins).
pub fn add_histogram(into: &mut Vec<u64>, h: &[u64]) {
    if into.len() < h.len() {
        into.resize(h.len(), 0);
    }
    into.iter_mut().zip(h).for_each(|(a, b)| *a += b);
}

impl Tail {
    /// Of unsorted values (NaN everywhere when empty).
    pub fn of(v: Vec<f64>) -> Self {
        let d = Distribution::of(v);
        Tail { p50: d.p50, p90: d.p90, max: d.max }
    }
}

/// The distribution of several runs' RTTs, s: exact (type 7 over every value) if every run kept
/// its RTTs exactly, else from one sketch of all of them, with its error bound (the second
/// value: [`RELATIVE_ERROR`]).
pub fn distribution<'a>(runs: impl Iterator<Item = &'a Rtts> + Clone) -> (Distribution, Option<f64>) {
    if runs.clone().all(|r| r.exact().is_some()) {
        let mut ns: Vec<u64> = runs.flat_map(|r| r.exact().unwrap_or_default()).copied().collect();
        // sorted as integers (cheaper to compare); nanoseconds to seconds keeps the order
        ns.sort_unstable();
        let s: Vec<f64> = ns.iter().map(|&t| t as f64 / 1e9).collect();
        return (Distribution::of_sorted(&s), None);
    }
    let mut all = RttSketch::default();
    runs.for_each(|r| r.add_to(&mut all));
    (Distribution::from_quantiles(|p| all.quantile_s(p)), Some(RELATIVE_ERROR))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type7_quantiles_by_hand() {
        let v = [1.0, 2.0, 3.0, 4.0, 10.0];
        assert_eq!(quantile(&v, 0.5), 3.0);
        assert_eq!(quantile(&v, 0.25), 2.0); // h = 1
        assert!((quantile(&v, 0.9) - 7.6).abs() < 1e-12); // h = 3.6: 4 + 0.6·6
        assert_eq!(quantile(&v, 1.0), 10.0);
        assert_eq!(quantile(&[5.0], 0.3), 5.0);
        assert!(quantile(&[], 0.5).is_nan());
    }

    #[test]
    fn several_runs_rtts_make_one_distribution() {
        // two runs: 0.25, 6.24 s and 0.3 s; sorted 0.25, 0.3, 6.24: median 0.3, p25 h = 0.5:
        // 0.25 + 0.5·0.05 = 0.275, p90 h = 1.8: 0.3 + 0.8·5.94 = 5.052; exact, so no error bound
        let (mut a, mut b) = (Rtts::default(), Rtts::default());
        a.record(250_000_000);
        a.record(6_240_000_000);
        b.record(300_000_000);
        let (d, err) = distribution([&a, &b].into_iter());
        assert_eq!(err, None);
        assert_eq!((d.min, d.p50, d.max), (0.25, 0.3, 6.24));
        assert!((d.p25 - 0.275).abs() < 1e-12 && (d.p90 - 5.052).abs() < 1e-12, "{d:?}");
        // a run past the cap: from the sketch, with its bound
        let mut big = Rtts::default();
        (0..=EXACT_CAP as u64).for_each(|k| big.record(1_000_000 + k));
        let (_, err) = distribution([&a, &big].into_iter());
        assert_eq!(err, Some(RELATIVE_ERROR));
        let (d, _) = distribution(std::iter::empty());
        assert!(d.p50.is_nan());
    }
}
