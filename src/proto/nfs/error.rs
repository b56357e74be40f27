//! Why an NFS request failed, named the way the protocol names it, with
//! the errno a local file system would have given (for the engines, which
//! report errnos). `Copy`, so completions carry it without allocating.

use super::types::OpKind;
use crate::proto::rpc::RpcError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NfsError {
    /// The server's status code (nfsstat3, or nfsstat4 when `v4`).
    Status { op: OpKind, code: u32, v4: bool },
    /// The call got no usable reply.
    Rpc { op: OpKind, err: RpcError },
    /// The reply did not decode: what was wrong with it.
    Malformed { op: OpKind, what: &'static str },
    /// The request cannot be made (a bad name, a file number not open...).
    Invalid { op: OpKind, what: &'static str },
}

impl NfsError {
    /// The status code, when the server gave one.
    pub(crate) fn status(&self) -> Option<u32> {
        match self {
            NfsError::Status { code, .. } => Some(*code),
            _ => None,
        }
    }

    pub fn is(&self, code: u32) -> bool {
        self.status() == Some(code)
    }

    /// The errno a local file system would have returned (NFS's status
    /// codes below 60 are Linux's errnos; those above are BSD's numbers,
    /// given Linux's; the rest map to the nearest).
    pub fn errno(&self) -> i32 {
        match self {
            NfsError::Status { code, .. } => match *code {
                63 => 36,  // ENAMETOOLONG
                66 => 39,  // ENOTEMPTY
                69 => 122, // EDQUOT
                70 => 116, // ESTALE
                71 => 66,  // EREMOTE
                c @ 1..=9999 => c as i32,
                10001 | 10003 | 10007 | 10025 | 10023 | 10024 => 22, // EINVAL
                10004 | 10043 => 95,                                 // EOPNOTSUPP
                10008 | 10013 => 11, // EAGAIN (JUKEBOX, DELAY, GRACE)
                10014 => 116,        // ESTALE
                _ => 5,              // EIO
            },
            NfsError::Rpc {
                err: RpcError::Timeout { .. },
                ..
            } => 110, // ETIMEDOUT
            NfsError::Rpc {
                err: RpcError::Unreachable { .. },
                ..
            } => 113, // EHOSTUNREACH
            NfsError::Rpc {
                err: RpcError::Refused(_),
                ..
            } => 13, // EACCES
            NfsError::Invalid { .. } => 22,
            _ => 5,
        }
    }
}

/// The name and meaning of an NFSv3 or NFSv4 status code.
pub(crate) fn status_name(code: u32) -> (&'static str, &'static str) {
    match code {
        1 => ("PERM", "not the owner"),
        2 => ("NOENT", "no such file or directory"),
        5 => ("IO", "I/O error on the server"),
        6 => ("NXIO", "no such device"),
        13 => ("ACCES", "permission denied"),
        17 => ("EXIST", "the name is taken"),
        18 => ("XDEV", "across file systems"),
        19 => ("NODEV", "no such device"),
        20 => ("NOTDIR", "not a directory"),
        21 => ("ISDIR", "is a directory"),
        22 => ("INVAL", "invalid argument"),
        27 => ("FBIG", "file too large"),
        28 => ("NOSPC", "no space left on the server"),
        30 => ("ROFS", "read-only file system"),
        31 => ("MLINK", "too many links"),
        63 => ("NAMETOOLONG", "name too long"),
        66 => ("NOTEMPTY", "directory not empty"),
        69 => ("DQUOT", "quota exceeded"),
        70 => ("STALE", "stale file handle"),
        71 => ("REMOTE", "too many levels of remote in path"),
        10001 => ("BADHANDLE", "illegal file handle"),
        10002 => ("NOT_SYNC", "update synchronization mismatch"),
        10003 => ("BAD_COOKIE", "READDIR cookie is stale"),
        10004 => ("NOTSUPP", "operation not supported"),
        10005 => ("TOOSMALL", "buffer or request too small"),
        10006 => ("SERVERFAULT", "the server failed"),
        10007 => ("BADTYPE", "type not supported"),
        10008 => ("DELAY", "the server asks to try again later (JUKEBOX)"),
        10009 => ("SAME", "nverify says the attributes are the same"),
        10010 => ("DENIED", "lock unavailable"),
        10011 => ("EXPIRED", "the lease expired"),
        10013 => ("GRACE", "the server is in its grace period"),
        10014 => ("FHEXPIRED", "the file handle expired"),
        10015 => ("SHARE_DENIED", "a share reservation denies it"),
        10016 => ("WRONGSEC", "wrong security flavor"),
        10018 => ("RESOURCE", "the server is out of resources"),
        10020 => ("NOFILEHANDLE", "no current file handle"),
        10021 => (
            "MINOR_VERS_MISMATCH",
            "the server does not speak this minor version",
        ),
        10022 => (
            "STALE_CLIENTID",
            "the server forgot this client (restarted)",
        ),
        10023 => ("STALE_STATEID", "the server forgot this open (restarted)"),
        10024 => ("OLD_STATEID", "an old stateid"),
        10025 => ("BAD_STATEID", "a stateid the server does not know"),
        10026 => ("BAD_SEQID", "a sequence number out of order"),
        10029 => ("SYMLINK", "a symbolic link"),
        10032 => ("ATTRNOTSUPP", "an attribute the server does not support"),
        10036 => ("BADXDR", "the server could not decode the request"),
        10038 => ("OPENMODE", "the file is not open for this"),
        10039 => ("BADOWNER", "an owner the server does not know"),
        10041 => ("BADNAME", "an illegal name"),
        10044 => ("OP_ILLEGAL", "an illegal operation"),
        10052 => ("BADSESSION", "the server does not know this session"),
        10053 => ("BADSLOT", "a slot the session does not have"),
        10055 => (
            "CONN_NOT_BOUND_TO_SESSION",
            "the connection is not bound to the session",
        ),
        10063 => ("SEQ_MISORDERED", "a slot sequence number out of order"),
        10065 => (
            "REQ_TOO_BIG",
            "the request is larger than the session allows",
        ),
        10066 => (
            "REP_TOO_BIG",
            "the reply would be larger than the session allows",
        ),
        10068 => (
            "RETRY_UNCACHED_REP",
            "the retried request's reply was not kept",
        ),
        10070 => ("TOO_MANY_OPS", "more operations than the session allows"),
        10071 => ("OP_NOT_IN_SESSION", "an operation outside a session"),
        10077 => ("BAD_HIGH_SLOT", "a highest slot the session does not have"),
        10078 => ("DEADSESSION", "the session is going away"),
        _ => ("", "unknown status"),
    }
}

impl std::fmt::Display for NfsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NfsError::Status { op, code, v4 } => {
                let (name, meaning) = status_name(*code);
                let prefix = if *v4 { "NFS4ERR_" } else { "NFS3ERR_" };
                if name.is_empty() {
                    write!(
                        f,
                        "{}: the server answered status {code} ({meaning})",
                        op.name()
                    )
                } else {
                    write!(f, "{}: {prefix}{name} ({meaning})", op.name())
                }
            }
            NfsError::Rpc { op, err } => write!(f, "{}: {err}", op.name()),
            NfsError::Malformed { op, what } => {
                write!(f, "{}: the server's reply is malformed: {what}", op.name())
            }
            NfsError::Invalid { op, what } => write!(f, "{}: {what}", op.name()),
        }
    }
}

impl std::error::Error for NfsError {}

/// NFSv3 and NFSv4 status codes the client acts on.
// The protocol's whole table, as the spec lists it: a bit or code not
// used yet is still named here, so a reader checks it against the spec.
#[allow(dead_code)]
pub(crate) mod code {
    pub(crate) const NOENT: u32 = 2;
    pub(crate) const ACCES: u32 = 13;
    pub(crate) const EXIST: u32 = 17;
    pub(crate) const NOTDIR: u32 = 20;
    pub(crate) const NOTSUPP: u32 = 10004;
    pub(crate) const DELAY: u32 = 10008;
    pub(crate) const EXPIRED: u32 = 10011;
    pub(crate) const GRACE: u32 = 10013;
    pub(crate) const STALE_CLIENTID: u32 = 10022;
    pub(crate) const STALE_STATEID: u32 = 10023;
    pub(crate) const BAD_STATEID: u32 = 10025;
    pub(crate) const BADSESSION: u32 = 10052;
    pub(crate) const DEADSESSION: u32 = 10078;
    pub(crate) const ADMIN_REVOKED: u32 = 10047;
}
