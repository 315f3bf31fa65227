//! The repository documents itself: every relative link in its Markdown resolves to a file in
//! the repository, and nothing points outside it (a clone has no sibling directories).

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

fn markdown_files(root: &Path) -> Vec<PathBuf> {
    let mut files = vec![root.join("README.md")];
    for e in std::fs::read_dir(root.join("docs")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            files.push(p);
        }
    }
    files
}

/// The targets of `[text](target)` links.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        if let Some(j) = rest.find(')') {
            out.push(rest[..j].to_string());
            rest = &rest[j..];
        }
    }
    out
}

#[test]
fn every_relative_link_resolves_inside_the_repository() {
    let root = root();
    let files = markdown_files(&root);
    assert!(files.len() >= 5, "README and the docs/ pages");
    let mut checked = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for link in links(&text) {
            if link.contains("://") || link.starts_with('#') || link.starts_with("mailto:") {
                continue;
            }
            let path = link.split('#').next().unwrap();
            let target = f.parent().unwrap().join(path);
            let target = target.canonicalize().unwrap_or_else(|_| panic!("{}: broken link {link}", f.display()));
            assert!(target.starts_with(&root), "{}: {link} points outside the repository", f.display());
            checked += 1;
        }
    }
    assert!(checked > 5, "links were found and checked ({checked})");
}

#[test]
fn nothing_points_at_the_specification_outside_the_repository() {
    let root = root();
    let mut files = markdown_files(&root);
    files.push(root.join("scenarios/thesis.toml"));
    files.push(root.join("clippy.toml"));
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        assert!(!text.contains("../shared"), "{} mentions ../shared", f.display());
    }
}
