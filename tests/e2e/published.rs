//! End-to-end: `suite run --published` (each built-in suite's paper values,
//! shown by --dry-run, refused for a suite without them), `--fill-bs` (the
//! fill's writes are that size, seen with strace) and the fill as a result
//! (result.json `fill`, reused on the second run, old results still load).

use std::path::Path;

use volbench::error::exit;

use crate::common::*;

/// The resolved spec `--dry-run` prints after the plan.
fn dry_run(suite: &str, extra: &[&str]) -> serde_json::Value {
    let d = tempfile::tempdir().unwrap();
    let t = d.path().join("t");
    let mut args = vec![
        "suite",
        "run",
        suite,
        "--published",
        "--dry-run",
        "--target",
        t.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = vb(args).expect(exit::OK);
    assert!(!t.exists(), "a dry run touches nothing");
    let out = stdout(&o);
    let (_, spec) = out.split_once("resolved spec:\n").expect("the spec");
    serde_json::from_str(spec).unwrap()
}

fn runs(spec: &serde_json::Value) -> Vec<(String, u64, f64, f64)> {
    spec["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_string(),
                r["threads"].as_u64().unwrap(),
                r["warmup_s"].as_f64().unwrap(),
                r["duration_s"].as_f64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn six_patterns_published_has_the_papers_threads_times_size_and_fill() {
    let spec = dry_run("six-patterns", &[]);
    let got: Vec<(String, u64)> = runs(&spec)
        .into_iter()
        .map(|(n, t, w, d)| {
            assert_eq!((w, d), (60.0, 600.0), "{n}: 60 s warm-up + 600 s");
            (n, t)
        })
        .collect();
    let want: Vec<(String, u64)> = [
        ("8k-random-read", 25),
        ("8k-random-write", 20),
        ("8k-random-50-50", 25),
        ("64k-seq-read", 20),
        ("64k-seq-write-26t", 26),
        ("64k-seq-write-32t", 32),
        ("64k-seq-write-40t", 40),
        ("64k-seq-50-50-6t", 6),
        ("64k-seq-50-50-7t", 7),
    ]
    .iter()
    .map(|(n, t)| (n.to_string(), *t))
    .collect();
    assert_eq!(got, want, "no discarded warm-up run: vdbench has none");
    assert_eq!(spec["target"]["size"].as_u64(), Some(693 << 30));
    assert_eq!(spec["target"]["fill"]["bs"].as_u64(), Some(64 << 10));
    assert!(
        spec["runs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["iodepth"] == 1)
    );
}

#[test]
fn disk_check_and_files_threads_published_are_the_diskspd_lines() {
    let spec = dry_run("disk-check", &[]);
    let r = spec["runs"].as_array().unwrap();
    let bs: Vec<u64> = r
        .iter()
        .map(|r| r["bs"][0]["bytes"].as_u64().unwrap())
        .collect();
    assert_eq!(bs, [4096, 8192, 65536]);
    for r in r {
        assert_eq!(
            (r["threads"].as_u64(), r["iodepth"].as_u64()),
            (Some(16), Some(4))
        );
        assert_eq!(
            (r["read_pct"].as_u64(), r["rw"].as_str()),
            (Some(80), Some("randrw"))
        );
        assert_eq!(r["duration_s"].as_f64(), Some(300.0));
    }
    assert_eq!(spec["target"]["size"].as_u64(), Some(50 << 30));

    let spec = dry_run("files-threads", &[]);
    assert_eq!(spec["target"]["write_sync"].as_str(), Some("dsync"));
    assert_eq!(spec["target"]["size"].as_u64(), Some(20 << 30));
    let got: Vec<(u64, u64, u64)> = spec["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            assert_eq!(r["rw"].as_str(), Some("randwrite"));
            assert_eq!(
                (r["warmup_s"].as_f64(), r["duration_s"].as_f64()),
                (Some(300.0), Some(60.0))
            );
            assert_eq!(r["shape"]["cooldown_s"].as_f64(), Some(5.0));
            (
                r["files"].as_u64().unwrap(),
                r["threads"].as_u64().unwrap(),
                r["iodepth"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, [(10, 80, 8), (1, 8, 8)], "8 threads x 8 per file");
}

#[test]
fn mix_suites_published_take_the_stated_working_set() {
    for s in ["mix-table", "mix-sweep"] {
        let spec = dry_run(s, &[]);
        assert_eq!(spec["target"]["size"].as_u64(), Some(1 << 40), "{s}");
    }
    let spec = dry_run("mix-table", &[]);
    assert!(
        spec["runs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["threads"] == 8)
    );
}

#[test]
fn a_suite_without_a_published_variant_refuses_it_in_one_line() {
    let d = tempfile::tempdir().unwrap();
    let t = d.path().join("t");
    for s in [
        "latency-curve",
        "thread-sweep",
        "metadata",
        "eda-mix",
        "small-files",
    ] {
        let o = vb([
            "suite",
            "run",
            s,
            "--published",
            "--target",
            t.to_str().unwrap(),
        ])
        .expect(exit::BAD_INPUT);
        let e = stderr(&o);
        assert_eq!(e.trim().lines().count(), 1, "{e}");
        assert!(e.contains("has no published variant"), "{e}");
        vb(["suite", "show", s, "--published"]).expect(exit::BAD_INPUT);
    }
    assert!(!t.exists());
}

#[test]
fn flags_replace_the_published_defaults_but_not_a_runs_own_threads() {
    let spec = dry_run(
        "six-patterns",
        &[
            "--duration",
            "1s",
            "--warmup",
            "0",
            "--size",
            "64m",
            "--threads",
            "2",
        ],
    );
    for (n, t, w, d) in runs(&spec) {
        assert_eq!((w, d), (0.0, 1.0), "{n}");
        assert!(t >= 6, "{n}: the paper's thread count stays, got {t}");
    }
    assert_eq!(spec["target"]["size"].as_u64(), Some(64 << 20));
    // disk-check's threads are a published default: the flag replaces it.
    let spec = dry_run("disk-check", &["--threads", "2", "--fill-bs", "128k"]);
    assert!(
        spec["runs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["threads"] == 2)
    );
    assert_eq!(spec["target"]["fill"]["bs"].as_u64(), Some(128 << 10));
}

#[test]
fn suite_show_published_prints_the_papers_table() {
    let o = vb(["suite", "show", "six-patterns", "--published"]).expect(exit::OK);
    let out = stdout(&o);
    assert!(out.starts_with("[published]"), "{out}");
    assert!(out.contains("threads = [ 26, 32, 40 ]") && out.contains("duration = \"600s\""));
    let whole = stdout(&vb(["suite", "show", "six-patterns"]).expect(exit::OK));
    // The table as written, then the runs it expands into, as comments.
    let (table, expanded) = out.split_once("\n# As published").unwrap();
    assert!(whole.contains("threads = 4") && whole.ends_with(table));
    assert!(
        expanded.contains("#   8k-random-read: randread 8KiB, 25 threads x iodepth 1, 1 file x 693GiB (fill 693GiB)")
            && expanded.contains("#   8k-random-write: randwrite 8KiB, 20 threads x iodepth 1, 1 file x 693GiB\n"),
        "one fill, before the first run: {expanded}"
    );
}

#[test]
fn suite_show_published_files_threads_gives_the_single_file_its_128g() {
    let o = vb(["suite", "show", "files-threads", "--published"]).expect(exit::OK);
    let out = stdout(&o);
    assert!(
        out.contains(
            "1-file: randwrite 4KiB, 8 threads x iodepth 8, 1 file x 128GiB (fill 128GiB)"
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "10-files: randwrite 4KiB, 80 threads x iodepth 8, 10 files x 2GiB (fill 20GiB)"
        ),
        "{out}"
    );
    assert!(!out.contains("20 GiB here"), "{out}");
}

/// The sizes of the pwrite64 calls strace saw (`-ff`: one file per
/// thread, `trace.PID`, so no call is split over two lines).
fn pwrite_sizes(dir: &Path) -> Vec<u64> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("trace."))
        .flat_map(|e| {
            std::fs::read_to_string(e.path())
                .unwrap()
                .lines()
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .filter(|l| l.contains("pwrite64("))
        .filter_map(|l| {
            // `pwrite64(5, "..."..., 65536, 0) = 65536`
            let args = l.rsplit_once(") = ")?.0;
            let mut it = args.rsplit(", ");
            let _offset = it.next()?;
            it.next()?.parse().ok()
        })
        .collect()
}

#[test]
fn fill_bs_is_the_size_of_the_fills_writes_and_the_fill_is_a_result() {
    if std::process::Command::new("strace")
        .arg("-V")
        .output()
        .is_err()
    {
        return skip("fill_bs_is_the_size", "strace is not installed");
    }
    let d = tempfile::tempdir().unwrap();
    let t = d.path().join("t");
    let out = d.path().join("out");
    let trace = d.path().join("trace");
    let bin = env!("CARGO_BIN_EXE_volbench");
    let o = std::process::Command::new("strace")
        .args(["-ff", "-qq", "-e", "trace=pwrite64", "-o"])
        .arg(&trace)
        .arg(bin)
        .args(["run", "--rw", "read", "--engine", "psync", "--buffered"])
        .args(["--size", "4m", "--files", "2", "--fill-bs", "64k"])
        .args(["--duration", "50ms", "--warmup", "0", "--target"])
        .arg(&t)
        .arg("--output")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(exit::OK),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let sizes = pwrite_sizes(d.path());
    // A read-only run: every pwrite is the fill's, 2 x 2 MiB in 64 KiB.
    assert_eq!(sizes.len(), 64, "{sizes:?}");
    assert!(sizes.iter().all(|&s| s == 65536), "{sizes:?}");
    let doc = read_json(&out.join("result.json"));
    let f = &doc["fill"][0];
    assert_eq!(f["bs"].as_u64(), Some(65536));
    assert_eq!(
        (f["files"].as_u64(), f["bytes"].as_u64()),
        (Some(2), Some(4 << 20))
    );
    assert_eq!(f["skipped_reused"].as_bool(), Some(false));
    assert!(f["seconds"].as_f64().unwrap() > 0.0 && f["mib_s"].as_f64().unwrap() > 0.0);
    assert!(
        stderr_of(&o).contains("fill: wrote 4MiB"),
        "{}",
        stderr_of(&o)
    );
    // The same set again: reused, nothing written, and said so.
    let again = d.path().join("again");
    let o = vb([
        "run",
        "--rw",
        "read",
        "--buffered",
        "--size",
        "4m",
        "--files",
        "2",
        "--duration",
        "50ms",
        "--warmup",
        "0",
        "--target",
        t.to_str().unwrap(),
        "--output",
        again.to_str().unwrap(),
    ])
    .expect(exit::OK);
    assert!(
        stderr(&o).contains("reusing the filled file set"),
        "{}",
        stderr(&o)
    );
    let doc = read_json(&again.join("result.json"));
    assert_eq!(doc["fill"][0]["skipped_reused"].as_bool(), Some(true));
    // The report lists the fill with the environment; a result written
    // before the fill was recorded still loads.
    let md = stdout(&vb(["report", again.to_str().unwrap(), "--format", "md"]).expect(exit::OK));
    assert!(md.contains("reusing the filled file set"), "{md}");
    let mut old = doc.clone();
    old.as_object_mut().unwrap().remove("fill");
    std::fs::write(again.join("result.json"), old.to_string()).unwrap();
    vb(["report", again.to_str().unwrap(), "--format", "csv"]).expect(exit::OK);
}

fn stderr_of(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn a_fill_bs_outside_its_bound_or_off_sector_is_refused_before_any_io() {
    let d = tempfile::tempdir().unwrap();
    let t = d.path().join("t");
    for (v, needle) in [
        ("1000", "--fill-bs 1000 is not a multiple of 512"),
        ("128m", "64MiB"),
        ("256", "512B"),
    ] {
        let o =
            vb(["run", "--fill-bs", v, "--target", t.to_str().unwrap()]).expect(exit::BAD_INPUT);
        assert!(stderr(&o).contains(needle), "{v}: {}", stderr(&o));
    }
    assert!(!t.exists(), "nothing created");
}

/// `--fill-threads N`: the fill's files are written by N threads, one file
/// each at a time (strace sees the fill's pwrites come from N threads), and
/// result.json's `fill` says how many; out of its bound it is one line
/// before any I/O.
#[test]
fn fill_threads_is_how_many_threads_write_the_fill() {
    if std::process::Command::new("strace")
        .arg("-V")
        .output()
        .is_err()
    {
        return skip("fill_threads", "strace is not installed");
    }
    for (n, want) in [("1", 1usize), ("3", 3)] {
        let d = tempfile::tempdir().unwrap();
        let trace = d.path().join("trace");
        let o = std::process::Command::new("strace")
            .args(["-ff", "-qq", "-e", "trace=pwrite64", "-o"])
            .arg(&trace)
            .arg(env!("CARGO_BIN_EXE_volbench"))
            .args(["run", "--rw", "read", "--engine", "psync", "--buffered"])
            .args(["--size", "8m", "--files", "4", "--fill-bs", "64k"])
            .args(["--fill-threads", n, "--duration", "50ms", "--warmup", "0"])
            .arg("--target")
            .arg(d.path().join("t"))
            .arg("--output")
            .arg(d.path().join("out"))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr_of(&o));
        // One trace file per thread; those with pwrites are the fill's.
        let writers = std::fs::read_dir(d.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with("trace."))
            .filter(|e| std::fs::read_to_string(e.path()).is_ok_and(|t| t.contains("pwrite64(")))
            .count();
        // At most N threads write; with more files than threads a thread
        // may find every file taken before it starts (a busy machine), so
        // only one thread is exact.
        if want == 1 {
            assert_eq!(writers, 1, "--fill-threads 1");
        } else {
            assert!(
                (1..=want).contains(&writers),
                "--fill-threads {n}: {writers} wrote"
            );
        }
        let doc = read_json(&d.path().join("out/result.json"));
        assert_eq!(doc["fill"][0]["threads"].as_u64(), Some(want as u64));
    }
    let d = tempfile::tempdir().unwrap();
    let t = d.path().join("t");
    for v in ["0", "65", "two"] {
        let o = vb(["run", "--fill-threads", v, "--target", t.to_str().unwrap()])
            .expect(exit::BAD_INPUT);
        assert!(stderr(&o).contains("--fill-threads"), "{v}: {}", stderr(&o));
    }
    assert!(!t.exists(), "nothing created");
}
