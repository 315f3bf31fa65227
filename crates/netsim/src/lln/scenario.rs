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
use netmodel::mesh::{CloudSpec, CpuSpec, MacSpec, MeshSpec, RadioSpec};
use netmodel::mesh::{CsmaBackoff, Rdc};
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
    pub medium: String,
    /// R, m.
    pub tx_range_m: f64,
    /// I, m.
    pub interference_range_m: f64,
    /// Cooja's TX success ratio.
    pub success_ratio_tx: f64,
    /// Cooja's RX success ratio (at distance R).
    pub success_ratio_rx: f64,
    /// Carrier-sense range, m, or `"derived"` (R·80/85).
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
            medium: "udgm".into(),
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
    pub mac: Option<String>,
    /// Its packet buffers (else the motes').
    pub queuebuf_num: Option<u32>,
    /// Its radio duty cycling, `nullrdc` or `contikimac` (else the motes').
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rdc: Option<String>,
    /// Under ContikiMAC, its radio kept on (the rpl-border-router's `NETSTACK_MAC.off(1)`):
    /// always listening, its unicasts still sent the ContikiMAC way.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub keep_radio_on: bool,
    /// Its route table (else the motes'; RPL start-up only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_routes: Option<u32>,
    /// Its platform, `z1` or `sky` (else the motes').
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mote: Option<String>,
}

/// The motes' network stack.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Stack {
    /// `nullmac` or `csma`.
    pub mac: String,
    /// `nullrdc` (radio always on) or `contikimac` (every mote, the border router too).
    pub rdc: String,
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
    pub csma_backoff: String,
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
    #[serde(skip_serializing_if = "crate::record::is_zero")]
    pub client_app_us: u32,
    /// The firmware's console: one byte of blocking `printf` output, ns (0: output costs
    /// nothing). MSPSim's UART shifts a byte out in 8·UBR + 1 cycles: 69,125 ns on a Z1 or Sky at
    /// 8 MHz and 115,200 baud (real hardware, with start and stop bits: 86,806 ns).
    #[serde(skip_serializing_if = "crate::record::is_zero")]
    pub uart_byte_ns: u32,
    /// Bytes a client prints after it sends a request.
    #[serde(skip_serializing_if = "crate::record::is_zero")]
    pub client_log_request_bytes: u32,
    /// Bytes a client prints when a response arrives, before its next request.
    #[serde(skip_serializing_if = "crate::record::is_zero")]
    pub client_log_response_bytes: u32,
    /// Routes a mote's table holds (UIP_CONF_MAX_ROUTES; 0: unbounded). Only where RPL forms
    /// its DODAG (`topology.rpl_startup`): the converged tree is a table that holds them all.
    #[serde(skip_serializing_if = "crate::record::is_zero")]
    pub max_routes: u32,
    /// What a full route table does with a new route: `refuse` it (and the DAO goes no further:
    /// the GST firmware's Contiki) or `evict_lru` (Contiki 3.0).
    #[serde(skip_serializing_if = "is_refuse")]
    pub route_table_full: String,
    /// The motes' platform, whose CPU clock scales the CPU delays: `z1` (8 MHz, the clock the
    /// delays are given at) or `sky` (3.9 MHz).
    #[serde(skip_serializing_if = "is_z1")]
    pub mote: String,
    /// The border router's overrides.
    pub br: BrStack,
}

fn is_refuse(s: &str) -> bool {
    s == "refuse"
}

fn is_z1(s: &str) -> bool {
    s == "z1"
}

/// A platform's CPU clock as Contiki runs it, Hz.
fn mote_clock_hz(key: &str, mote: &str) -> Result<u32, ScenarioError> {
    match mote {
        "z1" => Ok(netmodel::mesh::CPU_REFERENCE_HZ),
        "sky" => Ok(netmodel::mesh::SKY_CPU_HZ),
        _ => bad(key, "must be \"z1\" or \"sky\""),
    }
}

impl Default for Stack {
    fn default() -> Self {
        Stack {
            mac: "nullmac".into(),
            rdc: "nullrdc".into(),
            channel_check_rate: 8,
            phase_optimization: false,
            queuebuf_num: 8,
            csma_max_neighbor_queues: 2,
            csma_max_transmissions: 4,
            csma_backoff: "binary_exponential".into(),
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
            route_table_full: "refuse".into(),
            mote: "z1".into(),
            br: BrStack {
                mac: Some("csma".into()),
                queuebuf_num: Some(4),
                rdc: Some("contikimac".into()),
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
    pub routing: String,
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
            routing: "rpl_storing_minhop".into(),
            rpl_control: true,
            rpl_startup: true,
            mobility: None,
            positions: None,
            parents: Default::default(),
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
    routing: Option<String>,
    rpl_control: Option<bool>,
    rpl_startup: Option<bool>,
    mobility: Option<MobilityConfig>,
    positions: Option<String>,
    #[serde(default)]
    parents: std::collections::BTreeMap<String, u32>,
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
            mobility: t.mobility,
            positions: t.positions,
            parents: t.parents,
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

fn is_timebase(s: &str) -> bool {
    s == "timebase"
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
    pub kind: String,
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
            kind: "periodic_blocking".into(),
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
        }
    }
}

/// The CoAP endpoints' behaviour beyond the algorithm.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EndpointKeys {
    /// `at_last_send` (Erbium) or `after_last_timer` (RFC 7252).
    pub give_up: String,
    /// Servers echo RTT-CoAP's transmission counter (Erbium does not; RTTCOAP's collector does).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub echo_transmission_numbers: bool,
}

impl Default for EndpointKeys {
    fn default() -> Self {
        EndpointKeys { give_up: "at_last_send".into(), echo_transmission_numbers: false }
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

/// Bytes of a CoAP message with this code, token length, options (in ascending order) and
/// payload, as coap-wire encodes it.
fn encoded_len(code: Code, token_len: usize, options: &[(u16, Vec<u8>)], payload: &[u8]) -> u32 {
    let list: Vec<CoapOption<'_>> =
        options.iter().map(|(number, value)| CoapOption { number: *number, value }).collect();
    let token = [0u8; 8];
    let m = Message {
        ty: MessageType::Con,
        code,
        message_id: 0,
        token: &token[..token_len],
        options: Options::from_list(&list),
        payload,
    };
    m.encoded_len() as u32
}

/// What a resolved mesh scenario runs.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The network.
    pub mesh: MeshSpec,
    /// The algorithm.
    pub cc: CcConfig,
    /// Exchanges a back-to-back client keeps open at once.
    pub outstanding: u32,
    /// `collect`: the sources' arrivals.
    pub open_loop: Option<RateSteps>,
    /// `collect`: each source's background NON notifications.
    pub background: Option<RateSteps>,
    /// When an unanswered request fails.
    pub give_up: GiveUp,
    /// Per client host: its server host.
    pub clients: Vec<(u32, u32)>,
    /// Per client, its request interval, ns.
    pub intervals_ns: Vec<u64>,
    /// Every client's request.
    pub request: Request,
    /// Every server's answer.
    pub response: Response,
    /// The request's CoAP bytes.
    pub request_bytes: u32,
    /// The response's CoAP bytes.
    pub response_bytes: u32,
}

impl LlnScenario {
    /// Reads a TOML mesh scenario over the defaults.
    pub fn from_toml(text: &str) -> Result<Self, ScenarioError> {
        toml::from_str(text).map_err(|e| ScenarioError(format!("scenario: {}", e.to_string().trim_end())))
    }

    /// The algorithm: its defaults, `cc_defaults` where it has the key, then `cc`'s own.
    pub fn cc_config(&self) -> Result<CcConfig, ScenarioError> {
        let not_tcp = "the mesh runs CoAP over UDP (`tcp` is for the wired bottleneck)";
        crate::scenario::cc_with_defaults(&self.cc, &self.cc_defaults, not_tcp)
    }

    /// `topology.parents` as (mote, parent) indices into `nodes`.
    fn pinned_parents(&self, nodes: &[NodeSpec]) -> Result<Vec<(usize, usize)>, ScenarioError> {
        let index = |id: u32| nodes.iter().position(|n| n.id == id);
        let mut pins = Vec::new();
        for (mote, &parent) in &self.topology.parents {
            let key = format!("topology.parents.{mote}");
            let b = mote.parse::<u32>().ok().and_then(index);
            let Some(b) = b else { return bad(&key, "names no mote (a mote id)") };
            let Some(a) = index(parent) else { return bad(&key, &format!("parent {parent} is no mote")) };
            pins.push((b, a));
        }
        Ok(pins)
    }

    /// The motes.
    pub fn nodes(&self) -> Result<Vec<NodeSpec>, ScenarioError> {
        let t = &self.topology;
        let nodes = match (&t.layout, &t.nodes) {
            (Some(name), None) => topology::layout(name).ok_or_else(|| {
                let names: Vec<&str> = topology::LAYOUTS.iter().map(|l| l.0).collect();
                ScenarioError(format!("topology.layout: unknown layout '{name}' (known: {})", names.join(", ")))
            })?,
            (None, Some(_)) if t.spacing_m.is_some() => {
                return Err(ScenarioError(
                    "scenario: topology.spacing_m scales a named layout; explicit nodes are placed as given".into(),
                ))
            }
            (None, Some(nodes)) => nodes.clone(),
            _ => return Err(ScenarioError("topology: give exactly one of `layout` and `nodes`".into())),
        };
        let nodes = match t.spacing_m {
            None => nodes,
            Some(m) if m > 0.0 && m <= 1000.0 => {
                let k = m / 10.0;
                nodes.into_iter().map(|n| NodeSpec { x: n.x * k, y: n.y * k, ..n }).collect()
            }
            Some(_) => return Err(ScenarioError("scenario: topology.spacing_m must be > 0 and at most 1000".into())),
        };
        if !(0.0..=100.0).contains(&t.jitter_m) {
            return Err(ScenarioError("scenario: topology.jitter_m must be in [0, 100]".into()));
        }
        topology::validate(&nodes).map_err(ScenarioError)?;
        Ok(nodes)
    }

    fn mac(&self, name: &str, queuebuf_num: u32) -> Result<MacSpec, ScenarioError> {
        match name {
            "nullmac" => Ok(MacSpec::Nullmac),
            "csma" => Ok(MacSpec::Csma {
                queuebuf_num,
                max_neighbor_queues: self.stack.csma_max_neighbor_queues,
                max_transmissions: self.stack.csma_max_transmissions,
                backoff: match self.stack.csma_backoff.as_str() {
                    "timebase" => CsmaBackoff::Timebase,
                    "binary_exponential" => CsmaBackoff::BinaryExponential,
                    other => {
                        return Err(ScenarioError(format!(
                            "scenario: stack.csma_backoff '{other}' must be \"timebase\" or \"binary_exponential\""
                        )))
                    }
                },
            }),
            other => Err(ScenarioError(format!("stack.mac: '{other}' is not nullmac or csma"))),
        }
    }

    /// The moving motes, if the topology has them.
    fn mobility(&self, nodes: &[NodeSpec]) -> Result<Option<MobilitySpec>, ScenarioError> {
        let t = &self.topology;
        let err = |m: String| Err(ScenarioError(m));
        let source = match (&t.mobility, &t.positions) {
            (None, None) => return Ok(None),
            (Some(_), Some(_)) => return err("topology: give mobility or positions, not both".into()),
            (Some(m), None) => {
                let Some(mut model) = MobilityModel::preset(&m.model) else {
                    return err(format!(
                        "topology.mobility.model: '{}' is not random_waypoint, gauss_markov, manhattan or pursue",
                        m.model
                    ));
                };
                for (k, v) in &m.params {
                    model.set(k, *v).map_err(|e| ScenarioError(format!("topology.{e}")))?;
                }
                model.validate().map_err(|e| ScenarioError(format!("topology.{e}")))?;
                let mobile = nodes.iter().map(|n| n.role == topology::Role::Client).collect();
                MobilitySource::Model { model, mobile }
            }
            (None, Some(path)) => {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| ScenarioError(format!("topology.positions: cannot read {path}: {e}")))?;
                let moves = mobility::parse_positions(&text)
                    .map_err(|e| ScenarioError(format!("topology.positions: {path}: {e}")))?;
                if let Some(mv) = moves.iter().find(|mv| mv.mote as usize >= nodes.len()) {
                    return err(format!(
                        "topology.positions: {path} moves mote index {} but the topology has {} motes (indices 0 to {})",
                        mv.mote,
                        nodes.len(),
                        nodes.len() - 1
                    ));
                }
                MobilitySource::Trace(moves)
            }
        };
        let m = t.mobility.clone();
        let [x_min, y_min, x_max, y_max] = m.as_ref().map_or_else(default_area, |m| m.area);
        let sample_s = m.as_ref().map_or(1.0, |m| m.sample_s);
        let trail_every_s = m.as_ref().map_or(10.0, |m| m.trail_every_s);
        if !(x_min < x_max && y_min < y_max && [x_min, y_min, x_max, y_max].iter().all(|v| v.is_finite())) {
            return err(
                "topology.mobility.area: need [x_min, y_min, x_max, y_max] with x_min < x_max, y_min < y_max".into()
            );
        }
        if !(sample_s > 0.0 && sample_s.is_finite() && trail_every_s > 0.0 && trail_every_s.is_finite()) {
            return err("topology.mobility: sample_s and trail_every_s must be > 0".into());
        }
        Ok(Some(MobilitySpec { area: Area { x_min, y_min, x_max, y_max }, sample_s, trail_every_s, source }))
    }

    /// Checks every value and builds what a replication needs.
    pub fn resolve(&self) -> Result<Resolved, ScenarioError> {
        if self.env != "lln" {
            return bad("env", "must be \"lln\" for a mesh scenario");
        }
        if self.reps == 0 {
            return bad("reps", "must be at least 1");
        }
        if !(self.duration_s > 0.0 && self.duration_s <= 1e7) {
            return bad("duration_s", "must be > 0 and at most 10^7");
        }
        let r = &self.radio;
        if !(r.tx_range_m > 0.0 && r.tx_range_m.is_finite() && r.interference_range_m.is_finite()) {
            return bad("radio.tx_range_m", "must be a finite number > 0");
        }
        for (k, v) in [("radio.success_ratio_tx", r.success_ratio_tx), ("radio.success_ratio_rx", r.success_ratio_rx)] {
            if !(0.0..=1.0).contains(&v) {
                return bad(k, "must be in [0, 1]");
            }
        }
        let mrm = match r.medium.as_str() {
            "udgm" if r.mrm.is_some() => return bad("radio.mrm", "is MRM's: set radio.medium = \"mrm\""),
            "udgm" => None,
            "mrm" => Some(r.mrm_spec()?),
            _ => return bad("radio.medium", "must be \"udgm\" or \"mrm\""),
        };
        let cca = match &r.cca_range_m {
            Derivable::Value(v) if *v >= 0.0 && v.is_finite() => *v,
            Derivable::Word(w) if w == "derived" => match &mrm {
                Some(m) => m.reach_m(netmodel::mesh::mrm::CCA_THRESHOLD_DBM),
                None => RadioSpec::derived_cca_range(r.tx_range_m),
            },
            _ => return bad("radio.cca_range_m", "must be a distance >= 0 or \"derived\""),
        };
        let s = &self.stack;
        let rdc_of = |key: &str, name: &str| match name {
            "nullrdc" => Ok(false),
            "contikimac" => Ok(true),
            _ => Err(ScenarioError(format!("scenario: {key} must be \"nullrdc\" or \"contikimac\""))),
        };
        let motes_cm = rdc_of("stack.rdc", &s.rdc)?;
        let br_cm = match &s.br.rdc {
            Some(r) => rdc_of("stack.br.rdc", r)?,
            None => motes_cm,
        };
        if s.br.keep_radio_on && !br_cm {
            return bad("stack.br.keep_radio_on", "needs the border router's rdc to be \"contikimac\"");
        }
        let contikimac = if motes_cm || br_cm {
            let r = s.channel_check_rate;
            if !(1..=128).contains(&r) || !r.is_power_of_two() {
                return bad("stack.channel_check_rate", "must be a power of two from 1 to 128");
            }
            Some(ContikimacSpec { channel_check_rate: r, phase_optimization: s.phase_optimization })
        } else {
            None
        };
        if s.queuebuf_num == 0 || s.csma_max_neighbor_queues == 0 || s.csma_max_transmissions == 0 {
            return bad("stack.queuebuf_num", "and the CSMA limits must be at least 1");
        }
        if s.rx_fifo_frames == 0 {
            return bad("stack.rx_fifo_frames", "must be at least 1");
        }
        if self.topology.routing != "rpl_storing_minhop" {
            return bad("topology.routing", "must be \"rpl_storing_minhop\"");
        }
        let nodes = self.nodes()?;
        let root = nodes.iter().position(|n| n.role == topology::Role::BorderRouter).unwrap_or(0);
        let mote_mac = self.mac(&s.mac, s.queuebuf_num)?;
        let br_mac = self.mac(s.br.mac.as_deref().unwrap_or(&s.mac), s.br.queuebuf_num.unwrap_or(s.queuebuf_num))?;
        let macs = (0..nodes.len()).map(|i| if i == root { br_mac } else { mote_mac }).collect();
        let rdc = |cm: bool, kept: bool| match (cm, kept) {
            (false, _) => Rdc::Nullrdc,
            (true, false) => Rdc::Contikimac,
            (true, true) => Rdc::ContikimacKeptOn,
        };
        let rdcs = (0..nodes.len())
            .map(|i| if i == root { rdc(br_cm, s.br.keep_radio_on) } else { rdc(motes_cm, false) })
            .collect();
        let mote_hz = mote_clock_hz("stack.mote", &s.mote)?;
        let br_hz = match &s.br.mote {
            Some(m) => mote_clock_hz("stack.br.mote", m)?,
            None => mote_hz,
        };
        let cpu_clocks_hz = (0..nodes.len()).map(|i| if i == root { br_hz } else { mote_hz }).collect();
        let w = &self.workload;
        if !["periodic_blocking", "continuous", "burst", "baseline", "collect"].contains(&w.kind.as_str()) {
            return bad(
                "workload.kind",
                "must be \"periodic_blocking\", \"continuous\", \"burst\", \"baseline\" or \"collect\"",
            );
        }
        let collect = (w.kind == "collect").then(|| w.collect.clone().unwrap_or_default());
        if let Some(c) = &collect {
            if c.kbps.is_empty() || c.kbps.iter().any(|r| !(*r > 0.0 && r.is_finite())) {
                return bad("workload.collect.kbps", "needs one rate > 0 per step");
            }
            if c.background_kbps.iter().any(|r| !(*r > 0.0 && r.is_finite()))
                || !(c.background_step_s > 0.0 && c.background_step_s.is_finite())
            {
                return bad("workload.collect.background_kbps", "needs rates > 0 and background_step_s > 0");
            }
            let positive = |v: f64| v > 0.0 && v.is_finite();
            if !positive(c.step_s) || !positive(c.window_s) || c.observe_bytes > 3 || c.payload_bytes > 1024 {
                return bad(
                    "workload.collect",
                    "needs step_s > 0, window_s > 0, observe_bytes <= 3, payload_bytes <= 1024",
                );
            }
        }
        let outstanding = match &w.outstanding {
            Outstanding::Count(n) if *n >= 1 => *n,
            Outstanding::Word(word) if word == "nstart" => self.cc_config()?.build().nstart().clamp(1, 1 << 16) as u32,
            _ => return bad("workload.outstanding", "must be a number >= 1 or \"nstart\""),
        };
        if let Some(b) = &w.baseline {
            if !(b.gap_s >= 0.0 && b.gap_s.is_finite()) || b.exchanges == 0 {
                return bad("workload.baseline", "needs gap_s >= 0 and exchanges >= 1");
            }
        }
        if let Some(b) = &w.burst {
            if !(b.start_s >= 0.0 && b.start_s.is_finite()) || b.exchanges == 0 {
                return bad("workload.burst", "needs start_s >= 0 and exchanges >= 1");
            }
        }
        if !(w.start_spread_ms >= 0.0 && w.start_spread_ms.is_finite()) {
            return bad("workload.start_spread_ms", "must be a finite number >= 0");
        }
        if w.response_etag_bytes > 8 {
            return bad("workload.response_etag_bytes", "must be at most 8 (RFC 7252's ETag: 1 to 8 bytes; 0: none)");
        }
        if w.token_len > 7 {
            return bad("workload.token_len", "must be at most 7");
        }
        if w.uri_path.iter().any(|p| p.is_empty() || p.len() > 255) {
            return bad("workload.uri_path", "segments must be 1 to 255 bytes");
        }
        let request = match &collect {
            // a notification's size: the Observe option and the payload (RTTCOAP)
            Some(c) => Request {
                code: Code::POST,
                options: vec![(registry::OBSERVE, vec![0x01; c.observe_bytes])],
                payload: vec![0x2a; c.payload_bytes],
                confirmable: true,
            },
            None => Request {
                code: Code::GET,
                options: w.uri_path.iter().map(|p| (registry::URI_PATH, p.as_bytes().to_vec())).collect(),
                payload: Vec::new(),
                confirmable: true,
            },
        };
        let mut response = match collect {
            Some(_) => Response::new(Code::CHANGED, []),
            None => Response::new(Code::CONTENT, w.response_payload.as_bytes()),
        };
        if w.response_etag_bytes > 0 {
            response.options.push((registry::ETAG, vec![0x01; w.response_etag_bytes]));
        }
        if w.response_content_format {
            response.options.push((registry::CONTENT_FORMAT, Vec::new())); // text/plain: a zero-length uint
        }
        let request_bytes = encoded_len(request.code, w.token_len, &request.options, &request.payload);
        let response_bytes = encoded_len(response.code, w.token_len, &response.options, &response.payload);
        let compression =
            Compression { context_matches_lln_prefix: s.context_matches_lln_prefix, rpl_hbh_option: s.rpl_hbh_option };
        // the largest frame: a forwarded packet in the middle of its path
        let middle = HopPlace::local(false, false);
        for (what, bytes) in [("request", request_bytes), ("response", response_bytes)] {
            let f = compression.frames(middle, bytes);
            if f.count() > 1 {
                return Err(ScenarioError(format!(
                    "workload: the {what} ({bytes} CoAP bytes, {} bytes of 6LoWPAN payload on a forwarding hop) \
                     needs RFC 4944 fragmentation (over {MAX_LOWPAN_PAYLOAD} bytes), which the mesh model does not carry yet",
                    f.lowpan_payload()
                )));
            }
        }
        let radio = RadioSpec {
            tx_range_m: r.tx_range_m,
            interference_range_m: r.interference_range_m,
            success_ratio_tx: r.success_ratio_tx,
            success_ratio_rx: r.success_ratio_rx,
            cca_range_m: cca,
            tx_turnaround_us: r.tx_turnaround_us,
            mrm,
        };
        let cpu = CpuSpec {
            rx_process_us: s.rx_process_us,
            tx_prepare_us: s.tx_prepare_us,
            app_us: s.app_us,
            rx_fifo_frames: s.rx_fifo_frames,
            client_app_us: s.client_app_us,
            uart_byte_ns: s.uart_byte_ns,
            client_log_request_bytes: s.client_log_request_bytes,
            client_log_response_bytes: s.client_log_response_bytes,
        };
        let mobility = self.mobility(&nodes)?;
        let (cloud, clients) = match &self.cloud {
            // every mote sends to the collector, the border router
            None if collect.is_some() => {
                let c: Vec<(u32, u32)> =
                    (0..nodes.len() as u32).filter(|&k| k as usize != root).map(|k| (k, root as u32)).collect();
                (None, c)
            }
            None => {
                let servers = topology::assign_servers(&nodes);
                let c: Vec<(u32, u32)> =
                    servers.iter().enumerate().filter_map(|(c, s)| s.map(|s| (c as u32, s as u32))).collect();
                (None, c)
            }
            Some(k) => {
                if !(k.internet_delay_ms >= 0.0 && k.internet_delay_ms.is_finite()) || k.slip_baud == 0 {
                    return bad("cloud", "needs internet_delay_ms >= 0 and slip_baud > 0");
                }
                if w.offered_load_kbps > 0.0 {
                    return bad("workload.offered_load_kbps", "applies to mote clients, not cloud ones");
                }
                // the cloud hosts come after the motes: clients_per_server for each server
                let servers = nodes.iter().enumerate().filter(|(_, n)| n.role == topology::Role::Server);
                let mut c = Vec::new();
                for (s, _) in servers {
                    for _ in 0..k.clients_per_server {
                        c.push(((nodes.len() + c.len()) as u32, s as u32));
                    }
                }
                let spec = CloudSpec {
                    hosts: c.len() as u32,
                    internet_delay_ns: (k.internet_delay_ms * 1e6).round() as u64,
                    slip_baud: k.slip_baud,
                };
                (Some(spec), c)
            }
        };
        let pinned_parents = self.pinned_parents(&nodes)?;
        let mesh = MeshSpec {
            nodes: nodes.clone(),
            macs,
            radio,
            cpu,
            compression,
            mobility,
            cloud,
            contikimac,
            rdcs,
            pinned_parents,
            jitter_m: self.topology.jitter_m,
            cpu_clocks_hz,
            rpl: self.topology.rpl_control.then_some(RplSpec {
                startup: self.topology.rpl_startup,
                max_routes: MaxRoutes {
                    root: self.stack.br.max_routes.unwrap_or(self.stack.max_routes),
                    motes: self.stack.max_routes,
                },
                evict_lru: match self.stack.route_table_full.as_str() {
                    "refuse" => false,
                    "evict_lru" => true,
                    _ => return bad("stack.route_table_full", "must be \"refuse\" or \"evict_lru\""),
                },
                ..RplSpec::default()
            }),
        };
        if self.topology.rpl_startup && !self.topology.rpl_control {
            return bad(
                "topology.rpl_startup",
                "needs topology.rpl_control = true (the DODAG forms from RPL's frames)",
            );
        }
        if self.topology.jitter_m > 0.0 && !mesh.pinned_parents.is_empty() {
            return bad(
                "topology.parents",
                "cannot be combined with topology.jitter_m (a pin is checked against the layout's positions)",
            );
        }
        if self.topology.rpl_startup && (mesh.mobility.is_some() || !mesh.pinned_parents.is_empty()) {
            return bad(
                "topology.rpl_startup",
                "cannot be combined with mobility or pinned parents (RPL picks the parents)",
            );
        }
        // a pin the routes ignored is no candidate (under mobility, candidates change as it runs)
        if mesh.mobility.is_none() && !mesh.pinned_parents.is_empty() {
            let routes = mesh.routes();
            if let Some(&(b, a)) = mesh.pinned_parents.iter().find(|&&(b, a)| routes.parent[b] as usize != a) {
                return bad(
                    &format!("topology.parents.{}", nodes[b].id),
                    &format!("mote {} is not a neighbour of it one hop closer to the border router", nodes[a].id),
                );
            }
        }
        if clients.is_empty() {
            return bad("topology", "has no client with a server");
        }
        // open loop: the interval of each step (8 · message bits / the rate)
        let open_loop = collect.as_ref().map(|c| RateSteps {
            intervals_ns: c.kbps.iter().map(|&r| interval_ns(8.0 * request_bytes as f64, r)).collect(),
            step_ns: ((c.step_s * 1e9).round() as u64).max(1),
        });
        // the background: each source's share of the aggregate rate, as a NON of the same size
        let background = collect.as_ref().filter(|c| !c.background_kbps.is_empty()).map(|c| {
            let n = clients.len() as f64;
            RateSteps {
                intervals_ns: (c.background_kbps.iter())
                    .map(|&r| interval_ns(8.0 * request_bytes as f64 * n, r))
                    .collect(),
                step_ns: ((c.background_step_s * 1e9).round() as u64).max(1),
            }
        });
        let intervals_ns = if ["continuous", "burst", "baseline", "collect"].contains(&w.kind.as_str()) {
            vec![0; clients.len()]
        } else if w.offered_load_kbps > 0.0 {
            // per client: 8 · its request's first-hop MPDU / the load
            let routes = mesh.routes();
            clients
                .iter()
                .map(|&(c, s)| {
                    let nh = routes.next_hop(c as usize, s as usize);
                    let hop = HopPlace::local(true, nh as u32 == s);
                    let mpdu = compression.frames(hop, request_bytes).mpdu(0);
                    interval_ns(8.0 * mpdu as f64, w.offered_load_kbps)
                })
                .collect()
        } else if w.interval_ms > 0.0 && w.interval_ms.is_finite() {
            vec![(w.interval_ms * 1e6).round() as u64; clients.len()]
        } else {
            return bad("workload.interval_ms", "must be > 0 (or give offered_load_kbps)");
        };
        let give_up = GiveUp::parse(&self.endpoint.give_up)
            .ok_or_else(|| ScenarioError("endpoint.give_up: must be at_last_send or after_last_timer".into()))?;
        Ok(Resolved {
            mesh,
            cc: self.cc_config()?,
            outstanding,
            open_loop,
            background,
            give_up,
            clients,
            intervals_ns,
            request,
            response,
            request_bytes,
            response_bytes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coap_sizes_of_the_nitk_messages() {
        // GET /test/hello, no token: 4 + (1 + 4) + (1 + 5) = 15;
        // 2.05, ETag 1 byte, Content-Format empty, "Hello World!": 4 + 2 + 1 + 1 + 12 = 20
        let r = LlnScenario::default().resolve().unwrap();
        assert_eq!((r.request_bytes, r.response_bytes), (15, 20));
    }

    #[test]
    fn offered_load_sets_the_interval_from_the_first_hop_mpdu() {
        // NITK request without the address context: 89-byte MPDU on every first hop;
        // 0.5 kbit/s → 8·89/500 = 1.424 s, 2.5 kbit/s → 0.2848 s
        let mut s = LlnScenario::default();
        s.stack.context_matches_lln_prefix = false;
        s.workload.offered_load_kbps = 0.5;
        assert!(s.resolve().unwrap().intervals_ns.iter().all(|&i| i == 1_424_000_000));
        s.workload.offered_load_kbps = 2.5;
        assert!(s.resolve().unwrap().intervals_ns.iter().all(|&i| i == 284_800_000));
        // with it: 58 bytes to a neighbouring server (8·58/500 = 0.928 s), 66 to a relay (1.056 s)
        s.stack.context_matches_lln_prefix = true;
        s.workload.offered_load_kbps = 0.5;
        let i = s.resolve().unwrap().intervals_ns;
        assert!(i.iter().all(|&i| i == 928_000_000 || i == 1_056_000_000), "{i:?}");
        assert!(i.contains(&928_000_000) && i.contains(&1_056_000_000), "{i:?}");
    }

    #[test]
    fn pinned_parents_reroute_and_bad_pins_are_named() {
        let text = |pins: &str| {
            format!("env = \"lln\"\nname = \"p\"\n[topology]\nlayout = \"grid3x3\"\nrpl_startup = false\nparents = {pins}\n")
        };
        // grid3x3: the server (9) hangs from 6 by default, from 8 when pinned (Cooja's RPL)
        let r = LlnScenario::from_toml(&text("{ 9 = 8 }")).unwrap().resolve().unwrap();
        assert_eq!(r.mesh.routes().parent[8], 7);
        let e = |pins: &str| LlnScenario::from_toml(&text(pins)).unwrap().resolve().unwrap_err().to_string();
        assert!(e("{ 9 = 1 }").contains("topology.parents.9"), "{}", e("{ 9 = 1 }"));
        assert!(e("{ 6 = 8 }").contains("not a neighbour"));
        assert!(e("{ 12 = 1 }").contains("names no mote"));
        assert!(e("{ 9 = 42 }").contains("parent 42 is no mote"));
    }

    #[test]
    fn rpl_startup_needs_control_traffic_and_its_own_parents() {
        let e = |s: LlnScenario| s.resolve().unwrap_err().to_string();
        let mut s = LlnScenario::default();
        s.topology.rpl_startup = true;
        assert!(s.resolve().unwrap().mesh.rpl.is_some_and(|r| r.startup));
        s.topology.rpl_control = false;
        assert!(e(s).contains("topology.rpl_startup"));
        let mut s = LlnScenario::default();
        s.topology.rpl_startup = true;
        s.topology.parents.insert("9".into(), 8);
        assert!(e(s).contains("pinned parents"));
    }

    #[test]
    fn bad_values_are_named() {
        let e = |s: LlnScenario| s.resolve().unwrap_err().to_string();
        let mut s = LlnScenario::default();
        s.stack.rdc = "xmac".into();
        assert!(e(s).contains("stack.rdc"));
        let mut s = LlnScenario::default();
        s.stack.rdc = "contikimac".into();
        s.stack.channel_check_rate = 10;
        assert!(e(s).contains("stack.channel_check_rate"));
        let mut s = LlnScenario::default();
        s.topology.layout = Some("moon".into());
        assert!(e(s).contains("unknown layout 'moon'"));
        let mut s = LlnScenario::default();
        s.workload.response_payload = "x".repeat(60);
        assert!(e(s).contains("fragmentation"));
        let mut s = LlnScenario::default();
        s.workload.response_etag_bytes = 1 << 40; // never allocated: refused first
        assert!(e(s).contains("workload.response_etag_bytes"));
        let s = LlnScenario { cc: "tcp".into(), ..LlnScenario::default() };
        assert!(e(s).contains("UDP"));
        let mut s = LlnScenario::default();
        s.stack.br.rdc = Some("nullrdc".into());
        s.stack.br.keep_radio_on = true;
        assert!(e(s).contains("stack.br.keep_radio_on"));
        let mut s = LlnScenario::default();
        s.stack.br.rdc = Some("lpp".into());
        assert!(e(s).contains("stack.br.rdc"));
        let mut s = LlnScenario::default();
        s.stack.csma_backoff = "aloha".into();
        assert!(e(s).contains("stack.csma_backoff"));
        assert!(LlnScenario::from_toml("colour = 1").unwrap_err().to_string().contains("unknown field `colour`"));
        let mut s = LlnScenario::default();
        s.stack.route_table_full = "fifo".into();
        assert!(e(s).contains("stack.route_table_full"));
        let mut s = LlnScenario::default();
        s.stack.mote = "micaz".into();
        assert!(e(s).contains("stack.mote"));
        let mut s = LlnScenario::default();
        s.stack.br.mote = Some("telosb".into());
        assert!(e(s).contains("stack.br.mote"));
        let mut s = LlnScenario::default();
        s.radio.medium = "ray".into();
        assert!(e(s).contains("radio.medium"));
        let mut s = LlnScenario::default();
        s.radio.mrm = Some(MrmKeys::default());
        assert!(e(s).contains("radio.mrm is MRM's"));
        let mut s = LlnScenario::default();
        s.radio.medium = "mrm".into();
        s.radio.success_ratio_rx = 0.5;
        assert!(e(s).contains("UDGM's"));
        let mut s = LlnScenario::default();
        s.radio.medium = "mrm".into();
        s.radio.mrm = Some(MrmKeys { full_reception: 1.0, ..MrmKeys::default() });
        assert!(e(s).contains("radio.mrm.full_reception"));
    }

    #[test]
    fn the_platform_sets_each_mote_s_cpu_clock() {
        use netmodel::mesh::{CPU_REFERENCE_HZ, SKY_CPU_HZ};
        // the default 3×3 grid: the border router (id 1) first
        let clocks = |s: &LlnScenario| s.resolve().unwrap().mesh.cpu_clocks_hz;
        let mut s = LlnScenario::default();
        assert!(clocks(&s).iter().all(|&c| c == CPU_REFERENCE_HZ));
        s.stack.br.mote = Some("sky".into());
        let c = clocks(&s);
        assert_eq!((c[0], c.len()), (SKY_CPU_HZ, 9));
        assert!(c[1..].iter().all(|&c| c == CPU_REFERENCE_HZ));
        s.stack.mote = "sky".into();
        s.stack.br.mote = None;
        assert!(clocks(&s).iter().all(|&c| c == SKY_CPU_HZ));
    }

    #[test]
    fn spacing_scales_a_layout_and_jitter_is_checked() {
        // grid3x3_ideal's mote 2 is at (−10, 10): at 9 m spacing (−9, 9)
        let s = LlnScenario::from_toml("[topology]\nlayout = \"grid3x3_ideal\"\nspacing_m = 9.0\n").unwrap();
        let n = s.nodes().unwrap();
        assert_eq!((n[1].x, n[1].y), (-9.0, 9.0));
        assert!(s.resolve().is_ok());
        let e = |t: &str| LlnScenario::from_toml(t).unwrap().resolve().unwrap_err().to_string();
        let nodes = "[topology]\nspacing_m = 9.0\nnodes = [{ id = 1, role = \"border_router\", x = 0.0, y = 0.0 }, \
                     { id = 2, role = \"server\", x = 9.0, y = 0.0 }, { id = 3, role = \"client\", x = 18.0, y = 0.0 }]\n";
        assert!(e(nodes).contains("topology.spacing_m scales a named layout"));
        assert!(e("[topology]\nspacing_m = 0.0\n").contains("topology.spacing_m"));
        assert!(e("[topology]\njitter_m = -1.0\n").contains("topology.jitter_m"));
        let pinned = "[topology]\nrpl_startup = false\njitter_m = 1.0\nparents = { 9 = 8 }\n";
        assert!(e(pinned).contains("topology.parents"));
        // a jittered scenario runs, and says so in its scenario
        let s = LlnScenario::from_toml("[topology]\njitter_m = 1.0\n").unwrap();
        assert_eq!(s.resolve().unwrap().mesh.jitter_m, 1.0);
    }

    #[test]
    fn mrm_derives_its_power_from_the_range_and_its_carrier_sense_from_the_power() {
        let s = LlnScenario::from_toml("[radio]\nmedium = \"mrm\"\n").unwrap();
        let r = s.resolve().unwrap().mesh.radio;
        let m = r.mrm.unwrap();
        // p = 0.999 at R = 10 m: −27.046 dBm (netmodel's mrm tests derive it); sensed to 13.98 m
        assert!((m.tx_power_dbm + 27.046).abs() < 2e-3, "{}", m.tx_power_dbm);
        assert!((r.cca_range_m - 13.98).abs() < 0.01, "{}", r.cca_range_m);
        assert!(m.capture);
        // a given power is used as is
        let s = LlnScenario::from_toml("[radio]\nmedium = \"mrm\"\n[radio.mrm]\ntx_power_dbm = 1.5\n").unwrap();
        assert_eq!(s.resolve().unwrap().mesh.radio.mrm.unwrap().tx_power_dbm, 1.5);
    }

    /// A line of three motes, 10 m apart: border router, server, client.
    const LINE: &str = "[topology]\nnodes = [\n\
        { id = 1, role = \"border_router\", x = 0.0, y = 0.0 },\n\
        { id = 2, role = \"server\", x = 10.0, y = 0.0 },\n\
        { id = 3, role = \"client\", x = 20.0, y = 0.0 },\n]\n";

    #[test]
    fn explicit_nodes_need_no_layout_and_a_preset_takes_them() {
        let s = LlnScenario::from_toml(LINE).unwrap();
        assert_eq!(s.topology.layout, None);
        let nodes = s.nodes().unwrap();
        assert_eq!(nodes.len(), 3);
        assert_eq!((nodes[2].role, nodes[2].x), (topology::Role::Client, 20.0));
        assert!(s.resolve().is_ok());
        // nothing given: the default layout; both given: refused
        assert_eq!(LlnScenario::from_toml("").unwrap().topology.layout.as_deref(), Some("grid3x3"));
        let both = format!("{}layout = \"grid6x6\"\n", LINE);
        let e = LlnScenario::from_toml(&both).unwrap().nodes().unwrap_err().to_string();
        assert!(e.contains("exactly one of `layout` and `nodes`"), "{e}");
        // a preset (which names a layout) overlaid with nodes: the nodes replace the layout
        let mut table: toml::Table = super::super::presets::text("nitk-gst-cooja").unwrap().parse().unwrap();
        crate::scenario::overlay(&mut table, LINE.parse().unwrap());
        let s: LlnScenario = table.try_into().unwrap();
        assert_eq!((s.topology.layout.clone(), s.nodes().unwrap().len()), (None, 3));
    }
}
