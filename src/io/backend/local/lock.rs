//! One volbench run at a time per target: an advisory lock (flock) held for
//! the whole run, so a second run cannot refill or resize a set under the
//! first. The lock file of a file set also says who holds it, so the second
//! run can name the first (pid, host, start time).

use crate::io::sys::fd::OwnedFd;
use std::path::Path;

use crate::io::sys::fs::{FlockOperation, OFlags, Stat};
use crate::io::sys::io::Errno;

use crate::error::{Result, VbError};
use crate::io::gate::setdir::{Access, Entry, SetDir, not_regular, write_all};

pub(crate) const LOCK_NAME: &str = ".volbench-lock";
/// The holder line is a few dozen bytes; anything longer is not ours.
const INFO_CAP: usize = 4096;

/// Held while alive; the kernel drops the lock when the descriptor closes,
/// so a killed run never leaves a stale lock behind.
#[derive(Debug)]
pub(crate) struct Lock {
    _fd: OwnedFd,
}

/// Locks a file set directory. A missing lock file is created new; one
/// already there is opened for reading only (a lock needs no write access)
/// and written into only once proven a lock file of ours (regular, one
/// link, this user's, on the set's file system): a lock file that is a
/// link, a hard link to someone's file or another user's file is refused
/// and left as it is. On a read-only file system without one, the
/// directory itself is locked (no run can write there anyway, but runs
/// still exclude each other).
pub(crate) fn lock_set(dir: &SetDir) -> Result<Lock> {
    let path = dir.path_of(LOCK_NAME);
    match dir.entry(LOCK_NAME)? {
        Entry::Other(what) => return Err(not_regular(&path, what)),
        Entry::Missing => match dir.create_new(LOCK_NAME, Access::ReadWrite) {
            Ok((fd, _)) => {
                hold(dir, &fd)?;
                // Ours since we made it: the holder line goes straight in.
                write_holder(&fd);
                return Ok(Lock { _fd: fd });
            }
            Err(e) if e.kind == crate::error::Kind::Refused => return Err(e),
            Err(_) if read_only(dir) => {
                let fd = dup_dir(dir)?;
                hold(dir, &fd)?;
                return Ok(Lock { _fd: fd });
            }
            // Another run created it between the look and the create: it
            // is taken as an existing one, below.
            Err(_) => {}
        },
        Entry::Regular(_) => {}
    }
    let dev = dir.dev;
    let ours = move |st: &Stat| {
        if crate::io::gate::owner::plausibly_ours(st, dev) {
            Ok(())
        } else if st.st_nlink != 1 {
            Err("it has other hard links")
        } else if st.st_uid != crate::io::gate::owner::euid() {
            Err("another user owns it")
        } else {
            Err("it is not a regular file on the set's file system")
        }
    };
    let (fd, st) = dir.open_read(LOCK_NAME, OFlags::empty())?;
    ours(&st).map_err(|why| {
        VbError::refused(format!(
            "refusing to use {}: {why}, so it is not volbench's lock file; volbench leaves it \
             as it is (move it away)",
            path.display()
        ))
    })?;
    hold(dir, &fd)?;
    // A lock left by a run that ended: ours now. Its holder line names the
    // old run, so it is rewritten, through the gate's proof that this is
    // still the file just locked (a courtesy: a failure, as on a read-only
    // file system, leaves the old line).
    let ino = st.st_ino;
    let same = move |s: &Stat| {
        if s.st_ino == ino {
            ours(s)
        } else {
            Err("it was replaced")
        }
    };
    if let Ok((w, _)) = dir.open_ours(LOCK_NAME, Access::Write, OFlags::empty(), same) {
        if crate::io::gate::truncate(&w, 0).is_ok() {
            write_holder(&w);
        }
    }
    Ok(Lock { _fd: fd })
}

/// Takes the lock on `fd` (the lock file, or the directory), or refuses
/// naming who holds it.
fn hold(dir: &SetDir, fd: &OwnedFd) -> Result<()> {
    match crate::io::sys::fs::flock(fd, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(()),
        Err(Errno::WOULDBLOCK) => {
            let holder = dir
                .read_capped(LOCK_NAME, INFO_CAP)
                .ok()
                .flatten()
                .map(|b| clean(&String::from_utf8_lossy(&b)))
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "another process".into());
            Err(VbError::refused(format!(
                "refusing to use the file set in {}: it is in use by {holder}; wait for that \
                 run to end, or use another directory",
                dir.path().display()
            )))
        }
        Err(e) => Err(VbError::target(format!(
            "cannot lock {}: {}",
            dir.path_of(LOCK_NAME).display(),
            std::io::Error::from(e)
        ))),
    }
}

/// Says who holds the lock, in a lock file of ours open for writing.
fn write_holder(fd: &OwnedFd) {
    let info = format!(
        "volbench pid {} on host {}, started {}\n",
        std::process::id(),
        crate::io::sys::system::uname().nodename().to_string_lossy(),
        crate::result::now_rfc3339()
    );
    // The holder line is a courtesy to the next run; the lock is what counts.
    let _ = write_all(fd, info.as_bytes());
}

fn read_only(dir: &SetDir) -> bool {
    crate::io::sys::fs::fstatvfs(dir.fd())
        .map(|v| {
            v.f_flag
                .contains(crate::io::sys::fs::StatVfsMountFlags::RDONLY)
        })
        .unwrap_or(false)
}

fn dup_dir(dir: &SetDir) -> Result<OwnedFd> {
    crate::io::sys::io::fcntl_dupfd_cloexec(dir.fd(), 0).map_err(|e| {
        VbError::target(format!(
            "cannot lock {}: {}",
            dir.path().display(),
            std::io::Error::from(e)
        ))
    })
}

/// Locks a file or device target (no holder file can sit beside a device):
/// the holder is looked up in /proc/locks.
pub(crate) fn lock_path(path: &Path) -> Result<Lock> {
    let fd = crate::io::sys::fs::open(
        path,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        crate::io::sys::fs::Mode::empty(),
    )
    .map_err(|e| crate::io::gate::setdir::open_error(path, e, false))?;
    lock_fd(fd, path)
}

/// Locks the root of a metadata tree through the descriptor volbench opened
/// it with (no link followed), for the whole run or `clean`.
#[cfg(unix)]
pub(crate) fn lock_tree(root: &OwnedFd, path: &Path) -> Result<Lock> {
    let fd = crate::io::sys::io::fcntl_dupfd_cloexec(root, 0).map_err(|e| {
        VbError::target(format!(
            "cannot lock {}: {}",
            path.display(),
            std::io::Error::from(e)
        ))
    })?;
    lock_fd(fd, path)
}

/// Windows cannot byte-range lock a directory (LockFileEx fails on one):
/// the root's lock is a handle of it that shares no writing (see
/// `sys::fs::lock_directory`), refused as a held flock is.
#[cfg(windows)]
pub(crate) fn lock_tree(root: &OwnedFd, path: &Path) -> Result<Lock> {
    match crate::io::sys::fs::lock_directory(root) {
        Ok(fd) => Ok(Lock { _fd: fd }),
        Err(Errno::WOULDBLOCK) => Err(VbError::refused(format!(
            "refusing to use {}: it is in use by another process (another volbench run holds \
             its lock); wait for that run to end",
            path.display()
        ))),
        Err(e) => Err(VbError::target(format!(
            "cannot lock {}: {}",
            path.display(),
            std::io::Error::from(e)
        ))),
    }
}

fn lock_fd(fd: OwnedFd, path: &Path) -> Result<Lock> {
    match crate::io::sys::fs::flock(&fd, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(Lock { _fd: fd }),
        Err(Errno::WOULDBLOCK) => {
            let holder = crate::io::sys::fs::fstat(&fd)
                .ok()
                .and_then(|st| holder_pid(st.st_dev, st.st_ino))
                .map(|pid| format!("pid {pid} on this host"))
                .unwrap_or_else(|| "another process".into());
            Err(VbError::refused(format!(
                "refusing to use {}: it is in use by {holder} (another volbench run holds its \
                 lock); wait for that run to end",
                path.display()
            )))
        }
        Err(e) => Err(VbError::target(format!(
            "cannot lock {}: {}",
            path.display(),
            std::io::Error::from(e)
        ))),
    }
}

/// The process holding a flock on (dev, ino), from /proc/locks, whose lines
/// read `1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF`.
#[cfg(unix)]
fn holder_pid(dev: u64, ino: u64) -> Option<u32> {
    let text = std::fs::read_to_string("/proc/locks").ok()?;
    let want = format!(
        "{:02x}:{:02x}:{ino}",
        libc::major(dev as libc::dev_t),
        libc::minor(dev as libc::dev_t)
    );
    text.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        match f.as_slice() {
            [_, "FLOCK", _, _, pid, id, ..] if *id == want => pid.parse().ok(),
            _ => None,
        }
    })
}

/// Windows has no table of who holds a lock: the refusal says "another process".
#[cfg(windows)]
fn holder_pid(_dev: u64, _ino: u64) -> Option<u32> {
    None
}

/// Keeps what another process wrote from reaching the terminal as anything
/// but one plain line.
fn clean(s: &str) -> String {
    s.trim()
        .chars()
        .filter(|c| !c.is_control())
        .take(200)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_on_a_set_names_the_holder() {
        let t = tempfile::tempdir().unwrap();
        let d = SetDir::open_or_create(t.path()).unwrap();
        let first = lock_set(&d).unwrap();
        // flock locks belong to the open file description: a second open
        // conflicts even within one process, as a second run would.
        let d2 = SetDir::open_or_create(t.path()).unwrap();
        let e = lock_set(&d2).unwrap_err();
        assert_eq!(e.kind, crate::error::Kind::Refused);
        assert!(
            e.message
                .contains(&format!("volbench pid {}", std::process::id())),
            "{e}"
        );
        drop(first);
        assert!(lock_set(&d2).is_ok());
    }

    /// The lock file planted as a hard link to a user's file, as a symbolic
    /// link to one, or as another user's file: refused, and the file keeps
    /// every byte (nothing opened it for writing, truncated or wrote it).
    #[test]
    fn a_planted_lock_file_is_refused_and_never_written() {
        let t = tempfile::tempdir().unwrap();
        let victim = t.path().join("thesis.txt");
        std::fs::write(&victim, "years of work").unwrap();
        let set = t.path().join("set");
        std::fs::create_dir(&set).unwrap();
        let lock = set.join(LOCK_NAME);
        std::fs::hard_link(&victim, &lock).unwrap();
        let d = SetDir::open_existing(&set).unwrap();
        let e = lock_set(&d).unwrap_err();
        assert_eq!(e.kind, crate::error::Kind::Refused, "{e}");
        assert!(e.message.contains("other hard links"), "{e}");
        assert!(e.message.contains(LOCK_NAME), "{e}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "years of work");

        std::fs::remove_file(&lock).unwrap();
        std::os::unix::fs::symlink(&victim, &lock).unwrap();
        let e = lock_set(&d).unwrap_err();
        assert_eq!(e.kind, crate::error::Kind::Refused, "{e}");
        assert!(e.message.contains("symbolic link"), "{e}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "years of work");

        std::fs::remove_file(&lock).unwrap();
        std::fs::write(&lock, "someone's notes").unwrap();
        let other = if crate::io::gate::owner::euid() == 0 {
            65534
        } else {
            // Only root can give a file away; as a user the check is the
            // same comparison, shown by the root run of this test.
            crate::console::errln!("skipping the foreign-owner case: it needs root to chown");
            return;
        };
        std::os::unix::fs::chown(&lock, Some(other), None).unwrap();
        let e = lock_set(&d).unwrap_err();
        assert_eq!(e.kind, crate::error::Kind::Refused, "{e}");
        assert!(e.message.contains("another user owns it"), "{e}");
        assert_eq!(std::fs::read_to_string(&lock).unwrap(), "someone's notes");
    }

    /// A lock file a run of ours left when it ended (or was killed) is taken
    /// over: locked, and its holder line now names this run.
    #[test]
    fn a_lock_left_by_an_ended_run_is_taken_over() {
        let t = tempfile::tempdir().unwrap();
        let lock = t.path().join(LOCK_NAME);
        std::fs::write(
            &lock,
            "volbench pid 999999 on host gone, started long ago\n",
        )
        .unwrap();
        let d = SetDir::open_existing(t.path()).unwrap();
        let held = lock_set(&d).unwrap();
        let line = std::fs::read_to_string(&lock).unwrap();
        assert!(
            line.starts_with(&format!("volbench pid {} ", std::process::id())),
            "{line}"
        );
        assert!(!line.contains("999999"), "{line}");
        // And it is held: a second run is refused, naming this one.
        let d2 = SetDir::open_existing(t.path()).unwrap();
        let e = lock_set(&d2).unwrap_err();
        assert!(
            e.message
                .contains(&format!("volbench pid {}", std::process::id())),
            "{e}"
        );
        drop(held);
    }

    #[test]
    fn a_file_target_lock_names_the_holder_pid() {
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("f");
        std::fs::write(&f, "x").unwrap();
        let _first = lock_path(&f).unwrap();
        let e = lock_path(&f).unwrap_err();
        assert!(
            e.message.contains(&format!("pid {}", std::process::id())),
            "{e}"
        );
    }

    #[test]
    fn holder_text_is_one_clean_line() {
        assert_eq!(clean("pid 1\x1b[31m\nhost\r"), "pid 1[31mhost");
    }
}
