//! `--push-binary`: this build copied to each host and run from there.

pub mod binary;
pub(crate) mod sftp;
pub(crate) mod shell;
pub(crate) mod windows;
