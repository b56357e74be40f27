//! `--push-binary` to a Windows host: volbench.exe copied over SFTP (the
//! server Windows' OpenSSH ships) into the push directory, named by its
//! content hash and reused when already there, as the Linux push does
//! through the shell (`push/shell/`).
//!
//! The push rules (`push/mod.rs`) as SFTP requests: directories are
//! reached component by component with LSTAT and a link (or a junction,
//! which Windows' server shows as one) is refused; the file is created new
//! (CREAT|EXCL) under a temporary name of its own, and renamed with SFTP
//! v3's RENAME, which does not replace; a file already at the content name
//! that is not this volbench.exe is refused, never overwritten; stale
//! temporaries of pushes whose far side died are removed by READDIR, LSTAT
//! and REMOVE, their age read against the host's own clock.

use std::time::Duration;

use super::super::launch::{Launcher, RemoteCmd, cmdline};
use super::sftp::{self, Attrs, Kind, Session};
use super::{STALE, Swept};
use crate::error::{Result, VbError};
use crate::units::bounds::one_line;

/// A push directory as a Windows host reads it: under a drive's root, or
/// under the home directory (where the SFTP server starts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WinDir {
    drive: Option<char>,
    parts: Vec<String>,
}

/// How the server names absolute paths: Windows' OpenSSH as `/C:/dir`
/// (what its REALPATH answers); a server that names its home the POSIX way
/// (Cygwin's, MSYS2's) takes a Win32 path as it is, `C:/dir`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    SlashDrive,
    BareDrive,
}

impl WinDir {
    /// `D:\volbench`, `D:/volbench`, `~/.cache/volbench` or a relative
    /// path (under the home directory); the reason when it is none of
    /// those or a part of it is no Windows name.
    pub(crate) fn parse(text: &str) -> std::result::Result<WinDir, String> {
        let shown = one_line(text);
        let b = text.as_bytes();
        let (drive, rest) = match b {
            [d, b':', b'/' | b'\\', ..] if d.is_ascii_alphabetic() => {
                (Some(char::from(*d).to_ascii_uppercase()), text.get(3..))
            }
            [d, b':'] if d.is_ascii_alphabetic() => {
                (Some(char::from(*d).to_ascii_uppercase()), Some(""))
            }
            [b'~'] => (None, Some("")),
            [b'~', b'/' | b'\\', ..] => (None, text.get(2..)),
            [b'/' | b'\\', ..] | [_, b':', ..] => {
                return Err(format!(
                    "'{shown}' is no directory a Windows host can push into: give a drive \
                     path (D:\\volbench) or one under the home directory (~/.cache/volbench)"
                ));
            }
            _ => (None, Some(text)),
        };
        let mut parts = Vec::new();
        for p in rest.unwrap_or_default().split(['/', '\\']) {
            if p.is_empty() || p == "." {
                continue;
            }
            if p == ".." {
                return Err(format!("'{shown}': '..' has no place in a push directory"));
            }
            if let Some(c) = p
                .chars()
                .find(|c| c.is_control() || matches!(c, '<' | '>' | ':' | '"' | '|' | '?' | '*'))
            {
                return Err(format!("'{shown}': {c:?} cannot be in a Windows file name"));
            }
            if let Some(why) = crate::io::target::bad_windows_name(p) {
                return Err(format!("'{shown}': {why}"));
            }
            parts.push(p.to_string());
        }
        let dir = WinDir { drive, parts };
        // A drive path is the program's path as cmd.exe will see it.
        if let Some(why) = dir
            .cmd_path("volbench.exe")
            .and_then(|p| cmdline::bad_program(&p))
        {
            return Err(why);
        }
        Ok(dir)
    }

    /// The SFTP name of the directory's first `n` parts, with `leaf` after.
    fn sftp(&self, style: Style, n: usize, leaf: Option<&str>) -> String {
        let mut words: Vec<&str> = self.parts.iter().take(n).map(String::as_str).collect();
        words.extend(leaf);
        let joined = words.join("/");
        match (self.drive, style) {
            (Some(d), Style::SlashDrive) => format!("/{d}:/{joined}"),
            (Some(d), Style::BareDrive) => format!("{d}:/{joined}"),
            (None, _) if joined.is_empty() => ".".to_string(),
            (None, _) => joined,
        }
    }

    /// What cmd.exe runs, when the directory is known without asking the
    /// host (a drive path).
    fn cmd_path(&self, leaf: &str) -> Option<String> {
        let d = self.drive?;
        let mut words: Vec<&str> = self.parts.iter().map(String::as_str).collect();
        words.push(leaf);
        Some(format!("{d}:\\{}", words.join("\\")))
    }
}

/// A Windows path out of a server's absolute name: `/C:/Users/me` (and
/// the `C:/Users/me` or `C:\Users\me` of older servers) to `C:\Users\me`;
/// None for a name with no drive.
fn windows_of(name: &str) -> Option<String> {
    let n = name.strip_prefix('/').unwrap_or(name);
    match n.as_bytes() {
        [d, b':', b'/' | b'\\', ..] | [d, b':'] if d.is_ascii_alphabetic() => {
            let rest = n.get(2..).unwrap_or_default().replace('/', "\\");
            let rest = if rest.is_empty() { "\\".into() } else { rest };
            Some(format!("{}:{rest}", char::from(*d).to_ascii_uppercase()))
        }
        _ => None,
    }
}

/// The name a copy of `bytes` takes in the push directory.
pub(crate) fn exe_name(bytes: &[u8]) -> String {
    super::copy_name(bytes, ".exe")
}

/// Entries of a push directory looked at for stale temporaries.
const MAX_LISTED: usize = 100_000;

/// Makes sure `host` has `bytes` (volbench.exe) in `dir`, copying it when
/// missing; returns the path cmd.exe runs it by, and what was swept. `wait`
/// is `--host-timeout`: how long any one reply may take.
pub(crate) fn push(
    launcher: &Launcher,
    host: &str,
    dir: &WinDir,
    bytes: &[u8],
    wait: Duration,
) -> Result<(String, Swept)> {
    let fail = |why: String| {
        VbError::target(format!(
            "host {}: pushing volbench.exe: {why}",
            one_line(host)
        ))
    };
    let child = launcher.spawn(host, &RemoteCmd::Sftp).map_err(|e| {
        fail(format!(
            "cannot start '{}' for its SFTP server: {e}",
            launcher.program()
        ))
    })?;
    let mut s = Session::new(child, wait).map_err(|e| fail(e.to_string()))?;
    let copied = s
        .init()
        .map_err(|e| e.to_string())
        .and_then(|()| copy(&mut s, dir, bytes));
    match copied {
        Ok((path, swept)) => {
            s.finish();
            match cmdline::bad_program(&path) {
                Some(why) => Err(fail(why)),
                None => Ok((path, swept)),
            }
        }
        Err(why) => {
            let tail = s.stderr_tail();
            Err(fail(if tail.is_empty() {
                why
            } else {
                format!("{why} ({tail})")
            }))
        }
    }
}

/// The copy on an open session; the cmd.exe path of the file and what was
/// swept, or why not.
fn copy(
    s: &mut Session,
    dir: &WinDir,
    bytes: &[u8],
) -> std::result::Result<(String, Swept), String> {
    let e = |e: sftp::SftpError| e.to_string();
    let home = s.realpath(".").map_err(e)?;
    let style = if windows_of(&home).is_some() {
        Style::SlashDrive
    } else {
        Style::BareDrive
    };
    if dir.drive.is_none() && style == Style::BareDrive {
        return Err(format!(
            "the host's SFTP server names its home '{}', with no drive, so cmd.exe could not \
             be told where the copy is: give the push directory as a drive path \
             (push_dir=D:\\volbench on its line, or --push-dir)",
            one_line(&home)
        ));
    }
    for n in 1..=dir.parts.len() {
        let p = dir.sftp(style, n, None);
        let attrs = match s.lstat(&p).map_err(e)? {
            Some(a) => a,
            None => {
                // Another push may make it first: what counts is what is there after.
                let made = s.mkdir(&p, 0o700);
                match s.lstat(&p).map_err(e)? {
                    Some(a) => a,
                    None => return Err(format!("cannot make {p}: {}", describe_err(made))),
                }
            }
        };
        match attrs.kind {
            Kind::Dir => {}
            Kind::Link => {
                return Err(format!(
                    "{p} is a link (or a junction): volbench reaches its push directory \
                     without following links; name the directory it points to"
                ));
            }
            _ => return Err(format!("{p} is there and is not a directory")),
        }
    }
    let swept = sweep(s, dir, style);
    let name = exe_name(bytes);
    let target = dir.sftp(style, dir.parts.len(), Some(&name));
    let want = bytes.len() as u64;
    match s.lstat(&target).map_err(e)? {
        None => upload(s, dir, style, &target, &name, bytes)?,
        Some(a) if is_copy(a, want) => {}
        Some(a) => {
            return Err(format!(
                "{target} is there already and is not this volbench.exe ({}, not a {want}-byte \
                 file): volbench replaces nothing it did not write; move it away",
                describe(a)
            ));
        }
    }
    match dir.cmd_path(&name) {
        Some(p) => Ok((p, swept)),
        None => {
            let full = s.realpath(&target).map_err(e)?;
            let path = windows_of(&full).ok_or_else(|| {
                format!(
                    "the host's SFTP server names {target} '{}', with no drive: give the push \
                     directory as a drive path (push_dir=D:\\volbench on its line, or \
                     --push-dir)",
                    one_line(&full)
                )
            })?;
            Ok((path, swept))
        }
    }
}

/// Removes the push directory's temporaries that no live push can own
/// (`push/mod.rs`: regular files untouched for longer than `STALE` by the
/// host's clock, which a file made now tells) and names the others. A
/// directory that cannot be listed is not swept; the copy goes on.
fn sweep(s: &mut Session, dir: &WinDir, style: Style) -> Swept {
    let mut swept = Swept::default();
    let here = dir.sftp(style, dir.parts.len(), None);
    let Ok(temps) = s.read_dir(&here, MAX_LISTED, super::is_temp) else {
        return swept;
    };
    if temps.is_empty() {
        return swept;
    }
    let now = host_now(s, dir, style);
    for (name, a) in temps {
        let stale = a.kind == Kind::File
            && matches!((now, a.mtime), (Some(now), Some(m))
                if u64::from(now.saturating_sub(m)) > STALE.as_secs());
        let path = dir.sftp(style, dir.parts.len(), Some(&name));
        if stale && s.remove(&path).is_ok() {
            swept.removed.push(one_line(&name));
        } else {
            swept.kept.push(one_line(&name));
        }
    }
    swept
}

/// The host's clock, as the mtime of a file made for it (one of the push's
/// temporaries, removed at once: if it stays, the next push sweeps it).
fn host_now(s: &mut Session, dir: &WinDir, style: Style) -> Option<u32> {
    let probe = dir.sftp(
        style,
        dir.parts.len(),
        Some(&super::temp_name("volbench-clock")),
    );
    let handle = s.create_new(&probe, 0o600).ok()?;
    let _ = s.close(&handle);
    let now = s.lstat(&probe).ok().flatten().and_then(|a| a.mtime);
    let _ = s.remove(&probe);
    now
}

/// Writes `bytes` new under a temporary name, then renames it to `target`.
fn upload(
    s: &mut Session,
    dir: &WinDir,
    style: Style,
    target: &str,
    name: &str,
    bytes: &[u8],
) -> std::result::Result<(), String> {
    let want = bytes.len() as u64;
    let tmp = dir.sftp(style, dir.parts.len(), Some(&super::temp_name(name)));
    let handle = s
        .create_new(&tmp, 0o700)
        .map_err(|e| format!("cannot create {tmp}: {e}"))?;
    let wrote = s.write_all(&handle, bytes);
    let closed = s.close(&handle);
    if let Err(err) = wrote.and(closed) {
        let _ = s.remove(&tmp);
        return Err(format!("writing {tmp}: {err}"));
    }
    if let Err(err) = s.rename(&tmp, target) {
        // Another push of this build may have won the race: its copy is this one.
        let won = matches!(s.lstat(target), Ok(Some(a)) if is_copy(a, want));
        let _ = s.remove(&tmp);
        if !won {
            return Err(format!("renaming {tmp} to {target}: {err}"));
        }
    }
    match s.lstat(target) {
        Ok(Some(a)) if is_copy(a, want) => Ok(()),
        Ok(other) => Err(format!(
            "after the copy, {target} is {}",
            other.map_or("gone".into(), describe)
        )),
        Err(err) => Err(format!("checking {target}: {err}")),
    }
}

fn is_copy(a: Attrs, want: u64) -> bool {
    a.kind == Kind::File && a.size == Some(want)
}

fn describe(a: Attrs) -> String {
    match (a.kind, a.size) {
        (Kind::File, Some(n)) => format!("a {n}-byte file"),
        (Kind::Dir, _) => "a directory".into(),
        (Kind::Link, _) => "a link".into(),
        _ => "something else".into(),
    }
}

fn describe_err(r: std::result::Result<(), sftp::SftpError>) -> String {
    r.err()
        .map_or_else(|| "it vanished".into(), |e| e.to_string())
}

#[cfg(all(test, unix))]
mod tests;
