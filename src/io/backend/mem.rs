//! A test double of a back end that is not local: files in memory, named
//! by ids (as a server names them by handles), no descriptors, its own
//! engine, and a count of everything asked of it. It proves the seam
//! carries a whole run (the file set, its marker and lock, the fill, the
//! workers' I/O) with nothing local touched. Tests only: not a feature.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use std::ffi::CStr;

use super::{
    Access, Attr, Dir, Entry, Fail, FarTree, Files, Held, Identity, IoOpen, Kind, MetaIo, Proof,
    SetFile, TreeDir,
};
use crate::error::{Result, VbError};
use crate::io::engine::{Completion, Engine};
use crate::io::sys::io::Errno;
use crate::io::workload::IoOp;
use crate::spec::meta::{ALL_OPS, MetaOp};

/// What the back end was asked to do.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Counts {
    pub(crate) creates: u64,
    pub(crate) write_opens: u64,
    pub(crate) removes: u64,
    pub(crate) locks: u64,
    /// Bytes written through `SetFile` (the fill, the marker).
    pub(crate) file_bytes: u64,
    /// The engine's I/Os and bytes.
    pub(crate) reads: u64,
    pub(crate) writes: u64,
    pub(crate) read_bytes: u64,
    pub(crate) write_bytes: u64,
    /// Metadata operations done, by `MetaOp::index`.
    pub(crate) meta: [u64; ALL_OPS.len()],
    /// Files and directories in the tree now.
    pub(crate) tree_files: u64,
    pub(crate) tree_dirs: u64,
}

#[derive(Debug)]
struct Node {
    kind: Kind,
    data: Vec<u8>,
    links: u64,
}

#[derive(Debug, Default)]
struct State {
    /// (directory id, name) -> id.
    names: HashMap<(u64, String), u64>,
    nodes: HashMap<u64, Node>,
    next: u64,
    locked: HashMap<u64, bool>,
    counts: Counts,
}

/// One file system in memory, found again by the path it was opened at.
#[derive(Debug, Default)]
pub(crate) struct MemFs {
    state: Mutex<State>,
}

fn filesystems() -> &'static Mutex<HashMap<PathBuf, Arc<MemFs>>> {
    static ALL: OnceLock<Mutex<HashMap<PathBuf, Arc<MemFs>>>> = OnceLock::new();
    ALL.get_or_init(Default::default)
}

/// What the file system at `path` was asked to do so far.
pub(crate) fn counts(path: &Path) -> Counts {
    let all = filesystems().lock().unwrap();
    all.get(path)
        .map(|fs| fs.state.lock().unwrap().counts.clone())
        .unwrap_or_default()
}

const UID: u32 = 4242;
const DEV: u64 = 77;

impl MemFs {
    fn attr(&self, st: &State, id: u64) -> Option<Attr> {
        st.nodes.get(&id).map(|n| Attr {
            kind: n.kind,
            id,
            dev: DEV,
            size: n.data.len() as u64,
            allocated: n.data.len() as u64,
            links: n.links,
            uid: UID,
            mode: 0o644,
            born: (0, 0),
            birth: None,
        })
    }

    fn make(&self, st: &mut State, dir: u64, name: &str, kind: Kind) -> u64 {
        st.next += 1;
        let id = st.next;
        st.nodes.insert(
            id,
            Node {
                kind,
                data: Vec::new(),
                links: 1,
            },
        );
        st.names.insert((dir, name.to_string()), id);
        id
    }
}

/// The directory target `path` in memory, made (with its file system) on
/// first use.
pub(crate) fn open(path: &Path) -> Result<Arc<dyn Dir>> {
    let fs = filesystems()
        .lock()
        .unwrap()
        .entry(path.to_path_buf())
        .or_default()
        .clone();
    let id = {
        let mut st = fs.state.lock().unwrap();
        match st.names.get(&(0, String::new())) {
            Some(&id) => id,
            None => fs.make(&mut st, 0, "", Kind::Directory),
        }
    };
    Ok(Arc::new(MemDir {
        fs,
        id,
        path: path.to_path_buf(),
    }))
}

#[derive(Debug)]
struct MemDir {
    fs: Arc<MemFs>,
    id: u64,
    path: PathBuf,
}

#[derive(Debug)]
struct MemLock {
    fs: Arc<MemFs>,
    dir: u64,
}

impl Held for MemLock {}

impl Drop for MemLock {
    fn drop(&mut self) {
        self.fs.state.lock().unwrap().locked.insert(self.dir, false);
    }
}

struct MemFile {
    fs: Arc<MemFs>,
    id: u64,
}

fn refused(path: &Path, why: &str) -> VbError {
    VbError::refused(format!("refusing to write {}: {why}", path.display()))
}

impl MemDir {
    fn lookup(&self, name: &str) -> Option<u64> {
        let st = self.fs.state.lock().unwrap();
        st.names.get(&(self.id, name.to_string())).copied()
    }

    fn file(&self, id: u64) -> Box<dyn SetFile> {
        Box::new(MemFile {
            fs: self.fs.clone(),
            id,
        })
    }
}

impl Dir for MemDir {
    fn path(&self) -> &Path {
        &self.path
    }

    fn attr(&self) -> Result<Attr> {
        let st = self.fs.state.lock().unwrap();
        self.fs
            .attr(&st, self.id)
            .ok_or_else(|| VbError::target("the directory is gone"))
    }

    fn uid(&self) -> u32 {
        UID
    }

    fn entry(&self, name: &str) -> Result<Entry> {
        let st = self.fs.state.lock().unwrap();
        let id = st.names.get(&(self.id, name.to_string())).copied();
        Ok(match id.and_then(|id| self.fs.attr(&st, id)) {
            None => Entry::Missing,
            Some(a) if a.kind == Kind::Regular => Entry::Regular(a),
            Some(a) if a.kind == Kind::Directory => Entry::Other("a directory"),
            Some(_) => Entry::Other("a symbolic link"),
        })
    }

    fn create_new(&self, name: &str, _access: Access) -> Result<(Box<dyn SetFile>, Attr)> {
        let mut st = self.fs.state.lock().unwrap();
        if st.names.contains_key(&(self.id, name.to_string())) {
            return Err(VbError::target(format!(
                "cannot create {}: it exists",
                self.path_of(name).display()
            )));
        }
        let id = self.fs.make(&mut st, self.id, name, Kind::Regular);
        st.counts.creates += 1;
        let a = self.fs.attr(&st, id).unwrap();
        drop(st);
        Ok((self.file(id), a))
    }

    fn open_read(&self, name: &str) -> Result<(Box<dyn SetFile>, Attr)> {
        match self.entry(name)? {
            Entry::Regular(a) => Ok((self.file(a.id), a)),
            Entry::Other(what) => Err(refused(&self.path_of(name), what)),
            Entry::Missing => Err(VbError::target("no such file")),
        }
    }

    fn open_ours(
        &self,
        name: &str,
        _access: Access,
        proof: Proof<'_>,
    ) -> Result<(Box<dyn SetFile>, Attr)> {
        let (f, a) = self.open_read(name)?;
        proof(&a).map_err(|why| refused(&self.path_of(name), why))?;
        self.fs.state.lock().unwrap().counts.write_opens += 1;
        Ok((f, a))
    }

    fn remove_if_ours(&self, name: &str, id: u64) {
        let mut st = self.fs.state.lock().unwrap();
        if st.names.get(&(self.id, name.to_string())) == Some(&id) {
            st.names.remove(&(self.id, name.to_string()));
            st.nodes.remove(&id);
            st.counts.removes += 1;
        }
    }

    fn read_capped(&self, name: &str, cap: usize) -> Result<Option<Vec<u8>>> {
        let Some(id) = self.lookup(name) else {
            return Ok(None);
        };
        let st = self.fs.state.lock().unwrap();
        let data = st
            .nodes
            .get(&id)
            .map(|n| n.data.clone())
            .unwrap_or_default();
        if data.len() > cap {
            return Err(refused(&self.path_of(name), "too large"));
        }
        Ok(Some(data))
    }

    fn replace(&self, name: &str, bytes: &[u8]) -> Result<u64> {
        let mut st = self.fs.state.lock().unwrap();
        if let Some(old) = st.names.remove(&(self.id, name.to_string())) {
            st.nodes.remove(&old);
        }
        let id = self.fs.make(&mut st, self.id, name, Kind::Regular);
        if let Some(n) = st.nodes.get_mut(&id) {
            n.data = bytes.to_vec();
        }
        st.counts.creates += 1;
        st.counts.file_bytes += bytes.len() as u64;
        Ok(id)
    }

    fn rewrite_ours(&self, name: &str, id: u64, bytes: &[u8]) -> Result<()> {
        let mut st = self.fs.state.lock().unwrap();
        if st.names.get(&(self.id, name.to_string())) != Some(&id) {
            return Err(refused(&self.path_of(name), "it was replaced"));
        }
        if let Some(n) = st.nodes.get_mut(&id) {
            n.data = bytes.to_vec();
        }
        st.counts.write_opens += 1;
        st.counts.file_bytes += bytes.len() as u64;
        Ok(())
    }

    fn free_bytes(&self) -> Option<u64> {
        None
    }

    fn open_sub(&self, name: &str) -> Result<Arc<dyn Dir>> {
        let id = {
            let mut st = self.fs.state.lock().unwrap();
            match st.names.get(&(self.id, name.to_string())) {
                Some(&id) => id,
                None => self.fs.make(&mut st, self.id, name, Kind::Directory),
            }
        };
        Ok(Arc::new(MemDir {
            fs: self.fs.clone(),
            id,
            path: self.path_of(name),
        }))
    }

    fn lock(&self) -> Result<Box<dyn Held>> {
        let mut st = self.fs.state.lock().unwrap();
        if st.locked.get(&self.id) == Some(&true) {
            return Err(VbError::refused("the set is in use by another run"));
        }
        st.locked.insert(self.id, true);
        st.counts.locks += 1;
        Ok(Box::new(MemLock {
            fs: self.fs.clone(),
            dir: self.id,
        }))
    }

    fn open_files(&self, files: &[(String, u64)], _how: &IoOpen) -> Result<Files> {
        let mut ids = Vec::with_capacity(files.len());
        for (name, id) in files {
            if self.lookup(name) != Some(*id) {
                return Err(refused(&self.path_of(name), "it was replaced"));
            }
            ids.push(*id);
        }
        Ok(Files::Own(Box::new(MemEngine {
            fs: self.fs.clone(),
            ids,
            pending: Vec::new(),
        })))
    }
}

impl SetFile for MemFile {
    fn read_at(&self, buf: &mut [u8], off: u64) -> std::result::Result<usize, Errno> {
        let st = self.fs.state.lock().unwrap();
        let n = st.nodes.get(&self.id).ok_or(Errno::NOENT)?;
        let from = (off as usize).min(n.data.len());
        let len = buf.len().min(n.data.len() - from);
        buf[..len].copy_from_slice(&n.data[from..from + len]);
        Ok(len)
    }

    fn write_at(&self, buf: &[u8], off: u64) -> std::result::Result<usize, Errno> {
        let mut st = self.fs.state.lock().unwrap();
        let n = st.nodes.get_mut(&self.id).ok_or(Errno::NOENT)?;
        let end = off as usize + buf.len();
        if n.data.len() < end {
            n.data.resize(end, 0);
        }
        n.data[off as usize..end].copy_from_slice(buf);
        st.counts.file_bytes += buf.len() as u64;
        Ok(buf.len())
    }

    fn truncate(&self, len: u64) -> std::result::Result<(), Errno> {
        let mut st = self.fs.state.lock().unwrap();
        let n = st.nodes.get_mut(&self.id).ok_or(Errno::NOENT)?;
        n.data.resize(len as usize, 0);
        Ok(())
    }

    fn set_direct(&self) -> std::result::Result<(), Errno> {
        Ok(())
    }

    fn dio_align(&self) -> u64 {
        1
    }

    fn settle(&self) -> std::result::Result<(), Errno> {
        Ok(())
    }
}

/// The back end's own engine: each request copied to or from the file's
/// bytes at submit, as a synchronous client would, and counted.
struct MemEngine {
    fs: Arc<MemFs>,
    ids: Vec<u64>,
    pending: Vec<(u32, IoOp, *mut u8)>,
}

// SAFETY: the raw pointers are the worker's buffers, used only on the
// worker's thread between queue and completion (`Engine::queue`).
unsafe impl Send for MemEngine {}

impl Engine for MemEngine {
    unsafe fn queue(&mut self, slot: u32, op: IoOp, buf: *mut u8) {
        self.pending.push((slot, op, buf));
    }

    fn submit_and_wait(&mut self, _min: usize, out: &mut Vec<Completion>) -> std::io::Result<()> {
        let mut st = self.fs.state.lock().unwrap();
        for (slot, op, buf) in self.pending.drain(..) {
            let id = self.ids[op.file as usize];
            let Some(n) = st.nodes.get_mut(&id) else {
                out.push(Completion {
                    slot,
                    result: -(Errno::NOENT.raw_os_error() as i64),
                });
                continue;
            };
            let (off, len) = (op.offset as usize, op.len as usize);
            let result = if off + len > n.data.len() {
                0
            } else if op.write {
                // SAFETY: `queue`'s contract: `buf` holds op.len bytes.
                let src = unsafe { std::slice::from_raw_parts(buf, len) };
                n.data[off..off + len].copy_from_slice(src);
                len as i64
            } else {
                // SAFETY: as above, and no one else uses it until completion.
                let dst = unsafe { std::slice::from_raw_parts_mut(buf, len) };
                dst.copy_from_slice(&n.data[off..off + len]);
                len as i64
            };
            if op.write {
                st.counts.writes += 1;
                st.counts.write_bytes += result.max(0) as u64;
            } else {
                st.counts.reads += 1;
                st.counts.read_bytes += result.max(0) as u64;
            }
            out.push(Completion { slot, result });
        }
        Ok(())
    }
}

/// The tree at `path` in memory: its root directory (made on first use).
pub(crate) fn tree(path: &Path) -> Result<Arc<dyn FarTree>> {
    let dir = open(path)?;
    let fs = filesystems().lock().unwrap().get(path).cloned().unwrap();
    let root = dir.attr()?.id;
    Ok(Arc::new(MemTree { fs, root, dir }))
}

#[derive(Debug)]
struct MemTree {
    fs: Arc<MemFs>,
    root: u64,
    dir: Arc<dyn Dir>,
}

impl FarTree for MemTree {
    fn dir(&self) -> Arc<dyn Dir> {
        self.dir.clone()
    }

    fn open(&self) -> Result<Box<dyn TreeDir>> {
        Ok(Box::new(MemTreeDir {
            fs: self.fs.clone(),
            id: self.root,
        }))
    }
}

struct MemTreeDir {
    fs: Arc<MemFs>,
    id: u64,
}

fn text(name: &CStr) -> String {
    String::from_utf8_lossy(name.to_bytes()).into_owned()
}

impl MemTreeDir {
    fn at(&self, st: &State, name: &CStr) -> Option<u64> {
        st.names.get(&(self.id, text(name))).copied()
    }

    /// The name's attributes proven the tree's own, or why not.
    fn ours(&self, st: &State, name: &CStr, owner: &Identity) -> std::result::Result<u64, Fail> {
        let id = self.at(st, name).ok_or(Fail::Sys(Errno::NOENT))?;
        let a = self.fs.attr(st, id).ok_or(Fail::Sys(Errno::NOENT))?;
        crate::io::gate::owner::judge_attr(&a, owner).map_err(Fail::NotOurs)?;
        Ok(id)
    }
}

impl TreeDir for MemTreeDir {
    fn open_below(&self, rel: &CStr) -> std::result::Result<Box<dyn TreeDir>, Errno> {
        let st = self.fs.state.lock().unwrap();
        let mut id = self.id;
        for part in text(rel).split('/').filter(|p| !p.is_empty()) {
            id = *st.names.get(&(id, part.to_string())).ok_or(Errno::NOENT)?;
            if st.nodes.get(&id).map(|n| n.kind) != Some(Kind::Directory) {
                return Err(Errno::NOTDIR);
            }
        }
        Ok(Box::new(MemTreeDir {
            fs: self.fs.clone(),
            id,
        }))
    }

    fn exists(&self, name: &CStr) -> bool {
        self.at(&self.fs.state.lock().unwrap(), name).is_some()
    }

    fn op(
        &self,
        op: MetaOp,
        name: &CStr,
        alt: &CStr,
        io: &mut MetaIo<'_>,
    ) -> std::result::Result<u64, Fail> {
        let mut st = self.fs.state.lock().unwrap();
        let found = self.at(&st, name);
        let bytes = match op {
            MetaOp::Create | MetaOp::Mkdir => {
                if found.is_some() {
                    return Err(Fail::Sys(Errno::EXIST));
                }
                let kind = if op == MetaOp::Mkdir {
                    Kind::Directory
                } else {
                    Kind::Regular
                };
                let id = self.fs.make(&mut st, self.id, &text(name), kind);
                if op == MetaOp::Create {
                    if let Some(n) = st.nodes.get_mut(&id) {
                        n.data = io.buf[..io.size].to_vec();
                    }
                    st.counts.tree_files += 1;
                    io.size as u64
                } else {
                    st.counts.tree_dirs += 1;
                    0
                }
            }
            MetaOp::Stat | MetaOp::Open => {
                found.ok_or(Fail::Sys(Errno::NOENT))?;
                0
            }
            MetaOp::Read => {
                let id = found.ok_or(Fail::Sys(Errno::NOENT))?;
                st.nodes.get(&id).map_or(0, |n| n.data.len() as u64)
            }
            MetaOp::Write | MetaOp::Append => {
                let id = self.ours(&st, name, io.owner)?;
                let data = io.buf[..io.size].to_vec();
                if let Some(n) = st.nodes.get_mut(&id) {
                    if op == MetaOp::Write {
                        n.data = data;
                    } else {
                        n.data.extend_from_slice(&data);
                    }
                }
                io.size as u64
            }
            MetaOp::Setattr => {
                self.ours(&st, name, io.owner)?;
                0
            }
            MetaOp::Rename => {
                // Away and back, never replacing: the tree keeps its names.
                self.ours(&st, name, io.owner)?;
                if self.at(&st, alt).is_some() {
                    return Err(Fail::NotOurs("its rename partner .r exists, not replaced"));
                }
                0
            }
            MetaOp::Delete => {
                let id = self.ours(&st, name, io.owner)?;
                st.names.remove(&(self.id, text(name)));
                st.nodes.remove(&id);
                st.counts.tree_files -= 1;
                0
            }
            MetaOp::Rmdir => {
                let id = found.ok_or(Fail::Sys(Errno::NOENT))?;
                if st.names.keys().any(|(d, _)| *d == id) {
                    return Err(Fail::Sys(Errno::NOTEMPTY));
                }
                st.names.remove(&(self.id, text(name)));
                st.nodes.remove(&id);
                st.counts.tree_dirs -= 1;
                0
            }
            MetaOp::Readdir => {
                // The leaf's path from this directory, walked by name.
                let mut id = self.id;
                for part in text(name).split('/').filter(|p| !p.is_empty() && *p != ".") {
                    id = *st
                        .names
                        .get(&(id, part.to_string()))
                        .ok_or(Fail::Sys(Errno::NOENT))?;
                }
                if st.nodes.get(&id).map(|n| n.kind) != Some(Kind::Directory) {
                    return Err(Fail::Sys(Errno::NOTDIR));
                }
                0
            }
        };
        st.counts.meta[op.index()] += 1;
        Ok(bytes)
    }

    fn list(
        &self,
        rel: &CStr,
        each: &mut dyn FnMut(&[u8], &Attr),
    ) -> std::result::Result<(), Errno> {
        let st = self.fs.state.lock().unwrap();
        let mut id = self.id;
        for part in text(rel).split('/').filter(|p| !p.is_empty()) {
            id = *st.names.get(&(id, part.to_string())).ok_or(Errno::NOENT)?;
        }
        for ((d, name), &f) in &st.names {
            if *d == id {
                if let Some(a) = self.fs.attr(&st, f) {
                    each(name.as_bytes(), &a);
                }
            }
        }
        Ok(())
    }

    fn remove_ours(
        &self,
        name: &CStr,
        id: &Identity,
    ) -> std::result::Result<(), Option<&'static str>> {
        let mut st = self.fs.state.lock().unwrap();
        match self.ours(&st, name, id) {
            Ok(f) => {
                st.names.remove(&(self.id, text(name)));
                st.nodes.remove(&f);
                st.counts.tree_files -= 1;
                Ok(())
            }
            Err(Fail::NotOurs(why)) => Err(Some(why)),
            Err(Fail::Sys(_)) => Err(None),
        }
    }
}
