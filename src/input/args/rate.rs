//! The flags of a run's rate beyond `--rate`: per-direction caps
//! (`--rate-iops R,W`, as fio's rate_iops; `--rate-bw R,W`, as fio's
//! rate=R,W) and the latency search
//! (`--latency-target`, `--search-steps`, `--search-precision`).

use clap::Args;

#[derive(Args, Debug, Clone, Default)]
pub(crate) struct RateArgs {
    /// Reads and writes per second across all threads, as fio's
    /// rate_iops=R,W: 500,200 caps reads at 500/s and writes at 200/s
    /// (0 or empty: that direction uncapped). Without --read-pct the mix
    /// follows the caps (500,200 = 71% reads); with it, the first cap a
    /// direction reaches sets the pace. Each 0.01..1e9; not with --rate.
    #[arg(long, value_name = "R,W", allow_negative_numbers = true)]
    pub(crate) rate_iops: Option<String>,

    /// Read and write bandwidth per second across all threads, as fio's
    /// rate=R,W: 40MiB/s,10MiB/s caps reads at 40 MiB/s and writes at
    /// 10 MiB/s ("/s" may be left out; 0 or empty: that direction
    /// uncapped). The mix follows the caps unless --read-pct is given, as
    /// with --rate-iops. Each 1KiB/s..1PiB/s; not with --rate or --rate-iops.
    #[arg(long, value_name = "R,W", allow_negative_numbers = true)]
    pub(crate) rate_bw: Option<String>,

    /// Find the highest open-loop rate at which latency stays within these
    /// limits: p99=2ms, read:p99.9=5ms, write:p50=1ms (comma-separated,
    /// all must hold; percentile above 0, at most 100; latency 100ns..1h).
    /// One closed-loop run, then bisection on --rate, then a confirming run;
    /// every step is a run of the result. Over --hosts or a list of targets
    /// each step runs on all of them, judged on their merged histograms, at
    /// a rate for the whole job (dealt over the targets as --rate is).
    #[arg(long, value_name = "LIMITS")]
    pub(crate) latency_target: Option<String>,

    /// Runs one --latency-target search may make, 3..40 [default: 10].
    #[arg(long, value_name = "N", requires = "latency_target")]
    pub(crate) search_steps: Option<String>,

    /// How close the passing and failing rates come before the search
    /// confirms, in % of the closed-loop maximum, 0.1..50 [default: 5].
    #[arg(long, value_name = "PCT", requires = "latency_target")]
    pub(crate) search_precision: Option<String>,
}
