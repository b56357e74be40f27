//! Other tools' job descriptions (fio job files, vdbench parameter files,
//! diskspd command lines) turned into an editable suite file. Each source
//! option is mapped exactly, mapped with a note the user sees, or refused
//! by name with its place; the suite then runs like any other, so nothing
//! downstream knows where it came from.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use crate::error::{Result, VbError, clip_to};
use crate::input::hosts::HostSpec;
use crate::input::suite::{RunEntry, SuiteFile};
use crate::units::bounds;

pub mod diskspd;
pub mod fio;
pub mod render;
pub(crate) mod table;
mod target_list;
mod url_map;
pub mod vdbench;

#[cfg(test)]
mod tests;

/// Refused options one import error names; the rest are counted.
const MAX_NAMED: usize = 8;
/// Longest stretch of the file an import error quotes (a location, an
/// option and its value); what it says of it may be four times as long.
const MAX_QUOTED: usize = 160;

/// How one source option became part of the suite.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum How {
    /// Same meaning in volbench.
    Exact(String),
    /// Close, and the user is told how it differs.
    Note(String),
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Mapping {
    /// "job.fio line 12" or "argument 3".
    pub(crate) at: String,
    /// The option as written: `rw=randread`, `-w20`.
    pub(crate) option: String,
    pub(crate) how: How,
}

/// Everything said about the source's options, in order.
#[derive(Debug, Default, Clone)]
pub(crate) struct Notes {
    pub(crate) mapped: Vec<Mapping>,
    /// (where, option, why): any one makes the import fail.
    pub(crate) refused: Vec<(String, String, String)>,
}

/// Whether `key` could be an option name (`rw`, `iodepth_batch`): only
/// such a name of an unknown option is shown in an error, so a line of a
/// file that is no job file at all never reaches the terminal.
pub(crate) fn option_like(key: &str) -> bool {
    (1..=40).contains(&key.len())
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

impl Notes {
    pub(crate) fn exact(&mut self, at: &str, option: &str, how: impl Into<String>) {
        self.mapped.push(Mapping {
            at: at.into(),
            option: option.into(),
            how: How::Exact(how.into()),
        });
    }

    pub(crate) fn refuse(&mut self, at: &str, option: &str, why: impl Into<String>) {
        let r = (at.into(), option.into(), why.into());
        // A [global] option is judged once per job; the user needs it once.
        if !self.refused.contains(&r) {
            self.refused.push(r);
        }
    }

    /// Refuses an option volbench has no way to express yet.
    pub(crate) fn unsupported(&mut self, at: &str, option: &str, what: &str) {
        self.refuse(at, option, format!("not supported yet ({what})"));
    }

    /// One error naming the refused options, or Ok when there is none. It
    /// names the first `MAX_NAMED`, each part cut to a readable length, and
    /// counts the rest: a file of a thousand bad lines (or one line of a
    /// 60 KB value) made one error line of tens of KB (found by fuzzing).
    pub(crate) fn check(&self) -> Result<()> {
        if self.refused.is_empty() {
            return Ok(());
        }
        Err(self.refusal())
    }

    /// The one error naming every refused option.
    pub(crate) fn refusal(&self) -> VbError {
        let mut all: Vec<String> = self
            .refused
            .iter()
            .take(MAX_NAMED)
            .map(|(at, opt, why)| {
                format!(
                    "{}: {}: {}",
                    clip_to(at, MAX_QUOTED),
                    clip_to(opt, MAX_QUOTED),
                    clip_to(why, 4 * MAX_QUOTED)
                )
            })
            .collect();
        if self.refused.len() > MAX_NAMED {
            all.push(format!("and {} more", self.refused.len() - MAX_NAMED));
        }
        VbError::input(bounds::one_line(&all.join("; ")))
    }

    /// The notes a user must see when importing or running.
    pub(crate) fn printed(&self) -> Vec<String> {
        self.mapped
            .iter()
            .filter_map(|m| match &m.how {
                How::Note(n) => Some(format!("{}: {}: {n}", m.at, m.option)),
                How::Exact(_) => None,
            })
            .collect()
    }
}

/// An import: the suite file it makes, how each source option became part
/// of it, and where it runs. `render` writes the suite serialised with a
/// comment per source option; `suite::parse` reads back the same value.
#[derive(Debug, Clone)]
pub struct Imported {
    /// The suite file.
    pub(crate) suite: SuiteFile,
    /// How the options that hold for the whole suite were mapped (the
    /// file's first comments).
    pub(crate) said: Vec<Mapping>,
    /// How each run's options were mapped: one list per entry of
    /// `suite.runs`, in its order (the comments above each `[[run]]`).
    pub(crate) run_said: Vec<Vec<Mapping>>,
    /// The target the suite runs on (`--target`): a directory for
    /// volbench's file set, an existing file or device, or a brace list.
    /// With `hosts`, each host's own targets win.
    pub(crate) target: String,
    /// Many hosts: the hosts file's lines, each host with its targets.
    pub(crate) hosts: Vec<HostSpec>,
}

impl Imported {
    /// A suite with no runs yet, to run on `target`.
    pub(crate) fn new(suite: SuiteFile, target: String) -> Self {
        Self {
            suite,
            said: Vec::new(),
            run_said: Vec::new(),
            target,
            hosts: Vec::new(),
        }
    }

    /// Adds a run, with how its options were mapped.
    pub(crate) fn push_run(&mut self, run: RunEntry, said: Vec<Mapping>) {
        self.suite.runs.push(toml::Spanned::new(0..0, run));
        self.run_said.push(said);
    }

    /// What the reader said of the whole source (an `include` read in
    /// place) goes first among the suite's mappings.
    pub(crate) fn read_first(mut self, notes: Notes) -> Self {
        let mut said = notes.mapped;
        said.append(&mut self.said);
        self.said = said;
        self
    }

    /// Every note the user must see, from the whole suite and each run,
    /// each once.
    pub(crate) fn printed(&self) -> Vec<String> {
        let mut all = Notes::default();
        for m in self.said.iter().chain(self.run_said.iter().flatten()) {
            if !all.mapped.contains(m) {
                all.mapped.push(m.clone());
            }
        }
        all.printed()
    }
}

/// Mappings in order, each once: a `default` entry applies to every
/// definition after it, yet says one thing.
pub(crate) fn dedup(list: Vec<Mapping>) -> Vec<Mapping> {
    let mut out: Vec<Mapping> = Vec::with_capacity(list.len());
    for m in list {
        if !out.contains(&m) {
            out.push(m);
        }
    }
    out
}

/// A block-size mix as a suite's `bs` takes it: `64k`, or `4k:30,64k:70`.
pub(crate) fn bs_text(bs: &[(u64, u32)]) -> String {
    match bs {
        [(b, _)] => size_text(*b),
        many => many
            .iter()
            .map(|(b, w)| format!("{}:{w}", size_text(*b)))
            .collect::<Vec<_>>()
            .join(","),
    }
}

/// A run's `arrivals` key.
pub(crate) fn arrivals_value(a: crate::spec::Arrivals) -> crate::input::suite::P {
    crate::input::suite::write::value(match a {
        crate::spec::Arrivals::Uniform => "uniform",
        crate::spec::Arrivals::Poisson => "poisson",
    })
}

/// An import's name for its suite: the source file's own name.
pub(crate) fn file_name(path: &str, tool: &str) -> String {
    run_name(
        std::path::Path::new(path)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| tool.into())
            .as_str(),
    )
}

/// `--map FROM=TO`: Windows drive letters, UNC prefixes or diskspd's disk
/// numbers (`#1`) to the paths they are at on this machine, or to the
/// `smb://` or `nfs://` URL volbench's own clients reach them at.
#[derive(Debug, Clone, Default)]
pub struct PathMap {
    pairs: Vec<(String, String)>,
}

/// At most this many --map pairs.
pub(crate) const MAX_MAPS: usize = 256;

impl PathMap {
    pub(crate) fn parse(items: &[String]) -> Result<Self> {
        if items.len() > MAX_MAPS {
            return Err(VbError::input(format!(
                "--map given {} times; at most {MAX_MAPS}",
                items.len()
            )));
        }
        let mut pairs = Vec::new();
        for it in items {
            let (from, to) = it.split_once('=').ok_or_else(|| {
                // A URL may hold a password the user typed; it is not shown.
                let shown = if it.contains("://") {
                    "..."
                } else {
                    it.as_str()
                };
                VbError::input(format!(
                    "--map '{shown}' is not FROM=TO (e.g. --map 'z:\\=/mnt/share/')"
                ))
            })?;
            if from.is_empty() || to.is_empty() {
                return Err(VbError::input(format!(
                    "--map '{it}': FROM and TO must both be given"
                )));
            }
            if url_map::is_url(to) {
                url_map::check_to(from, to).map_err(|e| VbError::input(bounds::one_line(&e)))?;
            } else if !to.starts_with('/') {
                return Err(VbError::input(format!(
                    "--map '{it}': TO must be an absolute path on this machine, or an smb:// or \
                     nfs:// URL"
                )));
            }
            pairs.push((from.to_string(), to.to_string()));
        }
        // The longest prefix wins, whatever the order given.
        pairs.sort_by_key(|(f, _)| std::cmp::Reverse(f.len()));
        Ok(Self { pairs })
    }

    /// The path `raw` names here, or why it cannot be used. A path that
    /// looks like Windows (a drive letter, backslashes, `#N`) must be mapped.
    pub(crate) fn resolve(&self, raw: &str) -> std::result::Result<(String, bool), String> {
        self.resolve_on(raw, crate::spec::engine::Platform::HERE)
    }

    /// `resolve` as a volbench on `here` would: on Windows a drive or UNC
    /// path is used as written (diskspd's own meaning, no --map needed)
    /// and diskspd's disk number `#N` is `\\.\PhysicalDriveN`.
    pub(crate) fn resolve_on(
        &self,
        raw: &str,
        here: crate::spec::engine::Platform,
    ) -> std::result::Result<(String, bool), String> {
        for (from, to) in &self.pairs {
            // Windows names are not case-sensitive, and `\\srv\share` maps
            // `\\srv\share\f` but never `\\srv\shared\f` (nor `#1` `#10`).
            let matches = raw
                .get(..from.len())
                .is_some_and(|head| head.eq_ignore_ascii_case(from));
            let rest = raw.get(from.len()..).unwrap_or("");
            let whole = from.ends_with(['\\', '/', ':'])
                || rest.is_empty()
                || rest.starts_with(['\\', '/']);
            if matches && whole && url_map::is_url(to) {
                return url_map::join(raw, to, rest).map(|u| (u, true));
            }
            if matches && whole {
                let rest = rest.replace('\\', "/");
                let joined = if to.ends_with('/') || rest.is_empty() || rest.starts_with('/') {
                    format!("{to}{rest}")
                } else {
                    format!("{to}/{rest}")
                };
                let joined = joined.replace("//", "/");
                // `x:\..\..\etc\x.dat` must not land in /etc: after
                // `..` the path stays under the root it was mapped to.
                let root = crate::io::target::normalise(std::path::Path::new(to));
                let lands = crate::io::target::normalise(std::path::Path::new(&joined));
                if !lands.starts_with(&root) {
                    return Err(format!(
                        "'{raw}' maps to {}, outside the mapped root {to} ('..' leaves it); \
                         name the path inside the root, or map its own prefix",
                        lands.display()
                    ));
                }
                return Ok((joined, true));
            }
        }
        if here == crate::spec::engine::Platform::Windows {
            return windows_native(raw);
        }
        if raw.starts_with('#') {
            return Err(format!(
                "'{raw}' is a disk number; name the device it is here with --map '{raw}=/dev/sdX'"
            ));
        }
        let drive = raw.len() >= 2 && raw.as_bytes().get(1) == Some(&b':');
        // A paper's placeholder for the drive (`[X]:\DiskSpd.dat`) is
        // mapped by its own prefix, as a drive letter is.
        let placeholder = raw
            .find(":\\")
            .and_then(|i| raw.get(..i + 2))
            .filter(|h| !h.trim_end_matches('\\').contains('\\'));
        if drive || raw.contains('\\') {
            let head = if drive {
                raw.get(..2).unwrap_or(raw).to_ascii_lowercase() + "\\"
            } else if let Some(h) = placeholder {
                h.to_ascii_lowercase()
            } else {
                "\\\\server\\share\\".into()
            };
            return Err(format!(
                "'{raw}' is a Windows path; say where it is here with --map '{head}=/mnt/share/'"
            ));
        }
        if !raw.starts_with('/') {
            return Err(format!(
                "'{raw}' is a relative path; volbench needs an absolute one"
            ));
        }
        Ok((raw.to_string(), false))
    }
}

/// An unmapped diskspd path on Windows: what diskspd itself would open.
fn windows_native(raw: &str) -> std::result::Result<(String, bool), String> {
    if let Some(n) = raw.strip_prefix('#') {
        return match n.parse::<u32>() {
            Ok(n) => Ok((format!("\\\\.\\PhysicalDrive{n}"), false)),
            Err(_) => Err(format!("'{raw}' is no disk number (#N, N a whole number)")),
        };
    }
    let b = raw.as_bytes();
    let drive = matches!(b, [d, b':', b'\\' | b'/', ..] if d.is_ascii_alphabetic());
    if drive || raw.starts_with("\\\\") {
        return Ok((raw.to_string(), false));
    }
    if raw.starts_with('/') {
        return Err(format!(
            "'{raw}' is a Linux path and this volbench runs on Windows; name a drive or \\\\server\\share path"
        ));
    }
    Err(format!(
        "'{raw}' is a relative path; volbench needs an absolute one"
    ))
}

/// Why volbench's own file set cannot go in `dir`: under `/dev`, `/proc` or
/// `/sys` it would sit among the kernel's files (and /dev is memory).
pub(crate) fn kernel_set_dir(dir: &str) -> Option<String> {
    let root = crate::io::target::kernel_root(std::path::Path::new(dir))?;
    Some(format!(
        "volbench's own file set would go in {dir}, among the kernel's files ({root}), not \
         on storage; name a directory on the storage (or the device itself, without a size)"
    ))
}

/// The parent directory of a file path (where volbench's own file set goes).
pub(crate) fn parent_dir(path: &str) -> String {
    if url_map::is_url(path) {
        return url_map::parent(path);
    }
    if cfg!(windows) {
        return parent_dir_windows(path);
    }
    match path.trim_end_matches('/').rsplit_once('/') {
        Some(("", _)) | None => "/".into(),
        Some((dir, _)) => dir.into(),
    }
}

/// Windows' separators are both slashes, and a drive's root keeps its own
/// (`Z:\io.dat` is in `Z:\`; `Z:` alone would be the drive's current
/// directory); a bare name is in the working directory.
fn parent_dir_windows(path: &str) -> String {
    let seps: &[char] = &['/', '\\'];
    let trimmed = path.trim_end_matches(seps);
    match trimmed.rfind(seps) {
        None => ".".into(),
        Some(i) => {
            let dir = &trimmed[..i];
            if dir.is_empty() || dir.ends_with(':') {
                trimmed[..=i].into()
            } else {
                dir.into()
            }
        }
    }
}

/// Seconds as the duration text suites take: "600s", "250ms".
pub(crate) fn secs_text(s: f64) -> String {
    if s.fract() == 0.0 {
        format!("{}s", s as u64)
    } else {
        format!("{}ms", (s * 1000.0).round() as u64)
    }
}

/// Bytes as the shortest exact size text: 65536 -> "64k".
pub(crate) fn size_text(bytes: u64) -> String {
    for (shift, unit) in [(50, "p"), (40, "t"), (30, "g"), (20, "m"), (10, "k")] {
        let unit_bytes = 1u64 << shift;
        if bytes >= unit_bytes && bytes % unit_bytes == 0 {
            return format!("{}{unit}", bytes / unit_bytes);
        }
    }
    bytes.to_string()
}

/// A name volbench accepts for a run: printable, one line, bounded.
pub(crate) fn run_name(raw: &str) -> String {
    let clean: String = raw
        .chars()
        .filter(|c| !c.is_control())
        .take(bounds::MAX_NAME_CHARS)
        .collect();
    if clean.trim().is_empty() {
        "run".into()
    } else {
        clean
    }
}

/// A block device node; Windows has none (its raw disks are
/// `\\.\PhysicalDriveN` paths, not nodes in a directory).
pub(super) fn is_block_device(md: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        md.file_type().is_block_device()
    }
    #[cfg(windows)]
    {
        let _ = md;
        false
    }
}

/// Whether a job's path names a device: anything but a regular file where
/// it exists, else any name under /dev (a job written on another machine
/// names its disks there). /dev/shm holds files (tmpfs), never devices.
pub(crate) fn names_device(path: &str) -> bool {
    if crate::io::target::kernel_root(std::path::Path::new(path)) != Some("/dev") {
        return false;
    }
    match std::fs::metadata(path) {
        Ok(md) => !md.is_file(),
        Err(_) => true,
    }
}

/// Why a file or device path cannot be volbench's target: a path in `/dev`
/// that is there and is not a block device (`/dev/null`), or one in
/// `/proc` or `/sys`, where volbench would make its own file set. A device
/// not on this machine is left to the run, which checks it where it runs.
pub(crate) fn kernel_target(full: &str) -> Option<String> {
    let root = crate::io::target::kernel_root(std::path::Path::new(full))?;
    if root == "/dev" {
        match std::fs::metadata(full) {
            Ok(md) if !is_block_device(&md) => {}
            _ => return None,
        }
        return Some(format!(
            "{full} is not a block device here, and volbench makes no file set in /dev (the \
             kernel's device nodes, in memory); name a block device, or a file on the storage"
        ));
    }
    kernel_set_dir(&parent_dir(full))
}
