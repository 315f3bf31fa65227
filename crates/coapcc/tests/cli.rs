//! The `coapcc` binary as a user runs it.

use std::process::Command;

fn coapcc(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_coapcc")).args(args).output().expect("runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn algorithms_lists_every_algorithm_with_source_and_defaults() {
    let (ok, out, _) = coapcc(&["algorithms"]);
    assert!(ok);
    for name in [
        "default",
        "default_b",
        "default_fb1",
        "default_fb2",
        "cocoa",
        "cocoa4",
        "cocoa_fb1",
        "cocoa_fb2",
        "linux_rto",
        "fasor",
        "fasor_slow",
        "fasor_fastslow",
        "fasor_k4",
        "fasor_token",
        "fasor_option",
        "rtt_coap",
        "gst",
        "eifel",
        "gsrtc",
        "cocoa_pp",
        "peakhopper",
        "tcp",
    ] {
        assert!(out.lines().any(|l| l.starts_with(&format!("{name}  —"))), "{name} missing");
    }
    assert!(out.contains("source: draft-ietf-core-fasor-02"));
    assert!(out.contains("ack_timeout=2 "));
    assert!(out.contains("max_retransmit=4"));
}

#[test]
fn algorithms_json_and_one_spec() {
    let (ok, out, _) = coapcc(&["algorithms", "--json", "fasor:max_retransmit=20"]);
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v[0]["name"], "fasor");
    assert_eq!(v[0]["spec"], "fasor:max_retransmit=20");
    let mr = v[0]["parameters"].as_array().unwrap().iter().find(|p| p["name"] == "max_retransmit").unwrap();
    assert_eq!(mr["default"], 20, "a number, not a string");
    // every default in its JSON type: numbers, booleans, names
    let (_, out, _) = coapcc(&["algorithms", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let param = |alg: &str, name: &str| {
        let a = v.as_array().unwrap().iter().find(|a| a["name"] == alg).unwrap();
        a["parameters"].as_array().unwrap().iter().find(|p| p["name"] == name).unwrap()["default"].clone()
    };
    assert_eq!(param("default", "max_retransmit"), 4);
    assert_eq!(param("default", "ack_random_factor"), 1.5);
    assert_eq!(param("cocoa", "aging"), true);
    assert_eq!(param("cocoa", "vbf"), "once");
    assert_eq!(param("tcp", "syn_retries"), 40);
}

#[test]
fn bad_names_give_a_clear_error() {
    let (ok, out, err) = coapcc(&["algorithms", "fasr"]);
    assert!(!ok && out.is_empty());
    assert!(err.starts_with("coapcc: error: unknown algorithm 'fasr'; valid algorithms: default,"), "{err}");
    assert!(err.trim_end().ends_with("or tcp (CoAP over TCP)"), "tcp is named too: {err}");
    let (ok, _, err) = coapcc(&["sim", "--cc", "tpc"]);
    assert!(!ok && err.contains("unknown algorithm 'tpc'") && err.contains("or tcp"), "{err}");
    let (ok, out, _) = coapcc(&["algorithms", "tcp"]);
    assert!(ok && out.starts_with("tcp  —"), "{out}");
    let (ok, _, err) = coapcc(&["algorithms", "cocoa:agin=false"]);
    assert!(!ok && err.contains("no parameter 'agin'") && err.contains("aging"), "{err}");
}

#[test]
fn typos_in_an_algorithm_spec_are_refused_not_ignored() {
    for (spec, says) in [
        ("fasor:", "'fasor:' has nothing after the colon"),
        ("fasor:max_retransmit=4,max_retransmit=5", "'max_retransmit' is given twice"),
        ("fasor:max_retransmit=4,,nstart=1", "is not of the form key=value"),
        ("tcp:", "'tcp:' has nothing after the colon"),
    ] {
        let (ok, _, err) = coapcc(&["sim", "--clients", "1", "--reps", "1", "--cc", spec]);
        assert!(!ok && err.contains(says), "{spec}: {err}");
    }
    let (ok, _, err) = coapcc(&["algorithms", "cocoa:aging=false,aging=true"]);
    assert!(!ok && err.contains("'aging' is given twice"), "{err}");
}

fn code(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_coapcc")).args(args).output().expect("runs");
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn usage_errors_exit_2_and_messages_name_what_is_wrong() {
    // options that do not go together: usage errors, as the parser's own
    for args in [
        &["sim", "--preset", "nitk-gst-cooja", "--clients", "3"][..],
        &["sim", "--duration", "5"],
        &["reproduce", "thesis", "--out", "/tmp/never-made", "--loads"],
        &["reproduce", "thesis", "--out", "/tmp/never-made", "--quick", "--reps", "2"],
        // beyond the simulator's bounds: a usage error as clap's own `--clients 0` is
        &["sim", "--clients", "2000000"],
        &["sim", "--buffer", "2000000000000"],
        &["sim", "--set", "clients"],
    ] {
        let (c, err) = code(args);
        assert_eq!(c, Some(2), "{args:?}: {err}");
    }
    // times beyond any clock: refused by name, never a panic (10^300 s had overflowed)
    for args in [
        &["server", "--duration", "1e300"][..],
        &["relay", "--duration", "1e300", "--upstream", "127.0.0.1:9"],
        &["emulate", "--duration", "1e300"],
        &["client", "-B", "1e300", "coap://127.0.0.1:9/x"],
        &["client", "-s", "1e300", "coap://127.0.0.1:9/x"],
        &["sim", "--preset", "nitk-gst-cooja", "--duration", "1e300"],
    ] {
        let (c, err) = code(args);
        assert_eq!(c, Some(2), "{args:?}: {err}");
        assert!(err.contains("seconds is too long (at most 1e9)"), "{args:?}: {err}");
    }
    // a scenario that never ends, or is not text: refused at once
    for (dev, what) in [("/dev/urandom", "larger than 16 MiB"), ("/dev/zero", "larger than 16 MiB")] {
        let relay = ["relay", "--scenario", dev, "--listen", "127.0.0.1:0", "--upstream", "127.0.0.1:9"];
        for args in [&["sim", "--scenario", dev][..], &["emulate", "--scenario", dev], &relay] {
            let (c, err) = code(args);
            assert_eq!(c, Some(1), "{args:?}: {err}");
            assert!(err.contains(what), "{args:?}: {err}");
        }
    }
    let d = std::env::temp_dir().join(format!("coapcc-cli-msgs-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    // a misspelt env is named, not read as an unknown field of the bottleneck's
    let lnn = d.join("lnn.toml");
    std::fs::write(&lnn, "env = \"lnn\"\n").unwrap();
    let (c, err) = code(&["sim", "--scenario", lnn.to_str().unwrap()]);
    assert_eq!(c, Some(1));
    assert!(err.contains("env = \"lnn\": unknown; \"lln\" is the low-power mesh"), "{err}");
    // the wired bottleneck's options on a mesh, given to the relay
    let mesh = d.join("mesh.toml");
    std::fs::write(&mesh, "env = \"lln\"\n").unwrap();
    let (c, err) = code(&[
        "relay",
        "--scenario",
        mesh.to_str().unwrap(),
        "--buffer",
        "5000",
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        "127.0.0.1:9",
    ]);
    assert_eq!(c, Some(2));
    assert!(err.contains("--buffer:") && err.contains("is a low-power mesh scenario, which sets its own"), "{err}");
    // the wired bottleneck's options on a mesh (refused before anything is set up)
    let (c, err) = code(&["emulate", "--preset", "nitk-cocoapp-grid6x6", "--errors", "high"]);
    assert_eq!(c, Some(2));
    assert!(
        err.contains("--errors: preset nitk-cocoapp-grid6x6 is a low-power mesh scenario, which sets its own"),
        "{err}"
    );
    std::fs::remove_dir_all(&d).unwrap();
    // a report that cannot be written names its path
    let plan = std::env::temp_dir().join(format!("coapcc-cli-plan-{}", std::process::id()));
    std::fs::create_dir_all(&plan).unwrap();
    std::fs::write(plan.join("p.toml"), "[matrix]\nclients = [1]\n").unwrap();
    let res = plan.join("res");
    assert_eq!(code(&["sweep", plan.join("p.toml").to_str().unwrap(), "--out", res.to_str().unwrap()]).0, Some(0));
    let (c, err) = code(&["report", res.to_str().unwrap(), "--out", "/proc/coapcc-report"]);
    assert_eq!(c, Some(1));
    assert!(err.contains("cannot create /proc/coapcc-report"), "{err}");
    std::fs::remove_dir_all(&plan).unwrap();
}

#[test]
fn sim_set_writes_a_key_over_the_preset_and_a_run_that_measured_nothing_exits_3() {
    // 3 clients of 2 exchanges through a downlink that loses everything: every exchange fails
    let dead = [
        "sim",
        "--clients",
        "3",
        "--set",
        "exchanges=2",
        "--set",
        "errors=\"custom\"",
        "--set",
        "downlink.loss={ model = \"bernoulli\", p = 1.0 }",
        "--set",
        "cc_defaults.max_retransmit=\"1\"",
        "--json",
        "-q",
    ];
    let out = Command::new(env!("CARGO_BIN_EXE_coapcc")).args(dead).output().expect("runs");
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    let j: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!((j["exchanges"].as_u64(), j["failed_exchanges"].as_u64()), (Some(6), Some(6)), "{stdout}");
    assert_eq!(j["scenario"]["cc"], "default:max_retransmit=1");
    assert!(stderr.contains("every exchange (6) failed: the run measured nothing"), "{stderr}");
    // the same with the loss gone: done, exit 0
    let mut alive = dead.to_vec();
    alive[8] = "downlink.loss={ model = \"none\" }";
    assert_eq!(code(&alive).0, Some(0));
    // a key the scenario does not have is refused where it is resolved
    let (c, err) = code(&["sim", "--set", "downlink.colour=1", "-q"]);
    assert_eq!(c, Some(1));
    assert!(err.contains("--set downlink.colour=1") && err.contains("unknown field `colour`"), "{err}");
}

#[test]
fn sim_out_replaces_an_earlier_runs_tables() {
    let d = std::env::temp_dir().join(format!("coapcc-cli-stale-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    let out = d.to_str().unwrap();
    let mesh = ["sim", "--preset", "nitk-gst-cooja", "--cc", "default", "--duration", "5", "--reps", "1", "--out", out];
    assert_eq!(code(&mesh).0, Some(0));
    assert!(d.join("nodes.csv").exists());
    assert_eq!(code(&["sim", "--clients", "2", "--out", out]).0, Some(0));
    assert!(!d.join("nodes.csv").exists(), "a mesh run's motes do not stay beside a bottleneck run's tables");
    let clients = std::fs::read_to_string(d.join("clients.csv")).unwrap();
    assert_eq!(clients.lines().count(), 1 + 2);
    // --tables: only the tables asked for, and none left of the run before
    assert!(d.join("exchanges.csv").exists() && d.join("rto.csv").exists());
    assert_eq!(code(&["sim", "--clients", "2", "--out", out, "--tables", "clients"]).0, Some(0));
    assert!(d.join("summary.json").exists() && d.join("clients.csv").exists());
    assert!(!d.join("exchanges.csv").exists() && !d.join("rto.csv").exists());
    let (c, err) = code(&["sim", "--out", out, "--tables", "clients,exchange"]);
    assert_eq!(c, Some(2));
    assert!(err.contains("unknown table 'exchange'"), "{err}");
    assert_eq!(code(&["sim", "--tables", "clients"]).0, Some(2), "--tables without --out");
    std::fs::remove_dir_all(&d).unwrap();
}
