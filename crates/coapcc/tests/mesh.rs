//! `coapcc presets` and `coapcc sim --preset` on the mesh.

use std::process::Command;

fn coapcc(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_coapcc")).args(args).output().expect("runs");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

#[test]
fn presets_lists_every_name_with_a_description() {
    let (ok, out, _) = coapcc(&["presets"]);
    assert!(ok);
    for name in
        ["thesis", "nitk-gst-cooja", "nitk-gsrtc-cooja", "nitk-cocoapp-grid6x6", "nitk-cocoapp-load-chain20-2.5"]
    {
        let line = out.lines().find(|l| l.split_whitespace().next() == Some(name)).unwrap_or_else(|| panic!("{name}"));
        assert!(line.len() > name.len() + 10, "{line}");
    }
}

#[test]
fn a_mesh_preset_runs_its_algorithms_with_the_mesh_metrics() {
    let (ok, out, err) = coapcc(&["sim", "--preset", "nitk-gst-cooja", "--duration", "20", "--reps", "1", "--json"]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let runs = v["runs"].as_array().unwrap();
    let names: Vec<&str> =
        runs.iter().map(|r| r["scenario"]["cc"].as_str().unwrap().split(':').next().unwrap()).collect();
    assert_eq!(names, ["default", "default_fb1", "default_fb2", "gst"]);
    for r in runs {
        for key in
            ["transactions_per_s", "throughput_req_s", "goodput_bps", "jain_fairness", "pdr", "retries_per_request"]
        {
            assert!(r[key].is_number(), "{key}");
        }
        assert!(r["exchange_duration_s"]["p90"].is_number());
        assert!(r["rto_s"]["mean"].as_f64().unwrap() >= 3.0, "Erbium's first timer is at least 3 s");
        assert_eq!(r["network"]["model"], "mesh");
        assert_eq!(r["network"]["nodes"].as_array().unwrap().len(), 9);
        assert_eq!(r["network"]["routes"].as_array().unwrap().len(), 7);
        assert!(r["events_per_s"].as_f64().unwrap() > 0.0);
    }
}

#[test]
fn mesh_runs_refuse_bottleneck_options_and_unknown_presets() {
    let (ok, _, err) = coapcc(&["sim", "--preset", "nitk-gst-cooja", "--clients", "3"]);
    assert!(!ok && err.contains("--clients is an option of the wired bottleneck"), "{err}");
    let (ok, _, err) = coapcc(&["sim", "--preset", "nope"]);
    assert!(!ok && err.contains("unknown preset 'nope'"), "{err}");
    let (ok, _, err) = coapcc(&["sim", "--duration", "5"]);
    assert!(!ok && err.contains("--duration applies to mesh scenarios"), "{err}");
}

#[test]
fn out_writes_the_rto_series_and_per_exchange_rows() {
    let dir = std::env::temp_dir().join(format!("coapcc-mesh-out-{}", std::process::id()));
    let d = dir.to_str().unwrap();
    let (ok, _, err) = coapcc(&[
        "sim",
        "--preset",
        "nitk-gst-cooja",
        "--cc",
        "default",
        "--duration",
        "10",
        "--reps",
        "1",
        "--out",
        d,
    ]);
    assert!(ok, "{err}");
    let rto = std::fs::read_to_string(dir.join("rto.csv")).unwrap();
    assert!(rto.starts_with("cc,rep,client,exchange,armed_s,rto_s\n"));
    assert!(rto.lines().count() > 10);
    assert!(std::fs::read_to_string(dir.join("exchanges.csv")).unwrap().lines().count() > 10);
    assert_eq!(std::fs::read_to_string(dir.join("nodes.csv")).unwrap().lines().count(), 1 + 9);
    let _ = std::fs::remove_dir_all(&dir);
}
