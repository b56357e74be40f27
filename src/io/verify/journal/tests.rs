use super::*;
use std::sync::Arc;

const L: Layout = Layout {
    nfiles: 2,
    file_size: 16384,
};

fn set(id: &str) -> SetIdentity {
    SetIdentity {
        id: id.into(),
        ino: 42,
        dev: 1,
    }
}

fn owner(now: &SetIdentity) -> Owner<'_> {
    Owner {
        now,
        before: None,
        refilled: false,
    }
}

fn err(r: Result<(Journal, Opened)>) -> String {
    r.err().map(|e| e.message).unwrap_or_default()
}

#[test]
fn a_journal_round_trips_and_refuses_other_sets() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("j");
    let a = set("aa");
    let (j, how) = Journal::open(&p, L, 4096, "s1", 0, owner(&a)).unwrap();
    assert_eq!(how, Opened::Created);
    j.issue(3, 7);
    j.acknowledge(3, 7);
    j.flush().unwrap();
    // Not closed: a crash. Reopening for a run is refused.
    drop(j);
    let e = err(Journal::open(&p, L, 4096, "s1", 0, owner(&a)));
    assert!(e.contains("not closed cleanly"), "{e}");
    let j = Journal::open_existing(&p).unwrap();
    assert_eq!((j.ack(3), j.issued(3), j.header().clean), (7, 7, false));
    assert_eq!(j.header().high, 7);
    j.close(true).unwrap();
    drop(j);
    let (j, how) = Journal::open(&p, L, 4096, "s1", 0, owner(&a)).unwrap();
    assert_eq!((how, j.ack(3)), (Opened::Continued, 7));
    j.close(true).unwrap();
    drop(j);
    let other = Layout {
        nfiles: 1,
        file_size: 16384,
    };
    let e = err(Journal::open(&p, other, 4096, "s1", 0, owner(&a)));
    assert!(e.contains("another file set"), "{e}");
    let e = err(Journal::open(&p, L, 4096, "s1c2", 0, owner(&a)));
    assert!(e.contains("another file set"), "{e}");
    // The same shape, another set: refused, left as it was.
    let before = std::fs::read(&p).unwrap();
    let b = set("bb");
    let e = err(Journal::open(&p, L, 4096, "s1", 0, owner(&b)));
    assert!(e.contains("journal belongs to another file set"), "{e}");
    // Set b refilled: a journal of a (not b's earlier fill) stays refused.
    let refill_b = Owner {
        now: &b,
        before: Some(&b),
        refilled: true,
    };
    assert!(err(Journal::open(&p, L, 4096, "s1", 0, refill_b)).contains("another file set"));
    assert_eq!(std::fs::read(&p).unwrap(), before);
    // Set a refilled (now b): its journal starts over, naming b.
    let refill_a = Owner {
        now: &b,
        before: Some(&a),
        refilled: true,
    };
    let (j, how) = Journal::open(&p, L, 4096, "s1", 0, refill_a).unwrap();
    assert_eq!(
        (how, j.ack(3), j.header().set.id.as_str()),
        (Opened::Created, 0, "bb")
    );
    j.close(true).unwrap();
}

#[test]
fn hostile_journals_are_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("j");
    let a = set("aa");
    std::fs::write(&p, b"precious data").unwrap();
    let e = err(Journal::open(&p, L, 4096, "s1", 0, owner(&a)));
    assert!(e.contains("not a volbench journal"), "{e}");
    assert_eq!(std::fs::read(&p).unwrap(), b"precious data");
    // A header claiming a huge count.
    let h = Header {
        journal: MAGIC.into(),
        files: 1,
        file_size: 1 << 50,
        unit: 512,
        blocks: 1 << 41,
        format: "s1".into(),
        set: a.clone(),
        high: 0,
        clean: true,
        sum: None,
    };
    std::fs::write(&p, h.bytes().unwrap()).unwrap();
    let e = Journal::open_existing(&p).err().unwrap();
    assert!(e.message.contains("block bound"), "{e}");
    // A truncated one.
    let k = dir.path().join("k");
    let (j, _) = Journal::open(&k, L, 4096, "s1", 0, owner(&a)).unwrap();
    j.close(true).unwrap();
    drop(j);
    let f = std::fs::OpenOptions::new().write(true).open(&k).unwrap();
    f.set_len(4096 + 10).unwrap();
    let e = Journal::open_existing(&k).err().unwrap();
    assert!(e.message.contains("truncated"), "{e}");
    // A symbolic link.
    std::os::unix::fs::symlink(&k, dir.path().join("l")).unwrap();
    let e = Journal::open_existing(&dir.path().join("l")).err().unwrap();
    assert!(e.message.contains("symbolic link"), "{e}");
}

/// Writes `value` over every entry of the journal at `p`, in place.
fn overwrite_entries(p: &Path, value: u32) {
    let mut bytes = std::fs::read(p).unwrap();
    for c in bytes[HEADER_BYTES..].chunks_exact_mut(4) {
        c.copy_from_slice(&value.to_le_bytes());
    }
    std::fs::write(p, bytes).unwrap();
}

#[test]
fn counters_no_write_made_are_refused_not_judged() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("j");
    let a = set("aa");
    let (j, _) = Journal::open(&p, L, 4096, "s1", 0, owner(&a)).unwrap();
    j.acknowledge(1, 5);
    j.flush().unwrap();
    drop(j); // unclean: no checksum to lean on
    overwrite_entries(&p, 0xFFFF_FFFF);
    let e = Journal::open_existing(&p).err().unwrap();
    assert!(e.message.contains("no write makes"), "{e}");
    assert_eq!(e.kind, crate::error::Kind::Refused);
    // Below the top bit but above every write the header records.
    overwrite_entries(&p, 6);
    let e = Journal::open_existing(&p).err().unwrap();
    assert!(e.message.contains("beyond the 5 writes"), "{e}");
    // A clean journal with one entry changed: its checksum says so.
    let q = dir.path().join("q");
    let (j, _) = Journal::open(&q, L, 4096, "s1", 0, owner(&a)).unwrap();
    j.acknowledge(1, 5);
    j.close(true).unwrap();
    drop(j);
    overwrite_entries(&q, 0);
    let e = Journal::open_existing(&q).err().unwrap();
    assert!(e.message.contains("checksum"), "{e}");
}

#[test]
fn a_journal_truncated_or_deleted_in_use_is_an_error_not_a_signal() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("j");
    let a = set("aa");
    let (j, _) = Journal::open(&p, L, 4096, "s1", 0, owner(&a)).unwrap();
    let j = Arc::new(j);
    let alarmed = Arc::new(AtomicBool::new(false));
    let flag = alarmed.clone();
    j.on_failure(Some(Box::new(move || flag.store(true, Ordering::Relaxed))));
    std::fs::OpenOptions::new()
        .write(true)
        .open(&p)
        .unwrap()
        .set_len(100)
        .unwrap();
    // Stores after the truncation are memory only: no SIGBUS.
    j.acknowledge(2, 9);
    j.issue(2, 9);
    let e = j.flush().err().unwrap();
    assert!(e.message.contains("truncated"), "{e}");
    assert!(alarmed.load(Ordering::Relaxed));
    assert!(j.failure().is_some_and(|f| f.contains("truncated")));
    // Never marked clean, never written again.
    assert!(j.close(true).is_err());
    assert_eq!(std::fs::metadata(&p).unwrap().len(), 100);
    let q = dir.path().join("q");
    let (j, _) = Journal::open(&q, L, 4096, "s1", 0, owner(&a)).unwrap();
    std::fs::remove_file(&q).unwrap();
    j.acknowledge(0, 1);
    let e = j.flush().err().unwrap();
    assert!(e.message.contains("deleted"), "{e}");
}

#[test]
fn a_new_journal_is_allocated_in_full() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("j");
    let a = set("aa");
    let (j, _) = Journal::open(
        &p,
        L,
        4096,
        "s1",
        crate::io::verify::journal_file::FORMED,
        owner(&a),
    )
    .unwrap();
    j.close(true).unwrap();
    let st = crate::io::sys::fs::stat(&p).unwrap();
    assert_eq!(st.st_size as u64, file_len(8).unwrap());
    assert!(st.st_blocks as u64 * 512 >= st.st_size as u64, "no holes");
    let j = Journal::open_existing(&p).unwrap();
    assert_eq!(j.ack(7), crate::io::verify::journal_file::FORMED);
}
