//! The small-files suite (the Azure disk article) end to end, at a
//! twentieth of its size: the same bytes as many small files and as one large file, then
//! a direct multi-threaded benchmark, in one suite, side by side.

use crate::common::{read_json, run, stderr, stdout};
use volbench::error::exit;

#[test]
fn small_files_and_one_large_file_move_the_same_bytes_side_by_side() {
    let shown = run(&["suite", "show", "small-files"]);
    assert_eq!(shown.status.code(), Some(exit::OK));
    // A twentieth of the tree and of the bytes: 8 x 8 x 16 files of 3 KiB
    // = 3 MiB; blocks of 64 KiB so 16 benchmark streams each get a few.
    let text = stdout(&shown)
        .replace("files_per_dir = 320", "files_per_dir = 16")
        .replace("\"60m\"", "\"3m\"")
        .replace("bs = \"1m\"", "bs = \"64k\"");
    let tmp = tempfile::tempdir().unwrap();
    let suite = tmp.path().join("small.toml");
    std::fs::write(&suite, text).unwrap();
    let (target, out) = (tmp.path().join("t"), tmp.path().join("out"));
    let o = run(&[
        "suite",
        "run",
        suite.to_str().unwrap(),
        "--target",
        target.to_str().unwrap(),
        "--output",
        out.to_str().unwrap(),
        "--duration",
        "1s",
        "--warmup",
        "0s",
    ]);
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    let doc = read_json(&out.join("result.json"));
    let runs = doc["runs"].as_array().unwrap();
    let names: Vec<&str> = runs.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "small-create",
            "small-read",
            "small-delete",
            "large-write",
            "large-read",
            "benchmark-read"
        ]
    );
    let bytes = |i: usize, class: &str| runs[i]["totals"][class]["bytes"].as_u64().unwrap();
    let same = 1024 * 3072;
    assert_eq!(runs[0]["ops"][0]["totals"]["ops"], 1024);
    assert_eq!(bytes(0, "write"), same, "small files written");
    assert_eq!(bytes(1, "read"), same, "small files read");
    assert_eq!(bytes(3, "write"), same, "one large file written");
    assert_eq!(bytes(4, "read"), same, "one large file read");
    // The copy-like passes go through the page cache, the benchmark does not.
    assert_eq!(doc["spec"]["target"]["direct"], true);
    assert_eq!(runs[3]["workload"]["buffered"], true);
    assert_eq!(runs[4]["workload"]["buffered"], true);
    assert!(runs[5]["workload"].get("buffered").is_none());
    assert_eq!(runs[5]["workload"]["threads"], 4);
    assert!(bytes(5, "read") > 0);
    // The passes side by side, one row each.
    let table = stdout(&o);
    assert!(table.contains("The same bytes as many small files and as one large file"));
    let row = |pass: &str| {
        table
            .lines()
            .find(|l| {
                l.split('┆')
                    .next()
                    .is_some_and(|c| c.trim_matches(['│', ' ']) == pass)
            })
            .unwrap_or_else(|| panic!("no {pass} row in {table}"))
            .to_string()
    };
    assert!(row("small").contains("1,024") && row("small").contains("buffered"));
    assert!(row("large").contains("3MiB") && row("large").contains("buffered"));
    assert!(row("benchmark").contains("direct"));
    assert!(table.contains("large against small: write"), "{table}");
    // The small files are gone again: the next run starts from nothing.
    let left = walk(&target);
    assert_eq!(left, ["volbench.0.dat"], "only the large file stays");
}

/// Names of the regular files below `dir`, markers left out.
fn walk(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                stack.push(p);
            } else if !name.starts_with(".volbench") {
                out.push(name);
            }
        }
    }
    out
}
