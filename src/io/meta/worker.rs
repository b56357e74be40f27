//! The metadata worker: the same contract as the block I/O worker (start
//! barrier, warm-up/measure/stop phases, single-writer interval counters,
//! rate schedule, --io-limit-style "finished" when its share is done), with
//! file-system operations on its share of the tree instead of preads.
//! Per operation it takes two clock reads and a histogram increment; names
//! are built in place, and a file is open only during its own operation.

use std::mem::MaybeUninit;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use crate::io::backend::{Fail, MetaIo as Io, TreeDir, TreeRoot};
use crate::io::data::{AlignedBuf, fill_random};
use crate::io::engine::Completion;
use crate::io::gate::owner::Identity;
use crate::io::meta::ops;
use crate::io::meta::tally::Tally;
use crate::io::meta::tree::{Name, Share, Tree};
use crate::io::phase::{
    Control, PHASE_MEASURE, PHASE_STOP, PHASE_WARMUP, PhaseStats, Schedule, WorkerResult,
    WorkerSetup, now_ns, wait_until,
};
use crate::io::reap::Slots;
use crate::spec::meta::{MetaOp, MetaSpec};

/// What a worker needs to work on a tree.
#[derive(Clone)]
pub(crate) struct MetaWorker {
    /// The tree's root as the user named it, for messages.
    pub(crate) root: PathBuf,
    /// Where each worker opens the tree, on its back end.
    pub(crate) tree: Arc<dyn TreeRoot>,
    pub(crate) spec: MetaSpec,
    pub(crate) seed: u64,
    pub(crate) index: u32,
    pub(crate) workers: u32,
    /// Directory descriptors this worker may keep open.
    pub(crate) dir_cache: usize,
}

impl MetaWorker {
    pub(crate) fn new(
        root: PathBuf,
        tree: Arc<dyn TreeRoot>,
        spec: &MetaSpec,
        seed: u64,
        index: u32,
        workers: u32,
    ) -> Self {
        // Keep well inside the descriptor limit, whatever it is: each worker
        // holds at most this many directories open, and files only briefly.
        let lim = crate::io::sys::process::getrlimit(crate::io::sys::process::Resource::Nofile)
            .current
            .unwrap_or(1024);
        let per = (lim.saturating_sub(64) / (workers as u64 * 2).max(1)).clamp(1, 32);
        Self {
            root,
            tree,
            spec: spec.clone(),
            seed,
            index,
            workers,
            dir_cache: per as usize,
        }
    }
}

/// A few directory descriptors, direct-mapped by key.
struct DirCache {
    slots: Vec<Option<(u64, Box<dyn TreeDir>)>>,
}

impl DirCache {
    fn get(
        &mut self,
        key: u64,
        root: &dyn TreeDir,
        path: &mut Name,
    ) -> Result<&dyn TreeDir, crate::io::sys::io::Errno> {
        let i = (key % self.slots.len() as u64) as usize;
        let hit = matches!(&self.slots[i], Some((k, _)) if *k == key);
        if !hit {
            let dir = root.open_below(path.as_cstr())?;
            self.slots[i] = Some((key, dir));
        }
        match &self.slots[i] {
            Some((_, dir)) => Ok(&**dir),
            None => Err(crate::io::sys::io::Errno::NOENT),
        }
    }
}

/// Which files of the share exist, one bit each (mixed runs only).
struct Present {
    bits: Vec<u64>,
    count: u64,
    len: u64,
}

impl Present {
    fn get(&self, k: u64) -> bool {
        self.bits[(k / 64) as usize] >> (k % 64) & 1 == 1
    }

    fn set(&mut self, k: u64, on: bool) {
        if self.get(k) != on {
            self.bits[(k / 64) as usize] ^= 1 << (k % 64);
            if on {
                self.count += 1;
            } else {
                self.count -= 1;
            }
        }
    }

    /// The first unit from `k` on (wrapping) whose state is `want`.
    fn find(&self, k: u64, want: bool) -> Option<u64> {
        let have = if want {
            self.count
        } else {
            self.len - self.count
        };
        if have == 0 {
            return None;
        }
        let words = self.bits.len() as u64;
        let mut w = k / 64;
        let mut mask = !0u64 << (k % 64);
        for _ in 0..=words {
            let word = if want {
                self.bits[w as usize]
            } else {
                !self.bits[w as usize]
            } & mask;
            if word != 0 {
                let found = w * 64 + word.trailing_zeros() as u64;
                if found < self.len {
                    return Some(found);
                }
            }
            w = (w + 1) % words;
            mask = !0;
        }
        None
    }
}

/// Files left alone because they are not the tree's own: counted, and the
/// first few named, so the user learns what sits in the tree.
#[derive(Default)]
struct Skipped {
    count: u64,
    first: Vec<String>,
}

impl Skipped {
    fn add(&mut self, root: &std::path::Path, dir: &str, name: &str, why: &str) {
        self.count += 1;
        if self.first.len() < 5 {
            let at = if dir.is_empty() {
                format!("{}/{name}", root.display())
            } else {
                format!("{}/{dir}/{name}", root.display())
            };
            self.first.push(format!("{at} ({why})"));
        }
    }

    fn report(&self) {
        if self.count > 0 {
            crate::console::errln!(
                "volbench: note: left {} files in the tree untouched, not volbench's: {}{}",
                self.count,
                self.first.join(", "),
                if self.count > 5 { ", ..." } else { "" }
            );
        }
    }
}

/// The tree's root, opened without following links, and its proven identity:
/// every change to a file is checked against it.
fn open_tree(m: &MetaWorker) -> Result<(Box<dyn TreeDir>, Identity), String> {
    m.tree.open()
}

/// What this worker works on, fixed for the run: its shares of the tree's
/// files and leaf directories, and the weighted mix of operations.
struct Plan {
    tree: Tree,
    file_share: Share,
    leaf_share: Share,
    /// Every operation works on directories (mkdir, readdir, rmdir).
    dir_ops: bool,
    /// Units a whole-tree phase walks: leaf directories or files.
    units: u64,
    cumulative: [u32; 12],
    weights_total: u32,
}

impl Plan {
    fn new(m: &MetaWorker) -> Self {
        let spec = &m.spec;
        let tree = Tree::new(spec, m.seed);
        let dir_ops = spec.ops.iter().all(|o| o.op.on_dirs());
        let file_share = Share::of(
            tree.files(),
            tree.files_per_dir,
            tree.leaves,
            m.index,
            m.workers,
            spec.shared_dirs,
        );
        let leaf_share = Share::of(
            tree.leaves,
            1,
            tree.leaves,
            m.index,
            m.workers,
            spec.shared_dirs,
        );
        let mut cumulative = [0u32; 12];
        let mut acc = 0u32;
        for (i, o) in spec.ops.iter().enumerate() {
            acc = acc.saturating_add(o.weight);
            cumulative[i] = acc;
        }
        let units = if dir_ops {
            leaf_share.len()
        } else {
            file_share.len()
        };
        Self {
            tree,
            file_share,
            leaf_share,
            dir_ops,
            units,
            cumulative,
            weights_total: acc.max(1),
        }
    }

    /// The next operation, the unit it works on and the unit's index in the
    /// share; None when the share is done (whole tree) or nothing is left.
    fn pick(
        &self,
        spec: &MetaSpec,
        rng: &mut fastrand::Rng,
        present: &Present,
        next: &mut u64,
    ) -> Option<(MetaOp, u64, u64)> {
        if spec.whole_tree {
            if *next >= self.units {
                return None;
            }
            let k = *next;
            *next += 1;
            let unit = if self.dir_ops {
                self.leaf_share.nth(k)
            } else {
                self.file_share.nth(k)
            };
            return Some((spec.ops[0].op, unit, k));
        }
        let pick = rng.u32(0..self.weights_total);
        let i = self.cumulative[..spec.ops.len()].partition_point(|&c| c <= pick);
        let mut op = spec.ops[i.min(spec.ops.len() - 1)].op;
        if op.on_dirs() {
            let k = rng.u64(0..self.leaf_share.len().max(1));
            return Some((op, self.leaf_share.nth(k), k));
        }
        let want = op != MetaOp::Create;
        let k0 = rng.u64(0..self.file_share.len().max(1));
        let k = match present.find(k0, want) {
            Some(k) => k,
            // None in the state this operation needs: the tree is full (a
            // create becomes a delete) or empty (anything else becomes a
            // create), recorded under what was done.
            None => {
                op = if want { MetaOp::Create } else { MetaOp::Delete };
                present.find(k0, !want)?
            }
        };
        Some((op, self.file_share.nth(k), k))
    }
}

/// The names an operation works on, built in place.
#[derive(Default)]
struct Names {
    /// The directory holding the name, relative to the root.
    path: Name,
    name: Name,
    /// The rename partner.
    alt: Name,
    /// The leaf whose path `path` holds, so a walk through one directory
    /// builds it once, not per file.
    leaf: Option<u64>,
}

/// Which files of the share exist at the start of a mixed run.
fn scan_present(
    m: &MetaWorker,
    plan: &Plan,
    root: &dyn TreeDir,
    cache: &mut DirCache,
    names: &mut Names,
) -> Result<Present, String> {
    let share = plan.file_share;
    let mut present = Present {
        bits: vec![0; share.len().div_ceil(64).max(1) as usize],
        count: 0,
        len: share.len(),
    };
    if m.spec.whole_tree {
        return Ok(present);
    }
    let tree = &plan.tree;
    names.leaf = None;
    for k in 0..share.len() {
        let (leaf, n) = tree.split(share.nth(k));
        tree.leaf_path(leaf, &mut names.path);
        let dir = match cache.get(leaf, root, &mut names.path) {
            Ok(d) => d,
            Err(crate::io::sys::io::Errno::NOENT) => continue,
            Err(e) => {
                let at = format!("{}/{}", m.root.display(), names.path.as_str());
                return Err(ops::describe(MetaOp::Open, &at, e));
            }
        };
        tree.file_name(n, false, &mut names.name);
        if dir.exists(names.name.as_cstr()) {
            present.set(k, true);
        }
    }
    Ok(present)
}

/// Resolves the directory an operation works in and the names in it
/// (before the clock starts), and the file's size.
fn resolve<'c>(
    tree: &Tree,
    cache: &'c mut DirCache,
    root: &'c dyn TreeDir,
    names: &mut Names,
    op: MetaOp,
    unit: u64,
) -> (Result<&'c dyn TreeDir, crate::io::sys::io::Errno>, usize) {
    if op == MetaOp::Readdir && tree.depth == 0 {
        names.leaf = None;
        names.path.clear();
        names.name.clear();
        names.name.push(b".");
        return (Ok(root), 0);
    }
    // mkdir, rmdir and readdir: the leaf's name in its parent, the
    // parent's directory cached as a file's is.
    if op.on_dirs() {
        names.leaf = None;
        tree.leaf_path(unit, &mut names.path);
        let s = names.path.as_str();
        let (parent_len, last_start) = match s.rfind('/') {
            Some(i) => (i, i + 1),
            None => (0, 0),
        };
        names.name.clear();
        names.name.push(&s.as_bytes()[last_start..]);
        let parent = unit / tree.width;
        let mut p = Name::default();
        p.push(&names.path.as_str().as_bytes()[..parent_len]);
        return (cache.get(parent | 1 << 63, root, &mut p), 0);
    }
    let (leaf, n) = tree.split(unit);
    if names.leaf != Some(leaf) {
        tree.leaf_path(leaf, &mut names.path);
        names.leaf = Some(leaf);
    }
    tree.file_name(n, false, &mut names.name);
    if op == MetaOp::Rename {
        tree.file_name(n, true, &mut names.alt);
    }
    (
        cache.get(leaf, root, &mut names.path),
        tree.size_of(unit) as usize,
    )
}

/// Waits until a rated run's next operation is due and returns when it was
/// due (0 when unrated); None when a stop came first.
fn pace(
    rate: Option<&Schedule>,
    next_due: &mut u64,
    rng: &mut fastrand::Rng,
    control: &Control,
) -> Option<u64> {
    let Some(r) = rate else { return Some(0) };
    // wait_until returns after at most 20 ms so a stop is seen: wait again
    // until the operation is due, or a gap over 20 ms (a rate under 50
    // ops/s per thread) was cut short.
    while now_ns() < *next_due && control.phase.load(Ordering::Relaxed) < PHASE_STOP {
        wait_until(*next_due);
    }
    let due = *next_due;
    *next_due += r.next_gap(rng).as_nanos() as u64;
    if control.phase.load(Ordering::Relaxed) >= PHASE_STOP {
        return None;
    }
    Some(due)
}

/// Runs one operation between two clock reads: (result, start, end).
fn timed(
    op: MetaOp,
    dir: &dyn TreeDir,
    names: &mut Names,
    io: &mut Io,
) -> (Result<u64, Fail>, u64, u64) {
    let mut t0 = now_ns();
    let mut res = dir.op(op, names.name.as_cstr(), names.alt.as_cstr(), io);
    if op == MetaOp::Create && matches!(res, Err(Fail::Sys(crate::io::sys::io::Errno::EXIST))) {
        // Left by an interrupted create: redone if it is the tree's own.
        res = match dir.remove_ours(names.name.as_cstr(), io.owner) {
            Ok(()) => {
                t0 = now_ns();
                dir.op(op, names.name.as_cstr(), names.alt.as_cstr(), io)
            }
            Err(Some(why)) => Err(Fail::NotOurs(why)),
            Err(None) => res,
        };
    }
    (res, t0, now_ns())
}

/// A create phase that failed (the file system full, say) leaves no
/// partial tree filling the disk: each worker removes the first `made`
/// files of its share, those it made, if they are the tree's own.
fn remove_made(
    plan: &Plan,
    made: u64,
    root: &dyn TreeDir,
    id: &Identity,
    cache: &mut DirCache,
    names: &mut Names,
) {
    let tree = &plan.tree;
    names.leaf = None;
    for k in 0..made {
        let (leaf, n) = tree.split(plan.file_share.nth(k));
        tree.leaf_path(leaf, &mut names.path);
        tree.file_name(n, false, &mut names.name);
        // A directory that cannot be opened holds nothing of ours to remove.
        let Ok(dir) = cache.get(leaf, root, &mut names.path) else {
            continue;
        };
        let _ = dir.remove_ours(names.name.as_cstr(), id);
    }
}

pub(crate) fn run(m: MetaWorker, setup: WorkerSetup, ready: impl FnOnce()) -> WorkerResult {
    let WorkerSetup {
        control,
        counters,
        rate,
        ..
    } = setup;
    let fail = |e: String| {
        control.failed.store(true, Ordering::Relaxed);
        WorkerResult {
            warmup: PhaseStats::default(),
            measure: PhaseStats::default(),
            error: Some(e),
            meta: Vec::new(),
            data: Default::default(),
            protocol: None,
        }
    };
    let (root, id) = match open_tree(&m) {
        Ok(t) => t,
        Err(e) => {
            ready();
            return fail(e);
        }
    };
    let spec = &m.spec;
    let plan = Plan::new(&m);
    let cap = spec.max_file_size().max(1).div_ceil(4096) * 4096;
    let mut buf = AlignedBuf::new(cap as usize, 4096);
    let mut rng =
        fastrand::Rng::with_seed(crate::io::workload::worker_seed(m.seed ^ 0x3e7a, m.index));
    fill_random(buf.as_mut_slice(), &mut rng);
    let mut dents = vec![MaybeUninit::<u8>::uninit(); 16 << 10];
    let mut cache = DirCache {
        slots: (0..m.dir_cache).map(|_| None).collect(),
    };
    let mut names = Names::default();
    // Which files exist, for a mixed run's creates and deletes.
    let mut present = match scan_present(&m, &plan, &*root, &mut cache, &mut names) {
        Ok(p) => p,
        Err(e) => {
            ready();
            return fail(e);
        }
    };
    let mut skipped = Skipped::default();
    // Files a create phase found complete and left (`--keep-complete`).
    let mut kept = 0u64;
    let mut tally = Tally::new();
    let mut error = None;
    let mut next = 0u64;
    let rated = rate.is_some();
    let start = now_ns();
    let mut next_due = start + rate.as_ref().map_or(0, |r| r.offset.as_nanos() as u64);
    // One operation at a time: a slot of one, reaped by the shared step.
    let mut slots = Slots::new(1, MetaOp::Stat, start);
    let mut done: Vec<Completion> = Vec::with_capacity(1);
    ready();

    // The phase the back end was last told of (a protocol client's
    // figures start over with the measured phase).
    let mut told = PHASE_WARMUP;
    loop {
        let phase = control.phase.load(Ordering::Relaxed);
        if phase >= PHASE_STOP {
            break;
        }
        if phase != told {
            if phase == PHASE_MEASURE {
                root.measure_started();
            }
            told = phase;
        }
        let Some((op, unit, k)) = plan.pick(spec, &mut rng, &present, &mut next) else {
            break;
        };
        let (dir, size) = resolve(&plan.tree, &mut cache, &*root, &mut names, op, unit);
        let dir = match dir {
            Ok(d) => d,
            Err(e) => {
                let at = format!("{}/{}", m.root.display(), names.path.as_str());
                error = Some(ops::describe(op, &at, e));
                break;
            }
        };
        // Untimed, before the pace: a file kept is no operation.
        if spec.keep_complete
            && op == MetaOp::Create
            && dir.complete(names.name.as_cstr(), size as u64, &id)
        {
            kept += 1;
            continue;
        }
        let Some(intended) = pace(rate.as_ref(), &mut next_due, &mut rng, &control) else {
            break;
        };
        let mut io = Io {
            buf: buf.as_mut_slice(),
            size,
            direct: spec.direct && size > 0 && size % 4096 == 0,
            dents: &mut dents,
            owner: &id,
        };
        let (res, t0, t1) = timed(op, dir, &mut names, &mut io);
        let bytes = match res {
            Ok(b) => b,
            Err(Fail::NotOurs(why)) => {
                skipped.add(&m.root, names.path.as_str(), names.name.as_str(), why);
                if !spec.whole_tree && op != MetaOp::Create {
                    present.set(k, false);
                }
                continue;
            }
            Err(Fail::Sys(e)) => {
                let (path, name) = (names.path.as_str(), names.name.as_str());
                // A directory operation's path is its leaf's, name included.
                let at = if path.is_empty() {
                    format!("{}/{name}", m.root.display())
                } else if op.on_dirs() {
                    format!("{}/{path}", m.root.display())
                } else {
                    format!("{}/{path}/{name}", m.root.display())
                };
                error = Some(ops::describe(op, &at, e));
                break;
            }
        };
        if !spec.whole_tree {
            match op {
                MetaOp::Create => present.set(k, true),
                MetaOp::Delete => present.set(k, false),
                _ => {}
            }
        }
        // The operation completed within its call: its one slot is reaped
        // as a block I/O's is, latency from when it was due.
        if let Some(slot) = slots.free.pop() {
            let i = slot as usize;
            slots.ops[i] = op;
            slots.intended[i] = if rated { intended.min(t0) } else { t0 };
            slots.issued[i] = t0;
            slots.in_flight += 1;
            done.push(Completion {
                slot,
                result: bytes as i64,
            });
        }
        slots.reap(&mut done, t1, |r| {
            let svc = if rated { Some(r.svc) } else { None };
            tally.record(phase as usize, r.op, r.lat, svc, r.result as u64, &counters);
        });
    }
    tally.live.publish(&counters);
    if error.is_some() {
        control.fail(root.server_lost());
    } else {
        control.mark_finished();
    }
    skipped.report();
    if spec.whole_tree && spec.ops[0].op == MetaOp::Create && control.failed.load(Ordering::Relaxed)
    {
        remove_made(&plan, next, &*root, &id, &mut cache, &mut names);
    }
    let mut result = tally.into_result(error, kept);
    result.protocol = root.protocol();
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn present_finds_the_next_unit_in_the_wanted_state() {
        let mut p = Present {
            bits: vec![0; 2],
            count: 0,
            len: 100,
        };
        assert_eq!(p.find(5, true), None);
        assert_eq!(p.find(5, false), Some(5));
        p.set(70, true);
        p.set(3, true);
        assert_eq!(p.find(5, true), Some(70));
        assert_eq!(p.find(71, true), Some(3));
        for k in 0..100 {
            p.set(k, true);
        }
        assert_eq!(p.count, 100);
        assert_eq!(p.find(10, false), None);
    }
}
