//! The publications' figures beside a results directory's cells: the rows of
//! `reproduce/published/thesis-fct.csv` (compiled in: the file is the one place each number is
//! written) matched with the cells that ran their experiment, for the report's "Published beside
//! reproduced" section.
//!
//! A row's cell is the one whose resolved scenario is the reference testbed's (`thesis`) with the
//! row's workload, clients, buffer, error profile and stack, all else equal but seed and
//! replications: a plan that changed anything else (a `[base]` key, an algorithm's parameter)
//! reproduces another experiment, and its cells are not set beside the publication's.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

use netsim::loss::ErrorProfile;
use netsim::{Scenario, WorkloadKind};

use crate::report::CellData;

/// The thesis's stated median FCTs (sections 6 and 8), one row each.
pub const THESIS_FCT: &str = include_str!("../../../reproduce/published/thesis-fct.csv");

/// The share a reproduced value may differ from the published one and still count as
/// reproduced.
pub const WITHIN: f64 = 0.10;

/// One published figure: where it is stated, its experiment, the algorithm and the value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Figure {
    /// Its stable name.
    pub id: String,
    /// Section, figure and pages, as the publication numbers them.
    pub section: String,
    /// The figure it describes, if the text names one.
    pub figure: String,
    /// Pages.
    pub page: String,
    /// The experiment: `workload`, `clients`, `buffer` (empty where unstated), `errors`.
    pub setup: BTreeMap<String, String>,
    /// The algorithm (coapcc's stack name).
    pub subject: String,
    /// The value, s.
    pub value: f64,
    /// How exactly the publication gives it.
    pub precision: String,
}

/// Reads published rows (the columns of `reproduce/published/README.md`): the `equals` rows of
/// a median FCT.
pub(crate) fn figures(text: &str) -> Result<Vec<Figure>, String> {
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let mut out = Vec::new();
    for row in r.deserialize::<BTreeMap<String, String>>() {
        let row = row.map_err(|e| format!("published figures: {e}"))?;
        let get = |k: &str| row.get(k).cloned().unwrap_or_default();
        if get("metric") != "median FCT" || get("relation") != "equals" {
            continue;
        }
        let setup = get("setup")
            .split_whitespace()
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let value =
            get("value").parse().map_err(|_| format!("published figure {}: value {:?}", get("id"), get("value")))?;
        out.push(Figure {
            id: get("id"),
            section: get("section"),
            figure: get("figure_or_table"),
            page: get("page"),
            setup,
            subject: get("subject"),
            value,
            precision: get("precision"),
        });
    }
    Ok(out)
}

/// The resolved scenario of a figure's experiment on the reference testbed, without its seed and
/// replications (what a cell that ran it has); `None` where the setup leaves a key unstated.
fn experiment(f: &Figure) -> Option<serde_json::Value> {
    let mut s = Scenario::thesis();
    s.workload = match f.setup.get("workload")?.as_str() {
        "continuous" => WorkloadKind::Continuous,
        "random" => WorkloadKind::Random,
        _ => return None,
    };
    s.clients = f.setup.get("clients")?.parse().ok()?;
    let buffer: u64 = f.setup.get("buffer")?.parse().ok()?;
    s.uplink.buffer_bytes = buffer;
    s.downlink.buffer_bytes = buffer;
    s.errors = ErrorProfile::parse(f.setup.get("errors")?)?;
    let s = s.with_stack(&f.subject).ok()?.resolve().ok()?;
    let mut v = serde_json::to_value(&s).ok()?;
    strip(&mut v);
    Some(v)
}

/// A scenario's JSON less what a plan sets per cell without changing the experiment.
fn strip(v: &mut serde_json::Value) {
    if let Some(o) = v.as_object_mut() {
        o.remove("seed");
        o.remove("reps");
    }
}

/// A figure set beside the cell that ran its experiment, if one did.
#[derive(Debug, Clone)]
pub(crate) struct Comparison<'a> {
    /// The published figure.
    pub figure: Figure,
    /// The cell, its median FCT over all its clients and replications, and the range of its
    /// replications' own medians.
    pub reproduced: Option<(&'a CellData, f64, (f64, f64))>,
}

impl Comparison<'_> {
    /// Reproduced ÷ published.
    pub(crate) fn ratio(&self) -> Option<f64> {
        self.reproduced.map(|(_, m, _)| m / self.figure.value)
    }

    /// Within [`WITHIN`] of the published value.
    pub(crate) fn holds(&self) -> Option<bool> {
        self.ratio().map(|r| (r - 1.0).abs() <= WITHIN)
    }
}

/// Every figure of `text`, each with the cell of `cells` that ran its experiment (read from
/// `dir`'s per-client tables for the replications' medians).
pub(crate) fn compare<'a>(text: &str, cells: &'a [CellData], dir: &Path) -> Result<Vec<Comparison<'a>>, String> {
    let scenarios: Vec<(usize, serde_json::Value)> = cells
        .iter()
        .enumerate()
        .filter(|(_, c)| !c.mesh)
        .map(|(i, c)| {
            let mut s = c.summary["scenario"].clone();
            strip(&mut s);
            (i, s)
        })
        .collect();
    let mut out = Vec::new();
    for figure in figures(text)? {
        let cell =
            experiment(&figure).and_then(|want| scenarios.iter().find(|(_, s)| *s == want).map(|(i, _)| &cells[*i]));
        let reproduced = cell.map(|c| {
            let median = c.summary["fct_s"]["p50"].as_f64().unwrap_or(f64::NAN);
            (c, median, rep_medians(dir, &c.id))
        });
        out.push(Comparison { figure, reproduced });
    }
    Ok(out)
}

/// The smallest and largest of a cell's replications' median FCTs (type-7, as the summaries'),
/// from its per-client table; NaN where none is known.
fn rep_medians(dir: &Path, id: &str) -> (f64, f64) {
    let path = dir.join("cells").join(format!("{id}.clients.csv"));
    let Ok(mut r) = csv::Reader::from_path(&path) else { return (f64::NAN, f64::NAN) };
    let Ok(h) = r.headers().cloned() else { return (f64::NAN, f64::NAN) };
    let (Some(ri), Some(fi)) = (h.iter().position(|x| x == "rep"), h.iter().position(|x| x == "fct_s")) else {
        return (f64::NAN, f64::NAN);
    };
    let mut by_rep: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for row in r.records().flatten() {
        if let (Some(rep), Some(f)) = (row.get(ri), row.get(fi).and_then(|x| x.parse::<f64>().ok())) {
            by_rep.entry(rep.to_string()).or_default().push(f);
        }
    }
    let medians: Vec<f64> = by_rep
        .into_values()
        .map(|mut v| {
            v.sort_by(f64::total_cmp);
            runstats::quantile(&v, 0.5)
        })
        .collect();
    let lo = medians.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = medians.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if medians.is_empty() {
        (f64::NAN, f64::NAN)
    } else {
        (lo, hi)
    }
}

/// The report's section: a summary, then a row per figure whose experiment a cell ran; empty
/// when no cell ran one.
pub(crate) fn section(comparisons: &[Comparison<'_>]) -> String {
    let matched: Vec<&Comparison<'_>> = comparisons.iter().filter(|c| c.reproduced.is_some()).collect();
    if matched.is_empty() {
        return String::new();
    }
    let within = matched.iter().filter(|c| c.holds() == Some(true)).count();
    let mut html = String::from("<h2 id=\"published\">Published beside reproduced</h2>");
    let _ = write!(
        html,
        "<p><strong>{within} of {} published median FCTs reproduced within {:.0} %</strong> ({} more of the \
         publication's have no cell here). Published: the Raitahila MSc thesis (2019), as it states them in \
         its text (<code>reproduce/published/thesis-fct.csv</code>); reproduced: the cell's median over all its \
         clients and replications, with the range of the replications' own medians. A figure that does not \
         reproduce is a finding: docs/reproduction.md.</p>",
        matched.len(),
        100.0 * WITHIN,
        comparisons.len() - matched.len()
    );
    html += "<div class=\"scroll\"><table><tr><th class=\"l\">§</th><th class=\"l\">figure</th>\
             <th class=\"l\">workload</th><th>clients</th><th>buffer (B)</th><th class=\"l\">errors</th>\
             <th class=\"l\">algorithm</th><th>published (s)</th><th>reproduced (s)</th>\
             <th>replications' medians (s)</th><th>ratio</th><th class=\"l\">verdict</th></tr>";
    for c in matched {
        let Some((cell, median, (lo, hi))) = c.reproduced else { continue };
        let f = &c.figure;
        let get = |k: &str| crate::svg::esc(f.setup.get(k).map_or("", String::as_str));
        let ratio = c.ratio().unwrap_or(f64::NAN);
        let verdict = if c.holds() == Some(true) {
            format!("within {:.0} %", 100.0 * WITHIN)
        } else if ratio > 1.0 {
            format!("{:.0} % longer", 100.0 * (ratio - 1.0))
        } else {
            format!("{:.0} % shorter", 100.0 * (1.0 - ratio))
        };
        let _ = write!(
            html,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td>\
             <td class=\"l\">{}</td><td class=\"l\">{}</td><td title=\"{}\">{}</td><td title=\"cell {}\">{:.3}</td>\
             <td>{:.1}–{:.1}</td><td>{:.3}</td><td class=\"l\">{}</td></tr>",
            crate::svg::esc(&f.section),
            crate::svg::esc(&f.figure),
            get("workload"),
            get("clients"),
            get("buffer"),
            get("errors"),
            crate::svg::esc(&f.subject),
            crate::svg::esc(&f.precision),
            f.value,
            crate::svg::esc(&cell.id),
            median,
            lo,
            hi,
            ratio,
            verdict
        );
    }
    html + "</table></div>"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_thesis_file_reads_whole_and_names_testbed_experiments() {
        let f = figures(THESIS_FCT).unwrap();
        // five algorithms on 23 error-free cells (three of them with three algorithms stated),
        // the random 50-client cell without its buffer, and 5 × 8 error-prone cells
        assert_eq!(f.len(), 126);
        let one = f.iter().find(|f| f.id == "thesis.fct.continuous.100.1410000.none.default").unwrap();
        assert_eq!((one.value, one.section.as_str(), one.figure.as_str()), (244.911, "8.2", "Fig. 21"));
        // every stated experiment resolves on the testbed, but the one whose buffer is unstated
        let unresolved: Vec<&str> = f.iter().filter(|f| experiment(f).is_none()).map(|f| f.id.as_str()).collect();
        assert_eq!(unresolved.len(), 5);
        assert!(unresolved.iter().all(|id| id.contains(".random.50.unstated.")), "{unresolved:?}");
    }
}
