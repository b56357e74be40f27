//! `smb://[USER@]SERVER[:PORT]/SHARE[/DIR...][?key=value&...]`: an SMB
//! target's URL, parsed strictly, the one parser of it (the back end, the
//! command line's checks and the fuzz target all call `parse`). The keys:
//! `dialect` (2.1, 3.0, 3.0.2 or 3.1.1: offer only that one), `signing`
//! (auto, on, off), `encryption` (off, on, or one cipher), `channels`
//! (1..32, multichannel), `domain`, `credentials` (a mode-0600 file
//! holding the password), and `reconnect` (seconds a lost server is dialled
//! again before the run ends, 1..3600, NFS's bound). A password in the URL, an unknown or repeated
//! key, a path component with `.`, `..`, a stream (`:`) or a wildcard:
//! one clear error, never a value silently dropped.

use super::consts::{Cipher, Dialect};
use super::session::Signing;
use crate::error::clip;
use crate::proto::url_text::{self, Escaped, decode};

/// The default SMB port (Direct TCP).
// The smb:// back end that connects is Unix only for now; Windows parses.
#[cfg_attr(not(unix), allow(dead_code))]
pub(crate) const PORT: u16 = 445;
/// The most channels one session binds (`units::bounds`).
pub(crate) const MAX_CHANNELS: usize = crate::units::bounds::MAX_SMB_CHANNELS as usize;
/// The longest path below the share ([MS-FSCC] allows 32767 UTF-16 units;
/// a benchmark directory needs far fewer).
const MAX_PATH: usize = 1024;
/// The longest name of one component, and of a share (NetBIOS-era shares
/// are 80 characters at most).
const NAME_MAX: usize = 255;
const SHARE_MAX: usize = 80;

/// What the user asked for the encryption.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encryption {
    /// Only when the server or the share demands it.
    Off,
    /// Any cipher the server agrees to, AES-128-GCM first.
    On,
    /// This cipher, or no session.
    Only(Cipher),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Url {
    /// The server's name or address (an IPv6 address without brackets).
    pub(crate) host: String,
    pub(crate) port: Option<u16>,
    /// Who logs on; `None` is a guest (anonymous) logon.
    pub(crate) user: Option<String>,
    pub(crate) share: String,
    /// The directory below the share, one component each, percent-decoded.
    pub(crate) path: Vec<String>,
    pub(crate) dialect: Option<Dialect>,
    pub(crate) signing: Option<Signing>,
    pub(crate) encryption: Option<Encryption>,
    pub(crate) channels: Option<usize>,
    pub(crate) domain: Option<String>,
    /// A credentials file (`username=`, `password=`, `domain=` lines).
    pub(crate) credentials: Option<String>,
    /// How long a lost server is dialled again, in seconds
    /// (`units::bounds::MAX_SMB_RECONNECT_SECS`).
    pub(crate) reconnect: Option<u64>,
}

#[cfg_attr(not(unix), allow(dead_code))]
impl Url {
    /// The directory below the share, '/'-separated ("" for the root).
    pub(crate) fn dir(&self) -> String {
        self.path.join("/")
    }

    pub(crate) fn port(&self) -> u16 {
        self.port.unwrap_or(PORT)
    }
}

impl std::fmt::Display for Url {
    /// The URL without its query: what messages and results show (no key,
    /// no credentials file, and never a password, which a URL cannot hold).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("smb://")?;
        if let Some(u) = &self.user {
            write!(f, "{}@", Escaped(u))?;
        }
        if self.host.contains(':') {
            write!(f, "[{}]", self.host)?;
        } else {
            f.write_str(&self.host)?;
        }
        if let Some(p) = self.port {
            write!(f, ":{p}")?;
        }
        write!(f, "/{}", Escaped(&self.share))?;
        for c in &self.path {
            write!(f, "/{}", Escaped(c))?;
        }
        Ok(())
    }
}

/// Whether `c` is a name an SMB path component can be without meaning
/// something else: no separator, no stream (`:`), no wildcard, no control
/// character, not `.` or `..`.
pub(crate) fn component_ok(c: &str) -> bool {
    !c.is_empty()
        && c != "."
        && c != ".."
        && c.len() <= NAME_MAX
        && !c
            .chars()
            .any(|ch| ch.is_control() || "\\/:*?\"<>|".contains(ch))
}

fn number(key: &str, v: &str, lo: u64, hi: u64) -> Result<u64, String> {
    let n: u64 = v
        .parse()
        .map_err(|_| format!("{key}={}: not a whole number", clip(v)))?;
    if n < lo || n > hi {
        return Err(format!("{key}={n}: out of range ({lo} to {hi})"));
    }
    Ok(n)
}

fn cipher(v: &str) -> Option<Cipher> {
    let v = v.to_ascii_uppercase().replace('_', "-");
    Cipher::ALL
        .into_iter()
        .find(|c| c.name() == v || c.name().replace('-', "") == v.replace('-', ""))
}

/// Splits `HOST[:PORT]` (the user already split off) into the host and
/// the port.
fn host_port(auth: &str) -> Result<(String, Option<u16>), String> {
    let (host, port) = url_text::host_port(auth)?;
    let port = port
        .map(|p| number("port", p, 1, 65535).map(|n| n as u16))
        .transpose()?;
    Ok((host, port))
}

/// `s` as an error may show it: a password someone put in it (after the
/// user's ':', or as a password= key) replaced by `***`.
fn scrub(s: &str) -> String {
    let (head, query) = match s.split_once('?') {
        Some((h, q)) => (h, Some(q)),
        None => (s, None),
    };
    let rest = head.strip_prefix("smb://").unwrap_or(head);
    let (auth, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let auth = match auth.rsplit_once('@') {
        Some((u, h)) if u.contains(':') => {
            let user = u.split(':').next().unwrap_or_default();
            format!("{user}:***@{h}")
        }
        _ => auth.to_string(),
    };
    let mut out = format!(
        "{}{auth}{path}",
        if head.starts_with("smb://") {
            "smb://"
        } else {
            ""
        }
    );
    if let Some(q) = query {
        let pairs: Vec<String> = q
            .split('&')
            .map(|kv| match kv.split_once('=') {
                Some((k, _)) if k == "password" || k == "pass" => format!("{k}=***"),
                _ => kv.to_string(),
            })
            .collect();
        out.push('?');
        out.push_str(&pairs.join("&"));
    }
    out.chars().take(200).collect()
}

/// Parses an `smb://` URL.
pub fn parse(s: &str) -> Result<Url, String> {
    let shown = clip(&scrub(s));
    let err = |why: String| format!("'{shown}' is not an SMB URL: {why}");
    let rest = s
        .strip_prefix("smb://")
        .ok_or_else(|| err("it must start with smb://".into()))?;
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
    let (user, auth) = match auth.rsplit_once('@') {
        Some((u, a)) => (Some(u), a),
        None => (None, auth),
    };
    let user = match user {
        Some(u) if u.contains(':') => {
            return Err(err(
                "a password never goes in the URL: set VOLBENCH_SMB_PASSWORD or give \
                 credentials=FILE (mode 0600)"
                    .into(),
            ));
        }
        Some(u) => {
            let u = decode(u).map_err(err)?;
            if u.is_empty() || u.len() > NAME_MAX || u.chars().any(|c| c.is_control()) {
                return Err(err("a bad user name before '@'".into()));
            }
            Some(u)
        }
        None => None,
    };
    let (host, port) = host_port(auth).map_err(err)?;
    // Bounded as written (each byte escaped at most: three) and, below,
    // as decoded, so what is shown, escaped again, parses back.
    if path.len() > 3 * MAX_PATH {
        return Err(err(format!("a path longer than {MAX_PATH} bytes")));
    }
    let mut components = Vec::new();
    for c in path.split('/').filter(|c| !c.is_empty()) {
        let c = decode(c).map_err(err)?;
        if !component_ok(&c) {
            return Err(err(format!(
                "'{}' is not a path component volbench uses ('.', '..', a stream ':' or \
                 a wildcard, a separator or a control character)",
                clip(&c)
            )));
        }
        components.push(c);
    }
    if components.is_empty() {
        return Err(err("no share named (smb://SERVER/SHARE/DIR)".into()));
    }
    if components.iter().map(|c| c.len() + 1).sum::<usize>() > MAX_PATH {
        return Err(err(format!("a path longer than {MAX_PATH} bytes")));
    }
    let share = components.remove(0);
    if share.len() > SHARE_MAX || share.contains(['[', ']', ';', '=', ',', '+']) {
        return Err(err(format!("'{}' is not a share name", clip(&share))));
    }
    let mut url = Url {
        host,
        port,
        user,
        share,
        path: components,
        dialect: None,
        signing: None,
        encryption: None,
        channels: None,
        domain: None,
        credentials: None,
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
        let v = decode(v).map_err(err)?;
        match k {
            "dialect" => {
                url.dialect = Some(Dialect::parse(&v).ok_or_else(|| {
                    err(format!(
                        "dialect={}: use 2.1, 3.0, 3.0.2 or 3.1.1",
                        clip(&v)
                    ))
                })?)
            }
            "signing" => {
                url.signing = Some(match v.as_str() {
                    "auto" => Signing::Auto,
                    "on" => Signing::On,
                    "off" => Signing::Off,
                    _ => return Err(err(format!("signing={}: use auto, on or off", clip(&v)))),
                })
            }
            "encryption" => {
                url.encryption = Some(match v.as_str() {
                    "off" => Encryption::Off,
                    "on" => Encryption::On,
                    c => Encryption::Only(cipher(c).ok_or_else(|| {
                        err(format!(
                            "encryption={}: use off, on, or a cipher (aes-128-gcm, \
                             aes-128-ccm, aes-256-gcm, aes-256-ccm)",
                            clip(&v)
                        ))
                    })?),
                })
            }
            "channels" => {
                url.channels =
                    Some(number("channels", &v, 1, MAX_CHANNELS as u64).map_err(err)? as usize)
            }
            "domain" => {
                if v.is_empty() || v.len() > NAME_MAX || v.chars().any(|c| c.is_control()) {
                    return Err(err("a bad domain=".into()));
                }
                url.domain = Some(v)
            }
            "credentials" => {
                if v.is_empty() || v.contains('\0') {
                    return Err(err("credentials= names no file".into()));
                }
                url.credentials = Some(v)
            }
            "reconnect" => {
                let max = crate::units::bounds::MAX_SMB_RECONNECT_SECS;
                url.reconnect = Some(number("reconnect", &v, 1, max).map_err(err)?)
            }
            "password" | "pass" => {
                return Err(err(
                    "a password never goes in the URL: set VOLBENCH_SMB_PASSWORD or give \
                     credentials=FILE (mode 0600)"
                        .into(),
                ));
            }
            _ => {
                return Err(err(format!(
                    "unknown key '{}' (known: dialect, signing, encryption, channels, domain, \
                     credentials, reconnect)",
                    k.chars().take(40).collect::<String>()
                )));
            }
        }
    }
    if url.user.is_none() && (url.domain.is_some() || url.credentials.is_some()) {
        return Err(err(
            "domain= and credentials= are for a user's logon: name the user (smb://USER@SERVER/...)"
                .into(),
        ));
    }
    if url.signing == Some(Signing::Off) && url.encryption.is_some_and(|e| e != Encryption::Off) {
        // Encryption signs every message: the two wishes contradict.
        return Err(err(
            "encryption signs every message: signing=off cannot go with it".into(),
        ));
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_full_url_parses_and_shows_without_its_query() {
        let u = parse(
            "smb://bench@10.0.0.5:4450/data/runs/a%20b?dialect=3.0.2&signing=on&\
             encryption=aes-256-gcm&channels=4&domain=LAB&credentials=/root/.smb",
        )
        .unwrap();
        assert_eq!(u.host, "10.0.0.5");
        assert_eq!((u.port, u.port()), (Some(4450), 4450));
        assert_eq!(u.user.as_deref(), Some("bench"));
        assert_eq!(u.share, "data");
        assert_eq!(u.path, ["runs", "a b"]);
        assert_eq!(u.dir(), "runs/a b");
        assert_eq!(u.dialect, Some(Dialect::Smb302));
        assert_eq!(u.signing, Some(Signing::On));
        assert_eq!(u.encryption, Some(Encryption::Only(Cipher::Aes256Gcm)));
        assert_eq!(u.channels, Some(4));
        assert_eq!(u.domain.as_deref(), Some("LAB"));
        assert_eq!(u.credentials.as_deref(), Some("/root/.smb"));
        assert_eq!(u.to_string(), "smb://bench@10.0.0.5:4450/data/runs/a b");
        let g = parse("smb://[::1]/share").unwrap();
        assert_eq!(
            (g.host.as_str(), g.port(), g.user.as_deref()),
            ("::1", 445, None)
        );
        assert_eq!(g.dir(), "");
        assert_eq!(g.to_string(), "smb://[::1]/share");
        assert_eq!(
            parse("smb://s/x?encryption=on").unwrap().encryption,
            Some(Encryption::On)
        );
        // reconnect= as NFS bounds it: 1 s up to an hour.
        assert_eq!(parse("smb://s/x").unwrap().reconnect, None);
        assert_eq!(parse("smb://s/x?reconnect=1").unwrap().reconnect, Some(1));
        assert_eq!(
            parse("smb://s/x?reconnect=3600").unwrap().reconnect,
            Some(3600)
        );
    }

    #[test]
    fn bad_urls_say_what_is_wrong() {
        for (url, why) in [
            ("nfs://x/y", "smb://"),
            ("smb://x", "no share"),
            ("smb:///y", "no server"),
            ("smb://x/s/a/../b", "'..'"),
            ("smb://x/s/file:stream", "stream"),
            ("smb://x/s/a*", "wildcard"),
            ("smb://x:0/s", "out of range"),
            ("smb://u:pw@x/s", "password never goes in the URL"),
            ("smb://u@x/s?password=pw", "password never goes in the URL"),
            ("smb://x/s?dialect=3.1", "use 2.1, 3.0, 3.0.2 or 3.1.1"),
            ("smb://x/s?signing=maybe", "auto, on or off"),
            ("smb://x/s?encryption=des", "a cipher"),
            ("smb://x/s?channels=33", "out of range"),
            ("smb://x/s?channels=0", "out of range"),
            ("smb://x/s?channels=2&channels=2", "given twice"),
            ("smb://x/s?reconnect=0", "out of range (1 to 3600)"),
            ("smb://x/s?reconnect=3601", "out of range (1 to 3600)"),
            ("smb://x/s?reconnect=1m", "not a whole number"),
            ("smb://x/s?vers=3", "unknown key 'vers'"),
            ("smb://x/s?domain=D", "name the user"),
            ("smb://u@x/s?signing=off&encryption=on", "signing=off"),
            ("smb://x/s#f", "fragment"),
            ("smb://x/s%zz", "percent"),
            ("smb://[::1/s", "closing"),
        ] {
            let e = parse(url).unwrap_err();
            assert!(e.contains(why), "{url}: {e}");
            assert!(!e.contains('\n'), "{url}: {e}");
            assert!(!e.contains("pw"), "a password shown: {e}");
        }
    }

    proptest! {
        #[test]
        fn any_text_is_a_url_or_one_line(s in "smb://[ -~]{0,80}") {
            match parse(&s) {
                Ok(u) => {
                    // What it shows parses back to the same place.
                    prop_assert!(u.path.iter().all(|c| component_ok(c)));
                    let again = parse(&u.to_string()).map_err(TestCaseError::fail)?;
                    prop_assert_eq!(again.host, u.host);
                    prop_assert_eq!(again.share, u.share);
                    prop_assert_eq!(again.path, u.path);
                    prop_assert_eq!(again.user, u.user);
                }
                Err(e) => prop_assert!(!e.is_empty() && !e.contains('\n')),
            }
        }
    }
}
