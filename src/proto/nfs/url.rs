//! `nfs://SERVER[:PORT]/EXPORT/DIR[?key=value&...]`: the target's URL,
//! parsed strictly. The keys are libnfs's where they mean the same (so
//! fio's `nfs_url=` carries over): `version`, `uid`, `gid`, `nfsport`,
//! `mountport`, plus `nconnect`, `rsize`, `wsize` and `reconnect`. An unknown or
//! repeated key, a path with `.` or `..`, a port or number out of range:
//! one clear error, never a value silently dropped.

use super::types::{NAME_MAX, Version};
use crate::error::clip;
use crate::proto::url_text::{self, Escaped, decode};

/// The longest path the MOUNT protocol takes.
const MAX_PATH: usize = 1024;
/// The most connections a client opens (`units::bounds`).
pub(crate) const MAX_CONNECTIONS: usize = crate::units::bounds::MAX_NFS_CONNECTIONS as usize;
/// rsize and wsize: 4 KiB to 16 MiB.
pub(crate) const MIN_XFER: u32 = 4096;
pub(crate) const MAX_XFER: u32 = 16 << 20;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Url {
    /// The server's name or address (an IPv6 address without brackets).
    pub(crate) host: String,
    /// The port in the authority (the NFS port), if given.
    pub(crate) port: Option<u16>,
    /// The path's components, percent-decoded: the export, then the directory.
    pub(crate) path: Vec<String>,
    pub(crate) version: Option<Version>,
    pub(crate) uid: Option<u32>,
    pub(crate) gid: Option<u32>,
    pub(crate) nfsport: Option<u16>,
    pub(crate) mountport: Option<u16>,
    pub(crate) nconnect: Option<usize>,
    pub(crate) rsize: Option<u32>,
    pub(crate) wsize: Option<u32>,
    /// Seconds a lost server is dialled again before its calls fail.
    pub(crate) reconnect: Option<u64>,
}

impl Url {
    /// The path as the server sees it ("/export/dir").
    pub(crate) fn path_string(&self) -> String {
        format!("/{}", self.path.join("/"))
    }
}

impl std::fmt::Display for Url {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.host.contains(':') {
            write!(f, "nfs://[{}]", self.host)?;
        } else {
            write!(f, "nfs://{}", self.host)?;
        }
        if let Some(p) = self.port {
            write!(f, ":{p}")?;
        }
        for c in &self.path {
            write!(f, "/{}", Escaped(c))?;
        }
        Ok(())
    }
}

fn number<T: std::str::FromStr>(key: &str, v: &str, lo: u64, hi: u64) -> Result<T, String> {
    let n: u64 = v
        .parse()
        .map_err(|_| format!("{key}={}: not a whole number", clip(v)))?;
    if n < lo || n > hi {
        return Err(format!("{key}={n}: out of range ({lo} to {hi})"));
    }
    v.parse().map_err(|_| format!("{key}={n}: out of range"))
}

/// Parses an `nfs://` URL.
pub fn parse(s: &str) -> Result<Url, String> {
    let err = |why: String| format!("'{}' is not an NFS URL: {why}", clip(s));
    let rest = s
        .strip_prefix("nfs://")
        .ok_or_else(|| err("it must start with nfs://".into()))?;
    if rest.contains('#') {
        return Err(err("a fragment (#) means nothing here".into()));
    }
    let (rest, query) = match rest.split_once('?') {
        Some((r, q)) => (r, Some(q)),
        None => (rest, None),
    };
    let (auth, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    if auth.contains('@') {
        return Err(err(
            "user names go in uid= and gid=, not before the server".into()
        ));
    }
    let (host, port) = url_text::host_port(auth).map_err(err)?;
    let port = port
        .map(|p| number::<u16>("port", p, 1, 65535))
        .transpose()
        .map_err(err)?;
    // Bounded as written (each byte escaped at most: three) and, below,
    // as decoded, so what is shown, escaped again, parses back.
    if path.len() > 3 * MAX_PATH {
        return Err(err(format!("a path longer than {MAX_PATH} bytes")));
    }
    let mut components = Vec::new();
    for c in path.split('/').filter(|c| !c.is_empty()) {
        let c = decode(c).map_err(err)?;
        if c == "." || c == ".." {
            return Err(err("'.' and '..' are not allowed in the path".into()));
        }
        if c.len() > NAME_MAX || c.contains('\0') || c.contains('/') {
            return Err(err(format!("a bad path component '{}'", clip(&c))));
        }
        components.push(c);
    }
    if components.is_empty() {
        return Err(err("no export named (nfs://SERVER/EXPORT/DIR)".into()));
    }
    if components.iter().map(|c| c.len() + 1).sum::<usize>() > MAX_PATH {
        return Err(err(format!("a path longer than {MAX_PATH} bytes")));
    }
    let mut url = Url {
        host,
        port,
        path: components,
        version: None,
        uid: None,
        gid: None,
        nfsport: None,
        mountport: None,
        nconnect: None,
        rsize: None,
        wsize: None,
        reconnect: None,
    };
    let mut seen = Vec::new();
    for kv in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| err(format!("'{}' is not key=value", clip(kv))))?;
        if seen.contains(&k) {
            return Err(err(format!("{}= given twice", clip(k))));
        }
        seen.push(k);
        let max_u32 = u32::MAX as u64;
        match k {
            "version" => {
                url.version = Some(match v {
                    "3" => Version::V3,
                    "4.1" => Version::V41,
                    "4" | "4.0" => {
                        return Err(err(
                            "version 4.0 is not supported: use version=4.1 (sessions) or 3".into(),
                        ));
                    }
                    "4.2" => {
                        return Err(err(
                            "version 4.2 is not supported yet: use version=4.1 or 3".into(),
                        ));
                    }
                    _ => return Err(err(format!("version={}: use 3 or 4.1", clip(v)))),
                })
            }
            "uid" => url.uid = Some(number("uid", v, 0, max_u32).map_err(err)?),
            "gid" => url.gid = Some(number("gid", v, 0, max_u32).map_err(err)?),
            "nfsport" => url.nfsport = Some(number("nfsport", v, 1, 65535).map_err(err)?),
            "mountport" => url.mountport = Some(number("mountport", v, 1, 65535).map_err(err)?),
            "nconnect" => {
                url.nconnect = Some(number("nconnect", v, 1, MAX_CONNECTIONS as u64).map_err(err)?)
            }
            "rsize" => {
                url.rsize = Some(number("rsize", v, MIN_XFER as u64, MAX_XFER as u64).map_err(err)?)
            }
            "wsize" => {
                url.wsize = Some(number("wsize", v, MIN_XFER as u64, MAX_XFER as u64).map_err(err)?)
            }
            "reconnect" => {
                let max = crate::units::bounds::MAX_NFS_RECONNECT_SECS;
                url.reconnect = Some(number("reconnect", v, 1, max).map_err(err)?)
            }
            _ => {
                return Err(err(format!(
                    "unknown key '{}' (known: version, uid, gid, nfsport, mountport, nconnect, \
                     rsize, wsize, reconnect)",
                    clip(k)
                )));
            }
        }
    }
    if url.port.is_some() && url.nfsport.is_some() {
        return Err(err(
            "the port is given twice (SERVER:PORT and nfsport=)".into()
        ));
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_full_url_parses() {
        let u = parse(
            "nfs://10.0.0.5:2049/exports/bench%20dir?version=4.1&uid=1000&gid=100&nconnect=8",
        )
        .unwrap();
        assert_eq!(u.host, "10.0.0.5");
        assert_eq!(u.port, Some(2049));
        assert_eq!(u.path, ["exports", "bench dir"]);
        assert_eq!(u.version, Some(Version::V41));
        assert_eq!((u.uid, u.gid, u.nconnect), (Some(1000), Some(100), Some(8)));
        let v6 = parse("nfs://[::1]:20490/x").unwrap();
        assert_eq!((v6.host.as_str(), v6.port), ("::1", Some(20490)));
        assert_eq!(v6.to_string(), "nfs://[::1]:20490/x");
        assert_eq!(parse("nfs://x/y?reconnect=5").unwrap().reconnect, Some(5));
    }

    #[test]
    fn bad_urls_say_what_is_wrong() {
        for (url, why) in [
            ("http://x/y", "nfs://"),
            ("nfs://x", "no export"),
            ("nfs:///y", "no server"),
            ("nfs://x/a/../b", "'..'"),
            ("nfs://x:99999/y", "out of range"),
            ("nfs://x/y?version=5", "use 3 or 4.1"),
            ("nfs://x/y?version=4", "4.0 is not supported"),
            ("nfs://x/y?vers=3", "unknown key 'vers'"),
            ("nfs://x/y?uid=1&uid=2", "twice"),
            ("nfs://x/y?nconnect=0", "out of range"),
            ("nfs://x/y?rsize=100", "out of range"),
            ("nfs://x/y%zz", "percent"),
            ("nfs://[::1/y", "closing"),
            ("nfs://x:1/y?nfsport=2", "twice"),
            ("nfs://x/y?reconnect=0", "out of range (1 to 3600)"),
            ("nfs://x/y?reconnect=1h", "not a whole number"),
        ] {
            let e = parse(url).unwrap_err();
            assert!(e.contains(why), "{url}: {e}");
        }
    }

    proptest! {
        #[test]
        fn any_text_parses_or_fails_without_panic(s in "nfs://[ -~]{0,40}") {
            let _ = parse(&s);
        }
    }
}
