//! fio's file engines (in the shape of fio's filecreate/filestat/filedelete
//! examples) imported as volbench's metadata phases on one flat tree.

use super::*;
use crate::spec::meta::MetaOp;

fn ops_of(j: &JobSpec) -> Vec<(String, MetaOp, u32)> {
    j.runs
        .iter()
        .map(|r| {
            let m = r.meta.as_ref().expect("a metadata run");
            (r.name.clone(), m.ops[0].op, r.threads)
        })
        .collect()
}

#[test]
fn fio_filecreate_jobs_at_once_are_one_create_phase_over_all_their_files() {
    // Three jobs with no stonewall, two clones each, 40 files per clone.
    let imp = fio_ok(
        "[global]\nioengine=filecreate\ndirectory=/mnt/meta\nnrfiles=40\nfilesize=4k\n\
         create_on_open=1\nopenfiles=1\nfallocate=none\nnumjobs=2\n\n[a]\n[b]\n[c]\n",
    );
    assert_eq!(imp.target, "/mnt/meta");
    let j = job_of(&imp);
    assert_eq!(ops_of(&j), vec![("a-create".into(), MetaOp::Create, 6)]);
    let m = j.runs[0].meta.as_ref().unwrap();
    assert_eq!((m.depth, m.files_per_dir), (0, 240));
    // fio's filecreate times the open only: its files stay empty.
    assert_eq!(m.file_size[0].bytes, 0);
    assert!(m.shared_dirs, "the jobs share fio's one directory");
    assert!(m.whole_tree);
    // fio's names are not volbench's: the user is told.
    assert!(
        imp.printed()
            .iter()
            .any(|n| n.contains("directory=/mnt/meta"))
    );
}

#[test]
fn fio_filestat_then_filedelete_gets_the_files_made_first() {
    let imp = fio_ok(
        "[global]\nioengine=filestat\ndirectory=/d\nnrfiles=100\nfilesize=8k\nthread\n\n\
         [look]\nstat_type=lstat\n\n[drop]\nstonewall\nioengine=filedelete\nruntime=20\n",
    );
    let j = job_of(&imp);
    assert_eq!(
        ops_of(&j),
        vec![
            ("look-layout-create".into(), MetaOp::Create, 1),
            ("look-stat".into(), MetaOp::Stat, 1),
            ("drop-delete".into(), MetaOp::Delete, 1),
        ]
    );
    let m = j.runs[1].meta.as_ref().unwrap();
    assert_eq!((m.files_per_dir, m.file_size[0].bytes), (100, 8192));
    assert!(!m.shared_dirs, "one thread needs no shared directory");
    // runtime without time_based caps the phase.
    assert_eq!(j.runs[2].duration_s, 20.0);
    // The untimed layout fio does is a run of its own here: said aloud.
    assert!(
        imp.printed()
            .iter()
            .any(|n| n.contains("lays the files out"))
    );
}

#[test]
fn fio_file_engines_refuse_what_they_cannot_map_by_name() {
    // A file engine beside block I/O in one file.
    let e = fio_err(
        "[global]\ndirectory=/d\n[mk]\nioengine=filecreate\nnrfiles=5\n[rd]\nstonewall\nrw=read\nsize=1m\n",
    );
    assert!(e.contains("[rd]") && e.contains("import them apart"), "{e}");
    // Options with no meaning for a tree are refused with the engine named.
    let e = fio_err("[j]\nioengine=filestat\ndirectory=/d\nnrfiles=5\nrate_iops=100\n");
    assert!(
        e.contains("line 5: rate_iops=100") && e.contains("ioengine=filestat"),
        "{e}"
    );
    let e = fio_err("[j]\nioengine=filecreate\ndirectory=/d\ntime_based=1\nruntime=10\n");
    assert!(e.contains("time_based=1"), "{e}");
    let e = fio_err("[j]\nioengine=filestat\ndirectory=/d\nstat_type=fstat\n");
    assert!(
        e.contains("stat_type=fstat") && e.contains("stat, lstat or statx"),
        "{e}"
    );
    let e = fio_err("[j]\nioengine=filecreate\nfilename=/d/x\n");
    assert!(
        e.contains("filename=/d/x") && e.contains("directory="),
        "{e}"
    );
    // Groups over different file counts would need two trees.
    let e = fio_err(
        "[global]\ndirectory=/d\n[a]\nioengine=filecreate\nnrfiles=10\n[b]\nstonewall\nioengine=filestat\nnrfiles=20\n",
    );
    assert!(e.contains("[b]") && e.contains("one tree"), "{e}");
    // Directory engines are not volbench's file operations: refused by name.
    let e = fio_err("[j]\nioengine=dircreate\ndirectory=/d\n");
    assert!(e.contains("ioengine=dircreate"), "{e}");
}
