//! The gate's named exception for SQLite: the one place a path is handed to
//! a library that creates and writes files on its own (`rusqlite`, bundled
//! SQLite). Before SQLite sees the path, the store file is created new
//! through the gate (`gate::create_new`: O_CREAT|O_EXCL, no link followed)
//! or proven ours: a regular file, one link, not a symlink, owned by the
//! user volbench runs as. The names SQLite makes beside it (`-wal`, `-shm`,
//! `-journal`) are absent or pass the same proof. SQLite then opens each
//! with O_NOFOLLOW itself (its unix VFS adds it to every open), without
//! leave to create the database, and the file it opened is held against
//! the one proven (device and inode), so a swap between the check and the
//! open is refused rather than written into. Temporary tables and sorts
//! stay in memory (`temp_store`), so SQLite makes no other file.
//! ARCHITECTURE.md names this file; `tests/e2e/architecture.rs` allows
//! `rusqlite` here and in nothing else but `sqlite/mod.rs`, which only
//! receives the connection.

use std::path::{Path, PathBuf};

use crate::error::{Result, VbError};

/// The names SQLite makes beside a database.
pub(crate) const COMPANIONS: [&str; 3] = ["-wal", "-shm", "-journal"];

/// What `open` proved about the store file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Identity {
    dev: u64,
    ino: u64,
}

/// How a store is opened: to read (it must exist) or to write (made new
/// when absent; `parents`: its missing directories too, for the default
/// location volbench chose itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Read,
    Write { parents: bool },
}

/// The store file proven ours (or made new) and opened by SQLite; true
/// when it was made now.
pub(crate) fn open(path: &Path, mode: Mode) -> Result<(rusqlite::Connection, bool)> {
    let shown = path.display().to_string();
    let mut made = false;
    let id = match proven(path, &shown)? {
        Some(id) => id,
        None => {
            let Mode::Write { parents } = mode else {
                return Err(VbError::input(format!(
                    "{shown}: no store there (runs are kept with `run --store {shown}` or \
                     `volbench store import --store {shown} DIR`)"
                )));
            };
            made = create(path, parents, &shown)?;
            proven(path, &shown)?.ok_or_else(|| {
                VbError::refused(format!("{shown}: the new store vanished as it was made"))
            })?
        }
    };
    for c in COMPANIONS {
        let mut p = path.as_os_str().to_owned();
        p.push(c);
        let p = PathBuf::from(p);
        proven(&p, &p.display().to_string())?;
    }
    use rusqlite::OpenFlags as F;
    // Read-write even to read: a WAL store's readers share its -shm index
    // (SQLite falls back to read-only on a file we may not write). Never
    // SQLITE_OPEN_CREATE: the file exists, made or proven above.
    let flags = F::SQLITE_OPEN_NO_MUTEX | F::SQLITE_OPEN_NOFOLLOW | F::SQLITE_OPEN_READ_WRITE;
    let conn = rusqlite::Connection::open_with_flags(path, flags)
        .map_err(|e| VbError::input(format!("{shown}: SQLite cannot open it: {e}")))?;
    if proven(path, &shown)? != Some(id) {
        return Err(VbError::refused(format!(
            "{shown}: the file changed while it was opened (replaced by another): refused"
        )));
    }
    Ok((conn, made))
}

/// Makes the store file new (and, for the default location, its parents),
/// through the gate; true when this process made it. A file that appeared
/// at the name meanwhile (another volbench making the same store: eight
/// imports into one new store at once) is left for the caller's proof,
/// the same one an existing store passes, never written through here.
fn create(path: &Path, parents: bool, shown: &str) -> Result<bool> {
    if parents {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            crate::io::gate::create_dir_all(dir).map_err(|e| {
                VbError::target(format!(
                    "{}: cannot make the store's directory: {e}",
                    dir.display()
                ))
            })?;
        }
    }
    match crate::io::gate::create_new(path, crate::io::sys::fs::OFlags::RDWR, 0o600) {
        Ok(fd) => {
            drop(fd);
            Ok(true)
        }
        Err(e) => {
            let e = std::io::Error::from(e);
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                Ok(false)
            } else {
                Err(VbError::target(format!(
                    "{shown}: cannot make the store: {e}"
                )))
            }
        }
    }
}

/// None when nothing is at `path`; its identity when it is a regular file
/// of ours with one link; an error naming what it is otherwise.
fn proven(path: &Path, shown: &str) -> Result<Option<Identity>> {
    let m = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(VbError::target(format!("{shown}: {e}"))),
    };
    let ft = m.file_type();
    if ft.is_symlink() {
        return Err(VbError::refused(format!(
            "{shown}: a symbolic link; a store is never reached through one"
        )));
    }
    if !ft.is_file() {
        return Err(VbError::refused(format!(
            "{shown}: not a regular file; a store is a file volbench made"
        )));
    }
    ours(&m, shown)
}

#[cfg(unix)]
fn ours(m: &std::fs::Metadata, shown: &str) -> Result<Option<Identity>> {
    use std::os::unix::fs::MetadataExt;
    if m.nlink() != 1 {
        return Err(VbError::refused(format!(
            "{shown}: has {} hard links; a store file has one (another name could be \
             someone else's file)",
            m.nlink()
        )));
    }
    let me = crate::io::gate::owner::euid();
    if m.uid() != me {
        return Err(VbError::refused(format!(
            "{shown}: owned by uid {}, not by this user (uid {me}); volbench writes only into \
             a store of its own user",
            m.uid()
        )));
    }
    Ok(Some(Identity {
        dev: m.dev(),
        ino: m.ino(),
    }))
}

/// Windows: a regular file that is no reparse point (checked above); its
/// creation time stands in for the inode std does not give there.
#[cfg(not(unix))]
fn ours(m: &std::fs::Metadata, _shown: &str) -> Result<Option<Identity>> {
    let created = m
        .created()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as u64);
    Ok(Some(Identity {
        dev: created,
        ino: 0,
    }))
}
