//! fio's jobs on one shared file each make their own pass over it; an
//! imported job must walk the file the same way (`--streams each`), or it
//! measures something else: on a volume whose page cache is smaller than
//! the file, jobs that share their passes read the same blocks together
//! and the device serves each block once for all of them, while threads
//! that split the file read every block from the device. Both runs here
//! go on an emulated volume (a capped loop device) inside a memory cgroup
//! that holds the cache below the file's size.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::common::volume::{Volume, VolumeSpec, create_or_skip};
use crate::common::{read_json, skip, stderr};

const MIB: u64 = 1 << 20;

/// Bytes the device has read, from its own counters (sectors, field 3).
fn device_read_bytes(vol: &Volume) -> u64 {
    let name = Path::new(vol.device_str())
        .file_name()
        .expect("a device name")
        .to_string_lossy()
        .into_owned();
    let stat = std::fs::read_to_string(format!("/sys/block/{name}/stat")).expect("device stat");
    let sectors: u64 = stat
        .split_whitespace()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .expect("sectors read");
    sectors * 512
}

fn f(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Runs `args` inside the volume's caps; the run's result and the bytes
/// the device read while it ran (the fill only writes).
fn volbench(vol: &Volume, args: &[&str]) -> (serde_json::Value, u64) {
    let before = device_read_bytes(vol);
    let o = vol.volbench().args(args).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = args
        .iter()
        .position(|a| *a == "--output")
        .and_then(|i| args.get(i + 1))
        .expect("--output given");
    (
        read_json(&Path::new(out).join("result.json")),
        device_read_bytes(vol) - before,
    )
}

#[test]
fn threads_on_one_file_share_their_passes_as_fio_s_jobs_do() {
    let test = "threads_on_one_file_share_their_passes_as_fio_s_jobs_do";
    // 20 MiB/s of reads, 48 MiB of cache for a 192 MiB file: split
    // threads read four disjoint streams, none of which the cache keeps
    // until the next pass; four threads each passing over the same blocks
    // find them cached by whichever is ahead, within 48 MiB of it.
    let spec = VolumeSpec::new(512 * MIB)
        .read_bps(20 * MIB)
        .cache(48 * MIB)
        .ext4();
    let Some(vol) = create_or_skip(test, spec) else {
        return;
    };
    let mnt = vol.mountpoint.clone().expect("mounted");
    let tmp = tempfile::tempdir().unwrap();
    let multiple = |streams: &str| -> f64 {
        let out = tmp.path().join(streams);
        let (doc, served) = volbench(
            &vol,
            &[
                "run",
                "--target",
                mnt.to_str().unwrap(),
                "--rw",
                "read",
                "--bs",
                "128k",
                "--threads",
                "4",
                "--size",
                "192M",
                "--buffered",
                "--warmup",
                "0",
                "--duration",
                "4s",
                "--streams",
                streams,
                "--output",
                out.to_str().unwrap(),
            ],
        );
        let run = &doc["runs"][0];
        let read = f(&run["totals"]["read"]["bytes"]);
        // Before the run the set's pages are dropped (fio's invalidate),
        // so what the threads read the device served once per cached pass.
        read / served.max(1) as f64
    };
    let split = multiple("split");
    let each = multiple("each");
    eprintln!("{test}: read / device-served: split {split:.2}x, each {each:.2}x");
    // Split: every byte the threads read came from the device (the device
    // may have read ahead a little more than was consumed: below 1).
    assert!(
        split < 1.15,
        "split threads read {split:.2}x what the device served"
    );
    // Each: the four passes share the device's reads. How closely the
    // threads keep together varies with the machine's load, but a
    // follower within 48 MiB of the leader reads from the cache, so the
    // multiple stays well above one pass per byte.
    assert!(
        each > 1.3,
        "threads each making their own pass read {each:.2}x what the device served (split: {split:.2}x)"
    );
}

#[test]
fn an_imported_shared_file_job_walks_the_file_as_fio_does() {
    let test = "an_imported_shared_file_job_walks_the_file_as_fio_does";
    if Command::new("fio").arg("--version").output().is_err() {
        skip(test, "fio is not installed (Debian package fio)");
        return;
    }
    // Direct I/O at 16 MiB/s each way: fio's four jobs and volbench's four
    // threads both run at the caps, so their figures agree within the
    // throttle's own unevenness over a 4-second run (its slices are 100 ms:
    // a few percent), whatever else the machine is doing. The image is in
    // memory: on the disk, other tests' writes left the device below its
    // caps for one tool and not the other (11.6 against 15.2 MiB/s).
    let spec = VolumeSpec::new(512 * MIB)
        .read_bps(16 * MIB)
        .write_bps(16 * MIB)
        .ext4()
        .in_memory();
    let Some(vol) = create_or_skip(test, spec) else {
        return;
    };
    let mnt = vol.mountpoint.clone().expect("mounted");
    let tmp = tempfile::tempdir().unwrap();
    let job = tmp.path().join("seq-rw.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\nfilename={}/fio-seq-RW\nrw=rw\nrwmixread=50\nbs=128K\ndirect=1\n\
             numjobs=4\ntime_based\nruntime=4\nioengine=psync\n[file1]\nsize=64M\n\
             offset=8M\noffset_increment=4M\n",
            mnt.display()
        ),
    )
    .unwrap();
    let fio_out = tmp.path().join("fio.json");
    let ok = vol
        .command("fio")
        .args(["--output-format=json", "--output"])
        .arg(&fio_out)
        .arg(&job)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(ok.success(), "fio failed");
    let fio = read_json(&fio_out);
    let fio_rate = |dir: &str| -> f64 {
        fio["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| f(&j[dir]["bw_bytes"]))
            .sum::<f64>()
    };
    let out = tmp.path().join("vb");
    let (doc, _) = volbench(
        &vol,
        &[
            "fio",
            job.to_str().unwrap(),
            "--output",
            out.to_str().unwrap(),
        ],
    );
    let run = &doc["runs"][0];
    assert_eq!(
        run["workload"]["shape"]["streams"],
        serde_json::json!({"kind": "each", "offset": 8 * MIB, "step": 4 * MIB}),
        "{}",
        run["workload"]
    );
    // The file reaches as far as the last job's pass: 8M + 3 x 4M + 64M.
    let file = std::fs::metadata(mnt.join("volbench.0.dat")).unwrap().len();
    assert_eq!(file, 84 * MIB);
    for dir in ["read", "write"] {
        let ours = f(&run["totals"][dir]["mib_s"]) * MIB as f64;
        let theirs = fio_rate(dir);
        let ratio = ours / theirs;
        eprintln!(
            "{test}: {dir} volbench {:.2} MiB/s, fio {:.2} MiB/s ({ratio:.3}x)",
            ours / MIB as f64,
            theirs / MIB as f64
        );
        assert!(
            (0.85..=1.15).contains(&ratio),
            "{dir}: volbench {:.1} MiB/s, fio {:.1} MiB/s ({ratio:.2}x)",
            ours / MIB as f64,
            theirs / MIB as f64
        );
    }
}

#[test]
fn streams_that_cannot_run_are_one_line_before_any_io() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_str().unwrap();
    for (rw, streams, says) in [
        ("read", "each:0,64M", "leaves the last of 2 threads"),
        ("read", "each:100M", "leaves the last of 2 threads"),
        ("randread", "each:4M", "random offsets roam the whole set"),
        ("read", "both", "is not split, each"),
    ] {
        let o = crate::common::volbench()
            .args(["run", "--target", dir, "--rw", rw, "--size", "64M"])
            .args(["--threads", "2", "--duration", "1", "--streams", streams])
            .output()
            .unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{streams}: {err}");
        assert!(
            err.contains(says) && err.trim().lines().count() == 1,
            "{streams}: {err}"
        );
        let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
        assert!(
            left.is_empty(),
            "{streams}: nothing made before the refusal"
        );
    }
}
