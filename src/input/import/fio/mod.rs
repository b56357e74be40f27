//! fio job files: `[global]` and job sections, `include`, `${VAR}`,
//! groups separated by `stonewall`. A group's jobs run at once in fio, so a
//! group becomes one run whose threads are the jobs' together; its jobs must
//! therefore do the same thing.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod data;
mod files;
mod job;
mod meta;
pub(crate) mod options;
mod parse;
mod rate;
mod replay;
mod shape;
mod workload;

use std::collections::BTreeMap;
use std::path::Path;

use super::{Draft, DraftRun, Imported, Mapping, Notes, PathMap, run_name};
use crate::error::{Result, VbError};
use parse::{Job, Nest, Opt, Section, parse};
pub use parse::{MAX_EXPANDED_LINE, MAX_INCLUDE_DEPTH, MAX_INCLUDES, MAX_JOBS, Sources};

/// Reads a job file and imports it.
pub fn import_file(path: &Path, map: &PathMap, src: &Sources) -> Result<Imported> {
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
    let draft = translate(origin, &sections, map, src, &mut notes)?;
    notes.check()?;
    Ok(Imported { draft, notes })
}

fn translate(
    origin: &str,
    sections: &[Section],
    map: &PathMap,
    src: &Sources,
    notes: &mut Notes,
) -> Result<Draft> {
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
            return Ok(Draft::default());
        }
        return meta::translate(origin, meta_jobs, notes);
    }
    if notes.refused.is_empty() && jobs.is_empty() {
        return Err(VbError::input(format!("{origin}: no job sections")));
    }
    if !notes.refused.is_empty() {
        return Ok(Draft::default());
    }
    let groups = groups(jobs, notes);
    let runs: Vec<(DraftRun, Job)> = groups.into_iter().filter_map(|g| merge(g, notes)).collect();
    notes.check()?;
    let Some((_, head)) = runs.first() else {
        return Err(VbError::input(format!("{origin}: no job sections")));
    };
    let head = head.clone();
    same_suite(&runs, &head, notes);
    notes.check()?;
    Ok(Draft {
        name: run_name(
            Path::new(origin)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "fio".into())
                .as_str(),
        ),
        source: format!("fio job file {origin}"),
        target: head.target.clone(),
        size: head.size,
        // The suite's file count is the first run's; each run states its own.
        files: Some(head.files),
        fill_bs: None,
        threads_total: head.threads_total,
        direct: head.direct,
        write_sync: head.write_sync,
        data: head.data.clone(),
        engine: Some(head.engine),
        interval_s: None,
        seed: head.seed,
        hosts: Vec::new(),
        global: Vec::new(),
        runs: runs.into_iter().map(|(r, _)| r).collect(),
        tree: None,
    })
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
/// sizes added (refused in `notes` when a job's workload differs).
fn merge(g: Vec<Job>, notes: &mut Notes) -> Option<(DraftRun, Job)> {
    let first = g.first()?.clone();
    let mut run = first.run.clone();
    let mut files = 0;
    let mut size: Option<u64> = Some(0);
    let mut threads = 0;
    for j in &g {
        let mut a = j.run.clone();
        let mut b = first.run.clone();
        for r in [&mut a, &mut b] {
            r.name.clear();
            r.notes.clear();
            r.threads = 0;
            r.rate = None;
            r.io_limit = None;
        }
        let same = a == b
            && j.target == first.target
            && j.direct == first.direct
            && j.engine == first.engine
            && j.shared_file == first.shared_file
            && (j.run.rate.is_some() == first.run.rate.is_some())
            // A bandwidth cap is per job in fio; joined jobs would need theirs summed.
            && (j.name == first.name
                || (j.run.shape == first.run.shape && !j.run.shape.iter().any(|(k, _)| *k == "rate")));
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
        threads += j.run.threads;
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
            run.notes.extend(j.run.notes.iter().cloned());
            run.notes.push(Mapping {
                at: j.at.clone(),
                option: format!("[{}]", j.name),
                how: super::How::Exact(format!(
                    "runs with [{}] in one group: its threads join this run",
                    first.name
                )),
            });
        }
        run.rate = match (run.rate, j.run.rate) {
            (Some(x), Some(y)) if j.name != first.name => Some(x + y),
            (r, _) => r,
        };
        run.io_limit = match (run.io_limit, j.run.io_limit) {
            (Some(x), Some(y)) if j.name != first.name => Some(x.saturating_add(y)),
            (l, _) => l,
        };
    }
    run.threads = threads;
    run.files = Some(files.max(1));
    let mut head = first.clone();
    head.size = size;
    head.files = files.max(1);
    Some((run, head))
}

/// The runs of one suite share its target, working set, engine, direct
/// setting, seed, sync and data: a job that differs is refused.
fn same_suite(runs: &[(DraftRun, Job)], head: &Job, notes: &mut Notes) {
    for (_, j) in runs {
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
