//! NTLMSSP ([MS-NLMP]) for SMB2 session setup: the NEGOTIATE message, the
//! server's CHALLENGE decoded, and an AUTHENTICATE with an NTLMv2 response
//! (or the anonymous one, for guest access). The session key it yields is
//! the key SMB2 signs and encrypts with.

use hmac::{Hmac, Mac};
use md4::{Digest, Md4};
use md5::Md5;
use rc4::{KeyInit, Rc4, StreamCipher, consts::U16};

use super::super::wire::{Decoded, Malformed, Reader, Writer, utf16_bytes};

const SIGNATURE: &[u8; 8] = b"NTLMSSP\0";

pub(crate) const UNICODE: u32 = 0x0000_0001;
pub(crate) const REQUEST_TARGET: u32 = 0x0000_0004;
pub(crate) const SIGN: u32 = 0x0000_0010;
pub(crate) const SEAL: u32 = 0x0000_0020;
pub(crate) const NTLM: u32 = 0x0000_0200;
pub(crate) const ANONYMOUS: u32 = 0x0000_0800;
pub(crate) const ALWAYS_SIGN: u32 = 0x0000_8000;
pub(crate) const EXTENDED_SESSION_SECURITY: u32 = 0x0008_0000;
pub(crate) const TARGET_INFO: u32 = 0x0080_0000;
pub(crate) const VERSION: u32 = 0x0200_0000;
pub(crate) const N128: u32 = 0x2000_0000;
pub(crate) const KEY_EXCH: u32 = 0x4000_0000;
pub(crate) const N56: u32 = 0x8000_0000;

/// What this client asks for.
pub(crate) const CLIENT_FLAGS: u32 = UNICODE
    | REQUEST_TARGET
    | SIGN
    | SEAL
    | NTLM
    | ALWAYS_SIGN
    | EXTENDED_SESSION_SECURITY
    | TARGET_INFO
    | VERSION
    | N128
    | KEY_EXCH
    | N56;

/// Windows 10's version block; servers log it, none decides on it.
const VERSION_BLOCK: [u8; 8] = [10, 0, 0x61, 0x4a, 0, 0, 0, 15];

const AV_EOL: u16 = 0;
const AV_TIMESTAMP: u16 = 7;

pub(crate) fn negotiate_message() -> Vec<u8> {
    let mut v = Vec::with_capacity(40);
    let mut w = Writer::new(&mut v);
    w.bytes(SIGNATURE).u32(1).u32(CLIENT_FLAGS);
    w.zeros(16); // domain and workstation fields: none supplied
    w.bytes(&VERSION_BLOCK);
    v
}

/// The parts of a CHALLENGE message the response needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Challenge {
    pub(crate) flags: u32,
    pub(crate) server_challenge: [u8; 8],
    pub(crate) target_info: Vec<u8>,
    /// MsvAvTimestamp from the target info, when the server sent one.
    pub(crate) timestamp: Option<u64>,
}

fn field<'a>(msg: &'a [u8], r: &mut Reader<'_>, what: &'static str) -> Decoded<&'a [u8]> {
    let len = r.u16()? as usize;
    let _max = r.u16()?;
    let off = r.u32()? as usize;
    if len == 0 {
        return Ok(&[]);
    }
    super::super::wire::slice_at(msg, off, len, what)
}

/// Decodes a CHALLENGE message: the fuzz entry for NTLMSSP.
pub(crate) fn decode_challenge(msg: &[u8]) -> Decoded<Challenge> {
    let mut r = Reader::new(msg, "NTLMSSP CHALLENGE");
    let sig: [u8; 8] = r.array()?;
    r.check(&sig == SIGNATURE)?;
    let kind = r.u32()?;
    r.check(kind == 2)?;
    let _target_name = field(msg, &mut r, "NTLMSSP target name")?;
    let flags = r.u32()?;
    let server_challenge = r.array()?;
    r.skip(8)?;
    let target_info = field(msg, &mut r, "NTLMSSP target info")?.to_vec();
    let timestamp = av_timestamp(&target_info)?;
    Ok(Challenge {
        flags,
        server_challenge,
        target_info,
        timestamp,
    })
}

/// Walks the AV pairs (each id, length, value) to MsvAvEOL; bounded by the
/// buffer since every pair is at least four bytes.
fn av_timestamp(info: &[u8]) -> Decoded<Option<u64>> {
    let mut r = Reader::new(info, "NTLMSSP AV pairs");
    let mut ts = None;
    while r.remaining() >= 4 {
        let id = r.u16()?;
        let len = r.u16()? as usize;
        let value = r.bytes(len)?;
        if id == AV_EOL {
            break;
        }
        if id == AV_TIMESTAMP && len == 8 {
            let mut a = [0u8; 8];
            a.copy_from_slice(value);
            ts = Some(u64::from_le_bytes(a));
        }
    }
    Ok(ts)
}

type HmacMd5 = Hmac<Md5>;

fn hmac_md5(key: &[u8], parts: &[&[u8]]) -> [u8; 16] {
    // HMAC takes a key of any length: this cannot fail.
    let mut m = <HmacMd5 as Mac>::new_from_slice(key).unwrap_or_else(|_| unreachable!());
    for p in parts {
        m.update(p);
    }
    m.finalize().into_bytes().into()
}

/// NTOWFv2: HMAC-MD5 over the user (upper case) and domain, keyed by the
/// MD4 of the password.
pub(crate) fn ntowf_v2(user: &str, domain: &str, password: &str) -> [u8; 16] {
    let nt_hash: [u8; 16] = Md4::digest(utf16_bytes(password)).into();
    let who = utf16_bytes(&(user.to_uppercase() + domain));
    hmac_md5(&nt_hash, &[&who])
}

/// Who authenticates.
#[derive(Clone, Copy)]
pub(crate) enum Identity<'a> {
    Anonymous,
    User {
        user: &'a str,
        domain: &'a str,
        password: &'a str,
    },
}

/// The AUTHENTICATE message and the session key both sides now hold (none
/// for an anonymous session).
pub(crate) struct Authenticate {
    pub(crate) message: Vec<u8>,
    pub(crate) session_key: Option<[u8; 16]>,
}

/// The random inputs, drawn by the caller (tests pass fixed ones).
pub(crate) struct Nonces {
    pub(crate) client_challenge: [u8; 8],
    pub(crate) exported_session_key: [u8; 16],
    /// FILETIME now, used when the server sent no timestamp.
    pub(crate) now: u64,
}

pub(crate) fn authenticate(
    ch: &Challenge,
    who: Identity<'_>,
    n: &Nonces,
    workstation: &str,
) -> Authenticate {
    let flags = ch.flags & CLIENT_FLAGS | UNICODE;
    let (user, domain, lm, nt, key) = match who {
        Identity::Anonymous => ("", "", vec![0u8], Vec::new(), None),
        Identity::User {
            user,
            domain,
            password,
        } => {
            let owf = ntowf_v2(user, domain, password);
            let time = ch.timestamp.unwrap_or(n.now);
            let mut temp = Vec::with_capacity(32 + ch.target_info.len());
            let mut w = Writer::new(&mut temp);
            w.u8(1)
                .u8(1)
                .zeros(6)
                .u64(time)
                .bytes(&n.client_challenge)
                .zeros(4);
            w.bytes(&ch.target_info).zeros(4);
            let proof = hmac_md5(&owf, &[&ch.server_challenge, &temp]);
            let mut nt = proof.to_vec();
            nt.extend_from_slice(&temp);
            // With a server timestamp the LM response is zeros (3.3.2).
            let lm = if ch.timestamp.is_some() {
                vec![0u8; 24]
            } else {
                let mut lm = hmac_md5(&owf, &[&ch.server_challenge, &n.client_challenge]).to_vec();
                lm.extend_from_slice(&n.client_challenge);
                lm
            };
            let base = hmac_md5(&owf, &[&proof]);
            (user, domain, lm, nt, Some(base))
        }
    };
    let mut encrypted_key = Vec::new();
    let session_key = match key {
        Some(base) if flags & KEY_EXCH != 0 => {
            let mut k = n.exported_session_key;
            let mut rc4 = <Rc4<U16> as KeyInit>::new(&base.into());
            rc4.apply_keystream(&mut k);
            encrypted_key = k.to_vec();
            Some(n.exported_session_key)
        }
        other => other,
    };
    let fields: [Vec<u8>; 6] = [
        lm,
        nt,
        utf16_bytes(domain),
        utf16_bytes(user),
        utf16_bytes(workstation),
        encrypted_key,
    ];
    let mut v = Vec::with_capacity(72 + fields.iter().map(Vec::len).sum::<usize>());
    let mut w = Writer::new(&mut v);
    w.bytes(SIGNATURE).u32(3);
    let mut off = 72usize;
    for f in &fields {
        w.u16(f.len() as u16).u16(f.len() as u16).u32(off as u32);
        off += f.len();
    }
    // An anonymous logon has no key to exchange, sign or seal with.
    let flags = match who {
        Identity::Anonymous => (flags & !(KEY_EXCH | SIGN | SEAL)) | ANONYMOUS,
        Identity::User { .. } => flags,
    };
    w.u32(flags).bytes(&VERSION_BLOCK);
    for f in &fields {
        w.bytes(f);
    }
    Authenticate {
        message: v,
        session_key,
    }
}

/// Whether a blob is an NTLMSSP message (a server may answer raw NTLMSSP
/// rather than SPNEGO).
pub(crate) fn is_ntlmssp(blob: &[u8]) -> bool {
    blob.starts_with(SIGNATURE)
}

/// The complaint for a server that offered no NTLMSSP.
pub(crate) fn no_ntlmssp() -> Malformed {
    Malformed {
        what: "security blob (the server offers no NTLMSSP)",
        at: 0,
    }
}
