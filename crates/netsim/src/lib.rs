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
pub mod network;
pub mod queue;
pub mod record;
pub mod scenario;
pub mod summary;
pub mod tcp;
mod tcp_world;
mod world;

pub use record::{ClientRecord, ExchangeRecord, RepResult};
pub use scenario::{Scenario, ScenarioError, Transport, Workload};
pub use summary::Summary;
pub use world::{component_rng, run_rep_udp};

/// Runs replication `rep` of a resolved scenario over its transport. `progress`, if given, is
/// incremented for every finished exchange.
pub fn run_rep(
    scn: &Scenario,
    transport: &Transport,
    rep: u32,
    progress: Option<&std::sync::atomic::AtomicU64>,
) -> RepResult {
    match transport {
        Transport::Udp(cc) => world::run_rep_udp(scn, cc, rep, progress),
        Transport::Tcp(p) => tcp_world::run_rep_tcp(scn, p, rep, progress),
    }
}
