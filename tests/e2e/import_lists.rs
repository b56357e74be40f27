//! Imports naming several targets, run for real: fio's `filename=a:b` over
//! two existing files, diskspd's -F over existing files without -c, a
//! vdbench rd over two sds of this host. Each target gets its own threads
//! and I/O, the totals are the merge, and writing a file volbench did not
//! create is refused exactly as `volbench run --target FILE` refuses it.

use std::path::Path;

use crate::common::*;
use volbench::error::exit;

fn n(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// Two files of `len` bytes someone else made, with known contents.
fn two_files(dir: &Path, len: usize) -> (String, String, Vec<u8>) {
    let data: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
    let (a, b) = (dir.join("a.dat"), dir.join("b.dat"));
    std::fs::write(&a, &data).unwrap();
    std::fs::write(&b, &data).unwrap();
    (a.display().to_string(), b.display().to_string(), data)
}

/// Every target read, and the run's reads the sum of the targets'.
fn both_read(doc: &serde_json::Value, paths: [&str; 2], threads: [u64; 2]) {
    let run = &doc["runs"][0];
    let targets = run["targets"].as_array().expect("runs[].targets");
    let got: Vec<&str> = targets
        .iter()
        .map(|t| t["path"].as_str().unwrap())
        .collect();
    assert_eq!(got, paths);
    for (t, want) in targets.iter().zip(threads) {
        assert!(n(&t["read"]["ops"]) > 0, "no reads on {}", t["path"]);
        assert_eq!(n(&t["io_threads"]), want, "{}", t["path"]);
    }
    let sum: u64 = targets.iter().map(|t| n(&t["read"]["ops"])).sum();
    assert_eq!(n(&run["totals"]["read"]["ops"]), sum);
}

#[test]
fn fio_filename_over_two_existing_files_reads_both_and_merges() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, data) = two_files(dir.path(), 1 << 20);
    let job = dir.path().join("job.fio");
    std::fs::write(
        &job,
        format!(
            "[two]\nfilename={a}:{b}\nrw=randread\nbs=4k\nnumjobs=2\nioengine=psync\ndirect=0\n\
             time_based\nruntime=1\n"
        ),
    )
    .unwrap();
    let o = vb(["fio", "--json"]).arg(&job).expect(exit::OK);
    assert!(
        stderr(&o).contains("take the 2 files in turn"),
        "{}",
        stderr(&o)
    );
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    // numjobs=2 over two files: one thread each, two in all.
    both_read(&doc, [&a, &b], [1, 1]);
    assert_eq!(doc["runs"][0]["io_threads"], 2);
    assert_eq!(std::fs::read(&a).unwrap(), data);
}

#[test]
fn diskspd_f_reads_existing_files_without_c_and_refuses_writing_them() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, data) = two_files(dir.path(), 1 << 20);
    let o = vb([
        "diskspd", "--json", "-F4", "-d1", "-W0", "-r", "-b4k", "-Sb", &a, &b,
    ])
    .expect(exit::OK);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    // -F4: four threads in all, two per file.
    both_read(&doc, [&a, &b], [2, 2]);
    // Writing a file volbench did not create: the same refusal as `run`.
    let by_run =
        vb(["run", "--target", &a, "--rw", "randwrite", "--buffered"]).expect(exit::REFUSED);
    let by_import =
        vb(["diskspd", "-F2", "-d1", "-W0", "-w100", "-r", "-Sb", &a, &b]).expect(exit::REFUSED);
    let refusal = |o: &std::process::Output| {
        stderr(o)
            .lines()
            .find(|l| l.starts_with("volbench: error:"))
            .map(str::to_string)
            .unwrap_or_default()
    };
    assert!(refusal(&by_run).contains("refusing to write to existing file"));
    assert_eq!(refusal(&by_import), refusal(&by_run));
    assert_eq!(std::fs::read(&a).unwrap(), data);
    assert_eq!(std::fs::read(&b).unwrap(), data);
    // A file that is not there needs -c, said before any I/O.
    let gone = dir.path().join("gone.dat").display().to_string();
    let o = vb(["diskspd", "-F2", "-d1", "-r", &a, &gone]).expect(exit::BAD_INPUT);
    assert!(stderr(&o).contains("give -cSIZE"), "{}", stderr(&o));
    assert!(!Path::new(&gone).exists());
}

#[test]
fn vdbench_rd_over_two_local_sds_runs_them_with_threads_per_sd() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, _) = two_files(dir.path(), 1 << 20);
    let parm = dir.path().join("parm");
    std::fs::write(
        &parm,
        format!(
            "sd=sd1,lun={a}\nsd=sd2,lun={b}\nwd=w,sd=sd*,xfersize=4k,rdpct=100,seekpct=random\n\
             rd=r,wd=w,iorate=max,threads=2,elapsed=1,interval=1,warmup=0\n"
        ),
    )
    .unwrap();
    let o = vb(["vdbench", "--json", "-f"]).arg(&parm).expect(exit::OK);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    both_read(&doc, [&a, &b], [2, 2]);
}
