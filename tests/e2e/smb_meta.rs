//! Metadata runs (`run --ops`) on an `smb://` target against a real Samba
//! (`common::smb`): every operation's count in result.json is what the
//! tree's shape fixes, the client's per-command counts are what each
//! operation sends (`io/backend/smb/tree.rs`), what lands in the share's
//! directory is the tree (names, sizes, nothing left renamed), `clean`
//! removes only the tree's own files, a file of another user's at a
//! name of the tree (or a link to one) is passed by, named, and never
//! changed or removed, a link out of the share is never reached through,
//! and a server lost mid-run ends it with one error and what was measured.

use std::os::unix::fs::{MetadataExt, chown};
use std::path::Path;

use volbench::error::exit;

use crate::common::far_tree::{FILES, LEAVES, MARKER, SHAPE, runs_of, s, tree_files};
use crate::common::smb::{PASSWORD, Samba, SambaConfig, USER};
use crate::common::{read_json, stderr, stdout, vb};

const PW: &str = "VOLBENCH_SMB_PASSWORD";
const NOBODY: u32 = 65534;

fn url(s: &Samba, dir: &str) -> String {
    format!("smb://{USER}@127.0.0.1:{}/bench/{dir}", s.port)
}

fn meta(url: &str, out: &Path, ops: &str) -> std::process::Output {
    vb(["run", "--target", url, "--output", s(out), "--ops", ops])
        .env(PW, PASSWORD)
        .args(SHAPE)
        .output()
}

fn clean(url: &str) -> std::process::Output {
    vb(["clean", "--target", url]).env(PW, PASSWORD).output()
}

#[test]
fn smb_every_operation_lands_exactly_in_the_share_and_clean_leaves_it_as_it_was() {
    let test = "smb_every_operation_lands_exactly_in_the_share_and_clean_leaves_it_as_it_was";
    let Some(srv) = Samba::up(test, SambaConfig::default()) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let dir = srv.share().join("tree");
    let url = url(&srv, "tree");
    let out = work.path().join("phases");
    let o = meta(
        &url,
        &out,
        "create,stat,open,read,write,append,setattr,rename,readdir",
    );
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    let runs = runs_of(&out);
    let names: Vec<&str> = runs.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "create", "stat", "open", "read", "write", "append", "setattr", "rename", "readdir"
        ]
    );
    for r in &runs {
        let want = if r.name == "readdir" { LEAVES } else { FILES };
        let bytes = match r.name.as_str() {
            "create" | "read" | "write" | "append" => FILES * 4096,
            _ => 0,
        };
        assert_eq!(
            r.ops,
            [(r.name.clone(), want, bytes)],
            "{}: one operation per file (per leaf for readdir)",
            r.name
        );
        assert_eq!(r.protocol["protocol"], "smb", "{}", r.name);
        assert!(r.protocol["smb"]["dialect"].is_string(), "{}", r.name);
    }
    // What the client sent, operation by operation (tree.rs's table).
    let per = |run: &str, call: &str| runs.iter().find(|r| r.name == run).unwrap().calls(call);
    for (run, call, n) in [
        ("create", "WRITE", FILES),
        ("create", "QUERY_INFO", 0),
        ("stat", "QUERY_INFO", FILES),
        ("open", "QUERY_INFO", 0),
        ("open", "READ", 0),
        ("read", "READ", FILES),
        ("read", "QUERY_INFO", 0),
        // The proof: the attributes, then the owner, on the handle.
        ("write", "QUERY_INFO", 2 * FILES),
        ("write", "WRITE", FILES),
        ("append", "WRITE", FILES),
        ("setattr", "QUERY_INFO", 2 * FILES),
        ("setattr", "SET_INFO", FILES),
        ("setattr", "WRITE", 0),
        // Away and back through one handle.
        ("rename", "SET_INFO", 2 * FILES),
        // Each leaf's one page, then NO_MORE_FILES.
        ("readdir", "QUERY_DIRECTORY", 2 * LEAVES),
    ] {
        assert_eq!(per(run, call), n, "{run}: {call} requests");
    }
    // A file's own CREATE and CLOSE, and the directories' on the way: a
    // phase walks each leaf once (two levels), its path then kept.
    let walks = 2 * LEAVES;
    for run in [
        "create", "stat", "open", "read", "write", "append", "setattr", "rename",
    ] {
        assert_eq!(per(run, "CREATE"), FILES + walks, "{run}: CREATEs");
        assert_eq!(per(run, "CLOSE"), FILES + walks, "{run}: CLOSEs");
    }
    // Each leaf's own CREATE from its parent, whose walk (one level) is
    // kept: the two threads' shares (leaves 0-3, 4-8) span two parents each.
    assert_eq!(per("readdir", "CREATE"), LEAVES + 4, "readdir: CREATEs");
    // On the server: every file at its name, written (4 KiB) and appended
    // to (4 KiB more), none left renamed.
    let files = tree_files(&dir);
    assert_eq!(files.len() as u64, FILES, "{files:?}");
    assert!(
        files
            .iter()
            .all(|(n, len)| *len == 8192 && !n.ends_with(".r")),
        "{files:?}"
    );
    for f in ["d0/d0/f0", "d1/d2/f5", "d2/d1/f9"] {
        assert!(files.iter().any(|(n, _)| n == f), "{f}: {files:?}");
    }
    // The tree is reused as it is by the next run: delete empties it.
    let out = work.path().join("delete");
    let o = meta(&url, &out, "delete");
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    assert!(stderr(&o).contains("reusing the volbench tree"));
    let runs = runs_of(&out);
    assert_eq!(runs[0].ops, [("delete".into(), FILES, 0)]);
    // The proof, then the delete on close, on one handle each.
    assert_eq!(runs[0].calls("QUERY_INFO"), 2 * FILES);
    assert_eq!(runs[0].calls("SET_INFO"), FILES);
    assert_eq!(tree_files(&dir), [], "delete leaves no file");
    // clean: the skeleton and the marker go; the directory stays, empty.
    let o = clean(&url);
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("removed 0 files and 12 directories"),
        "{}",
        stdout(&o)
    );
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "the share's directory as it was"
    );
}

#[test]
fn smb_directories_are_made_listed_and_removed() {
    let test = "smb_directories_are_made_listed_and_removed";
    let Some(srv) = Samba::up(test, SambaConfig::default()) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let url = url(&srv, "dirs");
    let out = work.path().join("out");
    // The target does not exist: made (one level), as a local one is.
    let o = meta(&url, &out, "mkdir,readdir,rmdir");
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    let runs = runs_of(&out);
    for (r, (call, n)) in runs.iter().zip([
        ("CREATE", LEAVES),
        ("QUERY_DIRECTORY", LEAVES),
        ("SET_INFO", LEAVES),
    ]) {
        assert_eq!(r.ops, [(r.name.clone(), LEAVES, 0)]);
        assert!(r.calls(call) >= n, "{}: {call}", r.name);
    }
    // An empty leaf's listing is one page of "." and "..", then the end.
    assert_eq!(runs[1].calls("QUERY_DIRECTORY"), 2 * LEAVES);
    // rmdir: one delete on close a leaf.
    assert_eq!(runs[2].calls("SET_INFO"), LEAVES);
    // The leaves are gone, their parents (made when preparing) stay.
    let dir = srv.share().join("dirs");
    for p in ["d0", "d1", "d2"] {
        assert_eq!(std::fs::read_dir(dir.join(p)).unwrap().count(), 0);
    }
    let o = clean(&url);
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
}

fn plant(path: &Path, text: &str, uid: u32) {
    std::fs::write(path, text).unwrap();
    chown(path, Some(uid), Some(uid)).unwrap();
}

#[test]
fn smb_a_foreign_file_in_the_tree_is_left_untouched_and_clean_removes_only_ours() {
    let test = "smb_a_foreign_file_in_the_tree_is_left_untouched_and_clean_removes_only_ours";
    let Some(srv) = Samba::up(test, SambaConfig::default()) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let url = url(&srv, "planted");
    let dir = srv.share().join("planted");
    let o = meta(&url, &work.path().join("c"), "create");
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    // Another user's file at a name of the tree, made after the tree (its
    // times pass): its owner is what tells, and every change passes it
    // by, named.
    let theirs = dir.join("d0/d0/f3");
    std::fs::remove_file(&theirs).unwrap();
    plant(&theirs, "another user's", NOBODY);
    for ops in ["write", "append", "setattr", "rename", "delete"] {
        let out = work.path().join(ops);
        let o = meta(&url, &out, ops);
        assert_eq!(o.status.code(), Some(exit::OK), "{ops}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("left 1 files in the tree untouched")
                && stderr(&o).contains("d0/d0/f3 (another user owns it)"),
            "{ops}: {}",
            stderr(&o)
        );
        assert_eq!(runs_of(&out)[0].ops[0].1, FILES - 1, "{ops}");
        assert_eq!(
            std::fs::read_to_string(&theirs).unwrap(),
            "another user's",
            "{ops}"
        );
    }
    assert_eq!(std::fs::metadata(&theirs).unwrap().uid(), NOBODY);
    assert_eq!(tree_files(&dir), [("d0/d0/f3".to_string(), 14)]);
    // The tree is empty of ours now: a create finds the foreign file at
    // its name, never reuses it (FILE_CREATE), and passes it by, named,
    // once its owner shows it is not the tree's to make again.
    let out = work.path().join("again");
    let o = meta(&url, &out, "create");
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("d0/d0/f3 (another user owns it)"),
        "{}",
        stderr(&o)
    );
    assert_eq!(runs_of(&out)[0].ops[0].1, FILES - 1);
    assert_eq!(std::fs::read_to_string(&theirs).unwrap(), "another user's");
    assert_eq!(tree_files(&dir).len() as u64, FILES);
    // A file of the user's beside the tree's: clean leaves both foreign
    // files, removes what is ours, and keeps the directories that hold
    // what it left, and the marker.
    let notes = dir.join("d2/d1/notes.txt");
    std::fs::write(&notes, "keep me").unwrap();
    let o = clean(&url);
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    assert!(stderr(&o).contains("left 2 entries"), "{}", stderr(&o));
    assert_eq!(
        tree_files(&dir),
        [
            ("d0/d0/f3".to_string(), 14),
            ("d2/d1/notes.txt".to_string(), 7)
        ]
    );
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "keep me");
    assert!(
        dir.join(MARKER).exists(),
        "the marker stays with what is left"
    );
}

#[test]
fn smb_a_link_at_a_name_of_the_tree_is_never_written_through() {
    let test = "smb_a_link_at_a_name_of_the_tree_is_never_written_through";
    let Some(srv) = Samba::up(test, SambaConfig::default()) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    // Samba resolves a link inside the share to its target (it shows no
    // link as a reparse point without its POSIX extensions): the target
    // then stands for it, and another user's file is passed by, named.
    let victim = srv.share().join("victim");
    plant(&victim, "the user's", NOBODY);
    let url_in = url(&srv, "inlink");
    let dir = srv.share().join("inlink");
    let o = meta(&url_in, &work.path().join("c-in"), "create");
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    std::fs::remove_file(dir.join("d1/d2/f4")).unwrap();
    std::os::unix::fs::symlink(&victim, dir.join("d1/d2/f4")).unwrap();
    for ops in ["write", "setattr", "rename", "delete"] {
        let out = work.path().join(format!("in-{ops}"));
        let o = meta(&url_in, &out, ops);
        assert_eq!(o.status.code(), Some(exit::OK), "{ops}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("d1/d2/f4 (another user owns it)"),
            "{ops}: {}",
            stderr(&o)
        );
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "the user's");
        assert!(
            std::fs::symlink_metadata(dir.join("d1/d2/f4"))
                .unwrap()
                .is_symlink()
        );
    }
    // A link out of the share: Samba refuses to reach through it (`wide
    // links = no`), so the operation on that name fails, and nothing
    // outside is read or written.
    let outside = work.path().join("outside");
    std::fs::write(&outside, "not shared").unwrap();
    let url_out = url(&srv, "outlink");
    let dir = srv.share().join("outlink");
    let o = meta(&url_out, &work.path().join("c-out"), "create");
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    std::fs::remove_file(dir.join("d2/d0/f1")).unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("d2/d0/f1")).unwrap();
    for ops in ["write", "delete"] {
        let o = meta(&url_out, &work.path().join(format!("out-{ops}")), ops);
        assert_eq!(
            o.status.code(),
            Some(exit::RUN_FAILED),
            "{ops}: {}",
            stderr(&o)
        );
        assert!(
            stderr(&o).contains("d2/d0/f1 failed"),
            "{ops}: {}",
            stderr(&o)
        );
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "not shared");
    }
    assert!(
        std::fs::symlink_metadata(dir.join("d2/d0/f1"))
            .unwrap()
            .is_symlink()
    );
}

#[test]
fn smb_a_server_lost_mid_create_ends_the_run_with_what_was_measured() {
    let test = "smb_a_server_lost_mid_create_ends_the_run_with_what_was_measured";
    let Some(mut srv) = Samba::up(test, SambaConfig::default()) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("lost");
    // 20,000 files: seconds of creates over loopback, so the server goes
    // while they run.
    let mut child = vb(["run", "--target", &url(&srv, "lost"), "--output", s(&out)])
        .env(PW, PASSWORD)
        .args(["--ops", "create", "--depth", "1", "--width", "20"])
        .args([
            "--files-per-dir",
            "1000",
            "--file-size",
            "0",
            "--threads",
            "2",
        ])
        .into_command()
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(work.path().join("stderr")).unwrap())
        .spawn()
        .expect("volbench starts");
    // The server goes once creates are landing (seen in the share).
    let first = srv.share().join("lost/d0");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::fs::read_dir(&first).map_or(0, |d| d.count()) < 100 {
        assert!(std::time::Instant::now() < deadline, "no creates landed");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    srv.stop();
    let status = child.wait().expect("volbench ends");
    // One failed run, not a panic or a hang: the removal of what the
    // create made (after the failure) meets a connection that is gone.
    assert_eq!(status.code(), Some(exit::RUN_FAILED));
    let said = std::fs::read_to_string(work.path().join("stderr")).unwrap();
    assert!(!said.contains("panicked"), "{said}");
    let doc = read_json(&out.join("result.json"));
    let error = doc["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("create of smb://") && said.contains(error),
        "{error}\n{said}"
    );
    // What was measured before is kept, with the client's figures.
    let run = &doc["runs"][0];
    assert_eq!(run["protocol"]["protocol"], "smb", "{run}");
    let made = run["ops"][0]["totals"]["ops"].as_u64().unwrap_or(0);
    assert!(made < 20_000, "the server went before the end: {made}");
}
