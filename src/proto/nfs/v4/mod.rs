//! NFSv4.1 (RFC 8881): every request is a COMPOUND that starts with
//! SEQUENCE (the session's slot and sequence number, patched in place when
//! a slot is given, so a call encoded while every slot is busy waits
//! encoded), then the operations, each encoded here.

pub(crate) mod attrs;
pub(crate) mod reply;

use super::types::{CreateHow, Fh, OpKind, Request};
use crate::proto::rpc::xdr::{Enc, patch_u32};

pub(crate) const PROG: u32 = 100003;
pub(crate) const VERS: u32 = 4;
pub(crate) const PROC_COMPOUND: u32 = 1;
pub(crate) const MINOR: u32 = 1;

// The protocol's whole table, as the spec lists it: a bit or code not
// used yet is still named here, so a reader checks it against the spec.
#[allow(dead_code)]
pub(crate) mod op {
    pub(crate) const ACCESS: u32 = 3;
    pub(crate) const CLOSE: u32 = 4;
    pub(crate) const COMMIT: u32 = 5;
    pub(crate) const CREATE: u32 = 6;
    pub(crate) const GETATTR: u32 = 9;
    pub(crate) const GETFH: u32 = 10;
    pub(crate) const LINK: u32 = 11;
    pub(crate) const LOOKUP: u32 = 15;
    pub(crate) const OPEN: u32 = 18;
    pub(crate) const PUTFH: u32 = 22;
    pub(crate) const PUTROOTFH: u32 = 24;
    pub(crate) const READ: u32 = 25;
    pub(crate) const READDIR: u32 = 26;
    pub(crate) const REMOVE: u32 = 28;
    pub(crate) const RENAME: u32 = 29;
    pub(crate) const SAVEFH: u32 = 32;
    pub(crate) const SETATTR: u32 = 34;
    pub(crate) const WRITE: u32 = 38;
    pub(crate) const EXCHANGE_ID: u32 = 42;
    pub(crate) const CREATE_SESSION: u32 = 43;
    pub(crate) const DESTROY_SESSION: u32 = 44;
    pub(crate) const SEQUENCE: u32 = 53;
    pub(crate) const DESTROY_CLIENTID: u32 = 57;
    pub(crate) const RECLAIM_COMPLETE: u32 = 58;
}

pub(crate) type Stateid = [u8; 16];
pub(crate) type SessionId = [u8; 16];
/// The "current stateid" (RFC 8881 16.2.3.1.2): seqid 1, other all zero.
const CURRENT_STATEID: Stateid = [0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
const ANONYMOUS_STATEID: Stateid = [0; 16];
/// OPEN4_SHARE_ACCESS_BOTH | OPEN4_SHARE_ACCESS_WANT_NO_DELEG: this client
/// has no callback channel, so it asks for no delegation.
const SHARE_BOTH_NO_DELEG: u32 = 3 | 0x0400;

/// What the client's encoder needs besides the request.
pub(crate) struct Ctx<'a> {
    pub(crate) clientid: u64,
    pub(crate) owner: &'a [u8],
    /// A READ's, WRITE's or COMMIT's file: its handle and open stateid.
    pub(crate) file: Option<(&'a Fh, &'a Stateid)>,
}

/// Where the encoder put the parts patched later (offsets in the call).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Encoded {
    pub(crate) proc_: u32,
    /// SEQUENCE's arguments (session id first); 0 for a call without one.
    pub(crate) seq_at: usize,
    /// A READ's or WRITE's stateid; 0 for none.
    pub(crate) stateid_at: usize,
}

fn compound(e: &mut Enc, ops: u32) {
    e.opaque(b"");
    e.u32(MINOR);
    e.u32(ops);
}

/// SEQUENCE with a placeholder session and slot (`patch_sequence`).
fn sequence(e: &mut Enc, cache: bool) -> usize {
    e.u32(op::SEQUENCE);
    let at = e.pos();
    e.fixed(&[0; 16]);
    e.u32(0); // sequenceid
    e.u32(0); // slotid
    e.u32(0); // highest slotid
    e.bool(cache);
    at
}

/// Gives a call its session, slot and sequence number.
pub(crate) fn patch_sequence(
    call: &mut [u8],
    at: usize,
    session: &SessionId,
    seq: u32,
    slot: u32,
    highest: u32,
) {
    if let Some(s) = call.get_mut(at..at + 16) {
        s.copy_from_slice(session);
    }
    patch_u32(call, at + 16, seq);
    patch_u32(call, at + 20, slot);
    patch_u32(call, at + 24, highest);
}

/// Gives a READ or WRITE its file's (new) open stateid.
pub(crate) fn patch_stateid(call: &mut [u8], at: usize, s: &Stateid) {
    if let Some(b) = call.get_mut(at..at + 16) {
        b.copy_from_slice(s);
    }
}

fn putfh(e: &mut Enc, fh: &Fh) {
    e.u32(op::PUTFH);
    e.opaque(fh.as_bytes());
}

fn getattr(e: &mut Enc, w: [u32; 2]) {
    e.u32(op::GETATTR);
    attrs::bitmap(e, w);
}

fn open_owner(e: &mut Enc, ctx: &Ctx) {
    e.u64(ctx.clientid);
    e.opaque(ctx.owner);
}

/// Encodes `req` as a COMPOUND (or the NULL procedure).
pub(crate) fn encode(e: &mut Enc, req: &Request, ctx: &Ctx) -> Result<Encoded, &'static str> {
    let mut out = Encoded {
        proc_: PROC_COMPOUND,
        ..Encoded::default()
    };
    let cache = !req.kind().idempotent() || req.kind() == OpKind::Create;
    let file = || ctx.file.ok_or("a file number that is not open");
    match *req {
        Request::Null => out.proc_ = 0,
        Request::Getattr(fh) => {
            compound(e, 3);
            out.seq_at = sequence(e, cache);
            putfh(e, fh);
            getattr(e, attrs::ATTRS);
        }
        Request::Fsinfo(fh) => {
            compound(e, 3);
            out.seq_at = sequence(e, cache);
            putfh(e, fh);
            getattr(e, attrs::FS_ATTRS);
        }
        Request::Fsstat(fh) => {
            compound(e, 3);
            out.seq_at = sequence(e, cache);
            putfh(e, fh);
            getattr(e, attrs::SPACE_ATTRS);
        }
        Request::Lookup { dir, name } => {
            compound(e, 5);
            out.seq_at = sequence(e, cache);
            putfh(e, dir);
            e.u32(op::LOOKUP);
            e.opaque(name);
            e.u32(op::GETFH);
            getattr(e, attrs::ATTRS);
        }
        Request::Access { fh, mask } => {
            compound(e, 3);
            out.seq_at = sequence(e, cache);
            putfh(e, fh);
            e.u32(op::ACCESS);
            e.u32(mask);
        }
        Request::Create {
            dir,
            name,
            mode,
            how,
            open,
        } => {
            compound(e, if open { 5 } else { 6 });
            out.seq_at = sequence(e, cache);
            putfh(e, dir);
            e.u32(op::OPEN);
            e.u32(0); // seqid: unused in 4.1
            e.u32(SHARE_BOTH_NO_DELEG);
            e.u32(0); // deny none
            open_owner(e, ctx);
            e.u32(1); // OPEN4_CREATE
            match how {
                CreateHow::Guarded => {
                    e.u32(1); // GUARDED4
                    attrs::set_mode_size(e, Some(mode), None);
                }
                CreateHow::Exclusive(verf) => {
                    e.u32(3); // EXCLUSIVE4_1: the verifier and the attributes
                    e.fixed(&verf);
                    attrs::set_mode_size(e, Some(mode), None);
                }
            }
            e.u32(0); // CLAIM_NULL
            e.opaque(name);
            e.u32(op::GETFH);
            getattr(e, attrs::ATTRS);
            if !open {
                e.u32(op::CLOSE);
                e.u32(0);
                e.fixed(&CURRENT_STATEID);
            }
        }
        Request::Mkdir { dir, name, mode } => {
            compound(e, 5);
            out.seq_at = sequence(e, cache);
            putfh(e, dir);
            e.u32(op::CREATE);
            e.u32(2); // NF4DIR
            e.opaque(name);
            attrs::set_mode_size(e, Some(mode), None);
            e.u32(op::GETFH);
            getattr(e, attrs::ATTRS);
        }
        Request::Remove { dir, name } | Request::Rmdir { dir, name } => {
            compound(e, 3);
            out.seq_at = sequence(e, cache);
            putfh(e, dir);
            e.u32(op::REMOVE);
            e.opaque(name);
        }
        Request::Rename {
            from,
            from_name,
            to,
            to_name,
        } => {
            compound(e, 5);
            out.seq_at = sequence(e, cache);
            putfh(e, from);
            e.u32(op::SAVEFH);
            putfh(e, to);
            e.u32(op::RENAME);
            e.opaque(from_name);
            e.opaque(to_name);
        }
        Request::Link { fh, dir, name } => {
            compound(e, 5);
            out.seq_at = sequence(e, cache);
            putfh(e, fh);
            e.u32(op::SAVEFH);
            putfh(e, dir);
            e.u32(op::LINK);
            e.opaque(name);
        }
        Request::Setattr {
            fh,
            size,
            mode,
            times,
        } => {
            compound(e, 4);
            out.seq_at = sequence(e, cache);
            putfh(e, fh);
            e.u32(op::SETATTR);
            e.fixed(&ANONYMOUS_STATEID);
            attrs::set_attrs(e, mode, size, times);
            getattr(e, attrs::ATTRS);
        }
        Request::Readdir {
            dir,
            cookie,
            verf,
            plus,
        } => {
            compound(e, 3);
            out.seq_at = sequence(e, cache);
            putfh(e, dir);
            e.u32(op::READDIR);
            e.u64(cookie);
            e.fixed(&verf);
            e.u32(8192); // dircount
            e.u32(32768); // maxcount
            attrs::bitmap(
                e,
                if plus {
                    attrs::DIRPLUS_ATTRS
                } else {
                    attrs::DIR_ATTRS
                },
            );
        }
        Request::Read { offset, len, .. } => {
            let (fh, st) = file()?;
            compound(e, 3);
            out.seq_at = sequence(e, cache);
            putfh(e, fh);
            e.u32(op::READ);
            out.stateid_at = e.pos();
            e.fixed(st);
            e.u64(offset);
            e.u32(len);
        }
        Request::Write {
            offset,
            len,
            stable,
            ..
        } => {
            let (fh, st) = file()?;
            compound(e, 3);
            out.seq_at = sequence(e, cache);
            putfh(e, fh);
            e.u32(op::WRITE);
            out.stateid_at = e.pos();
            e.fixed(st);
            e.u64(offset);
            e.u32(stable.wire());
            e.u32(len);
        }
        Request::Commit { offset, len, .. } => {
            let (fh, _) = file()?;
            compound(e, 3);
            out.seq_at = sequence(e, cache);
            putfh(e, fh);
            e.u32(op::COMMIT);
            e.u64(offset);
            e.u32(len);
        }
    }
    Ok(out)
}

/// OPEN of an existing file by its handle, for reading and writing.
pub(crate) fn encode_open_fh(e: &mut Enc, fh: &Fh, ctx: &Ctx) -> usize {
    compound(e, 4);
    let at = sequence(e, false);
    putfh(e, fh);
    e.u32(op::OPEN);
    e.u32(0);
    e.u32(SHARE_BOTH_NO_DELEG);
    e.u32(0);
    open_owner(e, ctx);
    e.u32(0); // OPEN4_NOCREATE
    e.u32(4); // CLAIM_FH
    getattr(e, attrs::ATTRS);
    at
}

pub(crate) fn encode_close(e: &mut Enc, fh: &Fh, st: &Stateid) -> usize {
    compound(e, 3);
    let at = sequence(e, false);
    putfh(e, fh);
    e.u32(op::CLOSE);
    e.u32(0);
    e.fixed(st);
    at
}

/// The root handle and the handles on the way down `path`: PUTROOTFH,
/// LOOKUP per component, GETFH and GETATTR (of the last).
pub(crate) fn encode_walk(e: &mut Enc, path: &[&[u8]]) -> usize {
    compound(e, 4 + path.len() as u32);
    let at = sequence(e, false);
    e.u32(op::PUTROOTFH);
    for c in path {
        e.u32(op::LOOKUP);
        e.opaque(c);
    }
    e.u32(op::GETFH);
    getattr(e, attrs::ATTRS);
    at
}

pub(crate) fn encode_exchange_id(e: &mut Enc, verifier: &[u8; 8], owner: &[u8]) {
    compound(e, 1);
    e.u32(op::EXCHANGE_ID);
    e.fixed(verifier);
    e.opaque(owner);
    e.u32(0); // flags
    e.u32(0); // SP4_NONE
    e.u32(0); // no implementation id
}

/// CREATE_SESSION asking for `slots` slots and requests and replies of at
/// most `max_req` and `max_resp` bytes; no back channel (no callbacks, so
/// no delegations).
pub(crate) fn encode_create_session(
    e: &mut Enc,
    clientid: u64,
    seq: u32,
    slots: u32,
    max_req: u32,
    max_resp: u32,
) {
    compound(e, 1);
    e.u32(op::CREATE_SESSION);
    e.u64(clientid);
    e.u32(seq);
    e.u32(0); // flags: not persistent, no back channel on this connection
    // Fore channel.
    for v in [0, max_req, max_resp, 4096, 16, slots] {
        e.u32(v);
    }
    e.u32(0); // no RDMA ird
    // Back channel: the least a server accepts.
    for v in [0, 4096, 4096, 0, 2, 1] {
        e.u32(v);
    }
    e.u32(0);
    e.u32(0x4000_0000); // callback program
    e.u32(1); // one security parameter: AUTH_NONE
    e.u32(0);
}

pub(crate) fn encode_reclaim_complete(e: &mut Enc) -> usize {
    compound(e, 2);
    let at = sequence(e, false);
    e.u32(op::RECLAIM_COMPLETE);
    e.bool(false);
    at
}
