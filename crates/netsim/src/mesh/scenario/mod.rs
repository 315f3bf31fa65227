//! Mesh scenarios (`env = "lln"`): every parameter of the low-power mesh model, TOML in, with
//! the `nitk-gst-cooja` preset's values as defaults. Every key, its unit and default, and which
//! ones are our choices where the sources are silent: `docs/mesh.md`.

use std::collections::BTreeMap;

use coap_cc::CcConfig;
use coap_endpoint::{GiveUp, Request, Response};
use coap_wire::{registry, CoapOption, Code, Message, MessageType, Options};
use netmodel::mesh::contikimac::ContikimacSpec;
use netmodel::mesh::frame::{Compression, HopPlace, MAX_LOWPAN_PAYLOAD};
use netmodel::mesh::mobility::{self, Area, MobilityModel, MobilitySource, MobilitySpec};
use netmodel::mesh::rpl::{MaxRoutes, RplSpec};
use netmodel::mesh::topology::{self, NodeSpec};
use netmodel::mesh::{CloudSpec, CoojaMoteSpec, CpuSpec, MacSpec, MeshSpec, RadioSpec};
use netmodel::mesh::{NdSpec, Rdc};
use netmodel::RateSteps;
use serde::{Deserialize, Serialize};

use crate::scenario::ScenarioError;

mod keys;
mod placement;
mod radio;
mod resolve;
mod stack;
#[cfg(test)]
mod tests;
mod workload;

pub use keys::{GiveUpAt, Mac, Medium, Mote, Pattern, RdcName, RouteTableFull, Routing};
pub use placement::{CloudKeys, MobilityConfig, Topology};
pub use radio::{Derivable, MrmKeys, Radio};
pub use resolve::Resolved;
pub use stack::{BrStack, Stack};
pub use workload::{
    BaselineKeys, BurstKeys, ClientRandom, CollectKeys, EndpointKeys, MeshWorkload, Outstanding, Traffic,
};

/// The `env` key of a mesh scenario: one value, so another is refused where the file is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum MeshEnv {
    /// `"lln"` (a low-power and lossy network).
    #[default]
    #[serde(rename = "lln")]
    Lln,
}

/// A complete mesh scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MeshScenario {
    /// A name for reports.
    pub name: String,
    /// `lln`: the file format's name for the mesh world (see docs/scenario.md).
    pub env: MeshEnv,
    /// One line on what it is.
    pub description: String,
    /// Set where a preset stands in for a real testbed whose positions and links the sources do
    /// not give (FlockLab, FIT/IoT-LAB): what it approximates. Reports label the run with it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approximation: Option<String>,
    /// Master seed.
    pub seed: u64,
    /// Replications.
    pub reps: u32,
    /// Simulated time of a replication after the routes are formed, s.
    pub duration_s: f64,
    /// The algorithm of a single run, `name[:key=value,...]`.
    pub cc: String,
    /// The algorithms the source compared (what `sim --preset` runs without `--cc`).
    pub algorithms: Vec<String>,
    /// Applied to the algorithm wherever it has the parameter, before those in `cc` (Erbium's
    /// timing on the motes, Betzler's Contiki CoCoA readings).
    pub cc_defaults: BTreeMap<String, String>,
    /// Endpoint behaviour.
    pub endpoint: EndpointKeys,
    /// The medium.
    pub radio: Radio,
    /// The stack.
    pub stack: Stack,
    /// The motes.
    pub topology: Topology,
    /// The clients.
    pub workload: MeshWorkload,
    /// Cloud clients behind the border router instead of client motes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cloud: Option<CloudKeys>,
}

impl Default for MeshScenario {
    fn default() -> Self {
        // Erbium's timing, and the readings of Betzler's Contiki CoCoA (coap-cc's `cocoa` module)
        let mote_stack = [
            ("ack_timeout", "3"),
            ("ack_random_factor", "1.5"),
            ("max_retransmit", "4"),
            ("timer_tick", "0.0078125"),
            ("vbf_low", "2.5"),
            ("vbf_from", "overall"),
            ("weights", "inverted"),
            ("weak_max_retransmissions", "4"),
            ("strong_reset_after", "3"),
            ("blind_max", "32"),
            // Full Backoff and GST as the NITK author's code does them (coap-cc's `full_backoff`)
            ("carry_dither", "true"),
            ("fb2_floor", "ack_timeout"),
            ("gst_count_reset", "never"),
            ("gst_divisor", "u64"),
            ("rto_capped", "false"),
        ];
        MeshScenario {
            name: "nitk-gst-cooja".into(),
            env: MeshEnv::Lln,
            description: String::new(),
            approximation: None,
            seed: 1,
            reps: 5,
            duration_s: 600.0,
            cc: "default".into(),
            algorithms: Vec::new(),
            cc_defaults: mote_stack.into_iter().map(|(k, v)| (k.into(), v.into())).collect(),
            endpoint: EndpointKeys::default(),
            radio: Radio::default(),
            stack: Stack::default(),
            topology: Topology::default(),
            workload: MeshWorkload::default(),
            cloud: None,
        }
    }
}

/// A refused value: the key and the rule it breaks.
fn bad<T>(key: &str, why: &str) -> Result<T, ScenarioError> {
    Err(ScenarioError(format!("scenario: {key} {why}")))
}

/// The mobility area's default, m: x, y from, x, y to.
fn default_area() -> [f64; 4] {
    [0.0, 0.0, 50.0, 50.0]
}
