//! Block I/O over a set of many files: each I/O thread holds one set of
//! descriptors in a table of its own, so the open-file limit bounds the
//! files of one set, not threads x files; a set past the limit is opened on
//! demand, a bounded number of files at a time (fio's openfiles), and only
//! a run that needs every file open at once is refused, with one line
//! before anything is made.

use crate::common::{is_root, skip, stderr, vb};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use volbench::error::exit;

/// `c` with its open-file limit (soft and hard) at `n`, as `ulimit -n`
/// leaves a shell.
fn limited(mut c: Command, n: u64) -> Command {
    // SAFETY: between fork and exec only setrlimit runs, an async-signal-
    // safe system call that allocates nothing.
    unsafe {
        c.pre_exec(move || {
            rustix::process::setrlimit(
                rustix::process::Resource::Nofile,
                rustix::process::Rlimit {
                    current: Some(n),
                    maximum: Some(n),
                },
            )
            .map_err(std::io::Error::from)
        });
    }
    c
}

/// A 1-second run over `files` files of 32 KiB with `extra` flags (the
/// workload), under `ulimit -n 256`, started by `launch` (volbench itself,
/// or a wrapper given volbench's path and arguments). Returns what it did,
/// the kept temporary directory, the target and the output directory.
fn run_under_256(
    files: u32,
    extra: &[&str],
    launch: impl FnOnce(Vec<String>) -> Command,
) -> (Output, tempfile::TempDir, PathBuf, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let (target, out) = (t.path().join("t"), t.path().join("out"));
    let size = format!("{}k", files * 32);
    let files = files.to_string();
    let mut args: Vec<String> = [
        "run",
        "--target",
        target.to_str().unwrap(),
        "--files",
        &files,
        "--size",
        &size,
        "--duration",
        "1s",
        "--warmup",
        "0",
        "--output",
        out.to_str().unwrap(),
    ]
    .map(String::from)
    .to_vec();
    args.extend(extra.iter().map(|a| a.to_string()));
    let o = limited(launch(args), 256).output().unwrap();
    (o, t, target, out)
}

/// Eight psync threads reading at random.
const RANDREAD_8: &[&str] = &[
    "--rw",
    "randread",
    "--bs",
    "4k",
    "--engine",
    "psync",
    "--threads",
    "8",
];

fn volbench_with(args: Vec<String>) -> Command {
    vb(args).into_command()
}

/// volbench without CAP_SYS_RESOURCE, so its hard limit stays where the
/// test put it: setpriv drops it from the bounding set, which only root
/// may do; any other user lacks it already. None (the test skips) for root
/// without setpriv.
fn without_raising(test: &str) -> Option<fn(Vec<String>) -> Command> {
    if !is_root() {
        return Some(volbench_with);
    }
    if Command::new("setpriv").arg("--version").output().is_err() {
        skip(test, "needs setpriv to drop CAP_SYS_RESOURCE as root");
        return None;
    }
    Some(|args| {
        let mut c = Command::new("setpriv");
        c.args([
            "--bounding-set",
            "-sys_resource",
            "--inh-caps",
            "-sys_resource",
        ])
        .arg(env!("CARGO_BIN_EXE_volbench"))
        .args(args);
        c
    })
}

/// Whether this process may raise its hard limit (CAP_SYS_RESOURCE, bit 24
/// of CapEff): root in a container often may not.
fn may_raise_hard_limit() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("CapEff:"))
                .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        })
        .is_some_and(|caps| (caps >> 24) & 1 == 1)
}

fn ops(out: &Path, dir: &str) -> u64 {
    let doc = crate::common::read_json(&out.join("result.json"));
    doc["runs"][0]["totals"][dir]["ops"].as_u64().unwrap_or(0)
}

#[test]
fn eight_threads_over_a_set_need_one_set_of_descriptors_each() {
    // 8 x 150 = 1,200 descriptors if the tables were shared or copied; one
    // set (150) and the spare fit under 256.
    let (o, _t, _, out) = run_under_256(150, RANDREAD_8, volbench_with);
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    assert!(ops(&out, "read") > 0);
    assert!(!stderr(&o).contains("on demand"), "{}", stderr(&o));
}

#[test]
fn a_set_past_the_limit_is_opened_on_demand_and_read_through() {
    let Some(launch) = without_raising("many_files::a_set_past_the_limit_is_opened_on_demand")
    else {
        return;
    };
    // 400 files need 464 descriptors per thread; 192 at a time fit.
    let (o, _t, target, out) = run_under_256(400, RANDREAD_8, launch);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(exit::OK), "{err}");
    assert!(
        err.contains(
            "each I/O thread keeps at most 192 of its 400 files open and opens the others"
        ) && err.contains("ulimit -Hn, allows no more"),
        "the plan says how the files are held: {err}"
    );
    assert!(ops(&out, "read") > 0);
    let made = std::fs::read_dir(&target).unwrap().count();
    assert!(
        made > 400,
        "the whole set was made and filled: {made} entries"
    );
}

#[test]
fn io_uring_with_files_on_demand_puts_every_write_in_its_own_file() {
    // Depth 16 keeps 16 files busy while others are opened and closed; every
    // block stamped by --verify must then be found where it was written,
    // which a descriptor reused for another file would break.
    if volbench::io::engine::probe_io_uring().is_err() {
        skip(
            "many_files::io_uring_with_files_on_demand",
            "io_uring is not available here",
        );
        return;
    }
    let Some(launch) = without_raising("many_files::io_uring_with_files_on_demand") else {
        return;
    };
    let extra = [
        "--rw",
        "randrw",
        "--bs",
        "4k",
        "--engine",
        "io_uring",
        "--iodepth",
        "16",
        "--threads",
        "2",
        "--verify",
    ];
    let (o, _t, target, out) = run_under_256(600, &extra, launch);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(exit::OK), "{err}");
    assert!(
        err.contains("opens the others as its I/Os reach them"),
        "{err}"
    );
    assert!(ops(&out, "write") > 0 && ops(&out, "read") > 0);
    // The set checked block by block, one file open at a time, under the
    // same limit.
    let check = vec![
        "verify".to_string(),
        "--target".into(),
        target.to_str().unwrap().into(),
    ];
    let v = limited(launch(check), 256).output().unwrap();
    assert_eq!(v.status.code(), Some(exit::OK), "{}", stderr(&v));
}

#[test]
fn a_run_that_needs_every_file_open_past_the_limit_is_refused_with_one_line() {
    let Some(launch) = without_raising("many_files::a_run_that_needs_every_file_open") else {
        return;
    };
    let extra = ["--rw", "randwrite", "--bs", "4k", "--end-fsync"];
    let (o, _t, target, out) = run_under_256(400, &extra, launch);
    assert_eq!(o.status.code(), Some(exit::BAD_INPUT), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(
        err.contains("400 files need 464 open files in each I/O thread")
            && err.contains("ulimit -Hn")
            && err.contains("--end-fsync sync each file"),
        "names the files, the need, the limit and why: {err}"
    );
    assert!(!target.exists(), "nothing made at the target");
    assert!(!out.exists(), "no result written");
}

#[test]
fn a_set_past_the_limit_is_held_whole_where_the_limit_can_be_raised() {
    // With CAP_SYS_RESOURCE the process raises its hard limit and holds the
    // set whole; without it (root in a container, any other user) the same
    // run opens its files on demand. Either way it runs, and says which.
    let (o, _t, _, out) = run_under_256(400, RANDREAD_8, volbench_with);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(exit::OK), "{err}");
    let on_demand = err.contains("as its I/Os reach them");
    if may_raise_hard_limit() {
        assert!(!on_demand, "raised, not on demand: {err}");
    } else {
        assert!(on_demand, "no capability to raise: on demand: {err}");
    }
    assert!(ops(&out, "read") > 0);
}

#[test]
fn open_files_holds_fewer_files_than_the_limit_allows_and_is_said() {
    let t = tempfile::tempdir().unwrap();
    let (target, out) = (t.path().join("t"), t.path().join("out"));
    let run = |extra: &[&str], out: &Path| {
        vb(["run", "--target", target.to_str().unwrap(), "--files", "40"])
            .args(["--size", "1280k", "--rw", "randrw", "--bs", "4k"])
            .args(["--duration", "1s", "--warmup", "0", "--verify"])
            .args(["--output", out.to_str().unwrap()])
            .args(extra)
            .into_command()
            .output()
            .unwrap()
    };
    // One file at a time serves psync, whose I/O completes before the next.
    let o = run(&["--open-files", "1", "--threads", "2"], &out);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(exit::OK), "{err}");
    assert!(
        err.contains("keeps at most 1 of its 40 files open") && err.contains("--open-files)"),
        "{err}"
    );
    assert!(ops(&out, "write") > 0 && ops(&out, "read") > 0);
    let doc = crate::common::read_json(&out.join("result.json"));
    assert_eq!(
        doc["spec"]["target"]["open_files"], 1,
        "recorded in the job"
    );
    // Depth 4 could keep all three busy with no room to open a fourth.
    let o = run(
        &[
            "--open-files",
            "3",
            "--engine",
            "io_uring",
            "--iodepth",
            "4",
        ],
        &t.path().join("out2"),
    );
    assert_eq!(o.status.code(), Some(exit::BAD_INPUT), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("with --iodepth 4 a thread needs at least 4 files open"),
        "{}",
        stderr(&o)
    );
    // Nothing to bound: refused, not ignored.
    let o = run(
        &["--open-files", "3", "--engine", "null"],
        &t.path().join("out3"),
    );
    assert_eq!(o.status.code(), Some(exit::BAD_INPUT), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--open-files 3: it bounds"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_fio_job_with_openfiles_reads_its_files_a_few_at_a_time_buffered() {
    // fio's defaults: buffered, with a random map whose every pass ends by
    // dropping the set's cached pages; with openfiles each file is opened
    // in turn for that, not held as a second set.
    let t = tempfile::tempdir().unwrap();
    let (dir, out, job) = (
        t.path().join("d"),
        t.path().join("out"),
        t.path().join("j.fio"),
    );
    std::fs::create_dir(&dir).unwrap();
    let text = format!(
        "[global]\ndirectory={}\nnrfiles=50\nopenfiles=10\nsize=1600k\nrw=randread\nbs=4k\n\
         runtime=1\ntime_based=1\n[j]\n",
        dir.display()
    );
    std::fs::write(&job, text).unwrap();
    let o = vb([
        "fio",
        job.to_str().unwrap(),
        "--output",
        out.to_str().unwrap(),
    ])
    .into_command()
    .output()
    .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(exit::OK), "{err}");
    assert!(
        err.contains("keeps at most 10 of its 50 files open"),
        "{err}"
    );
    let reads = ops(&out, "read");
    // 400 blocks a pass: a second's reads make several passes.
    assert!(reads > 400, "{reads} reads");
}
