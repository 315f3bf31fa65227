//! `coapcc league` as users run it: ranking a sweep's results (`--score-only`), the files it
//! writes, the figures recomputed here from the cells' own rows by the stated definitions, and
//! bad input refused.

#[allow(dead_code)] // only its tmp() here
mod common;

use std::collections::BTreeMap;
use std::process::Command;

use common::tmp;

fn coapcc(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_coapcc")).args(args).output().expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Two wired cells (small and infinite buffer) and one mesh cell, three algorithms each.
const PLAN: &str = "seed = 5\nreps = 3\n\
[[matrices]]\ncc = [\"default\", \"cocoa\", \"fasor\"]\nclients = [30]\nbuffer = [2500, 1410000]\n\
[[matrices]]\npreset = [\"nitk-gst-cooja\"]\ncc = [\"default\", \"cocoa\", \"fasor\"]\nduration_s = [120.0]\n";

/// The median of a sorted slice (type 7 at 0.5).
fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let h = (v.len() - 1) as f64 / 2.0;
    let lo = h.floor() as usize;
    v[lo] + (h - lo as f64) * (v[(lo + 1).min(v.len() - 1)] - v[lo])
}

#[test]
fn a_sweep_ranked_by_regret_as_defined() {
    let d = tmp("league");
    let plan = d.join("plan.toml");
    std::fs::write(&plan, PLAN).unwrap();
    let out = d.join("out");
    let o = out.to_str().unwrap();
    let (code, _, err) = coapcc(&["sweep", plan.to_str().unwrap(), "--out", o]);
    assert_eq!(code, 0, "{err}");
    let (code, stdout, err) = coapcc(&["league", "--out", o, "--score-only", "--json"]);
    assert_eq!(code, 0, "{err}");
    let league: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    for f in ["league/table.csv", "league/cells.csv", "league/league.md", "league/regret.svg", "report/index.html"] {
        assert!(out.join(f).exists(), "{f}");
    }
    let html = std::fs::read_to_string(out.join("report/index.html")).unwrap();
    assert!(html.contains("id=\"league\""), "the report shows the league");

    // every cell's figure again, from its clients' rows: per replication the median FCT
    // (bottleneck) or completed exchanges per simulated second (mesh), then the mean
    let mut want: BTreeMap<(String, String), f64> = BTreeMap::new(); // (label, algorithm) → figure
    for e in std::fs::read_dir(out.join("cells")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        let params = v["cell"]["params"].as_object().unwrap();
        let algo = params["cc"].as_str().unwrap().to_string();
        let label: Vec<String> =
            params.iter().filter(|(k, _)| *k != "cc").map(|(k, x)| format!("{k}={}", x.as_str().unwrap())).collect();
        let mesh = v["scenario"]["env"] == "lln";
        let mut rdr = csv::Reader::from_path(p.with_extension("clients.csv")).unwrap();
        let h = rdr.headers().unwrap().clone();
        let col = |n: &str| h.iter().position(|x| x == n).unwrap();
        let (rep, fct, ex, failed) = (col("rep"), col("fct_s"), col("exchanges"), col("failed"));
        let mut per_rep: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
        for r in rdr.records() {
            let r = r.unwrap();
            let x = if mesh {
                r[ex].parse::<f64>().unwrap() - r[failed].parse::<f64>().unwrap()
            } else {
                r[fct].parse().unwrap()
            };
            per_rep.entry(r[rep].parse().unwrap()).or_default().push(x);
        }
        assert_eq!(per_rep.len(), 3);
        let figures: Vec<f64> = per_rep
            .into_values()
            .map(|mut v| if mesh { v.iter().sum::<f64>() / 120.0 } else { median(&mut v) })
            .collect();
        want.insert((label.join(", "), algo), figures.iter().sum::<f64>() / 3.0);
    }
    let cells = league["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 3);
    assert_eq!(
        cells.iter().map(|c| c["code"].as_str().unwrap()).collect::<Vec<_>>(),
        ["W1", "W2", "M1"],
        "the bottleneck's cells first, in plan order"
    );
    let mut regrets: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for c in cells {
        let label = c["label"].as_str().unwrap().to_string();
        let mesh = c["code"].as_str().unwrap().starts_with('M');
        let entries = c["entries"].as_array().unwrap();
        assert_eq!(entries.len(), 3);
        let figure = |e: &serde_json::Value| want[&(label.clone(), e["algorithm"].as_str().unwrap().to_string())];
        // the best: the lowest FCT, the highest rate
        let best = entries.iter().map(figure).fold(if mesh { f64::MIN } else { f64::MAX }, |b, x| {
            if mesh {
                b.max(x)
            } else {
                b.min(x)
            }
        });
        for e in entries {
            let v = figure(e);
            assert!((e["value"].as_f64().unwrap() - v).abs() < 1e-9 * v.abs().max(1.0), "{label}: {e}");
            let r = if mesh { 1.0 - v / best } else { v / best - 1.0 };
            assert!((e["regret"].as_f64().unwrap() - r).abs() < 1e-9, "{label}: {e}");
            regrets.entry(e["algorithm"].as_str().unwrap().to_string()).or_default().push(r);
        }
    }
    // the table: each algorithm's worst regret, smallest first
    let table = league["standings"].as_array().unwrap();
    let mut worst: Vec<(f64, String)> =
        regrets.iter().map(|(a, r)| (r.iter().cloned().fold(f64::MIN, f64::max), a.clone())).collect();
    worst.sort_by(|a, b| a.0.total_cmp(&b.0));
    for (s, (w, a)) in table.iter().zip(&worst) {
        assert_eq!(s["algorithm"].as_str().unwrap(), a);
        assert!((s["worst_regret"].as_f64().unwrap() - w).abs() < 1e-9);
    }
    // the tidy CSV: one row per algorithm and cell
    let csv = std::fs::read_to_string(out.join("league/cells.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 3 * 3);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn bad_input_is_refused_with_a_reason() {
    let d = tmp("league-bad");
    let o = d.join("out");
    // an entrant nobody registered: a plan error naming it, before anything runs
    let (code, _, err) = coapcc(&["league", "--out", o.to_str().unwrap(), "--cc", "nosuch"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("nosuch"), "{err}");
    assert!(!o.join("cells").exists() || std::fs::read_dir(o.join("cells")).unwrap().next().is_none());
    let (code, _, err) = coapcc(&["league", "--out", o.to_str().unwrap(), "--reps", "0"]);
    assert_eq!(code, 2, "{err}");
    // nothing to rank
    let (code, _, err) = coapcc(&["league", "--out", d.join("empty").to_str().unwrap(), "--score-only"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("not a results directory"), "{err}");
    std::fs::remove_dir_all(&d).unwrap();
}
