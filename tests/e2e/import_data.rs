//! An imported fio job's data options reach the suite and the run: verify
//! and buffer_compress_percentage become the suite's verify and compress.

use std::path::Path;

use crate::common::{run, stderr, stdout};

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn fio_verify_and_compress_import_into_a_suite_that_writes_checked_compressible_data() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("t");
    std::fs::create_dir(&t).unwrap();
    let job = tmp.path().join("job.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\ndirectory={}\nsize=4m\nbs=4k\nverify=crc32c\n\
             buffer_compress_percentage=75\nruntime=1\nio_size=1m\n[w]\nrw=randwrite\n",
            t.display()
        ),
    )
    .unwrap();
    let suite = tmp.path().join("s.toml");
    let o = run(&["import", "fio", p(&job), "-o", p(&suite)]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Both are notes: volbench's checksum and check timing differ from fio's.
    assert!(
        stderr(&o).contains("verify=crc32c: verify = true"),
        "{}",
        stderr(&o)
    );
    assert!(
        stderr(&o).contains("buffer_compress_percentage=75: compress = 4"),
        "{}",
        stderr(&o)
    );
    let o = run(&["suite", "run", p(&suite), "--target", p(&t), "--dry-run"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let plan = stdout(&o);
    assert!(
        plan.contains("\"compress\": 4.0") && plan.contains("\"verify\": true"),
        "{plan}"
    );
    let o = run(&["suite", "run", p(&suite), "--target", p(&t)]);
    assert!(o.status.success(), "{}", stderr(&o));
    // The set was written stamped for checking: volbench verify reads it clean.
    let o = run(&["verify", "--target", p(&t)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("0 data error(s)") || stderr(&o).contains("0 data error(s)"));
}
