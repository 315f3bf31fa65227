//! The league as files: the tidy CSVs, the heat map of regret (SVG), the Markdown page and the
//! report's section.

use std::fmt::Write;

use super::score::{LeagueCell, Standing, EPS};
use super::League;
use crate::svg::{esc, Plot};

type Error = Box<dyn std::error::Error + Send + Sync>;

/// A regret as a percentage for tables: `3.2`, `45`, `∞`, `—` (no usable best).
pub fn pct(r: f64) -> String {
    if r.is_nan() {
        "—".into()
    } else if r.is_infinite() {
        "∞".into()
    } else if r < 0.095 {
        format!("{:.1}", 100.0 * r)
    } else {
        format!("{:.0}", 100.0 * r)
    }
}

/// A figure with the digits its size needs.
fn fig(v: f64) -> String {
    if !v.is_finite() {
        return if v.is_nan() { "—".into() } else { "∞".into() };
    }
    let digits = if v.abs() >= 100.0 {
        1
    } else if v.abs() >= 1.0 {
        2
    } else {
        3
    };
    format!("{v:.digits$}")
}

/// The heat map's fill and text colour for a regret: green within 3 %, pale yellow within 10 %,
/// orange within 30 %, red within 100 %, dark red beyond (or collapsed), grey without a best.
fn shade(r: f64) -> (&'static str, &'static str) {
    match r {
        r if r.is_nan() => ("#eeeeee", "#555"),
        r if r <= 0.03 + EPS => ("#a6d96a", "#111"),
        r if r <= 0.10 => ("#ffffbf", "#111"),
        r if r <= 0.30 => ("#fdae61", "#111"),
        r if r <= 1.00 => ("#f46d43", "#111"),
        _ => ("#a50026", "#fff"),
    }
}

/// `cells.csv`: one row per algorithm and league cell.
pub fn cells_csv(cells: &[LeagueCell]) -> Result<Vec<u8>, Error> {
    #[derive(serde::Serialize)]
    struct Row<'a> {
        cell: &'a str,
        label: &'a str,
        figure: &'a str,
        algorithm: &'a str,
        reps: usize,
        value: f64,
        ci95: f64,
        best: &'a str,
        regret: f64,
        tied_with_best: bool,
        fct_p50_s: f64,
        fct_p90_s: f64,
        completed_per_s: f64,
        jain: f64,
        retx_per_exchange: f64,
    }
    let mut w = csv::Writer::from_writer(Vec::new());
    for c in cells {
        for e in &c.entries {
            w.serialize(Row {
                cell: &c.code,
                label: &c.label,
                figure: c.figure.name(),
                algorithm: &e.algorithm,
                reps: e.reps,
                value: e.value,
                ci95: e.ci95,
                best: &c.best,
                regret: e.regret,
                tied_with_best: e.tied,
                fct_p50_s: e.fct_p50_s,
                fct_p90_s: e.fct_p90_s,
                completed_per_s: e.completed_per_s,
                jain: e.jain,
                retx_per_exchange: e.retx_per_exchange,
            })?;
        }
    }
    Ok(w.into_inner().map_err(|e| e.to_string())?)
}

/// `table.csv`: the league table, best first.
pub fn table_csv(standings: &[Standing]) -> Result<Vec<u8>, Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for s in standings {
        w.serialize(s)?;
    }
    Ok(w.into_inner().map_err(|e| e.to_string())?)
}

/// The heat map: algorithms (league order) by cells, each square its regret.
pub fn heat_map(league: &League) -> String {
    let (cw, rh, label_w) = (34.0, 18.0, 118.0);
    let cols = league.cells.len() as f64;
    let rows = league.standings.len() as f64;
    let mut p = Plot::new(label_w + cw * cols + 12.0, 58.0 + rh * rows + 40.0);
    p.caption("Regret: how far each algorithm falls behind the best of the cell (%)");
    let top = 40.0;
    for (j, c) in league.cells.iter().enumerate() {
        let x = label_w + cw * j as f64 + cw / 2.0;
        p.text(x, top + 8.0, "middle", 11.0, &c.code);
    }
    for (i, s) in league.standings.iter().enumerate() {
        let y = top + 14.0 + rh * i as f64;
        p.text(label_w - 6.0, y + 13.0, "end", 11.0, &s.algorithm);
        for (j, c) in league.cells.iter().enumerate() {
            let x = label_w + cw * j as f64;
            let Some(e) = c.entries.iter().find(|e| e.algorithm == s.algorithm) else { continue };
            let (fill, ink) = shade(e.regret);
            let tip = format!(
                "{} in {} ({}): {} {} ± {}, regret {} %{}",
                s.algorithm,
                c.code,
                c.label,
                c.figure.name(),
                fig(e.value),
                fig(e.ci95),
                pct(e.regret),
                if e.tied && e.regret != 0.0 { ", tied with the best" } else { "" }
            );
            p.rect((x + 0.5, y + 0.5, cw - 1.0, rh - 1.0), fill, "none", &tip);
            let _ = write!(
                p.body,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="10" fill="{ink}"{}>{}</text>"#,
                x + cw / 2.0,
                y + 13.0,
                if e.regret == 0.0 { r#" font-weight="700""# } else { "" },
                esc(&pct(e.regret))
            );
        }
    }
    let y = top + 14.0 + rh * rows + 16.0;
    let mut x = label_w;
    for (r, name) in
        [(0.0, "≤ 3 %"), (0.05, "≤ 10 %"), (0.2, "≤ 30 %"), (0.5, "≤ 100 %"), (2.0, "more"), (f64::NAN, "no best")]
    {
        let (fill, _) = shade(r);
        p.rect((x, y, 12.0, 12.0), fill, "#999", name);
        p.text(x + 16.0, y + 10.0, "start", 11.0, name);
        x += 24.0 + 7.0 * name.chars().count() as f64;
    }
    p.finish("League: regret by algorithm and cell")
}

/// The cells' legend rows: code, what it is, its figure, the best and its value.
fn legend(cells: &[LeagueCell]) -> Vec<[String; 5]> {
    cells
        .iter()
        .map(|c| {
            let best = c.entries.iter().find(|e| e.algorithm == c.best);
            let tied = c.entries.iter().filter(|e| e.tied).count();
            [
                c.code.clone(),
                c.label.clone(),
                c.figure.name().to_string(),
                format!("{}{}", c.best, if tied > 1 { format!(" ({} tied)", tied) } else { String::new() }),
                best.map_or("—".into(), |b| format!("{} ± {}", fig(b.value), fig(b.ci95))),
            ]
        })
        .collect()
}

/// The table's header and rows as text.
fn table_rows(standings: &[Standing]) -> (Vec<&'static str>, Vec<Vec<String>>) {
    let head = vec![
        "rank",
        "algorithm",
        "worst regret (%)",
        "in",
        "mean regret (%)",
        "cells within 3 %",
        "within 5 %",
        "tied with best",
        "mean Jain",
        "retx/exchange",
    ];
    let rows = standings
        .iter()
        .enumerate()
        .map(|(i, s)| {
            vec![
                (i + 1).to_string(),
                s.algorithm.clone(),
                pct(s.worst_regret),
                s.worst_cell.clone(),
                pct(s.mean_regret),
                format!("{} of {}", s.within_3, s.cells),
                s.within_5.to_string(),
                s.tied.to_string(),
                fig(s.mean_jain),
                fig(s.mean_retx_per_exchange),
            ]
        })
        .collect();
    (head, rows)
}

/// The league as Markdown: the table, the cells, the heat map as a table (and `svg`, its picture).
pub fn markdown(league: &League, svg: &str) -> String {
    let mut md = String::new();
    let (head, rows) = table_rows(&league.standings);
    md += "| ";
    md += &head.join(" | ");
    md += " |\n|";
    md += &head.iter().map(|_| "---|").collect::<String>();
    md += "\n";
    for r in rows {
        let _ = writeln!(md, "| {} |", r.join(" | "));
    }
    md +=
        "\nThe cells (the figure each is ranked by; the best, and how many the replications cannot tell from it):\n\n";
    md += "| cell | network and workload | figure | best | its value ± 95 % CI |\n|---|---|---|---|---|\n";
    for r in legend(&league.cells) {
        let _ = writeln!(md, "| {} |", r.iter().map(|x| x.replace('|', "\\|")).collect::<Vec<_>>().join(" | "));
    }
    let _ = write!(md, "\nRegret (%) by algorithm and cell ({svg} draws it):\n\n| algorithm |");
    for c in &league.cells {
        let _ = write!(md, " {} |", c.code);
    }
    md += "\n|---|";
    md += &league.cells.iter().map(|_| "---:|").collect::<String>();
    md += "\n";
    for s in &league.standings {
        let _ = write!(md, "| {} |", s.algorithm);
        for c in &league.cells {
            let r = c.entries.iter().find(|e| e.algorithm == s.algorithm).map_or(f64::NAN, |e| e.regret);
            let _ = write!(md, " {} |", pct(r));
        }
        md += "\n";
    }
    md
}

/// The report's section: the table, the heat map, the cells.
pub fn section(league: &League) -> String {
    let mut html = String::from(
        "<h2 id=\"league\">League</h2><p class=\"meta\">Regret: how far an algorithm falls behind the best of a cell \
         (bottleneck: median FCT / best − 1; mesh: 1 − completed exchanges per second / best), each figure the mean \
         over the cell's replications. Worst and mean over the cells; \"tied\": 95 % confidence intervals overlap \
         the best's. Files: league/table.csv, league/cells.csv.</p>",
    );
    let (head, rows) = table_rows(&league.standings);
    html += "<div class=\"scroll\"><table><tr>";
    for (i, h) in head.iter().enumerate() {
        let _ = write!(html, "<th{}>{}</th>", if i == 1 || i == 3 { " class=\"l\"" } else { "" }, esc(h));
    }
    html += "</tr>";
    for r in rows {
        html += "<tr>";
        for (i, x) in r.iter().enumerate() {
            let _ = write!(html, "<td{}>{}</td>", if i == 1 || i == 3 { " class=\"l\"" } else { "" }, esc(x));
        }
        html += "</tr>";
    }
    html += "</table></div><div class=\"scroll\">";
    html += &heat_map(league);
    html += "</div><table><tr><th class=\"l\">cell</th><th class=\"l\">network and workload</th><th class=\"l\">figure</th><th class=\"l\">best</th><th>its value ± 95 % CI</th></tr>";
    for r in legend(&league.cells) {
        let _ = write!(
            html,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td></tr>",
            esc(&r[0]),
            esc(&r[1]),
            esc(&r[2]),
            esc(&r[3]),
            esc(&r[4])
        );
    }
    html += "</table>";
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_and_shades() {
        assert_eq!(pct(0.0), "0.0");
        assert_eq!(pct(0.032), "3.2");
        assert_eq!(pct(0.456), "46");
        assert_eq!((pct(f64::INFINITY), pct(f64::NAN)), ("∞".to_string(), "—".to_string()));
        assert_eq!(shade(0.03).0, shade(0.0).0);
        assert_ne!(shade(0.031).0, shade(0.03).0);
        assert_eq!(shade(f64::INFINITY).0, shade(5.0).0);
    }
}
