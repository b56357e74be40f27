//! The metadata and small-file part of a run: a tree of directories and
//! files (like vdbench's fsd) and the operations done on it. A run with a
//! `MetaSpec` is a run like any other; only what each worker does differs.

use serde::{Deserialize, Serialize};

use crate::spec::BlockSize;
use crate::units::format_size;

/// One file-system operation, timed as a whole (open to close included).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum MetaOp {
    Mkdir,
    Create,
    Open,
    Stat,
    Setattr,
    Read,
    Write,
    Append,
    Rename,
    Readdir,
    Delete,
    Rmdir,
}

pub(crate) const ALL_OPS: [MetaOp; 12] = [
    MetaOp::Mkdir,
    MetaOp::Create,
    MetaOp::Open,
    MetaOp::Stat,
    MetaOp::Setattr,
    MetaOp::Read,
    MetaOp::Write,
    MetaOp::Append,
    MetaOp::Rename,
    MetaOp::Readdir,
    MetaOp::Delete,
    MetaOp::Rmdir,
];

impl MetaOp {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Mkdir => "mkdir",
            Self::Create => "create",
            Self::Open => "open",
            Self::Stat => "stat",
            Self::Setattr => "setattr",
            Self::Read => "read",
            Self::Write => "write",
            Self::Append => "append",
            Self::Rename => "rename",
            Self::Readdir => "readdir",
            Self::Delete => "delete",
            Self::Rmdir => "rmdir",
        }
    }

    pub(crate) fn parse(text: &str) -> Option<Self> {
        let t = text.trim().to_ascii_lowercase();
        ALL_OPS.into_iter().find(|op| op.name() == t)
    }

    /// Index into per-operation tables.
    pub(crate) fn index(self) -> usize {
        self as usize
    }

    /// Changes the tree (names, contents or attributes): counted with the
    /// writes in a run's read/write totals; the others with the reads.
    pub(crate) fn mutates(self) -> bool {
        !matches!(self, Self::Open | Self::Stat | Self::Read | Self::Readdir)
    }

    /// Works on leaf directories rather than files.
    pub(crate) fn on_dirs(self) -> bool {
        matches!(self, Self::Mkdir | Self::Readdir | Self::Rmdir)
    }
}

impl std::fmt::Display for MetaOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct MetaOpWeight {
    pub(crate) op: MetaOp,
    pub(crate) weight: u32,
}

/// The tree's bounds, stated in `units::bounds` and in the errors.
pub(crate) const MAX_DEPTH: u32 = crate::units::bounds::MAX_TREE_DEPTH;
pub(crate) const MAX_WIDTH: u32 = crate::units::bounds::MAX_TREE_WIDTH;
pub(crate) const MAX_FILES: u64 = crate::units::bounds::MAX_TREE_FILES;
pub(crate) const MAX_FILE_SIZE: u64 = crate::units::bounds::MAX_TREE_FILE_SIZE;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetaSpec {
    /// Directory levels below the tree root; files sit in the deepest level.
    pub(crate) depth: u32,
    /// Directories per directory.
    pub(crate) width: u32,
    pub(crate) files_per_dir: u32,
    /// File sizes (from 0 bytes), one size or a weighted mix; each file's
    /// size follows from its index, so every phase agrees on it.
    pub(crate) file_size: Vec<BlockSize>,
    /// One operation for a phase over the whole tree; a weighted mix for a
    /// timed run over an existing tree.
    pub(crate) ops: Vec<MetaOpWeight>,
    /// Every file (or leaf directory) once, then stop; else timed.
    pub(crate) whole_tree: bool,
    /// All threads work in the same directories instead of each in its own.
    #[serde(default)]
    pub(crate) shared_dirs: bool,
    /// Sync and drop the client's caches before the run (root).
    #[serde(default)]
    pub(crate) drop_caches: bool,
    /// O_DIRECT for files whose size is a multiple of 4 KiB; buffered otherwise.
    #[serde(default)]
    pub(crate) direct: bool,
    /// One host's part of a tree shared by many hosts: the target is
    /// `ROOT/hostN`, and ROOT is made if missing and may hold only such parts.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) host_part: bool,
    /// A create phase keeps each file already there, the tree's own, at its
    /// full size, and makes only the others (vdbench's format=restart):
    /// a tree left part-made is completed rather than made again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) keep_complete: bool,
}

impl MetaSpec {
    /// Leaf directories: width^depth.
    pub(crate) fn leaves(&self) -> u64 {
        (self.width as u64).saturating_pow(self.depth)
    }

    pub(crate) fn total_files(&self) -> u64 {
        self.leaves().saturating_mul(self.files_per_dir as u64)
    }

    pub(crate) fn max_file_size(&self) -> u64 {
        self.file_size.iter().map(|b| b.bytes).max().unwrap_or(0)
    }

    /// Mean bytes per file, by the mix's weights.
    pub(crate) fn mean_file_size(&self) -> f64 {
        let w: u64 = self.file_size.iter().map(|b| b.weight as u64).sum();
        if w == 0 {
            return 0.0;
        }
        self.file_size
            .iter()
            .map(|b| b.bytes as f64 * b.weight as f64)
            .sum::<f64>()
            / w as f64
    }

    /// Share of the mix's operations that only look (stat, open, read, readdir).
    pub(crate) fn read_pct(&self) -> u8 {
        let total: u64 = self.ops.iter().map(|o| o.weight as u64).sum();
        let reads: u64 = self
            .ops
            .iter()
            .filter(|o| !o.op.mutates())
            .map(|o| o.weight as u64)
            .sum();
        if total == 0 {
            return 100;
        }
        ((reads * 100 + total / 2) / total) as u8
    }

    pub(crate) fn size_label(&self) -> String {
        if let [only] = self.file_size.as_slice() {
            return format_size(only.bytes);
        }
        self.file_size
            .iter()
            .map(|b| format!("{}:{}", format_size(b.bytes), b.weight))
            .collect::<Vec<_>>()
            .join(",")
    }

    pub(crate) fn ops_label(&self) -> String {
        if self.whole_tree {
            if let [only] = self.ops.as_slice() {
                return only.op.name().into();
            }
        }
        self.ops
            .iter()
            .map(|o| format!("{}:{}", o.op.name(), o.weight))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Checks the tree and the operations; `threads` to see they can share it.
    pub(crate) fn validate(&self, threads: u32) -> Result<(), String> {
        if self.depth > MAX_DEPTH {
            return Err(format!("--depth {} is outside 0..{MAX_DEPTH}", self.depth));
        }
        if self.width == 0 || self.width > MAX_WIDTH {
            return Err(format!("--width {} is outside 1..{MAX_WIDTH}", self.width));
        }
        if self.files_per_dir == 0 {
            return Err("--files-per-dir must be at least 1".into());
        }
        let leaves = (self.width as u64).checked_pow(self.depth);
        let files = leaves.and_then(|l| l.checked_mul(self.files_per_dir as u64));
        match files {
            Some(n) if n <= MAX_FILES => {}
            _ => {
                return Err(format!(
                    "--width {} ^ --depth {} x --files-per-dir {} is more than {MAX_FILES} files",
                    self.width, self.depth, self.files_per_dir
                ));
            }
        }
        if self.file_size.is_empty() {
            return Err("--file-size is empty".into());
        }
        if self.max_file_size() > MAX_FILE_SIZE {
            return Err(format!(
                "--file-size {} is larger than {}",
                format_size(self.max_file_size()),
                format_size(MAX_FILE_SIZE)
            ));
        }
        if self.keep_complete
            && !(self.whole_tree && self.ops.iter().all(|o| o.op == MetaOp::Create))
        {
            return Err("--keep-complete goes with a create phase (--ops create)".into());
        }
        if self.ops.is_empty() {
            return Err("--ops names no operation".into());
        }
        if self.depth == 0 {
            if let Some(o) = self
                .ops
                .iter()
                .find(|o| matches!(o.op, MetaOp::Mkdir | MetaOp::Rmdir))
            {
                return Err(format!(
                    "--ops {} needs leaf directories below the root: --depth 1 or more",
                    o.op
                ));
            }
        }
        if self.whole_tree && self.ops.len() != 1 {
            return Err("a phase runs exactly one operation".into());
        }
        if !self.whole_tree {
            if let Some(o) = self
                .ops
                .iter()
                .find(|o| matches!(o.op, MetaOp::Mkdir | MetaOp::Rmdir))
            {
                return Err(format!(
                    "--ops {} works on the tree's shape; it runs only as a phase (a plain list), not in a weighted mix",
                    o.op
                ));
            }
            if self.ops.iter().all(|o| o.weight == 0) {
                return Err("--ops weights add up to 0".into());
            }
        }
        let units = self.leaves();
        if !self.shared_dirs && units < threads as u64 {
            return Err(format!(
                "--threads {threads} is more than the tree's {units} leaf directories, and each thread \
                 owns its own; use --shared-dirs, or a wider or deeper tree"
            ));
        }
        if self.shared_dirs && self.total_files() < threads as u64 {
            return Err(format!(
                "--threads {threads} is more than the tree's {} files",
                self.total_files()
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    fn spec() -> MetaSpec {
        MetaSpec {
            depth: 2,
            width: 10,
            files_per_dir: 200,
            file_size: vec![BlockSize {
                bytes: 4096,
                weight: 1,
            }],
            ops: vec![MetaOpWeight {
                op: MetaOp::Create,
                weight: 1,
            }],
            whole_tree: true,
            shared_dirs: false,
            drop_caches: false,
            direct: false,
            host_part: false,
            keep_complete: false,
        }
    }

    #[test]
    fn counts_follow_the_shape() {
        let s = spec();
        assert_eq!(s.leaves(), 100);
        assert_eq!(s.total_files(), 20_000);
        s.validate(8).unwrap();
    }

    #[test]
    fn shapes_out_of_bounds_say_the_bound() {
        let mut s = spec();
        s.depth = 17;
        assert!(s.validate(1).unwrap_err().contains("0..16"));
        let mut s = spec();
        s.width = 100_000;
        s.depth = 3;
        assert!(s.validate(1).unwrap_err().contains("10000000 files"));
        let mut s = spec();
        s.depth = 0;
        assert!(s.validate(2).unwrap_err().contains("--shared-dirs"));
        s.shared_dirs = true;
        s.validate(2).unwrap();
    }

    #[test]
    fn names_round_trip() {
        for op in ALL_OPS {
            assert_eq!(MetaOp::parse(op.name()), Some(op));
            assert_eq!(ALL_OPS[op.index()], op);
        }
        assert_eq!(MetaOp::parse("chmod"), None);
    }
}
