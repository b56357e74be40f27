//! A session on a share: what the user asks for (`Options`, `Auth`), what
//! the server agreed to (`Negotiated`), the set-up exchanges (`setup`:
//! NEGOTIATE, SESSION_SETUP, binding), the client that owns the channels
//! (`client`) and its synchronous file operations (`ops`).

pub mod client;
pub mod ops;
pub(crate) mod setup;

use std::net::SocketAddr;
use std::time::Duration;

use super::auth::creds::Credentials;
use super::consts::{Cipher, Dialect, SigningAlgo};

/// Who logs on.
#[derive(Debug)]
pub enum Auth {
    /// An anonymous NTLM logon: the server's guest access, if it allows it.
    Guest,
    /// NTLMv2 with a user's password.
    Ntlm(Credentials),
}

/// Whether to sign the I/O requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signing {
    /// Only when the server requires it (set-up requests are signed
    /// whenever the session has a key, as 3.1.1 wants).
    Auto,
    On,
    Off,
}

/// What the user wants of the connection.
#[derive(Debug, Clone)]
pub struct Options {
    /// Offered, lowest first; the server picks one.
    pub dialects: Vec<Dialect>,
    pub signing: Signing,
    /// Ciphers offered (3.1.1, in order of preference); empty: no
    /// encryption unless the server demands it.
    pub encryption: Vec<Cipher>,
    /// Signing algorithms offered to a 3.1.1 server, in order.
    pub signing_algos: Vec<SigningAlgo>,
    pub connect_timeout: Duration,
    pub request_timeout: Duration,
    pub pending_timeout: Duration,
    /// The largest READ or WRITE to issue (the server's maxima cap it too).
    pub max_io: u32,
    /// The credits to keep open per channel: the queue depth wanted.
    pub credit_target: u16,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            dialects: Dialect::ALL.to_vec(),
            signing: Signing::Auto,
            encryption: Vec::new(),
            signing_algos: vec![
                SigningAlgo::AesGmac,
                SigningAlgo::AesCmac,
                SigningAlgo::HmacSha256,
            ],
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(60),
            pending_timeout: Duration::from_secs(300),
            max_io: 8 << 20,
            credit_target: 512,
        }
    }
}

/// What the server is and what to reach on it.
#[derive(Debug, Clone)]
pub struct Target {
    /// The name used in the share's UNC path (`\\server\share`).
    pub server: String,
    pub addr: SocketAddr,
    pub share: String,
}

/// What the negotiation and the logon decided: recorded with the result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Negotiated {
    pub dialect: Dialect,
    /// The signing algorithm, and whether I/O requests are signed.
    pub signing_algo: Option<SigningAlgo>,
    pub signing: bool,
    pub(crate) server_requires_signing: bool,
    /// The cipher, when the session encrypts.
    pub cipher: Option<Cipher>,
    /// Whether the server (session or share) demanded encryption.
    pub server_requires_encryption: bool,
    pub(crate) capabilities: u32,
    pub multichannel: bool,
    pub(crate) max_read: u32,
    pub(crate) max_write: u32,
    pub(crate) max_transact: u32,
    /// The READ/WRITE size limit in force: the server's and the user's.
    pub max_io: u32,
    pub guest: bool,
    pub anonymous: bool,
    pub(crate) share_flags: u32,
    pub(crate) server_guid: [u8; 16],
}
