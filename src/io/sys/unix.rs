//! Unix: rustix's and std's names as they are, so the Linux build is the
//! one it was before the Windows port.

pub(crate) mod fs {
    pub(crate) use rustix::fs::*;
    pub(crate) use std::fs::{Metadata, metadata, symlink_metadata};
    pub(crate) use std::os::unix::fs::{FileTypeExt, MetadataExt};
}

pub(crate) mod io {
    pub(crate) use rustix::io::*;
}

pub(crate) mod path {
    pub(crate) use rustix::path::*;
}

pub(crate) mod process {
    pub(crate) use rustix::process::*;
}

pub(crate) mod system {
    pub(crate) use rustix::system::*;
}

pub(crate) mod fd {
    pub(crate) use std::os::fd::*;
}
