//! Issue 9, scope input: every number and input file is checked against a
//! stated bound before any I/O, and a bad one ends with exit 2 and one line
//! on stderr — never a panic, a hang or gigabytes allocated. Drives the real
//! binary; everything here is --dry-run or refused before it touches a disk.

use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;
use volbench::error::exit;

use crate::common::*;

/// Runs volbench with `args`; a run still going after `secs` is killed and
/// the test fails, so a regression that hangs (reading /dev/zero, a sweep
/// of 10^9 points) shows as a failure instead of a stuck CI job.
fn run_within(secs: u64, args: &[&std::ffi::OsStr]) -> Output {
    let child = volbench()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the volbench binary starts");
    let pid = child.id();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if done_rx.recv_timeout(Duration::from_secs(secs)).is_err() {
            if let Some(pid) = rustix::process::Pid::from_raw(pid as i32) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
            return true;
        }
        false
    });
    let out = child.wait_with_output().expect("volbench output");
    let _ = done_tx.send(());
    let killed = watchdog.join().unwrap_or(false);
    assert!(!killed, "volbench {args:?} still ran after {secs}s");
    out
}

fn run_args(args: &[&str]) -> Output {
    let v: Vec<&std::ffi::OsStr> = args.iter().map(|a| std::ffi::OsStr::new(*a)).collect();
    run_within(30, &v)
}

/// Exit 2 with exactly one line on stderr, the volbench error line.
fn assert_refused(o: &Output, what: &str) -> String {
    let err = stderr(o);
    assert_eq!(
        o.status.code(),
        Some(exit::BAD_INPUT),
        "{what}: want exit 2, got {:?}; stderr: {err}",
        o.status.code()
    );
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(
        lines.len(),
        1,
        "{what}: want one line on stderr, got: {err:?}"
    );
    assert!(lines[0].starts_with("volbench: error: "), "{what}: {err:?}");
    err
}

const EXTREMES: [&str; 4] = ["0", "-1", "1e30", "1e-300"];

/// Sets each numeric flag to each extreme; `ok_at_zero` flags accept 0.
fn each_flag_at_the_extremes(base: &[&str], flags: &[(&str, bool)]) {
    for (flag, ok_at_zero) in flags {
        for v in EXTREMES {
            let mut args: Vec<&str> = base.to_vec();
            args.extend([*flag, v]);
            let o = run_args(&args);
            let what = format!("{} {flag} {v}", base.join(" "));
            if v == "0" && *ok_at_zero {
                assert_eq!(o.status.code(), Some(exit::OK), "{what}: {}", stderr(&o));
            } else {
                assert_refused(&o, &what);
            }
        }
    }
}

#[test]
fn every_numeric_flag_of_run_has_a_bound() {
    let d = tempfile::tempdir().unwrap();
    let t = d.path().to_str().unwrap();
    each_flag_at_the_extremes(
        &["run", "--target", t, "--dry-run", "--rw", "randrw"],
        &[
            ("--size", false),
            ("--files", false),
            ("--read-pct", true),
            ("--bs", false),
            ("--threads", false),
            ("--iodepth", false),
            ("--duration", false),
            ("--warmup", true),
            ("--io-limit", false),
            ("--rate", false),
            ("--interval", false),
            ("--seed", true),
        ],
    );
    each_flag_at_the_extremes(
        &[
            "run",
            "--target",
            "/mnt/x/{host}",
            "--hosts",
            "vm1,vm2",
            "--dry-run",
        ],
        &[("--host-timeout", false)],
    );
}

#[test]
fn every_numeric_flag_of_suite_run_plan_and_quick_has_a_bound() {
    let d = tempfile::tempdir().unwrap();
    let t = d.path().to_str().unwrap();
    each_flag_at_the_extremes(
        &["suite", "run", "six-patterns", "--target", t, "--dry-run"],
        &[
            ("--size", false),
            ("--files", false),
            ("--threads", false),
            ("--iodepth", false),
            ("--duration", false),
            ("--warmup", true),
            ("--interval", false),
            ("--seed", true),
        ],
    );
    each_flag_at_the_extremes(&["plan", "--iops", "5"], &[("--latency", false)]);
    each_flag_at_the_extremes(&["plan", "--latency", "1ms"], &[("--iops", false)]);
    each_flag_at_the_extremes(&["plan", "--iops", "5"], &[("--concurrency", false)]);
    each_flag_at_the_extremes(
        &["plan", "--latency", "1ms", "--iops", "5"],
        &[("--hosts", false)],
    );
    // A directory that does not exist: even a value wrongly accepted could
    // not start a benchmark here.
    let missing = d.path().join("missing");
    each_flag_at_the_extremes(
        &["quick", "--dir", missing.to_str().unwrap()],
        &[("--duration", false), ("--size", false)],
    );
}

/// A suite file with one key set to `value`, in [defaults] or its [[run]].
fn suite_with(section: &str, key: &str, value: &str) -> String {
    let mut run = String::from("[[run]]\nname = \"a\"\nrw = \"randrw\"\n");
    let mut defaults = String::from("[defaults]\n");
    let line = format!("{key} = {value}\n");
    match section {
        "defaults" => defaults.push_str(&line),
        _ => {
            if key == "curve_stop_latency" {
                run.push_str("curve = [50]\n");
            }
            run.push_str(&line);
        }
    }
    format!("name = \"s\"\ntable = \"patterns\"\nwarmup_run = false\n{defaults}{run}")
}

#[test]
fn every_numeric_suite_key_has_a_bound() {
    let d = tempfile::tempdir().unwrap();
    let t = d.path().join("target");
    std::fs::create_dir(&t).unwrap();
    let file = d.path().join("s.toml");
    let cases: &[(&str, &str, bool)] = &[
        ("defaults", "size", false),
        ("defaults", "files", false),
        ("defaults", "threads", false),
        ("defaults", "iodepth", false),
        ("defaults", "duration", false),
        ("defaults", "warmup", true),
        ("defaults", "interval", false),
        ("defaults", "seed", true),
        ("run", "read_pct", true),
        ("run", "bs", false),
        ("run", "threads", false),
        ("run", "iodepth", false),
        ("run", "files", false),
        ("run", "rate", false),
        ("run", "duration", false),
        ("run", "warmup", true),
        ("run", "io_limit", false),
        ("run", "curve", false),
        ("run", "curve_stop_latency", false),
        ("run", "until_gain_below", false),
    ];
    for (section, key, ok_at_zero) in cases {
        for v in EXTREMES {
            for value in [v.to_string(), format!("[{v}]")] {
                std::fs::write(&file, suite_with(section, key, &value)).unwrap();
                let o = run_args(&[
                    "suite",
                    "run",
                    file.to_str().unwrap(),
                    "--target",
                    t.to_str().unwrap(),
                    "--dry-run",
                ]);
                let what = format!("[{section}] {key} = {value}");
                if v == "0" && *ok_at_zero {
                    assert_eq!(o.status.code(), Some(exit::OK), "{what}: {}", stderr(&o));
                } else {
                    assert_refused(&o, &what);
                }
            }
        }
    }
}

#[test]
fn the_numbers_that_panicked_are_refused_with_their_bound() {
    let d = tempfile::tempdir().unwrap();
    let t = d.path().to_str().unwrap();
    let run = |extra: &[&str]| {
        let mut a = vec!["run", "--target", t, "--dry-run"];
        a.extend_from_slice(extra);
        run_args(&a)
    };
    let e = assert_refused(&run(&["--duration", "1e30"]), "--duration 1e30");
    assert!(e.contains("outside 1ms..30d"), "{e}");
    let e = assert_refused(
        &run(&["--duration", "500000000000y"]),
        "--duration 500000000000y",
    );
    assert!(e.contains("outside 1ms..30d"), "{e}");
    let e = assert_refused(&run(&["--rate", "1e-300"]), "--rate 1e-300");
    assert!(
        e.contains("--rate 1e-300 is outside 0.01..1000000000"),
        "{e}"
    );
    let e = assert_refused(&run(&["--interval", "1e30"]), "--interval 1e30");
    assert!(e.contains("outside 50ms..1h"), "{e}");
    let e = assert_refused(
        &run_args(&["plan", "--latency", "1e30", "--iops", "5"]),
        "plan --latency 1e30",
    );
    assert!(e.contains("--latency"), "{e}");
}

#[test]
fn sweeps_and_buffers_are_bounded_before_anything_is_allocated() {
    let d = tempfile::tempdir().unwrap();
    let t = d.path().to_str().unwrap();
    let run = |extra: &[&str]| {
        let mut a = vec!["run", "--target", t, "--dry-run"];
        a.extend_from_slice(extra);
        run_args(&a)
    };
    let e = assert_refused(&run(&["--rate", "1:1e15:*1.000001"]), "rate sweep");
    assert!(e.contains("more than 10000 points"), "{e}");
    let e = assert_refused(
        &run(&[
            "--rw",
            "randrw",
            "--read-pct",
            "0:100",
            "--threads",
            "1:4096",
            "--iodepth",
            "1:4096",
        ]),
        "crossed sweep",
    );
    assert!(e.contains("at most 10000"), "{e}");
    let e = assert_refused(
        &run(&["--iodepth", "4096", "--bs", "256M", "--size", "1G"]),
        "--iodepth 4096 --bs 256M",
    );
    assert!(e.contains("of I/O buffers; at most 4GiB"), "{e}");
    let e = assert_refused(
        &run(&[
            "--threads",
            "4096",
            "--iodepth",
            "4096",
            "--engine",
            "psync",
        ]),
        "16.7M threads",
    );
    assert!(e.contains("at most 65536"), "{e}");
    let e = assert_refused(
        &run(&["--threads", "64", "--iodepth", "128", "--engine", "psync"]),
        "8192 psync threads",
    );
    assert!(e.contains("needs 8192 threads; at most 4096"), "{e}");
}

#[test]
fn a_suite_files_count_past_u32_is_refused_not_wrapped() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("s.toml");
    std::fs::write(
        &file,
        "name = \"s\"\ntable = \"patterns\"\n[defaults]\nfiles = 4294967297\n[[run]]\nname = \"a\"\n",
    )
    .unwrap();
    let o = run_args(&[
        "suite",
        "run",
        file.to_str().unwrap(),
        "--target",
        d.path().to_str().unwrap(),
        "--dry-run",
    ]);
    let e = assert_refused(&o, "files = 4294967297");
    assert!(
        e.contains("line 4") && e.contains("files 4294967297 is outside 1..65536"),
        "{e}"
    );
}

#[test]
fn names_and_echoed_values_stay_on_one_line() {
    let d = tempfile::tempdir().unwrap();
    let t = d.path().to_str().unwrap();
    let o = run_args(&["run", "--target", t, "--dry-run", "--name", "a\nb"]);
    let e = assert_refused(&o, "--name with a newline");
    assert!(e.contains("control character"), "{e}");
    let o = run_args(&["run", "--target", t, "--dry-run", "--name", "\u{1b}[2J"]);
    assert_refused(&o, "--name with an escape sequence");
    // A bad value echoed back in the error must not carry its escape
    // sequence to the terminal.
    let o = run_args(&["run", "--target", t, "--dry-run", "--size", "1\u{1b}[31m\n"]);
    let e = assert_refused(&o, "--size with an escape sequence");
    assert!(!e.contains('\u{1b}'), "{e:?}");
}

#[test]
fn a_non_utf8_target_is_refused_before_any_io() {
    let d = tempfile::tempdir().unwrap();
    let target = d.path().join(std::ffi::OsStr::from_bytes(b"vol-\xff\xfe"));
    std::fs::create_dir(&target).unwrap();
    let o = run_within(
        30,
        &[
            "run".as_ref(),
            "--target".as_ref(),
            target.as_os_str(),
            "--size".as_ref(),
            "1m".as_ref(),
            "--engine".as_ref(),
            "null".as_ref(),
            "--warmup".as_ref(),
            "0".as_ref(),
            "--duration".as_ref(),
            "0.1".as_ref(),
        ],
    );
    let e = assert_refused(&o, "non-UTF-8 --target");
    assert!(e.contains("not valid UTF-8"), "{e}");
    let left: Vec<_> = std::fs::read_dir(&target).unwrap().collect();
    assert!(left.is_empty(), "nothing may be created: {left:?}");
}

#[test]
fn devices_and_huge_files_are_not_read_as_suites_or_hosts_files() {
    let d = tempfile::tempdir().unwrap();
    let t = d.path().to_str().unwrap();
    let e = assert_refused(
        &run_args(&["suite", "run", "/dev/zero", "--target", t, "--dry-run"]),
        "suite /dev/zero",
    );
    assert!(e.contains("character device"), "{e}");
    assert_refused(
        &run_args(&["suite", "show", "/dev/zero"]),
        "suite show /dev/zero",
    );
    let e = assert_refused(
        &run_args(&[
            "run",
            "--target",
            "/x/{host}",
            "--hosts-file",
            "/dev/zero",
            "--dry-run",
        ]),
        "hosts file /dev/zero",
    );
    assert!(e.contains("character device"), "{e}");
    let big = d.path().join("big.toml");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(3 << 30).unwrap(); // sparse: costs no disk
    let e = assert_refused(
        &run_args(&[
            "suite",
            "run",
            big.to_str().unwrap(),
            "--target",
            t,
            "--dry-run",
        ]),
        "3 GiB suite file",
    );
    assert!(e.contains("at most 1MiB"), "{e}");
}

#[test]
fn a_bom_is_not_part_of_the_first_host() {
    let d = tempfile::tempdir().unwrap();
    let hosts = d.path().join("hosts.txt");
    std::fs::write(&hosts, "\u{feff}vm1\nvm2 threads=2\n").unwrap();
    let o = run_args(&[
        "run",
        "--target",
        "/mnt/x/{host}",
        "--hosts-file",
        hosts.to_str().unwrap(),
        "--dry-run",
    ]);
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("[0] vm1 ") && out.contains("/mnt/x/vm1"),
        "{out}"
    );
    assert!(!out.contains('\u{feff}'), "{out:?}");
}

#[test]
fn a_suite_through_a_pipe_or_redirect_still_reads() {
    // Bounded streams stay usable: `suite run /dev/stdin < file`, `gen | ...`.
    let d = tempfile::tempdir().unwrap();
    let suite = Path::new(env!("CARGO_MANIFEST_DIR")).join("suites/six-patterns.toml");
    let bin = env!("CARGO_BIN_EXE_volbench");
    let target = d.path().display();
    for script in [
        format!(
            "{bin} suite run /dev/stdin --target {target} --dry-run < {}",
            suite.display()
        ),
        format!(
            "cat {} | {bin} suite run /dev/stdin --target {target} --dry-run",
            suite.display()
        ),
    ] {
        let o = Command::new("sh").arg("-c").arg(&script).output().unwrap();
        assert_eq!(o.status.code(), Some(exit::OK), "{script}: {}", stderr(&o));
        assert!(stdout(&o).contains("8k-random-read"), "{}", stdout(&o));
    }
}

#[test]
fn argument_errors_are_one_line_too() {
    for (args, want) in [
        (
            &["run", "--target", "/tmp", "--frobnicate"][..],
            "--frobnicate",
        ),
        (&["run"][..], "--target"),
        (&["report", "x", "--format", "pdf"][..], "'pdf'"),
        (&["plan", "--iops"][..], "--iops"),
    ] {
        let e = assert_refused(&run_args(args), &args.join(" "));
        assert!(e.contains(want), "{args:?}: {e}");
    }
    // Help is not an error: it prints in full and succeeds.
    let o = run_args(&["run", "--help"]);
    assert_eq!(o.status.code(), Some(exit::OK));
    assert!(stdout(&o).contains("--threads"), "{}", stdout(&o));
}
