//! Whose a file on the share is. SMB's attributes carry no numeric owner,
//! so a set's files all read as `OWNER` (see the module above) until the
//! security descriptor says otherwise: where the server named an owner
//! for the run's lock file (`Shared::me`, `lock::take`), a file about to
//! be written, truncated or removed is read for its owner SID by the
//! handle the change goes through, and another user's reads as `NOT_OURS`,
//! which `owner::set_file_ours` refuses ("another user owns it").

use super::OWNER;
use crate::io::gate::owner::Attr;
use crate::proto::smb::error::SmbResult;
use crate::proto::smb::msg::FileId;
use crate::proto::smb::msg::security::Sid;
use crate::proto::smb::session::client::Client;

/// The owner a file of another user's reads as: no uid's, never `OWNER`.
pub(super) const NOT_OURS: u32 = u32::MAX;

/// `a` with its owner read from the server: `OWNER` when the file's owner
/// SID is `me` (or the server named none for the lock, so there is nothing
/// to compare), `NOT_OURS` otherwise. `f` must have been opened with
/// READ_CONTROL (every opening that changes a file is).
pub(super) fn stamp(c: &mut Client, f: FileId, mut a: Attr, me: Option<Sid>) -> SmbResult<Attr> {
    if let Some(me) = me {
        a.uid = match c.owner(f)? {
            Some(o) if o == me => OWNER,
            _ => NOT_OURS,
        };
    }
    Ok(a)
}
