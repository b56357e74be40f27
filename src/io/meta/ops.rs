//! One metadata operation as system calls, relative to the directory that
//! holds the name, never following a link. Each returns the bytes it moved.

use crate::io::sys::fd::OwnedFd;
use std::ffi::CStr;

use crate::io::sys::fs::{AtFlags, Mode, OFlags, ResolveFlags, Timespec, Timestamps, UTIME_NOW};
use crate::io::sys::io::Errno;

use crate::io::backend::TreeDir;
use crate::io::gate::setdir::Access;
use crate::io::gate::{self, owner, owner::Identity};
use crate::spec::meta::MetaOp;

const FILE_MODE: u32 = 0o644;
const DIR_MODE: u32 = 0o755;

pub(crate) use crate::io::backend::{Fail, MetaIo as Io};

/// A directory of a tree on the local file system: a descriptor reached
/// without following a link, the operations system calls relative to it.
pub(crate) struct LocalTreeDir(pub(crate) OwnedFd);

impl TreeDir for LocalTreeDir {
    fn open_below(&self, rel: &CStr) -> Result<Box<dyn TreeDir>, Errno> {
        super::open_below(&self.0, rel).map(|fd| Box::new(LocalTreeDir(fd)) as Box<dyn TreeDir>)
    }

    fn exists(&self, name: &CStr) -> bool {
        crate::io::sys::fs::statat(&self.0, name, AtFlags::SYMLINK_NOFOLLOW).is_ok()
    }

    fn op(&self, op: MetaOp, name: &CStr, alt: &CStr, io: &mut Io<'_>) -> Result<u64, Fail> {
        run(op, &self.0, name, alt, io)
    }

    fn complete(&self, name: &CStr, size: u64, id: &Identity) -> bool {
        let full =
            crate::io::sys::fs::statat(&self.0, name, AtFlags::SYMLINK_NOFOLLOW).is_ok_and(|st| {
                crate::io::sys::fs::FileType::from_raw_mode(st.st_mode)
                    == crate::io::sys::fs::FileType::RegularFile
                    && u64::try_from(st.st_size).ok() == Some(size)
            });
        full && owner::check_at(&self.0, name, id).is_ok()
    }

    fn remove_ours(&self, name: &CStr, id: &Identity) -> Result<(), Option<&'static str>> {
        owner::check_at(&self.0, name, id)?;
        // Gone meanwhile, or not removable: what comes next finds out.
        let _ = gate::unlink_at(&self.0, name);
        Ok(())
    }
}

/// The name must pass the ownership check before it is changed.
fn ours_at(dir: &OwnedFd, name: &CStr, id: &Identity) -> Result<(), Fail> {
    owner::check_at(dir, name, id).map_err(|why| match why {
        Some(why) => Fail::NotOurs(why),
        None => Fail::Sys(Errno::NOENT),
    })
}

/// Opens an existing file for writing once it is proven volbench's, by
/// name and again by handle (`gate::owner::open_ours_at`).
fn open_ours(
    dir: &OwnedFd,
    name: &CStr,
    access: Access,
    extra: OFlags,
    id: &Identity,
) -> Result<OwnedFd, Fail> {
    owner::open_ours_at(dir, name, access, extra, id).map_err(|e| match e {
        gate::OwnFileError::Sys(e) => Fail::Sys(e),
        gate::OwnFileError::NotOurs(why) => Fail::NotOurs(why),
    })
}

fn open(dir: &OwnedFd, name: &CStr, flags: OFlags) -> Result<OwnedFd, Errno> {
    crate::io::sys::fs::openat(
        dir,
        name,
        flags | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(FILE_MODE),
    )
}

fn write_all(fd: &OwnedFd, mut data: &[u8], at: Option<u64>) -> Result<u64, Errno> {
    let mut done = 0u64;
    while !data.is_empty() {
        let n = match at {
            Some(off) => crate::io::sys::io::pwrite(fd, data, off + done),
            None => crate::io::sys::io::write(fd, data),
        };
        match n {
            Ok(0) => return Err(Errno::NOSPC),
            Ok(n) => {
                done += n as u64;
                data = &data[n..];
            }
            Err(Errno::INTR) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

/// `dir` holds `name` (`alt` is its rename partner); for mkdir, readdir
/// and rmdir, `dir` is the parent and `name` the leaf directory.
pub(crate) fn run(
    op: MetaOp,
    dir: &OwnedFd,
    name: &CStr,
    alt: &CStr,
    io: &mut Io,
) -> Result<u64, Fail> {
    let data_flag = if io.direct {
        OFlags::DIRECT
    } else {
        OFlags::empty()
    };
    match op {
        MetaOp::Mkdir => Ok(gate::mkdir_at(dir, name, DIR_MODE).map(|_| 0)?),
        MetaOp::Rmdir => Ok(gate::rmdir_at(dir, name).map(|_| 0)?),
        MetaOp::Create => {
            let fd = gate::create_new_at(dir, name, OFlags::WRONLY | data_flag, FILE_MODE)?;
            Ok(write_all(&fd, &io.buf[..io.size], None)?)
        }
        MetaOp::Open => Ok(open(dir, name, OFlags::RDONLY | OFlags::NONBLOCK).map(|_| 0)?),
        MetaOp::Stat => {
            Ok(crate::io::sys::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW).map(|_| 0)?)
        }
        MetaOp::Setattr => {
            ours_at(dir, name, io.owner)?;
            let now = Timespec {
                tv_sec: 0,
                tv_nsec: UTIME_NOW,
            };
            let times = Timestamps {
                last_access: now,
                last_modification: now,
            };
            Ok(
                crate::io::sys::fs::utimensat(dir, name, &times, AtFlags::SYMLINK_NOFOLLOW)
                    .map(|_| 0)?,
            )
        }
        MetaOp::Read => {
            let fd = open(dir, name, OFlags::RDONLY | OFlags::NONBLOCK | data_flag)?;
            let mut total = 0u64;
            loop {
                match crate::io::sys::io::read(&fd, &mut *io.buf) {
                    Ok(0) => return Ok(total),
                    Ok(n) => total += n as u64,
                    Err(Errno::INTR) => {}
                    Err(e) => return Err(e.into()),
                }
            }
        }
        MetaOp::Write => {
            let fd = open_ours(dir, name, Access::Write, data_flag, io.owner)?;
            Ok(write_all(&fd, &io.buf[..io.size], Some(0))?)
        }
        MetaOp::Append => {
            let fd = open_ours(dir, name, Access::Append, OFlags::empty(), io.owner)?;
            Ok(write_all(&fd, &io.buf[..io.size], None)?)
        }
        MetaOp::Rename => {
            // Away and back, counted as one operation: the tree keeps its
            // names. Neither step replaces anything at the other name.
            ours_at(dir, name, io.owner)?;
            match gate::rename_noreplace_at(dir, name, alt) {
                Err(Errno::EXIST) => {
                    return Err(Fail::NotOurs("its rename partner .r exists, not replaced"));
                }
                other => other?,
            }
            Ok(gate::rename_noreplace_at(dir, alt, name).map(|_| 0)?)
        }
        MetaOp::Readdir => {
            let fd = crate::io::sys::fs::openat2(
                dir,
                name,
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
                ResolveFlags::NO_SYMLINKS | ResolveFlags::BENEATH,
            )
            .or_else(|e| {
                if e == Errno::NOSYS {
                    crate::io::sys::fs::openat(
                        dir,
                        name,
                        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                        Mode::empty(),
                    )
                } else {
                    Err(e)
                }
            })?;
            let mut it = crate::io::sys::fs::RawDir::new(&fd, io.dents);
            while let Some(entry) = it.next() {
                entry?;
            }
            Ok(0)
        }
        MetaOp::Delete => {
            ours_at(dir, name, io.owner)?;
            Ok(gate::unlink_at(dir, name).map(|_| 0)?)
        }
    }
}

/// A failed operation in words, with what the user can do about it.
pub(crate) fn describe(op: MetaOp, path: &str, e: Errno) -> String {
    let hint = match (op, e) {
        (MetaOp::Create | MetaOp::Mkdir, Errno::EXIST) => {
            ": the tree already has it (run a delete phase, or `volbench clean --target` the tree, first)"
        }
        (_, Errno::NOENT) => ": the tree has no such entry (run a create phase first)",
        (MetaOp::Create | MetaOp::Mkdir, Errno::NOSPC | Errno::DQUOT) => {
            ": the file system is full (no space, inodes or quota left); the files this run made are removed"
        }
        (_, Errno::LOOP) => {
            ": it is a symbolic link, refused (volbench follows no link in its tree)"
        }
        (MetaOp::Rmdir, Errno::NOTEMPTY) => ": it still holds files (run a delete phase first)",
        _ => "",
    };
    format!("{op} of {path} failed: {}{hint}", std::io::Error::from(e))
}
