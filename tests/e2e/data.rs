//! The data volbench writes and the proof it comes back: --compress makes
//! blocks compress as asked (measured with the real zstd, gzip and lz4),
//! --dedup leaves the asked share of distinct blocks, --verify and
//! `volbench verify` find a changed byte at its exact offset, a journal
//! catches lost writes, and hostile journal files are refused untouched.

use std::collections::HashSet;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::common::volume::{self, Volume, VolumeSpec};
use crate::common::*;
use volbench::error::exit;

fn tmp() -> tempfile::TempDir {
    // Under target/: /tmp may be tmpfs, which refuses O_DIRECT.
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir")
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// Bytes `tool` makes of `data` (compressed on its own, as storage
/// compresses each chunk), or None if the tool is missing.
fn compressed_len(tool: &str, data: &[u8]) -> Option<usize> {
    let mut child = Command::new(tool)
        .arg("-c")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut stdin = child.stdin.take()?;
    let input = data.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().ok()?;
    writer.join().ok()?.ok()?;
    out.status.success().then_some(out.stdout.len())
}

/// The compression ratio `tool` reaches on 64 KiB chunks of `file`.
fn ratio(tool: &str, file: &Path) -> Option<f64> {
    let data = std::fs::read(file).expect("read the data file");
    let (mut raw, mut packed) = (0usize, 0usize);
    // Every 4th chunk: enough to measure, quick to run.
    for chunk in data.chunks(64 << 10).step_by(4) {
        raw += chunk.len();
        packed += compressed_len(tool, chunk)?;
    }
    Some(raw as f64 / packed as f64)
}

fn write_run(dir: &Path, extra: &[&str]) -> std::process::Output {
    vb(["run", "--target", s(dir), "--size", "8m", "--rw", "write"])
        .args(["--bs", "4k", "--io-limit", "4m", "--warmup", "0"])
        .args(extra)
        .expect(exit::OK)
}

#[test]
fn compress_2_compresses_about_2_to_1_and_1_does_not_compress() {
    let t = tmp();
    let two = t.path().join("two");
    let one = t.path().join("one");
    write_run(&two, &["--compress", "2"]);
    write_run(&one, &[]);
    for tool in ["zstd", "gzip", "lz4"] {
        let Some(r2) = ratio(tool, &two.join("volbench.0.dat")) else {
            skip("compress_2_compresses", &format!("{tool} is not installed"));
            continue;
        };
        assert!(
            (1.8..=2.2).contains(&r2),
            "{tool}: --compress 2 gave {r2:.3}:1"
        );
        let r1 = ratio(tool, &one.join("volbench.0.dat")).unwrap_or(0.0);
        assert!(
            (0.95..=1.05).contains(&r1),
            "{tool}: default data gave {r1:.3}:1"
        );
    }
}

#[test]
fn dedup_3_leaves_a_third_of_the_blocks_distinct() {
    let t = tmp();
    let dir = t.path().join("d");
    // 2 files x 3 MiB = 768 units of 8 KiB: 256 distinct, each 3 times.
    vb(["run", "--target", s(&dir), "--size", "6m", "--files", "2"])
        .args(["--rw", "randwrite", "--bs", "8k", "--io-limit", "2m"])
        .args(["--warmup", "0", "--dedup", "3", "--dedup-unit", "8k"])
        .expect(exit::OK);
    let mut all = 0;
    let mut distinct = HashSet::new();
    for f in ["volbench.0.dat", "volbench.1.dat"] {
        let data = std::fs::read(dir.join(f)).expect("read");
        for unit in data.chunks(8192) {
            all += 1;
            distinct.insert(unit.to_vec());
        }
    }
    assert_eq!(all, 768);
    assert_eq!(distinct.len(), 256, "distinct 8 KiB blocks of {all}");
}

#[test]
fn a_byte_changed_on_disk_is_reported_at_its_exact_offset() {
    let t = tmp();
    let dir = t.path().join("v");
    vb(["run", "--target", s(&dir), "--size", "4m", "--rw", "randrw"])
        .args(["--io-limit", "2m", "--warmup", "0", "--verify"])
        .expect(exit::OK);
    vb(["verify", "--target", s(&dir)]).expect(exit::OK);
    let file = dir.join("volbench.0.dat");
    let mut data = std::fs::read(&file).expect("read");
    let at = 1_234_567;
    data[at] ^= 0x5a;
    std::fs::write(&file, &data).expect("write back");
    let o = vb(["verify", "--target", s(&dir)]).expect(exit::RUN_FAILED);
    let err = stderr(&o);
    assert!(
        err.contains(&format!("volbench.0.dat offset {at}: expected byte")),
        "{err}"
    );
    assert_eq!(err.matches("data error:").count(), 1, "{err}");
    // A run with --verify reading the set finds it too, counts it and fails.
    let out = t.path().join("out");
    let o = vb(["run", "--target", s(&dir), "--size", "4m", "--rw", "read"])
        .args([
            "--bs",
            "64k",
            "--io-limit",
            "4m",
            "--warmup",
            "0",
            "--verify",
        ])
        .args(["--output", s(&out)])
        .expect(exit::RUN_FAILED);
    assert!(
        stderr(&o).contains(&format!("offset {at}")),
        "{}",
        stderr(&o)
    );
    let doc = read_json(&out.join("result.json"));
    assert_eq!(doc["runs"][0]["data_errors"], 1);
}

#[test]
fn a_journal_catches_lost_writes_and_a_stale_journal() {
    let t = tmp();
    let dir = t.path().join("v");
    let journal = t.path().join("v.journal");
    let run = || {
        vb([
            "run",
            "--target",
            s(&dir),
            "--size",
            "2m",
            "--rw",
            "randwrite",
        ])
        .args(["--io-limit", "1m", "--warmup", "0", "--verify"])
        .args(["--journal", s(&journal)])
        .expect(exit::OK)
    };
    run();
    let file = dir.join("volbench.0.dat");
    let before = std::fs::read(&file).expect("read");
    let journal_before = std::fs::read(&journal).expect("read journal");
    // The second run's writes go to the journal; then the data loses them
    // (restored in place, as a failover to a stale replica would).
    run();
    vb(["verify", "--target", s(&dir), "--journal", s(&journal)]).expect(exit::OK);
    let after = std::fs::read(&file).expect("read");
    std::fs::write(&file, &before).expect("restore");
    let o = vb(["verify", "--target", s(&dir), "--journal", s(&journal)]).expect(exit::RUN_FAILED);
    assert!(stderr(&o).contains("stale or lost write"), "{}", stderr(&o));
    // The other way round: the data is current, the journal an old copy.
    std::fs::write(&file, &after).expect("restore");
    std::fs::write(&journal, &journal_before).expect("old journal");
    let o = vb(["verify", "--target", s(&dir), "--journal", s(&journal)]).expect(exit::RUN_FAILED);
    assert!(
        stderr(&o).contains("newer than any write"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn hostile_journals_and_bad_data_flags_are_refused_cleanly() {
    let t = tmp();
    let dir = t.path().join("v");
    let base = |j: &Path| {
        vb(["run", "--target", s(&dir), "--size", "1m", "--rw", "randrw"])
            .args(["--io-limit", "256k", "--warmup", "0", "--verify"])
            .args(["--journal", s(j)])
    };
    // Not a journal: refused, and left as it was.
    let foreign = t.path().join("notes.txt");
    std::fs::write(&foreign, b"keep me").expect("write");
    let o = base(&foreign).expect(exit::REFUSED);
    assert!(
        stderr(&o).contains("not a volbench journal"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(&foreign).expect("read"), b"keep me");
    // A symbolic link, a directory.
    let link = t.path().join("link");
    std::os::unix::fs::symlink(&foreign, &link).expect("symlink");
    assert!(stderr(&base(&link).expect(exit::REFUSED)).contains("symbolic link"));
    assert!(stderr(&base(t.path()).expect(exit::REFUSED)).contains("not a regular file"));
    // A journal of another layout, then a truncated one.
    let j = t.path().join("j");
    base(&j).expect(exit::OK);
    let o = vb(["run", "--target", s(&dir), "--size", "2m", "--verify"])
        .args(["--io-limit", "256k", "--warmup", "0", "--journal", s(&j)])
        .expect(exit::REFUSED);
    assert!(stderr(&o).contains("another file set"), "{}", stderr(&o));
    let len = std::fs::metadata(&j).expect("stat").len();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&j)
        .expect("open");
    f.set_len(len - 100).expect("truncate");
    let o = vb(["verify", "--target", s(&dir), "--journal", s(&j)]).expect(exit::REFUSED);
    assert!(stderr(&o).contains("truncated"), "{}", stderr(&o));
    // A header claiming a huge set.
    let mut h = br#"{"journal":"volbench-journal/v2","files":1,"file_size":1125899906842624,"unit":512,"blocks":2199023255552,"format":"s1","set":{"id":"ab","ino":1,"dev":1},"high":0,"clean":true}"#.to_vec();
    h.resize(4096, b' ');
    std::fs::write(&j, &h).expect("write");
    let o = vb(["verify", "--target", s(&dir), "--journal", s(&j)]).expect(exit::REFUSED);
    assert!(stderr(&o).contains("bound"), "{}", stderr(&o));
    // Flags: bounds named, combinations that cannot work refused.
    for (args, says) in [
        (vec!["--compress", "17"], "16"),
        (vec!["--compress", "x"], "not a number"),
        (vec!["--dedup", "0"], "--dedup 0"),
        (vec!["--dedup", "2", "--verify"], "--dedup"),
        (vec!["--dedup", "2", "--dedup-unit", "3k"], "power of two"),
        (
            vec!["--dedup", "2", "--dedup-unit", "8k"],
            "multiple of --dedup-unit",
        ),
        (vec!["--journal", "j"], "add --verify"),
        (
            vec!["--verify", "--max-data-errors", "0"],
            "--max-data-errors 0",
        ),
        (vec!["--verify", "--size", "2T"], "at most 1GiB"),
    ] {
        let o = vb(["run", "--target", s(&dir), "--dry-run"])
            .args(&args)
            .expect(exit::BAD_INPUT);
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn dry_run_states_the_memory_verify_takes() {
    let t = tmp();
    let o = vb(["run", "--target", s(&t.path().join("v")), "--size", "1g"])
        .args(["--verify", "--dry-run"])
        .expect(exit::OK);
    let all = format!("{}{}", stdout(&o), stderr(&o));
    assert!(
        all.contains("--verify keeps 4 bytes per 4096-byte block: 1.00MiB"),
        "{all}"
    );
}

#[test]
fn a_clean_randrw_verify_run_on_a_loop_device_finds_no_errors() {
    let test = "a_clean_randrw_verify_run_on_a_loop_device_finds_no_errors";
    if let Some(why) = volume::unavailable() {
        skip(test, &why);
        return;
    }
    let vol = Volume::create(test, &VolumeSpec::new(96 << 20).ext4())
        .unwrap_or_else(|e| panic!("{test}: cannot create the volume: {e}"));
    let mnt = vol.mountpoint.clone().expect("ext4 is mounted");
    let dir = mnt.join("set");
    let uring_ok = volbench::io::engine::probe_io_uring().is_ok();
    let engines: &[&str] = if uring_ok {
        &["psync", "io_uring"]
    } else {
        &["psync"]
    };
    for engine in engines {
        for mode in ["--direct", "--buffered"] {
            let o = vb(["run", "--target", s(&dir), "--size", "32m"])
                .args(["--rw", "randrw", "--bs", "4k:50,16k:50", "--threads", "2"])
                .args(["--iodepth", "8", "--engine", engine, mode])
                .args(["--io-limit", "16m", "--warmup", "0", "--verify", "--json"])
                .expect(exit::OK);
            let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
            let run = &doc["runs"][0];
            assert_eq!(run["data_errors"], 0, "{engine} {mode}");
            assert!(run["totals"]["read"]["ops"].as_u64().unwrap_or(0) > 500);
        }
    }
    vb(["verify", "--target", s(&dir)]).expect(exit::OK);
    if !uring_ok {
        skip(test, "io_uring is not available: checked psync only");
    }
}

#[test]
fn verify_runs_on_every_host_and_the_errors_add_up() {
    // ssh to this machine (the remote command run here), two hosts with
    // two targets each: each target keeps its own map.
    let t = tmp();
    let out = t.path().join("out");
    let target = t.path().join("{host}-vol{1,2}");
    let o = vb([
        "run",
        "--hosts",
        "a,b",
        "--ssh-command",
        r#"sh -c 'exec sh -c "$2"' fake"#,
    ])
    .args(["--remote-volbench", env!("CARGO_BIN_EXE_volbench")])
    .args(["--target", s(&target), "--output", s(&out), "--size", "2m"])
    .args(["--rw", "randrw", "--engine", "psync", "--threads", "2"])
    .args(["--io-limit", "1m", "--warmup", "0", "--verify"])
    .expect(exit::OK);
    let doc = read_json(&out.join("result.json"));
    assert_eq!(doc["runs"][0]["data_errors"], 0, "{}", stderr(&o));
    for h in doc["cluster"]["hosts"].as_array().expect("hosts") {
        assert_eq!(h["runs"][0]["data_errors"], 0);
    }
    for t2 in ["a-vol1", "b-vol2"] {
        vb(["verify", "--target", s(&t.path().join(t2))]).expect(exit::OK);
    }
}
