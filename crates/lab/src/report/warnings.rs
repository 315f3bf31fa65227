//! What a report says is wrong with its cells: the banner over the figures (replications cut
//! short, figures that describe almost nothing) and the same notes inside each figure's section.

use std::collections::BTreeSet;
use std::fmt::Write;

use super::cells::{buffer_label, CellData};
use crate::svg::esc;

/// What the cells' results say is wrong with them (truncated replications, figures that
/// describe almost nothing), above the figures; empty when nothing is.
pub(crate) fn banner(cells: &[CellData]) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

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
    fn a_section_of_a_dead_network_says_so_inside_it() {
        let cell = |algo: &str, buffer: u64, summary: serde_json::Value| CellData {
            id: format!("{algo}-{buffer}"),
            algo: algo.into(),
            mesh: false,
            world: None,
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
}
