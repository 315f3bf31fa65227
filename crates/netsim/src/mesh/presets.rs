//! The named presets: the scenario files under `scenarios/` (all but `million.toml`), compiled in. `coapcc presets`
//! lists them; `coapcc sim --preset NAME` runs one (the same as `--scenario scenarios/NAME.toml`).

/// (name, the file's text), by name.
pub const PRESETS: &[(&str, &str)] = &[
    ("cloud-baseline-contikimac", include_str!("../../../../scenarios/cloud-baseline-contikimac.toml")),
    ("cloud-baseline-nullrdc", include_str!("../../../../scenarios/cloud-baseline-nullrdc.toml")),
    ("cloud-burst-contikimac", include_str!("../../../../scenarios/cloud-burst-contikimac.toml")),
    ("cloud-burst-nullrdc", include_str!("../../../../scenarios/cloud-burst-nullrdc.toml")),
    ("cloud-m2m-contikimac", include_str!("../../../../scenarios/cloud-m2m-contikimac.toml")),
    ("cloud-m2m-nullrdc", include_str!("../../../../scenarios/cloud-m2m-nullrdc.toml")),
    ("nitk-cocoapp-chain20", include_str!("../../../../scenarios/nitk-cocoapp-chain20.toml")),
    ("nitk-cocoapp-dumbbell21", include_str!("../../../../scenarios/nitk-cocoapp-dumbbell21.toml")),
    ("nitk-cocoapp-flower36", include_str!("../../../../scenarios/nitk-cocoapp-flower36.toml")),
    ("nitk-cocoapp-grid6x6", include_str!("../../../../scenarios/nitk-cocoapp-grid6x6.toml")),
    ("nitk-cocoapp-mobile-gaussmarkov", include_str!("../../../../scenarios/nitk-cocoapp-mobile-gaussmarkov.toml")),
    ("nitk-cocoapp-mobile-manhattan", include_str!("../../../../scenarios/nitk-cocoapp-mobile-manhattan.toml")),
    ("nitk-cocoapp-mobile-pursue", include_str!("../../../../scenarios/nitk-cocoapp-mobile-pursue.toml")),
    ("nitk-cocoapp-mobile-rwp", include_str!("../../../../scenarios/nitk-cocoapp-mobile-rwp.toml")),
    ("nitk-eifel-iotlab", include_str!("../../../../scenarios/nitk-eifel-iotlab.toml")),
    ("nitk-gsrtc-cooja", include_str!("../../../../scenarios/nitk-gsrtc-cooja.toml")),
    ("nitk-gsrtc-iotlab", include_str!("../../../../scenarios/nitk-gsrtc-iotlab.toml")),
    ("nitk-gst-cooja", include_str!("../../../../scenarios/nitk-gst-cooja.toml")),
    ("nitk-gst-iotlab", include_str!("../../../../scenarios/nitk-gst-iotlab.toml")),
    ("thesis", include_str!("../../../../scenarios/thesis.toml")),
    ("rttcoap-homog-112", include_str!("../../../../scenarios/rttcoap-homog-112.toml")),
    ("rttcoap-homog-57", include_str!("../../../../scenarios/rttcoap-homog-57.toml")),
    ("rttcoap-mixed-112", include_str!("../../../../scenarios/rttcoap-mixed-112.toml")),
    ("rttcoap-mixed-57", include_str!("../../../../scenarios/rttcoap-mixed-57.toml")),
];

/// Every preset (name, text) in the order lists show them: the wired bottleneck's first, then
/// the meshes', each by name.
pub fn listed() -> Vec<(&'static str, &'static str)> {
    let mut v: Vec<(&str, &str)> = PRESETS.to_vec();
    v.sort_by_key(|(name, text)| (is_mesh(text), *name));
    v
}

/// A preset's TOML text.
pub fn text(name: &str) -> Option<&'static str> {
    PRESETS.iter().find(|p| p.0 == name).map(|p| p.1)
}

/// Whether a scenario's TOML text is a mesh scenario (the world its `env` names).
pub fn is_mesh(text: &str) -> bool {
    crate::worlds::of_text(text).is_ok_and(|w| w.kind() == "mesh")
}

/// A preset's one-line description: its `description` key, or its first comment line.
pub fn describe(text: &str) -> String {
    if let Some(d) =
        text.parse::<toml::Table>().ok().and_then(|t| t.get("description").and_then(|v| v.as_str().map(String::from)))
    {
        return d;
    }
    text.lines().next().unwrap_or("").trim_start_matches('#').trim().to_string()
}

/// The other presets that simulate the same network as `name`'s (studies of one network that
/// compare other algorithms: the NITK thesis's chapters 3 and 5 share theirs): every key equal
/// but the study's own, `name`, `description`, `cc`, `algorithms` and `cc_defaults`.
pub fn same_network(name: &str) -> Vec<&'static str> {
    let network = |text: &str| {
        let mut t = text.parse::<toml::Table>().ok()?;
        for k in ["name", "description", "cc", "algorithms", "cc_defaults"] {
            t.remove(k);
        }
        Some(t)
    };
    let Some(mine) = text(name).and_then(network) else { return Vec::new() };
    listed().into_iter().filter(|(n, t)| *n != name && network(t).as_ref() == Some(&mine)).map(|(n, _)| n).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::MeshScenario;
    use crate::Scenario;

    #[test]
    fn the_nitk_gst_and_gsrtc_studies_share_their_networks_and_no_other_preset_does() {
        assert_eq!(same_network("nitk-gst-cooja"), ["nitk-gsrtc-cooja"]);
        assert_eq!(same_network("nitk-gsrtc-cooja"), ["nitk-gst-cooja"]);
        assert_eq!(same_network("nitk-gsrtc-iotlab"), ["nitk-gst-iotlab"]);
        let shared = listed().iter().filter(|(n, _)| !same_network(n).is_empty()).count();
        assert_eq!(shared, 4);
        assert!(same_network("no-such-preset").is_empty());
    }

    #[test]
    fn every_preset_resolves_and_is_named_as_its_file() {
        // every file under scenarios/ is a preset, and every preset a file (but million.toml, the
        // million-client run, which is a file to run with --scenario, not a preset to list)
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios");
        let mut files: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().trim_end_matches(".toml").to_string())
            .filter(|f| f != "million")
            .collect();
        files.sort();
        let mut names: Vec<String> = PRESETS.iter().map(|p| p.0.to_string()).collect();
        names.sort();
        assert_eq!(names, files);
        for (name, text) in PRESETS {
            if is_mesh(text) {
                let s = MeshScenario::from_toml(text).unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(&s.name, name);
                s.resolve().unwrap_or_else(|e| panic!("{name}: {e}"));
                assert!(!s.algorithms.is_empty(), "{name}");
                for cc in &s.algorithms {
                    MeshScenario { cc: cc.clone(), ..s.clone() }
                        .resolve()
                        .unwrap_or_else(|e| panic!("{name} {cc}: {e}"));
                }
            } else {
                Scenario::from_toml(text).unwrap().resolve().unwrap();
            }
            assert!(!describe(text).is_empty());
        }
        // the NITK CoCoA++ topologies, whose load levels plans/nitk.toml sweeps
        for t in [
            "grid6x6",
            "flower36",
            "dumbbell21",
            "chain20",
            "mobile-rwp",
            "mobile-gaussmarkov",
            "mobile-manhattan",
            "mobile-pursue",
        ] {
            assert!(text(&format!("nitk-cocoapp-{t}")).is_some(), "{t}");
        }
    }

    /// Keys of `full` (a scenario as it serialises) that `written` (its file) leaves out, dotted.
    fn missing(written: &toml::Table, full: &toml::Table, at: &str, out: &mut Vec<String>) {
        for (k, v) in full {
            let path = if at.is_empty() { k.clone() } else { format!("{at}.{k}") };
            match (written.get(k), v) {
                (None, _) => out.push(path),
                (Some(toml::Value::Table(w)), toml::Value::Table(f)) => missing(w, f, &path, out),
                _ => {}
            }
        }
    }

    /// A preset file spells out every key of its scenario: what it runs is what it says, never a
    /// default it does not show (a key left out would be taken from the defaults silently).
    #[test]
    fn every_preset_file_writes_every_key() {
        let mut gaps = Vec::new();
        for (name, text) in PRESETS {
            let written: toml::Table = toml::from_str(text).unwrap();
            let full = if is_mesh(text) {
                toml::Table::try_from(MeshScenario::from_toml(text).unwrap()).unwrap()
            } else {
                toml::Table::try_from(Scenario::from_toml(text).unwrap()).unwrap()
            };
            let mut out = Vec::new();
            missing(&written, &full, "", &mut out);
            if !out.is_empty() {
                gaps.push(format!("{name}: {}", out.join(", ")));
            }
        }
        assert!(gaps.is_empty(), "preset files leave keys out:\n{}", gaps.join("\n"));
    }

    #[test]
    fn the_gst_preset_file_is_the_defaults() {
        let s = MeshScenario::from_toml(text("nitk-gst-cooja").unwrap()).unwrap();
        let d = MeshScenario::default();
        assert_eq!(MeshScenario { description: d.description.clone(), algorithms: d.algorithms.clone(), ..s }, d);
    }
}
