//! The report: one self-contained `index.html` (inline CSS and SVG, no script, opens
//! offline) from a results directory of `coapcc sweep` / `reproduce`.
//!
//! Figures are grouped by workload × clients × error profile (and any other parameter the plan
//! varied except the algorithm and the buffer): FCT boxplots in the literature's style (box =
//! quartiles, line = median, whiskers = p10 and p90; one box per algorithm, grouped by buffer),
//! FCT CDFs per buffer, boxplots of unnecessary retransmissions per client, and each cell's
//! retransmission-count histogram as a table with inline bars. Then a table of medians per cell,
//! the mesh cells' section (`report::mesh`) and the run's metadata. Every statistic is
//! computed here (netsim's type-7 quantiles).

pub(crate) mod cells;
mod mesh;
pub(crate) mod plots;
mod warnings;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use std::path::{Path, PathBuf};

use runstats::Distribution;

use crate::svg::esc;
use cells::{buffer_label, five, load, num, CellData, GroupKey};
use plots::{boxplot, cdf, hist_bars, hist_shares, Marks, HIST_COLS};
use warnings::{banner, section_warnings};

type Error = Box<dyn std::error::Error + Send + Sync>;

fn f2(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.2}")
    } else {
        "–".into()
    }
}

/// How many cells the report shows, and of how many its plan has (when the directory records
/// its plan): "11 of the plan's 304 cells (293 not finished or not merged)".
/// Cells of other plans (a directory written with `--force`) are counted apart.
fn coverage(dir: &Path, shown: usize) -> String {
    match crate::sweep::PlanRecord::of_dir(dir) {
        Ok(Some(p)) => {
            let present = p.present(dir);
            let mut text = if present == p.cells.len() {
                format!("All {} cells of the plan", p.cells.len())
            } else {
                format!(
                    "<strong>{present} of the plan's {} cells</strong> ({} not finished or not merged)",
                    p.cells.len(),
                    p.cells.len() - present
                )
            };
            if shown > present {
                let _ = write!(
                    text,
                    ", <strong>and {} cells of other plans</strong> (written with --force)",
                    shown - present
                );
            }
            text
        }
        _ => format!("{shown} cells"),
    }
}

/// Writes `out/index.html` for the results in `dir`; returns the number of cells.
pub fn write(dir: &Path, out: &Path) -> Result<usize, Error> {
    // a league run's directory: its table comes first
    let is_league = dir.join(crate::league::DIR).is_dir();
    let cells = load(dir, is_league)?;
    let league = if is_league { Some(crate::league::score_cells(&cells, dir)?) } else { None };
    write_loaded(dir, out, &cells, league.as_ref())
}

/// Scores the league of `dir`, writes `dir/league/` ([`crate::league::write_files`]) and the
/// report into `out` (the league first), from one reading of the cells.
pub fn write_league(dir: &Path, out: &Path) -> Result<crate::league::League, Error> {
    let cells = load(dir, true)?;
    let league = crate::league::score_cells(&cells, dir)?;
    if league.cells.is_empty() {
        return Err(format!("{}: no finished cells to rank", dir.display()).into());
    }
    crate::league::write_files(dir, &league)?;
    write_loaded(dir, out, &cells, Some(&league))?;
    Ok(league)
}

/// [`write`] of cells already loaded, with the league's section where there is one.
fn write_loaded(
    dir: &Path,
    out: &Path,
    cells: &[CellData],
    league: Option<&crate::league::League>,
) -> Result<usize, Error> {
    if cells.is_empty() {
        return Err(format!("{}: no finished cells", dir.display()).into());
    }
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let mut algo_order: Vec<String> = Vec::new();
    for c in cells {
        if !algo_order.contains(&c.algo) {
            algo_order.push(c.algo.clone());
        }
    }
    // the registry's order (the specification's), then tcp; a label with parameters after its base
    let registry = coap_cc::algorithms();
    let rank = |label: &str| {
        let base = label.split(':').next().unwrap_or(label);
        let pos = registry.iter().position(|a| a.name == base).unwrap_or(if base == "tcp" { 1000 } else { 2000 });
        (pos, label.to_string())
    };
    algo_order.sort_by_key(|a| rank(a));
    let (mesh, wired): (Vec<&CellData>, Vec<&CellData>) = cells.iter().partition(|c| c.mesh);
    let mut groups: BTreeMap<GroupKey, Vec<&CellData>> = BTreeMap::new();
    for c in &wired {
        groups.entry(c.group()).or_default().push(c);
    }
    let mut html = String::new();
    let _ = write!(
        html,
        r##"<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>coapcc report</title>
<style>
body {{ font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 24px auto; max-width: 1100px; color: #222; padding: 0 16px; }}
h1 {{ font-size: 24px; margin-bottom: 4px; }} h2 {{ font-size: 19px; margin-top: 36px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }}
h3 {{ font-size: 15px; margin: 18px 0 6px; color: #333; }}
.figs {{ display: flex; flex-wrap: wrap; gap: 12px; align-items: flex-start; }}
svg.plot {{ border: 1px solid #eee; border-radius: 4px; }} td svg.plot {{ border: none; vertical-align: middle; }}
table {{ border-collapse: collapse; font-size: 12.5px; margin: 6px 0 14px; }}
th, td {{ padding: 3px 8px; border-bottom: 1px solid #eee; text-align: right; white-space: nowrap; }}
th {{ background: #f6f6f6; position: sticky; top: 0; }} td.l, th.l {{ text-align: left; }}
.meta {{ font-size: 13px; color: #444; }} pre {{ background: #f7f7f7; padding: 10px; font-size: 12px; overflow-x: auto; }}
nav a {{ margin-right: 10px; font-size: 13px; }}
.scroll {{ overflow-x: auto; max-width: 100%; }}
.warn {{ background: #fff4e5; border: 1px solid #e6a23c; border-radius: 4px; padding: 8px 12px; font-size: 13px; margin: 10px 0; }}
.warn ul {{ margin: 4px 0 0 18px; padding: 0; }}
</style></head><body>
<h1>coapcc report</h1>
<p class="meta">{}, {} algorithm(s). {}Every statistic is computed by coapcc (type-7 quantiles) over all clients of all replications of a cell.</p>
<nav>{}{}<a href="#meta">Run</a></nav>
"##,
        coverage(dir, cells.len()),
        algo_order.len(),
        if wired.is_empty() {
            ""
        } else {
            "FCT = flow completion time per client (first transmission of its first request to the first response of its last). Boxes: quartiles; line: median; whiskers: p10 and p90. "
        },
        if league.is_some() { r##"<a href="#league">League</a>"## } else { "" },
        match (wired.is_empty(), mesh.is_empty()) {
            (false, false) =>
                r##"<a href="#figures">Figures</a><a href="#medians">Medians</a><a href="#mesh">Mesh</a>"##,
            (false, true) => r##"<a href="#figures">Figures</a><a href="#medians">Medians</a>"##,
            _ => r##"<a href="#mesh">Mesh</a>"##,
        }
    );
    // a league's table comes first; the cells' warnings after it
    if let Some(league) = league {
        html += &crate::league::render::section(league);
    }
    html += &banner(cells);
    let (figures, claims) = crate::published::compare_all(cells, dir)?;
    html += &crate::published::section(&figures, &claims);
    write_published(out, &crate::published::rows_of(&figures, &claims))?;
    let fct_marks = crate::published::fct_marks(&figures);
    if !wired.is_empty() {
        html += "<h2 id=\"figures\">Figures</h2>";
    }
    let mut plots = 0;
    for ((workload, clients, (_, errors), extra), members) in &groups {
        let algos: Vec<String> = algo_order.iter().filter(|a| members.iter().any(|c| &c.algo == *a)).cloned().collect();
        let extra_text = if extra.is_empty() { String::new() } else { format!(", {extra}") };
        let name = match members[0].world {
            // a registered world's cells: its title and the parameters the plan varies
            Some(title) => format!("{title}{extra_text}"),
            None => format!(
                "{workload} workload, {clients} client{}, link errors {errors}{extra_text}",
                if *clients == 1 { "" } else { "s" }
            ),
        };
        let _ = write!(html, "<h3>{}</h3>", esc(&name));
        html += &section_warnings(members, &algo_order);
        html += "<div class=\"figs\">";
        html += &boxplot(
            "Flow completion time",
            &format!("FCT, {name}"),
            "flow completion time (s)",
            members,
            &algos,
            &|c| {
                let f = &c.summary["fct_s"];
                [num(&f["p10"]), num(&f["p25"]), num(&f["p50"]), num(&f["p75"]), num(&f["p90"])]
            },
            &fct_marks,
        );
        html += &boxplot(
            "Unnecessary retransmissions",
            &format!("Unnecessary retransmissions per client, {name}"),
            "duplicate responses per client",
            members,
            &algos,
            &|c| five(&c.dups),
            &Marks::new(),
        );
        plots += 2;
        let buffers: BTreeSet<u64> = members.iter().map(|c| c.buffer).collect();
        for b in &buffers {
            let in_b: Vec<&CellData> = members.iter().copied().filter(|c| c.buffer == *b).collect();
            let caption = format!("CDF of FCT, buffer {}", buffer_label(*b));
            html +=
                &cdf(&caption, &format!("CDF of FCT, {name}, buffer {}", buffer_label(*b)), &in_b, &algos, &fct_marks);
            plots += 1;
        }
        html += "</div>";
        // the retransmission histograms (paper 001, Table 2 style)
        html += "<table><tr><th class=\"l\">algorithm</th><th>buffer</th>";
        for i in 0..HIST_COLS {
            let _ = write!(html, "<th>{i}{}</th>", if i + 1 == HIST_COLS { "+" } else { "" });
        }
        html += "<th class=\"l\">exchanges by retransmissions (log scale: 0.1 % to 100 %)</th></tr>";
        for b in &buffers {
            for a in &algos {
                let Some(c) = members.iter().find(|c| c.buffer == *b && &c.algo == a) else { continue };
                let shares = hist_shares(c);
                let _ = write!(html, "<tr><td class=\"l\">{}</td><td>{}</td>", esc(a), esc(&buffer_label(*b)));
                for s in &shares {
                    let _ = write!(html, "<td>{:.1} %</td>", 100.0 * s);
                }
                let _ = write!(
                    html,
                    "<td class=\"l\">{}</td></tr>",
                    hist_bars(&shares, &format!("retransmissions, {a}, {name}, {}", buffer_label(*b)))
                );
                plots += 1;
            }
        }
        html += "</table>";
    }
    // medians per cell
    if !wired.is_empty() {
        html += &medians(&groups, &algo_order);
    }
    let mut sorted: Vec<&CellData> = cells.iter().collect();
    sorted.sort_by_key(|c| (c.mesh, c.id.clone()));
    if !mesh.is_empty() {
        let (section, n) = mesh::section(&mesh, &algo_order);
        html += &section;
        plots += n;
    }
    html += &meta(dir, &sorted)?;
    let _ = writeln!(html, "</div><!-- plots: {plots} --></body></html>");
    let tmp = out.join("index.html.tmp");
    std::fs::write(&tmp, html).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, out.join("index.html")).map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    Ok(cells.len())
}

/// `published.csv` of the report: every published figure and claim beside the cells (one
/// [`crate::published::Row`] each), written whole or not at all.
fn write_published(out: &Path, rows: &[crate::published::Row]) -> Result<(), Error> {
    let path = out.join("published.csv");
    let cannot = |e: &dyn std::fmt::Display| format!("cannot write {}: {e}", path.display());
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in rows {
        w.serialize(r).map_err(|e| cannot(&e))?;
    }
    let bytes = w.into_inner().map_err(|e| cannot(&e))?;
    crate::sweep::write_atomic(&path, &bytes).map_err(|e| cannot(&e))?;
    Ok(())
}

/// Every published figure and claim beside the cells of `dir` (the report's `published.csv`).
pub fn published_rows(dir: &Path) -> Result<Vec<crate::published::Row>, Error> {
    let cells = load(dir, false)?;
    let (figures, claims) = crate::published::compare_all(&cells, dir)?;
    Ok(crate::published::rows_of(&figures, &claims))
}

/// How many of how many (`None`: none to count).
pub type Tally = Option<(usize, usize)>;

/// Of `rows`' figures whose experiment a cell ran, how many are reproduced within
/// `published::WITHIN`, and of how many; the same for the stated claims (how many hold).
pub fn published_within(rows: &[crate::published::Row]) -> (Tally, Tally) {
    let count = |kind: &str| {
        let here: Vec<_> = rows.iter().filter(|r| r.kind == kind && r.holds.is_some()).collect();
        let n = here.iter().filter(|r| r.holds == Some(true)).count();
        (!here.is_empty()).then_some((n, here.len()))
    };
    (count("figure"), count("claim"))
}

/// The table of medians of the bottleneck cells, in the figures' order (figure, then buffer, then
/// algorithm), with a column for every other parameter the plan varies.
fn medians(groups: &BTreeMap<GroupKey, Vec<&CellData>>, algo_order: &[String]) -> String {
    let mut sorted: Vec<&CellData> = Vec::new();
    for members in groups.values() {
        let mut m = members.clone();
        m.sort_by_key(|c| (c.buffer, algo_order.iter().position(|x| *x == c.algo)));
        sorted.extend(m);
    }
    let extra: BTreeSet<&String> = sorted.iter().flat_map(|c| c.extra.keys()).collect();
    let mut html = String::new();
    html += "<h2 id=\"medians\">Medians per cell</h2><div class=\"scroll\"><table><tr><th class=\"l\">algorithm</th><th class=\"l\">workload</th><th>buffer (B)</th><th>clients</th><th class=\"l\">errors</th>";
    for k in &extra {
        let _ = write!(html, "<th>{}</th>", esc(k));
    }
    html += "<th>reps</th><th>FCT p10</th><th>FCT median</th><th>FCT p90</th><th>retx / exchange</th><th>dup / client (median)</th><th>wasted downlink</th><th>failed exchanges</th><th class=\"l\">cell</th></tr>";
    for c in &sorted {
        let s = &c.summary;
        let h: Vec<f64> = s["retransmissions_hist"]
            .as_array()
            .map(|a| a.iter().map(|x| x.as_f64().unwrap_or(0.0)).collect())
            .unwrap_or_default();
        let retx: f64 = h.iter().enumerate().map(|(i, n)| i as f64 * n).sum::<f64>() / num(&s["exchanges"]).max(1.0);
        let _ = write!(
            html,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td>",
            esc(&c.algo),
            esc(&c.workload),
            c.buffer,
            c.clients,
            esc(&c.errors),
        );
        for k in &extra {
            let _ = write!(html, "<td>{}</td>", esc(c.extra.get(*k).map_or("", String::as_str)));
        }
        let _ = write!(
            html,
            "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.3}</td><td>{}</td><td>{:.1} %</td><td>{}</td><td class=\"l\"><code>{}</code></td></tr>",
            c.reps,
            f2(num(&s["fct_s"]["p10"])),
            f2(num(&s["fct_s"]["p50"])),
            f2(num(&s["fct_s"]["p90"])),
            retx,
            f2(Distribution::of(c.dups.clone()).p50),
            100.0 * num(&s["network"]["wasted_downlink_fraction"]),
            s["failed_exchanges"].as_u64().unwrap_or(0),
            esc(&c.id)
        );
    }
    html += "</table></div>";
    html
}

/// The run's metadata: version, runs, seeds, the plan.
fn meta(dir: &Path, sorted: &[&CellData]) -> Result<String, Error> {
    let mut html = String::from("<h2 id=\"meta\">Run</h2><div class=\"meta\"><ul>");
    let _ = write!(
        html,
        "<li>coapcc {} (git {})</li>",
        env!("CARGO_PKG_VERSION"),
        option_env!("COAPCC_GIT_HASH").unwrap_or("unknown")
    );
    let mut runs: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("run-")))
        .collect();
    runs.sort();
    for r in runs {
        if let Ok(v) =
            std::fs::read_to_string(&r).map(|t| serde_json::from_str::<serde_json::Value>(&t).unwrap_or_default())
        {
            let _ = write!(
                html,
                "<li>{}: plan seed {}, {} cells run, {} skipped, shard {}, {:.1} s wall on {}</li>",
                esc(&r.file_name().unwrap_or_default().to_string_lossy()),
                v["plan_seed"],
                v["cells_run"],
                v["cells_skipped"],
                esc(v["shard"].as_str().unwrap_or("all")),
                num(&v["wall_s"]),
                esc(v["machine"].as_str().unwrap_or("?"))
            );
        }
    }
    let seeds: Vec<String> =
        sorted.iter().take(6).map(|c| format!("{} → {}", c.id, c.summary["scenario"]["seed"])).collect();
    let _ = write!(
        html,
        "<li>each cell's seed derives from its id and the plan seed; e.g. {} …</li></ul>",
        esc(&seeds.join(", "))
    );
    if let Ok(plan) = std::fs::read_to_string(dir.join("plan.toml")) {
        let _ = write!(html, "<h3>Plan</h3><pre>{}</pre>", esc(&plan));
    }
    Ok(html)
}
