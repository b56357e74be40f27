//! QUERY_DIRECTORY (2.2.33, 2.2.34) and its entries in the
//! FileIdFullDirectoryInformation class ([MS-FSCC] 2.4.18): a listing is
//! read in bounded pieces, each piece decoded by a pure function.

use super::super::header::HEADER_LEN;
use super::super::wire::{Decoded, Reader, Writer, slice_at, utf16_string};
use super::{FileId, body, part};

pub(crate) const FILE_ID_FULL_DIRECTORY_INFORMATION: u8 = 38;
pub(crate) const RESTART_SCANS: u8 = 0x01;

pub(crate) fn encode_query_directory(
    file: FileId,
    flags: u8,
    pattern: &str,
    max_out: u32,
    out: &mut Vec<u8>,
) {
    let mut w = Writer::new(out);
    let len = pattern.encode_utf16().count() * 2;
    w.u16(33)
        .u8(FILE_ID_FULL_DIRECTORY_INFORMATION)
        .u8(flags)
        .u32(0);
    w.bytes(&file.0);
    w.u16((HEADER_LEN + 32) as u16).u16(len as u16).u32(max_out);
    w.utf16(pattern);
}

pub(crate) fn decode_query_directory(msg: &[u8]) -> Decoded<&[u8]> {
    let mut r = body(msg, 9, "QUERY_DIRECTORY response")?;
    let off = r.u16()? as usize;
    let len = r.u32()? as usize;
    part(msg, off, len, "QUERY_DIRECTORY output buffer")
}

/// One directory entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    pub name: String,
    pub(crate) creation: u64,
    pub(crate) last_write: u64,
    pub(crate) change: u64,
    pub end_of_file: u64,
    pub(crate) attributes: u32,
    pub(crate) file_id: u64,
}

/// One entry as it sits in the reply: its name still UTF-16LE, nothing
/// allocated (a metadata run's readdir reads thousands of them).
#[derive(Debug, Clone, Copy)]
pub(crate) struct EntryRef<'a> {
    pub(crate) name: &'a [u8],
    pub(crate) creation: u64,
    pub(crate) last_write: u64,
    pub(crate) change: u64,
    pub(crate) end_of_file: u64,
    pub(crate) attributes: u32,
    pub(crate) file_id: u64,
}

impl EntryRef<'_> {
    /// "." or "..", which every listing leaves out.
    pub(crate) fn is_dot(&self) -> bool {
        matches!(self.name, [b'.', 0] | [b'.', 0, b'.', 0])
    }

    pub(crate) fn owned(&self) -> DirEntry {
        DirEntry {
            name: utf16_string(self.name),
            creation: self.creation,
            last_write: self.last_write,
            change: self.change,
            end_of_file: self.end_of_file,
            attributes: self.attributes,
            file_id: self.file_id,
        }
    }
}

/// Every entry of one QUERY_DIRECTORY output buffer, collected: what the
/// tests and the fuzzer check (the client reads entries in place,
/// `each_entry`).
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn decode_entries(buf: &[u8]) -> Decoded<Vec<DirEntry>> {
    let mut out = Vec::new();
    each_entry(buf, |e| out.push(e.owned()))?;
    Ok(out)
}

/// Each entry of one QUERY_DIRECTORY output buffer to `each`, in order;
/// how many. Entries chain by NextEntryOffset, which must move forward
/// and stay inside the buffer, so a hostile server cannot make this loop
/// forever or read past the end; an empty buffer holds none. Whatever
/// precedes a malformed entry has been handed on already.
pub(crate) fn each_entry(buf: &[u8], mut each: impl FnMut(EntryRef<'_>)) -> Decoded<usize> {
    if buf.is_empty() {
        return Ok(0);
    }
    let mut n = 0usize;
    let mut off = 0usize;
    loop {
        let fixed = slice_at(buf, off, 80, "directory entry")?;
        let mut r = Reader::new(fixed, "directory entry");
        let next = r.u32()? as usize;
        r.skip(4)?; // FileIndex
        let creation = r.u64()?;
        let _access = r.u64()?;
        let last_write = r.u64()?;
        let change = r.u64()?;
        let end_of_file = r.u64()?;
        r.skip(8)?; // AllocationSize
        let attributes = r.u32()?;
        let name_len = r.u32()? as usize;
        r.skip(8)?; // EaSize, Reserved
        let file_id = r.u64()?;
        let name = slice_at(buf, off + 80, name_len, "directory entry name")?;
        each(EntryRef {
            name,
            creation,
            last_write,
            change,
            end_of_file,
            attributes,
            file_id,
        });
        n += 1;
        if next == 0 {
            return Ok(n);
        }
        r.check(next >= 80)?;
        off = off.checked_add(next).filter(|&o| o < buf.len()).ok_or(
            super::super::wire::Malformed {
                what: "directory entry chain",
                at: off,
            },
        )?;
    }
}
