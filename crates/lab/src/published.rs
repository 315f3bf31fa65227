//! The publications' figures beside a results directory's cells: the rows of
//! `reproduce/published/*.csv` (compiled in: the files are the one place each number is written)
//! matched with the cells that ran their experiment, for the report's "Published beside
//! reproduced" section.
//!
//! On the bottleneck, a row's cell is the one whose resolved scenario is the reference testbed's
//! (`thesis`) with the row's workload, clients, buffer, error profile and stack, all else equal
//! but seed and replications: a plan that changed anything else (a `[base]` key, an algorithm's
//! parameter) reproduces another experiment, and its cells are not set beside the publication's.
//! On a mesh (`preset=NAME`), the cell that ran the preset with the row's algorithm, its own
//! length, and no other key changed.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

use netsim::loss::ErrorProfile;
use netsim::{Scenario, WorkloadKind};

use crate::report::cells::CellData;

/// The published figures: (file, its text). The thesis's stated median FCTs (sections 6 and 8);
/// the comparisons it states in numbers ("FASOR's median FCT is 5.86 % shorter than CoCoA's");
/// paper 001's Table 1 and the medians its text states; CLOUD's Tables II–VII; RTT-CoAP's
/// claims in words (fairness and goodput orderings); the NITK thesis's CoCoA++ Tables 6.3–6.4 and
/// its FIT/IoT-LAB figures (GST-CoAP, CoAP-Eifel's Tables 4.1–4.3, GSRTC).
pub const PUBLISHED: [(&str, &str); 8] = [
    ("thesis-fct.csv", include_str!("../../../reproduce/published/thesis-fct.csv")),
    ("thesis-claims.csv", include_str!("../../../reproduce/published/thesis-claims.csv")),
    ("thesis-other.csv", include_str!("../../../reproduce/published/thesis-other.csv")),
    ("fb-paper.csv", include_str!("../../../reproduce/published/fb-paper.csv")),
    ("cloud.csv", include_str!("../../../reproduce/published/cloud.csv")),
    ("rttcoap.csv", include_str!("../../../reproduce/published/rttcoap.csv")),
    ("nitk-cocoapp.csv", include_str!("../../../reproduce/published/nitk-cocoapp.csv")),
    ("nitk-iotlab.csv", include_str!("../../../reproduce/published/nitk-iotlab.csv")),
];

/// Mesh metrics as a cell's summary has them: CLOUD's (its Tables II–VII), the NITK thesis's
/// CoCoA++ tables (the RTO's per-run maximum and mean, averaged over runs; transactions per second,
/// read as completed exchanges per second) and its FIT/IoT-LAB figures (the clients' mean FCT,
/// retransmissions per run, request bytes sent per second, PDR; with [`window_end`] and
/// [`completed_n`], its Tables 4.1 and 4.2).
const MESH_METRICS: [&str; 10] = [
    "throughput",
    "exchange duration",
    "retries per request",
    "max RTO",
    "mean RTO",
    "transactions per second",
    "mean FCT",
    "retransmissions",
    "bytes sent per second",
    "PDR",
];

/// The thesis's other statistics of a testbed cell: its clients' median unnecessary
/// retransmissions (the summary's duplicate responses per client; over TCP, spurious
/// retransmissions).
const TESTBED_METRICS: [&str; 1] = ["median unnecessary retransmissions per client"];

/// Metrics claims compare in words (RTT-CoAP's figures): Jain's index over the clients, goodput.
const ORDER_METRICS: [&str; 2] = ["Jain fairness", "goodput"];

/// The FCT statistics a figure may give, as the summaries' `fct_s` names them.
const FCT_METRICS: [(&str, &str); 7] = [
    ("median FCT", "p50"),
    ("FCT min", "min"),
    ("FCT p10", "p10"),
    ("FCT p25", "p25"),
    ("FCT p75", "p75"),
    ("FCT p90", "p90"),
    ("FCT max", "max"),
];

/// The share a reproduced value may differ from the published one and still count as
/// reproduced.
pub const WITHIN: f64 = 0.10;

/// One published figure: where it is stated, its experiment, the algorithm and the value (a row
/// of `reproduce/published/*.csv`; the columns the report does not show are not read).
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
pub(crate) struct Figure {
    /// Its stable name.
    pub id: String,
    /// Where it is published.
    pub source: String,
    /// Its section, as the publication numbers them.
    pub section: String,
    /// The figure or table it describes, if the text names one.
    #[serde(rename = "figure_or_table")]
    pub figure: String,
    /// The experiment: `workload`, `clients`, `buffer` (empty where unstated), `errors`; or a
    /// mesh `preset`.
    #[serde(deserialize_with = "setup")]
    pub setup: BTreeMap<String, String>,
    /// What it measures: one of [`FCT_METRICS`] or [`MESH_METRICS`].
    pub metric: String,
    /// The algorithm (coapcc's stack name).
    pub subject: String,
    /// `equals` (a value) or `lower_by` (a comparison with `reference`).
    relation: String,
    /// A comparison's other algorithm (`lower_by`), else empty.
    pub reference: String,
    /// The value, in `unit` (NaN: a claim in words, with none).
    #[serde(deserialize_with = "number_or_nan")]
    pub value: f64,
    /// Its unit.
    pub unit: String,
    /// How exactly the publication gives it.
    pub precision: String,
    /// The publication's words, where a claim is only words.
    #[serde(default)]
    pub note: String,
}

/// A `value` cell: a number, or empty (NaN).
fn number_or_nan<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    let text: String = serde::Deserialize::deserialize(d)?;
    if text.trim().is_empty() {
        return Ok(f64::NAN);
    }
    text.trim().parse().map_err(|_| serde::de::Error::custom(format!("value {text:?} is not a number")))
}

/// A `setup` cell: `key=value` words.
fn setup<'de, D: serde::Deserializer<'de>>(d: D) -> Result<BTreeMap<String, String>, D::Error> {
    let text: String = serde::Deserialize::deserialize(d)?;
    Ok(text.split_whitespace().filter_map(|kv| kv.split_once('=')).map(|(k, v)| (k.into(), v.into())).collect())
}

/// Reads published rows (the columns of `reproduce/published/README.md`): the `equals` rows of
/// a statistic coapcc measures.
pub(crate) fn figures(text: &str) -> Result<Vec<Figure>, String> {
    rows(text, "equals")
}

/// The comparisons `text` states: in numbers, `lower_by` rows (the subject's value is `value` %
/// below the reference's); in words, `higher` and `lower` rows (a direction only).
pub(crate) fn claims(text: &str) -> Result<Vec<Figure>, String> {
    let mut out = rows(text, "lower_by")?;
    out.extend(rows(text, "higher")?);
    out.extend(rows(text, "lower")?);
    Ok(out)
}

/// The rows of `text` whose relation is `relation` and whose metric coapcc measures.
fn rows(text: &str, relation: &str) -> Result<Vec<Figure>, String> {
    let measured = |m: &str| {
        FCT_METRICS.iter().any(|(name, _)| *name == m)
            || MESH_METRICS.contains(&m)
            || TESTBED_METRICS.contains(&m)
            || ORDER_METRICS.contains(&m)
            || retransmitted(m).is_some()
            || window_end(m).is_some()
            || completed_n(m).is_some()
    };
    let mut out = Vec::new();
    for row in csv::Reader::from_reader(text.as_bytes()).deserialize::<Figure>() {
        let f = row.map_err(|e| format!("published figures: {e}"))?;
        if f.relation == relation && measured(&f.metric) {
            out.push(f);
        }
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

/// The cells of a results directory, to find the one that ran a figure's experiment.
struct Matcher<'a> {
    cells: &'a [CellData],
    /// The bottleneck cells' scenarios less seed and replications, with their index.
    scenarios: Vec<(usize, serde_json::Value)>,
}

impl<'a> Matcher<'a> {
    fn new(cells: &'a [CellData]) -> Self {
        let scenarios = (cells.iter().enumerate())
            .filter(|(_, c)| !c.mesh)
            .map(|(i, c)| {
                let mut s = c.summary["scenario"].clone();
                strip(&mut s);
                (i, s)
            })
            .collect();
        Matcher { cells, scenarios }
    }

    /// The cell that ran `f`'s experiment with `f`'s algorithm (see the module doc).
    fn cell_of(&self, f: &Figure) -> Option<&'a CellData> {
        if let Some(preset) = f.setup.get("preset") {
            return self.mesh_cell(preset, &f.subject);
        }
        let want = experiment(f)?;
        self.scenarios.iter().find(|(_, s)| *s == want).map(|(i, _)| &self.cells[*i])
    }

    /// The cell that ran mesh preset `preset` with algorithm `algo`, for the preset's own length
    /// and with no other key of the plan changed.
    fn mesh_cell(&self, preset: &str, algo: &str) -> Option<&'a CellData> {
        let text = netsim::mesh::presets::text(preset)?;
        let duration = text.parse::<toml::Table>().ok()?.get("duration_s")?.as_float()?;
        self.cells.iter().find(|c| {
            let s = &c.summary["scenario"];
            c.mesh
                && c.algo == algo
                && s["name"].as_str() == Some(preset)
                && s["duration_s"].as_f64() == Some(duration)
                && c.extra.keys().all(|k| k == "preset")
        })
    }
}

/// A figure set beside the cell that ran its experiment, if one did.
#[derive(Debug, Clone)]
pub(crate) struct Comparison<'a> {
    /// The published figure.
    pub figure: Figure,
    /// The cell, its value of the figure's statistic over all its clients and replications, and
    /// (for a median) the range of its replications' own medians.
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

/// A stated comparison beside the two cells that ran its experiment with its two algorithms.
#[derive(Debug, Clone)]
pub(crate) struct Claim<'a> {
    /// The published comparison (`lower_by`: `value`: the subject's statistic, % below the
    /// reference's; `lower`, `higher`: a direction only).
    pub figure: Figure,
    /// The two cells (subject's, reference's) and the same difference between their values, %
    /// in the claim's direction (below for `lower_by` and `lower`, above for `higher`), if both
    /// cells are here.
    pub reproduced: Option<(&'a CellData, &'a CellData, f64)>,
}

impl Claim<'_> {
    /// The difference goes the stated way.
    pub(crate) fn holds(&self) -> Option<bool> {
        self.reproduced.map(|(_, _, pct)| pct > 0.0)
    }

    /// The stated direction in words.
    fn direction(&self) -> &'static str {
        if self.figure.relation == "higher" {
            "above"
        } else {
            "below"
        }
    }
}

/// Every published figure and stated comparison ([`PUBLISHED`]), each with what the cells that
/// ran its experiment give (the replications' medians read from `dir`'s per-client tables).
pub(crate) fn compare_all<'a>(
    cells: &'a [CellData],
    dir: &Path,
) -> Result<(Vec<Comparison<'a>>, Vec<Claim<'a>>), String> {
    let matcher = Matcher::new(cells);
    let (mut figures_out, mut claims_out) = (Vec::new(), Vec::new());
    for (file, text) in PUBLISHED {
        for figure in figures(text).map_err(|e| format!("{file}: {e}"))? {
            let reproduced = matcher.cell_of(&figure).map(|c| {
                // the replications' own medians: a median's spread (another statistic's is not said)
                let spread = if figure.metric == "median FCT" { rep_medians(dir, &c.id) } else { (f64::NAN, f64::NAN) };
                (c, statistic(c, &figure.metric), spread)
            });
            figures_out.push(Comparison { figure, reproduced });
        }
        for figure in claims(text).map_err(|e| format!("{file}: {e}"))? {
            let reference = Figure { subject: figure.reference.clone(), ..figure.clone() };
            let reproduced = (matcher.cell_of(&figure).zip(matcher.cell_of(&reference))).map(|(s, r)| {
                let ratio = statistic(s, &figure.metric) / statistic(r, &figure.metric);
                (s, r, if figure.relation == "higher" { 100.0 * (ratio - 1.0) } else { 100.0 * (1.0 - ratio) })
            });
            claims_out.push(Claim { figure, reproduced });
        }
    }
    Ok((figures_out, claims_out))
}

/// `share of exchanges retransmitted K times` (paper 001's Table 2): K.
fn retransmitted(metric: &str) -> Option<usize> {
    metric.strip_prefix("share of exchanges retransmitted ")?.strip_suffix(" times")?.parse().ok()
}

/// `bytes sent per second in the 50 s to T s` (the NITK thesis's Table 4.1, throughput at time
/// T): the index of the summary's window that ends at T.
fn window_end(metric: &str) -> Option<usize> {
    let end: f64 = metric.strip_prefix("bytes sent per second in the 50 s to ")?.strip_suffix(" s")?.parse().ok()?;
    let w = end / netsim::mesh::summary::THROUGHPUT_WINDOW_S;
    (w >= 1.0 && w.fract() == 0.0).then(|| w as usize - 1)
}

/// `time to N completed exchanges` (the NITK thesis's Table 4.2): N.
fn completed_n(metric: &str) -> Option<u64> {
    metric.strip_prefix("time to ")?.strip_suffix(" completed exchanges")?.parse().ok()
}

/// A cell's value of a published statistic: an FCT quantile; the share of its exchanges
/// retransmitted K times (its histogram over every replication); CLOUD's throughput and exchange
/// duration (a baseline run's per-server averages as CLOUD gives them, else the run's completed
/// exchanges per second and mean exchange duration); retransmissions per request; Jain's
/// fairness index over the clients; goodput (bytes per second); the NITK thesis's mean FCT,
/// retransmissions per run, request bytes per second (whole run, or one 50-s window), time to N
/// completed exchanges and PDR.
fn statistic(c: &CellData, metric: &str) -> f64 {
    let v = &c.summary;
    if let Some(k) = retransmitted(metric) {
        let hist = v["retransmissions_hist"].as_array();
        let n = hist.and_then(|h| h.get(k)).and_then(|x| x.as_f64()).unwrap_or(0.0);
        return v["exchanges"].as_f64().map_or(f64::NAN, |total| n / total);
    }
    if let Some(w) = window_end(metric) {
        return v["throughput_bytes_per_s_windows"].get(w).and_then(|x| x.as_f64()).unwrap_or(f64::NAN);
    }
    if let Some(n) = completed_n(metric) {
        let times = v["packet_transmission_time"].as_array().into_iter().flatten();
        let at = times.into_iter().find(|t| t["packets"].as_u64() == Some(n));
        return at.and_then(|t| t["mean_s"].as_f64()).unwrap_or(f64::NAN);
    }
    let baseline = v["baseline"].is_object();
    let x = match metric {
        "throughput" if baseline => &v["baseline"]["throughput_per_s"],
        "throughput" => &v["throughput_req_s"],
        "exchange duration" if baseline => &v["baseline"]["exchange_duration_s"],
        "exchange duration" => &v["exchange_duration_s"]["mean"],
        "retries per request" => &v["retries_per_request"],
        "Jain fairness" => &v["jain_fairness"],
        "max RTO" => &v["rto_s"]["max_mean"],
        "mean RTO" => &v["rto_s"]["mean"],
        "transactions per second" => &v["transactions_per_s"],
        "goodput" => &v["goodput_bps"],
        "mean FCT" => &v["fct_mean_s"],
        "median unnecessary retransmissions per client" => &v["unnecessary_retx_per_client"]["p50"],
        "retransmissions" => &v["retransmissions_total"],
        "bytes sent per second" => &v["throughput_bytes_per_s"],
        "PDR" => &v["pdr"],
        m => &v["fct_s"][FCT_METRICS.iter().find(|(name, _)| *name == m).map_or("p50", |(_, k)| *k)],
    };
    x.as_f64().unwrap_or(f64::NAN)
}

/// The smallest and largest of a cell's replications' median FCTs (type-7, as the summaries'),
/// from its per-client table; NaN where none is known.
fn rep_medians(dir: &Path, id: &str) -> (f64, f64) {
    const UNKNOWN: (f64, f64) = (f64::NAN, f64::NAN);
    let path = dir.join("cells").join(format!("{id}.clients.csv"));
    let Ok(mut r) = csv::Reader::from_path(&path) else { return UNKNOWN };
    let Ok(h) = r.headers().cloned() else { return UNKNOWN };
    let (Some(ri), Some(fi)) = (h.iter().position(|x| x == "rep"), h.iter().position(|x| x == "fct_s")) else {
        return UNKNOWN;
    };
    let mut by_rep: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for row in r.records().flatten() {
        if let (Some(rep), Some(f)) = (row.get(ri), row.get(fi).and_then(|x| x.parse::<f64>().ok())) {
            by_rep.entry(rep.to_string()).or_default().push(f);
        }
    }
    let medians = by_rep.into_values().map(|mut v| {
        v.sort_by(f64::total_cmp);
        runstats::quantile(&v, 0.5)
    });
    medians.fold(UNKNOWN, |(lo, hi), m| (lo.min(m), hi.max(m)))
}

/// A figure or a claim beside what the cells give: a row of the report's `published.csv` and of
/// `reproduce --json` (every published row, those without a cell here too).
#[derive(Debug, Clone, serde::Serialize)]
pub struct Row {
    /// `figure` (a value) or `claim` (a comparison).
    pub kind: &'static str,
    pub id: String,
    pub source: String,
    pub section: String,
    pub figure_or_table: String,
    /// The experiment in words (the preset, or the testbed's keys).
    pub experiment: String,
    pub metric: String,
    pub subject: String,
    /// `equals`, `lower_by`, `lower` or `higher`.
    pub relation: String,
    pub reference: String,
    /// The published value (a claim's: the stated difference, %), none for a claim in words.
    pub published: Option<f64>,
    /// The published value's unit (a claim's: %).
    pub unit: String,
    /// A figure's reproduced value; a claim's difference between the two cells, % in the stated
    /// direction.
    pub reproduced: Option<f64>,
    /// A median's spread: the smallest and largest of the replications' own medians.
    pub replications_low: Option<f64>,
    pub replications_high: Option<f64>,
    /// Reproduced ÷ published (figures).
    pub ratio: Option<f64>,
    /// `within 10 %`, `N % higher`, `N % lower`; `holds`, `does not hold`; `no cell here`; `not
    /// measured in the cell` (its run has no such value: no replication completed N exchanges).
    pub verdict: String,
    /// The verdict as a test: within [`WITHIN`], or the claim holds; `None` without a cell.
    #[serde(skip)]
    pub holds: Option<bool>,
    /// The cell that ran it (a claim's: the subject's, then the reference's).
    pub cell: String,
    pub reference_cell: String,
}

fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

/// A figure's verdict: within [`WITHIN`], or how far off.
fn verdict(c: &Comparison<'_>) -> String {
    match c.ratio() {
        None => "no cell here".into(),
        Some(r) if r.is_nan() => "not measured in the cell".into(),
        Some(_) if c.holds() == Some(true) => format!("within {:.0} %", 100.0 * WITHIN),
        Some(r) if r > 1.0 => format!("{:.0} % higher", 100.0 * (r - 1.0)),
        Some(r) => format!("{:.0} % lower", 100.0 * (1.0 - r)),
    }
}

/// Every figure and claim as [`Row`]s.
pub(crate) fn rows_of(figures: &[Comparison<'_>], claims: &[Claim<'_>]) -> Vec<Row> {
    let base = |kind, f: &Figure| Row {
        kind,
        id: f.id.clone(),
        source: f.source.clone(),
        section: f.section.clone(),
        figure_or_table: f.figure.clone(),
        experiment: experiment_label(f),
        metric: f.metric.clone(),
        subject: f.subject.clone(),
        relation: f.relation.clone(),
        reference: f.reference.clone(),
        published: finite(f.value),
        unit: f.unit.clone(),
        reproduced: None,
        replications_low: None,
        replications_high: None,
        ratio: None,
        verdict: "no cell here".into(),
        holds: None,
        cell: String::new(),
        reference_cell: String::new(),
    };
    let mut out = Vec::new();
    for c in figures {
        let mut row = base("figure", &c.figure);
        if let Some((cell, value, (lo, hi))) = c.reproduced {
            row.reproduced = finite(value);
            (row.replications_low, row.replications_high) = (finite(lo), finite(hi));
            row.ratio = c.ratio().and_then(finite);
            row.verdict = verdict(c);
            row.holds = c.holds();
            row.cell = cell.id.clone();
        }
        out.push(row);
    }
    for c in claims {
        let mut row = base("claim", &c.figure);
        row.unit = "%".into();
        if let Some((s, r, pct)) = c.reproduced {
            row.reproduced = finite(pct);
            row.verdict = if c.holds() == Some(true) { "holds" } else { "does not hold" }.into();
            row.holds = c.holds();
            (row.cell, row.reference_cell) = (s.id.clone(), r.id.clone());
        }
        out.push(row);
    }
    out
}

/// The published FCT statistics of each cell that ran a figure's experiment, for the report's
/// box plots: (value, which statistic and where it is published).
pub(crate) fn fct_marks(figures: &[Comparison<'_>]) -> crate::report::plots::Marks {
    let mut marks = crate::report::plots::Marks::new();
    for c in figures {
        let Some((cell, _, _)) = c.reproduced else { continue };
        let f = &c.figure;
        if FCT_METRICS.iter().any(|(name, _)| *name == f.metric) {
            let place =
                if f.figure.is_empty() { format!("§{}", f.section) } else { format!("§{}, {}", f.section, f.figure) };
            let what = format!("published {}: {} {} ({}, {place})", f.metric, f.value, f.unit, f.source);
            let q = match f.metric.as_str() {
                "FCT min" => 0.0,
                "FCT p10" => 0.1,
                "FCT p25" => 0.25,
                "median FCT" => 0.5,
                "FCT p75" => 0.75,
                "FCT p90" => 0.9,
                _ => 1.0,
            };
            marks.entry(cell.id.clone()).or_default().push((f.value, Some(q), what));
        }
    }
    marks
}

/// A figure's experiment in words: the preset, or the testbed's keys.
fn experiment_label(f: &Figure) -> String {
    if let Some(p) = f.setup.get("preset") {
        return format!("preset {p}");
    }
    let get = |k: &str| f.setup.get(k).map_or("?", String::as_str);
    format!("{}, {} clients, {} B, errors {}", get("workload"), get("clients"), get("buffer"), get("errors"))
}

/// The stated comparisons whose two cells are here: a count of those that hold, then a row each;
/// empty when none.
fn claims_table(claims: &[Claim<'_>]) -> String {
    let here: Vec<&Claim> = claims.iter().filter(|c| c.reproduced.is_some()).collect();
    if here.is_empty() {
        return String::new();
    }
    let holding = here.iter().filter(|c| c.holds() == Some(true)).count();
    let mut html = format!(
        "<p><strong>{holding} of {} comparisons the publications state hold</strong> (in numbers: the first \
         algorithm's statistic below the second's; in words: the direction they state; {} more have no cells \
         here).</p>",
        here.len(),
        claims.len() - here.len()
    );
    html += "<div class=\"scroll\"><table><tr><th class=\"l\">source</th><th class=\"l\">§</th>\
             <th class=\"l\">experiment</th><th class=\"l\">statistic</th><th class=\"l\">of</th>\
             <th class=\"l\">stated</th><th class=\"l\">that of</th>\
             <th>published (%)</th><th>reproduced (%)</th><th class=\"l\">verdict</th></tr>";
    for c in here {
        let f = &c.figure;
        let pct = c.reproduced.map_or(f64::NAN, |r| r.2);
        let verdict = if c.holds() == Some(true) { "holds" } else { "does not hold" };
        let published = if f.value.is_nan() { "in words".to_string() } else { f.value.to_string() };
        let _ = write!(
            html,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td>\
             <td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td title=\"{}\">{}</td>\
             <td>{:.2}</td><td class=\"l\">{}</td></tr>",
            crate::svg::esc(&f.source),
            crate::svg::esc(&f.section),
            crate::svg::esc(&experiment_label(f)),
            crate::svg::esc(&f.metric),
            crate::svg::esc(&f.subject),
            c.direction(),
            crate::svg::esc(&f.reference),
            crate::svg::esc(&f.note),
            published,
            pct,
            verdict
        );
    }
    html + "</table></div>"
}

/// The report's section: a summary, then a row per figure whose experiment a cell ran, then the
/// stated comparisons; empty when no cell ran one.
pub(crate) fn section(comparisons: &[Comparison<'_>], claims: &[Claim<'_>]) -> String {
    let matched: Vec<&Comparison<'_>> = comparisons.iter().filter(|c| c.reproduced.is_some()).collect();
    let mut html = String::from("<h2 id=\"published\">Published beside reproduced</h2>");
    if matched.is_empty() {
        let table = claims_table(claims);
        return if table.is_empty() { String::new() } else { html + &table };
    }
    let within = matched.iter().filter(|c| c.holds() == Some(true)).count();
    let sources: std::collections::BTreeSet<&str> = matched.iter().map(|c| c.figure.source.as_str()).collect();
    let _ = write!(
        html,
        "<p><strong>{within} of {} published figures reproduced within {:.0} %</strong> ({} more of the \
         publications' have no cell here). Published: {}, as they state them (<code>reproduce/published/</code>); \
         reproduced: the cell's statistic over all its clients and replications (CLOUD's: as its \
         tables define them), and for a median the range of the replications' own medians. A figure that does not reproduce is a finding: \
         docs/reproduction.md.</p>",
        matched.len(),
        100.0 * WITHIN,
        comparisons.len() - matched.len(),
        crate::svg::esc(&sources.into_iter().collect::<Vec<_>>().join("; "))
    );
    html += "<div class=\"scroll\"><table><tr><th class=\"l\">source</th><th class=\"l\">§</th>\
             <th class=\"l\">figure</th><th class=\"l\">experiment</th><th class=\"l\">algorithm</th>\
             <th class=\"l\">statistic</th><th class=\"l\">unit</th><th>published</th><th>reproduced</th>\
             <th>replications' medians</th><th>ratio</th><th class=\"l\">verdict</th></tr>";
    for c in matched {
        let Some((cell, value, (lo, hi))) = c.reproduced else { continue };
        let f = &c.figure;
        let ratio = c.ratio().unwrap_or(f64::NAN);
        let verdict = verdict(c);
        let _ = write!(
            html,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td>\
             <td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td title=\"{}\">{}</td>\
             <td title=\"cell {}\">{:.3}</td><td>{}</td><td>{:.3}</td><td class=\"l\">{}</td></tr>",
            crate::svg::esc(&f.source),
            crate::svg::esc(&f.section),
            crate::svg::esc(&f.figure),
            crate::svg::esc(&experiment_label(f)),
            crate::svg::esc(&f.subject),
            crate::svg::esc(&f.metric),
            crate::svg::esc(&f.unit),
            crate::svg::esc(&f.precision),
            f.value,
            crate::svg::esc(&cell.id),
            value,
            if lo.is_nan() { "–".to_string() } else { format!("{lo:.1}–{hi:.1}") },
            ratio,
            verdict
        );
    }
    html += "</table></div>";
    html + &claims_table(claims)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_thesis_file_reads_whole_and_names_testbed_experiments() {
        let file = |name: &str| PUBLISHED.iter().find(|(n, _)| *n == name).unwrap().1;
        let f = figures(file("thesis-fct.csv")).unwrap();
        // the comparisons the thesis states in numbers: 25, each between two of its algorithms
        let c = claims(file("thesis-claims.csv")).unwrap();
        assert_eq!(c.len(), 25);
        assert!(c.iter().all(|c| experiment(c).is_some() && c.reference != c.subject && !c.reference.is_empty()));
        // five algorithms on 23 error-free cells (three of them with three algorithms stated),
        // the random 50-client cell without its buffer, and 5 × 8 error-prone cells
        assert_eq!(f.len(), 126);
        let one = f.iter().find(|f| f.id == "thesis.fct.continuous.100.1410000.none.default").unwrap();
        assert_eq!((one.value, one.section.as_str(), one.figure.as_str()), (244.911, "8.2", "Fig. 21"));
        // every stated experiment resolves on the testbed, but the one whose buffer is unstated
        let unresolved: Vec<&str> = f.iter().filter(|f| experiment(f).is_none()).map(|f| f.id.as_str()).collect();
        assert_eq!(unresolved.len(), 5);
        assert!(unresolved.iter().all(|id| id.contains(".random.50.unstated.")), "{unresolved:?}");
        // paper 001: Table 1 (4 rows of 7 statistics), six medians of its text and Table 2's
        // non-zero shares (5 + 5 + 5 + 7 retransmission counts), all on the testbed
        let fb = figures(file("fb-paper.csv")).unwrap();
        assert_eq!(fb.len(), 56);
        let t2: Vec<&Figure> = fb.iter().filter(|f| f.figure == "Table 2").collect();
        assert_eq!(t2.len(), 22);
        // each row's shares are its counts over the table's 400,000 exchanges: they sum to one
        for (alg, wl) in
            [("default", "continuous"), ("cocoa", "continuous"), ("default", "random"), ("cocoa", "random")]
        {
            let sum: f64 = t2.iter().filter(|f| f.subject == alg && f.setup["workload"] == wl).map(|f| f.value).sum();
            assert!((sum - 1.0).abs() < 1e-5, "{alg} {wl}: {sum}");
        }
        assert_eq!(retransmitted("share of exchanges retransmitted 6 times"), Some(6));
        assert!(fb.iter().all(|f| experiment(f).is_some()));
        let p90 = fb.iter().find(|f| f.id == "fb.table1.cocoa.14100.p90").unwrap();
        assert_eq!((p90.metric.as_str(), p90.value), ("FCT p90", 63.179));
        // CLOUD: Tables II–VII, 4 algorithms × 3 metrics, each on a preset that exists
        let cloud = figures(file("cloud.csv")).unwrap();
        assert_eq!(cloud.len(), 72);
        assert!(cloud.iter().all(|f| f.setup.get("preset").is_some_and(|p| netsim::mesh::presets::text(p).is_some())));
        let m2m = cloud.iter().find(|f| f.id == "cloud.cloud-m2m-nullrdc.cocoa.throughput").unwrap();
        assert_eq!((m2m.value, m2m.unit.as_str(), m2m.figure.as_str()), (5.34, "req/s", "TABLE IV"));
        // RTT-CoAP: claims in words only (fairness above, goodput below the others'), no number,
        // each on a preset that exists, against both algorithms it compared
        assert!(figures(file("rttcoap.csv")).unwrap().is_empty());
        let rtt = claims(file("rttcoap.csv")).unwrap();
        assert_eq!(rtt.len(), 12);
        assert!(rtt.iter().all(|c| c.value.is_nan()
            && c.setup.get("preset").is_some_and(|p| netsim::mesh::presets::text(p).is_some())
            && ["default", "cocoa"].contains(&c.reference.as_str())));
        assert_eq!(rtt.iter().filter(|c| c.relation == "higher" && c.metric == "Jain fairness").count(), 8);
        assert_eq!(rtt.iter().filter(|c| c.relation == "lower" && c.metric == "goodput").count(), 4);
        // the NITK thesis's CoCoA++ Tables 6.3 and 6.4: 8 topologies × 2 algorithms × 3 figures
        let nitk = figures(file("nitk-cocoapp.csv")).unwrap();
        assert_eq!(nitk.len(), 48);
        assert!(nitk.iter().all(|f| f.setup.get("preset").is_some_and(|p| netsim::mesh::presets::text(p).is_some())));
        let grid = nitk.iter().find(|f| f.id == "nitk.cocoapp.grid6x6.cocoa_pp.transactions_per_second").unwrap();
        assert_eq!((grid.value, grid.figure.as_str()), (21.7555, "Table 6.3"));
        // its FIT/IoT-LAB figures: CoAP-Eifel's Tables 4.1 (6 times × 2), 4.2 (4 × 2) and 4.3
        // (2), GSRTC's four mean FCTs, its total retransmissions and Table 5.2's testbed column;
        // claims: GST's 3 and GSRTC's 6 in numbers, 15 in words; every row read (none skipped
        // as a metric coapcc does not measure), each on a preset that exists
        let text = file("nitk-iotlab.csv");
        let (lab, said) = (figures(text).unwrap(), claims(text).unwrap());
        assert_eq!((lab.len(), said.len()), (31, 24));
        assert_eq!(lab.len() + said.len(), text.lines().count() - 1);
        assert_eq!(said.iter().filter(|c| c.relation == "lower_by").count(), 9);
        assert!(lab
            .iter()
            .chain(&said)
            .all(|f| f.setup.get("preset").is_some_and(|p| netsim::mesh::presets::text(p).is_some())));
        let table = |t: &str| lab.iter().filter(|f| f.figure == t).count();
        assert_eq!((table("Table 4.1"), table("Table 4.2"), table("Table 4.3"), table("Table 5.2")), (12, 8, 2, 4));
        let t41 = lab.iter().find(|f| f.id == "eifel.thr.default.300").unwrap();
        assert_eq!((t41.value, window_end(&t41.metric)), (358.6, Some(5)));
        let t42 = lab.iter().find(|f| f.id == "eifel.tt.eifel.1500").unwrap();
        assert_eq!((t42.value, completed_n(&t42.metric)), (193.65, Some(1500)));
        assert_eq!(window_end("bytes sent per second in the 50 s to 75 s"), None);
        assert_eq!(window_end("bytes sent per second in the 50 s to 0 s"), None);
        let gsrtc = said.iter().find(|f| f.id == "gsrtc.iotlab.retx.cocoa_fb2").unwrap();
        assert_eq!((gsrtc.value, gsrtc.reference.as_str()), (44.92, "cocoa_fb2"));
        // the thesis's other statistics: the median unnecessary retransmissions it states (§6.1),
        // each on a testbed cell that resolves
        let other = figures(file("thesis-other.csv")).unwrap();
        assert_eq!(other.len(), 4);
        assert!(other.iter().all(|f| experiment(f).is_some() && TESTBED_METRICS.contains(&f.metric.as_str())));
        let tcp = other.iter().find(|f| f.subject == "tcp:initial_rto=2").unwrap();
        assert_eq!((tcp.value, tcp.setup["buffer"].as_str()), (6.0, "28200"));
    }
}
