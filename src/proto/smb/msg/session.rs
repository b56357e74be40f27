//! SESSION_SETUP (2.2.5, 2.2.6), TREE_CONNECT (2.2.9, 2.2.10) and the
//! bodies of four bytes (LOGOFF, TREE_DISCONNECT, ECHO requests).

use super::super::header::HEADER_LEN;
use super::super::wire::{Decoded, Writer};
use super::{body, part};

/// Session setup flag: bind this connection to an existing session.
pub(crate) const BINDING: u8 = 0x01;

/// Writes a SESSION_SETUP body carrying the security token `blob`.
pub(crate) fn encode_session_setup(flags: u8, security_mode: u8, blob: &[u8], out: &mut Vec<u8>) {
    let mut w = Writer::new(out);
    w.u16(25).u8(flags).u8(security_mode);
    // Capabilities: DFS only; Channel 0; the buffer right after the body.
    w.u32(0x01).u32(0);
    w.u16((HEADER_LEN + 24) as u16).u16(blob.len() as u16);
    w.u64(0).bytes(blob);
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SessionSetupResponse {
    pub(crate) session_flags: u16,
    pub(crate) blob: Vec<u8>,
}

pub(crate) fn decode_session_setup(msg: &[u8]) -> Decoded<SessionSetupResponse> {
    let mut r = body(msg, 9, "SESSION_SETUP response")?;
    let session_flags = r.u16()?;
    let off = r.u16()? as usize;
    let len = r.u16()? as usize;
    let blob = part(msg, off, len, "SESSION_SETUP security buffer")?.to_vec();
    Ok(SessionSetupResponse {
        session_flags,
        blob,
    })
}

/// Writes a TREE_CONNECT body for `\\server\share`.
pub(crate) fn encode_tree_connect(unc: &str, out: &mut Vec<u8>) {
    let mut w = Writer::new(out);
    let len = unc.encode_utf16().count() * 2;
    w.u16(9).u16(0).u16((HEADER_LEN + 8) as u16).u16(len as u16);
    w.utf16(unc);
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TreeConnectResponse {
    /// 1 disk, 2 pipe, 3 printer.
    pub(crate) share_type: u8,
    pub(crate) share_flags: u32,
    pub(crate) capabilities: u32,
    pub(crate) maximal_access: u32,
}

pub(crate) fn decode_tree_connect(msg: &[u8]) -> Decoded<TreeConnectResponse> {
    let mut r = body(msg, 16, "TREE_CONNECT response")?;
    let share_type = r.u8()?;
    r.skip(1)?;
    Ok(TreeConnectResponse {
        share_type,
        share_flags: r.u32()?,
        capabilities: r.u32()?,
        maximal_access: r.u32()?,
    })
}

/// LOGOFF, TREE_DISCONNECT and ECHO requests: StructureSize 4, reserved.
pub(crate) fn encode_empty(out: &mut Vec<u8>) {
    Writer::new(out).u16(4).u16(0);
}

#[cfg(any(test, feature = "fuzzing"))] // what the fuzz target checks; the client reads no empty body
/// Their responses: StructureSize 4.
pub(crate) fn decode_empty(msg: &[u8]) -> Decoded<()> {
    body(msg, 4, "empty response").map(|_| ())
}
