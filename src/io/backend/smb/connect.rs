//! From an `smb://` URL to a logged-on client: who logs on (a guest, or a
//! user whose password comes from `VOLBENCH_SMB_PASSWORD` or the URL's
//! mode-0600 `credentials=` file, never the command line), what is
//! offered (the URL's dialect, signing, encryption), the server's address,
//! and the channels bound to the session. Every failure is one line
//! naming the URL without its query, before any I/O.

use std::net::ToSocketAddrs;
use std::path::{Path, PathBuf};

use crate::error::{Result, VbError};
use crate::proto::smb::auth::creds;
use crate::proto::smb::consts::Cipher;
use crate::proto::smb::session::client::Client;
use crate::proto::smb::session::{Auth, Options, Target};
use crate::proto::smb::url::{self, Encryption, Url};

/// The URL a target path holds, parsed (the one parser, `proto::smb::url`).
pub(crate) fn url_of(path: &Path) -> Result<Url> {
    let text = path
        .to_str()
        .ok_or_else(|| VbError::input("an smb:// target must be UTF-8 text"))?;
    url::parse(text).map_err(VbError::input)
}

/// `target` with `--smb-channels N` in its URL (`channels=N`): one
/// setting, carried by the target to every host and into the result; the
/// flag and the key given with different values is an error.
pub(crate) fn with_channels(target: &Path, n: u64) -> Result<PathBuf> {
    let u = url_of(target)?;
    match u.channels {
        Some(m) if m as u64 == n => return Ok(target.to_path_buf()),
        Some(m) => {
            return Err(VbError::input(format!(
                "--smb-channels {n} and the URL's channels={m} disagree: give one"
            )));
        }
        None => {}
    }
    let text = target.to_string_lossy();
    let sep = if text.contains('?') { '&' } else { '?' };
    let out = PathBuf::from(format!("{text}{sep}channels={n}"));
    url_of(&out)?;
    Ok(out)
}

/// Who logs on, as the URL says: read anew for every client (a worker's
/// too), so the password lives only as long as a client needs it.
pub(crate) fn auth_of(u: &Url) -> Result<Auth> {
    let Some(user) = &u.user else {
        return Ok(Auth::Guest);
    };
    let domain = u.domain.clone().unwrap_or_default();
    if let Some(file) = &u.credentials {
        let mut c = creds::from_file(Path::new(file), Some(user))
            .map_err(|e| VbError::input(format!("{u}: {e}")))?;
        if u.domain.is_some() {
            c.domain = domain;
        }
        return Ok(Auth::Ntlm(c));
    }
    creds::from_env(user, &domain)
        .map(Auth::Ntlm)
        .ok_or_else(|| {
            VbError::input(format!(
                "{u}: no password for {user}: set VOLBENCH_SMB_PASSWORD or give credentials=FILE \
             (a mode-0600 file with password=); leave the user out for a guest logon"
            ))
        })
}

/// What the client offers, as the URL asks.
pub(crate) fn options_of(u: &Url) -> Options {
    let mut o = Options::default();
    if let Some(d) = u.dialect {
        o.dialects = vec![d];
    }
    if let Some(s) = u.signing {
        o.signing = s;
    }
    o.encryption = match u.encryption {
        None | Some(Encryption::Off) => Vec::new(),
        Some(Encryption::On) => Cipher::ALL.to_vec(),
        Some(Encryption::Only(c)) => vec![c],
    };
    o
}

/// The server's first address.
fn target_of(u: &Url) -> Result<Target> {
    let addr = (u.host.as_str(), u.port())
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(|| {
            VbError::target(format!(
                "cannot reach the SMB target {u}: {} does not resolve to an address",
                u.host
            ))
        })?;
    Ok(Target {
        server: u.host.clone(),
        addr,
        share: u.share.clone(),
    })
}

/// A client logged on to the URL's share with `channels` channels bound
/// to its session, and what was asked of the encryption checked against
/// what the server agreed to.
pub(crate) fn connect(u: &Url, mut opts: Options, channels: usize) -> Result<Client> {
    let fail = |e: &dyn std::fmt::Display| {
        VbError::target(format!("cannot reach the SMB target {u}: {e}"))
    };
    let auth = auth_of(u)?;
    let target = target_of(u)?;
    opts.credit_target = opts.credit_target.max(16);
    let mut c = Client::connect(target, auth, opts).map_err(|e| fail(&e))?;
    if let Some(Encryption::Only(want)) = u.encryption {
        let got = c.negotiated().cipher;
        if got != Some(want) {
            c.logoff();
            return Err(fail(&format!(
                "the server agreed to {} where encryption={} was asked (dialect {})",
                got.map_or("no encryption", Cipher::name),
                want.name(),
                c.negotiated().dialect.name()
            )));
        }
    }
    if channels > 1 {
        if let Err(e) = c.add_channels(channels, &[]) {
            c.logoff();
            return Err(fail(&e));
        }
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smb_channels_go_into_the_url_once() {
        let p = |s: &str| Path::new(s).to_path_buf();
        assert_eq!(
            with_channels(&p("smb://s/sh/d"), 4).unwrap(),
            p("smb://s/sh/d?channels=4")
        );
        assert_eq!(
            with_channels(&p("smb://s/sh/d?dialect=3.1.1"), 2).unwrap(),
            p("smb://s/sh/d?dialect=3.1.1&channels=2")
        );
        assert_eq!(
            with_channels(&p("smb://s/sh?channels=2"), 2).unwrap(),
            p("smb://s/sh?channels=2")
        );
        let e = with_channels(&p("smb://s/sh?channels=3"), 2).unwrap_err();
        assert!(e.message.contains("disagree"), "{e}");
        assert!(with_channels(&p("smb://s/sh"), 33).is_err());
    }

    #[test]
    fn the_url_decides_what_is_offered_and_who_logs_on() {
        let u = url::parse("smb://s/sh?dialect=3.0&signing=on&encryption=aes-128-ccm").unwrap();
        let o = options_of(&u);
        assert_eq!(o.dialects, [crate::proto::smb::consts::Dialect::Smb300]);
        assert_eq!(o.signing, crate::proto::smb::session::Signing::On);
        assert_eq!(o.encryption, [Cipher::Aes128Ccm]);
        assert!(matches!(auth_of(&u), Ok(Auth::Guest)));
        // A credentials file others can read is refused, naming the file,
        // never its content.
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("creds");
        std::fs::write(&f, "password=hunter2\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        let u = url::parse(&format!("smb://bench@s/sh?credentials={}", f.display())).unwrap();
        let e = auth_of(&u).unwrap_err();
        assert!(
            e.message.contains("chmod 600") && !e.message.contains("hunter2"),
            "{e}"
        );
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
        match auth_of(&u) {
            Ok(Auth::Ntlm(c)) => assert_eq!(c.user, "bench"),
            other => panic!("{other:?}"),
        }
    }
}
