//! The metadata worker: the same contract as the block I/O worker (start
//! barrier, warm-up/measure/stop phases, single-writer interval counters,
//! rate schedule, --io-limit-style "finished" when its share is done), with
//! file-system operations on its share of the tree instead of preads.
//! Per operation it takes two clock reads and a histogram increment; names
//! are built in place, and a file is open only during its own operation.

use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::atomic::Ordering;

use crate::io::data::{AlignedBuf, fill_random};
use crate::io::gate::owner;
use crate::io::meta::ops::{self, Fail, Io};
use crate::io::meta::tree::{Name, Share, Tree};
use crate::io::meta::{open_below, open_root};
use crate::io::phase::{
    MetaOpStats, PHASE_STOP, PhaseStats, WorkerResult, WorkerSetup, now_ns, wait_until,
};
use crate::spec::meta::{ALL_OPS, MetaOp, MetaSpec};
use crate::stats::{LiveCounters, OpStats};

/// What a worker needs to work on a tree.
#[derive(Clone)]
pub struct MetaWorker {
    pub root: PathBuf,
    pub spec: MetaSpec,
    pub seed: u64,
    pub index: u32,
    pub workers: u32,
    /// Directory descriptors this worker may keep open.
    pub dir_cache: usize,
}

impl MetaWorker {
    pub fn new(root: PathBuf, spec: &MetaSpec, seed: u64, index: u32, workers: u32) -> Self {
        // Keep well inside the descriptor limit, whatever it is: each worker
        // holds at most this many directories open, and files only briefly.
        let lim = rustix::process::getrlimit(rustix::process::Resource::Nofile)
            .current
            .unwrap_or(1024);
        let per = (lim.saturating_sub(64) / (workers as u64 * 2).max(1)).clamp(1, 32);
        Self {
            root,
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
    slots: Vec<Option<(u64, OwnedFd)>>,
}

impl DirCache {
    fn get(
        &mut self,
        key: u64,
        root: &OwnedFd,
        path: &mut Name,
    ) -> Result<&OwnedFd, rustix::io::Errno> {
        let i = (key % self.slots.len() as u64) as usize;
        let hit = matches!(&self.slots[i], Some((k, _)) if *k == key);
        if !hit {
            let fd = open_below(root, path.as_cstr())?;
            self.slots[i] = Some((key, fd));
        }
        match &self.slots[i] {
            Some((_, fd)) => Ok(fd),
            None => Err(rustix::io::Errno::NOENT),
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
            eprintln!(
                "volbench: note: left {} files in the tree untouched, not volbench's: {}{}",
                self.count,
                self.first.join(", "),
                if self.count > 5 { ", ..." } else { "" }
            );
        }
    }
}

/// Running totals for the interval collector, cumulative over both phases.
#[derive(Default)]
struct Live {
    ops: [u64; 2],
    bytes: [u64; 2],
    lat: [u64; 2],
    svc: [u64; 2],
    op_ops: [u64; ALL_OPS.len()],
    op_lat: [u64; ALL_OPS.len()],
}

impl Live {
    fn publish(&self, c: &LiveCounters) {
        let r = Ordering::Relaxed;
        c.read_ops.store(self.ops[0], r);
        c.read_bytes.store(self.bytes[0], r);
        c.read_lat_ns.store(self.lat[0], r);
        c.write_ops.store(self.ops[1], r);
        c.write_bytes.store(self.bytes[1], r);
        c.write_lat_ns.store(self.lat[1], r);
        c.read_svc_ns.store(self.svc[0], r);
        c.write_svc_ns.store(self.svc[1], r);
    }
}

pub fn run(m: MetaWorker, setup: WorkerSetup, ready: impl FnOnce()) -> WorkerResult {
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
        }
    };
    let root = match open_root(&m.root) {
        Ok(fd) => fd,
        Err(e) => {
            ready();
            return fail(e.to_string());
        }
    };
    // Every change to a file is checked against the tree's proven identity.
    let id = match super::read_marker(&root, &m.root) {
        Ok(Some(marker)) => marker.identity,
        Ok(None) => {
            ready();
            return fail(format!(
                "{} has no {}",
                m.root.display(),
                super::TREE_MARKER
            ));
        }
        Err(e) => {
            ready();
            return fail(e.to_string());
        }
    };
    let mut skipped = Skipped::default();
    let tree = Tree::new(&m.spec, m.seed);
    let spec = &m.spec;
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
    let cap = spec.max_file_size().max(1).div_ceil(4096) * 4096;
    let mut buf = AlignedBuf::new(cap as usize, 4096);
    let mut rng =
        fastrand::Rng::with_seed(crate::io::workload::worker_seed(m.seed ^ 0x3e7a, m.index));
    fill_random(buf.as_mut_slice(), &mut rng);
    let mut dents = vec![MaybeUninit::<u8>::uninit(); 16 << 10];
    let mut cache = DirCache {
        slots: (0..m.dir_cache).map(|_| None).collect(),
    };
    let mut path = Name::default();
    let mut name = Name::default();
    let mut alt = Name::default();

    // Which files exist, for a mixed run's creates and deletes.
    let mut present = Present {
        bits: vec![0; file_share.len().div_ceil(64).max(1) as usize],
        count: 0,
        len: file_share.len(),
    };
    if !spec.whole_tree {
        for k in 0..file_share.len() {
            let (leaf, n) = tree.split(file_share.nth(k));
            tree.leaf_path(leaf, &mut path);
            let dir = match cache.get(leaf, &root, &mut path) {
                Ok(d) => d,
                Err(rustix::io::Errno::NOENT) => continue,
                Err(e) => {
                    let msg = ops::describe(
                        MetaOp::Open,
                        &format!("{}/{}", m.root.display(), path.as_str()),
                        e,
                    );
                    ready();
                    return fail(msg);
                }
            };
            tree.file_name(n, false, &mut name);
            if rustix::fs::statat(dir, name.as_cstr(), rustix::fs::AtFlags::SYMLINK_NOFOLLOW)
                .is_ok()
            {
                present.set(k, true);
            }
        }
    }
    let mut cumulative = [0u32; 12];
    let mut acc = 0u32;
    for (i, o) in spec.ops.iter().enumerate() {
        acc = acc.saturating_add(o.weight);
        cumulative[i] = acc;
    }
    let weights_total = acc.max(1);
    let mut stats: [Vec<Option<Box<OpStats>>>; 2] = [
        (0..ALL_OPS.len()).map(|_| None).collect(),
        (0..ALL_OPS.len()).map(|_| None).collect(),
    ];
    let mut service = [PhaseStats::default(), PhaseStats::default()];
    let mut live = Live::default();
    let mut error = None;
    let units = if dir_ops {
        leaf_share.len()
    } else {
        file_share.len()
    };
    let mut next = 0u64;
    let rated = rate.is_some();
    let start = now_ns();
    let mut next_due = start + rate.as_ref().map_or(0, |r| r.offset.as_nanos() as u64);
    ready();

    loop {
        let phase = control.phase.load(Ordering::Relaxed);
        if phase >= PHASE_STOP {
            break;
        }
        // Pick the operation and what it works on.
        let (op, unit, k) = if spec.whole_tree {
            if next >= units {
                break;
            }
            let k = next;
            next += 1;
            let unit = if dir_ops {
                leaf_share.nth(k)
            } else {
                file_share.nth(k)
            };
            (spec.ops[0].op, unit, k)
        } else {
            let pick = rng.u32(0..weights_total);
            let i = cumulative[..spec.ops.len()].partition_point(|&c| c <= pick);
            let mut op = spec.ops[i.min(spec.ops.len() - 1)].op;
            if op.on_dirs() {
                let k = rng.u64(0..leaf_share.len().max(1));
                (op, leaf_share.nth(k), k)
            } else {
                let want = op != MetaOp::Create;
                let k0 = rng.u64(0..file_share.len().max(1));
                let k = match present.find(k0, want) {
                    Some(k) => k,
                    // None in the state this operation needs: the tree is
                    // full (a create becomes a delete) or empty (anything
                    // else becomes a create), recorded under what was done.
                    None => {
                        op = if want { MetaOp::Create } else { MetaOp::Delete };
                        match present.find(k0, !want) {
                            Some(k) => k,
                            None => break,
                        }
                    }
                };
                (op, file_share.nth(k), k)
            }
        };
        // Resolve the directory and names before the clock starts.
        let (dir, size) = if op.on_dirs() {
            if op == MetaOp::Readdir {
                tree.leaf_path(unit, &mut name);
                if name.as_str().is_empty() {
                    name.push(b".");
                }
                (Ok(&root), 0)
            } else {
                tree.leaf_path(unit, &mut path);
                let s = path.as_str();
                let cut = s.rfind('/');
                let (parent_len, last_start) = match cut {
                    Some(i) => (i, i + 1),
                    None => (0, 0),
                };
                name.clear();
                name.push(&s.as_bytes()[last_start..]);
                let parent = unit / tree.width;
                let mut p = Name::default();
                p.push(&path.as_str().as_bytes()[..parent_len]);
                (cache.get(parent | 1 << 63, &root, &mut p), 0)
            }
        } else {
            let (leaf, n) = tree.split(unit);
            tree.leaf_path(leaf, &mut path);
            tree.file_name(n, false, &mut name);
            tree.file_name(n, true, &mut alt);
            (
                cache.get(leaf, &root, &mut path),
                tree.size_of(unit) as usize,
            )
        };
        let dir = match dir {
            Ok(d) => d,
            Err(e) => {
                error = Some(ops::describe(
                    op,
                    &format!("{}/{}", m.root.display(), path.as_str()),
                    e,
                ));
                break;
            }
        };
        let intended = if let Some(r) = &rate {
            // wait_until returns after at most 20 ms so a stop is seen:
            // wait again until the operation is due, or a gap over 20 ms
            // (a rate under 50 ops/s per thread) was cut short.
            while now_ns() < next_due && control.phase.load(Ordering::Relaxed) < PHASE_STOP {
                wait_until(next_due);
            }
            let due = next_due;
            next_due += r.next_gap(&mut rng).as_nanos() as u64;
            if control.phase.load(Ordering::Relaxed) >= PHASE_STOP {
                break;
            }
            due
        } else {
            0
        };
        let mut io = Io {
            buf: buf.as_mut_slice(),
            size,
            direct: m.spec.direct && size > 0 && size % 4096 == 0,
            dents: &mut dents,
            owner: &id,
        };
        let mut t0 = now_ns();
        let mut res = ops::run(op, dir, name.as_cstr(), alt.as_cstr(), &mut io);
        if op == MetaOp::Create && matches!(res, Err(Fail::Sys(rustix::io::Errno::EXIST))) {
            // Left by an interrupted create: redone if it is the tree's own.
            res = match owner::check_at(dir, name.as_cstr(), &id) {
                Ok(()) => {
                    let _ = crate::io::gate::unlink_at(dir, name.as_cstr());
                    t0 = now_ns();
                    ops::run(op, dir, name.as_cstr(), alt.as_cstr(), &mut io)
                }
                Err(Some(why)) => Err(Fail::NotOurs(why)),
                Err(None) => res,
            };
        }
        let t1 = now_ns();
        let bytes = match res {
            Ok(b) => b,
            Err(Fail::NotOurs(why)) => {
                skipped.add(&m.root, path.as_str(), name.as_str(), why);
                if !spec.whole_tree && op != MetaOp::Create {
                    present.set(k, false);
                }
                continue;
            }
            Err(Fail::Sys(e)) => {
                let at = if path.as_str().is_empty() || op == MetaOp::Readdir {
                    format!("{}/{}", m.root.display(), name.as_str())
                } else {
                    format!("{}/{}/{}", m.root.display(), path.as_str(), name.as_str())
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
        let lat = t1 - if rated { intended.min(t0) } else { t0 };
        let p = phase as usize;
        stats[p][op.index()]
            .get_or_insert_with(|| Box::new(OpStats::new()))
            .record(lat, bytes);
        // This operation's own running totals, for per-operation intervals.
        let (i, r) = (op.index(), Ordering::Relaxed);
        live.op_ops[i] += 1;
        live.op_lat[i] += lat;
        counters.meta_ops[i].store(live.op_ops[i], r);
        counters.meta_lat_ns[i].store(live.op_lat[i], r);
        let class = usize::from(op.mutates());
        live.ops[class] += 1;
        live.bytes[class] += bytes;
        live.lat[class] += lat;
        if rated {
            let svc = t1 - t0;
            live.svc[class] += svc;
            let s = &mut service[p];
            if class == 0 {
                s.read_service.record(svc, bytes);
            } else {
                s.write_service.record(svc, bytes);
            }
        }
        live.publish(&counters);
    }
    live.publish(&counters);
    if error.is_some() {
        control.failed.store(true, Ordering::Relaxed);
    } else {
        control.mark_finished();
    }
    skipped.report();
    // A create phase that failed (the file system full, say) leaves no
    // partial tree filling the disk: each worker removes what it made.
    if spec.whole_tree && spec.ops[0].op == MetaOp::Create && control.failed.load(Ordering::Relaxed)
    {
        for k in 0..next {
            let (leaf, n) = tree.split(file_share.nth(k));
            tree.leaf_path(leaf, &mut path);
            tree.file_name(n, false, &mut name);
            if let Ok(dir) = cache.get(leaf, &root, &mut path) {
                if owner::check_at(dir, name.as_cstr(), &id).is_ok() {
                    let _ = crate::io::gate::unlink_at(dir, name.as_cstr());
                }
            }
        }
    }
    // Class totals (reads = looking, writes = changing) by exact merge.
    let [warm_ops, meas_ops] = stats;
    let [mut warmup, mut measure] = service;
    let mut meta = Vec::new();
    for op in ALL_OPS {
        let (w, s) = (&warm_ops[op.index()], &meas_ops[op.index()]);
        if w.is_none() && s.is_none() {
            continue;
        }
        let w = w.as_deref().cloned().unwrap_or_default();
        let s = s.as_deref().cloned().unwrap_or_default();
        let (wc, mc) = if op.mutates() {
            (&mut warmup.write, &mut measure.write)
        } else {
            (&mut warmup.read, &mut measure.read)
        };
        wc.merge(&w);
        mc.merge(&s);
        meta.push(MetaOpStats {
            op,
            warmup: w,
            measure: s,
        });
    }
    WorkerResult {
        warmup,
        measure,
        error,
        meta,
        data: Default::default(),
    }
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
