//! fio job files read into sections of options: `[global]` and job
//! sections, `include`, `${VAR}`, and the vocabulary every part of the fio
//! importer shares (an option, a section, a job). A leaf: it uses none of
//! its siblings.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::path::{Path, PathBuf};

use super::super::table::Said;
use super::super::{Mapping, Notes};
use crate::error::{Result, VbError};
use crate::input::suite::{Defaults, RunEntry};
use crate::spec::{Arrivals, Pattern};

/// Include files nest at most this deep (a file including itself stops here).
pub use crate::units::bounds::MAX_INCLUDE_DEPTH;
/// Include files read in one import, all told: depth alone does not bound
/// a file that includes another many times, each including many more.
pub const MAX_INCLUDES: usize = 256;
/// A line after `${VAR}` expansion: a short line naming a long variable
/// many times would otherwise expand to gigabytes.
pub const MAX_EXPANDED_LINE: usize = 1 << 20;
/// Job sections in one file, numjobs included.
pub const MAX_JOBS: u64 = 4096;

pub(crate) use super::super::table::Opt;

#[derive(Debug)]
pub(crate) struct Section {
    pub(crate) name: String,
    pub(crate) at: String,
    /// The directory of the job file the section is in (read_iolog's
    /// relative name is found there).
    pub(crate) dir: PathBuf,
    pub(crate) opts: Vec<Opt>,
}

/// Where include files and `${VAR}` come from.
pub struct Sources<'a> {
    pub env: &'a dyn Fn(&str) -> Option<String>,
    pub read: &'a dyn Fn(&Path) -> Result<String>,
    /// fio's current directory, for jobs that name no directory or filename.
    pub cwd: PathBuf,
}

/// How deep the include being read is, and how many were read so far.
#[derive(Default)]
pub(super) struct Nest {
    depth: usize,
    files: usize,
}

pub(super) fn parse(
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
                // Not shown: the line may be from a file that is no job file.
                return Err(VbError::input(format!(
                    "{at}: a line opens a section without closing ']' (its text is not shown: \
                     is this a fio job file?)"
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
                dir: path.parent().unwrap_or(Path::new(".")).to_path_buf(),
                opts: Vec::new(),
            });
            continue;
        }
        let Some(section) = out.last_mut() else {
            // `include /etc/shadow` as the first line reached here with the
            // file's first line: only an option's name is ever shown.
            let key = line.split('=').next().unwrap_or_default().trim();
            let what = if super::super::option_like(key) {
                format!("'{key}'")
            } else {
                "a line (its text is not shown: is this a fio job file?)".to_string()
            };
            return Err(VbError::input(format!(
                "{at}: {what} comes before any [section]"
            )));
        };
        let expanded = expand_vars(line, src).map_err(|e| VbError::input(format!("{at}: {e}")))?;
        let (key, value) = match expanded.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim().to_string())),
            None => (expanded.as_str(), None),
        };
        section
            .opts
            .push(Opt::new(&at, &key.to_ascii_lowercase(), value.as_deref()));
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
                return Err(format!("{}: '${{' without its '}}'", shown(line)));
            };
            let name = body.get(..end).unwrap_or("");
            let var = if super::super::option_like(name) {
                format!("${{{name}}}")
            } else {
                "a ${...} variable".to_string()
            };
            match (src.env)(name) {
                Some(v) if out.len() + v.len() > MAX_EXPANDED_LINE => {
                    return Err(format!(
                        "{var} expands the line past {MAX_EXPANDED_LINE} bytes"
                    ));
                }
                Some(v) => out.push_str(&v),
                None => return Err(format!("{var} is not set in the environment")),
            }
            rest = body.get(end + 1..).unwrap_or("");
        } else if let Some(word) = ["jobname", "jobnum", "filenum", "clientuid"]
            .into_iter()
            .find(|w| after.starts_with(w))
        {
            // filename_format's own keywords, which fio fills in per file.
            out.push('$');
            out.push_str(word);
            rest = after.get(word.len()..).unwrap_or("");
        } else {
            return Err(format!(
                "{}: fio's '$' expressions ($ncpus, $mb_memory, math) are not supported yet",
                shown(line)
            ));
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// How a line is named in an error: by its option's name only, so a line
/// of a file that is no job file (`include /etc/shadow`, its hashes full of
/// '$') is never echoed.
fn shown(line: &str) -> String {
    let key = line.split('=').next().unwrap_or_default().trim();
    if super::super::option_like(key) {
        format!("'{key}=...'")
    } else {
        "this line".to_string()
    }
}

/// One job section after its `[global]` options, as volbench sees it.
#[derive(Debug, Clone)]
pub(crate) struct Job {
    pub(crate) name: String,
    pub(crate) at: String,
    pub(crate) stonewall: bool,
    pub(crate) wait_for: Option<String>,
    pub(crate) numjobs: u64,
    /// The job's run as the suite writes it, but for what a group adds up.
    pub(crate) run: RunEntry,
    /// How the job's options were mapped.
    pub(crate) said: Vec<Mapping>,
    /// What jobs run at once add up: threads, IOPS, bytes of I/O.
    pub(crate) threads: u64,
    pub(crate) rate: Option<f64>,
    pub(crate) io_limit: Option<u64>,
    /// Target directory, device or file path.
    pub(crate) target: String,
    /// A file every clone shares (filename=) rather than one each.
    pub(crate) shared_file: bool,
    /// offset_increment on a shared file: the clones' starts are spaced by
    /// it, counted from this job's first clone.
    pub(crate) step: u64,
    /// Bytes per job (over its files) and files per job; None = whole device.
    pub(crate) size: Option<u64>,
    pub(crate) files: u64,
    pub(crate) direct: bool,
    pub(crate) engine: &'static str,
    pub(crate) seed: Option<u64>,
    /// fio sync=: "sync" or "dsync" (O_SYNC / O_DSYNC writes).
    pub(crate) write_sync: Option<&'static str>,
    /// The suite's `[defaults]` data keys (compress, dedup, verify, invalidate).
    pub(crate) data: Defaults,
    /// `threads` is the total over a list of targets (filename=a:b).
    pub(crate) threads_total: bool,
}

/// One job's options as the table's rows read them (`options.rs`): what
/// each sets, and how each was mapped. The driver (`job.rs`) turns it into
/// a `Job` once every option is read.
#[derive(Debug)]
pub(crate) struct Read {
    pub(crate) rw: Pattern,
    /// rw=randread:N: a new random offset every N I/Os.
    pub(crate) rand_every: Option<u64>,
    pub(crate) read_pct: Option<u8>,
    pub(crate) bs: Vec<(u64, u32)>,
    /// Writes' own sizes (`bs=R,W`, `bssplit=R,W`), when not reads'.
    pub(crate) write_bs: Option<Vec<(u64, u32)>>,
    pub(crate) iodepth: u64,
    pub(crate) numjobs: u64,
    pub(crate) engine: &'static str,
    /// libaio or posixaio: buffered, they complete one request at a time.
    pub(crate) aio: bool,
    pub(crate) direct: bool,
    pub(crate) time_based: bool,
    pub(crate) runtime: Option<f64>,
    pub(crate) warmup: f64,
    pub(crate) rate_iops: Option<f64>,
    pub(crate) rate_bw: Option<(u64, Opt)>,
    /// The option that set `rate_iops` (rate_iops= or rate= over one block size).
    pub(crate) rate_opt: Option<Opt>,
    /// Reads and writes capped apart (IOPS, and bytes/s), None: uncapped.
    pub(crate) rate_dirs: Option<(Option<f64>, Option<f64>, Opt)>,
    pub(crate) rate_bw_dirs: Option<(Option<u64>, Option<u64>, Opt)>,
    /// Both directions capped apart: the mix follows the caps, as fio's
    /// does, so the run takes no read_pct (`rate.rs`).
    pub(crate) mix_from_caps: bool,
    /// latency_target (µs) and latency_percentile.
    pub(crate) latency_us: Option<(f64, Opt)>,
    pub(crate) latency_pct: Option<(f64, Opt)>,
    pub(crate) steady: Option<Opt>,
    pub(crate) arrivals: Option<Arrivals>,
    pub(crate) filename: Option<String>,
    pub(crate) directory: Option<String>,
    /// nfs_url= (fio's nfs engine), read with the job's place (`nfs.rs`).
    pub(crate) nfs_url: Option<Opt>,
    pub(crate) nrfiles: u64,
    pub(crate) size: Option<u64>,
    pub(crate) filesize: Option<u64>,
    pub(crate) io_size: Option<u64>,
    /// number_ios: I/Os per job before it stops.
    pub(crate) number_ios: Option<(u64, Opt)>,
    /// blockalign: offsets aligned to this many bytes.
    pub(crate) blockalign: Option<(u64, Opt)>,
    /// offset= and offset_increment=: where job i's pass over its file
    /// starts (offset + i x offset_increment), in bytes.
    pub(crate) offset: Option<(u64, Opt)>,
    pub(crate) offset_increment: Option<(u64, Opt)>,
    /// fio's random map is on unless norandommap says otherwise.
    pub(crate) norandommap: bool,
    pub(crate) seed: Option<u64>,
    pub(crate) stonewall: bool,
    pub(crate) wait_for: Option<String>,
    /// The run's keys the rows set as they read (its shape: distribution,
    /// syncs, think time; per-direction rates, a latency target, steady).
    pub(crate) run: RunEntry,
    pub(crate) write_sync: Option<&'static str>,
    /// The suite's `[defaults]` data keys (compress, dedup, verify, invalidate).
    pub(crate) data: Defaults,
    /// How each option was mapped.
    pub(crate) mapped: Vec<Mapping>,
    /// read_iolog and fio's replay_* options (`replay.rs`).
    pub(crate) replay: ReplayRead,
}

impl Default for Read {
    /// fio's own defaults.
    fn default() -> Self {
        Self {
            rw: Pattern::Read,
            rand_every: None,
            read_pct: None,
            bs: vec![(4096, 1)],
            write_bs: None,
            iodepth: 1,
            numjobs: 1,
            engine: "psync",
            aio: false,
            direct: false,
            time_based: false,
            runtime: None,
            warmup: 0.0,
            rate_iops: None,
            rate_bw: None,
            rate_opt: None,
            rate_dirs: None,
            rate_bw_dirs: None,
            mix_from_caps: false,
            latency_us: None,
            latency_pct: None,
            steady: None,
            arrivals: None,
            filename: None,
            directory: None,
            nfs_url: None,
            nrfiles: 1,
            size: None,
            filesize: None,
            io_size: None,
            number_ios: None,
            blockalign: None,
            offset: None,
            offset_increment: None,
            norandommap: false,
            seed: None,
            stonewall: false,
            wait_for: None,
            run: RunEntry::named(""),
            write_sync: None,
            data: Defaults::default(),
            mapped: Vec::new(),
            replay: Default::default(),
        }
    }
}

impl Read {
    /// Records how `opt` was mapped: exactly, or with a note printed.
    pub(crate) fn say(&mut self, opt: &Opt, how: impl Into<String>, exact: bool) {
        self.mapped.push(opt.mapping(how, exact));
    }
}

impl Said for Read {
    fn said(&mut self) -> &mut Vec<Mapping> {
        &mut self.mapped
    }
}

pub(super) fn bool_opt(o: &Opt) -> Option<bool> {
    match o.value.as_deref().map(str::trim) {
        None | Some("1") | Some("true") | Some("yes") => Some(true),
        Some("0") | Some("false") | Some("no") => Some(false),
        _ => None,
    }
}

/// What a job's read_iolog and replay_* options said (`replay.rs`).
#[derive(Debug, Default)]
pub(crate) struct ReplayRead {
    /// read_iolog=.
    pub(crate) log: Option<Opt>,
    /// replay_no_stall=1: `max`; replay_time_scale=P: P/100.
    pub(crate) speed: Option<String>,
    pub(crate) redirect: Option<Opt>,
    pub(crate) scale: Option<String>,
    pub(crate) align: Option<String>,
    pub(crate) skip: Option<String>,
    /// The first replay_* option, refused when there is no log to replay.
    pub(crate) first: Option<Opt>,
}
