//! SP800-108 counter-mode KDF with HMAC-SHA256 ([MS-SMB2] 3.1.4.2), and
//! the keys each dialect derives from the session key.

use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::super::consts::Dialect;

/// KDF(Ki, Label, Context) with L = 8 * out.len() bits: each 32-byte block
/// is HMAC-SHA256(Ki, i || Label || 0x00 || Context || L), big-endian
/// counters; labels carry their own trailing NUL as the spec spells them.
pub(crate) fn kdf(key: &[u8], label: &[u8], context: &[u8], out: &mut [u8]) {
    let bits = (out.len() as u32 * 8).to_be_bytes();
    for (i, chunk) in out.chunks_mut(32).enumerate() {
        // HMAC accepts any key length: this cannot fail.
        let mut m = <Hmac<Sha256> as Mac>::new_from_slice(key).unwrap_or_else(|_| unreachable!());
        m.update(&(i as u32 + 1).to_be_bytes());
        m.update(label);
        m.update(&[0]);
        m.update(context);
        m.update(&bits);
        let block = m.finalize().into_bytes();
        chunk.copy_from_slice(&block[..chunk.len()]);
    }
}

/// The keys of a session (or, for signing, of one channel).
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Keys {
    pub(crate) signing: [u8; 16],
    /// Client to server; 16 or 32 bytes used, by the cipher's key length.
    pub(crate) encrypt: [u8; 32],
    pub(crate) decrypt: [u8; 32],
    pub(crate) application: [u8; 16],
}

impl std::fmt::Debug for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Keys(..)")
    }
}

/// Derives the session's keys for `dialect`. `preauth` is the session's
/// preauth integrity hash (3.1.1 only); `cipher_key_len` 16 or 32.
pub(crate) fn derive(
    dialect: Dialect,
    session_key: &[u8; 16],
    preauth: &[u8; 64],
    cipher_key_len: usize,
) -> Keys {
    let mut k = Keys {
        signing: [0; 16],
        encrypt: [0; 32],
        decrypt: [0; 32],
        application: [0; 16],
    };
    let n = cipher_key_len.clamp(16, 32);
    match dialect {
        Dialect::Smb210 => k.signing = *session_key,
        Dialect::Smb300 | Dialect::Smb302 => {
            kdf(session_key, b"SMB2AESCMAC\0", b"SmbSign\0", &mut k.signing);
            kdf(
                session_key,
                b"SMB2AESCCM\0",
                b"ServerIn \0",
                &mut k.encrypt[..16],
            );
            kdf(
                session_key,
                b"SMB2AESCCM\0",
                b"ServerOut\0",
                &mut k.decrypt[..16],
            );
            kdf(session_key, b"SMB2APP\0", b"SmbRpc\0", &mut k.application);
        }
        Dialect::Smb311 => {
            kdf(session_key, b"SMBSigningKey\0", preauth, &mut k.signing);
            kdf(
                session_key,
                b"SMBC2SCipherKey\0",
                preauth,
                &mut k.encrypt[..n],
            );
            kdf(
                session_key,
                b"SMBS2CCipherKey\0",
                preauth,
                &mut k.decrypt[..n],
            );
            kdf(session_key, b"SMBAppKey\0", preauth, &mut k.application);
        }
    }
    k
}

/// A bound channel's signing key, from the key the binding's own logon
/// produced (a new NTLM exchange, a new key): 3.1.1 with the binding's
/// preauth hash as context, 3.0 and 3.0.2 as the session's was made.
pub(crate) fn channel_signing_key(
    dialect: Dialect,
    binding_key: &[u8; 16],
    preauth: &[u8; 64],
) -> [u8; 16] {
    let mut k = [0u8; 16];
    match dialect {
        Dialect::Smb311 => kdf(binding_key, b"SMBSigningKey\0", preauth, &mut k),
        Dialect::Smb300 | Dialect::Smb302 => {
            kdf(binding_key, b"SMB2AESCMAC\0", b"SmbSign\0", &mut k)
        }
        Dialect::Smb210 => k = *binding_key,
    }
    k
}
