//! SMB2/3's cryptography over RustCrypto's primitives: the SP800-108 key
//! derivation (`kdf`), the 3.1.1 preauth integrity hash (`preauth`),
//! message signing (`sign`: HMAC-SHA256, AES-CMAC, AES-GMAC) and the
//! transform header's encryption (`seal`: AES-128/256-CCM/GCM). Every
//! keyed state is built once per session or channel and cloned per
//! message, so signing and sealing allocate nothing.

pub(crate) mod kdf;
pub(crate) mod preauth;
pub(crate) mod seal;
pub(crate) mod sign;
