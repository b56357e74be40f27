//! The data written (compressible, duplicated, checkable) and the checks of
//! what comes back: `sectors` is the on-disk format, `map` the per-block
//! record of the last write, `journal` that record kept in a file, `scan`
//! the read-everything-back check of `volbench verify`.

pub(crate) mod journal;
pub(crate) mod journal_file;
pub(crate) mod map;
pub(crate) mod sectors;

use std::sync::Arc;

use crate::error::Result;
use crate::io::workload::{IoOp, Layout};
use crate::spec::data::DataSpec;
use map::{BlockMap, FORMED, UNKNOWN};
use sectors::{Dedup, Found, Pool, SECTOR, check_sector, first_bytes, stamp_headers};

/// How a run's writes (and the fill) make their data, and the checks of its
/// reads. Shared by the workers of every run on one file set.
pub(crate) struct DataPlan {
    /// Made at once for a plan that writes or checks; a read-only run never
    /// needs its 8 MiB (a thousand null-engine agents carried 8 GB of it),
    /// so there it is made only if something asks after all.
    pool: std::sync::OnceLock<Pool>,
    compress: f64,
    dedup: Option<Dedup>,
    /// Unique data without checkable headers: --compress alone.
    light: bool,
    pub(crate) map: Option<BlockMap>,
}

impl std::fmt::Debug for DataPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DataPlan")
            .field("dedup", &self.dedup.is_some())
            .field("verify", &self.map.is_some())
            .finish()
    }
}

/// What one worker found wrong.
#[derive(Debug, Clone, Default)]
pub(crate) struct DataReport {
    pub(crate) errors: u64,
    /// The first few mismatches, described.
    pub(crate) samples: Vec<String>,
}

/// Mismatches a worker describes in full; the rest are only counted.
const SAMPLES: usize = 8;

impl DataReport {
    pub(crate) fn merge(&mut self, other: DataReport) {
        self.errors += other.errors;
        for s in other.samples {
            if self.samples.len() < SAMPLES {
                self.samples.push(s);
            }
        }
    }
}

impl DataPlan {
    /// The plan for `spec` over a set of `layout`; `map` when --verify.
    pub(crate) fn new(spec: &DataSpec, layout: Layout, map: Option<BlockMap>) -> Self {
        Self::sized(spec, layout, map, true)
    }

    /// Like `new`; `writes` false (no write, no check in any run) leaves the
    /// pool unmade until first asked for.
    pub(crate) fn sized(
        spec: &DataSpec,
        layout: Layout,
        map: Option<BlockMap>,
        writes: bool,
    ) -> Self {
        let pool = std::sync::OnceLock::new();
        if writes || map.is_some() {
            let _ = pool.set(Pool::new(spec.compress));
        }
        Self {
            pool,
            compress: spec.compress,
            dedup: (spec.dedup > 1)
                .then(|| Dedup::new(spec.dedup, spec.dedup_unit, layout.nfiles, layout.file_size)),
            light: !spec.verify,
            map,
        }
    }

    fn pool(&self) -> &Pool {
        self.pool.get_or_init(|| Pool::new(self.compress))
    }

    /// Fills `buf`, to be written at `offset` of file `file` by the fill:
    /// the same data the runs write, with counter 0 in checkable sectors.
    pub(crate) fn fill_chunk(&self, buf: &mut [u8], file: u32, offset: u64, pos: u64) {
        if let Some(d) = &self.dedup {
            d.write(self.pool(), buf, file, offset);
            return;
        }
        let pos = pos % self.pool().sectors();
        self.pool().copy_into(buf, pos);
        stamp_headers(buf, self.pool(), file, offset, pos, |_| 0);
    }

    /// Takes the blocks of `op` (with --verify); false if another I/O owns one.
    #[inline]
    pub(crate) fn acquire(&self, op: &IoOp) -> bool {
        self.map.as_ref().is_none_or(|m| m.acquire(op))
    }

    /// Makes the data of write `op` in `buf` (its slot's buffer, op.len long).
    #[inline]
    pub(crate) fn write(
        &self,
        buf: &mut [u8],
        op: &IoOp,
        key: u64,
        seq: u64,
        rng: &mut fastrand::Rng,
    ) {
        if let Some(d) = &self.dedup {
            d.write(self.pool(), buf, op.file, op.offset);
            return;
        }
        let pos = rng.u64(..self.pool().sectors());
        self.pool().copy_into(buf, pos);
        self.stamp_window(buf, op, key, seq, pos);
    }

    /// Whether writes may come from a ring of the pool stamped in place
    /// (`io::ring`): not with --dedup, whose blocks' bytes are their group's.
    pub(crate) fn ring_ok(&self) -> bool {
        self.dedup.is_none()
    }

    /// Fills a worker's ring with the pool, repeated to its length.
    pub(crate) fn fill_ring(&self, ring: &mut [u8]) {
        self.pool().copy_into(ring, 0);
    }

    /// Stamps write `op`'s sector headers into `buf`, which holds pool
    /// sectors from `pos` on (a ring window: ring sector `pos`).
    #[inline]
    pub(crate) fn stamp_window(&self, buf: &mut [u8], op: &IoOp, key: u64, seq: u64, pos: u64) {
        debug_assert!(self.light || self.map.is_some());
        match &self.map {
            Some(m) => stamp_headers(buf, self.pool(), op.file, op.offset, pos, |i| {
                m.counter_at(op, (i * SECTOR) as u64)
            }),
            None => crate::io::data::stamp(buf, key, op.offset, seq),
        }
    }

    /// Checks read `op`'s data in `buf` (with --verify): the first sector
    /// that is not what the map says, described.
    #[inline]
    pub(crate) fn check(&self, buf: &mut [u8], op: &IoOp) -> Option<String> {
        let m = self.map.as_ref()?;
        for (i, s) in buf.chunks_exact_mut(SECTOR).enumerate() {
            let at = (i * SECTOR) as u64;
            let expected = m.counter_at(op, at);
            if expected == UNKNOWN {
                continue;
            }
            let off = op.offset + at;
            let found = check_sector(s, op.file, off);
            if let Some(what) = judge(found, expected, expected) {
                let path = m
                    .paths
                    .get(op.file as usize)
                    .map_or_else(|| format!("file #{}", op.file), |p| p.display().to_string());
                let known = (expected != FORMED).then_some(expected);
                let exp = describe(expected);
                return Some(mismatch(
                    self.pool(),
                    s,
                    &path,
                    op.file,
                    off,
                    found,
                    known,
                    &exp,
                    &what,
                ));
            }
        }
        None
    }

    /// Gives `op`'s blocks back once it completed (`ok`: in full).
    #[inline]
    pub(crate) fn release(&self, op: &IoOp, ok: bool) {
        if let Some(m) = &self.map {
            m.release(op, ok);
        }
    }

    /// Counts one mismatch; true once --max-data-errors is reached.
    pub(crate) fn count_error(&self) -> bool {
        self.map.as_ref().is_some_and(|m| {
            m.errors.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1 >= m.max_errors
        })
    }

    pub(crate) fn max_errors(&self) -> u64 {
        self.map.as_ref().map_or(0, |m| m.max_errors)
    }

    /// The journal the block map keeps, if any.
    pub(crate) fn journal(&self) -> Option<Arc<journal::Journal>> {
        self.map.as_ref().and_then(|m| m.journal.clone())
    }

    /// A worker gave up on I/Os still in flight.
    pub(crate) fn abandoned(&self) {
        if let Some(j) = self.map.as_ref().and_then(|m| m.journal.as_ref()) {
            j.mark_dirty();
        }
    }
}

/// What is wrong with a sector whose counter must lie in `lo..=hi`
/// (FORMED: any counter), or None.
pub(crate) fn judge(found: Found, lo: u32, hi: u32) -> Option<String> {
    match found {
        Found::Counter(c) if lo == FORMED || (lo..=hi).contains(&c) => None,
        Found::Counter(c) if c < lo => Some(format!("{} (stale or lost write)", describe(c))),
        Found::Counter(c) => Some(format!("{} (newer than any write recorded)", describe(c))),
        Found::Damaged(why) => Some(why.to_string()),
        Found::Elsewhere { file, offset } => Some(format!(
            "the sector of file #{file} offset {offset} (misplaced data)"
        )),
    }
}

/// One mismatch, one line: where, what was expected, what was found, and
/// for a damaged sector the exact byte that differs from what was written.
#[allow(clippy::too_many_arguments)]
pub(crate) fn mismatch(
    pool: &Pool,
    s: &[u8],
    path: &str,
    file: u32,
    off: u64,
    found: Found,
    counter: Option<u32>,
    expected: &str,
    what: &str,
) -> String {
    if let Found::Damaged(_) = found {
        if let Some((i, want, got)) = sectors::locate(s, pool, file, off, counter) {
            return format!(
                "{path} offset {}: expected byte {want:#04x} of {expected}, found {got:#04x} \
             ({what} in the sector at {off}, first bytes {})",
                off + i as u64,
                first_bytes(s)
            );
        }
    }
    format!(
        "{path} offset {off}: expected {expected}, found {what} (first bytes {})",
        first_bytes(s)
    )
}

pub(crate) fn describe(counter: u32) -> String {
    match counter {
        0 => "the fill".into(),
        FORMED => "any write of volbench".into(),
        c => format!("write #{c}"),
    }
}

/// The block map of a set for `spec` (--verify), with its journal open
/// and loaded when one was asked for. `init` is what the blocks hold before
/// this job writes: 0 just filled, FORMED filled earlier, UNKNOWN foreign.
/// `owner`: the set the journal must belong to.
pub(crate) fn open_map(
    spec: &DataSpec,
    layout: Layout,
    unit: u64,
    init: u32,
    owner: journal::Owner,
    paths: Vec<std::path::PathBuf>,
    notes: &mut Vec<String>,
) -> Result<BlockMap> {
    let mut map = BlockMap::new(layout, unit, init, paths, spec.max_data_errors)?;
    if let Some(path) = &spec.journal {
        let (j, how) = journal::Journal::open(path, layout, unit, &spec.fill_tag(), init, owner)?;
        if how == journal::Opened::Continued {
            for b in 0..map.blocks() {
                map.set(b, j.ack(b));
            }
            notes.push(format!(
                "continuing journal {}: reads are checked against its counters",
                path.display()
            ));
        }
        let j = Arc::new(j);
        j.start_sync();
        map.journal = Some(j);
    }
    Ok(map)
}

/// The map's block for a job: what divides every block size of every run.
pub(crate) fn job_block_unit(job: &crate::spec::JobSpec) -> u64 {
    map::block_unit(
        job.runs
            .iter()
            .filter(|r| r.meta.is_none())
            .flat_map(|r| r.bs.iter().map(|b| b.bytes)),
    )
}

/// Checks an existing journal before any I/O (a file volbench did not make
/// or of another set is refused untouched; `dir`: the target is a directory
/// whose set's shape is known now), and says what the plan (and --dry-run)
/// should about --verify: its memory, and what a buffered read proves.
/// `set_there`: the identity of the file set at the target now, if any
/// (the caller reads it: io::target sits beside verify, not below it).
pub(crate) fn plan_check(
    job: &crate::spec::JobSpec,
    dir: bool,
    set_there: impl FnOnce(&std::path::Path) -> Option<crate::io::gate::owner::SetIdentity>,
) -> Result<Vec<String>> {
    let spec = &job.target.data;
    if !spec.verify {
        return Ok(Vec::new());
    }
    if let Some(path) = &spec.journal {
        if let Some((_, h)) = journal::read_header(path, false)? {
            if dir {
                let files = job.target.files.max(1);
                let file_size = job.target.size / files as u64 / 4096 * 4096;
                let unit = job_block_unit(job);
                if (h.files, h.file_size, h.unit, h.format.as_str())
                    != (files, file_size, unit, spec.fill_tag().as_str())
                {
                    return Err(crate::error::VbError::refused(format!(
                        "refusing journal {}: it belongs to another file set ({} files of {} bytes, \
                 {}-byte blocks, data {}; this run: {files} files of {file_size} bytes, \
                 {unit}-byte blocks, data {})",
                        path.display(),
                        h.files,
                        h.file_size,
                        h.unit,
                        h.format,
                        spec.fill_tag()
                    )));
                }
                // The set there now, if any, must be the one the journal records
                // (a refill of it starts the journal over): checked before the fill.
                if job.layouts().len() <= 1 {
                    match set_there(&job.target.path) {
                        Some(set) if set.same_set(&h.set) => {}
                        Some(set) => return Err(journal::another_set(path, &h.set, &set)),
                        None => {
                            return Err(journal_file::refuse(
                                path,
                                &format!(
                                    "the journal belongs to another file set ({}, which {} does not hold)",
                                    h.set,
                                    job.target.path.display()
                                ),
                            ));
                        }
                    }
                }
            }
        }
    }
    let unit = job_block_unit(job);
    let bytes = map::map_bytes(job.target.size, job.target.files, unit);
    let mut notes = vec![format!(
        "--verify keeps 4 bytes per {unit}-byte block: {} of memory for this data set{}",
        crate::units::format_size(bytes),
        if spec.journal.is_some() {
            " and a journal of twice that, in memory and in its file"
        } else {
            ""
        }
    )];
    if !job.target.direct {
        notes.push(
            "--verify with --buffered: a read served from the page cache proves nothing about              the device, only that the cache holds what was written"
                .into(),
        );
    }
    Ok(notes)
}

/// A host with several targets keeps one journal per target: target `i`'s
/// is FILE.i (each journal belongs to one file set).
pub(crate) fn journal_per_target(spec: &mut DataSpec, i: usize, targets: usize) {
    if targets > 1 {
        if let Some(path) = &mut spec.journal {
            path.as_mut_os_string().push(format!(".{i}"));
        }
    }
}
