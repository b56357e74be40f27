//! What a run shows and writes while it goes (`--live`, `--live-csv`,
//! `--metrics-listen`, `--progress-interval`, `--quiet`, `--verbose`), each
//! value read once by its flag group; `output::live` opens what it names.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// Plain progress lines off a terminal: this often unless the user says.
pub(crate) const PROGRESS_EVERY: Duration = Duration::from_secs(10);

#[derive(Debug, Clone)]
pub(crate) struct LiveSpec {
    /// `--live FILE`: JSON Lines (`-` is stdout).
    pub(crate) lines: Option<PathBuf>,
    /// `--live-csv FILE`: the same lines as CSV.
    pub(crate) csv: Option<PathBuf>,
    /// `--metrics-listen`: where OpenMetrics is served.
    pub(crate) metrics: Option<SocketAddr>,
    /// Between plain progress lines off a terminal; zero for none.
    pub(crate) progress_every: Duration,
    pub(crate) quiet: bool,
    pub(crate) verbose: bool,
}

impl Default for LiveSpec {
    fn default() -> Self {
        Self {
            lines: None,
            csv: None,
            metrics: None,
            progress_every: PROGRESS_EVERY,
            quiet: false,
            verbose: false,
        }
    }
}
