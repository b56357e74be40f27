//! An SMB 2.1/3.x client in user space.
//!
//! Written here rather than taken from a crate: the Rust SMB clients need
//! a newer compiler than the project's rust-version 1.85 (`smb` 1.89,
//! `smb2` 1.91, `sspi` for their NTLM 1.93) or an async runtime, and none
//! offers what the engine above needs: requests queued into slots and
//! completed by message id, credits as the queue depth, no allocation per
//! I/O, READ data received straight into the caller's buffer. The
//! cryptography is RustCrypto's (`crypto/`); the protocol is [MS-SMB2],
//! NTLM [MS-NLMP], SPNEGO RFC 4178.

pub mod auth;
pub mod conn;
pub mod consts;
pub mod crypto;
pub mod error;
pub mod header;
pub mod msg;
pub mod session;
pub mod stats;
pub mod url;
pub mod wire;

#[cfg(test)]
mod tests;
