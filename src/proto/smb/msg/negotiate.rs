//! NEGOTIATE (2.2.3, 2.2.4) and its 3.1.1 negotiate contexts: preauth
//! integrity (SHA-512 with a salt), encryption ciphers, signing algorithms.

use super::super::consts::{Cipher, Dialect, SigningAlgo};
use super::super::wire::{Decoded, Reader, Writer};
use super::{body, part};

const PREAUTH_CONTEXT: u16 = 1;
const ENCRYPTION_CONTEXT: u16 = 2;
const NETNAME_CONTEXT: u16 = 5;
const SIGNING_CONTEXT: u16 = 8;
pub(crate) const SHA512: u16 = 1;

/// What the client offers.
#[derive(Debug, Clone)]
pub(crate) struct NegotiateRequest<'a> {
    pub(crate) dialects: &'a [Dialect],
    pub(crate) security_mode: u16,
    pub(crate) capabilities: u32,
    pub(crate) client_guid: [u8; 16],
    pub(crate) salt: [u8; 32],
    pub(crate) ciphers: &'a [Cipher],
    pub(crate) signing: &'a [SigningAlgo],
    pub(crate) server_name: &'a str,
}

/// Writes the NEGOTIATE body; `base` is where the header starts in `out`.
pub(crate) fn encode_negotiate(req: &NegotiateRequest<'_>, out: &mut Vec<u8>, base: usize) {
    let with_contexts = req.dialects.contains(&Dialect::Smb311);
    let mut w = Writer::new(out);
    w.u16(36).u16(req.dialects.len() as u16);
    w.u16(req.security_mode).u16(0).u32(req.capabilities);
    w.bytes(&req.client_guid);
    let ctx_offset_at = w.len();
    // NegotiateContextOffset, Count, Reserved2 (3.1.1) or ClientStartTime.
    w.u32(0).u16(0).u16(0);
    for d in req.dialects {
        w.u16(d.code());
    }
    if !with_contexts {
        return;
    }
    w.align(base, 8);
    let ctx_offset = w.len() - base;
    let mut count = 0u16;
    let mut context = |w: &mut Writer<'_>, kind: u16, data: &[u8]| {
        w.align(base, 8);
        w.u16(kind).u16(data.len() as u16).u32(0).bytes(data);
        count += 1;
    };
    let mut data = Vec::with_capacity(64);
    {
        let mut d = Writer::new(&mut data);
        d.u16(1)
            .u16(req.salt.len() as u16)
            .u16(SHA512)
            .bytes(&req.salt);
    }
    context(&mut w, PREAUTH_CONTEXT, &data);
    if !req.ciphers.is_empty() {
        data.clear();
        let mut d = Writer::new(&mut data);
        d.u16(req.ciphers.len() as u16);
        for c in req.ciphers {
            d.u16(c.code());
        }
        context(&mut w, ENCRYPTION_CONTEXT, &data);
    }
    if !req.signing.is_empty() {
        data.clear();
        let mut d = Writer::new(&mut data);
        d.u16(req.signing.len() as u16);
        for a in req.signing {
            d.u16(a.code());
        }
        context(&mut w, SIGNING_CONTEXT, &data);
    }
    if !req.server_name.is_empty() {
        data.clear();
        Writer::new(&mut data).utf16(req.server_name);
        context(&mut w, NETNAME_CONTEXT, &data);
    }
    w.patch_u32(ctx_offset_at, ctx_offset as u32);
    w.patch_u16(ctx_offset_at + 4, count);
}

/// What the server chose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NegotiateResponse {
    pub(crate) security_mode: u16,
    pub(crate) dialect: Dialect,
    pub(crate) server_guid: [u8; 16],
    pub(crate) capabilities: u32,
    pub(crate) max_transact: u32,
    pub(crate) max_read: u32,
    pub(crate) max_write: u32,
    pub(crate) system_time: u64,
    pub(crate) security_blob: Vec<u8>,
    /// 3.1.1: the preauth hash the server chose (SHA-512 is the only one).
    pub(crate) preauth_hash: Option<u16>,
    pub(crate) cipher: Option<Cipher>,
    /// A cipher id the server chose that this client does not know.
    pub(crate) unknown_cipher: Option<u16>,
    pub(crate) signing: Option<SigningAlgo>,
}

/// Decodes a NEGOTIATE response (the whole message, header first).
pub(crate) fn decode_negotiate(msg: &[u8]) -> Decoded<NegotiateResponse> {
    let mut r = body(msg, 65, "NEGOTIATE response")?;
    let security_mode = r.u16()?;
    let code = r.u16()?;
    let dialect = Dialect::from_code(code);
    r.check(dialect.is_some())?;
    let dialect = dialect.unwrap_or(Dialect::Smb210);
    let ctx_count = r.u16()? as usize;
    let server_guid = r.array()?;
    let capabilities = r.u32()?;
    let max_transact = r.u32()?;
    let max_read = r.u32()?;
    let max_write = r.u32()?;
    let system_time = r.u64()?;
    let _start_time = r.u64()?;
    let blob_off = r.u16()? as usize;
    let blob_len = r.u16()? as usize;
    let ctx_off = r.u32()? as usize;
    let security_blob = part(msg, blob_off, blob_len, "NEGOTIATE security buffer")?.to_vec();
    let mut out = NegotiateResponse {
        security_mode,
        dialect,
        server_guid,
        capabilities,
        max_transact,
        max_read,
        max_write,
        system_time,
        security_blob,
        preauth_hash: None,
        cipher: None,
        unknown_cipher: None,
        signing: None,
    };
    if dialect == Dialect::Smb311 {
        decode_contexts(msg, ctx_off, ctx_count, &mut out)?;
        // 3.1.1 requires the preauth context in the response (3.2.5.2).
        r.check(out.preauth_hash.is_some())?;
    }
    Ok(out)
}

fn decode_contexts(
    msg: &[u8],
    mut off: usize,
    count: usize,
    out: &mut NegotiateResponse,
) -> Decoded<()> {
    // A count is 16 bits: at most 65535 contexts of at least 8 bytes each,
    // all inside `msg`, so this loop is bounded by the message.
    for i in 0..count {
        if i > 0 {
            off = off.checked_add(7).map(|o| o & !7).unwrap_or(usize::MAX);
        }
        let head = super::super::wire::slice_at(msg, off, 8, "negotiate context")?;
        let mut h = Reader::new(head, "negotiate context");
        let kind = h.u16()?;
        let len = h.u16()? as usize;
        let data = super::super::wire::slice_at(msg, off + 8, len, "negotiate context data")?;
        let mut d = Reader::new(data, "negotiate context data");
        match kind {
            PREAUTH_CONTEXT => {
                let n = d.u16()?;
                let _salt_len = d.u16()?;
                d.check(n == 1)?;
                out.preauth_hash = Some(d.u16()?);
            }
            ENCRYPTION_CONTEXT => {
                let n = d.u16()?;
                d.check(n == 1)?;
                let code = d.u16()?;
                // 0 means "none of those you offered".
                out.cipher = Cipher::from_code(code);
                if code != 0 && out.cipher.is_none() {
                    out.unknown_cipher = Some(code);
                }
            }
            SIGNING_CONTEXT => {
                let n = d.u16()?;
                d.check(n == 1)?;
                let code = d.u16()?;
                let algo = SigningAlgo::from_code(code);
                d.check(algo.is_some())?;
                out.signing = algo;
            }
            _ => {}
        }
        off += 8 + len;
    }
    Ok(())
}
