//! Suites: the vendors' methods as data. A suite is a TOML file of runs
//! (with sweeps, curves and knee-stopping thread sweeps) that expands into
//! one `JobSpec`; the built-in ones are embedded and can be printed, copied
//! and edited. Every error names the file and line.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use crate::error::{Result, VbError};
use crate::input::cli::CommonArgs;
use crate::input::sweep::{self, Axes};
use crate::spec::defaults;
use crate::spec::{
    Arrivals, EngineChoice, JobSpec, Pattern, RatePct, RunSpec, StopRule, SuiteMeta, TableKind,
    TargetSpec,
};
use crate::units::bounds;
use crate::units::{parse_count_in, parse_duration_in, parse_size_in};

/// The built-in suites, in the order `suite list` shows them.
pub const BUILTIN: [(&str, &str); 10] = [
    (
        "six-patterns",
        include_str!("../../suites/six-patterns.toml"),
    ),
    ("mix-sweep", include_str!("../../suites/mix-sweep.toml")),
    ("mix-table", include_str!("../../suites/mix-table.toml")),
    (
        "files-threads",
        include_str!("../../suites/files-threads.toml"),
    ),
    ("disk-check", include_str!("../../suites/disk-check.toml")),
    (
        "latency-curve",
        include_str!("../../suites/latency-curve.toml"),
    ),
    (
        "thread-sweep",
        include_str!("../../suites/thread-sweep.toml"),
    ),
    ("metadata", include_str!("../../suites/metadata.toml")),
    ("eda-mix", include_str!("../../suites/eda-mix.toml")),
    ("small-files", include_str!("../../suites/small-files.toml")),
];

/// A value that may be one item or a sweep: `4`, `"4k"`, `[1, 2]`, `"1:64:*2"`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Param {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(String),
    List(Vec<Param>),
}

impl Param {
    /// The value as the text a user would type on the command line, so
    /// suites and flags share one parser.
    fn text(&self) -> String {
        match self {
            Param::Int(v) => v.to_string(),
            Param::Float(v) => v.to_string(),
            Param::Bool(v) => v.to_string(),
            Param::Str(s) => s.clone(),
            Param::List(items) => items.iter().map(Param::text).collect::<Vec<_>>().join(","),
        }
    }
}

type P = Option<Spanned<Param>>;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteFile {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub source: String,
    pub table: TableKind,
    /// Run a copy of the first run first and discard it (the papers' advice).
    #[serde(default = "yes")]
    pub warmup_run: bool,
    #[serde(default)]
    pub defaults: Defaults,
    #[serde(rename = "run", default)]
    pub runs: Vec<Spanned<RunEntry>>,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Defaults {
    size: P,
    files: P,
    threads: P,
    iodepth: P,
    duration: P,
    warmup: P,
    engine: P,
    direct: P,
    write_sync: P,
    interval: P,
    seed: P,
    arrivals: P,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunEntry {
    name: Spanned<String>,
    rw: P,
    read_pct: P,
    bs: P,
    threads: P,
    iodepth: P,
    files: P,
    rate: P,
    duration: P,
    warmup: P,
    io_limit: P,
    arrivals: P,
    steady: P,
    /// Percentages of the maximum rate, measured by a first run at full speed.
    curve: P,
    curve_stop_latency: P,
    /// Stop the sweep once IOPS grow less than this percentage.
    until_gain_below: P,
    /// A tree of files and operations on it (`volbench run --ops`), with
    /// its shape; a run with `ops` takes none of the block-I/O keys.
    ops: P,
    depth: P,
    width: P,
    files_per_dir: P,
    file_size: P,
    shared_dirs: P,
    drop_caches: P,
    direct: P,
    /// How the I/O is shaped (`spec::shape`; parsed in `suite/shape.rs`).
    distribution: P,
    seek_pct: P,
    fsync_every: P,
    fdatasync: P,
    end_fsync: P,
    think_time: P,
    cooldown: P,
}

/// Values from the command line (the flags `suite run` shares with `run`);
/// they replace the suite's `[defaults]`, while a value a run sets itself is
/// kept. `args.size` is the size already resolved against the target.
#[derive(Debug, Default, Clone)]
pub struct Overrides {
    pub args: CommonArgs,
    pub no_warmup_run: bool,
}

/// Finds a built-in suite by name, or reads a suite file.
pub fn load(name_or_path: &str) -> Result<(String, String)> {
    if let Some((name, text)) = BUILTIN.iter().find(|(n, _)| *n == name_or_path) {
        return Ok((format!("built-in suite {name}"), text.to_string()));
    }
    let path = std::path::Path::new(name_or_path);
    if path.exists() {
        let text = crate::input::file::read_text(path, "suite file", bounds::MAX_INPUT_FILE)?;
        return Ok((path.display().to_string(), text));
    }
    let names: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
    Err(VbError::input(format!(
        "no built-in suite or file named '{name_or_path}' (built-in: {})",
        names.join(", ")
    )))
}

/// A run entry with `ops`: the tree's phases or mix (see `input::meta`).
/// Its own `warmup` and `duration` apply; for phases the suite-wide ones
/// do not (a phase covers the tree once; its duration is only a cap).
fn tree_entry(
    cx: &Ctx,
    e: &RunEntry,
    ops: &Spanned<Param>,
    name: &str,
    threads: &[u64],
    arrivals: Arrivals,
    o: &Overrides,
) -> Result<Vec<RunSpec>> {
    let block = [
        ("rw", &e.rw),
        ("read_pct", &e.read_pct),
        ("bs", &e.bs),
        ("iodepth", &e.iodepth),
        ("files", &e.files),
        ("io_limit", &e.io_limit),
        ("curve", &e.curve),
        ("until_gain_below", &e.until_gain_below),
    ];
    let shaped = shape::set_keys(e);
    if let Some((key, Some(v))) = block.iter().chain(&shaped).find(|(_, v)| v.is_some()) {
        return Err(cx.err(
            v,
            key,
            VbError::input(format!("{key} is for block I/O, not for a run with ops")),
        ));
    }
    let text = |p: &P| p.as_ref().map(|v| v.get_ref().text());
    let flag = |key: &str, p: &P| -> Result<bool> {
        match p {
            None => Ok(false),
            Some(v) => match v.get_ref() {
                Param::Bool(b) => Ok(*b),
                _ => Err(cx.err(v, key, VbError::input("must be true or false"))),
            },
        }
    };
    let (depth, width, fpd, size) = (
        text(&e.depth),
        text(&e.width),
        text(&e.files_per_dir),
        text(&e.file_size),
    );
    let tree = crate::input::meta::TreeText {
        ops: &ops.get_ref().text(),
        depth: depth.as_deref(),
        width: width.as_deref(),
        files_per_dir: fpd.as_deref(),
        file_size: size.as_deref(),
        shared_dirs: flag("shared_dirs", &e.shared_dirs)?,
        drop_caches: flag("drop_caches", &e.drop_caches)?,
        direct: flag("direct", &e.direct)?,
    };
    let [threads] = threads else {
        return Err(cx.err(
            ops,
            "threads",
            VbError::input("a run with ops takes one thread count"),
        ));
    };
    let base = RunSpec {
        threads: u32::try_from(*threads).unwrap_or(1),
        arrivals,
        ..RunSpec::default()
    };
    let secs = |key: &str, own: &P, over: &Option<String>, lo, hi| -> Result<Option<f64>> {
        match cx.pick(own, over, &None) {
            Some((t, at)) => cx
                .with(
                    key,
                    at,
                    parse_duration_in(key, &t, lo, hi).map(|d| d.as_secs_f64()),
                )
                .map(Some),
            None => Ok(None),
        }
    };
    // The command line's --warmup / --duration are for timed runs.
    let whole_tree = !ops.get_ref().text().contains(':');
    let none: Option<String> = None;
    let (warmup_over, duration_over) = if whole_tree {
        (&none, &none)
    } else {
        (&o.args.warmup, &o.args.duration)
    };
    let timing = crate::input::meta::Timing {
        warmup_s: secs(
            "warmup",
            &e.warmup,
            warmup_over,
            Duration::ZERO,
            bounds::MAX_WARMUP,
        )?,
        duration_s: secs(
            "duration",
            &e.duration,
            duration_over,
            bounds::MIN_DURATION,
            bounds::MAX_DURATION,
        )?,
        steady: flag("steady", &e.steady)? || (o.args.steady && !whole_tree),
    };
    crate::input::meta::tree_runs(Some(name), &base, &tree, timing)
        .map_err(|err| cx.err(ops, "ops", err))
}

fn line_of(text: &str, offset: usize) -> usize {
    let upto = text.get(..offset.min(text.len())).unwrap_or(text);
    upto.matches('\n').count() + 1
}

pub fn parse(origin: &str, text: &str) -> Result<SuiteFile> {
    let suite: SuiteFile = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| line_of(text, s.start)).unwrap_or(0);
        // toml's messages can span lines; an error is one line.
        let msg = e.message().split_whitespace().collect::<Vec<_>>().join(" ");
        VbError::input(format!("{origin} line {line}: {msg}"))
    })?;
    if suite.runs.is_empty() {
        return Err(VbError::input(format!(
            "{origin}: the suite has no [[run]] entries"
        )));
    }
    Ok(suite)
}

/// Everything needed to report an error at a value's line.
struct Ctx<'a> {
    origin: &'a str,
    text: &'a str,
}

impl Ctx<'_> {
    fn err(&self, at: &Spanned<Param>, key: &str, e: VbError) -> VbError {
        let line = line_of(self.text, at.span().start);
        // Most parsers name the key already ("threads 0 is outside 1..4096").
        if e.message.starts_with(key) {
            VbError::input(format!("{} line {line}: {}", self.origin, e.message))
        } else {
            VbError::input(format!("{} line {line}: {key}: {}", self.origin, e.message))
        }
    }

    /// The text of a run's own value, else the override, else the default.
    fn pick<'p>(
        &self,
        own: &'p P,
        over: &'p Option<String>,
        default: &'p P,
    ) -> Option<(String, Option<&'p Spanned<Param>>)> {
        if let Some(v) = own {
            return Some((v.get_ref().text(), Some(v)));
        }
        if let Some(v) = over {
            return Some((v.clone(), None));
        }
        default.as_ref().map(|v| (v.get_ref().text(), Some(v)))
    }

    #[allow(clippy::too_many_arguments)]
    fn seconds(
        &self,
        key: &str,
        own: &P,
        over: &Option<String>,
        def: &P,
        fallback: f64,
        lo: Duration,
        hi: Duration,
    ) -> Result<f64> {
        match self.pick(own, over, def) {
            Some((t, at)) => self.with(
                key,
                at,
                parse_duration_in(key, &t, lo, hi).map(|d| d.as_secs_f64()),
            ),
            None => Ok(fallback),
        }
    }

    fn with<T>(&self, key: &str, at: Option<&Spanned<Param>>, r: Result<T>) -> Result<T> {
        match (r, at) {
            (Ok(v), _) => Ok(v),
            (Err(e), Some(at)) => Err(self.err(at, key, e)),
            (Err(e), None) => Err(VbError::input(format!(
                "--{}: {}",
                key.replace('_', "-"),
                e.message
            ))),
        }
    }
}

/// Expands a suite into one validated job.
pub fn to_job(origin: &str, text: &str, suite: &SuiteFile, o: &Overrides) -> Result<JobSpec> {
    let cx = Ctx { origin, text };
    crate::input::flags::check_target_path(&o.args.target)?;
    // The suite's name is recorded in results and shown in reports.
    bounds::name("name", &suite.name)
        .map_err(|e| VbError::input(format!("{origin}: suite {}", e.message)))?;
    let d = &suite.defaults;
    let none: Option<String> = None;
    let size = match cx.pick(&None, &o.args.size, &d.size) {
        Some((t, at)) => cx.with("size", at, parse_size_in("size", &t, 1, bounds::MAX_SIZE))?,
        None => defaults::DIR_SIZE,
    };
    let files = match cx.pick(&None, &o.args.files, &d.files) {
        Some((t, at)) => cx.with(
            "files",
            at,
            parse_count_in("files", &t, 1, bounds::MAX_FILES),
        )?,
        None => u64::from(defaults::FILES),
    };
    // Bounded just above, so this never truncates.
    let files = u32::try_from(files).unwrap_or(u32::MAX);
    let engine = match cx.pick(&None, &o.args.engine, &d.engine) {
        Some((t, at)) => cx.with("engine", at, EngineChoice::parse(&t))?,
        None => defaults::ENGINE,
    };
    let direct = match &d.direct {
        Some(v) => match v.get_ref() {
            Param::Bool(b) => *b,
            _ => return Err(cx.err(v, "direct", VbError::input("must be true or false"))),
        },
        None => defaults::DIRECT,
    } && !o.args.buffered;
    let write_sync = match cx.pick(&None, &o.args.write_sync, &d.write_sync) {
        Some((t, at)) => cx.with("write_sync", at, crate::spec::WriteSync::parse(&t))?,
        None => crate::spec::WriteSync::None,
    };
    let interval = cx.seconds(
        "interval",
        &None,
        &o.args.interval,
        &d.interval,
        defaults::INTERVAL_S,
        bounds::MIN_INTERVAL,
        bounds::MAX_INTERVAL,
    )?;
    let seed = match cx.pick(&None, &o.args.seed, &d.seed) {
        Some((t, at)) => cx.with("seed", at, parse_count_in("seed", &t, 0, u64::MAX))?,
        None => defaults::SEED,
    };

    let mut runs: Vec<RunSpec> = Vec::new();
    for entry in &suite.runs {
        let e = entry.get_ref();
        let name = e.name.get_ref().clone();
        bounds::name("name", &name).map_err(|err| {
            VbError::input(format!(
                "{origin} line {}: {}",
                line_of(text, e.name.span().start),
                err.message
            ))
        })?;
        let rw = match &e.rw {
            Some(v) => cx.with("rw", Some(v), Pattern::parse(&v.get_ref().text()))?,
            None => defaults::PATTERN,
        };
        let counts = |key: &str,
                      own: &P,
                      over: &Option<String>,
                      def: &P,
                      lo: u64,
                      hi: u64|
         -> Result<Option<Vec<u64>>> {
            match cx.pick(own, over, def) {
                Some((t, at)) => cx
                    .with(key, at, sweep::parse_counts(key, &t, lo, hi))
                    .map(Some),
                None => Ok(None),
            }
        };
        let threads = counts(
            "threads",
            &e.threads,
            &o.args.threads,
            &d.threads,
            1,
            bounds::MAX_THREADS,
        )?
        .unwrap_or(vec![u64::from(defaults::THREADS)]);
        let iodepth = counts(
            "iodepth",
            &e.iodepth,
            &o.args.iodepth,
            &d.iodepth,
            1,
            bounds::MAX_IODEPTH,
        )?
        .unwrap_or(vec![u64::from(defaults::IODEPTH)]);
        let run_files = counts("files", &e.files, &none, &None, 1, bounds::MAX_FILES)?;
        let read_pct = counts("read_pct", &e.read_pct, &none, &None, 0, 100)?.unwrap_or(vec![
            rw.fixed_read_pct().unwrap_or(defaults::MIXED_READ_PCT) as u64,
        ]);
        let bs = match &e.bs {
            Some(v) => cx.with("bs", Some(v), sweep::parse_bs_points(&v.get_ref().text()))?,
            None => vec![vec![crate::spec::BlockSize {
                bytes: 4096,
                weight: 1,
            }]],
        };
        let rates = match &e.rate {
            Some(v) if shape::is_bandwidth(v) => None,
            Some(v) => Some(cx.with(
                "rate",
                Some(v),
                sweep::parse_numbers("rate", &v.get_ref().text()).and_then(|rs| {
                    for r in &rs {
                        bounds::number("rate", *r, bounds::MIN_RATE, bounds::MAX_RATE)?;
                    }
                    Ok(rs)
                }),
            )?),
            None => None,
        };
        let arrivals = match cx.pick(&e.arrivals, &o.args.arrivals, &d.arrivals) {
            Some((t, at)) => cx.with("arrivals", at, Arrivals::parse(&t))?,
            None => defaults::ARRIVALS,
        };
        let steady = match &e.steady {
            Some(v) => match v.get_ref() {
                Param::Bool(b) => *b,
                _ => return Err(cx.err(v, "steady", VbError::input("must be true or false"))),
            },
            None => false,
        } || o.args.steady;
        if let Some(ops) = &e.ops {
            runs.extend(tree_entry(&cx, e, ops, &name, &threads, arrivals, o)?);
            continue;
        }
        // Every point was bounded by its parser, far inside u32.
        let first = |v: &[u64]| -> u32 {
            v.first()
                .copied()
                .and_then(|x| u32::try_from(x).ok())
                .unwrap_or(1)
        };
        let base = RunSpec {
            name: name.clone(),
            rw,
            read_pct: read_pct
                .first()
                .copied()
                .unwrap_or(u64::from(defaults::MIXED_READ_PCT))
                .min(100) as u8,
            bs: bs.first().cloned().unwrap_or_default(),
            threads: first(&threads),
            iodepth: first(&iodepth),
            warmup_s: cx.seconds(
                "warmup",
                &e.warmup,
                &o.args.warmup,
                &d.warmup,
                defaults::WARMUP_S,
                Duration::ZERO,
                bounds::MAX_WARMUP,
            )?,
            duration_s: cx.seconds(
                "duration",
                &e.duration,
                &o.args.duration,
                &d.duration,
                defaults::DURATION_S,
                bounds::MIN_DURATION,
                bounds::MAX_DURATION,
            )?,
            io_limit: match &e.io_limit {
                Some(v) => Some(cx.with(
                    "io_limit",
                    Some(v),
                    parse_size_in("io_limit", &v.get_ref().text(), 1, bounds::MAX_SIZE),
                )?),
                None => None,
            },
            files: run_files.as_deref().map(first),
            rate_iops: rates.as_ref().and_then(|r| r.first().copied()),
            arrivals,
            steady,
            shape: shape::shape(&cx, e, o)?,
            // `direct = false` on one run: that run through the page cache.
            buffered: match e.direct.as_ref().map(|v| (v, v.get_ref())) {
                None | Some((_, Param::Bool(true))) => false,
                Some((_, Param::Bool(false))) => true,
                Some((v, _)) => {
                    return Err(cx.err(v, "direct", VbError::input("must be true or false")));
                }
            },
            ..RunSpec::default()
        };
        let many = |n: usize| n > 1;
        let axes = Axes {
            threads: many(threads.len()).then(|| threads.clone()),
            iodepth: many(iodepth.len()).then(|| iodepth.clone()),
            bs: many(bs.len()).then(|| bs.clone()),
            read_pct: many(read_pct.len()).then(|| read_pct.clone()),
            rate: rates.clone().filter(|r| many(r.len())),
            files: run_files.clone().filter(|f| many(f.len())),
        };
        let mut points =
            sweep::expand(&base, &axes, |r| point_name(&name, r, &axes)).map_err(|err| {
                VbError::input(format!(
                    "{origin} line {}: run '{name}': {}",
                    line_of(text, e.name.span().start),
                    err.message
                ))
            })?;
        if let Some(g) = &e.until_gain_below {
            let pct = cx.with(
                "until_gain_below",
                Some(g),
                positive(&g.get_ref().text()).and_then(|p| {
                    bounds::number(
                        "until_gain_below",
                        p,
                        bounds::MIN_GAIN_PCT,
                        bounds::MAX_GAIN_PCT,
                    )
                }),
            )?;
            for p in &mut points {
                p.stop_rule = Some(StopRule {
                    group: name.clone(),
                    gain_below_pct: Some(pct),
                    latency_above_us: None,
                });
            }
        }
        match &e.curve {
            None => runs.extend(points),
            Some(c) => {
                if points.len() != 1 {
                    return Err(cx.err(
                        c,
                        "curve",
                        VbError::input("a curve run cannot also sweep other values"),
                    ));
                }
                let pcts = cx.with(
                    "curve",
                    Some(c),
                    sweep::parse_numbers("curve", &c.get_ref().text()).and_then(|ps| {
                        for p in &ps {
                            bounds::number(
                                "curve",
                                *p,
                                bounds::MIN_RATE_PCT,
                                bounds::MAX_RATE_PCT,
                            )?;
                        }
                        Ok(ps)
                    }),
                )?;
                let stop_us = match &e.curve_stop_latency {
                    Some(v) => Some(
                        cx.with(
                            "curve_stop_latency",
                            Some(v),
                            parse_duration_in(
                                "curve_stop_latency",
                                &v.get_ref().text(),
                                bounds::MIN_LATENCY,
                                bounds::MAX_LATENCY,
                            ),
                        )?
                        .as_secs_f64()
                            * 1e6,
                    ),
                    None => None,
                };
                let Some(mut max) = points.pop() else {
                    return Err(cx.err(c, "curve", VbError::input("the run has no point")));
                };
                let max_name = format!("{name}-max");
                max.name = max_name.clone();
                max.rate_iops = None;
                runs.push(max.clone());
                for pct in pcts {
                    let mut p = max.clone();
                    p.name = format!("{name}-{}pct", trim_num(pct));
                    p.rate_pct = Some(RatePct {
                        percent: pct,
                        of: max_name.clone(),
                    });
                    p.stop_rule = stop_us.map(|us| StopRule {
                        group: name.clone(),
                        gain_below_pct: None,
                        latency_above_us: Some(us),
                    });
                    runs.push(p);
                }
            }
        }
    }
    if runs.len() > bounds::MAX_RUNS {
        return Err(VbError::input(format!(
            "{origin}: the suite expands into {} runs; at most {}",
            runs.len(),
            bounds::MAX_RUNS
        )));
    }
    if suite.warmup_run
        && !o.no_warmup_run
        && let Some(first) = runs.first()
        && first.meta.as_ref().is_none_or(|m| !m.whole_tree)
    {
        let mut warm = first.clone();
        warm.name = "warmup-run".into();
        warm.discard = true;
        // A discarded run never feeds a stop rule or a curve.
        warm.stop_rule = None;
        warm.rate_pct = None;
        runs.insert(0, warm);
    }
    let job = JobSpec {
        target: TargetSpec {
            path: o.args.target.clone(),
            size,
            files,
            direct,
            allow_overwrite: o.args.allow_overwrite,
            write_sync,
            data: crate::input::data_args::data_spec(&o.args.data)?,
        },
        engine,
        interval_s: interval,
        seed,
        runs,
        suite: Some(SuiteMeta {
            name: suite.name.clone(),
            table: suite.table,
        }),
    };
    job.validate()
        .map_err(|e| VbError::input(format!("{origin}: {}", e.message)))?;
    Ok(job)
}

fn positive(text: &str) -> Result<f64> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| *v > 0.0 && v.is_finite())
        .ok_or_else(|| VbError::input(format!("'{text}' is not a positive number")))
}

fn trim_num(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// A point's name: the run's name plus the values that vary.
fn point_name(base: &str, r: &RunSpec, axes: &Axes) -> String {
    let mut name = base.to_string();
    if let Some(f) = r.files.filter(|_| axes.files.is_some()) {
        name.push_str(&format!("-{f}f"));
    }
    if axes.threads.is_some() {
        name.push_str(&format!("-{}t", r.threads));
    }
    if axes.iodepth.is_some() {
        name.push_str(&format!("-qd{}", r.iodepth));
    }
    if axes.bs.is_some() {
        name.push_str(&format!("-{}", r.bs_label()));
    }
    if axes.read_pct.is_some() {
        name.push_str(&format!("-{}r", r.read_pct));
    }
    if let Some(rate) = r.rate_iops.filter(|_| axes.rate.is_some()) {
        name.push_str(&format!("-{}iops", trim_num(rate)));
    }
    name
}

/// One line per built-in suite for `suite list`.
pub fn list() -> Vec<(String, String, String)> {
    BUILTIN
        .iter()
        .map(|(name, text)| match parse(name, text) {
            Ok(s) => (s.name, s.description, s.source),
            Err(e) => (name.to_string(), format!("(invalid: {e})"), String::new()),
        })
        .collect()
}

mod shape;

#[cfg(test)]
mod tests;
