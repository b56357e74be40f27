//! From a URL to a client at the target directory: the ports (rpcbind,
//! unless given), MOUNT (NFSv3) or the session (NFSv4.1: EXCHANGE_ID,
//! CREATE_SESSION, RECLAIM_COMPLETE), the walk down the path (each
//! component a directory: a server-side symlink is refused, never
//! followed), and the transfer sizes (FSINFO or the v4 attributes, bounded
//! by what the user asked).

use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

use super::client::Client;
use super::error::NfsError;
use super::types::{Attr, Fh, FileType, FsInfo, OpKind, Reply, Request, Version};
use super::url::Url;
use super::v3;
use super::v4::{self, reply as v4reply};
use super::{ConnectError, Mount, Options};
use crate::proto::rpc::msg::Auth;
use crate::proto::rpc::transport::{Config, Transport};
use crate::proto::rpc::{self, PMAP_PORT, call_once, getport};

/// The NFS port when neither the URL nor rpcbind says.
const NFS_PORT: u16 = 2049;

fn resolve(host: &str, port: u16) -> Result<SocketAddr, String> {
    (host, port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve the server '{host}': {e}"))?
        .next()
        .ok_or_else(|| format!("the server name '{host}' resolves to no address"))
}

fn auth(o: &Options) -> Auth {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as u32);
    Auth::sys(stamp, &o.machine, o.uid, o.gid, &o.gids)
}

/// Connects as `o` says to the directory `url` names.
pub(crate) fn connect(url: &Url, o: &Options) -> Result<Mount, ConnectError> {
    let at = |e: String| ConnectError {
        message: format!("{url}: {e}"),
        status: None,
    };
    // A walk's failure keeps the server's status (NOENT: a missing
    // directory the caller may make).
    let walked = |e: NfsError| ConnectError {
        message: format!("{url}: {e}"),
        status: e.status(),
    };
    let rpcbind = resolve(&url.host, PMAP_PORT).map_err(at)?;
    let wait = o.connect_timeout;
    let (client, dir, attr) = match o.version {
        Version::V3 => {
            let mport = match o.mount_port {
                Some(p) => p,
                None => getport(rpcbind, v3::MOUNT_PROG, v3::MOUNT_VERS, wait).map_err(at)?,
            };
            let maddr = SocketAddr::new(rpcbind.ip(), mport);
            let (export, root) = mount(maddr, &url.path, o).map_err(at)?;
            let nport = match o.nfs_port {
                Some(p) => p,
                None => getport(rpcbind, v3::PROG, v3::VERS, wait).unwrap_or(NFS_PORT),
            };
            let mut c =
                client(SocketAddr::new(rpcbind.ip(), nport), v3::PROG, v3::VERS, o).map_err(at)?;
            let depth = export.split('/').filter(|s| !s.is_empty()).count();
            let rest: Vec<&[u8]> = url.path[depth..].iter().map(|s| s.as_bytes()).collect();
            let (dir, attr) = walk_v3(&mut c, root, &rest).map_err(walked)?;
            let fs = match c
                .call(Request::Fsinfo(&root))
                .map_err(|e| at(e.to_string()))?
            {
                Reply::Fsinfo(f) => f,
                _ => FsInfo::default(),
            };
            sizes(&mut c, fs, o, u32::MAX);
            (c, dir, attr)
        }
        Version::V41 => {
            let addr = SocketAddr::new(rpcbind.ip(), o.nfs_port.unwrap_or(NFS_PORT));
            let mut c = client(addr, v4::PROG, v4::VERS, o).map_err(at)?;
            let mut verifier = [0u8; 8];
            verifier.copy_from_slice(&fastrand::u64(..).to_be_bytes());
            let owner = format!(
                "volbench:{}:{}:{:016x}",
                o.machine,
                std::process::id(),
                fastrand::u64(..)
            )
            .into_bytes();
            let slots = (o.depth * parts(o)).clamp(1, 1024) as u32;
            let max = o.rsize.unwrap_or(1 << 20).max(o.wsize.unwrap_or(1 << 20)) + 4096;
            c.start_session(verifier, owner, slots, max, max)
                .map_err(|e| at(e.to_string()))?;
            let comps: Vec<&[u8]> = url.path.iter().map(|s| s.as_bytes()).collect();
            let (dir, attr) = walk_v4(&mut c, &comps).map_err(walked)?;
            let fs = match c
                .call(Request::Fsinfo(&dir))
                .map_err(|e| at(e.to_string()))?
            {
                Reply::Fsinfo(f) => f,
                _ => FsInfo::default(),
            };
            if let Some(s) = c.st.v4.as_mut() {
                if fs.lease > 0 {
                    s.lease = Duration::from_secs(fs.lease as u64);
                }
            }
            let bound =
                c.st.v4
                    .as_ref()
                    .map_or(u32::MAX, |s| s.max_resp.min(s.max_req));
            sizes(&mut c, fs, o, bound.saturating_sub(1024));
            (c, dir, attr)
        }
    };
    if attr.kind != FileType::Directory {
        return Err(at(format!(
            "{} is not a directory on the server",
            url.path_string()
        )));
    }
    Ok(Mount { client, dir, attr })
}

/// Calls per user request at most.
fn parts(o: &Options) -> usize {
    let x = o
        .rsize
        .unwrap_or(1 << 20)
        .min(o.wsize.unwrap_or(1 << 20))
        .max(4096);
    (o.max_io.div_ceil(x)).max(1) as usize
}

fn client(addr: SocketAddr, prog: u32, vers: u32, o: &Options) -> Result<Client, String> {
    let max_xfer = o.rsize.unwrap_or(1 << 20).max(o.wsize.unwrap_or(1 << 20));
    let cfg = Config {
        connections: o.connections,
        call_timeout: o.call_timeout,
        max_sends: o.max_sends,
        reconnect_for: o.reconnect_for,
        connect_timeout: o.connect_timeout,
        staging: 256 * 1024,
        max_record: max_xfer + 64 * 1024,
        // The user's requests split into calls, and the client's own.
        max_calls: (o.depth * parts(o) + 8).min(rpc::calls::MAX_CALLS),
    };
    let t =
        Transport::connect(addr, prog, vers, auth(o), cfg).map_err(|e| format!("{addr}: {e}"))?;
    Ok(Client::new(t, o.version, o.depth))
}

/// rsize and wsize: the server's maximum, its preference when the user
/// asked nothing, the user's when smaller; in 4 KiB steps.
fn sizes(c: &mut Client, fs: FsInfo, o: &Options, bound: u32) {
    let pick = |user: Option<u32>, max: u32, pref: u32| {
        let server = if max == 0 { 1 << 20 } else { max };
        let want = user.unwrap_or(if pref > 0 {
            pref.max(64 * 1024)
        } else {
            1 << 20
        });
        want.min(server).min(bound).clamp(4096, 1 << 20) & !4095
    };
    c.rsize = pick(o.rsize, fs.rtmax, fs.rtpref);
    c.wsize = pick(o.wsize, fs.wtmax, fs.wtpref);
}

/// MOUNT: the export the path lies in (the longest exported prefix, or,
/// when the server does not list its exports, the longest prefix it
/// mounts) and its root handle.
fn mount(addr: SocketAddr, path: &[String], o: &Options) -> Result<(String, Fh), String> {
    let a = auth(o);
    let wait = o.connect_timeout;
    let exports = call_once(
        addr,
        (v3::MOUNT_PROG, v3::MOUNT_VERS, v3::MOUNTPROC_EXPORT),
        &a,
        wait,
        |_| {},
    )
    .ok()
    .and_then(|r| v3::decode_exports(&r, 100_000).ok())
    .unwrap_or_default();
    let full = format!("/{}", path.join("/"));
    let mut candidates: Vec<String> = (1..=path.len())
        .rev()
        .map(|n| format!("/{}", path[..n].join("/")))
        .collect();
    if !exports.is_empty() {
        candidates.retain(|c| exports.iter().any(|e| e.trim_end_matches('/') == c));
        if candidates.is_empty() {
            return Err(format!(
                "no export of the server holds {full} (it exports {})",
                exports.join(", ")
            ));
        }
    }
    let mut last = String::new();
    for export in candidates {
        let r = call_once(
            addr,
            (v3::MOUNT_PROG, v3::MOUNT_VERS, v3::MOUNTPROC_MNT),
            &a,
            wait,
            |e| v3::encode_dirpath(e, &export),
        )
        .map_err(|e| format!("MOUNT {export}: {e}"))?;
        match v3::decode_mnt(&r) {
            Ok(fh) => return Ok((export, fh)),
            Err(why) => last = format!("MOUNT {export}: {why}"),
        }
    }
    Err(last)
}

/// LOOKUP down `path` from `root`, each step a directory.
fn walk_v3(c: &mut Client, root: Fh, path: &[&[u8]]) -> Result<(Fh, Attr), NfsError> {
    let mut fh = root;
    let mut attr = match c.call(Request::Getattr(&root))? {
        Reply::Attr(a) => a,
        _ => Attr::default(),
    };
    for name in path {
        if attr.kind != FileType::Directory {
            return Err(not_dir(attr.kind));
        }
        match c.call(Request::Lookup { dir: &fh, name })? {
            Reply::Handle { fh: f, attr: a } => {
                fh = f;
                attr = match a {
                    Some(a) => a,
                    None => match c.call(Request::Getattr(&fh))? {
                        Reply::Attr(a) => a,
                        _ => Attr::default(),
                    },
                };
            }
            _ => return Err(not_dir(FileType::Other(0))),
        }
    }
    Ok((fh, attr))
}

fn not_dir(kind: FileType) -> NfsError {
    NfsError::Invalid {
        op: OpKind::Lookup,
        what: if kind == FileType::Symlink {
            "a component of the path is a symbolic link on the server: not followed"
        } else {
            "a component of the path is not a directory"
        },
    }
}

/// PUTROOTFH and one LOOKUP per component, in compounds of at most 16.
fn walk_v4(c: &mut Client, path: &[&[u8]]) -> Result<(Fh, Attr), NfsError> {
    // One compound for the whole path keeps the server from following a
    // symlink? No server does: LOOKUP of a name under a symlink fails with
    // NFS4ERR_SYMLINK or NOTDIR; the last is checked to be a directory.
    if path.len() > 32 {
        return Err(NfsError::Invalid {
            op: OpKind::Lookup,
            what: "a path of more than 32 components",
        });
    }
    let bytes = c.raw(v4::PROC_COMPOUND, OpKind::Lookup, true, |e| {
        v4::encode_walk(e, path)
    })?;
    let (fh, attr) = v4reply::walk(&bytes, path.len()).map_err(|e| match e.status() {
        Some(10029) => not_dir(FileType::Symlink),
        _ => e,
    })?;
    Ok((fh, attr))
}
