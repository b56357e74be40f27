//! fio's file engines run through the real binary: the imported phases
//! create, stat and delete the job's file count on a temporary directory.

use std::path::Path;

use crate::common::{read_json, run, stderr};

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// (run name, op, ops) of every run in a result.
fn ops(out: &Path) -> Vec<(String, String, u64)> {
    let doc = read_json(&out.join("result.json"));
    let mut all = Vec::new();
    for r in doc["runs"].as_array().unwrap() {
        for o in r["ops"].as_array().expect("a metadata run has ops") {
            all.push((
                r["name"].as_str().unwrap().to_string(),
                o["op"].as_str().unwrap().to_string(),
                o["totals"]["ops"].as_u64().unwrap(),
            ));
        }
    }
    all
}

#[test]
fn a_fio_filecreate_then_filestat_and_filedelete_job_runs_its_file_count() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("tree");
    std::fs::create_dir(&dir).unwrap();
    let job = tmp.path().join("meta.fio");
    // Two makers at once (30 files each, two clones), then a stat pass and a
    // delete pass over the same 120 files.
    std::fs::write(
        &job,
        format!(
            "[global]\ndirectory={}\nnrfiles=30\nnumjobs=2\nfilesize=4k\ncreate_on_open=1\n\n\
             [mk1]\nioengine=filecreate\n[mk2]\nioengine=filecreate\n\
             [look]\nstonewall\nioengine=filestat\nnumjobs=4\n\
             [rm]\nstonewall\nioengine=filedelete\nnumjobs=4\n",
            dir.display()
        ),
    )
    .unwrap();
    let out = tmp.path().join("out");
    let o = run(&["fio", p(&job), "--output", p(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        ops(&out),
        vec![
            ("mk1-create".into(), "create".into(), 120),
            ("look-stat".into(), "stat".into(), 120),
            ("rm-delete".into(), "delete".into(), 120),
        ]
    );
    // The delete phase left the directory as it found it.
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter(|e| e.file_name().to_string_lossy().starts_with('f'))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_vdbench_fsd_fwd_file_formats_the_tree_then_runs_its_mix() {
    let tmp = tempfile::tempdir().unwrap();
    let anchor = tmp.path().join("fs");
    std::fs::create_dir(&anchor).unwrap();
    let parm = tmp.path().join("fs.parm");
    std::fs::write(
        &parm,
        format!(
            "fsd=f1,anchor={},depth=1,width=4,files=15,size=4k\n\
             fwd=st,fsd=f1,operation=getattr,threads=2,skew=50\n\
             fwd=rd,fsd=f1,operation=read,threads=2\n\
             rd=mix,fwd=(st,rd),fwdrate=max,format=yes,elapsed=1,interval=1,warmup=0\n",
            anchor.display()
        ),
    )
    .unwrap();
    let out = tmp.path().join("out");
    let o = run(&["vdbench", "-f", p(&parm), "--output", p(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let got = ops(&out);
    // format=yes: every file of the 4 x 15 tree made first.
    assert_eq!(got[0], ("mix-format-create".into(), "create".into(), 60));
    let kinds: Vec<&str> = got[1..].iter().map(|(_, op, _)| op.as_str()).collect();
    assert_eq!(kinds, vec!["stat", "read"]);
    assert!(got[1..].iter().all(|(_, _, n)| *n > 0), "{got:?}");
}
