//! Metadata runs (`run --ops`) on an `nfs://` target against a real server
//! (nfs-ganesha, `common::nfs`), NFSv3 and NFSv4.1: every operation's count
//! in result.json is what the tree's shape fixes, the client's per-call
//! counts are what each operation sends (`io/backend/nfs/tree.rs`), what
//! lands in the exported directory is the tree (names, sizes, nothing
//! left renamed), `clean` leaves the directory as it was, a foreign file
//! or a symlink planted on the server's side is left untouched, and a
//! tree over the bounds is refused before anything is made.

use std::os::unix::fs::{MetadataExt, chown, symlink};
use std::path::{Path, PathBuf};

use volbench::error::exit;

use crate::common::far_tree::{FILES, LEAVES, SHAPE, runs_of, s, tree_files};
use crate::common::nfs::NfsServer;
use crate::common::{read_json, stderr, stdout, vb};

const VERSIONS: [&str; 2] = ["3", "4.1"];
const NOBODY: u32 = 65534;

fn meta(url: &str, out: &Path, ops: &str, shape: &[&str]) -> std::process::Output {
    vb(["run", "--target", url, "--output", s(out), "--ops", ops])
        .args(shape)
        .output()
}

#[test]
fn every_operation_lands_exactly_in_the_export_and_clean_leaves_it_as_it_was() {
    let test = "every_operation_lands_exactly_in_the_export_and_clean_leaves_it_as_it_was";
    let Some(srv) = NfsServer::start(test) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    for v in VERSIONS {
        let name = format!("tree-v{v}");
        let dir = srv.export.join(&name);
        std::fs::create_dir(&dir).unwrap();
        let url = srv.url(&name, v);
        let out = work.path().join(format!("out-{v}"));
        let o = meta(
            &url,
            &out,
            "create,stat,open,read,write,append,setattr,rename,readdir",
            &SHAPE,
        );
        assert_eq!(o.status.code(), Some(exit::OK), "v{v}: {}", stderr(&o));
        let runs = runs_of(&out);
        let names: Vec<&str> = runs.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "create", "stat", "open", "read", "write", "append", "setattr", "rename", "readdir"
            ],
            "v{v}"
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
                "v{v} {}: one operation per file (per leaf for readdir)",
                r.name
            );
            assert_eq!(r.protocol["version"], v, "v{v} {}", r.name);
        }
        // What the client sent, operation by operation (tree.rs's table).
        let v4 = v == "4.1";
        let per = |run: &str, call: &str| runs.iter().find(|r| r.name == run).unwrap().calls(call);
        let want_open = if v4 { FILES } else { 0 };
        for (run, call, n) in [
            ("create", "CREATE", FILES),
            ("create", "WRITE", FILES),
            ("create", "CLOSE", want_open),
            ("open", "ACCESS", if v4 { 0 } else { FILES }),
            ("open", "OPEN", want_open),
            ("open", "CLOSE", want_open),
            ("read", "READ", FILES),
            ("read", "OPEN", want_open),
            ("write", "WRITE", FILES),
            ("append", "WRITE", FILES),
            ("setattr", "SETATTR", FILES),
            ("rename", "LINK", 2 * FILES),
            ("rename", "REMOVE", 2 * FILES),
            ("rename", "RENAME", 0),
            ("readdir", "READDIR", LEAVES),
        ] {
            assert_eq!(per(run, call), n, "v{v} {run}: {call} calls");
        }
        // A file's own LOOKUPs, and the directories' on the way: a phase
        // walks each leaf once (two levels), its handle then kept.
        let walks = 2 * LEAVES;
        for (run, n) in [
            ("stat", FILES),
            ("open", FILES),
            ("read", FILES),
            ("write", FILES),
            ("setattr", FILES),
            ("rename", 3 * FILES),
            // Each leaf's own LOOKUP from its parent, whose walk (one
            // level) is kept: the two threads' shares (leaves 0-3, 4-8)
            // span two parents each.
            ("readdir", LEAVES),
        ] {
            let walked = if run == "readdir" { 4 } else { walks };
            assert_eq!(per(run, "LOOKUP"), n + walked, "v{v} {run}: LOOKUPs");
        }
        // On the server: every file at its name, written (4 KiB) and
        // appended to (4 KiB more), none left renamed.
        let files = tree_files(&dir);
        assert_eq!(files.len() as u64, FILES, "v{v}: {files:?}");
        assert!(
            files
                .iter()
                .all(|(n, len)| *len == 8192 && !n.ends_with(".r")),
            "v{v}: {files:?}"
        );
        assert!(
            files.iter().any(|(n, _)| n == "d2/d1/f9"),
            "v{v}: {files:?}"
        );
        // The tree is reused as it is by the next run: delete empties it.
        let out = work.path().join(format!("del-{v}"));
        let o = meta(&url, &out, "delete", &SHAPE);
        assert_eq!(o.status.code(), Some(exit::OK), "v{v}: {}", stderr(&o));
        assert!(stderr(&o).contains("reusing the volbench tree"), "v{v}");
        let runs = runs_of(&out);
        assert_eq!(runs[0].ops, [("delete".into(), FILES, 0)], "v{v}");
        assert_eq!(runs[0].calls("REMOVE"), FILES, "v{v}");
        assert_eq!(tree_files(&dir), [], "v{v}: delete leaves no file");
        // clean: the skeleton and the marker go; the directory stays, empty.
        let o = vb(["clean", "--target", &url]).expect(exit::OK);
        assert!(
            stdout(&o).contains("removed 0 files and 12 directories"),
            "v{v}: {}",
            stdout(&o)
        );
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            0,
            "v{v}: the export as it was"
        );
    }
}

#[test]
fn directories_are_made_listed_and_removed_one_call_each() {
    let test = "directories_are_made_listed_and_removed_one_call_each";
    let Some(srv) = NfsServer::start(test) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    for v in VERSIONS {
        let name = format!("dirs-v{v}");
        let url = srv.url(&name, v);
        let out = work.path().join(format!("out-{v}"));
        // The target does not exist: made (one level), as a local one is.
        let o = meta(&url, &out, "mkdir,readdir,rmdir", &SHAPE);
        assert_eq!(o.status.code(), Some(exit::OK), "v{v}: {}", stderr(&o));
        let runs = runs_of(&out);
        for (r, call) in runs.iter().zip(["MKDIR", "READDIR", "RMDIR"]) {
            assert_eq!(r.ops, [(r.name.clone(), LEAVES, 0)], "v{v}");
            assert_eq!(r.calls(call), LEAVES, "v{v} {}: {call}", r.name);
        }
        // The leaves are gone, their parents (made when preparing) stay.
        let dir = srv.export.join(&name);
        for p in ["d0", "d1", "d2"] {
            assert_eq!(std::fs::read_dir(dir.join(p)).unwrap().count(), 0, "v{v}");
        }
        vb(["clean", "--target", &url]).expect(exit::OK);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "v{v}");
    }
}

fn plant(path: &Path, text: &str, uid: u32) {
    std::fs::write(path, text).unwrap();
    chown(path, Some(uid), Some(uid)).unwrap();
}

#[test]
fn a_foreign_file_or_a_symlink_planted_on_the_server_is_left_untouched() {
    let test = "a_foreign_file_or_a_symlink_planted_on_the_server_is_left_untouched";
    let Some(srv) = NfsServer::start(test) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let outside = work.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let secret = outside.join("secret");
    std::fs::write(&secret, "theirs").unwrap();
    for v in VERSIONS {
        let name = format!("planted-v{v}");
        let url = srv.url(&name, v);
        let dir = srv.export.join(&name);
        let o = meta(&url, &work.path().join(format!("c-{v}")), "create", &SHAPE);
        assert_eq!(o.status.code(), Some(exit::OK), "v{v}: {}", stderr(&o));
        // Another user's file at a name of the tree: every change passes
        // it by, named.
        let theirs = dir.join("d0/d0/f3");
        std::fs::remove_file(&theirs).unwrap();
        plant(&theirs, "another user's", NOBODY);
        for ops in ["write", "setattr", "rename", "delete"] {
            let out = work.path().join(format!("{ops}-{v}"));
            let o = meta(&url, &out, ops, &SHAPE);
            assert_eq!(
                o.status.code(),
                Some(exit::OK),
                "v{v} {ops}: {}",
                stderr(&o)
            );
            assert!(
                stderr(&o).contains("left 1 files in the tree untouched")
                    && stderr(&o).contains("d0/d0/f3 (another user owns it)"),
                "v{v} {ops}: {}",
                stderr(&o)
            );
            assert_eq!(runs_of(&out)[0].ops[0].1, FILES - 1, "v{v} {ops}");
        }
        assert_eq!(std::fs::read_to_string(&theirs).unwrap(), "another user's");
        assert_eq!(std::fs::metadata(&theirs).unwrap().uid(), NOBODY);
        // A symlink at a file's name: the run is refused before any
        // operation, and what it points to is untouched.
        let link = dir.join("d1/d2/f4");
        symlink(&secret, &link).unwrap();
        let o = meta(&url, &work.path().join(format!("l-{v}")), "create", &SHAPE);
        assert_eq!(o.status.code(), Some(exit::REFUSED), "v{v}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("d1/d2/f4 is a symbolic link"),
            "v{v}: {}",
            stderr(&o)
        );
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
        assert_eq!(std::fs::read_to_string(&secret).unwrap(), "theirs");
        // clean removes what is ours and lists what is not.
        let o = vb(["clean", "--target", &url]).expect(exit::OK);
        assert!(
            stderr(&o).contains("left 2 entries"),
            "v{v}: {}",
            stderr(&o)
        );
        let left = tree_files(&dir);
        assert_eq!(
            left,
            [
                ("d0/d0/f3".to_string(), 14),
                (
                    "d1/d2/f4".to_string(),
                    secret.to_str().unwrap().len() as u64
                )
            ],
            "v{v}"
        );
        assert_eq!(std::fs::read_to_string(&secret).unwrap(), "theirs");
        // A symlink where a directory of the tree goes: refused before any
        // operation, and what it points to is untouched.
        let name = format!("dirlink-v{v}");
        let url = srv.url(&name, v);
        let dir = srv.export.join(&name);
        let o = meta(&url, &work.path().join(format!("m-{v}")), "create", &SHAPE);
        assert_eq!(o.status.code(), Some(exit::OK), "v{v}: {}", stderr(&o));
        std::fs::rename(dir.join("d2"), work.path().join(format!("moved-{v}"))).unwrap();
        symlink(&outside, dir.join("d2")).unwrap();
        let o = meta(&url, &work.path().join(format!("s-{v}")), "stat", &SHAPE);
        assert_eq!(o.status.code(), Some(exit::REFUSED), "v{v}: {}", stderr(&o));
        assert!(stderr(&o).contains("symbolic link"), "v{v}: {}", stderr(&o));
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 1, "v{v}");
    }
}

#[test]
fn a_directory_that_is_not_a_tree_or_a_tree_over_the_bounds_is_refused_before_any_io() {
    let test = "a_directory_that_is_not_a_tree_or_a_tree_over_the_bounds_is_refused_before_any_io";
    let Some(srv) = NfsServer::start(test) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    for v in VERSIONS {
        // A directory of the user's files: refused, untouched, no marker.
        let name = format!("users-v{v}");
        let dir = srv.export.join(&name);
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("notes.txt"), "keep me").unwrap();
        let o = meta(
            &srv.url(&name, v),
            &work.path().join(format!("u-{v}")),
            "create",
            &SHAPE,
        );
        assert_eq!(o.status.code(), Some(exit::REFUSED), "v{v}: {}", stderr(&o));
        assert!(stderr(&o).contains("not empty"), "v{v}: {}", stderr(&o));
        let names: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(names, [dir.join("notes.txt")], "v{v}");
        // A tree of more files than the bound: one line, nothing made.
        let name = format!("huge-v{v}");
        let o = meta(
            &srv.url(&name, v),
            &work.path().join(format!("h-{v}")),
            "create",
            &[
                "--depth",
                "2",
                "--width",
                "10000",
                "--files-per-dir",
                "1000",
            ],
        );
        assert_eq!(
            o.status.code(),
            Some(exit::BAD_INPUT),
            "v{v}: {}",
            stderr(&o)
        );
        assert_eq!(stderr(&o).trim().lines().count(), 1, "v{v}: {}", stderr(&o));
        assert!(!srv.export.join(&name).exists(), "v{v}: nothing made");
    }
}

#[test]
fn a_timed_mix_counts_each_operation_as_the_calls_it_sent() {
    let test = "a_timed_mix_counts_each_operation_as_the_calls_it_sent";
    let Some(srv) = NfsServer::start(test) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    for v in VERSIONS {
        let name = format!("mix-v{v}");
        let url = srv.url(&name, v);
        let o = meta(&url, &work.path().join(format!("c-{v}")), "create", &SHAPE);
        assert_eq!(o.status.code(), Some(exit::OK), "v{v}: {}", stderr(&o));
        // A warm-up, then the measured time: the client's figures start
        // over with it, as the operations' totals do.
        let out = work.path().join(format!("mix-{v}"));
        let mut shape = SHAPE.to_vec();
        shape.extend(["--warmup", "1s", "--duration", "2s"]);
        let o = meta(&url, &out, "stat:40,create:20,delete:20,setattr:20", &shape);
        assert_eq!(o.status.code(), Some(exit::OK), "v{v}: {}", stderr(&o));
        let run = &runs_of(&out)[0];
        let ops = |op: &str| run.ops.iter().find(|o| o.0 == op).map_or(0, |o| o.1);
        assert!(ops("stat") > 20, "v{v}: too few to judge: {:?}", run.ops);
        assert_eq!(run.calls("CREATE"), ops("create"), "v{v}: {:?}", run.ops);
        assert_eq!(run.calls("WRITE"), ops("create"), "v{v}");
        assert_eq!(run.calls("REMOVE"), ops("delete"), "v{v}");
        assert_eq!(run.calls("SETATTR"), ops("setattr"), "v{v}");
        // Every operation but create starts with its file's LOOKUP; the
        // directories' walks come on top.
        let looked = ops("stat") + ops("delete") + ops("setattr");
        assert!(run.calls("LOOKUP") >= looked, "v{v}");
        // What is on the server is what the counts say.
        let made =
            FILES + ops("create") + warm(&out, "create") - ops("delete") - warm(&out, "delete");
        assert_eq!(
            tree_files(&srv.export.join(&name)).len() as u64,
            made,
            "v{v}"
        );
    }
}

/// An operation's count in the warm-up (`ops[].warmup`).
fn warm(out: &Path, op: &str) -> u64 {
    let doc = read_json(&out.join("result.json"));
    doc["runs"][0]["ops"]
        .as_array()
        .and_then(|o| o.iter().find(|x| x["op"] == op))
        .map_or(0, |x| x["warmup"]["ops"].as_u64().unwrap_or(0))
}
