//! The publication plans: what `coapcc reproduce` runs, as sweep plans (TOML text).

type Error = Box<dyn std::error::Error>;

/// CLOUD's experiments as a plan: every `cloud-…` preset with its algorithms (CLOUD's Table I),
/// at the presets' replications unless `reps` is given.
pub fn cloud_plan(reps: Option<u32>, duration_s: Option<f64>) -> Result<String, Error> {
    preset_plan(
        "# CLOUD's cloud-client experiments (docs/mesh.md), as `coapcc reproduce cloud` runs it.\nseed = 2016\n",
        "cloud-",
        reps,
        duration_s,
        |_| true,
    )
}

/// RTTCOAP's experiments as a plan: every `rttcoap-…` preset with its algorithms (default,
/// cocoa, rtt_coap), at the presets' replications unless `reps` is given.
pub fn rttcoap_plan(reps: Option<u32>, duration_s: Option<f64>) -> Result<String, Error> {
    preset_plan(
        "# RTTCOAP's collection experiments (docs/mesh.md), as `coapcc reproduce rttcoap` runs it.\nseed = 2018\n",
        "rttcoap-",
        reps,
        duration_s,
        |_| true,
    )
}

/// A plan of every preset whose name starts with `prefix` (and that `keep` keeps), each with the
/// algorithms its source compared.
fn preset_plan(
    head: &str,
    prefix: &str,
    reps: Option<u32>,
    duration_s: Option<f64>,
    keep: impl Fn(&str) -> bool,
) -> Result<String, Error> {
    let mut plan = String::from(head);
    if let Some(r) = reps {
        plan += &format!("reps = {r}\n");
    }
    for (name, text) in netsim::lln::presets::PRESETS {
        if !name.starts_with(prefix) || !keep(name) {
            continue;
        }
        let s = netsim::lln::LlnScenario::from_toml(text).map_err(|e| format!("preset {name}: {e}"))?;
        let algorithms: Vec<String> = s.algorithms.iter().map(|a| toml::Value::from(a.as_str()).to_string()).collect();
        plan += &format!("\n[[matrices]]\npreset = [\"{name}\"]\ncc = [{}]\n", algorithms.join(", "));
        if let Some(d) = duration_s {
            plan += &format!("duration_s = [{d:?}]\n");
        }
    }
    Ok(plan)
}

/// NITK's experiments as a plan: every `nitk-…` preset with the algorithms its source compared
/// (GST-CoAP and GSRTC on the 3×3 grid, CoCoA vs CoCoA++ on four static topologies and with four
/// mobility models, and the FIT/IoT-LAB approximations: GST-CoAP, GSRTC and CoAP-Eifel; with
/// `loads`, the load levels too), at the presets' replications unless `reps` is given.
pub fn nitk_plan(reps: Option<u32>, duration_s: Option<f64>, loads: bool) -> Result<String, Error> {
    preset_plan(
        "# The NITK thesis's Cooja experiments and its FIT/IoT-LAB ones approximated (docs/mesh.md), as `coapcc reproduce nitk` runs it.\nseed = 2020\n",
        "nitk-",
        reps,
        duration_s,
        |name| loads || !name.starts_with("nitk-cocoapp-load-"),
    )
}

/// The literature's reference matrix and the Full Backoff comparison (ANRW 2018), as a plan.
pub fn thesis_plan(reps: u32) -> String {
    format!(
        r#"# The reference matrix of the CoAP congestion-control literature (docs/bottleneck.md), as `coapcc reproduce thesis` runs it.
seed = 2019
reps = {reps}

# error-free: workloads x buffers x clients x algorithms
[[matrices]]
cc = ["default", "cocoa", "tcp", "fasor", "fasor_token"]
workload = ["continuous", "random"]
buffer = [2500, 14100, 28200, 1410000]
clients = [1, 50, 100, 200, 400]

# error-prone: 10 clients, the link-error profiles, twice the replications
[[matrices]]
cc = ["default", "cocoa", "tcp", "fasor", "fasor_token"]
workload = ["continuous", "random"]
clients = [10]
errors = ["none", "low", "medium", "high"]
reps = [{reps2}]

# Full Backoff (Järvinen et al., ANRW 2018)
[[matrices]]
cc = ["default", "default_fb1", "default_fb2", "cocoa", "cocoa_fb1", "cocoa_fb2"]
workload = ["continuous", "random"]
buffer = [2500, 14100, 28200, 1410000]
clients = [200, 400]
"#,
        reps2 = 2 * reps
    )
}
