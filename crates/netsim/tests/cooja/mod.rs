//! What the tests against Cooja's reference runs share: a run's motes as the firmware ran them,
//! and the model's exchange time turned into Cooja's on-air time.

use netmodel::mesh::topology::NodeSpec;
use netsim::lln::LlnScenario;

/// `nodes` as explicit motes, the NITK firmware's default CoAP clients back to back, RPL's
/// frames on the air over the converged (or pinned) tree: Cooja's steady window, after start-up.
pub fn back_to_back(nodes: Vec<NodeSpec>, duration_s: f64) -> LlnScenario {
    let mut s = LlnScenario::default();
    s.topology.layout = None;
    s.topology.nodes = Some(nodes);
    s.topology.rpl_control = true;
    s.topology.rpl_startup = false;
    s.cc = "default".into();
    s.workload.kind = "continuous".into();
    s.duration_s = duration_s;
    s.reps = 1;
    s
}

/// A client's own time around its exchange's frames, ms, from the scenario's delays: before
/// (its console printing the previous response, its CoAP work, preparation and turnaround)
/// and after (its reception). The model's exchange time less both is Cooja's on-air time.
pub fn client_time_ms(s: &LlnScenario) -> (f64, f64) {
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
