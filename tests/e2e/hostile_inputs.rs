//! Hostile input files, host names and signals found by the review of the features
//! added after issue 9's first pass: each test reproduces one finding.

use std::os::unix::fs::FileTypeExt;
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

#[test]
fn sighup_in_the_cool_down_stops_at_once_and_writes_the_result() {
    // The measured phase is 1 ms, so the signal lands in the 60 s cool-down
    // (or, on a slow machine, just before it: either must stop the run).
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    let started = std::time::Instant::now();
    let mut child = volbench()
        .arg("run")
        .arg("--target")
        .arg(d.path().join("t"))
        .args(["--size", "8m", "--duration", "1ms", "--warmup", "0"])
        .args(["--threads", "1,2", "--cooldown", "60s", "--output"])
        .arg(&out)
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_for_stderr_line(&mut child, "[1/2]");
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&child),
        rustix::process::Signal::HUP,
    )
    .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(exit::INTERRUPTED));
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "the cool-down held the stop"
    );
    let doc = read_json(&out.join("result.json"));
    assert_eq!(doc["interrupted"], true);
    // The second run never started (the first may be recorded or not,
    // depending on whether the signal beat its 1 ms of measuring).
    assert!(
        doc["runs"].as_array().is_some_and(|r| r.len() <= 1),
        "{doc}"
    );
}

#[test]
fn import_output_never_replaces_or_follows_what_is_at_the_path() {
    let d = tempfile::tempdir().unwrap();
    let job = d.path().join("ok.fio");
    std::fs::write(
        &job,
        format!("[j]\nrw=read\nsize=1m\ndirectory={}\n", d.path().display()),
    )
    .unwrap();
    let victim = d.path().join("victim");
    let link = d.path().join("link");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let fifo = d.path().join("fifo");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .unwrap();
    let existing = d.path().join("existing");
    std::fs::write(&existing, "mine").unwrap();
    for at in [&link, &fifo, &existing] {
        let o = vb(["import", "fio"]).arg(&job).arg("-o").arg(at).output();
        assert_ne!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
        assert!(stderr(&o).contains("never replaced"), "{}", stderr(&o));
    }
    assert!(!victim.exists(), "the dangling link was followed");
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
    assert_eq!(std::fs::read_to_string(&existing).unwrap(), "mine");
}

#[test]
fn expected_figures_are_bounded_given_once_and_read_back() {
    // --expect iops=1e-300 wrote a finding's percentage as null, and
    // `report` could not read the result back.
    let d = tempfile::tempdir().unwrap();
    let t = d.path().join("t");
    std::fs::create_dir(&t).unwrap();
    let run = |expect: &str, out: &str| {
        vb([
            "run",
            "--engine",
            "null",
            "--duration",
            "300ms",
            "--warmup",
            "0",
        ])
        .args(["--size", "1m", "--expect", expect, "--output"])
        .arg(d.path().join(out))
        .arg("--target")
        .arg(&t)
    };
    let o = run("iops=1e-300", "tiny").output();
    refused_with(&o, "iops 1e-300 is outside 0.01..1000000000");
    assert!(!d.path().join("tiny").exists(), "refused before any output");
    refused_with(&run("iops=5,iops=6", "twice").output(), "gives iops twice");
    refused_with(
        &run("mib_s=5,mibs=6", "twice").output(),
        "gives mib_s twice",
    );
    run("iops=0.01,mib_s=0.001", "least").expect(exit::OK);
    let doc = read_json(&d.path().join("least/result.json"));
    for f in doc["diagnosis"].as_array().unwrap() {
        for (k, v) in f["figures"].as_object().unwrap() {
            assert!(v.is_number(), "{k} is {v} in {f}");
        }
    }
    vb(["report"])
        .arg(d.path().join("least"))
        .arg("-o")
        .arg(d.path().join("rep"))
        .expect(exit::OK);
}

#[test]
fn a_result_with_notes_by_the_million_is_refused_in_one_line() {
    // Each two-byte note became a table row and an HTML paragraph: 6 MB of
    // them took 690 MB to report before the bound.
    let d = tempfile::tempdir().unwrap();
    let mut doc = volbench::report::fixtures::six_patterns();
    doc.notes = vec![String::new(); 200_000];
    let path = write_result(d.path(), &doc);
    let o = vb(["report"])
        .arg(&path)
        .arg("-o")
        .arg(d.path().join("rep"))
        .output();
    refused_with(&o, "200000 notes, more than");
    assert!(!d.path().join("rep").exists());
}

#[test]
fn a_result_with_more_runs_than_any_job_writes_is_refused_in_one_line() {
    // 20,000 runs took 1.2 GB to report; no job runs more than 10,000 (and
    // a suite's warm-up copy), so a file with more is not volbench's.
    let d = tempfile::tempdir().unwrap();
    let mut doc = volbench::report::fixtures::six_patterns();
    let one = doc.runs[0].clone();
    doc.runs = (0..10_002)
        .map(|i| {
            let mut r = one.clone();
            r.name = format!("r{i}");
            r
        })
        .collect();
    doc.diagnosis.clear();
    let path = write_result(d.path(), &doc);
    let o = vb(["report"])
        .arg(&path)
        .arg("-o")
        .arg(d.path().join("rep"))
        .output();
    refused_with(
        &o,
        "10002 runs, more than 10001: no volbench job writes that many",
    );
    assert!(!d.path().join("rep").exists());
}

#[test]
fn an_included_file_that_is_no_job_file_is_not_echoed() {
    // `include /etc/shadow` printed the file's first line (a password
    // hash) in the error; now only where, and what was wrong.
    let d = tempfile::tempdir().unwrap();
    let secret = d.path().join("shadow");
    std::fs::write(&secret, "root:$6$salt$SECRETHASH:19000:0:99999:7:::\n").unwrap();
    let fio = d.path().join("a.fio");
    std::fs::write(
        &fio,
        format!("[j]\nrw=read\ninclude {}\n", secret.display()),
    )
    .unwrap();
    let o = vb(["import", "fio"]).arg(&fio).output();
    refused_with(&o, "line 1: this line: ");
    let vdb = d.path().join("a.vdb");
    std::fs::write(&vdb, format!("include={}\n", secret.display())).unwrap();
    let o2 = vb(["import", "vdbench"]).arg(&vdb).output();
    refused_with(&o2, "line 1: not keyword=value");
    for o in [o, o2] {
        assert!(!stderr(&o).contains("SECRETHASH"), "{}", stderr(&o));
    }
}

#[test]
fn a_hosts_file_setting_given_twice_is_refused_naming_it() {
    // Last-wins ran vm1 with 4 threads where the file also said 2.
    let d = tempfile::tempdir().unwrap();
    let hosts = d.path().join("hosts");
    std::fs::write(&hosts, "vm0\nvm1 threads=2 threads=4\n").unwrap();
    let o = vb(["run", "--dry-run", "--target", "/nonexistent/{host}"])
        .arg("--hosts-file")
        .arg(&hosts)
        .output();
    refused_with(&o, "line 2: 'threads' is given twice");
}

#[test]
fn importers_bound_every_number_and_the_runs_they_make() {
    let d = tempfile::tempdir().unwrap();
    let parm = |rd: &str| {
        let f = d.path().join("parm");
        std::fs::write(
            &f,
            format!(
                "sd=sd1,lun=/tmp/vb-never/f,size=1g\nwd=w,sd=sd1,rdpct=100,xfersize=4k\n\
                 rd=r,wd=w,elapsed=10,iorate=max,{rd}\n"
            ),
        )
        .unwrap();
        f
    };
    // Cut silently at 10,000 points before: still a 10,000-run suite.
    let o = vb(["import", "vdbench"])
        .arg(parm("forthreads=(1-100000,1)"))
        .output();
    refused_with(&o, "'1-100000' expands to more than 10000 values");
    assert!(stderr(&o).contains("parm line 3"), "{}", stderr(&o));
    let o = vb(["import", "vdbench"])
        .arg(parm("forthreads=(5000-5001,1)"))
        .output();
    refused_with(&o, "threads '5000' is not a whole number in 1..4096");
    let o = vb(["import", "vdbench"])
        .arg(parm("forthreads=(1-200,1),forrdpct=(1-100,1)"))
        .output();
    refused_with(&o, "its lists make 20000 runs, more than 10000 in one job");
    // -g1e308i wrote a 309-digit rate into the suite.
    let o = vb([
        "import",
        "diskspd",
        "--",
        "-b4k",
        "-d5",
        "-g1e308i",
        "/tmp/vb-never/x.dat",
    ])
    .output();
    refused_with(&o, "-g1e308i: the rate 1e308 is outside 0.01..1000000000");
}
