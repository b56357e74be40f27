//! The SMB back end: an `smb://[USER@]SERVER[:PORT]/SHARE/DIR` target
//! reached by volbench's own client (`proto::smb`, SMB 2.1 to 3.1.1), no
//! mount and no Windows. Every name is DIR plus one component
//! (`url::component_ok`: no separator, no stream, no wildcard), opened with
//! FILE_OPEN_REPARSE_POINT so a link is seen as itself, never followed;
//! files are created FILE_CREATE (the server refuses a name that exists);
//! an existing file is written or removed only once the server's
//! attributes, read by handle after the open, prove it the set's
//! (`owner::set_file_ours` over `attr_of`: regular, not a reparse point,
//! one link, and the file id the marker lists), so the file proven is the
//! file written; a removal is a delete-on-close on that same handle.
//!
//! What SMB does not give: a numeric owner (FileAllInformation carries
//! none), so a file reads as `OWNER` unless the owner SID of the handle a
//! change goes through is another than the run's lock file's (`owner.rs`:
//! a set's fill, rewrite, removal and the workers' write-opens; a tree's
//! files are proven so in `tree.rs`); and a volume id, so the share stands
//! for the file system. The run's lock is a
//! file created exclusively (`lock.rs`); set-up goes over one channel of
//! the directory's own client, and each worker logs on with its own
//! session and `channels=` channels (`engine.rs`). No client cache: every
//! I/O is direct. Unix only: the channels wait with poll(2).

mod clean;
mod connect;
mod engine;
mod file;
mod lock;
mod owner;
mod resume;
pub(crate) mod tree;

pub(crate) use clean::remove_empty_dir;
pub(crate) use connect::{url_of, with_channels};
pub(crate) use lock::SMB_LOCK_NAME;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use super::{Access, Attr, Dir, Entry, Files, Held, IoOpen, Proof, SetFile};
use crate::error::{Result, VbError};
use crate::io::gate::owner::{Kind, set_file_ours};
use crate::io::gate::setdir::not_regular;
use crate::proto::smb::consts::{attrs, status};
use crate::proto::smb::error::SmbError;
use crate::proto::smb::msg::FileId;
use crate::proto::smb::msg::info::{FileInfo, SetInfo};
use crate::proto::smb::msg::security::Sid;
use crate::proto::smb::session::client::Client;
use crate::proto::smb::session::ops::Open;
use crate::proto::smb::url::{Url, component_ok};

use file::SmbFile;

/// The owner every file on a share reads as: SMB reports no numeric owner
/// (see the module's text).
const OWNER: u32 = 0;

/// The largest marker or lock read or written in one request.
const SMALL_IO: usize = 1 << 20;

/// What every directory of one target shares: the set-up client (one
/// channel), the URL, and the share's stand-in file system id.
pub(crate) struct Shared {
    client: Mutex<Client>,
    url: Url,
    dev: u64,
    /// The owner the server gave the run's lock file when this run made
    /// it (`lock::take`): who this session's files belong to, what a
    /// tree's per-file proof compares (SMB's attributes carry no owner).
    me: Mutex<Option<Sid>>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Shared({})", self.url)
    }
}

// SAFETY: the client holds raw pointers only to the buffers of READs and
// WRITEs in flight, and every call through `Shared` is a blocking one made
// under the mutex that completes before it is released: nothing it points
// to outlives the call, and no two threads use the client at once.
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

impl Shared {
    fn client(&self) -> MutexGuard<'_, Client> {
        // A thread that panicked mid-call left nothing half-done that a
        // later call depends on: replies are matched by message id.
        let mut c = self.client.lock().unwrap_or_else(|e| e.into_inner());
        // A server restarted under the run (the workers reconnected):
        // dialled once, so the lock's removal and the set's upkeep after
        // the run reach it; it holds no handle across calls to reopen.
        if c.lost() {
            let _ = c.reconnect();
        }
        c
    }

    fn me(&self) -> Option<Sid> {
        *self.me.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        self.client().logoff();
    }
}

/// The share as a number (xxh3 of server and share, a NUL between them):
/// `Attr::dev` of everything on it.
fn share_id(u: &Url) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(u.host.as_bytes());
    h.update(&[0]);
    h.update(u.share.as_bytes());
    h.digest()
}

/// A Windows FILETIME (100 ns since 1601) as Unix seconds and nanoseconds.
fn unix_time(ft: u64) -> (i64, u32) {
    const EPOCH_DIFF_S: i64 = 11_644_473_600;
    let s = (ft / 10_000_000) as i64 - EPOCH_DIFF_S;
    (s, ((ft % 10_000_000) * 100) as u32)
}

/// What the server says of a file, as every proof reads it: a reparse
/// point (a symbolic link, a junction) is never a regular file, nor is one
/// about to be deleted.
pub(crate) fn attr_of(i: &FileInfo, dev: u64) -> Attr {
    Attr {
        kind: if i.attributes & attrs::REPARSE_POINT != 0 {
            Kind::Symlink
        } else if i.directory {
            Kind::Directory
        } else if i.delete_pending {
            Kind::Other
        } else {
            Kind::Regular
        },
        id: i.file_id,
        dev,
        size: i.end_of_file,
        allocated: i.allocation_size,
        links: u64::from(i.links),
        uid: OWNER,
        mode: if i.attributes & attrs::READONLY != 0 {
            0o444
        } else {
            0o644
        },
        born: unix_time(i.creation),
        birth: Some(unix_time(i.creation)),
    }
}

fn what_is(a: &Attr) -> &'static str {
    match a.kind {
        Kind::Regular => "a regular file",
        Kind::Directory => "a directory",
        Kind::Symlink => "a symbolic link or another reparse point",
        _ => "a file being deleted",
    }
}

/// Whether the server said the name is not there.
fn missing(e: &SmbError) -> bool {
    matches!(
        e.nt_status(),
        Some(status::OBJECT_NAME_NOT_FOUND | status::OBJECT_PATH_NOT_FOUND | status::NO_SUCH_FILE)
    )
}

/// A status that means something sits at the name that this session may
/// not open as itself (a link out of the share, a name it may not see).
fn unopenable(e: &SmbError) -> bool {
    matches!(
        e.nt_status(),
        Some(status::ACCESS_DENIED | status::STOPPED_ON_SYMLINK | status::DELETE_PENDING)
    )
}

/// Opens the directory target `path` (an smb:// URL): logs on, then walks
/// DIR one component at a time from the share's root, each a directory
/// and no reparse point; with `create` makes its last component when the
/// server says it is missing. A URL that does not parse, a wrong password,
/// a missing share: one line naming the URL, before any I/O.
pub(crate) fn open(path: &Path, create: bool) -> Result<Arc<dyn Dir>> {
    open_smb(path, create).map(|d| Arc::new(d) as Arc<dyn Dir>)
}

fn open_smb(path: &Path, create: bool) -> Result<SmbDir> {
    let url = url_of(path)?;
    let client = connect::connect(&url, connect::options_of(&url), 1)?;
    let shared = Arc::new(Shared {
        client: Mutex::new(client),
        dev: share_id(&url),
        url: url.clone(),
        me: Mutex::new(None),
    });
    // The share's root, shown as the URL without its directory.
    let root = Url {
        path: Vec::new(),
        ..url.clone()
    };
    let mut at = SmbDir {
        shared,
        dir: String::new(),
        path: PathBuf::from(root.to_string()),
    };
    let n = url.path.len();
    for (i, c) in url.path.iter().enumerate() {
        at = at.sub(c, create && i + 1 == n)?;
    }
    // The root itself: a directory the session may list.
    if n == 0 {
        let a = at.attr()?;
        if a.kind != Kind::Directory {
            return Err(VbError::target(format!("{url} is not a directory")));
        }
    }
    Ok(at)
}

/// One directory of an SMB target.
#[derive(Debug)]
pub(crate) struct SmbDir {
    shared: Arc<Shared>,
    /// The directory from the share's root, '/'-separated ("" the root).
    dir: String,
    /// The URL without its query, for messages and results.
    path: PathBuf,
}

impl SmbDir {
    fn err(&self, what: &str, name: &str, e: SmbError) -> VbError {
        VbError::target(format!(
            "cannot {what} {}: {e}",
            self.path_of(name).display()
        ))
    }

    fn refused(&self, name: &str, why: &str) -> VbError {
        VbError::refused(format!(
            "refusing to write {}: {why}",
            self.path_of(name).display()
        ))
    }

    /// `name` from the share's root: one component below this directory.
    fn at(&self, name: &str) -> Result<String> {
        if !component_ok(name) {
            return Err(VbError::input(format!(
                "'{name}' is not one path component of {}",
                self.path.display()
            )));
        }
        Ok(if self.dir.is_empty() {
            name.to_string()
        } else {
            format!("{}/{name}", self.dir)
        })
    }

    /// The file at `name` as the server describes it, opened as itself
    /// (never through a link) and closed again; None when nothing is there.
    fn look(&self, c: &mut Client, name: &str) -> Result<Option<Attr>> {
        let p = self.at(name)?;
        let r = match c.open(&p, Open::Read) {
            Ok(r) => r,
            Err(e) if missing(&e) => return Ok(None),
            Err(e) if unopenable(&e) => {
                return Ok(Some(Attr {
                    kind: Kind::Other,
                    ..attr_of(&FileInfo::default(), self.shared.dev)
                }));
            }
            Err(e) => return Err(self.err("look up", name, e)),
        };
        let info = c.file_info(r.file_id);
        let _ = c.close(r.file_id);
        info.map(|i| Some(attr_of(&i, self.shared.dev)))
            .map_err(|e| self.err("inspect", name, e))
    }

    /// Opens `name` as `how`, then reads its attributes by the handle.
    fn open_as(&self, c: &mut Client, name: &str, how: Open) -> Result<(FileId, Attr)> {
        let p = self.at(name)?;
        let r = c.open(&p, how).map_err(|e| {
            // A name looked up as missing that cannot be created holds
            // something this session may not see: Samba answers so for a
            // link out of the share.
            let unseen = how == Open::CreateFile
                && (missing(&e) || e.nt_status() == Some(status::OBJECT_NAME_COLLISION));
            if unseen {
                VbError::refused(format!(
                    "refusing to create {}: the server will not make it new (the name holds \
                     something volbench may not see, such as a link out of the share); move \
                     it away",
                    self.path_of(name).display()
                ))
            } else if missing(&e) {
                VbError::target(format!("{} is missing", self.path_of(name).display()))
            } else {
                self.err("open", name, e)
            }
        })?;
        match c.file_info(r.file_id) {
            Ok(i) => Ok((r.file_id, attr_of(&i, self.shared.dev))),
            Err(e) => {
                let _ = c.close(r.file_id);
                Err(self.err("inspect", name, e))
            }
        }
    }

    /// The regular file at `name`, opened as `how`, or why not.
    fn open_regular(&self, c: &mut Client, name: &str, how: Open) -> Result<(FileId, Attr)> {
        let (f, a) = self.open_as(c, name, how)?;
        if a.kind != Kind::Regular {
            let _ = c.close(f);
            return Err(not_regular(&self.path_of(name), what_is(&a)));
        }
        Ok((f, a))
    }

    fn file(&self, f: FileId) -> Box<dyn SetFile> {
        Box::new(SmbFile::new(self.shared.clone(), f))
    }

    /// Creates `name` new (FILE_CREATE), open; `None` when the name is
    /// taken, which the lock treats apart from a failure.
    fn create_or_taken(&self, c: &mut Client, name: &str) -> Result<Option<(FileId, Attr)>> {
        let p = self.at(name)?;
        let r = match c.open(&p, Open::CreateFile) {
            Ok(r) => r,
            Err(e) if e.nt_status() == Some(status::OBJECT_NAME_COLLISION) => return Ok(None),
            Err(e) => return Err(self.err("create", name, e)),
        };
        match c.file_info(r.file_id) {
            Ok(i) => Ok(Some((r.file_id, attr_of(&i, self.shared.dev)))),
            Err(e) => {
                let _ = c.close(r.file_id);
                Err(self.err("inspect", name, e))
            }
        }
    }

    /// Writes all of `bytes` at 0 to the open `f`.
    fn write_all(&self, c: &mut Client, f: FileId, name: &str, bytes: &[u8]) -> Result<()> {
        let mut done = 0usize;
        while done < bytes.len() {
            let end = bytes.len().min(done + SMALL_IO);
            match c.write_at(f, done as u64, &bytes[done..end]) {
                Ok(0) => {
                    return Err(VbError::target(format!(
                        "cannot write {}: the server wrote nothing",
                        self.path_of(name).display()
                    )));
                }
                Ok(n) => done += n,
                Err(e) => return Err(self.err("write", name, e)),
            }
        }
        c.flush(f).map_err(|e| self.err("flush", name, e))
    }

    /// The subdirectory `name`, made if missing when `create`; anything
    /// else at the name (a file, a link) is refused, never followed.
    fn sub(&self, name: &str, create: bool) -> Result<SmbDir> {
        let p = self.at(name)?;
        let mut c = self.shared.client();
        let refuse = |why: String| {
            VbError::refused(format!(
                "refusing to use {}: {why}",
                self.path_of(name).display()
            ))
        };
        if create {
            match c.open(&p, Open::CreateDir) {
                Ok(r) => {
                    let _ = c.close(r.file_id);
                }
                Err(e) if e.nt_status() == Some(status::OBJECT_NAME_COLLISION) => {}
                Err(e) => return Err(self.err("create", name, e)),
            }
        }
        match self.look(&mut c, name)? {
            Some(a) if a.kind == Kind::Directory => {}
            Some(a) => {
                return Err(refuse(format!(
                    "it is {}, not a directory, and volbench never follows links",
                    what_is(&a)
                )));
            }
            None => {
                return Err(VbError::target(format!(
                    "{} is missing",
                    self.path_of(name).display()
                )));
            }
        }
        Ok(SmbDir {
            shared: self.shared.clone(),
            dir: p,
            path: self.path_of(name),
        })
    }

    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// Deletes the file open as `f` when it closes, and closes it.
    fn delete_open(c: &mut Client, f: FileId) -> bool {
        let done = c.set_info(f, SetInfo::DeleteOnClose).is_ok();
        let _ = c.close(f);
        done
    }
}

impl Dir for SmbDir {
    fn path(&self) -> &Path {
        &self.path
    }

    fn attr(&self) -> Result<Attr> {
        let mut c = self.shared.client();
        let r = c
            .open(&self.dir, Open::ListDir)
            .map_err(|e| VbError::target(format!("cannot open {}: {e}", self.path.display())))?;
        let info = c.file_info(r.file_id);
        let _ = c.close(r.file_id);
        let i = info
            .map_err(|e| VbError::target(format!("cannot inspect {}: {e}", self.path.display())))?;
        Ok(attr_of(&i, self.shared.dev))
    }

    fn uid(&self) -> u32 {
        OWNER
    }

    fn entry(&self, name: &str) -> Result<Entry> {
        let mut c = self.shared.client();
        Ok(match self.look(&mut c, name)? {
            None => Entry::Missing,
            Some(a) if a.kind == Kind::Regular => Entry::Regular(a),
            Some(a) if a.id == 0 => Entry::Other("something this session may not open as itself"),
            Some(a) => Entry::Other(what_is(&a)),
        })
    }

    fn create_new(&self, name: &str, _access: Access) -> Result<(Box<dyn SetFile>, Attr)> {
        let mut c = self.shared.client();
        let (f, a) = self.open_as(&mut c, name, Open::CreateFile)?;
        Ok((self.file(f), a))
    }

    fn open_read(&self, name: &str) -> Result<(Box<dyn SetFile>, Attr)> {
        let mut c = self.shared.client();
        let (f, a) = self.open_regular(&mut c, name, Open::Read)?;
        Ok((self.file(f), a))
    }

    fn open_ours(
        &self,
        name: &str,
        _access: Access,
        proof: Proof<'_>,
    ) -> Result<(Box<dyn SetFile>, Attr)> {
        let mut c = self.shared.client();
        // Opening writes nothing (FILE_OPEN, no truncation): the handle
        // pins the file, whose attributes the proof then reads; only the
        // file proven is ever written through it.
        let (f, a) = self.open_as(&mut c, name, Open::WriteExisting)?;
        let a = match owner::stamp(&mut c, f, a, self.shared.me()) {
            Ok(a) => a,
            Err(e) => {
                let _ = c.close(f);
                return Err(self.err("read the owner of", name, e));
            }
        };
        if let Err(why) = proof(&a) {
            let _ = c.close(f);
            return Err(self.refused(name, why));
        }
        drop(c);
        Ok((self.file(f), a))
    }

    fn remove_if_ours(&self, name: &str, id: u64) {
        let mut c = self.shared.client();
        // The proof and the delete are on one handle: nothing renamed in
        // between can be removed instead.
        if let Ok((f, a)) = self.open_as(&mut c, name, Open::Change) {
            let me = self.shared.me();
            let ours =
                |a: Attr| a.kind == Kind::Regular && a.links == 1 && a.id == id && a.uid == OWNER;
            if owner::stamp(&mut c, f, a, me).is_ok_and(ours) {
                Self::delete_open(&mut c, f);
            } else {
                let _ = c.close(f);
            }
        }
    }

    fn read_capped(&self, name: &str, cap: usize) -> Result<Option<Vec<u8>>> {
        let mut c = self.shared.client();
        if self.look(&mut c, name)?.is_none() {
            return Ok(None);
        }
        let (f, a) = self.open_regular(&mut c, name, Open::Read)?;
        if a.size > cap as u64 {
            let _ = c.close(f);
            return Err(VbError::refused(format!(
                "refusing to use {}: it is {} bytes, more than the {cap} a volbench file of \
                 this kind can be; move it away",
                self.path_of(name).display(),
                a.size
            )));
        }
        let mut buf = vec![0u8; cap.min(SMALL_IO) + 1];
        let mut got = 0usize;
        let r = loop {
            if got == buf.len() {
                break Ok(());
            }
            match c.read_at(f, got as u64, &mut buf[got..]) {
                Ok(0) => break Ok(()),
                Ok(n) => got += n,
                Err(e) => break Err(self.err("read", name, e)),
            }
        };
        let _ = c.close(f);
        r?;
        if got > cap {
            return Err(VbError::refused(format!(
                "refusing to use {}: it grew past {cap} bytes while being read",
                self.path_of(name).display()
            )));
        }
        buf.truncate(got);
        Ok(Some(buf))
    }

    fn replace(&self, name: &str, bytes: &[u8]) -> Result<u64> {
        let mut c = self.shared.client();
        let tmp = format!("{name}.{}.tmp", std::process::id());
        let (f, a) = self.open_as(&mut c, &tmp, Open::CreateFile)?;
        let written = self.write_all(&mut c, f, &tmp, bytes);
        // A rename never replaces (ReplaceIfExists 0): the old file at the
        // name, a regular file of one link, is deleted first, by handle.
        let cleared = written.and_then(|()| match self.open_as(&mut c, name, Open::Change) {
            Ok((old, o)) if o.kind == Kind::Regular && o.links == 1 => {
                if Self::delete_open(&mut c, old) {
                    Ok(())
                } else {
                    Err(VbError::target(format!(
                        "cannot replace {}: the server kept the old file",
                        self.path_of(name).display()
                    )))
                }
            }
            Ok((old, o)) => {
                let _ = c.close(old);
                Err(not_regular(&self.path_of(name), what_is(&o)))
            }
            Err(_) => Ok(()),
        });
        let to = self.at(name)?;
        let renamed = cleared.and_then(|()| {
            c.set_info(f, SetInfo::Rename(&to))
                .map_err(|e| self.err("rename into", name, e))
        });
        if renamed.is_err() {
            Self::delete_open(&mut c, f);
        } else {
            let _ = c.close(f);
        }
        renamed.map(|()| a.id)
    }

    fn rewrite_ours(&self, name: &str, id: u64, bytes: &[u8]) -> Result<()> {
        let dev = self.shared.dev;
        let proof = |a: &Attr| {
            if a.id != id {
                Err("it was replaced while volbench used it")
            } else {
                set_file_ours(a, OWNER, dev)
            }
        };
        let (f, _) = self.open_ours(name, Access::Write, &proof)?;
        let io = |e: crate::io::sys::io::Errno| {
            VbError::target(format!(
                "cannot write {}: {}",
                self.path_of(name).display(),
                std::io::Error::from(e)
            ))
        };
        f.truncate(0).map_err(io)?;
        let mut done = 0;
        while done < bytes.len() {
            match f.write_at(&bytes[done..], done as u64).map_err(io)? {
                0 => return Err(VbError::target("the server wrote nothing")),
                n => done += n,
            }
        }
        f.settle().map_err(io)
    }

    fn free_bytes(&self) -> Option<u64> {
        let mut c = self.shared.client();
        let r = c.open(&self.dir, Open::ListDir).ok()?;
        let size = c.fs_size(r.file_id);
        let _ = c.close(r.file_id);
        size.ok().map(|s| s.caller_free_bytes)
    }

    fn open_sub(&self, name: &str) -> Result<Arc<dyn Dir>> {
        Ok(Arc::new(self.sub(name, true)?))
    }

    fn lock(&self) -> Result<Box<dyn Held>> {
        lock::take(self)
    }

    fn open_files(&self, files: &[(String, u64)], how: &IoOpen) -> Result<Files> {
        engine::open(self, files, how).map(|e| Files::Own(Box::new(e)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_servers_attributes_are_what_the_proofs_read() {
        let i = FileInfo {
            links: 1,
            file_id: 77,
            end_of_file: 4096,
            // 2021-01-01T00:00:00Z as a FILETIME.
            creation: 132_539_328_000_000_000,
            ..FileInfo::default()
        };
        let x = attr_of(&i, 9);
        assert_eq!(
            (x.kind, x.id, x.links, x.size, x.born),
            (Kind::Regular, 77, 1, 4096, (1_609_459_200, 0))
        );
        assert!(set_file_ours(&x, OWNER, 9).is_ok());
        // A reparse point is never a regular file, whatever else it says.
        let link = attr_of(
            &FileInfo {
                attributes: attrs::REPARSE_POINT,
                ..i
            },
            9,
        );
        assert_eq!(link.kind, Kind::Symlink);
        assert!(set_file_ours(&link, OWNER, 9).is_err());
        let two = attr_of(&FileInfo { links: 2, ..i }, 9);
        assert!(set_file_ours(&two, OWNER, 9).is_err());
        let dir = attr_of(
            &FileInfo {
                directory: true,
                ..i
            },
            9,
        );
        assert_eq!(dir.kind, Kind::Directory);
        let going = attr_of(
            &FileInfo {
                delete_pending: true,
                ..i
            },
            9,
        );
        assert_eq!(going.kind, Kind::Other);
    }

    #[test]
    fn each_share_is_its_own_file_system() {
        let a = crate::proto::smb::url::parse("smb://s/one/d").unwrap();
        let b = crate::proto::smb::url::parse("smb://s/two/d").unwrap();
        let c = crate::proto::smb::url::parse("smb://u@s:4450/one/e").unwrap();
        assert_ne!(share_id(&a), share_id(&b));
        assert_eq!(share_id(&a), share_id(&c));
    }
}
