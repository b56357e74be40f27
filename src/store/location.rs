//! Where a store is: a SQLite file (a path, or the default one under the
//! user's data directory) or a PostgreSQL URL. A URL's password never
//! leaves this file: everything that prints, logs or records a store names
//! it by `shown`, the URL without its credentials, and any text a database
//! library returns is scrubbed of them first.

use std::path::PathBuf;

use crate::error::{Result, VbError};

pub(crate) use crate::spec::output::STORE_ENV as ENV;

#[derive(Clone)]
pub(crate) enum Location {
    File(PathBuf),
    Postgres(PgUrl),
}

/// A PostgreSQL URL: the whole text (secret) and what may be shown.
#[derive(Clone)]
pub(crate) struct PgUrl {
    url: String,
    shown: String,
    password: Option<String>,
}

impl std::fmt::Debug for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown())
    }
}

impl Location {
    /// `--store TEXT`: a `postgres://` or `postgresql://` URL, else a path;
    /// empty (the flag alone) is the default file.
    pub(crate) fn parse(text: &str) -> Result<Location> {
        let t = text.trim();
        if t.is_empty() {
            return default_file().map(Location::File);
        }
        let lower = t.to_ascii_lowercase();
        if lower.starts_with("postgres://") || lower.starts_with("postgresql://") {
            return PgUrl::parse(t).map(Location::Postgres);
        }
        if lower.contains("://") {
            let scheme = t.split("://").next().unwrap_or_default();
            return Err(VbError::input(format!(
                "--store: '{scheme}://' is not a store this volbench knows: a file path \
                 (SQLite) or postgres://HOST/DB"
            )));
        }
        if t.len() > crate::units::bounds::MAX_PATH_TEXT {
            return Err(VbError::input(format!(
                "--store: a path of {} bytes is past the bound of {}",
                t.len(),
                crate::units::bounds::MAX_PATH_TEXT
            )));
        }
        Ok(Location::File(PathBuf::from(t)))
    }

    /// The store a run writes to: `--store`, else `$VOLBENCH_STORE`, else
    /// none (history is kept only when asked).
    pub(crate) fn for_run(flag: Option<&str>) -> Result<Option<Location>> {
        match flag.map(str::to_string).or_else(env_store) {
            Some(t) => Location::parse(&t).map(Some),
            None => Ok(None),
        }
    }

    /// The store a command reads: `--store`, else `$VOLBENCH_STORE`, else
    /// the default file.
    pub(crate) fn for_reading(flag: Option<&str>) -> Result<Location> {
        match flag.map(str::to_string).or_else(env_store) {
            Some(t) => Location::parse(&t),
            None => default_file().map(Location::File),
        }
    }

    /// How the store is named in every message: the path, or the URL
    /// without user password.
    pub(crate) fn shown(&self) -> String {
        match self {
            Location::File(p) => p.display().to_string(),
            Location::Postgres(u) => u.shown.clone(),
        }
    }

    /// `text` with the credentials of this location taken out, for a
    /// message that came from a database library.
    pub(crate) fn scrub(&self, text: &str) -> String {
        match self {
            Location::File(_) => text.to_string(),
            Location::Postgres(u) => u.scrub(text),
        }
    }
}

fn env_store() -> Option<String> {
    std::env::var(ENV).ok().filter(|v| !v.trim().is_empty())
}

/// The default store: `$XDG_DATA_HOME/volbench/history.db` (else
/// `~/.local/share/...`); `%LOCALAPPDATA%\volbench\history.db` on Windows.
pub(crate) fn default_file() -> Result<PathBuf> {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    let base = if cfg!(windows) {
        var("LOCALAPPDATA")
    } else {
        var("XDG_DATA_HOME").or_else(|| var("HOME").map(|h| h.join(".local").join("share")))
    };
    base.map(|b| b.join("volbench").join("history.db"))
        .ok_or_else(|| {
            VbError::input(
                "no default store: neither XDG_DATA_HOME nor HOME names an absolute directory; \
                 give --store PATH",
            )
        })
}

impl PgUrl {
    fn parse(url: &str) -> Result<PgUrl> {
        let (scheme, rest) = url.split_once("://").unwrap_or(("postgres", url));
        let (auth, tail) = match rest.rsplit_once('@') {
            Some((a, t)) if !a.contains('/') => (Some(a), t),
            _ => (None, rest),
        };
        let (user, password) = match auth {
            Some(a) => match a.split_once(':') {
                Some((u, p)) => (Some(u), Some(p)),
                None => (Some(a), None),
            },
            None => (None, None),
        };
        // A password given as a query parameter is a credential too.
        let (path, query) = tail.split_once('?').unwrap_or((tail, ""));
        let mut kept = Vec::new();
        let mut query_password = None;
        for kv in query.split('&').filter(|s| !s.is_empty()) {
            match kv.split_once('=') {
                Some((k, v)) if k.eq_ignore_ascii_case("password") => {
                    query_password = Some(v.to_string());
                }
                _ => kept.push(kv),
            }
        }
        let mut shown = format!("{scheme}://");
        if let Some(u) = user.filter(|u| !u.is_empty()) {
            shown.push_str(u);
            shown.push('@');
        }
        shown.push_str(path);
        if !kept.is_empty() {
            shown.push('?');
            shown.push_str(&kept.join("&"));
        }
        let password = password
            .map(percent_decode)
            .or(query_password.as_deref().map(percent_decode))
            .filter(|p| !p.is_empty());
        Ok(PgUrl {
            url: url.to_string(),
            shown,
            password,
        })
    }

    /// The URL to connect with (secret: never printed).
    pub(crate) fn secret(&self) -> &str {
        &self.url
    }

    pub(crate) fn has_password(&self) -> bool {
        self.password.is_some()
    }

    pub(crate) fn scrub(&self, text: &str) -> String {
        let mut t = text.replace(&self.url, &self.shown);
        if let Some(p) = &self.password {
            t = t.replace(p.as_str(), "***");
            // As written in the URL, percent-encoded.
            if let Some(raw) = raw_password(&self.url).filter(|r| !r.is_empty()) {
                t = t.replace(raw, "***");
            }
        }
        t
    }
}

fn raw_password(url: &str) -> Option<&str> {
    let rest = url.split_once("://")?.1;
    let (auth, _) = rest.rsplit_once('@')?;
    auth.split_once(':').map(|(_, p)| p)
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (b[i], b.get(i + 1).copied(), b.get(i + 2).copied()) {
            (b'%', Some(h), Some(l)) if hex(h).is_some() && hex(l).is_some() => {
                out.push((hex(h).unwrap_or(0) * 16 + hex(l).unwrap_or(0)) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_postgres_url_is_shown_without_its_password() {
        let l = Location::parse("postgres://ci:s3cr%40t@db.example:5433/bench?sslmode=disable")
            .unwrap();
        assert_eq!(
            l.shown(),
            "postgres://ci@db.example:5433/bench?sslmode=disable"
        );
        assert!(!format!("{l:?}").contains("s3cr"));
        let Location::Postgres(u) = &l else {
            panic!("not postgres")
        };
        assert!(u.has_password());
        assert_eq!(
            l.scrub("password authentication failed: s3cr@t / s3cr%40t"),
            "password authentication failed: *** / ***"
        );
        let q = Location::parse("postgresql://h/db?user=u&password=hunter2&x=1").unwrap();
        assert_eq!(q.shown(), "postgresql://h/db?user=u&x=1");
        assert_eq!(q.scrub("hunter2"), "***");
    }

    #[test]
    fn paths_and_unknown_schemes() {
        assert!(matches!(
            Location::parse("/tmp/h.db").unwrap(),
            Location::File(_)
        ));
        let e = Location::parse("mysql://x/y").unwrap_err().to_string();
        assert!(e.contains("'mysql://' is not a store"), "{e}");
    }
}
