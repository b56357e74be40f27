//! `volbench vdbench` as vdbench's own command line: -v validates every
//! read, -j keeps a journal `volbench verify` reads after a crash, the
//! recovery switches are refused naming what to run instead; and an rd's
//! skewed wds that differ in reads and sizes run as one weighed mix.

use std::path::Path;
use std::process::Output;

use crate::common::{read_json, stderr, stdout, vb};
use volbench::error::exit;

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// `volbench ARGS` run in `dir`, where -j keeps its journal.
fn in_dir(dir: &Path, args: &[&str]) -> Output {
    let mut c = vb(args).into_command();
    c.current_dir(dir);
    c.output().unwrap()
}

fn parm(dir: &Path, wds: &str, rd: &str) -> std::path::PathBuf {
    let f = dir.join("parm");
    let lun = dir.join("lun");
    std::fs::write(
        &f,
        format!("sd=sd1,lun={},size=4m\n{wds}rd=r,{rd}\n", lun.display()),
    )
    .unwrap();
    f
}

#[test]
fn minus_v_and_minus_j_verify_every_read_and_keep_a_journal_verify_reads() {
    let d = tempfile::tempdir().unwrap();
    let f = parm(
        d.path(),
        "wd=w,sd=sd1,xfersize=4k,rdpct=50\n",
        "wd=w,iorate=max,elapsed=1,interval=1,threads=2",
    );
    let out = d.path().join("out");
    let o = in_dir(
        d.path(),
        &["vdbench", "-f", p(&f), "-v", "-j", "--output", p(&out)],
    );
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    // Each switch is said with what differs from vdbench's.
    let e = stderr(&o);
    assert!(e.contains("the command line: -v: verify = true"), "{e}");
    assert!(
        e.contains("the command line: -j: verify = true with the journal parm.jnl"),
        "{e}"
    );
    // -v is vdbench's validation here, not --verbose: the run checked reads.
    let doc = read_json(&out.join("result.json"));
    let data = &doc["spec"]["target"]["data"];
    assert_eq!(data["verify"], true, "{data}");
    assert_eq!(data["journal"], "parm.jnl", "{data}");
    let reads = doc["runs"][0]["totals"]["read"]["ops"]
        .as_u64()
        .unwrap_or(0);
    assert!(reads > 0, "{}", doc["runs"][0]);
    assert_eq!(doc["runs"][0]["data_errors"].as_u64().unwrap_or(0), 0);
    // The journal sits in the current directory, as vdbench keeps its own,
    // and `volbench verify` checks the set against it.
    let journal = d.path().join("parm.jnl");
    assert!(journal.is_file(), "no journal at {}", journal.display());
    let o = in_dir(
        d.path(),
        &[
            "verify",
            "--target",
            p(&d.path().join("lun")),
            "--journal",
            "parm.jnl",
        ],
    );
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
}

fn refused(o: &Output) -> String {
    assert_eq!(o.status.code(), Some(exit::BAD_INPUT), "{}", stderr(o));
    let e = stderr(o);
    assert_eq!(e.lines().count(), 1, "one line: {e}");
    e
}

#[test]
fn switches_without_an_equal_are_refused_naming_what_to_run() {
    let d = tempfile::tempdir().unwrap();
    let f = parm(
        d.path(),
        "wd=w,sd=sd1,xfersize=4k,rdpct=50\n",
        "wd=w,iorate=max,elapsed=1,interval=1",
    );
    for (args, says) in [
        (
            vec!["-vr"],
            "-vr: vdbench reads each block back right after writing it",
        ),
        (vec!["-vt"], "-vt: volbench keeps a write counter per block"),
        (
            vec!["-jro"],
            "-jro: journal recovery is `volbench verify --target DIR --journal FILE`",
        ),
        (vec!["--journal", "x.jnl"], "--journal x.jnl: give -j too"),
    ] {
        let mut all = vec!["vdbench", "-f", p(&f), "--dry-run"];
        all.extend(args);
        let e = refused(&in_dir(d.path(), &all));
        assert!(e.contains(says), "{all:?}: {e}");
    }
    assert!(!d.path().join("lun").exists(), "nothing touched");
}

#[test]
fn skewed_workloads_of_other_reads_and_sizes_run_as_one_weighed_mix() {
    let d = tempfile::tempdir().unwrap();
    let f = parm(
        d.path(),
        "wd=a,sd=sd1,xfersize=4k,rdpct=100,skew=70\nwd=b,sd=sd1,xfersize=4k,rdpct=0,skew=30\n",
        "wd=(a,b),iorate=200,elapsed=1,interval=1,threads=2",
    );
    let out = d.path().join("out");
    let o = in_dir(d.path(), &["vdbench", "-f", p(&f), "--output", p(&out)]);
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    assert!(
        stderr(&o)
            .contains("each I/O drawn from the wds by their skews (a 70%, b 30%): read_pct = 70"),
        "{}",
        stderr(&o)
    );
    let doc = read_json(&out.join("result.json"));
    let w = &doc["runs"][0]["workload"];
    assert_eq!(
        (w["read_pct"].as_u64(), w["rate_iops"].as_f64()),
        (Some(70), Some(200.0)),
        "{w}"
    );
    // Reads of one size beside writes of another: refused, as one mix
    // cannot keep them apart.
    let f = parm(
        d.path(),
        "wd=a,sd=sd1,xfersize=4k,rdpct=100,skew=70\nwd=b,sd=sd1,xfersize=64k,rdpct=0,skew=30\n",
        "wd=(a,b),iorate=max,elapsed=1",
    );
    let o = in_dir(d.path(), &["vdbench", "-f", p(&f), "--dry-run"]);
    assert_eq!(o.status.code(), Some(exit::BAD_INPUT), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("reads and writes have different transfer sizes"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn format_restart_completes_the_tree_and_keeps_what_is_there() {
    let d = tempfile::tempdir().unwrap();
    let anchor = d.path().join("tree");
    let f = d.path().join("fs.parm");
    std::fs::write(
        &f,
        format!(
            "fsd=fsd1,anchor={},depth=1,width=2,files=5,size=4k\n\
             fwd=fwd1,fsd=fsd1,operation=read,threads=1\n\
             rd=rd1,fwd=fwd1,fwdrate=max,format=restart,elapsed=1,interval=1\n",
            anchor.display()
        ),
    )
    .unwrap();
    // (the format phase's creates, the files it kept)
    let format = |out: &str| {
        let out = d.path().join(out);
        let o = in_dir(d.path(), &["vdbench", "-f", p(&f), "--output", p(&out)]);
        assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("format=restart: a create phase"),
            "{}",
            stderr(&o)
        );
        let doc = read_json(&out.join("result.json"));
        let run = &doc["runs"][0];
        assert_eq!(run["name"], "rd1-format-create", "{run}");
        let op = &run["ops"][0];
        (
            op["totals"]["ops"].as_u64().unwrap(),
            op["kept"].as_u64().unwrap_or(0),
        )
    };
    assert_eq!(format("o1"), (10, 0), "a new tree is made whole");
    std::fs::remove_file(anchor.join("d1/f3")).unwrap();
    assert_eq!(
        format("o2"),
        (1, 9),
        "the missing file made, the others kept"
    );
}
