//! Hostile trees (`run --ops`, `clean`) as root: a planted or copied
//! marker, another user's files renamed into a live tree, a hard link to a
//! file outside it, another user's rename partner. volbench must delete,
//! overwrite or replace none of them, and say what it left.

use std::os::unix::fs::{MetadataExt, chown};
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::*;
use volbench::error::exit;

/// The unprivileged uid the hostile files belong to.
const NOBODY: u32 = 65534;

fn scratch() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        if let Ok(d) = tempfile::tempdir_in(shm) {
            return d;
        }
    }
    tempfile::tempdir().expect("temp dir")
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

const SHAPE: [&str; 6] = ["--depth", "1", "--width", "2", "--files-per-dir", "3"];

fn ops(target: &Path, out: &Path, op: &str) -> Output {
    let mut args = vec![
        "run",
        "--target",
        s(target),
        "--output",
        s(out),
        "--ops",
        op,
    ];
    args.extend_from_slice(&SHAPE);
    run(&args)
}

fn root_or_skip(test: &str) -> bool {
    if !is_root() {
        skip(test, "needs root to own files as another uid (chown)");
        return false;
    }
    true
}

/// Another user's file with `text` in it.
fn theirs(path: &Path, text: &str) -> PathBuf {
    std::fs::write(path, text).unwrap();
    chown(path, Some(NOBODY), Some(NOBODY)).unwrap();
    path.to_path_buf()
}

/// A directory of the shape's names (d0/f0..), each a user's file.
fn user_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for d in ["d0", "d1"] {
        std::fs::create_dir_all(dir.join(d)).unwrap();
        chown(dir.join(d), Some(NOBODY), Some(NOBODY)).unwrap();
        for f in ["f0", "f1", "f2"] {
            out.push(theirs(&dir.join(d).join(f), "user data"));
        }
    }
    out
}

fn intact(files: &[PathBuf], text: &str) {
    for f in files {
        assert_eq!(
            std::fs::read_to_string(f).unwrap_or_else(|e| panic!("{}: {e}", f.display())),
            text,
            "{}",
            f.display()
        );
    }
}

#[test]
fn a_planted_marker_over_user_files_deletes_nothing() {
    if !root_or_skip("a_planted_marker_over_user_files_deletes_nothing") {
        return;
    }
    let d = scratch();
    let share = d.path().join("share");
    std::fs::create_dir(&share).unwrap();
    let files = user_files(&share);
    // Root's own file in the share: older than any tree there.
    let roots = share.join("d0").join("f3");
    std::fs::write(&roots, "root's").unwrap();
    let shapes = [
        // The bare shape older markers held, as the report's attack wrote it.
        r#"{"created_by":"volbench","depth":1,"width":2,"files_per_dir":4}"#.to_string(),
        // A full-looking marker that names this very directory.
        {
            let m = std::fs::metadata(&share).unwrap();
            format!(
                r#"{{"created_by":"volbench","depth":1,"width":2,"files_per_dir":4,
                "identity":{{"dev":{},"ino":{},"uid":0,"born_s":0,"born_ns":0}}}}"#,
                m.dev(),
                m.ino()
            )
        },
    ];
    for text in shapes {
        let marker = share.join(".volbench-tree.json");
        let _ = std::fs::remove_file(&marker);
        theirs(&marker, &text);
        let o = run(&["clean", "--target", s(&share)]);
        assert_eq!(o.status.code(), Some(exit::REFUSED), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("not one volbench wrote"),
            "{}",
            stderr(&o)
        );
        let o = ops(&share, &d.path().join("o"), "delete");
        assert_eq!(o.status.code(), Some(exit::REFUSED), "{}", stderr(&o));
        intact(&files, "user data");
        intact(std::slice::from_ref(&roots), "root's");
    }
}

#[test]
fn a_marker_copied_from_another_tree_is_refused() {
    if !root_or_skip("a_marker_copied_from_another_tree_is_refused") {
        return;
    }
    let d = scratch();
    let tree = d.path().join("tree");
    let o = ops(&tree, &d.path().join("o1"), "create");
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    let other = d.path().join("other");
    std::fs::create_dir(&other).unwrap();
    let files = user_files(&other);
    std::fs::copy(
        tree.join(".volbench-tree.json"),
        other.join(".volbench-tree.json"),
    )
    .unwrap();
    let o = run(&["clean", "--target", s(&other)]);
    assert_eq!(o.status.code(), Some(exit::REFUSED), "{}", stderr(&o));
    assert!(stderr(&o).contains("another directory"), "{}", stderr(&o));
    let o = ops(&other, &d.path().join("o2"), "delete");
    assert_eq!(o.status.code(), Some(exit::REFUSED), "{}", stderr(&o));
    intact(&files, "user data");
}

#[test]
fn another_users_files_renamed_into_a_live_tree_are_left_and_listed() {
    if !root_or_skip("another_users_files_renamed_into_a_live_tree_are_left_and_listed") {
        return;
    }
    let d = scratch();
    let tree = d.path().join("tree");
    let o = ops(&tree, &d.path().join("o1"), "create");
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    // Between two runs, a user swaps a leaf for a directory of their files
    // (a rename, not a link) and puts one of theirs beside volbench's.
    let home = d.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let files = user_files(&home);
    std::fs::rename(tree.join("d1"), d.path().join("aside")).unwrap();
    std::fs::rename(home.join("d1"), tree.join("d1")).unwrap();
    std::fs::remove_file(tree.join("d0").join("f2")).unwrap();
    let planted = theirs(&tree.join("d0").join("f2"), "user data");
    let moved: Vec<PathBuf> = files
        .iter()
        .filter(|f| f.starts_with(home.join("d1")))
        .map(|f| tree.join("d1").join(f.file_name().unwrap()))
        .chain([planted.clone()])
        .collect();
    for op in ["write", "append", "setattr", "rename", "delete"] {
        let o = ops(&tree, &d.path().join(format!("o-{op}")), op);
        assert_eq!(o.status.code(), Some(exit::OK), "{op}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("untouched, not volbench's"),
            "{op}: {}",
            stderr(&o)
        );
        assert!(
            stderr(&o).contains("another user owns it"),
            "{}",
            stderr(&o)
        );
        if op != "delete" {
            intact(&moved, "user data");
        }
    }
    intact(&moved, "user data");
    // volbench's own two files were deleted; the user's four remain.
    assert!(!tree.join("d0").join("f0").exists());
    let o = run(&["clean", "--target", s(&tree)]);
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    assert!(stderr(&o).contains("d1/"), "{}", stderr(&o));
    assert!(stderr(&o).contains("d0/f2"), "{}", stderr(&o));
    intact(&moved, "user data");
    assert!(
        tree.join(".volbench-tree.json").exists(),
        "kept while foreign files remain"
    );
}

#[test]
fn a_hard_link_to_a_file_outside_the_tree_gets_no_data() {
    if !root_or_skip("a_hard_link_to_a_file_outside_the_tree_gets_no_data") {
        return;
    }
    let d = scratch();
    let tree = d.path().join("tree");
    let o = ops(&tree, &d.path().join("o1"), "create");
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    // Root's own file, made after the tree: only the link count gives it away.
    let outside = d.path().join("precious");
    std::fs::write(&outside, "precious").unwrap();
    std::fs::remove_file(tree.join("d0").join("f1")).unwrap();
    std::fs::hard_link(&outside, tree.join("d0").join("f1")).unwrap();
    for op in ["write", "append", "delete"] {
        let o = ops(&tree, &d.path().join(format!("o-{op}")), op);
        assert_eq!(o.status.code(), Some(exit::OK), "{op}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("other hard links"),
            "{op}: {}",
            stderr(&o)
        );
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "precious");
    }
    assert!(
        tree.join("d0").join("f1").exists(),
        "the link was not unlinked"
    );
}

#[test]
fn rename_never_replaces_another_users_partner_name() {
    if !root_or_skip("rename_never_replaces_another_users_partner_name") {
        return;
    }
    let d = scratch();
    let tree = d.path().join("tree");
    let o = ops(&tree, &d.path().join("o1"), "create");
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    let partner = theirs(&tree.join("d0").join("f1.r"), "theirs");
    let o = ops(&tree, &d.path().join("o2"), "rename");
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    assert!(stderr(&o).contains("f1"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&partner).unwrap(), "theirs");
    assert_eq!(std::fs::metadata(&partner).unwrap().uid(), NOBODY);
    assert!(tree.join("d0").join("f1").exists());
}

#[test]
fn an_interrupted_create_is_redone_without_clean() {
    let d = scratch();
    let tree = d.path().join("tree");
    let o = ops(&tree, &d.path().join("o1"), "create");
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    // What an interrupted create leaves: some files, one cut short.
    std::fs::remove_file(tree.join("d1").join("f2")).unwrap();
    std::fs::write(tree.join("d0").join("f0"), "").unwrap();
    let out = d.path().join("o2");
    let mut args = vec![
        "run",
        "--target",
        s(&tree),
        "--output",
        s(&out),
        "--ops",
        "create,stat",
    ];
    args.extend_from_slice(&SHAPE);
    let o = run(&args);
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    assert!(tree.join("d1").join("f2").exists());
}

/// A tmpfs of a few inodes, unmounted when dropped.
struct SmallFs(PathBuf);

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_create_that_fills_the_file_system_removes_what_it_made() {
    let test = "a_create_that_fills_the_file_system_removes_what_it_made";
    if !root_or_skip(test) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let mnt = d.path().join("small");
    std::fs::create_dir(&mnt).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=4m,nr_inodes=40", "tmpfs"])
        .arg(&mnt)
        .output();
    if !mounted.is_ok_and(|o| o.status.success()) {
        skip(test, "cannot mount a small tmpfs here");
        return;
    }
    let _fs = SmallFs(mnt.clone());
    let tree = mnt.join("tree");
    let out = d.path().join("out");
    let o = run(&[
        "run",
        "--target",
        s(&tree),
        "--output",
        s(&out),
        "--ops",
        "create",
        "--depth",
        "1",
        "--width",
        "2",
        "--files-per-dir",
        "50",
    ]);
    assert_eq!(o.status.code(), Some(exit::TARGET), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("the file system is full"),
        "{}",
        stderr(&o)
    );
    let left: Vec<_> = ["d0", "d1"]
        .iter()
        .flat_map(|d| std::fs::read_dir(tree.join(d)).unwrap())
        .collect();
    assert!(
        left.is_empty(),
        "the partial tree's files were removed: {left:?}"
    );
}
