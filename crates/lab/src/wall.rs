//! The wall clock, for reporting run times. The only place in the CLI that reads it.

/// Measures elapsed wall time.
#[derive(Debug, Clone, Copy)]
pub struct Stopwatch(std::time::Instant);

impl Stopwatch {
    /// Starts now.
    #[allow(clippy::disallowed_methods)] // the CLI is a driver: it may read the wall clock
    pub fn start() -> Self {
        Stopwatch(std::time::Instant::now())
    }
    /// Seconds since the start.
    pub fn seconds(&self) -> f64 {
        self.0.elapsed().as_secs_f64()
    }
}
