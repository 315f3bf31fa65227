//! The model against Cooja's latency ladder: one client h = 1 … 4 hops from the server on a
//! line of Z1 motes 9.5 m apart (UDGM 10 / 20 m, ratios 1.0), the NITK firmware's default CoAP
//! client back to back, 300 s. Cooja's figures are measurements of Cooja 3.x with MSPSim running
//! the NITK author's binaries (the reference dataset docs/validation.md describes, runs
//! `A-ladder-h1-s1` … `h4-s1`, steady window): the median on-air exchange (request's first symbol
//! to response's last, exchanges without a retransmission) and the client's median gap from a
//! response's last symbol to its next request's first, and the completed exchanges per second of
//! the exchanges started in Cooja's steady window (from 60, 29, 29, 60 s to the end). The goals
//! are the issue's: exchange time within 10 %, completed exchanges per second within 15 %. The
//! completed rate depends on the rare losses that stall the client for its 3–4.5 s timer, which
//! on the ladder come from RPL's control frames (the model sends them: `topology.rpl_control`).

mod reference_runs;

use netmodel::mesh::topology::{NodeSpec, Role};
use netsim::mesh::MeshScenario;

/// Cooja, per hop count: (on-air exchange, client's gap to its next request, completed/s, the
/// steady window's start in s).
const COOJA: [(f64, f64, f64, f64); 4] = [
    (8.037, 7.148, 62.2401, 60.0),
    (20.151, 7.175, 32.1695, 29.0),
    (32.001, 7.101, 21.6071, 29.0),
    (44.085, 7.099, 16.8909, 60.0),
];

/// The ladder of `hops`: border router at 0, server at 9.5 m, the relays, the client last.
fn ladder(hops: usize) -> MeshScenario {
    let mut nodes = vec![
        NodeSpec { id: 1, role: Role::BorderRouter, x: 0.0, y: 0.0 },
        NodeSpec { id: 2, role: Role::Server, x: 9.5, y: 0.0 },
    ];
    for k in 1..hops {
        nodes.push(NodeSpec { id: 2 + k as u32, role: Role::Router, x: 9.5 * (k + 1) as f64, y: 0.0 });
    }
    nodes.push(NodeSpec { id: 2 + hops as u32, role: Role::Client, x: 9.5 * (hops + 1) as f64, y: 0.0 });
    reference_runs::back_to_back(nodes, 300.0)
}

#[test]
fn the_ladder_keeps_within_the_goals_of_cooja() {
    for (h, &(air, gap, completed, from_s)) in COOJA.iter().enumerate().map(|(i, c)| (i + 1, c)) {
        let s = ladder(h);
        let (r, mut by_hops) = reference_runs::on_air_by_hops(&s);
        let e = &r.exchanges;
        let clean = |x: &netsim::ExchangeRecord| x.rtt_ns.is_some() && x.retransmissions == 0;
        let on_air = reference_runs::median(by_hops.remove(&(h as u32)).unwrap_or_default());
        let cycle = reference_runs::median(
            e.windows(2).filter(|w| clean(&w[0])).map(|w| (w[1].start_ns - w[0].start_ns) as f64 / 1e6).collect(),
        );
        let from_ns = (from_s * 1e9) as u64;
        let steady = e.iter().filter(|x| x.start_ns >= from_ns && x.rtt_ns.is_some()).count();
        let rate = steady as f64 / (s.duration_s - from_s);
        let off = |m: f64, c: f64| (m / c - 1.0).abs();
        assert!(off(on_air, air) <= 0.10, "{h} hops: on air {on_air:.3} ms, Cooja {air}");
        assert!(off(cycle, air + gap) <= 0.10, "{h} hops: loss-free cycle {cycle:.3} ms, Cooja {}", air + gap);
        assert!(off(rate, completed) <= 0.15, "{h} hops: {rate:.2} completed/s, Cooja {completed}");
    }
}
