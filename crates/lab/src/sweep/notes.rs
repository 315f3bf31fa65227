//! What finished cells' results say is wrong with them: replications cut short, figures that
//! describe almost nothing.

use std::path::Path;

use super::plan::Plan;

/// What is wrong with a set of finished cells' results, a sentence each naming its cell.
#[derive(Debug, Default)]
pub struct Notes {
    /// Cells with replications cut at `max_time_s`.
    pub truncated: Vec<String>,
    /// Their summaries' warnings (figures that describe almost nothing).
    pub warnings: Vec<String>,
}

impl Notes {
    /// Adds what the results of one cell (its `cells/ID.json`) say of themselves.
    pub(crate) fn add(&mut self, v: &serde_json::Value) {
        let params: Vec<String> = v["cell"]["params"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, x)| format!("{k}={}", x.as_str().map_or_else(|| x.to_string(), str::to_string)))
            .collect();
        let label = format!("cell {} ({})", v["cell"]["id"].as_str().unwrap_or("?"), params.join(", "));
        let cut = v["truncated_reps"].as_u64().unwrap_or(0);
        if cut > 0 {
            // the bottleneck's safety net, or the length of a mesh run whose clients take turns
            let s = &v["scenario"];
            let (key, limit) = match s.get("max_time_s") {
                Some(t) => ("max_time_s", t),
                None => ("duration_s", &s["duration_s"]),
            };
            self.truncated.push(crate::sim::runner::cut_short(&label, cut, &s["reps"], key, limit));
        }
        for w in v["warnings"].as_array().into_iter().flatten().filter_map(|w| w.as_str()) {
            self.warnings.push(format!("{label}: {w}"));
        }
    }

    /// The notes of `plan`'s cells finished in `dir`.
    pub fn of(plan: &Plan, dir: &Path) -> Notes {
        let mut notes = Notes::default();
        for c in &plan.cells {
            let path = dir.join("cells").join(format!("{}.json", c.id));
            if let Some(v) = std::fs::read_to_string(path).ok().and_then(|t| serde_json::from_str(&t).ok()) {
                notes.add(&v);
            }
        }
        notes
    }

    /// Prints the warnings on stderr, prefixed by `who`; an [`crate::Incomplete`] error (exit 3)
    /// if a cell was truncated.
    pub fn tell(&self, who: &str) -> Result<(), Box<dyn std::error::Error>> {
        for w in &self.warnings {
            eprintln!("{who}: WARNING: {w}");
        }
        match self.truncated.len() {
            0 => Ok(()),
            n => Err(Box::new(crate::Incomplete(format!(
                "{n} cell(s) finished incomplete (their unfinished clients have no FCT):\n  {}",
                self.truncated.join("\n  ")
            )))),
        }
    }
}
