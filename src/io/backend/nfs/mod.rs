//! The NFS back end: an `nfs://SERVER[:PORT]/EXPORT/DIR` target reached by
//! volbench's own client (`proto::nfs`, NFSv3 or NFSv4.1), no mount. The
//! set's directory is a file handle; every name is one LOOKUP from it,
//! which never follows a server-side symlink (it returns the link's own
//! attributes, refused as not a regular file); files are created
//! EXCLUSIVE (a create sent again after a lost reply succeeds only on the
//! file it made); an existing file is written or removed only once the
//! server's attributes prove it the set's (`owner::set_file_ours`:
//! regular, one link, our AUTH_SYS uid, the set's file system, and the
//! file id the marker lists), looked up again by handle after the open.
//! Nothing outside DIR is reached: names are single components and the
//! only handles are DIR's and its `files-N` subdirectories'.
//!
//! What it keeps apart from a local target: the run's lock is a file
//! created exclusively (`lock.rs`), not a flock; set-up calls go over one
//! connection of the directory's own client, and each worker opens its own
//! client with `nconnect` connections (`engine.rs`); there is no client
//! cache, so every I/O is direct, and no syncs, discards or cache drops
//! yet (`caps`). Unix only: the transport waits with poll(2).

mod clean;
mod engine;
mod file;
mod lock;
pub(crate) mod tree;

pub(crate) use clean::remove_empty_dir;
pub(crate) use lock::NFS_LOCK_NAME;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use super::{Access, Attr, Dir, Entry, Files, Held, IoOpen, Proof, SetFile};
use crate::error::{Result, VbError};
use crate::io::gate::owner::{Kind, set_file_ours};
use crate::io::gate::setdir::not_regular;
use crate::proto::nfs::error::code;
use crate::proto::nfs::{self, Client, CreateHow, Fh, FileType, NfsError, Reply, Request, Stable};

pub(crate) use file::NfsFile;

/// The URL a target path holds, parsed (the one parser, `proto::nfs::url`).
pub(crate) fn url_of(path: &Path) -> Result<nfs::Url> {
    let text = path
        .to_str()
        .ok_or_else(|| VbError::input("an nfs:// target must be UTF-8 text"))?;
    nfs::url::parse(text).map_err(VbError::input)
}

/// `target` with `--nfs-connections N` in its URL (`nconnect=N`): the
/// flag and the URL key are one setting, so a target carries it to every
/// host and into the result; the two given with different values is an
/// error, never one silently winning.
pub(crate) fn with_connections(target: &Path, n: u64) -> Result<PathBuf> {
    let url = url_of(target)?;
    match url.nconnect {
        Some(m) if m as u64 == n => return Ok(target.to_path_buf()),
        Some(m) => {
            return Err(VbError::input(format!(
                "--nfs-connections {n} and the URL's nconnect={m} disagree: give one"
            )));
        }
        None => {}
    }
    let text = target.to_string_lossy();
    let sep = if text.contains('?') { '&' } else { '?' };
    let out = PathBuf::from(format!("{text}{sep}nconnect={n}"));
    url_of(&out)?;
    Ok(out)
}

/// The set-up client's connections: one, whatever `nconnect` says (the
/// workers' clients open those), so the server sees exactly N per worker
/// plus this one.
const SETUP_CONNECTIONS: usize = 1;

/// The largest file a marker or lock read takes in one READ.
const SMALL_READ: usize = 1 << 20;

/// What every directory of one target shares: the client for set-up and
/// metadata calls, and what a worker needs to open its own.
pub(crate) struct Shared {
    client: Mutex<Client>,
    url: nfs::Url,
    opts: nfs::Options,
    /// The target directory's file system, as `Attr::dev`.
    dev: u64,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Shared({})", self.url)
    }
}

// SAFETY: the client holds raw pointers only to the buffers of READs and
// WRITEs in flight, and every call through `Shared` is a blocking one made
// under the mutex that completes before it is released: nothing it
// points to outlives the call, and no two threads use the client at once.
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

impl Shared {
    fn client(&self) -> MutexGuard<'_, Client> {
        // A thread that panicked mid-call left nothing half-done that a
        // later call depends on: the transport matches replies by xid.
        self.client.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A file system id folded into one number (`Attr::dev`).
fn fold(fsid: (u64, u64)) -> u64 {
    fsid.0.rotate_left(32) ^ fsid.1
}

/// What the server says of a file, as every proof reads it. An owner the
/// server gave as a name this host does not know is no uid: never ours.
pub(crate) fn attr_of(a: &nfs::Attr) -> Attr {
    Attr {
        kind: match a.kind {
            FileType::Regular => Kind::Regular,
            FileType::Directory => Kind::Directory,
            FileType::Symlink => Kind::Symlink,
            _ => Kind::Other,
        },
        id: a.fileid,
        dev: fold(a.fsid),
        size: a.size,
        allocated: a.used,
        links: u64::from(a.nlink),
        uid: a.uid.unwrap_or(u32::MAX),
        mode: a.mode & 0o7777,
        // NFS keeps no birth time: the change time stands for it.
        born: (a.ctime.secs, a.ctime.nsecs),
        // NFSv3 has no birth time (ctime moves with every write).
        birth: None,
    }
}

fn what_is(kind: FileType) -> &'static str {
    match kind {
        FileType::Regular => "a regular file",
        FileType::Directory => "a directory",
        FileType::Symlink => "a symbolic link",
        _ => "a special file",
    }
}

/// Opens the directory target `path` (an nfs:// URL): connects, and with
/// `create` makes its last component when the server says it is missing.
/// A URL that does not parse, a server that does not answer, an export
/// that does not exist: one line naming the URL, before any I/O.
pub(crate) fn open(path: &Path, create: bool) -> Result<Arc<dyn Dir>> {
    Ok(Arc::new(open_nfs(path, create)?))
}

/// `open`, as the NFS directory itself (a tree's root).
fn open_nfs(path: &Path, create: bool) -> Result<NfsDir> {
    let url = url_of(path)?;
    let mut opts = nfs::Options::from_url(&url);
    opts.connections = SETUP_CONNECTIONS;
    let fail = |e: nfs::ConnectError| VbError::target(format!("cannot reach the NFS target: {e}"));
    // The directory's attributes: the mount's when it is the directory,
    // read anew for one just made.
    let (mount, fh, known) = match nfs::connect(&url, &opts) {
        Ok(m) => {
            let (fh, attr) = (m.dir, m.attr);
            (m, fh, Some(attr))
        }
        Err(e) if create && url.path.len() > 1 && e.is(code::NOENT) => {
            let mut parent = url.clone();
            let last = parent.path.pop().unwrap_or_default();
            let mut m = nfs::connect(&parent, &opts).map_err(|_| fail(e))?;
            let dir = m.dir;
            let fh = make_dir(&mut m.client, &dir, &last)
                .map_err(|e| VbError::target(format!("cannot create {}: {e}", url)))?;
            (m, fh, None)
        }
        Err(e) => return Err(fail(e)),
    };
    let mut client = mount.client;
    let attr = match known {
        Some(a) => a,
        None => client
            .getattr(&fh)
            .map_err(|e| VbError::target(format!("cannot inspect {url}: {e}")))?,
    };
    let shared = Arc::new(Shared {
        client: Mutex::new(client),
        dev: fold(attr.fsid),
        opts,
        url: url.clone(),
    });
    Ok(NfsDir {
        shared,
        fh,
        path: PathBuf::from(url.to_string()),
    })
}

/// The directory `name` in `dir`, made if missing; anything else at the
/// name (a symlink, a file) is refused, never followed.
fn make_dir(c: &mut Client, dir: &Fh, name: &str) -> std::result::Result<Fh, String> {
    c.ensure_dir(dir, name.as_bytes(), 0o755)
        .map_err(|e| e.to_string())
}

/// One directory of an NFS target.
#[derive(Debug)]
pub(crate) struct NfsDir {
    shared: Arc<Shared>,
    fh: Fh,
    /// The URL without its query, for messages and results.
    path: PathBuf,
}

impl NfsDir {
    fn err(&self, what: &str, name: &str, e: NfsError) -> VbError {
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

    /// The file at `name`, looked up without following it.
    fn look(&self, c: &mut Client, name: &str) -> Result<Option<(Fh, nfs::Attr)>> {
        match c.lookup(&self.fh, name.as_bytes()) {
            Ok(x) => Ok(Some(x)),
            Err(e) if e.is(code::NOENT) => Ok(None),
            Err(e) => Err(self.err("look up", name, e)),
        }
    }

    /// The regular file at `name`, opened (its number in the client's
    /// table), or why not.
    fn open_regular(&self, c: &mut Client, name: &str) -> Result<(u32, Fh, nfs::Attr)> {
        let (fh, a) = self.look(c, name)?.ok_or_else(|| {
            VbError::target(format!("{} is missing", self.path_of(name).display()))
        })?;
        if a.kind != FileType::Regular {
            return Err(not_regular(&self.path_of(name), what_is(a.kind)));
        }
        let file = c.open(&fh).map_err(|e| self.err("open", name, e))?;
        Ok((file, fh, a))
    }

    fn file(&self, file: u32, fh: Fh) -> Box<dyn SetFile> {
        Box::new(NfsFile::new(self.shared.clone(), file, fh))
    }

    /// Creates `name` new (EXCLUSIVE), open; `None` when the name is
    /// taken (the server's EXIST), which a caller such as the lock treats
    /// apart from a failure.
    fn create_or_taken(&self, c: &mut Client, name: &str) -> Result<Option<(u32, Fh, nfs::Attr)>> {
        let verf = fastrand::u64(..).to_be_bytes();
        let made = c.create_file(
            &self.fh,
            name.as_bytes(),
            0o644,
            CreateHow::Exclusive(verf),
            true,
        );
        let (file, fh, a) = match made {
            Ok(m) => m,
            Err(e) if e.is(code::EXIST) => return Ok(None),
            Err(e) => return Err(self.err("create", name, e)),
        };
        let file = match file {
            Some(f) => f,
            None => c.open(&fh).map_err(|e| self.err("open", name, e))?,
        };
        Ok(Some((file, fh, a)))
    }

    /// `create_or_taken`, a taken name refused.
    fn create(&self, c: &mut Client, name: &str) -> Result<(u32, Fh, nfs::Attr)> {
        self.create_or_taken(c, name)?.ok_or_else(|| {
            VbError::target(format!(
                "cannot create {}: the name is taken",
                self.path_of(name).display()
            ))
        })
    }

    /// A new file `name`, open for writing, or `None` when the name is
    /// taken.
    pub(super) fn create_new_or_taken(
        &self,
        name: &str,
    ) -> Result<Option<(Box<dyn SetFile>, Attr)>> {
        let mut c = self.shared.client();
        Ok(self
            .create_or_taken(&mut c, name)?
            .map(|(file, fh, a)| (self.file(file, fh), attr_of(&a))))
    }

    /// Writes all of `bytes` at 0 to the open `file`, on stable storage.
    fn write_all(&self, c: &mut Client, file: u32, name: &str, bytes: &[u8]) -> Result<()> {
        let mut done = 0usize;
        while done < bytes.len() {
            let n = (bytes.len() - done).min(SMALL_READ) as u32;
            let r = c.call(Request::Write {
                file,
                offset: done as u64,
                len: n,
                buf: bytes[done..].as_ptr(),
                stable: Stable::FileSync,
            });
            match r {
                Ok(Reply::Write { count, .. }) if count > 0 => done += count as usize,
                Ok(_) => {
                    return Err(VbError::target(format!(
                        "cannot write {}: the server wrote nothing",
                        self.path_of(name).display()
                    )));
                }
                Err(e) => return Err(self.err("write", name, e)),
            }
        }
        Ok(())
    }

    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    pub(crate) fn handle(&self) -> &Fh {
        &self.fh
    }
}

impl Dir for NfsDir {
    fn path(&self) -> &Path {
        &self.path
    }

    fn attr(&self) -> Result<Attr> {
        let a =
            self.shared.client().getattr(&self.fh).map_err(|e| {
                VbError::target(format!("cannot inspect {}: {e}", self.path.display()))
            })?;
        Ok(attr_of(&a))
    }

    fn uid(&self) -> u32 {
        self.shared.opts.uid
    }

    fn entry(&self, name: &str) -> Result<Entry> {
        let mut c = self.shared.client();
        Ok(match self.look(&mut c, name)? {
            None => Entry::Missing,
            Some((_, a)) if a.kind == FileType::Regular => Entry::Regular(attr_of(&a)),
            Some((_, a)) => Entry::Other(what_is(a.kind)),
        })
    }

    fn create_new(&self, name: &str, _access: Access) -> Result<(Box<dyn SetFile>, Attr)> {
        let mut c = self.shared.client();
        let (file, fh, a) = self.create(&mut c, name)?;
        Ok((self.file(file, fh), attr_of(&a)))
    }

    fn open_read(&self, name: &str) -> Result<(Box<dyn SetFile>, Attr)> {
        let mut c = self.shared.client();
        let (file, fh, a) = self.open_regular(&mut c, name)?;
        Ok((self.file(file, fh), attr_of(&a)))
    }

    fn open_ours(
        &self,
        name: &str,
        _access: Access,
        proof: Proof<'_>,
    ) -> Result<(Box<dyn SetFile>, Attr)> {
        let mut c = self.shared.client();
        let (fh, seen) = self.look(&mut c, name)?.ok_or_else(|| {
            VbError::target(format!("{} is missing", self.path_of(name).display()))
        })?;
        proof(&attr_of(&seen)).map_err(|why| self.refused(name, why))?;
        let file = c.open(&fh).map_err(|e| self.err("open", name, e))?;
        // The file the handle names now: proven again before any write.
        let now = match c.getattr(&fh) {
            Ok(a) => a,
            Err(e) => {
                let _ = c.close(file);
                return Err(self.err("inspect", name, e));
            }
        };
        let again = if now.fileid != seen.fileid {
            Err("it was replaced while volbench opened it")
        } else {
            proof(&attr_of(&now))
        };
        if let Err(why) = again {
            let _ = c.close(file);
            return Err(self.refused(name, why));
        }
        drop(c);
        Ok((self.file(file, fh), attr_of(&now)))
    }

    fn remove_if_ours(&self, name: &str, id: u64) {
        let mut c = self.shared.client();
        // The LOOKUP and the REMOVE are two calls: a file another client
        // renames in between them is the one window NFSv3 leaves open.
        if let Ok(Some((_, a))) = self.look(&mut c, name) {
            if a.kind == FileType::Regular && a.fileid == id {
                let _ = c.remove(&self.fh, name.as_bytes());
            }
        }
    }

    fn read_capped(&self, name: &str, cap: usize) -> Result<Option<Vec<u8>>> {
        let mut c = self.shared.client();
        let Some((fh, a)) = self.look(&mut c, name)? else {
            return Ok(None);
        };
        if a.kind != FileType::Regular {
            return Err(not_regular(&self.path_of(name), what_is(a.kind)));
        }
        if a.size > cap as u64 {
            return Err(VbError::refused(format!(
                "refusing to use {}: it is {} bytes, more than the {cap} a volbench file of \
                 this kind can be; move it away",
                self.path_of(name).display(),
                a.size
            )));
        }
        let file = c.open(&fh).map_err(|e| self.err("open", name, e))?;
        let mut buf = vec![0u8; cap.min(SMALL_READ) + 1];
        let r = c.call(Request::Read {
            file,
            offset: 0,
            len: buf.len() as u32,
            buf: buf.as_mut_ptr(),
        });
        let _ = c.close(file);
        match r {
            Ok(Reply::Read { count, .. }) if count as usize <= cap => {
                buf.truncate(count as usize);
                Ok(Some(buf))
            }
            Ok(Reply::Read { .. }) => Err(VbError::refused(format!(
                "refusing to use {}: it grew past {cap} bytes while being read",
                self.path_of(name).display()
            ))),
            Ok(_) => Err(VbError::target(format!(
                "cannot read {}: no data in the reply",
                self.path_of(name).display()
            ))),
            Err(e) => Err(self.err("read", name, e)),
        }
    }

    fn replace(&self, name: &str, bytes: &[u8]) -> Result<u64> {
        let mut c = self.shared.client();
        if let Some((_, a)) = self.look(&mut c, name)? {
            if a.kind != FileType::Regular {
                return Err(not_regular(&self.path_of(name), what_is(a.kind)));
            }
        }
        let tmp = format!("{name}.{}.tmp", std::process::id());
        let (file, _, a) = self.create(&mut c, &tmp)?;
        let written = self.write_all(&mut c, file, &tmp, bytes);
        let _ = c.close(file);
        // RENAME replaces the regular file at the name: the old marker,
        // never written through.
        let renamed = written.and_then(|()| {
            c.call(Request::Rename {
                from: &self.fh,
                from_name: tmp.as_bytes(),
                to: &self.fh,
                to_name: name.as_bytes(),
            })
            .map(|_| ())
            .map_err(|e| self.err("rename into", name, e))
        });
        if let Err(e) = renamed {
            if let Ok(Some((_, t))) = self.look(&mut c, &tmp) {
                if t.fileid == a.fileid {
                    let _ = c.remove(&self.fh, tmp.as_bytes());
                }
            }
            return Err(e);
        }
        Ok(a.fileid)
    }

    fn rewrite_ours(&self, name: &str, id: u64, bytes: &[u8]) -> Result<()> {
        let (uid, dev) = (self.uid(), self.shared.dev);
        let proof = |a: &Attr| {
            if a.id != id {
                Err("it was replaced while volbench used it")
            } else {
                set_file_ours(a, uid, dev)
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
        // NFSv3 FSSTAT's abytes, NFSv4 space_avail: what this user may
        // still write. A server that cannot say (an error, or a file
        // system of no size) leaves it unknown: a full export then shows
        // as NOSPC mid-fill, as before.
        match self.shared.client().space(&self.fh) {
            Ok((_, 0)) | Err(_) => None,
            Ok((avail, _)) => Some(avail),
        }
    }

    fn open_sub(&self, name: &str) -> Result<Arc<dyn Dir>> {
        let fh = make_dir(&mut self.shared.client(), &self.fh, name).map_err(|why| {
            VbError::refused(format!(
                "refusing to use {}: {why}",
                self.path_of(name).display()
            ))
        })?;
        Ok(Arc::new(NfsDir {
            shared: self.shared.clone(),
            fh,
            path: self.path_of(name),
        }))
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
    fn nfs_connections_go_into_the_url_once() {
        let p = |s: &str| Path::new(s).to_path_buf();
        assert_eq!(
            with_connections(&p("nfs://s/e/d"), 4).unwrap(),
            p("nfs://s/e/d?nconnect=4")
        );
        assert_eq!(
            with_connections(&p("nfs://s/e/d?version=3"), 2).unwrap(),
            p("nfs://s/e/d?version=3&nconnect=2")
        );
        // The same value twice is one setting; two values are an error.
        assert_eq!(
            with_connections(&p("nfs://s/e/d?nconnect=2"), 2).unwrap(),
            p("nfs://s/e/d?nconnect=2")
        );
        let e = with_connections(&p("nfs://s/e/d?nconnect=3"), 2).unwrap_err();
        assert!(e.message.contains("disagree"), "{e}");
        assert!(with_connections(&p("nfs://s/e/d?nconnect=1"), 65).is_err());
    }

    #[test]
    fn the_servers_attributes_are_what_the_proofs_read() {
        let a = nfs::Attr {
            kind: FileType::Regular,
            nlink: 1,
            uid: Some(1000),
            fileid: 77,
            fsid: (1, 2),
            size: 4096,
            ..nfs::Attr::default()
        };
        let x = attr_of(&a);
        assert_eq!(
            (x.kind, x.id, x.links, x.uid, x.size),
            (Kind::Regular, 77, 1, 1000, 4096)
        );
        assert!(set_file_ours(&x, 1000, x.dev).is_ok());
        // An owner the server names but this host cannot map is no uid.
        let nobody = attr_of(&nfs::Attr { uid: None, ..a });
        assert!(set_file_ours(&nobody, 1000, x.dev).is_err());
        assert_eq!(
            attr_of(&nfs::Attr {
                kind: FileType::Symlink,
                ..a
            })
            .kind,
            Kind::Symlink
        );
        // Another file system is another fsid.
        assert_ne!(attr_of(&nfs::Attr { fsid: (2, 1), ..a }).dev, x.dev);
    }
}
