//! `--keep-complete` (vdbench's format=restart): a create phase over a tree
//! left part-made keeps each complete file of its own and makes only the
//! missing and short ones; the phase counts what it made and result.json
//! `ops[].kept` what it kept.

use std::path::Path;
use std::time::{Duration, SystemTime};

use crate::common::*;
use volbench::error::exit;

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// (creates made, files kept) of the run's create phase.
fn create(target: &Path, out: &Path, keep: bool) -> (u64, u64) {
    let mut args = vec![
        "run",
        "--target",
        s(target),
        "--output",
        s(out),
        "--ops",
        "create",
        "--depth",
        "1",
        "--width",
        "2",
        "--files-per-dir",
        "5",
        "--file-size",
        "4k",
        "--threads",
        "1",
    ];
    if keep {
        args.push("--keep-complete");
    }
    let o = vb(&args).expect(exit::OK);
    let doc = read_json(&out.join("result.json"));
    let op = &doc["runs"][0]["ops"][0];
    assert_eq!(op["op"], "create", "{}", stderr(&o));
    (
        op["totals"]["ops"].as_u64().unwrap(),
        op["kept"].as_u64().unwrap_or(0),
    )
}

#[test]
fn keep_complete_completes_a_part_made_tree_and_keeps_the_rest() {
    let d = tempfile::tempdir().unwrap();
    let t = d.path().join("tree");
    assert_eq!(create(&t, &d.path().join("o1"), false), (10, 0));
    // A format stopped part-way: three files missing, one short.
    for f in ["d0/f0", "d0/f2", "d1/f4"] {
        std::fs::remove_file(t.join(f)).unwrap();
    }
    std::fs::OpenOptions::new()
        .write(true)
        .open(t.join("d1/f1"))
        .unwrap()
        .set_len(100)
        .unwrap();
    // A file made again gets a new modification time: the kept one keeps
    // an old one (its proof of ownership reads its birth, not this).
    let old = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
    let mtime = |f: &str| std::fs::metadata(t.join(f)).unwrap().modified().unwrap();
    for f in ["d0/f1", "d1/f1"] {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(t.join(f))
            .unwrap();
        file.set_modified(old).unwrap();
    }
    assert_eq!(create(&t, &d.path().join("o2"), true), (4, 6));
    for dir in ["d0", "d1"] {
        for f in 0..5 {
            let m = std::fs::metadata(t.join(dir).join(format!("f{f}"))).unwrap();
            assert_eq!(m.len(), 4096, "{dir}/f{f}");
        }
    }
    assert_eq!(
        mtime("d0/f1"),
        old,
        "a complete file is kept, not made again"
    );
    assert!(mtime("d1/f1") > old, "a short file is made again");
    // Complete: nothing to make. Without the flag every file is made again.
    assert_eq!(create(&t, &d.path().join("o3"), true), (0, 10));
    assert_eq!(mtime("d0/f1"), old);
    assert_eq!(create(&t, &d.path().join("o4"), false), (10, 0));
    assert!(mtime("d0/f1") > old);
    // Only a create phase has files to keep.
    let o = vb([
        "run",
        "--target",
        s(&t),
        "--ops",
        "stat",
        "--depth",
        "1",
        "--width",
        "2",
        "--files-per-dir",
        "5",
        "--keep-complete",
        "--dry-run",
    ])
    .expect(exit::BAD_INPUT);
    assert!(
        stderr(&o).contains("--keep-complete goes with a create phase"),
        "{}",
        stderr(&o)
    );
}
