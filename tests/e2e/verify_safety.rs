//! A verifier that cries wolf is as bad as one that misses: a set written
//! without --verify says it cannot be checked (its own exit, no "errors"),
//! a journal of another set of the same shape is refused, a journal that
//! cannot be kept (a full file system, truncated mid-run) is an error with
//! one line and never a signal, and a changed byte is still caught.

use std::io::BufRead;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use crate::common::hosts::wait_until;
use crate::common::*;
use volbench::error::exit;

fn tmp() -> tempfile::TempDir {
    // Under target/: /tmp may be tmpfs, which refuses O_DIRECT.
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir")
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// A short run on a 2 MiB set, with `extra` flags.
fn run(dir: &Path, rw: &str, extra: &[&str]) -> Vb {
    vb(["run", "--target", s(dir), "--size", "2m", "--rw", rw])
        .args(["--bs", "4k", "--io-limit", "512k", "--warmup", "0"])
        .args(extra)
}

#[test]
fn a_set_written_without_verify_cannot_be_checked_and_says_so() {
    let t = tmp();
    let dir = t.path().join("v");
    // Written only with stamps: verifies clean.
    run(&dir, "randwrite", &["--verify"]).expect(exit::OK);
    vb(["verify", "--target", s(&dir)]).expect(exit::OK);
    // A healthy write without --verify: not corruption, not checkable.
    run(&dir, "randwrite", &[]).expect(exit::OK);
    let o = vb(["verify", "--target", s(&dir)]).expect(exit::UNCHECKABLE);
    let err = stderr(&o);
    assert!(
        err.contains(
            "cannot be checked: written without --verify since its fill (a run without --verify at"
        ),
        "{err}"
    );
    assert!(!err.contains("data error"), "{err}");
    assert!(!stdout(&o).contains("error(s)"), "{}", stdout(&o));
    assert_eq!(err.lines().count(), 1, "{err}");
    // A later --verify read run says the same, before any I/O.
    let out = t.path().join("out");
    let o = run(&dir, "randread", &["--verify", "--output", s(&out)]).expect(exit::UNCHECKABLE);
    assert!(stderr(&o).contains("cannot be checked"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("data error"), "{}", stderr(&o));
    // A --verify run that refills it (other data) makes it checkable again.
    run(&dir, "randrw", &["--verify", "--compress", "2"]).expect(exit::OK);
    vb(["verify", "--target", s(&dir)]).expect(exit::OK);
}

#[test]
fn a_journal_of_another_set_of_the_same_shape_is_refused() {
    let t = tmp();
    let (a, b) = (t.path().join("a"), t.path().join("b"));
    let ja = t.path().join("a.journal");
    run(&a, "randwrite", &["--verify", "--journal", s(&ja)]).expect(exit::OK);
    run(&b, "randwrite", &["--verify"]).expect(exit::OK);
    let kept = std::fs::read(&ja).expect("read journal");
    let o = vb(["verify", "--target", s(&b), "--journal", s(&ja)]).expect(exit::REFUSED);
    let err = stderr(&o);
    assert!(err.contains("journal belongs to another file set"), "{err}");
    assert!(!err.contains("stale or lost write"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    // A run on b with a's journal: refused before any I/O.
    let o = run(&b, "randrw", &["--verify", "--journal", s(&ja)]).expect(exit::REFUSED);
    assert!(stderr(&o).contains("another file set"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&ja).expect("read journal"), kept);
    // Its own set still verifies against it.
    vb(["verify", "--target", s(&a), "--journal", s(&ja)]).expect(exit::OK);
}

#[test]
fn a_journal_whose_counters_no_write_made_is_refused() {
    let t = tmp();
    let dir = t.path().join("v");
    let j = t.path().join("v.journal");
    run(&dir, "randwrite", &["--verify", "--journal", s(&j)]).expect(exit::OK);
    let mut bytes = std::fs::read(&j).expect("read journal");
    for b in &mut bytes[4096..] {
        *b = 0xFF;
    }
    std::fs::write(&j, &bytes).expect("write journal");
    let o = vb(["verify", "--target", s(&dir), "--journal", s(&j)]).expect(exit::REFUSED);
    let err = stderr(&o);
    assert!(err.contains("no write makes"), "{err}");
    assert!(!err.contains("stale or lost write"), "{err}");
}

#[test]
fn a_changed_byte_is_still_caught_against_a_journal() {
    let t = tmp();
    let dir = t.path().join("v");
    let j = t.path().join("v.journal");
    run(&dir, "randrw", &["--verify", "--journal", s(&j)]).expect(exit::OK);
    vb(["verify", "--target", s(&dir), "--journal", s(&j)]).expect(exit::OK);
    let file = dir.join("volbench.0.dat");
    let mut data = std::fs::read(&file).expect("read");
    let at = 777_777;
    data[at] ^= 0x01;
    std::fs::write(&file, &data).expect("write back");
    let o = vb(["verify", "--target", s(&dir), "--journal", s(&j)]).expect(exit::RUN_FAILED);
    let err = stderr(&o);
    assert!(
        err.contains(&format!("volbench.0.dat offset {at}: expected byte")),
        "{err}"
    );
    assert_eq!(err.matches("data error:").count(), 1, "{err}");
}

/// A tmpfs of `size` mounted for one test, unmounted on drop.
struct Tmpfs(tempfile::TempDir);

impl Tmpfs {
    fn mount_or_skip(test: &str, size: &str) -> Option<Tmpfs> {
        if !is_root() {
            skip(test, "needs root to mount a tmpfs");
            return None;
        }
        let dir = tmp();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "vb-journal"])
            .arg(dir.path())
            .status()
            .is_ok_and(|st| st.success());
        if !ok {
            skip(test, "cannot mount a tmpfs here");
            return None;
        }
        Some(Tmpfs(dir))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(self.0.path())
            .status();
    }
}

#[test]
fn a_journal_on_a_full_file_system_is_exit_4_one_line_and_removed() {
    let test = "a_journal_on_a_full_file_system_is_exit_4_one_line_and_removed";
    let Some(fs) = Tmpfs::mount_or_skip(test, "64k") else {
        return;
    };
    // Fill the tmpfs to the last page.
    let filler = fs.0.path().join("filler");
    let mut f = std::fs::File::create(&filler).expect("create filler");
    let page = vec![0x5au8; 4096];
    while std::io::Write::write_all(&mut f, &page).is_ok() {}
    drop(f);
    let t = tmp();
    let dir = t.path().join("v");
    let j = fs.0.path().join("v.journal");
    // 8 MiB in 4 KiB blocks: a 20 KiB journal, with no room for it.
    let o = vb([
        "run",
        "--target",
        s(&dir),
        "--size",
        "8m",
        "--rw",
        "randwrite",
    ])
    .args(["--io-limit", "256k", "--warmup", "0", "--verify"])
    .args(["--journal", s(&j)])
    .output();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(exit::TARGET), "{err}");
    let errors: Vec<&str> = err.lines().filter(|l| l.contains("error")).collect();
    assert_eq!(errors.len(), 1, "{err}");
    assert!(errors[0].contains("no room for journal"), "{err}");
    assert!(!j.exists(), "the new journal was left behind");
    assert!(filler.exists(), "the filler is not volbench's to touch");
}

#[test]
fn a_journal_truncated_mid_run_stops_the_run_with_an_error_not_a_signal() {
    let t = tmp();
    let dir = t.path().join("v");
    let j = t.path().join("v.journal");
    let out = t.path().join("out");
    let mut child = volbench()
        .args(["run", "--target", s(&dir), "--size", "4m", "--rw", "randrw"])
        .args(["--duration", "60s", "--warmup", "0", "--verify"])
        .args(["--journal", s(&j), "--output", s(&out)])
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("volbench starts");
    let lines = std::io::BufReader::new(child.stderr.take().expect("stderr"));
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        for l in lines.lines().map_while(Result::ok) {
            let _ = tx.send(l);
        }
    });
    // "[1/1]" is printed as the run's I/O starts: the journal is open by then.
    let mut seen = Vec::new();
    for l in rx.iter() {
        let start = l.starts_with("[1/1]");
        seen.push(l);
        if start {
            break;
        }
    }
    std::fs::OpenOptions::new()
        .write(true)
        .open(&j)
        .expect("open journal")
        .set_len(100)
        .expect("truncate journal");
    let mut status = None;
    let ended = wait_until(Duration::from_secs(30), || {
        status = child.try_wait().ok().flatten();
        status.is_some()
    });
    if !ended {
        let _ = child.kill();
        panic!("the run went on with its journal truncated");
    }
    seen.extend(rx.iter());
    let err = seen.join("\n");
    let status = status.expect("exited");
    assert_eq!(status.code(), Some(exit::RUN_FAILED), "{status:?}: {err}");
    assert!(
        err.contains("was truncated or resized while in use"),
        "{err}"
    );
    let doc = read_json(&out.join("result.json"));
    assert!(
        doc["error"]
            .as_str()
            .is_some_and(|e| e.contains("truncated")),
        "{doc}"
    );
    assert_eq!(
        doc["runs"].as_array().map(Vec::len),
        Some(1),
        "results kept"
    );
    // The journal stays refused afterwards: never rewritten over the cut.
    assert_eq!(std::fs::metadata(&j).expect("stat").len(), 100);
    let o = vb(["verify", "--target", s(&dir), "--journal", s(&j)]).expect(exit::REFUSED);
    assert!(!stderr(&o).contains("data error"), "{}", stderr(&o));
}
