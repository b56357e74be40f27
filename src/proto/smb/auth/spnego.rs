//! The few SPNEGO (RFC 4178) tokens an NTLM session setup needs, in DER:
//! the first token offering NTLMSSP, the follow-up carrying the
//! AUTHENTICATE message, and the server's responses. Written by hand: the
//! DER involved is four nested tags, and a general ASN.1 crate would be
//! larger than this file.

use super::super::wire::{Decoded, Malformed};

const SPNEGO_OID: &[u8] = &[0x2b, 0x06, 0x01, 0x05, 0x05, 0x02];
pub(crate) const NTLMSSP_OID: &[u8] = &[0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x02, 0x0a];

fn der(tag: u8, content: &[u8], out: &mut Vec<u8>) {
    out.push(tag);
    let n = content.len();
    if n < 0x80 {
        out.push(n as u8);
    } else if n <= 0xFF {
        out.extend_from_slice(&[0x81, n as u8]);
    } else if n <= 0xFFFF {
        out.extend_from_slice(&[0x82, (n >> 8) as u8, n as u8]);
    } else {
        out.extend_from_slice(&[0x83, (n >> 16) as u8, (n >> 8) as u8, n as u8]);
    }
    out.extend_from_slice(content);
}

fn wrap(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(content.len() + 6);
    der(tag, content, &mut v);
    v
}

/// The first token: NegTokenInit offering NTLMSSP, with its first message.
pub(crate) fn init_token(ntlm_negotiate: &[u8]) -> Vec<u8> {
    let mech_list = wrap(0x30, &wrap(0x06, NTLMSSP_OID));
    let mut seq = wrap(0xa0, &mech_list);
    seq.extend(wrap(0xa2, &wrap(0x04, ntlm_negotiate)));
    let neg_token_init = wrap(0xa0, &wrap(0x30, &seq));
    let mut inner = wrap(0x06, SPNEGO_OID);
    inner.extend(neg_token_init);
    wrap(0x60, &inner)
}

/// A follow-up token: NegTokenResp carrying the next NTLMSSP message.
pub(crate) fn response_token(ntlm: &[u8]) -> Vec<u8> {
    let seq = wrap(0xa2, &wrap(0x04, ntlm));
    wrap(0xa1, &wrap(0x30, &seq))
}

/// One TLV: (tag, content, rest).
fn tlv(b: &[u8]) -> Decoded<(u8, &[u8], &[u8])> {
    let bad = |at| Malformed {
        what: "SPNEGO token",
        at,
    };
    let tag = *b.first().ok_or(bad(0))?;
    let first = *b.get(1).ok_or(bad(1))? as usize;
    let (len, head) = if first < 0x80 {
        (first, 2)
    } else {
        let n = first & 0x7f;
        if n == 0 || n > 3 {
            return Err(bad(1));
        }
        let bytes = b.get(2..2 + n).ok_or(bad(2))?;
        (
            bytes.iter().fold(0usize, |a, &x| (a << 8) | x as usize),
            2 + n,
        )
    };
    let content = b.get(head..head + len).ok_or(bad(head))?;
    Ok((tag, content, &b[head + len..]))
}

/// What a server's NegTokenResp says.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct ServerToken {
    /// 0 accept-completed, 1 accept-incomplete, 2 reject, 3 request-mic.
    pub(crate) state: Option<u8>,
    pub(crate) mech_is_ntlmssp: Option<bool>,
    pub(crate) token: Vec<u8>,
}

/// Decodes a server's SPNEGO response token: the fuzz entry for SPNEGO.
pub(crate) fn decode_server_token(b: &[u8]) -> Decoded<ServerToken> {
    let bad = Malformed {
        what: "SPNEGO response",
        at: 0,
    };
    let (tag, content, _) = tlv(b)?;
    if tag != 0xa1 {
        return Err(bad);
    }
    let (tag, mut seq, _) = tlv(content)?;
    if tag != 0x30 {
        return Err(bad);
    }
    let mut out = ServerToken::default();
    // At most four fields; the loop ends as `seq` shrinks with each one.
    while !seq.is_empty() {
        let (tag, field, rest) = tlv(seq)?;
        let (inner_tag, inner, _) = tlv(field)?;
        match (tag, inner_tag) {
            (0xa0, 0x0a) => out.state = inner.first().copied(),
            (0xa1, 0x06) => out.mech_is_ntlmssp = Some(inner == NTLMSSP_OID),
            (0xa2, 0x04) => out.token = inner.to_vec(),
            _ => {}
        }
        seq = rest;
    }
    Ok(out)
}

/// Whether the server's NEGOTIATE blob (NegTokenInit2) lists NTLMSSP; an
/// empty blob says nothing, so NTLMSSP is tried.
pub(crate) fn offers_ntlmssp(blob: &[u8]) -> bool {
    if blob.is_empty() {
        return true;
    }
    blob.windows(NTLMSSP_OID.len()).any(|w| w == NTLMSSP_OID)
}
