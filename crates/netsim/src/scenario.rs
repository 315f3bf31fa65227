//! Scenarios: every parameter of the reference testbed (docs/bottleneck.md; every key in docs/scenario.md) with the
//! `thesis` preset's values as defaults, read from TOML. Unknown keys and impossible values are
//! refused with a message that names them.

use std::collections::BTreeMap;
use std::fmt;

use coap_cc::CcConfig;
use serde::{Deserialize, Serialize};

use netmodel::loss::{ErrorProfile, LossModel};
use netmodel::{BottleneckSpec, HopSpec, LinkSpec, WorkloadKind, WorkloadSpec};

use crate::tcp::TcpParams;

/// A complete scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Scenario {
    /// A name for reports.
    pub name: String,
    /// Master seed; every replication and component derives its own stream from it.
    pub seed: u64,
    /// Replications.
    pub reps: u32,
    /// How the clients reach the server: CoAP over UDP with `cc`, or CoAP over TCP (RFC 8323)
    /// with the TCP model and its `[tcp]` parameters. Written only when it is `tcp`.
    #[serde(skip_serializing_if = "TransportKind::is_udp")]
    pub transport: TransportKind,
    /// The TCP model's parameters (`transport = "tcp"` only): Linux 4.9 as the testbed
    /// configured it, key by key. Resolved: every key, with `tcp`; absent with `udp`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tcp: Option<TcpParams>,
    /// The congestion-control algorithm over UDP, `name[:key=value,...]` (see `coapcc
    /// algorithms`). Not used over TCP, whose own congestion control runs: a resolved TCP
    /// scenario has it empty (and no `cc_defaults`).
    pub cc: String,
    /// Parameters applied to the algorithm wherever it has them, before those given in `cc`
    /// (the testbed: MAX_RETRANSMIT 20, CoCoA aging off).
    pub cc_defaults: BTreeMap<String, String>,
    /// Number of clients.
    pub clients: u32,
    /// Exchanges per client.
    pub exchanges: u32,
    /// Continuous or random clients.
    pub workload: WorkloadKind,
    /// Smallest batch of a random client.
    pub batch_min: u32,
    /// Largest batch of a random client.
    pub batch_max: u32,
    /// Each client starts at a uniform offset in [0, start_spread_ms] (testbed: all at 0).
    pub start_spread_ms: f64,
    /// Link-error profile of both bottleneck directions: none, low, medium, high, or custom.
    pub errors: ErrorProfile,
    /// Clients → router.
    pub uplink: LinkSpec,
    /// Router → clients.
    pub downlink: LinkSpec,
    /// Router ↔ server.
    pub server_hop: HopSpec,
    /// Uri-Path of the request (the testbed's 6-byte option: 5 characters).
    pub path: String,
    /// Token length of every request, bytes (0–7; the testbed's libcoap clients: none; `coapcc
    /// load`'s: 4). Written only when it is not 0.
    #[serde(skip_serializing_if = "crate::skip::is_zero")]
    pub token_bytes: u32,
    /// Bytes of the 2.05 response's payload.
    pub payload_bytes: u32,
    /// IP header bytes added to every CoAP message.
    pub ip_header_bytes: u32,
    /// UDP header bytes added to every CoAP message.
    pub udp_header_bytes: u32,
    /// A replication still running at this virtual time is cut short and marked truncated (a
    /// safety net: no reference run comes near it).
    pub max_time_s: f64,
}

impl Default for Scenario {
    fn default() -> Self {
        Scenario::thesis()
    }
}

/// The `transport` key: which protocol carries CoAP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TransportKind {
    /// CoAP over UDP (RFC 7252), its retransmissions timed by `cc`.
    #[default]
    Udp,
    /// CoAP over TCP (RFC 8323), the simulator's TCP model configured by `[tcp]`.
    Tcp,
}

impl TransportKind {
    /// UDP, the default (left out of a scenario's JSON).
    pub fn is_udp(&self) -> bool {
        *self == TransportKind::Udp
    }
}

/// How the clients talk to the server, resolved: the algorithm's or the TCP model's whole
/// configuration.
#[derive(Debug, Clone, PartialEq)]
pub enum Transport {
    /// CoAP over UDP (RFC 7252) with a congestion-control algorithm.
    Udp(CcConfig),
    /// CoAP over TCP (RFC 8323) with the simulator's TCP model.
    Tcp(crate::tcp::TcpParams),
}

/// The largest CoAP message, bytes (RFC 7252 §4.6: 1,024 bytes of payload and 128 of header).
const MAX_COAP_MESSAGE: u64 = 1152;
/// The largest IPv4 datagram, bytes (its 16-bit total length).
const MAX_IP_DATAGRAM: u64 = 65_535;

/// An impossible or unknown scenario setting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError(pub String);

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for ScenarioError {}

/// `name[:key=value,...]` over the algorithm's defaults and `defaults` (where it has the key).
/// `tcp` is not a congestion-control algorithm: it is refused with `not_tcp`, which says why
/// in this kind of scenario.
pub(crate) fn cc_with_defaults(
    cc: &str,
    defaults: &BTreeMap<String, String>,
    not_tcp: &str,
) -> Result<CcConfig, ScenarioError> {
    let err = |e: coap_cc::SpecError| ScenarioError(format!("cc: {e}"));
    let (name, explicit) = coap_cc::split_spec(cc).map_err(err)?;
    if name == "tcp" {
        return Err(ScenarioError(format!("cc: {not_tcp}")));
    }
    let mut cfg = CcConfig::new(name).map_err(err)?;
    check_cc_defaults(defaults)?;
    // the testbed's values, except those that make this algorithm what it is (default_b's 1-s
    // ACK_TIMEOUT on an Erbium preset's 3 s would make it default)
    let algorithm = cfg.algorithm();
    for (k, v) in defaults {
        if cfg.has_param(k) && !algorithm.is_defined_by(k) {
            cfg.set(k, v).map_err(err)?;
        }
    }
    for (k, v) in explicit {
        cfg.set(k, v).map_err(err)?;
    }
    Ok(cfg)
}

/// `cfg` as a scenario's resolved `cc` text: [`CcConfig::spec_over`] the algorithm under
/// `defaults`, so that read back ([`cc_with_defaults`]) it gives `cfg`. A parameter equal to the
/// algorithm's default that `defaults` would override stays written: `cocoa:aging=true` under the
/// testbed's `aging = false`.
pub(crate) fn resolved_cc_text(cfg: &CcConfig, defaults: &BTreeMap<String, String>) -> String {
    match cc_with_defaults(cfg.name(), defaults, "") {
        Ok(base) => cfg.spec_over(&base),
        Err(_) => cfg.to_string(),
    }
}

/// Refuses a `cc_defaults` key no algorithm has (a typo of `max_retransmit` would otherwise
/// be accepted and never applied), naming the nearest that exists.
fn check_cc_defaults(defaults: &BTreeMap<String, String>) -> Result<(), ScenarioError> {
    if defaults.is_empty() {
        return Ok(());
    }
    let mut known: Vec<&'static str> = Vec::new();
    for a in coap_cc::algorithms() {
        (a.make)(a.name).describe(&mut |p| known.push(p.name));
    }
    for k in defaults.keys() {
        if !known.contains(&k.as_str()) {
            let near =
                known.iter().min_by_key(|n| strsim::levenshtein(k, n)).filter(|n| strsim::levenshtein(k, n) <= 2);
            let hint = near.map(|n| format!(" (did you mean {n}?)")).unwrap_or_default();
            return Err(ScenarioError(format!("scenario: cc_defaults.{k}: no algorithm has this parameter{hint}")));
        }
    }
    Ok(())
}

/// A `--cc` spec's error as the tools say it: an unknown algorithm's message also names `tcp`,
/// the transport choice beside coap-cc's algorithms.
pub fn spec_error(e: &coap_cc::SpecError) -> String {
    match e {
        coap_cc::SpecError::UnknownAlgorithm(_) => format!("{e}; or tcp (CoAP over TCP)"),
        e => e.to_string(),
    }
}

/// Keys that are alternatives within one table: giving one drops the other from the base (a
/// mesh's `[topology]` is a named `layout` or explicit `nodes`).
const ALTERNATIVES: [(&str, &str); 1] = [("layout", "nodes")];

/// Writes `given` over `base`: tables key by key (recursively), other values replaced; a table
/// that names a `model` (a tagged enum: a loss model) replaces the base's whole; a key of
/// `ALTERNATIVES` replaces its alternative.
pub fn overlay(base: &mut toml::Table, given: toml::Table) {
    for (a, b) in ALTERNATIVES {
        for (key, other) in [(a, b), (b, a)] {
            if given.contains_key(key) && !given.contains_key(other) {
                base.remove(other);
            }
        }
    }
    for (k, v) in given {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(g)) if !g.contains_key("model") => overlay(b, g),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

/// The largest buffer a link may have, bytes (2^40): more is no longer a buffer of any router
/// (2^63 had been taken as given).
pub const MAX_BUFFER_BYTES: u64 = 1 << 40;

/// The most clients a bottleneck scenario holds (a million: `scenarios/million.toml`).
pub const MAX_CLIENTS: u32 = 1_000_000;

impl Scenario {
    /// The reference testbed (Järvinen et al., ANRW 2018; the Helsinki thesis, 2019): 30 kbit/s
    /// and 400 ms down, 60 kbit/s and 200 ms up, MTU 296, 2500-byte buffers, 10–20 ms to the
    /// server, 50 continuous clients × 50 exchanges, MAX_RETRANSMIT 20, CoCoA aging off.
    pub fn thesis() -> Self {
        let link =
            |rate_bps, delay_ms| LinkSpec { rate_bps, delay_ms, buffer_bytes: 2500, mtu: 296, loss: LossModel::None };
        Scenario {
            name: "thesis".into(),
            seed: 1,
            reps: 1,
            transport: TransportKind::Udp,
            tcp: None,
            cc: "default".into(),
            cc_defaults: [("max_retransmit", "20"), ("aging", "false")]
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
            clients: 50,
            exchanges: 50,
            workload: WorkloadKind::Continuous,
            batch_min: 1,
            batch_max: 10,
            start_spread_ms: 0.0,
            errors: ErrorProfile::None,
            uplink: link(60_000, 200.0),
            downlink: link(30_000, 400.0),
            server_hop: HopSpec { delay_min_ms: 10.0, delay_max_ms: 20.0 },
            path: "hello".into(),
            token_bytes: 0,
            payload_bytes: 60,
            ip_header_bytes: 20,
            udp_header_bytes: 8,
            max_time_s: 100_000.0,
        }
    }

    /// The bottleneck's part of the scenario.
    pub fn bottleneck(&self) -> BottleneckSpec {
        BottleneckSpec {
            uplink: self.uplink.clone(),
            downlink: self.downlink.clone(),
            server_hop: self.server_hop.clone(),
            ip_header_bytes: self.ip_header_bytes,
        }
    }

    /// The workload's part of the scenario.
    pub fn workload_spec(&self) -> WorkloadSpec {
        WorkloadSpec {
            kind: self.workload,
            exchanges: self.exchanges,
            batch_min: self.batch_min,
            batch_max: self.batch_max,
            start_spread_s: self.start_spread_ms / 1000.0,
        }
    }

    /// Reads a TOML scenario over the thesis defaults, key by key: a table (`[downlink]`,
    /// `[server_hop]`, `[cc_defaults]`) overrides only the keys it writes. A `loss` table that
    /// names its `model` replaces the default one whole (each model has its own keys).
    pub fn from_toml(text: &str) -> Result<Self, ScenarioError> {
        let given: toml::Table =
            toml::from_str(text).map_err(|e| ScenarioError(format!("scenario: {}", e.to_string().trim_end())))?;
        Scenario::from_table(given)
    }

    /// [`Scenario::from_toml`] of a parsed table (a sweep plan's cell).
    pub fn from_table(given: toml::Table) -> Result<Self, ScenarioError> {
        let err = |e: &dyn fmt::Display| ScenarioError(format!("scenario: {}", e.to_string().trim_end()));
        let mut merged = toml::Table::try_from(Scenario::thesis()).map_err(|e| err(&e))?;
        overlay(&mut merged, given);
        toml::Value::Table(merged).try_into().map_err(|e| err(&e))
    }

    /// The algorithm's configuration: its defaults, then `cc_defaults` where it has the
    /// parameter, then the parameters written in `cc`.
    pub fn cc_config(&self) -> Result<CcConfig, ScenarioError> {
        cc_with_defaults(
            &self.cc,
            &self.cc_defaults,
            "`tcp` is a transport, not a congestion-control algorithm: write transport = \"tcp\" \
             (and the TCP model's parameters in a [tcp] table)",
        )
    }

    /// The transport with its whole configuration: `cc`'s algorithm over UDP, or the `[tcp]`
    /// parameters (the MSS derived from the smaller MTU and the IP header) over TCP.
    pub fn transport(&self) -> Result<Transport, ScenarioError> {
        match self.transport {
            TransportKind::Tcp => {
                let mut p = self.tcp.clone().unwrap_or_default();
                p.validate().map_err(ScenarioError)?;
                p.mss = self.uplink.mtu.min(self.downlink.mtu).saturating_sub(self.ip_header_bytes + 20).max(8);
                Ok(Transport::Tcp(p))
            }
            TransportKind::Udp => {
                if self.tcp.is_some() {
                    return Err(ScenarioError(
                        "scenario: a [tcp] table needs transport = \"tcp\" (the clients use UDP)".into(),
                    ));
                }
                self.cc_config().map(Transport::Udp)
            }
        }
    }

    /// What the tools call this scenario's stack in tables and listings: the resolved `cc`
    /// over UDP, `tcp[:key=value,...]` (the parameters that differ from Linux's) over TCP.
    pub fn stack(&self) -> String {
        match (self.transport, &self.tcp) {
            (TransportKind::Tcp, Some(p)) => p.to_spec(),
            (TransportKind::Tcp, None) => "tcp".into(),
            (TransportKind::Udp, _) => self.cc.clone(),
        }
    }

    /// This scenario with the stack a tool's list names (`sim --cc`, `coapcc.sim(cc=[...])`, a
    /// plan's `stack`): `tcp[:key=value,...]` is CoAP over TCP with those parameters; any other
    /// name is `cc` over UDP. An unknown name is refused here, where `tcp` is one of the choices
    /// (so the message names it, [`spec_error`]).
    pub fn with_stack(&self, spec: &str) -> Result<Scenario, ScenarioError> {
        if self.transport == TransportKind::Udp && self.tcp.is_some() {
            return Err(ScenarioError(
                "scenario: a [tcp] table needs transport = \"tcp\" (the clients use UDP)".into(),
            ));
        }
        let mut s = self.clone();
        let (name, _) = coap_cc::split_spec(spec).map_err(|e| ScenarioError(format!("cc: {e}")))?;
        if name == "tcp" {
            let params = spec.split_once(':').map_or("", |p| p.1);
            s.transport = TransportKind::Tcp;
            s.tcp = Some(TcpParams::parse(params).map_err(ScenarioError)?);
        } else {
            CcConfig::new(name).map_err(|e| ScenarioError(format!("cc: {}", spec_error(&e))))?;
            s.transport = TransportKind::Udp;
            s.tcp = None;
            s.cc = spec.to_string();
        }
        Ok(s)
    }

    /// The header sizes against the MTU and each other: every IP packet (each fragment too)
    /// carries `ip_header_bytes` and at least 8 bytes of data (RFC 791's fragment unit); a
    /// TCP segment (`tcp`), 20 header bytes and at least 8 of data; and no IP datagram exceeds 65,535
    /// bytes (IPv4's total length) with the largest CoAP message, 1,152 bytes (RFC 7252 §4.6).
    fn check_header_sizes(&self, tcp: bool) -> Result<(), ScenarioError> {
        let bad = |key: &str, why: String| Err(ScenarioError(format!("scenario: {key} {why}")));
        let (ip, udp) = (u64::from(self.ip_header_bytes), u64::from(self.udp_header_bytes));
        let (mtu_key, mtu) = if self.uplink.mtu <= self.downlink.mtu {
            ("uplink.mtu", u64::from(self.uplink.mtu))
        } else {
            ("downlink.mtu", u64::from(self.downlink.mtu))
        };
        if ip + 8 > mtu {
            return bad(
                "ip_header_bytes",
                format!("({ip}) must be at most {mtu_key} − 8 = {} (a packet must carry 8 bytes of data)", mtu - 8),
            );
        }
        if ip + udp + MAX_COAP_MESSAGE > MAX_IP_DATAGRAM {
            return bad(
                "udp_header_bytes",
                format!(
                    "({udp}) must be at most {} (with ip_header_bytes = {ip} and a {MAX_COAP_MESSAGE}-byte CoAP message, \
                     an IP datagram holds at most {MAX_IP_DATAGRAM} bytes)",
                    MAX_IP_DATAGRAM - MAX_COAP_MESSAGE - ip
                ),
            );
        }
        if tcp && ip + 20 + 8 > mtu {
            return bad(
                "ip_header_bytes",
                format!(
                    "({ip}) must be at most {mtu_key} − 28 = {} over TCP (a segment carries a 20-byte TCP header and 8 bytes of data)",
                    mtu.saturating_sub(28)
                ),
            );
        }
        Ok(())
    }

    /// Checks every value and resolves the derived ones: the error profile into both links' loss
    /// models and `cc` into its full configuration. What [`crate::run_rep`] needs and what reports show.
    pub fn resolve(&self) -> Result<Scenario, ScenarioError> {
        self.resolve_with_transport().map(|(s, _)| s)
    }

    /// [`Scenario::resolve`], with the transport it resolved (the same as the resolved
    /// scenario's [`Scenario::transport`], without reading its `cc` text again).
    pub fn resolve_with_transport(&self) -> Result<(Scenario, Transport), ScenarioError> {
        let bad = |key: &str, why: &str| Err(ScenarioError(format!("scenario: {key} {why}")));
        let mut s = self.clone();
        let transport = self.transport()?;
        let tcp = matches!(transport, Transport::Tcp(_));
        match &transport {
            Transport::Udp(cc) => s.cc = resolved_cc_text(cc, &self.cc_defaults),
            Transport::Tcp(_) => {
                // TCP's own congestion control runs: no algorithm, no algorithm defaults; the
                // table written out whole (its MSS is derived where it runs)
                s.tcp = Some(self.tcp.clone().unwrap_or_default());
                s.cc = String::new();
                s.cc_defaults.clear();
            }
        }
        // the links as written, their loss models too (checked even when an error profile
        // replaces them below: a probability of 2.0 is a mistake whether or not this run uses it)
        for (name, l) in [("uplink", &s.uplink), ("downlink", &s.downlink)] {
            if l.rate_bps == 0 {
                return bad(&format!("{name}.rate_bps"), "must be > 0");
            }
            if !(l.delay_ms >= 0.0 && l.delay_ms.is_finite()) {
                return bad(&format!("{name}.delay_ms"), "must be a finite number >= 0");
            }
            if l.mtu < 68 {
                return bad(&format!("{name}.mtu"), "must be at least 68 (the IPv4 minimum)");
            }
            if l.buffer_bytes > MAX_BUFFER_BYTES {
                return bad(
                    &format!("{name}.buffer_bytes"),
                    &format!(
                        "({}) is more than 2^40 bytes; an unbounded buffer is 1,410,000 bytes (`infinite`, the reference testbed's)",
                        l.buffer_bytes
                    ),
                );
            }
            if l.buffer_bytes < l.mtu as u64 {
                return bad(
                    &format!("{name}.buffer_bytes"),
                    &format!("({}) is smaller than one packet of the MTU ({})", l.buffer_bytes, l.mtu),
                );
            }
            if let Err(field) = l.loss.validate() {
                return bad(&format!("{name}.loss.{field}"), "must be a probability in [0, 1]");
            }
        }
        if let Some(model) = self.errors.model() {
            // a link's own loss table is read only under errors = "custom": refused rather
            // than silently replaced (a resolved scenario's tables, the profile's, pass)
            for (name, l) in [("uplink", &s.uplink), ("downlink", &s.downlink)] {
                if l.loss != LossModel::None && l.loss != model {
                    return bad(
                        &format!("{name}.loss"),
                        &format!(
                            "applies only with errors = \"custom\"; errors = \"{}\" gives both links its own model",
                            self.errors.name()
                        ),
                    );
                }
            }
            s.uplink.loss = model;
            s.downlink.loss = model;
        }
        let h = &s.server_hop;
        if !(h.delay_min_ms >= 0.0 && h.delay_min_ms <= h.delay_max_ms && h.delay_max_ms.is_finite()) {
            return bad("server_hop.delay_min_ms", "must be >= 0 and <= server_hop.delay_max_ms");
        }
        if s.clients == 0 || s.clients > MAX_CLIENTS {
            return bad("clients", &format!("must be 1 to {MAX_CLIENTS}"));
        }
        if s.exchanges == 0 {
            return bad("exchanges", "must be at least 1");
        }
        if s.reps == 0 {
            return bad("reps", "must be at least 1");
        }
        if s.batch_min == 0 || s.batch_min > s.batch_max {
            return bad("batch_min", "must be >= 1 and <= batch_max");
        }
        if !(s.start_spread_ms >= 0.0 && s.start_spread_ms.is_finite()) {
            return bad("start_spread_ms", "must be a finite number >= 0");
        }
        if s.path.is_empty() || s.path.len() > 255 {
            return bad("path", "must be 1 to 255 bytes");
        }
        if !(s.max_time_s > 0.0 && s.max_time_s.is_finite()) {
            return bad("max_time_s", "must be a finite number > 0");
        }
        if s.token_bytes > 7 {
            return bad("token_bytes", "must be at most 7 (one byte is kept for token marking)");
        }
        if s.payload_bytes > 1024 {
            return bad("payload_bytes", "must be at most 1024 (RFC 7252's 1152-byte messages)");
        }
        s.check_header_sizes(tcp)?;
        Ok((s, transport))
    }
}

/// A value as scenario files spell it: an enum of unit variants serialised as its one JSON string
/// (`ErrorProfile::Medium` → `medium`); `?` for anything else.
pub fn spelled<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        _ => "?".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The transport resolving hands back is the one the resolved scenario reads from its text:
    /// over UDP with the testbed's defaults and parameters given, and over TCP.
    #[test]
    fn a_resolved_cc_reads_back_as_itself_under_the_defaults() {
        // the testbed's cc_defaults: max_retransmit 20, CoCoA's aging off. `aging=true` is CoCoA's
        // own default, so the algorithm's text leaves it out; read back, the defaults would
        // turn it off again: it is written out
        let s = Scenario::thesis().with_stack("cocoa:aging=true").unwrap().resolve().unwrap();
        assert_eq!(s.cc, "cocoa:max_retransmit=20,aging=true");
        let s = Scenario::thesis().with_stack("cocoa").unwrap().resolve().unwrap();
        assert_eq!(s.cc, "cocoa:max_retransmit=20,aging=false");
        // max_retransmit=4 is every algorithm's default: kept against the testbed's 20
        let s = Scenario::thesis().with_stack("default:max_retransmit=4").unwrap().resolve().unwrap();
        assert_eq!(s.cc, "default:max_retransmit=4");
        assert_eq!(s.cc_config().unwrap().max_retransmit(), Some(4));
    }

    #[test]
    fn the_resolved_transport_is_the_resolved_scenarios() {
        for stack in ["default", "cocoa:aging=true", "fasor:max_retransmit=7", "tcp", "tcp:initial_rto=2,tlp=linux_6"] {
            let (s, t) = Scenario::thesis().with_stack(stack).unwrap().resolve_with_transport().unwrap();
            assert_eq!(t, s.transport().unwrap(), "{stack}");
        }
    }

    #[test]
    fn a_table_overrides_only_the_keys_it_writes() {
        let s = Scenario::from_toml("[downlink]\ndelay_ms = 100.0\n[cc_defaults]\naging = \"true\"\n").unwrap();
        let t = Scenario::thesis();
        assert_eq!(s.downlink, LinkSpec { delay_ms: 100.0, ..t.downlink.clone() });
        assert_eq!(s.uplink, t.uplink);
        // cc_defaults merged: the testbed's MAX_RETRANSMIT 20 stays, aging is overridden
        assert_eq!(s.cc_defaults.get("max_retransmit").map(String::as_str), Some("20"));
        assert_eq!(s.cc_defaults.get("aging").map(String::as_str), Some("true"));
        // a loss table naming its model replaces the default's
        let s = Scenario::from_toml("[uplink.loss]\nmodel = \"bernoulli\"\np = 0.1\n").unwrap();
        assert_eq!(s.uplink.loss, LossModel::Bernoulli { p: 0.1 });
        assert_eq!(s.uplink.rate_bps, t.uplink.rate_bps);
        // typos are still refused, naming the table
        let e = Scenario::from_toml("[uplink]\nmtuu = 3\n").unwrap_err().to_string();
        assert!(e.contains("unknown field `mtuu`") && e.contains("uplink"), "{e}");
    }

    #[test]
    fn a_links_loss_probability_is_checked_whatever_the_error_profile() {
        for errors in ["none", "custom", "low"] {
            let text = format!("errors = \"{errors}\"\n[uplink.loss]\nmodel = \"bernoulli\"\np = 2.0\n");
            let e = Scenario::from_toml(&text).unwrap().resolve().unwrap_err().to_string();
            assert!(e.contains("uplink.loss.p must be a probability in [0, 1]"), "{errors}: {e}");
        }
        let custom = "errors = \"custom\"\n[uplink.loss]\nmodel = \"bernoulli\"\np = 1.0\n";
        assert!(Scenario::from_toml(custom).unwrap().resolve().is_ok());
    }

    #[test]
    fn header_sizes_are_checked_against_the_mtu_and_each_other() {
        let e = |text: &str| Scenario::from_toml(text).unwrap().resolve().unwrap_err().to_string();
        // the MTU is 296 both ways: 288 bytes of IP header leave 8 of data, 289 none
        assert!(Scenario::from_toml("ip_header_bytes = 288").unwrap().resolve().is_ok());
        let m = e("ip_header_bytes = 289");
        assert!(m.contains("ip_header_bytes (289) must be at most uplink.mtu − 8 = 288"), "{m}");
        let m = e("ip_header_bytes = 4294967295");
        assert!(m.contains("ip_header_bytes"), "{m}");
        assert!(Scenario::from_toml("ip_header_bytes = 92\n[downlink]\nmtu = 100").unwrap().resolve().is_ok());
        assert!(e("ip_header_bytes = 93\n[downlink]\nmtu = 100").contains("downlink.mtu − 8 = 92"));
        // 65,535 − 1,152 − 20 = 64,363
        assert!(Scenario::from_toml("udp_header_bytes = 64363").unwrap().resolve().is_ok());
        let m = e("udp_header_bytes = 64364");
        assert!(m.contains("udp_header_bytes (64364) must be at most 64363"), "{m}");
        assert!(e("udp_header_bytes = 4294967200").contains("udp_header_bytes"));
        assert!(e("token_bytes = 8").contains("token_bytes must be at most 7"));
        // over TCP a segment needs 20 + 8 bytes besides the IP header: 296 − 28 = 268
        assert!(Scenario::from_toml("transport = \"tcp\"\nip_header_bytes = 268").unwrap().resolve().is_ok());
        assert!(e("transport = \"tcp\"\nip_header_bytes = 269").contains("uplink.mtu − 28 = 268 over TCP"));
    }

    #[test]
    fn thesis_defaults_resolve() {
        let s = Scenario::thesis().resolve().unwrap();
        assert_eq!(s.cc, "default:max_retransmit=20");
        let s = Scenario { cc: "cocoa".into(), ..Scenario::thesis() }.resolve().unwrap();
        assert_eq!(s.cc, "cocoa:max_retransmit=20,aging=false");
        // explicit parameters win over cc_defaults, and the text keeps them where the defaults
        // would win when it is read back (4 is FASOR's own MAX_RETRANSMIT, 20 the testbed's)
        let s = Scenario { cc: "fasor:max_retransmit=4".into(), ..Scenario::thesis() }.resolve().unwrap();
        assert_eq!(s.cc, "fasor:max_retransmit=4");
        let s = Scenario { errors: ErrorProfile::Medium, ..Scenario::thesis() }.resolve().unwrap();
        assert_eq!(s.downlink.loss, ErrorProfile::Medium.model().unwrap());
    }

    #[test]
    fn a_links_loss_table_beside_a_profile_and_a_tcp_table_over_udp_are_refused() {
        // a loss table is read only under errors = "custom": with "none" it had been dropped
        let s = Scenario::from_toml("[uplink.loss]\nmodel = \"bernoulli\"\np = 0.5\n").unwrap();
        let e = s.resolve().unwrap_err().to_string();
        assert_eq!(
            e,
            "scenario: uplink.loss applies only with errors = \"custom\"; errors = \"none\" gives both links its own model"
        );
        let custom =
            Scenario::from_toml("errors = \"custom\"\n[uplink.loss]\nmodel = \"bernoulli\"\np = 0.5\n").unwrap();
        assert_eq!(custom.resolve().unwrap().uplink.loss, LossModel::Bernoulli { p: 0.5 });
        // a resolved scenario (the profile's model written into both links) resolves again
        let low = Scenario { errors: ErrorProfile::Low, ..Scenario::thesis() }.resolve().unwrap();
        assert_eq!(low.resolve().unwrap().downlink.loss, LossModel::Bernoulli { p: 0.02 });
        // a [tcp] table over UDP, also when a tool names the stack (sim --cc)
        let s = Scenario::from_toml("[tcp]\nsack = false\n").unwrap();
        for e in [s.resolve().unwrap_err(), s.with_stack("cocoa").unwrap_err()] {
            assert_eq!(e.to_string(), "scenario: a [tcp] table needs transport = \"tcp\" (the clients use UDP)");
        }
    }

    #[test]
    fn cc_defaults_leave_a_variants_defining_values_and_refuse_unknown_keys() {
        // an Erbium testbed's ACK_TIMEOUT of 3 s: default takes it, default_b keeps its 1 s
        // (it had become default's twin), unless its own cc says otherwise
        let mut s = Scenario::thesis();
        s.cc_defaults.insert("ack_timeout".into(), "3".into());
        let cc = |s: &Scenario, cc: &str| Scenario { cc: cc.into(), ..s.clone() }.resolve().unwrap().cc;
        assert_eq!(cc(&s, "default"), "default:ack_timeout=3,max_retransmit=20");
        assert_eq!(cc(&s, "default_b"), "default_b:max_retransmit=20");
        assert_eq!(cc(&s, "default_b:ack_timeout=3"), "default_b:ack_timeout=3,max_retransmit=20");
        let mut s = Scenario::thesis();
        s.cc_defaults.insert("weak_max_retransmissions".into(), "2".into());
        assert_eq!(cc(&s, "cocoa_strong"), "cocoa_strong:max_retransmit=20,aging=false");
        // a typo is named, with the key it may have meant
        let mut s = Scenario::thesis();
        s.cc_defaults.insert("max_retransmt".into(), "4".into());
        assert_eq!(
            s.resolve().unwrap_err().to_string(),
            "scenario: cc_defaults.max_retransmt: no algorithm has this parameter (did you mean max_retransmit?)"
        );
    }

    #[test]
    fn toml_overrides_and_rejections() {
        let s = Scenario::from_toml("clients = 10\nworkload = \"random\"\n[downlink]\nrate_bps = 1000\ndelay_ms = 1\nbuffer_bytes = 3000\nmtu = 296\nloss = { model = \"none\" }\n").unwrap();
        assert_eq!(
            (s.clients, s.workload, s.downlink.rate_bps, s.uplink.rate_bps),
            (10, WorkloadKind::Random, 1000, 60_000)
        );
        let e = Scenario::from_toml("client = 10").unwrap_err().to_string();
        assert!(e.contains("unknown field `client`"), "{e}");
        let e = Scenario::from_toml("clients = -1").unwrap_err().to_string();
        assert!(e.contains("clients"), "{e}");
        let mut s = Scenario::thesis();
        s.downlink.rate_bps = 0;
        assert_eq!(s.resolve().unwrap_err().to_string(), "scenario: downlink.rate_bps must be > 0");
        let mut s = Scenario::thesis();
        s.uplink.buffer_bytes = 100;
        assert!(s
            .resolve()
            .unwrap_err()
            .to_string()
            .starts_with("scenario: uplink.buffer_bytes (100) is smaller than one packet"));
        let mut s = Scenario::thesis();
        s.downlink.buffer_bytes = 1 << 63;
        assert!(s
            .resolve()
            .unwrap_err()
            .to_string()
            .contains("downlink.buffer_bytes (9223372036854775808) is more than 2^40"));
        s.downlink.buffer_bytes = 1 << 40;
        assert!(s.resolve().is_ok());
        let s = Scenario { cc: "fasor:k=x".into(), ..Scenario::thesis() };
        assert!(s.resolve().unwrap_err().to_string().starts_with("cc: fasor: bad value 'x' for k"));
    }

    #[test]
    fn the_transport_is_its_own_key_and_cc_names_only_an_algorithm() {
        // TCP: its [tcp] table over Linux's defaults; no algorithm, no algorithm defaults
        let s = Scenario::from_toml("transport = \"tcp\"\ncc = \"cocoa\"\n[tcp]\ninitial_rto = 2.0\n").unwrap();
        let r = s.resolve().unwrap();
        assert_eq!((r.transport, r.cc.as_str(), r.cc_defaults.len()), (TransportKind::Tcp, "", 0));
        assert_eq!(r.tcp.as_ref().map(|p| p.initial_rto), Some(2.0));
        assert_eq!(r.stack(), "tcp:initial_rto=2");
        // the MSS comes from the smaller MTU less the IP and TCP headers: 296 − 20 − 20
        assert!(matches!(r.transport(), Ok(Transport::Tcp(p)) if p.mss == 256));
        // the resolved scenario reads back as itself
        let back: Scenario = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
        assert_eq!(back.resolve().unwrap(), r);
        // a UDP scenario's JSON has neither key (it is the default)
        let udp = serde_json::to_value(Scenario::thesis().resolve().unwrap()).unwrap();
        assert!(udp.get("transport").is_none() && udp.get("tcp").is_none(), "{udp}");
        // tcp is not an algorithm: the error says where it goes
        let e = Scenario { cc: "tcp".into(), ..Scenario::thesis() }.resolve().unwrap_err().to_string();
        assert!(e.contains("write transport = \"tcp\""), "{e}");
        let e = Scenario::from_toml("[tcp]\nsack = false\n").unwrap().resolve().unwrap_err().to_string();
        assert!(e.contains("a [tcp] table needs transport = \"tcp\""), "{e}");
        let e = Scenario::from_toml("transport = \"tcp\"\n[tcp]\nfoo = 1\n").unwrap_err().to_string();
        assert!(e.contains("unknown field `foo`"), "{e}");
        let e = Scenario::from_toml("transport = \"tcp\"\n[tcp]\nrto = \"bsd\"\n").unwrap_err().to_string();
        assert!(e.contains("linux") && e.contains("rfc6298"), "{e}");
        let e = Scenario::from_toml("transport = \"tcp\"\n[tcp]\nmin_rto = 0.0\n").unwrap().resolve().unwrap_err();
        assert!(e.to_string().contains("0 < min_rto"), "{e}");
        let e = Scenario::from_toml("transport = \"quic\"").unwrap_err().to_string();
        assert!(e.contains("udp") && e.contains("tcp"), "{e}");
        // a tool's list names TCP as `tcp[:key=value,...]`
        let s = Scenario::thesis().with_stack("tcp:sack=false").unwrap().resolve().unwrap();
        assert_eq!((s.transport, s.stack().as_str()), (TransportKind::Tcp, "tcp:sack=false"));
        let s = s.with_stack("cocoa").unwrap();
        assert_eq!((s.transport, s.tcp.is_none(), s.cc.as_str()), (TransportKind::Udp, true, "cocoa"));
        let e = Scenario::thesis().with_stack("tcp:foo=1").unwrap_err().to_string();
        assert!(e.contains("tcp has no parameter 'foo'"), "{e}");
    }
}

#[cfg(test)]
mod file_tests {
    use super::*;

    #[test]
    fn the_example_file_is_the_preset() {
        let text = include_str!("../../../scenarios/thesis.toml");
        assert_eq!(Scenario::from_toml(text).unwrap(), Scenario::thesis());
        // and it spells out every key itself (read on its own, not over the preset), the
        // transport too, which the preset's serialisation leaves out as the default
        let file: toml::Table = toml::from_str(text).unwrap();
        let mut preset = toml::Table::try_from(Scenario::thesis()).unwrap();
        preset.insert("transport".into(), "udp".into());
        assert_eq!(file, preset);
    }

    /// The commented-out [tcp] table the file spells out is the TCP model's defaults, every
    /// parameter named.
    #[test]
    fn the_example_files_tcp_table_is_the_default() {
        let text = include_str!("../../../scenarios/thesis.toml");
        let block: String = text
            .lines()
            .skip_while(|l| *l != "# [tcp]")
            .filter_map(|l| l.strip_prefix("# "))
            .map(|l| format!("{l}\n"))
            .collect();
        let table: toml::Table = toml::from_str(&block).unwrap();
        let tcp = table["tcp"].as_table().unwrap();
        let p: crate::tcp::TcpParams = tcp.clone().try_into().unwrap();
        assert_eq!(p, crate::tcp::TcpParams::default());
        assert_eq!(tcp.len(), p.table().len(), "every parameter is spelled out");
    }
}
