//! NFSv4 attributes (fattr4, RFC 8881 section 5): the bitmaps this client
//! asks for and sets, and the decoder of what comes back. The values sit
//! in bit order in one opaque; an attribute this client did not ask for
//! cannot be skipped (its size is its type's), so one is refused.

use crate::proto::nfs::types::{Attr, FH_MAX, Fh, FileType, FsInfo, Time};
use crate::proto::rpc::xdr::{Dec, Enc, Xdr, XdrError};

pub(crate) const TYPE: u32 = 1;
pub(crate) const CHANGE: u32 = 3;
pub(crate) const SIZE: u32 = 4;
pub(crate) const FSID: u32 = 8;
pub(crate) const LEASE_TIME: u32 = 10;
pub(crate) const RDATTR_ERROR: u32 = 11;
pub(crate) const FILEHANDLE: u32 = 19;
pub(crate) const FILEID: u32 = 20;
pub(crate) const MAXFILESIZE: u32 = 27;
pub(crate) const MAXREAD: u32 = 30;
pub(crate) const MAXWRITE: u32 = 31;
pub(crate) const MODE: u32 = 33;
pub(crate) const NUMLINKS: u32 = 35;
pub(crate) const OWNER: u32 = 36;
pub(crate) const OWNER_GROUP: u32 = 37;
pub(crate) const SPACE_AVAIL: u32 = 42;
pub(crate) const SPACE_TOTAL: u32 = 44;
pub(crate) const SPACE_USED: u32 = 45;
pub(crate) const TIME_ACCESS: u32 = 47;
pub(crate) const TIME_ACCESS_SET: u32 = 48;
pub(crate) const TIME_METADATA: u32 = 52;
pub(crate) const TIME_MODIFY: u32 = 53;
pub(crate) const TIME_MODIFY_SET: u32 = 54;

const fn bits(list: &[u32]) -> [u32; 2] {
    let mut w = [0u32; 2];
    let mut i = 0;
    while i < list.len() {
        w[(list[i] / 32) as usize] |= 1 << (list[i] % 32);
        i += 1;
    }
    w
}

/// What GETATTR asks for: what `Attr` holds.
pub(crate) const ATTRS: [u32; 2] = bits(&[
    TYPE,
    CHANGE,
    SIZE,
    FSID,
    FILEID,
    MODE,
    NUMLINKS,
    OWNER,
    OWNER_GROUP,
    SPACE_USED,
    TIME_ACCESS,
    TIME_METADATA,
    TIME_MODIFY,
]);
/// What READDIR asks for per entry (with READDIRPLUS's attributes and handle).
pub(crate) const DIR_ATTRS: [u32; 2] = bits(&[TYPE, RDATTR_ERROR, FILEID]);
pub(crate) const DIRPLUS_ATTRS: [u32; 2] = bits(&[
    TYPE,
    CHANGE,
    SIZE,
    FSID,
    RDATTR_ERROR,
    FILEHANDLE,
    FILEID,
    MODE,
    NUMLINKS,
    OWNER,
    OWNER_GROUP,
    SPACE_USED,
    TIME_ACCESS,
    TIME_METADATA,
    TIME_MODIFY,
]);
/// The file system's limits.
pub(crate) const FS_ATTRS: [u32; 2] = bits(&[LEASE_TIME, MAXFILESIZE, MAXREAD, MAXWRITE]);
/// The file system's space (FSSTAT's).
pub(crate) const SPACE_ATTRS: [u32; 2] = bits(&[SPACE_AVAIL, SPACE_TOTAL]);

pub(crate) fn bitmap(e: &mut Enc, w: [u32; 2]) {
    e.u32(2);
    e.u32(w[0]);
    e.u32(w[1]);
}

/// A fattr4 that sets the mode (and the size, when given).
pub(crate) fn set_mode_size(e: &mut Enc, mode: Option<u32>, size: Option<u64>) {
    set_attrs(e, mode, size, false);
}

/// A fattr4 that sets the size, the mode and the access and modify times
/// to the server's clock (SET_TO_SERVER_TIME4), each when asked, in bit
/// order.
pub(crate) fn set_attrs(e: &mut Enc, mode: Option<u32>, size: Option<u64>, server_times: bool) {
    let mut list = [0u32; 4];
    let mut n = 0;
    if size.is_some() {
        list[n] = SIZE;
        n += 1;
    }
    if mode.is_some() {
        list[n] = MODE;
        n += 1;
    }
    if server_times {
        list[n] = TIME_ACCESS_SET;
        list[n + 1] = TIME_MODIFY_SET;
        n += 2;
    }
    bitmap(e, bits(&list[..n]));
    let len = size.map_or(0, |_| 8) + mode.map_or(0, |_| 4) + if server_times { 8 } else { 0 };
    e.u32(len);
    if let Some(s) = size {
        e.u64(s);
    }
    if let Some(m) = mode {
        e.u32(m);
    }
    if server_times {
        // time_how4: SET_TO_SERVER_TIME4 is 0 and carries no time.
        e.u32(0);
        e.u32(0);
    }
}

/// What a fattr4 held.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Decoded {
    pub(crate) attr: Attr,
    pub(crate) fh: Option<Fh>,
    pub(crate) fs: FsInfo,
    pub(crate) rdattr_error: u32,
}

fn time(d: &mut Dec) -> Xdr<Time> {
    Ok(Time {
        secs: d.i64()?,
        nsecs: d.u32()?,
    })
}

/// Decodes a fattr4 (bitmap, then the values in bit order).
pub(crate) fn decode(d: &mut Dec) -> Xdr<Decoded> {
    let words = d.count(8, 4)?;
    let mut w = [0u32; 8];
    for x in w.iter_mut().take(words) {
        *x = d.u32()?;
    }
    let vals = d.opaque(64 * 1024)?;
    let mut v = Dec::new(vals);
    let mut out = Decoded::default();
    for (i, word) in w.iter().enumerate().take(words) {
        let mut bitsleft = *word;
        while bitsleft != 0 {
            let b = bitsleft.trailing_zeros();
            bitsleft &= bitsleft - 1;
            value(&mut v, i as u32 * 32 + b, &mut out)?;
        }
    }
    if v.remaining() != 0 {
        return Err(XdrError::Bad(
            "attribute values longer than their bitmap says",
        ));
    }
    Ok(out)
}

fn value(v: &mut Dec, attr: u32, out: &mut Decoded) -> Xdr<()> {
    let a = &mut out.attr;
    match attr {
        TYPE => a.kind = FileType::from_wire(v.u32()?),
        CHANGE => a.change = v.u64()?,
        SIZE => a.size = v.u64()?,
        FSID => a.fsid = (v.u64()?, v.u64()?),
        LEASE_TIME => out.fs.lease = v.u32()?,
        RDATTR_ERROR => out.rdattr_error = v.u32()?,
        FILEHANDLE => {
            out.fh = Some(Fh::new(v.opaque(FH_MAX)?).ok_or(XdrError::Bad("a long handle"))?)
        }
        FILEID => a.fileid = v.u64()?,
        MAXFILESIZE => out.fs.maxfilesize = v.u64()?,
        MAXREAD => out.fs.rtmax = v.u64()?.min(u32::MAX as u64) as u32,
        MAXWRITE => out.fs.wtmax = v.u64()?.min(u32::MAX as u64) as u32,
        MODE => a.mode = v.u32()?,
        NUMLINKS => a.nlink = v.u32()?,
        OWNER => a.uid = owner_id(v.opaque(1024)?, false),
        OWNER_GROUP => a.gid = owner_id(v.opaque(1024)?, true),
        SPACE_AVAIL => out.fs.avail = v.u64()?,
        SPACE_TOTAL => out.fs.total = v.u64()?,
        SPACE_USED => a.used = v.u64()?,
        TIME_ACCESS => a.atime = time(v)?,
        TIME_METADATA => a.ctime = time(v)?,
        TIME_MODIFY => a.mtime = time(v)?,
        _ => return Err(XdrError::Bad("an attribute this client did not ask for")),
    }
    Ok(())
}

/// An NFSv4 owner ("1000", or "name@domain") as a number: a number as
/// is, a name through this host's user or group database (as the kernel's
/// idmapper would), else None.
pub(crate) fn owner_id(s: &[u8], group: bool) -> Option<u32> {
    let s = std::str::from_utf8(s).ok()?;
    if let Ok(n) = s.parse::<u32>() {
        return Some(n);
    }
    let name = s.split('@').next()?;
    if name.is_empty() {
        return None;
    }
    lookup_name(name, group)
}

#[cfg(unix)]
fn lookup_name(name: &str, group: bool) -> Option<u32> {
    let c = std::ffi::CString::new(name).ok()?;
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    // SAFETY: the reentrant lookups write into the structures and buffer
    // given, whose sizes are passed; the result pointer is checked.
    unsafe {
        if group {
            let mut g: libc::group = std::mem::zeroed();
            let mut res: *mut libc::group = std::ptr::null_mut();
            let r = libc::getgrnam_r(c.as_ptr(), &mut g, buf.as_mut_ptr(), buf.len(), &mut res);
            (r == 0 && !res.is_null()).then_some(g.gr_gid)
        } else {
            let mut p: libc::passwd = std::mem::zeroed();
            let mut res: *mut libc::passwd = std::ptr::null_mut();
            let r = libc::getpwnam_r(c.as_ptr(), &mut p, buf.as_mut_ptr(), buf.len(), &mut res);
            (r == 0 && !res.is_null()).then_some(p.pw_uid)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_decode_in_bit_order() {
        let mut buf = [0u8; 512];
        let mut e = Enc::new(&mut buf);
        bitmap(&mut e, bits(&[TYPE, SIZE, FILEID, MODE, OWNER]));
        let mut vals = [0u8; 128];
        let mut v = Enc::new(&mut vals);
        v.u32(1);
        v.u64(4096);
        v.u64(77);
        v.u32(0o644);
        v.opaque(b"1234");
        let n = v.finish().unwrap();
        e.opaque(&vals[..n]);
        let len = e.finish().unwrap();
        let got = decode(&mut Dec::new(&buf[..len])).unwrap();
        assert_eq!(got.attr.kind, FileType::Regular);
        assert_eq!(got.attr.size, 4096);
        assert_eq!(got.attr.fileid, 77);
        assert_eq!(got.attr.mode, 0o644);
        assert_eq!(got.attr.uid, Some(1234));
    }

    #[test]
    fn owners_are_numbers_or_names_this_host_knows() {
        assert_eq!(owner_id(b"0", false), Some(0));
        assert_eq!(owner_id(b"root@localdomain", false), Some(0));
        assert_eq!(owner_id(b"no-such-user-here@x", false), None);
        assert_eq!(owner_id(b"", false), None);
    }

    #[test]
    fn an_attribute_not_asked_for_is_refused() {
        let mut buf = [0u8; 64];
        let mut e = Enc::new(&mut buf);
        bitmap(&mut e, bits(&[12]));
        e.opaque(&[0; 8]);
        let len = e.finish().unwrap();
        assert!(matches!(
            decode(&mut Dec::new(&buf[..len])),
            Err(XdrError::Bad(_))
        ));
    }
}
