//! Removing what volbench made on an NFS server: a scratch directory once
//! its set is gone (`quick --dir nfs://...`), asked of the directory's
//! parent so that only an empty directory of that name goes (RMDIR fails
//! on anything else, and a symlink at the name is not a directory).

use std::path::Path;

use super::{SETUP_CONNECTIONS, url_of, what_is};
use crate::error::{Result, VbError};
use crate::proto::nfs::{self, FileType};

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
    let fail = |e: nfs::NfsError| VbError::target(format!("cannot remove {url}: {e}"));
    let (_, a) = m.client.lookup(&m.dir, last.as_bytes()).map_err(fail)?;
    if a.kind != FileType::Directory {
        return Err(VbError::refused(format!(
            "refusing to remove {url}: it is {}",
            what_is(a.kind)
        )));
    }
    m.client.rmdir(&m.dir, last.as_bytes()).map_err(fail)
}
