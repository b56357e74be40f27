//! An NFS client in user space, NFSv3 (RFC 1813, with MOUNT) and NFSv4.1
//! (RFC 8881, sessions), over the pipelined ONC RPC transport in
//! `proto::rpc`: no kernel mount, no root, connections under the caller's
//! control. `connect` takes a URL to a client at the target directory;
//! `Client::queue` and `Client::poll` are the engine's shape, `Client::call`
//! and the helpers in `ops.rs` the blocking one.

pub(crate) mod client;
pub(crate) mod error;
pub(crate) mod ops;
pub(crate) mod setup;
pub(crate) mod state;
pub(crate) mod types;
pub mod url;
pub(crate) mod v3;
pub(crate) mod v4;

#[cfg(test)]
mod tests;

use std::time::Duration;

pub use client::Client;
pub(crate) use error::NfsError;
pub use state::Completion;
pub use types::{Attr, CreateHow, DirPage, Fh, FileType, OpKind, Reply, Request, Stable, Version};
pub use url::Url;

/// How to connect. `from_url` takes what the URL says; the rest are the
/// caller's (volbench's flags).
#[derive(Debug, Clone)]
pub struct Options {
    pub version: Version,
    /// TCP connections, requests spread over them (nconnect).
    pub connections: usize,
    /// AUTH_SYS identity.
    pub uid: u32,
    pub gid: u32,
    pub gids: Vec<u32>,
    pub machine: String,
    /// Largest READ and WRITE asked for (the server's maximum bounds them).
    pub rsize: Option<u32>,
    pub wsize: Option<u32>,
    /// User requests in flight at most, and the largest one.
    pub depth: usize,
    pub max_io: u32,
    pub call_timeout: Duration,
    pub max_sends: u8,
    pub reconnect_for: Duration,
    pub connect_timeout: Duration,
    pub nfs_port: Option<u16>,
    pub mount_port: Option<u16>,
}

impl Options {
    /// Defaults (NFSv3, one connection, the process's own uid and gid,
    /// 60 s per call sent up to 3 times, a lost server dialled again for
    /// 60 s or the URL's `reconnect=`),
    /// with what `url` sets.
    pub fn from_url(url: &Url) -> Options {
        let (uid, gid) = ids();
        Options {
            version: url.version.unwrap_or(Version::V3),
            connections: url.nconnect.unwrap_or(1),
            uid: url.uid.unwrap_or(uid),
            gid: url.gid.unwrap_or(gid),
            gids: Vec::new(),
            machine: hostname(),
            rsize: url.rsize,
            wsize: url.wsize,
            depth: 16,
            max_io: 1 << 20,
            call_timeout: Duration::from_secs(60),
            max_sends: 3,
            reconnect_for: Duration::from_secs(
                url.reconnect
                    .unwrap_or(crate::units::bounds::DEFAULT_NFS_RECONNECT_SECS),
            ),
            connect_timeout: Duration::from_secs(10),
            nfs_port: url.port.or(url.nfsport),
            mount_port: url.mountport,
        }
    }
}

fn ids() -> (u32, u32) {
    // SAFETY: getuid and getgid cannot fail.
    unsafe { (libc::getuid(), libc::getgid()) }
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "volbench".into())
}

/// A client at its target directory.
pub struct Mount {
    pub client: Client,
    /// The target directory's handle and attributes.
    pub dir: Fh,
    pub(crate) attr: Attr,
}

/// Why a connect failed: one line (the URL first), and the server's status
/// when it gave one, so that a caller branches on the status, never on the
/// words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectError {
    pub message: String,
    pub(crate) status: Option<u32>,
}

impl ConnectError {
    /// Whether the server answered with `code` (`error::code`).
    pub(crate) fn is(&self, code: u32) -> bool {
        self.status == Some(code)
    }
}

impl std::fmt::Display for ConnectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Connects to the directory `url` names, as `o` says: one line of error
/// (the URL first) when it cannot.
pub fn connect(url: &Url, o: &Options) -> Result<Mount, ConnectError> {
    setup::connect(url, o)
}
