//! A deterministic discrete-event simulator of the CoAP reference bottleneck
//! (`shared/spec/testbed.md`), driving the real [`coap_endpoint`] and [`coap_cc`] code.
//!
//! # Contract
//! Virtual time in integer nanoseconds; one event queue ordered by (time, insertion); no
//! globals, no I/O, no threads, no wall clock. Every random draw comes from a ChaCha8 stream
//! derived from the scenario's seed, the replication and the component, so a scenario and seed
//! give the same result bit for bit, whichever thread runs which replication.
//!
//! * [`Scenario`]: every testbed parameter, TOML in, the `thesis` preset as defaults.
//! * [`run_rep`]: one replication → [`RepResult`] (per client, per exchange, per link).
//! * [`Summary`]: the statistics over replications.

pub mod link;
pub mod loss;
pub mod queue;
pub mod record;
pub mod scenario;
pub mod summary;
mod world;

pub use record::{ClientRecord, ExchangeRecord, RepResult};
pub use scenario::{Scenario, ScenarioError, Workload};
pub use summary::Summary;
pub use world::{component_rng, run_rep};
