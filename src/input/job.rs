//! A job as a command hands it on: the workload (`JobSpec`, recorded in the
//! result and sent to hosts), where it runs (this host's targets, or many
//! hosts), what is shown while it goes and where its result goes, each read
//! once from the flags, a suite or an import. Every front end (`run`,
//! `suite run`, the importers, `quick`) ends here; the plan, the runner and
//! the finish take a `Job` and never read a flag.

use std::path::PathBuf;

use crate::error::{Result, VbError};
use crate::input::args::{CommonArgs, RunArgs};
use crate::input::hosts::HostSpec;
use crate::input::hosts::spec::HostsSpec;
use crate::input::targets::{check_threads_total, expand_local};
use crate::input::{flags, suite};
use crate::result::expect::Expectation;
use crate::spec::JobSpec;
use crate::spec::live::LiveSpec;
use crate::spec::output::OutputSpec;

pub(crate) struct Job {
    /// The workload; its target path is the first local target, or the
    /// hosts' template.
    pub(crate) spec: JobSpec,
    /// The user gave the working set (else a file or device is used whole).
    pub(crate) size_given: bool,
    pub(crate) place: Place,
    pub(crate) live: LiveSpec,
    pub(crate) outputs: OutputSpec,
    /// `--expect` / `--expect-from`, recorded in the result.
    pub(crate) expect: Option<Expectation>,
    /// The plan is shown before the run (suites), not only for --dry-run.
    pub(crate) show_plan: bool,
    /// A line to say once the job is planned (before any I/O).
    pub(crate) first: Option<String>,
    /// Notes the front end adds to the plan's (quick's buffered fallback).
    pub(crate) notes: Vec<String>,
}

impl Job {
    /// Whether a target of the job is reached by a protocol client
    /// (`nfs://`, `smb://`): its live CSV has the protocol columns.
    pub(crate) fn on_protocol_target(&self) -> bool {
        match &self.place {
            Place::Here { paths, .. } => paths.iter().any(|p| crate::io::backend::is_url(p)),
            Place::Hosts(_) => crate::io::backend::is_url(&self.spec.target.path),
        }
    }
}

/// Where a job runs, decided once.
// One per command: the size difference between variants is irrelevant.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Place {
    /// On this host: one target, or a list run together (`threads_total`:
    /// the runs' threads are the total over the list).
    Here {
        paths: Vec<PathBuf>,
        threads_total: bool,
        /// `--on-host-loss continue` over a list with `nfs://` or `smb://`
        /// targets.
        keep_going: bool,
    },
    /// On many hosts, the target path a template.
    Hosts(HostsSpec),
}

/// `volbench run`'s job (`--like` already resolved into flags).
pub(crate) fn of_run(a: &RunArgs) -> Result<Job> {
    let c = &with_url_flags(&a.common)?;
    let expect = super::expect::expectation(c)?;
    let counts = c.remote.counts.host_counts.clone();
    let at = Where::of(c, false, counts.as_ref().map(|_| "--host-counts"))?;
    let mut first = a.clone();
    first.common.target = at.path(c);
    let spec = flags::job_from_run_args(&first)?;
    let place = at.place(c, None, counts.map(|t| ("--host-counts", t)))?;
    Ok(Job {
        spec,
        size_given: c.size.is_some(),
        place,
        live: c.out.live.spec()?,
        outputs: c.out.spec(),
        expect,
        show_plan: false,
        first: None,
        notes: Vec::new(),
    })
}

/// A suite about to run: its files read and parsed, and a line to say
/// once its job is valid.
pub(crate) struct Suite {
    resolved: suite::Resolved,
    first: Option<String>,
}

impl Suite {
    /// A built-in suite or a suite file with its includes, its published
    /// variant if asked (`published`); the lines to say at once (the
    /// paper's values taken).
    pub(crate) fn load(name: &str, published: bool) -> Result<(Self, Vec<String>)> {
        let (origin, text, path) = suite::load_at(name)?;
        let mut parsed = suite::parse(&origin, &text)?;
        let mut first = None;
        let mut said = Vec::new();
        if published {
            let (p, lines) = suite::published::select(parsed, &origin)?;
            said = lines;
            parsed = p;
        } else if parsed.published.is_some() {
            // Said once the job is valid, so no one reads a scaled-down
            // run's figures as the paper's, and bad input is still one
            // error line.
            let (scaled, published) = suite::footprint::variants(&origin, &text, path.as_deref())?;
            first = Some(format!(
                "volbench: note: {} runs its scaled-down defaults ({scaled}); --published runs the paper's ({})",
                parsed.name,
                published.unwrap_or_default()
            ));
        }
        let mut files = suite::include::Files;
        let resolved = suite::resolve(
            &origin,
            &text,
            path.as_deref(),
            parsed,
            &mut files,
            published,
        )?;
        said.extend(resolved.said.iter().cloned());
        let unpublished = resolved.unpublished();
        if !published && !unpublished.is_empty() {
            let line = format!(
                "volbench: note: the included {} run{} scaled-down defaults; alone, with --published, the paper's",
                unpublished.join(", "),
                if unpublished.len() == 1 {
                    "s its"
                } else {
                    " their"
                }
            );
            first = Some(match first {
                Some(f) => format!("{f}\n{line}"),
                None => line,
            });
        }
        Ok((Suite { resolved, first }, said))
    }

    /// A suite's text as it is (an import's).
    pub(crate) fn text(origin: &str, text: &str) -> Result<Self> {
        Ok(Suite {
            resolved: suite::Resolved::alone(origin, text, suite::parse(origin, text)?)?,
            first: None,
        })
    }

    /// The suite's job with the flags `c` over its values; `listed` hosts
    /// (an import's) replace the host flags' list.
    pub(crate) fn job(
        self,
        c: &CommonArgs,
        no_warmup_run: bool,
        listed: Option<Vec<HostSpec>>,
    ) -> Result<Job> {
        let c = &with_url_flags(c)?;
        let expect = super::expect::expectation(c)?;
        let multi_host = c.remote.is_multi_host() || listed.is_some();
        let top = self.resolved.top().map(|t| &t.suite);
        let threads_total = top.is_some_and(|t| t.threads_total);
        let c = &with_suite_threads_total(c, threads_total, multi_host)?;
        let counts = match (
            &c.remote.counts.host_counts,
            top.and_then(|t| t.host_counts_text()),
        ) {
            (Some(t), _) => Some(("--host-counts", t.clone())),
            (None, Some(t)) => Some(("host_counts", t)),
            (None, None) => None,
        };
        let at = Where::of(c, listed.is_some(), counts.as_ref().map(|(f, _)| *f))?;
        let overrides = suite::Overrides {
            target: at.path(c),
            no_warmup_run,
            ..c.overrides()?
        };
        let spec = suite::expand(&self.resolved, &overrides)?;
        let place = at.place(c, listed, counts)?;
        Ok(Job {
            spec,
            size_given: c.size.is_some(),
            place,
            live: c.out.live.spec()?,
            outputs: c.out.spec(),
            expect,
            show_plan: true,
            first: self.first,
            notes: Vec::new(),
        })
    }
}

/// The flags with `--nfs-connections` and `--smb-channels` read once into
/// the target's URL, where every host and the result find them.
fn with_url_flags(c: &CommonArgs) -> Result<CommonArgs> {
    with_smb_channels(&with_nfs_connections(c)?)
}

/// `--smb-channels` into the target's URL (`channels=`).
fn with_smb_channels(c: &CommonArgs) -> Result<CommonArgs> {
    let mut c = c.clone();
    let Some(text) = c.smb_channels.take() else {
        return Ok(c);
    };
    let n = crate::units::parse_count_in(
        "--smb-channels",
        &text,
        1,
        crate::units::bounds::MAX_SMB_CHANNELS,
    )?;
    if !c.target.to_string_lossy().starts_with("smb://") {
        return Err(VbError::input(format!(
            "--smb-channels is for an smb:// target, and {} is not one",
            c.target.display()
        )));
    }
    #[cfg(unix)]
    {
        c.target = crate::io::backend::smb::with_channels(&c.target, n)?;
    }
    #[cfg(not(unix))]
    let _ = n;
    Ok(c)
}

/// The flags with `--nfs-connections` read once into the target's URL
/// (`nconnect=`), where every host and the result find it.
fn with_nfs_connections(c: &CommonArgs) -> Result<CommonArgs> {
    let mut c = c.clone();
    let Some(text) = c.nfs_connections.take() else {
        return Ok(c);
    };
    let n = crate::units::parse_count_in(
        "--nfs-connections",
        &text,
        1,
        crate::units::bounds::MAX_NFS_CONNECTIONS,
    )?;
    if !c.target.to_string_lossy().starts_with("nfs://") {
        return Err(VbError::input(format!(
            "--nfs-connections is for an nfs:// target, and {} is not one",
            c.target.display()
        )));
    }
    #[cfg(unix)]
    {
        c.target = crate::io::backend::nfs::with_connections(&c.target, n)?;
    }
    #[cfg(not(unix))]
    let _ = n;
    Ok(c)
}

/// The flags with a suite's `threads_total = true` applied: over a local
/// list its threads are the total, as with `--threads-total`; over one
/// target total and per target are the same; with hosts it is refused, as
/// the flag is.
fn with_suite_threads_total(
    c: &CommonArgs,
    suite_says: bool,
    multi_host: bool,
) -> Result<CommonArgs> {
    let mut c = c.clone();
    if suite_says && !c.targets.threads_total {
        if multi_host {
            return Err(VbError::input(
                "the suite's threads_total = true is for several targets on this host; with --hosts, threads are per target",
            ));
        }
        c.targets.threads_total = expand_local(&c.target)?.len() > 1;
    }
    Ok(c)
}

/// Where a job runs, decided from the flags before the job is made; the
/// hosts are read (`place`) once the job is valid.
enum Where {
    Here(Vec<PathBuf>),
    Hosts,
}

impl Where {
    /// `listed`: an import names its own hosts; `counts`: the flag or
    /// suite key of a host-count sweep.
    fn of(c: &CommonArgs, listed: bool, counts: Option<&'static str>) -> Result<Self> {
        if c.remote.is_multi_host() || listed {
            check_threads_total(c.targets.threads_total, 0, true)?;
            return Ok(Where::Hosts);
        }
        if let Some(flag) = counts {
            return Err(crate::input::hosts::counts::refuse_local(flag));
        }
        if let Some(flag) = c.remote.hosts_only_flag() {
            return Err(VbError::input(format!(
                "{flag} is for a run on many hosts (--hosts, --hosts-file, --hosts-from or \
                 --k8s-job), and this one runs here"
            )));
        }
        flags::check_here(&c.target)?;
        let paths = expand_local(&c.target)?;
        check_threads_total(c.targets.threads_total, paths.len(), false)?;
        if c.remote.on_host_loss == crate::input::args::hosts::HostLoss::Continue {
            crate::input::targets::check_keep_going(&paths)?;
        }
        Ok(Where::Here(paths))
    }

    /// The target path the job is made with: the first local target, or
    /// the hosts' template.
    fn path(&self, c: &CommonArgs) -> PathBuf {
        match self {
            Where::Here(paths) => paths.first().cloned().unwrap_or_default(),
            Where::Hosts => c.target.clone(),
        }
    }

    /// The place, the hosts read (a `--hosts-from` command runs now).
    fn place(
        self,
        c: &CommonArgs,
        listed: Option<Vec<HostSpec>>,
        counts: Option<(&'static str, String)>,
    ) -> Result<Place> {
        Ok(match self {
            Where::Here(paths) => Place::Here {
                keep_going: c.remote.on_host_loss == crate::input::args::hosts::HostLoss::Continue,
                paths,
                threads_total: c.targets.threads_total,
            },
            Where::Hosts => Place::Hosts(c.remote.spec(listed, counts)?),
        })
    }
}
