//! End-to-end: a fio job file with `read_iolog=` runs through volbench
//! (`volbench fio JOB`) and replays the log fio's own `write_iolog` wrote:
//! exactly fio's reads, writes and bytes, onto the file the log names, with
//! fio's replay_* options kept or refused by name. Bad logs and options
//! are one line and a non-zero exit before any I/O.

use std::path::{Path, PathBuf};
use std::process::Command;

use volbench::error::exit;

use crate::cli_help::p;
use crate::common::*;

fn have_fio() -> bool {
    Command::new("fio").arg("--version").output().is_ok()
}

/// fio runs 70/30 random 4 KiB I/O on `d/fiofile` and logs it; returns
/// (reads, read bytes, writes, write bytes) from fio's own JSON.
fn fio_logged(d: &Path) -> (u64, u64, u64, u64) {
    let json = d.join("fio.json");
    let o = Command::new("fio")
        .args([
            "--name=rec",
            &format!("--filename={}", d.join("fiofile").display()),
            "--size=8m",
            "--rw=randrw",
            "--rwmixread=70",
            "--bs=4k",
            "--io_size=2m",
            "--ioengine=psync",
            &format!("--write_iolog={}", d.join("fio.iolog").display()),
            "--output-format=json",
            &format!("--output={}", json.display()),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let job = &read_json(&json)["jobs"][0];
    let n = |dir: &str, k: &str| job[dir][k].as_u64().unwrap();
    (
        n("read", "total_ios"),
        n("read", "io_bytes"),
        n("write", "total_ios"),
        n("write", "io_bytes"),
    )
}

fn job_file(d: &Path, name: &str, body: &str) -> PathBuf {
    let path = d.join(name);
    std::fs::write(&path, format!("[rep]\nioengine=psync\n{body}")).unwrap();
    path
}

fn totals(out: &Path) -> (u64, u64, u64, u64) {
    let t = &read_json(&out.join("result.json"))["runs"][0]["totals"];
    let n = |dir: &str, k: &str| t[dir][k].as_u64().unwrap_or(0);
    (
        n("read", "ops"),
        n("read", "bytes"),
        n("write", "ops"),
        n("write", "bytes"),
    )
}

#[test]
fn a_fio_job_with_read_iolog_replays_fio_s_own_log_exactly() {
    if !have_fio() {
        return skip("fio read_iolog job", "fio is not installed");
    }
    let d = tempfile::tempdir().unwrap();
    let fio = fio_logged(d.path());
    // A relative read_iolog is found beside the job file, whatever the
    // current directory; rw/bs are fio's and are taken from the log.
    let job = job_file(
        d.path(),
        "replay.fio",
        "read_iolog=fio.iolog\nreplay_no_stall=1\nrw=randread\nbs=64k\n",
    );
    let o = vb(["import", "fio", p(&job)]).expect(exit::OK);
    let suite = stdout(&o);
    let log = d.path().join("fio.iolog");
    assert!(
        suite.contains(&format!(
            "replay = {{ file = \"{}\", speed = \"max\" }}",
            log.display()
        )),
        "{suite}"
    );
    assert!(suite.contains(&format!(
        "--target '{}'",
        d.path().join("fiofile").display()
    )));
    // fio's file was not made by volbench: writing it needs the flag.
    let before = std::fs::read(d.path().join("fiofile")).unwrap();
    let o = vb(["fio", p(&job), "--output", p(&d.path().join("no"))]).expect(exit::REFUSED);
    assert!(stderr(&o).contains("--allow-overwrite"), "{}", stderr(&o));
    assert_eq!(std::fs::read(d.path().join("fiofile")).unwrap(), before);
    let out = d.path().join("out");
    vb(["fio", p(&job), "--allow-overwrite", "--output", p(&out)]).expect(exit::OK);
    assert_eq!(totals(&out), fio);
    // replay_skip=write leaves fio's reads alone, on a copy of the file
    // named by replay_redirect.
    let copy = d.path().join("copy");
    std::fs::copy(d.path().join("fiofile"), &copy).unwrap();
    let job = job_file(
        d.path(),
        "reads.fio",
        &format!(
            "read_iolog={}\nreplay_no_stall=1\nreplay_skip=write\nreplay_redirect={}\n",
            log.display(),
            copy.display()
        ),
    );
    let out = d.path().join("out-reads");
    vb(["fio", p(&job), "--output", p(&out)]).expect(exit::OK);
    assert_eq!(totals(&out), (fio.0, fio.1, 0, 0));
}

#[test]
fn bad_logs_and_replay_options_are_one_line_before_any_io() {
    let d = tempfile::tempdir().unwrap();
    let target = d.path().join("target");
    std::fs::write(&target, vec![7u8; 1 << 20]).unwrap();
    let hostile = d.path().join("hostile.iolog");
    std::fs::write(
        &hostile,
        format!(
            "fio version 2 iolog\n{t} add\n{t} open\n{t} write 18446744073709551000 4096\n",
            t = target.display()
        ),
    )
    .unwrap();
    let cases: [(&str, &str); 8] = [
        ("read_iolog=missing.iolog\n", "missing.iolog"),
        ("read_iolog=hostile.iolog\n", "beyond any volume"),
        (
            "read_iolog=hostile.iolog\nreplay_scale=0\n",
            "replay_scale=0",
        ),
        (
            "read_iolog=hostile.iolog\nreplay_align=3000\n",
            "power of two",
        ),
        (
            "read_iolog=hostile.iolog\nreplay_skip=reads\n",
            "replay_skip=reads",
        ),
        ("read_iolog=hostile.iolog\nrate_iops=100\n", "rate_iops=100"),
        (
            "replay_no_stall=1\nrw=read\nsize=1m\n",
            "without read_iolog",
        ),
        ("read_iolog=a.log:b.log\n", "one log file a job"),
    ];
    for (i, (body, want)) in cases.iter().enumerate() {
        let job = job_file(d.path(), &format!("bad{i}.fio"), body);
        let o = vb(["fio", p(&job), "--allow-overwrite", "--target", p(&target)])
            .expect(exit::BAD_INPUT);
        let e = stderr(&o);
        assert!(e.contains(want), "{body}: {e}");
        let said: Vec<&str> = e.lines().filter(|l| !l.contains(": note: ")).collect();
        assert_eq!(said.len(), 1, "{body}: {e}");
    }
    assert_eq!(std::fs::read(&target).unwrap(), vec![7u8; 1 << 20]);
}

#[test]
fn a_suite_replay_run_refuses_keys_of_another_workload_by_name() {
    let d = tempfile::tempdir().unwrap();
    let trace = d.path().join("t.csv");
    std::fs::write(
        &trace,
        "# volbench.trace/v1\nissue_ns,complete_ns,op,offset,bytes\n0,,R,0,4096\n",
    )
    .unwrap();
    let cases = [
        ("rw = \"read\"\n", "rw does not go with replay"),
        // A metadata tree's shape: keys once left out of the refused
        // list, and silently unused.
        ("file_size = \"4k\"\n", "file_size does not go with replay"),
        ("width = 4\n", "width does not go with replay"),
        ("\n[[run]]\nname = \"two\"\n", "the suite's only run"),
        ("", "skip 'reads' is none of read"),
    ];
    for (i, (extra, want)) in cases.iter().enumerate() {
        let skip = if extra.is_empty() {
            ", skip = \"reads\""
        } else {
            ""
        };
        let suite = d.path().join(format!("s{i}.toml"));
        std::fs::write(
            &suite,
            format!(
                "name = \"s\"\ntable = \"patterns\"\n[[run]]\nname = \"rep\"\nreplay = {{ file = \"{}\"{skip} }}\n{extra}",
                trace.display()
            ),
        )
        .unwrap();
        let target = d.path().join(format!("t{i}"));
        let o = vb(["suite", "run", p(&suite), "--target", p(&target)]).expect(exit::BAD_INPUT);
        assert!(stderr(&o).contains(want), "{extra}: {}", stderr(&o));
        assert!(!target.exists());
    }
}
