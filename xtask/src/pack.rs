//! The download, made from one built binary: the binary, its man pages and
//! shell completions (asked of the binary itself, so they match it), the
//! README, the docs it links, the licences and the third-party notices, in
//! `volbench-VERSION-ARCH-linux.tar.gz`, and `SHA256SUMS`.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::sha256;

/// What one `assemble` made.
#[derive(Debug)]
pub struct Artifact {
    // `tarball` is the download, a .zip for Windows.
    /// `target/dist/volbench-0.1.0-x86_64-linux/`, the tarball's contents
    /// unpacked (`--push-binary` finds the binary there).
    pub dir: PathBuf,
    pub tarball: PathBuf,
    pub sha256: String,
    pub man_pages: Vec<String>,
}

/// Runs the binary and returns its stdout; fails on a non-zero exit.
fn ask(bin: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new(bin)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", bin.display()))?;
    if !out.status.success() {
        return Err(format!(
            "`{} {}` failed: {}",
            bin.display(),
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    String::from_utf8(out.stdout).map_err(|_| format!("`{}` printed non-UTF-8", args.join(" ")))
}

/// The binary's `--version` line.
pub fn version_line(bin: &Path) -> Result<String, String> {
    Ok(ask(bin, &["--version"])?.trim().to_string())
}

/// "volbench 0.1.0 (commit 1a2b3c4d5e6f, static)" -> "0.1.0", only for a
/// static build: a dynamic one would not start on an older C library, and
/// the binary's own word is the one definition of static (`input::version`).
pub fn static_version(version_line: &str) -> Result<String, String> {
    let line = version_line.trim();
    let rest = line
        .strip_prefix("volbench ")
        .ok_or_else(|| format!("not a volbench --version line: {line:?}"))?;
    let version = rest.split_whitespace().next().unwrap_or("");
    if version.is_empty()
        || !version
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || ".-+".contains(c))
    {
        return Err(format!("no version in {line:?}"));
    }
    if !line.ends_with(", static)") {
        return Err(format!(
            "the binary is not statically linked ({line:?}); build it with \
             RUSTFLAGS='-C target-feature=+crt-static' and --target"
        ));
    }
    Ok(version.to_string())
}

/// The subcommands `volbench --help` lists, without `help`.
pub fn subcommands(help: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in help.lines() {
        if line.trim_end() == "Commands:" {
            inside = true;
            continue;
        }
        if !inside {
            continue;
        }
        if line.trim().is_empty() {
            break;
        }
        // A name sits two spaces in; wrapped descriptions sit deeper.
        let Some(name) = line.strip_prefix("  ") else {
            break;
        };
        if name.starts_with(' ') {
            continue;
        }
        let name = name.split_whitespace().next().unwrap_or("");
        if !name.is_empty() && name != "help" {
            out.push(name.to_string());
        }
    }
    out
}

/// The man pages the binary gives, written into `dir` as `*.1`: every page
/// at once when `volbench man` takes a directory (an option whose value is
/// `<DIR>`, or a `[DIR]` argument), else `volbench man` for volbench.1 and
/// `volbench man SUB` for volbench-SUB.1 where the binary knows that.
pub fn man_pages(bin: &Path, dir: &Path) -> Result<Vec<String>, String> {
    fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let help = ask(bin, &["man", "--help"])?;
    let dir_text = dir.to_string_lossy().into_owned();
    let dir_option = help
        .split_whitespace()
        .collect::<Vec<_>>()
        .windows(2)
        .find_map(|w| {
            let opt = w[0].trim_end_matches(',');
            (opt.starts_with("--") && w[1].starts_with('<') && w[1].contains("DIR"))
                .then(|| opt.to_string())
        });
    let takes_dir_arg = help
        .lines()
        .any(|l| l.starts_with("Usage:") && (l.contains("[DIR]") || l.contains("<DIR>")));
    if let Some(opt) = dir_option {
        ask(bin, &["man", &opt, &dir_text])?;
    } else if takes_dir_arg {
        ask(bin, &["man", &dir_text])?;
    } else {
        write_page(dir, "volbench.1", &ask(bin, &["man"])?)?;
        let takes_page = help
            .lines()
            .any(|l| l.starts_with("Usage:") && l.replace("[OPTIONS]", "").contains('['));
        if takes_page {
            for sub in subcommands(&ask(bin, &["--help"])?) {
                write_page(
                    dir,
                    &format!("volbench-{sub}.1"),
                    &ask(bin, &["man", &sub])?,
                )?;
            }
        } else {
            eprintln!(
                "xtask: this volbench's `man` prints the top-level page only: \
                 no page per subcommand in the artifact"
            );
        }
    }
    let mut pages: Vec<String> = fs::read_dir(dir)
        .map_err(|e| format!("cannot list {}: {e}", dir.display()))?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".1"))
        .collect();
    pages.sort();
    for p in &pages {
        let text = fs::read_to_string(dir.join(p)).unwrap_or_default();
        if !text.lines().any(|l| l.starts_with(".TH ")) {
            return Err(format!("{p}: not a man page (no .TH line)"));
        }
    }
    if !pages.iter().any(|p| p == "volbench.1") {
        return Err("volbench man gave no volbench.1".into());
    }
    Ok(pages)
}

fn write_page(dir: &Path, name: &str, text: &str) -> Result<(), String> {
    fs::write(dir.join(name), text).map_err(|e| format!("cannot write {name}: {e}"))
}

/// Completion scripts under the names each shell looks for.
pub const COMPLETIONS: [(&str, &str); 3] = [
    ("bash", "volbench.bash"),
    ("zsh", "_volbench"),
    ("fish", "volbench.fish"),
];

/// What ships beside the binary whatever the platform.
#[derive(Debug, Default)]
pub struct Shipped {
    /// Copied from the checkout: (path in the download, path here); a
    /// directory is copied whole.
    pub files: Vec<(String, PathBuf)>,
    /// Written as given: (path in the download, text), e.g. the notices.
    pub texts: Vec<(String, String)>,
}

impl Shipped {
    /// The README, the docs it links (`docs/`, so its relative links hold
    /// in the unpacked download), the two licences; `notices` is
    /// THIRD-PARTY-NOTICES.txt's text.
    pub fn from_checkout(root: &Path, notices: String) -> Self {
        let files = ["README.md", "LICENSE-MIT", "LICENSE-APACHE", "docs"]
            .iter()
            .map(|f| (f.to_string(), root.join(f)))
            .collect();
        Shipped {
            files,
            texts: vec![("THIRD-PARTY-NOTICES.txt".into(), notices)],
        }
    }

    /// Lays the files out in `dir`.
    pub fn copy_into(&self, dir: &Path) -> Result<(), String> {
        for (to, from) in &self.files {
            copy_tree(from, &dir.join(to))?;
        }
        for (to, text) in &self.texts {
            fs::write(dir.join(to), text).map_err(|e| format!("cannot write {to}: {e}"))?;
        }
        Ok(())
    }
}

/// `from` (a file, or a directory and everything under it) to `to`;
/// symbolic links are refused, not followed.
fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    let meta =
        fs::symlink_metadata(from).map_err(|e| format!("cannot read {}: {e}", from.display()))?;
    if meta.is_dir() {
        fs::create_dir_all(to).map_err(|e| format!("cannot create {}: {e}", to.display()))?;
        let entries =
            fs::read_dir(from).map_err(|e| format!("cannot list {}: {e}", from.display()))?;
        for e in entries {
            let e = e.map_err(|e| format!("cannot list {}: {e}", from.display()))?;
            copy_tree(&e.path(), &to.join(e.file_name()))?;
        }
        Ok(())
    } else if meta.is_file() {
        fs::copy(from, to)
            .map(|_| ())
            .map_err(|e| format!("cannot copy {}: {e}", from.display()))
    } else {
        Err(format!("{}: not a file or directory", from.display()))
    }
}

/// `dist/NAME/`, empty: ours from an earlier dist (target/dist is the
/// build's own output) is rebuilt whole so nothing stale is shipped.
pub fn fresh_dir(dist: &Path, name: &str) -> Result<PathBuf, String> {
    fs::create_dir_all(dist).map_err(|e| format!("cannot create {}: {e}", dist.display()))?;
    let dir = dist.join(name);
    if fs::symlink_metadata(&dir).is_ok() {
        fs::remove_dir_all(&dir)
            .map_err(|e| format!("cannot remove the old {}: {e}", dir.display()))?;
    }
    fs::create_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    Ok(dir)
}

/// Lays out `dist/volbench-VERSION-ARCH-linux/` from the binary and what
/// ships beside it, and packs it.
pub fn assemble(
    bin: &Path,
    shipped: &Shipped,
    dist: &Path,
    arch: &str,
    epoch: u64,
) -> Result<Artifact, String> {
    let version = static_version(&ask(bin, &["--version"])?)?;
    let name = format!("volbench-{version}-{arch}-linux");
    let dir = fresh_dir(dist, &name)?;
    let exe = dir.join("volbench");
    fs::copy(bin, &exe).map_err(|e| format!("cannot copy {}: {e}", bin.display()))?;
    set_mode(&exe, 0o755)?;
    shipped.copy_into(&dir)?;
    let man_pages = man_pages(bin, &dir.join("man/man1"))?;
    let comp = dir.join("completions");
    fs::create_dir(&comp).map_err(|e| format!("cannot create {}: {e}", comp.display()))?;
    for (shell, file) in COMPLETIONS {
        let script = ask(bin, &["completions", shell])?;
        if script.trim().is_empty() {
            return Err(format!("volbench completions {shell} printed nothing"));
        }
        fs::write(comp.join(file), script).map_err(|e| format!("cannot write {file}: {e}"))?;
    }
    let tarball = dist.join(format!("{name}.tar.gz"));
    pack(dist, &name, &tarball, epoch)?;
    let bytes =
        fs::read(&tarball).map_err(|e| format!("cannot read {}: {e}", tarball.display()))?;
    Ok(Artifact {
        dir,
        tarball,
        sha256: sha256::hex(&bytes),
        man_pages,
    })
}

fn set_mode(path: &Path, mode: u32) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
        .map_err(|e| format!("cannot chmod {}: {e}", path.display()))
}

/// `tar` then `gzip -n`, with names sorted and owners, modes (whatever the
/// umask) and times fixed, so the same inputs give the same bytes (and the
/// same checksum).
fn pack(dist: &Path, name: &str, tarball: &Path, epoch: u64) -> Result<(), String> {
    let tar = dist.join(format!("{name}.tar"));
    let status = Command::new("tar")
        .arg("--sort=name")
        .args([
            "--owner=0",
            "--group=0",
            "--numeric-owner",
            "--mode=u=rwX,go=rX",
        ])
        .arg(format!("--mtime=@{epoch}"))
        .arg("-C")
        .arg(dist)
        .arg("-cf")
        .arg(&tar)
        .arg(name)
        .status()
        .map_err(|e| format!("cannot run tar: {e}"))?;
    if !status.success() {
        return Err(format!("tar failed ({status})"));
    }
    let _ = fs::remove_file(tarball);
    let status = Command::new("gzip")
        .args(["-n", "-9", "-f"])
        .arg(&tar)
        .status()
        .map_err(|e| format!("cannot run gzip: {e}"))?;
    if !status.success() {
        return Err(format!("gzip failed ({status})"));
    }
    Ok(())
}

/// `SHA256SUMS` beside the tarballs, in `sha256sum`'s format, so
/// `sha256sum -c SHA256SUMS` checks a download; written whole then renamed.
pub fn write_sums(dist: &Path, artifacts: &[&Artifact]) -> Result<PathBuf, String> {
    let mut text = String::new();
    for a in artifacts {
        let file = a
            .tarball
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        text.push_str(&format!("{}  {file}\n", a.sha256));
    }
    let path = dist.join("SHA256SUMS");
    let tmp = dist.join(".SHA256SUMS.tmp");
    let mut f =
        fs::File::create(&tmp).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    f.write_all(text.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    fs::rename(&tmp, &path).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

#[cfg(test)]
#[path = "pack_tests.rs"]
mod tests;
