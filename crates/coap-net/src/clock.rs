//! The wall clock, mapped onto the sans-IO layers' integer-nanosecond `Instant`.

use coap_cc::Instant;

/// Nanoseconds since the clock was made, as `coap_cc::Instant`; and back to tokio's instants.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    epoch: tokio::time::Instant,
}

impl Clock {
    /// A clock whose epoch is now.
    pub fn new() -> Self {
        Clock { epoch: tokio::time::Instant::now() }
    }
    /// Now.
    pub fn now(&self) -> Instant {
        Instant::from_nanos(u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX))
    }
    /// The tokio instant of `t`.
    pub fn tokio(&self, t: Instant) -> tokio::time::Instant {
        self.epoch + std::time::Duration::from_nanos(t.as_nanos())
    }
}

impl Default for Clock {
    fn default() -> Self {
        Clock::new()
    }
}
