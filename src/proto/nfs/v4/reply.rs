//! NFSv4.1 COMPOUND replies decoded: the status of each operation in the
//! order the request sent them (a reply out of that order is malformed),
//! SEQUENCE's slot figures, and each operation's results. Pure functions
//! over the results' bytes, one entry each for the fuzz harness (`decode`,
//! `data_at`, `exchange_id`, `create_session`, `walk`).

use super::attrs;
use super::{SessionId, Stateid, op};
use crate::proto::nfs::error::NfsError;
use crate::proto::nfs::types::{Attr, DirPage, FH_MAX, Fh, OpKind, Reply, Stable};
use crate::proto::rpc::xdr::{Dec, Xdr, XdrError};

/// SEQUENCE's results: the slots the server offers now.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Seq {
    pub(crate) highest: u32,
    pub(crate) target: u32,
    pub(crate) flags: u32,
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

fn bad(op: OpKind, e: XdrError) -> NfsError {
    NfsError::Malformed {
        op,
        what: match e {
            XdrError::Short => "it ends in the middle of a value",
            XdrError::Bad(m) => m,
        },
    }
}

fn finish<T>(kind: OpKind, r: Result<T, Fail>) -> Result<T, NfsError> {
    r.map_err(|f| match f {
        Fail::Nfs(e) => e,
        Fail::Xdr(e) => bad(kind, e),
    })
}

/// The COMPOUND header; the array's length is bounded by the bytes.
fn header(d: &mut Dec) -> Xdr<(u32, usize)> {
    let status = d.u32()?;
    d.opaque(1024)?; // tag
    let n = d.count(64, 8)?;
    Ok((status, n))
}

/// The next operation's result header: it must be `want`; its status.
fn next(d: &mut Dec, kind: OpKind, want: u32) -> Result<(), Fail> {
    let got = d.u32()?;
    if got != want {
        return Err(Fail::Xdr(XdrError::Bad(
            "a COMPOUND reply whose operations differ from the request's",
        )));
    }
    match d.u32()? {
        0 => Ok(()),
        code => Err(Fail::Nfs(NfsError::Status {
            op: kind,
            code,
            v4: true,
        })),
    }
}

fn sequence(d: &mut Dec, kind: OpKind) -> Result<Seq, Fail> {
    next(d, kind, op::SEQUENCE)?;
    d.skip(16)?; // session
    d.u32()?; // sequenceid
    d.u32()?; // slotid
    Ok(Seq {
        highest: d.u32()?,
        target: d.u32()?,
        flags: d.u32()?,
    })
}

fn fh(d: &mut Dec) -> Xdr<Fh> {
    Fh::new(d.opaque(FH_MAX)?).ok_or(XdrError::Bad("a file handle longer than NFSv4 allows"))
}

fn stateid(d: &mut Dec) -> Xdr<Stateid> {
    let mut s = [0; 16];
    s.copy_from_slice(d.fixed(16)?);
    Ok(s)
}

fn verf(d: &mut Dec) -> Xdr<[u8; 8]> {
    let mut v = [0; 8];
    v.copy_from_slice(d.fixed(8)?);
    Ok(v)
}

fn getattr(d: &mut Dec, kind: OpKind) -> Result<attrs::Decoded, Fail> {
    next(d, kind, op::GETATTR)?;
    Ok(attrs::decode(d)?)
}

/// OPEN's results: the stateid (the rest checked and skipped).
fn open_res(d: &mut Dec) -> Xdr<Stateid> {
    let st = stateid(d)?;
    d.skip(20)?; // change_info4
    d.u32()?; // rflags
    let words = d.count(8, 4)?; // attrset
    d.skip(words * 4)?;
    match d.u32()? {
        0 => {}
        kind @ (1 | 2) => {
            stateid(d)?;
            d.bool()?;
            if kind == 2 {
                match d.u32()? {
                    1 => d.skip(8)?,
                    2 => d.skip(8)?,
                    _ => return Err(XdrError::Bad("an unknown space limit")),
                }
            }
            d.skip(12)?; // nfsace4: type, flag, mask
            d.opaque(1024)?; // who
        }
        3 => {
            let why = d.u32()?;
            if why == 1 || why == 2 {
                d.bool()?;
            }
        }
        _ => return Err(XdrError::Bad("an unknown delegation type")),
    }
    Ok(st)
}

/// For a READ reply: where its data starts and how long it is, or None
/// for a failed READ.
pub(crate) fn data_at(results: &[u8]) -> Xdr<Option<(usize, usize)>> {
    let mut d = Dec::new(results);
    let (status, _) = header(&mut d)?;
    if status != 0 {
        return Ok(None);
    }
    for want in [op::SEQUENCE, op::PUTFH] {
        if d.u32()? != want || d.u32()? != 0 {
            return Err(XdrError::Bad(
                "a COMPOUND reply whose operations differ from the request's",
            ));
        }
        if want == op::SEQUENCE {
            d.skip(36)?;
        }
    }
    if d.u32()? != op::READ || d.u32()? != 0 {
        return Err(XdrError::Bad(
            "a COMPOUND reply whose operations differ from the request's",
        ));
    }
    d.bool()?;
    let len = d.opaque_len(u32::MAX as usize)?;
    Ok(Some((d.pos(), len)))
}

/// A decoded reply: the reply, SEQUENCE's figures, and an OPEN's stateid.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Decoded {
    pub(crate) reply: Reply,
    pub(crate) stateid: Option<Stateid>,
}

/// Decodes the reply to a `kind` request encoded by `super::encode` (with
/// `open` for a Create kept open, `plus` for READDIR's attributes).
/// `seq` gets SEQUENCE's figures even when a later operation failed.
pub(crate) fn decode(
    kind: OpKind,
    results: &[u8],
    data_len: usize,
    page: &mut DirPage,
    seq: &mut Option<Seq>,
) -> Result<Decoded, NfsError> {
    let mut d = Dec::new(results);
    finish(kind, decode_in(kind, &mut d, data_len, page, seq))
}

fn decode_in(
    kind: OpKind,
    d: &mut Dec,
    data_len: usize,
    page: &mut DirPage,
    seq_out: &mut Option<Seq>,
) -> Result<Decoded, Fail> {
    let (_status, _n) = header(d)?;
    if kind == OpKind::Null {
        return Ok(Decoded {
            reply: Reply::Done,
            stateid: None,
        });
    }
    let seq = sequence(d, kind)?;
    *seq_out = Some(seq);
    let mut opened = None;
    let reply = match kind {
        OpKind::Session => Reply::Done,
        OpKind::Getattr => {
            next(d, kind, op::PUTFH)?;
            Reply::Attr(getattr(d, kind)?.attr)
        }
        OpKind::Fsinfo => {
            next(d, kind, op::PUTFH)?;
            Reply::Fsinfo(getattr(d, kind)?.fs)
        }
        OpKind::Fsstat => {
            next(d, kind, op::PUTFH)?;
            let fs = getattr(d, kind)?.fs;
            Reply::Space {
                avail: fs.avail,
                total: fs.total,
            }
        }
        OpKind::Lookup => {
            next(d, kind, op::PUTFH)?;
            next(d, kind, op::LOOKUP)?;
            next(d, kind, op::GETFH)?;
            let f = fh(d)?;
            Reply::Handle {
                fh: f,
                attr: Some(getattr(d, kind)?.attr),
            }
        }
        OpKind::Access => {
            next(d, kind, op::PUTFH)?;
            next(d, kind, op::ACCESS)?;
            d.u32()?; // supported
            Reply::Access { granted: d.u32()? }
        }
        OpKind::Create => {
            next(d, kind, op::PUTFH)?;
            next(d, kind, op::OPEN)?;
            let st = open_res(d)?;
            next(d, kind, op::GETFH)?;
            let f = fh(d)?;
            let attr = getattr(d, kind)?.attr;
            // A CLOSE follows when the file is not kept open.
            if d.remaining() > 0 {
                next(d, kind, op::CLOSE)?;
                stateid(d)?;
            } else {
                opened = Some(st);
            }
            Reply::Handle {
                fh: f,
                attr: Some(attr),
            }
        }
        OpKind::Open => {
            next(d, kind, op::PUTFH)?;
            next(d, kind, op::OPEN)?;
            opened = Some(open_res(d)?);
            Reply::Attr(getattr(d, kind)?.attr)
        }
        OpKind::Close => {
            next(d, kind, op::PUTFH)?;
            next(d, kind, op::CLOSE)?;
            stateid(d)?;
            Reply::Done
        }
        OpKind::Mkdir => {
            next(d, kind, op::PUTFH)?;
            next(d, kind, op::CREATE)?;
            d.skip(20)?;
            let words = d.count(8, 4)?;
            d.skip(words * 4)?;
            next(d, kind, op::GETFH)?;
            let f = fh(d)?;
            Reply::Handle {
                fh: f,
                attr: Some(getattr(d, kind)?.attr),
            }
        }
        OpKind::Remove | OpKind::Rmdir => {
            next(d, kind, op::PUTFH)?;
            next(d, kind, op::REMOVE)?;
            d.skip(20)?;
            Reply::Done
        }
        OpKind::Rename | OpKind::Link => {
            next(d, kind, op::PUTFH)?;
            next(d, kind, op::SAVEFH)?;
            next(d, kind, op::PUTFH)?;
            if kind == OpKind::Rename {
                next(d, kind, op::RENAME)?;
                d.skip(40)?;
            } else {
                next(d, kind, op::LINK)?;
                d.skip(20)?;
            }
            Reply::Done
        }
        OpKind::Setattr => {
            next(d, kind, op::PUTFH)?;
            next(d, kind, op::SETATTR)?;
            let words = d.count(8, 4)?;
            d.skip(words * 4)?;
            Reply::Attr(getattr(d, kind)?.attr)
        }
        OpKind::Readdir | OpKind::Readdirplus => {
            next(d, kind, op::PUTFH)?;
            next(d, kind, op::READDIR)?;
            readdir(d, page)?
        }
        OpKind::Read => {
            next(d, kind, op::PUTFH)?;
            next(d, kind, op::READ)?;
            let eof = d.bool()?;
            let len = d.u32()? as usize;
            if len != data_len {
                return Err(Fail::Xdr(XdrError::Bad(
                    "a READ reply whose data length differs",
                )));
            }
            Reply::Read {
                count: len as u32,
                eof,
            }
        }
        OpKind::Write => {
            next(d, kind, op::PUTFH)?;
            next(d, kind, op::WRITE)?;
            let count = d.u32()?;
            let committed =
                Stable::from_wire(d.u32()?).ok_or(XdrError::Bad("an unknown stable_how4"))?;
            Reply::Write {
                count,
                committed,
                verf: verf(d)?,
            }
        }
        OpKind::Commit => {
            next(d, kind, op::PUTFH)?;
            next(d, kind, op::COMMIT)?;
            Reply::Commit { verf: verf(d)? }
        }
        OpKind::Null | OpKind::Mount => Reply::Done,
    };
    Ok(Decoded {
        reply,
        stateid: opened,
    })
}

fn readdir(d: &mut Dec, page: &mut DirPage) -> Result<Reply, Fail> {
    page.clear();
    let v = verf(d)?;
    let mut entries = 0u32;
    while d.bool()? {
        let cookie = d.u64()?;
        let name = d.opaque(1024)?;
        let a = attrs::decode(d)?;
        let attr: Option<Attr> = (a.rdattr_error == 0).then_some(a.attr);
        page.push(a.attr.fileid, cookie, name, attr, a.fh);
        entries += 1;
    }
    let eof = d.bool()?;
    Ok(Reply::Dir {
        entries,
        eof,
        verf: v,
    })
}

/// A COMPOUND of one operation without SEQUENCE (EXCHANGE_ID,
/// CREATE_SESSION, DESTROY_*): its results after the status.
fn sole<'a>(results: &'a [u8], want: u32) -> Result<Dec<'a>, NfsError> {
    let mut d = Dec::new(results);
    let r: Result<(), Fail> = (|| {
        header(&mut d)?;
        next(&mut d, OpKind::Session, want)
    })();
    finish(OpKind::Session, r)?;
    Ok(d)
}

/// EXCHANGE_ID's client id and sequence number.
pub(crate) fn exchange_id(results: &[u8]) -> Result<(u64, u32), NfsError> {
    let mut d = sole(results, op::EXCHANGE_ID)?;
    let r: Result<(u64, u32), Fail> = (|| {
        let id = d.u64()?;
        let seq = d.u32()?;
        d.u32()?; // flags
        if d.u32()? != 0 {
            return Err(Fail::Xdr(XdrError::Bad(
                "the server insists on state protection, which this client does not do",
            )));
        }
        Ok((id, seq))
    })();
    finish(OpKind::Session, r)
}

/// CREATE_SESSION's results.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SessionGranted {
    pub(crate) id: SessionId,
    pub(crate) max_req: u32,
    pub(crate) max_resp: u32,
    pub(crate) slots: u32,
}

pub(crate) fn create_session(results: &[u8]) -> Result<SessionGranted, NfsError> {
    let mut d = sole(results, op::CREATE_SESSION)?;
    let r: Result<SessionGranted, Fail> = (|| {
        let mut id = [0; 16];
        id.copy_from_slice(d.fixed(16)?);
        d.u32()?; // sequence
        d.u32()?; // flags
        d.u32()?; // header pad
        let max_req = d.u32()?;
        let max_resp = d.u32()?;
        d.u32()?; // cached
        d.u32()?; // max operations
        let slots = d.u32()?;
        if slots == 0 {
            return Err(Fail::Xdr(XdrError::Bad("a session of no slots")));
        }
        Ok(SessionGranted {
            id,
            max_req,
            max_resp,
            slots,
        })
    })();
    finish(OpKind::Session, r)
}

pub(crate) fn reclaim_complete(results: &[u8]) -> Result<(), NfsError> {
    let mut d = Dec::new(results);
    let r = (|| {
        header(&mut d)?;
        sequence(&mut d, OpKind::Session)?;
        match next(&mut d, OpKind::Session, op::RECLAIM_COMPLETE) {
            Err(Fail::Nfs(e)) if e.is(10054) => Ok(()),
            other => other,
        }
    })();
    finish(OpKind::Session, r)
}

/// A path walk's last handle and attributes (`super::encode_walk`).
pub(crate) fn walk(results: &[u8], components: usize) -> Result<(Fh, Attr), NfsError> {
    let mut d = Dec::new(results);
    let r = (|| {
        header(&mut d)?;
        sequence(&mut d, OpKind::Lookup)?;
        next(&mut d, OpKind::Lookup, op::PUTROOTFH)?;
        for _ in 0..components {
            next(&mut d, OpKind::Lookup, op::LOOKUP)?;
        }
        next(&mut d, OpKind::Lookup, op::GETFH)?;
        let f = fh(&mut d)?;
        let a = getattr(&mut d, OpKind::Lookup)?;
        Ok((f, a.attr))
    })();
    finish(OpKind::Lookup, r)
}

/// An OPEN by handle's stateid and attributes.
pub(crate) fn open_fh(results: &[u8], seq: &mut Option<Seq>) -> Result<(Stateid, Attr), NfsError> {
    let mut page = DirPage::default();
    let d = decode(OpKind::Open, results, 0, &mut page, seq)?;
    match (d.stateid, d.reply) {
        (Some(s), Reply::Attr(a)) => Ok((s, a)),
        _ => Err(bad(
            OpKind::Open,
            XdrError::Bad("an OPEN without a stateid"),
        )),
    }
}
