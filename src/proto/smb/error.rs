//! The client's one error type: each variant prints as one line that says
//! what failed and where, never a password or a key.

use std::fmt;
use std::time::Duration;

use super::consts::{Command, status};
use super::wire::Malformed;

#[derive(Debug)]
pub enum SmbError {
    /// The socket failed: connect refused, reset, closed by the server.
    Io {
        what: String,
        source: std::io::Error,
    },
    /// A bounded wait ran out.
    Timeout { what: String, after: Duration },
    /// The server said something this client cannot accept (a malformed or
    /// hostile reply, a broken promise of the protocol).
    Protocol(String),
    /// The server refused a command.
    Status {
        command: Command,
        status: u32,
        context: String,
    },
    /// What the user asked for cannot be done with this server.
    Unsupported(String),
}

impl SmbError {
    pub(crate) fn protocol(server: &str, m: Malformed) -> SmbError {
        SmbError::Protocol(format!("{server}: {m}"))
    }

    pub(crate) fn status(command: Command, status: u32, context: impl Into<String>) -> SmbError {
        SmbError::Status {
            command,
            status,
            context: context.into(),
        }
    }

    /// The NT status, when the server refused a command.
    pub fn nt_status(&self) -> Option<u32> {
        match self {
            SmbError::Status { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// Whether the connection is gone (every request on it is lost).
    pub fn is_disconnect(&self) -> bool {
        matches!(self, SmbError::Io { .. })
    }

    /// Whether a new session could mend this: the connection dropped or
    /// went silent past its request timeout, or the server said the
    /// session, the share's connection or the handle is gone
    /// (`ends_session`). A refusal of what was asked, or a reply this
    /// client cannot accept, is not: a reconnect would only hide it.
    pub fn needs_reconnect(&self) -> bool {
        match self {
            SmbError::Io { .. } | SmbError::Timeout { .. } => true,
            SmbError::Status { status, .. } => ends_session(*status),
            SmbError::Protocol(_) | SmbError::Unsupported(_) => false,
        }
    }
}

/// Whether a request's status says what a restarted server answers for
/// the state it no longer holds: the session (USER_SESSION_DELETED,
/// NETWORK_SESSION_EXPIRED), the tree connect (NETWORK_NAME_DELETED) or
/// the open (FILE_CLOSED). A new session, the share connected again and
/// each file reopened by its path mend it; nothing else does.
pub fn ends_session(status: u32) -> bool {
    matches!(
        status,
        status::USER_SESSION_DELETED
            | status::NETWORK_SESSION_EXPIRED
            | status::NETWORK_NAME_DELETED
            | status::FILE_CLOSED
    )
}

impl fmt::Display for SmbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SmbError::Io { what, source } => write!(f, "{what}: {source}"),
            SmbError::Timeout { what, after } => {
                write!(f, "{what}: no answer within {} s", after.as_secs_f64())
            }
            SmbError::Protocol(m) => write!(f, "bad reply from the SMB server: {m}"),
            SmbError::Status {
                command,
                status: code,
                context,
            } => {
                let hint = match *code {
                    status::LOGON_FAILURE => " (wrong user or password)",
                    status::BAD_NETWORK_NAME => " (no such share)",
                    status::ACCESS_DENIED => " (access denied)",
                    status::OBJECT_NAME_COLLISION => " (the name exists)",
                    _ => "",
                };
                write!(
                    f,
                    "{context}: the server answered {} with {} (0x{code:08x}){hint}",
                    command.name(),
                    status::name(*code)
                )
            }
            SmbError::Unsupported(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for SmbError {}

pub(crate) type SmbResult<T> = Result<T, SmbError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_reconnect_mends_and_what_it_would_hide() {
        for st in [
            status::USER_SESSION_DELETED,
            status::NETWORK_SESSION_EXPIRED,
            status::NETWORK_NAME_DELETED,
            status::FILE_CLOSED,
        ] {
            assert!(ends_session(st), "{}", status::name(st));
            assert!(SmbError::status(Command::Write, st, "w").needs_reconnect());
        }
        for st in [
            status::SUCCESS,
            status::ACCESS_DENIED,
            status::OBJECT_NAME_NOT_FOUND,
            status::DISK_FULL,
            status::LOGON_FAILURE,
        ] {
            assert!(!ends_session(st), "{}", status::name(st));
            assert!(!SmbError::status(Command::Write, st, "w").needs_reconnect());
        }
        let reset = SmbError::Io {
            what: "channel 0".into(),
            source: std::io::ErrorKind::ConnectionReset.into(),
        };
        let silent = SmbError::Timeout {
            what: "channel 0".into(),
            after: Duration::from_secs(60),
        };
        assert!(reset.needs_reconnect() && silent.needs_reconnect());
        assert!(!SmbError::Protocol("a hostile reply".into()).needs_reconnect());
        assert!(!SmbError::Unsupported("no multichannel".into()).needs_reconnect());
    }
}
