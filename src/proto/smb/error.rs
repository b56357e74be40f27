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
