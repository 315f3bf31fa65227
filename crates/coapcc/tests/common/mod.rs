//! Helpers of the integration tests that read results directories.

use std::path::{Path, PathBuf};

/// A fresh temporary directory for one test of this process.
pub fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("coapcc-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Every cell's JSON of a results directory by file name, without the wall-clock fields.
pub fn cells(dir: &Path) -> Vec<(String, serde_json::Value)> {
    let mut v: Vec<(String, serde_json::Value)> = std::fs::read_dir(dir.join("cells"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| {
            let mut j: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
            for k in ["wall_s", "events_per_s"] {
                j.as_object_mut().unwrap().remove(k);
            }
            (p.file_name().unwrap().to_string_lossy().into_owned(), j)
        })
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}
