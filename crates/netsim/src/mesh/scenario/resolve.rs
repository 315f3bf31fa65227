//! Resolution: a mesh scenario's keys checked and turned into what a run needs ([`Resolved`]).

use super::*;
use netmodel::mesh::TICK_NS;

/// UIP_CONF_ND6_REACHABLE_TIME of the Z1 and Sky platforms' contiki-conf.h (Contiki 3.0), ms.
const ND_BASE_REACHABLE_MS: u32 = 600_000;
/// UIP_CONF_ND6_RETRANS_TIMER of the same files, ms.
const ND_RETRANS_MS: u32 = 10_000;
/// Motes boot within the run's first second, as Cooja starts them (`motedelay_us`), ns.
const ND_BOOT_SPREAD_NS: u64 = 1_000_000_000;
/// A Z1 binary's boot sequence, in ticks of its clock: tcpip's periodic timer is armed at tick
/// 102 and the application's first timer at 103 (Cooja, the star binaries' `count` read from
/// RAM: validation/cooja/traces/star32-s1.boot-clock.csv; netmodel::mesh::nd).
const Z1_TCPIP_START_TICKS: u64 = 102;
const Z1_APP_START_TICKS: u64 = 103;

/// The index in `nodes` of the mote a table key names by its id (`key`: the key, for the error).
fn mote_index(nodes: &[NodeSpec], key: &str, mote: &str) -> Result<usize, ScenarioError> {
    match mote.parse::<u32>().ok().and_then(|id| nodes.iter().position(|n| n.id == id)) {
        Some(i) => Ok(i),
        None => bad(key, "names no mote (a mote id)"),
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
    /// The workload's kind with its own keys.
    pub traffic: Traffic,
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

impl MeshScenario {
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
        let mut pins = Vec::new();
        for (mote, &parent) in &self.topology.parents {
            let key = format!("topology.parents.{mote}");
            let b = mote_index(nodes, &key, mote)?;
            let Some(a) = nodes.iter().position(|n| n.id == parent) else {
                return bad(&key, &format!("parent {parent} is no mote"));
            };
            pins.push((b, a));
        }
        Ok(pins)
    }

    /// `topology.boots_ms` as each mote's boot (ns; None: drawn), in `nodes` order.
    fn boots(&self, nodes: &[NodeSpec]) -> Result<Vec<Option<u64>>, ScenarioError> {
        per_mote_ms(nodes, "topology.boots_ms", &self.topology.boots_ms)
    }

    /// `topology.rpl_dis_ms` as each mote's first DIS (ns; None: drawn), in `nodes` order.
    fn first_dis(&self, nodes: &[NodeSpec]) -> Result<Vec<Option<u64>>, ScenarioError> {
        if !self.topology.rpl_dis_ms.is_empty() && !self.topology.rpl_startup {
            return bad("topology.rpl_dis_ms", "needs topology.rpl_startup (a DIS solicits a DODAG being formed)");
        }
        per_mote_ms(nodes, "topology.rpl_dis_ms", &self.topology.rpl_dis_ms)
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

    fn mac(&self, mac: Mac, queuebuf_num: u32) -> MacSpec {
        match mac {
            Mac::Nullmac => MacSpec::Nullmac,
            Mac::Csma => MacSpec::Csma {
                queuebuf_num,
                max_neighbor_queues: self.stack.csma_max_neighbor_queues,
                max_transmissions: self.stack.csma_max_transmissions,
                backoff: self.stack.csma_backoff,
            },
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
                let text = crate::text_file::read_text(path.as_ref(), crate::text_file::MAX_POSITIONS_BYTES)
                    .map_err(|e| ScenarioError(format!("topology.positions: {e}")))?;
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

    /// `stack.mote = "cooja"`: Cooja's own motes everywhere, nullrdc, and the CPU and radio
    /// timing of the platform (keys left at their defaults; another value is refused).
    fn cooja_mote(&self) -> Result<Option<CoojaMoteSpec>, ScenarioError> {
        let s = &self.stack;
        if s.mote != Mote::Cooja {
            if s.br.mote == Some(Mote::Cooja) {
                return bad("stack.br.mote", "\"cooja\" needs every mote a Cooja mote (stack.mote = \"cooja\")");
            }
            return Ok(None);
        }
        if s.br.mote.is_some_and(|m| m != Mote::Cooja) {
            return bad("stack.br.mote", "must be \"cooja\" (or unset) with stack.mote = \"cooja\"");
        }
        if s.rdc != RdcName::Nullrdc || s.br.rdc.is_some_and(|r| r != RdcName::Nullrdc) {
            return bad("stack.rdc", "must be \"nullrdc\" on Cooja motes (the platform's; the border router's too)");
        }
        let z1 = Stack::default();
        for (key, value, default) in [
            ("stack.rx_process_us", s.rx_process_us, z1.rx_process_us),
            ("stack.tx_prepare_us", s.tx_prepare_us, z1.tx_prepare_us),
            ("stack.app_us", s.app_us, z1.app_us),
            ("stack.client_app_us", s.client_app_us, z1.client_app_us),
            ("stack.uart_byte_ns", s.uart_byte_ns, z1.uart_byte_ns),
            ("stack.client_log_request_bytes", s.client_log_request_bytes, z1.client_log_request_bytes),
            ("stack.client_log_response_bytes", s.client_log_response_bytes, z1.client_log_response_bytes),
            ("radio.tx_turnaround_us", self.radio.tx_turnaround_us, Radio::default().tx_turnaround_us),
        ] {
            if value != default {
                return bad(key, "is the platform's on Cooja motes (stack.mote = \"cooja\": no CPU time, Cooja's 1-ms ticks): leave it unset");
            }
        }
        if s.partial_frame_stall {
            return bad("stack.partial_frame_stall", "is MSPSim's CC2420's; a Cooja mote's radio has none");
        }
        if s.rx_turnaround == Some(true) {
            return bad("stack.rx_turnaround", "is MSPSim's CC2420's; a Cooja mote's radio has none");
        }
        Ok(Some(CoojaMoteSpec::MEASURED))
    }

    /// Checks every value and builds what a replication needs.
    pub fn resolve(&self) -> Result<Resolved, ScenarioError> {
        // the checks run in this order: a scenario with several faults is told the first
        self.check_run()?;
        let (radio, cooja) = self.radio()?;
        let nodes = self.nodes()?;
        let link = self.link_layer(&nodes)?;
        let traffic = self.workload.traffic()?;
        let collect = match &traffic {
            Traffic::Collect(c) => Some(c),
            _ => None,
        };
        let outstanding = self.check_workload(&traffic, collect)?;
        let (request, response) = self.messages(collect);
        let w = &self.workload;
        let request_bytes = encoded_len(request.code, w.token_len, &request.options, &request.payload);
        let response_bytes = encoded_len(response.code, w.token_len, &response.options, &response.payload);
        let link_local = !nodes.iter().any(|n| n.role == topology::Role::BorderRouter);
        self.check_neighbour_discovery(link_local)?;
        if link_local {
            self.check_link_local_star(&nodes)?;
        }
        let compression = self.compression(link_local, request_bytes, response_bytes)?;
        let cpu = self.cpu(cooja);
        let mobility = self.mobility(&nodes)?;
        let (cloud, clients) = self.clients(&nodes, link.br, collect)?;
        let pinned_parents = self.pinned_parents(&nodes)?;
        let boots_ns = self.boots(&nodes)?;
        let dis_first_ns = self.first_dis(&nodes)?;
        let mesh = MeshSpec {
            nodes: nodes.clone(),
            macs: link.macs,
            radio,
            cpu,
            compression,
            mobility,
            cloud,
            contikimac: link.contikimac,
            rdcs: link.rdcs,
            pinned_parents,
            boots_ns,
            dis_first_ns,
            jitter_m: self.topology.jitter_m,
            cpu_clocks_hz: link.cpu_clocks_hz,
            cooja_mote: cooja,
            partial_frame_stall: self.stack.partial_frame_stall,
            rx_turnaround: self.stack.rx_turnaround.unwrap_or(self.stack.partial_frame_stall),
            nd: self.nd(cooja.is_some()),
            rpl: self.rpl(),
        };
        self.check_routing(&mesh, &nodes)?;
        if clients.is_empty() {
            return bad("topology", "has no client with a server");
        }
        let (open_loop, background) = rates(collect, request_bytes, clients.len());
        let intervals_ns = self.intervals(&traffic, &mesh, &clients, request_bytes)?;
        Ok(Resolved {
            mesh,
            cc: self.cc_config()?,
            traffic,
            outstanding,
            open_loop,
            background,
            give_up: GiveUp::from(self.endpoint.give_up),
            clients,
            intervals_ns,
            request,
            response,
            request_bytes,
            response_bytes,
        })
    }

    /// The run's own keys.
    fn check_run(&self) -> Result<(), ScenarioError> {
        if self.reps == 0 {
            return bad("reps", "must be at least 1");
        }
        if !(self.duration_s > 0.0 && self.duration_s <= 1e7) {
            return bad("duration_s", "must be > 0 and at most 10^7");
        }
        Ok(())
    }

    /// The radio medium, and the Cooja motes' platform if the motes are Cooja motes.
    fn radio(&self) -> Result<(RadioSpec, Option<CoojaMoteSpec>), ScenarioError> {
        let r = &self.radio;
        if !(r.tx_range_m > 0.0 && r.tx_range_m.is_finite() && r.interference_range_m.is_finite()) {
            return bad("radio.tx_range_m", "must be a finite number > 0");
        }
        for (k, v) in [("radio.success_ratio_tx", r.success_ratio_tx), ("radio.success_ratio_rx", r.success_ratio_rx)] {
            if !(0.0..=1.0).contains(&v) {
                return bad(k, "must be in [0, 1]");
            }
        }
        let mrm = match r.medium {
            Medium::Udgm if r.mrm.is_some() => return bad("radio.mrm", "is MRM's: set radio.medium = \"mrm\""),
            Medium::Udgm => None,
            Medium::Mrm => Some(r.mrm_spec()?),
        };
        let cooja = self.cooja_mote()?;
        let cca = match &r.cca_range_m {
            // ContikiRadio: busy above −95 dBm, UDGM's strength at R
            Derivable::Word(w) if w == "derived" && cooja.is_some() => r.tx_range_m,
            Derivable::Value(v) if *v >= 0.0 && v.is_finite() => *v,
            Derivable::Word(w) if w == "derived" => match &mrm {
                Some(m) => m.reach_m(netmodel::mesh::mrm::CCA_THRESHOLD_DBM),
                None => RadioSpec::derived_cca_range(r.tx_range_m),
            },
            _ => return bad("radio.cca_range_m", "must be a distance >= 0 or \"derived\""),
        };
        let radio = RadioSpec {
            tx_range_m: r.tx_range_m,
            interference_range_m: r.interference_range_m,
            success_ratio_tx: r.success_ratio_tx,
            success_ratio_rx: r.success_ratio_rx,
            cca_range_m: cca,
            tx_turnaround_us: if cooja.is_some() { 0 } else { r.tx_turnaround_us },
            mrm,
        };
        Ok((radio, cooja))
    }

    /// Each mote's MAC, RDC and CPU clock (the border router's may differ).
    fn link_layer(&self, nodes: &[NodeSpec]) -> Result<LinkLayer, ScenarioError> {
        let s = &self.stack;
        // the border router, if there is one (none: a link-local star, the stack.br keys unused)
        let br = nodes.iter().position(|n| n.role == topology::Role::BorderRouter);
        let motes_cm = s.rdc == RdcName::Contikimac;
        let br_cm = br.is_some() && s.br.rdc.map_or(motes_cm, |r| r == RdcName::Contikimac);
        if br.is_some() && s.br.keep_radio_on && !br_cm {
            return bad("stack.br.keep_radio_on", "needs the border router's rdc to be \"contikimac\"");
        }
        let contikimac = if motes_cm || br_cm {
            let r = s.channel_check_rate;
            if !(1..=128).contains(&r) || !r.is_power_of_two() {
                return bad("stack.channel_check_rate", "must be a power of two from 1 to 128");
            }
            ContikimacSpec { channel_check_rate: r, phase_optimization: s.phase_optimization }
        } else {
            ContikimacSpec::default() // no mote runs it
        };
        if s.queuebuf_num == 0 || s.csma_max_neighbor_queues == 0 || s.csma_max_transmissions == 0 {
            return bad("stack.queuebuf_num", "and the CSMA limits must be at least 1");
        }
        if s.rx_fifo_frames == 0 {
            return bad("stack.rx_fifo_frames", "must be at least 1");
        }
        let mote_mac = self.mac(s.mac, s.queuebuf_num);
        let br_mac = self.mac(s.br.mac.unwrap_or(s.mac), s.br.queuebuf_num.unwrap_or(s.queuebuf_num));
        let is_br = |i: usize| br == Some(i);
        let macs = (0..nodes.len()).map(|i| if is_br(i) { br_mac } else { mote_mac }).collect();
        let rdc = |cm: bool, kept: bool| match (cm, kept) {
            (false, _) => Rdc::Nullrdc,
            (true, false) => Rdc::Contikimac,
            (true, true) => Rdc::ContikimacKeptOn,
        };
        let rdcs = (0..nodes.len())
            .map(|i| if is_br(i) { rdc(br_cm, s.br.keep_radio_on) } else { rdc(motes_cm, false) })
            .collect();
        let mote_hz = s.mote.clock_hz();
        let br_hz = s.br.mote.map_or(mote_hz, Mote::clock_hz);
        let cpu_clocks_hz = (0..nodes.len()).map(|i| if is_br(i) { br_hz } else { mote_hz }).collect();
        Ok(LinkLayer { br, macs, rdcs, contikimac, cpu_clocks_hz })
    }

    /// The workload's keys; the exchanges a back-to-back client keeps open.
    fn check_workload(&self, traffic: &Traffic, collect: Option<&CollectKeys>) -> Result<u32, ScenarioError> {
        let w = &self.workload;
        if let Some(c) = collect {
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
        match traffic {
            Traffic::Baseline(b) if !(b.gap_s >= 0.0 && b.gap_s.is_finite()) || b.exchanges == 0 => {
                return bad("workload.baseline", "needs gap_s >= 0 and exchanges >= 1");
            }
            Traffic::Burst(b) if !(b.start_s >= 0.0 && b.start_s.is_finite()) || b.exchanges == 0 => {
                return bad("workload.burst", "needs start_s >= 0 and exchanges >= 1");
            }
            _ => {}
        }
        if w.fct_successes == 0 {
            return bad("workload.fct_successes", "must be at least 1 (a client's FCT ends at its n-th success)");
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
        Ok(outstanding)
    }

    /// Every client's request and every server's answer.
    fn messages(&self, collect: Option<&CollectKeys>) -> (Request, Response) {
        let w = &self.workload;
        let request = match collect {
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
        (request, response)
    }

    /// Neighbour discovery's keys: modelled on nullrdc link-local stars only.
    fn check_neighbour_discovery(&self, link_local: bool) -> Result<(), ScenarioError> {
        let s = &self.stack;
        if s.neighbor_cache > 0 && !link_local {
            return bad(
                "stack.neighbor_cache",
                "is modelled on link-local stars only (with RPL, Contiki's DIOs fill the neighbour table; not modelled)",
            );
        }
        if !self.topology.boots_ms.is_empty() && s.neighbor_cache == 0 {
            return bad(
                "topology.boots_ms",
                "needs stack.neighbor_cache (the model boots motes where it runs their neighbour discovery)",
            );
        }
        if s.neighbor_reachable_ms > 0 && s.neighbor_cache == 0 {
            return bad("stack.neighbor_reachable_ms", "needs stack.neighbor_cache (neighbour discovery) on");
        }
        if s.neighbor_cache > 0 && s.rdc != RdcName::Nullrdc {
            return bad(
                "stack.neighbor_cache",
                "is modelled with nullrdc only (ContikiMAC's broadcast trains are not)",
            );
        }
        Ok(())
    }

    /// A network without a border router: a link-local star, no RPL, every mote one hop from the
    /// server.
    fn check_link_local_star(&self, nodes: &[NodeSpec]) -> Result<(), ScenarioError> {
        if self.topology.rpl_control || self.stack.rpl_hbh_option {
            return bad(
                "topology",
                "without a border_router there is no RPL: set topology.rpl_control = false, \
                 topology.rpl_startup = false and stack.rpl_hbh_option = false",
            );
        }
        if self.cloud.is_some() {
            return bad("cloud", "needs a border_router");
        }
        let server = nodes.iter().find(|n| n.role == topology::Role::Server).expect("validated: one server");
        let reach = self.radio.tx_range_m + netmodel::mesh::RANGE_EPSILON_M;
        if let Some(c) =
            nodes.iter().find(|n| n.role != topology::Role::Server && topology::distance(n, server) > reach)
        {
            return bad(
                "topology",
                &format!(
                    "without a border_router motes talk over link-local addresses, one hop: mote {} is {:.2} m from the server, beyond radio.tx_range_m",
                    c.id,
                    topology::distance(c, server)
                ),
            );
        }
        Ok(())
    }

    /// 6LoWPAN's compression; refused where a message would need fragmentation.
    fn compression(
        &self,
        link_local: bool,
        request_bytes: u32,
        response_bytes: u32,
    ) -> Result<Compression, ScenarioError> {
        let s = &self.stack;
        let compression = Compression {
            context_matches_lln_prefix: s.context_matches_lln_prefix,
            rpl_hbh_option: s.rpl_hbh_option,
            link_local,
        };
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
        Ok(compression)
    }

    /// The motes' CPU delays (a Cooja mote's firmware takes no time).
    fn cpu(&self, cooja: Option<CoojaMoteSpec>) -> CpuSpec {
        let s = &self.stack;
        match cooja {
            // the firmware takes no time; the mote runs at Cooja's ticks
            Some(_) => CpuSpec::new(CoojaMoteSpec::RX_PROCESS_US, CoojaMoteSpec::TX_PREPARE_US, 0, s.rx_fifo_frames),
            None => CpuSpec {
                rx_process_us: s.rx_process_us,
                tx_prepare_us: s.tx_prepare_us,
                app_us: s.app_us,
                rx_fifo_frames: s.rx_fifo_frames,
                client_app_us: s.client_app_us,
                uart_byte_ns: s.uart_byte_ns,
                client_log_request_bytes: s.client_log_request_bytes,
                client_log_response_bytes: s.client_log_response_bytes,
            },
        }
    }

    /// Who sends to whom: (client host, server host) pairs, and the cloud's hosts if any.
    fn clients(
        &self,
        nodes: &[NodeSpec],
        br: Option<usize>,
        collect: Option<&CollectKeys>,
    ) -> Result<Clients, ScenarioError> {
        match &self.cloud {
            // every mote sends to the collector, the border router
            None if collect.is_some() => {
                let Some(root) = br else { return bad("workload.collect", "needs a border_router (the collector)") };
                let c: Vec<(u32, u32)> =
                    (0..nodes.len() as u32).filter(|&k| k as usize != root).map(|k| (k, root as u32)).collect();
                Ok((None, c))
            }
            None => {
                let servers = topology::assign_servers(nodes);
                let c: Vec<(u32, u32)> =
                    servers.iter().enumerate().filter_map(|(c, s)| s.map(|s| (c as u32, s as u32))).collect();
                Ok((None, c))
            }
            Some(k) => {
                if !(k.internet_delay_ms >= 0.0 && k.internet_delay_ms.is_finite()) || k.slip_baud == 0 {
                    return bad("cloud", "needs internet_delay_ms >= 0 and slip_baud > 0");
                }
                if self.workload.offered_load_kbps > 0.0 {
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
                Ok((Some(spec), c))
            }
        }
    }

    /// Neighbour discovery, where the stack runs it (a Cooja mote's boot sequence is not
    /// measured: its processes start at its boot).
    fn nd(&self, cooja: bool) -> Option<NdSpec> {
        let s = &self.stack;
        let boot_sequence = if cooja { (0, 0) } else { (Z1_TCPIP_START_TICKS, Z1_APP_START_TICKS) };
        (s.neighbor_cache > 0).then_some(NdSpec {
            cache: s.neighbor_cache,
            base_reachable_ms: ND_BASE_REACHABLE_MS,
            retrans_ms: ND_RETRANS_MS,
            shared_random: self.workload.client_random == ClientRandom::Shared,
            reachable_ms: (s.neighbor_reachable_ms > 0).then_some(s.neighbor_reachable_ms),
            boot_spread_ns: ND_BOOT_SPREAD_NS,
            tcpip_start_ns: boot_sequence.0 * TICK_NS,
            app_start_ns: boot_sequence.1 * TICK_NS,
        })
    }

    /// RPL's control traffic, where the topology asks for it.
    fn rpl(&self) -> Option<RplSpec> {
        self.topology.rpl_control.then_some(RplSpec {
            startup: self.topology.rpl_startup,
            max_routes: MaxRoutes {
                root: self.stack.br.max_routes.unwrap_or(self.stack.max_routes),
                motes: self.stack.max_routes,
            },
            evict_lru: self.stack.route_table_full == RouteTableFull::EvictLru,
            etx: self.topology.rpl_etx,
            root_start_ns: (self.topology.rpl_root_start_ms * 1e6).round() as u64,
            ..RplSpec::default()
        })
    }

    /// RPL's keys together, and the pinned parents against the routes.
    fn check_routing(&self, mesh: &MeshSpec, nodes: &[NodeSpec]) -> Result<(), ScenarioError> {
        if self.topology.rpl_startup && !self.topology.rpl_control {
            return bad(
                "topology.rpl_startup",
                "needs topology.rpl_control = true (the DODAG forms from RPL's frames)",
            );
        }
        let start = self.topology.rpl_root_start_ms;
        if !(0.0..=3.6e9).contains(&start) {
            return bad("topology.rpl_root_start_ms", "must be a number of ms in [0, 3600000000]");
        }
        if start > 0.0 && !self.topology.rpl_startup {
            return bad(
                "topology.rpl_root_start_ms",
                "needs topology.rpl_startup = true (the converged tree has its root from the start)",
            );
        }
        if self.topology.rpl_etx && !self.topology.rpl_startup {
            return bad(
                "topology.rpl_etx",
                "needs topology.rpl_startup = true (over the converged tree no parent changes)",
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
        Ok(())
    }

    /// Each client's request interval, ns (0: back to back, or open loop).
    fn intervals(
        &self,
        traffic: &Traffic,
        mesh: &MeshSpec,
        clients: &[(u32, u32)],
        request_bytes: u32,
    ) -> Result<Vec<u64>, ScenarioError> {
        let w = &self.workload;
        if !matches!(traffic, Traffic::PeriodicBlocking) {
            Ok(vec![0; clients.len()])
        } else if w.offered_load_kbps > 0.0 {
            // per client: 8 · its request's first-hop MPDU / the load
            let routes = mesh.routes();
            Ok(clients
                .iter()
                .map(|&(c, s)| {
                    let nh = routes.next_hop(c as usize, s as usize);
                    let hop = HopPlace::local(true, nh as u32 == s);
                    let mpdu = mesh.compression.frames(hop, request_bytes).mpdu(0);
                    interval_ns(8.0 * mpdu as f64, w.offered_load_kbps)
                })
                .collect())
        } else if w.interval_ms > 0.0 && w.interval_ms.is_finite() {
            Ok(vec![(w.interval_ms * 1e6).round() as u64; clients.len()])
        } else {
            bad("workload.interval_ms", "must be > 0 (or give offered_load_kbps)")
        }
    }
}

/// The cloud's hosts, if any, and every (client host, server host) pair.
type Clients = (Option<CloudSpec>, Vec<(u32, u32)>);

/// Each mote's link layer, as [`MeshScenario::resolve`] builds it.
struct LinkLayer {
    /// The border router, if there is one.
    br: Option<usize>,
    macs: Vec<MacSpec>,
    rdcs: Vec<Rdc>,
    contikimac: ContikimacSpec,
    cpu_clocks_hz: Vec<u32>,
}

/// `collect`: the sources' open-loop arrivals (each step's interval: 8 · message bits / the
/// rate) and each source's background NONs (its share of the aggregate rate, of the same size).
fn rates(collect: Option<&CollectKeys>, request_bytes: u32, clients: usize) -> (Option<RateSteps>, Option<RateSteps>) {
    let open_loop = collect.map(|c| RateSteps {
        intervals_ns: c.kbps.iter().map(|&r| interval_ns(8.0 * request_bytes as f64, r)).collect(),
        step_ns: ((c.step_s * 1e9).round() as u64).max(1),
    });
    let background = collect.filter(|c| !c.background_kbps.is_empty()).map(|c| {
        let n = clients as f64;
        RateSteps {
            intervals_ns: (c.background_kbps.iter()).map(|&r| interval_ns(8.0 * request_bytes as f64 * n, r)).collect(),
            step_ns: ((c.background_step_s * 1e9).round() as u64).max(1),
        }
    });
    (open_loop, background)
}

/// How far apart messages of `bits` go at `kbps` kbit/s, ns.
fn interval_ns(bits: f64, kbps: f64) -> u64 {
    (bits / (kbps * 1000.0) * 1e9).round() as u64
}

/// A `{ mote id = ms }` table of `key` as ns in `nodes` order (None where it gives none).
fn per_mote_ms(
    nodes: &[NodeSpec],
    key: &str,
    table: &std::collections::BTreeMap<String, f64>,
) -> Result<Vec<Option<u64>>, ScenarioError> {
    let mut out = vec![None; nodes.len()];
    for (mote, &ms) in table {
        let key = format!("{key}.{mote}");
        let i = mote_index(nodes, &key, mote)?;
        if !(ms >= 0.0 && ms.is_finite()) {
            return bad(&key, "must be a finite number of ms >= 0");
        }
        out[i] = Some((ms * 1e6).round() as u64);
    }
    Ok(out)
}
