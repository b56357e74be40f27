//! The 64-byte SMB2 header (2.2.1), the 52-byte transform header of an
//! encrypted message (2.2.41) and the 4-byte Direct TCP frame length: pure
//! encoders and decoders over byte slices.

use super::consts::flags;
use super::wire::{Decoded, Malformed, Reader};

pub(crate) const HEADER_LEN: usize = 64;
pub(crate) const TRANSFORM_LEN: usize = 52;
/// Where the signature sits in the header.
pub(crate) const SIGNATURE_AT: usize = 48;
pub(crate) const PROTOCOL_ID: [u8; 4] = [0xFE, b'S', b'M', b'B'];
pub(crate) const TRANSFORM_ID: [u8; 4] = [0xFD, b'S', b'M', b'B'];
/// Direct TCP frames carry a 3-byte length after a zero byte (2.1 of
/// [MS-SMB2]), so no frame is ever longer than this.
pub(crate) const MAX_FRAME: usize = 0x00FF_FFFF;

/// A decoded header, sync or async form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Header {
    pub(crate) credit_charge: u16,
    /// Status in a response; ChannelSequence in a request.
    pub(crate) status: u32,
    pub(crate) command: u16,
    /// CreditRequest in a request, CreditResponse in a response.
    pub(crate) credits: u16,
    pub(crate) flags: u32,
    pub(crate) next_command: u32,
    pub(crate) message_id: u64,
    /// AsyncId when `flags` has ASYNC_COMMAND.
    pub(crate) async_id: u64,
    pub(crate) tree_id: u32,
    pub(crate) session_id: u64,
    pub(crate) signature: [u8; 16],
}

impl Header {
    pub(crate) fn is_response(&self) -> bool {
        self.flags & flags::SERVER_TO_REDIR != 0
    }

    pub(crate) fn is_async(&self) -> bool {
        self.flags & flags::ASYNC_COMMAND != 0
    }

    pub(crate) fn is_signed(&self) -> bool {
        self.flags & flags::SIGNED != 0
    }

    /// Writes the header into `out[..64]`.
    pub(crate) fn encode(&self, out: &mut [u8; HEADER_LEN]) {
        out[0..4].copy_from_slice(&PROTOCOL_ID);
        out[4..6].copy_from_slice(&(HEADER_LEN as u16).to_le_bytes());
        out[6..8].copy_from_slice(&self.credit_charge.to_le_bytes());
        out[8..12].copy_from_slice(&self.status.to_le_bytes());
        out[12..14].copy_from_slice(&self.command.to_le_bytes());
        out[14..16].copy_from_slice(&self.credits.to_le_bytes());
        out[16..20].copy_from_slice(&self.flags.to_le_bytes());
        out[20..24].copy_from_slice(&self.next_command.to_le_bytes());
        out[24..32].copy_from_slice(&self.message_id.to_le_bytes());
        if self.is_async() {
            out[32..40].copy_from_slice(&self.async_id.to_le_bytes());
        } else {
            out[32..36].copy_from_slice(&0u32.to_le_bytes());
            out[36..40].copy_from_slice(&self.tree_id.to_le_bytes());
        }
        out[40..48].copy_from_slice(&self.session_id.to_le_bytes());
        out[48..64].copy_from_slice(&self.signature);
    }
}

/// Decodes a header from the first 64 bytes of `msg`: the one entry point
/// a fuzz harness calls for headers.
pub(crate) fn decode_header(msg: &[u8]) -> Decoded<Header> {
    let mut r = Reader::new(msg, "SMB2 header");
    let id: [u8; 4] = r.array()?;
    r.check(id == PROTOCOL_ID)?;
    let size = r.u16()?;
    r.check(size as usize == HEADER_LEN)?;
    let credit_charge = r.u16()?;
    let status = r.u32()?;
    let command = r.u16()?;
    let credits = r.u16()?;
    let flags = r.u32()?;
    let next_command = r.u32()?;
    let message_id = r.u64()?;
    let (async_id, tree_id) = if flags & flags::ASYNC_COMMAND != 0 {
        (r.u64()?, 0)
    } else {
        r.skip(4)?;
        (0, r.u32()?)
    };
    let session_id = r.u64()?;
    let signature = r.array()?;
    Ok(Header {
        credit_charge,
        status,
        command,
        credits,
        flags,
        next_command,
        message_id,
        async_id,
        tree_id,
        session_id,
        signature,
    })
}

/// The transform header of an encrypted message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Transform {
    pub(crate) signature: [u8; 16],
    pub(crate) nonce: [u8; 16],
    pub(crate) original_size: u32,
    /// 1 (Encrypted) in 3.1.1; the encryption algorithm (1, AES-128-CCM) in
    /// 3.0 and 3.0.2: the same value on the wire.
    pub(crate) flags: u16,
    pub(crate) session_id: u64,
}

impl Transform {
    pub(crate) fn encode(&self, out: &mut [u8; TRANSFORM_LEN]) {
        out[0..4].copy_from_slice(&TRANSFORM_ID);
        out[4..20].copy_from_slice(&self.signature);
        out[20..36].copy_from_slice(&self.nonce);
        out[36..40].copy_from_slice(&self.original_size.to_le_bytes());
        out[40..42].copy_from_slice(&0u16.to_le_bytes());
        out[42..44].copy_from_slice(&self.flags.to_le_bytes());
        out[44..52].copy_from_slice(&self.session_id.to_le_bytes());
    }
}

/// Decodes a transform header: the fuzz entry for encrypted frames.
pub(crate) fn decode_transform(msg: &[u8]) -> Decoded<Transform> {
    let mut r = Reader::new(msg, "SMB2 transform header");
    let id: [u8; 4] = r.array()?;
    r.check(id == TRANSFORM_ID)?;
    let signature = r.array()?;
    let nonce = r.array()?;
    let original_size = r.u32()?;
    r.skip(2)?;
    let flags = r.u16()?;
    let session_id = r.u64()?;
    Ok(Transform {
        signature,
        nonce,
        original_size,
        flags,
        session_id,
    })
}

/// The frame length from a Direct TCP prefix; a non-zero first byte is no
/// SMB2 frame (NetBIOS session messages other than 0x00 are not spoken).
pub(crate) fn decode_frame_len(prefix: [u8; 4]) -> Decoded<usize> {
    if prefix[0] != 0 {
        return Err(Malformed {
            what: "Direct TCP frame prefix (not a session message)",
            at: 0,
        });
    }
    Ok(u32::from_be_bytes(prefix) as usize)
}

pub(crate) fn encode_frame_len(len: usize) -> [u8; 4] {
    (len as u32 & MAX_FRAME as u32).to_be_bytes()
}

#[cfg(test)]
/// The error response body (2.2.2): its ErrorData's length, for the one
/// line a failed command prints. Checked, never trusted.
pub(crate) fn decode_error_body(body: &[u8]) -> Decoded<usize> {
    let mut r = Reader::new(body, "SMB2 ERROR response");
    let size = r.u16()?;
    r.check(size == 9)?;
    r.skip(2)?;
    let count = r.u32()? as usize;
    r.check(count <= r.remaining())?;
    Ok(count)
}
