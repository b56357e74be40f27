//! CREATE, CLOSE, FLUSH, READ and WRITE (2.2.13 to 2.2.22): the commands of
//! an open file. READ and WRITE are encoded into fixed arrays, so the I/O
//! path builds a request without touching the heap.

use super::super::header::HEADER_LEN;
use super::super::wire::{Decoded, Writer};
use super::{FileId, body};

/// What CREATE does when the name exists or not (2.2.13).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Disposition {
    /// Open an existing file; fail if it is missing.
    Open = 1,
    /// Create a new file; fail with OBJECT_NAME_COLLISION if the name exists.
    Create = 2,
}

/// A CREATE request's fields that vary.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CreateRequest<'a> {
    /// Path relative to the share root, backslash-separated, no leading one.
    pub(crate) path: &'a str,
    pub(crate) access: u32,
    pub(crate) attributes: u32,
    pub(crate) share: u32,
    pub(crate) disposition: Disposition,
    pub(crate) options: u32,
}

pub(crate) fn encode_create(req: &CreateRequest<'_>, out: &mut Vec<u8>) {
    let mut w = Writer::new(out);
    let name_len = req.path.encode_utf16().count() * 2;
    w.u16(57).u8(0).u8(0); // SecurityFlags, RequestedOplockLevel none
    w.u32(2); // ImpersonationLevel: Impersonation
    w.u64(0).u64(0); // SmbCreateFlags, Reserved
    w.u32(req.access).u32(req.attributes).u32(req.share);
    w.u32(req.disposition as u32).u32(req.options);
    w.u16((HEADER_LEN + 56) as u16).u16(name_len as u16);
    w.u32(0).u32(0); // no create contexts
    if name_len == 0 {
        // The buffer is at least one byte long (2.2.13).
        w.u8(0);
    } else {
        w.utf16(req.path);
    }
}

/// The file times and sizes CREATE and CLOSE report: the per-file proof
/// of ownership reads these (with the file id from QUERY_INFO).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FileTimes {
    /// FILETIMEs: 100 ns units since 1601-01-01 UTC.
    pub(crate) creation: u64,
    pub(crate) last_access: u64,
    pub(crate) last_write: u64,
    pub(crate) change: u64,
    pub(crate) allocation_size: u64,
    pub(crate) end_of_file: u64,
    pub(crate) attributes: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CreateResponse {
    /// 0 superseded, 1 opened, 2 created, 3 overwritten.
    pub action: u32,
    pub(crate) times: FileTimes,
    pub file_id: FileId,
}

/// CreateAction: the file was created by this request.
pub const FILE_CREATED: u32 = 2;

pub(crate) fn decode_create(msg: &[u8]) -> Decoded<CreateResponse> {
    let mut r = body(msg, 89, "CREATE response")?;
    r.skip(2)?; // OplockLevel, Flags
    let action = r.u32()?;
    let creation = r.u64()?;
    let last_access = r.u64()?;
    let last_write = r.u64()?;
    let change = r.u64()?;
    let allocation_size = r.u64()?;
    let end_of_file = r.u64()?;
    let attributes = r.u32()?;
    r.skip(4)?;
    let file_id = FileId(r.array()?);
    Ok(CreateResponse {
        action,
        times: FileTimes {
            creation,
            last_access,
            last_write,
            change,
            allocation_size,
            end_of_file,
            attributes,
        },
        file_id,
    })
}

/// CLOSE with POSTQUERY_ATTRIB: the server reports the final times.
pub(crate) fn encode_close(file: FileId, out: &mut Vec<u8>) {
    Writer::new(out).u16(24).u16(1).u32(0).bytes(&file.0);
}

pub(crate) fn decode_close(msg: &[u8]) -> Decoded<FileTimes> {
    let mut r = body(msg, 60, "CLOSE response")?;
    r.skip(6)?;
    Ok(FileTimes {
        creation: r.u64()?,
        last_access: r.u64()?,
        last_write: r.u64()?,
        change: r.u64()?,
        allocation_size: r.u64()?,
        end_of_file: r.u64()?,
        attributes: r.u32()?,
    })
}

pub(crate) fn encode_flush(file: FileId, out: &mut Vec<u8>) {
    Writer::new(out).u16(24).u16(0).u32(0).bytes(&file.0);
}

pub(crate) const READ_LEN: usize = 49;
/// Where a READ response's data starts when the server packs it (header +
/// the 16 fixed bytes); the offset asked of the server in the request.
pub(crate) const READ_DATA_AT: u8 = (HEADER_LEN + 16) as u8;

/// A READ body in a fixed array (48 bytes plus the one-byte buffer).
pub(crate) fn encode_read(file: FileId, offset: u64, len: u32, out: &mut [u8; READ_LEN]) {
    out[0..2].copy_from_slice(&49u16.to_le_bytes());
    out[2] = READ_DATA_AT; // Padding: where we want the data
    out[3] = 0; // Flags
    out[4..8].copy_from_slice(&len.to_le_bytes());
    out[8..16].copy_from_slice(&offset.to_le_bytes());
    out[16..32].copy_from_slice(&file.0);
    out[32..36].copy_from_slice(&0u32.to_le_bytes()); // MinimumCount
    out[36..40].copy_from_slice(&0u32.to_le_bytes()); // Channel
    out[40..44].copy_from_slice(&0u32.to_le_bytes()); // RemainingBytes
    out[44..48].copy_from_slice(&0u32.to_le_bytes()); // ReadChannelInfo
    out[48] = 0;
}

/// The fixed part of a READ response: where the data starts (from the
/// header) and how long it is. The data itself goes straight into the
/// caller's buffer, so only these 16 bytes are decoded here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReadResponse {
    pub(crate) data_offset: usize,
    pub(crate) data_len: usize,
}

/// Decodes the 16 bytes after the header (`fixed`), not the data.
pub(crate) fn decode_read_fixed(fixed: &[u8]) -> Decoded<ReadResponse> {
    let mut r = super::super::wire::Reader::new(fixed, "READ response");
    let size = r.u16()?;
    r.check(size == 17 || size == 16)?;
    let data_offset = r.u8()? as usize;
    r.skip(1)?;
    let data_len = r.u32()? as usize;
    // The data cannot start inside the header or the fixed part.
    r.check(data_len == 0 || data_offset >= HEADER_LEN + 16)?;
    Ok(ReadResponse {
        data_offset,
        data_len,
    })
}

pub(crate) const WRITE_LEN: usize = 48;
/// The data follows the WRITE body directly.
pub(crate) const WRITE_DATA_AT: usize = HEADER_LEN + WRITE_LEN;
pub(crate) const WRITE_THROUGH: u32 = 1;

pub(crate) fn encode_write(
    file: FileId,
    offset: u64,
    len: u32,
    flags: u32,
    out: &mut [u8; WRITE_LEN],
) {
    out[0..2].copy_from_slice(&49u16.to_le_bytes());
    out[2..4].copy_from_slice(&(WRITE_DATA_AT as u16).to_le_bytes());
    out[4..8].copy_from_slice(&len.to_le_bytes());
    out[8..16].copy_from_slice(&offset.to_le_bytes());
    out[16..32].copy_from_slice(&file.0);
    out[32..44].copy_from_slice(&[0u8; 12]); // Channel, Remaining, WriteChannelInfo
    out[44..48].copy_from_slice(&flags.to_le_bytes());
}

/// The count of bytes written.
pub(crate) fn decode_write(msg: &[u8]) -> Decoded<u32> {
    let mut r = body(msg, 17, "WRITE response")?;
    r.skip(2)?;
    r.u32()
}
