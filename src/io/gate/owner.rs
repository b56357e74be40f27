//! One proof of ownership for what volbench made in a directory, shared by
//! file sets and trees: the marker records the identity of the directory it
//! was written for (device, root inode, the uid that made it, and the
//! marker's own birth time on the file system's clock), and every file is
//! checked by handle before it is unlinked or overwritten.
//!
//! Why no per-file record: a tree of 10 million files must run in under
//! 100 MB, and a list of inodes (or a keyed digest per file in an xattr,
//! which NFSv3 and many SMB servers lack) costs memory or a system call per
//! file. What a per-file check can establish without a record is enough:
//! the file is regular, has one link (a hard link would carry the write to
//! a file elsewhere), is owned by the running uid (a non-root user cannot
//! make a file owned by root, so another user's files, planted or renamed
//! in, fail here), sits on the tree's device, and was born after the tree's
//! marker (root's own older files renamed in fail here where the file
//! system records birth times). A random key would add nothing: the marker
//! is only trusted when the running uid owns it, so whoever could forge it
//! could already do anything volbench can.

use crate::io::sys::fd::AsFd;

use crate::io::sys::fs::{AtFlags, FileType, Statx, StatxFlags};
use crate::io::sys::io::Errno;
use serde::{Deserialize, Serialize};

/// Who made a file set or tree, and for which directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Identity {
    /// The directory's device and inode: a marker copied elsewhere names
    /// another directory.
    pub dev: u64,
    pub ino: u64,
    /// The effective uid that made it.
    pub uid: u32,
    /// The marker's birth (or, where none is recorded, change) time, in
    /// the file system's own clock: what volbench makes afterwards is born
    /// no earlier.
    pub born_s: i64,
    pub born_ns: u32,
}

/// Clock steps (NTP) between two creations on one file system stay under this.
const CLOCK_SLACK_S: i64 = 2;

pub(crate) fn euid() -> u32 {
    crate::io::sys::process::geteuid().as_raw()
}

fn statx_fd(fd: impl AsFd) -> Result<Statx, Errno> {
    crate::io::sys::fs::statx(
        fd,
        c"",
        AtFlags::EMPTY_PATH,
        StatxFlags::BASIC_STATS | StatxFlags::BTIME,
    )
}

fn statx_at(dir: impl AsFd, name: &std::ffi::CStr) -> Result<Statx, Errno> {
    crate::io::sys::fs::statx(
        dir,
        name,
        AtFlags::SYMLINK_NOFOLLOW,
        StatxFlags::BASIC_STATS | StatxFlags::BTIME,
    )
}

fn dev_of(s: &Statx) -> u64 {
    crate::io::sys::fs::makedev(s.stx_dev_major, s.stx_dev_minor)
}

/// Birth time where the file system records one, else change time.
fn born(s: &Statx) -> (i64, u32) {
    if StatxFlags::from_bits_retain(s.stx_mask).contains(StatxFlags::BTIME) {
        (s.stx_btime.tv_sec, s.stx_btime.tv_nsec)
    } else {
        (s.stx_ctime.tv_sec, s.stx_ctime.tv_nsec)
    }
}

/// The identity of a directory whose marker volbench has just created
/// (`marker` open on it): recorded in the marker.
pub(crate) fn identity_of_new(dir: impl AsFd, marker: impl AsFd) -> Result<Identity, Errno> {
    let d = statx_fd(dir)?;
    let m = statx_fd(marker)?;
    let (born_s, born_ns) = born(&m);
    Ok(Identity {
        dev: dev_of(&d),
        ino: d.stx_ino,
        uid: euid(),
        born_s,
        born_ns,
    })
}

/// Why a marker is not trusted for this directory, or Ok.
pub(crate) fn check_marker(
    dir: impl AsFd,
    marker: impl AsFd,
    id: &Identity,
) -> Result<(), &'static str> {
    let d = statx_fd(dir).map_err(|_| "the directory cannot be inspected")?;
    let m = statx_fd(marker).map_err(|_| "the marker cannot be inspected")?;
    if FileType::from_raw_mode(m.stx_mode as u32) != FileType::RegularFile || m.stx_nlink != 1 {
        return Err("the marker is not a regular file with one link");
    }
    if m.stx_uid != euid() || id.uid != euid() {
        return Err("the marker was not written by this user");
    }
    if m.stx_mode & 0o022 != 0 {
        return Err("the marker is writable by others");
    }
    if dev_of(&d) != id.dev || d.stx_ino != id.ino || dev_of(&m) != id.dev {
        return Err("the marker was written for another directory (copied here?)");
    }
    Ok(())
}

/// Why the file `s` may not be unlinked or overwritten, or Ok.
fn judge(s: &Statx, id: &Identity) -> Result<(), &'static str> {
    if FileType::from_raw_mode(s.stx_mode as u32) != FileType::RegularFile {
        return Err("not a regular file");
    }
    if s.stx_nlink != 1 {
        return Err("it has other hard links");
    }
    if s.stx_uid != id.uid {
        return Err("another user owns it");
    }
    if dev_of(s) != id.dev {
        return Err("it is on another file system");
    }
    let (sec, _) = born(s);
    if sec + CLOCK_SLACK_S < id.born_s {
        return Err("it is older than the tree");
    }
    Ok(())
}

/// Checks `name` in `dir` (a directory descriptor the caller reached
/// without following links), not following it, immediately before an
/// unlink, rename or setattr relative to the same descriptor. Err(None)
/// when there is nothing there.
pub(crate) fn check_at(
    dir: impl AsFd,
    name: &std::ffi::CStr,
    id: &Identity,
) -> Result<(), Option<&'static str>> {
    match statx_at(dir, name) {
        Ok(s) => judge(&s, id).map_err(Some),
        Err(Errno::NOENT) => Err(None),
        Err(_) => Err(Some("it cannot be inspected")),
    }
}

/// Checks a file opened (O_NOFOLLOW) for writing, by its descriptor.
pub(crate) fn check_fd(fd: impl AsFd, id: &Identity) -> Result<(), &'static str> {
    let s = statx_fd(fd).map_err(|_| "it cannot be inspected")?;
    judge(&s, id)
}

/// The per-file part for a file set, whose marker also lists each file's
/// inode: regular, one link, the running uid's, on the set's device.
pub(crate) fn plausibly_ours(st: &crate::io::sys::fs::Stat, dev: u64) -> bool {
    FileType::from_raw_mode(st.st_mode) == FileType::RegularFile
        && st.st_nlink == 1
        && st.st_uid == euid()
        && st.st_dev == dev
}

/// Which set a journal belongs to. `id` decides (with `ino`): the device
/// number is recorded for the messages only, since it may change across a
/// reboot or a failover (an NFS remount), exactly when a journal is read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetIdentity {
    /// The set's fill id; "file" or "device" for a target volbench did not make.
    pub id: String,
    /// The set directory's inode (a file's inode, a device's number).
    pub ino: u64,
    pub dev: u64,
}

impl SetIdentity {
    pub fn same_set(&self, other: &SetIdentity) -> bool {
        self.id == other.id && self.ino == other.ino
    }

    /// The identity of a file or device target (no marker, no fill id).
    pub fn named(device: bool, dev: u64, ino: u64) -> Self {
        Self {
            id: if device { "device" } else { "file" }.into(),
            ino,
            dev,
        }
    }
}

impl std::fmt::Display for SetIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.id.as_str() {
            "file" | "device" => write!(f, "{} {}:{}", self.id, self.dev, self.ino),
            id => write!(f, "set {id} in directory inode {}", self.ino),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::sys::fs::{Mode, OFlags};

    #[test]
    fn our_new_file_passes_and_a_hard_link_or_old_file_does_not() {
        let t = tempfile::tempdir().unwrap();
        let old = t.path().join("old");
        std::fs::write(&old, "x").unwrap();
        let dir =
            crate::io::sys::fs::open(t.path(), OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty())
                .unwrap();
        let m = super::super::create_new_at(&dir, c"m", OFlags::WRONLY, 0o600).unwrap();
        let mut id = identity_of_new(&dir, &m).unwrap();
        assert_eq!(check_marker(&dir, &m, &id), Ok(()));
        drop(super::super::create_new_at(&dir, c"f0", OFlags::WRONLY, 0o644).unwrap());
        assert_eq!(check_at(&dir, c"f0", &id), Ok(()));
        assert_eq!(check_at(&dir, c"f9", &id), Err(None));
        std::fs::hard_link(t.path().join("f0"), t.path().join("f1")).unwrap();
        assert_eq!(
            check_at(&dir, c"f0", &id),
            Err(Some("it has other hard links"))
        );
        // A marker that names another directory is refused.
        id.ino += 1;
        assert!(check_marker(&dir, &m, &id).is_err());
        id.ino -= 1;
        // A file born long before the tree.
        id.born_s += 3600;
        if check_at(&dir, c"old", &id).is_ok() {
            panic!("a file older than the tree passed");
        }
    }
}
