//! A parsed suite expanded into one validated `JobSpec`: `[defaults]` and
//! the command line's overrides, sweeps into points, curves into a maximum
//! run and its rate-limited fractions, the discarded warm-up run.

use std::time::Duration;

use super::tree::tree_entry;
use super::{Ctx, Defaults, Overrides, P, Param, Resolved, RunEntry, SuiteFile, line_of, shape};
use crate::error::{Result, VbError};
use crate::input::sweep::{self, Axes};
use crate::spec::defaults;
use crate::spec::latency::LatencyLimit;
use crate::spec::{
    Arrivals, EngineChoice, JobSpec, Pattern, RatePct, RunSpec, StopRule, SuiteMeta, TargetSpec,
};
use crate::units::bounds;
use crate::units::{parse_count_in, parse_duration_in, parse_size_in};

/// Expands a suite that includes no files (a built-in's, an import's):
/// `expand` over it alone (`Resolved::alone`).
pub fn to_job(origin: &str, text: &str, suite: &SuiteFile, o: &Overrides) -> Result<JobSpec> {
    expand(&Resolved::alone(origin, text, suite.clone())?, o)
}

/// Expands a suite, its includes read, into one validated job.
pub fn expand(r: &Resolved, o: &Overrides) -> Result<JobSpec> {
    let Some(top) = r.top() else {
        return Err(VbError::input("the suite has no file"));
    };
    let (origin, suite) = (top.origin.as_str(), &top.suite);
    let cx = Ctx {
        origin,
        text: &top.text,
    };
    crate::input::flags::check_target_path(&o.target)?;
    // The suite's name is recorded in results and shown in reports.
    bounds::name("name", &suite.name)
        .map_err(|e| VbError::input(format!("{origin}: suite {}", e.message)))?;
    super::include::check_whole_job(r)?;
    let d = &suite.defaults;
    let size = cx
        .value("size", (&None, o.size, &d.size), |t| {
            parse_size_in("size", t, 1, bounds::MAX_SIZE)
        })?
        .unwrap_or(defaults::DIR_SIZE);
    let files_over = match o.files.as_deref() {
        None => None,
        Some([one]) => Some(*one),
        Some(_) => {
            return Err(VbError::input(
                "--files: a suite takes one file count here (a run entry's files = [1, 4] sweeps)",
            ));
        }
    };
    let files = cx
        .value("files", (&None, files_over, &d.files), |t| {
            parse_count_in("files", t, 1, bounds::MAX_FILES)
        })?
        .unwrap_or(u64::from(defaults::FILES));
    // Bounded just above, so this never truncates.
    let files = u32::try_from(files).unwrap_or(u32::MAX);
    let engine = cx
        .value("engine", (&None, o.engine, &d.engine), EngineChoice::parse)?
        .unwrap_or(defaults::ENGINE);
    let direct = match &d.direct {
        Some(v) => match v.get_ref() {
            Param::Bool(b) => *b,
            _ => return Err(cx.err(v, "direct", VbError::input("must be true or false"))),
        },
        None => defaults::DIRECT,
    } && !o.buffered;
    // The flags win over the suite's key; fio's default (on) otherwise.
    let invalidate = match (o.invalidate, &d.invalidate) {
        (Some(b), _) => b,
        (None, Some(v)) => match v.get_ref() {
            Param::Bool(b) => *b,
            _ => return Err(cx.err(v, "invalidate", VbError::input("must be true or false"))),
        },
        (None, None) => true,
    };
    let write_sync = cx
        .value(
            "write_sync",
            (&None, o.write_sync, &d.write_sync),
            crate::spec::WriteSync::parse,
        )?
        .unwrap_or(crate::spec::WriteSync::None);
    let interval = cx.seconds(
        "interval",
        &None,
        o.interval_s,
        &d.interval,
        defaults::INTERVAL_S,
        bounds::MIN_INTERVAL,
        bounds::MAX_INTERVAL,
    )?;
    let seed = cx
        .value("seed", (&None, o.seed, &d.seed), |t| {
            parse_count_in("seed", t, 0, u64::MAX)
        })?
        .unwrap_or(defaults::SEED);
    let fill_bs = cx.value("fill_bs", (&None, o.fill_bs, &d.fill_bs), |t| {
        crate::input::args::fill::fill_spec("fill_bs", Some(t), invalidate).map(|f| f.bs)
    })?;
    let fill_threads = cx.value(
        "fill_threads",
        (&None, o.fill_threads, &d.fill_threads),
        |t| crate::input::args::fill::fill_threads("fill_threads", t),
    )?;
    let open_files = cx
        .value(
            "open_files",
            (&None, o.open_files.map(u64::from), &d.open_files),
            |t| parse_count_in("open_files", t, 1, bounds::MAX_FILES),
        )?
        .map(|n| n as u32);

    let mut runs: Vec<RunSpec> = Vec::new();
    for &(file, k) in &r.order {
        let chain: Vec<Scope> = r
            .chain(file)
            .into_iter()
            .map(|f| Scope {
                cx: Ctx {
                    origin: &f.origin,
                    text: &f.text,
                },
                d: &f.suite.defaults,
            })
            .collect();
        let entry = r
            .files
            .get(file)
            .and_then(|f| f.suite.runs.get(k))
            .ok_or_else(|| VbError::input(format!("{origin}: a run was lost reading includes")))?;
        runs.extend(entry_runs(&chain, entry.get_ref(), o)?);
    }
    if runs.len() > bounds::MAX_RUNS {
        return Err(VbError::input(format!(
            "{origin}: the suite expands into {} runs; at most {}",
            runs.len(),
            bounds::MAX_RUNS
        )));
    }
    // A replay's warm-up would issue the trace twice.
    let replaying = suite.runs.iter().any(|e| e.get_ref().replay.is_some());
    if suite.warmup_run && !o.no_warmup_run && !replaying {
        if let Some(first) = runs.first() {
            if first.meta.as_ref().is_none_or(|m| !m.whole_tree) {
                let mut warm = first.clone();
                warm.name = "warmup-run".into();
                warm.discard = true;
                // A discarded run never feeds a stop rule or a curve.
                warm.stop_rule = None;
                warm.rate_pct = None;
                runs.insert(0, warm);
            }
        }
    }
    let mut job = JobSpec {
        target: TargetSpec {
            path: o.target.clone(),
            size,
            files,
            direct,
            allow_overwrite: o.allow_overwrite,
            write_sync,
            data: super::data::spec(
                &cx,
                &o.data,
                &super::data::Keys {
                    compress: &d.compress,
                    dedup: &d.dedup,
                    dedup_unit: &d.dedup_unit,
                    verify: &d.verify,
                },
            )?,
            fill: crate::spec::fill::FillSpec {
                bs: fill_bs.unwrap_or(crate::spec::fill::DEFAULT_BS),
                invalidate,
                threads: fill_threads,
            },
            open_files,
        },
        engine,
        interval_s: interval,
        seed,
        runs,
        suite: Some(SuiteMeta {
            name: suite.name.clone(),
            table: suite.table,
        }),
        targets: None,
        reading: o.reading.clone(),
    };
    super::replay::apply(&cx, suite, r.order.len(), o, &mut job)?;
    job.validate()
        .map_err(|e| VbError::input(format!("{origin}: {}", e.message)))?;
    Ok(job)
}

/// One run entry's runs: its keys over the flags and the `[defaults]` of
/// its file and of the files including it (`chain`, nearest first), its
/// sweeps expanded into points, a stop rule on a growth curve, or a
/// latency curve (`curve_runs`); an `ops` entry is a metadata tree
/// (`tree_entry`).
/// A run entry's `bs` (each point of a sweep) and `write_bs` (one list:
/// writes' sizes do not sweep).
type Sizes = (
    Vec<Vec<crate::spec::BlockSize>>,
    Vec<crate::spec::BlockSize>,
);

fn block_sizes(cx: &Ctx, e: &RunEntry) -> Result<Sizes> {
    let bs = match &e.bs {
        Some(v) => cx.with("bs", Some(v), sweep::parse_bs_points(&v.get_ref().text()))?,
        None => vec![vec![crate::spec::BlockSize {
            bytes: 4096,
            weight: 1,
        }]],
    };
    let write_bs = match &e.write_bs {
        Some(v) => cx.with(
            "write_bs",
            Some(v),
            sweep::parse_write_bs("write_bs", &v.get_ref().text()),
        )?,
        None => Vec::new(),
    };
    Ok((bs, write_bs))
}

fn entry_runs(chain: &[Scope<'_>], e: &RunEntry, o: &Overrides) -> Result<Vec<RunSpec>> {
    let Some(cx) = chain.first().map(|s| &s.cx) else {
        return Ok(Vec::new());
    };
    let (origin, text) = (cx.origin, cx.text);
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
    let counts = |key: &str, own: &P, over: &Option<Vec<u64>>, pick: Pick, lo: u64, hi: u64| {
        scoped(chain, key, own, over.clone(), pick, |t| {
            sweep::parse_counts(key, t, lo, hi)
        })
    };
    let threads = counts(
        "threads",
        &e.threads,
        &o.threads,
        |d| &d.threads,
        1,
        bounds::MAX_THREADS,
    )?
    .unwrap_or(vec![u64::from(defaults::THREADS)]);
    let iodepth = counts(
        "iodepth",
        &e.iodepth,
        &o.iodepth,
        |d| &d.iodepth,
        1,
        bounds::MAX_IODEPTH,
    )?
    .unwrap_or(vec![u64::from(defaults::IODEPTH)]);
    // The suite's own `[defaults]` size and files are the job's set; an
    // included file's are its runs' own set, unless a flag gives them.
    let included = chain.split_last().map(|(_, inner)| inner).unwrap_or(&[]);
    let files_in = |t: &str| sweep::parse_counts("files", t, 1, bounds::MAX_FILES);
    let run_files = match (
        &e.files,
        &o.files,
        included.iter().find(|s| s.d.files.is_some()),
    ) {
        (None, None, Some(s)) => s.cx.value("files", (&None, None, &s.d.files), files_in)?,
        (own, ..) => cx.value("files", (own, None, &None), files_in)?,
    };
    let run_sizes = match (
        &e.size,
        o.size,
        included.iter().find(|s| s.d.size.is_some()),
    ) {
        (None, None, Some(s)) => super::size::sizes(&s.cx, &s.d.size)?,
        _ => super::size::sizes(cx, &e.size)?,
    };
    let read_pct = cx
        .value("read_pct", (&e.read_pct, None, &None), |t| {
            sweep::parse_counts("read_pct", t, 0, 100)
        })?
        .unwrap_or(vec![
            rw.fixed_read_pct().unwrap_or(defaults::MIXED_READ_PCT) as u64,
        ]);
    let (bs, write_bs) = block_sizes(cx, e)?;
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
    let arrivals = scoped(
        chain,
        "arrivals",
        &e.arrivals,
        o.arrivals,
        |d| &d.arrivals,
        Arrivals::parse,
    )?
    .unwrap_or(defaults::ARRIVALS);
    let steady = match &e.steady {
        Some(v) => match v.get_ref() {
            Param::Bool(b) => *b,
            _ => return Err(cx.err(v, "steady", VbError::input("must be true or false"))),
        },
        None => false,
    } || o.steady;
    if let Some(ops) = &e.ops {
        return tree_entry(cx, e, ops, &name, &threads, arrivals, o);
    }
    // Every point was bounded by its parser, far inside u32.
    let first = |v: &[u64]| -> u32 {
        v.first()
            .copied()
            .and_then(|x| u32::try_from(x).ok())
            .unwrap_or(1)
    };
    let mut base = RunSpec {
        name: name.clone(),
        rw,
        read_pct: read_pct
            .first()
            .copied()
            .unwrap_or(u64::from(defaults::MIXED_READ_PCT))
            .min(100) as u8,
        bs: bs.first().cloned().unwrap_or_default(),
        write_bs,
        threads: first(&threads),
        iodepth: first(&iodepth),
        warmup_s: seconds(
            chain,
            ("warmup", &e.warmup, o.warmup_s, |d| &d.warmup),
            defaults::WARMUP_S,
            Duration::ZERO,
            bounds::MAX_WARMUP,
        )?,
        duration_s: seconds(
            chain,
            ("duration", &e.duration, o.duration_s, |d| &d.duration),
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
        size: run_sizes.as_ref().and_then(|s| s.first().copied()),
        rate_iops: rates.as_ref().and_then(|r| r.first().copied()),
        arrivals,
        steady,
        shape: shape::shape(cx, e, o)?,
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
    rates_of(cx, e, read_pct.len(), &mut base)?;
    let many = |n: usize| n > 1;
    let axes = Axes {
        threads: many(threads.len()).then(|| threads.clone()),
        iodepth: many(iodepth.len()).then(|| iodepth.clone()),
        bs: many(bs.len()).then(|| bs.clone()),
        read_pct: many(read_pct.len()).then(|| read_pct.clone()),
        rate: rates.clone().filter(|r| many(r.len())),
        files: run_files.clone().filter(|f| many(f.len())),
        size: run_sizes.clone().filter(|s| many(s.len())),
    };
    let mut points =
        sweep::expand(&base, &axes, |r| point_name(&name, r, &axes)).map_err(|err| {
            VbError::input(format!(
                "{origin} line {}: run '{name}': {}",
                line_of(text, e.name.span().start),
                err.message
            ))
        })?;
    if let Some(rule) = gain_rule(cx, e, &name)? {
        for p in &mut points {
            p.stop_rule = Some(rule.clone());
        }
    }
    match &e.curve {
        None => Ok(points),
        Some(c) => curve_runs(cx, e, c, points, &name),
    }
}

/// One file a run's defaults come from: the run's own file first, the
/// suite itself last.
struct Scope<'a> {
    cx: Ctx<'a>,
    d: &'a Defaults,
}

/// Which key of `[defaults]`.
type Pick = fn(&Defaults) -> &P;

/// A run's `key`: its own value, else the flag's, else the nearest
/// `[defaults]` in `chain` that sets it, each read (and its error placed)
/// in the file it is written in.
fn scoped<T>(
    chain: &[Scope<'_>],
    key: &str,
    own: &P,
    over: Option<T>,
    pick: Pick,
    parse: impl Fn(&str) -> Result<T>,
) -> Result<Option<T>> {
    let Some(first) = chain.first() else {
        return Ok(over);
    };
    if own.is_some() || over.is_some() {
        return first.cx.value(key, (own, over, &None), parse);
    }
    match chain.iter().find(|s| pick(s.d).is_some()) {
        Some(s) => s.cx.value(key, (&None, None, pick(s.d)), parse),
        None => Ok(None),
    }
}

/// A duration in seconds, as `scoped`, `fallback` when none is given.
fn seconds(
    chain: &[Scope<'_>],
    (key, own, over, pick): (&str, &P, Option<f64>, Pick),
    fallback: f64,
    lo: Duration,
    hi: Duration,
) -> Result<f64> {
    let parse = |t: &str| parse_duration_in(key, t, lo, hi).map(|d| d.as_secs_f64());
    Ok(scoped(chain, key, own, over, pick, parse)?.unwrap_or(fallback))
}

/// A growth curve's stop rule (`until_gain_below`): the points after the
/// knee, where a step gains less than this percentage, are skipped.
fn gain_rule(cx: &Ctx<'_>, e: &RunEntry, name: &str) -> Result<Option<StopRule>> {
    let Some(g) = &e.until_gain_below else {
        return Ok(None);
    };
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
    Ok(Some(StopRule {
        group: name.to_string(),
        gain_below_pct: Some(pct),
        latency_above_us: None,
        percentile_above: Vec::new(),
    }))
}

/// A latency curve: the run at its maximum rate, then at each percentage of
/// what that measured, stopped once the latency passes its limit.
fn curve_runs(
    cx: &Ctx<'_>,
    e: &RunEntry,
    c: &toml::Spanned<Param>,
    points: Vec<RunSpec>,
    name: &str,
) -> Result<Vec<RunSpec>> {
    let mut runs = Vec::new();
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
                bounds::number("curve", *p, bounds::MIN_RATE_PCT, bounds::MAX_RATE_PCT)?;
            }
            Ok(ps)
        }),
    )?;
    let (stop_us, stop_pcts) = curve_stop(cx, e)?;
    let mut points = points;
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
        p.stop_rule = (stop_us.is_some() || !stop_pcts.is_empty()).then(|| StopRule {
            group: name.to_string(),
            gain_below_pct: None,
            latency_above_us: stop_us,
            percentile_above: stop_pcts.clone(),
        });
        runs.push(p);
    }
    Ok(runs)
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
    if let Some(s) = r.size.filter(|_| axes.size.is_some()) {
        name.push_str(&format!("-{}", crate::units::format_size(s)));
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

/// A run entry's `rate_iops` and `latency_target` (with `search_steps`,
/// `search_precision`), through the flags' own parser so both read alike.
fn rates_of(cx: &Ctx, e: &super::RunEntry, mix_points: usize, base: &mut RunSpec) -> Result<()> {
    let text = |p: &P| p.as_ref().map(|v| v.get_ref().text());
    let args = crate::input::args::rate::RateArgs {
        rate_iops: text(&e.rate_iops),
        rate_bw: text(&e.rate_bw),
        latency_target: text(&e.latency_target),
        search_steps: text(&e.search_steps),
        search_precision: text(&e.search_precision),
    };
    let (key, at) = match (&e.rate_iops, &e.rate_bw, &e.latency_target) {
        (Some(v), ..) => ("rate_iops", Some(v)),
        (None, Some(v), _) => ("rate_bw", Some(v)),
        (None, None, Some(v)) => ("latency_target", Some(v)),
        (None, None, None) => match (&e.search_steps, &e.search_precision) {
            (Some(v), _) => {
                return Err(cx.err(v, "search_steps", VbError::input("needs latency_target")));
            }
            (None, Some(v)) => {
                return Err(cx.err(
                    v,
                    "search_precision",
                    VbError::input("needs latency_target"),
                ));
            }
            (None, None) => return Ok(()),
        },
    };
    let capped = e.rate_iops.as_ref().map(|v| ("rate_iops", v));
    if let (true, Some((key, v))) = (
        mix_points > 1,
        capped.or(e.rate_bw.as_ref().map(|v| ("rate_bw", v))),
    ) {
        return Err(cx.err(
            v,
            key,
            VbError::input("caps each direction of one mix; sweep read_pct without it"),
        ));
    }
    let mix_given = e.read_pct.is_some() || !base.rw.is_mixed();
    cx.with(key, at, crate::input::rate::apply(&args, mix_given, base))
}

/// A curve's `curve_stop_latency`: "20ms" stops on the mean (µs), and
/// "p99=20ms" on a percentile (the `--latency-target` form).
fn curve_stop(cx: &Ctx, e: &super::RunEntry) -> Result<(Option<f64>, Vec<LatencyLimit>)> {
    let Some(v) = &e.curve_stop_latency else {
        return Ok((None, Vec::new()));
    };
    let text = v.get_ref().text();
    if text.contains('=') {
        let limits = LatencyLimit::parse_list("curve_stop_latency", &text);
        return Ok((None, cx.with("curve_stop_latency", Some(v), limits)?));
    }
    let d = parse_duration_in(
        "curve_stop_latency",
        &text,
        bounds::MIN_LATENCY,
        bounds::MAX_LATENCY,
    );
    let us = cx.with("curve_stop_latency", Some(v), d)?.as_secs_f64() * 1e6;
    Ok((Some(us), Vec::new()))
}
