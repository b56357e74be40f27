//! A metadata tree on an NFS server (`run --ops` on an `nfs://` target):
//! each worker's operations on a client of its own, each one a few
//! blocking calls from the handle of the directory that holds the name,
//! never through a server-side symlink (LOOKUP returns a link's own
//! attributes: refused as the local tree's O_NOFOLLOW refuses it), every
//! change to a file proven first by the server's attributes
//! (`owner::judge_attr`: regular, one link, the tree's owner and file
//! system, born after the tree's marker). What each operation sends, so a
//! run's per-operation counts and the client's per-call counts agree:
//!
//! | operation | NFSv3                          | NFSv4.1 (adds)              |
//! |-----------|--------------------------------|-----------------------------|
//! | create    | CREATE (GUARDED), WRITE        | CREATE is OPEN(create); CLOSE |
//! | stat      | LOOKUP (its attributes)        | (LOOKUP's GETATTR)          |
//! | open      | LOOKUP, ACCESS                 | OPEN, CLOSE, no ACCESS      |
//! | read      | LOOKUP, READ to its size       | OPEN, CLOSE                 |
//! | write     | LOOKUP, WRITE                  | OPEN, CLOSE                 |
//! | append    | LOOKUP, WRITE at the end       | OPEN, CLOSE                 |
//! | setattr   | LOOKUP, SETATTR (times)        |                             |
//! | rename    | LOOKUP, then twice LINK, LOOKUP, REMOVE | (away and back)    |
//! | delete    | LOOKUP, REMOVE                 |                             |
//! | mkdir     | MKDIR                          |                             |
//! | rmdir     | LOOKUP, RMDIR                  |                             |
//! | readdir   | LOOKUP, READDIR until eof      |                             |
//!
//! WRITEs are FILE_SYNC (the data stable when the operation ends, as a
//! kernel client's close flushes), one per wsize; READs one per rsize, to
//! the size the LOOKUP gave (none for an empty file).
//! A rename never replaces: NFS's RENAME would, so the file is linked
//! under the other name (LINK fails on a taken name) and its old name
//! removed (`Client::relink`). Nothing is cached between operations but
//! the directories' handles the worker keeps (`TreeDir::open_below`).

use std::ffi::CStr;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use super::file::errno;
use super::{NfsDir, attr_of};
use crate::error::{Result, VbError};
use crate::io::backend::{Attr, Dir, Fail, FarTree, Identity, MAX_LIST, MetaIo, TreeDir};
use crate::io::gate::owner::judge_attr;
use crate::io::sys::io::Errno;
use crate::proto::nfs::error::code;
use crate::proto::nfs::types::access;
use crate::proto::nfs::{self, Client, CreateHow, Fh, FileType, NfsError, Reply, Request, Stable};
use crate::result::protocol::ProtoSeen;
use crate::spec::meta::MetaOp;

const FILE_MODE: u32 = 0o644;
const DIR_MODE: u32 = 0o755;

/// The tree at an `nfs://` URL: its root directory (the set-up's client),
/// and what a worker needs to connect a client of its own to it.
#[derive(Debug)]
pub(crate) struct NfsTree {
    dir: Arc<NfsDir>,
    /// The root's file id and file system: a worker's client must reach
    /// the same directory.
    root: (u64, u64),
}

/// Opens the tree at `path`, made (one level) if missing when `create`.
pub(crate) fn open(path: &Path, create: bool) -> Result<Arc<dyn FarTree>> {
    let dir = Arc::new(super::open_nfs(path, create)?);
    let a = dir.attr()?;
    Ok(Arc::new(NfsTree {
        dir,
        root: (a.id, a.dev),
    }))
}

impl FarTree for NfsTree {
    fn dir(&self) -> Arc<dyn Dir> {
        self.dir.clone()
    }

    fn open(&self) -> Result<Box<dyn TreeDir>> {
        let shared = self.dir.shared();
        let mut opts = shared.opts.clone();
        opts.connections = shared.url.nconnect.unwrap_or(1);
        // One operation at a time: one user slot, the largest transfer a
        // file of the tree needs split by rsize and wsize.
        opts.depth = 1;
        let m = nfs::connect(&shared.url, &opts)
            .map_err(|e| VbError::target(format!("cannot reach the NFS target: {e}")))?;
        let a = attr_of(&m.attr);
        if (a.id, a.dev) != self.root {
            return Err(VbError::refused(format!(
                "refusing {}: the path now leads to another directory than the tree's",
                self.dir.path().display()
            )));
        }
        let conn = Arc::new(Conn {
            client: Mutex::new(m.client),
        });
        Ok(Box::new(NfsTreeDir { conn, fh: m.dir }))
    }
}

/// A worker's client, shared by the directories it holds open.
struct Conn {
    client: Mutex<Client>,
}

// SAFETY: the client's raw pointers are the buffers of the call in
// progress; every call here is a blocking one made under the mutex, which
// completes before it is released, so nothing it points to outlives it.
unsafe impl Send for Conn {}
unsafe impl Sync for Conn {}

impl Conn {
    fn client(&self) -> MutexGuard<'_, Client> {
        // A panic mid-call leaves nothing a later call depends on: the
        // transport matches replies by xid.
        self.client.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// One directory of the tree, by handle, on a worker's client.
struct NfsTreeDir {
    conn: Arc<Conn>,
    fh: Fh,
}

fn sys(e: NfsError) -> Fail {
    Fail::Sys(errno(&e))
}

/// What a LOOKUP found where a directory belongs: a symbolic link is
/// never followed (LOOP, as O_NOFOLLOW gives), anything else not one.
fn need_dir(kind: FileType) -> std::result::Result<(), Errno> {
    match kind {
        FileType::Directory => Ok(()),
        FileType::Symlink => Err(Errno::LOOP),
        _ => Err(Errno::NOTDIR),
    }
}

/// Where a regular file belongs: a symbolic link is LOOP, a directory
/// ISDIR, anything else not ours to read.
fn need_file(kind: FileType) -> std::result::Result<(), Fail> {
    match kind {
        FileType::Regular => Ok(()),
        FileType::Symlink => Err(Fail::Sys(Errno::LOOP)),
        FileType::Directory => Err(Fail::Sys(Errno::ISDIR)),
        _ => Err(Fail::NotOurs("not a regular file")),
    }
}

impl NfsTreeDir {
    /// The file at `name`, looked up without following it and proven the
    /// tree's own before it is changed.
    fn ours(
        &self,
        c: &mut Client,
        name: &[u8],
        owner: &Identity,
    ) -> std::result::Result<(Fh, nfs::Attr), Fail> {
        let (fh, a) = c.lookup(&self.fh, name).map_err(sys)?;
        judge_attr(&attr_of(&a), owner).map_err(Fail::NotOurs)?;
        Ok((fh, a))
    }

    /// The directory `rel` below this one, walked one LOOKUP a component.
    fn walk(&self, c: &mut Client, rel: &[u8]) -> std::result::Result<Fh, Errno> {
        let mut fh = self.fh;
        for part in rel.split(|&b| b == b'/').filter(|p| !p.is_empty()) {
            if part == b"." {
                continue;
            }
            let (next, a) = c.lookup(&fh, part).map_err(|e| errno(&e))?;
            need_dir(a.kind)?;
            fh = next;
        }
        Ok(fh)
    }
}

/// Writes `data` at `offset` to the open `file`, FILE_SYNC, one WRITE per
/// wsize: the bytes written.
fn write_all(
    c: &mut Client,
    file: u32,
    data: &[u8],
    offset: u64,
) -> std::result::Result<u64, Fail> {
    let mut done = 0usize;
    let chunk = (c.wsize() as usize).max(1);
    while done < data.len() {
        let n = (data.len() - done).min(chunk) as u32;
        match c.call(Request::Write {
            file,
            offset: offset + done as u64,
            len: n,
            buf: data[done..].as_ptr(),
            stable: Stable::FileSync,
        }) {
            Ok(Reply::Write { count, .. }) if count > 0 => done += count as usize,
            Ok(_) => return Err(Fail::Sys(Errno::NOSPC)),
            Err(e) => return Err(sys(e)),
        }
    }
    Ok(done as u64)
}

/// Reads the open `file` from its start to `size` (what its LOOKUP said,
/// as a kernel client reads to the size it knows), one READ per rsize
/// into `buf` (overwritten chunk by chunk), sooner when the server says
/// the file ended.
fn read_all(
    c: &mut Client,
    file: u32,
    buf: &mut [u8],
    size: u64,
) -> std::result::Result<u64, Fail> {
    let chunk = buf.len().min(c.rsize() as usize).max(1) as u64;
    let mut total = 0u64;
    while total < size {
        let len = (size - total).min(chunk) as u32;
        match c.call(Request::Read {
            file,
            offset: total,
            len,
            buf: buf.as_mut_ptr(),
        }) {
            Ok(Reply::Read { count, eof }) => {
                total += u64::from(count);
                if eof || count == 0 {
                    break;
                }
            }
            Ok(_) => return Err(Fail::Sys(Errno::IO)),
            Err(e) => return Err(sys(e)),
        }
    }
    Ok(total)
}

/// `f` on the file `fh` opened (NFSv4.1: OPEN, then CLOSE whatever `f`
/// gave; NFSv3: the handle is all it takes), its number given to `f`.
fn with_open(
    c: &mut Client,
    fh: &Fh,
    f: impl FnOnce(&mut Client, u32) -> std::result::Result<u64, Fail>,
) -> std::result::Result<u64, Fail> {
    let file = c.open(fh).map_err(sys)?;
    let r = f(c, file);
    let closed = c.close(file);
    let n = r?;
    closed.map_err(sys)?;
    Ok(n)
}

impl NfsTreeDir {
    fn create(
        &self,
        c: &mut Client,
        name: &[u8],
        io: &MetaIo<'_>,
    ) -> std::result::Result<u64, Fail> {
        // GUARDED: a taken name is EXIST, never reused (the worker redoes
        // an interrupted create once the file there is proven its own).
        let (file, fh, _) = c
            .create_file(&self.fh, name, FILE_MODE, CreateHow::Guarded, true)
            .map_err(sys)?;
        let file = match file {
            Some(f) => f,
            None => c.open(&fh).map_err(sys)?,
        };
        let r = write_all(c, file, &io.buf[..io.size], 0);
        let closed = c.close(file);
        let n = r?;
        closed.map_err(sys)?;
        Ok(n)
    }

    fn rename(
        &self,
        c: &mut Client,
        name: &[u8],
        alt: &[u8],
        owner: &Identity,
    ) -> std::result::Result<u64, Fail> {
        let (fh, a) = self.ours(c, name, owner)?;
        let gone = |e: NfsError| match e {
            NfsError::Invalid { what, .. } => Fail::NotOurs(what),
            e if e.is(code::EXIST) => Fail::NotOurs("its rename partner .r exists, not replaced"),
            e => sys(e),
        };
        // Away and back, counted as one operation: the tree keeps its names.
        let moved = |c: &mut Client, from: &[u8], to: &[u8]| {
            match c.relink(&self.fh, from, &fh, a.fileid, &self.fh, to) {
                Ok(true) => Ok(()),
                // No LINK on this server: RENAME only once the other name
                // is seen free, and the result checked
                // (`Client::rename_noreplace`).
                Ok(false) => c.rename_noreplace(&self.fh, from, &self.fh, to),
                Err(e) => Err(e),
            }
        };
        moved(c, name, alt).map_err(gone)?;
        moved(c, alt, name).map_err(|e| match e {
            e if e.is(code::EXIST) => {
                Fail::NotOurs("its name was taken while it was renamed away: left as .r")
            }
            e => gone(e),
        })?;
        Ok(0)
    }

    fn readdir(&self, c: &mut Client, name: &[u8]) -> std::result::Result<u64, Fail> {
        let dir = if name == b"." {
            self.fh
        } else {
            let (fh, a) = c.lookup(&self.fh, name).map_err(sys)?;
            need_dir(a.kind)?;
            fh
        };
        let (mut cookie, mut verf) = (0u64, [0u8; 8]);
        let mut seen = 0u64;
        loop {
            let (entries, eof, v) = match c
                .call(Request::Readdir {
                    dir: &dir,
                    cookie,
                    verf,
                    plus: false,
                })
                .map_err(sys)?
            {
                Reply::Dir { entries, eof, verf } => (entries, eof, verf),
                _ => return Err(Fail::Sys(Errno::IO)),
            };
            if eof {
                return Ok(0);
            }
            // A page that is not the last must move on: an empty one, or
            // one ending where the last did, would never end; nor may a
            // listing pass the bound.
            seen += u64::from(entries);
            let last = c.dir_page().entries.last().map(|e| e.cookie);
            match last {
                Some(k) if entries > 0 && k != cookie && seen <= MAX_LIST => cookie = k,
                _ => return Err(Fail::Sys(Errno::IO)),
            }
            verf = v;
        }
    }
}

impl TreeDir for NfsTreeDir {
    fn open_below(&self, rel: &CStr) -> std::result::Result<Box<dyn TreeDir>, Errno> {
        let fh = self.walk(&mut self.conn.client(), rel.to_bytes())?;
        Ok(Box::new(NfsTreeDir {
            conn: self.conn.clone(),
            fh,
        }))
    }

    fn exists(&self, name: &CStr) -> bool {
        self.conn.client().lookup(&self.fh, name.to_bytes()).is_ok()
    }

    fn op(
        &self,
        op: MetaOp,
        name: &CStr,
        alt: &CStr,
        io: &mut MetaIo<'_>,
    ) -> std::result::Result<u64, Fail> {
        let mut c = self.conn.client();
        let c = &mut *c;
        let name = name.to_bytes();
        match op {
            MetaOp::Mkdir => c.new_dir(&self.fh, name, DIR_MODE).map(|_| 0).map_err(sys),
            // LOOKUP, then RMDIR of what it shows is a directory (a link
            // there is NOTDIR, as rmdir(2) says of one).
            MetaOp::Rmdir => c
                .remove_empty_dir(&self.fh, name)
                .map(|()| 0)
                .map_err(|e| match e {
                    NfsError::Invalid { .. } => Fail::Sys(Errno::NOTDIR),
                    e => sys(e),
                }),
            MetaOp::Create => self.create(c, name, io),
            MetaOp::Stat => c.lookup(&self.fh, name).map(|_| 0).map_err(sys),
            MetaOp::Open => {
                let (fh, a) = c.lookup(&self.fh, name).map_err(sys)?;
                need_file(a.kind)?;
                if c.version() == nfs::Version::V3 {
                    // No OPEN in NFSv3: a kernel client asks ACCESS at open.
                    return match c.call(Request::Access {
                        fh: &fh,
                        mask: access::READ,
                    }) {
                        Ok(Reply::Access { granted }) if granted & access::READ != 0 => Ok(0),
                        Ok(_) => Err(Fail::Sys(Errno::ACCESS)),
                        Err(e) => Err(sys(e)),
                    };
                }
                with_open(c, &fh, |_, _| Ok(0))
            }
            MetaOp::Read => {
                let (fh, a) = c.lookup(&self.fh, name).map_err(sys)?;
                need_file(a.kind)?;
                with_open(c, &fh, |c, file| read_all(c, file, io.buf, a.size))
            }
            MetaOp::Write | MetaOp::Append => {
                let (fh, a) = self.ours(c, name, io.owner)?;
                let at = if op == MetaOp::Append { a.size } else { 0 };
                let data = &io.buf[..io.size];
                with_open(c, &fh, |c, file| write_all(c, file, data, at))
            }
            MetaOp::Setattr => {
                let (fh, _) = self.ours(c, name, io.owner)?;
                c.call(Request::Setattr {
                    fh: &fh,
                    size: None,
                    mode: None,
                    times: true,
                })
                .map(|_| 0)
                .map_err(sys)
            }
            MetaOp::Rename => self.rename(c, name, alt.to_bytes(), io.owner),
            MetaOp::Delete => {
                // LOOKUP and REMOVE are two calls: a file another client
                // renames in between them is the one window NFS leaves.
                self.ours(c, name, io.owner)?;
                c.remove(&self.fh, name).map(|()| 0).map_err(sys)
            }
            MetaOp::Readdir => self.readdir(c, name),
        }
    }

    fn remove_ours(
        &self,
        name: &CStr,
        id: &Identity,
    ) -> std::result::Result<(), Option<&'static str>> {
        let mut c = self.conn.client();
        match self.ours(&mut c, name.to_bytes(), id) {
            Ok(_) => {
                // Gone meanwhile, or not removable: what comes next finds out.
                let _ = c.remove(&self.fh, name.to_bytes());
                Ok(())
            }
            Err(Fail::NotOurs(why)) => Err(Some(why)),
            Err(Fail::Sys(_)) => Err(None),
        }
    }

    fn list(
        &self,
        rel: &CStr,
        each: &mut dyn FnMut(&[u8], &Attr),
    ) -> std::result::Result<(), Errno> {
        let mut c = self.conn.client();
        let dir = self.walk(&mut c, rel.to_bytes())?;
        // READDIRPLUS: each entry with its attributes; one the server left
        // without is looked up after the listing.
        let mut bare: Vec<Vec<u8>> = Vec::new();
        c.read_dir_all(&dir, true, MAX_LIST as usize, |page, e| match &e.attr {
            Some(a) => each(page.name(e), &attr_of(a)),
            None => bare.push(page.name(e).to_vec()),
        })
        .map_err(|e| errno(&e))?;
        for name in bare {
            match c.lookup(&dir, &name) {
                Ok((_, a)) => each(&name, &attr_of(&a)),
                Err(e) if e.is(code::NOENT) => {}
                Err(e) => return Err(errno(&e)),
            }
        }
        Ok(())
    }

    fn measure_started(&self) {
        self.conn.client().reset_stats();
    }

    fn protocol(&self) -> Option<ProtoSeen> {
        Some(super::engine::seen(&self.conn.client()))
    }

    fn server_lost(&self) -> bool {
        self.conn.client().server_lost()
    }
}
