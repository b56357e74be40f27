//! Safety of what volbench writes and of what it is given back: output
//! paths (`-o`, `--output`), result files and agent results it did not
//! compute, signals and start-up failures. Each test is a finding of
//! issue 9, driven through the real binary.

use std::os::unix::fs::{FileTypeExt, symlink};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use volbench::error::exit;

use crate::common::{is_root, read_json, run, skip, stderr, stdout, vb, volbench, write_result};
use volbench::report::fixtures;

const BIN: &str = env!("CARGO_BIN_EXE_volbench");

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn write_value(dir: &Path, v: &serde_json::Value) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("result.json"), v.to_string()).unwrap();
    dir.to_path_buf()
}

fn mkfifo(path: &Path) {
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        path,
        rustix::fs::Mode::from_raw_mode(0o600),
    )
    .unwrap();
}

/// One line on stderr, the error.
fn one_error_line(o: &std::process::Output) -> String {
    let err = stderr(o);
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(err.starts_with("volbench: error: "), "{err}");
    err
}

/// Waits for a child with a deadline: a hang is a failure, not a stuck suite.
fn wait_or_kill(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return Some(s);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

// ---- finding 3: -o replaced whatever was at the path ----

/// What `report -o` and `compare -o` may meet at their output path.
fn hostile_output_paths(dir: &Path) -> Vec<(PathBuf, &'static str)> {
    let mut v = Vec::new();
    let victim = dir.join("users-file");
    std::fs::write(&victim, "precious").unwrap();
    let link = dir.join("link.html");
    symlink(&victim, &link).unwrap();
    v.push((link, "symbolic link"));
    let dangling = dir.join("dangling.html");
    symlink(dir.join("elsewhere"), &dangling).unwrap();
    v.push((dangling, "symbolic link"));
    let fifo = dir.join("fifo.html");
    mkfifo(&fifo);
    v.push((fifo, "FIFO"));
    if is_root() {
        // A private copy of /dev/null: the real one is what was destroyed.
        let null = dir.join("null");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &null,
            rustix::fs::FileType::CharacterDevice,
            rustix::fs::Mode::from_raw_mode(0o666),
            rustix::fs::makedev(1, 3),
        )
        .unwrap();
        v.push((null, "character device"));
    } else {
        skip(
            "report_and_compare_never_replace_what_is_at_the_output_path",
            "needs root to make a device node (the other cases ran)",
        );
    }
    v
}

fn assert_untouched(path: &Path, what: &str, dir: &Path) {
    let m = std::fs::symlink_metadata(path).unwrap();
    let ft = m.file_type();
    let same = match what {
        "symbolic link" => ft.is_symlink(),
        "FIFO" => ft.is_fifo(),
        "character device" => ft.is_char_device(),
        _ => unreachable!(),
    };
    assert!(same, "{} is still a {what}", path.display());
    assert_eq!(
        std::fs::read_to_string(dir.join("users-file")).unwrap(),
        "precious"
    );
    assert!(
        !dir.join("elsewhere").exists(),
        "nothing created through a link"
    );
}

#[test]
fn report_and_compare_never_replace_what_is_at_the_output_path() {
    let tmp = tempfile::tempdir().unwrap();
    let res = write_result(&tmp.path().join("res"), &fixtures::six_patterns());
    let other = write_result(&tmp.path().join("other"), &fixtures::six_patterns());
    for (path, what) in hostile_output_paths(tmp.path()) {
        for args in [
            vec!["report", p(&res), "-o", p(&path)],
            vec!["report", p(&res), "--format", "md", "-o", p(&path)],
            vec!["compare", p(&res), p(&other), "-o", p(&path)],
        ] {
            let o = run(&args);
            assert_eq!(
                o.status.code(),
                Some(exit::REFUSED),
                "{args:?}: {}",
                stderr(&o)
            );
            let err = one_error_line(&o);
            assert!(err.contains(what) && err.contains(p(&path)), "{err}");
            assert_untouched(&path, what, tmp.path());
        }
    }
    // No temporary files left beside them.
    let leftovers: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // A regular file or a free name is written; - is stdout.
    let html = tmp.path().join("r.html");
    std::fs::write(&html, "old").unwrap();
    let o = run(&["report", p(&res), "-o", p(&html)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::read_to_string(&html).unwrap().contains("<html"));
    let o = run(&["report", p(&res), "--format", "csv", "-o", "-"]);
    assert!(o.status.success() && stdout(&o).starts_with("run,"));
}

// ---- finding 7: --output problems found only after the run ----

fn quick_run(target: &Path, out: &Path) -> Command {
    let mut c = volbench();
    c.args(["run", "--target", p(target), "--output", p(out)])
        .args(["--size", "1m", "--buffered", "--duration", "300ms"])
        .args(["--warmup", "0", "--interval", "100ms"]);
    c
}

#[test]
fn an_output_that_is_a_file_or_a_link_is_refused_before_any_io() {
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("t");
    let file = tmp.path().join("file");
    std::fs::write(&file, "mine").unwrap();
    let o = quick_run(&target, &file).output().unwrap();
    assert_eq!(o.status.code(), Some(exit::BAD_INPUT), "{}", stderr(&o));
    assert!(one_error_line(&o).contains("not a directory"));
    assert!(!target.exists(), "no I/O before the output was checked");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");

    let real = tmp.path().join("real");
    std::fs::create_dir(&real).unwrap();
    let link = tmp.path().join("link");
    symlink(&real, &link).unwrap();
    let o = quick_run(&target, &link).output().unwrap();
    assert_eq!(o.status.code(), Some(exit::REFUSED), "{}", stderr(&o));
    assert!(one_error_line(&o).contains("symbolic link"));
    assert!(!target.exists());

    // A result file name taken by a link is found up front too.
    let out = tmp.path().join("out");
    std::fs::create_dir(&out).unwrap();
    symlink(&file, out.join("result.json")).unwrap();
    let o = quick_run(&target, &out).output().unwrap();
    assert_eq!(o.status.code(), Some(exit::REFUSED), "{}", stderr(&o));
    assert!(!target.exists());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");
}

/// A tmpfs mounted for one test, unmounted on drop.
struct Mount(tempfile::TempDir);

impl Mount {
    fn tmpfs(test: &str, opts: &str) -> Option<Mount> {
        if !is_root() {
            skip(test, "needs root to mount a tmpfs");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", opts, "volbench-test", p(dir.path())])
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            skip(test, "cannot mount a tmpfs here");
            return None;
        }
        Some(Mount(dir))
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.0.path()).status();
    }
}

#[test]
fn an_unwritable_output_directory_is_refused_before_any_io() {
    let Some(m) = Mount::tmpfs("an_unwritable_output_directory", "ro,size=1m") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("t");
    for out in [m.0.path().to_path_buf(), m.0.path().join("new")] {
        let o = quick_run(&target, &out).output().unwrap();
        assert_eq!(o.status.code(), Some(exit::TARGET), "{}", stderr(&o));
        let err = one_error_line(&o);
        assert!(err.contains(p(&out)), "{err}");
        assert!(!target.exists(), "no I/O before the output was checked");
    }
}

#[test]
fn results_that_cannot_be_written_at_the_end_are_printed_and_kept_elsewhere() {
    // Room for the writability probe (an empty file), not for the results.
    let Some(m) = Mount::tmpfs("results_that_cannot_be_written", "size=4k,nr_inodes=3") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let o = quick_run(&tmp.path().join("t"), m.0.path())
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(exit::TARGET), "{err}");
    assert!(stdout(&o).contains("IOPS"), "the table is printed");
    let saved = err
        .lines()
        .find_map(|l| l.split("saved in ").nth(1))
        .and_then(|rest| rest.split(" instead").next())
        .unwrap_or_else(|| panic!("says where: {err}"));
    assert!(saved.starts_with(p(tmp.path())), "{saved}");
    let doc = read_json(&Path::new(saved).join("result.json"));
    assert_eq!(doc["schema"], "volbench.result/v1");
}

// ---- findings 5 and 11: result.json given to report/compare ----

#[test]
fn a_result_with_impossible_numbers_is_refused_with_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let good = serde_json::to_value(fixtures::six_patterns()).unwrap();
    type Breaker = fn(&mut serde_json::Value);
    let cases: [(&str, Breaker, &str); 4] = [
        (
            "min-above-max",
            |v| v["runs"][0]["totals"]["read"]["lat_us"]["min"] = 1e9.into(),
            "above max",
        ),
        (
            "huge-histogram",
            |v| {
                v["runs"][0]["histograms"]["read"]["grouping_power"] = 30.into();
                v["runs"][0]["histograms"]["read"]["max_value_power"] = 64.into();
            },
            "another configuration",
        ),
        (
            "tampered-iops",
            |v| v["runs"][0]["totals"]["read"]["iops"] = 1e308.into(),
            "IOPS is 1e308",
        ),
        (
            "negative-duration",
            |v| v["runs"][0]["phases"][1]["duration_s"] = (-1.0).into(),
            "is -1",
        ),
    ];
    for (name, break_it, want) in cases {
        let mut v = good.clone();
        break_it(&mut v);
        let dir = write_value(&tmp.path().join(name), &v);
        for args in [
            vec!["report", p(&dir), "--format", "md"],
            vec!["report", p(&dir), "-o", "-"],
            vec!["compare", p(&dir), p(&dir), "-o", "-"],
        ] {
            let o = run(&args);
            assert_eq!(
                o.status.code(),
                Some(exit::BAD_INPUT),
                "{name} {args:?}: {}",
                stderr(&o)
            );
            let err = one_error_line(&o);
            assert!(err.contains(want), "{name}: {err}");
        }
    }
}

#[test]
fn a_result_that_is_a_device_or_a_fifo_is_refused_not_read_forever() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("result.json");
    mkfifo(&fifo);
    for path in [Path::new("/dev/zero"), &fifo, tmp.path()] {
        let mut child = volbench()
            .args(["report", p(path), "--format", "json"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let status = wait_or_kill(&mut child, Duration::from_secs(10))
            .unwrap_or_else(|| panic!("report {} hung", path.display()));
        assert_eq!(status.code(), Some(exit::BAD_INPUT), "{}", path.display());
    }
}

#[test]
fn terminal_escapes_in_a_result_never_reach_the_terminal() {
    let tmp = tempfile::tempdir().unwrap();
    let mut doc = fixtures::six_patterns();
    doc.runs[0].name = "evil\x1b]0;owned\x07\x1b[2J\nrun".into();
    doc.host.hostname = "host\x1b[31m".into();
    doc.notes.push("note\x1b[1A\r".into());
    let a = write_result(&tmp.path().join("a"), &doc);
    let b = write_result(&tmp.path().join("b"), &fixtures::six_patterns());
    for args in [
        vec!["compare", p(&a), p(&b), "-o", "-"],
        vec!["compare", p(&a), p(&b), "--markdown", "-o", "-"],
        vec!["report", p(&a), "--format", "md"],
        vec!["report", p(&a), "--format", "csv"],
    ] {
        let o = run(&args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        for (stream, text) in [("stdout", &o.stdout), ("stderr", &o.stderr)] {
            assert!(
                !text.iter().any(|&c| c == 0x1b || c == 0x07 || c == b'\r'),
                "{args:?}: a control character on {stream}"
            );
        }
    }
}

// ---- finding 11: SIGHUP ----

#[test]
fn sighup_stops_a_run_and_still_writes_the_result() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    let mut child = volbench()
        .args(["run", "--target", p(&d.path().join("t")), "--size", "8m"])
        .args(["--duration", "60s", "--warmup", "0", "--interval", "100ms"])
        .args(["--output", p(&out)])
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    // The run announces itself on stderr once its I/O is about to start.
    crate::common::wait_for_stderr_line(&mut child, "[1/1]");
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&child),
        rustix::process::Signal::HUP,
    )
    .unwrap();
    let status = wait_or_kill(&mut child, Duration::from_secs(10)).expect("stopped");
    assert_eq!(status.code(), Some(exit::INTERRUPTED));
    let doc = read_json(&out.join("result.json"));
    assert_eq!(doc["interrupted"], true);
}

// ---- finding 4: thread creation failure ----

#[test]
fn a_thread_limit_at_start_up_ends_the_run_with_exit_1_not_a_hang() {
    // Root is exempt from RLIMIT_NPROC, so the run is made as an unused
    // uid with a process limit far below the threads it asks for.
    if !is_root() {
        skip(
            "a_thread_limit_at_start_up",
            "needs root to run as another uid",
        );
        return;
    }
    const UID: u32 = 61_917;
    let tmp = tempfile::tempdir().unwrap();
    rustix::fs::chown(
        tmp.path(),
        Some(rustix::fs::Uid::from_raw(UID)),
        Some(rustix::fs::Gid::from_raw(UID)),
    )
    .unwrap();
    let mut c = Command::new(BIN);
    c.args(["run", "--target", p(&tmp.path().join("t")), "--size", "4m"])
        .args(["--engine", "psync", "--threads", "64", "--buffered"])
        .args(["--duration", "1s", "--warmup", "0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        c.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 8,
                rlim_max: 8,
            };
            if libc::setrlimit(libc::RLIMIT_NPROC, &lim) != 0
                || libc::setgroups(0, std::ptr::null()) != 0
                || libc::setgid(UID) != 0
                || libc::setuid(UID) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = c.spawn().unwrap();
    let mut err = String::new();
    let mut pipe = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        use std::io::Read;
        let _ = pipe.read_to_string(&mut err);
        err
    });
    let status = wait_or_kill(&mut child, Duration::from_secs(30));
    let err = reader.join().unwrap();
    let status = status.unwrap_or_else(|| panic!("deadlocked at start-up: {err}"));
    assert_eq!(status.code(), Some(exit::RUN_FAILED), "{err}");
    assert!(err.contains("cannot start I/O thread"), "{err}");
}

// ---- finding 10: a host's claimed IOPS ----

#[test]
fn a_tampered_rate_from_a_host_is_refused_not_merged() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    // A stand-in ssh running the agent here; host b's results are forged
    // on the way back: its first IOPS figure becomes 1e308.
    let script = r#"if [ "$1" = b ]; then sh -c "$2" | sed -u -E "/run_done/ s/\"iops\":[0-9.e+-]+/\"iops\":1e308/"; else exec sh -c "$2"; fi"#;
    let o = volbench()
        .args(["run", "--hosts", "a,b"])
        .args(["--ssh-command", &format!("sh -c '{script}' fake")])
        .args(["--remote-volbench", BIN, "--engine", "null"])
        .args(["--target", p(&tmp.path().join("{host}"))])
        .args(["--output", p(&out), "--size", "4m", "--buffered"])
        .args([
            "--duration",
            "300ms",
            "--warmup",
            "0",
            "--interval",
            "100ms",
        ])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_ne!(o.status.code(), Some(exit::OK), "{err}");
    assert!(
        err.contains("invalid result") && err.contains("1e308"),
        "{err}"
    );
    let doc = read_json(&out.join("result.json"));
    for run in doc["runs"].as_array().unwrap() {
        let iops = run["totals"]["read"]["iops"].as_f64().unwrap();
        assert!(iops < 1e12, "merged {iops}");
    }
}

#[test]
fn csv_cells_cannot_be_formulas_nor_markdown_cells_links() {
    // A run named `=HYPERLINK(...)` was a live formula in summary.csv and
    // `report --format csv`; `[x](javascript:...)` a link in tables.md.
    let d = tempfile::tempdir().unwrap();
    let t = d.path().join("t");
    std::fs::create_dir(&t).unwrap();
    let out = d.path().join("out");
    let name = "=HYPERLINK(\"http://x\",\"[x](javascript:alert(1))\")";
    vb([
        "run",
        "--engine",
        "null",
        "--duration",
        "300ms",
        "--warmup",
        "0",
    ])
    .args(["--size", "1m", "--name", name, "--output"])
    .arg(&out)
    .arg("--target")
    .arg(&t)
    .expect(exit::OK);
    let formula = |text: &str, what: &str| {
        for line in text.lines() {
            for cell in line.split(',') {
                let c = cell.trim_start_matches('"');
                assert!(!c.starts_with(['=', '+', '@']), "{what}: {line}");
            }
        }
    };
    let csvs: Vec<PathBuf> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "csv"))
        .collect();
    assert!(csvs.len() >= 2, "summary.csv and a table: {csvs:?}");
    for f in &csvs {
        let text = std::fs::read_to_string(f).unwrap();
        formula(&text, &f.display().to_string());
    }
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert!(summary.contains("\"'=HYPERLINK("), "{summary}");
    let o = vb(["report"])
        .arg(&out)
        .args(["--format", "csv"])
        .expect(exit::OK);
    formula(&stdout(&o), "report --format csv");
    let md = std::fs::read_to_string(out.join("tables.md")).unwrap();
    let o = vb(["report"])
        .arg(&out)
        .args(["--format", "md"])
        .expect(exit::OK);
    for text in [md, stdout(&o)] {
        assert!(!text.contains("[x](javascript"), "{text}");
        assert!(text.contains("\\[x\\](javascript"), "{text}");
    }
    // The HTML report escapes it as text.
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("=HYPERLINK(&quot;http:") || html.contains("=HYPERLINK(&#34;http:"));
}

#[test]
fn catalogue_text_reaches_the_terminal_without_escape_sequences() {
    let d = tempfile::tempdir().unwrap();
    let cat = d.path().join("mine.toml");
    std::fs::write(
        &cat,
        "[[service]]\nname = \"evil\"\ntitle = \"t\\u001b]0;owned\\u0007\\u001b[2J\"\n\
         kind = \"vol\\u001b[5m\"\nsource = \"s\\u009b31m\"\nurl = \"u\"\nnote = \"n\\u001b[8m\"\niops = 500\n",
    )
    .unwrap();
    for args in [
        vec!["service", "show", "evil", "--catalogue"],
        vec!["service", "list", "--catalogue"],
    ] {
        let o = vb(args.clone()).arg(&cat).expect(exit::OK);
        let out = stdout(&o);
        assert!(out.contains("vol\\u{1b}[5m"), "{args:?}: {out}");
        assert!(
            !out.chars()
                .any(|c| c.is_control() && c != '\n' && c != '\t'),
            "{args:?}: {out:?}"
        );
    }
}

#[test]
fn dev_stdout_is_stdout_for_the_single_file_outputs() {
    // `-o /dev/stdout` was refused as a character device.
    let d = tempfile::tempdir().unwrap();
    let dir = write_result(&d.path().join("r"), &fixtures::six_patterns());
    let o = vb(["report"])
        .arg(&dir)
        .args(["--format", "csv", "-o", "/dev/stdout"])
        .expect(exit::OK);
    assert!(stdout(&o).starts_with("run,"), "{}", stdout(&o));
    for to in ["-", "/dev/stdout"] {
        let o = vb([
            "import",
            "diskspd",
            "-o",
            to,
            "--",
            "-b4k",
            "-d5",
            "/tmp/vb-never/x.dat",
        ])
        .expect(exit::OK);
        assert!(stdout(&o).contains("[[run]]"), "{}", stdout(&o));
    }
    // Any other device stays refused, and a regular file is still not replaced.
    let o = vb(["report"])
        .arg(&dir)
        .args(["--format", "csv", "-o", "/dev/null"])
        .output();
    assert_eq!(o.status.code(), Some(exit::REFUSED), "{}", stderr(&o));
    let kept = d.path().join("kept.toml");
    std::fs::write(&kept, "mine").unwrap();
    let o = vb(["import", "diskspd", "-o"])
        .arg(&kept)
        .args(["--", "-b4k", "-d5", "/tmp/vb-never/x.dat"])
        .output();
    assert_ne!(o.status.code(), Some(exit::OK));
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), "mine");
}
