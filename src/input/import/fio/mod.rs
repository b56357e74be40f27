//! fio job files: `[global]` and job sections, `include`, `${VAR}`,
//! groups separated by `stonewall`. A group's jobs run at once in fio, so a
//! group becomes one run whose threads are the jobs' together; its jobs must
//! therefore do the same thing.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod data;
pub(crate) mod engines;
mod files;
mod job;
mod meta;
pub(crate) mod nfs;
pub(crate) mod options;
mod parse;
mod rate;
mod replay;
mod shape;
mod workload;

use std::collections::BTreeMap;
use std::path::Path;

use super::{Imported, Mapping, Notes, PathMap, file_name, size_text};
use crate::error::{Result, VbError};
use crate::input::suite::write::value;
use crate::input::suite::{Defaults, SuiteFile};
use crate::spec::TableKind;
use parse::{Job, Nest, Opt, Section, parse};
pub use parse::{MAX_EXPANDED_LINE, MAX_INCLUDE_DEPTH, MAX_INCLUDES, MAX_JOBS, Sources};

/// Reads a job file and imports it.
pub(crate) fn import_file(path: &Path, map: &PathMap, src: &Sources) -> Result<Imported> {
    let text = (src.read)(path)?;
    import_text(&path.display().to_string(), &text, path, map, src)
}

pub fn import_text(
    origin: &str,
    text: &str,
    path: &Path,
    map: &PathMap,
    src: &Sources,
) -> Result<Imported> {
    let mut notes = Notes::default();
    let mut sections = Vec::new();
    let mut nest = Nest::default();
    parse(
        origin,
        text,
        path,
        src,
        &mut nest,
        &mut sections,
        &mut notes,
    )?;
    notes.check()?;
    let imp = translate(origin, &sections, map, src, &mut notes)?;
    notes.check()?;
    Ok(imp.read_first(notes))
}

fn translate(
    origin: &str,
    sections: &[Section],
    map: &PathMap,
    src: &Sources,
    notes: &mut Notes,
) -> Result<Imported> {
    let mut global: Vec<Opt> = Vec::new();
    let mut jobs: Vec<Job> = Vec::new();
    let mut meta_jobs = Vec::new();
    for s in sections {
        if s.name.eq_ignore_ascii_case("global") {
            global.extend(s.opts.iter().cloned());
            continue;
        }
        let mut opts = global.clone();
        opts.extend(s.opts.iter().cloned());
        // A later value replaces an earlier one, as in fio.
        let mut last: BTreeMap<String, Opt> = BTreeMap::new();
        for o in opts {
            let key = options::canonical(&o.key).to_string();
            last.insert(key, o);
        }
        if meta::engine_op(&last).is_some() {
            if let Some(j) = meta::job(s, &last, map, src, notes) {
                meta_jobs.push(j);
            }
            continue;
        }
        if let Some(j) = job::job(s, &last, map, src, notes) {
            jobs.push(j);
        }
    }
    if !meta_jobs.is_empty() && notes.refused.is_empty() {
        if let Some(j) = jobs.first() {
            notes.refuse(
                &j.at,
                &format!("[{}]", j.name),
                "block I/O in a file whose other jobs use fio's file engines; volbench's suite is \
                 one or the other: import them apart",
            );
            return Err(notes.refusal());
        }
        return meta::translate(origin, meta_jobs, notes);
    }
    if notes.refused.is_empty() && jobs.is_empty() {
        return Err(VbError::input(format!("{origin}: no job sections")));
    }
    if !notes.refused.is_empty() {
        return Err(notes.refusal());
    }
    let groups = groups(jobs, notes);
    let runs: Vec<Job> = groups.into_iter().filter_map(|g| merge(g, notes)).collect();
    notes.check()?;
    let Some(head) = runs.first() else {
        return Err(VbError::input(format!("{origin}: no job sections")));
    };
    same_suite(&runs, head, notes);
    notes.check()?;
    let mut suite = SuiteFile::new(
        &file_name(origin, "fio"),
        &format!("fio job file {origin}"),
        TableKind::Patterns,
        // fio runs no discarded warm-up run of its own.
        false,
    );
    suite.threads_total = head.threads_total;
    suite.defaults = Defaults {
        size: head.size.map(size_text).and_then(value),
        // The suite's file count is the first run's; each run states its own.
        files: value(head.files),
        direct: value(head.direct),
        write_sync: head.write_sync.and_then(value),
        engine: value(head.engine),
        seed: head.seed.and_then(value),
        ..head.data.clone()
    };
    let mut imp = Imported::new(suite, head.target.clone());
    for j in runs {
        imp.push_run(j.run, j.said);
    }
    Ok(imp)
}

/// Groups: a job with stonewall (or waiting for the whole running group)
/// starts after everything before it; the others run with the group before.
fn groups(jobs: Vec<Job>, notes: &mut Notes) -> Vec<Vec<Job>> {
    let mut groups: Vec<Vec<Job>> = Vec::new();
    for j in jobs {
        let new_group = match (&j.wait_for, groups.last()) {
            (_, None) => true,
            (Some(w), Some(g)) => {
                if g.iter().all(|x| &x.name == w) {
                    true
                } else {
                    notes.refuse(
                        &j.at,
                        &format!("wait_for={w}"),
                        "waiting for one job while others of its group still run is not supported yet",
                    );
                    false
                }
            }
            (None, Some(_)) => j.stonewall,
        };
        if new_group {
            groups.push(vec![j]);
        } else if let Some(g) = groups.last_mut() {
            g.push(j);
        }
    }
    groups
}

/// One group's jobs as one run: the same workload, their threads, files and
/// sizes added (refused in `notes` when a job's workload differs). The
/// group's first job, with the sums, is the run.
fn merge(g: Vec<Job>, notes: &mut Notes) -> Option<Job> {
    let first = g.first()?.clone();
    let mut head = first.clone();
    let (mut files, mut size, mut threads) = (0u64, Some(0u64), 0u64);
    for j in &g {
        // The same run but for its name and what the group adds up.
        let mut run = j.run.clone();
        run.set_name(first.run.name());
        let same = run == first.run
            && j.target == first.target
            && j.direct == first.direct
            && j.engine == first.engine
            && j.shared_file == first.shared_file
            && j.rate.is_some() == first.rate.is_some()
            // A bandwidth cap, or caps per direction, are per job in fio;
            // joined jobs would need theirs summed.
            && (j.name == first.name
                || (j.run.rate.is_none() && j.run.rate_iops.is_none() && j.run.rate_bw.is_none()));
        if !same {
            notes.refuse(
                &j.at,
                &format!("[{}]", j.name),
                format!(
                    "runs at the same time as [{}] ({}) with a different workload; volbench runs \
                     one workload at a time: put stonewall in [{}] to run it after",
                    first.name, first.at, j.name
                ),
            );
            continue;
        }
        if j.name != first.name && (j.step > 0 || first.step > 0) {
            notes.refuse(
                &j.at,
                &format!("[{}]", j.name),
                format!(
                    "shares its file with [{}] in one group with offset_increment: fio counts each \
                     job's clones from 0, volbench's threads are counted over the run (put \
                     stonewall in [{}] to run it after)",
                    first.name, j.name
                ),
            );
            continue;
        }
        threads += j.threads;
        if j.shared_file {
            files = j.files;
            size = j.size;
        } else {
            files += j.files * j.numjobs;
            size = match (size, j.size) {
                (Some(t), Some(s)) => Some(t.saturating_add(s.saturating_mul(j.numjobs))),
                _ => None,
            };
        }
        if j.name != first.name {
            head.said.extend(j.said.iter().cloned());
            head.said.push(Mapping {
                at: j.at.clone(),
                option: format!("[{}]", j.name),
                how: super::How::Exact(format!(
                    "runs with [{}] in one group: its threads join this run",
                    first.name
                )),
            });
            head.rate = match (head.rate, j.rate) {
                (Some(x), Some(y)) => Some(x + y),
                (r, _) => r,
            };
            head.io_limit = match (head.io_limit, j.io_limit) {
                (Some(x), Some(y)) => Some(x.saturating_add(y)),
                (l, _) => l,
            };
        }
    }
    head.threads = threads;
    head.size = size;
    head.files = files.max(1);
    // A replay takes its I/O from the log: threads and files are not its keys.
    if head.run.replay.is_none() {
        head.run.threads = value(threads);
        head.run.files = value(head.files);
        head.run.rate = head.rate.and_then(value).or(head.run.rate.take());
    }
    head.run.io_limit = head.io_limit.map(size_text).and_then(value);
    Some(head)
}

/// The runs of one suite share its target, working set, engine, direct
/// setting, seed, sync and data: a job that differs is refused.
fn same_suite(runs: &[Job], head: &Job, notes: &mut Notes) {
    for j in runs {
        let differs = |what: &str, notes: &mut Notes| {
            notes.refuse(
                &j.at,
                &format!("[{}]", j.name),
                format!(
                    "its {what} differs from [{}]'s; volbench's runs share one target, one \
                     working set size, one engine and one direct setting (import them apart)",
                    head.name
                ),
            )
        };
        if j.target != head.target {
            differs("target", notes);
        } else if j.size != head.size {
            differs("working set size", notes);
        } else if j.engine != head.engine {
            differs("ioengine", notes);
        } else if j.direct != head.direct {
            differs("direct setting", notes);
        } else if j.seed != head.seed {
            differs("randseed", notes);
        } else if j.write_sync != head.write_sync {
            differs("sync setting", notes);
        } else if j.data != head.data {
            differs(
                "data (verify, buffer_compress_percentage, dedupe_percentage)",
                notes,
            );
        }
    }
}
