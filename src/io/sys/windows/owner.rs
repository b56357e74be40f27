//! Windows' uid: a digest of a SID. A file's `st_uid` is its owner SID's,
//! and the running "euid" is the process token's default owner SID's (the
//! owner every object it creates gets: the user, or the Administrators
//! group for an elevated administrator), so `gate::owner`'s rule "owned by
//! the running uid" reads on Windows as "owned by whom this process makes
//! owner". 32 bits of xxh3 keep the field's type; a collision needs a
//! second SID agreeing in 32 bits, and the other checks (one link, the
//! set's volume, born after the marker) still stand.

use std::ffi::c_void;

use windows_sys::Win32::Foundation::{CloseHandle, HANDLE};
use windows_sys::Win32::Security::{
    GetKernelObjectSecurity, GetLengthSid, GetSecurityDescriptorOwner, GetTokenInformation,
    IsValidSid, PSID, TOKEN_INFORMATION_CLASS, TOKEN_OWNER, TOKEN_QUERY, TOKEN_USER, TokenOwner,
    TokenUser,
};
use windows_sys::Win32::System::Threading::{GetCurrentProcess, OpenProcessToken};

use super::fd::{AsRawFd, BorrowedFd};

/// The uid of a file whose owner cannot be read: never the running one.
const UNKNOWN: u32 = u32::MAX;
const OWNER_SECURITY_INFORMATION: u32 = 1;

fn digest(sid: PSID) -> u32 {
    // SAFETY: `sid` points into a live security record (the callers').
    unsafe {
        if IsValidSid(sid) == 0 {
            return UNKNOWN;
        }
        let len = GetLengthSid(sid) as usize;
        let bytes = std::slice::from_raw_parts(sid.cast::<u8>(), len);
        // Never UNKNOWN itself.
        (xxhash_rust::xxh3::xxh3_64(bytes) as u32).min(UNKNOWN - 1)
    }
}

/// The digest of the owner SID of what `fd` is open on (the handle needs
/// READ_CONTROL, which every open of `file.rs` asks for).
pub(super) fn uid_of(fd: BorrowedFd<'_>) -> u32 {
    let mut buf = vec![0u64; 64];
    for _ in 0..2 {
        let mut need = 0u32;
        // SAFETY: `buf` is writable for the length passed.
        let ok = unsafe {
            GetKernelObjectSecurity(
                fd.as_raw_fd(),
                OWNER_SECURITY_INFORMATION,
                buf.as_mut_ptr().cast::<c_void>(),
                (buf.len() * 8) as u32,
                &mut need,
            )
        };
        if ok == 0 {
            if (need as usize) > buf.len() * 8 {
                buf = vec![0u64; (need as usize).div_ceil(8)];
                continue;
            }
            return UNKNOWN;
        }
        let mut owner: PSID = std::ptr::null_mut();
        let mut defaulted = 0;
        // SAFETY: `buf` holds the security descriptor just read.
        let ok = unsafe {
            GetSecurityDescriptorOwner(buf.as_mut_ptr().cast(), &mut owner, &mut defaulted)
        };
        if ok == 0 || owner.is_null() {
            return UNKNOWN;
        }
        return as_running(digest(owner));
    }
    UNKNOWN
}

/// The digest of the SID that owns what this process creates.
pub(super) fn euid() -> u32 {
    token_sid(TokenOwner)
}

/// A file owned by this process's user counts as owned by its default
/// owner: an elevated administrator's files are owned by Administrators,
/// but files a file system reports without a stored owner (Wine's, for
/// one: it derives the owner from the Unix file's) carry the user's SID.
/// Either way it is the running account's.
fn as_running(uid: u32) -> u32 {
    if uid != UNKNOWN && uid == token_sid(TokenUser) {
        euid()
    } else {
        uid
    }
}

/// The digest of this process token's TokenOwner or TokenUser SID.
fn token_sid(class: TOKEN_INFORMATION_CLASS) -> u32 {
    let mut token: HANDLE = std::ptr::null_mut();
    // SAFETY: opens this process's token for reading; closed below.
    if unsafe { OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut token) } == 0 {
        return UNKNOWN - 1;
    }
    let mut buf = vec![0u64; 32];
    let mut need = 0u32;
    // SAFETY: `buf` is writable for the length passed.
    let ok = unsafe {
        GetTokenInformation(
            token,
            class,
            buf.as_mut_ptr().cast(),
            (buf.len() * 8) as u32,
            &mut need,
        )
    };
    let uid = if ok == 0 {
        UNKNOWN - 1
    } else if class == TokenUser {
        // SAFETY: the call wrote a TOKEN_USER, whose SID lies in `buf`.
        digest(unsafe { (*buf.as_ptr().cast::<TOKEN_USER>()).User.Sid })
    } else {
        // SAFETY: the call wrote a TOKEN_OWNER, whose SID lies in `buf`.
        digest(unsafe { (*buf.as_ptr().cast::<TOKEN_OWNER>()).Owner })
    };
    // SAFETY: `token` is ours to close.
    unsafe { CloseHandle(token) };
    uid
}
