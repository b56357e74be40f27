//! Per-worker I/O decisions: which operation, how large, where. Each worker
//! owns one generator seeded from the run seed and its index, so the same
//! seed gives the same offsets, and no state is shared on the I/O path.

use crate::spec::{BlockSize, Pattern};

/// The file set as the generator sees it: `nfiles` files of `file_size` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Layout {
    pub(crate) nfiles: u32,
    pub(crate) file_size: u64,
}

impl Layout {
    pub(crate) fn total(&self) -> u64 {
        self.nfiles as u64 * self.file_size
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct IoOp {
    pub(crate) write: bool,
    pub(crate) file: u32,
    pub(crate) offset: u64,
    pub(crate) len: u32,
}

/// What a random map does to the set's cached pages when a pass ends:
/// advice to drop them, file by file (`executor::set_files`).
pub(crate) type PassEnd = Box<dyn FnMut() + Send>;

pub(crate) struct IoGen {
    rng: fastrand::Rng,
    random: bool,
    read_pct: u32,
    /// Reads' sizes, then writes' own when they have them (`writes`).
    sizes: Vec<u32>,
    /// Per size: how many aligned offsets fit in a file, precomputed so the
    /// hot path draws an offset without a 64-bit division (tens of cycles).
    positions: Vec<u64>,
    /// Cumulative weights, restarting at each direction's first size.
    cum_weights: Vec<u32>,
    /// Where each direction's sizes sit in `sizes`: (first, count, total
    /// weight); the same for both unless writes have their own.
    reads: (usize, usize, u32),
    writes: (usize, usize, u32),
    align: u64,
    layout: Layout,
    region_start: u64,
    region_end: u64,
    cursor: u64,
    /// Writes' own position when reads and writes stream apart (fio's
    /// jobs keep one per direction; `Streams::Each`); unused otherwise.
    write_cursor: u64,
    two_cursors: bool,
    /// Random patterns: the share of I/Os (percent) that seek; 100 unless
    /// --seek-pct says otherwise, the rest continue from the last I/O.
    seek_pct: u32,
    /// Skewed offsets (see `skew`): empty for uniform ones.
    skew: Vec<(u64, u64)>,
    /// Aligned slots per file, for mapping a skewed slot to a file.
    slots_per_file: u64,
    /// fio's random map: every slot once per pass (`--random-map`).
    visit: Option<Box<Visit>>,
    /// This thread's index and the run's thread count, which place its
    /// sequential stream (`spec::streams`).
    worker: u32,
    workers: u32,
}

/// One pass over `slots` slots in a shuffled order: a counter through the
/// next power of two, each value sent through a keyed bijection of that
/// many bits, values past the last slot skipped (fewer than half). No
/// memory per slot, unlike a bitmap, so a set of any size costs the same.
pub(crate) struct Visit {
    slots: u64,
    mask: u64,
    shift: u32,
    key: u64,
    counter: u64,
    /// Drops the set's cached pages when a pass ends (buffered runs with
    /// invalidate on, as fio's loop_cache_invalidate): None otherwise.
    drop: Option<PassEnd>,
    /// Passes finished, for the tests.
    passes: u64,
    /// Slots in one file: the smallest size's positions.
    per_file: u64,
}

impl Visit {
    pub(crate) fn new(slots: u64, seed: u64) -> Self {
        let bits = 64 - slots.max(2).saturating_sub(1).leading_zeros();
        Self {
            slots: slots.max(1),
            mask: if bits >= 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            },
            shift: (bits / 2).max(1),
            key: seed,
            counter: 0,
            drop: None,
            passes: 0,
            per_file: slots.max(1),
        }
    }

    /// A bijection on `mask`'s bits: xor-shifts, odd multipliers and a key
    /// added, each reversible modulo the power of two.
    #[inline]
    fn mix(&self, x: u64) -> u64 {
        let m = self.mask;
        let mut y = x.wrapping_add(self.key) & m;
        y ^= y >> self.shift;
        y = y.wrapping_mul(0x9E37_79B9_7F4A_7C15) & m;
        y ^= y >> self.shift;
        y = y.wrapping_mul(0xBF58_476D_1CE4_E5B9) & m;
        y ^= y >> self.shift;
        y.wrapping_add(self.key.rotate_left(17)) & m
    }

    /// The next slot of this pass; a pass's end starts the next with a new
    /// order and drops the set's cached pages.
    #[inline]
    pub(crate) fn next_slot(&mut self) -> u64 {
        loop {
            if self.counter > self.mask {
                self.counter = 0;
                self.passes += 1;
                self.key = crate::io::workload::worker_seed(self.key, self.passes as u32);
                if let Some(drop) = self.drop.as_mut() {
                    drop();
                }
            }
            let s = self.mix(self.counter);
            self.counter += 1;
            if s < self.slots {
                return s;
            }
        }
    }
}

/// Mixes the run seed with a worker index so workers draw independent streams.
pub(crate) fn worker_seed(seed: u64, worker: u32) -> u64 {
    let mut z = seed ^ (worker as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl IoGen {
    /// `worker` of `workers` gets its own contiguous region for sequential
    /// patterns (each stream stays sequential); random patterns roam the
    /// whole set. Offsets are aligned to the smallest block size, as fio does.
    pub(crate) fn new(
        pattern: Pattern,
        read_pct: u8,
        bs: &[BlockSize],
        layout: Layout,
        seed: u64,
        worker: u32,
        workers: u32,
    ) -> Self {
        let mut g = Self {
            rng: fastrand::Rng::with_seed(worker_seed(seed, worker)),
            random: pattern.is_random(),
            read_pct: read_pct as u32,
            sizes: Vec::new(),
            positions: Vec::new(),
            cum_weights: Vec::new(),
            reads: (0, 0, 0),
            writes: (0, 0, 0),
            align: 1,
            layout,
            region_start: 0,
            region_end: 0,
            cursor: 0,
            write_cursor: 0,
            two_cursors: false,
            seek_pct: 100,
            skew: Vec::new(),
            slots_per_file: 1,
            visit: None,
            worker,
            workers,
        };
        g.size_table(bs, &[]);
        g
    }

    /// Writes drawn from their own sizes (fio bs=R,W); empty keeps the
    /// reads' sizes for both.
    pub(crate) fn sized_writes(mut self, write_bs: &[BlockSize]) -> Self {
        if !write_bs.is_empty() {
            let reads: Vec<BlockSize> = self
                .sizes
                .iter()
                .zip(&self.cum_weights)
                .scan(0u32, |prev, (&bytes, &cum)| {
                    let weight = cum - *prev;
                    *prev = cum;
                    Some(BlockSize {
                        bytes: bytes.into(),
                        weight,
                    })
                })
                .collect();
            self.size_table(&reads, write_bs);
        }
        self
    }

    /// The size tables and what hangs on the smallest size: offsets are
    /// aligned to it over both directions, as fio aligns to its smallest.
    fn size_table(&mut self, reads: &[BlockSize], writes: &[BlockSize]) {
        let align = reads
            .iter()
            .chain(writes)
            .map(|b| b.bytes)
            .min()
            .unwrap_or(4096)
            .max(1);
        let layout = self.layout;
        let mut cum_weights = Vec::with_capacity(reads.len() + writes.len());
        let mut total = |list: &[BlockSize]| {
            let mut cum = 0u32;
            for b in list {
                cum = cum.saturating_add(b.weight);
                cum_weights.push(cum);
            }
            cum
        };
        let read_total = total(reads);
        self.reads = (0, reads.len(), read_total);
        self.writes = if writes.is_empty() {
            self.reads
        } else {
            (reads.len(), writes.len(), total(writes))
        };
        self.cum_weights = cum_weights;
        self.sizes = reads.iter().chain(writes).map(|b| b.bytes as u32).collect();
        self.positions = reads
            .iter()
            .chain(writes)
            .map(|b| layout.file_size.saturating_sub(b.bytes) / align + 1)
            .collect();
        self.align = align;
        self.slots_per_file = (layout.file_size / align).max(1);
        let (start, end) = crate::spec::streams::Streams::Split
            .region(layout.total(), align, self.worker, self.workers)
            .unwrap_or((0, 0));
        self.region_start = start;
        self.region_end = end;
        self.cursor = start;
        self.write_cursor = start;
    }

    /// Sequential streams as `streams` places them (`spec::streams`):
    /// each thread its share, or each its own pass. A pass that would leave
    /// the set gets an empty region, which `region_too_small` reports.
    fn streamed(mut self, streams: crate::spec::streams::Streams) -> Self {
        let (start, end) = streams
            .region(self.layout.total(), self.align, self.worker, self.workers)
            .unwrap_or((0, 0));
        self.region_start = start;
        self.region_end = end;
        self.cursor = start;
        self.write_cursor = start;
        self.two_cursors = !streams.is_split() && self.read_pct != 0 && self.read_pct != 100;
        self
    }

    /// fio's random map (`--random-map`): every block once per pass. The spec allows it only
    /// with uniform offsets, so the slots are the positions of the smallest size over both
    /// directions (the alignment's); a larger block starts at a slot clipped to its own last.
    pub(crate) fn visit_once(mut self, seed: u64, worker: u32) -> Self {
        if self.random {
            let per_file = self.positions.iter().copied().max().unwrap_or(1).max(1);
            let slots = per_file.saturating_mul(self.layout.nfiles as u64);
            let mut visit = Visit::new(slots, worker_seed(seed, worker));
            visit.per_file = per_file;
            self.visit = Some(Box::new(visit));
        }
        self
    }

    /// What drops the set's cached pages at each of the random map's pass
    /// ends (its files opened by the worker thread, so they close with
    /// its table).
    pub(crate) fn drop_at_pass_end(&mut self, drop: PassEnd) {
        if let Some(v) = self.visit.as_mut() {
            v.drop = Some(drop);
        }
    }

    /// Passes finished by the random map (0 without one).
    #[cfg(test)]
    pub(crate) fn passes(&self) -> u64 {
        self.visit.as_ref().map_or(0, |v| v.passes)
    }

    /// Applies a run's shape: where sequential streams run, or skewed
    /// offsets and partial seeks (random patterns only; the spec refuses
    /// them for sequential ones).
    pub(crate) fn shaped(mut self, shape: &crate::spec::shape::Shape) -> Self {
        if !self.random {
            return self.streamed(shape.streams);
        }
        if !shape.distribution.is_uniform() {
            let slots = self.slots_per_file * self.layout.nfiles as u64;
            self.skew = crate::io::skew::table(&shape.distribution, slots);
        }
        if let Some(p) = shape.seek_pct {
            self.seek_pct = p.min(100) as u32;
            // Sequential stretches run on from wherever the last seek
            // landed, over the whole set (vdbench's seekpct), never a
            // worker's region, which may be smaller than one block.
            self.region_start = 0;
            self.region_end = self.layout.total() / self.align * self.align;
        }
        self
    }

    /// A skewed slot as (file, offset) for an I/O of size index `size`.
    #[inline]
    fn skewed(&mut self, size: usize) -> (u32, u64) {
        let (first, count) = self.skew[self.rng.usize(0..self.skew.len())];
        let slot = first + self.rng.u64(0..count);
        let (file, within) = if self.layout.nfiles == 1 {
            (0, slot)
        } else {
            (slot / self.slots_per_file, slot % self.slots_per_file)
        };
        // The last slots of a file cannot start a block larger than one slot.
        let last = self.positions[size] - 1;
        (file as u32, within.min(last) * self.align)
    }

    /// The index in `sizes` of the next block size of a read or a write.
    #[inline]
    fn pick_size(&mut self, write: bool) -> usize {
        let (first, count, total) = if write { self.writes } else { self.reads };
        if count <= 1 {
            return first;
        }
        let r = self.rng.u32(0..total.max(1));
        let cum = self.cum_weights.get(first..first + count).unwrap_or(&[]);
        first + cum.partition_point(|&c| c <= r).min(count - 1)
    }

    #[inline]
    pub(crate) fn next_op(&mut self) -> IoOp {
        let write = match self.read_pct {
            100 => false,
            0 => true,
            p => self.rng.u32(0..100) >= p,
        };
        let size = self.pick_size(write);
        let len = self.sizes[size];
        let fs = self.layout.file_size;
        if self.random && (self.seek_pct == 100 || self.rng.u32(0..100) < self.seek_pct) {
            let (file, offset) = if !self.skew.is_empty() {
                self.skewed(size)
            } else if let Some(v) = self.visit.as_mut() {
                let slot = v.next_slot();
                let per_file = v.per_file;
                (
                    (slot / per_file) as u32,
                    (slot % per_file).min(self.positions[size] - 1) * self.align,
                )
            } else if self.layout.nfiles == 1 {
                (0, self.rng.u64(0..self.positions[size]) * self.align)
            } else {
                (
                    self.rng.u32(0..self.layout.nfiles),
                    self.rng.u64(0..self.positions[size]) * self.align,
                )
            };
            if self.seek_pct < 100 {
                self.cursor = file as u64 * fs + offset + len as u64;
            }
            return IoOp {
                write,
                file,
                offset,
                len,
            };
        }
        let l = len as u64;
        let cursor = if write && self.two_cursors {
            &mut self.write_cursor
        } else {
            &mut self.cursor
        };
        loop {
            if *cursor + l > self.region_end {
                *cursor = self.region_start;
            }
            let file = *cursor / fs;
            let offset = *cursor % fs;
            if offset + l > fs {
                // An I/O never straddles two files: move to the next file's start.
                *cursor = (file + 1) * fs;
                continue;
            }
            *cursor += l;
            return IoOp {
                write,
                file: file as u32,
                offset,
                len,
            };
        }
    }

    /// Sequential streams: contiguous offsets, one after another.
    pub(crate) fn is_sequential(&self) -> bool {
        !self.random
    }

    /// True when this worker's region cannot hold even one I/O of the largest
    /// size (too many workers for a small sequential working set).
    pub(crate) fn region_too_small(&self) -> bool {
        let max = self.sizes.iter().copied().max().unwrap_or(0) as u64;
        self.region_end.saturating_sub(self.region_start) < max
    }
}

#[cfg(test)]
mod tests;
