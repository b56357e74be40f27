//! `--target` with brace lists on this host: `/mnt/x{0..9}.dat`,
//! `/data/{a,b}`, expanded by the same rules (and bound) as each host's
//! targets of a multi-host run (`hosts::expand_target`), `{host}` being
//! this machine's name and `{index}` 0.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::path::{Path, PathBuf};

use crate::error::{Result, VbError};
use crate::spec::JobSpec;
use crate::spec::targets::TargetList;

/// The targets `--target` names here: one path for a plain path (taken as
/// written), every expansion of a template.
pub(crate) fn expand_local(target: &Path) -> Result<Vec<PathBuf>> {
    let Some(text) = target.to_str() else {
        return Ok(vec![target.to_path_buf()]);
    };
    if !text.contains(['{', '}']) {
        return Ok(vec![target.to_path_buf()]);
    }
    let host = crate::io::host::this_host().hostname;
    let paths = crate::input::hosts::expand_target(text, &host, 0)?;
    Ok(paths.into_iter().map(PathBuf::from).collect())
}

/// Makes `job` (built for the first target) a job over all of `paths`;
/// `keep_going`: a target whose server is lost is left out
/// (`--on-host-loss continue`).
pub(crate) fn attach(
    job: &mut JobSpec,
    paths: Vec<PathBuf>,
    (threads_total, keep_going): (bool, bool),
) -> Result<()> {
    if paths.len() < 2 {
        return Err(VbError::input("a list of targets needs at least two"));
    }
    job.targets = Some(TargetList {
        paths,
        threads_total,
        keep_going,
    });
    job.validate()
}

/// `--on-host-loss continue` on this host means something only where a
/// target has a server to lose and another target can go on without it:
/// a list of targets, at least one of them `nfs://` or `smb://`.
pub(crate) fn check_keep_going(paths: &[PathBuf]) -> Result<()> {
    let far = paths
        .iter()
        .filter(|p| {
            p.to_str()
                .is_some_and(|s| s.starts_with("nfs://") || s.starts_with("smb://"))
        })
        .count();
    if far == 0 {
        return Err(VbError::input(
            "--on-host-loss continue: no target here has a server to lose (a local disk or \
             file fails as an I/O error); it is for many hosts (--hosts) or a list of \
             nfs:// or smb:// targets",
        ));
    }
    if paths.len() < 2 {
        return Err(VbError::input(
            "--on-host-loss continue: this run has one target, so once its server is lost \
             nothing is left to go on with (every thread uses that server); the run ends as \
             with fail, keeping what was measured. Wait longer for the server with the URL's \
             reconnect=SECONDS, or give a list of targets ('{nfs://a/x,nfs://b/y}')",
        ));
    }
    Ok(())
}

/// `--threads-total` means something only over several local targets.
pub(crate) fn check_threads_total(
    threads_total: bool,
    targets: usize,
    multi_host: bool,
) -> Result<()> {
    if !threads_total {
        return Ok(());
    }
    if multi_host {
        return Err(VbError::input(
            "--threads-total is for several targets on this host; with --hosts, --threads is per target",
        ));
    }
    if targets < 2 {
        return Err(VbError::input(
            "--threads-total spreads --threads over several targets; give --target a brace list ('/mnt/x{0..3}')",
        ));
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn plain_paths_stay_as_written_and_lists_expand() {
        assert_eq!(
            expand_local(Path::new("/mnt/x")).unwrap(),
            [PathBuf::from("/mnt/x")]
        );
        let t = expand_local(Path::new("/mnt/x{0..2}.dat")).unwrap();
        assert_eq!(
            t,
            ["/mnt/x0.dat", "/mnt/x1.dat", "/mnt/x2.dat"].map(PathBuf::from)
        );
        assert_eq!(expand_local(Path::new("/d/{a,b}")).unwrap().len(), 2);
    }

    #[test]
    fn a_list_over_the_bound_is_refused_with_it() {
        let e = expand_local(Path::new("/mnt/x{0..999}")).unwrap_err();
        assert!(e.message.contains("at most 256"), "{e}");
        let e = expand_local(Path::new("/mnt/{0..20}/{0..20}")).unwrap_err();
        assert!(e.message.contains("more than 256 targets"), "{e}");
    }

    #[test]
    fn threads_total_needs_a_local_list() {
        assert!(check_threads_total(true, 1, false).is_err());
        assert!(check_threads_total(true, 3, true).is_err());
        assert!(check_threads_total(true, 3, false).is_ok());
        assert!(check_threads_total(false, 1, false).is_ok());
    }
}
