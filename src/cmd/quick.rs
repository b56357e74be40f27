//! `volbench quick DIR`: the six patterns on a scratch file set, removed
//! afterwards however the command ends.

use super::stop;
use crate::error::{Result, VbError};
use crate::input::args::QuickArgs;
use crate::input::suite;
use crate::spec::JobSpec;
use crate::units::{parse_duration_in, parse_size_in};

/// Removes quick's scratch directory when the command returns, however it
/// returns; a stop that ends the process runs the same removal
/// (`stop::on_exit`).
struct Scratch;

impl Drop for Scratch {
    fn drop(&mut self) {
        stop::cleanup();
    }
}

pub(crate) fn cmd_quick(a: &QuickArgs) -> Result<i32> {
    let duration = parse_duration_in(
        "--duration",
        &a.duration,
        crate::units::bounds::MIN_DURATION,
        crate::units::bounds::MAX_DURATION,
    )?
    .as_secs_f64();
    let size = parse_size_in("--size", &a.size, 1, crate::units::bounds::MAX_SIZE)?;
    // A directory on an NFS server: the scratch set is made there by the
    // run (its back end creates the last component) and removed through it.
    let remote = crate::io::backend::is_url(&a.dir);
    if remote {
        crate::io::backend::check_url(&a.dir)?;
    } else if !a.dir.is_dir() {
        return Err(VbError::target(format!(
            "{} is not a directory",
            a.dir.display()
        )));
    }
    let dir = scratch_in(&a.dir, &format!("volbench-quick-{}", std::process::id()));
    let _scratch = Scratch;
    if !a.keep {
        let at = dir.clone();
        stop::on_exit(Box::new(move || {
            // Through the file set's own removal: only the files its
            // marker lists, the marker and the lock, then the empty
            // directory; nothing else is deleted.
            if remote || at.exists() {
                if let Err(e) = crate::io::target::remove_set_dir(&at) {
                    crate::console::errln!("volbench: the scratch directory was left: {e}");
                }
            }
        }));
    }
    let make = |direct: bool| -> Result<JobSpec> {
        let (origin, text) = suite::load("six-patterns")?;
        let parsed = suite::parse(&origin, &text)?;
        let overrides = suite::Overrides {
            size: Some(size),
            files: Some(vec![1]),
            threads: Some(vec![4]),
            iodepth: Some(vec![8]),
            duration_s: Some(duration),
            warmup_s: Some(((duration * 0.4).min(2.0) * 10.0).round() / 10.0),
            buffered: !direct,
            no_warmup_run: true,
            ..suite::Overrides::new(dir.clone())
        };
        suite::to_job(&origin, &text, &parsed, &overrides)
    };
    let mut job = make(true)?;
    let mut notes = Vec::new();
    if !remote {
        crate::io::gate::create_dir_all(&dir)
            .map_err(|e| VbError::target(format!("cannot create {}: {e}", dir.display())))?;
    }
    // Over NFS every I/O is direct: the client keeps no cache.
    if !remote && crate::io::target::probe_dir_direct(&dir).is_err() {
        notes.push(format!(
            "{} does not support direct I/O; quick falls back to buffered I/O (page cache included)",
            a.dir.display()
        ));
        job = make(false)?;
    }
    let job = crate::input::job::Job {
        place: crate::input::job::Place::Here {
            paths: vec![dir],
            threads_total: false,
            keep_going: false,
        },
        size_given: true,
        live: Default::default(),
        outputs: crate::spec::output::OutputSpec {
            dir: a.output.clone(),
            ..Default::default()
        },
        expect: None,
        // The six patterns are said before they run.
        show_plan: true,
        first: None,
        notes,
        spec: job,
    };
    super::run::go(job)
}

/// The scratch directory `name` in `dir`: a path joined, or a URL's path
/// with the name added before its query (`nfs://s/e/d?version=3` ->
/// `nfs://s/e/d/NAME?version=3`).
fn scratch_in(dir: &std::path::Path, name: &str) -> std::path::PathBuf {
    if !crate::io::backend::is_url(dir) {
        return dir.join(name);
    }
    let text = dir.to_string_lossy();
    let (base, query) = match text.split_once('?') {
        Some((b, q)) => (b, format!("?{q}")),
        None => (&*text, String::new()),
    };
    std::path::PathBuf::from(format!("{}/{name}{query}", base.trim_end_matches('/')))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_scratch_directory_of_a_url_goes_before_its_query() {
        let at = |d: &str| super::scratch_in(std::path::Path::new(d), "q");
        assert_eq!(at("/mnt/x"), std::path::PathBuf::from("/mnt/x/q"));
        assert_eq!(
            at("nfs://s/e/d?version=3&nconnect=2"),
            std::path::PathBuf::from("nfs://s/e/d/q?version=3&nconnect=2")
        );
        assert_eq!(at("nfs://s/e/"), std::path::PathBuf::from("nfs://s/e/q"));
    }
}
