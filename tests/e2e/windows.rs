//! The Windows side: an engine of another system is refused before any I/O,
//! and volbench's overlapped-I/O engine (src/io/engine/overlapped.rs, built
//! for Windows with scripts/windows-build) reads what it should under Wine.

use std::path::{Path, PathBuf};
use std::process::Command;

use volbench::error::exit;

use crate::common::{self, stderr, vb};

#[test]
fn an_engine_of_another_system_is_refused_by_name_before_any_io() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("set");
    let (foreign, system) = if cfg!(windows) {
        ("io_uring", "Linux")
    } else {
        ("overlapped", "Windows")
    };
    for engine in [foreign, "IOCP"] {
        if cfg!(windows) && engine == "IOCP" {
            continue;
        }
        let o = vb(["run", "--target"])
            .arg(&target)
            .args(["--engine", engine, "--size", "8M", "--duration", "1s"])
            .expect(exit::BAD_INPUT);
        let e = stderr(&o);
        assert_eq!(e.trim().lines().count(), 1, "{e}");
        assert!(
            e.contains("--engine overlapped") || e.contains("--engine io_uring"),
            "{e}"
        );
        assert!(e.contains(&format!("runs on {system} only")), "{e}");
        // Nothing was made: not the set, not its lock.
        assert!(
            !target.exists(),
            "{engine}: {} was created",
            target.display()
        );
    }
}

#[test]
fn a_target_path_of_another_system_is_refused_by_name_before_any_io() {
    let (foreign, kind) = if cfg!(windows) {
        ("/dev/sdb", "Linux device")
    } else {
        (r"Z:\io.dat", "Windows path")
    };
    // --dry-run: were the refusal to fail, nothing would be made in the
    // test's working directory either.
    let o = vb(["run", "--target", foreign, "--dry-run"]).expect(exit::BAD_INPUT);
    let e = stderr(&o);
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(
        e.contains("--target") && e.contains(foreign) && e.contains(kind),
        "{e}"
    );
}

/// The harness that compiles the engine file for Windows unchanged
/// (bench/overlapped-loop, `scripts/windows-build harness`).
fn harness() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let exe = std::env::var_os("VOLBENCH_WIN_ENGINE_EXE").map_or_else(
        || root.join("bench/overlapped-loop/target/x86_64-pc-windows-gnu/release/engine.exe"),
        PathBuf::from,
    );
    exe.is_file().then_some(exe)
}

fn wine_path(p: &Path) -> String {
    format!("Z:{}", p.display()).replace('/', "\\")
}

#[test]
fn the_overlapped_engine_reads_what_std_reads_under_wine() {
    let name = "windows::the_overlapped_engine_reads_what_std_reads_under_wine";
    let Some(exe) = harness() else {
        return common::skip(
            name,
            "no engine.exe: run scripts/windows-build up, then scripts/windows-build harness",
        );
    };
    let runner = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/windows-build");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("data.bin");
    // 1 MiB + 4 KiB of bytes that differ block to block, so a read from the
    // wrong offset shows.
    let bytes: Vec<u8> = (0..(1u32 << 20) + 4096)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&file, &bytes).unwrap();
    let o = Command::new(&runner)
        .arg("run")
        .arg(&exe)
        .arg(wine_path(&file))
        .arg("0")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    if !o.status.success() && out.is_empty() {
        return common::skip(
            name,
            &format!("Wine did not start the harness: {}", stderr(&o)),
        );
    }
    // Two full 4 KiB reads with the file's bytes, a read past the end that
    // returns 0, and a timed wait with nothing in flight that returns empty.
    assert!(o.status.success(), "{out}{}", stderr(&o));
    assert!(
        out.contains("results=[4096, 4096, 0] data=true idle_wait=0"),
        "{out}"
    );
    // And under load: 8 in flight for a second, every read whole.
    let o = Command::new(&runner)
        .arg("run")
        .arg(&exe)
        .arg(wine_path(&file))
        .args(["1", "8"])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}{}", stderr(&o));
    let ios: u64 = out
        .split_whitespace()
        .find_map(|w| w.strip_prefix("ios="))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(ios >= 8, "{out}");
}
