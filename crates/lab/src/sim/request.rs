//! What a simulation asks for, whichever world runs it.

use std::path::PathBuf;

use netsim::loss::ErrorProfile;
use netsim::{Detail, WorkloadKind};

/// What a simulation asks for: a scenario and every option a caller may leave to it (unset:
/// the scenario's value; no scenario: the `thesis` preset).
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// The scenario: TOML text and where it came from (for errors); `None`: the thesis preset.
    pub text: Option<(String, String)>,
    /// Algorithms, `name[:key=value,...]`, compared on the same scenario and seeds; empty: the
    /// scenario's own (a mesh preset's list, or its `cc`).
    pub cc: Vec<String>,
    /// Clients (the bottleneck).
    pub clients: Option<u32>,
    /// Both bottleneck directions' buffers, bytes.
    pub buffer: Option<u64>,
    /// The bottleneck's workload.
    pub workload: Option<WorkloadKind>,
    /// The bottleneck's link-error profile.
    pub errors: Option<ErrorProfile>,
    /// Replications.
    pub reps: Option<u32>,
    /// Master seed.
    pub seed: Option<u64>,
    /// Worker threads (default: all cores); results do not depend on it.
    pub threads: Option<usize>,
    /// Simulated seconds per replication (a mesh scenario).
    pub duration: Option<f64>,
    /// Keep every exchange's record (for [`super::WorldRuns::write_out`]'s exchanges.csv and rto.csv).
    pub detail: Detail,
    /// Run even if the memory estimate exceeds what the machine has available.
    pub ignore_memory: bool,
    /// Capture replication 0 of each algorithm into this pcap file (`sim --pcap`; [`netsim::capture`]).
    pub pcap: Option<PathBuf>,
}
