//! ONC RPC version 2 over TCP (RFC 5531), the transport of NFS: XDR,
//! record marking, AUTH_SYS, the xid table, pipelined calls over N
//! connections, and rpcbind's GETPORT.
//!
//! Written here rather than taken from a crate: the Rust ONC RPC and NFS
//! crates need a newer compiler than this project's 1.85 (nfs3_client and
//! nfs3_types ask for 1.88), or an async runtime (the tokio-based ones),
//! or are bindings to C (libnfs); and none gives what the benchmark needs
//! from its transport: calls queued without blocking and reaped later,
//! nothing allocated per call, a READ's data read straight into the
//! caller's buffer, and per-connection timing of every call.

pub(crate) mod calls;
pub(crate) mod conn;
pub(crate) mod msg;
pub(crate) mod record;
pub(crate) mod stats;
pub(crate) mod transport;
pub(crate) mod xdr;

use std::io;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use calls::Calls;
use conn::{Outcome, Sink};
use msg::{Auth, Refusal};
use transport::{Config, Data, Transport};
use xdr::{Dec, Enc, XdrError};

/// Why a call ended without a usable reply. Small and `Copy`: it travels
/// in completions without allocating.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RpcError {
    /// No reply within the call timeout, after `sends` sends.
    Timeout { sends: u8, secs: u32 },
    /// The server could not be reached again within `secs` seconds.
    Unreachable { kind: io::ErrorKind, secs: u32 },
    /// The connection was lost `sends` times with the call on it.
    Lost { sends: u8, kind: io::ErrorKind },
    /// The server broke the protocol: what it sent.
    Protocol(&'static str),
    /// The server refused the call.
    Refused(Refusal),
    /// A call that changes the server's state was wholly sent when its
    /// connection was lost: the server may or may not have acted on it.
    OutcomeUnknown,
    /// The call's arguments do not fit its header room.
    TooLarge,
    /// Every call of the table is in flight.
    Busy,
}

impl std::fmt::Display for RpcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RpcError::Timeout { sends, secs } => write!(
                f,
                "no reply from the server within {secs} s (sent {sends} time{})",
                if *sends == 1 { "" } else { "s" }
            ),
            RpcError::Unreachable { kind, secs } => write!(
                f,
                "the server cannot be reached ({}), and did not come back within {secs} s",
                io::Error::from(*kind)
            ),
            RpcError::Lost { sends, kind } => write!(
                f,
                "the connection was lost with the call on it {sends} times ({})",
                io::Error::from(*kind)
            ),
            RpcError::Protocol(what) => write!(f, "the server broke the protocol: {what}"),
            RpcError::Refused(r) => r.fmt(f),
            RpcError::OutcomeUnknown => f.write_str(
                "the connection was lost after the call was sent: the server may or may not have done it",
            ),
            RpcError::TooLarge => f.write_str("the call's arguments are too long to send"),
            RpcError::Busy => f.write_str("too many calls in flight"),
        }
    }
}

impl std::error::Error for RpcError {}

/// A sink for one blocking call: keeps its results.
struct One {
    results: Vec<u8>,
    outcome: Option<Result<(), RpcError>>,
}

impl Sink for One {
    fn data_at(&mut self, _: u8, _: &[u8]) -> Result<Option<(usize, usize)>, XdrError> {
        Ok(None)
    }

    fn reply(&mut self, _: u32, _: &mut Calls, r: Result<&[u8], Refusal>, _: usize) -> Outcome {
        self.outcome = Some(match r {
            Ok(b) => {
                self.results.clear();
                self.results.extend_from_slice(b);
                Ok(())
            }
            Err(refusal) => Err(RpcError::Refused(refusal)),
        });
        match self.outcome {
            Some(Ok(())) => Outcome::Ok,
            _ => Outcome::Failed,
        }
    }

    fn fail(&mut self, _: u32, _: &mut Calls, err: RpcError) {
        self.outcome = Some(Err(err));
    }
}

/// One call on its own connection, waited for: setup's calls (rpcbind,
/// MOUNT), never the I/O path. Returns the results' bytes.
pub(crate) fn call_once(
    addr: SocketAddr,
    prog_vers_proc: (u32, u32, u32),
    auth: &Auth,
    timeout: Duration,
    args: impl FnOnce(&mut Enc),
) -> Result<Vec<u8>, RpcError> {
    let (prog, vers, proc_) = prog_vers_proc;
    let cfg = Config {
        connections: 1,
        call_timeout: timeout,
        max_sends: 1,
        reconnect_for: Duration::ZERO,
        connect_timeout: timeout,
        staging: 256 * 1024,
        max_record: 256 * 1024,
        max_calls: 1,
    };
    let mut t = Transport::connect(addr, prog, vers, auth.clone(), cfg)?;
    let id = t.begin(proc_, 0, 0, true, Data::None, args)?;
    t.send(id)?;
    let mut sink = One {
        results: Vec::new(),
        outcome: None,
    };
    let deadline = Instant::now() + timeout;
    while sink.outcome.is_none() {
        if Instant::now() >= deadline {
            return Err(RpcError::Timeout {
                sends: 1,
                secs: timeout.as_secs() as u32,
            });
        }
        t.poll(&mut sink, deadline);
    }
    sink.outcome.unwrap_or(Err(RpcError::Busy))?;
    Ok(sink.results)
}

/// rpcbind's (portmapper version 2) program number and port.
pub(crate) const PMAP_PROG: u32 = 100000;
pub(crate) const PMAP_PORT: u16 = 111;
const PMAP_VERS: u32 = 2;
const PMAPPROC_GETPORT: u32 = 3;
const IPPROTO_TCP: u32 = 6;

/// The TCP port `prog` version `vers` listens on, as the host's rpcbind
/// says (PMAPPROC_GETPORT); an error when it is not registered.
pub(crate) fn getport(
    host: SocketAddr,
    prog: u32,
    vers: u32,
    timeout: Duration,
) -> Result<u16, String> {
    let r = call_once(
        host,
        (PMAP_PROG, PMAP_VERS, PMAPPROC_GETPORT),
        &Auth::none(),
        timeout,
        |e| {
            e.u32(prog);
            e.u32(vers);
            e.u32(IPPROTO_TCP);
            e.u32(0);
        },
    )
    .map_err(|e| format!("rpcbind on {host}: {e}"))?;
    let port = Dec::new(&r)
        .u32()
        .map_err(|e| format!("rpcbind on {host}: {e}"))?;
    match port {
        0 => Err(format!(
            "rpcbind on {host} knows no TCP port for program {prog} version {vers}"
        )),
        p if p > u16::MAX as u32 => Err(format!("rpcbind on {host} answered port {p}")),
        p => Ok(p as u16),
    }
}
