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
