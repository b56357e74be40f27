//! One error type for the whole program, each kind mapped to a documented
//! exit code so scripts can tell bad input from a failed device.

use std::fmt;

/// Exit codes. `docs/reference/exit-codes.md` has a row for each and no
/// other: `tests/e2e/reference_pages.rs` reads this list and holds the page to it.
pub mod exit {
    /// The run completed.
    pub const OK: i32 = 0;
    /// The run started but failed: an I/O error, a lost host, data that came back wrong.
    pub const RUN_FAILED: i32 = 1;
    /// The request itself is wrong: an unknown flag, a bad value, an invalid spec.
    pub const BAD_INPUT: i32 = 2;
    /// Refused for safety: writing would destroy data volbench did not create.
    pub const REFUSED: i32 = 3;
    /// The target cannot be used as asked: missing, unwritable, no direct I/O, too small.
    pub const TARGET: i32 = 4;
    /// The data cannot be checked, which is not corruption: the file set was
    /// written without --verify since its fill (`volbench verify`, a
    /// --verify run on it).
    pub const UNCHECKABLE: i32 = 5;
    /// `compare --fail-below`: a matched figure is worse than the ratio
    /// allows (a regression gate tripped, not an error).
    pub const REGRESSION: i32 = 6;
    /// Stopped by Ctrl-C or SIGTERM; the results gathered so far were written.
    pub const INTERRUPTED: i32 = 130;
}

/// Longest stretch of outside input (a flag's value, a line of a file) a
/// message quotes: enough to find it, never kilobytes of it.
pub const MAX_QUOTED: usize = 160;

/// `s` as a message quotes it: whole when at most `MAX_QUOTED` characters,
/// else its start, "..." and its length.
pub(crate) fn clip(s: &str) -> String {
    clip_to(s, MAX_QUOTED)
}

/// `clip` at `max` characters.
pub(crate) fn clip_to(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let head: String = s.chars().take(max).collect();
        format!("{head}... ({} bytes)", s.len())
    }
}

/// The exit code of a run that failed after it started: the target's
/// when the file system refused a write (read-only, permission denied) or
/// had no room left for it (no space, inodes or quota, mid-run too),
/// as docs/reference/exit-codes.md says, else `RUN_FAILED`. An I/O thread's error
/// reaches the command as text carrying the OS error number as std prints it.
pub(crate) fn failed_run_code(message: &str) -> i32 {
    // EROFS, EACCES, ENOSPC (also inodes), EDQUOT.
    const TARGET_ERRNOS: [&str; 4] = [
        "(os error 30)",
        "(os error 13)",
        "(os error 28)",
        "(os error 122)",
    ];
    if TARGET_ERRNOS.iter().any(|e| message.contains(e)) {
        exit::TARGET
    } else {
        exit::RUN_FAILED
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Input,
    Refused,
    Target,
    Unchecked,
    Run,
    /// A run that failed because the server of its target was lost (a
    /// protocol client not reaching it within its deadline): a run failed
    /// (the same exit), told apart so a list of targets may go on without
    /// that one (`--on-host-loss continue`).
    Lost,
}

#[derive(Debug)]
pub struct VbError {
    pub kind: Kind,
    pub message: String,
}

pub type Result<T> = std::result::Result<T, VbError>;

impl VbError {
    pub(crate) fn input(message: impl Into<String>) -> Self {
        Self {
            kind: Kind::Input,
            message: message.into(),
        }
    }
    pub(crate) fn refused(message: impl Into<String>) -> Self {
        Self {
            kind: Kind::Refused,
            message: message.into(),
        }
    }
    pub(crate) fn target(message: impl Into<String>) -> Self {
        Self {
            kind: Kind::Target,
            message: message.into(),
        }
    }
    pub(crate) fn unchecked(message: impl Into<String>) -> Self {
        Self {
            kind: Kind::Unchecked,
            message: message.into(),
        }
    }
    pub(crate) fn run(message: impl Into<String>) -> Self {
        Self {
            kind: Kind::Run,
            message: message.into(),
        }
    }
    pub(crate) fn lost(message: impl Into<String>) -> Self {
        Self {
            kind: Kind::Lost,
            message: message.into(),
        }
    }

    pub fn exit_code(&self) -> i32 {
        match self.kind {
            Kind::Input => exit::BAD_INPUT,
            Kind::Refused => exit::REFUSED,
            Kind::Target => exit::TARGET,
            Kind::Unchecked => exit::UNCHECKABLE,
            Kind::Run | Kind::Lost => exit::RUN_FAILED,
        }
    }
}

impl fmt::Display for VbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for VbError {}
