//! The file set volbench creates in a directory target: `volbench.N.dat`
//! files plus a marker recording what volbench made, so later runs can reuse
//! a filled set and nothing else in the directory is ever written.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use rustix::fs::{OFlags, Stat};
use serde::{Deserialize, Serialize};

use super::lock;
use super::setdir::{Entry, SetDir, not_regular};
use super::{FileRef, PrepareOptions, Prepared, TargetKind, probe_align_fd};
use crate::error::{Result, VbError};
use crate::io::data::AlignedBuf;
use crate::io::workload::Layout;
use crate::units::format_size;

pub const MARKER_NAME: &str = ".volbench-fileset.json";
pub const FILE_PREFIX: &str = "volbench.";
/// Most files one set may have (the --files bound): also what a marker may claim.
pub const MAX_FILES: u32 = crate::units::bounds::MAX_FILES as u32;
/// A marker lists one inode per file; a real one stays far below this.
const MARKER_CAP: usize = 4 << 20;
/// Largest set a marker may describe (1 EiB): beyond any real volume.
const MAX_SET_BYTES: u64 = 1 << 60;

/// Receives fill progress; the terminal shows a bar, tests and pipes nothing.
pub trait Progress: Sync {
    fn start(&self, total_bytes: u64, what: &str);
    fn advance(&self, bytes: u64);
    fn finish(&self);
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Marker {
    created_by: String,
    files: u32,
    file_size: u64,
    filled: bool,
    /// The inode of each file, in order: what makes a file volbench's own.
    /// A marker copied or forged into another directory lists inodes that
    /// are not the files found there.
    #[serde(default)]
    inodes: Vec<u64>,
    /// The data format it was filled with (`DataSpec::fill_tag`); absent
    /// in sets made before formats were recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    data: Option<String>,
}

fn file_name(i: u32) -> String {
    format!("{FILE_PREFIX}{i}.dat")
}

/// Checks a marker's claims against the bounds any marker volbench writes
/// keeps, so a damaged or forged one cannot drive the prepare.
fn parse_marker(bytes: &[u8]) -> std::result::Result<Marker, String> {
    let m: Marker = serde_json::from_slice(bytes).map_err(|e| format!("it is not valid: {e}"))?;
    if m.files == 0 || m.files > MAX_FILES {
        return Err(format!(
            "it claims {} files, outside 1..={MAX_FILES}",
            m.files
        ));
    }
    if m.file_size == 0 || !m.file_size.is_multiple_of(4096) {
        return Err(format!(
            "it claims files of {} bytes, not a positive multiple of 4096",
            m.file_size
        ));
    }
    if (m.files as u64)
        .checked_mul(m.file_size)
        .is_none_or(|t| t > MAX_SET_BYTES)
    {
        return Err(format!(
            "it claims {} files of {} bytes, more than the {} bound",
            m.files,
            m.file_size,
            format_size(MAX_SET_BYTES)
        ));
    }
    if m.inodes.len() != m.files as usize {
        return Err(format!(
            "it records {} file identities for {} files (an older volbench wrote it?)",
            m.inodes.len(),
            m.files
        ));
    }
    Ok(m)
}

/// The set's marker, if there is a valid one. An invalid one is refused,
/// unless --allow-overwrite lets volbench make a new set over whatever is
/// there (every file then counts as not volbench's).
fn read_marker(dir: &SetDir, allow_overwrite: bool) -> Result<Option<Marker>> {
    let Some(bytes) = dir.read_capped(MARKER_NAME, MARKER_CAP)? else {
        return Ok(None);
    };
    match parse_marker(&bytes) {
        Ok(m) => Ok(Some(m)),
        Err(_) if allow_overwrite => Ok(None),
        Err(why) => Err(VbError::refused(format!(
            "refusing to trust {}: {why}; remove it (and the {FILE_PREFIX}N.dat files beside \
             it if they are volbench's), or pass --allow-overwrite to make a new set over them",
            dir.path_of(MARKER_NAME).display()
        ))),
    }
}

/// What an existing set's marker records, for reading the set back
/// (`volbench verify`): file count, file size, inodes, data format.
pub(super) type SetShape = (u32, u64, Vec<u64>, Option<String>);

pub(super) fn existing_set(dir: &SetDir) -> Result<Option<SetShape>> {
    Ok(read_marker(dir, false)?
        .filter(|m| m.filled)
        .map(|m| (m.files, m.file_size, m.inodes, m.data)))
}

fn write_marker(dir: &SetDir, m: &Marker) -> Result<u64> {
    let text = serde_json::to_string_pretty(m).map_err(|e| VbError::run(e.to_string()))?;
    dir.replace(MARKER_NAME, text.as_bytes())
}

/// What is at one of the set's names before anything is written.
enum Slot {
    Missing,
    /// The file the marker lists under this name.
    Ours(Stat),
    /// A regular file volbench cannot show it made.
    Foreign(Stat),
}

/// Removes a directory volbench created for a set of its own (quick's
/// scratch directory): the files its marker lists, the marker and the lock
/// file, then the directory itself, which must be empty by then; anything
/// else found there is left, and so is the directory.
pub fn remove_set_dir(path: &Path) -> Result<()> {
    let dir = SetDir::open_existing(path)?;
    if let Some(m) = read_marker(&dir, false)? {
        for (i, &ino) in m.inodes.iter().enumerate() {
            dir.remove_if_ours(&file_name(i as u32), ino);
        }
    }
    for name in [MARKER_NAME, lock::LOCK_NAME] {
        if let Ok(Entry::Regular(st)) = dir.entry(name) {
            dir.remove_if_ours(name, st.st_ino);
        }
    }
    drop(dir);
    std::fs::remove_dir(path)
        .map_err(|e| VbError::target(format!("cannot remove {}: {e}", path.display())))
}

/// Prepares the file set in the directory the user named (created if missing).
pub fn prepare(dir: &Path, opts: &PrepareOptions) -> Result<Prepared> {
    let file_size = check_shape(opts)?;
    prepare_in(SetDir::open_or_create(dir)?, file_size, opts)
}

/// Prepares the file set in subdirectory `name` of `parent`, reached
/// without following a link: a planted `files-N` link is refused.
pub fn prepare_sub(parent: &Path, name: &str, opts: &PrepareOptions) -> Result<Prepared> {
    let file_size = check_shape(opts)?;
    let parent = SetDir::open_or_create(parent)?;
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

fn prepare_in(dir: SetDir, file_size: u64, opts: &PrepareOptions) -> Result<Prepared> {
    // Held until the run ends (the Prepared keeps it).
    let lock = lock::lock_set(&dir)?;
    let old = read_marker(&dir, opts.allow_overwrite)?;
    let names: Vec<String> = (0..opts.files).map(file_name).collect();
    let mut slots = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        slots.push(match dir.entry(name)? {
            Entry::Missing => Slot::Missing,
            Entry::Other(what) => return Err(not_regular(&dir.path_of(name), what)),
            Entry::Regular(st) => {
                let listed = old.as_ref().and_then(|m| m.inodes.get(i)) == Some(&st.st_ino);
                // A second link would let a refill reach a file elsewhere.
                if listed && st.st_dev == dir.dev && st.st_nlink == 1 {
                    Slot::Ours(st)
                } else {
                    Slot::Foreign(st)
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
                .all(|s| matches!(s, Slot::Ours(st) if st.st_size as u64 == file_size))
    });
    let total = file_size.saturating_mul(u64::from(opts.files));
    let mut fill = crate::result::fill::FillResult {
        host: String::new(),
        path: dir.path().display().to_string(),
        files: opts.files,
        bytes: total,
        bs: opts.fill_bs,
        seconds: 0.0,
        mib_s: 0.0,
        skipped_reused: reusable,
    };
    // What the fill did is the set's `fill` (said on the terminal by the
    // executor and kept in result.json), not a note.
    let inodes: Vec<u64> = if reusable {
        slots
            .iter()
            .map(|s| match s {
                Slot::Ours(st) | Slot::Foreign(st) => st.st_ino,
                Slot::Missing => 0,
            })
            .collect()
    } else {
        // The fill is a phase of its own: its time and rate are reported
        // (terminal, result.json `fill`), never mixed into a run's.
        let t0 = std::time::Instant::now();
        let inodes = refill(&dir, old.as_ref(), &names, &slots, file_size, opts)?;
        let secs = t0.elapsed().as_secs_f64().max(1e-6);
        fill.seconds = secs;
        fill.mib_s = total as f64 / 1048576.0 / secs;
        inodes
    };
    let dir = Arc::new(dir);
    let files: Vec<FileRef> = names
        .iter()
        .zip(&inodes)
        .map(|(name, &ino)| FileRef::InSet {
            dir: dir.clone(),
            name: name.clone(),
            ino,
        })
        .collect();
    let align = match (opts.direct, files.first()) {
        (true, Some(f)) => probe_align_fd(&f.open(OFlags::RDONLY | OFlags::DIRECT)?, false),
        _ => 1,
    };
    Ok(Prepared {
        kind: TargetKind::Directory,
        paths: names.iter().map(|n| dir.path_of(n)).collect(),
        layout: Layout {
            nfiles: opts.files,
            file_size,
        },
        align,
        writable: opts.needs_write,
        notes: Vec::new(),
        files,
        _lock: Some(Arc::new(lock)),
        filled_now: !reusable,
        data: None,
        fill: Some(fill),
    })
}

/// Creates (or truncates, when they are volbench's or the user allowed it)
/// and fills every file; returns their inodes, recorded in the marker.
fn refill(
    dir: &SetDir,
    old: Option<&Marker>,
    names: &[String],
    slots: &[Slot],
    file_size: u64,
    opts: &PrepareOptions,
) -> Result<Vec<u64>> {
    // Files volbench did not create are never overwritten unasked.
    if !opts.allow_overwrite
        && let Some(i) = slots.iter().position(|s| matches!(s, Slot::Foreign(_)))
    {
        return Err(VbError::refused(format!(
            "refusing to overwrite {}: volbench did not create it (it is not the file \
             {MARKER_NAME} lists, or it has other hard links); move it away or pass \
             --allow-overwrite",
            dir.path_of(&names[i]).display()
        )));
    }
    let total = file_size.saturating_mul(names.len() as u64);
    let reclaimed: u64 = slots
        .iter()
        .map(|s| match s {
            Slot::Ours(st) | Slot::Foreign(st) => (st.st_blocks as u64).saturating_mul(512),
            Slot::Missing => 0,
        })
        .sum();
    let need = total.saturating_sub(reclaimed);
    if let Some(free) = dir.free_bytes()
        && need > free
    {
        return Err(VbError::target(format!(
            "the file set needs {} more on the file system of {}, and only {} is free; \
             use a smaller --size",
            format_size(need),
            dir.path().display(),
            format_size(free)
        )));
    }
    if let Some(m) = old {
        // A set of another shape is ours: drop the files beyond the new count.
        for (i, &ino) in m.inodes.iter().enumerate().skip(names.len()) {
            dir.remove_if_ours(&file_name(i as u32), ino);
        }
    }
    let flags = OFlags::WRONLY;
    let mut fds: Vec<OwnedFd> = Vec::with_capacity(names.len());
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
    for (name, slot) in names.iter().zip(slots) {
        let opened = match slot {
            Slot::Missing => dir.create_new(name, flags),
            Slot::Ours(seen) | Slot::Foreign(seen) => {
                dir.open_regular(name, flags).and_then(|(fd, st)| {
                    if st.st_ino != seen.st_ino {
                        return Err(VbError::refused(format!(
                            "refusing to use {}: it was replaced while volbench prepared the set",
                            dir.path_of(name).display()
                        )));
                    }
                    rustix::fs::ftruncate(&fd, 0).map_err(|e| {
                        VbError::target(format!(
                            "cannot truncate {}: {}",
                            dir.path_of(name).display(),
                            std::io::Error::from(e)
                        ))
                    })?;
                    Ok((fd, st))
                })
            }
        };
        match opened {
            Ok((fd, st)) => {
                fds.push(fd);
                inodes.push(st.st_ino);
            }
            Err(e) => {
                undo(&inodes, None);
                return Err(e);
            }
        }
        // O_DIRECT is set once the file is recorded: an open that creates
        // the file and then fails on O_DIRECT (tmpfs) would leave behind a
        // file no marker lists.
        if opts.direct
            && let Some(fd) = fds.last()
            && let Err(e) = rustix::fs::fcntl_getfl(fd)
                .and_then(|fl| rustix::fs::fcntl_setfl(fd, fl | OFlags::DIRECT))
        {
            undo(&inodes, None);
            return Err(super::open_error(&dir.path_of(name), e, true));
        }
    }
    // A fill size the device cannot take is refused before a byte is
    // written, like --bs (whose check against the probed alignment comes
    // only after the fill).
    if opts.direct
        && let Some(fd) = fds.first()
    {
        let align = probe_align_fd(fd, false);
        if !opts.fill_bs.is_multiple_of(align) {
            undo(&inodes, None);
            return Err(VbError::input(format!(
                "--fill-bs {} is not a multiple of {align} bytes, the direct-I/O alignment of {}; \
                 use a multiple of it, or --buffered",
                opts.fill_bs,
                dir.path().display()
            )));
        }
    }
    let mut marker = Marker {
        created_by: format!("volbench {}", env!("CARGO_PKG_VERSION")),
        files: names.len() as u32,
        file_size,
        filled: false,
        inodes: inodes.clone(),
        data: Some(opts.data.fill_tag()),
    };
    let marker_ino = write_marker(dir, &marker).inspect_err(|_| undo(&inodes, None))?;
    let paths: Vec<PathBuf> = names.iter().map(|n| dir.path_of(n)).collect();
    fill(&fds, &paths, file_size, opts).inspect_err(|_| undo(&inodes, Some(marker_ino)))?;
    marker.filled = true;
    let text = serde_json::to_string_pretty(&marker).map_err(|e| VbError::run(e.to_string()))?;
    dir.rewrite_ours(MARKER_NAME, marker_ino, text.as_bytes())?;
    Ok(inodes)
}

/// Writes every file sequentially to its end with incompressible data, as
/// vdbench's FillWrite and fio's layout do, several files at a time.
fn fill(fds: &[OwnedFd], paths: &[PathBuf], file_size: u64, opts: &PrepareOptions) -> Result<()> {
    let total = file_size.saturating_mul(paths.len() as u64);
    let layout = Layout {
        nfiles: paths.len() as u32,
        file_size,
    };
    opts.progress.start(total, "filling");
    let next = AtomicU64::new(0);
    let failed = AtomicBool::new(false);
    let parallel = paths.len().clamp(1, 4);
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
                        if let Err(e) = fill_one(
                            &fds[i], &paths[i], file_size, &mut buf, i as u32, &data, opts,
                        ) {
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
    fd: &OwnedFd,
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
        let written = rustix::io::pwrite(fd, &buf.as_slice()[..n], off)
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
        rustix::fs::fdatasync(fd).map_err(|e| fill_error(path, e, off, file_size))?;
        let _ = rustix::fs::fadvise(fd, 0, None, rustix::fs::Advice::DontNeed);
    }
    Ok(())
}

/// A failed fill write: a full disk is the user's to fix (a smaller --size),
/// anything else is a failing device.
fn fill_error(path: &Path, e: rustix::io::Errno, done: u64, file_size: u64) -> VbError {
    if e == rustix::io::Errno::NOSPC || e == rustix::io::Errno::DQUOT {
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

    fn marker(files: u64, file_size: u64, inodes: usize) -> String {
        format!(
            r#"{{"created_by":"volbench","files":{files},"file_size":{file_size},"filled":true,"inodes":{:?}}}"#,
            vec![7u64; inodes]
        )
    }

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
        }
    }

    #[test]
    fn a_set_is_reused_and_an_invalid_marker_needs_allow_overwrite() {
        let t = tempfile::tempdir().unwrap();
        let stop = AtomicBool::new(false);
        let filled = |p: &Prepared| p.fill.as_ref().is_some_and(|f| !f.skipped_reused);
        let reused = |p: &Prepared| p.fill.as_ref().map(|f| f.skipped_reused);
        let first = prepare(t.path(), &opts(&stop, false)).unwrap();
        assert!(filled(&first), "{:?}", first.fill);
        let f = first.fill.clone().unwrap();
        assert_eq!((f.files, f.bytes, f.bs), (2, 64 << 10, 1 << 20));
        assert!(f.seconds > 0.0 && f.mib_s > 0.0, "{f:?}");
        drop(first);
        let again = prepare(t.path(), &opts(&stop, false)).unwrap();
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
        std::fs::write(t.path().join(MARKER_NAME), marker(1, 4096, 0)).unwrap();
        let e = prepare(t.path(), &opts(&stop, false)).unwrap_err();
        assert_eq!(e.kind, crate::error::Kind::Refused);
        assert!(e.message.contains("--allow-overwrite"), "{e}");
        let remade = prepare(t.path(), &opts(&stop, true)).unwrap();
        assert!(filled(&remade), "refilled, not reused: {:?}", remade.fill);
        drop(remade);
        let m = parse_marker(&std::fs::read(t.path().join(MARKER_NAME)).unwrap()).unwrap();
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
        let e = prepare(&t.path().join("set"), &o).unwrap_err();
        assert!(e.message.contains("65536"), "{e}");
        assert!(!t.path().join("set").exists());
    }

    #[test]
    fn a_marker_written_by_volbench_parses() {
        let m = parse_marker(marker(2, 8192, 2).as_bytes()).unwrap();
        assert_eq!((m.files, m.file_size, m.inodes.len()), (2, 8192, 2));
    }

    #[test]
    fn markers_outside_the_bounds_are_rejected_with_the_bound() {
        for (text, says) in [
            (marker(4294967295, 4096, 0), "outside 1..=65536"),
            (marker(0, 4096, 0), "outside 1..=65536"),
            (marker(1, 0, 1), "multiple of 4096"),
            (marker(1, 4097, 1), "multiple of 4096"),
            (marker(65536, 1 << 50, 0), "bound"),
            (marker(2, 4096, 1), "identities"),
            (
                r#"{"created_by":"volbench","files":1,"file_size":4096,"filled":true}"#.into(),
                "older volbench",
            ),
            ("{".into(), "not valid"),
            (
                r#"{"files":-1,"file_size":4096,"filled":true,"created_by":""}"#.into(),
                "not valid",
            ),
        ] {
            let e = parse_marker(text.as_bytes()).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
    }
}
