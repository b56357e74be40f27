//! `volbench size` and `volbench service` through the real binary, and
//! --expect refused before any I/O when it cannot be worked out.

use crate::common::*;
use volbench::error::exit;

#[test]
fn size_answers_both_directions_with_the_papers_figure() {
    let o = run(&["size", "--service", "anf-premium", "--need", "4500MiB/s"]);
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("needs a quota of 70.31 TiB"),
        "{}",
        stdout(&o)
    );
    let o = run(&["size", "--service", "anf-premium", "--quota", "4TiB"]);
    assert!(stdout(&o).contains("= 256 MiB/s"), "{}", stdout(&o));
    let o = run(&["size", "--service", "aws-gp3", "--need", "20000iops"]);
    assert_eq!(o.status.code(), Some(exit::BAD_INPUT));
    assert!(stderr(&o).contains("at most 16,000 IOPS"), "{}", stderr(&o));
    let o = run(&["service", "show", "azure-standard-account"]);
    assert!(stdout(&o).contains("seed 004"), "{}", stdout(&o));
    let o = run(&["service", "list"]);
    assert!(stdout(&o).contains("azure-p30"), "{}", stdout(&o));
}

#[test]
fn a_bad_expectation_is_refused_before_any_io() {
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("set");
    for bad in ["nosuch:1TiB", "iops=-5", "anf-premium"] {
        let o = run(&["run", "--target", target.to_str().unwrap(), "--expect", bad]);
        assert_eq!(
            o.status.code(),
            Some(exit::BAD_INPUT),
            "{bad}: {}",
            stderr(&o)
        );
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    }
    assert!(!target.exists(), "no file set may be made for bad input");
}
