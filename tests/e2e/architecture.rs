//! The layering in ARCHITECTURE.md, checked: each top-level module of `src/`
//! may use only the modules below it in `LAYERS`, so the flow stays one
//! direction and no import cycle can come back.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// Top to bottom. A module may use itself and anything after it.
const LAYERS: &[&str] = &[
    "cmd", "remote", "report", "output", "executor", "plan", "input", "io", "result", "spec",
    "units", "stats", "error",
];

/// No file in src/ may grow past this many lines: past it, a file does
/// several jobs and should be split by job.
const MAX_LINES: usize = 700;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The top-level module a file belongs to (`src/io/engine/uring.rs` -> io).
fn owner(file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src()).ok()?;
    let first = rel.components().next()?.as_os_str().to_string_lossy();
    Some(first.trim_end_matches(".rs").to_string())
}

/// Every top-level module a file names as `crate::X`, including inside
/// grouped imports (`use crate::{a, b::c}`).
fn uses(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let end = group.find('}').unwrap_or(group.len());
                for item in group[..end].split(',') {
                    let name: String = item
                        .trim()
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if !name.is_empty() {
                        found.insert(name);
                    }
                }
            } else {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    found.insert(name);
                }
            }
        }
    }
    found
}

fn rank(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| *l == module)
}

#[test]
fn modules_use_only_the_layers_below_them() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut wrong = Vec::new();
    for f in &files {
        let Some(me) = owner(f) else { continue };
        if me == "lib" || me == "main" {
            continue;
        }
        let Some(my_rank) = rank(&me) else {
            wrong.push(format!(
                "{}: top-level module '{me}' has no place in LAYERS (tests/architecture.rs and ARCHITECTURE.md)",
                f.display()
            ));
            continue;
        };
        let text = fs::read_to_string(f).unwrap_or_default();
        for used in uses(&text) {
            match rank(&used) {
                Some(r) if r < my_rank => wrong.push(format!(
                    "{}: '{me}' uses '{used}', which is above it",
                    f.display()
                )),
                Some(_) => {}
                None => wrong.push(format!(
                    "{}: uses crate::{used}, which has no place in LAYERS",
                    f.display()
                )),
            }
        }
    }
    assert!(wrong.is_empty(), "layering broken:\n{}", wrong.join("\n"));
}

#[test]
fn the_import_scanner_sees_grouped_and_nested_paths() {
    let found = uses(
        "use crate::{error::Result, spec};\nlet x = crate::io::target::inspect(p); // crate::cmd",
    );
    let want: BTreeSet<String> = ["error", "spec", "io"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(found, want);
}

#[test]
fn every_source_file_stays_small_enough_to_do_one_job() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let n = fs::read_to_string(f).ok()?.lines().count();
            (n > MAX_LINES).then(|| format!("{}: {n} lines", f.display()))
        })
        .collect();
    assert!(
        long.is_empty(),
        "files over {MAX_LINES} lines (split them by job):\n{}",
        long.join("\n")
    );
}
