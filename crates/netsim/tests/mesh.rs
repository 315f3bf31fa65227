//! The mesh world end to end: exact timing on a quiet hop, determinism, and packet accounting.

use netmodel::mesh::topology::{NodeSpec, Role};
use netmodel::mesh::Mesh;
use netmodel::{HostId, Periodic};
use netsim::mesh::{self, MeshScenario};
use netsim::{NetworkReport, Summary};
use proptest::prelude::*;

fn node(id: u32, role: Role, x: f64, y: f64) -> NodeSpec {
    NodeSpec { id, role, x, y }
}

/// Border router (0, 0), server (9, 0), client (9, 9): the client's only neighbour is the
/// server (the border router is 12.7 m away), so its requests take one hop each way.
fn one_hop() -> MeshScenario {
    let mut s = MeshScenario::default();
    s.topology.layout = None;
    s.topology.nodes = Some(vec![
        node(1, Role::BorderRouter, 0.0, 0.0),
        node(2, Role::Server, 9.0, 0.0),
        node(3, Role::Client, 9.0, 9.0),
    ]);
    s.duration_s = 2.0;
    s.reps = 1;
    s.workload.start_spread_ms = 0.0;
    // the routes exist from the start (the defaults let RPL form them as the run goes)
    s.topology.rpl_startup = false;
    s
}

#[test]
fn one_hop_exchange_time_is_the_sum_of_the_models_delays() {
    // the NITK firmware (the defaults): client: tx_prepare 1000 µs + its CoAP 1000, turnaround
    // 224, request airtime (6 + 58)·32 = 2048 (IPHC against context 0); server: rx 2000 + app
    // 1000, tx_prepare 1000, turnaround 224, response (6 + 63)·32 = 2208; client: rx 2000 →
    // 12 704 µs. The client's console output (after its request's frame, during the server's
    // work, and after the response) falls outside the exchange.
    let with = 1_000 + 1_000 + 224 + 2_048 + 2_000 + 1_000 + 1_000 + 224 + 2_208 + 2_000;
    // without the context, the client's CoAP time and the console: 89- and 94-byte frames
    // (3040 and 3200 µs) → 13 688 µs
    let without = 1_000 + 224 + 3_040 + 2_000 + 1_000 + 1_000 + 224 + 3_200 + 2_000;
    let mut bare = one_hop();
    bare.stack.context_matches_lln_prefix = false;
    bare.stack.client_app_us = 0;
    bare.stack.uart_byte_ns = 0;
    for (s, expected) in [(one_hop(), with), (bare, without)] {
        let res = s.resolve().unwrap();
        let r = mesh::run_rep(&s, &res, 0, None);
        assert_eq!(r.exchanges.len(), 20, "requests at 0, 0.1, …, 1.9 s");
        for e in &r.exchanges {
            assert_eq!(e.rtt_ns, Some(expected * 1_000), "exchange {}", e.index);
            assert_eq!(e.retransmissions, 0);
        }
        let NetworkReport::Mesh(m) = &r.network else { panic!("a mesh run") };
        assert_eq!(m.routes[0].hops, Some(1));
        // periodic: consecutive requests 100 ms apart
        assert_eq!(r.exchanges[1].start_ns - r.exchanges[0].start_ns, 100_000_000);
    }
}

/// Back to back (the firmware's 0-tick timer): the stack hands the next request down as the
/// response arrives, and it waits there for the client's console, 39 printed bytes
/// (39 · 69 125 ns = 2 695 875 ns): every exchange after the first takes 12 704 µs (above) + that.
#[test]
fn a_back_to_back_client_waits_for_its_console_between_exchanges() {
    let mut s = one_hop();
    s.workload.kind = mesh::scenario::Pattern::Continuous;
    let res = s.resolve().unwrap();
    let r = mesh::run_rep(&s, &res, 0, None);
    let (first, next) = (12_704_000, 12_704_000 + 39 * 69_125);
    assert_eq!(r.exchanges[0].rtt_ns, Some(first));
    for w in r.exchanges.windows(2) {
        assert_eq!(w[1].start_ns - w[0].start_ns, w[0].rtt_ns.unwrap(), "back to back");
        if w[1].rtt_ns.is_some() {
            assert_eq!(w[1].rtt_ns, Some(next), "exchange {}", w[1].index);
        }
    }
    // 2 s hold the first and ⌊(2 s − first) / next⌋ more (the one open at the end is not reported)
    assert_eq!(r.exchanges.len() as u64, 1 + (2_000_000_000 - first) / next);
}

#[test]
fn grid3x3_runs_and_is_deterministic() {
    // RPL forms its DODAG first (the defaults): the first exchanges wait for routes
    let mut s = MeshScenario { duration_s: 120.0, reps: 2, ..MeshScenario::default() };
    s.cc = "default".into();
    let res = s.resolve().unwrap();
    let a: Vec<_> = (0..2).map(|r| mesh::run_rep(&s, &res, r, None)).collect();
    let b: Vec<_> = (0..2).rev().map(|r| mesh::run_rep(&s, &res, r, None)).collect();
    assert_eq!(a[0], b[1]);
    assert_eq!(a[1], b[0]);
    assert_ne!(a[0].exchanges, a[1].exchanges, "replications differ");
    let sum = Summary::new(&a);
    let m = sum.mesh.as_ref().unwrap();
    // 7 clients each asking every 100 ms: at most 70 exchanges/s
    assert!(m.transactions_per_s > 0.0 && m.transactions_per_s <= 70.0, "{}", m.transactions_per_s);
    assert!(m.pdr > 0.0 && m.pdr <= 1.0);
    // the per-replication values average to the pooled ones; every armed RTO is in the series
    assert_eq!(m.per_rep.len(), 2);
    let avg = |f: &dyn Fn(&mesh::summary::RepMetrics) -> f64| (f(&m.per_rep[0]) + f(&m.per_rep[1])) / 2.0;
    assert!((avg(&|r| r.transactions_per_s) - m.transactions_per_s).abs() < 1e-9);
    assert!((avg(&|r| r.retransmissions as f64) - m.retransmissions_total).abs() < 1e-9);
    assert!((avg(&|r| r.rto_max_s) - m.rto_s.max_mean).abs() < 1e-9);
    let series = &m.rto_over_time;
    assert_eq!(series.mean_s.len(), mesh::summary::RTO_BINS);
    assert!((series.bin_s * mesh::summary::RTO_BINS as f64 - 120.0).abs() < 1e-9);
    let top = series.max_s.iter().copied().filter(|x| !x.is_nan()).fold(0.0, f64::max);
    assert_eq!(top, m.rto_s.max);
    // the hop counts of §9.1's min-hop routes (RPL formed the tree: a mote keeps the first of equal
    // parents, so which one it is may differ): the server's neighbour 6 1 hop, 4 2 hops, the others via the BR
    let NetworkReport::Mesh(run) = &a[0].network else { panic!() };
    let hops: Vec<(u32, Option<u32>)> = run.routes.iter().map(|r| (r.client, r.hops)).collect();
    assert_eq!(
        hops,
        [(2, Some(4)), (3, Some(3)), (4, Some(2)), (5, Some(3)), (6, Some(1)), (7, Some(4)), (8, Some(3))]
    );
}

fn layout(points: &[(f64, f64)], servers: usize) -> Vec<NodeSpec> {
    points
        .iter()
        .enumerate()
        .map(|(i, &(x, y))| {
            let role = match i {
                0 => Role::BorderRouter,
                i if i <= servers => Role::Server,
                _ => Role::Client,
            };
            node(i as u32 + 1, role, x, y)
        })
        .collect()
}

/// Once a run has drained, every packet the stacks sent was delivered or dropped for one
/// counted cause; per mote, every packet it had to send became a frame (ContikiMAC: was taken by
/// the next hop) or a drop; every frame sent arrived (ContikiMAC: or was a duplicate) or was lost
/// for one counted cause.
#[allow(clippy::too_many_arguments)]
fn accounting_holds(
    points: &[(f64, f64)],
    p_tx: f64,
    p_rx: f64,
    csma: bool,
    contikimac: bool,
    interval_ms: u64,
    seed: u64,
) -> Result<(), TestCaseError> {
    let stack = Stack { csma, contikimac, ..Stack::default() };
    accounting_holds_on(points, p_tx, p_rx, stack, interval_ms, seed)
}

/// The stack of [`accounting_holds_on`]'s motes.
#[derive(Debug, Clone, Copy, Default)]
struct Stack {
    csma: bool,
    contikimac: bool,
    /// Cooja motes (nullrdc ACKs every unicast: CSMA sends again what was not acknowledged).
    cooja: bool,
    /// MSPSim's partial frames stalling the RX FIFO.
    stall: bool,
}

/// [`accounting_holds`] on motes with `stack`.
fn accounting_holds_on(
    points: &[(f64, f64)],
    p_tx: f64,
    p_rx: f64,
    stack: Stack,
    interval_ms: u64,
    seed: u64,
) -> Result<(), TestCaseError> {
    let Stack { csma, contikimac, cooja, stall } = stack;
    let mut s = MeshScenario::default();
    s.topology.layout = None;
    s.topology.nodes = Some(layout(points, 1));
    s.radio.success_ratio_tx = p_tx;
    s.radio.success_ratio_rx = p_rx;
    if csma {
        s.stack.mac = mesh::scenario::Mac::Csma;
        s.stack.queuebuf_num = 2;
    }
    if contikimac {
        s.stack.rdc = mesh::scenario::RdcName::Contikimac;
    }
    s.stack.partial_frame_stall = stall && !cooja;
    if cooja {
        s.stack.mote = mesh::scenario::Mote::Cooja;
        s.stack.br.rdc = Some(mesh::scenario::RdcName::Nullrdc);
        s.stack.br.keep_radio_on = false;
    }
    s.seed = seed;
    let res = match s.resolve() {
        Ok(res) => res,
        // a random layout may leave no client a route to a server: not a case of the property
        Err(e) if e.to_string().contains("has no client with a server") => {
            return Err(TestCaseError::reject("no client reaches a server"))
        }
        Err(e) => return Err(TestCaseError::fail(format!("resolve: {e}"))),
    };
    // clients stop starting at 20 s; the run then drains (the limit is far away)
    let clients: Vec<(HostId, u64)> = res.clients.iter().map(|&(c, _)| (HostId(c), interval_ms * 1_000_000)).collect();
    let workload = Periodic::new(&clients, 20_000_000_000, 1.0, seed, 0);
    let medium = Mesh::new(res.mesh.clone(), seed, 0);
    let stack = netsim::mesh::stack(&s, &res, 0);
    let r = netsim::engine::run(
        medium,
        stack,
        workload,
        netsim::Recorder::new(0, None),
        netsim::engine::Until::SafetyNet(coap_cc::Instant::from_nanos(10_000_000_000_000)),
    );
    prop_assert!(!r.truncated);
    let nodes = r.network.nodes;
    let sum = |f: &dyn Fn(&netmodel::mesh::NodeStats) -> u64| nodes.iter().map(|n| f(&n.stats)).sum::<u64>();
    for n in &nodes {
        let st = &n.stats;
        // nullrdc: a packet is one frame; ContikiMAC (every mote, or the default scenario's
        // border router, whose radio is kept on), or CSMA on Cooja motes (the border router's
        // always): one frame or more, until the next hop took it
        let retried = cooja && (csma || n.id == 1);
        let out = if n.contikimac || retried { st.handed_over } else { st.frames_sent };
        prop_assert_eq!(st.originated + st.forwarded, out + st.drops.packet_drops(), "mote {}", n.id);
    }
    prop_assert_eq!(
        sum(&|s| s.frames_sent),
        sum(&|s| s.frames_received + s.duplicates + s.drops.frame_losses() + s.copy_drops.frame_losses())
    );
    prop_assert_eq!(sum(&|s| s.frames_received), sum(&|s| s.forwarded) + sum(&|s| s.delivered));
    prop_assert_eq!(sum(&|s| s.originated), sum(&|s| s.delivered) + sum(&|s| s.drops.total()));
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn no_packet_is_lost_unaccounted(
        points in prop::collection::vec((0.0..35.0f64, 0.0..35.0f64), 4..12),
        p_tx in 0.5..1.0f64,
        p_rx in 0.3..1.0f64,
        csma in any::<bool>(),
        contikimac in any::<bool>(),
        interval_ms in 30u64..400,
        seed in 0u64..1000,
    ) {
        accounting_holds(&points, p_tx, p_rx, csma, contikimac, interval_ms, seed)?;
    }

    /// The same with ContikiMAC on denser meshes (most of them connected).
    #[test]
    fn no_packet_is_lost_unaccounted_under_contikimac(
        points in prop::collection::vec((0.0..18.0f64, 0.0..18.0f64), 4..10),
        p_tx in 0.7..1.0f64,
        p_rx in 0.5..1.0f64,
        csma in any::<bool>(),
        interval_ms in 50u64..2000,
        seed in 0u64..1000,
    ) {
        accounting_holds(&points, p_tx, p_rx, csma, true, interval_ms, seed)?;
    }

    /// The same with MSPSim's partial frames (back-to-back clients on a dense mesh: many).
    #[test]
    fn no_packet_is_lost_unaccounted_with_partial_frames(
        points in prop::collection::vec((0.0..25.0f64, 0.0..25.0f64), 4..12),
        p_rx in 0.5..1.0f64,
        csma in any::<bool>(),
        seed in 0u64..1000,
    ) {
        accounting_holds_on(&points, 1.0, p_rx, Stack { csma, stall: true, ..Stack::default() }, 30, seed)?;
    }

    /// The same on Cooja motes.
    #[test]
    fn no_packet_is_lost_unaccounted_on_cooja_motes(
        points in prop::collection::vec((0.0..35.0f64, 0.0..35.0f64), 4..12),
        p_tx in 0.5..1.0f64,
        p_rx in 0.3..1.0f64,
        csma in any::<bool>(),
        interval_ms in 30u64..400,
        seed in 0u64..1000,
    ) {
        accounting_holds_on(&points, p_tx, p_rx, Stack { csma, cooja: true, ..Stack::default() }, interval_ms, seed)?;
    }
}

/// A mobile preset runs the same twice (also with its replications in the other order), its
/// clients leave trails, and motes out of every neighbour's range drop for want of a route.
/// A model's moves written to a Cooja positions file and replayed give the same run exactly.
#[test]
fn mobility_is_deterministic_and_a_written_trace_replays_the_same_run() {
    use netmodel::mesh::mobility::{write_positions, Mover};
    use netmodel::Stream;
    let text = netsim::mesh::presets::text("nitk-cocoapp-mobile-rwp").unwrap();
    let s = MeshScenario { duration_s: 120.0, reps: 2, ..MeshScenario::from_toml(text).unwrap() };
    let res = s.resolve().unwrap();
    let a: Vec<_> = (0..2).map(|r| mesh::run_rep(&s, &res, r, None)).collect();
    let b: Vec<_> = (0..2).rev().map(|r| mesh::run_rep(&s, &res, r, None)).collect();
    assert_eq!((&a[0], &a[1]), (&b[1], &b[0]));
    let NetworkReport::Mesh(m) = &a[0].network else { panic!("a mesh run") };
    let trails: Vec<usize> = m.report.nodes.iter().map(|n| n.trail.len()).collect();
    assert!(trails.iter().filter(|&&l| l == 13).count() == 33, "33 clients, a point every 10 s: {trails:?}");
    assert!(trails.iter().filter(|&&l| l == 0).count() == 3, "the router and two servers stay");
    // the same moves from a file: write replication 0's trace, replay it
    let mesh = &res.mesh;
    let mob = mesh.mobility.as_ref().unwrap();
    let netmodel::mesh::mobility::MobilitySource::Model { model, mobile } = &mob.source else { panic!("a model") };
    let mut pos = mesh.positions();
    let mover = Mover::new(
        *model,
        mob.area,
        &mut pos,
        mobile,
        |i| Stream::Mobility(i as u32).rng(s.seed, 0),
        Stream::PursueTarget.rng(s.seed, 0),
    );
    let moves = mover.trace(pos, 1.0, s.duration_s);
    let path = std::env::temp_dir().join(format!("coapcc-positions-{}.txt", std::process::id()));
    std::fs::write(&path, write_positions(&moves)).unwrap();
    let mut t = MeshScenario { reps: 1, ..s.clone() };
    t.topology.mobility = None;
    t.topology.positions = Some(path.to_string_lossy().into_owned());
    let tres = t.resolve().unwrap();
    let replay = mesh::run_rep(&t, &tres, 0, None);
    std::fs::remove_file(&path).unwrap();
    assert_eq!(replay, a[0], "the replayed trace is the model's run");
}

/// CLOUD's many-to-many on the simulator: 29 cloud clients behind the border router, one per
/// server mote; they complete exchanges, their messages are counted for the PDR (from the cloud
/// side), their routes are the border router's, and a run repeats exactly.
#[test]
fn cloud_clients_reach_the_motes_through_the_border_router() {
    let text = netsim::mesh::presets::text("cloud-m2m-nullrdc").unwrap();
    let s = MeshScenario { duration_s: 60.0, reps: 1, ..MeshScenario::from_toml(text).unwrap() };
    let res = s.resolve().unwrap();
    assert_eq!(res.clients.len(), 29);
    assert!(res.clients.iter().all(|&(c, _)| c >= 30), "cloud hosts come after the 30 motes");
    let a = mesh::run_rep(&s, &res, 0, None);
    assert_eq!(a, mesh::run_rep(&s, &res, 0, None));
    assert!(a.exchanges.iter().filter(|e| e.rtt_ns.is_some()).count() > 29);
    let NetworkReport::Mesh(m) = &a.network else { panic!("a mesh run") };
    let cloud = m.report.cloud.expect("cloud counters");
    assert!(cloud.originated > 0 && cloud.delivered > 0 && cloud.delivered <= cloud.originated);
    // the border router (id 15, at the lattice's (2, 2)) to its corner server id 1 at (0, 0):
    // 4 hops on the lattice (R = 12 m links only the four neighbours)
    let to1 = m.routes.iter().find(|r| r.server == 1).unwrap();
    assert_eq!((to1.hops, to1.client), (Some(4), 31));
    let sum = Summary::new(&[a]);
    assert!(sum.mesh.as_ref().is_some_and(|l| l.pdr > 0.0 && l.pdr <= 1.0), "{:?}", sum.mesh.map(|l| l.pdr));
}

/// CLOUD's burst: 4 clients (drawn per replication) run from 0 s; the 25 others start at 450 s
/// and send at most 50 requests each.
#[test]
fn the_cloud_burst_groups() {
    let text = netsim::mesh::presets::text("cloud-burst-nullrdc").unwrap();
    let s = MeshScenario { duration_s: 600.0, reps: 1, ..MeshScenario::from_toml(text).unwrap() };
    let res = s.resolve().unwrap();
    let mut groups = Vec::new();
    for rep in 0..2 {
        let r = mesh::run_rep(&s, &res, rep, None);
        let mut early = Vec::new();
        for c in &r.clients {
            let mine: Vec<_> = r.exchanges.iter().filter(|e| e.client == c.client).collect();
            if mine.first().is_some_and(|e| e.start_ns < 450_000_000_000) {
                early.push(c.client);
            } else {
                assert!(mine.len() <= 50, "client {}: {} requests", c.client, mine.len());
                assert!(mine.first().is_none_or(|e| e.start_ns >= 450_000_000_000));
            }
        }
        assert_eq!(early.len(), 4, "rep {rep}");
        groups.push(early);
    }
    assert_ne!(groups[0], groups[1], "each replication draws its continuous group");
}

/// CLOUD's baseline: the clients run one after the other in id order, each its 3 exchanges back
/// to back, the next one's first request exactly 5 s after the previous one's last exchange
/// ended (a response, or a failure when its last timer expired); the run ends with the last.
#[test]
fn the_cloud_baseline_runs_each_server_in_turn() {
    let text = netsim::mesh::presets::text("cloud-baseline-contikimac").unwrap();
    let mut s = MeshScenario { reps: 1, ..MeshScenario::from_toml(text).unwrap() };
    s.workload.baseline = Some(netsim::mesh::scenario::BaselineKeys { exchanges: 3, gap_s: 5.0 });
    let res = s.resolve().unwrap();
    let r = mesh::run_rep(&s, &res, 0, None);
    assert!(!r.truncated);
    let mut clients: Vec<u32> = r.exchanges.iter().map(|e| e.client).collect();
    clients.dedup();
    assert_eq!(clients.len(), 29);
    assert!(clients.windows(2).all(|w| w[0] < w[1]), "in id order");
    let mut prev_end = None;
    for c in clients {
        let mine: Vec<_> = r.exchanges.iter().filter(|e| e.client == c).collect();
        assert_eq!(mine.len(), 3);
        for w in mine.windows(2) {
            assert_eq!(w[1].start_ns, w[0].end_ns(), "back to back");
        }
        let first = mine[0].start_ns;
        assert_eq!(first, prev_end.map_or(0, |t| t + 5_000_000_000));
        prev_end = Some(mine[2].end_ns());
    }
    let NetworkReport::Mesh(m) = &r.network else { panic!("a mesh run") };
    assert_eq!(m.duration_ns, prev_end.unwrap(), "the run lasts until the last client is done");
    // the summary's per-server figures cover every server's turn
    assert!(m.chained);
    let b = netsim::mesh::summary::mesh_metrics(std::slice::from_ref(&r)).unwrap().baseline.unwrap();
    assert_eq!(b.servers, 29.0);
    assert!(b.throughput_per_s > 0.0 && b.exchange_duration_s > 0.0, "{b:?}");
}

/// With `outstanding = "nstart"`, CLOUD's `cocoa4` clients (NSTART 4) keep 4 exchanges open at
/// once and never more; `cocoa`'s (NSTART 1) one at a time.
#[test]
fn cloud_clients_keep_nstart_exchanges_open() {
    let text = netsim::mesh::presets::text("cloud-m2m-nullrdc").unwrap();
    let most_open = |cc: &str| {
        let s = MeshScenario { reps: 1, duration_s: 60.0, cc: cc.into(), ..MeshScenario::from_toml(text).unwrap() };
        let res = s.resolve().unwrap();
        let r = mesh::run_rep(&s, &res, 0, None);
        let mut most = 0;
        for e in &r.exchanges {
            // exchanges of its client open when it starts (itself included)
            let open = r
                .exchanges
                .iter()
                .filter(|o| o.client == e.client && o.start_ns <= e.start_ns && o.end_ns() > e.start_ns)
                .count();
            most = most.max(open);
        }
        most
    };
    assert_eq!(most_open("cocoa4"), 4);
    assert_eq!(most_open("cocoa"), 1);
}

/// RTTCOAP's homogeneous collection: every mote but the border router sends its 51-byte CON
/// messages to the collector (the border router), which echoes RTT-CoAP's counter; the time
/// series has one window per 60 s and its goodput adds up to the successes' bits.
#[test]
fn rttcoap_sources_send_to_the_collector() {
    let text = netsim::mesh::presets::text("rttcoap-homog-57").unwrap();
    let s = MeshScenario {
        reps: 1,
        duration_s: 600.0,
        cc: "rtt_coap:nstart=4".into(),
        ..MeshScenario::from_toml(text).unwrap()
    };
    let res = s.resolve().unwrap();
    assert_eq!(res.clients.len(), 56);
    assert!(res.clients.iter().all(|&(_, server)| server == 0), "the collector is mote 1");
    // header 4 + token 2 + Observe (1 + 3) + payload marker 1 + 40
    assert_eq!(res.request_bytes, 51);
    // 0.05 kbit/s then 0.10: 8·51/50 = 8.16 s, 4.08 s
    assert_eq!(res.open_loop.as_ref().unwrap().intervals_ns[..2], [8_160_000_000, 4_080_000_000]);
    let r = mesh::run_rep(&s, &res, 0, None);
    let successes = r.exchanges.iter().filter(|e| e.rtt_ns.is_some()).count();
    assert!(successes > 100);
    let metrics = mesh::summary::mesh_metrics(std::slice::from_ref(&r)).unwrap();
    let w = metrics.windows.as_ref().unwrap();
    assert_eq!((w.window_s, w.goodput_bps.len()), (60.0, 10));
    let bits: f64 = w.goodput_bps.iter().map(|g| g * 60.0).sum();
    assert!((bits - successes as f64 * 51.0 * 8.0).abs() < 1e-6, "{bits}");
    assert!(w.jain.iter().all(|j| j.is_nan() || (0.0..=1.0).contains(j)));
}

/// RTTCOAP's mixed scenario: beside the CON notifications, every source sends its share of the
/// background's aggregate rate as NON notifications that nothing regulates. Over the first two
/// 400-s steps (2 and 2 + 42/17 kbit/s among 111 sources, 51-byte messages) each source sends
/// every 8·51·111/2000 = 22.644 s, then every 10.130 s: 400/22.644 + 400/10.130 ≈ 57.2 each,
/// within 3 of it whatever its phase; the collector takes some of them.
#[test]
fn rttcoap_background_notifications_follow_their_rate_steps() {
    let text = netsim::mesh::presets::text("rttcoap-mixed-112").unwrap();
    let s = MeshScenario { reps: 1, duration_s: 800.0, ..MeshScenario::from_toml(text).unwrap() };
    let res = s.resolve().unwrap();
    let bg = res.background.as_ref().unwrap();
    assert_eq!(bg.intervals_ns[0], 22_644_000_000);
    let i1 = 8.0 * 51.0 * 111.0 / (2.0 + 42.0 / 17.0) * 1e6;
    assert!((bg.intervals_ns[1] as f64 - i1).abs() <= 1.0, "{} vs {i1}", bg.intervals_ns[1]);
    let r = mesh::run_rep(&s, &res, 0, None);
    let each = 400.0 / 22.644 + 400.0 / (8.0 * 51.0 * 111.0 / (2.0 + 42.0 / 17.0) / 1000.0);
    let sent = r.stats.background_sent as f64;
    assert!((sent - 111.0 * each).abs() <= 111.0 * 3.0, "{sent} vs {}", 111.0 * each);
    assert!(r.stats.background_delivered > 0 && r.stats.background_delivered <= r.stats.background_sent);
}
