//! Checks on results volbench did not just compute itself: a result.json
//! given to `report` or `compare`, and the run results an agent sends. Both
//! are untrusted; they are checked once, where they come in, so every view
//! and merge after that can rely on finite, bounded, self-consistent
//! numbers and on strings free of terminal escapes.

use serde_json::Value;

use crate::result::cluster::Cluster;
use crate::result::environment::check_environment;
pub(crate) use crate::result::environment::{check_blocks, check_host_environment};
use crate::result::targets::TargetRun;
use crate::result::{
    LatSummary, MAX_INTERVALS, OpTotals, PhaseName, ResultDoc, RunResult, SCHEMA, Totals,
};
use crate::spec::RunSpec;
use crate::stats::{BucketedHistogram, GROUPING_POWER, MAX_VALUE_POWER};

/// Highest latency a histogram can hold (2^40 ns, about 18 minutes), in µs:
/// no recorded latency is larger.
pub(crate) const MAX_LAT_US: f64 = ((1u64 << MAX_VALUE_POWER) as f64) / 1000.0;
/// No client does more: 10^10 operations per second per result.
pub(crate) const MAX_IOPS: f64 = 1e10;
/// 10^9 MiB/s (about 1 PiB/s).
pub(crate) const MAX_MIB_S: f64 = 1e9;
/// A year in seconds bounds every duration and time.
pub(crate) const MAX_SECONDS: f64 = 366.0 * 86400.0;
/// CPU in percent of one core: 100,000 cores.
pub(crate) const MAX_CPU_PCT: f64 = 1e7;
/// Longest string kept from an untrusted result (a path, a note, an error).
pub const MAX_STRING: usize = 8192;
use super::sizes::{check_counts, most_runs};
const MIB: f64 = 1024.0 * 1024.0;

/// Replaces control characters (terminal escapes, newlines that would break
/// a table) with '?' and bounds the length.
pub fn clean(text: &str, max: usize) -> String {
    clean_keeping(text, max, false)
}

fn clean_keeping(text: &str, max: usize, newlines: bool) -> String {
    let bad = |c: char| c.is_control() && !(newlines && c == '\n');
    let mut out: String = text
        .chars()
        .take(max)
        .map(|c| if bad(c) { '?' } else { c })
        .collect();
    if text.chars().nth(max).is_some() {
        out.push_str("...");
    }
    out
}

/// Cleans every string in a JSON value (see `clean`); `newlines` keeps
/// line breaks, for messages printed as they are.
pub(crate) fn clean_strings(v: &mut Value, newlines: bool) {
    match v {
        Value::String(s) => {
            let bad = |c: char| c.is_control() && !(newlines && c == '\n');
            if s.len() > MAX_STRING || s.chars().any(bad) {
                *s = clean_keeping(s, MAX_STRING, newlines);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| clean_strings(x, newlines)),
        Value::Object(o) => o.values_mut().for_each(|x| clean_strings(x, newlines)),
        _ => {}
    }
}

/// Parses and checks a result.json. Errors say what is wrong, in one line.
/// The text goes straight into the typed structure (strings cleaned in the
/// text first, the file's own bytes dropped as soon as the cleaned copy is
/// made: `report` reads files of up to 256 MiB), never through a
/// `serde_json::Value`, whose overhead a hostile file could multiply many
/// times over; the counts typed parsing could still multiply are bounded.
pub fn parse_result(bytes: &[u8]) -> Result<ResultDoc, String> {
    parse_result_owned(bytes.to_vec())
}

/// `parse_result` of bytes it may drop (a file read whole).
pub fn parse_result_owned(bytes: Vec<u8>) -> Result<ResultDoc, String> {
    #[derive(serde::Deserialize)]
    struct Head {
        schema: Option<Value>,
    }
    let head: Head = serde_json::from_slice(&bytes).map_err(|e| match e.classify() {
        serde_json::error::Category::Data => "it is not an object with a schema field".into(),
        _ => e.to_string(),
    })?;
    // Too many runs or hosts are refused before any is built.
    if head.schema.as_ref().and_then(Value::as_str) == Some(SCHEMA) {
        if let Ok(counts) = serde_json::from_slice::<super::sizes::Counts>(&bytes) {
            counts.check()?;
        }
    }
    match head.schema.as_ref().and_then(Value::as_str) {
        Some(SCHEMA) => {}
        Some(other) => {
            return Err(format!(
                "it has schema '{}'; this volbench reads '{SCHEMA}'",
                clean(other, 100)
            ));
        }
        None => return Err("it has no schema field".into()),
    }
    let text = super::clean_json::clean_json_strings(&bytes, MAX_STRING);
    drop(bytes);
    let mut doc: ResultDoc = serde_json::from_slice(&text).map_err(|e| e.to_string())?;
    super::targets::upgrade(&mut doc);
    check_doc(&doc)?;
    Ok(doc)
}

/// Everything the views rely on.
pub fn check_doc(doc: &ResultDoc) -> Result<(), String> {
    let most = most_runs(doc);
    if doc.runs.len() > most {
        return Err(format!(
            "{} runs, more than {most}: no volbench job writes that many",
            doc.runs.len()
        ));
    }
    check_counts(doc)?;
    // A merge of hosts or of a local list of targets adds rates measured
    // over each part's own window, so only one-man results must match
    // their ops and duration exactly.
    for r in &doc.runs {
        let rates = if doc.cluster.is_some() || !r.targets.is_empty() {
            Rates::Merged
        } else {
            Rates::Exact
        };
        check_run(r, rates).map_err(|e| format!("run '{}': {e}", r.name))?;
        check_targets(r, doc.cluster.as_ref()).map_err(|e| format!("run '{}': {e}", r.name))?;
    }
    for (i, f) in doc.fill.iter().enumerate() {
        f.check()
            .map_err(|e| format!("fill {} ({}): {e}", i + 1, f.path))?;
    }
    check_environment(doc)?;
    if let Some(t) = &doc.target {
        if t.files == 0 {
            return Err("a target of 0 files".into());
        }
    }
    if let Some(m) = doc.target.as_ref().and_then(|t| t.memory.as_deref()) {
        if !super::MEMORY_KINDS.contains(&m) {
            return Err(format!(
                "target memory '{}': not one of {}",
                crate::units::bounds::one_line(m),
                super::MEMORY_KINDS.join(", ")
            ));
        }
    }
    if let Some(c) = &doc.cluster {
        if c.hosts.len() > crate::units::bounds::MAX_HOSTS || c.runs.len() > most {
            return Err("a cluster section out of bounds".into());
        }
        for h in &c.hosts {
            for r in &h.runs {
                check_run(r, Rates::Merged)
                    .map_err(|e| format!("host '{}', run '{}': {e}", h.name, r.name))?;
            }
            if let Some(u) = &h.unfinished {
                let what = format!("host '{}', unfinished run", h.name);
                if u.intervals.len() > MAX_INTERVALS + 2 {
                    return Err(format!("{what}: {} intervals", u.intervals.len()));
                }
                for iv in &u.intervals {
                    check_interval(iv, MAX_SECONDS).map_err(|e| format!("{what}: {e}"))?;
                }
            }
            for v in [h.clock_offset_ms, h.rtt_ms].into_iter().flatten() {
                if !(v.is_finite() && v.abs() <= MAX_SECONDS * 1000.0) {
                    return Err(format!(
                        "host '{}': a clock offset of {} ms",
                        h.name,
                        num(v)
                    ));
                }
            }
        }
        for r in &c.runs {
            bounded("start skew (ms)", r.start_skew_ms, MAX_SECONDS * 1000.0)?;
        }
        // A host-count point runs on the first N hosts: there must be N.
        for r in &doc.runs {
            if let Some(n) = r.workload.host_count {
                if n as usize > c.hosts.len() {
                    return Err(format!(
                        "run '{}': host_count {n}, but the result names {} hosts",
                        r.name,
                        c.hosts.len()
                    ));
                }
            }
        }
        let k = &c.coordinator;
        for v in [k.user_s, k.sys_s, k.wall_s, k.ssh_user_s, k.ssh_sys_s] {
            bounded("coordinator time", v, MAX_SECONDS)?;
        }
        bounded("coordinator CPU", k.cpu_pct, MAX_CPU_PCT)?;
    }
    Ok(())
}

/// How a result's rates must relate to its operation counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rates {
    /// Computed by one process over the phase's duration: IOPS = ops /
    /// seconds exactly (up to rounding in the JSON).
    Exact,
    /// Added over parts measured over their own windows, each no longer
    /// than the merged phase: IOPS is at least ops / seconds.
    Merged,
}

/// A number that must be finite, at least 0 and at most `max`.
pub(crate) fn bounded(what: &str, v: f64, max: f64) -> Result<(), String> {
    if v.is_finite() && (0.0..=max).contains(&v) {
        Ok(())
    } else {
        Err(format!("{what} is {}, outside 0..{max:e}", num(v)))
    }
}

/// A number as a person reads it: 1e308, not 309 digits.
pub(crate) fn num(v: f64) -> String {
    if v.is_finite() && v != 0.0 && !(1e-6..1e15).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

fn check_workload(w: &RunSpec) -> Result<(), String> {
    if w.bs.is_empty() || w.bs.len() > 1024 || w.write_bs.len() > 1024 {
        return Err(format!(
            "{} block sizes ({} of writes)",
            w.bs.len(),
            w.write_bs.len()
        ));
    }
    for b in w.bs.iter().chain(&w.write_bs) {
        if b.bytes == 0 || b.bytes > 1 << 40 || b.weight == 0 {
            return Err(format!(
                "a block size of {} bytes (weight {})",
                b.bytes, b.weight
            ));
        }
    }
    if w.read_pct > 100 {
        return Err(format!("read_pct {}", w.read_pct));
    }
    if w.threads == 0 || w.iodepth == 0 {
        return Err("0 threads or iodepth 0".into());
    }
    if let Some(size) = w.size {
        if !(1..=crate::units::bounds::MAX_SIZE).contains(&size) {
            return Err(format!(
                "size is {size}, outside 1..{}",
                crate::units::bounds::MAX_SIZE
            ));
        }
    }
    bounded("duration_s", w.duration_s, MAX_SECONDS)?;
    bounded("warmup_s", w.warmup_s, MAX_SECONDS)?;
    if let Some(r) = w.rate_iops {
        bounded("rate_iops", r, MAX_IOPS)?;
    }
    if let Some(p) = &w.rate_pct {
        bounded("rate percent", p.percent, 1e6)?;
    }
    if let Some(n) = w.host_count {
        if !(1..=crate::units::bounds::MAX_HOSTS as u32).contains(&n) {
            return Err(format!(
                "host_count {n}, outside 1..{}",
                crate::units::bounds::MAX_HOSTS
            ));
        }
    }
    if let Some(s) = &w.stop_rule {
        for v in [s.gain_below_pct, s.latency_above_us].into_iter().flatten() {
            if !v.is_finite() {
                return Err("a stop rule threshold that is not a number".into());
            }
        }
    }
    Ok(())
}

pub(crate) fn check_lat(what: &str, l: &LatSummary, ops: u64) -> Result<(), String> {
    for (name, v) in [
        ("mean", l.mean),
        ("min", l.min),
        ("max", l.max),
        ("stddev", l.stddev),
        ("p50", l.p50),
        ("p90", l.p90),
        ("p99", l.p99),
        ("p99.9", l.p99_9),
        ("p99.99", l.p99_99),
    ] {
        bounded(&format!("{what} latency {name} (us)"), v, MAX_LAT_US)?;
    }
    if ops > 0 && l.min > l.max {
        return Err(format!(
            "{what} latency min {} is above max {}",
            num(l.min),
            num(l.max)
        ));
    }
    Ok(())
}

/// Whether `claimed` agrees with `count` over `seconds` (JSON may round
/// the last digit of a float).
fn agrees(claimed: f64, count: f64, seconds: f64, rates: Rates) -> bool {
    let expect = if seconds > 0.0 { count / seconds } else { 0.0 };
    let tol = 1e-9 * expect.abs().max(claimed.abs()) + 1e-9;
    match rates {
        Rates::Exact => (claimed - expect).abs() <= tol,
        Rates::Merged => claimed + tol >= expect,
    }
}

fn check_totals(
    what: &str,
    t: &OpTotals,
    w: &RunSpec,
    seconds: f64,
    rates: Rates,
) -> Result<(), String> {
    bounded(&format!("{what} IOPS"), t.iops, MAX_IOPS)?;
    bounded(&format!("{what} MiB/s"), t.mib_s, MAX_MIB_S)?;
    check_lat(what, &t.lat_us, t.ops)?;
    if let Some(s) = &t.service_lat_us {
        check_lat(&format!("{what} service"), s, t.ops)?;
    }
    let lo = t.ops.checked_mul(w.min_bs());
    let hi = t.ops.checked_mul(w.max_bs());
    match (lo, hi) {
        // A metadata run's operations move whole files, of any size.
        _ if w.meta.is_some() => {}
        // A replay's requests are each their own size, up to the largest.
        (Some(_), Some(hi)) if w.replay.is_some() && t.bytes >= t.ops && t.bytes <= hi => {}
        (Some(lo), Some(hi)) if (lo..=hi).contains(&t.bytes) => {}
        _ => {
            return Err(format!(
                "{what}: {} bytes in {} operations of {} bytes",
                t.bytes,
                t.ops,
                w.bs_label()
            ));
        }
    }
    if !agrees(t.iops, t.ops as f64, seconds, rates) {
        return Err(format!(
            "{what} IOPS {} does not agree with {} operations in {} s",
            num(t.iops),
            t.ops,
            num(seconds)
        ));
    }
    if !agrees(t.mib_s, t.bytes as f64 / MIB, seconds, rates) {
        return Err(format!(
            "{what} MiB/s {} does not agree with {} bytes in {} s",
            num(t.mib_s),
            t.bytes,
            num(seconds)
        ));
    }
    Ok(())
}

/// A stored histogram: our configuration (any other would make rebuilding
/// it allocate what it asks, 20 GB for the asking), its canonical form, and
/// as many operations as the totals claim.
pub(crate) fn check_histogram(what: &str, h: &BucketedHistogram, ops: u64) -> Result<(), String> {
    if h.unit != "ns" || h.grouping_power != GROUPING_POWER || h.max_value_power != MAX_VALUE_POWER
    {
        return Err(format!(
            "{what} histogram has another configuration (unit {}, grouping power {}, \
             max value power {}; this volbench reads ns, {GROUPING_POWER}, {MAX_VALUE_POWER})",
            clean(&h.unit, 16),
            h.grouping_power,
            h.max_value_power
        ));
    }
    let mut count = 0u64;
    for b in &h.buckets {
        count = count
            .checked_add(b[2])
            .ok_or_else(|| format!("{what} histogram overflows"))?;
    }
    if count != ops {
        return Err(format!(
            "{what} histogram holds {count} operations, the totals say {ops}"
        ));
    }
    let rebuilt = h
        .to_histogram()
        .map_err(|e| format!("{what} histogram: {e}"))?;
    // The canonical form: every bucket once, in order, with its true bounds.
    if BucketedHistogram::from_histogram(&rebuilt) != *h {
        return Err(format!("{what} histogram has buckets out of shape"));
    }
    Ok(())
}

fn phase_seconds(r: &RunResult, name: PhaseName) -> f64 {
    r.phases
        .iter()
        .find(|p| p.name == name)
        .map_or(0.0, |p| p.duration_s)
}

/// A metadata run's operations: each sound on its own, and together the
/// run's read (looking) and write (changing) totals.
fn check_meta_ops(r: &RunResult, measured: f64, rates: Rates) -> Result<(), String> {
    if r.meta_ops.is_empty() {
        return Ok(());
    }
    if r.workload.meta.is_none() {
        return Err("per-operation results in a run that is not a metadata run".into());
    }
    let mut seen = std::collections::HashSet::new();
    let mut sums = [0u64; 2];
    for o in &r.meta_ops {
        let name = o.op.name();
        if !seen.insert(o.op) {
            return Err(format!("operation {name} listed twice"));
        }
        check_totals(name, &o.totals, &r.workload, measured, rates)?;
        check_histogram(name, &o.histogram, o.totals.ops)?;
        let class = &mut sums[usize::from(o.op.mutates())];
        *class = class.saturating_add(o.totals.ops);
    }
    if sums != [r.totals.read.ops, r.totals.write.ops] {
        return Err(format!(
            "the operations add up to {} looking and {} changing, the totals say {} and {}",
            sums[0], sums[1], r.totals.read.ops, r.totals.write.ops
        ));
    }
    Ok(())
}

/// One run result, on its own: every number finite and bounded, latencies
/// ordered, histograms sound, and every rate in agreement with its
/// operation count and its phase's duration.
pub(crate) fn check_run(r: &RunResult, rates: Rates) -> Result<(), String> {
    check_workload(&r.workload)?;
    if r.phases.len() > 2 {
        return Err("more than two phases".into());
    }
    for p in &r.phases {
        bounded("phase duration", p.duration_s, MAX_SECONDS)?;
    }
    let measured = phase_seconds(r, PhaseName::Measure);
    check_totals("read", &r.totals.read, &r.workload, measured, rates)?;
    check_totals("write", &r.totals.write, &r.workload, measured, rates)?;
    // A run from its interval record has no merged histogram at all, nor
    // has a host's run whose histograms were left out to keep the file
    // readable (`thin::fit`).
    let held = |ops: u64| {
        if r.from_intervals || r.histograms_left_out {
            0
        } else {
            ops
        }
    };
    check_histogram("read", &r.histograms.read, held(r.totals.read.ops))?;
    check_histogram("write", &r.histograms.write, held(r.totals.write.ops))?;
    if let Some(w) = &r.warmup {
        let secs = phase_seconds(r, PhaseName::Warmup);
        check_totals("warm-up read", &w.read, &r.workload, secs, rates)?;
        check_totals("warm-up write", &w.write, &r.workload, secs, rates)?;
    }
    check_meta_ops(r, measured, rates)?;
    crate::result::threads::check(r, |what, t| {
        check_totals(what, t, &r.workload, measured, rates)
    })?;
    bounded("cpu user", r.totals.cpu.user_pct, MAX_CPU_PCT)?;
    bounded("cpu sys", r.totals.cpu.sys_pct, MAX_CPU_PCT)?;
    bounded(
        "Little's law in-flight",
        r.littles_law.iops_x_latency,
        MAX_IOPS * MAX_LAT_US / 1e6,
    )?;
    if let Some(rate) = &r.rate {
        bounded("target IOPS", rate.target_iops, MAX_IOPS)?;
        bounded("achieved IOPS", rate.achieved_iops, MAX_IOPS)?;
    }
    if let Some(s) = &r.steady {
        bounded("steady after", s.after_s, MAX_SECONDS)?;
    }
    if r.intervals.len() > MAX_INTERVALS + 2 {
        return Err(format!("{} intervals", r.intervals.len()));
    }
    for iv in &r.intervals {
        check_interval(iv, MAX_SECONDS)?;
    }
    let held: usize = r
        .intervals
        .iter()
        .map(|iv| iv.read.lat_hist.len() + iv.write.lat_hist.len())
        .sum();
    if held > crate::result::MAX_INTERVAL_BUCKETS + 2 * crate::stats::live_hist::BUCKETS {
        return Err(format!("{held} interval latency buckets"));
    }
    Ok(())
}

/// The I/Os an interval's latency histogram may hold beyond its rate's
/// (read a moment apart from the counts: those completed in between).
const INTERVAL_HIST_SLACK: f64 = 1.25;
pub(crate) const INTERVAL_HIST_EXTRA: f64 = 256.0;

/// One interval: known phase, times within `longest_s`, rates bounded, and
/// a latency histogram no fuller than its rate allows.
pub(crate) fn check_interval(iv: &crate::result::Interval, longest_s: f64) -> Result<(), String> {
    bounded("interval time", iv.t_s, longest_s)
        .and_then(|_| bounded("interval duration", iv.duration_s, longest_s))
        .map_err(|e| format!("{e} (an interval longer than the run, {longest_s}s)"))?;
    for (name, o) in [("read", &iv.read), ("write", &iv.write)] {
        bounded(&format!("{name} interval IOPS"), o.iops, MAX_IOPS)?;
        bounded(&format!("{name} interval MiB/s"), o.mib_s, MAX_MIB_S)?;
        bounded(
            &format!("{name} interval latency"),
            o.lat_us_mean,
            MAX_LAT_US,
        )?;
        bounded(
            &format!("{name} interval service time"),
            o.service_us_mean.unwrap_or(0.0),
            MAX_LAT_US,
        )?;
        // The histogram is read a moment apart from the counts (no lock
        // between worker and collector), so it may hold a few I/Os more or
        // less than the interval's rate says; it is bounded like a rate.
        let counted = crate::stats::live_hist::sparse_check(&o.lat_hist)
            .map_err(|e| format!("{name} interval: {e}"))?;
        bounded(
            &format!("{name} interval latency count per second"),
            counted as f64 / iv.duration_s.max(1e-3),
            MAX_IOPS,
        )?;
        // The skew is what completed between two reads a moment apart: a
        // histogram far fuller lends its latencies weight they never had.
        let rated = o.iops * iv.duration_s;
        if counted as f64 > rated * INTERVAL_HIST_SLACK + INTERVAL_HIST_EXTRA {
            let r = rated.round();
            return Err(format!(
                "{name} interval: a histogram of {counted} I/Os, a rate of {r}"
            ));
        }
    }
    for o in &iv.meta_ops {
        bounded(&format!("{} interval ops/s", o.op), o.iops, MAX_IOPS)?;
        bounded(
            &format!("{} interval latency", o.op),
            o.lat_us_mean,
            MAX_LAT_US,
        )?;
    }
    Ok(())
}

/// A run's per-target figures (`result::targets`): each well-formed, its
/// rates agreeing with its own counts over its own window (one process
/// measured it), no target twice, the host's targets adding up to that
/// host's totals and all of them to the run's.
fn check_targets(r: &RunResult, cluster: Option<&Cluster>) -> Result<(), String> {
    let most = crate::units::bounds::MAX_TARGETS;
    if r.left_out.len() > most {
        return Err(format!(
            "{} targets left out, more than {most}",
            r.left_out.len()
        ));
    }
    if let Some(l) = r
        .left_out
        .iter()
        .find(|l| !(l.measured_s.is_finite() && l.measured_s >= 0.0))
    {
        return Err(format!(
            "target {} left out after {} s",
            l.path, l.measured_s
        ));
    }
    if r.targets.is_empty() {
        return Ok(());
    }
    let most = crate::units::bounds::MAX_HOSTS * crate::units::bounds::MAX_TARGETS;
    if r.targets.len() > most {
        return Err(format!("{} targets, more than {most}", r.targets.len()));
    }
    let sum = |ts: &[&TargetRun]| {
        ts.iter().fold([0u64; 4], |mut s, t| {
            for (i, v) in [t.read.ops, t.read.bytes, t.write.ops, t.write.bytes]
                .into_iter()
                .enumerate()
            {
                s[i] = s[i].saturating_add(v);
            }
            s
        })
    };
    let counts = |t: &Totals| [t.read.ops, t.read.bytes, t.write.ops, t.write.bytes];
    let mut seen = std::collections::BTreeSet::new();
    for t in &r.targets {
        let what = match &t.host {
            Some(h) => format!("target {} on {h}", t.path),
            None => format!("target {}", t.path),
        };
        if !seen.insert((t.host.as_deref(), t.path.as_str())) {
            return Err(format!("{what}: given twice"));
        }
        bounded(&format!("{what}: duration_s"), t.duration_s, MAX_SECONDS)?;
        for (op, o) in [("read", &t.read), ("write", &t.write)] {
            let what = format!("{what}: {op}");
            bounded(&format!("{what} IOPS"), o.iops, MAX_IOPS)?;
            bounded(&format!("{what} MiB/s"), o.mib_s, MAX_MIB_S)?;
            check_lat(&what, &o.lat_us, o.ops)?;
            let exact = |claimed, count| agrees(claimed, count, t.duration_s, Rates::Exact);
            if !exact(o.iops, o.ops as f64) {
                return Err(format!(
                    "{what} IOPS {} does not agree with {} operations in {} s",
                    num(o.iops),
                    o.ops,
                    num(t.duration_s)
                ));
            }
            if !exact(o.mib_s, o.bytes as f64 / MIB) {
                return Err(format!(
                    "{what} MiB/s {} does not agree with {} bytes in {} s",
                    num(o.mib_s),
                    o.bytes,
                    num(t.duration_s)
                ));
            }
        }
        check_lat(&what, &t.lat_us, t.read.ops.saturating_add(t.write.ops))?;
    }
    let adds_up = |what: &str, s: [u64; 4], total: [u64; 4]| {
        if s == total {
            Ok(())
        } else {
            Err(format!(
                "{what} add up to {}/{} reads/writes, the totals say {}/{}",
                s[0], s[2], total[0], total[2]
            ))
        }
    };
    // Every host named before any sum: a target moved to a host that does
    // not exist is that, not a sum that does not add up.
    let mut groups = Vec::new();
    for (host, ts) in super::targets::by_host(r) {
        let Some(host) = host else { continue };
        let Some(h) = cluster.and_then(|c| c.hosts.iter().find(|h| h.name == host)) else {
            return Err(format!(
                "targets of host '{host}', which the result does not have"
            ));
        };
        groups.push((host, h, ts));
    }
    for (host, h, ts) in groups {
        if ts
            .iter()
            .any(|t| t.target as usize >= h.targets.len().max(1))
        {
            return Err(format!(
                "host '{host}': a target index beyond its {} targets",
                h.targets.len()
            ));
        }
        let s = sum(&ts);
        // The host's own run of this name (a sweep may repeat a name).
        let mut mine = h.runs.iter().filter(|hr| hr.name == r.name).peekable();
        if mine.peek().is_none() {
            return Err(format!(
                "targets of host '{host}', which did not finish the run"
            ));
        }
        if !mine.any(|hr| counts(&hr.totals) == s) {
            let first = h.runs.iter().find(|hr| hr.name == r.name);
            let total = first.map_or([0; 4], |hr| counts(&hr.totals));
            adds_up(&format!("host '{host}': its targets"), s, total)?;
        }
    }
    let all: Vec<&TargetRun> = r.targets.iter().collect();
    adds_up("the targets", sum(&all), counts(&r.totals))
}
