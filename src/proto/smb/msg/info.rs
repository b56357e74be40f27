//! QUERY_INFO and SET_INFO (2.2.37 to 2.2.40) and the information classes
//! this client reads and sets ([MS-FSCC] 2.4, 2.5): a file's id, times,
//! attributes, link count and size; a volume's size; end of file, rename
//! (never replacing), the delete disposition and the access and write
//! times. (The owner is `security.rs`'s.)

use super::super::header::HEADER_LEN;
use super::super::wire::{Decoded, Reader, Writer, utf16_bytes};
use super::{FileId, body, part};

pub(crate) const INFO_FILE: u8 = 1;
pub(crate) const INFO_FILESYSTEM: u8 = 2;

pub(crate) const FILE_BASIC_INFORMATION: u8 = 4;
pub(crate) const FILE_ALL_INFORMATION: u8 = 18;
pub(crate) const FILE_END_OF_FILE_INFORMATION: u8 = 20;
pub(crate) const FILE_RENAME_INFORMATION: u8 = 10;
pub(crate) const FILE_DISPOSITION_INFORMATION: u8 = 13;
pub(crate) const FS_FULL_SIZE_INFORMATION: u8 = 7;

/// `additional` is the security information asked for (0 for the other
/// information types).
pub(crate) fn encode_query_info(
    info_type: u8,
    class: u8,
    max_out: u32,
    additional: u32,
    file: FileId,
    out: &mut Vec<u8>,
) {
    let mut w = Writer::new(out);
    w.u16(41).u8(info_type).u8(class).u32(max_out);
    w.u16(0).u16(0).u32(0); // no input buffer
    w.u32(additional).u32(0); // AdditionalInformation, Flags
    w.bytes(&file.0);
    w.u8(0); // the one-byte buffer
}

/// The output buffer a QUERY_INFO response carries.
pub(crate) fn decode_query_info(msg: &[u8]) -> Decoded<&[u8]> {
    let mut r = body(msg, 9, "QUERY_INFO response")?;
    let off = r.u16()? as usize;
    let len = r.u32()? as usize;
    part(msg, off, len, "QUERY_INFO output buffer")
}

/// What FileAllInformation says of a file: the attributes a per-file proof
/// of ownership compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FileInfo {
    pub(crate) creation: u64,
    pub(crate) last_access: u64,
    pub(crate) last_write: u64,
    pub(crate) change: u64,
    pub(crate) attributes: u32,
    pub(crate) allocation_size: u64,
    pub end_of_file: u64,
    pub links: u32,
    pub(crate) delete_pending: bool,
    pub directory: bool,
    /// The server's file id (FileInternalInformation: the inode on Samba).
    pub file_id: u64,
}

/// Decodes FileAllInformation (MS-FSCC 2.4.2); the name that ends it is
/// not needed and not read.
pub(crate) fn decode_file_all(buf: &[u8]) -> Decoded<FileInfo> {
    let mut r = Reader::new(buf, "FileAllInformation");
    let creation = r.u64()?;
    let last_access = r.u64()?;
    let last_write = r.u64()?;
    let change = r.u64()?;
    let attributes = r.u32()?;
    r.skip(4)?;
    let allocation_size = r.u64()?;
    let end_of_file = r.u64()?;
    let links = r.u32()?;
    let delete_pending = r.u8()? != 0;
    let directory = r.u8()? != 0;
    r.skip(2)?;
    let file_id = r.u64()?;
    Ok(FileInfo {
        creation,
        last_access,
        last_write,
        change,
        attributes,
        allocation_size,
        end_of_file,
        links,
        delete_pending,
        directory,
        file_id,
    })
}

/// A volume's size (FileFsFullSizeInformation, MS-FSCC 2.5.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FsSize {
    pub(crate) total_bytes: u64,
    pub(crate) caller_free_bytes: u64,
    pub(crate) free_bytes: u64,
}

pub(crate) fn decode_fs_full_size(buf: &[u8]) -> Decoded<FsSize> {
    let mut r = Reader::new(buf, "FileFsFullSizeInformation");
    let total = r.u64()?;
    let caller = r.u64()?;
    let actual = r.u64()?;
    let sectors = r.u32()? as u64;
    let bytes = r.u32()? as u64;
    let unit = sectors.saturating_mul(bytes);
    Ok(FsSize {
        total_bytes: total.saturating_mul(unit),
        caller_free_bytes: caller.saturating_mul(unit),
        free_bytes: actual.saturating_mul(unit),
    })
}

/// What SET_INFO changes.
#[derive(Debug, Clone, Copy)]
pub enum SetInfo<'a> {
    EndOfFile(u64),
    /// A new path from the share root; ReplaceIfExists is always 0, so a
    /// rename never replaces what sits at the new name.
    Rename(&'a str),
    /// Delete on close (FileDispositionInformation).
    DeleteOnClose,
    /// The last access and last write times (FILETIMEs), as utimensat
    /// sets them; the creation time, the change time and the attributes
    /// are sent as 0, which leaves them as they are, so the birth time a
    /// proof reads never moves.
    Times {
        access: u64,
        write: u64,
    },
}

pub(crate) fn encode_set_info(info: SetInfo<'_>, file: FileId, out: &mut Vec<u8>) {
    let mut w = Writer::new(out);
    let (class, data): (u8, Vec<u8>) = match info {
        SetInfo::EndOfFile(len) => (FILE_END_OF_FILE_INFORMATION, len.to_le_bytes().to_vec()),
        SetInfo::Rename(path) => {
            let name = utf16_bytes(path);
            let mut d = Vec::with_capacity(20 + name.len());
            let mut dw = Writer::new(&mut d);
            dw.u8(0).zeros(7); // ReplaceIfExists = 0, Reserved
            dw.u64(0); // RootDirectory
            dw.u32(name.len() as u32).bytes(&name);
            (FILE_RENAME_INFORMATION, d)
        }
        SetInfo::DeleteOnClose => (FILE_DISPOSITION_INFORMATION, vec![1]),
        SetInfo::Times { access, write } => {
            let mut d = Vec::with_capacity(40);
            let mut dw = Writer::new(&mut d);
            dw.u64(0).u64(access).u64(write).u64(0); // creation, access, write, change
            dw.u32(0).u32(0); // FileAttributes (unchanged), Reserved
            (FILE_BASIC_INFORMATION, d)
        }
    };
    w.u16(33).u8(INFO_FILE).u8(class);
    w.u32(data.len() as u32)
        .u16((HEADER_LEN + 32) as u16)
        .u16(0);
    w.u32(0).bytes(&file.0).bytes(&data);
}

#[cfg(any(test, feature = "fuzzing"))] // what the fuzz target checks; the client reads no SET_INFO body
pub(crate) fn decode_set_info(msg: &[u8]) -> Decoded<()> {
    body(msg, 2, "SET_INFO response").map(|_| ())
}
