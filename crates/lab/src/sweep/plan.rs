//! A plan: TOML parsed and expanded into cells, each a resolved scenario with its id (a hash of
//! the scenario) and seed (from the id, or the network's id in a paired plan); shards.

use std::collections::BTreeMap;

use netsim::mesh;
use netsim::worlds::{self, WorldScenario};
use sha2::{Digest, Sha256};

/// A cell: its id, the values the matrix gave it, its resolved scenario.
#[derive(Debug, Clone)]
pub struct Cell {
    /// Stable id.
    pub id: String,
    /// Matrix key → value, as written in the plan.
    pub params: BTreeMap<String, String>,
    /// The resolved scenario, seed included, of the world its `env` names.
    pub scenario: Box<dyn WorldScenario>,
}

/// A parsed plan.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The plan's text (kept with the results).
    pub text: String,
    /// Master seed.
    pub seed: u64,
    /// Cells that differ only in the algorithm share their seeds.
    pub paired: bool,
    /// The cells, in plan order, without duplicates.
    pub cells: Vec<Cell>,
}

impl Plan {
    /// The plan's identity: the first 16 hex digits of the SHA-256 of its seed (marked paired
    /// where it is) and its cells' ids, sorted.
    pub fn hash(&self) -> String {
        let mut ids: Vec<&str> = self.cells.iter().map(|c| c.id.as_str()).collect();
        ids.sort_unstable();
        let seed = if self.paired { format!("{} paired", self.seed) } else { self.seed.to_string() };
        short_hash(&format!("{seed}\n{}", ids.join("\n")))
    }
}

/// Writes `value` at a plan's matrix key (`downlink.delay_ms`; `buffer` for both directions;
/// `stack` as `sim --cc` reads it) into a scenario's table.
pub(crate) fn set_path(table: &mut toml::Table, key: &str, value: toml::Value) -> Result<(), String> {
    if key == STACK {
        return set_stack(table, &value);
    }
    if key == "buffer" {
        set_path(table, "uplink.buffer_bytes", value.clone())?;
        return set_path(table, "downlink.buffer_bytes", value);
    }
    let mut parts: Vec<&str> = key.split('.').collect();
    let last = parts.pop().ok_or("empty matrix key")?;
    let mut t = table;
    for p in parts {
        t = t
            .entry(p.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()))
            .as_table_mut()
            .ok_or_else(|| format!("matrix key '{key}': '{p}' is not a table"))?;
    }
    t.insert(last.to_string(), value);
    Ok(())
}

/// The matrix key that lists stacks to compare as `sim --cc` does: an algorithm over UDP, or
/// `tcp[:key=value,...]` for CoAP over TCP. It sets the scenario's own keys (`transport`, then
/// `cc` or the `[tcp]` table), which each name one thing.
pub(super) const STACK: &str = "stack";

/// Writes a `stack` value into a cell's table as the scenario's keys.
pub(super) fn set_stack(table: &mut toml::Table, value: &toml::Value) -> Result<(), String> {
    let spec = value.as_str().ok_or_else(|| format!("matrix key 'stack': {value} is not a string"))?;
    let s = netsim::Scenario::default().with_stack(spec).map_err(|e| format!("matrix key 'stack': {e}"))?;
    table.insert("transport".into(), toml::Value::try_from(s.transport).map_err(|e| e.to_string())?);
    match s.tcp {
        Some(p) => {
            table.insert("tcp".into(), toml::Value::try_from(p).map_err(|e| e.to_string())?);
        }
        None => {
            table.remove("tcp");
            table.insert("cc".into(), spec.into());
        }
    }
    Ok(())
}

pub(super) fn display(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The first 16 hex digits of the SHA-256 of `text`: the ids of cells, networks and plans.
pub(super) fn short_hash(text: &str) -> String {
    Sha256::digest(text.as_bytes())[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// The id of a resolved scenario (seed zeroed): its JSON, fields in declaration order, hashed.
pub fn cell_id(s: &dyn WorldScenario) -> String {
    let mut zeroed = s.clone_box();
    *zeroed.seed_mut() = 0;
    short_hash(&zeroed.canonical())
}

/// The table a cell starts from: the named preset (mesh presets included), else the defaults of
/// the world the plan's `[base]` names with `env` (none: the wired bottleneck's thesis preset).
pub(super) fn start_table(preset: Option<&str>, base: &toml::Table) -> Result<toml::Table, String> {
    let Some(name) = preset else { return Ok(worlds::of(base)?.defaults()) };
    let text =
        mesh::presets::text(name).ok_or_else(|| format!("unknown preset '{name}' (`coapcc presets` lists them)"))?;
    text.parse().map_err(|e: toml::de::Error| format!("preset {name}: {e}"))
}

/// Resolves a cell's table into its scenario, of the world its `env` names.
pub(super) fn resolve_cell(table: toml::Table) -> Result<Box<dyn WorldScenario>, String> {
    worlds::of(&table)?.scenario(table)
}

/// The id of a cell's network: as [`cell_id`], with the algorithm blanked as well (a paired
/// plan's seeds come from it).
pub(super) fn network_id(s: &dyn WorldScenario) -> String {
    let mut json = s.to_json();
    if let Some(o) = json.as_object_mut() {
        o.insert("seed".into(), 0.into());
        for k in ["cc", "transport", "tcp"] {
            o.remove(k);
        }
    }
    short_hash(&json.to_string())
}

/// The seed of a cell from its id and the plan's seed.
pub(super) fn cell_seed(id: &str, plan_seed: u64) -> u64 {
    let digest = Sha256::digest(format!("{id}/{plan_seed}").as_bytes());
    u64::from_be_bytes(digest[..8].try_into().expect("8 bytes"))
}

/// Parses a plan and expands its cells.
pub fn parse_plan(text: &str) -> Result<Plan, String> {
    let doc: toml::Table = text.parse().map_err(|e: toml::de::Error| format!("plan: {}", e.to_string().trim_end()))?;
    let mut seed = 1u64;
    let mut paired = false;
    let mut reps = None;
    let mut preset = None;
    let mut base = toml::Table::new();
    let mut matrices = Vec::new();
    for (k, v) in &doc {
        match (k.as_str(), v) {
            ("seed", toml::Value::Integer(s)) if *s >= 0 => seed = *s as u64,
            ("seed", v) => return Err(format!("plan: seed must be a whole number ≥ 0, not {v}")),
            ("paired", toml::Value::Boolean(b)) => paired = *b,
            ("paired", v) => return Err(format!("plan: paired must be true or false, not {v}")),
            ("reps", toml::Value::Integer(r)) if *r >= 1 => reps = Some(*r),
            ("reps", v) => {
                return Err(format!("plan: reps must be a whole number ≥ 1 (replications per cell), not {v}"))
            }
            ("preset", toml::Value::String(p)) => preset = Some(p.clone()),
            ("base", toml::Value::Table(t)) => base = t.clone(),
            ("matrix", toml::Value::Table(t)) => matrices.push(t.clone()),
            ("matrices", toml::Value::Array(a)) => {
                for m in a {
                    matrices.push(m.as_table().ok_or("plan: each [[matrices]] entry must be a table")?.clone());
                }
            }
            (k, _) => {
                return Err(format!(
                    "plan: unknown or invalid key '{k}' (expected seed, paired, reps, preset, [base], [matrix] or [[matrices]])"
                ))
            }
        }
    }
    if matrices.is_empty() {
        matrices.push(toml::Table::new());
    }
    let mut cells = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for matrix in &matrices {
        let dims: Vec<(String, Vec<toml::Value>)> = matrix
            .iter()
            .map(|(k, v)| match v {
                toml::Value::Array(a) if !a.is_empty() => Ok((k.clone(), a.clone())),
                _ => Err(format!("plan: matrix key '{k}' must be a non-empty list")),
            })
            .collect::<Result<_, _>>()?;
        if matrix.contains_key(STACK) {
            // `stack` writes the scenario's transport and its cc or [tcp]: one of them beside it
            // would be overwritten in some cells and not others
            let beside = (matrix.keys().chain(base.keys()))
                .find(|k| ["cc", "transport", "tcp"].contains(&k.as_str()) || k.starts_with("tcp."));
            if let Some(k) = beside {
                return Err(format!(
                    "plan: matrix key 'stack' names the algorithm or `tcp[:...]` of each cell; '{k}' beside it (in the \
                     matrix or [base]) contradicts it: list every stack in 'stack'"
                ));
            }
        }
        let total: usize = dims.iter().map(|d| d.1.len()).product();
        for n in 0..total {
            // the cell's values, the matrix's last key varying fastest
            let mut values = Vec::with_capacity(dims.len());
            let mut rest = n;
            for (k, vs) in dims.iter().rev() {
                values.push((k, &vs[rest % vs.len()]));
                rest /= vs.len();
            }
            let params: BTreeMap<String, String> = values.iter().map(|(k, v)| (k.to_string(), display(v))).collect();
            let cell_preset = params.get("preset").map(String::as_str).or(preset.as_deref());
            let mut table = start_table(cell_preset, &base).map_err(|e| format!("plan: {e}"))?;
            netsim::scenario::overlay(&mut table, base.clone());
            // the plan's reps, else the world's (1 for the bottleneck, the preset's own for a mesh)
            let world = worlds::of(&table).map_err(|e| format!("plan: {e}"))?;
            if let Some(r) = reps.or(world.plan_reps().map(i64::from)) {
                table.insert("reps".into(), toml::Value::Integer(r));
            }
            for (k, v) in values.iter().filter(|(k, _)| k.as_str() != "preset") {
                set_path(&mut table, k, (*v).clone())?;
            }
            let mut scenario = resolve_cell(table).map_err(|e| format!("plan: cell {params:?}: {e}"))?;
            let id = cell_id(&*scenario);
            let network = if paired { network_id(&*scenario) } else { id.clone() };
            *scenario.seed_mut() = cell_seed(&network, seed);
            if seen.insert(id.clone()) {
                cells.push(Cell { id, params, scenario });
            }
        }
    }
    Ok(Plan { text: text.to_string(), seed, paired, cells })
}

/// Is `id` in shard `k` of `n` (1-based)?
pub fn in_shard(id: &str, k: u64, n: u64) -> bool {
    u64::from_str_radix(&id[..id.len().min(16)], 16).map_or(true, |v| v % n == k - 1)
}

/// The tidy table's parameter columns: `cc` and `cc_params`, then every other matrix key of the
/// plan in order of first appearance.
pub(super) fn plan_keys(plan: &Plan) -> Vec<String> {
    let mut keys: Vec<String> = vec!["cc".into(), "cc_params".into()];
    for c in &plan.cells {
        for k in c.params.keys().filter(|k| *k != STACK) {
            if !keys.contains(k) {
                keys.push(k.clone());
            }
        }
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;
    use netsim::mesh::MeshScenario;
    use netsim::Scenario;

    #[test]
    fn matrix_expansion_ids_and_seeds() {
        let p = parse_plan("seed = 5\nreps = 2\n[matrix]\ncc = [\"default\", \"fasor\"]\nclients = [1, 10]\nbuffer = [2500, 1410000]\n").unwrap();
        assert_eq!(p.cells.len(), 8);
        let c = &p.cells[0];
        assert_eq!(c.params["cc"], "default");
        let s: &Scenario = c.scenario.as_any().downcast_ref().expect("a bottleneck cell");
        assert_eq!(s.uplink.buffer_bytes, 2500);
        assert_eq!(s.downlink.buffer_bytes, 2500);
        assert_eq!(s.reps, 2);
        // the same plan gives the same ids and seeds; another plan seed, other seeds, same ids
        let q = parse_plan("seed = 6\nreps = 2\n[matrix]\ncc = [\"default\", \"fasor\"]\nclients = [1, 10]\nbuffer = [2500, 1410000]\n").unwrap();
        assert_eq!(
            p.cells.iter().map(|c| &c.id).collect::<Vec<_>>(),
            q.cells.iter().map(|c| &c.id).collect::<Vec<_>>()
        );
        let seed = |c: &Cell| c.scenario.clone().seed_mut().to_owned();
        assert_ne!(seed(&p.cells[0]), seed(&q.cells[0]));
        // resolution unites equal cells
        let r = parse_plan("[matrix]\ncc = [\"fasor\", \"fasor:max_retransmit=20\"]\n").unwrap();
        assert_eq!(r.cells.len(), 1);
        // nested keys, [[matrices]], and clear errors
        let n =
            parse_plan("[[matrices]]\n\"downlink.delay_ms\" = [100.0]\n[[matrices]]\nerrors = [\"low\"]\n").unwrap();
        assert_eq!(n.cells.len(), 2);
        let s: &Scenario = n.cells[0].scenario.as_any().downcast_ref().expect("a bottleneck cell");
        assert_eq!(s.downlink.delay_ms, 100.0);
        assert!(parse_plan("[matrix]\nclientz = [1]\n").unwrap_err().contains("unknown field `clientz`"));
        assert!(parse_plan("[matrix]\nclients = 1\n").unwrap_err().contains("must be a non-empty list"));
        assert!(parse_plan("[matrix]\nstack = [\"tcp\", \"nope\"]\n")
            .unwrap_err()
            .contains("unknown algorithm 'nope'"));
    }

    #[test]
    fn mesh_cells_from_presets() {
        let p = parse_plan(
            "preset = \"nitk-gsrtc-cooja\"\n[matrix]\ncc = [\"cocoa\", \"gsrtc\"]\n\"radio.success_ratio_rx\" = [1.0, 0.9]\n",
        )
        .unwrap();
        assert_eq!(p.cells.len(), 4);
        for c in &p.cells {
            let s: &MeshScenario = c.scenario.as_any().downcast_ref().expect("a mesh cell");
            assert_eq!(s.reps, 5, "the preset's replications when the plan gives none");
            assert!(s.algorithms.is_empty());
            // the algorithm written out: the preset's Betzler readings are in it
            assert!(s.cc.starts_with(&c.params["cc"]) && s.cc.contains("vbf_low=2.5"), "{}", s.cc);
            assert_eq!(s.radio.success_ratio_rx, c.params["radio.success_ratio_rx"].parse::<f64>().unwrap());
        }
        // `preset` as a matrix key mixes kinds; reps given by the plan apply to every cell
        let q = parse_plan("reps = 2\n[matrix]\npreset = [\"thesis\", \"nitk-gst-cooja\"]\n").unwrap();
        let s: &Scenario = q.cells[0].scenario.as_any().downcast_ref().expect("a bottleneck cell");
        assert_eq!(s.reps, 2);
        let s: &MeshScenario = q.cells[1].scenario.as_any().downcast_ref().expect("a mesh cell");
        assert!(s.reps == 2 && s.name == "nitk-gst-cooja");
        assert!(parse_plan("preset = \"nope\"\n").unwrap_err().contains("unknown preset 'nope'"));
        assert!(parse_plan("preset = \"nitk-gst-cooja\"\n[matrix]\nclients = [3]\n")
            .unwrap_err()
            .contains("unknown field `clients`"));
    }

    /// `paired = true`: cells that differ only in the algorithm share their seed (bottleneck and
    /// mesh); the ids stay, the plan's identity changes; unpaired, every cell has its own seed.
    #[test]
    fn a_paired_plan_seeds_by_network() {
        let text = "[[matrices]]\ncc = [\"default\", \"fasor\", \"hedge\"]\nclients = [1, 10]\n\
                    [[matrices]]\npreset = [\"nitk-gst-cooja\"]\ncc = [\"cocoa\", \"hedge\"]\n";
        let p = parse_plan(&format!("paired = true\n{text}")).unwrap();
        let u = parse_plan(text).unwrap();
        let seed = |c: &Cell| c.scenario.clone().seed_mut().to_owned();
        let of = |plan: &Plan, cc: &str, clients: Option<&str>| {
            let c = plan
                .cells
                .iter()
                .find(|c| c.params["cc"] == cc && c.params.get("clients").map(String::as_str) == clients);
            seed(c.expect("the cell"))
        };
        for clients in [Some("1"), Some("10")] {
            assert_eq!(of(&p, "default", clients), of(&p, "fasor", clients));
            assert_eq!(of(&p, "default", clients), of(&p, "hedge", clients));
            assert_ne!(of(&u, "default", clients), of(&u, "fasor", clients));
        }
        assert_ne!(of(&p, "default", Some("1")), of(&p, "default", Some("10")));
        assert_eq!(of(&p, "cocoa", None), of(&p, "hedge", None));
        assert_ne!(of(&u, "cocoa", None), of(&u, "hedge", None));
        assert_ne!(of(&p, "cocoa", None), of(&p, "default", Some("1")));
        assert_eq!(
            p.cells.iter().map(|c| &c.id).collect::<Vec<_>>(),
            u.cells.iter().map(|c| &c.id).collect::<Vec<_>>()
        );
        assert_ne!(p.hash(), u.hash());
        assert!(parse_plan("paired = 1\n").unwrap_err().contains("paired must be true or false"));
    }

    #[test]
    fn shards_partition_the_cells() {
        let p = parse_plan("[matrix]\nclients = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n").unwrap();
        let counts: Vec<usize> = (1..=3).map(|k| p.cells.iter().filter(|c| in_shard(&c.id, k, 3)).count()).collect();
        assert_eq!(counts.iter().sum::<usize>(), 10);
        // every cell in exactly one shard
        assert!(p.cells.iter().all(|c| (1..=3).filter(|&k| in_shard(&c.id, k, 3)).count() == 1));
    }
}
