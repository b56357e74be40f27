//! Imported diskspd lines and vdbench file-system parameters run through
//! the real binary with the source tool's meaning: diskspd's `-B`/`-f`
//! window and `-O` depth on a relative path; vdbench's mkdir phase, size
//! distribution and fwdrate list on a temporary tree.

use std::path::Path;
use std::process::Command;

use crate::common::{read_json, stderr};

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn a_diskspd_window_and_depth_on_a_relative_path_run_as_diskspd_means_them() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    // diskspd resolves testfile.dat against its working directory: so does
    // the import, and its I/O stays in the 256K..768K window of each 1 MiB
    // file, which volbench's own file holds as 512 KiB.
    let o = Command::new(env!("CARGO_BIN_EXE_volbench"))
        .current_dir(tmp.path())
        .args(["diskspd", "--output", p(&out)])
        .args([
            "-c1M", "-B256K", "-f768K", "-b4k", "-d1", "-W0", "-F2", "-O4", "-r", "-Sb",
        ])
        .arg("testfile.dat")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = read_json(&out.join("result.json"));
    let run = &doc["runs"][0];
    assert_eq!(run["workload"]["threads"], 2, "{run}");
    assert_eq!(run["workload"]["iodepth"], 4, "{run}");
    let sizes: Vec<u64> = std::fs::read_dir(tmp.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("volbench."))
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.metadata().unwrap().len())
        .collect();
    assert_eq!(sizes, vec![512 << 10], "one file, the window's length");
}

#[test]
fn a_vdbench_tree_with_mkdir_a_size_mix_and_a_fwdrate_list_runs_each_phase() {
    let tmp = tempfile::tempdir().unwrap();
    let anchor = tmp.path().join("fs");
    std::fs::create_dir(&anchor).unwrap();
    let parm = tmp.path().join("fs.parm");
    std::fs::write(
        &parm,
        format!(
            "fsd=f1,anchor={},depth=1,width=3,files=8,sizes=(1k,50,8k,50)\n\
             fwd=mk,fsd=f1,operation=mkdir,threads=1\n\
             fwd=st,fsd=f1,operation=getattr,threads=2\n\
             rd=dirs,fwd=mk,elapsed=30\n\
             rd=look,fwd=st,fwdrate=(40,80),format=yes,elapsed=1,interval=1,warmup=0\n",
            anchor.display()
        ),
    )
    .unwrap();
    let out = tmp.path().join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_volbench"))
        .args(["vdbench", "-f", p(&parm), "--output", p(&out)])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = read_json(&out.join("result.json"));
    let mut got = Vec::new();
    for r in doc["runs"].as_array().unwrap() {
        let o = &r["ops"][0];
        got.push((
            o["op"].as_str().unwrap().to_string(),
            o["totals"]["ops"].as_u64().unwrap(),
            r["workload"]["rate_iops"].as_f64(),
        ));
    }
    // mkdir makes the 3 leaf directories, format=yes the 24 files.
    assert_eq!(got[0], ("mkdir".into(), 3, None), "{got:?}");
    assert_eq!(got[1], ("create".into(), 24, None), "{got:?}");
    assert_eq!(got.len(), 4, "{got:?}");
    for ((op, n, rate), want) in got[2..].iter().zip([40.0, 80.0]) {
        assert_eq!((op.as_str(), *rate), ("stat", Some(want)), "{got:?}");
        // A rate is a ceiling: one second at N/s holds at most about N.
        assert!(*n > 0 && (*n as f64) <= want * 1.5, "{got:?}");
    }
    // Each file's size is one of the distribution's, and both are there.
    let mut sizes = std::collections::BTreeSet::new();
    for d in std::fs::read_dir(&anchor).unwrap().filter_map(|e| e.ok()) {
        if d.file_type().unwrap().is_dir() {
            for f in std::fs::read_dir(d.path()).unwrap().filter_map(|e| e.ok()) {
                if f.file_type().unwrap().is_file() {
                    sizes.insert(f.metadata().unwrap().len());
                }
            }
        }
    }
    assert_eq!(sizes.into_iter().collect::<Vec<_>>(), vec![1024, 8192]);
}
