//! What every world's `sim` table shares: a number as the tables print it, and the run's
//! throughput line.

/// `v` with `digits` decimals; `-` for a missing value (NaN).
pub(crate) fn num(v: f64, digits: usize) -> String {
    if v.is_nan() {
        "-".into()
    } else {
        format!("{v:.digits$}")
    }
}

/// The last line of a table: the events of every run (events, wall seconds) and their rate.
pub(crate) fn throughput(runs: impl Iterator<Item = (u64, f64)>) -> String {
    let (events, wall) = runs.fold((0u64, 0.0f64), |(e, w), (de, dw)| (e + de, w + dw));
    format!("{events} events in {wall:.2} s wall ({:.1} M events/s)\n", events as f64 / wall.max(1e-9) / 1e6)
}
