//! The per-block record of the last write, shared by a run's workers.
//!
//! One `AtomicU32` per block: the low 31 bits are the counter of the last
//! write issued to it (0: the fill; `UNKNOWN`: never written by volbench,
//! not checked), the top bit says an I/O owns the block. A worker takes
//! every block of an I/O before issuing it and gives them back when it
//! completes; an I/O that would touch a block another I/O owns is not
//! issued (the worker draws another). So a read never overlaps a write of
//! the same block and each check knows exactly which write it must see.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use super::journal::Journal;
use crate::error::{Result, VbError};
use crate::io::workload::{IoOp, Layout};
use crate::units::{bounds, format_size};

use super::journal_file::BUSY;
pub(crate) use super::journal_file::{FORMED, UNKNOWN};

/// The next counter after `c`: 1.. and never FORMED, UNKNOWN or the fill's 0.
#[inline]
pub(crate) fn next_counter(c: u32) -> u32 {
    if c + 1 >= FORMED { 1 } else { c + 1 }
}

pub(crate) struct BlockMap {
    unit: u64,
    per_file: u64,
    cells: Box<[AtomicU32]>,
    /// The files, for error messages.
    pub(crate) paths: Vec<PathBuf>,
    /// Mismatches over the whole job, against --max-data-errors.
    pub(crate) errors: AtomicU64,
    pub(crate) max_errors: u64,
    pub(crate) journal: Option<std::sync::Arc<Journal>>,
}

/// Memory the map of a set of `total` bytes in `unit`-byte blocks takes.
pub(crate) fn map_bytes(total: u64, nfiles: u32, unit: u64) -> u64 {
    (total / unit.max(1) + nfiles as u64) * 4
}

/// The map's block: the largest size dividing every block size (offsets
/// are multiples of the smallest one), so no I/O covers part of a block.
pub(crate) fn block_unit(sizes: impl IntoIterator<Item = u64>) -> u64 {
    fn gcd(a: u64, b: u64) -> u64 {
        if b == 0 { a } else { gcd(b, a % b) }
    }
    sizes.into_iter().fold(0, gcd).max(512)
}

impl BlockMap {
    /// Every block starts at `init`: 0 for a set just filled, FORMED for
    /// one volbench filled earlier, UNKNOWN for anything else.
    pub(crate) fn new(
        layout: Layout,
        unit: u64,
        init: u32,
        paths: Vec<PathBuf>,
        max_errors: u64,
    ) -> Result<Self> {
        let per_file = layout.file_size.div_ceil(unit);
        let n = per_file.saturating_mul(layout.nfiles as u64);
        if n.saturating_mul(4) > bounds::MAX_VERIFY_MAP_BYTES {
            return Err(VbError::input(format!(
                "--verify over {} in {}-byte blocks needs a {} map; at most {}: use a smaller \
                 --size or a larger --bs",
                format_size(layout.total()),
                unit,
                format_size(n * 4),
                format_size(bounds::MAX_VERIFY_MAP_BYTES)
            )));
        }
        Ok(Self {
            unit,
            per_file,
            cells: (0..n).map(|_| AtomicU32::new(init)).collect(),
            paths,
            errors: AtomicU64::new(0),
            max_errors,
            journal: None,
        })
    }

    pub(crate) fn blocks(&self) -> usize {
        self.cells.len()
    }

    /// Loads counters (from a journal).
    pub(crate) fn set(&self, block: usize, counter: u32) {
        if let Some(c) = self.cells.get(block) {
            c.store(counter & !BUSY, Ordering::Relaxed);
        }
    }

    #[cfg(test)]
    pub(crate) fn get(&self, block: usize) -> u32 {
        self.cells
            .get(block)
            .map_or(UNKNOWN, |c| c.load(Ordering::Acquire) & !BUSY)
    }

    #[inline]
    fn range(&self, op: &IoOp) -> std::ops::Range<usize> {
        let first = op.file as u64 * self.per_file + op.offset / self.unit;
        let n = (op.len as u64).div_ceil(self.unit);
        let end = (first + n).min(self.cells.len() as u64);
        first as usize..end as usize
    }

    /// Takes every block of `op`; a write also moves each to its next
    /// counter. False (holding nothing) if another I/O owns one of them.
    #[inline]
    pub(crate) fn acquire(&self, op: &IoOp) -> bool {
        let range = self.range(op);
        for i in range.clone() {
            let cell = &self.cells[i];
            let cur = cell.load(Ordering::Relaxed);
            if cur & BUSY != 0
                || cell
                    .compare_exchange(cur, cur | BUSY, Ordering::Acquire, Ordering::Relaxed)
                    .is_err()
            {
                for c in &self.cells[range.start..i] {
                    c.store(c.load(Ordering::Relaxed) & !BUSY, Ordering::Release);
                }
                return false;
            }
        }
        if op.write {
            for i in range {
                let c = &self.cells[i];
                let n = next_counter(c.load(Ordering::Relaxed) & !BUSY);
                c.store(n | BUSY, Ordering::Relaxed);
                if let Some(j) = &self.journal {
                    j.issue(i, n);
                }
            }
        }
        true
    }

    /// The counter of the block holding byte `at` of `op` (owned by the caller).
    #[inline]
    pub(crate) fn counter_at(&self, op: &IoOp, at: u64) -> u32 {
        let i = self.range(op).start + (at / self.unit) as usize;
        self.cells
            .get(i)
            .map_or(UNKNOWN, |c| c.load(Ordering::Relaxed) & !BUSY)
    }

    /// Gives `op`'s blocks back once it completed; a write that failed
    /// leaves its blocks' content unknown.
    #[inline]
    pub(crate) fn release(&self, op: &IoOp, ok: bool) {
        for i in self.range(op) {
            let c = &self.cells[i];
            let v = c.load(Ordering::Relaxed) & !BUSY;
            let v = if op.write && !ok { UNKNOWN } else { v };
            if op.write && ok {
                if let Some(j) = &self.journal {
                    j.acknowledge(i, v);
                }
            }
            c.store(v, Ordering::Release);
        }
    }
}

impl Drop for BlockMap {
    /// Every run on the set is over (the map outlives them): the journal is
    /// synced and marked clean unless a worker gave up on an I/O.
    fn drop(&mut self) {
        if let Some(j) = &self.journal {
            let _ = j.close(true);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map() -> BlockMap {
        let layout = Layout {
            nfiles: 2,
            file_size: 16384,
        };
        BlockMap::new(layout, 4096, 0, Vec::new(), 1).unwrap()
    }

    fn op(write: bool, file: u32, offset: u64, len: u32) -> IoOp {
        IoOp {
            write,
            file,
            offset,
            len,
        }
    }

    #[test]
    fn a_block_owned_by_one_io_is_refused_to_another() {
        let m = map();
        let w = op(true, 1, 4096, 8192);
        assert!(m.acquire(&w));
        assert_eq!(m.counter_at(&w, 0), 1);
        assert_eq!(m.counter_at(&w, 4096), 1);
        // Overlapping the write's second block: refused, and the refusal
        // leaves the first block (not overlapping) free.
        assert!(!m.acquire(&op(false, 1, 0, 12288)));
        assert!(m.acquire(&op(false, 1, 0, 4096)));
        m.release(&w, true);
        assert_eq!(m.get(5), 1);
        assert_eq!(m.get(4), 0, "the fill's counter");
        assert!(m.acquire(&op(false, 1, 8192, 4096)));
    }

    #[test]
    fn a_failed_write_leaves_its_blocks_unknown() {
        let m = map();
        let w = op(true, 0, 0, 4096);
        assert!(m.acquire(&w));
        m.release(&w, false);
        assert_eq!(m.get(0), UNKNOWN);
        assert!(m.acquire(&w));
        assert_eq!(m.counter_at(&w, 0), 1);
    }

    #[test]
    fn counters_skip_the_fill_and_unknown() {
        assert_eq!(next_counter(0), 1);
        assert_eq!(next_counter(FORMED - 1), 1);
        assert_eq!(next_counter(FORMED), 1);
        assert_eq!(next_counter(UNKNOWN), 1);
    }

    #[test]
    fn the_map_is_bounded() {
        let huge = Layout {
            nfiles: 1,
            file_size: 1 << 50,
        };
        let e = BlockMap::new(huge, 4096, 0, Vec::new(), 1)
            .err()
            .map(|e| e.message)
            .unwrap_or_default();
        assert!(e.contains("at most 1GiB"), "{e}");
        assert_eq!(block_unit([4096, 65536]), 4096);
        assert_eq!(block_unit([8192, 12288]), 4096);
    }
}
