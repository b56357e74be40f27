//! Message signing (3.1.4.1): HMAC-SHA256 (2.x), AES-128-CMAC (3.0 on) and
//! AES-128-GMAC (3.1.1 by negotiate context). A `Signer` is keyed once;
//! each message gets a `Running` state fed in pieces (the header with its
//! signature zeroed, the fixed part, the data in the caller's buffer), so a
//! READ's data is checked where it lands, never copied to be hashed.

use aes::Aes128;
use aes::cipher::{BlockEncrypt, KeyInit};
use cmac::Cmac;
use ghash::GHash;
use ghash::universal_hash::UniversalHash;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::super::consts::SigningAlgo;
use super::super::header::{HEADER_LEN, SIGNATURE_AT};

/// A keyed signing algorithm.
#[derive(Clone)]
pub(crate) enum Signer {
    HmacSha256(Hmac<Sha256>),
    Cmac(Cmac<Aes128>),
    Gmac { aes: Aes128, ghash: GHash },
}

impl Signer {
    pub(crate) fn new(algo: SigningAlgo, key: &[u8; 16]) -> Signer {
        match algo {
            // Any key length is valid for HMAC.
            SigningAlgo::HmacSha256 => Signer::HmacSha256(
                <Hmac<Sha256> as Mac>::new_from_slice(key).unwrap_or_else(|_| unreachable!()),
            ),
            SigningAlgo::AesCmac => Signer::Cmac(<Cmac<Aes128> as KeyInit>::new(key.into())),
            SigningAlgo::AesGmac => {
                let aes = <Aes128 as KeyInit>::new(key.into());
                let mut h = [0u8; 16].into();
                aes.encrypt_block(&mut h);
                Signer::Gmac {
                    aes,
                    ghash: <GHash as KeyInit>::new(&h),
                }
            }
        }
    }

    /// Starts one message whose header is `header` (its signature field is
    /// read as zeros). `response` and `cancel` feed GMAC's nonce.
    pub(crate) fn start(&self, header: &[u8; HEADER_LEN], response: bool, cancel: bool) -> Running {
        let mut run = match self {
            Signer::HmacSha256(m) => Running::Hmac(m.clone()),
            Signer::Cmac(m) => Running::Cmac(m.clone()),
            Signer::Gmac { aes, ghash } => {
                let mut nonce = [0u8; 12];
                nonce[..8].copy_from_slice(&header[24..32]);
                let role = u32::from(response) | (u32::from(cancel) << 1);
                nonce[8..].copy_from_slice(&role.to_le_bytes());
                let mut j0 = [0u8; 16];
                j0[..12].copy_from_slice(&nonce);
                j0[15] = 1;
                let mut mask = j0.into();
                aes.encrypt_block(&mut mask);
                Running::Gmac {
                    ghash: ghash.clone(),
                    mask: mask.into(),
                    partial: [0; 16],
                    fill: 0,
                    total: 0,
                }
            }
        };
        run.update(&header[..SIGNATURE_AT]);
        run.update(&[0u8; 16]);
        run
    }
}

/// One message being signed or checked.
// Lives on the stack for one message: boxing the large variant would
// allocate per I/O, which the I/O path never does.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Running {
    Hmac(Hmac<Sha256>),
    Cmac(Cmac<Aes128>),
    Gmac {
        ghash: GHash,
        mask: [u8; 16],
        partial: [u8; 16],
        fill: usize,
        total: u64,
    },
}

impl Running {
    pub(crate) fn update(&mut self, mut data: &[u8]) {
        match self {
            Running::Hmac(m) => m.update(data),
            Running::Cmac(m) => m.update(data),
            Running::Gmac {
                ghash,
                partial,
                fill,
                total,
                ..
            } => {
                *total += data.len() as u64;
                if *fill > 0 {
                    let take = (16 - *fill).min(data.len());
                    partial[*fill..*fill + take].copy_from_slice(&data[..take]);
                    *fill += take;
                    data = &data[take..];
                    if *fill < 16 {
                        return;
                    }
                    ghash.update(&[(*partial).into()]);
                    *fill = 0;
                }
                let whole = data.len() / 16 * 16;
                if whole > 0 {
                    ghash.update_padded(&data[..whole]);
                }
                let rest = &data[whole..];
                partial[..rest.len()].copy_from_slice(rest);
                *fill = rest.len();
            }
        }
    }

    /// The 16-byte signature.
    pub(crate) fn finish(self) -> [u8; 16] {
        match self {
            Running::Hmac(m) => {
                let full = m.finalize().into_bytes();
                let mut s = [0u8; 16];
                s.copy_from_slice(&full[..16]);
                s
            }
            Running::Cmac(m) => m.finalize().into_bytes().into(),
            Running::Gmac {
                mut ghash,
                mask,
                partial,
                fill,
                total,
            } => {
                if fill > 0 {
                    ghash.update_padded(&partial[..fill]);
                }
                // The lengths block: AAD bits, then 0 bits of ciphertext.
                let mut lens = [0u8; 16];
                lens[..8].copy_from_slice(&(total * 8).to_be_bytes());
                ghash.update(&[lens.into()]);
                let mut tag: [u8; 16] = ghash.finalize().into();
                for (t, m) in tag.iter_mut().zip(mask) {
                    *t ^= m;
                }
                tag
            }
        }
    }
}

/// Compares signatures in constant time (a timing difference would tell a
/// forger how many bytes were right).
pub(crate) fn equal(a: &[u8; 16], b: &[u8; 16]) -> bool {
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
