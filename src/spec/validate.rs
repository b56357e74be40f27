//! Every check of a `JobSpec` that needs no target: each number against its
//! bound in `units::bounds`, each run against the others and the target.

use super::{JobSpec, MIN_DIRECT_ALIGN, RunSpec};
use crate::error::{Result, VbError};
use crate::units::bounds;
use crate::units::format_size;

impl JobSpec {
    /// Checks everything that can be checked without touching the target,
    /// every number against its bound in `bounds`. A spec may come from a
    /// file or another host, so nothing here trusts the front end's checks.
    pub fn validate(&self) -> Result<()> {
        if self.runs.is_empty() {
            return Err(VbError::input("nothing to run: the spec has no runs"));
        }
        // A suite adds its discarded warm-up copy to at most MAX_RUNS runs.
        if self.runs.len() > bounds::MAX_RUNS + 1 {
            return Err(VbError::input(format!(
                "{} runs; at most {}",
                self.runs.len(),
                bounds::MAX_RUNS
            )));
        }
        bounds::seconds(
            "--interval",
            self.interval_s,
            bounds::MIN_INTERVAL,
            bounds::MAX_INTERVAL,
        )?;
        bounds::count("--files", self.target.files.into(), 1, bounds::MAX_FILES)?;
        bounds::size("--size", self.target.size, 1, bounds::MAX_SIZE)?;
        self.target.fill.validate(self.target.direct)?;
        let sizes: Vec<u64> = self.runs.iter().flat_map(|r| r.all_bs()).collect();
        self.target.data.validate(&sizes)?;
        // Each set gets its own map: every layout the runs use is checked.
        for l in self.layouts() {
            self.target.data.check_map_size(&sizes, l.size, l.files)?;
        }
        if self.target.path.as_os_str().is_empty() {
            return Err(VbError::input("--target is empty"));
        }
        if self.target.path.to_str().is_none() {
            return Err(VbError::input(format!(
                "--target {} is not valid UTF-8; results record the path as text",
                self.target.path.to_string_lossy().escape_debug()
            )));
        }
        // One tree per target: every metadata run names files by one shape.
        let mut shapes = self
            .runs
            .iter()
            .filter_map(|r| r.meta.as_ref())
            .map(|m| (m.depth, m.width, m.files_per_dir));
        if let Some(first) = shapes.next() {
            if let Some(other) = shapes.find(|s| *s != first) {
                return Err(VbError::input(format!(
                    "metadata runs of one job share one tree: depth/width/files-per-dir {first:?} and {other:?} differ"
                )));
            }
        }
        if let Some(list) = &self.targets {
            list.validate(self.runs.iter().map(|r| r.threads))?;
        }
        let mut names = std::collections::HashSet::new();
        for run in &self.runs {
            // The run's own error first: `--rw randread --read-pct 100,50`
            // is a percentage that cannot apply, not a clash of names.
            self.validate_run(run)?;
            if !names.insert(run.name.as_str()) {
                return Err(VbError::input(format!("two runs are named '{}'", run.name)));
            }
        }
        Ok(())
    }

    fn validate_run(&self, run: &RunSpec) -> Result<()> {
        let at = |e: VbError| {
            if self.runs.len() > 1 {
                VbError::input(format!("run '{}': {}", run.name.escape_debug(), e.message))
            } else {
                e
            }
        };
        let msg = |m: String| at(VbError::input(m));
        bounds::name("run name", &run.name).map_err(at)?;
        if run.read_pct > 100 {
            return Err(msg(format!(
                "--read-pct {} is outside 0..100",
                run.read_pct
            )));
        }
        if let Some(p) = run.rw.fixed_read_pct() {
            if p != run.read_pct {
                return Err(msg(format!(
                    "--read-pct {} conflicts with --rw {} (it is {} by definition; use rw or randrw for a mix)",
                    run.read_pct,
                    run.rw.name(),
                    p
                )));
            }
        }
        bounds::count("--threads", run.threads.into(), 1, bounds::MAX_THREADS).map_err(at)?;
        bounds::count("--iodepth", run.iodepth.into(), 1, bounds::MAX_IODEPTH).map_err(at)?;
        let in_flight = u64::from(run.threads) * u64::from(run.iodepth);
        if in_flight > bounds::MAX_IN_FLIGHT {
            return Err(msg(format!(
                "--threads {} x --iodepth {} = {in_flight} I/Os in flight; at most {}",
                run.threads,
                run.iodepth,
                bounds::MAX_IN_FLIGHT
            )));
        }
        block_sizes(run, &msg, &at)?;
        let buffers = in_flight.saturating_mul(run.max_bs());
        if buffers > bounds::MAX_BUFFER_BYTES {
            return Err(msg(format!(
                "--threads {} x --iodepth {} x --bs {} needs {} of I/O buffers; at most {}",
                run.threads,
                run.iodepth,
                format_size(run.max_bs()),
                format_size(buffers),
                format_size(bounds::MAX_BUFFER_BYTES)
            )));
        }
        bounds::seconds(
            "--duration",
            run.duration_s,
            bounds::MIN_DURATION,
            bounds::MAX_DURATION,
        )
        .map_err(at)?;
        bounds::seconds(
            "--warmup",
            run.warmup_s,
            std::time::Duration::ZERO,
            bounds::MAX_WARMUP,
        )
        .map_err(at)?;
        if let Some(r) = run.rate_iops {
            bounds::number("--rate", r, bounds::MIN_RATE, bounds::MAX_RATE).map_err(at)?;
        }
        if let Some(p) = &run.rate_pct {
            bounds::number(
                "rate %",
                p.percent,
                bounds::MIN_RATE_PCT,
                bounds::MAX_RATE_PCT,
            )
            .map_err(at)?;
        }
        if let Some(rule) = &run.stop_rule {
            if let Some(g) = rule.gain_below_pct {
                bounds::number(
                    "until_gain_below",
                    g,
                    bounds::MIN_GAIN_PCT,
                    bounds::MAX_GAIN_PCT,
                )
                .map_err(at)?;
            }
            if let Some(us) = rule.latency_above_us {
                bounds::number(
                    "curve_stop_latency (us)",
                    us,
                    bounds::MIN_LATENCY.as_secs_f64() * 1e6,
                    bounds::MAX_LATENCY.as_secs_f64() * 1e6,
                )
                .map_err(at)?;
            }
            for l in &rule.percentile_above {
                l.validate("curve_stop_latency").map_err(at)?;
            }
        }
        if let Some(t) = &run.latency_target {
            t.validate().map_err(at)?;
            for l in &t.limits {
                let (op, none) = match l.op {
                    crate::spec::latency::LatencyOp::Read => ("reads", run.read_pct == 0),
                    crate::spec::latency::LatencyOp::Write => ("writes", !run.has_writes()),
                    crate::spec::latency::LatencyOp::All => ("", false),
                };
                if none {
                    return Err(msg(format!(
                        "--latency-target {} judges {op}, and --rw {} does no {op}",
                        l.label(),
                        run.rw.name()
                    )));
                }
            }
            if run.meta.is_some() {
                return Err(msg(
                    "--latency-target searches block I/O rates, not a metadata run (--ops)".into(),
                ));
            }
            if run.rate_iops.is_some() || run.rate_pct.is_some() || run.shape.rate_bytes.is_some() {
                return Err(msg(
                    "--latency-target searches the rate itself; leave out --rate".into(),
                ));
            }
        }
        if let Some(m) = &run.meta {
            if !run.shape.is_plain() {
                return Err(msg("skew, seeks, syncs, think time, cool-down and bandwidth rates are for block I/O, not a metadata run".into()));
            }
            return m.validate(run.threads).map_err(msg);
        }
        run.shape
            .validate(
                run.rw.is_random(),
                run.has_writes(),
                run.rate_iops.is_some() || run.rate_pct.is_some(),
            )
            .map_err(at)?;
        if let Some(f) = run.files {
            bounds::count("files", f.into(), 1, bounds::MAX_FILES).map_err(at)?;
        }
        if let Some(size) = run.size {
            bounds::size("size", size, 1, bounds::MAX_SIZE).map_err(at)?;
        }
        if let Some(limit) = run.io_limit {
            bounds::size("--io-limit", limit, run.min_bs(), bounds::MAX_SIZE).map_err(|_| {
                msg(format!(
                    "--io-limit {} is outside one block ({})..{}",
                    format_size(limit),
                    format_size(run.min_bs()),
                    format_size(bounds::MAX_SIZE)
                ))
            })?;
        }
        for b in run.all_bs() {
            if self.target.direct && b % MIN_DIRECT_ALIGN != 0 {
                return Err(msg(format!(
                    "--bs {} is not a multiple of {MIN_DIRECT_ALIGN} bytes, which direct I/O needs \
                     (use a multiple of 4k, or --buffered)",
                    b
                )));
            }
        }
        let l = self.layout_of(run);
        let file_size = l.size / u64::from(l.files.max(1));
        if run.max_bs() > file_size {
            return Err(msg(format!(
                "--bs {} is larger than each file ({} = --size {} / --files {})",
                format_size(run.max_bs()),
                format_size(file_size),
                format_size(l.size),
                l.files
            )));
        }
        Ok(())
    }
}

/// A run's block sizes: each direction's list within its bounds, writes'
/// own sizes only where the pattern writes.
fn block_sizes(
    run: &RunSpec,
    msg: &dyn Fn(String) -> VbError,
    at: &dyn Fn(VbError) -> VbError,
) -> Result<()> {
    if run.bs.is_empty() {
        return Err(msg("--bs is empty".into()));
    }
    // A read-only pattern never uses it; a mix's point at 100% reads
    // (one of a --read-pct sweep) may.
    if !run.write_bs.is_empty() && run.rw.fixed_read_pct() == Some(100) {
        return Err(msg(format!(
            "--write-bs: --rw {} makes no writes",
            run.rw.name()
        )));
    }
    for (flag, list) in [("--bs", &run.bs), ("--write-bs", &run.write_bs)] {
        if list.len() > bounds::MAX_BS_MIX {
            return Err(msg(format!(
                "{flag} mixes {} sizes; at most {}",
                list.len(),
                bounds::MAX_BS_MIX
            )));
        }
        for b in list {
            bounds::size(flag, b.bytes, 1, bounds::MAX_BS).map_err(at)?;
            bounds::count(
                &format!("{flag} weight"),
                b.weight.into(),
                1,
                bounds::MAX_BS_WEIGHT,
            )
            .map_err(at)?;
        }
    }
    Ok(())
}
