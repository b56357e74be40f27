//! fio job files: `[global]` and job sections, `include`, `${VAR}`,
//! groups separated by `stonewall`. A group's jobs run at once in fio, so a
//! group becomes one run whose threads are the jobs' together; its jobs must
//! therefore do the same thing.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{Draft, DraftRun, Imported, Mapping, Notes, PathMap, run_name};
use crate::error::{Result, VbError};

/// Include files nest at most this deep (a file including itself stops here).
pub const MAX_INCLUDE_DEPTH: usize = 8;
/// Include files read in one import, all told: depth alone does not bound
/// a file that includes another many times, each including many more.
pub const MAX_INCLUDES: usize = 256;
/// A line after `${VAR}` expansion: a short line naming a long variable
/// many times would otherwise expand to gigabytes.
pub const MAX_EXPANDED_LINE: usize = 1 << 20;
/// Job sections in one file, numjobs included.
pub const MAX_JOBS: u64 = 4096;

#[derive(Debug, Clone)]
pub(crate) struct Opt {
    pub(crate) key: String,
    pub(crate) value: Option<String>,
    pub(crate) at: String,
}

impl Opt {
    pub(crate) fn text(&self) -> String {
        match &self.value {
            Some(v) => format!("{}={v}", self.key),
            None => self.key.clone(),
        }
    }
    pub(crate) fn val(&self) -> &str {
        self.value.as_deref().unwrap_or("")
    }
}

#[derive(Debug)]
pub(crate) struct Section {
    pub(crate) name: String,
    pub(crate) at: String,
    pub(crate) opts: Vec<Opt>,
}

/// Where include files and `${VAR}` come from.
pub struct Sources<'a> {
    pub env: &'a dyn Fn(&str) -> Option<String>,
    pub read: &'a dyn Fn(&Path) -> Result<String>,
    /// fio's current directory, for jobs that name no directory or filename.
    pub cwd: PathBuf,
}

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

/// How deep the include being read is, and how many were read so far.
#[derive(Default)]
struct Nest {
    depth: usize,
    files: usize,
}

fn parse(
    origin: &str,
    text: &str,
    path: &Path,
    src: &Sources,
    nest: &mut Nest,
    out: &mut Vec<Section>,
    notes: &mut Notes,
) -> Result<()> {
    for (n, raw) in crate::input::file::strip_bom(text).lines().enumerate() {
        let at = format!("{origin} line {}", n + 1);
        // fio ends every line at its first ';' or '#', after a value too
        // (`runtime=60 # one minute`), so the same text is a comment here.
        let line = raw
            .find([';', '#'])
            .map_or(raw, |i| raw.get(..i).unwrap_or(raw))
            .trim();
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix("include ") {
            if nest.depth >= MAX_INCLUDE_DEPTH {
                return Err(VbError::input(format!(
                    "{at}: include nests deeper than {MAX_INCLUDE_DEPTH} files"
                )));
            }
            nest.files += 1;
            if nest.files > MAX_INCLUDES {
                return Err(VbError::input(format!(
                    "{at}: more than {MAX_INCLUDES} include files read in all"
                )));
            }
            let name = rest.trim();
            let inc = if Path::new(name).is_absolute() {
                PathBuf::from(name)
            } else {
                path.parent().unwrap_or(Path::new(".")).join(name)
            };
            let text = (src.read)(&inc).map_err(|e| VbError::input(format!("{at}: {e}")))?;
            notes.exact(&at, line, "its options read in place");
            nest.depth += 1;
            parse(
                &inc.display().to_string(),
                &text,
                &inc,
                src,
                nest,
                out,
                notes,
            )?;
            nest.depth -= 1;
            continue;
        }
        if let Some(name) = line.strip_prefix('[') {
            let Some(name) = name.strip_suffix(']') else {
                return Err(VbError::input(format!(
                    "{at}: '{line}' opens a section without closing ']'"
                )));
            };
            if out.len() as u64 >= MAX_JOBS {
                return Err(VbError::input(format!(
                    "{at}: more than {MAX_JOBS} sections"
                )));
            }
            out.push(Section {
                name: name.trim().to_string(),
                at,
                opts: Vec::new(),
            });
            continue;
        }
        let Some(section) = out.last_mut() else {
            return Err(VbError::input(format!(
                "{at}: '{line}' comes before any [section]"
            )));
        };
        let expanded = expand_vars(line, src).map_err(|e| VbError::input(format!("{at}: {e}")))?;
        let (key, value) = match expanded.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim().to_string())),
            None => (expanded.as_str(), None),
        };
        section.opts.push(Opt {
            key: key.to_ascii_lowercase(),
            value,
            at,
        });
    }
    Ok(())
}

/// `${VAR}` from the environment, as fio does; fio's own `$ncpus` style
/// expressions are refused rather than guessed.
fn expand_vars(line: &str, src: &Sources) -> std::result::Result<String, String> {
    let mut out = String::new();
    let mut rest = line;
    while let Some(i) = rest.find('$') {
        out.push_str(rest.get(..i).unwrap_or(""));
        let after = rest.get(i + 1..).unwrap_or("");
        if let Some(body) = after.strip_prefix('{') {
            let Some(end) = body.find('}') else {
                return Err(format!("'{line}': '${{' without its '}}'"));
            };
            let name = body.get(..end).unwrap_or("");
            match (src.env)(name) {
                Some(v) if out.len() + v.len() > MAX_EXPANDED_LINE => {
                    return Err(format!(
                        "${{{name}}} expands the line past {MAX_EXPANDED_LINE} bytes"
                    ));
                }
                Some(v) => out.push_str(&v),
                None => return Err(format!("${{{name}}} is not set in the environment")),
            }
            rest = body.get(end + 1..).unwrap_or("");
        } else {
            // The option's name only: a line of a file that is no job file
            // (`include /etc/shadow`, its hashes full of '$') is not echoed.
            let key = line.split('=').next().unwrap_or_default().trim();
            let shown = if super::option_like(key) {
                format!("'{key}=...'")
            } else {
                "this line".to_string()
            };
            return Err(format!(
                "{shown}: fio's '$' expressions ($ncpus, $mb_memory, math) are not supported yet"
            ));
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// One job section after its `[global]` options, as volbench sees it.
#[derive(Debug, Clone)]
pub(crate) struct Job {
    pub(crate) name: String,
    pub(crate) at: String,
    pub(crate) stonewall: bool,
    pub(crate) wait_for: Option<String>,
    pub(crate) numjobs: u64,
    pub(crate) run: DraftRun,
    /// Target directory, device or file path.
    pub(crate) target: String,
    /// A file every clone shares (filename=) rather than one each.
    pub(crate) shared_file: bool,
    /// Bytes per job (over its files) and files per job; None = whole device.
    pub(crate) size: Option<u64>,
    pub(crate) files: u64,
    pub(crate) direct: bool,
    pub(crate) engine: &'static str,
    pub(crate) seed: Option<u64>,
    /// fio sync=: "sync" or "dsync" (O_SYNC / O_DSYNC writes).
    pub(crate) write_sync: Option<&'static str>,
    /// Suite [defaults] data keys (compress, dedup, verify).
    pub(crate) data: Vec<(&'static str, String)>,
    /// `threads` is the total over a list of targets (filename=a:b).
    pub(crate) threads_total: bool,
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
            let key = super::fio_job::alias(&o.key).to_string();
            last.insert(key, o);
        }
        if super::fio_meta::engine_op(&last).is_some() {
            if let Some(j) = super::fio_meta::job(s, &last, map, src, notes) {
                meta_jobs.push(j);
            }
            continue;
        }
        if let Some(j) = super::fio_job::job(s, &last, map, src, notes) {
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
        return super::fio_meta::translate(origin, meta_jobs, notes);
    }
    if notes.refused.is_empty() && jobs.is_empty() {
        return Err(VbError::input(format!("{origin}: no job sections")));
    }
    if !notes.refused.is_empty() {
        return Ok(Draft::default());
    }
    // Groups: a job with stonewall (or waiting for the whole running group)
    // starts after everything before it.
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
    let mut runs: Vec<(DraftRun, Job)> = Vec::new();
    for g in groups {
        let Some(first) = g.first().cloned() else {
            continue;
        };
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
        runs.push((run, head));
    }
    notes.check()?;
    let Some((_, head)) = runs.first() else {
        return Err(VbError::input(format!("{origin}: no job sections")));
    };
    let head = head.clone();
    for (r, j) in &runs {
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
        let _ = r;
    }
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
