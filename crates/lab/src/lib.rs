//! coapcc's experiment library: everything between the simulator and a user that is not
//! argument parsing. The command line (`coapcc`) and the Python package both call it.
//!
//! * [`sim`]: one scenario, several algorithms, every replication ([`sim::Request`] →
//!   [`sim::Runs`]); the runner, the memory estimate and the CSV tables; [`sim::mesh`] for mesh
//!   scenarios.
//! * [`sweep`]: plans (cartesian products of scenarios), cell ids, shards, the resumable store,
//!   merge; [`plans`]: the publication plans `coapcc reproduce` runs.
//! * [`report`]: the self-contained HTML report of a results directory (`report::mesh` for
//!   mesh cells, `svg` for its plots).
//! * [`league`]: the league: every algorithm on every network of a fixed suite, ranked by regret.
//! * [`tables`]: the result tables as typed columns, for data frames built in memory.
//! * [`algorithms`]: the registry as text and JSON.
//! * [`load`]: a real run (`coapcc load`: clients of the real stack against a server) and its
//!   statistics, by the simulator's definitions; [`uri`]: `coap://` URIs.
//! * [`stop`]: stopping early and keeping what finished; [`progress`]: the progress display on
//!   stderr; [`wall`]: the one place that reads the wall clock.

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
pub fn usage(message: impl Into<String>) -> Box<dyn std::error::Error + Send + Sync> {
    Box::new(Usage(message.into()))
}

pub mod algorithms;
pub mod league;
pub mod load;
pub mod plans;
pub mod progress;
mod published;
pub mod report;
pub mod sim;
pub mod stop;
mod svg;
pub mod sweep;
pub mod tables;
pub mod uri;
pub mod wall;
