//! The model against Cooja's 3×3 grid: nine Z1 motes about 10 m apart (UDGM 10 / 20 m, ratios
//! 1.0), the border router at the centre, the server in a corner, seven NITK default CoAP
//! clients back to back, 600 s. Cooja's figures are measurements of Cooja 3.x with MSPSim
//! running the NITK author's binaries (the reference dataset docs/validation.md describes, run
//! `B-grid3x3-r1.0-s1`, steady window 130–536 s): the median on-air exchange (request's first
//! symbol to response's last, exchanges without a retransmission) by route length, and the
//! frames on the air per completed exchange (CoAP requests and responses, forwarded copies and
//! retries, 802.15.4 ACKs). The model runs the same motes with every RPL parent pinned to the
//! one Cooja's RPL had at the end of that run, RPL's control frames on the air. The goals are
//! the issue's: exchange time by route length within 10 %, frames per exchange within 15 %.
//! (The completed rate misses its goal on this grid; docs/validation.md says why.)

mod reference_runs;

use netmodel::mesh::topology::{NodeSpec, Role};
use netsim::mesh::MeshScenario;

/// Cooja's median on-air exchange by route length, 1 … 4 hops, ms.
const COOJA_AIR_MS: [f64; 4] = [8.285, 20.592, 42.637, 54.313];

/// Cooja's frames per completed exchange in the steady window: CoAP requests 2.6386, responses
/// 2.5641, 802.15.4 ACKs 1.2483.
const COOJA_FRAMES_PER_COMPLETED: f64 = 2.6386 + 2.5641 + 1.2483;

/// The motes in Cooja id order (1 … 8, then the server 11 as model id 9): where the run placed
/// them, and the parent Cooja's RPL gave each (model ids).
const MOTES: [(Role, f64, f64, Option<u32>); 9] = [
    (Role::BorderRouter, 0.0, 0.0, None),
    (Role::Client, -10.0508, 9.8793, Some(5)),
    (Role::Client, -0.1429, 9.7384, Some(1)),
    (Role::Client, 9.7518, 9.7236, Some(6)),
    (Role::Client, -9.9381, 0.0079, Some(1)),
    (Role::Client, 9.8149, -0.0185, Some(1)),
    (Role::Client, -10.1176, -9.9732, Some(8)),
    (Role::Client, -0.1444, -9.8241, Some(1)),
    (Role::Server, 9.8241, -9.8032, Some(8)),
];

fn grid() -> MeshScenario {
    let nodes = (1..).zip(&MOTES).map(|(id, &(role, x, y, _))| NodeSpec { id, role, x, y }).collect();
    let mut s = reference_runs::back_to_back(nodes, 600.0);
    s.topology.parents = (1..).zip(&MOTES).filter_map(|(id, m): (u32, _)| m.3.map(|p| (id.to_string(), p))).collect();
    s
}

#[test]
fn the_three_by_three_grid_keeps_cooja_s_exchange_time_and_frames_per_exchange() {
    let (r, mut by_hops) = reference_runs::on_air_by_hops(&grid());
    let mesh = reference_runs::mesh(&r);
    // the pins gave Cooja's tree: client 2's requests go 2 → 5 → 1 → 8 → 9, 7's 7 → 8 → 9
    let hops = |client_id| reference_runs::hops(mesh, client_id);
    assert_eq!((hops(2), hops(7), hops(8)), (Some(4), Some(2), Some(1)));
    reference_runs::assert_on_air_within_10_percent(&mut by_hops, &COOJA_AIR_MS);
    // frames per completed exchange over the model's whole run (its routes exist from the
    // start), RPL's control frames apart
    let frames: u64 = mesh.report.nodes.iter().map(|n| n.stats.frames_sent + n.stats.acks_sent).sum();
    let completed = r.exchanges.iter().filter(|x| x.rtt_ns.is_some()).count();
    let per = frames as f64 / completed as f64;
    assert!(
        (per / COOJA_FRAMES_PER_COMPLETED - 1.0).abs() <= 0.15,
        "{per:.3} frames per completed exchange, Cooja {COOJA_FRAMES_PER_COMPLETED:.3}"
    );
}
