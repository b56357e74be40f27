//! The file set volbench creates in a directory target: `volbench.N.dat`
//! files plus a marker recording what volbench made, so later runs can reuse
//! a filled set and nothing else in the directory is ever written.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::marker::{
    FILE_PREFIX, MARKER_NAME, MAX_FILES, Marker, SetIdentity, born_after_marker, identity_of,
    marker_attr, new_set_id, read_marker, unchecked, unstamped_note, write_marker,
};
use super::{FileRef, PrepareOptions, Prepared, TargetKind};
use crate::error::{Result, VbError};
use crate::io::backend::{Access, Attr, Dir, Entry, Held, SetFile, Storage};
use crate::io::data::AlignedBuf;
use crate::io::gate::owner::set_file_ours;
use crate::io::gate::setdir::not_regular;
pub(crate) use crate::io::progress::Progress;
use crate::io::workload::Layout;
use crate::units::format_size;

pub(super) fn file_name(i: u32) -> String {
    format!("{FILE_PREFIX}{i}.dat")
}

/// What is at one of the set's names before anything is written.
enum Slot {
    Missing,
    /// The file the marker lists under this name.
    Ours(Attr),
    /// A regular file volbench cannot show it made.
    Foreign(Attr),
}

/// Prepares the file set in the directory the user named (created if
/// missing), on `storage`.
pub(super) fn prepare(dir: &Path, storage: Storage, opts: &PrepareOptions) -> Result<Prepared> {
    let file_size = check_shape(opts)?;
    if storage != Storage::Local {
        let set = crate::io::backend::open_dir(storage, dir, true)?;
        return prepare_in(set, file_size, opts);
    }
    // Made here rather than by open_or_create, so this run knows it made it.
    let made = crate::io::gate::mkdir(dir, 0o755).is_ok();
    let set = crate::io::backend::local::open(dir, true)?;
    let ino = set.attr().map(|a| a.id).ok();
    prepare_in(set, file_size, opts).inspect_err(|_| {
        if made {
            if let Some(ino) = ino {
                remove_made_dir(dir, ino);
            }
        }
    })
}

/// Removes the directory a refused prepare made, if it is still the one
/// made (same inode, not a link) and holds nothing but the lock file: a
/// refused fill leaves the target as it found it.
fn remove_made_dir(dir: &Path, ino: u64) {
    use crate::io::sys::fs::MetadataExt;
    let Ok(md) = crate::io::sys::fs::symlink_metadata(dir) else {
        return;
    };
    if !md.is_dir() || md.ino() != ino {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let names: Vec<std::ffi::OsString> = entries.flatten().map(|e| e.file_name()).collect();
    if names.iter().any(|n| n != super::LOCK_NAME) {
        return;
    }
    // unlink never follows a link; rmdir fails if anything came in meanwhile.
    let _ = crate::io::gate::unlink(&dir.join(super::LOCK_NAME));
    let _ = crate::io::gate::remove_empty_dir(dir);
}

/// Prepares the file set in subdirectory `name` of `parent`, reached
/// without following a link: a planted `files-N` link is refused.
pub(super) fn prepare_sub(
    parent: &Path,
    storage: Storage,
    name: &str,
    opts: &PrepareOptions,
) -> Result<Prepared> {
    let file_size = check_shape(opts)?;
    let parent = crate::io::backend::open_dir(storage, parent, true)?;
    prepare_in(parent.open_sub(name)?, file_size, opts)
}

/// The size of each file, checked before anything is created.
fn check_shape(opts: &PrepareOptions) -> Result<u64> {
    if opts.files == 0 || opts.files > MAX_FILES {
        return Err(VbError::input(format!(
            "--files {}: a file set has 1 to {MAX_FILES} files",
            opts.files
        )));
    }
    // Every file is a whole number of 4 KiB pages: direct I/O on any device
    // accepts that, and the last I/O of a fill never needs a short write.
    let file_size = opts.size / opts.files as u64 / 4096 * 4096;
    if file_size == 0 {
        return Err(VbError::input(format!(
            "--size {} over {} files leaves less than 4KiB per file",
            format_size(opts.size),
            opts.files
        )));
    }
    Ok(file_size)
}

fn prepare_in(dir: Arc<dyn Dir>, file_size: u64, opts: &PrepareOptions) -> Result<Prepared> {
    // Held until the run ends (the Prepared keeps it).
    let lock = dir.lock()?;
    let old = read_marker(&*dir, opts.allow_overwrite)?;
    let dir_at = dir.attr()?;
    let names: Vec<String> = (0..opts.files).map(file_name).collect();
    let marker_at = marker_attr(&*dir);
    let mut slots = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        slots.push(match dir.entry(name)? {
            Entry::Missing => Slot::Missing,
            Entry::Other(what) => return Err(not_regular(&dir.path_of(name), what)),
            Entry::Regular(a) => {
                let listed = old.as_ref().and_then(|m| m.inodes.get(i)) == Some(&a.id);
                // A second link would let a refill reach a file elsewhere.
                if listed
                    && set_file_ours(&a, dir.uid(), dir_at.dev).is_ok()
                    && !born_after_marker(&a, marker_at.as_ref())
                {
                    Slot::Ours(a)
                } else {
                    Slot::Foreign(a)
                }
            }
        });
    }
    let reusable = old.as_ref().is_some_and(|m| {
        m.filled
            && opts.data.can_reuse(m.data.as_deref())
            && m.files == opts.files
            && m.file_size == file_size
            && slots
                .iter()
                .all(|s| matches!(s, Slot::Ours(a) if a.size == file_size))
    });
    // A check of blocks written with a light stamp would report every one
    // of them as corrupt: refused before any I/O, with its own exit.
    if reusable && opts.data.verify {
        if let Some(note) = old.as_ref().and_then(|m| m.unstamped.as_deref()) {
            return Err(unchecked(dir.path(), note));
        }
    }
    let identity_before = old.as_ref().map(|m| identity_of(m, dir_at.dev, dir_at.id));
    // Recorded before the first write, so a crash mid-run leaves it said.
    let unstamped = (opts.needs_write && !opts.data.verify).then(unstamped_note);
    let total = file_size.saturating_mul(u64::from(opts.files));
    let mut fill = crate::result::fill::FillResult {
        host: String::new(),
        path: dir.path().display().to_string(),
        files: opts.files,
        bytes: total,
        bs: opts.fill_bs,
        threads: opts.fill_threads.min(opts.files).max(1),
        seconds: 0.0,
        mib_s: 0.0,
        skipped_reused: reusable,
    };
    // What the fill did is the set's `fill` (said on the terminal by the
    // executor and kept in result.json), not a note.
    let (inodes, set_id) = if let Some(m) = old.as_ref().filter(|_| reusable) {
        let mut now = m.clone();
        // A set made before ids were recorded gets one when next written (a
        // read run may be on a read-only file system); until then its id is
        // blank, which only a journal made for it alongside matches.
        if opts.needs_write {
            now.set_id.get_or_insert_with(new_set_id);
        }
        if now.unstamped.is_none() {
            now.unstamped = unstamped;
        }
        if now != *m {
            write_marker(&*dir, &now)?;
        }
        let inodes = slots
            .iter()
            .map(|s| match s {
                Slot::Ours(a) | Slot::Foreign(a) => a.id,
                Slot::Missing => 0,
            })
            .collect();
        (inodes, now.set_id.unwrap_or_default())
    } else {
        // The fill is a phase of its own: its time and rate are reported
        // (terminal, result.json `fill`), never mixed into a run's.
        let t0 = std::time::Instant::now();
        let set_id = new_set_id();
        let fresh = Fresh {
            set_id: &set_id,
            unstamped,
        };
        let inodes = refill(&*dir, old.as_ref(), &names, &slots, file_size, opts, fresh)?;
        let secs = t0.elapsed().as_secs_f64().max(1e-6);
        fill.seconds = secs;
        fill.mib_s = total as f64 / 1048576.0 / secs;
        (inodes, set_id)
    };
    let align = match (opts.direct, names.first()) {
        (true, Some(name)) => {
            let (f, _) = dir.open_read(name)?;
            f.set_direct()
                .map_err(|e| super::open_error(&dir.path_of(name), e, true))?;
            f.dio_align()
        }
        _ => 1,
    };
    let files = FileRef::InSet {
        dir: dir.clone(),
        names: names.iter().cloned().zip(inodes.iter().copied()).collect(),
    };
    Ok(Prepared {
        tree: None,
        kind: TargetKind::Directory,
        paths: names.iter().map(|n| dir.path_of(n)).collect(),
        layout: Layout {
            nfiles: opts.files,
            file_size,
        },
        align,
        writable: opts.needs_write,
        notes: Vec::new(),
        files: Some(files),
        _lock: Some(Arc::<dyn Held>::from(lock)),
        filled_now: !reusable,
        data: None,
        fill: Some(fill),
        identity: Some(SetIdentity {
            id: set_id,
            ino: dir_at.id,
            dev: dir_at.dev,
        }),
        identity_before,
    })
}

/// What a new fill records in the marker beside the files.
struct Fresh<'a> {
    set_id: &'a str,
    unstamped: Option<String>,
}

/// Creates (or truncates, when they are volbench's or the user allowed it)
/// and fills every file; returns their inodes, recorded in the marker.
fn refill(
    dir: &dyn Dir,
    old: Option<&Marker>,
    names: &[String],
    slots: &[Slot],
    file_size: u64,
    opts: &PrepareOptions,
    fresh: Fresh,
) -> Result<Vec<u64>> {
    // Files volbench did not create are never overwritten unasked.
    if !opts.allow_overwrite {
        if let Some(i) = slots.iter().position(|s| matches!(s, Slot::Foreign(_))) {
            return Err(VbError::refused(format!(
                "refusing to overwrite {}: volbench did not create it (it is not the file \
             {MARKER_NAME} lists, or it has other hard links); move it away or pass \
             --allow-overwrite",
                dir.path_of(&names[i]).display()
            )));
        }
    }
    let total = file_size.saturating_mul(names.len() as u64);
    let reclaimed: u64 = slots
        .iter()
        .map(|s| match s {
            Slot::Ours(a) | Slot::Foreign(a) => a.allocated,
            Slot::Missing => 0,
        })
        .sum();
    let need = total.saturating_sub(reclaimed);
    if let Some(free) = dir.free_bytes() {
        if need > free {
            return Err(VbError::target(format!(
                "the file set needs {} more on the file system of {}, and only {} is free; \
             use a smaller --size",
                format_size(need),
                dir.path().display(),
                format_size(free)
            )));
        }
    }
    if let Some(m) = old {
        // A set of another shape is ours: drop the files beyond the new count.
        for (i, &ino) in m.inodes.iter().enumerate().skip(names.len()) {
            dir.remove_if_ours(&file_name(i as u32), ino);
        }
    }
    // Each file is closed once made and reopened, proven the one made, by
    // the fill thread that writes it: a set may have more files than this
    // process may hold open at once (`engine::on_demand`).
    let mut inodes: Vec<u64> = Vec::with_capacity(names.len());
    // Frees the space of a failed fill: every file opened so far is ours now.
    let undo = |inodes: &[u64], marker: Option<u64>| {
        for (name, &ino) in names.iter().zip(inodes) {
            dir.remove_if_ours(name, ino);
        }
        if let Some(ino) = marker {
            dir.remove_if_ours(MARKER_NAME, ino);
        }
    };
    let (uid, dev) = (dir.uid(), dir.attr()?.dev);
    let mut align = None;
    for (name, slot) in names.iter().zip(slots) {
        let opened = match slot {
            Slot::Missing => dir.create_new(name, Access::Write),
            Slot::Ours(seen) | Slot::Foreign(seen) => {
                // The file looked at above, still proven the set's (or the
                // user's to overwrite, with --allow-overwrite).
                let proof = |a: &Attr| {
                    if a.id != seen.id {
                        Err("it was replaced while volbench prepared the set")
                    } else if opts.allow_overwrite {
                        Ok(())
                    } else {
                        set_file_ours(a, uid, dev)
                    }
                };
                dir.open_ours(name, Access::Write, &proof)
                    .and_then(|(f, a)| {
                        f.truncate(0).map_err(|e| {
                            VbError::target(format!(
                                "cannot truncate {}: {}",
                                dir.path_of(name).display(),
                                std::io::Error::from(e)
                            ))
                        })?;
                        Ok((f, a))
                    })
            }
        };
        let f = match opened {
            Ok((f, a)) => {
                inodes.push(a.id);
                f
            }
            Err(e) => {
                undo(&inodes, None);
                return Err(e);
            }
        };
        // O_DIRECT is set once the file is recorded: an open that creates
        // the file and then fails on O_DIRECT (tmpfs) would leave behind a
        // file no marker lists.
        if opts.direct {
            if let Err(e) = f.set_direct() {
                undo(&inodes, None);
                return Err(super::open_error(&dir.path_of(name), e, true));
            }
            align.get_or_insert_with(|| f.dio_align());
        }
    }
    // A fill size the device cannot take is refused before a byte is
    // written, like --bs (whose check against the probed alignment comes
    // only after the fill).
    if let Some(align) = align.filter(|a| opts.fill_bs % a != 0) {
        undo(&inodes, None);
        return Err(VbError::input(format!(
            "--fill-bs {} is not a multiple of {align} bytes, the direct-I/O alignment of {}; \
             use a multiple of it, or --buffered",
            opts.fill_bs,
            dir.path().display()
        )));
    }
    let mut marker = Marker {
        created_by: format!("volbench {}", env!("CARGO_PKG_VERSION")),
        files: names.len() as u32,
        file_size,
        filled: false,
        inodes: inodes.clone(),
        data: Some(opts.data.fill_tag()),
        set_id: Some(fresh.set_id.to_string()),
        unstamped: fresh.unstamped,
    };
    let marker_ino = write_marker(dir, &marker).inspect_err(|_| undo(&inodes, None))?;
    let paths: Vec<PathBuf> = names.iter().map(|n| dir.path_of(n)).collect();
    // The file made as `inodes[i]`, open for its fill.
    let reopen = |i: usize| -> Result<Box<dyn SetFile>> {
        let (name, id) = (&names[i], inodes[i]);
        let proof = |a: &Attr| {
            if a.id != id {
                Err("it was replaced while volbench prepared the set")
            } else if opts.allow_overwrite {
                Ok(())
            } else {
                set_file_ours(a, uid, dev)
            }
        };
        let (f, _) = dir.open_ours(name, Access::Write, &proof)?;
        if opts.direct {
            f.set_direct()
                .map_err(|e| super::open_error(&dir.path_of(name), e, true))?;
        }
        Ok(f)
    };
    fill(&reopen, &paths, file_size, opts).inspect_err(|_| undo(&inodes, Some(marker_ino)))?;
    marker.filled = true;
    let text = serde_json::to_string_pretty(&marker).map_err(|e| VbError::run(e.to_string()))?;
    dir.rewrite_ours(MARKER_NAME, marker_ino, text.as_bytes())?;
    Ok(inodes)
}

/// Writes every file sequentially to its end with incompressible data, as
/// vdbench's FillWrite and fio's layout do, several files at a time.
fn fill(
    reopen: &(dyn Fn(usize) -> Result<Box<dyn SetFile>> + Sync),
    paths: &[PathBuf],
    file_size: u64,
    opts: &PrepareOptions,
) -> Result<()> {
    let total = file_size.saturating_mul(paths.len() as u64);
    let layout = Layout {
        nfiles: paths.len() as u32,
        file_size,
    };
    opts.progress.start(total, "filling");
    let next = AtomicU64::new(0);
    let failed = AtomicBool::new(false);
    let parallel = (opts.fill_threads as usize).clamp(1, paths.len().max(1));
    let errors: Vec<Result<()>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..parallel)
            .map(|_| {
                let next = &next;
                let failed = &failed;
                std::thread::Builder::new().spawn_scoped(s, move || -> Result<()> {
                    let chunk = usize::try_from(opts.fill_bs).unwrap_or(1 << 20);
                    let mut buf = AlignedBuf::try_new(chunk, 4096)?;
                    // The runs' data: what compresses and deduplicates as
                    // asked, in sectors --verify can check.
                    let data = crate::io::verify::DataPlan::new(opts.data, layout, None);
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed) as usize;
                        if i >= paths.len() || failed.load(Ordering::Relaxed) {
                            return Ok(());
                        }
                        let filled = reopen(i).and_then(|f| {
                            fill_one(&*f, &paths[i], file_size, &mut buf, i as u32, &data, opts)
                        });
                        if let Err(e) = filled {
                            failed.store(true, Ordering::Relaxed);
                            return Err(e);
                        }
                    }
                })
            })
            .collect();
        if handles.iter().any(|h| h.is_err()) {
            // The threads already started see this and stop.
            failed.store(true, Ordering::Relaxed);
        }
        handles
            .into_iter()
            .map(|h| match h {
                Ok(h) => h
                    .join()
                    .unwrap_or_else(|_| Err(VbError::run("a fill thread panicked"))),
                Err(e) => Err(VbError::run(format!("cannot start a fill thread: {e}"))),
            })
            .collect()
    });
    opts.progress.finish();
    for r in errors {
        r?;
    }
    if opts.stop.load(Ordering::Relaxed) {
        return Err(VbError::run("interrupted while filling the file set"));
    }
    Ok(())
}

fn fill_one(
    f: &dyn SetFile,
    path: &Path,
    file_size: u64,
    buf: &mut AlignedBuf,
    file: u32,
    data: &crate::io::verify::DataPlan,
    opts: &PrepareOptions,
) -> Result<()> {
    let mut off = 0u64;
    let mut seq = 0u64;
    while off < file_size {
        if opts.stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        let n = (file_size - off).min(buf.as_slice().len() as u64) as usize;
        seq += 1;
        data.fill_chunk(
            &mut buf.as_mut_slice()[..n],
            file,
            off,
            seq.wrapping_mul(0x9E37_79B9),
        );
        let written = f
            .write_at(&buf.as_slice()[..n], off)
            .map_err(|e| fill_error(path, e, off, file_size))?;
        if written == 0 {
            return Err(VbError::run(format!(
                "write to {} made no progress",
                path.display()
            )));
        }
        off += written as u64;
        opts.progress.advance(written as u64);
    }
    if !opts.direct {
        // Push the data out and drop it from the page cache, so the first
        // reads are not all cache hits the later ones will not get.
        f.settle()
            .map_err(|e| fill_error(path, e, off, file_size))?;
    }
    Ok(())
}

/// A failed fill write: a full disk is the user's to fix (a smaller --size),
/// anything else is a failing device.
fn fill_error(path: &Path, e: crate::io::sys::io::Errno, done: u64, file_size: u64) -> VbError {
    if e == crate::io::sys::io::Errno::NOSPC || e == crate::io::sys::io::Errno::DQUOT {
        VbError::target(format!(
            "the target filled up while preparing the file set ({} of {} written to {}: {}); \
             use a smaller --size",
            format_size(done),
            format_size(file_size),
            path.display(),
            std::io::Error::from(e)
        ))
    } else {
        VbError::run(format!(
            "write to {} failed at offset {done}: {}",
            path.display(),
            std::io::Error::from(e)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Quiet;
    impl Progress for Quiet {
        fn start(&self, _: u64, _: &str) {}
        fn advance(&self, _: u64) {}
        fn finish(&self) {}
    }

    static DEFAULT_DATA: crate::spec::data::DataSpec = crate::spec::data::DataSpec {
        compress: 1.0,
        dedup: 1,
        dedup_unit: 4096,
        verify: false,
        max_data_errors: 1,
        journal: None,
    };

    fn opts<'a>(stop: &'a AtomicBool, allow_overwrite: bool) -> PrepareOptions<'a> {
        PrepareOptions {
            size: 64 << 10,
            files: 2,
            direct: false,
            allow_overwrite,
            needs_write: false,
            progress: &Quiet,
            stop,
            data: &DEFAULT_DATA,
            fill_bs: 1 << 20,
            fill_threads: 4,
        }
    }

    #[test]
    fn a_set_is_reused_and_an_invalid_marker_needs_allow_overwrite() {
        let t = tempfile::tempdir().unwrap();
        let stop = AtomicBool::new(false);
        let filled = |p: &Prepared| p.fill.as_ref().is_some_and(|f| !f.skipped_reused);
        let reused = |p: &Prepared| p.fill.as_ref().map(|f| f.skipped_reused);
        let first = prepare(t.path(), Storage::Local, &opts(&stop, false)).unwrap();
        assert!(filled(&first), "{:?}", first.fill);
        let f = first.fill.clone().unwrap();
        assert_eq!((f.files, f.bytes, f.bs), (2, 64 << 10, 1 << 20));
        assert!(f.seconds > 0.0 && f.mib_s > 0.0, "{f:?}");
        drop(first);
        let again = prepare(t.path(), Storage::Local, &opts(&stop, false)).unwrap();
        assert_eq!(reused(&again), Some(true));
        assert!(
            again
                .fill
                .as_ref()
                .unwrap()
                .line()
                .contains("reusing the filled file set")
        );
        drop(again);
        std::fs::write(
            t.path().join(MARKER_NAME),
            r#"{"created_by":"volbench","files":1,"file_size":4096,"filled":true,"inodes":[]}"#,
        )
        .unwrap();
        let e = prepare(t.path(), Storage::Local, &opts(&stop, false)).unwrap_err();
        assert_eq!(e.kind, crate::error::Kind::Refused);
        assert!(e.message.contains("--allow-overwrite"), "{e}");
        let remade = prepare(t.path(), Storage::Local, &opts(&stop, true)).unwrap();
        assert!(filled(&remade), "refilled, not reused: {:?}", remade.fill);
        drop(remade);
        let m =
            super::super::marker::parse_marker(&std::fs::read(t.path().join(MARKER_NAME)).unwrap())
                .unwrap();
        assert!(m.filled && m.files == 2);
    }

    #[test]
    fn too_many_files_are_refused_before_anything_is_created() {
        let t = tempfile::tempdir().unwrap();
        let stop = AtomicBool::new(false);
        let o = PrepareOptions {
            files: MAX_FILES + 1,
            size: u64::MAX,
            ..opts(&stop, false)
        };
        let e = prepare(&t.path().join("set"), Storage::Local, &o).unwrap_err();
        assert!(e.message.contains("65536"), "{e}");
        assert!(!t.path().join("set").exists());
    }

    #[test]
    fn a_fill_draws_an_id_and_a_write_without_stamps_is_recorded() {
        let t = tempfile::tempdir().unwrap();
        let stop = AtomicBool::new(false);
        let first = prepare(t.path(), Storage::Local, &opts(&stop, false)).unwrap();
        let id = first.identity.clone().unwrap();
        assert_eq!(id.id.len(), 32);
        assert!(first.identity_before.is_none());
        drop(first);
        // Reused by a writing run without --verify: same set, now unstamped.
        let writes = PrepareOptions {
            needs_write: true,
            ..opts(&stop, false)
        };
        let again = prepare(t.path(), Storage::Local, &writes).unwrap();
        assert_eq!(again.identity.as_ref(), Some(&id));
        drop(again);
        let m = read_marker(
            &*crate::io::backend::local::open(t.path(), false).unwrap(),
            false,
        )
        .unwrap()
        .unwrap();
        assert!(m.unstamped.is_some_and(|n| n.contains("without --verify")));
        // A --verify run on it is refused before any I/O, with its own kind.
        let verify = crate::spec::data::DataSpec {
            verify: true,
            ..DEFAULT_DATA.clone()
        };
        let checked = PrepareOptions {
            data: &verify,
            ..opts(&stop, false)
        };
        let e = prepare(t.path(), Storage::Local, &checked).unwrap_err();
        assert_eq!(e.kind, crate::error::Kind::Unchecked, "{e}");
        assert!(e.message.contains("cannot be checked"), "{e}");
        // A refill draws a new id and remembers the old one.
        let refill = PrepareOptions {
            size: 128 << 10,
            ..opts(&stop, false)
        };
        let new = prepare(t.path(), Storage::Local, &refill).unwrap();
        assert_ne!(new.identity.as_ref().map(|i| &i.id), Some(&id.id));
        assert_eq!(new.identity_before.as_ref(), Some(&id));
    }
}
