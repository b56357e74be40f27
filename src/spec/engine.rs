//! The engine table: every I/O engine's name, aliases and capabilities in one row, read by everything that needs to know an engine, so no other place names one
//!
//! The rest of the program asks a row's capabilities (does it keep I/Os in
//! flight, does it touch the disk...) instead of matching on names, as
//! fio's core reads its ioengines' flags. A new engine is its file in
//! `io/engine/` plus one row here.

use serde::{Deserialize, Deserializer, Serialize, Serializer, de::Error as _};

use crate::error::{Result, VbError};

/// The engine a run actually uses, after `auto` and fallbacks; in results,
/// specs and the agents' protocol by its row's `name`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineKind {
    Psync,
    IoUring,
    Null,
    Overlapped,
    Nfs,
    Smb,
}

/// Where an engine can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Platform {
    Linux,
    Windows,
    /// Either system: no system call of its own (null), or calls both
    /// have (psync, through io::sys).
    Any,
}

impl Platform {
    /// The operating system this binary was built for.
    pub(crate) const HERE: Self = if cfg!(windows) {
        Self::Windows
    } else {
        Self::Linux
    };

    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Linux => "Linux",
            Self::Windows => "Windows",
            Self::Any => "any system",
        }
    }

    pub(crate) fn runs_here(self) -> bool {
        self == Self::Any || self == Self::HERE
    }
}

/// What an engine's files live on: the storage back end (`io::backend`)
/// its target is reached through. A user-space NFS or SMB engine's row
/// names its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Storage {
    /// The local file system (and block devices), through the gate.
    Local,
    /// A directory on an NFS server, reached by volbench's own client
    /// (`nfs://` targets; `io::backend::nfs`, Unix only).
    Nfs,
    /// A directory on an SMB share, reached by volbench's own client
    /// (`smb://` targets; `io::backend::smb`, Unix only).
    Smb,
    /// Files in memory: the test double that shows the seam carries a
    /// whole run (`io::backend::mem`); no engine row names it.
    #[cfg(test)]
    Memory,
}

/// What an engine can do: the rest of the program asks these, never the name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Caps {
    /// Honours O_DIRECT on the files it is handed.
    pub(crate) direct: bool,
    /// Keeps up to `--iodepth` I/Os in flight from one thread; without it a
    /// thread has one I/O in flight and depth becomes threads.
    pub(crate) queue_depth: bool,
    /// I/Os are in flight in the kernel between submit and reap, so
    /// sequential I/O is submitted as it is queued (the next offset must not
    /// wait for a batch) and its issue time is read per I/O.
    pub(crate) kernel_async: bool,
    /// Buffers are registered with the kernel once, up front.
    pub(crate) registered_buffers: bool,
    /// Touches no file: no files are opened for it.
    pub(crate) diskless: bool,
    /// Metadata runs (`--ops`) are recorded under it (they make their own
    /// system calls and use no engine for block I/O).
    pub(crate) metadata: bool,
    pub(crate) platform: Platform,
    /// The back end its files are on.
    pub(crate) storage: Storage,
}

/// One engine.
#[derive(Debug, Clone, Copy)]
pub struct EngineRow {
    pub(crate) kind: EngineKind,
    /// Its name in `--engine`, suites, results and the agents' protocol.
    pub name: &'static str,
    /// Other spellings `--engine` and suites accept.
    pub(crate) aliases: &'static [&'static str],
    pub(crate) caps: Caps,
}

const NONE: Caps = Caps {
    direct: false,
    queue_depth: false,
    kernel_async: false,
    registered_buffers: false,
    diskless: false,
    metadata: false,
    platform: Platform::Linux,
    storage: Storage::Local,
};

/// Every engine volbench has.
pub const ENGINES: &[EngineRow] = &[PSYNC, IO_URING, NULL, OVERLAPPED, NFS, SMB];

const PSYNC: EngineRow = EngineRow {
    kind: EngineKind::Psync,
    name: "psync",
    aliases: &["sync"],
    caps: Caps {
        direct: true,
        metadata: true,
        // pread/pwrite on Linux, ReadFile/WriteFile at an offset on a
        // synchronous handle on Windows (io::sys).
        platform: Platform::Any,
        ..NONE
    },
};

const IO_URING: EngineRow = EngineRow {
    kind: EngineKind::IoUring,
    name: "io_uring",
    aliases: &["uring"],
    caps: Caps {
        direct: true,
        queue_depth: true,
        kernel_async: true,
        registered_buffers: true,
        ..NONE
    },
};

const NULL: EngineRow = EngineRow {
    kind: EngineKind::Null,
    name: "null",
    aliases: &[],
    caps: Caps {
        // It completes a whole queue at once, so it honours iodepth itself.
        queue_depth: true,
        diskless: true,
        platform: Platform::Any,
        ..NONE
    },
};

const OVERLAPPED: EngineRow = EngineRow {
    kind: EngineKind::Overlapped,
    name: "overlapped",
    aliases: &["iocp", "windowsaio"],
    caps: Caps {
        direct: true,
        queue_depth: true,
        kernel_async: true,
        platform: Platform::Windows,
        ..NONE
    },
};

const NFS: EngineRow = EngineRow {
    kind: EngineKind::Nfs,
    name: "nfs",
    aliases: &[],
    caps: Caps {
        // Pipelined READ and WRITE calls over its own connections: no
        // client cache, so every I/O is direct.
        direct: true,
        queue_depth: true,
        // Its transport is Unix's (poll(2)).
        platform: Platform::Linux,
        storage: Storage::Nfs,
        ..NONE
    },
};

const SMB: EngineRow = EngineRow {
    kind: EngineKind::Smb,
    name: "smb",
    aliases: &[],
    caps: Caps {
        // READ and WRITE requests kept in flight over the session's
        // channels, as credits allow: no client cache, every I/O direct.
        direct: true,
        queue_depth: true,
        // Its channels wait with poll(2).
        platform: Platform::Linux,
        storage: Storage::Smb,
        ..NONE
    },
};

/// The names `--engine` accepts, for messages: "auto, psync, io_uring, null".
pub(crate) fn choice_names() -> String {
    let mut names = vec!["auto"];
    names.extend(ENGINES.iter().map(|r| r.name));
    names.join(", ")
}

/// The engines' names, for messages: "psync, io_uring, null".
pub(crate) fn engine_names() -> String {
    let names: Vec<&str> = ENGINES.iter().map(|r| r.name).collect();
    names.join(", ")
}

fn row_named(text: &str) -> Option<&'static EngineRow> {
    let t = text.trim().to_ascii_lowercase().replace('-', "_");
    ENGINES
        .iter()
        .find(|r| r.name == t || r.aliases.contains(&t.as_str()))
}

impl EngineKind {
    pub(crate) fn row(self) -> &'static EngineRow {
        // Every kind has its row (`every_kind_has_one_row`); the fallback
        // only keeps this total.
        ENGINES.iter().find(|r| r.kind == self).unwrap_or(&PSYNC)
    }

    pub(crate) fn name(self) -> &'static str {
        self.row().name
    }

    pub(crate) fn caps(self) -> Caps {
        self.row().caps
    }

    /// Synchronous engines have one I/O in flight per OS thread.
    pub(crate) fn is_sync(self) -> bool {
        !self.caps().queue_depth
    }

    /// This system's first engine with I/Os in flight in the kernel
    /// (diskspd's overlapped I/O): io_uring on Linux, overlapped on Windows.
    pub(crate) fn kernel_async_here() -> Self {
        ENGINES
            .iter()
            .find(|r| r.caps.kernel_async && r.caps.platform.runs_here())
            .map_or(PSYNC.kind, |r| r.kind)
    }

    /// The engine recorded for metadata runs.
    pub(crate) fn for_metadata() -> Self {
        ENGINES
            .iter()
            .find(|r| r.caps.metadata)
            .map_or(PSYNC.kind, |r| r.kind)
    }

    /// An engine by its exact name, as results and agents spell it: an
    /// unknown name is an error naming the known ones, never a default.
    pub(crate) fn from_name(name: &str) -> std::result::Result<Self, String> {
        ENGINES
            .iter()
            .find(|r| r.name == name)
            .map(|r| r.kind)
            .ok_or_else(|| {
                format!(
                    "unknown engine '{name}' (this volbench knows {})",
                    engine_names()
                )
            })
    }
}

impl std::fmt::Display for EngineKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for EngineKind {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for EngineKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Self::from_name(&name).map_err(D::Error::custom)
    }
}

/// Which I/O engine to use; `Auto` is resolved before anything runs. In
/// specs as "auto" or the engine's name, as before the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineChoice {
    Auto,
    Only(EngineKind),
}

impl Serialize for EngineChoice {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for EngineChoice {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        if name == "auto" {
            return Ok(Self::Auto);
        }
        EngineKind::from_name(&name)
            .map(Self::Only)
            .map_err(D::Error::custom)
    }
}

impl EngineChoice {
    pub(crate) fn parse(text: &str) -> Result<Self> {
        if text.trim().eq_ignore_ascii_case("auto") {
            return Ok(Self::Auto);
        }
        match row_named(text) {
            Some(r) => Ok(Self::Only(r.kind)),
            None => Err(VbError::input(format!(
                "--engine '{text}' is not one of {}",
                choice_names()
            ))),
        }
    }

    /// Refuses, before anything is opened, an engine this system cannot
    /// run (`--engine io_uring` on Windows, `--engine overlapped` on Linux):
    /// its name is still known, so results and agents' messages that carry
    /// it are read everywhere.
    pub(crate) fn check_platform(self) -> Result<()> {
        match self.kind() {
            Some(k) if !k.caps().platform.runs_here() => Err(VbError::input(format!(
                "--engine {} runs on {} only; this volbench runs on {} (its engines here: {})",
                k.name(),
                k.caps().platform.name(),
                Platform::HERE.name(),
                ENGINES
                    .iter()
                    .filter(|r| r.caps.platform.runs_here())
                    .map(|r| r.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
            _ => Ok(()),
        }
    }

    /// The one engine asked for, or `None` for `auto`.
    pub(crate) fn kind(self) -> Option<EngineKind> {
        match self {
            Self::Auto => None,
            Self::Only(k) => Some(k),
        }
    }

    pub(crate) fn name(self) -> &'static str {
        self.kind().map_or("auto", EngineKind::name)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn every_kind_has_one_row() {
        for row in ENGINES {
            let same = ENGINES.iter().filter(|r| r.kind == row.kind).count();
            assert_eq!(same, 1, "{} has {same} rows", row.name);
            assert_eq!(row.kind.row().name, row.name);
        }
    }

    #[test]
    fn every_engine_name_and_alias_parses_to_its_row() {
        for row in ENGINES {
            for text in std::iter::once(&row.name).chain(row.aliases) {
                assert_eq!(
                    EngineChoice::parse(text).ok(),
                    Some(EngineChoice::Only(row.kind))
                );
                let loud = text.to_ascii_uppercase().replace('_', "-");
                assert_eq!(
                    EngineChoice::parse(&loud).ok(),
                    Some(EngineChoice::Only(row.kind))
                );
            }
            assert_eq!(EngineKind::from_name(row.name), Ok(row.kind));
        }
        assert_eq!(EngineChoice::parse(" Auto ").ok(), Some(EngineChoice::Auto));
    }

    #[test]
    fn an_unknown_engine_is_an_error_naming_the_known_ones() {
        let e = EngineChoice::parse("libaio").err().map(|e| e.message);
        let e = e.unwrap_or_default();
        assert!(e.contains("'libaio'"), "{e}");
        for row in ENGINES {
            assert!(e.contains(row.name), "{e}");
        }
        assert!(e.contains("auto"), "{e}");
        let e = EngineKind::from_name("rbd").unwrap_err();
        assert!(
            e.contains("'rbd'") && ENGINES.iter().all(|r| e.contains(r.name)),
            "{e}"
        );
        // Results and agents spell names exactly: an alias is not a name there.
        assert!(EngineKind::from_name("uring").is_err());
    }

    #[test]
    fn names_in_json_are_the_table_names_both_ways() {
        for row in ENGINES {
            let json = format!("\"{}\"", row.name);
            assert_eq!(serde_json::to_string(&row.kind).ok(), Some(json.clone()));
            assert_eq!(
                serde_json::to_string(&EngineChoice::Only(row.kind)).ok(),
                Some(json.clone())
            );
            assert_eq!(
                serde_json::from_str::<EngineKind>(&json).ok(),
                Some(row.kind)
            );
            assert_eq!(
                serde_json::from_str::<EngineChoice>(&json).ok(),
                Some(EngineChoice::Only(row.kind))
            );
        }
        assert_eq!(
            serde_json::to_string(&EngineChoice::Auto).ok().as_deref(),
            Some("\"auto\"")
        );
        let e = serde_json::from_str::<EngineKind>("\"rbd\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown engine 'rbd'"), "{e}");
        assert!(serde_json::from_str::<EngineChoice>("\"rbd\"").is_err());
    }

    #[test]
    fn capabilities_decide_what_the_names_used_to() {
        // Depth becomes threads exactly for engines without a queue.
        assert!(EngineKind::Psync.is_sync());
        assert!(!EngineKind::IoUring.is_sync() && !EngineKind::Null.is_sync());
        assert!(
            ENGINES
                .iter()
                .filter(|r| r.caps.diskless)
                .all(|r| !r.caps.direct)
        );
        assert!(EngineKind::for_metadata().caps().metadata);
    }

    #[test]
    fn an_engine_of_another_system_is_refused_by_name_and_lists_what_runs_here() {
        for row in ENGINES {
            let choice = EngineChoice::Only(row.kind);
            if row.caps.platform.runs_here() {
                assert!(choice.check_platform().is_ok(), "{}", row.name);
                continue;
            }
            let e = choice.check_platform().unwrap_err();
            assert_eq!(e.kind, crate::error::Kind::Input);
            assert!(
                e.message.contains(&format!("--engine {}", row.name)),
                "{e:?}"
            );
            assert!(e.message.contains(row.caps.platform.name()), "{e:?}");
            assert!(e.message.contains("null"), "{e:?}");
        }
        let foreign = if cfg!(windows) {
            "io_uring"
        } else {
            "overlapped"
        };
        assert!(EngineChoice::parse(foreign).is_ok_and(|c| c.check_platform().is_err()));
        assert!(EngineChoice::Auto.check_platform().is_ok());
    }
}
