//! A suite whose runs set their own working set (`size` per run): each
//! layout is its own file set, created, filled and reported, then reused.

use crate::common::{read_json, stderr, stdout, vb};
use volbench::error::exit;

const SUITE: &str = "name = \"sizes\"\ntable = \"patterns\"\nwarmup_run = false\n\
[defaults]\nsize = \"8m\"\nduration = \"1s\"\nwarmup = \"0s\"\n\
[[run]]\nname = \"four\"\nrw = \"randread\"\nfiles = 4\nsize = \"4m\"\n\
[[run]]\nname = \"one\"\nrw = \"randread\"\nfiles = 1\n";

fn len(p: &std::path::Path) -> u64 {
    std::fs::symlink_metadata(p).unwrap().len()
}

#[test]
fn two_runs_of_different_sizes_fill_two_sets_and_reuse_them() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("s.toml");
    std::fs::write(&file, SUITE).unwrap();
    let (t, out) = (d.path().join("t"), d.path().join("out"));
    let s = |p: &std::path::Path| p.to_str().unwrap().to_string();
    let args = |o: &std::path::Path| {
        vec![
            "suite".to_string(),
            "run".into(),
            s(&file),
            "--target".into(),
            s(&t),
            "--buffered".into(),
            "--engine".into(),
            "psync".into(),
            "--output".into(),
            s(o),
        ]
    };
    let plan =
        stdout(&vb(args(&out).into_iter().chain(["--dry-run".to_string()])).expect(exit::OK));
    assert!(
        plan.contains("files-4-size-4MiB/: 4 x 1MiB (a fill of 4MiB")
            && plan.contains("files-1/: 1 x 8MiB (a fill of 8MiB")
            && plan.contains("[set 4 x 1MiB]"),
        "{plan}"
    );
    assert!(!t.exists(), "a dry run touches nothing");

    let o = vb(args(&out)).expect(exit::OK);
    let four = t.join("files-4-size-4MiB");
    for i in 0..4 {
        assert_eq!(len(&four.join(format!("volbench.{i}.dat"))), 1 << 20);
    }
    assert!(!four.join("volbench.4.dat").exists());
    assert_eq!(len(&t.join("files-1").join("volbench.0.dat")), 8 << 20);
    let doc = read_json(&out.join("result.json"));
    let fills: Vec<(u64, u64, bool)> = doc["fill"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["files"].as_u64().unwrap(),
                f["bytes"].as_u64().unwrap(),
                f["skipped_reused"].as_bool().unwrap_or(false),
            )
        })
        .collect();
    assert_eq!(
        fills,
        [(4, 4 << 20, false), (1, 8 << 20, false)],
        "{}",
        stderr(&o)
    );
    let sizes: Vec<Option<u64>> = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["workload"]["size"].as_u64())
        .collect();
    assert_eq!(sizes, [Some(4 << 20), None]);

    // Again: both sets are found filled and reused, nothing rewritten.
    let again = d.path().join("out2");
    vb(args(&again)).expect(exit::OK);
    let doc = read_json(&again.join("result.json"));
    let reused: Vec<bool> = doc["fill"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["skipped_reused"].as_bool().unwrap_or(false))
        .collect();
    assert_eq!(reused, [true, true]);
}

#[test]
fn sets_that_cannot_all_fit_are_refused_before_the_first_fill() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("s.toml");
    // The small set comes first: without the check it would be filled
    // before the huge one found no room.
    std::fs::write(
        &file,
        "name = \"sizes\"\ntable = \"patterns\"\nwarmup_run = false\n\
         [defaults]\nsize = \"8m\"\nduration = \"1s\"\nwarmup = \"0s\"\n\
         [[run]]\nname = \"small\"\nfiles = 2\n\
         [[run]]\nname = \"huge\"\nfiles = 1\nsize = \"4P\"\n",
    )
    .unwrap();
    let t = d.path().join("t");
    let o = vb([
        "suite",
        "run",
        file.to_str().unwrap(),
        "--target",
        t.to_str().unwrap(),
        "--buffered",
        "--output",
        d.path().join("out").to_str().unwrap(),
    ])
    .expect(exit::TARGET);
    let e = stderr(&o);
    assert!(
        e.contains("the file sets (files-2: 2 x 4MiB, files-1-size-4PiB: 1 x 4PiB) need"),
        "{e}"
    );
    assert!(!t.join("files-2").exists(), "nothing filled");
}

#[test]
fn every_host_prepares_each_runs_own_set() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("s.toml");
    std::fs::write(&file, SUITE).unwrap();
    let out = d.path().join("out");
    // ssh to this machine: the agents run here, one target per host.
    let o = vb([
        "suite",
        "run",
        file.to_str().unwrap(),
        "--hosts",
        "a,b",
        "--ssh-command",
        r#"sh -c 'exec sh -c "$2"' fake"#,
        "--remote-volbench",
        env!("CARGO_BIN_EXE_volbench"),
        "--target",
        d.path().join("{host}").to_str().unwrap(),
        "--buffered",
        "--engine",
        "psync",
        "--output",
        out.to_str().unwrap(),
    ])
    .expect(exit::OK);
    for h in ["a", "b"] {
        let four = d.path().join(h).join("files-4-size-4MiB");
        assert_eq!(len(&four.join("volbench.3.dat")), 1 << 20, "{}", stderr(&o));
        assert_eq!(
            len(&d.path().join(h).join("files-1").join("volbench.0.dat")),
            8 << 20
        );
    }
    let doc = read_json(&out.join("result.json"));
    let mut fills: Vec<(String, u64)> = doc["fill"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["host"].as_str().unwrap().to_string(),
                f["bytes"].as_u64().unwrap(),
            )
        })
        .collect();
    fills.sort();
    assert_eq!(
        fills,
        [
            ("a".to_string(), 4 << 20),
            ("a".to_string(), 8 << 20),
            ("b".to_string(), 4 << 20),
            ("b".to_string(), 8 << 20)
        ]
    );
}
