//! Blocking operations built from several calls: a create that never
//! reuses a file it did not just make, a rename that never replaces, a
//! directory listing with a bound.

use std::collections::HashSet;

use super::client::{Client, invalid};
use super::error::{NfsError, code};
use super::types::{
    Attr, CreateHow, DirPage, Entry, Fh, FileType, OpKind, Reply, Request, Version,
};
use super::v3;

/// The most READDIR pages one listing reads before it gives up.
pub(crate) const MAX_DIR_PAGES: usize = 1 << 20;

impl Client {
    pub fn getattr(&mut self, fh: &Fh) -> Result<Attr, NfsError> {
        match self.call(Request::Getattr(fh))? {
            Reply::Attr(a) => Ok(a),
            _ => Err(invalid(OpKind::Getattr, "no attributes in the reply")),
        }
    }

    /// The bytes free to this user on `fh`'s file system, and its size
    /// (NFSv3 FSSTAT's abytes and tbytes; NFSv4 space_avail, space_total).
    pub fn space(&mut self, fh: &Fh) -> Result<(u64, u64), NfsError> {
        match self.call(Request::Fsstat(fh))? {
            Reply::Space { avail, total } => Ok((avail, total)),
            _ => Err(invalid(OpKind::Fsstat, "no space figures in the reply")),
        }
    }

    /// LOOKUP, with the object's attributes (asked for when the reply had none).
    pub fn lookup(&mut self, dir: &Fh, name: &[u8]) -> Result<(Fh, Attr), NfsError> {
        match self.call(Request::Lookup { dir, name })? {
            Reply::Handle { fh, attr: Some(a) } => Ok((fh, a)),
            Reply::Handle { fh, attr: None } => Ok((fh, self.getattr(&fh)?)),
            _ => Err(invalid(OpKind::Lookup, "no handle in the reply")),
        }
    }

    /// Creates a regular file `name` in `dir` that did not exist (GUARDED,
    /// or EXCLUSIVE with a verifier: sent again after a lost connection it
    /// succeeds only on the file it made). With `open`, returns its number
    /// for READ and WRITE.
    pub fn create_file(
        &mut self,
        dir: &Fh,
        name: &[u8],
        mode: u32,
        how: CreateHow,
        open: bool,
    ) -> Result<(Option<u32>, Fh, Attr), NfsError> {
        let req = Request::Create {
            dir,
            name,
            mode,
            how,
            open,
        };
        let (reply, _) = self.call_open(req, open)?;
        let (file, fh, attr) = match reply {
            Reply::Opened { file, fh, attr } => (Some(file), fh, attr),
            Reply::Handle { fh, attr } => (None, fh, attr),
            _ => return Err(invalid(OpKind::Create, "no handle in the reply")),
        };
        // NFSv3's EXCLUSIVE keeps the verifier in the file's times and sets
        // no mode: both are set now, as RFC 1813 asks of the client.
        let attr = match (self.version(), how) {
            (Version::V3, CreateHow::Exclusive(_)) => self.after_exclusive(&fh, mode)?,
            _ => match attr {
                Some(a) => a,
                None => self.getattr(&fh)?,
            },
        };
        Ok((file, fh, attr))
    }

    fn after_exclusive(&mut self, fh: &Fh, mode: u32) -> Result<Attr, NfsError> {
        let bytes = self.raw(v3::proc_of(OpKind::Setattr), OpKind::Setattr, false, |e| {
            v3::encode_after_exclusive(e, fh, mode);
            0
        })?;
        let mut page = DirPage::default();
        match v3::decode(OpKind::Setattr, &bytes, 0, &mut page)? {
            Reply::Attr(a) => Ok(a),
            _ => self.getattr(fh),
        }
    }

    pub fn mkdir(&mut self, dir: &Fh, name: &[u8], mode: u32) -> Result<(Fh, Attr), NfsError> {
        match self.call(Request::Mkdir { dir, name, mode })? {
            Reply::Handle { fh, attr: Some(a) } => Ok((fh, a)),
            Reply::Handle { fh, attr: None } => Ok((fh, self.getattr(&fh)?)),
            _ => Err(invalid(OpKind::Mkdir, "no handle in the reply")),
        }
    }

    /// A new directory `name` in `dir` (MKDIR with `mode`): EXIST when the
    /// name is taken, whatever is there, which is never reused or
    /// followed (a tree's mkdir).
    pub(crate) fn new_dir(&mut self, dir: &Fh, name: &[u8], mode: u32) -> Result<Fh, NfsError> {
        self.mkdir(dir, name, mode).map(|(fh, _)| fh)
    }

    /// The directory `name` in `dir`, made (MKDIR with `mode`) when
    /// missing. Anything else at the name (a symbolic link, a file) is
    /// refused, never followed; one another client made meanwhile is looked
    /// at again.
    pub(crate) fn ensure_dir(&mut self, dir: &Fh, name: &[u8], mode: u32) -> Result<Fh, NfsError> {
        let not_dir = |kind: FileType| {
            invalid(
                OpKind::Lookup,
                if kind == FileType::Symlink {
                    "a symbolic link is at the name: never followed"
                } else {
                    "something that is not a directory is at the name"
                },
            )
        };
        match self.lookup(dir, name) {
            Ok((fh, a)) if a.kind == FileType::Directory => Ok(fh),
            Ok((_, a)) => Err(not_dir(a.kind)),
            Err(e) if e.is(code::NOENT) => match self.mkdir(dir, name, mode) {
                Ok((fh, _)) => Ok(fh),
                Err(e) if e.is(code::EXIST) => match self.lookup(dir, name)? {
                    (fh, a) if a.kind == FileType::Directory => Ok(fh),
                    (_, a) => Err(not_dir(a.kind)),
                },
                Err(e) => Err(e),
            },
            Err(e) => Err(e),
        }
    }

    /// Removes the directory `name` in `dir` when it is one and empty:
    /// RMDIR fails on a directory with entries, and anything else at the
    /// name is refused before it is sent.
    pub(crate) fn remove_empty_dir(&mut self, dir: &Fh, name: &[u8]) -> Result<(), NfsError> {
        let (_, a) = self.lookup(dir, name)?;
        if a.kind != FileType::Directory {
            return Err(invalid(OpKind::Rmdir, "it is not a directory"));
        }
        self.rmdir(dir, name)
    }

    pub fn remove(&mut self, dir: &Fh, name: &[u8]) -> Result<(), NfsError> {
        self.call(Request::Remove { dir, name }).map(|_| ())
    }

    pub fn rmdir(&mut self, dir: &Fh, name: &[u8]) -> Result<(), NfsError> {
        self.call(Request::Rmdir { dir, name }).map(|_| ())
    }

    /// Renames without ever replacing what is at the target (NFS's RENAME
    /// replaces it). A regular file: LINK under the new name (which fails
    /// with EXIST when the name is taken, atomically on the server), a
    /// LOOKUP that the old name is still the same file (its file id), then
    /// REMOVE of the old name. What remains: another client that puts a
    /// file of its own at the old name between that LOOKUP and the REMOVE
    /// loses it (two calls apart); a crash between LINK and REMOVE leaves
    /// both names. A directory (no hard links), or a server without LINK:
    /// a LOOKUP that the target is free, RENAME, then a LOOKUP that the
    /// target is the file moved; a name made at the target by another
    /// client between the first LOOKUP and the RENAME is replaced, and the
    /// last LOOKUP reports it as an error (it cannot be undone).
    pub fn rename_noreplace(
        &mut self,
        from: &Fh,
        from_name: &[u8],
        to: &Fh,
        to_name: &[u8],
    ) -> Result<(), NfsError> {
        let (fh, attr) = self.lookup(from, from_name)?;
        if attr.kind != FileType::Directory
            && self.relink(from, from_name, &fh, attr.fileid, to, to_name)?
        {
            return Ok(());
        }
        match self.lookup(to, to_name) {
            Err(e) if e.is(code::NOENT) => {}
            Ok(_) => {
                return Err(NfsError::Status {
                    op: OpKind::Rename,
                    code: code::EXIST,
                    v4: self.version() == Version::V41,
                });
            }
            Err(e) => return Err(e),
        }
        self.call(Request::Rename {
            from,
            from_name,
            to,
            to_name,
        })?;
        let (_, moved) = self.lookup(to, to_name)?;
        if moved.fileid != attr.fileid {
            return Err(invalid(
                OpKind::Rename,
                "another client made the target name meanwhile and the server's RENAME replaced it",
            ));
        }
        Ok(())
    }

    /// Moves the regular file `fh` (file id `fileid`, which the caller
    /// looked up at `from_name` in `from`) to `to_name` in `to` without
    /// replacing anything there: LINK under the new name (EXIST when it is
    /// taken, atomically on the server), a LOOKUP that the old name is
    /// still that file, then REMOVE of the old name: three calls, with
    /// `rename_noreplace`'s one window. `Ok(false)`: the server has no
    /// LINK (NOTSUPP), nothing was done.
    pub(crate) fn relink(
        &mut self,
        from: &Fh,
        from_name: &[u8],
        fh: &Fh,
        fileid: u64,
        to: &Fh,
        to_name: &[u8],
    ) -> Result<bool, NfsError> {
        match self.call(Request::Link {
            fh,
            dir: to,
            name: to_name,
        }) {
            Ok(_) => {}
            Err(e) if e.is(code::NOTSUPP) => return Ok(false),
            Err(e) => return Err(e),
        }
        let (_, now) = self.lookup(from, from_name)?;
        if now.fileid != fileid {
            return Err(invalid(
                OpKind::Rename,
                "the old name changed to another file meanwhile: both names were left",
            ));
        }
        self.remove(from, from_name).map(|()| true)
    }

    /// Every entry of `dir` ("." and ".." left out), page by page, to `f`;
    /// at most `max` entries. A server whose cookies repeat or never reach
    /// the end gets an error, not an endless loop.
    pub fn read_dir_all(
        &mut self,
        dir: &Fh,
        plus: bool,
        max: usize,
        mut f: impl FnMut(&DirPage, &Entry),
    ) -> Result<usize, NfsError> {
        let op = if plus {
            OpKind::Readdirplus
        } else {
            OpKind::Readdir
        };
        let (mut cookie, mut verf) = (0u64, [0u8; 8]);
        let mut seen = HashSet::new();
        let mut total = 0;
        for _ in 0..MAX_DIR_PAGES {
            let (entries, eof, v) = match self.call(Request::Readdir {
                dir,
                cookie,
                verf,
                plus,
            })? {
                Reply::Dir { entries, eof, verf } => (entries, eof, verf),
                _ => return Err(invalid(op, "no directory page in the reply")),
            };
            verf = v;
            let page = &self.st.page;
            for e in &page.entries {
                if !seen.insert(e.cookie) {
                    return Err(invalid(
                        op,
                        "the server sent a READDIR cookie twice: the listing would never end",
                    ));
                }
                let name = page.name(e);
                if name == b"." || name == b".." {
                    continue;
                }
                total += 1;
                if total > max {
                    return Err(invalid(
                        op,
                        "the directory holds more entries than the bound",
                    ));
                }
                f(page, e);
            }
            if eof {
                return Ok(total);
            }
            match page.entries.last() {
                Some(e) => cookie = e.cookie,
                None => return Err(invalid(op, "an empty READDIR page that is not the last")),
            }
            if entries == 0 {
                return Err(invalid(op, "an empty READDIR page that is not the last"));
            }
        }
        Err(invalid(op, "a directory of more pages than the bound"))
    }
}
