//! A deterministic discrete-event simulator driving the real [`coap_endpoint`] and [`coap_cc`]
//! code over the network models of [`netmodel`].
//!
//! # Contract
//! Virtual time in integer nanoseconds; one event queue ordered by (time, insertion); no
//! globals, no I/O, no threads, no wall clock. Every random draw comes from a ChaCha8 stream
//! derived from the scenario's seed, the replication and the component ([`netmodel::Stream`]),
//! so a scenario and seed give the same result bit for bit, whichever thread runs which
//! replication.
//!
//! * [`engine`]: the one event loop, generic over the network model ([`netmodel::Medium`]), the
//!   hosts' [`engine::Stack`], the [`netmodel::Workload`] and an [`engine::Observer`].
//! * [`udp`], [`tcp_stack`]: the two stacks (CoAP over UDP; CoAP over the [`tcp`] model).
//! * [`Scenario`]: every parameter of the reference bottleneck, TOML in, the `thesis` preset as
//!   defaults; [`run_rep`]: one replication of it → [`RepResult`].
//! * [`mesh`]: the low-power mesh world ([`mesh::MeshScenario`], `env = "lln"`) over
//!   [`netmodel::mesh`], with periodic blocking clients and the mesh literature's metrics.
//! * [`emulation`]: what `coapcc emulate` asks a world for (its model live between real hosts).
//! * [`Summary`]: the statistics over replications ([`runstats::sketch`]: the RTT quantiles in fixed memory).

pub mod capture;
pub mod emulation;
pub mod engine;
pub mod mesh;
pub mod queue;
pub mod record;
pub mod scenario;
mod skip;
pub mod summary;
pub mod tcp;
pub mod tcp_stack;
pub mod text_file;
pub mod udp;
mod world;
pub mod worlds;

pub use netmodel::{loss, WorkloadKind};
pub use record::{ClientRecord, Detail, ExchangeRecord, NetworkReport, RepResult};
pub use scenario::{Scenario, ScenarioError, Transport, TransportKind};
pub use summary::Summary;
pub use world::{addressing, run_rep, run_rep_captured, run_rep_with, Progress, Recorder};
