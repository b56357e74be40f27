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

/// What a file is, as any back end reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Regular,
    Directory,
    Symlink,
    Other,
}

/// What a back end says of a file, by handle or by name without following
/// it: all a proof of ownership reads (a local stat, an NFS fattr, SMB's
/// file information), so the rules are one whatever the storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Attr {
    pub(crate) kind: Kind,
    /// Inode, NFS file id, SMB file id.
    pub(crate) id: u64,
    /// Device, NFS fsid, SMB volume: the file system it is on.
    pub(crate) dev: u64,
    pub(crate) size: u64,
    /// Bytes allocated to it.
    pub(crate) allocated: u64,
    pub(crate) links: u64,
    pub(crate) uid: u32,
    /// Permission bits.
    pub(crate) mode: u32,
    /// Birth time where recorded, else change time (seconds, nanoseconds).
    pub(crate) born: (i64, u32),
    /// A true birth time, where the back end reports one and it cannot be
    /// inherited (statx's btime on Linux, SMB's CreationTime); None where
    /// it does not (a plain stat, NFSv3, Windows, whose creation time a new
    /// file may inherit from one deleted under its name).
    pub(crate) birth: Option<(i64, u32)>,
}

impl Attr {
    /// A local stat's attributes. A stat carries no birth time, and the
    /// proofs that read one (a tree's) take statx: left at zero here.
    pub(crate) fn of_stat(st: &crate::io::sys::fs::Stat) -> Attr {
        let kind = match FileType::from_raw_mode(st.st_mode as _) {
            FileType::RegularFile => Kind::Regular,
            FileType::Directory => Kind::Directory,
            FileType::Symlink => Kind::Symlink,
            _ => Kind::Other,
        };
        Attr {
            kind,
            id: st.st_ino,
            dev: st.st_dev,
            size: st.st_size.max(0) as u64,
            allocated: (st.st_blocks.max(0) as u64).saturating_mul(512),
            links: st.st_nlink,
            uid: st.st_uid,
            mode: st.st_mode & 0o7777,
            born: (0, 0),
            birth: None,
        }
    }
}

/// The per-file proof for a file set, whose marker also lists each file's
/// id: regular, one link, owned by `uid`, on the set's file system.
pub(crate) fn set_file_ours(a: &Attr, uid: u32, dev: u64) -> Result<(), &'static str> {
    if a.kind != Kind::Regular {
        Err("it is not a regular file")
    } else if a.links != 1 {
        Err("it has other hard links")
    } else if a.uid != uid {
        Err("another user owns it")
    } else if a.dev != dev {
        Err("it is on another file system")
    } else {
        Ok(())
    }
}

/// Who made a file set or tree, and for which directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Identity {
    /// The directory's device and inode: a marker copied elsewhere names
    /// another directory.
    pub(crate) dev: u64,
    pub(crate) ino: u64,
    /// The effective uid that made it.
    pub(crate) uid: u32,
    /// The marker's birth (or, where none is recorded, change) time, in
    /// the file system's own clock: what volbench makes afterwards is born
    /// no earlier.
    pub(crate) born_s: i64,
    pub(crate) born_ns: u32,
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

/// `check_marker` over what a back end that is not local reports: the
/// tree's directory `dir`, its marker `marker` (looked up without
/// following it), the identity the marker claims and the uid this
/// process has on that storage.
pub(crate) fn judge_marker(
    dir: &Attr,
    marker: &Attr,
    id: &Identity,
    uid: u32,
) -> Result<(), &'static str> {
    if marker.kind != Kind::Regular || marker.links != 1 {
        return Err("the marker is not a regular file with one link");
    }
    if marker.uid != uid || id.uid != uid {
        return Err("the marker was not written by this user");
    }
    if marker.mode & 0o022 != 0 {
        return Err("the marker is writable by others");
    }
    if dir.dev != id.dev || dir.id != id.ino || marker.dev != id.dev {
        return Err("the marker was written for another directory (copied here?)");
    }
    Ok(())
}

/// Why the file `a` (as a back end reports it) may not be removed or
/// overwritten in the tree `id`, or Ok: the tree's per-file proof.
pub(crate) fn judge_attr(a: &Attr, id: &Identity) -> Result<(), &'static str> {
    if a.kind != Kind::Regular {
        return Err("not a regular file");
    }
    if a.links != 1 {
        return Err("it has other hard links");
    }
    if a.uid != id.uid {
        return Err("another user owns it");
    }
    if a.dev != id.dev {
        return Err("it is on another file system");
    }
    if a.born.0 + CLOCK_SLACK_S < id.born_s {
        return Err("it is older than the tree");
    }
    Ok(())
}

/// A local statx's attributes for a proof, birth time included where
/// recorded.
fn attr_of_statx(s: &Statx) -> Attr {
    let kind = match FileType::from_raw_mode(s.stx_mode as u32) {
        FileType::RegularFile => Kind::Regular,
        FileType::Directory => Kind::Directory,
        FileType::Symlink => Kind::Symlink,
        _ => Kind::Other,
    };
    Attr {
        kind,
        id: s.stx_ino,
        dev: dev_of(s),
        // The proof reads neither (and Windows' statx has neither).
        size: 0,
        allocated: 0,
        links: u64::from(s.stx_nlink),
        uid: s.stx_uid,
        mode: u32::from(s.stx_mode) & 0o7777,
        born: born(s),
        birth: birth(s),
    }
}

/// The birth time `s` records, where it records one (Linux: statx's
/// btime; never on Windows, see `Attr::birth`).
fn birth(s: &Statx) -> Option<(i64, u32)> {
    (cfg!(unix) && StatxFlags::from_bits_retain(s.stx_mask).contains(StatxFlags::BTIME))
        .then_some((s.stx_btime.tv_sec, s.stx_btime.tv_nsec))
}

/// The birth time of `name` in `dir`, not following a link, where the
/// file system records one.
pub(crate) fn birth_at(dir: impl AsFd, name: &str) -> Option<(i64, u32)> {
    let name = std::ffi::CString::new(name).ok()?;
    statx_at(dir, &name).ok().as_ref().and_then(birth)
}

/// Why the file `s` may not be unlinked or overwritten: the one proof,
/// over what any back end reports (`judge_attr`).
fn judge(s: &Statx, id: &Identity) -> Result<(), &'static str> {
    judge_attr(&attr_of_statx(s), id)
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

/// Opens the existing file `name` in `dir` for writing (`access`, plus
/// `extra`: O_DIRECT) once it is proven the tree's own: by name, not
/// following it, then again by the open descriptor, which must be that
/// very file; no byte is written before. O_NONBLOCK: a FIFO planted under
/// the name cannot hang the open.
pub(crate) fn open_ours_at(
    dir: impl AsFd,
    name: &std::ffi::CStr,
    access: super::Access,
    extra: crate::io::sys::fs::OFlags,
    id: &Identity,
) -> Result<crate::io::sys::fd::OwnedFd, super::OwnFileError> {
    use super::OwnFileError;
    use crate::io::sys::fs::{Mode, OFlags};
    let dir = dir.as_fd();
    let seen = match statx_at(dir, name) {
        Ok(s) => s,
        Err(e) => return Err(OwnFileError::Sys(e)),
    };
    judge(&seen, id).map_err(OwnFileError::NotOurs)?;
    let fd = crate::io::sys::fs::openat(
        dir,
        name,
        access.flags() | extra | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(OwnFileError::Sys)?;
    let s = statx_fd(&fd).map_err(OwnFileError::Sys)?;
    if s.stx_ino != seen.stx_ino {
        return Err(OwnFileError::NotOurs(
            "it was replaced while volbench looked at it",
        ));
    }
    judge(&s, id).map_err(OwnFileError::NotOurs)?;
    Ok(fd)
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
    pub(crate) id: String,
    /// The set directory's inode (a file's inode, a device's number).
    pub(crate) ino: u64,
    pub(crate) dev: u64,
}

impl SetIdentity {
    pub(crate) fn same_set(&self, other: &SetIdentity) -> bool {
        self.id == other.id && self.ino == other.ino
    }

    /// The identity of a file or device target (no marker, no fill id).
    pub(crate) fn named(device: bool, dev: u64, ino: u64) -> Self {
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
    fn a_far_marker_is_trusted_only_for_its_directory_and_its_writer() {
        let dir = Attr {
            kind: Kind::Directory,
            id: 10,
            dev: 3,
            size: 0,
            allocated: 0,
            links: 2,
            uid: 1000,
            mode: 0o755,
            born: (100, 0),
            birth: None,
        };
        let marker = Attr {
            kind: Kind::Regular,
            id: 11,
            links: 1,
            mode: 0o600,
            ..dir
        };
        let id = Identity {
            dev: 3,
            ino: 10,
            uid: 1000,
            born_s: 100,
            born_ns: 0,
        };
        assert_eq!(judge_marker(&dir, &marker, &id, 1000), Ok(()));
        assert!(judge_marker(&dir, &marker, &id, 0).is_err(), "another user");
        let copied = Attr { id: 12, ..dir };
        assert!(judge_marker(&copied, &marker, &id, 1000).is_err());
        let linked = Attr { links: 2, ..marker };
        assert!(judge_marker(&dir, &linked, &id, 1000).is_err());
        let open = Attr {
            mode: 0o666,
            ..marker
        };
        assert!(judge_marker(&dir, &open, &id, 1000).is_err());
        let link = Attr {
            kind: Kind::Symlink,
            ..marker
        };
        assert!(judge_marker(&dir, &link, &id, 1000).is_err());
    }

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
