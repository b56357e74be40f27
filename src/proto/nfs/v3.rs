//! NFSv3 (RFC 1813) and its MOUNT protocol: each request's arguments
//! encoded, each reply decoded. Pure functions over byte slices: a decoder
//! gets the results part of a reply (after the RPC header) and never reads
//! past it, and each has one entry the fuzz harness can call (`decode`,
//! `data_at`, `decode_mnt`, `decode_exports`).

use super::error::NfsError;
use super::types::{
    Attr, CreateHow, DirPage, Fh, FileType, FsInfo, OpKind, Reply, Request, Stable, Time,
};
use crate::proto::rpc::xdr::{Dec, Enc, Xdr, XdrError};

pub(crate) const PROG: u32 = 100003;
pub(crate) const VERS: u32 = 3;
pub(crate) const MOUNT_PROG: u32 = 100005;
pub(crate) const MOUNT_VERS: u32 = 3;
pub(crate) const MOUNTPROC_MNT: u32 = 1;
pub(crate) const MOUNTPROC_EXPORT: u32 = 5;
const FHSIZE3: usize = 64;
const MNTPATHLEN: usize = 1024;
const MNTNAMLEN: usize = 255;
/// Bytes asked for per READDIR page (and per READDIRPLUS's names).
pub(crate) const DIR_COUNT: u32 = 8192;
/// READDIRPLUS's whole reply, attributes and handles included.
pub(crate) const DIRPLUS_MAX: u32 = 32768;

pub(crate) fn proc_of(kind: OpKind) -> u32 {
    match kind {
        OpKind::Null => 0,
        OpKind::Getattr => 1,
        OpKind::Setattr => 2,
        OpKind::Lookup => 3,
        OpKind::Access => 4,
        OpKind::Read => 6,
        OpKind::Write => 7,
        OpKind::Create => 8,
        OpKind::Mkdir => 9,
        OpKind::Remove => 12,
        OpKind::Rmdir => 13,
        OpKind::Rename => 14,
        OpKind::Link => 15,
        OpKind::Readdir => 16,
        OpKind::Readdirplus => 17,
        OpKind::Fsstat => 18,
        OpKind::Fsinfo => 19,
        OpKind::Commit => 21,
        // Not NFSv3 procedures: refused before encoding.
        OpKind::Open | OpKind::Close | OpKind::Session | OpKind::Mount => u32::MAX,
    }
}

fn fh(e: &mut Enc, f: &Fh) {
    e.opaque(f.as_bytes());
}

fn diropargs(e: &mut Enc, dir: &Fh, name: &[u8]) {
    fh(e, dir);
    e.opaque(name);
}

/// sattr3 with the mode and size given, times optionally set to the
/// server's clock, the owner left alone.
fn sattr(e: &mut Enc, mode: Option<u32>, size: Option<u64>, server_times: bool) {
    e.bool(mode.is_some());
    if let Some(m) = mode {
        e.u32(m);
    }
    e.bool(false); // uid
    e.bool(false); // gid
    e.bool(size.is_some());
    if let Some(s) = size {
        e.u64(s);
    }
    // time_how: DONT_CHANGE 0, SET_TO_SERVER_TIME 1.
    e.u32(server_times as u32);
    e.u32(server_times as u32);
}

/// The procedure and arguments of `req`; `file` is the handle of the file
/// a READ, WRITE or COMMIT names.
pub(crate) fn encode(e: &mut Enc, req: &Request, file: Option<&Fh>) -> Result<u32, &'static str> {
    let need_file = || file.ok_or("a file number that is not open");
    match *req {
        Request::Null => {}
        Request::Getattr(f) | Request::Fsinfo(f) | Request::Fsstat(f) => fh(e, f),
        Request::Lookup { dir, name }
        | Request::Remove { dir, name }
        | Request::Rmdir { dir, name } => diropargs(e, dir, name),
        Request::Access { fh: f, mask } => {
            fh(e, f);
            e.u32(mask);
        }
        Request::Create {
            dir,
            name,
            mode,
            how,
            ..
        } => {
            diropargs(e, dir, name);
            match how {
                CreateHow::Guarded => {
                    e.u32(1);
                    sattr(e, Some(mode), None, false);
                }
                CreateHow::Exclusive(verf) => {
                    e.u32(2);
                    e.fixed(&verf);
                }
            }
        }
        Request::Mkdir { dir, name, mode } => {
            diropargs(e, dir, name);
            sattr(e, Some(mode), None, false);
        }
        Request::Rename {
            from,
            from_name,
            to,
            to_name,
        } => {
            diropargs(e, from, from_name);
            diropargs(e, to, to_name);
        }
        Request::Link { fh: f, dir, name } => {
            fh(e, f);
            diropargs(e, dir, name);
        }
        Request::Setattr {
            fh: f,
            size,
            mode,
            times,
        } => {
            fh(e, f);
            sattr(e, mode, size, times);
            e.bool(false); // no guard
        }
        Request::Readdir {
            dir,
            cookie,
            verf,
            plus,
        } => {
            fh(e, dir);
            e.u64(cookie);
            e.fixed(&verf);
            e.u32(DIR_COUNT);
            if plus {
                e.u32(DIRPLUS_MAX);
            }
        }
        Request::Read { offset, len, .. } => {
            fh(e, need_file()?);
            e.u64(offset);
            e.u32(len);
        }
        Request::Write {
            offset,
            len,
            stable,
            ..
        } => {
            fh(e, need_file()?);
            e.u64(offset);
            e.u32(len);
            e.u32(stable.wire());
            // The opaque data's length; the data follows from the caller's buffer.
            e.u32(len);
        }
        Request::Commit { offset, len, .. } => {
            fh(e, need_file()?);
            e.u64(offset);
            e.u32(len);
        }
    }
    Ok(proc_of(req.kind()))
}

/// The arguments of a SETATTR that sets the mode and the times to the
/// server's clock: what follows an EXCLUSIVE create, whose verifier the
/// server kept in the times.
pub(crate) fn encode_after_exclusive(e: &mut Enc, f: &Fh, mode: u32) -> u32 {
    fh(e, f);
    sattr(e, Some(mode), None, true);
    e.bool(false);
    proc_of(OpKind::Setattr)
}

fn time(d: &mut Dec) -> Xdr<Time> {
    Ok(Time {
        secs: d.u32()? as i64,
        nsecs: d.u32()?,
    })
}

pub(crate) fn fattr3(d: &mut Dec) -> Xdr<Attr> {
    let kind = FileType::from_wire(d.u32()?);
    let mode = d.u32()?;
    let nlink = d.u32()?;
    let uid = d.u32()?;
    let gid = d.u32()?;
    let size = d.u64()?;
    let used = d.u64()?;
    d.skip(8)?; // rdev
    let fsid = d.u64()?;
    let fileid = d.u64()?;
    let atime = time(d)?;
    let mtime = time(d)?;
    let ctime = time(d)?;
    Ok(Attr {
        kind,
        mode,
        nlink,
        uid: Some(uid),
        gid: Some(gid),
        size,
        used,
        fsid: (fsid, 0),
        fileid,
        atime,
        mtime,
        ctime,
        change: (ctime.secs as u64) << 32 | ctime.nsecs as u64,
    })
}

fn post_op_attr(d: &mut Dec) -> Xdr<Option<Attr>> {
    if d.bool()? {
        fattr3(d).map(Some)
    } else {
        Ok(None)
    }
}

/// wcc_data: the attributes before (skipped) and after.
fn wcc(d: &mut Dec) -> Xdr<Option<Attr>> {
    if d.bool()? {
        d.skip(24)?;
    }
    post_op_attr(d)
}

fn handle(d: &mut Dec) -> Xdr<Fh> {
    let b = d.opaque(FHSIZE3)?;
    Fh::new(b).ok_or(XdrError::Bad("a file handle longer than NFSv3 allows"))
}

fn status(d: &mut Dec, op: OpKind) -> Result<(), NfsError> {
    match d.u32().map_err(|e| bad(op, e))? {
        0 => Ok(()),
        code => Err(NfsError::Status {
            op,
            code,
            v4: false,
        }),
    }
}

fn bad(op: OpKind, e: XdrError) -> NfsError {
    NfsError::Malformed {
        op,
        what: match e {
            XdrError::Short => "it ends in the middle of a value",
            XdrError::Bad(m) => m,
        },
    }
}

/// For a READ reply: where its data starts in `results` and how long it
/// is, or None for a failed READ (no data). `Short` when `results` is only
/// a prefix that ends before the data.
pub(crate) fn data_at(results: &[u8]) -> Xdr<Option<(usize, usize)>> {
    let mut d = Dec::new(results);
    if d.u32()? != 0 {
        return Ok(None);
    }
    post_op_attr(&mut d)?;
    let count = d.u32()? as usize;
    d.bool()?;
    let len = d.opaque_len(u32::MAX as usize)?;
    if len != count {
        return Err(XdrError::Bad(
            "a READ reply whose count and data length differ",
        ));
    }
    Ok(Some((d.pos(), len)))
}

/// Decodes the results of a `kind` request. For a READ, `results` ends
/// where its data began and `data_len` bytes were placed in the buffer.
pub(crate) fn decode(
    kind: OpKind,
    results: &[u8],
    data_len: usize,
    page: &mut DirPage,
) -> Result<Reply, NfsError> {
    let mut d = Dec::new(results);
    decode_in(kind, &mut d, data_len, page).map_err(|e| match e {
        Fail::Nfs(e) => e,
        Fail::Xdr(e) => bad(kind, e),
    })
}

enum Fail {
    Nfs(NfsError),
    Xdr(XdrError),
}

impl From<XdrError> for Fail {
    fn from(e: XdrError) -> Self {
        Fail::Xdr(e)
    }
}

impl From<NfsError> for Fail {
    fn from(e: NfsError) -> Self {
        Fail::Nfs(e)
    }
}

fn decode_in(
    kind: OpKind,
    d: &mut Dec,
    data_len: usize,
    page: &mut DirPage,
) -> Result<Reply, Fail> {
    if kind == OpKind::Null {
        return Ok(Reply::Done);
    }
    status(d, kind)?;
    Ok(match kind {
        OpKind::Getattr => Reply::Attr(fattr3(d)?),
        OpKind::Setattr => match wcc(d)? {
            Some(a) => Reply::Attr(a),
            None => Reply::Done,
        },
        OpKind::Lookup => {
            let fh = handle(d)?;
            let attr = post_op_attr(d)?;
            post_op_attr(d)?;
            Reply::Handle { fh, attr }
        }
        OpKind::Access => {
            post_op_attr(d)?;
            Reply::Access { granted: d.u32()? }
        }
        OpKind::Read => {
            post_op_attr(d)?;
            let count = d.u32()?;
            let eof = d.bool()?;
            let len = d.u32()? as usize;
            if len != data_len || count as usize != len {
                return Err(
                    XdrError::Bad("a READ reply whose data length differs from its count").into(),
                );
            }
            Reply::Read { count, eof }
        }
        OpKind::Write => {
            wcc(d)?;
            let count = d.u32()?;
            let committed =
                Stable::from_wire(d.u32()?).ok_or(XdrError::Bad("an unknown stable_how"))?;
            let mut verf = [0; 8];
            verf.copy_from_slice(d.fixed(8)?);
            Reply::Write {
                count,
                committed,
                verf,
            }
        }
        OpKind::Create | OpKind::Mkdir => {
            if !d.bool()? {
                return Err(XdrError::Bad("no handle for the object it made").into());
            }
            let fh = handle(d)?;
            let attr = post_op_attr(d)?;
            wcc(d)?;
            Reply::Handle { fh, attr }
        }
        OpKind::Remove | OpKind::Rmdir | OpKind::Rename | OpKind::Link => Reply::Done,
        OpKind::Readdir | OpKind::Readdirplus => readdir(d, kind == OpKind::Readdirplus, page)?,
        OpKind::Fsinfo => {
            post_op_attr(d)?;
            let i = FsInfo {
                rtmax: d.u32()?,
                rtpref: d.u32()?,
                wtmax: {
                    d.u32()?; // rtmult
                    d.u32()?
                },
                wtpref: d.u32()?,
                dtpref: {
                    d.u32()?; // wtmult
                    d.u32()?
                },
                maxfilesize: d.u64()?,
                ..FsInfo::default()
            };
            Reply::Fsinfo(i)
        }
        OpKind::Fsstat => {
            // FSSTAT3resok: tbytes, fbytes, abytes (free to this user),
            // then the files' counts and invarsec, not read.
            post_op_attr(d)?;
            let total = d.u64()?;
            d.u64()?;
            let avail = d.u64()?;
            Reply::Space { avail, total }
        }
        OpKind::Commit => {
            wcc(d)?;
            let mut verf = [0; 8];
            verf.copy_from_slice(d.fixed(8)?);
            Reply::Commit { verf }
        }
        OpKind::Null | OpKind::Open | OpKind::Close | OpKind::Session | OpKind::Mount => {
            Reply::Done
        }
    })
}

/// A directory page (entry3 or entryplus3 list), into `page`. The list's
/// length is bounded by the reply's bytes: each entry takes at least 24.
fn readdir(d: &mut Dec, plus: bool, page: &mut DirPage) -> Result<Reply, Fail> {
    page.clear();
    post_op_attr(d)?;
    let mut verf = [0; 8];
    verf.copy_from_slice(d.fixed(8)?);
    let mut entries = 0u32;
    while d.bool()? {
        let fileid = d.u64()?;
        let name = d.opaque(MNTNAMLEN)?;
        let cookie = d.u64()?;
        let (attr, fh) = if plus {
            let a = post_op_attr(d)?;
            let f = if d.bool()? { Some(handle(d)?) } else { None };
            (a, f)
        } else {
            (None, None)
        };
        page.push(fileid, cookie, name, attr, fh);
        entries += 1;
    }
    let eof = d.bool()?;
    Ok(Reply::Dir { entries, eof, verf })
}

/// MOUNT's MNT results: the export's root handle.
pub(crate) fn decode_mnt(results: &[u8]) -> Result<Fh, String> {
    let mut d = Dec::new(results);
    let status = d.u32().map_err(|e| format!("MOUNT reply: {e}"))?;
    if status != 0 {
        let why = match status {
            1 => "not permitted (MNT3ERR_PERM)",
            2 => "no such export or directory (MNT3ERR_NOENT)",
            5 => "I/O error (MNT3ERR_IO)",
            13 => "access denied to this client (MNT3ERR_ACCES)",
            20 => "not a directory (MNT3ERR_NOTDIR)",
            22 => "invalid argument (MNT3ERR_INVAL)",
            63 => "path too long (MNT3ERR_NAMETOOLONG)",
            10004 => "not supported (MNT3ERR_NOTSUPP)",
            10006 => "server fault (MNT3ERR_SERVERFAULT)",
            _ => "refused",
        };
        return Err(why.to_string());
    }
    let fh = handle(&mut d).map_err(|e| format!("MOUNT reply: {e}"))?;
    Ok(fh)
}

/// MOUNT's EXPORT results: the exported paths, at most `max` of them.
pub(crate) fn decode_exports(results: &[u8], max: usize) -> Result<Vec<String>, XdrError> {
    let mut d = Dec::new(results);
    let mut out = Vec::new();
    while d.bool()? {
        if out.len() >= max {
            return Err(XdrError::Bad("more exports than any server has"));
        }
        let dir = d.opaque(MNTPATHLEN)?;
        out.push(String::from_utf8_lossy(dir).into_owned());
        // The groups allowed to mount it.
        let mut groups = 0;
        while d.bool()? {
            d.opaque(MNTNAMLEN)?;
            groups += 1;
            if groups > 4096 {
                return Err(XdrError::Bad(
                    "an export with more groups than any server has",
                ));
            }
        }
    }
    Ok(out)
}

/// MNT and UMNT's argument.
pub(crate) fn encode_dirpath(e: &mut Enc, path: &str) {
    e.opaque(&path.as_bytes()[..path.len().min(MNTPATHLEN)]);
}
