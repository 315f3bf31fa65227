//! `[topology]`, `[mobility]` and `[cloud]`: where the motes are, how they move, and the hosts
//! beyond the border router.

use std::collections::BTreeMap;

use netmodel::mesh::topology::NodeSpec;
use serde::{Deserialize, Serialize};

use super::default_area;
use super::keys::Routing;

/// Where the motes are. `layout` defaults to `grid3x3` only when `nodes` is not given either.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "TopologyFile")]
pub struct Topology {
    /// A named layout (`coapcc presets` lists them), or none when `nodes` is given.
    pub layout: Option<String>,
    /// Explicit motes `{ id, role, x, y }` (ids 1, 2, 3, …).
    pub nodes: Option<Vec<NodeSpec>>,
    /// `rpl_storing_minhop`.
    pub routing: Routing,
    /// RPL's control traffic on the air over those routes: DIO trickle, DAO refreshes and
    /// probing as Contiki's master RPL (2016, the NITK GST firmware's) sends them (false: silent
    /// converged routes).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub rpl_control: bool,
    /// With `rpl_control`: the DODAG forms as the run goes (only the border router has joined at
    /// t = 0; a mote joins through the first DIO it hears, routes appear as DAOs reach the root,
    /// packets without a route are dropped as `no_route`); false: the converged tree from the
    /// start.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub rpl_startup: bool,
    /// With `rpl_startup`: parents as Contiki's MRHOF chooses them on each link's ETX, which
    /// link-stats learns from the MAC's outcomes (ACKs where the motes' frames ask for them),
    /// ranks in MRHOF's units and RPL's loop detection; false: by hop count, the first parent
    /// heard among equals (links without ACKs, whose ETX settles at 1, give the same choice).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub rpl_etx: bool,
    /// The clients move under a model (NITK ch. 6: the border router and servers stay).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mobility: Option<MobilityConfig>,
    /// A Cooja positions file (`moteIndex time x y` per line, mote index = id − 1) whose moves are
    /// replayed; a path relative to the working directory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub positions: Option<String>,
    /// Preferred parents pinned among RPL's candidates (a neighbour one hop closer to the border
    /// router), `{ mote id = parent id }`: the parents a run of Contiki's RPL chose, where the
    /// converged tree's nearest-candidate rule would pick another.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub parents: std::collections::BTreeMap<String, u32>,
    /// When motes boot, `{ mote id = ms }`, where a run gives them (a recorded Cooja run's start
    /// delays); the others draw theirs. With `stack.neighbor_cache` only (the model boots motes
    /// where it runs their neighbour discovery).
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub boots_ms: std::collections::BTreeMap<String, f64>,
    /// When motes not yet in the DODAG send their first DIS, `{ mote id = ms }`, where a run
    /// gives them (Cooja's: a Z1 seeds Contiki's generator with its id, so they are the same in
    /// every seed); the others draw theirs. With `rpl_startup` only.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub rpl_dis_ms: std::collections::BTreeMap<String, f64>,
    /// When the border router takes its prefix and starts the DODAG as its root
    /// (`rpl_set_root`), ms into the run (0: at once); before it, the border router is in no
    /// DODAG, as every other mote. A border router waits for its prefix over SLIP: in the
    /// dataset's Cooja runs the test script feeds it 1 s after the router's first printf, which
    /// a Cooja mote prints at its boot. With `rpl_startup` only.
    #[serde(skip_serializing_if = "is_zero")]
    pub rpl_root_start_ms: f64,
    /// A named layout's unit (its authors' 10 m) becomes this many metres: every coordinate
    /// × `spacing_m` / 10 (None: as drawn).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spacing_m: Option<f64>,
    /// Each mote is moved from where the layout puts it by a uniform draw in ±`jitter_m` on each
    /// axis, per replication (0: none). The NITK author placed his "10 m" neighbours by hand at
    /// 8.7–10 m; the lattices put them exactly at R, where UDGM's reception is weakest.
    #[serde(skip_serializing_if = "is_zero")]
    pub jitter_m: f64,
}

impl Default for Topology {
    fn default() -> Self {
        Topology {
            layout: Some("grid3x3".into()),
            nodes: None,
            routing: Routing::RplStoringMinhop,
            rpl_control: true,
            rpl_startup: true,
            rpl_etx: false,
            mobility: None,
            positions: None,
            parents: Default::default(),
            boots_ms: Default::default(),
            rpl_dis_ms: Default::default(),
            rpl_root_start_ms: 0.0,
            spacing_m: None,
            jitter_m: 0.0,
        }
    }
}

/// `[topology]` as written: every key optional, so that explicit `nodes` do not get the default
/// layout beside them (which [`MeshScenario::nodes`] would refuse as two topologies).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TopologyFile {
    layout: Option<String>,
    nodes: Option<Vec<NodeSpec>>,
    routing: Option<Routing>,
    rpl_control: Option<bool>,
    rpl_startup: Option<bool>,
    rpl_etx: Option<bool>,
    mobility: Option<MobilityConfig>,
    positions: Option<String>,
    #[serde(default)]
    parents: std::collections::BTreeMap<String, u32>,
    #[serde(default)]
    boots_ms: std::collections::BTreeMap<String, f64>,
    #[serde(default)]
    rpl_dis_ms: std::collections::BTreeMap<String, f64>,
    rpl_root_start_ms: Option<f64>,
    spacing_m: Option<f64>,
    jitter_m: Option<f64>,
}

impl From<TopologyFile> for Topology {
    fn from(t: TopologyFile) -> Self {
        let d = Topology::default();
        Topology {
            layout: if t.nodes.is_some() { t.layout } else { t.layout.or(d.layout) },
            nodes: t.nodes,
            routing: t.routing.unwrap_or(d.routing),
            rpl_control: t.rpl_control.unwrap_or(d.rpl_control),
            rpl_startup: t.rpl_startup.unwrap_or(d.rpl_startup),
            rpl_etx: t.rpl_etx.unwrap_or(d.rpl_etx),
            mobility: t.mobility,
            positions: t.positions,
            parents: t.parents,
            boots_ms: t.boots_ms,
            rpl_dis_ms: t.rpl_dis_ms,
            rpl_root_start_ms: t.rpl_root_start_ms.unwrap_or(d.rpl_root_start_ms),
            spacing_m: t.spacing_m,
            jitter_m: t.jitter_m.unwrap_or(d.jitter_m),
        }
    }
}

/// `[topology.mobility]`: a model moving the clients.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MobilityConfig {
    /// `random_waypoint`, `gauss_markov`, `manhattan` or `pursue`.
    pub model: String,
    /// `[x_min, y_min, x_max, y_max]`, m.
    #[serde(default = "default_area")]
    pub area: [f64; 4],
    /// Positions are sampled (and jump) every this many seconds.
    #[serde(default = "default_sample_s")]
    pub sample_s: f64,
    /// The report keeps a trail point every this many seconds.
    #[serde(default = "default_trail_every_s")]
    pub trail_every_s: f64,
    /// Model parameters by name, over the model's preset values (docs/mesh.md, "Mobility").
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, f64>,
}

/// `[cloud]`: the clients are hosts on the Internet side of the border router (CLOUD), not
/// motes: `clients_per_server` for every server mote, in id order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CloudKeys {
    /// Cloud clients for each server mote.
    pub clients_per_server: u32,
    /// One-way Internet delay between the clients and the border router host, ms.
    pub internet_delay_ms: f64,
    /// The border router's serial line (SLIP), baud.
    pub slip_baud: u32,
}

impl Default for CloudKeys {
    fn default() -> Self {
        CloudKeys { clients_per_server: 1, internet_delay_ms: 15.0, slip_baud: 115_200 }
    }
}

fn default_sample_s() -> f64 {
    1.0
}

fn default_trail_every_s() -> f64 {
    10.0
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}
