//! A suite file that includes others: the included runs run where the
//! include stands, with their own file's defaults and file set, read
//! relative to the including file; a cycle or a missing file is one line
//! naming it, before any I/O.

use std::path::Path;

use crate::common::{read_json, stderr, stdout, vb};
use volbench::error::exit;

const MAIN: &str = "name = \"nightly\"\ntable = \"patterns\"\nwarmup_run = false\n\
[defaults]\nsize = \"8m\"\nduration = \"300ms\"\nwarmup = \"0s\"\n\
[[run]]\nname = \"own\"\nrw = \"randread\"\n\
[[include]]\nfile = \"team/extra.toml\"\n\
[[run]]\nname = \"after\"\nrw = \"read\"\n";

/// In `team/`, so `shared.toml` is found beside it, not beside the suite.
const EXTRA: &str = "name = \"extra\"\ntable = \"mix\"\n\
[defaults]\nthreads = 2\nsize = \"4m\"\n\
[[run]]\nname = \"extra-write\"\nrw = \"randwrite\"\n\
[[include]]\nfile = \"shared.toml\"\n";

const SHARED: &str = "name = \"shared\"\ntable = \"patterns\"\n\
[[run]]\nname = \"shared-read\"\nrw = \"randread\"\niodepth = 2\n";

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

fn suite_run(file: &str, target: &Path, more: &[&str]) -> crate::common::Vb {
    vb(["suite", "run", file, "--target", target.to_str().unwrap()])
        .args(["--buffered", "--engine", "psync"])
        .args(more)
}

#[test]
fn included_runs_run_in_place_with_their_own_defaults_and_set() {
    let d = tempfile::tempdir().unwrap();
    let main = write(d.path(), "main.toml", MAIN);
    write(d.path(), "team/extra.toml", EXTRA);
    write(d.path(), "team/shared.toml", SHARED);
    let (t, out) = (d.path().join("t"), d.path().join("out"));
    let o = suite_run(&main, &t, &["--output", out.to_str().unwrap()]).expect(exit::OK);
    let doc = read_json(&out.join("result.json"));
    let runs: Vec<(String, u64, u64, Option<u64>)> = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let w = &r["workload"];
            (
                r["name"].as_str().unwrap().to_string(),
                w["threads"].as_u64().unwrap(),
                w["iodepth"].as_u64().unwrap(),
                w["size"].as_u64(),
            )
        })
        .collect();
    // extra.toml's threads = 2 and size = "4m" hold for its runs and its
    // include's, not for the suite's own run after it.
    assert_eq!(
        runs,
        [
            ("own".into(), 1, 1, None),
            ("extra-write".into(), 2, 1, Some(4 << 20)),
            ("shared-read".into(), 2, 2, Some(4 << 20)),
            ("after".into(), 1, 1, None),
        ],
        "{}",
        stderr(&o)
    );
    // Two sets, each filled once: the suite's 8 MiB and extra.toml's 4 MiB.
    let len = |p: &Path| std::fs::symlink_metadata(p).unwrap().len();
    assert_eq!(len(&t.join("files-1").join("volbench.0.dat")), 8 << 20);
    assert_eq!(
        len(&t.join("files-1-size-4MiB").join("volbench.0.dat")),
        4 << 20
    );
    assert_eq!(
        doc["spec"]["suite"]["name"].as_str(),
        Some("nightly"),
        "the suite's own name"
    );
}

#[test]
fn a_built_in_suite_is_included_by_name() {
    let d = tempfile::tempdir().unwrap();
    let main = write(
        d.path(),
        "main.toml",
        "name = \"mine\"\ntable = \"patterns\"\n[[include]]\nsuite = \"six-patterns\"\n",
    );
    let plan = stdout(&suite_run(&main, &d.path().join("t"), &["--dry-run"]).expect(exit::OK));
    for run in ["warmup-run", "8k-random-read", "64k-seq-50-50"] {
        assert!(plan.contains(run), "{run}: {plan}");
    }
    let o = suite_run(&main, &d.path().join("t"), &["--dry-run"]).expect(exit::OK);
    assert!(
        stderr(&o).contains("the included six-patterns runs its scaled-down defaults"),
        "{}",
        stderr(&o)
    );
}

fn refused(o: &std::process::Output) -> String {
    assert_eq!(o.status.code(), Some(exit::BAD_INPUT), "{}", stderr(o));
    let e = stderr(o);
    assert_eq!(e.lines().count(), 1, "one line: {e}");
    e
}

#[test]
fn a_cycle_and_a_missing_file_are_one_line_naming_them_before_any_io() {
    let d = tempfile::tempdir().unwrap();
    let t = d.path().join("t");
    let a = write(
        d.path(),
        "a.toml",
        "name = \"a\"\ntable = \"patterns\"\n[[run]]\nname = \"a1\"\n[[include]]\nfile = \"sub/b.toml\"\n",
    );
    write(
        d.path(),
        "sub/b.toml",
        "name = \"b\"\ntable = \"patterns\"\n[[include]]\nfile = \"../a.toml\"\n",
    );
    let e = refused(&suite_run(&a, &t, &[]).output());
    let shown_a = Path::new(&a);
    let b = shown_a.parent().unwrap().join("sub/b.toml");
    assert!(
        e.contains(&format!(
            "{} line 3: include: an include cycle: {a} includes {} includes {}",
            b.display(),
            b.display(),
            shown_a.parent().unwrap().join("sub/../a.toml").display()
        )),
        "{e}"
    );
    let m = write(
        d.path(),
        "m.toml",
        "name = \"m\"\ntable = \"patterns\"\n[[run]]\nname = \"m1\"\n[[include]]\nfile = \"gone.toml\"\n",
    );
    let e = refused(&suite_run(&m, &t, &[]).output());
    let gone = d.path().join("gone.toml");
    assert!(
        e.contains(&format!(
            "{m} line 5: include: cannot read suite file {}: No such file",
            gone.display()
        )),
        "{e}"
    );
    assert!(!t.exists(), "nothing touched");
}
