//! Removing what volbench made on an SMB share: a scratch directory once
//! its set is gone (`quick --dir smb://...`), opened as itself (never
//! through a link) and deleted on close, which the server refuses for a
//! directory that still holds anything.

use std::path::Path;

use super::connect::{connect, options_of, url_of};
use crate::error::{Result, VbError};
use crate::proto::smb::msg::info::SetInfo;
use crate::proto::smb::session::ops::Open;

/// Removes the directory `path` names if it is empty.
pub(crate) fn remove_empty_dir(path: &Path) -> Result<()> {
    let url = url_of(path)?;
    if url.path.is_empty() {
        return Err(VbError::refused(format!(
            "refusing to remove {url}: it is a share's root"
        )));
    }
    let mut c = connect(&url, options_of(&url), 1)?;
    let fail = |e: &dyn std::fmt::Display| VbError::target(format!("cannot remove {url}: {e}"));
    let r = c.open(&url.dir(), Open::Change).map_err(|e| fail(&e))?;
    let gone = match c.file_info(r.file_id) {
        Ok(i)
            if i.directory
                && i.attributes & crate::proto::smb::consts::attrs::REPARSE_POINT == 0 =>
        {
            c.set_info(r.file_id, SetInfo::DeleteOnClose)
                .map_err(|e| fail(&e))
        }
        Ok(_) => Err(fail(&"it is not a directory (or it is a link), left")),
        Err(e) => Err(fail(&e)),
    };
    let _ = c.close(r.file_id);
    c.logoff();
    gone
}
