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
use netmodel::mesh::{CsmaBackoff, NdSpec, Rdc};
use netmodel::RateSteps;
use serde::{Deserialize, Serialize};

use crate::scenario::ScenarioError;

/// A number, or a word that asks for the derived value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Derivable {
    /// This value.
    Value(f64),
    /// `"derived"`.
    Word(String),
}

/// The radio medium: Cooja's UDGM, or its MRM.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Radio {
    /// `udgm` (Cooja's distance loss) or `mrm` (its multi-path ray tracer on open ground).
    pub medium: Medium,
    /// R, m.
    pub tx_range_m: f64,
    /// I, m.
    pub interference_range_m: f64,
    /// Cooja's TX success ratio.
    pub success_ratio_tx: f64,
    /// Cooja's RX success ratio (at distance R).
    pub success_ratio_rx: f64,
    /// Carrier-sense range, m, or `"derived"` (R·81/85).
    pub cca_range_m: Derivable,
    /// Transmit strobe to first symbol, µs.
    pub tx_turnaround_us: u32,
    /// MRM's settings (`medium = "mrm"`; Cooja's defaults when left out).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mrm: Option<MrmKeys>,
}

/// `[radio.mrm]`: Cooja's MRM (netmodel's `mesh::mrm`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MrmKeys {
    /// Output power, dBm, or `"derived"`: the power at which a frame sent `tx_range_m` away is
    /// received with probability `full_reception`.
    pub tx_power_dbm: Derivable,
    /// What "certain reception at tx_range_m" means for the derived power.
    pub full_reception: f64,
    /// Background noise, dBm.
    pub noise_dbm: f64,
    /// Receiver sensitivity, dBm.
    pub rx_sensitivity_dbm: f64,
    /// SNR needed, dB.
    pub snr_threshold_db: f64,
    /// The SNR's variance, dB² (system gain 4, noise 1).
    pub snr_variance_db2: f64,
    /// MRM's capture effect.
    pub capture: bool,
    /// A frame this much weaker does not disturb a reception, dB.
    pub capture_threshold_db: f64,
}

impl Default for MrmKeys {
    fn default() -> Self {
        let c = netmodel::mesh::mrm::MrmSpec::cooja(0.0);
        MrmKeys {
            tx_power_dbm: Derivable::Word("derived".into()),
            full_reception: 0.999,
            noise_dbm: c.noise_dbm,
            rx_sensitivity_dbm: c.rx_sensitivity_dbm,
            snr_threshold_db: c.snr_threshold_db,
            snr_variance_db2: c.snr_variance_db2,
            capture: c.capture,
            capture_threshold_db: c.capture_threshold_db,
        }
    }
}

/// A refused value: the key and the rule it breaks.
fn bad<T>(key: &str, why: &str) -> Result<T, ScenarioError> {
    Err(ScenarioError(format!("scenario: {key} {why}")))
}

impl Radio {
    /// MRM's settings, checked, the TX power derived where asked.
    fn mrm_spec(&self) -> Result<netmodel::mesh::mrm::MrmSpec, ScenarioError> {
        if self.success_ratio_tx != 1.0 || self.success_ratio_rx != 1.0 {
            return bad(
                "radio.success_ratio_tx",
                "and success_ratio_rx are UDGM's: they must be 1 with medium = \"mrm\"",
            );
        }
        let k = self.mrm.clone().unwrap_or_default();
        for (key, v) in [
            ("radio.mrm.noise_dbm", k.noise_dbm),
            ("radio.mrm.rx_sensitivity_dbm", k.rx_sensitivity_dbm),
            ("radio.mrm.snr_threshold_db", k.snr_threshold_db),
        ] {
            if !(-300.0..=300.0).contains(&v) {
                return bad(key, "must be a level between -300 and 300");
            }
        }
        if !(0.0..=100.0).contains(&k.snr_variance_db2) {
            return bad("radio.mrm.snr_variance_db2", "must be in [0, 100]");
        }
        if !(0.0..=100.0).contains(&k.capture_threshold_db) {
            return bad("radio.mrm.capture_threshold_db", "must be in [0, 100]");
        }
        let spec = netmodel::mesh::mrm::MrmSpec {
            tx_power_dbm: 0.0,
            noise_dbm: k.noise_dbm,
            rx_sensitivity_dbm: k.rx_sensitivity_dbm,
            snr_threshold_db: k.snr_threshold_db,
            snr_variance_db2: k.snr_variance_db2,
            capture: k.capture,
            capture_threshold_db: k.capture_threshold_db,
        };
        let tx_power_dbm = match k.tx_power_dbm {
            Derivable::Value(v) if (-100.0..=100.0).contains(&v) => v,
            Derivable::Word(w) if w == "derived" => {
                if !(k.full_reception > 0.5 && k.full_reception < 1.0) {
                    return bad("radio.mrm.full_reception", "must be in (0.5, 1)");
                }
                spec.power_for(k.full_reception, self.tx_range_m)
            }
            _ => return bad("radio.mrm.tx_power_dbm", "must be a power in [-100, 100] dBm or \"derived\""),
        };
        Ok(netmodel::mesh::mrm::MrmSpec { tx_power_dbm, ..spec })
    }
}

impl Default for Radio {
    fn default() -> Self {
        Radio {
            medium: Medium::Udgm,
            tx_range_m: 10.0,
            interference_range_m: 20.0,
            success_ratio_tx: 1.0,
            success_ratio_rx: 1.0,
            cca_range_m: Derivable::Word("derived".into()),
            tx_turnaround_us: 224,
            mrm: None,
        }
    }
}

/// The border router's own MAC settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct BrStack {
    /// Its MAC (else the motes').
    pub mac: Option<Mac>,
    /// Its packet buffers (else the motes').
    pub queuebuf_num: Option<u32>,
    /// Its radio duty cycling, `nullrdc` or `contikimac` (else the motes').
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rdc: Option<RdcName>,
    /// Under ContikiMAC, its radio kept on (the rpl-border-router's `NETSTACK_MAC.off(1)`):
    /// always listening, its unicasts still sent the ContikiMAC way.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub keep_radio_on: bool,
    /// Its route table (else the motes'; RPL start-up only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_routes: Option<u32>,
    /// Its platform, `z1` or `sky` (else the motes').
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mote: Option<Mote>,
}

/// The motes' network stack.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Stack {
    /// `nullmac` or `csma`.
    pub mac: Mac,
    /// `nullrdc` (radio always on) or `contikimac` (every mote, the border router too).
    pub rdc: RdcName,
    /// ContikiMAC: wake-ups per second (a power of two, 1–128; Contiki's default 8).
    #[serde(skip_serializing_if = "is_default_rate")]
    pub channel_check_rate: u32,
    /// ContikiMAC: learn the receivers' wake-up phases (WITH_PHASE_OPTIMIZATION).
    #[serde(skip_serializing_if = "is_true")]
    pub phase_optimization: bool,
    /// CSMA packet buffers (QUEUEBUF_CONF_NUM).
    pub queuebuf_num: u32,
    /// CSMA neighbour queues.
    pub csma_max_neighbor_queues: u32,
    /// CSMA transmissions per packet.
    pub csma_max_transmissions: u32,
    /// CSMA's retry and pacing rules: `timebase` (Contiki 3.0) or `binary_exponential`
    /// (Contiki's master from 2016 on, IEEE 802.15.4's; the NITK GST/GSRTC firmware's).
    #[serde(skip_serializing_if = "is_timebase")]
    pub csma_backoff: CsmaBackoff,
    /// The mesh prefix is Contiki's address context 0.
    pub context_matches_lln_prefix: bool,
    /// RPL's Hop-by-Hop option in every packet.
    pub rpl_hbh_option: bool,
    /// CPU: a received frame, µs.
    pub rx_process_us: u32,
    /// CPU: a packet before the MAC, µs.
    pub tx_prepare_us: u32,
    /// CPU: a server's CoAP processing, µs.
    pub app_us: u32,
    /// Frames the radio holds while the CPU is busy.
    pub rx_fifo_frames: u32,
    /// CPU: a client's CoAP processing of a request it originates, µs (0: none).
    #[serde(skip_serializing_if = "crate::skip::is_zero")]
    pub client_app_us: u32,
    /// The firmware's console: one byte of blocking `printf` output, ns (0: output costs
    /// nothing). MSPSim's UART shifts a byte out in 8·UBR + 1 cycles: 69,125 ns on a Z1 or Sky at
    /// 8 MHz and 115,200 baud (real hardware, with start and stop bits: 86,806 ns).
    #[serde(skip_serializing_if = "crate::skip::is_zero")]
    pub uart_byte_ns: u32,
    /// Bytes a client prints after it sends a request.
    #[serde(skip_serializing_if = "crate::skip::is_zero")]
    pub client_log_request_bytes: u32,
    /// Bytes a client prints when a response arrives, before its next request.
    #[serde(skip_serializing_if = "crate::skip::is_zero")]
    pub client_log_response_bytes: u32,
    /// Routes a mote's table holds (UIP_CONF_MAX_ROUTES; 0: unbounded). Only where RPL forms
    /// its DODAG (`topology.rpl_startup`): the converged tree is a table that holds them all.
    #[serde(skip_serializing_if = "crate::skip::is_zero")]
    pub max_routes: u32,
    /// What a full route table does with a new route: `refuse` it (and the DAO goes no further:
    /// the GST firmware's Contiki) or `evict_lru` (Contiki 3.0).
    #[serde(skip_serializing_if = "is_refuse")]
    pub route_table_full: RouteTableFull,
    /// The motes' platform, whose CPU clock scales the CPU delays: `z1` (8 MHz, the clock the
    /// delays are given at) or `sky` (3.9 MHz).
    #[serde(skip_serializing_if = "is_z1")]
    pub mote: Mote,
    /// MSPSim's CC2420 as Cooja emulates it: a reception cut short by the mote's own
    /// transmission stays in the RX FIFO and the frames after it are lost until the FIFO
    /// overflows (`netmodel::mesh::MeshSpec::partial_frame_stall`); on for the presets of Cooja
    /// studies, off for hardware.
    pub partial_frame_stall: bool,
    /// IPv6 neighbour discovery as Contiki's uIP runs it, with this many entries in every
    /// mote's neighbour table (NBR_TABLE_CONF_MAX_NEIGHBORS: 15 on the Z1); 0: not modelled
    /// (every neighbour resolved). Link-local stars only (`netmodel::mesh::nd`).
    #[serde(skip_serializing_if = "crate::skip::is_zero")]
    pub neighbor_cache: u32,
    /// With `neighbor_cache`: every mote's reachable time, ms, where the firmware's draw is known
    /// (a Z1 build never seeds its generator, so it draws the same in every run); 0: each mote
    /// draws it as `uip_ds6_compute_reachable_time` does, 300–365.5 s.
    #[serde(skip_serializing_if = "crate::skip::is_zero")]
    pub neighbor_reachable_ms: u32,
    /// The border router's overrides.
    pub br: BrStack,
}

fn is_refuse(s: &RouteTableFull) -> bool {
    *s == RouteTableFull::Refuse
}

fn is_z1(s: &Mote) -> bool {
    *s == Mote::Z1
}

impl Default for Stack {
    fn default() -> Self {
        Stack {
            mac: Mac::Nullmac,
            rdc: RdcName::Nullrdc,
            channel_check_rate: 8,
            phase_optimization: false,
            queuebuf_num: 8,
            csma_max_neighbor_queues: 2,
            csma_max_transmissions: 4,
            csma_backoff: CsmaBackoff::BinaryExponential,
            context_matches_lln_prefix: true,
            rpl_hbh_option: true,
            rx_process_us: 2000,
            tx_prepare_us: 1000,
            app_us: 1000,
            rx_fifo_frames: 1,
            client_app_us: 1000,
            uart_byte_ns: 69_125,
            client_log_request_bytes: 28,
            client_log_response_bytes: 39,
            max_routes: 20,
            route_table_full: RouteTableFull::Refuse,
            mote: Mote::Z1,
            partial_frame_stall: true,
            neighbor_cache: 0,
            neighbor_reachable_ms: 0,
            br: BrStack {
                mac: Some(Mac::Csma),
                queuebuf_num: Some(4),
                rdc: Some(RdcName::Contikimac),
                keep_radio_on: true,
                max_routes: Some(48),
                mote: None,
            },
        }
    }
}

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
    /// A named layout's unit (its authors' 10 m) becomes this many metres: every coordinate
    /// × `spacing_m` / 10 (None: as drawn).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spacing_m: Option<f64>,
    /// Each mote is moved from where the layout puts it by a uniform draw in ±`jitter_m` on each
    /// axis, per replication (0: none). The NITK author placed his "10 m" neighbours by hand at
    /// 8.7–10 m; the lattices put them exactly at R, where UDGM's reception is weakest.
    #[serde(skip_serializing_if = "is_zero_m")]
    pub jitter_m: f64,
}

fn is_zero_m(v: &f64) -> bool {
    *v == 0.0
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
            spacing_m: None,
            jitter_m: 0.0,
        }
    }
}

/// `[topology]` as written: every key optional, so that explicit `nodes` do not get the default
/// layout beside them (which [`LlnScenario::nodes`] would refuse as two topologies).
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

/// How far apart messages of `bits` go at `kbps` kbit/s, ns.
fn interval_ns(bits: f64, kbps: f64) -> u64 {
    (bits / (kbps * 1000.0) * 1e9).round() as u64
}

fn is_default_rate(r: &u32) -> bool {
    *r == 8
}

fn is_timebase(s: &CsmaBackoff) -> bool {
    *s == CsmaBackoff::Timebase
}

fn is_true(b: &bool) -> bool {
    *b
}

fn default_area() -> [f64; 4] {
    [0.0, 0.0, 50.0, 50.0]
}
fn default_sample_s() -> f64 {
    1.0
}
fn default_trail_every_s() -> f64 {
    10.0
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

/// What the clients do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LlnWorkload {
    /// `periodic_blocking` (Contiki's example client), `continuous` (the next request as soon
    /// as the previous exchange ends, until the run ends), `burst` (CLOUD's cross-traffic burst,
    /// `[workload.burst]`) or `baseline` (CLOUD's one-to-one runs: one client after the other,
    /// `[workload.baseline]`).
    pub kind: Pattern,
    /// Request interval, ms (when no offered load is given).
    pub interval_ms: f64,
    /// Per-client offered load, kbit/s of the request's first-hop MPDU; 0: use `interval_ms`.
    pub offered_load_kbps: f64,
    /// Uri-Path segments of the GET.
    pub uri_path: Vec<String>,
    /// Token bytes of a request.
    pub token_len: usize,
    /// Payload of the 2.05 response.
    pub response_payload: String,
    /// ETag bytes in the response (0: none).
    pub response_etag_bytes: usize,
    /// The response carries Content-Format text/plain (a zero-length value).
    pub response_content_format: bool,
    /// Each client starts at a uniform offset in [0, this], ms.
    pub start_spread_ms: f64,
    /// The flow of interest: a client's first this-many successful exchanges (its FCT).
    pub fct_successes: u32,
    /// `kind = "burst"`: the groups (CLOUD's burst scenario).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub burst: Option<BurstKeys>,
    /// `kind = "baseline"`: the clients in turn (CLOUD's baseline scenario).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<BaselineKeys>,
    /// `kind = "collect"`: every mote sends to the collector (RTTCOAP's scenarios).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collect: Option<CollectKeys>,
    /// Exchanges a back-to-back client (`continuous`, `burst`, `baseline`) keeps open at once:
    /// a number, or `"nstart"` for the algorithm's NSTART (CLOUD's `cocoa4` clients keep 4).
    #[serde(skip_serializing_if = "Outstanding::is_one")]
    pub outstanding: Outstanding,
    /// Whose random sequence a client's CoAP draws from (its timers' dither, CoCoA++'s backoff
    /// draw): `per_mote` (its own, as Contiki seeds its generator per mote at boot) or `shared`
    /// (every client the same sequence: firmware that seeds `random_rand` with a constant, as the
    /// NITK CoCoA++ tree's clients do, so clients that boot together draw alike).
    #[serde(skip_serializing_if = "ClientRandom::is_per_mote")]
    pub client_random: ClientRandom,
    /// A `periodic_blocking` client's first request goes one interval after it starts, as
    /// Contiki's example client arms its timer before its first request (the star binaries: a
    /// first request 10 s after the client's process starts); false: at its start.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub first_after_interval: bool,
}

/// `workload.client_random`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClientRandom {
    /// Each client its own sequence.
    #[default]
    PerMote,
    /// Every client the same sequence.
    Shared,
}

impl ClientRandom {
    fn is_per_mote(&self) -> bool {
        *self == ClientRandom::PerMote
    }
}

/// `[workload.collect]`: every mote but the border router (the collector) is a source that
/// generates CON messages for the collector at `kbps[k]` kbit/s of CoAP message during step k
/// (each `step_s` long), open loop: they wait in its endpoint (a FIFO) until its congestion
/// control lets them out. A message carries an Observe option of `observe_bytes` and
/// `payload_bytes` of payload, as RTTCOAP's notifications; the collector acknowledges each with
/// a piggybacked 2.04 (its token, no payload).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CollectKeys {
    /// Each source's rate in each step, kbit/s of CoAP message.
    pub kbps: Vec<f64>,
    /// A step's length, s.
    pub step_s: f64,
    /// Payload bytes of a message.
    pub payload_bytes: usize,
    /// The Observe option's value bytes (0 to 3).
    pub observe_bytes: usize,
    /// The time series' window (goodput, Jain's index), s.
    pub window_s: f64,
    /// Background NON notifications, all sources together, kbit/s of CoAP message in each
    /// background step (empty: none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub background_kbps: Vec<f64>,
    /// A background step's length, s.
    pub background_step_s: f64,
}

impl Default for CollectKeys {
    fn default() -> Self {
        CollectKeys {
            kbps: vec![1.0],
            step_s: 400.0,
            payload_bytes: 40,
            observe_bytes: 3,
            window_s: 60.0,
            background_kbps: Vec::new(),
            background_step_s: 400.0,
        }
    }
}

/// `workload.outstanding`: a count, or `"nstart"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Outstanding {
    /// This many.
    Count(u32),
    /// The word `"nstart"`: as many as the algorithm's NSTART.
    Word(String),
}

/// The workload's kind together with the keys only it reads: `kind` and its own table
/// (`[workload.burst]`, `[workload.baseline]`, `[workload.collect]`) as one value. The file keeps
/// them apart (`kind` a word, each kind's keys a table of its name) so that a kind left at its
/// defaults needs no table; [`LlnWorkload::traffic`] joins them, and what runs reads only this.
#[derive(Debug, Clone, PartialEq)]
pub enum Traffic {
    /// Each client sends every `interval_ms` (or at `offered_load_kbps`), one exchange at a time.
    PeriodicBlocking,
    /// Each client sends its next request as soon as the last one ends.
    Continuous,
    /// CLOUD's burst: groups of clients start together.
    Burst(BurstKeys),
    /// CLOUD's baseline: the clients one after the other.
    Baseline(BaselineKeys),
    /// RTTCOAP's collection: every mote sends to the collector.
    Collect(CollectKeys),
}

impl LlnWorkload {
    /// `kind` with its own table (its defaults where the file leaves the table out). A table
    /// of another kind is refused: nothing would read it.
    pub fn traffic(&self) -> Result<Traffic, ScenarioError> {
        let tables = [
            ("burst", self.burst.is_some(), Pattern::Burst),
            ("baseline", self.baseline.is_some(), Pattern::Baseline),
            ("collect", self.collect.is_some(), Pattern::Collect),
        ];
        if let Some((name, ..)) = tables.iter().find(|(_, given, kind)| *given && *kind != self.kind) {
            let kind = serde_json::to_value(self.kind).ok().and_then(|v| v.as_str().map(str::to_string));
            return Err(ScenarioError(format!(
                "scenario: workload.{name} holds the keys of kind = \"{name}\", but kind = \"{}\" (remove the table, or set the kind)",
                kind.unwrap_or_default()
            )));
        }
        Ok(match self.kind {
            Pattern::PeriodicBlocking => Traffic::PeriodicBlocking,
            Pattern::Continuous => Traffic::Continuous,
            Pattern::Burst => Traffic::Burst(self.burst.clone().unwrap_or_default()),
            Pattern::Baseline => Traffic::Baseline(self.baseline.clone().unwrap_or_default()),
            Pattern::Collect => Traffic::Collect(self.collect.clone().unwrap_or_default()),
        })
    }
}

impl Outstanding {
    fn is_one(&self) -> bool {
        *self == Outstanding::Count(1)
    }
}

/// `[workload.baseline]`: the clients run one after the other in id order (each server in
/// turn), each `exchanges` requests back to back, the next `gap_s` after the previous one is
/// done. The run ends when the last is done (`duration_s` is then only a limit).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BaselineKeys {
    /// Requests each client sends.
    pub exchanges: u32,
    /// From one client's end to the next one's start, s.
    pub gap_s: f64,
}

impl Default for BaselineKeys {
    fn default() -> Self {
        BaselineKeys { exchanges: 50, gap_s: 5.0 }
    }
}

/// `[workload.burst]`: `continuous` clients, drawn per replication, run back to back from 0; the
/// others start together at `start_s` and each sends `exchanges` requests back to back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BurstKeys {
    /// Clients in the continuous group.
    pub continuous: u32,
    /// When the burst group starts, s.
    pub start_s: f64,
    /// Requests each burst client sends.
    pub exchanges: u32,
}

impl Default for BurstKeys {
    fn default() -> Self {
        BurstKeys { continuous: 4, start_s: 450.0, exchanges: 50 }
    }
}

impl Default for LlnWorkload {
    fn default() -> Self {
        LlnWorkload {
            kind: Pattern::PeriodicBlocking,
            interval_ms: 100.0,
            offered_load_kbps: 0.0,
            uri_path: vec!["test".into(), "hello".into()],
            token_len: 0,
            response_payload: "Hello World!".into(),
            response_etag_bytes: 1,
            response_content_format: true,
            start_spread_ms: 1000.0,
            fct_successes: 50,
            burst: None,
            baseline: None,
            collect: None,
            outstanding: Outstanding::Count(1),
            client_random: ClientRandom::PerMote,
            first_after_interval: false,
        }
    }
}

/// The CoAP endpoints' behaviour beyond the algorithm.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EndpointKeys {
    /// `at_last_send` (Erbium) or `after_last_timer` (RFC 7252).
    pub give_up: GiveUpAt,
    /// Servers echo RTT-CoAP's transmission counter (Erbium does not; RTTCOAP's collector does).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub echo_transmission_numbers: bool,
}

impl Default for EndpointKeys {
    fn default() -> Self {
        EndpointKeys { give_up: GiveUpAt::AtLastSend, echo_transmission_numbers: false }
    }
}

/// A complete mesh scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LlnScenario {
    /// A name for reports.
    pub name: String,
    /// `lln`.
    pub env: String,
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
    pub workload: LlnWorkload,
    /// Cloud clients behind the border router instead of client motes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cloud: Option<CloudKeys>,
}

impl Default for LlnScenario {
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
        ];
        LlnScenario {
            name: "nitk-gst-cooja".into(),
            env: "lln".into(),
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
            workload: LlnWorkload::default(),
            cloud: None,
        }
    }
}

mod keys;
mod resolve;
pub use keys::{GiveUpAt, Mac, Medium, Mote, Pattern, RdcName, RouteTableFull, Routing};
pub use resolve::Resolved;

#[cfg(test)]
mod tests;
