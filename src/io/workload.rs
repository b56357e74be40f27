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
    /// Files whose cached pages are dropped when a pass ends (buffered runs
    /// with invalidate on, as fio's loop_cache_invalidate): empty otherwise.
    drop: Vec<crate::io::sys::fd::OwnedFd>,
    /// Passes finished, for the tests.
    passes: u64,
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
            drop: Vec::new(),
            passes: 0,
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
                for fd in &self.drop {
                    // Advice only: a file system that ignores it costs a
                    // warmer pass, never a failure.
                    let _ = crate::io::sys::fs::fadvise(
                        fd,
                        0,
                        None,
                        crate::io::sys::fs::Advice::DontNeed,
                    );
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
    /// with uniform offsets, so the slots are the first size's positions.
    pub(crate) fn visit_once(mut self, seed: u64, worker: u32) -> Self {
        if self.random {
            let per_file = self.positions.first().copied().unwrap_or(1);
            let slots = per_file.saturating_mul(self.layout.nfiles as u64);
            self.visit = Some(Box::new(Visit::new(slots, worker_seed(seed, worker))));
        }
        self
    }

    /// The files whose cached pages the random map drops at each pass's
    /// end (opened by the worker thread, so they close with its table).
    pub(crate) fn drop_at_pass_end(&mut self, files: Vec<crate::io::sys::fd::OwnedFd>) {
        if let Some(v) = self.visit.as_mut() {
            v.drop = files;
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
                let per_file = self.positions[0];
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
mod tests {
    use super::*;

    fn bs(list: &[(u64, u32)]) -> Vec<BlockSize> {
        list.iter()
            .map(|&(bytes, weight)| BlockSize { bytes, weight })
            .collect()
    }

    const L: Layout = Layout {
        nfiles: 4,
        file_size: 1 << 20,
    };

    #[test]
    fn same_seed_same_offsets_other_seed_other_offsets() {
        let draw = |seed| {
            let mut g = IoGen::new(Pattern::Randrw, 70, &bs(&[(4096, 1)]), L, seed, 3, 8);
            (0..1000).map(|_| g.next_op()).collect::<Vec<_>>()
        };
        assert_eq!(draw(42), draw(42));
        assert_ne!(draw(42), draw(43));
    }

    #[test]
    fn workers_draw_different_streams() {
        let mut a = IoGen::new(Pattern::Randread, 100, &bs(&[(4096, 1)]), L, 1, 0, 2);
        let mut b = IoGen::new(Pattern::Randread, 100, &bs(&[(4096, 1)]), L, 1, 1, 2);
        let va: Vec<_> = (0..100).map(|_| a.next_op()).collect();
        let vb: Vec<_> = (0..100).map(|_| b.next_op()).collect();
        assert_ne!(va, vb);
    }

    #[test]
    fn writes_draw_their_own_sizes() {
        let mut g = IoGen::new(Pattern::Randrw, 70, &bs(&[(8192, 1)]), L, 3, 0, 1)
            .sized_writes(&bs(&[(65536, 3), (131072, 1)]));
        let (mut reads, mut big, mut writes) = (0, 0, 0);
        for _ in 0..20_000 {
            let op = g.next_op();
            assert!(op.offset % 8192 == 0 && op.offset + op.len as u64 <= L.file_size);
            if op.write {
                assert!(op.len == 65536 || op.len == 131072, "{op:?}");
                writes += 1;
                big += usize::from(op.len == 131072);
            } else {
                assert_eq!(op.len, 8192);
                reads += 1;
            }
        }
        // 70% reads, and a quarter of the writes at 128 KiB (binomial
        // spread of 20,000 draws is well under 1%).
        assert!((reads as f64 / 20_000.0 - 0.7).abs() < 0.02, "{reads}");
        assert!((big as f64 / writes as f64 - 0.25).abs() < 0.03, "{big}/{writes}");
        // Without sizes of their own, writes draw from the reads' list.
        let mut g = IoGen::new(Pattern::Randrw, 50, &bs(&[(4096, 1)]), L, 3, 0, 1).sized_writes(&[]);
        assert!((0..1000).all(|_| g.next_op().len == 4096));
    }

    #[test]
    fn read_share_follows_read_pct() {
        let mut g = IoGen::new(Pattern::Randrw, 70, &bs(&[(4096, 1)]), L, 9, 0, 1);
        let n = 20_000;
        let reads = (0..n).filter(|_| !g.next_op().write).count();
        let share = reads as f64 * 100.0 / n as f64;
        assert!((share - 70.0).abs() < 2.0, "read share {share}");
    }

    #[test]
    fn random_offsets_are_aligned_and_in_bounds() {
        let mut g = IoGen::new(
            Pattern::Randrw,
            50,
            &bs(&[(4096, 30), (65536, 70)]),
            L,
            5,
            0,
            1,
        );
        let mut big = 0;
        for _ in 0..50_000 {
            let op = g.next_op();
            assert_eq!(op.offset % 4096, 0);
            assert!(op.offset + op.len as u64 <= L.file_size);
            assert!(op.file < L.nfiles);
            if op.len == 65536 {
                big += 1;
            }
        }
        let share = big as f64 / 50_000.0 * 100.0;
        assert!((share - 70.0).abs() < 2.0, "64k share {share}");
    }

    #[test]
    fn sequential_streams_walk_their_region_and_wrap() {
        // Two workers over 4 files of 1 MiB: worker 1 owns the second half.
        let mut g = IoGen::new(Pattern::Read, 100, &bs(&[(65536, 1)]), L, 1, 1, 2);
        let first = g.next_op();
        assert_eq!((first.file, first.offset), (2, 0));
        let mut last = first;
        for _ in 1..32 {
            last = g.next_op();
        }
        assert_eq!((last.file, last.offset), (3, (1 << 20) - 65536));
        let wrapped = g.next_op();
        assert_eq!((wrapped.file, wrapped.offset), (2, 0));
    }

    #[test]
    fn each_thread_makes_its_own_pass_from_its_start_as_fio_s_jobs_do() {
        use crate::spec::shape::{Shape, Streams};
        // 4 MiB as one set; threads from 1 MiB + t x 1 MiB, passes of 2 MiB.
        let layout = Layout {
            nfiles: 1,
            file_size: 4 << 20,
        };
        let shape = Shape {
            streams: Streams::Each {
                offset: 1 << 20,
                step: 1 << 20,
            },
            ..Shape::default()
        };
        for t in 0..2u32 {
            let mut g =
                IoGen::new(Pattern::Read, 100, &bs(&[(65536, 1)]), layout, 1, t, 2).shaped(&shape);
            let start = (1 + t as u64) << 20;
            let offs: Vec<u64> = (0..33).map(|_| g.next_op().offset).collect();
            assert_eq!(offs[0], start);
            assert_eq!(offs[31], start + (2 << 20) - 65536, "a pass is 2 MiB");
            assert_eq!(offs[32], start, "and wraps to the thread's own start");
        }
        // Without a step every thread walks the whole set from 0.
        let shape = Shape {
            streams: Streams::Each { offset: 0, step: 0 },
            ..Shape::default()
        };
        let mut g = IoGen::new(Pattern::Read, 100, &bs(&[(65536, 1)]), L, 1, 1, 2).shaped(&shape);
        let first = g.next_op();
        assert_eq!(
            (first.file, first.offset),
            (0, 0),
            "thread 1 starts at the set's start"
        );
    }

    #[test]
    fn a_mixed_each_stream_keeps_reads_and_writes_on_their_own_positions() {
        use crate::spec::shape::{Shape, Streams};
        let shape = Shape {
            streams: Streams::Each { offset: 0, step: 0 },
            ..Shape::default()
        };
        let mut g = IoGen::new(Pattern::Rw, 60, &bs(&[(4096, 1)]), L, 7, 0, 1).shaped(&shape);
        let (mut next_read, mut next_write) = (0u64, 0u64);
        for _ in 0..1000 {
            let op = g.next_op();
            let at = op.file as u64 * L.file_size + op.offset;
            let next = if op.write {
                &mut next_write
            } else {
                &mut next_read
            };
            assert_eq!(at, *next, "each direction continues where it left off");
            *next += 4096;
        }
        assert!(next_read > 0 && next_write > 0);
    }

    #[test]
    fn seek_pct_30_seeks_on_30_percent_and_runs_on_otherwise() {
        use crate::spec::shape::Shape;
        let shape = Shape {
            seek_pct: Some(30),
            ..Shape::default()
        };
        let mut g =
            IoGen::new(Pattern::Randread, 100, &bs(&[(4096, 1)]), L, 3, 0, 2).shaped(&shape);
        let mut prev = g.next_op();
        let n = 20_000;
        let mut continued = 0;
        for _ in 0..n {
            let op = g.next_op();
            let next = |o: &IoOp| o.file as u64 * L.file_size + o.offset + o.len as u64;
            if op.file as u64 * L.file_size + op.offset == next(&prev) {
                continued += 1;
            }
            assert!(op.offset + op.len as u64 <= L.file_size);
            prev = op;
        }
        // 70% continue; a seek lands right after the last I/O 1 in 1024 times.
        let share = continued as f64 * 100.0 / n as f64;
        assert!((share - 70.0).abs() < 2.0, "sequential share {share}");
    }

    #[test]
    fn skewed_offsets_span_files_aligned_and_hot_first() {
        use crate::spec::shape::{Distribution, HotZone, Shape};
        let shape = Shape {
            distribution: Distribution::Hot {
                zones: vec![HotZone {
                    io_pct: 90.0,
                    space_pct: 25.0,
                }],
            },
            ..Shape::default()
        };
        let mut g = IoGen::new(
            Pattern::Randread,
            100,
            &bs(&[(4096, 1), (65536, 1)]),
            L,
            3,
            0,
            1,
        )
        .shaped(&shape);
        let n = 50_000;
        let mut first_file = 0;
        for _ in 0..n {
            let op = g.next_op();
            assert_eq!(op.offset % 4096, 0);
            assert!(op.offset + op.len as u64 <= L.file_size, "{op:?}");
            if op.file == 0 {
                first_file += 1;
            }
        }
        // The hot quarter of 4 equal files is the first file.
        let share = first_file as f64 * 100.0 / n as f64;
        assert!((share - 90.0).abs() < 2.0, "first-file share {share}");
    }

    #[test]
    fn sequential_io_never_straddles_files() {
        let layout = Layout {
            nfiles: 3,
            file_size: 100_000,
        };
        let mut g = IoGen::new(Pattern::Write, 0, &bs(&[(4096, 1)]), layout, 1, 0, 1);
        for _ in 0..1000 {
            let op = g.next_op();
            assert!(op.write);
            assert!(op.offset + op.len as u64 <= layout.file_size, "{op:?}");
        }
    }

    #[test]
    fn random_map_visits_every_block_once_per_pass_in_a_new_order() {
        // 3 files of 25 blocks: 75 slots, not a power of two.
        let layout = Layout {
            nfiles: 3,
            file_size: 25 * 4096,
        };
        let mut g =
            IoGen::new(Pattern::Randread, 100, &bs(&[(4096, 1)]), layout, 7, 0, 1).visit_once(7, 0);
        let pass = |g: &mut IoGen| {
            let mut seen = Vec::new();
            for _ in 0..75 {
                let op = g.next_op();
                assert!(op.offset + op.len as u64 <= layout.file_size, "{op:?}");
                seen.push(op.file as u64 * 25 + op.offset / 4096);
            }
            seen
        };
        let first = pass(&mut g);
        let mut sorted = first.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..75).collect::<Vec<_>>(), "each slot once");
        assert_eq!(g.passes(), 0, "the pass ends on the next draw");
        let second = pass(&mut g);
        assert_eq!(g.passes(), 1);
        let mut s2 = second.clone();
        s2.sort_unstable();
        assert_eq!(s2, sorted, "the second pass covers every slot once too");
        assert_ne!(first, second, "a new pass draws a new order");
        // Not the identity: a shuffled order, not a sweep.
        assert_ne!(first, sorted);
    }

    #[test]
    fn random_map_is_refused_with_a_skew_or_seeks() {
        use crate::spec::shape::Shape;
        let skew = Shape {
            random_map: true,
            distribution: crate::spec::shape::Distribution::parse("zipf:1.2").unwrap(),
            ..Shape::default()
        };
        assert!(skew.validate(true, false, false).is_err());
        let seq = Shape {
            random_map: true,
            ..Shape::default()
        };
        assert!(seq.validate(false, false, false).is_err());
        assert!(seq.validate(true, false, false).is_ok());
    }
}
