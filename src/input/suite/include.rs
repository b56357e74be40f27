//! A suite's `[[include]]` entries: other suite files (or built-in suites)
//! whose runs join the suite's own where the entry stands, read through a
//! `Reader` (the file system for `suite run`, a map for the fuzz target),
//! relative to the including file, at most `MAX_INCLUDE_DEPTH` deep, a
//! cycle or a file included twice refused with the chain named.
//!
//! What an included file brings is its runs. Its `[defaults]` hold for its
//! own runs (and its own includes'), over the including files' defaults,
//! as fio's `[global]` holds for the jobs after it, without leaking back
//! out to the runs that follow the include. Keys that set the whole job
//! (one engine, one data pattern, one fill) cannot be scoped to some runs:
//! an included file may give them only the value the suite itself gives
//! (`expand::check_included`).
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::{BUILTIN, SuiteFile, line_of, parse, published};
use crate::error::{Result, VbError};
use crate::units::bounds;

/// One `[[include]]`: a suite file (relative to the including file's
/// directory) or a built-in suite by name.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct IncludeEntry {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) suite: Option<String>,
}

/// A suite file an include names, as a `Reader` found it.
pub struct Source {
    /// How messages name it (the path as joined, relative when the
    /// including file's was).
    pub origin: String,
    pub text: String,
    /// The same for one file however it is named (a canonical path), so a
    /// cycle through `./a.toml` and `a.toml` is seen.
    pub key: String,
    /// Where its own includes are read from.
    pub path: PathBuf,
}

/// Reads the files includes name. `from` is the including file's path.
pub trait Reader {
    fn read(&mut self, from: &Path, name: &str) -> Result<Source>;
}

/// The file system: `name` relative to the including file's directory
/// (an absolute `name` as it is), read by `input::file`'s capped reader.
pub struct Files;

impl Reader for Files {
    fn read(&mut self, from: &Path, name: &str) -> Result<Source> {
        let path = from.parent().unwrap_or(Path::new("")).join(name);
        let text = crate::input::file::read_text(&path, "suite file", bounds::MAX_INPUT_FILE)?;
        let key = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        Ok(Source {
            origin: path.display().to_string(),
            text,
            key: key.display().to_string(),
            path,
        })
    }
}

/// The reader of a suite that is not a file (an import's text, a built-in
/// suite): a file include is refused by name, never left out.
struct NoFiles;

impl Reader for NoFiles {
    fn read(&mut self, _: &Path, name: &str) -> Result<Source> {
        Err(VbError::input(format!(
            "'{name}' is not read: this suite is not a file, so it includes only built-in suites (suite = \"NAME\")"
        )))
    }
}

/// One file of a suite with its includes read.
#[derive(Debug, Clone)]
pub(crate) struct Loaded {
    pub(crate) origin: String,
    pub(crate) text: String,
    pub(crate) suite: SuiteFile,
    /// The file that includes this one (an index into `Resolved::files`);
    /// None for the suite itself.
    pub(crate) parent: Option<usize>,
    key: String,
    /// None for a built-in suite, which has no directory to read from.
    path: Option<PathBuf>,
}

/// A suite with every include read: its files (the suite's own first) and
/// its runs in the order they run.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub(crate) files: Vec<Loaded>,
    /// (file, the run's index in that file's `[[run]]` list).
    pub(crate) order: Vec<(usize, usize)>,
    /// What `--published` took from each included file, to say.
    pub(crate) said: Vec<String>,
}

impl Resolved {
    /// A suite that is not a file: its built-in includes read, a file
    /// include refused.
    pub(crate) fn alone(origin: &str, text: &str, suite: SuiteFile) -> Result<Self> {
        resolve(origin, text, None, suite, &mut NoFiles, false)
    }

    /// The suite itself (its name, table and whole-job keys are the job's).
    pub(crate) fn top(&self) -> Option<&Loaded> {
        self.files.first()
    }

    /// The files from `file` up to the suite itself: whose defaults a run
    /// of `file` takes, nearest first.
    pub(crate) fn chain(&self, file: usize) -> Vec<&Loaded> {
        let mut out = Vec::new();
        let mut at = Some(file);
        // Each parent was read before its child: the walk ends.
        while let Some(i) = at {
            let Some(f) = self.files.get(i) else { break };
            out.push(f);
            at = f.parent;
        }
        out
    }

    /// The included files that have a published variant not chosen, so a
    /// run of them is not read as the paper's.
    pub(crate) fn unpublished(&self) -> Vec<&str> {
        self.files
            .iter()
            .skip(1)
            .filter(|f| f.suite.published.is_some())
            .map(|f| f.suite.name.as_str())
            .collect()
    }
}

/// Reads `suite`'s includes (and theirs). `path` is the suite's own file
/// (None for a built-in suite); with `published`, every included file's
/// published variant is taken, and a file without one is refused.
pub fn resolve(
    origin: &str,
    text: &str,
    path: Option<&Path>,
    suite: SuiteFile,
    reader: &mut dyn Reader,
    published: bool,
) -> Result<Resolved> {
    let key = match path {
        Some(p) => std::fs::canonicalize(p)
            .unwrap_or_else(|_| p.to_path_buf())
            .display()
            .to_string(),
        None => origin.to_string(),
    };
    let mut r = Resolved {
        files: vec![Loaded {
            origin: origin.to_string(),
            text: text.to_string(),
            suite,
            parent: None,
            key,
            path: path.map(Path::to_path_buf),
        }],
        order: Vec::new(),
        said: Vec::new(),
    };
    let mut walk = Walk {
        reader,
        published,
        stack: vec![0],
    };
    walk.file(&mut r, 0)?;
    Ok(r)
}

struct Walk<'r> {
    reader: &'r mut dyn Reader,
    published: bool,
    /// The files being read, the suite first: the chain a cycle names.
    stack: Vec<usize>,
}

enum Item {
    Run(usize),
    Include(usize),
}

impl Walk<'_> {
    /// Adds file `at`'s runs and includes, in the order the file gives them.
    fn file(&mut self, r: &mut Resolved, at: usize) -> Result<()> {
        let Some(f) = r.files.get(at) else {
            return Ok(());
        };
        let mut items: Vec<(usize, Item)> = f
            .suite
            .runs
            .iter()
            .enumerate()
            .map(|(k, e)| (e.span().start, Item::Run(k)))
            .chain(
                f.suite
                    .includes
                    .iter()
                    .enumerate()
                    .map(|(k, e)| (e.span().start, Item::Include(k))),
            )
            .collect();
        items.sort_by_key(|(start, _)| *start);
        for (_, item) in items {
            match item {
                Item::Run(k) => {
                    if r.order.len() >= bounds::MAX_RUNS {
                        let top = r.top().map(|t| t.origin.as_str()).unwrap_or_default();
                        return Err(VbError::input(format!(
                            "{top}: the suite and its includes hold more than {} runs",
                            bounds::MAX_RUNS
                        )));
                    }
                    r.order.push((at, k));
                }
                Item::Include(k) => self.include(r, at, k)?,
            }
        }
        Ok(())
    }

    /// Reads file `at`'s include `k`, checks it and walks it.
    fn include(&mut self, r: &mut Resolved, at: usize, k: usize) -> Result<()> {
        let Some(f) = r.files.get(at) else {
            return Ok(());
        };
        let Some(entry) = f.suite.includes.get(k) else {
            return Ok(());
        };
        let here = format!(
            "{} line {}: include",
            f.origin,
            line_of(&f.text, entry.span().start)
        );
        if self.stack.len() > bounds::MAX_INCLUDE_DEPTH {
            return Err(VbError::input(format!(
                "{here}: include nests deeper than {} files ({})",
                bounds::MAX_INCLUDE_DEPTH,
                self.chain(r)
            )));
        }
        let source = match (&entry.get_ref().file, &entry.get_ref().suite) {
            (Some(name), None) => {
                let Some(from) = &f.path else {
                    return Err(VbError::input(format!(
                        "{here}: {} is not a file, so it includes only built-in suites (suite = \"NAME\")",
                        f.origin
                    )));
                };
                if name.len() > bounds::MAX_PATH_TEXT {
                    return Err(VbError::input(format!(
                        "{here}: a file name of {} bytes; at most {}",
                        name.len(),
                        bounds::MAX_PATH_TEXT
                    )));
                }
                let from = from.clone();
                self.reader
                    .read(&from, name)
                    .map_err(|e| VbError::input(format!("{here}: {}", e.message)))?
            }
            (None, Some(name)) => {
                builtin(name).map_err(|e| VbError::input(format!("{here}: {e}")))?
            }
            _ => {
                return Err(VbError::input(format!(
                    "{here}: give one of file = \"PATH\" (a suite file, relative to this one) or suite = \"NAME\" (a built-in suite)"
                )));
            }
        };
        if self
            .stack
            .iter()
            .any(|&i| r.files.get(i).is_some_and(|g| g.key == source.key))
        {
            return Err(VbError::input(format!(
                "{here}: an include cycle: {} includes {}",
                self.chain(r),
                crate::error::clip(&source.origin)
            )));
        }
        if let Some(twice) = r.files.iter().find(|g| g.key == source.key) {
            return Err(VbError::input(format!(
                "{here}: {} is included twice (first through {}); its runs would run twice under the same names",
                crate::error::clip(&source.origin),
                r.files
                    .get(twice.parent.unwrap_or(0))
                    .map(|p| p.origin.as_str())
                    .unwrap_or_default()
            )));
        }
        let mut suite = parse(&source.origin, &source.text)?;
        if self.published {
            let (p, lines) = published::select(suite, &source.origin)?;
            suite = p;
            r.said.extend(lines);
        }
        if let Some(e) = suite.runs.iter().find(|e| e.get_ref().replay.is_some()) {
            return Err(VbError::input(format!(
                "{} line {}: replay: a replay is its suite's only run, so its file cannot be included",
                source.origin,
                line_of(&source.text, e.span().start)
            )));
        }
        let path = (!source.path.as_os_str().is_empty()).then_some(source.path);
        r.files.push(Loaded {
            origin: source.origin,
            text: source.text,
            suite,
            parent: Some(at),
            key: source.key,
            path,
        });
        let child = r.files.len() - 1;
        self.stack.push(child);
        self.file(r, child)?;
        self.stack.pop();
        Ok(())
    }

    /// "a.toml > b.toml > c.toml": the files being read.
    fn chain(&self, r: &Resolved) -> String {
        self.stack
            .iter()
            .filter_map(|&i| r.files.get(i).map(|f| crate::error::clip(&f.origin)))
            .collect::<Vec<_>>()
            .join(" includes ")
    }
}

/// A built-in suite as an include names it.
fn builtin(name: &str) -> std::result::Result<Source, String> {
    match BUILTIN.iter().find(|(n, _)| *n == name) {
        Some((n, text)) => Ok(Source {
            origin: format!("built-in suite {n}"),
            text: (*text).to_string(),
            key: format!("built-in suite {n}"),
            path: PathBuf::new(),
        }),
        None => {
            let names: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
            Err(format!(
                "no built-in suite named '{}' (built-in: {})",
                crate::error::clip(name),
                names.join(", ")
            ))
        }
    }
}

/// The keys of `[defaults]` that set the whole job: one engine, one page
/// cache policy, one data pattern and one fill for every run. Every key is
/// named (none left to `..`), so a key added to `Defaults` does not
/// compile until it is placed here or scoped to runs in `expand`.
fn whole_job(d: &super::Defaults) -> [(&'static str, &super::P); 13] {
    let super::Defaults {
        // Scoped to an included file's runs (`expand::entry_runs`).
        size: _,
        files: _,
        threads: _,
        iodepth: _,
        duration: _,
        warmup: _,
        arrivals: _,
        engine,
        direct,
        write_sync,
        interval,
        seed,
        fill_bs,
        fill_threads,
        open_files,
        invalidate,
        compress,
        dedup,
        dedup_unit,
        verify,
    } = d;
    [
        ("engine", engine),
        ("direct", direct),
        ("write_sync", write_sync),
        ("interval", interval),
        ("seed", seed),
        ("fill_bs", fill_bs),
        ("fill_threads", fill_threads),
        ("open_files", open_files),
        ("invalidate", invalidate),
        ("compress", compress),
        ("dedup", dedup),
        ("dedup_unit", dedup_unit),
        ("verify", verify),
    ]
}

/// An included file may repeat, not change, what sets the whole job: its
/// whole-job `[defaults]`, `threads_total` and `host_counts` must be the
/// suite's own (its `table`, `warmup_run`, name and description describe
/// it run alone; the suite's lay out and start the job).
pub(crate) fn check_whole_job(r: &Resolved) -> Result<()> {
    let Some(top) = r.top() else {
        return Ok(());
    };
    let theirs = whole_job(&top.suite.defaults);
    for f in r.files.iter().skip(1) {
        let at = |v: &Spanned<super::Param>| line_of(&f.text, v.span().start);
        for ((key, mine), (_, suite_value)) in whole_job(&f.suite.defaults).iter().zip(&theirs) {
            let Some(v) = mine else { continue };
            if suite_value.as_ref().map(Spanned::get_ref) == Some(v.get_ref()) {
                continue;
            }
            let given = match suite_value {
                Some(s) => format!("gives {}", s.get_ref().text()),
                None => "does not set it".to_string(),
            };
            return Err(VbError::input(format!(
                "{} line {}: {key}: sets the whole job (one engine, cache policy, data and fill for every run), \
                 so an included file may only repeat the suite's value ({} {given}); set it there",
                f.origin,
                at(v),
                top.origin
            )));
        }
        if f.suite.threads_total != top.suite.threads_total {
            return Err(VbError::input(format!(
                "{}: threads_total = {} differs from {}'s: it says how the whole job spreads its threads over the targets",
                f.origin, f.suite.threads_total, top.origin
            )));
        }
        if let Some(h) = &f.suite.host_counts {
            if top.suite.host_counts.as_ref().map(Spanned::get_ref) != Some(h.get_ref()) {
                return Err(VbError::input(format!(
                    "{} line {}: host_counts: sweeps the whole job over host counts, so an included file may only repeat {}'s",
                    f.origin,
                    at(h),
                    top.origin
                )));
            }
        }
    }
    Ok(())
}
