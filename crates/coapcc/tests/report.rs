//! The report's figures say what the results say: every box's statistics, read back from its
//! tooltip, equal the quantiles computed here from the cell files (`cells/ID.json`,
//! `cells/ID.clients.csv`), and every shape lies on its figure's canvas.

#[allow(dead_code)] // only its tmp() here
mod common;

use std::collections::BTreeMap;
use std::process::Command;

use common::tmp;

fn coapcc(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_coapcc")).args(args).output().expect("coapcc runs");
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Type-7 quantile of sorted values (R's default): h = (n − 1)·p, interpolated between neighbours.
fn q7(sorted: &[f64], p: f64) -> f64 {
    let h = (sorted.len() - 1) as f64 * p;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

fn sorted(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v
}

/// Every `<svg>` of the page: (aria-label, width, height, body).
fn figures(html: &str) -> Vec<(String, f64, f64, String)> {
    let attr = |tag: &str, name: &str| -> String {
        let k = format!("{name}=\"");
        let i = tag.find(&k).unwrap_or_else(|| panic!("{name} in {tag}")) + k.len();
        tag[i..i + tag[i..].find('"').unwrap()].to_string()
    };
    html.split("<svg ")
        .skip(1)
        .map(|s| {
            let tag = &s[..s.find('>').unwrap()];
            let body = &s[..s.find("</svg>").unwrap()];
            (
                attr(tag, "aria-label"),
                attr(tag, "width").parse().unwrap(),
                attr(tag, "height").parse().unwrap(),
                body.into(),
            )
        })
        .collect()
}

/// Every `<rect x y width height><title>T</title>` of a figure: ((x, y, w, h), T).
fn rects(body: &str) -> Vec<((f64, f64, f64, f64), String)> {
    body.split("<rect ")
        .skip(1)
        .filter_map(|s| {
            let tag = &s[..s.find('>').unwrap()];
            let get = |name: &str| {
                let k = format!(" {name}=\"");
                let t = format!(" {tag}");
                let i = t.find(&k)? + k.len();
                t[i..i + t[i..].find('"')?].parse::<f64>().ok()
            };
            let title = s.find("<title>").map(|i| s[i + 7..i + s[i..].find("</title>").unwrap()].to_string())?;
            Some(((get("x")?, get("y")?, get("width")?, get("height")?), title))
        })
        .collect()
}

/// The numbers of a tooltip, in order ("default: 1.234 (box 1.0–2.0, …)" → [1.234, 1.0, 2.0, …]).
fn numbers(tip: &str) -> Vec<f64> {
    tip.split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter(|s| s.contains('.'))
        .filter_map(|s| s.trim_matches('.').parse().ok())
        .collect()
}

/// A cell's JSON, its clients' FCTs and their duplicate responses, sorted.
type CellFigures = (serde_json::Value, Vec<f64>, Vec<f64>);

/// Every cell's figures, by (mesh?, algorithm).
fn cells(dir: &std::path::Path) -> BTreeMap<(bool, String), CellFigures> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir.join("cells")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        let id = v["cell"]["id"].as_str().unwrap().to_string();
        let mut r = csv::Reader::from_path(dir.join("cells").join(format!("{id}.clients.csv"))).unwrap();
        let h = r.headers().unwrap().clone();
        let (fi, di) =
            (h.iter().position(|h| h == "fct_s").unwrap(), h.iter().position(|h| h == "duplicates").unwrap());
        let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
        let fcts = rows.iter().filter_map(|row| row[fi].parse::<f64>().ok()).collect();
        let dups = rows.iter().map(|row| row[di].parse::<f64>().unwrap()).collect();
        let algo = v["cell"]["params"]["cc"].as_str().unwrap().to_string();
        let mesh = v["scenario"]["env"] == "lln";
        out.insert((mesh, algo), (v, sorted(fcts), sorted(dups)));
    }
    out
}

fn close(a: f64, b: f64, digits: i32) -> bool {
    (a - b).abs() <= 0.5 * 10f64.powi(-digits) + 1e-9
}

#[test]
fn every_box_shows_the_quantiles_of_its_results_and_stays_on_its_canvas() {
    let d = tmp("report-figures");
    let plan = d.join("plan.toml");
    // ContikiMAC gives the duty-cycle figure; two algorithms give two boxes a figure
    std::fs::write(
        &plan,
        "seed = 3\nreps = 2\n\
         [[matrices]]\npreset = [\"cloud-baseline-contikimac\"]\ncc = [\"default\", \"cocoa\"]\nduration_s = [60.0]\n\"workload.fct_successes\" = [5]\n\
         [[matrices]]\ncc = [\"default\", \"cocoa\"]\nclients = [6]\nbuffer = [2500]\n",
    )
    .unwrap();
    let out = d.join("out");
    let (code, err) = coapcc(&["sweep", plan.to_str().unwrap(), "--out", out.to_str().unwrap(), "--report"]);
    // 60 s of a baseline whose clients take turns: cut short, so exit 3 (the report is written)
    assert_eq!(code, Some(3), "{err}");
    let html = std::fs::read_to_string(out.join("report/index.html")).unwrap();
    let data = cells(&out);
    assert_eq!(data.len(), 4);
    let figs = figures(&html);
    let mut checked = BTreeMap::<&str, usize>::new();
    for (label, w, h, body) in &figs {
        for ((x, y, rw, rh), tip) in rects(body) {
            assert!(rw >= 0.0 && rh >= 0.0, "{label}: a negative size ({tip})");
            assert!(x >= 0.0 && x + rw <= w + 0.1 && y >= 0.0 && y + rh <= h + 0.1, "{label}: off the canvas: {tip}");
            let mesh = label.contains("cloud-baseline");
            // a mesh box: "ALGO: median (box p25–p75, whiskers p10–p90)", 3 decimals; a wired
            // one: "ALGO, BUFFER: p10 …, p25 …, median …, p75 …, p90 …", 2 decimals
            let (algo, rest) = if mesh { tip.split_once(": ") } else { tip.split_once(", ") }.unwrap_or(("", ""));
            let Some((json, fcts, dups)) = data.get(&(mesh, algo.to_string())) else { continue };
            let values: Option<(&str, Vec<f64>)> = if label.starts_with("Radio duty cycle") {
                let per_node = json["network"]["duty_cycle"]["per_node"].as_array().unwrap();
                Some(("mesh duty cycle", sorted(per_node.iter().map(|x| x.as_f64().unwrap() * 100.0).collect())))
            } else if label.starts_with("FCT,") {
                Some((if mesh { "mesh FCT" } else { "wired FCT" }, fcts.clone()))
            } else if label.starts_with("Unnecessary retransmissions") {
                Some(("wired duplicates", dups.clone()))
            } else {
                None
            };
            let Some((kind, v)) = values else { continue };
            assert!(!v.is_empty(), "{label}: no values");
            let (digits, want, got) = if mesh {
                let n = numbers(rest);
                // reordered as p10, p25, median, p75, p90
                (3, n.get(3..5).map(|w| vec![w[0], n[1], n[0], n[2], w[1]]), n)
            } else {
                let n = numbers(rest.split_once(": ").unwrap().1);
                (2, Some(n.clone()), n)
            };
            let got = want.unwrap_or_else(|| panic!("{label}: {tip}: {got:?}"));
            let want = [q7(&v, 0.10), q7(&v, 0.25), q7(&v, 0.5), q7(&v, 0.75), q7(&v, 0.90)];
            assert_eq!(got.len(), 5, "{label}: {tip}");
            for (g, w) in got.iter().zip(want) {
                assert!(close(*g, w, digits), "{label}: {tip}: {g} against {w}");
            }
            // the box the right way up: p10 ≤ p25 ≤ median ≤ p75 ≤ p90
            assert!(got.windows(2).all(|p| p[0] <= p[1]), "{label}: {tip}");
            // a wired FCT box also equals the summary's own quantiles
            if kind == "wired FCT" {
                for (g, k) in got.iter().zip(["p10", "p25", "p50", "p75", "p90"]) {
                    assert!(close(*g, json["fct_s"][k].as_f64().unwrap(), 2), "{label}: {k}");
                }
            }
            *checked.entry(kind).or_default() += 1;
        }
    }
    for kind in ["mesh duty cycle", "mesh FCT", "wired FCT", "wired duplicates"] {
        assert_eq!(checked.get(kind), Some(&2), "two boxes of each kind checked: {checked:?}");
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// A published figure's value, read from its data file by id (never typed again in a test).
fn published(file: &str, id: &str) -> f64 {
    let path = format!("{}/../../reproduce/published/{file}", env!("CARGO_MANIFEST_DIR"));
    let data = std::fs::read_to_string(path).unwrap();
    let row = data.lines().find(|l| l.starts_with(&format!("{id},"))).unwrap_or_else(|| panic!("{id}"));
    row.split(',').nth(10).unwrap().parse().unwrap()
}

/// The cells of each data row of the first table in `html` (its first row is the header).
fn table_rows(html: &str) -> Vec<Vec<String>> {
    let table = &html[..html.find("</table>").unwrap_or(html.len())];
    table
        .split("<tr>")
        .skip(2)
        .map(|row| {
            row.split("<td")
                .skip(1)
                .map(|td| td[td.find('>').unwrap() + 1..td.find("</td>").unwrap()].to_string())
                .collect()
        })
        .collect()
}

/// Runs `plan` (a sweep, then its report) in a directory of its own named `name`; returns the
/// directory, the cells' JSON and the cells of each row of the report's "Published beside
/// reproduced" table.
fn published_rows(name: &str, plan: &str) -> (std::path::PathBuf, Vec<serde_json::Value>, Vec<Vec<String>>) {
    let d = tmp(name);
    std::fs::write(d.join("p.toml"), plan).unwrap();
    let out = d.join("out");
    let (o, p) = (out.to_str().unwrap(), d.join("p.toml"));
    assert!(matches!(coapcc(&["sweep", p.to_str().unwrap(), "--out", o]).0, Some(0 | 3)));
    assert_eq!(coapcc(&["report", o]).0, Some(0));
    let html = std::fs::read_to_string(out.join("report/index.html")).unwrap();
    let section = &html[html.find("id=\"published\"").expect("the section")..];
    let section = &section[..section.find("</table>").unwrap()];
    let cells = std::fs::read_dir(out.join("cells"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap())
        .collect();
    let rows = table_rows(section);
    assert!(section.contains(" published figures reproduced within 10 %"), "{section}");
    (d, cells, rows)
}

/// The published figures the report sets beside a cell are the data file's, the reproduced value
/// the cell's own median, the ratio their quotient; a plan that changes the experiment is not set
/// beside them.
#[test]
fn published_figures_stand_beside_the_cells_that_ran_their_experiments() {
    // the thesis's one-client cells (continuous, 2500 B) of two algorithms, and one of another
    // experiment (its downlink delay changed): set beside nothing
    let (d, cells, rows) = published_rows(
        "published",
        "reps = 2\n[[matrices]]\nstack = [\"default\", \"fasor\"]\nclients = [1]\nbuffer = [2500]\n\
         [[matrices]]\nstack = [\"cocoa\"]\nclients = [1]\nbuffer = [2500]\n\"downlink.delay_ms\" = [100.0]\n",
    );
    assert_eq!(rows.len(), 2, "two cells ran thesis experiments");
    for (tds, stack) in rows.iter().zip(["default", "fasor"]) {
        assert_eq!(
            (tds[3].as_str(), tds[4].as_str(), tds[5].as_str()),
            ("continuous, 1 clients, 2500 B, errors none", stack, "median FCT")
        );
        let want = published("thesis-fct.csv", &format!("thesis.fct.continuous.1.2500.none.{stack}"));
        assert_eq!(tds[7].parse::<f64>().unwrap(), want);
        let cell = cells.iter().find(|c| c["cell"]["params"]["stack"] == stack).unwrap();
        let p50 = cell["fct_s"]["p50"].as_f64().unwrap();
        assert!(close(tds[8].parse().unwrap(), p50, 3), "{} vs {p50}", tds[8]);
        assert!(close(tds[10].parse().unwrap(), p50 / want, 3));
    }
    // the FCT figure draws each published median over its cell's box (an open circle), and
    // nothing over the cell of the other experiment
    let html = std::fs::read_to_string(d.join("out/report/index.html")).unwrap();
    let plot = |caption: &str| {
        let p = &html[html.find(caption).unwrap_or_else(|| panic!("{caption}"))..];
        p[..p.find("</svg>").unwrap()].to_string()
    };
    let want = published("thesis-fct.csv", "thesis.fct.continuous.1.2500.none.default");
    let boxes = plot("Flow completion time (○ published)");
    assert_eq!(boxes.matches("<title>published median FCT: ").count(), 2);
    assert!(boxes.contains(&format!("<title>published median FCT: {want} s (Raitahila MSc thesis 2019, §8.2)</title>")));
    // and on the CDF of that buffer, at the median's height
    let cdf = plot("CDF of FCT, buffer 2500 B (○ published)");
    assert_eq!(cdf.matches("<title>published median FCT: ").count(), 2);
    assert_eq!(html.matches("<title>published median FCT: ").count(), 4, "nothing over the other experiment's cell");
    std::fs::remove_dir_all(&d).unwrap();
}

/// CLOUD's tables beside a mesh cell that ran its preset: throughput and exchange duration as
/// CLOUD defines them for the baseline (the summary's per-server averages), retries per request.
#[test]
fn cloud_tables_stand_beside_the_mesh_cells_that_ran_their_presets() {
    let (d, cells, rows) = published_rows(
        "published-mesh",
        "reps = 1\n[matrix]\npreset = [\"cloud-baseline-nullrdc\"]\ncc = [\"default\"]\n",
    );
    let cell = &cells[0];
    // Table II's three figures of CoAP (default)
    assert_eq!(rows.len(), 3);
    for (row, (metric, value)) in rows.iter().zip([
        ("throughput", &cell["baseline"]["throughput_per_s"]),
        ("exchange duration", &cell["baseline"]["exchange_duration_s"]),
        ("retries per request", &cell["retries_per_request"]),
    ]) {
        let row: Vec<&str> = row.iter().map(String::as_str).collect();
        assert_eq!((row[2], row[3], row[4], row[5]), ("TABLE II", "preset cloud-baseline-nullrdc", "default", metric));
        let id = format!("cloud.cloud-baseline-nullrdc.default.{}", metric.replace(' ', "_"));
        assert_eq!(row[7].parse::<f64>().unwrap(), published("cloud.csv", &id));
        assert!(close(row[8].parse().unwrap(), value.as_f64().unwrap(), 3), "{metric}");
    }
    std::fs::remove_dir_all(&d).unwrap();
}

/// A comparison the thesis states in numbers beside the two cells that ran its experiment: the
/// reproduced difference is the cells' medians' (100 · (1 − subject ÷ reference)).
#[test]
fn stated_comparisons_stand_beside_the_difference_of_their_two_cells() {
    let (d, cells, _) = published_rows(
        "published-claims",
        "reps = 2\n[matrix]\nstack = [\"default\", \"fasor\"]\nclients = [10]\nerrors = [\"medium\"]\n",
    );
    let html = std::fs::read_to_string(d.join("out/report/index.html")).unwrap();
    let claims = &html[html.find("comparisons the publications state hold").expect("the claims")..];
    let rows = table_rows(claims);
    // §8.4 states FASOR's median below DefaultCoAP's with medium errors (its other two
    // comparisons of that cell need CoCoA's and FASOR+Token's cells)
    assert_eq!(rows.len(), 1, "{rows:?}");
    let row: Vec<&str> = rows[0].iter().map(String::as_str).collect();
    assert_eq!((row[3], row[4], row[5], row[6]), ("median FCT", "fasor", "below", "default"));
    let want = published("thesis-claims.csv", "thesis.claim.continuous.10.2500.medium.fasor.default");
    assert_eq!(row[7].parse::<f64>().unwrap(), want);
    let p50 = |stack: &str| {
        cells.iter().find(|c| c["cell"]["params"]["stack"] == stack).unwrap()["fct_s"]["p50"].as_f64().unwrap()
    };
    let pct = 100.0 * (1.0 - p50("fasor") / p50("default"));
    assert!(close(row[8].parse().unwrap(), pct, 2), "{} vs {pct}", row[8]);
    assert_eq!(row[9], if pct > 0.0 { "holds" } else { "does not hold" });
    std::fs::remove_dir_all(&d).unwrap();
}

/// Claims stated only in words (RTT-CoAP's: its fairness above, its goodput below the others')
/// beside the two mesh cells that ran the preset: the difference in the stated direction, in the
/// report and in its published.csv, with the verdict its sign gives.
#[test]
fn claims_in_words_stand_beside_the_difference_in_their_direction() {
    let d = tmp("published-words");
    std::fs::write(
        d.join("p.toml"),
        "reps = 1\n[matrix]\npreset = [\"rttcoap-homog-57\"]\ncc = [\"default\", \"rtt_coap:nstart=4\"]\n",
    )
    .unwrap();
    let out = d.join("out");
    let o = out.to_str().unwrap();
    assert!(matches!(coapcc(&["sweep", d.join("p.toml").to_str().unwrap(), "--out", o]).0, Some(0 | 3)));
    assert_eq!(coapcc(&["report", o]).0, Some(0));
    let cells: Vec<serde_json::Value> = std::fs::read_dir(out.join("cells"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap())
        .collect();
    let of = |cc: &str, key: &str| {
        let c = cells.iter().find(|c| c["scenario"]["cc"].as_str().unwrap().starts_with(cc)).unwrap();
        c[key].as_f64().unwrap()
    };
    // fairness stated higher: 100 · (subject ÷ reference − 1); goodput stated lower: 100 · (1 − s ÷ r)
    let fairness = 100.0 * (of("rtt_coap", "jain_fairness") / of("default", "jain_fairness") - 1.0);
    let goodput = 100.0 * (1.0 - of("rtt_coap", "goodput_bps") / of("default", "goodput_bps"));
    let html = std::fs::read_to_string(out.join("report/index.html")).unwrap();
    let rows = table_rows(&html[html.find("comparisons the publications state hold").expect("the claims")..]);
    assert_eq!(rows.len(), 2, "the two claims against default: {rows:?}");
    for (row, (metric, stated, pct)) in
        rows.iter().zip([("Jain fairness", "above", fairness), ("goodput", "below", goodput)])
    {
        let row: Vec<&str> = row.iter().map(String::as_str).collect();
        assert_eq!(
            (row[3], row[4], row[5], row[6], row[7]),
            (metric, "rtt_coap:nstart=4", stated, "default", "in words")
        );
        assert!(close(row[8].parse().unwrap(), pct, 2), "{metric}: {} vs {pct}", row[8]);
        assert_eq!(row[9], if pct > 0.0 { "holds" } else { "does not hold" });
    }
    // the same in published.csv, beside every other published row (no cell: no verdict)
    let mut r = csv::Reader::from_path(out.join("report/published.csv")).unwrap();
    let rows: Vec<std::collections::HashMap<String, String>> = r.deserialize().map(|x| x.unwrap()).collect();
    let claim = rows.iter().find(|r| r["id"] == "rttcoap.homog-57.fairness.default").unwrap();
    assert!(close(claim["reproduced"].parse().unwrap(), fairness, 6));
    assert_eq!((claim["kind"].as_str(), claim["published"].as_str()), ("claim", ""));
    assert!(!claim["cell"].is_empty() && !claim["reference_cell"].is_empty());
    let unrun = rows.iter().find(|r| r["id"] == "rttcoap.homog-112.fairness.default").unwrap();
    assert_eq!((unrun["verdict"].as_str(), unrun["reproduced"].as_str()), ("no cell here", ""));
    std::fs::remove_dir_all(&d).unwrap();
}

/// The NITK thesis's CoAP-Eifel tables beside the two cells of its FIT/IoT-LAB preset: Table
/// 4.1's bytes per second at T as the cell's window ending at T, Table 4.2's time to N as its
/// time to N completed exchanges (or "not measured in the cell" where no replication got
/// there), and the throughput ordering in words as the difference of the whole runs' bytes.
#[test]
fn nitk_testbed_tables_stand_beside_the_windows_and_times_of_their_cells() {
    let plan = "reps = 1\n[matrix]\npreset = [\"nitk-eifel-iotlab\"]\ncc = [\"default\", \"eifel\"]\n";
    let (d, cells, _) = published_rows("published-iotlab", plan);
    let out = d.join("out");
    let cell = |cc: &str| cells.iter().find(|c| c["scenario"]["cc"].as_str().unwrap().starts_with(cc)).unwrap();
    let mut r = csv::Reader::from_path(out.join("report/published.csv")).unwrap();
    let rows: Vec<std::collections::HashMap<String, String>> = r.deserialize().map(|x| x.unwrap()).collect();
    let row = |id: &str| rows.iter().find(|r| r["id"] == id).unwrap_or_else(|| panic!("{id}"));
    for cc in ["default", "eifel"] {
        // a 300-s run: six windows, the k-th ending at 50·(k + 1) s
        let windows = cell(cc)["throughput_bytes_per_s_windows"].as_array().unwrap();
        assert_eq!(windows.len(), 6);
        for (k, w) in windows.iter().enumerate() {
            let r = row(&format!("eifel.thr.{cc}.{}", 50 * (k + 1)));
            assert!(close(r["reproduced"].parse().unwrap(), w.as_f64().unwrap(), 6), "{cc} {k}: {r:?}");
            assert!(!r["cell"].is_empty());
        }
        for t in cell(cc)["packet_transmission_time"].as_array().unwrap() {
            let r = row(&format!("eifel.tt.{cc}.{}", t["packets"]));
            match t["mean_s"].as_f64() {
                Some(s) => assert!(close(r["reproduced"].parse().unwrap(), s, 6), "{r:?}"),
                None => assert_eq!((r["verdict"].as_str(), r["reproduced"].as_str()), ("not measured in the cell", "")),
            }
        }
    }
    let bytes = |cc: &str| cell(cc)["throughput_bytes_per_s"].as_f64().unwrap();
    let order = row("eifel.thr.order");
    let pct = 100.0 * (bytes("eifel") / bytes("default") - 1.0);
    assert!(close(order["reproduced"].parse().unwrap(), pct, 6), "{order:?} vs {pct}");
    assert_eq!(order["verdict"], if pct > 0.0 { "holds" } else { "does not hold" });
    std::fs::remove_dir_all(&d).unwrap();
}
