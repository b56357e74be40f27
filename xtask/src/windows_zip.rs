//! The Windows download: `volbench-VERSION-x86_64-windows.zip` with the
//! volbench.exe `scripts/windows-build` made, its man pages as text (no
//! `man` on Windows), the README, docs, licences and the Windows target's
//! notices; listed in `SHA256SUMS` beside the tarball.
//!
//! The exe is not run (no Wine needed to pack it): it is checked to be an
//! x86-64 PE image whose `--version` text names the same version and commit
//! as the Linux binary, and its pages are the Linux binary's (one commit,
//! one command-line definition; the engines' list differs and says so).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::pack::{Artifact, Shipped};
use crate::sha256;

/// "0.1.0 (commit 1a2b3c4d5e6f" from "volbench 0.1.0 (commit 1a2b3c4d5e6f,
/// static)": the part every build of that commit prints, without `-dirty`.
pub fn build_text(version_line: &str) -> String {
    let line = version_line.trim().trim_start_matches("volbench ");
    let head = line.split([')', ',']).next().unwrap_or(line);
    head.strip_suffix("-dirty").unwrap_or(head).to_string()
}

/// Why `bytes` are not an x86-64 volbench.exe of the build `want`
/// (`build_text`), or None.
pub fn not_this_exe(bytes: &[u8], want: &str) -> Option<String> {
    let machine = || -> Option<u16> {
        if bytes.get(..2)? != b"MZ" {
            return None;
        }
        let at = u32::from_le_bytes(bytes.get(0x3c..0x40)?.try_into().ok()?) as usize;
        if bytes.get(at..at.checked_add(4)?)? != b"PE\0\0" {
            return None;
        }
        Some(u16::from_le_bytes(
            bytes.get(at + 4..at + 6)?.try_into().ok()?,
        ))
    };
    match machine() {
        None => return Some("not a Windows executable".into()),
        Some(0x8664) => {}
        Some(m) => return Some(format!("built for machine {m:#06x}, not x86-64")),
    }
    let w = want.as_bytes();
    let found = bytes
        .windows(w.len() + 1)
        .any(|win| win.starts_with(w) && matches!(win[w.len()], b')' | b',' | b'-'));
    (!found).then(|| format!("not volbench {want}): rebuild it with scripts/windows-build"))
}

/// Each `NAME.1` of `pages` rendered by `man -l` into `out/NAME.txt`, 80
/// columns, no overstrikes; returns the names written.
pub fn text_pages(pages: &Path, out: &Path) -> Result<Vec<String>, String> {
    fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let mut names: Vec<PathBuf> = fs::read_dir(pages)
        .map_err(|e| format!("cannot list {}: {e}", pages.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "1"))
        .collect();
    names.sort();
    let mut written = Vec::new();
    for page in names {
        let text = Command::new("man")
            .arg("-l")
            .arg(&page)
            .env("MANWIDTH", "80")
            .env("MANPAGER", "cat")
            .env("LC_ALL", "C.UTF-8")
            .env_remove("MAN_KEEP_FORMATTING")
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run man -l (man-db) for the Windows pages: {e}"))?;
        if !text.status.success() || text.stdout.is_empty() {
            return Err(format!("man -l {} failed", page.display()));
        }
        let stem = page
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let name = format!("{stem}.txt");
        fs::write(out.join(&name), &text.stdout)
            .map_err(|e| format!("cannot write {name}: {e}"))?;
        written.push(name);
    }
    Ok(written)
}

/// Every file under `dir`, relative to `base`, sorted.
fn files_under(base: &Path, dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    for e in fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))? {
        let p = e
            .map_err(|e| format!("cannot list {}: {e}", dir.display()))?
            .path();
        if p.is_dir() {
            files_under(base, &p, out)?;
        } else {
            out.push(p.strip_prefix(base).unwrap_or(&p).to_path_buf());
        }
    }
    Ok(())
}

/// Lays out `dist/volbench-VERSION-x86_64-windows/` and zips it, names
/// sorted, times set to `epoch`, no extra attributes (`zip -X -D`), so the
/// same inputs give the same bytes. `linux` is the Linux artifact of the
/// same build (its man pages); `version_line` its `--version`.
pub fn assemble(
    exe: &Path,
    version_line: &str,
    linux: &Artifact,
    shipped: &Shipped,
    dist: &Path,
    epoch: u64,
) -> Result<Artifact, String> {
    let bytes = fs::read(exe).map_err(|e| format!("cannot read {}: {e}", exe.display()))?;
    let want = build_text(version_line);
    if let Some(why) = not_this_exe(&bytes, &want) {
        return Err(format!("{}: {why}", exe.display()));
    }
    let version = want.split_whitespace().next().unwrap_or("");
    let name = format!("volbench-{version}-x86_64-windows");
    let dir = crate::pack::fresh_dir(dist, &name)?;
    fs::write(dir.join("volbench.exe"), &bytes)
        .map_err(|e| format!("cannot write volbench.exe: {e}"))?;
    shipped.copy_into(&dir)?;
    let man_pages = text_pages(&linux.dir.join("man/man1"), &dir.join("man"))?;
    let mut files = Vec::new();
    files_under(dist, &dir, &mut files)?;
    files.sort();
    let when = std::time::UNIX_EPOCH + std::time::Duration::from_secs(epoch.max(315_532_800));
    for f in &files {
        fs::File::options()
            .write(true)
            .open(dist.join(f))
            .and_then(|h| h.set_modified(when))
            .map_err(|e| format!("cannot set the time of {}: {e}", f.display()))?;
    }
    let zip = dist.join(format!("{name}.zip"));
    let _ = fs::remove_file(&zip);
    let list: String = files.iter().map(|f| format!("{}\n", f.display())).collect();
    let mut child = Command::new("zip")
        .current_dir(dist)
        .args(["-X", "-D", "-9", "-q"])
        .arg(&zip)
        .arg("-@")
        .env("TZ", "UTC")
        .stdin(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run zip: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        use std::io::Write;
        stdin
            .write_all(list.as_bytes())
            .map_err(|e| format!("cannot give zip its list: {e}"))?;
    }
    let status = child.wait().map_err(|e| format!("zip: {e}"))?;
    if !status.success() {
        return Err(format!("zip failed ({status})"));
    }
    let zbytes = fs::read(&zip).map_err(|e| format!("cannot read {}: {e}", zip.display()))?;
    Ok(Artifact {
        dir,
        tarball: zip,
        sha256: sha256::hex(&zbytes),
        man_pages,
    })
}
