//! `--ops` with `--hosts`: where each host's tree goes. A target that does
//! not name the host is one tree shared by all of them, each host working
//! in its own part of it (`TARGET/hostN`, N its index), so no two hosts ever
//! create, rename or delete the same name; a target with `{host}` or
//! `{index}` gives each host a tree of its own.

use crate::error::{Result, VbError};
use crate::input::hosts::HostSpec;
use crate::spec::JobSpec;

/// The directory a host's part of a shared tree is named after, + its index.
pub(crate) const PART_PREFIX: &str = "host";

/// True when a target template gives every host the same path.
fn shared_tree(template: &str) -> bool {
    !template.contains("{host}") && !template.contains("{index}")
}

fn part_template(template: &str) -> String {
    if !shared_tree(template) {
        return template.to_string();
    }
    // `/` alone must stay a path (`/host0`), not become `host0`.
    let root = template.trim_end_matches('/');
    format!("{root}/{PART_PREFIX}{{index}}")
}

/// For a job with a tree: rewrites the hosts' target templates so each host
/// gets its part of a shared tree, and returns the template to expand and,
/// per host (in order), whether its tree is such a part. None when the job
/// has no metadata run (block I/O keeps its templates as given).
pub(crate) fn tree_targets(
    job: &JobSpec,
    hosts: &mut [HostSpec],
    template: &str,
    shared_target: bool,
) -> Result<Option<(String, Vec<bool>)>> {
    if !job.runs.iter().any(|r| r.meta.is_some()) {
        return Ok(None);
    }
    if shared_target {
        return Err(VbError::input(
            "--shared-target does not apply to --ops: hosts given one target path already share \
             one tree, each working in its own part of it (TARGET/hostN)",
        ));
    }
    let mut parts = Vec::with_capacity(hosts.len());
    for h in hosts.iter_mut() {
        let own = h.target.as_deref().unwrap_or(template);
        if shared_tree(own) && crate::io::backend::is_url(std::path::Path::new(own)) {
            // A part is a path below the target; a URL's query ends it.
            return Err(VbError::input(format!(
                "--ops with --hosts on {}: a tree shared by many hosts is made on a local or \
                 mounted path; give each host a directory of its own on the server ({{host}} \
                 or {{index}} in the URL's path)",
                crate::units::bounds::one_line(own)
            )));
        }
        parts.push(shared_tree(own));
        if let Some(t) = &mut h.target {
            *t = part_template(t);
        }
    }
    Ok(Some((part_template(template), parts)))
}

/// Marks every tree of a host's job as its part of a shared tree.
pub(crate) fn mark_part(job: &mut JobSpec, part: bool) {
    for m in job.runs.iter_mut().filter_map(|r| r.meta.as_mut()) {
        m.host_part = part;
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::input::hosts::{assign, parse_list};

    #[test]
    fn a_url_shared_by_hosts_is_refused_and_one_per_host_is_kept() {
        let mut job = crate::spec::tests::sample();
        job.runs[0].meta = Some(crate::spec::meta::MetaSpec {
            depth: 1,
            width: 2,
            files_per_dir: 2,
            file_size: vec![crate::spec::BlockSize {
                bytes: 0,
                weight: 1,
            }],
            ops: vec![crate::spec::meta::MetaOpWeight {
                op: crate::spec::meta::MetaOp::Create,
                weight: 1,
            }],
            whole_tree: true,
            shared_dirs: false,
            drop_caches: false,
            direct: false,
            host_part: false,
            keep_complete: false,
        });
        let mut hosts = parse_list("a,b").unwrap();
        let e = tree_targets(&job, &mut hosts, "nfs://s/e/t?version=3", false).unwrap_err();
        assert!(e.message.contains("a directory of its own"), "{e}");
        let (t, parts) = tree_targets(&job, &mut hosts, "nfs://s/e/{host}?version=3", false)
            .unwrap()
            .unwrap();
        assert_eq!(t, "nfs://s/e/{host}?version=3");
        assert_eq!(parts, [false, false]);
    }

    #[test]
    fn one_target_becomes_one_part_per_host_and_host_templates_stay() {
        assert_eq!(part_template("/mnt/t/"), "/mnt/t/host{index}");
        assert_eq!(part_template("/"), "/host{index}");
        assert_eq!(part_template("/mnt/{host}"), "/mnt/{host}");
        assert_eq!(part_template("/mnt/{index}/t"), "/mnt/{index}/t");
        // Brace lists alone still leave every host the same paths: parts.
        assert_eq!(part_template("/mnt/v{1,2}"), "/mnt/v{1,2}/host{index}");
    }

    #[test]
    fn parts_never_collide_whatever_the_host_names() {
        let hosts = parse_list("vm1,user@vm1,10.0.0.1").unwrap();
        let a = assign(&hosts, &part_template("/mnt/t"), false).unwrap();
        let paths: Vec<String> = a
            .iter()
            .map(|h| h.targets[0].display().to_string())
            .collect();
        assert_eq!(paths, ["/mnt/t/host0", "/mnt/t/host1", "/mnt/t/host2"]);
    }
}
