//! Writes issued straight from each worker's ring (no copy per write): a
//! file written with the default data stays incompressible as a whole, not
//! only chunk by chunk, holds no two equal 4 KiB blocks, and a second run
//! writing the same offsets in the same order (same seed) writes other
//! bytes, with one I/O in flight (psync) and with eight (io_uring).

use std::collections::HashSet;
use std::path::Path;
use std::process::Command;

use crate::common::*;
use volbench::error::exit;

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// How much `zstd -3` (the command line's default level, a 2 MiB window at
/// this size) shrinks the whole file, or None if zstd is missing.
fn whole_file_ratio(path: &Path) -> Option<f64> {
    let out = Command::new("zstd")
        .args(["-3", "-c", "-T1"])
        .arg(path)
        .output()
        .ok()?;
    let len = std::fs::metadata(path).ok()?.len();
    out.status
        .success()
        .then(|| len as f64 / out.stdout.len() as f64)
}

#[test]
fn default_data_neither_compresses_as_a_file_nor_repeats_a_block_nor_a_run() {
    let test = "default_data_neither_compresses_as_a_file_nor_repeats_a_block_nor_a_run";
    // Under target/: /tmp may be tmpfs, which refuses O_DIRECT.
    let t = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir");
    let mut engines = vec![("psync", "1")];
    if volbench::io::engine::probe_io_uring().is_ok() {
        engines.push(("io_uring", "8"));
    } else {
        skip(test, "io_uring is not available: checked psync only");
    }
    for (engine, depth) in engines {
        let dir = t.path().join(engine);
        // One sequential pass over the whole file: every byte is a run's write.
        let write = || {
            vb(["run", "--target", s(&dir), "--size", "24m", "--rw", "write"])
                .args(["--bs", "64k", "--io-limit", "24m", "--warmup", "0"])
                .args(["--engine", engine, "--iodepth", depth])
                .expect(exit::OK);
            std::fs::read(dir.join("volbench.0.dat")).expect("read the data file")
        };
        let first = write();
        assert_eq!(first.len(), 24 << 20);
        let blocks: HashSet<&[u8]> = first.chunks(4096).collect();
        assert_eq!(
            blocks.len(),
            6144,
            "{engine}: equal 4 KiB blocks in the file"
        );
        match whole_file_ratio(&dir.join("volbench.0.dat")) {
            // The stamps compress a little (about 1.02:1); the pool's
            // repeats would make it several times that.
            Some(r) => assert!(r < 1.05, "{engine}: zstd -3 compressed the file {r:.3}:1"),
            None => skip(test, "zstd is not installed: compressibility not checked"),
        }
        let second = write();
        let same = first
            .chunks(4096)
            .zip(second.chunks(4096))
            .filter(|(a, b)| a == b)
            .count();
        assert_eq!(
            same, 0,
            "{engine}: blocks the second run wrote as the first had"
        );
    }
}
