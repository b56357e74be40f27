//! Request encoders and response decoders, one file per family of commands.
//! Encoders write a command's body (after the 64-byte header) into a buffer
//! sized once per channel; decoders are pure functions over a whole
//! received message (header included, since SMB2's offsets count from the
//! header's first byte), one `decode_*` per response for the fuzz harness.

pub(crate) mod dir;
pub mod file;
pub mod info;
pub(crate) mod ioctl;
pub(crate) mod negotiate;
pub(crate) mod security;
pub(crate) mod session;

/// A 16-byte SMB2 file handle (persistent and volatile parts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct FileId(pub(crate) [u8; 16]);

impl FileId {
    /// The handle an IOCTL that names no file carries.
    pub(crate) const NONE: FileId = FileId([0xFF; 16]);
}

/// The fixed part of a response, after checking its StructureSize: the
/// cursor every decoder starts with.
pub(crate) fn body<'a>(
    msg: &'a [u8],
    size: u16,
    what: &'static str,
) -> super::wire::Decoded<super::wire::Reader<'a>> {
    use super::header::HEADER_LEN;
    let b = msg
        .get(HEADER_LEN..)
        .ok_or(super::wire::Malformed { what, at: 0 })?;
    let mut r = super::wire::Reader::new(b, what);
    let got = r.u16()?;
    // The low bit of StructureSize marks a variable part; some servers send
    // the size without it, as Windows accepts.
    r.check(got == size || got == size & !1)?;
    Ok(r)
}

/// The variable part a response points at (offset from the header), or an
/// empty slice when its length is zero.
pub(crate) fn part<'a>(
    msg: &'a [u8],
    off: usize,
    len: usize,
    what: &'static str,
) -> super::wire::Decoded<&'a [u8]> {
    if len == 0 {
        return Ok(&[]);
    }
    super::wire::slice_at(msg, off, len, what)
}
