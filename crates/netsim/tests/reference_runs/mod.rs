//! What the tests against Cooja's reference runs share: a run's motes as the firmware ran them,
//! and the model's exchange time turned into Cooja's on-air time.
// each test crate that includes this module uses part of it
#![allow(dead_code)]

use std::collections::{BTreeMap, HashSet};

use netmodel::mesh::topology::NodeSpec;
use netsim::mesh::{self, MeshRun, MeshScenario};
use netsim::record::RepResult;
use netsim::NetworkReport;

/// `nodes` as explicit motes, the NITK firmware's default CoAP clients back to back, RPL's
/// frames on the air over the converged (or pinned) tree: Cooja's steady window, after start-up.
pub fn back_to_back(nodes: Vec<NodeSpec>, duration_s: f64) -> MeshScenario {
    let mut s = MeshScenario::default();
    s.topology.layout = None;
    s.topology.nodes = Some(nodes);
    s.topology.rpl_control = true;
    s.topology.rpl_startup = false;
    s.cc = "default".into();
    s.workload.kind = netsim::mesh::scenario::Pattern::Continuous;
    s.duration_s = duration_s;
    s.reps = 1;
    s
}

/// A client's own time around its exchange's frames, ms, from the scenario's delays: before
/// (its console printing the previous response, its CoAP work, preparation and turnaround)
/// and after (its reception). The model's exchange time less both is Cooja's on-air time.
pub fn client_time_ms(s: &MeshScenario) -> (f64, f64) {
    let st = &s.stack;
    let before = (st.client_log_response_bytes * st.uart_byte_ns) as f64 / 1e6
        + (st.client_app_us + st.tx_prepare_us + s.radio.tx_turnaround_us) as f64 / 1e3;
    (before, st.rx_process_us as f64 / 1e3)
}

/// The median (the upper one of an even count).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// One replication of `s`, and its clean exchanges' on-air times (ms) by the client's route
/// length: exchanges without a retransmission, each client's first left out (it waited for no
/// console).
pub fn on_air_by_hops(s: &MeshScenario) -> (RepResult, BTreeMap<u32, Vec<f64>>) {
    let (before, after) = client_time_ms(s);
    let res = s.resolve().unwrap();
    let r = mesh::run_rep(s, &res, 0, None);
    let mut by_hops: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    let mut seen = HashSet::new();
    for x in &r.exchanges {
        if !seen.insert(x.client) {
            if let (Some(rtt), 0, Some(h)) = (x.rtt_ns, x.retransmissions, hops(mesh(&r), x.client + 1)) {
                by_hops.entry(h).or_default().push(rtt as f64 / 1e6 - before - after);
            }
        }
    }
    (r, by_hops)
}

/// The mesh part of a replication's results.
pub fn mesh(r: &RepResult) -> &MeshRun {
    let NetworkReport::Mesh(m) = &r.network else { panic!("a mesh run") };
    m
}

/// The request hops of the client with node id `client_id`.
pub fn hops(mesh: &MeshRun, client_id: u32) -> Option<u32> {
    mesh.routes.iter().find(|x| x.client == client_id).and_then(|x| x.hops)
}

/// The goal: the median on-air exchange of each route length h = 1, 2, … within 10 % of
/// Cooja's (`cooja[h − 1]`), each over at least 20 clean exchanges.
pub fn assert_on_air_within_10_percent(by_hops: &mut BTreeMap<u32, Vec<f64>>, cooja: &[f64]) {
    for (h, &cooja) in (1..).zip(cooja) {
        let v = by_hops.remove(&h).unwrap_or_default();
        assert!(v.len() >= 20, "{h} hops: {} clean exchanges", v.len());
        let m = median(v);
        assert!((m / cooja - 1.0).abs() <= 0.10, "{h} hops: on air {m:.3} ms, Cooja {cooja}");
    }
}
