//! The repository documents itself: every relative link in its Markdown resolves to a file in
//! the repository, and no relative path in its text leads outside it (a clone has no sibling
//! directories to point at).

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

/// Text files a user reads or the build uses: the Markdown, the scenarios, the lint settings,
/// and every Rust source below `crates/`.
fn text_files(root: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() && !p.ends_with("target") {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs" || x == "toml" || x == "md") {
                out.push(p);
            }
        }
    }
    let mut files = markdown_files(root);
    files.push(root.join("clippy.toml"));
    walk(&root.join("scenarios"), &mut files);
    walk(&root.join("crates"), &mut files);
    files
}

/// Whether the relative path `rel`, taken from directory `dir` (inside `root`), stays inside
/// `root` (resolved lexically: the target need not exist).
fn stays_inside(root: &Path, dir: &Path, rel: &str) -> bool {
    let mut depth = dir.strip_prefix(root).unwrap().components().count();
    for part in rel.split('/') {
        match part {
            ".." if depth == 0 => return false,
            ".." => depth -= 1,
            "" | "." => {}
            _ => depth += 1,
        }
    }
    true
}

#[test]
fn no_relative_path_leads_outside_the_repository() {
    let root = root();
    let files = text_files(&root);
    let mut checked = 0;
    // this file's own examples (below) are data, not references
    for f in files.iter().filter(|f| !f.ends_with(file!().rsplit_once("coapcc/").unwrap().1)) {
        let text = std::fs::read_to_string(f).unwrap();
        let dir = f.parent().unwrap();
        for (i, _) in text.match_indices("../") {
            // the whole path: back to the start of its token, on to its end
            let start = text[..i].rfind(|c: char| !(c.is_alphanumeric() || "._-/".contains(c))).map_or(0, |j| j + 1);
            let end =
                text[i..].find(|c: char| !(c.is_alphanumeric() || "._-/".contains(c))).map_or(text.len(), |j| i + j);
            if start != i {
                continue; // "x/../y" is checked from its own start
            }
            let path = &text[start..end];
            assert!(stays_inside(&root, dir, path), "{}: `{path}` leads outside the repository", f.display());
            checked += 1;
        }
    }
    assert!(checked > 0, "relative paths were found and checked");
}

#[test]
fn lexical_resolution() {
    let root = Path::new("/r");
    assert!(stays_inside(root, Path::new("/r/crates/a/src"), "../../../scenarios/x.toml"));
    assert!(!stays_inside(root, Path::new("/r/crates/a/src"), "../../../../elsewhere/x.md"));
    assert!(!stays_inside(root, Path::new("/r"), "../x"));
}
