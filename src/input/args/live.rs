//! The flags of what a run shows and writes while it goes: `--live`,
//! `--live-csv`, `--metrics-listen`, and how chatty stderr is; read once
//! into a `spec::live::LiveSpec` (`output::live` opens what it names).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use crate::error::{Result, VbError};
use crate::spec::live::{LiveSpec, PROGRESS_EVERY};
use crate::units::bounds::MAX_PROGRESS_INTERVAL;

#[derive(Args, Debug, Clone, Default)]
pub(crate) struct LiveArgs {
    /// Write JSON Lines as the run goes: one object per interval per host
    /// per target, then the interval's total (schema volbench.live/v1,
    /// docs/reference/live.md). Each line is flushed as written. `-` is
    /// stdout; an existing path is refused.
    #[arg(long, value_name = "FILE")]
    pub(crate) live: Option<PathBuf>,

    /// The same lines as CSV, one header row first.
    #[arg(long, value_name = "FILE")]
    pub(crate) live_csv: Option<PathBuf>,

    /// Serve OpenMetrics (Prometheus) at http://ADDR:PORT/metrics while the
    /// run lives. A bare PORT binds 127.0.0.1 only; ports 1024-65535.
    #[arg(long, value_name = "[ADDR:]PORT")]
    pub(crate) metrics_listen: Option<String>,

    /// Seconds between plain progress lines on stderr when it is not a
    /// terminal (a CI log); 0 for none. Default 10.
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    pub(crate) progress_interval: Option<String>,

    /// Print nothing but errors: no progress, notes, fill or per-run lines;
    /// the results table only when it is the run's one record (no --output,
    /// no --json).
    #[arg(short = 'q', long, conflicts_with = "verbose")]
    pub(crate) quiet: bool,

    /// Print every interval's figures on stderr, each host's too.
    #[arg(short = 'v', long)]
    pub(crate) verbose: bool,
}

impl LiveArgs {
    /// The flags read: the address parsed, the interval bounded.
    pub(crate) fn spec(&self) -> Result<LiveSpec> {
        let progress_every = match &self.progress_interval {
            None => PROGRESS_EVERY,
            Some(t) => crate::units::parse_duration_in(
                "--progress-interval",
                t,
                Duration::ZERO,
                MAX_PROGRESS_INTERVAL,
            )?,
        };
        Ok(LiveSpec {
            lines: self.live.clone(),
            csv: self.live_csv.clone(),
            metrics: self
                .metrics_listen
                .as_deref()
                .map(parse_listen)
                .transpose()?,
            progress_every,
            quiet: self.quiet,
            verbose: self.verbose,
        })
    }
}

/// The address `--metrics-listen` names: `PORT` (127.0.0.1), `:PORT`,
/// `ADDR:PORT` or `[V6]:PORT`, ports 1024-65535 (`units::bounds`).
pub(crate) fn parse_listen(text: &str) -> Result<SocketAddr> {
    let t = text.trim();
    let bad = |why: &str| VbError::input(format!("--metrics-listen {t}: {why}"));
    let addr = if let Ok(port) = t.trim_start_matches(':').parse::<u16>() {
        SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port)
    } else if let Some(port) = t.strip_prefix("localhost:") {
        let port = port
            .parse::<u16>()
            .map_err(|_| bad("the port is a number from 1024 to 65535"))?;
        SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port)
    } else {
        t.parse::<SocketAddr>()
            .map_err(|_| bad("give PORT, ADDR:PORT or [IPv6]:PORT, with an IP address"))?
    };
    if addr.port() < crate::units::bounds::MIN_METRICS_PORT {
        return Err(bad(
            "ports below 1024 are system services' (volbench runs as root and would take one); use 1024-65535",
        ));
    }
    Ok(addr)
}
