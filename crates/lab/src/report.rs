//! The report: one self-contained `index.html` (inline CSS and SVG, no script, opens
//! offline) from a results directory of `coapcc sweep` / `reproduce`.
//!
//! Figures are grouped by workload × clients × error profile (and any other parameter the plan
//! varied except the algorithm and the buffer): FCT boxplots in the literature's style (box =
//! quartiles, line = median, whiskers = p10 and p90; one box per algorithm, grouped by buffer),
//! FCT CDFs per buffer, boxplots of unnecessary retransmissions per client, and each cell's
//! retransmission-count histogram as a table with inline bars. Then a table of medians per cell,
//! the mesh cells' section ([`crate::report_mesh`]) and the run's metadata. Every statistic is
//! computed here (netsim's type-7 quantiles).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use std::path::{Path, PathBuf};

use runstats::{quantile, Distribution};

use crate::svg::{esc, Plot, PALETTE};

type Error = Box<dyn std::error::Error + Send + Sync>;

/// A figure: workload, clients, (severity rank, error profile), other varied parameters.
type GroupKey = (String, u64, (usize, String), String);

/// One cell as the report needs it.
#[derive(Debug, Clone)]
pub(crate) struct CellData {
    pub(crate) id: String,
    pub(crate) algo: String,
    /// A mesh cell (`env = "lln"`): drawn by [`crate::report_mesh`].
    pub(crate) mesh: bool,
    workload: String,
    buffer: u64,
    clients: u64,
    errors: String,
    /// The plan's parameters other than the algorithm and the figure's axes.
    pub(crate) extra: BTreeMap<String, String>,
    pub(crate) reps: u64,
    pub(crate) summary: serde_json::Value,
    /// Every client's FCT over all replications, sorted.
    pub(crate) fcts: Vec<f64>,
    /// A mesh burst's completion times (the summary's `burst_completion_s`), sorted, then one
    /// infinity for each burst client that did not finish (`burst_clients` in all).
    pub(crate) burst: Vec<f64>,
    dups: Vec<f64>,
    /// Each replication's figures as the league ranks them (None: not loaded for a league, or a
    /// mesh cell without `duration_s`, which has no rate).
    pub(crate) per_rep: Option<Vec<crate::league::score::Rep>>,
}

impl CellData {
    /// The figure this cell belongs to (error profiles ordered by severity).
    fn group(&self) -> GroupKey {
        let extra: Vec<String> = self.extra.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let rank = ["none", "low", "medium", "high", "custom"].iter().position(|e| *e == self.errors).unwrap_or(9);
        (self.workload.clone(), self.clients, (rank, self.errors.clone()), extra.join(", "))
    }
}

/// The finished cells of `dir`; with `league`, each with its replications' figures as the league
/// ranks them (read in the same pass over the clients' rows).
pub(crate) fn load(dir: &Path, league: bool) -> Result<Vec<CellData>, Error> {
    let cells_dir = dir.join("cells");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&cells_dir)
        .map_err(|e| format!("{}: {e} (not a results directory of coapcc sweep?)", cells_dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    let mut cells = Vec::new();
    for p in paths {
        let Some(stem) = p.file_stem().and_then(|s| s.to_str()) else { continue };
        crate::sweep::check_cell(dir, stem)
            .map_err(|why| format!("broken results: {why}; run the sweep again to run the cell again"))?;
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&p)?).map_err(|e| format!("{}: {e}", p.display()))?;
        let s = &v["scenario"];
        let params = v["cell"]["params"].as_object().cloned().unwrap_or_default();
        let id = v["cell"]["id"].as_str().unwrap_or_default().to_string();
        // the algorithm as the plan wrote it (`stack` or `cc`), else the resolved one's name
        let stack = crate::sim::stack_of(s);
        let written = params.get("stack").or(params.get("cc")).and_then(|x| x.as_str());
        let algo = written.unwrap_or_else(|| stack.split(':').next().unwrap_or(&stack)).to_string();
        let extra = params
            .iter()
            .filter(|(k, _)| {
                !matches!(k.as_str(), "stack" | "cc" | "buffer" | "reps" | "workload" | "clients" | "errors")
            })
            .filter(|(k, _)| !k.ends_with("buffer_bytes"))
            .map(|(k, v)| (k.clone(), v.as_str().map_or_else(|| v.to_string(), str::to_string)))
            .collect();
        let (mut fcts, mut dups, mut rows) = (Vec::new(), Vec::new(), Vec::new());
        let csv_path = cells_dir.join(format!("{id}.clients.csv"));
        {
            let named = |e: csv::Error| format!("{}: {e}", csv_path.display());
            let mut r = csv::Reader::from_path(&csv_path).map_err(named)?;
            let h = r.headers().map_err(named)?.clone();
            let col = |name: &str| h.iter().position(|x| x == name);
            let (fi, di) = (col("fct_s"), col("duplicates"));
            // check_cell made sure these exist
            let counts = [col("rep"), col("exchanges"), col("failed"), col("retransmissions")];
            for row in r.records() {
                let row = row.map_err(named)?;
                let fct = fi.and_then(|i| row.get(i)).and_then(|x| x.parse::<f64>().ok());
                fcts.extend(fct);
                if let Some(d) = di.and_then(|i| row.get(i)).and_then(|x| x.parse::<f64>().ok()) {
                    dups.push(d);
                }
                if !league {
                    continue;
                }
                let [rep, exchanges, failed, retransmissions] = counts.map(|i| {
                    let x = i.and_then(|i| row.get(i)).unwrap_or_default();
                    x.parse::<u64>().map_err(|_| format!("{}: '{x}' is not a count", csv_path.display()))
                });
                rows.push(crate::league::score::ClientRow {
                    rep: rep? as u32,
                    fct_s: fct,
                    exchanges: exchanges?,
                    failed: failed?,
                    retransmissions: retransmissions?,
                });
            }
        }
        let mesh = s["env"].as_str() == Some("lln");
        let per_rep = if !league {
            None
        } else if mesh {
            v["duration_s"].as_f64().map(|d| crate::league::score::reps(&rows, Some(d)))
        } else {
            Some(crate::league::score::reps(&rows, None))
        };
        fcts.sort_by(f64::total_cmp);
        dups.sort_by(f64::total_cmp);
        let mut burst: Vec<f64> =
            v["burst_completion_s"].as_array().into_iter().flatten().filter_map(|x| x.as_f64()).collect();
        let all = v["burst_clients"].as_u64().unwrap_or(0) as usize;
        burst.resize(all.max(burst.len()), f64::INFINITY);
        cells.push(CellData {
            id,
            algo,
            mesh,
            workload: s["workload"].as_str().unwrap_or("?").to_string(),
            buffer: s["downlink"]["buffer_bytes"].as_u64().unwrap_or(0),
            clients: s["clients"].as_u64().unwrap_or(0),
            errors: s["errors"].as_str().unwrap_or("none").to_string(),
            extra,
            reps: s["reps"].as_u64().unwrap_or(0),
            summary: v,
            fcts,
            burst,
            dups,
            per_rep,
        });
    }
    Ok(cells)
}

fn buffer_label(b: u64) -> String {
    if b >= 1_000_000 {
        format!("{b} B (infinite)")
    } else {
        format!("{b} B")
    }
}

/// p10, p25, median, p75, p90 of sorted values.
pub(crate) fn five(v: &[f64]) -> [f64; 5] {
    [quantile(v, 0.10), quantile(v, 0.25), quantile(v, 0.5), quantile(v, 0.75), quantile(v, 0.90)]
}

/// Boxplots: x groups = buffers, one box per algorithm; `stats` gives (p10, p25, p50, p75, p90).
/// Published values drawn over a cell's box and CDF: per cell id, (value, the quantile it is if
/// it is one, what it is and where it is published).
pub(crate) type Marks = BTreeMap<String, Vec<(f64, Option<f64>, String)>>;

fn boxplot(
    caption: &str,
    title: &str,
    ylabel: &str,
    cells: &[&CellData],
    algos: &[String],
    stats: &dyn Fn(&CellData) -> [f64; 5],
    marks: &Marks,
) -> String {
    let buffers: BTreeSet<u64> = cells.iter().map(|c| c.buffer).collect();
    let slots = buffers.len() * algos.len();
    let mut p = Plot::new((160.0 + 26.0 * slots as f64).clamp(420.0, 980.0), 320.0);
    let all: Vec<[f64; 5]> = cells.iter().map(|c| stats(c)).filter(|s| s.iter().all(|x| x.is_finite())).collect();
    let marked: Vec<f64> =
        cells.iter().filter_map(|c| marks.get(&c.id)).flatten().map(|m| m.0).filter(|v| v.is_finite()).collect();
    let top = all.iter().map(|s| s[4]).chain(marked.iter().copied()).fold(0.0, f64::max);
    let bottom = all.iter().map(|s| s[0]).chain(marked.iter().copied()).fold(f64::INFINITY, f64::min);
    // from zero, unless the data sit far above it (then the boxes would be flat lines)
    let (lo, hi) = if top <= 0.0 {
        (0.0, 1.0)
    } else if bottom > 0.5 * top {
        let span = (top - bottom).max(top * 0.02);
        let lo = crate::svg::ticks(bottom - 0.15 * span, top, 5)[0].max(0.0);
        (lo, top + 0.1 * span)
    } else {
        (0.0, top * 1.08)
    };
    if marked.is_empty() {
        p.caption(caption);
    } else {
        p.caption(&format!("{caption} (○ published)"));
    }
    let legend: Vec<(String, &str)> =
        algos.iter().enumerate().map(|(i, a)| (a.clone(), PALETTE[i % PALETTE.len()])).collect();
    p.legend(&legend);
    p.y_axis(lo, hi, ylabel);
    let (x0, x1) = (p.x0(), p.x1());
    let group_w = (x1 - x0) / buffers.len().max(1) as f64;
    let box_w = (group_w * 0.8 / algos.len().max(1) as f64).min(28.0);
    for (gi, b) in buffers.iter().enumerate() {
        let gx = x0 + group_w * gi as f64;
        let y0 = p.y0();
        p.text(gx + group_w / 2.0, y0 + 15.0, "middle", 11.0, &buffer_label(*b));
        for (ai, a) in algos.iter().enumerate() {
            let Some(c) = cells.iter().find(|c| c.buffer == *b && &c.algo == a) else { continue };
            let s = stats(c);
            if !s.iter().all(|x| x.is_finite()) {
                continue;
            }
            let color = PALETTE[ai % PALETTE.len()];
            // the group's boxes centred in its slot
            let cx = gx + (group_w - box_w * algos.len() as f64) / 2.0 + box_w * (ai as f64 + 0.5);
            let y = |v: f64| p.ypix(v, lo, hi);
            let (y10, y25, y50, y75, y90) = (y(s[0]), y(s[1]), y(s[2]), y(s[3]), y(s[4]));
            let tip = format!(
                "{a}, {}: p10 {:.2}, p25 {:.2}, median {:.2}, p75 {:.2}, p90 {:.2}",
                buffer_label(*b),
                s[0],
                s[1],
                s[2],
                s[3],
                s[4]
            );
            p.line(cx, y90, cx, y75, "#333", 1.0);
            p.line(cx, y25, cx, y10, "#333", 1.0);
            p.line(cx - box_w * 0.25, y90, cx + box_w * 0.25, y90, "#333", 1.0);
            p.line(cx - box_w * 0.25, y10, cx + box_w * 0.25, y10, "#333", 1.0);
            p.rect((cx - box_w * 0.4, y75, box_w * 0.8, (y25 - y75).max(1.0)), color, "#333", &tip);
            // the median: dark on a white halo, visible on any fill
            p.line(cx - box_w * 0.4, y50, cx + box_w * 0.4, y50, "white", 4.5);
            p.line(cx - box_w * 0.4, y50, cx + box_w * 0.4, y50, "#111", 2.0);
            // the publication's values of the same statistics: open circles on the box's axis
            for (v, _, what) in marks.get(&c.id).into_iter().flatten() {
                if v.is_finite() {
                    let yv = p.ypix(*v, lo, hi);
                    p.circle((cx, yv, 3.5), "white", "#111", what);
                }
            }
        }
    }
    let (y0, x0b, x1b) = (p.y0(), p.x0(), p.x1());
    p.line(x0b, y0, x1b, y0, "#555", 1.0);
    p.finish(title)
}

/// At most this many points per CDF line.
const CDF_POINTS: usize = 400;

/// CDFs of FCT, one line per algorithm.
fn cdf(caption: &str, title: &str, cells: &[&CellData], algos: &[String], marks: &Marks) -> String {
    cdf_of(caption, title, ("flow completion time (s)", "share of clients"), cells, algos, &|c| &c.fcts, marks)
}

/// Empirical CDFs of each algorithm's `values` (sorted), one line per algorithm.
pub(crate) fn cdf_of(
    caption: &str,
    title: &str,
    (xlabel, ylabel): (&str, &str),
    cells: &[&CellData],
    algos: &[String],
    values: &dyn Fn(&CellData) -> &[f64],
    marks: &Marks,
) -> String {
    let mut p = Plot::new(460.0, 290.0);
    // published quantiles of the cells drawn, as open circles in their algorithm's colour
    let quantiles: Vec<(&CellData, f64, f64, &String)> = (cells.iter())
        .flat_map(|c| marks.get(&c.id).into_iter().flatten().map(move |m| (*c, m)))
        .filter_map(|(c, (v, q, what))| q.filter(|_| v.is_finite()).map(|q| (c, *v, q, what)))
        .collect();
    if quantiles.is_empty() {
        p.caption(caption);
    } else {
        p.caption(&format!("{caption} (○ published)"));
    }
    let legend: Vec<(String, &str)> =
        algos.iter().enumerate().map(|(i, a)| (a.clone(), PALETTE[i % PALETTE.len()])).collect();
    p.legend(&legend);
    // values may end with infinities: members of the population that never got there (the
    // line stops short of 1)
    let lo = (cells.iter().filter_map(|c| values(c).first().copied()))
        .chain(quantiles.iter().map(|m| m.1))
        .fold(f64::INFINITY, f64::min);
    let hi = (cells.iter().filter_map(|c| values(c).iter().rev().find(|x| x.is_finite()).copied()))
        .chain(quantiles.iter().map(|m| m.1))
        .fold(0.0, f64::max);
    let (lo, hi) = if lo.is_finite() && hi > lo { (lo, hi) } else { (0.0, 1.0) };
    let pad = (hi - lo) * 0.03;
    let (lo, hi) = ((lo - pad).max(0.0), hi + pad);
    p.y_axis(0.0, 1.0, ylabel);
    p.x_axis(lo, hi, xlabel);
    // a line that coincides with one drawn before (every client's FCT within a pixel of it) would
    // hide it: it is dashed, and a note under the plot says so
    let pixel = (hi - lo) / (p.x1() - p.x0());
    let coincide =
        |a: &[f64], b: &[f64]| a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y || (x - y).abs() <= pixel);
    let mut drawn: Vec<(&String, &CellData)> = Vec::new();
    let mut same: Vec<(String, Vec<String>)> = Vec::new();
    for (ai, a) in algos.iter().enumerate() {
        let Some(c) = cells.iter().find(|c| &c.algo == a) else { continue };
        let v = values(c);
        if v.first().is_none_or(|x| !x.is_finite()) {
            continue;
        }
        let twin = drawn.iter().find(|(_, d)| coincide(values(d), v)).map(|(name, _)| (*name).clone());
        if twin.is_none() {
            drawn.push((a, c));
        }
        // the empirical CDF's steps; beyond CDF_POINTS clients, that many evenly spaced
        // quantiles (a difference of less than a pixel at this size)
        let n = v.len();
        let m = n.min(CDF_POINTS);
        let mut pts = vec![(p.xpix(v[0], lo, hi), p.ypix(0.0, 0.0, 1.0))];
        for j in 0..m {
            let i = if m == n { j } else { j * (n - 1) / (m - 1).max(1) };
            if !v[i].is_finite() {
                break;
            }
            let x = p.xpix(v[i], lo, hi);
            pts.push((x, p.ypix(i as f64 / n as f64, 0.0, 1.0)));
            pts.push((x, p.ypix((i + 1) as f64 / n as f64, 0.0, 1.0)));
        }
        let dash = twin.is_some().then_some("7 5");
        p.polyline_dashed(&pts, PALETTE[ai % PALETTE.len()], dash);
        if let Some(t) = twin {
            match same.iter_mut().find(|(first, _)| *first == t) {
                Some((_, others)) => others.push(a.clone()),
                None => same.push((t, vec![a.clone()])),
            }
        }
    }
    for (c, v, q, what) in &quantiles {
        let color = algos.iter().position(|a| *a == c.algo).map_or("#111", |i| PALETTE[i % PALETTE.len()]);
        let (x, y) = (p.xpix(*v, lo, hi), p.ypix(*q, 0.0, 1.0));
        p.circle((x, y, 3.5), "white", color, what);
    }
    for (first, others) in same {
        let note =
            format!("{} coincide{} with {first} (dashed)", others.join(", "), if others.len() == 1 { "s" } else { "" });
        // wrapped at the plot's width (about 6 px a character)
        let width = ((p.w - p.x0()) / 6.0) as usize;
        let mut line = String::new();
        for word in note.split(' ') {
            if !line.is_empty() && line.len() + word.len() + 1 > width {
                p.h += 14.0;
                let y = p.h - 6.0;
                p.text(p.x0(), y, "start", 11.0, &std::mem::take(&mut line));
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line += word;
        }
        p.h += 14.0;
        let y = p.h - 6.0;
        p.text(p.x0(), y, "start", 11.0, &line);
    }
    p.finish(title)
}

/// A bar's height (share of the full height) for a share of exchanges, on a log scale from
/// 0.1 % to 100 % (a linear one leaves every bar but the first a pixel tall): 1 → 1, 0.1 → 2/3,
/// 0.01 → 1/3; 0.1 % and less a sliver (1/20), nothing for 0.
pub(crate) fn log_height(share: f64) -> f64 {
    if share <= 0.0 {
        0.0
    } else {
        ((share.log10() + 3.0) / 3.0).clamp(0.05, 1.0)
    }
}

/// A small bar chart of a histogram (shares), bar heights on [`log_height`]'s scale.
fn hist_bars(shares: &[f64], title: &str) -> String {
    let mut p = Plot { w: 180.0, h: 24.0, left: 1.0, right: 1.0, top: 1.0, bottom: 1.0, body: String::new() };
    let n = shares.len().max(1) as f64;
    let bw = (p.x1() - p.x0()) / n;
    for (i, s) in shares.iter().enumerate() {
        let h = (p.y0() - p.y1()) * log_height(*s);
        let label =
            format!("{i}{} retransmission(s): {:.1} %", if i + 1 == shares.len() { "+" } else { "" }, 100.0 * s);
        p.rect((p.x0() + bw * i as f64 + 1.0, p.y0() - h, (bw - 2.0).max(1.0), h.max(0.5)), "#0072B2", "none", &label);
    }
    p.finish(title)
}

const HIST_COLS: usize = 9; // 0..7 and 8+

fn hist_shares(c: &CellData) -> Vec<f64> {
    let h: Vec<f64> = c.summary["retransmissions_hist"]
        .as_array()
        .map(|a| a.iter().map(|x| x.as_f64().unwrap_or(0.0)).collect())
        .unwrap_or_default();
    let total: f64 = h.iter().sum::<f64>().max(1.0);
    let mut out = vec![0.0; HIST_COLS];
    for (i, n) in h.iter().enumerate() {
        out[i.min(HIST_COLS - 1)] += n / total;
    }
    out
}

pub(crate) fn num(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN)
}

fn f2(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.2}")
    } else {
        "–".into()
    }
}

/// Writes `out/index.html` for the results in `dir`; returns the number of cells.
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

pub fn write(dir: &Path, out: &Path) -> Result<usize, Error> {
    // a league run's directory: its table comes first
    let is_league = dir.join(crate::league::DIR).is_dir();
    let cells = load(dir, is_league)?;
    let league = if is_league { Some(crate::league::score_cells(&cells, dir)?) } else { None };
    write_loaded(dir, out, &cells, league.as_ref())
}

/// [`write`] of cells already loaded, with the league's section where there is one.
pub(crate) fn write_loaded(
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
        let name = format!(
            "{workload} workload, {clients} client{}, link errors {errors}{}",
            if *clients == 1 { "" } else { "s" },
            if extra.is_empty() { String::new() } else { format!(", {extra}") }
        );
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
        let (section, n) = crate::report_mesh::section(&mesh, &algo_order);
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
/// [`crate::published::WITHIN`], and of how many; the same for the stated claims (how many hold).
pub fn published_within(rows: &[crate::published::Row]) -> (Tally, Tally) {
    let count = |kind: &str| {
        let here: Vec<_> = rows.iter().filter(|r| r.kind == kind && r.holds.is_some()).collect();
        let n = here.iter().filter(|r| r.holds == Some(true)).count();
        (!here.is_empty()).then_some((n, here.len()))
    };
    (count("figure"), count("claim"))
}

/// What the cells' results say is wrong with them (truncated replications, figures that
/// describe almost nothing), above the figures; empty when nothing is.
fn banner(cells: &[CellData]) -> String {
    let mut notes = crate::sweep::Notes::default();
    for c in cells {
        notes.add(&c.summary);
    }
    warn_box("Incomplete: these cells were cut short; their unfinished clients have no FCT", &notes.truncated)
        + &warn_box("Warning: these figures describe almost nothing", &notes.warnings)
}

/// Warnings a box lists open; more are folded into a `<details>` element.
const FOLD_WARNINGS: usize = 10;

/// A warning box: `title` over a list of `items`; empty when there are none.
fn warn_box(title: &str, items: &[String]) -> String {
    if items.is_empty() {
        return String::new();
    }
    // a long list (a league's hundreds of cells) folds away, its count in sight
    let (open, close) = if items.len() > FOLD_WARNINGS {
        (format!("<details><summary>{} cells (show)</summary><ul>", items.len()), "</ul></details></div>")
    } else {
        ("<ul>".to_string(), "</ul></div>")
    };
    let mut html = format!("<div class=\"warn\" role=\"alert\"><strong>{title}</strong>{open}");
    for i in items {
        let _ = write!(html, "<li>{}</li>", esc(i));
    }
    html + close
}

/// Inside a figure's section, what its cells' results say is wrong with them (the banner's
/// notes, by algorithm and buffer, where the figures that draw them are): empty when nothing is.
pub(crate) fn section_warnings(members: &[&CellData], algo_order: &[String]) -> String {
    let mut sorted = members.to_vec();
    sorted.sort_by_key(|c| (algo_order.iter().position(|a| *a == c.algo), c.buffer));
    let buffers: BTreeSet<u64> = members.iter().map(|c| c.buffer).collect();
    let mut items = Vec::new();
    for c in sorted {
        let who =
            if buffers.len() > 1 { format!("{}, buffer {}", c.algo, buffer_label(c.buffer)) } else { c.algo.clone() };
        let cut = c.summary["truncated_reps"].as_u64().unwrap_or(0);
        if cut > 0 {
            items.push(format!(
                "{who}: {cut} of {} replication(s) cut short; their unfinished clients have no FCT",
                c.reps
            ));
        }
        for w in c.summary["warnings"].as_array().into_iter().flatten().filter_map(|w| w.as_str()) {
            items.push(format!("{who}: {w}"));
        }
    }
    warn_box("These figures describe almost nothing or are cut short:", &items)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_warning_list_folds_away_its_count_in_sight() {
        let items = |n: usize| (0..n).map(|i| format!("cell {i} <x>")).collect::<Vec<_>>();
        let short = warn_box("W", &items(FOLD_WARNINGS));
        assert!(!short.contains("<details>") && short.matches("<li>").count() == FOLD_WARNINGS);
        let long = warn_box("W", &items(FOLD_WARNINGS + 1));
        assert!(long.contains("<details><summary>11 cells (show)</summary>"), "{long}");
        assert_eq!(long.matches("<li>").count(), FOLD_WARNINGS + 1);
        assert!(long.contains("cell 0 &lt;x&gt;") && long.ends_with("</ul></details></div>"));
        assert_eq!(warn_box("W", &[]), "");
    }

    #[test]
    fn histogram_bars_on_a_log_scale() {
        // (log10(share) + 3) / 3: each factor of ten a third of the height
        assert_eq!(log_height(1.0), 1.0);
        assert!((log_height(0.1) - 2.0 / 3.0).abs() < 1e-12);
        assert!((log_height(0.01) - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(log_height(0.0001), 0.05, "a sliver, still seen");
        assert_eq!(log_height(0.0), 0.0);
    }

    #[test]
    fn the_palette_has_no_yellow_and_no_black() {
        assert!(!PALETTE.contains(&"#F0E442") && !PALETTE.contains(&"#000000"));
        let distinct: BTreeSet<&str> = PALETTE.iter().copied().collect();
        assert_eq!(distinct.len(), PALETTE.len());
    }

    #[test]
    fn a_section_of_a_dead_network_says_so_inside_it() {
        let cell = |algo: &str, buffer: u64, summary: serde_json::Value| CellData {
            id: format!("{algo}-{buffer}"),
            algo: algo.into(),
            mesh: false,
            workload: "continuous".into(),
            buffer,
            clients: 4,
            errors: "none".into(),
            extra: BTreeMap::new(),
            reps: 2,
            summary,
            fcts: Vec::new(),
            burst: Vec::new(),
            dups: Vec::new(),
            per_rep: None,
        };
        let dead =
            serde_json::json!({ "warnings": ["pdr = 0.003: the servers received 0.3 % of the clients' messages"] });
        let cut = serde_json::json!({ "truncated_reps": 1, "warnings": [] });
        let fine = serde_json::json!({ "warnings": [] });
        let (a, b, c) =
            (cell("cocoa_pp", 2500, dead.clone()), cell("cocoa", 2500, cut), cell("default", 2500, fine.clone()));
        let order = ["cocoa".to_string(), "cocoa_pp".to_string(), "default".to_string()];
        let html = section_warnings(&[&a, &b, &c], &order);
        // in the plan's algorithm order, each with what is wrong; nothing of the sound cell
        assert_eq!(
            html,
            "<div class=\"warn\" role=\"alert\"><strong>These figures describe almost nothing or are cut short:</strong><ul>\
             <li>cocoa: 1 of 2 replication(s) cut short; their unfinished clients have no FCT</li>\
             <li>cocoa_pp: pdr = 0.003: the servers received 0.3 % of the clients' messages</li></ul></div>"
        );
        assert_eq!(section_warnings(&[&c], &order), "");
        // two buffers in one section: each line says which
        let d = cell("default", 1_410_000, dead);
        assert!(section_warnings(&[&c, &d], &order).contains("<li>default, buffer 1410000 B (infinite): pdr = 0.003"));
    }

    /// CIELAB (D65) of an sRGB `#RRGGBB`: the standard formulas, for colour distances.
    fn lab(hex: &str) -> [f64; 3] {
        let c = |i: usize| {
            let v = u8::from_str_radix(&hex[i..i + 2], 16).unwrap() as f64 / 255.0;
            if v > 0.04045 {
                ((v + 0.055) / 1.055).powf(2.4)
            } else {
                v / 12.92
            }
        };
        let (r, g, b) = (c(1), c(3), c(5));
        let x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
        let y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
        let z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
        let f = |t: f64| if t > 0.008856 { t.cbrt() } else { 7.787 * t + 16.0 / 116.0 };
        [116.0 * f(y) - 16.0, 500.0 * (f(x) - f(y)), 200.0 * (f(y) - f(z))]
    }

    #[test]
    fn nine_algorithms_get_colours_far_apart() {
        // white is L* 100 and a* b* 0; the palette's blue and sky blue had been 26 apart
        assert!(lab("#FFFFFF").iter().zip([100.0, 0.0, 0.0]).all(|(a, b)| (a - b).abs() < 0.1));
        let d = |a: &str, b: &str| lab(a).iter().zip(lab(b)).map(|(x, y)| (x - y).powi(2)).sum::<f64>().sqrt();
        let first = &PALETTE[..9];
        let closest = (0..9).flat_map(|i| (i + 1..9).map(move |j| (i, j))).map(|(i, j)| d(first[i], first[j]));
        assert!(closest.fold(f64::INFINITY, f64::min) > 30.0);
        assert!(d("#0072B2", "#56B4E9") < 30.0, "the pair the thesis report had drawn alike");
    }
}
