//! What the I/O goes to: a directory (volbench makes and owns a file set
//! there), an existing regular file, or a block device. This module decides
//! what may be written: only files volbench created, unless the user said
//! `--allow-overwrite`, and never a mounted device.

use std::fs;
use std::os::fd::OwnedFd;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use rustix::fs::{Mode, OFlags};

use crate::error::{Result, VbError};
use crate::io::workload::Layout;
use crate::units::format_size;

mod device;
mod fileset;

pub use fileset::{FILE_PREFIX, MARKER_NAME, Progress};

pub use crate::spec::TargetKind;

/// What is at the target path, found without changing anything.
#[derive(Debug, Clone)]
pub struct Inspection {
    pub kind: TargetKind,
    pub path: PathBuf,
    /// Size of an existing file or device.
    pub existing_size: Option<u64>,
}

pub fn inspect(path: &Path) -> Result<Inspection> {
    match fs::metadata(path) {
        Ok(meta) => {
            let ft = meta.file_type();
            if ft.is_dir() {
                Ok(Inspection {
                    kind: TargetKind::Directory,
                    path: path.into(),
                    existing_size: None,
                })
            } else if ft.is_file() {
                Ok(Inspection {
                    kind: TargetKind::File,
                    path: path.into(),
                    existing_size: Some(meta.len()),
                })
            } else if ft.is_block_device() {
                let size = device::size(path)?;
                Ok(Inspection {
                    kind: TargetKind::BlockDevice,
                    path: path.into(),
                    existing_size: Some(size),
                })
            } else {
                Err(VbError::target(format!(
                    "target {} is neither a directory, a regular file nor a block device",
                    path.display()
                )))
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let parent = path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            if parent.is_dir() {
                Ok(Inspection {
                    kind: TargetKind::Directory,
                    path: path.into(),
                    existing_size: None,
                })
            } else {
                Err(VbError::target(format!(
                    "target {} does not exist, nor does its parent directory {}",
                    path.display(),
                    parent.display()
                )))
            }
        }
        Err(e) => Err(VbError::target(format!(
            "cannot inspect target {}: {e}",
            path.display()
        ))),
    }
}

/// A target ready for I/O: the files to open and how they are laid out.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub kind: TargetKind,
    pub paths: Vec<PathBuf>,
    pub layout: Layout,
    /// Offset and size alignment direct I/O needs on this target.
    pub align: u64,
    pub writable: bool,
    /// Something the user should know (reused file set, sparse file...).
    pub notes: Vec<String>,
}

/// Options for `prepare` that come from the spec.
#[derive(Clone, Copy)]
pub struct PrepareOptions<'a> {
    pub size: u64,
    pub files: u32,
    pub direct: bool,
    pub allow_overwrite: bool,
    pub needs_write: bool,
    pub progress: &'a dyn Progress,
    /// Stop asked for (Ctrl-C) while filling.
    pub stop: &'a std::sync::atomic::AtomicBool,
}

/// Makes the target ready: creates and fills a file set, or checks that an
/// existing file or device may be used as asked.
pub fn prepare(insp: &Inspection, opts: &PrepareOptions) -> Result<Prepared> {
    match insp.kind {
        TargetKind::Directory => fileset::prepare(&insp.path, opts),
        TargetKind::File => prepare_existing(insp, opts, false),
        TargetKind::BlockDevice => prepare_existing(insp, opts, true),
    }
}

fn prepare_existing(insp: &Inspection, opts: &PrepareOptions, device: bool) -> Result<Prepared> {
    let what = if device {
        "block device"
    } else {
        "existing file"
    };
    let path = &insp.path;
    let have = insp.existing_size.unwrap_or(0);
    if opts.needs_write && !opts.allow_overwrite {
        return Err(VbError::refused(format!(
            "refusing to write to {what} {}: volbench did not create it and writing destroys its \
             data; pass --allow-overwrite if that is what you want (or use a read-only workload, \
             or a directory target)",
            path.display()
        )));
    }
    if device && opts.needs_write {
        device::refuse_if_in_use(path)?;
    }
    if opts.files != 1 {
        return Err(VbError::input(format!(
            "--files {} applies to directory targets; {} is a single {what}",
            opts.files,
            path.display()
        )));
    }
    if opts.size > have {
        return Err(VbError::target(format!(
            "--size {} is larger than {what} {} ({})",
            format_size(opts.size),
            path.display(),
            format_size(have)
        )));
    }
    let align = if opts.direct {
        probe_align(path, device)?
    } else {
        1
    };
    let file_size = opts.size / align.max(4096) * align.max(4096);
    let mut notes = Vec::new();
    if !device && let Ok(meta) = fs::metadata(path) {
        use std::os::unix::fs::MetadataExt;
        if meta.blocks() * 512 < meta.len() {
            notes.push(format!(
                "{} is sparse: reads of its holes do not touch the storage",
                path.display()
            ));
        }
    }
    Ok(Prepared {
        kind: insp.kind,
        paths: vec![path.clone()],
        layout: Layout {
            nfiles: 1,
            file_size,
        },
        align,
        writable: opts.needs_write,
        notes,
    })
}

/// The offset and length alignment O_DIRECT needs, probed from the kernel.
/// Also confirms the file system accepts O_DIRECT at all.
pub fn probe_align(path: &Path, device: bool) -> Result<u64> {
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::DIRECT | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| open_error(path, e, true))?;
    if device {
        return Ok(rustix::fs::ioctl_blksszget(&fd)
            .map(|s| s as u64)
            .unwrap_or(4096)
            .max(512));
    }
    match rustix::fs::statx(
        &fd,
        "",
        rustix::fs::AtFlags::EMPTY_PATH,
        rustix::fs::StatxFlags::DIOALIGN,
    ) {
        Ok(stx) if stx.stx_dio_offset_align > 0 => Ok(stx.stx_dio_offset_align as u64),
        // The kernel or file system does not report it: 4096 is safe on
        // every common device (512e and 4Kn alike).
        _ => Ok(4096),
    }
}

/// Why a file could not be opened; EINVAL with O_DIRECT means the file
/// system does not do direct I/O, which the user can work around.
pub(crate) fn open_error(path: &Path, e: rustix::io::Errno, direct: bool) -> VbError {
    if direct && e == rustix::io::Errno::INVAL {
        VbError::target(format!(
            "the file system at {} does not support direct I/O (O_DIRECT); use --buffered",
            path.display()
        ))
    } else {
        VbError::target(format!(
            "cannot open {}: {}",
            path.display(),
            std::io::Error::from(e)
        ))
    }
}

/// Opens the target's files for one worker. Each worker opens its own
/// descriptors so threads never share a file object's reference count.
pub fn open_files(prep: &Prepared, direct: bool) -> Result<Vec<OwnedFd>> {
    let mut flags = OFlags::CLOEXEC;
    flags |= if prep.writable {
        OFlags::RDWR
    } else {
        OFlags::RDONLY
    };
    if direct {
        flags |= OFlags::DIRECT;
    }
    prep.paths
        .iter()
        .map(|p| rustix::fs::open(p, flags, Mode::empty()).map_err(|e| open_error(p, e, direct)))
        .collect()
}

/// Checks whether a directory's file system accepts O_DIRECT, with a scratch file.
pub fn probe_dir_direct(dir: &Path) -> Result<()> {
    let probe = dir.join(".volbench-direct-probe");
    let res = rustix::fs::open(
        &probe,
        OFlags::CREATE | OFlags::WRONLY | OFlags::DIRECT | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    );
    let _ = fs::remove_file(&probe);
    res.map(|_| ()).map_err(|e| open_error(dir, e, true))
}
