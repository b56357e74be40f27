//! Block I/O over a set of many files: each I/O thread holds one set of
//! descriptors in a table of its own, so the open-file limit bounds the
//! files of one set, not threads x files; a set that cannot fit is refused
//! with one line before anything is made.

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

/// A 1-second random-read run of 8 psync threads over `files` files of
/// 32 KiB, under `ulimit -n 256`, started by `launch` (volbench itself, or
/// a wrapper given volbench's path and arguments). Returns what it did, the
/// target and the output directory (in the kept temporary directory).
fn run_under_256(
    files: u32,
    launch: impl FnOnce(Vec<String>) -> Command,
) -> (Output, tempfile::TempDir, PathBuf, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let (target, out) = (t.path().join("t"), t.path().join("out"));
    let size = format!("{}k", files * 32);
    let files = files.to_string();
    let args: Vec<String> = [
        "run",
        "--target",
        target.to_str().unwrap(),
        "--files",
        &files,
        "--size",
        &size,
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--engine",
        "psync",
        "--threads",
        "8",
        "--duration",
        "1s",
        "--warmup",
        "0",
        "--output",
        out.to_str().unwrap(),
    ]
    .map(String::from)
    .to_vec();
    let o = limited(launch(args), 256).output().unwrap();
    (o, t, target, out)
}

fn volbench_with(args: Vec<String>) -> Command {
    vb(args).into_command()
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

fn assert_refused_before_anything(o: &Output, target: &Path, out: &Path) {
    assert_eq!(o.status.code(), Some(exit::BAD_INPUT), "{}", stderr(o));
    let err = stderr(o);
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(
        err.contains("400 files need 464 open files in each I/O thread")
            && err.contains("ulimit -Hn"),
        "names the files, the need and the limit: {err}"
    );
    assert!(!target.exists(), "nothing made at the target");
    assert!(!out.exists(), "no result written");
}

#[test]
fn eight_threads_over_a_set_need_one_set_of_descriptors_each() {
    // 8 x 150 = 1,200 descriptors if the tables were shared or copied; one
    // set (150) and the spare fit under 256.
    let (o, _t, _, out) = run_under_256(150, volbench_with);
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    let doc = crate::common::read_json(&out.join("result.json"));
    assert!(
        doc["runs"][0]["totals"]["read"]["ops"].as_u64().unwrap() > 0,
        "{doc}"
    );
}

#[test]
fn a_set_past_the_limit_is_raised_to_where_allowed_and_refused_past_it() {
    let (o, _t, target, out) = run_under_256(400, volbench_with);
    if may_raise_hard_limit() {
        // The process raises its own hard limit toward fs.nr_open.
        assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    } else {
        assert_refused_before_anything(&o, &target, &out);
    }
}

#[test]
fn without_the_capability_a_set_past_the_hard_limit_is_refused_with_one_line() {
    // setpriv drops CAP_SYS_RESOURCE from the bounding set, which only root
    // may do; the refusal itself is the same for any user.
    if !is_root() || Command::new("setpriv").arg("--version").output().is_err() {
        skip(
            "many_files::without_the_capability",
            "needs root and setpriv to drop CAP_SYS_RESOURCE",
        );
        return;
    }
    let (o, _t, target, out) = run_under_256(400, |args| {
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
    });
    assert_refused_before_anything(&o, &target, &out);
}
