//! fio's per-direction caps on a mixed job with a `bssplit` size mix, run
//! by fio and by volbench's import of the same job side by side: fio holds
//! reads and writes each at its own cap whatever rwmixread says (and takes
//! `rate_iops=` over a size mix as bytes: the IOPS times the smallest
//! size), and so does the import (`rate_bw = "R,W"`).

use std::path::Path;
use std::process::{Command, Stdio};

use crate::common::{read_json, skip, stderr};

const MIB: f64 = 1048576.0;

fn f(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or(0.0)
}

/// Runs `job` (its [global] without a directory) with fio in `fio_dir` and
/// with `volbench fio` in `vb_dir`: (fio, volbench) read and write figures,
/// in bytes a second (`bw`) or I/Os a second (`iops`).
fn side_by_side(tmp: &Path, job: &str, what: &str) -> ([f64; 2], [f64; 2], serde_json::Value) {
    let (fio_dir, vb_dir) = (
        tmp.join(format!("fio-{what}")),
        tmp.join(format!("vb-{what}")),
    );
    std::fs::create_dir_all(&fio_dir).unwrap();
    std::fs::create_dir_all(&vb_dir).unwrap();
    let file = tmp.join(format!("{what}.fio"));
    std::fs::write(
        &file,
        format!("[global]\ndirectory={}\n{job}", fio_dir.display()),
    )
    .unwrap();
    let json = tmp.join(format!("{what}.json"));
    let ok = Command::new("fio")
        .args(["--output-format=json", "--output"])
        .arg(&json)
        .arg(&file)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(ok.success(), "fio failed on {job}");
    let fio = read_json(&json);
    let sum = |dir: &str, key: &str| -> f64 {
        fio["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| f(&j[dir][key]))
            .sum()
    };
    let out = tmp.join(format!("{what}-out"));
    let o = crate::common::volbench()
        .arg("fio")
        .arg(&file)
        .args(["--target"])
        .arg(&vb_dir)
        .args(["--output"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = read_json(&out.join("result.json"));
    let run = doc["runs"][0].clone();
    let ours = |dir: &str| f(&run["totals"][dir]["mib_s"]) * MIB;
    let theirs = |dir: &str| sum(dir, "bw_bytes");
    (
        [theirs("read"), theirs("write")],
        [ours("read"), ours("write")],
        run,
    )
}

#[test]
fn per_direction_caps_with_a_size_mix_hold_each_direction_as_fio_does() {
    let test = "per_direction_caps_with_a_size_mix_hold_each_direction_as_fio_does";
    if Command::new("fio").arg("--version").output().is_err() {
        skip(test, "fio is not installed (Debian package fio)");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    // rwmixread=30 with reads capped at 12 MiB/s and writes at 4 MiB/s
    // over two jobs: fio runs 24 and 8 MiB/s (75% of the bytes are reads,
    // not 30%), as far below what the page cache takes as to be reached
    // on a busy machine. Each direction's bytes come from ~1,500 I/Os of
    // 4k or 64k over 4 s: the draw of sizes and directions moves a
    // direction's bytes by about 4% (one sigma), so 15% holds.
    let common = "size=32m\nrw=randrw\nrwmixread=30\nbssplit=4k/50:64k/50\nioengine=psync\n\
                  numjobs=2\ntime_based\nruntime=4\n";
    let (fio, ours, run) = side_by_side(tmp.path(), &format!("{common}[j]\nrate=12m,4m\n"), "bw");
    assert_eq!(
        run["workload"]["read_pct"], 75,
        "the caps make the mix: {}",
        run["workload"]
    );
    for (i, (dir, cap)) in [("read", 24.0 * MIB), ("write", 8.0 * MIB)]
        .iter()
        .enumerate()
    {
        let (theirs, mine) = (fio[i], ours[i]);
        eprintln!(
            "{test}: {dir} cap {:.1} MiB/s: fio {:.2}, volbench {:.2} MiB/s",
            cap / MIB,
            theirs / MIB,
            mine / MIB
        );
        assert!(
            (theirs / cap - 1.0).abs() < 0.05,
            "fio {dir}: {theirs} of {cap}"
        );
        assert!(
            (mine / theirs - 1.0).abs() < 0.15,
            "{dir}: volbench {:.2} MiB/s, fio {:.2} MiB/s",
            mine / MIB,
            theirs / MIB
        );
    }
    // rate_iops= over a size mix: fio caps each direction's bytes at the
    // IOPS times the smallest size (3000 x 4k and 1000 x 4k a job), and so
    // does the import: about 24 and 8 MB/s again.
    let (fio, ours, run) = side_by_side(
        tmp.path(),
        &format!("{common}[j]\nrate_iops=3000,1000\n"),
        "iops",
    );
    assert_eq!(run["workload"]["read_pct"], 75, "{}", run["workload"]);
    for (i, (dir, cap)) in [("read", 6000.0 * 4096.0), ("write", 2000.0 * 4096.0)]
        .iter()
        .enumerate()
    {
        let (theirs, mine) = (fio[i], ours[i]);
        eprintln!(
            "{test}: {dir} cap {:.2} MiB/s from rate_iops: fio {:.2}, volbench {:.2} MiB/s",
            cap / MIB,
            theirs / MIB,
            mine / MIB
        );
        assert!(
            (theirs / cap - 1.0).abs() < 0.05,
            "fio {dir}: {theirs} of {cap}"
        );
        assert!(
            (mine / theirs - 1.0).abs() < 0.15,
            "{dir}: volbench {:.2} MiB/s, fio {:.2} MiB/s",
            mine / MIB,
            theirs / MIB
        );
    }
}
