//! Every name volbench touches inside a directory target is reached through
//! a descriptor of that directory opened once, one path component at a time
//! and with O_NOFOLLOW: a symbolic link, FIFO, device or directory planted
//! under one of volbench's names is refused, never followed, opened or
//! replaced. The directory the user named may itself be a link (that path is
//! the user's explicit choice); nothing below it is.

use crate::io::sys::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use crate::io::sys::fs::{AtFlags, FileType, Mode, OFlags, Stat};
use crate::io::sys::io::Errno;

use crate::error::{Result, VbError};

/// What sits at a name in the directory, looked at without following it.
#[derive(Debug)]
pub(crate) enum Entry {
    Missing,
    Regular(Stat),
    /// Anything else, described for the refusal ("a symbolic link").
    Other(&'static str),
}

// `Access` lives in the gate's face (`mod.rs`), which `owner.rs` uses too.
pub(crate) use super::Access;

#[derive(Debug)]
pub(crate) struct SetDir {
    fd: OwnedFd,
    path: PathBuf,
    /// The directory's file system, which every file of the set must share
    /// (a file on another device is a mount over one of volbench's names).
    pub(crate) dev: u64,
}

fn describe(ft: FileType) -> &'static str {
    match ft {
        FileType::Symlink => "a symbolic link",
        FileType::Fifo => "a FIFO",
        FileType::Socket => "a socket",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        FileType::Directory => "a directory",
        FileType::RegularFile => "a regular file",
        FileType::Unknown => "not a regular file",
    }
}

/// The refusal for anything at one of volbench's names that is not a
/// regular file: volbench never follows, opens or replaces it.
pub(crate) fn not_regular(path: &Path, what: &str) -> VbError {
    let hint = if what == "a symbolic link" {
        "volbench never follows links inside a file set"
    } else {
        "volbench only uses regular files it created"
    };
    VbError::refused(format!(
        "refusing to use {}: it is {what}, and {hint}; move it away",
        path.display()
    ))
}

fn io_error(what: &str, path: &Path, e: Errno) -> VbError {
    VbError::target(format!(
        "cannot {what} {}: {}",
        path.display(),
        std::io::Error::from(e)
    ))
}

impl SetDir {
    /// Opens the directory the user named, creating it (one level) if missing.
    pub(crate) fn open_or_create(path: &Path) -> Result<SetDir> {
        match crate::io::sys::fs::mkdir(path, Mode::from_raw_mode(0o755)) {
            Ok(()) | Err(Errno::EXIST) => {}
            Err(e) => return Err(io_error("create target directory", path, e)),
        }
        Self::open_existing(path)
    }

    /// Opens the directory the user named, which must exist.
    pub(crate) fn open_existing(path: &Path) -> Result<SetDir> {
        let fd = crate::io::sys::fs::open(
            path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| match e {
            Errno::NOTDIR => VbError::target(format!("{} is not a directory", path.display())),
            e => io_error("open directory", path, e),
        })?;
        Self::from_fd(fd, path.into())
    }

    /// Opens (creating if missing) the subdirectory `name`, never following
    /// a link there.
    pub(crate) fn open_sub(&self, name: &str) -> Result<SetDir> {
        let path = self.path_of(name);
        match crate::io::sys::fs::mkdirat(&self.fd, name, Mode::from_raw_mode(0o755)) {
            Ok(()) | Err(Errno::EXIST) => {}
            Err(e) => return Err(io_error("create directory", &path, e)),
        }
        match self.entry(name)? {
            Entry::Other("a directory") => {}
            Entry::Other(what) => return Err(not_regular(&path, what)),
            Entry::Regular(_) => return Err(not_regular(&path, "a regular file")),
            Entry::Missing => return Err(io_error("open", &path, Errno::NOENT)),
        }
        let fd = crate::io::sys::fs::openat(
            &self.fd,
            name,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| match e {
            Errno::LOOP | Errno::NOTDIR => not_regular(&path, "not a directory"),
            e => io_error("open directory", &path, e),
        })?;
        Self::from_fd(fd, path)
    }

    fn from_fd(fd: OwnedFd, path: PathBuf) -> Result<SetDir> {
        let st = crate::io::sys::fs::fstat(&fd).map_err(|e| io_error("inspect", &path, e))?;
        Ok(SetDir {
            fd,
            path,
            dev: st.st_dev,
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn fd(&self) -> &OwnedFd {
        &self.fd
    }

    /// The path of `name` in this directory, for messages.
    pub(crate) fn path_of(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// The birth time of `name` here, where the file system records one
    /// (`owner::Attr::birth`).
    pub(crate) fn birth_of(&self, name: &str) -> Option<(i64, u32)> {
        crate::io::gate::owner::birth_at(&self.fd, name)
    }

    pub(crate) fn entry(&self, name: &str) -> Result<Entry> {
        debug_assert!(!name.contains('/'));
        match crate::io::sys::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => match FileType::from_raw_mode(st.st_mode) {
                FileType::RegularFile => Ok(Entry::Regular(st)),
                ft => Ok(Entry::Other(describe(ft))),
            },
            Err(Errno::NOENT) => Ok(Entry::Missing),
            Err(e) => Err(io_error("inspect", &self.path_of(name), e)),
        }
    }

    /// Opens an existing regular file for reading. O_NOFOLLOW refuses a
    /// link and O_NONBLOCK keeps a FIFO swapped in after a check from
    /// blocking the open; the file's type is then confirmed on the open
    /// descriptor. `extra` adds what does not change who may write
    /// (O_DIRECT); writing into an existing file is `open_ours`.
    pub(crate) fn open_read(&self, name: &str, extra: OFlags) -> Result<(OwnedFd, Stat)> {
        debug_assert!(!extra.intersects(OFlags::WRONLY | OFlags::RDWR | OFlags::APPEND));
        self.open_checked(name, OFlags::RDONLY | extra, Mode::empty())
    }

    /// Opens the existing regular file `name` for writing (`access`, plus
    /// `extra`: O_DIRECT, O_DSYNC...), the gate's one way to write into a
    /// file that is already there: `proof` must accept it (regular, one
    /// link, ours: what an unlink needs) as it sits at the name, looked at
    /// without following it, and again on the open descriptor, which must
    /// be that very file; no byte is written before both.
    pub(crate) fn open_ours(
        &self,
        name: &str,
        access: Access,
        extra: OFlags,
        proof: impl Fn(&Stat) -> std::result::Result<(), &'static str>,
    ) -> Result<(OwnedFd, Stat)> {
        let path = self.path_of(name);
        let refuse = |why: &str| {
            VbError::refused(format!(
                "refusing to write {}: {why}, so volbench cannot show it made it; move it away",
                path.display()
            ))
        };
        let seen = match self.entry(name)? {
            Entry::Regular(st) => st,
            Entry::Other(what) => return Err(not_regular(&path, what)),
            Entry::Missing => return Err(io_error("open", &path, Errno::NOENT)),
        };
        proof(&seen).map_err(refuse)?;
        let (fd, st) = self.open_checked(name, access.flags() | extra, Mode::empty())?;
        if st.st_ino != seen.st_ino || st.st_dev != seen.st_dev {
            return Err(refuse("it was replaced while volbench looked at it"));
        }
        proof(&st).map_err(refuse)?;
        Ok((fd, st))
    }

    /// Creates `name`, which must not exist, open with `access`.
    pub(crate) fn create_new(&self, name: &str, access: Access) -> Result<(OwnedFd, Stat)> {
        self.open_checked(
            name,
            access.flags() | OFlags::CREATE | OFlags::EXCL,
            Mode::from_raw_mode(0o644),
        )
    }

    fn open_checked(&self, name: &str, flags: OFlags, mode: Mode) -> Result<(OwnedFd, Stat)> {
        debug_assert!(!name.contains('/'));
        let path = self.path_of(name);
        let fd = crate::io::sys::fs::openat(
            &self.fd,
            name,
            flags | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
            mode,
        )
        .map_err(|e| match e {
            Errno::LOOP => not_regular(&path, "a symbolic link"),
            // O_NONBLOCK write-open of a FIFO without a reader.
            Errno::NXIO => not_regular(&path, "a FIFO"),
            Errno::ISDIR => not_regular(&path, "a directory"),
            e => open_error(&path, e, flags.contains(OFlags::DIRECT)),
        })?;
        let st = crate::io::sys::fs::fstat(&fd).map_err(|e| io_error("inspect", &path, e))?;
        let ft = FileType::from_raw_mode(st.st_mode);
        if ft != FileType::RegularFile {
            return Err(not_regular(&path, describe(ft)));
        }
        // Regular files ignore O_NONBLOCK today; clear it so they always will.
        if let Ok(fl) = crate::io::sys::fs::fcntl_getfl(&fd) {
            let _ = crate::io::sys::fs::fcntl_setfl(&fd, fl - OFlags::NONBLOCK);
        }
        Ok((fd, st))
    }

    /// Deletes `name` only if it is still the regular file with inode `ino`
    /// (a file volbench made); anything else there is left alone.
    pub(crate) fn remove_if_ours(&self, name: &str, ino: u64) {
        if let Ok(Entry::Regular(st)) = self.entry(name) {
            if st.st_ino == ino && st.st_dev == self.dev {
                let _ = crate::io::sys::fs::unlinkat(&self.fd, name, AtFlags::empty());
            }
        }
    }

    /// Reads a regular file of at most `cap` bytes; None if it is missing.
    pub(crate) fn read_capped(&self, name: &str, cap: usize) -> Result<Option<Vec<u8>>> {
        let path = self.path_of(name);
        match self.entry(name)? {
            Entry::Missing => return Ok(None),
            Entry::Other(what) => return Err(not_regular(&path, what)),
            Entry::Regular(_) => {}
        }
        let (fd, st) = match self.open_read(name, OFlags::empty()) {
            Ok(x) => x,
            Err(_) if matches!(self.entry(name), Ok(Entry::Missing)) => return Ok(None),
            Err(e) => return Err(e),
        };
        if st.st_size < 0 || st.st_size as u64 > cap as u64 {
            return Err(VbError::refused(format!(
                "refusing to use {}: it is {} bytes, more than the {cap} a volbench file of \
                 this kind can be; move it away",
                path.display(),
                st.st_size
            )));
        }
        let buf = read_up_to(&fd, cap + 1).map_err(|e| io_error("read", &path, e))?;
        if buf.len() > cap {
            return Err(VbError::refused(format!(
                "refusing to use {}: it grew past {cap} bytes while being read",
                path.display()
            )));
        }
        Ok(Some(buf))
    }

    /// Replaces `name` with `bytes` through a temporary file and a rename,
    /// so the old content is never written through; anything but a regular
    /// file at `name` is refused. Returns the new file's inode.
    pub(crate) fn replace(&self, name: &str, bytes: &[u8]) -> Result<u64> {
        let path = self.path_of(name);
        if let Entry::Other(what) = self.entry(name)? {
            return Err(not_regular(&path, what));
        }
        let tmp = format!("{name}.{}.tmp", std::process::id());
        let (fd, st) = self.create_new(&tmp, Access::Write)?;
        let written = write_all(&fd, bytes)
            .and_then(|()| crate::io::sys::fs::fdatasync(&fd))
            .and_then(|()| crate::io::sys::fs::renameat(&self.fd, &tmp, &self.fd, name));
        if let Err(e) = written {
            self.remove_if_ours(&tmp, st.st_ino);
            return Err(io_error("write", &path, e));
        }
        Ok(st.st_ino)
    }

    /// Rewrites in place the regular file `name` that volbench itself made
    /// (inode `ino`), needing no more space than it has: used where the
    /// disk may be full, as at the end of a fill.
    pub(crate) fn rewrite_ours(&self, name: &str, ino: u64, bytes: &[u8]) -> Result<()> {
        let path = self.path_of(name);
        let dev = self.dev;
        let (fd, _) = self.open_ours(name, Access::Write, OFlags::empty(), |st| {
            if st.st_ino != ino {
                Err("it was replaced while volbench used it")
            } else if !crate::io::gate::owner::plausibly_ours(st, dev) {
                Err("it is not a regular file with one link of this user's")
            } else {
                Ok(())
            }
        })?;
        crate::io::sys::fs::ftruncate(&fd, 0)
            .and_then(|()| write_all(&fd, bytes))
            .and_then(|()| crate::io::sys::fs::fdatasync(&fd))
            .map_err(|e| io_error("write", &path, e))
    }

    /// Bytes an unprivileged writer may still use on the directory's file system.
    pub(crate) fn free_bytes(&self) -> Option<u64> {
        let vfs = crate::io::sys::fs::fstatvfs(&self.fd).ok()?;
        Some(vfs.f_bavail.saturating_mul(vfs.f_frsize))
    }
}

pub(crate) fn write_all(fd: impl AsFd, mut bytes: &[u8]) -> crate::io::sys::io::Result<()> {
    while !bytes.is_empty() {
        match crate::io::sys::io::write(&fd, bytes) {
            Ok(0) => return Err(Errno::IO),
            Ok(n) => bytes = &bytes[n..],
            Err(Errno::INTR) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Reads an open file from where it stands, at most `limit` bytes (small
/// files of volbench's own: markers, lock holders), retrying on EINTR.
pub(crate) fn read_up_to(fd: &OwnedFd, limit: usize) -> std::result::Result<Vec<u8>, Errno> {
    let mut buf = vec![0u8; limit];
    let mut len = 0;
    while let Some(rest) = buf.get_mut(len..).filter(|r| !r.is_empty()) {
        match crate::io::sys::io::read(fd, rest) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(Errno::INTR) => {}
            Err(e) => return Err(e),
        }
    }
    buf.truncate(len);
    Ok(buf)
}

/// Why a file could not be opened; EINVAL with O_DIRECT means the file
/// system does not do direct I/O, which the user can work around.
pub(crate) fn open_error(path: &Path, e: crate::io::sys::io::Errno, direct: bool) -> VbError {
    if direct && e == crate::io::sys::io::Errno::INVAL {
        VbError::target(format!(
            "the file system at {} does not support direct I/O (O_DIRECT); use --buffered",
            path.display()
        ))
    } else {
        VbError::target(format!(
            "cannot open {}: {}",
            path.display(),
            std::io::Error::from(e)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> (tempfile::TempDir, SetDir) {
        let t = tempfile::tempdir().unwrap();
        let d = SetDir::open_or_create(t.path()).unwrap();
        (t, d)
    }

    #[test]
    fn links_fifos_and_directories_are_never_opened() {
        let (t, d) = dir();
        std::fs::write(t.path().join("real"), "x").unwrap();
        std::os::unix::fs::symlink(t.path().join("real"), t.path().join("link")).unwrap();
        std::os::unix::fs::symlink("/nonexistent/x", t.path().join("dangling")).unwrap();
        std::fs::create_dir(t.path().join("sub")).unwrap();
        crate::io::sys::fs::mknodat(&d.fd, "fifo", FileType::Fifo, Mode::from_raw_mode(0o644), 0)
            .unwrap();
        let any = |_: &Stat| Ok(());
        for name in ["link", "dangling", "fifo", "sub"] {
            let e = d.open_read(name, OFlags::empty()).unwrap_err();
            assert_eq!(e.kind, crate::error::Kind::Refused, "{name}: {e}");
            assert!(e.message.contains(name), "{e}");
            for access in [Access::Write, Access::ReadWrite] {
                let e = d.open_ours(name, access, OFlags::empty(), any).unwrap_err();
                assert_eq!(e.kind, crate::error::Kind::Refused, "{name}: {e}");
                assert!(e.message.contains(name), "{e}");
            }
        }
        let e = d.create_new("dangling", Access::Write).unwrap_err();
        assert!(e.message.contains("dangling"), "{e}");
        assert!(!Path::new("/nonexistent/x").exists());
        assert!(
            d.open_ours("real", Access::ReadWrite, OFlags::empty(), any)
                .is_ok()
        );
        // A file the proof does not accept is never opened for writing.
        let e = d
            .open_ours("real", Access::Write, OFlags::empty(), |_| Err("not ours"))
            .unwrap_err();
        assert_eq!(e.kind, crate::error::Kind::Refused, "{e}");
        assert!(e.message.contains("not ours"), "{e}");
    }

    #[test]
    fn replace_does_not_write_through_a_link_and_cleans_up() {
        let (t, d) = dir();
        let victim = t.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        std::os::unix::fs::symlink(&victim, t.path().join("m")).unwrap();
        assert!(d.replace("m", b"new").is_err());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        d.replace("n", b"one").unwrap();
        d.replace("n", b"two").unwrap();
        assert_eq!(std::fs::read_to_string(t.path().join("n")).unwrap(), "two");
        let names: Vec<_> = std::fs::read_dir(t.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert!(!names.iter().any(|n| n.ends_with(".tmp")), "{names:?}");
    }

    #[test]
    fn reads_are_capped() {
        let (t, d) = dir();
        std::fs::write(t.path().join("big"), vec![b'x'; 100]).unwrap();
        assert!(d.read_capped("big", 99).is_err());
        assert_eq!(d.read_capped("big", 100).unwrap().unwrap().len(), 100);
        assert!(d.read_capped("absent", 10).unwrap().is_none());
    }

    #[test]
    fn remove_if_ours_spares_a_replaced_file() {
        let (t, d) = dir();
        let (_, st) = d.create_new("f", Access::Write).unwrap();
        // Moved aside, not deleted, so the new file cannot reuse its inode.
        std::fs::rename(t.path().join("f"), t.path().join("aside")).unwrap();
        std::fs::write(t.path().join("f"), "users").unwrap();
        d.remove_if_ours("f", st.st_ino);
        assert!(t.path().join("f").exists());
        let (_, st) = d.create_new("g", Access::Write).unwrap();
        d.remove_if_ours("g", st.st_ino);
        assert!(!t.path().join("g").exists());
    }
}
