//! Protocol clients for storage volbench reaches over the network without
//! a mount: each speaks its protocol from user space, pipelined, and counts
//! what it saw. Below `io`, which builds engines and targets on them; they
//! use nothing above `stats`.
//!
//! Unix only for now: the transport waits on its sockets with `poll(2)`.

#[cfg(unix)]
pub mod nfs;
#[cfg(unix)]
pub mod rpc;
