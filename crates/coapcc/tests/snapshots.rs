//! Recorded results: `coapcc sim --json` (less its wall-clock figures) for six scenarios of the
//! wired bottleneck that cover both transports, both workloads, link errors and 50 and 400
//! clients, and for two mesh presets (the NITK 3×3 grid and CLOUD's ContikiMAC motes behind a border router, shortened). A refactor must
//! leave every one byte-identical; a deliberate change of results updates them in a commit of its
//! own that says why (`cargo insta review`, or `INSTA_UPDATE=always cargo test -p coapcc --test
//! snapshots`).

use std::process::Command;

fn sim_json(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_coapcc"))
        .args(["sim", "--json", "--threads", "2"])
        .args(args)
        .output()
        .expect("coapcc runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    let obj = v.as_object_mut().expect("an object");
    for k in ["wall_s", "events_per_s"] {
        assert!(obj.remove(k).is_some(), "{k} is reported");
    }
    serde_json::to_string_pretty(&v).expect("serializes")
}

/// One test per scenario, its snapshot named after it.
macro_rules! snapshots {
    ($($name:ident: [$($arg:literal),*];)*) => {$(
        #[test]
        fn $name() {
            insta::assert_snapshot!(sim_json(&[$($arg),*]));
        }
    )*};
}

snapshots! {
    udp_continuous_50_clients: ["--clients", "50", "--cc", "default"];
    udp_random_50_clients_medium_errors:
        ["--clients", "50", "--workload", "random", "--errors", "medium", "--cc", "cocoa", "--reps", "2"];
    udp_continuous_400_clients_infinite_buffer: ["--clients", "400", "--buffer", "infinite", "--cc", "default"];
    tcp_continuous_50_clients_low_errors: ["--clients", "50", "--cc", "tcp", "--errors", "low"];
    tcp_random_50_clients_high_errors:
        ["--clients", "50", "--cc", "tcp", "--workload", "random", "--errors", "high", "--reps", "2"];
    tcp_random_400_clients: ["--clients", "400", "--cc", "tcp", "--workload", "random"];
    mesh_nitk_gst_cooja_120s: ["--preset", "nitk-gst-cooja", "--cc", "default", "--duration", "120", "--reps", "2"];
    mesh_cloud_m2m_contikimac_120s: ["--preset", "cloud-m2m-contikimac", "--cc", "cocoa", "--duration", "120", "--reps", "1"];
}
