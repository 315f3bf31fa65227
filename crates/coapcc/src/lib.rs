//! The `coapcc` command line's commands as a library: what `coapcc` (src/main.rs) dispatches to,
//! and what the Python package (`python/`) calls in-process.

/// A run that finished and reported what it did, but not all it was asked for: a replication
/// cut at `max_time_s`, every exchange failed, or Ctrl-C. Exit status 3 (an error: 1; a usage
/// error: 2).
#[derive(Debug)]
pub struct Incomplete(pub String);

impl std::fmt::Display for Incomplete {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Incomplete {}

/// Options that cannot go together or a value out of range, found after parsing: a usage error,
/// exit status 2 like the parser's own.
#[derive(Debug)]
pub struct Usage(pub String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

/// A [`Usage`] error, boxed.
pub(crate) fn usage(message: impl Into<String>) -> Box<dyn std::error::Error + Send + Sync> {
    Box::new(Usage(message.into()))
}

pub mod algorithms;
mod args;
mod dump;
pub mod experiments;
pub mod net;
mod progress;
pub mod report;
mod report_mesh;
pub mod sim;
mod sim_lln;
pub mod stdout;
pub mod stop;
mod svg;
pub mod sweep;
mod uri;
mod wall;
