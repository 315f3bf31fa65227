//! The publication plans: what `coapcc reproduce` runs, as sweep plans written under `plans/`
//! in the repository (compiled in), with the command's overrides applied to them.

type Error = Box<dyn std::error::Error>;

/// The publication plans by name, as the files under `plans/` hold them.
pub const PLANS: [(&str, &str); 4] = [
    ("thesis", include_str!("../../../plans/thesis.toml")),
    ("nitk", include_str!("../../../plans/nitk.toml")),
    ("cloud", include_str!("../../../plans/cloud.toml")),
    ("rttcoap", include_str!("../../../plans/rttcoap.toml")),
];

/// What `coapcc reproduce` may change in a publication plan.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Overrides {
    /// Replications per cell instead of the plan's: a matrix that sets its own keeps its ratio to
    /// the plan's (the thesis's error-prone cells, twice as many).
    pub reps: Option<u32>,
    /// Simulated seconds per replication (mesh plans), for every matrix.
    pub duration_s: Option<f64>,
    /// NITK: also the CoCoA++ offered-load levels (the matrices over `workload.offered_load_kbps`).
    pub loads: bool,
}

/// The plan `name` (one of [`PLANS`]) with `o` applied, as sweep plan text. Untouched, it is the
/// file's text; changed, the file's table written out again (its comments left behind).
pub fn plan(name: &str, o: &Overrides) -> Result<String, Error> {
    let text = PLANS.iter().find(|p| p.0 == name).map(|p| p.1).ok_or_else(|| format!("no plan '{name}'"))?;
    let mut doc: toml::Table = text.parse()?;
    let mut changed = false;
    if let Some(toml::Value::Array(matrices)) = doc.get_mut("matrices") {
        let before = matrices.len();
        // the load levels only when asked for
        matrices.retain(|m| o.loads || !m.as_table().is_some_and(|t| t.contains_key(LOAD_KEY)));
        changed |= matrices.len() != before;
    }
    if let Some(r) = o.reps {
        set_reps(&mut doc, r);
        changed = true;
    }
    if let Some(d) = o.duration_s {
        for m in matrices_mut(&mut doc) {
            m.insert("duration_s".into(), toml::Value::Array(vec![toml::Value::Float(d)]));
        }
        changed = true;
    }
    Ok(if changed { toml::to_string(&doc)? } else { text.to_string() })
}

/// Replications per cell of a first look: `reproduce --quick`, and a wired cell's of `league
/// --quick` (the other cells in the suite's proportion).
pub const QUICK_REPS: u32 = 3;

/// Sets a plan's `reps` to `r`, and each matrix's own counts in proportion to the plan's (a
/// matrix that had twice the plan's keeps twice `r`; at least one). Without a plan-wide count, a
/// matrix's own stays.
pub(crate) fn set_reps(doc: &mut toml::Table, r: u32) {
    let base = doc.get("reps").and_then(|v| v.as_integer());
    doc.insert("reps".into(), toml::Value::Integer(i64::from(r)));
    let Some(base) = base else { return };
    for m in matrices_mut(doc) {
        if let Some(toml::Value::Array(own)) = m.get_mut("reps") {
            for v in own.iter_mut() {
                if let Some(n) = v.as_integer() {
                    *v = toml::Value::Integer((n * i64::from(r) / base).max(1));
                }
            }
        }
    }
}

/// The key the offered-load matrices vary.
const LOAD_KEY: &str = "workload.offered_load_kbps";

pub(crate) fn matrices_mut(doc: &mut toml::Table) -> impl Iterator<Item = &mut toml::Table> {
    doc.get_mut("matrices").and_then(|m| m.as_array_mut()).into_iter().flatten().filter_map(|m| m.as_table_mut())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The mesh plans hold every preset of their family, each with the algorithms its file says
    /// its source compared (a preset added or an algorithm changed shows here).
    #[test]
    fn the_mesh_plans_run_every_preset_with_its_algorithms() {
        for (plan_name, prefix) in [("nitk", "nitk-"), ("cloud", "cloud-"), ("rttcoap", "rttcoap-")] {
            let doc: toml::Table = PLANS.iter().find(|p| p.0 == plan_name).unwrap().1.parse().unwrap();
            let matrices = doc["matrices"].as_array().unwrap();
            let mut listed = Vec::new();
            for m in matrices.iter().filter(|m| !m.as_table().unwrap().contains_key(LOAD_KEY)) {
                let name = m["preset"].as_array().unwrap()[0].as_str().unwrap().to_string();
                let cc: Vec<String> = m["cc"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().into()).collect();
                let s = netsim::mesh::MeshScenario::from_toml(netsim::mesh::presets::text(&name).unwrap()).unwrap();
                assert_eq!(cc, s.algorithms, "{plan_name}: {name}");
                listed.push(name);
            }
            let all: Vec<String> = netsim::mesh::presets::PRESETS
                .iter()
                .filter(|p| p.0.starts_with(prefix))
                .map(|p| p.0.to_string())
                .collect();
            assert_eq!(listed, all, "{plan_name}");
        }
    }

    #[test]
    fn overrides_apply_to_every_matrix() {
        let o = Overrides { reps: Some(3), duration_s: Some(50.0), loads: false };
        let p = crate::sweep::parse_plan(&plan("nitk", &o).unwrap()).unwrap();
        assert!(!p.cells.is_empty());
        for c in &p.cells {
            let s: &netsim::mesh::MeshScenario = c.scenario.as_any().downcast_ref().unwrap();
            assert_eq!((s.reps, s.duration_s), (3, 50.0));
            assert_eq!(s.workload.offered_load_kbps, 0.0, "loads only when asked for");
        }
        let with_loads = crate::sweep::parse_plan(&plan("nitk", &Overrides { loads: true, ..o }).unwrap()).unwrap();
        // 8 topologies × 5 levels × 2 algorithms more, each a level of the NITK load sweep
        assert_eq!(with_loads.cells.len(), p.cells.len() + 8 * 5 * 2);
        let mut levels = std::collections::BTreeMap::new();
        for c in &with_loads.cells {
            let s: &netsim::mesh::MeshScenario = c.scenario.as_any().downcast_ref().unwrap();
            *levels.entry(format!("{}", s.workload.offered_load_kbps)).or_insert(0) += 1;
        }
        for l in ["0.5", "1", "1.5", "2", "2.5"] {
            assert_eq!(levels[l], 8 * 2, "{l} kbit/s: every topology, both algorithms");
        }
        // the thesis: the error-prone cells keep twice the replications
        let t =
            crate::sweep::parse_plan(&plan("thesis", &Overrides { reps: Some(3), ..Overrides::default() }).unwrap())
                .unwrap();
        let reps: std::collections::BTreeSet<u32> =
            t.cells.iter().map(|c| c.scenario.as_any().downcast_ref::<netsim::Scenario>().unwrap().reps).collect();
        assert_eq!(reps.into_iter().collect::<Vec<_>>(), [3, 6]);
        // untouched, a plan is its file
        assert_eq!(plan("cloud", &Overrides::default()).unwrap(), PLANS[2].1);
    }
}
