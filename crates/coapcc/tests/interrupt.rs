//! Ctrl-C in a long `sim` or `sweep`: the run stops within about a second (after the replications
//! running then), says so, exits with status 3, and keeps what finished.

#[allow(dead_code)] // only its tmp() here
mod common;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::tmp;

/// Starts coapcc with `args`, sends it SIGINT after `after`, and waits at most 60 s for it to end:
/// its exit code, its stderr, and how long it took after the signal.
#[allow(clippy::disallowed_methods)] // the wall clock: how long the run took to stop
fn interrupt(args: &[&str], after: Duration) -> (Option<i32>, String, Duration) {
    let mut child: Child = Command::new(env!("CARGO_BIN_EXE_coapcc"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    std::thread::sleep(after);
    assert!(child.try_wait().unwrap().is_none(), "the run must still be going when interrupted");
    let sent = Instant::now();
    let kill = Command::new("kill").args(["-INT", &child.id().to_string()]).status().expect("kill runs");
    assert!(kill.success());
    let deadline = sent + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("still running 60 s after SIGINT");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let took = sent.elapsed();
    let out = child.wait_with_output().unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned(), took)
}

#[test]
fn sim_stops_on_ctrl_c_and_reports_the_replications_that_finished() {
    let d = tmp("interrupt-sim");
    let out = d.join("out");
    // 20,000 replications of 10 clients: far longer than the test waits
    let args = ["sim", "--clients", "10", "--reps", "20000", "--threads", "1", "-q", "--out", out.to_str().unwrap()];
    let (code, err, took) = interrupt(&args, Duration::from_millis(1500));
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("interrupted: finishing the replications running now"), "{err}");
    assert!(err.contains("interrupted: the results are those of the replications that finished"), "{err}");
    // it stops within a second, then writes what finished: 10 s bound both on a busy machine
    assert!(took < Duration::from_secs(10), "stopped {took:?} after the signal");
    // the summary is of the replications that finished: 10 clients each
    assert!(out.join("summary.json").exists());
    let rows = std::fs::read_to_string(out.join("clients.csv")).unwrap().lines().count() - 1;
    assert!(rows > 0 && rows % 10 == 0 && rows < 10 * 20000, "{rows} client rows");
    assert!(err.contains(&format!("{} of 20000 replication(s)", rows / 10)), "{err}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn sweep_stops_on_ctrl_c_and_keeps_the_finished_cells() {
    let d = tmp("interrupt-sweep");
    let plan = d.join("plan.toml");
    // 400 cells of a few hundred replications each
    let clients: Vec<String> = (1..=400).map(|c| c.to_string()).collect();
    std::fs::write(&plan, format!("seed = 1\nreps = 300\n[matrix]\nclients = [{}]\n", clients.join(", "))).unwrap();
    let out = d.join("out");
    let args = ["sweep", plan.to_str().unwrap(), "--out", out.to_str().unwrap(), "--threads", "1"];
    let (code, err, took) = interrupt(&args, Duration::from_millis(2000));
    assert_eq!(code, Some(3), "{err}");
    // it stops within a second, then writes what finished: 10 s bound both on a busy machine
    assert!(took < Duration::from_secs(10), "stopped {took:?} after the signal");
    let kept = std::fs::read_dir(out.join("cells"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().ends_with(".json"))
        .count();
    assert!(err.contains(&format!("interrupted: {kept} cell(s) finished and kept, {} not run", 400 - kept)), "{err}");
    // what finished is whole, and in the tidy table
    let rows = std::fs::read_to_string(out.join("clients.csv")).unwrap().lines().count() - 1;
    let expected: usize = std::fs::read_dir(out.join("cells"))
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().to_str().and_then(|n| n.strip_suffix(".json")).map(str::to_string))
        .map(|id| {
            std::fs::read_to_string(out.join("cells").join(format!("{id}.clients.csv"))).unwrap().lines().count() - 1
        })
        .sum();
    assert_eq!(rows, expected);
    std::fs::remove_dir_all(&d).unwrap();
}
