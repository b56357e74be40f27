//! Windows: the SMB client's own figures for the target's share, from the
//! "SMB Client Shares" performance counters (the ones Perfmon and
//! `Get-Counter` show): the requests and the bytes read and written, as
//! /proc/fs/cifs/Stats gives them on Linux (`smb.rs`), so the rates, the
//! report's rows and the diagnosis are the same.
//!
//! Read through PDH with a wildcard instance (`(*)`): the share's instance
//! appears only once the client has a session to it, and its name's form
//! (one or two leading backslashes, the case the client connected with)
//! is matched by `smb::same_share`. The raw values are read, not PDH's
//! formatted rates: these counters are cumulative counts (bulk counts and
//! counters), which the sampler's two samples turn into rates as on Linux.
//!
//! The channels of a multichannel session (`Get-SmbMultichannelConnection`)
//! live in WMI, not in these counters, and are not read. Wine has no such
//! counter set: there the query fails and the reason is named in the run's
//! `unavailable` list.

use windows_sys::Win32::NetworkManagement::WNet::WNetGetConnectionW;
use windows_sys::Win32::System::Performance::{
    PDH_CSTATUS_NEW_DATA, PDH_CSTATUS_VALID_DATA, PDH_MORE_DATA, PDH_RAW_COUNTER_ITEM_W,
    PdhAddEnglishCounterW, PdhCloseQuery, PdhCollectQueryData, PdhGetRawCounterArrayW,
    PdhOpenQueryW,
};

use super::smb::{self, ShareStat};

/// The counters read, in `ShareStat`'s order: requests, bytes read,
/// bytes written.
const COUNTERS: [&str; 3] = [
    r"\SMB Client Shares(*)\Data Requests/sec",
    r"\SMB Client Shares(*)\Read Bytes/sec",
    r"\SMB Client Shares(*)\Write Bytes/sec",
];

/// More instances than a client has shares open: a reply claiming more is
/// not believed (the buffer would be sized from it).
const MAX_BUFFER: u32 = 16 << 20;

/// An open PDH query on the share's counters.
pub(crate) struct ShareCounters {
    pub(crate) share: String,
    query: isize,
    counters: [isize; 3],
}

// SAFETY: PDH query and counter handles may be used from any thread; the
// sampler uses them from the collector thread only, one call at a time.
unsafe impl Send for ShareCounters {}

impl Drop for ShareCounters {
    fn drop(&mut self) {
        // SAFETY: the query was opened by `open` and is closed once; closing
        // it frees its counters.
        unsafe {
            PdhCloseQuery(self.query);
        }
    }
}

/// The share the target is on: a UNC path's, or the one a drive letter is
/// mapped to. None for a local path.
pub(crate) fn share_of(target: &str) -> Option<String> {
    if let Some(s) = smb::unc_share(target) {
        return Some(s);
    }
    let letter = target.get(..2).filter(|d| d.ends_with(':'))?;
    let local = wide(letter);
    let mut buf = vec![0u16; 1024];
    let mut len = buf.len() as u32;
    // SAFETY: a NUL-terminated name and a buffer of `len` UTF-16 units.
    let r = unsafe { WNetGetConnectionW(local.as_ptr(), buf.as_mut_ptr(), &mut len) };
    if r != 0 {
        // Not a network drive (or its connection is unknown): local.
        return None;
    }
    let end = buf.iter().position(|&c| c == 0).unwrap_or(buf.len());
    smb::unc_share(&String::from_utf16_lossy(&buf[..end]))
}

impl ShareCounters {
    /// A query on `share`'s counters, or why none can be read here.
    pub(crate) fn open(share: &str) -> Result<Self, String> {
        let mut query = 0isize;
        // SAFETY: no data source (the live counters), an out-pointer of ours.
        let status = unsafe { PdhOpenQueryW(std::ptr::null(), 0, &mut query) };
        if status != 0 {
            return Err(format!("PdhOpenQueryW failed (PDH status {status:#x})"));
        }
        let mut me = Self {
            share: share.to_string(),
            query,
            counters: [0; 3],
        };
        for (i, path) in COUNTERS.iter().enumerate() {
            let wpath = wide(path);
            // SAFETY: an open query, a NUL-terminated path, an out-pointer.
            let status =
                unsafe { PdhAddEnglishCounterW(me.query, wpath.as_ptr(), 0, &mut me.counters[i]) };
            if status != 0 {
                return Err(format!(
                    "the \"SMB Client Shares\" counters are not on this system \
                     (PdhAddEnglishCounterW {path}: PDH status {status:#x})"
                ));
            }
        }
        Ok(me)
    }

    /// The share's cumulative counts now; None when the client has no
    /// session to it at this moment (no instance) or a read failed.
    pub(crate) fn sample(&self) -> Option<ShareStat> {
        // SAFETY: an open query.
        if unsafe { PdhCollectQueryData(self.query) } != 0 {
            return None;
        }
        let mut v = [0u64; 3];
        for (i, &c) in self.counters.iter().enumerate() {
            v[i] = self.raw(c)?;
        }
        Some(ShareStat {
            smbs: v[0],
            bytes_read: v[1],
            bytes_written: v[2],
        })
    }

    /// Counter `c`'s raw first value for the share's instance.
    fn raw(&self, c: isize) -> Option<u64> {
        let mut bytes = 0u32;
        let mut count = 0u32;
        // SAFETY: asking for the size only (no buffer).
        let status =
            unsafe { PdhGetRawCounterArrayW(c, &mut bytes, &mut count, std::ptr::null_mut()) };
        if status != PDH_MORE_DATA || bytes == 0 || bytes > MAX_BUFFER {
            return None;
        }
        // u64 units: the items' alignment (they hold i64 values).
        let mut buf = vec![0u64; (bytes as usize).div_ceil(8)];
        let mut status = PDH_MORE_DATA;
        for _ in 0..2 {
            // SAFETY: a buffer of at least `bytes` bytes, aligned for the items.
            status = unsafe {
                PdhGetRawCounterArrayW(c, &mut bytes, &mut count, buf.as_mut_ptr().cast())
            };
            if status != PDH_MORE_DATA {
                break;
            }
            // An instance appeared between the two calls: once more, larger.
            if bytes > MAX_BUFFER {
                return None;
            }
            buf.resize((bytes as usize).div_ceil(8), 0);
        }
        if status != 0 {
            return None;
        }
        let item = std::mem::size_of::<PDH_RAW_COUNTER_ITEM_W>();
        let n = (count as usize).min(buf.len() * 8 / item);
        let items = buf.as_ptr().cast::<PDH_RAW_COUNTER_ITEM_W>();
        (0..n).find_map(|i| {
            // SAFETY: `n` items lie in the buffer PDH filled (bounded by its
            // length above); each name points to a NUL-terminated string
            // inside the same buffer.
            let it = unsafe { *items.add(i) };
            let ok = matches!(
                it.RawValue.CStatus,
                PDH_CSTATUS_VALID_DATA | PDH_CSTATUS_NEW_DATA
            );
            // SAFETY: PDH's item names are NUL-terminated (above).
            let name = unsafe { wide_str(it.szName) }?;
            (ok && smb::same_share(&name, &self.share))
                .then_some(it.RawValue.FirstValue.max(0) as u64)
        })
    }
}

/// `s` as a NUL-terminated UTF-16 string for a W call.
fn wide(s: &str) -> Vec<u16> {
    s.encode_utf16().chain(std::iter::once(0)).collect()
}

/// A NUL-terminated UTF-16 string, at most 1,024 units (a share's
/// instance name is far shorter).
///
/// # Safety
/// `p` is null or points to a NUL-terminated string.
unsafe fn wide_str(p: *const u16) -> Option<String> {
    if p.is_null() {
        return None;
    }
    let mut len = 0;
    // SAFETY: the caller's: terminated, so each unit up to the NUL is readable.
    while len < 1024 && unsafe { *p.add(len) } != 0 {
        len += 1;
    }
    // SAFETY: `len` units were read above.
    Some(String::from_utf16_lossy(unsafe {
        std::slice::from_raw_parts(p, len)
    }))
}
