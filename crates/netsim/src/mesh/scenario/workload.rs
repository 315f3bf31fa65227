//! `[workload]` and `[endpoint]`: what the clients send, and how the endpoints treat it.

use serde::{Deserialize, Serialize};

use crate::scenario::ScenarioError;

use super::keys::{GiveUpAt, Pattern};

/// What the clients do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MeshWorkload {
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
/// defaults needs no table; [`MeshWorkload::traffic`] joins them, and what runs reads only this.
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

impl MeshWorkload {
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

impl Default for MeshWorkload {
    fn default() -> Self {
        MeshWorkload {
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
