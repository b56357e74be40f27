//! What the I/O goes to: a directory (volbench makes and owns a file set
//! there), an existing regular file, or a block device. This module decides
//! what may be written: only files volbench created, unless the user said
//! `--allow-overwrite`, and never a mounted device.

use crate::io::backend::{Dir, Files, Held, IoOpen, Storage, TreeRoot};
use crate::io::sys::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::io::sys::fs::OFlags;

use crate::error::{Result, VbError};
use crate::io::workload::Layout;
use crate::units::format_size;

mod cleanset;
mod device;
mod fileset;
mod marker;
mod place;
mod rawdisk;
mod room;
mod winname;

pub(crate) use crate::io::backend::local::lock::{LOCK_NAME, lock_tree};
/// A coordinator names files on its Windows hosts (`--push-binary`).
pub(crate) use winname::bad_component as bad_windows_name;
#[cfg(windows)]
pub(crate) use winname::one_file_twice;
pub(crate) mod readset;

pub(crate) use crate::io::gate::setdir::{self, Access, read_up_to};

pub(crate) use cleanset::{clean_set, remove_set_dir};
pub(crate) use fileset::Progress;
pub(crate) use marker::unchecked;
pub use marker::{FILE_PREFIX, MARKER_NAME, MAX_FILES, SetIdentity, set_identity};
pub use place::{kernel_root, normalise, refuse_kernel_fs};
pub(crate) use room::check_room_for_sets;

pub(crate) use crate::spec::TargetKind;

/// What is at the target path, found without changing anything.
#[derive(Debug, Clone)]
pub(crate) struct Inspection {
    pub(crate) kind: TargetKind,
    pub(crate) path: PathBuf,
    /// Size of an existing file or device.
    pub(crate) existing_size: Option<u64>,
}

pub(crate) fn inspect(path: &Path) -> Result<Inspection> {
    // Storage named by URL (nfs://): a directory on a server, which its
    // back end makes and checks when preparing; here its URL is checked.
    if crate::io::backend::is_url(path) {
        crate::io::backend::check_url(path)?;
        return Ok(Inspection {
            kind: TargetKind::Directory,
            path: path.into(),
            existing_size: None,
        });
    }
    // A disk is a block device as on Linux (the write rules are in
    // `prepare`); a volume is a mounted file system, never written raw.
    #[cfg(windows)]
    if winname::raw_device(&path.to_string_lossy()) {
        return match rawdisk::classify(&path.to_string_lossy()) {
            rawdisk::Raw::Disk(_) => inspect_type(path),
            rawdisk::Raw::Other => Err(VbError::input(rawdisk::volume_refusal(
                &path.to_string_lossy(),
            ))),
        };
    }
    #[cfg(windows)]
    if let Some(why) = winname::check_path(path) {
        return Err(VbError::input(why));
    }
    let insp = inspect_type(path);
    let block = matches!(&insp, Ok(i) if i.kind == TargetKind::BlockDevice);
    // First: a mistyped device name is "no such device", not a missing parent.
    place::check_target_path(path, block)?;
    let insp = insp?;
    if !block {
        place::refuse_kernel_fs(path)?;
    }
    Ok(insp)
}

fn inspect_type(path: &Path) -> Result<Inspection> {
    match crate::io::sys::fs::metadata(path) {
        Ok(meta) => {
            let ft = meta.file_type();
            if ft.is_dir() {
                Ok(Inspection {
                    kind: TargetKind::Directory,
                    path: path.into(),
                    existing_size: None,
                })
            } else if ft.is_file() && meta.len() == 0 {
                Err(VbError::target(format!(
                    "target {} is an empty file: there is nothing in it to read or write in \
                     place; name a directory (volbench makes and fills its own file set there), \
                     or write the file to the size you want first",
                    crate::units::bounds::one_line(&path.display().to_string())
                )))
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
pub(crate) struct Prepared {
    pub(crate) kind: TargetKind,
    pub(crate) paths: Vec<PathBuf>,
    pub(crate) layout: Layout,
    /// Offset and size alignment direct I/O needs on this target.
    pub(crate) align: u64,
    pub(crate) writable: bool,
    /// Something the user should know (reused file set, sparse file...).
    pub(crate) notes: Vec<String>,
    /// How each worker reopens each file, checking it is still the file
    /// that was prepared.
    files: Option<FileRef>,
    /// The run's hold on the target; released when the last clone drops.
    _lock: Option<Arc<dyn Held>>,
    /// A metadata run's tree, where its workers open it.
    pub(crate) tree: Option<Arc<dyn TreeRoot>>,
    /// The set was (re)filled by this prepare: it holds the fill and nothing else.
    pub(crate) filled_now: bool,
    /// The data runs on this target write and check (set by the executor).
    pub(crate) data: Option<Arc<crate::io::verify::DataPlan>>,
    /// The fill of a file set: what it wrote, or that it was reused.
    pub(crate) fill: Option<crate::result::fill::FillResult>,
    /// Which set (or file, or device) this is: what a journal must name.
    pub(crate) identity: Option<SetIdentity>,
    /// A file set's identity before this prepare refilled it: a journal of
    /// it may start over with the new fill; one of any other set may not.
    pub(crate) identity_before: Option<SetIdentity>,
}

impl Prepared {
    /// A directory target whose workers open nothing up front: a metadata
    /// run's tree, where each operation opens (relative to its directory,
    /// without following links) only the file it works on.
    /// A metadata tree, held under its `lock` for the whole run.
    pub(crate) fn tree(
        layout: Layout,
        notes: Vec<String>,
        lock: Box<dyn Held>,
        root: Arc<dyn TreeRoot>,
    ) -> Self {
        Self {
            tree: Some(root),
            kind: TargetKind::Directory,
            paths: Vec::new(),
            layout,
            align: 1,
            writable: true,
            notes,
            files: None,
            _lock: Some(Arc::from(lock)),
            filled_now: false,
            data: None,
            fill: None,
            identity: None,
            identity_before: None,
        }
    }

    /// A directory target for an engine that touches no file (`diskless`):
    /// nothing is created, filled or locked, so a run of a thousand null
    /// agents costs no storage; `layout` is only the offsets' range.
    pub(crate) fn diskless(layout: Layout) -> Self {
        Self {
            tree: None,
            kind: TargetKind::Directory,
            paths: Vec::new(),
            layout,
            align: 1,
            writable: false,
            notes: Vec::new(),
            files: None,
            _lock: None,
            filled_now: false,
            data: None,
            fill: None,
            identity: None,
            identity_before: None,
        }
    }
}

/// The files of a prepared target and the identity each must still have.
#[derive(Debug, Clone)]
enum FileRef {
    /// Volbench's set: each file reopened by name relative to the set's
    /// directory, on its back end, and proven the file prepared.
    InSet {
        dir: Arc<dyn Dir>,
        names: Vec<(String, u64)>,
    },
    /// The file or device the user named.
    Named {
        path: PathBuf,
        dev: u64,
        ino: u64,
        rdev: u64,
    },
}

impl FileRef {
    fn open(&self, how: &IoOpen) -> Result<Files> {
        match self {
            FileRef::InSet { dir, names } => dir.open_files(names, how),
            FileRef::Named {
                path,
                dev,
                ino,
                rdev,
            } => {
                let access = if how.write {
                    Access::ReadWrite
                } else {
                    Access::Read
                };
                let extra = crate::io::backend::local::io_flags(how);
                crate::io::gate::open_named(path, access, extra, (*dev, *ino, *rdev))
                    .map(|fd| Files::Fds(vec![fd]))
            }
        }
    }
}

/// Options for `prepare` that come from the spec.
#[derive(Clone, Copy)]
pub(crate) struct PrepareOptions<'a> {
    pub(crate) size: u64,
    pub(crate) files: u32,
    pub(crate) direct: bool,
    pub(crate) allow_overwrite: bool,
    pub(crate) needs_write: bool,
    pub(crate) progress: &'a dyn Progress,
    /// Stop asked for (Ctrl-C) while filling.
    pub(crate) stop: &'a std::sync::atomic::AtomicBool,
    /// The data the set is filled with (and must have been, to be reused).
    pub(crate) data: &'a crate::spec::data::DataSpec,
    /// Bytes per fill write.
    pub(crate) fill_bs: u64,
    /// Threads of the fill, each one file at a time.
    pub(crate) fill_threads: u32,
}

/// Makes the target ready: creates and fills a file set, or checks that an
/// existing file or device may be used as asked. The target stays locked
/// against other volbench runs while the returned `Prepared` lives.
pub(crate) fn prepare(
    insp: &Inspection,
    storage: Storage,
    opts: &PrepareOptions,
) -> Result<Prepared> {
    match insp.kind {
        TargetKind::Directory => {
            // Checked when planning; the file system may have changed since.
            if storage == Storage::Local {
                place::refuse_kernel_fs(&insp.path)?;
            }
            fileset::prepare(&insp.path, storage, opts)
        }
        TargetKind::File => prepare_existing(insp, opts, false),
        TargetKind::BlockDevice => prepare_existing(insp, opts, true),
    }
}

/// Prepares a file set in subdirectory `name` of the directory target
/// `parent` (one set per file count), never following a link at `name`.
pub(crate) fn prepare_subset(
    parent: &Path,
    storage: Storage,
    name: &str,
    opts: &PrepareOptions,
) -> Result<Prepared> {
    if storage == Storage::Local {
        place::refuse_kernel_fs(parent)?;
    }
    fileset::prepare_sub(parent, storage, name, opts)
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
    if !device && opts.needs_write {
        if let Ok(meta) = crate::io::sys::fs::metadata(path) {
            device::refuse_if_backing_in_use(path, meta.dev(), meta.ino())?;
        }
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
    let lock = crate::io::backend::local::lock::lock_path(path)?;
    let meta = crate::io::sys::fs::metadata(path)
        .map_err(|e| VbError::target(format!("cannot inspect {}: {e}", path.display())))?;
    if meta.file_type().is_block_device() != device || (!device && !meta.is_file()) {
        return Err(VbError::refused(format!(
            "refusing to use {}: it changed type after volbench inspected it",
            path.display()
        )));
    }
    let file = FileRef::Named {
        path: path.clone(),
        dev: meta.dev(),
        ino: meta.ino(),
        rdev: meta.rdev(),
    };
    let align = if opts.direct {
        let how = IoOpen {
            write: false,
            direct: true,
            sync: crate::spec::WriteSync::None,
            overlapped: false,
            depth: 1,
            max_io: 4096,
        };
        match file.open(&how)? {
            Files::Fds(fds) => fds.first().map_or(4096, |fd| {
                crate::io::backend::local::probe_align_fd(fd, device)
            }),
            Files::OnDemand(_) | Files::Own(_) => 1,
        }
    } else {
        1
    };
    let file_size = opts.size / align.max(4096) * align.max(4096);
    let mut notes = Vec::new();
    if !device && meta.blocks() * 512 < meta.len() {
        notes.push(format!(
            "{} is sparse: reads of its holes do not touch the storage",
            path.display()
        ));
    }
    Ok(Prepared {
        tree: None,
        kind: insp.kind,
        paths: vec![path.clone()],
        layout: Layout {
            nfiles: 1,
            file_size,
        },
        align,
        writable: opts.needs_write,
        notes,
        files: Some(file),
        _lock: Some(Arc::new(lock) as Arc<dyn Held>),
        filled_now: false,
        data: None,
        fill: None,
        identity: Some(SetIdentity::named(
            device,
            meta.dev(),
            named_ino(&meta, device),
        )),
        identity_before: None,
    })
}

/// What names a file or device target for a journal: a file's inode, a
/// device's number (its node's inode in /dev may change at every boot).
fn named_ino(meta: &crate::io::sys::fs::Metadata, device: bool) -> u64 {
    if device { meta.rdev() } else { meta.ino() }
}

pub(crate) use crate::io::gate::setdir::open_error;

/// Opens the target's files for one worker, read-only unless the workload
/// writes, on the target's back end. Each worker opens its own (local
/// descriptors, or a back end's handles and connections) so threads never
/// share a file object's reference count; each open checks the file is
/// still the one prepared. `overlapped`: the engine keeps I/Os in flight
/// in the kernel (`Caps::kernel_async`); Windows then opens the handles
/// for overlapped I/O, which the synchronous calls cannot use. `depth`
/// and `max_io`: the I/Os a worker keeps in flight and the largest, which
/// a back end with its own engine sizes its client for.
pub(crate) fn open_files(
    prep: &Prepared,
    direct: bool,
    sync: crate::spec::WriteSync,
    overlapped: bool,
    (depth, max_io): (u32, u64),
) -> Result<Files> {
    let how = IoOpen {
        write: prep.writable,
        direct,
        sync,
        overlapped,
        depth,
        max_io,
    };
    match &prep.files {
        Some(f) => f.open(&how),
        None => Ok(Files::none()),
    }
}

/// The set's files for one worker, opened one at a time as its I/Os need
/// them (`engine::on_demand`), each as `open_files` opens it: by name in
/// the set's directory, proven the file prepared. None for a file or
/// device the user named (one descriptor). The plan asks for it only on
/// local storage: a back end with its own engine holds handles of its
/// server's, not this process's descriptors.
pub(crate) fn opener(
    prep: &Prepared,
    direct: bool,
    sync: crate::spec::WriteSync,
    overlapped: bool,
) -> Option<(u32, crate::io::engine::on_demand::Opener)> {
    let how = IoOpen {
        write: prep.writable,
        direct,
        sync,
        overlapped,
        depth: 1,
        max_io: 4096,
    };
    let Some(FileRef::InSet { dir, names }) = &prep.files else {
        return None;
    };
    let (dir, names) = (dir.clone(), names.clone());
    let n = names.len() as u32;
    Some((
        n,
        Box::new(move |i| {
            let one = names
                .get(i as usize..=i as usize)
                .ok_or_else(|| VbError::run(format!("file #{i} is not in the set of {n}")))?;
            match dir.open_files(one, &how)? {
                Files::Fds(mut fds) => fds
                    .pop()
                    .ok_or_else(|| VbError::run(format!("file #{i} of the set did not open"))),
                _ => Err(VbError::run(format!(
                    "{} has no local descriptors to open on demand",
                    dir.path().display()
                ))),
            }
        }),
    ))
}

/// Checks whether a directory's file system accepts O_DIRECT, with a
/// scratch file created (never reused) in it and removed at once.
pub(crate) fn probe_dir_direct(dir: &Path) -> Result<()> {
    let dir = setdir::SetDir::open_or_create(dir)?;
    let name = format!(".volbench-direct-probe.{}", std::process::id());
    // O_DIRECT after the create: a create that then fails on O_DIRECT
    // would leave the file behind unknown.
    let (fd, st) = dir.create_new(&name, Access::Write)?;
    let direct = crate::io::sys::fs::fcntl_getfl(&fd)
        .and_then(|fl| crate::io::sys::fs::fcntl_setfl(&fd, fl | OFlags::DIRECT));
    dir.remove_if_ours(&name, st.st_ino);
    direct.map_err(|e| open_error(dir.path(), e, true))
}
