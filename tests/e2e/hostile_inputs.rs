//! Hostile input files and host names found by the review of the features
//! added after issue 9's first pass: each test reproduces one finding.

use std::process::Output;
use volbench::error::exit;

use crate::common::*;

/// Exit 2 with the volbench error line last on stderr (an importer's
/// notes may come before it).
fn refused_with(o: &Output, needle: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(exit::BAD_INPUT), "{err}");
    let last = err.lines().last().unwrap_or("");
    assert!(last.starts_with("volbench: error: "), "{err}");
    assert!(last.contains(needle), "want {needle:?} in {last}");
}

#[test]
fn fio_includes_fanning_out_are_bounded_in_number() {
    // Within the depth bound, a file including another 100 times, each
    // including a third 100 times, read 10,000 files before the fix.
    let d = tempfile::tempdir().unwrap();
    let line = |f: &str| format!("include {f}\n").repeat(100);
    std::fs::write(
        d.path().join("a.fio"),
        format!("[j]\nrw=read\n{}", line("b.fio")),
    )
    .unwrap();
    std::fs::write(d.path().join("b.fio"), line("c.fio")).unwrap();
    std::fs::write(d.path().join("c.fio"), "size=1m\n").unwrap();
    let o = vb(["import", "fio"]).arg(d.path().join("a.fio")).output();
    refused_with(&o, "more than 256 include files read in all");
}

#[test]
fn vdbench_includes_under_many_spellings_are_bounded_in_number() {
    // "x", "../d/x", "../d/../d/x"... name one file many ways; each
    // spelling was read, and each of those read the next level again.
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("d");
    std::fs::create_dir(&dir).unwrap();
    let spellings: String = (0..300)
        .map(|i| format!("include={}b.vdb\n", "../d/".repeat(i)))
        .collect();
    std::fs::write(dir.join("a.vdb"), &spellings).unwrap();
    std::fs::write(dir.join("b.vdb"), "* nothing\n").unwrap();
    let o = vb(["import", "vdbench"]).arg(dir.join("a.vdb")).output();
    refused_with(&o, "more than 256 include files read in all");
}

#[test]
fn fio_variables_cannot_expand_a_line_past_the_bound() {
    // 20,000 references to a 100 KB variable: 2 GB of line before the fix
    // (the import ran out the test's timeout).
    let d = tempfile::tempdir().unwrap();
    let job = d.path().join("v.fio");
    std::fs::write(
        &job,
        format!(
            "[j]\nrw=read\nsize=1m\nfilename={}\n",
            "${X}".repeat(20_000)
        ),
    )
    .unwrap();
    let o = vb(["import", "fio"])
        .arg(&job)
        .env("X", "a".repeat(100_000))
        .output();
    refused_with(&o, "expands the line past 1048576 bytes");
}

#[test]
fn host_names_a_shell_would_interpret_are_refused_from_every_source() {
    // A launcher template may hand {host} to a shell, and ssh's
    // ProxyCommand does: `$(...)`, `;`, backquotes never reach one.
    let d = tempfile::tempdir().unwrap();
    for name in ["$(touch${IFS}/tmp/vb-pwned)", "a;b", "`id`", "h|x", "h&"] {
        let o = vb([
            "run",
            "--target",
            "/mnt/x/{host}",
            "--dry-run",
            "--hosts",
            name,
        ])
        .output();
        refused_with(&o, "which a shell would interpret");
        let file = d.path().join("hosts");
        std::fs::write(&file, format!("{name}\n")).unwrap();
        let o = vb([
            "run",
            "--target",
            "/mnt/x/{host}",
            "--dry-run",
            "--hosts-file",
        ])
        .arg(&file)
        .output();
        refused_with(&o, "which a shell would interpret");
    }
    // --hosts-from: a command's output is no more trusted than a file.
    let script = d.path().join("list.sh");
    std::fs::write(&script, "#!/bin/sh\necho 'vm1'\necho 'vm2;reboot'\n").unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let o = vb([
        "run",
        "--target",
        "/mnt/x/{host}",
        "--dry-run",
        "--hosts-from",
    ])
    .arg(&script)
    .output();
    refused_with(&o, "which a shell would interpret");
    // Ordinary names still pass: user@host, ports, IPv6 with a zone.
    let o = vb(["run", "--target", "/mnt/x/{host}", "--dry-run", "--hosts"])
        .arg("root@vm1.example,vm2:22,fe80::1%eth0,node[01-3]")
        .output();
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
}
