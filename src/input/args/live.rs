//! The flags of what a run shows and writes while it goes: `--live`,
//! `--live-csv`, `--metrics-listen`, and how chatty stderr is. Values stay
//! text here; `output::live` parses and checks them before any I/O.

use std::path::PathBuf;

use clap::Args;

#[derive(Args, Debug, Clone, Default)]
pub struct LiveArgs {
    /// Write JSON Lines as the run goes: one object per interval per host
    /// per target, then the interval's total (schema volbench.live/v1,
    /// docs/reference/live.md). Each line is flushed as written. `-` is
    /// stdout; an existing path is refused.
    #[arg(long, value_name = "FILE")]
    pub live: Option<PathBuf>,

    /// The same lines as CSV, one header row first.
    #[arg(long, value_name = "FILE")]
    pub live_csv: Option<PathBuf>,

    /// Serve OpenMetrics (Prometheus) at http://ADDR:PORT/metrics while the
    /// run lives. A bare PORT binds 127.0.0.1 only; ports 1024-65535.
    #[arg(long, value_name = "[ADDR:]PORT")]
    pub metrics_listen: Option<String>,

    /// Seconds between plain progress lines on stderr when it is not a
    /// terminal (a CI log); 0 for none. Default 10.
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    pub progress_interval: Option<String>,

    /// Print nothing but errors: no progress, notes, fill or per-run lines;
    /// the results table only when it is the run's one record (no --output,
    /// no --json).
    #[arg(short = 'q', long, conflicts_with = "verbose")]
    pub quiet: bool,

    /// Print every interval's figures on stderr, each host's too.
    #[arg(short = 'v', long)]
    pub verbose: bool,
}
