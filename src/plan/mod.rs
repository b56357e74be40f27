//! From a validated `JobSpec` to what will actually happen: the target as it
//! is, the engine each run uses and why, how many I/O threads, and the total
//! time. Planning touches nothing, so `--dry-run` shows it for free.

mod descriptors;
pub(crate) mod hosts;
pub(crate) mod meta;
pub(crate) mod search;
pub(crate) mod sequence;
mod sets;
pub(crate) mod size;
pub(crate) mod targets;

pub(crate) use descriptors::drops_cache_per_pass;

use std::fmt::Write as _;

use crate::error::{Result, VbError};
use crate::io::engine::{self, EngineKind};
use crate::io::host;
use crate::io::target::{Inspection, TargetKind};
use crate::spec::{JobSpec, RunSpec};
use crate::units::bounds;
use crate::units::{format_duration, format_size};

#[derive(Debug, Clone)]
pub(crate) struct PlannedRun {
    pub(crate) spec: RunSpec,
    pub(crate) engine: EngineKind,
    /// Why the engine differs from the one asked for, if it does.
    pub(crate) engine_note: Option<String>,
    pub(crate) io_threads: u32,
    pub(crate) depth: u32,
    /// The files each I/O thread keeps open at a time, opening the others
    /// as its I/Os reach them, when the set has more files than a thread
    /// may hold (`descriptors`); None: the whole set, held open.
    pub(crate) open_files: Option<u32>,
}

#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub(crate) job: JobSpec,
    pub(crate) target: Inspection,
    pub(crate) runs: Vec<PlannedRun>,
    pub(crate) notes: Vec<String>,
}

/// What a job comes to: its plans on this host's targets, or the plan of
/// its hosts. `plan_job` decides it once; the runner takes it from here.
// One per command: the size difference between variants is irrelevant.
#[allow(clippy::large_enum_variant)]
pub(crate) enum JobPlan {
    Here(HerePlan),
    Hosts(hosts::HostsPlan),
}

/// A job on this host: one plan per target, the job as resolved (it heads
/// the result), and the plan as `--dry-run` and a suite show it.
pub(crate) struct HerePlan {
    pub(crate) job: JobSpec,
    pub(crate) plans: Vec<Plan>,
    pub(crate) shown: String,
    /// The plan is shown before the run, not only for --dry-run.
    pub(crate) show: bool,
}

/// Plans a job where its input placed it.
pub(crate) fn plan_job(job: &crate::input::job::Job) -> Result<JobPlan> {
    use crate::input::job::Place;
    let paths = match &job.place {
        Place::Hosts(h) => {
            return hosts::plan(job.spec.clone(), h, job.size_given).map(JobPlan::Hosts);
        }
        Place::Here { paths, .. } if paths.len() > 1 => paths,
        Place::Here { .. } => {
            let mut plan = plan_sized(job.spec.clone(), job.size_given)?;
            plan.notes.splice(0..0, job.notes.iter().cloned());
            return Ok(JobPlan::Here(HerePlan {
                job: plan.job.clone(),
                shown: plan.describe(),
                plans: vec![plan],
                show: job.show_plan,
            }));
        }
    };
    let (threads_total, keep_going) = match job.place {
        Place::Here {
            threads_total,
            keep_going,
            ..
        } => (threads_total, keep_going),
        Place::Hosts(_) => (false, false),
    };
    let mut spec = job.spec.clone();
    crate::input::targets::attach(&mut spec, paths.clone(), (threads_total, keep_going))?;
    let plans = targets::plan_targets(&spec, job.size_given)?;
    let list = spec
        .targets
        .as_ref()
        .ok_or_else(|| VbError::input("no list of targets"))?;
    let shown = targets::describe(&plans, list);
    Ok(JobPlan::Here(HerePlan {
        job: spec,
        plans,
        shown,
        show: true,
    }))
}

/// A job on one target, sized (`size`) unless the user gave the size.
pub(crate) fn plan_sized(mut job: JobSpec, size_given: bool) -> Result<Plan> {
    size::decide(&mut job, size_given)?;
    plan(job)
}

pub(crate) fn plan(job: JobSpec) -> Result<Plan> {
    job.validate()?;
    job.engine.check_platform()?;
    // An nfs:// target's runs use the nfs engine; other engines, local paths.
    let choice = crate::io::backend::engine_choice(
        &job.target.path,
        job.engine,
        job.runs.iter().any(|r| r.meta.is_some()),
    )?;
    choice.check_platform()?;
    let insp = meta::inspect(&job)?;
    let uring = engine::probe_io_uring();
    let mut notes = Vec::new();
    let mut runs: Vec<PlannedRun> = job
        .runs
        .iter()
        .map(|r| {
            let (engine, engine_note) = engine::resolve(choice, r.iodepth, &uring);
            // A synchronous engine keeps one I/O in flight per thread, so the
            // requested concurrency becomes threads x iodepth threads.
            let (io_threads, depth) = if engine.is_sync() {
                (r.threads.saturating_mul(r.iodepth), 1)
            } else {
                (r.threads, r.iodepth)
            };
            PlannedRun {
                spec: r.clone(),
                engine,
                engine_note,
                io_threads,
                depth,
                open_files: None,
            }
        })
        .collect();
    descriptors::check_asked(&job, &runs)?;
    let fd_limit = crate::io::fd_limit::ceiling();
    let memory = host::memory_bytes();
    for r in &mut runs {
        r.open_files = descriptors::open_at_once(&job, r, fd_limit)?;
        if let Some(n) = r.open_files {
            notes.push(format!(
                "run '{}': each I/O thread keeps at most {n} of its {} files open and opens the \
                 others as its I/Os reach them (fio's openfiles; {})",
                r.spec.name,
                r.spec.files.unwrap_or(job.target.files),
                if job.target.open_files == Some(n) {
                    "--open-files"
                } else {
                    "the open-file limit, ulimit -Hn, allows no more"
                }
            ));
        }
        check_resources(r, memory)?;
        // Sequential streams each get their own region of the working set
        // (`spec::streams`); each must hold at least one block. The first
        // thread's share is the smallest under split, the last thread's
        // start the furthest under each.
        let total = job.layout_of(&r.spec).fill_bytes();
        let n = r.io_threads.max(1);
        let streams = r.spec.shape.streams;
        let fits = |t: u32| {
            streams
                .region(total, r.spec.min_bs(), t, n)
                .is_some_and(|(start, end)| end.saturating_sub(start) >= r.spec.max_bs())
        };
        let random = r.spec.rw.is_random();
        if !random && (!fits(0) || !fits(n - 1)) {
            let how = if streams.is_split() {
                format!(
                    "{n} sequential streams over {} leave less than one {} block each; \
                         use fewer threads or a larger --size",
                    format_size(total),
                    format_size(r.spec.max_bs())
                )
            } else {
                format!(
                    "--streams {} over {} leaves the last of {n} threads less than one {} block; \
                         use a smaller offset or step, fewer threads or a larger --size",
                    streams.label(),
                    format_size(total),
                    format_size(r.spec.max_bs())
                )
            };
            return Err(crate::error::VbError::input(format!(
                "run '{}': {how}",
                r.spec.name
            )));
        }
    }
    for note in runs.iter().filter_map(|r| r.engine_note.clone()) {
        if !notes.contains(&note) {
            notes.push(note);
        }
    }
    let meta_only = job.runs.iter().all(|r| r.meta.is_some());
    if meta_only
        && !job
            .runs
            .iter()
            .any(|r| r.meta.as_ref().is_some_and(|m| m.drop_caches))
    {
        notes.push(
            "metadata runs go through the client's caches (dentries, inodes, pages): \
             without --drop-caches, stat and read after create may never reach the storage"
                .into(),
        );
    }
    if !job.target.direct && !meta_only && insp.kind != TargetKind::BlockDevice {
        if let Some(mem) = host::memory_bytes() {
            let smallest = job
                .layouts()
                .iter()
                .map(|l| l.size)
                .min()
                .unwrap_or(job.target.size);
            if smallest < mem {
                notes.push(format!(
                    "--buffered with a working set ({}) smaller than this host's memory ({}): \
                     much of what is measured is the page cache, not the storage",
                    format_size(smallest),
                    format_size(mem)
                ));
            }
        }
    }
    notes.extend(crate::io::verify::plan_check(
        &job,
        insp.kind == TargetKind::Directory,
        crate::io::target::set_identity,
    )?);
    Ok(Plan {
        job,
        target: insp,
        runs,
        notes,
    })
}

/// What a run will ask of this host, checked against its bounds and the
/// host's own limits before anything starts: OS threads, open files and
/// I/O buffer memory. Each message names the bound.
fn check_resources(r: &PlannedRun, memory: Option<u64>) -> Result<()> {
    let s = &r.spec;
    let err = |m: String| VbError::input(format!("run '{}': {m}", s.name));
    let io_threads = u64::from(r.io_threads);
    if io_threads > bounds::MAX_IO_THREADS {
        return Err(err(format!(
            "the {} engine keeps one I/O in flight per thread, so --threads {} x --iodepth {} \
             needs {io_threads} threads; at most {} (use --engine io_uring, or fewer)",
            r.engine.name(),
            s.threads,
            s.iodepth,
            bounds::MAX_IO_THREADS
        )));
    }
    let buffers = u64::from(r.io_threads)
        .saturating_mul(u64::from(r.depth))
        .saturating_mul(s.max_bs());
    if let Some(mem) = memory {
        if buffers > mem / 2 {
            return Err(err(format!(
                "{} of I/O buffers (threads x iodepth x {}) is more than half this host's memory ({})",
                format_size(buffers),
                format_size(s.max_bs()),
                format_size(mem)
            )));
        }
    }
    Ok(())
}

impl Plan {
    /// The open files the most demanding run needs in each I/O thread: what
    /// the executor raises the process's limit to before it opens the set.
    pub(crate) fn open_files_wanted(&self) -> u64 {
        self.runs
            .iter()
            .map(|r| descriptors::per_table(&self.job, r))
            .max()
            .unwrap_or(crate::io::fd_limit::SPARE_FDS)
    }

    pub(crate) fn total_seconds(&self) -> f64 {
        self.runs
            .iter()
            .map(|r| {
                // A latency search makes up to its bound of runs.
                let n = r.spec.latency_target.as_ref().map_or(1, |t| t.max_steps);
                (r.spec.warmup_s + r.spec.duration_s) * f64::from(n)
            })
            .sum()
    }

    pub(crate) fn needs_write(&self) -> bool {
        self.runs.iter().any(|r| r.spec.has_writes())
    }

    /// Whether a directory target gets a file set: not when every block
    /// run's engine touches no file (the `diskless` capability), so a null
    /// run creates and fills nothing.
    pub(crate) fn needs_file_set(&self) -> bool {
        self.target.kind != TargetKind::Directory
            || self
                .runs
                .iter()
                .any(|r| r.spec.meta.is_none() && !r.engine.caps().diskless)
    }

    /// The human-readable plan `--dry-run` prints.
    pub(crate) fn describe(&self) -> String {
        let t = &self.job.target;
        let mut out = String::new();
        // A metadata tree's own line first (no if-let guard: rust-version 1.85).
        let tree = match self.target.kind {
            TargetKind::Directory => meta::tree(&self.job),
            _ => None,
        };
        let kind = match (self.target.kind, tree) {
            (_, Some(tree)) => tree,
            (TargetKind::Directory, _) if !self.needs_file_set() => {
                "directory; no file set: the engine touches no file, nothing is created".into()
            }
            (TargetKind::Directory, _) if self.job.layouts().len() > 1 => {
                "directory; one file set per layout, listed below, each created and filled if not already there".into()
            }
            (TargetKind::Directory, _) => format!(
                "directory; file set of {} (created and filled if not already there)",
                sets::single(&self.job).label()
            ),
            (TargetKind::File, _) => "existing regular file, used as it is".into(),
            (TargetKind::BlockDevice, _) => "block device, used as it is".into(),
        };
        // The path is the user's text: escaped, so it cannot drive the terminal.
        let _ = writeln!(
            out,
            "target:   {} ({kind})",
            crate::units::bounds::one_line(&t.path.display().to_string())
        );
        let _ = writeln!(
            out,
            "          working set {}, {} I/O{}",
            sets::working_set(&self.job),
            if t.direct { "direct" } else { "buffered" },
            match t.write_sync {
                crate::spec::WriteSync::None => "",
                crate::spec::WriteSync::Dsync => ", writes O_DSYNC (write-through)",
                crate::spec::WriteSync::Sync => ", writes O_SYNC",
            }
        );
        if self.needs_file_set() {
            out.push_str(&sets::describe(&self.job, self.target.kind));
        }
        let _ = writeln!(
            out,
            "seed:     {}   interval: {}s",
            self.job.seed, self.job.interval_s
        );
        let _ = writeln!(out, "runs:     {}", self.runs.len());
        for (i, r) in self.runs.iter().enumerate() {
            let s = &r.spec;
            if let Some(line) = meta::run(s) {
                let _ = writeln!(out, "  {:>2}. {:<24} {line}", i + 1, s.name);
                continue;
            }
            let mix = if s.rw.is_mixed() {
                format!(" {}% read", s.read_pct)
            } else {
                String::new()
            };
            let mut when = String::new();
            if s.discard {
                when.push_str("  [warm-up run, discarded]");
            }
            if let Some(p) = &s.rate_pct {
                when.push_str(&format!("  [rate {}% of {}]", p.percent, p.of));
            } else if let Some(r) = s.rate_iops {
                when.push_str(&format!("  [rate {r} IOPS]"));
            }
            when.push_str(&s.shape.plan_label());
            when.push_str(&sets::run_label(&self.job, s));
            if let Some(rule) = &s.stop_rule {
                if let Some(g) = rule.gain_below_pct {
                    when.push_str(&format!("  [skipped once IOPS grow < {g}%]"));
                }
                if let Some(us) = rule.latency_above_us {
                    when.push_str(&format!("  [skipped once latency > {us:.0}us]"));
                }
                for l in &rule.percentile_above {
                    when.push_str(&format!("  [skipped once not {}]", l.label()));
                }
            }
            if let Some(t) = &s.latency_target {
                when.push_str(&format!(
                    "  [searches the highest rate keeping {}: up to {} runs, to {}% of the maximum]",
                    t.label(),
                    t.max_steps,
                    t.precision_pct
                ));
            }
            let layout = if r.io_threads != s.threads || r.depth != s.iodepth {
                format!(" = {} I/O threads x depth {}", r.io_threads, r.depth)
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "  {:>2}. {:<24} {}{} bs {}, {} threads x iodepth {}, {}{}, warm-up {} + {}{}",
                i + 1,
                s.name,
                s.rw.name(),
                mix,
                s.bs_label(),
                s.threads,
                s.iodepth,
                r.engine.name(),
                layout,
                format_duration(std::time::Duration::from_secs_f64(s.warmup_s)),
                format_duration(std::time::Duration::from_secs_f64(s.duration_s)),
                when,
            );
        }
        // A phase ends when it has covered the tree; its duration is a cap.
        let conditional = self.runs.iter().any(|r| {
            r.spec.stop_rule.is_some()
                || r.spec.latency_target.is_some()
                || r.spec.meta.as_ref().is_some_and(|m| m.whole_tree)
        });
        let _ = writeln!(
            out,
            "total:    {}{} of I/O{}",
            if conditional { "at most " } else { "" },
            format_duration(std::time::Duration::from_secs_f64(
                self.total_seconds().round()
            )),
            if self.needs_file_set() {
                " (plus preparing the file set)"
            } else {
                ""
            }
        );
        for n in &self.notes {
            let _ = writeln!(out, "note:     {n}");
        }
        out
    }
}
