//! End-to-end: what a user meets first on the command line. A misspelt
//! flag gets clap's "did you mean", another tool's option name gets
//! volbench's, every subcommand has its man page, the completion scripts
//! complete values, `suite list` and a scaled-down suite run say what
//! `--published` changes, `plan` never hands a host a fraction of a
//! thread, and a start failing on many hosts reads as one line per cause.

use std::path::Path;

use volbench::error::exit;

use crate::common::*;

fn err_line(args: &[&str]) -> String {
    let o = vb(args).expect(exit::BAD_INPUT);
    let e = stderr(&o);
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    e
}

#[test]
fn a_misspelt_flag_gets_did_you_mean() {
    let e = err_line(&["run", "--target", "/nonexistent", "--iodpeth", "4"]);
    assert!(e.contains("did you mean --iodepth?"), "{e}");
    let e = err_line(&["sute", "list"]);
    // `store` is as near as `suite` to the typo: both are offered.
    assert!(e.contains("did you mean") && e.contains("suite"), "{e}");
}

#[test]
fn fio_vdbench_and_diskspd_names_hint_volbench_s() {
    for (args, want) in [
        (
            &["--numjobs", "4"][..],
            "fio --numjobs is volbench's --threads",
        ),
        (
            &["--numjobs=4"][..],
            "fio --numjobs is volbench's --threads",
        ),
        (
            &["--rwmixread", "70"][..],
            "fio --rwmixread is volbench's --read-pct",
        ),
        (&["--ioengine", "libaio"][..], "volbench's --engine"),
        (&["--runtime", "60"][..], "volbench's --duration"),
        (&["--ramp_time", "5"][..], "volbench's --warmup"),
        (&["--filename", "/dev/sdb"][..], "volbench's --target"),
        (
            &["--direct=0"][..],
            "fio --direct=0 is volbench's --buffered",
        ),
        (&["--rate_iops", "500"][..], "volbench's --rate"),
        (
            &["--xfersize", "4k"][..],
            "vdbench --xfersize is volbench's --bs",
        ),
        (&["-o4"][..], "diskspd -o is volbench's --iodepth"),
    ] {
        let mut a = vec!["run", "--target", "/nonexistent"];
        a.extend_from_slice(args);
        let e = err_line(&a);
        assert!(e.contains(want), "{args:?}: {e}");
        // The hint replaces clap's guess by spelling (--rwmixread is not --rw).
        assert!(!e.contains("did you mean"), "{args:?}: {e}");
    }
    let e = err_line(&["run", "--target", "/nonexistent", "--frobnicate"]);
    assert!(!e.contains("volbench's"), "{e}");
}

#[test]
fn every_subcommand_has_a_man_page_that_parses() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("man1");
    vb(["man", "--dir", dir.to_str().unwrap()]).expect(exit::OK);
    let page = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap_or_default();
    for (file, th) in [
        ("volbench.1", ".TH volbench 1"),
        ("volbench-run.1", ".TH volbench-run 1"),
        ("volbench-suite-run.1", ".TH volbench-suite-run 1"),
        ("volbench-import-fio.1", ".TH volbench-import-fio 1"),
        ("volbench-report.1", ".TH volbench-report 1"),
    ] {
        assert!(page(file).contains(th), "{file}: {}", page(file));
    }
    assert!(!dir.join("volbench-agent.1").exists(), "agent is hidden");
    // Every page the top page refers to (volbench\-run(1)) is there.
    let top = page("volbench.1");
    let named: Vec<String> = top
        .split_whitespace()
        .filter_map(|w| w.strip_suffix("(1)"))
        .map(|w| w.replace("\\-", "-"))
        .collect();
    assert!(named.len() > 10, "{named:?}");
    for n in &named {
        assert!(
            dir.join(format!("{n}.1")).exists(),
            "{n}(1) is named but missing"
        );
    }
    // One page printed, as `man volbench-run` would show it.
    let o = vb(["man", "suite", "run"]).expect(exit::OK);
    assert!(stdout(&o).contains(".TH volbench-suite-run 1"));
    let e = err_line(&["man", "nope"]);
    assert!(e.contains("no man page for `volbench nope`"), "{e}");
    match std::process::Command::new("man")
        .args(["-l", dir.join("volbench-run.1").to_str().unwrap()])
        .env("MANPAGER", "cat")
        .env("MANWIDTH", "100")
        .output()
    {
        Ok(o) if o.status.success() => {
            let text = String::from_utf8_lossy(&o.stdout);
            assert!(text.contains("--iodepth"), "{text}");
        }
        Ok(o) => panic!("man -l failed: {}", String::from_utf8_lossy(&o.stderr)),
        Err(e) => skip("man -l volbench-run.1", &format!("no man: {e}")),
    }
}

#[test]
fn completions_offer_engines_patterns_and_suite_names() {
    for shell in ["bash", "zsh", "fish"] {
        let o = vb(["completions", shell]).expect(exit::OK);
        let s = stdout(&o);
        for word in [
            "io_uring",
            "psync",
            "randrw",
            "disk-check",
            "six-patterns",
            "poisson",
        ] {
            assert!(s.contains(word), "{shell} completion lacks {word}");
        }
    }
    // Hints only: a value outside the lists still reaches volbench's own
    // parser and its error, as before.
    let e = err_line(&["run", "--target", "/nonexistent", "--engine", "libaio"]);
    assert!(e.contains("--engine"), "{e}");
    assert!(!e.contains("possible values"), "{e}");
}

#[test]
fn suite_list_shows_both_variants_and_a_scaled_run_says_so_first() {
    let o = vb(["suite", "list"]).expect(exit::OK);
    let s = stdout(&o);
    assert!(
        s.contains("--published: 3 runs, 16 threads x iodepth 4, 50GiB"),
        "{s}"
    );
    assert!(
        s.contains("default:     3 runs, 4 threads x iodepth 4, 4GiB"),
        "{s}"
    );
    assert!(
        s.contains("(scaled down)") && s.contains("--published (run and show)"),
        "{s}"
    );
    let d = tempfile::tempdir().unwrap();
    let t = d.path().join("t");
    let o = vb([
        "suite",
        "run",
        "disk-check",
        "--target",
        t.to_str().unwrap(),
        "--dry-run",
    ])
    .expect(exit::OK);
    let first = stderr(&o).lines().next().unwrap_or_default().to_string();
    assert!(
        first.starts_with(
            "volbench: note: disk-check runs its scaled-down defaults (3 runs, 4 threads x iodepth 4"
        )
            && first.contains("--published runs the paper's (3 runs, 16 threads"),
        "{first}"
    );
    // A suite run --published says where its numbers come from instead.
    let o = vb([
        "suite",
        "run",
        "disk-check",
        "--published",
        "--target",
        t.to_str().unwrap(),
        "--dry-run",
    ])
    .expect(exit::OK);
    assert!(!stderr(&o).contains("scaled-down"), "{}", stderr(&o));
}

#[test]
fn plan_gives_each_host_whole_threads() {
    let o = vb(["plan", "--iops", "1000", "--latency", "1ms", "--hosts", "6"]).expect(exit::OK);
    let s = stdout(&o);
    assert!(s.contains("1 per host over 6 hosts, 6 in all"), "{s}");
    assert!(!s.contains("0.17"), "{s}");
}

#[test]
fn a_start_failing_on_many_hosts_is_one_line_per_cause() {
    let d = tempfile::tempdir().unwrap();
    let ssh = d.path().join("fake-ssh");
    // Refuses h1 and h3 the same way, h2 another way: two causes.
    std::fs::write(
        &ssh,
        "#!/bin/sh\nif [ \"$1\" = h2 ]; then echo 'volbench: not found' >&2; exit 127; fi\n\
         echo \"ssh: connect to host $1 port 22: Connection refused\" >&2\nexit 255\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&ssh, std::fs::Permissions::from_mode(0o755)).unwrap();
    let target = d.path().join("{host}");
    let o = vb([
        "run",
        "--hosts",
        "h1,h2,h3",
        "--ssh-command",
        ssh.to_str().unwrap(),
        "--target",
        target.to_str().unwrap(),
        "--duration",
        "1s",
    ])
    .output();
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(!e.contains("\\n"), "literal newline escapes: {e}");
    let lines: Vec<&str> = e.lines().filter(|l| !l.starts_with("note:")).collect();
    assert!(
        lines[0].starts_with("volbench: error: could not start the agent on 3 of 3 hosts"),
        "{e}"
    );
    assert_eq!(lines.len(), 3, "{e}");
    assert!(
        lines.iter().any(|l| l.starts_with("  h1, h3: ")
            && l.contains("connect to host {host} port 22: Connection refused")),
        "{e}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("  h2: ") && l.contains("not found")),
        "{e}"
    );
}

/// Where fio-plot is importable: VOLBENCH_FIO_PLOT_PYTHON, else python3
/// (test.sh installs the pinned fio-plot there).
pub(crate) fn python_with(module: &str) -> Option<String> {
    let py = std::env::var("VOLBENCH_FIO_PLOT_PYTHON").unwrap_or_else(|_| "python3".into());
    let ok = std::process::Command::new(&py)
        .args(["-c", &format!("import {module}")])
        .output()
        .is_ok_and(|o| o.status.success());
    ok.then_some(py)
}

pub(crate) fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn run_h_is_short_with_the_workload_first_and_help_is_long() {
    let short = stdout(&vb(["run", "-h"]).expect(exit::OK));
    let long = stdout(&vb(["run", "--help"]).expect(exit::OK));
    let at = |text: &str, flag: &str| {
        text.find(&format!("--{flag} "))
            .or_else(|| text.find(&format!("--{flag}\n")))
            .unwrap_or_else(|| panic!("no --{flag} in\n{text}"))
    };
    assert!(
        short.lines().count() < 80,
        "{} lines:\n{short}",
        short.lines().count()
    );
    assert!(long.lines().count() > 2 * short.lines().count());
    for text in [&short, &long] {
        // The workload before everything else: --rw right after where and
        // how much, before any output or live option.
        assert!(at(text, "target") < at(text, "rw"));
        assert!(at(text, "rw") < at(text, "read-pct"));
        assert!(at(text, "read-pct") < at(text, "bs"));
        assert!(at(text, "bs") < at(text, "threads"));
        assert!(at(text, "iodepth") < at(text, "output"));
        let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains("Exit codes:"), "{text}");
        assert!(flat.contains("6 compare --fail-below"), "{text}");
    }
    assert!(at(&long, "bs") < at(&long, "live"));
    assert!(!short.contains("--live "), "{short}");
    assert!(!short.contains("--metrics-listen"), "{short}");
    assert!(short.contains("--help"), "{short}");
    // The top-level help names every exit code too.
    let top = stdout(&vb(["--help"]).expect(exit::OK));
    let top = top.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        top.contains("6 compare --fail-below") && top.contains("130 interrupted"),
        "{top}"
    );
}

#[test]
fn front_ends_get_their_own_tools_hints() {
    let tmp = tempfile::tempdir().unwrap();
    let parm = tmp.path().join("parm");
    std::fs::write(&parm, "sd=sd1,lun=/tmp/x\n").unwrap();
    // vdbench's -o is its output directory, not diskspd's queue depth.
    let e = err_line(&["vdbench", "-f", p(&parm), "-o", "out"]);
    assert!(e.contains("vdbench -o is volbench's --output"), "{e}");
    assert!(!e.contains("iodepth"), "{e}");
    // A parameter file without vdbench's -f.
    let e = err_line(&["vdbench", p(&parm)]);
    assert!(e.contains("volbench vdbench -f"), "{e}");
    let e = err_line(&["run", "--target", "/nonexistent", "--time_based"]);
    assert!(
        e.contains("fio --time_based needs no flag in volbench: runs are timed"),
        "{e}"
    );
    let e = err_line(&["run", "--target", "/nonexistent", "--status-interval", "5"]);
    assert!(e.contains("--progress-interval"), "{e}");
    // fio users write sizes with a decimal point.
    vb([
        "run",
        "--target",
        p(&tmp.path().join("t")),
        "--size",
        "1.5G",
        "--dry-run",
    ])
    .expect(exit::OK);
    let e = err_line(&["run", "--target", "/nonexistent", "--size", "1.3k"]);
    assert!(e.contains("not a whole number of bytes"), "{e}");
}

#[test]
fn completion_offers_no_engine_this_system_cannot_run() {
    // bash's script holds the words alone (zsh's and fish's carry the
    // flags' help too, which names every engine).
    let s = stdout(&vb(["completions", "bash"]).expect(exit::OK));
    assert!(s.contains("io_uring"));
    assert_eq!(s.contains("overlapped"), cfg!(windows));
}
