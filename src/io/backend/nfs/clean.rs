//! Removing what volbench made on an NFS server: a scratch directory once
//! its set is gone (`quick --dir nfs://...`), asked of the directory's
//! parent so that only an empty directory of that name goes
//! (`Client::remove_empty_dir`: a symlink at the name is refused, RMDIR
//! fails on a directory with entries).

use std::path::Path;

use super::{SETUP_CONNECTIONS, url_of};
use crate::error::{Result, VbError};
use crate::proto::nfs;

/// Removes the directory `path` names if it is empty.
pub(crate) fn remove_empty_dir(path: &Path) -> Result<()> {
    let url = url_of(path)?;
    let mut parent = url.clone();
    let Some(last) = parent.path.pop() else {
        return Ok(());
    };
    if parent.path.is_empty() {
        return Err(VbError::refused(format!(
            "refusing to remove {url}: it is an export's root"
        )));
    }
    let mut opts = nfs::Options::from_url(&parent);
    opts.connections = SETUP_CONNECTIONS;
    let mut m = nfs::connect(&parent, &opts)
        .map_err(|e| VbError::target(format!("cannot reach the NFS target: {e}")))?;
    m.client
        .remove_empty_dir(&m.dir, last.as_bytes())
        .map_err(|e| VbError::target(format!("cannot remove {url}: {e}")))
}
