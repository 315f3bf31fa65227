//! `coapcc sweep`, `merge`, `report` as users run them: two shards locally then merged (the
//! README's cluster recipe in miniature), resumption, and the report in headless Chromium.

mod common;

use std::process::Command;

use common::{cells, tmp};

fn coapcc(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_coapcc")).args(args).output().expect("runs");
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
}

const PLAN: &str = "seed = 7\nreps = 2\n[matrix]\nstack = [\"default\", \"fasor\", \"tcp\"]\nbuffer = [2500, 1410000]\nclients = [5, 30]\n";

#[test]
fn two_shards_merged_equal_one_run_and_resumption_skips_finished_cells() {
    let d = tmp("sweep");
    let plan = d.join("plan.toml");
    std::fs::write(&plan, PLAN).unwrap();
    let p = plan.to_str().unwrap();
    let (a, b, m, w) = (d.join("s1"), d.join("s2"), d.join("merged"), d.join("whole"));
    assert!(coapcc(&["sweep", p, "--out", a.to_str().unwrap(), "--shard", "1/2"]).0);
    assert!(coapcc(&["sweep", p, "--out", b.to_str().unwrap(), "--shard", "2/2"]).0);
    assert!(coapcc(&["merge", "--out", m.to_str().unwrap(), a.to_str().unwrap(), b.to_str().unwrap()]).0);
    let (ok, err) = coapcc(&["sweep", p, "--out", w.to_str().unwrap(), "--threads", "1"]);
    assert!(ok, "{err}");
    assert!(err.contains("12 cells run, 0 already finished"), "{err}");
    let (merged, whole) = (cells(&m), cells(&w));
    assert_eq!(merged.len(), 12);
    assert_eq!(merged, whole, "sharding and threads change nothing");
    // the tidy table: the plan's parameters as columns, one row per client and replication
    let csv = std::fs::read_to_string(m.join("clients.csv")).unwrap();
    let header = csv.lines().next().unwrap();
    assert!(header.starts_with("cc,cc_params,buffer,clients,rep,client,fct_s"), "{header}");
    assert_eq!(csv.lines().count(), 1 + 2 * 2 * 3 * (5 + 30)); // reps × buffers × algorithms × clients
                                                               // resumption: a finished cell is skipped; a lost one (or a leftover .tmp) is run again
    let first = &merged[0].0;
    std::fs::remove_file(w.join("cells").join(first)).unwrap();
    std::fs::write(w.join("cells").join("junk.json.tmp"), "half-written").unwrap();
    let (ok, err) = coapcc(&["sweep", p, "--out", w.to_str().unwrap()]);
    assert!(ok && err.contains("1 cells run, 11 already finished"), "{err}");
    assert_eq!(cells(&w), whole);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn two_sweeps_into_one_directory_at_once_both_finish() {
    // every writer used to share one temporary name per file (plan.toml.tmp, …): concurrent
    // sweeps failed with "No such file or directory" when one renamed the other's file away
    let d = tmp("concurrent");
    let plan = d.join("plan.toml");
    std::fs::write(
        &plan,
        "seed = 3\nreps = 1\n[matrix]\ncc = [\"default\", \"fasor\"]\nclients = [1, 2, 3, 4, 5, 6]\n",
    )
    .unwrap();
    let out = d.join("out");
    let spawn = || {
        Command::new(env!("CARGO_BIN_EXE_coapcc"))
            .args(["sweep", plan.to_str().unwrap(), "--out", out.to_str().unwrap(), "--threads", "1"])
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    for _ in 0..3 {
        let _ = std::fs::remove_dir_all(&out);
        let (a, b) = (spawn(), spawn());
        for c in [a, b] {
            let o = c.wait_with_output().unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        }
        assert_eq!(cells(&out).len(), 12);
        let names: Vec<String> = std::fs::read_dir(out.join("cells"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
    }
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn the_tidy_table_gives_every_row_every_parameter() {
    // two matrices that vary different keys: each row still carries cc, errors and reps
    let d = tmp("tidy");
    let plan = d.join("plan.toml");
    std::fs::write(
        &plan,
        "[[matrices]]\ncc = [\"default\", \"cocoa:aging=true\"]\nclients = [2]\n\
         [[matrices]]\nerrors = [\"low\"]\nclients = [3]\nreps = [2]\n",
    )
    .unwrap();
    let out = d.join("o");
    let (ok, err) = coapcc(&["sweep", plan.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(ok, "{err}");
    let mut r = csv::Reader::from_path(out.join("clients.csv")).unwrap();
    let header: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
    assert_eq!(&header[..5], ["cc", "cc_params", "clients", "errors", "reps"]);
    let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 2 * 2 + 3 * 2);
    for row in &rows {
        assert!((0..5).filter(|&i| i != 1).all(|i| !row[i].is_empty()), "{row:?}");
    }
    let get = |cc: &str, params: &str| rows.iter().filter(|r| &r[0] == cc && &r[1] == params).count();
    // the unvaried keys take the preset's values: errors none and 1 replication
    assert_eq!(get("default", "max_retransmit=20"), 2 + 6);
    // cocoa:aging=true over the preset's aging=false: CoCoA's own default, written out all the
    // same (read back, the preset's aging=false would win), beside the testbed's MAX_RETRANSMIT
    assert_eq!(get("cocoa", "max_retransmit=20,aging=true"), 2);
    assert_eq!(rows.iter().filter(|r| &r[3] == "none" && &r[4] == "1").count(), 4);
    assert_eq!(rows.iter().filter(|r| &r[3] == "low" && &r[4] == "2").count(), 6);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn results_of_two_plans_do_not_mix_unless_forced() {
    let d = tmp("twoplans");
    let (a, b) = (d.join("a.toml"), d.join("b.toml"));
    std::fs::write(&a, "[matrix]\nclients = [1, 2, 3, 4]\n").unwrap();
    std::fs::write(&b, "[matrix]\nclients = [1, 5]\n").unwrap();
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let out = d.join("out");
    let o = out.to_str().unwrap();
    assert!(coapcc(&["sweep", a, "--out", o]).0);
    let plan_a = std::fs::read_to_string(out.join("plan.toml")).unwrap();
    // another plan into the same directory: refused, nothing written
    let (ok, err) = coapcc(&["sweep", b, "--out", o]);
    assert!(!ok && err.contains("holds results of another plan") && err.contains("--force"), "{err}");
    assert_eq!(cells(&out).len(), 4);
    // forced: the cells mix, the directory's plan stays and the new one is kept beside it
    let (ok, err) = coapcc(&["sweep", b, "--out", o, "--force"]);
    assert!(ok && err.contains("1 cells run, 1 already finished"), "{err}");
    assert_eq!(std::fs::read_to_string(out.join("plan.toml")).unwrap(), plan_a);
    let kept = std::fs::read_dir(&out).unwrap().filter_map(|e| e.ok()).any(|e| {
        let n = e.file_name().to_string_lossy().to_string();
        n.starts_with("plan-") && n.ends_with(".toml")
    });
    assert!(kept, "plan-HASH.toml");
    // the tidy table's last column names the plan that ran each row's cell: both plans here
    let tidy = std::fs::read_to_string(out.join("clients.csv")).unwrap();
    let mut lines = tidy.lines();
    assert!(lines.next().unwrap().ends_with(",cell,plan"));
    let plans: std::collections::BTreeSet<&str> = lines.map(|l| l.rsplit(',').next().unwrap()).collect();
    assert_eq!(plans.len(), 2, "{plans:?}");
    // the report counts the other plan's cell apart (it had said "5 of the plan's 4 cells")
    assert!(coapcc(&["report", o]).0);
    let html = std::fs::read_to_string(out.join("report/index.html")).unwrap();
    assert!(html.contains("All 4 cells of the plan, <strong>and 1 cells of other plans</strong>"), "report");
    // shards of one plan: a merge of one of two says how much of the plan is there
    let (s1, s2, m) = (d.join("s1"), d.join("s2"), d.join("m"));
    assert!(coapcc(&["sweep", a, "--out", s1.to_str().unwrap(), "--shard", "1/2"]).0);
    assert!(coapcc(&["sweep", a, "--out", s2.to_str().unwrap(), "--shard", "2/2"]).0);
    let (n1, n2) = (cells(&s1).len(), cells(&s2).len());
    assert_eq!(n1 + n2, 4);
    let (ok, err) = coapcc(&["merge", "--out", m.to_str().unwrap(), s1.to_str().unwrap()]);
    assert!(ok && err.contains(&format!("{n1} of the 4 cells of plan")), "{err}");
    assert!(coapcc(&["report", m.to_str().unwrap()]).0);
    let html = std::fs::read_to_string(m.join("report/index.html")).unwrap();
    assert!(n1 == 4 || html.contains(&format!("{n1} of the plan's 4 cells")), "the report says it is partial");
    let (ok, err) = coapcc(&["merge", "--out", m.to_str().unwrap(), s2.to_str().unwrap()]);
    assert!(ok && err.contains("all 4 cells of plan"), "{err}");
    // a shard of another plan is refused
    let other = d.join("other");
    assert!(coapcc(&["sweep", b, "--out", other.to_str().unwrap()]).0);
    let (ok, err) =
        coapcc(&["merge", "--out", d.join("m2").to_str().unwrap(), s1.to_str().unwrap(), other.to_str().unwrap()]);
    assert!(!ok && err.contains("holds results of another plan"), "{err}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn the_report_names_every_varied_key_and_shows_coinciding_lines() {
    let d = tmp("report-keys");
    let plan = d.join("plan.toml");
    // without losses and without the server hop's jitter, default and default_b never back off
    // and draw nothing that matters: their FCTs are the same
    std::fs::write(
        &plan,
        "[base]\nserver_hop = { delay_min_ms = 15.0, delay_max_ms = 15.0 }\n\
         [matrix]\ncc = [\"default\", \"default_b\"]\nclients = [2]\n\"downlink.delay_ms\" = [400.0, 100.0]\n",
    )
    .unwrap();
    let out = d.join("r");
    let (ok, err) = coapcc(&["sweep", plan.to_str().unwrap(), "--out", out.to_str().unwrap(), "--report"]);
    assert!(ok, "{err}");
    let html = std::fs::read_to_string(out.join("report/index.html")).unwrap();
    assert!(html.contains("<th>downlink.delay_ms</th>"), "the medians table has the varied key's column");
    assert!(html.contains("default_b coincides with default (dashed)"), "a hidden line is said");
    // the medians table lists the cells in the figures' order
    let figures: Vec<&str> =
        ["downlink.delay_ms=100.0", "downlink.delay_ms=400.0"].into_iter().filter(|k| html.contains(k)).collect();
    let order = |k: &str| html.find(k).unwrap();
    assert!(order(figures[0]) < order(figures[1]));
    let medians = &html[html.find("id=\"medians\"").unwrap()..];
    let (a, b) = (medians.find("<td>100.0</td>").unwrap(), medians.find("<td>400.0</td>").unwrap());
    assert!(a < b, "100 ms rows first, as the figures");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn bad_plans_and_shards_are_clear_errors() {
    let d = tmp("badplan");
    let plan = d.join("plan.toml");
    std::fs::write(&plan, "[matrix]\nclient = [1]\n").unwrap();
    let (ok, err) = coapcc(&["sweep", plan.to_str().unwrap(), "--out", d.join("o").to_str().unwrap()]);
    assert!(!ok && err.contains("unknown field `client`"), "{err}");
    std::fs::write(&plan, "reps = 0\n[matrix]\nclients = [1]\n").unwrap();
    let (ok, err) = coapcc(&["sweep", plan.to_str().unwrap(), "--out", d.join("o").to_str().unwrap()]);
    assert!(!ok && err.contains("reps must be a whole number ≥ 1"), "{err}");
    let (ok, err) = coapcc(&["sweep", plan.to_str().unwrap(), "--out", "x", "--shard", "3/2"]);
    assert!(!ok && err.contains("need 1 <= K <= N"), "{err}");
    std::fs::remove_dir_all(&d).unwrap();
}

fn browser() -> Option<&'static str> {
    let found =
        Command::new("sh").arg("-c").arg("command -v chromium").output().map(|o| o.status.success()).unwrap_or(false);
    if !found {
        assert!(
            std::env::var("COAPCC_BROWSER").is_err(),
            "chromium is missing but COAPCC_BROWSER is set (scripts/test installs it)"
        );
        eprintln!("skipped the browser check: chromium is not installed (scripts/test installs it)");
        return None;
    }
    Some("chromium")
}

#[test]
fn report_has_every_plot_and_loads_cleanly_in_chromium() {
    let d = tmp("report");
    let plan = d.join("plan.toml");
    std::fs::write(&plan, PLAN).unwrap();
    let out = d.join("r");
    let (ok, err) = coapcc(&["sweep", plan.to_str().unwrap(), "--out", out.to_str().unwrap(), "--report"]);
    assert!(ok, "{err}");
    let html = std::fs::read_to_string(out.join("report/index.html")).unwrap();
    // 2 figure groups (5 and 30 clients); each: 2 boxplots + 2 CDFs (one per buffer) + 6 histogram bars
    let expected = 2 * (2 + 2 + 6);
    assert_eq!(html.matches("<svg class=\"plot\"").count(), expected);
    assert!(!html.contains("<script"), "self-contained and script-free");
    assert!(html.contains("Medians per cell") && html.contains("seed = 7"));
    let Some(chromium) = browser() else { return };
    let profile = d.join("profile");
    let url = format!("file://{}", out.join("report/index.html").display());
    let flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--enable-logging=stderr",
        "--v=0",
    ];
    let dom = Command::new(chromium)
        .args(flags)
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(["--dump-dom", &url])
        .output()
        .unwrap();
    assert!(dom.status.success());
    let dom_text = String::from_utf8_lossy(&dom.stdout);
    assert_eq!(dom_text.matches("<svg class=\"plot\"").count(), expected, "every plot is in the rendered page");
    let log = String::from_utf8_lossy(&dom.stderr);
    let console_errors: Vec<&str> =
        log.lines().filter(|l| l.contains(":CONSOLE") && (l.contains("Error") || l.contains("Uncaught"))).collect();
    assert!(console_errors.is_empty(), "{console_errors:?}");
    // a screenshot, kept as an artifact
    let shot: std::path::PathBuf = [env!("CARGO_TARGET_TMPDIR"), "report-screenshot.png"].iter().collect();
    let st = Command::new(chromium)
        .args(flags)
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(["--hide-scrollbars", "--window-size=1200,1400"])
        .arg(format!("--screenshot={}", shot.display()))
        .arg(&url)
        .output()
        .unwrap();
    assert!(st.status.success());
    assert!(std::fs::metadata(&shot).unwrap().len() > 20_000, "a real picture");
    eprintln!("report screenshot: {}", shot.display());
    std::fs::remove_dir_all(&d).unwrap();
}

fn coapcc_code(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_coapcc")).args(args).output().expect("runs");
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn truncated_cells_exit_3_with_a_message_and_a_banner_even_when_skipped() {
    let d = tmp("sweep-cut");
    let plan = d.join("plan.toml");
    // 4 continuous clients take about 33 s for their 50 exchanges: 5 s cuts every replication
    std::fs::write(
        &plan,
        "seed = 1\n[base]\nmax_time_s = 5.0\n[matrix]\nclients = [4]\ncc = [\"default\", \"cocoa\"]\n",
    )
    .unwrap();
    let out = d.join("out");
    let args = ["sweep", plan.to_str().unwrap(), "--out", out.to_str().unwrap(), "--report"];
    let (code, err) = coapcc_code(&args);
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("2 cell(s) finished incomplete") && err.contains("cut at max_time_s = 5.0 s"), "{err}");
    assert!(err.contains("cc=default") && err.contains("cc=cocoa"), "the cells are named: {err}");
    let html = std::fs::read_to_string(out.join("report/index.html")).unwrap();
    assert!(html.contains("class=\"warn\"") && html.contains("cut at max_time_s"), "the report says so");
    // and the warning names the figure: no client has an FCT
    assert!(err.contains("WARNING") && err.contains("clients_without_fct = 4 of 4"), "{err}");
    // a re-run finds the cells finished and still says they are incomplete
    let (code, err) = coapcc_code(&args);
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("0 cells run, 2 already finished"), "{err}");
    // a complete sweep: no banner, exit 0
    std::fs::write(&plan, "seed = 1\n[matrix]\nclients = [2]\n").unwrap();
    let out2 = d.join("out2");
    let (code, err) = coapcc_code(&["sweep", plan.to_str().unwrap(), "--out", out2.to_str().unwrap(), "--report"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains("WARNING"), "{err}");
    assert!(!std::fs::read_to_string(out2.join("report/index.html")).unwrap().contains("class=\"warn\""));
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_network_that_delivers_almost_nothing_is_named_in_the_table_the_json_and_the_report() {
    let d = tmp("sweep-lossy");
    let scenario = d.join("lossy.toml");
    // 99.99 % of the uplink's packets lost: about 2 in 1,000 exchanges answered within 21 tries
    std::fs::write(
        &scenario,
        "clients = 2\nexchanges = 20\nerrors = \"custom\"\n[uplink.loss]\nmodel = \"bernoulli\"\np = 0.9999\n",
    )
    .unwrap();
    let sim = Command::new(env!("CARGO_BIN_EXE_coapcc"))
        .args(["sim", "--scenario", scenario.to_str().unwrap()])
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&sim.stdout);
    assert!(table.contains("WARNING: default:max_retransmit=20: failed_exchanges = "), "{table}");
    assert!(table.contains("% answered, the network delivered almost nothing"), "{table}");
    let sim = Command::new(env!("CARGO_BIN_EXE_coapcc"))
        .args(["sim", "--json", "--scenario", scenario.to_str().unwrap()])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&sim.stdout).unwrap();
    let w = v["warnings"].as_array().expect("warnings in the JSON");
    assert!(w.iter().any(|w| w.as_str().unwrap().starts_with("failed_exchanges = ")), "{w:?}");
    let plan = d.join("plan.toml");
    std::fs::write(
        &plan,
        "[base]\nclients = 2\nexchanges = 20\nerrors = \"custom\"\n[base.uplink.loss]\nmodel = \"bernoulli\"\np = 0.9999\n",
    )
    .unwrap();
    let out = d.join("out");
    let (code, err) = coapcc_code(&["sweep", plan.to_str().unwrap(), "--out", out.to_str().unwrap(), "--report"]);
    assert_eq!(code, Some(0), "a warning, not a failure: {err}");
    assert!(err.contains("coapcc sweep: WARNING: cell ") && err.contains("delivered almost nothing"), "{err}");
    let html = std::fs::read_to_string(out.join("report/index.html")).unwrap();
    assert!(html.contains("these figures describe almost nothing") && html.contains("delivered almost nothing"));
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_rerun_repairs_broken_cells_and_report_and_merge_refuse_them() {
    let d = tmp("sweep-broken");
    let plan = d.join("plan.toml");
    std::fs::write(&plan, "seed = 4\n[matrix]\nclients = [2, 3, 4, 5]\n").unwrap();
    let out = d.join("out");
    let sweep = |out: &std::path::Path| coapcc_code(&["sweep", plan.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(sweep(&out).0, Some(0));
    let before = cells(&out);
    let ids: Vec<String> = before.iter().map(|(n, _)| n.trim_end_matches(".json").to_string()).collect();
    let cell = |id: &str, ext: &str| out.join("cells").join(format!("{id}.{ext}"));
    // four ways to break a cell: an empty object, a truncated JSON, garbage rows, no table
    std::fs::write(cell(&ids[0], "json"), "{}").unwrap();
    let text = std::fs::read_to_string(cell(&ids[1], "json")).unwrap();
    std::fs::write(cell(&ids[1], "json"), &text[..text.len() / 2]).unwrap();
    std::fs::write(cell(&ids[2], "clients.csv"), "cc,cc_params\nzz\x00\x01,\"\n").unwrap();
    std::fs::remove_file(cell(&ids[3], "clients.csv")).unwrap();
    // the report refuses, naming the file
    let (code, err) = coapcc_code(&["report", out.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("broken results") && err.contains(&ids[0]), "{err}");
    // merge refuses and writes nothing
    let merged = d.join("merged");
    let (code, err) = coapcc_code(&["merge", "--out", merged.to_str().unwrap(), out.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("broken results, nothing merged"), "{err}");
    assert!(!merged.exists(), "a failed merge writes nothing");
    // a re-run runs the four again, and gives what the first run gave
    let (code, err) = sweep(&out);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(err.matches("broken results, running the cell again").count(), 4, "{err}");
    assert!(err.contains("4 cells run, 0 already finished"), "{err}");
    assert_eq!(cells(&out), before);
    assert!(coapcc_code(&["report", out.to_str().unwrap()]).0 == Some(0));
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn merge_refuses_a_shard_without_a_plan_and_cells_of_another_plan() {
    let d = tmp("merge-foreign");
    let (p1, p2) = (d.join("p1.toml"), d.join("p2.toml"));
    std::fs::write(&p1, "seed = 1\n[matrix]\nclients = [2, 3]\n").unwrap();
    std::fs::write(&p2, "seed = 1\n[matrix]\nclients = [6]\n").unwrap();
    let (a, b, other) = (d.join("a"), d.join("b"), d.join("other"));
    for (p, o, shard) in [(&p1, &a, Some("1/2")), (&p1, &b, Some("2/2")), (&p2, &other, None)] {
        let mut args = vec!["sweep", p.to_str().unwrap(), "--out", o.to_str().unwrap()];
        args.extend(shard.map(|s| ["--shard", s]).into_iter().flatten());
        assert_eq!(coapcc_code(&args).0, Some(0));
    }
    // shard b without its plan.json and plan.toml
    for f in ["plan.json", "plan.toml"] {
        std::fs::remove_file(b.join(f)).unwrap();
    }
    let m = d.join("m");
    let (code, err) = coapcc_code(&["merge", "--out", m.to_str().unwrap(), a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("records no plan") && err.contains("--force"), "{err}");
    assert!(!m.exists());
    // with --force it merges: every cell of the plan present
    let (code, err) =
        coapcc_code(&["merge", "--force", "--out", m.to_str().unwrap(), a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("all 2 cells of plan"), "{err}");
    // a cell of another plan slipped into a shard: refused
    for e in std::fs::read_dir(other.join("cells")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), a.join("cells").join(e.file_name())).unwrap();
    }
    let m2 = d.join("m2");
    let (code, err) = coapcc_code(&["merge", "--out", m2.to_str().unwrap(), a.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("is not a cell of plan"), "{err}");
    assert!(!m2.exists());
    std::fs::remove_dir_all(&d).unwrap();
}
