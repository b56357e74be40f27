//! `volbench run --ops ...` flags -> a `JobSpec` of metadata runs: a plain
//! list becomes one phase (run) per operation over the whole tree, a
//! weighted list one timed mixed run. Block-I/O flags that would be
//! silently meaningless here are refused by name.

use crate::error::{Result, VbError};
use crate::input::args::RunArgs;
use crate::input::sweep::parse_numbers;
use crate::spec::meta::{
    ALL_OPS, MAX_DEPTH, MAX_FILE_SIZE, MAX_FILES, MAX_WIDTH, MetaOp, MetaOpWeight, MetaSpec,
};
use crate::spec::{BlockSize, EngineChoice, JobSpec, Pattern, RunSpec, TargetSpec, defaults};
use crate::units::bounds;
use crate::units::{parse_count_in, parse_size_in};

/// A phase runs until it has covered the tree; this is only its cap.
pub(crate) const PHASE_CAP_S: f64 = 7.0 * 86400.0;
/// Largest weight of a mix entry.
pub(crate) const MAX_WEIGHT: u64 = 1_000_000;

fn op_names() -> String {
    ALL_OPS.map(|o| o.name()).join(", ")
}

/// `create,stat` (phases) or `stat:40,create:10` (one mix): the entries and
/// whether they were weighted.
pub(crate) fn parse_ops(text: &str) -> Result<(Vec<MetaOpWeight>, bool)> {
    let mut out = Vec::new();
    let mut weighted = None;
    for item in text.split(',').map(str::trim) {
        if item.is_empty() {
            return Err(VbError::input(format!("--ops '{text}' has an empty entry")));
        }
        let (name, weight) = match item.split_once(':') {
            Some((n, w)) => {
                let w = parse_count_in("--ops weight", w.trim(), 0, MAX_WEIGHT)?;
                (n, Some(w as u32))
            }
            None => (item, None),
        };
        if weighted.is_some_and(|w| w != weight.is_some()) {
            return Err(VbError::input(format!(
                "--ops '{text}': give every operation a weight (one mix) or none (phases in order)"
            )));
        }
        weighted = Some(weight.is_some());
        let op = MetaOp::parse(name).ok_or_else(|| {
            VbError::input(format!("--ops '{name}' is not one of {}", op_names()))
        })?;
        if weight.is_some() && out.iter().any(|o: &MetaOpWeight| o.op == op) {
            return Err(VbError::input(format!(
                "--ops names {op} twice in one mix; give it one weight"
            )));
        }
        out.push(MetaOpWeight {
            op,
            weight: weight.unwrap_or(1),
        });
    }
    Ok((out, weighted.unwrap_or(false)))
}

/// `4k`, `0`, or `3k:50,64k:40,1m:10`.
pub(crate) fn parse_file_size(text: &str) -> Result<Vec<BlockSize>> {
    let mut out = Vec::new();
    let mut weighted = None;
    for item in text.split(',').map(str::trim) {
        let (size, weight) = match item.split_once(':') {
            Some((s, w)) => {
                let w = parse_count_in("--file-size weight", w.trim(), 1, MAX_WEIGHT)?;
                (s, Some(w as u32))
            }
            None => (item, None),
        };
        if weighted.is_some_and(|w| w != weight.is_some()) || (weight.is_none() && !out.is_empty())
        {
            return Err(VbError::input(format!(
                "--file-size '{text}': one size, or a mix with a weight on every size"
            )));
        }
        weighted = Some(weight.is_some());
        let bytes = parse_size_in("--file-size", size, 0, MAX_FILE_SIZE)?;
        out.push(BlockSize {
            bytes,
            weight: weight.unwrap_or(1),
        });
    }
    Ok(out)
}

fn shape(flag: &str, text: Option<&str>, default: u32, lo: u64, hi: u64) -> Result<u32> {
    let Some(t) = text else {
        return Ok(default);
    };
    let v = parse_count_in(flag, t, lo, hi)?;
    u32::try_from(v).map_err(|_| VbError::input(format!("{flag} {v} is too large")))
}

/// A tree and its operations as text, from flags or suite keys.
pub(crate) struct TreeText<'a> {
    pub(crate) ops: &'a str,
    pub(crate) depth: Option<&'a str>,
    pub(crate) width: Option<&'a str>,
    pub(crate) files_per_dir: Option<&'a str>,
    pub(crate) file_size: Option<&'a str>,
    pub(crate) shared_dirs: bool,
    pub(crate) drop_caches: bool,
    pub(crate) direct: bool,
    /// A create phase keeps the files already complete (`MetaSpec`).
    pub(crate) keep_complete: bool,
}

/// Warm-up, duration and steady as given (None: not given).
pub(crate) struct Timing {
    pub(crate) warmup_s: Option<f64>,
    pub(crate) duration_s: Option<f64>,
    pub(crate) steady: bool,
}

/// The runs of a tree: one phase per operation of a plain list (named
/// `NAME-op`, or `op`), or one timed mix. `base` carries threads, rate and
/// arrivals.
pub(crate) fn tree_runs(
    name: Option<&str>,
    base: &RunSpec,
    t: &TreeText,
    timing: Timing,
) -> Result<Vec<RunSpec>> {
    #[cfg(unix)]
    if t.drop_caches && !rustix::process::geteuid().is_root() {
        return Err(VbError::input(
            "--drop-caches needs root (it writes /proc/sys/vm/drop_caches)",
        ));
    }
    #[cfg(windows)]
    if t.drop_caches {
        return Err(VbError::input(
            "--drop-caches is Linux-only (it writes /proc/sys/vm/drop_caches); Windows has no \
             counterpart that drops one volume's cache",
        ));
    }
    let (ops, weighted) = parse_ops(t.ops)?;
    let spec = MetaSpec {
        depth: shape("--depth", t.depth, 1, 0, MAX_DEPTH.into())?,
        width: shape("--width", t.width, 10, 1, MAX_WIDTH.into())?,
        files_per_dir: shape("--files-per-dir", t.files_per_dir, 100, 1, MAX_FILES)?,
        file_size: parse_file_size(t.file_size.unwrap_or("4k"))?,
        ops: Vec::new(),
        whole_tree: !weighted,
        shared_dirs: t.shared_dirs,
        drop_caches: t.drop_caches,
        direct: t.direct,
        host_part: false,
        keep_complete: false,
    };
    if t.keep_complete && (weighted || !ops.iter().any(|o| o.op == MetaOp::Create)) {
        return Err(VbError::input(
            "--keep-complete goes with a create phase (--ops create, or a list of phases with create)",
        ));
    }
    let base = RunSpec {
        rw: Pattern::Randrw,
        iodepth: 1,
        ..base.clone()
    };
    if weighted {
        let mut spec = spec;
        spec.ops = ops;
        let mut run = RunSpec {
            read_pct: spec.read_pct(),
            warmup_s: timing.warmup_s.unwrap_or(defaults::WARMUP_S),
            duration_s: timing.duration_s.unwrap_or(defaults::DURATION_S),
            steady: timing.steady,
            meta: Some(spec),
            ..base
        };
        run.name = name.map_or_else(|| run.auto_name(), str::to_string);
        return Ok(vec![run]);
    }
    // Phases cover the tree exactly once: a warm-up would leave part of
    // it out of the totals, and a steady state has nothing to settle.
    if timing.warmup_s.is_some_and(|w| w > 0.0) {
        return Err(VbError::input(
            "--warmup does not apply to --ops phases: each covers the whole tree once and counts every operation",
        ));
    }
    if timing.steady {
        return Err(VbError::input(
            "--steady applies to a weighted --ops mix, not to phases",
        ));
    }
    let mut runs: Vec<RunSpec> = Vec::new();
    for o in ops {
        let mut spec = spec.clone();
        spec.ops = vec![o];
        // Only a create phase has files to keep.
        spec.keep_complete = t.keep_complete && o.op == MetaOp::Create;
        let mut run_name = match name {
            Some(n) => format!("{n}-{}", o.op),
            None => o.op.name().to_string(),
        };
        let again = runs
            .iter()
            .filter(|r| r.meta.as_ref().is_some_and(|m| m.ops.first() == Some(&o)))
            .count();
        if again > 0 {
            run_name = format!("{run_name}-{}", again + 1);
        }
        runs.push(RunSpec {
            name: run_name,
            read_pct: spec.read_pct(),
            warmup_s: 0.0,
            duration_s: timing.duration_s.unwrap_or(PHASE_CAP_S),
            meta: Some(spec),
            ..base.clone()
        });
    }
    Ok(runs)
}

/// The job for `--ops` runs, None when no `--ops` was given.
pub(crate) fn job(a: &RunArgs) -> Result<Option<JobSpec>> {
    let m = &a.meta;
    let c = &a.common;
    let Some(ops_text) = &m.ops else {
        let given = [
            ("--depth", m.depth.is_some()),
            ("--width", m.width.is_some()),
            ("--files-per-dir", m.files_per_dir.is_some()),
            ("--file-size", m.file_size.is_some()),
            ("--shared-dirs", m.shared_dirs),
            ("--drop-caches", m.drop_caches),
            ("--keep-complete", m.keep_complete),
        ];
        if let Some((flag, _)) = given.iter().find(|g| g.1) {
            return Err(VbError::input(format!(
                "{flag} describes a tree of files for --ops; without --ops it does nothing"
            )));
        }
        return Ok(None);
    };
    // Block-I/O flags have no meaning on a tree: say so rather than ignore them.
    let block_only = [
        ("--rw", a.rw.is_some()),
        ("--bs", a.bs.is_some()),
        ("--write-bs", a.write_bs.is_some()),
        ("--iodepth", c.iodepth.is_some()),
        ("--files", c.files.is_some()),
        ("--read-pct", a.read_pct.is_some()),
        ("--size", c.size.is_some()),
        ("--io-limit", a.io_limit.is_some()),
        ("--engine", c.engine.is_some()),
        ("--allow-overwrite", c.allow_overwrite),
        ("--compress", c.data.compress.is_some()),
        ("--dedup", c.data.dedup.is_some()),
        ("--dedup-unit", c.data.dedup_unit.is_some()),
        ("--verify", c.data.verify),
        ("--journal", c.data.journal.is_some()),
    ];
    if let Some((flag, _)) = block_only.iter().find(|b| b.1) {
        return Err(VbError::input(format!(
            "{flag} is for block I/O; --ops runs take --depth, --width, --files-per-dir and --file-size"
        )));
    }
    let threads = shape(
        "--threads",
        c.threads.as_deref(),
        defaults::THREADS,
        1,
        bounds::MAX_THREADS,
    )?;
    let rate = match &a.rate {
        None => None,
        Some(text) => match parse_numbers("--rate", text)?.as_slice() {
            [one] => Some(bounds::number(
                "--rate",
                *one,
                bounds::MIN_RATE,
                bounds::MAX_RATE,
            )?),
            _ => {
                return Err(VbError::input(
                    "--rate takes one number of operations per second with --ops",
                ));
            }
        },
    };
    // The flags `run` shares with `suite run`, each read once.
    let o = c.overrides()?;
    let tree = TreeText {
        ops: ops_text,
        depth: m.depth.as_deref(),
        width: m.width.as_deref(),
        files_per_dir: m.files_per_dir.as_deref(),
        file_size: m.file_size.as_deref(),
        shared_dirs: m.shared_dirs,
        drop_caches: m.drop_caches,
        direct: a.direct,
        keep_complete: m.keep_complete,
    };
    let base = RunSpec {
        threads,
        rate_iops: rate,
        arrivals: o.arrivals.unwrap_or(defaults::ARRIVALS),
        ..RunSpec::default()
    };
    let runs = tree_runs(
        a.name.as_deref(),
        &base,
        &tree,
        Timing {
            warmup_s: o.warmup_s,
            duration_s: o.duration_s,
            steady: o.steady,
        },
    )?;
    // The tree's shape first: a tree too large for any --size is the flags'
    // fault (--width, --depth), and is named as such.
    for r in &runs {
        if let Some(m) = &r.meta {
            m.validate(r.threads).map_err(VbError::input)?;
        }
    }
    let total_bytes = runs
        .first()
        .and_then(|r| r.meta.as_ref())
        .map(|m| (m.total_files() as f64 * m.mean_file_size()) as u64)
        .unwrap_or(0);
    let job = JobSpec {
        target: TargetSpec {
            write_sync: Default::default(),
            data: Default::default(),
            fill: Default::default(),
            path: c.target.clone(),
            size: total_bytes.max(1),
            files: 1,
            // Buffered, as file work is, unless --direct says otherwise.
            direct: a.direct,
            allow_overwrite: false,
            open_files: None,
        },
        engine: EngineChoice::Only(crate::spec::EngineKind::for_metadata()),
        interval_s: o.interval_s.unwrap_or(defaults::INTERVAL_S),
        seed: o.seed.unwrap_or(defaults::SEED),
        runs,
        suite: None,
        targets: None,
        reading: o.reading,
    };
    job.validate()?;
    Ok(Some(job))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_lists_are_phases_weights_a_mix() {
        let (ops, weighted) = parse_ops("create, stat,read,delete").unwrap();
        assert!(!weighted);
        assert_eq!(ops.len(), 4);
        assert_eq!(ops[3].op, MetaOp::Delete);
        let (ops, weighted) = parse_ops("stat:40,open:20,read:20,create:10,delete:10").unwrap();
        assert!(weighted);
        assert_eq!(ops.iter().map(|o| o.weight).sum::<u32>(), 100);
    }

    #[test]
    fn bad_op_lists_say_why() {
        let e = parse_ops("create,chmod").unwrap_err().to_string();
        assert!(e.contains("'chmod' is not one of mkdir, create"), "{e}");
        let e = parse_ops("stat:40,open").unwrap_err().to_string();
        assert!(e.contains("a weight"), "{e}");
        let e = parse_ops("stat:4,stat:5").unwrap_err().to_string();
        assert!(e.contains("twice"), "{e}");
        assert!(parse_ops("stat:2000000").is_err());
        assert!(parse_ops("stat,,read").is_err());
    }

    #[test]
    fn file_sizes_start_at_zero_and_mix() {
        assert_eq!(parse_file_size("0").unwrap()[0].bytes, 0);
        assert_eq!(parse_file_size("3").unwrap()[0].bytes, 3);
        let mix = parse_file_size("3k:50,64k:40,1m:10").unwrap();
        assert_eq!(mix.len(), 3);
        assert_eq!(mix[2].bytes, 1 << 20);
        assert!(parse_file_size("4k,8k").is_err());
        assert!(parse_file_size("4k:0").is_err());
        assert!(
            parse_file_size("2g")
                .unwrap_err()
                .to_string()
                .contains("1GiB")
        );
    }
}
