//! What the tests of metadata trees on a server (`nfs_meta`, `smb_meta`)
//! read back: the tree's files as the server's directory holds them, and
//! each run's operations and protocol calls from result.json.

use std::path::Path;

use super::read_json;

/// The tree marker's name, left out of `tree_files`.
pub const MARKER: &str = ".volbench-tree.json";

/// Depth 2, width 3, 10 files a leaf: 9 leaves, 90 files of 4 KiB.
pub const SHAPE: [&str; 10] = [
    "--depth",
    "2",
    "--width",
    "3",
    "--files-per-dir",
    "10",
    "--file-size",
    "4k",
    "--threads",
    "2",
];
pub const FILES: u64 = 90;
pub const LEAVES: u64 = 9;

/// Every regular file below `dir` on the server's side (relative path,
/// size), the tree's marker left out.
pub fn tree_files(dir: &Path) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir") {
            let p = e.expect("entry").path();
            let m = std::fs::symlink_metadata(&p).expect("lstat");
            if m.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n != MARKER) {
                let rel = p.strip_prefix(dir).unwrap().display().to_string();
                out.push((rel, m.len()));
            }
        }
    }
    out.sort();
    out
}

/// A run of a result: its name, its operations (op, ops, bytes) and the
/// client's figures.
pub struct Run {
    pub name: String,
    pub ops: Vec<(String, u64, u64)>,
    pub protocol: serde_json::Value,
}

impl Run {
    /// Calls (requests) of one type the client sent in the measured phase.
    pub fn calls(&self, op: &str) -> u64 {
        self.protocol["ops"]
            .as_array()
            .and_then(|o| o.iter().find(|x| x["op"] == op))
            .map_or(0, |x| x["calls"].as_u64().unwrap_or(0))
    }
}

pub fn runs_of(out: &Path) -> Vec<Run> {
    let doc = read_json(&out.join("result.json"));
    doc["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|r| Run {
            name: r["name"].as_str().unwrap_or("").to_string(),
            ops: r["ops"]
                .as_array()
                .expect("a metadata run has ops")
                .iter()
                .map(|o| {
                    (
                        o["op"].as_str().unwrap().to_string(),
                        o["totals"]["ops"].as_u64().unwrap(),
                        o["totals"]["bytes"].as_u64().unwrap(),
                    )
                })
                .collect(),
            protocol: r["protocol"].clone(),
        })
        .collect()
}

pub fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}
