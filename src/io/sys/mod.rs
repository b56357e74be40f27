//! The system calls of the file layer under one set of names on every
//! platform: `fs` (opens relative to a directory handle, stat, the gate's
//! changes), `io` (read, write, the error type), `fd` (owned and borrowed
//! handles), `process`, `system`. On Unix these are rustix's and std's own
//! names re-exported, so the Linux code keeps its shape and its behaviour;
//! on Windows `windows/` implements the same subset with the same meaning
//! (a descriptor is a handle; the *at calls open relative to a directory
//! handle with NtCreateFile, never by joining paths).

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub(crate) use unix::*;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub(crate) use windows::*;

/// The Win32 error table: used by `windows/`, tested everywhere.
#[cfg(any(windows, test))]
mod winerr;
