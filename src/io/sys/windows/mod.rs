//! Windows: the same names as `unix.rs`, implemented on Win32 and NT calls
//! with the meaning the Linux code relies on (see each file).

mod dir;
mod disk;
mod errno;
mod file;
mod handle;
mod meta;
mod nt;
mod owner;
mod types;

pub(crate) mod fd;
pub(crate) mod io;
pub(crate) mod path;

pub(crate) mod fs {
    pub(crate) use super::dir::RawDir;
    pub(crate) use super::disk::{sector_size as disk_sector_size, volumes};
    pub(crate) use super::file::*;
    pub(crate) use super::handle::*;
    pub(crate) use super::meta::{FileTypeExt, Metadata, MetadataExt, metadata, symlink_metadata};
    pub(crate) use super::types::*;

    /// Linux's syncfs (write back a whole file system) needs a volume
    /// handle and administrator rights on Windows: refused by name.
    pub(crate) fn syncfs(_fd: impl super::fd::AsFd) -> super::io::Result<()> {
        Err(super::io::Errno::NOSYS)
    }
}

pub(crate) mod process {
    /// The "uid" of what this process creates (see `owner.rs`).
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    pub(crate) struct Uid(u32);

    impl Uid {
        pub(crate) fn as_raw(self) -> u32 {
            self.0
        }
    }

    pub(crate) fn geteuid() -> Uid {
        Uid(super::owner::euid())
    }

    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    pub(crate) enum Resource {
        Nofile,
    }

    pub(crate) struct Rlimit {
        pub(crate) current: Option<u64>,
    }

    /// Windows has no per-process handle limit below its 16 Mi handles.
    pub(crate) fn getrlimit(_r: Resource) -> Rlimit {
        Rlimit {
            current: Some(1 << 24),
        }
    }
}

pub(crate) mod system {
    use std::ffi::{CStr, CString};

    pub(crate) struct Uname {
        node: CString,
    }

    impl Uname {
        pub(crate) fn nodename(&self) -> &CStr {
            &self.node
        }
    }

    /// The computer's name (what a lock's holder line names).
    pub(crate) fn uname() -> Uname {
        let name = std::env::var("COMPUTERNAME").unwrap_or_else(|_| "this computer".into());
        Uname {
            node: CString::new(name).unwrap_or_default(),
        }
    }
}
