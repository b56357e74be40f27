//! The storage back-end seam under the engines, after fio's
//! `ioengine_ops` and its `FIO_DISKLESSIO`-style flags: what a target's
//! storage must do for volbench to make, prove, fill, run on and remove
//! its file sets, as a few traits, and what it can do (`Caps`), which the
//! rest of the program asks instead of naming a back end.
//!
//! - `Dir`: one directory of a target: look at a name without following
//!   it, create a file exclusively, open one for reading, open an existing
//!   one for writing only once a proof accepts it (`gate::owner`: regular,
//!   one link, ours), remove one proven ours, the marker's reads and
//!   whole-file replacement, a subdirectory, the run's lock, and a worker's
//!   open files of a set (`Files`).
//! - `SetFile`: one file of a set, opened: its attributes, reads and writes
//!   at an offset (the fill), length, and what direct I/O needs.
//! - `Files`: what a worker's engine runs on: local descriptors for the
//!   kernel engines (psync, io_uring, overlapped), or the back end's own
//!   engine over its handles and connections (queue, then poll completions).
//!
//! `local/` is the default and today's behaviour (directory descriptors,
//! `gate::setdir`, O_NOFOLLOW, the marker, the per-file proof). A back end
//! with no descriptors (a user-space NFS or SMB client) names files by
//! opaque handles, proves them from the server's attributes (file id,
//! owner, link count, times, as `Attr`), creates exclusively and renames
//! without replacing, and is `io/backend/NAME/` plus its arm in `open`, its
//! engine row (`spec::engine`, `Caps::storage`) and its URL form.

pub(crate) mod local;
#[cfg(test)]
pub(crate) mod mem;
#[cfg(unix)]
pub(crate) mod nfs;
#[cfg(unix)]
pub(crate) mod smb;

use std::ffi::CStr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Result, VbError};
use crate::io::sys::fd::OwnedFd;
use crate::io::sys::io::Errno;

pub(crate) use crate::io::gate::owner::{Attr, Identity, Kind};
pub(crate) use crate::io::gate::setdir::Access;
pub(crate) use crate::spec::Storage;
use crate::spec::meta::MetaOp;

/// What a back end can do. The plan's refusals read these (`refusals`),
/// never a back end's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Caps {
    /// Files are local descriptors: the kernel engines run on them, and
    /// read-ahead advice, O_DIRECT probes and the page cache apply.
    pub(crate) fds: bool,
    /// A target may be an existing file or a block device, not only a
    /// directory volbench makes its set in.
    pub(crate) named_targets: bool,
    /// Writes can be made durable on request (fsync=N, end_fsync, a
    /// replayed trace's flushes).
    pub(crate) flush: bool,
    /// Ranges can be deallocated (a replayed trace's discards).
    pub(crate) discard: bool,
    /// The client's caches can be dropped between metadata phases
    /// (`--drop-caches`).
    pub(crate) drop_caches: bool,
    /// Trees of small files for metadata runs.
    pub(crate) trees: bool,
}

/// The local file system: everything.
pub(crate) const LOCAL: Caps = Caps {
    fds: true,
    named_targets: true,
    flush: true,
    discard: true,
    drop_caches: true,
    trees: true,
};

/// A proof that a file may be written or removed: given what the back end
/// says of it (by handle, after the open), why not, or Ok.
pub(crate) type Proof<'a> = &'a dyn Fn(&Attr) -> std::result::Result<(), &'static str>;

/// What sits at a name in a directory, looked at without following it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Entry {
    Missing,
    Regular(Attr),
    /// Anything else, described for the refusal ("a symbolic link").
    Other(&'static str),
}

/// Held while a run uses a set; released when dropped (and by the storage
/// when the process dies).
pub(crate) trait Held: Send + Sync + std::fmt::Debug {}

/// One directory of a target, on whatever storage holds it. Every name is
/// one path component, looked up relative to this directory, never through
/// a link.
pub(crate) trait Dir: Send + Sync + std::fmt::Debug {
    /// The directory as the user named it (a path, or a URL), for messages.
    fn path(&self) -> &Path;
    fn path_of(&self, name: &str) -> PathBuf {
        self.path().join(name)
    }
    /// The directory's own attributes: its identity (`dev`, `id`).
    fn attr(&self) -> Result<Attr>;
    /// The uid this process has on the storage (what it creates is owned
    /// by it): the owner every proof expects.
    fn uid(&self) -> u32;
    fn entry(&self, name: &str) -> Result<Entry>;
    /// Creates `name`, which must not exist (O_EXCL; NFS CREATE GUARDED or
    /// EXCLUSIVE; SMB FILE_CREATE), as a regular file open with `access`.
    fn create_new(&self, name: &str, access: Access) -> Result<(Box<dyn SetFile>, Attr)>;
    /// Opens the existing regular file `name` for reading.
    fn open_read(&self, name: &str) -> Result<(Box<dyn SetFile>, Attr)>;
    /// Opens the existing regular file `name` for writing once `proof`
    /// accepts it (as found at the name, and again by handle once open):
    /// no byte is written before.
    fn open_ours(
        &self,
        name: &str,
        access: Access,
        proof: Proof<'_>,
    ) -> Result<(Box<dyn SetFile>, Attr)>;
    /// Removes `name` only if it is still the regular file `id` (one this
    /// set made); anything else there is left alone.
    fn remove_if_ours(&self, name: &str, id: u64);
    /// A regular file of at most `cap` bytes (a marker); None if missing.
    fn read_capped(&self, name: &str, cap: usize) -> Result<Option<Vec<u8>>>;
    /// Replaces `name` (missing, or a regular file) with `bytes`, written
    /// under a temporary name first so no reader sees half of it. Returns
    /// the new file's id.
    fn replace(&self, name: &str, bytes: &[u8]) -> Result<u64>;
    /// Rewrites in place the file `id` this set made, needing no more room
    /// than it has (the disk may be full at the end of a fill).
    fn rewrite_ours(&self, name: &str, id: u64, bytes: &[u8]) -> Result<()>;
    /// Bytes an unprivileged writer may still use, if the storage says.
    fn free_bytes(&self) -> Option<u64>;
    /// The subdirectory `name`, made if missing, never through a link.
    fn open_sub(&self, name: &str) -> Result<Arc<dyn Dir>>;
    /// One run at a time on this set: held until dropped.
    fn lock(&self) -> Result<Box<dyn Held>>;
    /// A worker's files of the set (`(name, id)` each, proven to be those
    /// files) for its engine, opened as `how` says.
    fn open_files(&self, files: &[(String, u64)], how: &IoOpen) -> Result<Files>;
}

/// How a worker opens its files.
#[derive(Debug, Clone, Copy)]
pub(crate) struct IoOpen {
    pub(crate) write: bool,
    pub(crate) direct: bool,
    pub(crate) sync: crate::spec::WriteSync,
    /// The engine keeps I/Os in flight in the kernel (`Caps::kernel_async`):
    /// Windows opens its handles for overlapped I/O.
    #[cfg_attr(not(windows), allow(dead_code))]
    pub(crate) overlapped: bool,
    /// I/Os the worker keeps in flight, and the largest: what a back end
    /// with its own engine sizes its client for.
    #[cfg_attr(not(unix), allow(dead_code))]
    pub(crate) depth: u32,
    #[cfg_attr(not(unix), allow(dead_code))]
    pub(crate) max_io: u64,
}

/// One file of a set, open.
pub(crate) trait SetFile: Send + Sync {
    fn read_at(&self, buf: &mut [u8], off: u64) -> std::result::Result<usize, Errno>;
    fn write_at(&self, buf: &[u8], off: u64) -> std::result::Result<usize, Errno>;
    fn truncate(&self, len: u64) -> std::result::Result<(), Errno>;
    /// Turns on direct I/O (a back end with no client cache always is).
    fn set_direct(&self) -> std::result::Result<(), Errno>;
    /// The offset and length alignment direct I/O needs.
    fn dio_align(&self) -> u64;
    /// After a fill: the data on the storage and out of any client cache,
    /// so the first reads are not hits later ones will not get.
    fn settle(&self) -> std::result::Result<(), Errno>;
}

/// What a metadata operation needs besides the directory and the name.
pub(crate) struct MetaIo<'a> {
    /// Data to write (at least the file's size) and room to read into.
    pub(crate) buf: &'a mut [u8],
    /// The file's size by the tree's arithmetic.
    pub(crate) size: usize,
    /// Use direct I/O for this file's data (its size is aligned).
    pub(crate) direct: bool,
    /// Scratch for reading a directory.
    pub(crate) dents: &'a mut [std::mem::MaybeUninit<u8>],
    /// The tree's proven identity: what each file is checked against
    /// before it is overwritten, renamed, re-timed or removed.
    pub(crate) owner: &'a Identity,
}

/// Why a metadata operation did not happen.
#[derive(Debug)]
pub(crate) enum Fail {
    Sys(Errno),
    /// The file at the name is not volbench's (`gate::owner`): left untouched.
    NotOurs(&'static str),
}

impl From<Errno> for Fail {
    fn from(e: Errno) -> Self {
        Fail::Sys(e)
    }
}

/// One directory of a metadata tree, open: what the metadata worker does
/// to the names in it, each operation keeping the gate's rules.
pub(crate) trait TreeDir: Send {
    /// A directory below this one by a relative path (`d3/d7`; empty: this
    /// one), following no link on the way.
    fn open_below(&self, rel: &CStr) -> std::result::Result<Box<dyn TreeDir>, Errno>;
    /// Whether anything sits at `name` (not following it).
    fn exists(&self, name: &CStr) -> bool;
    /// One operation on `name` (`alt` is its rename partner; for mkdir,
    /// readdir and rmdir this is the parent and `name` the leaf): the
    /// bytes it moved.
    fn op(
        &self,
        op: MetaOp,
        name: &CStr,
        alt: &CStr,
        io: &mut MetaIo<'_>,
    ) -> std::result::Result<u64, Fail>;
    /// Whether `name` is the tree's own (`id`) file of `size` bytes, kept by
    /// `--keep-complete`; a back end that cannot tell says no (made again).
    fn complete(&self, _name: &CStr, _size: u64, _id: &Identity) -> bool {
        false
    }
    /// Removes `name` if `id` proves it the tree's own; Err(None) when
    /// nothing is there, Err(Some(why)) when it is not ours (left).
    fn remove_ours(
        &self,
        name: &CStr,
        id: &Identity,
    ) -> std::result::Result<(), Option<&'static str>>;
    /// Every entry of the directory `rel` below this one (empty: this
    /// one), "." and ".." left out, with its attributes as the storage
    /// reports them, to `each`; at most `MAX_LIST` of them. What a far
    /// tree's set-up and `clean` read (`io::meta::far`); a local tree
    /// reads its directories by descriptor (`io::meta::scan_dir`).
    fn list(
        &self,
        _rel: &CStr,
        _each: &mut dyn FnMut(&[u8], &Attr),
    ) -> std::result::Result<(), Errno> {
        Err(Errno::NOSYS)
    }
    /// The worker's measured phase began: a protocol client's figures
    /// start over (warm-up and set-up calls are not the run's).
    fn measure_started(&self) {}
    /// What the back end's protocol client saw since `measure_started`
    /// (`result::protocol`); None for a local tree.
    fn protocol(&self) -> Option<crate::result::protocol::ProtoSeen> {
        None
    }
    /// Whether the back end's server is lost (not reached again within its
    /// deadline): read once an operation failed (`Engine::server_lost`).
    fn server_lost(&self) -> bool {
        false
    }
}

/// The most entries one `TreeDir::list` reads: a tree's directory holds
/// at most its files (or subdirectories) and the tree's own few names.
#[cfg_attr(not(unix), allow(dead_code))]
pub(crate) const MAX_LIST: u64 = crate::units::bounds::MAX_TREE_FILES + 16;

/// A tree on a back end that is not local, before its marker proves it
/// (`io::meta::far`, the same rules for every such back end): the root as
/// a `Dir` (its attributes, the uid, the marker's reads, creation and
/// removal, the run's lock) and the root's operations on a connection of
/// the caller's own (each worker opens one).
pub(crate) trait FarTree: Send + Sync + std::fmt::Debug {
    fn dir(&self) -> Arc<dyn Dir>;
    fn open(&self) -> Result<Box<dyn TreeDir>>;
}

/// A prepared tree: each metadata worker opens its root here.
pub(crate) trait TreeRoot: Send + Sync + std::fmt::Debug {
    /// The root and its proven identity (the tree marker's).
    fn open(&self) -> std::result::Result<(Box<dyn TreeDir>, Identity), String>;
}

/// What a worker's engine runs on.
pub(crate) enum Files {
    /// Local descriptors, for the kernel engines.
    Fds(Vec<OwnedFd>),
    /// Local descriptors opened as I/Os need them, a bounded number at a
    /// time: a set with more files than a thread may hold open.
    OnDemand(crate::io::engine::on_demand::OnDemand),
    /// A back end's own engine over its handles and connections: what a
    /// back end that is not local builds (the test double today, NFS and
    /// SMB next).
    #[cfg_attr(not(any(test, unix)), allow(dead_code))]
    Own(Box<dyn crate::io::engine::Engine + Send>),
}

impl Files {
    /// The local descriptors, if these are some (advice, syncs, drops).
    pub(crate) fn fds(&self) -> &[OwnedFd] {
        match self {
            Files::Fds(f) => f,
            Files::OnDemand(_) | Files::Own(_) => &[],
        }
    }

    pub(crate) fn none() -> Files {
        Files::Fds(Vec::new())
    }
}

/// A worker's engine over its files: a kernel engine (`kind`) over local
/// descriptors, or the engine the back end built over its own handles.
pub(crate) fn engine(
    kind: crate::spec::EngineKind,
    files: Files,
    depth: u32,
    buffers: &[(*mut u8, usize)],
    submit_each: bool,
) -> std::io::Result<crate::io::engine::AnyEngine> {
    match files {
        Files::Own(e) => Ok(crate::io::engine::AnyEngine::Own(e)),
        Files::Fds(fds) => {
            let fds = crate::io::engine::Fds::All(fds);
            crate::io::engine::build(kind, fds, depth, buffers, submit_each)
        }
        Files::OnDemand(c) => {
            let fds = crate::io::engine::Fds::OnDemand(c);
            crate::io::engine::build(kind, fds, depth, buffers, submit_each)
        }
    }
}

/// Which back end a directory target's storage is reached through: what
/// the engine row says it works on (`spec::Storage`; an `nfs://` target's
/// runs use the `nfs` row, `engine_choice`), the local file system by
/// default.
pub(crate) fn storage_for(_target: &Path, row: &crate::spec::EngineRow) -> Storage {
    row.caps.storage
}

/// Whether a target names storage by URL (`nfs://...`) rather than a path
/// of this system.
pub(crate) fn is_url(target: &Path) -> bool {
    target.to_str().is_some_and(|t| {
        t.split_once("://").is_some_and(|(scheme, _)| {
            !scheme.is_empty() && scheme.chars().all(|c| c.is_ascii_alphanumeric())
        })
    })
}

/// The back end a URL names by its scheme, and the engine its runs use.
fn scheme_of(target: &Path) -> Option<(Storage, crate::spec::EngineKind)> {
    use crate::spec::EngineKind;
    let t = target.to_str()?;
    if t.starts_with("nfs://") {
        Some((Storage::Nfs, EngineKind::Nfs))
    } else if t.starts_with("smb://") {
        Some((Storage::Smb, EngineKind::Smb))
    } else {
        None
    }
}

/// The back end a URL target is reached through (`nfs://`, `smb://`).
pub(crate) fn url_storage(target: &Path) -> Option<Storage> {
    scheme_of(target).map(|(s, _)| s)
}

/// A target as messages name what is under it: a URL without its query
/// (its options), a path as it is.
pub(crate) fn shown(target: &Path) -> PathBuf {
    #[cfg(unix)]
    if url_storage(target) == Some(Storage::Nfs) {
        if let Ok(u) = nfs::url_of(target) {
            return PathBuf::from(u.to_string());
        }
    }
    target.to_path_buf()
}

/// Checks a URL target before anything is opened (its URL parses, this
/// build has its back end): one line, before any I/O.
pub(crate) fn check_url(target: &Path) -> Result<()> {
    let text = target.to_string_lossy();
    match scheme_of(target) {
        #[cfg(unix)]
        Some((Storage::Nfs, _)) => nfs::url_of(target).map(|_| ()),
        #[cfg(unix)]
        Some((Storage::Smb, _)) => smb::url_of(target).map(|_| ()),
        Some((_, k)) => Err(VbError::input(format!(
            "a {k}:// target needs the Linux build (its client is Unix only for now)"
        ))),
        None => {
            let scheme = text.split("://").next().unwrap_or_default();
            Err(VbError::input(format!(
                "--target {}: volbench reaches storage by nfs:// and smb:// URLs or by paths \
                 of this system, not {scheme}://",
                crate::units::bounds::one_line(&text)
            )))
        }
    }
}

/// The engine runs on `target` use: a URL target's runs go through its
/// back end's own engine (`nfs`, `smb`; a metadata job's too, whose engine
/// names the local one, where the back end has trees), and any other
/// engine that touches files is refused for it, as those engines are for a
/// local path.
pub(crate) fn engine_choice(
    target: &Path,
    choice: crate::spec::EngineChoice,
    metadata: bool,
) -> Result<crate::spec::EngineChoice> {
    use crate::spec::EngineChoice;
    let own = scheme_of(target);
    let trees = own.is_some_and(|(storage, _)| caps(storage).trees);
    let own = own.map(|(_, k)| k);
    match (own, choice.kind()) {
        (Some(k), _) if metadata && trees => Ok(EngineChoice::Only(k)),
        (Some(k), _) if metadata => Err(VbError::input(format!(
            "a metadata run (--ops) on an {k}:// target is not offered yet; run it on a mounted path"
        ))),
        (Some(k), None) => Ok(EngineChoice::Only(k)),
        (Some(own), Some(k)) if k != own && !k.caps().diskless => Err(VbError::input(format!(
            "--engine {k} works on {}; an {own}:// target runs on the {own} engine \
             (leave --engine out, or give --engine {own})",
            if k.caps().storage == Storage::Local {
                "local files".to_string()
            } else {
                format!("{k}:// targets")
            }
        ))),
        (None, Some(k)) if k.caps().storage != Storage::Local => Err(VbError::input(format!(
            "--engine {k} needs an {k}:// target ({k}://SERVER/{}/DIR), not {}",
            if k.caps().storage == Storage::Nfs {
                "EXPORT"
            } else {
                "SHARE"
            },
            target.display()
        ))),
        _ => Ok(choice),
    }
}

/// A back end's capabilities.
pub(crate) fn caps(storage: Storage) -> Caps {
    match storage {
        Storage::Local => LOCAL,
        // A user-space client: a directory of files and trees of them, no
        // descriptors, no syncs or discards yet, and no client cache to
        // drop.
        Storage::Nfs => Caps {
            fds: false,
            named_targets: false,
            flush: false,
            discard: false,
            drop_caches: false,
            trees: true,
        },
        // The same.
        Storage::Smb => Caps {
            fds: false,
            named_targets: false,
            flush: false,
            discard: false,
            drop_caches: false,
            trees: true,
        },
        // What a user-space network client offers first: files and trees,
        // no descriptors, no syncs or discards yet.
        #[cfg(test)]
        Storage::Memory => Caps {
            fds: false,
            named_targets: false,
            flush: false,
            discard: false,
            drop_caches: false,
            trees: true,
        },
    }
}

/// Opens the directory target `path` on `storage`, made (one level) if
/// missing when `create`.
pub(crate) fn open_dir(storage: Storage, path: &Path, create: bool) -> Result<Arc<dyn Dir>> {
    match storage {
        Storage::Local => local::open(path, create),
        #[cfg(unix)]
        Storage::Nfs => nfs::open(path, create),
        #[cfg(unix)]
        Storage::Smb => smb::open(path, create),
        #[cfg(not(unix))]
        Storage::Nfs | Storage::Smb => {
            let _ = create;
            Err(VbError::input(format!(
                "{}: a URL target needs the Linux build",
                path.display()
            )))
        }
        #[cfg(test)]
        Storage::Memory => {
            let _ = create;
            mem::open(path)
        }
    }
}

/// The metadata tree at `path` on a back end that is not local (the local
/// tree is `io::meta::prepare`'s, on directory descriptors), its
/// directory made (one level) if missing when `create`.
pub(crate) fn open_tree(storage: Storage, path: &Path, create: bool) -> Result<Arc<dyn FarTree>> {
    match storage {
        Storage::Local => Err(VbError::run(
            "the local tree is io::meta::prepare's, on directory descriptors",
        )),
        #[cfg(unix)]
        Storage::Nfs => nfs::tree::open(path, create),
        #[cfg(unix)]
        Storage::Smb => smb::tree::open(path, create),
        #[cfg(not(unix))]
        Storage::Nfs | Storage::Smb => {
            let _ = create;
            Err(VbError::input(format!(
                "{}: a URL target needs the Linux build",
                path.display()
            )))
        }
        #[cfg(test)]
        Storage::Memory => {
            let _ = create;
            mem::tree(path)
        }
    }
}

/// What a job asks of a back end that it cannot do, refused before any
/// I/O with one line: the one place such refusals live.
pub(crate) fn refusals(caps: Caps, ask: &Ask) -> Result<()> {
    let no = |what: &str| {
        Err(VbError::input(format!(
            "{what} needs {}, which this target's storage does not offer",
            if what.contains("trace") {
                "flushes and discards"
            } else {
                "it"
            }
        )))
    };
    if ask.named_target && !caps.named_targets {
        return Err(VbError::input(
            "a file or block device target needs a local file system; give a directory".to_string(),
        ));
    }
    if ask.flush && !caps.flush {
        return no("syncing writes (--fsync, --end-fsync)");
    }
    if ask.trace_barriers && !(caps.flush && caps.discard) {
        return no("a replayed trace with flushes or discards");
    }
    if ask.drop_caches && !caps.drop_caches {
        return no("--drop-caches");
    }
    if ask.tree && !caps.trees {
        return no("a metadata run (--ops)");
    }
    Ok(())
}

/// What a job asks of its target's storage, for `refusals`.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Ask {
    pub(crate) named_target: bool,
    pub(crate) flush: bool,
    pub(crate) trace_barriers: bool,
    pub(crate) drop_caches: bool,
    pub(crate) tree: bool,
}

#[cfg(test)]
mod tests;
