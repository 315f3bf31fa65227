//! The mesh scenario's unit tests: reading, resolving, refusing.

use super::*;

#[test]
fn coap_sizes_of_the_nitk_messages() {
    // GET /test/hello, no token: 4 + (1 + 4) + (1 + 5) = 15;
    // 2.05, ETag 1 byte, Content-Format empty, "Hello World!": 4 + 2 + 1 + 1 + 12 = 20
    let r = MeshScenario::default().resolve().unwrap();
    assert_eq!((r.request_bytes, r.response_bytes), (15, 20));
}

#[test]
fn offered_load_sets_the_interval_from_the_first_hop_mpdu() {
    // NITK request without the address context: 89-byte MPDU on every first hop;
    // 0.5 kbit/s → 8·89/500 = 1.424 s, 2.5 kbit/s → 0.2848 s
    let mut s = MeshScenario::default();
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
        format!(
            "env = \"lln\"\nname = \"p\"\n[topology]\nlayout = \"grid3x3\"\nrpl_startup = false\nparents = {pins}\n"
        )
    };
    // grid3x3: the server (9) hangs from 6 by default, from 8 when pinned (Cooja's RPL)
    let r = MeshScenario::from_toml(&text("{ 9 = 8 }")).unwrap().resolve().unwrap();
    assert_eq!(r.mesh.routes().parent[8], 7);
    let e = |pins: &str| MeshScenario::from_toml(&text(pins)).unwrap().resolve().unwrap_err().to_string();
    assert!(e("{ 9 = 1 }").contains("topology.parents.9"), "{}", e("{ 9 = 1 }"));
    assert!(e("{ 6 = 8 }").contains("not a neighbour"));
    assert!(e("{ 12 = 1 }").contains("names no mote"));
    assert!(e("{ 9 = 42 }").contains("parent 42 is no mote"));
}

#[test]
fn rpl_startup_needs_control_traffic_and_its_own_parents() {
    let e = |s: MeshScenario| s.resolve().unwrap_err().to_string();
    let mut s = MeshScenario::default();
    s.topology.rpl_startup = true;
    assert!(s.resolve().unwrap().mesh.rpl.is_some_and(|r| r.startup));
    s.topology.rpl_control = false;
    assert!(e(s).contains("topology.rpl_startup"));
    let mut s = MeshScenario::default();
    s.topology.rpl_startup = true;
    s.topology.parents.insert("9".into(), 8);
    assert!(e(s).contains("pinned parents"));
    // MRHOF on ETX: off by default, read from the file, and only where the DODAG forms
    assert!(MeshScenario::default().resolve().unwrap().mesh.rpl.is_some_and(|r| !r.etx));
    let s = MeshScenario::from_toml("env = \"lln\"\nname = \"e\"\n[topology]\nrpl_etx = true\n").unwrap();
    assert!(s.clone().resolve().unwrap().mesh.rpl.is_some_and(|r| r.etx && r.startup));
    let mut s = s;
    s.topology.rpl_startup = false;
    assert!(e(s).contains("topology.rpl_etx"));
}

#[test]
fn bad_values_are_named() {
    let e = |s: MeshScenario| s.resolve().unwrap_err().to_string();
    let mut s = MeshScenario::default();
    s.stack.rdc = RdcName::Contikimac;
    s.stack.channel_check_rate = 10;
    assert!(e(s).contains("stack.channel_check_rate"));
    let mut s = MeshScenario::default();
    s.topology.layout = Some("moon".into());
    assert!(e(s).contains("unknown layout 'moon'"));
    let mut s = MeshScenario::default();
    s.workload.response_payload = "x".repeat(60);
    assert!(e(s).contains("fragmentation"));
    let mut s = MeshScenario::default();
    s.workload.fct_successes = 0;
    assert!(e(s).contains("workload.fct_successes must be at least 1"));
    let mut s = MeshScenario::default();
    s.workload.response_etag_bytes = 1 << 40; // never allocated: refused first
    assert!(e(s).contains("workload.response_etag_bytes"));
    let s = MeshScenario { cc: "tcp".into(), ..MeshScenario::default() };
    assert!(e(s).contains("UDP"));
    let mut s = MeshScenario::default();
    s.stack.br.rdc = Some(RdcName::Nullrdc);
    s.stack.br.keep_radio_on = true;
    assert!(e(s).contains("stack.br.keep_radio_on"));
    assert!(MeshScenario::from_toml("colour = 1").unwrap_err().to_string().contains("unknown field `colour`"));
    let mut s = MeshScenario::default();
    s.radio.mrm = Some(MrmKeys::default());
    assert!(e(s).contains("radio.mrm is MRM's"));
    let mut s = MeshScenario::default();
    s.radio.medium = Medium::Mrm;
    s.radio.success_ratio_rx = 0.5;
    assert!(e(s).contains("UDGM's"));
    let mut s = MeshScenario::default();
    s.radio.medium = Medium::Mrm;
    s.radio.mrm = Some(MrmKeys { full_reception: 1.0, ..MrmKeys::default() });
    assert!(e(s).contains("radio.mrm.full_reception"));
}

/// A named value a key does not take is refused where the scenario is read: the message shows
/// the line, the value, and the values the key takes.
#[test]
fn values_a_key_does_not_take_are_refused_when_read() {
    for (table, line, takes) in [
        ("stack", "rdc = \"xmac\"", "`nullrdc` or `contikimac`"),
        ("stack.br", "rdc = \"lpp\"", "`nullrdc` or `contikimac`"),
        ("stack", "mac = \"tdma\"", "`nullmac` or `csma`"),
        ("stack", "csma_backoff = \"aloha\"", "`timebase` or `binary_exponential`"),
        ("stack", "route_table_full = \"fifo\"", "`refuse` or `evict_lru`"),
        ("stack", "mote = \"micaz\"", "`z1`, `sky`, `cooja`"),
        ("stack.br", "mote = \"telosb\"", "`z1`, `sky`, `cooja`"),
        ("radio", "medium = \"ray\"", "`udgm` or `mrm`"),
        ("topology", "routing = \"aodv\"", "`rpl_storing_minhop`"),
        ("workload", "kind = \"poisson\"", "`periodic_blocking`, `continuous`, `burst`, `baseline`, `collect`"),
        ("endpoint", "give_up = \"never\"", "`at_last_send` or `after_last_timer`"),
    ] {
        let e = MeshScenario::from_toml(&format!("[{table}]\n{line}\n")).unwrap_err().to_string();
        assert!(e.contains(line) && e.contains("unknown variant") && e.contains(takes), "{table}.{line}: {e}");
    }
}

#[test]
fn the_platform_sets_each_mote_s_cpu_clock() {
    use netmodel::mesh::{CPU_REFERENCE_HZ, SKY_CPU_HZ};
    // the default 3×3 grid: the border router (id 1) first
    let clocks = |s: &MeshScenario| s.resolve().unwrap().mesh.cpu_clocks_hz;
    let mut s = MeshScenario::default();
    assert!(clocks(&s).iter().all(|&c| c == CPU_REFERENCE_HZ));
    s.stack.br.mote = Some(Mote::Sky);
    let c = clocks(&s);
    assert_eq!((c[0], c.len()), (SKY_CPU_HZ, 9));
    assert!(c[1..].iter().all(|&c| c == CPU_REFERENCE_HZ));
    s.stack.mote = Mote::Sky;
    s.stack.br.mote = None;
    assert!(clocks(&s).iter().all(|&c| c == SKY_CPU_HZ));
}

#[test]
fn cooja_motes_take_the_platform_s_timing_and_refuse_another() {
    use netmodel::mesh::CoojaMoteSpec;
    let cooja = "[stack]\nmote = \"cooja\"\npartial_frame_stall = false\n[stack.br]\nrdc = \"nullrdc\"\n";
    let m = MeshScenario::from_toml(cooja).unwrap().resolve().unwrap().mesh;
    assert_eq!(m.cooja_mote, Some(CoojaMoteSpec::MEASURED));
    // no CPU time but Cooja's ticks; no turnaround; busy above −95 dBm: within R
    assert_eq!(
        (m.cpu.rx_process_us, m.cpu.tx_prepare_us, m.cpu.app_us, m.cpu.client_app_us, m.cpu.uart_byte_ns),
        (1000, 2096, 0, 0, 0)
    );
    assert_eq!((m.radio.tx_turnaround_us, m.radio.cca_range_m), (0, 10.0));
    assert_eq!(m.airtime_ns(58), 56 * 32_000);
    let e = |t: &str| MeshScenario::from_toml(t).unwrap().resolve().unwrap_err().to_string();
    assert!(
        e(&format!("{cooja}[radio]\ntx_turnaround_us = 192\n")).contains("radio.tx_turnaround_us is the platform's")
    );
    assert!(e("[stack]\nmote = \"cooja\"\nrx_process_us = 10\n[stack.br]\nrdc = \"nullrdc\"\n")
        .contains("stack.rx_process_us"));
    // the default border router runs ContikiMAC, which a Cooja mote's platform does not
    assert!(e("[stack]\nmote = \"cooja\"\npartial_frame_stall = false\n").contains("stack.rdc"));
    assert!(e("[stack.br]\nmote = \"cooja\"\n").contains("stack.br.mote"));
    // MSPSim's turnaround follows partial_frame_stall (off here); stated on, it is refused
    assert!(!m.rx_turnaround);
    let on = cooja.replace("partial_frame_stall = false\n", "partial_frame_stall = false\nrx_turnaround = true\n");
    assert!(e(&on).contains("stack.rx_turnaround"));
}

#[test]
fn mspsim_s_turnaround_follows_its_partial_frames_unless_stated_and_is_not_written_unset() {
    let mesh = |t: &str| MeshScenario::from_toml(t).unwrap().resolve().unwrap().mesh;
    assert!(mesh("").rx_turnaround);
    assert!(!mesh("[stack]\npartial_frame_stall = false\n").rx_turnaround);
    assert!(!mesh("[stack]\nrx_turnaround = false\n").rx_turnaround);
    assert!(mesh("[stack]\npartial_frame_stall = false\nrx_turnaround = true\n").rx_turnaround);
    // unset, the scenario's serialised form (a plan's cell seeds come from it) does not name it
    let json = |t: &str| serde_json::to_string(&MeshScenario::from_toml(t).unwrap()).unwrap();
    assert!(!json("").contains("rx_turnaround"));
    assert!(json("[stack]\nrx_turnaround = false\n").contains("\"rx_turnaround\":false"));
}

/// A star of clients around their server with no border router (the precompiled CoCoA and
/// CoCoA++ clients talk to a link-local server address, one hop, no RPL).
const STAR: &str = "[stack]\nrpl_hbh_option = false\n[topology]\nrpl_control = false\nrpl_startup = false\n\
    nodes = [{ id = 1, role = \"server\", x = 0.0, y = 0.0 }, { id = 2, role = \"client\", x = 6.0, y = 0.0 }, \
    { id = 3, role = \"client\", x = 0.0, y = 6.0 }, { id = 4, role = \"client\", x = -6.0, y = 0.0 }]\n";

#[test]
fn a_link_local_star_needs_no_border_router() {
    let res = MeshScenario::from_toml(STAR).unwrap().resolve().unwrap();
    let m = &res.mesh;
    assert!(m.link_local() && m.compression.link_local);
    assert_eq!(res.clients, vec![(1, 0), (2, 0), (3, 0)]);
    // one hop each way, and no mote runs the border router's ContikiMAC
    let routes = m.routes();
    assert!((1..4).all(|c| routes.hops(c, 0) == Some(1) && routes.hops(0, c) == Some(1)));
    assert!((0..4).all(|i| m.rdc(i) == netmodel::mesh::Rdc::Nullrdc));
    // the IPv6 header takes 2 bytes (both fe80:: addresses elided, no context byte), UDP 7
    let hop = netmodel::mesh::frame::HopPlace::local(true, true);
    assert_eq!(m.compression.iphc_bytes(hop) + m.compression.transport_bytes(), 2 + 7);
    let e = |t: &str| MeshScenario::from_toml(t).unwrap().resolve().unwrap_err().to_string();
    assert!(e(&STAR.replace("x = -6.0", "x = -12.0")).contains("mote 4 is 12.00 m from the server"));
    assert!(e(&STAR.replace("rpl_control = false", "rpl_control = true")).contains("no RPL"));
    assert!(e(&STAR.replace("role = \"server\"", "role = \"client\"")).contains("exactly one server"));
    // and it runs: every client's exchanges complete
    let mut s = MeshScenario::from_toml(STAR).unwrap();
    s.duration_s = 60.0;
    let r = crate::mesh::run_rep(&s, &s.resolve().unwrap(), 0, None);
    assert!(r.exchanges.iter().filter(|x| x.rtt_ns.is_some()).count() > 100);
}

/// With neighbour discovery the model boots the motes (within the first second), and a client
/// starts when its application does, 103 ticks of its clock after its boot; with
/// `first_after_interval` its first request goes one interval later, as the star binaries' do.
#[test]
fn a_booted_client_sends_its_first_request_an_interval_after_its_application_starts() {
    let toml = STAR.replacen("[stack]\n", "[stack]\nneighbor_cache = 15\n", 1)
        + "[workload]\ninterval_ms = 10000.0\nfirst_after_interval = true\n";
    let mut s = MeshScenario::from_toml(&toml).unwrap();
    s.duration_s = 30.0;
    let r = crate::mesh::run_rep(&s, &s.resolve().unwrap(), 0, None);
    // 103 ticks (804.6875 ms) + 10 s after a boot in [0, 1 s)
    let first: Vec<u64> = (1..4).map(|c| r.exchanges.iter().find(|x| x.client == c).unwrap().start_ns).collect();
    assert!(first.iter().all(|&t| (10_804_687_500..11_804_687_500).contains(&t)), "{first:?}");
    // a boot the scenario gives: client 2 (mote 3) boots at 90.532 ms
    let given = toml.replacen("rpl_startup = false\n", "rpl_startup = false\nboots_ms = { 3 = 90.532 }\n", 1);
    let mut g = MeshScenario::from_toml(&given).unwrap();
    g.duration_s = 30.0;
    let r2 = crate::mesh::run_rep(&g, &g.resolve().unwrap(), 0, None);
    let start = r2.exchanges.iter().find(|x| x.client == 2).unwrap().start_ns;
    assert_eq!(start, 90_532_000 + 804_687_500 + 10_000_000_000);
    let e = |t: &str| MeshScenario::from_toml(t).unwrap().resolve().unwrap_err().to_string();
    assert!(e(&given.replace("boots_ms = { 3", "boots_ms = { 9")).contains("topology.boots_ms.9"));
    assert!(e(&given.replace("neighbor_cache = 15\n", "")).contains("needs stack.neighbor_cache"));
    // the next on the 10-s grid of each (its request at its timer, its NS resolved by then)
    for (c, &t0) in (1..4).zip(&first) {
        let second = r.exchanges.iter().filter(|x| x.client == c).nth(1).unwrap().start_ns;
        assert_eq!(second - t0, 10_000_000_000);
    }
}

/// `stack.neighbor_cache` turns Contiki's neighbour discovery on, on a link-local star only: with
/// a table of 2, the server of three clients answers at most two of them at a time, so fewer
/// exchanges complete than with every neighbour resolved; a table of 15 holds all three.
#[test]
fn neighbour_discovery_runs_on_stars_only_and_a_small_table_costs_exchanges() {
    let with = |cache: u32| STAR.replacen("[stack]\n", &format!("[stack]\nneighbor_cache = {cache}\n"), 1);
    let res = MeshScenario::from_toml(&with(15)).unwrap().resolve().unwrap();
    assert_eq!(res.mesh.nd.map(|n| (n.cache, n.base_reachable_ms, n.shared_random)), Some((15, 600_000, false)));
    assert!(MeshScenario::from_toml(STAR).unwrap().resolve().unwrap().mesh.nd.is_none());
    // a known reachable time reaches the model; without neighbour discovery it is refused
    let known = with(15).replacen("[stack]\n", "[stack]\nneighbor_reachable_ms = 322247\n", 1);
    let res = MeshScenario::from_toml(&known).unwrap().resolve().unwrap();
    assert_eq!(res.mesh.nd.and_then(|n| n.reachable_ms), Some(322_247));
    let alone = STAR.replacen("[stack]\n", "[stack]\nneighbor_reachable_ms = 322247\n", 1);
    let e = MeshScenario::from_toml(&alone).unwrap().resolve().unwrap_err().to_string();
    assert!(e.contains("stack.neighbor_reachable_ms"), "{e}");
    let e = MeshScenario::from_toml(
        "env = \"lln\"\nname = \"g\"\n[stack]\nneighbor_cache = 15\n[topology]\nlayout = \"grid3x3\"\n",
    )
    .unwrap()
    .resolve()
    .unwrap_err()
    .to_string();
    assert!(e.contains("stack.neighbor_cache"), "{e}");
    let cm = with(15).replacen("[stack]\n", "[stack]\nrdc = \"contikimac\"\n", 1);
    let e = MeshScenario::from_toml(&cm).unwrap().resolve().unwrap_err().to_string();
    assert!(e.contains("nullrdc only"), "{e}");
    // (completed exchanges, and the retransmissions of each client's first exchange)
    let run = |toml: &str| {
        let mut s = MeshScenario::from_toml(toml).unwrap();
        s.duration_s = 60.0;
        let r = crate::mesh::run_rep(&s, &s.resolve().unwrap(), 0, None);
        let mut first = std::collections::BTreeMap::new();
        for x in &r.exchanges {
            let f = first.entry(x.client).or_insert(x);
            if x.start_ns < f.start_ns {
                *f = x;
            }
        }
        let firsts: Vec<u32> = first.values().map(|x| x.retransmissions).collect();
        (r.exchanges.iter().filter(|x| x.rtt_ns.is_some()).count(), firsts)
    };
    let ((all, plain), (fifteen, resolving), (two, _)) = (run(STAR), run(&with(15)), run(&with(2)));
    // a table of 15: each client's first request is dropped while it resolves the server (a
    // retransmission may go before the resolution too: an NS heard from another client takes
    // the buffer that held its own)
    assert_eq!(plain, [0, 0, 0]);
    assert!(resolving.len() == 3 && resolving.iter().all(|&r| r >= 1), "{resolving:?}");
    assert!(fifteen < all, "{all} {fifteen}");
    assert!(two < fifteen, "{fifteen} {two}");
}

/// Clients that share one random sequence draw alike: on perfect links every exchange of the
/// star completes at its first send, so exchange k of each client draws its first timer as the
/// k-th draw of the sequence, the same for all three clients; with a sequence each, they differ.
#[test]
fn clients_sharing_a_random_sequence_draw_the_same_timers() {
    let first_timers = |random: &str| {
        let mut s = MeshScenario::from_toml(&format!("{STAR}[workload]\nclient_random = \"{random}\"\n")).unwrap();
        s.duration_s = 5.0;
        let r = crate::mesh::run_rep(&s, &s.resolve().unwrap(), 0, None);
        let mut by_client = std::collections::BTreeMap::<u32, Vec<u64>>::new();
        for x in r.exchanges.iter().filter(|x| x.rtt_ns.is_some() && x.retransmissions == 0) {
            by_client.entry(x.client).or_default().push(x.last_rto_ns.unwrap());
        }
        let n = by_client.values().map(Vec::len).min().unwrap();
        assert!(n >= 10, "{by_client:?}");
        by_client.into_values().map(|v| v[..n].to_vec()).collect::<Vec<_>>()
    };
    let shared = first_timers("shared");
    assert_eq!(shared.len(), 3);
    assert!(shared.iter().all(|t| *t == shared[0]));
    let own = first_timers("per_mote");
    assert!(own[0] != own[1] && own[1] != own[2]);
    let e = MeshScenario::from_toml(&format!("{STAR}[workload]\nclient_random = \"one\"\n")).unwrap_err().to_string();
    assert!(e.contains("client_random") || e.contains("per_mote"), "{e}");
}

#[test]
fn spacing_scales_a_layout_and_jitter_is_checked() {
    // grid3x3_ideal's mote 2 is at (−10, 10): at 9 m spacing (−9, 9)
    let s = MeshScenario::from_toml("[topology]\nlayout = \"grid3x3_ideal\"\nspacing_m = 9.0\n").unwrap();
    let n = s.nodes().unwrap();
    assert_eq!((n[1].x, n[1].y), (-9.0, 9.0));
    assert!(s.resolve().is_ok());
    let e = |t: &str| MeshScenario::from_toml(t).unwrap().resolve().unwrap_err().to_string();
    let nodes = "[topology]\nspacing_m = 9.0\nnodes = [{ id = 1, role = \"border_router\", x = 0.0, y = 0.0 }, \
                 { id = 2, role = \"server\", x = 9.0, y = 0.0 }, { id = 3, role = \"client\", x = 18.0, y = 0.0 }]\n";
    assert!(e(nodes).contains("topology.spacing_m scales a named layout"));
    assert!(e("[topology]\nspacing_m = 0.0\n").contains("topology.spacing_m"));
    assert!(e("[topology]\njitter_m = -1.0\n").contains("topology.jitter_m"));
    let pinned = "[topology]\nrpl_startup = false\njitter_m = 1.0\nparents = { 9 = 8 }\n";
    assert!(e(pinned).contains("topology.parents"));
    // a jittered scenario runs, and says so in its scenario
    let s = MeshScenario::from_toml("[topology]\njitter_m = 1.0\n").unwrap();
    assert_eq!(s.resolve().unwrap().mesh.jitter_m, 1.0);
}

#[test]
fn mrm_derives_its_power_from_the_range_and_its_carrier_sense_from_the_power() {
    let s = MeshScenario::from_toml("[radio]\nmedium = \"mrm\"\n").unwrap();
    let r = s.resolve().unwrap().mesh.radio;
    let m = r.mrm.unwrap();
    // p = 0.999 at R = 10 m: −27.046 dBm (netmodel's mrm tests derive it); sensed to 13.98 m
    assert!((m.tx_power_dbm + 27.046).abs() < 2e-3, "{}", m.tx_power_dbm);
    assert!((r.cca_range_m - 13.98).abs() < 0.01, "{}", r.cca_range_m);
    assert!(m.capture);
    // a given power is used as is
    let s = MeshScenario::from_toml("[radio]\nmedium = \"mrm\"\n[radio.mrm]\ntx_power_dbm = 1.5\n").unwrap();
    assert_eq!(s.resolve().unwrap().mesh.radio.mrm.unwrap().tx_power_dbm, 1.5);
}

/// A line of three motes, 10 m apart: border router, server, client.
const LINE: &str = "[topology]\nnodes = [\n\
    { id = 1, role = \"border_router\", x = 0.0, y = 0.0 },\n\
    { id = 2, role = \"server\", x = 10.0, y = 0.0 },\n\
    { id = 3, role = \"client\", x = 20.0, y = 0.0 },\n]\n";

#[test]
fn explicit_nodes_need_no_layout_and_a_preset_takes_them() {
    let s = MeshScenario::from_toml(LINE).unwrap();
    assert_eq!(s.topology.layout, None);
    let nodes = s.nodes().unwrap();
    assert_eq!(nodes.len(), 3);
    assert_eq!((nodes[2].role, nodes[2].x), (topology::Role::Client, 20.0));
    assert!(s.resolve().is_ok());
    // nothing given: the default layout; both given: refused
    assert_eq!(MeshScenario::from_toml("").unwrap().topology.layout.as_deref(), Some("grid3x3"));
    let both = format!("{}layout = \"grid6x6\"\n", LINE);
    let e = MeshScenario::from_toml(&both).unwrap().nodes().unwrap_err().to_string();
    assert!(e.contains("exactly one of `layout` and `nodes`"), "{e}");
    // a preset (which names a layout) overlaid with nodes: the nodes replace the layout
    let mut table: toml::Table = super::super::presets::text("nitk-gst-cooja").unwrap().parse().unwrap();
    crate::scenario::overlay(&mut table, LINE.parse().unwrap());
    let s: MeshScenario = table.try_into().unwrap();
    assert_eq!((s.topology.layout.clone(), s.nodes().unwrap().len()), (None, 3));
}

#[test]
fn a_workload_kind_carries_its_own_keys_and_only_its_own() {
    let traffic = |text: &str| MeshScenario::from_toml(text).unwrap().resolve().map(|r| r.traffic);
    // the kind's table, its defaults where left out
    let t = traffic("[workload]\nkind = \"burst\"\n[workload.burst]\nstart_s = 10.0\n").unwrap();
    assert_eq!(t, Traffic::Burst(BurstKeys { start_s: 10.0, ..BurstKeys::default() }));
    assert_eq!(traffic("[workload]\nkind = \"baseline\"\n").unwrap(), Traffic::Baseline(BaselineKeys::default()));
    assert_eq!(traffic("[workload]\nkind = \"continuous\"\n").unwrap(), Traffic::Continuous);
    assert_eq!(traffic("").unwrap(), Traffic::PeriodicBlocking);
    // another kind's table would be read by nothing: refused, naming both
    let e = traffic("[workload]\nkind = \"continuous\"\n[workload.burst]\nstart_s = 10.0\n").unwrap_err().to_string();
    assert!(e.contains("workload.burst holds the keys of kind = \"burst\", but kind = \"continuous\""), "{e}");
    let e = traffic("[workload.collect]\nkbps = [1.0]\n").unwrap_err().to_string();
    assert!(e.contains("kind = \"periodic_blocking\""), "{e}");
}

/// `env` is a typed key: its one value reads and writes as `lln`; another is refused with it named.
#[test]
fn env_is_lln_or_refused() {
    assert_eq!(MeshScenario::from_toml("env = \"lln\"").unwrap().env, MeshEnv::Lln);
    let e = MeshScenario::from_toml("env = \"mesh\"").unwrap_err().to_string();
    assert!(e.contains("env") && e.contains("`lln`"), "{e}");
    let json = serde_json::to_value(MeshScenario::default()).unwrap();
    assert_eq!(json["env"], "lln");
}

#[test]
fn a_mote_s_first_dis_is_given_by_id_in_start_up_only() {
    let toml = "[topology]\nrpl_startup = true\nrpl_dis_ms = { 2 = 17005.5 }\n\
        nodes = [{ id = 1, role = \"border_router\", x = 0.0, y = 0.0 }, { id = 2, role = \"client\", x = 18.0, y = 0.0 }, \
        { id = 3, role = \"server\", x = 9.0, y = 0.0 }]\n";
    let m = MeshScenario::from_toml(toml).unwrap().resolve().unwrap().mesh;
    assert_eq!(m.dis_first_ns, vec![None, Some(17_005_500_000), None]);
    let e = |t: &str| MeshScenario::from_toml(t).unwrap().resolve().unwrap_err().to_string();
    assert!(e(&toml.replace("rpl_startup = true", "rpl_startup = false")).contains("needs topology.rpl_startup"));
    assert!(e(&toml.replace("{ 2 = 17005.5 }", "{ 9 = 1.0 }")).contains("topology.rpl_dis_ms.9"));
    assert!(e(&toml.replace("17005.5", "-1.0")).contains("ms >= 0"));
}

#[test]
fn the_root_s_prefix_instant_is_read_in_start_up_only() {
    let toml = "[topology]\nrpl_startup = true\nrpl_root_start_ms = 1551.8\n";
    let m = MeshScenario::from_toml(toml).unwrap().resolve().unwrap().mesh;
    assert_eq!(m.rpl.unwrap().root_start_ns, 1_551_800_000);
    let e = |t: &str| MeshScenario::from_toml(t).unwrap().resolve().unwrap_err().to_string();
    assert!(e(&toml.replace("rpl_startup = true", "rpl_startup = false")).contains("needs topology.rpl_startup"));
    assert!(e(&toml.replace("1551.8", "-1.0")).contains("topology.rpl_root_start_ms"));
    assert!(e(&toml.replace("1551.8", "nan")).contains("topology.rpl_root_start_ms"));
}
