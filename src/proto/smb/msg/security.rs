//! A file's owner as the server names it: QUERY_INFO of the security
//! information (2.2.37, InfoType SECURITY, OWNER_SECURITY_INFORMATION) and
//! the owner SID of the self-relative SECURITY_DESCRIPTOR it returns
//! ([MS-DTYP] 2.4.6, 2.4.2). SMB's file attributes carry no owner; the
//! descriptor is where a server says whose a file is, which a tree's
//! per-file proof needs (NFS reads the uid).
// The SMB client runs on Unix only (the Windows build has the kernel's).
#![cfg_attr(not(unix), allow(dead_code))]

use std::fmt;

use super::super::wire::{Decoded, Malformed, Reader, slice_at};

pub(crate) const INFO_SECURITY: u8 = 3;
pub(crate) const OWNER_SECURITY_INFORMATION: u32 = 0x0000_0001;

/// The most sub-authorities a SID has ([MS-DTYP] 2.4.2).
pub(crate) const MAX_SUB_AUTHORITIES: usize = 15;
/// SE_SELF_RELATIVE: offsets, not pointers, as on the wire.
const SELF_RELATIVE: u16 = 0x8000;
/// The descriptor's fixed part: revision, Sbz1, control, four offsets.
const DESCRIPTOR_LEN: usize = 20;
/// The most an owner-only descriptor needs: its fixed part and the
/// largest SID; what a QUERY_INFO asks the server for.
pub(crate) const OWNER_REPLY_MAX: u32 = (DESCRIPTOR_LEN + 8 + 4 * MAX_SUB_AUTHORITIES) as u32;

/// A security identifier, fixed in size (no allocation to compare one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Sid {
    authority: [u8; 6],
    count: u8,
    subs: [u32; MAX_SUB_AUTHORITIES],
}

impl fmt::Display for Sid {
    /// S-1-AUTHORITY-SUB-SUB..., as Windows writes one.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut a = [0u8; 8];
        a[2..].copy_from_slice(&self.authority);
        write!(f, "S-1-{}", u64::from_be_bytes(a))?;
        for s in &self.subs[..usize::from(self.count)] {
            write!(f, "-{s}")?;
        }
        Ok(())
    }
}

/// The SID at the start of `buf`.
pub(crate) fn decode_sid(buf: &[u8]) -> Decoded<Sid> {
    let mut r = Reader::new(buf, "SID");
    let revision = r.u8()?;
    let count = r.u8()?;
    r.check(revision == 1 && usize::from(count) <= MAX_SUB_AUTHORITIES)?;
    let authority = r.array()?;
    let mut subs = [0u32; MAX_SUB_AUTHORITIES];
    for s in subs.iter_mut().take(usize::from(count)) {
        *s = r.u32()?;
    }
    Ok(Sid {
        authority,
        count,
        subs,
    })
}

/// The owner a self-relative security descriptor names; None when it
/// names none (OffsetOwner 0). The offset must point past the fixed part
/// and the SID lie inside `buf`: a hostile reply cannot make this read
/// outside it or allocate.
pub(crate) fn decode_owner(buf: &[u8]) -> Decoded<Option<Sid>> {
    let mut r = Reader::new(buf, "security descriptor");
    let revision = r.u8()?;
    r.skip(1)?; // Sbz1
    let control = r.u16()?;
    let owner = r.u32()? as usize;
    r.skip(12)?; // OffsetGroup, OffsetSacl, OffsetDacl
    r.check(revision == 1 && control & SELF_RELATIVE != 0)?;
    if owner == 0 {
        return Ok(None);
    }
    if owner < DESCRIPTOR_LEN {
        return Err(Malformed {
            what: "security descriptor owner offset",
            at: owner,
        });
    }
    // The SID's own length is in its second byte; the rest is checked there.
    let head = slice_at(buf, owner, 8, "owner SID")?;
    let len = 8 + 4 * usize::from(head[1]);
    decode_sid(slice_at(buf, owner, len, "owner SID")?).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A self-relative descriptor with `sid` as its owner at `at`.
    fn descriptor(sid: &[u8], at: u32) -> Vec<u8> {
        let mut d = vec![1, 0];
        d.extend_from_slice(&(SELF_RELATIVE | 0x0004).to_le_bytes());
        d.extend_from_slice(&at.to_le_bytes());
        d.extend_from_slice(&[0u8; 12]);
        d.resize((at as usize).max(DESCRIPTOR_LEN), 0);
        d.extend_from_slice(sid);
        d
    }

    fn sid_bytes(auth: u8, subs: &[u32]) -> Vec<u8> {
        let mut s = vec![1, subs.len() as u8, 0, 0, 0, 0, 0, auth];
        for x in subs {
            s.extend_from_slice(&x.to_le_bytes());
        }
        s
    }

    #[test]
    fn the_owner_is_read_where_the_descriptor_points() {
        // Samba's owner of a file a Unix user 0 made: S-1-22-1-0.
        let d = descriptor(&sid_bytes(22, &[1, 0]), 20);
        let owner = decode_owner(&d).unwrap().unwrap();
        assert_eq!(owner.to_string(), "S-1-22-1-0");
        // A domain user's, further in (after a group the reply also carried).
        let d = descriptor(&sid_bytes(5, &[21, 1, 2, 3, 1000]), 48);
        let other = decode_owner(&d).unwrap().unwrap();
        assert_eq!(other.to_string(), "S-1-5-21-1-2-3-1000");
        assert_ne!(owner, other);
        // Descriptors that name no owner say so.
        let none = descriptor(&[], 0);
        assert_eq!(decode_owner(&none).unwrap(), None);
    }

    #[test]
    fn a_hostile_descriptor_is_refused_never_read_past() {
        let good = descriptor(&sid_bytes(22, &[1, 0]), 20);
        // Every cut short of the whole.
        for n in 0..good.len() {
            assert!(decode_owner(&good[..n]).is_err(), "cut at {n}");
        }
        // An owner inside the fixed part, or past the end.
        let mut inside = good.clone();
        inside[4..8].copy_from_slice(&4u32.to_le_bytes());
        assert!(decode_owner(&inside).is_err());
        let mut past = good.clone();
        past[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(decode_owner(&past).is_err());
        // More sub-authorities than a SID can have, or than are there.
        let mut many = good.clone();
        many[21] = 16;
        assert!(decode_owner(&many).is_err());
        let mut short = good.clone();
        short[21] = 3;
        assert!(decode_owner(&short).is_err());
        // Not self-relative, or another revision.
        let mut absolute = good.clone();
        absolute[3] = 0;
        assert!(decode_owner(&absolute).is_err());
        let mut rev = good;
        rev[20] = 2;
        assert!(decode_owner(&rev).is_err());
    }

    #[test]
    fn the_largest_sid_fits_the_reply_asked_for() {
        let subs = [7u32; MAX_SUB_AUTHORITIES];
        let d = descriptor(&sid_bytes(5, &subs), 20);
        assert_eq!(d.len() as u32, OWNER_REPLY_MAX);
        let s = decode_owner(&d).unwrap().unwrap();
        assert!(s.to_string().ends_with(&"-7".repeat(MAX_SUB_AUTHORITIES)));
    }
}
