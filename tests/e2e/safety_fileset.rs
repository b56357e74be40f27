//! The file set volbench keeps in a directory target is the only thing it
//! may write there: nothing planted in the set (symlinks to devices or to a
//! user's files, FIFOs, a forged marker) may make it write, truncate or hang,
//! and two runs on one set do not trample each other. Each test runs the real
//! binary against a real mounted ext4 on a loop device.

use std::io::{BufRead, BufReader};
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;
use volbench::error::exit;

use crate::common::volume::{Volume, VolumeSpec, create_or_skip};
use crate::common::{stderr, volbench};

const MIB: u64 = 1 << 20;

/// A mounted 64 MiB ext4 volume, or None after a loud skip.
fn volume(test: &str) -> Option<Volume> {
    create_or_skip(test, VolumeSpec::new(64 * MIB).ext4())
}

fn set_dir(vol: &Volume) -> PathBuf {
    vol.mountpoint
        .as_ref()
        .expect("ext4 is mounted")
        .join("set")
}

/// Runs the binary with a deadline: a hang is a failure, not a stuck suite.
fn run_with_deadline(mut cmd: Command, limit: Duration) -> Output {
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the volbench binary starts");
    let pid = child.id() as i32;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(out) => out.expect("volbench is waited for"),
        Err(_) => {
            // SAFETY: signalling the child this test started.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("volbench did not finish within {limit:?}: it hangs");
        }
    }
}

/// A short randread of `size` over the set, the most harmless run there is.
fn randread(dir: &Path, size: &str) -> Command {
    randread_for(dir, size, "200ms")
}

fn randread_for(dir: &Path, size: &str, duration: &str) -> Command {
    let mut cmd = volbench();
    cmd.args(["run", "--target"])
        .arg(dir)
        .args(["--size", size, "--rw", "randread", "--duration", duration])
        .args(["--warmup", "0", "--interval", "100ms"]);
    cmd
}

fn run(cmd: Command) -> Output {
    run_with_deadline(cmd, Duration::from_secs(60))
}

/// Makes a filled set of one 4 MiB file and checks it ran.
fn make_set(dir: &Path) {
    let o = run(randread(dir, "4m"));
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    assert!(dir.join("volbench.0.dat").is_file());
}

fn assert_refused_naming(o: &Output, path: &Path) {
    let err = stderr(o);
    assert_eq!(
        o.status.code(),
        Some(exit::REFUSED),
        "expected a refusal (exit 3): {err}"
    );
    assert!(
        err.contains(&path.display().to_string()),
        "the refusal names {}: {err}",
        path.display()
    );
}

fn has_ext4(device: &Path) -> bool {
    let out = Command::new("blkid")
        .args(["-p", "-o", "value", "-s", "TYPE"])
        .arg(device)
        .output()
        .expect("blkid runs");
    String::from_utf8_lossy(&out.stdout).trim() == "ext4"
}

#[test]
fn a_symlink_in_the_set_to_a_mounted_device_is_refused_and_the_device_survives() {
    let Some(vol) = volume("symlink_to_device") else {
        return;
    };
    let dir = set_dir(&vol);
    make_set(&dir);
    let file = dir.join("volbench.0.dat");
    std::fs::remove_file(&file).unwrap();
    // The volume's own device, mounted: refilling through the link would
    // wipe the file system the set lives on.
    symlink(&vol.device, &file).unwrap();
    for size in ["4m", "8m"] {
        let o = run(randread(&dir, size));
        assert_refused_naming(&o, &file);
        assert!(has_ext4(&vol.device), "the mounted ext4 was overwritten");
        assert!(
            std::fs::symlink_metadata(&file)
                .unwrap()
                .file_type()
                .is_symlink(),
            "the planted link is left alone"
        );
    }
    // --allow-overwrite is about regular files the user owns: it never makes
    // volbench follow a link.
    let mut cmd = randread(&dir, "8m");
    cmd.arg("--allow-overwrite");
    let o = run(cmd);
    assert_refused_naming(&o, &file);
    assert!(has_ext4(&vol.device));
}

#[test]
fn a_symlink_in_the_set_to_a_users_file_leaves_the_file_untouched() {
    let Some(vol) = volume("symlink_to_file") else {
        return;
    };
    let dir = set_dir(&vol);
    make_set(&dir);
    let precious = vol.mountpoint.as_ref().unwrap().join("thesis.txt");
    std::fs::write(&precious, "years of work").unwrap();
    let file = dir.join("volbench.0.dat");
    std::fs::remove_file(&file).unwrap();
    symlink(&precious, &file).unwrap();
    // Same size (the set looks reusable) and another size (a refill).
    for size in ["4m", "8m"] {
        let o = run(randread(&dir, size));
        assert_refused_naming(&o, &file);
        assert_eq!(std::fs::read_to_string(&precious).unwrap(), "years of work");
    }
}

#[test]
fn a_dangling_symlink_in_the_set_creates_nothing_outside_it() {
    let Some(vol) = volume("symlink_dangling") else {
        return;
    };
    let dir = set_dir(&vol);
    make_set(&dir);
    let outside = vol.mountpoint.as_ref().unwrap().join("outside.dat");
    let file = dir.join("volbench.0.dat");
    std::fs::remove_file(&file).unwrap();
    symlink(&outside, &file).unwrap();
    let o = run(randread(&dir, "4m"));
    assert_refused_naming(&o, &file);
    assert!(!outside.exists(), "a file was created outside the set");
}

/// A second, unmounted loop device with an ext4 on it: the kind of device
/// only the mounted/held check used to protect, and here nothing did.
struct SpareDevice {
    device: PathBuf,
    _dir: tempfile::TempDir,
}

impl SpareDevice {
    fn new() -> SpareDevice {
        let dir = tempfile::tempdir().unwrap();
        let image = dir.path().join("spare.img");
        std::fs::File::create(&image)
            .unwrap()
            .set_len(16 * MIB)
            .unwrap();
        let out = Command::new("losetup")
            .args(["-f", "--show"])
            .arg(&image)
            .output()
            .expect("losetup runs");
        assert!(out.status.success(), "losetup: {}", stderr(&out));
        let device = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        let spare = SpareDevice { device, _dir: dir };
        let st = Command::new("mkfs.ext4")
            .args(["-q", "-F"])
            .arg(&spare.device)
            .status()
            .unwrap();
        assert!(st.success());
        spare
    }
}

impl Drop for SpareDevice {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.device).status();
    }
}

#[test]
fn a_set_directory_planted_as_a_symlink_to_a_device_is_refused() {
    let Some(vol) = volume("files_n_symlink") else {
        return;
    };
    let spare = SpareDevice::new();
    let dir = set_dir(&vol);
    std::fs::create_dir(&dir).unwrap();
    // A sweep over file counts keeps one set per count in files-N/; a link
    // planted there must not turn the run into a device run.
    let sub = dir.join("files-1");
    symlink(&spare.device, &sub).unwrap();
    let mut cmd = volbench();
    cmd.args(["run", "--target"])
        .arg(&dir)
        .args(["--size", "4m", "--files", "1,2", "--rw", "randwrite"])
        .args(["--duration", "200ms", "--warmup", "0", "--allow-overwrite"]);
    let o = run(cmd);
    assert_refused_naming(&o, &sub);
    assert!(has_ext4(&spare.device), "the device was overwritten");
}

#[test]
fn a_mounted_device_target_is_never_written_even_with_allow_overwrite() {
    let Some(vol) = volume("mounted_device") else {
        return;
    };
    let mut cmd = volbench();
    cmd.args(["run", "--target"])
        .arg(&vol.device)
        .args(["--size", "4m", "--rw", "randwrite", "--duration", "200ms"])
        .args(["--warmup", "0", "--allow-overwrite"]);
    let o = run(cmd);
    assert_refused_naming(&o, &vol.device);
    assert!(has_ext4(&vol.device));
}

#[test]
fn the_backing_file_of_a_mounted_loop_device_is_never_written() {
    let Some(vol) = volume("backing_file") else {
        return;
    };
    // Writing the image writes the mounted file system on top of it.
    let mut cmd = volbench();
    cmd.args(["run", "--target"])
        .arg(&vol.image)
        .args(["--size", "4m", "--rw", "randwrite", "--duration", "200ms"])
        .args(["--warmup", "0", "--allow-overwrite"]);
    let o = run(cmd);
    assert_refused_naming(&o, &vol.image);
    assert!(stderr(&o).contains(vol.device_str()), "{}", stderr(&o));
    assert!(has_ext4(&vol.device));
}

#[test]
fn a_marker_that_is_a_symlink_is_not_written_through() {
    let Some(vol) = volume("marker_symlink") else {
        return;
    };
    let dir = set_dir(&vol);
    make_set(&dir);
    let precious = vol.mountpoint.as_ref().unwrap().join("config.json");
    std::fs::write(&precious, "{\"keep\": true}").unwrap();
    let marker = dir.join(".volbench-fileset.json");
    std::fs::remove_file(&marker).unwrap();
    symlink(&precious, &marker).unwrap();
    // Another size rewrites the marker.
    let o = run(randread(&dir, "8m"));
    assert_refused_naming(&o, &marker);
    assert_eq!(
        std::fs::read_to_string(&precious).unwrap(),
        "{\"keep\": true}"
    );
}

#[test]
fn a_planted_marker_does_not_make_a_users_file_volbenchs() {
    let Some(vol) = volume("marker_planted") else {
        return;
    };
    let dir = set_dir(&vol);
    make_set(&dir);
    let marker = std::fs::read(dir.join(".volbench-fileset.json")).unwrap();
    // A user's own directory holding a file of volbench's name, with a marker
    // copied from a real set: it lists another set's files, not this one.
    let other = vol.mountpoint.as_ref().unwrap().join("other");
    std::fs::create_dir(&other).unwrap();
    let users = other.join("volbench.0.dat");
    std::fs::write(&users, vec![7u8; 8192]).unwrap();
    std::fs::write(other.join(".volbench-fileset.json"), &marker).unwrap();
    let o = run(randread(&other, "4m"));
    assert_refused_naming(&o, &users);
    assert_eq!(std::fs::read(&users).unwrap(), vec![7u8; 8192]);
}

#[test]
fn a_marker_claiming_four_billion_files_is_refused_at_once() {
    let Some(vol) = volume("marker_huge") else {
        return;
    };
    let dir = set_dir(&vol);
    make_set(&dir);
    let marker = dir.join(".volbench-fileset.json");
    std::fs::write(
        &marker,
        r#"{"created_by":"volbench","files":4294967295,"file_size":4096,"filled":true}"#,
    )
    .unwrap();
    // It used to spin through four billion deletions, deaf to SIGTERM.
    let o = run_with_deadline(randread(&dir, "8m"), Duration::from_secs(20));
    assert_refused_naming(&o, &marker);
    assert!(dir.join("volbench.0.dat").is_file());
}

#[test]
fn a_fifo_in_the_set_is_refused_without_hanging() {
    let Some(vol) = volume("fifo") else {
        return;
    };
    let dir = set_dir(&vol);
    std::fs::create_dir(&dir).unwrap();
    let fifo = dir.join("volbench.0.dat");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .unwrap();
    for extra in [None, Some("--allow-overwrite")] {
        let mut cmd = randread(&dir, "4m");
        cmd.args(extra);
        let o = run_with_deadline(cmd, Duration::from_secs(20));
        assert_refused_naming(&o, &fifo);
    }
}

#[test]
fn a_randread_of_a_set_on_a_read_only_file_system_works() {
    let Some(vol) = volume("read_only") else {
        return;
    };
    let dir = set_dir(&vol);
    make_set(&dir);
    let mnt = vol.mountpoint.as_ref().unwrap();
    let remount = |how: &str| {
        let st = Command::new("mount")
            .args(["-o", &format!("remount,{how}")])
            .arg(mnt)
            .status()
            .expect("mount runs");
        assert!(st.success(), "remount {how}");
    };
    remount("ro");
    let o = run(randread(&dir, "4m"));
    remount("rw");
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
}

#[test]
fn a_fill_larger_than_the_free_space_is_refused_before_writing() {
    let Some(vol) = volume("free_space") else {
        return;
    };
    let dir = set_dir(&vol);
    let o = run(randread(&dir, "1g"));
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(exit::TARGET), "{err}");
    assert!(err.contains("is free"), "says how much is free: {err}");
    assert!(!err.contains("filled up"), "refused before filling: {err}");
    assert!(!dir.join("volbench.0.dat").exists(), "nothing was filled");
}

#[test]
fn a_second_run_on_a_set_in_use_is_refused_and_says_who_holds_it() {
    let Some(vol) = volume("lock") else {
        return;
    };
    let dir = set_dir(&vol);
    let mut first = randread_for(&dir, "4m", "60s")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("volbench starts");
    // The first run announces its run once the set is prepared (and locked).
    let mut lines = BufReader::new(first.stderr.take().unwrap()).lines();
    let started = lines
        .by_ref()
        .map_while(Result::ok)
        .any(|l| l.starts_with("[1/1]"));
    let second = run(randread(&dir, "8m"));
    // SAFETY: stopping the child this test started; it writes its results.
    unsafe { libc::kill(first.id() as i32, libc::SIGTERM) };
    let _ = first.wait();
    assert!(started, "the first run started");
    let err = stderr(&second);
    assert_eq!(second.status.code(), Some(exit::REFUSED), "{err}");
    assert!(err.contains("in use"), "{err}");
    assert!(
        err.contains(&format!("pid {}", first.id())),
        "names the holder: {err}"
    );
    let size = std::fs::metadata(dir.join("volbench.0.dat")).unwrap().len();
    assert_eq!(size, 4 * MIB, "the first run's set was not refilled");
}

/// A `.volbench-lock` planted as a hard link to a user's file: `run` and
/// `verify` refuse (exit 3) before writing a byte into it, where they used
/// to truncate it and write their pid line over the user's data.
#[test]
fn a_lock_file_hard_linked_to_a_users_file_is_refused_and_the_file_kept() {
    let t = tempfile::tempdir().unwrap();
    let precious = t.path().join("thesis.txt");
    std::fs::write(&precious, "years of work").unwrap();
    let dir = t.path().join("set");
    make_set(&dir);
    let lock = dir.join(".volbench-lock");
    std::fs::remove_file(&lock).unwrap();
    std::fs::hard_link(&precious, &lock).unwrap();
    let o = run(randread(&dir, "4m"));
    assert_refused_naming(&o, &lock);
    assert!(stderr(&o).contains("hard links"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "years of work");
    let mut verify = volbench();
    verify.args(["verify", "--target"]).arg(&dir);
    let o = run(verify);
    assert_refused_naming(&o, &lock);
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "years of work");
    // Moved away, the set works again and a fresh lock file is made.
    std::fs::remove_file(&lock).unwrap();
    let o = run(randread(&dir, "4m"));
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    assert!(std::fs::metadata(&lock).unwrap().len() > 0);
}

/// A file system reuses a removed file's inode number at once (ext4 takes
/// the first free one), so a user's file put where one of the set's was
/// may carry the number the marker records. It was born after the marker,
/// which every set file predates: refused, left as the user wrote it, and
/// left by `volbench clean` too.
#[test]
fn a_users_file_in_place_of_the_sets_is_refused_even_with_the_same_inode() {
    use std::os::unix::fs::MetadataExt;
    let Some(vol) = volume("replaced_same_inode") else {
        return;
    };
    let dir = set_dir(&vol);
    make_set(&dir);
    let one = dir.join("volbench.0.dat");
    let ino = std::fs::metadata(&one).unwrap().ino();
    std::fs::remove_file(&one).unwrap();
    std::fs::write(&one, b"the user's own").unwrap();
    // ext4 gives a new file the first free inode of its directory's group:
    // the one just freed, on this private volume where nothing else runs.
    // Without the reuse the inode alone would refuse it, and this test
    // would not hold the birth check.
    assert_eq!(
        std::fs::metadata(&one).unwrap().ino(),
        ino,
        "the user's file took the removed file's inode"
    );
    let o = run(randread(&dir, "4m"));
    assert_refused_naming(&o, &one);
    assert_eq!(std::fs::read(&one).unwrap(), b"the user's own");
    let o = run({
        let mut c = volbench();
        c.args(["clean", "--target"]).arg(&dir);
        c
    });
    assert_eq!(
        std::fs::read(&one).unwrap(),
        b"the user's own",
        "{}",
        stderr(&o)
    );
}

/// `volbench clean` on a local file set removes what the set's marker
/// lists and still proves the set's, then the marker, says how many, and
/// leaves everything else in the directory; with neither a set nor a tree
/// left there, a second clean is refused (exit 3) and removes nothing.
#[test]
fn clean_removes_a_local_sets_own_files_and_nothing_else() {
    let tmp = tempfile::tempdir().expect("a temporary folder");
    let dir = tmp.path().join("set");
    let mut make = randread(&dir, "2m");
    make.args(["--files", "2"]);
    let o = run(make);
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    let set = [dir.join("volbench.0.dat"), dir.join("volbench.1.dat")];
    assert!(set.iter().all(|f| f.is_file()));
    let mine = dir.join("notes.txt");
    std::fs::write(&mine, "keep me").unwrap();
    let clean = || {
        let mut c = volbench();
        c.args(["clean", "--target"]).arg(&dir);
        run(c)
    };
    let o = clean();
    assert_eq!(o.status.code(), Some(exit::OK), "{}", stderr(&o));
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(said.contains("removed 2 files of the file set"), "{said}");
    assert!(set.iter().all(|f| !f.exists()), "the set's files are gone");
    assert!(
        !dir.join(".volbench-fileset.json").exists(),
        "and its marker"
    );
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "keep me");
    let o = clean();
    assert_eq!(o.status.code(), Some(exit::REFUSED), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("neither a volbench file set nor a tree"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "keep me");
}
