//! `coapcc presets` and `coapcc sim --preset` on the mesh.

mod common;

use std::process::Command;

use common::{cells, tmp};

fn coapcc(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_coapcc")).args(args).output().expect("runs");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

#[test]
fn presets_lists_every_name_with_a_description() {
    let (ok, out, _) = coapcc(&["presets"]);
    assert!(ok);
    for name in ["thesis", "nitk-gst-cooja", "nitk-gsrtc-cooja", "nitk-cocoapp-grid6x6", "nitk-cocoapp-mobile-rwp"] {
        let line = out.lines().find(|l| l.split_whitespace().next() == Some(name)).unwrap_or_else(|| panic!("{name}"));
        assert!(line.len() > name.len() + 10, "{line}");
    }
    // the wired bottleneck first, then the meshes by name; every description in one column
    let names: Vec<&str> = out.lines().map(|l| l.split_whitespace().next().unwrap()).collect();
    assert_eq!(names[0], "thesis");
    assert!(names[1..].windows(2).all(|w| w[0] < w[1]), "{names:?}");
    let longest = names.iter().map(|n| n.len()).max().unwrap();
    for line in out.lines() {
        let name = line.split_whitespace().next().unwrap();
        assert!(
            line[name.len()..longest + 2].chars().all(|c| c == ' ') && !line[longest + 2..].starts_with(' '),
            "{line}"
        );
    }
    // --json: the same, for programs
    let (ok, json, _) = coapcc(&["presets", "--json"]);
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let listed: Vec<&str> = v.as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(listed, names);
    assert_eq!(v[0]["network"], "bottleneck");
    assert_eq!(v[1]["network"], "mesh");
}

#[test]
fn a_mesh_preset_runs_its_algorithms_with_the_mesh_metrics() {
    // 120 s: the preset's RPL forms its DODAG first, the clients wait for routes
    let (ok, out, err) = coapcc(&["sim", "--preset", "nitk-gst-cooja", "--duration", "120", "--reps", "1", "--json"]);
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
        let rto = &r["rto_s"];
        if r["scenario"]["cc"].as_str().unwrap().starts_with("gst:") {
            // the preset's GST divides as the author's Z1 build does: after 64 clean exchanges
            // the 64-bit quotient by zero is all ones and the timer wraps to the random part
            // (below 3 s x 0.5) less one tick, so most timers are short
            assert!(rto["p10"].as_f64().unwrap() < 1.5, "{rto}");
        } else {
            assert!(rto["p10"].as_f64().unwrap() >= 3.0, "Erbium's first timer is at least 3 s: {rto}");
        }
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
        "120",
        "--reps",
        "1",
        "--out",
        d,
    ]);
    assert!(ok, "{err}");
    let rto = std::fs::read_to_string(dir.join("rto.csv")).unwrap();
    assert!(rto.starts_with("cc,cc_params,rep,client,exchange,armed_s,rto_s,expired\n"), "{rto}");
    assert!(rto.lines().count() > 10);
    let exchanges = std::fs::read_to_string(dir.join("exchanges.csv")).unwrap();
    assert!(exchanges.lines().count() > 10);
    assert_eq!(std::fs::read_to_string(dir.join("nodes.csv")).unwrap().lines().count(), 1 + 9);
    // the three rates, from the exchange rows by their definitions: exchanges with an RTT
    // completed, every row began, and each row is 1 + its retransmissions transmissions
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    let (mut completed, mut began, mut sent) = (0.0, 0.0, 0.0);
    for row in exchanges.lines().skip(1) {
        // the quoted cc_params holds commas: count fields from the end
        let f: Vec<&str> = row.rsplitn(6, ',').collect(); // expired, duplicates, retransmissions, rtt, start, …
        began += 1.0;
        completed += if f[3].is_empty() { 0.0 } else { 1.0 };
        sent += 1.0 + f[2].parse::<f64>().unwrap();
    }
    let rate = |k: &str| summary[k].as_f64().unwrap_or_else(|| panic!("{k}: {summary}"));
    for (k, v) in [("transactions_per_s", completed), ("initiated_per_s", began), ("client_transmissions_per_s", sent)]
    {
        assert!((rate(k) - v / 120.0).abs() < 1e-9, "{k}: {} against {}", rate(k), v / 120.0);
    }
    assert!(rate("client_transmissions_per_s") > rate("initiated_per_s"));
    // one row per client (the 3×3 grid's 7), named by node id as in exchanges.csv
    let clients = std::fs::read_to_string(dir.join("clients.csv")).unwrap();
    assert!(clients.starts_with("cc,cc_params,rep,client,fct_s,"), "{clients}");
    let ids = |text: &str| -> std::collections::BTreeSet<String> {
        text.lines().skip(1).map(|l| l.split(',').nth(3).unwrap().to_string()).collect()
    };
    assert_eq!(clients.lines().count(), 1 + 7);
    assert_eq!(ids(&clients), ids(&std::fs::read_to_string(dir.join("exchanges.csv")).unwrap()));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_mesh_plan_sharded_and_merged_equals_one_run() {
    let d = tmp("mesh-sweep");
    let plan = d.join("plan.toml");
    std::fs::write(
        &plan,
        "seed = 4\nreps = 2\npreset = \"nitk-gst-cooja\"\n[base]\nduration_s = 15.0\n\
         [matrix]\ncc = [\"default\", \"gst\"]\n\"radio.success_ratio_rx\" = [1.0, 0.8]\n",
    )
    .unwrap();
    let p = plan.to_str().unwrap();
    let (a, b, m, w) = (d.join("s1"), d.join("s2"), d.join("merged"), d.join("whole"));
    for (dir, shard) in [(&a, "1/2"), (&b, "2/2")] {
        let (ok, _, err) = coapcc(&["sweep", p, "--out", dir.to_str().unwrap(), "--shard", shard]);
        assert!(ok, "{err}");
    }
    assert!(coapcc(&["merge", "--out", m.to_str().unwrap(), a.to_str().unwrap(), b.to_str().unwrap()]).0);
    let (ok, _, err) = coapcc(&["sweep", p, "--out", w.to_str().unwrap(), "--threads", "1"]);
    assert!(ok && err.contains("4 cells run"), "{err}");
    let whole = cells(&w);
    assert_eq!(whole.len(), 4);
    assert_eq!(cells(&m), whole, "shards, merge and threads change nothing");
    for (_, c) in &whole {
        assert_eq!(c["scenario"]["env"], "lln");
        assert_eq!(c["per_rep"].as_array().unwrap().len(), 2);
        assert_eq!(c["rto_over_time"]["mean_s"].as_array().unwrap().len(), 120);
    }
    // the tidy table names mesh clients by node id: grid3x3's clients are nodes 2 to 8
    let mut r = csv::Reader::from_path(m.join("clients.csv")).unwrap();
    let col = r.headers().unwrap().iter().position(|h| h == "client").unwrap();
    let mut ids: Vec<u32> = r.records().map(|row| row.unwrap()[col].parse().unwrap()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids, [2, 3, 4, 5, 6, 7, 8]);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn reproduce_nitk_runs_every_preset_and_reports_it() {
    let d = tmp("mesh-nitk");
    let out = d.join("r");
    let (ok, _, err) =
        coapcc(&["reproduce", "nitk", "--out", out.to_str().unwrap(), "--reps", "1", "--duration", "10"]);
    assert!(ok, "{err}");
    // GST and GSRTC: 4 algorithms each, in Cooja and on IoT-LAB; CoCoA vs CoCoA++ on 4
    // topologies and 4 mobility models; CoAP vs CoAP-Eifel on IoT-LAB
    assert!(err.contains("34 cells run"), "{err}");
    let cells = cells(&out);
    let html = std::fs::read_to_string(out.join("report/index.html")).unwrap();
    for name in [
        "nitk-gst-cooja",
        "nitk-gsrtc-cooja",
        "nitk-cocoapp-grid6x6",
        "nitk-cocoapp-chain20",
        "nitk-cocoapp-mobile-rwp",
        "nitk-cocoapp-mobile-pursue",
        "nitk-gst-iotlab",
        "nitk-gsrtc-iotlab",
        "nitk-eifel-iotlab",
    ] {
        assert!(html.contains(&format!("<h3>{name}: ")), "{name}");
    }
    // the testbed approximations say so in their headings, and only they
    for name in ["nitk-gst-iotlab", "nitk-gsrtc-iotlab", "nitk-eifel-iotlab"] {
        let h = html.split(&format!("<h3>{name}: ")).nth(1).unwrap().split("</h3>").next().unwrap();
        assert!(h.contains("(approximation: FIT/IoT-LAB M3 nodes"), "{h}");
    }
    let h = html.split("<h3>nitk-gst-cooja: ").nth(1).unwrap().split("</h3>").next().unwrap();
    assert!(!h.contains("approximation"), "{h}");
    assert_eq!(html.matches("aria-label=\"Topology and lost frames, ").count(), 34);
    assert_eq!(html.matches("aria-label=\"RTO over time, ").count(), 13);
    // one replication: the table's mean and median are that replication's value
    for (_, c) in &cells {
        let tps = c["transactions_per_s"].as_f64().unwrap();
        assert!(html.contains(&format!("<td>{tps:.2} / {tps:.2}</td>")), "{tps}");
        assert_eq!(c["scenario"]["duration_s"], 10.0);
    }
    let (ok, _, err) = coapcc(&["reproduce", "thesis", "--out", out.to_str().unwrap(), "--duration", "5"]);
    assert!(!ok && err.contains("apply to `reproduce nitk`"), "{err}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn reproduce_cloud_runs_the_cloud_presets() {
    let d = tmp("mesh-cloud");
    let out = d.join("r");
    let (ok, _, err) =
        coapcc(&["reproduce", "cloud", "--out", out.to_str().unwrap(), "--reps", "1", "--duration", "800"]);
    // 800 s is too short for the baselines' 29 clients in turn: those 8 cells are incomplete
    // (exit 3, named), and the report is there
    assert!(!ok, "{err}");
    assert!(err.contains("8 cell(s) finished incomplete"), "{err}");
    assert!(err.contains("cut at duration_s = 800.0 s"), "{err}");
    // baseline, many-to-many and burst (its clients start at 450 s), with nullrdc and ContikiMAC,
    // CLOUD's four algorithms each
    assert!(err.contains("24 cells run"), "{err}");
    let html = std::fs::read_to_string(out.join("report/index.html")).unwrap();
    for name in [
        "cloud-baseline-nullrdc",
        "cloud-m2m-nullrdc",
        "cloud-burst-nullrdc",
        "cloud-baseline-contikimac",
        "cloud-m2m-contikimac",
        "cloud-burst-contikimac",
    ] {
        assert!(html.contains(&format!("<h3>{name}: ")), "{name}");
    }
    // the motes' duty cycles, for the three ContikiMAC presets only; the burst's completion for the
    // two burst presets
    assert_eq!(html.matches("aria-label=\"Radio duty cycle, ").count(), 3);
    // and each mote's, on its topology picture (4 algorithms × 3 presets; the border router once,
    // each of the 29 servers on both of its rings)
    assert_eq!(html.matches("% of the time</title>").count(), 4 * 3 * (1 + 2 * 29));
    assert_eq!(html.matches("aria-label=\"Burst completion, ").count(), 2);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn reproduce_rttcoap_runs_the_rttcoap_presets() {
    let d = tmp("mesh-rttcoap");
    let out = d.join("r");
    let (ok, _, err) =
        coapcc(&["reproduce", "rttcoap", "--out", out.to_str().unwrap(), "--reps", "1", "--duration", "300"]);
    assert!(ok, "{err}");
    // the homogeneous and mixed scenarios on both circles, default, cocoa and rtt_coap
    assert!(err.contains("12 cells run"), "{err}");
    let html = std::fs::read_to_string(out.join("report/index.html")).unwrap();
    for name in ["rttcoap-homog-57", "rttcoap-homog-112", "rttcoap-mixed-57", "rttcoap-mixed-112"] {
        assert!(html.contains(&format!("<h3>{name}: ")), "{name}");
    }
    assert_eq!(html.matches("aria-label=\"Goodput over time, ").count(), 4);
    assert_eq!(html.matches("aria-label=\"Fairness over time, ").count(), 4);
    std::fs::remove_dir_all(&d).unwrap();
}
