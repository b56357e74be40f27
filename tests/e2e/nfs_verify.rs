//! `--verify --journal` across runs on an `nfs://` file set, and
//! `volbench verify` of it, against a real server (nfs-ganesha,
//! `common::nfs`): the journal of a set on the server is continued by the
//! next run (over NFSv3, then NFSv4.1, the same set), the set is read back
//! through the client and checked against it, and a block the server then
//! holds stale (an older write put back behind the client's back, as a
//! server that lost a write would) is found as a lost write.

use std::os::unix::fs::FileExt;

use volbench::error::exit;

use crate::common::nfs::NfsServer;
use crate::common::{stderr, stdout, vb};

#[test]
fn a_journal_is_kept_across_runs_on_an_nfs_set_and_verify_finds_a_lost_write() {
    let test = "a_journal_is_kept_across_runs_on_an_nfs_set_and_verify_finds_a_lost_write";
    let Some(srv) = NfsServer::start(test) else {
        return;
    };
    let tmp = tempfile::tempdir().expect("a temporary folder");
    let journal = tmp.path().join("set.journal");
    let j = journal.to_str().expect("a UTF-8 path");
    let run = |v: &str| {
        vb(["run", "--target", &srv.url("set", v)])
            .args([
                "--size",
                "4m",
                "--rw",
                "randwrite",
                "--bs",
                "4k",
                "--iodepth",
                "4",
            ])
            .args(["--verify", "--journal", j, "--io-limit", "8m"])
            .args(["--warmup", "0", "--duration", "60s", "--json"])
            .output()
    };
    let verify = |v: &str| vb(["verify", "--target", &srv.url("set", v), "--journal", j]).output();
    let o = run("3");
    assert!(o.status.success(), "the first run: {}", stderr(&o));
    let file = srv.export.join("set/volbench.0.dat");
    // A copy of what the server holds after the first run's writes.
    let before = std::fs::read(&file).expect("the set's file on the server");
    // The second run continues the journal (over another version).
    let o = run("4.1");
    assert!(o.status.success(), "the second run: {}", stderr(&o));
    let o = verify("3");
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    assert!(stdout(&o).contains("0 data error(s)"), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("checked against journal"),
        "{}",
        stderr(&o)
    );
    // A 4 KiB block the second run wrote again, put back as it was after
    // the first: the server now holds an older write than the journal's.
    let after = std::fs::read(&file).expect("the set's file on the server");
    let block = (0..after.len() / 4096)
        .find(|b| after[b * 4096..(b + 1) * 4096] != before[b * 4096..(b + 1) * 4096])
        .expect("the second run rewrote some block");
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&file)
        .expect("the file on the server");
    f.write_all_at(
        &before[block * 4096..(block + 1) * 4096],
        (block * 4096) as u64,
    )
    .expect("the stale block put back");
    f.sync_all().expect("synced");
    let o = verify("4.1");
    assert_eq!(o.status.code(), Some(exit::RUN_FAILED), "{}", stderr(&o));
    let err = stderr(&o);
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("data error:"))
        .collect();
    assert_eq!(lines.len(), 1, "one bad block: {err}");
    assert!(
        lines[0].contains(&format!("offset {}", block * 4096))
            && lines[0].contains("stale or lost write"),
        "{}",
        lines[0]
    );
}
