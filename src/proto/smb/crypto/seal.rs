//! Encryption of whole messages behind a transform header (3.1.4.3,
//! 3.2.5.1.1): AES-CCM or AES-GCM, 128 or 256 bits, in place. The
//! associated data is the transform header from its nonce on (32 bytes);
//! the tag is its signature field.

use aes::{Aes128, Aes256};
use aes_gcm::aead::AeadInPlace;
use aes_gcm::aead::consts::{U11, U16};
use aes_gcm::{Aes128Gcm, Aes256Gcm, KeyInit};
use ccm::Ccm;

use super::super::consts::Cipher;

type Aes128Ccm = Ccm<Aes128, U16, U11>;
type Aes256Ccm = Ccm<Aes256, U16, U11>;

/// A keyed cipher, one direction.
#[derive(Clone)]
pub(crate) enum Sealer {
    Gcm128(Box<Aes128Gcm>),
    Gcm256(Box<Aes256Gcm>),
    Ccm128(Box<Aes128Ccm>),
    Ccm256(Box<Aes256Ccm>),
}

/// The message failed its tag: altered, or not for this key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BadTag;

impl Sealer {
    /// `key` is 16 or 32 bytes as the cipher needs (longer keys are cut).
    pub(crate) fn new(cipher: Cipher, key: &[u8; 32]) -> Sealer {
        match cipher {
            Cipher::Aes128Gcm => Sealer::Gcm128(Box::new(Aes128Gcm::new(key[..16].into()))),
            Cipher::Aes256Gcm => Sealer::Gcm256(Box::new(Aes256Gcm::new(key.into()))),
            Cipher::Aes128Ccm => Sealer::Ccm128(Box::new(Aes128Ccm::new(key[..16].into()))),
            Cipher::Aes256Ccm => Sealer::Ccm256(Box::new(Aes256Ccm::new(key.into()))),
        }
    }

    /// How many nonce bytes the cipher uses (the rest of the 16 are zero).
    pub(crate) fn nonce_len(&self) -> usize {
        match self {
            Sealer::Gcm128(_) | Sealer::Gcm256(_) => 12,
            Sealer::Ccm128(_) | Sealer::Ccm256(_) => 11,
        }
    }

    /// Encrypts `buf` in place; returns the tag.
    pub(crate) fn seal(&self, nonce: &[u8; 16], aad: &[u8], buf: &mut [u8]) -> [u8; 16] {
        // Encryption fails only for a plaintext over the cipher's limit
        // (2^36 bytes for GCM, 2^40 for CCM with an 11-byte nonce), far
        // above a frame's 16 MiB.
        let tag = match self {
            Sealer::Gcm128(c) => c.encrypt_in_place_detached(nonce[..12].into(), aad, buf),
            Sealer::Gcm256(c) => c.encrypt_in_place_detached(nonce[..12].into(), aad, buf),
            Sealer::Ccm128(c) => c.encrypt_in_place_detached(nonce[..11].into(), aad, buf),
            Sealer::Ccm256(c) => c.encrypt_in_place_detached(nonce[..11].into(), aad, buf),
        };
        tag.map(Into::into).unwrap_or([0; 16])
    }

    /// Decrypts `buf` in place after checking `tag`.
    pub(crate) fn open(
        &self,
        nonce: &[u8; 16],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8; 16],
    ) -> Result<(), BadTag> {
        let t = tag.into();
        match self {
            Sealer::Gcm128(c) => c.decrypt_in_place_detached(nonce[..12].into(), aad, buf, t),
            Sealer::Gcm256(c) => c.decrypt_in_place_detached(nonce[..12].into(), aad, buf, t),
            Sealer::Ccm128(c) => c.decrypt_in_place_detached(nonce[..11].into(), aad, buf, t),
            Sealer::Ccm256(c) => c.decrypt_in_place_detached(nonce[..11].into(), aad, buf, t),
        }
        .map_err(|_| BadTag)
    }
}
