//! A `--map` whose TO is an `smb://` or `nfs://` URL: a Windows share
//! (`\\server\share\`) reached by volbench's own client, with no mount.
//! What follows the mapped prefix joins the URL's path one component at a
//! time, never leaving it; the URL's user and query options are kept, and
//! no text here ever holds a password (the URL parsers refuse one).
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use crate::proto::url_text::Escaped;

/// Whether `to` names storage by URL rather than by a path here.
pub(super) fn is_url(to: &str) -> bool {
    crate::io::backend::is_url(std::path::Path::new(to))
}

/// Checks a map's TO URL once, when the map is read: it parses and this
/// build reaches its storage. The error names only FROM and the parser's
/// words, which never show a password (the parsers scrub it), since the
/// map's text itself may hold one.
pub(super) fn check_to(from: &str, to: &str) -> std::result::Result<(), String> {
    if crate::io::backend::url_storage(std::path::Path::new(to)).is_none() {
        let scheme = to.split("://").next().unwrap_or_default();
        return Err(format!(
            "--map '{from}=...': TO must be an absolute path on this machine, or an smb:// \
             or nfs:// URL (volbench's own clients), not {scheme}://"
        ));
    }
    crate::io::backend::check_url(std::path::Path::new(to))
        .map_err(|e| format!("--map '{from}=...': {}", e.message))
}

/// `rest` (what follows the mapped prefix, either slash) joined to the
/// URL `to`, its query kept at the end. A `..` is refused rather than
/// resolved: on a share the server, not volbench, would say where it
/// leads, and the user mapped this share alone.
pub(super) fn join(raw: &str, to: &str, rest: &str) -> std::result::Result<String, String> {
    let (base, query) = match to.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (to, None),
    };
    let mut out = base.trim_end_matches('/').to_string();
    for c in rest.split(['\\', '/']) {
        match c {
            "" | "." => {}
            ".." => {
                return Err(format!(
                    "'{raw}' leaves the mapped share by '..'; name the path inside it, or map \
                     its own prefix"
                ));
            }
            c => {
                out.push('/');
                out.push_str(&Escaped(c).to_string());
            }
        }
    }
    if let Some(q) = query {
        out.push('?');
        out.push_str(q);
    }
    // A name the protocol cannot hold (a stream's ':', a wildcard) is
    // refused here by the URL's own parser, in its words.
    crate::io::backend::check_url(std::path::Path::new(&out)).map_err(|e| e.message)?;
    Ok(out)
}

/// The directory holding the file a URL names, its query kept: where
/// volbench's own file set goes for a file the tool would create there.
pub(super) fn parent(url: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let scheme_end = base.find("://").map_or(0, |i| i + 3);
    let trimmed = base.trim_end_matches('/');
    let dir = match trimmed.rfind('/') {
        Some(i) if i >= scheme_end => trimmed.get(..i).unwrap_or(trimmed),
        _ => trimmed,
    };
    match query {
        Some(q) => format!("{dir}?{q}"),
        None => dir.to_string(),
    }
}

/// Why a URL cannot be used as an existing file or device: volbench's
/// SMB and NFS back ends run on file sets of their own in a directory.
pub(super) fn existing_file(url: &str, remedy: &str) -> String {
    let shown = crate::io::backend::shown(std::path::Path::new(url));
    format!(
        "{} is a file on a server volbench reaches by its own client, which runs only on \
         volbench's own file set in a directory; {remedy} (the set goes in {})",
        shown.display(),
        crate::io::backend::shown(std::path::Path::new(&parent(url))).display()
    )
}
