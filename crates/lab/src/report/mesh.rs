//! The mesh cells of `coapcc report`. Cells that differ only in their algorithm form a group;
//! each group gets the topology as every algorithm left it (motes at their positions, the
//! routing tree, each mote coloured by the frames it lost), the armed RTOs over time, the
//! transactions per second and the FCT per algorithm (under ContikiMAC also the motes' radio duty
//! cycles; for CLOUD's burst the CDF of the burst clients' completion), and a table of the mesh metrics with their mean and median over the replications.

use std::collections::BTreeMap;
use std::fmt::Write;

use runstats::quantile;
use serde_json::Value;

use super::cells::{five, num, CellData};
use crate::svg::{esc, Plot, PALETTE};

/// A mote's losses by cause, as its results name them (every cause the model counts).
fn causes(node: &Value) -> impl Iterator<Item = (&String, f64)> {
    node["drops"].as_object().into_iter().flatten().map(|(cause, n)| (cause, num(n))).filter(|(_, n)| n.is_finite())
}

fn drops_of(node: &Value) -> f64 {
    causes(node).map(|(_, n)| n).sum()
}

/// White (no drops) to red (the group's most).
fn heat(f: f64) -> String {
    let f = if f.is_finite() { f.clamp(0.0, 1.0) } else { 0.0 };
    let mix = |a: f64, b: f64| (a + (b - a) * f).round() as u8;
    format!("#{:02x}{:02x}{:02x}", mix(247.0, 215.0), mix(247.0, 48.0), mix(247.0, 31.0))
}

/// A moving mote's trail (positions every `trail_every_s`), empty for a mote that stays.
fn trail(node: &Value) -> Vec<(f64, f64)> {
    node["trail"].as_array().into_iter().flatten().map(|p| (num(&p[0]), num(&p[1]))).collect()
}

/// Where the picture puts a mote: its last trail point if it moved (the routing tree drawn is
/// the one at the end of the run), else its position.
fn place(node: &Value) -> (f64, f64) {
    trail(node).last().copied().unwrap_or((num(&node["x"]), num(&node["y"])))
}

/// The motes, the routing tree, moving motes' trails and each mote's drops (`most`: the
/// group's largest count).
fn topology(cell: &CellData, most: f64, title: &str) -> String {
    let nodes = cell.summary["network"]["nodes"].as_array().cloned().unwrap_or_default();
    let moving = nodes.iter().any(|n| !trail(n).is_empty());
    let all: Vec<(f64, f64)> = nodes.iter().flat_map(|n| trail(n).into_iter().chain([place(n)])).collect();
    let xs: Vec<f64> = all.iter().map(|p| p.0).collect();
    let ys: Vec<f64> = all.iter().map(|p| p.1).collect();
    let bounds = |v: &[f64]| {
        (v.iter().copied().fold(f64::INFINITY, f64::min), v.iter().copied().fold(f64::NEG_INFINITY, f64::max))
    };
    let ((x_lo, x_hi), (y_lo, y_hi)) = (bounds(&xs), bounds(&ys));
    let span = (x_hi - x_lo).max(y_hi - y_lo).max(1.0);
    // 260 px for the longer side; the frame as tall as the layout needs
    let tall = 260.0 * (y_hi - y_lo) / span;
    let mut p = Plot::new(300.0, 46.0 + tall.max(20.0) + 50.0);
    p.left = 20.0;
    p.right = 20.0;
    p.bottom = 50.0;
    p.caption(&format!("Topology, {}", cell.algo));
    // one scale for both axes; y grows downwards, as Cooja draws it
    let side = p.x1() - p.x0();
    let (px0, py1) = (p.x0(), p.y1());
    let at = |x: f64, y: f64| (px0 + (x - x_lo) / span * side, py1 + (y - y_lo) / span * side);
    let by_id: BTreeMap<u64, (f64, f64)> = nodes
        .iter()
        .map(|n| {
            let (x, y) = place(n);
            (n["id"].as_u64().unwrap_or(0), at(x, y))
        })
        .collect();
    for n in &nodes {
        let t: Vec<(f64, f64)> = trail(n).into_iter().map(|(x, y)| at(x, y)).collect();
        if t.len() > 1 {
            p.polyline(&t, "#b8cbe0");
        }
    }
    // motes as large as their closest pair allows; ids written inside when they fit
    let pts: Vec<(f64, f64)> = by_id.values().copied().collect();
    let closest = pts
        .iter()
        .enumerate()
        .flat_map(|(i, a)| pts[i + 1..].iter().map(move |b| ((a.0 - b.0).powi(2) + (a.1 - b.1).powi(2)).sqrt()))
        .fold(f64::INFINITY, f64::min);
    let r = (closest / 2.4).clamp(2.5, 7.5);
    for n in &nodes {
        if let (Some(&a), Some(b)) = (by_id.get(&n["id"].as_u64().unwrap_or(0)), n["parent"].as_u64()) {
            if let Some(&b) = by_id.get(&b) {
                p.line(a.0, a.1, b.0, b.1, "#9a9a9a", 1.2);
            }
        }
    }
    let duty = &cell.summary["network"]["duty_cycle"]["per_node"];
    for (i, n) in nodes.iter().enumerate() {
        let id = n["id"].as_u64().unwrap_or(0);
        let (x, y) = by_id[&id];
        let role = n["role"].as_str().unwrap_or("?");
        let drops = drops_of(n);
        let lost: Vec<String> = causes(n).filter(|(_, k)| *k > 0.0).map(|(c, k)| format!("{c} {k}")).collect();
        let tip = format!(
            "node {id} ({role}), parent {}, rank {}: frames sent {}, received {}; originated {}, forwarded {}, delivered {}; lost {drops}{}",
            n["parent"].as_u64().map_or("none".into(), |v| v.to_string()),
            n["rank"],
            n["frames_sent"],
            n["frames_received"],
            n["originated"],
            n["forwarded"],
            n["delivered"],
            if lost.is_empty() { String::new() } else { format!(" ({})", lost.join(", ")) }
        );
        // ContikiMAC: the mote's radio duty cycle
        let tip = match duty[i].as_f64() {
            Some(d) => format!("{tip}; radio on {:.2} % of the time", d * 100.0),
            None => tip,
        };
        let fill = heat(drops / most.max(1.0));
        match role {
            "border_router" => p.rect((x - r - 0.5, y - r - 0.5, 2.0 * r + 1.0, 2.0 * r + 1.0), &fill, "#222", &tip),
            "server" => {
                p.circle((x, y, r * 1.35), "none", "#222", &tip);
                p.circle((x, y, r), &fill, "#222", &tip);
            }
            _ => p.circle((x, y, r), &fill, "#555", &tip),
        }
        if r >= 6.0 {
            p.text(x, y + 3.5, "middle", 9.0, &id.to_string());
        }
    }
    let y = p.h - 24.0;
    let legend = if moving {
        "square: border router; ring: server; lines: final tree; blue: trails"
    } else {
        "square: border router; ring: server; lines: routing tree"
    };
    p.text(p.x0(), y, "start", 10.0, legend);
    p.text(p.x0(), y + 13.0, "start", 10.0, &format!("white to red: 0 to {most} frames lost (hover: counts)"));
    p.finish(title)
}

/// The mean armed RTO per time bin, one line per algorithm (gaps where no timer was armed).
fn rto_over_time(cells: &[&CellData], algos: &[String], title: &str) -> String {
    let axes = ("Armed RTO over time (mean per bin, all replications)", "RTO (s)", "time the timer was armed (s)");
    over_time(cells, algos, title, axes, &|c| {
        let s = &c.summary["rto_over_time"];
        (num(&s["bin_s"]), s["mean_s"].as_array().map(|a| a.iter().map(num).collect()).unwrap_or_default())
    })
}

/// One line per algorithm of a binned series: `series` gives the bin width (s) and the values
/// (non-finite: a gap); `axes` = (caption, y label, x label).
fn over_time(
    cells: &[&CellData],
    algos: &[String],
    title: &str,
    axes: (&str, &str, &str),
    series: &dyn Fn(&CellData) -> (f64, Vec<f64>),
) -> String {
    let mut p = Plot::new(460.0, 290.0);
    p.caption(axes.0);
    let legend: Vec<(String, &str)> =
        algos.iter().enumerate().map(|(i, a)| (a.clone(), PALETTE[i % PALETTE.len()])).collect();
    p.legend(&legend);
    let end = cells.iter().map(|c| num(&c.summary["duration_s"])).fold(0.0, f64::max);
    let top = cells.iter().flat_map(|c| series(c).1).filter(|v| v.is_finite()).fold(0.0, f64::max);
    let hi = if top > 0.0 { top * 1.08 } else { 1.0 };
    p.y_axis(0.0, hi, axes.1);
    p.x_axis(0.0, end.max(1.0), axes.2);
    for (ai, a) in algos.iter().enumerate() {
        let Some(c) = cells.iter().find(|c| &c.algo == a) else { continue };
        let (bin, mean) = series(c);
        let mut run: Vec<(f64, f64)> = Vec::new();
        for (i, v) in mean.iter().enumerate() {
            if v.is_finite() {
                run.push((p.xpix((i as f64 + 0.5) * bin, 0.0, end), p.ypix(*v, 0.0, hi)));
            } else if !run.is_empty() {
                p.polyline(&std::mem::take(&mut run), PALETTE[ai % PALETTE.len()]);
            }
        }
        if !run.is_empty() {
            p.polyline(&run, PALETTE[ai % PALETTE.len()]);
        }
    }
    p.finish(title)
}

/// One bar or box per algorithm: `stats` gives (low whisker, box low, middle, box high, high
/// whisker); a bar when the box is flat at zero height.
fn per_algorithm(
    caption: &str,
    ylabel: &str,
    cells: &[&CellData],
    algos: &[String],
    stats: &dyn Fn(&CellData) -> Option<[f64; 5]>,
    title: &str,
) -> String {
    let mut p = Plot::new((120.0 + 56.0 * algos.len() as f64).clamp(300.0, 640.0), 290.0);
    p.caption(caption);
    let found: Vec<(usize, [f64; 5])> = algos
        .iter()
        .enumerate()
        .filter_map(|(i, a)| cells.iter().find(|c| &c.algo == a).and_then(|c| stats(c)).map(|s| (i, s)))
        .filter(|(_, s)| s.iter().all(|v| v.is_finite()))
        .collect();
    let top = found.iter().map(|(_, s)| s[4]).fold(0.0, f64::max);
    let hi = if top > 0.0 { top * 1.1 } else { 1.0 };
    p.y_axis(0.0, hi, ylabel);
    let (x0, x1, y0) = (p.x0(), p.x1(), p.y0());
    let slot = (x1 - x0) / algos.len().max(1) as f64;
    for (i, a) in algos.iter().enumerate() {
        let cx = x0 + slot * (i as f64 + 0.5);
        p.text(cx, y0 + 15.0, "middle", 11.0, a);
        let Some((_, s)) = found.iter().find(|(j, _)| *j == i) else {
            p.text(cx, y0 - 8.0, "middle", 10.0, "none");
            continue;
        };
        let [lo, box_lo, mid, box_hi, hi_px] = s.map(|v| p.ypix(v, 0.0, hi));
        let w = (slot * 0.5).min(36.0);
        let color = PALETTE[i % PALETTE.len()];
        let tip = format!("{a}: {:.3} (box {:.3}–{:.3}, whiskers {:.3}–{:.3})", s[2], s[1], s[3], s[0], s[4]);
        p.line(cx, lo, cx, hi_px, "#333", 1.0);
        p.line(cx - w * 0.3, lo, cx + w * 0.3, lo, "#333", 1.0);
        p.line(cx - w * 0.3, hi_px, cx + w * 0.3, hi_px, "#333", 1.0);
        if s[1] == s[3] {
            p.rect((cx - w / 2.0, mid, w, (y0 - mid).max(1.0)), color, "#333", &tip);
        } else {
            p.rect((cx - w / 2.0, box_hi, w, (box_lo - box_hi).max(1.0)), color, "#333", &tip);
            p.line(cx - w / 2.0, mid, cx + w / 2.0, mid, "#111", 2.0);
        }
    }
    p.finish(title)
}

/// A per-replication column of the summary's `per_rep`, sorted.
fn per_rep(c: &CellData, key: &str) -> Vec<f64> {
    let mut v: Vec<f64> = c.summary["per_rep"]
        .as_array()
        .map(|a| a.iter().map(|r| num(&r[key])).filter(|x| x.is_finite()).collect())
        .unwrap_or_default();
    v.sort_by(f64::total_cmp);
    v
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        f64::NAN
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

fn cell_num(v: f64, digits: usize) -> String {
    if v.is_finite() {
        format!("{v:.digits$}")
    } else {
        "–".into()
    }
}

/// NITK's chapter 4 figures (Tables 4.1 and 4.2): the clients' bytes sent per second, and the
/// time to the N-th completed exchange, mean over the replications that got there (how many
/// in brackets); nothing when no replication completed the first N.
fn transmission_times(members: &[&CellData], algos: &[String]) -> String {
    let times = |c: &CellData| c.summary["packet_transmission_time"].as_array().cloned().unwrap_or_default();
    let Some(first) = members.first().map(|c| times(c)) else { return String::new() };
    if !members.iter().any(|c| times(c).iter().any(|t| t["reps"].as_u64().unwrap_or(0) > 0)) {
        return String::new();
    }
    let mut html = String::from("<table><tr><th class=\"l\">algorithm</th><th>bytes sent / s</th>");
    for t in &first {
        let _ = write!(html, "<th>time to {} completed (s)</th>", t["packets"].as_u64().unwrap_or(0));
    }
    html += "</tr>";
    for a in algos {
        let Some(c) = members.iter().find(|c| &c.algo == a) else { continue };
        let _ = write!(
            html,
            "<tr><td class=\"l\">{}</td><td>{}</td>",
            esc(a),
            cell_num(num(&c.summary["throughput_bytes_per_s"]), 1)
        );
        for t in times(c) {
            let _ = write!(html, "<td>{} ({})</td>", cell_num(num(&t["mean_s"]), 1), t["reps"].as_u64().unwrap_or(0));
        }
        html += "</tr>";
    }
    html + "</table>"
}

/// CLOUD's baseline (lln-evidence E7): per server, the throughput (completed exchanges per
/// second of its turn) and the mean exchange duration, averaged over servers and replications;
/// nothing unless the clients ran one after the other.
fn baseline(members: &[&CellData], algos: &[String]) -> String {
    if !members.iter().any(|c| c.summary["baseline"].is_object()) {
        return String::new();
    }
    let mut html = String::from(
        "<table><tr><th class=\"l\">algorithm</th><th>servers</th><th>throughput per server (exchanges / s)</th>\
         <th>exchange duration per server (s)</th></tr>",
    );
    for a in algos {
        let Some(c) = members.iter().find(|c| &c.algo == a) else { continue };
        let b = &c.summary["baseline"];
        let _ = write!(
            html,
            "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(a),
            cell_num(num(&b["servers"]), 1),
            cell_num(num(&b["throughput_per_s"]), 3),
            cell_num(num(&b["exchange_duration_s"]), 2)
        );
    }
    html + "</table>"
}

/// The mesh section: figures and tables of every group, and how many figures it drew.
pub(crate) fn section(cells: &[&CellData], algo_order: &[String]) -> (String, usize) {
    let mut groups: BTreeMap<(String, String), Vec<&CellData>> = BTreeMap::new();
    for c in cells {
        let name = c.summary["scenario"]["name"].as_str().unwrap_or("mesh").to_string();
        // the preset is the group's name already
        let extra: Vec<String> =
            c.extra.iter().filter(|(k, _)| k.as_str() != "preset").map(|(k, v)| format!("{k}={v}")).collect();
        groups.entry((name, extra.join(", "))).or_default().push(c);
    }
    let mut html = String::from("<h2 id=\"mesh\">Low-power mesh</h2>");
    html += "<p class=\"meta\">Per algorithm and over all replications: trans/s = completed exchanges per second; \
             FCT = a client's first request to the response of its last counted success (workload.fct_successes); \
             retx = CoAP retransmissions per run; RTO = every armed timer; PDR = CoAP messages the servers received \
             / messages the clients sent. Mean and median are over replications. Bars: mean, whiskers: the \
             replications' range; boxes: quartiles of the clients' FCTs, whiskers p10 and p90.</p>";
    let mut plots = 0;
    for ((name, extra), members) in &groups {
        let algos: Vec<String> = algo_order.iter().filter(|a| members.iter().any(|c| &c.algo == *a)).cloned().collect();
        let s = &members[0].summary["scenario"];
        let label = format!(
            "{name}: {} ({} / {}), {} s × {} replication(s){}",
            s["topology"]["layout"].as_str().unwrap_or("explicit nodes"),
            s["stack"]["mac"].as_str().unwrap_or("?"),
            s["stack"]["rdc"].as_str().unwrap_or("?"),
            num(&s["duration_s"]),
            members[0].reps,
            if extra.is_empty() { String::new() } else { format!(", {extra}") }
        );
        let label = match s["approximation"].as_str() {
            Some(a) => format!("{label} (approximation: {a})"),
            None => label,
        };
        let _ = write!(html, "<h3>{}</h3>", esc(&label));
        html += &super::warnings::section_warnings(members, algo_order);
        html += "<div class=\"figs\">";
        let most = members
            .iter()
            .flat_map(|c| c.summary["network"]["nodes"].as_array().cloned().unwrap_or_default())
            .map(|n| drops_of(&n))
            .fold(0.0, f64::max);
        for a in &algos {
            if let Some(c) = members.iter().find(|c| &c.algo == a) {
                html += &topology(c, most, &format!("Topology and lost frames, {a}, {label}"));
                plots += 1;
            }
        }
        html += &rto_over_time(members, &algos, &format!("RTO over time, {label}"));
        if members.iter().any(|c| c.summary["windows"].is_object()) {
            let window = |c: &CellData, key: &str| {
                let w = &c.summary["windows"];
                (num(&w["window_s"]), w[key].as_array().map(|a| a.iter().map(num).collect()).unwrap_or_default())
            };
            let axes = ("Goodput per window (all sources, mean over replications)", "goodput (bit/s)", "time (s)");
            html += &over_time(members, &algos, &format!("Goodput over time, {label}"), axes, &|c| {
                window(c, "goodput_bps")
            });
            let axes = ("Jain's fairness index per window (over the sources)", "Jain's index", "time (s)");
            html += &over_time(members, &algos, &format!("Fairness over time, {label}"), axes, &|c| window(c, "jain"));
            plots += 2;
        }
        html += &per_algorithm(
            "Transactions per second",
            "completed exchanges / s",
            members,
            &algos,
            &|c| {
                let v = per_rep(c, "transactions_per_s");
                let m = mean(&v);
                (!v.is_empty()).then(|| [v[0], m, m, m, v[v.len() - 1]])
            },
            &format!("Transactions per second, {label}"),
        );
        html += &per_algorithm(
            "FCT per client",
            "flow completion time (s)",
            members,
            &algos,
            &|c| (!c.fcts.is_empty()).then(|| five(&c.fcts)),
            &format!("FCT, {label}"),
        );
        plots += 3;
        if members.iter().any(|c| !c.burst.is_empty()) {
            html += &super::plots::cdf_of(
                "Burst completion (short of 1: clients unfinished at the end)",
                &format!("Burst completion, {label}"),
                ("from the burst's start to the client's last exchange (s)", "share of burst clients"),
                members,
                &algos,
                &|c| &c.burst,
                &super::plots::Marks::new(),
            );
            plots += 1;
        }
        if members.iter().any(|c| c.summary["network"]["duty_cycle"].is_object()) {
            html += &per_algorithm(
                "Radio duty cycle per mote",
                "radio on (% of the run)",
                members,
                &algos,
                &|c| {
                    let mut v: Vec<f64> = c.summary["network"]["duty_cycle"]["per_node"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|d| num(d) * 100.0)
                        .filter(|x| x.is_finite())
                        .collect();
                    // quantiles are of sorted values (the motes come in node order)
                    v.sort_by(f64::total_cmp);
                    (!v.is_empty()).then(|| five(&v))
                },
                &format!("Radio duty cycle, {label}"),
            );
            plots += 1;
        }
        html += "</div>";
        html += "<table><tr><th class=\"l\">algorithm</th><th>reps</th><th>trans/s</th><th>FCT (s)</th>\
                 <th>retx / run</th><th>RTO (s)</th><th>RTO max (s)</th><th>PDR</th><th>Jain</th>\
                 <th>failed exchanges</th><th class=\"l\">cell</th></tr>\
                 <tr><th></th><th></th><th colspan=\"6\">mean / median over replications</th><th colspan=\"3\"></th></tr>";
        for a in &algos {
            let Some(c) = members.iter().find(|c| &c.algo == a) else { continue };
            let _ = write!(html, "<tr><td class=\"l\">{}</td><td>{}</td>", esc(a), c.reps);
            for (key, digits) in [
                ("transactions_per_s", 2),
                ("fct_mean_s", 2),
                ("retransmissions", 0),
                ("rto_mean_s", 2),
                ("rto_max_s", 2),
                ("pdr", 3),
            ] {
                let v = per_rep(c, key);
                let _ =
                    write!(html, "<td>{} / {}</td>", cell_num(mean(&v), digits), cell_num(quantile(&v, 0.5), digits));
            }
            let _ = write!(
                html,
                "<td>{}</td><td>{}</td><td class=\"l\"><code>{}</code></td></tr>",
                cell_num(num(&c.summary["jain_fairness"]), 3),
                c.summary["failed_exchanges"].as_u64().unwrap_or(0),
                esc(&c.id)
            );
        }
        html += "</table>";
        html += &transmission_times(members, &algos);
        html += &baseline(members, &algos);
    }
    (html, plots)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heat_runs_from_white_to_red() {
        assert_eq!(heat(0.0), "#f7f7f7");
        assert_eq!(heat(1.0), "#d7301f");
        assert_eq!(heat(f64::NAN), "#f7f7f7");
        assert_eq!(heat(7.0), "#d7301f");
    }
}
