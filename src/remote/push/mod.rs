//! `--push-binary`: this build copied to each host and run from there. One
//! rule set holds for every host, whichever way the copy travels (a Linux
//! host's shell through its launcher, `shell/`; a Windows host's SFTP
//! server, `windows/`). The far side is not our file system, so the gate
//! (`io/gate/`) cannot guard it; each transport keeps the gate's rules in
//! what it asks of the host:
//!
//! 1. **No link followed.** The push directory is reached one component at
//!    a time, each made new (mode 0700) when missing; a link (or a
//!    junction) on the way is refused, naming it.
//! 2. **Named by content.** The copy is `volbench-<xxh3-128 of its bytes>`
//!    (`.exe` on Windows). A file already at that name is this copy when it
//!    is a regular file of this size (with one link and executable, where
//!    the host says so), and is reused; anything else there is refused,
//!    never replaced and never run.
//! 3. **Created new, renamed without replacing.** The bytes go into a
//!    temporary of this push's own (`TEMP_PREFIX`, a random token,
//!    `TEMP_SUFFIX`), created with O_CREAT|O_EXCL semantics in the push
//!    directory, its size checked, then given the content name by a rename
//!    that cannot replace (a hard link then the temporary's removal on a
//!    Linux host; SFTP v3's RENAME, which fails on an existing name).
//! 4. **Nothing left behind.** A copy that fails removes its temporary. One
//!    whose far side died first cannot: the next push into that directory
//!    removes temporaries untouched for longer than `STALE` (no live push
//!    waits that long) and names the others.
//! 5. **Every wait bounded by `--host-timeout`**: a push gives up when the
//!    far side goes that long without taking a byte or answering.
//!
//! The content name is xxh3-128 since this rule set; copies an earlier build
//! left under its FNV-1a names (24 hex digits) are never run again and are
//! left where they are, like any earlier build's copy: another coordinator
//! of that build may be running it.

use std::time::Duration;

pub mod binary;
pub mod sftp;
pub(crate) mod shell;
pub(crate) mod windows;

/// What every temporary of a push starts with.
pub(crate) const TEMP_PREFIX: &str = ".volbench-";
/// What every temporary of a push ends with.
pub(crate) const TEMP_SUFFIX: &str = ".part";
/// A temporary untouched for longer than this is no live push's: a push
/// writes into its temporary at least once per `--host-timeout` (at most
/// `MAX_HOST_TIMEOUT`) or gives up, and earlier builds gave up after 600 s;
/// five minutes more for the host's clock granularity.
pub(crate) const STALE: Duration =
    Duration::from_secs(crate::units::bounds::MAX_HOST_TIMEOUT.as_secs() + 300);

/// A content hash naming a pushed binary: xxh3-128, hex. Not a security
/// boundary (the launcher already authenticates the copy, and the check of
/// a copy found there is its size); it tells one build from another, so a
/// copy there is reused exactly when it is this binary.
pub(crate) fn content_hash(bytes: &[u8]) -> String {
    format!("{:032x}", xxhash_rust::xxh3::xxh3_128(bytes))
}

/// The name a copy of `bytes` takes in the push directory (`ext`: `""`, or
/// `".exe"` for a Windows host).
pub(crate) fn copy_name(bytes: &[u8], ext: &str) -> String {
    format!("volbench-{}{ext}", content_hash(bytes))
}

/// A new temporary name for writing `copy`: the copy's name and 64 random
/// bits, so no one can place anything at it in advance and two pushes
/// (two nodes sharing a home directory) never meet.
pub(crate) fn temp_name(copy: &str) -> String {
    let name = copy.strip_prefix("volbench-").unwrap_or(copy);
    format!(
        "{TEMP_PREFIX}{name}.{:016x}{TEMP_SUFFIX}",
        fastrand::u64(..)
    )
}

/// Whether a directory entry's name is a push's temporary (this build's or
/// an earlier one's).
pub(crate) fn is_temp(name: &str) -> bool {
    name.len() > TEMP_PREFIX.len() + TEMP_SUFFIX.len()
        && name.starts_with(TEMP_PREFIX)
        && name.ends_with(TEMP_SUFFIX)
        && !name.contains('/')
}

/// What a push swept from its directory before copying.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Swept {
    /// Stale temporaries removed.
    pub(crate) removed: Vec<String>,
    /// Temporaries left: recent (maybe a push under way elsewhere) or not
    /// provably ours (not a regular file with one link).
    pub(crate) kept: Vec<String>,
}

impl Swept {
    /// A line for the terminal, or None when there was nothing.
    pub(crate) fn note(&self, host: &str, dir: &str) -> Option<String> {
        if self.removed.is_empty() && self.kept.is_empty() {
            return None;
        }
        let list = |v: &[String]| {
            let shown: Vec<&str> = v.iter().take(5).map(String::as_str).collect();
            let more = v.len().saturating_sub(shown.len());
            let mut s = shown.join(", ");
            if more > 0 {
                s.push_str(&format!(" and {more} more"));
            }
            s
        };
        let mut parts = Vec::new();
        if !self.removed.is_empty() {
            parts.push(format!(
                "removed {} stale temporar{} of an earlier push ({})",
                self.removed.len(),
                if self.removed.len() == 1 { "y" } else { "ies" },
                list(&self.removed)
            ));
        }
        if !self.kept.is_empty() {
            parts.push(format!(
                "left {} ({}): written to within {} min (a push may be under way) or not a \
                 plain file",
                self.kept.len(),
                list(&self.kept),
                STALE.as_secs() / 60
            ));
        }
        Some(format!(
            "host {}: push directory {}: {}",
            crate::units::bounds::one_line(host),
            crate::units::bounds::one_line(dir),
            parts.join("; ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_names_tell_builds_apart_and_temporaries_are_known_by_name() {
        assert_ne!(content_hash(b"a"), content_hash(b"b"));
        assert_eq!(content_hash(b"abc"), content_hash(b"abc"));
        // xxh3-128's own test vector: the empty input.
        assert_eq!(content_hash(b""), "99aa06d3014798d86001c324468d497f");
        let name = copy_name(b"abc", ".exe");
        assert_eq!(name.len(), "volbench-".len() + 32 + 4);
        let t = temp_name(&name);
        assert!(is_temp(&t), "{t}");
        assert_ne!(t, temp_name(&name), "each push its own temporary");
        assert!(t.starts_with(&format!(".volbench-{}", content_hash(b"abc"))));
        // An earlier build's Windows temporary is one too; the copies and
        // other names are not.
        assert!(is_temp(
            ".volbench-0123456789abcdef01234567.exe.4242-0badf00d.part"
        ));
        for not in [
            &name[..],
            ".volbench-.part",
            "volbench-x.part",
            ".volbench-x.partial",
        ] {
            assert!(!is_temp(not), "{not}");
        }
        assert!(STALE > crate::units::bounds::MAX_HOST_TIMEOUT);
    }

    #[test]
    fn a_sweep_is_one_line_naming_what_went_and_what_stayed() {
        assert_eq!(Swept::default().note("h1", "~/.cache/volbench"), None);
        let s = Swept {
            removed: vec![".volbench-a.1.part".into()],
            kept: (0..7).map(|i| format!(".volbench-b.{i}.part")).collect(),
        };
        let line = s.note("h1", "~/.cache/volbench").unwrap();
        assert!(
            line.starts_with(
                "host h1: push directory ~/.cache/volbench: removed 1 stale temporary"
            )
        );
        assert!(line.contains("left 7 (.volbench-b.0.part"), "{line}");
        assert!(line.contains("and 2 more)"), "{line}");
        assert!(!line.contains('\n'));
    }
}
