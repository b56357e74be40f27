//! End-to-end metadata and small-file runs (`run --ops`, `clean`) through
//! the real binary, on tmpfs when the machine has one (fast, and what is
//! measured there does not matter: counts, names and safety do).

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::*;
use volbench::error::exit;

fn scratch() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        if let Ok(d) = tempfile::tempdir_in(shm) {
            return d;
        }
    }
    tempfile::tempdir().expect("temp dir")
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

fn meta_run(target: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["run", "--target", s(target), "--output", s(out)];
    args.extend_from_slice(extra);
    run(&args)
}

/// One operation's (name, ops, bytes).
type OpCount = (String, u64, u64);

/// The runs of a result: (name, its operations), as `far_tree::runs_of`
/// reads them for the NFS and SMB trees.
fn ops_of(out: &Path) -> Vec<(String, Vec<OpCount>)> {
    crate::common::far_tree::runs_of(out)
        .into_iter()
        .map(|r| (r.name, r.ops))
        .collect()
}

/// Regular files anywhere below `dir`, not counting the tree's marker.
fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir") {
            let p = e.expect("entry").path();
            let ft = std::fs::symlink_metadata(&p).expect("lstat").file_type();
            if ft.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n != ".volbench-tree.json") {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn phases_cover_the_whole_tree_once_and_delete_empties_it() {
    let d = scratch();
    let (target, out) = (d.path().join("tree"), d.path().join("out"));
    let o = meta_run(
        &target,
        &out,
        &[
            "--ops",
            "create,stat,read,delete",
            "--depth",
            "2",
            "--width",
            "10",
            "--files-per-dir",
            "200",
            "--file-size",
            "4k",
            "--threads",
            "4",
        ],
    );
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    let runs = ops_of(&out);
    let names: Vec<&str> = runs.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(names, ["create", "stat", "read", "delete"]);
    for (name, ops) in &runs {
        assert_eq!(ops.len(), 1, "{name}: one operation per phase");
        assert_eq!(ops[0].0, *name);
        assert_eq!(ops[0].1, 20_000, "{name}: one operation per file");
    }
    assert_eq!(runs[0].1[0].2, 20_000 * 4096, "create writes every byte");
    assert_eq!(runs[2].1[0].2, 20_000 * 4096, "read reads every byte");
    assert!(files_below(&target).is_empty(), "delete leaves no file");
    // One summary.csv row per operation, `op` the operation's name.
    let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), 4);
    assert!(rows[1].starts_with("stat,stat,meta,4KiB,"), "{}", rows[1]);
    // The terminal shows the papers' table: a row per operation.
    let table = stdout(&o);
    assert!(
        table.contains("ops/s") && table.contains("p99.9"),
        "{table}"
    );
}

#[test]
fn a_weighted_mix_hits_its_weights() {
    let d = scratch();
    let (target, out) = (d.path().join("tree"), d.path().join("out"));
    let shape = [
        "--depth",
        "1",
        "--width",
        "10",
        "--files-per-dir",
        "500",
        "--file-size",
        "3k:50,64k:40,1m:10",
        "--threads",
        "2",
    ];
    let mut create = vec!["--ops", "create"];
    create.extend_from_slice(&shape);
    let o = meta_run(&target, &d.path().join("o1"), &create);
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    let mut mix = vec![
        "--ops",
        "stat:40,open:20,read:20,create:10,delete:10",
        "--duration",
        "1500ms",
        "--warmup",
        "0",
    ];
    mix.extend_from_slice(&shape);
    let o = meta_run(&target, &out, &mix);
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    let runs = ops_of(&out);
    assert_eq!(runs.len(), 1);
    let ops = &runs[0].1;
    let total: u64 = ops.iter().map(|o| o.1).sum();
    assert!(total > 2_000, "too few operations to judge: {total}");
    for (op, want) in [
        ("stat", 40.0),
        ("open", 20.0),
        ("read", 20.0),
        ("create", 10.0),
        ("delete", 10.0),
    ] {
        let n = ops.iter().find(|o| o.0 == op).map_or(0, |o| o.1);
        let got = n as f64 * 100.0 / total as f64;
        assert!(
            (got - want).abs() <= 2.0,
            "{op}: {got:.2}% of {total} operations, weight {want}%"
        );
    }
}

#[test]
fn empty_and_three_byte_files_work() {
    for (size, bytes) in [("0", 0u64), ("3", 3)] {
        let d = scratch();
        let (target, out) = (d.path().join("tree"), d.path().join("out"));
        let o = meta_run(
            &target,
            &out,
            &[
                "--ops",
                "create,read",
                "--width",
                "4",
                "--files-per-dir",
                "25",
                "--file-size",
                size,
            ],
        );
        assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
        let runs = ops_of(&out);
        assert_eq!(runs[0].1[0], ("create".into(), 100, 100 * bytes));
        assert_eq!(runs[1].1[0], ("read".into(), 100, 100 * bytes));
        let f = files_below(&target);
        assert_eq!(f.len(), 100);
        assert!(
            f.iter()
                .all(|p| std::fs::metadata(p).unwrap().len() == bytes)
        );
    }
}

#[test]
fn a_hundred_thousand_files_work_with_256_descriptors() {
    let d = scratch();
    let (target, out) = (d.path().join("tree"), d.path().join("out"));
    let mut cmd = volbench();
    cmd.args([
        "run",
        "--target",
        s(&target),
        "--output",
        s(&out),
        "--ops",
        "create,delete",
        "--width",
        "100",
        "--files-per-dir",
        "1000",
        "--file-size",
        "0",
        "--threads",
        "2",
    ]);
    // As `ulimit -n 256` would: soft and hard limits both.
    // SAFETY: setrlimit is async-signal-safe and touches no memory of ours.
    unsafe {
        cmd.pre_exec(|| {
            let lim = rustix::process::Rlimit {
                current: Some(256),
                maximum: Some(256),
            };
            rustix::process::setrlimit(rustix::process::Resource::Nofile, lim)
                .map_err(std::io::Error::from)
        });
    }
    let o = cmd.output().expect("volbench runs");
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    let runs = ops_of(&out);
    assert_eq!(runs[0].1[0].1, 100_000);
    assert_eq!(runs[1].1[0].1, 100_000);
    assert!(files_below(&target).is_empty());
}

#[test]
fn a_symbolic_link_in_the_tree_is_refused_and_not_followed() {
    let d = scratch();
    let (target, out) = (d.path().join("tree"), d.path().join("out"));
    let shape = ["--width", "2", "--files-per-dir", "10", "--file-size", "1k"];
    let mut create = vec!["--ops", "create"];
    create.extend_from_slice(&shape);
    let o = meta_run(&target, &out, &create);
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    // Someone swaps a file of the tree for a link to a file of theirs.
    let victim = d.path().join("precious");
    std::fs::write(&victim, b"keep me").unwrap();
    let f5 = target.join("d0").join("f5");
    std::fs::remove_file(&f5).unwrap();
    std::os::unix::fs::symlink(&victim, &f5).unwrap();
    for ops in ["delete", "write", "stat:50,write:50"] {
        let mut args = vec!["--ops", ops, "--duration", "300ms", "--warmup", "0"];
        if !ops.contains(':') {
            args.truncate(2);
        }
        args.extend_from_slice(&shape);
        let o = meta_run(&target, &d.path().join("o2"), &args);
        assert_eq!(
            o.status.code(),
            Some(exit::REFUSED),
            "{ops}: {}",
            stderr(&o)
        );
        assert!(
            stderr(&o).contains("d0/f5 is a symbolic link"),
            "{}",
            stderr(&o)
        );
    }
    assert_eq!(std::fs::read(&victim).unwrap(), b"keep me");
    assert!(
        std::fs::symlink_metadata(&f5)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // A link as a directory of the tree, and as the tree itself.
    std::fs::remove_file(&f5).unwrap();
    let d1 = target.join("d1");
    std::fs::rename(&d1, d.path().join("moved")).unwrap();
    std::os::unix::fs::symlink(d.path().join("moved"), &d1).unwrap();
    let mut stat = vec!["--ops", "stat"];
    stat.extend_from_slice(&shape);
    let o = meta_run(&target, &d.path().join("o3"), &stat);
    assert_eq!(o.status.code(), Some(exit::REFUSED), "{}", stderr(&o));
    let link = d.path().join("link");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let o = meta_run(&link, &d.path().join("o4"), &stat);
    assert_eq!(o.status.code(), Some(exit::REFUSED), "{}", stderr(&o));
}

#[test]
fn a_foreign_directory_is_refused_and_clean_removes_only_the_tree() {
    let d = scratch();
    let foreign = d.path().join("home");
    std::fs::create_dir(&foreign).unwrap();
    std::fs::write(foreign.join("notes.txt"), b"mine").unwrap();
    let o = meta_run(
        &foreign,
        &d.path().join("o1"),
        &["--ops", "create", "--width", "2", "--files-per-dir", "3"],
    );
    assert_eq!(o.status.code(), Some(exit::REFUSED), "{}", stderr(&o));
    assert!(stderr(&o).contains("not a volbench tree"), "{}", stderr(&o));
    let o = run(&["clean", "--target", s(&foreign)]);
    assert_eq!(o.status.code(), Some(exit::REFUSED), "{}", stderr(&o));
    assert_eq!(std::fs::read(foreign.join("notes.txt")).unwrap(), b"mine");

    let target = d.path().join("tree");
    let o = meta_run(
        &target,
        &d.path().join("o2"),
        &[
            "--ops",
            "create",
            "--depth",
            "2",
            "--width",
            "3",
            "--files-per-dir",
            "4",
        ],
    );
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    assert_eq!(files_below(&target).len(), 36);
    // Another shape over the same tree would mix two sets of names.
    let o = meta_run(
        &target,
        &d.path().join("o3"),
        &[
            "--ops",
            "stat",
            "--depth",
            "1",
            "--width",
            "3",
            "--files-per-dir",
            "4",
        ],
    );
    assert_eq!(o.status.code(), Some(exit::REFUSED), "{}", stderr(&o));
    // A create over files that exist says what to do.
    let o = meta_run(
        &target,
        &d.path().join("o4"),
        &[
            "--ops",
            "create",
            "--depth",
            "2",
            "--width",
            "3",
            "--files-per-dir",
            "4",
        ],
    );
    // A create over the tree's own files (an interrupted create, say)
    // redoes them: no `clean` needed first.
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    assert_eq!(files_below(&target).len(), 36);
    let theirs = target.join("d1").join("d2").join("theirs.txt");
    std::fs::write(&theirs, b"x").unwrap();
    let o = run(&["clean", "--target", s(&target)]);
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    assert!(stdout(&o).contains("removed 36 files"), "{}", stdout(&o));
    assert_eq!(files_below(&target), vec![theirs.clone()]);
    std::fs::remove_file(&theirs).unwrap();
    let o = run(&["clean", "--target", s(&target)]);
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_dir(&target).unwrap().count(),
        0,
        "only the root is left"
    );
}

#[test]
fn tree_flags_are_checked_before_any_io() {
    let d = scratch();
    let target = d.path().join("never");
    for (args, says) in [
        (vec!["--depth", "2"], "without --ops"),
        (
            vec!["--ops", "create", "--bs", "8k"],
            "--bs is for block I/O",
        ),
        (vec!["--ops", "create,chmod"], "'chmod' is not one of"),
        (vec!["--ops", "stat:50,mkdir:50"], "only as a phase"),
        (vec!["--ops", "create", "--depth", "17"], "outside 0..16"),
        // Too many files for any --size: the tree's flags are named, not --size.
        (
            vec!["--ops", "create", "--depth", "16", "--width", "100000"],
            "--width 100000 ^ --depth 16",
        ),
        (
            vec!["--ops", "create", "--file-size", "2g"],
            "outside 0B..1GiB",
        ),
        (
            vec!["--ops", "create", "--width", "2", "--threads", "3"],
            "--shared-dirs",
        ),
        (
            vec!["--ops", "create", "--warmup", "2s"],
            "--warmup does not apply",
        ),
    ] {
        let mut a = vec!["run", "--target", s(&target)];
        a.extend_from_slice(&args);
        let o = run(&a);
        assert_eq!(
            o.status.code(),
            Some(exit::BAD_INPUT),
            "{args:?}: {}",
            stderr(&o)
        );
        let err = stderr(&o);
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    assert!(!target.exists(), "nothing was created");
}

#[test]
fn shared_directories_let_threads_contend_without_collisions() {
    let d = scratch();
    let (target, out) = (d.path().join("tree"), d.path().join("out"));
    let o = meta_run(
        &target,
        &out,
        &[
            "--ops",
            "create,rename,delete",
            "--depth",
            "0",
            "--files-per-dir",
            "3000",
            "--threads",
            "3",
            "--shared-dirs",
        ],
    );
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    let runs = ops_of(&out);
    assert!(runs.iter().all(|r| r.1[0].1 == 3000), "{runs:?}");
    assert!(files_below(&target).is_empty());
}

#[test]
fn every_operation_runs_as_a_phase_with_one_operation_per_file_or_leaf() {
    let d = scratch();
    let (target, out) = (d.path().join("tree"), d.path().join("out"));
    let all = "mkdir,create,open,stat,setattr,read,write,append,rename,readdir,read,delete,rmdir";
    let o = meta_run(
        &target,
        &out,
        &[
            "--ops",
            all,
            "--depth",
            "2",
            "--width",
            "3",
            "--files-per-dir",
            "5",
            "--file-size",
            "1k",
            "--threads",
            "3",
        ],
    );
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    let runs = ops_of(&out);
    let names: Vec<&str> = runs.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(names.len(), 13, "{names:?}");
    assert_eq!(names[10], "read-2", "a repeated phase gets its own name");
    for (name, ops) in &runs {
        let (op, count, bytes) = &ops[0];
        let on_dirs = matches!(op.as_str(), "mkdir" | "readdir" | "rmdir");
        assert_eq!(*count, if on_dirs { 9 } else { 45 }, "{name}");
        let want = match name.as_str() {
            "create" | "write" | "append" | "read" => 45 * 1024,
            // Append doubled every file.
            "read-2" => 45 * 2048,
            _ => 0,
        };
        assert_eq!(*bytes, want, "{name}");
    }
    // rmdir took the leaves; the levels above stay for `clean`.
    assert!(target.join("d0").is_dir());
    assert!(!target.join("d0").join("d0").exists());
    let o = run(&["clean", "--target", s(&target)]);
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0);
}

#[test]
fn drop_caches_is_recorded_and_needs_root() {
    let d = scratch();
    let (target, out) = (d.path().join("tree"), d.path().join("out"));
    let args = [
        "--ops",
        "create,stat",
        "--width",
        "2",
        "--files-per-dir",
        "10",
        "--drop-caches",
    ];
    let o = meta_run(&target, &out, &args);
    if !is_root() {
        assert_eq!(o.status.code(), Some(exit::BAD_INPUT), "{}", stderr(&o));
        assert!(stderr(&o).contains("needs root"));
        return skip(
            "drop_caches_is_recorded_and_needs_root",
            "dropping caches needs root",
        );
    }
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    let doc = read_json(&out.join("result.json"));
    for r in doc["runs"].as_array().unwrap() {
        assert_eq!(r["workload"]["meta"]["drop_caches"], true);
    }
}

#[test]
fn the_metadata_suite_runs_a_phase_per_operation() {
    let d = scratch();
    let (target, out) = (d.path().join("tree"), d.path().join("out"));
    let o = run(&[
        "suite",
        "run",
        "metadata",
        "--target",
        s(&target),
        "--threads",
        "2",
        "--output",
        s(&out),
    ]);
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    let runs = ops_of(&out);
    let ops: Vec<&str> = runs.iter().map(|r| r.1[0].0.as_str()).collect();
    assert_eq!(ops, ["create", "open", "stat", "read", "delete"]);
    assert!(runs.iter().all(|r| r.1[0].1 == 20_000), "{runs:?}");
    let table = stdout(&o);
    assert!(
        table.contains("meta-stat") && table.contains("ops/s"),
        "{table}"
    );
    assert!(files_below(&target).is_empty());
}

#[test]
fn a_suite_run_with_ops_refuses_block_keys_by_line() {
    let d = scratch();
    let file = d.path().join("s.toml");
    std::fs::write(
        &file,
        "name = \"x\"\ntable = \"ops\"\nwarmup_run = false\n\n[[run]]\nname = \"t\"\nops = \"create\"\nbs = \"8k\"\n",
    )
    .unwrap();
    let o = run(&["suite", "run", s(&file), "--target", s(&d.path().join("t"))]);
    assert_eq!(o.status.code(), Some(exit::BAD_INPUT), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("line 8") && err.contains("bs is for block I/O"),
        "{err}"
    );
}

#[test]
fn ctrl_c_keeps_the_results_so_far_and_a_tree_clean_removes() {
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    let d = scratch();
    let (target, out) = (d.path().join("tree"), d.path().join("out"));
    let mut child = volbench()
        .args([
            "run",
            "--target",
            s(&target),
            "--output",
            s(&out),
            "--ops",
            "create,delete",
            "--width",
            "10",
            "--files-per-dir",
            "100000",
            "--file-size",
            "0",
            "--interval",
            "100ms",
        ])
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    crate::common::wait_for_stderr_line(&mut child, "[1/2]");
    // Wait until the create phase has made some files.
    let first = target.join("d0");
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::fs::read_dir(&first).map_or(0, |r| r.count()) < 100 {
        assert!(Instant::now() < deadline, "the create phase never started");
        std::thread::yield_now();
    }
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&child),
        rustix::process::Signal::INT,
    )
    .unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(exit::INTERRUPTED));
    let doc = read_json(&out.join("result.json"));
    assert_eq!(doc["interrupted"], true);
    let made = doc["runs"][0]["ops"][0]["totals"]["ops"].as_u64().unwrap();
    assert!(made > 0 && made < 1_000_000, "{made}");
    assert_eq!(doc["runs"].as_array().unwrap().len(), 1, "delete never ran");
    let left = files_below(&target).len() as u64;
    assert!(
        left >= made,
        "every counted create left a file: {left} < {made}"
    );
    let o = run(&["clean", "--target", s(&target)]);
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0);
}

#[test]
fn metadata_results_load_in_report_and_compare() {
    let d = scratch();
    let target = d.path().join("tree");
    let mut outs = Vec::new();
    for threads in ["1", "2"] {
        let out = d.path().join(format!("out{threads}"));
        let o = meta_run(
            &target,
            &out,
            &[
                "--ops",
                "create,stat,delete",
                "--width",
                "4",
                "--files-per-dir",
                "200",
                "--threads",
                threads,
            ],
        );
        assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
        outs.push(out);
    }
    let o = run(&["report", s(&outs[0]), "--format", "md"]);
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    assert!(stdout(&o).contains("| stat | stat |"), "{}", stdout(&o));
    let o = run(&["compare", s(&outs[0]), s(&outs[1]), "-o", "-"]);
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    // A result whose operations do not add up to its totals is refused.
    let path = outs[0].join("result.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    doc["runs"][1]["ops"][0]["totals"]["ops"] = serde_json::json!(7);
    std::fs::write(&path, doc.to_string()).unwrap();
    let o = run(&["report", s(&outs[0]), "--format", "md"]);
    assert_ne!(o.status.code(), Some(exit::OK));
}

#[test]
fn a_second_run_or_clean_on_a_tree_in_use_is_refused_and_names_the_holder() {
    use std::process::Stdio;
    let d = scratch();
    let target = d.path().join("tree");
    let shape = [
        "--width",
        "10",
        "--files-per-dir",
        "100000",
        "--file-size",
        "0",
    ];
    let mut child = volbench()
        .args(["run", "--target", s(&target), "--ops", "create,delete"])
        .args(shape)
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    crate::common::wait_for_stderr_line(&mut child, "[1/2]");
    let holder = format!("pid {}", child.id());
    let second = vb(["run", "--target", s(&target), "--ops", "create"])
        .args(shape)
        .expect(exit::REFUSED);
    assert!(stderr(&second).contains(&holder), "{}", stderr(&second));
    let cleaning = vb(["clean", "--target", s(&target)]).expect(exit::REFUSED);
    assert!(stderr(&cleaning).contains(&holder), "{}", stderr(&cleaning));
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&child),
        rustix::process::Signal::INT,
    )
    .unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(exit::INTERRUPTED));
    // The lock went with the process: the tree can be cleaned now.
    vb(["clean", "--target", s(&target)]).expect(exit::OK);
}
