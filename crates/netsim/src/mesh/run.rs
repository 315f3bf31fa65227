//! What the mesh leaves of one replication ([`MeshRun`]): the medium's counters, each client's
//! route, and what the mesh's metrics need. The replication's record ([`crate::RepResult`])
//! carries it; this file depends on no other of the simulator's, so the record does not depend
//! back on the mesh world.

use netmodel::mesh::MeshReport;
use serde::Serialize;

/// One client's route.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Route {
    /// The client's node id.
    pub client: u32,
    /// Its server's node id.
    pub server: u32,
    /// Hops of a request (None: no route).
    pub hops: Option<u32>,
    /// Hops of the response.
    pub hops_back: Option<u32>,
}

/// What the mesh leaves of one replication.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MeshRun {
    /// The medium's counters.
    #[serde(flatten)]
    pub report: MeshReport,
    /// Each client's route.
    pub routes: Vec<Route>,
    /// The request's CoAP bytes (for goodput).
    pub request_bytes: u32,
    /// The run's length, ns.
    pub duration_ns: u64,
    /// CLOUD's burst: each burst client's time from the burst's start to the end of its last
    /// exchange, s (empty without a burst).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub burst_completion_s: Vec<f64>,
    /// CLOUD's burst: how many clients it had.
    #[serde(skip_serializing_if = "crate::skip::is_zero")]
    pub burst_clients: u32,
    /// The time series' window, ns (0: no time series; RTTCOAP's collection has one).
    #[serde(skip_serializing_if = "crate::skip::is_zero")]
    pub window_ns: u64,
    /// CLOUD's baseline: the clients ran one after the other (per-server metrics apply).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub chained: bool,
}
