//! A metadata tree on an SMB share (`run --ops` on an `smb://` target):
//! each worker's operations on a session of its own, one blocking request
//! after another on its first channel. SMB has no directory handles: a
//! directory is its path from the share's root, walked one component at a
//! time when a worker first opens it (each a directory and no reparse
//! point, as the server reports it), and a name is that path plus one
//! checked component (`url::component_ok`), opened with
//! FILE_OPEN_REPARSE_POINT so a reparse point is seen as itself, never
//! followed. (A server that resolves a link itself, as Samba does one
//! inside the share, hands over its target, which the proof then judges;
//! docs/guide/smb.md says what that leaves.)
//!
//! Every change to a file goes through one handle: opened, proven the
//! tree's by what the server says of that handle (`owner::judge_attr` over
//! FileAllInformation: regular, not a reparse point, one link, the share,
//! born after the tree's marker; and the owner its security descriptor
//! names, which must be the owner of the run's lock file, the file this
//! run just made: SMB's attributes carry no owner), then changed through
//! it (a write, the times, a rename, a delete on close), so nothing
//! renamed in between is touched. What each operation sends, so a run's
//! per-operation counts and the client's per-command counts agree:
//!
//! | operation | requests                                                  |
//! |-----------|-----------------------------------------------------------|
//! | create    | CREATE (FILE_CREATE), WRITE, CLOSE                        |
//! | stat      | CREATE, QUERY_INFO (FileAllInformation), CLOSE            |
//! | open      | CREATE, CLOSE                                             |
//! | read      | CREATE, READ to the size CREATE gave, CLOSE               |
//! | write     | CREATE, QUERY_INFO twice (attributes, owner), WRITE, CLOSE |
//! | append    | the same, the WRITE at the file's end                     |
//! | setattr   | CREATE, QUERY_INFO twice, SET_INFO (times), CLOSE         |
//! | rename    | CREATE, QUERY_INFO twice, SET_INFO (rename) twice, CLOSE  |
//! | delete    | CREATE, QUERY_INFO twice, SET_INFO (delete on close), CLOSE |
//! | mkdir     | CREATE (FILE_CREATE, a directory), CLOSE                  |
//! | rmdir     | CREATE, SET_INFO (delete on close), CLOSE                 |
//! | readdir   | CREATE, QUERY_DIRECTORY until NO_MORE_FILES, CLOSE        |
//!
//! One WRITE per max_io (none for an empty file), not write-through, as a
//! local create writes and closes; a rename goes away and back through
//! the one handle, never replacing (ReplaceIfExists 0). Nothing is cached
//! between operations but the directories' paths the worker keeps.

use std::ffi::CStr;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use super::file::errno_of;
use super::{SmbDir, attr_of, connect, missing};
use crate::error::{Result, VbError};
use crate::io::backend::{Attr, Dir, Fail, FarTree, Identity, Kind, MAX_LIST, MetaIo, TreeDir};
use crate::io::gate::owner::judge_attr;
use crate::io::sys::io::Errno;
use crate::proto::smb::consts::{attrs, status};
use crate::proto::smb::error::SmbError;
use crate::proto::smb::msg::FileId;
use crate::proto::smb::msg::file::CreateResponse;
use crate::proto::smb::msg::info::SetInfo;
use crate::proto::smb::msg::security::Sid;
use crate::proto::smb::session::client::Client;
use crate::proto::smb::session::ops::Open;
use crate::proto::smb::url::component_ok;
use crate::result::protocol::ProtoSeen;
use crate::spec::meta::MetaOp;

/// The tree at an `smb://` URL: its root directory (the set-up client) and
/// what a worker needs to log on to it with a session of its own.
#[derive(Debug)]
pub(crate) struct SmbTree {
    dir: Arc<SmbDir>,
    /// The root's file id: a worker's session must reach the same one.
    root: u64,
}

/// Opens the tree at `path`, made (one level) if missing when `create`.
pub(crate) fn open(path: &Path, create: bool) -> Result<Arc<dyn FarTree>> {
    let dir = super::open_smb(path, create)?;
    let root = dir.attr()?.id;
    Ok(Arc::new(SmbTree {
        dir: Arc::new(dir),
        root,
    }))
}

impl FarTree for SmbTree {
    fn dir(&self) -> Arc<dyn Dir> {
        self.dir.clone()
    }

    fn open(&self) -> Result<Box<dyn TreeDir>> {
        let shared = self.dir.shared();
        // Whose the tree's files are: the owner of the lock this run made
        // (`lock::take`), taken before any tree is opened.
        let me = shared.me().ok_or_else(|| {
            VbError::refused(format!(
                "refusing {}: the server named no owner for the run's lock file, and a tree's \
                 files are proven by their owner",
                self.dir.path().display()
            ))
        })?;
        // One request at a time on one channel: a worker's operations
        // are blocking calls, so more channels would carry nothing.
        let mut c = connect::connect(&shared.url, connect::options_of(&shared.url), 1)?;
        let fail = |e: SmbError| {
            VbError::target(format!("cannot open {}: {e}", self.dir.path().display()))
        };
        let r = c.open(&self.dir.dir, Open::ListDir).map_err(fail)?;
        let info = c.file_info(r.file_id);
        let _ = c.close(r.file_id);
        let a = attr_of(&info.map_err(fail)?, shared.dev);
        if a.kind != Kind::Directory || a.id != self.root {
            c.logoff();
            return Err(VbError::refused(format!(
                "refusing {}: the path now leads to another directory than the tree's",
                self.dir.path().display()
            )));
        }
        let conn = Arc::new(Conn {
            client: Mutex::new(c),
            url: shared.url.clone(),
        });
        Ok(Box::new(SmbTreeDir {
            conn,
            dir: self.dir.dir.clone(),
            dev: shared.dev,
            me,
        }))
    }
}

/// A worker's session, shared by the directories it holds open, and
/// the URL a lost server is dialled again at.
struct Conn {
    client: Mutex<Client>,
    url: crate::proto::smb::url::Url,
}

// SAFETY: the client's raw pointers are the buffers of the request in
// progress; every request here is a blocking one made under the mutex,
// which completes before it is released, so nothing it points to
// outlives it.
unsafe impl Send for Conn {}
unsafe impl Sync for Conn {}

impl Conn {
    fn client(&self) -> MutexGuard<'_, Client> {
        // A panic mid-call leaves nothing a later call depends on: replies
        // are matched by message id.
        self.client.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.client().logoff();
    }
}

/// One directory of the tree, by its path from the share's root.
struct SmbTreeDir {
    conn: Arc<Conn>,
    dir: String,
    dev: u64,
    /// The owner every file changed must have.
    me: Sid,
}

fn sys(e: &SmbError) -> Fail {
    Fail::Sys(Errno::from_raw_os_error(errno_of(e)))
}

/// What a CREATE found where a directory belongs: a reparse point is
/// never walked through (LOOP, as O_NOFOLLOW gives), a file is NOTDIR.
fn need_dir(r: &CreateResponse) -> std::result::Result<(), Errno> {
    let a = r.times.attributes;
    if a & attrs::REPARSE_POINT != 0 {
        Err(Errno::LOOP)
    } else if a & attrs::DIRECTORY == 0 {
        Err(Errno::NOTDIR)
    } else {
        Ok(())
    }
}

/// Where a regular file belongs: a reparse point is LOOP, a directory
/// ISDIR.
fn need_file(r: &CreateResponse) -> std::result::Result<(), Fail> {
    let a = r.times.attributes;
    if a & attrs::REPARSE_POINT != 0 {
        Err(Fail::Sys(Errno::LOOP))
    } else if a & attrs::DIRECTORY != 0 {
        Err(Fail::Sys(Errno::ISDIR))
    } else {
        Ok(())
    }
}

/// `name` as one component of a path: the tree's names are ASCII, and
/// anything that is not one component never reaches the server.
fn component(name: &CStr) -> std::result::Result<&str, Errno> {
    name.to_str()
        .ok()
        .filter(|n| component_ok(n))
        .ok_or(Errno::INVAL)
}

/// `f` on the open `file`, then CLOSE whatever `f` gave (a failed close
/// fails an operation that succeeded: a delete happens at the close).
fn closing(
    c: &mut Client,
    file: FileId,
    f: impl FnOnce(&mut Client) -> std::result::Result<u64, Fail>,
) -> std::result::Result<u64, Fail> {
    let r = f(c);
    let closed = c.close(file);
    let n = r?;
    closed.map_err(|e| sys(&e))?;
    Ok(n)
}

impl SmbTreeDir {
    fn at(&self, name: &str) -> String {
        if self.dir.is_empty() {
            name.to_string()
        } else {
            format!("{}/{name}", self.dir)
        }
    }

    /// The directory `rel` below this one, walked one CREATE a component
    /// (each a directory, no reparse point), each closed again.
    fn walk(&self, c: &mut Client, rel: &[u8]) -> std::result::Result<String, Errno> {
        let mut path = self.dir.clone();
        for part in rel.split(|&b| b == b'/').filter(|p| !p.is_empty()) {
            if part == b"." {
                continue;
            }
            let part = std::str::from_utf8(part)
                .ok()
                .filter(|p| component_ok(p))
                .ok_or(Errno::INVAL)?;
            if !path.is_empty() {
                path.push('/');
            }
            path.push_str(part);
            let r = c
                .open(&path, Open::ListDir)
                .map_err(|e| Errno::from_raw_os_error(errno_of(&e)))?;
            let kind = need_dir(&r);
            let _ = c.close(r.file_id);
            kind?;
        }
        Ok(path)
    }

    /// Opens `name` as `how` and proves by that handle that it is the
    /// tree's own: its attributes (`judge_attr`) and its owner. The handle
    /// is closed when the proof fails.
    fn ours(
        &self,
        c: &mut Client,
        name: &str,
        how: Open,
        owner: &Identity,
    ) -> std::result::Result<(FileId, Attr), Fail> {
        let r = c.open(&self.at(name), how).map_err(|e| sys(&e))?;
        let f = r.file_id;
        let proof = c
            .file_info(f)
            .map_err(|e| sys(&e))
            .and_then(|i| {
                let a = attr_of(&i, self.dev);
                judge_attr(&a, owner).map_err(Fail::NotOurs)?;
                Ok(a)
            })
            // The one owner comparison, the file set's too (`owner::stamp`).
            .and_then(|a| match super::owner::stamp(c, f, a, Some(self.me)) {
                Ok(a) if a.uid == super::OWNER => Ok(a),
                Ok(_) => Err(Fail::NotOurs("another user owns it")),
                Err(e) => Err(sys(&e)),
            });
        match proof {
            Ok(a) => Ok((f, a)),
            Err(e) => {
                let _ = c.close(f);
                Err(e)
            }
        }
    }

    fn create(
        &self,
        c: &mut Client,
        name: &str,
        io: &MetaIo<'_>,
    ) -> std::result::Result<u64, Fail> {
        // FILE_CREATE: a taken name is EXIST, never reused.
        let r = c
            .open(&self.at(name), Open::CreateFile)
            .map_err(|e| sys(&e))?;
        closing(c, r.file_id, |c| {
            write_all(c, r.file_id, &io.buf[..io.size], 0)
        })
    }

    fn rename(
        &self,
        c: &mut Client,
        name: &str,
        alt: &str,
        owner: &Identity,
    ) -> std::result::Result<u64, Fail> {
        let (f, _) = self.ours(c, name, Open::Change, owner)?;
        let (away, back) = (self.at(alt), self.at(name));
        closing(c, f, |c| {
            // Away and back through the one handle, counted as one
            // operation: the tree keeps its names.
            c.set_info(f, SetInfo::Rename(&away)).map_err(|e| {
                if e.nt_status() == Some(status::OBJECT_NAME_COLLISION) {
                    Fail::NotOurs("its rename partner .r exists, not replaced")
                } else {
                    sys(&e)
                }
            })?;
            c.set_info(f, SetInfo::Rename(&back)).map_err(|e| {
                if e.nt_status() == Some(status::OBJECT_NAME_COLLISION) {
                    Fail::NotOurs("its name was taken while it was renamed away: left as .r")
                } else {
                    sys(&e)
                }
            })?;
            Ok(0)
        })
    }

    fn readdir(&self, c: &mut Client, name: &str) -> std::result::Result<u64, Fail> {
        let path = if name == "." {
            self.dir.clone()
        } else {
            self.at(name)
        };
        let r = c.open(&path, Open::ListDir).map_err(|e| sys(&e))?;
        closing(c, r.file_id, |c| {
            need_dir(&r)?;
            match c.read_dir(r.file_id, &path, MAX_LIST as usize, |_| {}) {
                Ok(false) => Ok(0),
                // Past the bound: no tree's directory holds that many.
                Ok(true) => Err(Fail::Sys(Errno::IO)),
                Err(e) => Err(sys(&e)),
            }
        })
    }

    fn remove_dir_leaf(&self, c: &mut Client, name: &str) -> std::result::Result<u64, Fail> {
        let r = c.open(&self.at(name), Open::Change).map_err(|e| sys(&e))?;
        closing(c, r.file_id, |c| {
            // A link or a file there is NOTDIR, as rmdir(2) says of one.
            need_dir(&r).map_err(|_| Fail::Sys(Errno::NOTDIR))?;
            c.set_info(r.file_id, SetInfo::DeleteOnClose)
                .map(|()| 0)
                .map_err(|e| sys(&e))
        })
    }
}

/// Writes `data` at `offset` to the open `file`, one WRITE per max_io:
/// the bytes written.
fn write_all(
    c: &mut Client,
    file: FileId,
    data: &[u8],
    offset: u64,
) -> std::result::Result<u64, Fail> {
    let mut done = 0usize;
    while done < data.len() {
        match c.write_at(file, offset + done as u64, &data[done..]) {
            Ok(0) => return Err(Fail::Sys(Errno::NOSPC)),
            Ok(n) => done += n,
            Err(e) => return Err(sys(&e)),
        }
    }
    Ok(done as u64)
}

/// Reads the open `file` from its start to `size` (what its CREATE said,
/// as a kernel client reads to the size it knows), one READ per max_io
/// into `buf` (overwritten chunk by chunk), sooner at the file's end.
fn read_all(
    c: &mut Client,
    file: FileId,
    buf: &mut [u8],
    size: u64,
) -> std::result::Result<u64, Fail> {
    let chunk = buf.len().max(1) as u64;
    let mut total = 0u64;
    while total < size {
        let len = (size - total).min(chunk) as usize;
        match c.read_at(file, total, &mut buf[..len]) {
            Ok(0) => break,
            Ok(n) => total += n as u64,
            Err(e) => return Err(sys(&e)),
        }
    }
    Ok(total)
}

impl TreeDir for SmbTreeDir {
    fn open_below(&self, rel: &CStr) -> std::result::Result<Box<dyn TreeDir>, Errno> {
        let dir = self.walk(&mut self.conn.client(), rel.to_bytes())?;
        Ok(Box::new(SmbTreeDir {
            conn: self.conn.clone(),
            dir,
            dev: self.dev,
            me: self.me,
        }))
    }

    fn exists(&self, name: &CStr) -> bool {
        let Ok(name) = component(name) else {
            return false;
        };
        let mut c = self.conn.client();
        match c.open(&self.at(name), Open::Read) {
            Ok(r) => {
                let _ = c.close(r.file_id);
                true
            }
            // Something the session may not open is still something.
            Err(e) => !missing(&e),
        }
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
        let name = component(name)?;
        match op {
            MetaOp::Mkdir => {
                let r = c
                    .open(&self.at(name), Open::CreateDir)
                    .map_err(|e| sys(&e))?;
                closing(c, r.file_id, |_| Ok(0))
            }
            MetaOp::Rmdir => self.remove_dir_leaf(c, name),
            MetaOp::Create => self.create(c, name, io),
            MetaOp::Stat => {
                let r = c.open(&self.at(name), Open::Read).map_err(|e| sys(&e))?;
                closing(c, r.file_id, |c| {
                    c.file_info(r.file_id).map(|_| 0).map_err(|e| sys(&e))
                })
            }
            MetaOp::Open => {
                let r = c.open(&self.at(name), Open::Read).map_err(|e| sys(&e))?;
                closing(c, r.file_id, |_| need_file(&r).map(|()| 0))
            }
            MetaOp::Read => {
                let r = c.open(&self.at(name), Open::Read).map_err(|e| sys(&e))?;
                closing(c, r.file_id, |c| {
                    need_file(&r)?;
                    read_all(c, r.file_id, io.buf, r.times.end_of_file)
                })
            }
            MetaOp::Write | MetaOp::Append => {
                let (f, a) = self.ours(c, name, Open::WriteExisting, io.owner)?;
                let at = if op == MetaOp::Append { a.size } else { 0 };
                let data = &io.buf[..io.size];
                closing(c, f, |c| write_all(c, f, data, at))
            }
            MetaOp::Setattr => {
                let (f, _) = self.ours(c, name, Open::SetTimes, io.owner)?;
                let now = filetime_now();
                closing(c, f, |c| {
                    c.set_info(
                        f,
                        SetInfo::Times {
                            access: now,
                            write: now,
                        },
                    )
                    .map(|()| 0)
                    .map_err(|e| sys(&e))
                })
            }
            MetaOp::Rename => self.rename(c, name, component(alt)?, io.owner),
            MetaOp::Delete => {
                // The proof and the delete are on one handle.
                let (f, _) = self.ours(c, name, Open::Change, io.owner)?;
                closing(c, f, |c| {
                    c.set_info(f, SetInfo::DeleteOnClose)
                        .map(|()| 0)
                        .map_err(|e| sys(&e))
                })
            }
            MetaOp::Readdir => self.readdir(c, name),
        }
    }

    fn remove_ours(
        &self,
        name: &CStr,
        id: &Identity,
    ) -> std::result::Result<(), Option<&'static str>> {
        let name = component(name).map_err(|_| Some("not a name volbench makes"))?;
        let mut c = self.conn.client();
        match self.ours(&mut c, name, Open::Change, id) {
            Ok((f, _)) => {
                // Gone meanwhile, or not removable: what comes next finds out.
                let _ = c.set_info(f, SetInfo::DeleteOnClose);
                let _ = c.close(f);
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
        let path = self.walk(&mut c, rel.to_bytes())?;
        let to_errno = |e: &SmbError| Errno::from_raw_os_error(errno_of(e));
        let r = c.open(&path, Open::ListDir).map_err(|e| to_errno(&e))?;
        let mut name = String::new();
        let dev = self.dev;
        let listed = c.read_dir(r.file_id, &path, MAX_LIST as usize, |e| {
            name.clear();
            name.extend(
                char::decode_utf16(
                    e.name
                        .chunks_exact(2)
                        .map(|p| u16::from_le_bytes([p[0], p[1]])),
                )
                .map(|ch| ch.unwrap_or(char::REPLACEMENT_CHARACTER)),
            );
            each(name.as_bytes(), &listed_attr(e, dev));
        });
        let _ = c.close(r.file_id);
        match listed {
            Ok(false) => Ok(()),
            Ok(true) => Err(Errno::IO),
            Err(e) => Err(to_errno(&e)),
        }
    }

    fn measure_started(&self) {
        self.conn.client().reset_stats();
    }

    fn protocol(&self) -> Option<ProtoSeen> {
        Some(super::engine::seen(&self.conn.client(), None))
    }

    fn server_lost(&self) -> bool {
        // A connection that failed is dialled once more, by a session of
        // its own (the worker's client is left as it is: what runs after
        // a failure, the removal of what a create made, finds it failed,
        // not gone): a server that answers is not lost (the operation's
        // own error stands).
        if !self.conn.client().lost() {
            return false;
        }
        let u = &self.conn.url;
        match connect::connect(u, connect::options_of(u), 1) {
            Ok(mut probe) => {
                probe.logoff();
                false
            }
            Err(_) => true,
        }
    }
}

/// What a directory listing says of an entry, for the set-up's and
/// `clean`'s scans (kinds and names). The listing carries no link count
/// (0 here, which no proof accepts) nor owner: every change proves its
/// file again by handle (`SmbTreeDir::ours`).
fn listed_attr(e: &crate::proto::smb::msg::dir::EntryRef<'_>, dev: u64) -> Attr {
    let info = crate::proto::smb::msg::info::FileInfo {
        creation: e.creation,
        last_write: e.last_write,
        change: e.change,
        attributes: e.attributes,
        end_of_file: e.end_of_file,
        directory: e.attributes & attrs::DIRECTORY != 0,
        file_id: e.file_id,
        ..Default::default()
    };
    attr_of(&info, dev)
}

/// Now as a FILETIME (100 ns since 1601), what setattr sets both times to
/// (utimensat's UTIME_NOW, on this host's clock: SMB has no "the server's
/// now").
fn filetime_now() -> u64 {
    const EPOCH_DIFF_S: u64 = 11_644_473_600;
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    (d.as_secs() + EPOCH_DIFF_S) * 10_000_000 + u64::from(d.subsec_nanos() / 100)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::smb::msg::file::FileTimes;

    fn created(attributes: u32) -> CreateResponse {
        CreateResponse {
            action: 1,
            times: FileTimes {
                attributes,
                ..FileTimes::default()
            },
            file_id: FileId::default(),
        }
    }

    #[test]
    fn a_reparse_point_is_never_walked_through_or_read() {
        let dir = created(attrs::DIRECTORY);
        let link = created(attrs::DIRECTORY | attrs::REPARSE_POINT);
        let file = created(attrs::ARCHIVE);
        assert_eq!(need_dir(&dir), Ok(()));
        assert_eq!(need_dir(&link), Err(Errno::LOOP));
        assert_eq!(need_dir(&file), Err(Errno::NOTDIR));
        assert!(need_file(&file).is_ok());
        assert!(matches!(need_file(&link), Err(Fail::Sys(Errno::LOOP))));
        assert!(matches!(need_file(&dir), Err(Fail::Sys(Errno::ISDIR))));
    }

    #[test]
    fn only_one_component_reaches_the_server() {
        assert_eq!(component(c"f12"), Ok("f12"));
        assert_eq!(component(c"f12.r"), Ok("f12.r"));
        for bad in [c"..", c"a/b", c"a\\b", c"f:stream", c"*", c""] {
            assert_eq!(component(bad), Err(Errno::INVAL), "{bad:?}");
        }
    }

    #[test]
    fn a_listed_entry_is_never_a_proof() {
        let e = crate::proto::smb::msg::dir::EntryRef {
            name: b"f\0",
            creation: 132_539_328_000_000_000,
            last_write: 0,
            change: 0,
            end_of_file: 4096,
            attributes: attrs::ARCHIVE,
            file_id: 9,
        };
        let a = listed_attr(&e, 3);
        assert_eq!((a.kind, a.id, a.dev, a.size), (Kind::Regular, 9, 3, 4096));
        let id = Identity {
            dev: 3,
            ino: 1,
            uid: a.uid,
            born_s: 0,
            born_ns: 0,
        };
        assert!(judge_attr(&a, &id).is_err(), "no link count, no proof");
        let link = crate::proto::smb::msg::dir::EntryRef {
            attributes: attrs::REPARSE_POINT,
            ..e
        };
        assert_eq!(listed_attr(&link, 3).kind, Kind::Symlink);
    }

    #[test]
    fn setattr_times_are_filetimes_of_now() {
        // 2021-01-01 as a FILETIME, long before any run.
        assert!(filetime_now() > 132_539_328_000_000_000);
    }
}
