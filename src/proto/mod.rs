//! Protocol clients for storage volbench reaches over the network without
//! a mount: each speaks its protocol from user space, pipelined, and counts
//! what it saw. Below `io`, which builds engines and targets on them; each
//! is pure protocol (encoders, decoders, sockets, cryptography), knows
//! nothing of jobs, workers or results, and uses nothing above `stats`, so
//! the engines above can drive it and a fuzz harness can call its decoders.
//!
//! NFS is Unix only for now: its transport waits on its sockets with
//! `poll(2)`. SMB builds for Windows too.

#[cfg(unix)]
pub mod nfs;
#[cfg(unix)]
pub mod rpc;
pub mod smb;
pub(crate) mod url_text;
