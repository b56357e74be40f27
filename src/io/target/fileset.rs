//! The file set volbench creates in a directory target: `volbench.N.dat`
//! files plus a marker recording what volbench made, so later runs can reuse
//! a filled set and nothing else in the directory is ever written.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use rustix::fs::{Mode, OFlags};
use serde::{Deserialize, Serialize};

use super::{PrepareOptions, Prepared, TargetKind, probe_align};
use crate::error::{Result, VbError};
use crate::io::data::{AlignedBuf, fill_random, stamp};
use crate::io::workload::Layout;
use crate::units::format_size;

pub const MARKER_NAME: &str = ".volbench-fileset.json";
pub const FILE_PREFIX: &str = "volbench.";
const FILL_CHUNK: usize = 1 << 20;

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
}

fn file_name(i: u32) -> String {
    format!("{FILE_PREFIX}{i}.dat")
}

fn read_marker(dir: &Path) -> Option<Marker> {
    let text = fs::read_to_string(dir.join(MARKER_NAME)).ok()?;
    serde_json::from_str(&text).ok()
}

fn write_marker(dir: &Path, m: &Marker) -> Result<()> {
    let text = serde_json::to_string_pretty(m).map_err(|e| VbError::run(e.to_string()))?;
    fs::write(dir.join(MARKER_NAME), text)
        .map_err(|e| VbError::target(format!("cannot write in {}: {e}", dir.display())))
}

pub fn prepare(dir: &Path, opts: &PrepareOptions) -> Result<Prepared> {
    if !dir.exists() {
        fs::create_dir(dir).map_err(|e| {
            VbError::target(format!(
                "cannot create target directory {}: {e}",
                dir.display()
            ))
        })?;
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
    let paths: Vec<PathBuf> = (0..opts.files).map(|i| dir.join(file_name(i))).collect();
    let wanted = Marker {
        created_by: format!("volbench {}", env!("CARGO_PKG_VERSION")),
        files: opts.files,
        file_size,
        filled: true,
    };
    let old = read_marker(dir);
    let mut notes = Vec::new();
    let reusable = old.as_ref().is_some_and(|m| {
        m.filled
            && m.files == wanted.files
            && m.file_size == wanted.file_size
            && paths.iter().all(|p| {
                fs::metadata(p)
                    .map(|md| md.len() == file_size)
                    .unwrap_or(false)
            })
    });
    if reusable {
        notes.push(format!(
            "reusing the filled file set in {} ({} x {})",
            dir.display(),
            opts.files,
            format_size(file_size)
        ));
    } else {
        // Files volbench did not create are never overwritten.
        let owned = old.as_ref().map(|m| m.files).unwrap_or(0);
        for (i, p) in paths.iter().enumerate() {
            if i as u32 >= owned && p.exists() && !opts.allow_overwrite {
                return Err(VbError::refused(format!(
                    "refusing to overwrite {}: volbench did not create it (no {MARKER_NAME} lists it); \
                     move it away or pass --allow-overwrite",
                    p.display()
                )));
            }
        }
        if let Some(m) = &old {
            // A set of another shape is ours: drop the files beyond the new count.
            for i in opts.files..m.files {
                let _ = fs::remove_file(dir.join(file_name(i)));
            }
        }
        write_marker(
            dir,
            &Marker {
                filled: false,
                ..wanted.clone()
            },
        )?;
        fill(&paths, file_size, opts).inspect_err(|_| {
            // Free the space of a failed fill: the files are ours.
            for p in &paths {
                let _ = fs::remove_file(p);
            }
            let _ = fs::remove_file(dir.join(MARKER_NAME));
        })?;
        write_marker(dir, &wanted)?;
    }
    let align = if opts.direct {
        probe_align(&paths[0], false)?
    } else {
        1
    };
    Ok(Prepared {
        kind: TargetKind::Directory,
        paths,
        layout: Layout {
            nfiles: opts.files,
            file_size,
        },
        align,
        writable: true,
        notes,
    })
}

/// Writes every file sequentially to its end with incompressible data, as
/// vdbench's FillWrite and fio's layout do, several files at a time.
fn fill(paths: &[PathBuf], file_size: u64, opts: &PrepareOptions) -> Result<()> {
    let total = file_size * paths.len() as u64;
    opts.progress.start(total, "filling");
    let next = AtomicU64::new(0);
    let failed = AtomicBool::new(false);
    let parallel = paths.len().clamp(1, 4);
    let errors: Vec<Result<()>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..parallel)
            .map(|w| {
                let next = &next;
                let failed = &failed;
                s.spawn(move || -> Result<()> {
                    let mut buf = AlignedBuf::new(FILL_CHUNK, 4096);
                    let mut rng = fastrand::Rng::with_seed(0x5eed ^ w as u64);
                    fill_random(buf.as_mut_slice(), &mut rng);
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed) as usize;
                        if i >= paths.len() || failed.load(Ordering::Relaxed) {
                            return Ok(());
                        }
                        if let Err(e) = fill_one(&paths[i], file_size, &mut buf, i as u64, opts) {
                            failed.store(true, Ordering::Relaxed);
                            return Err(e);
                        }
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(VbError::run("a fill thread panicked")))
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
    path: &Path,
    file_size: u64,
    buf: &mut AlignedBuf,
    key: u64,
    opts: &PrepareOptions,
) -> Result<()> {
    let mut flags = OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC | OFlags::CLOEXEC;
    if opts.direct {
        flags |= OFlags::DIRECT;
    }
    let fd = rustix::fs::open(path, flags, Mode::from_raw_mode(0o644))
        .map_err(|e| super::open_error(path, e, opts.direct))?;
    let mut off = 0u64;
    let mut seq = 0u64;
    while off < file_size {
        if opts.stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        let n = (file_size - off).min(FILL_CHUNK as u64) as usize;
        seq += 1;
        stamp(&mut buf.as_mut_slice()[..n], key, off, seq);
        let written = rustix::io::pwrite(&fd, &buf.as_slice()[..n], off)
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
        rustix::fs::fdatasync(&fd).map_err(|e| fill_error(path, e, off, file_size))?;
        let _ = rustix::fs::fadvise(&fd, 0, None, rustix::fs::Advice::DontNeed);
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
