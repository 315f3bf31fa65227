//! `coapcc emulate` as a user runs it: killed with SIGKILL (no clean-up of its own), it leaves
//! its namespaces and the processes in them; the next `coapcc emulate` removes both. And a whole
//! run with the server's and clients' commands inside the namespaces.
//!
//! They need root, `/dev/net/tun` and iproute2's `ip`; elsewhere they are skipped with a message,
//! unless `COAPCC_EMULATE` is set (as `scripts/test` does): then a missing requirement fails them.
#![cfg(target_os = "linux")]

use std::process::{Command, Stdio};
use std::time::Duration;
use tokio::time::Instant;

fn available() -> bool {
    match coap_net::emulate::netns::requirements() {
        Ok(()) => true,
        Err(e) if std::env::var_os("COAPCC_EMULATE").is_some() => panic!("COAPCC_EMULATE is set but {e}"),
        Err(e) => {
            eprintln!("skipped: IP-level emulation cannot run here: {e}");
            false
        }
    }
}

fn namespaces_of(pid: u32) -> Vec<String> {
    let out = Command::new("ip").args(["netns", "list"]).output().unwrap();
    let prefix = format!("coapcc-{pid}-");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with(&prefix))
        .map(String::from)
        .collect()
}

fn pids_in(ns: &str) -> Vec<u32> {
    let out = Command::new("ip").args(["netns", "pids", ns]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).split_whitespace().filter_map(|p| p.parse().ok()).collect()
}

/// Whether `pid` runs (a zombie left for its parent to reap does not).
fn runs(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| s.rsplit_once(')').is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')))
}

#[test]
fn after_sigkill_the_next_start_removes_what_was_left() {
    if !available() {
        return;
    }
    let bin = env!("CARGO_BIN_EXE_coapcc");
    let mut victim = Command::new(bin)
        .args(["emulate", "--clients", "3", "--duration", "60", "--server-exec", "exec sleep 300"])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = victim.id();
    // wait (at most 10 s) for its namespaces and the process in the server's
    let t = Instant::now();
    let (names, sleeper) = loop {
        let names = namespaces_of(pid);
        let server = names.iter().find(|n| n.ends_with("-s")).cloned();
        if let Some(p) = server.and_then(|s| pids_in(&s).first().copied()) {
            break (names, p);
        }
        assert!(t.elapsed() < Duration::from_secs(10), "the emulator did not set up within 10 s");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(names.len(), 2);
    victim.kill().unwrap(); // SIGKILL
    victim.wait().unwrap();
    // the crash left them behind
    assert_eq!(namespaces_of(pid).len(), 2);
    assert!(runs(sleeper));
    // the next start removes them, and says so
    let next = Command::new(bin)
        .args(["emulate", "--clients", "1", "--duration", "0.1"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let next_pid = next.id();
    let next = next.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&next.stderr);
    assert!(next.status.success(), "{said}");
    for n in &names {
        assert!(said.contains(&format!("removed {n}")), "{said}");
    }
    assert!(namespaces_of(pid).is_empty());
    assert!(namespaces_of(next_pid).is_empty(), "the clean run left its own");
    assert!(!runs(sleeper), "the process left in the namespace still runs");
    // no device of ours is left where it could be seen (the devices lived in the namespaces)
    let links = Command::new("ip").args(["-o", "link"]).output().unwrap();
    assert!(!String::from_utf8_lossy(&links.stdout).contains("coapcc0"));
}

/// `coapcc emulate` with 10 clients behind the 2,500-byte buffers, `coapcc server SERVER_ARGS`
/// in the server's namespace and `coapcc load --server URL LOAD_ARGS` (3 exchanges a client) in
/// the clients'; the load's and the emulator's JSON reports.
fn emulated_load(server_args: &str, url: &str, load_args: &str) -> (serde_json::Value, serde_json::Value) {
    let bin = env!("CARGO_BIN_EXE_coapcc");
    let dir = tempfile::tempdir().unwrap();
    let (load, report) = (dir.path().join("load.json"), dir.path().join("emulate.json"));
    let out = Command::new(bin)
        .args(["emulate", "--clients", "10", "--buffer", "2500"])
        .args(["--server-exec", &format!("{bin} server {server_args} --bind $COAPCC_SERVER:5683 --no-deadlines")])
        .args([
            "--clients-exec",
            &format!(
                "{bin} load --server {url} {load_args} --clients $COAPCC_CLIENTS --exchanges 3 --bind $COAPCC_CLIENT:0 --bind-each --no-deadlines --json > {}",
                load.display()
            ),
        ])
        .arg("--report")
        .arg(&report)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let read = |p: &std::path::Path| serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
    (read(&load), read(&report))
}

#[test]
fn a_kernel_tcp_load_runs_through_the_emulator() {
    if !available() {
        return;
    }
    let (l, r) = emulated_load("--tcp", "coap+tcp://$COAPCC_SERVER/test", "");
    assert_eq!((l["exchanges"].as_u64(), l["failed_exchanges"].as_u64()), (Some(30), Some(0)));
    // every exchange crossed the model: at least the 30 requests up and 30 responses down
    assert!(r["tcp"]["up"]["data_segments"].as_u64().unwrap() >= 30);
    assert!(r["tcp"]["down"]["data_segments"].as_u64().unwrap() >= 30);
    assert_eq!(r["tcp"]["clients"].as_array().unwrap().len(), 10);
    assert_eq!(r["scenario"]["tcp"]["early_retrans"].as_u64(), Some(3));
    // the kernels' counters were read in the namespaces: the server accepted 10 connections
    assert_eq!(r["kernel"]["server"]["TcpPassiveOpens"].as_u64(), Some(10));
    assert_eq!(r["kernel"]["clients"]["TcpActiveOpens"].as_u64(), Some(10));
    // a response needs at least the path's 600 ms of propagation
    assert!(l["rtt_s"]["min"].as_f64().unwrap() > 0.6);
}

/// hedge, coapcc's own algorithm, on the real stack through the emulated bottleneck: `coapcc
/// load --cc hedge` over UDP, 10 clients behind the 2,500-byte buffers, every exchange answered
/// and timed by the path's 600 ms of propagation at least.
#[test]
fn a_hedge_load_runs_through_the_emulator() {
    if !available() {
        return;
    }
    let (l, r) = emulated_load("", "coap://$COAPCC_SERVER/test", "--cc hedge");
    assert_eq!(l["cc"].as_str(), Some("hedge"));
    assert_eq!((l["exchanges"].as_u64(), l["failed_exchanges"].as_u64()), (Some(30), Some(0)));
    assert!(l["rtt_s"]["min"].as_f64().unwrap() > 0.6);
    // every request and every response crossed the model's links
    assert!(r["packets"]["up"].as_u64().unwrap() >= 30 && r["packets"]["down"].as_u64().unwrap() >= 30, "{r}");
}

/// The server's process when its namespace's name is gone: the clients' command removes the
/// server's namespace (`ip netns del`) while `coapcc server` runs in it; the emulator
/// still finds and ends it (by the namespace's inode), at its end or, after a SIGKILL, at the
/// next start.
#[test]
fn a_process_whose_namespace_lost_its_name_is_still_ended() {
    if !available() {
        return;
    }
    let bin = env!("CARGO_BIN_EXE_coapcc");
    let dir = std::env::temp_dir().join(format!("coapcc-emulate-unnamed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pidfile = dir.join("server.pid");
    let sleeper_of = |f: &std::path::Path| -> u32 {
        let t = Instant::now();
        loop {
            if let Some(p) = std::fs::read_to_string(f).ok().and_then(|s| s.trim().parse().ok()) {
                return p;
            }
            assert!(t.elapsed() < Duration::from_secs(10), "no server pid within 10 s");
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    // the clients' command is a child of the emulator (`ip netns exec` execs it): $PPID names
    // the namespaces, coapcc-PPID-0-s the server's
    let server = format!("echo $$ > {}; exec {bin} server", pidfile.display());
    let clients = "ip netns del coapcc-$PPID-0-s && sleep 0.3";
    let run = Command::new(bin)
        .args(["emulate", "--clients", "1", "--duration", "20", "--server-exec", &server, "--clients-exec", clients])
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{said}");
    let sleeper = sleeper_of(&pidfile);
    assert!(!runs(sleeper), "the server's process outlived the emulator");
    // after a SIGKILL the next start finds it through the record of the namespace's inode
    let _ = std::fs::remove_file(&pidfile);
    let server = format!("echo $$ > {}; exec {bin} server", pidfile.display());
    let clients = "ip netns del coapcc-$PPID-0-s && exec sleep 300";
    let mut victim = Command::new(bin)
        .args(["emulate", "--clients", "1", "--duration", "60", "--server-exec", &server, "--clients-exec", clients])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let sleeper = sleeper_of(&pidfile);
    let pid = victim.id();
    let t = Instant::now();
    while namespaces_of(pid).len() != 1 {
        assert!(t.elapsed() < Duration::from_secs(10), "the server's namespace kept its name");
        std::thread::sleep(Duration::from_millis(50));
    }
    victim.kill().unwrap();
    victim.wait().unwrap();
    assert!(runs(sleeper));
    let next = Command::new(bin).args(["emulate", "--clients", "1", "--duration", "0.1"]).output().unwrap();
    let said = String::from_utf8_lossy(&next.stderr);
    assert!(next.status.success(), "{said}");
    assert!(said.contains(&format!("removed coapcc-{pid}-0-s")), "{said}");
    assert!(!runs(sleeper), "the server's process outlived the sweep");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The clients' command's exit status is the emulator's (as its --help says): 7 for `exit 7`,
/// 128 + 9 for a command killed by SIGKILL, 0 for success.
#[test]
fn the_clients_commands_exit_status_is_ours() {
    if !available() {
        return;
    }
    let bin = env!("CARGO_BIN_EXE_coapcc");
    for (cmd, code) in [("exit 7", 7), ("kill -9 $$", 137), ("true", 0)] {
        let run = Command::new(bin)
            .args(["emulate", "--clients", "1", "--duration", "10", "--clients-exec", cmd])
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(code), "{cmd}: {said}");
        if code != 0 {
            assert!(said.contains("--clients-exec ended with"), "{said}");
        }
    }
}

/// SIGTERM at any moment of the start, the set-up included, leaves no namespace behind: sent
/// 0 to 300 ms after the start, in steps of 15 ms (the set-up runs a dozen `ip` commands).
#[test]
fn sigterm_at_any_moment_of_the_start_leaves_nothing() {
    if !available() {
        return;
    }
    let bin = env!("CARGO_BIN_EXE_coapcc");
    for delay_ms in (0..=300).step_by(15) {
        let child = Command::new(bin)
            .args(["emulate", "--clients", "2", "--duration", "30"])
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let pid = child.id();
        std::thread::sleep(Duration::from_millis(delay_ms));
        let _ = Command::new("kill").args(["-TERM", &pid.to_string()]).status();
        let out = child.wait_with_output().unwrap();
        assert!(
            namespaces_of(pid).is_empty(),
            "SIGTERM {delay_ms} ms in left {:?} ({:?})",
            namespaces_of(pid),
            out.status
        );
    }
}
